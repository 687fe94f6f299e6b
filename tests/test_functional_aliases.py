"""Top-level functional ops (ptcore.dropout, ptcore.batch_norm, ptcore.embedding ...)
against PyTorch's top-level functions: outputs and gradients."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

rng = np.random.default_rng(0)


def R(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def _to(lib, a, req):
    if isinstance(a, np.ndarray):
        t = lib.from_numpy(a.copy())
        if req:
            t.requires_grad_(True)
        return t
    if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
        return [_to(lib, b, False) for b in a]
    return a


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check(name, *args, grad=(), rtol=1e-10, atol=1e-10, kwargs=None, out_grad=None):
    """Call ptcore.<name> and torch.<name> on the same inputs; compare outputs and,
    for the argument positions in ``grad``, the gradients of a weighted sum."""
    kwargs = kwargs or {}
    targs = [_to(torch, a, i in grad) for i, a in enumerate(args)]
    pargs = [_to(ptcore, a, i in grad) for i, a in enumerate(args)]
    tout = getattr(torch, name)(*targs, **kwargs)
    pout = getattr(ptcore, name)(*pargs, **kwargs)
    touts, pouts = _flat(tout), _flat(pout)
    assert len(touts) == len(pouts)
    for t, p in zip(touts, pouts):
        assert tuple(p.shape) == tuple(t.shape), (name, p.shape, t.shape)
        assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(p), _np(t), rtol=rtol, atol=atol, err_msg=name)
    if grad:
        k = 0 if out_grad is None else out_grad
        w = rng.standard_normal(tuple(touts[k].shape))
        (touts[k] * torch.from_numpy(w).to(touts[k].dtype)).sum().backward()
        (pouts[k] * ptcore.from_numpy(w).to(pouts[k].dtype)).sum().backward()
        for i in grad:
            np.testing.assert_allclose(_np(pargs[i].grad), _np(targs[i].grad), rtol=1e-7,
                                       atol=1e-8, err_msg=f"{name} grad of arg {i}")
    return pout


def test_nn_not_imported_eagerly(tmp_path):
    import subprocess
    import sys
    code = "import sys, ptcore; assert 'ptcore.nn' not in sys.modules; ptcore.selu; " \
           "assert 'ptcore.nn' not in sys.modules"
    # run outside the source tree: from the repository root the child would
    # import the uncompiled source package instead of the installed one
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


# -- dropout ----------------------------------------------------------------------------

@needs_torch
def test_dropout_family_identity_and_errors():
    x = ptcore.randn(4, 5)
    for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
        assert getattr(ptcore, name)(x, 0.5, False) is x
        assert getattr(ptcore, name)(x, 0.0, True) is x
        for p in (1.5, -1):
            with pytest.raises(RuntimeError) as e:
                getattr(ptcore, name)(x, p, True)
            with pytest.raises(RuntimeError) as te:
                getattr(torch, name)(torch.zeros(4, 5), p, True)
            assert str(e.value) == str(te.value)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        ptcore.feature_dropout(ptcore.randn(3), 0.5, True)


@needs_torch
def test_dropout_train_values():
    ptcore.manual_seed(0)
    x = ptcore.ones(200, 300, dtype=ptcore.float64)
    y = ptcore.dropout(x, 0.25, True).numpy()
    assert set(np.unique(y)) <= {0.0, 1 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.01
    z = x.clone()
    assert ptcore.dropout_(z, 0.25, True) is z
    assert abs((z.numpy() == 0).mean() - 0.25) < 0.01
    # feature dropout: whole (n, c) planes
    f = ptcore.feature_dropout(ptcore.ones(50, 40, 3, 3), 0.5, True).numpy()
    planes = f.reshape(50, 40, 9)
    assert np.all((planes == 0).all(-1) | (planes == 2.0).all(-1))
    # alpha dropout keeps mean ~0 / var ~1 on standard normal input
    a = ptcore.alpha_dropout(ptcore.randn(400, 500, dtype=ptcore.float64), 0.2, True).numpy()
    assert abs(a.mean()) < 0.02 and abs(a.var() - 1) < 0.05
    # native_dropout
    out, mask = ptcore.native_dropout(x, 0.5, True)
    assert mask.dtype == ptcore.bool
    np.testing.assert_allclose(out.numpy(), mask.numpy() * 2.0)
    out, mask = ptcore.native_dropout(x, 0.5, False)
    assert out is not x and bool(mask.all())
    tout, tmask = torch.native_dropout(torch.ones(3, 3), 0.5, False)
    assert tmask.dtype == torch.bool and bool(tmask.all())


# -- normalization ---------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training):
    x, w, b = R(4, 3, 5), R(3), R(3)
    rm, rv = R(3), np.abs(R(3)) + 0.5
    trm, trv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    prm, prv = ptcore.from_numpy(rm.copy()), ptcore.from_numpy(rv.copy())
    tx, tw, tb = (torch.from_numpy(a).requires_grad_() for a in (x, w, b))
    px, pw, pb = (ptcore.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
    to = torch.batch_norm(tx, tw, tb, trm, trv, training, 0.3, 1e-4, False)
    po = ptcore.batch_norm(px, pw, pb, prm, prv, training, 0.3, 1e-4, False)
    np.testing.assert_allclose(po.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(prm.numpy(), trm.numpy(), rtol=1e-10)
    np.testing.assert_allclose(prv.numpy(), trv.numpy(), rtol=1e-10)
    g = R(4, 3, 5)
    to.backward(torch.from_numpy(g))
    po.backward(ptcore.from_numpy(g))
    for p, t in ((px, tx), (pw, tw), (pb, tb)):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)


@needs_torch
def test_instance_layer_group_rms_norm():
    x = R(2, 4, 6)
    check("instance_norm", x, R(4), R(4), None, None, True, 0.1, 1e-5, False, grad=(0, 1, 2))
    check("layer_norm", x, [6], R(6), R(6), grad=(0, 2, 3))
    check("layer_norm", x, (4, 6), None, None, 1e-3, grad=(0,))
    check("group_norm", x, 2, R(4), R(4), grad=(0, 2, 3))
    check("group_norm", x, 4, kwargs={"eps": 1e-3}, grad=(0,))
    check("rms_norm", x, [6], R(6), grad=(0, 2))
    check("rms_norm", x, (4, 6), None, 1e-4, grad=(0,))


@needs_torch
def test_native_norms():
    x = R(2, 6, 3, 3)
    check("native_layer_norm", x, [3, 3], R(3, 3), R(3, 3), 1e-5, grad=(0, 2, 3))
    check("native_layer_norm", x.astype(np.float32), [3], None, None, 1e-5, rtol=1e-5, atol=1e-5)
    check("native_batch_norm", x, R(6), R(6), None, None, True, 0.1, 1e-5, grad=(0, 1, 2))
    check("native_batch_norm", x, None, None, np.zeros(6), np.ones(6), True, 0.1, 1e-5)
    check("native_batch_norm", x, R(6), None, R(6), np.ones(6) * 2, False, 0.1, 1e-5,
          grad=(0, 1))
    check("native_group_norm", x, R(6), R(6), 2, 6, 9, 3, 1e-5, grad=(0, 1, 2))
    check("native_group_norm", x, None, None, 2, 6, 9, 6, 1e-5)


# -- embedding ---------------------------------------------------------------------------

@needs_torch
def test_embedding():
    w = R(6, 3)
    idx = np.array([[0, 2, 1], [1, 5, 1]])
    check("embedding", w, idx, grad=(0,))
    check("embedding", w, idx, 1, grad=(0,))
    check("embedding", w, idx, kwargs={"padding_idx": 1, "scale_grad_by_freq": True}, grad=(0,))
    with pytest.raises(IndexError):
        ptcore.embedding(ptcore.randn(5, 3), ptcore.tensor([1, 7]))


@needs_torch
def test_embedding_renorm_():
    w = R(6, 3) * 3
    tw, pw = torch.from_numpy(w.copy()), ptcore.from_numpy(w.copy())
    idx = np.array([0, 2, 2, 4])
    assert torch.embedding_renorm_(tw, torch.from_numpy(idx), 1.0, 2.0) is tw
    assert ptcore.embedding_renorm_(pw, ptcore.from_numpy(idx), 1.0, 2.0) is pw
    np.testing.assert_allclose(pw.numpy(), tw.numpy(), rtol=1e-6)


# -- pooling / conv / vision ------------------------------------------------------------

@needs_torch
def test_pooling():
    x1, x2, x3 = R(2, 3, 9), R(2, 3, 7, 8), R(1, 2, 5, 6, 4)
    check("max_pool1d", x1, 3, grad=(0,))
    check("max_pool1d", x1, 3, 2, 1, 1, True, grad=(0,))
    check("max_pool1d", x1, 2, [], grad=(0,))
    check("max_pool2d", x2, (2, 3), grad=(0,))
    check("max_pool2d", x2, 3, 2, 1, kwargs={"ceil_mode": True}, grad=(0,))
    check("max_pool3d", x3, 2, grad=(0,))
    check("max_pool1d_with_indices", x1, 3, 2, grad=(0,))
    check("avg_pool1d", x1, 3, grad=(0,))
    check("avg_pool1d", x1, 3, 2, 1, True, False, grad=(0,))
    check("adaptive_avg_pool1d", x1, 4, grad=(0,))
    check("adaptive_max_pool1d", x1, 4, grad=(0,))


@needs_torch
def test_convolutions():
    check("conv1d", R(2, 4, 9), R(6, 2, 3), R(6), 2, 1, 1, 2, grad=(0, 1, 2))
    check("conv2d", R(2, 3, 6, 7), R(4, 3, 3, 2), None, 1, (1, 0), grad=(0, 1))
    check("conv3d", R(1, 2, 4, 5, 4), R(3, 2, 2, 2, 2), R(3), grad=(0, 1, 2))
    check("conv_transpose1d", R(2, 4, 5), R(4, 3, 3), R(3), 2, 1, 1, grad=(0, 1, 2))
    check("conv_transpose2d", R(1, 4, 4, 5), R(4, 2, 3, 3), None, 2, 1, 1, 2, grad=(0, 1))
    check("conv_transpose3d", R(1, 2, 3, 3, 3), R(2, 3, 2, 2, 2), R(3), grad=(0, 1, 2))
    check("convolution", R(2, 3, 6, 7), R(4, 3, 3, 3), R(4), [1, 2], [1, 1], [1, 1], False, [0, 0],
          1, grad=(0, 1, 2))
    check("convolution", R(2, 4, 5), R(4, 3, 3), None, [2], [1], [1], True, [1], 1, grad=(0, 1))
    check("convolution", R(1, 4, 3, 3, 3), R(2, 2, 2, 2, 2), None, [1, 1, 1], [0, 0, 0],
          [1, 1, 1], False, [0, 0, 0], 2, grad=(0, 1))
    with pytest.raises(RuntimeError) as e:
        ptcore.convolution(ptcore.randn(1, 1, 3), ptcore.randn(1, 1, 1, 1), None, [1], [0], [1],
                           False, [0], 1)
    with pytest.raises(RuntimeError) as te:
        torch.convolution(torch.randn(1, 1, 3), torch.randn(1, 1, 1, 1), None, [1], [0], [1],
                          False, [0], 1)
    assert str(e.value) == str(te.value)


@needs_torch
def test_vision_and_distance():
    check("pixel_shuffle", R(2, 8, 3, 3), 2, grad=(0,))
    check("pixel_unshuffle", R(2, 2, 4, 6), 2, grad=(0,))
    check("channel_shuffle", R(2, 6, 3, 3), 3)
    check("native_channel_shuffle", R(2, 6, 3, 3), 2)
    check("pdist", R(5, 3), grad=(0,))
    check("pdist", R(5, 3), 1.5, grad=(0,))
    check("cosine_similarity", R(4, 5), R(4, 5), grad=(0, 1))
    check("cosine_similarity", R(4, 5), R(1, 5), 1, 1e-6, grad=(0, 1))
    check("pairwise_distance", R(4, 5), R(4, 5), grad=(0, 1))
    check("pairwise_distance", R(4, 5), R(4, 5), 1.0, 1e-6, True, grad=(0, 1))


# -- activations -------------------------------------------------------------------------

@needs_torch
def test_activations():
    x = R(3, 4, 5)
    check("prelu", x, np.array([0.25, -0.1, 0.3, 0.5]), grad=(0, 1))
    check("prelu", x, np.array([0.2]), grad=(0, 1))
    check("selu", x, grad=(0,))
    check("celu", x, grad=(0,))
    check("celu", x, 0.7, grad=(0,))
    check("rrelu", x, grad=(0,))
    check("rrelu", x, 0.1, 0.3, False, grad=(0,))
    check("threshold", x, 0.1, 20.0, grad=(0,))
    check("hardshrink", x, grad=(0,))
    check("hardshrink", x, 0.8, grad=(0,))
    check("bilinear", R(4, 3), R(4, 5), R(2, 3, 5), R(2), grad=(0, 1, 2, 3))
    for name, args in (("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.0, -1.0)),
                       ("relu_", ()), ("rrelu_", ())):
        t, p = torch.from_numpy(x.copy()), ptcore.from_numpy(x.copy())
        assert getattr(torch, name)(t, *args) is t
        assert getattr(ptcore, name)(p, *args) is p
        np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


@needs_torch
def test_rrelu_training_and_generator():
    x = -ptcore.ones(10000, dtype=ptcore.float64)
    y = ptcore.rrelu(x, 0.1, 0.3, True).numpy()
    assert y.min() >= -0.3 and y.max() <= -0.1 and abs(y.mean() + 0.2) < 0.005
    g1, g2 = ptcore.Generator().manual_seed(3), ptcore.Generator().manual_seed(3)
    a = ptcore.rrelu(x, training=True, generator=g1)
    b = ptcore.rrelu(x, training=True, generator=g2)
    assert bool((a == b).all())
    xp = ptcore.tensor([1.0, -2.0])
    assert ptcore.rrelu_(xp, training=True) is xp and xp[0].item() == 1.0


@needs_torch
def test_tensor_methods():
    x = R(2, 3, 4)
    t, p = torch.from_numpy(x), ptcore.from_numpy(x.copy())
    w = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(p.prelu(ptcore.from_numpy(w)).numpy(),
                               t.prelu(torch.from_numpy(w)).numpy())
    np.testing.assert_allclose(p.hardshrink(0.3).numpy(), t.hardshrink(0.3).numpy())
    np.testing.assert_allclose(p.hardshrink().numpy(), t.hardshrink().numpy())


# -- losses ------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("red", [None, 0, 1, 2])
def test_losses(red):
    kw = {} if red is None else {"reduction": red}
    x, y = R(4, 5), R(4, 5)
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    check("kl_div", x, np.abs(R(4, 5)), kwargs=kw, grad=(0, 1))
    check("kl_div", x, R(4, 5), kwargs=dict(kw, log_target=True), grad=(0, 1))
    check("cosine_embedding_loss", x, y, sign, 0.2, kwargs=kw, grad=(0, 1))
    check("margin_ranking_loss", R(4), R(4), sign, 0.1, kwargs=kw, grad=(0, 1))
    check("triplet_margin_loss", x, y, R(4, 5), 1.0, 2.0, 1e-6, True, kwargs=kw, grad=(0, 1, 2))
    check("hinge_embedding_loss", x, np.sign(R(4, 5)), 0.5, kwargs=kw, grad=(0,))
    check("binary_cross_entropy_with_logits", x, np.abs(R(4, 5)) % 1, R(4, 5), np.abs(R(5)),
          kwargs=kw, grad=(0,))
    lp = np.log(np.random.default_rng(1).dirichlet(np.ones(5), size=(7, 2)))
    tg = np.array([[1, 2, 3], [4, 4, 0]])
    check("ctc_loss", lp, tg, [7, 6], [3, 2], kwargs=kw, rtol=1e-7, grad=(0,))
    if red is not None:
        check("poisson_nll_loss", x, np.abs(y), True, False, 1e-8, red, grad=(0,))
        check("poisson_nll_loss", np.abs(x), np.abs(y), False, True, 1e-6, red, grad=(0,))


@needs_torch
def test_loss_reduction_type():
    x = ptcore.randn(3)
    with pytest.raises(TypeError, match="must be int, not str"):
        ptcore.kl_div(x, x, "mean")
    with pytest.raises(TypeError):
        torch.kl_div(torch.zeros(3), torch.zeros(3), "mean")
