"""ptcore.optim against torch.optim: trajectories, state dicts, errors."""
import copy

import numpy as np
import pytest

import ptcore
from ptcore import optim

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

from optim_oracle import (  # noqa: E402
    NSTEPS, TOL, Side as _Side, assert_close_params as _assert_close_params,
    assert_state_dict_equal as _assert_state_dict_equal, close as _close, config_id as _ids,
    make as _make, run as _run_o, skip_some as _skip_some,
    torch_sd_to_ptcore as _torch_sd_to_ptcore,
)


def _run(side, opt, steps, start, opts, override=None, skip=_skip_some):
    _run_o(side, opt, steps, start, opts, skip)


def _to_np(t):
    return t.detach().numpy()

# (name, options, group override) -- the override applies to the second group
CONFIGS = [
    ("SGD", dict(lr=0.1), None),
    ("SGD", dict(lr=0.05, momentum=0.9), None),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01), None),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True), None),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.1, maximize=True), None),
    ("SGD", dict(lr=0.05, momentum=0.9), dict(lr=0.01, momentum=0.0)),
    ("Adam", dict(lr=0.05), None),
    ("Adam", dict(lr=0.05, amsgrad=True), None),
    ("Adam", dict(lr=0.05, weight_decay=0.1, betas=(0.8, 0.99)), None),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("Adam", dict(lr=0.05, maximize=True, amsgrad=True), None),
    ("Adam", dict(lr=0.05), dict(lr=0.01, amsgrad=True, weight_decay=0.05)),
    ("AdamW", dict(lr=0.05), None),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.2), None),
    ("AdamW", dict(lr=0.05, maximize=True), dict(lr=0.02, weight_decay=0.0)),
    ("RMSprop", dict(lr=0.01), None),
    ("RMSprop", dict(lr=0.01, centered=True), None),
    ("RMSprop", dict(lr=0.01, momentum=0.9), None),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, alpha=0.9),
     None),
    ("RMSprop", dict(lr=0.01, maximize=True), dict(centered=True, momentum=0.3)),
    ("Adagrad", dict(lr=0.1), None),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.5), None),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, eps=1e-6, maximize=True), None),
    ("Adagrad", dict(lr=0.1), dict(lr=0.3, lr_decay=0.1)),
    ("Adadelta", dict(), None),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1), None),
    ("Adadelta", dict(maximize=True), dict(lr=2.0, eps=1e-4)),
    ("Adamax", dict(lr=0.05), None),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, betas=(0.8, 0.99)), None),
    ("Adamax", dict(lr=0.05, maximize=True), dict(lr=0.01)),
    ("NAdam", dict(lr=0.05), None),
    ("NAdam", dict(lr=0.05, weight_decay=0.1), None),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("NAdam", dict(lr=0.05, momentum_decay=0.01, maximize=True), dict(lr=0.01)),
    ("RAdam", dict(lr=0.05), None),
    ("RAdam", dict(lr=0.05, weight_decay=0.1), None),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("RAdam", dict(lr=0.05, maximize=True, betas=(0.9, 0.9)), dict(lr=0.01)),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_trajectory_matches_torch(config, dtype):
    name, opts, override = config
    ps, ts, popt, topt = _make(name, opts, override, dtype)
    maximize = opts.get("maximize", False)
    for k in range(NSTEPS):
        ps.set_grads(k, sign=-1.0 if maximize else 1.0, skip=_skip_some)
        ts.set_grads(k, sign=-1.0 if maximize else 1.0, skip=_skip_some)
        popt.step()
        topt.step()
        _assert_close_params(ps.params, ts.params, dtype, msg=f"step {k}")
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)


