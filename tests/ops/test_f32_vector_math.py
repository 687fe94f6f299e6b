"""float32 transcendental loops (ptc_fmath_vec.h, ptc_trigf_vec.h,
ptc_f32dbl_math.h, the atanh of ptc_log_vec.h) and the explicitly vectorised
one-instruction maps.

Accuracy policy: exp, exp2, expm1, tanh, sigmoid, erf (ptc_fmath_vec.h),
atan, asin, acos (the same) and sin, cos, tan (ptc_trigf_vec.h) are in
torch's accuracy class (SLEEF's u10 functions, which torch's float32 loops
use: max error 1.0 ulp), computed in float lanes with FMA: within 1 ulp of
NumPy's / SciPy's float64 function rounded to float32 over dense sweeps of
every float region (subnormals, the overflow and underflow thresholds, huge
arguments), exact at +-0, +-inf, NaN, and never further from float64 than
torch's own loops on the same sweep.  sinh, cosh and atanh are computed in
double precision and rounded once, so the results are the correctly rounded
values except within ~1e-8 ulp of a rounding midpoint.  For all: the
contiguous vector loops, their tails, the strided loops and every CPU path
(AVX-512, AVX2, the scalar copy: ATEN_CPU_CAPABILITY lowers the one a
process runs) give the same bits."""
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

import ptcore

REF = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "sinh": np.sinh, "cosh": np.cosh,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atanh": np.arctanh, "tanh": np.tanh,
    "sigmoid": special.expit, "erf": special.erf,
}
# typical magnitudes of each function's argument (plus every float exponent)
SCALE = {"exp": 105.0, "exp2": 160.0, "expm1": 100.0, "sinh": 95.0, "cosh": 95.0, "sin": 7e4,
         "cos": 7e4, "tan": 7e4, "asin": 1.05, "acos": 1.05, "atan": 1e5, "atanh": 1.05,
         "tanh": 12.0, "sigmoid": 110.0, "erf": 5.0}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-38,
                    3.4e38, -3.4e38, 65536.0, 65537.0, -65536.0, 88.7, 89.5, -89.5, 128.0,
                    -150.0, -149.5, 127.99, 0.03125, -0.03125, 0.0312, 104.0, 200.0, 1e-8,
                    0.4375, 0.6875, 1.1875, 2.4375, 0.99999994, -0.99999994, 1.0000001,
                    np.pi / 2, -np.pi, 1e20], np.float32)


# computed in float lanes, within 1 ulp (torch's accuracy class)
FLOAT_LANES = {"sin", "cos", "tan", "exp", "exp2", "expm1", "tanh", "sigmoid", "erf", "atan",
               "asin", "acos"}


def _inputs(fn):
    rng = np.random.default_rng(sum(map(ord, fn)))
    every = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    typical = ((rng.random(20000) * 2 - 1) * SCALE[fn]).astype(np.float32)
    small = ((rng.random(5000) * 2 - 1) * 0.05).astype(np.float32)
    return np.concatenate([every, typical, small, SPECIAL])


def _same_bits(a, b):
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("fn", sorted(REF))
def test_accuracy_against_float64(fn):
    x = _inputs(fn)
    with np.errstate(all="ignore"):
        want = REF[fn](x.astype(np.float64)).astype(np.float32)
    got = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    same = _same_bits(got, want)
    # specials (0, -0, inf, NaN, the domain edges) exactly; for the float-lane
    # functions the zeros, infinities, NaN and the |x| > 2^16 of the double code
    exact = np.ones(len(SPECIAL), bool)
    if fn in FLOAT_LANES:
        exact = ~np.isfinite(SPECIAL) | (SPECIAL == 0) | (np.abs(SPECIAL) > 65536)
    sp = same[-len(SPECIAL):]
    assert sp[exact].all(), (SPECIAL[exact & ~sp], got[-len(SPECIAL):][exact & ~sp])
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    ulp = np.abs(got[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32).astype(np.int64))
    assert ulp.max() <= 1
    # (float lanes: 94-99.7% the same bits measured on these inputs)
    assert same.mean() > (0.9 if fn in FLOAT_LANES else 0.99999)


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


def _ulps(got, want):
    """the integer distance of the float bits where both are finite (signs
    equal, else a huge distance), after checking NaN and infinities agree"""
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    gi, wi = got[fin].view(np.int32).astype(np.int64), want[fin].view(np.int32).astype(np.int64)
    return np.where((gi < 0) == (wi < 0), np.abs(gi - wi), 1 << 32)


# each float-lane function's regions [lo, hi] (one sign each): about a
# half million evenly spaced floats of each (every float where it holds fewer),
# on top of every 1021st float overall (every exponent, subnormals, both signs)
SWEEPS = {
    "exp": [(-104.0, -87.0), (87.0, 89.0), (-0.35, -1e-3), (1e-3, 0.35)],
    "exp2": [(-151.0, -125.0), (126.0, 128.5), (-0.5, -1e-3), (1e-3, 0.5)],
    "expm1": [(-0.36, -1e-4), (1e-4, 0.36), (-26.0, -16.0), (88.0, 89.0)],
    "tanh": [(-1.01, -0.5), (0.5, 1.01), (8.5, 9.5)],
    "sigmoid": [(-105.0, -86.0), (-1.0, -1e-3), (1e-3, 1.0), (15.0, 18.0)],
    "erf": [(-1.01, -0.5), (0.5, 1.01), (3.5, 4.1)],
    "atan": [(-1.01, -0.5), (0.5, 1.01), (1e7, 1e9)],
    "asin": [(-1.0, -0.4), (0.4, 1.0)],
    "acos": [(-1.0, -0.4), (0.4, 1.0)],
    "tan": [(-65536.0, -65000.0), (1.5, 1.6), (0.7, 0.8)],
    "sin": [(-4.0, -3.0), (3.0, 4.0)],
    "cos": [(-4.0, -3.0), (3.0, 4.0)],
}


