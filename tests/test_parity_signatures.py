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


OUT = {
    # out= where torch's binding has it: the result written into out and returned
    "argsort": ("x = L.tensor([3., 1., 2.])\no = L.empty(0, dtype=L.int64)\n"
                "r = L.argsort(x, stable=True, descending=True, out=o)\nreturn r, o, r is o"),
    "argsort_out_dtype": ("return L.argsort(L.tensor([3., 1.]), stable=True, "
                          "out=L.empty(2, dtype=L.int32))"),
    "softmax": ("x = L.tensor([[2., -1.], [1., 3.]])\no = L.empty(0)\n"
                "r = L.softmax(x, 1, out=o)\nreturn r, o, r is o"),
    "softmax_dtype": ("x = L.tensor([[2., -1.]])\n"
                      "return L.softmax(x, 1, L.float64, out=L.empty(0, dtype=L.float64))"),
    "softmax_out_dtype": "return L.softmax(L.tensor([[2., -1.]]), 1, out=L.empty(0, dtype=L.float64))",
    "log_softmax": ("x = L.tensor([[2., -1.], [1., 3.]])\no = L.empty(0)\n"
                    "r = L.log_softmax(x, dim=0, out=o)\nreturn r, o, r is o"),
    "hardshrink": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0)\n"
                   "r = L.hardshrink(x, 1.5, out=o)\nreturn r, o, r is o"),
    "hardshrink_out_dtype": "return L.hardshrink(L.tensor([2.]), out=L.empty(1, dtype=L.float64))",
    "threshold_cast": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0, dtype=L.float64)\n"
                       "r = L.threshold(x, 1.0, 7.0, out=o)\nreturn r, o, r is o"),
    "threshold_no_cast": ("return L.threshold(L.tensor([2.]), 1.0, 0.0, "
                          "out=L.empty(1, dtype=L.int64))"),
    "renorm": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0)\n"
               "r = L.renorm(x, 2, 0, 1.0, out=o)\nreturn r, o, r is o"),
    "slice_scatter": ("x = L.zeros(3, 2)\no = L.empty(0)\n"
                      "r = L.slice_scatter(x, L.ones(1, 2), 0, 1, 2, out=o)\nreturn r, o, r is o"),
    "nonzero_static": ("x = L.tensor([[2., 0.], [1., 3.]])\no = L.empty(0, dtype=L.int64)\n"
                       "r = L.nonzero_static(x, size=5, fill_value=-2, out=o)\nreturn r, o, r is o"),
    "clamp_min": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0)\n"
                  "r = L.clamp_min(x, 0.5, out=o)\nreturn r, o, r is o"),
    "clamp_max_tensor": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0)\n"
                         "r = L.clamp_max(x, L.tensor(0.5), out=o)\nreturn r, o, r is o"),
    "clamp_min_out_dtype": ("return L.clamp_min(L.tensor([2.]), 1.0, "
                            "out=L.empty(1, dtype=L.float64))"),
    "F_hardshrink": ("x = L.tensor([[2., -0.2], [1., -3.]])\no = L.empty(0)\n"
                     "r = L.nn.functional.hardshrink(x, 1.5, out=o)\nreturn r, o, r is o"),
    # out= with an input that requires grad is refused (grad mode on), allowed under no_grad
    "hardshrink_grad": "return L.hardshrink(L.ones(2, requires_grad=True), out=L.empty(0))",
    "threshold_grad": "return L.threshold(L.ones(2, requires_grad=True), 0.5, 0., out=L.empty(0))",
    "renorm_grad": "return L.renorm(L.ones(2, 2, requires_grad=True), 2, 0, 1., out=L.empty(0))",
    "renorm_no_grad": ("x = L.ones(2, 2, requires_grad=True)\nwith L.no_grad():\n"
                       "    return L.renorm(x, 2, 0, 1., out=L.empty(0))"),
    "nonzero_static_out_dtype": ("return L.nonzero_static(L.ones(2), size=1, "
                                 "out=L.empty(0, dtype=L.int32))"),
    # the copy forms of unbind/split take a list of outs and return None
    "unbind_copy": ("x = L.arange(12.).view(3, 4)\no = [L.empty(0) for _ in range(4)]\n"
                    "return L.unbind_copy(x, dim=1, out=o), o"),
    "split_copy": ("x = L.arange(12.).view(3, 4)\no = [L.empty(3, 2), L.empty(3, 2)]\n"
                   "return L.split_copy(x, 2, dim=1, out=o), o"),
    "split_copy_not_resized": ("x = L.arange(12.).view(3, 4)\n"
                               "return L.split_copy(x, 2, dim=1, out=[L.empty(0), L.empty(0)])"),
    "split_with_sizes_copy": ("x = L.arange(12.).view(3, 4)\no = [L.empty(0), L.empty(0)]\n"
                              "return L.split_with_sizes_copy(x, [1, 3], dim=1, out=o), o"),
    "narrow_copy_out_dtype": ("return L.narrow_copy(L.ones(3, 4), 1, 0, 2, "
                              "out=L.empty(0, dtype=L.float64))"),
}

