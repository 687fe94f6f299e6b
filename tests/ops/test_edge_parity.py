"""Edge cases found by a differential sweep against torch (empty inputs,
scalar special cases, NaN handling, ...): each compares ptcore with torch."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` with ptcore and torch: (ptcore result, torch result) or the
    exception types when either raises."""
    out = []
    for lib in (ptcore, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the type is compared
            out.append(type(e))
    return out


def _np(t):
    t = t.detach()
    if str(t.dtype).split(".")[-1] in ("bfloat16", "float16"):
        t = t.float()
    return t.numpy()


def _same(p, r):
    if isinstance(r, type):
        assert p is r, f"ptcore {p} vs torch raises {r.__name__}"
        return
    assert not isinstance(p, type), f"ptcore raised {p.__name__}, torch returned {r!r}"
    if isinstance(r, (tuple, list)):
        assert type(p).__name__ == type(r).__name__ and len(p) == len(r)
        for a, b in zip(p, r):
            _same(a, b)
        return
    if not isinstance(r, torch.Tensor):
        assert type(p) is type(r) and (p == r or (p != p and r != r)), (p, r)
        return
    assert str(p.dtype).split(".")[-1] == str(r.dtype).split(".")[-1], (p.dtype, r.dtype)
    assert tuple(p.shape) == tuple(r.shape), (tuple(p.shape), tuple(r.shape))
    np.testing.assert_allclose(_np(p), _np(r), rtol=1e-6, atol=1e-6, equal_nan=True)


def _check(fn):
    _same(*_both(fn))


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64", "bool", "float16",
                                "bfloat16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_median_of_empty_is_nan_cast_to_dtype(name, dt, shape):
    # torch: full([], nan).to(dtype) -- int32/int64 minimum, 0 for 8/16-bit ints, True for bool
    _check(lambda T: getattr(T, name)(T.ones(shape, dtype=getattr(T, dt))))


@pytest.mark.parametrize("expo", [0, 0.0, 0j, 1 + 0j, 2 + 0j, -1 + 0j, True, 1j])
@pytest.mark.parametrize("fn", ["pow", "float_power"])
@pytest.mark.parametrize("dt", ["float32", "complex64"])
def test_pow_scalar_exponent_special_cases(fn, expo, dt):
    # a scalar exponent 0 fills ones (0 ** 0 of a complex base included); a
    # complex exponent with a zero imaginary part counts as its real part
    _check(lambda T: getattr(T, fn)(T.tensor([0, 1 + 1j, 0.5, -2]).to(getattr(T, dt)), expo))


_ELLIPSES = ["[..., ...]", "[..., 0, ...]", "[0, ..., ...]", "[..., None, ...]", "[..., [0, 1], ...]",
             "[..., ..., ...]", "[[0, 1], ..., ...]", "[..., ..., :]", "[0, ..., 1, ..., 2]",
             "[..., ..., 0]", "[..., 0, ..., 1]", "[None, ..., ..., None]", "[..., ..., 1:]"]


@pytest.mark.parametrize("ix", _ELLIPSES)
def test_several_ellipses_in_an_index(ix):
    # torch accepts several '...': later ones point past the last dimension
    def get(T):
        return eval("T.arange(24).reshape(2, 3, 4)" + ix, {"T": T})

    def put(T):
        y = T.arange(24).reshape(2, 3, 4)
        exec("y" + ix + " = -1", {"y": y})
        return y

    _check(get)
    _check(put)


@pytest.mark.parametrize("reduce", ["mean", "amax", "amin", "bogus"])
@pytest.mark.parametrize("dt", ["bool", "complex64"])
@pytest.mark.parametrize("index,dim", [([[0, 1, 2, 0]], 0), ([[-1, 0]], 1), ([[0, 1, 2, 0]], 2),
                                       ([[0, 0, 0, 0, 0]], 0), (None, 0)])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_error_order(reduce, dt, index, dim, include_self):
    # dim and shape checks first, then the reduce name; an unsupported dtype is
    # refused before the bounds check unless include_self=False
    def f(T):
        s = T.arange(12.).reshape(3, 4).to(getattr(T, dt))
        i = T.zeros(0, 4, dtype=T.int64) if index is None else T.tensor(index)
        return T.scatter_reduce(s, dim, i, s, reduce, include_self=include_self)
    _check(f)


@pytest.mark.parametrize("dt", ["bool", "complex64", "float32"])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_exclude_self_dtypes(dt, reduce):
    def f(T):
        s = T.arange(12.).reshape(3, 4).to(getattr(T, dt))
        return T.index_reduce(s, 1, T.tensor([0, 2, 0]), T.ones(3, 3).to(getattr(T, dt)), reduce,
                              include_self=False)
    _check(f)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (12,)])
