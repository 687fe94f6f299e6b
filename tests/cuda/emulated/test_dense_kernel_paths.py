"""The loops inside the dense ("c") elementwise kernels and the reduction
kernels: four-element vector groups when every pointer is aligned (two
groups a trip once the grid is capped, then single groups, then a scalar
tail), four single elements a trip otherwise; reductions keep four partials
per thread.  Sizes and offsets are chosen to reach every branch on the
emulated device (4 multiprocessors: the grid is capped at 32 blocks of
256 threads, so more than 4 * 8192 elements take the two-group loop) and on
a real GPU; values are compared with NumPy."""
import numpy as np
import pytest

import ptcore

# past the capped grid's two-group threshold, odd (a scalar tail), and small
SIZES = (5, 4 * 8192 * 2 + 4 * 3 + 3)


def _np(t):
    return t.cpu().numpy()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("offset", [0, 1, 2])      # 1, 2: views off the 4-element alignment
def test_binary_unary_cast_compare(n, offset):
    rng = np.random.default_rng(n + offset)
    a = rng.standard_normal(n + offset).astype(np.float32)
    b = rng.standard_normal(n + offset).astype(np.float32)
    b[::7] = a[::7]                                   # some equal pairs for eq
    x, y = ptcore.from_numpy(a).cuda()[offset:], ptcore.from_numpy(b).cuda()[offset:]
    an, bn = a[offset:], b[offset:]
    np.testing.assert_array_equal(_np(x + y), an + bn)
    np.testing.assert_array_equal(_np(x * y - y), an * bn - bn)
    np.testing.assert_allclose(_np(ptcore.exp(x)), np.exp(an), rtol=2e-6)
    np.testing.assert_array_equal(_np(ptcore.eq(x, y)), an == bn)       # bool out
    np.testing.assert_array_equal(_np(x.half()), an.astype(np.float16))   # f32 -> f16
    np.testing.assert_array_equal(_np(x.half().float()), an.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(_np(x.double() * 2), an.astype(np.float64) * 2)
    i = ptcore.from_numpy((a * 100).astype(np.int64)).cuda()[offset:]
    np.testing.assert_array_equal(_np(i + i), (an * 100).astype(np.int64) * 2)


@pytest.mark.parametrize("n", SIZES)
def test_in_place_on_aligned_and_offset_views(n):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(n + 1).astype(np.float32)
    for off in (0, 1):
        x = ptcore.from_numpy(a.copy()).cuda()
        v = x[off:]
        v.add_(1.5).mul_(v)
        want = a.copy()
        want[off:] = (want[off:] + np.float32(1.5)) * (want[off:] + np.float32(1.5))
        np.testing.assert_array_equal(_np(x), want)


@pytest.mark.parametrize("L", [3, 1021, 4 * 128 * 3 + 5, 70001])
def test_reductions_with_four_partials(L):
    rng = np.random.default_rng(L)
    a = rng.standard_normal((3, L))
    a[1, ::5] = a[1].max()                          # ties: the first index wins
    x = ptcore.from_numpy(a).cuda()
    np.testing.assert_allclose(_np(x.sum(1)), a.sum(1), rtol=1e-12)
    np.testing.assert_allclose(_np(x.sum()), a.sum(), rtol=1e-12)
    np.testing.assert_array_equal(_np(x.amax(1)), a.max(1))
    np.testing.assert_array_equal(_np(x.amin(1)), a.min(1))
    np.testing.assert_array_equal(_np(x.argmax(1)), a.argmax(1))
    np.testing.assert_array_equal(_np(x.argmin(1)), a.argmin(1))
    np.testing.assert_allclose(_np(x.var(1)), a.var(1, ddof=1), rtol=1e-10)
    np.testing.assert_allclose(_np(x.float().mean(1)), a.astype(np.float32).mean(1), rtol=1e-5)
    nan = a.copy()
    nan[2, L // 2] = np.nan
    xn = ptcore.from_numpy(nan).cuda()
    assert np.isnan(_np(xn.amax(1))[2]) and np.isnan(_np(xn.amin(1))[2])
    assert _np(xn.argmax(1))[2] == L // 2
    np.testing.assert_array_equal(_np(xn.amax(1))[:2], nan[:2].max(1))
    b = a > 0.5
    np.testing.assert_array_equal(_np(ptcore.from_numpy(b).cuda().any(1)), b.any(1))
    np.testing.assert_array_equal(_np(ptcore.from_numpy(b).cuda().all(1)), b.all(1))
    np.testing.assert_array_equal(_np(ptcore.count_nonzero(ptcore.from_numpy(b).cuda(), 1)),
                                  np.count_nonzero(b, 1))
