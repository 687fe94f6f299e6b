"""Tensor indexing (``__getitem__`` / ``__setitem__``) against PyTorch.

Every case builds a ptcore tensor and a torch tensor from the same NumPy
array, applies the same index (index tensors are built with each library),
and compares values, shapes, dtypes, strides/offsets of views, whether the
result aliases the indexed tensor, and the exception type and message.
Tests that need PyTorch skip when it is not installed.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover - exercised only without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

HYP = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "float32", "float64", "complex64", "complex128"]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def values(shape, name="float64", seed=0):
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n, dtype=np.int64) + 7 * seed
    if name == "bool":
        out = (k * 2654435761 >> 3) % 2 == 1
    elif name in ("uint8", "int8"):
        out = k % 100
    elif name.startswith("complex"):
        out = k + 1j * (k % 5)
    elif name.startswith("float"):
        out = k * 0.5 - 3
    else:
        out = k * 3 - 50
    return np.asarray(out).astype(name if name != "bool" else np.bool_).reshape(shape)


def pt_of(a):
    return ptcore.from_numpy(np.array(a, copy=True))


def th_of(a):
    return torch.from_numpy(np.array(a, copy=True))


def layout(x):
    return (tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.is_contiguous())


def aliases(x, root):
    """x shares root's memory (a view of it)."""
    if x.numel() == 0 or root.numel() == 0:
        return x._base is root or x is root
    return x.untyped_storage().data_ptr() == root.untyped_storage().data_ptr()


def T(L, data, dtype="int64"):
    """An index tensor of library L."""
    return L.tensor(data, dtype=getattr(L, dtype))


def M(L, data):
    """A boolean mask of library L."""
    return L.tensor(data, dtype=L.bool)


def same_exc(torch_fn, pt_fn, words=()):
    with pytest.raises(Exception) as te:
        torch_fn()
    with pytest.raises(Exception) as pe:
        pt_fn()
    assert type(pe.value) is type(te.value), (
        f"ptcore raised {type(pe.value).__name__}({pe.value}); "
        f"torch raised {type(te.value).__name__}({te.value})")
    for w in words:
        assert w.lower() in str(te.value).lower(), f"bad test: {w!r} not in torch message {te.value}"
        assert w.lower() in str(pe.value).lower(), f"{w!r} missing from ptcore message: {pe.value}"