def test_nonzero_layout(shape):
    # torch's nonzero is column-major (strides (1, n)); as_tuple gives contiguous columns
    def f(T, as_tuple):
        x = (T.arange(24).reshape(2, 3, 4) % 3).reshape(-1)[:int(np.prod(shape))].reshape(shape)
        return T.nonzero(x, as_tuple=as_tuple)
    p, r = f(ptcore, False), f(torch, False)
    _same(p, r)
    assert p.stride() == r.stride()
    for a, b in zip(f(ptcore, True), f(torch, True)):
        _same(a, b)
        assert a.stride() == b.stride()
    assert ptcore.argwhere(ptcore.ones(2, 3)).stride() == torch.argwhere(torch.ones(2, 3)).stride()


@pytest.mark.parametrize("sections", [[1, 3], 3, [[1, 3]], [1.0, 3.0], "int32", "bool"])
def test_tensor_split_tensor_sections(sections):
    def f(T):
        if sections == "int32":
            t = T.tensor([1, 3], dtype=T.int32)
        elif sections == "bool":
            t = T.tensor(True)
        else:
            t = T.tensor(sections)
        return T.arange(24.).reshape(2, 3, 4).tensor_split(t, 2)
    _check(f)


def _resize_cases(T):
    out = []
    x = T.arange(24.).reshape(2, 3, 4).transpose(0, 2)
    out.append(x.resize_(x.shape).stride())              # same sizes: strides kept
    out.append(x.resize_as_(x.clone()).stride())
    out.append(x.resize_(x.shape, memory_format=T.contiguous_format).stride())
    y = T.zeros(2, 3, 4, 5)
    out.append(y.resize_(2, 3, 4, 5, memory_format=T.channels_last).stride())
    out.append(y.resize_(2, 3, 4, 5).stride())
    out.append(T.zeros(6).resize_(1, 2, 1, 3, memory_format=T.channels_last).stride())
    out.append(T.zeros(2, 3).resize_(4, 0, 2, 2, memory_format=T.channels_last).stride())
    out.append(T.zeros(2, 3, 4, 5, 6).resize_(2, 3, 4, 5, 6, memory_format=T.channels_last_3d).stride())
    z = T.zeros(2, 3, 4, 5).to(memory_format=T.channels_last)
    out.append(T.zeros(3).resize_as_(z).stride())
    out.append(T.zeros(3).resize_as_(z, memory_format=T.preserve_format).stride())
    for fmt in ("channels_last", "preserve_format"):
        try:
            T.zeros(6).resize_(2, 3, memory_format=getattr(T, fmt))
            out.append(None)
        except RuntimeError:
            out.append(RuntimeError)
    return out


def test_resize_strides_and_memory_format():
    assert _resize_cases(ptcore) == _resize_cases(torch)


@pytest.mark.parametrize("make", ["x.transpose(0, 2)", "x.permute(1, 2, 0)", "x[:, :, ::2]",
                                  "x[:, :1].expand(2, 3, 4)", "x.unsqueeze(0).to(memory_format=T.channels_last)"])
@pytest.mark.parametrize("dims", [(0,), (-1,), (0, 1)])
def test_flip_keeps_the_layout(make, dims):
    def f(T):
        x = T.arange(24.).reshape(2, 3, 4)
        return eval(make, {"x": x, "T": T}).flip(dims)
    p, r = f(ptcore), f(torch)
    _same(p, r)
    assert p.stride() == r.stride()


