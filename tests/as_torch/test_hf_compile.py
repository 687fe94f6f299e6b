"""Hugging Face models (GPT-2, ViT, MobileViT) trained through ``ptcore.compile`` under the
launcher, against torch eager (``hf_compile_cases.py``): the loss, logits and every gradient
of the compiled model, three SGD steps and the eval-mode logits after them agree to float32
rounding.  MobileViT's unfolding failed under ptcore.compile before ``jit.is_tracing()``
became False there (as torch's)."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("transformers")

NAMES = ["gpt2", "vit", "mobilevit"]
runs, test_hf_compile = case_tests("hf_compile_cases.py", NAMES, rtol=1e-4, atol=1e-5)
