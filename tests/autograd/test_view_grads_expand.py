"""Gradients through expand/expand_as views against torch (the view's backward
sums the expanded dims and hands the result to the base without a placement)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("bshape,eshape,perm", [
    ((32, 1), (32, 64), None),
    ((3, 1, 4), (3, 5, 4), None),
    ((1, 1), (2, 3), None),
    ((4, 1, 3), (2, 4, 6, 3), None),       # a new leading dim too
    ((3, 4), (3, 4), None),                # expand to the same shape
    ((1, 4, 3), (5, 3, 4), (0, 2, 1)),     # a permuted (strided) view expanded
])
def test_expand_gradient_matches_torch(bshape, eshape, perm):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(bshape)
    w = rng.standard_normal(eshape)
    grads = []
    for lib in (ptcore, torch):
        x = lib.tensor(a, requires_grad=True)
        v = x.permute(*perm) if perm else x
        (v.expand(*eshape) * lib.tensor(w)).sum().backward()
        grads.append(x.grad.detach().numpy())
        y = lib.tensor(a, requires_grad=True)
        (y.expand_as(lib.tensor(w)) if perm is None else y.permute(*perm).expand(*eshape)).sum()\
            .backward()
        grads.append(y.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[3], rtol=1e-12)
