"""rotary-embedding-torch on ptcore, unmodified, against torch (``rotary_embedding_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), weights and inputs from NumPy: a causal attention layer with rotary embeddings
(partial rotation, xpos scaling, learned frequencies, interpolation with rescaled theta)
trained three Adam steps; queries against cached keys, offsets, sequence-first layouts; axial
pixel frequencies on image tokens with a gradient.  All agree to float32 rounding; the
library needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("rotary_embedding_torch")

NAMES = ["lang", "pixel"]
runs, test_rotary_embedding = case_tests("rotary_embedding_cases.py", NAMES, rtol=1e-4,
                                         atol=1e-5)
