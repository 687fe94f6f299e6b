"""torchinfo and thop on ptcore, unmodified, against torch (``model_stats_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch): the
whole printed torchinfo summary (layer tree, input/output shapes, kernel shapes, parameter
counts and shares, mult-adds, trainable flags, memory estimates) of a CNN, an embedding+LSTM
tagger and a transformer encoder, at two depths, from input sizes with dtypes and from input
data; thop's MAC and parameter counts of the same models.  All agree exactly.  torchinfo
needed ``UntypedStorage.__sizeof__`` to count the storage's bytes (its "Input size" is
``sys.getsizeof`` of the input's storage).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchinfo", "thop")

NAMES = ["torchinfo", "thop"]
runs, test_model_stats = case_tests("model_stats_cases.py", NAMES, rtol=0, atol=0)
