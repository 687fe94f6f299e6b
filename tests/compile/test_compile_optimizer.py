"""``ptcore.compile(opt.step)``: a compiled optimizer step (SGD with momentum, Adam,
AdamW) gives the eager step's values bit for bit, and torch's to float rounding;
what the compiled step does not take runs the eager step."""
import copy

import numpy as np
import pytest

import ptcore
from ptcore._inductor.optim_step import CompiledStep


def _params(lib, seed=0, shapes=((7, 5), (5,), (3, 4, 2), (1,))):
    rng = np.random.default_rng(seed)
    return [lib.nn.Parameter(lib.from_numpy(rng.standard_normal(s).astype(np.float32)))
            for s in shapes]


def _grads(lib, params, k):
    rng = np.random.default_rng(100 + k)
    return [lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
            for p in params]


def _run(lib, make_opt, steps, compiled, skip=None):
    params = _params(lib)
    opt = make_opt(lib, params)
    if compiled:
        opt.step = lib.compile(opt.step)
    for k in range(steps):
        opt.zero_grad()
        for i, (p, g) in enumerate(zip(params, _grads(lib, params, k))):
            if skip is not None and skip(k, i):
                continue
            p.grad = g.clone()
        opt.step()
    return opt, [p.detach().numpy().copy() for p in params]


OPTS = {
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.05, momentum=0.9),
    "sgd_nesterov_wd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.8, nesterov=True,
                                                     weight_decay=1e-2),
    "sgd_dampening_maximize": lambda lib, ps: lib.optim.SGD(ps, lr=0.03, momentum=0.5,
                                                            dampening=0.3, maximize=True),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2),
    "adam_l2_amsgrad": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2, weight_decay=0.1,
                                                      amsgrad=True),
    "adam_maximize": lambda lib, ps: lib.optim.Adam(ps, lr=3e-3, betas=(0.5, 0.9),
                                                    maximize=True),
    "adamw": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-3, betas=(0.9, 0.95),
                                             weight_decay=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTS))
def test_compiled_step_equals_eager_bitwise(name):
    opt, got = _run(ptcore, OPTS[name], 6, compiled=True)
    _, want = _run(ptcore, OPTS[name], 6, compiled=False)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert isinstance(opt.step, CompiledStep)
    # the first step makes the state eagerly; the others are compiled
    assert opt.step.eager_steps == 1 and opt.step.compiled_steps == 5


@pytest.mark.parametrize("name", sorted(OPTS))
def test_compiled_step_matches_torch(name):
    torch = pytest.importorskip("torch")
    _, got = _run(ptcore, OPTS[name], 6, compiled=True)
    _, want = _run(torch, OPTS[name], 6, compiled=False)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_adam_state_steps_and_versions():
    opt, _ = _run(ptcore, OPTS["adamw"], 4, compiled=True)
    _, _ = _run(ptcore, OPTS["adamw"], 4, compiled=False)
    for p in opt.param_groups[0]["params"]:
        st = opt.state[p]["step"]
        assert st.dtype == ptcore.float32 and st.item() == 4.0


def test_parameter_without_grad_is_skipped_as_eager():
    # parameter 1 has no gradient at steps 2 and 3: its state stays as it was
    def skip(k, i):
        return i == 1 and k in (2, 3)
    for name in ("sgd_momentum", "adam"):
        opt, got = _run(ptcore, OPTS[name], 6, compiled=True, skip=skip)
        _, want = _run(ptcore, OPTS[name], 6, compiled=False, skip=skip)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
        assert opt.step.compiled_steps == 5
    p1 = opt.param_groups[0]["params"][1]
    assert opt.state[p1]["step"].item() == 4.0


