"""Advanced indexing against PyTorch: ``x[idx]``, ``x[idx] = v`` and
``index_put_`` with integer tensors (int64/int32), lists, bool/uint8 masks,
mixed with ints/slices/None/Ellipsis; result-dim placement, every dtype,
non-contiguous and zero-size operands, accumulation, errors.

(Basic indexing is covered by tests/test_indexing.py.)
"""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from ops_oracle import (ALL_DTYPES, INT_DTYPES, rand, pt, th, both, to_np, dtype_name,  # noqa: E402,F401
                        assert_same, same_error)


class T:
    """An int (or given dtype) index tensor, built with each library."""

    def __init__(self, data, dtype="int64"):
        self.data, self.dtype = data, dtype

    def build(self, L):
        return L.tensor(self.data, dtype=getattr(L, self.dtype))


class M(T):
    """A bool mask, built with each library."""

    def __init__(self, data):
        super().__init__(data, "bool")


def lib_index(L, spec):
    return spec.build(L) if isinstance(spec, T) else spec


def key_of(L, key):
    return tuple(lib_index(L, k) for k in key) if isinstance(key, tuple) else lib_index(L, key)


def check_get(a, name, key):
    p, r = both(a, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rr = r[key_of(torch, key)]
        pp = p[key_of(ptcore, key)]
    assert_same(pp, rr)
    return pp


# ---------------------------------------------------------------------------
# getitem
# ---------------------------------------------------------------------------
GET_KEYS = [
    ("list", [0, 2, -1]),
    ("tensor", T([3, 0, 0])),
    ("tensor-int32", T([1, -2], "int32")),
    ("tensor-2d", T([[0, 1], [2, 3]])),
    ("tensor-0d-with-list", (T(1), [0, 2])),
    ("adjacent-pair", (slice(None), [0, 2], [1, 4])),
    ("separated-by-slice", ([0, 2], slice(None), [1, 4])),
    ("separated-by-none", ([0, 1], None, [2, 1])),
    ("broadcast", (T([[0], [3]]), slice(None), T([1, 2, 0]))),
    ("broadcast-adjacent", (slice(1, 3), T([[0], [2]]), T([1, 4, 0]))),
    ("int-then-adv", (1, slice(None), [4, 0])),
    ("adv-then-int", ([3, 1], 2)),
    ("ellipsis-adv", (Ellipsis, [4, 0, 1])),
    ("adv-ellipsis-adv", ([0, 1], Ellipsis, [3, 4])),
    ("none-adv-none", (None, [1, 2], None)),
    ("slice-step-adv", (slice(None, None, 2), slice(None), T([-1, 0]))),
    ("mask-dim0", M([True, False, True, True])),
    ("mask-2d", M((np.arange(12).reshape(4, 3) % 2 == 0).tolist())),
    ("mask-3d", M((np.arange(60).reshape(4, 3, 5) % 7 == 0).tolist())),
    ("mask-then-slice", (M([[True, False, True]] * 4), slice(1, 4))),
    ("mask-then-list", (M([[True, False, True]] * 4), [0, 4, 1, 2, 3, 0, 1, 2])),
    ("slice-mask", (slice(None), M([False, True, True]))),
    ("mask-list-sep", (M([True, False, True, False]), slice(None), [0, 4])),
    ("bool-list", [True, False, False, True]),
    ("uint8-mask", T([1, 0, 1, 0], "uint8")),
    ("mask-0d", M(True)),
    ("mask-0d-false", M(False)),
    ("python-bool-with-list", (True, [0, 1])),
    ("list-of-lists-as-tuple", [[0, 1], [2, 0]]),
    ("float-list-truncates", [0.0, 2.7]),
    ("empty-list", []),
    ("empty-tensor", T([])),
    ("all-false", M([False] * 4)),
    ("dup", [1, 1, 1, 0]),
]


@pytest.mark.parametrize("key", [k for _, k in GET_KEYS], ids=[i for i, _ in GET_KEYS])
def test_getitem_patterns(key):
    check_get(rand((4, 3, 5), "float64"), "float64", key)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_getitem_dtypes(name):
    a = rand((5, 4, 3), name, seed=1)
    for key in [([4, 0, -1],), (slice(None), T([3, 3, 0])), (M([True, False] * 2 + [True]),),
                ([1, 2], slice(None), [0, 2]), (Ellipsis, T([[2], [0]]))]:
        check_get(a, name, key)


def test_getitem_noncontiguous():
    base = rand((6, 8, 5), "float32", seed=2)
    views = [lambda x: x.transpose(0, 2), lambda x: x[::2, 1::3], lambda x: x[:, :, 1].t(),
             lambda x: x[1:2].expand(4, 8, 5)]
    for f in views:
        p, r = both(base)
        pv, rv = f(p), f(r)
        for key in [[0, -1, 1], (slice(None), [2, 0]), ([1, 0], slice(None), [0, 1])]:
            if isinstance(key, tuple) and len(key) > pv.dim():
                continue
            assert_same(pv[key], rv[key])
        m = (np.arange(pv.shape[0]) % 2 == 0).tolist()
        assert_same(pv[ptcore.tensor(m)], rv[torch.tensor(m)])
    # non-contiguous index tensors
    p, r = both(base)
    ip = ptcore.tensor([[0, 1, 2], [3, 4, 5]]).t()
    ir = torch.tensor([[0, 1, 2], [3, 4, 5]]).t()
    assert_same(p[ip], r[ir])
    assert_same(p[:, ip[::2, 1]], r[:, ir[::2, 1]])


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 4), (1,), ()])
def test_getitem_zero_size_and_0d(shape):
    a = rand(shape, "int64")
    if shape == ():
        keys = [M(True), M(False), (None, M(True)), (Ellipsis, M(True), None)]
    else:
        keys = [[], T([]), (Ellipsis, []), M([True] * shape[0])]
        if shape[0]:
            keys.append([0, 0])
    for key in keys:
        check_get(a, "int64", key)
    if shape in ((3, 0), (2, 0, 4)):
        # out-of-range values are not looked at when the result is empty (as PyTorch)
        check_get(a, "int64", [5])


