"""Compiled code given an input whose storage shrank below its extent raises
torch's setStorage RuntimeError, as eager code does: the fused pointwise chains
(ptcore._ops.kernels._fused), the GEMM epilogues, reductions after a chain, an
input mutated in place, the segments' direct calls and backward through a
compiled function, after the function was captured with intact inputs (the
guards see the same sizes, strides and dtype, so the compiled path runs).  The
probes run in a fresh interpreter: a crash names the probe that died."""
from storage_shrink_probe import compile_sweep


def test_compiled_code_refuses_a_shrunk_input():
    results, dead = compile_sweep("cpu")
    assert dead is None, dead
    assert len(results) > 200
    bad = [r for r in results if not r.endswith(" raised")]
    assert not bad, "\n".join(bad)
