"""ptcore.optim.Rprop and ptcore.optim.ASGD against torch.optim."""
import copy

import numpy as np
import pytest

import ptcore
from ptcore import optim
from ptcore.optim.asgd import asgd as pt_asgd
from ptcore.optim.rprop import rprop as pt_rprop

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

from optim_oracle import (  # noqa: E402
    NSTEPS, PT_DTYPES, TOL, Side as _Side, assert_close_params as _assert_close_params,
    close as _close, config_id as _ids, dtype_name as _dtype_name, make as _make,
    run as _run, skip_some as _skip_some, torch_sd_to_ptcore as _torch_sd_to_ptcore,
)


def _assert_state_dict_equal(psd, tsd, dtype):
    from optim_oracle import assert_state_dict_equal
    assert_state_dict_equal(psd, tsd, dtype, ordered=True)

# (name, options, group override) -- the override applies to the second group
CONFIGS = [
    ("Rprop", dict(), None),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)), None),
    ("Rprop", dict(lr=0.1, etas=(0.7, 1.1), step_sizes=(0.01, 1.0), maximize=True), None),
    ("Rprop", dict(lr=0.02), dict(lr=0.2, etas=(0.25, 1.3), step_sizes=(0.05, 0.3))),
    ("ASGD", dict(), None),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=5), None),
    ("ASGD", dict(lr=0.05, weight_decay=0.1, t0=3, lambd=0.01), None),
    ("ASGD", dict(lr=0.05, maximize=True, t0=8, weight_decay=0.05), None),
    ("ASGD", dict(lr=0.02, t0=4), dict(lr=0.1, lambd=0.01, alpha=0.9, t0=10.0)),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_trajectory_matches_torch(config, dtype):
    name, opts, override = config
    ps, ts, popt, topt = _make(name, opts, override, dtype)
    sign = -1.0 if opts.get("maximize", False) else 1.0
    for k in range(NSTEPS):
        ps.set_grads(k, sign=sign, skip=_skip_some)
        ts.set_grads(k, sign=sign, skip=_skip_some)
        popt.step()
        topt.step()
        _assert_close_params(ps.params, ts.params, dtype, msg=f"step {k}")
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)


@needs_torch
@pytest.mark.parametrize("name,keys", [
    ("Rprop", ["step", "prev", "step_size"]),
    ("ASGD", ["step", "eta", "mu", "ax"]),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_state_keys_dtypes_shapes(name, keys, dtype):
    p = ptcore.zeros((2, 3), dtype=PT_DTYPES[dtype], requires_grad=True)
    o = getattr(optim, name)([p], lr=0.03)
    assert len(o.state) == 0
    p.grad = ptcore.ones((2, 3), dtype=PT_DTYPES[dtype])
    o.step()
    st = o.state[p]
    assert list(st.keys()) == keys
    assert st["step"].dtype == ptcore.float32 and st["step"].shape == ()
    assert st["step"].item() == 1.0
    for k in keys[1:]:
        if k in ("eta", "mu"):
            assert st[k].dtype == ptcore.float32 and st[k].shape == ()
        else:
            assert st[k].dtype == PT_DTYPES[dtype] and st[k].shape == (2, 3)
    if name == "Rprop":
        # first step: prev was 0, so the step size stays lr
        np.testing.assert_allclose(st["step_size"].numpy(), 0.03, rtol=1e-6)
        np.testing.assert_array_equal(st["prev"].numpy(), 1.0)
        np.testing.assert_allclose(p.detach().numpy(), -0.03, rtol=1e-6)
    else:
        np.testing.assert_allclose(st["ax"].numpy(), p.detach().numpy())
        assert st["mu"].item() == 1.0


@needs_torch
@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_default_dtype_float64_state_dtype(name):
    old_p, old_t = ptcore.get_default_dtype(), torch.get_default_dtype()
    ptcore.set_default_dtype(ptcore.float64)
    torch.set_default_dtype(torch.float64)
    try:
        ps, ts, popt, topt = _make(name, dict(lr=0.05, **({"t0": 1} if name == "ASGD" else {})),
                                   None, "float64")
        _run(ps, popt, 4, 0, {})
        _run(ts, topt, 4, 0, {})
        _assert_close_params(ps.params, ts.params, "float64")
        _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), "float64")
        assert popt.state[ps.params[0]]["step"].dtype == ptcore.float64
    finally:
        ptcore.set_default_dtype(old_p)
        torch.set_default_dtype(old_t)


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_state_dict_round_trip(config):
    name, opts, override = config
    dtype = "float64"
    ps, _, popt, _ = _make(name, opts, override, dtype)
    _run(ps, popt, 10, 0, opts)
    sd = copy.deepcopy(popt.state_dict())

    # a fresh optimizer on a copy of the parameters continues identically
    ps2 = _Side(ptcore, dtype)
    with ptcore.no_grad():
        for a, b in zip(ps2.params, ps.params):
            a.copy_(b)
    popt2 = getattr(optim, name)(ps2.groups(override), **opts)
    popt2.load_state_dict(sd)
    _run(ps, popt, 10, 10, opts)
    _run(ps2, popt2, 10, 10, opts)
    for a, b in zip(ps.params, ps2.params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_load_torch_state_dict(config):
    name, opts, override = config
    dtype = "float64"
    ps, ts, popt, topt = _make(name, opts, override, dtype)
    _run(ts, topt, 10, 0, opts)
    with ptcore.no_grad():
        for a, b in zip(ps.params, ts.params):
            a.copy_(ptcore.from_numpy(b.detach().numpy().copy()))
    popt.load_state_dict(_torch_sd_to_ptcore(topt.state_dict()))
    topt.load_state_dict(copy.deepcopy(topt.state_dict()))
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)
    _run(ts, topt, 10, 10, opts)
    _run(ps, popt, 10, 10, opts)
    _assert_close_params(ps.params, ts.params, dtype)
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)


