"""ptcore.fft against torch.fft: values, dtypes, shapes, n/s/dim/norm,
out=, errors, and gradients (first and second order, complex inputs,
padding and trimming, the Hermitian transforms)."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

C2C = ["fft", "ifft"]
C2C_N = ["fft2", "ifft2", "fftn", "ifftn"]
C2R = ["irfft", "hfft"]
C2R_N = ["irfft2", "hfft2", "irfftn", "hfftn"]
R2C = ["rfft", "ihfft"]
R2C_N = ["rfft2", "ihfft2", "rfftn", "ihfftn"]
ONE_D = C2C + C2R + R2C
ALL = C2C + C2C_N + C2R + C2R_N + R2C + R2C_N
REAL_ONLY = set(R2C + R2C_N)
NORMS = [None, "backward", "ortho", "forward"]

rng = np.random.default_rng(1234)


def _data(shape, dtype):
    if dtype in ("complex64", "complex128"):
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dtype in ("int64", "int32"):
        a = rng.integers(-5, 6, shape)
    elif dtype == "bool":
        a = rng.integers(0, 2, shape).astype(bool)
    else:
        a = rng.standard_normal(shape)
    return a.astype(dtype)


def _np(t):
    return t.detach().resolve_conj().numpy()


def _tol(dtype):
    return (2e-5, 1e-5) if dtype in ("float32", "complex64", "int64", "bool") else (1e-10, 1e-12)


def _check(p, t, dtype):
    assert tuple(p.shape) == tuple(t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    rtol, atol = _tol(dtype)
    scale = max(1.0, float(np.abs(_np(t)).max()) if t.numel() else 1.0)
    np.testing.assert_allclose(_np(p), _np(t), rtol=rtol, atol=atol * scale)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64", "bool"])
@pytest.mark.parametrize("norm", NORMS)
def test_values_and_dtypes(name, dtype, norm):
    if name in REAL_ONLY and dtype.startswith("complex"):
        pytest.skip("real-input transform")
    a = _data((3, 4, 6), dtype)
    p = getattr(ptcore.fft, name)(ptcore.from_numpy(a.copy()), norm=norm)
    t = getattr(torch.fft, name)(torch.from_numpy(a.copy()), norm=norm)
    _check(p, t, dtype)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n", [1, 3, 4, 7, 12])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_1d_n_and_dim(name, n, dim):
    dtype = "float64" if name in REAL_ONLY else "complex128"
    a = _data((5, 6), dtype)
    p = getattr(ptcore.fft, name)(ptcore.from_numpy(a.copy()), n=n, dim=dim, norm="ortho")
    t = getattr(torch.fft, name)(torch.from_numpy(a.copy()), n=n, dim=dim, norm="ortho")
    _check(p, t, dtype)


@pytest.mark.parametrize("name", C2C_N + C2R_N + R2C_N)
@pytest.mark.parametrize("s,dim", [(None, None), ((3, 5), None), ((-1, 9), None), (None, (0, 2)),
                                   ((2, 3), (2, 0)), ((4,), (1,)), ((2, 3, 8), None),
                                   (None, (-1,))])
def test_nd_s_and_dim(name, s, dim):
    if name.endswith("2") and (dim is None) and s is not None and len(s) != 2:
        pytest.skip("2-D transform over the default two dims")
    dtype = "float64" if name in REAL_ONLY else "complex128"
    a = _data((4, 5, 6), dtype)
    kw = {"s": s}
    if dim is not None:
        kw["dim"] = dim
    p = getattr(ptcore.fft, name)(ptcore.from_numpy(a.copy()), **kw)
    t = getattr(torch.fft, name)(torch.from_numpy(a.copy()), **kw)
    _check(p, t, dtype)


def test_noncontiguous_and_views():
    a = _data((6, 8), "complex64")
    tp = ptcore.from_numpy(a.copy()).t()
    tt = torch.from_numpy(a.copy()).t()
    _check(ptcore.fft.fft(tp), torch.fft.fft(tt), "complex64")
    _check(ptcore.fft.rfft(ptcore.from_numpy(a.real.copy())[:, ::2]),
           torch.fft.rfft(torch.from_numpy(a.real.copy())[:, ::2]), "float32")
    # a conjugated (lazily) input is read as its conjugate
    _check(ptcore.fft.fft(ptcore.from_numpy(a.copy()).conj()),
           torch.fft.fft(torch.from_numpy(a.copy()).conj()), "complex64")


def test_fftn_no_dims_and_scalar():
    a = _data((2, 3), "float32")
    _check(ptcore.fft.fftn(ptcore.from_numpy(a), dim=()), torch.fft.fftn(torch.from_numpy(a), dim=()),
           "float32")
    _check(ptcore.fft.fftn(ptcore.tensor(2.0)), torch.fft.fftn(torch.tensor(2.0)), "float32")


def test_thread_count_does_not_change_results():
    a = _data((64, 64), "float64")
    ref = ptcore.fft.fft2(ptcore.from_numpy(a))
    n = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(2)
        again = ptcore.fft.fft2(ptcore.from_numpy(a))
    finally:
        ptcore.set_num_threads(n)
    np.testing.assert_allclose(_np(ref), _np(again), rtol=1e-12)


def test_round_trips():
    x = ptcore.from_numpy(_data((4, 10), "float64"))
    np.testing.assert_allclose(_np(ptcore.fft.irfft(ptcore.fft.rfft(x), n=10)), _np(x), atol=1e-12)
    np.testing.assert_allclose(_np(ptcore.fft.irfftn(ptcore.fft.rfftn(x), s=(4, 10))), _np(x),
                               atol=1e-12)
    np.testing.assert_allclose(_np(ptcore.fft.hfft(ptcore.fft.ihfft(x), n=10)), _np(x), atol=1e-12)
    c = ptcore.from_numpy(_data((4, 10), "complex128"))
    np.testing.assert_allclose(_np(ptcore.fft.ifftn(ptcore.fft.fftn(c, norm="ortho"), norm="ortho")),
                               _np(c), atol=1e-12)


# ---------------------------------------------------------------------------
# out=
# ---------------------------------------------------------------------------

def test_out():
    a = _data((8,), "float32")
    out = ptcore.empty(8, dtype=ptcore.complex128)
    r = ptcore.fft.fft(ptcore.from_numpy(a), out=out)
    assert r is out and out.dtype is ptcore.complex128
    # computed in complex64, stored in the complex128 out (torch computes in the
    # out's precision: the two agree to float32 rounding)
    _check(out, torch.fft.fft(torch.from_numpy(a).double()), "complex64")
    out = ptcore.empty(0, dtype=ptcore.float32)
    ptcore.fft.irfft(ptcore.from_numpy(_data((5,), "complex64")), out=out)
    assert tuple(out.shape) == (8,)
    with pytest.warns(UserWarning, match="resized"):
        ptcore.fft.rfft(ptcore.from_numpy(a), out=ptcore.empty(3, dtype=ptcore.complex64))
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got Float"):
        ptcore.fft.fft(ptcore.from_numpy(a), out=ptcore.empty(8))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor"):
        ptcore.fft.irfft(ptcore.from_numpy(a), out=ptcore.empty(14, dtype=ptcore.complex64))
    x = ptcore.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        ptcore.fft.fft(x, out=ptcore.empty(4, dtype=ptcore.complex64))


# ---------------------------------------------------------------------------
# errors (type and message as torch)
# ---------------------------------------------------------------------------

ERRORS = [
    ("fft", lambda L: (L.randn(8).half(),), {}),
    ("fft", lambda L: (L.randn(8).bfloat16(),), {}),
    ("rfft", lambda L: (L.randn(8, dtype=L.complex64),), {}),
    ("ihfft", lambda L: (L.randn(8, dtype=L.complex64),), {}),
    ("rfftn", lambda L: (L.randn(2, 3, dtype=L.complex64),), {}),
    ("fft", lambda L: (L.randn(8),), {"n": 0}),
    ("fft", lambda L: (L.randn(8),), {"dim": 1}),
    ("fft", lambda L: (L.tensor(1.0),), {}),
    ("fft", lambda L: (L.randn(8),), {"norm": "foo"}),
    ("fft2", lambda L: (L.randn(3),), {}),
    ("fftn", lambda L: (L.randn(8),), {"s": (2, 3)}),
    ("fftn", lambda L: (L.randn(2, 3),), {"dim": (0, 0)}),
    ("fftn", lambda L: (L.randn(2, 3),), {"s": (2, 3), "dim": (0,)}),
    ("irfft", lambda L: (L.randn(8),), {"n": 0}),
    ("irfft", lambda L: (L.randn(1),), {}),
    ("rfftn", lambda L: (L.randn(2, 3),), {"dim": ()}),
    ("irfftn", lambda L: (L.randn(2, 3),), {"dim": ()}),
    ("ihfftn", lambda L: (L.randn(2, 3),), {"dim": ()}),
    ("fft", lambda L: ([1.0, 2.0],), {}),
]


@pytest.mark.parametrize("name,make,kw", ERRORS)
def test_errors(name, make, kw):
    with pytest.raises(Exception) as et:
        getattr(torch.fft, name)(*make(torch), **kw)
    with pytest.raises(type(et.value)) as ep:
        getattr(ptcore.fft, name)(*make(ptcore), **kw)
    if not isinstance(et.value, TypeError):
        assert str(ep.value).split(":")[0].replace("c10::", "") == \
            str(et.value).split(":")[0] or str(et.value)[:25] == str(ep.value)[:25]


# ---------------------------------------------------------------------------
# frequencies and shifts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.3])
@pytest.mark.parametrize("dtype", [None, "float64", "float16"])
def test_fftfreq(n, d, dtype):
    kw_p = {} if dtype is None else {"dtype": getattr(ptcore, dtype)}
    kw_t = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    _check(ptcore.fft.fftfreq(n, d, **kw_p), torch.fft.fftfreq(n, d, **kw_t), dtype or "float32")
    _check(ptcore.fft.rfftfreq(n, d, **kw_p), torch.fft.rfftfreq(n, d, **kw_t), dtype or "float32")


def test_fftfreq_errors_and_grad_flag():
    # torch 2.13's fftfreq has no complex arange kernel on CPU: same error class
    with pytest.raises(NotImplementedError):
        torch.fft.fftfreq(4, dtype=torch.complex64)
    with pytest.raises(NotImplementedError):
        ptcore.fft.fftfreq(4, dtype=ptcore.complex64)
    with pytest.raises(RuntimeError, match="fftfreq requires a floating point or complex dtype"):
        ptcore.fft.fftfreq(4, dtype=ptcore.int64)
    with pytest.raises(RuntimeError, match="negative dimension"):
        ptcore.fft.fftfreq(-1)
    assert ptcore.fft.fftfreq(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shift_of_no_dims_raises_as_torch(fn):
    with pytest.raises(RuntimeError, match="shifts"):
        getattr(torch.fft, fn)(torch.ones(2, 3), dim=())
    with pytest.raises(RuntimeError, match="shifts"):
        getattr(ptcore.fft, fn)(ptcore.ones(2, 3), dim=())


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,), (1, 0)])
@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shifts(fn, dim):
    a = np.arange(35).reshape(5, 7)
    p = getattr(ptcore.fft, fn)(ptcore.from_numpy(a), dim=dim)
    t = getattr(torch.fft, fn)(torch.from_numpy(a), dim=dim)
    assert p.tolist() == t.tolist() and p.dtype is ptcore.int64


def test_shift_grad():
    x = ptcore.arange(6.0, requires_grad=True)
    (ptcore.fft.fftshift(x) * ptcore.arange(6.0)).sum().backward()
    xt = torch.arange(6.0, requires_grad=True)
    (torch.fft.fftshift(xt) * torch.arange(6.0)).sum().backward()
    assert x.grad.tolist() == xt.grad.tolist()


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------

def _grad_pair(name, a, kw, create_graph=False):
    xt = torch.from_numpy(a.copy()).requires_grad_()
    xp = ptcore.from_numpy(a.copy()).requires_grad_()
    yt = getattr(torch.fft, name)(xt, **kw)
    yp = getattr(ptcore.fft, name)(xp, **kw)
    w = rng.standard_normal(tuple(yt.shape))
    if yt.is_complex():
        w = w + 1j * rng.standard_normal(tuple(yt.shape))
    lt = (yt * torch.from_numpy(w)).real.pow(2).sum() if create_graph else \
        (yt * torch.from_numpy(w)).real.sum()
    lp = (yp * ptcore.from_numpy(w)).real.pow(2).sum() if create_graph else \
        (yp * ptcore.from_numpy(w)).real.sum()
    gt, = torch.autograd.grad(lt, xt, create_graph=create_graph)
    gp, = ptcore.autograd.grad(lp, xp, create_graph=create_graph)
    np.testing.assert_allclose(_np(gp), _np(gt), rtol=1e-9, atol=1e-10)
    return xt, xp, gt, gp


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_grad_against_torch(name, norm, dtype):
    if name in REAL_ONLY and dtype == "complex128":
        pytest.skip("real-input transform")
    _grad_pair(name, _data((4, 6), dtype), {"norm": norm})


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n", [3, 5, 6, 11])
def test_grad_with_padding_and_trimming(name, n):
    dtype = "float64" if name in REAL_ONLY else "complex128"
    _grad_pair(name, _data((3, 6), dtype), {"n": n, "norm": "ortho"})
    if name not in REAL_ONLY:   # real input through a complex transform
        _grad_pair(name, _data((3, 6), "float64"), {"n": n})


@pytest.mark.parametrize("name", C2C_N + C2R_N + R2C_N)
@pytest.mark.parametrize("s", [(3, 5), (5, 8), (2, 11)])
def test_grad_nd_with_s(name, s):
    dtype = "float64" if name in REAL_ONLY else "complex128"
    _grad_pair(name, _data((2, 4, 6), dtype), {"s": s})


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "rfftn",
                                  "irfftn", "hfftn", "ihfftn"])
def test_double_backward_against_torch(name):
    dtype = "float64" if name in REAL_ONLY else "complex128"
    xt, xp, gt, gp = _grad_pair(name, _data((3, 6), dtype), {"norm": "ortho"},
                                create_graph=True)
    v = rng.standard_normal(gt.shape)
    ggt, = torch.autograd.grad((gt.real * torch.from_numpy(v)).sum(), xt)
    ggp, = ptcore.autograd.grad((gp.real * ptcore.from_numpy(v)).sum(), xp)
    np.testing.assert_allclose(_np(ggp), _np(ggt), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name,dtype,kw", [
    ("fft", "complex128", {"n": 7}), ("ifft", "float64", {}), ("rfft", "float64", {"n": 5}),
    ("irfft", "complex128", {"n": 7}), ("hfft", "complex128", {}), ("ihfft", "float64", {}),
    ("fft2", "complex128", {"s": (3, 4)}), ("irfftn", "complex128", {}),
    ("hfft2", "complex128", {"norm": "forward"}), ("ihfftn", "float64", {"norm": "ortho"})])
def test_gradcheck(name, dtype, kw):
    # real views of complex inputs and outputs: the check perturbs real and
    # imaginary parts separately and sees both parts of the result
    a = _data((3, 4), dtype)
    f = getattr(ptcore.fft, name)

    def real_fn(t):
        if dtype.startswith("complex"):
            t = ptcore.view_as_complex(t)
        y = f(t, **kw)
        return ptcore.view_as_real(y) if y.is_complex() else y
    x = ptcore.from_numpy(np.stack([a.real, a.imag], -1).copy() if dtype.startswith("complex")
                          else a).requires_grad_()
    assert ptcore.autograd.gradcheck(real_fn, (x,))


def test_grad_through_stft_window_free_pipeline():
    # a differentiable pipeline: filter in the frequency domain, back to time
    xt = torch.randn(2, 16, dtype=torch.float64, requires_grad=True)
    xp = ptcore.from_numpy(xt.detach().numpy().copy()).requires_grad_()
    h = np.exp(-np.arange(9) / 3.0)
    yt = torch.fft.irfft(torch.fft.rfft(xt) * torch.from_numpy(h), n=16)
    yp = ptcore.fft.irfft(ptcore.fft.rfft(xp) * ptcore.from_numpy(h), n=16)
    yt.pow(2).sum().backward()
    yp.pow(2).sum().backward()
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


def test_namespace_matches_torch():
    names = {n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))}
    names -= {"Tensor"}
    missing = sorted(n for n in names if not hasattr(ptcore.fft, n))
    assert not missing, missing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import ptcore.fft as f
        assert f is ptcore.fft


def test_graph_node_names_as_torch():
    for name, dtype in [("fft", "float64"), ("fft", "complex128"), ("irfft", "complex128"),
                        ("rfftn", "float64")]:
        a = _data((4,), dtype)
        p = getattr(ptcore.fft, name)(ptcore.from_numpy(a.copy()).requires_grad_())
        t = getattr(torch.fft, name)(torch.from_numpy(a.copy()).requires_grad_())
        assert type(p.grad_fn).__name__ == type(t.grad_fn).__name__


def test_scipy_workers_follow_ptcore_threads(monkeypatch):
    import scipy.fft
    from ptcore.fft import _primitives
    seen = []

    class Spy:
        # (a 1-dim transform runs scipy's 1-D front-end, fft; others fftn)
        def __getattr__(self, name):
            return getattr(scipy.fft, name)

        @staticmethod
        def fftn(*a, **k):
            seen.append(k["workers"])
            return scipy.fft.fftn(*a, **k)

        @staticmethod
        def fft(*a, **k):
            seen.append(k["workers"])
            return scipy.fft.fft(*a, **k)
    monkeypatch.setattr(_primitives, "_scipy_fft", lambda: Spy())
    n = ptcore.get_num_threads()
    try:
        for k in (1, 2):
            ptcore.set_num_threads(k)
            ptcore.fft.fft(ptcore.randn(8, dtype=ptcore.complex64))
    finally:
        ptcore.set_num_threads(n)
    assert seen == [1, 2]


def test_primitives_record_only_what_autograd_needs():
    """The three primitives run their forward directly when nothing records
    (an input without grad, or no_grad), and through autograd.Function
    otherwise: torch's node names, forward-mode AD tangents, vmap."""
    x = ptcore.randn(4, 8)
    z = ptcore.randn(4, 8, dtype=ptcore.complex64)
    for f in (ptcore.fft.fft, ptcore.fft.rfft, ptcore.fft.irfft):
        assert f(z if f is not ptcore.fft.rfft else x).grad_fn is None
    xg = x.clone().requires_grad_()
    zg = z.clone().requires_grad_()
    assert ptcore.fft.rfft(xg).grad_fn.name() == "FftR2CBackward0"
    assert ptcore.fft.fft(zg).grad_fn.name() == "FftC2CBackward0"
    assert ptcore.fft.irfft(zg).grad_fn.name() == "FftC2RBackward0"
    with ptcore.no_grad():
        assert ptcore.fft.fft(zg).grad_fn is None and not ptcore.fft.fft(zg).requires_grad
    import ptcore.autograd.forward_ad as fwAD
    t = ptcore.randn(4, 8)
    with fwAD.dual_level():
        y = ptcore.fft.rfft(fwAD.make_dual(x, t))
        tan = fwAD.unpack_dual(y).tangent
    np.testing.assert_allclose(tan.numpy(), ptcore.fft.rfft(t).numpy(), rtol=1e-5, atol=1e-5)
    v = ptcore.func.vmap(ptcore.fft.fft)(z)
    np.testing.assert_allclose(v.numpy(), np.fft.fft(z.numpy(), axis=-1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fname", ["fft", "ifft", "fft2", "fftn", "ifft2", "ifftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("data", [[1., -5., 1., 1.], [1., 2., 3., 2.], [1., -5., 1., 1., 2.],
                                  [[1., -5., 1., 1.], [2., 0., 3., 1.], [0., 1., 0., 1.]]])
def test_real_input_signed_zeros_match_torch(fname, norm, data):
    """fft of a real signal is torch's one-sided transform with the rest
    filled by conjugate symmetry: the DC and Nyquist terms have +0.0
    imaginary parts (angle pi, not -pi, for a negative DC term)."""
    a = np.array(data, dtype=np.float32)
    if fname[-1] in "2n" and a.ndim == 1:
        a = np.stack([a, a[::-1]])
    p = getattr(ptcore.fft, fname)(ptcore.tensor(a), norm=norm)
    t = getattr(torch.fft, fname)(torch.tensor(a), norm=norm)
    np.testing.assert_allclose(_np(p), _np(t), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.signbit(_np(p).imag), np.signbit(_np(t).imag))
    # the angle where it is well defined: a DC term that is 0 in exact arithmetic
    # ([1, -5, 1, 1, 2]) is +-3e-8 in MKL's rounding on some CPUs (angle pi) and exact 0 in
    # pocketfft's, so its angle depends on the machine's MKL code path
    defined = np.abs(_np(t)) > 1e-5
    np.testing.assert_allclose(p.angle().numpy()[defined], t.angle().numpy()[defined],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_real_input_fft_gradients_match_torch(n):
    a = rng.standard_normal((3, n))
    w = rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))
    got = []
    for lib in (torch, ptcore):
        x = lib.tensor(a, requires_grad=True)
        r = lib.fft.fft(x, norm="ortho")
        loss = (r * lib.tensor(w)).real.sum() + (r.abs() ** 2 * lib.tensor(w.real)).sum()
        g, = lib.autograd.grad(loss, x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        got.append((r.grad_fn.name(), g.detach().numpy(), gg.numpy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-10, atol=1e-10)
