"""The array API standard's ``linalg`` extension over ``ptcore.linalg``."""
import ptcore as _pt
from ptcore import linalg as _la
from ptcore.array_api._linear_algebra import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401

cholesky = _la.cholesky
det = _la.det
eig = _la.eig
eigvals = _la.eigvals
eigh = _la.eigh
eigvalsh = _la.eigvalsh
inv = _la.inv
matrix_power = _la.matrix_power
slogdet = _la.slogdet
svdvals = _la.svdvals

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along ``axis``."""
    if x1.dtype != x2.dtype:
        dt = _pt.promote_types(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    if x1.ndim != x2.ndim:  # the standard broadcasts the other axes (torch wants equal ndim)
        x1, x2 = _pt.broadcast_tensors(x1, x2)
    return _la.cross(x1, x2, dim=axis)


def diagonal(x, /, *, offset=0):
    """Diagonals of the last two axes."""
    return _pt.diagonal(x, offset=offset, dim1=-2, dim2=-1)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes."""
    return _la.matrix_norm(x, ord=ord, keepdim=keepdims)


def matrix_rank(x, /, *, rtol=None):
    """Rank of the matrices in ``x`` (singular values above ``rtol`` times the largest)."""
    return _la.matrix_rank(x, rtol=rtol)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays."""
    if x1.dtype != x2.dtype:
        dt = _pt.promote_types(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    return _pt.outer(x1, x2)


def pinv(x, /, *, rtol=None):
    """Moore-Penrose pseudo-inverse."""
    return _la.pinv(x, rtol=rtol)


def qr(x, /, *, mode="reduced"):
    """QR decomposition (``mode`` 'reduced' or 'complete')."""
    return _la.qr(x, mode=mode)


def solve(x1, x2, /):
    """Solution of ``x1 @ out = x2`` (``x2`` a vector when 1-D)."""
    if x1.dtype != x2.dtype:
        dt = _pt.promote_types(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    return _la.solve(x1, x2)


def svd(x, /, *, full_matrices=True):
    """Singular value decomposition ``U, S, Vh``."""
    return _la.svd(x, full_matrices=full_matrices)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the diagonals of the last two axes; integers sum in the default integer dtype."""
    d = _pt.diagonal(x, offset=offset, dim1=-2, dim2=-1)
    if dtype is None and x.dtype in (_pt.bool, _pt.int8, _pt.int16, _pt.int32, _pt.uint8):
        dtype = _pt.int64
    return _pt.sum(d, dim=-1, dtype=dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (all axes when None; ``axis=()`` reduces nothing: each element's norm)."""
    if axis == ():  # torch reads an empty dim list as all axes
        return _la.vector_norm(x.unsqueeze(-1), ord=ord, dim=-1)
    if axis is not None and not isinstance(axis, int):
        axis = tuple(axis)
    return _la.vector_norm(x, ord=ord, dim=axis, keepdim=keepdims)
