"""One-pass forward and backward kernels of activations (hardswish ...):
values of the forward and of the input gradient against float64 NumPy
formulas (without torch) and against torch's (bits in float32/float64 and in
float16/bfloat16, computed in float32 and rounded once), lengths 1..70 and
1031 (every vector tail), strided inputs, the in-place variants, gradcheck and
gradgradcheck in float64 (the recorded backward keeps the composite), 1 and 2
threads (the same bits) and every CPU path (the same bits in a child process
under ATEN_CPU_CAPABILITY)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from cpu_capability import run_child, skip_unless_runnable


def _hardswish_np(x):
    t = x + x.dtype.type(3)
    return x * np.where(t < 0, 0, np.where(t > 6, 6, t)).astype(x.dtype) / x.dtype.type(6)


def _hardswish_grad_np(x, g):
    c3, half = x.dtype.type(3), x.dtype.type(0.5)
    with np.errstate(invalid="ignore"):
        return np.where(x <= -c3, x.dtype.type(0), np.where(x < c3, g * (x / c3 + half), g))


def _silu_np(x):
    return x / (1 + np.exp(-x))


def _silu_grad_np(x, g):
    s = 1 / (1 + np.exp(-x))
    return g * s * (1 + x * (1 - s))


_SLOPE = 0.07


def _leaky_np(x):
    return np.where(x > 0, x, x * _SLOPE)


def _leaky_grad_np(x, g):
    return np.where(x > 0, g, g * _SLOPE)


def _sigmoid_np(x):
    return 1 / (1 + np.exp(-x))


def _sigmoid_grad_np(x, g):
    y = _sigmoid_np(x)
    return g * (1 - y) * y


# glu over dim 0 of stack([x, flip(x)]): a = x, b = flip(x)
def _glu_np(x):
    return x * _sigmoid_np(x[::-1])


def _glu_grad_np(x, g):
    b = x[::-1]
    s = _sigmoid_np(b)
    return g * s + ((1 - s) * s * x * g)[::-1]


# name -> (f(F, lib, x), float64 forward, float64 g * f'(x))
OPS = {
    "hardswish": (lambda F, lib, x: F.hardswish(x), _hardswish_np, _hardswish_grad_np),
    "silu": (lambda F, lib, x: F.silu(x), _silu_np, _silu_grad_np),
    "leaky_relu": (lambda F, lib, x: F.leaky_relu(x, _SLOPE), _leaky_np, _leaky_grad_np),
    "sigmoid": (lambda F, lib, x: lib.sigmoid(x), _sigmoid_np, _sigmoid_grad_np),
    "glu": (lambda F, lib, x: F.glu(lib.stack([x, x.flip(0)]), 0)[0], _glu_np, _glu_grad_np),
}
# torch's bits (the others: within float rounding of torch's, its exp's and ours
# differing; sigmoid's and glu's gradients are torch's operations on ptcore's
# sigmoid: test_backward_kernels_are_torchs below)
EXACT = {"hardswish", "leaky_relu"}
TOL = {ptcore.float32: 2e-6, ptcore.float64: 1e-14, ptcore.float16: 2e-3, ptcore.bfloat16: 1.6e-2}
LENGTHS = list(range(1, 71)) + [1031]


def _data(n, seed=0, scale=4.0):
    rng = np.random.default_rng(seed + n)
    return rng.standard_normal(n) * scale, rng.standard_normal(n)


def _run(name, x, g, dtype, lib=ptcore):
    f = OPS[name][0]
    xt = lib.tensor(x, dtype=getattr(lib, str(dtype).split(".")[-1])).requires_grad_()
    y = f(lib.nn.functional, lib, xt)
    y.backward(lib.tensor(g, dtype=xt.dtype))
    return y.detach(), xt.grad


def _np(t):
    return t.to(ptcore.float64).numpy() if isinstance(t, ptcore.Tensor) else t.double().numpy()


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_matches_numpy_float64(name, dtype):
    _, fwd, grad = OPS[name]
    for n in LENGTHS:
        x, g = _data(n)
        # the reference of the values the kernel sees (rounded to the dtype)
        xr = ptcore.tensor(x, dtype=dtype).to(ptcore.float64).numpy()
        gr = ptcore.tensor(g, dtype=dtype).to(ptcore.float64).numpy()
        y, gx = _run(name, x, g, dtype)
        # (glu's float16/bfloat16 gradient: its half-precision steps and a sum of two)
        tol = TOL[dtype] * (4 if name == "glu" and dtype.itemsize == 2 else 1)
        np.testing.assert_allclose(_np(y), fwd(xr), rtol=tol, atol=tol, err_msg=f"n={n}")
        np.testing.assert_allclose(_np(gx), grad(xr, gr), rtol=tol, atol=tol, err_msg=f"n={n}")


@pytest.mark.parametrize("name", ["hardswish", "leaky_relu", "sigmoid"])
def test_special_values(name):
    _, fwd, grad = OPS[name]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0, -3.0, 2.9999999, -2.9999999, 1e30,
                  -1e30, 1e-40] * 3)
    g = np.array([1.0, -2.0, 0.5, np.inf, -1.0, np.nan, 2.0, -1.5, 1.0, 3.0, -0.0, 1.0] * 3)
    for dtype in (ptcore.float32, ptcore.float64):
        # the formulas in the dtype's own arithmetic (NumPy's float32 is IEEE's)
        xr = ptcore.tensor(x, dtype=dtype).numpy()
        gr = ptcore.tensor(g, dtype=dtype).numpy()
        y, gx = _run(name, x, g, dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            np.testing.assert_array_equal(y.numpy(), fwd(xr))
            np.testing.assert_array_equal(gx.numpy(), grad(xr, gr))


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    for n in LENGTHS + [65536 + 7]:
        x, g = _data(n, 1)
        y, gx = _run(name, x, g, dtype)
        yt, gxt = _run(name, x, g, dtype, torch)
        tol = 0 if name in EXACT else TOL[dtype] * (4 if dtype.itemsize == 2 else 1)
        np.testing.assert_allclose(_np(y), _np(yt), rtol=tol, atol=tol, err_msg=f"n={n}")
        np.testing.assert_allclose(_np(gx), _np(gxt), rtol=tol, atol=tol, err_msg=f"n={n}")


@pytest.mark.parametrize("name", OPS)
def test_strided_input(name):
    f = OPS[name][0]
    base = ptcore.tensor(_data(4 * 37)[0].reshape(4, 37), dtype=ptcore.float32)
    for view in (lambda t: t[:, ::2], lambda t: t.t(), lambda t: t[1:, 3:]):
        x = view(base).requires_grad_()
        xc = view(base).contiguous().requires_grad_()
        g = ptcore.randn(*x.shape)
        y, yc = f(F, ptcore, x), f(F, ptcore, xc)
        y.backward(g)
        yc.backward(g)
        # (silu's strided gradient is its composite: float rounding of the kernel's)
        tol = 0 if name in EXACT else 2e-6
        np.testing.assert_allclose(y.detach().numpy(), yc.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(x.grad.numpy(), xc.grad.numpy(), rtol=tol, atol=tol)


def test_hardswish_inplace():
    x, g = _data(1031)
    a = ptcore.tensor(x, dtype=ptcore.float32, requires_grad=True)
    b = ptcore.tensor(x, dtype=ptcore.float32, requires_grad=True)
    ya = F.hardswish(a * 1, inplace=True)
    yb = F.hardswish(b * 1)
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    ya.backward(ptcore.tensor(g, dtype=ptcore.float32))
    yb.backward(ptcore.tensor(g, dtype=ptcore.float32))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    with ptcore.no_grad():
        c = ptcore.tensor(x, dtype=ptcore.float32)
        F.hardswish(c, inplace=True)
    np.testing.assert_array_equal(c.numpy(), yb.detach().numpy())


@pytest.mark.parametrize("name", OPS)
def test_gradcheck_and_double_backward(name):
    f = OPS[name][0]
    x = ptcore.tensor(_data(40, scale=2.5)[0], dtype=ptcore.float64, requires_grad=True)
    assert ptcore.autograd.gradcheck(lambda t: f(F, ptcore, t), (x,))
    assert ptcore.autograd.gradgradcheck(lambda t: f(F, ptcore, t), (x,))


@pytest.mark.parametrize("name", OPS)
def test_empty(name):
    f = OPS[name][0]
    x = ptcore.zeros(0, 4, requires_grad=True)
    y = f(F, ptcore, x)
    y.sum().backward()
    assert y.shape == (0, 4) and x.grad.shape == (0, 4)


@pytest.mark.parametrize("name", OPS)
def test_threads_give_the_same_bits(name):
    x, g = _data(300007)
    prev = ptcore.get_num_threads()
    out = []
    try:
        for nt in (1, 2):
            ptcore.set_num_threads(nt)
            y, gx = _run(name, x, g, ptcore.float32)
            out.append((y.numpy(), gx.numpy()))
    finally:
        ptcore.set_num_threads(prev)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


_CHILD = """
import sys, numpy as np, ptcore
import os
sys.path[:0] = [sys.argv[3], os.path.dirname(sys.argv[3])]     # (tests/nn, tests)
from test_activation_backward_fast import OPS, _run
d = np.load(sys.argv[1])
res = {}
for name in OPS:
    for dt in ("float32", "float64"):
        y, gx = _run(name, d["x"], d["g"], getattr(ptcore, dt))
        res[name + dt + "y"], res[name + dt + "g"] = y.numpy(), gx.numpy()
