"""ptcore.linalg on CUDA tensors (cuSOLVER / cuBLAS trsm through the driver
interface; on the emulated device scipy's LAPACK in stream order) equals the
CPU results: values, dtypes, shapes, batches, non-contiguous inputs, errors
(singular / not positive-definite, with the CPU's messages), the ``_ex``
variants' info without synchronising, and gradients."""
import math
import warnings

import numpy as np
import pytest

import ptcore
from device_target import REAL
from ptcore.cuda.runtime import state as _runtime

L = ptcore.linalg
TOL = {ptcore.float32: 2e-4, ptcore.float64: 1e-9}
DTYPES = [ptcore.float32, ptcore.float64]


def _r(shape, dtype=ptcore.float64, seed=0):
    return ptcore.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(dtype)


def _spd(shape, dtype=ptcore.float64, seed=0):
    a = _r(shape, ptcore.float64, seed)
    n = shape[-1]
    return (a @ a.mT + n * ptcore.eye(n, dtype=ptcore.float64)).to(dtype)


def _tri(shape, upper, dtype=ptcore.float64, seed=0):
    a = _r(shape, ptcore.float64, seed)
    n = shape[-1]
    a = a + 3 * ptcore.eye(n, dtype=ptcore.float64)
    return (a.triu() if upper else a.tril()).to(dtype)


def _sym_small_diag(shape, dtype=ptcore.float64, seed=0):
    """Symmetric matrices with a small diagonal (Bunch-Kaufman's 2x2 pivots)."""
    a = _r(shape, ptcore.float64, seed)
    a = a + a.mT
    return (a - 0.999 * ptcore.diag_embed(a.diagonal(dim1=-2, dim2=-1))).to(dtype)


def _flatten(x):
    if isinstance(x, (tuple, list)):
        out = []
        for y in x:
            out += _flatten(y)
        return out
    return [x]


def _close(got, want, tol):
    got, want = _flatten(got), _flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if not isinstance(w, ptcore.Tensor):
            assert g == w
            continue
        assert g.device.type == "cuda", g.device
        gc = g.cpu()
        assert gc.dtype == w.dtype and tuple(gc.shape) == tuple(w.shape), (gc.dtype, w.dtype,
                                                                           gc.shape, w.shape)
        if w.numel():
            np.testing.assert_allclose(gc.numpy(), w.numpy(), rtol=tol, atol=tol)


def _on(args, dev):
    """``args`` with every tensor moved to ``dev`` (non-contiguous layouts kept
    by moving the base through its transposed form when asked)."""
    out = []
    for a in args:
        if isinstance(a, ptcore.Tensor):
            out.append(a.to(dev))
        elif isinstance(a, list):
            out.append(_on(a, dev))
        else:
            out.append(a)
    return out


