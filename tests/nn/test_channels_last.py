"""channels_last propagation: the outputs (and gradients) of convolution,
batch norm, pooling, resampling and cat have torch's strides when the input
(or a convolution's weight) is channels_last."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pair(shape=(2, 3, 6, 5), fmt="channels_last", seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x = ptcore.tensor(a).to(memory_format=getattr(ptcore, fmt))
    t = torch.tensor(a).to(memory_format=getattr(torch, fmt))
    return x, t


def _check(p, t):
    assert tuple(p.shape) == tuple(t.shape)
    assert p.stride() == t.stride()
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [
    lambda F, x: F.max_pool2d(x, 2),
    lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[1],
    lambda F, x: F.avg_pool2d(x, 2),
    lambda F, x: F.adaptive_avg_pool2d(x, 1),
    lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda F, x: F.adaptive_max_pool2d(x, 2),
    lambda F, x: F.interpolate(x, scale_factor=2),
    lambda F, x: F.interpolate(x, size=(7, 9), mode="bilinear"),
    lambda F, x: F.layer_norm(x, (5,)),
    lambda F, x: F.batch_norm(x, None, None, training=True),
    lambda F, x: F.relu(x) + 1,
])
def test_functional_outputs(case):
    x, t = _pair()
    _check(case(ptcore.nn.functional, x), case(torch.nn.functional, t))


def test_cat_all_channels_last_or_mixed():
    x, t = _pair()
    _check(ptcore.cat([x, x], 1), torch.cat([t, t], 1))
    _check(ptcore.cat([x, x * 2], 0), torch.cat([t, t * 2], 0))
    xc, tc = x.contiguous(), t.contiguous()
    _check(ptcore.cat([x, xc], 1), torch.cat([t, tc], 1))


def _model(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.ConvTranspose2d(4, 2, 2, stride=2),
                         nn.AdaptiveAvgPool2d(1))


def _copy_params(dst, src):
    with torch.no_grad():
        for pd, ps in zip(dst.parameters(), src.parameters()):
            pd.copy_(torch.tensor(ps.detach().numpy()))


@pytest.mark.parametrize("where", ["input", "model"])
def test_cnn_outputs_and_grads(where):
    pm, tm = _model(ptcore), _model(torch)
    _copy_params(tm, pm)
    x, t = _pair()
    if where == "model":
        pm.to(memory_format=ptcore.channels_last)
        tm.to(memory_format=torch.channels_last)
        x, t = x.contiguous(), t.contiguous()
    x.requires_grad_()
    t.requires_grad_()
    p_outs, t_outs = [], []
    hx, ht = x, t
    for pl, tl in zip(pm, tm):
        hx, ht = pl(hx), tl(ht)
        p_outs.append(hx)
        t_outs.append(ht)
    for p, q in zip(p_outs, t_outs):
        _check(p, q)
    hx.sum().backward()
    ht.sum().backward()
    _check(x.grad, t.grad)
    for pp, tp in zip(pm.parameters(), tm.parameters()):
        assert pp.grad.stride() == tp.grad.stride()
        np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mod", ["Conv3d", "ConvTranspose3d"])
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv3d_channels_last_3d(mod, n, dtype):
    # torch's CPU 3-d convolutions return channels_last_3d tensors from oneDNN
    # (float32, a batch > 1 here), contiguous ones from the fallback kernel
    x, t = _pair((n, 2, 4, 5, 3), "channels_last_3d")
    x, t = x.to(getattr(ptcore, dtype)), t.to(getattr(torch, dtype))
    ptcore.manual_seed(0)
    pc = getattr(ptcore.nn, mod)(2, 3, 2, dtype=getattr(ptcore, dtype))
    tc = getattr(torch.nn, mod)(2, 3, 2, dtype=getattr(torch, dtype))
    _copy_params(tc, pc)
    _check(pc(x), tc(t))


@pytest.mark.parametrize("case", [
    lambda F, x: F.max_pool3d(x, 2),
    lambda F, x: F.avg_pool3d(x, 2),
    lambda F, x: F.adaptive_avg_pool3d(x, 2),
    lambda F, x: F.adaptive_max_pool3d(x, 2),
    lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
    lambda F, x: F.batch_norm(x, None, None, training=True),
])
def test_functional_outputs_3d(case):
    x, t = _pair((2, 3, 4, 6, 5), "channels_last_3d")
    _check(case(ptcore.nn.functional, x), case(torch.nn.functional, t))


def test_transposed_conv_of_a_pixel():
    # (the 1x1-input transposed convolution is one matrix product)
    x, t = _pair((2, 3, 1, 1))
    w = np.random.default_rng(1).standard_normal((3, 4, 4, 4)).astype(np.float32)
    _check(ptcore.nn.functional.conv_transpose2d(x, ptcore.tensor(w)),
           torch.nn.functional.conv_transpose2d(t, torch.tensor(w)))


def test_leaf_grad_keeps_channels_last_strides():
    x, t = _pair()
    x.requires_grad_()
    t.requires_grad_()
    (x * 2).sum().backward()
    (t * 2).sum().backward()
    _check(x.grad, t.grad)
    # a transposed (dense, non-contiguous) leaf too
    a = ptcore.ones(3, 4).t().requires_grad_()
    b = torch.ones(3, 4).t().requires_grad_()
    (a * 3).sum().backward()
    (b * 3).sum().backward()
    _check(a.grad, b.grad)


def test_leaf_grads_of_one_gradient_do_not_share_memory():
    # (a + b): both leaves receive the same gradient tensor
    a = ptcore.ones(2, 3, 4, 5).to(memory_format=ptcore.channels_last).requires_grad_()
    b = ptcore.ones(2, 3, 4, 5).to(memory_format=ptcore.channels_last).requires_grad_()
    (a + b).sum().backward()
    assert a.grad.stride() == b.grad.stride() == (60, 1, 15, 3)
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones((2, 3, 4, 5), np.float32))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 5), "channels_last"),
                                       ((2, 3, 4, 5, 6), "channels_last_3d"),
                                       ((2, 3, 4, 5), "contiguous_format")])
def test_pad_keeps_the_input_layout_as_torch(mode, shape, fmt):
    """F.pad of a channels_last(_3d) input: torch's constant, reflection and
    replication pads keep the layout, circular's cat does not; values and
    the gradient's layout too."""
    torch = pytest.importorskip("torch")
    got = []
    for t in (torch, ptcore):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        x = t.from_numpy(a).to(memory_format=getattr(t, fmt)).requires_grad_()
        o = t.nn.functional.pad(x, (1, 1, 2, 0) if len(shape) == 4 else (1, 1, 2, 0, 0, 1),
                                mode=mode)
        o.sum().backward()
        got.append((tuple(o.stride()), o.detach().numpy().tolist(), tuple(x.grad.stride()),
                    x.grad.numpy().tolist()))
    assert got[0] == got[1]


