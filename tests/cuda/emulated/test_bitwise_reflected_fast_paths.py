"""The C fast paths of the bitwise operators (``i & j`` ... ``~i``, in place
too), in-place ``%=``/``**=`` and the reflected number ops (``2 // t``,
``2 % t``, ``2 ** t``) on CUDA: one kernel each (the reflected ones with the
number as the kernel's argument, no device tensor made of it), ``+t`` none,
and torch's CPU values, dtypes and shapes (the sixth H200 run found them at
2-3.7x torch's time: host overhead and a fill kernel)."""
import operator

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

INTS = ["uint8", "int8", "int16", "int32", "int64"]


def _pair(arr):
    """(ptcore CUDA tensor, torch CPU tensor) of a NumPy array."""
    return ptcore.from_numpy(arr.copy()).cuda(), torch.from_numpy(arr.copy())


def _same(got, want):
    assert got.device.type == "cuda"
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    assert tuple(got.shape) == tuple(want.shape)
    if want.dtype is torch.bfloat16:    # (NumPy has no bfloat16: compared as float32, exact)
        got, want = got.float(), want.float()
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def _ints(dt, shape, rng, lo=None, hi=None):
    info = np.iinfo(dt)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return np.asarray(rng.integers(lo, hi, shape, endpoint=True)).astype(dt)


BITWISE = [("and", operator.and_, operator.iand), ("or", operator.or_, operator.ior),
           ("xor", operator.xor, operator.ixor), ("lshift", operator.lshift, operator.ilshift),
           ("rshift", operator.rshift, operator.irshift)]


def _operands(dt, shift, rng, shape_a, shape_b):
    if dt == "bool":
        return np.asarray(rng.random(shape_a) < 0.5), np.asarray(rng.random(shape_b) < 0.5)
    a = _ints(dt, shape_a, rng)
    if shift:
        # shift counts past the width and (signed types) negative ones: torch's rules
        bits = np.dtype(dt).itemsize * 8
        lo = -3 if np.iinfo(dt).min < 0 else 0
        b = _ints(dt, shape_b, rng, lo, min(bits + 3, np.iinfo(dt).max))
    else:
        b = _ints(dt, shape_b, rng)
    return a, b


SHAPES = [((6, 5), (6, 5)), ((6, 5), (5,)), ((3, 1, 4), (2, 1)), ((), ()), ((0, 3), (3,)), ((4,), ())]


@pytest.mark.parametrize("dt", ["bool"] + INTS)
@pytest.mark.parametrize("name, op, iop", BITWISE)
@pytest.mark.parametrize("shapes", SHAPES)
def test_bitwise_operators_match_torch(dt, name, op, iop, shapes):
    shift = name.endswith("shift")
    rng = np.random.default_rng(len(name) + len(dt))
    a, b = _operands(dt, shift, rng, *shapes)
    (pa, ta), (pb, tb) = _pair(a), _pair(b)
    if dt == "bool" and shift:
        with pytest.raises(Exception):
            op(ta, tb)
        with pytest.raises(Exception):
            op(pa, pb)
        return
    _same(op(pa, pb), op(ta, tb))
    try:
        want = iop(ta.clone(), tb)
    except RuntimeError:            # a broadcast that would grow a: torch's error, ours too
        with pytest.raises(RuntimeError):
            iop(pa.clone(), pb)
        return
    x = pa.clone()
    got = iop(x, pb)
    assert got is x
    _same(got, want)


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("name, op, iop", BITWISE)
def test_bitwise_operators_non_contiguous(dt, name, op, iop):
    rng = np.random.default_rng(3)
    a, b = _operands(dt, name.endswith("shift"), rng, (5, 7), (7, 5))
    (pa, ta), (pb, tb) = _pair(a), _pair(b)
    _same(op(pa, pb.t()), op(ta, tb.t()))
    _same(op(pa.t(), pb), op(ta.t(), tb))
    x, y = pa.clone(), ta.clone()
    _same(iop(x, pb.t()), iop(y, tb.t()))
    # a view written in place
    x, y = pb.t().clone().t(), tb.t().clone().t()
    _same(iop(x[:, 1:4], pa[1:4, :].t()), iop(y[:, 1:4], ta[1:4, :].t()))
    _same(x, y)


@pytest.mark.parametrize("dt", ["bool"] + INTS)
def test_invert_matches_torch(dt):
    rng = np.random.default_rng(4)
    a = rng.random((4, 6)) < 0.5 if dt == "bool" else _ints(dt, (4, 6), rng)
    pa, ta = _pair(a)
    _same(~pa, ~ta)
    _same(ptcore.bitwise_not(pa), torch.bitwise_not(ta))
    _same(~pa.t(), ~ta.t())
    _same(~pa[0, 0], ~ta[0, 0])
    _same(~pa[:0], ~ta[:0])
    x, y = pa.clone(), ta.clone()
    x.bitwise_not_()
    y.bitwise_not_()
    _same(x, y)


