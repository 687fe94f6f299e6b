"""Differences from torch found by differential fuzzing of indexing,
reductions, sorting and scatter-type ops (each test pins one fix)."""
import math
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _p(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _same(t, p):
    assert str(t.dtype).split(".")[1] == str(p.dtype).split(".")[1]
    assert tuple(t.shape) == tuple(p.shape)
    if t.dtype == torch.bfloat16:
        t, p = t.float(), p.float()
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-9,
                               equal_nan=True)


def _raises_same(ft, fp):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ep:
        fp()
    assert isinstance(ep.value, type(et.value)), (et.value, ep.value)


@pytest.mark.parametrize("take_sqrt", [False, True])
def test_complex_var_with_no_degrees_of_freedom_is_nan_when_a_part_has_no_spread(take_sqrt):
    t = torch.tensor([[1 + 1j, 1 + 2j], [1 + 1j, 3 + 1j], [1 + 2j, 4 + 0j]])
    p = _p(t)
    ft, fp = (torch.std, ptcore.std) if take_sqrt else (torch.var, ptcore.var)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(ft(t, 1, correction=2), fp(p, 1, correction=2))
        _same(ft(t, correction=6), fp(p, correction=6))
        tv, tm = torch.var_mean(t, 1, correction=3, keepdim=True)
        pv, pm = ptcore.var_mean(p, 1, correction=3, keepdim=True)
    _same(tv, pv)
    _same(tm, pm)


def test_nanmean_of_empty_with_complex_dtype_is_nan():
    for dim in (None, 1, []):
        t = torch.nanmean(torch.zeros(2, 0), dim, dtype=torch.complex128)
        p = ptcore.nanmean(ptcore.zeros(2, 0), dim, dtype=ptcore.complex128)
        _same(t, p)


@pytest.mark.parametrize("dt", ["bool", "complex64"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_refuses_bool_and_complex(dt, include_self):
    def call(mk):
        d = getattr(mk, dt)
        return mk.zeros(3, dtype=d).index_reduce(0, mk.tensor([0, 2]), mk.ones(2, dtype=d), "amax",
                                                  include_self=include_self)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda: call(torch), lambda: call(ptcore))
        # the dtype is refused before the indices are checked
        d = ptcore.complex64
        with pytest.raises(NotImplementedError):
            ptcore.zeros(3, dtype=d).index_reduce(0, ptcore.tensor([0, 5]), ptcore.ones(2, dtype=d),
                                                   "prod", include_self=include_self)


@pytest.mark.parametrize("sshape,oshape,idx", [((), (1,), [0]), ((3,), (), [0]), ((3,), (), [0, 1]),
                                               ((1,), (), [0]), ((), (2,), [0, 0]),
                                               ((), (), [0, 0]), ((3,), (2,), [1])])
def test_index_reduce_shape_checks(sshape, oshape, idx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda: torch.zeros(sshape).index_reduce(0, torch.tensor(idx), torch.ones(oshape), "amax"),
                     lambda: ptcore.zeros(sshape).index_reduce(0, ptcore.tensor(idx), ptcore.ones(oshape), "amax"))
        t = torch.zeros(()).index_reduce(0, torch.tensor([0]), torch.ones(()), "amax")
        p = ptcore.zeros(()).index_reduce(0, ptcore.tensor([0]), ptcore.ones(()), "amax")
        _same(t, p)


def test_diff_with_n_zero_ignores_prepend_and_append():
    t = torch.tensor([1, 2, 4])
    p = _p(t)
    _same(torch.diff(t, 0, prepend=torch.tensor([7]), append=torch.tensor([9, 9])),
          ptcore.diff(p, 0, prepend=ptcore.tensor([7]), append=ptcore.tensor([9, 9])))
    # ... but still checked
    _raises_same(lambda: torch.diff(t, 0, prepend=torch.tensor([[7]])),
                 lambda: ptcore.diff(p, 0, prepend=ptcore.tensor([[7]])))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_histogram_with_bin_count_refuses_16_bit_floats(dt):
    t = torch.tensor([0., 1, 2]).to(getattr(torch, dt))
    p = ptcore.tensor([0., 1, 2]).to(getattr(ptcore, dt))
    _raises_same(lambda: torch.histogram(t, 2), lambda: ptcore.histogram(p, 2))
    _raises_same(lambda: torch.histogramdd(t.reshape(3, 1), [3]),
                 lambda: ptcore.histogramdd(p.reshape(3, 1), [3]))
    # bin edges of the 16-bit type are accepted
    te = torch.tensor([0., 1.5, 2]).to(t.dtype)
    _same(torch.histogram(t, te).hist, ptcore.histogram(p, ptcore.tensor([0., 1.5, 2]).to(p.dtype)).hist)


def test_histogram_with_a_single_edge_raises():
    t, p = torch.tensor([0., 1, 2]), ptcore.tensor([0., 1, 2])
    _raises_same(lambda: torch.histogram(t, torch.tensor([1.])),
                 lambda: ptcore.histogram(p, ptcore.tensor([1.])))
    _raises_same(lambda: torch.histogramdd(t.reshape(3, 1), [torch.tensor([1.])]),
                 lambda: ptcore.histogramdd(p.reshape(3, 1), [ptcore.tensor([1.])]))


def test_histogramdd_and_histogram_edge_shapes():
    # points in no dimensions: torch's 0-d count
    _same(torch.histogramdd(torch.ones(2, 0), 3).hist, ptcore.histogramdd(ptcore.ones(2, 0), 3).hist)
    # histogram flattens input and weight: only their element counts must agree
    _same(torch.histogram(torch.ones(2, 3), 2, weight=torch.ones(3, 2)).hist,
          ptcore.histogram(ptcore.ones(2, 3), 2, weight=ptcore.ones(3, 2)).hist)
    _raises_same(lambda: torch.histogram(torch.ones(2, 3), 2, weight=torch.ones(5)),
                 lambda: ptcore.histogram(ptcore.ones(2, 3), 2, weight=ptcore.ones(5)))


@pytest.mark.parametrize("xshape,idx,dim", [((2, 3), [[-1, 0]], 1), ((1, 4), [[0, 1], [3, 3]], 1),
                                            ((1, 4), [0, 3, 3], None), ((2, 2, 1), [[[0, 1, 5]]], 2),
                                            ((3, 1, 4), [[[1], [0]]], 2)])
def test_take_along_dim_backward_with_broadcast_and_wrapped_indices(xshape, idx, dim):
    n = int(np.prod(xshape))
    xt = torch.arange(n, dtype=torch.float64).reshape(xshape).requires_grad_(True)
    xp = ptcore.arange(n, dtype=ptcore.float64).reshape(xshape).requires_grad_(True)
    yt = torch.take_along_dim(xt, torch.tensor(idx), dim)
    yp = ptcore.take_along_dim(xp, ptcore.tensor(idx), dim)
    _same(yt, yp)
    gy = torch.arange(yt.numel(), dtype=torch.float64).reshape(yt.shape) + 1
    yt.backward(gy)
    yp.backward(_p(gy))
    _same(xt.grad, xp.grad)
    assert yp.grad_fn.name() == yt.grad_fn.name()
