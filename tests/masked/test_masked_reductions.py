"""ptcore.masked's reductions and normalizations against torch.masked:
values, dtypes, shapes, fully masked-out slices, and gradients."""
import numpy as np
import pytest

import ptcore
from ptcore import masked

torch = pytest.importorskip("torch")


def _data(shape=(4, 5), seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    m = rng.random(shape) < 0.6
    m[1, :] = False            # a fully masked-out row
    m[:, 2] = False            # and a fully masked-out column
    return x, m


def _check(p, t, rtol=1e-6, atol=1e-9):
    assert tuple(p.shape) == tuple(t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


def _both(x, m, requires_grad=False):
    px = ptcore.tensor(x, requires_grad=requires_grad)
    tx = torch.tensor(x, requires_grad=requires_grad)
    return px, ptcore.tensor(m), tx, torch.tensor(m)


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]
DIMS = [None, 0, 1, -1, (0, 1), (1,)]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduction_values_and_grads(op, dim, keepdim):
    x, m = _data()
    px, pm, tx, tm = _both(x, m, requires_grad=True)
    pr = getattr(masked, op)(px, dim=dim, keepdim=keepdim, mask=pm)
    tr = getattr(torch.masked, op)(tx, dim=dim, keepdim=keepdim, mask=tm)
    _check(pr, tr)
    w = np.random.default_rng(1).standard_normal(tuple(tr.shape))
    (pr * ptcore.tensor(w)).sum().backward()
    (tr * torch.tensor(w)).sum().backward()
    _check(px.grad, tx.grad)
    # zero at masked-out positions (var/std: nan in fully masked-out slices, as torch)
    assert np.all(np.nan_to_num(px.grad.numpy())[~m] == 0)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_without_mask(op):
    x, _ = _data()
    _check(getattr(masked, op)(ptcore.tensor(x), dim=1),
           getattr(torch.masked, op)(torch.tensor(x), dim=1))


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "mean"])
def test_reduction_dtype_argument(op):
    x, m = _data(dtype=np.float32)
    px, pm, tx, tm = _both(x, m)
    _check(getattr(masked, op)(px, 1, dtype=ptcore.float64, mask=pm),
           getattr(torch.masked, op)(tx, 1, dtype=torch.float64, mask=tm))


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "argmax", "argmin"])
@pytest.mark.parametrize("npdtype", [np.int32, np.int64, np.int8])
def test_integer_reductions_and_identities(op, npdtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 5, (3, 4)).astype(npdtype)
    m = rng.random((3, 4)) < 0.5
    m[0] = False
    for dim in (None, 0, 1) if op.startswith("arg") else (None, 0, 1, (0, 1)):
        _check(getattr(masked, op)(ptcore.tensor(x), dim, mask=ptcore.tensor(m)),
               getattr(torch.masked, op)(torch.tensor(x), dim, mask=torch.tensor(m)))


def test_fully_masked_identities():
    x = np.ones((2, 3))
    m = np.zeros((2, 3), bool)
    px, pm, tx, tm = _both(x, m)
    for op in REDUCTIONS:
        _check(getattr(masked, op)(px, dim=1, mask=pm),
               getattr(torch.masked, op)(tx, dim=1, mask=tm))
    assert masked.sum(px, 1, mask=pm).tolist() == [0.0, 0.0]
    assert masked.amax(px, 1, mask=pm).tolist() == [float("-inf")] * 2
    assert masked.amin(px, 1, mask=pm).tolist() == [float("inf")] * 2
    assert masked.prod(px, 1, mask=pm).tolist() == [1.0, 1.0]
    assert np.isnan(masked.mean(px, 1, mask=pm).numpy()).all()
    _check(masked.norm(px, float("-inf"), 1, mask=pm),
           torch.masked.norm(tx, float("-inf"), 1, mask=tm))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(op, dim, keepdim):
    x, m = _data()
    px, pm, tx, tm = _both(x, m)
    _check(getattr(masked, op)(px, dim=dim, keepdim=keepdim, mask=pm),
           getattr(torch.masked, op)(tx, dim=dim, keepdim=keepdim, mask=tm))
    _check(getattr(masked, op)(px, dim, keepdim=keepdim, dtype=ptcore.int64, mask=pm),
           getattr(torch.masked, op)(tx, dim, keepdim=keepdim, dtype=torch.int64, mask=tm))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median(dim, keepdim):
    x, m = _data()
    px, pm, tx, tm = _both(x, m, requires_grad=True)
    pr = masked.median(px, dim, keepdim=keepdim, mask=pm)
    tr = torch.masked.median(tx, dim, keepdim=keepdim, mask=tm)
    _check(pr, tr)
    pr.nansum().backward()
    tr.nansum().backward()
    _check(px.grad, tx.grad)


