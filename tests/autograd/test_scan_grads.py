"""The scans' gradients in O(n): logcumsumexp's gradient and tangent
(torch's formulas: reversed logcumsumexps of the positive and negative parts
of the gradient; the normalised cumulative sum for the tangent) and
cumprod's gradient through zeros (the first zero's own term, nothing after
it), compared with torch, with the explicit sums, and on rows too long for
the quadratic forms."""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _data(shape, complex_=False, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _grad(lib, a, g, dim, dtype):
    t = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
    lib.logcumsumexp(t, dim).backward(lib.tensor(g, dtype=getattr(lib, dtype)))
    return t.grad.resolve_conj().numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64"])
@pytest.mark.parametrize("shape,dim", [((4, 7), 1), ((5, 3, 6), 0), ((10,), 0), ((2, 3, 4), -1)])
def test_backward_matches_torch(shape, dim, dtype):
    cplx = dtype.startswith("complex")
    a, g = _data(shape, cplx, 0), _data(shape, cplx, 1)
    g.flat[0] = 0                           # a zero gradient (log 0 = -inf) too
    got, want = _grad(ptcore, a, g, dim, dtype), _grad(torch, a, g, dim, dtype)
    tol = 1e-12 if dtype in ("float64", "complex128") else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_backward_is_the_explicit_sum():
    a, g = _data((9,), True, 2), _data((9,), True, 3)
    y = np.log(np.cumsum(np.exp(a)))
    want = np.array([sum(g[j] * np.conj(np.exp(a[i] - y[j])) for j in range(i, 9)) for i in range(9)])
    np.testing.assert_allclose(_grad(ptcore, a, g, 0, "complex128"), want, rtol=1e-12, atol=1e-12)


def test_backward_of_a_long_row():
    """2e5 elements: the n x n weights of a quadratic formula would take 320 GB."""
    n = 200_000
    a = _data((n,), seed=4)
    g = _data((n,), seed=5)
    got = _grad(ptcore, a, g, 0, "float64")
    want = _grad(torch, a, g, 0, "float64")
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_double_backward():
    a = ptcore.tensor(_data((3, 5), seed=6), requires_grad=True)
    ta = torch.tensor(a.detach().numpy(), requires_grad=True)
    out = []
    for lib, t in ((ptcore, a), (torch, ta)):
        g, = lib.autograd.grad((lib.logcumsumexp(t, 1) ** 2).sum(), t, create_graph=True)
        h, = lib.autograd.grad(g.sum(), t)
        out.append(h.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["randn", "neg_inf_runs", "far_below", "nan_inf", "complex"])
def test_jvp_matches_torch(case):
    a = {"randn": _data((3, 6), seed=7),
         "neg_inf_runs": np.array([[-math.inf, 1.0, 2.0], [-math.inf, -math.inf, 0.5]]),
         "far_below": np.array([[-800.0, -700.0, 2.0]]),
         "nan_inf": np.array([[math.inf, 1.0, 2.0], [math.nan, -math.inf, 0.5]]),
         "complex": _data((3, 6), True, 8)}[case]
    t = _data(a.shape, np.iscomplexobj(a), 9)
    res = []
    for lib in (ptcore, torch):
        _, tt = lib.func.jvp(lambda x: lib.logcumsumexp(x, 1), (lib.tensor(a),), (lib.tensor(t),))
        res.append(tt.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-15, equal_nan=True)


def _cumprod_grad(lib, a, g, dim, dtype, create_graph=False):
    t = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
    gr, = lib.autograd.grad(lib.cumprod(t, dim), t, lib.tensor(g, dtype=getattr(lib, dtype)),
                            create_graph=create_graph)
    return gr.detach().resolve_conj().numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("shape,dim", [((6, 40), 1), ((7, 5), 0), ((3, 4, 6), 2), ((10,), 0)])
def test_cumprod_grad_through_zeros(shape, dim, dtype):
    rng = np.random.default_rng(10)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.startswith("complex") else 0)
    a[rng.random(shape) < 0.15] = 0                     # lines with none, one, several zeros
    a.reshape(-1)[:2] = 0
    g = rng.standard_normal(shape)
    got, want = _cumprod_grad(ptcore, a, g, dim, dtype), _cumprod_grad(torch, a, g, dim, dtype)
    tol = 1e-12 if dtype != "float32" else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # recording for a higher derivative takes the quadratic form: same values
    np.testing.assert_allclose(_cumprod_grad(ptcore, a, g, dim, dtype, create_graph=True), want,
                               rtol=tol, atol=tol)


def test_cumprod_grad_zeros_explicit_and_long():
    x = np.array([2.0, 3.0, 0.0, 5.0, 0.0, 7.0])
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    # d/dx_k sum_j g_j prod_{i<=j} x_i
    want = [sum(g[j] * np.prod([x[i] for i in range(j + 1) if i != k]) for j in range(k, 6)) for k in range(6)]
    np.testing.assert_allclose(_cumprod_grad(ptcore, x, g, 0, "float64"), want, rtol=1e-14)
    n = 100_000                       # the quadratic form would loop 1e5 times over the line
    a = np.random.default_rng(11).uniform(0.9, 1.1, n)
    a[[10, 50_000]] = 0
    gg = np.random.default_rng(12).standard_normal(n)
    np.testing.assert_allclose(_cumprod_grad(ptcore, a, gg, 0, "float64"),
                               _cumprod_grad(torch, a, gg, 0, "float64"), rtol=1e-9, atol=1e-12)
