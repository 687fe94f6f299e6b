"""ptcore.utils.swap_tensors and the ptcore.__future__ module-conversion switches, as torch's."""
import weakref

import numpy as np
import pytest

import ptcore
from ptcore import nn


@pytest.fixture
def future_flags():
    yield ptcore.__future__
    ptcore.__future__.set_swap_module_params_on_conversion(False)
    ptcore.__future__.set_overwrite_module_params_on_conversion(False)


def test_swap_leaf_parameter_and_tensor():
    a = nn.Parameter(ptcore.ones(2))
    b = ptcore.arange(3, dtype=ptcore.float64)
    a.grad = ptcore.full((2,), 5.0)
    ida, idb = id(a), id(b)
    ptcore.utils.swap_tensors(a, b)
    assert (id(a), id(b)) == (ida, idb)
    assert type(a) is ptcore.Tensor and type(b) is nn.Parameter
    np.testing.assert_array_equal(a.numpy(), [0.0, 1.0, 2.0])
    assert a.dtype == ptcore.float64 and a.shape == (3,) and not a.requires_grad and a.grad is None
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    assert b.requires_grad and b.is_leaf
    np.testing.assert_array_equal(b.grad.numpy(), [5.0, 5.0])


def test_swap_moves_dict_and_graph():
    x = ptcore.ones(2, requires_grad=True)
    y = x * 2
    z = ptcore.zeros(2)
    y.tag = "y"
    ptcore.utils.swap_tensors(y, z)
    assert z.grad_fn is not None and y.grad_fn is None and z.tag == "y"
    assert not hasattr(y, "tag")
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_swap_errors():
    a, b = ptcore.ones(1), ptcore.zeros(1)
    r = weakref.ref(a)
    with pytest.raises(RuntimeError, match="weakref"):
        ptcore.utils.swap_tensors(a, b)
    del r
    with pytest.raises(TypeError):
        ptcore.utils.swap_tensors(a, [1.0])


@pytest.mark.parametrize("mode", ["default", "overwrite", "swap"])
def test_module_conversion_modes(mode, future_flags):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, ptcore):
        if mode == "overwrite":
            lib.__future__.set_overwrite_module_params_on_conversion(True)
        elif mode == "swap":
            lib.__future__.set_swap_module_params_on_conversion(True)
        try:
            m = lib.nn.Linear(2, 2)
            with lib.no_grad():
                m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            m(lib.ones(1, 2)).sum().backward()
            w_before = m.weight
            opt = lib.optim.SGD(m.parameters(), lr=0.1)
            m.double()
            same = m.weight is w_before
            in_opt = any(p is m.weight for p in opt.param_groups[0]["params"])
            results.append((same, in_opt, str(m.weight.dtype).split(".")[1],
                            str(m.weight.grad.dtype).split(".")[1], type(m.weight).__name__,
                            m.weight.requires_grad, m.weight.detach().numpy().tolist(),
                            m.weight.grad.numpy().tolist()))
        finally:
            lib.__future__.set_overwrite_module_params_on_conversion(False)
            lib.__future__.set_swap_module_params_on_conversion(False)
    assert results[0] == results[1]


def test_future_flags_default():
    assert ptcore.__future__.get_swap_module_params_on_conversion() is False
    assert ptcore.__future__.get_overwrite_module_params_on_conversion() is False


def test_swap_refused_while_graph_alive_then_fresh_accumulator():
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (torch, ptcore):
        a = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        b = lib.nn.Parameter(lib.tensor([3.0, 4.0, 5.0]))
        la = (a * a).sum()          # a graph that still flows into a
        with pytest.raises(RuntimeError):
            lib.utils.swap_tensors(a, b)
        la.backward()
        del la
        lib.utils.swap_tensors(a, b)
        (a * 3).sum().backward()
        (b * 2).sum().backward()
        outs.append((a.tolist(), a.grad.tolist(), b.tolist(), b.grad.tolist()))
    assert outs[0] == outs[1]
