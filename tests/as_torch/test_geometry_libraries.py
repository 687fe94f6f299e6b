"""Manifold optimization and rotation libraries on ptcore, unmodified, against torch
(``geometry_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), data from NumPy: geoopt (maps, distances and transports on the
sphere, Stiefel, Poincaré-ball, stereographic, Lorentz, SPD, Birkhoff and product manifolds;
Riemannian Adam with AMSGrad and stabilization and Nesterov Riemannian SGD on manifold
parameters), RoMa (conversions between rotation vectors, unit quaternions, matrices and Euler
angles; Procrustes by SVD and by Horn's method, Gram-Schmidt, with gradients; slerps,
geodesic distances, rigid registration, Rigid transforms) and PyPose (LieTensor, a Tensor
subclass with ``__torch_function__``, on SO3 and SE3: Exp, Log, Inv, Act, Jr, Adj, Jinvp,
matrices, cumulative products, gradients; Jacobians by ``pp.func.jacrev`` and ``modjac``;
poses fitted by Levenberg-Marquardt and Gauss-Newton).  All agree to float32 rounding
(rtol 1e-4).  Each case skips where its library is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"geoopt": "geoopt", "roma": "roma", "pypose": "pypose"}
runs, test_geometry_library = library_case_tests("geometry_cases.py", LIBS, rtol=1e-4,
                                                 atol=1e-5)
