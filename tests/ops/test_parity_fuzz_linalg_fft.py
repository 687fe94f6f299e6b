"""Differences from torch found by differential fuzzing of ptcore.linalg / ptcore.fft and
the torch.* matrix products; each test compares against torch."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _p(t):
    return ptcore.from_numpy(t.detach().resolve_conj().numpy().copy())


def _close(p, t, rtol=1e-10, atol=1e-12):
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    np.testing.assert_allclose(p.resolve_conj().numpy(), t.detach().resolve_conj().numpy(),
                               rtol=rtol, atol=atol)


def _exc(fn_t, fn_p):
    """Both raise; the same exception class (torch's LinAlgError is ``_LinAlgError``)."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ep:
        fn_p()
    tn, pn = type(et.value).__name__, type(ep.value).__name__
    assert tn.lstrip("_") == pn, (tn, pn, str(ep.value))
    return ep.value


def _rand(*s, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(s, generator=g, dtype=dtype)


# ---------------------------------------------------------------------------
# solvers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [((3, 3), (5, 3, 2)), ((1, 3, 3), (5, 3, 2)),
                                   ((5, 1, 3, 3), (4, 3, 2)), ((2, 3, 3), (3,))])
@pytest.mark.parametrize("left", [True, False])
def test_solve_ex_info_has_the_batch_shape_of_A(sa, sb, left):
    A, B = _rand(*sa, seed=1), _rand(*sb, seed=2)
    if not left:
        if len(sb) == 1:
            return
        B = B.mT
    rt = torch.linalg.solve_ex(A, B, left=left)
    rp = ptcore.linalg.solve_ex(_p(A), _p(B), left=left)
    _close(rp.result, rt.result)
    _close(rp.info, rt.info)


@pytest.mark.parametrize("fn", ["lu_factor", "lu_factor_ex"])
def test_lu_factor_singular_raises_runtime_error_not_linalg_error(fn):
    S = torch.ones(3, 3, dtype=torch.float64)
    kw = {"check_errors": True} if fn == "lu_factor_ex" else {}
    e = _exc(lambda: getattr(torch.linalg, fn)(S, **kw),
             lambda: getattr(ptcore.linalg, fn)(_p(S), **kw))
    assert not isinstance(e, ptcore.linalg.LinAlgError)


def test_triangular_solve_and_cholesky_solve_with_a_zero_pivot_give_infs_not_errors():
    S = torch.ones(3, 3, dtype=torch.float64)
    U = S.triu() - torch.eye(3, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt = torch.triangular_solve(S, U)
        rp = ptcore.triangular_solve(_p(S), _p(U))
    np.testing.assert_array_equal(rp.solution.numpy(), rt.solution.numpy())
    for L in (S * 0, S.tril() - torch.eye(3, dtype=torch.float64)):
        np.testing.assert_array_equal(ptcore.cholesky_solve(_p(S), _p(L)).numpy(),
                                      torch.cholesky_solve(S, L).numpy())


def test_cholesky_solve_and_triangular_solve_values_and_grads():
    A = _rand(2, 3, 3, seed=3)
    L = torch.linalg.cholesky(A @ A.mT + 3 * torch.eye(3, dtype=torch.float64))
    B = _rand(2, 3, 2, seed=4)
    for upper in (False, True):
        F = L.mT.contiguous() if upper else L
        Ft, Bt = F.clone().requires_grad_(), B.clone().requires_grad_()
        Fp, Bp = _p(F).requires_grad_(), _p(B).requires_grad_()
        xt = torch.cholesky_solve(Bt, Ft, upper)
        xp = ptcore.cholesky_solve(Bp, Fp, upper)
        _close(xp.detach(), xt.detach())
        xt.sum().backward()
        xp.sum().backward()
        _close(Fp.grad, Ft.grad, rtol=1e-9, atol=1e-10)
        _close(Bp.grad, Bt.grad, rtol=1e-9, atol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in [(True, False, False), (False, True, False), (True, True, True)]:
            rt = torch.triangular_solve(B, L.mT, *args)
            rp = ptcore.triangular_solve(_p(B), _p(L.mT), *args)
            _close(rp.solution, rt.solution)


@pytest.mark.parametrize("name,args", [
    ("pinv_hermitian_int", lambda m, x: m.linalg.pinv(x.long(), hermitian=True)),
    ("cholesky_int", lambda m, x: m.cholesky(x.long())),
    ("triangular_solve_int", lambda m, x: m.triangular_solve(x.long(), x.long())),
    ("cholesky_inverse_half", lambda m, x: m.cholesky_inverse(x.half())),
    ("cholesky_inverse_bf16", lambda m, x: m.cholesky_inverse(x.bfloat16())),
    ("solve_right_vector_half", lambda m, x: m.linalg.solve(x.half(), x[0].half(), left=False)),
    ("solve_right_shape_bf16",
     lambda m, x: m.linalg.solve(x.bfloat16(), x[:, :2].bfloat16(), left=False)),
])
def test_dtype_errors_have_torch_exception_types(name, args):
    x = _rand(3, 3, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _exc(lambda: args(torch, x), lambda: args(ptcore, _p(x)))


# ---------------------------------------------------------------------------
# matrix products
# ---------------------------------------------------------------------------
def test_addr_with_an_empty_vector():
    c, v1, v2 = torch.ones(0, 4), torch.ones(0), torch.ones(4)
    _close(ptcore.addr(_p(c), _p(v1), _p(v2)), torch.addr(c, v1, v2))
    _close(ptcore.addr(_p(c), _p(v1), _p(v2), beta=2, alpha=3),
           torch.addr(c, v1, v2, beta=2, alpha=3))


@pytest.mark.parametrize("fn,shapes", [
    ("addmv", [(3,), (3, 4), (4,)]), ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addmm", [(3, 5), (3, 4), (4, 5)]), ("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)])])