def check_get(a, key, expect_view=None):
    """Index ptcore and torch copies of ``a`` with ``key(L)``; compare everything."""
    t, tt = pt_of(a), th_of(a)
    r = tt[key(torch)]
    p = t[key(ptcore)]
    assert tuple(p.shape) == tuple(r.shape), f"shape {tuple(p.shape)} vs torch {tuple(r.shape)}"
    assert str(p.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
    np.testing.assert_array_equal(p.numpy(), r.numpy())
    th_view = aliases(r, tt)
    if expect_view is not None:
        assert th_view == expect_view, "bad test: torch view-ness differs from expectation"
    pt_view = aliases(p, t)
    assert pt_view == th_view, f"ptcore result is a {'view' if pt_view else 'copy'}, torch's a " \
                               f"{'view' if th_view else 'copy'}"
    if th_view:
        assert layout(p) == layout(r)
        assert p._base is t
        # writing through the view reaches the base
        if p.numel():
            p.numpy()[...] = a.reshape(-1)[0] if a.size else 0
            r.numpy()[...] = a.reshape(-1)[0] if a.size else 0
            np.testing.assert_array_equal(t.numpy(), tt.numpy())
    else:
        assert p._base is None
        if p.numel():
            before = t.numpy().copy()
            p.numpy()[...] = 0
            np.testing.assert_array_equal(t.numpy(), before)   # a copy: base untouched
    return p, r


class Lst(list):
    """A Python-list value for assignment.  PyTorch 2.13 rejects lists on the right of
    ``x[...] = ...`` (TypeError "can't assign a list to a ..."), and so does ptcore."""


def check_set(a, key, value):
    """``x[key(L)] = value(L)`` on ptcore and torch copies of ``a``; compare the results."""
    t, tt = pt_of(a), th_of(a)
    ptr = t.data_ptr()
    tv = value(torch)
    tv = list(tv) if isinstance(tv, Lst) else tv
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tt[key(torch)] = tv
    except Exception as e:
        pv = value(ptcore)
        pv = list(pv) if isinstance(pv, Lst) else pv
        with pytest.raises(type(e)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t[key(ptcore)] = pv
        return None
    pv = value(ptcore)
    pv = list(pv) if isinstance(pv, Lst) else pv
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t[key(ptcore)] = pv
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    return t


A3 = values((3, 4, 5), "float32")      # float32: the dtype of value tensors built below


# ---------------------------------------------------------------------------
# NumPy-only checks (run without PyTorch too; only keys where NumPy and PyTorch agree)
# ---------------------------------------------------------------------------
NP_KEYS = [
    ("int", lambda L: 1, True), ("slices", lambda L: (slice(None, None, 2), slice(1, 3)), True),
    ("none-ellipsis", lambda L: (None, Ellipsis, 2), True), ("neg", lambda L: (-1, -2), True),
    ("list", lambda L: [2, 0, -1], False), ("two-lists", lambda L: ([0, 2], [3, 1]), False),
    ("tensor-slice", lambda L: (T(L, [[0], [2]]), slice(1, 4)), False),
    ("mask", lambda L: M(L, np.arange(12).reshape(3, 4) % 2 == 0), False),
    ("slice-mask", lambda L: (slice(None), M(L, [True, False, True, False])), False),
]


@pytest.mark.parametrize("key,is_view", [pytest.param(k, v, id=i) for i, k, v in NP_KEYS])
def test_getitem_setitem_numpy(key, is_view):
    a = values((3, 4, 5), "float64")
    t = pt_of(a)
    np_key = _np_key(key)
    p = t[key(ptcore)]
    np.testing.assert_array_equal(p.numpy(), a[np_key])
    assert (p._base is t) == is_view
    ref = a.copy()
    ref[np_key] = -1.0
    t[key(ptcore)] = -1.0
    np.testing.assert_array_equal(t.numpy(), ref)
    vals = np.arange(a[np_key].size, dtype=np.float64).reshape(a[np_key].shape)
    ref[np_key] = vals
    t[key(ptcore)] = pt_of(vals)
    np.testing.assert_array_equal(t.numpy(), ref)


class _NpLib:
    """Stands in for a tensor library when building NumPy keys."""
    bool = np.bool_
    int64 = np.int64

    @staticmethod
    def tensor(data, dtype=None):
        return np.asarray(data, dtype=dtype)


def _np_key(key):
    return key(_NpLib)


# ---------------------------------------------------------------------------
# basic indexing: views
# ---------------------------------------------------------------------------
BASIC_KEYS = [
    ("int", lambda L: 1),
    ("neg-int", lambda L: -1),
    ("int-int", lambda L: (2, -3)),
    ("int-int-int", lambda L: (0, 1, 4)),
    ("slice", lambda L: slice(1, None)),
    ("slice-step", lambda L: slice(None, None, 2)),
    ("slice-step3-neg-start", lambda L: (slice(None), slice(-3, None, 3))),
    ("slice-out-of-range", lambda L: slice(1, 100)),
    ("slice-neg-bounds", lambda L: (slice(-100, -1), 2)),
    ("slice-empty", lambda L: slice(2, 1)),
    ("slice-empty-past-end", lambda L: (slice(None), slice(7, None))),
    ("none", lambda L: None),
    ("none-mid", lambda L: (slice(None), None, 1)),
    ("none-end", lambda L: (Ellipsis, None)),
    ("ellipsis", lambda L: Ellipsis),
    ("ellipsis-int", lambda L: (Ellipsis, 2)),
    ("int-ellipsis-int", lambda L: (1, Ellipsis, 2)),
    ("ellipsis-none-slice", lambda L: (Ellipsis, None, slice(1, 4, 2))),
    ("empty-tuple", lambda L: ()),
    ("mix", lambda L: (slice(1, 3), None, -2, slice(None, None, 3))),
    ("many-none", lambda L: (None, 0, None, None, slice(None))),
    ("step-larger-than-dim", lambda L: (slice(None), slice(0, 4, 5))),
    ("numpy-int", lambda L: (np.int64(1), np.int32(-1))),
]


@needs_torch
@pytest.mark.parametrize("key", [k for _, k in BASIC_KEYS], ids=[i for i, _ in BASIC_KEYS])
def test_basic_getitem_views(key):
    check_get(A3, key, expect_view=True)


@needs_torch
@pytest.mark.parametrize("key", [pytest.param(lambda L: True, id="true"),
                                 pytest.param(lambda L: False, id="false"),
                                 pytest.param(lambda L: (0, True), id="int-true"),
                                 pytest.param(lambda L: (Ellipsis, False), id="ellipsis-false")])
def test_bool_scalar_index(key):
    """x[True] / x[False] add a dim of size 1 / 0; PyTorch returns a copy, not a view."""
    check_get(A3, key, expect_view=False)


@needs_torch
def test_zero_dim_int_tensor_index_is_a_view():
    """A 0-d integer tensor index acts like a Python int in PyTorch (select -> view)."""
    check_get(A3, lambda L: T(L, 1), expect_view=True)
    check_get(A3, lambda L: (1, T(L, -2)), expect_view=True)


@needs_torch
@pytest.mark.parametrize("shape", [(), (1,), (0,), (2, 0, 3), (1, 1)])
def test_basic_getitem_degenerate_shapes(shape):
    a = values(shape)
    for key in [lambda L: Ellipsis, lambda L: None, lambda L: (None, Ellipsis, None), lambda L: ()]:
        check_get(a, key, expect_view=True)
    if len(shape):
        for key in [lambda L: slice(None), lambda L: slice(1, None), lambda L: (Ellipsis, slice(None, None, 2))]:
            check_get(a, key, expect_view=True)


@needs_torch
def test_basic_getitem_on_noncontiguous_views():
    a = values((4, 6))
    for f in [lambda x: x.t(), lambda x: x[::2, 1::2], lambda x: x.expand(2, 4, 6), lambda x: x.diagonal()]:
        t, tt = pt_of(a), th_of(a)
        v, tv = f(t), f(tt)
        for key in [(0,), (slice(None), -1), (Ellipsis, slice(None, None, 2)), (None, 1)]:
            key = key[:v.dim()] if len([k for k in key if k is not None and k is not Ellipsis]) > v.dim() else key
            p, r = v[key], tv[key]
            assert layout(p) == layout(r)
            np.testing.assert_array_equal(p.numpy(), r.numpy())
            assert p._base is t


# ---------------------------------------------------------------------------
# advanced indexing: copies
# ---------------------------------------------------------------------------
ADV_KEYS = [
    ("list", lambda L: [0, 2]),
    ("list-neg", lambda L: [-1, 0, -3]),
    ("list-dup", lambda L: [1, 1, 0]),
    ("list-empty", lambda L: []),
    ("tensor", lambda L: T(L, [2, 0])),
    ("tensor-int32", lambda L: T(L, [2, 0], "int32")),
    ("tensor-2d", lambda L: T(L, [[0, 1], [2, 0]])),
    ("tensor-0d-in-tuple-with-list", lambda L: (T(L, 1), [0, 3])),
    ("tensor-neg", lambda L: T(L, [-1, -2])),
    ("two-lists", lambda L: ([0, 2], [1, 3])),
    ("three-lists", lambda L: ([0, 2], [1, 3], [4, 0])),
    ("broadcast-lists", lambda L: ([[0], [2]], [1, 3, 0])),
    ("tensor-then-slice", lambda L: (T(L, [2, 1]), slice(1, 3))),
    ("slice-then-tensor", lambda L: (slice(None), T(L, [3, 0, 1]))),
    ("slice-list-slice", lambda L: (slice(None, 2), [0, 3], slice(None, None, 2))),
    ("ellipsis-list", lambda L: (Ellipsis, [0, -1])),
    ("none-list", lambda L: (None, [1, 2])),
    ("list-none", lambda L: ([1, 2], None)),
    ("split-adv-by-slice", lambda L: ([0, 1], slice(None), [2, 3])),
    ("split-adv-by-none", lambda L: ([0, 1], None, [2, 3])),
    ("int-and-list", lambda L: (1, [0, 2])),
    ("list-and-int", lambda L: ([0, 2], 1)),
    ("int-slice-list", lambda L: (0, slice(None), [1, 4])),
    ("list-slice-int", lambda L: ([1, 2], slice(None), 3)),
    ("mask-dim0", lambda L: M(L, [True, False, True])),
    ("mask-list", lambda L: [True, False, True]),
    ("mask-all-false", lambda L: M(L, [False, False, False])),
    ("mask-2d", lambda L: M(L, np.arange(12).reshape(3, 4) % 3 == 0)),
    ("mask-3d", lambda L: M(L, values((3, 4, 5), "bool"))),
    ("slice-mask", lambda L: (slice(None), M(L, [True, False, False, True]))),
    ("ellipsis-mask", lambda L: (Ellipsis, M(L, [False, True, True, False, True]))),
    ("mask-and-list", lambda L: (M(L, [True, False, True]), slice(None), [0, 4])),
    ("mask-0d-true", lambda L: M(L, True)),
    ("mask-0d-false", lambda L: M(L, False)),
]


@needs_torch
@pytest.mark.parametrize("key", [k for _, k in ADV_KEYS], ids=[i for i, _ in ADV_KEYS])
def test_advanced_getitem(key):
    check_get(A3, key, expect_view=False)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_advanced_getitem_dtypes(dtype):
    a = values((4, 3), dtype)
    for key in [lambda L: [3, 0], lambda L: (slice(None), T(L, [2, 2])),
                lambda L: M(L, [True, False, False, True]), lambda L: (M(L, np.eye(4, 3, dtype=bool)),)]:
        p, r = check_get(a, key, expect_view=False)
        assert p.dtype == getattr(ptcore, dtype)


@needs_torch
def test_advanced_getitem_on_noncontiguous():
    a = values((4, 6))
    for f in [lambda x: x.t(), lambda x: x[::2, 1::2], lambda x: x.expand(2, 4, 6)[:, 1:]]:
        t, tt = pt_of(a), th_of(a)
        v, tv = f(t), f(tt)
        for key in [lambda L: [0, -1], lambda L: (slice(None), T(L, [1, 0])),
                    lambda L: M(L, np.ones(tuple(v.shape[:1]), bool))]:
            p, r = v[key(ptcore)], tv[key(torch)]
            assert tuple(p.shape) == tuple(r.shape)
            np.testing.assert_array_equal(p.numpy(), r.numpy())
            assert not aliases(p, t)


@needs_torch
def test_int_separated_from_advanced_index_placement():
    """PyTorch applies integers first (as select), so x[:, 0, :, [0, 1]] on (2,3,4,5)
    has shape (2, 4, 2); NumPy would treat the 0 as an advanced index -> (2, 2, 4)."""
    a = values((2, 3, 4, 5))
    p, r = check_get(a, lambda L: (slice(None), 0, slice(None), [0, 1]), expect_view=False)
    assert tuple(r.shape) == (2, 4, 2)
    check_get(a, lambda L: ([0, 1], slice(None), 2), expect_view=False)
    check_get(a, lambda L: (1, slice(None), slice(None), T(L, [4, 0])), expect_view=False)


# ---------------------------------------------------------------------------
# assignment
# ---------------------------------------------------------------------------
SET_CASES = [
    # (id, key, value)
    ("int-scalar", lambda L: 1, lambda L: 5.5),
    ("slice-scalar", lambda L: (slice(1, None), 0), lambda L: 5),
    ("step-scalar", lambda L: (Ellipsis, slice(None, None, 2)), lambda L: -1.25),
    ("ellipsis-list", lambda L: Ellipsis, lambda L: Lst([[1.0, 2.0, 3.0, 4.0, 5.0]])),
    ("ellipsis-list-scalarlike", lambda L: Ellipsis, lambda L: Lst([7.0])),
    ("int-list", lambda L: (0, 1), lambda L: Lst([1, 2, 3, 4, 5])),
    ("int-tensor-bcast-row", lambda L: 0, lambda L: L.arange(5.0)),
    ("int-tensor-bcast-col", lambda L: 2, lambda L: L.ones(4, 1) * 3),
    ("none-slice", lambda L: (None, slice(0, 2)), lambda L: L.zeros(1, 4, 5)),
    ("0d-tensor", lambda L: (0, 0), lambda L: L.tensor(9.0)),
    ("int-dtype-value", lambda L: (1, 1), lambda L: L.tensor([1, 2, 3, 4, 5], dtype=L.int32)),
    ("float32-0d-value", lambda L: (0, slice(None), 0), lambda L: L.tensor(2.0, dtype=L.float32)),
    ("list-scalar", lambda L: [0, 2], lambda L: 1.5),
    ("list-neg-tensor", lambda L: [-1, 0], lambda L: L.arange(20.0).reshape(4, 5)),
    ("list-bcast", lambda L: ([0, 2], slice(None), [1, 3]), lambda L: L.tensor([[10.0], [20.0]])),
    ("two-lists-scalar", lambda L: ([0, 2], [1, 3]), lambda L: -4),
    ("two-lists-list", lambda L: ([0, 2], [1, 3]), lambda L: Lst([[1.0] * 5, [2.0] * 5])),
    ("adv-dtype-mismatch", lambda L: [0, 2], lambda L: L.ones(4, 5, dtype=L.float64)),
    ("mask-dtype-mismatch", lambda L: M(L, [True, False, True]), lambda L: L.ones(5, dtype=L.int64)),
    ("mask-0d-dtype-mismatch", lambda L: M(L, [True, False, True]), lambda L: L.tensor(2, dtype=L.int64)),
    ("basic-dtype-convert", lambda L: (slice(None), 0), lambda L: L.ones(5, dtype=L.int64)),
    ("tensor-index-tensor-value", lambda L: (slice(None), T(L, [3, 0])), lambda L: L.full((3, 2, 5), 8.0)),
    ("mask-scalar", lambda L: M(L, values((3, 4, 5), "bool")), lambda L: 0.0),
    ("mask-row-tensor", lambda L: M(L, [True, False, True]), lambda L: L.arange(5.0)),
    ("mask-values", lambda L: M(L, np.arange(12).reshape(3, 4) % 5 == 0),
     lambda L: L.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]] * 3)),
    ("slice-mask", lambda L: (slice(None), M(L, [True, False, False, True])), lambda L: L.tensor(3.0)),
    ("int-slice-list", lambda L: (0, slice(None), [1, 4]), lambda L: L.tensor([[1.0, 2.0]])),
    ("sep-int-adv", lambda L: (slice(None), 0, [1, 4]), lambda L: L.tensor([100.0, 200.0])),
    ("int-tensor-0d-index", lambda L: T(L, 2), lambda L: -3.0),
    ("true", lambda L: True, lambda L: 1.0),
    ("false", lambda L: False, lambda L: 1.0),
    ("empty-list", lambda L: [], lambda L: 1.0),
    ("bool-value", lambda L: 1, lambda L: True),
    ("shape-mismatch", lambda L: 0, lambda L: L.ones(3)),
    ("adv-shape-mismatch", lambda L: [0, 1], lambda L: L.ones(3, 4, 5)),
]


