"""An Optimizer subclass that wraps another optimizer and never runs ``Optimizer.__init__``
(accelerate's AcceleratedOptimizer, Lightning-style wrappers) steps as in torch: its own
``step`` is not wrapped with the hooks, the inner optimizer's hooks run once per step."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _wrapper_class(lib):
    class Wrapper(lib.optim.Optimizer):
        def __init__(self, optimizer):
            self.optimizer = optimizer

        @property
        def param_groups(self):
            return self.optimizer.param_groups

        @property
        def state(self):
            return self.optimizer.state

        def zero_grad(self, set_to_none=True):
            self.optimizer.zero_grad(set_to_none)

        def step(self, closure=None):
            return self.optimizer.step(closure)
    return Wrapper


def _run(lib):
    w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    inner = lib.optim.AdamW([w], lr=0.1)
    calls = []
    inner.register_step_pre_hook(lambda opt, args, kwargs: calls.append("pre"))
    inner.register_step_post_hook(lambda opt, args, kwargs: calls.append("post"))
    opt = _wrapper_class(lib)(inner)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.5 ** step)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        sched.step()
    return w.detach().tolist(), calls, opt.param_groups[0]["lr"]


def test_wrapping_optimizer_steps_as_in_torch():
    got, want = _run(ptcore), _run(torch)
    assert got[1] == want[1] == ["pre", "post"] * 3
    assert got[2] == want[2]
    ptcore.testing.assert_close(ptcore.tensor(got[0]), ptcore.tensor(want[0]))
