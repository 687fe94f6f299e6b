"""Argument parsing of tensor ops as torch 2.13's parser reads it (round 2):
bool parameters take only a Python bool, int dims refuse NumPy arrays, int-list
items refuse bools (and, for sizes, bool tensors), sort/argsort's two overloads,
the window functions' positional order and option checks.  Each case runs in
torch and in ptcore: both accept (same shape and values) or both raise the same
exception type."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _vals(lib):
    return {
        "int": 1, "bool": True, "float": 1.0, "np_int": np.int64(1), "np_float": np.float64(1.0),
        "np_bool": np.bool_(True), "np_0d": np.array(1), "np_1d": np.array([1]),
        "t0": lib.tensor(1), "t1": lib.tensor([1]), "tbool": lib.tensor(True),
        "t0f": lib.tensor(1.0), "none": None, "str": "a", "list": [1],
    }


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:          # noqa: BLE001 -- the type is the result
        return ("raise", type(e))
    if isinstance(r, (tuple, list)):
        r = r[0]
    return ("ok", tuple(r.shape), np.asarray(r.detach().double().numpy()).tolist())


def _check(case, value):
    t = _outcome(lambda: case(torch, _vals(torch)[value]))
    p = _outcome(lambda: case(ptcore, _vals(ptcore)[value]))
    if t[0] == "raise" and p[0] == "raise":
        assert issubclass(p[1], t[1]), (t, p)
    else:
        assert t[:2] == p[:2], (t, p)
        assert np.allclose(t[2], p[2], rtol=1e-6, atol=1e-7), (t, p)


def _x(lib):
    return lib.arange(6.0, dtype=lib.float64).reshape(2, 3)


BOOL_PARAMS = {
    "sum_keepdim": lambda L, v: _x(L).sum(0, v),
    "mean_keepdim_kw": lambda L, v: _x(L).mean(0, keepdim=v),
    "amax_keepdim": lambda L, v: _x(L).amax(0, v),
    "max_keepdim": lambda L, v: _x(L).max(0, v),
    "argmax_keepdim": lambda L, v: _x(L).argmax(0, v),
    "logsumexp_keepdim": lambda L, v: L.logsumexp(_x(L), 0, v),
    "std_keepdim": lambda L, v: _x(L).std(0, keepdim=v),
    "var_unbiased": lambda L, v: _x(L).var(0, v),
    "median_keepdim": lambda L, v: _x(L).median(0, v),
    "kthvalue_keepdim": lambda L, v: _x(L).kthvalue(1, 0, v),
    "all_keepdim": lambda L, v: _x(L).all(0, v),
    "sort_descending": lambda L, v: _x(L).sort(0, v),
    "sort_stable": lambda L, v: _x(L).sort(stable=v),
    "argsort_descending": lambda L, v: L.argsort(_x(L), 0, v),
    "unique_sorted": lambda L, v: _x(L).unique(v),
    "unique_return_counts": lambda L, v: L.unique(_x(L), return_counts=v),
    "nonzero_as_tuple": lambda L, v: _x(L).nonzero(as_tuple=v),
    "searchsorted_right": lambda L, v: L.searchsorted(_x(L), _x(L), right=v),
    "bucketize_out_int32": lambda L, v: L.bucketize(_x(L), L.tensor([1.0, 2.0]), out_int32=v),
    "requires_grad_": lambda L, v: _x(L).requires_grad_(v),
    "hann_periodic": lambda L, v: L.hann_window(4, v),
    "kaiser_periodic_kw": lambda L, v: L.kaiser_window(4, periodic=v),
    "window_requires_grad": lambda L, v: L.blackman_window(4, requires_grad=v),
}


@pytest.mark.parametrize("value", ["int", "bool", "np_bool", "t0", "tbool", "none", "str"])
@pytest.mark.parametrize("case", sorted(BOOL_PARAMS))
def test_bool_parameters_take_only_a_python_bool(case, value):
    if case == "var_unbiased" and value == "none":
        pytest.skip("an explicit None is ptcore's default of unbiased")
    _check(BOOL_PARAMS[case], value)


INT_PARAMS = {
    "softmax_dim": lambda L, v: _x(L).softmax(v),
    "log_softmax_dim": lambda L, v: L.log_softmax(_x(L), v),
    "cumsum_dim_kw": lambda L, v: _x(L).cumsum(dim=v),
    "cumprod_dim": lambda L, v: L.cumprod(_x(L), v),
    "argmax_dim": lambda L, v: _x(L).argmax(v),
    "cummax_dim": lambda L, v: _x(L).cummax(v),
    "sum_dim": lambda L, v: _x(L).sum(v),
    "flip_dims": lambda L, v: _x(L).flip(v),
    "flip_dims_item": lambda L, v: L.flip(_x(L), [v]),
    "repeat_item": lambda L, v: _x(L).repeat(v, 2),
    "repeat_one": lambda L, v: _x(L).repeat(v),
    "tile_one": lambda L, v: _x(L).tile(v),
    "tile_item": lambda L, v: _x(L).tile(v, 2),
    "resize_item": lambda L, v: _x(L).clone().resize_(v, 6),
    "view_item": lambda L, v: _x(L).view(v, 6),
    "expand_item": lambda L, v: _x(L)[:1].expand(v, 3),
    "topk_k": lambda L, v: _x(L).topk(v),
    "kthvalue_k": lambda L, v: _x(L).kthvalue(v),
    "narrow_length": lambda L, v: _x(L).narrow(1, 0, v),
    "kaiser_window_length": lambda L, v: L.kaiser_window(v),
    "hann_window_length": lambda L, v: L.hann_window(v),
}


@pytest.mark.parametrize("value", ["int", "bool", "float", "np_int", "np_0d", "np_1d", "t0",
                                   "t1", "tbool", "t0f", "str"])
@pytest.mark.parametrize("case", sorted(INT_PARAMS))
def test_int_parameters(case, value):
    if case == "sum_dim" and value == "np_0d":
        pytest.skip("torch 2.13 fails an internal assert here (PyList_Check)")
    _check(INT_PARAMS[case], value)


SORT_CALLS = [
    ((0, True), {"stable": True}), ((0,), {"descending": True, "stable": True}),
    ((0, True, True), {}), ((), {"stable": True, "dim": 0, "descending": True}),
    ((), {"stable": None}), ((0, True), {}), ((0,), {"dim": 0}), ((True,), {}),
    ((), {"dim": 0, "descending": True}),
]


@pytest.mark.parametrize("fn", ["sort", "argsort"])
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("call", range(len(SORT_CALLS)))
def test_sort_overloads(fn, form, call):
    args, kw = SORT_CALLS[call]

    def case(L, _):
        x = L.tensor([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]], dtype=L.float64)
        f = getattr(x, fn) if form == "method" else (lambda *a, **k: getattr(L, fn)(x, *a, **k))
        return f(*args, **kw)
    _check(case, "int")


def test_sort_backward_after_keyword_forms():
    x = ptcore.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = x.sort(stable=True, descending=True)
    (v * ptcore.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert v.tolist() == [3.0, 2.0, 1.0]
    assert x.grad.tolist() == [1.0, 3.0, 2.0]


WINDOW_CALLS = [
    ("kaiser_window", (10,), {"beta": 8.0}),
    ("kaiser_window", (10, True, 8.0), {}),
    ("kaiser_window", (10,), {"periodic": False, "beta": 8.0}),
    ("kaiser_window", (10, True, 8), {}),
    ("kaiser_window", (10, True, "a"), {}),
    ("kaiser_window", (10, True, None), {}),
    ("hamming_window", (10,), {"alpha": 0.5}),
    ("hamming_window", (10, True), {"beta": 0.5}),
    ("hamming_window", (10, True, 0.5), {"beta": 0.4}),
    ("hamming_window", (10, True, 1, True), {}),
    ("hann_window", (4,), {"dtype": 1}),
    ("hann_window", (4,), {"dtype": "float32"}),
    ("hann_window", (4,), {"dtype": float}),
    ("hann_window", (4,), {"layout": 1}),
    ("hann_window", (4,), {"layout": "sparse_coo"}),
    ("hann_window", (4,), {"layout": None}),
    ("hann_window", (4,), {"pin_memory": 1}),
    ("hann_window", (4,), {"window_length": 3}),
    ("hann_window", (), {"window_length": 3}),
    ("bartlett_window", (4.0,), {}),
    ("blackman_window", (-1,), {}),
    ("hann_window", (4,), {"dtype": "int64"}),
    ("hann_window", (4,), {"requires_grad": True, "dtype": "float64"}),
]


@pytest.mark.parametrize("call", range(len(WINDOW_CALLS)))
def test_window_function_arguments(call):
    name, args, kw = WINDOW_CALLS[call]

    def case(L, _):
        k = dict(kw)
        if k.get("dtype") in ("int64", "float64"):
            k["dtype"] = getattr(L, k["dtype"])
        if k.get("layout") == "sparse_coo":
            k["layout"] = L.sparse_coo
        r = getattr(L, name)(*args, **k)
        assert r.requires_grad == bool(k.get("requires_grad"))
        return r
    _check(case, "int")


@pytest.mark.parametrize("value", ["int", "bool", "float", "np_int", "t0", "tbool", "str", "list"])
@pytest.mark.parametrize("fn", ["sum", "mean", "nansum", "cumsum", "cumprod", "softmax",
                                "log_softmax"])
def test_dtype_parameters_refuse_non_dtypes(fn, value):
    def case(L, v):
        x = L.ones(2, 3, dtype=L.float64)
        if fn in ("cumsum", "cumprod", "softmax", "log_softmax"):
            return getattr(x, fn)(0, dtype=v)
        return getattr(x, fn)(dtype=v)
    _check(case, value)
