"""``p.grad = sparse`` is accepted (with torch's shape/dtype checks) and the
optimizers that take sparse gradients step with it, as torch."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def test_assign_sparse_grad_and_step():
    got = {}
    for L in (torch, ptcore):
        p = L.zeros(4, 3, requires_grad=True)
        p.grad = L.sparse_coo_tensor([[0, 2], [1, 0]], L.tensor([1.0, 2.0]), (4, 3))
        assert p.grad.is_sparse
        L.optim.SGD([p], lr=0.5).step()
        got[L] = p.detach().tolist()
        with pytest.raises(RuntimeError):
            p.grad = L.sparse_coo_tensor([[0], [1]], L.tensor([1.0]), (5, 3))
        with pytest.raises(RuntimeError):
            p.grad = L.sparse_coo_tensor([[0], [1]], L.tensor([1.0], dtype=L.float64), (4, 3))
        with pytest.raises(TypeError):
            p.grad = [1.0]
    assert got[ptcore] == got[torch]
