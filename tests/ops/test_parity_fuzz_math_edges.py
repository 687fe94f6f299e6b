"""Pointwise math at edge values, dtype rules and out= checks against torch
(found by differential fuzzing of ptcore against torch 2.13 on the CPU)."""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pt(t):
    if t.dtype == torch.bfloat16:
        return ptcore.from_numpy(t.view(torch.int16).numpy().copy()).view(ptcore.bfloat16)
    return ptcore.from_numpy(t.numpy().copy())


def _np(t):
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def _dt(torch_dtype):
    return getattr(ptcore, str(torch_dtype).split(".")[1])


def _same(tr, pr, rtol=1e-12):
    assert str(pr.dtype).split(".")[1] == str(tr.dtype).split(".")[1]
    assert tuple(pr.shape) == tuple(tr.shape)
    np.testing.assert_allclose(_np(pr), _np(tr), rtol=rtol, atol=0, equal_nan=True)


def _raises_same(tf, pf):
    with pytest.raises(Exception) as te:
        tf()
    with pytest.raises(type(te.value)):
        pf()


# ---------------------------------------------------------------------------
# round(decimals): past the double range 10**decimals is inf, every element
# rounds to nan (ptcore raised Python's OverflowError)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("decimals", [39, 300, 308, 309, 400, -39, -308, -309, -400])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_round_decimals_beyond_range(decimals, dtype):
    t = torch.tensor([0.5, 1.5, 12345.678, -0.0, 1e300, math.inf, math.nan, 1e-300],
                     dtype=torch.float64).to(dtype)
    _same(torch.round(t, decimals=decimals), ptcore.round(_pt(t), decimals=decimals))
    _same(t.clone().round_(decimals=decimals), _pt(t).round_(decimals=decimals))


# ---------------------------------------------------------------------------
# out= dtype checks of the composite pointwise ops (ptcore wrote a float
# result into an integer or bool out, truncating it; or raised the kernel's
# NotImplementedError where torch first refuses the out's dtype)
# ---------------------------------------------------------------------------

_OUT_CASES = {
    "sinc": (lambda m, x, o: m.sinc(x, out=o)),
    "special.sinc": (lambda m, x, o: m.special.sinc(x, out=o)),
    "polygamma1": (lambda m, x, o: m.polygamma(1, x, out=o)),
    "polygamma0": (lambda m, x, o: m.polygamma(0, x, out=o)),
    "mvlgamma": (lambda m, x, o: m.mvlgamma(x, 2, out=o)),
    "ldexp": (lambda m, x, o: m.ldexp(x, x, out=o)),
    "ldexp_float_exp": (lambda m, x, o: m.ldexp(x, x.float(), out=o)),
    "logaddexp": (lambda m, x, o: m.logaddexp(x, x, out=o)),
    "logaddexp2": (lambda m, x, o: m.logaddexp2(x, x, out=o)),
    "gcd": (lambda m, x, o: m.gcd(x, x, out=o)),
    "lcm": (lambda m, x, o: m.lcm(x, x, out=o)),
    "bitwise_and": (lambda m, x, o: m.bitwise_and(x, x, out=o)),
    "bitwise_xor": (lambda m, x, o: m.bitwise_xor(x, 3, out=o)),
    "bitwise_left_shift": (lambda m, x, o: m.bitwise_left_shift(x, x, out=o)),
    "hypot": (lambda m, x, o: m.hypot(x, x, out=o)),
    "nextafter": (lambda m, x, o: m.nextafter(x, x + 1, out=o)),
    "float_power": (lambda m, x, o: m.float_power(x, 2, out=o)),
    "float_power_t": (lambda m, x, o: m.float_power(x, x, out=o)),
}


@pytest.mark.parametrize("case", sorted(_OUT_CASES))
@pytest.mark.parametrize("in_dtype", [torch.int64, torch.uint8, torch.float32, torch.float16,
                                      torch.float64, torch.bool])
@pytest.mark.parametrize("out_dtype", [torch.int64, torch.bool, torch.float32, torch.float16,
                                       torch.float64])
