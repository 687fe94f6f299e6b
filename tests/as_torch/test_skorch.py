"""skorch on ptcore, unmodified, against torch (``skorch_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): a classifier
(SGD with momentum, the default stratified validation split; history, ``predict_proba``,
``score``; a logits criterion with Adam and ``partial_fit``), a regressor with callbacks (StepLR
scheduler, gradient-norm clipping, an R2 scoring, checkpointing of the best validation
loss and ``load_params`` from it, early stopping) and skorch inside scikit-learn (a
``Pipeline`` with a scaler, ``cross_val_score``, ``GridSearchCV`` over the learning rate, a
predefined validation split).  Weights and data are the same in both runs; everything
agrees to float32 rounding.  skorch needed no change in ptcore.
"""
import importlib.util
import pytest

torch = pytest.importorskip("torch")
# (found, not imported: the library would be imported next to the real torch in the
# test process, and some patch torch on import -- torch_geometric replaces
# torch.index_select -- which changes what later tests compare against)
if importlib.util.find_spec("skorch") is None:
    pytest.skip("skorch is not installed", allow_module_level=True)
pytest.importorskip("sklearn")

from case_results import cases_fixture, compare_case  # noqa: E402  (tests/as_torch)

NAMES = ["classifier", "regressor_callbacks", "sklearn"]
runs = cases_fixture("skorch_cases.py", NAMES)


@pytest.mark.parametrize("case", NAMES)
def test_skorch(runs, case):
    compare_case(runs, case, rtol=1e-5, atol=1e-6)