# name -> (function, args builder(dtype), kwargs); every case is run on the CPU
# and on the device and compared
def _cases():
    c = {}
    c["inv"] = (L.inv, lambda d: [_spd((2, 4, 4), d)], {})
    c["inv_ex"] = (L.inv_ex, lambda d: [_r((3, 3), d)], {})
    c["inverse"] = (ptcore.inverse, lambda d: [_r((4, 4), d, 1)], {})
    c["det"] = (L.det, lambda d: [_r((2, 3, 4, 4), d)], {})
    c["det_top"] = (ptcore.det, lambda d: [_r((5, 5), d, 2)], {})
    c["slogdet"] = (L.slogdet, lambda d: [_r((3, 4, 4), d, 3)], {})
    c["slogdet_top"] = (ptcore.slogdet, lambda d: [_r((4, 4), d, 4)], {})
    c["logdet"] = (ptcore.logdet, lambda d: [_spd((2, 3, 3), d)], {})
    c["solve"] = (L.solve, lambda d: [_spd((2, 1, 4, 4), d), _r((3, 4, 2), d)], {})
    c["solve_vec"] = (L.solve, lambda d: [_spd((4, 4), d), _r((4,), d)], {})
    c["solve_right"] = (L.solve, lambda d: [_spd((2, 3, 3), d), _r((2, 5, 3), d)], {"left": False})
    c["solve_ex"] = (L.solve_ex, lambda d: [_spd((3, 3), d), _r((3, 2), d)], {})
    c["cholesky"] = (L.cholesky, lambda d: [_spd((2, 4, 4), d)], {})
    c["cholesky_upper"] = (L.cholesky, lambda d: [_spd((4, 4), d)], {"upper": True})
    c["cholesky_ex"] = (L.cholesky_ex, lambda d: [_spd((3, 3), d)], {})
    c["cholesky_top"] = (ptcore.cholesky, lambda d: [_spd((3, 3), d)], {"upper": True})
    c["lu_factor"] = (L.lu_factor, lambda d: [_r((2, 4, 4), d)], {})
    c["lu_factor_ex_wide"] = (L.lu_factor_ex, lambda d: [_r((3, 5), d)], {})
    c["lu_tall"] = (L.lu, lambda d: [_r((2, 5, 3), d)], {})
    c["lu_wide"] = (L.lu, lambda d: [_r((3, 5), d)], {})
    c["ldl_factor_ex"] = (L.ldl_factor_ex, lambda d: [_sym_small_diag((2, 5, 5), d)], {})
    c["ldl_solve"] = (lambda a, b: L.ldl_solve(*L.ldl_factor(a), b),
                      lambda d: [_sym_small_diag((2, 5, 5), d, 1), _r((3, 2, 5, 2), d)], {})
    c["lu_unpack"] = (lambda a: ptcore.lu_unpack(*L.lu_factor(a)), lambda d: [_r((2, 4, 3), d)], {})
    c["lu_solve"] = (lambda a, b, **k: L.lu_solve(*L.lu_factor(a), b, **k),
                     lambda d: [_r((4, 4), d), _r((2, 4, 3), d)], {})
    c["lu_solve_adjoint"] = (lambda a, b, **k: L.lu_solve(*L.lu_factor(a), b, **k),
                             lambda d: [_r((4, 4), d), _r((4, 3), d)], {"adjoint": True})
    c["lu_solve_right"] = (lambda a, b, **k: L.lu_solve(*L.lu_factor(a), b, **k),
                           lambda d: [_r((4, 4), d), _r((3, 4), d)], {"left": False})
    c["eigvalsh"] = (L.eigvalsh, lambda d: [_spd((2, 5, 5), d)], {})
    c["eigvalsh_U"] = (L.eigvalsh, lambda d: [_r((4, 4), d)], {"UPLO": "U"})
    c["svdvals_tall"] = (L.svdvals, lambda d: [_r((2, 5, 3), d)], {})
    c["svdvals_wide"] = (L.svdvals, lambda d: [_r((3, 6), d)], {})
    c["qr"] = (L.qr, lambda d: [_r((2, 5, 3), d)], {})
    c["qr_wide"] = (L.qr, lambda d: [_r((3, 5), d)], {})
    c["qr_complete"] = (L.qr, lambda d: [_r((5, 3), d)], {"mode": "complete"})
    c["qr_r"] = (lambda a: L.qr(a, mode="r")[1], lambda d: [_r((4, 3), d)], {})
    c["qr_top"] = (ptcore.qr, lambda d: [_r((4, 3), d)], {"some": False})
    c["geqrf"] = (ptcore.geqrf, lambda d: [_r((2, 5, 3), d)], {})
    c["householder_product"] = (lambda a: L.householder_product(*ptcore.geqrf(a)),
                                lambda d: [_r((2, 5, 3), d)], {})
    c["orgqr_k"] = (lambda a, t: ptcore.orgqr(a, t), lambda d: [_r((4, 3), d), _r((2,), d)], {})
    c["ormqr"] = (lambda a, c_, **k: ptcore.ormqr(*ptcore.geqrf(a), c_, **k),
                  lambda d: [_r((4, 3), d), _r((4, 2), d)], {"transpose": True})
    c["ormqr_right"] = (lambda a, c_, **k: ptcore.ormqr(*ptcore.geqrf(a), c_, **k),
                        lambda d: [_r((3, 4, 4), d), _r((3, 2, 4), d)], {"left": False})
    c["cholesky_solve"] = (lambda a, b: ptcore.cholesky_solve(b, L.cholesky(a)),
                           lambda d: [_spd((2, 4, 4), d), _r((4, 3), d)], {})
    c["cholesky_solve_upper"] = (lambda a, b: ptcore.cholesky_solve(b, L.cholesky(a, upper=True),
                                                                    upper=True),
                                 lambda d: [_spd((4, 4), d), _r((2, 4, 3), d)], {})
    c["cholesky_inverse"] = (lambda a: ptcore.cholesky_inverse(L.cholesky(a)),
                             lambda d: [_spd((2, 4, 4), d)], {})
    c["solve_triangular"] = (L.solve_triangular, lambda d: [_tri((2, 4, 4), True, d),
                                                             _r((4, 3), d)], {"upper": True})
    c["solve_triangular_right_unit"] = (
        L.solve_triangular, lambda d: [_tri((4, 4), False, d), _r((2, 3, 4), d)],
        {"upper": False, "left": False, "unitriangular": True})
    c["triangular_solve"] = (lambda b, a, **k: ptcore.triangular_solve(b, a, **k),
                             lambda d: [_r((2, 4, 3), d), _tri((4, 4), False, d)],
                             {"upper": False, "transpose": True})
    for o in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        c[f"matrix_norm_{o}"] = (L.matrix_norm, lambda d: [_r((2, 4, 3), d)], {"ord": o})
    c["matrix_norm_dims"] = (L.matrix_norm, lambda d: [_r((3, 2, 4), d)],
                             {"ord": 2, "dim": (0, 2), "keepdim": True})
    c["norm_2"] = (L.norm, lambda d: [_r((4, 3), d)], {"ord": 2})
    c["vector_norm"] = (L.vector_norm, lambda d: [_r((3, 4), d)], {"ord": 3, "dim": 1})
    for p in (None, "fro", "nuc", 2, -2, 1, math.inf):
        c[f"cond_{p}"] = (L.cond, lambda d: [_spd((2, 3, 3), d)], {"p": p})
    c["matrix_rank"] = (L.matrix_rank, lambda d: [_r((2, 5, 2), d) @ _r((2, 4), d)], {})
    c["matrix_rank_herm_atol"] = (L.matrix_rank, lambda d: [_spd((4, 4), d)],
                                  {"hermitian": True, "atol": 4.5})
    c["pinv_tall"] = (L.pinv, lambda d: [_r((2, 5, 3), d)], {})
    c["pinv_wide_rtol"] = (L.pinv, lambda d: [_r((3, 5), d)], {"rtol": 0.3})
    c["pinv_hermitian"] = (L.pinv, lambda d: [_spd((3, 3), d)], {"hermitian": True})
    c["pinverse"] = (ptcore.pinverse, lambda d: [_r((4, 3), d)], {})
    c["lstsq_tall"] = (lambda a, b: L.lstsq(a, b, driver="gels")[:2],
                       lambda d: [_r((2, 6, 3), d), _r((1, 6, 2), d)], {})
    c["lstsq_wide"] = (lambda a, b: L.lstsq(a, b, driver="gels")[0],
                       lambda d: [_r((2, 3, 5), d), _r((2, 3, 2), d)], {})
    c["lstsq_vec"] = (lambda a, b: L.lstsq(a, b, driver="gels")[0],
                      lambda d: [_r((5, 3), d), _r((5,), d)], {})
    c["matrix_power_3"] = (L.matrix_power, lambda d: [_r((2, 3, 3), d)], {"n": 3})
    c["matrix_power_0"] = (L.matrix_power, lambda d: [_r((2, 3, 3), d)], {"n": 0})
    c["matrix_power_-2"] = (L.matrix_power, lambda d: [_spd((3, 3), d)], {"n": -2})
    c["matrix_power_top"] = (ptcore.matrix_power, lambda d: [_r((3, 3), d)], {"n": 5})
    c["matrix_exp"] = (L.matrix_exp, lambda d: [_r((2, 3, 3), d)], {})
    c["multi_dot"] = (lambda a, b, c_: L.multi_dot([a, b, c_]),
                      lambda d: [_r((3,), d), _r((3, 5), d), _r((5, 2), d)], {})
    c["tensorinv"] = (L.tensorinv, lambda d: [_spd((6, 6), d).reshape(6, 2, 3)], {"ind": 1})
    c["tensorsolve"] = (L.tensorsolve, lambda d: [_spd((6, 6), d).reshape(2, 3, 6), _r((2, 3), d)],
                        {})
    c["vander"] = (L.vander, lambda d: [_r((2, 4), d)], {"N": 3})
    c["vecdot"] = (L.vecdot, lambda d: [_r((2, 4), d), _r((2, 4), d, 1)], {})
    c["cross"] = (L.cross, lambda d: [_r((3, 1, 4), d), _r((3, 2, 4), d, 1)], {"dim": 0})
    c["cross_top"] = (ptcore.cross, lambda d: [_r((2, 3), d), _r((2, 3), d, 1)], {"dim": 1})
    # Tensor methods (the core's geqrf/orgqr/ormqr run the composites on the device)
    c["methods"] = (lambda a: (a.det(), a.inverse(), a.slogdet(), a.logdet(), a.pinverse(),
                               a.matrix_power(2), a.cholesky(), a.qr(), a.geqrf()),
                    lambda d: [_spd((3, 3), d)], {})
    c["method_orgqr_ormqr"] = (lambda a, c_: (a.geqrf()[0].orgqr(a.geqrf()[1]),
                                              a.geqrf()[0].ormqr(a.geqrf()[1], c_)),
                               lambda d: [_r((4, 3), d), _r((4, 2), d)], {})
    return c


