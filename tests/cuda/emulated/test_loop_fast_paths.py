"""The CUDA elementwise and reduction loops' calls on contiguous operands,
from C (``ptcore.cuda.ops.dense_fast``): the ``ew_unary`` loop
(``unary_params``: ``round``, ``isnan``, ``logit``, the parameterised
activations' forward ...), the ``ew_ternary`` loop (``ternary_params``:
``addcmul``, ``addcdiv``, ``lerp``, in place too), an activation's gradient
kernel (``act_backward``) and the reduce loops' row kernel on the tensor
itself (``run_reduce``: ``max()``, ``prod``, ``var`` over trailing dims ...).
Each launches the general path's kernel with its arguments, so the values,
dtype, shape and strides are bitwise the general path's; the calls each
declines (views, casts, ``out=``, moved dims) take the general path."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import index as cuda_index
from ptcore.cuda.ops import reduce as cuda_reduce
from ptcore.cuda.ops import special as cuda_special

FLOATS = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


_SLOTS = (cuda_index._unary_params_fast, cuda_index._ternary_params_fast, cuda_reduce._run_fast,
          cuda_special._unary_fast)


class _GeneralPath:
    """Within: the dense fast paths uninstalled (the general path runs);
    the loops' slots as they were after (the ``hits`` spies kept)."""

    def __enter__(self):
        self.saved = [s[0] for s in _SLOTS]
        _dense_fast.uninstall()

    def __exit__(self, *exc):
        _dense_fast.install()
        for s, v in zip(_SLOTS, self.saved):
            s[0] = v


def _same(got, want):
    assert got.shape == want.shape and got.stride() == want.stride() and got.dtype is want.dtype
    np.testing.assert_array_equal(got.detach().cpu().double().numpy(),
                                  want.detach().cpu().double().numpy())


@pytest.fixture
def hits(monkeypatch):
    """The names of the C paths that took a call ("unary", "ternary",
    "reduce", "special", "activation") while the test runs."""
    ptcore.ones(1, device="cuda")           # (the fast paths are installed with the device)
    taken = []
    saved = [s[0] for s in _SLOTS]
    assert None not in saved

    def spy(inner, name):
        def fn(*a):
            r = inner(*a)
            if r is not None:
                taken.append(name)
            return r
        return fn
    for s, name in zip(_SLOTS, ("unary", "ternary", "reduce", "special")):
        s[0] = spy(s[0], name)
    # the activations' forward kernel (ptcore.cuda.ops.nn looks it up per call)
    monkeypatch.setattr(_dense_fast, "activation", spy(_dense_fast.activation, "activation"))
    yield taken
    for s, v in zip(_SLOTS, saved):
        s[0] = v


def _data(dtype, shape=(5, 7), lo=-3.0, hi=3.0, seed=0):
    a = np.random.default_rng(seed).uniform(lo, hi, shape)
    a.flat[::5] = np.round(a.flat[::5])          # ties and integers for round, sign
    t = ptcore.from_numpy(a).to(dtype)
    if dtype.is_floating_point:
        t[0, 0] = float("nan")
        t[0, 1] = float("inf")
        t[1, 0] = -float("inf")
    return t.cuda()


UNARY = [
    ("round", lambda x: ptcore.round(x)),
    ("round decimals", lambda x: ptcore.round(x, decimals=2)),
    ("isnan", ptcore.isnan), ("isinf", ptcore.isinf), ("isfinite", ptcore.isfinite),
    ("isposinf", ptcore.isposinf), ("signbit", ptcore.signbit), ("logical_not", ptcore.logical_not),
    ("sinc", ptcore.sinc), ("logit eps", lambda x: ptcore.logit(x, eps=0.1)),
    ("nan_to_num", lambda x: ptcore.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0)),
    ("sgn", ptcore.sgn), ("special.erf", ptcore.special.erf), ("special.ndtri", ptcore.special.ndtri),
    ("special.i1", ptcore.special.i1), ("special.bessel_j0", ptcore.special.bessel_j0),
    ("elu", lambda x: F.elu(x, 0.7)), ("celu", lambda x: F.celu(x, 1.3)), ("selu", F.selu),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)), ("hardtanh", lambda x: F.hardtanh(x, -0.5, 2.0)),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0)), ("relu6", F.relu6),
    ("hardswish", F.hardswish), ("mish", F.mish),
]


