"""Matrix products (ptcore._ops.linalg) and ptcore.linalg against PyTorch.

PyTorch is the oracle where installed (tests needing it skip otherwise);
NumPy checks the rest.  Factorisations whose vectors are only defined up to
sign/phase (QR, SVD, eigh, eig) are checked by reconstruction and
orthogonality, their values against PyTorch.
"""
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

import ptcore
from ptcore import linalg as LA

try:
    import torch
except ImportError:          # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

FLOATS = ["float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
LOW = ["float16", "bfloat16"]
TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "complex64": (1e-4, 1e-4),
       "complex128": (1e-10, 1e-10), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2)}


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in INTS:
        lo, hi = (0, 6) if dtype == "uint8" else (-5, 6)
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a


def P(a, dtype=None):
    """NumPy -> ptcore (bfloat16/float16 through float32)."""
    a = np.asarray(a)
    if dtype in ("bfloat16", "float16"):
        return ptcore.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(
            getattr(ptcore, dtype))
    if dtype is not None:
        a = a.astype(dtype)
    return ptcore.from_numpy(np.ascontiguousarray(a))


def T(x):
    """ptcore -> torch (same dtype)."""
    if x.dtype is ptcore.bfloat16:
        return torch.from_numpy(x.float().numpy().copy()).to(torch.bfloat16)
    return torch.from_numpy(np.array(x.numpy(), copy=True))


