"""nn.utils fusion (conv/linear + batch norm folding), skip_init and the conv weight
memory-format converters, against torch 2.13."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn

torch = pytest.importorskip("torch")


def _load(pm, tm):
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tm.state_dict().items()})


def _bn_stats(tbn):
    with torch.no_grad():
        tbn.running_mean.uniform_(-1, 1)
        tbn.running_var.uniform_(0.5, 2)
        tbn.weight.uniform_(0.5, 1.5)
        tbn.bias.uniform_(-1, 1)


@pytest.mark.parametrize("kind", ["conv2d", "conv_transpose2d", "conv1d", "linear"])
def test_fuse_bn_eval(kind):
    torch.manual_seed(0)
    if kind == "conv2d":
        tm, tbn, shape = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), (2, 3, 6, 6)
        pm, pbn = pnn.Conv2d(3, 4, 3), pnn.BatchNorm2d(4)
    elif kind == "conv_transpose2d":
        tm, tbn, shape = torch.nn.ConvTranspose2d(3, 4, 2), torch.nn.BatchNorm2d(4), (2, 3, 5, 5)
        pm, pbn = pnn.ConvTranspose2d(3, 4, 2), pnn.BatchNorm2d(4)
    elif kind == "conv1d":
        tm, tbn, shape = torch.nn.Conv1d(3, 4, 3, bias=False), torch.nn.BatchNorm1d(4), (2, 3, 7)
        pm, pbn = pnn.Conv1d(3, 4, 3, bias=False), pnn.BatchNorm1d(4)
    else:
        tm, tbn, shape = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), (5, 3)
        pm, pbn = pnn.Linear(3, 4), pnn.BatchNorm1d(4)
    _bn_stats(tbn)
    _load(pm, tm)
    _load(pbn, tbn)
    tm.eval(), tbn.eval(), pm.eval(), pbn.eval()
    fuse_t = torch.nn.utils.fuse_linear_bn_eval if kind == "linear" else \
        torch.nn.utils.fuse_conv_bn_eval
    fuse_p = pnn.utils.fuse_linear_bn_eval if kind == "linear" else pnn.utils.fuse_conv_bn_eval
    kw = {"transpose": True} if kind == "conv_transpose2d" else {}
    tf, pf = fuse_t(tm, tbn, **kw), fuse_p(pm, pbn, **kw)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ty = tf(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(pf(ptcore.tensor(x)).detach().numpy(), ty, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pbn(pm(ptcore.tensor(x))).detach().numpy(), ty, rtol=1e-4,
                               atol=1e-5)
    assert pf is not pm and isinstance(pf.weight, pnn.Parameter)
    pm.train()
    with pytest.raises(AssertionError):
        fuse_p(pm, pbn, **kw)


def test_fuse_weights_functions():
    rng = np.random.default_rng(2)
    w, b = rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(4)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    bw, bb = rng.standard_normal(4), rng.standard_normal(4)
    t = torch.nn.utils.fuse_conv_bn_weights(*(torch.tensor(a) for a in (w, b, rm, rv)), 1e-5,
                                            torch.tensor(bw), torch.tensor(bb))
    p = pnn.utils.fuse_conv_bn_weights(*(ptcore.tensor(a) for a in (w, b, rm, rv)), 1e-5,
                                       ptcore.tensor(bw), ptcore.tensor(bb))
    for a, c in zip(p, t):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-12)
    t = torch.nn.utils.fuse_linear_bn_weights(torch.tensor(w[:, :, 0, 0]), None,
                                              *(torch.tensor(a) for a in (rm, rv)), 1e-5,
                                              torch.tensor(bw), torch.tensor(bb))
    p = pnn.utils.fuse_linear_bn_weights(ptcore.tensor(w[:, :, 0, 0]), None,
                                         *(ptcore.tensor(a) for a in (rm, rv)), 1e-5,
                                         ptcore.tensor(bw), ptcore.tensor(bb))
    for a, c in zip(p, t):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-12)


def test_skip_init():
    m = pnn.utils.skip_init(pnn.Linear, 5, 1)
    assert type(m) is pnn.Linear and tuple(m.weight.shape) == (1, 5)
    m2 = pnn.utils.skip_init(pnn.Conv2d, in_channels=2, out_channels=3, kernel_size=2)
    assert tuple(m2.weight.shape) == (3, 2, 2, 2)
    # the init functions work again afterwards
    w = ptcore.zeros(3, 3)
    pnn.init.ones_(w)
    assert w.sum().item() == 9
    with pytest.raises(RuntimeError):
        torch.nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="Module"):
        pnn.utils.skip_init(int)

    class NoDevice(pnn.Module):
        def __init__(self):
            super().__init__()

    with pytest.raises(RuntimeError, match="device"):
        pnn.utils.skip_init(NoDevice)


def test_convert_weight_memory_format():
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Sequential(torch.nn.ConvTranspose2d(4, 2, 2)))
    pm = pnn.Sequential(pnn.Conv2d(3, 4, 3), pnn.Sequential(pnn.ConvTranspose2d(4, 2, 2)))
    torch.nn.utils.convert_conv2d_weight_memory_format(tm, torch.channels_last)
    pnn.utils.convert_conv2d_weight_memory_format(pm, ptcore.channels_last)
    assert pm[0].weight.stride() == tm[0].weight.stride()
    assert pm[1][0].weight.stride() == tm[1][0].weight.stride()
    assert isinstance(pm[0].weight, pnn.Parameter)
    t3 = torch.nn.utils.convert_conv3d_weight_memory_format(torch.nn.Conv3d(2, 3, 2),
                                                            torch.channels_last_3d)
    p3 = pnn.utils.convert_conv3d_weight_memory_format(pnn.Conv3d(2, 3, 2),
                                                       ptcore.channels_last_3d)
    assert p3.weight.stride() == t3.weight.stride()