@needs_torch
@pytest.mark.parametrize("key,value", [(k, v) for _, k, v in SET_CASES], ids=[i for i, _, _ in SET_CASES])
def test_setitem_matches_torch(key, value):
    check_set(A3, key, value)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("value", [pytest.param(lambda L: 2.75, id="float"),
                                   pytest.param(lambda L: -1, id="neg-int"),
                                   pytest.param(lambda L: True, id="bool"),
                                   pytest.param(lambda L: 200, id="200"),
                                   pytest.param(lambda L: L.tensor([1.9, -0.9, 0.0]), id="float-tensor"),
                                   pytest.param(lambda L: L.tensor([3, 0, 1], dtype=L.int64), id="int-tensor"),
                                   pytest.param(lambda L: L.tensor([True, False, True]), id="bool-tensor"),
                                   pytest.param(lambda L: 1.5j, id="complex"),
                                   pytest.param(lambda L: Lst([1.5, 2.5, 3.5]), id="list"),
                                   pytest.param(lambda L: Lst([[1.5], [-2.5], [3.5]]), id="list-col")])
@pytest.mark.parametrize("key", [pytest.param(lambda L: (slice(None), 1), id="basic"),
                                 pytest.param(lambda L: (slice(None), [1]), id="advanced"),
                                 pytest.param(lambda L: M(L, [True, True, True]), id="mask")])
