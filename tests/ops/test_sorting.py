"""Tests for ptcore's sorting and searching ops (ptcore._ops.sorting, _ops.kernels._sort).

PyTorch is the oracle (tests that need it skip cleanly without it); NumPy
checks the rest.  Inputs are built from the same NumPy data for both
libraries, with ties, NaNs (both signs), signed zeros and infinities,
non-contiguous and expanded layouts, zero-size and 0-d tensors.  Values are
compared bit for bit where PyTorch's result is fully determined.
"""
import math
import warnings
import zlib

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _parallel

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
ORDERED = [d for d in DTYPES if d != "bool"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def parallel():
    """Force the parallel paths (2 threads, tiny grain), restore afterwards."""
    grain = _parallel._get_parallel_grain()
    nt = ptcore.get_num_threads()
    _parallel._set_parallel_grain(16)
    ptcore.set_num_threads(2)
    yield
    _parallel._set_parallel_grain(grain)
    ptcore.set_num_threads(nt)


def _rng(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def make(dt, shape, rng, ties=True):
    """NumPy data for dtype ``dt`` (bfloat16: float32 values exact in bf16)."""
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in INTS:
        info = np.iinfo(dt)
        if ties:
            lo, hi = (0, 9) if dt == "uint8" else (-5, 5)
        else:
            lo, hi = int(info.min), int(info.max)
        a = rng.integers(lo, hi, shape, endpoint=True).astype(dt)
        if not ties and a.size > 2:
            a.flat[0] = info.min
            a.flat[-1] = info.max
        return a
    npdt = "float32" if dt == "bfloat16" else dt
    a = (rng.integers(-8, 9, shape) / 4 if ties else rng.standard_normal(shape) * 100).astype(npdt)
    if a.size:
        flat = a.reshape(-1)
        specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], dtype=npdt)
        pick = rng.random(flat.size) < 0.15
        flat[pick] = specials[rng.integers(0, len(specials), int(pick.sum()))]
        a = flat.reshape(shape)
    return a


def P(a, dt):
    t = ptcore.from_numpy(np.ascontiguousarray(a))
    return t.to(ptcore.bfloat16) if dt == "bfloat16" else t


def T(torch, a, dt):
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(torch.bfloat16) if dt == "bfloat16" else t


def pnp(t):
    """ptcore tensor -> NumPy (16-bit floats as float64)."""
    t = t.contiguous()
    if t.dtype in (ptcore.float16, ptcore.bfloat16):
        t = t.to(ptcore.float64)
    return t.numpy().copy()


def tnp(t):
    t = t.contiguous()
    if t.dtype in (t.new_empty(0).half().dtype, t.new_empty(0).bfloat16().dtype):
        t = t.double()
    return t.numpy().copy()


def assert_same(p, t, bits=True):
    """Same dtype, shape and values (NaN == NaN; with ``bits`` also the sign
    of zeros and of NaNs' neighbours, i.e. exact positions of -0.0)."""
    assert p.dtype._name == str(t.dtype).replace("torch.", ""), (p.dtype, t.dtype)
    assert tuple(p.shape) == tuple(t.shape), (p.shape, t.shape)
    a, b = pnp(p), tnp(t)
    np.testing.assert_array_equal(a, b)
    if bits and a.dtype.kind == "f":
        ok = ~np.isnan(a)
        np.testing.assert_array_equal(np.signbit(a[ok]), np.signbit(b[ok]))


def same_error(fp, ft, match=None):
    """Both calls raise, with the same exception type (and message words)."""
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ep:
        fp()
    assert type(ep.value) is type(et.value), (ep.value, et.value)
    if match is not None:
        assert match in str(ep.value), str(ep.value)


def layouts(dt, rng):
    """(name, numpy base, view function) triples covering layouts."""
    return [
        ("1d", make(dt, (37,), rng), lambda x: x),
        ("2d", make(dt, (3, 41), rng), lambda x: x),
        ("3d_T", make(dt, (4, 5, 6), rng), lambda x: x.transpose(0, 2)),
        ("strided", make(dt, (6, 20), rng), lambda x: x[::2, 1::3]),
        ("expanded", make(dt, (1, 9), rng), lambda x: x.expand(4, 9)),
        ("empty", make(dt, (0, 5), rng), lambda x: x),
    ]


# ---------------------------------------------------------------------------
# sort / argsort / msort
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_matches_torch(torch, dt, descending):
    rng = _rng("sort", dt, descending)
    for name, a, view in layouts(dt, rng):
        xp, xt = view(P(a, dt)), view(T(torch, a, dt))
        for dim in range(-xp.dim(), xp.dim()):
            rp = ptcore.sort(xp, dim=dim, descending=descending, stable=True)
            rt = torch.sort(xt, dim=dim, descending=descending, stable=True)
            assert_same(rp.values, rt.values)
            assert_same(rp.indices, rt.indices)
            # stable=False: torch's unstable order (std::sort's) among equal elements
            ru = ptcore.sort(xp, dim, descending)
            rtu = torch.sort(xt, dim, descending)
            assert_same(ru.values, rtu.values)
            assert_same(ru.indices, rtu.indices)


@pytest.mark.parametrize("dt", DTYPES)
def test_sort_long_rows(torch, dt):
    # radix path with varying digits; full-range integers and continuous floats
    rng = _rng("long", dt)
    for ties in (True, False):
        a = make(dt, (3, 3000), rng, ties=ties)
        for desc in (False, True):
            rp = ptcore.sort(P(a, dt), descending=desc, stable=True)
            rt = torch.sort(T(torch, a, dt), descending=desc, stable=True)
            assert_same(rp.values, rt.values)
            assert_same(rp.indices, rt.indices)


def test_sort_presorted_and_constant(torch):
    for a in (np.arange(500.0), np.arange(500.0)[::-1].copy(), np.zeros(500), np.ones(3)):
        for desc in (False, True):
            rp = ptcore.sort(ptcore.from_numpy(a), descending=desc, stable=True)
            rt = torch.sort(torch.from_numpy(a), descending=desc, stable=True)
            assert_same(rp.values, rt.values)
            assert_same(rp.indices, rt.indices)


def test_sort_numpy_oracle():
    rng = _rng("np-sort")
    a = rng.integers(-3, 4, (5, 200)).astype(np.int32)
    r = ptcore.sort(ptcore.from_numpy(a), dim=1, stable=True)
    np.testing.assert_array_equal(r.indices.numpy(), np.argsort(a, axis=1, kind="stable"))
    np.testing.assert_array_equal(r.values.numpy(), np.sort(a, axis=1))
    f = np.array([2.0, np.nan, -1.0, np.inf, -np.inf, 0.5])
    np.testing.assert_array_equal(ptcore.argsort(ptcore.from_numpy(f), stable=True).numpy(),
                                  np.argsort(f, kind="stable"))


