"""nn.CrossMapLRN2d (Lua torch's LRN with its own backward) against torch 2.13."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("size", [2, 3, 5, 6])
@pytest.mark.parametrize("channels", [1, 4, 7])
def test_cross_map_lrn_matches_torch(size, channels):
    x = np.random.default_rng(size).standard_normal((2, channels, 3, 4))
    g = np.random.default_rng(9).standard_normal(x.shape)
    tx, px = torch.tensor(x, requires_grad=True), ptcore.tensor(x, requires_grad=True)
    ty = torch.nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(tx)
    py = pnn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(px)
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    ty.backward(torch.tensor(g))
    py.backward(ptcore.tensor(g))
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_cross_map_lrn_defaults_repr_errors():
    x = np.random.default_rng(0).standard_normal((1, 5, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(pnn.CrossMapLRN2d(3)(ptcore.tensor(x)).numpy(),
                               torch.nn.CrossMapLRN2d(3)(torch.tensor(x)).numpy(), rtol=1e-6)
    assert repr(pnn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError):
        torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="4D"):
        pnn.CrossMapLRN2d(3)(ptcore.zeros(2, 3, 4))
    from ptcore.nn.modules.normalization import CrossMapLRN2d
    assert CrossMapLRN2d is pnn.CrossMapLRN2d
