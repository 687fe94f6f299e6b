"""The LU behind det, slogdet, inv and solve (and their gradients) does not depend on the
CPU's kernels.

Real matrices up to 16 x 16 are factored by ptcore's own LU (_getrf_small in
ptcore/_ops/kernels/_lapack.pxi), whose arithmetic is fixed: reciprocal scaling (division where
MKL's small kernels divide), correctly rounded fused multiply-adds.  So whether a singular
matrix gets an exactly zero pivot or a rounding-sized one (and with it det == 0 or 1e-16,
slogdet's -inf, inv's error, the det gradient's 0 or cofactor matrix) is the same on every
machine.  torch, the oracle elsewhere, does not have this property: its MKL getrf takes an
FMA path on some CPUs and a non-FMA one on others (AMD), so tests compare with torch up to
the last bits only (tests/test_parity_fuzz_science2.py).

Checked two ways: the factors against a Python model of that arithmetic (exact rational
FMA), bit for bit; and the LU-dependent results of lu_kernel_probe.py in child processes
under every BLAS kernel (OPENBLAS_CORETYPE) and every float32 GEMM kernel (PTCORE_SGEMM)
this CPU can run: LU, pivots, info, det and slogdet bit for bit, the inverse, solution
and gradients (computed with the BLAS's getrs and GEMM) up to rounding.
"""
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import ptcore

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lu_kernel_probe  # noqa: E402


# ------------------------------------------------------------ the arithmetic, modelled
def _round32(q):
    """The float32 nearest to the rational ``q`` (ties to even)."""
    x = np.float32(float(q))               # within one float32 ulp of the answer
    best = None
    for c in (np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        if best is None or d < best[0] or (d == best[0] and int(c.view(np.int32)) % 2 == 0):
            best = (d, c)
    return best[1]


def _model_lu(a):
    """ptcore's small LU in exact rational arithmetic rounded as IEEE does (signed zeros
    included), column by column: (LU, 1-based pivots)."""
    dt = a.dtype.type
    rnd = (lambda q: dt(float(q))) if dt is np.float64 else _round32

    def sign(v):
        return math.copysign(1.0, float(v))

    def op(q, zero_sign):
        return rnd(q) if q != 0 else dt(math.copysign(0.0, zero_sign))

    def mul(x, y):
        return op(Fraction(float(x)) * Fraction(float(y)), sign(x) * sign(y))

    def div(x, y):
        return op(Fraction(float(x)) / Fraction(float(y)), sign(x) * sign(y))

    def fma(x, y, z):
        # an exact zero is -0 only when x*y and z are zeros of that sign
        p_sign = sign(x) * sign(y)
        negzero = (x == 0 or y == 0) and z == 0 and p_sign < 0 and sign(z) < 0
        return op(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)),
                  -1.0 if negzero else 1.0)

    tiny = np.finfo(a.dtype).tiny
    a = a.copy()
    m, n = a.shape
    piv = []
    for k in range(min(m, n)):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        piv.append(p + 1)
        pv = a[p, k]
        if pv != 0:
            a[[k, p]] = a[[p, k]]
            if (m == n and n <= 4 and k == n - 2) or not abs(pv) >= tiny:
                a[k + 1:, k] = [div(v, pv) for v in a[k + 1:, k]]
            else:
                r = div(dt(1), pv)
                a[k + 1:, k] = [mul(v, r) for v in a[k + 1:, k]]
        for j in range(k + 1, n):
            for i in range(k + 1, m):
                a[i, j] = fma(-a[i, k], a[k, j], a[i, j])
    return a, np.array(piv, dtype=np.int32)


