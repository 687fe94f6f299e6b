"""torch's root sparse products: ``ptcore.smm`` (sparse result), ``ptcore.dsmm`` (dense
result) and ``ptcore.hspmm`` (a hybrid COO result: one sparse dimension, the rows of the
sparse operand that hold entries, and one dense dimension), of a sparse ``mat1`` and a dense
``mat2``."""
from ptcore.sparse._tensor import SparseTensor, sparse_coo, sparse_coo_tensor
from ptcore.sparse._ops import mm, _rows_cols

__all__ = ["smm", "dsmm", "hspmm"]


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
