"""Composite torch.linalg functions (ptcore/linalg/_extra.py) against PyTorch:
solve_triangular, lu, lu_solve, cond, householder_product/orgqr, geqrf,
ormqr, tensorinv, tensorsolve, vander.  Values, named tuples, out=, errors
and float64 gradients."""
import numpy as np
import pytest

import ptcore
from ptcore import linalg as LA

try:
    import torch
except ImportError:          # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

FLOATS = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def _np(shape, dtype, seed=0, well=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if "complex" in dtype:
        a = a + 1j * rng.standard_normal(shape)
    if well:        # well-conditioned square matrices
        n = shape[-1]
        a = a + 3 * n ** 0.5 * np.eye(n)
    return a.astype(dtype)


def _pair(a, requires_grad=False):
    p = ptcore.from_numpy(np.ascontiguousarray(a)).clone()
    t = torch.from_numpy(np.ascontiguousarray(a)).clone()
    if requires_grad:
        p.requires_grad_(True)
        t.requires_grad_(True)
    return p, t


def _close(p, t, tol=1e-10):
    pa = p.detach().numpy()
    ta = t.detach().resolve_conj().numpy()
    assert pa.dtype == ta.dtype, (pa.dtype, ta.dtype)
    assert pa.shape == ta.shape, (pa.shape, ta.shape)
    np.testing.assert_allclose(pa, ta, rtol=tol, atol=tol)


def _raises(fp, ft, exc=RuntimeError):
    with pytest.raises(exc) as et:
        ft()
    with pytest.raises(exc) as ep:
        fp()
    assert type(ep.value).__name__ == type(et.value).__name__
    assert str(ep.value).split("\n")[0] == str(et.value).split("\n")[0]


def _grads(fp, ft, arrays, tol=1e-8, weights_seed=5):
    """Gradients of sum(w * f(inputs)) (each output) in float64."""
    ps, ts = zip(*[_pair(a, True) for a in arrays])
    op, ot = fp(*ps), ft(*ts)
    if not isinstance(op, tuple):
        op, ot = (op,), (ot,)
    lp = lt = 0
    for k, (o1, o2) in enumerate(zip(op, ot)):
        if not o2.requires_grad:
            continue
        w = _np(tuple(o2.shape), str(o2.dtype).split(".")[1], seed=weights_seed + k)
        wp, wt = _pair(w)
        lp = lp + (o1 * wp).real.sum() if o1.dtype.is_complex else lp + (o1 * wp).sum()
        lt = lt + (o2 * wt).real.sum() if o2.dtype.is_complex else lt + (o2 * wt).sum()
    gp = ptcore.autograd.grad(lp, ps)
    gt = torch.autograd.grad(lt, ts)
    for a, b in zip(gp, gt):
        _close(a, b, tol)


# ---------------------------------------------------------------------------
# solve_triangular
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_values(dtype, upper, left, unit):
    A = _np((2, 1, 4, 4), dtype, 1, well=True)
    B = _np((3, 4, 2) if left else (3, 2, 4), dtype, 2)
    (pa, ta), (pb, tb) = _pair(A), _pair(B)
    _close(LA.solve_triangular(pa, pb, upper=upper, left=left, unitriangular=unit),
           torch.linalg.solve_triangular(ta, tb, upper=upper, left=left, unitriangular=unit),
           TOL[dtype])


def test_solve_triangular_singular():
    # a zero on the diagonal gives infs/nans, no error (as PyTorch)
    for left in (True, False):
        for upper in (True, False):
            a = np.triu(_np((3, 3), "float64", 1)) if upper else np.tril(_np((3, 3), "float64", 1))
            a[1, 1] = 0
            (pa, ta), (pb, tb) = _pair(a), _pair(_np((2, 3, 3), "float64", 2))
            _close(LA.solve_triangular(pa, pb, upper=upper, left=left),
                   torch.linalg.solve_triangular(ta, tb, upper=upper, left=left))


def test_solve_triangular_promotion_out_errors():
    A = _np((3, 3), "float64", 1, well=True)
    B = _np((3, 2), "float32", 2)
    (pa, ta), (pb, tb) = _pair(A), _pair(B)
    _close(LA.solve_triangular(pa, pb, upper=True), torch.linalg.solve_triangular(
        ta, tb, upper=True), 1e-6)
    o = ptcore.empty(0, dtype=ptcore.float64)
    r = LA.solve_triangular(pa, pb.double(), upper=False, out=o)
    assert r is o
    _close(o, torch.linalg.solve_triangular(ta, tb.double(), upper=False))
    sT, sP = torch.linalg.solve_triangular, LA.solve_triangular
    _raises(lambda: sP(ptcore.zeros(3, 4), pb, upper=True),
            lambda: sT(torch.zeros(3, 4), tb, upper=True))
    _raises(lambda: sP(pa, ptcore.zeros(3, dtype=ptcore.float64), upper=True),
            lambda: sT(ta, torch.zeros(3, dtype=torch.float64), upper=True))
    _raises(lambda: sP(ptcore.zeros(3), pb, upper=True),
            lambda: sT(torch.zeros(3), tb, upper=True))
    for left in (True, False):
        _raises(lambda: sP(pa, ptcore.zeros(4, 2, dtype=ptcore.float64), upper=True, left=left),
                lambda: sT(ta, torch.zeros(4, 2, dtype=torch.float64), upper=True, left=left))
    _raises(lambda: sP(pa.long(), pb.long(), upper=True),
            lambda: sT(ta.long(), tb.long(), upper=True), NotImplementedError)
    _raises(lambda: sP(pa.half(), pb.half(), upper=True),
            lambda: sT(ta.half(), tb.half(), upper=True), NotImplementedError)
    _raises(lambda: sP(ptcore.randn(2, 3, 3), ptcore.randn(4, 3, 2), upper=True),
            lambda: sT(torch.randn(2, 3, 3), torch.randn(4, 3, 2), upper=True))
    with pytest.raises(TypeError):
        sP(pa, pb)


@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, False, True),
                                             (False, True, False), (True, False, True)])