def test_sort_0d_and_methods(torch):
    for dt in ("float32", "int64", "bool"):
        a = np.array(3, dtype="float32" if dt == "float32" else ("bool" if dt == "bool" else dt))
        xp, xt = P(a, dt), T(torch, a, dt)
        rp, rt = ptcore.sort(xp), torch.sort(xt)
        assert_same(rp.values, rt.values)
        assert_same(rp.indices, rt.indices)
        assert_same(ptcore.argsort(xp, dim=0), torch.argsort(xt, dim=0))
        assert_same(ptcore.msort(xp), torch.msort(xt))
    a = make("float32", (4, 6), _rng("meth"))
    xp, xt = P(a, "float32"), T(torch, a, "float32")
    assert_same(xp.sort(0, True).values, xt.sort(0, True).values)
    assert_same(xp.sort(stable=True).indices, xt.sort(stable=True).indices)
    assert_same(xp.argsort(dim=0, stable=True), xt.argsort(dim=0, stable=True))
    assert_same(xp.argsort(descending=True, stable=True), xt.argsort(descending=True, stable=True))
    assert_same(xp.msort(), xt.msort())
    assert_same(ptcore.msort(xp.T), torch.msort(xt.T))
    r = ptcore.sort(xp)
    assert isinstance(r, tuple) and r._fields == ("values", "indices")
    assert type(r).__name__ == "sort"
    assert "return_types.sort(" in repr(r)


def test_sort_out(torch):
    a = make("float64", (3, 7), _rng("sort-out"))
    xp, xt = P(a, "float64"), T(torch, a, "float64")
    vp, ip = ptcore.empty(0, dtype=ptcore.float64), ptcore.empty(0, dtype=ptcore.int64)
    r = ptcore.sort(xp, 1, out=(vp, ip))
    rt = torch.sort(xt, dim=1, stable=True)
    assert r.values is vp and r.indices is ip
    assert_same(vp, rt.values)
    assert_same(ip, rt.indices)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda: ptcore.sort(xp, out=(ptcore.empty(3), ptcore.empty(3, dtype=ptcore.int64))),
                   lambda: torch.sort(xt, out=(torch.empty(3), torch.empty(3, dtype=torch.int64))),
                   "dtype")
        same_error(lambda: ptcore.sort(xp, out=(ptcore.empty(3, dtype=ptcore.float64),
                                                ptcore.empty(3, dtype=ptcore.int32))),
                   lambda: torch.sort(xt, out=(torch.empty(3, dtype=torch.float64),
                                               torch.empty(3, dtype=torch.int32))))
    # in-place-like aliasing: out is the input itself
    y = P(a, "float64").clone()
    ptcore.sort(y, 1, out=(y, ptcore.empty(0, dtype=ptcore.int64)))
    assert_same(y, rt.values)


def test_sort_errors(torch):
    c = np.array([1 + 1j, 2], dtype=np.complex64)
    f = np.arange(4.0)
    same_error(lambda: ptcore.sort(ptcore.from_numpy(c)), lambda: torch.sort(torch.from_numpy(c)),
               "complex")
    same_error(lambda: ptcore.argsort(ptcore.from_numpy(c)),
               lambda: torch.argsort(torch.from_numpy(c)))
    same_error(lambda: ptcore.sort(ptcore.from_numpy(f), dim=1),
               lambda: torch.sort(torch.from_numpy(f), dim=1), "out of range")
    same_error(lambda: ptcore.sort(ptcore.from_numpy(f), dim=1.0),
               lambda: torch.sort(torch.from_numpy(f), dim=1.0))
    same_error(lambda: ptcore.sort(ptcore.tensor(1.0), dim=2),
               lambda: torch.sort(torch.tensor(1.0), dim=2))
    same_error(lambda: ptcore.sort([1.0, 2.0]), lambda: torch.sort([1.0, 2.0]))


