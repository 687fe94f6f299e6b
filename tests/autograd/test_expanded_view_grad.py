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