def test_solve_triangular_grad(upper, left, unit):
    A = _np((2, 3, 3), "float64", 3, well=True)
    B = _np((3, 2) if left else (2, 3), "float64", 4)
    _grads(lambda a, b: LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
           lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                      unitriangular=unit), [A, B])
    _grads(lambda a, b: LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
           lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                      unitriangular=unit),
           [_np((3, 3), "complex128", 5, well=True), B.astype("complex128")])


# ---------------------------------------------------------------------------
# lu, lu_solve
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (5, 3), (0, 3)])
def test_lu_values(dtype, shape):
    pa, ta = _pair(_np(shape, dtype, 7))
    rp, rt = LA.lu(pa), torch.linalg.lu(ta)
    assert type(rp).__name__ == "linalg_lu" and rp._fields == ("P", "L", "U")
    _close(rp.P, rt.P)
    _close(rp.L, rt.L, TOL[dtype])
    _close(rp.U, rt.U, TOL[dtype])


def test_lu_out_errors():
    pa, ta = _pair(_np((3, 3), "float64", 1))
    outs = tuple(ptcore.empty(0, dtype=ptcore.float64) for _ in range(3))
    r = LA.lu(pa, out=outs)
    assert r.P is outs[0] and r.U is outs[2]
    _close(r.L, torch.linalg.lu(ta).L)
    _raises(lambda: LA.lu(ptcore.zeros(3)), lambda: torch.linalg.lu(torch.zeros(3)))
    _raises(lambda: LA.lu(pa.long()), lambda: torch.linalg.lu(ta.long()), NotImplementedError)
    _raises(lambda: LA.lu(pa.half()), lambda: torch.linalg.lu(ta.half()), NotImplementedError)
    _raises(lambda: LA.lu(pa, pivot=False), lambda: torch.linalg.lu(ta, pivot=False))
    # singular input: no error
    _close(LA.lu(ptcore.zeros(3, 3)).U, torch.linalg.lu(torch.zeros(3, 3)).U)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (5, 3)])
