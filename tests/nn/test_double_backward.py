"""Second-order gradients (``create_graph=True``) through nn functions
against PyTorch; Functions whose backward is not differentiable raise
instead of silently dropping their second-order term."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch


def _second_order(lib, fn, a):
    x = lib.from_numpy(a.copy()).requires_grad_()
    y = fn(lib, lib.nn.functional, x)
    g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    gg, = lib.autograd.grad((g * g * g).sum(), x)
    return gg.detach().numpy()


CASES = {
    "layer_norm": (lambda lib, F, x: F.layer_norm(x, (4,)), (3, 4)),
    "layer_norm_affine": (lambda lib, F, x: F.layer_norm(
        x, (2, 4), lib.linspace(0.5, 2, 8, dtype=x.dtype).reshape(2, 4),
        lib.linspace(-1, 1, 8, dtype=x.dtype).reshape(2, 4)), (3, 2, 4)),
    "group_norm": (lambda lib, F, x: F.group_norm(x, 2), (3, 4, 2)),
    "batch_norm": (lambda lib, F, x: F.batch_norm(x, None, None, training=True), (5, 4)),
    "batch_norm_2d": (lambda lib, F, x: F.batch_norm(x, None, None, training=True), (3, 2, 2, 2)),
    "instance_norm": (lambda lib, F, x: F.instance_norm(x), (3, 4, 5)),
    "rms_norm": (lambda lib, F, x: F.rms_norm(x, (4,)), (3, 4)),
    "pad_constant": (lambda lib, F, x: F.pad(x, (1, 2, 0, 1), value=1.0), (2, 3, 5)),
    "pad_constant_negative": (lambda lib, F, x: F.pad(x, (-1, 2, 1, -1)), (2, 3, 5)),
    "pad_reflect": (lambda lib, F, x: F.pad(x, (1, 2), mode="reflect"), (2, 3, 5)),
    "interpolate": (lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                    (1, 2, 3, 3)),
    "softplus_gelu": (lambda lib, F, x: F.gelu(F.softplus(x)), (3, 4)),
    "cross_entropy": (lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 2, 1]),
                                                        reduction="none"), (3, 4)),
    "bce_with_logits": (lambda lib, F, x: F.binary_cross_entropy_with_logits(
        x, lib.full(x.shape, 0.3, dtype=x.dtype), reduction="none"), (3, 4)),
    "sdpa": (lambda lib, F, x: F.scaled_dot_product_attention(x, x, x), (2, 3, 4)),
    "normalize": (lambda lib, F, x: F.normalize(x), (3, 4)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_double_backward_matches_torch(case):
    fn, shape = CASES[case]
    a = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_allclose(_second_order(ptcore, fn, a), _second_order(torch, fn, a),
                               rtol=1e-7, atol=1e-9)


def test_module_double_backward_layernorm_mlp():
    """Gradient penalty through Linear -> LayerNorm -> Tanh -> Linear."""
    res = []
    for lib in (torch, ptcore):
        nn = lib.nn
        lib.manual_seed(0)
        m = nn.Sequential(nn.Linear(3, 5), nn.LayerNorm(5), nn.Tanh(), nn.Linear(5, 1)).double()
        if lib is ptcore:
            m.load_state_dict({k: ptcore.from_numpy(v.detach().numpy().copy())
                               for k, v in tm.state_dict().items()})
        else:
            tm = m
        x = lib.from_numpy(np.random.default_rng(1).standard_normal((4, 3))).requires_grad_()
        g, = lib.autograd.grad(m(x).sum(), x, create_graph=True)
        ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
        res.append([None if p.grad is None else p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*res):
        assert (a is None) == (b is None)   # the last bias gets no gradient
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("fn,shape", [
    (lambda F, x: F.ctc_loss(x.log_softmax(2), ptcore.tensor([[1, 2], [1, 1]]),
                             ptcore.tensor([5, 5]), ptcore.tensor([2, 2])), (5, 2, 3)),
])
def test_not_twice_differentiable_raises(fn, shape):
    x = ptcore.randn(*shape, dtype=ptcore.float64, requires_grad=True)
    y = fn(ptcore.nn.functional, x)
    g, = ptcore.autograd.grad((y * y).sum(), x, create_graph=True)
    # first-order gradients are unaffected
    assert g.shape == x.shape
    with pytest.raises(RuntimeError, match="once_differentiable"):
        (g * g).sum().backward()


# Convolution, transposed convolution, pooling and fold/unfold are twice
# differentiable (their backward functions are each other's adjoints), as in
# PyTorch: second-order gradients with respect to every input against torch.
def _conv_second_order(lib, name, arrays, kwargs):
    ts = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    F = lib.nn.functional
    y = getattr(F, name)(*ts, **kwargs)
    gs = lib.autograd.grad((y * y * y).sum(), ts, create_graph=True)
    total = sum((g * g).sum() for g in gs)
    ggs = lib.autograd.grad(total, ts)
    return [y.detach().numpy()] + [g.detach().numpy() for g in gs] + \
        [g.detach().numpy() for g in ggs]


@pytest.mark.parametrize("name,shapes,kwargs", [
    ("conv2d", [(2, 4, 6, 5), (6, 2, 3, 3), (6,)], dict(padding=1, groups=2)),
    ("conv2d", [(2, 3, 7, 7), (4, 3, 3, 2)], dict(stride=2, dilation=(1, 2))),
    ("conv2d", [(1, 32, 6, 6), (5, 32, 3, 3), (5,)], dict(padding=1)),   # shifted-GEMM path
    ("conv1d", [(2, 3, 9), (4, 3, 3)], dict(padding="same")),
    ("conv3d", [(1, 2, 4, 4, 3), (3, 2, 2, 2, 2), (3,)], dict()),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 3), (3,)], dict(stride=2, padding=1,
                                                                  output_padding=1)),
    ("conv_transpose1d", [(2, 4, 6), (4, 2, 3)], dict(groups=2)),
])
def test_conv_double_backward(name, shapes, kwargs):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) * 0.5 for s in shapes]
    got = _conv_second_order(ptcore, name, arrays, kwargs)
    want = _conv_second_order(torch, name, arrays, kwargs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fn,shape", [
    (lambda F, x: F.max_pool2d(x, 2), (2, 2, 4, 5)),
    (lambda F, x: F.max_pool1d(x, 3, stride=2, padding=1), (2, 2, 7)),
    (lambda F, x: F.adaptive_max_pool2d(x, (2, 3)), (1, 2, 5, 7)),
    (lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
     (2, 2, 5, 5)),
    (lambda F, x: F.avg_pool1d(x, 2), (2, 2, 4)),
    (lambda F, x: F.adaptive_avg_pool2d(x, (2, 3)), (1, 2, 5, 7)),
    (lambda F, x: F.unfold(x, 2, padding=1, stride=2), (1, 2, 3, 4)),
    (lambda F, x: F.fold(x, (4, 5), 2), (2, 8, 12)),
])
def test_pool_fold_double_backward(fn, shape):
    a = np.random.default_rng(6).standard_normal(shape)
    got = _second_order(ptcore, lambda lib, F, x: fn(F, x), a)
    want = _second_order(torch, lambda lib, F, x: fn(F, x), a)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