def test_is_contiguous_memory_format_does_not_call_tensor_permute(monkeypatch):
    """The memory-format tutorial's checker wraps Tensor methods and calls
    is_contiguous(memory_format=...) from inside: no recursion."""
    orig = ptcore.Tensor.permute
    calls = []

    def permute(self, *a, **k):
        calls.append(self.is_contiguous(memory_format=ptcore.channels_last))
        return orig(self, *a, **k)

    monkeypatch.setattr(ptcore.Tensor, "permute", permute)
    x = ptcore.ones(1, 2, 3, 4)
    assert not x.is_contiguous(memory_format=ptcore.channels_last)
    y = x.contiguous(memory_format=ptcore.channels_last)
    assert y.is_contiguous(memory_format=ptcore.channels_last) and y.stride() == (24, 1, 8, 2)
    assert x.permute(0, 2, 3, 1).shape == (1, 3, 4, 2) and calls == [False]


@pytest.mark.parametrize("shape", [(3,), (2, 3), (1, 2, 3), (2, 3, 4, 5), (2, 3, 1, 1),
                                   (0, 3, 4, 5), (2, 3, 4, 5, 6), (0, 2, 3, 4, 5)])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "preserve_format",
                                 "contiguous_format"])
def test_is_contiguous_memory_format_of_any_rank(shape, fmt):
    """is_contiguous(memory_format=...) answers False for a format of another
    rank (and preserve_format is plain contiguity), as torch; contiguous()
    to such a format still raises, with the strides torch gives."""
    for x, t in ((ptcore.ones(shape), torch.ones(shape)),
                 (ptcore.ones(shape).transpose(0, -1), torch.ones(shape).transpose(0, -1))):
        f, g = getattr(ptcore, fmt), getattr(torch, fmt)
        assert x.is_contiguous(memory_format=f) == t.is_contiguous(memory_format=g)
        try:
            want = t.contiguous(memory_format=g).stride()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                x.contiguous(memory_format=f)
        else:
            y = x.contiguous(memory_format=f)
            assert y.stride() == want
            assert y.is_contiguous(memory_format=f)


