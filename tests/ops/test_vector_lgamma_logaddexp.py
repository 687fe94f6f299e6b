"""float32 lgamma computed in double lanes (ptc_f32dbl_math.h): ulp error
against math.lgamma over values spanning every exponent, dense runs around
the zeros at 1 and 2 and over the negative axis (reflection), torch's special
values (poles and infinities give +inf), every tail length around the vector
widths, strided layouts giving the contiguous bits, float16 / bfloat16
through float32, torch's values where it is installed, and the AVX2 and
default CPU paths (ATEN_CPU_CAPABILITY in a child process) giving the same
bits."""
import math

import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

F32_MAX = float(np.finfo(np.float32).max)
LG_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.0, -3.0, -100.0,
                        -2.0 ** 23, -2.0 ** 23 - 2, -2.0 ** 24, -F32_MAX, F32_MAX, 4.1e36, 4.0e36,
                        1e-45, -1e-45, 1.2e-38, 0.5, -0.5, -2.5, 8.0, 7.9999995, 1.5, 2.5,
                        1.0000001, 0.99999994, 2.0000002, 1.9999999, -8388607.5, 1e30, 3.0],
                       dtype=np.float32)


def _all_exponents(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2 ** 32, 2 * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return x[np.isfinite(x)][:n]


def _lgamma_inputs(n, seed):
    rng = np.random.default_rng(seed)
    ulp1 = np.float32(2.0 ** -24)
    return np.concatenate([
        _all_exponents(n, seed),
        (rng.standard_normal(n) * 3).astype(np.float32),
        rng.uniform(-40, 40, n).astype(np.float32),
        rng.uniform(0.5, 2.5, n // 2).astype(np.float32),
        np.float32(1) + np.arange(-2000, 2000, dtype=np.float32) * ulp1,
        np.float32(2) + np.arange(-2000, 2000, dtype=np.float32) * (2 * ulp1),
    ])


def _ref_lgamma(x):
    def one(v):
        if math.isnan(v):
            return math.nan
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):
            return math.inf
    return np.array([one(float(v)) for v in x])


def _lg(x):
    return ptcore.from_numpy(x).lgamma().numpy()


def _ulps(got, ref):
    keep = np.isfinite(ref) & (np.abs(ref) <= F32_MAX)
    sp = np.maximum(np.spacing(np.abs(ref[keep].astype(np.float32))).astype(np.float64), 2.0 ** -149)
    return np.abs(got[keep].astype(np.float64) - ref[keep]) / sp, keep


def test_lgamma_within_half_an_ulp_of_float64():
    x = _lgamma_inputs(150_000, 1)
    got, ref = _lg(x), _ref_lgamma(x)
    e, keep = _ulps(got, ref)
    r = ref[keep]
    # away from the zeros: correctly rounded but for a hair (torch's: 1.5 ulp and more)
    assert e[np.abs(r) >= 1e-3].max() < 0.51
    # where lgamma crosses zero (1, 2 and the negative axis): a tiny absolute error
    assert np.max(np.abs(got[keep].astype(np.float64) - r)[np.abs(r) < 1e-3]) < 1e-9
    # around 1 and 2 the series has no constant term: within an ulp even there
    near = (np.abs(x[keep] - 1) < 0.25) | (np.abs(x[keep] - 2) < 0.25)
    assert e[near].max() < 1.0
    # overflow to inf where float64's does not fit a float
    big = np.isfinite(ref) & (np.abs(ref) > F32_MAX)
    assert np.all(got[big] == np.inf)


def test_lgamma_special_values():
    x = LG_SPECIALS
    got = _lg(x)
    ref = _ref_lgamma(x)
    with np.errstate(over="ignore"):
        r32 = ref.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(r32))
    exact = np.isinf(r32)
    np.testing.assert_array_equal(got[exact], r32[exact])
    assert got[0] == np.inf and got[1] == np.inf          # lgamma(+-0) = +inf (torch's)
    assert got[2] == np.inf and got[3] == np.inf          # lgamma(+-inf) = +inf
    assert got[5] == 0 and got[6] == 0 and not np.signbit(got[5]) and not np.signbit(got[6])
    e, _ = _ulps(got, ref)
    assert e.max() < 0.51


