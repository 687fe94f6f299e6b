"""The composite ops (ptcore._ops.*_composite, calculus) against PyTorch: cross, diff, cov, corrcoef, block_diag,
cartesian_prod, combinations, trapezoid, vander, unravel_index, h/v/dsplit,
logaddexp(2), heaviside, gcd/lcm, sinc, frexp, ldexp, dist, matrix_exp,
cholesky_solve/inverse, lu/lu_unpack/lu_solve, polygamma, mvlgamma,
igamma(c), predicates/creation, windows, in-place aliases and the new Tensor
methods; values, dtypes, shapes, errors and gradients."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from ops_oracle import rand, both, to_np, dtype_name, assert_same, same_error  # noqa: E402

FLOATS = ["float32", "float64"]
NUMERIC = ["int32", "int64", "float32", "float64"]


def pair(shape, name, seed=0, noncontig=False):
    a = rand(shape, name, seed)
    p, t = both(a, name)
    if noncontig and len(shape) >= 2:
        p, t = p.transpose(0, 1), t.transpose(0, 1)
    return p, t


def call(fn, *pairs, **kw):
    """Run ``fn(L, *tensors)`` with ptcore and with torch (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fn(torch, *[q[1] for q in pairs], **kw)
        p = fn(ptcore, *[q[0] for q in pairs], **kw)
    return p, r


def close(p, r, tol=None):
    if isinstance(r, (tuple, list)):
        assert len(p) == len(r)
        for a, b in zip(p, r):
            close(a, b, tol)
        return
    assert tuple(p.shape) == tuple(r.shape), f"shape {tuple(p.shape)} vs {tuple(r.shape)}"
    assert dtype_name(p) == dtype_name(r), f"dtype {p.dtype} vs {r.dtype}"
    if tol is None:
        tol = 1e-10 if dtype_name(r) in ("float64", "complex128") else 2e-5
    np.testing.assert_allclose(to_np(p), to_np(r), rtol=tol, atol=tol, equal_nan=True)


def grads(fn, *arrays, tol=1e-8):
    """Gradients of ``fn(L, *xs).sum()``-weighted outputs w.r.t. float64 inputs match torch."""
    ps = [ptcore.from_numpy(np.array(a, dtype=np.float64)).requires_grad_() for a in arrays]
    ts = [torch.from_numpy(np.array(a, dtype=np.float64)).requires_grad_() for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp, rt = fn(ptcore, *ps), fn(torch, *ts)
    w = np.random.default_rng(5).standard_normal(tuple(rt.shape))
    (rp * ptcore.from_numpy(w.copy())).sum().backward()
    (rt * torch.from_numpy(w.copy())).sum().backward()
    for a, b in zip(ps, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# cross, diff, cov, corrcoef
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NUMERIC)
def test_cross(name):
    a, b = pair((4, 3), name, 1), pair((4, 3), name, 2)
    close(*call(lambda L, x, y: L.cross(x, y, dim=1), a, b))
    close(*call(lambda L, x, y: L.cross(x, y), pair((3, 5), name, 3), pair((3, 5), name, 4)))
    close(*call(lambda L, x, y: x.cross(y, dim=-1), a, b))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        ptcore.cross(a[0], b[0])
    same_error(lambda: torch.cross(torch.ones(2, 4), torch.ones(2, 4)),
               lambda: ptcore.cross(ptcore.ones(2, 4), ptcore.ones(2, 4)), ["no dimension of size 3"])


@pytest.mark.parametrize("name", ["bool", "int64", "float32", "float64"])
def test_diff(name):
    a = pair((3, 6), name, 1, noncontig=True)
    for n in (0, 1, 2, 7):
        for dim in (0, 1, -1):
            close(*call(lambda L, x: L.diff(x, n=n, dim=dim), a))
    pre, app = pair((6, 2), name, 2), pair((6, 1), name, 3)
    close(*call(lambda L, x, p, q: x.diff(prepend=p, append=q, dim=1), a, pre, app))
    close(*call(lambda L, x: L.diff(x), pair((0,), name)))
    if name == "float32":
        close(*call(lambda L, x, p: L.diff(x, prepend=p), pair((4,), "int64"),
                    pair((1,), "float32")))


def test_diff_errors_and_grad():
    same_error(lambda: torch.diff(torch.tensor(1.)), lambda: ptcore.diff(ptcore.tensor(1.)),
               ["at least one-dimensional"])
    same_error(lambda: torch.diff(torch.ones(3), n=-1), lambda: ptcore.diff(ptcore.ones(3), n=-1),
               ["order must be non-negative"])
    same_error(lambda: torch.diff(torch.ones(2, 3), prepend=torch.ones(3, 1)),
               lambda: ptcore.diff(ptcore.ones(2, 3), prepend=ptcore.ones(3, 1)),
               ["input.size(0) = 2, but got tensor.size(0) = 3"])
    same_error(lambda: torch.diff(torch.ones(2, 3), prepend=torch.ones(3)),
               lambda: ptcore.diff(ptcore.ones(2, 3), prepend=ptcore.ones(3)),
               ["same dimension as input"])
    grads(lambda L, x, p: L.diff(x, n=2, dim=0, prepend=p), rand((4, 3), "float64"),
          rand((1, 3), "float64", 1))


@pytest.mark.parametrize("name", ["int64", "float32", "float64", "complex128"])
def test_cov_corrcoef(name):
    x = pair((3, 7), name, 1)
    close(*call(lambda L, t: L.cov(t), x))
    close(*call(lambda L, t: t.cov(correction=0), x))
    if not name.startswith("complex"):      # complex x/0 follows the core's division
        close(*call(lambda L, t: L.cov(t, correction=7), x))      # dof <= 0 -> inf/nan
    close(*call(lambda L, t: L.cov(t), pair((7,), name, 2)))
    fw = both(np.array([1, 2, 0, 3, 1, 1, 2]))
    aw = both(np.array([0.5, 1, 2, 0.25, 1, 3, 1.5]))
    close(*call(lambda L, t, f, a: L.cov(t, fweights=f, aweights=a), x, fw, aw))
    close(*call(lambda L, t, f: L.cov(t, fweights=f, correction=2), x, fw))
    close(*call(lambda L, t, a: L.cov(t, aweights=a), x, aw))
    close(*call(lambda L, t: L.corrcoef(t), x))
    close(*call(lambda L, t: t.corrcoef(), pair((7,), name, 3)))


def test_cov_errors_and_grad():
    x = np.arange(3.)
    for kw, words in ((dict(fweights=np.array([1., 2, 3])), ["integral dtype"]),
                      (dict(fweights=np.array([1, 2])), ["2 != 3"]),
                      (dict(fweights=np.array([1, -2, 3])), ["fweights cannot be negative"]),
                      (dict(aweights=np.array([1, 2, 3])), ["floating point dtype"]),
                      (dict(aweights=np.array([0., 0, 0])), ["weights sum to zero"])):
        same_error(lambda: torch.cov(torch.tensor(x), **{k: torch.tensor(v) for k, v in kw.items()}),
                   lambda: ptcore.cov(ptcore.tensor(x), **{k: ptcore.tensor(v) for k, v in kw.items()}),
                   words)
    same_error(lambda: torch.cov(torch.ones(2, 2, 2)), lambda: ptcore.cov(ptcore.ones(2, 2, 2)),
               ["two or fewer dimensions"])
    same_error(lambda: torch.cov(torch.tensor([True])), lambda: ptcore.cov(ptcore.tensor([True])),
               ["bool dtype is not supported"])
    same_error(lambda: torch.corrcoef(torch.ones(2, 2, 2)),
               lambda: ptcore.corrcoef(ptcore.ones(2, 2, 2)), ["two or fewer dimensions"])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        ptcore.cov(ptcore.tensor([1., 2]), correction=2)
    grads(lambda L, t: L.cov(t), rand((3, 6), "float64"))
    grads(lambda L, t: L.corrcoef(t), rand((3, 6), "float64", 1) + np.arange(18).reshape(3, 6))


# ---------------------------------------------------------------------------
# constructions
# ---------------------------------------------------------------------------

def test_block_diag():
    close(*call(lambda L, a, b, c, d: L.block_diag(a, b, c, d), pair((), "int64"),
                pair((3,), "float32", 1), pair((2, 0), "int32", 2), pair((2, 3), "float64", 3,
                                                                          noncontig=True)))
    close(*call(lambda L, a: L.block_diag(a), pair((2, 2), "int32")))
    close(*call(lambda L: L.block_diag()))
    same_error(lambda: torch.block_diag(torch.ones(2, 2, 2)),
               lambda: ptcore.block_diag(ptcore.ones(2, 2, 2)), ["Input 0 has 3 dimensions"])
    grads(lambda L, a, b: L.block_diag(a, b), rand((2, 3), "float64"), rand((2,), "float64", 1))


def test_cartesian_prod_combinations():
    a, b, c = pair((3,), "int64"), pair((2,), "int64", 1), pair((4,), "float32", 2)
    close(*call(lambda L, x, y: L.cartesian_prod(x, y), a, b))
    close(*call(lambda L, x: L.cartesian_prod(x), c))
    for r in (0, 1, 2, 3, 5):
        for wr in (False, True):
            close(*call(lambda L, x: L.combinations(x, r=r, with_replacement=wr), c))
    close(*call(lambda L, x: L.combinations(x), pair((0,), "float32")))
    same_error(lambda: torch.cartesian_prod(torch.ones(2, 2)),
               lambda: ptcore.cartesian_prod(ptcore.ones(2, 2)), ["Expect a 1D vector"])
    same_error(lambda: torch.combinations(torch.ones(2, 2)),
               lambda: ptcore.combinations(ptcore.ones(2, 2)), ["Expect a 1D vector"])
    same_error(lambda: torch.combinations(torch.ones(2), r=-1),
               lambda: ptcore.combinations(ptcore.ones(2), r=-1), ["non-negative number"])
    grads(lambda L, x, y: L.cartesian_prod(x, y), rand((3,), "float64"), rand((2,), "float64", 1))
    grads(lambda L, x: L.combinations(x, 3, True), rand((4,), "float64"))


@pytest.mark.parametrize("name", ["bool", "int8", "int64", "float32", "float64"])
def test_vander(name):
    x = pair((4,), name, 1)
    for N in (None, 0, 1, 3, 6):
        for inc in (False, True):
            close(*call(lambda L, t: L.vander(t, N=N, increasing=inc), x))
    same_error(lambda: torch.vander(torch.ones(2, 2)), lambda: ptcore.vander(ptcore.ones(2, 2)),
               ["one-dimensional"])
    same_error(lambda: torch.vander(torch.ones(2), N=-1),
               lambda: ptcore.vander(ptcore.ones(2), N=-1), ["N must be non-negative"])


def test_vander_grad():
    # torch's own vander backward fails (in-place cumprod on a view): check numerically
    x = ptcore.tensor([0.5, -1.5, 2.0], dtype=ptcore.float64, requires_grad=True)
    for N in (1, 2, 4):
        for inc in (False, True):
            assert ptcore.autograd.gradcheck(lambda t: ptcore.vander(t, N=N, increasing=inc), (x,))


def test_unravel_index():
    for name in ("int32", "int64", "uint8"):
        idx = both(np.array([[0, 5, 3], [4, 1, 2]], dtype=name))
        close(*call(lambda L, i: L.unravel_index(i, (2, 3)), idx))
        close(*call(lambda L, i: L.unravel_index(i, 6), idx))
        close(*call(lambda L, i: L.unravel_index(i, (1, 2, 3, 1)), idx))
    close(*call(lambda L, i: L.unravel_index(i, ()), both(np.array(0))))
    same_error(lambda: torch.unravel_index(torch.tensor(4.), (2, 3)),
               lambda: ptcore.unravel_index(ptcore.tensor(4.), (2, 3)), ["integer dtype"])
    same_error(lambda: torch.unravel_index(torch.tensor(4), (2, -3)),
               lambda: ptcore.unravel_index(ptcore.tensor(4), (2, -3)), ["negative values"])
    same_error(lambda: torch.unravel_index(torch.tensor(4), (2, 3.)),
               lambda: ptcore.unravel_index(ptcore.tensor(4), (2, 3.)), ["only contain ints"])


# ---------------------------------------------------------------------------
# trapezoid
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["int32", "int64", "float32", "float64"])
def test_trapezoid(name):
    y = pair((3, 5), name, 1, noncontig=True)   # (5, 3)
    x1 = pair((5,), "float64", 2)
    xf = pair((5, 3), name, 3)
    for fn in ("trapezoid", "trapz", "cumulative_trapezoid"):
        close(*call(lambda L, t: getattr(L, fn)(t), y))
        close(*call(lambda L, t: getattr(L, fn)(t, dim=0), y))
        close(*call(lambda L, t: getattr(L, fn)(t, dx=2, dim=0), y))
        close(*call(lambda L, t: getattr(L, fn)(t, dx=0.5), y))
        close(*call(lambda L, t, x: getattr(L, fn)(t, x, dim=0), y, x1))
        close(*call(lambda L, t, x: getattr(L, fn)(t, x), y, xf))
        close(*call(lambda L, t, x: getattr(L, fn)(t, x, dim=0), y, xf))
        close(*call(lambda L, t: getattr(L, fn)(t, dim=1), pair((2, 0), name)))
        close(*call(lambda L, t: getattr(L, fn)(t, dim=1), pair((2, 1), name)))


def test_trapezoid_errors_and_grad():
    same_error(lambda: torch.trapezoid(torch.tensor(1.)),
               lambda: ptcore.trapezoid(ptcore.tensor(1.)), ["no dimensions"])
    same_error(lambda: torch.trapezoid(torch.ones(2, 3), torch.ones(2)),
               lambda: ptcore.trapezoid(ptcore.ones(2, 3), ptcore.ones(2)),
               ["one `x` value for each sample point"])
    same_error(lambda: torch.trapezoid(torch.ones(2, 3), dim=4),
               lambda: ptcore.trapezoid(ptcore.ones(2, 3), dim=4), ["Dimension out of range"])
    same_error(lambda: torch.trapezoid(torch.ones(2, dtype=torch.bool)),
               lambda: ptcore.trapezoid(ptcore.ones(2, dtype=ptcore.bool)), ["bool"])
    same_error(lambda: torch.cumulative_trapezoid(torch.ones(2, 3), torch.ones(2)),
               lambda: ptcore.cumulative_trapezoid(ptcore.ones(2, 3), ptcore.ones(2)),
               ["one `x` value for each sample point"])
    grads(lambda L, y, x: L.trapezoid(y, x), rand((3, 5), "float64"), rand((5,), "float64", 1))
    grads(lambda L, y, x: L.cumulative_trapezoid(y, x, dim=0), rand((3, 5), "float64"),
          rand((3, 5), "float64", 1))
    grads(lambda L, y: L.trapezoid(y, dx=0.3), rand((3, 5), "float64"))


# ---------------------------------------------------------------------------
# hsplit / vsplit / dsplit
# ---------------------------------------------------------------------------

def test_hvdsplit():
    x = pair((4, 6, 8), "float32")
    for fn in ("hsplit", "vsplit", "dsplit"):
        for ios in (2, [1, 3], (0, 5, 10)):
            close(*call(lambda L, t: getattr(L, fn)(t, ios), x))
            close(*call(lambda L, t: getattr(t, fn)(ios), x))
    close(*call(lambda L, t: L.hsplit(t, 3), pair((6,), "int64")))
    same_error(lambda: torch.hsplit(torch.tensor(1.), 2), lambda: ptcore.hsplit(ptcore.tensor(1.), 2),
               ["requires a tensor with at least 1 dimension"])
    same_error(lambda: torch.vsplit(torch.ones(4), 2), lambda: ptcore.vsplit(ptcore.ones(4), 2),
               ["requires a tensor with at least 2 dimension"])
    same_error(lambda: torch.dsplit(torch.ones(4, 4), 2), lambda: ptcore.dsplit(ptcore.ones(4, 4), 2),
               ["requires a tensor with at least 3 dimension"])
    same_error(lambda: torch.hsplit(torch.ones(4, 5), 3), lambda: ptcore.hsplit(ptcore.ones(4, 5), 3),
               ["not divisible by the split_size 3"])


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["logaddexp", "logaddexp2"])
def test_logaddexp(fn):
    a, b = pair((4, 3), "float32", 1, noncontig=True), pair((4,), "float64", 2)
    close(*call(lambda L, x, y: getattr(L, fn)(x, y), a, b))
    close(*call(lambda L, x, y: getattr(x, fn)(y), pair((3, 4), "float32"), pair((1, 4), "int64")))
    inf = both(np.array([np.inf, -np.inf, np.inf, -np.inf, np.nan, 1.0, 1e30]))
    inf2 = both(np.array([np.inf, -np.inf, -np.inf, 3.0, 1.0, np.nan, -1e30]))
    close(*call(lambda L, x, y: getattr(L, fn)(x, y), inf, inf2))
    same_error(lambda: getattr(torch, fn)(torch.tensor([1]), torch.tensor([2])),
               lambda: getattr(ptcore, fn)(ptcore.tensor([1]), ptcore.tensor([2])),
               ["not implemented for 'Long'"])
    same_error(lambda: getattr(torch, fn)(torch.tensor([1.]), 1),
               lambda: getattr(ptcore, fn)(ptcore.tensor([1.]), 1), ["must be Tensor"])
    x = rand((5,), "float64")
    grads(lambda L, p, q: getattr(L, fn)(p, q), x, np.where(np.arange(5) < 2, x, -x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["logaddexp", "logaddexp2"])
def test_logaddexp_unrecorded_path_has_the_recorded_bits(fn, dtype):
    # (without autograd the ops run in place on one temporary: the same ops, so the
    # same bits, NaNs' signs included, as the recorded composition)
    sp = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 3.0, 1e-40, -2.5])
    grid = np.array(np.meshgrid(sp, sp)).reshape(2, -1)
    rng = np.random.default_rng(3)
    x = np.concatenate([grid, rng.standard_normal((2, 3000)) * 30], axis=1).astype(dtype)
    a, b = ptcore.from_numpy(x[0]), ptcore.from_numpy(x[1])
    plain = getattr(ptcore, fn)(a, b)
    ar = a.clone().requires_grad_(True)
    recorded = getattr(ptcore, fn)(ar, b)
    u = "u4" if dtype == "float32" else "u8"
    assert np.array_equal(plain.numpy().view(u), recorded.detach().numpy().view(u))
    want = getattr(torch, fn)(torch.from_numpy(x[0]), torch.from_numpy(x[1])).numpy()
    np.testing.assert_allclose(plain.numpy(), want, rtol=4e-7 if dtype == "float32" else 1e-15,
                               atol=1e-6 if dtype == "float32" else 1e-14)
    # broadcast operands, and out=
    out = ptcore.empty(0, dtype=getattr(ptcore, dtype))
    getattr(ptcore, fn)(a[:12].view(3, 4), b[:4], out=out)
    np.testing.assert_array_equal(
        out.numpy(), getattr(torch, fn)(torch.from_numpy(x[0][:12]).view(3, 4),
                                        torch.from_numpy(x[1][:4])).numpy())