def test_bitwise_refusals_take_the_general_path():
    f = ptcore.ones(3, device="cuda")
    i = ptcore.ones(3, dtype=ptcore.int32, device="cuda")
    with pytest.raises(TypeError):
        ~f
    with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
        f & f
    # mixed dtypes promote, as torch
    j = ptcore.ones(3, dtype=ptcore.int64, device="cuda")
    assert (i & j).dtype is ptcore.int64
    assert (i | 6).tolist() == [7, 7, 7]
    x = i.clone()
    x |= j * 6                      # another integer dtype in place: cast back, as torch
    assert x.dtype is ptcore.int32 and x.tolist() == [7, 7, 7]
    with pytest.raises(RuntimeError):
        x &= ptcore.ones(3, 3, dtype=ptcore.int32, device="cuda")     # would grow x


FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _floats(shape, rng, dt):
    v = np.asarray(rng.standard_normal(shape) * 4)
    flat = v.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -2.5]
    flat[:min(len(specials), flat.size)] = specials[:flat.size]
    t = torch.from_numpy(v).to(getattr(torch, dt))
    return t


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("iop", [operator.imod, operator.ipow, operator.ifloordiv])
@pytest.mark.parametrize("shapes", [((6, 5), (6, 5)), ((6, 5), (5,)), ((), ()), ((0, 2), (2,))])
def test_inplace_mod_pow_match_torch(dt, iop, shapes):
    rng = np.random.default_rng(5)
    ta, tb = _floats(shapes[0], rng, dt), _floats(shapes[1], rng, dt).flip(list(range(len(shapes[1]))))
    pa = ptcore.from_numpy(ta.double().numpy()).to(getattr(ptcore, dt)).cuda()
    pb = ptcore.from_numpy(tb.double().numpy()).to(getattr(ptcore, dt)).cuda()
    want = iop(ta.clone(), tb)
    x = pa.clone()
    got = iop(x, pb)
    assert got is x
    # pow: the device's libm against torch's, within an ulp or two
    rtol = {"float32": 3e-7, "float64": 1e-15}.get(dt, 0) if iop is operator.ipow else 0
    if dt in ("float16", "bfloat16"):
        # the half kernels compute in float32 and round once, as torch's CUDA kernels
        want = iop(ta.float(), tb.float()).to(getattr(torch, dt))
    _close(got, want, rtol)
    # x %= x, x **= x: the operand is the written tensor itself
    x = pa.clone()
    iop(x, x)
    want = iop(ta.clone(), ta) if rtol or dt in ("float32", "float64") else \
        iop(ta.float().clone(), ta.float()).to(getattr(torch, dt))
    _close(x, want, rtol)


def _close(got, want, rtol):
    if not rtol:
        return _same(got, want)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=rtol, atol=0)


def test_inplace_mod_of_a_number_and_of_an_overlap():
    x = ptcore.tensor([5.0, -5.0, 7.5], device="cuda")
    x %= 2
    assert x.tolist() == [1.0, 1.0, 1.5]
    x **= 2
    assert x.tolist() == [1.0, 1.0, 2.25]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("number", [2, -3, 2.5, -0.0, 0.0, float("inf"), float("nan")])
@pytest.mark.parametrize("op", [operator.floordiv, operator.mod, operator.pow])
def test_reflected_number_floats_match_torch(dt, number, op):
    rng = np.random.default_rng(6)
    t = _floats((5, 4), rng, dt)
    p = ptcore.from_numpy(t.double().numpy()).to(getattr(ptcore, dt)).cuda()
    rtol = {"float32": 3e-7, "float64": 1e-15}.get(dt, 0) if op is operator.pow else 0

    def want(t):
        if dt in ("float16", "bfloat16"):
            # the number rounded to the dtype (torch's CPU rounds it so), computed in float32
            n = torch.tensor(number).to(getattr(torch, dt)).float()
            return op(n, t.float()).to(getattr(torch, dt))
        return op(number, t)
    _close(op(number, p), want(t), rtol)
    _close(op(number, p.t()), want(t.t()), rtol)


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("number", [2, -7, 0, 1, -1, 100])
@pytest.mark.parametrize("op", [operator.floordiv, operator.mod, operator.pow])
def test_reflected_number_ints_match_torch(dt, number, op):
    if np.iinfo(dt).min == 0 and number < 0:
        pytest.skip("a negative number with an unsigned tensor: torch's overflow rules")
    rng = np.random.default_rng(7)
    if op is operator.pow:
        lo = -3 if np.iinfo(dt).min < 0 else 0
        a = _ints(dt, (4, 5), rng, lo, 6)           # negative exponents: 0, 1 or +-1 as torch
    else:
        a = _ints(dt, (4, 5), rng, max(np.iinfo(dt).min, -50), min(np.iinfo(dt).max, 50))
        a[a == 0] = 3                               # (torch's CPU raises on a zero divisor)
    p, t = _pair(a)
    _same(op(number, p), op(number, t))
    _same(op(number, p[:, ::2]), op(number, t[:, ::2]))
    _same(op(number, p[0, 0]), op(number, t[0, 0]))
    _same(op(number, p[:0]), op(number, t[:0]))


