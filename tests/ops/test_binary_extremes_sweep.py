"""The binary ops at the edges of every dtype, against torch (issue 61, 7).

Each integer dtype (uint8, int8, int16, int32, int64 and the limited uint16,
uint32, uint64) pairs its extremes with each other and with small values
(min, min + 1, -3 .. 3, 7, max - 1, max); each floating dtype (float16,
bfloat16, float32, float64) pairs -inf, -max, -2.5, -1, -tiny, -0.0, 0.0,
tiny, a subnormal, 0.5, 1, 2, 3, max, inf and NaN.  Every pair goes through
each binary op with both operands of that dtype; values, signed zeros, NaN
positions and the result dtype are compared with torch (exactly for exact
ops, to 2 ulp-ish for the transcendental ones), exceptions by type.

Where torch itself is undefined, the pairs are not compared with torch and
ptcore's choice is asserted instead (see the tests named for each case):

* integer division and remainder by zero raise RuntimeError in both;
* ``div(MIN, -1, rounding_mode='trunc')`` of int32/int64 traps in torch
  (SIGFPE, the x86 idiv overflow); ptcore wraps to MIN, as torch's floor
  division and int8/int16 do;
* ``lcm`` of int32/int64 with a MIN operand: torch's ``a / gcd * b`` may trap
  (gcd == -1) or wrap; ptcore follows the same formula with wrapping
  arithmetic (MIN / -1 == MIN);
* float ``fmod``/``remainder`` whose quotient overflows the type (2.0 by a
  subnormal): torch's SIMD body returns NaN, its scalar tail the exact C
  value; ptcore gives the exact value, compared with torch's scalar path;
* ``maximum``/``minimum`` of a -0.0/+0.0 tie: torch's SIMD body returns the
  second operand, its scalar tail the first; ptcore returns the second at
  every size, compared with torch's SIMD body.  ``clamp`` with tensor bounds
  on such a tie: ptcore returns the input (torch's scalar tail, and torch's
  answer for number bounds at every size); those ties are left out.
"""
import itertools
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]

# (op, keyword arguments, exact)
OPS = [
    ("add", {}, True), ("sub", {}, True), ("mul", {}, True), ("div", {}, True),
    ("div", {"rounding_mode": "trunc"}, True), ("div", {"rounding_mode": "floor"}, True),
    ("true_divide", {}, True), ("floor_divide", {}, True), ("remainder", {}, True),
    ("fmod", {}, True), ("pow", {}, False), ("float_power", {}, False),
    ("bitwise_and", {}, True), ("bitwise_or", {}, True), ("bitwise_xor", {}, True),
    ("bitwise_left_shift", {}, True), ("bitwise_right_shift", {}, True),
    ("gcd", {}, True), ("lcm", {}, True), ("maximum", {}, True), ("minimum", {}, True),
    ("fmax", {}, True), ("fmin", {}, True), ("copysign", {}, True), ("nextafter", {}, True),
    ("hypot", {}, False), ("atan2", {}, False), ("xlogy", {}, False), ("logaddexp", {}, False),
    ("logaddexp2", {}, False), ("eq", {}, True), ("ne", {}, True), ("lt", {}, True),
    ("le", {}, True), ("gt", {}, True), ("ge", {}, True), ("clamp_min", {}, True),
    ("clamp_max", {}, True),
]

_INT_DIV = {"floor_divide", "remainder", "fmod"}


def _int_values(name):
    info = np.iinfo(name)
    lo, hi = int(info.min), int(info.max)
    return sorted(v for v in {lo, lo + 1, -3, -2, -1, 0, 1, 2, 3, 7, hi - 1, hi} if lo <= v <= hi)


def _float_values(name):
    fi = torch.finfo(getattr(torch, name))
    return [-math.inf, -fi.max, -2.5, -1.0, -fi.tiny, -0.0, 0.0, fi.tiny, fi.tiny / 4, 0.5, 1.0,
            2.0, 3.0, fi.max, math.inf, math.nan]


def _pairs(name):
    vals = _int_values(name) if name in INT_DTYPES else _float_values(name)
    return [p for p in itertools.product(vals, vals)]


def _call(lib, op, kw, a, b):
    if op == "clamp_min":
        return lib.clamp(a, min=b)
    if op == "clamp_max":
        return lib.clamp(a, max=b)
    return getattr(lib, op)(a, b, **kw)


def _outcome(lib, op, kw, name, pairs, repeat=1):
    dt = getattr(lib, name)
    a = lib.tensor([p[0] for p in pairs] * repeat, dtype=dt)
    b = lib.tensor([p[1] for p in pairs] * repeat, dtype=dt)
    try:
        r = _call(lib, op, kw, a, b)
    except Exception as e:      # noqa: BLE001 - compared with torch's
        return type(e).__name__, None
    return str(r.dtype).split(".")[-1], r[:len(pairs)].tolist()