def test_median_integer():
    x = np.array([[3, 1, 2], [5, 4, 6]], dtype=np.int64)
    m = np.array([[True, True, False], [False, True, True]])
    _check(masked.median(ptcore.tensor(x), 1, mask=ptcore.tensor(m)),
           torch.masked.median(torch.tensor(x), 1, mask=torch.tensor(m)))
    m[0] = False
    with pytest.raises(ValueError):
        masked.median(ptcore.tensor(x), 1, mask=ptcore.tensor(m))
    with pytest.raises(ValueError):
        torch.masked.median(torch.tensor(x), 1, mask=torch.tensor(m))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalizations_and_cumulative(op, dim):
    x, m = _data()
    px, pm, tx, tm = _both(x, m, requires_grad=True)
    pr = getattr(masked, op)(px, dim, mask=pm)
    tr = getattr(torch.masked, op)(tx, dim, mask=tm)
    _check(pr, tr)
    w = np.random.default_rng(2).standard_normal(x.shape)
    keep = np.isfinite(tr.detach().numpy())
    (ptcore.where(ptcore.tensor(keep), pr, 0.) * ptcore.tensor(w)).sum().backward()
    (torch.where(torch.tensor(keep), tr, 0.) * torch.tensor(w)).sum().backward()
    _check(px.grad, tx.grad)
    assert np.all(px.grad.numpy()[~m] == 0)


@pytest.mark.parametrize("op", ["cumsum", "softmax", "log_softmax", "softmin"])
def test_normalization_dtype(op):
    x, m = _data(dtype=np.float32)
    px, pm, tx, tm = _both(x, m)
    _check(getattr(masked, op)(px, 1, dtype=ptcore.float64, mask=pm),
           getattr(torch.masked, op)(tx, 1, dtype=torch.float64, mask=tm))


