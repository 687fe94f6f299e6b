"""``torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex`` (flex attention's
indexing mode, which transformers' masks use) and flex_attention's block-size constants,
against torch."""
import pytest

import ptcore
from ptcore._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
from ptcore.nn.attention import flex_attention as pfa

torch = pytest.importorskip("torch")
from torch._dynamo._trace_wrapped_higher_order_op import (  # noqa: E402
    TransformGetItemToIndex as TorchTransform)

CASES = {
    "0d": lambda L, x: x[L.tensor(1)],
    "0d_pair": lambda L, x: x[L.tensor(1), L.tensor(2)],
    "int_and_0d": lambda L, x: x[2, L.tensor(0)],
    "int": lambda L, x: x[1],
    "1d": lambda L, x: x[L.tensor([2, 0])],
    "slice_falls_back": lambda L, x: x[1:, L.tensor(1)],
    "vmap": lambda L, x: L.vmap(L.vmap(lambda i, j: x[i, j], (None, 0)), (0, None))(
        L.arange(3), L.arange(4)),
    "other_ops_unchanged": lambda L, x: (x * 2).sum(0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_transform_getitem_to_index_as_torch(case):
    fn = CASES[case]
    x_t = torch.arange(12.0).view(3, 4)
    x_p = ptcore.arange(12.0).view(3, 4)
    with TorchTransform():
        want = fn(torch, x_t)
    with TransformGetItemToIndex():
        got = fn(ptcore, x_p)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.tolist() == want.tolist()


def test_flex_attention_block_size_constants():
    from torch.nn.attention import flex_attention as tfa
    assert pfa._DEFAULT_SPARSE_BLOCK_SIZE == tfa._DEFAULT_SPARSE_BLOCK_SIZE
    assert pfa._LARGE_SPARSE_BLOCK_SIZE == tfa._LARGE_SPARSE_BLOCK_SIZE
