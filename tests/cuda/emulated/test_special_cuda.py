"""``ptcore.special`` functions on CUDA tensors (emulated device): every
result is compared with the same function on the CPU (SciPy/NumPy kernels)
over wide ranges (0, tails, +-1, +-inf, nan), float32 and float64, broadcast
and strided operands, the dtype rules, ``out=`` and grad behaviour; a few
values are checked against torch directly."""
import math

import numpy as np
import pytest

import ptcore

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


def _close(dev, cpu, dt):
    assert dev.device.type == "cuda"
    assert dev.dtype is cpu.dtype, (dev.dtype, cpu.dtype)
    assert tuple(dev.shape) == tuple(cpu.shape)
    a, b = dev.cpu().numpy(), cpu.numpy()
    np.testing.assert_allclose(a, b, equal_nan=True, **_tol(dt))
    # infinities and signs exactly where the CPU has them
    assert np.array_equal(np.isinf(a), np.isinf(b)) and np.array_equal(np.isnan(a), np.isnan(b))


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", POLYS)
def test_polynomial_grid_matches_cpu(name, dt):
    fn = getattr(ptcore.special, name)
    x = ptcore.tensor(X, dtype=dt).reshape(-1, 1)
    n = ptcore.tensor(N, dtype=dt).reshape(1, -1)
    _close(fn(x.cuda(), n.cuda()), fn(x, n), dt)


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "legendre_polynomial_p", "laguerre_polynomial_l"])
def test_polynomial_dense_interval_and_scalar_degree(name, dt):
    fn = getattr(ptcore.special, name)
    g = np.random.default_rng(0)
    x = ptcore.tensor(np.concatenate([g.uniform(-1, 1, 200), np.linspace(-1, 1, 41)]), dtype=dt)
    for n in (0, 1, 4, 8, 9, 15, 33, 100):
        _close(fn(x.cuda(), n), fn(x, n), dt)


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


@pytest.mark.parametrize("name", UNARY_F32)
def test_unary_f32_bitwise_equal_to_cpu_kernel(name):
    fn = getattr(ptcore.special, name)
    x = _inputs(name, ptcore.float32)
    r = fn(x.cuda())
    assert r.device.type == "cuda" and r.dtype is ptcore.float32
    # the same scalar functions and operation order as the CPU's float32 kernels
    np.testing.assert_array_equal(r.cpu().numpy().view(np.uint32), fn(x).numpy().view(np.uint32))
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
    with pytest.raises(NotImplementedError, match="float64"):
        ptcore.special.erfcx(x.to(ptcore.float64))      # (no float64 CUDA kernel yet)
    with pytest.raises(NotImplementedError):
        ptcore.special.i1(x.to(ptcore.complex64))
    with pytest.raises(TypeError):
        ptcore.special.i1e(0.5)
    xi = ptcore.tensor([0, 1, 3], dtype=ptcore.int32)
    r = ptcore.special.i0e(xi.cuda())
    assert r.dtype is ptcore.float32
    np.testing.assert_array_equal(r.cpu().numpy(), ptcore.special.i0e(xi).numpy())
    out = ptcore.empty(2, device="cuda")
    assert ptcore.special.i1e(x, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), ptcore.special.i1e(x.cpu()).numpy())


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
    from ptcore.cuda import _kernels_special as KS
    src = KS._f32_device_source()
    for fn in ("ptc_erfcx_s", "ptc_ndtri_s", "ptc_i1e_s", "ptc_expf"):
        assert fn in src, fn
    assert "static " not in src and "__device__" in src


def test_special_kernels_compile_for_sm90_with_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc")
    from ptcore.cuda import _compiler as C
    from ptcore.cuda import _kernels as K
    ok, why = C.nvrtc_available()
    if not ok:
        pytest.skip(f"libnvrtc is unusable: {why}")
    names = [n for n, (fam, _) in K.all_kernels().items() if fam == "special"]
    assert len(names) == 2 * 2 * 12 + 2 * 2 + 2 * 8 + 2 * 1
    cubin = C.compile(K.program_source(names), names, arch="sm_90", cache=False)
    assert cubin[:4] == b"\x7fELF"


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