def test_sort_requires_grad_input(torch):
    x = ptcore.tensor([3.0, 1.0, 2.0], requires_grad=True)
    r = ptcore.sort(x)
    np.testing.assert_array_equal(r.values.detach().numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(r.indices.numpy(), [1, 2, 0])


# ---------------------------------------------------------------------------
# topk
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ORDERED)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(torch, dt, largest):
    rng = _rng("topk", dt, largest)
    cases = [(make(dt, (4, 300), rng), lambda x: x), (make(dt, (50,), rng), lambda x: x),
             (make(dt, (6, 7, 5), rng), lambda x: x.transpose(0, 1)),
             (make(dt, (1, 40), rng), lambda x: x.expand(3, 40))]
    for a, view in cases:
        xp, xt = view(P(a, dt)), view(T(torch, a, dt))
        for dim in range(xp.dim()):
            n = xp.shape[dim]
            for k in sorted({0, 1, 2, n // 7, n // 2, n - 1, n}):
                rp = ptcore.topk(xp, k, dim, largest=largest)
                rt = torch.topk(xt, k, dim, largest=largest)
                assert_same(rp.values, rt.values, bits=False)
                # torch's indices among ties (its CPU kernel's selection algorithm)
                assert_same(rp.indices, rt.indices)
                ru = ptcore.topk(xp, k, dim, largest=largest, sorted=False)
                rtu = torch.topk(xt, k, dim, largest=largest, sorted=False)
                assert_same(ru.values, rtu.values, bits=False)
                assert_same(ru.indices, rtu.indices)


@pytest.mark.parametrize("case", ["distinct", "few_ties", "tie_at_kth", "evicted_tie", "nan_zero",
                                  "ascending", "descending", "half_zero", "passed_ties",
                                  "late_kth_ties", "mixed_rows"])
def test_topk_small_k_selection_matches_torch(torch, case):
    # small k against long rows takes a one-pass selection when the answer is unique;
    # any tie that could reach the output must fall back to torch's algorithms, and so
    # do rows whose order makes the selection insert often (monotone rows: its budget)
    rng = np.random.default_rng(len(case))
    for n in (10, 64, 100, 257, 1000):
        a = rng.standard_normal((5, n))
        if case == "mixed_rows":
            # rows with ties and rows without in runs and alone: after a row with
            # ties the kernel skips the one-pass selection for the next rows (more
            # after each further one), which must not change any row's answer
            pattern = [1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1] * 4 + [0] * 40
            a = rng.standard_normal((len(pattern), n))
            tied = np.array(pattern, dtype=bool)
            a[tied] = np.round(a[tied] * 2)
        if case in ("ascending", "descending"):
            a = np.sort(a, axis=1)
            a[1:3] = a[1:3] + rng.standard_normal((2, n)) * 0.05   # nearly monotone rows
            if case == "descending":
                a = a[:, ::-1].copy()
        elif case == "half_zero":
            a[a > 0] = 0.0
        elif case == "passed_ties":
            # the first half zeros: keys equal to the buffer's largest are passed over
            # early, then larger distinct keys take every place
            a[:, :n // 2] = 0.0
            a[2] = np.abs(a[2])             # (a row whose zeros stay below the output)
        elif case == "late_kth_ties":
            # copies of the 1st..4th largest at the end: a tie with the final k-th
            # for some k, with a larger output key for the others
            srt_ = -np.sort(-a, axis=1)
            a[:, -4:] = srt_[:, :4]
        elif case == "few_ties":
            a[:, rng.integers(0, n, n // 4)] = a[:, rng.integers(0, n, n // 4)]
        elif case == "tie_at_kth":
            a = np.round(a * 4)
        elif case == "evicted_tie":
            # two equal large keys early, a larger one later evicts one of them
            a[:, 0] = a[:, 1] = 10.0
            a[:, -1] = 11.0
        elif case == "nan_zero":
            a[rng.random(a.shape) < 0.05] = np.nan
            a[rng.random(a.shape) < 0.05] = 0.0
            a[rng.random(a.shape) < 0.05] = -0.0
        for dt in (np.float32, np.float64):
            x = a.astype(dt)
            for k in (1, 2, 3, 5, n // 10, min(n, 32)):
                for largest in (True, False):
                    for srt in (True, False):
                        rp = ptcore.topk(ptcore.from_numpy(x), k, 1, largest, srt)
                        rt = torch.topk(torch.from_numpy(x), k, 1, largest, srt)
                        np.testing.assert_array_equal(rp.indices.numpy(), rt.indices.numpy())
                        np.testing.assert_array_equal(rp.values.numpy(), rt.values.numpy())


def test_topk_0d_empty_methods_out(torch):
    for k in (0, 1):
        rp, rt = ptcore.topk(ptcore.tensor(3.0), k), torch.topk(torch.tensor(3.0), k)
        assert_same(rp.values, rt.values)
        assert_same(rp.indices, rt.indices)
    for shape, k, dim in (((0, 3), 2, -1), ((0, 3), 0, 0), ((3, 0), 0, -1)):
        rp = ptcore.topk(ptcore.empty(*shape), k, dim)
        rt = torch.topk(torch.empty(*shape), k, dim)
        assert_same(rp.values, rt.values)
        assert_same(rp.indices, rt.indices)
    a = make("int32", (5, 9), _rng("topk-m"))
    xp, xt = P(a, "int32"), T(torch, a, "int32")
    assert_same(xp.topk(3, 0).values, xt.topk(3, 0).values)
    vo, io = ptcore.empty(0, dtype=ptcore.int32), ptcore.empty(0, dtype=ptcore.int64)
    r = ptcore.topk(xp, 2, out=(vo, io))
    assert r.values is vo
    assert_same(vo, torch.topk(xt, 2).values)


def test_topk_errors(torch):
    f = np.arange(4.0)
    same_error(lambda: ptcore.topk(ptcore.from_numpy(f), 5), lambda: torch.topk(torch.from_numpy(f), 5),
               "k out of range")
    same_error(lambda: ptcore.topk(ptcore.from_numpy(f), -1), lambda: torch.topk(torch.from_numpy(f), -1))
    same_error(lambda: ptcore.topk(ptcore.from_numpy(f), 1.5), lambda: torch.topk(torch.from_numpy(f), 1.5))
    same_error(lambda: ptcore.topk(ptcore.from_numpy(f), True), lambda: torch.topk(torch.from_numpy(f), True))
    same_error(lambda: ptcore.topk(ptcore.from_numpy(f), 1, dim=1),
               lambda: torch.topk(torch.from_numpy(f), 1, dim=1))
    same_error(lambda: ptcore.topk(ptcore.tensor([True, False]), 1),
               lambda: torch.topk(torch.tensor([True, False]), 1), "bool")
    c = np.array([1 + 1j], dtype=np.complex128)
    same_error(lambda: ptcore.topk(ptcore.from_numpy(c), 1), lambda: torch.topk(torch.from_numpy(c), 1),
               "complex")
    same_error(lambda: ptcore.topk(ptcore.tensor(1.0), 2), lambda: torch.topk(torch.tensor(1.0), 2))


@pytest.mark.parametrize("name", ["largest", "sorted"])
@pytest.mark.parametrize("flag", [0, 1, 2, 1.0, None, "a", np.True_, np.False_, np.int64(1)],
                         ids=repr)
def test_topk_flags_take_python_bool_only(torch, name, flag):
    # torch: TypeError "argument 'largest' must be bool, not int" (numpy.bool, ...); ptcore's
    # fast path declines such flags and its general path raises the same message (keyword form)
    f = np.arange(4.0)
    for lib in (torch, ptcore):
        with pytest.raises(TypeError) as e:
            lib.topk(lib.from_numpy(f), 2, **{name: flag})
        with pytest.raises(TypeError) as em:
            lib.from_numpy(f).topk(2, **{name: flag})
        if lib is torch:
            want = str(e.value)
        else:
            assert str(e.value) == want and str(em.value) == want
    with pytest.raises(TypeError):
        ptcore.topk(ptcore.from_numpy(f), 2, 0, True, ptcore.tensor(True))
    for flags in ((True, False), (False, True)):
        assert ptcore.topk(ptcore.from_numpy(f), 2, 0, *flags).values.tolist() == \
            torch.topk(torch.from_numpy(f), 2, 0, *flags).values.tolist()


# ---------------------------------------------------------------------------
# kthvalue
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ORDERED)
def test_kthvalue_matches_torch(torch, dt):
    rng = _rng("kth", dt)
    cases = [(make(dt, (5, 60), rng), lambda x: x), (make(dt, (33,), rng), lambda x: x),
             (make(dt, (4, 6, 5), rng), lambda x: x.transpose(1, 2)),
             (make(dt, (7, 1), rng), lambda x: x.expand(7, 6))]
    for a, view in cases:
        xp, xt = view(P(a, dt)), view(T(torch, a, dt))
        for dim in range(-xp.dim(), xp.dim()):
            n = xp.shape[dim]
            for k in sorted({1, 2, n // 2 + 1, n}):
                for keepdim in (False, True):
                    rp = ptcore.kthvalue(xp, k, dim, keepdim)
                    rt = torch.kthvalue(xt, k, dim, keepdim)
                    assert_same(rp.values, rt.values)
                    assert_same(rp.indices, rt.indices)


def test_kthvalue_edge_cases(torch):
    rp, rt = ptcore.kthvalue(ptcore.tensor(3.0), 1), torch.kthvalue(torch.tensor(3.0), 1)
    assert_same(rp.values, rt.values)
    assert_same(rp.indices, rt.indices)
    for shape, dim in (((0, 3), -1), ((3, 0), 0)):
        rp = ptcore.kthvalue(ptcore.empty(*shape), 1, dim)
        rt = torch.kthvalue(torch.empty(*shape), 1, dim)
        assert_same(rp.values, rt.values)
        assert_same(rp.indices, rt.indices)
    a = make("float32", (4, 5), _rng("kth-m"))
    xp, xt = P(a, "float32"), T(torch, a, "float32")
    assert_same(xp.kthvalue(2, 0, True).indices, xt.kthvalue(2, 0, True).indices)
    vo, io = ptcore.empty(0), ptcore.empty(0, dtype=ptcore.int64)
    ptcore.kthvalue(xp, 3, out=(vo, io))
    assert_same(io, torch.kthvalue(xt, 3).indices)
    f = np.arange(4.0)
    same_error(lambda: ptcore.kthvalue(ptcore.from_numpy(f), 5),
               lambda: torch.kthvalue(torch.from_numpy(f), 5), "k out of range")
    same_error(lambda: ptcore.kthvalue(ptcore.from_numpy(f), 0),
               lambda: torch.kthvalue(torch.from_numpy(f), 0))
    same_error(lambda: ptcore.kthvalue(ptcore.tensor(1.0), 2), lambda: torch.kthvalue(torch.tensor(1.0), 2))
    same_error(lambda: ptcore.kthvalue(ptcore.tensor([True]), 1),
               lambda: torch.kthvalue(torch.tensor([True]), 1), "kthvalue_cpu")
    same_error(lambda: ptcore.kthvalue(ptcore.from_numpy(f), 1, 2),
               lambda: torch.kthvalue(torch.from_numpy(f), 1, 2))
    same_error(lambda: ptcore.kthvalue(ptcore.empty(0), 1), lambda: torch.kthvalue(torch.empty(0), 1))


# ---------------------------------------------------------------------------
# parallel paths give the serial results
# ---------------------------------------------------------------------------
def test_parallel_rows_equal_serial(parallel):
    rng = _rng("par")
    a = make("float32", (64, 300), rng)
    b = np.sort(make("float64", (64, 50), rng), axis=1)
    v = make("float64", (64, 70), rng)
    h = make("float64", (40000,), rng)
    x = ptcore.from_numpy(a)

    def run():
        return [ptcore.sort(x, dim=1, stable=True).indices.numpy(),
                ptcore.sort(x, dim=0, descending=True).indices.numpy(),
                ptcore.topk(x, 7).indices.numpy(),
                ptcore.kthvalue(x, 100).indices.numpy(),
                ptcore.searchsorted(ptcore.from_numpy(b), ptcore.from_numpy(v)).numpy(),
                ptcore.histc(ptcore.from_numpy(h), 13, -2, 2).numpy(),
                ptcore.isin(ptcore.from_numpy(h), ptcore.from_numpy(v)).numpy()]

    par = run()
    _parallel._set_parallel_grain(1 << 40)
    ser = run()
    for p, s in zip(par, ser):
        np.testing.assert_array_equal(p, s)


# ---------------------------------------------------------------------------
# unique / unique_consecutive
# ---------------------------------------------------------------------------
def _check_unique(xp, rp, rt, inv):
    """ptcore's unique result against torch's.  Values numerically (the
    sign of a {-0.0, 0.0} group's representative follows PyTorch's unstable
    sort); every NaN is its own group, but which NaN gets which group also
    follows that sort, so NaN elements only need distinct NaN groups."""
    if not isinstance(rt, tuple):
        rp, rt = (rp,), (rt,)
    assert len(rp) == len(rt)
    assert_same(rp[0], rt[0], bits=False)
    if len(rp) > 2 or (len(rp) == 2 and not inv):
        assert_same(rp[-1], rt[-1])
    if inv:
        ip, it = pnp(rp[1]), tnp(rt[1])
        assert rp[1].dtype is ptcore.int64 and tuple(rp[1].shape) == tuple(rt[1].shape)
        x = pnp(xp).astype(np.float64)
        nan = np.isnan(x)
        np.testing.assert_array_equal(ip[~nan], it[~nan])
        assert np.isnan(pnp(rp[0])[ip[nan]]).all()
        assert sorted(ip[nan].tolist()) == sorted(it[nan].tolist())


@pytest.mark.parametrize("dt", DTYPES)
def test_unique_matches_torch(torch, dt):
    rng = _rng("unique", dt)
    for a, view in [(make(dt, (200,), rng), lambda x: x),
                    (make(dt, (6, 7), rng), lambda x: x.T),
                    (make(dt, (0,), rng), lambda x: x),
                    (make(dt, (3,), rng)[0], lambda x: x)]:
        xp, xt = view(P(a, dt)), view(T(torch, a, dt))
        for srt in (True, False):
            for inv in (False, True):
                for cnt in (False, True):
                    rp = ptcore.unique(xp, sorted=srt, return_inverse=inv, return_counts=cnt)
                    rt = torch.unique(xt, sorted=srt, return_inverse=inv, return_counts=cnt)
                    _check_unique(xp, rp, rt, inv)
        for inv in (False, True):
            for cnt in (False, True):
                rp = ptcore.unique_consecutive(xp, return_inverse=inv, return_counts=cnt)
                rt = torch.unique_consecutive(xt, return_inverse=inv, return_counts=cnt)
                if not isinstance(rt, tuple):
                    rp, rt = (rp,), (rt,)
                for p, t in zip(rp, rt):
                    assert_same(p, t)


def test_unique_stable_representative():
    # the first element of a group in stable order represents it
    x = ptcore.tensor([3.0, -0.0, 0.0, 1.0])
    assert math.copysign(1.0, ptcore.unique(x)[0].item()) == -1.0
    x = ptcore.tensor([0.0, -0.0])
    assert math.copysign(1.0, ptcore.unique(x)[0].item()) == 1.0


@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float64"])
def test_unique_dim_matches_torch(torch, dt):
    rng = _rng("unique-dim", dt)
    a = make(dt, (12, 3, 4), rng)
    if dt in FLOATS:   # PyTorch's slice order is undefined with NaN; -0.0 ties pick either
        a = np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-2.0)
        a[a == 0] = 0
        a = np.abs(a)
    a[3] = a[0]
    a[:, 1] = a[:, 0]
    a[..., 2] = a[..., 1]
    xp, xt = P(a, dt), T(torch, a, dt)
    for dim in (0, 1, 2, -1):
        for fn in ("unique", "unique_consecutive"):
            rp = getattr(ptcore, fn)(xp, return_inverse=True, return_counts=True, dim=dim)
            rt = getattr(torch, fn)(xt, return_inverse=True, return_counts=True, dim=dim)
            for p, t in zip(rp, rt):
                assert_same(p, t)
            assert tuple(rp[0].stride()) == tuple(rt[0].stride())
        assert_same(ptcore.unique(xp.transpose(0, 2), dim=1),
                    torch.unique(xt.transpose(0, 2), dim=1))
        rp = xp.unique(dim=dim, return_counts=True)
        rt = xt.unique(dim=dim, return_counts=True)
        for p, t in zip(rp, rt):
            assert_same(p, t)


def test_unique_dim_zero_size_and_errors(torch):
    for shape, dim in (((0, 3), 0),):
        for fn in ("unique", "unique_consecutive"):
            rp = getattr(ptcore, fn)(ptcore.empty(*shape), dim=dim, return_inverse=True,
                                     return_counts=True)
            rt = getattr(torch, fn)(torch.empty(*shape), dim=dim, return_inverse=True,
                                    return_counts=True)
            for p, t in zip(rp, rt):
                assert_same(p, t)
    for shape, dim in (((0, 3), 1), ((3, 0), 0), ((0, 0), 0)):
        for fn in ("unique", "unique_consecutive"):
            same_error(lambda: getattr(ptcore, fn)(ptcore.empty(*shape), dim=dim),
                       lambda: getattr(torch, fn)(torch.empty(*shape), dim=dim), "unique")
    same_error(lambda: ptcore.unique(ptcore.tensor(3.0), dim=0),
               lambda: torch.unique(torch.tensor(3.0), dim=0), "no dimensions")
    same_error(lambda: ptcore.unique(ptcore.tensor([1, 2]), dim=2),
               lambda: torch.unique(torch.tensor([1, 2]), dim=2))
    same_error(lambda: ptcore.unique(ptcore.tensor([1, 2]), dim=1.0),
               lambda: torch.unique(torch.tensor([1, 2]), dim=1.0))
    c = np.array([1 + 1j], dtype=np.complex64)
    for kw in ({}, {"dim": 0}):
        same_error(lambda: ptcore.unique(ptcore.from_numpy(c), **kw),
                   lambda: torch.unique(torch.from_numpy(c), **kw), "not implemented")
    same_error(lambda: ptcore.unique_consecutive(ptcore.from_numpy(c)),
               lambda: torch.unique_consecutive(torch.from_numpy(c)))


def test_unique_0d_and_numpy():
    r = ptcore.unique(ptcore.tensor(3.0), return_inverse=True, return_counts=True)
    assert tuple(r[0].shape) == (1,) and tuple(r[1].shape) == () and tuple(r[2].shape) == (1,)
    a = _rng("u-np").integers(-20, 20, (5, 40))
    v, i, c = ptcore.unique(ptcore.from_numpy(a), return_inverse=True, return_counts=True)
    ev, ei, ec = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), ev)
    np.testing.assert_array_equal(i.numpy(), ei.reshape(a.shape))
    np.testing.assert_array_equal(c.numpy(), ec)
    rv = ptcore.unique(ptcore.from_numpy(a), dim=1)
    np.testing.assert_array_equal(rv.numpy(), np.unique(a, axis=1))


# ---------------------------------------------------------------------------
# searchsorted / bucketize
# ---------------------------------------------------------------------------
def _sorted_bd(dt, shape, rng):
    a = make(dt, shape, rng)
    if dt == "bool":
        return np.sort(a, axis=-1)
    return np.sort(a, axis=-1)       # NaN last, as torch.sort


@pytest.mark.parametrize("dt", ORDERED)
def test_searchsorted_matches_torch(torch, dt):
    rng = _rng("ss", dt)
    bd1 = _sorted_bd(dt, (25,), rng)
    bdn = _sorted_bd(dt, (3, 4, 17), rng)
    vals = make(dt, (3, 4, 9), rng)
    for bd in (bd1, bdn):
        bp, bt = P(bd, dt), T(torch, bd, dt)
        vp, vt = P(vals, dt), T(torch, vals, dt)
        for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left"},
                   {"out_int32": True}, {"right": True, "side": "right", "out_int32": True}):
            assert_same(ptcore.searchsorted(bp, vp, **kw), torch.searchsorted(bt, vt, **kw))
            # non-contiguous values
            assert_same(ptcore.searchsorted(bp, vp[:, :, ::2], **kw),
                        torch.searchsorted(bt, vt[:, :, ::2], **kw))
    # sorter: unsorted boundaries + their argsort
    raw = make(dt, (3, 4, 17), rng)
    rp, rt = P(raw, dt), T(torch, raw, dt)
    sp = ptcore.argsort(rp, stable=True)
    st = torch.argsort(rt, stable=True)
    for right in (False, True):
        assert_same(ptcore.searchsorted(rp, P(vals, dt), sorter=sp, right=right),
                    torch.searchsorted(rt, T(torch, vals, dt), sorter=st, right=right))
    # 1-D boundaries with N-D and 0-d values, bucketize
    bp, bt = P(bd1, dt), T(torch, bd1, dt)
    assert_same(ptcore.searchsorted(bp, P(vals[0, 0, 0], dt)), torch.searchsorted(bt, T(torch, vals[0, 0, 0], dt)))
    assert_same(ptcore.bucketize(P(vals, dt), bp), torch.bucketize(T(torch, vals, dt), bt))
    assert_same(ptcore.bucketize(P(vals, dt).transpose(0, 2), bp, right=True, out_int32=True),
                torch.bucketize(T(torch, vals, dt).transpose(0, 2), bt, right=True, out_int32=True))


def test_searchsorted_nan_boundaries_and_promotion(torch):
    bd = np.array([1.0, 2.0, np.nan])
    v = np.array([np.nan, 1.5, 5.0, -np.inf])
    for right in (False, True):
        assert_same(ptcore.searchsorted(ptcore.from_numpy(bd), ptcore.from_numpy(v), right=right),
                    torch.searchsorted(torch.from_numpy(bd), torch.from_numpy(v), right=right))
    u8 = np.array([1, 2, 3], dtype=np.uint8)
    cases = [(u8, np.array([-1, 300])), (u8, -1), (u8, 2.5), (u8, 300), (u8, True),
             (np.array([1, 2, 3], dtype=np.int32), np.array(2.5, dtype=np.float32)),
             (np.array([1.0, 2.0, 3.0]), np.array([1, 2])),
             (np.array([1, 2], dtype=np.int16), np.array([True, False])),
             (np.array([True, False]), np.array([1, 2]))]
    for bd, v in cases:
        if isinstance(v, np.ndarray):
            rp = ptcore.searchsorted(ptcore.from_numpy(bd), ptcore.from_numpy(v))
            rt = torch.searchsorted(torch.from_numpy(bd), torch.from_numpy(v))
        else:
            rp = ptcore.searchsorted(ptcore.from_numpy(bd), v)
            rt = torch.searchsorted(torch.from_numpy(bd), v)
        assert_same(rp, rt)
    assert_same(ptcore.bucketize(2.5, ptcore.tensor([1, 2, 3])), torch.bucketize(2.5, torch.tensor([1, 2, 3])))
    h = np.array([1.0, 2.0], dtype=np.float16)
    assert_same(ptcore.searchsorted(ptcore.from_numpy(h), ptcore.tensor([1.5]).to(ptcore.bfloat16)),
                torch.searchsorted(torch.from_numpy(h), torch.tensor([1.5]).bfloat16()))


def test_searchsorted_empty_and_out(torch):
    cases = [((0,), (1,)), ((2, 0), (2, 1)), ((0, 3), (0, 1)), ((2,), (0, 5))]
    for bs, vs in cases:
        assert_same(ptcore.searchsorted(ptcore.empty(*bs), ptcore.empty(*vs)),
                    torch.searchsorted(torch.empty(*bs), torch.empty(*vs)))
    bp, bt = ptcore.tensor([[1.0, 2.0]]), torch.tensor([[1.0, 2.0]])
    vp, vt = ptcore.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[1.0, 2.0, 3.0]])
    o = ptcore.empty(0, dtype=ptcore.int32)
    r = ptcore.searchsorted(bp, vp, out_int32=True, out=o)
    assert r is o
    assert_same(o, torch.searchsorted(bt, vt, out_int32=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = ptcore.empty(2, 3, dtype=ptcore.int64)
        ptcore.searchsorted(bp, vp, out=o)
        assert_same(o, torch.searchsorted(bt, vt))


def test_searchsorted_errors(torch):
    b1p, b1t = ptcore.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    b2p, b2t = ptcore.tensor([[1, 2, 3], [2, 3, 4]]), torch.tensor([[1, 2, 3], [2, 3, 4]])
    pairs = [
        (lambda: ptcore.searchsorted(b2p, 2), lambda: torch.searchsorted(b2t, 2), "scalar"),
        (lambda: ptcore.searchsorted(b2p, ptcore.tensor([1, 2])),
         lambda: torch.searchsorted(b2t, torch.tensor([1, 2])), "first N-1"),
        (lambda: ptcore.searchsorted(b2p, ptcore.tensor([[1], [2], [3]])),
         lambda: torch.searchsorted(b2t, torch.tensor([[1], [2], [3]])), "first N-1"),
        (lambda: ptcore.searchsorted(ptcore.tensor(3), ptcore.tensor([1])),
         lambda: torch.searchsorted(torch.tensor(3), torch.tensor([1])), "dimension"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), side="foo"),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), side="foo"), "side"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), side="left", right=True),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), side="left", right=True), "opposites"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), sorter=ptcore.tensor([2, 1, 5])),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), sorter=torch.tensor([2, 1, 5])),
         "out of range"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), sorter=ptcore.tensor([2, 1, -1])),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), sorter=torch.tensor([2, 1, -1])),
         "out of range"),
        (lambda: ptcore.searchsorted(b1p, ptcore.empty(0), sorter=ptcore.tensor([2, 1, 5])),
         lambda: torch.searchsorted(b1t, torch.empty(0), sorter=torch.tensor([2, 1, 5])),
         "out of range"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), sorter=ptcore.tensor([2, 1, 0], dtype=ptcore.int32)),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), sorter=torch.tensor([2, 1, 0], dtype=torch.int32)),
         "long"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), sorter=ptcore.tensor([1, 0])),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), sorter=torch.tensor([1, 0])), "same size"),
        (lambda: ptcore.searchsorted(b1p, ptcore.tensor([1]), out=ptcore.empty(1, dtype=ptcore.int32)),
         lambda: torch.searchsorted(b1t, torch.tensor([1]), out=torch.empty(1, dtype=torch.int32)),
         "dtype"),
        (lambda: ptcore.searchsorted(ptcore.tensor([True]), ptcore.tensor(True)),
         lambda: torch.searchsorted(torch.tensor([True]), torch.tensor(True)), "Bool"),
        (lambda: ptcore.searchsorted(ptcore.from_numpy(np.array([1j])), ptcore.tensor(1.0)),
         lambda: torch.searchsorted(torch.from_numpy(np.array([1j])), torch.tensor(1.0)), "Complex"),
        (lambda: ptcore.bucketize(ptcore.tensor([1]), ptcore.tensor([[1, 2]])),
         lambda: torch.bucketize(torch.tensor([1]), torch.tensor([[1, 2]])), "1 dimension"),
        (lambda: ptcore.bucketize(ptcore.tensor([1]), ptcore.tensor(1)),
         lambda: torch.bucketize(torch.tensor([1]), torch.tensor(1)), "1 dimension"),
    ]
    for fp, ft, m in pairs:
        same_error(fp, ft, m)


