"""The small CUDA ops of every training step's backward, from C
(``ptcore.cuda.ops.dense_fast``): the implicit gradient ``ones_like(loss)``
and ``zeros_like`` (``fill_like``), a number op of an expanded or sliced
tensor -- a mean's or sum's gradient ``g.expand(shape) / n`` -- by the strided
scalar kernel (``cuda_binary``), and ReLU's ``threshold_backward``
(``binary_params``, the CUDA ``ew_binary`` loop's parameterised kernels).
Each gives bitwise the general path's values, layout and dtype; other
calls are left to the general path."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import index as cuda_index

FLOATS = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


class _GeneralPath:
    """Within: the dense fast paths uninstalled (the general path runs)."""

    def __enter__(self):
        _dense_fast.uninstall()

    def __exit__(self, *exc):
        _dense_fast.install()


def _both(f):
    got = f()
    with _GeneralPath():
        want = f()
    return got, want


def _same(got, want):
    assert got.shape == want.shape and got.stride() == want.stride() and got.dtype is want.dtype
    assert got.requires_grad == want.requires_grad
    np.testing.assert_array_equal(got.detach().cpu().double().numpy(),
                                  want.detach().cpu().double().numpy())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [ptcore.ones_like, ptcore.zeros_like])
def test_ones_and_zeros_like_from_c(counted, fn, dtype):
    base = ptcore.randn(3, 4).to(dtype).cuda()
    for x in (ptcore.tensor(2.5, device="cuda").to(dtype), base, base.unsqueeze(1),
              base[:0], base.requires_grad_() if dtype.is_floating_point else base):
        del counted[:]
        got = fn(x)
        assert counted == [], x.shape
        _same(*_both(lambda: fn(x)))
        assert got.stride() == fn(x.detach().cpu()).stride()
    for call in (lambda t: fn(t.t()), lambda t: fn(t, dtype=ptcore.float64),
                 lambda t: fn(t, requires_grad=True), lambda t: fn(t.long())):
        del counted[:]
        got = call(base.detach())
        assert counted
        want = call(base.detach().cpu())
        assert got.stride() == want.stride() and got.dtype is want.dtype
        assert got.requires_grad == want.requires_grad
        np.testing.assert_array_equal(got.detach().cpu().double().numpy(),
                                      want.detach().double().numpy())


OPS = [("div", lambda t: t / 7), ("mul", lambda t: t * 3), ("sub", lambda t: t - 1.5),
       ("add", lambda t: t + 2), ("rsub", lambda t: 2 - t), ("pow", lambda t: t ** 2),
       ("rdiv", lambda t: 3 / t)]


def _layouts(dtype):
    a = ptcore.from_numpy(np.random.default_rng(0).standard_normal((6, 10))).to(dtype).cuda()
    return [("0-d expanded", ptcore.tensor(3.25, device="cuda").to(dtype).expand(4, 5)),
            ("column expanded", a[:, :1].expand(6, 7)),
            ("row expanded", a[0].expand(3, 10)),
            ("step", a[:, ::3]), ("slice", a[1:5, 2:8]), ("expanded 3-d", a[:, None, :4].expand(6, 2, 4))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,op", OPS)
def test_number_ops_of_expanded_and_sliced_tensors(counted, name, op, dtype):
    for label, x in _layouts(dtype):
        del counted[:]
        got = op(x)
        assert got.is_contiguous(), label
        got, want = _both(lambda: op(x))
        _same(got, want)
        tol = {ptcore.float16: 2e-3, ptcore.bfloat16: 2e-2}.get(dtype, 1e-6)
        np.testing.assert_allclose(got.cpu().double().numpy(), op(x.cpu()).double().numpy(),
                                   rtol=tol, atol=tol)


def test_number_ops_left_to_the_general_path(counted):
    a = ptcore.randn(4, 6, device="cuda")
    for x in (a.t(), a.flip(0), a[:, :1].expand(4, 3).t()):
        for op in (lambda t: t / 7, lambda t: t * 3):
            got = op(x)
            np.testing.assert_allclose(got.cpu().numpy(), op(x.cpu()).numpy(), rtol=1e-6)
            assert got.stride() == op(x.cpu()).stride() or got.is_contiguous()
    x = a[:, :1].expand(4, 3)
    assert (x > 0).dtype is ptcore.bool and (x > 0).is_contiguous()
    np.testing.assert_array_equal((x > 0).cpu().numpy(), (x.cpu() > 0).numpy())
    ai = ptcore.arange(6, device="cuda")[::2]
    np.testing.assert_array_equal((ai * 3).cpu().numpy(), (ai.cpu() * 3).numpy())


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_mean_and_sum_gradients(dtype):
    a = ptcore.from_numpy(np.random.default_rng(1).standard_normal((8, 5))).to(dtype)
    b = ptcore.from_numpy(np.random.default_rng(2).standard_normal((8, 5))).to(dtype)
    da, db = a.cuda().requires_grad_(), b.cuda()

    def grads():
        return ptcore.autograd.grad(((da - db) ** 2).mean() + da.sum(0).mean() * 0.5, da)[0]
    got, want = _both(grads)
    _same(got, want)
    ac = a.clone().requires_grad_()
    gc = ptcore.autograd.grad(((ac - b) ** 2).mean() + ac.sum(0).mean() * 0.5, ac)[0]
    np.testing.assert_allclose(got.cpu().numpy(), gc.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_relu_and_threshold_backward_from_c(monkeypatch, dtype):
    x = ptcore.from_numpy(np.random.default_rng(15).standard_normal((5, 7))).to(dtype)
    x[0, 0] = 0.0
    g = ptcore.from_numpy(np.random.default_rng(16).standard_normal((5, 7))).to(dtype)
    g[1, 1] = float("nan")                  # clamped input: 0 whatever the gradient
    dx = x.cuda().requires_grad_()
    general = []
    orig = cuda_index._ew

    def spy(*a, **k):
        general.append(a[1])
        return orig(*a, **k)
    monkeypatch.setattr(cuda_index, "_ew", spy)
    for fn in (F.relu, ptcore.relu, ptcore.nn.ReLU(), lambda t: t.relu()):
        del general[:]
        got = ptcore.autograd.grad(fn(dx), dx, g.cuda())[0]
        assert "threshold_fill" not in general
        with monkeypatch.context() as m:
            m.setattr(cuda_index, "_binary_params_fast", [None])
            want = ptcore.autograd.grad(fn(dx), dx, g.cuda())[0]
        assert "threshold_fill" in general
        _same(got, want)
        xc = x.clone().requires_grad_()
        np.testing.assert_array_equal(got.cpu().numpy(), ptcore.autograd.grad(fn(xc), xc, g)[0].numpy())


def test_binary_params_declines():
    a = ptcore.randn(3, 4, device="cuda")
    B = _dense_fast.binary_params
    assert B("threshold_fill", a, a, a.dtype, 0.0, 0.0, 0.0, 0) is not None
    for args in [("threshold_fill", a, a.t(), a.dtype), ("threshold_fill", a, a.double(), a.dtype),
                 ("threshold_fill", a, a, ptcore.float64), ("eq", a, a, a.dtype),
                 ("no_such_op", a, a, a.dtype), ("threshold_fill", a, a[:2], a.dtype),
                 ("threshold_fill", a.cpu(), a.cpu(), a.dtype),
                 ("threshold_fill", a.int(), a.int(), ptcore.int32)]:
        assert B(*args, 0.0, 0.0, 0.0, 0) is None, args[0]
    assert B("threshold_fill", a, a, a.dtype, 0.0, 0.0, 0.0, 1 << 70) is None
    assert B("threshold_fill", a, a, a.dtype, 0.0, 0.0, 0.0, 1.5) is None
