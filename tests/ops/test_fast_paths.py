"""The front-ends' fast paths for the common case (cat/stack of CPU tensors of
one dtype, sum/mean/max/min/amax/amin without dtype=/out=, float unary ops,
softmax) against PyTorch, with the cases next to them that must leave the
fast path: mixed dtypes, legacy empty tensors, non-contiguous inputs, 0-d
and empty inputs and their errors, out=, autograd, and a Tensor subclass
with ``__torch_function__``.
"""
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _index

torch = pytest.importorskip("torch")

from ops_oracle import ALL_DTYPES, rand, both, assert_same, same_error  # noqa: E402


def _both(fn, *pairs, exact=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fn(torch, *[p[1] for p in pairs])
        p = fn(ptcore, *[p[0] for p in pairs])
    assert_same(p, r, exact)
    return p, r


def _err(fn, *pairs, words=()):
    return same_error(lambda: fn(torch, *[p[1] for p in pairs]),
                      lambda: fn(ptcore, *[p[0] for p in pairs]), words)


def _both_or_err(fn, *pairs):
    """The same result as torch, or the same exception class where torch raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(torch, *[p[1] for p in pairs])
    except Exception:  # noqa: BLE001
        _err(fn, *pairs)
        return
    _both(fn, *pairs)


# ---------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------
def test_cat_fast_decides_only_the_common_case():
    a, b = ptcore.ones(2, 3), ptcore.zeros(4, 3)
    r = _index.cat_fast([a, b], 0, False)
    assert r is not None and tuple(r.shape) == (6, 3)
    assert _index.cat_fast((a, a), -1, True).shape == (2, 3, 2)
    # everything else is the front-end's business
    assert _index.cat_fast([a, b.double()], 0, False) is None         # promotion
    assert _index.cat_fast([a, ptcore.ones(0)], 0, False) is None     # legacy empty
    assert _index.cat_fast([ptcore.tensor(1.0)], 0, False) is None    # 0-d
    assert _index.cat_fast([a, b], 1, False) is None                  # sizes differ
    assert _index.cat_fast([a, b], 0, True) is None                   # stack: shapes differ
    assert _index.cat_fast([a, a], 2, False) is None                  # dim out of range
    assert _index.cat_fast([a, a], True, False) is None               # bool dim
    assert _index.cat_fast([a, 1], 0, False) is None                  # not a tensor
    assert _index.cat_fast([], 0, False) is None


@pytest.mark.parametrize("name", ALL_DTYPES)
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_stack_dtypes_dims(name, op):
    a, b = both(rand((3, 4), name, 1), name), both(rand((3, 4), name, 2), name)
    for dim in (0, 1, -1, -2):
        _both(lambda L, x, y: getattr(L, op)([x, y, x], dim), a, b)
        _both(lambda L, x, y: getattr(L, op)((x, y), dim=dim), a, b)


def test_cat_noncontiguous_and_views():
    x = both(rand((4, 6), "float32", 1))
    _both(lambda L, t: L.cat([t.t(), t.t()[1:], t[:, ::2].t()], 0), x)
    _both(lambda L, t: L.cat([t[1:3], t[::2]], 0), x)
    _both(lambda L, t: L.stack([t.t(), t.t()], 1), x)
    _both(lambda L, t: L.cat([t.expand(2, 4, 6), t.unsqueeze(0)], 0), x)


def test_cat_mixed_dtypes_promote():
    f, d, i = both(rand((2, 3), "float32", 1)), both(rand((2, 3), "float64", 2)), \
        both(rand((2, 3), "int64", 3), "int64")
    bl = both(rand((2, 3), "bool", 4), "bool")
    _both(lambda L, x, y: L.cat([x, y], 1), f, d)
    _both(lambda L, x, y: L.cat([x, y]), i, f)
    _both(lambda L, x, y: L.stack([x, y]), bl, i)


def test_cat_legacy_empty_and_zero_size():
    x = both(rand((2, 3), "float32", 1))
    e = both(np.zeros((0,), np.float32))
    ed = both(np.zeros((0,), np.float64))
    z = both(np.zeros((2, 0), np.float32))
    _both(lambda L, t, u: L.cat([u, t, u], 0), x, e)
    _both(lambda L, t, u: L.cat([t, u], 1), x, ed)           # skipped, still promotes
    _both(lambda L, u: L.cat([u, u]), e)
    _both(lambda L, t, u: L.cat([t, u, t], 1), x, z)
    _both(lambda L, u: L.stack([u, u], 1), z)


def test_cat_stack_errors():
    x = both(rand((2, 3), "float32", 1))
    y = both(rand((3, 3), "float32", 2))
    s = both(np.float32(1.0).reshape(()))
    _err(lambda L, t: L.cat([t, t], 2), x, words=("Dimension out of range",))
    _err(lambda L, t, u: L.cat([t, u], 1), x, y, words=("Sizes of tensors must match",))
    _err(lambda L, t, u: L.cat([t, u], 0), x, s, words=("zero-dimensional",))
    _err(lambda L, t: L.cat([t, t[0]]), x, words=("same number of dimensions",))
    _err(lambda L, t, u: L.stack([t, u]), x, y, words=("stack expects each tensor to be equal size",))
    _err(lambda L, t: L.stack([t, t], 3), x, words=("Dimension out of range",))
    _err(lambda L: L.cat([]), words=("non-empty",))
    _err(lambda L, t: L.cat([t, 1.0]), x, words=("expected Tensor as element 1",))


def test_cat_stack_out():
    x = both(rand((2, 3), "float32", 1))

    def cat_out(L, t):
        o = L.empty(4, 3, dtype=L.float64)
        r = L.cat([t, t], out=o)
        assert r is o
        return o

    def stack_out(L, t):
        o = L.empty(0)
        L.stack([t, t], 1, out=o)
        return o
    _both(cat_out, x)
    _both(stack_out, x)


def test_cat_stack_autograd():
    for op in ("cat", "stack"):
        g = {}
        for L in (torch, ptcore):
            a = L.arange(6.0).view(2, 3).requires_grad_()
            b = L.ones(2, 3, requires_grad=True)
            r = getattr(L, op)([a, b * 2], 1)
            assert r.requires_grad
            (r * L.arange(float(r.numel())).view(r.shape)).sum().backward()
            g[L] = (a.grad.numpy(), b.grad.numpy())
        np.testing.assert_array_equal(g[ptcore][0], g[torch][0])
        np.testing.assert_array_equal(g[ptcore][1], g[torch][1])


def _logging_subclass(base, log):
    def tf(cls, func, types, args=(), kwargs=None):
        log.append(func.__name__)
        return base.__torch_function__.__func__(cls, func, types, args, kwargs or {})
    return type("Logged", (base,), {"__torch_function__": classmethod(tf)})


def _grads_match(make, f, node):
    """``f(L, a)`` of ``a = make(L)`` requiring grad: torch's node and gradient."""
    g = {}
    for L in (torch, ptcore):
        a = make(L).requires_grad_()
        y = f(L, a)
        assert type(y.grad_fn).__name__ == node
        (y * L.arange(float(y.numel())).view(y.shape)).sum().backward()
        g[L] = a.grad.numpy()
    np.testing.assert_array_equal(g[ptcore], g[torch])


def _subclass_sees_like_torch(make, f):
    """The calls a ``__torch_function__`` subclass of ``make(L)`` sees in
    ``f(L, x)`` (a list of tensors), their types and values, as torch's."""
    res = {}
    for L in (torch, ptcore):
        log = []
        x = make(L).as_subclass(_logging_subclass(L.Tensor, log))
        log.clear()
        outs = f(L, x)
        res[L] = ([type(o).__name__ for o in outs], [n for n in log if n != "__get__"],
                  [o.detach().numpy() for o in outs])
    assert res[ptcore][:2] == res[torch][:2]
    for p, t in zip(res[ptcore][2], res[torch][2]):
        np.testing.assert_array_equal(p, t)


def test_subclass_torch_function_sees_fast_path_ops():
    res = {}
    for L in (torch, ptcore):
        log = []
        Logged = _logging_subclass(L.Tensor, log)
        x = L.arange(6.0).view(2, 3).as_subclass(Logged)
        log.clear()
        outs = [L.cat([x, x]), L.stack([x, x]), x.sum(), x.sum(1), x.mean(), x.max(), x.amax(1),
                L.exp(x), L.relu(x), L.softmax(x, -1)]
        res[L] = ([type(o).__name__ for o in outs], list(log),
                  [o.detach().numpy() if hasattr(o, "detach") else o for o in outs])
    assert res[ptcore][0] == res[torch][0]
    assert [n for n in res[ptcore][1] if n != "__get__"] == \
        [n for n in res[torch][1] if n != "__get__"]
    for p, t in zip(res[ptcore][2], res[torch][2]):
        np.testing.assert_allclose(np.asarray(p), np.asarray(t), rtol=1e-6)


# ---------------------------------------------------------------------------
# clamp by number bounds
# ---------------------------------------------------------------------------
def test_fast_clamp_decides_only_the_common_case():
    from ptcore._ops.kernels import _ewdrv
    a = ptcore.linspace(-2.0, 2.0, 12).view(3, 4)
    r = _ewdrv.fast_clamp(a, -1, 0.5)
    assert r is not None and r.dtype is ptcore.float32 and tuple(r.shape) == (3, 4)
    np.testing.assert_array_equal(r.numpy(), np.clip(a.numpy(), -1, 0.5))
    assert _ewdrv.fast_clamp(a.double(), None, 0.5).dtype is ptcore.float64
    assert _ewdrv.fast_clamp(a.t(), -1, 1) is None                   # not contiguous
    assert _ewdrv.fast_clamp(a.half(), -1, 1) is None                # computed in float32
    assert _ewdrv.fast_clamp(a.to(ptcore.int32), -1, 1) is None      # integer: bound checks
    assert _ewdrv.fast_clamp(a, None, None) is None                  # the front-end's error
    assert _ewdrv.fast_clamp(a, True, None) is None                  # bool bound
    assert _ewdrv.fast_clamp(a, ptcore.tensor(0.0), None) is None    # tensor bound
    assert _ewdrv.fast_clamp(a, 2 ** 63, None) is None               # beyond int64
    assert _ewdrv.fast_clamp(a, 1j, None) is None                    # complex bound
    assert _ewdrv.fast_clamp(1.0, 0, 1) is None


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("n", [7, 1003, 300_001])
def test_clamp_number_bounds_vector_loop(name, n):
    # the dispatched vector loop, its remainder, and (300_001) the split over threads
    v = np.random.default_rng(n).standard_normal(n) * 3
    v[:10] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-45][:min(n, 10)]
    x = both(v.astype(name), name)
    prev = ptcore.get_num_threads()
    ptcore.set_num_threads(2)
    try:
        for lo, hi in ((-1, 1), (-0.5, None), (None, 0.25), (0.0, 1.0), (-1.0, -0.0), (2, -2),
                       (float("nan"), 1), (0, float("nan")), (-float("inf"), float("inf")),
                       (-(2 ** 62), 2 ** 62), (3e38, None), (None, -3e38)):
            p, t = _both(lambda L, u: u.clamp(lo, hi), x)
            np.testing.assert_array_equal(np.signbit(p.numpy()), np.signbit(t.numpy()))
            _both(lambda L, u: L.clamp(u, min=lo, max=hi), x)
            _both(lambda L, u: u.clone().clamp_(lo, hi), x)
        # bounds beyond float32's range: torch's overflow error there, values for float64
        for lo, hi in ((1e39, None), (None, -1e39), (-1e300, 1e300)):
            _both_or_err(lambda L, u: u.clamp(lo, hi), x)
            _both_or_err(lambda L, u: u[::2].clamp(lo, hi), x)
            _both_or_err(lambda L, u: u.clone().clamp_(lo, hi), x)
    finally:
        ptcore.set_num_threads(prev)