# ---------------------------------------------------------------------------
# histc / histogram
# ---------------------------------------------------------------------------
@pytest.fixture
def torch_one_thread(torch):
    # torch's bfloat16 histc counts per thread in bfloat16 (a bin saturates at
    # 256 per thread), so its result depends on its thread count: compare at 1
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


@pytest.mark.parametrize("dt", FLOATS)
def test_histc_matches_torch(torch_one_thread, dt):
    torch = torch_one_thread
    rng = _rng("histc", dt)
    npdt = "float32" if dt == "bfloat16" else dt
    a = (rng.integers(-40, 41, (9, 30)) / 8).astype(npdt)     # many values on bin edges
    a.flat[::17] = np.nan
    b = (rng.standard_normal(500) * 3).astype(npdt)
    for data, view in ((a, lambda x: x), (a, lambda x: x.T[::2]), (b, lambda x: x)):
        xp, xt = view(P(data, dt)), view(T(torch, data, dt))
        for bins, lo, hi in ((7, -3.0, 3.0), (100, -5, 5), (1, 0, 1), (13, -1.1, 2.3)):
            assert_same(ptcore.histc(xp, bins, lo, hi), torch.histc(xt, bins, lo, hi))
    clean = np.nan_to_num(b, nan=0.0)
    assert_same(ptcore.histc(P(clean, dt), 4, 2, 2), torch.histc(T(torch, clean, dt), 4, 2, 2))
    for bins in (3, 64):
        assert_same(ptcore.histc(P(clean, dt), bins), torch.histc(T(torch, clean, dt), bins))
        assert_same(P(clean, dt).histc(bins=bins), T(torch, clean, dt).histc(bins=bins))
    for data in (np.array([1.0, 1.0, 1.0]), np.array([], dtype=np.float64), np.array(2.0)):
        data = data.astype(npdt)
        assert_same(ptcore.histc(P(data, dt), 4), torch.histc(T(torch, data, dt), 4))


