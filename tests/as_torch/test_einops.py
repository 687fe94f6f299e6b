"""einops beyond ``rearrange`` on ptcore, unmodified, against torch (``einops_cases.py``, run
with the real torch and under ``python -m ptcore.as_torch`` in an environment without torch),
data and weights from NumPy: ``pack``/``unpack``, ``einsum``, ``repeat``, ``reduce`` with each
named reduction and a callable one (with gradients), ``parse_shape``, list inputs; the
``EinMix`` layers (reshaped axes, per-head weights with bias) with ``Rearrange``/``Reduce`` in
a model trained three Adam steps and reloaded, the layers under ``torch.jit.script``, and
``torch.compile`` of pack/unpack/reduce/einsum after ``allow_ops_in_compiled_graph``.  All
agree to float32 rounding; none needed a change in ptcore."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("einops")

NAMES = ["functions", "layers", "compiled"]
runs, test_einops = case_tests("einops_cases.py", NAMES, rtol=1e-4, atol=1e-5)