def test_clamp_number_bounds_grad_and_subclass():
    _grads_match(lambda L: L.linspace(-2.0, 2.0, 9), lambda L, a: a.clamp(-1, 1), "ClampBackward1")
    _subclass_sees_like_torch(lambda L: L.arange(6.0),
                              lambda L, x: [x.clamp(1, 4), L.clamp(x, min=2.0)])


# ---------------------------------------------------------------------------
# where
# ---------------------------------------------------------------------------
def test_fast_where_decides_only_the_common_case():
    from ptcore._ops.kernels import _ewdrv
    x = ptcore.linspace(-1.0, 1.0, 12).view(3, 4)
    c = x > 0
    r = _ewdrv.fast_where(c, x, 0.0)
    assert r is not None and r.dtype is ptcore.float32
    np.testing.assert_array_equal(r.numpy(), np.where(c.numpy(), x.numpy(), 0.0))
    assert _ewdrv.fast_where(c, 2, x).dtype is ptcore.float32                 # int keeps float32
    assert _ewdrv.fast_where(c, x, -x).dtype is ptcore.float32
    assert _ewdrv.fast_where(c, x.long(), 2).dtype is ptcore.int64
    assert _ewdrv.fast_where(c, x.long(), 0.5) is None       # int tensor, float: promotes
    assert _ewdrv.fast_where(c, c, 1) is None                # bool tensor, int: promotes
    assert _ewdrv.fast_where(c, x, True) is None             # bool number
    assert _ewdrv.fast_where(c, x, 1j) is None               # complex number
    assert _ewdrv.fast_where(c, x, x.double()) is None       # promotion
    assert _ewdrv.fast_where(c, x.half(), 0.0) is None       # computed in float32
    # broadcast or strided operands of one dtype: the general loop, called directly
    for args, ref in [((c, x, ptcore.tensor(0.0)), np.where(c.numpy(), x.numpy(), 0.0)),
                      ((c[:, :1], x, 0.0), np.where(c.numpy()[:, :1], x.numpy(), 0.0)),
                      ((c.t(), x.t(), 0.0), np.where(c.numpy().T, x.numpy().T, 0.0)),
                      ((c.t(), 0.0, x[:1].t()), np.where(c.numpy().T, 0.0, x.numpy()[:1].T))]:
        r = _ewdrv.fast_where(*args)
        assert r is not None and r.dtype is ptcore.float32
        np.testing.assert_array_equal(r.numpy(), ref.astype(np.float32))
    with pytest.raises(RuntimeError, match="must match the size"):
        _ewdrv.fast_where(c, x[:, :3], 0.0)
    assert _ewdrv.fast_where(c, x, ptcore.tensor(0.0, dtype=ptcore.float64)) is None
    assert _ewdrv.fast_where(c.to(ptcore.uint8), x, 0.0) is None
    assert _ewdrv.fast_where(c, 1.0, 0.0) is None
    assert _ewdrv.fast_where(c, None, None) is None


