"""ptcore.masked.MaskedTensor against torch.masked.MaskedTensor: creation,
elementwise ops, reductions, shape ops, where/softmax, repr, errors,
autograd and the MaskedTensor tutorials."""
import gc
import warnings

import numpy as np
import pytest

import ptcore
from ptcore import masked
from ptcore.masked import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*is not implemented (in __torch_dispatch__ )?for"),
              pytest.mark.filterwarnings("ignore:It is not recommended:UserWarning")]


def _pair(x, m, requires_grad=False):
    """The same MaskedTensor in ptcore and in torch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        p = masked_tensor(ptcore.tensor(x), ptcore.tensor(m), requires_grad=requires_grad)
        t = torch.masked.masked_tensor(torch.tensor(x), torch.tensor(m),
                                       requires_grad=requires_grad)
    return p, t


def _data(shape=(3, 4), seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 2.0, shape).astype(dtype)
    m = rng.random(shape) < 0.6
    m[0] = False                # a fully masked-out row
    m[-1, 0] = True
    return x, m


def _same(p, t, rtol=1e-6, atol=1e-9):
    """Equal masks, equal data where masked in, same shape and dtype."""
    assert is_masked_tensor(p), type(p)
    assert isinstance(t, torch.masked.MaskedTensor)
    assert tuple(p.shape) == tuple(t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    pm = p.get_mask().numpy()
    np.testing.assert_array_equal(pm, t.get_mask().numpy())
    pd = p.get_data().detach().numpy()
    td = t.get_data().detach().numpy()
    np.testing.assert_allclose(pd[pm], td[pm], rtol=rtol, atol=atol, equal_nan=True)


def test_creation_warns_and_copies():
    x = ptcore.tensor([1.0, 2.0, 3.0])
    m = ptcore.tensor([True, False, True])
    with pytest.warns(UserWarning, match="prototype stage"):
        mt = masked_tensor(x, m)
    with pytest.warns(UserWarning, match="prototype stage"):
        MaskedTensor(x, m)
    assert isinstance(mt, ptcore.Tensor) and is_masked_tensor(mt)
    assert not is_masked_tensor(x)
    assert mt.shape == (3,) and mt.dtype is ptcore.float32 and mt.device.type == "cpu"
    assert mt.get_mask().tolist() == [True, False, True]
    assert mt.get_data().tolist() == [1.0, 2.0, 3.0]
    x[0] = 10.0
    assert mt.get_data().tolist() == [1.0, 2.0, 3.0]          # a copy, as torch
    assert mt.to_tensor(-1.0).tolist() == [1.0, -1.0, 3.0]
    assert not mt.requires_grad and not mt.is_sparse
    with pytest.warns(UserWarning, match="requires_grad"):
        masked_tensor(ptcore.ones(2, requires_grad=True), ptcore.ones(2, dtype=ptcore.bool))


def test_creation_errors():
    m = ptcore.tensor([True, False])
    with pytest.raises(TypeError):
        masked_tensor([1.0, 2.0], m)
    with pytest.raises(TypeError):
        masked_tensor(ptcore.ones(2), [True, False])
    with pytest.raises(TypeError):
        masked_tensor(ptcore.ones(2), ptcore.ones(2))              # mask not bool
    with pytest.raises(TypeError):
        masked_tensor(ptcore.ones(2, dtype=ptcore.complex64), m)   # unsupported dtype
    with pytest.raises(ValueError):
        masked_tensor(ptcore.ones(3), m)
    with pytest.raises(ValueError):
        masked_tensor(ptcore.ones(2, 1), m)
    # the oracle's error types
    with pytest.raises(TypeError):
        torch.masked.masked_tensor(torch.ones(2), torch.ones(2))
    with pytest.raises(ValueError):
        torch.masked.masked_tensor(torch.ones(3), torch.tensor([True, False]))


def test_repr_matches_torch():
    x, m = _data()
    for xs, ms in ((x, m), (x[1], m[1]), (np.arange(6).reshape(2, 3), m[:2, :3]),
                   (np.array(3.5), np.array(True)), (np.array(3.5), np.array(False)),
                   (np.arange(8.).reshape(2, 2, 2), np.arange(8).reshape(2, 2, 2) % 3 == 0),
                   (np.array([True, False, True]), np.array([True, True, False]))):
        p, t = _pair(xs, ms)
        assert repr(p) == repr(t)
        assert str(p) == str(t)


UNARY = ["abs", "exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "neg", "reciprocal",
         "rsqrt", "square", "floor", "ceil", "trunc", "sign", "expm1", "log1p", "atan",
         "asinh", "erf", "isnan", "signbit", "frac", "rad2deg", "lgamma", "digamma", "exp2",
         "log2", "log10", "sinc", "positive", "nan_to_num", "logit", "i0"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    x, m = _data()
    p, t = _pair(x, m)
    _same(getattr(ptcore, name)(p), getattr(torch, name)(t))
    _same(getattr(p, name)(), getattr(t, name)())


@pytest.mark.parametrize("name", ["exp_", "abs_", "sqrt_", "neg_", "clamp_"])
def test_unary_inplace(name):
    x, m = _data()
    p, t = _pair(x, m)
    args = (0.5, 1.0) if name == "clamp_" else ()
    assert getattr(p, name)(*args) is p
    getattr(t, name)(*args)
    _same(p, t)


def test_unary_with_scalar_arguments():
    x, m = _data()
    p, t = _pair(x, m)
    _same(p.clamp(0.5, 1.0), t.clamp(0.5, 1.0))
    _same(ptcore.clamp(p, min=0.5), torch.clamp(t, min=0.5))
    _same(p.pow(2), t.pow(2))
    _same(p ** 3, t ** 3)
    _same(-p, -t)
    _same(abs(p), abs(t))
    # torch's MaskedTensor lacks relu: ptcore applies it to the data
    r = ptcore.nn.functional.relu(p - 1)
    assert r.get_mask().tolist() == m.tolist()
    np.testing.assert_allclose(r.get_data().numpy()[m], np.maximum(x - 1, 0)[m])


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "fmod", "remainder",
          "logaddexp", "eq", "ne", "lt", "le", "gt", "ge", "floor_divide", "fmax", "fmin"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_between_masked_tensors(name):
    x, m = _data()
    y, _ = _data(seed=4)
    p, t = _pair(x, m)
    q, u = _pair(y, m)
    _same(getattr(ptcore, name)(p, q), getattr(torch, name)(t, u))
    _same(getattr(p, name)(q), getattr(t, name)(u))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "eq", "gt", "maximum"])
def test_binary_with_plain_tensor(name):
    x, m = _data()
    y, _ = _data(seed=4)
    p, t = _pair(x, m)
    _same(getattr(ptcore, name)(p, ptcore.tensor(y)), getattr(torch, name)(t, torch.tensor(y)))
    _same(getattr(ptcore, name)(ptcore.tensor(y), p), getattr(torch, name)(torch.tensor(y), t))


def test_operators_with_scalars():
    x, m = _data()
    p, t = _pair(x, m)
    _same(p + 1, t + 1)
    _same(2 * p, 2 * t)
    _same(p - 0.5, t - 0.5)
    _same(p / 3, t / 3)
    _same(1 / p, 1 / t)
    _same(p // 0.3, t // 0.3)
    _same(p % 0.3, t % 0.3)
    _same(p > 1, t > 1)
    _same(p <= 1, t <= 1)
    _same(p == p, t == t)
    _same(p != 1.0, t != 1.0)
    _same((p > 1) & (p < 1.5), (t > 1) & (t < 1.5))
    _same((p > 1) | (p < 0.5), (t > 1) | (t < 0.5))
    _same(~(p > 1), ~(t > 1))
    # torch's MaskedTensor lacks the reflected subtraction and power: ptcore gives the values
    r = 1 - p
    assert r.get_mask().tolist() == m.tolist()
    np.testing.assert_allclose(r.get_data().numpy()[m], 1 - x[m])
    np.testing.assert_allclose((2 ** p).get_data().numpy()[m], 2 ** x[m])


def test_binary_inplace():
    x, m = _data()
    y, _ = _data(seed=4)
    p, t = _pair(x, m)
    q, u = _pair(y, m)
    assert p.add_(q) is p
    t.add_(u)
    _same(p, t)
    p.mul_(2)
    t.mul_(2)
    _same(p, t)
    p += 1
    t += 1
    _same(p, t)


def test_mismatched_masks_raise_value_error():
    x, m = _data()
    p, t = _pair(x, m)
    q, u = _pair(x, ~m)
    for a, b in ((p, q), (t, u)):
        with pytest.raises(ValueError):
            a + b
        with pytest.raises(ValueError):
            a * b
        with pytest.raises(ValueError):
            a.add_(b)
    with pytest.raises(ValueError):
        p + masked_tensor(ptcore.tensor(1.0), ptcore.tensor(True))


def test_unsupported_ops_raise_type_error():
    x, m = _data()
    p, t = _pair(x, m)
    for f in (lambda a: a.cumsum(0), lambda a: a @ a.mT, lambda a: a.max(),
              lambda a: a.masked_fill(a > 1, 0), lambda a: a.repeat(2, 1),
              lambda a: a.median()):
        with pytest.warns(UserWarning, match="not implemented"), pytest.raises(TypeError):
            f(p)
        with pytest.raises(TypeError):
            f(t)
    with pytest.raises(RuntimeError):
        p.numpy()
    with pytest.raises(RuntimeError):
        p.tolist()


# torch's MaskedTensor cannot run norm (it passes p= to a function without it);
# test_reduction_keywords_torch_rejects checks ptcore's against NumPy
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "argmax", "argmin", "prod",
                                  "var", "std"])
def test_reductions(name):
    x, m = _data()
    p, t = _pair(x, m)
    _same(getattr(p, name)(), getattr(t, name)())
    _same(getattr(ptcore, name)(p), getattr(torch, name)(t))
    dims = [0, 1, -1] + ([] if name in ("argmax", "argmin", "prod") else [(0, 1)])
    for dim in dims:
        for keepdim in (False, True):
            if name in ("var", "std"):   # torch's MaskedTensor takes these positionally
                _same(getattr(p, name)(dim=dim, keepdim=keepdim),
                      getattr(t, name)(dim, keepdim))
            else:
                _same(getattr(p, name)(dim, keepdim=keepdim),
                      getattr(t, name)(dim, keepdim=keepdim))
                _same(getattr(ptcore, name)(p, dim=dim, keepdim=keepdim),
                      getattr(torch, name)(t, dim=dim, keepdim=keepdim))


def test_reduction_dtype_and_fully_masked_slices():
    x, m = _data(dtype=np.float32)
    p, t = _pair(x, m)
    _same(p.sum(1, dtype=ptcore.float64), t.sum(1, dtype=torch.float64))
    r = p.sum(1)
    assert r.get_mask().tolist() == m.any(1).tolist()
    assert r.get_mask().tolist()[0] is False
    _same(p.mean(0), t.mean(0))
    ints = np.arange(12).reshape(3, 4)
    pi, ti = _pair(ints, m)
    _same(pi.sum(), ti.sum())
    _same(pi.sum(0), ti.sum(0))
    _same(pi.amax(1), ti.amax(1))
    with pytest.raises(ValueError):
        pi.mean()
    with pytest.raises(ValueError):
        ti.mean()


def test_reduction_keywords_torch_rejects():
    x, m = _data()
    p, _ = _pair(x, m)
    np.testing.assert_allclose(p.norm().get_data().item(), np.linalg.norm(x[m]))
    np.testing.assert_allclose(ptcore.norm(p, dim=1, keepdim=True).get_data().numpy()[:, 0],
                               [np.linalg.norm(x[i][m[i]]) for i in range(3)])
    np.testing.assert_allclose(p.var(1, unbiased=False).get_data().numpy()[1:],
                               [x[i][m[i]].var() for i in (1, 2)])
    np.testing.assert_allclose(p.std(1, correction=0).get_data().numpy()[1:],
                               [x[i][m[i]].std() for i in (1, 2)])
    np.testing.assert_allclose(p.norm(p=1, dim=1).get_data().numpy(),
                               [np.abs(x[i][m[i]]).sum() for i in range(3)])


def test_all_any():
    x, m = _data()
    p, t = _pair(x, m)
    b, c = p > 1, t > 1
    _same(b.all(), c.all())
    _same(b.all(1), c.all(1))
    r = b.any(1)
    assert r.get_mask().tolist() == m.any(1).tolist()
    expect = [bool((x[i] > 1)[m[i]].any()) for i in range(3)]
    assert [v for v, k in zip(r.get_data().tolist(), m.any(1)) if k] == \
        [v for v, k in zip(expect, m.any(1)) if k]
    assert b.any().get_data().item() == bool((x > 1)[m].any())
    _same(b.all((0, 1)), c.all())
    r = b.any(1, keepdim=True)
    assert tuple(r.shape) == (3, 1) and r.get_mask().tolist() == [[v] for v in m.any(1)]


def test_shape_ops():
    x, m = _data(shape=(2, 3, 4))
    p, t = _pair(x, m)
    _same(p[0], t[0])
    _same(p[:, 1:], t[:, 1:])
    _same(p[ptcore.tensor([1, 0])], t[torch.tensor([1, 0])])
    _same(p[ptcore.tensor([True, False])], t[torch.tensor([True, False])])
    _same(p.select(1, 2), t.select(1, 2))
    _same(p.transpose(0, 2), t.transpose(0, 2))
    _same(p[0].t(), t[0].t())
    _same(p.mT, t.mT)
    _same(p.view(6, 4), t.view(6, 4))
    _same(p.reshape(4, -1), t.reshape(4, -1))
    _same(p.flatten(), t.flatten())
    _same(p.unsqueeze(1), t.unsqueeze(1))
    _same(p[:, :1].expand(2, 3, 4), t[:, :1].expand(2, 3, 4))
    _same(p.narrow(2, 1, 2), t.narrow(2, 1, 2))
    _same(p.view_as(p), t.view_as(t))
    _same(ptcore.cat([p, p], 1), torch.cat([t, t], 1))
    _same(ptcore.stack([p, p]), torch.stack([t, t]))
    for a, b in zip(p.split(2, 2), t.split(2, 2)):
        _same(a, b)
    for a, b in zip(p.chunk(3, 1), t.chunk(3, 1)):
        _same(a, b)
    _same(p.contiguous(), t.contiguous())
    _same(p.to_dense(), t.to_dense())
    _same(p.transpose(0, 1).contiguous(), t.transpose(0, 1).contiguous())
    # torch's MaskedTensor lacks permute/squeeze/unbind: data and mask alike here
    r = p.permute(2, 0, 1)
    assert r.get_mask().tolist() == np.transpose(m, (2, 0, 1)).tolist()
    assert [u.get_mask().tolist() for u in p.unbind(0)] == [m[0].tolist(), m[1].tolist()]


def test_conversions_and_copies():
    x, m = _data()
    p, t = _pair(x, m)
    _same(p.float(), t.float())
    _same(p.to(ptcore.float32), t.to(torch.float32))
    _same(p.int(), t.int())
    _same(p.clone(), t.clone())
    _same(p.detach(), t.detach())
    _same(ptcore.ones_like(p), torch.ones_like(t))
    c = p.clone()
    c.copy_(p * 2)
    _same(c, (t * 2))
    with pytest.raises(ValueError):
        c.copy_(masked_tensor(ptcore.tensor(x), ptcore.tensor(~m)))
    c2, t2 = p.clone(), t.clone()
    c2.copy_(ptcore.tensor(x) + 1)           # a plain source: its values, the mask kept
    t2.copy_(torch.tensor(x) + 1)
    _same(c2, t2)
    plain = ptcore.zeros(x.shape, dtype=ptcore.float64)
    plain.copy_(p)
    np.testing.assert_array_equal(plain.numpy(), x)
    one, one_t = _pair(np.array(2.5), np.array(True))
    assert one.item() == one_t.item() == 2.5
    assert float(one) == 2.5 and bool(one)
    off, off_t = _pair(np.array(2.5), np.array(False))
    with pytest.raises(ValueError):
        off.item()
    with pytest.raises(ValueError):
        off_t.item()


def test_where():
    x, m = _data()
    y, n = _data(seed=7)
    p, t = _pair(x, m)
    q, u = _pair(y, n)
    cond = x > 1
    _same(ptcore.where(ptcore.tensor(cond), p, q), torch.where(torch.tensor(cond), t, u))
    _same(ptcore.where(ptcore.tensor(cond), p, ptcore.tensor(y)),
          torch.where(torch.tensor(cond), t, torch.tensor(y)))
    r = p.where(ptcore.tensor(cond), q)
    _same(r, torch.where(torch.tensor(cond), t, u))


@pytest.mark.parametrize("fn", ["ptcore", "functional", "method"])
def test_softmax(fn):
    x, m = _data()
    p, t = _pair(x, m, requires_grad=True)
    if fn == "ptcore":
        pr, tr = ptcore.softmax(p, 1), torch.softmax(t, 1)
    elif fn == "functional":
        pr, tr = ptcore.nn.functional.softmax(p, dim=1), torch.nn.functional.softmax(t, dim=1)
    else:
        pr, tr = p.softmax(-1), t.softmax(-1)
    _same(pr, tr)
    w = np.random.default_rng(3).standard_normal(x.shape)
    (pr * ptcore.tensor(w)).sum().backward()
    (tr * torch.tensor(w)).sum().backward()
    _same(p.grad, t.grad)
    assert np.isfinite(p.grad.get_data().numpy()).all()


def test_softmin_and_log_softmax():
    x, m = _data()
    p, t = _pair(x, m)
    _same(ptcore.nn.functional.softmin(p, 1), torch.nn.functional.softmin(t, 1))
    _same(ptcore.softmax(p, 0, dtype=ptcore.float32), torch.softmax(t, 0, dtype=torch.float32))
    # torch's MaskedTensor lacks log_softmax: ptcore gives log of its softmax
    r = ptcore.log_softmax(p, 1)
    np.testing.assert_allclose(r.get_data().numpy()[m],
                               np.log(ptcore.softmax(p, 1).get_data().numpy()[m]))
    assert r.get_mask().tolist() == m.tolist()


def _grad_case(op):
    x, m = _data()
    p, t = _pair(x, m, requires_grad=True)
    op(p).backward()
    op(t).backward()
    assert is_masked_tensor(p.grad)
    assert p.grad.get_mask().tolist() == m.tolist()     # the leaf's mask
    # torch's grad mask is what its backward ops make of the masks: never more
    # than the leaf's (positions a slice dropped are masked out there, 0 here)
    pm, tm = p.grad.get_mask().numpy(), t.grad.get_mask().numpy()
    assert not (tm & ~pm).any()
    pd, td = p.grad.get_data().numpy(), t.grad.get_data().numpy()
    np.testing.assert_allclose(pd[tm], td[tm], rtol=1e-6)
    assert np.all(pd[pm & ~tm] == 0)


@pytest.mark.parametrize("op", [
    lambda a: a.sum(),
    lambda a: (a * a).sum(),
    lambda a: a.exp().mean(),
    lambda a: (a.sin() + a.sqrt() / 2).sum(),
    lambda a: a.amax(1).sum(0),
    lambda a: a.var(),
    lambda a: a.prod(),
    lambda a: a.t()[1:].sum(),
    lambda a: a.reshape(-1).sum(),
])
def test_gradients_equal_torch(op):
    _grad_case(op)


def test_tutorial_nan_gradient_where():
    # "Distinguishing between 0 and NaN gradient"
    xs = [-10., -5, 0, 5, 10, 50, 60, 70, 80, 90, 100]
    out = []
    for lib, M in ((ptcore, masked), (torch, torch.masked)):
        x = lib.tensor(xs)
        mask = x < 0
        mx = M.masked_tensor(x, mask, requires_grad=True)
        my = M.masked_tensor(lib.ones_like(x), ~mask, requires_grad=True)
        y = lib.where(mask, lib.exp(mx), my)
        y.sum().backward()
        out.append((mx.grad, my.grad))
    (pgx, pgy), (tgx, tgy) = out
    _same(pgx, tgx)
    _same(pgy, tgy)
    assert repr(pgx) == repr(tgx) and repr(pgy) == repr(tgy)
    assert np.isfinite(pgx.get_data().numpy()[pgx.get_mask().numpy()]).all()


def test_tutorial_overview():
    # "MaskedTensor Overview": reductions that distinguish masked-out from 0
    data = np.arange(24).reshape(2, 3, 4)
    mask = data % 2 == 0
    p, t = _pair(data, mask)
    assert repr(p[0]) == repr(t[0])
    _same(p.sum(), t.sum())
    _same(p.sum(0), t.sum(0))
    _same(p.amax(2), t.amax(2))
    _same(p.float().mean(1), t.float().mean(1))
    _same(ptcore.sum(p, 1), torch.sum(t, 1))
    # the mean that ignores "nan" entries (the nanmean section)
    x = np.arange(16.).reshape(2, 8)
    x[0, 3] = x[1, 5] = np.nan
    p, t = _pair(x, ~np.isnan(x))
    _same(p.mean(1), t.mean(1))
    np.testing.assert_allclose(p.mean(1).get_data().numpy(),
                               torch.nanmean(torch.tensor(x), 1).numpy())
    # amax of a row where everything is masked out stays masked out
    y = np.array([[1., 2.], [3., 4.]])
    mk = np.array([[True, True], [False, False]])
    p, t = _pair(y, mk)
    assert repr(p.amax(1)) == repr(t.amax(1))


def test_tutorial_adagrad_dense():
    # the "sparse semantics" Adagrad step of the tutorial, with dense storage
    rng = np.random.default_rng(0)
    param0 = rng.standard_normal((2, 3))
    grad0 = np.array([[0., 0., 3.], [4., 0., 5.]])
    res = []
    for lib, M in ((ptcore, masked), (torch, torch.masked)):
        param, grad = lib.tensor(param0), lib.tensor(grad0)
        state_sum = lib.full_like(param, 0.5)
        mask = grad != 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            mgrad = M.masked_tensor(grad, mask)
            state_sum = state_sum + mgrad.pow(2).get_data()
            std = M.masked_tensor(state_sum, mask).sqrt().add(1e-10)
        param = param.add((mgrad / std).get_data().masked_fill(~mask, 0), alpha=-0.01)
        res.append(param.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_grad_attribute_and_optimizer():
    x, m = _data()
    p, _ = _pair(x, m, requires_grad=True)
    assert p.grad is None and p.is_leaf
    (p * 3).sum().backward()
    g = p.grad
    assert is_masked_tensor(g) and g.get_mask().tolist() == m.tolist()
    assert np.all(g.get_data().numpy()[m] == 3)
    p.grad = None
    assert p.grad is None


def test_as_masked_tensor_is_differentiable():
    x, m = _data()
    px = ptcore.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        p = as_masked_tensor(px * 2, ptcore.tensor(m))
        t = torch.masked.as_masked_tensor(tx * 2, torch.tensor(m))
    _same(p, t)
    p.exp().sum().backward()
    t.exp().sum().backward()
    _same(px.grad, tx.grad)         # the gradient reaching the data is masked, as torch's


def test_tutorial_nan_gradient_division():
    # "Distinguishing between 0 and NaN gradient": a masked-out division by 0
    res = []
    for lib, M in ((ptcore, masked), (torch, torch.masked)):
        x = lib.tensor([1., 1.], requires_grad=True)
        div = lib.tensor([0., 1.])
        y = x / div
        loss = M.as_masked_tensor(y, div != 0)
        loss.sum().backward()
        res.append(x.grad)
    _same(*res)
    assert repr(res[0]) == repr(res[1])


def test_get_data_is_differentiable():
    x, m = _data()
    p, t = _pair(x, m, requires_grad=True)
    (p.get_data() ** 2).sum().backward()
    (t.get_data() ** 2).sum().backward()
    _same(p.grad, t.grad)


def test_dispatch_layer_off_without_masked_tensors():
    # the __torch_function__ layer serves MaskedTensor only while one exists: the core
    # counts them, and the layer switches itself off once it finds none
    from ptcore._dispatch import torch_function
    gc.collect()
    before = ptcore._C._tf_live_count()
    x, m = _data()
    p, _ = _pair(x, m)
    assert ptcore._C._tf_live_count() > before and torch_function._LAYER.enabled
    r = (p * 2).sum(1)
    del p, r
    gc.collect()
    assert ptcore._C._tf_live_count() == before
    if before == 0 and not torch_function._uncounted and \
            not torch_function._get_current_function_mode_stack():
        y = ptcore.ones(2)
        for _ in range(torch_function._QUIET_CALLS + 2):
            y = y + 1
        assert not torch_function._LAYER.enabled


@pytest.mark.skipif(not ptcore.cuda.is_available(), reason="needs a CUDA device")
def test_cuda():
    x, m = _data()
    p = masked_tensor(ptcore.tensor(x, device="cuda"), ptcore.tensor(m, device="cuda"),
                      requires_grad=True)
    t = torch.masked.masked_tensor(torch.tensor(x), torch.tensor(m), requires_grad=True)
    for a in (p, t):
        (a.softmax(1) * 2).sum().backward()
    assert p.grad.device.type == "cuda" and p.grad.get_mask().device.type == "cuda"
    _same(p.grad.cpu(), t.grad)
    _same(p.sum(0).cpu(), t.sum(0))
    _same(ptcore.where(p.get_mask(), p, p * 2).cpu(), torch.where(t.get_mask(), t, t * 2))
    np.testing.assert_allclose(
        masked.var(ptcore.tensor(x, device="cuda"), 1, mask=ptcore.tensor(m, device="cuda"))
        .cpu().numpy(), torch.masked.var(torch.tensor(x), 1, mask=torch.tensor(m)).numpy(),
        equal_nan=True)


@pytest.mark.parametrize("op", [lambda a: (a * 2).sum(), lambda a: a[:, 1:].sum(),
                                lambda a: (a.softmax(1) * a).sum(),
                                lambda a: a.amax(1).sum(), lambda a: a.mean()])
def test_autograd_grad_returns_masked_gradients(op):
    x, m = _data()
    p, t = _pair(x, m, requires_grad=True)
    (gp,) = ptcore.autograd.grad(op(p), p)
    (gt,) = torch.autograd.grad(op(t), t)
    assert is_masked_tensor(gp) and gp.get_mask().tolist() == m.tolist()
    tm = gt.get_mask().numpy()
    np.testing.assert_allclose(gp.get_data().numpy()[tm], gt.get_data().numpy()[tm], rtol=1e-6)


def test_gradients_accumulate():
    x, m = _data()
    p, t = _pair(x, m, requires_grad=True)
    for a in (p, t):
        (a * 2).sum().backward()
        (a * a).sum().backward()
    _same(p.grad, t.grad)