def test_lu_grad(shape):
    _grads(lambda a: LA.lu(a), lambda a: torch.linalg.lu(a), [_np(shape, "float64", 8)])
    _grads(lambda a: LA.lu(a).U, lambda a: torch.linalg.lu(a).U, [_np(shape, "float64", 9)])
    _grads(lambda a: LA.lu(a), lambda a: torch.linalg.lu(a), [_np(shape, "complex128", 8)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_values(dtype, left, adjoint):
    A = _np((2, 4, 4), dtype, 1)
    B = _np((3, 1, 4, 2) if left else (3, 1, 2, 4), dtype, 2)
    (pa, ta), (pb, tb) = _pair(A), _pair(B)
    LUp, pivp = LA.lu_factor(pa)
    LUt, pivt = torch.linalg.lu_factor(ta)
    _close(LA.lu_solve(LUp, pivp, pb, left=left, adjoint=adjoint),
           torch.linalg.lu_solve(LUt, pivt, tb, left=left, adjoint=adjoint), TOL[dtype] * 10)


@pytest.mark.parametrize("left,adjoint", [(True, False), (False, True), (True, True),
                                          (False, False)])
def test_lu_solve_grad(left, adjoint):
    LU, piv = torch.linalg.lu_factor(torch.from_numpy(_np((3, 3), "float64", 3)))
    pivp = ptcore.from_numpy(piv.numpy().copy())
    B = _np((3, 2) if left else (2, 3), "float64", 4)
    _grads(lambda a, b: LA.lu_solve(a, pivp, b, left=left, adjoint=adjoint),
           lambda a, b: torch.linalg.lu_solve(a, piv, b, left=left, adjoint=adjoint),
           [LU.numpy(), B])


def test_lu_solve_empty_and_vector_like_B():
    LUp, pivp = LA.lu_factor(ptcore.zeros(0, 0, dtype=ptcore.float64))
    LUt, pivt = torch.linalg.lu_factor(torch.zeros(0, 0, dtype=torch.float64))
    _close(LA.lu_solve(LUp, pivp, ptcore.zeros(0, 2, dtype=ptcore.float64)),
           torch.linalg.lu_solve(LUt, pivt, torch.zeros(0, 2, dtype=torch.float64)))
    # B of shape A.shape[:-1] is a matrix here (not a batch of vectors)
    pa, ta = _pair(_np((3, 3, 3), "float64", 1, well=True))
    pb, tb = _pair(_np((3, 3), "float64", 2))
    _close(LA.solve_triangular(pa, pb, upper=True), torch.linalg.solve_triangular(
        ta, tb, upper=True))
    _close(LA.lu_solve(*LA.lu_factor(pa), pb), torch.linalg.lu_solve(
        *torch.linalg.lu_factor(ta), tb))


def test_lu_solve_out_errors():
    pa, ta = _pair(_np((3, 3), "float64", 1))
    pb, tb = _pair(_np((3, 2), "float64", 2))
    LUp, pivp = LA.lu_factor(pa)
    LUt, pivt = torch.linalg.lu_factor(ta)
    o = ptcore.empty(0, dtype=ptcore.float64)
    assert LA.lu_solve(LUp, pivp, pb, out=o) is o
    _close(o, torch.linalg.lu_solve(LUt, pivt, tb))
    sP, sT = LA.lu_solve, torch.linalg.lu_solve
    _raises(lambda: sP(LUp, pivp, pb[:, 0]), lambda: sT(LUt, pivt, tb[:, 0]))
    for left in (True, False):
        _raises(lambda: sP(LUp, pivp, ptcore.zeros(4, 2, dtype=ptcore.float64), left=left),
                lambda: sT(LUt, pivt, torch.zeros(4, 2, dtype=torch.float64), left=left))
    _raises(lambda: sP(LUp, pivp, pb.float()), lambda: sT(LUt, pivt, tb.float()))
    _raises(lambda: sP(LUp, pivp.long(), pb), lambda: sT(LUt, pivt.long(), tb))
    _raises(lambda: sP(ptcore.zeros(3, 4, dtype=ptcore.float64), pivp, pb),
            lambda: sT(torch.zeros(3, 4, dtype=torch.float64), pivt, tb))
    _raises(lambda: sP(LUp, pivp[:2], pb), lambda: sT(LUt, pivt[:2], tb))
    _raises(lambda: sP(LUp.long(), pivp, pb.long()), lambda: sT(LUt.long(), pivt, tb.long()))
    _raises(lambda: sP(LUp.expand(2, 3, 3), pivp.expand(3, 3), pb),
            lambda: sT(LUt.expand(2, 3, 3), pivt.expand(3, 3), tb))


# ---------------------------------------------------------------------------
# cond
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", float("inf"), -float("inf"), 1, -1])
def test_cond_values(dtype, p):
    pa, ta = _pair(_np((2, 4, 4), dtype, 3))
    _close(LA.cond(pa, p), torch.linalg.cond(ta, p), TOL[dtype] * 10)


def test_cond_special():
    for p in (None, -2):
        pa, ta = _pair(_np((3, 5), "float64", 2))
        _close(LA.cond(pa, p), torch.linalg.cond(ta, p))
    for p in (None, 1, "fro"):
        _close(LA.cond(ptcore.zeros(2, 3, 3, dtype=ptcore.float64), p),
               torch.linalg.cond(torch.zeros(2, 3, 3, dtype=torch.float64), p))
        _close(LA.cond(ptcore.zeros(2, 0, 0), p), torch.linalg.cond(torch.zeros(2, 0, 0), p))
    o = ptcore.empty(0)
    assert LA.cond(ptcore.eye(3), 1, out=o) is o and float(o) == 1.0
    cT, cP = torch.linalg.cond, LA.cond
    for p in (None, 1, -2, 3, "foo", "nuc", "fro", float("inf")):
        for a in (torch.ones(3, 3).long(), torch.ones(3, 3).half(), torch.ones(3),
                  torch.from_numpy(_np((3, 4), "float32", 1)), torch.ones(2, 0, 0).long()):
            try:
                cT(a, p)
            except Exception as e:
                _raises(lambda: cP(ptcore.from_numpy(a.numpy().copy()), p), lambda: cT(a, p),
                        type(e))
            else:
                _close(cP(ptcore.from_numpy(a.numpy().copy()), p), cT(a, p), 1e-5)
    _raises(lambda: cP(ptcore.zeros(3, 4), "fro"), lambda: cT(torch.zeros(3, 4), "fro"))


@pytest.mark.parametrize("p", [None, -2, "fro", "nuc", float("inf"), 1])
def test_cond_grad(p):
    if p in (None, -2, "nuc"):
        ref = torch.linalg.cond
    else:       # torch's own backward fails here (an in-place update): the formula
        def ref(a, p):
            return torch.linalg.matrix_norm(a, p) * torch.linalg.matrix_norm(
                torch.linalg.inv(a), p)
    _grads(lambda a: LA.cond(a, p), lambda a: ref(a, p), [_np((2, 3, 3), "float64", 6)],
           tol=1e-7)


# ---------------------------------------------------------------------------
# geqrf, householder_product / orgqr, ormqr
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5), (0, 3), (1, 1)])
def test_geqrf_values(dtype, shape):
    pa, ta = _pair(_np(shape, dtype, 11))
    rp, rt = ptcore.geqrf(pa), torch.geqrf(ta)
    assert type(rp).__name__ == "geqrf" and rp._fields == ("a", "tau")
    _close(rp.a, rt.a, TOL[dtype] * 10)
    _close(rp.tau, rt.tau, TOL[dtype] * 10)
    _close(pa.geqrf().a, ta.geqrf().a, TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_geqrf_larger(dtype):
    # LAPACK's blocked geqrf agrees with the unblocked reflectors to rounding
    for shape in ((70, 50), (50, 70)):
        pa, ta = _pair(_np(shape, dtype, 12))
        rp, rt = ptcore.geqrf(pa), torch.geqrf(ta)
        _close(rp.a, rt.a, 1e-11)
        _close(rp.tau, rt.tau, 1e-11)


def test_geqrf_special_errors():
    # a column that is already zero below the diagonal: tau = 0 (LAPACK)
    a = np.triu(_np((4, 3), "float64", 1))
    pa, ta = _pair(a)
    _close(ptcore.geqrf(pa).tau, torch.geqrf(ta).tau)
    _close(ptcore.geqrf(pa).a, torch.geqrf(ta).a)
    outs = (ptcore.empty(0, dtype=ptcore.float64), ptcore.empty(0, dtype=ptcore.float64))
    r = ptcore.geqrf(pa, out=outs)
    assert r.a is outs[0] and r.tau is outs[1]
    _raises(lambda: ptcore.geqrf(ptcore.zeros(3)), lambda: torch.geqrf(torch.zeros(3)))
    _raises(lambda: ptcore.geqrf(pa.long()), lambda: torch.geqrf(ta.long()), NotImplementedError)
    _raises(lambda: ptcore.geqrf(pa.half()), lambda: torch.geqrf(ta.half()), NotImplementedError)
    pa.requires_grad_(True)
    ta.requires_grad_(True)
    _raises(lambda: ptcore.geqrf(pa).a.sum().backward(), lambda: torch.geqrf(ta).a.sum().backward(),
            NotImplementedError)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((2, 5, 3), 3), ((5, 3), 2), ((3, 0), 0)])
