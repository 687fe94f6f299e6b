"""Normalizing-flow libraries on ptcore, unmodified, against torch (``flows_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch),
parameters and data from NumPy: zuko's MAF, NSF, RealNVP, NAF and a conditional MAF fitted
five Adam steps (losses, log_prob, the inverse transform of base noise with its
log-determinant), the log-densities of GMM, GF, SOSPF, UNAF, BPF and NCSF flows and a
CNF's exact-trace log_prob through zuko's adaptive ODE solver and two training steps through
its checkpointed adjoint, zuko's odeint with its gradients;
normflows' RealNVP-style coupling stack with ActNorm, autoregressive rational-quadratic
splines and LU-decomposed linear flows fitted by forward KL, and planar/radial flows pushing
base noise forward.  All agree to
float32 rounding, the CNF (adaptive step sizes) to 1e-5 of its largest value.

normflows' LU flows needed ``t[np_rows, np_cols] = v`` with NumPy index arrays and a ``v``
that requires grad to index as torch does (advanced indexing): ptcore's autograd took the
arrays (which have ``__index__``) for basic indices and wrote into the copy that advanced
indexing returns, so the lower/upper factors stayed zero (inf/nan outputs).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("zuko", "normflows")

NAMES = ["zuko", "normflows"]
runs, test_flows = case_tests("flows_cases.py", NAMES, rtol=1e-5, atol=2e-6,
                              per_case={"zuko": {"cnf": {"rtol": 1e-4, "atol": 2e-5},
                                                "odeint": {"rtol": 1e-5, "atol": 1e-6}}})
