"""Gradients of ops against torch (the oracle) for the differences that
torch's OpInfo samples (tools/opinfo_sweep.py --grad / --fwad / --gradgrad)
found: reverse-mode gradients, which outputs are differentiable, and the
exception types of the backward pass."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pair(arrays, requires_grad=True):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad) for a in arrays]
    ps = [ptcore.tensor(a, dtype=ptcore.float64, requires_grad=requires_grad) for a in arrays]
    return ts, ps


def _outs(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _outs(x)]
    return [out] if hasattr(out, "requires_grad") else []


def _np(t):
    return None if t is None else np.asarray(t.detach().contiguous().numpy() if hasattr(t, "numpy") else t)


def _same_grads(f, *arrays, seed=0):
    """f(M, *tensors) under torch and ptcore: same outputs, same set of
    differentiable outputs, same gradients for one random cotangent."""
    ts, ps = _pair(arrays)
    wo = [o for o in _outs(f(torch, *ts)) if o.requires_grad]
    go = [o for o in _outs(f(ptcore, *ps)) if o.requires_grad]
    assert len(go) == len(wo)
    rng = np.random.default_rng(seed)
    cots = [rng.standard_normal(tuple(o.shape)) for o in wo]
    for g, w in zip(go, wo):
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-10, atol=1e-12)
    if not wo:
        return
    wg = torch.autograd.grad(wo, ts, [torch.tensor(c) for c in cots], allow_unused=True)
    gg = ptcore.autograd.grad(go, ps, [ptcore.tensor(c) for c in cots], allow_unused=True)
    for g, w in zip(gg, wg):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-9, atol=1e-12)


_R = np.random.default_rng(1)


# --- constant_pad_nd: the third positional argument is the fill value ---------

@pytest.mark.parametrize("f", [
    lambda M, x: M.constant_pad_nd(x, (1, 2), 1.0),
    lambda M, x: M.constant_pad_nd(x, (1, -1, 0, 1), 0),
    lambda M, x: M.nn.functional.pad(x, (0, 1), "constant", 0.0),
])
def test_constant_pad_nd_value_positional_is_differentiable(f):
    _same_grads(f, _R.standard_normal((2, 3)))


# --- matmul of a batch with a matrix when a dim is empty ----------------------

@pytest.mark.parametrize("sa,sb", [((5, 5, 0), (0, 5)), ((2, 0, 3), (3, 4)),
                                   ((0, 2, 3), (3, 4)), ((2, 3, 4), (4, 0))])
def test_matmul_batch_by_matrix_with_an_empty_dim(sa, sb):
    _same_grads(lambda M, a, b: M.matmul(a, b), _R.standard_normal(sa), _R.standard_normal(sb))
    _same_grads(lambda M, a, b: b.__rmatmul__(a), _R.standard_normal(sa), _R.standard_normal(sb))


# --- cat of empty tensors only; batch_norm of an empty input ------------------

def test_cat_of_legacy_empty_tensors_only():
    _same_grads(lambda M, a, b: M.cat([a, b]), np.zeros(0), np.zeros(0))
    _same_grads(lambda M, a, b: M.cat([a, b], dim=-1), np.zeros(0), np.zeros(0))


@pytest.mark.parametrize("shape,stats,affine,training", [
    ((0,), (0,), None, True), ((0,), (0,), None, False), ((0,), None, None, True),
    ((0, 3), (3,), (3,), True), ((0, 3), (2,), None, False), ((0, 3), (3,), (3,), False),
    ((0,), (1,), (3,), False),
])
def test_batch_norm_of_an_empty_input_is_a_clone(shape, stats, affine, training):
    arrays = [_R.standard_normal(shape)] + [_R.standard_normal(affine)] * 2 if affine else \
        [_R.standard_normal(shape)]

    def f(M, x, *wb):
        rm = rv = None
        if stats is not None:
            rm, rv = M.zeros(stats, dtype=M.float64), M.ones(stats, dtype=M.float64)
        w, b = wb if wb else (None, None)
        return M.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
    _same_grads(f, *arrays)


def test_batch_norm_of_an_empty_input_indexes_its_weight():
    for M in (torch, ptcore):
        x = M.zeros(0, dtype=M.float64)
        with pytest.raises(IndexError):
            M.nn.functional.batch_norm(x, None, None, M.zeros(0, dtype=M.float64), None,
                                       training=True)


# --- Tensor.__rsub__ & co. called with a tensor: other OP self ----------------

@pytest.mark.parametrize("name", ["__rsub__", "__rpow__", "__rmod__", "__rtruediv__",
                                  "__rdiv__", "__rmatmul__"])
@pytest.mark.parametrize("sa,sb", [((), ()), ((5,), ()), ((3, 1), (3,))])
def test_reflected_operators_with_a_tensor_other(name, sa, sb):
    if name == "__rmatmul__" and (not sa or not sb):
        return
    a = np.abs(_R.standard_normal(sa)) + 0.5
    b = np.abs(_R.standard_normal(sb)) + 0.5
    _same_grads(lambda M, x, y: getattr(x, name)(y), a, b)


def test_reflected_operators_defer_to_other_types():
    x = ptcore.ones(2)
    assert x.__rsub__("a") is NotImplemented
    assert x.__rpow__([1]) is NotImplemented
    with pytest.raises(TypeError):
        "a" - x


# --- outputs constant in the input still belong to its graph ------------------

@pytest.mark.parametrize("shape", [(1, 1), (2, 3, 3), (0, 0)])
def test_matrix_power_zero_is_differentiable(shape):
    _same_grads(lambda M, a: M.linalg.matrix_power(a, 0), _R.standard_normal(shape))
    _same_grads(lambda M, a: M.matrix_power(a, 0), _R.standard_normal(shape))


@pytest.mark.parametrize("n,r,rep", [(1, 2, False), (0, 2, False), (0, 1, True), (2, 3, False),
                                     (2, 0, False), (3, 2, True)])
def test_combinations_without_any_stays_in_the_graph(n, r, rep):
    _same_grads(lambda M, a: M.combinations(a, r=r, with_replacement=rep),
                _R.standard_normal(n))


# --- quantile: q gets a gradient under linear interpolation -------------------

@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("shape,qshape,dim,keepdim", [
    ((), (2,), None, False), ((5,), (3,), None, False), ((4, 5), (), 1, False),
    ((4, 5), (3,), 0, True), ((3, 4, 2), (2,), -2, False), ((4, 5), (3,), None, True),
])
def test_quantile_gradient_of_q(fn, interp, shape, qshape, dim, keepdim):
    x = _R.standard_normal(shape)
    q = _R.uniform(0.05, 0.95, qshape)
    _same_grads(lambda M, a, b: getattr(M, fn)(a, b, dim=dim, keepdim=keepdim,
                                               interpolation=interp), x, q)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_gradient_of_q_with_nans(fn):
    x = _R.standard_normal((4, 5))
    x[1, 2] = np.nan
    x[3] = np.nan
    _same_grads(lambda M, a, b: getattr(M, fn)(a, b, dim=1), x, np.array([0.25, 0.5, 0.9]))


# --- lstsq: the empty residuals and singular values are distinct tensors ------

@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_differentiable_outputs(driver):
    for M in (torch, ptcore):
        A = M.ones(2, 3, dtype=M.float64, requires_grad=True)
        r = M.linalg.lstsq(A + M.eye(2, 3, dtype=M.float64), A.detach(), driver=driver)
        if M is torch:
            want = [t.requires_grad for t in r]
        else:
            assert [t.requires_grad for t in r] == want
    _same_grads(lambda M, a, b: M.linalg.lstsq(a, b, driver=driver)[:2],
                _R.standard_normal((2, 3)), _R.standard_normal((2, 3)))


# --- native_group_norm of an empty batch -------------------------------------

@pytest.mark.parametrize("shape,group", [((0, 2), 1), ((0, 4, 3), 2), ((2, 4, 3), 2)])
def test_native_group_norm_empty_batch(shape, group):
    N, C = shape[:2]
    HxW = int(np.prod(shape[2:]))
    _same_grads(lambda M, x, w, b: M.native_group_norm(x, w, b, N, C, HxW, group, 1e-5),
                _R.standard_normal(shape), _R.standard_normal(C), _R.standard_normal(C))


# --- forward mode: torch's JVP formulas of the structured linalg ops ----------

def _jvp(M, f, pairs):
    fw = M.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(M.tensor(p), M.tensor(t)) for p, t in pairs]
        out = f(M, *duals)
        out = out if isinstance(out, (tuple, list)) else [out]
        return [fw.unpack_dual(o).tangent for o in out]


def _same_jvp(f, *pairs):
    for g, w in zip(_jvp(ptcore, f, pairs), _jvp(torch, f, pairs)):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-9, atol=1e-11)


def _spd(n, batch=()):
    a = _R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("f", [
    lambda M, a: M.linalg.cholesky(a),
    lambda M, a: M.linalg.cholesky(a, upper=True),
    lambda M, a: M.linalg.cholesky_ex(a, upper=True)[0],
    lambda M, a: M.linalg.eigh(a)[0],
    lambda M, a: M.linalg.eigh(a)[1] * M.linalg.eigh(a)[1][..., :1, :].sign(),
])
def test_jvp_with_a_non_symmetric_tangent(batch, f):
    # (torch's formulas take the whole tangent, not its symmetric part)
    _same_jvp(f, (_spd(4, batch), _R.standard_normal(batch + (4, 4))))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve_jvp_takes_the_whole_tangent(upper, unit):
    A = _R.standard_normal((4, 4)) + 4 * np.eye(4)
    pairs = [(_R.standard_normal((4, 2)), _R.standard_normal((4, 2))),
             (A, _R.standard_normal((4, 4)))]
    _same_jvp(lambda M, b, a: M.triangular_solve(b, a, upper, False, unit), *pairs)


@pytest.mark.parametrize("upper", [True, False])
def test_triangular_solve_transposed_jvp_is_the_derivative(upper):
    # torch's formula takes dA X for op(A) = A^T as well; finite differences
    # (and ptcore) take dA^T X
    A = _R.standard_normal((4, 4)) + 4 * np.eye(4)
    B, dB = _R.standard_normal((4, 2)), _R.standard_normal((4, 2))
    dA = np.triu(_R.standard_normal((4, 4))) if upper else np.tril(_R.standard_normal((4, 4)))

    def f(a, b):
        return ptcore.triangular_solve(ptcore.tensor(b), ptcore.tensor(a), upper, True)[0].numpy()
    eps = 1e-6
    fd = (f(A + eps * dA, B + eps * dB) - f(A - eps * dA, B - eps * dB)) / (2 * eps)
    got = _jvp(ptcore, lambda M, b, a: M.triangular_solve(b, a, upper, True)[0], [(B, dB), (A, dA)])
    np.testing.assert_allclose(_np(got[0]), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("ord", [1, 2, "nuc", "fro", -1, -2, float("inf")])
def test_linalg_norm_of_a_matrix_jvp(ord):
    # (linalg.norm(A, 1) is a matrix norm, not torch.norm's vector 1-norm)
    _same_jvp(lambda M, a: M.linalg.norm(a, ord), (_R.standard_normal((4, 3)),
                                                   _R.standard_normal((4, 3))))


@pytest.mark.parametrize("ord", [0, 0.5, 1, 1.5, 2, 3.5, -1.5])
@pytest.mark.parametrize("x", [np.zeros(0), np.zeros(4), np.array([0., 1., -2., 0.5])])
def test_vector_norm_jvp_torch_formula(ord, x):
    if ord < 0 and not x.any():
        return      # (an infinite norm: torch's tangent is NaN and ptcore's too)
    t = np.arange(x.size, dtype=np.float64) - 1.5
    _same_jvp(lambda M, a: M.linalg.vector_norm(a, ord), (x, t))
    _same_jvp(lambda M, a: M.linalg.norm(a, ord), (x, t))


@pytest.mark.parametrize("row", [[-np.inf, -np.inf], [np.inf, 1.], [1., 2.], [-np.inf, 0.]])
def test_logsumexp_jvp_at_infinities(row):
    # torch's logsumexp_jvp (exp-normalize by amax): NaN for an all -inf or a +inf slice
    x = np.array([row, [0.5, -1.]])
    _same_jvp(lambda M, a: M.logsumexp(a, 1), (x, np.array([[1., 2.], [3., 4.]])))
    mask = np.array([[False, False], [True, False]])
    _same_jvp(lambda M, a: M.masked.logsumexp(a, 1, mask=M.tensor(mask)),
              (x, np.array([[1., 2.], [3., 4.]])))


@pytest.mark.parametrize("off", [0, 3, 5, 7, 12])
def test_as_strided_jvp_reaching_outside_the_view(off):
    # the dual's primal is a view (storage offset 5 of 20): torch's tangent lies
    # in a zero-filled storage of the base's size
    res = []
    for M in (torch, ptcore):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            x = M.arange(20., dtype=M.float64)[5:15]
            d = fw.make_dual(x, M.arange(100., 110., dtype=M.float64))
            res.append(_np(fw.unpack_dual(M.as_strided(d, (2, 2), (1, 2), off)).tangent))
    np.testing.assert_array_equal(res[1], res[0])


@pytest.mark.parametrize("f", [
    lambda M, p: M.bernoulli(p), lambda M, p: M.normal(p, 1.), lambda M, p: M.normal(1., p),
    lambda M, p: M.poisson(p), lambda M, p: M.rand_like(p), lambda M, p: M.multinomial(p, 2),
])
def test_sampling_ops_tangent(f):
    # torch: a zero tangent for a sample drawn with a dual parameter (None for
    # the *_like factories and integer samples)
    res = []
    for M in (torch, ptcore):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(M.full((3,), 0.5, dtype=M.float64), M.ones(3, dtype=M.float64))
            res.append(_np(fw.unpack_dual(f(M, d)).tangent))
    assert (res[1] is None) == (res[0] is None)
    if res[0] is not None:
        np.testing.assert_array_equal(res[1], res[0])


# --- complex alpha/beta: the gradients take their conjugates ------------------

def _c128(*shape):
    return torch.complex(torch.randn(*shape, dtype=torch.float64),
                         torch.randn(*shape, dtype=torch.float64)).numpy()


@pytest.mark.parametrize("name,shapes", [
    ("addmm", [(2, 3), (2, 4), (4, 3)]), ("addmv", [(2,), (2, 4), (4,)]),
    ("addr", [(2, 3), (2,), (3,)]), ("baddbmm", [(2, 2, 3), (2, 2, 4), (2, 4, 3)]),
    ("addbmm", [(2, 3), (2, 2, 4), (2, 4, 3)]),
])
def test_add_matmul_family_complex_scalars(name, shapes):
    torch.manual_seed(0)
    arrays = [_c128(*s) for s in shapes]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ps = [ptcore.tensor(a, requires_grad=True) for a in arrays]
    kw = dict(beta=0.4 + 0.6j, alpha=1.2 - 1.8j)
    w = getattr(torch, name)(*ts, **kw)
    g = getattr(ptcore, name)(*ps, **kw)
    cot = _c128(*w.shape)
    wg = torch.autograd.grad(w, ts, torch.tensor(cot))
    gg = ptcore.autograd.grad(g, ps, ptcore.tensor(cot))
    for a, b in zip(gg, wg):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


def test_ldexp_complex_gradients_are_conjugated():
    torch.manual_seed(1)
    x, b = _c128(3), _c128(3)
    cot = _c128(3)
    res = []
    for M in (torch, ptcore):
        xs, bs = M.tensor(x, requires_grad=True), M.tensor(b, requires_grad=True)
        res.append(M.autograd.grad(M.ldexp(xs, bs), [xs, bs], M.tensor(cot)))
    for a, w in zip(res[1], res[0]):
        np.testing.assert_allclose(_np(a), _np(w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dim", [None, 1])
def test_quantile_second_derivatives(fn, dim):
    x = _R.standard_normal((3, 5))
    q = np.array([0.2, 0.55, 0.9])
    cot = _R.standard_normal((3, 3) if dim is not None else (3,))
    v = [_R.standard_normal((3, 5)), _R.standard_normal(3)]
    res = []
    for M in (torch, ptcore):
        xs, qs = M.tensor(x, requires_grad=True), M.tensor(q, requires_grad=True)
        g = M.autograd.grad(getattr(M, fn)(xs, qs, dim=dim), [xs, qs], M.tensor(cot),
                            create_graph=True)
        res.append(M.autograd.grad(g, [xs, qs], [M.tensor(a) for a in v], allow_unused=True))
    for a, w in zip(res[1], res[0]):
        np.testing.assert_allclose(_np(a), _np(w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f", [
    lambda M, a, b: M.pow(a, b), lambda M, a, b: a.__rpow__(b),
    lambda M, a, b: M.pow(2 + 1j, b), lambda M, a, b: M.pow(0j, b), lambda M, a, b: M.pow(1.5, b),
])
def test_pow_jvp_with_a_complex_exponent(f):
    torch.manual_seed(2)
    _same_jvp(f, (_c128(3), _c128(3)), (_c128(3), _c128(3)))


@pytest.mark.parametrize("ord", [0.5, 1, 1.5, 2, 3.5])
def test_vector_norm_jvp_complex(ord):
    torch.manual_seed(3)
    x = _c128(5)
    x[1] = 0
    _same_jvp(lambda M, a: M.linalg.vector_norm(a, ord), (x, _c128(5)))
    _same_jvp(lambda M, a: M.linalg.vector_norm(a, ord), (np.zeros(4, complex), _c128(4)))


@pytest.mark.parametrize("reduce", ["max", "min", "sum", "mean", "prod"])
def test_segment_reduce_unsafe_lengths_short_of_the_data(reduce):
    # (unsafe=True: torch reduces the segments from the start, the rest is ignored)
    lengths = np.array([[1, 2, 0, 3], [0, 4, 1, 0]])

    def f(M, x):
        return M.segment_reduce(x, reduce, lengths=M.tensor(lengths), axis=1, unsafe=True,
                                initial=1)
    _same_grads(f, _R.standard_normal((2, 7, 3)))
