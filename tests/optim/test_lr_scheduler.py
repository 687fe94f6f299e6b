"""ptcore.optim.lr_scheduler against torch.optim.lr_scheduler: lr sequences."""
import copy
import math
import warnings

import numpy as np
import pytest

import ptcore
from ptcore import optim
from ptcore.optim import lr_scheduler as plrs

try:
    import torch
    from torch.optim import lr_scheduler as tlrs
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

NSTEPS = 50


def _optimizer(lib_optim, lib, name="SGD"):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if name == "SGD":
        return getattr(lib_optim, name)(groups, lr=0.1, momentum=0.9)
    return getattr(lib_optim, name)(groups, lr=0.1)


class _Scale:
    """A callable object (its __dict__ goes into state_dict)."""

    def __init__(self, f):
        self.f = f

    def __call__(self, epoch):
        return self.f ** epoch


# (scheduler name, kwargs builder (given the optimizer and the lib), optimizer name)
SCHEDULERS = [
    ("StepLR", lambda o, L: dict(step_size=7), "SGD"),
    ("StepLR", lambda o, L: dict(step_size=3, gamma=0.5), "SGD"),
    ("MultiStepLR", lambda o, L: dict(milestones=[5, 10, 10, 30]), "SGD"),
    ("MultiStepLR", lambda o, L: dict(milestones=[2, 40], gamma=0.3), "SGD"),
    ("ExponentialLR", lambda o, L: dict(gamma=0.93), "SGD"),
    ("CosineAnnealingLR", lambda o, L: dict(T_max=10), "SGD"),
    ("CosineAnnealingLR", lambda o, L: dict(T_max=17, eta_min=0.001), "SGD"),
    ("CosineAnnealingWarmRestarts", lambda o, L: dict(T_0=5), "SGD"),
    ("CosineAnnealingWarmRestarts", lambda o, L: dict(T_0=3, T_mult=2, eta_min=0.01), "SGD"),
    ("OneCycleLR", lambda o, L: dict(max_lr=1.0, total_steps=60), "SGD"),
    ("OneCycleLR", lambda o, L: dict(max_lr=[0.5, 0.2], epochs=6, steps_per_epoch=10,
                                      anneal_strategy="linear", pct_start=0.4), "SGD"),
    ("OneCycleLR", lambda o, L: dict(max_lr=0.3, total_steps=51, three_phase=True,
                                      div_factor=10.0, final_div_factor=100.0), "Adam"),
    ("OneCycleLR", lambda o, L: dict(max_lr=0.3, total_steps=55, cycle_momentum=False),
     "Adagrad"),
    ("LambdaLR", lambda o, L: dict(lr_lambda=lambda e: 1.0 / (1 + e)), "SGD"),
    ("LambdaLR", lambda o, L: dict(lr_lambda=[lambda e: 0.95 ** e, _Scale(0.9)]), "SGD"),
    ("MultiplicativeLR", lambda o, L: dict(lr_lambda=lambda e: 0.97), "SGD"),
    ("LinearLR", lambda o, L: dict(), "SGD"),
    ("LinearLR", lambda o, L: dict(start_factor=0.1, end_factor=0.9, total_iters=20), "SGD"),
    ("LinearLR", lambda o, L: dict(start_factor=1.0, end_factor=0.0, total_iters=30), "SGD"),
    ("ConstantLR", lambda o, L: dict(), "SGD"),
    ("ConstantLR", lambda o, L: dict(factor=0.5, total_iters=12), "SGD"),
    ("PolynomialLR", lambda o, L: dict(), "SGD"),
    ("PolynomialLR", lambda o, L: dict(total_iters=30, power=2.0), "SGD"),
    ("CyclicLR", lambda o, L: dict(base_lr=0.01, max_lr=0.1, step_size_up=4), "SGD"),
    ("CyclicLR", lambda o, L: dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3,
                                    step_size_down=5, mode="triangular2"), "SGD"),
    ("CyclicLR", lambda o, L: dict(base_lr=0.01, max_lr=0.1, step_size_up=5,
                                    mode="exp_range", gamma=0.97), "Adam"),
    ("CyclicLR", lambda o, L: dict(base_lr=0.01, max_lr=0.1, step_size_up=6,
                                    cycle_momentum=False), "Adagrad"),
    ("SequentialLR", lambda o, L: dict(schedulers=[
        L.LinearLR(o, start_factor=0.1, total_iters=5),
        L.CosineAnnealingLR(o, T_max=20)], milestones=[5]), "SGD"),
    ("SequentialLR", lambda o, L: dict(schedulers=[
        L.ConstantLR(o, factor=0.5, total_iters=4),
        L.ExponentialLR(o, gamma=0.9),
        L.StepLR(o, step_size=4)], milestones=[10, 25]), "SGD"),
    ("ChainedScheduler", lambda o, L: dict(schedulers=[
        L.ConstantLR(o, factor=0.2, total_iters=6),
        L.ExponentialLR(o, gamma=0.95)]), "SGD"),
    ("ChainedScheduler", lambda o, L: dict(schedulers=[
        L.LinearLR(o, start_factor=0.5, total_iters=10),
        L.MultiStepLR(o, milestones=[15, 30])]), "SGD"),
]