@pytest.mark.parametrize("ord", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("dim", [0, 1])
def test_normalize(ord, dim):
    x, m = _data()
    px, pm, tx, tm = _both(x, m, requires_grad=True)
    pr = masked.normalize(px, ord, dim, mask=pm)
    tr = torch.masked.normalize(tx, ord, dim, mask=tm)
    _check(pr, tr)
    pr.sum().backward()
    tr.sum().backward()
    _check(px.grad, tx.grad)


@pytest.mark.parametrize("ord", [1.0, float("inf"), 0.5])
def test_norm_orders(ord):
    x, m = _data()
    px, pm, tx, tm = _both(x, m)
    _check(masked.norm(px, ord, 1, mask=pm), torch.masked.norm(tx, ord, 1, mask=tm))


@pytest.mark.parametrize("kw", [{}, {"unbiased": False}, {"unbiased": True}, {"correction": 0},
                                {"correction": 2}])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_corrections(op, kw):
    x, m = _data()
    px, pm, tx, tm = _both(x, m)
    for dim in (None, 1):
        _check(getattr(masked, op)(px, dim, mask=pm, **kw),
               getattr(torch.masked, op)(tx, dim, mask=tm, **kw))


def test_var_integer_input_gives_float32():
    x = np.arange(12).reshape(3, 4)
    m = (x % 3) != 0
    _check(masked.var(ptcore.tensor(x), 1, mask=ptcore.tensor(m)),
           torch.masked.var(torch.tensor(x), 1, mask=torch.tensor(m)))


def test_logaddexp():
    x, m = _data()
    y, n = _data(seed=5)
    px, pm, tx, tm = _both(x, m, requires_grad=True)
    py, pn, ty, tn = _both(y, n, requires_grad=True)
    pr = masked.logaddexp(px, py, input_mask=pm, other_mask=pn)
    tr = torch.masked.logaddexp(tx, ty, input_mask=tm, other_mask=tn)
    _check(pr, tr)
    keep = np.isfinite(tr.detach().numpy())
    ptcore.where(ptcore.tensor(keep), pr, 0.).sum().backward()
    torch.where(torch.tensor(keep), tr, 0.).sum().backward()
    _check(px.grad, tx.grad)
    _check(py.grad, ty.grad)


def test_broadcast_mask():
    x, _ = _data()
    mrow = np.array([True, False, True, True, False])
    px, pm, tx, tm = _both(x, mrow)
    for op in ("sum", "amax", "mean", "var"):
        _check(getattr(masked, op)(px, 0, mask=pm), getattr(torch.masked, op)(tx, 0, mask=tm))
    _check(masked.softmax(px, 1, mask=pm), torch.masked.softmax(tx, 1, mask=tm))


def test_errors():
    x = ptcore.ones(2, 3)
    with pytest.raises(IndexError):
        masked.sum(x, 2, mask=ptcore.ones(2, 3, dtype=ptcore.bool))
    with pytest.raises(IndexError):
        masked.sum(x, mask=ptcore.ones(1, 2, 3, dtype=ptcore.bool))
    with pytest.raises(RuntimeError):
        masked.sum(x, (0, 0), mask=ptcore.ones(2, 3, dtype=ptcore.bool))
    with pytest.raises(ValueError):
        masked.mean(ptcore.ones(2, 3, dtype=ptcore.int64), mask=ptcore.ones(2, 3, dtype=ptcore.bool))
    # the oracle agrees on these error types
    tx = torch.ones(2, 3)
    with pytest.raises(IndexError):
        torch.masked.sum(tx, 2, mask=torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError):
        torch.masked.mean(torch.ones(2, 3, dtype=torch.int64), mask=torch.ones(2, 3, dtype=torch.bool))


def test_sum_small_int_promotes_to_int64():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    m = x % 2 == 0
    r = masked.sum(ptcore.tensor(x), 1, mask=ptcore.tensor(m))
    assert r.dtype is ptcore.int64
    assert r.tolist() == [2, 4]
    assert masked.sum(ptcore.tensor(m), mask=ptcore.tensor(m)).dtype is ptcore.int64


def _edge_cases(lib, M):
    """Calls whose results (or exception types) must agree between libraries."""
    x0 = lib.tensor(2.5)
    x = lib.arange(6.).reshape(2, 3)
    e = lib.zeros(0, 3)
    em = lib.ones(0, 3, dtype=lib.bool)
    cases = []
    for op in ("sum", "amax", "mean", "prod", "norm", "var", "logsumexp"):
        cases.append(lambda op=op: getattr(M, op)(x0, mask=lib.tensor(False)))
        cases.append(lambda op=op: getattr(M, op)(x0, dim=0, mask=lib.tensor(True)))
    for op in ("sum", "amax", "mean"):
        cases.append(lambda op=op: getattr(M, op)(e, dim=1, mask=em))
        cases.append(lambda op=op: getattr(M, op)(e, dim=0, mask=em))
    cases += [
        lambda: M.sum(x, None, keepdim=True, mask=x > 2),
        lambda: M.amax(x, [0, 1], keepdim=True, mask=x > 2),
        lambda: M.argmax(x, None, keepdim=True, mask=x > 2),
        lambda: M.sum(x, mask=lib.tensor([1, 0, 1])),            # a non-bool mask
        lambda: M.sum(x, mask=lib.tensor([True, False])),        # not broadcastable
        lambda: M.cumsum(x.int(), 1, mask=x > 2),
        lambda: M.cumprod(x.long(), 0, mask=x > 2),
        lambda: M.logsumexp(x.int(), 1, mask=x > 2),
        lambda: M.amax(lib.tensor([True, False]), mask=lib.tensor([True, False])),
        lambda: M.median(x, mask=x > 2),
        lambda: M.norm(x, 2, 1, mask=x > 2, dtype=lib.float64),
        lambda: M.mean(x.int(), 1, dtype=lib.float64, mask=x > 1),
        lambda: M.normalize(x, 2.0, 1, mask=x > 1, eps=0.5),
        lambda: M.sum(lib.tensor([[1 + 2j, 3j]]), 1, mask=lib.tensor([[True, False]])),
        lambda: M.var(lib.tensor([[1 + 2j, 3j, 1.]]), 1, mask=lib.tensor([[True, True, False]])),
    ]
    out = []
    for f in cases:
        try:
            r = f()
            out.append((str(r.dtype).split(".")[-1], tuple(r.shape), r.tolist()))
        except Exception as exc:                   # the exception type is compared
            out.append(type(exc).__name__)
    return out


def test_edge_cases_match_torch():
    p = _edge_cases(ptcore, masked)
    t = _edge_cases(torch, torch.masked)
    assert len(p) == len(t)
    for a, b in zip(p, t):
        if isinstance(a, tuple) and isinstance(b, tuple):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(np.asarray(a[2]), np.asarray(b[2]), rtol=1e-6,
                                       equal_nan=True)
        else:
            assert a == b


def test_sparse_input_is_rejected():
    s = ptcore.tensor([[1., 0.], [0., 2.]]).to_sparse()
    with pytest.raises(ValueError, match="sparse"):
        masked.sum(s, mask=ptcore.ones(2, 2, dtype=ptcore.bool))