@needs_torch
@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_setstate_converts_python_number_state(name):
    # old state dicts stored the step (and ASGD's eta and mu) as Python numbers
    p = ptcore.zeros(3, requires_grad=True)
    t = torch.zeros(3, requires_grad=True)
    popt = getattr(optim, name)([p], lr=0.05)
    topt = getattr(torch.optim, name)([t], lr=0.05)
    for lib, x, o in ((ptcore, p, popt), (torch, t, topt)):
        x.grad = lib.tensor([1.0, -2.0, 3.0])
        o.step()
    tsd = topt.state_dict()
    tsd["state"][0]["step"] = 1
    if name == "ASGD":
        tsd["state"][0]["eta"] = tsd["state"][0]["eta"].item()
        tsd["state"][0]["mu"] = 1.0
    psd = _torch_sd_to_ptcore(tsd)
    topt.load_state_dict(tsd)
    popt.load_state_dict(psd)
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), "float32")


@needs_torch
@pytest.mark.parametrize("name,opts", [
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.4), step_sizes=(1e-3, 0.1), maximize=True)),
    ("ASGD", dict(lr=0.05, t0=2)),
    ("ASGD", dict(lr=0.05, t0=1, weight_decay=0.1, lambd=0.01, maximize=True)),
])
@pytest.mark.parametrize("cdtype", ["complex64", "complex128"])
def test_complex_params_match_torch(name, opts, cdtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(cdtype)
    c = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(cdtype)
    p = ptcore.tensor(x.copy(), requires_grad=True)
    t = torch.tensor(x.copy(), requires_grad=True)
    pc, tc = ptcore.tensor(c), torch.tensor(c)
    popt = getattr(optim, name)([p], **opts)
    topt = getattr(torch.optim, name)([t], **opts)
    sign = -1.0 if opts.get("maximize") else 1.0
    tol = TOL["float32" if cdtype == "complex64" else "float64"]
    for _ in range(NSTEPS):
        p.grad = (p.detach() - pc) * (2.0 * sign)
        t.grad = (t.detach() - tc) * (2.0 * sign)
        popt.step()
        topt.step()
        _close(p.detach().numpy(), t.detach().numpy(), **tol)
    psd, tsd = popt.state_dict(), topt.state_dict()
    for k, tv in tsd["state"][0].items():
        pv = psd["state"][0][k]
        assert _dtype_name(pv.dtype) == _dtype_name(tv.dtype), k
        _close(pv.numpy(), tv.numpy(), err_msg=k, **tol)


@needs_torch
@pytest.mark.parametrize("name,opts", [
    ("Rprop", dict(etas=(0.4, 1.3))),
    ("ASGD", dict(t0=3, lambd=0.01)),
])
def test_tensor_lr_matches_torch(name, opts):
    ps, ts = _Side(ptcore, "float32"), _Side(torch, "float32")
    popt = getattr(optim, name)(ps.params, lr=ptcore.tensor(0.03), **opts)
    topt = getattr(torch.optim, name)(ts.params, lr=torch.tensor(0.03), **opts)
    _run(ps, popt, 8, 0, {})
    _run(ts, topt, 8, 0, {})
    _assert_close_params(ps.params, ts.params, "float32")


@needs_torch
def test_functional_rprop_matches_torch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal(7)
    prev = rng.standard_normal(7) * (rng.random(7) > 0.3)
    sizes = rng.random(7) * 0.1
    g = rng.standard_normal(7)
    g[0] = 0.0
    p_args = [[ptcore.tensor(a.copy())] for a in (x, g, prev, sizes)] + [[ptcore.tensor(3.0)]]
    t_args = [[torch.tensor(a.copy())] for a in (x, g, prev, sizes)] + [[torch.tensor(3.0)]]
    kw = dict(step_size_min=0.01, step_size_max=0.08, etaminus=0.4, etaplus=1.3,
              maximize=True)
    pt_rprop(*p_args, **kw)
    import torch.optim.rprop as trprop
    trprop.rprop(*t_args, foreach=False, **kw)
    for pa, ta in zip(p_args, t_args):
        np.testing.assert_allclose(pa[0].numpy(), ta[0].numpy(), rtol=1e-14, atol=0)
    with pytest.raises(RuntimeError, match="state_steps` argument must contain a list"):
        pt_rprop(*p_args[:4], [3.0], **kw)


@needs_torch
def test_functional_asgd_matches_torch():
    rng = np.random.default_rng(6)
    x, g, ax = rng.standard_normal((3, 5))
    p_args = ([ptcore.tensor(x.copy())], [ptcore.tensor(g.copy())], [ptcore.tensor(ax.copy())],
              [ptcore.tensor(0.5)], [ptcore.tensor(0.02)], [ptcore.tensor(6.0)])
    t_args = ([torch.tensor(x.copy())], [torch.tensor(g.copy())], [torch.tensor(ax.copy())],
              [torch.tensor(0.5)], [torch.tensor(0.02)], [torch.tensor(6.0)])
    kw = dict(lambd=0.01, lr=0.05, t0=2.0, alpha=0.6, weight_decay=0.1)
    pt_asgd(*p_args, **kw)
    import torch.optim.asgd as tasgd
    tasgd.asgd(*t_args, foreach=False, **kw)
    for pa, ta in zip(p_args, t_args):
        assert _dtype_name(pa[0].dtype) == _dtype_name(ta[0].dtype)
        np.testing.assert_allclose(pa[0].numpy(), ta[0].numpy(), rtol=1e-14, atol=0)


@needs_torch
@pytest.mark.parametrize("name,kwargs,msg", [
    ("Rprop", dict(lr=-1), "Invalid learning rate: -1"),
    ("Rprop", dict(etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
    ("Rprop", dict(etas=(0.0, 1.2)), "Invalid eta values: 0.0, 1.2"),
    ("Rprop", dict(etas=(0.5, 1.0)), "Invalid eta values: 0.5, 1.0"),
    ("ASGD", dict(lr=-0.5), "Invalid learning rate: -0.5"),
    ("ASGD", dict(weight_decay=-1e-3), "Invalid weight_decay value: -0.001"),
])
def test_invalid_arguments(name, kwargs, msg):
    with pytest.raises(ValueError) as te:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as pe:
        getattr(optim, name)([ptcore.zeros(2, requires_grad=True)], **kwargs)
    assert str(pe.value) == str(te.value) == msg


@needs_torch
@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_tensor_lr_must_be_one_element(name):
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(optim, name)([ptcore.zeros(2, requires_grad=True)], lr=ptcore.ones(2))
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=torch.ones(2))


@needs_torch
def test_rprop_options_are_keyword_only():
    with pytest.raises(TypeError):
        torch.optim.Rprop([torch.zeros(2, requires_grad=True)], 0.1, (0.5, 1.2), (1e-6, 50),
                          False)
    with pytest.raises(TypeError):
        optim.Rprop([ptcore.zeros(2, requires_grad=True)], 0.1, (0.5, 1.2), (1e-6, 50), False)


@needs_torch
@pytest.mark.parametrize("name,opts", [
    ("Rprop", {}), ("ASGD", {}),
    ("Rprop", dict(lr=0.1, etas=(0.4, 1.5), maximize=True)),
    ("ASGD", dict(lr=0.1, t0=5, weight_decay=0.01, capturable=False, foreach=False)),
])
def test_repr_and_defaults_match_torch(name, opts):
    popt = getattr(optim, name)([ptcore.zeros(2, requires_grad=True)], **opts)
    topt = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **opts)
    assert repr(popt) == repr(topt)
    assert popt.defaults == topt.defaults
    assert list(popt.defaults) == list(topt.defaults)
    assert list(popt.param_groups[0]) == list(topt.param_groups[0])


def test_exported():
    assert "Rprop" in optim.__all__ and "ASGD" in optim.__all__
    assert optim.Rprop.__module__ == "ptcore.optim.rprop"
    assert optim.ASGD.__module__ == "ptcore.optim.asgd"


def test_step_without_grad_and_closure():
    a = ptcore.tensor([1.0, 2.0], requires_grad=True)
    b = ptcore.tensor([3.0], requires_grad=True)
    for cls in (optim.Rprop, optim.ASGD):
        o = cls([a, b], lr=0.1)

        def closure():
            a.grad = ptcore.ones(2)
            return ptcore.tensor(7.0)

        loss = o.step(closure)
        assert loss.item() == 7.0
        assert b not in o.state  # b had no gradient
        np.testing.assert_allclose(b.detach().numpy(), [3.0])
        a.grad = None