def test_integer_products_truncate_floating_alpha_beta(fn, shapes):
    ts = [torch.arange(int(np.prod(s)), dtype=torch.int64).reshape(s) % 7 - 3 for s in shapes]
    rt = getattr(torch, fn)(*ts, beta=0.5, alpha=2.7)
    rp = getattr(ptcore, fn)(*[_p(t) for t in ts], beta=0.5, alpha=2.7)
    _close(rp, rt)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_ldl_factor_and_solve_of_empty_matrices(shape):
    A = _rand(*shape, seed=6)
    rt = torch.linalg.ldl_factor_ex(A)
    rp = ptcore.linalg.ldl_factor_ex(_p(A))
    for a, b in zip(rp, rt):
        _close(a, b)
    B = _rand(*shape[:-1], 2, seed=7)
    _close(ptcore.linalg.ldl_solve(_p(rt.LD), _p(rt.pivots), _p(B)),
           torch.linalg.ldl_solve(rt.LD, rt.pivots, B))


# ---------------------------------------------------------------------------
# complex gradients (first and second order) against torch
# ---------------------------------------------------------------------------
def _grads(mod, fn, inputs, weights, second):
    xs = [x.clone().requires_grad_() if mod is torch else _p(x).requires_grad_() for x in inputs]
    outs = fn(mod, *xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0
    for o, w in zip(outs, weights):
        ow = o * (w if mod is torch else _p(w))
        loss = loss + ow.real.sum() + 0.5 * ow.imag.sum() if o.dtype.is_complex else \
            loss + ow.sum()
    gs = mod.autograd.grad(loss, xs, create_graph=second)
    res = [g.detach() for g in gs]
    if second:
        s = sum((g.abs() ** 2).sum() for g in gs)
        res += [g.detach() for g in mod.autograd.grad(s, xs)]
    return res


def _spd(n, seed):
    a = _rand(2, n, n, dtype=torch.complex128, seed=seed)
    return a @ a.mH + n * torch.eye(n, dtype=torch.complex128)


@pytest.mark.parametrize("name,fn,make", [
    ("outer", lambda m, a, b: m.outer(a, b),
     lambda: [_rand(2, dtype=torch.complex128, seed=1), _rand(3, dtype=torch.complex128, seed=2)]),
    ("ger", lambda m, a, b: m.ger(a, b),
     lambda: [_rand(2, dtype=torch.complex128, seed=1), _rand(3, dtype=torch.complex128, seed=2)]),
    ("slogdet", lambda m, a: tuple(m.linalg.slogdet(a)),
     lambda: [_rand(2, 3, 3, dtype=torch.complex128, seed=3)]),
    ("slogdet_sign_only", lambda m, a: m.linalg.slogdet(a).sign,
     lambda: [_rand(2, 3, 3, dtype=torch.complex128, seed=4)]),
    ("cholesky", lambda m, a: m.linalg.cholesky(a), lambda: [_spd(3, 5)]),
    ("cholesky_upper", lambda m, a: m.linalg.cholesky(a, upper=True), lambda: [_spd(3, 6)]),
    ("cholesky_ex", lambda m, a: m.linalg.cholesky_ex(a).L, lambda: [_spd(4, 7)]),
])
def test_complex_gradients_match_torch(name, fn, make):
    inputs = make()
    with torch.no_grad():
        outs = fn(torch, *inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    weights = [_rand(*o.shape, dtype=o.dtype, seed=11 + i) for i, o in enumerate(outs)]
    gt = _grads(torch, fn, inputs, weights, True)
    gp = _grads(ptcore, fn, inputs, weights, True)
    for a, b in zip(gp, gt):
        _close(a, b, rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------
# einsum: pairs with no summed label are elementwise products (as torch)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eq,shapes", [
    ("i,j->ij", [(3,), (4,)]), ("ij,ij->ij", [(2, 3), (1, 3)]), ("ij,kl->ijkl", [(2, 3), (3, 4)]),
    ("ij,j->j", [(2, 3), (3,)]), ("ij,j,k->ik", [(2, 3), (3,), (4,)]), ("ii,i->i", [(3, 3), (3,)])])
@pytest.mark.parametrize("dts", [(torch.bool,), (torch.int32,), (torch.float64, torch.float32),
                                 (torch.int64, torch.float32), (torch.bool, torch.float32)])
def test_einsum_products_without_a_summed_label(eq, shapes, dts):
    g = torch.Generator().manual_seed(3)
    ops = [torch.randint(-3, 4, s, generator=g).to(dts[i % len(dts)])
           for i, s in enumerate(shapes)]
    try:
        rt = torch.einsum(eq, *ops)
    except Exception as e:      # a summed pair of different dtypes: both raise
        _exc(lambda: torch.einsum(eq, *ops), lambda: ptcore.einsum(eq, *[_p(o) for o in ops]))
        return
    _close(ptcore.einsum(eq, *[_p(o) for o in ops]), rt)


def test_einsum_outer_product_keeps_negative_zero():
    a, b = torch.tensor([-0.0, 1.0]), torch.tensor([5.0, -0.0])
    rt = torch.einsum("bi,bj->bij", a[None], b[None])
    rp = ptcore.einsum("bi,bj->bij", _p(a[None]), _p(b[None]))
    np.testing.assert_array_equal(np.signbit(rp.numpy()), np.signbit(rt.numpy()))


@pytest.mark.parametrize("dts", [(torch.bool, torch.float32), (torch.float32, torch.bool),
                                 (torch.float32, torch.float64)])
def test_einsum_contraction_of_mixed_dtypes_raises_as_torch(dts):
    a, b = torch.ones(2, 3, dtype=dts[0]), torch.ones(3, 4, dtype=dts[1])
    _exc(lambda: torch.einsum("ij,jk->ik", a, b), lambda: ptcore.einsum("ij,jk->ik", _p(a), _p(b)))


# ---------------------------------------------------------------------------
# out= dtypes: composites copy into out (any dtype the result safely casts to);
# the others want the result's dtype exactly
# ---------------------------------------------------------------------------
def _out_cases():
    A = _rand(3, 3, seed=20)
    H = A @ A.mT + 3 * torch.eye(3, dtype=torch.float64)
    L = torch.linalg.cholesky(H)
    LU, piv = torch.linalg.lu_factor(A)
    v = _rand(3, seed=21)
    return [
        ("linalg.pinv", (A,)), ("linalg.householder_product", (A, v)), ("linalg.tensorinv", (A, 1)),
        ("linalg.tensorsolve", (A, v)), ("linalg.cond", (A,)), ("outer", (v, v)), ("ger", (v, v)),
        ("addr", (A, v, v)), ("kron", (A, A)), ("cholesky", (H,)), ("cholesky_solve", (A, L)),
        ("cholesky_inverse", (L,)), ("lu_solve", (A, LU, piv)), ("cross", (A, A)),
        ("linalg.vecdot", (A, A)),
    ]


def _get(mod, name):
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


@pytest.mark.parametrize("case", range(len(_out_cases())))
@pytest.mark.parametrize("out_dtype", [torch.float32, torch.int64])
def test_out_dtype_rules_match_torch(case, out_dtype):
    name, args = _out_cases()[case]
    o_t = torch.empty(0, dtype=out_dtype)
    o_p = ptcore.empty(0, dtype=getattr(ptcore, str(out_dtype).split(".")[1]))
    pargs = [_p(a) if isinstance(a, torch.Tensor) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rt = _get(torch, name)(*args, out=o_t)
        except RuntimeError:
            _exc(lambda: _get(torch, name)(*args, out=torch.empty(0, dtype=out_dtype)),
                 lambda: _get(ptcore, name)(*pargs, out=o_p))
            return
        rp = _get(ptcore, name)(*pargs, out=o_p)
    assert rp is o_p
    _close(o_p, rt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m, x, d: m.linalg.vector_norm(x, dtype=d),
    lambda m, x, d: m.linalg.matrix_norm(x, dtype=d),
    lambda m, x, d: m.linalg.matrix_norm(x, "nuc", dtype=d),
    lambda m, x, d: m.linalg.norm(x, 2, dtype=d),
    lambda m, x, d: m.linalg.norm(x, dtype=d),
    lambda m, x, d: m.linalg.norm(x, 2, -1, dtype=d),
])
@pytest.mark.parametrize("src,dst", [(torch.float64, torch.float32), (torch.float32, torch.float16),
                                     (torch.complex128, torch.complex64)])
def test_norm_dtype_must_not_narrow(call, src, dst):
    x = _rand(3, 3, dtype=src, seed=30)
    pd = getattr(ptcore, str(dst).split(".")[1])
    _exc(lambda: call(torch, x, dst), lambda: call(ptcore, _p(x), pd))
    # widening is fine
    up = {torch.float32: torch.float64, torch.float16: torch.float32,
          torch.complex64: torch.complex128}[dst]
    if up is not src:
        return
    pu = getattr(ptcore, str(up).split(".")[1])
    try:
        rt = call(torch, x.to(dst), up)
    except RuntimeError:        # svd-based norms of float16 input: both raise
        _exc(lambda: call(torch, x.to(dst), up), lambda: call(ptcore, _p(x.to(dst)), pu))
        return
    _close(call(ptcore, _p(x.to(dst)), pu), rt, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("sa,sb", [((2, 5, 3), (5, 2)), ((2, 5, 3), (2, 5)), ((1, 5, 3), (4, 5)),
                                   ((1, 5, 3), (1, 5)), ((2, 5, 3), (1, 5)), ((1, 5, 3), (5, 2)),
                                   ((2, 1, 5, 3), (3, 5, 2)), ((2, 1, 5, 3), (1, 3, 5, 2))])
def test_lstsq_vector_rhs_only_where_B_has_A_shape_without_its_last_dim(sa, sb):
    A, B = _rand(*sa, seed=40), _rand(*sb, seed=41)
    try:
        rt = torch.linalg.lstsq(A, B, driver="gelsd")
    except RuntimeError:
        _exc(lambda: torch.linalg.lstsq(A, B, driver="gelsd"),
             lambda: ptcore.linalg.lstsq(_p(A), _p(B), driver="gelsd"))
        return
    rp = ptcore.linalg.lstsq(_p(A), _p(B), driver="gelsd")
    _close(rp.solution, rt.solution, rtol=1e-8, atol=1e-10)
    _close(rp.rank, rt.rank)
    _close(rp.singular_values, rt.singular_values, rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------
# gradients at special points
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.5, 0.2, -0.5, -1.0])
@pytest.mark.parametrize("vals", [[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]])
def test_vector_norm_below_one_gradient_at_zero_entries(p, vals):
    x = torch.tensor(vals, dtype=torch.float64)
    for f in (lambda m, a: m.linalg.vector_norm(a, p), lambda m, a: m.norm(a, p)):
        a = x.clone().requires_grad_()
        f(torch, a).backward()
        b = _p(x).requires_grad_()
        f(ptcore, b).backward()
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-10, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_eigh_eigenvector_gradient_with_repeated_eigenvalues_is_nonfinite_as_torch(dtype):
    A = torch.diag(torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64)).to(dtype)
    W = _rand(3, 3, dtype=torch.float64, seed=50)
    a = A.clone().requires_grad_()
    (torch.linalg.eigh(a).eigenvectors.abs() * W).sum().backward()
    b = _p(A).requires_grad_()
    (ptcore.linalg.eigh(b).eigenvectors.abs() * _p(W)).sum().backward()
    np.testing.assert_array_equal(np.isfinite(b.grad.numpy()), np.isfinite(a.grad.numpy()))
    assert not np.isfinite(b.grad.numpy()).all()
    # distinct eigenvalues: finite and equal
    A = torch.diag(torch.tensor([1.0, 1.5, 2.0], dtype=torch.float64)).to(dtype) + 0.1
    a = A.clone().requires_grad_()
    (torch.linalg.eigh(a).eigenvectors.abs() ** 2 * W).sum().backward()
    b = _p(A).requires_grad_()
    (ptcore.linalg.eigh(b).eigenvectors.abs() ** 2 * _p(W)).sum().backward()
    _close(b.grad, a.grad, rtol=1e-8, atol=1e-10)


