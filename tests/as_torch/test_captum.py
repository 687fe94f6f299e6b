"""Captum on ptcore, unmodified, against torch (``captum_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch), on a small CNN
with weights and inputs from NumPy: Integrated Gradients (three integration methods, their
convergence deltas, internal batching), Saliency, InputXGradient, Guided Backprop and
Deconvolution (ReLU backward hooks), DeepLift; GradCAM and its upsampling, Guided GradCAM,
layer activations, gradient x activation, conductance, layer and neuron Integrated
Gradients, neuron gradients; Occlusion and feature ablation (with a feature mask); and a
training step with a saliency penalty (double backward).  All agree to float32 rounding.

What Captum took: ``torch.futures.Future`` subscriptable (``Future[Tensor]``, generic as
torch's) and ``torch.Future``.  Its sampling methods (GradientShap, NoiseTunnel, Lime,
KernelShap, FeaturePermutation) run too but draw from ptcore's generator, not torch's, and
are not compared.
"""
import importlib.util
import pytest

torch = pytest.importorskip("torch")
# (found, not imported: the library would be imported next to the real torch in the
# test process, and some patch torch on import -- torch_geometric replaces
# torch.index_select -- which changes what later tests compare against)
if importlib.util.find_spec("captum") is None:
    pytest.skip("captum is not installed", allow_module_level=True)

from case_results import cases_fixture, compare_case  # noqa: E402  (tests/as_torch)

NAMES = ["gradient", "layer", "perturbation", "training"]
runs = cases_fixture("captum_cases.py", NAMES)


@pytest.mark.parametrize("case", NAMES)
def test_captum(runs, case):
    compare_case(runs, case, rtol=1e-5, atol=1e-6)