def _sweep(fn):
    parts = [np.arange(0, 2**32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    for lo, hi in SWEEPS[fn]:
        a, b = sorted(np.abs(np.float32([lo, hi])).view(np.int32))
        step = max(1, (b - a) // 500_000)
        v = np.arange(a, b + 1, step, dtype=np.int32).view(np.float32)
        parts.append(-v if hi < 0 else v)
    return np.concatenate(parts)


@pytest.mark.parametrize("fn", sorted(SWEEPS))
def test_dense_sweep_within_one_ulp_and_not_worse_than_torch(fn):
    x = _sweep(fn)
    with np.errstate(all="ignore"):
        want = REF[fn](x.astype(np.float64)).astype(np.float32)
    got = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    ulp = _ulps(got, want)
    assert ulp.max() <= 1, (x[np.isfinite(want)][ulp > 1][:5], got[np.isfinite(want)][ulp > 1][:5])
    assert (ulp == 0).mean() > 0.9
    torch = pytest.importorskip("torch")
    with np.errstate(all="ignore"):
        tw = getattr(torch, fn)(torch.from_numpy(x)).numpy()
    fin = np.isfinite(want) & np.isfinite(tw)
    ti, wi = tw[fin].view(np.int32).astype(np.int64), want[fin].view(np.int32).astype(np.int64)
    torch_max = np.where((ti < 0) == (wi < 0), np.abs(ti - wi), 1 << 32).max()
    assert ulp.max() <= torch_max, (fn, ulp.max(), torch_max)


@pytest.mark.parametrize("fn", ["sin", "cos", "tan", "atan", "asin", "acos", "sinh", "cosh",
                                "expm1", "exp2", "atanh", "exp", "tanh", "sigmoid", "erf"])
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


@pytest.mark.parametrize("fn", ["sin", "cos", "log", "log2", "log10"])
def test_float_lanes_within_one_ulp_of_torch(fn):
    # torch's float32 loops (SLEEF u10) and ptcore's float-lane functions are
    # both within 1 ulp of the true value; on typical arguments and every
    # float exponent they differ by at most 1 ulp
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    if fn in FLOAT_LANES:
        x = np.concatenate([((rng.random(100000) * 2 - 1) * 100).astype(np.float32),
                            ((rng.random(20000) * 2 - 1) * 65536).astype(np.float32)])
    else:
        x = rng.integers(0, 2**31, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
        x = x[np.isfinite(x)]
    got = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
    want = getattr(torch, fn)(torch.from_numpy(x)).numpy()
    # (torch's float32 log is at times, run to run, far off on a few elements:
    # compared where torch is within 1 ulp of float64)
    ref = getattr(np, fn)(x.astype(np.float64)).astype(np.float32)
    tu = np.abs(want.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    keep = (tu <= 1) | ~np.isfinite(ref)
    assert keep.mean() > 0.99
    got, want, x = got[keep], want[keep], x[keep]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin], want[~fin])
    gi, wi = got[fin].view(np.int32).astype(np.int64), want[fin].view(np.int32).astype(np.int64)
    ulp = np.where((gi < 0) == (wi < 0), np.abs(gi - wi), 1 << 32)
    assert ulp.max() <= 1, (x[fin][ulp > 1][:5], got[fin][ulp > 1][:5], want[fin][ulp > 1][:5])


_CHILD = """
import sys, numpy as np, ptcore
x = np.load(sys.argv[1])
np.savez(sys.argv[2], **{fn: getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
                         for fn in sys.argv[3:]})
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    # the AVX-512, AVX2 and scalar copies (chosen by the CPU; a process started
    # with ATEN_CPU_CAPABILITY runs the lower one) do the same operations
    from ptcore._cpu_features import detect_cpu_capability
    have = detect_cpu_capability()
    if cap == "avx2" and have == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    if cap == have.lower():
        pytest.skip("the capability this process runs")
    fns = ["sin", "cos", "tan", "log", "log2", "log10", "exp", "exp2", "expm1", "tanh", "sigmoid",
           "erf", "atan", "asin", "acos"]
    x = np.concatenate([_inputs("sin"), _inputs("atan")[:20000], SPECIAL,
                        np.float32([7e4, -1e6, 1e-40, 3e-39])])[:-5]   # a tail
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "x.npy"), str(tmp_path / "y.npz")]
                   + fns, env=env, check=True, timeout=600)
    child = np.load(tmp_path / "y.npz")
    for fn in fns:
        with np.errstate(all="ignore"):
            here = getattr(ptcore, fn)(ptcore.from_numpy(x)).numpy()
        assert _same_bits(child[fn], here).all(), fn


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


_EXACT = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
@pytest.mark.parametrize("form", ["tt", "ts", "st"])
def test_binary_vector_loops(op, form):
    rng = np.random.default_rng(7)
    a = np.concatenate([(rng.standard_normal(1030) * 5).astype(np.float32),
                        np.array([np.nan, 0.0, -0.0, np.inf, 1.0, np.nan], np.float32)])
    b = np.concatenate([(rng.standard_normal(1030) * 5).astype(np.float32),
                        np.array([1.0, -0.0, 0.0, np.inf, np.nan, np.nan], np.float32)])
    ref = dict(_EXACT, maximum=np.maximum, minimum=np.minimum)[op]
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
    if op in _EXACT:
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
    if op not in _EXACT:
        assert _same_bits(got[tie], np.broadcast_to(want_y, got.shape)[tie].astype(np.float32)).all()
