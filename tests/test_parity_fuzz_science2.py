"""Differential fuzzing of linalg / distributions / special / fft against torch
2.13, second round: regression tests for the differences found."""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


def _tol(x):
    return 1e-4 if np.asarray(x).dtype == np.float32 else 1e-11


def _close(a, b):
    """Equal up to the last bits: torch's LU is MKL's getrf, whose rounding (FMA, scaling
    by the pivot's reciprocal) ptcore models, but MKL picks its code path by CPU, so the
    last bits (2e-16 where exact arithmetic gives 0) are not portable across machines."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(b), b, 0)), initial=0)))
    np.testing.assert_allclose(a, b, rtol=_tol(a), atol=_tol(a) * scale, equal_nan=True)


def _same_lu(x, pivots=True):
    t = torch.linalg.lu_factor_ex(torch.from_numpy(x))
    r = ptcore.linalg.lu_factor_ex(ptcore.from_numpy(x.copy()))
    if pivots:
        _close(_np(r.LU), t.LU.numpy())
        np.testing.assert_array_equal(_np(r.pivots), t.pivots.numpy())
        assert int(r.info) == int(t.info)
    else:
        # rank-deficient: after a rounding-sized remainder the pivot choice (and so the
        # factors) may differ from one MKL code path to another; P L U is still A
        P, L, U = ptcore.lu_unpack(r.LU, r.pivots)
        np.testing.assert_allclose(_np(P @ L @ U), x, rtol=_tol(x), atol=_tol(x) * 10)


# ---------------------------------------------------------------- LU arithmetic

# singular and near-singular integer matrices whose exact pivots depend on the
# LU's rounding: torch (MKL getrf) leaves 2.2e-16-sized pivots in some, exact
# zeros in others; the float32 cases too
_SINGULAR = [
    [[1, 2], [2, 4]],
    [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
    [[1, 2, 3], [2, 4, 6], [1, 1, 1]],
    [[3, 6, 9], [1, 2, 3], [2, 2, 2]],
    [[2, 4, 1, 3], [1, 2, 5, 0], [3, 6, 6, 3], [0, 1, 1, 1]],
    [[4, 1, 2, 2, 0], [8, 2, 4, 4, 0], [1, 3, 3, 0, 2], [5, 4, 5, 2, 2], [1, 1, 1, 1, 1]],
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("m", _SINGULAR, ids=lambda m: f"{len(m)}x{len(m)}")
def test_lu_det_slogdet_of_singular_integer_matrices_as_torch(m, dtype):
    a = np.array(m, dtype=dtype)
    _same_lu(a, pivots=False)
    # det factors A^T for a contiguous real A, as torch: 0 up to rounding (torch's MKL gives
    # exact 0 or a 1e-16-sized value depending on the CPU's code path; so does ptcore's model)
    for x in (a, np.ascontiguousarray(a.T)):
        d = _np(ptcore.linalg.det(ptcore.from_numpy(x.copy())))
        _close(d, torch.linalg.det(torch.from_numpy(x)).numpy())
        rs = ptcore.linalg.slogdet(ptcore.from_numpy(x.copy()))
        assert np.isneginf(_np(rs.logabsdet)) == (d == 0) and (_np(rs.sign) == 0) == (d == 0)
    # inv_ex solves through the LU even when it is singular (torch: solve_ex(A, I))
    ri = ptcore.linalg.inv_ex(ptcore.from_numpy(a.copy()))
    assert int(ri.info) == int(ptcore.linalg.lu_factor_ex(ptcore.from_numpy(a.copy())).info)


def test_lu_random_small_matrices_as_torch():
    rng = np.random.default_rng(11)
    for trial in range(120):
        m = int(rng.integers(1, 17))
        n = m if trial % 2 else int(rng.integers(1, 17))
        if trial % 3 == 0:
            r = int(rng.integers(1, max(2, min(m, n))))
            a = rng.integers(-4, 5, size=(m, r)) @ rng.integers(-4, 5, size=(r, n))
        else:
            a = rng.normal(size=(m, n))
        for dt in ("float64", "float32"):
            _same_lu(a.astype(dt), pivots=trial % 3 != 0)


@pytest.mark.parametrize("m", [
    [[1e-310, 1.0], [3e-310, 2.0]],           # subnormal pivot: divided, not scaled
    [[1e-310, 1.0], [1e-310, 2.0]],
    [[float("nan"), 1.0], [2.0, 1.0]],        # a NaN pivot stays only in first place
    [[1.0, 1.0, 1.0], [float("nan"), 1.0, 2.0], [3.0, 1.0, 1.0]],
    [[0.0, float("inf")], [0.0, 1.0]],        # 0 * inf in the update is NaN
    [[float("inf"), 1.0], [float("inf"), 1.0]],
    [[0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [0.0, 1.0, 3.0]],
])
def test_lu_special_values_as_torch(m):
    _same_lu(np.array(m))


def test_inv_ex_and_solve_ex_of_singular_matrix_are_not_finite_as_torch():
    # torch's inv_ex is solve_ex(A, I): the LU is solved even when singular
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    ti = torch.linalg.inv_ex(torch.from_numpy(a))
    ri = ptcore.linalg.inv_ex(ptcore.from_numpy(a.copy()))
    assert int(ri.info) == int(ti.info) > 0
    assert not np.isfinite(_np(ri.inverse)).any() and not np.isfinite(ti.inverse.numpy()).any()
    b = np.ones((3, 1))
    ts = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b))
    rs = ptcore.linalg.solve_ex(ptcore.from_numpy(a.copy()), ptcore.from_numpy(b.copy()))
    assert int(rs.info) == int(ts.info) > 0
    assert np.isfinite(_np(rs.result)).all() == np.isfinite(ts.result.numpy()).all()
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.from_numpy(a))
    with pytest.raises(ptcore.linalg.LinAlgError):
        ptcore.linalg.inv(ptcore.from_numpy(a.copy()))


# ---------------------------------------------------------------- empty inputs

_EMPTY = [(0, 3), (3, 0), (2, 0, 4), (2, 3, 0), (0, 2, 3), (0, 0)]


@pytest.mark.parametrize("shape", _EMPTY)
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_matrix_rank_of_empty_matrices_as_torch(shape, hermitian):
    for dt in ("float32", "complex128"):
        t = torch.linalg.pinv(torch.zeros(shape, dtype=getattr(torch, dt)), hermitian=hermitian)
        r = ptcore.linalg.pinv(ptcore.zeros(shape, dtype=getattr(ptcore, dt)),
                               hermitian=hermitian)
        assert tuple(r.shape) == tuple(t.shape) and str(r.dtype)[7:] == str(t.dtype)[6:]
    t = torch.linalg.matrix_rank(torch.zeros(shape), hermitian=hermitian)
    r = ptcore.linalg.matrix_rank(ptcore.zeros(shape), hermitian=hermitian)
    assert tuple(r.shape) == tuple(t.shape) and r.dtype == ptcore.int64
    np.testing.assert_array_equal(_np(r), t.numpy())
    # the tolerances are not looked at
    r = ptcore.linalg.matrix_rank(ptcore.zeros(shape), hermitian=hermitian, atol=0.5, rtol=0.1)
    assert tuple(r.shape) == tuple(t.shape)
    # the dtype is still checked first, and non-empty non-square hermitian raises
    with pytest.raises(RuntimeError):
        ptcore.linalg.pinv(ptcore.zeros(shape, dtype=ptcore.int64), hermitian=hermitian)
    if hermitian:
        with pytest.raises(RuntimeError):
            ptcore.linalg.pinv(ptcore.zeros(2, 3), hermitian=True)
        with pytest.raises(RuntimeError):
            ptcore.linalg.matrix_rank(ptcore.zeros(2, 3), hermitian=True)


@pytest.mark.parametrize("shape", _EMPTY + [(0, 2, 2)])
def test_lu_without_pivoting_of_empty_matrices_as_torch(shape):
    t = torch.linalg.lu(torch.zeros(shape), pivot=False)
    r = ptcore.linalg.lu(ptcore.zeros(shape), pivot=False)
    for x, y in zip(r, t):
        assert tuple(x.shape) == tuple(y.shape)
    for fn in ("lu_factor", "lu_factor_ex"):
        t = getattr(torch.linalg, fn)(torch.zeros(shape), pivot=False)
        r = getattr(ptcore.linalg, fn)(ptcore.zeros(shape), pivot=False)
        for x, y in zip(r, t):
            assert tuple(x.shape) == tuple(y.shape) and str(x.dtype)[7:] == str(y.dtype)[6:]
    # non-empty: torch's CPU refuses LU without pivoting
    with pytest.raises(RuntimeError, match="without pivoting"):
        ptcore.linalg.lu(ptcore.ones(2, 2), pivot=False)


# ---------------------------------------------------------------- cond, solve_triangular

@pytest.mark.parametrize("p", ["fro", 1, -1, math.inf, -math.inf])
def test_cond_nan_product_is_inf_as_torch(p):
    a = [[float("nan"), 1.0], [1.0, 1.0]]
    t = torch.linalg.cond(torch.tensor(a), p)
    r = ptcore.linalg.cond(ptcore.tensor(a), p)
    assert math.isinf(float(r)) and float(r) == float(t)


@pytest.mark.parametrize("adt, bdt, want", [
    ("float32", "float64", "float32"), ("float64", "float32", "float64"),
    ("float32", "int64", "float32"), ("complex64", "complex128", "complex64"),
    ("complex64", "float64", "complex64"),
])
def test_solve_triangular_computes_in_As_dtype_as_torch(adt, bdt, want):
    a = np.triu(np.random.default_rng(0).normal(size=(3, 3))) + 3 * np.eye(3)
    b = np.arange(6.0).reshape(3, 2)
    t = torch.linalg.solve_triangular(torch.from_numpy(a).to(getattr(torch, adt)),
                                      torch.from_numpy(b).to(getattr(torch, bdt)), upper=True)
    r = ptcore.linalg.solve_triangular(ptcore.from_numpy(a).to(getattr(ptcore, adt)),
                                       ptcore.from_numpy(b).to(getattr(ptcore, bdt)), upper=True)
    assert str(t.dtype) == "torch." + want and str(r.dtype) == "ptcore." + want
    np.testing.assert_allclose(_np(r), t.numpy(), rtol=1e-5)


@pytest.mark.parametrize("adt", ["int64", "float16"])
def test_solve_triangular_low_precision_A_raises_whatever_B_as_torch(adt):
    with pytest.raises(NotImplementedError):
        torch.linalg.solve_triangular(torch.eye(3, dtype=getattr(torch, adt)), torch.ones(3, 2),
                                      upper=True)
    with pytest.raises(NotImplementedError):
        ptcore.linalg.solve_triangular(ptcore.eye(3, dtype=getattr(ptcore, adt)),
                                       ptcore.ones(3, 2), upper=True)


def test_solve_triangular_mixed_dtype_gradients_keep_each_dtype():
    grads = []
    for L in (torch, ptcore):
        A = L.tensor([[2.0, 1.0], [0.0, 4.0]], requires_grad=True)
        B = L.tensor([[1.0], [0.5]], dtype=L.float64, requires_grad=True)
        L.linalg.solve_triangular(A, B, upper=True).sum().backward()
        grads.append((A.grad, B.grad))
    (tA, tB), (rA, rB) = grads
    assert str(rA.dtype)[7:] == str(tA.dtype)[6:] and str(rB.dtype)[7:] == str(tB.dtype)[6:]
    np.testing.assert_allclose(_np(rA), tA.numpy(), rtol=1e-6)
    np.testing.assert_allclose(_np(rB), tB.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- distributions

@pytest.mark.parametrize("df", [0.0, -1.0, float("nan"), [1.0, 0.0]])
@pytest.mark.parametrize("validate_args", [False, None, True])
def test_studentT_nonpositive_df_raises_through_its_chi2_as_torch(df, validate_args):
    # torch's StudentT builds Chi2(df) with the default validation
    with pytest.raises(ValueError, match="Chi2"):
        torch.distributions.StudentT(torch.tensor(df), validate_args=validate_args)
    with pytest.raises(ValueError, match="Chi2"):
        ptcore.distributions.StudentT(ptcore.tensor(df), validate_args=validate_args)


def test_studentT_without_default_validation_builds_as_torch():
    for L in (torch, ptcore):
        L.distributions.Distribution.set_default_validate_args(False)
        try:
            d = L.distributions.StudentT(L.tensor([0.0, 2.0]))
            assert tuple(d.expand((3, 2))._chi2.batch_shape) == (3, 2)
        finally:
            L.distributions.Distribution.set_default_validate_args(True)


# ---------------------------------------------------------------- fft

@pytest.mark.parametrize("fn", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_fft2_family_dim_is_not_optional_as_torch(fn):
    # torch binds the 2-D transforms' dim as int[2] (fftn's is optional)
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(TypeError, match="dim"):
        getattr(torch.fft, fn)(torch.from_numpy(x), dim=None)
    with pytest.raises(TypeError, match="dim"):
        getattr(ptcore.fft, fn)(ptcore.from_numpy(x), dim=None)
    n = fn.replace("2", "n")
    t = getattr(torch.fft, n)(torch.from_numpy(x), dim=None)
    r = getattr(ptcore.fft, n)(ptcore.from_numpy(x), dim=None)
    np.testing.assert_allclose(_np(r), t.numpy(), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- grad_fn names

@pytest.mark.parametrize("fn", ["xlog1py", "zeta"])
def test_special_scalar_overloads_record_their_own_nodes_as_torch(fn):
    names = []
    for L in (torch, ptcore):
        a = L.rand(3, requires_grad=True) + 2
        f = getattr(L.special, fn)
        names.append([f(a, 1.5).grad_fn.name(), f(3.0, a).grad_fn.name(),
                      f(a, a).grad_fn.name()])
    assert names[0] == names[1]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stft_nodes_as_torch():
    names = []
    for L in (torch, ptcore):
        x = L.rand(12, requires_grad=True)
        # (return_complex=False is left out: its deprecation warning is given
        # once per process, and another test expects it)
        w = L.hann_window(4)
        names.append([L.stft(x, 4, window=w, return_complex=True).grad_fn.name(),
                      L.stft(x.reshape(2, 6), 4, window=w, return_complex=True).grad_fn.name()])
    assert names[0] == names[1]
    g = []
    for L in (torch, ptcore):
        x = L.tensor(np.linspace(-1, 1, 12), requires_grad=True)
        L.view_as_real(L.stft(x, 4, window=L.hann_window(4, dtype=L.float64),
                              return_complex=True)).pow(2).sum().backward()
        g.append(x.grad.numpy())
    np.testing.assert_allclose(g[1], g[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape, ind", [((), 1), ((3, 3), 3), ((2, 2), 5)])
def test_tensorinv_ind_beyond_the_dims_raises_as_torch(shape, ind):
    with pytest.raises(RuntimeError, match="invalid slice"):
        torch.linalg.tensorinv(torch.ones(shape), ind=ind)
    with pytest.raises(RuntimeError, match="invalid slice"):
        ptcore.linalg.tensorinv(ptcore.ones(shape), ind=ind)


# ---------------------------------------------------------------- argument parsing

_ARGS = {
    "cholesky(upper=1)": lambda L, A: L.linalg.cholesky(A, upper=1),
    "cholesky_ex(check_errors=None)": lambda L, A: L.linalg.cholesky_ex(A, check_errors=None),
    "svd(full_matrices=1)": lambda L, A: L.linalg.svd(A, full_matrices=1),
    "pinv(hermitian=1)": lambda L, A: L.linalg.pinv(A, hermitian=1),
    "pinv(rcond, rtol)": lambda L, A: L.linalg.pinv(A, 0.1, rtol=0.1),
    "pinv(rcond, atol)": lambda L, A: L.linalg.pinv(A, rcond=0.1, atol=0.1),
    "matrix_rank(hermitian=1)": lambda L, A: L.linalg.matrix_rank(A, hermitian=1),
    "solve(left=1)": lambda L, A: L.linalg.solve(A, A, left=1),
    "solve_ex(check_errors=0)": lambda L, A: L.linalg.solve_ex(A, A, check_errors=0),
    "inv_ex(check_errors=1)": lambda L, A: L.linalg.inv_ex(A, check_errors=1),
    "lu_factor(pivot=1)": lambda L, A: L.linalg.lu_factor(A, pivot=1),
    "lu(pivot=1)": lambda L, A: L.linalg.lu(A, pivot=1),
    "lu_solve(adjoint=1)": lambda L, A: L.linalg.lu_solve(*L.linalg.lu_factor(A), A, adjoint=1),
    "solve_triangular(upper=1)": lambda L, A: L.linalg.solve_triangular(A, A, upper=1),
    "solve_triangular(unitriangular=None)": lambda L, A: L.linalg.solve_triangular(
        A, A, upper=True, unitriangular=None),
    "ldl_factor(hermitian=1)": lambda L, A: L.linalg.ldl_factor(A, hermitian=1),
    "ldl_solve(hermitian=1)": lambda L, A: L.linalg.ldl_solve(*L.linalg.ldl_factor(A), A,
                                                              hermitian=1),
    "eigh(UPLO=1)": lambda L, A: L.linalg.eigh(A, UPLO=1),
    "eigvalsh(UPLO=None)": lambda L, A: L.linalg.eigvalsh(A, UPLO=None),
    "qr(mode=1)": lambda L, A: L.linalg.qr(A, mode=1),
}


@pytest.mark.parametrize("case", list(_ARGS))
def test_linalg_bool_and_str_arguments_are_checked_as_torch(case):
    for L in (torch, ptcore):
        with pytest.raises(TypeError):
            _ARGS[case](L, L.eye(3))


@pytest.mark.parametrize("fn", ["svd", "svdvals"])
def test_svd_driver_is_refused_on_the_cpu_as_torch(fn):
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError, match="driver"):
            getattr(L.linalg, fn)(L.eye(3), driver="gesvd")


@pytest.mark.parametrize("fn", ["ifft", "ihfft"])
def test_inverse_fft_of_real_input_wants_the_exact_complex_out_dtype_as_torch(fn):
    for xdt, odt in (("float64", "complex64"), ("float32", "complex128")):
        for L in (torch, ptcore):
            x = L.ones(4, 6, dtype=getattr(L, xdt))
            with pytest.raises(RuntimeError, match="expected"):
                getattr(L.fft, fn)(x, out=L.empty(0, dtype=getattr(L, odt)))
    # the forward transform and complex inputs cast into out as torch
    for L in (torch, ptcore):
        o = L.empty(0, dtype=L.complex64)
        assert L.fft.fft(L.ones(4, dtype=L.float64), out=o) is o
        assert L.fft.ifft(L.ones(4, dtype=L.complex128), out=o) is o