@needs_torch
@pytest.mark.parametrize("config", CONFIGS[::3], ids=[_ids(c) for c in CONFIGS[::3]])
def test_state_dict_round_trip(config):
    name, opts, override = config
    dtype = "float64"
    ps, _, popt, _ = _make(name, opts, override, dtype)
    _run(ps, popt, 10, 0, opts, override)
    sd = copy.deepcopy(popt.state_dict())

    # a fresh optimizer on a copy of the parameters continues identically
    ps2 = _Side(ptcore, dtype)
    with ptcore.no_grad():
        for a, b in zip(ps2.params, ps.params):
            a.copy_(b)
    popt2 = getattr(optim, name)(ps2.groups(override), **opts)
    popt2.load_state_dict(sd)
    _run(ps, popt, 10, 10, opts, override)
    _run(ps2, popt2, 10, 10, opts, override)
    # (not bitwise: as in torch, loading casts NAdam's float32 mu_product to the
    # parameter dtype)
    for a, b in zip(ps.params, ps2.params):
        _close(a.detach().numpy(), b.detach().numpy(), rtol=1e-11, atol=0.0)


@needs_torch
@pytest.mark.parametrize("config", CONFIGS[1::3], ids=[_ids(c) for c in CONFIGS[1::3]])
def test_load_torch_state_dict(config):
    name, opts, override = config
    dtype = "float64"
    ps, ts, popt, topt = _make(name, opts, override, dtype)
    _run(ts, topt, 10, 0, opts, override)
    with ptcore.no_grad():
        for a, b in zip(ps.params, ts.params):
            a.copy_(ptcore.from_numpy(b.detach().numpy().copy()))
    popt.load_state_dict(_torch_sd_to_ptcore(topt.state_dict()))
    # loading casts state (e.g. NAdam's mu_product) to the parameter dtype: do the
    # same on the torch side
    topt.load_state_dict(copy.deepcopy(topt.state_dict()))
    _run(ts, topt, 10, 10, opts, override)
    _run(ps, popt, 10, 10, opts, override)
    _assert_close_params(ps.params, ts.params, dtype)
    _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), dtype)


@needs_torch
@pytest.mark.parametrize("name,opts", [("Adam", {}), ("NAdam", {}), ("Adagrad", {}),
                                       ("RMSprop", {}), ("Adam", {"fused": True}),
                                       ("AdamW", {"fused": True}), ("Adagrad", {"fused": True})])
def test_default_dtype_float64_step_dtype(name, opts):
    """The step is float64 under a float64 default dtype, float32 for the fused
    implementations (torch's _get_scalar_dtype(is_fused))."""
    old_p, old_t = ptcore.get_default_dtype(), torch.get_default_dtype()
    ptcore.set_default_dtype(ptcore.float64)
    torch.set_default_dtype(torch.float64)
    try:
        ps, ts, popt, topt = _make(name, opts, None, "float64")
        _run(ps, popt, 3, 0, {}, None)
        _run(ts, topt, 3, 0, {}, None)
        _assert_state_dict_equal(popt.state_dict(), topt.state_dict(), "float64")
    finally:
        ptcore.set_default_dtype(old_p)
        torch.set_default_dtype(old_t)


@needs_torch
@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop", "Adagrad", "NAdam", "RAdam",
                                  "Adamax", "Adadelta", "AdamW"])
def test_complex_params_match_torch(name):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex128)
    p = ptcore.tensor(x.copy(), requires_grad=True)
    t = torch.tensor(x.copy(), requires_grad=True)
    opts = {"lr": 0.05} if name != "Adadelta" else {}
    if name == "SGD":
        opts["momentum"] = 0.9
    popt = getattr(optim, name)([p], **opts)
    topt = getattr(torch.optim, name)([t], **opts)
    for _ in range(5):
        p.grad = p.detach() * 2.0
        t.grad = t.detach() * 2.0
        popt.step()
        topt.step()
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-10)


# -- LBFGS -------------------------------------------------------------------

def _lbfgs_closure(lib, params, cs, ws):
    def closure():
        loss = 0.0
        for p, c, w in zip(params, cs, ws):
            x = p.detach()
            d = x - c
            loss = loss + float(((d * d * w) * 0.5 + x * x * x * x * 0.025).sum())
            p.grad = d * w + x * x * x * 0.1
        return lib.tensor(loss)
    return closure


