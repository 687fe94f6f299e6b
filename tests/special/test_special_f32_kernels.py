"""The vectorised float32 special-function kernels (ptcore/_ops/kernels/include/ptc_special.h):
accuracy against scipy.special in float64 over wide ranges and the tails
(never worse than torch's own float32 kernels on the same points, and within
a few ulp), special values (+-0, +-inf, nan, subnormals, the domain ends) as
torch, the strided loops equal to the contiguous (vectorised) ones bit for
bit, float16/bfloat16 through float32, and float64 still SciPy's values."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")
sc = pytest.importorskip("scipy.special")

F32_TINY = np.finfo(np.float32).tiny


def _wide():
    return np.concatenate([
        np.linspace(-60, 60, 48001), np.geomspace(1e-45, 3e38, 6000),
        -np.geomspace(1e-45, 3e38, 6000), np.linspace(-10, 10, 4001) + 1e-3])


def _unit():
    return np.concatenate([np.linspace(0, 1, 40001), np.geomspace(1e-45, 0.5, 6000),
                           1 - np.geomspace(6e-8, 0.5, 6000)])


def _sym():
    return np.concatenate([np.linspace(-1, 1, 40001), 1 - np.geomspace(6e-8, 0.5, 6000),
                           -1 + np.geomspace(6e-8, 0.5, 6000), np.geomspace(1e-45, 1e-3, 2000),
                           -np.geomspace(1e-45, 1e-3, 2000)])


def _pos():
    return np.concatenate([np.linspace(0.01, 60, 20001), np.geomspace(1e-6, 1e30, 4000),
                           np.linspace(-20.5, 0.5, 8001)])


# name -> (ptcore function, torch function, scipy reference, domain, max relative error)
def _pg1(lib):
    return lambda x: lib.special.polygamma(1, x)


CASES = {
    "erf": ("erf", "erf", sc.erf, _wide, 2.5e-7),
    "erfc": ("erfc", "erfc", sc.erfc, _wide, 3.5e-7),
    "erfinv": ("erfinv", "erfinv", sc.erfinv, _sym, 3e-7),
    "erfcx": ("erfcx", "erfcx", sc.erfcx, _wide, 5e-7),
    "ndtr": ("ndtr", "ndtr", sc.ndtr, _wide, 4e-7),
    "log_ndtr": ("log_ndtr", "log_ndtr", sc.log_ndtr, _wide, 6e-7),
    "ndtri": ("ndtri", "ndtri", sc.ndtri, _unit, 2.5e-7),
    "i0": ("i0", "i0", sc.i0, _wide, 4e-7),
    "i0e": ("i0e", "i0e", sc.i0e, _wide, 3e-7),
    "i1": ("i1", "i1", sc.i1, _wide, 6e-7),
    "i1e": ("i1e", "i1e", sc.i1e, _wide, 6e-7),
    "logit": ("logit", "logit", sc.logit, _unit, 3e-7),
    "polygamma1": (None, None, lambda x: sc.polygamma(1, x), _pos, 1e-6),
    "entr": ("entr", "entr", sc.entr, _wide, 3e-7),
    # torch.special's own names for I0/I1 (nan at +-inf), same kernels
    "modified_bessel_i0": ("modified_bessel_i0", "modified_bessel_i0",
                           lambda x: np.where(np.isinf(x), np.nan, sc.i0(x)), _wide, 4e-7),
    "modified_bessel_i1": ("modified_bessel_i1", "modified_bessel_i1",
                           lambda x: np.where(np.isinf(x), np.nan, sc.i1(x)), _wide, 6e-7),
}


def _fns(name):
    pn, tn = CASES[name][:2]
    if name == "polygamma1":
        return _pg1(ptcore), _pg1(torch)
    return getattr(ptcore.special, pn), getattr(torch.special, tn)


# relative errors, against max(|ref|, floor): logit's values near p = 1/2 are
# small and carry the rounding of p / (1 - p) (torch's formula too) as absolute error
FLOOR = {"logit": 1.0}


def _relerr(got, ref, mask, floor=0.0):
    return np.abs(got[mask] - ref[mask]) / np.maximum(np.abs(ref[mask]), floor)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_accuracy_against_scipy_and_torch(name):
    fp, ft = _fns(name)
    ref_fn, dom, bound = CASES[name][2:]
    x = dom().astype(np.float32)
    if name == "polygamma1":    # away from the poles, where the argument's rounding dominates
        x = x[(x > 0) | (np.abs(x - np.round(x)) > 1e-2)]
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
    got = fp(ptcore.from_numpy(x.copy()))
    assert got.dtype is ptcore.float32
    got = got.numpy().astype(np.float64)
    t = ft(torch.from_numpy(x.copy())).numpy().astype(np.float64)
    finite = np.isfinite(ref) & (np.abs(ref) < 3.4e38)
    # where the float32 result is a normal number
    normal = finite & (np.abs(ref) >= F32_TINY)
    err = _relerr(got, ref, normal, FLOOR.get(name, 0.0))
    terr = _relerr(t, ref, normal, FLOOR.get(name, 0.0))
    assert err.max() <= bound, (name, float(err.max()), x[normal][np.argmax(err)])
    # never less accurate than torch's float32 kernel, up to an ulp or two
    assert err.max() <= max(terr.max(), 3e-7) * 1.01, (float(err.max()), float(terr.max()))
    # overflow, underflow and the domain ends as the exact values rounded to float32
    with np.errstate(all="ignore"):
        ref32 = ref.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref32))
    inf = np.isinf(ref32)
    np.testing.assert_array_equal(got[inf], ref32[inf])
    sub = finite & (np.abs(ref) < F32_TINY)
    np.testing.assert_allclose(got[sub], ref[sub], rtol=0, atol=3e-45)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1e-45, -1e-45,
                     1e-40, -1e-40, F32_TINY, 3e38, -3e38, 2.0, -2.0, 0.999999, -0.999999,
                     1e-7, 5.0, -5.0, 9.0, -9.0, 15.0, -15.0], dtype=np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_values_as_torch(name):
    fp, ft = _fns(name)
    x = SPECIALS
    if name in ("i1", "i1e"):
        # I1(+-1e-45) = +-7e-46 rounds to +-0 or +-1e-45 (a tie in float32)
        x = x[np.abs(x) != np.float32(1e-45)]
    if name == "polygamma1":
        # torch's float32 sin(pi x) is not 0 at the poles (it returns 1e13..1e15 or
        # nan there): ptcore gives torch's values (0 itself is +inf in both)
        poles = (x <= 0) & (x == np.round(x))
        np.testing.assert_allclose(fp(ptcore.from_numpy(x[poles].copy())).numpy(),
                                   ft(torch.from_numpy(x[poles].copy())).numpy(), rtol=1e-5)
        x = x[~poles & (x > -0.99)]
    p = fp(ptcore.from_numpy(x.copy())).numpy().astype(np.float64)
    t = ft(torch.from_numpy(x.copy())).numpy().astype(np.float64)
    with np.errstate(all="ignore"):
        ref = CASES[name][2](x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(p), np.isnan(t))
    np.testing.assert_array_equal(np.isinf(p), np.isinf(t))
    fin = np.isfinite(t) & np.isfinite(p)
    # torch's value, or closer to the exact one than torch (torch's float32
    # ndtr/log_ndtr tails carry the rounding of x / sqrt(2): 4e-6 at |x| = 9)
    dp, dt = np.abs(p[fin] - t[fin]), np.abs(p[fin] - ref[fin])
    ok = (dp <= 2e-6 * np.abs(t[fin]) + 3e-45) | (dt <= np.abs(t[fin] - ref[fin]))
    assert ok.all(), list(zip(x[fin][~ok], p[fin][~ok], t[fin][~ok], ref[fin][~ok]))
    # signs of zeros and infinities
    z = (p == 0) | np.isinf(p)
    np.testing.assert_array_equal(np.signbit(p[z]), np.signbit(t[z]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_strided_loop_equals_vectorised_loop(name):
    fp, _ = _fns(name)
    dom = CASES[name][3]
    x = dom().astype(np.float32)[:20000]
    base = ptcore.from_numpy(np.stack([x, x[::-1]], 1).copy())     # (n, 2)
    strided = base[:, 0]                                           # stride 2
    assert not strided.is_contiguous()
    a = fp(strided).numpy()
    b = fp(strided.contiguous()).numpy()
    np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))


def test_logit_eps_clamp_and_in_place():
    x = np.array([-0.5, 0.0, 1e-9, 0.3, 0.5, 1.0, 1.5, np.nan], np.float32)
    for eps in (None, 1e-6, 0.25):
        p = ptcore.special.logit(ptcore.from_numpy(x.copy()), eps).numpy()
        t = torch.special.logit(torch.from_numpy(x.copy()), eps).numpy()
        np.testing.assert_allclose(p, t, rtol=2e-6, equal_nan=True)
    y = ptcore.from_numpy(x.copy())
    y.logit_(1e-3)
    np.testing.assert_allclose(y.numpy(), torch.from_numpy(x.copy()).logit_(1e-3).numpy(),
                               rtol=2e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "ndtr", "i0", "i0e", "i1", "i1e",
                                  "logit", "polygamma1"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes_as_torch(name, dtype):
    fp, ft = _fns(name)
    x = np.linspace(-0.99, 0.99, 397) if name == "erfinv" else (
        np.linspace(0.01, 0.99, 397) if name == "logit" else np.linspace(-6, 6, 397) + 0.01)
    if name == "polygamma1":
        x = np.linspace(0.1, 12, 397)      # bfloat16 rounds onto the poles below 0
    t = ft(torch.tensor(x, dtype=getattr(torch, dtype)))
    p = fp(ptcore.tensor(x, dtype=getattr(ptcore, dtype)))
    assert str(p.dtype).split(".")[-1] == dtype
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(p.float().numpy(), t.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "ndtr", "log_ndtr", "ndtri", "erfcx",
                                  "i0e", "i1", "i1e", "polygamma1"])
def test_float64_keeps_double_precision(name):
    fp, _ = _fns(name)
    ref_fn, dom = CASES[name][2:4]
    x = dom()[::7]
    if name == "polygamma1":
        x = x[x > 0]
    with np.errstate(all="ignore"):
        ref = ref_fn(x)
    got = fp(ptcore.from_numpy(x.copy())).numpy()
    ok = np.isfinite(ref) & (ref != 0)
    rtol = 1e-10 if name in ("erfinv", "polygamma1") else 1e-13
    np.testing.assert_allclose(got[ok], ref[ok], rtol=rtol)


def test_gradients_through_float32_kernels():
    x = np.linspace(-3, 3, 41).astype(np.float32) + 0.013
    for name in ("erf", "erfc", "ndtr", "log_ndtr", "erfcx", "i0e", "i1", "i1e"):
        fp, ft = _fns(name)
        px = ptcore.from_numpy(x.copy()).requires_grad_()
        tx = torch.from_numpy(x.copy()).requires_grad_()
        fp(px).sum().backward()
        ft(tx).sum().backward()
        np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=2e-5, atol=1e-6,
                                   err_msg=name)
