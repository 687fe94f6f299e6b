"""Shape and indexing ops against PyTorch (and NumPy): gather/scatter
family, index_* ops, masks, nonzero, take, cat/stack family, flip/roll/rot90,
repeat/tile/repeat_interleave, triangles and diagonals, meshgrid and
broadcasting helpers, padding.  Every dtype, non-contiguous, zero-size and
0-d inputs, and the error cases (exception type and key words of PyTorch's
message).
"""
import re
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._ops import shape as _shape_ops

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

from ops_oracle import (ALL_DTYPES, INT_DTYPES, rand, pt, th, both, to_np, dtype_name,  # noqa: E402,F401
                        assert_same, same_error)


def run_both(fn, *arrays, names=None, exact=True):
    """fn(L, *tensors) on both libraries with tensors built from ``arrays``."""
    names = names or [None] * len(arrays)
    ps = [pt(a, n) if isinstance(a, np.ndarray) else a for a, n in zip(arrays, names)]
    ts = [th(a, n) if isinstance(a, np.ndarray) else a for a, n in zip(arrays, names)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fn(torch, *ts)
        p = fn(ptcore, *ps)
    assert_same(p, r, exact)
    return p, r


def err_both(fn, *arrays, words=(), names=None):
    names = names or [None] * len(arrays)
    ps = [pt(a, n) if isinstance(a, np.ndarray) else a for a, n in zip(arrays, names)]
    ts = [th(a, n) if isinstance(a, np.ndarray) else a for a, n in zip(arrays, names)]
    return same_error(lambda: fn(torch, *ts), lambda: fn(ptcore, *ps), words)


def idx(*a):
    return np.array(*a, dtype=np.int64)


def noncontig(a):
    """The same values as ``a`` in a transposed-and-back, strided layout."""
    big = np.repeat(np.asarray(a)[..., None], 2, axis=-1)
    return big[..., 0]


# ---------------------------------------------------------------------------
# gather / index_select / take / take_along_dim
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_gather_index_select_take_dtypes(name):
    a = rand((4, 5, 3), name, seed=1)
    g = np.random.default_rng(1).integers(0, 5, (4, 2, 3))
    run_both(lambda L, x, i: L.gather(x, 1, i), a, g, names=[name, None])
    run_both(lambda L, x, i: x.gather(-1, i), a, g % 3, names=[name, None])
    run_both(lambda L, x, i: L.index_select(x, 1, i), a, idx([4, 0, 0, 2]), names=[name, None])
    run_both(lambda L, x, i: x.index_select(0, i.int()), a, idx([3, 1]), names=[name, None])
    run_both(lambda L, x, i: L.take(x, i), a, idx([[0, 59], [-1, -60]]), names=[name, None])
    run_both(lambda L, x, i: L.take_along_dim(x, i, 1), a, g, names=[name, None])
    run_both(lambda L, x, i: x.take_along_dim(i), a, idx([5, 0, 59]), names=[name, None])


def test_gather_family_layouts_and_shapes():
    a = rand((6, 4), "float32", seed=2)
    i = np.random.default_rng(2).integers(0, 4, (5, 3))
    # non-contiguous input and index; smaller index than input
    run_both(lambda L, x, j: L.gather(x.t(), 0, j.t()), a, i)
    run_both(lambda L, x, j: L.gather(x[::2], 1, j[:3, :2]), a, i)
    run_both(lambda L, x, j: L.index_select(x.t(), 1, j[:, 0]), a, i)
    run_both(lambda L, x, j: L.take(x.t(), j), a, i)
    # 0-d cases
    run_both(lambda L, x: L.gather(x, 0, L.tensor(0)), np.array(5.0))
    run_both(lambda L, x: L.gather(x, 0, L.tensor([0, 0])), np.array(5.0))
    run_both(lambda L, x: L.gather(x, 0, L.tensor(1)), np.array([5.0, 6.0]))
    run_both(lambda L, x: L.index_select(x, 0, L.tensor([0])), np.array(5.0))
    run_both(lambda L, x: L.index_select(x, 1, L.tensor(2)), a)
    # zero-size
    run_both(lambda L, x: L.gather(x, 1, L.zeros(0, 2, dtype=L.int64)), a)
    run_both(lambda L, x: L.gather(x, 1, L.zeros(0, 2, dtype=L.int64)), np.zeros((0, 3)))
    run_both(lambda L, x: L.index_select(x, 0, L.tensor([], dtype=L.int64)), a)
    run_both(lambda L, x: L.index_select(x, 1, L.tensor([1, 0])), np.zeros((0, 3)))
    run_both(lambda L, x: L.take(x, L.tensor([], dtype=L.int64)), np.zeros(0))
    # take_along_dim broadcasting and wrapping of out-of-range indices (PyTorch 2.13)
    run_both(lambda L, x: L.take_along_dim(x, L.tensor([[0, 1]]), 1), a)
    run_both(lambda L, x: L.take_along_dim(x, L.tensor([[5], [-5], [9], [-9], [0], [3]]), 1), a)
    # out=
    run_both(lambda L, x: L.gather(x, 1, L.tensor([[0], [1]]), out=L.empty(0)), a[:2])
    run_both(lambda L, x: L.index_select(x, 0, L.tensor([1]), out=L.empty(7)), a)


def test_gather_parallel_matches_serial():
    a = rand((400, 300), "float64", seed=3)
    i = np.random.default_rng(3).integers(0, 300, (400, 200))
    old = ptcore.get_num_threads()
    try:
        for n in (1, 2, 4):
            ptcore.set_num_threads(n)
            run_both(lambda L, x, j: L.gather(x, 1, j), a, i)
            run_both(lambda L, x, j: L.index_select(x, 0, j[:, 0]), a, i)
    finally:
        ptcore.set_num_threads(old)


GATHER_ERRORS = [
    ("gather-dtype", lambda L, x: L.gather(x, 1, L.tensor([[0]], dtype=L.int16)),
     ["gather(): Expected dtype int32/int64 for index"]),
    ("gather-neg", lambda L, x: L.gather(x, 1, L.tensor([[-1]])),
     ["index -1 is out of bounds for dimension 1 with size 4"]),
    ("gather-oob", lambda L, x: L.gather(x, 0, L.tensor([[6]])),
     ["index 6 is out of bounds for dimension 0 with size 6"]),
    ("gather-ndim", lambda L, x: L.gather(x, 1, L.tensor([0])),
     ["Index tensor must have the same number of dimensions as input tensor"]),
    ("gather-size", lambda L, x: L.gather(x, 1, L.zeros(7, 1, dtype=L.int64)),
     ["Size does not match at dimension 0 expected index [7, 1] to be no larger than self [6, 4] "
      "apart from dimension 1"]),
    ("gather-dim", lambda L, x: L.gather(x, 2, L.tensor([[0]])), ["Dimension out of range"]),
    ("gather-empty-dim", lambda L, x: L.gather(x[:, :0], 1, L.tensor([[0]])),
     ["index 0 is out of bounds for dimension 1 with size 0"]),
    ("isel-dtype", lambda L, x: L.index_select(x, 0, L.tensor([0], dtype=L.int16)),
     ["index_select(): Expected dtype int32 or int64 for index"]),
    ("isel-2d", lambda L, x: L.index_select(x, 0, L.tensor([[0]])),
     ["index_select(): Index is supposed to be a vector"]),
    ("isel-oob", lambda L, x: L.index_select(x, 1, L.tensor([4])),
     ["INDICES element is out of DATA bounds, id=4 axis_dim=4"]),
    ("isel-neg", lambda L, x: L.index_select(x, 1, L.tensor([-1])),
     ["INDICES element is out of DATA bounds, id=-1 axis_dim=4"]),
    ("isel-0d-many", lambda L, x: L.index_select(x[0, 0], 0, L.tensor([0, 0])),
     ["Index to scalar can have only 1 value, got 2 value(s)"]),
    ("isel-0d-oob", lambda L, x: L.index_select(x[0, 0], 0, L.tensor([1])),
     ["index out of range in self"]),
    ("isel-empty-dim", lambda L, x: L.index_select(x[:, :0], 1, L.tensor([0])),
     ["self indexing axis dim should be positive"]),
    ("isel-out-dtype", lambda L, x: L.index_select(x, 1, L.tensor([0]), out=L.empty(0, dtype=L.int64)),
     ["index_select(): self and result must have the same scalar type"]),
    ("take-dtype", lambda L, x: L.take(x, L.tensor([0], dtype=L.int32)),
     ["take(): Expected a long tensor for index, but got Int"]),
    ("take-oob", lambda L, x: L.take(x, L.tensor([24])),
     ["out of range: tried to access index 24 on a tensor of 24 elements."]),
    ("take-oob-neg", lambda L, x: L.take(x, L.tensor([-25])), ["out of range"]),
    ("take-empty", lambda L, x: L.take(x[:0], L.tensor([0])),
     ["take(): tried to take from an empty tensor"]),
    ("tad-dtype", lambda L, x: L.take_along_dim(x, L.tensor([[0]], dtype=L.int32), 1),
     ["torch.take_along_dim(): dtype of indices should be Long but got Int"]),
    ("tad-ndim", lambda L, x: L.take_along_dim(x, L.tensor([0]), 1),
     ["input and indices should have the same number of dimensions"]),
    ("tad-bcast", lambda L, x: L.take_along_dim(x, L.zeros(4, 1, dtype=L.int64), 1),
     ["must match the size of tensor b"]),
    ("tad-flat-oob", lambda L, x: L.take_along_dim(x, L.tensor([24])),
     ["index 24 is out of bounds for dimension 0 with size 24"]),
]


@pytest.mark.parametrize("case", GATHER_ERRORS, ids=[c[0] for c in GATHER_ERRORS])
def test_gather_family_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# scatter family
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_scatter_dtypes(name):
    a = rand((4, 5), name, seed=4)
    s = rand((3, 4), name, seed=5)
    uniq = np.argsort(np.random.default_rng(4).random((3, 5)), axis=1)[:, :4]   # no duplicates per row
    dup = np.random.default_rng(5).integers(0, 5, (3, 4))
    run_both(lambda L, x, i, v: x.clone().scatter_(1, i, v), a, uniq, s, names=[name, None, name])
    run_both(lambda L, x, i, v: L.scatter(x, 1, i, v), a, uniq, s, names=[name, None, name])
    run_both(lambda L, x, i: L.scatter(x, 1, i, 1), a, dup, names=[name, None])
    inexact = name in ("float16", "bfloat16")
    run_both(lambda L, x, i, v: L.scatter_add(x, 1, i, v), a, dup, s, names=[name, None, name],
             exact=not inexact)
    run_both(lambda L, x, i, v: x.clone().scatter_add_(0, i.int() % 4, v), a, dup, s,
             names=[name, None, name], exact=not inexact)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if (reduce in ("amax", "amin") and name.startswith("complex")) or (
                reduce == "mean" and name == "bool"):
            err_both(lambda L, x, i, v: L.scatter_reduce(x, 1, i, v, reduce), a, dup, s,
                     names=[name, None, name])
            continue
        for include_self in (True, False):
            run_both(lambda L, x, i, v: L.scatter_reduce(x, 1, i, v, reduce,
                                                         include_self=include_self),
                     a, dup, s, names=[name, None, name], exact=not inexact)
    if name != "bool":
        run_both(lambda L, x, i, v: x.clone().scatter_(1, i, v, reduce="add"), a, dup, s,
                 names=[name, None, name], exact=not inexact)
    run_both(lambda L, x, i, v: x.clone().scatter_(1, i, v, reduce="multiply"), a, dup, s,
             names=[name, None, name], exact=not inexact)


def test_scatter_special_values():
    nan = float("nan")
    a = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    i = idx([[0, 0, 1], [2, 2, 2]])
    s = np.array([[nan, 1.0, -7.0], [1.0, nan, 2.0]])
    for reduce in ("amax", "amin", "sum", "prod", "mean"):
        for inc in (True, False):
            run_both(lambda L, x, j, v: L.scatter_reduce(x, 1, j, v, reduce, include_self=inc),
                     a, i, s)
    # integer mean floors; half mean rounds once
    run_both(lambda L, x, j, v: L.scatter_reduce(x, 1, j, v, "mean", include_self=False),
             idx([[-3, 0, 5]]), idx([[0, 0, 0]]), idx([[-1, -2, 4]]))
    run_both(lambda L, x: x.scatter_(1, L.tensor([[0]]), 9.5), idx([[1, 2]]))
    run_both(lambda L, x: x.scatter_(1, L.tensor([[1]]), 2.0, reduce="multiply"), a)
    # src larger than index, non-contiguous operands
    big = rand((5, 6), "float64", seed=6)
    run_both(lambda L, x, v: x.t().clone().scatter_(0, L.tensor([[1, 0], [2, 1]]), v.t()), a, big)
    # 0-d and empty
    run_both(lambda L: L.tensor(1.0).scatter_(0, L.tensor(0), L.tensor(5.0)))
    run_both(lambda L, x: x.scatter_(1, L.zeros(0, 2, dtype=L.int64) + 9, L.ones(1, 1, dtype=L.float64)), a)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_takes_max_min_as_amax_amin(reduce):
    # torch's kernel reads 'max'/'min' as 'amax'/'amin'; its backward refuses them
    a = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    i = idx([[0, 0, 1], [2, 2, 2]])
    s = np.array([[-4.0, 1.5, 7.0], [1.0, 9.0, 2.0]])
    for inc in (True, False):
        run_both(lambda L, x, j, v: L.scatter_reduce(x, 1, j, v, reduce, include_self=inc), a, i, s)
        run_both(lambda L, x, j, v: x.clone().scatter_reduce_(1, j, v, reduce, include_self=inc),
                 a, i, s)
    err_both(lambda L, x, j, v: L.scatter_reduce(x, 1, j, v, reduce), a.astype(np.complex64), i,
             s.astype(np.complex64), words=["not implemented for 'ComplexFloat'"])

    def backward(L):
        x = L.tensor(a, requires_grad=True)
        x.scatter_reduce(1, L.tensor(i), L.tensor(s), reduce).sum().backward()
    same_error(lambda: backward(torch), lambda: backward(ptcore),
               ["Expected 'reduce' to be one of"])


def test_scatter_version_and_inplace_identity():
    p = pt(rand((3, 4), "float32"))
    v = p._version
    out = p.scatter_(1, ptcore.tensor([[0]]), 1.0)
    assert out is p and p._version > v
    v = p._version
    assert p.index_fill_(1, ptcore.tensor([0]), 2.0) is p and p._version > v


SCATTER_ERRORS = [
    ("dtype-index", lambda L, x: x.scatter_(1, L.tensor([[0]], dtype=L.int16), 1.0),
     ["scatter(): Expected dtype int32/int64 for index"]),
    ("src-dtype", lambda L, x: x.scatter_(1, L.tensor([[0]]), L.ones(1, 1, dtype=L.float64)),
     ["scatter(): Expected self.dtype to be equal to src.dtype"]),
    ("ndim", lambda L, x: x.scatter_(1, L.tensor([0]), 1.0),
     ["Index tensor must have the same number of dimensions as self tensor"]),
    ("src-small", lambda L, x: x.scatter_(1, L.zeros(2, 2, dtype=L.int64), L.ones(1, 2)),
     ["Expected index [2, 2] to be no larger than self [6, 4] apart from dimension 1 and to be "
      "no larger size than src [1, 2]"]),
    ("self-small", lambda L, x: x.scatter_(1, L.zeros(7, 1, dtype=L.int64), 1.0),
     ["Expected index [7, 1] to be no larger than self [6, 4] apart from dimension 1"]),
    ("oob", lambda L, x: x.scatter_(1, L.tensor([[4]]), 1.0),
     ["index 4 is out of bounds for dimension 1 with size 4"]),
    ("neg", lambda L, x: x.scatter_add_(1, L.tensor([[-1]]), L.ones(1, 1)),
     ["index -1 is out of bounds for dimension 1 with size 4"]),
    ("reduce-bad", lambda L, x: x.scatter_(1, L.tensor([[0]]), 1.0, reduce="mean"),
     ["reduce argument must be either add or multiply."]),
    ("reduce2-bad", lambda L, x: x.scatter_reduce(1, L.tensor([[0]]), L.ones(1, 1), "add"),
     ["reduce argument must be either sum, prod, mean, amax or amin, got add"]),
    ("complex-value", lambda L, x: x.scatter(1, L.tensor([[0]]), 1j), ["value cannot be converted"]),
]


@pytest.mark.parametrize("case", SCATTER_ERRORS, ids=[c[0] for c in SCATTER_ERRORS])
def test_scatter_errors(case):
    _, fn, words = case
    a = rand((6, 4), "float32")
    p = err_both(fn, a, words=words)
    del p


def test_scatter_checks_before_writing():
    p = pt(rand((6, 4), "float32"))
    before = to_np(p).copy()
    with pytest.raises(RuntimeError):
        p.scatter_(1, ptcore.tensor([[0, 1, 2, 9]]), 1.0)
    with pytest.raises(RuntimeError):
        p.index_add_(0, ptcore.tensor([0, 6]), ptcore.ones(2, 4))
    with pytest.raises(IndexError):
        p[[0, 1, 7]] = 3.0
    np.testing.assert_array_equal(to_np(p), before)


# ---------------------------------------------------------------------------
# index_add / index_copy / index_fill
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_index_add_copy_fill_dtypes(name):
    a = rand((5, 4, 3), name, seed=7)
    src = rand((5, 3, 3), name, seed=8)
    inexact = name in ("float16", "bfloat16")
    run_both(lambda L, x, i, s: x.clone().index_add_(1, i, s), a, idx([3, 0, 3]), src,
             names=[name, None, name], exact=not inexact)
    if name != "bool":
        run_both(lambda L, x, i, s: L.index_add(x, 1, i.int(), s, alpha=2), a, idx([1, 0, 1]), src,
                 names=[name, None, name], exact=not inexact)
    run_both(lambda L, x, i, s: x.index_copy(1, i, s), a, idx([3, 0, 1]), src,
             names=[name, None, name])
    run_both(lambda L, x, i: x.index_fill(1, i, True if name == "bool" else 2), a, idx([3, -4]),
             names=[name, None])
    run_both(lambda L, x, i: x.clone().index_fill_(0, i, L.tensor(1)), a, idx(4), names=[name, None])


def test_index_ops_layouts_and_edges():
    a = rand((4, 6), "float64", seed=9)
    s = rand((6, 3), "float64", seed=10)
    run_both(lambda L, x, v: x.t().clone().index_add_(1, L.tensor([0, 0, 3]), v, alpha=-1.5), a, s)
    run_both(lambda L, x, v: x.clone().index_add_(0, L.tensor([3, 3]), v.t()[:2]), a, s)
    run_both(lambda L, x, v: x.clone().index_copy_(1, L.tensor([5, 0, 2]), v[:4]), a, s)
    run_both(lambda L, x: x.t().index_fill(0, L.tensor([1]), -1.0), a)
    run_both(lambda L, x: x.long().index_add_(1, L.tensor([0]), L.ones(4, 1, dtype=L.int64),
                                              alpha=1.5), a)
    run_both(lambda L, x: x.index_fill(1, L.tensor([], dtype=L.int64), 3.0), a)
    run_both(lambda L: L.zeros(3).index_copy_(0, L.tensor([1]), L.tensor(5.0)))
    run_both(lambda L: L.tensor(1.0).index_fill_(0, L.tensor([0]), 5.0))
    run_both(lambda L: L.zeros(0, 3).index_add_(1, L.tensor([0]), L.ones(0, 1)))


INDEX_OP_ERRORS = [
    ("add-dtype", lambda L, x: x.index_add_(1, L.tensor([0]), L.ones(6, 1, dtype=L.float64)),
     ["index_add_(): self (Float) and source (Double) must have the same scalar type"]),
    ("add-index-dtype", lambda L, x: x.index_add_(1, L.tensor([0], dtype=L.int16), L.ones(6, 1)),
     ["index_add_(): Expected dtype int32/int64 for index but got: Short"]),
    ("add-2d", lambda L, x: x.index_add_(1, L.tensor([[0]]), L.ones(6, 1)),
     ["index_add_(): Index is supposed to be a vector"]),
    ("add-count", lambda L, x: x.index_add_(1, L.tensor([0, 1]), L.ones(6, 3)),
     ["index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 1"]),
    ("add-shape", lambda L, x: x.index_add_(1, L.tensor([0, 1]), L.ones(5, 2)),
     ["source tensor shape must match self tensor shape, excluding the specified dimension. Got "
      "self.shape = [6, 4] source.shape = [5, 2]"]),
    ("add-oob", lambda L, x: x.index_add_(1, L.tensor([4]), L.ones(6, 1)),
     ["index 4 is out of bounds for dimension 1 with size 4"]),
    ("copy-index-dtype", lambda L, x: x.index_copy_(1, L.tensor([0], dtype=L.int32), L.ones(6, 1)),
     ["index_copy_(): Expected a long tensor for index, but got Int"]),
    ("copy-dtype", lambda L, x: x.index_copy_(1, L.tensor([0]), L.ones(6, 1, dtype=L.int64)),
     ["index_copy_(): self and source expected to have the same dtype"]),
    ("copy-slices", lambda L, x: x.index_copy_(1, L.tensor([0]), L.ones(5, 1)),
     ["index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
      "shape: 6 at dimension 1 and source slice shape: 5 at dimension 0."]),
    ("copy-count", lambda L, x: x.index_copy_(1, L.tensor([0]), L.ones(6, 2)),
     ["index_copy_(): Number of indices (1) should be equal to source.size(dim) (2)"]),
    ("copy-oob", lambda L, x: x.index_copy_(1, L.tensor([-1]), L.ones(6, 1)),
     ["index_copy_(): index -1 is out of bounds for dimension 1 with size 4"]),
    ("copy-scalar", lambda L, x: x.index_copy_(1, L.tensor([0, 1]), L.tensor(1.0)),
     ["When source is scalar, index should have one element (got 2)"]),
    ("fill-dtype", lambda L, x: x.index_fill_(1, L.tensor([0], dtype=L.int32), 1.0),
     ["index_fill_(): Expected dtype int64 for index."]),
    ("fill-value-dim", lambda L, x: x.index_fill_(1, L.tensor([0]), L.tensor([1.0])),
     ["index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."]),
    ("fill-oob", lambda L, x: x.index_fill_(1, L.tensor([-5]), 1.0),
     ["index -5 is out of bounds for dimension 1 with size 4"]),
    ("fill-complex", lambda L, x: x.index_fill_(1, L.tensor([0]), 1j),
     ["index_fill_(): Converting complex Scalar to non-complex type is not supported"]),
    ("fill-2d", lambda L, x: x.index_fill_(1, L.tensor([[0]]), 1.0), ["Index has to be a vector/scalar"]),
]


@pytest.mark.parametrize("case", INDEX_OP_ERRORS, ids=[c[0] for c in INDEX_OP_ERRORS])
def test_index_op_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# masks, nonzero
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_mask_ops_dtypes(name):
    a = rand((4, 5), name, seed=11)
    m = rand((4, 5), "bool", seed=12)
    row = rand((5,), "bool", seed=13)
    v = True if name == "bool" else 3
    run_both(lambda L, x, k: x.masked_fill(k, v), a, m, names=[name, None])
    run_both(lambda L, x, k: x.clone().masked_fill_(k, L.tensor(v)), a, row, names=[name, None])
    run_both(lambda L, x, k: L.masked_select(x, k), a, m, names=[name, None])
    run_both(lambda L, x, k: L.masked_select(x.t(), k.t()), a, m, names=[name, None])
    src = rand((20,), name, seed=14)
    run_both(lambda L, x, k, s: x.masked_scatter(k, s), a, m, src, names=[name, None, name])
    run_both(lambda L, x, k, s: x.clone().masked_scatter_(k, s.reshape(4, 5).t()), a, row, src,
             names=[name, None, name])
    run_both(lambda L, x: L.nonzero(x), a, names=[name])
    run_both(lambda L, x: L.nonzero(x, as_tuple=True), a, names=[name])
    run_both(lambda L, x: L.argwhere(x.t()), a, names=[name])


def test_mask_ops_edges():
    a = rand((3, 4), "float32", seed=15)
    # broadcasting mask and input in the out-of-place forms
    run_both(lambda L, x: x[0].masked_fill(L.tensor([[True], [False], [True]]), -1.0), a)
    run_both(lambda L, x: L.masked_select(x[0], x > 0), a)
    run_both(lambda L, x: x[0].masked_scatter(x > 0, L.arange(12.0)), a)
    run_both(lambda L, x: x.masked_fill(x > 0, True), a)
    run_both(lambda L, x: x.long().masked_fill(x > 0, 2.7), a)
    # 0-d, empty
    run_both(lambda L: L.masked_select(L.tensor(1.0), L.tensor(True)))
    run_both(lambda L: L.nonzero(L.tensor(5.0)))
    run_both(lambda L: L.nonzero(L.tensor(0.0)))
    run_both(lambda L: L.nonzero(L.tensor(3), as_tuple=True))
    run_both(lambda L: L.nonzero(L.zeros(0, 3)))
    run_both(lambda L: L.nonzero(L.zeros(2, 0, 3), as_tuple=True))
    run_both(lambda L: L.nonzero(L.tensor([float("nan"), -0.0, 0.0, 1e-30])))
    run_both(lambda L: L.nonzero(L.tensor([0j, 1j, 0j])))
    run_both(lambda L: L.masked_select(L.zeros(0, 3), L.tensor([True, False, True])))
    run_both(lambda L, x: L.nonzero(x > 0, out=L.empty(0, dtype=L.int64)), a)
    # large: threads do not change nonzero/masked_select
    big = rand((300, 300), "int16", seed=16)
    run_both(lambda L, x: L.nonzero(x > 10), big)
    run_both(lambda L, x: L.masked_select(x, x < 0), big)
    assert _shape_ops._where1(pt(a) > 0)[1].tolist() == list(torch.where(th(a) > 0)[1].tolist())


MASK_ERRORS = [
    ("fill-uint8", lambda L, x: x.masked_fill(L.ones(4, dtype=L.uint8), 1.0),
     ["masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"]),
    ("fill-long", lambda L, x: x.masked_fill(L.ones(4, dtype=L.int64), 1.0),
     ["masked_fill_ only supports boolean masks, but got mask with dtype long int"]),
    ("fill-value-dim", lambda L, x: x.masked_fill(x > 0, L.tensor([1.0])),
     ["masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."]),
    ("fill_-bcast", lambda L, x: x.masked_fill_(L.ones(2, 6, 4, dtype=L.bool), 1.0),
     ["output with shape [6, 4] doesn't match the broadcast shape [2, 6, 4]"]),
    ("fill-bad-shape", lambda L, x: x.masked_fill(L.ones(3, dtype=L.bool), 1.0),
     ["The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"]),
    ("fill-overflow", lambda L, x: x.to(L.int8).masked_fill(x > 0, 1000), ["without overflow"]),
    ("select-uint8", lambda L, x: L.masked_select(x, L.ones(4, dtype=L.uint8)),
     ["masked_select: expected BoolTensor for mask"]),
    ("select-out-dtype", lambda L, x: L.masked_select(x, x > 0, out=L.empty(0, dtype=L.int64)),
     ["masked_select(): self and result must have the same scalar type"]),
    ("scatter-uint8", lambda L, x: x.masked_scatter_(L.ones(4, dtype=L.uint8), x),
     ["masked_scatter_ only supports boolean masks, but got mask with dtype Byte"]),
    ("scatter-dtype", lambda L, x: x.masked_scatter_(x > 0, x.double()),
     ["masked_scatter: expected self and source to have same dtypes but gotFloat and Double"]),
    ("scatter-small", lambda L, x: x.masked_scatter_(L.ones(6, 4, dtype=L.bool), L.ones(5)),
     ["Number of elements of source < number of ones in mask"]),
    ("nonzero-out", lambda L, x: L.nonzero(x, out=L.empty(0, dtype=L.int32)),
     ["nonzero: Expected out tensor to have scalar type Long but got scalar typeInt"]),
]


@pytest.mark.parametrize("case", MASK_ERRORS, ids=[c[0] for c in MASK_ERRORS])
def test_mask_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# cat / stack family
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_cat_stack_dtypes(name):
    a = rand((3, 4), name, seed=17)
    b = rand((3, 2), name, seed=18)
    run_both(lambda L, x, y: L.cat([x, y, x[:, :0]], 1), a, b, names=[name, name])
    run_both(lambda L, x, y: L.cat((x.t(), y.t()), 0), a, b, names=[name, name])
    run_both(lambda L, x: L.stack([x, x.t().t(), x], 1), a, names=[name])
    run_both(lambda L, x: L.stack([x, x], -1), a, names=[name])


def test_cat_type_promotion_and_legacy_empty():
    names = ["bool", "uint8", "int8", "int32", "float16", "bfloat16", "float64", "complex64"]
    for n1 in names:
        for n2 in names:
            run_both(lambda L, x, y: L.cat([x, y]), rand((2, 3), n1), rand((1, 3), n2),
                     names=[n1, n2])
    run_both(lambda L, x: L.cat([x, L.tensor([], dtype=L.float64)], 1), rand((3, 4), "float32"))
    run_both(lambda L, x: L.cat([L.zeros(0), x, L.zeros(0)], 1), rand((3, 4), "int32"))
    run_both(lambda L: L.cat([L.zeros(0), L.zeros(0, dtype=L.int64)], 1))
    run_both(lambda L: L.cat([L.zeros(2, 0), L.zeros(3, 0)], 0))
    run_both(lambda L, x: L.stack([x, x.int()]), np.array(2.0))
    run_both(lambda L, x: L.concat([x, x], dim=-1), rand((2, 3), "float32"))
    run_both(lambda L, x: L.concatenate([x, x], axis=1), rand((2, 3), "float32"))
    run_both(lambda L, x: L.cat([x, x], out=L.empty(0, dtype=L.float64)), rand((2, 3), "float32"))
    run_both(lambda L, x: L.stack([x, x], out=L.empty(2, 2, 3)), rand((2, 3), "float32"))


def test_cat_many_and_large():
    parts = [rand((2, k % 5, 3), "float32", seed=k) for k in range(40)]
    run_both(lambda L, *xs: L.cat(xs, 1), *parts)
    big = [rand((200, 300), "float64", seed=k) for k in range(3)]
    run_both(lambda L, *xs: L.cat(xs, 1), *big)
    run_both(lambda L, *xs: L.stack(xs, 2), *big)


def test_stack_family():
    a1, b1 = rand((4,), "float32", 1), rand((4,), "float32", 2)
    a2, b2 = rand((2, 4), "float32", 3), rand((2, 4), "float32", 4)
    s0 = np.array(1.5, dtype=np.float32)
    for f in [lambda L, *x: L.hstack(x), lambda L, *x: L.vstack(x), lambda L, *x: L.dstack(x),
              lambda L, *x: L.column_stack(x), lambda L, *x: L.row_stack(x)]:
        run_both(f, a1, b1)
        run_both(f, s0, s0)
    run_both(lambda L, x, y: L.hstack([x, y]), a2, b2)
    run_both(lambda L, x, y: L.vstack([x, y]), a1, a2)
    run_both(lambda L, x, y: L.dstack([x, y]), a2, b2)
    run_both(lambda L, x, y: L.column_stack([x, y.t()]), a1, a2)
    run_both(lambda L, x, y: L.hstack([x, y], out=L.empty(0)), a1, b1)


CAT_ERRORS = [
    ("empty-list", lambda L, x: L.cat([]), ["expected a non-empty list of Tensors"]),
    ("0d", lambda L, x: L.cat([x, x[0, 0]]), ["zero-dimensional tensor (at position 1) cannot be "
                                              "concatenated"]),
    ("ndim", lambda L, x: L.cat([x, x[None]]), ["Tensors must have same number of dimensions: got 2 "
                                                "and 3"]),
    ("sizes", lambda L, x: L.cat([x, x[:, :2]]), ["Sizes of tensors must match except in dimension 0. "
                                                  "Expected size 4 but got size 2 for tensor number 1 "
                                                  "in the list."]),
    ("dim", lambda L, x: L.cat([x, x], 2), ["Dimension out of range"]),
    ("not-tensor", lambda L, x: L.cat([x, 1]), ["expected Tensor as element 1 in argument 0"]),
    ("out-cast", lambda L, x: L.cat([x, x], out=L.empty(0, dtype=L.int64)),
     ["input types can't be cast to the desired output type Long"]),
    ("out-overlap", lambda L, x: L.cat([x[:3], x[3:]], dim=0, out=x), ["unsupported operation"]),
    ("stack-empty", lambda L, x: L.stack([]), ["stack expects a non-empty TensorList"]),
    ("stack-size", lambda L, x: L.stack([x, x[:2]]), ["stack expects each tensor to be equal size, but "
                                                      "got [6, 4] at entry 0 and [2, 4] at entry 1"]),
    ("stack-dim", lambda L, x: L.stack([x, x], 3), ["Dimension out of range"]),
    ("hstack-empty", lambda L, x: L.hstack([]), ["hstack expects a non-empty TensorList"]),
    ("vstack-empty", lambda L, x: L.vstack([]), ["vstack expects a non-empty TensorList"]),
    ("dstack-empty", lambda L, x: L.dstack([]), ["dstack expects a non-empty TensorList"]),
    ("column_stack-empty", lambda L, x: L.column_stack([]), ["column_stack expects a non-empty"]),
]


@pytest.mark.parametrize("case", CAT_ERRORS, ids=[c[0] for c in CAT_ERRORS])
def test_cat_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# flip / roll / rot90 / repeat / tile / repeat_interleave
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_flip_roll_rot90_repeat_dtypes(name):
    a = rand((3, 4, 5), name, seed=19)
    run_both(lambda L, x: L.flip(x, [0, 2]), a, names=[name])
    run_both(lambda L, x: x.t().flip(-1), a[:, :, 0], names=[name])
    run_both(lambda L, x: L.fliplr(x), a, names=[name])
    run_both(lambda L, x: L.flipud(x), a, names=[name])
    run_both(lambda L, x: L.roll(x, 2), a, names=[name])
    run_both(lambda L, x: L.roll(x, (1, -7), (0, 2)), a, names=[name])
    run_both(lambda L, x: x.roll(-1, 1), a, names=[name])
    for k in (-1, 0, 1, 2, 3, 6):
        run_both(lambda L, x: L.rot90(x, k, [2, 0]), a, names=[name])
    run_both(lambda L, x: x.repeat(2, 1, 1, 3), a, names=[name])
    run_both(lambda L, x: L.tile(x, (2,)), a, names=[name])
    run_both(lambda L, x: L.repeat_interleave(x, 2, 1), a, names=[name])
    run_both(lambda L, x: x.repeat_interleave(L.tensor([2, 0, 1]), dim=0), a, names=[name])


def test_flip_roll_repeat_edges():
    a = rand((3, 4), "float32", seed=20)
    run_both(lambda L, x: L.flip(x, []), a)
    run_both(lambda L: L.flip(L.tensor(1.0), [0]))
    run_both(lambda L: L.flip(L.zeros(0, 3), [0, 1]))
    run_both(lambda L, x: L.flip(x[::2, 1::2].t(), (0, 1)), a)
    run_both(lambda L: L.roll(L.tensor(1.0), 1))
    run_both(lambda L: L.roll(L.zeros(0, 3), 1, 0))
    run_both(lambda L, x: L.roll(x.t(), 13, 1), a)
    run_both(lambda L, x: L.roll(x, [1], [0]), a)
    run_both(lambda L, x: x.repeat([0, 2]), a)
    run_both(lambda L: L.tensor(2.0).repeat(2, 3))
    run_both(lambda L, x: x.t().repeat(1, 2), a)
    run_both(lambda L, x: L.tile(x, ()), a)
    run_both(lambda L: L.tile(L.tensor(1.0), (3,)))
    run_both(lambda L: L.repeat_interleave(L.tensor([1, 2, 0, 3])))
    run_both(lambda L: L.repeat_interleave(L.tensor([1, 2, 0, 3], dtype=L.int32)))
    run_both(lambda L, x: L.repeat_interleave(x, L.tensor([2]), dim=0), a)
    run_both(lambda L, x: L.repeat_interleave(x, L.tensor(2), dim=1), a)
    run_both(lambda L, x: L.repeat_interleave(x, 3), a)
    run_both(lambda L, x: L.repeat_interleave(x, L.tensor([1, 0, 2], dtype=L.int32), dim=0,
                                              output_size=3), a)
    run_both(lambda L, x: L.repeat_interleave(x, 2, dim=0, output_size=6), a)
    run_both(lambda L: L.repeat_interleave(L.tensor(3.0), 2))
    run_both(lambda L: L.repeat_interleave(L.zeros(0, 2), 2, 0))


SHAPE_ERRORS = [
    ("flip-int", lambda L, x: L.flip(x, 0), ["must be tuple of ints, not int"]),
    ("flip-dup", lambda L, x: L.flip(x, [0, -2]), ["dim 0 appears multiple times in the list of dims"]),
    ("flip-dim", lambda L, x: L.flip(x, [2]), ["Dimension out of range"]),
    ("fliplr", lambda L, x: L.fliplr(x[0]), ["Input must be >= 2-d."]),
    ("flipud", lambda L, x: L.flipud(x[0, 0]), ["Input must be >= 1-d."]),
    ("roll-align", lambda L, x: L.roll(x, (1, 2), (0,)), ["shifts and dimensions must align. shifts: 2, "
                                                          "dims:1"]),
    ("roll-nodims", lambda L, x: L.roll(x, (1, 2)), ["shifts and dimensions must align"]),
    ("roll-empty", lambda L, x: L.roll(x, (), ()), ["`shifts` required"]),
    ("roll-0d", lambda L, x: L.roll(x[0, 0], 1, 0), ["Dimension specified as 0 but tensor has no "
                                                     "dimensions"]),
    ("rot90-ndims", lambda L, x: L.rot90(x, 1, [0, 1, 1]), ["expected total rotation dims == 2"]),
    ("rot90-1d", lambda L, x: L.rot90(x[0]), ["expected total dims >= 2, but got total dims = 1"]),
    ("rot90-same", lambda L, x: L.rot90(x, 1, [0, -2]), ["expected rotation dims to be different"]),
    ("rot90-oob", lambda L, x: L.rot90(x, 1, [0, 2]), ["Dimension out of range"]),
    ("repeat-few", lambda L, x: x.repeat(2), ["Number of dimensions of repeat dims can not be smaller "
                                              "than number of dimensions of tensor"]),
    ("repeat-neg", lambda L, x: x.repeat(2, -1), ["Trying to create tensor with negative dimension -4: "
                                                  "[12, -4]"]),
    ("tile-neg", lambda L, x: L.tile(x, (-1, 1)), ["negative dimension"]),
    ("ri-size", lambda L, x: L.repeat_interleave(x, L.tensor([1, 2]), dim=0),
     ["repeats must have the same size as input along dim, but got repeats.size(0) = 2 and "
      "input.size(0) = 6"]),
    ("ri-neg", lambda L, x: L.repeat_interleave(x, L.tensor([1, -1, 1, 1, 1, 1]), dim=0),
     ["repeats can not be negative"]),
    ("ri-neg-int", lambda L, x: L.repeat_interleave(x, -1), ["Repeats must be non-negative"]),
    ("ri-float", lambda L, x: L.repeat_interleave(x, L.tensor([1.0] * 6), dim=0),
     ["not implemented for 'Float'"]),
    ("ri-2d", lambda L, x: L.repeat_interleave(L.tensor([[1, 2]])),
     ["repeat_interleave only accept 1D vector as repeat"]),
    ("ri-output-size", lambda L, x: L.repeat_interleave(x, L.tensor([1] * 6), dim=0, output_size=5),
     ["allocated size does not match required size"]),
    ("ri-output-size-int", lambda L, x: L.repeat_interleave(x, 2, dim=0, output_size=5),
     ["repeat_interleave: Invalid output_size, expected 12 but got 5"]),
]


@pytest.mark.parametrize("case", SHAPE_ERRORS, ids=[c[0] for c in SHAPE_ERRORS])
def test_shape_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# triangles, diagonals, trace
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_tri_diag_dtypes(name):
    a = rand((2, 4, 5), name, seed=21)
    for k in (-5, -1, 0, 2, 7):
        run_both(lambda L, x: L.tril(x, k), a, names=[name])
        run_both(lambda L, x: L.triu(x, k), a, names=[name])
    run_both(lambda L, x: x.transpose(1, 2).clone().tril_(1), a, names=[name])
    run_both(lambda L, x: x[:, ::2].triu_(-1), a, names=[name])
    run_both(lambda L, x: L.diag(x[0], 1), a, names=[name])
    run_both(lambda L, x: L.diag(x[0, 0], -2), a, names=[name])
    run_both(lambda L, x: L.diag_embed(x, 1, 0, 2), a, names=[name])
    run_both(lambda L, x: L.diagflat(x[0], -1), a, names=[name])
    if name != "bool":
        run_both(lambda L, x: L.trace(x[1]), a, names=[name], exact=name not in ("float16", "bfloat16"))


def test_tri_diag_edges():
    a = rand((4, 3), "float64", seed=22)
    run_both(lambda L, x: L.tril(x.t()), a)
    run_both(lambda L: L.tril(L.zeros(0, 3)))
    run_both(lambda L, x: L.tril(x, out=L.empty(0, dtype=L.float64)), a)
    run_both(lambda L, x: L.diag(x, 10), a)
    run_both(lambda L, x: L.diag(x.t(), -1), a)
    run_both(lambda L: L.diag(L.zeros(0)))
    run_both(lambda L, x: L.diag_embed(x), a)
    run_both(lambda L, x: L.diag_embed(x, -1, -1, -2), a)
    run_both(lambda L: L.diagflat(L.tensor(2.0)))
    run_both(lambda L, x: L.trace(x.t()), a)
    run_both(lambda L: L.trace(L.zeros(0, 3)))
    run_both(lambda L: L.trace(L.arange(12).reshape(3, 4).to(L.int8)))
    run_both(lambda L, x: L.diagonal_scatter(x, L.ones(3, dtype=L.float64), 0), a)
    run_both(lambda L, x: L.diagonal_scatter(x, L.ones(2, dtype=L.float64), -2), a)
    run_both(lambda L, x: L.select_scatter(x, L.ones(3, dtype=L.float64), 0, -1), a)
    run_both(lambda L, x: L.slice_scatter(x, L.ones(2, 3, dtype=L.float64), 0, 1, None, 2), a)
    for r, c, k in [(3, 4, 1), (4, 3, -1), (0, 4, 0), (3, 3, 10), (5, 2, -7), (1, 1, 0)]:
        run_both(lambda L: L.tril_indices(r, c, k))
        run_both(lambda L: L.triu_indices(r, c, k, dtype=L.int32))


TRI_ERRORS = [
    ("tril-1d", lambda L, x: L.tril(x[0]), ["tril: input tensor must have at least 2 dimensions"]),
    ("triu-0d", lambda L, x: L.triu(x[0, 0]), ["triu: input tensor must have at least 2 dimensions"]),
    ("tril_indices-neg", lambda L, x: L.tril_indices(-1, 3), ["row must be non-negative, got-1"]),
    ("triu_indices-neg-col", lambda L, x: L.triu_indices(3, -1), ["col must be non-negative, got-1"]),
    ("tril_indices-float", lambda L, x: L.tril_indices(3, 3, dtype=L.float32),
     ["not implemented for 'Float'"]),
    ("diag-3d", lambda L, x: L.diag(x[None]), ["diag(): Supports 1D or 2D tensors. Got 3D"]),
    ("diag-0d", lambda L, x: L.diag(x[0, 0]), ["diag(): Supports 1D or 2D tensors. Got 0D"]),
    ("diag_embed-same", lambda L, x: L.diag_embed(x, 0, 1, 1), ["diagonal dimensions cannot be "
                                                                "identical 1, 1"]),
    ("diag_embed-0d", lambda L, x: L.diag_embed(x[0, 0]), ["Dimension out of range"]),
    ("trace-1d", lambda L, x: L.trace(x[0]), ["trace: expected a matrix, but got tensor with dim 1"]),
    ("trace-bool", lambda L, x: L.trace(x > 0), ["\"trace\" not implemented for 'Bool'"]),
    ("diagonal_scatter", lambda L, x: L.diagonal_scatter(x, L.ones(5)),
     ["expected src to have a size equal to the slice of self. src size = [5], slice size = [4]"]),
]


@pytest.mark.parametrize("case", TRI_ERRORS, ids=[c[0] for c in TRI_ERRORS])
def test_tri_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# meshgrid, broadcasting, atleast_nd, narrow_copy, ravel
# ---------------------------------------------------------------------------
def test_meshgrid_broadcast_atleast():
    a, b, c = rand((4,), "float32", 1), rand((3,), "float32", 2), np.array(2.0, dtype=np.float32)
    for ind in ("ij", "xy"):
        run_both(lambda L, x, y, z: L.meshgrid(x, y, z, indexing=ind), a, b, c)
        run_both(lambda L, x, y: L.meshgrid([x, y], indexing=ind), a, b)
        run_both(lambda L, x: L.meshgrid(x, indexing=ind), a)
    run_both(lambda L, x, y: L.meshgrid(x, y), a, b)
    m = rand((3, 1), "int32", 3)
    run_both(lambda L, x, y, z: L.broadcast_tensors(x, y, z), m, rand((4,), "float64"), np.array(1))
    assert tuple(ptcore.broadcast_shapes((3, 1), (4,), 1, ())) == tuple(
        torch.broadcast_shapes((3, 1), (4,), 1, ()))
    assert ptcore.broadcast_shapes() == torch.broadcast_shapes()
    assert isinstance(ptcore.broadcast_shapes((2, 1)), ptcore.Size)
    for f in (lambda L, *x: L.atleast_1d(*x), lambda L, *x: L.atleast_2d(*x),
              lambda L, *x: L.atleast_3d(*x)):
        for arr in (c, a, m, rand((2, 3, 4), "float32")):
            run_both(f, arr)
        run_both(lambda L, x, y: f(L, [x, y]), c, a)
        run_both(f, c, m)
    run_both(lambda L, x: L.narrow_copy(x, 1, -2, 2), rand((3, 5), "float32"))
    run_both(lambda L, x: x.t().narrow_copy(0, 1, 3), rand((3, 5), "float32"))
    run_both(lambda L, x: L.ravel(x.t()), rand((3, 5), "float32"))
    run_both(lambda L, x: x.ravel(), rand((3, 5), "float32"))
    p = pt(rand((3, 5), "float32"))
    assert ptcore.ravel(p).data_ptr() == p.data_ptr()


MISC_ERRORS = [
    ("meshgrid-2d", lambda L, x: L.meshgrid(x, indexing="ij"), ["Expected 0D or 1D tensor"]),
    ("meshgrid-dtype", lambda L, x: L.meshgrid(x[0], x[0].double(), indexing="ij"),
     ["meshgrid expects all tensors to have the same dtype"]),
    ("meshgrid-indexing", lambda L, x: L.meshgrid(x[0], indexing="ab"),
     ['indexing must be one of "xy" or "ij", but received: ab']),
    ("meshgrid-empty", lambda L, x: L.meshgrid(indexing="ij"), ["meshgrid expects a non-empty "
                                                                "TensorList"]),
    ("broadcast_tensors", lambda L, x: L.broadcast_tensors(x, x[:, :3]),
     ["The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"]),
    ("broadcast_shapes", lambda L, x: L.broadcast_shapes((3, 1), (4,), 2),
     ["Attempting to broadcast a dimension of length 2 at -1! Mismatching argument at index 2 had "
      "(2,); but expected shape should be broadcastable to [3, 4]"]),
    ("broadcast_shapes-neg", lambda L, x: L.broadcast_shapes((-1,)),
     ["Attempting to broadcast a dimension with negative length!"]),
    ("narrow_copy", lambda L, x: L.narrow_copy(x, 0, 5, 2), ["exceeds dimension size"]),
]


@pytest.mark.parametrize("case", MISC_ERRORS, ids=[c[0] for c in MISC_ERRORS])
def test_misc_errors(case):
    _, fn, words = case
    err_both(fn, rand((6, 4), "float32"), words=words)


# ---------------------------------------------------------------------------
# padding
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_constant_pad_dtypes(name):
    a = rand((2, 3, 4), name, seed=23)
    v = True if name == "bool" else 2
    run_both(lambda L, x: L.constant_pad_nd(x, [1, 2], v), a, names=[name])
    run_both(lambda L, x: L.constant_pad_nd(x, [-1, 2, 1, -2, 0, 1]), a, names=[name])
    pad_fn = lambda L: F.pad if L is torch else _shape_ops.pad    # noqa: E731
    run_both(lambda L, x: pad_fn(L)(x.transpose(0, 2), (2, 0, 0, 1)), a, names=[name])
    if name == "bool":
        return
    for mode in ("reflect", "replicate", "circular"):
        run_both(lambda L, x: pad_fn(L)(x, (2, 1), mode=mode), a, names=[name])
        run_both(lambda L, x: pad_fn(L)(x, (1, 2, 2, 0), mode=mode), a, names=[name])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes(mode):
    pad_fn = lambda L: F.pad if L is torch else _shape_ops.pad    # noqa: E731
    a2 = rand((3, 5), "float32", 24)
    a3 = rand((2, 3, 5), "float32", 25)
    a4 = rand((2, 2, 4, 5), "float64", 26)
    a5 = rand((1, 2, 3, 4, 5), "float32", 27)
    cases = [(a2, (2, 3)), (a3, (4, 0)), (a3, (-1, 2)), (a3, (2, -2)), (a3, (1, 1, 2, 2)),
             (a4, (3, -1, 0, 3)), (a4, (1, 1, 1, 1, 1, 1)), (a5, (2, 0, 1, 2, 1, 1)),
             (a4.transpose(0, 3, 2, 1).copy(), (1, 2, 3, 0)), (np.zeros((0, 3, 5)), (1, 1))]
    for arr, pads in cases:
        if mode == "reflect" and builtins_any(p >= s for p, s in _pairs(arr.shape, pads)):
            continue
        run_both(lambda L, x: pad_fn(L)(x, pads, mode=mode), arr)
    run_both(lambda L, x: pad_fn(L)(x.transpose(1, 2), (1, 2), mode=mode), a3)


def _pairs(shape, pads):
    out = []
    for i in range(len(pads) // 2):
        s = shape[len(shape) - 1 - i]
        out += [(pads[2 * i], s), (pads[2 * i + 1], s)]
    return out


def builtins_any(it):
    return any(it)


PAD_ERRORS = [
    ("cpnd-odd", lambda L, P, x: L.constant_pad_nd(x, [1, 2, 3]),
     ["Length of pad must be even but instead it equals 3"]),
    ("cpnd-long", lambda L, P, x: L.constant_pad_nd(x, [1] * 6),
     ["Length of pad should be no more than twice the number of dimensions of the input"]),
    ("cpnd-crop", lambda L, P, x: L.constant_pad_nd(x, [-3, -2]), ["narrow(): length must be "
                                                                   "non-negative."]),
    ("cpnd-overflow", lambda L, P, x: L.constant_pad_nd(x.to(L.int8), [1, 1], 1000),
     ["without overflow"]),
    ("pad-odd", lambda L, P, x: P(x, (1, 2, 3)), ["Padding length must be divisible by 2"]),
    ("pad-long", lambda L, P, x: P(x, (1,) * 6), ["Padding length should be less than or equal to two "
                                                  "times the input dimension but got padding length 6 "
                                                  "and input of dimension 2"]),
    ("pad-mode", lambda L, P, x: P(x, (1, 1), mode="foo"), ["Unrecognised padding mode foo"]),
    ("pad-value", lambda L, P, x: P(x, (1, 1), mode="reflect", value=1.0),
     ['Padding mode "reflect" doesn\'t take in value argument']),
    ("reflect-1d", lambda L, P, x: P(x[0], (1, 1), mode="reflect"),
     ["Padding size 2 is not supported for 1D input tensor."]),
    ("reflect-4d-2", lambda L, P, x: P(x[None, None], (1, 1), mode="reflect"),
     ["Padding size 2 is not supported for 4D input tensor."]),
    ("reflect-big", lambda L, P, x: P(x[None], (4, 0), mode="reflect"),
     ["Argument #4: Padding size should be less than the corresponding input dimension, but got: "
      "padding (4, 0) at dimension 2 of input [1, 6, 4]"]),
    ("reflect-big-h", lambda L, P, x: P(x[None], (0, 0, 0, 6), mode="reflect"),
     ["Argument #6: Padding size should be less than the corresponding input dimension"]),
    ("reflect-small", lambda L, P, x: P(x, (-2, -2), mode="reflect"),
     ["input (W: 4) is too small. Calculated output W: 0"]),
    ("replicate-small", lambda L, P, x: P(x, (-3, -2), mode="replicate"), ["is too small"]),
    ("replicate-empty", lambda L, P, x: P(x[:, :0], (1, 1), mode="replicate"),
     ["Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
      "dimensions for input, but got: [6, 0]"]),
    ("replicate-bool", lambda L, P, x: P(x > 0, (1, 1), mode="replicate"), ["not implemented for "
                                                                            "'Bool'"]),
    ("circular-wrap", lambda L, P, x: P(x, (5, 0), mode="circular"),
     ["Padding value causes wrapping around more than once."]),
    ("circular-neg", lambda L, P, x: P(x, (-5, 0), mode="circular"),
     ["Negative padding value is resulting in an empty dimension"]),
]


@pytest.mark.parametrize("case", PAD_ERRORS, ids=[c[0] for c in PAD_ERRORS])
def test_pad_errors(case):
    _, fn, words = case
    a = rand((6, 4), "float32")
    same_error(lambda: fn(torch, F.pad, th(a)), lambda: fn(ptcore, _shape_ops.pad, pt(a)), words)


# ---------------------------------------------------------------------------
# Tensor methods exist where PyTorch has them
# ---------------------------------------------------------------------------
def test_tensor_methods_present():
    names = ["index_select", "index_add_", "index_add", "index_copy_", "index_copy", "index_fill_",
             "index_fill", "index_put_", "index_put", "gather", "scatter_", "scatter",
             "scatter_add_", "scatter_add", "scatter_reduce_", "scatter_reduce", "masked_fill_",
             "masked_fill", "masked_select", "masked_scatter_", "masked_scatter", "nonzero",
             "argwhere", "take", "take_along_dim", "put_", "put", "flip", "fliplr", "flipud",
             "roll", "rot90", "repeat", "tile", "repeat_interleave", "tril", "tril_", "triu",
             "triu_", "diag", "diag_embed", "diagflat", "diagonal_scatter", "trace",
             "narrow_copy", "ravel"]
    for n in names:
        assert hasattr(torch.Tensor, n), n
        assert hasattr(ptcore.Tensor, n), n
    for n in ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "masked_fill",
              "masked_select", "masked_scatter", "nonzero", "argwhere", "take", "take_along_dim",
              "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
              "row_stack", "flip", "fliplr", "flipud", "roll", "rot90", "tile", "repeat_interleave",
              "tril", "triu", "tril_indices", "triu_indices", "diag", "diag_embed", "diagflat",
              "diagonal_scatter", "trace", "meshgrid", "broadcast_tensors", "broadcast_shapes",
              "atleast_1d", "atleast_2d", "atleast_3d", "narrow_copy", "ravel", "constant_pad_nd",
              "index_add", "index_copy", "index_fill", "index_put", "index_put_"]:
        assert hasattr(torch, n), n
        assert hasattr(ptcore, n), n


def test_put():
    a = rand((3, 4), "float32", seed=28)
    run_both(lambda L, x: x.clone().put_(L.tensor([0, -1, 5]), L.tensor([9.0, 8.0, 7.0])), a)
    run_both(lambda L, x: x.t().clone().put_(L.tensor([1, 1]), L.tensor([1.0, 2.0]),
                                             accumulate=True), a)
    run_both(lambda L, x: x.put(L.tensor([[2]]), L.tensor([[5.0]])), a)
    err_both(lambda L, x: x.put_(L.tensor([12]), L.tensor([1.0])), a, words=["out of range"])


def test_method_argument_forms():
    a = rand((3, 4), "float32", seed=29)
    run_both(lambda L, x: x.flip(0), a)
    run_both(lambda L, x: x.flip(0, 1), a)
    run_both(lambda L, x: x.flip(dims=[1]), a)
    run_both(lambda L, x: x.tile(2, 1), a)
    run_both(lambda L, x: x.tile((1, 2)), a)
    run_both(lambda L, x: x.tile(dims=(2,)), a)
    run_both(lambda L, x: x.repeat((2, 1)), a)
    run_both(lambda L, x: x.roll(shifts=1, dims=0), a)
    run_both(lambda L, x: x.index_select(dim=1, index=L.tensor([0])), a)
    run_both(lambda L, x: x.gather(dim=1, index=L.tensor([[0], [1], [2]])), a)
    run_both(lambda L, x: x.scatter(dim=1, index=L.tensor([[0]]), src=x[:1, :1] * 0), a)
    run_both(lambda L, x: x.scatter(1, L.tensor([[0]]), value=-1.0), a)
    run_both(lambda L, x: x.masked_fill(mask=x > 0, value=0.5), a)
    run_both(lambda L, x: x.nonzero(as_tuple=True), a)
    run_both(lambda L, x: x.diag(), a)
    run_both(lambda L, x: x.tril(diagonal=-1), a)


def test_squeeze_flatten_unflatten_dim_checks_as_torch():
    a = rand((1, 2, 1), "float32", seed=30)
    z = np.asarray(rand((), "float32", seed=31))
    run_both(lambda L, x: x.squeeze((0, 2)), a)
    run_both(lambda L, x: L.squeeze(x, [-1, 0]), a)
    run_both(lambda L, x: x.flatten(-1, 0), z)
    # a dim named twice (after wrapping) in squeeze's list is torch's RuntimeError
    for dims in ((0, 0), (0, -3), [2, -1]):
        err_both(lambda L, x: x.squeeze(dims), a, words=["appears multiple times"])
        err_both(lambda L, x: L.squeeze(x.clone(), dims), a, words=["appears multiple times"])
    err_both(lambda L, x: x.squeeze((0, -1)), z, words=["appears multiple times"])
    # a 0-d tensor's flatten dims are checked against [-1, 0]; it has no dim to unflatten
    err_both(lambda L, x: x.flatten(1), z, words=["Dimension out of range"])
    err_both(lambda L, x: L.flatten(x, 0, -2), z, words=["Dimension out of range"])
    err_both(lambda L, x: x.unflatten(-1, (1,)), z, words=["Dimension specified as 0"])


@pytest.mark.parametrize("name", ["float32", "complex64"])
def test_adjoint_mH_of_0d_is_the_conjugate_with_a_warning(name):
    # torch 2.x deprecates but allows these on 0-d tensors (its warning names the call)
    z = np.asarray(rand((), name, seed=32))
    for what, fn in (("adjoint()", lambda L, x: L.adjoint(x)), ("adjoint()", lambda L, x: x.adjoint()),
                     ("Tensor.mH", lambda L, x: x.mH), ("Tensor.H", lambda L, x: x.H)):
        run_both(lambda L, x: fn(L, x).resolve_conj(), z, names=[name])
        with pytest.warns(UserWarning, match=re.escape(f"{what} is deprecated on 0-D tensors")):
            fn(ptcore, pt(z, name))
    err_both(lambda L, x: x.mH, np.ones(2, "float32"), words=["Got 1-D tensor"])
    err_both(lambda L, x: x.adjoint(), np.ones(2, "float32"), words=["Got 1-D tensor"])


def test_scatter_reduce_with_tensor_src_warns_once_per_process():
    # torch: TORCH_WARN_ONCE "The reduce argument of torch.scatter with Tensor src is
    # deprecated"; a number src takes reduce without a warning
    import warnings
    ptcore._warn._WARNED_ONCE.discard("scatter_reduce_src")      # (a fresh process)
    x, idx = ptcore.zeros(3), ptcore.tensor([0, 1, 0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x.scatter_(0, idx, 2.0, reduce="add")
        assert not w
        x.scatter_(0, idx, ptcore.ones(3), reduce="add")
        ptcore.scatter(x, 0, idx, ptcore.ones(3), reduce="multiply")
    assert len(w) == 1 and w[0].category is UserWarning and w[0].filename == __file__
    assert str(w[0].message).startswith("The reduce argument of torch.scatter with Tensor src "
                                        "is deprecated")
    assert x.tolist() == [6.0, 3.0, 0.0]