LBFGS_CONFIGS = [
    dict(),
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", max_iter=4, history_size=2),
    dict(lr=0.8, max_iter=3, max_eval=5, tolerance_change=1e-5),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opts", LBFGS_CONFIGS, ids=[str(o) for o in LBFGS_CONFIGS])
def test_lbfgs_matches_torch(opts, dtype):
    if dtype == "float32":
        # float32 dot products over thousands of elements are summed in another
        # order than torch's; after ~10 inner iterations the strong-Wolfe cubic
        # interpolation amplifies that beyond 1e-4: compare fewer iterations
        opts = dict(opts, max_iter=min(opts.get("max_iter", 20), 10))
    ps = _Side(ptcore, dtype)
    ts = _Side(torch, dtype)
    popt = optim.LBFGS(ps.params, **opts)
    topt = torch.optim.LBFGS(ts.params, **opts)
    pcl = _lbfgs_closure(ptcore, ps.params, ps.cs, ps.ws)
    tcl = _lbfgs_closure(torch, ts.params, ts.cs, ts.ws)
    tol = TOL[dtype] if dtype == "float64" else dict(rtol=1e-4, atol=1e-5)
    for _ in range(3 if dtype == "float64" else 1):
        lp = popt.step(pcl)
        lt = topt.step(tcl)
        _close(float(lp), float(lt), **tol)
        for a, b in zip(ps.params, ts.params):
            _close(_to_np(a), _to_np(b), **tol)
    pst = popt.state[ps.params[0]]
    tst = topt.state[ts.params[0]]
    if dtype == "float64":
        # (in float32 a stopping test may tip differently on rounding)
        assert pst["func_evals"] == tst["func_evals"]
        assert pst["n_iter"] == tst["n_iter"]
        assert len(pst["old_dirs"]) == len(tst["old_dirs"])


def test_lbfgs_rejects_groups_and_bad_line_search():
    a = ptcore.zeros(2, requires_grad=True)
    b = ptcore.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    o = optim.LBFGS([a], line_search_fn="bogus")

    def closure():
        a.grad = ptcore.ones(2)
        return ptcore.tensor(1.0)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        o.step(closure)


@needs_torch
@pytest.mark.parametrize("make", [lambda lib: lib.randn(2, 3, 4, 5).contiguous(
    memory_format=lib.channels_last), lambda lib: lib.randn(3, 2).t()])
def test_lbfgs_refuses_a_gradient_that_is_not_contiguous(make):
    """torch's LBFGS flattens each gradient with view(-1): a channels_last or
    transposed parameter's gradient raises RuntimeError, as there."""
    for lib in (torch, ptcore):
        w = make(lib).requires_grad_()
        o = lib.optim.LBFGS([w])

        def closure():
            o.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            o.step(closure)


# -- API behaviour -------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name,kwargs,msg", [
    ("SGD", dict(lr=-1), "Invalid learning rate: -1"),
    ("SGD", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
    ("SGD", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    ("SGD", dict(nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("Adam", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adam", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("AdamW", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("RMSprop", dict(alpha=-0.1), "Invalid alpha value: -0.1"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-1),
     "Invalid initial_accumulator_value value: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("RAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("Adamax", dict(lr=-2), "Invalid learning rate: -2"),
    ("LBFGS", dict(lr=-2), "Invalid learning rate: -2"),
])
def test_invalid_arguments(name, kwargs, msg):
    with pytest.raises(ValueError) as te:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as pe:
        getattr(optim, name)([ptcore.zeros(2, requires_grad=True)], **kwargs)
    assert str(pe.value) == str(te.value) == msg


def test_params_type_errors():
    p = ptcore.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        optim.SGD(5, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([p, 3.0], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([p], lr=0.1).add_param_group([ptcore.zeros(1, requires_grad=True)])


def test_add_param_group_and_duplicates():
    a = ptcore.zeros(2, requires_grad=True)
    b = ptcore.zeros(3, requires_grad=True)
    o = optim.SGD([a], lr=0.1, momentum=0.9)
    o.add_param_group({"params": b, "lr": 0.5})
    assert len(o.param_groups) == 2
    assert o.param_groups[1]["params"] == [b]
    assert o.param_groups[1]["lr"] == 0.5
    assert o.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        o.add_param_group({"params": [a]})
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([b, b], lr=0.1)


def test_named_parameters():
    a = ptcore.zeros(2, requires_grad=True)
    b = ptcore.zeros(3, requires_grad=True)
    o = optim.Adam([("w", a), ("b", b)])
    assert o.param_groups[0]["param_names"] == ["w", "b"]
    assert o.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="with/without names"):
        o.add_param_group({"params": [ptcore.zeros(1, requires_grad=True)]})


def test_zero_grad():
    a = ptcore.zeros(2, requires_grad=True)
    o = optim.SGD([a], lr=0.1)
    a.grad = ptcore.ones(2)
    g = a.grad
    o.zero_grad(set_to_none=False)
    assert a.grad is not None
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    o.zero_grad()
    assert a.grad is None


@needs_torch
def test_load_state_dict_errors():
    a = ptcore.zeros(2, requires_grad=True)
    b = ptcore.zeros(2, requires_grad=True)
    o1 = optim.Adam([a, b])
    o2 = optim.Adam([a])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        o2.load_state_dict(o1.state_dict())
    o3 = optim.Adam([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        o1.load_state_dict(o3.state_dict())


@needs_torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "LBFGS"])
def test_repr_and_defaults_match_torch(name):
    popt = getattr(optim, name)([ptcore.zeros(2, requires_grad=True)])
    topt = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert repr(popt) == repr(topt)
    assert popt.defaults == topt.defaults


def test_step_hooks_and_closure():
    a = ptcore.tensor([1.0, 2.0], requires_grad=True)
    o = optim.SGD([a], lr=0.5)
    calls = []
    h1 = o.register_step_pre_hook(lambda opt, args, kwargs: calls.append("pre"))
    h2 = o.register_step_post_hook(lambda opt, args, kwargs: calls.append("post"))

    def closure():
        a.grad = ptcore.ones(2)
        return 3.0
    assert o.step(closure) == 3.0
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(a.detach().numpy(), [0.5, 1.5])
    h1.remove()
    h2.remove()
    o.step(closure)
    assert calls == ["pre", "post"]
    handle = optim.register_optimizer_step_pre_hook(lambda *args: calls.append("g"))
    try:
        o.step(closure)
    finally:
        handle.remove()
    assert calls == ["pre", "post", "g"]


def test_step_runs_without_grad_and_in_place():
    a = ptcore.tensor([1.0, 2.0], requires_grad=True)
    o = optim.Adam([a], lr=0.1)
    a.grad = ptcore.ones(2)
    before = a
    o.step()
    assert a is before and a.is_leaf and a.requires_grad
    assert ptcore.is_grad_enabled()


@pytest.mark.parametrize("opts", [
    dict(lr=0.05), dict(lr=0.05, amsgrad=True, weight_decay=0.1),
    dict(lr=0.05, maximize=True), dict(lr=0.02, betas=(0.3, 0.9)),   # lerp weight > 0.5
])
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_fused_kernel_matches_composed_update(opts, cls, dtype, monkeypatch):
    """The single-pass CPU kernel and the composition of elementwise ops
    give the same trajectory (the kernel is the default path)."""
    import ptcore.optim.adam as adam_mod
    rng = np.random.default_rng(7)
    init = rng.standard_normal((5, 7)).astype(dtype)
    grads = [rng.standard_normal((5, 7)).astype(dtype) for _ in range(15)]
    taken = []
    real = adam_mod._fusable

    def spy(*a):
        taken.append(real(*a))
        return taken[-1]
    monkeypatch.setattr(adam_mod, "_fusable", spy)

    def run():
        p = ptcore.nn.Parameter(ptcore.from_numpy(init.copy()))
        opt = getattr(ptcore.optim, cls)([p], **opts)
        for g in grads:
            p.grad = ptcore.from_numpy(g)
            opt.step()
        return p.detach().numpy().copy(), opt.state[p]["exp_avg_sq"].numpy().copy()
    fused = run()
    assert taken and all(taken)          # every step went through the kernel
    monkeypatch.setattr(adam_mod, "_fusable", lambda *a: False)
    composed = run()
    for a, b in zip(fused, composed):
        _close(a, b, **TOL[dtype])


def _swap_in_setup(lib):
    lib.manual_seed(0)
    params = [lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3))),
              lib.nn.Parameter(lib.tensor([0.5, -0.25]))]
    opt = lib.optim.Adam([{"params": params[:1]}, {"params": params[1:], "lr": 0.01}], lr=0.1)
    for p in params:
        p.grad = p.detach() * 2 + 1
    opt.step()
    return params, opt


@needs_torch
def test_swap_in_optimizer_params_and_state_matches_torch():
    """Inside the block step() updates the given tensors with the given state and
    hyperparameters (in-place state updates reach the caller's dict); on exit
    the live params, groups and state are back, as in torch."""
    out = []
    for lib in (torch, ptcore):
        params, opt = _swap_in_setup(lib)
        live_groups = [dict(g) for g in opt.param_groups]
        live_state = opt.state
        sd = copy.deepcopy(opt.state_dict())
        sd["param_groups"][1]["lr"] = 0.5
        new = {f"p{i}": lib.nn.Parameter(p.detach().clone() + 1) for i, p in enumerate(params)}
        for q in new.values():
            q.grad = q.detach() * -3
        with lib.optim.swap_in_optimizer_params_and_state(opt, new, sd):
            assert opt.param_groups[1]["params"][0] is new["p1"]
            assert opt.param_groups[1]["lr"] == 0.5
            opt.step()
            opt.state[new["p0"]]["extra"] = 1
        assert opt.state is live_state
        assert [dict(g) for g in opt.param_groups] == live_groups
        assert all(g["params"] is s["params"] for g, s in zip(opt.param_groups, live_groups))
        assert "extra" not in sd["state"][0]
        out.append([_to_np(q) for q in new.values()] + [_to_np(p) for p in params]
                   + [sd["state"][i][k].numpy() for i in (0, 1) for k in ("exp_avg", "step")]
                   + [opt.state[params[0]]["exp_avg"].numpy()])
    for t, p in zip(*out):
        _close(p, t, rtol=1e-12, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("case", ["no state", "not a dict", "state keys", "group count",
                                  "group keys", "param count", "extra state", "few tensors"])
def test_swap_in_optimizer_params_and_state_errors(case):
    msgs = []
    for lib in (torch, ptcore):
        params, opt = _swap_in_setup(lib)
        sd = opt.state_dict()
        new = {str(i): p.detach().clone() for i, p in enumerate(params)}
        if case == "no state":
            opt = lib.optim.SGD(params, lr=0.1)
        elif case == "not a dict":
            sd = list(sd.items())
        elif case == "state keys":
            sd["state"] = {params[0]: {}}
        elif case == "group count":
            sd["param_groups"] = sd["param_groups"][:1]
        elif case == "group keys":
            sd["param_groups"][0]["extra"] = 1
            del sd["param_groups"][0]["lr"]
        elif case == "param count":
            sd["param_groups"][0]["params"] = [0, 5]
        elif case == "extra state":
            sd["state"][7] = {}
        elif case == "few tensors":
            del new["1"]
        with pytest.raises(RuntimeError) as info:
            with lib.optim.swap_in_optimizer_params_and_state(opt, new, sd):
                pass
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def _third_party_lion(lib, optmod):
    """A Lion optimizer written the way optimizers outside torch are: torch's
    helpers from torch.optim.optimizer, grouped tensors and _foreach ops."""
    Optimizer, ParamsT = optmod.Optimizer, optmod.ParamsT

    class Lion(Optimizer):
        def __init__(self, params: ParamsT, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0,
                     foreach=None, differentiable=False):
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay,
                                          foreach=foreach, differentiable=differentiable))

        @optmod._use_grad_for_differentiable
        def step(self, closure=None):
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                grads = [p.grad for p in params]
                avgs = []
                for p in params:
                    st = self.state[p]
                    if not st:
                        st["step"] = lib.tensor(0.0, dtype=optmod._get_scalar_dtype())
                        st["exp_avg"] = lib.zeros_like(p)
                    avgs.append(st["exp_avg"])
                    st["step"] += 1
                foreach = group["foreach"]
                if foreach is None:
                    _, foreach = optmod._default_to_fused_or_foreach(params, False)
                optmod._view_as_real(params, grads, avgs)
                beta1, beta2 = group["betas"]
                lr = optmod._get_value(group["lr"])
                grouped = Optimizer._group_tensors_by_device_and_dtype(
                    [params, grads, avgs], with_indices=True)
                for (ps, gs, ms), _ in grouped.values():
                    lib._foreach_mul_(ps, 1 - lr * group["weight_decay"])
                    upd = lib._foreach_lerp(ms, gs, 1 - beta1)
                    lib._foreach_add_(ps, lib._foreach_sign(upd), alpha=-lr)
                    lib._foreach_lerp_(ms, gs, 1 - beta2)
            return None
    return Lion


@needs_torch
def test_optimizer_written_against_torch_internals():
    """The names third-party optimizers import from torch.optim.optimizer exist
    and behave as torch's (the default foreach choice, complex views, grouping
    by device and dtype), so such an optimizer trains the same."""
    import importlib
    traj = []
    for lib in (torch, ptcore):
        optmod = importlib.import_module(lib.__name__ + ".optim.optimizer")
        side = _Side(lib, "float64")
        cplx = lib.nn.Parameter(lib.tensor(np.array([1 + 2j, -0.5j])))
        opt = _third_party_lion(lib, optmod)(
            [{"params": side.params}, {"params": [cplx], "weight_decay": 0.1}], lr=0.01)
        assert optmod._default_to_fused_or_foreach(side.params, False, True) == (True, False)
        assert optmod._default_to_fused_or_foreach(side.params, True, True) == (False, False)
        for k in range(5):
            side.set_grads(k)
            cplx.grad = cplx.detach() * 2
            opt.step()
        traj.append([_to_np(p) for p in side.params] + [_to_np(cplx)])
    for p, t in zip(*traj):
        _close(p, t, **TOL["float64"])


@needs_torch
def test_group_tensors_by_device_and_dtype_matches_torch():
    got = []
    for lib in (torch, ptcore):
        a = [lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(3)]
        b = [lib.zeros(2), None, lib.zeros(3)]
        out = []
        for with_indices in (False, True):
            r = lib.optim.Optimizer._group_tensors_by_device_and_dtype([a, b], with_indices)
            out.append({str(k[1]).split(".")[-1]: ([[None if t is None else tuple(t.shape)
                                                     for t in tl] for tl in v[0]], v[1])
                        for k, v in r.items()})
        for bad in ([[None], [lib.ones(1)]], [[], []]):
            with pytest.raises(RuntimeError) as info:
                lib.optim.Optimizer._group_tensors_by_device_and_dtype(bad)
            out.append(str(info.value).split(" (Could")[0].strip())
        got.append(out)
    assert got[1] == got[0]


@needs_torch
def test_optimizer_module_names_match_torch():
    import importlib
    t = importlib.import_module("torch.optim.optimizer")
    p = importlib.import_module("ptcore.optim.optimizer")
    for name in ("ParamsT", "StateDict", "Args", "Kwargs", "TensorListList", "Indices",
                 "DeviceDict", "DeviceDtypeDict", "GlobalOptimizerPreHook",
                 "GlobalOptimizerPostHook", "_params_doc", "_foreach_doc", "_fused_doc",
                 "_capturable_doc", "_differentiable_doc", "_maximize_doc",
                 "_get_foreach_kernels_supported_devices", "_get_fused_kernels_supported_devices",
                 "_get_capturable_supported_devices", "_stack_if_compiling",
                 "_disable_dynamo_if_unsupported", "_device_dtype_check_for_fused"):
        assert hasattr(p, name), name
    assert p._get_fused_kernels_supported_devices() == t._get_fused_kernels_supported_devices()
    assert p._get_foreach_kernels_supported_devices() == \
        t._get_foreach_kernels_supported_devices()
    for xla in (True, False):
        assert p._get_capturable_supported_devices(xla) == \
            t._get_capturable_supported_devices(xla)
    msgs = []
    for mod, lib in ((t, torch), (p, ptcore)):
        mod._device_dtype_check_for_fused(lib.ones(1))
        with pytest.raises(RuntimeError) as info:
            mod._device_dtype_check_for_fused(lib.ones(1, dtype=lib.int64))
        msgs.append(str(info.value).replace(lib.__name__ + ".", ""))
    assert msgs[1] == msgs[0]
    assert set(dir(torch.optim.Optimizer)) <= set(dir(optim.Optimizer))
    opt = optim.SGD([ptcore.nn.Parameter(ptcore.ones(1))], lr=0.1)
    assert opt._zero_grad_profile_name == "Optimizer.zero_grad#SGD.zero_grad"


@needs_torch
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "Adadelta", "RMSprop", "Rprop",
                                  "NAdam", "RAdam", "ASGD"])
