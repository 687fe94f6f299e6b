"""TorchRL on ptcore, unmodified, against torch (``torchrl_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), weights and
data from NumPy: replay buffers over tensor, memory-mapped and list storages (a ring writer
wrapping around, in-order sampling, indexing, a sampling transform); GAE, TD(0) and TD(lambda)
estimators (vectorized and loop forms, average GAE) and the functional estimators with
gradients; ClipPPOLoss (normalized advantage, clipped value loss, entropy bonus) and
KLPENPPOLoss, DQNLoss (double DQN, soft-updated target) and DDPGLoss over three Adam steps;
a CartPole rollout through transforms with a deterministic policy, then GAE and PPO updates.

What TorchRL took: ``torch.nn.parameter._ParameterMeta`` (imported at import time),
``torch.from_file(shared=True)`` creating and growing its file as torch's MapAllocator
(``LazyMemmapStorage``: tensordict maps new empty files), ``torch.StorageBase``, and vmap
calling ``torch._functorch.vmap``'s ``_process_batched_inputs``/``_create_batched_inputs``/
``_unwrap_batched`` through that module, where tensordict replaces them to carry TensorDicts
(the value estimators vmap their value network over a TensorDict).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchrl", "tensordict", "gymnasium")

NAMES = ["buffer", "values", "losses", "env"]
runs, test_torchrl = case_tests("torchrl_cases.py", NAMES, rtol=1e-4, atol=1e-5)
