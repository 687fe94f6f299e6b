"""Pieces of the official PyTorch tutorials beyond the basics (char-RNN, seq2seq, DQN, spatial
transformer, neural style transfer, FGSM, LSTM tagger, Bi-LSTM CRF), run under ptcore and
compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ptcore), fn(torch)


# ---------------------------------------------------------------------------
# Spatial transformer networks: an identity-initialised localisation net puts every grid
# point exactly on a pixel centre, where bilinear grid_sample's gradient jumps; linspace and
# affine_grid must be torch's values bit for bit there.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64",
                                   "complex128", "int32", "int64"])
@pytest.mark.parametrize("steps", [2, 7, 8, 13, 28, 40, 100, 1000, 4097])
@pytest.mark.parametrize("ends", [(-1, 1), (0, 3.7), (2.5, -7.1), (-3, 100)])
def test_linspace_bitwise_matches_torch(dtype, steps, ends):
    a, b = ends
    if dtype.startswith("complex"):
        b = complex(b, 0.5)
    p, t = _both(lambda L: L.linspace(a, b, steps, dtype=getattr(L, dtype)))
    assert str(p.dtype).split(".")[-1] == dtype
    wide = "complex128" if dtype.startswith("complex") else "float64"
    np.testing.assert_array_equal(p.to(getattr(ptcore, wide)).numpy(),
                                  t.to(getattr(torch, wide)).numpy())


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(3, 1, 28, 28), (3, 2, 7, 13), (3, 1, 2, 1), (3, 1, 4, 5, 6)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid_bitwise_matches_torch(align_corners, size, dtype):
    rng = np.random.default_rng(0)
    nd = len(size) - 2
    th = rng.standard_normal((3, nd, nd + 1)).astype(dtype)
    th[0] = np.eye(nd, nd + 1)
    p, t = _both(lambda L: L.nn.functional.affine_grid(L.from_numpy(th.copy()), size,
                                                       align_corners=align_corners))
    np.testing.assert_array_equal(p.numpy(), t.numpy())


def test_stn_identity_theta_gradient_matches_torch():
    # the tutorial's fc_loc[2] starts at weight 0, bias [1, 0, 0, 0, 1, 0]: the first step's
    # gradient with respect to theta must not depend on 1-ulp grid differences
    rng = np.random.default_rng(1)
    x = rng.random((2, 1, 28, 28), dtype=np.float32)

    def run(L):
        F = L.nn.functional
        theta = L.tensor([1, 0, 0, 0, 1, 0], dtype=L.float).repeat(2, 1).requires_grad_(True)
        grid = F.affine_grid(theta.view(-1, 2, 3), (2, 1, 28, 28), align_corners=False)
        out = F.grid_sample(L.from_numpy(x.copy()), grid, align_corners=False)
        (out * out.flip(-1)).sum().backward()
        return out.detach(), theta.grad

    (po, pg), (to, tg) = _both(run)
    np.testing.assert_allclose(po.numpy(), to.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)


def test_affine_grid_errors_show_size_as_passed():
    th = np.zeros((2, 3, 4), np.float32)
    for size in [(2, 1, 4, 4), [2, 1, 4, 4]]:
        msgs = []
        for L in (ptcore, torch):
            with pytest.raises(ValueError) as ei:
                L.nn.functional.affine_grid(L.from_numpy(th), size, align_corners=False)
            msgs.append(str(ei.value).replace("ptcore", "torch"))
        assert msgs[0] == msgs[1]
