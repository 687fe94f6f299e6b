"""Functions torch removed in 1.9 (``lstsq``, ``solve``, ``symeig``, ``eig``, ``matrix_rank``).

They stay importable, as in torch 2.13, and raise torch's ``RuntimeError`` that names the
``ptcore.linalg`` replacement.  The Tensor methods torch keeps with the same error
(torch has no ``Tensor.matrix_rank``) are the same functions, marked ``method_form``.
"""
from ptcore._dispatch.generate import method_form as _method_form

__all__ = ["lstsq", "solve", "symeig", "eig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


@_method_form("lstsq")
def lstsq(input, A, *, out=None):
    raise RuntimeError(_REMOVED + (
        "`ptcore.lstsq` is deprecated in favor of `ptcore.linalg.lstsq`.\n"
        "`ptcore.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `ptcore.linalg.qr`.\n\n"
        "The returned solution in `ptcore.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In ptcore.linalg.lstsq, the "
        "residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = ptcore.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = ptcore.linalg.lstsq(A, B).solution"))


@_method_form("solve")
def solve(input, A, *, out=None):
    raise RuntimeError(_REMOVED + (
        "`ptcore.solve` is deprecated in favor of `ptcore.linalg.solve`. `ptcore.linalg.solve` "
        "has its arguments reversed and does not return the LU factorization.\n\n"
        "To get the LU factorization see `ptcore.lu`, which can be used with `ptcore.lu_solve` "
        "or `ptcore.lu_unpack`.\nX = ptcore.solve(B, A).solution should be replaced with:\n"
        "X = ptcore.linalg.solve(A, B)"))


@_method_form("symeig")
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_REMOVED + (
        "The default behavior has changed from using the upper triangular portion of the matrix "
        "by default to using the lower triangular portion.\n\n"
        "L, _ = ptcore.symeig(A, upper=upper) should be replaced with:\n"
        "L = ptcore.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = ptcore.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = ptcore.linalg.eigh(A, UPLO='U' if upper else 'L')"))


@_method_form("eig")
def eig(input, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_REMOVED + (
        "`ptcore.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than "
        "real tensors mimicking complex tensors.\n\n"
        "L, _ = ptcore.eig(A) should be replaced with:\nL_complex = ptcore.linalg.eigvals(A)\n\n"
        "and\n\nL, V = ptcore.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = ptcore.linalg.eig(A)"))


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_REMOVED + (
        "\nPlease use the `ptcore.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `ptcore.linalg.matrix_rank()` to 'hermitian'."))


_REINFORCE = """reinforce() was removed.
Use ptcore.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = ptcore.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


@_method_form("reinforce")
def reinforce(self, reward):
    """Removed (``Variable.reinforce``): raises torch's RuntimeError with the replacement."""
    raise RuntimeError(_REINFORCE)


def _get_volatile(self):
    import warnings
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _set_volatile(self, value):
    import warnings
    warnings.warn("volatile was removed and now has no effect. Use `with ptcore.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


_method_form("volatile", property(_get_volatile, _set_volatile))
