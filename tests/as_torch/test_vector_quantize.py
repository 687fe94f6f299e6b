"""vector-quantize-pytorch on ptcore, unmodified, against torch (``vector_quantize_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), codebooks, weights and inputs from NumPy: VectorQuantize with EMA codebook updates
and the rotation trick, cosine similarity over two heads with separate codebooks, image
feature maps with orthogonal regularisation and codes back to outputs; ResidualVQ; FSQ,
LFQ (entropy and commitment losses) and ResidualFSQ, each under a linear encoder trained
three Adam steps.  Losses, indices, codebooks and gradients agree to float32 rounding.

What the library took: ``torch.distributed.nn`` (its lookup-free quantizer imports it at
module level for an autograd-aware ``all_reduce``), now ``ptcore.distributed.nn``.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("vector_quantize_pytorch")

NAMES = ["vq", "residual", "scalar"]
runs, test_vector_quantize = case_tests("vector_quantize_cases.py", NAMES, rtol=1e-4,
                                        atol=1e-5)