@pytest.mark.parametrize("impl", [dict(), dict(foreach=True), dict(fused=True)],
                         ids=["for-loop", "foreach", "fused"])
def test_capturable_on_cpu_raises_like_torch(name, impl):
    """capturable=True with CPU parameters: torch's AssertionError (naming its
    implementation's device list) once a parameter has a gradient; the state
    is made first and the parameters are untouched. The fused Adam/AdamW runs."""
    got = []
    for lib in (torch, ptcore):
        p = lib.nn.Parameter(lib.ones(2))
        try:
            opt = getattr(lib.optim, name)([p], lr=0.1, capturable=True, **impl)
        except (RuntimeError, TypeError) as e:
            got.append(("init", type(e), str(e).replace(lib.__name__, "")))
            continue
        opt.step()
        p.grad = lib.ones(2)
        try:
            opt.step()
            got.append(("ran", p.tolist()))
        except AssertionError as e:
            got.append((str(e), p.tolist(), sorted(opt.state[p])))
    assert got[1] == got[0]


@needs_torch
def test_sgd_init_group_matches_torch():
    """SGD._init_group (which SGD subclasses call): the parameters with gradients,
    their gradients and momentum buffers, and whether a gradient is sparse."""
    got = []
    for lib in (torch, ptcore):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(5, 2, sparse=True)
        lin = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD([{"params": list(lin.parameters())}, {"params": emb.parameters()}],
                            lr=0.1, momentum=0.9)
        out = []
        for _ in range(2):
            opt.zero_grad()
            lin.weight.grad = lib.ones(2, 2)
            emb(lib.tensor([1, 3])).sum().backward()
            for group in opt.param_groups:
                params, grads, bufs = [], [], []
                sparse = opt._init_group(group, params, grads, bufs)
                out.append((sparse, len(params), [b is None for b in bufs],
                            [g.is_sparse for g in grads]))
            opt.step()
        got.append(out)
    assert got[1] == got[0]