# every kind of number, and ones beyond int8/uint8/int32/float32 ranges (torch's
# overflow errors; -255 fits uint8 as -max)
WHERE_NUMBERS = [0, -3, 2.5, float("nan"), float("-inf"), True, 1 + 2j, 127, -128, 200, -255,
                 -256, 2 ** 40, 1e39, 1e300]


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_where_with_a_number_promotes_as_torch(name):
    # the tensor and the number in either position, contiguous and strided:
    # values and the promoted dtype as torch's, or its exception class
    def c64(L, r):          # a complex32 result (float16 and a complex number), readable
        assert r.dtype != L.complex32 or name == "float16"
        return r.to(L.complex64) if r.dtype == L.complex32 else r
    for shape in ((3, 5), (1003,)):
        x = both(rand(shape, name, 1), name)
        c = both(rand(shape, "bool", 2))
        for v in WHERE_NUMBERS:
            _both_or_err(lambda L, cc, t: c64(L, L.where(cc, t, v)), c, x)
            _both_or_err(lambda L, cc, t: c64(L, L.where(cc, v, t)), c, x)
            _both_or_err(lambda L, cc, t: c64(L, t.where(cc, v)), c, x)
            if len(shape) == 2:
                _both_or_err(lambda L, cc, t: c64(L, L.where(cc.t(), t.t(), v)), c, x)
                _both_or_err(lambda L, cc, t: c64(L, L.where(cc[:, 1:], v, t[:, 1:])), c, x)
        _both(lambda L, cc, t: L.where(cc, t, t.flip(0)), c, x)
        _both(lambda L, cc, t: L.where(cc, t.flip(0), t), c, x)