CASES = _cases()
# results whose values are only defined up to column signs are compared
# through sign-invariant functions in test_decompositions_up_to_signs


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_cpu(name, dtype):
    fn, build, kw = CASES[name]
    args = build(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(*args, **kw)
        got = fn(*_on(args, "cuda"), **kw)
    _close(got, want, TOL[dtype])


def test_non_contiguous_inputs_and_second_device():
    """Transposed, sliced and expanded inputs (the solver reads column-major
    copies), on cuda:1 too."""
    base = _r((6, 7, 5))
    for dev in [f"cuda:{i}" for i in range(min(2, ptcore.cuda.device_count()))]:
        a = base.to(dev)
        nc = a[::2, 1:6, :].mT          # (3, 5, 5), strided
        assert not nc.is_contiguous()
        _close(L.inv(nc + 5 * ptcore.eye(5, dtype=nc.dtype, device=dev)),
               L.inv(base[::2, 1:6, :].mT + 5 * ptcore.eye(5, dtype=base.dtype)), 1e-9)
        _close(L.det(nc), L.det(base[::2, 1:6, :].mT), 1e-9)
        _close(L.svdvals(a[:, ::2, :]), L.svdvals(base[:, ::2, :]), 1e-9)
        ex = a[0, :5].expand(3, 5, 5)
        _close(L.solve(ex + 4 * ptcore.eye(5, dtype=ex.dtype, device=dev), a[1, :5, :2]),
               L.solve(base[0, :5].expand(3, 5, 5) + 4 * ptcore.eye(5, dtype=base.dtype),
                       base[1, :5, :2]), 1e-9)
        r = L.inv(nc + 5 * ptcore.eye(5, dtype=nc.dtype, device=dev))
        assert r.device == ptcore.device(dev)
    # the input is never overwritten by the in-place factorisations
    a = base[0, :5].cuda()
    before = a.cpu().clone()
    L.lu_factor(a.mT), L.cholesky_ex(a), L.qr(a), L.svd(a), L.eigh(a)
    assert bool((a.cpu() == before).all())


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_decompositions_up_to_signs(dtype):
    """eigh and svd: values equal the CPU's; vectors reconstruct the input,
    are orthonormal, and agree with the CPU's up to signs."""
    tol = TOL[dtype] * 10
    A = _spd((3, 5, 5), dtype)
    w, V = L.eigh(A.cuda())
    wc, Vc = L.eigh(A)
    _close(w, wc, tol)
    Vg = V.cpu().numpy()
    np.testing.assert_allclose(np.abs(np.sum(Vg * Vc.numpy(), axis=-2)), 1.0, atol=tol)
    _close(V @ w.diag_embed() @ V.mT, A, tol * 10)
    for shape, full in (((2, 6, 4), True), ((2, 4, 6), True), ((5, 3), False), ((3, 5), False)):
        M = _r(shape, dtype)
        U, S, Vh = L.svd(M.cuda(), full_matrices=full)
        Uc, Sc, Vhc = L.svd(M, full_matrices=full)
        assert U.shape == Uc.shape and Vh.shape == Vhc.shape
        _close(S, Sc, tol)
        k = min(shape[-2:])
        rec = U.narrow(-1, 0, k) @ S.diag_embed().to(dtype) @ Vh.narrow(-2, 0, k)
        _close(rec, M, tol * 10)
        eye_u = ptcore.eye(U.shape[-1], dtype=dtype)
        _close(U.mT @ U, eye_u.expand(*U.shape[:-2], *eye_u.shape).contiguous(), tol * 10)
        eye_v = ptcore.eye(Vh.shape[-2], dtype=dtype)
        _close(Vh @ Vh.mT, eye_v.expand(*Vh.shape[:-2], *eye_v.shape).contiguous(), tol * 10)
        # torch.svd returns V: the same subspace
        u2, s2, v2 = ptcore.svd(M.cuda(), some=not full)
        _close(v2.mT, Vh.cpu(), tol)
        _, s3, _ = ptcore.svd(M.cuda(), compute_uv=False)
        _close(s3, Sc, tol)


def test_empty_and_zero_batch():
    cases = [(L.inv, (0, 3, 3)), (L.det, (2, 0, 0)), (L.cholesky, (0, 2, 2)),
             (L.svdvals, (2, 0, 3)),
             (lambda a: L.qr(a)[1], (2, 3, 0)), (L.eigvalsh, (0, 4, 4)), (L.pinv, (3, 0)),
             (lambda a: L.lu_factor(a)[0], (0, 2, 2))]
    for fn, shape in cases:
        a = ptcore.zeros(shape, dtype=ptcore.float64)
        _close(fn(a.cuda()), fn(a), 0)


# ---------------------------------------------------------------------------
# errors: the CPU's exceptions and messages
# ---------------------------------------------------------------------------
def _same_error(fn, *args, **kw):
    with pytest.raises(Exception) as cpu:
        fn(*args, **kw)
    with pytest.raises(type(cpu.value)) as dev:
        fn(*_on(args, "cuda"), **kw)
    assert str(dev.value) == str(cpu.value)
    return dev.value


def test_singular_and_indefinite_raise_the_cpu_errors():
    S = ptcore.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], dtype=ptcore.float64)
    e = _same_error(L.inv, S)
    assert isinstance(e, L.LinAlgError)
    batch = ptcore.stack([ptcore.eye(3, dtype=ptcore.float64), S])
    e = _same_error(L.inv, batch)
    assert "(Batch element 1)" in str(e)
    _same_error(L.solve, S, ptcore.ones(3, 1, dtype=ptcore.float64))
    _same_error(L.lu_factor, S)
    _same_error(L.inv_ex, S, check_errors=True)
    _same_error(L.lu_factor_ex, S, check_errors=True)
    _same_error(L.solve_ex, S, ptcore.ones(3, 1, dtype=ptcore.float64), check_errors=True)
    notpd = ptcore.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=ptcore.float32)
    e = _same_error(L.cholesky, notpd)
    assert "order 2 is not positive-definite" in str(e)
    _same_error(L.cholesky_ex, ptcore.stack([notpd, notpd]), check_errors=True)
    nan = ptcore.tensor([[1.0, math.nan], [0.0, 1.0]], dtype=ptcore.float64)
    _same_error(L.svd, nan)
    _same_error(L.svdvals, ptcore.stack([ptcore.eye(2, dtype=ptcore.float64), nan]))


