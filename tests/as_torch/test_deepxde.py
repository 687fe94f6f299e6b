"""DeepXDE (``DDE_BACKEND=pytorch``) on ptcore, unmodified, against torch (``deepxde_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), network weights from NumPy and uniform collocation points: the 1-D Poisson problem with
Dirichlet conditions (tanh network) and one with a Neumann condition and an output transform
(sin network), each trained 150-200 Adam steps and 5 L-BFGS iterations through DeepXDE's Model:
loss histories (train and test), the relative-L2 metric, predictions and the PDE residual
through ``predict(operator=...)`` (second derivatives by ``dde.grad.hessian``); the heat
equation (TimePDE with initial and boundary conditions), a 2-D Poisson problem saved and
restored (``Model.save``/``restore``), a parallel network (PFNN) fitting a function and a
DeepONet learning an operator from Cartesian-product data; an inverse problem (an external
trainable variable, point-set, Robin and operator boundary conditions, anchors, loss weights,
step and cosine learning-rate decays).  They agree to
1e-5 of their largest values (float32 rounding over a few hundred optimizer steps); DeepXDE
needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("deepxde")

NAMES = ["poisson_dirichlet", "poisson_neumann", "more_problems", "inverse"]
runs, test_deepxde = case_tests("deepxde_cases.py", NAMES, rtol=1e-4, atol=1e-5)
