"""float32 pow, hypot and xlogy computed in double lanes (ptc_f32dbl_math.h):
ulp error against NumPy's float64 functions over values spanning every
exponent, C99 / torch special values, every tail length around the vector
widths, strided and broadcast operands giving the contiguous bits, float16 /
bfloat16 through float32, torch's values where it is installed, and the
AVX2 and default CPU paths (ATEN_CPU_CAPABILITY in a child process) giving
the same bits."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

F32_MAX = float(np.finfo(np.float32).max)
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 1e-45, -1e-45,
                     1.2e-38, 1e-40, 88.0, -104.0, 127.0, 128.0, -149.0, -150.0, 1e30, F32_MAX, -F32_MAX,
                     np.inf, -np.inf, np.nan, 1.0000001, 0.99999994], dtype=np.float32)


def _all_exponents(n, seed):
    """n finite float32 values from random bit patterns (every exponent, both signs)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2 ** 32, 2 * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return x[np.isfinite(x)][:n]


def _max_ulp(got, ref):
    """The largest |got - ref| in ulps of the float32 nearest ref, over finite refs in range."""
    got = got.astype(np.float64)
    keep = np.isfinite(ref) & (np.abs(ref) <= F32_MAX)
    if not keep.any():
        return 0.0
    r32 = ref[keep].astype(np.float32)
    sp = np.spacing(np.abs(r32)).astype(np.float64)
    return float(np.max(np.abs(got[keep] - ref[keep]) / sp))


def _call(name, a, b):
    ta = ptcore.from_numpy(a) if isinstance(a, np.ndarray) else a
    tb = ptcore.from_numpy(b) if isinstance(b, np.ndarray) else b
    if name == "pow":
        return (ta ** tb).numpy()
    return getattr(ptcore, name)(ta, tb).numpy()


