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

# forward sequences equal to torch's (reshape, flatten, movedim, narrow, linear, conv2d,
# layer_norm and pad reach the handler as torch's view, permute, slice, t/mm/addmm,
# convolution, native_layer_norm and constant_pad_nd; a 3-d input's linear without bias
# as aten.matmul, where torch's handler sees views and mm)
_FORWARD_ALIKE = {"view", "transpose", "t", "permute", "expand", "squeeze", "clone",
                  "select", "slice", "layer_norm", "linear", "linear_bias", "pad", "reshape",
                  "flatten", "narrow", "movedim", "conv2d"}
# backward sequences equal to torch's (the ops the handler sees between the loss's
# own backward and the gradient's accumulation)
_BACKWARD_ALIKE = (_FORWARD_ALIKE | {"view", "reshape", "flatten", "linear", "conv2d"}) - \
    {"select", "slice", "narrow", "movedim", "squeeze", "pad"}
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


def _logged(lib, x, f, weights):
    """(the ops a logging mode saw in ``f``'s forward, those of the backward of a
    weighted sum of its result, the gradient, the result)"""
    a = lib.tensor(x, requires_grad=True)
    m = _logging_mode(lib)
    with m:
        y = f(a)
        loss = (y * weights(lib, y)).sum()
        n = len(m.log)
        loss.backward()
    return m.log[:n], m.log[n:], a.grad.numpy().copy(), y.detach().numpy().copy()


@pytest.mark.parametrize("name", ["view", "transpose", "expand", "clone", "linear",
                                  "conv2d", "layer_norm", "select", "relu", "softmax"])
def test_logging_mode_sees_forward_and_backward_as_torch(name):
    res = {}
    for lib in (torch, ptcore):
        res[lib.__name__] = _logged(lib, X, lambda a: _F[name](lib, a), _weights)
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


def _fake_gradients(program):
    """The leaves' gradients' (type name, shape, dtype) after ``program(lib, F)``'s
    backward under each library's FakeTensorMode (``program`` returns its leaves)."""
    res = {}
    for lib in (torch, ptcore):
        mode = __import__(f"{lib.__name__}._subclasses.fake_tensor",
                          fromlist=["FakeTensorMode"]).FakeTensorMode()
        with mode:
            leaves = program(lib, lib.nn.functional)
            res[lib.__name__] = [(type(t.grad).__name__, tuple(t.grad.shape),
                                  str(t.grad.dtype).split(".")[-1]) for t in leaves]
    return res["ptcore"], res["torch"]


def _conv_layer_norm_linear_views(lib, F):
    x = lib.randn(2, 1, 5, 5, requires_grad=True)
    w = lib.randn(3, 1, 3, 3, requires_grad=True)
    b = lib.randn(3, requires_grad=True)
    lw = lib.randn(4, 27, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1).reshape(2, 3, 25)
    z = F.layer_norm(y, (25,))
    q = F.linear(z.transpose(1, 2).reshape(2, 5, 15)[:, :, :9].repeat(1, 1, 3), lw)
    q.sum().backward()
    return x, w, b, lw


def test_fake_tensor_autograd_through_conv_layer_norm_linear_views_as_torch():
    p, t = _fake_gradients(_conv_layer_norm_linear_views)
    assert p == t


# ---------------------------------------------------------------------------
# round 2: gelu, dropout, pooling, norms, transposed convolutions, split/chunk/unbind,
# attention, losses, interpolate, advanced indexing, .to(dtype), diagonal, unfold
# ---------------------------------------------------------------------------

X4 = np.linspace(-2, 2, 96, dtype=np.float32).reshape(2, 3, 4, 4)
X4[0, 0, 0, 0] = 0.7         # (no zero: dropout's mask reads from its output)
R2 = np.linspace(-1, 1, 600, dtype=np.float32)
T2 = np.array([1, 0], dtype=np.int64)


