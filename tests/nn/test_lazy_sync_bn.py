"""nn.Lazy* modules (shapes inferred on the first forward, class change, state_dict loading)
and SyncBatchNorm in one process; compared with torch 2.13."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn

torch = pytest.importorskip("torch")
tnn = torch.nn

CASES = [
    ("LazyLinear", (5,), (3, 4), "Linear"),
    ("LazyConv1d", (4, 3), (2, 3, 9), "Conv1d"),
    ("LazyConv2d", (4, 3), (2, 3, 7, 6), "Conv2d"),
    ("LazyConv3d", (2, 2), (1, 3, 5, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 9), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3), (2, 3, 5, 6), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 4, 4), "ConvTranspose3d"),
    ("LazyBatchNorm1d", (), (4, 3, 5), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), (4, 3, 5, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (), (4, 3, 5), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), (4, 3, 5, 2), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2), "InstanceNorm3d"),
]


@pytest.mark.parametrize("name, args, shape, becomes", CASES)
def test_lazy_module_materializes_as_torch(name, args, shape, becomes):
    pm, tm = getattr(pnn, name)(*args), getattr(tnn, name)(*args)
    assert pm.has_uninitialized_params() == tm.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    py = pm(ptcore.tensor(x))
    ty = tm(torch.tensor(x))
    assert type(pm) is getattr(pnn, becomes) and type(tm) is getattr(tnn, becomes)
    assert not pm.has_uninitialized_params() if hasattr(pm, "has_uninitialized_params") else True
    tsd, psd = tm.state_dict(), pm.state_dict()
    assert list(psd) == list(tsd)
    for k in tsd:
        assert tuple(psd[k].shape) == tuple(tsd[k].shape), k
    assert tuple(py.shape) == tuple(ty.shape)
    # with torch's weights, the same output
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tsd.items()})
    with torch.no_grad():
        ty = tm(torch.tensor(x))
    np.testing.assert_allclose(pm(ptcore.tensor(x)).detach().numpy(), ty.numpy(), rtol=1e-4,
                               atol=1e-5)


def test_lazy_linear_load_state_dict_materializes():
    src = pnn.Linear(6, 2)
    lazy = pnn.LazyLinear(2)
    lazy.load_state_dict(src.state_dict())
    assert tuple(lazy.weight.shape) == (2, 6)
    x = ptcore.randn(3, 6)
    np.testing.assert_allclose(lazy(x).detach().numpy(), src(x).detach().numpy())
    assert type(lazy) is pnn.Linear and lazy.in_features == 6


def test_lazy_module_trains_and_errors():
    m = pnn.Sequential(pnn.LazyLinear(8), pnn.ReLU(), pnn.LazyLinear(1))
    m(ptcore.randn(2, 3))
    opt = ptcore.optim.SGD(m.parameters(), lr=0.1)
    loss = m(ptcore.randn(4, 3)).pow(2).mean()
    loss.backward()
    opt.step()
    assert m[0].weight.grad is not None and tuple(m[2].weight.shape) == (1, 8)
    from ptcore.nn.parameter import UninitializedParameter
    lazy = pnn.LazyLinear(3)
    assert isinstance(lazy.weight, UninitializedParameter)
    assert isinstance(tnn.LazyLinear(3).weight, tnn.parameter.UninitializedParameter)
    with pytest.raises((RuntimeError, ValueError)):
        lazy.weight.shape and lazy.weight + 1


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_sync_batch_norm_single_process(shape, training):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    tm, pm = tnn.SyncBatchNorm(3), pnn.SyncBatchNorm(3)
    tm.train(training)
    pm.train(training)
    ty = tm(torch.tensor(x))
    py = pm(ptcore.tensor(x))
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pm.running_mean.numpy(), tm.running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(pm.running_var.numpy(), tm.running_var.numpy(), rtol=1e-5)
    assert int(pm.num_batches_tracked) == int(tm.num_batches_tracked)


def test_sync_batch_norm_errors_and_convert():
    with pytest.raises(ValueError):
        tnn.SyncBatchNorm(3)(torch.zeros(3))
    with pytest.raises(ValueError, match="2D"):
        pnn.SyncBatchNorm(3)(ptcore.zeros(3))
    net = pnn.Sequential(pnn.Conv2d(1, 3, 3), pnn.BatchNorm2d(3), pnn.Sequential(pnn.BatchNorm1d(4)))
    bn = net[1]
    conv = pnn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(conv[1]) is pnn.SyncBatchNorm and type(conv[2][0]) is pnn.SyncBatchNorm
    assert conv[1].weight is bn.weight and conv[1].running_mean is bn.running_mean
    tconv = tnn.SyncBatchNorm.convert_sync_batchnorm(
        tnn.Sequential(tnn.Conv2d(1, 3, 3), tnn.BatchNorm2d(3)))
    assert list(dict(conv.named_modules())) [:2] == list(dict(tconv.named_modules()))[:2]