@needs_torch
def test_step_and_zero_grad_profiler_ranges_match_torch():
    """step() and zero_grad() show in the profiler as torch's
    'Optimizer.step#<class>.step' / 'Optimizer.zero_grad#<class>.zero_grad' ranges,
    a user subclass's under its own name."""
    got = []
    for lib in (torch, ptcore):
        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.1})

            def step(self, closure=None):
                with lib.no_grad():
                    for g in self.param_groups:
                        for p in g["params"]:
                            p.sub_(p.grad, alpha=g["lr"])

        m = lib.nn.Linear(3, 2)
        opts = [lib.optim.Adam(m.parameters(), lr=0.1), lib.optim.SGD(m.parameters(), lr=0.1),
                Plain(m.parameters())]
        m(lib.ones(2, 3)).sum().backward()
        with lib.profiler.profile() as prof:
            for o in opts:
                o.step()
            opts[0].zero_grad()
        got.append(sorted((e.key, e.count) for e in prof.key_averages()
                          if e.key.startswith("Optimizer.")))
    assert got[1] == got[0]


# -- torch.optim._functional ---------------------------------------------------

_FUNCTIONAL_CALLS = {
    "adam": (3, dict(amsgrad=True, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.01, eps=1e-8,
                     maximize=False)),
    "adamw": (3, dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.01,
                      eps=1e-8, maximize=False)),
    "adadelta": (2, dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False)),
    "adagrad": (1, dict(lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False)),
    "adamax": (2, dict(eps=1e-8, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0)),
    "asgd": (3, dict(lambd=1e-4, lr=0.1, t0=1e6, alpha=0.75, weight_decay=0.0)),
    "nadam": (3, dict(beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0, momentum_decay=4e-3,
                      eps=1e-8)),
    "radam": (2, dict(beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0, eps=1e-8)),
    "rmsprop": (3, dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.9,
                        centered=True)),
    "rprop": (2, dict(step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2)),
}


