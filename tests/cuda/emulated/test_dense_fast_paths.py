"""The C dense fast paths of CUDA's add/sub/mul/div, in-place forms and the
plain unary ops (ptcore/cuda/ops/dense_fast.pyx), reached from the operators
and from the entries (OpDef.device_fast) before the device layer: values
against the CPU, autograd through them, and every case they must leave to
the general path (which then raises the errors)."""
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _ewdrv
from ptcore.cuda.ops import dense_fast as _dense_fast


def _pair(shape=(3, 5), dtype=ptcore.float32, seed=0):
    rng = np.random.default_rng(seed)
    a = ptcore.from_numpy(rng.standard_normal(shape)).to(dtype)
    b = ptcore.from_numpy(rng.standard_normal(shape) + 2.5).to(dtype)
    return a, b, a.cuda(), b.cuda()


def _close(got, ref, dtype=ptcore.float32):
    assert got.device.type == "cuda" and got.dtype == ref.dtype and got.shape == ref.shape
    tol = {ptcore.float16: 2e-3, ptcore.bfloat16: 2e-2}.get(dtype, 1e-6)
    np.testing.assert_allclose(got.cpu().double().numpy(), ref.double().numpy(), rtol=tol, atol=tol)


OPS = [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
       ("div", lambda x, y: x / y)]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name,op", OPS)
def test_binary_values_without_the_layer(counted, name, op, dtype):
    a, b, da, db = _pair(dtype=dtype)
    _close(op(da, db), op(a, b), dtype)
    _close(getattr(ptcore, name)(da, db), getattr(ptcore, name)(a, b), dtype)
    _close(getattr(da, name)(db), getattr(a, name)(b), dtype)
    for s in (2, -0.75):
        _close(op(da, s), op(a, s), dtype)
        _close(getattr(ptcore, name)(da, s), getattr(ptcore, name)(a, s), dtype)
    assert counted == []


_OPEN_UNIT = ("asin", "acos", "atanh", "erfinv")
_POSITIVE = ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "lgamma", "digamma", "reciprocal")


def _unary_input(name, dtype):
    """Values in ``name``'s domain (CPU and CUDA copies)."""
    a, b, _, _ = _pair(dtype=ptcore.float64)
    if name in _OPEN_UNIT:
        x = a.tanh() * 0.9
    elif name == "acosh":
        x = a.abs() + 1.1
    elif name in _POSITIVE:
        x = a.abs() + 0.2
    else:
        x = a * 2
    x = x.to(dtype)
    return x, x.cuda()


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name", sorted(_dense_fast.UNARY_OPS))
def test_unary_values_without_the_layer(counted, name, dtype):
    x, dx = _unary_input(name, dtype)
    _close(getattr(ptcore, name)(dx), getattr(ptcore, name)(x), dtype)
    _close(getattr(dx, name)(), getattr(x, name)(), dtype)
    assert counted == []
    assert _ewdrv.device_fast_unary(_ewdrv.UNARY["logit"], dx) is None    # not one of the fast ops


@pytest.mark.parametrize("name", sorted(_dense_fast.UNARY_OPS))
def test_unary_gradients_through_the_fast_path(name):
    x, dx = _unary_input(name, ptcore.float64)
    x.requires_grad_()
    dx.requires_grad_()
    y, dy = getattr(ptcore, name)(x), getattr(ptcore, name)(dx)
    assert dy.grad_fn.name() == y.grad_fn.name()
    g = ptcore.linspace(-1, 1, x.numel(), dtype=ptcore.float64).reshape(x.shape)
    y.backward(g)
    dy.backward(g.cuda())
    _close(dx.grad, x.grad, ptcore.float64)


@pytest.mark.parametrize("name", ["abs_", "acos_", "floor_", "sigmoid_"])
def test_inplace_unary_writes_its_tensor_with_one_kernel(launches, name):
    x, dx = _unary_input(name[:-1], ptcore.float32)
    ptr, v = dx.data_ptr(), dx._version
    del launches[:]
    r = getattr(dx, name)()
    assert r is dx and dx.data_ptr() == ptr and dx._version == v + 1
    assert len(launches) == 1 and f"_unary_{name[:-1]}_" in launches[0]
    _close(dx, getattr(x, name)())


def test_unary_out_writes_a_fitting_out_directly(launches):
    x, dx = _unary_input("acos", ptcore.float32)
    out = ptcore.empty(x.shape, device="cuda")
    del launches[:]
    assert ptcore.acos(dx, out=out) is out
    assert len(launches) == 1
    _close(out, ptcore.acos(x))
    # a view of another layout, another dtype or a partial overlap: result and copy, same values
    wide = ptcore.zeros(x.shape[0], x.shape[1] * 2, device="cuda")
    ptcore.acos(dx, out=wide[:, ::2])
    _close(wide[:, ::2], ptcore.acos(x))
    assert float(wide[:, 1::2].abs().sum()) == 0
    o64 = ptcore.empty(x.shape, dtype=ptcore.float64, device="cuda")
    assert ptcore.acos(dx, out=o64) is o64            # float32 result cast into it, as torch
    _close(o64, ptcore.acos(x).double(), ptcore.float64)
    with pytest.raises(RuntimeError):
        ptcore.acos(dx, out=ptcore.empty(x.shape, dtype=ptcore.int64, device="cuda"))
    y = ptcore.arange(8.0, device="cuda") / 10
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ptcore.acos(y[1:], out=y[:-1])          # a partly overlapping out=: refused, as torch
    np.testing.assert_allclose(y.cpu().numpy(), np.arange(8.0) / 10, rtol=1e-6)


@pytest.mark.parametrize("name", ["add_", "sub_", "mul_", "div_"])
def test_inplace_values_and_version(counted, name):
    a, b, da, db = _pair()
    v = da._version
    r = getattr(da, name)(db)
    assert r is da and da._version == v + 1
    _close(da, getattr(a.clone(), name)(b))
    getattr(da, name)(3.0)
    getattr(a, name)(b)
    getattr(a, name)(3.0)
    _close(da, a)
    # self as the other operand (the same memory, not a partial overlap)
    getattr(da, name)(da)
    getattr(a, name)(a)
    _close(da, a)
    assert counted == []


def test_inplace_alpha():
    a, b, da, db = _pair()
    da.add_(db, alpha=-0.25)
    da.sub_(db, alpha=3)
    da.add_(db, alpha=1)
    _close(da, a.add_(b, alpha=-0.25).sub_(b, alpha=3).add_(b, alpha=1))