def test_eigh_complex_gradient_of_a_phase_dependent_loss_raises():
    A = _rand(3, 3, dtype=torch.complex128, seed=53)
    A = A + A.mH
    W = _rand(3, 3, dtype=torch.complex128, seed=54)
    a = A.clone().requires_grad_()
    b = _p(A).requires_grad_()
    _exc(lambda: (torch.linalg.eigh(a).eigenvectors * W).real.sum().backward(),
         lambda: (ptcore.linalg.eigh(b).eigenvectors * _p(W)).real.sum().backward())


def test_slogdet_gradient_of_a_singular_matrix_does_not_raise():
    b = ptcore.ones(3, 3, dtype=ptcore.float64, requires_grad=True)
    ptcore.linalg.slogdet(b).logabsdet.backward()
    assert not np.isfinite(b.grad.numpy()).all()      # torch: infs/nans too


@pytest.mark.parametrize("mode,shape", [("r", (4, 3)), ("complete", (4, 3))])
def test_qr_not_differentiable_modes_raise_runtime_error(mode, shape):
    for i in (0, 1):
        a = _rand(*shape, seed=51).requires_grad_()
        b = _p(a.detach()).requires_grad_()
        _exc(lambda: torch.linalg.qr(a, mode)[i].sum().backward(),
             lambda: ptcore.linalg.qr(b, mode)[i].sum().backward())