def _functional_state(lib, name, k, a):
    """The state lists a fresh optimizer of ``name`` hands its functional form
    (as torch: NAdam's mu_product and ASGD's mu and eta are 0-d tensors,
    Rprop's step sizes start at lr)."""
    state = [lib.zeros_like(a) for _ in range(k)]
    if name == "nadam":
        state[2] = lib.tensor(1.0, dtype=a.dtype)
    elif name == "asgd":
        state[1], state[2] = lib.tensor(1.0, dtype=a.dtype), lib.tensor(0.1, dtype=a.dtype)
    elif name == "rprop":
        state[1] = lib.full_like(a, 0.01)
    return state


@needs_torch
@pytest.mark.parametrize("name", sorted(_FUNCTIONAL_CALLS) + ["sgd", "sparse_adam"])
def test_optim_functional_module_matches_torch(name):
    """ptcore.optim._functional exposes torch's functional update rules with
    torch's signatures, and two steps of each give torch's values."""
    import inspect
    import torch.optim._functional as TF
    import ptcore.optim._functional as PF
    tsig, psig = inspect.signature(getattr(TF, name)), inspect.signature(getattr(PF, name))
    assert [(p.name, p.kind, p.default) for p in psig.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in tsig.parameters.values()]
    a = np.random.default_rng(0).standard_normal((3, 4))
    g = np.random.default_rng(1).standard_normal((3, 4))
    got = []
    for lib, F in ((torch, TF), (ptcore, PF)):
        p = lib.tensor(a)
        if name == "sgd":
            bufs = [None]
            for _ in range(2):
                F.sgd([p], [lib.tensor(g)], bufs, weight_decay=0.01, momentum=0.9, lr=0.1,
                      dampening=0.0, nesterov=True, maximize=False)
        elif name == "sparse_adam":
            ea, es = lib.zeros_like(p), lib.zeros_like(p)
            grad = lib.sparse_coo_tensor([[0, 2]], lib.tensor(g[:2]), (3, 4))
            for step in (1, 2):
                F.sparse_adam([p], [grad], [ea], [es], [step], eps=1e-8, beta1=0.9, beta2=0.99,
                              lr=0.1, maximize=False)
        else:
            k, kw = _FUNCTIONAL_CALLS[name]
            state = _functional_state(lib, name, k, p)
            step = lib.tensor(0.0)
            for _ in range(2):
                step += 1
                getattr(F, name)([p], [lib.tensor(g)], *[[s] for s in state], [step], **kw)
        got.append(p.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12, atol=1e-12)
    assert TF._make_sparse is not None and callable(PF._make_sparse)


