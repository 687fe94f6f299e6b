"""ptcore.optim.Adafactor, SparseAdam and swa_utils against torch.optim."""
import copy

import numpy as np
import pytest

import ptcore
from ptcore import optim

torch = pytest.importorskip("torch")

from optim_oracle import (  # noqa: E402
    NSTEPS, assert_close_params, assert_state_dict_equal, config_id, make, skip_some,
)

CONFIGS = [
    ("Adafactor", dict(), None),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-30, 1e-3), d=1.5), None),
    ("Adafactor", dict(lr=0.02, weight_decay=0.1, maximize=True), None),
    ("Adafactor", dict(lr=0.01), dict(lr=0.1, eps=(None, 1e-2), weight_decay=0.01)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[config_id(c) for c in CONFIGS])
def test_adafactor_trajectory_matches_torch(config, dtype):
    name, opts, override = config
    ps, ts, popt, topt = make(name, opts, override, dtype)
    sign = -1.0 if opts.get("maximize", False) else 1.0
    for k in range(NSTEPS):
        ps.set_grads(k, sign=sign, skip=skip_some)
        ts.set_grads(k, sign=sign, skip=skip_some)
        popt.step()
        topt.step()
        assert_close_params(ps.params, ts.params, dtype, msg=f"step {k}")
    assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)


def test_adafactor_tensor_lr_and_errors():
    ps, ts, popt, topt = make("Adafactor", dict(lr=0.03), None, "float64")
    pt = optim.Adafactor(ps.params, lr=ptcore.tensor(0.03))
    tt = torch.optim.Adafactor(ts.params, lr=torch.tensor(0.03))
    for k in range(5):
        ps.set_grads(k)
        ts.set_grads(k)
        pt.step()
        tt.step()
    assert_close_params(ps.params, ts.params, "float64")
    p = [ptcore.zeros(2, requires_grad=True)]
    for kw, msg in [(dict(lr=-1.0), "Learning rate"), (dict(beta2_decay=0.5), "beta2_decay"),
                    (dict(eps=(-1.0, 1e-3)), "epsilon1"), (dict(eps=(None, -1.0)), "epsilon2"),
                    (dict(d=0.5), "Clipping threshold"), (dict(weight_decay=-1.0),
                                                          "weight_decay")]:
        with pytest.raises(ValueError, match=msg):
            optim.Adafactor(p, **kw)
        with pytest.raises(ValueError, match=msg):
            torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)
    c = ptcore.zeros(2, dtype=ptcore.complex64, requires_grad=True)
    c.grad = ptcore.ones(2, dtype=ptcore.complex64)
    with pytest.raises(RuntimeError, match="complex"):
        optim.Adafactor([c]).step()


def test_sparse_adam_errors_as_torch():
    for lib in (ptcore, torch):
        p = lib.zeros(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()
        with pytest.raises(ValueError, match="Invalid learning rate"):
            lib.optim.SparseAdam([p], lr=0.0)
        with pytest.raises(ValueError, match="Invalid epsilon"):
            lib.optim.SparseAdam([p], eps=0.0)
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
            lib.optim.SparseAdam([p], betas=(0.9, 1.0))
        with pytest.raises(ValueError, match="complex"):
            lib.optim.SparseAdam([lib.zeros(2, dtype=lib.complex64, requires_grad=True)])
        # no gradient: a no-op step
        q = lib.zeros(2, requires_grad=True)
        lib.optim.SparseAdam([q]).step()


# --- swa_utils ---

def _pair_models(seed=0):
    rng = np.random.default_rng(seed)

    def build(lib):
        m = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.BatchNorm1d(5), lib.nn.ReLU(),
                              lib.nn.Linear(5, 2))
        return m
    pm, tm = build(ptcore), build(torch)
    tsd = tm.state_dict()
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tsd.items()})
    return pm, tm, rng


def _perturb(pm, tm, rng):
    with ptcore.no_grad(), torch.no_grad():
        for (pn, pp), (tn, tp) in zip(pm.named_parameters(), tm.named_parameters()):
            d = rng.standard_normal(tuple(tp.shape)).astype(np.float32)
            pp.add_(ptcore.tensor(d))
            tp.add_(torch.tensor(d))
        for pb, tb in zip(pm.buffers(), tm.buffers()):
            if tb.is_floating_point():
                d = rng.random(tuple(tb.shape)).astype(np.float32)
                pb.add_(ptcore.tensor(d))
                tb.add_(torch.tensor(d))


