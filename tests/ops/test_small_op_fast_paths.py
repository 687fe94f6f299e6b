"""The small-tensor fast paths (polar, linalg.cross, linspace, inner, kron,
cumsum/cumprod, vector_norm/linalg.norm) against torch: values, dtypes,
shapes (empty, broadcasting, non-contiguous: the general path), errors,
requires_grad inputs."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _p(a):
    return ptcore.from_numpy(np.ascontiguousarray(a))


def _same(x, y, exact=False):
    assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
    assert tuple(x.shape) == tuple(y.shape)
    if exact:
        np.testing.assert_array_equal(x.detach().resolve_conj().numpy(),
                                      y.detach().resolve_conj().numpy())
    else:
        np.testing.assert_allclose(x.detach().resolve_conj().numpy(),
                                   y.detach().resolve_conj().numpy(), rtol=1e-5, atol=1e-6)


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 4), (2, 0, 3)])
def test_polar(dt, shape):
    a = RNG.random(shape).astype(dt)
    b = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.polar(_p(a), _p(b)), torch.polar(_t(a), _t(b)))


def test_polar_general_cases():
    a, b = RNG.random((3, 1)), RNG.standard_normal((4,))
    _same(ptcore.polar(_p(a), _p(b)), torch.polar(_t(a), _t(b)))      # broadcast
    a2 = RNG.random((4, 3))
    _same(ptcore.polar(_p(a2).t(), _p(a2).t()), torch.polar(_t(a2).t(), _t(a2).t()))
    with pytest.raises(RuntimeError):
        ptcore.polar(_p(a2), _p(a2.astype("float32")))
    x = _p(a2).requires_grad_()
    r = ptcore.polar(x, _p(a2))
    r.abs().sum().backward()
    xt = _t(a2).requires_grad_()
    torch.polar(xt, _t(a2)).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape,dim", [((3,), -1), ((5, 3), -1), ((3, 4), 0), ((2, 3, 4), 1),
                                       ((0, 3), 1)])
def test_linalg_cross(dt, shape, dim):
    a = (RNG.standard_normal(shape) * 10).astype(dt)
    b = (RNG.standard_normal(shape) * 10).astype(dt)
    _same(ptcore.linalg.cross(_p(a), _p(b), dim=dim), torch.linalg.cross(_t(a), _t(b), dim=dim),
          exact=dt == "int64")


def test_linalg_cross_errors_and_grad():
    a = RNG.standard_normal((4, 3))
    with pytest.raises(RuntimeError):
        ptcore.linalg.cross(_p(a), _p(a), dim=0)
    with pytest.raises(IndexError):
        ptcore.linalg.cross(_p(a), _p(a), dim=2)
    _same(ptcore.linalg.cross(_p(a), _p(a[:1])), torch.linalg.cross(_t(a), _t(a[:1])))
    x = _p(a).requires_grad_()
    ptcore.linalg.cross(x, _p(a[::-1])).sum().backward()
    xt = _t(a).requires_grad_()
    torch.linalg.cross(xt, _t(a[::-1])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", [None, "float32", "float64"])
@pytest.mark.parametrize("args", [(0, 1, 100), (-3.5, 7.25, 7), (1e10, -2, 33), (0, 1, 2),
                                  (5, 5, 4), (2 ** 60, 0, 5), (0.1, 0.7, 1001)])
def test_linspace(dt, args):
    kw = {} if dt is None else {"dtype": getattr(ptcore, dt)}
    kt = {} if dt is None else {"dtype": getattr(torch, dt)}
    _same(ptcore.linspace(*args, **kw), torch.linspace(*args, **kt), exact=True)


def test_linspace_general_cases():
    _same(ptcore.linspace(0, 1, 5, requires_grad=True), torch.linspace(0, 1, 5, requires_grad=True))
    assert ptcore.linspace(0, 1, 5, requires_grad=True).requires_grad
    _same(ptcore.linspace(0, 10, 5, dtype=ptcore.int64), torch.linspace(0, 10, 5, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        ptcore.linspace(0, 1, -1)
    o = ptcore.empty(3)
    ptcore.linspace(0, 1, 3, out=o)
    _same(o, torch.linspace(0, 1, 3), exact=True)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("n", [0, 1, 100])
def test_inner_kron_vectors(dt, n):
    a = RNG.standard_normal(n).astype(dt)
    b = RNG.standard_normal(n).astype(dt)
    _same(ptcore.inner(_p(a), _p(b)), torch.inner(_t(a), _t(b)))
    _same(ptcore.kron(_p(a), _p(b)), torch.kron(_t(a), _t(b)), exact=True)


def test_inner_kron_general_cases():
    a, b = RNG.standard_normal(4), RNG.standard_normal(5)
    with pytest.raises(RuntimeError):
        ptcore.inner(_p(a), _p(b))
    with pytest.raises(RuntimeError):
        ptcore.inner(_p(a), _p(a.astype("float32")))
    _same(ptcore.kron(_p(a), _p(b.astype("float32"))), torch.kron(_t(a), _t(b.astype("float32"))))
    x = _p(a).requires_grad_()
    (ptcore.inner(x, x) + ptcore.kron(x, _p(b)).sum()).backward()
    xt = _t(a).requires_grad_()
    (torch.inner(xt, xt) + torch.kron(xt, _t(b)).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,dim", [((100,), 0), ((3, 4), -1), ((3, 4), 0), ((0, 2), 1),
                                       ((), 0)])
def test_cumsum_cumprod(dt, shape, dim):
    a = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.cumsum(_p(a), dim), torch.cumsum(_t(a), dim), exact=True)
    _same(ptcore.cumprod(_p(a), dim), torch.cumprod(_t(a), dim), exact=True)


def test_cumsum_errors_and_grad():
    a = RNG.standard_normal((3, 4)).astype("float32")
    with pytest.raises(IndexError):
        ptcore.cumsum(_p(a), 2)
    x = _p(a).requires_grad_()
    ptcore.cumsum(x, 1).pow(2).sum().backward()
    xt = _t(a).requires_grad_()
    torch.cumsum(xt, 1).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(100,), (3, 4), (0,)])
def test_norms(dt, shape):
    a = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.linalg.norm(_p(a)), torch.linalg.norm(_t(a)))
    _same(ptcore.linalg.vector_norm(_p(a)), torch.linalg.vector_norm(_t(a)))
    if len(shape) == 2:
        _same(ptcore.linalg.vector_norm(_p(a), dim=1, keepdim=True),
              torch.linalg.vector_norm(_t(a), dim=1, keepdim=True))


def test_norm_errors_and_grad():
    with pytest.raises(RuntimeError):
        ptcore.linalg.norm(ptcore.arange(3))
    a = RNG.standard_normal(5)
    x = _p(a).requires_grad_()
    ptcore.linalg.norm(x).backward()
    xt = _t(a).requires_grad_()
    torch.linalg.norm(xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("name", ["atan2", "hypot", "maximum", "minimum", "fmax", "fmin",
                                  "remainder", "fmod", "copysign", "nextafter"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_binary_float_ops(name, dt):
    a = RNG.standard_normal((4, 5)).astype(dt)
    b = RNG.standard_normal((4, 5)).astype(dt)
    a[0, 0], b[0, 1] = np.nan, 0.0
    f, g = getattr(ptcore, name), getattr(torch, name)
    # atan2: torch's vector loops (SLEEF, within 1 ulp) and its scalar tails (libm)
    # differ from libm's correctly rounded result in the last bit on some CPUs and
    # array lengths (seen on an AVX2-only AMD EPYC); every other op is exact
    exact = name != "atan2"
    _same(f(_p(a), _p(b)), g(_t(a), _t(b)), exact=exact)
    _same(f(_p(a), _p(b[:1])), g(_t(a), _t(b[:1])), exact=exact)            # broadcast
    _same(f(_p(a).t(), _p(b).t()), g(_t(a).t(), _t(b).t()), exact=exact)    # strided
    _same(f(_p(a[:0]), _p(b[:0])), g(_t(a[:0]), _t(b[:0])), exact=exact)
    _same(f(_p(a), _p(b.astype("float32" if dt == "float64" else "float64"))),
          g(_t(a), _t(b.astype("float32" if dt == "float64" else "float64"))), exact=exact)
    with pytest.raises(RuntimeError):
        f(_p(a), _p(b[:, :3]))


def test_binary_float_op_grad():
    a, b = RNG.standard_normal(6), RNG.standard_normal(6)
    x = _p(a).requires_grad_()
    ptcore.atan2(x, _p(b)).sum().backward()
    xt = _t(a).requires_grad_()
    torch.atan2(xt, _t(b)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128", "int64"])
def test_dot_vdot(dt):
    a = RNG.standard_normal(50).astype(dt)
    b = RNG.standard_normal(50).astype(dt)
    _same(ptcore.dot(_p(a), _p(b)), torch.dot(_t(a), _t(b)))
    _same(ptcore.vdot(_p(a), _p(b)), torch.vdot(_t(a), _t(b)))
    with pytest.raises(RuntimeError):
        ptcore.dot(_p(a), _p(a[:3]))


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape", [(10, 10), (3, 5), (0, 4)])
def test_trace(dt, shape):
    a = (RNG.standard_normal(shape) * 10).astype(dt)
    _same(ptcore.trace(_p(a)), torch.trace(_t(a)))
    _same(ptcore.trace(_p(a).t()), torch.trace(_t(a).t()))
    with pytest.raises(RuntimeError):
        ptcore.trace(_p(a.reshape(-1)))


@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rand_randn_plain_shapes(fn):
    f = getattr(ptcore, fn)
    for args, kw in [((100,), {}), ((3, 4), {}), (((2, 5),), {}), ((0,), {}),
                     ((3,), {"dtype": ptcore.float64})]:
        ptcore.manual_seed(5)
        x = f(*args, **kw)
        ptcore.manual_seed(5)
        y = f(*args, generator=ptcore.default_generator, **kw)    # the general path
        assert x.dtype is y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    with pytest.raises(RuntimeError):
        f(-1)
    assert f(2, requires_grad=True).requires_grad


def test_norm_and_searchsorted():
    a = RNG.standard_normal((4, 5)).astype("float32")
    _same(ptcore.norm(_p(a)), torch.norm(_t(a)))
    _same(ptcore.norm(_p(a), 2), torch.norm(_t(a), 2))
    x = _p(a).requires_grad_()
    ptcore.norm(x).backward()
    xt = _t(a).requires_grad_()
    torch.norm(xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    e = np.sort(RNG.standard_normal(9))
    for dt in ("float32", "float64", "int64"):
        ee, vv = (e * 4).astype(dt), (a * 4).astype(dt)
        for right in (False, True):
            _same(ptcore.searchsorted(_p(ee), _p(vv), right=right),
                  torch.searchsorted(_t(ee), _t(vv), right=right), exact=True)
            _same(ptcore.bucketize(_p(vv), _p(ee), out_int32=True, right=right),
                  torch.bucketize(_t(vv), _t(ee), out_int32=True, right=right), exact=True)
    _same(ptcore.searchsorted(_p(e), _p(a)), torch.searchsorted(_t(e), _t(a)), exact=True)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "int64", "bool"])
def test_outer(dt):
    a = (RNG.standard_normal(7) * 3).astype(dt)
    b = (RNG.standard_normal(4) * 3).astype(dt)
    _same(ptcore.outer(_p(a), _p(b)), torch.outer(_t(a), _t(b)), exact=True)
    _same(ptcore.outer(_p(a[:0]), _p(b)), torch.outer(_t(a[:0]), _t(b)), exact=True)


@pytest.mark.parametrize("n", [1, 2, 5, 100, 101])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_fft_real_input_one_dim(n, dt):
    a = RNG.standard_normal((3, n)).astype(dt)
    for name in ("fft", "rfft", "ihfft"):
        x = getattr(ptcore.fft, name)(_p(a))
        y = getattr(torch.fft, name)(_t(a))
        _same(x, y)
    _same(ptcore.fft.fft(_p(a), dim=0), torch.fft.fft(_t(a), dim=0))
    if n > 1:       # (a one-point half spectrum has no default length: both raise)
        _same(ptcore.fft.irfft(ptcore.fft.rfft(_p(a))), torch.fft.irfft(torch.fft.rfft(_t(a))))
    with pytest.raises(RuntimeError):
        ptcore.fft.irfft(ptcore.fft.rfft(_p(a[:, :1])))


@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
def test_rand_like_draws(fn):
    f = getattr(ptcore, fn)
    x = ptcore.zeros(5, 4)
    for src in (x, x.t(), ptcore.zeros(0, 3), x.double()):
        ptcore.manual_seed(2)
        a = f(src)
        ptcore.manual_seed(2)
        b = f(src, generator=ptcore.default_generator)     # the general path
        assert a.dtype is b.dtype and a.shape == b.shape and a.stride() == b.stride()
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(NotImplementedError):
        f(ptcore.zeros(3, dtype=ptcore.int64))


def test_cdist_small():
    a = RNG.standard_normal((10, 4))
    b = RNG.standard_normal((7, 4))
    for p in (2.0, 1.0, 0.5, float("inf")):
        _same(ptcore.cdist(_p(a), _p(b), p), torch.cdist(_t(a), _t(b), p))
    with pytest.raises(RuntimeError):
        ptcore.cdist(_p(a).long(), _p(b).long())
    x = _p(a).requires_grad_()
    ptcore.cdist(x, _p(b)).sum().backward()
    xt = _t(a).requires_grad_()
    torch.cdist(xt, _t(b)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"equal_nan": True}, {"rtol": 0, "atol": 0},
                                {"rtol": 1e-3, "atol": 1e-6}, {"rtol": 0.0, "atol": 1e-4}])
def test_isclose_allclose(dt, kw):
    a = RNG.standard_normal(60).astype(dt)
    b = (a * (1 + RNG.standard_normal(60) * 1e-5)).astype(dt)
    b[10:20] = a[10:20] + np.asarray(1e-8, dt) * 3
    a[:4] = [np.nan, np.inf, -np.inf, 1.0]
    b[:4] = [np.nan, np.inf, np.inf, np.nan]
    for x, y in ((a, b), (a[4:], b[4:]), (a[:0], b[:0]), (a.reshape(6, 10), b.reshape(6, 10))):
        _same(ptcore.isclose(_p(x), _p(y), **kw), torch.isclose(_t(x), _t(y), **kw), exact=True)
        assert ptcore.allclose(_p(x), _p(y), **kw) == torch.allclose(_t(x), _t(y), **kw)
    _same(ptcore.isclose(_p(a[:10]), _p(b[:1]), **kw), torch.isclose(_t(a[:10]), _t(b[:1]), **kw),
          exact=True)                                                    # broadcast
    with pytest.raises(RuntimeError):
        ptcore.isclose(_p(a), _p(b), rtol=-1.0)
    with pytest.raises(RuntimeError):
        ptcore.allclose(_p(a), _p(b.astype("float32" if dt == "float64" else "float64")))


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128", "int64"])
def test_mv_matmul_matrix_vector(dt):
    a = (RNG.standard_normal((6, 4)) * 3).astype(dt)
    v = (RNG.standard_normal(4) * 3).astype(dt)
    _same(ptcore.mv(_p(a), _p(v)), torch.mv(_t(a), _t(v)))
    _same(ptcore.matmul(_p(a), _p(v)), torch.matmul(_t(a), _t(v)))
    _same(ptcore.matmul(_p(a).t().contiguous().t(), _p(v)), torch.matmul(_t(a), _t(v)))
    _same(ptcore.mv(_p(a[:0]), _p(v)), torch.mv(_t(a[:0]), _t(v)))
    with pytest.raises(RuntimeError):
        ptcore.mv(_p(a), _p(v[:3]))


def test_mv_grad():
    a, v = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    x, y = _p(a).requires_grad_(), _p(v).requires_grad_()
    ptcore.matmul(x, y).sum().backward()
    xt, yt = _t(a).requires_grad_(), _t(v).requires_grad_()
    torch.matmul(xt, yt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_lerp_number_weight(dt):
    a = RNG.standard_normal((4, 5)).astype(dt)
    b = RNG.standard_normal((4, 5)).astype(dt)
    for w in (0.5, 0.3, 1.7, -2.0, 0.0):
        _same(ptcore.lerp(_p(a), _p(b), w), torch.lerp(_t(a), _t(b), w), exact=True)
        _same(ptcore.lerp(_p(a), _p(b[:1]), w), torch.lerp(_t(a), _t(b[:1]), w), exact=True)
        _same(ptcore.lerp(_p(a).t(), _p(b).t(), w), torch.lerp(_t(a).t(), _t(b).t(), w),
              exact=True)
    with pytest.raises(RuntimeError):
        ptcore.lerp(_p(a), _p(b[:, :2]), 0.5)
    x = _p(a).requires_grad_()
    ptcore.lerp(x, _p(b), 0.25).sum().backward()
    xt = _t(a).requires_grad_()
    torch.lerp(xt, _t(b), 0.25).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


# ---------------------------------------------------------------------------
# the C fast paths of round 2 (dot/vdot, trace, searchsorted/bucketize,
# rand/randn, rfft) and the C test autograd's bodies make on every call
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_dot_vdot_strides_and_conj(dt):
    a = (RNG.standard_normal(40) + (1j * RNG.standard_normal(40) if "complex" in dt else 0)
         ).astype(dt)
    b = (RNG.standard_normal(40) + (1j * RNG.standard_normal(40) if "complex" in dt else 0)
         ).astype(dt)
    pa, pb, ta, tb = _p(a), _p(b), _t(a), _t(b)
    for f in ("dot", "vdot"):
        pf, tf = getattr(ptcore, f), getattr(torch, f)
        _same(pf(pa[::2], pb[1::2]), tf(ta[::2], tb[1::2]))         # strided
        _same(pf(pa[:1], pb[:1]), tf(ta[:1], tb[:1]))
        _same(pf(pa[:0], pb[:0]), tf(ta[:0], tb[:0]))
        _same(pf(pa[:1].expand(5), pb[:5]), tf(ta[:1].expand(5), tb[:5]))   # stride 0
        _same(pf(pa.conj(), pb), tf(ta.conj(), tb))
        o = ptcore.empty((), dtype=pa.dtype)
        assert pf(pa, pb, out=o) is o
        _same(o, tf(ta, tb))
        with pytest.raises(RuntimeError):
            pf(pa, pb[:3])
        with pytest.raises(RuntimeError):
            pf(pa.reshape(4, 10), pb.reshape(4, 10))
        with pytest.raises(RuntimeError):
            pf(pa, _p(b.astype("complex128" if dt != "complex128" else "complex64")))
        with pytest.raises(TypeError):
            pf(pa, b)


def test_dot_grad_and_half():
    a, b = RNG.standard_normal(20), RNG.standard_normal(20)
    x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
    r, rt = ptcore.dot(x, _p(b)), torch.dot(xt, _t(b))
    assert r.grad_fn is not None
    r.backward()
    rt.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    with ptcore.no_grad():
        assert ptcore.dot(x, _p(b)).grad_fn is None
    h = a.astype("float16")
    _same(ptcore.dot(_p(h), _p(h)), torch.dot(_t(h), _t(h)))


def test_trace_grad_and_dtypes():
    a = RNG.standard_normal((4, 6))
    x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
    ptcore.trace(x).backward()
    torch.trace(xt).backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    for dt in ("float16", "int8", "complex64"):
        _same(ptcore.trace(_p(a.astype(dt))), torch.trace(_t(a.astype(dt))))
    for bad in (_p(a > 0), _p(a)[0], _p(a).reshape(2, 3, 4)):
        with pytest.raises((RuntimeError, NotImplementedError)) as e:
            ptcore.trace(bad)
        with pytest.raises(e.type):
            torch.trace(torch.from_numpy(bad.numpy()))


def test_searchsorted_bucketize_general_cases():
    e = np.sort(RNG.standard_normal(9)).astype("float32")
    v = RNG.standard_normal((3, 4)).astype("float32")
    pe, pv, te, tv = _p(e), _p(v), _t(e), _t(v)
    cases = [((pe, pv.t()), (te, tv.t()), {}),                 # non-contiguous values
             ((pe[::2], pv), (te[::2], tv), {}),               # strided sequence
             ((pe, pv[:0]), (te, tv[:0]), {}),                 # empty values
             ((pe, pv.double()), (te, tv.double()), {}),       # promoted
             ((pe, pv), (te, tv), {"side": "right"}),
             ((pe.requires_grad_(), pv), (te, tv), {})]
    for pa, ta, kw in cases:
        _same(ptcore.searchsorted(*pa, **kw), torch.searchsorted(*ta, **kw), exact=True)
    _same(ptcore.bucketize(pv.t(), pe, right=True), torch.bucketize(tv.t(), te, right=True),
          exact=True)
    _same(ptcore.searchsorted(pe, 0.5), torch.searchsorted(te, 0.5), exact=True)
    o = ptcore.empty(3, 4, dtype=ptcore.int64)
    assert ptcore.searchsorted(pe, pv, out=o) is o
    _same(o, torch.searchsorted(te, tv), exact=True)
    assert ptcore.bucketize(pv, pe, out=o) is o
    with pytest.raises(RuntimeError):
        ptcore.searchsorted(pe, pv, out_int32=True, out=o)
    with pytest.raises(RuntimeError):
        ptcore.bucketize(pv, _p(np.sort(v, 1)))
    with pytest.raises(TypeError):
        ptcore.searchsorted(e, pv)
    with pytest.raises(TypeError):        # a flag that is no bool: torch's TypeError
        ptcore.searchsorted(pe, pv, out_int32=1)


def test_rand_randn_default_dtype_and_stream():
    old = ptcore.get_default_dtype()
    try:
        ptcore.set_default_dtype(ptcore.float64)
        for f in (ptcore.rand, ptcore.randn):
            ptcore.manual_seed(3)
            x = f(2, 3)
            y = f(4)
            ptcore.manual_seed(3)
            x2 = f(2, 3, generator=ptcore.default_generator)
            y2 = f(4, generator=ptcore.default_generator)
            assert x.dtype is ptcore.float64
            np.testing.assert_array_equal(x.numpy(), x2.numpy())
            np.testing.assert_array_equal(y.numpy(), y2.numpy())
    finally:
        ptcore.set_default_dtype(old)
    assert ptcore.randn(*([1] * 10)).shape == (1,) * 10          # more dims: general path
    assert ptcore.randn(3, dtype=ptcore.float16).dtype is ptcore.float16
    for bad in ((2 ** 62, 2 ** 62), (True,), (2.0,)):
        with pytest.raises((RuntimeError, TypeError, ValueError)) as e:
            ptcore.randn(*bad)
        with pytest.raises(e.type):
            torch.randn(*bad)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_rfft_plain_cases(dt):
    a = RNG.standard_normal((6, 9)).astype(dt)
    pa, ta = _p(a), _t(a)
    for x, y in ((pa, ta), (pa.t(), ta.t()), (pa[:, ::2], ta[:, ::2]), (pa[:, :1], ta[:, :1])):
        for d in (-1, 0, 1):
            _same(ptcore.fft.rfft(x, dim=d), torch.fft.rfft(y, dim=d))
    _same(ptcore.fft.rfft(pa[0]), torch.fft.rfft(ta[0]))
    x = pa.clone().requires_grad_()
    r = ptcore.fft.rfft(x)
    assert r.grad_fn is not None
    with ptcore.no_grad():
        _same(ptcore.fft.rfft(x), torch.fft.rfft(ta))
    _same(ptcore.fft.rfft(_p((a * 3).astype("int32"))), torch.fft.rfft(_t((a * 3).astype("int32"))))
    for bad in ((pa[:, :0], {}), (pa, {"dim": 2}), (ptcore.tensor(1.0), {})):
        with pytest.raises((RuntimeError, IndexError)) as e:
            ptcore.fft.rfft(bad[0], **bad[1])
        with pytest.raises(e.type):
            torch.fft.rfft(torch.from_numpy(bad[0].numpy()), **bad[1])


def test_args_require_grad_c_test():
    from ptcore._tensor import _args_require_grad
    x, y = ptcore.ones(2), ptcore.ones(2).requires_grad_()
    assert not _args_require_grad((x, 1, [x], ptcore.Size([2])), {"a": x, "b": (x,)})
    assert _args_require_grad((x, [x, y]), {})
    assert _args_require_grad((x,), {"tensors": [y]})
    assert _args_require_grad((ptcore.aminmax(y),), {})     # a named tuple of tensors
    assert not _args_require_grad((), None)
    z = ptcore.cat([x, y])
    assert z.grad_fn is not None
    with ptcore.no_grad():
        assert ptcore.cat([x, y]).grad_fn is None


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_cdist_direct_kernel_matches_general_path(dt):
    from ptcore._ops.kernels._reduce import cdist2_small
    for P_, R_, M_ in ((1, 1, 1), (10, 10, 10), (3, 25, 17), (25, 2, 40), (7, 5, 300)):
        a = RNG.standard_normal((P_, M_)).astype(dt)
        b = RNG.standard_normal((R_, M_)).astype(dt)
        x = cdist2_small(_p(a), _p(b))
        y = ptcore.linalg.vector_norm(_p(a).unsqueeze(-2) - _p(b).unsqueeze(-3), 2, dim=-1)
        np.testing.assert_array_equal(x.numpy(), y.numpy())         # bit for bit
        _same(ptcore.cdist(_p(a), _p(b)), torch.cdist(_t(a), _t(b)))
        _same(ptcore.cdist(_p(a), _p(b), 2, "donot_use_mm_for_euclid_dist"),
              torch.cdist(_t(a), _t(b), 2, "donot_use_mm_for_euclid_dist"))
    assert cdist2_small(_p(a), _p(b).t()) is None            # not contiguous
    assert cdist2_small(_p(RNG.standard_normal((26, 3))), _p(RNG.standard_normal((2, 3)))) is None


def test_cdist_general_cases():
    a, b = RNG.standard_normal((6, 4)), RNG.standard_normal((30, 4))
    for x, y in (((a, b)), ((b, a)), ((a[:, :0], b[:, :0])), ((a, a[::2]))):
        _same(ptcore.cdist(_p(x), _p(y)), torch.cdist(_t(x), _t(y)))
        _same(ptcore.cdist(_p(x), _p(y), 2, "use_mm_for_euclid_dist"),
              torch.cdist(_t(x), _t(y), 2, "use_mm_for_euclid_dist"))
    _same(ptcore.cdist(_p(a).t(), _p(a).t()), torch.cdist(_t(a).t(), _t(a).t()))
    a3, b3 = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 4, 3))
    _same(ptcore.cdist(_p(a3), _p(b3)), torch.cdist(_t(a3), _t(b3)))
    _same(ptcore.cdist(_p(a), _p(a[:3]), 2), torch.cdist(_t(a), _t(a[:3]), 2))
    with pytest.raises(ValueError):
        ptcore.cdist(_p(a), _p(a), 2, "nope")
    with pytest.raises(RuntimeError):
        ptcore.cdist(_p(a), _p(a.astype("float32")))
    with pytest.raises(RuntimeError):
        ptcore.cdist(_p(a), _p(a[:, :3]))
    x = _p(a).requires_grad_()
    ptcore.cdist(x, _p(a[:3])).sum().backward()
    xt = _t(a).requires_grad_()
    torch.cdist(xt, _t(a[:3])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_softmax_fast_cases(dt):
    a = RNG.standard_normal((4, 6)).astype(dt) * 5
    for name in ("softmax", "log_softmax"):
        pf, tf = getattr(ptcore, name), getattr(torch, name)
        for x, y in ((_p(a), _t(a)), (_p(a).t(), _t(a).t()), (_p(a)[:, ::2], _t(a)[:, ::2])):
            for d in (0, 1, -1):
                _same(pf(x, d), tf(y, d))
        _same(pf(_p(a[0]), 0), tf(_t(a[0]), 0))
        _same(pf(_p(a[:0]), 1), tf(_t(a[:0]), 1))                           # empty
        _same(pf(_p(a), 1, dtype=ptcore.float64), tf(_t(a), 1, dtype=torch.float64))
        h, ht = pf(_p(a.astype("float16")), 1), tf(_t(a.astype("float16")), 1)   # general path
        assert h.dtype is ptcore.float16
        np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=2e-2, atol=1e-3)
        o = ptcore.empty(4, 6, dtype=_p(a).dtype)
        assert pf(_p(a), 1, out=o) is o
        _same(o, tf(_t(a), 1))
        for bad in ((_p(a), 2), (_p(a.astype("int64")), 0)):
            with pytest.raises((IndexError, RuntimeError, NotImplementedError)) as e:
                pf(*bad)
            with pytest.raises(e.type):
                tf(torch.from_numpy(bad[0].numpy()), bad[1])
        x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
        (pf(x, 1) * _p(a)).sum().backward()
        (tf(xt, 1) * _t(a)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("B,K", [(1, 1), (64, 16), (5, 100), (3, 399), (2, 400), (0, 4)])
def test_bmm_batched_dot_is_torchs(dt, B, K):
    # (B, 1, K) @ (B, K, 1): torch sums fewer than 400 terms in its own loop; the
    # same sums, bit for bit, in bmm, matmul and baddbmm
    a = RNG.standard_normal((B, 1, K)).astype(dt)
    b = RNG.standard_normal((B, K, 1)).astype(dt)
    c = RNG.standard_normal((B, 1, 1)).astype(dt)
    ex = K < 400        # (from 400 on both call BLAS, whose sums may round otherwise)

    def same(x, y):
        if ex:
            _same(x, y, exact=True)
        else:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-4, atol=1e-4)
    same(ptcore.bmm(_p(a), _p(b)), torch.bmm(_t(a), _t(b)))
    same(ptcore.matmul(_p(a), _p(b)), torch.matmul(_t(a), _t(b)))
    same(ptcore.baddbmm(_p(c), _p(a), _p(b), beta=0.5, alpha=2),
         torch.baddbmm(_t(c), _t(a), _t(b), beta=0.5, alpha=2))
    at = np.ascontiguousarray(a.transpose(0, 2, 1))
    same(ptcore.bmm(_p(at).transpose(1, 2), _p(b)), torch.bmm(_t(at).transpose(1, 2), _t(b)))


def test_bmm_fast_general_cases():
    a = RNG.standard_normal((3, 4, 5)).astype("float32")
    b = RNG.standard_normal((3, 5, 2)).astype("float32")
    pa, pb, ta, tb = _p(a), _p(b), _t(a), _t(b)
    _same(ptcore.bmm(pa, pb), torch.bmm(ta, tb))
    _same(ptcore.bmm(pa[:, ::2], pb), torch.bmm(ta[:, ::2], tb))               # strided rows
    _same(ptcore.bmm(pa[:1].expand(3, 4, 5), pb), torch.bmm(ta[:1].expand(3, 4, 5), tb))
    _same(ptcore.bmm(pa[:, :, :0], pb[:, :0]), torch.bmm(ta[:, :, :0], tb[:, :0]))
    for dt in ("complex64", "int64", "float16"):
        _same(ptcore.bmm(_p(a.astype(dt)), _p(b.astype(dt))),
              torch.bmm(_t(a.astype(dt)), _t(b.astype(dt))))
    o = ptcore.empty(3, 4, 2)
    assert ptcore.bmm(pa, pb, out=o) is o
    _same(o, torch.bmm(ta, tb))
    for x, y in ((pa, pa), (pa, pb.double()), (pa[0], pb[0]), (pa, pb[:2])):
        with pytest.raises(RuntimeError):
            ptcore.bmm(x, y)
    x, xt = pa.clone().requires_grad_(), ta.clone().requires_grad_()
    ptcore.bmm(x, pb).sum().backward()
    torch.bmm(xt, tb).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_tensordot_plans_repeat_and_vary():
    # the plan cache: repeated calls with other strides, dtypes, grads and the
    # errors of the general path every time
    a = RNG.standard_normal((4, 5, 6))
    b = RNG.standard_normal((5, 6, 7))
    for dims in (2, ([1, 2], [0, 1]), ([1], [0]), ((-1,), (1,)), 0):
        for _ in range(2):
            for x, y in ((a, b), (a.astype("float32"), b.astype("float32"))):
                bb = y if dims != ((-1,), (1,)) else y[:, :, :6]
                _same(ptcore.tensordot(_p(x), _p(bb), dims=dims),
                      torch.tensordot(_t(x), _t(bb), dims=dims))
            pt = _p(np.ascontiguousarray(a.transpose(2, 1, 0))).permute(2, 1, 0)   # other strides
            if dims in (2, ([1], [0])):
                _same(ptcore.tensordot(pt, _p(b), dims=dims),
                      torch.tensordot(_t(a), _t(b), dims=dims))
    _same(ptcore.tensordot(_p(a), _p(b), dims=ptcore.tensor(2)),
          torch.tensordot(_t(a), _t(b), dims=torch.tensor(2)))
    _same(ptcore.tensordot(_p(a[:, :1]), _p(b), dims=([1], [0])),       # a size-1 pair
          torch.tensordot(_t(a[:, :1]), _t(b), dims=([1], [0])))
    o = ptcore.empty(4, 7, dtype=ptcore.float64)
    for _ in range(2):
        assert ptcore.tensordot(_p(a), _p(b), dims=2, out=o) is o
        _same(o, torch.tensordot(_t(a), _t(b), dims=2))
        for bad in (dict(dims=3), dict(dims=([0], [0])), dict(dims=-1)):
            with pytest.raises(RuntimeError):
                ptcore.tensordot(_p(a), _p(b), **bad)
        with pytest.raises(RuntimeError):
            ptcore.tensordot(_p(a), _p(b.astype("float32")), dims=2)
        with pytest.raises(NotImplementedError):
            ptcore.tensordot(_p(a > 0), _p(b > 0), dims=2)
        x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
        ptcore.tensordot(x, _p(b), dims=2).sum().backward()
        torch.tensordot(xt, _t(b), dims=2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_det_fast_matches_general_path(dt):
    from ptcore.linalg import _factor
    for n in (1, 2, 3, 10, 33):
        a = RNG.standard_normal((n, n)).astype(dt)
        if n > 2:
            s = a.copy()
            s[1] = s[0]                     # singular
        for m in (a, s) if n > 2 else (a,):
            x = ptcore.linalg.det(_p(m))
            d, batch = _factor._det_parts(_p(m), "linalg.det")
            np.testing.assert_array_equal(x.numpy(), d.prod(-1).reshape(batch).numpy())
            assert x.dtype is _p(m).dtype and x.shape == ()
        np.testing.assert_allclose(ptcore.linalg.det(_p(a)).numpy(),
                                   torch.linalg.det(_t(a)).numpy(), rtol=1e-4)
    a = RNG.standard_normal((4, 4)).astype(dt)
    for x, y in ((_p(a).t(), _t(a).t()), (_p(a)[::1, :], _t(a)), (_p(a)[None], _t(a)[None]),
                 (_p(a[:0, :0]), _t(a[:0, :0])), (_p(a.astype("complex64")), _t(a.astype("complex64")))):
        np.testing.assert_allclose(ptcore.linalg.det(x).numpy(), torch.linalg.det(y).numpy(),
                                   rtol=1e-4)
    o = ptcore.empty((), dtype=_p(a).dtype)
    assert ptcore.linalg.det(_p(a), out=o) is o
    for bad in (_p(a[:3]), _p(a[0]), _p(a.astype("int64"))):
        with pytest.raises(RuntimeError):
            ptcore.linalg.det(bad)
    x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
    ptcore.linalg.det(x).backward()
    torch.linalg.det(xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_svd_fast_matches_general_path(dt):
    from ptcore.linalg import _factor
    for shape in ((1, 1), (1, 5), (5, 1), (10, 10), (3, 7), (7, 3)):
        a = RNG.standard_normal(shape).astype(dt)
        for x in (_p(a), _p(np.ascontiguousarray(a.T)).t()):
            for full in (True, False):
                r = ptcore.linalg.svd(x, full_matrices=full)
                g = _factor._svd_impl(x, "A" if full else "S", "linalg.svd")
                assert type(r).__name__ == "linalg_svd"
                for u, v in zip(r, g):
                    assert u.dtype is v.dtype and u.shape == v.shape
                    np.testing.assert_array_equal(u.numpy(), v.numpy())
                t = torch.linalg.svd(_t(a), full_matrices=full)
                np.testing.assert_allclose(r.S.numpy(), t.S.numpy(), rtol=1e-4, atol=1e-5)
                assert r.U.shape == tuple(t.U.shape) and r.Vh.shape == tuple(t.Vh.shape)
    a = RNG.standard_normal((4, 3)).astype(dt)
    for bad in (np.inf, np.nan):
        b = a.copy()
        b[1, 2] = bad
        with pytest.raises(Exception) as e:
            ptcore.linalg.svd(_p(b))
        with pytest.raises(Exception) as et:
            torch.linalg.svd(_t(b))
        assert e.type.__name__ == et.type.__name__          # (_LinAlgError)
    with pytest.raises(TypeError):
        ptcore.linalg.svd(_p(a), full_matrices=1)
    with pytest.raises(RuntimeError):
        ptcore.linalg.svd(_p(a), driver="gesvd")
    for x, y in ((_p(a)[None], _t(a)[None]), (_p(a[:0]), _t(a[:0])),
                 (_p(a.astype("complex64")), _t(a.astype("complex64")))):
        np.testing.assert_allclose(ptcore.linalg.svd(x).S.numpy(), torch.linalg.svd(y).S.numpy(),
                                   rtol=1e-4, atol=1e-5)
    x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
    ptcore.linalg.svd(x, full_matrices=False).S.sum().backward()
    torch.linalg.svd(xt, full_matrices=False).S.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_outer_kron_kernel_matches_broadcast_product(dt):
    a = (RNG.standard_normal(9) * 3).astype(dt)
    b = (RNG.standard_normal(12) * 3).astype(dt)
    a[2], b[3] = np.inf, np.nan
    pa, pb, ta, tb = _p(a), _p(b), _t(a), _t(b)
    for x, y, xt, yt in ((pa, pb, ta, tb), (pa[::2], pb[1::3], ta[::2], tb[1::3]),
                         (pa[:0], pb, ta[:0], tb), (pa[:1].expand(4), pb, ta[:1].expand(4), tb)):
        r = ptcore.outer(x, y)
        np.testing.assert_array_equal(r.numpy(), (x.unsqueeze(1) * y.unsqueeze(0)).numpy())
        _same(r, torch.outer(xt, yt), exact=True)
        _same(ptcore.kron(x, y), torch.kron(xt, yt), exact=True)
        assert r.is_contiguous()
    _same(ptcore.outer(pa, pb.double()), torch.outer(ta, tb.double()), exact=True)   # promoted
    o = ptcore.empty(9, 12, dtype=pa.dtype)
    assert ptcore.outer(pa, pb, out=o) is o
    with pytest.raises(RuntimeError):
        ptcore.outer(pa.reshape(3, 3), pb)
    x, xt = _p(a[[0, 1, 3]]).requires_grad_(), _t(a[[0, 1, 3]]).requires_grad_()
    ptcore.kron(x, _p(b[:2])).sum().backward()
    torch.kron(xt, _t(b[:2])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
def test_mv_kernel_call_matches_product_path(dt):
    from ptcore._ops import linalg as L
    for M, K in ((1, 1), (3, 1), (1, 4), (10, 10), (7, 33), (0, 3), (3, 0)):
        a = RNG.standard_normal((M, K)).astype(dt)
        b = RNG.standard_normal(K).astype(dt)
        for x in (_p(a), _p(np.ascontiguousarray(a.T)).t(), _p(np.repeat(a, 2, 1))[:, ::2]):
            for y in (_p(b), _p(np.repeat(b, 2))[::2], _p(b[:1]).expand(K) if K else _p(b)):
                for f in (ptcore.mv, ptcore.matmul):
                    r = f(x, y)
                    g = L._product(x, y.unsqueeze(1)).squeeze(1)
                    assert r.shape == g.shape and r.dtype is g.dtype
                    np.testing.assert_array_equal(r.numpy(), g.numpy())
                    _same(r, torch.mv(torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())))
    a = RNG.standard_normal((4, 3)).astype(dt)
    o = ptcore.empty(4, dtype=_p(a).dtype)
    assert ptcore.mv(_p(a), _p(a[0]), out=o) is o
    _same(o, torch.mv(_t(a), _t(a[0])))
    for x, y in ((_p(a), _p(a[:, 0])), (_p(a), _p(a[0].astype("complex128"))), (_p(a[0]), _p(a[0]))):
        with pytest.raises(RuntimeError):
            ptcore.mv(x, y)
    if dt == "float32":
        x, xt = _p(a).requires_grad_(), _t(a).requires_grad_()
        ptcore.mv(x, _p(a[0])).sum().backward()
        torch.mv(xt, _t(a[0])).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_vector_norm2_front_matches_general_path(dt):
    from ptcore._ops import reduction as R
    a = RNG.standard_normal((4, 5, 6)).astype(dt)
    for x, xt in ((_p(a), _t(a)), (_p(a).transpose(0, 2), _t(a).transpose(0, 2)),
                  (_p(a[0, 0, 0]), _t(a[0, 0, 0]))):
        for dim in ((None, (), 0, -1) if x.ndim else (None, ())):
            for kd in (False, True):
                for o in (2, 2.0):
                    r = ptcore.linalg.vector_norm(x, o, dim, kd)
                    g = R._vector_norm(x, o, dim, kd)
                    assert r.shape == g.shape and r.dtype is g.dtype
                    np.testing.assert_array_equal(r.numpy(), g.numpy())
                    _same(r, torch.linalg.vector_norm(xt, o, dim, kd))
    x, xt = _p(a), _t(a)
    for kw in (dict(ord=3), dict(ord=float("inf")), dict(dim=(0, 1)), dict(dtype=ptcore.float64)):
        kwt = {k: (torch.float64 if v is ptcore.float64 else v) for k, v in kw.items()}
        _same(ptcore.linalg.vector_norm(x, **kw), torch.linalg.vector_norm(xt, **kwt))
    _same(ptcore.linalg.vector_norm(x[:0]), torch.linalg.vector_norm(xt[:0]))
    for bad in (dict(dim=3), dict(keepdim=1)):
        with pytest.raises((IndexError, TypeError)) as e:
            ptcore.linalg.vector_norm(x, **bad)
        with pytest.raises(e.type):
            torch.linalg.vector_norm(xt, **bad)
    with pytest.raises(RuntimeError):
        ptcore.linalg.vector_norm(_p(a.astype("int64")))
    o = ptcore.empty((), dtype=x.dtype)
    assert ptcore.linalg.vector_norm(x, out=o) is o
    xg, xgt = _p(a).requires_grad_(), _t(a).requires_grad_()
    ptcore.linalg.vector_norm(xg, dim=1).sum().backward()
    torch.linalg.vector_norm(xgt, dim=1).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xgt.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
def test_rand_like_c_draw_strides_and_stream(fn):
    f = getattr(ptcore, fn)
    x = ptcore.zeros(2, 3)
    for src in (x, x.unsqueeze(1), x.reshape(2, 1, 3), ptcore.zeros(4, 1, 1, 1), x[:1], x.t(),
                ptcore.zeros(3, 1).t(), ptcore.zeros(0, 3), ptcore.zeros(()), x.double()):
        ptcore.manual_seed(1)
        a, a2 = f(src), f(src)
        ptcore.manual_seed(1)
        g = ptcore.default_generator
        b, b2 = f(src, generator=g), f(src, generator=g)      # the general path
        assert a.dtype is b.dtype and a.shape == b.shape and a.stride() == b.stride()
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(a2.numpy(), b2.numpy())
        t = getattr(torch, fn)(torch.from_numpy(src.numpy()) if src.ndim else torch.zeros(()))
        assert a.stride() == t.stride() or src.numel() == 0
    assert f(x, requires_grad=True).requires_grad
    assert f(x, dtype=ptcore.float64).dtype is ptcore.float64
    with pytest.raises(NotImplementedError):
        f(ptcore.zeros(3, dtype=ptcore.int64))
