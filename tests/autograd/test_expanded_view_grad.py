"""Gradients through a view taken of an expanded (stride-0) tensor: the
intermediate view overlaps itself, so the gradient must reach the root."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("op", [lambda x: x[..., 0], lambda x: x.select(-1, 1), lambda x: x.narrow(-1, 0, 1),
                                lambda x: x[:, :1].squeeze(-1)])
@pytest.mark.parametrize("nonleaf", [False, True])
def test_view_of_expanded_tensor(op, nonleaf):
    w = np.array([1.0, 2.0, 3.0])
    a = ptcore.tensor([0.5, -1.0, 2.0], dtype=ptcore.float64, requires_grad=True)
    t = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    src_a = a * 2 if nonleaf else a
    src_t = t * 2 if nonleaf else t
    (op(src_a.unsqueeze(-1).expand(3, 2)) * ptcore.tensor(w)).sum().backward()
    (op(src_t.unsqueeze(-1).expand(3, 2)) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())


def test_row_of_expanded_matrix():
    a = ptcore.tensor([1.0, 2.0], dtype=ptcore.float64, requires_grad=True)
    a.expand(4, 2)[2].sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("op", [lambda e: e.mT, lambda e: e.transpose(0, 2), lambda e: e[1],
                                lambda e: e.mT.contiguous(), lambda e: e.permute(2, 0, 1)])
def test_view_of_expanded_leaf_view(op):
    """The leaf requiring grad is itself a (transposed) view of a tensor that
    does not require grad: views of its expansion must still map back to it
    (cholesky_solve broadcasting a transposed factor hit this, 2x gradients)."""
    m = np.arange(9.0).reshape(3, 3)
    w = np.arange(18.0).reshape(2, 3, 3)
    grads = []
    for lib in (ptcore, torch):
        x = lib.tensor(m.T.copy()).T
        x.requires_grad_()
        e = x.expand(2, 3, 3)
        y = op(e)
        (y * lib.tensor(w.ravel()[:y.numel()]).reshape(y.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_cholesky_solve_with_transposed_factor():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 3))
    lc = np.linalg.cholesky(m @ m.T + 3 * np.eye(3))
    b = rng.standard_normal((2, 3, 4))
    grads = []
    for lib in (ptcore, torch):
        L = lib.tensor(lc.T.copy()).T
        L.requires_grad_()
        x = lib.cholesky_solve(lib.tensor(b), L)
        (x * x).sum().backward()
        grads.append(L.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", [lambda p: p.transpose(1, 2), lambda p: p.permute(2, 0, 1),
                                lambda p: p.mT])
def test_permuted_view_of_an_expanded_leaf(op):
    """The leaf requiring grad overlaps itself (w.expand(B, ...)): each batch
    entry still gets its own gradient through a transpose/permute."""
    w = np.arange(6.0).reshape(2, 3)
    grads = []
    for lib in (ptcore, torch):
        p = lib.tensor(w).expand(4, 2, 3).requires_grad_()
        y = op(p)
        (y * lib.arange(24.0, dtype=lib.float64).reshape(y.shape)).sum().backward()
        grads.append(p.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