def test_autograd_through_the_fast_paths():
    a, b, _, _ = _pair()
    ca, cb = a.clone().requires_grad_(), b.clone().requires_grad_()
    da, db = a.cuda().requires_grad_(), b.cuda().requires_grad_()
    out = {}
    for k, (x, y) in {"cpu": (ca, cb), "cuda": (da, db)}.items():
        z = ptcore.relu((x * y - x / y + 2.0) * 0.5).exp().tanh()
        out[k] = z
        z.sum().backward()
    assert out["cuda"].grad_fn.name() == out["cpu"].grad_fn.name() == "TanhBackward0"
    _close(da.grad, ca.grad)
    _close(db.grad, cb.grad)


def test_no_grad_inplace_on_a_leaf_and_the_recorded_inplace_error():
    p = ptcore.nn.Parameter(ptcore.ones(4).cuda())
    g = ptcore.full((4,), 2.0).cuda()
    with ptcore.no_grad():
        p.add_(g, alpha=-0.5)           # an optimizer step: nn.Parameter with a plain tensor
        p.mul_(3.0)
    assert p.cpu().tolist() == [0.0] * 4 and p.requires_grad
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.add_(g)
    with ptcore.inference_mode():
        t = ptcore.ones(3).cuda()
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        t.add_(1.0)


def test_parameter_with_tensor_gives_a_tensor():
    p = ptcore.nn.Parameter(ptcore.ones(3).cuda())
    r = p + ptcore.ones(3).cuda()
    assert type(r) is ptcore.Tensor and r.requires_grad and r.grad_fn.name() == "AddBackward0"


def test_declined_cases_take_the_general_path(counted):
    a, b, da, db = _pair((4, 6))
    cases = [
        (lambda: da - db.double(), lambda: a - b.double(), "sub"),        # two dtypes
        (lambda: ptcore.add(da, db, alpha=2), lambda: ptcore.add(a, b, alpha=2), "add"),
        (lambda: da / True, lambda: a / True, "div"),                     # a bool is not a number here
        (lambda: ptcore.exp(da[:1].expand(4, 6)), lambda: ptcore.exp(a[:1].expand(4, 6)), "exp"),
    ]
    for got, ref, name in cases:
        counted.clear()
        _close(got(), ref())
        assert name in counted
    ia = ptcore.arange(6).cuda()
    counted.clear()
    assert (ia + ia).cpu().tolist() == [0, 2, 4, 6, 8, 10]     # integer tensors: the general path
    assert counted == ["add"]
    # a partial overlap in place: declined, then the general path's error
    x = ptcore.arange(8.0).cuda()
    counted.clear()
    with pytest.raises(RuntimeError, match="overlap|memory location"):
        x[1:].add_(x[:-1])
    assert "add_" in counted


def test_errors_of_the_general_path_stay():
    a = ptcore.ones(3).cuda()
    with pytest.raises(RuntimeError, match="size of tensor a"):
        a + ptcore.ones(4).cuda()
    with pytest.raises(RuntimeError, match="same device"):
        a + ptcore.ones(3)
    if ptcore.cuda.device_count() > 1:
        with pytest.raises(RuntimeError, match="same device"):
            a + ptcore.ones(3, device="cuda:1")
        b = ptcore.ones(3, device="cuda:1")
        assert (b * 2.0).device == ptcore.device("cuda", 1)
        assert b.add_(b).cpu().tolist() == [2.0] * 3


def test_empty_tensors():
    e = ptcore.empty(0, 3).cuda()
    assert (e + e).shape == (0, 3) and (e * 2.0).shape == (0, 3)
    assert ptcore.exp(e).shape == (0, 3)
    v = e._version
    e.add_(e)
    assert e._version == v + 1


def test_the_fast_paths_can_be_removed(counted):
    a = ptcore.ones(2).cuda()
    _dense_fast.uninstall()
    try:
        assert (a + a).cpu().tolist() == [2.0, 2.0]
        assert "add" in counted
    finally:
        _dense_fast.install()
    counted.clear()
    assert (a + a).cpu().tolist() == [2.0, 2.0]
    assert counted == []


def test_relu_gradient_is_threshold_backward_on_the_device():
    x = ptcore.tensor([-1.0, -2.0, 0.0, 3.0]).cuda().requires_grad_()
    g = ptcore.tensor([float("inf"), float("nan"), 1.0, 2.0]).cuda()
    ptcore.relu(x).backward(g)
    assert x.grad.cpu().tolist() == [0.0, 0.0, 0.0, 2.0]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16,
                                   ptcore.int64, ptcore.int32, ptcore.uint8, ptcore.int8])
def test_scalar_pow_and_comparison_kernels(dtype):
    """``x ** s`` and ``x > s`` ... with a Python number: one ``scalar``
    kernel each, the values and dtypes of the CPU's (and, for floats,
    exactly those of the tensor-exponent kernel the general path used)."""
    x = (ptcore.from_numpy(np.random.default_rng(3).standard_normal(37)) * 4).to(dtype)
    dx = x.cuda()
    tol = 1e-2 if dtype in (ptcore.float16, ptcore.bfloat16) else 1e-6
    ops = [lambda a, s: a ** s, lambda a, s: a > s, lambda a, s: a <= s, lambda a, s: a == s,
           lambda a, s: ptcore.ne(a, s), lambda a, s: ptcore.lt(a, s), lambda a, s: a >= s]
    for s in (2, 3, 0.5, -1, 2.5, 0):
        for f in ops:
            try:
                ref = f(x, s)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=str(e)[:30]):
                    f(dx, s)
                continue
            got = f(dx, s).cpu()
            assert got.dtype == ref.dtype
            np.testing.assert_allclose(got.double().numpy(), ref.double().numpy(), rtol=tol, atol=tol,
                                       equal_nan=True)
        if dtype.is_floating_point and s != 0:
            assert ptcore.equal((dx ** s).cpu(), (dx ** ptcore.full_like(dx, s)).cpu()) or \
                ptcore.allclose((dx ** s).cpu(), (dx ** ptcore.full_like(dx, s)).cpu(), rtol=0, atol=0,
                                equal_nan=True)