def test_histc_errors_and_out(torch):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    xp, xt = ptcore.from_numpy(x), torch.from_numpy(x)
    n = np.array([1.0, 2.0, np.nan], dtype=np.float32)
    pairs = [
        (lambda: ptcore.histc(xp, 0), lambda: torch.histc(xt, 0), "bins"),
        (lambda: ptcore.histc(xp, -1), lambda: torch.histc(xt, -1), "bins"),
        (lambda: ptcore.histc(xp, 3, 3, 1), lambda: torch.histc(xt, 3, 3, 1), "larger"),
        (lambda: ptcore.histc(xp, 3, 0, math.inf), lambda: torch.histc(xt, 3, 0, math.inf), "finite"),
        (lambda: ptcore.histc(xp, 3, math.nan, 1), lambda: torch.histc(xt, 3, math.nan, 1), "finite"),
        (lambda: ptcore.histc(ptcore.from_numpy(n), 3), lambda: torch.histc(torch.from_numpy(n), 3),
         "finite"),
        (lambda: ptcore.histc(xp, 3.5), lambda: torch.histc(xt, 3.5), None),
        (lambda: ptcore.histc(ptcore.tensor([1, 2]), 3), lambda: torch.histc(torch.tensor([1, 2]), 3),
         "not implemented"),
        (lambda: ptcore.histc(ptcore.tensor([True]), 3), lambda: torch.histc(torch.tensor([True]), 3),
         "not implemented"),
        (lambda: ptcore.histc(xp, 2, out=ptcore.empty(2, dtype=ptcore.float64)),
         lambda: torch.histc(xt, 2, out=torch.empty(2, dtype=torch.float64)), "dtype"),
    ]
    for fp, ft, m in pairs:
        same_error(fp, ft, m)
    o = ptcore.empty(0)
    assert ptcore.histc(xp, 4, min=True, max=3, out=o) is o
    assert_same(o, torch.histc(xt, 4, min=True, max=3))
    assert_same(ptcore.histc(xp, 4, min=ptcore.tensor(0.0), max=3),
                torch.histc(xt, 4, min=torch.tensor(0.0), max=3))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_histogram_matches_torch(torch, dt):
    rng = _rng("histogram", dt)
    a = (rng.integers(-40, 41, (50,)) / 8).astype(dt)
    w = rng.random(50).astype(dt)
    xp, xt = P(a, dt), T(torch, a, dt)
    for kw in ({}, {"range": (-2.0, 3.0)}, {"density": True}):
        # PyTorch's linspace edges depend on its SIMD width in the last ulp
        rp, rt = ptcore.histogram(xp, 7, **kw), torch.histogram(xt, 7, **kw)
        np.testing.assert_allclose(rp.hist.numpy(), rt.hist.numpy(), rtol=1e-6)
        np.testing.assert_allclose(rp.bin_edges.numpy(), rt.bin_edges.numpy(), rtol=1e-6)
    rp = ptcore.histogram(xp, 5, weight=P(w, dt))
    rt = torch.histogram(xt, 5, weight=T(torch, w, dt))
    np.testing.assert_allclose(rp.hist.numpy(), rt.hist.numpy(), rtol=1e-6)
    edges = np.array([-5.0, -1.0, 0.0, 0.5, 5.0], dtype=dt)
    rp = ptcore.histogram(xp, P(edges, dt))
    rt = torch.histogram(xt, T(torch, edges, dt))
    assert_same(rp.hist, rt.hist)
    assert_same(rp.bin_edges, rt.bin_edges)
    assert_same(xp.histogram(3).hist, xt.histogram(3).hist)