def test_setitem_dtype_conversion(dtype, value, key):
    """Scalars, tensors and lists of other dtypes are converted as PyTorch does
    (truncation toward zero, nonzero -> True, integer wrap-around, overflow errors)."""
    check_set(values((3, 2), dtype), key, value)


@needs_torch
def test_setitem_through_views():
    a = values((4, 5))
    t, tt = pt_of(a), th_of(a)
    for f, k, v in [(lambda x: x.t(), (slice(None), 1), 7.0), (lambda x: x[1:, ::2], (0,), -2.0),
                    (lambda x: x.diagonal(), (slice(None),), 0.5), (lambda x: x[2], ([0, 4],), 3.0),
                    (lambda x: x.t()[1:], (Ellipsis,), 1.0)]:
        pv, tv = f(t), f(tt)
        pv[k] = v
        tv[k] = v
        np.testing.assert_array_equal(t.numpy(), tt.numpy())
    # advanced setitem on a non-contiguous view writes through to the base
    pv, tv = t.t(), tt.t()
    pv[[0, 2]] = ptcore.tensor([-9.0, -8.0, -7.0, -6.0], dtype=ptcore.float64)
    tv[[0, 2]] = torch.tensor([-9.0, -8.0, -7.0, -6.0], dtype=torch.float64)
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    pv[ptcore.tensor([True, False, True, False, False])] = 4.0
    tv[torch.tensor([True, False, True, False, False])] = 4.0
    np.testing.assert_array_equal(t.numpy(), tt.numpy())