def test_ex_variants_report_info_without_synchronising(monkeypatch):
    S = ptcore.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ptcore.float64)
    notpd = ptcore.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=ptcore.float64)
    cases = [(L.inv_ex, (S,), {}), (L.cholesky_ex, (notpd,), {}), (L.lu_factor_ex, (S,), {}),
             (L.solve_ex, (S, ptcore.ones(2, 1, dtype=ptcore.float64)), {})]
    drv = _runtime.lazy_init("test")
    syncs = []
    # (device factories such as arange, used by tril, upload host data with a blocking
    # copy in this runtime; what must not happen is reading results back)
    for name in ("memcpy_dtoh", "device_synchronize", "event_synchronize"):
        orig = getattr(drv, name)
        monkeypatch.setattr(drv, name, lambda *a, _o=orig, _n=name: (syncs.append(_n), _o(*a))[1])
    for fn, args, kw in cases:
        want = fn(*args, **kw)
        dargs = _on(args, "cuda")
        ptcore.cuda.synchronize()
        syncs.clear()
        got = fn(*dargs, **kw)
        assert syncs == [], (fn, syncs)
        assert got.info.device.type == "cuda" and got.info.dtype == ptcore.int32
        assert int(got.info.cpu()) == int(want.info) != 0
    s = S.cuda()
    ptcore.cuda.synchronize()
    syncs.clear()
    with pytest.raises(L.LinAlgError):
        L.inv(s)
    assert syncs, "the checking variant reads info back"


