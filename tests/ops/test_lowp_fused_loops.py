"""float16/bfloat16 add, sub, mul, div, add/sub with alpha, maximum, minimum,
relu, exact gelu, neg and abs of contiguous operands run one-pass loops with the
conversions in registers (ptc_low_ew.h).  Their bits: the float32 operation
of the widened operands, rounded to nearest even (a bfloat16 NaN 0xffff), for
every length (the vector bodies and the scalar tails), operand order
(number first or second), in place and out=, on every CPU path this machine
has (ATEN_CPU_CAPABILITY runs the AVX2 copies and the block path in a child
process), and torch's where torch is installed."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

LOW = ["float16", "bfloat16"]


def _bf16_bits(x32):
    """float32 -> bfloat16 bits, round to nearest even, NaN -> 0xffff."""
    u = np.ascontiguousarray(x32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x32), np.uint16(0xFFFF), r)


def _round_bits(x32, dt):
    if dt == "float16":
        with np.errstate(over="ignore"):
            return np.asarray(x32, dtype=np.float32).astype(np.float16).view(np.uint16)
    return _bf16_bits(np.asarray(x32, dtype=np.float32))


def _values(n, dt, seed):
    """n float32 values exactly representable in dt, with the edge cases."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 30.0], n)).astype(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 6e-8, -3e-5,
                        65504.0, 1e30, -1e-30], dtype=np.float32)
    k = min(n, len(special))
    x[rng.choice(n, k, replace=False)] = special[:k]
    return _widen(_round_bits(x, dt), dt)


def _widen(bits, dt):
    if dt == "float16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _low(x32, dt):
    return ptcore.from_numpy(np.ascontiguousarray(x32)).to(getattr(ptcore, dt))


def _bits(t):
    return t.contiguous().view(ptcore.int16).numpy().view(np.uint16)


def _same(got, want_bits, dt):
    """bit equality, NaN for NaN (float16 NaN payloads are the hardware's)"""
    g, w = _widen(got, dt), _widen(want_bits, dt)
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan)
    np.testing.assert_array_equal(got[~nan], want_bits[~nan])


def _two_roundings():
    """whether add/sub with alpha take torch's scalar form (alpha * b rounded
    first) on every element: its DEFAULT capability (ptcore._ops.lowp_axpy)"""
    from ptcore._cpu_features import get_cpu_capability
    return get_cpu_capability() not in ("AVX2", "AVX512")


def _max(a, b):
    return np.where((a > b) | np.isnan(a), a, b)


def _min(a, b):
    return np.where((a < b) | np.isnan(a), a, b)


def _fma(b, al, a):
    # float32 fma(b, al, a): exact in float64 (a product of two floats is
    # exact there), rounded once to float32 (the sum's double rounding is
    # harmless: float64 keeps 29 more bits than float32 needs + 2)
    with np.errstate(all="ignore"):
        return (b.astype(np.float64) * np.float64(np.float32(al)) + a.astype(np.float64)).astype(np.float32)


# (name, ptcore call, float32 reference); x, y: tensors; a, b: their float32 values
CASES = [
    ("add", lambda x, y: x + y, lambda a, b: a + b),
    ("sub", lambda x, y: x - y, lambda a, b: a - b),
    ("mul", lambda x, y: x * y, lambda a, b: a * b),
    ("div", lambda x, y: x / y, lambda a, b: a / b),
    ("add_alpha", lambda x, y: ptcore.add(x, y, alpha=0.375), lambda a, b: _fma(b, 0.375, a)),
    ("sub_alpha", lambda x, y: ptcore.sub(x, y, alpha=3), lambda a, b: _fma(b, -3.0, a)),
    ("maximum", ptcore.maximum, _max),
    ("minimum", ptcore.minimum, _min),
    ("relu", lambda x, y: x.relu(), lambda a, b: np.where(a < 0, np.float32(0), a)),
    ("mul_number", lambda x, y: x * 0.1, lambda a, b: a * np.float32(0.1)),
    ("div_number", lambda x, y: x / 3.0, lambda a, b: a / np.float32(3.0)),
    ("number_sub", lambda x, y: 2.5 - x, lambda a, b: np.float32(2.5) - a),
    ("add_number", lambda x, y: x + 0.25, lambda a, b: a + np.float32(0.25)),
    # exact gelu: the float32 op's own vector and scalar copies at the same elements
    ("gelu", lambda x, y: ptcore.nn.functional.gelu(x),
     lambda a, b: ptcore.nn.functional.gelu(ptcore.from_numpy(a)).numpy()),
]