@needs_torch
def test_setitem_bumps_version():
    t, tt = pt_of(A3), th_of(A3)
    for key in [lambda L: 1, lambda L: [0, 1], lambda L: (slice(None), M(L, [True, False, False, True]))]:
        v0, tv0 = t._version, tt._version
        t[key(ptcore)] = 1.0
        tt[key(torch)] = 1.0
        assert tt._version > tv0
        assert t._version > v0


@needs_torch
def test_setitem_self_overlap():
    """x[1:] = x[:-1] and x[[1, 2]] = x[[0, 1]]: results as PyTorch's (or its error)."""
    a = np.arange(8.0)
    for key, src in [(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None)),
                     ([1, 2], [0, 1]), (slice(0, 4), slice(4, None))]:
        t, tt = pt_of(a), th_of(a)
        try:
            tt[key] = tt[src]
        except RuntimeError:
            with pytest.raises(RuntimeError):
                t[key] = t[src]
            continue
        t[key] = t[src]
        np.testing.assert_array_equal(t.numpy(), tt.numpy())


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
def IE(id_, shape, key, words=()):
    return pytest.param(shape, key, words, id=id_)


GET_ERRORS = [
    IE("too-many-int", (2, 3), lambda L: (0, 0, 0), ["too many indices for tensor of dimension 2"]),
    IE("too-many-slices", (2, 3), lambda L: (slice(None),) * 3, ["too many indices"]),
    IE("too-many-with-ellipsis", (2, 3), lambda L: (0, Ellipsis, 0, 0), ["too many indices"]),
    IE("too-many-adv", (2, 3), lambda L: ([0], [0], [0]), ["too many indices"]),
    IE("int-oob", (2, 3), lambda L: 2, ["index 2 is out of bounds for dimension 0 with size 2"]),
    IE("int-oob-neg", (2, 3), lambda L: -3, ["index -3 is out of bounds for dimension 0 with size 2"]),
    IE("int-oob-dim1", (2, 3), lambda L: (0, 3), ["index 3 is out of bounds for dimension 1 with size 3"]),
    IE("int-oob-empty", (0, 3), lambda L: 0, ["out of bounds"]),
    IE("list-oob-empty-dim0", (0, 3), lambda L: [0], ["out of bounds"]),
    IE("tensor-oob-empty-dim0", (0, 3), lambda L: T(L, [0, 0]), ["out of bounds"]),
    IE("list-oob-empty-dim1", (2, 0), lambda L: (slice(None), [0]), ["out of bounds"]),
    IE("list-oob-empty-dim-of-empty", (0, 0), lambda L: (slice(None), [0]), ["out of bounds"]),
    IE("ellipsis-list-oob-empty", (1, 0, 0), lambda L: (Ellipsis, [0]), ["out of bounds"]),
    IE("tensor-oob-empty-neg", (2, 0), lambda L: (Ellipsis, T(L, [-1])), ["out of bounds"]),
    IE("list-oob", (2, 3), lambda L: [0, 5], ["index 5 is out of bounds for dimension 0 with size 2"]),
    IE("list-oob-neg", (2, 3), lambda L: [-3], ["index -3 is out of bounds for dimension 0 with size 2"]),
    IE("tensor-oob-dim1", (2, 3), lambda L: (slice(None), T(L, [0, 3])), ["index 3 is out of bounds"]),
    IE("neg-step", (4,), lambda L: slice(None, None, -1), ["step must be greater than zero"]),
    IE("neg-step-dim1", (2, 4), lambda L: (0, slice(3, 0, -2)), ["step must be greater than zero"]),
    IE("neg-step-with-adv", (2, 4), lambda L: ([0], slice(None, None, -1)), ["step must be greater than zero"]),
    IE("zero-step", (4,), lambda L: slice(None, None, 0)),
    IE("0d-int", (), lambda L: 0, ["invalid index of a 0-dim tensor"]),
    IE("0d-neg-int", (), lambda L: -1),
    IE("0d-slice", (), lambda L: slice(None)),
    IE("0d-list", (), lambda L: [0], ["too many indices"]),
    IE("float", (2, 3), lambda L: 1.0, ["only integers, slices"]),
    IE("float-in-tuple", (2, 3), lambda L: (0, 1.5), ["only integers, slices"]),
    IE("float-tensor", (2, 3), lambda L: L.tensor([0.0, 1.0]), ["tensors used as indices must be long, int, byte or bool tensors"]),
    IE("int16-tensor", (2, 3), lambda L: T(L, [0, 1], "int16"), ["tensors used as indices must be long, int, byte or bool"]),
    IE("int8-tensor", (2, 3), lambda L: T(L, [0, 1], "int8"), ["tensors used as indices must be long, int, byte or bool"]),
    IE("mask-shape", (2, 3), lambda L: M(L, [True, False, True]),
       ["The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3] at index 0"]),
    IE("mask-shape-dim1", (2, 3), lambda L: (slice(None), M(L, [True, False])),
       ["does not match the shape of the indexed tensor"]),
    IE("mask-2d-shape", (2, 3), lambda L: M(L, [[True, False], [True, True]]), ["does not match the shape"]),
    IE("adv-shape-mismatch", (3, 3), lambda L: ([0, 1], [0, 1, 2]), ["shape mismatch"]),
]