np.savez(sys.argv[2], **res)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    import os
    x, g = _data(1031 + 64)
    x[::17] = np.nan
    x[5::23] = 3.0
    x[7::29] = -3.0
    np.savez(tmp_path / "in.npz", x=x, g=g)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz", os.path.dirname(__file__))
    child = np.load(tmp_path / "o.npz")
    for name in OPS:
        for dt in ("float32", "float64"):
            y, gx = _run(name, x, g, getattr(ptcore, dt))
            np.testing.assert_array_equal(child[name + dt + "y"], y.numpy())
            np.testing.assert_array_equal(child[name + dt + "g"], gx.numpy())


def _torch_bwd(torch, name, g, v, dim=0):
    aten = torch.ops.aten
    if name == "leaky_relu":
        return aten.leaky_relu_backward(g, v, _SLOPE, False)
    if name == "sigmoid":
        return aten.sigmoid_backward(g, v)
    return aten.glu_backward(g, v, dim)


def _our_bwd(name, g, v, dim=0):
    """(the gradient ptcore's autograd gives through the op's node, the value
    its backward saved: the input, sigmoid's result)"""
    x = v.detach().clone().requires_grad_()
    if name == "sigmoid":
        y = ptcore.sigmoid(x)
    else:
        y = F.leaky_relu(x, _SLOPE) if name == "leaky_relu" else F.glu(x, dim)
    y.backward(g)
    return x.grad, (y if name == "sigmoid" else x).detach()