def N(x):
    """ptcore or torch -> NumPy (low precision as float32)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    if torch is not None and isinstance(x, torch.Tensor):
        if x.dtype in (torch.bfloat16, torch.float16):
            x = x.float()
        return x.detach().resolve_conj().resolve_neg().numpy()
    if x.dtype in (ptcore.bfloat16, ptcore.float16):
        x = x.float()
    return np.array(x.numpy(), copy=True)


def close(a, b, dtype):
    if dtype in INTS or dtype == "bool":
        np.testing.assert_array_equal(N(a), N(b))
    else:
        r, t = TOL[dtype]
        np.testing.assert_allclose(N(a), N(b), rtol=r, atol=t)


def same_error(fn_p, fn_t, exc=Exception):
    """Both raise; same exception class family and the same message."""
    with pytest.raises(exc) as ep:
        fn_p()
    with pytest.raises(exc) as et:
        fn_t()
    mine = str(ep.value).splitlines()[0].replace("ptcore.", "torch.")
    assert mine == str(et.value).splitlines()[0]
    return ep.value


# ---------------------------------------------------------------------------
# matmul: broadcasting rules and dtypes
# ---------------------------------------------------------------------------
SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)), ((2, 0, 3), (3, 4)), ((2, 3), (3, 0)),
    ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((4, 1, 3), (3, 1)), ((1, 1), (1, 1)),
    ((3, 1, 4, 1), (2, 1, 5)), ((0,), (0,)), ((3, 0, 2, 3), (3, 2)),
]


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS + INTS + LOW)
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_matches_torch(sa, sb, dtype):
    a = P(_rand(sa, dtype, 1), dtype)
    b = P(_rand(sb, dtype, 2), dtype)
    r = ptcore.matmul(a, b)
    e = torch.matmul(T(a), T(b))
    assert tuple(r.shape) == tuple(e.shape)
    assert r.dtype is a.dtype
    close(r, e, dtype)
    close(a @ b, e, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64"])
def test_matmul_strided_operands_numpy(dtype):
    rng = np.random.default_rng(3)
    base = _rand((9, 8, 7), dtype, 3)
    a = P(base, dtype)
    ops = [
        (a[0], a[1].T),                       # row-major @ column-major
        (a[0].T, a[2]),                       # column-major @ row-major
        (a[:, ::2, 1], a[:4, :3, 2]),         # no unit stride: copied
        (a[::3, :4, :5].transpose(1, 2), a[1:4, :4, 1:3]),
        (a[0, :, 0], a[1, :, :3]),            # strided vector @ matrix
        (a[0, :5, :6], a[1, 0, :6]),          # matrix @ contiguous vector
        (a[0, :5, :7], a[1, :7, 0]),          # matrix @ strided vector
    ]
    for x, y in ops:
        r = ptcore.matmul(x, y)
        e = np.matmul(x.numpy(), y.numpy())
        np.testing.assert_allclose(r.numpy(), e, rtol=1e-5, atol=1e-5)
    del rng


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int32"])
def test_matmul_expanded_operands(dtype):
    x = P(_rand((3, 4), dtype, 4), dtype)
    y = P(_rand((4, 2), dtype, 5), dtype)
    xe = x.expand(6, 3, 4)
    ye = y.expand(6, 4, 2)
    r = ptcore.matmul(xe, ye)
    e = np.matmul(x.numpy(), y.numpy())
    for i in range(6):
        np.testing.assert_allclose(r[i].numpy(), e, rtol=1e-5, atol=1e-5)
    col = P(_rand((1,), dtype, 6), dtype).expand(4)      # stride-0 vector
    np.testing.assert_allclose(ptcore.mv(x, col).numpy(), x.numpy() @ col.numpy(), rtol=1e-5,
                               atol=1e-5)


def test_batched_small_parallel_matches_serial():
    a = P(_rand((64, 8, 8), "float64", 7))
    b = P(_rand((64, 8, 8), "float64", 8))
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        r1 = ptcore.bmm(a, b).numpy()
        ptcore.set_num_threads(2)
        r2 = ptcore.bmm(a, b).numpy()
    finally:
        ptcore.set_num_threads(old)
    np.testing.assert_allclose(r1, np.matmul(a.numpy(), b.numpy()), rtol=1e-12)
    np.testing.assert_array_equal(r1, r2)


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_matmul_wraps_like_torch(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(9)
    a = rng.integers(info.min // 2, info.max // 2, size=(7, 33)).astype(dtype)
    b = rng.integers(info.min // 2, info.max // 2, size=(33, 5)).astype(dtype)
    r = ptcore.matmul(P(a), P(b))
    e = torch.matmul(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_array_equal(r.numpy(), e.numpy())


def test_large_integer_matmul_parallel():
    a = _rand((70, 90), "int64", 10)
    b = _rand((90, 60), "int64", 11)
    np.testing.assert_array_equal(ptcore.matmul(P(a), P(b)).numpy(), a @ b)


@needs_torch
@pytest.mark.parametrize("fn,args", [
    ("matmul", [(3,), (3,)]), ("matmul", [(2, 3), (3, 2)]), ("matmul", [(2, 3), (3,)]),
    ("matmul", [(2, 2, 3), (2, 3, 2)]), ("mm", [(2, 3), (3, 2)]), ("mv", [(2, 3), (3,)]),
    ("bmm", [(1, 2, 3), (1, 3, 2)]), ("dot", [(3,), (3,)]), ("vdot", [(3,), (3,)]),
])
def test_bool_products_not_implemented(fn, args):
    ops_p = [ptcore.ones(*s, dtype=ptcore.bool) for s in args]
    ops_t = [torch.ones(*s, dtype=torch.bool) for s in args]
    same_error(lambda: getattr(ptcore, fn)(*ops_p), lambda: getattr(torch, fn)(*ops_t),
               NotImplementedError)


@needs_torch
@pytest.mark.parametrize("expr", [
    "matmul(f(2,3), f(3,2,dtype=D))", "matmul(f(3), f(3,dtype=D))",
    "matmul(f(2,3), f(3,dtype=D))", "matmul(f(3), f(3,2,dtype=D))",
    "matmul(f(2,2,3), f(3,2,dtype=D))", "matmul(f(2,2,3), f(2,3,2,dtype=D))",
    "mm(f(2,3), f(3,2,dtype=D))", "bmm(f(2,2,3), f(2,3,2,dtype=D))",
    "mv(f(2,3), f(3,dtype=D))", "dot(f(3), f(3,dtype=D))", "vdot(f(3), f(3,dtype=D))",
    "matmul(S, f(3))", "matmul(f(3), S)", "matmul(f(3), f(4))", "matmul(f(2,3), f(4))",
    "matmul(f(3), f(4,2))", "matmul(f(2,3), f(4,2))", "matmul(f(2,2,3), f(4,2))",
    "matmul(f(2,2,3), f(3,2,4))", "matmul(f(2,2,3), f(4))", "matmul(f(3), f(2,4,2))",
    "matmul(f(5,2,3), f(4,3,2))", "mm(f(2,3), f(4,2))", "mm(f(3), f(3,2))", "mm(f(2,3), f(3))",
    "mm(f(2,2,3), f(3,2))", "bmm(f(2,3), f(3,2))", "bmm(f(2,2,3), f(2,4,2))",
    "bmm(f(2,2,3), f(3,3,2))", "mv(f(2,3), f(4))", "mv(f(3), f(3))", "mv(f(2,3), f(3,1))",
    "dot(f(3), f(4))", "dot(f(3,1), f(3))", "outer(f(3,2), f(3))",
    "addmm(f(2,2), f(2,3), f(3,2,dtype=D))", "addmm(f(2,2,dtype=D), f(2,3), f(3,2))",
    "addmm(f(3,2), f(2,3), f(3,2))", "addmm(f(1,2,2), f(2,3), f(3,2))",
    "addmv(f(2), f(2,3), f(3,dtype=D))", "addmv(f(3), f(2,3), f(3))",
    "baddbmm(f(4,2,2), f(3,2,3), f(3,3,2))", "addbmm(f(2,2), f(3,2,3), f(4,3,2))",
    "tensordot(f(2,3,4), f(4,4,5), dims=([1,2],[0,1]))",
    "tensordot(f(2,3,4), f(4,4,5,dtype=D), dims=1)", "tensordot(f(2,3,4), f(4,4,5), dims=-1)",
    "matrix_power(f(2,3), 2)", "linalg.matrix_power(f(3), 0)", "chain_matmul()",
    "linalg.multi_dot([f(3)])", "linalg.multi_dot([f(3), f(2,4), f(4)])",
    "linalg.multi_dot([f(3,4), f(2,4,4)])", "linalg.multi_dot([f(3,4), f(4,dtype=D)])",
    "chain_matmul(f(2,3), f(3,4), f(4))",
    "addr(f(3,2,dtype=L), f(3,dtype=L), f(2,dtype=L), alpha=0.5)",
    "addr(f(3,2,dtype=B), f(3,dtype=B), f(2,dtype=B), beta=0.5)",
])
def test_product_errors_match_torch(expr):
    def run(mod):
        env = {"f": mod.ones, "D": mod.float64, "L": mod.int64, "B": mod.bool,
               "S": mod.tensor(1.0), "linalg": mod.linalg}
        env.update({k: getattr(mod, k) for k in (
            "matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "addmm", "addmv", "baddbmm",
            "addbmm", "tensordot", "matrix_power", "chain_matmul", "addr")})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(expr, env)
    same_error(lambda: run(ptcore), lambda: run(torch), (RuntimeError, NotImplementedError))


# ---------------------------------------------------------------------------
# the rest of the family
# ---------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dtype", FLOATS + ["int64", "float16", "bfloat16"])
def test_mm_bmm_mv_dot_vdot(dtype):
    a = P(_rand((4, 5), dtype, 1), dtype)
    b = P(_rand((5, 3), dtype, 2), dtype)
    v = P(_rand((5,), dtype, 3), dtype)
    w = P(_rand((5,), dtype, 4), dtype)
    ba = P(_rand((3, 4, 5), dtype, 5), dtype)
    bb = P(_rand((3, 5, 2), dtype, 6), dtype)
    close(ptcore.mm(a, b), torch.mm(T(a), T(b)), dtype)
    close(ptcore.bmm(ba, bb), torch.bmm(T(ba), T(bb)), dtype)
    close(ptcore.mv(a, v), torch.mv(T(a), T(v)), dtype)
    close(ptcore.dot(v, w), torch.dot(T(v), T(w)), dtype)
    close(ptcore.vdot(v, w), torch.vdot(T(v), T(w)), dtype)
    close(a.mm(b), torch.mm(T(a), T(b)), dtype)
    close(v.dot(w), torch.dot(T(v), T(w)), dtype)
    close(ptcore.vdot(v[::2], w[::2]), torch.vdot(T(v)[::2], T(w)[::2]), dtype)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS + ["int32", "bool", "float16"])
def test_outer_ger_kron(dtype):
    v = P(_rand((4,), dtype, 1), dtype)
    w = P(_rand((3,), dtype, 2), dtype)
    close(ptcore.outer(v, w), torch.outer(T(v), T(w)), dtype)
    close(ptcore.ger(v, w), torch.ger(T(v), T(w)), dtype)
    x = P(_rand((2, 3), dtype, 3), dtype)
    y = P(_rand((4, 1, 2), dtype, 4), dtype)
    if dtype != "bool":
        close(ptcore.kron(x, y), torch.kron(T(x), T(y)), dtype)
        close(x.kron(y), torch.kron(T(x), T(y)), dtype)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_outer_kron_inner_keep_the_sign_of_zero(dtype):
    # torch's outer, kron and inner with a 0-d operand are an elementwise mul: -0 * 5 is -0
    # (a k = 1 matrix product gave +0)
    v = P(np.array([-0.0, 2.0, 0.0]), dtype)
    w = P(np.array([3.0, -0.0, -1.0]), dtype)
    s, z = ptcore.tensor(-2.0, dtype=v.dtype), ptcore.tensor(-0.0, dtype=v.dtype)
    pairs = [(ptcore.outer(v, w), torch.outer(T(v), T(w))), (ptcore.kron(v, w), torch.kron(T(v), T(w))),
             (ptcore.inner(v, s), torch.inner(T(v), T(s))), (ptcore.inner(z, w), torch.inner(T(z), T(w)))]
    for ours, ref in pairs:
        ours, ref = ours.numpy(), ref.numpy()
        np.testing.assert_array_equal(ours, ref)
        np.testing.assert_array_equal(np.signbit(ours.real), np.signbit(ref.real))
        np.testing.assert_array_equal(np.signbit(ours.imag), np.signbit(ref.imag))


@needs_torch
def test_outer_kron_promote():
    v = P(np.arange(3.0), "float32")
    w = P(np.arange(2.0), "float64")
    r = ptcore.outer(v, w)
    assert r.dtype is ptcore.float64
    close(r, torch.outer(T(v), T(w)), "float64")
    k = ptcore.kron(P(np.ones((2, 2)), "int32"), P(np.ones((2,)), "float32"))
    assert k.dtype is ptcore.float32
    assert tuple(k.shape) == (2, 4)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64", "float16"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0), (0, -3)])
def test_add_forms(dtype, beta, alpha):
    if dtype == "int64":
        beta, alpha = int(beta * 2), int(alpha)
    inp = P(_rand((4, 3), dtype, 1), dtype)
    m1 = P(_rand((4, 5), dtype, 2), dtype)
    m2 = P(_rand((5, 3), dtype, 3), dtype)
    kw = dict(beta=beta, alpha=alpha)
    close(ptcore.addmm(inp, m1, m2, **kw), torch.addmm(T(inp), T(m1), T(m2), **kw), dtype)
    close(ptcore.addmm(inp[0], m1, m2, **kw), torch.addmm(T(inp)[0], T(m1), T(m2), **kw), dtype)
    vi = P(_rand((4,), dtype, 4), dtype)
    vec = P(_rand((5,), dtype, 5), dtype)
    close(ptcore.addmv(vi, m1, vec, **kw), torch.addmv(T(vi), T(m1), T(vec), **kw), dtype)
    v1 = P(_rand((4,), dtype, 6), dtype)
    v2 = P(_rand((3,), dtype, 7), dtype)
    close(ptcore.addr(inp, v1, v2, **kw), torch.addr(T(inp), T(v1), T(v2), **kw), dtype)
    bi = P(_rand((2, 4, 3), dtype, 8), dtype)
    b1 = P(_rand((2, 4, 5), dtype, 9), dtype)
    b2 = P(_rand((2, 5, 3), dtype, 10), dtype)
    close(ptcore.baddbmm(bi, b1, b2, **kw), torch.baddbmm(T(bi), T(b1), T(b2), **kw), dtype)
    close(ptcore.baddbmm(inp, b1, b2, **kw), torch.baddbmm(T(inp), T(b1), T(b2), **kw), dtype)
    close(ptcore.addbmm(inp, b1, b2, **kw), torch.addbmm(T(inp), T(b1), T(b2), **kw), dtype)
    # in place
    x = inp.clone()
    tx = T(inp)
    x.addmm_(m1, m2, **kw)
    tx.addmm_(T(m1), T(m2), **kw)
    close(x, tx, dtype)
    y = vi.clone()
    ty = T(vi)
    y.addmv_(m1, vec, **kw)
    ty.addmv_(T(m1), T(vec), **kw)
    close(y, ty, dtype)
    z = bi.clone()
    tz = T(bi)
    z.baddbmm_(b1, b2, **kw)
    tz.baddbmm_(T(b1), T(b2), **kw)
    close(z, tz, dtype)


@pytest.mark.parametrize("fn", ["addmm", "addmv", "addr", "baddbmm", "addbmm"])
def test_beta_zero_ignores_nan(fn):
    nan = float("nan")
    if fn == "addmm":
        r = ptcore.addmm(ptcore.full((2, 2), nan), ptcore.ones(2, 3), ptcore.ones(3, 2), beta=0)
    elif fn == "addmv":
        r = ptcore.addmv(ptcore.full((2,), nan), ptcore.ones(2, 3), ptcore.ones(3), beta=0)
    elif fn == "addr":
        r = ptcore.addr(ptcore.full((2, 3), nan), ptcore.ones(2), ptcore.ones(3), beta=0)
    elif fn == "baddbmm":
        r = ptcore.baddbmm(ptcore.full((2, 2, 2), nan), ptcore.ones(2, 2, 3),
                           ptcore.ones(2, 3, 2), beta=0)
    else:
        r = ptcore.addbmm(ptcore.full((2, 2), nan), ptcore.ones(2, 2, 3), ptcore.ones(2, 3, 2),
                          beta=0)
    assert not np.isnan(r.numpy()).any()


def test_inplace_into_transposed_and_aliased_outputs():
    a = P(_rand((4, 4), "float64", 1))
    b = P(_rand((4, 4), "float64", 2))
    c = P(_rand((4, 4), "float64", 3)).T          # column-major self
    e = 0.5 * c.numpy() + 2 * a.numpy() @ b.numpy()
    c.addmm_(a, b, beta=0.5, alpha=2)
    np.testing.assert_allclose(c.numpy(), e, rtol=1e-12)
    d = a.clone()
    e = d.numpy() + d.numpy() @ b.numpy()
    d.addmm_(d, b)                                   # self is an operand
    np.testing.assert_allclose(d.numpy(), e, rtol=1e-12)


def test_out_argument():
    a = P(_rand((3, 4), "float32", 1), "float32")
    b = P(_rand((4, 2), "float32", 2), "float32")
    out = ptcore.empty(0)
    r = ptcore.matmul(a, b, out=out)
    assert r is out and tuple(out.shape) == (3, 2)
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float"):
        ptcore.mm(a, b, out=ptcore.empty(3, 2, dtype=ptcore.float64))


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L: L.matmul(L.ones(2, 3), L.ones(3, 4), out=L.zeros(1)),
    lambda L: L.matmul(L.ones(3), L.ones(3, 4), out=L.zeros(1)),
    lambda L: L.matmul(L.ones(2, 2, 3), L.ones(2, 3, 4), out=L.zeros(1)),
    lambda L: L.matmul(L.ones(3), L.ones(3), out=L.zeros(2)),
    lambda L: L.mm(L.ones(2, 3), L.ones(3, 4), out=L.zeros(1)),
    lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 3, 4), out=L.zeros(1)),
    lambda L: L.mv(L.ones(2, 3), L.ones(3), out=L.zeros(1)),
    lambda L: L.dot(L.ones(3), L.ones(3), out=L.zeros(2)),
    lambda L: L.addmm(L.ones(2, 4), L.ones(2, 3), L.ones(3, 4), out=L.zeros(1)),
    lambda L: L.outer(L.ones(2), L.ones(3), out=L.zeros(1)),
    lambda L: L.matmul(L.ones(2, 3), L.ones(3, 4), out=L.zeros(0)),
    lambda L: L.matmul(L.ones(2, 3), L.ones(3, 4), out=L.zeros(2, 4))])
def test_out_of_another_shape_is_resized_with_torchs_warning(call):
    # torch's resize_output: a non-empty out of the wrong shape warns, an empty one does not
    def run(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = call(L)
        return [(x.category, str(x.message)[:60], x.filename) for x in w], tuple(r.shape), r.sum().item()
    assert run(ptcore) == run(torch)


def test_rmatmul_and_imatmul():
    a = P(_rand((2, 3), "float64", 1))
    b = P(_rand((3, 2), "float64", 2))
    np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy())
    assert a.__rmatmul__(b) is not NotImplemented
    np.testing.assert_allclose(a.__rmatmul__(b).numpy(), b.numpy() @ a.numpy())
    c = a
    c @= b
    assert tuple(c.shape) == (2, 2)
    assert tuple(a.shape) == (2, 3)          # rebinding, not in place (as PyTorch)


# ---------------------------------------------------------------------------
# einsum, tensordot, chains, powers
# ---------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]),
    ("i,i->", [(4,), (4,)]), ("i,j->ij", [(2,), (3,)]), ("i,j", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->bik", [(2, 1, 3), (1, 3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 4)]), ("...ij,...jk->...ik", [(2, 3), (4, 3, 2)]),
    ("...j,j", [(2, 3), (3,)]), ("...", [(3, 3)]), ("i...->...", [(3, 2, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]), ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]), ("i,i->i", [(2,), (1,)]), ("ab,bc,cd->ad",
                                                                [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,bd->ac", [(2, 3), (4, 5), (3, 5)]), ("ij,kl->", [(2, 3), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ABc,cD->ABD", [(2, 3, 4), (4, 2)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]), ("ijj->ij", [(2, 3, 3)]), ("jii->", [(2, 3, 3)]),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum_matches_torch(eq, shapes, dtype):
    ops = [P(_rand(s, dtype, i), dtype) for i, s in enumerate(shapes)]
    try:
        e = torch.einsum(eq, *[T(o) for o in ops])
    except RuntimeError as exc:
        with pytest.raises(RuntimeError, match="expected scalar type"):
            ptcore.einsum(eq, *ops)
        assert "expected scalar type" in str(exc)
        return
    r = ptcore.einsum(eq, *ops)
    assert tuple(r.shape) == tuple(e.shape)
    assert r.dtype._name == str(e.dtype).replace("torch.", "")
    close(r, e, dtype if dtype != "int32" or e.dtype == torch.int32 else "int64")


@needs_torch
def test_einsum_forms_and_errors():
    a = P(_rand((2, 3), "float64", 1))
    b = P(_rand((3, 4), "float64", 2))
    e = torch.einsum("ij,jk->ik", T(a), T(b))
    close(ptcore.einsum("ij,jk->ik", [a, b]), e, "float64")
    close(ptcore.einsum(a, [0, 1], b, [1, 2], [0, 2]), e, "float64")
    close(ptcore.einsum(a, [Ellipsis, 1], b, [1, 2]), torch.einsum(T(a), [..., 1], T(b), [1, 2]),
          "float64")
    f = ptcore.ones
    g = torch.ones
    for eq, ps, ts in [
        ("ij,jk->ik", (f(2, 3), f(4, 4)), (g(2, 3), g(4, 4))),
        ("ij,jk->ik", (f(2, 3),), (g(2, 3),)),
        ("ij,jk->ik", (f(2, 3), f(3, 4, dtype=ptcore.float64)),
         (g(2, 3), g(3, 4, dtype=torch.float64))),
        ("ii->i", (f(2, 3),), (g(2, 3),)), ("ij->iz", (f(2, 3),), (g(2, 3),)),
        ("ij->ii", (f(2, 3),), (g(2, 3),)), ("ijk->ij", (f(2, 3),), (g(2, 3),)),
        ("i,i", (f(2, dtype=ptcore.bool),) * 2, (g(2, dtype=torch.bool),) * 2),
    ]:
        same_error(lambda: ptcore.einsum(eq, *ps), lambda: torch.einsum(eq, *ts),
                   (RuntimeError, NotImplementedError))
    r = ptcore.einsum("i->", P(np.array([True, True, False])))
    assert r.dtype is ptcore.int64 and r.item() == 2


@needs_torch
def test_einsum_repeated_calls_follow_each_calls_strides_and_shapes():
    # einsum keeps a plan per (equation, shapes): a second call with other strides (a
    # transposed or sliced operand) or other shapes must still give torch's result
    x = P(_rand((4, 4), "float64", 3))
    y = P(_rand((4, 6), "float64", 4))
    cases = [("ii->i", [x]), ("ii->i", [x.t()]), ("ii->i", [x[::1, :]]),
             ("ij,jk->ik", [x, y]), ("ij,jk->ik", [x.t(), y]), ("ij,jk->ik", [x, y[:, ::2]]),
             ("ij,jk->ik", [x[:2], y]), ("ij,jk->ik", [x[:2], y[:, :1]]),
             ("iij->ij", [P(_rand((3, 3, 2), "float64", 5)).transpose(0, 1)]),
             ("i,i->", [x[0], x[:, 1]]), ("i,i->", [x[0], x[1]])]
    for _ in range(2):
        for eq, ops in cases:
            close(ptcore.einsum(eq, *ops), torch.einsum(eq, *[T(o.contiguous()) for o in ops]),
                  "float64")
    # a plan never leaks between dtypes: the checks of the operands run on every call
    a, b = ptcore.ones(2, 3), ptcore.ones(3, 4)
    ptcore.einsum("ij,jk->ik", a, b)
    with pytest.raises(RuntimeError, match="expected scalar type"):
        ptcore.einsum("ij,jk->ik", a, b.double())


@needs_torch
@pytest.mark.parametrize("dims", [2, 0, 1, ([1, 2], [0, 1]), ([0], [2]), ([2, 0], [0, 2])])
def test_tensordot(dims):
    a = P(_rand((4, 3, 4), "float64", 1))
    b = P(_rand((3, 4, 4), "float64", 2)) if dims != 1 else P(_rand((4, 2), "float64", 2))
    if dims in (2,):
        b = P(_rand((3, 4, 5), "float64", 2))
    try:
        e = torch.tensordot(T(a), T(b), dims=dims)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ptcore.tensordot(a, b, dims=dims)
        return
    close(ptcore.tensordot(a, b, dims=dims), e, "float64")


@needs_torch
def test_tensordot_broadcast_size_one():
    a = P(_rand((2, 1, 4), "float64", 1))
    b = P(_rand((3, 4, 5), "float64", 2))
    close(ptcore.tensordot(a, b, dims=([1, 2], [0, 1])),
          torch.tensordot(T(a), T(b), dims=([1, 2], [0, 1])), "float64")


@needs_torch
@pytest.mark.parametrize("shapes", [[(3,), (3, 4), (4,)], [(2, 3), (3, 4)],
                                    [(5, 2), (2, 6), (6, 3), (3, 7)], [(3,), (3,)],
                                    [(10, 2), (2, 10), (10, 2), (2, 1)]])
def test_multi_dot_and_chain(shapes):
    ops = [P(_rand(s, "float64", i)) for i, s in enumerate(shapes)]
    e = torch.linalg.multi_dot([T(o) for o in ops])
    r = ptcore.linalg.multi_dot(ops)
    assert tuple(r.shape) == tuple(e.shape)
    close(r, e, "float64")
    if all(len(s) == 2 for s in shapes):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(ptcore.chain_matmul(*ops), torch.chain_matmul(*[T(o) for o in ops]), "float64")


@needs_torch
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
@pytest.mark.parametrize("dtype", ["float64", "complex128", "int64"])
def test_matrix_power(n, dtype):
    if dtype == "int64" and n < 0:
        return
    a = P(_rand((2, 3, 3), dtype, 5), dtype)
    if dtype != "int64":
        a = P(_rand((2, 3, 3), dtype, 5) + 3 * np.eye(3), dtype)
    close(ptcore.linalg.matrix_power(a, n), torch.linalg.matrix_power(T(a), n), dtype)
    close(ptcore.matrix_power(a[0], n), torch.matrix_power(T(a)[0], n), dtype)
    close(a.matrix_power(n), torch.matrix_power(T(a), n), dtype)


# ---------------------------------------------------------------------------
# hypothesis: random broadcasting shapes
# ---------------------------------------------------------------------------
@st.composite
def _mm_shapes(draw):
    m, k, n = (draw(st.integers(0, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=3))
    ba = [draw(st.sampled_from([b, 1])) for b in batch]
    bb = [draw(st.sampled_from([b, 1])) for b in batch]
    ba = ba[draw(st.integers(0, len(ba))):]
    bb = bb[draw(st.integers(0, len(bb))):]
    sa = tuple(ba) + ((m, k) if draw(st.booleans()) else (k,))
    sb = tuple(bb) + ((k, n) if draw(st.booleans()) else (k,))
    if len(sa) == 1 and len(sb) > 2 or len(sb) == 1 and len(sa) > 2:
        pass
    return sa, sb, draw(st.booleans()), draw(st.booleans())


@given(_mm_shapes())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_matmul_broadcasting_hypothesis(case):
    sa, sb, ta, tb = case
    a = _rand(sa, "float64", 1)
    b = _rand(sb, "float64", 2)
    pa, pb = P(a), P(b)
    if ta and len(sa) >= 2:          # same values, column-major storage
        pa = P(np.swapaxes(a, -1, -2)).transpose(-1, -2)
    if tb and len(sb) >= 2:
        pb = P(np.swapaxes(b, -1, -2)).transpose(-1, -2)
    try:
        e = np.matmul(a, b)
    except ValueError:
        with pytest.raises(RuntimeError):
            ptcore.matmul(pa, pb)
        return
    r = ptcore.matmul(pa, pb)
    assert tuple(r.shape) == e.shape
    np.testing.assert_allclose(r.numpy(), e, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# ptcore.linalg
# ---------------------------------------------------------------------------
def _wellcond(shape, dtype, seed=0):
    a = _rand(shape, dtype, seed)
    n = shape[-1]
    return a + n * np.eye(n)


def _hpd(shape, dtype, seed=0):
    a = _rand(shape, dtype, seed)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2), (0, 3, 3), (1, 1), (0, 0)])
def test_inv_det_slogdet(shape, dtype):
    a = P(_wellcond(shape, dtype, 1), dtype)
    ta = T(a)
    close(LA.inv(a), torch.linalg.inv(ta), dtype)
    close(LA.det(a), torch.linalg.det(ta), dtype)
    s, la = LA.slogdet(a)
    es, ela = torch.linalg.slogdet(ta)
    close(s, es, dtype)
    close(la, ela, dtype.replace("complex64", "float32").replace("complex128", "float64"))
    close(ptcore.logdet(a), torch.logdet(ta), dtype)
    close(a.inverse(), torch.inverse(ta), dtype)
    close(a.det(), ta.det(), dtype)
    res, info = LA.inv_ex(a)
    assert info.dtype is ptcore.int32 and tuple(info.shape) == shape[:-2]


@needs_torch
def test_det_of_singular_and_negative():
    sing = P(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert LA.det(sing).item() == 0
    s, la = LA.slogdet(sing)
    assert s.item() == 0 and la.item() == -np.inf
    neg = P(-np.eye(3))
    close(LA.det(neg), torch.linalg.det(T(neg)), "float64")
    assert np.isnan(ptcore.logdet(neg).item())
    close(ptcore.logdet(P(np.array([[1j, 0], [0, 2]]))),
          torch.logdet(torch.tensor([[1j, 0], [0, 2]], dtype=torch.complex128)), "complex128")


@needs_torch
@pytest.mark.parametrize("expr", [
    "L.inv(sing)", "L.inv(stack)", "L.inv(f(2,3))", "L.inv(f(3))", "L.inv(f(2,2,dtype=I64))",
    "L.inv(f(2,2,dtype=F16))", "L.solve(sing, f(2))", "L.solve(stack, f(2,2))",
    "L.solve(f(2,3), f(2))", "L.solve(eye, f(3))", "L.solve(eye, f(2,dtype=F64))",
    "L.solve(eye.expand(3,2,2), f(4,2,1))", "L.solve(eye, f(2,5), left=False)",
    "L.solve(eye, f(2), left=False)",
    "L.det(f(2,3))", "L.det(f(2,2,dtype=I32))", "L.cholesky(sing)", "L.cholesky(stack)",
    "L.cholesky(f(2,3))", "L.qr(f(2,3), mode='x')", "L.qr(f(3), mode='complete')",
    "L.eigh(f(2,3))", "L.eigh(f(2,2), UPLO='X')", "L.svd(nan)", "L.svd(f(3,3,dtype=I64))",
    "L.lstsq(f(4,3), f(3,2))", "L.lstsq(f(2,4,3), f(4,2))", "L.lstsq(f(4,3), f(4,2), driver='x')",
    "L.lstsq(f(4,3), f(4,2,dtype=F64))", "L.lstsq(f(4,3), f(2,4,1))", "L.lstsq(f(4,3), f(3))",
    "L.lstsq(f(2,6,3), f(6,1))", "L.lstsq(f(2,4,3), f(5,2,4))",
    "L.lstsq(f(4,2,dtype=I64), f(4,2,dtype=I64))", "L.lstsq(f(4), f(4))",
    "L.pinv(f(4,3), hermitian=True)", "L.norm(f(4,3,5), ord=2)", "L.norm(f(4), ord='fro')",
    "L.norm(f(4,3), ord=3)", "L.norm(f(4,dtype=I64))", "L.vector_norm(f(4), dtype=I64)",
    "L.vector_norm(z(0), ord=float('inf'))", "L.vector_norm(z(0), ord=-1)",
    "L.vector_norm(z(2,0), ord=float('inf'), dim=1)", "L.matrix_norm(f(4))",
    "L.norm(f(2,3,4), ord='nuc', dim=1)", "L.norm(f(2,3,4), dim=(0,1,2))",
    "L.vector_norm(f(2), dtype=C64)", "L.cross(f(4,3), f(3))", "L.cross(f(4), f(4))",
    "L.cross(f(3,2), f(3,2))", "L.cross(f(3,dtype=I64), f(3))", "L.cross(f(2,3), f(3,3))",
    "L.eig(nan)", "L.matrix_power(f(3,3,dtype=I64), -1)", "L.matrix_power(f(3,3), -1)",
])
def test_linalg_errors_match_torch(expr):
    def run(mod):
        env = {"L": mod.linalg, "f": mod.ones, "z": mod.zeros, "I64": mod.int64,
               "I32": mod.int32, "F16": mod.float16, "F64": mod.float64, "C64": mod.complex64,
               "sing": mod.tensor([[1.0, 2.0], [2.0, 4.0]]),
               "nan": mod.tensor([[float("nan"), 1.0], [1.0, 1.0]]),
               "eye": mod.eye(2)}
        env["stack"] = mod.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
        return eval(expr, env)
    err = same_error(lambda: run(ptcore), lambda: run(torch),
                     (RuntimeError, NotImplementedError, TypeError, IndexError))
    if "sing" in expr or "stack" in expr or "nan" in expr and "svd" in expr:
        assert isinstance(err, LA.LinAlgError)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_solve(dtype):
    a = P(_wellcond((3, 4, 4), dtype, 1), dtype)
    for bshape in [(4,), (3, 4), (4, 2), (3, 4, 2), (2, 1, 4, 3)]:
        b = P(_rand(bshape, dtype, 2), dtype)
        try:
            e = torch.linalg.solve(T(a), T(b))
        except RuntimeError:
            with pytest.raises(RuntimeError):
                LA.solve(a, b)
            continue
        r = LA.solve(a, b)
        assert tuple(r.shape) == tuple(e.shape)
        close(r, e, dtype)
    b = P(_rand((5, 4), dtype, 3), dtype)
    close(LA.solve(a[0], b, left=False), torch.linalg.solve(T(a)[0], T(b), left=False), dtype)
    x, info = LA.solve_ex(a, b[:4])
    assert tuple(info.shape) == (3,)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper):
    a = P(_hpd((2, 4, 4), dtype, 1), dtype)
    close(LA.cholesky(a, upper=upper), torch.linalg.cholesky(T(a), upper=upper), dtype)
    L, info = LA.cholesky_ex(a)
    assert (info.numpy() == 0).all()
    close(ptcore.cholesky(a[0]), torch.cholesky(T(a)[0]), dtype)
    close(a[0].cholesky(), T(a)[0].cholesky(), dtype)
    bad = P(np.stack([np.eye(3), -np.eye(3)]), dtype)
    _, info = LA.cholesky_ex(bad)
    assert info.tolist() == [0, 1]


def _check_orth(q, dtype):
    qn = N(q)
    k = qn.shape[-1]
    eye = np.broadcast_to(np.eye(k), qn.shape[:-2] + (k, k))
    r, t = TOL[dtype]
    np.testing.assert_allclose(np.conj(np.swapaxes(qn, -1, -2)) @ qn, eye, rtol=r * 10,
                               atol=t * 10)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3), (3, 0), (2, 0, 2, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, dtype, mode):
    a = P(_rand(shape, dtype, 1), dtype)
    Q, R = LA.qr(a, mode=mode)
    eQ, eR = torch.linalg.qr(T(a), mode=mode)
    assert tuple(Q.shape) == tuple(eQ.shape) and tuple(R.shape) == tuple(eR.shape)
    rn = N(R)
    assert np.allclose(np.tril(rn, -1), 0)
    close(np.abs(N(R)), np.abs(N(eR)), dtype)        # R unique up to row phases
    if mode != "r":
        _check_orth(Q, dtype)
        close(np.matmul(N(Q), rn), N(a), dtype)
    if mode == "reduced" and len(shape) == 2:
        q2, r2 = ptcore.qr(a)
        close(np.matmul(N(q2), N(r2)), N(a), dtype)
        q3, _ = ptcore.qr(a, some=False)
        assert q3.shape[-1] == shape[0]


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3), (2, 3, 0), (1, 1)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, dtype, full):
    a = P(_rand(shape, dtype, 1), dtype)
    U, S, Vh = LA.svd(a, full_matrices=full)
    eU, eS, eVh = torch.linalg.svd(T(a), full_matrices=full)
    assert tuple(U.shape) == tuple(eU.shape) and tuple(Vh.shape) == tuple(eVh.shape)
    rdt = "float32" if dtype in ("float32", "complex64") else "float64"
    assert S.dtype._name == rdt
    close(S, eS, rdt)
    close(LA.svdvals(a), torch.linalg.svdvals(T(a)), rdt)
    if min(shape[-2:]) > 0:
        k = min(shape[-2:])
        un, vhn = N(U)[..., :k], N(Vh)[..., :k, :]
        close((un * N(S)[..., None, :]) @ vhn, N(a), dtype)
        _check_orth(U, dtype)
        _check_orth(np.conj(np.swapaxes(N(Vh), -1, -2)), dtype)
    if len(shape) == 2 and min(shape) > 0:
        u2, s2, v2 = ptcore.svd(a)
        close((N(u2) * N(s2)) @ np.conj(N(v2).T), N(a), dtype)
        u3, s3, v3 = a.svd(some=False)
        assert u3.shape[-1] == shape[0] and v3.shape[-1] == shape[1]


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    h = _hpd((3, 5, 5), dtype, 1)
    junk = np.triu(_rand((5, 5), dtype, 9), 1) if uplo == "L" else np.tril(_rand((5, 5), dtype, 9),
                                                                           -1)
    a = P(h + 0 * junk, dtype)
    W, V = LA.eigh(a, UPLO=uplo)
    eW, _ = torch.linalg.eigh(T(a), UPLO=uplo)
    rdt = "float32" if dtype in ("float32", "complex64") else "float64"
    close(W, eW, rdt)
    close(LA.eigvalsh(a, UPLO=uplo), torch.linalg.eigvalsh(T(a), UPLO=uplo), rdt)
    _check_orth(V, dtype)
    vn = N(V)
    close((vn * N(W)[..., None, :]) @ np.conj(np.swapaxes(vn, -1, -2)), N(a), dtype)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_eig(dtype):
    a = P(_rand((2, 4, 4), dtype, 3), dtype)
    W, V = LA.eig(a)
    eW = torch.linalg.eigvals(T(a))
    cdt = "complex64" if dtype in ("float32", "complex64") else "complex128"
    assert W.dtype._name == cdt and V.dtype._name == cdt
    key = lambda w: np.sort_complex(np.round(w, 4))
    for i in range(2):
        np.testing.assert_allclose(key(N(W)[i]), key(N(eW)[i]), rtol=1e-3, atol=1e-3)
    an = N(a).astype(cdt)
    close(an @ N(V), N(V) * N(W)[..., None, :], cdt)
    close(np.sort_complex(N(LA.eigvals(a))[0]), np.sort_complex(N(W)[0]), cdt)
    rot = P(np.array([[0.0, -1.0], [1.0, 0.0]]))
    np.testing.assert_allclose(np.sort_complex(N(LA.eigvals(rot))), [-1j, 1j], atol=1e-12)


@needs_torch
@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels", None])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb", [((6, 3), (6, 2)), ((3, 5), (3, 2)), ((2, 6, 3), (2, 6, 4)),
                                   ((6, 3), (6,)), ((2, 6, 3), (6, 1)), ((4, 4), (4, 3)),
                                   ((2, 6, 3), (2, 6)), ((1, 6, 3), (3, 6, 2))])
def test_lstsq(sa, sb, dtype, driver):
    if driver == "gels" and sa[-2] < sa[-1]:
        pass
    a = P(_rand(sa, dtype, 1), dtype)
    b = P(_rand(sb, dtype, 2), dtype)
    try:
        e = torch.linalg.lstsq(T(a), T(b), driver=driver)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as ep:
            LA.lstsq(a, b, driver=driver)
        assert str(ep.value) == str(exc).splitlines()[0]
        return
    r = LA.lstsq(a, b, driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        x, y = getattr(r, name), getattr(e, name)
        assert tuple(x.shape) == tuple(y.shape), name
        assert x.dtype._name == str(y.dtype).replace("torch.", ""), name
        if name == "solution":
            close(x, y, dtype)
        elif name != "rank":
            close(x, y, "float32" if dtype in ("float32", "complex64") else "float64")
        else:
            np.testing.assert_array_equal(N(x), N(y))


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_pinv_matrix_rank(dtype):
    a = _rand((2, 5, 3), dtype, 1)
    a[1, :, 2] = a[1, :, 0]            # rank deficient
    pa = P(a, dtype)
    close(LA.pinv(pa), torch.linalg.pinv(T(pa)), dtype)
    close(ptcore.pinverse(pa[0]), torch.pinverse(T(pa)[0]), dtype)
    np.testing.assert_array_equal(N(LA.matrix_rank(pa)), N(torch.linalg.matrix_rank(T(pa))))
    np.testing.assert_array_equal(N(LA.matrix_rank(pa, atol=1.0, rtol=0.0)),
                                  N(torch.linalg.matrix_rank(T(pa), atol=1.0, rtol=0.0)))
    h = P(_hpd((4, 4), dtype, 2), dtype)
    close(LA.pinv(h, hermitian=True), torch.linalg.pinv(T(h), hermitian=True), dtype)
    assert LA.matrix_rank(h, hermitian=True).item() == 4


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS + ["float16", "bfloat16"])
@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, -1, -1.5, float("inf"), float("-inf")])
def test_vector_norm(dtype, ord):
    x = P(_rand((3, 4, 5), dtype, 1), dtype)
    for dim, keep in [(None, False), (1, False), ((0, 2), True), (-1, True)]:
        r = LA.vector_norm(x, ord, dim, keep)
        e = torch.linalg.vector_norm(T(x), ord, dim, keep)
        assert tuple(r.shape) == tuple(e.shape) and r.dtype._name == str(e.dtype)[6:]
        close(r, e, dtype if dtype in LOW else
              ("float32" if dtype in ("float32", "complex64") else "float64"))
    close(LA.vector_norm(x, dtype=ptcore.float64 if not x.dtype.is_complex else
                         ptcore.complex128),
          torch.linalg.vector_norm(T(x), dtype=torch.float64 if not x.dtype.is_complex else
                                   torch.complex128), "float64")


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")])
def test_matrix_norm(dtype, ord):
    x = P(_rand((3, 4, 5), dtype, 1), dtype)
    rdt = "float32" if dtype in ("float32", "complex64") else "float64"
    for dim, keep in [((-2, -1), False), ((0, 2), True), ((2, 0), False)]:
        r = LA.matrix_norm(x, ord, dim, keep)
        e = torch.linalg.matrix_norm(T(x), ord, dim, keep)
        assert tuple(r.shape) == tuple(e.shape)
        close(r, e, rdt)
    close(LA.norm(x[0], ord), torch.linalg.norm(T(x)[0], ord), rdt)
    close(LA.norm(x), torch.linalg.norm(T(x)), rdt)
    close(LA.norm(x, dim=(0, 2)), torch.linalg.norm(T(x), dim=(0, 2)), rdt)
    close(LA.norm(x, 3, dim=1), torch.linalg.norm(T(x), 3, dim=1), rdt)
    z = ptcore.zeros(0, 3, dtype=x.dtype)
    for zz in (z, z.T):
        try:
            e = torch.linalg.matrix_norm(T(zz), ord)
        except IndexError as exc:
            with pytest.raises(IndexError, match="amin"):
                LA.matrix_norm(zz, ord)
            continue
        close(LA.matrix_norm(zz, ord), e, rdt)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64"])
def test_cross(dtype):
    a = P(_rand((4, 3), dtype, 1), dtype)
    b = P(_rand((4, 3), dtype, 2), dtype)
    close(LA.cross(a, b), torch.linalg.cross(T(a), T(b)), dtype)
    close(LA.cross(a.T, b.T, dim=0), torch.linalg.cross(T(a).T, T(b).T, dim=0), dtype)
    close(LA.cross(a, b[:1]), torch.linalg.cross(T(a), T(b)[:1]), dtype)


def test_lu_factor_reconstructs():
    a = _rand((2, 4, 4), "float64", 1)
    LU, piv = LA.lu_factor(P(a))
    lu = LU.numpy()
    for i in range(2):
        L = np.tril(lu[i], -1) + np.eye(4)
        U = np.triu(lu[i])
        perm = np.arange(4)
        for j, p in enumerate(piv.numpy()[i] - 1):
            perm[[j, p]] = perm[[p, j]]
        np.testing.assert_allclose((L @ U), a[i][perm], rtol=1e-12, atol=1e-12)


def test_lstsq_gels_rank_deficient_raises():
    # exact rank deficiency is detected by LAPACK's gels (info > 0)
    a = P(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(LA.LinAlgError, match="does not have full rank"):
        LA.lstsq(a, P(np.ones((3, 1))), driver="gels")


def test_linalg_error_type():
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2"):
        LA.inv(P(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])))


# ---------------------------------------------------------------------------
# import cost and threads
# ---------------------------------------------------------------------------
def test_import_does_not_load_blas(tmp_path):
    code = ("import sys, ptcore; "
            "print('scipy.linalg' in sys.modules, 'ptcore._ops.kernels._blas' in sys.modules); "
            "ptcore.matmul(ptcore.ones(2, 2), ptcore.ones(2, 2)); "
            "print('ptcore._ops.kernels._blas' in sys.modules)")
    # the child runs outside the checkout (a source tree on sys.path[0] would shadow the
    # built package) with the directory of the ptcore imported here first on its path
    import os
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env=env).stdout.split()
    assert out == ["False", "False", "True"]


def test_blas_pool_stays_single_threaded():
    # ptcore threads its GEMM over fixed tiles itself (thread-count independent
    # results, issue 15): the BLAS pool stays at one thread whatever the setting
    import ctypes
    from ptcore._ops import linalg as _linalg_ops
    ptcore.matmul(ptcore.ones(2, 2), ptcore.ones(2, 2))
    setter = _linalg_ops._BLAS_SETTER[0]
    assert setter is not None
    getter = None
    import glob
    import os
    import scipy
    for path in glob.glob(os.path.join(os.path.dirname(os.path.dirname(scipy.__file__)),
                                       "scipy.libs", "*openblas*.so*")):
        lib = ctypes.CDLL(path)
        getter = getattr(lib, "scipy_openblas_get_num_threads", None) or \
            getattr(lib, "openblas_get_num_threads", None)
        if getter is not None:
            break
    if getter is None:
        pytest.skip("SciPy's BLAS is not a bundled OpenBLAS")
    old = ptcore.get_num_threads()
    try:
        _linalg_ops._set_blas_threads(1)
        assert getter() == 1
        _linalg_ops._set_blas_threads(2)
        assert getter() == 1
        ptcore.set_num_threads(4)
        assert getter() == 1
    finally:
        _linalg_ops._set_blas_threads(old)


def test_tensor_methods_present():
    for name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmm_",
                 "addmv", "addmv_", "baddbmm", "baddbmm_", "addbmm", "addr", "kron",
                 "__matmul__", "__rmatmul__", "inverse", "det", "logdet", "slogdet",
                 "cholesky", "svd", "qr", "pinverse", "matrix_power"):
        assert hasattr(ptcore.Tensor, name), name
    if torch is not None:
        for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "svd", "qr", "pinverse",
                     "matrix_power", "chain_matmul", "kron", "tensordot", "einsum"):
            assert hasattr(torch, name) and hasattr(ptcore, name), name


def test_cholesky_solve_gradient_through_broadcast_cholesky_factor():
    # the factor from linalg.cholesky, broadcast over B's batch dims: the
    # gradients for L and for A equal torch's (they were off when L was a view)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3))
    spd = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2, 3, 3))

    def run(lib):
        s = lib.tensor(spd, requires_grad=True)
        L = lib.linalg.cholesky(s)
        L.retain_grad()
        lib.cholesky_solve(lib.tensor(b), L).diagonal(dim1=-2, dim2=-1).sum().backward()
        return L.grad.detach().numpy(), s.grad.detach().numpy()
    for p, t in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(p, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_read_only_the_factors_triangle(upper):
    # torch's potrs/potri ignore the other triangle of the factor, whatever it holds
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    f = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)     # neither triangle is zero
    b = rng.standard_normal((2, 3, 2))
    np.testing.assert_allclose(ptcore.cholesky_inverse(ptcore.tensor(f), upper=upper).numpy(),
                               torch.cholesky_inverse(torch.tensor(f), upper=upper).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(
        ptcore.cholesky_solve(ptcore.tensor(b), ptcore.tensor(f), upper=upper).numpy(),
        torch.cholesky_solve(torch.tensor(b), torch.tensor(f), upper=upper).numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_cholesky_nan_pivot_is_reported_as_torch(dtype):
    """Reference LAPACK (torch's) stops at a NaN pivot: info > 0 and
    cholesky raises LinAlgError (an optimised potrf returned info 0)."""
    torch = pytest.importorskip("torch")
    nan = float("nan")
    for vals in ([[nan, 0.0], [0.0, 1.0]], [[4.0, 0.0], [nan, 1.0]], [[4.0, 1.0], [1.0, 3.0]]):
        want = torch.linalg.cholesky_ex(torch.tensor(vals, dtype=getattr(torch, dtype))).info
        got = ptcore.linalg.cholesky_ex(ptcore.tensor(vals, dtype=getattr(ptcore, dtype))).info
        assert int(got) == int(want)
    with pytest.raises(ptcore.linalg.LinAlgError, match="leading minor of order 1"):
        ptcore.linalg.cholesky(ptcore.tensor([[nan, 0.0], [0.0, 1.0]], dtype=getattr(ptcore, dtype)))


def test_ex_functions_name_themselves_in_check_errors_messages():
    with pytest.raises(ptcore.linalg.LinAlgError, match=r"^linalg\.inv_ex: "):
        ptcore.linalg.inv_ex(ptcore.zeros(2, 2), check_errors=True)
    with pytest.raises(ptcore.linalg.LinAlgError, match=r"^linalg\.cholesky_ex: "):
        ptcore.linalg.cholesky_ex(-ptcore.eye(2), check_errors=True)
    with pytest.raises(ptcore.linalg.LinAlgError, match=r"^linalg\.inv: "):
        ptcore.linalg.inv(ptcore.zeros(2, 2))


# torch's CPU addr is an elementwise kernel: fma(alpha * vec1[i], vec2[j], beta * self) in its
# SIMD body, fma(beta, self, alpha * vec1[i] * vec2[j]) in its scalar loop (row tails and
# layouts that do not vectorize), per-op rounding for float16/bfloat16, wrapping integers
def _addr_bits(t):
    name = str(t.dtype).split(".")[1]
    if not t.dtype.is_floating_point:
        return t.numpy()
    v = t.contiguous().view({"float16": _lib(t).int16,
                             "bfloat16": _lib(t).int16, "float32": _lib(t).int32,
                             "float64": _lib(t).int64}[name]).numpy().astype(np.int64)
    width = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[name]
    exp_mask = {"float16": 0x7C00, "bfloat16": 0x7F80, "float32": 0x7F800000,
                "float64": 0x7FF0000000000000}[name]
    mag = v & ((1 << (width - 1)) - 1)
    return np.where(mag > exp_mask, -1, v)     # any NaN (torch's bfloat16 NaN bits vary)


def _lib(t):
    return ptcore if isinstance(t, ptcore.Tensor) else torch


def _addr_data(shape, dt, rng):
    a = rng.standard_normal(shape)
    flat = a.reshape(-1)
    if flat.size >= 8:
        flat[rng.integers(0, flat.size, 4)] = [np.nan, np.inf, -0.0, 0.0]
    if dt in ("int64", "int8", "uint8", "bool"):
        a = np.nan_to_num(a, nan=0.0, posinf=3.0) * 50
    return a


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "int8",
                                "uint8", "bool"])
@pytest.mark.parametrize("n,m", [(7, 37), (16, 64), (20, 9), (5, 3), (33, 1), (1, 45)])
def test_addr_bits_match_torch(dt, n, m):
    rng = np.random.default_rng(n * 100 + m)
    integral = dt in ("int64", "int8", "uint8", "bool")
    scalars = [(True, True), (False, True), (True, False)] if dt == "bool" else \
        [(1, 3), (0, 2), (-2, 1)] if integral else [(0.7, 1.3), (1, 1), (0, 1.3), (-0.3, 2.1), (1e-50, 1)]
    for layout in ("full", "row", "col", "scalar", "transposed", "strided"):
        s = _addr_data({"full": (n, m), "row": (m,), "col": (n, 1), "scalar": (),
                        "transposed": (m, n), "strided": (n, m)}[layout], dt, rng)
        a, b = _addr_data((2 * n,), dt, rng), _addr_data((2 * m,), dt, rng)
        for beta, alpha in scalars:
            got = []
            for L in (torch, ptcore):
                S, A, B = (L.from_numpy(np.ascontiguousarray(x)).to(getattr(L, dt)) for x in (s, a, b))
                S = S.t() if layout == "transposed" else S
                A, B = (A[::2], B[::2]) if layout == "strided" else (A[:n], B[:m])
                r = L.addr(S, A, B, beta=beta, alpha=alpha)
                r2 = S.expand(n, m).clone()
                r2.addr_(A, B, beta=beta, alpha=alpha)
                o = L.empty(m, n, dtype=r.dtype).t()
                L.addr(S, A, B, beta=beta, alpha=alpha, out=o)
                got.append([_addr_bits(x) for x in (r, r2, o)])
            for want, have, what in zip(*got, ("addr", "addr_", "out=")):
                np.testing.assert_array_equal(have, want, err_msg=f"{what} {layout} {beta} {alpha}")


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n,m,layout", [(183, 183, "full"), (183, 183, "transposed"),
                                        (1, 40001, "full"), (250, 131, "row")])
def test_addr_bits_match_torch_parallel_ranges(dt, n, m, layout):
    # above torch's 32768-element grain its threads take ranges that can start mid-row
    rng = np.random.default_rng(7)
    s = rng.standard_normal({"full": (n, m), "row": (m,), "transposed": (m, n)}[layout])
    a, b = rng.standard_normal(n), rng.standard_normal(m)
    threads = ptcore.get_num_threads(), torch.get_num_threads()
    try:
        for k in sorted({1, 2, 3, threads[0]}):
            got = []
            ptcore.set_num_threads(k)
            torch.set_num_threads(k)
            for L in (torch, ptcore):
                S, A, B = (L.from_numpy(x).to(getattr(L, dt)) for x in (s, a, b))
                S = S.t() if layout == "transposed" else S
                got.append(_addr_bits(L.addr(S, A, B, beta=0.7, alpha=1.3)))
            np.testing.assert_array_equal(got[1], got[0], err_msg=f"{k} threads")
    finally:
        ptcore.set_num_threads(threads[0])
        torch.set_num_threads(threads[1])


@needs_torch
def test_addr_grad_after_elementwise_kernel():
    rng = np.random.default_rng(1)
    x, a, b = rng.standard_normal((3, 37)), rng.standard_normal(3), rng.standard_normal(37)
    grads = []
    for L in (torch, ptcore):
        ts = [L.from_numpy(v).requires_grad_() for v in (x, a, b)]
        r = L.addr(*ts, beta=0.5, alpha=2.0)
        assert type(r.grad_fn).__name__ == "AddrBackward0"
        (r * r).sum().backward()
        grads.append([t.grad.numpy() for t in ts])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)
