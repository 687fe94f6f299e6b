"""The passes over a segment's forward nodes, the same for a training step's
forward (:mod:`ptcore._inductor.aot`, where the values the backward reads
are live too) and an inference segment (:mod:`ptcore._inductor.backend`):
batched products called directly, products computed into the place a copy
would take them, the masked softmax's chain, GEMM epilogues (bias, ReLU,
GELU, residual add), the Linear over a transposed input and the chains of
layout ops to attention's operands (one view) -- each step
checking at run time what its kernel needs and running the chain's own ops
otherwise."""
from ptcore._inductor import copies, direct_calls, epilogues, layout_chains, masked_softmax

__all__ = ["fuse_forward", "fused_steps"]


def fuse_forward(nodes, values, live, skip):
    """``nodes`` with the passes above applied; ``values``: the graph's values
    (shapes, dtypes); ``live``: the value ids read after ``nodes``; ``skip``:
    ids of nodes that stay as they are (guards' checks, opaque calls)."""
    nodes = direct_calls.direct_products(nodes, values, skip=skip)
    nodes = copies.fold_products_into_place(nodes, live, values, skip=skip)
    nodes = masked_softmax.fuse_masked_softmax(nodes, live, values, skip=skip)
    if epilogues.enabled[0]:
        nodes = epilogues.fuse_epilogues(nodes, values, live, skip=skip)
        nodes = epilogues.fuse_transposed_linear(nodes, values, live, skip=skip)
    nodes = layout_chains.fold_view_chains(nodes, live, skip=skip)
    return nodes


def fused_steps(nodes):
    """How many of ``nodes`` are steps that run more than one op in one kernel
    (GEMM epilogues, the transposed Linear, masked softmax steps)."""
    return sum(isinstance(n, (epilogues.GemmEpilogue, epilogues.TransposedLinear,
                              masked_softmax.MaskedSoftmax, masked_softmax.MaskedSoftmaxGrad))
               for n in nodes)