_ACTIVATIONS = {"elu", "celu", "selu", "leaky_relu", "hardtanh", "softplus", "relu6", "hardswish", "mish"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", UNARY, ids=[u[0] for u in UNARY])
def test_unary_loop_from_c(hits, name, fn, dtype):
    x = _data(dtype)
    try:
        got = fn(x)
    except NotImplementedError:
        # (ndtri, i1, the Bessel functions: no half kernels, as torch's)
        assert dtype in (ptcore.float16, ptcore.bfloat16) and name.startswith("special.")
        with pytest.raises(NotImplementedError):
            fn(x.cpu())
        return
    with _GeneralPath():
        want = fn(x)
    _same(got, want)
    cpu = fn(x.cpu())
    assert got.dtype is cpu.dtype and got.shape == cpu.shape
    tol = 1e-6 if dtype is ptcore.float64 else 2e-3 if dtype is ptcore.float32 else 4e-2
    np.testing.assert_allclose(got.cpu().double().numpy(), cpu.double().numpy(), rtol=tol, atol=tol,
                               equal_nan=True)
    if name in ("special.ndtri", "special.i1", "special.bessel_j0"):
        # (a half input runs the float32 kernel over a float32 copy: the general path)
        assert "special" in hits or dtype in (ptcore.float16, ptcore.bfloat16)
    elif name in _ACTIVATIONS:
        assert "activation" in hits
    else:
        assert "unary" in hits
    # a transposed view and an empty tensor: still the general path's values
    t = fn(x.t())
    with _GeneralPath():
        _same(t, fn(x.t()))
    _same(fn(x[:0]), fn(x.cpu()[:0]).cuda())


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16])
def test_unary_in_place_from_c(hits, dtype):
    for name, call in [("round_", lambda t: t.round_(decimals=1)), ("elu_", lambda t: F.elu_(t, 0.5)),
                       ("nan_to_num_", lambda t: t.nan_to_num_(0.0)), ("logit_", lambda t: t.logit_(0.05)),
                       ("leaky_relu_", lambda t: F.leaky_relu_(t, 0.3))]:
        x = _data(dtype)
        v = x._version
        del hits[:]
        r = call(x)
        assert r is x and x._version > v, name
        assert hits == ["activation" if name in ("elu_", "leaky_relu_") else "unary"], name
        y = _data(dtype)
        with _GeneralPath():
            call(y)
        _same(x, y)


def test_unary_declines():
    """An ``out=`` tensor, a cast result and an integer input take the general path."""
    x = _data(ptcore.float32)
    out = ptcore.empty(5, 7, device="cuda")
    assert ptcore.round(x, out=out) is out
    _same(out, ptcore.round(x))
    i = ptcore.arange(-6, 6, device="cuda", dtype=ptcore.int32)
    np.testing.assert_array_equal(ptcore.sgn(i).cpu().numpy(), np.sign(np.arange(-6, 6)))
    np.testing.assert_array_equal(ptcore.logical_not(i).cpu().numpy(), np.arange(-6, 6) == 0)
    # a bool result for an int64 input's isnan: all False
    assert not ptcore.isnan(i.long()).any().item()


