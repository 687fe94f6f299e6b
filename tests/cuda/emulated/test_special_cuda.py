"""``ptcore.special`` functions on CUDA tensors (emulated device): every
result is compared with the same function on the CPU (SciPy/NumPy kernels)
over wide ranges (0, tails, +-1, +-inf, nan), float32 and float64, broadcast
and strided operands, the dtype rules, ``out=`` and grad behaviour; a few
values are checked against torch directly."""
import math

import numpy as np
import pytest

import ptcore
from device_target import REAL

POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
         "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
         "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

X = [-math.inf, -30.0, -5.0, -2.0, -1.0, -0.999, -0.75, -0.5, -1e-3, -0.0, 0.0, 1e-3, 0.25, 0.3, 0.5,
     0.75, 0.9, 0.999, 1.0, 1.5, 3.0, 10.0, math.inf, math.nan]
N = [-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0, 20.0, 50.0, 2.7, -0.5,
     math.nan, math.inf, -math.inf, 1e30]


def _tol(dt):
    return dict(rtol=2e-6, atol=1e-6) if dt is ptcore.float32 else dict(rtol=1e-12, atol=1e-13)


def _assert_close(a, b, rtol, atol):
    """``np.testing.assert_allclose(a, b, rtol, atol, equal_nan=True)`` with an
    elementwise ``atol``."""
    atol = np.broadcast_to(atol, np.shape(b))
    with np.errstate(invalid="ignore"):
        ok = (a == b) | (np.abs(a - b) <= atol + rtol * np.abs(b)) | (np.isnan(a) & np.isnan(b))
    bad = np.flatnonzero(~ok)
    assert not bad.size, (f"{bad.size} of {ok.size} differ (rtol {rtol:g}), the first: "
                          + ", ".join(f"[{i}] {a.flat[i]!r} vs {b.flat[i]!r} (atol {atol.flat[i]:.3g})"
                                      for i in bad[:5]))


def _close(dev, cpu, dt, atol=0.0, overflow=False):
    """``dev`` (on the device) equals ``cpu`` within ``_tol(dt)`` plus ``atol``
    (elementwise), with NaN and infinities where the CPU has them.  With
    ``overflow`` (a recurrence), on a real GPU ``+-inf`` and NaN count alike: a
    step whose true value is beyond the float range is the correctly rounded
    inf where the FMA (``x2 * q - c * p`` with the product ``x2 * q`` kept
    exact) computes it, where the CPU's two overflowing products give
    ``inf - inf = nan`` (H_50(+-0.75) in float32 on an H100: -inf, CPU nan)."""
    assert dev.device.type == "cuda"
    assert dev.dtype is cpu.dtype, (dev.dtype, cpu.dtype)
    assert tuple(dev.shape) == tuple(cpu.shape)
    a, b = dev.cpu().numpy(), cpu.numpy()
    if overflow and REAL:
        a = np.where(~np.isfinite(a) & ~np.isfinite(b) & (np.isnan(a) != np.isnan(b)), b, a)
    tol = _tol(dt)
    _assert_close(a, b, tol["rtol"], tol["atol"] + atol)
    # infinities and signs exactly where the CPU has them
    assert np.array_equal(np.isinf(a), np.isinf(b)) and np.array_equal(np.isnan(a), np.isnan(b))


#: the polynomial values may differ from the CPU's by POLY_K eps (d + 1) max_{k <= d} |P_k(x)|
#: (see _poly_atol)
POLY_K = 8
#: the Chebyshev kernels' trigonometric forms: |x| < 1 and a degree above this
_TRIG_ABOVE = {"chebyshev_polynomial_t": 6, "chebyshev_polynomial_u": 8, "chebyshev_polynomial_v": 8,
               "chebyshev_polynomial_w": 8}


