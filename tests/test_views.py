"""View operations, layout queries, copy_/clone/contiguous.

Oracles: NumPy for values, PyTorch for semantics (shapes, strides,
contiguity, storage offsets, aliasing, exception types and messages).
Tests that need PyTorch skip when it is not installed.

The property tests run random chains of view ops on three things at once:
a ptcore tensor, a torch tensor built from the same data, and a NumPy array
of *flat element indices* into the base.  Indexing the base values with that
index array gives the expected values of the view, and the same index array
says exactly which base elements a write through the view must change.
"""
import itertools
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

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "float32", "float64", "complex64", "complex128"]
NP_OF = {n: np.dtype(n if n != "bool" else np.bool_) for n in DTYPE_NAMES}

HYP = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def values(shape, name, seed=0):
    """Distinct-ish, exactly representable values of dtype ``name``."""
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n, dtype=np.int64) + 7 * seed
    if name == "bool":
        out = ((k * 2654435761 + seed) >> 3) % 2 == 1
    elif name == "uint8":
        out = (k % 251).astype(np.uint8)
    elif name == "int8":
        out = (k % 251 - 125).astype(np.int8)
    elif name == "int16":
        out = (k * 37 - 20000).astype(np.int16)
    elif name in ("int32", "int64"):
        out = (k * 1001 - 500000).astype(name)
    elif name == "float16":
        out = ((k % 2000) - 1000).astype(np.float16) / 4
    elif name.startswith("float"):
        out = (k - 0.25 * n).astype(name)
    else:
        out = (k + 1j * ((k % 13) - 6)).astype(name)
    return np.asarray(out, dtype=NP_OF[name]).reshape(shape)


def pt_of(a):
    return ptcore.from_numpy(np.array(a, copy=True))


def th_of(a):
    return torch.from_numpy(np.array(a, copy=True))


def shares(x, root):
    return x.untyped_storage().data_ptr() == root.untyped_storage().data_ptr()


def layout(x):
    return (tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.is_contiguous())


def offsets_unique(shape, stride):
    """True when no two elements of (shape, stride) share a memory location."""
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return True
    grids = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    offs = (grids * np.asarray(stride, dtype=np.int64).reshape(-1, 1)).sum(0)
    return len(np.unique(offs)) == offs.size


def same_exc(torch_fn, pt_fn, words=()):
    """Both calls must raise; same exception type; ``words`` in both messages."""
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
    return pe.value, te.value


def wrap(d, n):
    return d + n if d < 0 else d


# ---------------------------------------------------------------------------
# NumPy-only checks (run without PyTorch too)
# ---------------------------------------------------------------------------
def _np_unfold(a, d, size, step):
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return w[(slice(None),) * d + (slice(None, None, step),)]


NP_VIEW_OPS = [
    # (id, base shape, ptcore op, numpy op, numpy result is writeable)
    ("transpose", (3, 4), lambda x: x.transpose(0, 1), lambda a: a.T, True),
    ("swapaxes-neg", (2, 3, 4), lambda x: x.swapaxes(-1, 0), lambda a: np.swapaxes(a, -1, 0), True),
    ("t", (3, 4), lambda x: x.t(), lambda a: a.T, True),
    ("T", (3, 4), lambda x: x.T, lambda a: a.T, True),
    ("mT", (2, 3, 4), lambda x: x.mT, lambda a: np.swapaxes(a, -1, -2), True),
    ("permute", (2, 3, 4), lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1), True),
    ("permute-fn", (2, 3, 4), lambda x: ptcore.permute(x, (1, -1, 0)), lambda a: a.transpose(1, 2, 0), True),
    ("movedim", (2, 3, 4), lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1), True),
    ("slice-steps", (5, 6), lambda x: x[1::2, ::3], lambda a: a[1::2, ::3], True),
    ("select", (3, 4), lambda x: x.select(1, -2), lambda a: a[:, -2], True),
    ("narrow", (3, 5), lambda x: x.narrow(1, 1, 3), lambda a: a[:, 1:4], True),
    ("unsqueeze", (3, 4), lambda x: x.unsqueeze(1), lambda a: a[:, None], True),
    ("squeeze", (1, 3, 1), lambda x: x.squeeze(), lambda a: a.squeeze(), True),
    ("squeeze-dim", (1, 3, 1), lambda x: x.squeeze(-1), lambda a: a[..., 0], True),
    ("expand", (3, 1), lambda x: x.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4)), False),
    ("diagonal", (3, 4), lambda x: x.diagonal(1), lambda a: np.diagonal(a, 1), False),
    ("diagonal-3d", (2, 3, 4), lambda x: x.diagonal(-1, 2, 1), lambda a: np.diagonal(a, -1, 2, 1), False),
    ("unfold", (2, 7), lambda x: x.unfold(1, 3, 2), lambda a: _np_unfold(a, 1, 3, 2), False),
    ("view", (3, 4), lambda x: x.view(2, 6), lambda a: a.reshape(2, 6), True),
    ("view-infer", (3, 4), lambda x: x.view(-1, 3), lambda a: a.reshape(-1, 3), True),
    ("reshape-view", (3, 4), lambda x: x.reshape(4, 3), lambda a: a.reshape(4, 3), True),
    ("flatten", (2, 3, 4), lambda x: x.flatten(1), lambda a: a.reshape(2, 12), True),
    ("unflatten", (2, 12), lambda x: x.unflatten(1, (3, 4)), lambda a: a.reshape(2, 3, 4), True),
    ("as_strided", (12,), lambda x: x.as_strided((3, 2), (4, 1), 1),
     lambda a: np.lib.stride_tricks.as_strided(a[1:], (3, 2), (4 * a.itemsize, a.itemsize)), True),
    ("getitem", (3, 4, 5), lambda x: x[1, None, ..., 1:4:2], lambda a: a[1, None, ..., 1:4:2], True),
    ("chain", (4, 6), lambda x: x.t()[1::2].unsqueeze(0).narrow(2, 1, 2),
     lambda a: a.T[1::2][None][:, :, 1:3], True),
]


@pytest.mark.parametrize("shape,f,g,writeable", [pytest.param(*c[1:], id=c[0]) for c in NP_VIEW_OPS])
def test_view_values_and_aliasing_numpy(shape, f, g, writeable):
    a = values(shape, "float64")
    t = pt_of(a)
    v = f(t)
    expect = g(a)
    assert tuple(v.shape) == expect.shape
    np.testing.assert_array_equal(v.numpy(), expect)
    assert v._base is t
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    # write into the base: visible through the view
    t.numpy()[...] = -a
    np.testing.assert_array_equal(v.numpy(), g(-a))
    if writeable:
        ref = -a
        pattern = np.arange(expect.size, dtype=np.float64).reshape(expect.shape) + 1000
        g(ref)[...] = pattern
        v.numpy()[...] = pattern
        np.testing.assert_array_equal(t.numpy(), ref)
        ref2 = ref.copy()
        g(ref2)[...] = 7.0
        v.fill_(7.0)
        np.testing.assert_array_equal(t.numpy(), ref2)


def test_split_chunk_values_numpy():
    a = values((7, 3), "int32")
    t = pt_of(a)
    for got, exp in [(t.split(3), np.split(a, [3, 6])), (t.chunk(3), np.split(a, [3, 6])),
                     (t.split([2, 5]), np.split(a, [2])), (t.tensor_split(3), np.array_split(a, 3)),
                     (t.tensor_split([1, 4], dim=0), np.split(a, [1, 4])),
                     (t.unbind(1), [a[:, i] for i in range(3)])]:
        assert len(got) == len(exp)
        for p, e in zip(got, exp):
            np.testing.assert_array_equal(p.numpy(), e)
            assert p._base is t


def test_copy_clone_contiguous_numpy():
    a = values((3, 4), "float32")
    t = pt_of(a)
    c = t.t().contiguous()
    assert c.is_contiguous() and tuple(c.stride()) == (3, 1)
    np.testing.assert_array_equal(c.numpy(), a.T)
    assert t.contiguous() is t
    k = t[:, ::2].clone()
    np.testing.assert_array_equal(k.numpy(), a[:, ::2])
    k.fill_(0)
    np.testing.assert_array_equal(t.numpy(), a)
    d = ptcore.zeros(4, 3, dtype=ptcore.int16)
    d.t().copy_(pt_of(a[:, :1]))
    np.testing.assert_array_equal(d.numpy(), np.broadcast_to(a[:, :1], (3, 4)).T.astype(np.int16))
    with pytest.raises(RuntimeError):
        t.copy_(ptcore.zeros(5))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.t().view(12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.transpose(0, 2)


# ---------------------------------------------------------------------------
# random view chains
# ---------------------------------------------------------------------------
SIZE = st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4])
MAXD = 7