def _f2(L):
    F = L.nn.functional
    return {
        "gelu": lambda a: F.gelu(a),
        "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"),
        "dropout_eval": lambda a: F.dropout(a, 0.5, training=False),
        "dropout_p0": lambda a: F.dropout(a, 0.0),
        "max_pool2d": lambda a: F.max_pool2d(a, 2),
        "max_pool2d_stride": lambda a: F.max_pool2d(a, 3, 1, 1),
        "max_pool1d": lambda a: F.max_pool1d(a.reshape(2, 12, 4), 2),
        "max_pool3d": lambda a: F.max_pool3d(a, 2),
        "avg_pool2d": lambda a: F.avg_pool2d(a, 2),
        "avg_pool1d": lambda a: F.avg_pool1d(a.reshape(2, 12, 4), 2),
        "adaptive_avg_pool2d_1": lambda a: F.adaptive_avg_pool2d(a, 1),
        "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a, 3),
        "adaptive_max_pool2d": lambda a: F.adaptive_max_pool2d(a, 2),
        "batch_norm_eval": lambda a: F.batch_norm(a, L.zeros(3) + 0.5, L.ones(3) * 2),
        "batch_norm_train": lambda a: F.batch_norm(a, None, None, training=True),
        "group_norm": lambda a: F.group_norm(a, 3),
        "instance_norm": lambda a: F.instance_norm(a),
        "conv_transpose2d": lambda a: F.conv_transpose2d(a, L.ones(3, 2, 2, 2) / 3, stride=2),
        "conv_transpose1d": lambda a: F.conv_transpose1d(a.reshape(2, 3, 16), L.ones(3, 2, 2)),
        "split": lambda a: L.cat(a.split(3, 2)[::-1], 2),
        "chunk": lambda a: L.cat(a.chunk(2, 3), 0),
        "unbind": lambda a: L.stack(a.unbind(1)[:2], 0),
        "sdpa": lambda a: F.scaled_dot_product_attention(a, a * 0.5, a),
        "mse": lambda a: F.mse_loss(a, L.zeros(2, 3, 4, 4) + 0.25),
        "cross_entropy": lambda a: F.cross_entropy(a.reshape(2, 48), L.tensor(T2)),
        "nll": lambda a: F.nll_loss(a.reshape(2, 48), L.tensor(T2)),
        "bce": lambda a: F.binary_cross_entropy(L.sigmoid(a), L.ones(2, 3, 4, 4) / 3),
        "bce_logits": lambda a: F.binary_cross_entropy_with_logits(a, L.ones(2, 3, 4, 4) / 3),
        "l1": lambda a: F.l1_loss(a, L.zeros(2, 3, 4, 4) + 0.25),
        "smooth_l1": lambda a: F.smooth_l1_loss(a, L.zeros(2, 3, 4, 4), beta=0.5),
        "interp_nearest": lambda a: F.interpolate(a, scale_factor=2),
        "interp_bilinear": lambda a: F.interpolate(a, size=(5, 7), mode="bilinear"),
        "interp_bicubic": lambda a: F.interpolate(a, scale_factor=1.5, mode="bicubic",
                                                  align_corners=True),
        "interp_nearest_exact": lambda a: F.interpolate(a, scale_factor=1.7,
                                                        mode="nearest-exact"),
        "interp_linear": lambda a: F.interpolate(a.reshape(2, 12, 4), scale_factor=2,
                                                 mode="linear"),
        "interp_area": lambda a: F.interpolate(a, size=(3, 2), mode="area"),
        "sdpa_causal_mask": lambda a: F.scaled_dot_product_attention(
            a, a.flip(3), a, attn_mask=L.linspace(-1, 1, 16).reshape(4, 4), is_causal=False),
        "sdpa_causal": lambda a: F.scaled_dot_product_attention(a, a, a.flip(2),
                                                                is_causal=True, scale=0.3),
        "index": lambda a: a[L.tensor(T2)],
        "index_repeat": lambda a: a[L.tensor([[0, 1], [1, 1]]), :, L.tensor([2, 0])],
        "index_slice": lambda a: a[:, L.tensor([0, 2, 0])],
        "index_bool": lambda a: a[a > 0],
        "to_double": lambda a: a.to(L.float64),
        "double": lambda a: a.double(),
        "float_same": lambda a: a.float(),
        "type_as": lambda a: a.type_as(L.zeros(1, dtype=L.float64)),
        "to_device_dtype": lambda a: a.to("cpu", L.float64),
        "to_other": lambda a: a.to(L.zeros(1, dtype=L.float64)),
        "diagonal": lambda a: a.diagonal(0, 2, 3),
        "unfold": lambda a: a.unfold(3, 2, 1),
    }


# the ops whose handler sees the same aten ops as torch's, in the forward and in the
# backward (as sets, autograd's detach left out): all in the forward; the backward of
# cat, stack, mean, sub and sigmoid runs other ops than torch's
_SAME_FORWARD_2 = set(_f2(ptcore))
_SAME_BACKWARD_2 = set(_f2(ptcore)) - {
    "split", "chunk", "unbind", "adaptive_avg_pool2d_1", "bce", "bce_logits", "l1",
    "index_slice"}


def _weights2(L, y):
    return L.tensor(R2[:y.numel()].copy()).reshape(tuple(y.shape)).to(y.dtype)