def _poly_atol(name, x, n, dt):
    """The absolute tolerance, beyond ``_tol``, of the polynomial ``name`` in
    ``dt`` at the arrays ``x`` and ``n`` (broadcast): ``POLY_K eps (d + 1)
    max_{k <= d} |P_k(x)|`` for the degree ``d``, the forward error bound of
    the three-term recurrence scaled by the magnitude of its terms, which also
    bounds the trigonometric forms (``n acos(x)`` moves by ``d`` ulp of
    ``acos(x)`` when acos moves by one).

    Where the Chebyshev kernels take the trigonometric form, on every device:
    the CPU's float32 acos is NumPy's, which under its AVX-512 dispatch is an
    ulp off where the device's acosf (glibc's on the emulator) is not, up to
    ~2.1 eps (d + 1) max|P_k| (e.g. U_9(-0.968)).  Everywhere on a real GPU,
    where NVRTC also contracts the recurrences into FMAs (Laguerre and
    Legendre up to ~0.7 eps (d + 1) max|P_k| on an H100).  The emulator's
    recurrences are the CPU's operations: no allowance there."""
    x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n, np.float64))
    d = np.where(np.isfinite(n) & (n >= 0) & (n <= 1000), np.trunc(n), 0)
    where = np.ones(d.shape, bool)
    if not REAL:
        above = _TRIG_ABOVE.get(name.replace("shifted_", ""))
        if above is None:
            return 0.0
        xe = x.astype(np.float32 if dt is ptcore.float32 else np.float64)
        if name.startswith("shifted_"):
            xe = xe + xe - xe.dtype.type(1)         # as the kernel evaluates it
        where = (np.abs(xe) < 1) & (d > above)
    ks = np.arange(int(d.max()) + 1, dtype=np.float64)
    p = getattr(ptcore.special, name)(ptcore.tensor(x[..., None]), ptcore.tensor(ks)).numpy()
    m = np.where(np.isfinite(p) & (ks <= d[..., None]), np.abs(p), 0.0).max(axis=-1)
    eps = np.finfo(np.float32 if dt is ptcore.float32 else np.float64).eps
    return np.where(where, POLY_K * eps * (d + 1) * m, 0.0)


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", POLYS)
def test_polynomial_grid_matches_cpu(name, dt):
    fn = getattr(ptcore.special, name)
    x = ptcore.tensor(X, dtype=dt).reshape(-1, 1)
    n = ptcore.tensor(N, dtype=dt).reshape(1, -1)
    _close(fn(x.cuda(), n.cuda()), fn(x, n), dt, _poly_atol(name, x.numpy(), n.numpy(), dt), overflow=True)


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "legendre_polynomial_p", "laguerre_polynomial_l"])
def test_polynomial_dense_interval_and_scalar_degree(name, dt):
    fn = getattr(ptcore.special, name)
    g = np.random.default_rng(0)
    x = ptcore.tensor(np.concatenate([g.uniform(-1, 1, 200), np.linspace(-1, 1, 41)]), dtype=dt)
    for n in (0, 1, 4, 8, 9, 15, 33, 100):
        _close(fn(x.cuda(), n), fn(x, n), dt, _poly_atol(name, x.numpy(), n, dt), overflow=True)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_matches_torch(name):
    torch = pytest.importorskip("torch")
    xs = [-1.0, -0.6, 0.0, 0.2, 0.7, 1.0, 1.7, -3.0]
    ns = [0, 1, 2, 3, 7, 10]
    x = ptcore.tensor(xs, dtype=ptcore.float64).reshape(-1, 1).cuda()
    n = ptcore.tensor(ns, dtype=ptcore.float64).reshape(1, -1).cuda()
    r = getattr(ptcore.special, name)(x, n).cpu().numpy()
    e = getattr(torch.special, name)(torch.tensor(xs, dtype=torch.float64).reshape(-1, 1),
                                     torch.tensor(ns, dtype=torch.float64).reshape(1, -1)).numpy()
    np.testing.assert_allclose(r, e, rtol=1e-12, atol=1e-12)


def test_polynomial_strided_scalar_input_and_out():
    fn = ptcore.special.chebyshev_polynomial_t
    base = ptcore.linspace(-1.2, 1.2, 60, dtype=ptcore.float64).reshape(6, 10)
    xs = base.cuda().t()                          # non-contiguous operand
    n = ptcore.tensor([[3.0], [9.0], [0.0], [12.0], [-2.0], [1.0], [7.0], [2.0], [5.0], [40.0]],
                      dtype=ptcore.float64).cuda()
    _close(fn(xs, n), fn(base.t(), n.cpu()), ptcore.float64)
    # a number as input (torch's Scalar overload) and as the degree
    _close(fn(0.3, n), fn(0.3, n.cpu()), ptcore.float64)
    out = ptcore.empty(10, 6, dtype=ptcore.float64, device="cuda")
    r = fn(xs, 4, out=out)
    assert r is out and tuple(out.shape) == (10, 6)
    _close(out, fn(base.t(), 4), ptcore.float64)


def test_polynomial_dtype_rules():
    fn = ptcore.special.hermite_polynomial_he
    xi = ptcore.tensor([0, 1, 2, 3], dtype=ptcore.int64)
    r = fn(xi.cuda(), 3)
    assert r.dtype is ptcore.get_default_dtype()
    _close(r, fn(xi, 3), r.dtype)
    # float32 input with a float64 degree tensor promotes as on the CPU
    x = ptcore.tensor([0.5, 2.0], dtype=ptcore.float32)
    n = ptcore.tensor([3.0, 4.0], dtype=ptcore.float64)
    _close(fn(x.cuda(), n.cuda()), fn(x, n), fn(x, n).dtype)
    with pytest.raises(NotImplementedError, match="hermite_polynomial_he"):
        fn(x.cuda().to(ptcore.float16), 3)
    with pytest.raises(NotImplementedError):
        fn(x.cuda().to(ptcore.bfloat16), 3)
    with pytest.raises(NotImplementedError):
        fn(x.cuda().to(ptcore.complex64), 3)
    with pytest.raises(TypeError):
        fn(x.cuda(), "3")
    with pytest.raises(RuntimeError, match="size"):
        fn(ptcore.zeros(3, device="cuda"), ptcore.zeros(4, device="cuda"))


def test_polynomial_results_do_not_require_grad():
    x = ptcore.tensor([0.2, 0.4], device="cuda", requires_grad=True)
    r = ptcore.special.legendre_polynomial_p(x, 3)
    assert not r.requires_grad
    np.testing.assert_allclose(r.cpu().numpy(), ptcore.special.legendre_polynomial_p(x.detach().cpu(), 3)
                               .numpy(), rtol=1e-6)


def test_polynomial_huge_degree_terminates():
    # beyond overflow the recurrence is NaN for good: the kernel stops there (same value as the CPU)
    x = ptcore.tensor([3.0, -7.0], dtype=ptcore.float32)
    for name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "legendre_polynomial_p"):
        fn = getattr(ptcore.special, name)
        _close(fn(x.cuda(), 2000), fn(x, 2000), ptcore.float32)


