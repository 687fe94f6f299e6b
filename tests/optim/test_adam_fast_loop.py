"""The Adam/AdamW kernel's branch-free loop (ptcore/_ops/kernels/_optim.pyx) gives the
same bits as its general loop: the general loop runs for maximize=True, so
maximizing with -g must equal minimizing with g exactly, for beta1 either
side of 0.5 (DCGAN's 0.5 takes lerp's other form) and with decoupled weight
decay (AdamW)."""
import numpy as np
import pytest

import ptcore


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("betas", [(0.5, 0.999), (0.9, 0.999), (0.3, 0.99), (0.75, 0.9)])
@pytest.mark.parametrize("cls,wd", [(ptcore.optim.Adam, 0.0), (ptcore.optim.AdamW, 0.1)])
def test_fast_loop_matches_general_loop(dt, betas, cls, wd):
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(1037).astype(dt)
    a = ptcore.from_numpy(p0.copy()).requires_grad_()
    b = ptcore.from_numpy(p0.copy()).requires_grad_()
    oa = cls([a], lr=1e-2, betas=betas, weight_decay=wd)
    ob = cls([b], lr=1e-2, betas=betas, weight_decay=wd, maximize=True)
    for _ in range(6):
        g = rng.standard_normal(1037).astype(dt)
        a.grad = ptcore.from_numpy(g.copy())
        b.grad = ptcore.from_numpy(-g)
        oa.step()
        ob.step()
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    sa, sb = oa.state[a], ob.state[b]
    assert np.array_equal(sa["exp_avg"].numpy(), sb["exp_avg"].numpy())
    assert np.array_equal(sa["exp_avg_sq"].numpy(), sb["exp_avg_sq"].numpy())
