"""Short deterministic training runs compared step by step with PyTorch.

The same model is built in torch and ptcore (torch's initial parameters
copied over), trained on the same fixed synthetic data with the same
optimizer, and the loss of every step must agree (float64); the run must
also actually learn (final loss below a stated value).
"""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
import ptcore.optim as poptim
from ptcore.utils.data import DataLoader as PDataLoader, TensorDataset as PTensorDataset

try:
    import torch
    import torch.nn as tnn
    from torch.utils.data import DataLoader as TDataLoader, TensorDataset as TTensorDataset
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

STEPS = 50
RTOL = 1e-5


def _copy(tm, pm):
    pm.load_state_dict({k: ptcore.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})


def _mlp(nn):
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                         nn.LayerNorm(32), nn.Linear(32, 3))


def _cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))


def _classification_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 8))
    w = rng.standard_normal((8, 3))
    y = np.argmax(np.tanh(x @ w) + 0.1 * rng.standard_normal((96, 3)), axis=1)
    return x, y


def _image_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 1, 8, 8)) * 0.5
    y = rng.integers(0, 2, 32)
    # class 1: a bright top-left blob, class 0: a bright bottom-right blob
    for i, c in enumerate(y):
        if c:
            x[i, 0, 1:4, 1:4] += 1.5
        else:
            x[i, 0, 4:7, 4:7] += 1.5
    return x, y


def _train(make, data, opt_name, opt_kw, loss_name, batch_size, seed=0):
    x, y = data
    torch.manual_seed(seed)
    tm = make(tnn).double()
    pm = make(pnn).double()
    _copy(tm, pm)
    topt = getattr(torch.optim, opt_name)(tm.parameters(), **opt_kw)
    popt = getattr(poptim, opt_name)(pm.parameters(), **opt_kw)
    tloss_fn, ploss_fn = getattr(tnn, loss_name)(), getattr(pnn, loss_name)()
    tdl = TDataLoader(TTensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                      batch_size=batch_size, shuffle=False)
    pdl = PDataLoader(PTensorDataset(ptcore.from_numpy(x), ptcore.from_numpy(y)),
                      batch_size=batch_size, shuffle=False)
    tlosses, plosses = [], []
    step = 0
    while step < STEPS:
        for (tx, ty), (px, py) in zip(tdl, pdl):
            topt.zero_grad()
            tl = tloss_fn(tm(tx), ty)
            tl.backward()
            topt.step()
            popt.zero_grad()
            pl = ploss_fn(pm(px), py)
            pl.backward()
            popt.step()
            tlosses.append(tl.item())
            plosses.append(pl.item())
            step += 1
            if step == STEPS:
                break
    return tm, pm, np.array(tlosses), np.array(plosses)


def _full_loss(m, loss_name, data, lib, nn):
    x, y = data
    m.eval()
    with lib.no_grad():
        return getattr(nn, loss_name)()(m(lib.from_numpy(x)), lib.from_numpy(y)).item()


@pytest.mark.parametrize("opt_name,opt_kw,batch_size,final", [
    ("Adam", dict(lr=1e-2), 96, 0.05),
    ("Adam", dict(lr=5e-3, weight_decay=1e-3, amsgrad=True), 32, 0.25),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4), 32, 0.05),
    ("SGD", dict(lr=0.2), 96, 0.15),
])
def test_mlp_training_matches_torch(opt_name, opt_kw, batch_size, final):
    data = _classification_data()
    tm, pm, tl, pl = _train(_mlp, data, opt_name, opt_kw, "CrossEntropyLoss", batch_size)
    np.testing.assert_allclose(pl, tl, rtol=RTOL)
    for (name, tp), pp in zip(tm.named_parameters(), pm.parameters()):
        np.testing.assert_allclose(pp.detach().numpy(), tp.detach().numpy(), rtol=1e-4,
                                   atol=1e-7, err_msg=name)
    assert tl[-1] < tl[0]
    final_p = _full_loss(pm, "CrossEntropyLoss", data, ptcore, pnn)
    assert final_p < final, (final_p, pl[0])
    np.testing.assert_allclose(final_p, _full_loss(tm, "CrossEntropyLoss", data, torch, tnn),
                               rtol=RTOL)


@pytest.mark.parametrize("opt_name,opt_kw,final", [
    ("Adam", dict(lr=2e-2), 0.01),
    ("SGD", dict(lr=0.05, momentum=0.9), 0.01),
])
def test_cnn_training_matches_torch(opt_name, opt_kw, final):
    data = _image_data()
    tm, pm, tl, pl = _train(_cnn, data, opt_name, opt_kw, "CrossEntropyLoss", 16)
    np.testing.assert_allclose(pl, tl, rtol=RTOL)
    # BatchNorm running statistics followed the same batches
    np.testing.assert_allclose(pm[1].running_mean.numpy(), tm[1].running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(pm[1].running_var.numpy(), tm[1].running_var.numpy(), rtol=1e-6)
    assert int(pm[1].num_batches_tracked) == STEPS
    final_p = _full_loss(pm, "CrossEntropyLoss", data, ptcore, pnn)
    assert final_p < final, (final_p, pl[0])
    np.testing.assert_allclose(final_p, _full_loss(tm, "CrossEntropyLoss", data, torch, tnn),
                               rtol=RTOL)


def test_regression_mse_adamw_with_scheduler():
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (64, 2))
    y = (np.sin(x[:, :1]) * np.cos(x[:, 1:]))

    def make(nn):
        return nn.Sequential(nn.Linear(2, 16), nn.SiLU(), nn.Linear(16, 1))

    torch.manual_seed(0)
    tm, pm = make(tnn).double(), make(pnn).double()
    _copy(tm, pm)
    topt = torch.optim.AdamW(tm.parameters(), lr=3e-2)
    popt = poptim.AdamW(pm.parameters(), lr=3e-2)
    tsch = torch.optim.lr_scheduler.StepLR(topt, 20, 0.5)
    psch = poptim.lr_scheduler.StepLR(popt, 20, 0.5)
    tx, ty, px, py = (torch.from_numpy(x), torch.from_numpy(y), ptcore.from_numpy(x),
                      ptcore.from_numpy(y))
    tl, pl = [], []
    for _ in range(STEPS):
        topt.zero_grad()
        loss = tnn.functional.mse_loss(tm(tx), ty)
        loss.backward()
        topt.step()
        tsch.step()
        tl.append(loss.item())
        popt.zero_grad()
        loss = pnn.functional.mse_loss(pm(px), py)
        loss.backward()
        popt.step()
        psch.step()
        pl.append(loss.item())
    np.testing.assert_allclose(pl, tl, rtol=RTOL)
    assert pl[-1] < 0.1, pl[-1]  # from ~0.25
