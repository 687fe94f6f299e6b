"""snntorch (spiking neural networks) on ptcore, unmodified, against torch
(``spiking_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), weights and data from NumPy: leaky integrate-and-fire neurons
through seven surrogate gradients (custom autograd functions) and each reset mechanism, with
learnable decay and threshold; synaptic, alpha and Lapicque neurons; recurrent RLeaky and
RSynaptic (all-to-all and one-to-one), SLSTM, the convolutional SConv2dLSTM and LeakyParallel
(an RNN underneath), with gradients; latency and delta encoders and rate targets; a
convolutional spiking network holding its hidden state, trained by backpropagation through
time on the rate-coded cross-entropy and the spike-count MSE, with accuracy, state
quantization and membrane losses.  All agree to float32 rounding, spikes exactly.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("snntorch")

NAMES = ["neurons", "recurrent", "encoders", "training"]
# the trained weights: Adam divides gradients near 1e-8 (of weights that hardly matter) by
# their own running size, so float32 rounding of those gradients (both libraries' agree to
# 1e-9) moves a weight by up to 1e-4 after five steps
runs, test_snntorch = case_tests("spiking_cases.py", NAMES, rtol=1e-4, atol=1e-5,
                                 per_case={"training": {"weights": {"rtol": 1e-3,
                                                                    "atol": 2e-4}}})
