"""ptcore.fft on CUDA tensors (cuFFT through the driver interface; on the
emulated device scipy.fft in stream order) equals the CPU transforms:
values, dtypes, shapes, out=, non-contiguous input, and gradients."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.emulated import fft as _host_fft
from ptcore.cuda.runtime import state as _runtime

F = ptcore.fft


def _close(got, want, tol):
    assert got.device.type == "cuda"
    g = got.cpu()
    assert g.dtype == want.dtype and tuple(g.shape) == tuple(want.shape)
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=tol, atol=tol)


@pytest.fixture
def calls(monkeypatch):
    """Records every driver.fft call (kind, shape, batch, and the stride
    of an interleaved layout when not 1)."""
    drv = _runtime.lazy_init("test")
    seen = []
    orig = drv.fft

    def spy(device, stream, kind, shape, batch, idata, odata, direction=-1, stride=1):
        seen.append((kind, tuple(shape), batch) + ((stride,) if stride != 1 else ()))
        return orig(device, stream, kind, shape, batch, idata, odata, direction, stride)
    monkeypatch.setattr(drv, "fft", spy)
    return seen


def _real(shape, dtype=np.float32, seed=0):
    return ptcore.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _cplx(shape, dtype=np.float32, seed=0):
    return ptcore.complex(_real(shape, dtype, seed), _real(shape, dtype, seed + 1))


TOL = {np.float32: 2e-5, np.float64: 1e-12}

CASES = [
    ("fft", "c", (5, 16), {}),
    ("fft", "r", (4, 9), {"n": 12, "dim": 0}),
    ("ifft", "c", (3, 7), {"norm": "ortho"}),
    ("fft2", "c", (2, 6, 8), {"norm": "forward"}),
    ("ifft2", "c", (2, 6, 8), {"s": (4, 10)}),
    ("fftn", "c", (2, 3, 4, 5), {}),                 # 4 dims: two cuFFT plans
    ("ifftn", "c", (3, 4, 6), {"dim": (0, 2)}),
    ("rfft", "r", (4, 10), {}),
    ("rfft", "r", (4, 11), {"norm": "ortho"}),
    ("irfft", "c", (4, 6), {}),
    ("irfft", "c", (4, 6), {"n": 7}),
    ("rfft2", "r", (3, 8, 6), {}),
    ("irfft2", "c", (3, 8, 4), {"s": (8, 6)}),
    ("rfftn", "r", (2, 3, 4, 6), {}),                # R2C on 3 dims + a C2C pass
    ("irfftn", "c", (2, 3, 4, 4), {"s": (2, 3, 4, 6)}),
    ("hfft", "c", (3, 5), {}),
    ("ihfft", "r", (3, 8), {}),
    ("hfft2", "c", (4, 5), {}),
    ("ihfft2", "r", (4, 6), {"norm": "forward"}),
    ("hfftn", "c", (2, 3, 5), {}),
    ("ihfftn", "r", (2, 4, 6), {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["single", "double"])
@pytest.mark.parametrize("fname,kind,shape,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_transform_matches_cpu(fname, kind, shape, kw, dtype, calls):
    x = _cplx(shape, dtype) if kind == "c" else _real(shape, dtype)
    fn = getattr(F, fname)
    _close(fn(x.cuda(), **kw), fn(x, **kw), TOL[dtype])
    assert calls, "the transform did not go through the driver's FFT"
    single = dtype == np.float32
    assert all((c[0] in ("C2C", "R2C", "C2R")) == single for c in calls)


def test_non_contiguous_and_offset_input():
    x = _cplx((6, 10))
    v = x.t()[2:, 1:]                       # transposed, offset view
    _close(F.fft(x.cuda().t()[2:, 1:], dim=0), F.fft(v, dim=0), 2e-5)
    r = _real((8, 12))
    _close(F.rfft2(r.cuda()[:, ::2]), F.rfft2(r[:, ::2]), 2e-5)


def test_integer_input_promotes_and_out():
    x = ptcore.arange(12).reshape(3, 4)
    _close(F.fft(x.cuda()), F.fft(x), 1e-5)
    out = ptcore.empty(3, 3, dtype=ptcore.complex64, device="cuda")   # (device resize_ cannot grow)
    r = F.rfft(x.float().cuda(), out=out)
    assert r is out
    _close(out, F.rfft(x.float()), 1e-5)


def test_empty_batch_and_errors():
    x = ptcore.zeros(0, 8, device="cuda")
    r = F.rfft(x)
    assert tuple(r.shape) == (0, 5) and r.device.type == "cuda"
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        F.fft(ptcore.ones(4, device="cuda"), n=0)
    with pytest.raises(RuntimeError, match="expects a real input"):
        F.rfft(ptcore.ones(4, dtype=ptcore.complex64, device="cuda"))
    with pytest.raises(RuntimeError):
        F.fft(ptcore.ones(4, dtype=ptcore.float16, device="cuda"))


@pytest.mark.parametrize("fname,kind,kw", [
    ("fft", "c", {"n": 10}), ("rfft", "r", {"n": 12}), ("irfft", "c", {"n": 9}),
    ("fft2", "r", {}), ("rfftn", "r", {"norm": "ortho"}), ("irfft2", "c", {}),
    ("hfft", "c", {}), ("ihfft", "r", {"n": 10}),
])
def test_gradients_match_cpu(fname, kind, kw):
    base = _cplx((3, 8), np.float64) if kind == "c" else _real((3, 8), np.float64)
    w = _real((3, 16), np.float64, seed=5)
    fn = getattr(F, fname)

    def loss(x):
        y = fn(x, **kw)
        if y.is_complex():
            y = ptcore.view_as_real(y).sum(-1)
        ww = w[:, :y.shape[-1]].to(y.device) if y.dim() == 2 else w.to(y.device)
        return (y * ww[:y.shape[0], :y.shape[-1]]).sum()

    xc = base.clone().requires_grad_()
    loss(xc).backward()
    xd = base.cuda().requires_grad_()
    loss(xd).backward()
    assert xd.grad is not None and xd.grad.device.type == "cuda"
    np.testing.assert_allclose(xd.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_runs_in_stream_order():
    s = ptcore.cuda.Stream()
    x = _cplx((4, 32))
    with ptcore.cuda.stream(s):
        xd = x.cuda()
        y = F.fft(xd)
    s.synchronize()
    _close(y, F.fft(x), 2e-5)


def test_host_fft_checks():
    with pytest.raises(ValueError, match="kind"):
        _host_fft.check("C2Q", (4,), 1, -1)
    with pytest.raises(ValueError, match="1 to 3"):
        _host_fft.check("C2C", (2, 2, 2, 2), 1, -1)
    with pytest.raises(ValueError, match="positive"):
        _host_fft.check("R2C", (0,), 1, -1)
    with pytest.raises(ValueError, match="direction"):
        _host_fft.check("Z2Z", (4,), 1, 0)
    assert _host_fft.sizes("R2C", (4, 6)) == (24, 16)
    assert _host_fft.sizes("Z2D", (5,)) == (3, 5)


def test_dense_input_is_read_in_place_and_left_intact(calls, monkeypatch):
    """A contiguous input whose transformed dims are already last goes to
    cuFFT as it is (no copy: out-of-place C2C/R2C only read it), a permuted
    one through a contiguous copy; C2R always gets a copy, since cuFFT
    overwrites its input.  No input is modified."""
    from ptcore.cuda.ops import fft as _launch_fft
    seen_in = []
    orig = _launch_fft._queue

    def spy(kind, x, out, shape, batch, direction):
        seen_in.append(x.data_ptr())
        return orig(kind, x, out, shape, batch, direction)
    monkeypatch.setattr(_launch_fft, "_queue", spy)
    z = _cplx((3, 16)).cuda()
    r = _real((3, 16)).cuda()
    z0, r0 = z.clone(), r.clone()
    _close(F.fft(z), F.fft(z.cpu()), 1e-4)
    assert seen_in[-1] == z.data_ptr()              # C2C read in place
    _close(F.rfft(r), F.rfft(r.cpu()), 1e-4)
    assert seen_in[-1] == r.data_ptr()              # R2C read in place
    n_exec = len(seen_in)
    _close(F.fft(z, dim=0), F.fft(z.cpu(), dim=0), 1e-4)
    assert len(seen_in) == n_exec and calls[-1] == ("C2C", (3,), 16, 16)  # interleaved, in place
    _close(F.fft(z.t(), dim=1), F.fft(z.cpu().t(), dim=1), 1e-4)
    assert seen_in[-1] != z.data_ptr()              # a transposed input: moved last in a copy
    rr = _real((3 * 16 + 1,)).cuda()[1:].view(3, 16)   # one float off the complex alignment
    _close(F.rfft(rr), F.rfft(rr.cpu()), 1e-4)
    assert seen_in[-1] != rr.data_ptr()             # R2C of a misaligned real input: a copy
    h = F.rfft(r)
    h0 = h.clone()
    _close(F.irfft(h), F.irfft(h.cpu()), 1e-4)
    assert seen_in[-1] != h.data_ptr()              # C2R: always a copy
    for got, want in ((z, z0), (r, r0), (h, h0)):
        assert ptcore.equal(got, want)


@pytest.mark.parametrize("fname,shape,kw", [("irfft2", (16, 9), {}), ("irfft2", (3, 8, 5), {"s": (8, 9)}),
                                            ("irfftn", (2, 4, 6, 5), {}),
                                            ("irfftn", (4, 6, 5), {"dim": (0, 2)})])
def test_inverse_real_of_a_non_hermitian_spectrum_is_numpys(fname, shape, kw, calls):
    """irfft2/irfftn of a half-spectrum that is not Hermitian over the
    leading dims (rfft over the last dim only, or any complex array) give
    NumPy's ifft-then-irfft values: cuFFT's C2R runs one-dimensional only,
    after an inverse C2C of the leading dims (its multi-dimensional C2R
    assumes a Hermitian input; on the H200 it differed by 2e-3 here)."""
    x = _cplx(shape, np.float64, seed=3)
    got = getattr(F, fname)(x.cuda(), **kw)
    axes = kw.get("dim")
    want = getattr(np.fft, fname)(x.numpy(), s=kw.get("s"), **({"axes": axes} if axes else {}))
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-11, atol=1e-11)
    c2r = [c[1] for c in calls if c[0] == "Z2D"]
    assert c2r and all(len(s) == 1 for s in c2r), calls


@pytest.mark.parametrize("fname,shape,kw,strided", [
    ("fft", (6, 5), {"dim": 0}, [((6,), 5, 5)]),
    ("ifft", (2, 7, 3), {"dim": 1}, [((7,), 3, 3)] * 2),
    ("fft2", (4, 6, 3), {"dim": (0, 1)}, [((4, 6), 3, 3)]),
    ("fftn", (3, 4, 5, 2), {"dim": (2, 1)}, [((4, 5), 2, 2)] * 3),
    ("ifftn", (2, 3, 4, 5), {"dim": (0, 1, 2)}, [((2, 3, 4), 5, 5)]),
    ("fft", (9, 4, 3), {"dim": 1}, []),             # 9 outer blocks: moved last instead
    ("irfft2", (16, 9), {}, [((16,), 9, 9)]),
    ("irfftn", (2, 4, 6, 5), {}, [((2, 4, 6), 5, 5)]),
    ("rfftn", (3, 4, 5, 6), {}, [((3,), 80, 80)]),     # R2C of the last 3 dims, then dim 0
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interleaved_c2c_needs_no_copies(fname, shape, kw, strided, dtype, calls, launches):
    """A C2C over adjacent dims of a contiguous tensor that end before its
    last runs through cuFFT's interleaved layout (stride = the later dims'
    size), one call per block of the earlier dims: no transposing copies
    before or after, the result contiguous in the caller's dim order."""
    x = (_real(shape, dtype) if fname.startswith("rfft") else _cplx(shape, dtype)).cuda()
    del launches[:]
    got = getattr(F, fname)(x, **kw)
    dim = kw.get("dim")
    npkw = {} if dim is None else {"axis": dim} if isinstance(dim, int) else {"axes": dim}
    want = getattr(np.fft, fname)(x.cpu().numpy(), **npkw)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-4 if dtype == np.float32 else 1e-11,
                               atol=1e-4 if dtype == np.float32 else 1e-11)
    inter = [c[1:] for c in calls if len(c) == 4]
    assert inter == [(n, b, st) for n, b, st in strided]
    if strided:
        assert [k for k in launches if "cast" in k] == []     # no copies at all
        assert got.is_contiguous()


def test_interleaved_layout_of_the_host_fft():
    """_host_fft.execute with a stride: the signals interleaved one element
    apart (the emulated device's cuFFT), against NumPy; and its checks."""
    a = (np.random.default_rng(1).standard_normal((4, 6, 7))
         + 1j * np.random.default_rng(2).standard_normal((4, 6, 7))).astype(np.complex128)
    out = np.zeros_like(a)
    _host_fft.execute("Z2Z", (4, 6), 5, a.ctypes.data, out.ctypes.data, -1, 7)
    np.testing.assert_allclose(out[..., :5], np.fft.fftn(a[..., :5], axes=(0, 1)), rtol=1e-12, atol=1e-12)
    assert not out[..., 5:].any()                   # signals past the batch untouched
    with pytest.raises(ValueError, match="interleaved"):
        _host_fft.check("R2C", (4,), 2, -1, 3)
    with pytest.raises(ValueError, match="interleaved"):
        _host_fft.check("C2C", (4,), 4, -1, 3)