def test_where_number_large_threads_grad_and_subclass():
    x = both(np.random.default_rng(0).standard_normal(300_001).astype(np.float32))
    c = both(np.random.default_rng(1).random(300_001) < 0.5)
    prev = ptcore.get_num_threads()
    ptcore.set_num_threads(2)
    try:
        _both(lambda L, cc, t: L.where(cc, t, 0.0), c, x)
        _both(lambda L, cc, t: L.where(cc, -1, t), c, x)
    finally:
        ptcore.set_num_threads(prev)
    _grads_match(lambda L: L.linspace(-2.0, 2.0, 9), lambda L, a: L.where(a > 0, a, 0.0),
                 "WhereBackward0")
    _grads_match(lambda L: L.linspace(-2.0, 2.0, 9), lambda L, a: L.where(a < 1, 3.0, a),
                 "WhereBackward0")
    _grads_match(lambda L: L.linspace(-2.0, 2.0, 9), lambda L, a: L.where(a < 1, a, a * 2),
                 "WhereBackward0")
    _subclass_sees_like_torch(lambda L: L.arange(6.0), lambda L, x: [
        L.where(L.arange(6) % 2 == 0, x, 0.0), x.where(L.arange(6) % 2 == 0, -1.0)])


# ---------------------------------------------------------------------------
# topk
# ---------------------------------------------------------------------------
def test_topk_fast_decides_only_the_common_case():
    from ptcore._ops.kernels import _sort
    x = ptcore.linspace(-1.0, 1.0, 12).view(3, 4)
    v, i = _sort.topk_fast(x, 2, -1, True, True)
    assert v.dtype is ptcore.float32 and i.dtype is ptcore.int64 and tuple(v.shape) == (3, 2)
    assert _sort.topk_fast(x, 5, -1, True, True) is None            # k out of range
    assert _sort.topk_fast(x, -1, -1, True, True) is None
    assert _sort.topk_fast(x, 2, 2, True, True) is None             # dim out of range
    assert _sort.topk_fast(x, 2, -3, True, True) is None
    assert _sort.topk_fast(x, 2.0, 1, True, True) is None           # not an int
    assert _sort.topk_fast(x, True, 1, True, True) is None
    assert _sort.topk_fast(x, 2, 1, 1, True) is None                # not a bool
    assert _sort.topk_fast(x > 0, 2, 1, True, True) is None         # bool: the error
    assert _sort.topk_fast(x.to(ptcore.uint16), 2, 1, True, True) is None
    assert _sort.topk_fast(x.to(ptcore.complex64), 2, 1, True, True) is None
    assert _sort.topk_fast(ptcore.tensor(1.0), 1, 0, True, True) is None     # 0-d
    assert _sort.topk_fast(x.tolist(), 2, 1, True, True) is None