def _assert_module_close(pm, tm):
    psd, tsd = pm.state_dict(), tm.state_dict()
    assert list(psd.keys()) == list(tsd.keys())
    for k in tsd:
        np.testing.assert_allclose(psd[k].numpy(), tsd[k].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_avg", "swa_avg", "buffers",
                                  "swa_buffers"])
def test_averaged_model_matches_torch(kind):
    """AveragedModel against torch; "swa_buffers" is the default running mean over
    parameters and buffers, an integer num_batches_tracked included (torch takes
    the per-tensor mean on the CPU)."""
    pm, tm, rng = _pair_models()
    su, tsu = optim.swa_utils, torch.optim.swa_utils
    kwargs = {
        "swa": ({}, {}),
        "ema_multi": ({"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
                      {"multi_avg_fn": tsu.get_ema_multi_avg_fn(0.9)}),
        "ema_avg": ({"avg_fn": su.get_ema_avg_fn(0.8)}, {"avg_fn": tsu.get_ema_avg_fn(0.8)}),
        "swa_avg": ({"avg_fn": su.get_swa_avg_fn()}, {"avg_fn": tsu.get_swa_avg_fn()}),
        "buffers": ({"use_buffers": True, "multi_avg_fn": su.get_ema_multi_avg_fn(0.7)},
                    {"use_buffers": True, "multi_avg_fn": tsu.get_ema_multi_avg_fn(0.7)}),
        "swa_buffers": ({"use_buffers": True}, {"use_buffers": True}),
    }[kind]
    pa = su.AveragedModel(pm, **kwargs[0])
    ta = tsu.AveragedModel(tm, **kwargs[1])
    for _ in range(4):
        _perturb(pm, tm, rng)
        pa.update_parameters(pm)
        ta.update_parameters(tm)
        _assert_module_close(pa, ta)
    assert pa.n_averaged.item() == ta.n_averaged.item() == 4
    x = rng.standard_normal((3, 4)).astype(np.float32)
    pa.eval()
    ta.eval()
    np.testing.assert_allclose(pa(ptcore.tensor(x)).detach().numpy(),
                               ta(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        su.AveragedModel(pm, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match="Invalid decay"):
        su.get_ema_avg_fn(1.5)


def test_update_bn_matches_torch():
    pm, tm, rng = _pair_models(1)
    batches = [rng.standard_normal((6, 4)).astype(np.float32) * 2 + 1 for _ in range(3)]
    ploader = [(ptcore.tensor(b), 0) for b in batches]
    tloader = [(torch.tensor(b), 0) for b in batches]
    pm.eval()
    tm.eval()
    optim.swa_utils.update_bn(ploader, pm)
    torch.optim.swa_utils.update_bn(tloader, tm)
    _assert_module_close(pm, tm)
    assert not pm.training
    assert pm[1].momentum == tm[1].momentum == 0.1


@pytest.mark.parametrize("strategy,anneal", [("cos", 5), ("linear", 3), ("cos", 0)])
def test_swalr_matches_torch(strategy, anneal):
    pp = [ptcore.zeros(2, requires_grad=True)]
    tp = [torch.zeros(2, requires_grad=True)]
    popt = optim.SGD(pp, lr=0.5)
    topt = torch.optim.SGD(tp, lr=0.5)
    ps = optim.swa_utils.SWALR(popt, swa_lr=0.05, anneal_epochs=anneal, anneal_strategy=strategy)
    ts = torch.optim.swa_utils.SWALR(topt, swa_lr=0.05, anneal_epochs=anneal,
                                     anneal_strategy=strategy)
    for _ in range(8):
        assert ps.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        popt.step()
        topt.step()
        ps.step()
        ts.step()
    sd = ps.state_dict()
    assert "optimizer" not in sd and "anneal_func" not in sd
    ps2 = optim.swa_utils.SWALR(popt, swa_lr=0.05)
    ps2.load_state_dict(copy.deepcopy(sd))
    assert ps2.anneal_func(0.5) == ps.anneal_func(0.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        optim.swa_utils.SWALR(popt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        optim.swa_utils.SWALR(popt, swa_lr=0.1, anneal_epochs=-1)
