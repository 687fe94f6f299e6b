"""Autograd above ``__torch_dispatch__`` for the ops ptcore records inside their kernel
(views, ``clone``, ``F.linear``, convolutions, ``layer_norm``): a wrapper subclass
requiring grad, and a logging TorchDispatchMode over real tensors requiring grad, give
torch's gradients; the handler sees the backward's ops, and a wrapper's gradient is a
wrapper, as in torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from test_torch_dispatch_subclass import _wrapper_class  # noqa: E402

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]], dtype=np.float32)
W = (np.arange(12.0, dtype=np.float32).reshape(4, 3) - 5) / 7
K = np.array([[[[0.5, -1.0], [2.0, 0.25]]]], dtype=np.float32)
R = np.linspace(-1, 1, 24, dtype=np.float32)


def _weights(L, y):
    """A fixed weighting of ``y``'s elements (a loss whose gradient is not uniform)."""
    n = y.numel()
    return L.tensor(R[:n].copy()).reshape(tuple(y.shape))


_F = {
    "view": lambda L, a: a.view(3, 2),
    "reshape": lambda L, a: a.reshape(6),
    "flatten": lambda L, a: a.flatten(),
    "transpose": lambda L, a: a.transpose(0, 1),
    "t": lambda L, a: a.t(),
    "permute": lambda L, a: a.permute(1, 0),
    "expand": lambda L, a: a.unsqueeze(0).expand(2, 2, 3),
    "squeeze": lambda L, a: a.unsqueeze(1).squeeze(1),
    "clone": lambda L, a: a.clone(),
    "select": lambda L, a: a[1],
    "slice": lambda L, a: a[:, 1:],
    "narrow": lambda L, a: a.narrow(1, 1, 2),
    "movedim": lambda L, a: a.movedim(0, 1),
    "linear": lambda L, a: L.nn.functional.linear(a, L.tensor(W)),
    "linear_bias": lambda L, a: L.nn.functional.linear(a, L.tensor(W), L.ones(4)),
    "linear_3d": lambda L, a: L.nn.functional.linear(a.reshape(1, 2, 3), L.tensor(W)),
    "conv2d": lambda L, a: L.nn.functional.conv2d(a.reshape(1, 1, 2, 3), L.tensor(K),
                                                  padding=1),
    "layer_norm": lambda L, a: L.nn.functional.layer_norm(a, (3,)),
    # (recorded with their formulas; their backward's one-pass kernels would read the
    # data a wrapper does not hold: while a dispatch layer is on, the composite runs)
    "relu": lambda L, a: L.relu(a),
    "softmax": lambda L, a: a.softmax(-1),
    "log_softmax": lambda L, a: L.nn.functional.log_softmax(a, 0),
    "pad": lambda L, a: L.nn.functional.pad(a, (1, 2)),
}

# forward sequences equal to torch's (ptcore's handler sees the op the program called:
# aten.linear, aten.conv2d, aten.layer_norm, aten.reshape, aten.movedim, aten.narrow,
# where torch's sees the ops they decompose into)
_FORWARD_ALIKE = {"view", "transpose", "t", "permute", "expand", "squeeze", "clone",
                  "select", "slice"}
# backward sequences equal to torch's (the ops the handler sees between the loss's
# own backward and the gradient's accumulation)
_BACKWARD_ALIKE = (_FORWARD_ALIKE | {"view", "reshape", "flatten", "linear", "conv2d"}) - \
    {"select", "slice", "narrow", "movedim", "squeeze"}
# the accumulation of a leaf's gradient (torch: detach, or a strided copy; ptcore: clone)
_ACCUMULATE = {"aten.detach.default", "aten.clone.default", "aten.new_empty_strided.default",
               "aten.copy_.default"}


def _backward_ops(log):
    log = list(log)
    assert log[:2] == ["aten.ones_like.default", "aten.expand.default"], log
    log = log[2:]
    while log and log[-1] in _ACCUMULATE:
        log.pop()
    return log


def _run_wrapper(lib, name):
    log = []
    Wr = _wrapper_class(lib, log)
    a = Wr(lib.tensor(X), requires_grad=True)
    y = _F[name](lib, a)
    assert type(y) is Wr and y.requires_grad and y.grad_fn is not None
    loss = (y * _weights(lib, y)).sum()
    n = len(log)
    loss.backward()
    return log[:n], log[n:], a.grad


@pytest.mark.parametrize("name", sorted(_F))
def test_wrapper_requiring_grad_through_op_as_torch(name):
    pf, pb, pg = _run_wrapper(ptcore, name)
    tf, tb, tg = _run_wrapper(torch, name)
    assert type(pg).__name__ == type(tg).__name__ == "Wrapper"
    np.testing.assert_allclose(pg.elem.numpy(), tg.elem.numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(pg.shape) == tuple(tg.shape)
    # the forward: the op, then the loss's mul and sum
    assert pf[-2:] == tf[-2:] == ["aten.mul.Tensor", "aten.sum.default"]
    if name in _FORWARD_ALIKE:
        assert pf == tf
    # the backward: the loss's mul first, then the op's backward
    pb, tb = _backward_ops(pb), _backward_ops(tb)
    assert pb[0] == tb[0] == "aten.mul.Tensor"
    if name in _BACKWARD_ALIKE:
        assert pb == tb


def test_wrapper_weight_and_bias_gradients_as_torch():
    # the parameters are the wrappers: linear and conv2d give every gradient
    out = {}
    for lib in (torch, ptcore):
        Wr = _wrapper_class(lib, [])
        F = lib.nn.functional
        w = Wr(lib.tensor(W), requires_grad=True)
        b = Wr(lib.tensor([0.5, -1.0, 2.0, 0.0]), requires_grad=True)
        k = Wr(lib.tensor(K), requires_grad=True)
        kb = Wr(lib.tensor([0.3]), requires_grad=True)
        x = lib.tensor(X)
        y = F.linear(x, w, b)
        z = F.conv2d(x.reshape(1, 1, 2, 3), k, kb, padding=1)
        ((y * _weights(lib, y)).sum() + (z * _weights(lib, z)).sum()).backward()
        out[lib.__name__] = [t.grad.elem.numpy().copy() for t in (w, b, k, kb)]
    for p, t in zip(out["ptcore"], out["torch"]):
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-6)