def test_householder_product_values(dtype, shape, k):
    pa, ta = _pair(_np(shape, dtype, 3))
    pt_, tt = _pair(_np(shape[:-2] + (k,), dtype, 4))
    _close(LA.householder_product(pa, pt_), torch.linalg.householder_product(ta, tt),
           TOL[dtype])
    _close(ptcore.orgqr(pa, pt_), torch.orgqr(ta, tt), TOL[dtype])
    _close(pa.orgqr(pt_), ta.orgqr(tt), TOL[dtype])


def test_householder_product_qr_roundtrip_out_errors():
    pa, ta = _pair(_np((5, 3), "complex128", 3))
    a, tau = ptcore.geqrf(pa)
    _close(LA.householder_product(a, tau), torch.linalg.qr(ta).Q)
    o = ptcore.empty(0, dtype=ptcore.complex128)
    assert LA.householder_product(a, tau, out=o) is o
    hP, hT = LA.householder_product, torch.linalg.householder_product
    r = ptcore.randn
    cases = [((3, 4), (2,)), ((4, 3), (4,)), ((2, 4, 3), (3, 3)), ((2, 4, 3), (1, 3)),
             ((2, 4, 3), (3,)), ((4,), (3,))]
    for sa, st in cases:
        _raises(lambda: hP(r(*sa), r(*st)), lambda: hT(torch.randn(*sa), torch.randn(*st)))
    _raises(lambda: hP(r(4, 3), r(3, dtype=ptcore.float64)),
            lambda: hT(torch.randn(4, 3), torch.randn(3, dtype=torch.float64)))
    _raises(lambda: hP(r(4, 3).long(), r(3).long()),
            lambda: hT(torch.randn(4, 3).long(), torch.randn(3).long()), NotImplementedError)
    _raises(lambda: hP(r(4, 3), ptcore.tensor(1.)), lambda: hT(torch.randn(4, 3),
                                                                torch.tensor(1.)), IndexError)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_householder_product_grad(dtype):
    _grads(lambda a, t: LA.householder_product(a, t),
           lambda a, t: torch.linalg.householder_product(a, t),
           [_np((2, 5, 3), dtype, 1), _np((2, 3), dtype, 2) * 0.5])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_ormqr_values(dtype, left, transpose, shape):
    m, n = shape[-2:]
    batch = shape[:-2]
    pa, ta = _pair(_np(shape, dtype, 3))
    ap, taup = ptcore.geqrf(pa)
    at, taut = torch.geqrf(ta)
    c_shape = batch + ((m, 2) if left else (2, m))
    pc, tc = _pair(_np(c_shape, dtype, 4))
    _close(ptcore.ormqr(ap, taup, pc, left, transpose),
           torch.ormqr(at, taut, tc, left, transpose), TOL[dtype] * 10)
    _close(ap.ormqr(taup, pc, left, transpose), at.ormqr(taut, tc, left, transpose),
           TOL[dtype] * 10)