@pytest.mark.parametrize("shape", [(2, 0, 4, 5), (0, 3, 4, 5), (2, 3, 0, 5)])
def test_empty_channels_last_strides(shape):
    """An empty tensor taken to channels_last gets torch's strides (a zero
    size is multiplied in) and counts as channels_last contiguous."""
    y = ptcore.zeros(shape).to(memory_format=ptcore.channels_last)
    t = torch.zeros(shape).to(memory_format=torch.channels_last)
    assert y.stride() == t.stride()
    assert y.is_contiguous(memory_format=ptcore.channels_last)


def test_contiguous_to_a_memory_format_keeps_the_graph():
    x = ptcore.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=ptcore.channels_last)
    assert y.grad_fn.name() == "CloneBackward0"
    (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3, 4, 5), 2, np.float32))


@pytest.mark.parametrize("nd,fmt", [(1, "contiguous_format"), (2, "channels_last"),
                                    (2, "contiguous_format"), (3, "channels_last_3d")])
@pytest.mark.parametrize("which", ["both", "input", "indices"])
def test_max_unpool_output_layout(nd, fmt, which):
    """torch's max_unpool2d writes in the layout its input suggests (the
    indices' layout does not count); max_unpool3d always writes contiguous."""
    shape = (2, 3) + (4, 6, 6)[:nd]
    got = []
    for lib in (torch, ptcore):
        F = lib.nn.functional
        x = lib.arange(float(np.prod(shape))).reshape(shape).to(
            memory_format=getattr(lib, fmt))
        o, i = getattr(F, f"max_pool{nd}d")(x, 2, return_indices=True)
        if which == "input":
            i = i.contiguous()
        elif which == "indices":
            o = o.contiguous()
        u = getattr(F, f"max_unpool{nd}d")(o, i, 2)
        got.append((u.stride(), u.numpy().tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 6), "channels_last"),
                                       ((1, 3, 4, 6), "channels_last"),
                                       ((2, 3, 4, 6, 5), "channels_last_3d")])
def test_instance_norm_output_is_contiguous(shape, fmt):
    """torch normalises input.contiguous(): its output (and the gradient) is
    contiguous for a channels_last input."""
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    got = []
    for lib in (torch, ptcore):
        x = lib.tensor(a).to(memory_format=getattr(lib, fmt)).requires_grad_()
        y = lib.nn.functional.instance_norm(x, weight=lib.full((3,), 2.0))
        (y * y * y).sum().backward()
        got.append((y.stride(), x.grad.stride(), y.detach().numpy(), x.grad.numpy()))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=1e-4, atol=1e-4)