TERNARY = [
    ("addcmul", lambda a, b, c: ptcore.addcmul(a, b, c, value=0.75)),
    ("addcdiv", lambda a, b, c: ptcore.addcdiv(a, b, c.abs() + 0.5, value=-1.25)),
    ("lerp", lambda a, b, c: ptcore.lerp(a, b, c)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", TERNARY, ids=[t[0] for t in TERNARY])
def test_ternary_loop_from_c(hits, name, fn, dtype):
    a, b, c = (_data(dtype, seed=s).nan_to_num(0.0, 1.0, -1.0) for s in (1, 2, 3))
    got = fn(a, b, c)
    assert "ternary" in hits
    with _GeneralPath():
        want = fn(a, b, c)
    _same(got, want)
    cpu = fn(a.cpu(), b.cpu(), c.cpu())
    tol = 1e-12 if dtype is ptcore.float64 else 1e-5 if dtype is ptcore.float32 else 2e-2
    np.testing.assert_allclose(got.cpu().double().numpy(), cpu.double().numpy(), rtol=tol, atol=tol)
    if dtype is ptcore.float64:
        # broadcast operands: the general path
        np.testing.assert_allclose(fn(a, b[:1], c).cpu().numpy(), fn(a.cpu(), b.cpu()[:1], c.cpu()).numpy(),
                                   rtol=1e-12, atol=1e-12)


def test_ternary_in_place_from_c(hits):
    a, b, c = (_data(ptcore.float32, seed=s).nan_to_num(0.0, 1.0, -1.0) for s in (4, 5, 6))
    for call in (lambda x: x.addcmul_(b, c, value=2.0), lambda x: x.addcdiv_(b, c.abs() + 1.0),
                 lambda x: x.lerp_(b, c), lambda x: x.addcmul_(x, x, value=0.5)):
        x = a.clone()
        v = x._version
        del hits[:]
        assert call(x) is x and x._version > v
        assert hits == ["ternary"]
        y = a.clone()
        with _GeneralPath():
            call(y)
        _same(x, y)


def test_ternary_partial_overlap_raises_as_general_path():
    base = ptcore.randn(12, device="cuda")
    a, b = base[:8], base[2:10]
    c = ptcore.randn(8, device="cuda")
    with pytest.raises(RuntimeError):
        a.addcmul_(b, c)
    with _GeneralPath():
        with pytest.raises(RuntimeError):
            a.addcmul_(b, c)


ACTS = [("gelu", F.gelu), ("gelu tanh", lambda x: F.gelu(x, approximate="tanh")),
        ("silu", F.silu), ("elu", lambda x: F.elu(x, 0.6)), ("celu", lambda x: F.celu(x, 1.5)),
        ("selu", F.selu), ("softplus", lambda x: F.softplus(x, 1.5, 2.0)),
        ("leaky_relu", lambda x: F.leaky_relu(x, 0.1)), ("mish", F.mish),
        ("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid)]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.bfloat16])
@pytest.mark.parametrize("name,fn", ACTS, ids=[a[0] for a in ACTS])
def test_activation_gradient_kernel_from_c(monkeypatch, name, fn, dtype):
    taken = []
    inner = _dense_fast.act_backward

    def spy(*a):
        r = inner(*a)
        taken.append(r is not None)
        return r
    from ptcore.cuda.ops import nn as cuda_nn
    monkeypatch.setattr(cuda_nn._dense_fast, "act_backward", spy)
    x0 = _data(dtype).nan_to_num(0.0, 2.0, -2.0)
    w = _data(dtype, seed=9).nan_to_num(0.0, 1.0, -1.0)

    def grad():
        x = x0.clone().requires_grad_()
        (fn(x) * w).sum().backward()
        return x.grad
    got = grad()
    with _GeneralPath():
        want = grad()
    _same(got, want)
    xc = x0.cpu().requires_grad_()
    (fn(xc) * w.cpu()).sum().backward()
    tol = 1e-10 if dtype is ptcore.float64 else 1e-4 if dtype is ptcore.float32 else 3e-2
    np.testing.assert_allclose(got.cpu().double().numpy(), xc.grad.double().numpy(), rtol=tol, atol=tol)
    if name not in ("hardsigmoid", "hardswish", "mish") or taken:
        assert any(taken), name


REDUCE = [
    ("max", lambda x: x.max()), ("min", lambda x: ptcore.min(x)), ("prod", lambda x: x.prod()),
    ("prod dim", lambda x: x.prod(-1)), ("nansum", lambda x: ptcore.nansum(x, (1, 2))),
    ("logsumexp", lambda x: ptcore.logsumexp(x, -1, keepdim=True)),
    ("var", lambda x: x.var(-1)), ("std", lambda x: x.std((1, 2), correction=0)),
    ("amax", lambda x: x.amax((-2, -1))), ("amin", lambda x: x.amin(-1, keepdim=True)),
    ("norm", lambda x: ptcore.linalg.vector_norm(x, 3.0, dim=-1)),
    ("inf norm", lambda x: ptcore.linalg.vector_norm(x, float("inf"))),
    ("all", lambda x: (x > -2).all(-1)), ("any", lambda x: (x > 2).any()),
    ("count_nonzero", lambda x: ptcore.count_nonzero(x > 0, -1)),
    ("max dim", lambda x: x.max(-1)[0]), ("argmax", lambda x: x.argmax(-1)),
    ("sum int", lambda x: (x * 10).long().sum(-1)),
]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16])
@pytest.mark.parametrize("name,fn", REDUCE, ids=[r[0] for r in REDUCE])
def test_row_reduction_from_c(hits, name, fn, dtype):
    x = ptcore.from_numpy(np.random.default_rng(3).uniform(0.5, 1.5, (3, 4, 6))).to(dtype).cuda()
    got = fn(x)
    with _GeneralPath():
        want = fn(x)
    _same(got, want)
    cpu = fn(x.cpu())
    assert got.dtype is cpu.dtype and got.shape == cpu.shape
    tol = 1e-10 if dtype is ptcore.float64 else 1e-4 if dtype is ptcore.float32 else 2e-2
    np.testing.assert_allclose(got.cpu().double().numpy(), cpu.double().numpy(), rtol=tol, atol=tol)
    if name not in ("max dim", "sum int", "amax", "amin", "argmax"):
        # (amax/amin over trailing dims and argmax have fast forms of their own)
        assert "reduce" in hits


def test_reductions_the_c_path_declines():
    """Moved dims, empty rows, long split rows and a transposed input take
    the general path, with its values and errors."""
    x = ptcore.from_numpy(np.random.default_rng(4).standard_normal((3, 4, 6))).cuda()
    for fn in (lambda t: t.amax(0), lambda t: t.prod(1), lambda t: t.t().var(-1) if t.dim() == 2 else t.var(0)):
        got = fn(x)
        np.testing.assert_allclose(got.cpu().numpy(), fn(x.cpu()).numpy(), rtol=1e-12, atol=1e-12)
    e = ptcore.empty(3, 0, device="cuda")
    np.testing.assert_array_equal(e.prod(-1).cpu().numpy(), np.ones(3))
    with pytest.raises(IndexError):
        e.amax(-1)
    assert ptcore.empty(0, 4, device="cuda").amax(-1).shape == (0,)
    long = ptcore.from_numpy(np.random.default_rng(5).uniform(0.9, 1.1, 70000)).cuda()
    np.testing.assert_allclose(long.prod().item(), np.prod(long.cpu().numpy()), rtol=1e-9)
    np.testing.assert_allclose(long.max().item(), long.cpu().numpy().max())