@pytest.mark.parametrize("name", [d for d in ALL_DTYPES if d not in ("bool", "complex64",
                                                                      "complex128")])
def test_topk_dtypes_layouts_against_torch(name):
    a = both(rand((4, 7, 5), name, 3), name)
    for dim in (0, 1, 2, -1, -3):
        for k in (0, 1, 3):
            for largest in (True, False):
                _both(lambda L, t: t.topk(k, dim, largest), a)
                _both(lambda L, t: L.topk(t.transpose(0, 2), k, dim=dim, largest=largest), a)
                _both(lambda L, t: t[:, ::2].topk(k, dim=dim, largest=largest, sorted=False), a)
    _both(lambda L, t: t.topk(7, 1), a)
    _both(lambda L, t: t[:, :0].topk(0, 1), a)
    _both(lambda L, t: t[:0].topk(2, 1), a)


def test_topk_errors_out_grad_and_subclass():
    x = both(rand((3, 5), "float32", 4))
    _err(lambda L, t: t.topk(6), x)
    _err(lambda L, t: t.topk(2, dim=2), x)
    _err(lambda L, t: t.topk(2.0), x)
    _err(lambda L, t: (t > 0).topk(2), x)
    _err(lambda L, t: t.to(L.complex64).topk(2), x)
    _err(lambda L, t: t.topk(True), x)
    _both(lambda L, t: t[0, 0].topk(1), x)

    def out(L, t):
        v, i = L.empty(0), L.empty(0, dtype=L.int64)
        r = L.topk(t, 2, out=(v, i))
        assert r[0] is v and r[1] is i
        return v, i
    _both(out, x)
    _grads_match(lambda L: L.tensor([[3.0, 1.0, 2.0, 5.0], [0.0, 4.0, 4.0, 1.0]]),
                 lambda L, a: a.topk(2, dim=1)[0], "TopkBackward0")
    _subclass_sees_like_torch(lambda L: L.arange(6.0).view(2, 3),
                              lambda L, x: [*x.topk(2), *L.topk(x, 1, dim=0)])


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
def test_reduce_fast_decides_only_the_common_case():
    from ptcore._ops.kernels import _reduce
    SUM, MAX = _reduce.OPS["sum"], _reduce.OPS["max"]
    x = ptcore.arange(12).view(3, 4)
    r = _reduce.reduce_fast(x, 1, False, SUM, 0)
    assert r.dtype is ptcore.int64 and r.tolist() == [6, 22, 38]
    assert _reduce.reduce_fast(x.to(ptcore.int8), None, False, SUM, 0).dtype is ptcore.int64
    assert _reduce.reduce_fast(x.t(), -1, True, MAX, 2).tolist() == [[8], [9], [10], [11]]
    assert _reduce.reduce_fast(x.float(), (), False, MAX, 2).item() == 11.0
    assert _reduce.reduce_fast(x, None, False, _reduce.OPS["mean"], 1) is None    # integral mean
    assert _reduce.reduce_fast(x, 2, False, SUM, 0) is None                       # out of range
    # several distinct dims in range (a broadcast gradient summed over its leading dims)
    assert _reduce.reduce_fast(x, (0, 1), False, SUM, 0).item() == 66
    assert _reduce.reduce_fast(x, [1, 0], True, SUM, 0).tolist() == [[66]]
    assert _reduce.reduce_fast(x, [1], False, SUM, 0).tolist() == [6, 22, 38]
    for dims in ((0, 0), (0, -2), (0, 2), (True,), (0, True)):     # repeated, out of range, bool
        assert _reduce.reduce_fast(x, dims, False, SUM, 0) is None, dims
    assert _reduce.reduce_fast(x, True, False, SUM, 0) is None                    # bool dim
    assert _reduce.reduce_fast(ptcore.zeros(0, 2), None, False, MAX, 2) is None   # empty max
    assert _reduce.reduce_fast(ptcore.zeros(2, dtype=ptcore.complex64), None, False, MAX, 2) \
        is None
    assert _reduce.reduce_fast(ptcore.zeros(2, dtype=ptcore.uint16), None, False, SUM, 0) is None
    assert _reduce.reduce_fast([1.0], None, False, SUM, 0) is None


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_reductions_all_dtypes(name):
    x = both(rand((3, 5), name, 1), name)
    exact = not name.startswith(("float", "bfloat", "complex"))
    for dim in (None, 0, 1, -1, (0, 1), ()):
        kw = {} if dim is None else {"dim": dim}
        kwk = {} if dim is None else {"dim": dim, "keepdim": True}
        _both(lambda L, t: t.sum(**kw), x, exact=exact)
        _both(lambda L, t: L.sum(t, **kwk), x, exact=exact)
        if x[1].dtype.is_floating_point or x[1].dtype.is_complex:
            _both(lambda L, t: t.mean(**kw), x, exact=False)
        else:
            _err(lambda L, t: t.mean(**kw), x, words=("mean(): could not infer output dtype",))
        if name.startswith("complex"):
            continue
        if not isinstance(dim, tuple):
            _both(lambda L, t: t.amax(**kw), x)
            _both(lambda L, t: L.amin(t, **kwk), x)
    if not name.startswith("complex"):
        _both(lambda L, t: t.max(), x)
        _both(lambda L, t: L.min(t), x)
    else:
        _err(lambda L, t: t.max(), x)
        _err(lambda L, t: t.amax(), x)


