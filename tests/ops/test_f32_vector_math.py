"""float32 transcendental loops computed in double (ptc_f32dbl_math.h, the
atanh of ptc_log_vec.h) and the explicitly vectorised one-instruction maps.

The double-precision algorithms round once to float, so the results are the
correctly rounded values (NumPy's float64 function rounded to float32) except
within ~1e-8 ulp of a rounding midpoint; the contiguous vector loops, their
tails and the strided loops give the same bits."""
import numpy as np
import pytest

import ptcore

REF = {
    "exp2": np.exp2, "expm1": np.expm1, "sinh": np.sinh, "cosh": np.cosh,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atanh": np.arctanh,
}
# typical magnitudes of each function's argument (plus every float exponent)
SCALE = {"exp2": 160.0, "expm1": 100.0, "sinh": 95.0, "cosh": 95.0, "sin": 7e4,
         "cos": 7e4, "tan": 7e4, "asin": 1.05, "acos": 1.05, "atan": 1e5, "atanh": 1.05}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-38,
                    3.4e38, -3.4e38, 65536.0, 65537.0, -65536.0, 88.7, 89.5, -89.5, 128.0,
                    -150.0, -149.5, 127.99, 0.03125, -0.03125, 0.0312, 104.0, 200.0, 1e-8,
                    0.4375, 0.6875, 1.1875, 2.4375, 0.99999994, -0.99999994, 1.0000001,
                    np.pi / 2, -np.pi, 1e20], np.float32)


def _inputs(fn):
    rng = np.random.default_rng(sum(map(ord, fn)))
    every = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    typical = ((rng.random(20000) * 2 - 1) * SCALE[fn]).astype(np.float32)
    small = ((rng.random(5000) * 2 - 1) * 0.05).astype(np.float32)
    return np.concatenate([every, typical, small, SPECIAL])


def _same_bits(a, b):
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("fn", sorted(REF))
def test_correctly_rounded_against_float64(fn):
    x = _inputs(fn)
    with np.errstate(all="ignore"):
        want = REF[fn](x.astype(np.float64)).astype(np.float32)
    got = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    same = _same_bits(got, want)
    # specials (0, -0, inf, NaN, the domain edges) exactly
    assert same[-len(SPECIAL):].all(), (SPECIAL[~same[-len(SPECIAL):]], got[-len(SPECIAL):][~same[-len(SPECIAL):]])
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    ulp = np.abs(got[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32).astype(np.int64))
    assert ulp.max() <= 1
    assert same.mean() > 0.99999


@pytest.mark.parametrize("fn", sorted(REF))
def test_strided_tails_and_methods_give_the_same_bits(fn):
    x = _inputs(fn)[:4099]
    whole = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    strided = ptcore.from_numpy(np.stack([x, -x], 1))[:, 0]
    assert not strided.is_contiguous()
    assert _same_bits(getattr(ptcore, fn)(strided).numpy(), whole).all()
    for n in range(1, 40):                  # every tail length of both vector widths
        part = getattr(ptcore.Tensor, fn)(ptcore.from_numpy(x[:n].copy())).numpy()
        assert _same_bits(part, whole[:n]).all(), n
    t = ptcore.from_numpy(x[:1000].copy())
    getattr(t, fn + "_")()
    assert _same_bits(t.numpy(), whole[:1000]).all()
    out = ptcore.empty(1000)
    getattr(ptcore, fn)(ptcore.from_numpy(x[:1000].copy()), out=out)
    assert _same_bits(out.numpy(), whole[:1000]).all()


@pytest.mark.parametrize("fn", ["sin", "cos", "tan", "atan", "asin", "acos", "sinh", "cosh",
                                "expm1", "exp2", "atanh"])
def test_within_one_ulp_of_torch(fn):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = ((rng.random(20000) * 2 - 1) * min(SCALE[fn], 80.0)).astype(np.float32)
    got = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    want = getattr(torch, fn)(torch.from_numpy(x)).numpy()
    fin = np.isfinite(want) & np.isfinite(got)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ulp = np.abs(got[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32).astype(np.int64))
    assert ulp.max() <= 2     # torch's own float32 loops are within 1 ulp


def test_gradients_use_the_same_kernels():
    x = ptcore.tensor([0.3, -1.2, 2.5], requires_grad=True)
    ptcore.sin(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.array([0.3, -1.2, 2.5])), rtol=1e-6)


@pytest.mark.parametrize("op", ["neg", "abs", "reciprocal", "square"])
def test_one_instruction_maps(op):
    rng = np.random.default_rng(5)
    x = np.concatenate([(rng.standard_normal(1037) * 10).astype(np.float32), SPECIAL])
    ref = {"neg": np.negative, "abs": np.abs, "reciprocal": lambda v: np.float32(1) / v,
           "square": np.square}[op]
    with np.errstate(all="ignore"):
        want = ref(x)
    got = getattr(ptcore, op)(ptcore.from_numpy(x)).numpy()
    assert _same_bits(got, want).all()


@pytest.mark.parametrize("op", ["div", "maximum", "minimum"])
@pytest.mark.parametrize("form", ["tt", "ts", "st"])
def test_binary_vector_loops(op, form):
    rng = np.random.default_rng(7)
    a = np.concatenate([(rng.standard_normal(1030) * 5).astype(np.float32),
                        np.array([np.nan, 0.0, -0.0, np.inf, 1.0, np.nan], np.float32)])
    b = np.concatenate([(rng.standard_normal(1030) * 5).astype(np.float32),
                        np.array([1.0, -0.0, 0.0, np.inf, np.nan, np.nan], np.float32)])
    ref = {"div": np.divide, "maximum": np.maximum, "minimum": np.minimum}[op]
    f = getattr(ptcore, op)
    if form == "tt":
        x, y, want_x, want_y = ptcore.from_numpy(a), ptcore.from_numpy(b), a, b
    elif form == "ts":
        x, y, want_x, want_y = ptcore.from_numpy(a), ptcore.tensor(2.5), a, np.float32(2.5)
    else:
        x, y, want_x, want_y = ptcore.tensor(-1.5), ptcore.from_numpy(b), np.float32(-1.5), b
    with np.errstate(all="ignore"):
        want = ref(want_x, want_y).astype(np.float32)
    got = f(x, y).numpy()
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    if op == "div":
        assert _same_bits(got, want).all()
    else:
        np.testing.assert_array_equal(got[~nan], want[~nan])
    torch = pytest.importorskip("torch")
    tx = torch.from_numpy(np.array(want_x, np.float32).copy())
    ty = torch.from_numpy(np.array(want_y, np.float32).copy())
    ref = getattr(torch, op)(tx, ty).numpy().reshape(got.shape)
    # equal zeros of opposite sign: torch returns the second operand in its
    # vector loops, the first in their scalar tails; ptcore always the second
    tie = (np.broadcast_to(want_x, got.shape) == 0) & (np.broadcast_to(want_y, got.shape) == 0)
    assert _same_bits(got[~tie], ref[~tie]).all()
    if op != "div":
        assert _same_bits(got[tie], np.broadcast_to(want_y, got.shape)[tie].astype(np.float32)).all()