def test_lgamma_every_tail_and_layout_gives_the_contiguous_bits():
    x = np.concatenate([_lgamma_inputs(1000, 5)[::5][:2100], LG_SPECIALS])
    full = _lg(x).view(np.uint32)
    for n in list(range(1, 41)) + [1031]:
        np.testing.assert_array_equal(_lg(x[:n].copy()).view(np.uint32), full[:n])
    x2 = np.repeat(x, 3)
    np.testing.assert_array_equal(ptcore.from_numpy(x2)[::3].lgamma().numpy().view(np.uint32), full)
    m = x[:2100].reshape(70, 30)
    t = ptcore.from_numpy(m).t()
    np.testing.assert_array_equal(t.lgamma().numpy().view(np.uint32), _lg(m.T.copy()).view(np.uint32))
    # out= and the in-place method
    out = ptcore.empty(x.size)
    ptcore.lgamma(ptcore.from_numpy(x), out=out)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), full)
    y = ptcore.from_numpy(x.copy())
    y.lgamma_()
    np.testing.assert_array_equal(y.numpy().view(np.uint32), full)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lgamma_half_types_go_through_float32(dtype):
    x = np.clip(_lgamma_inputs(2000, 9), -60, 60)
    dt = getattr(ptcore, dtype)
    t = ptcore.from_numpy(x).to(dt)
    got = t.lgamma().float().numpy()
    ref = ptcore.from_numpy(_lg(t.float().numpy())).to(dt).float().numpy()
    np.testing.assert_array_equal(got, ref)


def test_lgamma_float64_unchanged():
    x = np.concatenate([_lgamma_inputs(2000, 3).astype(np.float64), [0.0, -0.0, np.inf, -np.inf, -3.0]])
    got = ptcore.from_numpy(x).lgamma().numpy()
    ref = _ref_lgamma(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
    assert np.all(np.abs(got[fin] - ref[fin]) <= 1e-12 * np.maximum(1, np.abs(ref[fin])))


def test_lgamma_against_torch():
    torch = pytest.importorskip("torch")
    x = np.concatenate([_lgamma_inputs(100_000, 11), LG_SPECIALS])
    tr = torch.from_numpy(x).lgamma().numpy()
    got = _lg(x)
    ref = _ref_lgamma(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(tr))
    # torch's (glibc's lgammaf) overflows to inf a little early, from ~4.07e36,
    # where lgamma is still below FLT_MAX: the finite float there
    inf = np.isinf(tr) & ~(np.isfinite(ref) & (np.abs(ref) <= F32_MAX))
    np.testing.assert_array_equal(got[inf], tr[inf])
    eg, keep = _ulps(got, ref)
    et, _ = _ulps(tr, ref)
    away = np.abs(ref[keep]) >= 1e-3
    assert eg[away].max() <= et[away].max() + 1e-6
    ag = np.abs(got[keep].astype(np.float64) - ref[keep])
    at = np.abs(tr[keep].astype(np.float64) - ref[keep])
    assert ag[~away].max() <= at[~away].max() + 1e-12


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
x = ptcore.from_numpy(d["x"])
np.savez(sys.argv[2], lg=x.lgamma().numpy(), lgs=ptcore.from_numpy(d["x2"])[::2].lgamma().numpy())
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_lgamma_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    x = np.concatenate([_lgamma_inputs(20_000, 13), LG_SPECIALS])
    np.savez(tmp_path / "in.npz", x=x, x2=np.repeat(x, 2))
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    here = _lg(x).view(np.uint32)
    np.testing.assert_array_equal(child["lg"].view(np.uint32), here)
    np.testing.assert_array_equal(child["lgs"].view(np.uint32), here)