def test_reductions_noncontiguous_0d_empty():
    x = both(rand((4, 6), "float32", 1))
    for f in (lambda L, t: t.t().sum(1), lambda L, t: t[:, ::2].mean(0),
              lambda L, t: t.t().max(), lambda L, t: t[::2].amax(-1), lambda L, t: t.t().sum()):
        _both(f, x, exact=False)
    s = both(np.float32(2.5).reshape(()))
    for f in (lambda L, t: t.sum(), lambda L, t: t.sum(0), lambda L, t: t.mean(-1),
              lambda L, t: t.max(), lambda L, t: t.amax(), lambda L, t: t.amin(0)):
        _both(f, s)
    _err(lambda L, t: t.sum(1), s, words=("Dimension out of range",))
    _err(lambda L, t: t.sum(2), x, words=("Dimension out of range",))
    e = both(np.zeros((0, 3), np.float32))
    _both(lambda L, t: t.sum(), e)
    _both(lambda L, t: t.amax(1), e)
    _err(lambda L, t: t.max(), e, words=("Expected reduction dim to be specified",))
    _err(lambda L, t: t.amax(0), e, words=("Expected reduction dim 0 to have non-zero size",))
    _err(lambda L, t: t.amax(), e)


def test_reductions_dtype_out_other():
    x = both(rand((3, 4), "int32", 1), "int32")
    f = both(rand((3, 4), "float32", 2))
    _both(lambda L, t: t.sum(dtype=L.float64), x)
    _both(lambda L, t: t.mean(dtype=L.float64), x, exact=False)

    def out(L, t):
        o = L.empty(3, dtype=L.float32)
        r = L.sum(t, 1, out=o)
        assert r is o
        o2 = L.empty(4, dtype=L.float32)
        L.amax(t, 0, out=o2)
        return o, o2
    _both(out, f)
    _both(lambda L, t, u: L.max(t, other=u), f, f)
    _both(lambda L, t, u: t.max(u), f, f)
    _both(lambda L, t: t.max(1), f)
    _both(lambda L, t: L.min(t, dim=0, keepdim=True), f)


