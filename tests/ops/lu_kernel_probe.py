"""Child of test_lu_kernel_independence.py: the LU-dependent results of ptcore (LU, det,
slogdet, inv, solve and the gradients of det/slogdet/inv, first and second order) at
singular, near-singular and random matrices, saved to the .npz file named by argv[1].

The parent runs it under each BLAS kernel (OPENBLAS_CORETYPE) and each float32 GEMM
kernel (PTCORE_SGEMM) the CPU can run and compares the files.  No torch here.
"""
import sys

import numpy as np

import ptcore

# singular matrices whose pivots depend on the LU's rounding, a structurally singular one
# (a zero column), random and near-singular ones; all up to 16 x 16 (ptcore's own LU)
MATRICES = {
    "rank2_a": [[1., 2, 3], [2, 4, 6], [1, 0, 1]],
    "rank2_b": [[1., 2, 3], [4, 5, 6], [7, 8, 9]],
    "rank2_c": [[3., 6, 9], [1, 2, 3], [2, 2, 2]],
    "rank3_4": [[2., 4, 1, 3], [1, 2, 5, 0], [3, 6, 6, 3], [0, 1, 1, 1]],
    "zero_column": [[1., 0, 0], [1, 0, 0], [0, 0, 2]],
    "near_singular": [[1., 2, 3], [2, 4, 6 + 1e-9], [1, 0, 1]],
}
_rng = np.random.default_rng(7)
MATRICES["random_5"] = _rng.standard_normal((5, 5)).tolist()
MATRICES["random_16"] = _rng.standard_normal((16, 16)).tolist()
MATRICES["rank8_16"] = (_rng.integers(-3, 4, (16, 8)) @ _rng.integers(-3, 4, (8, 16))).astype(
    float).tolist()


def _a(t):
    return t.detach().numpy().copy()


def results():
    out = {}
    for name, m in MATRICES.items():
        for dt in (ptcore.float64, ptcore.float32):
            key = f"{name}.{str(dt).split('.')[-1]}"
            a = ptcore.tensor(m, dtype=dt)
            lu = ptcore.linalg.lu_factor_ex(a)
            out[key + ".LU"], out[key + ".piv"] = _a(lu.LU), _a(lu.pivots)
            out[key + ".info"] = _a(lu.info)
            out[key + ".det"] = _a(ptcore.linalg.det(a))
            s = ptcore.linalg.slogdet(a)
            out[key + ".sign"], out[key + ".logabsdet"] = _a(s.sign), _a(s.logabsdet)
            inv = ptcore.linalg.inv_ex(a)
            out[key + ".inv"], out[key + ".inv_info"] = _a(inv.inverse), _a(inv.info)
            out[key + ".solve"] = _a(ptcore.linalg.solve_ex(a, ptcore.ones(len(m), dtype=dt))[0])
            # det: unrecorded and recorded first derivatives, and the second
            x = a.clone().requires_grad_()
            out[key + ".ddet"] = _a(ptcore.autograd.grad(ptcore.linalg.det(x), x)[0])
            x = a.clone().requires_grad_()
            g, = ptcore.autograd.grad(ptcore.linalg.det(x), x, create_graph=True)
            out[key + ".ddet_graph"] = _a(g)
            out[key + ".d2det"] = _a(ptcore.autograd.grad((g * g).sum(), x)[0])
            x = a.clone().requires_grad_()
            out[key + ".dlogabsdet"] = _a(ptcore.autograd.grad(
                ptcore.linalg.slogdet(x).logabsdet, x)[0])
            x = a.clone().requires_grad_()
            out[key + ".dinv"] = _a(ptcore.autograd.grad(ptcore.linalg.inv_ex(x).inverse.sum(),
                                                          x)[0])
    return out


if __name__ == "__main__":
    from ptcore import _config
    res = results()
    res["sgemm_choice"] = np.array(_config.SGEMM_ISA)       # PTCORE_SGEMM as read
    np.savez(sys.argv[1], **res)
