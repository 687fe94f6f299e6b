"""torchdyn and torchcde on ptcore, unmodified, against torch (``torchdyn_cases.py``, run with the
real torch and under ``python -m ptcore.as_torch`` in an environment without torch), weights and
paths from NumPy: NeuralODE trajectories by rk4, euler, dopri5 and tsit5 with gradients by
backpropagation, adjoint and interpolated adjoint; torchdyn's functional odeint and its
parameter gradients; torchcde's Hermite and natural cubic splines, their values and
derivatives, and a neural CDE by cdeint with its gradients.  No ptcore change was needed.
torchdyn requires torchvision, pytorch-lightning and Jupyter packages it does not import here,
and its torchvision requirement pulls a second torch: it is installed ``--no-deps``.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchdyn", "torchcde")

NAMES = ["neural_ode", "odeint", "cde"]
runs, test_torchdyn = case_tests("torchdyn_cases.py", NAMES, rtol=1e-5, atol=2e-6)