@pytest.mark.parametrize("name", ["int64", "float32", "float64"])
def test_heaviside(name):
    x = both((rand((3, 4), name) * (np.arange(12).reshape(3, 4) % 3 != 0)).astype(name))
    close(*call(lambda L, a, v: L.heaviside(a, v), x, pair((4,), name, 1)))
    close(*call(lambda L, a, v: a.heaviside(v), x, pair((), name, 1)))
    p, t = both(np.array([0.0, -1.0, np.nan, 2.0], dtype=name) if name != "int64"
                else np.array([0, -1, 3, 2]))
    v = both(np.array([7], dtype=name))
    close(p.heaviside_(v[0]), t.heaviside_(v[1]))
    close(p, t)
    same_error(lambda: torch.heaviside(torch.ones(2), torch.ones(2, dtype=torch.float64)),
               lambda: ptcore.heaviside(ptcore.ones(2), ptcore.ones(2, dtype=ptcore.float64)),
               ["different dtypes"])
    same_error(lambda: torch.heaviside(torch.ones(2) * 1j, torch.ones(2) * 1j),
               lambda: ptcore.heaviside(ptcore.ones(2) * 1j, ptcore.ones(2) * 1j),
               ["complex tensors"])


def test_heaviside_no_grad_formula():
    v = ptcore.ones(2, dtype=ptcore.float64, requires_grad=True)
    r = ptcore.heaviside(ptcore.tensor([0., 1.], dtype=ptcore.float64), v)
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        r.sum().backward()


