"""The C dense fast paths of CUDA's add/sub/mul/div, in-place forms and the
plain unary ops (ptcore/cuda/_dense_fast.pyx), reached from the operators
and from the entries (OpDef.device_fast) before the device layer: values
against the CPU, autograd through them, and every case they must leave to
the general path (which then raises the errors)."""
import numpy as np
import pytest

import ptcore
from ptcore._ops import _ewdrv
from ptcore.cuda import _dense_fast


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


@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu"])
def test_unary_values_without_the_layer(counted, name):
    a, b, da, db = _pair()
    x, dx = (b, db) if name in ("log", "sqrt") else (a, da)
    _close(getattr(ptcore, name)(dx), getattr(ptcore, name)(x))
    _close(getattr(dx, name)(), getattr(x, name)())
    assert counted == []
    assert _ewdrv.device_fast_unary(_ewdrv.UNARY["sin"], dx) is None    # not one of the fast ops


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
        (lambda: da + db[0], lambda: a + b[0], "add"),                    # broadcasting
        (lambda: da.t() * db.t(), lambda: a.t() * b.t(), "mul"),          # not contiguous
        (lambda: da - db.double(), lambda: a - b.double(), "sub"),        # two dtypes
        (lambda: ptcore.add(da, db, alpha=2), lambda: ptcore.add(a, b, alpha=2), "add"),
        (lambda: da / True, lambda: a / True, "div"),                     # a bool is not a number here
        (lambda: ptcore.exp(da.t()), lambda: ptcore.exp(a.t()), "exp"),
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
