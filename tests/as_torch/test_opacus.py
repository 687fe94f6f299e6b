"""Opacus on ptcore, unmodified, against torch (``opacus_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch), weights and data
from NumPy: per-sample gradients from its module hooks (conv2d/conv1d, group and layer norm,
linear, embedding, DP-LSTM, DP multi-head attention) and from its torch.func path (vmap of
grad over a layer it has no hook for), and the privacy engine's DP-SGD steps (flat and
per-layer clipping with hooks, torch.func, ghost clipping; noise multiplier 0, so the steps
are the clipped mean gradients and both runs draw no random numbers).  All agree to float32
rounding (rtol 1e-4).

What Opacus took: ``torch.distributed._tensor`` (the old name of ``torch.distributed.tensor``,
imported at module level by its FSDP optimizer) with ``experimental.implicit_replication``.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("opacus")

NAMES = ["grad_sample", "private"]
runs, test_opacus = case_tests("opacus_cases.py", NAMES, rtol=1e-4, atol=1e-5)