def test_functional_relu(counted):
    x = ptcore.tensor([-1.0, 2.0]).cuda().requires_grad_()
    F = ptcore.nn.functional
    for y in (F.relu(x), F.relu(x, inplace=False), F.relu(x, False), ptcore.nn.ReLU()(x)):
        assert y.cpu().tolist() == [0.0, 2.0] and y.grad_fn.name() == "ReluBackward0"
    assert counted == []
    z = x.detach().clone()
    assert F.relu(z, inplace=True) is z and z.cpu().tolist() == [0.0, 2.0]
    assert "relu" in counted


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16])
@pytest.mark.parametrize("n", [1, 7, 4096, 65535, 65536, 70000])
def test_full_sum_and_mean(counted, dtype, n):
    """``x.sum()`` / ``ptcore.mean(x)`` of a dense float32/float64 tensor
    shorter than one block's row: the row kernel launched directly, the
    same values (bitwise) as the general path; autograd recorded."""
    x = ptcore.from_numpy(np.random.default_rng(n).standard_normal(n)).to(dtype)
    dx = x.cuda()
    fast = dtype is not ptcore.float16 and n < 65536
    for op in ("sum", "mean"):
        counted.clear()
        got = getattr(dx, op)()
        assert (counted == []) == fast
        assert got.shape == () and got.dtype == dtype
        _dense_fast.uninstall()
        try:
            ref = getattr(ptcore, op)(dx)
        finally:
            _dense_fast.install()
        assert ptcore.equal(got.cpu(), ref.cpu())
        tol = 1e-2 if dtype is ptcore.float16 else 1e-5
        np.testing.assert_allclose(got.cpu().double().numpy(), getattr(x.double(), op)().numpy(),
                                   rtol=tol, atol=tol)
    d = dx.clone().requires_grad_()
    y = d.mean()
    assert y.grad_fn.name() == "MeanBackward0"
    y.backward()
    np.testing.assert_allclose(d.grad.cpu().double().numpy(), np.full(n, 1.0 / n), rtol=tol)
    # a dtype: the general path
    counted.clear()
    assert dx.sum(dtype=ptcore.float64).dtype == ptcore.float64
    assert counted == ["sum"]


# (shape, dim, keepdim, fast): a run of dims ending last (rows shorter than
# 65,536: the row kernel) or with kept dims after it (the column kernel)
_DIM_CASES = [
    ((256, 1024), 0, False, True), ((256, 1024), [0], True, True), ((256, 1024), 1, False, True),
    ((256, 1024), -1, True, True), ((256, 1024), (0, 1), False, False), ((16, 64), (1, -2), True, True),
    ((4, 5, 6), 1, False, True), ((4, 5, 6), (0, 1), True, True), ((4, 5, 6), [-2, -1], False, True),
    ((4, 5, 6), (0, 2), False, True), ((3, 33, 7, 2), (1, 2), False, True), ((70, 3), 0, False, True),
    ((5, 70000), 1, False, False), ((70000, 3), 0, False, False), ((7,), 0, True, True),
    ((2, 1, 3), 1, False, True),
    # two runs, the second ending last (a conv bias gradient's): rows, then columns
    ((8, 6, 5, 5), (0, 2, 3), False, True), ((8, 6, 5, 5), [0, -1, -2], True, True),
    ((2, 3, 4, 5), (1, 3), False, True), ((2, 3, 4, 5), (0, 2), False, False),
    ((2, 1, 1, 5), (0, 3), False, False), ((3, 2, 300, 300), (0, 2, 3), False, False),
]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("shape,dim,keepdim,fast", _DIM_CASES)
def test_sum_and_mean_over_dims(counted, dtype, shape, dim, keepdim, fast):
    """``x.sum(dim)`` / ``ptcore.mean(x, dim, keepdim=...)``: bitwise the
    general path's result (the same kernel), the CPU's values, the CPU's
    shape; autograd recorded with the op's formula."""
    x = ptcore.from_numpy(np.random.default_rng(len(shape)).standard_normal(shape)).to(dtype)
    dx = x.cuda()
    for op in ("sum", "mean"):
        for call in (lambda t: getattr(t, op)(dim, keepdim),
                     lambda t: getattr(ptcore, op)(t, dim=dim, keepdim=keepdim),
                     lambda t: getattr(ptcore, op)(t, dim, keepdim=keepdim)):
            counted.clear()
            got = call(dx)
            assert (counted == []) == fast
            ref = call(x)
            assert got.shape == ref.shape and got.dtype == dtype and got.is_contiguous()
            np.testing.assert_allclose(got.cpu().numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
            _dense_fast.uninstall()
            try:
                general = call(dx)
            finally:
                _dense_fast.install()
            assert ptcore.equal(got.cpu(), general.cpu())
    d = dx.clone().requires_grad_()
    y = d.mean(dim, keepdim)
    assert y.grad_fn.name() == "MeanBackward1"
    (y * 3).sum().backward()
    n = x.numel() // y.numel()
    np.testing.assert_allclose(d.grad.cpu().numpy(), np.full(shape, 3.0 / n), rtol=1e-6)
    d.grad = None
    ptcore.sum(d, dim=dim).sum().backward()
    assert d.grad.cpu().tolist() == ptcore.ones(shape, dtype=dtype).tolist()


def test_sum_over_dims_declines_to_the_general_path(counted):
    """Anything but a contiguous float32/float64 tensor, ints (not bools)
    for dims, a bool keepdim and no dtype/out: the general path, which
    raises the errors as on the CPU."""
    x = ptcore.ones(4, 6).cuda()
    declined = [lambda: x.t().sum(0), lambda: x.half().sum(0), lambda: x.sum(0, dtype=ptcore.float64),
                lambda: x.sum([]),
                lambda: x.sum(0, out=ptcore.empty(6, device="cuda")), lambda: x[:, :5].sum(0),
                lambda: ptcore.ones(2, 0, 3).cuda().sum(1), lambda: x.double().sum((0, 1), True)]
    for f in declined[:-1]:
        counted.clear()
        r = f()
        assert counted and r.device.type == "cuda"
    counted.clear()
    declined[-1]()              # ((0, 1), keepdim) takes the fast path: the control case
    assert counted == []
    for args in ((2,), (-3,), ((0, 0),), ((0, -2),), ("a",), (0.5,), (True,), (0, 1), ([0], None)):
        try:
            ref = x.cpu().sum(*args)
        except Exception as e:
            with pytest.raises(type(e)):
                x.sum(*args)
            with pytest.raises(type(e)):
                ptcore.mean(x, *args)
        else:
            assert x.sum(*args).cpu().tolist() == ref.tolist()


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_comparisons_without_the_layer(counted, dtype):
    a, b, da, db = _pair(dtype=dtype)
    b[0, :2] = a[0, :2]
    db = b.cuda()
    for name, op in (("eq", lambda x, y: x == y), ("ne", lambda x, y: x != y), ("lt", lambda x, y: x < y),
                     ("le", lambda x, y: x <= y), ("gt", lambda x, y: x > y), ("ge", lambda x, y: x >= y)):
        for y, dy in ((b, db), (0.5, 0.5), (0, 0)):
            got, ref = op(da, dy), op(a, y)
            assert got.dtype == ptcore.bool and got.device.type == "cuda"
            assert ptcore.equal(got.cpu(), ref), (name, y)
    assert counted == []
    # the in-place comparisons stay on the general path
    c = da.clone()
    c.gt_(0.0)
    assert ptcore.equal(c.cpu(), (a > 0).to(dtype))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_pow_without_the_layer(counted, dtype):
    """``x ** s``, ``ptcore.pow(x, s)``, ``x.pow(y)`` of dense floating
    tensors: the C fast path (the scalar / binary pow kernels), bitwise the
    general path's result, the CPU's values; autograd records PowBackward0/1."""
    a, b, da, db = _pair(dtype=dtype)
    cases = [lambda x, y: x ** 2, lambda x, y: x ** 0.5, lambda x, y: ptcore.pow(x, 3),
             lambda x, y: x.pow(-1), lambda x, y: y ** x, lambda x, y: ptcore.pow(y, 2.5)]
    for f in cases:
        counted.clear()
        got = f(da, db)
        assert counted == []
        ref = f(a, b)
        assert got.dtype == ref.dtype
        tol = {ptcore.float16: 2e-2, ptcore.bfloat16: 1e-1}.get(dtype, 1e-5)
        np.testing.assert_allclose(got.cpu().double().numpy(), ref.double().numpy(), rtol=tol,
                                   atol=tol, equal_nan=True)
        _dense_fast.uninstall()
        try:
            general = f(da, db)
        finally:
            _dense_fast.install()
        assert ptcore.equal(got.cpu(), general.cpu()) or \
            ptcore.allclose(got.cpu(), general.cpu(), rtol=0, atol=0, equal_nan=True)
    x = db.clone().requires_grad_()
    y = x ** 2
    assert y.grad_fn.name() == "PowBackward0"
    y.sum().backward()
    _close(x.grad, 2 * b, dtype)
    e = da.clone().requires_grad_()
    z = ptcore.pow(db, e)
    assert z.grad_fn.name() == "PowBackward1"
    z.sum().backward()
    _close(e.grad, (b ** a) * ptcore.log(b), dtype) if dtype in (ptcore.float32, ptcore.float64) \
        else None
    # integers and a complex exponent: the general path
    counted.clear()
    assert (ptcore.arange(4).cuda() ** 2).cpu().tolist() == [0, 1, 4, 9]
    assert counted.count("__pow__") == 1
    if dtype in (ptcore.float32, ptcore.float64):
        assert (da ** 1j).dtype.is_complex
        assert counted.count("__pow__") == 2


_TENSOR_ONLY = [("maximum", ptcore.maximum), ("minimum", ptcore.minimum), ("fmax", ptcore.fmax),
                ("fmin", ptcore.fmin), ("atan2", ptcore.atan2), ("arctan2", ptcore.arctan2),
                ("hypot", ptcore.hypot), ("copysign", ptcore.copysign), ("remainder", ptcore.remainder),
                ("fmod", ptcore.fmod), ("floor_divide", ptcore.floor_divide), ("xlogy", ptcore.xlogy),
                ("__mod__", lambda x, y: x % y), ("__floordiv__", lambda x, y: x // y)]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name,fn", _TENSOR_ONLY)
def test_tensor_only_binary_without_the_layer(counted, name, fn, dtype):
    a, b, da, db = _pair(dtype=dtype)
    if name == "xlogy":
        b, db = b.abs(), db.abs()
    a[0, 0] = b[0, 0] = float("nan")            # NaN propagation (maximum) or not (fmax)
    da[0, 0] = db[0, 0] = float("nan")
    a[1, 1], da[1, 1] = -0.0, -0.0              # copysign, fmod, atan2 of a signed zero
    del counted[:]
    _close(fn(da, db), fn(a, b), dtype)
    assert counted == []
    _close(fn(da, db[:1]), fn(a, b[:1]), dtype)             # broadcast: the strided kernel
    assert counted == []
    # a number operand or another dtype: the general path, the same values
    if name not in ("maximum", "minimum", "fmax", "fmin", "hypot", "atan2", "arctan2"):   # tensor-only
        _close(fn(da, 1.5), fn(a, 1.5), dtype)
    other = ptcore.float32 if dtype is ptcore.float64 else ptcore.float64
    _close(fn(da, db.to(other)), fn(a, b.to(other)), dtype)
    assert counted


@pytest.mark.parametrize("name,fn", _TENSOR_ONLY)
def test_tensor_only_binary_gradients(name, fn):
    a, b, _, _ = _pair(dtype=ptcore.float64)
    if name == "xlogy":
        b = b.abs()
    got, want = [], []
    for dev, res in (("cpu", want), ("cuda", got)):
        x = a.clone().to(dev).requires_grad_()
        y = b.clone().to(dev).requires_grad_()
        z = fn(x, y)
        if name in ("floor_divide", "__floordiv__"):        # recorded, no derivative (as torch)
            with pytest.raises(RuntimeError, match="floor_divide"):
                z.backward(ptcore.ones_like(z))
            res += [z.grad_fn.name(), None, None]
            continue
        z.backward(ptcore.ones_like(z))
        res += [z.grad_fn.name(), x.grad, y.grad]
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:]):
        if w is None:
            assert g is None
        else:
            _close(g, w, ptcore.float64)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16])
