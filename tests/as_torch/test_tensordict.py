"""tensordict on ptcore, unmodified, against torch (``tensordict_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), data and
weights from NumPy: TensorDict construction with nested keys, slicing and boolean indexing,
``apply``, ``torch.stack``/``torch.cat``/``torch.where`` on TensorDicts, reshape, unbind,
reductions, ``flatten_keys``, ``update``/nested ``set``, ``masked_fill``, ``expand``,
``state_dict`` and ``torch.save`` round trips; ``TensorDictModule``/``TensorDictSequential``
trained three Adam steps, ``from_module``/``to_module`` parameter swapping and a tensorclass.
All agree to float32 rounding.

What tensordict took: ``torch._C._functorch`` (imported by name: the launcher aliases the
submodules ptcore._C registers) and ``torch._functorch.vmap``'s helpers, ``import functorch``
(``FunctionalModule``), ``torch.utils._contextlib``, pytree's ``_list_flatten`` family,
``nn.utils._named_member_accessor.swap_tensor``, ``torch._utils._get_device_module``,
``torch._C._is_alias_of``, ``torch._ops.HigherOrderOperator`` (an unhandled function raised
ImportError, not torch's TypeError) and the quantized dtypes (``torch.qint32`` ... in its dtype table,
from the quant branch: the test skips until ptcore has them).
"""
import pytest

import ptcore
from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("tensordict")
if not hasattr(ptcore, "qint32"):
    pytest.skip("tensordict lists the quantized dtypes at import (ptcore.qint32 ...)",
                allow_module_level=True)

NAMES = ["ops", "modules"]
runs, test_tensordict = case_tests("tensordict_cases.py", NAMES, rtol=1e-4, atol=1e-5)
