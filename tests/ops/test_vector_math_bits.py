"""The float32 vector exp family (ptc_fmath_vec.h) against its strided path:
a contiguous tensor runs the AVX-512 / AVX2 copies, a strided view of the
same values goes through the same loop in chunks.  exp and tanh give the same
bits; sigmoid and silu too (checked within an ulp here).  Arguments span the
whole range, including overflow, results that are subnormal or round to
zero, infinities and NaN.

The vector loops of ptc_ew_vec.h (lerp, addcmul; float32 fmod, remainder
and floor division) likewise: the scalar bits, torch's values, and torch's
speed."""
import numpy as np
import pytest

import ptcore


def _values():
    rng = np.random.default_rng(0)
    parts = [rng.uniform(-110.0, 95.0, 20000), rng.standard_normal(20000) * 4,
             np.linspace(-104.5, -85.0, 4001), np.linspace(85.0, 89.5, 1001),
             np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.7228394, 88.72284,
                       -103.972084, -103.97209, 1e-30, -1e-30, 0.625, -0.625])]
    return np.concatenate(parts).astype(np.float32)


def _silu(x):
    return ptcore.nn.functional.silu(x)


def _both(fn):
    x = _values()
    contiguous = fn(ptcore.from_numpy(x)).numpy()
    spread = np.zeros(2 * x.size, dtype=np.float32)
    spread[::2] = x
    return contiguous, fn(ptcore.from_numpy(spread)[::2]).numpy()


@pytest.mark.parametrize("fn", [ptcore.exp, ptcore.tanh], ids=["exp", "tanh"])
def test_vector_and_scalar_paths_same_bits(fn):
    contiguous, strided = _both(fn)
    assert np.array_equal(contiguous.view(np.uint32), strided.view(np.uint32))


@pytest.mark.parametrize("fn", [ptcore.sigmoid, _silu], ids=["sigmoid", "silu"])
def test_vector_and_strided_paths_within_an_ulp(fn):
    contiguous, strided = _both(fn)
    assert np.array_equal(np.isnan(contiguous), np.isnan(strided))
    ok = ~np.isnan(contiguous)
    np.testing.assert_array_max_ulp(contiguous[ok], strided[ok], maxulp=1)


