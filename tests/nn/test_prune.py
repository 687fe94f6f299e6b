"""ptcore.nn.utils.prune against torch.nn.utils.prune (same weights copied through NumPy)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
from ptcore.nn.utils import prune as pp

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tp  # noqa: E402


def _pair(shape_in=6, shape_out=5, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((shape_out, shape_in)).astype(np.float32)
    b = rng.standard_normal(shape_out).astype(np.float32)
    pm, tm = pnn.Linear(shape_in, shape_out), torch.nn.Linear(shape_in, shape_out)
    with ptcore.no_grad():
        pm.weight.copy_(ptcore.tensor(w)); pm.bias.copy_(ptcore.tensor(b))
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w)); tm.bias.copy_(torch.tensor(b))
    return pm, tm


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


@pytest.mark.parametrize("amount", [0.3, 7, 0, 1.0])
def test_l1_unstructured_mask_and_forward(amount):
    pm, tm = _pair()
    pp.l1_unstructured(pm, "weight", amount=amount)
    tp.l1_unstructured(tm, "weight", amount=amount)
    np.testing.assert_array_equal(_np(pm.weight_mask), _np(tm.weight_mask))
    np.testing.assert_allclose(_np(pm.weight), _np(tm.weight))
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(_np(pm(ptcore.tensor(x))), _np(tm(torch.tensor(x))), rtol=1e-5, atol=1e-6)
    assert sorted(pm.state_dict().keys()) == sorted(tm.state_dict().keys())
    assert pp.is_pruned(pm) and not pp.is_pruned(pnn.Linear(2, 2))


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 1), (float("inf"), -1)])
def test_ln_structured_and_repeated(n, dim):
    pm, tm = _pair()
    pp.ln_structured(pm, "weight", amount=0.4, n=n, dim=dim)
    tp.ln_structured(tm, "weight", amount=0.4, n=n, dim=dim)
    np.testing.assert_array_equal(_np(pm.weight_mask), _np(tm.weight_mask))
    pp.l1_unstructured(pm, "weight", amount=5)
    tp.l1_unstructured(tm, "weight", amount=5)
    np.testing.assert_array_equal(_np(pm.weight_mask), _np(tm.weight_mask))
    hooks = [h for h in pm._forward_pre_hooks.values() if isinstance(h, pp.PruningContainer)]
    assert len(hooks) == 1 and len(hooks[0]) == 2


def test_global_and_custom_and_remove():
    pm, tm = _pair()
    pm2, tm2 = _pair(seed=3)
    pp.global_unstructured([(pm, "weight"), (pm2, "weight")], pruning_method=pp.L1Unstructured, amount=0.5)
    tp.global_unstructured([(tm, "weight"), (tm2, "weight")], pruning_method=tp.L1Unstructured, amount=0.5)
    np.testing.assert_array_equal(_np(pm.weight_mask), _np(tm.weight_mask))
    np.testing.assert_array_equal(_np(pm2.weight_mask), _np(tm2.weight_mask))
    m = (np.arange(5) % 2).astype(np.float32)
    pp.custom_from_mask(pm, "bias", ptcore.tensor(m))
    tp.custom_from_mask(tm, "bias", torch.tensor(m))
    np.testing.assert_array_equal(_np(pm.bias), _np(tm.bias))
    pp.remove(pm, "weight"); tp.remove(tm, "weight")
    assert sorted(pm.state_dict().keys()) == sorted(tm.state_dict().keys())
    np.testing.assert_allclose(_np(pm.weight), _np(tm.weight))
    with pytest.raises(ValueError):
        pp.remove(pm, "weight")


def test_random_methods_amounts():
    pm, _ = _pair()
    pp.random_unstructured(pm, "weight", amount=0.4)
    assert int((pm.weight_mask == 0).sum()) == 12
    pm, _ = _pair()
    pp.random_structured(pm, "weight", amount=2, dim=0)
    rows = _np(pm.weight_mask).sum(1)
    assert (rows == 0).sum() == 2 and set(rows.tolist()) <= {0.0, 6.0}


@pytest.mark.parametrize("amount,exc", [(-1, ValueError), (1.5, ValueError), ("a", TypeError), (31, ValueError)])
def test_bad_amount(amount, exc):
    pm, tm = _pair()
    with pytest.raises(exc):
        tp.l1_unstructured(tm, "weight", amount=amount)
    with pytest.raises(exc):
        pp.l1_unstructured(pm, "weight", amount=amount)
    assert "weight" in dict(pm.named_parameters())


def test_training_keeps_pruned_zero():
    pm, _ = _pair()
    pp.l1_unstructured(pm, "weight", amount=0.5)
    opt = ptcore.optim.SGD(pm.parameters(), lr=0.1)
    x = ptcore.randn(8, 6)
    for _ in range(3):
        opt.zero_grad()
        pm(x).pow(2).sum().backward()
        opt.step()
    mask = _np(pm.weight_mask)
    assert np.all(_np(pm.weight)[mask == 0] == 0)
    assert np.any(_np(pm.weight_orig)[mask == 0] != 0)


def test_state_dict_round_trip_and_importance_scores():
    pm, tm = _pair()
    scores = np.random.default_rng(5).standard_normal((5, 6)).astype(np.float32)
    pp.l1_unstructured(pm, "weight", amount=10, importance_scores=ptcore.tensor(scores))
    tp.l1_unstructured(tm, "weight", amount=10, importance_scores=torch.tensor(scores))
    np.testing.assert_array_equal(_np(pm.weight_mask), _np(tm.weight_mask))
    other, _ = _pair(seed=9)
    pp.identity(other, "weight")
    other.load_state_dict(pm.state_dict())
    np.testing.assert_array_equal(_np(other.weight_mask), _np(pm.weight_mask))
    x = ptcore.randn(2, 6)
    np.testing.assert_allclose(_np(other(x)), _np(pm(x)), rtol=1e-6)