def test_ormqr_grad_out_errors():
    for left, tr in ((True, False), (False, True)):
        _grads(lambda a, t, c: ptcore.ormqr(a, t, c, left=left, transpose=tr),
               lambda a, t, c: torch.ormqr(a, t, c, left=left, transpose=tr),
               [_np((4, 3), "float64", 1), _np((3,), "float64", 2) * 0.5,
                _np((4, 2) if left else (2, 4), "float64", 3)])
    _grads(lambda a, t, c: ptcore.ormqr(a, t, c, transpose=True),
           lambda a, t, c: torch.ormqr(a, t, c, transpose=True),
           [_np((3, 3), "complex128", 1), _np((3,), "complex128", 2) * 0.5,
            _np((3, 2), "complex128", 3)])
    pa, ta = _pair(_np((3, 3), "float64", 1))
    o = ptcore.empty(0, dtype=ptcore.float64)
    assert ptcore.ormqr(pa, pa[0], pa, out=o) is o
    _close(o, torch.ormqr(ta, ta[0], ta))
    r = ptcore.randn
    d = ptcore.float64
    cases = [((3,), (3,), (3, 2), True), ((3, 3), (3,), (3,), True),
             ((3, 3), (3,), (4, 2), True), ((3, 3), (3,), (4, 2), False),
             ((3, 3), (4,), (3, 2), True), ((3, 3), (4,), (2, 3), False),
             ((5, 3), (2,), (5, 2), True), ((2, 3, 3), (3,), (2, 3, 2), True),
             ((2, 3, 3), (2, 3), (3, 2), True), ((2, 3, 3), (1, 3), (2, 3, 2), True),
             ((2, 3, 3), (2, 3), (3, 3, 2), True)]
    for sa, st, sc, left in cases:
        _raises(lambda: ptcore.ormqr(r(*sa, dtype=d), r(*st, dtype=d), r(*sc, dtype=d), left),
                lambda: torch.ormqr(torch.randn(*sa, dtype=torch.float64),
                                    torch.randn(*st, dtype=torch.float64),
                                    torch.randn(*sc, dtype=torch.float64), left))
    _raises(lambda: ptcore.ormqr(r(3, 3, dtype=d), r(3), r(3, 2, dtype=d)),
            lambda: torch.ormqr(torch.randn(3, 3, dtype=torch.float64), torch.randn(3),
                                torch.randn(3, 2, dtype=torch.float64)))
    _raises(lambda: ptcore.ormqr(r(3, 3, dtype=d), r(3, dtype=d), r(3, 2)),
            lambda: torch.ormqr(torch.randn(3, 3, dtype=torch.float64),
                                torch.randn(3, dtype=torch.float64), torch.randn(3, 2)))
    _raises(lambda: ptcore.ormqr(r(3, 3).long(), r(3).long(), r(3, 2).long()),
            lambda: torch.ormqr(torch.ones(3, 3).long(), torch.ones(3).long(),
                                torch.ones(3, 2).long()), NotImplementedError)


