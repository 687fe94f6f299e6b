"""torch's root functions of sparse tensors: the products ``ptcore.smm`` (sparse result),
``ptcore.dsmm`` (dense result) and ``ptcore.hspmm`` (a hybrid COO result: one sparse
dimension, the rows of the sparse operand that hold entries, and one dense dimension) of a
sparse ``mat1`` and a dense ``mat2``, ``ptcore.native_norm`` (the norm of the stored
values), and the index conversions ``ptcore._convert_indices_from_coo_to_csr`` /
``_convert_indices_from_csr_to_coo`` that libraries build compressed structures with
(PyG's ``index2ptr``/``ptr2index``)."""
import operator as _operator

import ptcore as _pt
from ptcore import linalg
from ptcore.sparse._tensor import SparseTensor, sparse_coo, sparse_coo_tensor
from ptcore.sparse._ops import mm, _rows_cols

__all__ = ["smm", "dsmm", "hspmm", "native_norm", "_convert_indices_from_coo_to_csr",
           "_convert_indices_from_csr_to_coo"]


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


_INDEX_DTYPES = ("uint8", "int8", "int16", "int32", "int64")


def _check_index(t, what, op):
    if not isinstance(t, _pt.Tensor):
        raise TypeError(f"{op}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype is _pt.bool or \
            str(t.dtype).rsplit(".", 1)[-1] not in _INDEX_DTYPES:
        raise NotImplementedError(f'"{op}" not implemented for {what} of dtype {t.dtype}: '
                                  "it takes integer indices")


def _convert_indices_from_coo_to_csr(input, size, *, out_int32=False, out=None):
    """The compressed pointers (``size + 1`` of them) of the sorted row indices ``input``:
    ``crow[i]`` is the number of entries in rows before ``i`` (torch's; int64, or int32 with
    ``out_int32``).  An index outside ``[0, size)`` raises ``RuntimeError`` (torch's kernel
    does not check)."""
    op = "_convert_indices_from_coo_to_csr"
    _check_index(input, "input", op)
    if input.dim() > 1:
        raise RuntimeError(f"Input is supposed to be a vector, but got {input.dim()} "
                           "dimensional tensor.")
    try:
        size = _operator.index(size)
    except TypeError:
        raise TypeError(f"{op}(): argument 'size' must be int, not {type(size).__name__}") \
            from None
    if size < 0:
        raise RuntimeError(f"{op}: size must be non-negative, got {size}")
    rows = input.reshape(-1).to(_pt.int64)
    if rows.numel():
        lo, hi = int(rows.min()), int(rows.max())
        if lo < 0 or hi >= size:
            raise RuntimeError(f"{op}: row index {lo if lo < 0 else hi} is out of range for "
                               f"{size} rows")
    counts = _pt.bincount(rows, minlength=size) if rows.numel() else \
        _pt.zeros(size, dtype=_pt.int64, device=input.device)
    crow = _pt.cat([_pt.zeros(1, dtype=_pt.int64, device=input.device), counts.cumsum(0)])
    result = crow.to(_pt.int32 if out_int32 else _pt.int64)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


def _convert_indices_from_csr_to_coo(crow_indices, col_indices, *, out_int32=False,
                                     transpose=False, out=None):
    """The ``(2, nnz)`` COO indices ``[rows; cols]`` (``[cols; rows]`` with ``transpose``) of
    a CSR structure (torch's; int64, or int32 with ``out_int32``).  Pointers that do not
    start at 0, decrease, or do not end at ``col_indices``' length raise ``RuntimeError``
    (torch's kernel reads past them)."""
    op = "_convert_indices_from_csr_to_coo"
    _check_index(crow_indices, "crow_indices", op)
    _check_index(col_indices, "col_indices", op)
    if crow_indices.dim() != 1 or col_indices.dim() != 1:
        raise RuntimeError(f"{op}: crow_indices and col_indices must be vectors, got "
                           f"{crow_indices.dim()}-D and {col_indices.dim()}-D tensors")
    if crow_indices.numel() == 0:
        raise RuntimeError(f"{op}: crow_indices must hold at least one pointer (0)")
    crow = crow_indices.to(_pt.int64)
    nnz = col_indices.numel()
    counts = crow[1:] - crow[:-1]
    if int(crow[0]) != 0 or int(crow[-1]) != nnz or (counts.numel() and int(counts.min()) < 0):
        raise RuntimeError(f"{op}: crow_indices must start at 0, not decrease, and end at "
                           f"the number of column indices ({nnz}); got "
                           f"{crow_indices.tolist() if crow_indices.numel() <= 8 else 'others'}")
    rows = _pt.repeat_interleave(_pt.arange(counts.numel(), device=crow.device), counts)
    cols = col_indices.to(_pt.int64)
    result = _pt.stack([cols, rows] if transpose else [rows, cols]).to(
        _pt.int32 if out_int32 else _pt.int64)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result