@pytest.mark.parametrize("fn", ["gcd", "lcm"])
def test_gcd_lcm(fn):
    a = both(np.array([[12, -18, 0, 7, 0, -5], [100, 36, 25, -1, 9, 0]], dtype=np.int64))
    b = both(np.array([8, 24, 6, -21, 0, 0], dtype=np.int32))
    close(*call(lambda L, x, y: getattr(L, fn)(x, y), a, b))
    close(*call(lambda L, x, y: getattr(x, fn)(y), pair((4, 5), "int16", 1, noncontig=True),
                pair((4,), "int8", 2)))
    close(*call(lambda L, x, y: getattr(L, fn)(x, y), pair((0, 3), "int32"), pair((3,), "int32")))
    p, t = pair((6,), "int64", 3)
    q = pair((6,), "int64", 4)
    close(getattr(p, fn + "_")(q[0]), getattr(t, fn + "_")(q[1]))
    close(getattr(ptcore, fn + "_")(p, q[0]), getattr(torch, fn + "_")(t, q[1]))
    for dt in ("float32", "bool"):
        same_error(lambda: getattr(torch, fn)(torch.ones(2, dtype=getattr(torch, dt)),
                                             torch.ones(2, dtype=getattr(torch, dt))),
                   lambda: getattr(ptcore, fn)(ptcore.ones(2, dtype=getattr(ptcore, dt)),
                                               ptcore.ones(2, dtype=getattr(ptcore, dt))),
                   ["not implemented for"])


