"""The device layer acts per call: once CUDA is initialised, an all-CPU call
takes the entry's direct path (no layer runs, the core methods stay the
Cython ones); a call with an argument on the device goes down the stack."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import device as device_layer
from ptcore._dispatch import dispatcher


@pytest.fixture
def counted(monkeypatch):
    calls = []
    orig = device_layer.LAYER.handle

    def handle(entry, opdef, args, kwargs, nxt):
        calls.append(opdef.name)
        return orig(entry, opdef, args, kwargs, nxt)
    monkeypatch.setattr(device_layer.LAYER, "handle", handle)
    return calls


def test_cpu_calls_skip_the_layer(counted):
    y = ptcore.ones(3).cuda()
    assert device_layer.LAYER.enabled and dispatcher.off_cpu_on[0]
    assert not dispatcher.on[0]          # no layer that every call must see
    a, b = ptcore.ones(3), ptcore.full((3,), 2.0)
    r = [ptcore.add(a, b), a.add(b), ptcore.exp(a), a.sum(), ptcore.cat([a, b]), a < b,
         ptcore.add(a, b, out=ptcore.empty(3)), a.view(3, 1)]
    assert counted == []
    np.testing.assert_allclose(r[0].numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(r[4].numpy(), [1, 1, 1, 2, 2, 2])
    assert r[5].tolist() == [True] * 3
    del y


def test_device_arguments_reach_the_layer(counted):
    y = ptcore.ones(3).cuda()
    a = ptcore.ones(3)
    assert ptcore.add(y, y).cpu().tolist() == [2.0] * 3
    assert "add" in counted
    counted.clear()
    # inside a list, as a keyword argument, and through an operator method
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.cat([a, y])
    assert counted == ["cat"]
    assert (y < 2.0).cpu().tolist() == [True] * 3
    assert counted[-1] == "lt"
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.add(a, a, out=y)
    assert counted[-1] == "add"


def test_off_cpu():
    y = ptcore.ones(2).cuda()
    a = ptcore.ones(2)
    assert not dispatcher.off_cpu((a, 1.0, [a, (a,)]), {"out": a})
    assert dispatcher.off_cpu((a, [a, (y,)]))
    assert dispatcher.off_cpu((a,), {"out": y})
    assert dispatcher.off_cpu((y,))