@pytest.mark.parametrize("lo,hi", [(0, 1), (-0.5, None), (None, 0.25), (0.3, 0.3), (1.0, -1.0),
                                   (float("nan"), 1.0), (-float("inf"), float("inf")), (2, 3)])
def test_clamp_with_number_bounds(launches, dtype, lo, hi):
    """clamp/clamp_ with number bounds: float32/float64 take one kernel (the
    bounds as parameters) where the bounds are ordered; every case equals
    the CPU's (NaN input, lo > hi: hi wins, a NaN bound propagates)."""
    a, _, da, _ = _pair((4, 6), dtype=dtype)
    a[0, 0], da[0, 0] = float("nan"), float("nan")
    del launches[:]
    got = da.clamp(lo, hi)
    ordered = lo is None or hi is None or lo <= hi
    if dtype in (ptcore.float32, ptcore.float64) and ordered:
        assert len(launches) == 1 and "_unary_hardtanh_" in launches[0]
    want = a.clamp(lo, hi)
    np.testing.assert_array_equal(got.cpu().double().numpy(), want.double().numpy())
    db = da.clone()
    assert db.clamp_(lo, hi) is db
    np.testing.assert_array_equal(db.cpu().double().numpy(), want.double().numpy())
    x = da.clone().requires_grad_()
    xc = a.clone().requires_grad_()
    x.clamp(lo, hi).sum().backward()
    xc.clamp(lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().double().numpy(), xc.grad.double().numpy())


@pytest.mark.parametrize("name", sorted(_dense_fast.UNARY_OPS))
def test_inplace_unary_without_the_layer(counted, name):
    x, dx = _unary_input(name, ptcore.float32)
    fn = getattr(ptcore.Tensor, name + "_", None)
    if fn is None:
        pytest.skip(f"no Tensor.{name}_")
    ptr, v = dx.data_ptr(), dx._version
    assert fn(dx) is dx
    assert dx.data_ptr() == ptr and dx._version == v + 1
    assert counted == []
    _close(dx, fn(x.clone()))