def test_out_dtype_checks(case, in_dtype, out_dtype):
    f = _OUT_CASES[case]
    t = torch.tensor([3, 4, 5]).to(in_dtype)
    p = _pt(t)
    to = torch.empty(0, dtype=out_dtype)
    po = ptcore.empty(0, dtype=_dt(out_dtype))
    try:
        tr = f(torch, t, to)
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        with pytest.raises(type(e)):
            f(ptcore, p, po)
        return
    pr = f(ptcore, p, po)
    assert pr is po
    _same(tr, pr, rtol=1e-3 if out_dtype == torch.float16 else 1e-6)


def test_mvlgamma_bool_refused():
    _raises_same(lambda: torch.mvlgamma(torch.tensor([True]), 1),
                 lambda: ptcore.mvlgamma(ptcore.tensor([True]), 1))


def test_nextafter_half_out_resized():
    a = torch.tensor([1.0, 2.0, 0.0], dtype=torch.float16)
    b = torch.tensor([2.0, 1.0, -1.0], dtype=torch.float16)
    for od in (torch.float16, torch.float32, torch.float64):
        to, po = torch.empty(0, dtype=od), ptcore.empty(0, dtype=_dt(od))
        torch.nextafter(a, b, out=to)
        assert ptcore.nextafter(_pt(a), _pt(b), out=po) is po
        _same(to, po)


def test_clamp_bool_tensor_bounds_refused():
    a, lo, hi = torch.tensor([True, False]), torch.tensor([False, False]), torch.tensor([True, True])
    _raises_same(lambda: torch.clamp(a, lo, hi), lambda: ptcore.clamp(_pt(a), _pt(lo), _pt(hi)))
    _raises_same(lambda: a.clone().clamp_(lo, hi), lambda: _pt(a).clamp_(_pt(lo), _pt(hi)))
    _same(torch.clamp(a, None, lo), ptcore.clamp(_pt(a), None, _pt(lo)))


# ---------------------------------------------------------------------------
# gradients at edge values (float64), torch's formulas
# ---------------------------------------------------------------------------

_EDGE = [0.0, -0.0, 1e-300, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, 1e300, math.inf, -math.inf,
         math.nan]
_PAIRS_X = [a for a in _EDGE for _ in _EDGE]
_PAIRS_Y = [b for _ in _EDGE for b in _EDGE]


def _grads(f, mod, *vals):
    xs = [mod.tensor(v, dtype=mod.float64, requires_grad=True) for v in vals]
    return mod.autograd.grad(f(mod, *xs).sum(), xs)


def _same_grads(f, *vals):
    for tg, pg in zip(_grads(f, torch, *vals), _grads(f, ptcore, *vals)):
        np.testing.assert_allclose(pg.detach().numpy(), tg.numpy(), rtol=1e-12, atol=1e-290,
                                   equal_nan=True)


@pytest.mark.parametrize("name", [
    "acosh",            # rsqrt(x*x - 1) for real x: finite below -1 (was nan)
    "sinc",             # 0 where pi x**2 underflows (was -inf at 1e-300)
    "asinh", "atanh", "asin", "acos", "sqrt", "rsqrt", "abs", "log", "reciprocal", "sign",
    "erfinv", "lgamma", "trunc", "frac", "expm1", "log1p", "nan_to_num",
])
def test_unary_grad_edges(name):
    _same_grads(lambda m, x: getattr(m, name)(x), _EDGE)


@pytest.mark.parametrize("name", [
    "div",              # -g * ((a / b) / b): a tiny b gave nan/-inf (a / (b * b))
    "remainder",        # -g * floor-div(a, b): 0.5 rem -inf gave 0 (torch 1)
    "fmod", "pow", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin", "xlogy",
    "copysign", "mul",
])
def test_binary_grad_edges(name):
    _same_grads(lambda m, a, b: getattr(m, name)(a, b), _PAIRS_X, _PAIRS_Y)


@pytest.mark.parametrize("base", [0, 0.0, 2, 0.5, -1, -2.5])
def test_pow_number_base_grad(base):
    # 0 ** x for x < 0: torch's y * log(0) = -inf (was 0); a negative base:
    # nan (ptcore raised math's ValueError)
    _same_grads(lambda m, x: base ** x, _EDGE)
    _same_grads(lambda m, x: m.pow(base, x), _EDGE)


