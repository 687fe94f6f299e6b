"""SciPy (``SCIPY_ARRAY_API=1``) and scikit-learn (``array_api_dispatch=True``) on ptcore tensors.

Each library runs in a fresh interpreter (``_interop_cases.py``) so that the environment
variable is set before SciPy is imported; the results are compared with the NumPy run there.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).with_name("_interop_cases.py")
_ROOT = Path(__file__).resolve().parents[2]

SCIPY_CASES = ["special.logsumexp", "special.erf", "special.softmax", "stats.zscore", "stats.skew",
               "stats.ttest_1samp", "signal.fftconvolve", "signal.convolve", "ndimage.gaussian_filter",
               "ndimage.median_filter", "integrate.trapezoid", "integrate.cumulative_trapezoid",
               "cluster.vq.whiten", "cluster.vq.vq", "fft.fft", "fft.rfft"]
SKLEARN_CASES = ["PCA", "LinearDiscriminantAnalysis", "Ridge", "StandardScaler", "MinMaxScaler",
                 "accuracy_score", "r2_score", "mean_squared_error"]
# the metrics return Python floats for NumPy input too
_SCALAR_RESULTS = {"accuracy_score", "r2_score", "mean_squared_error"}


def _run(which):
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    import ptcore
    pkg_parent = str(Path(ptcore.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(_SCRIPT), which], capture_output=True, text=True, env=env,
                          timeout=900, cwd=str(_ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def scipy_report():
    pytest.importorskip("scipy", minversion="1.15")
    return _run("scipy")


@pytest.fixture(scope="module")
def sklearn_report():
    pytest.importorskip("scipy", minversion="1.15")
    pytest.importorskip("sklearn", minversion="1.6")
    return _run("sklearn")


@pytest.mark.parametrize("name", SCIPY_CASES)
def test_scipy_returns_ptcore_tensors_equal_to_numpy(scipy_report, name):
    rec = scipy_report[name]
    assert "error" not in rec, rec.get("error")
    assert rec["type"] == "Tensor"
    assert rec["close"]


@pytest.mark.parametrize("name", SKLEARN_CASES)
def test_sklearn_runs_on_ptcore_tensors(sklearn_report, name):
    rec = sklearn_report[name]
    assert "error" not in rec, rec.get("error")
    assert rec["type"] == ("float" if name in _SCALAR_RESULTS else "Tensor")
    assert rec["close"]
