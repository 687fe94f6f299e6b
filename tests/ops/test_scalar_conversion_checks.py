"""Python-number operands converted with c10's overflow checks, as torch:
addcmul/addcdiv's ``value`` and pow's scalar exponent (which errors, in
which order), and a complex number with a zero imaginary part taken as its
real part; igamma/igammac of half-precision operands."""
import pytest

import ptcore

torch = pytest.importorskip("torch")

_INTS_FLOATS = ("uint8", "int8", "int32", "int64", "float16", "float32", "bfloat16", "float64")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:                  # noqa: BLE001 - the type is compared
        return type(e).__name__
    # NaN compared as a string (nan != nan)
    return str(r.dtype).split(".")[-1], repr(r.float().tolist())


@pytest.mark.parametrize("dt", _INTS_FLOATS)
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_value_checked_as_torch(op, dt):
    values = (-1.5, 1.5, -1, 300, 1e20, float("nan"), float("inf"), 70000.0, 1e39, 1e300, True, 2 + 0j)
    for v in values:
        got = {}
        for L in (torch, ptcore):
            a = L.tensor([1, 2], dtype=getattr(L, dt))
            b = a if op == "addcmul" else L.tensor([2.0, 4.0])
            got[L] = _outcome(lambda: getattr(L, op)(a, a, b, value=v))
        assert got[ptcore] == got[torch], (op, dt, v)


@pytest.mark.parametrize("dt", ("float16", "bfloat16", "float32", "int8", "uint8", "int32"))
def test_pow_scalar_exponent_checked_as_torch(dt):
    for e in (300, -1, 1e10, 70000.0, 1e39, float("inf"), float("nan"), 2.5, -129, 1e300, 2):
        got = {}
        for L in (torch, ptcore):
            a = L.tensor([1, 2], dtype=getattr(L, dt))
            got[L] = _outcome(lambda: L.pow(a, e))
        assert got[ptcore] == got[torch], (dt, e)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        ptcore.pow(ptcore.tensor([1, 2], dtype=ptcore.int8), -129)


def test_complex_value_with_zero_imaginary_part():
    for L in (torch, ptcore):
        u = L.tensor([1, 2], dtype=L.uint8)
        a = L.tensor([1.0, 2.0])
        assert L.addcmul(u, u, u, value=2 + 0j).tolist() == [3, 10]
        assert L.lerp(a, a * 3, 0.5 + 0j).tolist() == [2.0, 4.0]
        with pytest.raises(RuntimeError):
            L.addcmul(a, a, a, value=2 + 1j)


@pytest.mark.parametrize("fn", ["igamma", "igammac"])
@pytest.mark.parametrize("da,db", [("bfloat16", "int8"), ("bfloat16", "float32"), ("bfloat16", "bfloat16"),
                                   ("float16", "bfloat16"), ("uint8", "bfloat16"), ("float64", "bfloat16")])
def test_igamma_half_precision_operands(fn, da, db):
    got = {}
    for L in (torch, ptcore):
        a = L.tensor([1.0, 2.0, 0.5, 3.0]).to(getattr(L, da))
        x = L.tensor([1, 3, 2, 0]).to(getattr(L, db))
        r = getattr(L, fn)(a, x)
        got[L] = (str(r.dtype).split(".")[-1], r.double().tolist())
    assert got[ptcore][0] == got[torch][0]
    assert got[ptcore][1] == pytest.approx(got[torch][1], rel=1e-6, abs=1e-7)
