"""TorchMetrics on ptcore, unmodified, against torch (``torchmetrics_cases.py``, run with the
real torch and under ``python -m ptcore.as_torch`` in an environment without torch), on data
from NumPy: classification metrics as modules over batches (a ``MetricCollection`` with compute
groups, ``forward``'s batch values, clone, pickling, reset; ignore_index, top-k, curves, AUROC
with ``max_fpr``, calibration error) and functional; regression (correlations, ranks, errors,
multi-output); image (PSNR, SSIM and MS-SSIM, UQI, TV, SAM, ERGAS, RASE) and audio (SNR, SI-SDR,
SDR); text (BLEU, SacreBLEU, chrF, TER, WER/CER/MER/WIL, edit distances, perplexity) and
retrieval; clustering, nominal association, aggregation and the wrappers (classwise, tracker,
min-max, bootstrap, arithmetic of metrics); a custom Metric's states, ``state_dict``,
``merge_state`` and dtype moves.  All agree to float32 rounding.

What TorchMetrics took: ``torch.jit.script`` of a module whose ``forward`` is ``@unused``
(``Metric.forward(*args, **kwargs)``): the forward stays Python, bound to the ScriptModule, as
torch's; and a Parameter's repr under the launcher (it printed ``Parameter(...)``, not
``tensor(...)``, after ``Parameter containing:``).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchmetrics")

NAMES = ["classification", "classification_functional", "regression", "image_audio",
         "text_retrieval", "clustering_nominal_aggregation", "module_behaviour"]
runs, test_torchmetrics = case_tests("torchmetrics_cases.py", NAMES)