@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("name,op,ref", CASES, ids=[c[0] for c in CASES])
def test_fused_loop_bits(dt, name, op, ref):
    lengths = list(range(1, 40)) + [63, 64, 65, 1031]
    if "alpha" in name:
        # torch's scalar loop rounds alpha * b first on the last n % 32
        # elements, and on every one at capability DEFAULT (emulated after the
        # kernel: ptcore._ops.lowp_axpy, tested with it); the kernel's
        # one-rounding form shows on whole vectors
        if _two_roundings():
            pytest.skip("torch's DEFAULT capability rounds alpha * b first everywhere")
        lengths = [32, 64, 96, 1024]
    for n in lengths:
        a = _values(n, dt, n)
        b = _values(n, dt, n + 1000)
        with np.errstate(all="ignore"):
            want = _round_bits(ref(a, b), dt)
        got = op(_low(a, dt), _low(b, dt))
        assert got.dtype == getattr(ptcore, dt) and got.shape == (n,)
        _same(_bits(got), want, dt)


@pytest.mark.parametrize("dt", LOW)
def test_fused_loop_in_place_out_and_2d(dt):
    a = _values(67 * 45, dt, 1).reshape(67, 45)
    b = _values(67 * 45, dt, 2).reshape(67, 45)
    with np.errstate(all="ignore"):
        want = _round_bits(a + b, dt)
        want_m = _round_bits(a * np.float32(0.5), dt)
    x = _low(a, dt)
    r = x.add_(_low(b, dt))
    assert r is x
    _same(_bits(x), want, dt)
    x = _low(a, dt)
    x.mul_(0.5)
    _same(_bits(x), want_m, dt)
    x = _low(a, dt)
    with np.errstate(all="ignore"):
        want_xx = _round_bits(a + a, dt)
    x.add_(x)
    _same(_bits(x), want_xx, dt)
    o = ptcore.empty(67, 45, dtype=getattr(ptcore, dt))
    r = ptcore.add(_low(a, dt), _low(b, dt), out=o)
    assert r is o
    _same(_bits(o), want, dt)
    # a wider out= takes the general path: the float16 result, then widened
    o32 = ptcore.empty(67, 45)
    ptcore.add(_low(a, dt), _low(b, dt), out=o32)
    _same(_round_bits(o32.numpy(), dt), want, dt)


@pytest.mark.parametrize("dt", LOW)
def test_fused_loop_threads_split_the_same_bits(dt):
    n = 300_007
    a = _values(n, dt, 5)
    b = _values(n, dt, 6)
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        with np.errstate(all="ignore"):
            want = _round_bits(a / b, dt)
            # (gelu's scalar and vector copies differ in the last bit: the tails
            # of the thread chunks must fall where one thread's do)
            want_gelu = _round_bits(ptcore.nn.functional.gelu(ptcore.from_numpy(a)).numpy(), dt)
        for nt in (1, 2, 3):
            ptcore.set_num_threads(nt)
            _same(_bits(_low(a, dt) / _low(b, dt)), want, dt)
            _same(_bits(ptcore.nn.functional.gelu(_low(a, dt))), want_gelu, dt)
    finally:
        ptcore.set_num_threads(old)


@pytest.mark.parametrize("dt", LOW)
def test_neg_abs_are_sign_bits(dt):
    for n in (1, 15, 16, 17, 31, 32, 33, 1031):
        bits = np.random.default_rng(n).integers(0, 1 << 16, n).astype(np.uint16)
        x = ptcore.from_numpy(bits.view(np.int16)).view(getattr(ptcore, dt))
        np.testing.assert_array_equal(_bits(-x), bits ^ 0x8000)
        np.testing.assert_array_equal(_bits(x.abs()), bits & 0x7FFF)


