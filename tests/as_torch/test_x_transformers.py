"""x-transformers on ptcore, unmodified, against torch (``x_transformers_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch),
weights and tokens from NumPy: decoder-only language models with rotary/ALiBi/relative
position biases, RMSNorm, GLU and swish feed-forwards, QK-norm, grouped key/value heads,
sandwich norm and gated values, trained three steps through the AutoregressiveWrapper and
decoded greedily; an encoder with memory tokens, residual attention and a padding mask
(embeddings, intermediates); an encoder-decoder XTransformer's loss and generation.  All
agree to float32 rounding (SGD: Adam's first steps turn gradient elements that are zero but
for rounding into learning-rate steps of either sign).  x-transformers (with einx and
einops) needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("x_transformers")

NAMES = ["decoder", "encoder", "encoder_decoder"]
runs, test_x_transformers = case_tests("x_transformers_cases.py", NAMES)
