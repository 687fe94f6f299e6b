"""float32/float64 elu, selu, celu, softplus, mish and float64 GELU (tanh)
through the vector maps 256 values at a time (_ew.pyx.tp STAGED_EXPR).

Each is its formula on ptcore's own elementwise functions (expm1, exp,
log1p, tanh: the same vector loops and scalar copies), so the tests ask for
the same bits as that formula computed op by op, the same bits for every
layout (contiguous, its tails, strided, in place, one value), and torch's
values within the functions' accuracy."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

try:
    import torch
except ImportError:          # the torch comparison is optional
    torch = None

DTYPES = {"float32": np.float32, "float64": np.float64}


def _x(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 20.0, -20.0,
                        19.999, 20.001, 7.0, 88.0, -88.0, 1e30, -1e30, -104.0, 1e-45])
    x = np.concatenate([special, rng.standard_normal(n) * 4, rng.standard_normal(n // 4) * 40])
    return x.astype(dtype)


def _ops(dt):
    """(name, ptcore call, in-place call or None, the formula on ptcore ops, torch call)"""
    t = ptcore.from_numpy
    c = (lambda v: v) if dt == np.float64 else np.float32
    # the parameters as the kernel sees them: rounded to the dtype
    return [
        ("elu", lambda a: F.elu(a), lambda a: F.elu(a, inplace=True),
         lambda a: ptcore.where(a <= 0, ptcore.expm1(a * 1.0) * 1.0, a * 1.0),
         lambda a: torch.nn.functional.elu(a)),
        ("elu0.7", lambda a: F.elu(a, 0.7), lambda a: F.elu_(a, 0.7),
         lambda a: ptcore.where(a <= 0, ptcore.expm1(a * 1.0) * c(0.7), a * 1.0),
         lambda a: torch.nn.functional.elu(a, 0.7)),
        ("selu", F.selu, lambda a: F.selu(a, inplace=True),
         lambda a: ptcore.where(a <= 0, ptcore.expm1(a * 1.0) * c(1.6732632423543772 * 1.0507009873554805),
                                a * c(1.0507009873554805)),
         torch.nn.functional.selu),
        ("celu1.3", lambda a: F.celu(a, 1.3), lambda a: F.celu_(a, 1.3),
         lambda a: ptcore.where(a <= 0, ptcore.expm1(a * c(1.0 / 1.3)) * c(1.3), a * 1.0),
         lambda a: torch.nn.functional.celu(a, 1.3)),
        ("softplus", F.softplus, None,
         lambda a: ptcore.where(a * 1.0 > 20.0, a, ptcore.log1p(ptcore.exp(a * 1.0)) / 1.0),
         torch.nn.functional.softplus),
        ("softplus2.5,7", lambda a: F.softplus(a, 2.5, 7.0), None,
         lambda a: ptcore.where(a * 2.5 > 7.0, a, ptcore.log1p(ptcore.exp(a * 2.5)) / 2.5),
         lambda a: torch.nn.functional.softplus(a, 2.5, 7.0)),
        ("softplus-1.5,3", lambda a: F.softplus(a, -1.5, 3.0), None,
         lambda a: ptcore.where(a * -1.5 > 3.0, a, ptcore.log1p(ptcore.exp(a * -1.5)) / -1.5),
         lambda a: torch.nn.functional.softplus(a, -1.5, 3.0)),
        ("mish", F.mish, lambda a: F.mish(a, inplace=True),
         lambda a: a * ptcore.tanh(ptcore.log1p(ptcore.exp(a))),
         torch.nn.functional.mish),
        ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), None,
         (lambda a: a * 0.5 * (1 + ptcore.tanh((a + a * a * a * 0.044715) * 0.79788456080286535588)))
         if dt == np.float64 else None,
         lambda a: torch.nn.functional.gelu(a, approximate="tanh")),
    ]


def _bits(a):
    """The values' bits, every NaN as one (a NaN's sign and payload depend on
    which instruction made it: x86's default NaN, made by inf - inf or 0 * inf,
    is negative, a NaN passed through keeps its sign; IEEE 754 leaves both open)."""
    a = np.where(np.isnan(a), np.nan, a).astype(np.asarray(a).dtype)
    return a.view(np.int32 if a.dtype == np.float32 else np.int64)


def _same(a, b):
    return np.array_equal(_bits(a), _bits(b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_is_its_formula_on_the_elementwise_functions(dtype):
    dt = DTYPES[dtype]
    x = _x(20000, dt)
    for name, f, _, formula, _ in _ops(dt):
        if formula is None:
            continue
        with np.errstate(all="ignore"):
            got = f(ptcore.from_numpy(x)).numpy()
            want = formula(ptcore.from_numpy(x)).numpy()
        assert _same(got, want), (name, x[_bits(got) != _bits(want)][:5])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9, 17, 255, 256, 257, 700])
def test_every_layout_gives_the_same_bits(dtype, n):
    dt = DTYPES[dtype]
    x = _x(800, dt, seed=n)
    x = x[-n:] if n < 20 else x[:n]
    for name, f, inplace, _, _ in _ops(dt):
        full = f(ptcore.from_numpy(x)).numpy()
        wide = ptcore.from_numpy(np.repeat(x, 3))[2::3]
        assert _same(f(wide).numpy(), full), name
        rows = ptcore.from_numpy(np.stack([x, x[::-1]], 1))[:, 0]       # a column
        assert _same(f(rows).numpy(), full), name
        one = np.array([f(ptcore.from_numpy(x[i:i + 1])).numpy()[0] for i in range(min(n, 6))])
        assert _same(one, full[:min(n, 6)]), name
        if inplace is not None:
            t = ptcore.from_numpy(x.copy())
            inplace(t)
            assert _same(t.numpy(), full), name
            w = ptcore.from_numpy(np.repeat(x, 2))
            inplace(w[::2])
            assert _same(w.numpy()[::2], full), name
            assert _same(w.numpy()[1::2], x), name          # the other elements untouched


@pytest.mark.parametrize("dtype", DTYPES)
def test_out_of_a_larger_tensor_and_threads(dtype):
    # many chunks, split over threads where the loop is parallel
    dt = DTYPES[dtype]
    x = _x(300000, dt, seed=7)
    for name, f, _, _, _ in _ops(dt):
        want = f(ptcore.from_numpy(x)).numpy()
        prev = ptcore.get_num_threads()
        try:
            ptcore.set_num_threads(2)
            got = f(ptcore.from_numpy(x)).numpy()
        finally:
            ptcore.set_num_threads(prev)
        assert _same(got, want), name


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", DTYPES)
def test_against_torch(dtype):
    dt = DTYPES[dtype]
    x = _x(50000, dt, seed=3)
    rtol = 2e-6 if dt == np.float32 else 1e-14
    for name, f, _, _, tf in _ops(dt):
        got = f(ptcore.from_numpy(x)).numpy()
        want = tf(torch.from_numpy(x)).numpy()
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        ok = ~np.isnan(want)
        # GELU (tanh) cancels 1 + tanh(u) for negative x: its absolute error;
        # subnormal results (softplus far left) differ in their last bits
        atol = (1e-6 if dt == np.float32 else 1e-15) if name == "gelu_tanh" else np.finfo(dt).tiny
        np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=atol, err_msg=name)


def test_gradients_unchanged():
    # the forward's values feed the recorded formulas; float64 gradcheck
    x = ptcore.tensor([-2.5, -0.3, 0.4, 3.0], dtype=ptcore.float64, requires_grad=True)
    for f in (F.elu, F.selu, lambda a: F.celu(a, 1.3), F.softplus, F.mish,
              lambda a: F.gelu(a, approximate="tanh")):
        assert ptcore.autograd.gradcheck(f, (x,))


# the one-pass backward kernels (_nn_kernels: elu_backward, softplus_backward,
# gelu_tanh_backward) against the composite formula a recorded backward keeps
BACKWARD = [
    ("elu", lambda a: F.elu(a)), ("elu0.7", lambda a: F.elu(a, 0.7)), ("selu", F.selu),
    ("celu1.3", lambda a: F.celu(a, 1.3)), ("softplus", F.softplus),
    ("softplus2.5,7", lambda a: F.softplus(a, 2.5, 7.0)),
    ("softplus-1.5,3", lambda a: F.softplus(a, -1.5, 3.0)),
    ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh")),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 5, 300, 40000])
def test_backward_kernels_are_the_composite(dtype, n):
    dt = DTYPES[dtype]
    x0 = _x(40000, dt, seed=n)[:n] if n > 20 else _x(40, dt, seed=n)[:n]
    g0 = np.random.default_rng(n).standard_normal(x0.shape[0]).astype(dt)
    for name, f in BACKWARD:
        x = ptcore.from_numpy(x0.copy()).requires_grad_()
        g = ptcore.from_numpy(g0)
        (a,) = ptcore.autograd.grad(f(x), x, g)
        # create_graph: the recorded composite (differentiable again)
        (b,) = ptcore.autograd.grad(f(x), x, g, create_graph=True)
        assert b.requires_grad
        assert _same(a.numpy(), b.detach().numpy()), name


def test_backward_kernels_decline_other_layouts_and_dtypes():
    from ptcore._ops.kernels import _nn_kernels as K
    x = ptcore.randn(4, 6)
    g = ptcore.randn(4, 6)
    for call in (lambda g, x: K.elu_backward(g, x, 1.0, 1.0, 1.0),
                 lambda g, x: K.softplus_backward(g, x, 1.0, 20.0), K.gelu_tanh_backward):
        assert call(g, x) is not None
        assert call(g.t(), x) is None                     # not one layout
        assert call(g.long(), x.long()) is None           # not a float type
        # float16/bfloat16: the float32 computation of the widened values, rounded once
        for low in (ptcore.float16, ptcore.bfloat16):
            gl, xl = g.to(low), x.to(low)
            np.testing.assert_array_equal(
                call(gl, xl).view(ptcore.int16).numpy(),
                call(gl.float(), xl.float()).to(low).view(ptcore.int16).numpy())
        assert call(g[:, :3], x[:, :3]) is None           # not contiguous
    # a gradient of another layout still gets the kernel's values
    x = ptcore.randn(5, 7, dtype=ptcore.float64, requires_grad=True)
    y = F.elu(x)
    (a,) = ptcore.autograd.grad(y, x, ptcore.ones(7, 5, dtype=ptcore.float64).t(),
                                retain_graph=True)
    (b,) = ptcore.autograd.grad(y, x, ptcore.ones(5, 7, dtype=ptcore.float64))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # (the kernel's exp and NumPy's may differ in the last bit)
    np.testing.assert_allclose(
        a.numpy(), np.where(x.detach().numpy() <= 0, np.exp(x.detach().numpy()), 1.0),
        rtol=4e-16, atol=0)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", DTYPES)
def test_backward_against_torch(dtype):
    dt = DTYPES[dtype]
    x0 = _x(30000, dt, seed=5)
    g0 = np.random.default_rng(5).standard_normal(x0.shape[0]).astype(dt)
    rtol = 1e-5 if dt == np.float32 else 1e-13
    for name, f in BACKWARD + [("silu", F.silu), ("mish", F.mish)]:
        x = ptcore.from_numpy(x0.copy()).requires_grad_()
        f(x).backward(ptcore.from_numpy(g0))
        xt = torch.from_numpy(x0.copy()).requires_grad_()
        tf = {"elu": lambda a: torch.nn.functional.elu(a),
              "elu0.7": lambda a: torch.nn.functional.elu(a, 0.7),
              "selu": torch.nn.functional.selu,
              "celu1.3": lambda a: torch.nn.functional.celu(a, 1.3),
              "softplus": torch.nn.functional.softplus,
              "softplus2.5,7": lambda a: torch.nn.functional.softplus(a, 2.5, 7.0),
              "softplus-1.5,3": lambda a: torch.nn.functional.softplus(a, -1.5, 3.0),
              "gelu_tanh": lambda a: torch.nn.functional.gelu(a, approximate="tanh"),
              "silu": torch.nn.functional.silu, "mish": torch.nn.functional.mish}[name]
        tf(xt).backward(torch.from_numpy(g0))
        a, b = x.grad.numpy(), xt.grad.numpy()
        if name[:3] in ("elu", "sel", "cel"):
            # x = NaN: torch's scalar loop gives g * poscoef (NaN <= 0 is
            # false; ptcore's, and torch's for a few values), its vector loop NaN
            a, b = a[~np.isnan(x0)], b[~np.isnan(x0)]
        assert np.array_equal(np.isnan(a), np.isnan(b)), name
        ok = ~np.isnan(b)
        # GELU (tanh) far left: 1 + tanh and 1 - tanh^2 cancel (an ulp of
        # tanh there is ~1e-6 of the gradient in float32)
        atol = (1e-5 if dt == np.float32 else 1e-13) if name == "gelu_tanh" else np.finfo(dt).eps * 4
        np.testing.assert_allclose(a[ok], b[ok], rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_celu_backward_extreme_alpha_as_torch():
    # CeluBackward0 scales by 1 / float32(alpha): an alpha that rounds to 0
    # gives an infinite scale (NaN/0 gradients, no ZeroDivisionError), one past
    # float32's range torch's RuntimeError
    for alpha in (1e-50, 1e-40, 3e38):
        x = ptcore.tensor([-1.0, -0.0, 0.5], dtype=ptcore.float64, requires_grad=True)
        F.celu(x, alpha).sum().backward()
        xt = torch.tensor([-1.0, -0.0, 0.5], dtype=torch.float64, requires_grad=True)
        torch.nn.functional.celu(xt, alpha).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    x = ptcore.tensor([-1.0, 0.5], dtype=ptcore.float64, requires_grad=True)
    y = F.celu(x, 1e39).sum()
    with pytest.raises(RuntimeError, match="alpha=1e"):
        y.backward()


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_backward_rounds_once_as_torch(dtype):
    """float16/bfloat16 gradients of the one-pass backward kernels: the float32
    computation of the widened values rounded once (ATen's reduced-float
    kernels), not the composite's chain of roundings: torch's values to one
    unit in the last place, most of them exactly."""
    x0 = np.random.default_rng(11).standard_normal(20000).astype(np.float32) * 3
    g0 = np.random.default_rng(12).standard_normal(20000).astype(np.float32)
    ulp = 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10
    for name in ("gelu", "gelu_tanh", "silu", "elu", "softplus"):
        grads = []
        for lib in (ptcore, torch):
            d = getattr(lib, dtype)
            x = lib.from_numpy(x0).to(d).requires_grad_()
            f = lib.nn.functional
            y = f.gelu(x, approximate="tanh") if name == "gelu_tanh" else getattr(f, name)(x)
            y.backward(lib.from_numpy(g0).to(d))
            grads.append(x.grad.float().numpy())
        a, b = grads
        # (atol: gelu_tanh's far negative tail, where ptcore's float32 tanh is an
        # ulp short of -1 (within its 2 ulp) and leaves ~1e-6 where torch's gives 0)
        np.testing.assert_allclose(a, b, rtol=ulp, atol=5e-6, err_msg=name)
        assert (a == b).mean() > 0.9, name
