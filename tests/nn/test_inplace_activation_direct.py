"""In-place ReLU / LeakyReLU written directly into the input (no clone) with
PyTorch's nodes (ReluBackward0, LeakyReluBackward1 saving the result), against
PyTorch: values, gradients (also double backward), version counter checks,
leaf/view/inference refusals, and the fallbacks (views, non-contiguous,
negative slope, float16)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _run(lib, x, fn, g, dtype):
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    y = xt * 1.5
    z = fn(lib, y)
    out = z * z
    out.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
    return z, y, xt.grad


ACTS = {
    "leaky_module": lambda lib, y: lib.nn.LeakyReLU(0.2, inplace=True)(y),
    "leaky_functional": lambda lib, y: lib.nn.functional.leaky_relu(y, 0.01, inplace=True),
    "leaky_": lambda lib, y: lib.nn.functional.leaky_relu_(y, 0.3),
    "leaky_zero_slope": lambda lib, y: lib.nn.functional.leaky_relu(y, 0.0, True),
    "relu_module": lambda lib, y: lib.nn.ReLU(inplace=True)(y),
    "relu_functional": lambda lib, y: lib.nn.functional.relu(y, inplace=True),
    "relu_": lambda lib, y: lib.nn.functional.relu_(y),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTS))
def test_inplace_activation_matches_torch(name, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5))
    x[0, 0, :3] = [0.0, -0.0, 1e-30]
    g = rng.standard_normal((4, 3, 5))
    zp, yp, gp = _run(ptcore, x, ACTS[name], g, dtype)
    zt, yt, gt = _run(torch, x, ACTS[name], g, dtype)
    assert zp is yp                                  # written in place
    assert type(zp.grad_fn).__name__ == type(zt.grad_fn).__name__
    np.testing.assert_array_equal(zp.detach().numpy(), zt.detach().numpy())
    np.testing.assert_array_equal(np.signbit(zp.detach().numpy()), np.signbit(zt.detach().numpy()))
    np.testing.assert_array_equal(gp.numpy(), gt.numpy())


@pytest.mark.parametrize("name", ["leaky_module", "relu_module"])
def test_inplace_activation_no_clone_node(name):
    """The node's only edge is the input's previous history (no CloneBackward0)."""
    x = ptcore.randn(3, 4, requires_grad=True)
    y = x * 2
    v = y._version
    ACTS[name](ptcore, y)
    assert y._version == v + 1
    (fn, _), = y.grad_fn.next_functions
    assert type(fn).__name__ == "MulBackward0"


def test_inplace_leaky_double_backward_matches_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20)
    res = []
    for lib in (ptcore, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = xt * xt
        lib.nn.functional.leaky_relu(y, 0.2, inplace=True)
        (gx,) = lib.autograd.grad((y * xt).sum(), xt, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), xt)
        res.append((gx.detach().numpy(), ggx.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["leaky_module", "relu_module"])
def test_inplace_activation_result_modified_later_is_refused(name):
    for lib in (ptcore, torch):
        x = lib.randn(5, requires_grad=True)
        y = x * 1.0
        z = ACTS[name](lib, y)
        w = z * 2          # (mul saves nothing of z's we touch)
        y.mul_(3)          # the saved result changes
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (w.sum() + y.sum()).backward()


@pytest.mark.parametrize("name", ["leaky_module", "relu_module"])
def test_inplace_activation_on_leaf_is_refused(name):
    x = ptcore.randn(5, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ACTS[name](ptcore, x)
    with ptcore.no_grad():          # without recording it is just a write
        before = x.detach().clone()
        ACTS[name](ptcore, x)
    np.testing.assert_array_equal(x.detach().numpy(),
                                  torch.nn.functional.leaky_relu(
                                      torch.from_numpy(before.numpy()),
                                      0.2 if name == "leaky_module" else 0.0).numpy())


def test_inplace_activation_inference_tensor_is_refused():
    with ptcore.inference_mode():
        x = ptcore.randn(4)
    with pytest.raises(RuntimeError, match="inference tensor"):
        ptcore.nn.functional.leaky_relu(x, 0.2, inplace=True)


@pytest.mark.parametrize("make", ["view", "relu_view", "transposed", "float16"])
def test_inplace_activation_fallbacks_match_torch(make):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4))
    g = rng.standard_normal((6, 4))
    res = []
    for lib in (ptcore, torch):
        dt = lib.float16 if make == "float16" else lib.float32
        xt = lib.tensor(x, dtype=dt, requires_grad=True)
        y = xt * 2
        if make == "view":
            lib.nn.functional.leaky_relu(y[1:4], 0.1, inplace=True)
        elif make == "relu_view":
            lib.nn.functional.relu(y[4:], inplace=True)
        elif make == "transposed":
            lib.nn.functional.leaky_relu(y.t(), 0.1, inplace=True)
        else:
            lib.nn.functional.leaky_relu(y, 0.1, inplace=True)
        y.backward(lib.tensor(g, dtype=dt))
        res.append((y.detach().float().numpy(), xt.grad.float().numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_inplace_leaky_negative_slope_refused_at_backward_as_torch():
    for lib in (ptcore, torch):
        x = lib.randn(5, requires_grad=True)
        y = x * 1.0
        lib.nn.functional.leaky_relu(y, -0.5, inplace=True)
        with pytest.raises(RuntimeError, match="negative slope"):
            y.sum().backward()