@pytest.mark.parametrize("alias,name", _dense_fast._inplace_aliases())
def test_inplace_unary_aliases_without_the_layer(counted, alias, name):
    """The in-place forms of the fast ops' aliases (``arcsin_`` of ``asin_``,
    ``negative_`` of ``neg_`` ...) take the same path, function and method."""
    x, dx = _unary_input(name, ptcore.float32)
    fns = [getattr(ptcore.Tensor, alias + "_")]
    if hasattr(ptcore, alias + "_"):             # (torch has no absolute_ function)
        fns.append(getattr(ptcore, alias + "_"))
    for fn in fns:
        y = dx.clone()
        del counted[:]
        ptr, v = y.data_ptr(), y._version
        assert fn(y) is y
        assert y.data_ptr() == ptr and y._version == v + 1 and counted == []
        want = getattr(dx.clone(), name + "_")()
        np.testing.assert_array_equal(y.cpu().numpy(), want.cpu().numpy())
        _close(y, getattr(x.clone(), name + "_")())
    leaf = dx.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(leaf, alias + "_")()


def test_inplace_unary_leaves_autograd_cases_to_the_general_path(counted):
    x, dx = _unary_input("exp", ptcore.float64)
    leaf = dx.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.exp_()
    # a non-leaf that requires grad: recorded (ExpBackward0), gradients as the CPU's
    got = []
    for t in (x, dx):
        a = t.clone().requires_grad_()
        b = a * 1.5
        b.exp_()
        assert b.grad_fn.name() == "ExpBackward0"
        b.sum().backward()
        got.append(a.grad)
    _close(got[1], got[0], ptcore.float64)
    del counted[:]
    with ptcore.no_grad():                       # nothing records: the fast path, even on a leaf
        leaf.exp_()
    assert counted == []
    m = ptcore.nn.ReLU(inplace=True)
    y = dx - 0.5
    assert m(y) is y and float(y.min()) >= 0


@pytest.mark.parametrize("call", [lambda t: t.clamp(-0.5, 0.5), lambda t: t.clamp(min=0),
                                  lambda t: ptcore.clamp(t, max=0.25), lambda t: ptcore.clip(t, -1, 2),
                                  lambda t: t.clip(0, max=1), lambda t: t.clamp(0.3, 0.3)])
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_clamp_without_the_layer(counted, call, dtype):
    a, _, da, _ = _pair((5, 7), dtype=dtype)
    a[0, 0], da[0, 0] = float("nan"), float("nan")
    del counted[:]
    got, want = call(da), call(a)
    assert counted == []
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    x, xc = da.clone().requires_grad_(), a.clone().requires_grad_()
    y, yc = call(x), call(xc)
    assert y.grad_fn.name() == yc.grad_fn.name()
    y.sum().backward()
    yc.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), xc.grad.numpy())


def test_clamp_declines_to_the_general_path(counted):
    a, _, da, _ = _pair((3, 4))
    with pytest.raises(RuntimeError):
        da.clamp(0, 1e39)                        # out of float32's range: PyTorch's overflow error
    assert counted
    for lo, hi in ((1.0, -1.0), (float("nan"), 1.0), (True, 2)):
        del counted[:]
        np.testing.assert_array_equal(da.clamp(lo, hi).cpu().numpy(), a.clamp(lo, hi).numpy())
        assert counted                           # lo > hi, a NaN bound, a bool: the general path
    with pytest.raises(RuntimeError, match="min.*max|At least one"):
        da.clamp()


_BCAST_SHAPES = [((3, 5), (5,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((4,), (2, 3, 4)), ((1,), (3, 2)),
                 ((0, 3), (3,)), ((), (2, 2))]
_BCAST_OPS = [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
              ("div", lambda x, y: x / y), ("pow", lambda x, y: x.abs() ** y), ("lt", lambda x, y: x < y),
              ("maximum", ptcore.maximum), ("remainder", ptcore.remainder), ("atan2", ptcore.atan2)]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16])
@pytest.mark.parametrize("sa,sb", _BCAST_SHAPES)
@pytest.mark.parametrize("name,fn", _BCAST_OPS)
def test_broadcast_binary_without_the_layer(counted, name, fn, sa, sb, dtype):
    rng = np.random.default_rng(3)
    a = ptcore.from_numpy(rng.standard_normal(sa)).to(dtype)
    b = ptcore.from_numpy(rng.standard_normal(sb) + 3).to(dtype)
    da, db = a.cuda(), b.cuda()
    del counted[:]
    got = fn(da, db)
    assert counted == [] or name == "pow"        # (pow: abs() first, a fast op too)
    want = fn(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype and got.is_contiguous()
    np.testing.assert_allclose(got.cpu().double().numpy(), want.double().numpy(),
                               rtol=2e-3 if dtype == ptcore.float16 else 1e-6, atol=1e-6)


def test_broadcast_binary_layouts_errors_and_gradients(counted):
    a, b, da, db = _pair((4, 6), dtype=ptcore.float64)
    _close(da.t() + db.t(), a.t() + b.t(), ptcore.float64)          # two transposed operands
    _close(da[:, ::2] * db[0, :3], a[:, ::2] * b[0, :3], ptcore.float64)
    assert counted == []
    with pytest.raises(RuntimeError, match="size of tensor"):
        da + db[:, :4]                           # not broadcastable: the general path's error
    del counted[:]
    r = da + db.float()                          # another dtype: the general path (promotes)
    assert counted and r.dtype is ptcore.float64
    x = a.clone().requires_grad_()
    w = b[0].clone().requires_grad_()
    dx, dw = x.detach().cuda().requires_grad_(), w.detach().cuda().requires_grad_()
    for u, v in ((x, w), (dx, dw)):
        ((u * v - v / (u.abs() + 1)) ** 2).sum().backward()
    _close(dx.grad, x.grad, ptcore.float64)
    _close(dw.grad, w.grad, ptcore.float64)
    assert dw.grad.shape == (6,)


@pytest.mark.parametrize("name,call", [("add_", lambda x, y: x.add_(y)), ("mul_", lambda x, y: x.mul_(y)),
                                       ("sub_ alpha", lambda x, y: x.sub_(y, alpha=0.5)),
                                       ("add_ alpha", lambda x, y: x.add_(y, alpha=2.0)),
                                       ("div_", lambda x, y: x.div_(y))])
@pytest.mark.parametrize("sb", [(6,), (4, 1), (1, 1, 6)[1:], ()])
def test_broadcast_inplace_without_the_layer(counted, name, call, sb):
    a, _, da, _ = _pair((4, 6))
    b = ptcore.from_numpy(np.asarray(np.random.default_rng(4).standard_normal(sb) + 3)).float()
    db = b.cuda()
    ptr, v = da.data_ptr(), da._version
    del counted[:]
    assert call(da, db) is da
    assert counted == [] and da.data_ptr() == ptr and da._version == v + 1
    _close(da, call(a.clone(), b))


def test_broadcast_inplace_declines_overlap_and_growth(counted):
    a, _, da, _ = _pair((4, 6))
    with pytest.raises(RuntimeError, match="single memory location"):
        da.mul_(da[:, :1])                       # a view of da itself: the general path's error
    assert counted
    del counted[:]
    with pytest.raises(RuntimeError):
        da[:1].add_(da)                          # would grow the written tensor
    assert counted


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name,fn", [("__rsub__", lambda t: 1 - t), ("__rsub__", lambda t: 0.3 - t),
                                     ("rsub", lambda t: ptcore.rsub(t, 2.5)), ("rsub", lambda t: t.rsub(-1)),
                                     ("__rtruediv__", lambda t: 2 / t), ("__rtruediv__", lambda t: 0.7 / t)])