@pytest.mark.parametrize("name", ["leaky_relu", "sigmoid", "glu"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("gkind", ["full", "expanded", "strided"])
def test_backward_kernels_are_torchs(name, dtype, gkind):
    """the one-pass backward against torch's backward kernel on the same
    operands: leaky_relu's and sigmoid's bit for bit (float16/bfloat16 too),
    glu's within float rounding (its sigmoid is ptcore's)"""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for shape, dim in (((6, 2062), 1), ((4, 2, 70), 0), ((3, 64), -1), ((2, 6, 5), 1)):
        xv = rng.standard_normal(shape) * 4
        xv.flat[::13] = np.nan
        gshape = list(shape)
        if name == "glu":
            gshape[dim] //= 2
        gv = rng.standard_normal(gshape)
        if gkind == "strided":
            gv = np.ascontiguousarray(np.swapaxes(gv, 0, -1))
        v, vt = ptcore.tensor(xv, dtype=getattr(ptcore, dtype)), torch.tensor(xv).to(getattr(torch, dtype))
        if gkind == "expanded":
            g, gt = ptcore.tensor(1.5, dtype=v.dtype).expand(*gshape), torch.tensor(1.5, dtype=vt.dtype).expand(*gshape)
        elif gkind == "strided":
            g = ptcore.tensor(gv, dtype=v.dtype).transpose(0, -1)
            gt = torch.tensor(gv).to(vt.dtype).transpose(0, -1)
        else:
            g, gt = ptcore.tensor(gv, dtype=v.dtype), torch.tensor(gv).to(vt.dtype)
        ours, saved = _our_bwd(name, g, v, dim)
        ours = _np(ours)
        vt = torch.from_numpy(saved.to(ptcore.float64).numpy()).to(vt.dtype)   # (exact)
        theirs = _np(_torch_bwd(torch, name, gt, vt, dim))
        if name == "glu":
            tol = TOL[getattr(ptcore, dtype)] * 4
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol, err_msg=str(shape))
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=str(shape))


def test_glu_backward_kernel_against_composite():
    """glu's forward kernel gives the composite's bits; its backward kernel (contiguous input, any dim, a full or expanded gradient) and
    the composite (a strided input) agree within float rounding; NaN propagates"""
    rng = np.random.default_rng(5)
    for shape, dim in (((6, 1031 * 2), 1), ((4, 6, 70), 1), ((8, 5, 3), 0), ((3, 40000), 1)):
        xv = rng.standard_normal(shape).astype(np.float32) * 3
        xv.flat[::29] = np.nan
        x = ptcore.tensor(xv).requires_grad_()
        xs = ptcore.tensor(np.ascontiguousarray(np.swapaxes(xv, 0, -1))).transpose(0, -1)
        xs.requires_grad_()
        with ptcore.no_grad():      # the one-pass forward: the composite's values
            comp = x.narrow(dim, 0, shape[dim] // 2) * ptcore.sigmoid(
                x.narrow(dim, shape[dim] // 2, shape[dim] // 2))
            np.testing.assert_array_equal(F.glu(x, dim).numpy(), comp.numpy())
            np.testing.assert_array_equal(F.glu(x.double(), dim).numpy(), (
                x.double().narrow(dim, 0, shape[dim] // 2) * ptcore.sigmoid(
                    x.double().narrow(dim, shape[dim] // 2, shape[dim] // 2))).numpy())
        np.testing.assert_array_equal(F.glu(x, dim).detach().numpy(), F.glu(xs, dim).detach().numpy())
        for gfun in (lambda y: y.sum(), lambda y: (y * y.detach()).sum()):
            x.grad = xs.grad = None
            gfun(F.glu(x, dim)).backward()
            gfun(F.glu(xs, dim)).backward()
            np.testing.assert_allclose(x.grad.numpy(), xs.grad.numpy(), rtol=2e-6, atol=2e-6)
