"""e3nn on ptcore, unmodified, against torch (``e3nn_cases.py``, run with the real torch and
under ``python -m ptcore.as_torch`` in an environment without torch), inputs and weights from
NumPy: irreps algebra, Wigner D-matrices, 3j symbols, spherical harmonics and their gradients,
Legendre functions; o3.Linear and the fully connected, elementwise and instruction-list tensor
products (modules e3nn generates with torch.fx and contracts with opt_einsum_fx), their
gradients and equivariance; a Gate network on a point cloud trained three Adam steps; e3nn's
TorchScript-compiled modules (``e3nn.util.jit.compile``), FullyConnectedNet, equivariant
BatchNorm, reduced tensor products, S2 grids and radial bases.  Outputs
agree to float32 rounding; the D-matrices to 2e-5, because torch's float32 ``matrix_exp``
(Taylor polynomials of low degree) is off from the exact exponential by up to 1.6e-5 here,
ptcore's by 3e-8.  e3nn's normalized activations estimate their constants from a million draws
of torch's seeded generator, a stream ptcore does not reproduce: the case sets them by
quadrature.

e3nn needed ``torch._assert`` in scripted code to compile as an assert statement (its
generated tensor products call it; ptcore.jit.script compiled ptcore._assert's body),
``torch.fx.proxy.GraphAppendingTracer`` (public; it was private in ptcore) and
``__torch_function__`` handlers that see einsum's list form ``einsum(eq, [a, b])`` as torch's
Python wrapper passes it, ``einsum(eq, a, b)`` (opt_einsum_fx reads the fx node's operands).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("e3nn", "opt_einsum_fx")

NAMES = ["o3", "tensor_products", "network", "modules"]
runs, test_e3nn = case_tests("e3nn_cases.py", NAMES, rtol=1e-5, atol=1e-6,
                             per_case={"o3": {"D": {"atol": 2e-5}}})
