"""Ternary elementwise loops (where, clamp with tensor bounds, lerp) over every
stride pattern of their inner run: operands that are numbers or 0-d tensors
(stride 0), conditions broadcast along the inner or the outer dim, contiguous
operands -- values against NumPy.  (The number-and-broadcast-condition patterns
have their own loops: ``where(c[:, None], 0.0, y)``, ``where(c, 1.0, 0.0)``.)"""
import itertools

import numpy as np
import pytest

import ptcore

SHAPE = (6, 37)
COND_SHAPES = [(6, 37), (6, 1), (1, 37), ()]


def _operand(kind, rng, dtype):
    if kind == "number":
        return 2.5 if dtype.kind == "f" else 3
    if kind == "0-d":
        return np.array(-1.5 if dtype.kind == "f" else -4, dtype=dtype)
    if kind == "col":
        return (rng.standard_normal((SHAPE[0], 1)) * 4).astype(dtype)
    return (rng.standard_normal(SHAPE) * 4).astype(dtype)


def _pt(v):
    return ptcore.from_numpy(v) if isinstance(v, np.ndarray) else v


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("xk,yk", list(itertools.product(["number", "0-d", "col", "full"],
                                                         repeat=2)))
def test_where_stride_patterns(dtype, xk, yk):
    rng = np.random.default_rng(0)
    dtype = np.dtype(dtype)
    x, y = _operand(xk, rng, dtype), _operand(yk, rng, dtype)
    if xk == "number" and yk == "number":
        pytest.skip("where(c, number, number) takes no tensor dtype (covered below)")
    for cs in COND_SHAPES:
        c = rng.random(cs) > 0.5
        got = ptcore.where(ptcore.from_numpy(np.asarray(c)), _pt(x), _pt(y))
        want = np.where(c, x, y)
        np.testing.assert_array_equal(got.numpy(), np.broadcast_to(want, got.shape))
        assert got.shape == np.broadcast_shapes(np.shape(c), np.shape(x), np.shape(y))


@pytest.mark.parametrize("cs", COND_SHAPES)
def test_where_two_numbers(cs):
    c = np.random.default_rng(1).random(cs) > 0.5
    got = ptcore.where(ptcore.from_numpy(np.asarray(c)), 1.0, -2.0)
    assert got.dtype == ptcore.float32
    np.testing.assert_array_equal(got.numpy(), np.where(c, 1.0, -2.0).astype(np.float32))
    expanded = ptcore.from_numpy(np.asarray(c)).expand(SHAPE) if cs else None
    if expanded is not None:
        got = ptcore.where(expanded, 1.0, -2.0)
        np.testing.assert_array_equal(got.numpy(), np.broadcast_to(np.where(c, 1.0, -2.0),
                                                                  SHAPE))


@pytest.mark.parametrize("xk", ["0-d", "col", "full"])
def test_clamp_and_lerp_with_broadcast_operands(xk):
    rng = np.random.default_rng(2)
    x = _operand(xk, rng, np.dtype(np.float64))
    lo = rng.standard_normal(SHAPE) - 1
    hi = lo + rng.random((SHAPE[0], 1)) * 3
    got = ptcore.clamp(_pt(x), ptcore.from_numpy(lo), ptcore.from_numpy(hi))
    np.testing.assert_array_equal(got.numpy(), np.minimum(np.maximum(x, lo), hi))
    end = rng.standard_normal(SHAPE)
    w = rng.random((SHAPE[0], 1))
    got = ptcore.lerp(ptcore.from_numpy(np.broadcast_to(x, SHAPE).copy()),
                      ptcore.from_numpy(end), ptcore.from_numpy(w))
    start = np.broadcast_to(x, SHAPE)
    np.testing.assert_allclose(got.numpy(), start + w * (end - start), rtol=1e-12, atol=1e-12)