def test_getitem_result_is_a_copy():
    p = pt(rand((4, 3), "float32"))
    before = to_np(p).copy()
    q = p[[0, 1]]
    q.fill_(0)
    np.testing.assert_array_equal(to_np(p), before)


def test_getitem_large_parallel():
    """Above the parallel grain the gather is split over threads; same result."""
    a = rand((300, 200), "float32", seed=3)
    idx = np.random.default_rng(0).integers(-300, 300, 500)
    p, r = both(a)
    old = ptcore.get_num_threads()
    try:
        for n in (1, 2, 3):
            ptcore.set_num_threads(n)
            assert_same(p[ptcore.from_numpy(idx)], r[torch.from_numpy(idx)])
            assert_same(p[:, ptcore.from_numpy(idx % 200)], r[:, torch.from_numpy(idx % 200)])
    finally:
        ptcore.set_num_threads(old)


def test_getitem_requires_grad_input():
    p = pt(rand((4, 3), "float32")).requires_grad_()
    r = th(rand((4, 3), "float32")).requires_grad_()
    assert_same(p[[0, 2]].detach(), r[[0, 2]].detach())


# ---------------------------------------------------------------------------
# setitem
# ---------------------------------------------------------------------------
SET_CASES = [
    ("list-scalar", [0, 2], 7),
    ("list-tensor-bcast", [0, 2], "row"),
    ("two-lists", ([0, 3], [2, 1]), "vec2"),
    ("sep", ([0, 3], slice(None), [2, 1]), "col3"),
    ("mask-scalar", M([True, False, True, False]), -1.5),
    ("mask-2d-vec", M((np.arange(12).reshape(4, 3) % 3 == 0).tolist()), "vecmask"),
    ("slice-mask-0d-tensor", (slice(None), M([True, False, True])), "0d"),
    ("int-and-list", (2, [0, 2]), "vec2"),
    ("neg-indices", ([-1, -4],), 3),
    ("prefix-ones-value", ([1, 2],), "ones-prefix"),
    ("empty", ([],), 5),
]