# ---------------------------------------------------------------------------
# tensorinv, tensorsolve, vander
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_tensorinv_tensorsolve_values(dtype):
    a = _np((6, 6), dtype, 1, well=True).reshape(2, 3, 6)
    pa, ta = _pair(a)
    _close(LA.tensorinv(pa, ind=2), torch.linalg.tensorinv(ta, ind=2), TOL[dtype])
    pa1, ta1 = _pair(a.reshape(6, 2, 3))
    _close(LA.tensorinv(pa1, ind=1), torch.linalg.tensorinv(ta1, ind=1), TOL[dtype])
    pb, tb = _pair(_np((6,), dtype, 2))
    _close(LA.tensorsolve(pa1, pb), torch.linalg.tensorsolve(ta1, tb), TOL[dtype])
    pa2, ta2 = _pair(np.ascontiguousarray(a.reshape(6, 2, 3).transpose(1, 0, 2)))
    for dims in ((0, 2), (0, -1)):
        _close(LA.tensorsolve(pa2, pb, dims=dims), torch.linalg.tensorsolve(ta2, tb, dims=dims),
               TOL[dtype])
    pb2, tb2 = _pair(_np((2, 3), dtype, 2))
    _close(LA.tensorsolve(pa, pb2), torch.linalg.tensorsolve(ta, tb2), TOL[dtype])