def _ref(name, a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        if name == "pow":
            return np.power(a, b)
        if name == "hypot":
            return np.hypot(a, b)
        r = np.where(a == 0, 0.0, a * np.log(b))
        return np.where(np.isnan(b), b, r)


def _pow_inputs(n, seed):
    rng = np.random.default_rng(seed)
    x = np.abs(_all_exponents(n, seed))
    y = (rng.standard_normal(x.size) * np.where(rng.random(x.size) < 0.5, 1.0, 20.0)).astype(np.float32)
    return x, y


def _inputs(name, n, seed):
    if name == "pow":
        return _pow_inputs(n, seed)
    a, b = _all_exponents(n, seed), _all_exponents(n, seed + 1)
    m = min(a.size, b.size)
    a, b = a[:m], b[:m]
    return (a, np.abs(b)) if name == "xlogy" else (a, b)


@pytest.mark.parametrize("name", ["pow", "hypot", "xlogy"])
def test_within_an_ulp_of_float64(name):
    a, b = _inputs(name, 300_000, 1)
    with np.errstate(all="ignore"):
        got = _call(name, a, b)
    assert _max_ulp(got, _ref(name, a, b)) < 0.52


@pytest.mark.parametrize("e", [2.5, -1.7, 0.3, 7.0, -3.5, 1e-3, 41.0])
def test_pow_number_exponent_within_an_ulp(e):
    x = np.abs(_all_exponents(200_000, 2))
    with np.errstate(all="ignore"):
        got = (ptcore.from_numpy(x) ** e).numpy()
    # (the exponent as float32, as the kernel and torch take it)
    assert _max_ulp(got, _ref("pow", x, np.float32(e))) < 0.52


def _grid():
    a, b = np.meshgrid(SPECIALS, SPECIALS, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


def _same(got, ref):
    """Equal values, NaN where NaN, and the same sign of zero."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(got[ok], ref[ok].astype(np.float32))
    np.testing.assert_array_equal(np.signbit(got[ok & (ref == 0)]), np.signbit(ref[ok & (ref == 0)]))


def test_pow_special_values_follow_c99():
    a, b = _grid()
    with np.errstate(all="ignore"):
        got = _call("pow", a, b)
        ref = np.power(a.astype(np.float64), b.astype(np.float64))
    _same(got, ref)
    # exact powers of two at the underflow and overflow boundaries
    x = np.float32([2.0, 2.0, 2.0, 0.5, 2.0, 4.0, 0.25])
    y = np.float32([-150.0, -149.0, 128.0, 150.0, 127.0, -75.0, 74.5])
    np.testing.assert_array_equal(_call("pow", x, y), np.power(x.astype(np.float64), y).astype(np.float32))


def test_hypot_special_values():
    a, b = _grid()
    got = _call("hypot", a, b)
    _same(got, np.hypot(a.astype(np.float64), b.astype(np.float64)))
    # an infinity beats a NaN, in either place
    assert _call("hypot", np.float32([np.inf, np.nan, -np.inf]), np.float32([np.nan, -np.inf, np.nan])
                 ).tolist() == [np.inf] * 3


def test_xlogy_special_values():
    a, b = _grid()
    got = _call("xlogy", a, b)
    _same(got, _ref("xlogy", a, b).astype(np.float32))


@pytest.mark.parametrize("name", ["pow", "hypot", "xlogy"])
def test_every_tail_and_layout_gives_the_contiguous_bits(name):
    a, b = _inputs(name, 4000, 5)
    a, b = a[:2100], b[:2100]
    with np.errstate(all="ignore"):
        full = _call(name, a, b).view(np.uint32)
        for n in list(range(1, 41)) + [1031]:
            np.testing.assert_array_equal(_call(name, a[:n].copy(), b[:n].copy()).view(np.uint32), full[:n])
        # strided operands (the scalar copy)
        a2, b2 = np.repeat(a, 2), np.repeat(b, 2)
        np.testing.assert_array_equal(
            _call(name, ptcore.from_numpy(a2)[::2], ptcore.from_numpy(b2)[::2]).view(np.uint32), full)
        # a broadcast number on either side, and a Python number
        for k in (0, 7, 1030):
            bk = np.full_like(b, b[k])
            ref = _call(name, a, bk).view(np.uint32)
            np.testing.assert_array_equal(
                _call(name, ptcore.from_numpy(a), ptcore.from_numpy(b[k:k + 1])).view(np.uint32), ref)
            ak = np.full_like(a, a[k])
            ref = _call(name, ak, b).view(np.uint32)
            np.testing.assert_array_equal(
                _call(name, ptcore.from_numpy(a[k:k + 1]), ptcore.from_numpy(b)).view(np.uint32), ref)
    # the special grid in a strided layout too
    ga, gb = _grid()
    with np.errstate(all="ignore"):
        c = _call(name, ga, gb).view(np.uint32)
        s = _call(name, ptcore.from_numpy(np.repeat(ga, 3))[::3],
                  ptcore.from_numpy(np.repeat(gb, 3))[::3]).view(np.uint32)
    np.testing.assert_array_equal(s, c)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["pow", "hypot"])
def test_half_types_go_through_float32(name, dtype):
    a, b = _inputs(name, 2000, 9)
    a = np.clip(a, -100, 100)
    b = np.clip(b, -4, 4) if name == "pow" else np.clip(b, -100, 100)
    dt = getattr(ptcore, dtype)
    ta, tb = ptcore.from_numpy(a).to(dt), ptcore.from_numpy(b).to(dt)
    with np.errstate(all="ignore"):
        got = (ta ** tb if name == "pow" else getattr(ptcore, name)(ta, tb)).float().numpy()
        ref = _call(name, ta.float().numpy(), tb.float().numpy())
        ref = ptcore.from_numpy(ref).to(dt).float().numpy()
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("name", ["pow", "hypot", "xlogy"])
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    a, b = _inputs(name, 200_000, 11)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    with np.errstate(all="ignore"):
        tr = (ta ** tb if name == "pow" else getattr(torch, name)(ta, tb)).numpy()
        got = _call(name, a, b)
        ref = _ref(name, a, b)
    # at least as accurate as torch's, and within an ulp of it
    assert _max_ulp(got, ref) <= _max_ulp(tr, ref) + 1e-6
    fin = np.isfinite(tr) & np.isfinite(got) & (tr != 0)
    assert np.all(np.abs(got[fin].astype(np.float64) - tr[fin]) <= 1.01 * np.spacing(np.abs(tr[fin])))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(tr))
    # special values: torch's results
    ga, gb = _grid()
    with np.errstate(all="ignore"):
        tg = torch.from_numpy(ga), torch.from_numpy(gb)
        tr = (tg[0] ** tg[1] if name == "pow" else getattr(torch, name)(*tg)).numpy()
        got = _call(name, ga, gb)
    # NaN, zeros (with their sign) and infinities where torch's are; other
    # values within an ulp of torch's (they are the nearer to float64's)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(tr))
    exact = (tr == 0) | np.isinf(tr)
    np.testing.assert_array_equal(got[exact], tr[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(tr[exact]))
    rest = np.isfinite(tr) & ~exact
    assert np.all(np.abs(got[rest].astype(np.float64) - tr[rest]) <= np.spacing(np.abs(tr[rest])))


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
outs = {}
for name in ("pow", "hypot", "xlogy"):
    a, b = ptcore.from_numpy(d[name + "_a"]), ptcore.from_numpy(d[name + "_b"])
    outs[name] = (a ** b if name == "pow" else getattr(ptcore, name)(a, b)).numpy()
    c = ptcore.from_numpy(np.float32([1.5]))
    outs[name + "_n"] = (a ** 2.5 if name == "pow" else getattr(ptcore, name)(a, c)).numpy()
np.savez(sys.argv[2], **outs)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    arrs = {}
    for name in ("pow", "hypot", "xlogy"):
        a, b = _inputs(name, 30_000, 13)
        ga, gb = _grid()
        arrs[name + "_a"] = np.concatenate([a, ga])
        arrs[name + "_b"] = np.concatenate([b, gb])
    np.savez(tmp_path / "in.npz", **arrs)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    with np.errstate(all="ignore"):
        for name in ("pow", "hypot", "xlogy"):
            a, b = ptcore.from_numpy(arrs[name + "_a"]), ptcore.from_numpy(arrs[name + "_b"])
            here = (a ** b if name == "pow" else getattr(ptcore, name)(a, b)).numpy()
            np.testing.assert_array_equal(child[name].view(np.uint32), here.view(np.uint32))
            c = ptcore.from_numpy(np.float32([1.5]))
            here = (a ** 2.5 if name == "pow" else getattr(ptcore, name)(a, c)).numpy()
            np.testing.assert_array_equal(child[name + "_n"].view(np.uint32), here.view(np.uint32))