def test_geqrf_of_a_complex_tensor_that_requires_grad_raises():
    a = _rand(3, 3, dtype=torch.complex128, seed=52).requires_grad_()
    b = _p(a.detach()).requires_grad_()
    _exc(lambda: torch.geqrf(a), lambda: ptcore.geqrf(b))


# ---------------------------------------------------------------------------
# fft
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("idt,odt", [(torch.float64, torch.complex64), (torch.float32, torch.complex128),
                                     (torch.float64, torch.complex128)])
@pytest.mark.parametrize("fn", ["ihfft", "ihfft2", "rfft"])
def test_fft_out_dtypes_as_torch(fn, idt, odt):
    x = _rand(4, 6, dtype=idt, seed=60)
    o_t = torch.empty(0, dtype=odt)
    o_p = ptcore.empty(0, dtype=getattr(ptcore, str(odt).split(".")[1]))
    try:
        getattr(torch.fft, fn)(x, out=o_t)
    except RuntimeError:
        _exc(lambda: getattr(torch.fft, fn)(x, out=torch.empty(0, dtype=odt)),
             lambda: getattr(ptcore.fft, fn)(_p(x), out=o_p))
        return
    assert getattr(ptcore.fft, fn)(_p(x), out=o_p) is o_p
    _close(o_p, o_t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["cholesky", "qr"])