def test_reflected_number_ops_without_the_layer(counted, name, fn, dtype):
    a, b, _, _ = _pair((3, 5), dtype=ptcore.float64)
    x = (a + 3).to(dtype)
    del counted[:]
    got = fn(x.cuda())
    assert counted == []
    want = fn(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.cpu().double().numpy(), want.double().numpy())   # bitwise
    xc = x.double().clone().requires_grad_()
    xd = x.double().cuda().requires_grad_()
    yc, yd = fn(xc), fn(xd)
    assert yd.grad_fn.name() == yc.grad_fn.name()
    yc.backward(ptcore.ones_like(yc))
    yd.backward(ptcore.ones_like(yd))
    _close(xd.grad, xc.grad, ptcore.float64)


def test_reflected_number_ops_decline(counted):
    a, _, da, _ = _pair((2, 3))
    for fn in (lambda t: (1 + 2j) - t, lambda t: 2 / t.int(), lambda t: ptcore.rsub(t, 2, alpha=3),
               lambda t: 2 / t.t()):
        del counted[:]
        got, want = fn(da), fn(a)
        assert counted
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="bool"):
        True - da                                # torch's error (a bool number), from the general path


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.float64])
@pytest.mark.parametrize("ms", [(2, 3, 4), (3, 1), (4,), (1, 1, 1), ()])
@pytest.mark.parametrize("value", [0.0, -float("inf"), float("nan"), -7, 1e4])
def test_masked_fill_without_the_layer(counted, dtype, ms, value):
    rng = np.random.default_rng(5)
    x = ptcore.from_numpy(rng.standard_normal((2, 3, 4))).to(dtype)
    m = ptcore.from_numpy(np.asarray(rng.standard_normal(ms) > 0))
    dx, dm = x.cuda(), m.cuda()
    del counted[:]
    got = dx.masked_fill(dm, value)
    got2 = ptcore.masked_fill(dx, dm, value)
    y = dx.clone()
    assert y.masked_fill_(dm, value) is y
    assert counted == []
    want = x.masked_fill(m, value)
    for g in (got, got2, y):
        np.testing.assert_array_equal(g.cpu().double().numpy(), want.double().numpy())


def test_masked_fill_gradients_and_declined_cases(counted):
    x, _, dx, _ = _pair((3, 4), dtype=ptcore.float64)
    m = x > 0
    xc, xd = x.clone().requires_grad_(), dx.clone().requires_grad_()
    for t, mm in ((xc, m), (xd, m.cuda())):
        (t.masked_fill(mm[0], 2.0) * t).sum().backward()
    _close(xd.grad, xc.grad, ptcore.float64)
    with pytest.raises(RuntimeError, match="leaf"):
        xd.masked_fill_(m.cuda(), 0.0)
    dm = m.cuda()
    for call in (lambda t, mm: t.masked_fill(mm, ptcore.tensor(3.0)),          # a tensor value
                 lambda t, mm: t.masked_fill(mm.unsqueeze(0).expand(2, 3, 4), 1.0),  # grows x
                 lambda t, mm: t.float().masked_fill(mm, 1e39)):               # overflows float32
        del counted[:]
        try:
            want = call(x, m)
        except RuntimeError as e:
            with pytest.raises(type(e)):
                call(dx, dm)
        else:
            np.testing.assert_array_equal(call(dx, dm).cpu().numpy(), want.numpy())
        assert counted
    with pytest.raises(RuntimeError, match="boolean"):
        dx.masked_fill(dm.int(), 0.0)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16])
@pytest.mark.parametrize("cs,xs,ys", [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((4,), (3, 4), ()),
                                      ((2, 1, 4), (3, 1), (1, 3, 4))])
def test_where_without_the_layer(counted, dtype, cs, xs, ys):
    rng = np.random.default_rng(6)
    c = ptcore.from_numpy(np.asarray(rng.standard_normal(cs) > 0))
    x = ptcore.from_numpy(np.asarray(rng.standard_normal(xs))).to(dtype)
    y = ptcore.from_numpy(np.asarray(rng.standard_normal(ys))).to(dtype)
    dc, dx, dy = c.cuda(), x.cuda(), y.cuda()
    del counted[:]
    got, got2 = ptcore.where(dc, dx, dy), dx.where(dc, dy)
    assert counted == []
    want = ptcore.where(c, x, y)
    for g in (got, got2):
        assert g.shape == want.shape and g.dtype == want.dtype
        np.testing.assert_array_equal(g.cpu().double().numpy(), want.double().numpy())


def test_where_gradients_and_declined_cases(counted):
    a, b, _, _ = _pair((3, 4), dtype=ptcore.float64)
    c = a > b
    grads = []
    for dev in ("cpu", "cuda"):
        x = a.clone().to(dev).requires_grad_()
        y = b[0].clone().to(dev).requires_grad_()
        z = ptcore.where(c.to(dev), x, y)
        assert z.grad_fn.name() == "WhereBackward0"
        (z * z).sum().backward()
        grads.append((x.grad, y.grad))
    _close(grads[1][0], grads[0][0], ptcore.float64)
    _close(grads[1][1], grads[0][1], ptcore.float64)
    da, db, dc = a.cuda(), b.cuda(), c.cuda()
    for call in (lambda: ptcore.where(dc, da, 0.0), lambda: ptcore.where(dc, da, db.float()),
                 lambda: ptcore.where(dc)):
        del counted[:]
        call()
        assert "where" in counted                # a number, two dtypes, one argument: the layer
    ci = dc.int()
    with pytest.raises(RuntimeError, match="bool"):
        ptcore.where(ci, da, db)


_CAST_DTYPES = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16, ptcore.int64, ptcore.int32,
                ptcore.int8, ptcore.uint8, ptcore.bool]


