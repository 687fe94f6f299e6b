"""Reverse-mode gradient of the nuclear norm (``norm(p="nuc")``), which raised
a KeyError before: U V^H of the reduced SVD, compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,kw", [((3, 4), {}), ((3, 4), {"keepdim": True}),
                                      ((2, 3, 4), {"dim": (1, 2)}),
                                      ((2, 3, 4), {"dim": (0, 2), "keepdim": True})])
def test_nuclear_norm_grad_matches_torch(shape, kw):
    a = np.random.default_rng(0).standard_normal(shape)
    w = np.random.default_rng(1).standard_normal(np.asarray(torch.norm(torch.tensor(a), p="nuc",
                                                                       **kw)).shape)
    x = ptcore.tensor(a, requires_grad=True)
    (ptcore.norm(x, p="nuc", **kw) * ptcore.tensor(w)).sum().backward()
    y = torch.tensor(a, requires_grad=True)
    (torch.norm(y, p="nuc", **kw) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-10, atol=1e-12)