@pytest.mark.parametrize("lo,hi", [(1.0, 1.0), (2.0, 1.0), (0.0, 1.0), (-1.0, 1.0)])
def test_clamp_tensor_bounds_grad(lo, hi):
    # torch: min gets no gradient unless min < max; max gets it wherever max < min
    n = len(_EDGE)
    _same_grads(lambda m, x, a, b: m.clamp(x, a, b), _EDGE, [lo] * n, [hi] * n)


def test_clamp_one_tensor_bound_grad():
    _same_grads(lambda m, x, a: m.clamp(x, a), _PAIRS_X, _PAIRS_Y)
    _same_grads(lambda m, x, b: m.clamp(x, None, b), _PAIRS_X, _PAIRS_Y)


@pytest.mark.parametrize("name", ["gcd_", "lcm_", "igamma_", "igammac_"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool, torch.float32])
@pytest.mark.parametrize("other", [torch.tensor([2.0, 3.0], dtype=torch.float64),
                                   torch.tensor([2, 3]), 2, 2.5])
def test_inplace_int_binary_checks(name, dtype, other):
    # torch: a number other is a TypeError; then the promoted type's cast to
    # self's dtype (RuntimeError) before the kernel's dtype support
    t = torch.tensor([4, 6]).to(dtype)
    o = _pt(other) if isinstance(other, torch.Tensor) else other
    try:
        tr = getattr(t.clone(), name)(other)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            getattr(_pt(t), name)(o)
        return
    _same(tr, getattr(_pt(t), name)(o), rtol=1e-6)


def test_airy_ai_far_left():
    # SciPy's AMOS gave nan below about -1.3e6 where torch's asymptotic form
    # is finite
    x = torch.tensor([-2e6, -2e7, -1e10, -1e20, -1e200, -1e300, -math.inf,
                      -2.0, 0.0, 50.0, math.inf, math.nan], dtype=torch.float64)
    tr, pr = torch.special.airy_ai(x), ptcore.special.airy_ai(_pt(x))
    amp = np.maximum(np.abs(x.numpy()), 1.0) ** -0.25      # (the oscillation's envelope)
    np.testing.assert_allclose(pr.numpy() / amp, tr.numpy() / amp, rtol=0, atol=1e-12,
                               equal_nan=True)


_SPECIAL_OUT = {
    "airy_ai": lambda m, x, o: m.special.airy_ai(x, out=o),
    "entr": lambda m, x, o: m.special.entr(x, out=o),
    "ndtr": lambda m, x, o: m.special.ndtr(x, out=o),
    "i1e": lambda m, x, o: m.special.i1e(x, out=o),
    "zeta": lambda m, x, o: m.special.zeta(x, x, out=o),
    "zeta_number": lambda m, x, o: m.special.zeta(2, x, out=o),
    "xlog1py": lambda m, x, o: m.special.xlog1py(x, x, out=o),
    "chebyshev_t": lambda m, x, o: m.special.chebyshev_polynomial_t(x, 3, out=o),
    "gammainc": lambda m, x, o: m.special.gammainc(x, x, out=o),
    "igammac": lambda m, x, o: m.igammac(x, x, out=o),
    "round": lambda m, x, o: m.special.round(x, out=o),
}


@pytest.mark.parametrize("case", sorted(_SPECIAL_OUT))
@pytest.mark.parametrize("in_dtype", [torch.int64, torch.bool, torch.float16, torch.float32,
                                      torch.float64])
@pytest.mark.parametrize("out_dtype", [torch.int64, torch.bool, torch.float32, torch.complex64])
def test_special_out_dtype_checks(case, in_dtype, out_dtype):
    # torch: a real result goes into a complex out; an integer/bool out is
    # refused before the kernel's dtype support ("not implemented for 'Half'")
    f = _SPECIAL_OUT[case]
    t = torch.tensor([1, 2, 3]).to(in_dtype)
    to, po = torch.empty(0, dtype=out_dtype), ptcore.empty(0, dtype=_dt(out_dtype))
    try:
        f(torch, t, to)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            f(ptcore, _pt(t), po)
        return
    assert f(ptcore, _pt(t), po) is po
    np.testing.assert_allclose(po.numpy(), to.numpy(), rtol=1e-3, equal_nan=True)