def test_dtype_conversions_take_the_cast_kernel_from_c():
    """x.to(dtype)/.float()/.half() of a contiguous CUDA tensor: one cast
    kernel launched from C, bitwise the general path's result (the same
    kernel) for every pair of real dtypes, NaN/inf/negative values
    included; strided and complex conversions keep the general path."""
    ptcore.ones(1, device="cuda")                    # (the runtime installs its paths on first use)
    fast = _dense_fast._tensors._convert_fast
    vals = ptcore.tensor([-3.7, -1.0, -0.5, 0.0, 0.25, 1.5, 2.9, 100.0, 300.0, float("nan"),
                          float("inf"), -float("inf")], dtype=ptcore.float64)
    calls = []
    orig = _dense_fast.convert_dense

    def spy(t, dt):
        r = orig(t, dt)
        calls.append(r is not None)
        return r
    fast[0] = spy
    try:
        _check_conversions(vals, calls, fast, spy)
    finally:
        fast[0] = orig


def _check_conversions(vals, calls, fast, spy):
    for src in _CAST_DTYPES:
        x = vals.to(src).cuda() if src.is_floating_point else vals[:9].to(src).cuda()
        for dst in _CAST_DTYPES:
            if dst is src:
                continue
            del calls[:]
            got = x.to(dst)
            assert calls == [True], (src, dst)
            fast[0] = None
            want = x.to(dst)                     # the general path: cast_copy of the same kernel
            fast[0] = spy
            assert got.dtype is dst and got.is_contiguous()
            assert ptcore.equal(got, want) or (dst.is_floating_point and np.array_equal(
                got.cpu().double().numpy(), want.cpu().double().numpy(), equal_nan=True)), (src, dst)
    x = vals.float().cuda()
    del calls[:]
    assert x.reshape(3, 4).t().half().dtype is ptcore.float16 and x[::2].double().shape == (6,)
    assert x.to(ptcore.complex64).dtype is ptcore.complex64
    assert True not in calls                     # strided, complex: declined
    y = x[:4].clone().requires_grad_()
    z = y.half()
    assert z.grad_fn.name() == "ToCopyBackward0"
    z.float().sum().backward()
    assert y.grad.cpu().tolist() == [1.0] * 4


def _spy_clone():
    """(calls, restore): record whether each CUDA clone took the C path."""
    ptcore.ones(1, device="cuda")                    # (the runtime installs its paths on first use)
    fast = _dense_fast._tensors._clone_fast
    orig = _dense_fast.clone_dense
    calls = []

    def spy(t, preserve):
        r = orig(t, preserve)
        calls.append(r is not None)
        return r
    fast[0] = spy
    return calls, lambda: fast.__setitem__(0, orig)


def _views(x):
    """Non-contiguous views of a (4, 6) tensor ``x``, by name."""
    return {"transposed": x.t(), "sliced": x[:, ::2], "expanded": x[:1].expand(3, 6),
            "permuted 3-d": x.reshape(2, 3, 4).permute(2, 0, 1), "column": x[:, 2:3],
            "stepped 3-d": x.reshape(2, 2, 6)[:, :, 1::3]}


@pytest.mark.parametrize("dtype", _CAST_DTYPES + [ptcore.complex64])
def test_clone_and_contiguous_from_c(dtype):
    """clone() of a tensor with contiguous strides and contiguous() of any
    view: one copy from C (the driver's copy, or the copy kernel over the
    view's strides), values and strides those of the same call on the CPU,
    the source untouched."""
    calls, restore = _spy_clone()
    rng = np.random.default_rng(1)
    base = ptcore.from_numpy(rng.standard_normal((4, 6)) * 50)
    base = base.to(dtype) if dtype.is_floating_point or dtype.is_complex else (base % 100).to(dtype)
    x = base.cuda()
    try:
        for mf in (None, ptcore.preserve_format, ptcore.contiguous_format):
            del calls[:]
            got = x.clone() if mf is None else x.clone(memory_format=mf)
            assert calls == [True], mf
            assert got.data_ptr() != x.data_ptr() and got.stride() == base.stride()
            assert ptcore.equal(got.cpu(), base)
        for name, cpu_view in _views(base).items():
            view = _views(x)[name]
            del calls[:]
            got = view.contiguous()
            assert calls == [True], name
            want = cpu_view.contiguous()
            assert got.is_contiguous() and got.stride() == want.stride() and got.shape == want.shape
            assert ptcore.equal(got.cpu(), want), name
            got = view.clone(memory_format=ptcore.contiguous_format)
            assert got.stride() == want.stride() and ptcore.equal(got.cpu(), want), name
        assert ptcore.equal(x.cpu(), base)
        del calls[:]
        got = x[1:3].clone()                     # contiguous at an offset
        assert calls == [True]
        assert got.storage_offset() == 0 and ptcore.equal(got.cpu(), base[1:3])
        for shape in ((), (0, 3), (1,), (5, 1, 2)):
            z = ptcore.ones(shape, dtype=dtype)
            del calls[:]
            got = z.cuda().clone()
            assert calls == [True] and got.shape == z.shape and got.stride() == z.stride()
            assert ptcore.equal(got.cpu(), z)
    finally:
        restore()


def test_views_with_more_dims_than_the_strided_kernels_take():
    """contiguous() and a unary op of a view whose dims do not collapse to
    the strided kernels' limit (8) decline to the general path instead of
    raising ValueError: the copy takes any number of dims, the unary op
    raises the general path's NotImplementedError; a permuted 10-d tensor is
    still one contiguous pass that keeps its strides."""
    many = ptcore.arange(3.0 ** 10).reshape((3,) * 10) * 1e-4
    dm = many.cuda()
    step = (slice(None, None, 2),) * 10              # 10 dims that do not merge
    view, cpu_view = dm[step], many[step]
    assert ptcore.equal(view.contiguous().cpu(), cpu_view.contiguous())
    with pytest.raises(NotImplementedError, match="non-mergeable dims"):
        ptcore.exp(view)
    x = ptcore.arange(1024.0).reshape((2,) * 10)
    perm = list(range(10))[::-1]
    got = ptcore.neg(x.cuda().permute(*perm))
    assert got.stride() == x.permute(*perm).stride()
    assert ptcore.equal(got.cpu(), ptcore.neg(x.permute(*perm)))
    assert ptcore.equal(x.cuda().permute(*perm).contiguous().cpu(), x.permute(*perm).contiguous())


def test_clone_preserving_another_layout_takes_the_general_path():
    """clone() (preserve_format) of a view without contiguous strides keeps
    the general path, which keeps a dense permutation's strides as torch
    does; complex32 has no copy kernels of its own: declined too."""
    calls, restore = _spy_clone()
    base = ptcore.arange(24.).reshape(4, 6)
    x = base.cuda()
    try:
        for name, cpu_view in _views(base).items():
            del calls[:]
            got = _views(x)[name].clone()
            assert calls == [False], name
            want = cpu_view.clone()
            assert got.stride() == want.stride() and ptcore.equal(got.cpu(), want), name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # (complex32 is experimental, as in torch)
            h = ptcore.ones(4, 6, dtype=ptcore.complex32, device="cuda").t()
        del calls[:]
        got = h.contiguous()
        assert calls == [False] and got.is_contiguous() and got.dtype is ptcore.complex32
    finally:
        restore()


