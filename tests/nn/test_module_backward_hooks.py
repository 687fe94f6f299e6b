"""Module full backward hooks and backward pre-hooks (per module and
global) against PyTorch: call order, grad_input/grad_output values,
replacement of gradients by the hooks, removal and errors."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch


def _arr(g):
    if g is None:
        return None
    return np.array(g.detach().numpy(), copy=True)


def _same_logs(lt, lp):
    assert len(lt) == len(lp), (lt, lp)
    for et, ep in zip(lt, lp):
        assert len(et) == len(ep), (et, ep)
        for a, b in zip(et, ep):
            if isinstance(a, (list, tuple)):
                assert len(a) == len(b), (et, ep)
                for u, v in zip(a, b):
                    if u is None or v is None:
                        assert u is None and v is None, (et, ep)
                    else:
                        np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-12)
            else:
                assert a == b, (et, ep)


def _fill(lib, m, seed=0):
    g = np.random.default_rng(seed)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.from_numpy(g.standard_normal(tuple(p.shape))))


def _logger(log, name):
    def pre(mod, go):
        log.append(("pre", name, [_arr(g) for g in go]))

    def full(mod, gi, go):
        log.append(("full", name, [_arr(g) for g in gi], [_arr(g) for g in go]))
    return pre, full


def _run_both(scenario):
    """``scenario(lib, log)`` returns tensors to compare; logs and results
    must agree between torch and ptcore."""
    lt, lp = [], []
    rt = scenario(torch, lt)
    rp = scenario(ptcore, lp)
    _same_logs(lt, lp)
    for a, b in zip(rt, rp):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(_arr(b), _arr(a), rtol=1e-12, atol=1e-12)


def _x(lib, shape, seed=1, grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return lib.from_numpy(a).requires_grad_(grad)


def test_linear_hooks_values_and_order():
    def sc(lib, log):
        m = lib.nn.Linear(3, 2).double()
        _fill(lib, m)
        pre, full = _logger(log, "lin")
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(full)
        x = _x(lib, (4, 3))
        (m(x) * _x(lib, (4, 2), 2, False)).sum().backward()
        return [x.grad, m.weight.grad, m.bias.grad]
    _run_both(sc)


def test_hooks_replace_gradients():
    """A pre-hook's return replaces grad_output (changes all gradients); a
    full hook's return replaces grad_input (changes only the input's)."""
    def sc(lib, log):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
        _fill(lib, m)
        m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        m[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        pre, full = _logger(log, "tanh")
        m[1].register_full_backward_hook(full)       # sees the first hook's replacement
        x = _x(lib, (5, 3))
        (m(x) * _x(lib, (5, 2), 2, False)).sum().backward()
        return [x.grad] + [p.grad for p in m.parameters()]
    _run_both(sc)


def test_nested_modules_call_order():
    def sc(lib, log):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(),
                              lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Sigmoid()),
                              lib.nn.Linear(4, 1)).double()
        _fill(lib, m)
        for name, mod in m.named_modules():
            pre, full = _logger(log, name or "root")
            mod.register_full_backward_pre_hook(pre)
            mod.register_full_backward_hook(full)
        x = _x(lib, (2, 3))
        m(x).sum().backward()
        return [x.grad] + [p.grad for p in m.parameters()]
    _run_both(sc)


def test_inputs_without_grad_and_non_tensor_args():
    class Mix:
        @staticmethod
        def make(lib):
            class M(lib.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bil = lib.nn.Bilinear(3, 2, 2)

                def forward(self, a, scale, b, c):
                    return self.bil(a, b) * scale + c.sum()
            return M()

    def sc(lib, log):
        m = Mix.make(lib).double()
        _fill(lib, m)
        pre, full = _logger(log, "m")
        m.register_full_backward_hook(full)
        m.register_full_backward_pre_hook(pre)
        a, b, c = _x(lib, (4, 3)), _x(lib, (4, 2), 3, False), _x(lib, (2,), 4)
        (m(a, 2.0, b, c) * _x(lib, (4, 2), 2, False)).sum().backward()
        return [a.grad, c.grad, m.bil.weight.grad]
    _run_both(sc)


_FIRING = "Full backward hook is firing when gradients are computed with respect to module outputs"


def test_no_input_requires_grad():
    """The full hook still runs (grad_input all None, with a warning); it may
    only return None."""
    def sc(lib, log):
        m = lib.nn.Linear(3, 2).double()
        _fill(lib, m)
        pre, full = _logger(log, "lin")
        m.register_full_backward_hook(full)
        m.register_full_backward_pre_hook(pre)
        x = _x(lib, (4, 3), grad=False)
        with pytest.warns(UserWarning, match=_FIRING):
            m(x).sum().backward()
        return [m.weight.grad]
    _run_both(sc)
    for lib in (torch, ptcore):
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(4, 3),))
        with pytest.raises(RuntimeError, match="should always return None"), \
                pytest.warns(UserWarning, match=_FIRING):
            m(lib.ones(4, 3)).sum().backward()


def test_tuple_outputs_lstm():
    def sc(lib, log):
        m = lib.nn.LSTM(3, 2).double()
        _fill(lib, m)
        pre, full = _logger(log, "lstm")
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(full)
        x = _x(lib, (4, 1, 3))
        out, (h, c) = m(x)
        (out.sum() + (h * 2).sum()).backward()
        return [x.grad] + [p.grad for p in m.parameters()]
    _run_both(sc)


def test_tuple_output_partly_used():
    class Split:
        @staticmethod
        def make(lib):
            class M(lib.nn.Module):
                def forward(self, x):
                    return x * 2, x.sin(), x.cos()
            return M()

    def sc(lib, log):
        m = Split.make(lib)
        pre, full = _logger(log, "m")
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(full)
        x = _x(lib, (3,))
        a, b, c = m(x)
        (a.sum() + (c * 3).sum()).backward()
        return [x.grad]
    _run_both(sc)


def test_removal_prepend_and_global_hooks():
    def sc(lib, log):
        from importlib import import_module
        mm = import_module(lib.__name__ + ".nn.modules.module")
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh()).double()
        _fill(lib, m)
        h1 = m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("h1",)))
        m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("h2",)))
        m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("h0",)), prepend=True)
        m[0].register_full_backward_pre_hook(lambda mod, go: log.append(("p1",)))
        m[0].register_full_backward_pre_hook(lambda mod, go: log.append(("p0",)), prepend=True)
        g1 = mm.register_module_full_backward_hook(
            lambda mod, gi, go: log.append(("global", type(mod).__name__)))
        g2 = mm.register_module_full_backward_pre_hook(
            lambda mod, go: log.append(("gpre", type(mod).__name__)))
        try:
            x = _x(lib, (3, 2))
            m(x).sum().backward()
            log.append(("--",))
            h1.remove()
            g1.remove()
            m(x).sum().backward()
        finally:
            g1.remove()
            g2.remove()
        log.append(("--",))
        m(x).sum().backward()
        return [x.grad]
    _run_both(sc)


def test_hook_errors():
    for lib in (torch, ptcore):
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                               "expected 1"):
            m(lib.ones(4, 3, requires_grad=True)).sum().backward()
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but "
                                               "expected 1"):
            m(lib.ones(4, 3, requires_grad=True)).sum().backward()
        # in-place on the (hooked) input inside forward is forbidden, as in PyTorch
        r = lib.nn.ReLU(inplace=True)
        r.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            r(lib.ones(3, requires_grad=True) * 1)


def test_no_grad_and_detached_forward():
    for lib in (torch, ptcore):
        calls = []
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda *a: calls.append(1))
        with lib.no_grad():
            y = m(lib.ones(4, 3, requires_grad=True))
        assert not y.requires_grad
        y = m(lib.ones(4, 3))
        with pytest.warns(UserWarning, match=_FIRING):
            y.sum().backward()
        assert calls == [1]


def test_forward_hooks_still_run_with_backward_hooks():
    def sc(lib, log):
        m = lib.nn.Linear(3, 2).double()
        _fill(lib, m)
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        pre, full = _logger(log, "lin")
        m.register_full_backward_hook(full)
        x = _x(lib, (4, 3))
        y = m(x)
        (y * y).sum().backward()
        return [y, x.grad, m.weight.grad]
    _run_both(sc)


def test_no_input_requires_grad_warning_points_at_the_caller():
    """The warning is reported at the line that called backward(), as torch's
    (raised from C++) is, not inside ptcore."""
    import warnings
    for lib in (torch, ptcore):
        if lib is None:
            continue
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: None)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            m(lib.ones(4, 3)).sum().backward()
        fired = [w for w in got if _FIRING in str(w.message)]
        assert len(fired) == 1 and fired[0].filename == __file__, \
            (lib.__name__, [(w.filename, w.lineno) for w in fired])


def _non_full_hook_cases(lib):
    class Two(lib.nn.Module):
        def forward(self, a, b):
            return a * 2, b + a

    class Dict(lib.nn.Module):
        def forward(self, a):
            return {"x": a * 2}

    class NonTensorArg(lib.nn.Module):
        def forward(self, a, k):
            return a.relu()

    class TwoNodes(lib.nn.Module):
        def forward(self, a):
            return (a * 2).exp()

    def leaf():
        return lib.ones(3, 2, requires_grad=True)

    return [(lib.nn.Linear(2, 2), lambda: (leaf(),)),
            (lib.nn.ReLU(), lambda: (leaf() * 1,)),
            (Two(), lambda: (lib.ones(2, requires_grad=True), lib.ones(2))),
            (Dict(), lambda: (leaf(),)),
            (NonTensorArg(), lambda: (leaf(), 3)),
            (TwoNodes(), lambda: (leaf() * 1,)),
            (lib.nn.Sigmoid(), lambda: (leaf(),))]


@pytest.mark.parametrize("case", range(7))
def test_non_full_backward_hook_future_warnings(case):
    """register_backward_hook warns (FutureWarning, torch's messages) when the
    hook will not see the module's own grad_input/grad_output: a non-tensor
    input or output, outputs from several nodes, or a forward of several nodes."""
    import warnings
    got = {}
    for lib in (torch, ptcore):
        m, args = _non_full_hook_cases(lib)[case]
        m.register_backward_hook(lambda *a: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(*args())
        got[lib] = [(x.category, str(x.message)) for x in w]
    assert got[ptcore] == got[torch]