def test_lbfgs_tensor_lr_keeps_a_tensor_step():
    # torch's LBFGS keeps a Tensor lr as a tensor: state['t'] is one (float32 from
    # lr, float64 after load_state_dict casts it to the parameter's dtype), with
    # and without the strong Wolfe line search
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 3))
    for kw in ({"line_search_fn": "strong_wolfe"}, {}):
        got = []
        for lib in (ptcore, torch):
            p = lib.nn.Parameter(lib.tensor(a))
            opt = lib.optim.LBFGS([p], lr=lib.tensor(0.5), max_iter=5, **kw)

            def closure(lib=lib, p=p, opt=opt):
                opt.zero_grad()
                loss = ((p - 1) ** 4).sum() + (p ** 2).sum()
                loss.backward()
                return loss
            for _ in range(3):
                opt.step(closure)
            t = opt.state[p]["t"]
            fresh = lib.optim.LBFGS([lib.nn.Parameter(lib.tensor(a))], lr=lib.tensor(0.5), **kw)
            fresh.load_state_dict(opt.state_dict())
            t2 = fresh.state_dict()["state"][0]["t"]
            got.append((p.detach().numpy(), str(t.dtype).rsplit(".")[-1],
                        str(t2.dtype).rsplit(".")[-1], float(t)))
        np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-10)
        assert got[0][1:3] == got[1][1:3]
        assert got[0][3] == pytest.approx(got[1][3], rel=1e-6)