def _run2(L, name):
    log = []
    Wr = _wrapper_class(L, log)
    a = Wr(L.tensor(X4), requires_grad=True)
    y = _f2(L)[name](a)
    assert type(y) is Wr and y.requires_grad and (y.grad_fn is not None or y is a)
    n = len(log)
    loss = (y * _weights2(L, y)).sum()
    m = len(log)
    loss.backward()
    return log[:n], log[m:], a.grad, y.elem.detach().numpy().copy()


def _names(ops):
    return set(ops) - {"aten.detach.default"} - _ACCUMULATE


@pytest.mark.parametrize("name", sorted(_f2(ptcore)))
def test_wrapper_requiring_grad_through_op_as_torch_2(name):
    pf, pb, pg, py = _run2(ptcore, name)
    tf, tb, tg, ty = _run2(torch, name)
    np.testing.assert_allclose(py, ty, rtol=1e-5, atol=1e-5)
    assert type(pg).__name__ == type(tg).__name__ == "Wrapper"
    assert tuple(pg.shape) == tuple(tg.shape) and str(pg.dtype)[7:] == str(tg.dtype)[6:]
    np.testing.assert_allclose(pg.elem.numpy(), tg.elem.numpy(), rtol=1e-4, atol=1e-5)
    if name in _SAME_FORWARD_2:
        assert _names(pf) == _names(tf)
    if name in _SAME_BACKWARD_2:
        assert _names(pb) == _names(tb)


def test_dropout_training_through_wrapper_as_torch():
    # the mask is random: torch's and ptcore's handlers see the same ops, and the
    # gradient is the mask scaled, as the output shows it
    res = {}
    for lib in (torch, ptcore):
        lib.manual_seed(0)
        log = []
        Wr = _wrapper_class(lib, log)
        a = Wr(lib.tensor(X4), requires_grad=True)
        y = lib.nn.functional.dropout(a, 0.25)
        n = len(log)
        y.sum().backward()
        keep = (y.elem != 0).numpy()
        assert 0 < keep.sum() < keep.size
        np.testing.assert_allclose(y.elem.numpy()[keep], X4[keep] / 0.75, rtol=1e-6)
        np.testing.assert_allclose(a.grad.elem.numpy(), keep / 0.75, rtol=1e-6)
        res[lib.__name__] = log[:n], log[n:]
    # (ptcore's handler sees an op with a Python scalar as its .Tensor overload)
    assert [f.replace("div_.Tensor", "div_.Scalar") for f in res["ptcore"][0]] == \
        res["torch"][0] == ["aten.empty_like.default", "aten.bernoulli_.float",
                            "aten.div_.Scalar", "aten.mul.Tensor"]
    assert _names(res["ptcore"][1]) == _names(res["torch"][1])


def test_wrapper_parameters_of_norms_convs_attention_losses_as_torch():
    # the weights, biases, keys and targets are the wrappers requiring grad
    def run(lib):
        Wr = _wrapper_class(lib, [])
        F = lib.nn.functional
        x = lib.tensor(X4)
        g3 = Wr(lib.tensor([1.5, -0.5, 2.0]), requires_grad=True)
        b3 = Wr(lib.tensor([0.1, 0.2, 0.3]), requires_grad=True)
        kt = Wr(lib.tensor(R2[:24].reshape(3, 2, 2, 2).copy()), requires_grad=True)
        kb = Wr(lib.tensor([0.3, -0.2]), requires_grad=True)
        k = Wr(lib.tensor(X4[::-1].copy()) * 0.5, requires_grad=True)
        t = Wr(lib.tensor(R2[:96].reshape(2, 3, 4, 4).copy()), requires_grad=True)
        ys = [F.batch_norm(x, None, None, g3, b3, training=True),
              F.group_norm(x, 3, g3, b3),
              F.instance_norm(x, weight=g3, bias=b3),
              F.conv_transpose2d(x, kt, kb, stride=2, padding=1),
              F.scaled_dot_product_attention(x, k, x),
              F.mse_loss(x, t).reshape(1), F.smooth_l1_loss(x, t).reshape(1),
              F.binary_cross_entropy_with_logits(x, t.sigmoid()).reshape(1)]
        loss = sum((y * lib.tensor(R2[:y.numel()].copy()).reshape(tuple(y.shape))).sum()
                   for y in ys)
        loss.backward()
        return [p.grad.elem.numpy().copy() for p in (g3, b3, kt, kb, k, t)]
    for p, t in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(p, t, rtol=1e-4, atol=1e-5)


