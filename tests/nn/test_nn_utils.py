"""nn.utils: clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters."""
import math

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
from ptcore.nn.utils import (clip_grad_norm_, clip_grad_value_, get_total_norm,
                             parameters_to_vector, vector_to_parameters)

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (5,), (2, 2, 2)]
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in shapes]
    tps, pps = [], []
    for g in grads:
        tp = torch.nn.Parameter(torch.zeros(g.shape))
        tp.grad = torch.from_numpy(g.copy())
        pp = nn.Parameter(ptcore.zeros(*g.shape))
        pp.grad = ptcore.from_numpy(g.copy())
        tps.append(tp)
        pps.append(pp)
    # a parameter without grad is skipped
    tps.append(torch.nn.Parameter(torch.zeros(2)))
    pps.append(nn.Parameter(ptcore.zeros(2)))
    return tps, pps


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, foreach):
    nt = float(norm_type)
    tps, pps = _pair()
    want = torch.nn.utils.clip_grad_norm_(tps, max_norm, nt)
    got = clip_grad_norm_(pps, max_norm, norm_type, foreach=foreach)
    assert isinstance(got, ptcore.Tensor) and got.dim() == 0
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)
    for tp, pp in zip(tps, pps):
        if tp.grad is None:
            assert pp.grad is None
        else:
            np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_single_tensor_and_empty():
    p = nn.Parameter(ptcore.zeros(4))
    p.grad = ptcore.full((4,), 2.0)
    total = clip_grad_norm_(p, 1.0)
    assert abs(float(total) - 4.0) < 1e-6
    np.testing.assert_allclose(p.grad.numpy(), np.full(4, 2.0 / (4.0 + 1e-6)), rtol=1e-6)
    assert float(clip_grad_norm_([], 1.0)) == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        clip_grad_norm_((x for x in []), 1.0)


def test_clip_grad_norm_nonfinite():
    p = nn.Parameter(ptcore.zeros(2))
    p.grad = ptcore.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_([p], 1.0)
    assert math.isnan(float(total))


def test_get_total_norm():
    ts = [ptcore.tensor([3.0]), ptcore.tensor([4.0])]
    assert abs(float(get_total_norm(ts)) - 5.0) < 1e-6
    assert float(get_total_norm(ts, "inf")) == 4.0


@needs_torch
def test_clip_grad_value_matches_torch():
    tps, pps = _pair(1)
    torch.nn.utils.clip_grad_value_(tps, 1.5)
    assert clip_grad_value_(pps, 1.5) is None
    for tp, pp in zip(tps, pps):
        if tp.grad is not None:
            np.testing.assert_array_equal(pp.grad.numpy(), tp.grad.numpy())
    p = nn.Parameter(ptcore.zeros(3))
    p.grad = ptcore.tensor([-5.0, 0.5, 5.0])
    clip_grad_value_(p, 1)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]


def test_parameters_to_vector_roundtrip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(m.parameters())
    assert tuple(vec.shape) == (3 * 2 + 2 + 2 + 1,)
    expected = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    np.testing.assert_array_equal(vec.detach().numpy(), expected)
    new = ptcore.arange(11.0)
    ws = [id(p) for p in m.parameters()]
    vector_to_parameters(new, m.parameters())
    assert [id(p) for p in m.parameters()] == ws
    np.testing.assert_array_equal(parameters_to_vector(m.parameters()).detach().numpy(), np.arange(11.0))
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0], m.parameters())


def test_named_member_accessor_swaps_as_torch():
    """``nn.utils._named_member_accessor`` (tensordict's ``to_module`` swaps parameters with
    ``swap_tensor``): the replaced tensor comes back, slots keep their kind, errors match."""
    torch = pytest.importorskip("torch")
    from ptcore.nn.utils import _named_member_accessor as pa
    from torch.nn.utils import _named_member_accessor as ta
    for lib, acc in ((ptcore, pa), (torch, ta)):
        m = lib.nn.BatchNorm1d(2)
        w = m.weight
        new = lib.zeros(2)
        assert acc.swap_tensor(m, "weight", new) is w
        assert m._parameters["weight"] is new and "weight" not in m._buffers
        rm = m.running_mean
        assert acc.swap_tensor(m, "running_mean", None) is rm and m.running_mean is None
        assert acc.swap_tensor(m, "extra", new, allow_missing=True) is acc._MISSING
        assert m.extra is new
        assert acc.swap_tensor(m, "extra", acc._MISSING) is new and not hasattr(m, "extra")
        acc.set_tensor(m, "bias", new)
        assert m._parameters["bias"] is new
        for args, exc in (((m, "a.b", new), KeyError), ((m, "", new), KeyError),
                          ((m, "nope", new), AttributeError), ((m, "weight", 1.0), TypeError),
                          ((1, "weight", new), TypeError), ((m, "training", new), TypeError)):
            with pytest.raises(exc):
                acc.swap_tensor(*args)
        seq = lib.nn.Sequential(lib.nn.ReLU())
        first = seq[0]
        assert acc.swap_submodule(seq, "0", lib.nn.Tanh()) is first
        assert type(seq[0]).__name__ == "Tanh"
        with pytest.raises(KeyError):
            acc.swap_submodule(seq, "1", lib.nn.Tanh())
