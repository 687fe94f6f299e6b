"""Complex64/complex128 CUDA ops from C (``ptcore.cuda.ops.dense_fast``):
the unary ops of the core's operator table on a contiguous complex tensor
(``neg``, ``exp``, ``abs`` ...) and the binary ops of two complex tensors
of one dtype (``add``, ``mul``, ``div``, ``pow``, ``eq``/``ne``, broadcast
and strided too) launch the complex kernel library's kernels that the
general path launches, so their results are bitwise the general path's;
and complex ``sum``/``mean``/``prod`` of long rows, not many of them, are
split in chunks as the real reductions are (one block per row took 2.8 ms
for ``mean()`` of 2048x1024 complex64 on an H200)."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import reduce as cuda_reduce

try:
    import torch
except ImportError:                 # pragma: no cover - torch is an optional test dependency
    torch = None

COMPLEX = [ptcore.complex64, ptcore.complex128]
UNARY = ["neg", "square", "reciprocal", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "abs"]
BINARY = ["add", "sub", "mul", "div", "pow", "eq", "ne"]


def _np(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
    return a.astype(np.complex64 if dtype is ptcore.complex64 else np.complex128)


def _cuda(a):
    return ptcore.from_numpy(a).cuda()


def _general(fn):
    """``fn()`` with the dense fast paths uninstalled (the general path)."""
    _dense_fast.uninstall()
    try:
        return fn()
    finally:
        _dense_fast.install()


def _same(got, want):
    assert got.shape == want.shape and got.stride() == want.stride() and got.dtype is want.dtype
    g, w = got.cpu().numpy(), want.cpu().numpy()
    np.testing.assert_array_equal(g, w)


@pytest.fixture(autouse=True)
def _installed():
    ptcore.ones(1, device="cuda")           # (the fast paths are installed with the device)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", UNARY)
def test_unary_from_c_is_the_general_path(op, dtype, counted):
    x = _cuda(_np(dtype, (6, 5), 1))
    fn = getattr(ptcore, op)
    del counted[:]
    got = fn(x)
    assert counted == []                    # taken in C: the device layer never saw it
    want = _general(lambda: fn(x))
    assert op in counted
    _same(got, want)
    assert got.dtype is (dtype.to_real() if op == "abs" else dtype)
    if torch is not None:
        t = getattr(torch, op)(torch.from_numpy(x.cpu().numpy()))
        tol = 1e-5 if dtype is ptcore.complex64 else 1e-12
        np.testing.assert_allclose(got.cpu().numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", BINARY)
def test_binary_from_c_is_the_general_path(op, dtype, counted):
    a, b = _cuda(_np(dtype, (4, 6), 2)), _cuda(_np(dtype, (4, 6), 3))
    b[0, 0] = a[0, 0]                       # an equal pair for eq/ne
    v = _cuda(_np(dtype, (6,), 4))
    fn = getattr(ptcore, op)
    for x, y in ((a, b), (a, v), (v, a), (a.t(), b.t()), (a[:, ::2], b[:, 1::2]), (a[:1], b)):
        del counted[:]
        got = fn(x, y)
        assert counted == [], (op, x.shape, y.shape)
        want = _general(lambda: fn(x, y))
        _same(got, want)
        if op in ("eq", "ne"):
            assert got.dtype is ptcore.bool
        if torch is not None:
            tx, ty = (torch.from_numpy(t.cpu().numpy()) for t in (x, y))
            tol = 1e-4 if dtype is ptcore.complex64 else 1e-12
            np.testing.assert_allclose(got.cpu().numpy(), getattr(torch, op)(tx, ty).numpy(),
                                       rtol=tol, atol=tol)


def test_what_the_c_paths_decline(counted):
    a = _cuda(_np(ptcore.complex64, (4, 6), 5))
    b = _cuda(_np(ptcore.complex128, (4, 6), 6))
    h = a.to(ptcore.complex32)
    cases = [
        ("mul", lambda: a * b, lambda: ptcore.from_numpy(a.cpu().numpy() * b.cpu().numpy())),
        ("mul", lambda: a * 2.5, lambda: ptcore.from_numpy(a.cpu().numpy() * np.complex64(2.5))),
        ("exp", lambda: ptcore.exp(a.t()), lambda: ptcore.from_numpy(np.exp(a.cpu().numpy().T))),
        ("neg", lambda: ptcore.neg(h), lambda: ptcore.from_numpy(-(h.to(ptcore.complex64).cpu().numpy()))),
    ]
    for name, fn, want in cases:
        del counted[:]
        got = fn()
        assert name in counted              # the general path ran
        np.testing.assert_allclose(got.cpu().to(ptcore.complex128).numpy(),
                                   want().to(ptcore.complex128).numpy(), rtol=2e-3, atol=2e-3)
    # a recorded operand: the autograd path (complex gradients as torch's)
    x = a.clone().requires_grad_()
    del counted[:]
    (x * x).abs().sum().backward()
    assert "mul" in counted
    if torch is not None:
        tx = torch.from_numpy(a.cpu().numpy()).requires_grad_()
        (tx * tx).abs().sum().backward()
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
def test_long_complex_rows_are_split(op, dtype, monkeypatch):
    n = (1 << 16) + 37                      # over the split threshold, a tail chunk
    a = _np(dtype, (2, n), 7)
    if op == "prod":
        a = np.exp(1j * np.angle(a)).astype(a.dtype)       # unit modulus: no overflow
    x = _cuda(a)
    split = []
    orig = cuda_reduce._split_rows

    def spy(*args):
        split.append(args[0])
        return orig(*args)
    monkeypatch.setattr(cuda_reduce, "_split_rows", spy)
    tol = 2e-4 if dtype is ptcore.complex64 else 1e-10
    wide = a.astype(np.complex128)
    for got, want in ((getattr(x, op)(), getattr(wide, op)()),
                      (getattr(x, op)(1), getattr(wide, op)(1)),
                      (getattr(x, op)(1, keepdim=True), getattr(wide, op)(1, keepdims=True))):
        assert got.dtype is dtype and tuple(got.shape) == np.shape(want)
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=tol, atol=tol * abs(want).max())
    assert split == [op if op != "mean" else "sum"] * 3
    # short rows: one block each (no split), the result written in place
    del split[:]
    y = x[:, :100]
    np.testing.assert_allclose(getattr(y, op)(1).cpu().numpy(), getattr(wide[:, :100], op)(1),
                               rtol=tol, atol=tol * 100)
    assert split == []


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_complex_row_reductions_from_c(op, dtype, counted):
    """``sum``/``mean`` of a contiguous complex tensor over a trailing run of
    dims (or all of them) take the complex row kernel from C, bitwise the
    general path's; other dims take the general path."""
    a = _np(dtype, (3, 4, 50), 8)
    x = _cuda(a)
    wide = a.astype(np.complex128)
    tol = 1e-5 if dtype is ptcore.complex64 else 1e-12
    for args, kw, fast in (((), {}, True), ((2,), {}, True), ((-1,), {"keepdim": True}, True),
                           (((1, 2),), {}, True), ((0,), {}, False), (((0, 2),), {}, False)):
        del counted[:]
        got = getattr(x, op)(*args, **kw)
        assert (counted == []) is fast, (op, args, counted)
        want = _general(lambda: getattr(x, op)(*args, **kw))
        _same(got, want)
        np_args = {"axis": args[0] if args else None, "keepdims": kw.get("keepdim", False)}
        np.testing.assert_allclose(got.cpu().numpy(), getattr(wide, op)(**np_args), rtol=tol, atol=tol)
    # a recorded input: the gradient of a complex sum/mean, as torch's
    xr = x.clone().requires_grad_()
    getattr(xr, op)(2).abs().sum().backward()
    if torch is not None:
        tx = torch.from_numpy(a).requires_grad_()
        getattr(tx, op)(2).abs().sum().backward()
        np.testing.assert_allclose(xr.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_where_from_c(dtype, counted):
    a, b = _cuda(_np(dtype, (4, 6), 9)), _cuda(_np(dtype, (6,), 10))
    m = a.real > 0
    z = ptcore.zeros(6, 4, dtype=dtype, device="cuda")
    for c, x, y in ((m, a, b), (m.t(), a.t(), z), (m[0], b, a)):
        del counted[:]
        got = ptcore.where(c, x, y)
        assert counted == []
        want = _general(lambda: ptcore.where(c, x, y))
        _same(got, want)
        np.testing.assert_array_equal(got.cpu().numpy(),
                                      np.where(c.cpu().numpy(), x.cpu().numpy(), y.cpu().numpy()))
    # mixed complex dtypes promote: the general path
    del counted[:]
    other = ptcore.complex128 if dtype is ptcore.complex64 else ptcore.complex64
    r = ptcore.where(m, a, a.to(other))
    assert "where" in counted and r.dtype is ptcore.complex128


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_strided_number_comparisons_from_c(op, counted):
    """A comparison of a strided real view with a number (``z.real > 0``,
    ``x[:, ::2] == v``, an expanded column) takes the strided scalar kernel
    from C into a contiguous bool result, bitwise the general path's."""
    z = _cuda(_np(ptcore.complex64, (5, 6), 11))
    a = _cuda(np.round(np.random.default_rng(12).uniform(-2, 2, (6, 8)), 1).astype(np.float32))
    fn = getattr(ptcore, op)
    for v in (z.real, z.imag, a[:, ::2], a[1:, 2:], a[:, :1].expand(6, 8)):
        del counted[:]
        got = fn(v, 0.5)
        assert counted == []
        want = _general(lambda: fn(v, 0.5))
        assert op in counted
        _same(got, want)
        assert got.dtype is ptcore.bool and got.is_contiguous()
        np.testing.assert_array_equal(got.cpu().numpy(), getattr(np, {"eq": "equal", "ne": "not_equal",
                                      "lt": "less", "le": "less_equal", "gt": "greater",
                                      "ge": "greater_equal"}[op])(v.cpu().numpy(), np.float32(0.5)))