def test_histogram_default_bins_and_empty_range(torch):
    # torch.histogram's bins default to 100; an empty input (no range) spans [0, 1]
    a = np.array([0.5, 1.0, 3.0, 3.0], dtype="float32")
    xp, xt = P(a, "float32"), T(torch, a, "float32")
    for rp, rt in ((ptcore.histogram(xp), torch.histogram(xt)),
                   (xp.histogram(density=True), xt.histogram(density=True))):
        np.testing.assert_allclose(rp.hist.numpy(), rt.hist.numpy(), rtol=1e-6)
        np.testing.assert_allclose(rp.bin_edges.numpy(), rt.bin_edges.numpy(), rtol=1e-6)
    e = np.zeros(0, dtype="float32")
    rp, rt = ptcore.histogram(P(e, "float32"), 4), torch.histogram(T(torch, e, "float32"), 4)
    assert_same(rp.hist, rt.hist)
    assert_same(rp.bin_edges, rt.bin_edges)
    e2 = np.zeros((0, 2), dtype="float32")
    rp = ptcore.histogramdd(P(e2, "float32"), [2, 3])
    rt = torch.histogramdd(T(torch, e2, "float32"), [2, 3])
    assert_same(rp.hist, rt.hist)
    for ep, et in zip(rp.bin_edges, rt.bin_edges):
        np.testing.assert_allclose(ep.numpy(), et.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------
# bincount
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", INTS)
def test_bincount_matches_torch(torch, dt):
    rng = _rng("bincount", dt)
    a = rng.integers(0, 30, 400).astype(dt)
    xp, xt = P(a, dt), T(torch, a, dt)
    for minlength in (0, 5, 50):
        assert_same(ptcore.bincount(xp, minlength=minlength), torch.bincount(xt, minlength=minlength))
        assert_same(xp[::3].bincount(minlength=minlength), xt[::3].bincount(minlength=minlength))
    for wdt in ("float32", "float64", "int32", "float16", "bool"):
        w = (rng.random(400) * 10).astype(wdt) if wdt != "bool" else rng.random(400) < 0.5
        assert_same(ptcore.bincount(xp, P(w, wdt)), torch.bincount(xt, T(torch, w, wdt)))
    wb = (rng.random(400) * 10).astype("float32")
    assert_same(ptcore.bincount(xp, P(wb, "bfloat16")), torch.bincount(xt, T(torch, wb, "bfloat16")))


def test_bincount_edge_cases(torch):
    e = np.array([], dtype=np.int64)
    assert_same(ptcore.bincount(ptcore.from_numpy(e)), torch.bincount(torch.from_numpy(e)))
    assert_same(ptcore.bincount(ptcore.from_numpy(e), minlength=3),
                torch.bincount(torch.from_numpy(e), minlength=3))
    assert_same(ptcore.bincount(ptcore.from_numpy(e), ptcore.empty(0), minlength=3),
                torch.bincount(torch.from_numpy(e), torch.empty(0), minlength=3))
    np.testing.assert_array_equal(ptcore.bincount(ptcore.tensor([3, 1, 3])).numpy(),
                                  np.bincount([3, 1, 3]))
    pairs = [
        (lambda: ptcore.bincount(ptcore.tensor([1, -2])), lambda: torch.bincount(torch.tensor([1, -2])),
         "non-negative"),
        (lambda: ptcore.bincount(ptcore.tensor([[1, 2]])), lambda: torch.bincount(torch.tensor([[1, 2]])),
         "1-d"),
        (lambda: ptcore.bincount(ptcore.tensor(1)), lambda: torch.bincount(torch.tensor(1)), "1-d"),
        (lambda: ptcore.bincount(ptcore.empty(0, 2, dtype=ptcore.int64)),
         lambda: torch.bincount(torch.empty(0, 2, dtype=torch.int64)), "1-d"),
        (lambda: ptcore.bincount(ptcore.tensor([1.0])), lambda: torch.bincount(torch.tensor([1.0])),
         "bincount_cpu"),
        (lambda: ptcore.bincount(ptcore.tensor([True])), lambda: torch.bincount(torch.tensor([True])),
         "bincount_cpu"),
        (lambda: ptcore.bincount(ptcore.tensor([1]), minlength=-1),
         lambda: torch.bincount(torch.tensor([1]), minlength=-1), "minlength"),
        (lambda: ptcore.bincount(ptcore.tensor([1]), minlength=2.5),
         lambda: torch.bincount(torch.tensor([1]), minlength=2.5), None),
        (lambda: ptcore.bincount(ptcore.tensor([1]), ptcore.tensor([1.0, 2.0])),
         lambda: torch.bincount(torch.tensor([1]), torch.tensor([1.0, 2.0])), "weights"),
        (lambda: ptcore.bincount(ptcore.tensor([1, 2]), ptcore.tensor([[1.0, 2.0]])),
         lambda: torch.bincount(torch.tensor([1, 2]), torch.tensor([[1.0, 2.0]])), "weights"),
    ]
    for fp, ft, m in pairs:
        same_error(fp, ft, m)


# ---------------------------------------------------------------------------
# isin
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ORDERED)
def test_isin_matches_torch(torch, dt):
    rng = _rng("isin", dt)
    el = make(dt, (6, 25), rng)
    for m in (0, 3, 40):
        te = make(dt, (m,), rng)
        ep, et = P(el, dt), T(torch, el, dt)
        tp, tt = P(te, dt), T(torch, te, dt)
        for invert in (False, True):
            assert_same(ptcore.isin(ep, tp, invert=invert), torch.isin(et, tt, invert=invert))
            assert_same(ptcore.isin(ep.T, tp, invert=invert), torch.isin(et.T, tt, invert=invert))
    assert_same(ptcore.isin(P(el, dt), P(el[0, :2], dt)), torch.isin(T(torch, el, dt), T(torch, el[0, :2], dt)))