KEYWORDS = {
    # creation functions take pin_memory= (False: an ordinary tensor)
    "empty_like_pin": "return L.empty_like(L.ones(2, 3), pin_memory=False).shape",
    "zeros_like_pin": "return L.zeros_like(L.ones(2, 3), dtype=L.float64, pin_memory=False)",
    "ones_like_pin": "return L.ones_like(L.ones(2, 3), pin_memory=False)",
    "full_like_pin": "return L.full_like(L.ones(2, 3), 2.5, pin_memory=False)",
    "rand_like_pin": "return L.rand_like(L.ones(2, 3), pin_memory=False).shape",
    "randn_like_pin": "return L.randn_like(L.ones(2, 3), pin_memory=False).shape",
    "randint_like_pin": "return L.randint_like(L.ones(2, 3), 3, pin_memory=False).shape",
    "eye_pin": "return L.eye(2, 3, pin_memory=False)",
    "linspace_pin": "return L.linspace(0, 1, 3, pin_memory=False)",
    "logspace_pin": "return L.logspace(0, 1, 3, pin_memory=False)",
    "tril_indices_pin": "return L.tril_indices(3, 3, pin_memory=False)",
    "triu_indices_pin": "return L.triu_indices(3, 3, 1, pin_memory=False)",
    "range_no_pin": "return L.range(0, 1, 0.5, pin_memory=False)",
    # concatenate(tensors, dim) and its axis= spelling
    "concatenate_dim": "a = L.ones(2, 2)\nreturn L.concatenate([a, 2 * a], dim=1)",
    "concatenate_axis": "a = L.ones(2, 2)\nreturn L.concatenate(tensors=[a, 2 * a], axis=1)",
    "concatenate_positional": "a = L.ones(2, 2)\nreturn L.concatenate([a, 2 * a], 1)",
    # hsplit/vsplit/dsplit's overloads (input, sections) and (input, indices)
    "hsplit_sections": "return L.hsplit(L.arange(16.).view(4, 4), sections=2)",
    "vsplit_indices": "return L.vsplit(L.arange(16.).view(4, 4), indices=[1, 3])",
    "dsplit_sections": "return L.dsplit(L.arange(8.).view(2, 2, 2), sections=2)",
    "hsplit_method": "return L.arange(16.).view(4, 4).hsplit(indices=[1])",
    "vsplit_positional": "return L.arange(16.).view(4, 4).vsplit(2)",
    # histogramdd's range, weight and density are positional too
    "histogramdd_positional": ("x = L.tensor([[0.2, 0.3], [0.6, 0.1], [0.7, 0.9]])\n"
                               "return L.histogramdd(x, [2, 2], [0., 1., 0., 1.], "
                               "L.tensor([1., 2., 3.]), True)"),
    # isin's Scalar overloads name the number element / test_element
    "isin_element": "return L.isin(element=3, test_elements=L.tensor([1, 3]))",
    "isin_test_element": "return L.isin(elements=L.tensor([1, 3]), test_element=3, invert=True)",
    "isin_positional_number": "return L.isin(L.tensor([1, 3]), 3)",
    # Tensor.norm(p, dim, keepdim, dtype): no out before dtype
    "tensor_norm_positional_dtype": "return L.tensor([[2., 1.], [1., 3.]]).norm(2, 1, True, L.float64)",
    "torch_norm_keywords": ("return L.norm(L.tensor([[2., 1.], [1., 3.]]), p=1, dim=0, keepdim=True, "
                            "dtype=L.float64)"),
    # Tensor.where(condition, other)
    "tensor_where_other": "x = L.tensor([1., -2.])\nreturn x.where(x > 0, other=L.tensor(5.))",
    "tensor_where_y_rejected": "x = L.tensor([1., -2.])\nreturn x.where(x > 0, y=5.)",
    # Tensor.map_(other, callable)
    "map_other": "a = L.ones(2, 3)\nreturn a.map_(other=2 * a, callable=lambda x, y: x + y)",
    # nn.functional.rrelu_'s generator (eval mode: deterministic)
    "rrelu_generator": ("x = L.tensor([-1., 2.])\n"
                        "return L.nn.functional.rrelu_(x, 0.1, 0.3, False, generator=None)"),
}


CASES = {f"{group}-{name}": src
         for group, table in (("linalg", LINALG), ("special", SPECIAL), ("out", OUT),
                              ("keywords", KEYWORDS))
         for name, src in table.items()}


@pytest.mark.parametrize("src", list(CASES.values()), ids=list(CASES))
def test_keyword_call_matches_torch(src):
    _check(src)


def test_rrelu_inplace_generator_drives_the_slopes():
    x = ptcore.full((64,), -1.0)
    a = ptcore.nn.functional.rrelu_(x.clone(), 0.1, 0.3, True, ptcore.Generator().manual_seed(3))
    b = ptcore.nn.functional.rrelu_(x.clone(), 0.1, 0.3, True, ptcore.Generator().manual_seed(3))
    assert ptcore.equal(a, b)
    assert ((-a >= 0.1) & (-a <= 0.3)).all()


RESIZED = {
    # an out of the wrong shape with elements: resized, with torch's deprecation
    # warning for most ops; narrow_copy's out= resizes silently
    "softmax": "L.softmax(L.ones(3, 4), 1, out=OUT)",
    "argsort": "L.argsort(L.ones(3, 4), stable=True, out=OUT.long())",
    "hardshrink": "L.hardshrink(L.ones(3, 4), out=OUT)",
    "renorm": "L.renorm(L.ones(3, 4), 2, 0, 1.0, out=OUT)",
    "slice_scatter": "L.slice_scatter(L.ones(3, 4), L.zeros(1, 4), 0, 1, 2, out=OUT)",
    "narrow_copy": "L.narrow_copy(L.ones(3, 4), 1, 0, 2, out=OUT)",
}


@pytest.mark.parametrize("src", list(RESIZED.values()), ids=list(RESIZED))
def test_out_resize_warning_as_torch(src):
    import warnings
    seen = []
    for L in (torch, ptcore):
        out = L.empty(7)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = eval(src, {"L": L, "OUT": out})
        seen.append((sum("resized" in str(x.message) for x in w), tuple(r.shape)))
    assert seen[0] == seen[1], seen