def test_batch_norm_running_stats_updated_once_through_wrapper():
    out = {}
    for lib in (torch, ptcore):
        Wr = _wrapper_class(lib, [])
        rm, rv = lib.zeros(3), lib.ones(3)
        a = Wr(lib.tensor(X4), requires_grad=True)
        y = lib.nn.functional.batch_norm(a, rm, rv, training=True, momentum=0.5)
        (y * y).sum().backward()
        out[lib.__name__] = rm.numpy().copy(), rv.numpy().copy(), a.grad.elem.numpy().copy()
    for p, t in zip(out["ptcore"], out["torch"]):
        np.testing.assert_allclose(p, t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["gelu", "max_pool2d", "batch_norm_train", "split",
                                  "cross_entropy", "interp_bilinear", "index", "to_double"])
def test_logging_mode_sees_forward_and_backward_as_torch_2(name):
    res = {}
    for lib in (torch, ptcore):
        res[lib.__name__] = _logged(lib, X4, _f2(lib)[name], _weights2)
    p, t = res["ptcore"], res["torch"]
    np.testing.assert_allclose(p[3], t[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p[2], t[2], rtol=1e-4, atol=1e-5)
    if name in _SAME_BACKWARD_2:
        assert _names(p[1]) == _names(t[1])


def _round_2_ops(lib, F):
    x = lib.randn(2, 3, 8, 8, requires_grad=True)
    g = lib.randn(3, requires_grad=True)
    y = F.gelu(F.batch_norm(x, None, None, g, None, training=True))
    y = F.max_pool2d(F.group_norm(y, 3), 2)
    y = F.interpolate(y, scale_factor=2, mode="bilinear")
    y = lib.cat(y.split(4, 2), 1)[:, lib.tensor([0, 2])].to(lib.float64)
    loss = F.mse_loss(y, lib.zeros(2, 2, 4, 8, dtype=lib.float64)) + \
        F.cross_entropy(y.reshape(2, -1), lib.tensor([1, 0]))
    loss.backward()
    return x, g


def test_fake_tensor_autograd_through_round_2_ops_as_torch():
    p, t = _fake_gradients(_round_2_ops)
    assert p == t


# ---------------------------------------------------------------------------
# the other ops recording inside their kernel: recorded with a backward that runs
# the kernel again under ptcore's autograd (one op aten.<name>_backward)
# ---------------------------------------------------------------------------

def _f3(L):
    F = L.nn.functional
    z = L.zeros(2, 3, 4, 4) + 0.3
    return {
        "einsum": lambda a: L.einsum("bchw,bcwk->bchk", a, a * 0.5),
        "embedding": lambda a: F.embedding(L.tensor([[0, 2], [1, 1]]), a.reshape(8, 12)),
        "kl_div": lambda a: F.kl_div(a, z, reduction="batchmean"),
        "cosine_similarity": lambda a: F.cosine_similarity(a, z + a * 0.1),
        "pixel_shuffle": lambda a: F.pixel_shuffle(a.reshape(2, 12, 2, 2), 2),
        "F.unfold": lambda a: F.unfold(a, 2),
        "F.fold": lambda a: F.fold(a.reshape(2, 12, 4), (3, 3), 2),
        "pad_reflect": lambda a: F.pad(a, (1, 1, 1, 1), mode="reflect"),
        "pad_constant": lambda a: F.pad(a, (1, 2, 0, 1), value=0.5),
        "grid_sample": lambda a: F.grid_sample(a, L.linspace(-0.9, 0.8, 36).reshape(2, 3, 3, 2),
                                               align_corners=False),
        "poisson_nll": lambda a: F.poisson_nll_loss(a, z),
        "triplet": lambda a: F.triplet_margin_loss(a.reshape(2, 48), L.zeros(2, 48),
                                                   L.ones(2, 48)),
        "rms_norm": lambda a: F.rms_norm(a, (4,)),
        "lp_pool2d": lambda a: F.lp_pool2d(a.abs() + 0.1, 2, 2),
        "elu": lambda a: F.elu(a, 0.5),
        "softplus": lambda a: F.softplus(a),
        "hardtanh": lambda a: F.hardtanh(a),
        "softshrink": lambda a: F.softshrink(a),
        "conv2d_same_uneven": lambda a: F.conv2d(a, L.ones(2, 3, 2, 2) / 4, padding="same"),
        "mha": lambda a: F.multi_head_attention_forward(
            a.reshape(2, 8, 6).transpose(0, 1), a.reshape(2, 8, 6).transpose(0, 1),
            a.reshape(2, 8, 6).transpose(0, 1), 6, 2, L.linspace(-0.3, 0.3, 108).reshape(18, 6),
            L.zeros(18), None, None, False, 0.0, L.eye(6) * 0.5, L.zeros(6),
            need_weights=False)[0],
        "swapaxes": lambda a: a.swapaxes(1, 2),
        "as_strided": lambda a: a.as_strided((2, 2), (1, 2)),
        "tensor_split": lambda a: L.cat(a.tensor_split(3, 2), 2),
        "dropout2d_eval": lambda a: F.dropout2d(a, training=False),
        "alpha_dropout_eval": lambda a: F.alpha_dropout(a, training=False),
    }


@pytest.mark.parametrize("name", sorted(_f3(ptcore)))
def test_wrapper_requiring_grad_through_any_op_as_torch(name):
    res = {}
    for lib in (torch, ptcore):
        Wr = _wrapper_class(lib, [])
        a = Wr(lib.tensor(X4), requires_grad=True)
        y = _f3(lib)[name](a)
        assert type(y) is Wr and y.requires_grad
        (y * _weights2(lib, y)).sum().backward()
        assert type(a.grad) is Wr
        res[lib.__name__] = y.elem.detach().numpy().copy(), a.grad.elem.numpy().copy()
    for p, t in zip(res["ptcore"], res["torch"]):
        np.testing.assert_allclose(p, t, rtol=1e-4, atol=1e-5)


def test_fallback_backward_reaches_the_handler_as_one_op():
    log = []
    Wr = _wrapper_class(ptcore, log)
    a = Wr(ptcore.tensor(X4), requires_grad=True)
    y = ptcore.nn.functional.pixel_shuffle(a.reshape(2, 12, 2, 2), 2)
    n = len(log)
    y.sum().backward()
    assert "aten.pixel_shuffle_backward.default" in log[n:]
    assert type(y.grad_fn).__name__ == "PixelShuffleBackward0"


def test_feature_dropout_training_through_wrapper():
    # the noise is one draw per channel: the gradient is it, as the output shows it
    Wr = _wrapper_class(ptcore, [])
    ptcore.manual_seed(1)
    a = Wr(ptcore.tensor(X4), requires_grad=True)
    y = ptcore.nn.functional.dropout2d(a, 0.5)
    y.sum().backward()
    keep = (y.elem != 0).numpy()
    assert keep.all(axis=(2, 3)).sum() == keep.any(axis=(2, 3)).sum()
    np.testing.assert_allclose(a.grad.elem.numpy(), keep * 2.0, rtol=1e-6)


def test_random_ops_and_in_place_ops_keep_their_own_recording():
    # a draw the backward could not repeat is not recorded (as before); a write in place
    # records in the kernel, with grad mode on
    Wr = _wrapper_class(ptcore, [])
    a = Wr(ptcore.tensor(X4), requires_grad=True)
    assert not ptcore.nn.functional.rrelu(a, training=True).requires_grad
    assert ptcore.nn.functional.rrelu(a, training=False).requires_grad
    assert not ptcore.empty_like(a).requires_grad
    assert not a.detach().requires_grad


def test_small_cnn_training_step_through_wrapper_as_torch():
    # conv, batch norm (training), relu, max pool, flatten, dropout (p 0), linear and
    # cross entropy on a wrapper input requiring grad: its gradient and the parameters'
    # as torch's, and the handler sees torch's aten ops (as sets)
    def run(lib):
        nn = lib.nn
        log = []
        Wr = _wrapper_class(lib, log)
        model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.0),
                              nn.Linear(16, 5))
        with lib.no_grad():
            for k, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.linspace(-0.5, 0.5, p.numel(), dtype=np.float32)
                                   .reshape(tuple(p.shape)) * (1 + k % 3)))
        x = Wr(lib.tensor(X4), requires_grad=True)
        loss = nn.functional.cross_entropy(model(x), lib.tensor([3, 1]))
        n = len(log)
        loss.backward()
        grads = [x.grad.elem] + [p.grad.elem if isinstance(p.grad, Wr) else p.grad
                                 for p in model.parameters()]
        return ([g.numpy().copy() for g in grads], _names(log[:n]), _names(log[n:]),
                loss.elem.item())
    p, t = run(ptcore), run(torch)
    np.testing.assert_allclose(p[3], t[3], rtol=1e-5)
    for a, b in zip(p[0], t[0]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # (native_batch_norm, max_pool2d_with_indices, convolution, _log_softmax,
    # nll_loss_forward, flatten's view ... and their backward ops)
    assert p[1] == t[1]
    assert p[2] == t[2]
