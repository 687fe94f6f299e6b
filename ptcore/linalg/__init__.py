"""``ptcore.linalg``: factorisations, solvers and norms (``torch.linalg``).

Every function works on batches (``(*, m, n)``), with PyTorch's argument
checks, result shapes and error messages.  The factorisations call LAPACK
(SciPy's ``cython_lapack``, through ``ptcore._ops.kernels._blas``, loaded on first
use); a singular or indefinite input raises :class:`LinAlgError`.  The
signs/phases of singular vectors, eigenvectors and QR factors follow
LAPACK's conventions and may differ from PyTorch's (both are valid).
"""
from ptcore.linalg._factor import (  # noqa: F401
    LinAlgError, inv, inv_ex, solve, solve_ex, det, slogdet, cholesky, cholesky_ex, qr,
    svd, svdvals, eigh, eigvalsh, eig, eigvals, lstsq, pinv, matrix_rank, lu_factor,
    lu_factor_ex,
)
_LinAlgError = LinAlgError
from ptcore.linalg._norms import norm, vector_norm, matrix_norm, cross  # noqa: F401
from ptcore._ops.linalg import multi_dot, matrix_power, matmul  # noqa: F401
from ptcore._ops.linalg import _refuse_grad_out
from ptcore.linalg._factor import _out
from ptcore._dispatch.table import entry as _op_entry

__all__ = [
    "LinAlgError", "inv", "inv_ex", "solve", "solve_ex", "det", "slogdet", "cholesky",
    "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq",
    "pinv", "matrix_rank", "lu_factor", "lu_factor_ex", "norm", "vector_norm", "matrix_norm",
    "cross", "multi_dot", "matrix_power", "matmul", "matrix_exp",
]
from ptcore._ops.linalg_composite import matrix_exp  # noqa: E402


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a (batch of) matrices (``torch.linalg.diagonal``): a view."""
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


def vecdot(x, y, *, dim=-1, out=None):
    """``sum(x.conj() * y, dim)`` (``torch.linalg.vecdot``)."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        # (ptcore.array_api's vecdot, which takes integers, computes its own product)
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {x.dtype._legacy}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype._legacy} and y of type {y.dtype._legacy} instead")
    _refuse_grad_out(out, "sum", x, y)
    r = _op_entry("sum")(x.conj() * y, dim)
    if out is not None and out.dtype is not r.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{r.dtype._legacy} but found "
                           f"{out.dtype._legacy}")
    return _out(r, out, "linalg_vecdot")


__all__ += ["diagonal", "vecdot"]

from ptcore.linalg._extra import (  # noqa: E402,F401
    solve_triangular, lu, lu_solve, cond, householder_product, tensorinv, tensorsolve, vander,
    common_notes, ldl_factor, ldl_factor_ex, ldl_solve,
)
__all__ += ["solve_triangular", "lu", "lu_solve", "cond", "householder_product", "tensorinv",
            "tensorsolve", "vander", "ldl_factor", "ldl_factor_ex", "ldl_solve"]


from ptcore._dispatch.generate import bind_functions as _bind_functions  # noqa: E402
from ptcore._dispatch.table import op_of as _op_of  # noqa: E402


def _bind():
    """Every public function here is an entry of the ``linalg`` group (torch's
    ``linalg_X`` ops: ``linalg.inv`` is the op ``linalg_inv``); the functions
    taken from the ptcore group (``multi_dot``, ``matrix_power``,
    ``matrix_exp``) get entries of their own here, over the same code, and
    ``linalg.matmul`` is ``ptcore.matmul``."""
    g = globals()
    for name in ("multi_dot", "matrix_power", "matrix_exp"):
        d = _op_of(g[name])
        if d is not None:
            g[name] = d.raw
    _bind_functions(g, [n for n in __all__ if n != "matmul"], "linalg", namespace="linalg")


_bind()
del _bind, _bind_functions, _op_of
