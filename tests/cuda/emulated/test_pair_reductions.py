"""argmax/argmin and aminmax on CUDA in one kernel (value and index, or the
minimum and maximum, carried together; long rows cut in chunks whose states
the row's last block combines), with torch's CPU results: full and dim=
reductions, keepdim, NaN propagation, the first index of ties, across
chunks too (the sixth H200 run found argmax at 6 kernels, aminmax at 4)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(arr, dt):
    t = torch.from_numpy(arr).to(getattr(torch, dt))
    return ptcore.from_numpy(t.double().numpy() if t.is_floating_point() else t.numpy()).to(
        getattr(ptcore, dt)).cuda(), t


def _same(got, want):
    assert got.device.type == "cuda"
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = got.cpu(), want
    if w.dtype is torch.bfloat16 or w.dtype is torch.float16:
        g, w = g.float(), w.float()
    np.testing.assert_array_equal(g.numpy(), w.numpy())


def _data(shape, dt, rng, nan=False, ties=True):
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in ("uint8", "int8", "int16", "int32", "int64"):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dt)
    a = rng.standard_normal(shape)
    flat = a.reshape(-1)
    if ties and flat.size > 8:
        # the extremes repeated far apart (in other chunks of a long row): the first wins
        for k in (flat.size // 3, 5, flat.size - 2, flat.size // 2):
            flat[k] = 9.0
            flat[k - 1] = -9.0
    if nan and flat.size > 8:
        flat[flat.size * 2 // 3] = np.nan
        flat[flat.size - 1] = np.nan
    return a


SHAPES = [(150001,), (3, 70003), (5, 7)]


def _same_aminmax(p, t, **kw):
    mn, mx = p.aminmax(**kw)
    tmn, tmx = t.aminmax(**kw)
    _same(mn, tmn)
    _same(mx, tmx)


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int32", "uint8"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("nan", [False, True])
def test_full_reductions_match_torch(dt, shape, nan):
    if nan and not dt.startswith(("float", "bfloat")):
        pytest.skip("no NaN in an integer dtype")
    rng = np.random.default_rng(len(shape))
    p, t = _both(_data(shape, dt, rng, nan), dt)
    _same(p.argmax(), t.argmax())
    _same(p.argmin(), t.argmin())
    _same_aminmax(p, t)


# (keepdim changes only the result's shape, not the kernel's path: the long rows,
# slow on the emulated device, run once with it, the short ones both ways)
@pytest.mark.parametrize("dt", ["float64", "int16"])
@pytest.mark.parametrize("shape, dim, keepdim", [
    ((3, 70003), 1, False), ((70003, 3), 0, True), ((6, 5, 4), 1, False), ((6, 5, 4), 1, True),
    ((6, 5, 4), -1, False), ((6, 5, 4), -1, True), ((4, 1), 1, False), ((4, 1), 1, True),
    ((4, 0), 0, False), ((4, 0), 0, True)])
def test_dim_reductions_match_torch(dt, shape, dim, keepdim):
    rng = np.random.default_rng(9)
    p, t = _both(_data(shape, dt, rng, nan=dt != "int16"), dt)
    _same(p.argmax(dim, keepdim), t.argmax(dim, keepdim))
    _same(p.argmin(dim=dim, keepdim=keepdim), t.argmin(dim=dim, keepdim=keepdim))
    _same_aminmax(p, t, dim=dim, keepdim=keepdim)
    # a non-contiguous input (the short shapes: a transposed long row is many
    # rows of 3 elements, one block each, ~30 s a call on the emulated device,
    # and no chunk of a long row)
    if len(shape) > 1 and 0 not in shape and p.numel() < 1000:
        pt, tt = p.transpose(0, -1), t.transpose(0, -1)
        _same(pt.argmax(dim, keepdim), tt.argmax(dim, keepdim))
        _same_aminmax(pt, tt, dim=dim, keepdim=keepdim)


def test_bool_zero_d_and_all_equal_match_torch():
    rng = np.random.default_rng(2)
    p, t = _both(_data((100000,), "bool", rng), "bool")
    _same_aminmax(p, t)
    for arr in (np.float32(3.5), np.full(200000, 2.0, dtype=np.float32), np.full(200000, np.nan)):
        p, t = _both(np.asarray(arr), "float32")
        _same(p.argmax(), t.argmax())
        _same(p.argmin(), t.argmin())
        _same_aminmax(p, t)
    p, t = _both(np.asarray(np.float32(3.5)), "float32")
    _same(p.argmax(0), t.argmax(0))
    _same(p.aminmax(dim=0)[1], t.aminmax(dim=0)[1])


def test_empty_errors_as_torch():
    p = ptcore.empty(0, 3, device="cuda")
    for fn in (lambda x: x.argmax(), lambda x: x.argmin(0), lambda x: x.aminmax(),
               lambda x: x.aminmax(dim=0)):
        with pytest.raises(Exception) as e:
            fn(torch.empty(0, 3))
        with pytest.raises(type(e.value)):
            fn(p)


def test_out_and_repeated_calls_match_torch():
    rng = np.random.default_rng(4)
    p, t = _both(_data((2, 90000), "float32", rng, nan=False), "float32")
    mn, mx = ptcore.empty(2, device="cuda"), ptcore.empty(2, device="cuda")
    ptcore.aminmax(p, dim=1, out=(mn, mx))
    tmn, tmx = t.aminmax(dim=1)
    _same(mn, tmn)
    _same(mx, tmx)
    for _ in range(3):          # the chunks' counters are left at zero for the next call
        _same(p.argmax(1), t.argmax(1))
        _same(p.argmin(), t.argmin())


@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_one_kernel_each(queued_kernels, dt):
    x = ptcore.randn(256, 1024, device="cuda").to(getattr(ptcore, dt))
    cases = {
        "argmax": (lambda: x.argmax(), "_g"),
        "argmin": (lambda: x.argmin(), "_g"),
        "aminmax": (lambda: x.aminmax(), "_g"),
        "argmax dim=1": (lambda: x.argmax(1), "_c"),
        "aminmax dim=1": (lambda: x.aminmax(dim=1), "_g"),
        "aminmax dim=1 keepdim": (lambda: x.aminmax(dim=1, keepdim=True), "_g"),
    }
    for label, (fn, variant) in cases.items():
        fn()
        queued_kernels.clear()
        fn()
        assert len(queued_kernels) == 1 and queued_kernels[0].endswith(variant), (label, queued_kernels)
