"""F.embedding's recorded node against torch: one EmbeddingBackward0 node, the
weight gradient (padding_idx, scale_grad_by_freq, max_norm), its second
derivative and forward-mode tangents."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_W = np.random.default_rng(0).standard_normal((6, 3))
_IDS = [[0, 2, 2, 5], [4, 1, 0, 2]]


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                {"max_norm": 1.0}])
def test_embedding_gradients_match_torch(kw):
    got = []
    for lib in (ptcore, torch):
        w = lib.tensor(_W.copy(), requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(_IDS), w, **kw)
        assert type(y.grad_fn).__name__ == "EmbeddingBackward0"
        assert y.grad_fn.next_functions[0][0].variable is w
        g, = lib.autograd.grad((y ** 3).sum(), w, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), w)
        got.append((y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_embedding_scale_grad_by_freq_first_derivative():
    got = []
    for lib in (ptcore, torch):
        w = lib.tensor(_W.copy(), requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(_IDS), w, scale_grad_by_freq=True)
        (y * lib.arange(24.0, dtype=lib.float64).reshape(2, 4, 3)).sum().backward()
        got.append(w.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)


def test_embedding_forward_tangent():
    got = []
    for lib in (ptcore, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(_W.copy()), lib.tensor(_W[::-1].copy()))
            got.append(fw.unpack_dual(lib.nn.functional.embedding(lib.tensor(_IDS), d))
                       .tangent.numpy())
    np.testing.assert_allclose(got[0], got[1])
