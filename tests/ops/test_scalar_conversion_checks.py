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


# a Number parameter of an activation (and logit's eps, matrix_power's n) takes a
# 0-d tensor that does not require grad as its value, as torch's parser; a
# one-element tensor of more dims or one requiring grad is torch's TypeError
_NUMBER_ARGS = {
    "hardshrink": lambda lib, a, v: lib.nn.functional.hardshrink(a, v),
    "hardshrink_method": lambda lib, a, v: a.hardshrink(v),
    "softshrink": lambda lib, a, v: lib.nn.functional.softshrink(a, v),
    "celu": lambda lib, a, v: lib.nn.functional.celu(a, v),
    "celu_": lambda lib, a, v: lib.nn.functional.celu_(a.clone(), v),
    "elu": lambda lib, a, v: lib.nn.functional.elu(a, v),
    "elu_inplace": lambda lib, a, v: lib.nn.functional.elu(a.clone(), v, inplace=True),
    "leaky_relu": lambda lib, a, v: lib.nn.functional.leaky_relu(a, v),
    "hardtanh_min": lambda lib, a, v: lib.nn.functional.hardtanh(a, v, 1.),
    "hardtanh_max_": lambda lib, a, v: lib.nn.functional.hardtanh_(a.clone(), -1., v),
    "threshold": lambda lib, a, v: lib.nn.functional.threshold(a, v, 2.),
    "threshold_value_": lambda lib, a, v: lib.nn.functional.threshold_(a.clone(), 0.1, v),
    "softplus_beta": lambda lib, a, v: lib.nn.functional.softplus(a, v),
    "softplus_threshold": lambda lib, a, v: lib.nn.functional.softplus(a, 1, v),
    "rrelu": lambda lib, a, v: lib.nn.functional.rrelu(a, v, 0.3),
    "logit": lambda lib, a, v: a.sigmoid().logit(v),
    "logit_": lambda lib, a, v: a.sigmoid().logit_(v),
    "matrix_power": lambda lib, a, v: lib.linalg.matrix_power(a[:, :3], v),
    "matrix_power_method": lambda lib, a, v: a[:, :3].matrix_power(v),
    "nan_to_num": lambda lib, a, v: lib.nan_to_num(a, v),
    # float parameters of nn.functional (interpolate's scale_factor takes no tensor)
    "pad_value": lambda lib, a, v: lib.nn.functional.pad(a, (1, 1), value=v),
    "pairwise_distance_eps": lambda lib, a, v: lib.nn.functional.pairwise_distance(a, a, eps=v),
    "cosine_similarity_eps": lambda lib, a, v: lib.nn.functional.cosine_similarity(a, a, eps=v),
    "smooth_l1_beta": lambda lib, a, v: lib.nn.functional.smooth_l1_loss(a, a.flip(0), beta=v),
    "huber_delta": lambda lib, a, v: lib.nn.functional.huber_loss(a, a.flip(0), delta=v),
    "margin_ranking_margin": lambda lib, a, v: lib.nn.functional.margin_ranking_loss(
        a, a.flip(0), a.sign(), margin=v),
    "interpolate_scale": lambda lib, a, v: lib.nn.functional.interpolate(a[None], scale_factor=v),
    "interpolate_scales": lambda lib, a, v: lib.nn.functional.interpolate(a[None, None],
                                                                          scale_factor=[v, 2.]),
}
_VALUES = {"float": lambda lib: lib.tensor(0.25), "int": lambda lib: lib.tensor(1),
           "bool": lambda lib: lib.tensor(True), "one_elem": lambda lib: lib.tensor([0.25]),
           "int_one_elem": lambda lib: lib.tensor([1]),
           "requires_grad": lambda lib: lib.tensor(0.25, requires_grad=True)}


@pytest.mark.parametrize("value", sorted(_VALUES))
@pytest.mark.parametrize("op", sorted(_NUMBER_ARGS))
def test_tensor_given_for_a_number_as_torch(op, value):
    got = []
    for lib in (torch, ptcore):
        a = lib.linspace(-2, 2, 12, dtype=lib.float64).reshape(3, 4)
        got.append(_outcome(lambda: _NUMBER_ARGS[op](lib, a, _VALUES[value](lib))))
    assert got[1] == got[0]
