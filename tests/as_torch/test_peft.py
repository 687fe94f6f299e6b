"""PEFT on ptcore, unmodified, against torch (``peft_cases.py``, run with the real torch and
under ``python -m ptcore.as_torch`` in an environment without torch), on tiny randomly
initialised transformers models (no downloads) and a small CNN, every weight from NumPy:
LoRA on GPT-2's Conv1D layers (training, disabling, a second adapter, a weighted
combination, save/load of the adapter, merge and unload); DoRA, rsLoRA with
modules_to_save, LoHa, LoKr, IA3, OFT, BOFT and VeRA on Llama; prompt tuning, prefix
tuning and P-tuning (MLP and LSTM prompt encoders) with generation; LoRA on Conv2d,
Embedding and Linear layers, ``inject_adapter_in_model`` and AdaLoRA's rank allocation.
All agree to float32 rounding.

What PEFT took: ``torch.utils.cpp_extension`` (BOFT imports ``load`` to try a CUDA kernel
and falls back when it raises); and, found by a sample of PEFT's own test_custom_models.py,
``dense += sparse`` in place (SHiRA) and an in-place add on the transpose of a reshape that
copied (GraLoRA).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("peft", "transformers")

NAMES = ["lora_gpt2", "llama_tuners", "prompt_learning", "custom_model"]
runs, test_peft = case_tests("peft_cases.py", NAMES, rtol=2e-5, atol=2e-6)