@pytest.mark.parametrize("dt", LOW)
def test_fused_loops_match_torch(dt):
    torch = pytest.importorskip("torch")
    n = 1031
    a = _values(n, dt, 11)
    b = _values(n, dt, 12)
    tdt = getattr(torch, dt)
    ta = torch.from_numpy(a).to(tdt)
    tb = torch.from_numpy(b).to(tdt)
    pa, pb = _low(a, dt), _low(b, dt)

    def tbits(t):
        return t.view(torch.int16).numpy().view(np.uint16)
    for name, p, t in [("add", pa + pb, ta + tb), ("sub", pa - pb, ta - tb),
                       ("mul", pa * pb, ta * tb), ("div", pa / pb, ta / tb),
                       ("alpha", ptcore.add(pa, pb, alpha=0.375), torch.add(ta, tb, alpha=0.375)),
                       ("max", ptcore.maximum(pa, pb), torch.maximum(ta, tb)),
                       ("min", ptcore.minimum(pa, pb), torch.minimum(ta, tb)),
                       ("relu", pa.relu(), ta.relu()), ("mul_number", pa * 0.1, ta * 0.1),
                       ("neg", -pa, -ta)]:
        _same(_bits(p), tbits(t), dt)


_CHILD = """
import sys, numpy as np, ptcore
a = np.load(sys.argv[1]); b = np.load(sys.argv[2])
out = {}
for dt in ("float16", "bfloat16"):
    d = getattr(ptcore, dt)
    x = ptcore.from_numpy(a).to(d); y = ptcore.from_numpy(b).to(d)
    res = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y,
           "alpha": ptcore.add(x, y, alpha=0.375), "max": ptcore.maximum(x, y),
           "min": ptcore.minimum(x, y), "relu": x.relu(), "muln": x * 0.1, "nsub": 2.5 - x,
           "neg": -x, "abs": x.abs(), "exp": x.exp(), "gelu": ptcore.nn.functional.gelu(x)}
    for k, v in res.items():
        out[dt + k] = v.view(ptcore.int16).numpy()
np.savez(sys.argv[3], **out)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    """The AVX2 copies (ATEN_CPU_CAPABILITY=avx2) and, without a vector
    level, the float32 loop on converted blocks give this process's bits."""
    from ptcore._cpu_features import detect_cpu_capability
    have = detect_cpu_capability()
    if cap == "avx2" and have == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    if cap == have.lower():
        pytest.skip("the capability this process runs")
    n = 1031
    a = _values(n, "float16", 21) * np.float32(1.7)
    b = _values(n, "float16", 22)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                    str(tmp_path / "c.npz")], env=env, check=True, timeout=600)
    child = dict(np.load(tmp_path / "c.npz"))
    for dt in LOW:
        if cap == "default" or _two_roundings():
            # torch's generic vector rounds alpha * b first (lowp_axpy's emulation)
            child = {k: v for k, v in child.items() if not k.endswith("alpha")}
        d = getattr(ptcore, dt)
        x = ptcore.from_numpy(a).to(d)
        y = ptcore.from_numpy(b).to(d)
        res = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y,
               "alpha": ptcore.add(x, y, alpha=0.375), "max": ptcore.maximum(x, y),
               "min": ptcore.minimum(x, y), "relu": x.relu(), "muln": x * 0.1, "nsub": 2.5 - x,
               "neg": -x, "abs": x.abs(), "exp": x.exp(), "gelu": ptcore.nn.functional.gelu(x)}
        for k, v in res.items():
            if dt + k not in child:
                continue
            np.testing.assert_array_equal(child[dt + k], v.view(ptcore.int16).numpy(),
                                          err_msg=dt + k)


_GELU_EVERY = """
import numpy as np, ptcore
bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.int16)
for dt in (ptcore.float16, ptcore.bfloat16):
    a = ptcore.from_numpy(bits.copy()).view(dt)
    got = ptcore.nn.functional.gelu(a).view(ptcore.int16).numpy()
    want = ptcore.nn.functional.gelu(a.float()).to(dt).view(ptcore.int16).numpy()
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (str(dt), bits[bad[:5]])
"""


@pytest.mark.parametrize("cap", ["native", "avx2"])
def test_gelu_of_every_half_value_is_the_float32_ops_rounded(cap):
    # every float16 and bfloat16 bit pattern: the one-pass loop (its vectors
    # contracted to FMA as the float32 loop's) against the float32 op rounded
    if cap == "native":
        exec(_GELU_EVERY, {})
    else:
        skip_unless_runnable(cap)
        run_child(cap, _GELU_EVERY)
