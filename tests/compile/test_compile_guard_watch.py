"""The guards' cheap path (``ptcore._dynamo._guard_fast``): a call that finds
the modules' dicts unchanged since the guards last held skips comparing their
contents.  Each change the full comparison sees must still be seen after the
guards have held (the dicts watched), however it is made: through the module,
straight into a registry or ``__dict__``, by replacing ``__dict__``, or on a
parameter itself (requires_grad, shape, dtype: no dict changes).  Each test
calls the compiled module twice before the change (the watch armed) and
checks the result against the module's eager call."""
import numpy as np
import pytest

import ptcore
from ptcore._dynamo import _guard_fast

torch = pytest.importorskip("torch")


class Scaled(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ptcore.nn.Linear(6, 4)
        self.scale = 2.0

    def forward(self, x):
        return self.lin(x) * self.scale


def _armed():
    ptcore.manual_seed(0)
    m = Scaled()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 6)
    for _ in range(2):
        np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())
    assert len(cm.dynamo_ctx.entries) == 1
    return m, cm, x


def _same_as_eager(m, cm, x, entries):
    for _ in range(2):
        np.testing.assert_allclose(cm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert len(cm.dynamo_ctx.entries) == entries


def test_dict_watch_sees_every_change():
    d = {"a": 1}
    w = _guard_fast.DictWatch([d], [None])
    assert not w.unchanged()                 # never committed
    w.commit(w.begin())
    assert w.unchanged() is _guard_fast.TAGS
    d["a"] = 2
    assert not w.unchanged()
    w.commit(w.begin())
    d["a"] = 2.0                             # an equal value (another object): a change
    assert not w.unchanged()
    tags = w.begin()
    d.pop("a")                               # a change after begin(), before commit()
    later = w.begin()                        # (another caller's comparison, begun after it)
    w.commit(tags)
    assert not w.unchanged()
    w.commit(later)
    assert w.unchanged() is _guard_fast.TAGS
    w.disarm()
    assert not w.unchanged()
    with pytest.raises(TypeError):
        _guard_fast.DictWatch([[]], [None])
    with pytest.raises(ValueError):
        w.commit(bytearray(3))


def test_dict_watch_sees_a_replaced_instance_dict():
    class O:
        pass
    o = O()
    o.v = 1
    w = _guard_fast.DictWatch([o.__dict__], [o])
    w.commit(w.begin())
    assert w.unchanged() is _guard_fast.TAGS
    o.__dict__ = {"v": 1}
    assert not w.unchanged()


def test_attribute_written_into_dict_directly():
    m, cm, x = _armed()
    m.__dict__["scale"] = 3.0
    _same_as_eager(m, cm, x, 2)


def test_instance_dict_replaced():
    m, cm, x = _armed()
    d = dict(m.__dict__)
    d["scale"] = 5.0
    m.__dict__ = d
    _same_as_eager(m, cm, x, 2)


def test_parameter_replaced_in_registry_directly():
    m, cm, x = _armed()
    m.lin._parameters["weight"] = ptcore.nn.Parameter(ptcore.randn(4, 6))
    _same_as_eager(m, cm, x, 2)


def test_submodule_replaced_in_registry_directly():
    m, cm, x = _armed()
    ptcore.manual_seed(1)
    m._modules["lin"] = ptcore.nn.Linear(6, 4)
    _same_as_eager(m, cm, x, 2)


def test_parameter_requires_grad_shape_dtype_changed_in_place():
    m, cm, x = _armed()
    m.lin.weight.requires_grad_(False)
    _same_as_eager(m, cm, x, 2)
    assert cm(x).requires_grad                   # (the bias still requires grad)
    with ptcore.no_grad():
        m.lin.weight.data = ptcore.randn(4, 6).double()
    m.lin.bias.data = m.lin.bias.data.double()
    _same_as_eager(m, cm, ptcore.randn(3, 6).double(), 3)
    m.lin.weight.data = ptcore.randn(5, 6).double()
    m.lin.bias.data = ptcore.randn(5).double()
    x = ptcore.randn(3, 6).double()
    _same_as_eager(m, cm, x, 4)
    assert cm(x).shape == (3, 5)


def test_hook_added_and_removed():
    m, cm, x = _armed()
    h = m.lin.register_forward_hook(lambda mod, inp, out: out + 1)
    _same_as_eager(m, cm, x, 2)
    h.remove()
    _same_as_eager(m, cm, x, 2)               # (the first entry fits again)


def test_guard_reports_after_the_watch_held():
    m, cm, x = _armed()
    e = cm.dynamo_ctx.entries[0]
    assert e.guards.check((x,), {}) is None
    m.train(False)
    assert "training" in e.guards.check((x,), {})
    m.train(True)
    assert e.guards.check((x,), {}) is None
    m.lin.weight.requires_grad_(False)
    assert "parameters changed" in e.guards.check((x,), {})
    m.lin.weight.requires_grad_(True)
    assert e.guards.check((x,), {}) is None
    m.scale = 2.5
    assert "scale" in e.guards.check((x,), {})
