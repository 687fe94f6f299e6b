"""``Tensor.data`` has a version counter of its own, as torch's: an in-place
write through ``x.data`` leaves ``x._version`` (and so the values autograd
saved of x) valid, while ``detach()`` and views share their source's
counter, and ``x.data = y`` keeps x's version."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _program(lib):
    out = []
    w = lib.ones(3, requires_grad=True)
    x = lib.full((3,), 2.0, requires_grad=True)
    y = (w * x).sum()
    w.data.mul_(3)                      # torch: no error; backward reads the new w
    y.backward()
    out += [w.grad.tolist(), x.grad.tolist(), w._version]
    a = lib.ones(4)
    d = a.data
    d.add_(1)
    out += [a._version, d._version]
    v = d[1:]                           # a view of .data shares .data's counter
    v.add_(1)
    out += [a._version, d._version, v._version]
    e = a.detach()                      # detach shares a's counter
    e.add_(1)
    out += [a._version, e._version]
    dd = d.detach()
    dd.add_(1)
    out += [d._version, dd._version, a._version]
    r = d.view(2, 2)
    r.mul_(2)
    out += [d._version, r._version, a._version, a.tolist()]
    b = lib.zeros(3)
    b.add_(1)
    c = lib.ones(3)
    c.add_(1)
    c.add_(1)
    b.data = c                          # b keeps its own version
    out += [b._version, c._version]
    c.add_(1)
    out += [b._version, c._version, b.tolist()]
    return out


def test_data_version_counter_matches_torch():
    assert _program(ptcore) == _program(torch)


def test_saved_tensor_still_checked_through_the_tensor_itself():
    for lib in (ptcore, torch):
        w = lib.ones(3, requires_grad=True)
        x = lib.ones(3, requires_grad=True)
        h = w * 1.0
        y = (h * x).sum()
        h.detach().add_(1)              # detach shares h's counter: saved h is stale
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_optimizer_step_on_data_between_forward_and_backward():
    # weight clipping / EMA written through p.data while a graph holds p (torch: fine)
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.arange(6.0).reshape(2, 3) / 10)
            m.bias.zero_()
        loss = (m(lib.ones(4, 3)) ** 2).sum()
        for p in m.parameters():
            p.data.clamp_(-0.25, 0.25)
        loss.backward()
        return [m.weight.grad.numpy(), m.bias.grad.numpy(), m.weight.detach().numpy()]
    for a, b in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
