"""masked_fill along contiguous rows (the branch-free row fill of
ptcore/_ops/kernels/_index.pyx, taken for 4- and 8-byte elements when the data and
mask rows are contiguous, e.g. attention's causal mask) against NumPy, for
every dtype width, broadcast masks, NaN/-inf fill values and the strided
layouts that keep the element loop."""
import numpy as np
import pytest

import ptcore

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.complex64, np.float16, np.int8,
          np.complex128]


def _fill_value(dt):
    if np.issubdtype(dt, np.complexfloating):
        return 1.5 - 2.0j
    if np.issubdtype(dt, np.floating):
        return -np.inf
    return -7


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape,mshape", [((12, 4, 64, 64), (1, 1, 64, 64)),
                                          ((3, 5, 17), (3, 5, 17)),
                                          ((2, 33), (33,)),
                                          ((7, 1), (7, 1)),
                                          ((4, 6, 9), (4, 1, 9))])
def test_matches_numpy(dt, shape, mshape):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    x = (rng.standard_normal(shape) * 10).astype(dt)
    m = rng.random(mshape) < 0.4
    if shape == (12, 4, 64, 64):
        m = ~np.tril(np.ones((64, 64), bool)).reshape(mshape)     # causal
    v = _fill_value(dt)
    got = ptcore.from_numpy(x.copy()).masked_fill(ptcore.from_numpy(m), v).numpy()
    want = np.where(np.broadcast_to(m, shape), np.asarray(v).astype(dt), x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_in_place_and_strided_layouts(dt):
    rng = np.random.default_rng(4)
    base = rng.standard_normal((6, 10, 8)).astype(dt)
    m = rng.random((6, 8, 10)) < 0.5
    # permuted data (inner dim not contiguous) and permuted mask: the element loop
    t = ptcore.from_numpy(base.copy()).permute(0, 2, 1)
    t.masked_fill_(ptcore.from_numpy(m), np.nan)
    want = np.where(m, np.nan, base.transpose(0, 2, 1))
    np.testing.assert_array_equal(t.numpy(), want)
    # contiguous data, transposed mask
    mt = ptcore.from_numpy(np.ascontiguousarray(m.transpose(0, 2, 1))).permute(0, 2, 1)
    t2 = ptcore.from_numpy(np.ascontiguousarray(base.transpose(0, 2, 1)))
    t2.masked_fill_(mt, 3.0)
    np.testing.assert_array_equal(t2.numpy(), np.where(m, dt(3.0), base.transpose(0, 2, 1)))


def test_gradient_of_masked_fill():
    rng = np.random.default_rng(5)
    x = ptcore.from_numpy(rng.standard_normal((4, 16)).astype(np.float32)).requires_grad_()
    m = rng.random(16) < 0.5
    y = x.masked_fill(ptcore.from_numpy(m), 0.0)
    g = rng.standard_normal((4, 16)).astype(np.float32)
    y.backward(ptcore.from_numpy(g))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(m, 0.0, g).astype(np.float32))