def reshape_candidates(shape):
    n = int(np.prod(shape, dtype=np.int64))
    nd = len(shape)
    c = [(n,), (-1,)]
    if n == 1:
        c.append(())
    for i in range(nd - 1):
        c.append(shape[:i] + (shape[i] * shape[i + 1],) + shape[i + 2:])
    for i in range(nd):
        s = shape[i]
        for k in range(1, max(s, 1) + 1):
            if s % k == 0:
                c.append(shape[:i] + (k, s // k) + shape[i + 1:])
                c.append(shape[:i] + (-1, s // k) + shape[i + 1:] if s // k else shape[:i] + (k, 0) + shape[i + 1:])
    if nd < MAXD:
        for i in range(nd + 1):
            c.append(shape[:i] + (1,) + shape[i:])
    if nd >= 2:
        c.append(shape[::-1])      # often invalid for view after permutes
    if n == 0:
        c += [(0,), (2, 0), (0, 5), (-1, 0)]      # (-1, 0) is ambiguous -> error
    c.append((n + 1,))                            # always invalid
    c = [x for x in c if len(x) <= MAXD]
    return c


@st.composite
def draw_op(draw, shape, storage_len):
    nd = len(shape)
    dims = list(range(-nd, nd))
    names = ["unsqueeze", "getitem", "reshape", "view", "flatten", "expand", "squeeze", "as_strided"]
    if nd >= 1:
        names += ["transpose", "swapaxes", "transpose_fn", "permute", "slice", "narrow", "movedim"]
        if nd < MAXD:
            names += ["unfold"]
        if any(shape):
            names += ["select"]
    if nd >= 2:
        names += ["diagonal", "mT"]
    if nd <= 2:
        names += ["t"]
    if nd == 2:
        names += ["T"]
    name = draw(st.sampled_from(names))
    if name in ("transpose", "swapaxes", "transpose_fn"):
        return (name, draw(st.sampled_from(dims)), draw(st.sampled_from(dims)))
    if name == "permute":
        perm = draw(st.permutations(range(nd)))
        perm = [p - nd if draw(st.booleans()) else p for p in perm]
        return (name, tuple(perm))
    if name in ("t", "T", "mT"):
        return (name,)
    if name == "movedim":
        k = draw(st.integers(1, nd))
        src = draw(st.permutations(range(nd)))[:k]
        dst = draw(st.permutations(range(nd)))[:k]
        if k == 1 and draw(st.booleans()):
            return (name, src[0], dst[0])
        return (name, tuple(src), tuple(dst))
    if name == "slice":
        d = draw(st.sampled_from(dims))
        se = st.one_of(st.none(), st.integers(-6, 6))
        return (name, d, draw(se), draw(se), draw(st.sampled_from([None, 1, 2, 3])))
    if name == "select":
        d = draw(st.sampled_from([d for d in dims if shape[d]]))
        return (name, d, draw(st.integers(-shape[d], shape[d] - 1)))
    if name == "narrow":
        d = draw(st.sampled_from(dims))
        s = draw(st.integers(-shape[d], shape[d]))
        return (name, d, s, draw(st.integers(0, shape[d] - wrap(s, shape[d]))))
    if name == "unsqueeze":
        if nd >= MAXD:
            return ("t",) if nd <= 2 else ("mT",)
        return (name, draw(st.integers(-nd - 1, nd)))
    if name == "squeeze":
        kind = draw(st.sampled_from(["none", "int", "tuple"] if nd else ["none", "int"]))
        if kind == "none":
            return (name, None)
        if kind == "int":
            return (name, draw(st.sampled_from(dims or [0, -1])))
        ds = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
        return (name, tuple(d - nd if draw(st.booleans()) else d for d in ds))
    if name == "expand":
        tgt = []
        for s in shape:
            if s == 1:
                tgt.append(draw(st.sampled_from([1, 0, 2, 3, -1])))
            else:
                tgt.append(draw(st.sampled_from([s, -1])))
        k = draw(st.integers(0, max(0, min(2, MAXD - nd))))
        # (a new leading dim of size 1: pinned by test_expand_new_leading_size1_dim_stride)
        lead = [draw(st.sampled_from([2, 3, 0])) for _ in range(k)]
        return (name, tuple(lead + tgt))
    if name == "diagonal":
        d1 = draw(st.sampled_from(dims))
        d2 = draw(st.sampled_from([d for d in dims if wrap(d, nd) != wrap(d1, nd)]))
        return (name, draw(st.integers(-3, 3)), d1, d2)
    if name == "unfold":
        d = draw(st.sampled_from(dims))
        return (name, d, draw(st.integers(0, shape[d])), draw(st.integers(1, 3)))
    if name == "flatten":
        if nd == 0:
            return (name, draw(st.sampled_from([0, -1])), draw(st.sampled_from([0, -1])))
        s = draw(st.integers(0, nd - 1))
        e = draw(st.integers(s, nd - 1))
        return (name, s - nd if draw(st.booleans()) else s, e - nd if draw(st.booleans()) else e)
    if name in ("reshape", "view"):
        return (name, draw(st.sampled_from(reshape_candidates(tuple(shape)))))
    if name == "getitem":
        return (name, draw(basic_key(shape)))
    if name == "as_strided":
        k = draw(st.integers(0, 3))
        sizes = [draw(st.integers(0, 3)) for _ in range(k)]
        strides = [draw(st.integers(0, 4)) for _ in range(k)]
        numel = int(np.prod(sizes, dtype=np.int64))
        extent = sum((s - 1) * t for s, t in zip(sizes, strides) if s > 0)
        if numel > 0 and extent > storage_len - 1:
            if k == 0:
                return ("t",) if nd <= 2 else ("mT",)
            sizes[0] = 0
            numel = 0
        hi = storage_len if numel == 0 else storage_len - 1 - extent
        return (name, tuple(sizes), tuple(strides), draw(st.integers(0, hi)))
    raise AssertionError(name)


@st.composite
def basic_key(draw, shape):
    """A basic index (ints, slices with positive steps, None, ..., bools)."""
    nd = len(shape)
    items, d = [], 0
    use_ellipsis = draw(st.booleans())
    n_items = draw(st.integers(0, nd + 2))
    ell_at = draw(st.integers(0, n_items)) if use_ellipsis else -1
    for pos in range(n_items + 1):
        if pos == ell_at:
            items.append(Ellipsis)
            continue
        if pos == n_items:
            break
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "bool"]))
        if kind in ("int", "slice") and d >= nd:
            kind = "none"
        if kind == "int" and shape[d] == 0:
            kind = "slice"
        if kind == "int":
            items.append(draw(st.integers(-shape[d], shape[d] - 1)))
            d += 1
        elif kind == "slice":
            se = st.one_of(st.none(), st.integers(-5, 5))
            items.append(slice(draw(se), draw(se), draw(st.sampled_from([None, 1, 2, 3]))))
            d += 1
        elif kind == "none":
            items.append(None)
        else:   # (x[True]/x[False] are copies in torch: test_bool_scalar_index in test_indexing)
            items.append(None)
    # keep the result within MAXD dims
    extra = sum(1 for it in items if it is None or isinstance(it, bool))
    dropped = sum(1 for it in items if isinstance(it, int) and not isinstance(it, bool))
    while nd + extra - dropped > MAXD:
        i = next(i for i, it in enumerate(items) if it is None or isinstance(it, bool))
        items.pop(i)
        extra -= 1
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def apply_tensor(lib, x, op):
    """Apply ``op`` to a ptcore or torch tensor (same API)."""
    name, args = op[0], op[1:]
    if name == "transpose":
        return x.transpose(*args)
    if name == "swapaxes":
        return x.swapaxes(*args)
    if name == "transpose_fn":
        return lib.transpose(x, *args)
    if name == "permute":
        return x.permute(*args[0]) if len(args[0]) % 2 else x.permute(args[0])
    if name == "t":
        return x.t()
    if name == "T":
        return x.T
    if name == "mT":
        return x.mT
    if name == "movedim":
        return x.movedim(*args)
    if name == "slice":
        d, a, b, s = args
        return x[(slice(None),) * wrap(d, x.dim()) + (slice(a, b, s),)]
    if name == "select":
        return x.select(*args)
    if name == "narrow":
        return x.narrow(*args)
    if name == "unsqueeze":
        return x.unsqueeze(*args)
    if name == "squeeze":
        return x.squeeze() if args[0] is None else x.squeeze(args[0])
    if name == "expand":
        return x.expand(*args[0]) if len(args[0]) % 2 else x.expand(args[0])
    if name == "diagonal":
        return x.diagonal(*args)
    if name == "unfold":
        return x.unfold(*args)
    if name == "flatten":
        return x.flatten(*args)
    if name == "reshape":
        return x.reshape(args[0])
    if name == "view":
        return x.view(*args[0]) if args[0] else x.view(args[0])
    if name == "getitem":
        return x[args[0]]
    if name == "as_strided":
        return x.as_strided(*args)
    raise AssertionError(name)


def apply_numpy(a, op, storage_idx):
    """The same op on a NumPy index array (``storage_idx``: flat indices of the storage)."""
    name, args = op[0], op[1:]
    nd = a.ndim
    if name in ("transpose", "swapaxes", "transpose_fn"):
        return np.swapaxes(a, *args)
    if name == "permute":
        return np.transpose(a, [wrap(p, nd) for p in args[0]])
    if name in ("t", "T"):
        return a.T
    if name == "mT":
        return np.swapaxes(a, -2, -1)
    if name == "movedim":
        return np.moveaxis(a, *args)
    if name == "slice":
        d, s0, s1, s = args
        return a[(slice(None),) * wrap(d, nd) + (slice(s0, s1, s),)]
    if name == "select":
        d, i = args
        return a[(slice(None),) * wrap(d, nd) + (i,)]
    if name == "narrow":
        d, s, n = args
        s = wrap(s, a.shape[d])
        return a[(slice(None),) * wrap(d, nd) + (slice(s, s + n),)]
    if name == "unsqueeze":
        return np.expand_dims(a, args[0])
    if name == "squeeze":
        ds = range(nd) if args[0] is None else (
            args[0] if isinstance(args[0], tuple) else (args[0],))
        ds = tuple(wrap(d, nd) for d in ds if nd and a.shape[d] == 1)
        return np.squeeze(a, axis=ds)
    if name == "expand":
        tgt = list(args[0])
        k = len(tgt) - nd
        tgt = [a.shape[i - k] if (s == -1 and i >= k) else s for i, s in enumerate(tgt)]
        return np.broadcast_to(a, tgt)
    if name == "diagonal":
        return np.diagonal(a, *args)
    if name == "unfold":
        d, size, step = args
        d = wrap(d, nd)
        w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
        return w[(slice(None),) * d + (slice(None, None, step),)]
    if name == "flatten":
        if nd == 0:
            return a.reshape(1)
        s, e = wrap(args[0], nd), wrap(args[1], nd)
        return a.reshape(a.shape[:s] + (int(np.prod(a.shape[s:e + 1])),) + a.shape[e + 1:])
    if name in ("reshape", "view"):
        return a.reshape(args[0])
    if name == "getitem":
        return a[args[0]]
    if name == "as_strided":
        size, stride, off = args
        buf = storage_idx[off:] if off < storage_idx.size else np.zeros(0, np.int64)
        if int(np.prod(size, dtype=np.int64)) == 0:
            return np.empty(size, np.int64)
        return np.lib.stride_tricks.as_strided(
            buf, size, [s * buf.itemsize for s in stride], writeable=False)
    raise AssertionError(name)


def check_step(step, op, p, r, idx, base_vals, pt_root, th_root):
    ctx = f"step {step}: {op}"
    assert tuple(p.shape) == tuple(r.shape) == idx.shape, ctx
    assert isinstance(p.shape, ptcore.Size), ctx
    assert p.dim() == r.dim() and p.numel() == r.numel(), ctx
    assert tuple(p.stride()) == tuple(r.stride()), f"{ctx}: strides {p.stride()} vs torch {r.stride()}"
    # (the offset of an empty slice is pinned by test_empty_slice_storage_offset)
    assert r.numel() == 0 or p.storage_offset() == r.storage_offset(), (
        f"{ctx}: storage_offset {p.storage_offset()} vs torch {r.storage_offset()}")
    assert p.is_contiguous() == r.is_contiguous(), ctx
    assert p.dtype == getattr(ptcore, str(r.dtype).replace("torch.", "")), ctx
    th_alias = r is th_root or r._base is th_root
    # (_base of a reshape that copies is pinned by test_copying_ops_return_non_views)
    if pt_root.numel() > 0:
        assert shares(p, pt_root) == th_alias, f"{ctx}: ptcore shares memory: {not th_alias}, torch: {th_alias}"
    if th_alias:
        assert p is pt_root or p._base is pt_root, f"{ctx}: a view's _base must be the root tensor"
    np.testing.assert_array_equal(p.numpy(), base_vals.reshape(-1)[idx], err_msg=ctx)
    return th_alias


@needs_torch
@settings(max_examples=200, **HYP)
@given(shape=st.lists(SIZE, min_size=0, max_size=5).map(tuple),
       name=st.sampled_from(DTYPE_NAMES), data=st.data())
def test_random_view_chains(shape, name, data):
    base_vals = values(shape, name)
    t = pt_of(base_vals)
    tt = th_of(base_vals)
    pt_root, th_root, root_is_base = t, tt, True
    p, r = t, tt
    n = base_vals.size
    storage_idx = np.arange(n, dtype=np.int64)
    idx = storage_idx.reshape(shape)
    n_ops = data.draw(st.integers(1, 6), label="n_ops")
    for step in range(n_ops):
        op = data.draw(draw_op(tuple(r.shape), storage_idx.size), label=f"op{step}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r2 = apply_tensor(torch, r, op)
        except (RuntimeError, IndexError, ValueError) as e:
            with pytest.raises(type(e)):
                apply_tensor(ptcore, p, op)
            continue
        p2 = apply_tensor(ptcore, p, op)
        idx2 = apply_numpy(idx, op, storage_idx)
        th_alias = check_step(step, op, p2, r2, idx2, base_vals, pt_root, th_root)
        if not th_alias:             # torch copied (reshape/flatten): new storage
            pt_root, th_root, root_is_base = (p2 if p2._base is None else p2._base), r2, False
            storage_idx = np.ascontiguousarray(idx2).reshape(-1)
        p, r, idx = p2, r2, idx2

    # writes through the base are visible in the view (if it still aliases it)
    pattern = values(shape, name, seed=3)
    if name == "bool":
        pattern = np.asarray(~base_vals)
    t.numpy()[...] = pattern
    expect_view = (pattern if root_is_base else base_vals).reshape(-1)[idx]
    np.testing.assert_array_equal(p.numpy(), expect_view, err_msg="write to base not seen in view")

    # writes through a non-overlapping view land in the right base elements
    if offsets_unique(tuple(r.shape), tuple(r.stride())):
        pat2 = values(tuple(r.shape), name, seed=11)
        if name == "bool":
            pat2 = np.asarray(~expect_view)
        p.numpy()[...] = pat2
        expect_base = pattern.copy()
        if root_is_base:
            expect_base.reshape(-1)[idx] = pat2
        np.testing.assert_array_equal(t.numpy(), expect_base, err_msg="write through view")
        np.testing.assert_array_equal(p.numpy(), pat2)


# ---------------------------------------------------------------------------
# view vs reshape rules
# ---------------------------------------------------------------------------
VIEW_LAYOUTS = [
    # (id, base shape, function making a (possibly non-contiguous) view, its shape)
    ("contig", (2, 3, 4), lambda x: x, (2, 3, 4)),
    ("transposed", (3, 4), lambda x: x.t(), (4, 3)),
    ("transposed3", (2, 3, 4), lambda x: x.transpose(0, 2), (4, 3, 2)),
    ("permuted", (2, 3, 4), lambda x: x.permute(1, 2, 0), (3, 4, 2)),
    ("step-slice", (4, 6), lambda x: x[:, ::2], (4, 3)),
    ("row-slice", (4, 6), lambda x: x[1:3], (2, 6)),
    ("col-slice", (4, 6), lambda x: x[:, 1:5], (4, 4)),
    ("expanded", (1, 4), lambda x: x.expand(3, 4), (3, 4)),
    ("expanded-mid", (2, 1, 3), lambda x: x.expand(2, 5, 3), (2, 5, 3)),
    ("size1-odd-stride", (3, 1, 4), lambda x: x.transpose(0, 1), (1, 3, 4)),
    ("unsq-transposed", (3, 4), lambda x: x.t().unsqueeze(1), (4, 1, 3)),
    ("empty", (0, 3), lambda x: x, (0, 3)),
    ("empty-t", (0, 3), lambda x: x.t(), (3, 0)),
    ("diag", (4, 4), lambda x: x.diagonal(), (4,)),
    ("unfold", (8,), lambda x: x.unfold(0, 3, 2), (3, 3)),
    ("scalar", (), lambda x: x, ()),
    ("scalar-as-strided", (3,), lambda x: x[1], ()),
]


def _targets(shape):
    n = int(np.prod(shape, dtype=np.int64))
    c = {(-1,), (n,)}
    for k in range(1, n + 1):
        if n % k == 0:
            c.add((k, -1))
            c.add((k, 1, n // k))
    if n == 1:
        c |= {(), (1, 1)}
    if n == 0:
        c |= {(0,), (3, 0), (0, 1, 3)}
    c.add(tuple(shape))
    if len(shape) >= 2:
        c.add(tuple(shape[::-1]))
        c.add(tuple(shape[:-2]) + (shape[-2] * shape[-1],))
        c.add((shape[0] * shape[1],) + tuple(shape[2:]))
    return sorted(c, key=repr)


VIEW_CASES = [(lid, shp, fn, tgt) for lid, shp, fn, vshape in VIEW_LAYOUTS for tgt in _targets(vshape)]


@needs_torch
@pytest.mark.parametrize("lid,shp,fn,tgt", VIEW_CASES,
                         ids=[f"{c[0]}->{list(c[3])}" for c in VIEW_CASES])
def test_view_and_reshape_rules_match_torch(lid, shp, fn, tgt):
    a = values(shp, "float64")
    t0, tt0 = pt_of(a), th_of(a)
    x, tx = fn(t0), fn(tt0)
    assert layout(x) == layout(tx)
    try:
        tv = tx.view(tgt)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as pe:
            x.view(tgt)
        if "view size is not compatible" in str(e):
            assert "view size is not compatible" in str(pe.value)
        tv = None
    else:
        v = x.view(tgt)
        assert layout(v) == layout(tv)
        assert v._base is t0
        np.testing.assert_array_equal(v.numpy(), tv.numpy())

    tr = tx.reshape(tgt)
    rp = x.reshape(tgt)
    assert layout(rp) == layout(tr)
    np.testing.assert_array_equal(rp.numpy(), tr.numpy())
    th_view = tr._base is tt0
    pt_view = rp._base is t0
    assert pt_view == th_view, f"reshape aliasing: ptcore {pt_view}, torch {th_view}"
    assert th_view == (tv is not None)
    if t0.numel():
        assert shares(rp, t0) == th_view
        # write through the reshape result: seen in the base iff it is a view
        before = t0.numpy().copy()
        rp.numpy()[...] = -7.0
        tr.numpy()[...] = -7.0
        np.testing.assert_array_equal(t0.numpy(), tt0.numpy())
        assert (not np.array_equal(before, t0.numpy())) == (th_view and tr.numel() > 0)


@needs_torch
def test_transposed_view_minus_one_raises():
    a = values((3, 4), "float32")
    same_exc(lambda: th_of(a).t().view(-1), lambda: pt_of(a).t().view(-1),
             ["view size is not compatible"])
    b = values((3, 5), "float32")
    same_exc(lambda: th_of(b)[:, ::2].view(9), lambda: pt_of(b)[:, ::2].view(9),
             ["view size is not compatible"])
    same_exc(lambda: th_of(a).expand(2, 3, 4).view(24), lambda: pt_of(a).expand(2, 3, 4).view(24),
             ["view size is not compatible"])


@st.composite
def strided_layout(draw):
    """A base shape plus a random permute + slicing + unsqueeze/expand applied to it."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    nd = len(shape)
    perm = tuple(draw(st.permutations(range(nd))))
    key = tuple(slice(draw(st.integers(0, 1)), None, draw(st.sampled_from([1, 1, 2])))
                for _ in range(nd))
    unsq = draw(st.integers(-1, nd))
    exp = draw(st.sampled_from([None, 1, 2]))
    return shape, perm, key, unsq, exp


def _apply_layout(x, perm, key, unsq, exp):
    x = x.permute(perm)
    # (an empty slice x[1:] of a size-1 dim is covered by test_empty_slice_storage_offset)
    x = x[tuple(slice(k.start if n > 1 else 0, None, k.step) for k, n in zip(key, x.shape))]
    if unsq >= 0:
        x = x.unsqueeze(unsq)
        if exp is not None:
            shp = list(x.shape)
            shp[unsq] = exp
            x = x.expand(shp)
    return x


@needs_torch
@settings(max_examples=150, **HYP)
@given(lay=strided_layout(), data=st.data())
def test_view_reshape_random_layouts(lay, data):
    shape, perm, key, unsq, exp = lay
    a = values(shape, "int32")
    t0, tt0 = pt_of(a), th_of(a)
    x, tx = _apply_layout(t0, perm, key, unsq, exp), _apply_layout(tt0, perm, key, unsq, exp)
    assert layout(x) == layout(tx)
    tgt = data.draw(st.sampled_from(reshape_candidates(tuple(tx.shape))))
    try:
        tv = tx.view(tgt)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            x.view(tgt)
    else:
        v = x.view(tgt)
        assert layout(v) == layout(tv)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        assert v._base is t0
    try:
        tr = tx.reshape(tgt)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            x.reshape(tgt)
        return
    rp = x.reshape(tgt)
    assert layout(rp) == layout(tr)
    np.testing.assert_array_equal(rp.numpy(), tr.numpy())
    assert (rp._base is t0) == (tr._base is tt0)
    if tr.numel():
        assert shares(rp, t0) == shares(tr, tt0)


# ---------------------------------------------------------------------------
# individual view ops vs torch (fixed grids)
# ---------------------------------------------------------------------------
def _cmp_views(pv, tv, root, troot):
    assert len(pv) == len(tv)
    for p, r in zip(pv, tv):
        assert layout(p) == layout(r), (layout(p), layout(r))
        np.testing.assert_array_equal(p.numpy(), r.numpy())
        assert p._base is root
        assert r._base is troot


@needs_torch
@pytest.mark.parametrize("n", [0, 1, 2, 5, 6, 7])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 8])
def test_split_chunk_tensor_split_int(n, k):
    a = values((3, n), "int64")
    t, tt = pt_of(a), th_of(a)
    _cmp_views(t.split(k, 1), tt.split(k, 1), t, tt)
    _cmp_views(ptcore.split(t, k, dim=-1), torch.split(tt, k, dim=-1), t, tt)
    _cmp_views(t.chunk(k, 1), tt.chunk(k, 1), t, tt)
    _cmp_views(ptcore.chunk(t, k, -1), torch.chunk(tt, k, -1), t, tt)
    _cmp_views(t.tensor_split(k, 1), tt.tensor_split(k, 1), t, tt)


@needs_torch
@pytest.mark.parametrize("sizes", [[1, 2, 3], [0, 6], [6], [3, 0, 3], [2, 2, 2]])
def test_split_with_sizes(sizes):
    a = values((6, 2), "float32")
    t, tt = pt_of(a), th_of(a)
    _cmp_views(t.split(sizes), tt.split(sizes), t, tt)
    _cmp_views(t.split(tuple(sizes), 0), tt.split(tuple(sizes), 0), t, tt)
    _cmp_views(ptcore.split(t, sizes), torch.split(tt, sizes), t, tt)


@needs_torch
@pytest.mark.parametrize("idx", [[1], [2, 4], [0, 0, 6], [4, 2], [-2], [-10, 3], [3, 100], [], [6, 7]])
def test_tensor_split_indices(idx):
    a = values((2, 6), "int16")
    t, tt = pt_of(a), th_of(a)
    _cmp_views(t.tensor_split(idx, dim=1), tt.tensor_split(idx, dim=1), t, tt)
    _cmp_views(t.tensor_split(tuple(idx), -1), tt.tensor_split(tuple(idx), -1), t, tt)


@needs_torch
@pytest.mark.parametrize("shape,dim", [((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((0, 2), 1),
                                       ((2, 0), 1), ((2, 3, 1), 2)])
def test_unbind(shape, dim):
    a = values(shape, "complex64")
    t, tt = pt_of(a), th_of(a)
    _cmp_views(t.unbind(dim), tt.unbind(dim), t, tt)
    _cmp_views(ptcore.unbind(t, dim), torch.unbind(tt, dim), t, tt)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4, 4), (1, 5), (0, 3), (2, 0, 3)])
@pytest.mark.parametrize("offset", [-5, -2, -1, 0, 1, 3, 7])
def test_diagonal_grid(shape, offset):
    a = values(shape, "float64")
    t, tt = pt_of(a), th_of(a)
    nd = len(shape)
    for d1, d2 in itertools.permutations(range(-nd, nd), 2):
        if wrap(d1, nd) == wrap(d2, nd):
            continue
        pv = t.diagonal(offset, d1, d2)
        rv = tt.diagonal(offset, d1, d2)
        assert layout(pv) == layout(rv), (d1, d2)
        np.testing.assert_array_equal(pv.numpy(), np.diagonal(a, offset, d1, d2))
        fv = ptcore.diagonal(t, offset=offset, dim1=d1, dim2=d2)
        assert layout(fv) == layout(rv)
    # writing through the diagonal view
    if min(shape) > 0:
        d = t.diagonal()
        d.numpy()[...] = 0
        tt.diagonal().zero_()
        np.testing.assert_array_equal(t.numpy(), tt.numpy())


@needs_torch
@pytest.mark.parametrize("n", [0, 1, 5, 7])
@pytest.mark.parametrize("size", [0, 1, 2, 3])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_unfold_grid(n, size, step):
    a = values((2, n), "int32")
    t, tt = pt_of(a), th_of(a)
    if size > n:
        same_exc(lambda: tt.unfold(1, size, step), lambda: t.unfold(1, size, step),
                 ["maximum size for tensor at dimension"])
        return
    pv, rv = t.unfold(-1, size, step), tt.unfold(-1, size, step)
    assert layout(pv) == layout(rv)
    np.testing.assert_array_equal(pv.numpy(), rv.numpy())
    assert pv._base is t


@needs_torch
@pytest.mark.parametrize("size,step", [(0, 1), (1, 1), (1, 5)])
def test_unfold_0d(size, step):
    t, tt = ptcore.tensor(3.5), torch.tensor(3.5)
    pv, rv = t.unfold(0, size, step), tt.unfold(0, size, step)
    assert layout(pv) == layout(rv)
    np.testing.assert_array_equal(pv.numpy(), rv.numpy())


@needs_torch
def test_layout_ops_on_0d_and_1d():
    for shape in [(), (4,), (1,)]:
        a = values(shape, "float32")
        t, tt = pt_of(a), th_of(a)
        ops = [lambda x: x.t(), lambda x: x.T, lambda x: x.transpose(0, -1) if x.dim() else x.transpose(0, 0),
               lambda x: x.squeeze(), lambda x: x.squeeze(0), lambda x: x.unsqueeze(0),
               lambda x: x.unsqueeze(-1), lambda x: x.flatten(), lambda x: x.reshape(-1),
               lambda x: x.view(-1), lambda x: x.expand(2, *x.shape), lambda x: x[None],
               lambda x: x[...], lambda x: x[None, ..., None], lambda x: x.permute(tuple(range(x.dim()))),
               lambda x: x.movedim(0, -1) if x.dim() else x, lambda x: x.view(()) if x.numel() == 1 else x]
        for i, f in enumerate(ops):
            p, r = f(t), f(tt)
            assert layout(p) == layout(r), (shape, i, layout(p), layout(r))
            np.testing.assert_array_equal(p.numpy(), r.numpy())


@needs_torch
@pytest.mark.parametrize("src,dst", [(0, 2), (2, 0), (-1, 1), ((0, 1), (2, 0)), ((0, 2), (-1, 0)),
                                     ([1], [0]), ((), ())])
def test_movedim_moveaxis(src, dst):
    a = values((2, 3, 4), "uint8")
    t, tt = pt_of(a), th_of(a)
    for p in (t.movedim(src, dst), t.moveaxis(src, dst), ptcore.movedim(t, src, dst)):
        r = tt.movedim(src, dst)
        assert layout(p) == layout(r)
        np.testing.assert_array_equal(p.numpy(), np.moveaxis(a, src, dst))


@needs_torch
@pytest.mark.parametrize("dim,sizes", [(0, (2, 3)), (1, (2, 2)), (-1, (-1, 2)), (1, (4, 1)), (0, (1, 6)),
                                       (0, (6,)), (1, (1, -1, 1))])
def test_unflatten(dim, sizes):
    a = values((6, 4), "int8")
    t, tt = pt_of(a), th_of(a)
    p, r = t.unflatten(dim, sizes), tt.unflatten(dim, sizes)
    assert layout(p) == layout(r)
    np.testing.assert_array_equal(p.numpy(), r.numpy())
    # on a non-contiguous input unflatten stays a view
    p, r = t.t().unflatten(1 - (dim % 2), sizes), tt.t().unflatten(1 - (dim % 2), sizes)
    assert layout(p) == layout(r)
    np.testing.assert_array_equal(p.numpy(), r.numpy())


@needs_torch
@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, (0, 2), (1,), (0, 1, 2), ()])
def test_squeeze_variants(dim):
    a = values((1, 3, 1), "float16")
    t, tt = pt_of(a), th_of(a)
    p = t.squeeze() if dim is None else t.squeeze(dim)
    r = tt.squeeze() if dim is None else tt.squeeze(dim)
    assert layout(p) == layout(r)
    np.testing.assert_array_equal(p.numpy(), r.numpy())
    f = ptcore.squeeze(t) if dim is None else ptcore.squeeze(t, dim)
    assert layout(f) == layout(r)


@needs_torch
def test_function_forms_match_methods():
    a = values((2, 3, 4), "float32")
    t, tt = pt_of(a), th_of(a)
    pairs = [
        (ptcore.transpose(t, 0, 1), torch.transpose(tt, 0, 1)),
        (ptcore.reshape(t, (4, 6)), torch.reshape(tt, (4, 6))),
        (ptcore.permute(t, (2, 0, 1)), torch.permute(tt, (2, 0, 1))),
        (ptcore.squeeze(t[:1]), torch.squeeze(tt[:1])),
        (ptcore.unsqueeze(t, 1), torch.unsqueeze(tt, 1)),
        (ptcore.narrow(t, 2, 1, 2), torch.narrow(tt, 2, 1, 2)),
        (ptcore.select(t, 1, -1), torch.select(tt, 1, -1)),
        (ptcore.diagonal(t, 1, 1, 2), torch.diagonal(tt, 1, 1, 2)),
        (ptcore.movedim(t, 0, 2), torch.movedim(tt, 0, 2)),
        (ptcore.as_strided(t, (2, 2), (1, 2), 3), torch.as_strided(tt, (2, 2), (1, 2), 3)),
        (ptcore.flatten(t, 1), torch.flatten(tt, 1)),
        (ptcore.swapaxes(t, 0, 2), torch.swapaxes(tt, 0, 2)),
        (ptcore.swapdims(t, 0, 2), torch.swapdims(tt, 0, 2)),
        (ptcore.moveaxis(t, 0, 2), torch.moveaxis(tt, 0, 2)),
        (ptcore.broadcast_to(t[:, :1], (2, 3, 4)), torch.broadcast_to(tt[:, :1], (2, 3, 4))),
        (ptcore.t(t[0]), torch.t(tt[0])),
    ]
    for i, (p, r) in enumerate(pairs):
        assert layout(p) == layout(r), i
        np.testing.assert_array_equal(p.numpy(), r.numpy())
    for p, r in zip(ptcore.unbind(t, 1), torch.unbind(tt, 1)):
        assert layout(p) == layout(r)


@needs_torch
def test_expand_variants():
    a = values((3, 1), "int64")
    t, tt = pt_of(a), th_of(a)
    o = pt_of(np.zeros((2, 3, 5)))
    to = th_of(np.zeros((2, 3, 5)))
    for p, r in [(t.expand(3, 4), tt.expand(3, 4)), (t.expand((2, 3, 4)), tt.expand((2, 3, 4))),
                 (t.expand(-1, 0), tt.expand(-1, 0)), (t.expand([0, 3, 2]), tt.expand([0, 3, 2])),
                 (t.expand_as(o), tt.expand_as(to)), (t.broadcast_to((5, 3, 2)), tt.broadcast_to((5, 3, 2))),
                 (t.expand(-1, -1), tt.expand(-1, -1)), (t.expand(ptcore.Size([3, 2])), tt.expand(3, 2))]:
        assert layout(p) == layout(r)
        np.testing.assert_array_equal(p.numpy(), r.numpy())
        assert p._base is t


@needs_torch
@pytest.mark.parametrize("src,dst", [
    ("float32", "int32"), ("float32", "int16"), ("float64", "uint8"), ("int32", "float32"),
    ("int16", "int8"), ("int8", "uint8"), ("complex64", "float32"), ("float64", "complex128"),
    ("float32", "float32"), ("int64", "float64"), ("uint8", "bool"), ("float16", "int16"),
    ("complex128", "float64"), ("bool", "uint8"), ("int32", "int16"),
])
def test_view_dtype(src, dst):
    a = values((4, 8), src)
    t, tt = pt_of(a), th_of(a)
    for f in [lambda x, L: x.view(getattr(L, dst)),
              lambda x, L: x[1:3].view(getattr(L, dst)),
              lambda x, L: x[:, 2:].view(getattr(L, dst)),
              lambda x, L: x.t().view(getattr(L, dst))]:
        try:
            r = f(tt, torch)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as pe:
                f(t, ptcore)
            assert str(e).split(" to view ")[0].split(" must be ")[0] in str(pe.value)
            continue
        p = f(t, ptcore)
        assert layout(p) == layout(r)
        assert p.dtype == getattr(ptcore, dst)
        np.testing.assert_array_equal(p.numpy(), r.numpy())
        assert p._base is t


# ---------------------------------------------------------------------------
# error cases vs torch
# ---------------------------------------------------------------------------
def E(id_, shape, fn, words=(), dtype="float32"):
    return pytest.param(shape, fn, words, dtype, id=id_)


ERROR_CASES = [
    # dims out of range
    E("transpose-dim", (2, 3), lambda L, x: x.transpose(0, 2), ["Dimension out of range"]),
    E("transpose-neg-dim", (2, 3), lambda L, x: x.transpose(-3, 0), ["Dimension out of range"]),
    E("transpose-fn-dim", (2, 3), lambda L, x: L.transpose(x, 5, 0), ["Dimension out of range"]),
    E("transpose-0d", (), lambda L, x: x.transpose(0, 1), ["Dimension out of range"]),
    E("swapaxes-dim", (2, 3), lambda L, x: x.swapaxes(0, 2), ["Dimension out of range"]),
    E("permute-dim", (2, 3), lambda L, x: x.permute(0, 2), ["Dimension out of range"]),
    E("permute-len", (2, 3), lambda L, x: x.permute(0, 1, 2), ["number of dimensions"]),
    E("permute-short", (2, 3, 4), lambda L, x: x.permute(1, 0), ["number of dimensions"]),
    E("permute-dup", (2, 3), lambda L, x: x.permute(1, 1), ["duplicate dims"]),
    E("permute-dup-neg", (2, 3), lambda L, x: x.permute(0, -2), ["duplicate dims"]),
    E("squeeze-dim", (2, 3), lambda L, x: x.squeeze(2), ["Dimension out of range"]),
    E("squeeze-tuple-dim", (2, 1), lambda L, x: x.squeeze((0, 3)), ["Dimension out of range"]),
    E("unsqueeze-dim", (2, 3), lambda L, x: x.unsqueeze(3), ["Dimension out of range"]),
    E("unsqueeze-neg-dim", (2, 3), lambda L, x: x.unsqueeze(-4), ["Dimension out of range"]),
    E("select-dim", (2, 3), lambda L, x: x.select(2, 0), ["Dimension out of range"]),
    E("narrow-dim", (2, 3), lambda L, x: x.narrow(-3, 0, 1), ["Dimension out of range"]),
    E("flatten-dim", (2, 3), lambda L, x: x.flatten(0, 2), ["Dimension out of range"]),
    E("flatten-order", (2, 3, 4), lambda L, x: x.flatten(2, 1), ["start_dim cannot come after end_dim"]),
    E("unflatten-dim", (2, 3), lambda L, x: x.unflatten(2, (1, 3)), ["Dimension out of range"]),
    E("unflatten-sizes", (6, 3), lambda L, x: x.unflatten(0, (2, 2)), ["unflatten", "(6)"]),
    E("movedim-dim", (2, 3), lambda L, x: x.movedim(0, 2), ["Dimension out of range"]),
    E("movedim-repeat", (2, 3, 4), lambda L, x: x.movedim((0, 0), (1, 2)), ["repeated dim"]),
    E("movedim-len", (2, 3, 4), lambda L, x: x.movedim((0, 1), (1,)), ["movedim"]),
    E("diagonal-dim", (2, 3), lambda L, x: x.diagonal(0, 0, 2), ["Dimension out of range"]),
    E("diagonal-same", (2, 3), lambda L, x: x.diagonal(0, 1, -1), ["diagonal dimensions cannot be identical"]),
    E("diagonal-1d", (3,), lambda L, x: x.diagonal(), ["Dimension out of range"]),
    E("unfold-dim", (2, 3), lambda L, x: x.unfold(2, 1, 1), ["Dimension out of range"]),
    E("split-dim", (2, 3), lambda L, x: x.split(1, 2), ["Dimension out of range"]),
    E("chunk-dim", (2, 3), lambda L, x: x.chunk(2, -3), ["Dimension out of range"]),
    E("unbind-dim", (2, 3), lambda L, x: x.unbind(2), ["Dimension out of range"]),
    E("size-dim", (2, 3), lambda L, x: x.size(2), ["Dimension out of range"]),
    E("stride-dim", (2, 3), lambda L, x: x.stride(-3), ["Dimension out of range"]),
    # view / reshape sizes
    E("view-numel", (2, 3), lambda L, x: x.view(5), ["shape '[5]' is invalid for input of size 6"]),
    E("view-numel2", (2, 3), lambda L, x: x.view(4, 2), ["is invalid for input of size 6"]),
    E("view-infer", (2, 3), lambda L, x: x.view(-1, 4), ["is invalid for input of size 6"]),
    E("view-two-infer", (2, 3), lambda L, x: x.view(-1, -1), ["only one dimension can be inferred"]),
    E("view-neg", (2, 3), lambda L, x: x.view(-2, 3), ["invalid shape dimension -2"]),
    E("view-zero-ambiguous", (0, 3), lambda L, x: x.view(-1, 0), ["ambiguous"]),
    E("view-noncontig", (2, 3), lambda L, x: x.t().view(6), ["view size is not compatible"]),
    E("reshape-numel", (2, 3), lambda L, x: x.reshape(7), ["is invalid for input of size 6"]),
    E("reshape-two-infer", (2, 3), lambda L, x: x.reshape(-1, 2, -1), ["only one dimension can be inferred"]),
    E("reshape-fn-numel", (2, 3), lambda L, x: L.reshape(x, (4,)), ["is invalid for input of size 6"]),
    E("reshape-zero-ambiguous", (3, 0), lambda L, x: x.reshape(0, -1), ["ambiguous"]),
    E("view-dtype-divisible", (3,), lambda L, x: x.view(L.float64), ["must be divisible by 2"]),
    E("view-dtype-stride", (2, 4), lambda L, x: x.t().view(L.float64), ["stride(-1) must be 1"]),
    E("view-dtype-0d", (), lambda L, x: x.view(L.float64), ["cannot be 0"]),
    # expand
    E("expand-mismatch", (2, 4), lambda L, x: x.expand(3, 4), ["expanded size of the tensor (3) must match the existing size (2)"]),
    E("expand-fewer", (2, 4), lambda L, x: x.expand(4), ["must be greater or equal to the number of dimensions"]),
    E("expand-leading-minus1", (1, 4), lambda L, x: x.expand(-1, 1, 4), ["isn't allowed in a leading, non-existing dimension"]),
    E("expand-negative", (1, 4), lambda L, x: x.expand(-2, 4)),
    E("broadcast_to-mismatch", (2, 4), lambda L, x: x.broadcast_to((2, 5)), ["must match the existing size"]),
    # narrow / select
    E("narrow-start", (3, 4), lambda L, x: x.narrow(0, 4, 0), ["start out of range"]),
    E("narrow-neg-start", (3, 4), lambda L, x: x.narrow(0, -4, 1), ["start out of range"]),
    E("narrow-length", (3, 4), lambda L, x: x.narrow(0, 1, 3), ["exceeds dimension size"]),
    E("narrow-neg-length", (3, 4), lambda L, x: x.narrow(1, 1, -1), ["must be non-negative"]),
    E("narrow-0d", (), lambda L, x: x.narrow(0, 0, 1), ["cannot be applied to a 0-dim tensor"]),
    E("narrow-fn", (3, 4), lambda L, x: L.narrow(x, 1, 3, 2), ["exceeds dimension size"]),
    E("select-index", (3, 4), lambda L, x: x.select(0, 3), ["out of range"]),
    E("select-neg-index", (3, 4), lambda L, x: x.select(1, -5), ["out of range"]),
    E("select-0d", (), lambda L, x: x.select(0, 0), ["0-dim"]),
    E("select-fn", (3, 4), lambda L, x: L.select(x, 1, 4), ["out of range"]),
    E("unbind-0d", (), lambda L, x: x.unbind(0), ["Dimension specified as 0 but tensor has no dimensions"]),
    # split / chunk / tensor_split
    E("split-sizes-sum", (5, 2), lambda L, x: x.split([2, 2]), ["split_with_sizes expects split_sizes to sum exactly to 5"]),
    E("split-sizes-over", (5, 2), lambda L, x: x.split([3, 3]), ["sum exactly to 5"]),
    E("split-sizes-neg", (5, 2), lambda L, x: x.split([6, -1])),
    E("split-fn-sizes", (5, 2), lambda L, x: L.split(x, [1, 2], dim=1), ["sum exactly to 2"]),
    E("split-negative", (5, 2), lambda L, x: x.split(-1), ["non-negative"]),
    E("split-zero", (5, 2), lambda L, x: x.split(0), ["split_size can only be 0 if dimension size is 0"]),
    E("split-0d", (), lambda L, x: x.split(1)),
    E("chunk-zero", (5, 2), lambda L, x: x.chunk(0), ["chunk expects `chunks` to be greater than 0"]),
    E("chunk-negative", (5, 2), lambda L, x: x.chunk(-2), ["greater than 0"]),
    E("chunk-fn-zero", (5, 2), lambda L, x: L.chunk(x, 0), ["greater than 0"]),
    E("chunk-0d", (), lambda L, x: x.chunk(2), ["at least a 1-dimensional tensor"]),
    E("tensor_split-zero", (5, 2), lambda L, x: x.tensor_split(0), ["number of sections must be larger than 0"]),
    E("tensor_split-0d", (), lambda L, x: x.tensor_split(2), ["at least a 1-dimensional tensor"]),
    # unfold
    E("unfold-too-large", (2, 3), lambda L, x: x.unfold(1, 4, 1), ["maximum size for tensor at dimension 1 is 3 but size is 4"]),
    E("unfold-step0", (2, 3), lambda L, x: x.unfold(1, 2, 0), ["step is 0 but must be > 0"]),
    E("unfold-step-neg", (2, 3), lambda L, x: x.unfold(1, 2, -1), ["must be > 0"]),
    E("unfold-size-neg", (2, 3), lambda L, x: x.unfold(1, -1, 1), ["size is -1 but must be >= 0"]),
    E("unfold-0d", (), lambda L, x: x.unfold(0, 2, 1), ["maximum size for tensor at dimension 0 is 1 but size is 2"]),
    # as_strided
    E("as_strided-bounds", (2, 3), lambda L, x: x.as_strided((3, 3), (3, 1)), ["out of bounds for storage of size"]),
    E("as_strided-offset-bounds", (2, 3), lambda L, x: x.as_strided((2,), (1,), 5), ["out of bounds for storage of size"]),
    E("as_strided-fn-bounds", (2, 3), lambda L, x: L.as_strided(x, (7,), (1,)), ["out of bounds for storage of size"]),
    E("as_strided-view-bounds", (2, 3), lambda L, x: x[1].as_strided((2, 3), (3, 1)), ["out of bounds"]),
    E("as_strided-neg-stride", (2, 3), lambda L, x: x.as_strided((2,), (-1,)), ["Negative strides are not supported"]),
    E("as_strided-neg-offset", (2, 3), lambda L, x: x.as_strided((2,), (1,), -1), ["invalid storage offset -1"]),
    E("as_strided-len", (2, 3), lambda L, x: x.as_strided((2, 3), (1,)), ["mismatch in length of strides and shape"]),
    E("as_strided-neg-size", (2, 3), lambda L, x: x.as_strided((-1,), (1,))),
    # t / T / mT
    E("t-3d", (2, 3, 4), lambda L, x: x.t(), ["t() expects a tensor with <= 2 dimensions, but self is 3D"]),
    E("t-fn-3d", (2, 3, 4), lambda L, x: L.t(x), ["<= 2 dimensions"]),
    E("mT-1d", (3,), lambda L, x: x.mT, ["tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."]),
    # copy_ / fill_
    E("copy-shape", (2, 3), lambda L, x: x.copy_(L.ones(4)), ["must match the size of tensor b"]),
    E("copy-shape2", (2, 3), lambda L, x: x.copy_(L.ones(3, 3)), ["must match"]),
    E("copy-not-tensor", (2, 3), lambda L, x: x.copy_([1, 2, 3])),
    E("copy-into-expanded", (1, 3), lambda L, x: x.expand(2, 3).copy_(L.ones(2, 3)),
      ["more than one element of the written-to tensor refers to a single memory location"]),
    E("fill-expanded-tensor-value", (1, 3), lambda L, x: x.expand(2, 3).fill_(L.tensor(1.0)),
      ["more than one element of the written-to tensor refers to a single memory location"]),
    E("setitem-expanded", (1, 3), lambda L, x: x.expand(2, 3).__setitem__(Ellipsis, 1.0),
      ["more than one element of the written-to tensor"]),
    E("setitem-expanded-col", (1, 3), lambda L, x: x.expand(2, 3)[:, 0].__setitem__(Ellipsis, 2.0),
      ["more than one element"]),
    E("setitem-expanded-tensor", (1, 3), lambda L, x: x.expand(2, 3).__setitem__(slice(None), L.zeros(3)),
      ["more than one element"]),
    E("copy-overlap-asstrided", (6,), lambda L, x: x.as_strided((3, 2), (0, 1)).copy_(L.ones(3, 2)),
      ["more than one element"]),
    E("copy-partial-overlap", (6,), lambda L, x: x[1:].copy_(x[:-1]),
      ["some elements of the input tensor and the written-to tensor refer to a single memory location"]),
    E("fill-tensor-1d", (2, 3), lambda L, x: x.fill_(L.ones(2)), ["fill_ only supports 0-dimension value tensor"]),
]


@needs_torch
@pytest.mark.parametrize("shape,fn,words,dtype", ERROR_CASES)
def test_errors_match_torch(shape, fn, words, dtype):
    a = values(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_exc(lambda: fn(torch, th_of(a)), lambda: fn(ptcore, pt_of(a)), words)


@needs_torch
def test_failed_ops_leave_tensor_unchanged():
    a = values((2, 3), "float32")
    t = pt_of(a)
    # (fill_ with a Python scalar into an expanded tensor is allowed in PyTorch;
    #  with a tensor value it raises the internal-overlap error)
    for f in [lambda: t.expand(2, 2, 3).fill_(ptcore.tensor(0.0)), lambda: t.copy_(ptcore.ones(4)),
              lambda: t.view(5), lambda: t[:, None].expand(2, 2, 3).copy_(ptcore.zeros(2, 2, 3))]:
        with pytest.raises(RuntimeError):
            f()
        np.testing.assert_array_equal(t.numpy(), a)


# ---------------------------------------------------------------------------
# copy_
# ---------------------------------------------------------------------------
def copy_src_values(src, dst):
    """Source values whose conversion to ``dst`` is well defined in PyTorch."""
    if src == "bool":
        return np.array([True, False, True, True, False, False], dtype=bool)
    if src.startswith("complex"):
        v = np.array([0, 1 + 2j, -0.0 + 0.5j, 3.75 - 1j, 2.5, 0 - 1j], dtype=src)
        if dst in ("uint8",):
            v = np.array([0, 1 + 2j, 0.5j, 3.75 - 1j, 2.5, 0 - 1j], dtype=src)
        return v
    if src.startswith("float"):
        if dst == "uint8":
            return np.array([0.0, 0.5, 1.0, 2.75, 200.5, 255.0], dtype=src)
        if dst == "bool":
            return np.array([0.0, -0.0, 0.25, -3.0, 1.0, 0.0], dtype=src)
        return np.array([0.0, -0.75, 1.5, -2.5, 100.9, -127.99], dtype=src)
    # integers: include values that wrap in narrower types
    info = np.iinfo(src)
    vals = [0, 1, -1, info.max, info.min, 100]
    if src == "uint8":
        vals = [0, 1, 255, 128, 127, 100]
    return np.array(vals, dtype=object).astype(src)


@needs_torch
@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPE_NAMES, DTYPE_NAMES)),
                         ids=[f"{s}->{d}" for s, d in itertools.product(DTYPE_NAMES, DTYPE_NAMES)])
def test_copy_all_dtype_pairs(src, dst):
    v = copy_src_values(src, dst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # contiguous same shape
        tdst = torch.zeros(6, dtype=getattr(torch, dst))
        tdst.copy_(th_of(v))
        pdst = ptcore.zeros(6, dtype=getattr(ptcore, dst))
        out = pdst.copy_(pt_of(v))
        assert out is pdst
        np.testing.assert_array_equal(pdst.numpy(), tdst.numpy())
        # broadcast a strided column into a transposed destination
        tdst = torch.zeros(3, 6, dtype=getattr(torch, dst)).t()
        pdst = ptcore.zeros(3, 6, dtype=getattr(ptcore, dst)).t()
        tsrc = th_of(np.stack([v, v[::-1]]))[:, None, ::2]      # (2, 1, 3) strided
        psrc = pt_of(np.stack([v, v[::-1]]))[:, None, ::2]
        tdst[:3].copy_(tsrc[0, 0])
        pdst[:3].copy_(psrc[0, 0])
        np.testing.assert_array_equal(pdst.numpy(), tdst.numpy())


@needs_torch
@pytest.mark.parametrize("dst_shape,src_shape", [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), ()), ((4, 1, 3), (5, 1)[1:] + (3,)),
    ((2, 3, 4), (3, 1)), ((0, 3), (3,)), ((2, 0), (1,)), ((2, 3), (1, 1, 3)),
])
def test_copy_broadcasting(dst_shape, src_shape):
    s = values(src_shape, "float64", seed=2)
    tdst, pdst = torch.zeros(dst_shape, dtype=torch.float64), ptcore.zeros(dst_shape, dtype=ptcore.float64)
    try:
        tdst.copy_(th_of(s))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            pdst.copy_(pt_of(s))
        return
    pdst.copy_(pt_of(s))
    np.testing.assert_array_equal(pdst.numpy(), tdst.numpy())
    np.testing.assert_array_equal(pdst.numpy(), np.broadcast_to(s, dst_shape))


@needs_torch
@pytest.mark.parametrize("case", ["shift-right", "shift-left", "self", "reverse-view",
                                  "disjoint-halves", "same-memory-other-view"])
def test_copy_overlapping(case):
    a = np.arange(12, dtype=np.float32)

    def run(L, x):
        if case == "shift-right":
            x[1:].copy_(x[:-1])
        elif case == "shift-left":
            x[:-1].copy_(x[1:])
        elif case == "self":
            x.copy_(x)
        elif case == "reverse-view":
            x.view(3, 4).copy_(x.view(4, 3).t())
        elif case == "disjoint-halves":
            x[:6].copy_(x[6:])
        elif case == "same-memory-other-view":
            x.view(2, 6).copy_(x.view(2, 6)[:, :])
        return x

    try:
        r = run(torch, th_of(a))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as pe:
            run(ptcore, pt_of(a))
        assert "single memory location" in str(pe.value), str(pe.value)
        assert "single memory location" in str(e)
        return
    p = run(ptcore, pt_of(a))
    np.testing.assert_array_equal(p.numpy(), r.numpy())


def convertible(shape, sname, dname, seed):
    """Values of ``sname`` whose conversion to ``dname`` is defined behaviour in PyTorch
    (float -> integer only inside the destination's range)."""
    v = values(shape, sname, seed)
    if sname[0] in "fc" and dname not in DTYPE_NAMES[6:] and dname != "bool":
        k = np.arange(v.size).reshape(shape)
        real = ((k * 7) % 100) * 0.75 - (0 if dname == "uint8" else 30)
        v = (real + 1j * (k % 3)) if sname[0] == "c" else real
        v = np.asarray(v).astype(sname)
    return v


@needs_torch
@settings(max_examples=150, **HYP)
@given(data=st.data(), sname=st.sampled_from(DTYPE_NAMES), dname=st.sampled_from(DTYPE_NAMES))
def test_copy_noncontiguous_random(data, sname, dname):
    """copy_ between non-contiguous views: permuted + stepped destination, broadcast
    and transposed source, all dtype pairs."""
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=4), label="shape"))
    nd = len(shape)
    perm = tuple(data.draw(st.permutations(range(nd)), label="perm"))
    steps = [data.draw(st.sampled_from([1, 2]), label="step") for _ in range(nd)]
    big = tuple(s * k for s, k in zip(shape, steps))
    dkey = tuple(slice(None, None, k) for k in steps)
    dbase = values(big, dname, seed=1)
    proot, troot = pt_of(dbase), th_of(dbase)
    pd, td = proot[dkey].permute(perm), troot[dkey].permute(perm)
    tshape = tuple(td.shape)
    sshape = tuple(1 if data.draw(st.booleans(), label="bcast") else s for s in tshape)
    if sshape and data.draw(st.booleans(), label="drop-lead"):
        sshape = sshape[1:]
    sv = convertible(sshape, sname, dname, seed=5)
    if len(sshape) >= 2:        # a transposed (non-contiguous) source
        ps, ts = pt_of(np.swapaxes(sv, 0, 1)).transpose(0, 1), th_of(np.swapaxes(sv, 0, 1)).transpose(0, 1)
    else:
        ps, ts = pt_of(sv), th_of(sv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        td.copy_(ts)
        out = pd.copy_(ps)
    assert out is pd
    np.testing.assert_array_equal(pd.numpy(), td.numpy())
    np.testing.assert_array_equal(proot.numpy(), troot.numpy())    # nothing else touched


@needs_torch
def test_copy_zero_size():
    for dshape, sshape in [((0,), (0,)), ((0, 3), (3,)), ((2, 0), (2, 0)), ((0,), ()), ((3, 0), (1, 0))]:
        pd = ptcore.zeros(dshape)
        td = torch.zeros(dshape)
        td.copy_(torch.ones(sshape))
        assert pd.copy_(ptcore.ones(sshape)) is pd
        assert tuple(pd.shape) == tuple(td.shape)
    same_exc(lambda: torch.zeros(0, 3).copy_(torch.ones(2)), lambda: ptcore.zeros(0, 3).copy_(ptcore.ones(2)))


@needs_torch
def test_fill_and_zero_on_views():
    a = values((4, 5), "int32")
    t, tt = pt_of(a), th_of(a)
    for f in [lambda x: x[:, 1::2].fill_(7), lambda x: x.t()[2].zero_(), lambda x: x.diagonal().fill_(-3),
              lambda x: x[1:3, 1:4].fill_(2.9), lambda x: x.fill_(ptcore.tensor(5) if isinstance(x, ptcore.Tensor) else torch.tensor(5))]:
        rp, rt = f(t), f(tt)
        np.testing.assert_array_equal(t.numpy(), tt.numpy())
        assert layout(rp) == layout(rt)
    b = values((3,), "bool")
    pb, tb = pt_of(b), th_of(b)
    pb.fill_(2.5)
    tb.fill_(2.5)
    np.testing.assert_array_equal(pb.numpy(), tb.numpy())


# ---------------------------------------------------------------------------
# clone / contiguous
# ---------------------------------------------------------------------------
CLONE_LAYOUTS = [
    ("contig", (2, 3, 4), lambda x: x),
    ("transposed", (3, 4), lambda x: x.t()),
    ("permuted", (2, 3, 4), lambda x: x.permute(2, 0, 1)),
    ("permuted2", (2, 3, 4), lambda x: x.permute(1, 2, 0)),
    ("sliced-rows", (4, 5), lambda x: x[1:3]),
    ("sliced-cols", (4, 5), lambda x: x[:, 1:4]),
    ("stepped", (4, 6), lambda x: x[:, ::2]),
    ("stepped-transposed", (4, 6), lambda x: x[::2].t()),
    ("expanded", (1, 4), lambda x: x.expand(3, 4)),
    ("expanded-t", (3, 1), lambda x: x.expand(3, 4).t()),
    ("size1-dims", (1, 1, 5), lambda x: x.transpose(0, 1)),
    ("diag", (4, 4), lambda x: x.diagonal()),
    ("unfold", (9,), lambda x: x.unfold(0, 3, 2)),
    ("scalar", (), lambda x: x),
    ("select-col", (3, 4), lambda x: x[:, 1]),
    ("offset-contig", (4, 5), lambda x: x[2:]),
    ("as_strided-overlap", (6,), lambda x: x.as_strided((3, 3), (1, 1))),
]


@needs_torch
@pytest.mark.parametrize("lid,shape,fn", CLONE_LAYOUTS, ids=[c[0] for c in CLONE_LAYOUTS])
def test_clone_and_contiguous_match_torch(lid, shape, fn):
    a = values(shape, "float32")
    t0, tt0 = pt_of(a), th_of(a)
    x, tx = fn(t0), fn(tt0)
    assert layout(x) == layout(tx)

    c, tc = x.clone(), tx.clone()
    assert layout(c) == layout(tc), f"clone: {layout(c)} vs torch {layout(tc)}"
    np.testing.assert_array_equal(c.numpy(), tx.numpy())
    assert c._base is None
    if c.numel():
        assert not shares(c, t0)
        c.numpy()[...] = 0
        np.testing.assert_array_equal(t0.numpy(), a)          # clone is independent

    k, tk = x.contiguous(), tx.contiguous()
    assert layout(k) == layout(tk), f"contiguous: {layout(k)} vs torch {layout(tk)}"
    assert k.is_contiguous()
    assert (k is x) == (tk is tx)
    np.testing.assert_array_equal(k.numpy(), tx.numpy())
    if k is not x and k.numel():
        assert not shares(k, t0)

    for fmt in ("contiguous_format", "preserve_format"):
        c2, tc2 = x.clone(memory_format=getattr(ptcore, fmt)), tx.clone(memory_format=getattr(torch, fmt))
        assert layout(c2) == layout(tc2), fmt


@needs_torch
def test_contiguous_returns_self_when_contiguous():
    for shape in [(), (0,), (3,), (2, 3), (1, 4, 1)]:
        t = ptcore.zeros(shape)
        assert t.contiguous() is t
    t = ptcore.zeros(4, 1)
    v = t.t()                      # (1, 4) with strides (1, 1): contiguous in torch
    tv = torch.zeros(4, 1).t()
    assert v.is_contiguous() == tv.is_contiguous()
    assert (v.contiguous() is v) == (tv.contiguous() is tv)


@needs_torch
@pytest.mark.parametrize("shape,stride", [
    ((2, 3), (3, 1)), ((2, 3), (1, 2)), ((3, 1), (1, 1)), ((3, 1), (1, 7)), ((1, 3), (9, 1)),
    ((2, 0, 3), (0, 0, 0)), ((0,), (5,)), ((2, 2), (0, 1)), ((4,), (2,)), ((1,), (0,)), ((), ()),
    ((2, 1, 2), (2, 5, 1)), ((2, 1, 2), (1, 3, 2)),
])
def test_is_contiguous_as_strided(shape, stride):
    a = np.arange(40, dtype=np.float64)
    p = pt_of(a).as_strided(shape, stride)
    r = th_of(a).as_strided(shape, stride)
    assert p.is_contiguous() == r.is_contiguous()
    assert layout(p) == layout(r)
    np.testing.assert_array_equal(p.numpy(), r.numpy())
    assert layout(p.contiguous()) == layout(r.contiguous())
    assert (p.contiguous() is p) == (r.contiguous() is r)


@needs_torch
@pytest.mark.parametrize("lid,shape,fn", [pytest.param(*c, id=c[0]) for c in [
    ("size1-weird-stride", (3, 1, 4), lambda x: x.permute(1, 2, 0)),
    ("empty-t", (0, 3), lambda x: x.t()),
    ("empty-mid", (2, 0, 3), lambda x: x.permute(2, 1, 0)),
    ("as_strided-size1-stride7", (40,), lambda x: x.as_strided((3, 1), (1, 7))),
    ("as_strided-size1-stride9", (40,), lambda x: x.as_strided((1, 3), (9, 1))),
    ("as_strided-zero-size", (40,), lambda x: x.as_strided((2, 0, 3), (0, 0, 0))),
    ("as_strided-len0-stride5", (40,), lambda x: x.as_strided((0,), (5,))),
    ("as_strided-len1-stride0", (40,), lambda x: x.as_strided((1,), (0,))),
    ("as_strided-mid1", (40,), lambda x: x.as_strided((2, 1, 2), (2, 5, 1))),
    ("as_strided-mid1-perm", (40,), lambda x: x.as_strided((2, 1, 2), (1, 3, 2))),
]])
def test_clone_strides_degenerate_dims(lid, shape, fn):
    """clone() (preserve_format) of dense tensors whose size-0/size-1 dims carry
    arbitrary strides: PyTorch copies the strides verbatim."""
    a = values(shape, "float64")
    x, tx = fn(pt_of(a)), fn(th_of(a))
    assert layout(x) == layout(tx)
    c, tc = x.clone(), tx.clone()
    assert layout(c) == layout(tc), f"clone: {layout(c)} vs torch {layout(tc)}"
    np.testing.assert_array_equal(c.numpy(), tx.numpy())


# ---------------------------------------------------------------------------
# metadata and aliasing queries
# ---------------------------------------------------------------------------
@needs_torch
def test_data_ptr_storage_and_base():
    a = values((3, 4), "int64")
    t, tt = pt_of(a), th_of(a)
    v, tv = t[1:, 2:], tt[1:, 2:]
    assert v.data_ptr() - t.data_ptr() == tv.data_ptr() - tt.data_ptr() == 6 * 8
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert v.untyped_storage().nbytes() == tv.untyped_storage().nbytes() == 96
    assert v._base is t and t._base is None
    vv = v.t().unsqueeze(0)
    assert vv._base is t                        # views of views point at the root
    assert t._is_view() is False and vv._is_view() is True
    assert t.size() == ptcore.Size([3, 4]) and t.size(1) == 4 and t.size(-2) == 3
    assert t.stride(0) == 4 and t.stride(-1) == 1
    assert t.shape == (3, 4) and isinstance(t.size(), ptcore.Size)
    assert t.dim() == 2 and t.numel() == 12 and v.numel() == 4


@needs_torch
def test_writes_through_views_are_shared():
    a = values((3, 4), "float64")
    t, tt = pt_of(a), th_of(a)
    for f in [lambda x: x.t()[1], lambda x: x.view(12)[3:9:2], lambda x: x.unsqueeze(1)[2, 0],
              lambda x: x.diagonal(1), lambda x: x.narrow(1, 2, 2), lambda x: x.select(1, 0),
              lambda x: x.unfold(1, 2, 2)[1], lambda x: x.as_strided((2, 2), (5, 1), 1),
              lambda x: x.flatten()[::5], lambda x: x.movedim(0, 1)[:, ::2]]:
        f(t).fill_(-1.5)
        f(tt).fill_(-1.5)
        np.testing.assert_array_equal(t.numpy(), tt.numpy())
        f(t).copy_(ptcore.tensor(9.0))
        f(tt).copy_(torch.tensor(9.0))
        np.testing.assert_array_equal(t.numpy(), tt.numpy())


# ---------------------------------------------------------------------------
# specific semantics pinned down against torch
# ---------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("key", [slice(5, None), slice(3, None), slice(2, 1), slice(-1, -2),
                                 slice(1, 1), slice(4, 2, 2)])
def test_empty_slice_storage_offset(key):
    """An empty slice still advances storage_offset by start * stride (PyTorch's slice)."""
    a = values((3, 2), "int32")
    p, r = pt_of(a)[key], th_of(a)[key]
    assert layout(p) == layout(r)
    p, r = pt_of(a)[:, key], th_of(a)[:, key]
    assert layout(p) == layout(r)


@needs_torch
@pytest.mark.parametrize("shape,target", [((3,), (1, 3)), ((3,), (1, 1, 3)), ((2, 3), (1, 2, 3)),
                                          ((), (1,)), ((), (1, 1)), ((3,), (2, 1, 3)), ((0,), (1, 0))])
def test_expand_new_leading_size1_dim_stride(shape, target):
    """expand() gives a new leading dim of size 1 the stride size[i+1]*stride[i+1], not 0."""
    a = values(shape, "float32")
    p, r = pt_of(a).expand(target), th_of(a).expand(target)
    assert layout(p) == layout(r)


@needs_torch
@pytest.mark.parametrize("fn", [lambda x: x.t().reshape(-1), lambda x: x.t().flatten(),
                                lambda x: x[:, ::2].reshape(8), lambda x: x.t().contiguous(),
                                lambda x: x.clone()], ids=["reshape", "flatten", "reshape-step",
                                                           "contiguous", "clone"])
def test_copying_ops_return_non_views(fn):
    """A reshape/flatten that has to copy returns a fresh tensor: its _base is None."""
    a = values((4, 3), "float32")
    t, tt = pt_of(a), th_of(a)
    p, r = fn(t), fn(tt)
    assert r._base is None
    assert p._base is None, f"ptcore _base is {type(p._base).__name__}, torch None"
    assert p._is_view() == r._is_view()
    assert not shares(p, t)


@needs_torch
def test_mT_on_0d_is_identity():
    """PyTorch 2.x: Tensor.mT on a 0-d tensor is the identity (deprecated, with a warning)."""
    tt = torch.tensor(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tt.mT
        p = ptcore.tensor(2.5).mT
    assert layout(p) == layout(r)
    assert p.item() == 2.5


@needs_torch
@pytest.mark.parametrize("op", ["fill_", "zero_"])
def test_scalar_fill_into_expanded_is_allowed(op):
    """PyTorch does not check internal overlap for fill_(scalar)/zero_: it writes the base."""
    a = values((1, 3), "float32")
    t, tt = pt_of(a), th_of(a)
    args = (4.0,) if op == "fill_" else ()
    getattr(tt.expand(2, 3), op)(*args)
    getattr(t.expand(2, 3), op)(*args)
    np.testing.assert_array_equal(t.numpy(), tt.numpy())


@needs_torch
@pytest.mark.parametrize("dtype,value", [("uint8", -1), ("uint8", -255), ("int8", -128), ("bool", 1j),
                                         ("bool", -0.5), ("int32", 2.9), ("float16", 1e6),
                                         ("uint8", 256), ("int8", 128), ("float32", 1e300), ("int64", 1j)])
def test_fill_scalar_conversion(dtype, value):
    """fill_ range rules: unsigned targets wrap negatives down to -max, bool takes any number,
    out-of-range integers / float16 / float32 and complex->int raise."""
    a = values((3,), dtype)
    t, tt = pt_of(a), th_of(a)
    try:
        tt.fill_(value)
    except Exception as e:
        with pytest.raises(type(e)):
            t.fill_(value)
        np.testing.assert_array_equal(t.numpy(), a)
        return
    t.fill_(value)
    np.testing.assert_array_equal(t.numpy(), tt.numpy())


def _copy_copy_cases(L):
    """copy.copy of the tensors torch rebuilds from their reduction."""
    class Sub(L.Tensor):
        pass

    def attrs():
        a = L.arange(3.)
        a.note = [1]
        return a

    def sub():
        a = L.arange(3.).as_subclass(Sub)
        a.tag = 7
        return a
    return {
        "plain": lambda: L.arange(3.),
        "leaf_grad": lambda: L.arange(3., requires_grad=True),
        "non_leaf": lambda: L.arange(3., requires_grad=True) * 2,
        "slice_view": lambda: L.arange(6.).reshape(2, 3)[:, 1:],
        "element": lambda: L.arange(3.)[1],
        "bf16": lambda: L.arange(3.).to(L.bfloat16),
        "parameter": lambda: L.nn.Parameter(L.arange(3.)),
        "parameter_frozen": lambda: L.nn.Parameter(L.arange(3.), requires_grad=False),
        "attrs": attrs,
        "subclass": sub,
    }


@needs_torch
@pytest.mark.parametrize("case", list(_copy_copy_cases(ptcore)))
def test_copy_copy_shares_storage(case):
    """copy.copy (torch: a rebuild from the tensor's reduction, storage not copied): a new
    leaf on the same storage with the same size/strides/offset, requires_grad, the class and
    the same attribute objects; writes show through, its version counter is its own."""
    import copy
    got = {}
    for L in (torch, ptcore):
        a = _copy_copy_cases(L)[case]()
        c = copy.copy(a)
        info = (type(c).__name__, c is a, c.data_ptr() == a.data_ptr(), tuple(c.shape),
                tuple(c.stride()), c.storage_offset(), c.requires_grad, c.is_leaf,
                c.grad_fn is None, c._version, {k: c.__dict__[k] is a.__dict__[k] for k in c.__dict__
                                                if not k.startswith("_")})
        with L.no_grad():
            c.reshape(-1)[0].fill_(100) if c.dim() == 0 else c.select(-1, 0).fill_(100)
        got[L] = info + (a.reshape(-1)[0].item(), a._version, c._version)
    assert got[ptcore] == got[torch]


@needs_torch
@pytest.mark.parametrize("make", [lambda L: L.arange(4.), lambda L: L.arange(6).reshape(2, 3),
                                  lambda L: L.tensor(5.), lambda L: L.arange(4., requires_grad=True),
                                  lambda L: L.zeros(0, 2)])
def test_reversed_is_flip_0(make):
    """reversed(t) is t.flip(0) (a new tensor with the autograd of flip); a 0-d tensor
    gives itself."""
    got = {}
    for L in (torch, ptcore):
        t = make(L)
        r = reversed(t)
        got[L] = (isinstance(r, L.Tensor), r is t, tuple(r.shape), r.detach().tolist(),
                  type(r.grad_fn).__name__ if r.grad_fn is not None else None)
    assert got[ptcore] == got[torch]