def _make_sched(lib_lrs, opt, name, kwargs):
    if name == "ChainedScheduler":
        return lib_lrs.ChainedScheduler(**kwargs)
    return getattr(lib_lrs, name)(opt, **kwargs)


def _ids(c):
    return f"{c[0]}-{SCHEDULERS.index(c)}"


def _groups_state(opt):
    out = []
    for g in opt.param_groups:
        out.append((g["lr"], g.get("momentum"), g.get("betas")))
    return out


def _assert_lrs_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == pytest.approx(y, rel=1e-12, abs=1e-15)


def _build(config):
    name, kw, opt_name = config
    popt = _optimizer(optim, ptcore, opt_name)
    topt = _optimizer(torch.optim, torch, opt_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ps = _make_sched(plrs, popt, name, kw(popt, plrs))
        ts = _make_sched(tlrs, topt, name, kw(topt, tlrs))
    return popt, topt, ps, ts


@needs_torch
@pytest.mark.parametrize("config", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_lr_sequence_matches_torch(config):
    popt, topt, ps, ts = _build(config)
    for k in range(NSTEPS):
        _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())
        for (plr, pm, pb), (tlr, tm, tb) in zip(_groups_state(popt), _groups_state(topt)):
            assert plr == pytest.approx(tlr, rel=1e-12, abs=1e-15), k
            if tm is None:
                assert pm is None, k
            else:
                assert pm == pytest.approx(tm, rel=1e-12), k
            if tb is not None:
                assert pb[0] == pytest.approx(tb[0], rel=1e-12) and pb[1] == tb[1], k
        popt.step()
        topt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ps.step()
            ts.step()
    _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())
    assert getattr(ps, "last_epoch", None) == getattr(ts, "last_epoch", None)


def _sd_keys(sd):
    return sorted(k for k in sd.keys())


@needs_torch
@pytest.mark.parametrize("config", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_state_dict_round_trip(config):
    name = config[0]
    popt, topt, ps, ts = _build(config)
    for _ in range(20):
        popt.step()
        ps.step()
    assert _sd_keys(ps.state_dict()) == _sd_keys(ts.state_dict())
    psd = copy.deepcopy(ps.state_dict())
    osd = copy.deepcopy(popt.state_dict())

    # a new optimizer and scheduler restored from the state dicts continue identically
    popt2, _, ps2, _ = _build(config)
    popt2.load_state_dict(osd)
    ps2.load_state_dict(psd)
    for _ in range(20):
        popt.step()
        popt2.step()
        ps.step()
        ps2.step()
        assert ps.get_last_lr() == ps2.get_last_lr()
        assert [g["lr"] for g in popt.param_groups] == [g["lr"] for g in popt2.param_groups]


REDUCE_CONFIGS = [
    dict(),
    dict(mode="max", factor=0.5, patience=2),
    dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=2),
    dict(mode="max", threshold_mode="abs", patience=0, min_lr=[0.02, 0.001]),
    dict(patience=1, min_lr=0.03, eps=1e-3, factor=0.7),
]


@needs_torch
@pytest.mark.parametrize("kwargs", REDUCE_CONFIGS, ids=[str(c) for c in REDUCE_CONFIGS])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    popt = _optimizer(optim, ptcore)
    topt = _optimizer(torch.optim, torch)
    ps = plrs.ReduceLROnPlateau(popt, **kwargs)
    ts = tlrs.ReduceLROnPlateau(topt, **kwargs)
    rng = np.random.default_rng(0)
    metrics = np.concatenate([np.linspace(1.0, 0.5, 10), 0.5 + 0.01 * rng.random(20),
                              np.linspace(0.5, 0.8, 10), 0.8 - 0.001 * np.arange(20)])
    for k, m in enumerate(metrics):
        popt.step()
        topt.step()
        ps.step(float(m))
        ts.step(float(m))
        _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())
        assert ps.num_bad_epochs == ts.num_bad_epochs, k
        assert ps.cooldown_counter == ts.cooldown_counter, k
        assert ps.best == ts.best, k
    # metric given as a tensor
    ps.step(ptcore.tensor(0.1))
    ts.step(torch.tensor(0.1))
    _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())
    assert _sd_keys(ps.state_dict()) == _sd_keys(ts.state_dict())
    ps2 = plrs.ReduceLROnPlateau(popt)
    ps2.load_state_dict(copy.deepcopy(ps.state_dict()))
    assert ps2.best == ps.best and ps2.mode == ps.mode and ps2.patience == ps.patience


