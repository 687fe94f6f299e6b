"""vmap of the unsafe/copy split variants splits as their plain op (the batching rule
called .split(chunks) for unsafe_chunk: pieces of size 2 instead of 2 pieces)."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("fn", [
    lambda L, a: L.unsafe_chunk(a, 2)[0],
    lambda L, a: L.unsafe_chunk(a, 3, 1)[-1],
    lambda L, a: L.split_with_sizes_copy(a, [1, 2], 1)[1],
    lambda L, a: L.unsafe_split(a, 1, 1)[1],
    lambda L, a: L.chunk(a, 2, 1)[1],
])
def test_vmap_of_split_variants_as_torch(fn):
    x = [[float(4 * i + j) for j in range(3)] for i in range(4)]
    got = ptcore.func.vmap(lambda a: fn(ptcore, a))(ptcore.tensor(x).reshape(2, 2, 3))
    want = torch.func.vmap(lambda a: fn(torch, a))(torch.tensor(x).reshape(2, 2, 3))
    assert got.tolist() == want.tolist()
