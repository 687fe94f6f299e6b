"""The inlined loops of the indexed kernel (gather / scatter_ / scatter_add_ /
index_add_ rows of 4- and 8-byte elements, float sums), the vectorised index
bounds check, flip's reversed-row copy, tril/triu_indices' row fill,
bincount's vectorised sizing pass and the float32 atan2 lanes: values against
NumPy (and torch where it is installed), every length around the vector widths,
strided and negative layouts, bad indices, and atan2 on every CPU path this
machine has (ATEN_CPU_CAPABILITY in a child process) with the same bits."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

DTYPES = ["float32", "float64", "int32", "int64", "float16", "int16"]


def _rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_scatter_against_numpy(dtype, dim):
    rng = np.random.default_rng(3)
    for rows, cols in [(1, 1), (3, 17), (5, 64), (7, 1001)]:
        x = _rand((rows, cols), dtype, rows * cols)
        size = x.shape[dim]
        idx_shape = (rows, cols + 3) if dim != 0 else (rows + 2, cols)
        idx = rng.integers(0, size, idx_shape)
        if dim == 0:
            idx = idx[:rows + 2]
        xt = ptcore.from_numpy(x)
        it = ptcore.from_numpy(idx)
        sl_idx = idx[:, :cols] if dim != 0 else idx
        # gather: index shape may be smaller than x along other dims
        g_idx = idx[:, :cols] if dim != 0 else idx[:rows]
        g = xt.gather(dim, ptcore.from_numpy(np.ascontiguousarray(g_idx))).numpy()
        np.testing.assert_array_equal(g, np.take_along_axis(x, g_idx, axis=dim))
        # gather of a strided index (the generic loop) agrees
        wide = np.repeat(g_idx, 2, axis=1)
        gs = xt.gather(dim, ptcore.from_numpy(wide)[:, ::2]).numpy()
        np.testing.assert_array_equal(gs, g)
        # scatter_add_: duplicates summed in index order
        src = _rand(g_idx.shape, dtype, 99)
        ref = np.zeros_like(x)
        ax = dim % 2
        for i in range(g_idx.shape[0]):
            for j in range(g_idx.shape[1]):
                pos = (g_idx[i, j], j) if ax == 0 else (i, g_idx[i, j])
                ref[pos] = ref[pos] + src[i, j]
        out = ptcore.zeros(x.shape, dtype=getattr(ptcore, dtype))
        out.scatter_add_(dim, ptcore.from_numpy(np.ascontiguousarray(g_idx)), ptcore.from_numpy(src))
        np.testing.assert_array_equal(out.numpy(), ref)
        # scatter_ with unique indices per row: a permutation
        if dim != 0:
            perm = np.argsort(rng.random((rows, cols)), axis=1)
            s = ptcore.zeros(x.shape, dtype=getattr(ptcore, dtype)).scatter_(
                dim, ptcore.from_numpy(perm), xt).numpy()
            ref = np.zeros_like(x)
            np.put_along_axis(ref, perm, x, axis=1)
            np.testing.assert_array_equal(s, ref)
        del sl_idx


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_add_rows_against_numpy(dtype, dim):
    rng = np.random.default_rng(7)
    for n in [1, 5, 33]:
        shape = [4, 6, 19]
        target = _rand(shape, dtype, 1)
        src_shape = list(shape)
        src_shape[dim] = n
        src = _rand(src_shape, dtype, 2)
        idx = rng.integers(0, shape[dim], n)
        ref = target.copy()
        for i in range(n):
            sl = [slice(None)] * 3
            sl[dim] = idx[i]
            sls = [slice(None)] * 3
            sls[dim] = i
            ref[tuple(sl)] = ref[tuple(sl)] + src[tuple(sls)]
        t = ptcore.from_numpy(target.copy())
        t.index_add_(dim, ptcore.from_numpy(idx), ptcore.from_numpy(src))
        np.testing.assert_array_equal(t.numpy(), ref)


def test_embedding_rows_index_add_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((65, 128)).astype(np.float32)
    src = rng.standard_normal((768, 128)).astype(np.float32)
    idx = rng.integers(0, 65, 768)
    a = ptcore.from_numpy(w.copy()).index_add_(0, ptcore.from_numpy(idx), ptcore.from_numpy(src))
    b = torch.from_numpy(w.copy()).index_add_(0, torch.from_numpy(idx), torch.from_numpy(src))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("bad", [-1, 1000, 10 ** 12])
def test_out_of_range_index_raises(bad):
    x = ptcore.randn(10, 1000)
    for pos in [0, 7, 999]:            # in the vector body and the tail of the run
        idx = np.zeros((10, 1000), np.int64)
        idx[3, pos] = bad
        with pytest.raises((RuntimeError, IndexError), match="out of bounds|out of range"):
            x.gather(1, ptcore.from_numpy(idx))
        with pytest.raises((RuntimeError, IndexError), match="out of bounds|out of range"):
            ptcore.zeros(10, 1000).scatter_add_(1, ptcore.from_numpy(idx), x)
        z = ptcore.zeros(10, 1000)
        with pytest.raises((RuntimeError, IndexError)):
            z.index_add_(1, ptcore.from_numpy(idx[3]), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "bool", "complex64",
                                   "complex128", "bfloat16", "int64"])
def test_flip_every_length(dtype):
    for n in list(range(0, 40)) + [63, 64, 65, 1000]:
        base = np.arange(3 * n).reshape(3, n)
        x = ptcore.from_numpy(base).to(getattr(ptcore, dtype)) if dtype != "bool" \
            else ptcore.from_numpy(base % 3 == 0)
        ref = x.numpy() if dtype != "bfloat16" else x.float().numpy()
        got = x.flip(1)
        got = got.numpy() if dtype != "bfloat16" else got.float().numpy()
        np.testing.assert_array_equal(got, ref[:, ::-1])
        both = x.flip(0, 1)
        both = both.numpy() if dtype != "bfloat16" else both.float().numpy()
        np.testing.assert_array_equal(both, ref[::-1, ::-1])
        if n > 2:                        # a strided row, flipped
            s = x[:, ::2].flip(1)
            s = s.numpy() if dtype != "bfloat16" else s.float().numpy()
            np.testing.assert_array_equal(s, ref[:, ::2][:, ::-1])


def test_flip_of_negative_strides_and_in_place_views():
    x = ptcore.arange(30.).reshape(5, 6)
    np.testing.assert_array_equal(x.flip(1).flip(1).numpy(), x.numpy())
    y = ptcore.empty(5, 6)
    y.copy_(x.flip(1))
    np.testing.assert_array_equal(y.numpy(), x.numpy()[:, ::-1])


@pytest.mark.parametrize("fn", ["triu_indices", "tril_indices"])
def test_tri_indices_against_numpy(fn):
    npf = np.triu_indices if fn == "triu_indices" else np.tril_indices
    for r in range(0, 9):
        for c in range(0, 9):
            for k in range(-10, 11):
                for dt in (ptcore.int64, ptcore.int32):
                    got = getattr(ptcore, fn)(r, c, k, dtype=dt)
                    assert got.dtype == dt and got.shape[0] == 2
                    ref = np.stack(npf(r, k, c)) if r and c else np.zeros((2, 0), np.int64)
                    np.testing.assert_array_equal(got.numpy(), ref)
    big = getattr(ptcore, fn)(700, 500, -3).numpy()
    np.testing.assert_array_equal(big, np.stack(npf(700, -3, 500)))


@pytest.mark.parametrize("dtype", ["int16", "int8", "uint8", "float32", "bool"])
def test_tri_indices_refuse_other_dtypes(dtype):
    # torch's index types only (int32/int64)
    with pytest.raises(NotImplementedError, match="not implemented"):
        ptcore.triu_indices(3, 3, dtype=getattr(ptcore, dtype))
    with pytest.raises(NotImplementedError, match="not implemented"):
        ptcore.tril_indices(3, 3, dtype=getattr(ptcore, dtype))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
def test_bincount_against_numpy(dtype):
    rng = np.random.default_rng(11)
    for n in [1, 2, 7, 8, 9, 15, 16, 17, 33, 1000, 100003]:
        v = rng.integers(0, 120, n).astype(dtype)
        got = ptcore.bincount(ptcore.from_numpy(v)).numpy()
        np.testing.assert_array_equal(got, np.bincount(v))
        w = rng.standard_normal(n)
        gw = ptcore.bincount(ptcore.from_numpy(v), ptcore.from_numpy(w), minlength=200).numpy()
        np.testing.assert_allclose(gw, np.bincount(v, w, minlength=200), rtol=1e-12, atol=1e-12)
    # the extremes sit in the vector body and in the tail
    for pos in [0, 5, 16, 30]:
        v = np.full(33, 3, dtype)
        v[pos] = 90
        assert ptcore.bincount(ptcore.from_numpy(v)).numpy().shape == (91,)
        if dtype != "uint8":
            v[pos] = -1
            with pytest.raises(RuntimeError, match="non-negative"):
                ptcore.bincount(ptcore.from_numpy(v))


def _ulps(got, ref):
    r32 = ref.astype(np.float32)
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(r32)).astype(np.float64)


def _atan2_inputs(seed):
    rng = np.random.default_rng(seed)
    n = 200001
    bits = lambda: np.frombuffer(rng.integers(0, 2 ** 32, n, dtype=np.uint32).tobytes(),
                                 np.float32)
    f32 = lambda v: np.asarray(v, np.float64).astype(np.float32)
    a = np.concatenate([f32(rng.standard_normal(n)), f32(np.exp(rng.uniform(-100, 88, n))), bits(),
                        f32(rng.standard_normal(n))])
    b = np.concatenate([f32(rng.standard_normal(n)), f32(-np.exp(rng.uniform(-100, 88, n))), bits(),
                        a[-n:] * f32(1 + rng.uniform(-1e-3, 1e-3, n))])
    return a, b


def test_atan2_float32_within_one_ulp():
    a, b = _atan2_inputs(0)
    with np.errstate(invalid="ignore", over="ignore"):
        ref = np.arctan2(a.astype(np.float64), b.astype(np.float64))
    got = ptcore.atan2(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy()
    fin = np.isfinite(ref)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert _ulps(got[fin], ref[fin]).max() <= 1.0


def test_atan2_special_values_match_numpy():
    sp = np.array([0., -0., np.inf, -np.inf, np.nan, 1., -1., 1e-45, -1e-45, 3.4e38, -3.4e38,
                   1e-38, 2.0 ** 126, 2.0 ** -100], np.float32)
    A, B = (m.ravel() for m in np.meshgrid(sp, sp))
    got = ptcore.atan2(ptcore.from_numpy(A), ptcore.from_numpy(B)).numpy()
    ref = np.arctan2(A.astype(np.float64), B.astype(np.float64))
    fin = np.isfinite(ref)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert _ulps(got[fin], ref[fin]).max() <= 1.0
    zero = fin & (ref == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))


def test_atan2_layouts_give_the_same_bits():
    a, b = _atan2_inputs(1)
    a, b = a[:4099], b[:4099]
    full = ptcore.atan2(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy().view(np.uint32)
    a2, b2 = np.repeat(a, 2), np.repeat(b, 2)
    strided = ptcore.atan2(ptcore.from_numpy(a2)[::2], ptcore.from_numpy(b2)[::2]).numpy()
    np.testing.assert_array_equal(strided.view(np.uint32), full)
    for n in list(range(1, 40)):              # every tail length
        part = ptcore.atan2(ptcore.from_numpy(a[:n]), ptcore.from_numpy(b[:n])).numpy()
        np.testing.assert_array_equal(part.view(np.uint32), full[:n])
    # a number on either side: the broadcast loops
    s = ptcore.atan2(ptcore.from_numpy(a[:100]), ptcore.tensor(0.5)).numpy()
    one = np.array([ptcore.atan2(ptcore.tensor(float(v)), ptcore.tensor(0.5)).item() for v in a[:100]],
                   np.float32)
    np.testing.assert_array_equal(s.view(np.uint32), one.view(np.uint32))
    s = ptcore.atan2(ptcore.tensor(-0.25), ptcore.from_numpy(b[:100])).numpy()
    ref = np.arctan2(np.float64(-0.25), b[:100].astype(np.float64))
    assert _ulps(s, ref).max() <= 1.0


def test_atan2_matches_torch_closely():
    torch = pytest.importorskip("torch")
    a, b = _atan2_inputs(2)
    got = ptcore.atan2(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy()
    ref = torch.atan2(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    fin = np.isfinite(ref)
    # both within an ulp of the exact value: at most one ulp apart
    diff = np.abs(got[fin].view(np.int32).astype(np.int64) - ref[fin].view(np.int32).astype(np.int64))
    assert diff.max() <= 1
    assert np.array_equal(np.isnan(got), np.isnan(ref))


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
o = ptcore.atan2(ptcore.from_numpy(d["a"]), ptcore.from_numpy(d["b"])).numpy()
np.save(sys.argv[2], o)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_atan2_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    a, b = _atan2_inputs(3)
    a, b = a[::7].copy(), b[::7].copy()
    np.savez(tmp_path / "in.npz", a=a, b=b)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npy")
    child = np.load(tmp_path / "o.npy")
    here = ptcore.atan2(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy()
    np.testing.assert_array_equal(child.view(np.uint32), here.view(np.uint32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int16", "bool"])
def test_index_put_of_a_number_fills_rows(dtype):
    rng = np.random.default_rng(12)
    for rows, cols in [(5, 1), (6, 17), (9, 64), (40, 1001)]:
        base = (rng.standard_normal((rows, cols)) * 5).astype(dtype)
        idx = rng.integers(-rows, rows, rows * 2)          # duplicates and negatives
        ref = base.copy()
        ref[idx] = 1
        t = ptcore.from_numpy(base.copy())
        t[ptcore.from_numpy(idx)] = 1
        np.testing.assert_array_equal(t.numpy(), ref)
        ref2 = base.copy()
        ref2[idx % rows] = 0
        t2 = ptcore.from_numpy(base.copy()).index_fill_(0, ptcore.from_numpy(idx % rows), 0)
        np.testing.assert_array_equal(t2.numpy(), ref2)
        # columns (a strided run: the generic loop)
        ref3 = base.copy()
        ref3[:, idx[:3] % cols] = 1
        t3 = ptcore.from_numpy(base.copy())
        t3[:, ptcore.from_numpy(idx[:3] % cols)] = 1
        np.testing.assert_array_equal(t3.numpy(), ref3)


def test_one_hot_fast_and_general_paths():
    rng = np.random.default_rng(13)
    F = ptcore.nn.functional
    for shape in [(1,), (7,), (3, 4), (2, 3, 5)]:
        v = rng.integers(0, 6, shape)
        for nc in (-1, 6, 9):
            got = F.one_hot(ptcore.from_numpy(v), nc).numpy()
            k = v.max() + 1 if nc == -1 else nc
            np.testing.assert_array_equal(got, np.eye(k, dtype=np.int64)[v])
        strided = ptcore.from_numpy(np.repeat(v, 2, axis=-1))[..., ::2]
        np.testing.assert_array_equal(F.one_hot(strided, 6).numpy(), np.eye(6, dtype=np.int64)[v])
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(ptcore.tensor([0, -1, 2]), 4)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ptcore.tensor([0, 4, 2]), 4)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ptcore.tensor([0, 1, 9]), 4)
    assert F.one_hot(ptcore.zeros(0, dtype=ptcore.int64), 3).shape == (0, 3)


def _scatter_reduce_ref(target, dim, index, src, reduce, include_self):
    """NumPy reference: elements in C order of the index, duplicates folded in
    that order (NaN propagating for amax/amin), mean by counts."""
    out = target.astype(np.float64 if target.dtype.kind == "f" else target.dtype).copy()
    touched = np.zeros(out.shape, bool)
    count = np.ones(out.shape, np.int64) if include_self else np.zeros(out.shape, np.int64)
    for pos in np.ndindex(*index.shape):
        t = list(pos)
        t[dim] = index[pos]
        t = tuple(t)
        v = src[pos]
        if not include_self and not touched[t]:
            out[t] = v
            touched[t] = True
            count[t] += 1
            continue
        count[t] += 1
        if reduce in ("sum", "mean"):
            out[t] = out[t] + v
        elif reduce == "prod":
            out[t] = out[t] * v
        elif reduce == "amax":
            out[t] = v if (v != v or out[t] < v) else out[t]
        else:
            out[t] = v if (v != v or v < out[t]) else out[t]
    if reduce == "mean":
        c = np.maximum(count, 1)
        out = out / c if out.dtype.kind == "f" else out // c
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_rows_against_numpy(dtype, reduce, include_self):
    rng = np.random.default_rng(21)
    for dim, shape, ishape in [(1, (4, 9), (4, 23)), (0, (6, 5), (17, 5)), (1, (3, 40), (3, 40))]:
        target = (rng.standard_normal(shape) * 3).astype(dtype)
        src = (rng.standard_normal(ishape) * 3).astype(dtype)
        if dtype != "int64":
            src.reshape(-1)[::7] = np.nan if reduce in ("amax", "amin") else src.reshape(-1)[::7]
        index = rng.integers(0, shape[dim], ishape)
        got = ptcore.from_numpy(target.copy()).scatter_reduce_(
            dim, ptcore.from_numpy(index), ptcore.from_numpy(src), reduce,
            include_self=include_self).numpy()
        ref = _scatter_reduce_ref(target, dim, index, src, reduce, include_self)
        if dtype == "int64":
            np.testing.assert_array_equal(got, ref)
        else:
            np.testing.assert_allclose(got, ref.astype(dtype), rtol=1e-5, atol=1e-6, equal_nan=True)


def test_index_reduce_mean_and_amax_against_numpy():
    rng = np.random.default_rng(22)
    target = rng.standard_normal((10, 37)).astype(np.float32)
    src = rng.standard_normal((25, 37)).astype(np.float32)
    idx = rng.integers(0, 10, 25)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for reduce in ("mean", "amax", "amin", "prod"):
            got = ptcore.from_numpy(target.copy()).index_reduce_(
                0, ptcore.from_numpy(idx), ptcore.from_numpy(src), reduce).numpy()
            ref = _scatter_reduce_ref(target, 0, np.repeat(idx[:, None], 37, 1), src, reduce, True)
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