def test_argument_errors_match_cpu():
    a = _r((3, 4))
    _same_error(L.inv, a)                                  # not square
    _same_error(L.inv, _r((3,)))                           # 1-D
    _same_error(L.inv, ptcore.ones(3, 3, dtype=ptcore.int64))
    _same_error(L.det, ptcore.ones(3, 3, dtype=ptcore.int64))
    _same_error(L.eigh, _r((3, 3)), UPLO="X")
    _same_error(L.solve, _r((3, 3)), _r((4, 2)))
    _same_error(L.solve, _r((3, 3)), _r((3, 2), ptcore.float32))
    _same_error(L.qr, _r((3, 3)), mode="bad")
    _same_error(L.matrix_norm, _r((3, 3)), ord=3)
    _same_error(L.matrix_power, _r((3, 4)), 2)
    _same_error(L.multi_dot, [_r((3,))])
    _same_error(L.solve_triangular, _r((3, 3)), _r((4, 2)), upper=True)
    _same_error(L.householder_product, _r((2, 3)), _r((2,)))
    _same_error(L.lstsq, _r((3, 2)), _r((4, 1)))


def test_unsupported_on_cuda_raise_clearly():
    # (complex matrices run: tests/cuda/emulated/test_linalg_complex_cuda.py)
    with pytest.raises(RuntimeError, match="other than `gels` is not supported on CUDA"):
        L.lstsq(_r((4, 3)).cuda(), _r((4, 1)).cuda(), driver="gelsd")
    with pytest.raises(RuntimeError, match="same device"):
        L.solve(_r((3, 3)).cuda(), _r((3, 1)))
    # the CUDA svd drivers are accepted (all run gesvd), others refused
    _close(L.svdvals(_r((4, 3)).cuda(), driver="gesvdj"), L.svdvals(_r((4, 3))), 1e-9)
    with pytest.raises(RuntimeError, match="unknown svd driver gesdd"):
        L.svd(_r((4, 3)).cuda(), driver="gesdd")


# ---------------------------------------------------------------------------
# eig / eigvals (geev; real input -> complex results, as PyTorch)
# ---------------------------------------------------------------------------
def _eig_inputs(dtype):
    rot = ptcore.tensor([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])   # +-2i and 3
    return [_r((4, 4), dtype), _r((2, 3, 5, 5), dtype, 1), rot.to(dtype),
            ptcore.tensor([[2.0, 1.0], [0.0, 2.0]]).to(dtype),                  # defective
            _r((1, 1), dtype, 2)]


def _close_up_to_phase(V, Vc, tol):
    """Eigenvector matrices (device, CPU) equal up to a unit-modulus factor per
    column: each column is normalised to unit norm, its phase is free (LAPACK
    makes the largest component real; cuSOLVER's choice of sign may differ)."""
    g, c = V.cpu().numpy(), Vc.numpy()
    inner = np.sum(g.conj() * c, axis=-2, keepdims=True)            # v_dev^H v_cpu per column
    np.testing.assert_allclose(np.abs(inner), 1.0, rtol=tol, atol=tol)
    np.testing.assert_allclose(g * (inner / np.abs(inner)), c, rtol=tol, atol=tol)


