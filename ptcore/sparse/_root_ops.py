"""torch's root functions of sparse tensors: the products ``ptcore.smm`` (sparse result),
``ptcore.dsmm`` (dense result) and ``ptcore.hspmm`` (a hybrid COO result: one sparse
dimension, the rows of the sparse operand that hold entries, and one dense dimension) of a
sparse ``mat1`` and a dense ``mat2``, and ``ptcore.native_norm`` (the norm of the stored
values)."""
from ptcore import linalg
from ptcore.sparse._tensor import SparseTensor, sparse_coo, sparse_coo_tensor
from ptcore.sparse._ops import mm, _rows_cols

__all__ = ["smm", "dsmm", "hspmm", "native_norm"]


def _check_sparse(mat1, what):
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError(f"{what}: expected a sparse matrix as the first argument, got a "
                           f"dense {type(mat1).__name__}")


def smm(input, mat):
    """``input @ mat`` (``input`` sparse, ``mat`` dense) as a sparse COO tensor
    (``torch.smm``)."""
    _check_sparse(input, "smm")
    return mm(input, mat).to_sparse()


def dsmm(input, mat):
    """``input @ mat`` (``input`` sparse, ``mat`` dense), dense (``torch.dsmm``)."""
    _check_sparse(input, "dsmm")
    return mm(input, mat)


def hspmm(mat1, mat2, *, out=None):
    """``mat1 @ mat2`` (``mat1`` a sparse COO matrix, ``mat2`` dense 2-D) as a hybrid COO
    tensor whose sparse dimension lists the rows of ``mat1`` holding entries (``torch.hspmm``)."""
    if not isinstance(mat1, SparseTensor) or mat1.layout is not sparse_coo:
        raise NotImplementedError(f"hspmm: mat1 must be a sparse COO matrix, got "
                                  f"{getattr(mat1, 'layout', type(mat1).__name__)}")
    if out is not None:
        raise NotImplementedError("hspmm: out= is not supported for sparse results")
    if mat2.dim() != 2:
        raise RuntimeError(f"hspmm: Argument #3: Expected dim 2 got {mat2.dim()}")
    dense = mm(mat1, mat2)
    rows, _ = _rows_cols(mat1.coalesce())
    rows = rows.unique()
    result = sparse_coo_tensor(rows.reshape(1, -1), dense[rows],
                               (mat1.shape[0], mat2.shape[1]))
    return result


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The ``p``-norm of all the stored values of a sparse tensor (``torch.native_norm``); as
    in torch, a dense tensor raises ``NotImplementedError``, a partial ``dim``, ``keepdim``
    or a ``dtype`` ``RuntimeError``."""
    if not isinstance(input, SparseTensor):
        raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                                  "'CPU' backend: native_norm is defined for sparse tensors")
    if dim is not None and sorted(d % input.dim() for d in dim) != list(range(input.dim())) \
            and len(dim) != 0:
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must "
                           "either be empty or contain all dimensions of the input")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    values = input.coalesce().values() if input.layout is sparse_coo else input.values()
    return linalg.vector_norm(values, 2 if p is None else p)