def test_igamma_shape_error_before_dtype():
    a, b = torch.tensor([1, 2, 3, 4]), torch.tensor([1, 2, 3])
    _raises_same(lambda: torch.igamma(a, b), lambda: ptcore.igamma(_pt(a), _pt(b)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_ldexp_rounds_once(dtype):
    # torch's ldexp is C's: 2**e may overflow/underflow where x * 2**e does
    # not (ldexp(0.5, 16) in float16 is 32768, was inf; ldexp(0, 1000) is 0,
    # was nan; ldexp(inf, -1000) inf, was nan); the exponent is a C int
    info = torch.finfo(dtype)
    x = torch.tensor([0.5, 0.75, 1.5, -3.0, 0.0, -0.0, math.inf, -math.inf, math.nan,
                      info.max, info.tiny, info.tiny * info.eps, info.tiny * 3 * info.eps],
                     dtype=torch.float64).to(dtype)
    m, e = torch.frexp(x)
    _same(torch.ldexp(m, e), ptcore.ldexp(_pt(m), _pt(e)), rtol=0)
    for ex in [16, 17, -25, 127, 128, 1000, -1000, 1023, 1024, -1074, -1075, 2 ** 40, -2 ** 33]:
        for edt in (torch.int64, torch.int32):
            if edt == torch.int32 and abs(ex) >= 2 ** 31:
                continue
            et = torch.tensor([ex], dtype=edt)
            _same(torch.ldexp(x, et), ptcore.ldexp(_pt(x), _pt(et)), rtol=0)
            _same(x.clone().ldexp_(et), _pt(x).ldexp_(_pt(et)), rtol=0)


@pytest.mark.parametrize("call", [
    lambda m, t: m.addcmul(t, t, t, value=2 ** 70),
    lambda m, t: m.addcdiv(t, t, t, value=-2 ** 70),
    lambda m, t: t.addcmul_(t, t, value=2 ** 64),
    lambda m, t: t.addcdiv_(t, t, value=2 ** 65),
])
def test_addc_value_out_of_int64_range(call):
    # torch's argument parser refuses a Python int beyond (u)int64 (ptcore
    # used it as a float)
    _raises_same(lambda: call(torch, torch.tensor([1.0, 2.0])),
                 lambda: call(ptcore, ptcore.tensor([1.0, 2.0])))


@pytest.mark.parametrize("call", [
    lambda m, x: m.polygamma(True, x),
    lambda m, x: m.polygamma(1.0, x),
    lambda m, x: m.round(x, decimals=1.5),
    lambda m, x: m.round(x, decimals=True),
    lambda m, x: x.clone().round_(decimals=2.0),
    lambda m, x: m.special.round(x, decimals=False),
])
def test_int_argument_types(call):
    # torch's parser: polygamma's n and round's decimals are ints (a bool or
    # a float is a TypeError; ptcore took them as ints)
    _raises_same(lambda: call(torch, torch.tensor([1.25, 2.5])),
                 lambda: call(ptcore, ptcore.tensor([1.25, 2.5])))


def test_round_decimals_index_types():
    t = torch.tensor([1.2345, -2.5])
    _same(torch.round(t, decimals=np.int64(2)), ptcore.round(_pt(t), decimals=np.int64(2)))
    _same(torch.round(t, decimals=torch.tensor(1)), ptcore.round(_pt(t), decimals=ptcore.tensor(1)))


@pytest.mark.parametrize("n", [2, 3])
def test_polygamma_bfloat16(n):
    # n >= 2 on bfloat16 raised TypeError (NumPy has no bfloat16)
    t = torch.tensor([0.5, 1.5, 3.0, -2.5, 10.0], dtype=torch.bfloat16)
    np.testing.assert_allclose(_np(ptcore.polygamma(n, _pt(t))), _np(torch.polygamma(n, t)),
                               rtol=1e-2)
    assert ptcore.polygamma(n, _pt(t)).dtype is ptcore.bfloat16


def test_mvlgamma_complex_refused():
    t = torch.tensor([2.0, 3.0], dtype=torch.complex64)
    _raises_same(lambda: torch.mvlgamma(t, 2), lambda: ptcore.mvlgamma(_pt(t), 2))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("weight", [1e39, -1e300, 70000.0, math.inf, 2 ** 70])
def test_lerp_number_weight_range(dtype, weight):
    # torch converts the weight to float for the float32/half kernels:
    # beyond float32's range a RuntimeError (ptcore computed with it)
    a, b = torch.tensor([1.0, 2.0], dtype=dtype), torch.tensor([3.0, 4.0], dtype=dtype)
    for call in (lambda m, x, y: m.lerp(x, y, weight), lambda m, x, y: x.lerp_(y, weight)):
        try:
            tr = call(torch, a.clone(), b)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                call(ptcore, _pt(a), _pt(b))
            continue
        _same(tr, call(ptcore, _pt(a), _pt(b)), rtol=1e-2)


@pytest.mark.parametrize("exponent", [65504, 65520, 100000, -100000, 2 ** 64 - 1, 2 ** 70])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pow_half_int_exponent_range(exponent, dtype):
    # torch converts an int exponent to the half type with its overflow check
    # (float16 ** 65520 raises; ptcore computed it)
    a = torch.tensor([1.0, 2.0, 0.5], dtype=dtype)
    for call in (lambda m, x: m.pow(x, exponent), lambda m, x: x.pow_(exponent)):
        try:
            tr = call(torch, a.clone())
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                call(ptcore, _pt(a))
            continue
        _same(tr, call(ptcore, _pt(a)), rtol=1e-2)


@pytest.mark.parametrize("number", [2 ** 63, 2 ** 64 - 1, 2 ** 70, -2 ** 64])
@pytest.mark.parametrize("call", [
    lambda m, t, s: m.special.xlogy(t, s), lambda m, t, s: m.special.xlogy(s, t),
    lambda m, t, s: m.xlogy(s, t), lambda m, t, s: m.special.xlog1py(t, s),
    lambda m, t, s: m.special.zeta(s, t), lambda m, t, s: m.special.hermite_polynomial_h(t, s),
])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_special_binary_big_int_number(number, call, dtype):
    # an int past int64 is torch's uint64 scalar (float16 xlogy raised
    # ValueError), past uint64 an OverflowError (ptcore computed)
    t = torch.tensor([0.5, 2.0], dtype=dtype)
    try:
        tr = call(torch, t, number)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            call(ptcore, _pt(t), number)
        return
    _same(tr, call(ptcore, _pt(t), number), rtol=1e-3)


@pytest.mark.parametrize("fname", ["add", "sub"])
def test_bool_add_alpha_past_int64(fname):
    # torch's parser raises OverflowError for the int before the bool rules
    # (ptcore added, or raised the bool subtraction error)
    t = torch.tensor([True, False])
    _raises_same(lambda: getattr(torch, fname)(t, t, alpha=2 ** 70),
                 lambda: getattr(ptcore, fname)(_pt(t), _pt(t), alpha=2 ** 70))


@pytest.mark.parametrize("mant", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("expo", [torch.int32, torch.int64, torch.float32])
def test_frexp_out_dtypes(mant, expo):
    # torch: the mantissa out must have the input's dtype and the exponent
    # out int32 (ptcore cast into any)
    def call(m, x, a, b):
        return m.frexp(x, out=(m.empty(0, dtype=a), m.empty(0, dtype=b)))
    t = torch.tensor([1.5, -0.25, 0.0])
    try:
        tr = call(torch, t, mant, expo)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            call(ptcore, _pt(t), _dt(mant), _dt(expo))
        return
    pr = call(ptcore, _pt(t), _dt(mant), _dt(expo))
    _same(tr.mantissa, pr.mantissa)
    _same(tr.exponent, pr.exponent)


def test_ldexp_grad():
    # d ldexp(x, e) / dx = 2**e, also at x = 0 and nan (e >= 0: torch's
    # integer 2**e is exact there)
    e = [3, 2, 5, 10, 1, 0, 3]
    _same_grads(lambda m, x: m.ldexp(x, m.tensor(e)), [1.0, 3.0, 0.0, -0.0, math.nan, 2.5, 1e-310])