def test_reductions_autograd():
    g = {}
    for L in (torch, ptcore):
        a = L.arange(12.0).view(3, 4).requires_grad_()
        (a.sum() + a.sum(1).pow(2).sum() + a.mean() + a.max() + a.amax(0).sum()).backward()
        g[L] = a.grad.numpy()
    np.testing.assert_allclose(g[ptcore], g[torch])


# ---------------------------------------------------------------------------
# unary, softmax
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "int32", "bool",
                                  "complex64"])
def test_unary_dtypes(name):
    a = rand((3, 4), name, 1)
    x = both(a if name in ("bool", "int32") else a / 8, name)
    _both(lambda L, t: L.exp(t), x, exact=False)
    _both(lambda L, t: t.t().exp(), x, exact=False)
    if name in ("bool", "complex64"):
        _err(lambda L, t: L.relu(t), x)
    else:
        _both(lambda L, t: L.relu(t), x)
        _both(lambda L, t: t[:, ::2].relu(), x)


def test_fast_unary_decides_only_the_common_case():
    from ptcore._ops import pointwise
    from ptcore._ops.kernels import _ewdrv
    code = pointwise._U["exp"]
    a = ptcore.linspace(-1.0, 1.0, 12).view(3, 4)
    r = _ewdrv.fast_unary(code, a)
    assert r is not None and r.dtype is ptcore.float32 and tuple(r.shape) == (3, 4)
    np.testing.assert_allclose(r.numpy(), np.exp(a.numpy()), rtol=1e-6)
    assert _ewdrv.fast_unary(code, a.t()) is None                  # not contiguous
    assert _ewdrv.fast_unary(code, a.half()) is None               # computed in float32
    assert _ewdrv.fast_unary(code, a.to(ptcore.int32)) is None     # result is float
    assert _ewdrv.fast_unary(code, 1.0) is None
    assert _ewdrv.fast_unary(code, ptcore.tensor(0.5)).shape == ()


