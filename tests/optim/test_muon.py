"""optim.Muon against torch.optim.Muon (same start, same gradients)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kw", [{}, {"nesterov": False, "weight_decay": 0.0},
                                {"adjust_lr_fn": "match_rms_adamw", "lr": 0.02},
                                {"momentum": 0.5, "ns_steps": 3}])
@pytest.mark.parametrize("shape", [(6, 4), (3, 7)])
def test_muon_steps_match_torch(kw, shape):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(shape).astype(np.float32)
    tp, pp = torch.tensor(w0, requires_grad=True), ptcore.tensor(w0, requires_grad=True)
    topt, popt = torch.optim.Muon([tp], **kw), ptcore.optim.Muon([pp], **kw)
    for _ in range(4):
        g = rng.standard_normal(shape).astype(np.float32)
        tp.grad, pp.grad = torch.tensor(g), ptcore.tensor(g)
        topt.step()
        popt.step()
        # the orthogonalization runs in bfloat16 (torch's too): agree to bf16 rounding
        np.testing.assert_allclose(pp.detach().numpy(), tp.detach().numpy(), rtol=0, atol=2e-3)
    np.testing.assert_allclose(popt.state[pp]["momentum_buffer"].numpy(),
                               topt.state[tp]["momentum_buffer"].numpy(), rtol=1e-6, atol=1e-6)


def test_orthogonalization_is_near_orthogonal():
    from ptcore.optim.muon import _zeropower_via_newtonschulz
    g = ptcore.randn(8, 5)
    o = _zeropower_via_newtonschulz(g, (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
    s = np.linalg.svd(o, compute_uv=False)
    assert o.shape == (8, 5) and (s > 0.5).all() and (s < 1.5).all()


def test_muon_errors_and_closure():
    for m in (torch, ptcore):
        with pytest.raises(ValueError, match="2D parameters"):
            m.optim.Muon([m.zeros(3, requires_grad=True)])
        with pytest.raises(ValueError):
            m.optim.Muon([m.zeros(2, 2, requires_grad=True)], lr=-1.0)
        with pytest.raises(ValueError, match="not supported"):
            m.optim.Muon([m.zeros(2, 2, requires_grad=True)], adjust_lr_fn="x")
    p = ptcore.ones(3, 3, requires_grad=True)
    opt = ptcore.optim.Muon([p])

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 9.0
    sd = opt.state_dict()
    opt2 = ptcore.optim.Muon([ptcore.ones(3, 3, requires_grad=True)])
    opt2.load_state_dict(sd)
    assert "momentum_buffer" in next(iter(opt2.state.values()))
