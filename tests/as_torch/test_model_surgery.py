"""Libraries that rewrite or differentiate through models on ptcore, unmodified, against torch
(``model_surgery_cases.py``, run with the real torch and under ``python -m ptcore.as_torch``
in an environment without torch), weights and data from NumPy: torch-pruning (the dependency
group of a conv coupled to another through a residual, found by walking the autograd graph
from each layer's output; magnitude- and Taylor-importance pruners over two steps, the pruned
shapes, MACs and outputs) and higher (MAML-style inner SGD and Adam loops on a monkeypatched
functional copy, second-order outer gradients, three outer Adam steps; a functional call with
explicit parameters).  All agree to float32 rounding (rtol 1e-4), groups and shapes exactly.

What torch-pruning took: evaluation-mode batch norm, group norm and prelu as one node each
(``NativeBatchNormBackward0``, ``NativeGroupNormBackward0``, ``PreluKernelBackward0``) over the
input's and the parameters' nodes, and instance norm as torch's View/NativeBatchNorm/Repeat
composite: ptcore built them from the nodes of ``weight * rsqrt(running_var + eps)``, the
standardisation, the affine ops and ``where``, which the dependency graph listed as extra
element-wise and reshape members of the groups.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"pruning": "torch_pruning", "meta_learning": "higher"}
runs, test_model_surgery = library_case_tests("model_surgery_cases.py", LIBS, rtol=1e-4, atol=1e-5)