@pytest.mark.parametrize("op", ["exp", "relu", "sin", "floor"])
def test_unary_large_threads(op):
    # past the parallel grain: the fast path's split loop
    x = both(np.random.default_rng(0).standard_normal(300_001).astype(np.float32))
    prev = ptcore.get_num_threads()
    ptcore.set_num_threads(2)
    try:
        _both(lambda L, t: getattr(L, op)(t), x, exact=False)
    finally:
        ptcore.set_num_threads(prev)


def test_unary_out_autograd_errors():
    x = both(rand((3, 4), "float32", 1) / 8)

    def out(L, t):
        o = L.empty(3, 4, dtype=L.float64)
        r = L.exp(t, out=o)
        assert r is o
        return o
    _both(out, x, exact=False)
    _err(lambda L: L.exp(1.0))
    g = {}
    for L in (torch, ptcore):
        a = L.linspace(-1.0, 1.0, 7).requires_grad_()
        (L.exp(a) + L.relu(a)).sum().backward()
        g[L] = a.grad.numpy()
    np.testing.assert_allclose(g[ptcore], g[torch], rtol=1e-6)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_softmax(name):
    x = both(rand((3, 5), name, 1) / 8, name)
    for dim in (0, 1, -1, -2):
        _both(lambda L, t: L.softmax(t, dim), x, exact=False)
        _both(lambda L, t: L.log_softmax(t.t(), dim), x, exact=False)
        _both(lambda L, t: L.softmax(t, dim, dtype=L.float64), x, exact=False)
    s = both(np.float32(0.5).reshape(()))
    _both(lambda L, t: L.softmax(t, 0), s, exact=False)
    _both(lambda L, t: L.softmax(t, -1), s, exact=False)
    e = both(np.zeros((0, 3), np.float32))
    _both(lambda L, t: L.softmax(t, 1), e)
    _err(lambda L, t: L.softmax(t, 2), x, words=("Dimension out of range",))
    i = both(rand((3, 5), "int64", 1), "int64")
    _err(lambda L, t: L.softmax(t, 1), i, words=("not implemented for 'Long'",))
