"""A least-squares fit with SciPy's LAPACK
=======================================

A least-squares fit with ptcore tensors (the interim main job).

Data are generated with ptcore's Philox generator, assembled with ptcore
views (a Vandermonde design matrix built column by column through strided
writes), and solved on zero-copy NumPy views with SciPy's LAPACK; the fitted
coefficients land back in a ptcore tensor.  Prints the coefficients and checks
them against the known truth.

Run: python examples/lstsq.py
"""
import sys
import time

import numpy as np
import scipy.linalg

import ptcore


def main(n=200_000, degree=3, seed=0):
    t0 = time.perf_counter()
    ptcore.manual_seed(seed)
    true_coef = ptcore.tensor([0.5, -2.0, 1.0, 3.0], dtype=ptcore.float64)[: degree + 1]
    x = ptcore.linspace(-1.0, 1.0, n, dtype=ptcore.float64)
    noise = ptcore.normal(0.0, 0.01, (n,), dtype=ptcore.float64)

    # design matrix A[:, k] = x**k, written column by column through views
    A = ptcore.empty(n, degree + 1, dtype=ptcore.float64)
    xs = x.numpy()                         # zero-copy view of ptcore memory
    for k in range(degree + 1):
        A[:, k] = ptcore.from_numpy(xs ** k)
    y = ptcore.from_numpy(A.numpy() @ true_coef.numpy() + noise.numpy())

    # solve on zero-copy views; the answer is written into a ptcore tensor
    coef = ptcore.empty(degree + 1, dtype=ptcore.float64)
    sol, res, rank, sv = scipy.linalg.lstsq(A.numpy(), y.numpy(), lapack_driver="gelsd")
    coef.copy_(ptcore.from_numpy(sol))
    err = np.abs(coef.numpy() - true_coef.numpy()).max()
    dt = time.perf_counter() - t0
    print(f"n={n} degree={degree} rank={rank}")
    print(f"fitted coefficients: {coef}")
    print(f"true coefficients:   {true_coef}")
    print(f"max |error| = {err:.2e}  ({dt * 1e3:.0f} ms)")
    ok = err < 1e-3
    print("OK" if ok else "FAILED: coefficients off by more than 1e-3")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