def test_tensorinv_tensorsolve_grad_out_errors():
    a = _np((6, 6), "float64", 1, well=True)
    _grads(lambda x: LA.tensorinv(x, 1), lambda x: torch.linalg.tensorinv(x, 1),
           [a.reshape(6, 2, 3)])
    _grads(lambda x, b: LA.tensorsolve(x, b), lambda x, b: torch.linalg.tensorsolve(x, b),
           [a.reshape(2, 3, 6), _np((2, 3), "float64", 2)])
    pa, ta = _pair(a.reshape(2, 3, 6))
    o = ptcore.empty(0, dtype=ptcore.float64)
    assert LA.tensorinv(pa, out=o) is o
    _close(o, torch.linalg.tensorinv(ta))
    _raises(lambda: LA.tensorinv(ptcore.zeros(2, 3, 4)),
            lambda: torch.linalg.tensorinv(torch.zeros(2, 3, 4)))
    _raises(lambda: LA.tensorinv(pa, ind=0), lambda: torch.linalg.tensorinv(ta, ind=0))
    _raises(lambda: LA.tensorinv(pa.long()), lambda: torch.linalg.tensorinv(ta.long()))
    _raises(lambda: LA.tensorsolve(ptcore.zeros(6, 2, 4), ptcore.zeros(6)),
            lambda: torch.linalg.tensorsolve(torch.zeros(6, 2, 4), torch.zeros(6)))
    _raises(lambda: LA.tensorsolve(pa.reshape(6, 2, 3), ptcore.zeros(6)),
            lambda: torch.linalg.tensorsolve(ta.reshape(6, 2, 3), torch.zeros(6)))


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "int64", "uint8"])
def test_vander(dtype):
    x = (_np((2, 4), dtype, 1) if dtype in FLOATS
         else np.arange(8).reshape(2, 4).astype(dtype) % 4)
    px, tx = _pair(x)
    _close(LA.vander(px), torch.linalg.vander(tx), TOL.get(dtype, 0))
    _close(LA.vander(px, N=6), torch.linalg.vander(tx, N=6), TOL.get(dtype, 0))
    _close(LA.vander(px[0, 0], N=3), torch.linalg.vander(tx[0, 0], N=3), TOL.get(dtype, 0))


def test_vander_grad_errors():
    _grads(lambda x: LA.vander(x, N=4), lambda x: torch.linalg.vander(x, N=4),
           [_np((2, 3), "float64", 1)])
    for kw in ({"N": 1}, {"N": 0}):
        _raises(lambda: LA.vander(ptcore.ones(3), **kw), lambda: torch.linalg.vander(
            torch.ones(3), **kw))
    _raises(lambda: LA.vander(ptcore.tensor(1.)), lambda: torch.linalg.vander(torch.tensor(1.)))
    for dt in ("bool", "float16"):
        _raises(lambda: LA.vander(ptcore.ones(3, dtype=getattr(ptcore, dt))),
                lambda: torch.linalg.vander(torch.ones(3, dtype=getattr(torch, dt))))
    with pytest.raises(TypeError):
        LA.vander(ptcore.ones(3), 3)


def test_namespace_matches_torch():
    public = {n for n in dir(torch.linalg) if not n.startswith("_")}
    missing = public - set(dir(LA))
    assert not missing
    assert set(LA.common_notes) == set(torch.linalg.common_notes)


