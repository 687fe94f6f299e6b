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


def _out_call(mk, op, x, out_dt, **kw):
    out = mk.zeros(0, dtype=getattr(mk, out_dt))
    r = getattr(mk, op)(x, **kw, out=out)
    assert r is out
    return out


def _x(mk, dt):
    return mk.tensor([[1.5, 2, 0], [3, 0.5, 2]]).to(getattr(mk, dt))


@pytest.mark.parametrize("op,in_dt,out_dt", [
    ("all", "float32", "uint8"), ("any", "float64", "uint8"), ("all", "bool", "uint8"),
    ("any", "int32", "bool"), ("mean", "complex64", "float64"), ("cumsum", "float32", "int64")])
def test_reduction_out_dtypes_torch_accepts(op, in_dt, out_dt):
    kw = {"dim": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _out_call(torch, op, _x(torch, in_dt), out_dt, **kw)
        p = _out_call(ptcore, op, _x(ptcore, in_dt), out_dt, **kw)
    _same(t, p)


@pytest.mark.parametrize("op,in_dt,out_dt", [
    ("nansum", "float32", "int64"), ("nanmean", "float64", "int32"), ("cumsum", "int32", "bool"),
    ("cumprod", "float32", "bool"), ("diff", "float32", "int64"), ("diff", "int64", "bool"),
    ("amax", "complex64", "float32"), ("logcumsumexp", "int32", "float32"),
    ("histc", "int64", "float32")])
def test_reduction_out_dtypes_torch_refuses(op, in_dt, out_dt):
    kw = {} if op == "histc" else {"dim": 1}
    if op in ("amax", "logcumsumexp", "histc"):
        def x(mk):
            return mk.tensor([[1, 2], [3, 4]]).to(getattr(mk, in_dt))
    else:
        def x(mk):
            return _x(mk, in_dt)
    _raises_same(lambda: _out_call(torch, op, x(torch), out_dt, **kw),
                 lambda: _out_call(ptcore, op, x(ptcore), out_dt, **kw))


def test_cumsum_of_0d_into_bool_converts_the_element():
    for dt in ("float32", "int8"):
        t = torch.tensor(0.5).to(getattr(torch, dt))
        p = ptcore.tensor(0.5).to(getattr(ptcore, dt))
        _same(torch.cumsum(t, 0, dtype=torch.bool), ptcore.cumsum(p, 0, dtype=ptcore.bool))
        _same(_out_call(torch, "cumsum", t, "bool", dim=0), _out_call(ptcore, "cumsum", p, "bool", dim=0))


@pytest.mark.parametrize("name,args,kw", [("max", (1,), {}), ("min", (1,), {}), ("median", (1,), {}),
                                          ("nanmedian", (1,), {}), ("mode", (1,), {}),
                                          ("cummax", (1,), {}), ("cummin", (1,), {}),
                                          ("aminmax", (), {"dim": 1}), ("kthvalue", (1, 1), {}),
                                          ("topk", (1,), {})])
def test_values_indices_ops_want_a_tuple_out(name, args, kw):
    _raises_same(lambda: getattr(torch, name)(torch.ones(2, 2), *args, **kw, out=torch.zeros(0)),
                 lambda: getattr(ptcore, name)(ptcore.ones(2, 2), *args, **kw, out=ptcore.zeros(0)))
    t = getattr(torch, name)(torch.ones(2, 2), *args, **kw,
                             out=(torch.zeros(0), torch.zeros(0, dtype=torch.int64)) if name != "aminmax"
                             else (torch.zeros(0), torch.zeros(0)))
    p = getattr(ptcore, name)(ptcore.ones(2, 2), *args, **kw,
                              out=(ptcore.zeros(0), ptcore.zeros(0, dtype=ptcore.int64)) if name != "aminmax"
                              else (ptcore.zeros(0), ptcore.zeros(0)))
    _same(t[0], p[0])


def test_max_min_of_all_elements_take_a_tensor_out():
    for name in ("max", "min"):
        o = ptcore.zeros(0, dtype=ptcore.float64)
        r = getattr(ptcore, name)(ptcore.tensor([[1., 5.]]), out=o)
        assert r is o
        _same(getattr(torch, name)(torch.tensor([[1., 5.]]), out=torch.zeros(0, dtype=torch.float64)), o)
        _raises_same(lambda: getattr(torch, name)(torch.ones(2), out=torch.zeros(0, dtype=torch.int64)),
                     lambda: getattr(ptcore, name)(ptcore.ones(2), out=ptcore.zeros(0, dtype=ptcore.int64)))


def test_var_mean_and_std_mean_have_no_out():
    for name in ("var_mean", "std_mean"):
        _raises_same(lambda: getattr(torch, name)(torch.ones(3), 0, out=(torch.zeros(0), torch.zeros(0))),
                     lambda: getattr(ptcore, name)(ptcore.ones(3), 0, out=(ptcore.zeros(0), ptcore.zeros(0))))


_LCSE_CASES = [
    ([1 + 4j], 0), ([-1 + 4j, 2 - 3j, 0.5 + 3.9j], 0),
    ([[-1 - 4j, 2.9880543 + 0.01j], [-1 + 2j, -1.2 + 2.35j], [4 + 2j, 3.99 + 2.01j]], -1),
    ([[0 - 2j, -1 - 4j, 0j], [4 + 0j, -2 + 1j, 1 - 3j], [1 + 3j, 2 - 4j, -3 + 3.5j]], 0),
    ([-0.5 - 0.5j, -0.5 + 3.5j, -0.5 - 3j], 0),                        # a tie of real parts
    ([2 + 2j, complex(float("inf"), 3), 1 - 1j], 0),                   # from a +inf on: it
    ([12 + 21j, -15 - 18j, 0j, complex(float("nan"), 5), 1j], 0),      # NaN only from there on
    ([complex(-float("inf"), 3), 1 + 5j, complex(-float("inf"), -2)], 0),
]


@pytest.mark.parametrize("data,dim", _LCSE_CASES)
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_logcumsumexp_on_torchs_branch(data, dim, dt):
    t = torch.tensor(data, dtype=getattr(torch, dt))
    p = ptcore.tensor(data, dtype=getattr(ptcore, dt))
    if dt == "complex128":
        p = ptcore.from_numpy(t.numpy().copy())
    tr, pr = torch.logcumsumexp(t, dim), ptcore.logcumsumexp(p, dim)
    assert tr.dtype == torch.complex64 or dt == "complex128"
    np.testing.assert_allclose(pr.numpy(), tr.numpy(), rtol=1e-5, atol=1e-5, equal_nan=True)


def test_complex_logcumsumexp_random_and_its_gradient():
    rng = np.random.default_rng(0)
    a = (rng.integers(-6, 7, (4, 7)) + 1j * rng.integers(-8, 9, (4, 7))) * 0.75
    for dim in (0, 1):
        t = torch.from_numpy(a.copy()).requires_grad_(True)
        p = ptcore.from_numpy(a.copy()).requires_grad_(True)
        tr, pr = torch.logcumsumexp(t, dim), ptcore.logcumsumexp(p, dim)
        np.testing.assert_allclose(pr.detach().numpy(), tr.detach().numpy(), rtol=1e-9, atol=1e-9)
        g = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
        tr.backward(torch.from_numpy(g))
        pr.backward(ptcore.from_numpy(g.copy()))
        np.testing.assert_allclose(p.grad.resolve_conj().numpy(), t.grad.resolve_conj().numpy(),
                                   rtol=1e-9, atol=1e-9)


def test_histogramdd_of_no_dimensions_checks_bins_and_histogram_edges_take_no_range():
    _raises_same(lambda: torch.histogramdd(torch.ones(1, 0), [2]),
                 lambda: ptcore.histogramdd(ptcore.ones(1, 0), [2]))
    _raises_same(lambda: torch.histogram(torch.ones(3), torch.tensor([0., 1]), range=(0., 1.)),
                 lambda: ptcore.histogram(ptcore.ones(3), ptcore.tensor([0., 1]), range=(0., 1.)))


@pytest.mark.parametrize("ydt,xdt", [("float16", "int64"), ("bfloat16", "int32"), ("int64", "int64"),
                                     ("float32", "float64")])
def test_cumulative_trapezoid_with_sample_points_keeps_torchs_dtype(ydt, xdt):
    t = torch.cumulative_trapezoid(torch.tensor([1., 2, 4]).to(getattr(torch, ydt)),
                                   torch.tensor([0, 1, 3]).to(getattr(torch, xdt)))
    p = ptcore.cumulative_trapezoid(ptcore.tensor([1., 2, 4]).to(getattr(ptcore, ydt)),
                                    ptcore.tensor([0, 1, 3]).to(getattr(ptcore, xdt)))
    _same(t, p)


@pytest.mark.parametrize("dt", ["bool", "complex64"])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("idx", [[0, 1], [1, 1], [0, 5]])
def test_index_reduce_bool_and_complex_with_several_dims(dt, reduce, idx):
    # torch's composite for 2+ dims takes bool/complex where its elementwise ops do
    def call(mk):
        x = mk.tensor([[1, 0, 1], [0, 1, 1]]).to(getattr(mk, dt))
        s = mk.tensor([[1, 1], [0, 1]]).to(getattr(mk, dt))
        return x.index_reduce(1, mk.tensor(idx), s, reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = call(torch)
        except Exception:
            _raises_same(lambda: call(torch), lambda: call(ptcore))
            return
        p = call(ptcore)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


def test_numpy_bool_scalar_is_no_index_but_0d_arrays_are():
    x, y = torch.zeros(2, 3), ptcore.zeros(2, 3)
    for idx in (np.bool_(True), (0, np.bool_(False))):
        _raises_same(lambda: x[idx], lambda: y[idx])
        _raises_same(lambda: x.__setitem__(idx, 1.), lambda: y.__setitem__(idx, 1.))
    for idx in (np.array(1), np.array(True), np.array(False), (0, np.array(1)), (np.array(1), [0, 1]),
                [np.bool_(True), np.bool_(False)]):
        _same(x[idx], y[idx])
    x[np.array(True)] = 2
    y[np.array(True)] = 2
    x[np.array(0), np.array(1)] = 5
    y[np.array(0), np.array(1)] = 5
    _same(x, y)


@pytest.mark.parametrize("in_dt", ["float32", "int64", "float16", "float64"])
@pytest.mark.parametrize("out_dt", ["complex64", "complex128"])
def test_logsumexp_of_real_input_into_complex_out(in_dt, out_dt):
    t = _out_call(torch, "logsumexp", _x(torch, in_dt), out_dt, dim=1)
    p = _out_call(ptcore, "logsumexp", _x(ptcore, in_dt), out_dt, dim=1)
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=2e-3 if in_dt == "float16" else 1e-6)


@pytest.mark.parametrize("call", [lambda m, x, o: m.var(x, out=o), lambda m, x, o: m.std(x, out=o),
                                  lambda m, x, o: m.var(x, [1, 0], keepdim=True, out=o),
                                  lambda m, x, o: m.std(x, 1, out=o)])
def test_var_std_of_real_input_into_complex_out(call):
    def go(m):
        o = m.zeros(0, dtype=m.complex128)
        r = call(m, m.tensor([[1., 2, 4], [3, 3, 0]]), o)
        assert r is o
        return o
    try:
        t = go(torch)
    except NotImplementedError:                 # torch: only over all elements
        with pytest.raises(NotImplementedError):
            go(ptcore)
        return
    np.testing.assert_allclose(go(ptcore).numpy(), t.numpy(), rtol=1e-6)


def test_index_reduce_out_must_have_the_input_dtype():
    def call(mk, dt):
        return mk.index_reduce(mk.ones(3), 0, mk.tensor([0]), mk.ones(1) * 2, "prod",
                               out=mk.zeros(0, dtype=getattr(mk, dt)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda: call(torch, "float64"), lambda: call(ptcore, "float64"))
        _same(call(torch, "float32"), call(ptcore, "float32"))


@pytest.mark.parametrize("pw", [1, 2, 3])
def test_norm_except_dim_of_1d_and_0d_inputs(pw):
    t = torch.tensor([3., -4., 1.5], dtype=torch.float64)
    _same(torch.norm_except_dim(t, pw, 0), ptcore.norm_except_dim(_p(t), pw, 0))
    _same(torch.norm_except_dim(t, pw, -1), ptcore.norm_except_dim(_p(t), pw, -1))
    _raises_same(lambda: torch.norm_except_dim(torch.tensor(2.), pw, 0),
                 lambda: ptcore.norm_except_dim(ptcore.tensor(2.), pw, 0))
    m = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    for d in (0, 1):
        _same(torch.norm_except_dim(m, pw, d), ptcore.norm_except_dim(_p(m), pw, d))


def test_mode_checks_out_dtypes_before_the_empty_dim():
    for x in (lambda m: m.zeros(0, 2, 0), lambda m: m.zeros(2, 3)):
        for dts in (("int32", "int64"), ("float32", "int32")):
            def call(m):
                return m.mode(x(m), -1, out=(m.zeros(0, dtype=getattr(m, dts[0])),
                                             m.zeros(0, dtype=getattr(m, dts[1]))))
            _raises_same(lambda: call(torch), lambda: call(ptcore))


@pytest.mark.parametrize("v", [0.5, -0.5, 256.0, 1.0, 0.0])
def test_all_any_into_uint8_out_read_the_input_as_uint8_but_one_element_as_bool(v):
    for op, data, dim in (("all", [[v]], 0), ("any", [[v, 0.]], 1), ("all", [[v, 1.]], 1)):
        t = _out_call(torch, op, torch.tensor(data), "uint8", dim=dim)
        p = _out_call(ptcore, op, ptcore.tensor(data), "uint8", dim=dim)
        _same(t, p)


@pytest.mark.parametrize("in_dt", ["complex64", "complex128"])
@pytest.mark.parametrize("out_dt", ["float32", "float64", "float16", "complex64", "complex128"])
def test_logsumexp_of_complex_input_into_another_out_dtype(in_dt, out_dt):
    data = [[1 + 2j, 3 + 1j], [0.5 - 1j, -2 + 0.5j]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in ({"dim": 1}, {"dim": [0, 1], "keepdim": True}):
            t = _out_call(torch, "logsumexp", torch.tensor(data).to(getattr(torch, in_dt)), out_dt, **kw)
            p = _out_call(ptcore, "logsumexp", ptcore.tensor(data).to(getattr(ptcore, in_dt)), out_dt,
                          **kw)
            np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=2e-3 if out_dt == "float16" else 1e-5)


def test_histogram_density_of_nothing_in_range_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = ptcore.histogram(ptcore.tensor([5.]), 2, range=(0., 1.), density=True).hist
    _same(torch.histogram(torch.tensor([5.]), 2, range=(0., 1.), density=True).hist, p)