def test_lr_change_and_param_groups():
    """A new learning rate (set as a scheduler sets it) is used at once; two groups."""
    def make(lib, ps):
        return lib.optim.SGD([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.01}], lr=0.1,
                             momentum=0.9)

    def run(compiled):
        params = _params(ptcore)
        opt = make(ptcore, params)
        if compiled:
            opt.step = ptcore.compile(opt.step)
        for k in range(6):
            opt.zero_grad()
            for p, g in zip(params, _grads(ptcore, params, k)):
                p.grad = g
            opt.step()
            if k % 2:
                for g in opt.param_groups:
                    g["lr"] *= 0.5
        return opt, [p.detach().numpy() for p in params]
    opt, got = run(True)
    _, want = run(False)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_fallbacks_run_the_eager_step():
    params = _params(ptcore)
    opt = ptcore.optim.SGD(params, lr=0.1, momentum=0.9)
    step = opt.step = ptcore.compile(opt.step)
    ref_params = _params(ptcore)
    ref = ptcore.optim.SGD(ref_params, lr=0.1, momentum=0.9)
    calls = []

    def one(k, closure=False, hook=False):
        for o, ps in ((opt, params), (ref, ref_params)):
            o.zero_grad()
            for p, g in zip(ps, _grads(ptcore, ps, k)):
                p.grad = g
        h = opt.register_step_post_hook(lambda *a: calls.append(k)) if hook else None
        if closure:
            assert step(lambda: 1.5) == 1.5
        else:
            step()
        ref.step()
        if h is not None:
            h.remove()

    one(0)
    one(1)
    one(2, closure=True)
    one(3, hook=True)
    one(4)
    assert calls == [3]
    assert step.eager_steps == 3 and step.compiled_steps == 2
    # the state replaced (load_state_dict): planned again, values still eager's
    opt.load_state_dict(copy.deepcopy(ref.state_dict()))
    one(5)
    one(6)
    for a, b in zip(params, ref_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_unsupported_parameter_runs_eagerly():
    """A non-contiguous gradient is not the loops' case: the step runs eagerly."""
    params = _params(ptcore)
    opt = ptcore.optim.SGD(params, lr=0.1, momentum=0.9)
    opt.step = ptcore.compile(opt.step)
    for k in range(3):
        for p, g in zip(params, _grads(ptcore, params, k)):
            p.grad = g
        if k == 2:          # (a non-contiguous gradient)
            params[0].grad = params[0].grad.t().contiguous().t()
        opt.step()
    assert opt.step.compiled_steps == 1 and opt.step.eager_steps == 2


def test_other_optimizers_and_backends_are_not_compiled_steps():
    params = _params(ptcore)
    opt = ptcore.optim.RMSprop(params, lr=0.01)
    assert not isinstance(ptcore.compile(opt.step), CompiledStep)
    opt = ptcore.optim.SGD(params, lr=0.01, momentum=0.9)
    assert not isinstance(ptcore.compile(opt.step, backend="eager"), CompiledStep)
    assert isinstance(ptcore.compile(opt.step), CompiledStep)


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_state_tensor_replaced_in_place_after_the_plan_held(kind):
    """A state tensor replaced straight in a parameter's state dict (no
    load_state_dict) after compiled steps: the next step plans again and
    updates the new tensor, as the eager step does."""
    def make(lib, ps):
        return lib.optim.SGD(ps, lr=0.1, momentum=0.9) if kind == "sgd" else \
            lib.optim.Adam(ps, lr=1e-2)
    key = "momentum_buffer" if kind == "sgd" else "exp_avg"
    got_params, want_params = _params(ptcore), _params(ptcore)
    opt, ref = make(ptcore, got_params), make(ptcore, want_params)
    step = opt.step = ptcore.compile(opt.step)
    for k in range(5):
        for o, ps in ((opt, got_params), (ref, want_params)):
            o.zero_grad()
            for p, g in zip(ps, _grads(ptcore, ps, k)):
                p.grad = g
        if k == 3:
            for o, ps in ((opt, got_params), (ref, want_params)):
                o.state[ps[0]][key] = o.state[ps[0]][key] * 3.0 + 1.0
                del o.state[ps[2]]                  # (a state emptied: eager step remakes it)
        step()
        ref.step()
    assert step.compiled_steps >= 2
    for a, b in zip(got_params, want_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    for p, q in zip(got_params, want_params):
        np.testing.assert_array_equal(opt.state[p][key].numpy(), ref.state[q][key].numpy())