def test_softmax_rows_match_float64():
    """The softmax kernels' exp against float64 softmax, rows wide and narrow."""
    rng = np.random.default_rng(1)
    for cols in (3, 16, 64, 1000):
        x = (rng.standard_normal((37, cols)) * 20).astype(np.float32)
        got = ptcore.softmax(ptcore.from_numpy(x), -1).numpy()
        e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
        np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_softmax_logsumexp_every_tail_width():
    """Rows of every length up to past two AVX-512 vectors (the last partial
    vector is computed as the row's last full one): softmax, log_softmax and
    logsumexp against float64."""
    rng = np.random.default_rng(2)
    for cols in list(range(1, 50)) + [100, 1001]:
        x = (rng.standard_normal((5, cols)) * 10).astype(np.float32)
        t = ptcore.from_numpy(x)
        x64 = x.astype(np.float64)
        m = x64.max(-1, keepdims=True)
        e = np.exp(x64 - m)
        lse = np.log(e.sum(-1, keepdims=True)) + m
        np.testing.assert_allclose(ptcore.softmax(t, -1).numpy(), e / e.sum(-1, keepdims=True),
                                   rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(ptcore.log_softmax(t, -1).numpy(), x64 - lse,
                                   rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(ptcore.logsumexp(t, -1).numpy(), lse[:, 0], rtol=2e-6)


# ---------------------------------------------------------------------------
# ptc_ew_vec.h: lerp and float32 fmod / remainder / floor division
# ---------------------------------------------------------------------------
_DIVMOD = ["fmod", "remainder", "floor_divide"]


def _divmod_values(n, seed):
    """Quotients of every size, zeros of both signs, subnormals, infinities, NaN."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n) * np.exp(rng.uniform(-25, 25, n))
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38,
                        3.4e38, -3.4e38, 2.5, -2.5, 7.0, -7.0, 4194304.0, -16777216.0])
    pick = rng.random(n) < 0.25
    v[pick] = rng.choice(special, pick.sum())
    return v.astype(np.float32)


def _operand_forms(lib, x, y):
    """(a, b) pairs: tensor and tensor, tensor and number, 0-d tensor and tensor."""
    tx, ty = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
    return [(tx, ty), (tx, float(y[3 % y.size])), (lib.tensor(x[5 % x.size]), ty)]


def _sleef_nan(x, y, t, p):
    """torch's vector fmod (SLEEF) gives NaN where |x / y| passes the float32
    range; ptcore, torch's own scalar loop and NumPy give the exact value."""
    with np.errstate(all="ignore"):
        q = np.abs(x.astype(np.float64) / y)
    return np.isnan(t) & ~np.isnan(p) & np.isfinite(x) & np.isfinite(y) & (q > 3.4e38)


@pytest.mark.parametrize("op", _DIVMOD)
def test_float32_divmod_vector_loops(op):
    torch = pytest.importorskip("torch")
    for n in (1, 15, 16, 17, 33, 1000):
        x, y = _divmod_values(n, n), _divmod_values(n, n + 1)
        for (pa, pb), (ta, tb) in zip(_operand_forms(ptcore, x, y), _operand_forms(torch, x, y)):
            got = getattr(ptcore, op)(pa, pb).numpy()
            want = getattr(torch, op)(ta, tb).numpy()
            xs = np.broadcast_to(pa.numpy() if isinstance(pa, ptcore.Tensor) else pa, got.shape)
            ys = np.broadcast_to(pb.numpy() if isinstance(pb, ptcore.Tensor) else pb, got.shape)
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            same |= _sleef_nan(xs, ys, want, got)
            assert same.all(), (op, n, xs[~same][:4], ys[~same][:4], got[~same][:4],
                                want[~same][:4])
            if op == "fmod":
                with np.errstate(all="ignore"):
                    np.testing.assert_array_equal(got, np.fmod(xs, ys))
        # the strided (scalar) loop gives the same bits
        spread = np.zeros((2, n), np.float32)
        spread[0] = x
        sx = ptcore.from_numpy(spread.T.copy()).T[0]
        strided = getattr(ptcore, op)(sx, ptcore.from_numpy(y)).numpy()
        contig = getattr(ptcore, op)(ptcore.from_numpy(x), ptcore.from_numpy(y)).numpy()
        assert np.array_equal(strided.view(np.uint32), contig.view(np.uint32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lerp_addcmul_vector_loops_every_width(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    weights = [0.01, 0.49999997, 0.5, -0.5, 0.7, -3.0, float("nan"), "tensor", "special"]
    for n in list(range(1, 40)) + [1000]:
        a, b = rng.standard_normal((2, n)).astype(dtype)
        for w in weights:
            if w == "tensor":
                w = rng.uniform(-1, 2, n).astype(dtype)
            elif w == "special":
                w = rng.choice(np.array([0.5, -0.5, np.nan, np.inf, -0.0, 0.49999997, 1.0],
                                        dtype), n)
            pw, tw = (ptcore.from_numpy(w), torch.from_numpy(w)) if isinstance(w, np.ndarray) \
                else (w, w)
            want = torch.lerp(torch.from_numpy(a), torch.from_numpy(b), tw).numpy()
            np.testing.assert_array_equal(
                ptcore.lerp(ptcore.from_numpy(a), ptcore.from_numpy(b), pw).numpy(), want)
            pa = ptcore.from_numpy(a.copy())
            pa.lerp_(ptcore.from_numpy(b), pw)
            np.testing.assert_array_equal(pa.numpy(), want)
        # addcmul's vector loop: torch's fma(value * t1, t2, self)
        c = rng.standard_normal(n).astype(dtype)
        for value in (1, 0.001, -3.5):
            np.testing.assert_array_equal(
                ptcore.addcmul(*(ptcore.from_numpy(v) for v in (a, b, c)), value=value).numpy(),
                torch.addcmul(*(torch.from_numpy(v) for v in (a, b, c)), value=value).numpy())