@needs_torch
@pytest.mark.parametrize("shape,key,words", GET_ERRORS)
def test_getitem_errors(shape, key, words):
    a = values(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_exc(lambda: th_of(a)[key(torch)], lambda: pt_of(a)[key(ptcore)], words)


SET_ERRORS = [
    IE("too-many", (2, 3), lambda L: (0, 0, 0), ["too many indices"]),
    IE("int-oob", (2, 3), lambda L: 5, ["index 5 is out of bounds for dimension 0 with size 2"]),
    IE("list-oob", (2, 3), lambda L: [0, 2], ["index 2 is out of bounds for dimension 0 with size 2"]),
    IE("neg-step", (2, 3), lambda L: slice(None, None, -1), ["step must be greater than zero"]),
    IE("0d-int", (), lambda L: 0),
    IE("mask-shape", (2, 3), lambda L: M(L, [True, False, True]), ["does not match the shape"]),
    IE("float-tensor", (2, 3), lambda L: L.tensor([0.0]), ["tensors used as indices must be"]),
]


@needs_torch
@pytest.mark.parametrize("shape,key,words", SET_ERRORS)
def test_setitem_errors(shape, key, words):
    a = values(shape)
    tt, t = th_of(a), pt_of(a)

    def do(L, x):
        x[key(L)] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_exc(lambda: do(torch, tt), lambda: do(ptcore, t), words)
    np.testing.assert_array_equal(t.numpy(), a)


@needs_torch
@pytest.mark.parametrize("key,value,words", [
    pytest.param(lambda L: 0, lambda L: L.ones(5), ["must match"], id="basic-bcast"),
    pytest.param(lambda L: slice(None), lambda L: L.ones(2, 2), ["must match"], id="basic-bcast-2d"),
    pytest.param(lambda L: [0, 1], lambda L: L.ones(3, 3),
                 ["shape mismatch: value tensor of shape [3, 3] cannot be broadcast to indexing result of shape [2, 3]"],
                 id="adv-bcast"),
    pytest.param(lambda L: M(L, [True, True]), lambda L: L.ones(4), ["shape mismatch"], id="mask-bcast"),
    pytest.param(lambda L: 0, lambda L: 1j, ["value cannot be converted to type", "without overflow"],
                 id="complex-into-float"),
])
def test_setitem_value_errors(key, value, words):
    a = values((2, 3), "float32")
    tt, t = th_of(a), pt_of(a)

    def do(L, x):
        x[key(L)] = value(L)
    same_exc(lambda: do(torch, tt), lambda: do(ptcore, t), words)
    np.testing.assert_array_equal(t.numpy(), a)


@needs_torch
@pytest.mark.parametrize("dtype,value", [("uint8", 256), ("uint8", -256), ("int8", 1000), ("int8", -129),
                                         ("int16", 40000), ("int32", 2**31), ("int64", 1j), ("int64", 2**63),
                                         ("float32", 1e300), ("float32", -1e300)])
def test_setitem_scalar_overflow(dtype, value):
    a = values((3,), dtype)

    def do(L, x):
        x[0] = value
    # Python ints outside int64 fail while unpacking (ValueError), before any dtype check
    big_int = isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63
    words = ["unpacking long long"] if big_int else ["without overflow"]
    same_exc(lambda: do(torch, th_of(a)), lambda: do(ptcore, pt_of(a)), words)

    def do_adv(L, x):
        x[[0]] = value
    same_exc(lambda: do_adv(torch, th_of(a)), lambda: do_adv(ptcore, pt_of(a)))


@needs_torch
def test_setitem_into_expanded_raises():
    a = values((1, 4))
    for key in [Ellipsis, (slice(None), 0), (slice(None),)]:
        same_exc(lambda: th_of(a).expand(3, 4).__setitem__(key, torch.tensor(1.0)),
                 lambda: pt_of(a).expand(3, 4).__setitem__(key, ptcore.tensor(1.0)),
                 ["more than one element of the written-to tensor"])


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------
@st.composite
def index_case(draw, allow_adv=True, unique_adv=False):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    nd = len(shape)
    items, d = [], 0
    n_items = draw(st.integers(0, nd + 1))
    ell_at = draw(st.integers(-1, n_items))
    for pos in range(n_items + 1):
        if pos == ell_at:
            items.append(("ell",))
            continue
        if pos == n_items:
            break
        kinds = ["int", "slice", "none"] + (["list", "tensor", "mask"] if allow_adv else [])
        kind = draw(st.sampled_from(kinds))
        if kind != "none" and d >= nd:
            kind = "none"
        if kind == "int" and shape[d] == 0:
            kind = "slice"
        if kind == "int":
            items.append(("int", draw(st.integers(-shape[d], shape[d] - 1))))
            d += 1
        elif kind == "slice":
            se = st.one_of(st.none(), st.integers(-5, 5))
            items.append(("slice", draw(se), draw(se), draw(st.sampled_from([None, 1, 2]))))
            d += 1
        elif kind == "none":
            items.append(("none",))
        elif kind in ("list", "tensor"):
            n = shape[d]
            if n == 0:
                items.append(("slice", None, None, None))
            else:
                k = draw(st.integers(1, 3))
                if unique_adv:
                    vals = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(k, n), unique=True))
                    vals = [v - n if draw(st.booleans()) else v for v in vals]
                else:
                    vals = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=k))
                items.append((kind, vals))
            d += 1
        else:  # mask over one dim
            m = draw(st.lists(st.booleans(), min_size=shape[d], max_size=shape[d]))
            items.append(("mask", m))
            d += 1
    return shape, items


