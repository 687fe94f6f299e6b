"""Index arithmetic of sparse structures in ptcore's own tensor ops, so that
it runs where the index tensors live (a CUDA device included).

The CPU paths of :mod:`ptcore.sparse` use NumPy and SciPy's compiled kernels
on the same memory; a sparse tensor whose parts are on a device goes through
these functions instead: linear positions of COO indices (``ravel``/
``unravel``), coalescing by a sorted unique with its inverse and an
``index_add_`` of the values, the conversions between compressed (CSR/CSC)
and COO structures (``repeat_interleave`` of the compressed counts; a
``bincount`` and ``cumsum`` back), and the sparse-dense product as a gather
of the dense rows and an ``index_add_`` of the scaled rows into the result
(what torch's CUDA COO ``addmm`` computes, without cuSPARSE).
"""
import ptcore as _pt

__all__ = []


def on_host(t):
    """True when ``t`` lives in host memory (the NumPy paths apply)."""
    return t.device.type == "cpu"


def ravel(idx, shape):
    """int64 row-major positions of the columns of ``idx`` (``(ndim, nnz)``)
    in a tensor of ``shape`` (the sizes of those ndim dims)."""
    nd = idx.shape[0]
    if nd == 0:
        return _pt.zeros(idx.shape[1], dtype=_pt.int64, device=idx.device)
    if nd == 1:
        return idx[0].clone()
    lin = idx[nd - 1].clone()
    stride = 1
    for d in range(nd - 2, -1, -1):
        stride *= int(shape[d + 1])
        lin.add_(idx[d], alpha=stride)
    return lin


def unravel(lin, shape):
    """The ``(len(shape), n)`` int64 indices of row-major positions ``lin``."""
    if not len(shape):
        return _pt.zeros((0, lin.shape[0]), dtype=_pt.int64, device=lin.device)
    rows = []
    rem = lin
    for d in range(len(shape) - 1, 0, -1):
        s = int(shape[d])
        rows.append(_pt.remainder(rem, s))
        rem = _pt.div(rem, s, rounding_mode="floor")
    rows.append(rem)
    return _pt.stack(rows[::-1])


def unique_inverse(lin):
    """The sorted distinct values of int64 ``lin`` and, per entry, the slot
    of its value among them."""
    uniq, inv = _pt.unique(lin, sorted=True, return_inverse=True)
    return uniq, inv.reshape(-1)


def coalesce(idx, vals, sshape):
    """COO ``(idx, vals)`` with the indices sorted row-major and the values
    of equal indices summed (``Tensor.coalesce``)."""
    uniq, inv = unique_inverse(ravel(idx, sshape))
    out = _pt.zeros((uniq.shape[0],) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
    out.index_add_(0, inv, vals)
    return unravel(uniq, sshape).reshape(idx.shape[0], uniq.shape[0]), out


def major_of(comp):
    """For a compressed index ``comp`` (``n + 1`` non-decreasing offsets), the
    int64 major index of every stored entry."""
    comp = comp.to(_pt.int64)
    counts = comp[1:] - comp[:-1]
    return _pt.repeat_interleave(_pt.arange(counts.shape[0], device=comp.device), counts)


def compress(major, n):
    """The ``n + 1`` int64 offsets compressing the sorted major indices ``major``."""
    out = _pt.zeros(n + 1, dtype=_pt.int64, device=major.device)
    if n:
        out[1:] = _pt.cumsum(_pt.bincount(major, minlength=n), 0)
    return out


def spmm(rows, cols, values, dense, nrows):
    """``S @ dense`` for the 2-D sparse ``S`` given by the stored entries'
    ``rows``, ``cols`` and ``values`` (duplicates add up), ``dense`` 1-D or
    2-D: the dense rows of the stored columns, scaled by the values, summed
    into the rows of the result."""
    tail = tuple(dense.shape[1:])
    out = _pt.zeros((nrows,) + tail, dtype=dense.dtype, device=dense.device)
    if rows.shape[0]:
        picked = dense.index_select(0, cols)
        scale = values if dense.dim() == 1 else values.unsqueeze(1)
        out.index_add_(0, rows, picked * scale)
    return out


def nonzero_coo(dense, sparse_dim=None):
    """The coalesced COO ``(indices, values)`` of the nonzero entries of
    ``dense`` (of its slices along the first ``sparse_dim`` dims holding a
    nonzero, for a hybrid result)."""
    nd = dense.dim()
    if nd == 0:
        keep = int(dense != 0)
        return (_pt.zeros((0, keep), dtype=_pt.int64, device=dense.device),
                dense.reshape(1)[:keep].clone())
    sd = nd if sparse_dim is None else sparse_dim
    if sd == nd:
        mask = dense != 0
    else:
        mask = (dense != 0).reshape(tuple(dense.shape[:sd]) + (-1,)).any(-1)
    idx = _pt.nonzero(mask).t().contiguous()
    vals = dense[tuple(idx[k] for k in range(sd))]
    return idx, vals.contiguous()
