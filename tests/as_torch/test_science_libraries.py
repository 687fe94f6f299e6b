"""Scientific libraries on ptcore, unmodified, against torch (``science_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch):
torchdiffeq's adaptive and fixed-step ODE solvers and its adjoint gradients, GPyTorch's exact
GP regression (30 Adam steps on the marginal likelihood, predictions with confidence regions)
and Pyro (a model's log joint and its gradient, SVI with an AutoNormal guide, the param store
saved and loaded, NUTS).  Deterministic results agree to float64 rounding; what samples (SVI,
NUTS: ptcore's generator is not torch's) agrees as an estimate of the same posterior.

What Pyro took: ``torch.__name__`` is ``"torch"`` inside the launcher (Pyro patches
``torch.distributions`` by dotted name after checking the root module's name),
``torch.serialization.MAP_LOCATION`` and its sibling constants, and ``register_kl`` accepting
any pair of classes as torch's does (Pyro registers its own base classes).
"""
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch_free_env  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)

CASES = Path(__file__).resolve().parent / "science_cases.py"
LIBS = {"ode": "torchdiffeq", "gp": "gpytorch", "pyro": "pyro"}


def _available():
    import importlib.util
    return [c for c, mod in LIBS.items() if importlib.util.find_spec(mod) is not None]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cases = _available()
    if not cases:
        pytest.skip("none of torchdiffeq, gpytorch, pyro-ppl is installed")
    ref_dir, pt_dir = torch_free_env.run_both(tmp_path_factory.mktemp("science"), CASES,
                                              cases)
    return tuple({c: json.loads((d / f"{c}.json").read_text()) for c in cases}
                 for d in (ref_dir, pt_dir))


def _close(a, b, rtol=1e-9, atol=1e-9):
    np.testing.assert_allclose(np.asarray(b, dtype=np.float64), np.asarray(a, dtype=np.float64),
                               rtol=rtol, atol=atol)


def _case(runs, case):
    ref, pt = runs
    if case not in ref:
        pytest.skip(f"{LIBS[case]} is not installed")
    assert ref[case]["torch_name"] == "torch" and pt[case]["torch_name"] == "ptcore"
    return ref[case], pt[case]


def test_torchdiffeq_solvers_and_adjoint(runs):
    ref, pt = _case(runs, "ode")
    for method in ["rk4", "euler", "midpoint"]:          # fixed steps: the same arithmetic
        _close(ref[method], pt[method], rtol=1e-12, atol=1e-12)
    for method in ["dopri5", "bosh3", "adaptive_heun"]:  # adaptive: the same steps here
        _close(ref[method], pt[method], rtol=1e-9, atol=1e-9)
    _close(ref["adjoint_y0_grad"], pt["adjoint_y0_grad"], rtol=1e-8)
    _close(ref["adjoint_w_grad"], pt["adjoint_w_grad"], rtol=1e-8)


def test_gpytorch_exact_gp(runs):
    ref, pt = _case(runs, "gp")
    _close(ref["losses"], pt["losses"], rtol=1e-8)
    for k in ref["params"]:
        _close(ref["params"][k], pt["params"][k], rtol=1e-7, atol=1e-9)
    for k in ["mean", "lo", "hi"]:
        _close(ref[k], pt[k], rtol=1e-7, atol=1e-9)


def test_pyro_log_joint_svi_params_nuts(runs):
    ref, pt = _case(runs, "pyro")
    _close(ref["log_joint"], pt["log_joint"], rtol=1e-12)
    for k in ref["log_joint_grad"]:
        _close(ref["log_joint_grad"][k], pt["log_joint_grad"][k], rtol=1e-10)
    assert pt["param_store_round_trip"] is True
    # sampled: both estimate the same posterior (w ~ (1.46, -1.94), b ~ 0.45, s ~ 0.34)
    assert abs(pt["svi_loss"] - ref["svi_loss"]) < 3.0
    for est in ("svi_median", "nuts_mean"):
        for k in ref[est]:
            _close(ref[est][k], pt[est][k], rtol=0, atol=0.08)