@needs_torch
@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs(T_mult):
    popt = _optimizer(optim, ptcore)
    topt = _optimizer(torch.optim, torch)
    ps = plrs.CosineAnnealingWarmRestarts(popt, T_0=4, T_mult=T_mult, eta_min=0.001)
    ts = tlrs.CosineAnnealingWarmRestarts(topt, T_0=4, T_mult=T_mult, eta_min=0.001)
    iters = 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in range(12):
            for i in range(iters):
                popt.step()
                topt.step()
                ps.step(epoch + i / iters)
                ts.step(epoch + i / iters)
                _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())
                assert ps.T_cur == pytest.approx(ts.T_cur, rel=1e-12, abs=1e-15)
                assert ps.T_i == ts.T_i
                assert getattr(ps, "last_epoch", None) == getattr(ts, "last_epoch", None)


@needs_torch
@pytest.mark.parametrize("name,kw", [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5])),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("LinearLR", dict(start_factor=0.2, total_iters=6)),
    ("ConstantLR", dict(factor=0.5, total_iters=3)),
    ("PolynomialLR", dict(total_iters=8, power=1.5)),
])
def test_closed_form_with_epoch(name, kw):
    popt = _optimizer(optim, ptcore)
    topt = _optimizer(torch.optim, torch)
    ps = getattr(plrs, name)(popt, **kw)
    ts = getattr(tlrs, name)(topt, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [1, 2, 5, 3, 9, 0, 12]:
            popt.step()
            topt.step()
            ps.step(epoch)
            ts.step(epoch)
            _assert_lrs_equal(ps.get_last_lr(), ts.get_last_lr())


@needs_torch
def test_last_epoch_resume_and_initial_lr():
    popt = _optimizer(optim, ptcore)
    with pytest.raises(KeyError, match="initial_lr"):
        plrs.StepLR(popt, step_size=2, last_epoch=3)
    s = plrs.StepLR(popt, step_size=2)
    assert [g["initial_lr"] for g in popt.param_groups] == [0.1, 0.05]
    assert s.base_lrs == [0.1, 0.05]
    assert s.last_epoch == 0
    topt = _optimizer(torch.optim, torch)
    tlrs.StepLR(topt, step_size=2)
    for _ in range(5):
        popt.step()
        topt.step()
    p2 = plrs.StepLR(popt, step_size=2, last_epoch=4)
    t2 = tlrs.StepLR(topt, step_size=2, last_epoch=4)
    for _ in range(6):
        popt.step()
        topt.step()
        p2.step()
        t2.step()
        _assert_lrs_equal(p2.get_last_lr(), t2.get_last_lr())


def test_warnings_and_errors():
    popt = _optimizer(optim, ptcore)
    s = plrs.ExponentialLR(popt, gamma=0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        plrs.StepLR(object(), step_size=1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        plrs.ReduceLROnPlateau(popt, factor=1.5)
    with pytest.raises(ValueError, match="mode bogus is unknown"):
        plrs.ReduceLROnPlateau(popt, mode="bogus")
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        plrs.CosineAnnealingWarmRestarts(popt, T_0=0)
    with pytest.raises(ValueError, match="You must define either total_steps"):
        plrs.OneCycleLR(popt, max_lr=0.1)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        plrs.LambdaLR(popt, lr_lambda=[lambda e: 1.0])
    with pytest.raises(ValueError, match="Sequential Schedulers expects number"):
        plrs.SequentialLR(popt, [plrs.ExponentialLR(popt, 0.9)], milestones=[3])
    o = plrs.OneCycleLR(popt, max_lr=0.1, total_steps=2)
    popt.step()
    o.step()
    popt.step()
    o.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        o.step()


def test_tensor_lr_is_updated_in_place():
    p = ptcore.zeros(2, requires_grad=True)
    lr = ptcore.tensor(0.1, dtype=ptcore.float64)
    opt = optim.SGD([p], lr=lr)
    s = plrs.ExponentialLR(opt, gamma=0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr
    assert math.isclose(lr.item(), 0.05)
    assert math.isclose(float(s.get_last_lr()[0]), 0.05)