def build_key(L, items):
    out = []
    for it in items:
        k = it[0]
        if k == "ell":
            out.append(Ellipsis)
        elif k == "int":
            out.append(it[1])
        elif k == "slice":
            out.append(slice(*it[1:]))
        elif k == "none":
            out.append(None)
        elif k == "list":
            out.append(list(it[1]))
        elif k == "tensor":
            out.append(L.tensor(it[1], dtype=L.int64))
        else:
            out.append(L.tensor(it[1], dtype=L.bool).reshape(-1))
    return tuple(out)


def _n_adv(items):
    return sum(1 for it in items if it[0] in ("list", "tensor", "mask"))


@needs_torch
@settings(max_examples=200, **HYP)
@given(case=index_case(), dtype=st.sampled_from(["float64", "int32", "bool", "complex64"]))
def test_random_getitem(case, dtype):
    shape, items = case
    a = values(shape, dtype)
    t, tt = pt_of(a), th_of(a)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tt[build_key(torch, items)]
    except (IndexError, RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            t[build_key(ptcore, items)]
        return
    p = t[build_key(ptcore, items)]
    assert tuple(p.shape) == tuple(r.shape), f"shape {tuple(p.shape)} vs torch {tuple(r.shape)}"
    np.testing.assert_array_equal(p.numpy(), r.numpy())
    assert aliases(p, t) == aliases(r, tt)
    if _n_adv(items) == 0 and aliases(r, tt):
        assert tuple(p.stride()) == tuple(r.stride())
        assert p.is_contiguous() == r.is_contiguous()
        # the offset of an empty slice is pinned by test_basic_getitem_views[slice-empty*]
        if r.numel():
            assert p.storage_offset() == r.storage_offset()


@needs_torch
@settings(max_examples=200, **HYP)
@given(case=index_case(unique_adv=True), data=st.data(),
       dtype=st.sampled_from(["float64", "int64", "bool", "float32"]))
def test_random_setitem(case, data, dtype):
    shape, items = case
    a = values(shape, dtype)
    t, tt = pt_of(a), th_of(a)
    # masks and unique index lists never write one element twice, so the result is defined
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target_shape = tuple(tt[build_key(torch, items)].shape)
    except (IndexError, RuntimeError, ValueError):
        return
    n_adv_lists = sum(1 for it in items if it[0] in ("list", "tensor"))
    if n_adv_lists > 1:     # several index lists could address one element twice
        return
    kind = data.draw(st.sampled_from(["scalar", "tensor", "bcast", "list"]), label="value kind")
    if kind == "scalar":
        val = data.draw(st.sampled_from([0, 3, -2, 1.5, True]), label="scalar")
        pv = tv = val
    else:
        vshape = target_shape
        if kind == "bcast":
            vshape = tuple(1 if data.draw(st.booleans(), label="b") else s for s in vshape)
            vshape = vshape[data.draw(st.integers(0, len(vshape)), label="drop"):]
        v = values(vshape, dtype, seed=9)
        if kind == "list" and v.ndim:      # refused by both, see Lst
            with pytest.raises(TypeError):
                tt[build_key(torch, items)] = v.tolist()
            with pytest.raises(TypeError, match="can't assign a list"):
                t[build_key(ptcore, items)] = v.tolist()
            return
        pv, tv = pt_of(v), th_of(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tt[build_key(torch, items)] = tv
        t[build_key(ptcore, items)] = pv
    np.testing.assert_array_equal(t.numpy(), tt.numpy())


@needs_torch
@pytest.mark.parametrize("dtype,value", [("uint8", -1), ("uint8", -255), ("uint8", 255), ("int8", -128),
                                         ("bool", 1j), ("bool", 0.25), ("bool", -3), ("int16", -2.9),
                                         ("float16", 65504.0), ("float16", 1e-8), ("int64", 2**62),
                                         ("float16", 1e6), ("float16", -1e9), ("float32", 1e38)])
def test_setitem_scalar_in_range(dtype, value):
    """Scalars PyTorch accepts: unsigned destinations wrap negative values down to -max,
    bool takes any number (nonzero -> True), floats truncate toward zero."""
    a = values((4,), dtype)
    for key in [lambda L: 1, lambda L: slice(None, None, 2), lambda L: [0, 3], lambda L: M(L, [True, False, False, True])]:
        check_set(a, key, lambda L: value)


@needs_torch
@pytest.mark.parametrize("key", ["'a'", "b'a'", "(None, 'a')", "(0, 'a')", "[0, 'a']", "1.5",
                                 "{0: 1}", "object()"])
def test_non_index_items_raise_as_torch(key):
    """A str/bytes item is read as data for an index tensor (TypeError "new(): invalid data
    type"), other non-index objects raise IndexError; for reads and writes alike."""
    got = []
    for L in (torch, ptcore):
        x = L.arange(6.).reshape(2, 3)
        row = []
        for op in (lambda: x[eval(key)], lambda: x.__setitem__(eval(key), 1.0)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    op()
                row.append(None)
            except Exception as e:  # noqa: BLE001 - the type is compared
                row.append((type(e), str(e).replace("torch", "ptcore")
                            if type(e) is TypeError else None))
        got.append(row)
    assert got[1] == got[0]


@needs_torch
@pytest.mark.parametrize("value", ["np.float32(1.5)", "np.float16(2)", "np.bool_(True)", "np.array([1., 2.])",
                                   "np.array(3.)", "(1., 2.)", "None", "'a'"])
@pytest.mark.parametrize("key", ["slice(0, 2)", "[0, 1]", "0"])
def test_setitem_refuses_non_number_values(value, key):
    """torch takes only a tensor or a Python number (NumPy ints, float64) as the value."""
    for L in (torch, ptcore):
        x = L.zeros(3)
        with pytest.raises(TypeError, match="can't assign a"):
            x[eval(key)] = eval(value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "uint8", "complex64"])
@pytest.mark.parametrize("value", ["[1.]", "np.float32(1.5)", "None", "'a'"])
def test_setitem_refusal_names_the_legacy_type(dtype, value):
    """The refusal names the value's type and the tensor's legacy type, as torch's
    ("can't assign a list to a torch.FloatTensor")."""
    msgs = []
    for L in (torch, ptcore):
        x = L.zeros(3, dtype=getattr(L, dtype))
        with pytest.raises(TypeError) as e:
            x[0:2] = eval(value)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0].replace("torch.", "ptcore."), msgs


def test_setitem_takes_numpy_ints_and_float64():
    x = ptcore.zeros(3)
    x[0], x[1:], x[[2]] = np.int32(4), np.float64(2.5), np.int64(7)
    assert x.tolist() == [4.0, 2.5, 7.0]


def test_masked_select_contiguous_rows_against_torch():
    # the branch-free compaction of contiguous rows (4- and 8-byte elements) and the
    # row count of a contiguous mask, against torch on random masks, broadcast
    # masks and every element size
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for shape, mshape in [((100, 100), (100, 100)), ((3, 4, 37), (4, 37)), ((129,), (129,)),
                          ((0, 3), (0, 3)), ((5, 3), (5, 1)), ((2, 1), (2, 1))]:
        for dt in ("float32", "float64", "int64", "int32", "float16", "bool", "complex64"):
            a = rng.standard_normal(shape).astype(dt) if dt != "bool" else rng.random(shape) > .5
            for p in (0.0, 0.4, 1.0):
                m = rng.random(mshape) < p
                got = ptcore.masked_select(ptcore.tensor(a), ptcore.tensor(m)).numpy()
                want = torch.masked_select(torch.tensor(a), torch.tensor(m)).numpy()
                np.testing.assert_array_equal(got, want)
                if shape == mshape:
                    np.testing.assert_array_equal(ptcore.tensor(a)[ptcore.tensor(m)].numpy(), want)