def test_deprecated_cholesky_and_qr_warn_once_as_torch(name):
    from ptcore import _warn
    _warn._WARNED_ONCE.discard("torch." + name)
    A = _rand(3, 3, seed=70)
    H = A @ A.mT + 3 * torch.eye(3, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        getattr(ptcore, name)(_p(H))
        getattr(ptcore, name)(_p(H))
    msgs = [str(x.message) for x in w if issubclass(x.category, UserWarning)]
    assert len(msgs) == 1 and msgs[0].startswith(f"torch.{name} is deprecated in favor of "
                                                  f"torch.linalg.{name}")
    assert w[0].filename == __file__        # attributed to the caller


@pytest.mark.parametrize("make", [
    lambda m: (), lambda m: ("ij->i",), lambda m: (m.ones(2),),
    lambda m: (m.ones(2, 3), [0, 60], m.ones(3, 4), [60, 2]),
    lambda m: (m.ones(2, 3), [0, 52]), lambda m: ("i,i", m.ones(2))])
def test_einsum_argument_errors_have_torch_types(make):
    _exc(lambda: torch.einsum(*make(torch)), lambda: ptcore.einsum(*make(ptcore)))


@pytest.mark.parametrize("dts", [(torch.float64, torch.float32), (torch.float32, torch.float64)])
def test_vecdot_of_mixed_dtypes_raises(dts):
    a, b = torch.ones(3, dtype=dts[0]), torch.ones(3, dtype=dts[1])
    _exc(lambda: torch.linalg.vecdot(a, b),
         lambda: ptcore.linalg.vecdot(_p(a), _p(b)))


# ---------------------------------------------------------------------------
# out= with inputs that require grad: refused where torch refuses, written (and
# differentiable through the copy) where torch's composite takes it
# ---------------------------------------------------------------------------
_OUT_GRAD_CASES = {
    "linalg.norm": lambda m, A, o: m.linalg.norm(A, out=o),
    "linalg.norm_2": lambda m, A, o: m.linalg.norm(A, 2, out=o),
    "linalg.norm_dim": lambda m, A, o: m.linalg.norm(A, dim=1, out=o),
    "linalg.matrix_norm": lambda m, A, o: m.linalg.matrix_norm(A, out=o),
    "linalg.matrix_norm_nuc": lambda m, A, o: m.linalg.matrix_norm(A, "nuc", out=o),
    "cross": lambda m, A, o: m.cross(A, A, dim=1, out=o),
    "cholesky_inverse": lambda m, A, o: m.cholesky_inverse(A, out=o),
    "cholesky_solve": lambda m, A, o: m.cholesky_solve(A, A, out=o),
    "lu_solve": lambda m, A, o: m.lu_solve(A, *m.linalg.lu_factor(A.detach()), out=o),
    "chain_matmul": lambda m, A, o: m.chain_matmul(A, A, out=o),
    "linalg.multi_dot": lambda m, A, o: m.linalg.multi_dot([A, A], out=o),
    "linalg.matrix_power": lambda m, A, o: m.linalg.matrix_power(A, 2, out=o),
    "linalg.solve_triangular": lambda m, A, o: m.linalg.solve_triangular(A, A, upper=True,
                                                                          out=o),
    "linalg.householder_product": lambda m, A, o: m.linalg.householder_product(A, A[0], out=o),
    "linalg.vecdot": lambda m, A, o: m.linalg.vecdot(A, A, out=o),
}


@pytest.mark.parametrize("name", sorted(_OUT_GRAD_CASES))
def test_out_with_inputs_requiring_grad_as_torch(name):
    f = _OUT_GRAD_CASES[name]
    A = _rand(3, 3, seed=80) + 3 * torch.eye(3, dtype=torch.float64)
    a = A.clone().requires_grad_()
    b = _p(A).requires_grad_()
    o_t, o_p = torch.empty(0, dtype=torch.float64), ptcore.empty(0, dtype=ptcore.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            f(torch, a, o_t)
        except RuntimeError:
            _exc(lambda: f(torch, a, torch.empty(0, dtype=torch.float64)), lambda: f(ptcore, b, o_p))
            return
        assert f(ptcore, b, o_p) is o_p
    _close(o_p.detach(), o_t.detach())
    (o_t * 3).sum().backward()
    (o_p * 3).sum().backward()
    _close(b.grad, a.grad, rtol=1e-8, atol=1e-10)
