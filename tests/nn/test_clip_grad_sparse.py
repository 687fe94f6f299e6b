"""clip_grad_norm_ / get_total_norm of sparse gradients raise NotImplementedError, as torch."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _sparse_grad(lib):
    lib.manual_seed(0)
    emb = lib.nn.Embedding(10, 3, sparse=True)
    emb(lib.tensor([1, 2, 2])).sum().backward()
    return emb


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_sparse_raises_like_torch(norm_type):
    t_emb = _sparse_grad(torch)
    with pytest.raises(NotImplementedError):
        torch.nn.utils.clip_grad_norm_(t_emb.parameters(), 1.0, norm_type=norm_type)
    p_emb = _sparse_grad(ptcore)
    before = p_emb.weight.grad.to_dense().clone()
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        ptcore.nn.utils.clip_grad_norm_(p_emb.parameters(), 1.0, norm_type=norm_type)
    # nothing was scaled
    assert ptcore.equal(p_emb.weight.grad.to_dense(), before)


def test_get_total_norm_sparse_raises_and_dense_still_works():
    p_emb = _sparse_grad(ptcore)
    with pytest.raises(NotImplementedError):
        ptcore.nn.utils.get_total_norm([p_emb.weight.grad])
    g = [ptcore.tensor([3.0, 4.0]), ptcore.tensor([12.0])]
    assert float(ptcore.nn.utils.get_total_norm(g)) == pytest.approx(13.0)