def test_reflected_number_promotions_match_torch():
    a = np.array([[1, 2, -3], [4, 5, 6]], dtype=np.int32)
    p, t = _pair(a)
    for number in (2.5, True, 10 ** 12):
        for op in (operator.floordiv, operator.mod, operator.pow):
            if op is operator.pow and number == 10 ** 12:
                continue
            _same(op(number, p), op(number, t))
    b = torch.tensor([True, False])
    pb = ptcore.tensor([True, False], device="cuda")
    _same(2 ** pb, 2 ** b)
    _same(2.5 // pb.float(), 2.5 // b.float())


def test_reflected_number_with_grad_records():
    x = ptcore.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    y = 2 ** x
    y.sum().backward()
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (2 ** tx).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.detach().cpu().numpy(), (2 ** tx).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "int32", "int8", "float16", "complex64"])
def test_positive_is_the_tensor(dt):
    x = ptcore.ones(3, 2, dtype=getattr(ptcore, dt), device="cuda")
    assert (+x) is x
    assert ptcore.positive(x) is x
    assert x.positive() is x
    with pytest.raises(RuntimeError):
        +ptcore.ones(2, dtype=ptcore.bool, device="cuda")
    with pytest.raises(RuntimeError):
        ptcore.positive(ptcore.ones(2, dtype=ptcore.bool, device="cuda"))


def test_one_kernel_each(queued_kernels):
    f = ptcore.ones(8, 8, device="cuda") + 1
    g = ptcore.ones(8, 8, device="cuda") + 2
    h = f.half()
    i = ptcore.ones(8, 8, dtype=ptcore.int32, device="cuda") + 2
    j = ptcore.ones(8, 8, dtype=ptcore.int32, device="cuda")
    cases = {
        "and": (lambda: i & j, "ptc_binary_bitwise_and_i32_c"),
        "or": (lambda: i | j, "ptc_binary_bitwise_or_i32_c"),
        "xor": (lambda: i ^ j, "ptc_binary_bitwise_xor_i32_c"),
        "lshift": (lambda: i << j, "ptc_binary_left_shift_i32_c"),
        "rshift": (lambda: i >> j, "ptc_binary_right_shift_i32_c"),
        "invert": (lambda: ~i, "ptc_unary_bitwise_not_i32_c"),
        "iand": (lambda: i.__iand__(j), "ptc_binary_bitwise_and_i32_c"),
        "ior": (lambda: i.__ior__(j), "ptc_binary_bitwise_or_i32_c"),
        "ixor": (lambda: i.__ixor__(j), "ptc_binary_bitwise_xor_i32_c"),
        "ilshift": (lambda: i.__ilshift__(j), "ptc_binary_left_shift_i32_c"),
        "irshift": (lambda: i.__irshift__(j), "ptc_binary_right_shift_i32_c"),
        "and bcast": (lambda: i & j[0], "ptc_binary_bitwise_and_i32_s"),
        "imod": (lambda: f.__imod__(g), "ptc_binary_remainder_f32_c"),
        "ipow": (lambda: f.__ipow__(g), "ptc_binary_pow_f32_c"),
        "imod half": (lambda: h.__imod__(h), "ptc_binary_remainder_f16_c"),
        "rfloordiv": (lambda: 2 // f, "ptc_scalar_rdiv_floor_f32_c"),
        "rmod": (lambda: 2 % f, "ptc_scalar_rremainder_f32_c"),
        "rpow": (lambda: 2 ** f, "ptc_scalar_rpow_f32_c"),
        "rpow int": (lambda: 2 ** i, "ptc_scalar_rpow_i32_c"),
        "rfloordiv strided": (lambda: 2 // f.t(), "ptc_scalar_rdiv_floor_f32_s"),
        "pow(2, t)": (lambda: ptcore.pow(2, f), "ptc_scalar_rpow_f32_c"),
        "floor_divide(2, t)": (lambda: ptcore.floor_divide(2, f), "ptc_scalar_rdiv_floor_f32_c"),
        "remainder(2, t)": (lambda: ptcore.remainder(2, f), "ptc_scalar_rremainder_f32_c"),
    }
    for label, (fn, name) in cases.items():
        fn()
        queued_kernels.clear()
        fn()
        assert queued_kernels == [name], (label, queued_kernels)
    queued_kernels.clear()
    +f
    assert queued_kernels == []