def _complex_eig_inputs(dtype):
    cdt = ptcore.complex64 if dtype is ptcore.float32 else ptcore.complex128
    return [ptcore.complex(_r((4, 4), dtype, 3), _r((4, 4), dtype, 4)).to(cdt),
            ptcore.complex(_r((3, 2, 3, 3), dtype, 5), _r((3, 2, 3, 3), dtype, 6)).to(cdt)]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_eig_matches_numpy(dtype):
    """Eigenvalue sets equal numpy.linalg.eig's, A v = lambda v with unit
    columns, complex dtypes, batches, real and complex inputs; the CPU
    front-end's eigenvalues, and its eigenvectors up to each column's phase
    (on the emulator, the same phases)."""
    tol = TOL[dtype] * 10
    cdt = ptcore.complex64 if dtype is ptcore.float32 else ptcore.complex128
    for A in _eig_inputs(dtype) + _complex_eig_inputs(dtype):
        w, V = L.eig(A.cuda())
        assert w.device.type == "cuda" and V.device.type == "cuda"
        assert w.dtype is cdt and V.dtype is cdt
        assert tuple(w.shape) == tuple(A.shape[:-1]) and tuple(V.shape) == tuple(A.shape)
        a = A.numpy().astype(np.complex128 if A.dtype.is_complex else np.float64)
        wn = np.linalg.eigvals(a)
        wg, Vg = w.cpu().numpy(), V.cpu().numpy()
        np.testing.assert_allclose(np.sort_complex(wg.reshape(-1, a.shape[-1])),
                                   np.sort_complex(wn.reshape(-1, a.shape[-1])), rtol=tol,
                                   atol=tol)
        if A.shape[-1] != 2:        # (the defective matrix's vectors are parallel)
            np.testing.assert_allclose(a @ Vg, Vg * wg[..., None, :], rtol=tol, atol=tol)
        np.testing.assert_allclose(np.linalg.norm(Vg, axis=-2), 1.0, rtol=tol, atol=tol)
        wc, Vc = L.eig(A)
        _close(w, wc, tol)
        _close_up_to_phase(V, Vc, tol)
        if not REAL:                # the emulator runs the CPU's LAPACK geev: the same phases
            _close(V, Vc, tol)
        ev = L.eigvals(A.cuda())
        assert ev.device.type == "cuda" and ev.dtype is cdt
        _close(ev, wc, tol)


def test_eig_errors_and_empty_like_cpu():
    nan = ptcore.tensor([[1.0, math.nan], [0.0, 1.0]], dtype=ptcore.float64)
    _same_error(L.eig, nan)
    _same_error(L.eigvals, nan)
    _same_error(L.eig, _r((3, 4)))                       # not square
    _same_error(L.eigvals, ptcore.ones(3, 3, dtype=ptcore.int64))
    for shape in ((0, 3, 3), (2, 0, 0)):
        a = ptcore.zeros(shape, dtype=ptcore.float64)
        _close(L.eig(a.cuda()), L.eig(a), 0)
        _close(L.eigvals(a.cuda()), L.eigvals(a), 0)
    w = ptcore.empty(3, dtype=ptcore.complex128, device="cuda")
    A = _r((3, 3))
    assert L.eigvals(A.cuda(), out=w) is w
    _close(w, L.eigvals(A), 1e-9)


def test_solver_calls_run_in_stream_order():
    """Work queued on a side stream: the result is read after that stream's
    earlier copy, and the allocator's stream semantics hold."""
    A = _spd((4, 4))
    s = ptcore.cuda.Stream()
    with ptcore.cuda.stream(s):
        a = A.cuda(non_blocking=True)
        r = L.inv(a)
        d = L.det(a)
    s.synchronize()
    _close(r, L.inv(A), 1e-9)
    _close(d, L.det(A), 1e-9)


# ---------------------------------------------------------------------------
# gradients: the same graph on the device as on the CPU
# ---------------------------------------------------------------------------
def _loss_sum(out):
    t = 0
    for x in _flatten(out):
        if isinstance(x, ptcore.Tensor) and x.dtype.is_floating_point and x.requires_grad:
            t = t + (x * x).sum() if x.dim() else t + x * x
    return t