def test_layer_norm_affine_wrapper_gradients_as_torch():
    out = {}
    for lib in (torch, ptcore):
        Wr = _wrapper_class(lib, [])
        x = Wr(lib.tensor(X), requires_grad=True)
        g = Wr(lib.tensor([1.5, -0.5, 2.0]), requires_grad=True)
        b = Wr(lib.tensor([0.1, 0.2, 0.3]), requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (3,), g, b)
        (y * _weights(lib, y)).sum().backward()
        out[lib.__name__] = [t.grad.elem.numpy().copy() for t in (x, g, b)]
    for p, t in zip(out["ptcore"], out["torch"]):
        np.testing.assert_allclose(p, t, rtol=1e-4, atol=1e-5)


def _logging_mode(lib):
    pd = __import__(f"{lib.__name__}.utils._python_dispatch", fromlist=["TorchDispatchMode"])

    class Log(pd.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(str(func))
            return func(*args, **(kwargs or {}))
    return Log()


@pytest.mark.parametrize("name", ["view", "transpose", "expand", "clone", "linear",
                                  "conv2d", "layer_norm", "select", "relu", "softmax"])
def test_logging_mode_sees_forward_and_backward_as_torch(name):
    res = {}
    for lib in (torch, ptcore):
        a = lib.tensor(X, requires_grad=True)
        m = _logging_mode(lib)
        with m:
            y = _F[name](lib, a)
            loss = (y * _weights(lib, y)).sum()
            n = len(m.log)
            loss.backward()
        res[lib.__name__] = (m.log[:n], m.log[n:], a.grad.numpy().copy(),
                             y.detach().numpy().copy())
    p, t = res["ptcore"], res["torch"]
    np.testing.assert_allclose(p[2], t[2], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p[3], t[3], rtol=1e-5, atol=1e-6)
    # the op's forward and its backward reach the mode (after the loss's ops)
    assert p[0][-2:] == t[0][-2:] == ["aten.mul.Tensor", "aten.sum.default"]
    assert p[1][:3] == ["aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor"]
    if name in ("view", "transpose", "expand", "clone", "conv2d"):
        assert _backward_ops(p[1]) == _backward_ops(t[1])


def test_no_grad_and_leaves_not_requiring_grad_record_nothing():
    Wr = _wrapper_class(ptcore, [])
    a = Wr(ptcore.tensor(X), requires_grad=True)
    with ptcore.no_grad():
        y = a.view(3, 2)
    assert not y.requires_grad and y.grad_fn is None
    b = Wr(ptcore.tensor(X))
    z = ptcore.nn.functional.linear(b, ptcore.tensor(W))
    assert not z.requires_grad and z.grad_fn is None


def test_higher_order_through_wrapper_view():
    # create_graph: the backward's ops are recorded too (transpose's backward is a transpose)
    out = {}
    for lib in (torch, ptcore):
        Wr = _wrapper_class(lib, [])
        a = Wr(lib.tensor(X), requires_grad=True)
        y = (a.t() * a.t()).sum()
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        (g * g).sum().backward()
        out[lib.__name__] = (g.elem.detach().numpy().copy(), a.grad.elem.numpy().copy())
    for p, t in zip(out["ptcore"], out["torch"]):
        np.testing.assert_allclose(p, t, rtol=1e-5)


def test_fake_tensor_autograd_through_conv_layer_norm_linear_views_as_torch():
    res = {}
    for lib in (torch, ptcore):
        FTM = __import__(f"{lib.__name__}._subclasses.fake_tensor",
                         fromlist=["FakeTensorMode"]).FakeTensorMode
        F = lib.nn.functional
        with FTM():
            x = lib.randn(2, 1, 5, 5, requires_grad=True)
            w = lib.randn(3, 1, 3, 3, requires_grad=True)
            b = lib.randn(3, requires_grad=True)
            lw = lib.randn(4, 27, requires_grad=True)
            y = F.conv2d(x, w, b, padding=1).reshape(2, 3, 25)
            z = F.layer_norm(y, (25,))
            q = F.linear(z.transpose(1, 2).reshape(2, 5, 15)[:, :, :9].repeat(1, 1, 3), lw)
            q.sum().backward()
            res[lib.__name__] = [(type(t.grad).__name__, tuple(t.grad.shape), t.grad.dtype)
                                 for t in (x, w, b, lw)]
    assert [r[:2] for r in res["ptcore"]] == [r[:2] for r in res["torch"]]
    assert all(str(p[2]).split(".")[-1] == str(t[2]).split(".")[-1]
               for p, t in zip(res["ptcore"], res["torch"]))