@pytest.mark.parametrize("name", ["bool", "int64", "float32", "float64", "complex128"])
def test_sinc(name):
    a = rand((3, 5), name)
    a.flat[:3] = 0
    x = both(a)
    close(*call(lambda L, t: L.sinc(t), x))
    close(*call(lambda L, t: t.sinc(), x))
    if name.startswith("float"):
        p, t = both(a)
        close(p.sinc_(), t.sinc_())
        close(ptcore.sinc_(p), torch.sinc_(t))
    if name == "int64":
        same_error(lambda: x[1].clone().sinc_(), lambda: x[0].clone().sinc_(), ["can't be cast"])
    if name == "float64":
        grads(lambda L, t: L.sinc(t), a)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_frexp(name):
    info = np.finfo(name)
    a = np.array([0.0, -0.0, 1.0, 0.5, 0.75, -3.0, 1 - info.eps / 2, 1 + info.eps, info.max,
                  info.tiny, info.tiny / 8, -info.smallest_subnormal, 1e10, 3.7e-20, np.inf,
                  -np.inf, np.nan], dtype=name)
    a = np.concatenate([a, rand((20,), name) * 1.37])
    p, r = call(lambda L, t: L.frexp(t), both(a))
    close(p.mantissa, r.mantissa, tol=0)
    close(p.exponent[np.isfinite(a)], r.exponent[np.isfinite(a)], tol=0)
    close(*call(lambda L, t: t.frexp(), both(a.reshape(37, 1))))
    assert type(p).__name__ == "frexp"
    same_error(lambda: torch.frexp(torch.tensor([1])), lambda: ptcore.frexp(ptcore.tensor([1])),
               ["only supports floating-point dtypes"])
    if name == "float64":
        grads(lambda L, t: L.frexp(t).mantissa, rand((6,), name) + 0.3)


def test_ldexp_dist_positive():
    for n1, n2 in (("int64", "int64"), ("float32", "int32"), ("float64", "int64"),
                   ("float32", "float64")):
        x, e = pair((4, 3), n1, 1, noncontig=True), both(np.arange(-2, 2).astype(n2))
        close(*call(lambda L, a, b: L.ldexp(a, b), x, e))
        close(*call(lambda L, a, b: a.ldexp(b), x, e))
    p, t = pair((4,), "float64", 2)
    close(ptcore.ldexp_(p, ptcore.tensor([1, 2, 3, 4])), torch.ldexp_(t, torch.tensor([1, 2, 3, 4])))
    a, b = pair((3, 4), "float32", 1), pair((4,), "float64", 2)
    for pn in (2, 1, 0, 3.5, float("inf"), -float("inf")):
        close(*call(lambda L, x, y: L.dist(x, y, p=pn), a, b))
        close(*call(lambda L, x, y: x.dist(y, pn), a, a))
    same_error(lambda: torch.dist(torch.tensor([1]), torch.tensor([2])),
               lambda: ptcore.dist(ptcore.tensor([1]), ptcore.tensor([2])), ["floating point"])
    grads(lambda L, x, y: L.dist(x, y, 3), rand((4,), "float64"), rand((2, 4), "float64", 1))
    x = pair((3,), "int64")
    close(*call(lambda L, t: L.positive(t), x))
    close(*call(lambda L, t: t.positive(), x))
    same_error(lambda: torch.positive(torch.tensor([True])),
               lambda: ptcore.positive(ptcore.tensor([True])), ["bool tensor is not supported"])


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_matrix_exp(name):
    rng = np.random.default_rng(0)
    for scale in (1e-3, 0.5, 3.0, 40.0):
        a = (rng.standard_normal((3, 4, 4)) * scale / 4)
        if name.startswith("complex"):
            a = a + 1j * rng.standard_normal((3, 4, 4)) * scale / 4
        a = a.astype(name)
        p, r = call(lambda L, t: L.matrix_exp(t), both(a))
        tol = 1e-4 if name in ("float32", "complex64") else 1e-9
        np.testing.assert_allclose(to_np(p), to_np(r), rtol=tol, atol=tol * np.abs(to_np(r)).max())
        assert dtype_name(p) == dtype_name(r)
    close(*call(lambda L, t: t.matrix_exp(), both(np.zeros((2, 1, 1), name))))
    close(*call(lambda L, t: L.linalg.matrix_exp(t), both(np.zeros((0, 3, 3), name))))
    same_error(lambda: torch.matrix_exp(torch.ones(2, 3)), lambda: ptcore.matrix_exp(ptcore.ones(2, 3)),
               ["square matrices"])
    same_error(lambda: torch.matrix_exp(torch.ones(2)), lambda: ptcore.matrix_exp(ptcore.ones(2)),
               ["at least 2 dimensions"])
    same_error(lambda: torch.matrix_exp(torch.ones(2, 2, dtype=torch.int64)),
               lambda: ptcore.matrix_exp(ptcore.ones(2, 2, dtype=ptcore.int64)),
               ["floating point or complex"])


def test_matrix_exp_grad():
    rng = np.random.default_rng(1)
    grads(lambda L, t: L.matrix_exp(t), rng.standard_normal((2, 3, 3)), tol=1e-7)
    grads(lambda L, t: L.matrix_exp(t), rng.standard_normal((3, 3)) * 4, tol=1e-6)


def _spd(rng, shape, dt):
    a = rng.standard_normal(shape)
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    a = a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])
    return np.linalg.cholesky(a).astype(dt)