def _cases():
    rng = np.random.default_rng(3)
    cases = [np.array(m, dtype=float) for m in lu_kernel_probe.MATRICES.values()]
    for n in (2, 3, 4, 7, 16):
        cases.append(rng.standard_normal((n, n)))
        cases.append((rng.integers(-3, 4, (n, max(1, n // 2)))
                      @ rng.integers(-3, 4, (max(1, n // 2), n))).astype(float))
    cases.append(rng.standard_normal((5, 9)))
    cases.append(rng.standard_normal((9, 5)))
    cases.append(np.array([[1e-310, 1.0], [3e-310, 2.0]]))        # subnormal pivot
    return cases


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_lu_is_its_arithmetic_bit_for_bit(dtype):
    for a in _cases():
        a = a.astype(dtype)
        if dtype is np.float32 and np.abs(a).min(initial=1) < 1e-300:
            continue                                  # (the subnormal case is float64's)
        want_lu, want_piv = _model_lu(a)
        got = ptcore.linalg.lu_factor_ex(ptcore.from_numpy(a.copy()))
        assert got.LU.numpy().tobytes() == want_lu.tobytes(), a
        np.testing.assert_array_equal(got.pivots.numpy(), want_piv)


def test_the_issues_singular_matrix_has_its_rounding_sized_pivot_everywhere():
    # [[1,2,3],[2,4,6],[1,0,1]] (factored as its transpose, as torch): 4 - (2/3)*6 by fused
    # multiply-add is 2**-52, not the 0 of a rounded product; det is then -3 * 2**-52 * 1,
    # and its gradient conj(det) * A^-H the cofactor matrix, on every CPU
    a = np.array(lu_kernel_probe.MATRICES["rank2_a"])
    assert float(ptcore.linalg.det(ptcore.from_numpy(a))) == -3 * 2.0 ** -52
    x = ptcore.from_numpy(a).requires_grad_()
    g, = ptcore.autograd.grad(ptcore.linalg.det(x), x)
    np.testing.assert_allclose(g.numpy(), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)


# ---------------------------------------------------------- under every CPU kernel
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


# OpenBLAS kernel families and the CPU features they need (forcing one the CPU lacks
# would end in an illegal instruction)
_CORETYPES = {"Prescott": {"pni"}, "Sandybridge": {"avx"}, "Haswell": {"avx2", "fma"},
              "SkylakeX": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}}
_SGEMM = {"blas": 0, "avx2": 1, "avx512": 2}


def _sgemm_runnable(name):
    from ptcore import _config
    from ptcore._ops import linalg
    try:
        return linalg._set_sgemm_isa(_SGEMM[name]) == _SGEMM[name]
    finally:
        linalg._set_sgemm_isa(_config.SGEMM_ISA)


def _probe(tmp_path, env):
    out = tmp_path / ("probe_" + "_".join(f"{k}-{v}" for k, v in sorted(env.items())) + ".npz")
    full = dict(os.environ)
    full.pop("OPENBLAS_CORETYPE", None)
    full.pop("PTCORE_SGEMM", None)
    full.update(env)
    p = subprocess.run([sys.executable, str(HERE / "lu_kernel_probe.py"), str(out)],
                       capture_output=True, text=True, timeout=600, env=full)
    assert p.returncode == 0, p.stderr[-3000:]
    return dict(np.load(out))


_BITWISE = (".LU", ".piv", ".info", ".det", ".sign", ".logabsdet", ".inv_info")


# results that the BLAS's triangular solves (getrs) compute from ptcore's LU
_THROUGH_GETRS = (".inv", ".solve", ".dinv")


def _rounding_sized_pivot(base, key):
    """Whether the LU of ``key``'s matrix has a nonzero pivot at rounding size (|u_ii| below
    n * eps * max |U|): a singular matrix whose elimination left rounding error there."""
    lu = base[key.rsplit(".", 1)[0] + ".LU"]
    u = np.abs(np.diag(lu))
    eps = np.finfo(lu.dtype).eps
    small = u <= lu.shape[0] * eps * np.abs(np.triu(lu)).max(initial=0)
    return bool(np.any(small & (u > 0)))


def _compare(base, other, what):
    bad = []
    for k, x in base.items():
        if k == "sgemm_choice":
            continue
        y = other[k]
        if k.endswith(_BITWISE):
            if x.tobytes() != y.tobytes():
                bad.append(f"{what}: {k} differs: {x} vs {y}")
            continue
        fx, fy = np.isfinite(x), np.isfinite(y)
        if not np.array_equal(fx, fy):
            bad.append(f"{what}: {k}: finite in different places")
            continue
        if k.endswith(_THROUGH_GETRS) and _rounding_sized_pivot(base, k):
            # the solution and inverse of a matrix whose LU (the same bits everywhere, checked
            # above) has a rounding-sized pivot are rounding noise divided by that pivot: the
            # BLAS's getrs (FMA or not, which association) decides them, on every library
            # (seen: OpenBLAS's SkylakeX kernels against its Haswell ones, on an AVX-512 Xeon)
            continue
        scale = max(np.abs(x[fx]).max(initial=0), np.abs(y[fy]).max(initial=0))
        if scale < 1e-20:
            continue                  # zero up to rounding both ways (a rank <= n - 2 cofactor)
        rtol = 1e-3 if ".float32." in k else 1e-5
        err = np.abs(x[fx] - y[fy]).max(initial=0)
        if err > rtol * scale:
            bad.append(f"{what}: {k}: differs by {err:.3g} at scale {scale:.3g}")
    return bad


def test_lu_dependent_results_are_the_same_under_every_kernel(tmp_path):
    flags = _cpu_flags()
    if flags is None:
        pytest.skip("needs /proc/cpuinfo to know which kernels this CPU can run")
    base = _probe(tmp_path, {})
    runs = {f"OPENBLAS_CORETYPE={c}": {"OPENBLAS_CORETYPE": c}
            for c, need in _CORETYPES.items() if need <= flags}
    runs.update({f"PTCORE_SGEMM={s}": {"PTCORE_SGEMM": s} for s in _SGEMM if _sgemm_runnable(s)})
    assert len(runs) >= 3, runs
    bad = []
    for what, env in runs.items():
        got = _probe(tmp_path, env)
        if "PTCORE_SGEMM" in env:
            assert int(got["sgemm_choice"]) == _SGEMM[env["PTCORE_SGEMM"]]
        bad += _compare(base, got, what)
    assert not bad, "\n".join(bad)
