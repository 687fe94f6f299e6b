"""split/chunk record their pieces as the outputs of one node (PyTorch's
SplitBackward0 / SplitWithSizesBackward0, whose backward concatenates the
pieces' gradients): node identity and names, gradients with unused pieces,
double backward, pieces of views and of leaves, and in-place writes to a
piece (PyTorch refuses them; ptcore gives each piece its own view node from
the base's new history, with correct gradients)."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None


def test_one_node_for_all_pieces():
    x = ptcore.randn(4, 6, requires_grad=True)
    a, b, c = x.split(2, dim=1)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    assert a.grad_fn.name() == "SplitBackward0"
    assert [t._output_nr for t in (a, b, c)] == [0, 1, 2]
    p, q = x.split([1, 5], dim=1)
    assert p.grad_fn is q.grad_fn and p.grad_fn.name() == "SplitWithSizesBackward0"
    assert x.chunk(3, 0)[0].grad_fn.name() == "SplitBackward0"
    assert all(t._base is x for t in (a, b, c))


def test_gradients_with_unused_pieces():
    xv = np.arange(30.0).reshape(5, 6)
    x = ptcore.from_numpy(xv.copy()).requires_grad_()
    a, b, c = x.split([1, 3, 2], dim=1)
    (b * b).sum().backward()
    want = np.zeros_like(xv)
    want[:, 1:4] = 2 * xv[:, 1:4]
    np.testing.assert_array_equal(x.grad.numpy(), want)
    x.grad = None
    a, b, c = x.split([1, 3, 2], dim=1)
    (a.sum() * 2 + c.sum() * 3).backward()
    want = np.zeros_like(xv)
    want[:, 0] = 2
    want[:, 4:] = 3
    np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dim,spec", [(0, 2), (1, [2, 1, 3]), (-1, 4), (2, 1)])
def test_matches_torch(dim, spec):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((4, 6, 5)).astype(np.float32)
    res = []
    for lib in (ptcore, torch):
        x = lib.from_numpy(xv.copy()).requires_grad_()
        h = x * 1.5                                  # a non-leaf source
        pieces = h.split(spec, dim)
        w = [lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
             for p in pieces]
        rng = np.random.default_rng(0)               # the same weights for both
        rng.standard_normal((4, 6, 5))
        loss = sum((p * wi).sum() for p, wi in list(zip(pieces, w))[::2])
        loss.backward()
        res.append((x.grad.numpy().copy(), pieces[0].grad_fn.name()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6)
    assert res[0][1] == res[1][1]


def test_double_backward():
    x = ptcore.randn(3, 6, dtype=ptcore.float64, requires_grad=True)

    def f(x):
        a, b, c = x.split(2, dim=1)
        return (a * b).sum(1) + (c ** 3).sum(1)
    assert ptcore.autograd.gradcheck(f, (x,))
    assert ptcore.autograd.gradgradcheck(f, (x,))


def test_in_place_write_to_a_piece():
    xv = np.arange(24.0).reshape(4, 6)
    x = ptcore.from_numpy(xv.copy()).requires_grad_()
    y = x * 1
    a, b = y.chunk(2, 1)
    # torch forbids writing into one output of a multiple-view op (its
    # CreationMeta::MULTIPLE_OUTPUTS; tests/autograd/test_multi_output_views.py)
    with pytest.raises(RuntimeError, match="^Output 0 of Split is a view and is being modified"):
        a.mul_(5)
    with ptcore.no_grad():
        a.mul_(1)       # allowed without recording
    # a piece used after its source was written in place: torch cannot rebuild the
    # history of one output of a multiple-view op and raises when it is read
    y = x * 1
    a, b = y.chunk(2, 1)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="^Output 1 of Split is a view and its base or "
                                           "another view of its base has been modified"):
        (b * 3).sum().backward()
    assert x.grad is None
    # (without the write the piece's gradient flows as before)
    y = x * 1
    a, b = y.chunk(2, 1)
    (b * 3).sum().backward()
    want = np.zeros_like(xv)
    want[:, 3:] = 3
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_pieces_of_a_leaf_and_hooks():
    x = ptcore.randn(2, 8, requires_grad=True)
    a, b = x.split(4, 1)
    seen = []
    a.register_hook(lambda g: seen.append(g.clone()))
    a.retain_grad()
    (a * 2).sum().backward()
    assert np.array_equal(a.grad.numpy(), np.full((2, 4), 2.0))
    assert len(seen) == 1 and np.array_equal(seen[0].numpy(), np.full((2, 4), 2.0))
    np.testing.assert_array_equal(x.grad.numpy()[:, :4], 2)
    np.testing.assert_array_equal(x.grad.numpy()[:, 4:], 0)


def test_no_node_without_recording():
    x = ptcore.randn(4, 6, requires_grad=True)
    with ptcore.no_grad():
        a, b = x.split(3, 1)
    assert a.grad_fn is None and not a.requires_grad
    y = ptcore.randn(4, 6)
    assert y.split(3, 1)[0].grad_fn is None
    (single,) = x.split(6, 1)                    # one piece: a plain view node
    assert single.grad_fn.name() == "SplitBackward0"
