"""ptcore.stft / ptcore.istft (and Tensor.stft / Tensor.istft) against torch:
values, shapes, dtypes, window padding, centring and pad modes, onesided,
normalized, return_complex=False, the round trip, gradients and errors; the
window functions they are used with against torch."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)


def _np(t):
    return t.detach().resolve_conj().numpy()


def _close(p, t, rtol=1e-9, atol=1e-10):
    assert tuple(p.shape) == tuple(t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(p), _np(t), rtol=rtol, atol=atol)


def _pair(a):
    return ptcore.from_numpy(a.copy()), torch.from_numpy(a.copy())


CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=3),
    dict(n_fft=16, win_length=10, window="hann"),
    dict(n_fft=15, hop_length=5, window="hamming"),
    dict(n_fft=16, center=False, window="hann"),
    dict(n_fft=16, pad_mode="constant", window="hann"),
    dict(n_fft=16, pad_mode="replicate", window="hann"),
    dict(n_fft=16, pad_mode="circular", window="hann"),
    dict(n_fft=16, normalized=True, window="hann"),
    dict(n_fft=16, onesided=False, window="hann"),
    dict(n_fft=16, win_length=9, center=False, align_to_window=True, window="hann"),
    dict(n_fft=16, win_length=9, center=False, align_to_window=False, window="hann"),
]


def _kw(case, lib, dtype):
    kw = dict(case)
    w = kw.pop("window", None)
    if w is not None:
        n = kw.get("win_length", kw["n_fft"])
        kw["window"] = getattr(lib, f"{w}_window")(n, dtype=getattr(lib, dtype))
    return kw


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", [(64,), (3, 50)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stft_against_torch(case, shape, dtype):
    xp, xt = _pair(rng.standard_normal(shape).astype(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = ptcore.stft(xp, return_complex=True, **_kw(case, ptcore, dtype))
        t = torch.stft(xt, return_complex=True, **_kw(case, torch, dtype))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else {}
    _close(p, t, **tol)


def test_stft_complex_input_and_real_view_and_method():
    a = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype("complex128")
    xp, xt = _pair(a)
    wp, wt = ptcore.hann_window(8, dtype=ptcore.float64), torch.hann_window(8, dtype=torch.float64)
    _close(ptcore.stft(xp, 8, window=wp), torch.stft(xt, 8, window=wt, return_complex=True))
    r = rng.standard_normal(40)
    xp, xt = _pair(r)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        p = xp.stft(8, window=wp, return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = xt.stft(8, window=wt, return_complex=False)
    _close(p, t)


def test_stft_no_window_warns():
    with pytest.warns(UserWarning, match="window was not provided"):
        import ptcore.fft._stft as s
        s._warned.discard("stft_window")
        ptcore.stft(ptcore.randn(32), 8, return_complex=True)


@pytest.mark.parametrize("case", [dict(n_fft=16, window="hann"),
                                  dict(n_fft=16, hop_length=4, win_length=12, window="hann"),
                                  dict(n_fft=16, center=False, window="hamming"),
                                  dict(n_fft=16, normalized=True, window="hamming"),
                                  dict(n_fft=16, onesided=False, window="hann")])
@pytest.mark.parametrize("length", [None, 60, 64])
def test_istft_against_torch_and_round_trip(case, length):
    a = rng.standard_normal((2, 64))
    xp, xt = _pair(a)
    kp, kt = _kw(case, ptcore, "float64"), _kw(case, torch, "float64")
    Xp = ptcore.stft(xp, return_complex=True, **kp)
    Xt = torch.stft(xt, return_complex=True, **kt)
    _close(Xp, Xt)
    yp = ptcore.istft(Xp, length=length, **kp)
    yt = torch.istft(Xt, length=length, **kt)
    _close(yp, yt)
    if case.get("center", True):
        n = length or yt.shape[-1]
        np.testing.assert_allclose(_np(yp), a[:, :n], atol=1e-10)


def test_istft_return_complex():
    a = rng.standard_normal(48) + 1j * rng.standard_normal(48)
    xp, xt = _pair(a)
    wp, wt = ptcore.hann_window(12, dtype=ptcore.float64), torch.hann_window(12, dtype=torch.float64)
    Xp, Xt = ptcore.stft(xp, 12, window=wp), torch.stft(xt, 12, window=wt, return_complex=True)
    _close(ptcore.istft(Xp, 12, window=wp, return_complex=True, length=48),
           torch.istft(Xt, 12, window=wt, return_complex=True, length=48))


def test_stft_istft_gradients_against_torch():
    a = rng.standard_normal(40)
    xp, xt = _pair(a)
    xp.requires_grad_()
    xt.requires_grad_()
    wp, wt = ptcore.hann_window(8, dtype=ptcore.float64), torch.hann_window(8, dtype=torch.float64)
    wp.requires_grad_()
    wt.requires_grad_()
    Xp = ptcore.stft(xp, 8, hop_length=2, window=wp, return_complex=True)
    Xt = torch.stft(xt, 8, hop_length=2, window=wt, return_complex=True)
    lp = Xp.abs().pow(2).sum() + ptcore.istft(Xp * 0.5, 8, hop_length=2, window=wp).pow(3).sum()
    lt = Xt.abs().pow(2).sum() + torch.istft(Xt * 0.5, 8, hop_length=2, window=wt).pow(3).sum()
    lp.backward()
    lt.backward()
    np.testing.assert_allclose(_np(xp.grad), _np(xt.grad), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(_np(wp.grad), _np(wt.grad), rtol=1e-8, atol=1e-9)


def test_stft_gradcheck():
    x = ptcore.from_numpy(rng.standard_normal(20)).requires_grad_()
    w = ptcore.hann_window(6, dtype=ptcore.float64)
    assert ptcore.autograd.gradcheck(
        lambda t: ptcore.view_as_real(ptcore.stft(t, 6, hop_length=2, window=w,
                                                  return_complex=True)), (x,))


STFT_ERRORS = [
    (lambda L: (L.randn(32), 8), {}),                               # return_complex missing
    (lambda L: (L.randn(32), 64), {"return_complex": True}),        # n_fft too big
    (lambda L: (L.randn(32), 8), {"hop_length": 0, "return_complex": True}),
    (lambda L: (L.randn(32), 8), {"win_length": 9, "return_complex": True}),
    (lambda L: (L.randn(32), 8, 2, 5, L.ones(4)), {"return_complex": True}),
    (lambda L: (L.randn(2, 2, 32), 8), {"return_complex": True}),
    (lambda L: (L.arange(32), 8), {"return_complex": True, "center": False}),
    (lambda L: (L.randn(32), 8), {"align_to_window": True, "return_complex": True}),
    (lambda L: (L.randn(32, dtype=L.complex64), 8), {"onesided": True}),
]


@pytest.mark.parametrize("make,kw", STFT_ERRORS)
def test_stft_errors_as_torch(make, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            torch.stft(*make(torch), **kw)
        with pytest.raises(type(et.value)):
            ptcore.stft(*make(ptcore), **kw)


ISTFT_ERRORS = [
    (lambda L: (L.randn(9, 5), 16), {}),                                      # real input
    (lambda L: (L.randn(7, 5, dtype=L.complex64), 16), {}),                   # wrong n_freq
    (lambda L: (L.randn(9, 5, dtype=L.complex64), 16), {"hop_length": 20}),
    (lambda L: (L.randn(9, 5, dtype=L.complex64), 16, 4, 16, L.ones(3)), {}),
    (lambda L: (L.randn(9, 5, dtype=L.complex64), 16, 4, 16, L.zeros(16)), {}),
    (lambda L: (L.randn(9, 5, dtype=L.complex64), 16), {"return_complex": True}),
    # a hann window vanishes at the first sample without centring
    (lambda L: (L.randn(9, 5, dtype=L.complex64), 16, 4, 16, L.hann_window(16)),
     {"center": False}),
]


@pytest.mark.parametrize("make,kw", ISTFT_ERRORS)
def test_istft_errors_as_torch(make, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            torch.istft(*make(torch), **kw)
        with pytest.raises(type(et.value)):
            ptcore.istft(*make(ptcore), **kw)


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_against_torch(name, n, periodic, dtype):
    p = getattr(ptcore, f"{name}_window")(n, periodic, dtype=getattr(ptcore, dtype))
    t = getattr(torch, f"{name}_window")(n, periodic, dtype=getattr(torch, dtype))
    _close(p, t, rtol=1e-5, atol=1e-6)
