"""The device layer acts per call: once CUDA is initialised, an all-CPU call
takes the entry's direct path (no layer runs, the core methods stay the
Cython ones); a call with an argument on the device goes down the stack."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import device as device_layer
from ptcore._dispatch import dispatcher


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
    # two dense tensors of one dtype and shape: the op's device fast path
    # (OpDef.device_fast) takes the call before the layer
    assert ptcore.add(y, y).cpu().tolist() == [2.0] * 3
    assert counted == []
    # two dtypes: the fast path declines, the layer runs the kernel
    assert ptcore.add(y, y.double()).cpu().tolist() == [2.0] * 3
    assert "add" in counted
    counted.clear()
    # inside a list, as a keyword argument, and through an operator method
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.cat([a, y])
    assert counted == ["cat"]
    # an operator method (``y < t`` is ``Tensor.lt``; an operand of another
    # dtype declines the comparison's fast path)
    assert (y < ptcore.full((1,), 2, dtype=ptcore.int64).cuda()).cpu().tolist() == [True] * 3
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


def test_device_kernel_of_a_core_op_is_used(counted):
    from ptcore._dispatch.table import lookup
    d = lookup("clone", "Tensor")
    assert d is not None and d.kind == "core"
    seen = []

    def clone_cuda(self, *args, **kwargs):
        seen.append(self.device.type)
        return ptcore.Tensor.__mro__[1].clone(self, *args, **kwargs)
    saved = dict(d.kernels), dispatcher.core_device_kernels[0]
    try:
        device_layer.register_kernel("clone", "cuda", clone_cuda, namespaces=("Tensor",))
        y = ptcore.arange(3.0).cuda()
        assert y.clone().cpu().tolist() == [0.0, 1.0, 2.0]
        assert seen == ["cuda"]
        assert ptcore.arange(2.0).clone().tolist() == [0.0, 1.0]       # CPU: the Cython method
        assert seen == ["cuda"] and "clone" in counted
    finally:
        d.kernels.clear()
        d.kernels.update(saved[0])
        d.device_bodies.clear()
        dispatcher.core_device_kernels[0] = saved[1]
        dispatcher.refresh()
    assert not dispatcher._core_swapped[0]      # the Cython core methods again