# ---------------------------------------------------------------------------
# ldl_factor(_ex), ldl_solve
# ---------------------------------------------------------------------------
def _sym(shape, dtype, seed, herm):
    a = _np(shape, dtype, seed)
    return a + (np.conj(np.swapaxes(a, -1, -2)) if herm else np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_solve_values(dtype, hermitian):
    for seed in range(8):          # various 1x1/2x2 pivot patterns
        n = 1 + seed % 6
        pa, ta = _pair(_sym((2, n, n), dtype, seed, hermitian))
        rp = LA.ldl_factor_ex(pa, hermitian=hermitian)
        rt = torch.linalg.ldl_factor_ex(ta, hermitian=hermitian)
        assert type(rp).__name__ == "linalg_ldl_factor_ex" and rp._fields == ("LD", "pivots",
                                                                               "info")
        _close(rp.pivots, rt.pivots, 0)
        _close(rp.info, rt.info, 0)
        _close(rp.LD, rt.LD, TOL[dtype] * 10)
        LDp, pivp = LA.ldl_factor(pa, hermitian=hermitian)
        _close(LDp, rt.LD, TOL[dtype] * 10)
        pb, tb = _pair(_np((2, n, 3), dtype, seed + 50))
        _close(LA.ldl_solve(LDp, pivp, pb, hermitian=hermitian),
               torch.linalg.ldl_solve(rt.LD, rt.pivots, tb, hermitian=hermitian),
               TOL[dtype] * 100)


def test_ldl_broadcast_out_errors():
    pa, ta = _pair(_sym((4, 4), "float64", 1, False))
    LDp, pivp = LA.ldl_factor(pa)
    LDt, pivt = torch.linalg.ldl_factor(ta)
    pb, tb = _pair(_np((2, 4, 2), "float64", 2))
    _close(LA.ldl_solve(LDp, pivp, pb), torch.linalg.ldl_solve(LDt, pivt, tb))
    o = ptcore.empty(0, dtype=ptcore.float64)
    assert LA.ldl_solve(LDp, pivp, pb[0], out=o) is o
    outs = (ptcore.empty(0, dtype=ptcore.float64), ptcore.empty(0, dtype=ptcore.int32))
    assert LA.ldl_factor(pa, out=outs).LD is outs[0]
    r = LA.ldl_factor_ex(ptcore.zeros(2, 3, 3))
    _close(r.info, torch.linalg.ldl_factor_ex(torch.zeros(2, 3, 3)).info, 0)
    with pytest.raises(RuntimeError, match="Unknown error code: 1"):
        LA.ldl_factor(ptcore.zeros(3, 3))
    fP, fT = LA.ldl_factor, torch.linalg.ldl_factor
    _raises(lambda: fP(ptcore.zeros(3)), lambda: fT(torch.zeros(3)))
    _raises(lambda: fP(ptcore.zeros(3, 4)), lambda: fT(torch.zeros(3, 4)))
    _raises(lambda: fP(pa.long()), lambda: fT(ta.long()))
    _raises(lambda: fP(pa.half()), lambda: fT(ta.half()), NotImplementedError)
    sP, sT = LA.ldl_solve, torch.linalg.ldl_solve
    _raises(lambda: sP(LDp, pivp, pb[0, :, 0]), lambda: sT(LDt, pivt, tb[0, :, 0]), IndexError)
    _raises(lambda: sP(LDp, pivp, ptcore.zeros(3, 2, dtype=ptcore.float64)),
            lambda: sT(LDt, pivt, torch.zeros(3, 2, dtype=torch.float64)))
    _raises(lambda: sP(LDp, pivp, pb.float()), lambda: sT(LDt, pivt, tb.float()))
    _raises(lambda: sP(LDp, pivp[:2], pb), lambda: sT(LDt, pivt[:2], tb))
    _raises(lambda: sP(LDp[0], pivp, pb), lambda: sT(LDt[0], pivt, tb))
    _raises(lambda: sP(LDp.long(), pivp, pb.long()), lambda: sT(LDt.long(), pivt, tb.long()))
    pa.requires_grad_(True)
    ta.requires_grad_(True)
    _raises(lambda: fP(pa).LD.sum().backward(), lambda: fT(ta).LD.sum().backward())