def test_isin_scalars_promotion_errors(torch):
    cases = [
        (np.array([1, 2, 3]), np.array([1.0, 2.5])), (np.array([1, 2, 3]), 2), (2, np.array([1, 2, 3])),
        (2.5, np.array([1, 2, 3])), (np.array([-0.0, 0.0, np.nan]), np.array([0.0, np.nan])),
        (np.array([300]), np.array([44], dtype=np.uint8)),
        (np.array([1.5], dtype=np.float16), np.array([1.5], dtype=np.float32)),
        (np.array([], dtype=np.float32), np.array([1.0])), (np.array([1.0]), np.array([])),
    ]
    for e, t in cases:
        fp = [ptcore.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (e, t)]
        ft = [torch.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (e, t)]
        assert_same(ptcore.isin(*fp), torch.isin(*ft))
        assert_same(ptcore.isin(*fp, invert=True), torch.isin(*ft, invert=True))
    assert_same(ptcore.isin(ptcore.tensor([1, 2]), ptcore.tensor([1, 2]), assume_unique=True),
                torch.isin(torch.tensor([1, 2]), torch.tensor([1, 2]), assume_unique=True))
    o = ptcore.empty(0, dtype=ptcore.bool)
    assert ptcore.isin(ptcore.tensor([1, 2]), ptcore.tensor([2]), out=o) is o
    np.testing.assert_array_equal(o.numpy(), [False, True])
    pairs = [
        (lambda: ptcore.isin(ptcore.tensor([True]), ptcore.tensor([1])),
         lambda: torch.isin(torch.tensor([True]), torch.tensor([1])), "Bool"),
        (lambda: ptcore.isin(ptcore.tensor([1]), ptcore.tensor([True])),
         lambda: torch.isin(torch.tensor([1]), torch.tensor([True])), "Bool"),
        (lambda: ptcore.isin(ptcore.tensor([1]), 1 + 1j),
         lambda: torch.isin(torch.tensor([1]), 1 + 1j), "Complex"),
        (lambda: ptcore.isin(2, 3), lambda: torch.isin(2, 3), None),
    ]
    for fp, ft, m in pairs:
        same_error(fp, ft, m)