def _memory_format_cases(T):
    res = []
    for s in [(2, 1, 4, 1), (2, 3, 1, 1), (1, 3, 4, 5), (2, 3, 4, 5)]:
        res.append((T.ones(*s).to(memory_format=T.channels_last).stride(),
                    T.ones(*s).contiguous(memory_format=T.channels_last).stride()))
    for s in [(2, 1, 4, 1, 3), (2, 3, 1, 1, 1)]:
        res.append((T.ones(*s).to(memory_format=T.channels_last_3d).stride(),
                    T.ones(*s).contiguous(memory_format=T.channels_last_3d).stride()))
    x = T.ones(3, 4).t()
    res.append(x.to(memory_format=T.contiguous_format) is x)    # torch aliases: suggested format
    x = T.ones(2, 3, 4, 5).permute(0, 2, 3, 1)
    res.append((x.to(memory_format=T.contiguous_format) is x, x.to(memory_format=T.channels_last) is x))
    x = T.ones(2, 3, 4, 5).to(memory_format=T.channels_last)
    res.append((x.to(memory_format=T.channels_last) is x, x.contiguous(memory_format=T.channels_last) is x,
                x.to(memory_format=T.contiguous_format).stride(), x.to(T.float64).stride(),
                x.to(T.float64, memory_format=T.contiguous_format).stride()))
    x = x[:, :, ::2]
    res.append((x.to(memory_format=T.channels_last) is x,
                x.contiguous(memory_format=T.channels_last).stride()))
    return res


def test_to_and_contiguous_memory_format():
    assert _memory_format_cases(ptcore) == _memory_format_cases(torch)


def test_flatten_of_one_dim_returns_self():
    for T in (ptcore, torch):
        x = T.ones(2, 3)
        assert x.flatten(0, 0) is x and x.flatten(-1, -1) is x and T.ones(2).flatten() is not None
        y = T.ones(3)
        assert y.flatten() is y


@pytest.mark.parametrize("dts", [("float32", "int64", "int64"), ("int64", "float32", "int64"),
                                 ("int64", "bool", "int64"), ("int64", "int64", "float32"),
                                 ("float32", "int64", "float32")])
@pytest.mark.parametrize("inplace", [False, True])
def test_addcdiv_integer_operands(dts, inplace):
    # torch refuses when tensor1 and tensor2 are both integral, whatever input is
    def f(T):
        a, b, c = (T.tensor([3, 4]).to(getattr(T, d)) for d in dts)
        return a.clone().addcdiv_(b, c) if inplace else T.addcdiv(a, b, c)
    _check(f)


@pytest.mark.parametrize("args", [(3,), (0,), (2, 1), (0, 1, 0)])
def test_arange_bool_not_implemented(args):
    _check(lambda T: T.arange(*args, dtype=T.bool))


_INPLACE_BINARY = ["bitwise_and_", "bitwise_or_", "bitwise_xor_", "__ilshift__", "__irshift__", "atan2_",
                   "hypot_", "copysign_", "xlogy_", "fmod_", "remainder_", "floor_divide_", "clamp_",
                   "div_", "pow_", "__iand__", "__imod__", "__ifloordiv__", "__itruediv__"]


@pytest.mark.parametrize("op", _INPLACE_BINARY)
@pytest.mark.parametrize("dts", [("int64", "float32"), ("float32", "complex64"), ("int32", "float64"),
                                 ("float16", "pycomplex"), ("int64", "int64"), ("bool", "float32")])
def test_inplace_result_cast_checked_before_dtype_support(op, dts):
    # torch: "result type X can't be cast to the desired output type Y"
    # (RuntimeError) comes before the kernel's NotImplementedError
    def f(T):
        x = T.tensor([3, 1, 2]).to(getattr(T, dts[0]))
        other = 1 + 1j if dts[1] == "pycomplex" else T.tensor([2, 1, 3]).to(getattr(T, dts[1]))
        return getattr(x, op)(other)
    _check(f)


@pytest.mark.parametrize("op", ["square_()", "cumsum_(0)", "cumprod_(0)", "deg2rad_()", "rad2deg_()"])
@pytest.mark.parametrize("dt", ["bool", "complex64", "int64", "float32"])
def test_inplace_unary_dtype_errors(op, dt):
    _check(lambda T: eval("x." + op, {"x": T.tensor([1, 0, 2]).to(getattr(T, dt))}))


