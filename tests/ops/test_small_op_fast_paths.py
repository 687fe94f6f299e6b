"""The small-tensor fast paths (polar, linalg.cross, linspace, inner, kron,
cumsum/cumprod, vector_norm/linalg.norm) against torch: values, dtypes,
shapes (empty, broadcasting, non-contiguous: the general path), errors,
requires_grad inputs."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _p(a):
    return ptcore.from_numpy(np.ascontiguousarray(a))


def _same(x, y, exact=False):
    assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
    assert tuple(x.shape) == tuple(y.shape)
    if exact:
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())
    else:
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-6)


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 4), (2, 0, 3)])
def test_polar(dt, shape):
    a = RNG.random(shape).astype(dt)
    b = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.polar(_p(a), _p(b)), torch.polar(_t(a), _t(b)))


def test_polar_general_cases():
    a, b = RNG.random((3, 1)), RNG.standard_normal((4,))
    _same(ptcore.polar(_p(a), _p(b)), torch.polar(_t(a), _t(b)))      # broadcast
    a2 = RNG.random((4, 3))
    _same(ptcore.polar(_p(a2).t(), _p(a2).t()), torch.polar(_t(a2).t(), _t(a2).t()))
    with pytest.raises(RuntimeError):
        ptcore.polar(_p(a2), _p(a2.astype("float32")))
    x = _p(a2).requires_grad_()
    r = ptcore.polar(x, _p(a2))
    r.abs().sum().backward()
    xt = _t(a2).requires_grad_()
    torch.polar(xt, _t(a2)).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape,dim", [((3,), -1), ((5, 3), -1), ((3, 4), 0), ((2, 3, 4), 1),
                                       ((0, 3), 1)])
def test_linalg_cross(dt, shape, dim):
    a = (RNG.standard_normal(shape) * 10).astype(dt)
    b = (RNG.standard_normal(shape) * 10).astype(dt)
    _same(ptcore.linalg.cross(_p(a), _p(b), dim=dim), torch.linalg.cross(_t(a), _t(b), dim=dim),
          exact=dt == "int64")


def test_linalg_cross_errors_and_grad():
    a = RNG.standard_normal((4, 3))
    with pytest.raises(RuntimeError):
        ptcore.linalg.cross(_p(a), _p(a), dim=0)
    with pytest.raises(IndexError):
        ptcore.linalg.cross(_p(a), _p(a), dim=2)
    _same(ptcore.linalg.cross(_p(a), _p(a[:1])), torch.linalg.cross(_t(a), _t(a[:1])))
    x = _p(a).requires_grad_()
    ptcore.linalg.cross(x, _p(a[::-1])).sum().backward()
    xt = _t(a).requires_grad_()
    torch.linalg.cross(xt, _t(a[::-1])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", [None, "float32", "float64"])
@pytest.mark.parametrize("args", [(0, 1, 100), (-3.5, 7.25, 7), (1e10, -2, 33), (0, 1, 2),
                                  (5, 5, 4), (2 ** 60, 0, 5), (0.1, 0.7, 1001)])
def test_linspace(dt, args):
    kw = {} if dt is None else {"dtype": getattr(ptcore, dt)}
    kt = {} if dt is None else {"dtype": getattr(torch, dt)}
    _same(ptcore.linspace(*args, **kw), torch.linspace(*args, **kt), exact=True)


def test_linspace_general_cases():
    _same(ptcore.linspace(0, 1, 5, requires_grad=True), torch.linspace(0, 1, 5, requires_grad=True))
    assert ptcore.linspace(0, 1, 5, requires_grad=True).requires_grad
    _same(ptcore.linspace(0, 10, 5, dtype=ptcore.int64), torch.linspace(0, 10, 5, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        ptcore.linspace(0, 1, -1)
    o = ptcore.empty(3)
    ptcore.linspace(0, 1, 3, out=o)
    _same(o, torch.linspace(0, 1, 3), exact=True)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("n", [0, 1, 100])
def test_inner_kron_vectors(dt, n):
    a = RNG.standard_normal(n).astype(dt)
    b = RNG.standard_normal(n).astype(dt)
    _same(ptcore.inner(_p(a), _p(b)), torch.inner(_t(a), _t(b)))
    _same(ptcore.kron(_p(a), _p(b)), torch.kron(_t(a), _t(b)), exact=True)


def test_inner_kron_general_cases():
    a, b = RNG.standard_normal(4), RNG.standard_normal(5)
    with pytest.raises(RuntimeError):
        ptcore.inner(_p(a), _p(b))
    with pytest.raises(RuntimeError):
        ptcore.inner(_p(a), _p(a.astype("float32")))
    _same(ptcore.kron(_p(a), _p(b.astype("float32"))), torch.kron(_t(a), _t(b.astype("float32"))))
    x = _p(a).requires_grad_()
    (ptcore.inner(x, x) + ptcore.kron(x, _p(b)).sum()).backward()
    xt = _t(a).requires_grad_()
    (torch.inner(xt, xt) + torch.kron(xt, _t(b)).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,dim", [((100,), 0), ((3, 4), -1), ((3, 4), 0), ((0, 2), 1),
                                       ((), 0)])
def test_cumsum_cumprod(dt, shape, dim):
    a = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.cumsum(_p(a), dim), torch.cumsum(_t(a), dim), exact=True)
    _same(ptcore.cumprod(_p(a), dim), torch.cumprod(_t(a), dim), exact=True)


def test_cumsum_errors_and_grad():
    a = RNG.standard_normal((3, 4)).astype("float32")
    with pytest.raises(IndexError):
        ptcore.cumsum(_p(a), 2)
    x = _p(a).requires_grad_()
    ptcore.cumsum(x, 1).pow(2).sum().backward()
    xt = _t(a).requires_grad_()
    torch.cumsum(xt, 1).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(100,), (3, 4), (0,)])
def test_norms(dt, shape):
    a = RNG.standard_normal(shape).astype(dt)
    _same(ptcore.linalg.norm(_p(a)), torch.linalg.norm(_t(a)))
    _same(ptcore.linalg.vector_norm(_p(a)), torch.linalg.vector_norm(_t(a)))
    if len(shape) == 2:
        _same(ptcore.linalg.vector_norm(_p(a), dim=1, keepdim=True),
              torch.linalg.vector_norm(_t(a), dim=1, keepdim=True))


def test_norm_errors_and_grad():
    with pytest.raises(RuntimeError):
        ptcore.linalg.norm(ptcore.arange(3))
    a = RNG.standard_normal(5)
    x = _p(a).requires_grad_()
    ptcore.linalg.norm(x).backward()
    xt = _t(a).requires_grad_()
    torch.linalg.norm(xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