def test_isin_numpy_oracle():
    rng = _rng("isin-np")
    a = rng.integers(-1000, 1000, (30, 30))
    b = rng.integers(-1000, 1000, 300)
    np.testing.assert_array_equal(ptcore.isin(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy(),
                                  np.isin(a, b))


# ---------------------------------------------------------------------------
# namespace and methods
# ---------------------------------------------------------------------------
def test_public_names_and_methods():
    from ptcore._ops import sorting as _sorting
    for name in _sorting.__all__:
        assert callable(getattr(ptcore, name))
    for name in ("sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
                 "bincount", "histc", "histogram"):
        assert callable(getattr(ptcore.Tensor, name))
    rt = ptcore.return_types
    for name in ("sort", "topk", "kthvalue", "histogram"):
        assert getattr(rt, name).__module__ == "ptcore.return_types"
    x = ptcore.tensor([2, 0, 1])
    assert x.unique_consecutive().tolist() == [2, 0, 1]
    assert x.bincount().tolist() == [1, 1, 1]


# ---------------------------------------------------------------------------
# large inputs (the benchmark sizes): 1e6 float32 with NaNs, -0.0 and ties
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "int64", "float16"])
def test_large_sort_topk_unique_match_torch(torch, dt):
    rng = _rng("large", dt)
    if dt == "int64":
        a = rng.integers(-1000, 1000, 1_000_000).astype(dt)
    else:
        a = (rng.standard_normal(1_000_000) * 8).round(1).astype(dt)   # many ties
        a[rng.integers(0, a.size, 2000)] = np.nan
        a[rng.integers(0, a.size, 2000)] = -0.0
        a[rng.integers(0, a.size, 200)] = -np.inf
    xp, xt = P(a, dt), T(torch, a, dt)
    for desc in (False, True):
        rp = ptcore.sort(xp, descending=desc, stable=True)
        rt = torch.sort(xt, descending=desc, stable=True)
        assert_same(rp.values, rt.values)
        assert_same(rp.indices, rt.indices)
        assert_same(ptcore.argsort(xp, descending=desc, stable=True),
                    torch.argsort(xt, descending=desc, stable=True))
    # unstable sort: values equal, indices a permutation that sorts
    ru = ptcore.sort(xp)
    assert_same(ru.values, torch.sort(xt).values, bits=False)   # -0.0 vs 0.0: any order
    np.testing.assert_array_equal(np.sort(pnp(ru.indices)), np.arange(a.size))
    for k in (1, 100, 10_000):
        for largest in (True, False):
            rp = ptcore.topk(xp, k, largest=largest)
            rt = torch.topk(xt, k, largest=largest)
            assert_same(rp.values, rt.values)
            assert_same(rp.indices, rt.indices)
    up = ptcore.unique(xp, return_inverse=True, return_counts=True)
    ut = torch.unique(xt, return_inverse=True, return_counts=True)
    if dt == "int64":
        for p_, t_ in zip(up, ut):
            assert_same(p_, t_)
    else:   # NaNs: torch keeps one entry per NaN
        assert_same(up[0], ut[0], bits=False)
        assert_same(up[2], ut[2])
    m = a[:999_000].reshape(1000, 999)
    for dim in (0, 1):
        rp = ptcore.sort(P(m, dt), dim=dim, stable=True)
        rt = torch.sort(T(torch, m, dt), dim=dim, stable=True)
        assert_same(rp.indices, rt.indices)
        kp = ptcore.kthvalue(P(m, dt), 17, dim)
        kt = torch.kthvalue(T(torch, m, dt), 17, dim)
        assert_same(kp.values, kt.values)


@pytest.mark.parametrize("case", ["normal", "on-edges", "integers", "range-cut"])
def test_histogram_even_bins_match_torch(torch, case):
    # equal-width bins compute each value's bin and correct it against the edges;
    # values on the edges (float32 edges too) must land where torch's do
    rng = np.random.default_rng(len(case))
    for dt in (np.float32, np.float64):
        for nb in (1, 2, 7, 100, 333):
            n = 5000
            if case == "on-edges":
                a = np.round(rng.uniform(0, 1, n) * nb) / nb
            elif case == "integers":
                a = rng.integers(-5, 6, n).astype(float)
            else:
                a = rng.standard_normal(n) * 3
            a = a.astype(dt)
            rg = (float(a.min()) + 0.3, float(a.max()) - 0.2) if case == "range-cut" else None
            w = rng.standard_normal(n).astype(dt)
            for weight in (None, w):
                hp, ep = ptcore.histogram(ptcore.from_numpy(a), nb, range=rg,
                                          weight=None if weight is None else ptcore.from_numpy(weight))
                ht, et = torch.histogram(torch.from_numpy(a), nb, range=rg,
                                         weight=None if weight is None else torch.from_numpy(weight))
                np.testing.assert_array_equal(ep.numpy(), et.numpy())
                if weight is None:
                    np.testing.assert_array_equal(hp.numpy(), ht.numpy())
                else:
                    np.testing.assert_allclose(hp.numpy(), ht.numpy(), rtol=1e-4, atol=1e-3)