GRADS = {
    "inv": (lambda a: L.inv(a), [_spd((2, 3, 3))]),
    "det": (lambda a: L.det(a), [_r((2, 3, 3))]),
    "slogdet": (lambda a: L.slogdet(a).logabsdet, [_r((3, 3))]),
    "logdet": (lambda a: ptcore.logdet(a), [_spd((3, 3))]),
    "solve": (lambda a, b: L.solve(a, b), [_spd((2, 3, 3)), _r((3, 2))]),
    "solve_left_false": (lambda a, b: L.solve(a, b, left=False), [_spd((3, 3)), _r((2, 3))]),
    "cholesky": (lambda a: L.cholesky(a), [_spd((2, 3, 3))]),
    "cholesky_upper": (lambda a: L.cholesky(a, upper=True), [_spd((3, 3))]),
    "qr": (lambda a: L.qr(a), [_r((4, 3))]),
    "eigh": (lambda a: (L.eigh(a)[0], L.eigh(a)[1] ** 2), [_spd((3, 3))]),
    "eigvalsh": (lambda a: L.eigvalsh(a), [_spd((2, 3, 3))]),
    "svd": (lambda a: (L.svd(a, full_matrices=False)[1],
                       L.svd(a, full_matrices=False)[0] @ L.svd(a, full_matrices=False)[2]),
            [_r((4, 3))]),
    "svdvals_wide": (lambda a: L.svdvals(a), [_r((2, 3, 5))]),
    "pinv": (lambda a: L.pinv(a), [_r((4, 3))]),
    "lstsq": (lambda a, b: L.lstsq(a, b).solution, [_r((5, 3)), _r((5, 2))]),
    "matrix_norm_2": (lambda a: L.matrix_norm(a, 2), [_r((3, 4))]),
    "matrix_norm_nuc": (lambda a: L.matrix_norm(a, "nuc"), [_r((3, 4))]),
    "matrix_norm_1": (lambda a: L.matrix_norm(a, 1), [_r((3, 4))]),
    "cond": (lambda a: L.cond(a), [_spd((3, 3))]),
    "solve_triangular": (lambda a, b: L.solve_triangular(a, b, upper=True),
                         [_tri((2, 3, 3), True), _r((3, 2))]),
    "solve_triangular_right_unit": (
        lambda a, b: L.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [_tri((3, 3), False), _r((2, 2, 3))]),
    "lu": (lambda a: L.lu(a)[1:], [_r((4, 3))]),
    "lu_solve": (lambda b: L.lu_solve(*L.lu_factor(_r((3, 3)).to(b.device)), b), [_r((3, 2))]),
    "cholesky_solve": (lambda a, b: ptcore.cholesky_solve(b, a), [_tri((3, 3), False),
                                                                  _r((3, 2))]),
    "cholesky_inverse": (lambda a: ptcore.cholesky_inverse(a), [_tri((3, 3), False)]),
    "householder_product": (lambda a, t: L.householder_product(a, t), [_r((4, 3)), _r((2,))]),
    "matrix_power": (lambda a: L.matrix_power(a, -2), [_spd((3, 3))]),
    "matrix_exp": (lambda a: L.matrix_exp(a), [_r((3, 3))]),
    "multi_dot": (lambda a, b, c: L.multi_dot([a, b, c]), [_r((2, 3)), _r((3, 4)), _r((4,))]),
    "cross": (lambda a, b: L.cross(a, b), [_r((2, 3)), _r((1, 3))]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_cpu(name):
    fn, args = GRADS[name]
    cpu = [a.clone().requires_grad_() for a in args]
    dev = [a.cuda().requires_grad_() for a in args]
    _loss_sum(fn(*cpu)).backward()
    loss = _loss_sum(fn(*dev))
    assert loss.device.type == "cuda"
    loss.backward()
    for c, d in zip(cpu, dev):
        assert d.grad is not None and d.grad.device.type == "cuda"
        np.testing.assert_allclose(d.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-7, atol=1e-8)


# ---------------------------------------------------------------------------
# the driver's solver entry point (emulated device)
# ---------------------------------------------------------------------------
def test_driver_solver_checks_arguments_and_ranges():
    from ptcore.cuda.driver import interface as _driver
    from ptcore.cuda.emulated import solver as _host_solver
    drv = _runtime.lazy_init("test")
    a = _spd((2, 3, 3)).cuda()
    info = ptcore.zeros(2, dtype=ptcore.int32).cuda()
    piv = ptcore.zeros(2, 3, dtype=ptcore.int32).cuda()
    base = dict(m=3, n=3, A=a.data_ptr(), lda=3, ipiv=piv.data_ptr(), info=info.data_ptr())
    with pytest.raises(ValueError, match="ld of A = 2 is smaller than its 3 rows"):
        drv.solver(0, 0, "getrf", "D", **{**base, "lda": 2})
    with pytest.raises(ValueError, match="m = 2 < n = 3"):
        drv.solver(0, 0, "gesvd", "D", jobu="N", jobvt="N", m=2, n=3, A=a.data_ptr(), lda=2,
                   S=0, U=0, ldu=2, VT=0, ldvt=1, info=info.data_ptr())
    with pytest.raises(ValueError, match="unknown routine"):
        drv.solver(0, 0, "getri", "D", **base)
    with pytest.raises(ValueError, match="missing"):
        drv.solver(0, 0, "getrf", "D", m=3, n=3)
    with pytest.raises(ValueError, match="uplo = 2"):
        drv.solver(0, 0, "potrf", "D", uplo=2, n=3, A=a.data_ptr(), lda=3, info=info.data_ptr())
    with pytest.raises(ValueError, match="dtype must be"):
        drv.solver(0, 0, "getrf", "H", **base)
    if drv.is_emulated:
        # a batch running past the allocation is refused before anything is queued
        with pytest.raises(_driver.CudaError, match="not inside one live allocation"):
            drv.solver(0, 0, "getrf", "D", batch=10**6,
                       strides={"A": 72, "ipiv": 12, "info": 4}, **base)
    # the strided batch factors both matrices
    drv.solver(0, 0, "getrf", "D", batch=2, strides={"A": 72, "ipiv": 12, "info": 4}, **base)
    want = L.lu_factor(_spd((2, 3, 3)).mT)       # a column-major buffer is the transpose
    _close(a.mT, want.LU, 1e-12)
    _close(piv, want.pivots, 0)
    assert set(_host_solver.SIGNATURES) == {"getrf", "getrs", "potrf", "potrs", "geqrf", "orgqr",
                                            "ormqr", "syevd", "gesvd", "trsm", "geev", "sytrf",
                                            "sytrs"}


def test_out_arguments():
    """out= tensors of the right shape (the runtime does not grow device tensors)."""
    A = _spd((2, 3, 3))
    B = _r((2, 3, 2))
    d = A.cuda()

    def e(*shape, dt=ptcore.float64):
        return ptcore.empty(*shape, dtype=dt, device="cuda")
    out = e(2, 3, 3)
    assert L.inv(d, out=out) is out
    _close(out, L.inv(A), 1e-9)
    X = e(2, 3, 2)
    L.solve(d, B.cuda(), out=X)
    _close(X, L.solve(A, B), 1e-9)
    Q, R = e(2, 3, 3), e(2, 3, 3)
    L.qr(d, out=(Q, R))
    _close((Q, R), L.qr(A), 1e-9)
    Lo, info = e(2, 3, 3), e(2, dt=ptcore.int32)
    L.cholesky_ex(d, out=(Lo, info))
    _close((Lo, info), L.cholesky_ex(A), 1e-9)
    with pytest.raises(RuntimeError, match="dtype"):
        L.inv(d, out=e(2, 3, 3, dt=ptcore.float32))


# the linalg ops whose CUDA kernel is their own (CPU) front-end
_FRONT_ENDS = {
    "linalg": (
        "linalg_inv", "linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_solve",
        "linalg_solve_ex", "linalg_cholesky", "linalg_cholesky_ex", "linalg_eigh",
        "linalg_eigvalsh", "linalg_eig", "linalg_eigvals", "linalg_svd", "linalg_svdvals",
        "linalg_qr", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lstsq", "linalg_pinv",
        "matrix_rank", "matrix_norm", "norm", "matrix_power", "multi_dot", "solve_triangular",
        "householder_product", "vecdot", "linalg_cross", "lu", "lu_solve", "cond", "tensorinv",
        "tensorsolve", "vander", "ldl_factor", "ldl_factor_ex", "ldl_solve"),
    "ptcore": ("det", "slogdet", "logdet", "inverse", "cholesky", "svd", "qr", "pinverse",
               "matrix_power", "geqrf", "orgqr", "ormqr"),
    "Tensor": ("det", "slogdet", "logdet", "inverse", "cholesky", "svd", "qr", "pinverse",
               "matrix_power"),
}


def test_one_front_end_per_op():
    """Every linalg op's CUDA kernel is its own (CPU) front-end (declared
    ``device="frontend"``): the devices differ only in the LAPACK-level
    loops, which CUDA registers under the CPU loops' names."""
    from ptcore._dispatch import device
    from ptcore._dispatch.table import lookup
    from ptcore.linalg import _factor
    _runtime.lazy_init("test")
    n = 0
    for ns, names in _FRONT_ENDS.items():
        for name in names:
            d = lookup(name, ns)
            assert d is not None, (ns, name)
            assert d.decl.device == "frontend", (ns, name)
            assert d.kernels.get("cuda") is d.raw, (ns, name)
            n += 1
    assert n > 50
    for name in _factor._CPU_LOOPS:
        assert device.has_loop(name, "cuda"), name
    for name in ("unpack_pivots", "geqrf", "orgqr", "ormqr"):
        assert device.has_loop(name, "cuda"), name
    # lstsq's default driver follows the device's loop (gelsy on the CPU, gels on CUDA)
    assert not device.has_loop("lstsq_gelsy", "cuda")


def test_householder_loops_complex_and_recorded():
    """geqrf/orgqr/ormqr: cuSOLVER for real matrices, the front-end's
    reflector composite for complex ones and when a gradient is recorded;
    all equal the CPU's."""
    z = ptcore.complex(_r((2, 5, 3)), _r((2, 5, 3), seed=1))
    c = ptcore.complex(_r((2, 5, 2), seed=2), _r((2, 5, 2), seed=3))
    for a in (_r((2, 5, 3)), z):
        _close(ptcore.geqrf(a.cuda()), ptcore.geqrf(a), 1e-9)
        ref, tau = ptcore.geqrf(a)
        _close(L.householder_product(ref.cuda(), tau.cuda()), L.householder_product(ref, tau),
               1e-9)
        cc = c if a.dtype.is_complex else c.real.contiguous()
        _close(ptcore.ormqr(ref.cuda(), tau.cuda(), cc.cuda(), transpose=True),
               ptcore.ormqr(ref, tau, cc, transpose=True), 1e-9)
    ref, tau = ptcore.geqrf(_r((4, 3)))
    r = ref.cuda().requires_grad_()
    Q = L.householder_product(r, tau.cuda())
    assert Q.grad_fn is not None
    Q.sum().backward()
    rc = ref.clone().requires_grad_()
    L.householder_product(rc, tau).sum().backward()
    _close(r.grad, rc.grad, 1e-9)


def test_lu_pivots_unpack_in_one_kernel(launches):
    """lu / lu_unpack turn the pivots into the permutation with one kernel
    (a thread per matrix), not an op per interchange (0.8 s for a 2048 x 1024
    LU on the H200): the CPU's P; out-of-range pivots raise as on the CPU."""
    for shape in ((3, 9, 6), (2, 5, 8), (40, 33)):
        a = _r(shape, ptcore.float64)
        del launches[:]
        P, Lo, U = ptcore.linalg.lu(a.cuda())
        assert launches.count("ptc_index_unpack_pivots_c") == 1
        P0, L0, U0 = ptcore.linalg.lu(a)
        assert ptcore.equal(P.cpu(), P0)
        assert ptcore.allclose((P @ Lo @ U).cpu(), a, atol=1e-12)
    LU, piv = ptcore.linalg.lu_factor(_r((6, 6), ptcore.float64).cuda())
    piv[2] = 7
    with pytest.raises(RuntimeError, match=r"pivots out of range \[1, 6\]"):
        ptcore.lu_unpack(LU, piv)
    with pytest.raises(RuntimeError, match=r"pivots out of range \[1, 6\]"):
        ptcore.lu_unpack(LU.cpu(), piv.cpu())