def _same(x, y, exact):
    if isinstance(x, float) or isinstance(y, float):
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if x == y:      # (an inexact op may round a tiny result to either zero)
            return x != 0 or not exact or math.copysign(1, x) == math.copysign(1, y)
        return not exact and math.isfinite(x) and math.isfinite(y) and \
            abs(x - y) <= 1e-6 * max(abs(x), abs(y)) + 1e-7
    return x == y and type(x) is type(y)


def _excluded(op, kw, name, a, b):
    """Pairs where torch is undefined (checked by the tests below instead)."""
    if name in INT_DTYPES:
        lo = int(np.iinfo(name).min)
        if (op in _INT_DIV or (op == "div" and kw)) and (b == 0 or (a == lo and b == -1)):
            return True
        if op == "pow" and b < 0:       # torch: integers to negative integer powers raise
            return True
        if op == "lcm" and name in ("int32", "int64") and lo in (a, b):
            return True
    else:
        if op in ("fmod", "remainder") and b != 0 and math.isfinite(a) and math.isfinite(b) \
                and abs(a / b) > torch.finfo(getattr(torch, name)).max:
            return True                 # compared on torch's scalar path below
        if op in ("maximum", "minimum") and a == 0 and b == 0:
            return True                 # compared on torch's SIMD body below
        if op in ("clamp_min", "clamp_max") and a == 0 and b == 0 and \
                math.copysign(1, a) != math.copysign(1, b):
            return True
    return False


@pytest.mark.parametrize("name", INT_DTYPES + FLOAT_DTYPES)
def test_binary_ops_at_the_extremes_match_torch(name):
    differ = []
    for op, kw, exact in OPS:
        pairs = [p for p in _pairs(name) if not _excluded(op, kw, name, *p)]
        mine = _outcome(ptcore, op, kw, name, pairs)
        theirs = _outcome(torch, op, kw, name, pairs)
        label = op + (f"({kw})" if kw else "")
        if mine[1] is None or theirs[1] is None or mine[0] != theirs[0]:
            if mine[0] != theirs[0]:
                differ.append((label, "outcome", mine[0], theirs[0]))
            continue
        bad = [(pairs[i], x, y) for i, (x, y) in enumerate(zip(mine[1], theirs[1]))
               if not _same(x, y, exact)]
        if bad:
            differ.append((label, len(bad), bad[:4]))
    assert not differ, differ


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_fmod_and_remainder_with_an_overflowing_quotient_are_exact(name):
    """torch's SIMD fmod/remainder compute a - trunc(a / b) * b (NaN once a / b
    overflows); its scalar path, and ptcore, the exact C fmod."""
    fmax = torch.finfo(getattr(torch, name)).max
    pairs = [p for p in _pairs(name) if p[1] != 0 and math.isfinite(p[0]) and
             math.isfinite(p[1]) and abs(p[0] / p[1]) > fmax]
    assert pairs
    for op in ("fmod", "remainder"):
        for a, b in pairs:
            mine = getattr(ptcore, op)(ptcore.tensor([a], dtype=getattr(ptcore, name)),
                                       ptcore.tensor([b], dtype=getattr(ptcore, name))).item()
            theirs = getattr(torch, op)(torch.tensor([a], dtype=getattr(torch, name)),
                                        torch.tensor([b], dtype=getattr(torch, name))).item()
            assert _same(mine, theirs, True), (op, a, b, mine, theirs)
            assert mine == math.fmod(a, b) or op == "remainder"


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_maximum_minimum_signed_zero_ties_are_torchs_simd_answer(name):
    """The second operand, at every size (torch: the second in its SIMD body, the
    first in its scalar tail: compared on 64 copies, all in the body)."""
    pairs = [(-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0)]
    for op in ("maximum", "minimum"):
        theirs = _outcome(torch, op, {}, name, pairs, repeat=64)[1]
        for repeat in (1, 3, 64):
            mine = _outcome(ptcore, op, {}, name, pairs, repeat=repeat)[1]
            assert [math.copysign(1, v) for v in mine] == [math.copysign(1, v) for v in theirs]
            assert [math.copysign(1, v) for v in mine] == [1.0, -1.0, -1.0, 1.0]


