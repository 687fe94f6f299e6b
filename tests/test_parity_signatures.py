"""Keyword names, positional order and defaults of public functions, against torch.

Each case is a small program over a library namespace ``L`` (``torch`` or
``ptcore``); it runs on both and the results (values, dtypes, shapes) or the
exception types must agree.  The cases pass by keyword the arguments that
torch's Python bindings name (``input=``, ``input2=``, ``n=`` ...), which are
not always the names in torch's documentation.
"""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _plain(r):
    if isinstance(r, (torch.Tensor, ptcore.Tensor)):
        return ("T", str(r.dtype).split(".")[-1], tuple(r.shape),
                np.asarray(r.detach().resolve_conj().numpy() if isinstance(r, torch.Tensor)
                           else r.detach().numpy()))
    if isinstance(r, (tuple, list)):
        return ("seq", [_plain(x) for x in r])
    if isinstance(r, (torch.Size, ptcore.Size)):
        return ("size", tuple(r))
    return ("obj", r)


def _same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "T":
        return a[1:3] == b[1:3] and np.allclose(a[3], b[3], rtol=1e-5, atol=1e-6, equal_nan=True)
    if a[0] == "seq":
        return len(a[1]) == len(b[1]) and all(_same(x, y) for x, y in zip(a[1], b[1]))
    return a == b


def _run(src, L):
    g = {"L": L, "F": L.nn.functional}
    exec("def _case():\n" + "\n".join("    " + line for line in src.strip().splitlines()), g)
    try:
        return "ok", _plain(g["_case"]())
    except Exception as e:     # the exception's type is compared
        return "exc", type(e).__name__


def _check(src):
    t, p = _run(src, torch), _run(src, ptcore)
    assert t[0] == p[0], (src, t, p)
    if t[0] == "exc":
        assert t[1] == p[1], (src, t, p)
    else:
        assert _same(t[1], p[1]), (src, t, p)


SPD = "a = L.tensor([[2., 1.], [1., 3.]], dtype=L.float64)\n"
TRI = "a = L.tensor([[2., 0.], [1., 3.]], dtype=L.float64)\n"

LINALG = {
    # torch.linalg's builtins name their tensor ``input`` (not the documented A)
    "cholesky": SPD + "return L.linalg.cholesky(input=a, upper=True)",
    "cholesky_A_rejected": SPD + "return L.linalg.cholesky(A=a)",
    "cholesky_ex": SPD + "return L.linalg.cholesky_ex(input=a, check_errors=True)",
    "cond": SPD + "return L.linalg.cond(input=a, p='fro')",
    "eig": SPD + "return L.linalg.eig(input=a)[0]",
    "eigh": SPD + "return L.linalg.eigh(input=a, UPLO='U')[0]",
    "eigvals": SPD + "return L.linalg.eigvals(input=a)",
    "eigvalsh": SPD + "return L.linalg.eigvalsh(input=a, UPLO='U')",
    "householder_product": SPD + "return L.linalg.householder_product(input=a, tau=a[0])",
    "ldl_factor": SPD + "return L.linalg.ldl_factor(input=a, hermitian=True)",
    "ldl_factor_ex": SPD + "return L.linalg.ldl_factor_ex(input=a)[:2]",
    "lstsq": SPD + "return L.linalg.lstsq(input=a, b=a, rcond=None).solution",
    "lstsq_positional_rcond": SPD + "return L.linalg.lstsq(a, a, 1e-3, driver='gelsd').solution",
    "matrix_exp": SPD + "return L.linalg.matrix_exp(input=a)",
    "norm": SPD + "return L.linalg.norm(input=a, ord='fro', dim=(-2, -1), keepdim=True)",
    "norm_A_rejected": SPD + "return L.linalg.norm(A=a)",
    "vector_norm": SPD + "return L.linalg.vector_norm(input=a, ord=1, dim=1, keepdim=True)",
    "solve_triangular": TRI + "return L.linalg.solve_triangular(input=a, B=a, upper=False)",
    "tensorinv": SPD + "return L.linalg.tensorinv(input=a, ind=1)",
    "tensorsolve": SPD + "return L.linalg.tensorsolve(input=a, other=a[0], dims=None)",
    # the positional overloads matrix_rank(A, tol, hermitian), pinv(A, rcond, hermitian)
    "matrix_rank_tol": SPD + "return L.linalg.matrix_rank(a, 1.5, True)",
    "matrix_rank_tol_kw": SPD + "return L.linalg.matrix_rank(input=a, tol=1.5)",
    "matrix_rank_atol": SPD + "return L.linalg.matrix_rank(a, atol=1.5, rtol=0.0, hermitian=False)",
    "pinv_rcond": SPD + "return L.linalg.pinv(a, 0.5, True)",
    "pinv_rcond_kw": SPD + "return L.linalg.pinv(input=a, rcond=0.5)",
    "pinv_atol": SPD + "return L.linalg.pinv(a, atol=2.0, hermitian=True)",
    # torch.* linear algebra
    "torch_matrix_exp": SPD + "return L.matrix_exp(input=a)",
    "cholesky_inverse": TRI + "return L.cholesky_inverse(input=a, upper=False)",
    "cholesky_solve": TRI + "return L.cholesky_solve(input=a[:, :1], input2=a, upper=False)",
    "cholesky_solve_method": TRI + "return a.cholesky_solve(input2=a)",
    "lu_solve": SPD + ("LU, piv = L.linalg.lu_factor(a)\n"
                       "return L.lu_solve(input=a[:, :1], LU_data=LU, LU_pivots=piv)"),
    "triangular_solve": TRI + ("return L.triangular_solve(input=a[:, :1], A=a, upper=False, "
                               "transpose=True, unitriangular=False)"),
    "orgqr": SPD + "q, tau = L.geqrf(a)\nreturn L.orgqr(q, input2=tau)",
    "ormqr": SPD + ("q, tau = L.geqrf(a)\n"
                    "return L.ormqr(input=q, input2=tau, input3=a, left=False, transpose=True)"),
    "ormqr_method": SPD + "q, tau = L.geqrf(a)\nreturn q.ormqr(input2=tau, input3=a)",
}

SPECIAL = {
    "chebyshev_t_n": "return L.special.chebyshev_polynomial_t(L.tensor([0.5, 0.2]), n=3)",
    "chebyshev_u_x_n": "return L.special.chebyshev_polynomial_u(x=L.tensor([0.5, 0.2]), n=2)",
    "hermite_h_out": ("o = L.empty(2)\n"
                      "r = L.special.hermite_polynomial_h(L.tensor([0.5, 0.2]), n=2, out=o)\n"
                      "return r, o"),
    "legendre_p_tensor_n": ("return L.special.legendre_polynomial_p(x=L.tensor([0.5, 0.2]), "
                            "n=L.tensor([1., 3.]))"),
    "shifted_chebyshev_w_n": "return L.special.shifted_chebyshev_polynomial_w(L.tensor([0.3]), n=4)",
    "softmax_positional_dtype": "return L.special.softmax(L.tensor([[2., 1.]]), 1, L.float64)",
}


@pytest.mark.parametrize("src", list(LINALG.values()), ids=list(LINALG))
def test_linalg_keywords(src):
    _check(src)


@pytest.mark.parametrize("src", list(SPECIAL.values()), ids=list(SPECIAL))
def test_special_keywords(src):
    _check(src)