@pytest.mark.parametrize("name", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_inverse(name, upper):
    rng = np.random.default_rng(0)
    Lc = _spd(rng, (2, 4, 4), name)
    if upper:
        Lc = np.ascontiguousarray(np.swapaxes(Lc, -1, -2).conj())
    B = rng.standard_normal((3, 1, 4, 2)).astype(name)
    tol = 1e-4 if name == "float32" else 1e-9
    close(*call(lambda L, b, f: L.cholesky_solve(b, f, upper=upper), both(B), both(Lc)), tol=tol)
    close(*call(lambda L, b, f: b.cholesky_solve(f, upper), both(B[0, 0]), both(Lc[0])), tol=tol)
    close(*call(lambda L, f: L.cholesky_inverse(f, upper=upper), both(Lc)), tol=tol)
    close(*call(lambda L, f: f.cholesky_inverse(upper), both(Lc[1])), tol=tol)


def test_cholesky_errors_and_grad():
    same_error(lambda: torch.cholesky_solve(torch.ones(2), torch.eye(2)),
               lambda: ptcore.cholesky_solve(ptcore.ones(2), ptcore.eye(2)), ["at least 2 dimensions"])
    same_error(lambda: torch.cholesky_solve(torch.ones(2, 1), torch.eye(2, dtype=torch.float64)),
               lambda: ptcore.cholesky_solve(ptcore.ones(2, 1), ptcore.eye(2, dtype=ptcore.float64)),
               ["same dtype"])
    same_error(lambda: torch.cholesky_solve(torch.ones(3, 1), torch.eye(2)),
               lambda: ptcore.cholesky_solve(ptcore.ones(3, 1), ptcore.eye(2)),
               ["Incompatible matrix sizes"])
    same_error(lambda: torch.cholesky_inverse(torch.ones(2, 3)),
               lambda: ptcore.cholesky_inverse(ptcore.ones(2, 3)), ["square matrices"])
    same_error(lambda: torch.cholesky_inverse(torch.ones(2)),
               lambda: ptcore.cholesky_inverse(ptcore.ones(2)), ["at least 2 dimensions"])
    same_error(lambda: torch.cholesky_inverse(torch.eye(2, dtype=torch.int64)),
               lambda: ptcore.cholesky_inverse(ptcore.eye(2, dtype=ptcore.int64)), ["not implemented"])
    rng = np.random.default_rng(2)
    Lc = _spd(rng, (3, 3), "float64")
    grads(lambda L, b, f: L.cholesky_solve(b, f.tril()), rng.standard_normal((3, 2)), Lc, tol=1e-7)
    grads(lambda L, f: L.cholesky_inverse(f.tril()), Lc, tol=1e-7)


@pytest.mark.parametrize("name", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 2, 4)])
def test_lu_family(name, shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    A = both(a.astype(name))
    (LUp, pivp), (LUt, pivt) = call(lambda L, t: L.lu(t), A)
    tol = 1e-4 if name == "float32" else 1e-10
    close(LUp, LUt, tol=tol)
    close(pivp, pivt, tol=0)
    p3, t3 = call(lambda L, t: L.lu(t, get_infos=True), A)
    close(p3.info, t3.info, tol=0)
    assert type(p3).__name__ == "_lu_with_info"
    close(*call(lambda L, t: t.lu(get_infos=True), A), tol=tol)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        ptcore.lu(A[0])
    P, Lm, U = ptcore.lu_unpack(LUp, pivp)
    Pt, Lt, Ut = torch.lu_unpack(LUt, pivt)
    close(P, Pt, tol=0)
    close(Lm, Lt, tol=tol)
    close(U, Ut, tol=tol)
    e = ptcore.lu_unpack(LUp, pivp, unpack_data=False, unpack_pivots=False)
    et = torch.lu_unpack(LUt, pivt, unpack_data=False, unpack_pivots=False)
    close(e, et)
    assert type(e).__name__ == "lu_unpack"
    if shape[-1] == shape[-2]:
        b = rng.standard_normal(shape[:-1] + (2,)).astype(name)
        bp, bt = both(b)
        close(*call(lambda L, x, f, q: L.lu_solve(x, f, q), (bp, bt), (LUp, LUt), (pivp, pivt)),
              tol=tol * 10)
        close(*call(lambda L, x, f, q: x.lu_solve(f, q), (bp, bt), (LUp, LUt), (pivp, pivt)),
              tol=tol * 10)
        with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
            ptcore.lu_solve(bp, LUp, pivp)


def test_lu_errors_and_grad():
    same_error(lambda: torch.lu(torch.ones(2)), lambda: ptcore.lu(ptcore.ones(2)),
               ["Expected tensor with 2 or more dimensions"])
    same_error(lambda: torch.lu_unpack(torch.ones(3, 2), torch.tensor([1, 2])),
               lambda: ptcore.lu_unpack(ptcore.ones(3, 2), ptcore.tensor([1, 2])),
               ["torch.int32 dtype"])
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    lu_t, piv_t = torch.linalg.lu_factor(torch.tensor(a))
    lu_p, piv_p = ptcore.linalg.lu_factor(ptcore.tensor(a))
    bp = ptcore.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    bt = torch.tensor(bp.detach().numpy(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptcore.lu_solve(bp, lu_p, piv_p).sum().backward()
        torch.lu_solve(bt, lu_t, piv_t).sum().backward()
    np.testing.assert_allclose(bp.grad.numpy(), bt.grad.numpy(), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------
# special functions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["int64", "float32", "float64"])
def test_polygamma_mvlgamma(name):
    x = both(np.abs(rand((3, 4), name)) + (1 if name == "int64" else 0.75))
    for n in (0, 1, 2, 4):
        close(*call(lambda L, t: L.polygamma(n, t), x), tol=1e-4 if name != "float64" else 1e-9)
        close(*call(lambda L, t: t.polygamma(n), x), tol=1e-4 if name != "float64" else 1e-9)
    for p in (1, 2, 5):
        close(*call(lambda L, t: L.mvlgamma(t + 3, p), x), tol=1e-4 if name != "float64" else 1e-9)
        close(*call(lambda L, t: (t + 3).mvlgamma(p=p), x),
              tol=1e-4 if name != "float64" else 1e-9)
    if name != "int64":
        p, t = both(to_np(x[1]))
        close(p.polygamma_(2), t.polygamma_(2), tol=1e-4)
        p, t = both(to_np(x[1]) + 3)
        close(p.mvlgamma_(3), t.mvlgamma_(3), tol=1e-4)
    same_error(lambda: torch.polygamma(-1, torch.ones(2)), lambda: ptcore.polygamma(-1, ptcore.ones(2)),
               ["does not support negative n"])
    same_error(lambda: torch.mvlgamma(torch.ones(2), 0), lambda: ptcore.mvlgamma(ptcore.ones(2), 0),
               ["greater than or equal to 1"])


def test_special_grads():
    x = np.abs(rand((5,), "float64")) + 0.5
    for n in (0, 1, 3):
        grads(lambda L, t: L.polygamma(n, t), x, tol=1e-7)
    grads(lambda L, t: L.mvlgamma(t + 2, 3), x)
    grads(lambda L, t: L.igamma(L.full_like(t, 2.5), t), x, tol=1e-7)
    grads(lambda L, t: L.igammac(L.full_like(t, 1.5), t), x, tol=1e-7)
    a = ptcore.ones(3, dtype=ptcore.float64, requires_grad=True)
    r = ptcore.igamma(a, ptcore.ones(3, dtype=ptcore.float64))
    with pytest.raises(NotImplementedError, match="derivative for 'igamma: input'"):
        r.sum().backward()


@pytest.mark.parametrize("fn", ["igamma", "igammac"])
def test_igamma(fn):
    a, x = both(np.abs(rand((3, 4), "float64")) + 0.1), both(np.abs(rand((4,), "float32")))
    close(*call(lambda L, p, q: getattr(L, fn)(p, q), a, x), tol=1e-8)
    close(*call(lambda L, p, q: getattr(p, fn)(q), x, x), tol=1e-5)
    p, t = both(np.abs(rand((4,), "float64")) + 0.3)
    close(getattr(p, fn + "_")(x[0]), getattr(t, fn + "_")(x[1]), tol=1e-8)
    same_error(lambda: getattr(torch, fn)(torch.tensor([1]), torch.tensor([2])),
               lambda: getattr(ptcore, fn)(ptcore.tensor([1]), ptcore.tensor([2])),
               ["not implemented for 'Long'"])
    # 0-d operands give a 0-d result (SciPy's scalar came back 1-d), in place too
    z, w = both(np.array(0.7)), both(np.array(1.5, "float32"))
    close(*call(lambda L, p, q: getattr(L, fn)(p, q), z, w), tol=1e-6)
    close(getattr(z[0].clone(), fn + "_")(w[0]), getattr(z[1].clone(), fn + "_")(w[1]), tol=1e-8)


# ---------------------------------------------------------------------------
# predicates, creation, fills, windows
# ---------------------------------------------------------------------------

def test_predicates_creation():
    for v in ([[0.5]], [0], [True], 3):
        assert ptcore.is_nonzero(ptcore.tensor(v)) == torch.is_nonzero(torch.tensor(v))
        assert ptcore.tensor(v).is_nonzero() == torch.tensor(v).is_nonzero()
    same_error(lambda: torch.is_nonzero(torch.tensor([])),
               lambda: ptcore.is_nonzero(ptcore.tensor([])), ["with no values is ambiguous"])
    same_error(lambda: torch.is_nonzero(torch.tensor([1, 2])),
               lambda: ptcore.is_nonzero(ptcore.tensor([1, 2])), ["more than one value"])
    assert ptcore.is_same_size(ptcore.ones(2, 3), ptcore.ones(2, 3))
    assert not ptcore.ones(2, 3).is_same_size(ptcore.ones(3, 2))
    for dt in ("uint8", "int8", "float32", "bool"):
        assert ptcore.is_signed(ptcore.ones(1, dtype=getattr(ptcore, dt))) == \
            torch.is_signed(torch.ones(1, dtype=getattr(torch, dt)))
    for s, kw in ((3, {}), (True, {}), (2.5, dict(dtype="int64")), (1, dict(dtype="float64"))):
        kp = {k: getattr(ptcore, v) for k, v in kw.items()}
        kt = {k: getattr(torch, v) for k, v in kw.items()}
        close(ptcore.scalar_tensor(s, **kp), torch.scalar_tensor(s, **kt))
    for args, kw in (((1, 4), {}), ((4, 1, -1), {}), ((0, 1, 0.25), {}), ((1, 4), dict(dtype="int64")),
                     ((1, 2.5, 0.5), dict(dtype="float64")), ((-3, 3, 2), dict(dtype="int32"))):
        kp = {k: getattr(ptcore, v) for k, v in kw.items()}
        kt = {k: getattr(torch, v) for k, v in kw.items()}
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            rp = ptcore.range(*args, **kp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rt = torch.range(*args, **kt)
        close(rp, rt)
    same_error(lambda: torch.range(1, 4, 0), lambda: ptcore.range(1, 4, 0), ["step must be nonzero"])
    same_error(lambda: torch.range(1, 4, -1), lambda: ptcore.range(1, 4, -1),
               ["inconsistent with step sign"])


def test_fill_zero():
    p, t = pair((2, 3), "float32", noncontig=True)
    close(ptcore.fill(p, 3), torch.fill(t, 3))
    close(ptcore.fill(p, ptcore.tensor(2.5)), torch.fill(t, torch.tensor(2.5)))
    close(p, t)
    close(ptcore.fill_(p, 7), torch.fill_(t, 7))
    close(ptcore.zero_(p), torch.zero_(t))
    same_error(lambda: torch.fill(t, torch.tensor([3., 4])),
               lambda: ptcore.fill(p, ptcore.tensor([3., 4])), ["0-dimension value tensor"])


@pytest.mark.parametrize("fn", ["hann_window", "hamming_window", "blackman_window",
                                "bartlett_window", "kaiser_window"])
def test_windows(fn):
    for N in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            for dt in ("float32", "float64"):
                rp = getattr(ptcore, fn)(N, periodic, dtype=getattr(ptcore, dt))
                rt = getattr(torch, fn)(N, periodic, dtype=getattr(torch, dt))
                close(rp, rt, tol=1e-6 if dt == "float32" else 1e-12)
    close(getattr(ptcore, fn)(6), getattr(torch, fn)(6), tol=1e-6)
    r = getattr(ptcore, fn)(4, requires_grad=True)
    assert r.requires_grad and r.is_leaf
    if fn == "hamming_window":
        close(ptcore.hamming_window(7, False, 0.6, 0.3, dtype=ptcore.float64),
              torch.hamming_window(7, False, 0.6, 0.3, dtype=torch.float64))
    if fn == "kaiser_window":
        close(ptcore.kaiser_window(7, False, 5.0, dtype=ptcore.float64),
              torch.kaiser_window(7, False, 5.0, dtype=torch.float64))
    same_error(lambda: getattr(torch, fn)(3, dtype=torch.int64),
               lambda: getattr(ptcore, fn)(3, dtype=ptcore.int64), ["expects floating point dtypes"])
    same_error(lambda: getattr(torch, fn)(-1), lambda: getattr(ptcore, fn)(-1),
               ["requires non-negative window_length"])


def test_inplace_aliases():
    names = sorted(n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
                   and hasattr(torch.Tensor, n) and n != "resize_as_sparse_")
    missing = [n for n in names if not hasattr(ptcore, n)]
    assert not missing, missing
    for n in ("abs_", "ceil_", "exp2_", "relu_", "sigmoid_", "trunc_", "square_", "frac_"):
        p, t = pair((2, 3), "float32", noncontig=True)
        close(getattr(ptcore, n)(p), getattr(torch, n)(t))
        close(p, t)
    p, t = pair((2, 3), "float64")
    close(ptcore.clamp_(p, -1, 2), torch.clamp_(t, -1, 2))
    close(ptcore.clamp_min_(p, 0), torch.clamp_min_(t, 0))
    close(ptcore.xlogy_(p, 3.0), torch.xlogy_(t, 3.0))


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float64", "complex128"])
def test_renorm(name):
    x = pair((3, 4, 2), name, 1, noncontig=True)
    for p, dim, mx in ((2, 0, 5.0), (1, 1, 3.0), (3.5, -1, 0.0), (float("inf"), 2, 10.0)):
        close(*call(lambda L, t: t.renorm(p, dim, mx), x), tol=1e-5 if name == "float32" else 1e-10)
    pp, tt = pair((3, 4), name, 2)
    close(pp.renorm_(2, 1, 4.0), tt.renorm_(2, 1, 4.0), tol=1e-5)
    close(pp, tt, tol=1e-5)
    same_error(lambda: torch.ones(2, 3).renorm(-1, 0, 1), lambda: ptcore.ones(2, 3).renorm(-1, 0, 1),
               ["non-positive-norm"])
    same_error(lambda: torch.ones(2, 3).renorm(2, 0, -1), lambda: ptcore.ones(2, 3).renorm(2, 0, -1),
               ["maxnorm to be >= 0"])
    same_error(lambda: torch.ones(3).renorm(2, 0, 1), lambda: ptcore.ones(3).renorm(2, 0, 1),
               ["at least 2 dimensions"])
    same_error(lambda: torch.ones(2, 3, dtype=torch.int64).renorm(2, 0, 1),
               lambda: ptcore.ones(2, 3, dtype=ptcore.int64).renorm(2, 0, 1), ["floating point"])
    if name == "float64":
        grads(lambda L, t: t.renorm(2, 0, 4.0), rand((3, 4), name))


def test_sum_to_size():
    x = pair((3, 2, 4), "float64", 1, noncontig=True)
    for size in ((4,), (1, 4), (3, 1), (2, 1, 1), (1, 1, 1), (2, 3, 4), ()):
        close(*call(lambda L, t: t.sum_to_size(size), x))
        if size:
            close(*call(lambda L, t: t.sum_to_size(*size), x))
    same_error(lambda: torch.ones(2).sum_to_size(), lambda: ptcore.ones(2).sum_to_size(),
               ["missing 1 required positional"])
    close(*call(lambda L, t: t.sum_to_size(ptcore.Size([1, 2, 1]) if L is ptcore
                                           else torch.Size([1, 2, 1])), pair((3, 2, 4), "int32")))
    same_error(lambda: torch.ones(2, 3).sum_to_size(4), lambda: ptcore.ones(2, 3).sum_to_size(4),
               ["is not expandable to size"])
    same_error(lambda: torch.ones(2, 3).sum_to_size(1, 2, 3),
               lambda: ptcore.ones(2, 3).sum_to_size(1, 2, 3), ["is not expandable to size"])
    grads(lambda L, t: t.sum_to_size(3, 1), rand((2, 3, 4), "float64"))


def test_fill_diagonal():
    for shape, wrap in (((3, 3), False), ((7, 3), True), ((7, 3), False), ((3, 7), True),
                        ((4, 4, 4), False), ((5, 4), True)):
        p, t = pair(shape, "float32")
        close(p.fill_diagonal_(2.5, wrap), t.fill_diagonal_(2.5, wrap))
    p, t = pair((4, 6), "int64", noncontig=True)
    close(p.fill_diagonal_(9, True), t.fill_diagonal_(9, True))
    same_error(lambda: torch.ones(3).fill_diagonal_(2), lambda: ptcore.ones(3).fill_diagonal_(2),
               ["dimensions must larger than 1"])
    same_error(lambda: torch.ones(2, 3, 3).fill_diagonal_(2),
               lambda: ptcore.ones(2, 3, 3).fill_diagonal_(2), ["equal length"])
    # gradient through a non-leaf
    a = ptcore.ones(3, 3, dtype=ptcore.float64, requires_grad=True)
    b = torch.ones(3, 3, dtype=torch.float64, requires_grad=True)
    (a * 2).fill_diagonal_(0.).sum().backward()
    (b * 2).fill_diagonal_(0.).sum().backward()
    close(a.grad, b.grad)


@pytest.mark.parametrize("name", ["float32", "complex128"])
def test_adjoint_family(name):
    x = pair((2, 3, 4), name, 1)
    m = pair((3, 4), name, 2)
    close(*call(lambda L, t: t.mH.resolve_conj(), x))
    close(*call(lambda L, t: t.adjoint().resolve_conj(), x))
    close(*call(lambda L, t: L.adjoint(t).resolve_conj(), x))
    close(*call(lambda L, t: t.H.resolve_conj(), m))
    close(*call(lambda L, t: t.H.resolve_conj(), pair((), name)))
    same_error(lambda: torch.ones(3).mH, lambda: ptcore.ones(3).mH, ["only supported on matrices"])
    same_error(lambda: torch.ones(3).adjoint(), lambda: ptcore.ones(3).adjoint(),
               ["only supported on matrices"])
    same_error(lambda: torch.ones(2, 3, 3).H, lambda: ptcore.ones(2, 3, 3).H, ["Got 3-D tensor"])


def test_misc_methods():
    x = ptcore.ones(2, 3, dtype=ptcore.float64, requires_grad=True)
    assert x.output_nr == 0 and (x * 2).output_nr == 0
    m = np.random.default_rng(0).standard_normal((3, 3))
    assert [o.output_nr for o in ptcore.linalg.svd(ptcore.tensor(m, requires_grad=True))] == \
        [o.output_nr for o in torch.linalg.svd(torch.tensor(m, requires_grad=True))]
    assert x.is_inference() is False and x.is_neg() is False
    n = x.detach().new(2, 5)
    assert n.shape == (2, 5) and n.dtype is ptcore.float64
    close(x.detach().new([1, 2]), torch.ones(1, dtype=torch.float64).new([1, 2]))
    assert x.new().shape == (0,) and x.new(ptcore.Size([3])).shape == (3,)
    y = ptcore.ones(2, dtype=ptcore.float64)
    assert x.new(y).data_ptr() == y.data_ptr()
    with pytest.raises(TypeError):
        x.new(y.float())
    with pytest.raises(TypeError):
        x.new(dtype=ptcore.int32)
    for meth, args in (("absolute_", ()), ("sgn_", ()), ("fix_", ()), ("conj_physical_", ()),
                       ("arctan2_", (2.0,))):
        for name in ("float32", "complex128"):
            if name == "complex128" and meth in ("fix_", "arctan2_"):
                continue
            if name == "complex128" and meth == "absolute_":
                same_error(lambda: torch.ones(2, dtype=torch.complex128).absolute_(),
                           lambda: ptcore.ones(2, dtype=ptcore.complex128).absolute_(),
                           ["In-place abs is not supported for complex"])
                continue
            p, t = pair((3, 4), name)
            ap = tuple(ptcore.tensor(v) for v in args)
            at_ = tuple(torch.tensor(v) for v in args)
            close(getattr(p, meth)(*ap), getattr(t, meth)(*at_))
    same_error(lambda: torch.tensor([1, 2]).sgn_().float().sgn_().to(torch.int64).sinc_(),
               lambda: ptcore.tensor([1, 2]).sgn_().float().sgn_().to(ptcore.int64).sinc_(),
               ["can't be cast"])


def test_inplace_view_ops():
    for meth, args in (("squeeze_", ()), ("squeeze_", (0,)), ("unsqueeze_", (1,)),
                       ("t_", ()), ("transpose_", (0, 2)), ("swapaxes_", (1, 2)),
                       ("swapdims_", (0, 1)), ("as_strided_", ((2, 2), (1, 2), 1))):
        shape = (1, 3) if meth == "t_" else (1, 3, 2)
        p, t = pair(shape, "float32")
        rp, rt = getattr(p, meth)(*args), getattr(t, meth)(*args)
        assert rp is p and rt is t
        assert tuple(p.shape) == tuple(t.shape) and tuple(p.stride()) == tuple(t.stride())
        assert p.storage_offset() == t.storage_offset()
        close(p, t)
    p = ptcore.ones(1, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.squeeze_()
    a = ptcore.tensor([[1., 2, 3]], dtype=ptcore.float64, requires_grad=True)
    at = torch.tensor([[1., 2, 3]], dtype=torch.float64, requires_grad=True)
    w = np.array([[1.], [2.], [3.]])
    for L, x in ((ptcore, a), (torch, at)):
        y = x * 2
        y.squeeze_().unsqueeze_(1)
        (y * L.tensor(w)).sum().backward()
    close(a.grad, at.grad)
    assert a.grad.shape == (1, 3)


# ---------------------------------------------------------------------------
# *_copy ops, unsafe splits, legacy norms/solvers, random fills, maps
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [
    ("alias_copy", ()), ("transpose_copy", (0, 1)), ("t_copy", ()), ("diagonal_copy", (1,)),
    ("expand_copy", ((2, 3, 4),)), ("permute_copy", ((1, 0),)), ("select_copy", (1, 2)),
    ("squeeze_copy", ()), ("unsqueeze_copy", (0,)), ("view_copy", ((4, 3),)),
    ("unfold_copy", (1, 2, 1)), ("as_strided_copy", ((2, 2), (1, 2), 1)), ("detach_copy", ()),
    ("slice_copy", (1, 1, None, 2)), ("split_copy", (2,)), ("split_with_sizes_copy", ([1, 2],)),
    ("unbind_copy", ()), ("split_with_sizes", ([1, 2],)), ("unsafe_split", (2,)),
    ("unsafe_chunk", (2,)), ("unsafe_split_with_sizes", ([2, 1],))])
def test_copy_ops(name, args):
    x = pair((3, 4), "float32")
    p, r = call(lambda L, t: getattr(L, name)(t, *args), x)
    close(p, r, tol=0)
    for q in (p if isinstance(p, tuple) else (p,)):
        if name.endswith("_copy"):
            assert q.is_contiguous() and q.data_ptr() != x[0].data_ptr()
    if name.startswith("unsafe") or name == "split_with_sizes":
        close(*call(lambda L, t: getattr(t, name)(*args), x), tol=0)


def test_view_as_real_complex_copy():
    close(*call(lambda L, t: L.view_as_real_copy(t), pair((3,), "complex64")), tol=0)
    close(*call(lambda L, t: L.view_as_complex_copy(t), pair((3, 2), "float32")), tol=0)


def test_legacy_norms_triangular_solve():
    x = pair((3, 4), "float64", 1)
    close(*call(lambda L, t: L.frobenius_norm(t, (0, 1)), x))
    close(*call(lambda L, t: L.frobenius_norm(t, 1, True), x))
    close(*call(lambda L, t: L.nuclear_norm(t), x))
    close(*call(lambda L, t: L.nuclear_norm(t, True), x))
    close(*call(lambda L, t: L.nuclear_norm(pair((2, 3, 4), "float64")[0] if L is ptcore
                                            else pair((2, 3, 4), "float64")[1], (1, 2)), x))
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        ptcore.frobenius_norm(x[0], (0, 1))
    rng = np.random.default_rng(1)
    A = both(np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3) + np.tril(np.ones((3, 3)), -1))
    B = both(rng.standard_normal((2, 3, 2)))
    for kw in ({}, dict(upper=False), dict(transpose=True), dict(unitriangular=True),
               dict(upper=False, transpose=True, unitriangular=True)):
        p, r = call(lambda L, b, a: L.triangular_solve(b, a, **kw), B, A)
        close(p.solution, r.solution)
        close(p.cloned_coefficient, r.cloned_coefficient)
        close(*call(lambda L, b, a: tuple(b.triangular_solve(a, **kw)), B, A))
    same_error(lambda: torch.triangular_solve(torch.ones(3), torch.eye(3)),
               lambda: ptcore.triangular_solve(ptcore.ones(3), ptcore.eye(3)),
               ["at least 2 dimensions"])
    grads(lambda L, b, a: L.triangular_solve(b, a).solution, rng.standard_normal((3, 2)),
          np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3), tol=1e-7)


def test_random_fills_and_maps():
    ptcore.manual_seed(0)
    z = ptcore.zeros(20000, dtype=ptcore.float64)
    assert abs(z.geometric_(0.25).mean().item() - 4.0) < 0.15
    assert builtins_min(z) >= 1 and bool((z == z.round()).all())
    assert abs(z.log_normal_(0.0, 0.5).log().std().item() - 0.5) < 0.02
    assert abs(z.cauchy_(1.0, 2.0).median().item() - 1.0) < 0.1
    with pytest.raises(RuntimeError):
        z.geometric_(1.5)
    p, t = pair((2, 3), "float32")
    close(p.apply_(lambda v: v * 2 + 1), t.apply_(lambda v: v * 2 + 1))
    q = both(np.arange(3, dtype=np.float32))
    close(p.map_(q[0], lambda a, b: a - b), t.map_(q[1], lambda a, b: a - b))
    close(p.map2_(q[0], q[0], lambda a, b, c: a + b * c), t.map2_(q[1], q[1], lambda a, b, c: a + b * c))
    x = ptcore.ones(2, 3)
    assert x.const_data_ptr() == x.data_ptr()
    for attr in ("is_xla", "is_xpu", "is_mps", "is_nested", "is_mkldnn", "is_sparse_csr"):
        assert getattr(x, attr) is getattr(torch.ones(2), attr) is False
    assert ptcore.is_inference(x) is False and ptcore.is_neg(x) is False
    assert x.bernoulli().shape == (2, 3) and x.multinomial(2).shape == (2, 2)
    close(*call(lambda L, t: L.renorm(t, 2, 0, 1.0), pair((3, 4), "float64")))


def builtins_min(t):
    return t.min().item()


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0), (0, 2, 2), (2, 3, 2)])
def test_lu_unpack_empty_and_batched(shape):
    a = np.random.default_rng(2).standard_normal(shape)
    P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(torch.from_numpy(a)))
    p, l, u = ptcore.lu_unpack(*ptcore.linalg.lu_factor(ptcore.from_numpy(a)))
    for x, y in ((p, P), (l, L), (u, U)):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-12)
