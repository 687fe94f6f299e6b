"""Input gradients (first and second order) of ops at special points, against
torch (the oracle): differences found by differential fuzzing."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_NAN, _INF = float("nan"), float("inf")


def _grads(M, f, arrays, seed=0, double=False):
    """f(M, *leaves)'s gradients for a random upstream gradient (and, with
    ``double``, the gradient of <grad, v> for a random v), as numpy arrays."""
    xs = [M.from_numpy(np.array(a, dtype=np.float64)).requires_grad_() for a in arrays]
    y = f(M, *xs)
    rs = np.random.RandomState(seed)
    g = np.asarray(rs.randn(*y.shape))
    if y.dtype.is_complex:
        g = g + 1j * rs.randn(*y.shape)
    gs = M.autograd.grad(y, xs, M.from_numpy(g), allow_unused=True, create_graph=double)
    res = [None if t is None else t.detach().numpy().copy() for t in gs]
    if double:
        terms = [(t * M.from_numpy(np.asarray(rs.randn(*t.shape)))).sum() for t in gs
                 if t is not None and t.requires_grad]
        if not terms:                   # the gradient is not differentiable again
            return res + [None] * len(xs)
        g2 = M.autograd.grad(sum(terms), xs, allow_unused=True)
        res += [None if t is None else t.detach().numpy().copy() for t in g2]
    return res


def _same(f, *arrays, double=False):
    a = _grads(torch, f, arrays, double=double)
    b = _grads(ptcore, f, arrays, double=double)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None), (a, b)
        if x is not None:
            np.testing.assert_allclose(y, x, rtol=1e-7, atol=1e-10, equal_nan=True)


_SPECIAL = [0., -0., 1., -1., 0.5, -0.5, 2., _INF, -_INF, _NAN, 3., -2., 6., -6., 0.1, 20.]


def test_digamma_second_derivative_is_polygamma_2_with_infs_at_the_poles():
    _same(lambda M, x: M.digamma(x), _SPECIAL, double=True)


def test_i0_derivative_is_torchs_i1():
    _same(lambda M, x: M.i0(x), _SPECIAL, double=True)


def test_softplus_second_derivative_is_zero_from_the_threshold_on():
    # beta * x == threshold at x = 0.5: first derivative sigmoid, second zero
    _same(lambda M, x: M.nn.functional.softplus(x, beta=2, threshold=1), _SPECIAL,
          double=True)


def test_nextafter_gradient_is_zero_where_input_equals_other():
    a = [0., -0., 1., _NAN, _NAN, 1., _INF, -_INF, 1e-320, 2.]
    b = [-0., 0., 1., _NAN, 1., _NAN, _INF, _INF, 0., 3.]
    _same(lambda M, x, y: M.nextafter(x, y), a, b)


def test_polar_gradients_follow_the_result_zero_and_negative_abs():
    ab = [0., 2., _INF, -1., -0., 3.]
    an = [1., 0.5, 1., 0.3, 2., -7.]
    _same(lambda M, a, t: M.polar(a, t), ab, an)
    _same(lambda M, a, t: M.polar(a, t), ab[:2] + ab[3:], an[:2] + an[3:], double=True)
    t = torch.polar(torch.tensor([2.], dtype=torch.float64, requires_grad=True),
                    torch.tensor([1.], dtype=torch.float64))
    p = ptcore.polar(ptcore.tensor([2.], dtype=ptcore.float64, requires_grad=True),
                     ptcore.tensor([1.], dtype=ptcore.float64))
    np.testing.assert_allclose(p.grad_fn._saved_result.detach().numpy(),
                               t.grad_fn._saved_result.detach().numpy())


def test_fmod_second_derivative_through_a_zero_divisor_is_zero():
    a = [0., 0., 1., -1., 2., -2., 3., 0.5]
    b = [0., 1., 1., -1., -2., 0., 3., 0.5]
    _same(lambda M, x, y: M.fmod(x, y), a, b, double=True)


@pytest.mark.parametrize("f", [
    lambda M, x: x.var(-1, correction=5),          # dof -1: 2 / dof as it is
    lambda M, x: x.std(-1, correction=4),          # dof 0: inf
    lambda M, x: x.var(correction=13),             # everything, dof <= 0: inf / NaN
    lambda M, x: x.std(correction=12),
    lambda M, x: M.var_mean(x, -1, correction=6)[0],
    lambda M, x: M.std_mean(x, correction=14)[0],
    lambda M, x: x.var(0, correction=2),
])
def test_var_std_gradients_past_the_sample_size_use_torchs_dof(f):
    x = np.array([[1., 1., 2., 2.], [3., 3., 3., 3.], [0., 1., 2., 3.]])
    _same(f, x)
    _same(f, np.random.RandomState(3).randn(3, 4))


def test_var_tangent_past_the_sample_size_uses_torchs_dof():
    import torch.autograd.forward_ad as tF
    import ptcore.autograd.forward_ad as pF
    x, t = np.random.RandomState(4).randn(2, 3, 4)
    res = []
    for M, F in ((torch, tF), (ptcore, pF)):
        with F.dual_level():
            d = F.make_dual(M.from_numpy(x.copy()), M.from_numpy(t.copy()))
            res.append(F.unpack_dual(d.var(-1, correction=6)).tangent.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-10)


@pytest.mark.parametrize("f", [
    lambda M, x: x.prod(-1), lambda M, x: x.prod(0, keepdim=True), lambda M, x: x.prod(),
])
def test_prod_second_derivative_with_several_zeros(f):
    x = np.array([[0., 3., 2., 0.], [0., 2., 1., 4.], [1., 0., 5., -1.], [1., 1., 2., 2.]])
    _same(f, x, double=True)
    _same(f, np.array([[0., 0., 5., -1.]]), double=True)


def test_prod_with_a_zero_takes_the_products_of_the_others_everywhere():
    # a zero anywhere: every slice by its exclusive products (no inf / inf)
    x = [[_INF, 1., 2., 0.], [_NAN, 2., 1., 4.], [1., -_INF, 5., -1.], [1., 1., 2., 2.]]
    _same(lambda M, t: t.prod(-1), x)


@pytest.mark.parametrize("f", [
    lambda M, x: x.cumprod(-1), lambda M, x: x.cumprod(0), lambda M, x: M.logcumsumexp(x, 0),
])
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (1, 4)])
def test_cumprod_logcumsumexp_of_one_or_no_element_pass_the_gradient(f, shape):
    x = np.random.RandomState(5).randn(*shape)
    a = _grads(torch, f, [x], double=True)
    b = _grads(ptcore, f, [x], double=True)
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(v, u, atol=1e-12)


def test_logsumexp_complex_gradient_is_conjugated():
    rs = np.random.RandomState(6)
    x = rs.randn(3, 4) + 1j * rs.randn(3, 4)
    g = rs.randn(3) + 1j * rs.randn(3)
    res = []
    for M in (torch, ptcore):
        t = M.from_numpy(x.copy()).requires_grad_()
        res.append(M.autograd.grad(t.logsumexp(-1), t, M.from_numpy(g.copy()))[0].numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-10)


def test_amax_amin_of_a_nan_slice_give_nan_max_min_median_pick_the_nans():
    x = [[_INF, 1., 2., 0.], [_NAN, 2., 1., 4.], [1., -_INF, 5., -1.], [1., 1., 2., 2.]]
    for f in (lambda M, t: t.amax(0), lambda M, t: t.amin(-1), lambda M, t: t.max(),
              lambda M, t: t.min(), lambda M, t: t.median()):
        _same(f, x)


@pytest.mark.parametrize("f", [
    lambda M, x: M.amin(x, 0), lambda M, x: M.amax(x), lambda M, x: M.nanmedian(x),
    lambda M, x: M.nanmedian(x, 0)[0], lambda M, x: M.median(x),
    lambda M, x: M.fmod(x, x), lambda M, x: M.fmod(x, 2.), lambda M, x: M.remainder(x, x),
    lambda M, x: M.remainder(x, 2.),
])
def test_grad_fn_names_as_torch(f):
    a = f(torch, torch.ones(2, 3, requires_grad=True))
    b = f(ptcore, ptcore.ones(2, 3, requires_grad=True))
    assert type(b.grad_fn).__name__ == type(a.grad_fn).__name__
