"""Differential cases against torch (round 3 of argument parsing): Number
parameters given NumPy arrays or other objects, memory_format / type()
arguments, explicit ``dim=None`` of the reductions whose all-elements overload
takes no dim, the factories' keyword checks, and ``randint`` / ``repeat_interleave`` /
``cov`` / ``index_put_`` argument types.  Each case runs under torch and ptcore;
the results (dtype, shape, values) or the exception types must agree."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


class _Index:
    def __index__(self):
        return 2


class _Float:
    def __float__(self):
        return 2.0


def _plain(r):
    if isinstance(r, (torch.Tensor, ptcore.Tensor)):
        return ("T", str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().tolist())
    if isinstance(r, (tuple, list)):
        return ("seq", [_plain(x) for x in r])
    if isinstance(r, (torch.dtype, ptcore.dtype)):
        return ("dtype", str(r).split(".")[-1])
    return ("obj", r)


def _run(fn, L):
    try:
        return "ok", _plain(fn(L))
    except Exception as e:     # the exception's type is compared
        return "exc", type(e).__name__


def _same(a, b):
    if isinstance(a, tuple) and len(a) == 4 and a[0] == "T":
        return a[:3] == b[:3] and np.allclose(np.asarray(a[3], dtype=float),
                                              np.asarray(b[3], dtype=float),
                                              rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(a, tuple) and isinstance(b, tuple) and a and a[0] == "seq":
        return b[0] == "seq" and len(a[1]) == len(b[1]) and all(map(_same, a[1], b[1]))
    return a == b


def _check(fn):
    t, p = _run(fn, torch), _run(fn, ptcore)
    assert t[0] == p[0] and _same(t[1], p[1]), (t, p)
    return t


def _x(L):
    return L.tensor([[1., 2., 3.], [4., 5., 6.]])


# -- Number parameters: NumPy 0-d arrays and other objects are not Numbers ----------------
_NOT_NUMBERS = [np.array(2.0), np.array(2), np.array(True), np.array(2, dtype=np.uint8),
                np.array([2.0]), _Index(), _Float()]
_NUMBERS = [np.float64(2.0), np.float32(2.0), np.int32(2), np.bool_(True), 2, 2.5, True]

_SCALAR_OPS = {
    "masked_fill": lambda L, v: _x(L).masked_fill(_x(L) > 2, v),
    "masked_fill_int": lambda L, v: _x(L).long().masked_fill(_x(L) > 2, v),
    "fill_": lambda L, v: _x(L).fill_(v),
    "full": lambda L, v: L.full((2,), v),
    "new_full": lambda L, v: _x(L).new_full((2,), v),
    "full_like": lambda L, v: L.full_like(_x(L), v),
    "index_fill": lambda L, v: _x(L).index_fill(0, L.tensor([0]), v),
    "index_fill_": lambda L, v: _x(L).index_fill_(1, L.tensor([0, 2]), v),
    "index_add_alpha": lambda L, v: _x(L).index_add(0, L.tensor([0]), L.ones(1, 3), alpha=v),
    "scatter_value": lambda L, v: _x(L).scatter(0, L.zeros(1, 3, dtype=L.long), v),
    "scatter__value": lambda L, v: _x(L).scatter_(0, L.zeros(1, 3, dtype=L.long), v),
}


@pytest.mark.parametrize("op", sorted(_SCALAR_OPS))
@pytest.mark.parametrize("i", range(len(_NOT_NUMBERS)))
def test_scalar_param_refuses_numpy_arrays_and_objects(op, i):
    assert _check(lambda L: _SCALAR_OPS[op](L, _NOT_NUMBERS[i]))[0] == "exc"


@pytest.mark.parametrize("op", sorted(_SCALAR_OPS))
@pytest.mark.parametrize("i", range(len(_NUMBERS)))
def test_scalar_param_takes_numbers(op, i):
    _check(lambda L: _SCALAR_OPS[op](L, _NUMBERS[i]))


# -- memory_format and type() ---------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "x.contiguous(memory_format=1)", "x.contiguous(memory_format='x')",
    "x.contiguous(memory_format=None)", "x.contiguous(memory_format=L.strided)",
    "x.clone(memory_format=1)", "x.clone(memory_format=None)", "x.double(memory_format=1)",
    "x.float(memory_format='x')", "x.cpu(memory_format=1)", "x.to(memory_format=1)",
    "L.empty(2, memory_format=1)", "L.empty_like(x, memory_format=1)",
    "x.contiguous(memory_format=L.preserve_format)", "x.contiguous()",
    "x.contiguous(memory_format=L.contiguous_format)",
    "x.type(1)", "x.type(1.0)", "x.type([1])", "x.type(np.dtype('float64'))", "x.type(float)",
    "x.type(np.float64)", "x.type('foo')", "x.type('torch.FloatTensor')", "x.type(L.float64)",
    "x.to(float)", "x.to(int)", "x.to(bool)", "x.to('cpu', float)", "x.to(float, copy=True)",
    "x.to(float, dtype=L.float64)",
])
def test_memory_format_and_type_arguments(src):
    _check(lambda L: eval(src, {"L": L, "np": np, "x": _x(L)}))


# -- explicit dim=None / keepdim without dim --------------------------------------------
@pytest.mark.parametrize("op", ["max", "min", "median", "nanmedian", "prod", "logsumexp",
                                "sum", "mean", "amax", "std", "all", "nansum", "argmax"])
@pytest.mark.parametrize("form", ["fn_pos", "fn_kw", "method_pos", "method_kw", "kd_only",
                                  "none_kd", "plain"])
def test_reduction_dim_none(op, form):
    def f(L):
        x = _x(L)
        fn = getattr(L, op)
        if form == "fn_pos":
            return fn(x, None)
        if form == "fn_kw":
            return fn(x, dim=None)
        if form == "method_pos":
            return getattr(x, op)(None)
        if form == "method_kw":
            return getattr(x, op)(dim=None)
        if form == "kd_only":
            return fn(x, keepdim=True) if op not in ("sum", "mean", "nansum") else fn(x, 1)
        if form == "none_kd":
            return fn(x, dim=None, keepdim=True)
        return fn(x) if op != "logsumexp" else fn(x, 1)
    _check(f)


@pytest.mark.parametrize("op", ["max", "min", "median", "nanmedian", "prod"])
def test_reduction_dim_given_still_works(op):
    _check(lambda L: getattr(L, op)(_x(L), 1))
    _check(lambda L: getattr(L, op)(_x(L), -1, True))
    _check(lambda L: getattr(_x(L), op)(dim=0, keepdim=False))
    _check(lambda L: getattr(L, op)(L.tensor(3.), 0))


def test_reduction_all_elements_autograd():
    for op in ("max", "min", "median", "prod"):
        def f(L):
            x = _x(L).requires_grad_()
            getattr(x, op)().backward()
            return x.grad
        _check(f)


# -- factories' keywords ---------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "L.zeros(2, requires_grad=1)", "L.ones(2, requires_grad=1)", "L.empty(2, requires_grad=1)",
    "L.full((2,), 1., requires_grad=1)", "L.ones(2, requires_grad=None)",
    "L.ones(2, pin_memory=1)", "L.zeros(2, layout=1)", "L.empty(2, layout='strided')",
    "L.full((2,), 1, layout=1)", "L.ones(2, layout=None)", "L.ones(2, layout=L.strided)",
    "L.zeros(2, dtype=L.float64, out=L.empty(2))", "L.ones(2, dtype=L.float64, out=L.empty(2))",
    "L.full((2,), 1, dtype=L.float64, out=L.empty(2))",
    "L.empty(2, dtype=L.float64, out=L.empty(2)).shape",
    "L.zeros(2, dtype=L.float32, out=L.empty(2, dtype=L.int64))",
    "L.zeros(2, dtype=L.float64, out=L.empty(2, dtype=L.float64))",
    "L.zeros(2, out=L.empty(2, dtype=L.int64))", "L.full((2,), 1.5, out=L.empty(2, dtype=L.int64))",
    "L.eye(2, None)", "L.eye(2, m=None)", "L.eye(2)", "L.eye(2, 3)", "L.eye(n=2, m=3)",
])
def test_factory_keywords(src):
    _check(lambda L: eval(src, {"L": L, "np": np}))


# -- randint / randint_like / repeat_interleave / cov / index_put_ ----------------------
@pytest.mark.parametrize("src", [
    "L.randint(True, (2,))", "L.randint(3.0, (2,))", "L.randint(1.0, 3, (2,))",
    "L.randint(0, 3.5, (2,))", "L.randint(np.array(2.0), (2,))", "L.randint(np.float64(3), (2,))",
    "L.randint(np.array(True), (2,))", "L.randint(L.tensor(3.), (2,))",
    "L.randint(np.array(3), (2,)).shape", "L.randint(np.int32(3), (2,)).shape",
    "L.randint(L.tensor(3), (2,)).shape", "L.randint(Idx(), (2,)).shape",
    "L.randint(0, 3, (2,)).shape", "L.randint(low=0, high=3, size=(2,)).shape",
    "L.randint_like(L.ones(2), 5.5)", "L.randint_like(L.ones(2), 2, 5.5)",
    "L.randint_like(L.ones(2), True)", "L.randint_like(L.ones(2), 5).shape",
    "L.randint_like(L.ones(2), 1, 5).dtype",
    "L.ones(3).repeat_interleave(True)", "L.repeat_interleave(L.ones(3), True)",
    "L.ones(3).repeat_interleave(2.0)", "L.ones(3).repeat_interleave(2)",
    "L.cov(x, correction=1.0)", "L.cov(x, correction=0.5)", "L.cov(x, correction=True)",
    "L.cov(x, correction=L.tensor(1))", "L.cov(x, correction=0)",
    "L.ones(3).index_put_((L.tensor([0]),), L.tensor(1.), accumulate=1)",
    "L.ones(3).index_put_((L.tensor([0]),), L.tensor(1.), accumulate=None)",
    "L.ones(3).index_put_((L.tensor([0]),), L.tensor(1.), accumulate=np.bool_(True))",
    "L.index_put(L.ones(3), (L.tensor([0]),), L.tensor(1.), 1)",
    "L.ones(3).index_put((L.tensor([0, 0]),), L.tensor(1.), L.tensor(True))",
    "L.ones(3).index_put_((L.tensor([0, 0]),), L.tensor(1.), accumulate=True)",
    "L.ones(3).index_put((L.tensor([0, 0]),), L.tensor(1.), False)",
])
def test_int_and_bool_arguments(src):
    _check(lambda L: eval(src, {"L": L, "np": np, "Idx": _Index,
                                "x": L.tensor([[1., 2., 4.], [0., 3., 1.]])}))