def test_clone_and_contiguous_from_c_record_autograd():
    """The C path leaves autograd to its caller: clone()/contiguous() of a
    tensor that requires grad get CloneBackward0, and the gradient flows."""
    x = ptcore.arange(12., device="cuda").reshape(3, 4).requires_grad_()
    y = x.t().contiguous()
    z = x.clone()
    assert y.grad_fn.name() == "CloneBackward0" and z.grad_fn.name() == "CloneBackward0"
    (y * ptcore.arange(12., device="cuda").reshape(4, 3)).sum().backward()
    assert x.grad.cpu().tolist() == ptcore.arange(12.).reshape(4, 3).t().tolist()
    with ptcore.no_grad():
        assert x.t().contiguous().grad_fn is None and not x.clone().requires_grad


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name", sorted(_dense_fast.UNARY_OPS))
def test_unary_of_row_major_views_without_the_layer(counted, name, dtype):
    """A slice or step of a contiguous tensor (positive strides in row-major
    order) takes the strided kernel from C into a contiguous result: the
    CPU's values, bitwise the general path's (the same kernel)."""
    x, dx = _unary_input(name, dtype)
    big = x.repeat(2, 3)                                     # (6, 15)
    dbig = big.cuda()
    del counted[:]
    for view in (lambda t: t[:, ::2], lambda t: t[1:5, 3:11], lambda t: t[:, 4:5],
                 lambda t: t.reshape(3, 2, 15)[:, :, 1::4], lambda t: t[::3, ::7]):
        got = getattr(ptcore, name)(view(dbig))
        assert got.is_contiguous()
        _close(got, getattr(ptcore, name)(view(big)), dtype)
    assert counted == []
    y = dbig[:, ::2]
    got = getattr(ptcore, name)(y)
    fast = _dense_fast._tensors._clone_fast                  # (any installed path: the runtime is up)
    assert fast[0] is not None
    _dense_fast.uninstall()
    try:
        want = getattr(ptcore, name)(y)                      # the general path
    finally:
        _dense_fast.install()
    np.testing.assert_array_equal(got.cpu().double().numpy(), want.cpu().double().numpy())


def test_unary_of_permuted_layouts_keeps_their_strides(counted):
    """A permutation of a dense layout (a transpose, a permute; at an
    offset too) is one contiguous kernel over its span from C, into a
    result with its strides -- the layout torch and the CPU give -- and the
    contiguous result's values in that layout."""
    base = ptcore.linspace(-3, 3, 48).reshape(4, 12)
    x = base.cuda()
    for view in (lambda t: t.t(), lambda t: t.reshape(2, 3, 8).permute(2, 0, 1),
                 lambda t: t.reshape(2, 4, 6).transpose(0, 2), lambda t: t[1:3].t()):
        for name in ("exp", "neg", "sigmoid", "relu"):
            del counted[:]
            got = getattr(ptcore, name)(view(x))
            assert counted == [], name
            want = getattr(ptcore, name)(view(base))
            assert got.stride() == want.stride() and got.shape == want.shape
            np.testing.assert_array_equal(
                got.cpu().numpy(), getattr(ptcore, name)(view(x).contiguous()).cpu().numpy())


def test_unary_of_other_layouts_takes_the_general_path(counted):
    """Expanded views and views with a size-1 dim that are not row-major
    are left to the general path; so are integer inputs to the floating ops."""
    x = ptcore.arange(24., device="cuda").reshape(4, 6)
    for view in (x[:1].expand(3, 6), x.reshape(4, 1, 6).permute(2, 1, 0), x[:, ::2].t()):
        del counted[:]
        got = ptcore.exp(view)
        assert counted == ["exp"]
        np.testing.assert_allclose(got.cpu().numpy(), np.exp(view.cpu().numpy()), rtol=1e-6)
    del counted[:]
    ptcore.exp(ptcore.arange(12, device="cuda").reshape(3, 4)[:, ::2])
    assert counted == ["exp"]


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid", "sqrt", "relu"])
def test_unary_gradients_through_row_major_views(name):
    x = ptcore.linspace(0.1, 3.0, 60, dtype=ptcore.float64).reshape(6, 10)
    dx = x.cuda().requires_grad_()
    x.requires_grad_()
    y, dy = getattr(ptcore, name)(x[:, ::3]), getattr(ptcore, name)(dx[:, ::3])
    assert dy.grad_fn.name() == y.grad_fn.name()
    g = ptcore.linspace(-1, 1, 24, dtype=ptcore.float64).reshape(6, 4)
    y.backward(g)
    dy.backward(g.cuda())
    np.testing.assert_allclose(dx.grad.cpu().numpy(), x.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_over_trailing_dims_without_the_layer(counted, op, dtype):
    """amax/amin over a given trailing run of dims take the row kernel from
    C (half types read as they are: the result is an element): the CPU's
    values, NaN propagating and ties included."""
    rng = np.random.default_rng(5)
    v = np.round(rng.standard_normal((3, 4, 37)) * 4) / 4         # ties
    v[1, 2, 5] = np.nan
    x = ptcore.from_numpy(v).to(dtype)
    dx = x.cuda()
    for dim in (-1, 2, (1, 2), (-2, -1), [2]):
        for keepdim in (False, True):
            del counted[:]
            got = getattr(ptcore, op)(dx, dim, keepdim=keepdim)
            got2 = getattr(dx, op)(dim=dim, keepdim=keepdim)
            assert counted == [], (dim, keepdim)
            want = getattr(ptcore, op)(x, dim, keepdim=keepdim)
            for g in (got, got2):
                assert g.dtype is dtype and g.shape == want.shape
                np.testing.assert_array_equal(g.cpu().double().numpy(), want.double().numpy())


def test_amax_gradients_and_declined_calls(counted):
    v = ptcore.tensor([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5]], dtype=ptcore.float64)
    dx = v.cuda().requires_grad_()
    x = v.clone().requires_grad_()
    ptcore.amax(dx, -1).sum().backward()
    ptcore.amax(x, -1).sum().backward()
    assert dx.grad.cpu().tolist() == x.grad.tolist()      # ties share the gradient
    y = v.cuda()
    for call in (lambda: y.amax(), lambda: y.amax(0), lambda: y.amax(()), lambda: y.t().amax(-1),
                 lambda: ptcore.arange(6, device="cuda").reshape(2, 3).amax(-1)):
        del counted[:]
        call()
        assert counted == ["amax"]
    with pytest.raises(IndexError):
        ptcore.empty(3, 0, device="cuda").amax(-1)
    with pytest.raises(IndexError):
        y.amax(2)
