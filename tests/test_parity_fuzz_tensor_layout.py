"""Differential tests of tensor-level semantics against torch: result
layouts (strides), type promotion at the edges of the dtype table, and
scalar conversions."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _dt(mod, name):
    return getattr(mod, name)


def _outcome(fn, mod):
    try:
        r = fn(mod)
    except Exception as e:          # noqa: BLE001 - the exception type is compared
        return ("raises", type(e).__name__)
    if isinstance(r, (torch.Tensor, ptcore.Tensor)):
        return (str(r.dtype).split(".")[1], tuple(r.shape), tuple(r.stride()), r.tolist())
    return r


def _same(fn):
    assert _outcome(fn, ptcore) == _outcome(fn, torch)


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("e", [0, 1, False, True, 2, 2 ** 40])
def test_limited_unsigned_pow_by_zero_or_one(dt, e):
    # torch's pow fills ones (exponent 0/False) or copies the base (1/True)
    # before it looks for a kernel, which uint16/32/64 lack
    def run(mod):
        x = mod.tensor([1, 0, 2]).to(_dt(mod, dt))
        if form == "op":
            return x ** e
        if form == "inplace":
            return x.pow_(e)
        odt = {"out": dt, "out_float": "float32", "out_bool": "bool"}[form]
        return mod.pow(x, e, out=mod.empty(0, dtype=_dt(mod, odt)))
    for form in ("op", "inplace", "out", "out_float", "out_bool"):
        _same(run)


@pytest.mark.parametrize("dt", ["uint16", "uint64", "int8", "bool", "float16", "float32"])
@pytest.mark.parametrize("base", [1, True, 1.0, 1 + 0j, 2, 0, 2.5])
def test_scalar_base_pow(dt, base):
    # torch.pow(Scalar, Tensor): a base equal to 1 fills ones (uint16 too, and
    # into any out dtype); the result is allocated contiguous even for a
    # transposed exponent
    def run(mod):
        x = mod.tensor([[1, 0, 2], [3, 1, 0]]).to(_dt(mod, dt)).t()
        if form == "rpow":
            return base ** x
        if form == "pow":
            return mod.pow(base, x)
        return mod.pow(base, x, out=mod.empty(0, dtype=mod.float64))
    for form in ("rpow", "pow", "out"):
        _same(run)


def test_scalar_base_pow_of_one_keeps_autograd():
    for mod in (torch, ptcore):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = 1 ** x
        assert y.requires_grad
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("data", [[], [[]], [[], []], [1, 2], [[1], [2]], ()])
@pytest.mark.parametrize("fn", ["tensor", "as_tensor", "asarray"])
def test_tensor_from_a_list_is_row_major(data, fn):
    # torch.tensor([]) has stride (1,); NumPy's np.array([]) has stride 0
    _same(lambda mod: getattr(mod, fn)(data))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "bool", "complex64"])
@pytest.mark.parametrize("item", [1j, 1 + 0j, 2.5])
def test_one_element_complex_tensors_in_a_list(dt, item):
    # torch reads them with __float__ for a floating dtype: the real part, or
    # a RuntimeError when the imaginary part is not zero
    def run(mod):
        t = mod.tensor(item, dtype=mod.complex64)
        data = {"alone": [t], "with_int": [[1, t]], "with_float": [[1.5, t]]}[nest]
        return mod.tensor(data, dtype=_dt(mod, dt))
    for nest in ("alone", "with_int", "with_float"):
        _same(run)


@pytest.mark.parametrize("npdt", ["object", "U1", "S1", "datetime64[s]", "longdouble"])
def test_unsupported_numpy_dtype_is_refused_before_its_negative_strides(npdt):
    import numpy as np
    arr = np.zeros(3, dtype=npdt)[::-1]
    _same(lambda mod: mod.tensor(arr))


_LDEXP_DTS = ["bool", "uint8", "int8", "int64", "float16", "float32", "float64", "complex64",
              "uint16", "uint64"]


@pytest.mark.parametrize("a", _LDEXP_DTS)
@pytest.mark.parametrize("form", ["ldexp", "ldexp_0d_exponent", "ldexp_"])
def test_ldexp_dtype_rules(a, form):
    # an integral input gives the default float dtype whatever the integer
    # exponent (int8 with uint16 is float32, no promotion error); a floating
    # input refuses bool/uint16/32/64 exponents (NotImplementedError, also in
    # place); a complex input takes 2 as a 0-d tensor of its dtype (with a 0-d
    # uint16 exponent that is a promotion error)
    def run(mod):
        x = mod.tensor([1, 2, 3]).to(_dt(mod, a))
        e = mod.tensor([1, 0, 2]).to(_dt(mod, b))
        if form == "ldexp_0d_exponent":
            return mod.ldexp(x, e[2])
        if form == "ldexp_":
            return x.ldexp_(e)
        return mod.ldexp(x, e)
    for b in _LDEXP_DTS:
        _same(run)


@pytest.mark.parametrize("dt", ["float64", "complex128", "float32"])
@pytest.mark.parametrize("e", [1j, 2.5, "complex_0d", "complex_nd", "float_nd"])
def test_float_power_inplace_refuses_a_complex_exponent_on_a_real_base(dt, e):
    # float64.float_power_(1j) needs a complex128 result: torch raises, ptcore
    # dropped the imaginary part
    def run(mod):
        x = mod.tensor([1.0, 2.0]).to(_dt(mod, dt))
        ee = {"complex_0d": lambda: mod.tensor(1j), "complex_nd": lambda: mod.tensor([1j, 2]),
              "float_nd": lambda: mod.tensor([2.0, 0.5])}.get(e, lambda: e)()
        return x.float_power_(ee)
    _same(run)


_VALUES = {"0d": lambda mod: mod.tensor(2), "1el": lambda mod: mod.tensor([2]),
           "nd": lambda mod: mod.tensor([2, 3]), "ndarray": lambda mod: __import__("numpy").array(2),
           "str": lambda mod: "a", "none": lambda mod: None, "float": lambda mod: 2.5,
           "big": lambda mod: 2 ** 64}


@pytest.mark.parametrize("value", list(_VALUES))
@pytest.mark.parametrize("dt", ["float32", "int64"])
def test_addcmul_addcdiv_value_is_a_number(value, dt):
    # a Number parameter: a 0-d tensor gives its value; a one-element or
    # longer tensor, an array, a string, None are TypeErrors, checked before
    # the in-place result type
    def run(mod):
        d = _dt(mod, dt)
        v = _VALUES[value](mod)
        if form == "addcmul":
            return mod.addcmul(mod.ones(2, dtype=d), mod.ones(2, dtype=d), mod.ones(2, dtype=d), value=v)
        if form == "addcmul_":
            return mod.ones(2, dtype=d).addcmul_(mod.ones(2, dtype=d), mod.ones(2, dtype=d), value=v)
        if form == "addcdiv":
            return mod.addcdiv(mod.ones(2, dtype=d), mod.ones(2), mod.ones(2), value=v)
        return mod.ones(2, dtype=d).addcdiv_(mod.ones(2), mod.ones(2), value=v)
    for form in ("addcmul", "addcmul_", "addcdiv", "addcdiv_"):
        _same(run)


@pytest.mark.parametrize("kw", ["nan", "posinf", "neginf"])
@pytest.mark.parametrize("value", [None, 2, 1.5, True, 1j, "a", "0d", "0d_complex", "1el"])
@pytest.mark.parametrize("dt", ["float32", "int64", "complex64"])
def test_nan_to_num_float_parameters(kw, value, dt):
    # float? parameters: None is the default (nan=None is 0); a Python
    # complex, a string, a one-element tensor are TypeErrors; a 0-d complex
    # tensor with an imaginary part a RuntimeError
    def run(mod):
        v = {"0d": lambda: mod.tensor(2.0), "0d_complex": lambda: mod.tensor(1j),
             "1el": lambda: mod.tensor([2.0])}.get(value, lambda: value)()
        x = mod.tensor([float("nan"), float("inf"), -float("inf"), 1.0]).to(_dt(mod, dt))
        return x.nan_to_num_(**{kw: v}) if inplace else x.nan_to_num(**{kw: v})
    for inplace in (False, True):
        _same(run)


@pytest.mark.parametrize("fn", ["isclose", "allclose"])
@pytest.mark.parametrize("kw,value", [("rtol", "0d"), ("rtol", "1el"), ("atol", "1el"), ("rtol", None),
                                      ("atol", 2 ** 70), ("rtol", "a"), ("equal_nan", 1),
                                      ("equal_nan", None), ("equal_nan", "0d_bool"),
                                      ("equal_nan", True)])
def test_closeness_parameter_types(fn, kw, value):
    # rtol/atol are floats (a 0-d tensor's value, an int beyond int64 too),
    # equal_nan a Python bool: anything else is a TypeError
    def run(mod):
        v = {"0d": lambda: mod.tensor(0.1), "1el": lambda: mod.tensor([0.1]),
             "0d_bool": lambda: mod.tensor(True)}.get(value, lambda: value)() \
            if isinstance(value, str) or value is None else value
        return getattr(mod, fn)(mod.tensor([1.0, 1.05, float("nan")]),
                                mod.tensor([1.0, 1.0, float("nan")]), **{kw: v})
    _same(run)


@pytest.mark.parametrize("mode", [1, "0d", b"floor", "x", None])
def test_div_rounding_mode_types(mode):
    # a str or None (bytes pass torch's parser as a str); another type is a
    # TypeError, an unknown string a RuntimeError
    def run(mod):
        m = mod.tensor(1) if mode == "0d" else mode
        return mod.tensor([5.0, -5.0]).div(2, rounding_mode=m) if not inplace else \
            mod.tensor([5.0, -5.0]).div_(2, rounding_mode=m)
    for inplace in (False, True):
        _same(run)


@pytest.mark.parametrize("op", ["lt_", "eq_", "logical_and_"])
@pytest.mark.parametrize("other", ["complex64", "uint16", "float32"])
def test_inplace_comparison_checks_the_shape_before_the_dtype(op, other):
    # a 0-d self with a longer operand: torch's "output with shape [] doesn't
    # match the broadcast shape" RuntimeError comes before its dtype support
    def run(mod):
        return getattr(mod.tensor(True), op)(mod.ones(3, dtype=_dt(mod, other)))
    _same(run)


@pytest.mark.parametrize("alpha", ["0d", "1el", "nd", "str", 2, 2.5])
@pytest.mark.parametrize("op", ["add_", "sub_", "add", "sub"])
def test_alpha_is_a_number(alpha, op):
    # add_/sub_ compared a tensor alpha with 1 first ("Boolean value of Tensor
    # ... ambiguous"); torch: a TypeError for anything but a number or 0-d tensor
    def run(mod):
        a = {"0d": lambda: mod.tensor(2), "1el": lambda: mod.tensor([2]),
             "nd": lambda: mod.tensor([2, 3]), "str": lambda: "a"}.get(alpha, lambda: alpha)() \
            if isinstance(alpha, str) else alpha
        return getattr(mod.ones(2), op)(mod.ones(2), alpha=a)
    _same(run)
