"""Second derivatives through the normalizations as torch: forward AD over
their backward (func.hessian, jacfwd(grad)) differentiates the statistics
too, and a double backward of batch_norm counts a bias computed from the
weight once."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(build):
    return {L: build(L) for L in (torch, ptcore)}


def test_hessian_through_norms():
    def build(L):
        F = L.nn.functional
        g = np.random.default_rng(0)
        x = L.from_numpy(g.standard_normal((1, 2, 5)))
        gg = L.from_numpy(g.standard_normal((1, 2, 5)))
        w = L.from_numpy(g.standard_normal(2))
        out = [L.func.hessian(lambda t: (F.instance_norm(t) * gg).sum() ** 2)(x),
               L.func.jacfwd(L.func.grad(lambda t: (F.group_norm(t, 1) ** 3 * gg).sum()))(x),
               L.func.hessian(lambda t: ((F.batch_norm(t, None, None, w, w, training=True) * gg) ** 3).sum())(x)]
        return [o.numpy() for o in out]
    got = _both(build)
    for a, b in zip(got[torch], got[ptcore]):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)


def test_batch_norm_double_backward_bias_from_weight():
    def build(L):
        F = L.nn.functional
        g = np.random.default_rng(1)
        x = L.from_numpy(g.standard_normal((4, 3, 5))).requires_grad_()
        w = L.from_numpy(g.standard_normal(3)).requires_grad_()
        gg = L.from_numpy(g.standard_normal((4, 3, 5)))
        y = F.batch_norm(x, None, None, w, w * 2, training=True)
        gw, = L.autograd.grad((y * gg).sum(), [w], create_graph=True)
        return gw.detach().numpy()
    got = _both(build)
    np.testing.assert_allclose(got[ptcore], got[torch], rtol=1e-10)