def _value(L, kind, dtype):
    if not isinstance(kind, str):
        return kind
    d = getattr(L, dtype)
    shapes = {"row": (3, 5), "vec2": (2, 5), "col3": (2, 3), "0d": (), "vecmask": (4, 5),
              "ones-prefix": (1, 1, 3, 5)}
    n = int(np.prod(shapes[kind]))
    return L.tensor((np.arange(n) % 7).reshape(shapes[kind]).tolist()).to(d)


@pytest.mark.parametrize("case", SET_CASES, ids=[c[0] for c in SET_CASES])
@pytest.mark.parametrize("name", ["float64", "int32", "bool", "complex64", "bfloat16", "float16"])
def test_setitem(case, name):
    _, key, kind = case
    a = rand((4, 3, 5), name, seed=4)
    p, r = both(a, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r[key_of(torch, key)] = _value(torch, kind, dtype_name(r))
        p[key_of(ptcore, key)] = _value(ptcore, kind, dtype_name(p))
    assert_same(p, r)


def test_setitem_scalar_conversion():
    for name, v in [("int32", 2.9), ("int64", -3.7), ("bool", 5), ("float16", 1e-3), ("uint8", 200),
                    ("complex128", 2 + 3j), ("float32", True)]:
        p, r = both(rand((4, 3), name), name)
        r[[1, 3]] = v
        p[[1, 3]] = v
        assert_same(p, r)
        mp, mr = both(np.array([True, False, True, False]))
        r[mr] = v
        p[mp] = v
        assert_same(p, r)


def test_setitem_noncontiguous_target_and_value():
    a = rand((6, 5), "float32", seed=5)
    p, r = both(a)
    pv, rv = p.t(), r.t()                  # (5, 6) view
    vp, vr = both(rand((2, 5), "float32", seed=6))
    pv[:, [4, 1]] = vp.t()                 # non-contiguous value
    rv[:, [4, 1]] = vr.t()
    assert_same(p, r)
    vp, vr = both(rand((6, 2), "float32", seed=7))
    pv[[0, 2]] = vp.t()
    rv[[0, 2]] = vr.t()
    assert_same(p, r)


def test_setitem_bumps_version():
    p = pt(rand((4, 3), "float32"))
    v = p._version
    p[[0, 1]] = 1.0
    assert p._version > v


SET_ERRORS = [
    ("oob", [0, 5], 1.0, ["index 5 is out of bounds for dimension 0 with size 4"]),
    ("oob-dim1", (slice(None), [3]), 1.0, ["index 3 is out of bounds for dimension 0 with size 3"]),
    ("mask-shape", M([True, False]), 1.0, ["The shape of the mask [2] at index 0 does not match"]),
    ("value-shape", [0, 1], "bad", ["shape mismatch: value tensor of shape [4] cannot be broadcast"]),
    ("value-dtype", [0, 1], "f64", ["Index put requires the source and destination dtypes match"]),
    ("float-index", T([0.0], "float32"), 1.0, ["tensors used as indices must be long, int, byte"]),
    ("int16-index", T([0], "int16"), 1.0, ["tensors used as indices must be long, int, byte"]),
    ("too-many", ([0], [0], [0]), 1.0, ["too many indices"]),
    ("uint8-mask-scalar", T([1, 0, 1, 0], "uint8"), 1.0, ["only supports boolean masks"]),
]


@pytest.mark.parametrize("case", SET_ERRORS, ids=[c[0] for c in SET_ERRORS])
def test_setitem_errors(case):
    _, key, val, words = case
    a = rand((4, 3), "float32")
    p, r = both(a)

    def v(L):
        if val == "bad":
            return L.ones(4)
        if val == "f64":
            return L.ones(2, 3, dtype=L.float64)
        return val

    def do(L, x):
        x[key_of(L, key)] = v(L)
    same_error(lambda: do(torch, r), lambda: do(ptcore, p), words)
    np.testing.assert_array_equal(to_np(p), a)      # nothing written


def test_setitem_self_overlap_error():
    p, r = both(np.arange(8.0))
    same_error(lambda: r.__setitem__([0, 1], r[1:3]), lambda: p.__setitem__([0, 1], p[1:3]),
               ["unsupported operation"])


# ---------------------------------------------------------------------------
# getitem errors
# ---------------------------------------------------------------------------
GET_ERRORS = [
    ("oob", [4], ["index 4 is out of bounds for dimension 0 with size 4"]),
    ("oob-neg", (slice(None), T([-4])), ["index -4 is out of bounds for dimension 0 with size 3"]),
    ("oob-second", ([0, 1], [0, 3]), ["index 3 is out of bounds for dimension 1 with size 3"]),
    ("bcast", ([0, 1], [0, 1, 2]), ["shape mismatch: indexing tensors could not be broadcast together "
                                    "with shapes [2], [3]"]),
    ("mask-shape", M([[True] * 2] * 4), ["The shape of the mask [4, 2] at index 1 does not match "
                                             "the shape of the indexed tensor [4, 3] at index 1"]),
    ("mask-too-many", M([[[True]]]), ["too many indices for tensor of dimension 2"]),
    ("float-tensor", T([1.0], "float64"), ["tensors used as indices must be long, int, byte or "
                                               "bool tensors"]),
    ("int8-tensor", T([1], "int8"), []),
    ("complex-list", [0, 1j], []),
    ("object", (object(),), ["only integers, slices"]),
    ("too-many", ([0], [0], [0]), ["too many indices for tensor of dimension 2"]),
    ("neg-step", ([0], slice(None, None, -1)), ["step must be greater than zero"]),
    ("empty-dim", (slice(None), slice(0, 0), [0]), []),
]


@pytest.mark.parametrize("case", GET_ERRORS, ids=[c[0] for c in GET_ERRORS])
def test_getitem_errors(case):
    _, key, words = case
    p, r = both(rand((4, 3), "float32"))
    same_error(lambda: r[key_of(torch, key)], lambda: p[key_of(ptcore, key)], words)


@pytest.mark.parametrize("shape,key", [((0, 0), (slice(None), [0])), ((1, 0, 0), (Ellipsis, [0])),
                                       ((2, 0), (Ellipsis, T([-1]))), ((0, 3), ([0], [1])),
                                       ((3, 0), ([1], [0]))])
def test_index_into_empty_dim_errors(shape, key):
    """A non-empty index into a size-0 dim fails up front, for get and set."""
    p, r = both(rand(shape, "float32"))
    same_error(lambda: r[key_of(torch, key)], lambda: p[key_of(ptcore, key)],
               ["index is out of bounds for dimension with size 0"])
    same_error(lambda: r.__setitem__(key_of(torch, key), 1.0),
               lambda: p.__setitem__(key_of(ptcore, key), 1.0),
               ["index is out of bounds for dimension with size 0"])


# ---------------------------------------------------------------------------
# index_put_ / index_put
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_index_put_accumulate_dtypes(name):
    a = rand((5, 3), name, seed=7)
    v = rand((6, 3), name, seed=8)
    idx = np.array([0, 4, 0, 2, 0, -1])
    p, r = both(a, name)
    vp, vr = both(v, name)
    ip, ir = both(idx)
    p.index_put_((ip,), vp, accumulate=True)
    r.index_put_((ir,), vr, accumulate=True)
    assert_same(p, r, exact=name not in ("float16", "bfloat16"))
    # without accumulate: unique indices
    p2, r2 = both(a, name)
    uq = np.array([3, 0, -1])
    p2.index_put_((pt(uq), pt([2, 0, 1])), vp[0])
    r2.index_put_((th(uq), th(np.array([2, 0, 1]))), vr[0])
    assert_same(p2, r2)


def test_index_put_variants():
    a = rand((4, 3, 2), "float64", seed=9)
    p, r = both(a)
    m = (np.arange(12).reshape(4, 3) % 2 == 0)
    cases = [
        (lambda L, x: x.index_put_((L.tensor([1, 1, 3]),), L.tensor(2.5, dtype=L.float64), accumulate=True)),
        (lambda L, x: x.index_put_((L.tensor(m.tolist()),), L.tensor([1.0, 2.0], dtype=L.float64),
                                   accumulate=True)),
        (lambda L, x: x.index_put_((L.tensor(m.tolist()),), L.tensor(7.0, dtype=L.float64))),
        (lambda L, x: x.index_put_((L.tensor([[0], [2]]), L.tensor([0, 1, 2])),
                                   L.tensor(-1.0, dtype=L.float64), accumulate=True)),
        (lambda L, x: x.index_put_([L.tensor([0, 3], dtype=L.int32)], L.ones(2, 3, 2, dtype=L.float64))),
    ]
    for f in cases:
        f(ptcore, p)
        f(torch, r)
        assert_same(p, r)
    assert_same(ptcore.index_put(p, (ptcore.tensor([0]),), ptcore.tensor(0.0, dtype=ptcore.float64)),
                torch.index_put(r, (torch.tensor([0]),), torch.tensor(0.0, dtype=torch.float64)))
    assert_same(p, r)                      # out-of-place left the input alone


def test_index_put_accumulate_half_rounds_each_step():
    p = ptcore.zeros(3, dtype=ptcore.float16)
    r = torch.zeros(3, dtype=torch.float16)
    vals = [1, 2049, 3, 1000, 1000]
    p.index_put_((ptcore.tensor([0, 0, 1, 0, 0]),), ptcore.tensor(vals, dtype=ptcore.float16),
                 accumulate=True)
    r.index_put_((torch.tensor([0, 0, 1, 0, 0]),), torch.tensor(vals, dtype=torch.float16),
                 accumulate=True)
    assert_same(p, r)


def test_index_put_errors():
    p, r = both(rand((4, 3), "float32"))
    same_error(lambda: r.index_put_((torch.tensor([0]), None), torch.tensor(1.0)),
               lambda: p.index_put_((ptcore.tensor([0]), None), ptcore.tensor(1.0)),
               ["expected Tensor as element 1 in argument 0"])
    same_error(lambda: r.index_put_((torch.tensor([0, 7]),), torch.tensor(1.0), accumulate=True),
               lambda: p.index_put_((ptcore.tensor([0, 7]),), ptcore.tensor(1.0), accumulate=True),
               ["index 7 is out of bounds for dimension 0 with size 4"])
    same_error(lambda: r.index_put_((torch.tensor([0]),), torch.tensor(1)),
               lambda: p.index_put_((ptcore.tensor([0]),), ptcore.tensor(1)),
               ["Index put requires the source and destination dtypes match, got Float for the "
                "destination and Long for the source."])
    same_error(lambda: r.index_put_((torch.tensor([0, 1]),), torch.ones(2)),
               lambda: p.index_put_((ptcore.tensor([0, 1]),), ptcore.ones(2)),
               ["shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result "
                "of shape [2, 3]"])
    same_error(lambda: r.index_put_((torch.tensor([0]),) * 3, torch.tensor(1.0)),
               lambda: p.index_put_((ptcore.tensor([0]),) * 3, ptcore.tensor(1.0)),
               ["too many indices for tensor of dimension 2"])
    same_error(lambda: r.index_put_((torch.tensor([1, 0]),), r[:2]),
               lambda: p.index_put_((ptcore.tensor([1, 0]),), p[:2]), ["unsupported operation"])


def test_index_sequence_kinds():
    a = rand((4, 3), "int64", seed=11)
    for key in [range(2), (1, [2]), (1, range(1, 3)), ([True, False, True, False], 1)]:
        p, r = both(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(p[key], r[key])
    p, r = both(a)
    assert_same(p[ptcore.Size([1, 2])], r[torch.Size([1, 2])])
