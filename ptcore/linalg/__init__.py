"""``ptcore.linalg``: factorisations, solvers and norms (``torch.linalg``).

Every function works on batches (``(*, m, n)``), with PyTorch's argument
checks, result shapes and error messages.  The factorisations call LAPACK
(SciPy's ``cython_lapack``, through ``ptcore._ops._blas``, loaded on first
use); a singular or indefinite input raises :class:`LinAlgError`.  The
signs/phases of singular vectors, eigenvectors and QR factors follow
LAPACK's conventions and may differ from PyTorch's (both are valid).
"""
from ptcore.linalg._factor import (  # noqa: F401
    LinAlgError, inv, inv_ex, solve, solve_ex, det, slogdet, cholesky, cholesky_ex, qr,
    svd, svdvals, eigh, eigvalsh, eig, eigvals, lstsq, pinv, matrix_rank, lu_factor,
    lu_factor_ex,
)
from ptcore.linalg._norms import norm, vector_norm, matrix_norm, cross  # noqa: F401
from ptcore._linalg_ops import multi_dot, matrix_power, matmul  # noqa: F401

__all__ = [
    "LinAlgError", "inv", "inv_ex", "solve", "solve_ex", "det", "slogdet", "cholesky",
    "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq",
    "pinv", "matrix_rank", "lu_factor", "lu_factor_ex", "norm", "vector_norm", "matrix_norm",
    "cross", "multi_dot", "matrix_power", "matmul", "matrix_exp",
]
from ptcore._extra_ops import matrix_exp  # noqa: E402


def _logdet(A):
    from ptcore.linalg._factor import _logdet as f
    return f(A)


def _torch_svd(A, some, compute_uv):
    from ptcore.linalg._factor import _torch_svd as f
    return f(A, some, compute_uv)


def _torch_qr(A, some):
    from ptcore.linalg._factor import _torch_qr as f
    return f(A, some)