@pytest.mark.parametrize("bound", ["1j", "2 + 0j", "-1j"])
@pytest.mark.parametrize("dt", ["float32", "float16", "int64", "bool"])
def test_clamp_complex_number_bound(bound, dt):
    # a real float tensor converts the bound to double (an imaginary part overflows)
    _check(lambda T: T.clamp(T.tensor([1, 0, 3]).to(getattr(T, dt)), eval(bound)))
    _check(lambda T: T.tensor([1, 0, 3]).to(getattr(T, dt)).clamp_(max=eval(bound)))


@pytest.mark.parametrize("op", ["t_()", "unsqueeze_(0)", "squeeze_()", "squeeze_(0)", "transpose_(0, 1)",
                                "swapdims_(0, 1)", "as_strided_((2, 2), (1, 2))", "resize_(3, 2)",
                                "resize_(2, 3)", "detach_()"])
def test_metadata_inplace_ops_bump_the_version(op):
    def f(T):
        x = T.zeros(2, 3)
        v = x._version
        r = eval("x." + op, {"x": x})
        return (r is x, x._version - v, tuple(x.shape), x.stride())
    assert f(ptcore) == f(torch)


@pytest.mark.parametrize("value", [2, 2.5, True, 1 + 1j, 2 ** 70])
@pytest.mark.parametrize("dt", ["int64", "float32", "bool", "uint8"])
def test_copy_from_a_python_number(value, dt):
    def f(T):
        x = T.zeros(2, dtype=getattr(T, dt))
        v = x._version
        r = x.copy_(value)
        return r, T.tensor(r is x), T.tensor(x._version - v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # complex -> real discards the imaginary part
        _check(f)


_BIG_INTS = [2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, 10 ** 30]


@pytest.mark.parametrize("v", _BIG_INTS, ids=str)
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                "uint8", "bool"])
def test_clamp_where_python_int_beyond_int64(dt, v):
    # torch reads a Python int in [2**63, 2**64) as a uint64 Scalar: a floating tensor takes its
    # value (float16's clamp range check raises, its where gives inf), an integer tensor raises
    # RuntimeError; outside [-2**63, 2**64) its argument parser raises OverflowError
    calls = [lambda L, x: L.clamp(x, min=v), lambda L, x: L.clamp(x, max=v),
             lambda L, x: L.clamp(x, -v, v), lambda L, x: L.clamp(x, v, -v),
             lambda L, x: x.clone().clamp_(max=v), lambda L, x: x.clip(min=v),
             lambda L, x: L.where(x > 0, x, v), lambda L, x: L.where(x > 0, v, x),
             lambda L, x: L.where(x > 0, v, 1.5), lambda L, x: L.where(x > 0, v, -v),
             lambda L, x: L.where(x > 0, x.reshape(3, 1), v)]
    for fn in calls:
        got, want = [], []
        for lib, res in ((torch, want), (ptcore, got)):
            x = lib.tensor([1.0, -2.0, 3.0]).to(getattr(lib, dt))
            try:
                r = fn(lib, x)
                res.append((str(r.dtype).split(".")[1], _np(r).tolist()))
            except (OverflowError, RuntimeError) as e:
                res.append((type(e), str(e) if type(e) is OverflowError else None))
        assert got == want