def test_clamp_by_a_number_keeps_the_input_on_a_signed_zero_tie_as_torch():
    for name in FLOAT_DTYPES:
        for lib in (ptcore, torch):
            x = lib.tensor([-0.0, 0.0] * 32, dtype=getattr(lib, name))
            for kw in ({"min": 0.0}, {"min": -0.0}, {"max": 0.0}, {"max": -0.0}):
                r = lib.clamp(x, **kw)[:2].tolist()
                assert [math.copysign(1, v) for v in r] == [-1.0, 1.0], (lib.__name__, name, kw)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_integer_division_edges_where_torch_is_undefined(name):
    """By zero: RuntimeError (torch's CPU kernels raise ZeroDivisionError as a
    RuntimeError).  MIN by -1: floor division wraps to MIN and the remainders
    are 0 as torch's; truncating division wraps to MIN too (torch traps for
    int32/int64, wraps for int8/int16)."""
    lo = int(np.iinfo(name).min)
    dt = getattr(ptcore, name)
    a = ptcore.tensor([lo, 5], dtype=dt)
    for op, kw in (("floor_divide", {}), ("remainder", {}), ("fmod", {}),
                   ("div", {"rounding_mode": "trunc"}), ("div", {"rounding_mode": "floor"})):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            getattr(ptcore, op)(a, ptcore.zeros(2, dtype=dt), **kw)
        r = getattr(ptcore, op)(a, ptcore.tensor([-1, -1], dtype=dt), **kw).tolist()
        assert r == ([0, 0] if op in ("remainder", "fmod") else [lo, -5]), (op, kw, r)
        if name in ("int8", "int16") or op != "div" or kw["rounding_mode"] == "floor":
            t = getattr(torch, name)
            ref = getattr(torch, op)(torch.tensor([lo, 5], dtype=t),
                                     torch.tensor([-1, -1], dtype=t), **kw).tolist()
            assert r == ref, (op, kw)


def _wrap(v, bits):
    """``v`` in ``bits``-bit two's complement."""
    return (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def _trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _c_gcd(a, b, bits):
    """c10's calc_gcd in ``bits``-bit two's complement (C's truncating %)."""
    a, b = _wrap(abs(a), bits), _wrap(abs(b), bits)
    while a != 0:
        a, b = _wrap(b - a * _trunc_div(b, a), bits), a
    return b


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_gcd_and_lcm_at_the_minimum(name):
    """gcd follows c10's Euclid on two's-complement absolute values: a MIN operand
    gives torch's signed results (gcd(-3, -2**63) == 1, gcd(-128, -127) == -1 in
    int8).  lcm is torch's |a / gcd * b|, wrapping for int32/int64 (where torch
    itself may trap)."""
    bits = np.iinfo(name).bits
    lo = int(np.iinfo(name).min)
    vals = _int_values(name)
    pairs = [(a, b) for a in vals for b in vals if lo in (a, b)]
    dt = getattr(ptcore, name)
    a = ptcore.tensor([p[0] for p in pairs], dtype=dt)
    b = ptcore.tensor([p[1] for p in pairs], dtype=dt)
    g = ptcore.gcd(a, b).tolist()
    assert g == [_c_gcd(x, y, bits) for x, y in pairs]
    t = getattr(torch, name)
    assert g == torch.gcd(torch.tensor([p[0] for p in pairs], dtype=t),
                          torch.tensor([p[1] for p in pairs], dtype=t)).tolist()
    assert ptcore.gcd(ptcore.tensor([-3]), ptcore.tensor([-2 ** 63])).item() == 1
    expect = []
    for (x, y), gg in zip(pairs, g):
        if gg == 0:
            expect.append(0)
        elif bits < 32:        # C's int arithmetic, the abs before narrowing
            expect.append(_wrap(abs(_trunc_div(x, gg) * y), bits))
        else:                  # wrapping arithmetic
            expect.append(_wrap(abs(_wrap(_wrap(_trunc_div(x, gg), bits) * y, bits)), bits))
    assert ptcore.lcm(a, b).tolist() == expect
    if bits < 32:              # torch is defined here
        assert expect == torch.lcm(torch.tensor([p[0] for p in pairs], dtype=t),
                                   torch.tensor([p[1] for p in pairs], dtype=t)).tolist()


@pytest.mark.parametrize("name", FLOAT_DTYPES)
@pytest.mark.parametrize("edt", ["int8", "int16", "int32", "int64", "uint8", "float32"])
def test_ldexp_with_extreme_exponents_matches_torch(name, edt):
    """torch's ldexp is x * 2**e computed in x's type: an integer exponent beyond
    the range gives inf/0 (it is not reduced modulo 2**32 or 2**64)."""
    xs = [-math.inf, -3.0, -1.0, -0.0, 0.0, 1.5, 3.0, math.inf, math.nan]
    if edt.startswith(("int", "uint")):
        info = np.iinfo(edt)
        es = sorted(v for v in {int(info.min), int(info.min) + 1, -1075, -1074, -150, -149,
                                -127, -1, 0, 1, 127, 128, 1023, 1024, int(info.max) - 1,
                                int(info.max)} if info.min <= v <= info.max)
    else:
        es = [-math.inf, -1e10, -200.5, -0.5, 0.0, 0.5, 127.0, 128.0, 1e10, math.inf, math.nan]
    pairs = list(itertools.product(xs, es))

    def run(lib):
        x = lib.tensor([p[0] for p in pairs], dtype=getattr(lib, name))
        e = lib.tensor([p[1] for p in pairs], dtype=getattr(lib, edt))
        r = lib.ldexp(x, e)
        return str(r.dtype).split(".")[-1], r.tolist()
    mine, theirs = run(ptcore), run(torch)
    assert mine[0] == theirs[0]
    bad = [(pairs[i], x, y) for i, (x, y) in enumerate(zip(mine[1], theirs[1]))
           if not _same(x, y, False)]
    assert not bad, bad[:6]