# ---------------------------------------------------------------------------
# unary functions with float32 kernels (ptc_special.h's, generated device copy)

UNARY_F32 = ["erfcx", "log_ndtr", "ndtri", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1"]
XS = [-math.inf, -1e4, -100.0, -30.0, -9.5, -8.0, -5.0, -2.0, -1.0, -0.3, -1e-3, -1e-30, -0.0, 0.0, 1e-38,
      1e-30, 1e-3, 0.3, 0.75, 1.0, 2.0, 3.9, 4.0, 5.0, 7.99, 8.0, 8.01, 9.0, 15.0, 26.0, 30.0, 88.0, 100.0,
      1e4, 1e30, math.inf, math.nan]
PS = [0.0, 1e-38, 1e-30, 1e-10, 1e-3, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.97575, 0.999, 1 - 1e-7, 1.0, -0.5,
      -0.0, 2.0, math.inf, -math.inf, math.nan]


def _inputs(name, dt):
    g = np.random.default_rng(1)
    if name == "ndtri":
        vals = PS + list(g.uniform(0, 1, 300))
    else:
        vals = XS + list(g.uniform(-40, 40, 300)) + list(g.standard_normal(100))
    return ptcore.tensor(vals, dtype=dt)


#: a real GPU's results of the CPU's float32/float64 scalar algorithms: within this many ulp
#: (NVRTC's FMA contraction; up to 4 ulp seen on an H100)
MAX_ULPS = 8


def _ulps(a, b):
    """The largest ``|a - b|`` in units in the last place (finite arrays of one float dtype)."""
    it = np.int32 if a.dtype == np.float32 else np.int64
    lo = int(np.iinfo(it).min)

    def key(v):             # the float order as integers (-0.0 and 0.0 both 0)
        return [i if i >= 0 else lo - i for i in v.view(it).tolist()]
    return max((abs(p - q) for p, q in zip(key(a), key(b))), default=0)


def _same_as_cpu_kernel(got, want, bits=False):
    """Device results of the CPU's scalar algorithm (same functions, same
    operation order): equal to the CPU's (``bits``: bit for bit) on the
    emulator; on a real GPU NaN where the CPU has NaN (any payload: the GPU's
    canonical NaN is 0x7fffffff, the CPU's 0xffc00000), the same infinities,
    the finite values within MAX_ULPS ulp."""
    if not REAL:
        if bits:
            got, want = got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")
        np.testing.assert_array_equal(got, want)
        return
    nan, fin = np.isnan(want), np.isfinite(want)
    assert np.array_equal(np.isnan(got), nan) and np.array_equal(np.isfinite(got), fin)
    np.testing.assert_array_equal(got[~fin & ~nan], want[~fin & ~nan])
    assert _ulps(got[fin], want[fin]) <= MAX_ULPS, (got, want)


@pytest.mark.parametrize("name", UNARY_F32)
def test_unary_f32_bitwise_equal_to_cpu_kernel(name):
    fn = getattr(ptcore.special, name)
    x = _inputs(name, ptcore.float32)
    r = fn(x.cuda())
    assert r.device.type == "cuda" and r.dtype is ptcore.float32
    # the same scalar functions and operation order as the CPU's float32 kernels
    _same_as_cpu_kernel(r.cpu().numpy(), fn(x).numpy(), bits=True)
    # strided operand
    x2 = x[:300].reshape(30, 10).cuda().t()
    _close(fn(x2), fn(x[:300].reshape(30, 10).t()), ptcore.float32)


@pytest.mark.parametrize("name", UNARY_F32)
def test_unary_f32_close_to_torch(name):
    torch = pytest.importorskip("torch")
    x = _inputs(name, ptcore.float32)
    r = getattr(ptcore.special, name)(x.cuda()).cpu().numpy()
    e = getattr(torch.special, name)(torch.tensor(x.numpy())).numpy()
    big = np.abs(e) > 1e-30
    np.testing.assert_allclose(r[big], e[big], rtol=2e-5, atol=0)
    assert np.array_equal(np.isnan(r), np.isnan(e)) and np.array_equal(np.isinf(r), np.isinf(e))


@pytest.mark.parametrize("dt", [ptcore.float16, ptcore.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", ["i0e", "i1", "i1e"])
def test_unary_half_dtypes_compute_in_float32(name, dt):
    fn = getattr(ptcore.special, name)
    x = ptcore.tensor([-5.0, -1.0, 0.0, 0.5, 3.0, 20.0], dtype=dt)
    r = fn(x.cuda())
    assert r.dtype is dt
    np.testing.assert_array_equal(r.cpu().float().numpy(), fn(x).float().numpy())


def test_unary_dtype_rules_and_out():
    x = ptcore.tensor([0.5, 2.0], device="cuda")
    with pytest.raises(NotImplementedError, match="erfcx"):
        ptcore.special.erfcx(x.to(ptcore.float16))
    with pytest.raises(NotImplementedError, match="bessel_j0"):
        ptcore.special.bessel_j0(x.to(ptcore.bfloat16))  # (as the CPU: no half kernel)
    with pytest.raises(NotImplementedError):
        ptcore.special.i1(x.to(ptcore.complex64))
    with pytest.raises(TypeError):
        ptcore.special.i1e(0.5)
    xi = ptcore.tensor([0, 1, 3], dtype=ptcore.int32)
    r = ptcore.special.i0e(xi.cuda())
    assert r.dtype is ptcore.float32
    _same_as_cpu_kernel(r.cpu().numpy(), ptcore.special.i0e(xi).numpy())
    out = ptcore.empty(2, device="cuda")
    assert ptcore.special.i1e(x, out=out) is out
    _same_as_cpu_kernel(out.cpu().numpy(), ptcore.special.i1e(x.cpu()).numpy())


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri", "i0e", "i1", "i1e"])
def test_unary_gradients_match_cpu(name):
    vals = [0.02, 0.3, 0.5, 0.9] if name == "ndtri" else [-3.0, -0.5, 0.0, 1e-9, 0.7, 4.0, 12.0]
    x = ptcore.tensor(vals, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    fn = getattr(ptcore.special, name)
    (fn(x) * ptcore.arange(len(vals), dtype=ptcore.float32)).sum().backward()
    (fn(xc) * ptcore.arange(len(vals), dtype=ptcore.float32, device="cuda")).sum().backward()
    assert xc.grad.device.type == "cuda"
    np.testing.assert_allclose(xc.grad.cpu().numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_float32_device_functions_come_from_the_installed_header():
    # the CPU's float32 kernels, translated at run time: no second copy to keep in sync
    from ptcore.cuda.kernels import special as KS
    src = KS._f32_device_source()
    for fn in ("ptc_erfcx_s", "ptc_ndtri_s", "ptc_i1e_s", "ptc_expf"):
        assert fn in src, fn
    assert "static " not in src and "__device__" in src


def test_special_kernels_are_registered():
    """The special family's kernels, all registered; that they compile for sm_90
    with NVRTC is tests/cuda/test_compiler.py's: the whole family in one program
    (test_every_kernel_compiles_to_sm90_cubin, fast-compile mode) and one dtype
    of each op with the production options (test_kernel_sample_compiles_with_
    production_options).  (Compiling all 128 again here with the production
    options took 4-9 minutes of CI on a 2-core machine.)"""
    from ptcore.cuda.kernels import library as K
    names = [n for n, (fam, _) in K.all_kernels().items() if fam == "special"]
    # (polynomials + zeta + igamma/igammac) x f32/f64 + 20 unary x f32/f64 (17 and the
    # closed forms entr, spherical_bessel_j0, ndtr), both variants
    assert len(names) == 2 * 2 * (12 + 1 + 2) + 2 * 2 * 20
    for op in ("entr", "spherical_bessel_j0", "ndtr"):
        assert {f"ptc_special_{op}_{t}_{v}" for t in ("f32", "f64") for v in "cs"} <= set(names)
    src = K.program_source(names)
    for n in names:
        assert f"void {n}(" in src, n


# ---------------------------------------------------------------------------
# Hurwitz zeta

ZX = [-2.0, 0.5, 1.0, 1.0001, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 100.0, math.inf, math.nan]
ZQ = [-3.0, -2.5, -1e-3, 0.0, 1e-8, 0.3, 1.0, 2.0, 9.5, 50.0, 1e6, 1e9, math.inf, math.nan]


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
def test_zeta_matches_torch_and_cpu(dt):
    torch = pytest.importorskip("torch")
    x = ptcore.tensor(ZX, dtype=dt).reshape(-1, 1)
    q = ptcore.tensor(ZQ, dtype=dt).reshape(1, -1)
    r = ptcore.special.zeta(x.cuda(), q.cuda())
    assert r.dtype is dt and r.device.type == "cuda"
    tdt = torch.float32 if dt is ptcore.float32 else torch.float64
    e = torch.special.zeta(torch.tensor(ZX, dtype=tdt).reshape(-1, 1),
                           torch.tensor(ZQ, dtype=tdt).reshape(1, -1)).numpy()
    tol = dict(rtol=1e-6, atol=0) if dt is ptcore.float32 else dict(rtol=1e-13, atol=0)
    np.testing.assert_allclose(r.cpu().numpy(), e, equal_nan=True, **tol)
    # the CPU (SciPy) agrees except SciPy's asymptotic zeta(inf, q > 1e8) = 0 (torch: nan)
    c = ptcore.special.zeta(x, q).numpy()
    keep = ~(np.isinf(np.array(ZX))[:, None] & (np.array(ZQ) > 1e8)[None, :])
    np.testing.assert_allclose(r.cpu().numpy()[keep], c[keep], equal_nan=True, **tol)


def test_zeta_scalar_operands_and_gradient():
    q = ptcore.tensor([0.5, 2.0, 3.0, 7.5], dtype=ptcore.float64, requires_grad=True)
    qc = q.detach().cuda().requires_grad_()
    ptcore.special.zeta(3.0, q).sum().backward()
    r = ptcore.special.zeta(3.0, qc)
    r.sum().backward()
    np.testing.assert_allclose(qc.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ptcore.special.zeta(qc.detach(), 2.0).cpu().numpy(),
                               ptcore.special.zeta(q.detach(), 2.0).numpy(), rtol=1e-13)
    # PyTorch has no derivative for x
    x = ptcore.tensor([2.0, 3.0], dtype=ptcore.float64, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError):
        ptcore.special.zeta(x, 2.0).sum().backward()
    xi = ptcore.tensor([2, 3], device="cuda")
    assert ptcore.special.zeta(xi, 1).dtype is ptcore.get_default_dtype()


# ---------------------------------------------------------------------------
# polygamma (n >= 1 through zeta, as PyTorch's CUDA kernel)

PGX = [-2.5, -2.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.0, 7.3, 30.0, 1e4, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_matches_cpu(n, dt):
    x = ptcore.tensor(PGX, dtype=dt)
    r = ptcore.polygamma(n, x.cuda())
    assert r.dtype is dt and r.device.type == "cuda"
    c = ptcore.polygamma(n, x).numpy()
    a = r.cpu().numpy()
    if n == 1:
        # trigamma(-inf): torch gives nan (its float64 CPU path here, SciPy, gives inf)
        assert math.isnan(a[PGX.index(-math.inf)])
        c[PGX.index(-math.inf)] = math.nan
    np.testing.assert_allclose(a, c, rtol=2e-6 if dt is ptcore.float32 else 1e-12, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(a[np.isfinite(a)]), np.signbit(c[np.isfinite(a)]))


def test_polygamma_dtypes_gradient_and_errors():
    torch = pytest.importorskip("torch")
    x = ptcore.tensor([0.3, 1.5, 4.0], dtype=ptcore.float64, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    ptcore.polygamma(2, xc).sum().backward()
    tx = torch.tensor([0.3, 1.5, 4.0], dtype=torch.float64, requires_grad=True)
    torch.polygamma(2, tx).sum().backward()
    np.testing.assert_allclose(xc.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)
    h = ptcore.polygamma(1, ptcore.tensor([0.5, 2.0], dtype=ptcore.float16, device="cuda"))
    assert h.dtype is ptcore.float16
    np.testing.assert_allclose(h.cpu().float().numpy(), [4.9348, 0.644934], rtol=1e-3)
    assert ptcore.polygamma(1, ptcore.tensor([1, 2], device="cuda")).dtype is ptcore.get_default_dtype()
    np.testing.assert_array_equal(xc.detach().polygamma(3).cpu().numpy(),
                                  ptcore.polygamma(3, xc.detach()).cpu().numpy())
    with pytest.raises(RuntimeError, match="negative"):
        ptcore.polygamma(-1, xc)
    with pytest.raises(NotImplementedError):
        ptcore.polygamma(1, xc.detach().to(ptcore.complex128))


def test_ndtri_float64_cephes_port():
    g = np.random.default_rng(3)
    p = np.concatenate([[0.0, 5e-324, 1e-300, 1e-100, 1e-20, 1e-5, 0.01, 0.1, 0.1353352832366127, 0.14,
                         0.5, 0.7, 0.8646647167633873, 0.87, 0.99, 1 - 1e-12, 1.0, -0.1, 1.1, -0.0,
                         math.nan, math.inf, -math.inf],
                        g.uniform(0, 1, 400), 10 ** g.uniform(-300, -1, 100)])
    x = ptcore.tensor(p, dtype=ptcore.float64)
    r = ptcore.special.ndtri(x.cuda())
    assert r.dtype is ptcore.float64
    _close(r, ptcore.special.ndtri(x), ptcore.float64)
    xg = ptcore.tensor([0.02, 0.3, 0.5, 0.9], dtype=ptcore.float64, requires_grad=True)
    xc = xg.detach().cuda().requires_grad_()
    ptcore.special.ndtri(xg).sum().backward()
    ptcore.special.ndtri(xc).sum().backward()
    np.testing.assert_allclose(xc.grad.cpu().numpy(), xg.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# the Cephes functions in double (every float64 unary kernel; float32 computed
# in double and rounded once where ptc_special.h has no float32 kernel)

CEPHES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai", "erfcx", "log_ndtr",
          "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1"]
WIDE = [-math.inf, -1e7, -1e4, -500.0, -103.0, -30.0, -26.7, -26.5, -25.0, -9.5, -8.0, -5.0, -2.09, -2.0,
        -1.0, -1e-3, -1e-6, -1e-300, -0.0, 0.0, 5e-324, 1e-300, 1e-6, 1e-5, 1e-3, 0.5, 1.0, 2.0, 2.09,
        2.0900001, 2.404825557695773, 3.8317059702075125, 0.8935769662791675, 4.99, 5.0, 5.01, 7.99, 8.0,
        8.01, 8.32, 8.33, 10.0, 24.99, 25.0, 25.01, 26.6, 30.0, 88.0, 100.0, 103.8, 103.9, 500.0, 1e4,
        1e8, 1.1e8, 1e10, 1e300, math.inf, math.nan]


def _wide(dt):
    g = np.random.default_rng(7)
    vals = np.concatenate([WIDE, g.uniform(-40, 40, 1500), 3 * g.standard_normal(300),
                           10 ** g.uniform(-10, 3, 300), -(10 ** g.uniform(-10, 3, 300))])
    return ptcore.tensor(vals, dtype=dt)


def _scipy(name, a):
    sp = pytest.importorskip("scipy.special")
    f = {"bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0, "bessel_y1": sp.y1,
         "modified_bessel_k0": sp.k0, "modified_bessel_k1": sp.k1, "scaled_modified_bessel_k0": sp.k0e,
         "scaled_modified_bessel_k1": sp.k1e, "airy_ai": lambda v: sp.airy(v)[0], "erfcx": sp.erfcx,
         "log_ndtr": sp.log_ndtr, "i0e": sp.i0e, "i1": sp.i1, "i1e": sp.i1e,
         "modified_bessel_i0": sp.i0, "modified_bessel_i1": sp.i1}[name]
    with np.errstate(all="ignore"):
        return f(a)


def _jy_atol(name, xs):
    """The extra absolute tolerance of a real GPU for the Bessel functions of
    the first and second kind (0 on the emulator and for the other functions):
    their condition, ``|x f'(x)|`` eps, with ``|f'(x)| <~ sqrt(2 / (pi |x|))``:
    ``2 eps sqrt(|x|)``.  The contracted (FMA) Cephes polynomials and phase
    ``x - pi/4`` move the values by a few ulp of the phase times the amplitude,
    which near the zeros and for large |x| is far above 1e-13 relative (on an
    H100: 7e-13 at x = 1e10, 2e-15 at 1e4, 1.5e-17 at Y0's zero 0.894)."""
    xs = np.asarray(xs, np.float64)
    if not REAL or name not in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        return np.zeros(xs.shape)
    return 2 * np.finfo(np.float64).eps * np.sqrt(np.abs(np.where(np.isfinite(xs), xs, 0.0)))


@pytest.mark.parametrize("name", CEPHES)
def test_cephes_float64_matches_scipy_and_cpu(name):
    x = _wide(ptcore.float64)
    xs = x.numpy()
    r = getattr(ptcore.special, name)(x.cuda())
    assert r.dtype is ptcore.float64 and r.device.type == "cuda"
    a = r.cpu().numpy()
    e = _scipy(name, xs)
    # PyTorch's conventions where SciPy gives a limit or gives up: nan at +-inf (the Bessel
    # functions of the first/second kind, I0, I1), Ai from its asymptotic form below -1e8
    # (SciPy: nan) and 0 beyond 103.892
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "i1", "modified_bessel_i0",
                "modified_bessel_i1", "airy_ai"):
        e = np.where(np.isinf(xs), np.nan, e)
    keep = np.ones(len(xs), bool)
    if name == "airy_ai":
        # SciPy (AMOS) gives up far left (nan below about -1e6): test_..._close_to_torch checks there
        keep = ~(np.isnan(e) & np.isfinite(xs)) & (xs <= 103.8)
        assert np.all(a[(xs > 103.892) & np.isfinite(xs)] == 0)
        # left of -2.09 Cephes' asymptotic form has sin/cos of zeta = 2/3 |x|^1.5: an
        # absolute error of a few ulp of zeta (times |x|^-1/4), which SciPy's AMOS avoids
        left = keep & (xs < -2.09) & np.isfinite(xs)
        assert np.all(np.abs(a[left] - e[left]) <= 1e-13 * np.abs(e[left]) + 1e-15 * np.abs(xs[left]) ** 1.25)
        keep &= ~left
    _assert_close(a[keep], e[keep], 1e-13, 1e-300 + _jy_atol(name, xs)[keep])
    assert np.array_equal(np.isnan(a[keep]), np.isnan(e[keep]))
    assert np.array_equal(np.isinf(a), np.isinf(getattr(ptcore.special, name)(x).numpy()))
    # a strided operand: the same values
    x2 = x[:1500].reshape(50, 30).cuda().t()
    np.testing.assert_array_equal(getattr(ptcore.special, name)(x2).cpu().numpy(), a[:1500].reshape(50, 30).T)


@pytest.mark.parametrize("name", CEPHES)
def test_cephes_float32_matches_cpu(name):
    x = _wide(ptcore.float32)
    fn = getattr(ptcore.special, name)
    r = fn(x.cuda())
    assert r.dtype is ptcore.float32
    a, c = r.cpu().numpy(), fn(x).numpy()
    keep = ~(np.isnan(c) & np.isfinite(x.numpy()))       # (SciPy's airy gives up far left: nan)
    if name == "airy_ai":
        # far left Ai's phase 2/3 |x|^1.5 exceeds float32's integers: the CPU follows
        # torch's float32 evaluation there (Ai(-1e7) 0.00327), the device kernel
        # computes in double (0.00542, the value)
        keep &= ~(x.numpy() < -1e6)
    _assert_close(a[keep], c[keep], 1e-6, 1e-37 + _jy_atol(name, x.numpy())[keep])
    assert np.array_equal(np.isnan(a[keep]), np.isnan(c[keep]))


@pytest.mark.parametrize("name", CEPHES)
def test_cephes_float64_close_to_torch(name):
    torch = pytest.importorskip("torch")
    x = _wide(ptcore.float64)
    a = getattr(ptcore.special, name)(x.cuda()).cpu().numpy()
    e = getattr(torch.special, name)(torch.tensor(x.numpy())).numpy()
    # torch's CPU kernels of J0/J1/Y0/Y1 and Ai drop the leading 1 of Cephes' p1evl
    # denominators (errors up to ~2e-5 relative beyond 5, ~3e-6 absolute for Ai below
    # -2.09); ours are Cephes' (SciPy agrees to 1e-13 above)
    if name.startswith("bessel_") or name == "airy_ai":
        np.testing.assert_allclose(a, e, rtol=2e-4, atol=1e-5, equal_nan=True)
    else:
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-300, equal_nan=True)
    assert np.array_equal(np.isnan(a), np.isnan(e)) and np.array_equal(np.isinf(a), np.isinf(e))


@pytest.mark.parametrize("name", ["bessel_j0", "airy_ai", "modified_bessel_k1"])
def test_cephes_dtype_rules(name):
    fn = getattr(ptcore.special, name)
    xi = ptcore.tensor([1, 2, 7], dtype=ptcore.int64)
    r = fn(xi.cuda())
    assert r.dtype is ptcore.get_default_dtype()
    _same_as_cpu_kernel(r.cpu().numpy(), fn(xi).numpy())
    for dt in (ptcore.float16, ptcore.bfloat16, ptcore.complex64):
        with pytest.raises(NotImplementedError, match=name):
            fn(ptcore.ones(2, dtype=dt, device="cuda"))
    # PyTorch has no derivative: the results never require grad
    x = ptcore.tensor([0.5, 3.0], device="cuda", requires_grad=True)
    assert not fn(x).requires_grad
    out = ptcore.empty(2, dtype=ptcore.float64, device="cuda")
    assert fn(x.detach().double(), out=out) is out
    _same_as_cpu_kernel(out.cpu().numpy(), fn(x.detach().double().cpu()).numpy())


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri", "i0e", "i1", "i1e"])
def test_float64_gradcheck_on_device(name):
    vals = [0.02, 0.3, 0.5, 0.9] if name == "ndtri" else [-3.0, -0.5, 0.3, 0.7, 4.0, 12.0]
    fn = getattr(ptcore.special, name)
    x = ptcore.tensor(vals, dtype=ptcore.float64, device="cuda", requires_grad=True)
    fn(x).sum().backward()
    # central differences of the device kernel (ptcore.autograd.gradcheck reads host memory)
    h = 1e-6
    xd = x.detach()
    num = ((fn(xd + h) - fn(xd - h)) / (2 * h)).cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), num, rtol=1e-7, atol=1e-9)
    # the same formula as the CPU's, which gradcheck checks there
    xc = xd.cpu().requires_grad_()
    assert ptcore.autograd.gradcheck(fn, (xc,))
    fn(xc).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-13)


def test_no_loop_is_a_clear_error():
    # an op whose loop this device lacks names the op and the device
    from ptcore._dispatch.device import cpu_kernel
    from ptcore.special._kernels import loop_name
    with pytest.raises(NotImplementedError, match="special.nonexistent.*cuda"):
        cpu_kernel(loop_name("nonexistent"), ptcore.device("cuda"), None)


# ---------------------------------------------------------------------------
# the regularized incomplete gamma functions (igamma/igammac, special.gammainc/gammaincc)

def _igamma_grid():
    g = np.random.default_rng(5)
    a = np.concatenate([[0.0, 1e-300, 1e-10, 0.1, 0.5, 1.0, 1.5, 2.0, 5.0, 10.0, 19.9, 20.5, 50.0, 100.0, 199.0,
                         201.0, 500.0, 1e3, 1e4, 1e6, math.inf, math.nan, -1.0], 10 ** g.uniform(-3, 4, 50)])
    x = np.concatenate([[0.0, 1e-300, 1e-10, 0.1, 0.5, 0.51, 1.0, 1.05, 1.1, 1.2, 2.0, 5.0, 10.0, 20.0, 50.0,
                         100.0, 200.0, 500.0, 1e3, 1e4, 1e6, math.inf, math.nan, -1.0], 10 ** g.uniform(-3, 4, 50)])
    return a, x


@pytest.mark.parametrize("upper", [False, True], ids=["gammainc", "gammaincc"])
def test_igamma_float64_matches_torch_and_scipy(upper):
    torch = pytest.importorskip("torch")
    sp = pytest.importorskip("scipy.special")
    A, X = _igamma_grid()
    a = ptcore.tensor(A, dtype=ptcore.float64).reshape(-1, 1).cuda()
    x = ptcore.tensor(X, dtype=ptcore.float64).reshape(1, -1).cuda()
    fn = ptcore.special.gammaincc if upper else ptcore.special.gammainc
    r = fn(a, x)
    assert r.dtype is ptcore.float64 and r.device.type == "cuda" and tuple(r.shape) == (len(A), len(X))
    r = r.cpu().numpy()
    tf = torch.special.gammaincc if upper else torch.special.gammainc
    t = tf(torch.tensor(A)[:, None], torch.tensor(X)[None, :]).numpy()
    # the same algorithm as PyTorch's kernel, boundary values included (nan where a or x < 0,
    # at a = x = 0 and a = x = inf; a = inf or x = 0 decide before a nan partner, as torch);
    # torch's uniform asymptotic expansion (a > 20, a ~ x) divides by sqrt(2 pi a) with pi
    # in float32 (relative error ~2e-9 there), ours with pi in double, as SciPy's
    np.testing.assert_allclose(r, t, rtol=1e-8, atol=1e-300, equal_nan=True)
    assert np.array_equal(np.isnan(r), np.isnan(t))
    # SciPy: the same values to 5e-13 (SciPy's own error reaches 2e-13 against mpmath
    # for a ~ 200, where ours is 3e-14) where both inputs are numbers, except where
    # the algorithm (torch's and ours) is less accurate than SciPy's: tiny values for
    # large a (x^a e^-x / Gamma(a) through lgamma(a): SciPy has errors of that size
    # too) and small a (Q's series through lgamma(1 + a))
    e = (sp.gammaincc if upper else sp.gammainc)(A[:, None], X[None, :])
    ok = ~np.isnan(A)[:, None] & ~np.isnan(X)[None, :] & ((A[:, None] >= 1e-6) | (A[:, None] == 0))
    tol = np.where(np.abs(e) < 1e-30, 1e-11, np.where(A[:, None] < 0.01, 1e-9, 5e-13))
    with np.errstate(invalid="ignore"):
        bad = ok & ~((r == e) | (np.abs(r - e) <= tol * np.abs(e)) | (np.isnan(r) & np.isnan(e)))
    assert not bad.any(), (A[np.nonzero(bad)[0]], X[np.nonzero(bad)[1]])


@pytest.mark.parametrize("upper", [False, True], ids=["igamma", "igammac"])
def test_igamma_float32_aliases_methods_and_dtypes(upper):
    A, X = _igamma_grid()
    a = ptcore.tensor(A, dtype=ptcore.float32).reshape(-1, 1)
    x = ptcore.tensor(X, dtype=ptcore.float32).reshape(1, -1)
    fn = ptcore.igammac if upper else ptcore.igamma
    r = fn(a.cuda(), x.cuda())
    assert r.dtype is ptcore.float32
    c = fn(a, x).numpy()
    d = r.cpu().numpy()
    both = ~np.isnan(A)[:, None] & ~np.isnan(X)[None, :] & (A[:, None] >= 1e-6)
    np.testing.assert_allclose(d[both], c[both], rtol=2e-6, atol=1e-37, equal_nan=True)
    # the method, the in-place method and the special.* alias run the same kernel
    m = (a.cuda().igammac(x.cuda()) if upper else a.cuda().igamma(x.cuda())).cpu().numpy()
    np.testing.assert_array_equal(m, d)
    al = (ptcore.special.gammaincc if upper else ptcore.special.gammainc)(a.cuda(), x.cuda())
    np.testing.assert_array_equal(al.cpu().numpy(), d)
    y = ptcore.tensor([0.5, 2.0, 7.0], device="cuda")
    z = y.clone()
    (z.igammac_ if upper else z.igamma_)(ptcore.tensor([1.0, 1.0, 9.0], device="cuda"))
    np.testing.assert_array_equal(z.cpu().numpy(), fn(y, ptcore.tensor([1.0, 1.0, 9.0], device="cuda")).cpu().numpy())
    h = fn(y.half(), y.half())
    assert h.dtype is ptcore.float16
    np.testing.assert_allclose(h.cpu().float().numpy(), fn(y.cpu(), y.cpu()).numpy(), rtol=2e-3)
    with pytest.raises(NotImplementedError, match="igamma.*_cuda.*Long"):
        fn(ptcore.tensor([1, 2], device="cuda"), ptcore.tensor([1, 2], device="cuda"))


def test_igamma_gradient_on_device():
    a = ptcore.tensor([0.5, 2.0, 30.0], dtype=ptcore.float64)
    x = ptcore.tensor([0.7, 1.5, 28.0], dtype=ptcore.float64, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    for fn in (ptcore.igamma, ptcore.igammac):
        x.grad = xc.grad = None
        fn(a, x).sum().backward()
        fn(a.cuda(), xc).sum().backward()
        np.testing.assert_allclose(xc.grad.cpu().numpy(), x.grad.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="input"):
        ptcore.igamma(a.cuda().requires_grad_(), xc).sum().backward()


@pytest.mark.parametrize("name", ["xlog1py", "zeta", "hermite_polynomial_h"])
def test_binary_zero_dim_cpu_operand_joins_the_device(name):
    # torch allows a 0-d CPU tensor next to a CUDA one (either position)
    fn = getattr(ptcore.special, name)
    q = ptcore.tensor([0.5, 2.0, 3.5], dtype=ptcore.float64)
    s = ptcore.tensor(2.0, dtype=ptcore.float64)
    for args, cpu in (((s, q.cuda()), (s, q)), ((q.cuda(), s), (q, s))):
        r = fn(*args)
        assert r.device.type == "cuda"
        np.testing.assert_allclose(r.cpu().numpy(), fn(*cpu).numpy(), rtol=1e-13)


def test_polygamma_double_backward_inplace_and_out():
    torch = pytest.importorskip("torch")
    vals = [0.3, 1.5, 4.0]
    xc = ptcore.tensor(vals, dtype=ptcore.float64, device="cuda", requires_grad=True)
    (g,) = ptcore.autograd.grad(ptcore.polygamma(1, xc).sum(), xc, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.polygamma(1, tx).sum(), tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(g.detach().cpu().numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xc.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)
    y = xc.detach().clone()
    y.polygamma_(2)
    np.testing.assert_allclose(y.cpu().numpy(), torch.polygamma(2, tx.detach()).numpy(), rtol=1e-12)
    out = ptcore.empty(3, dtype=ptcore.float64, device="cuda")
    assert ptcore.special.polygamma(3, xc.detach(), out=out) is out
    np.testing.assert_allclose(out.cpu().numpy(), torch.polygamma(3, tx.detach()).numpy(), rtol=1e-12)


def test_digamma_reflection_of_large_negative_arguments():
    """The device's reflection takes tan of x's fractional part, as the CPU's
    and torch's (tan(pi * x) lost the fraction: 35.54 for -1e15 - 0.5, not 34.54)."""
    x = ptcore.tensor([-1e15 - 0.5, -88048835816434.97, -1e10 - 0.5, -2.5, -0.3], dtype=ptcore.float64)
    got = ptcore.digamma(x.cuda()).cpu().numpy()
    np.testing.assert_allclose(got, ptcore.digamma(x).numpy(), rtol=1e-13)
    assert abs(got[0] - 34.538776394910684) < 1e-9