_NUMBER_0D_CALLS = {
    # a 0-d tensor without grad where torch's signature says Number/float/int
    "clamp_min_t": lambda T, y, t: T.clamp(y, min=t(1.5), max=2),
    "clamp_max_t": lambda T, y, t: T.clamp(y, 1, t(2.5)),
    "clamp_int": lambda T, y, t: T.clamp(y.long(), t(1.5), 2),
    "clamp_int_0d_int": lambda T, y, t: T.clamp(y.long(), t(1), 2.5),
    "clamp_bool_bound": lambda T, y, t: T.clamp(y.long(), t(True), 3),
    "clamp_half": lambda T, y, t: T.clamp(y.half(), t(1.2), 2.5),
    "clamp_int8_overflow": lambda T, y, t: T.clamp(y.to(T.int8), t(1000), 2000),
    "clamp_grad_bound": lambda T, y, t: T.clamp(y, t(1.5, requires_grad=True), 2),
    "clamp_1d_bound": lambda T, y, t: T.clamp(y, t([1.5, 1.5, 1.5]), 2),
    "clamp_": lambda T, y, t: y.clone().clamp_(t(1.), 2.5),
    "clamp_int_inplace": lambda T, y, t: y.long().clamp_(t(1.), 2.5),
    "clip": lambda T, y, t: T.clip(y, t(1.), 2.5),
    "hardtanh": lambda T, y, t: T.nn.functional.hardtanh(y, t(0.), 1.),
    "hardtanh_both": lambda T, y, t: T.nn.functional.hardtanh(y, t(0.), t(1.)),
    "hardtanh_": lambda T, y, t: T.nn.functional.hardtanh_(y.clone(), t(0.), 1.),
    "hardtanh_grad_bound": lambda T, y, t: T.nn.functional.hardtanh(y, t(0., requires_grad=True), 1.),
    "norm_p": lambda T, y, t: y.norm(p=t(2)),
    "norm_p_dim": lambda T, y, t: y.norm(t(3.), dim=0),
    "vector_norm": lambda T, y, t: T.linalg.vector_norm(y, t(2.)),
    "vector_norm_bool": lambda T, y, t: T.linalg.vector_norm(y, t(True)),
    "vector_norm_complex": lambda T, y, t: T.linalg.vector_norm(y, t(2 + 0j)),
    "vector_norm_grad": lambda T, y, t: T.linalg.vector_norm(y, t(2., requires_grad=True)),
    "matrix_norm": lambda T, y, t: T.linalg.matrix_norm(y.reshape(2, 3), t(1.)),
    "linalg_norm": lambda T, y, t: T.linalg.norm(y.reshape(2, 3), ord=t(-1)),
    "normalize": lambda T, y, t: T.nn.functional.normalize(y.reshape(2, 3), p=t(2.), dim=0),
    "pdist": lambda T, y, t: T.pdist(y.reshape(2, 3), t(1.)),
    "cdist": lambda T, y, t: T.cdist(y.reshape(2, 3), y.reshape(2, 3), t(2.)),
    "dist": lambda T, y, t: T.dist(y, 2 * y, t(3)),
    "renorm": lambda T, y, t: T.renorm(y.reshape(2, 3), t(2), 0, t(1.)),
    "matrix_power": lambda T, y, t: T.matrix_power(T.eye(2) * 2, t(3)),
    "matrix_power_float": lambda T, y, t: T.matrix_power(T.eye(2) * 2, t(3.)),
    "matrix_power_bool": lambda T, y, t: T.matrix_power(T.eye(2) * 2, t(True)),
    "add_alpha_int": lambda T, y, t: T.add(y.long(), y.long(), alpha=t(2)),
    "sub_alpha": lambda T, y, t: T.sub(y, y * 3, alpha=t(0.5)),
    "add_alpha_grad": lambda T, y, t: T.add(y, y, alpha=t(2., requires_grad=True)),
    "add_alpha_1d": lambda T, y, t: y.clone().add_(y, alpha=t([2.])),
    "normal_size": lambda T, y, t: T.normal(t(0.), t(1.), (4,)).shape,
    "normal_size_1d": lambda T, y, t: T.normal(t([0., 1.]), 1., (2,)),
    "normal_size_grad": lambda T, y, t: T.normal(t(0., requires_grad=True), 1., (2,)),
}


@pytest.mark.parametrize("name", list(_NUMBER_0D_CALLS))
def test_0d_tensor_as_number_argument(name):
    # torch's argument parser takes a 0-d tensor that does not require grad as a
    # Number (a clamp bound beside a number, a norm order, alpha ...), nothing else
    def f(T):
        y = T.tensor([-1., 2., 3.5, 0.5, -0.25, 4.])
        return _NUMBER_0D_CALLS[name](T, y, T.tensor)
    _check(f)
