"""Tests for ptcore._ops.kernels._copy (copy_cast / fill) through its test hooks.

NumPy is the reference (``np.copyto(..., casting='unsafe')``) except where
PyTorch's semantics differ from NumPy's: float64 -> float16 goes through
float32, bfloat16 uses a round-to-nearest-even reference written here.  An
optional section compares with PyTorch itself when it is installed.
"""
import itertools
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from ptcore._ops.kernels import _copy
from ptcore._ops.kernels import _parallel

NP_DTYPES = [np.dtype(t) for t in (
    np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128)]
TYPE_NUM = _copy._TYPE_NUMBERS
PT_BF16 = TYPE_NUM["bfloat16"]
PAIRS = list(itertools.product(NP_DTYPES, NP_DTYPES))


def _pair_id(p):
    return f"{p[0].name}->{p[1].name}"


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


# ---------------------------------------------------------------------------
# reference helpers
# ---------------------------------------------------------------------------
def bf16_from_f32(x):
    """float32 array -> bfloat16 bit patterns (uint16), round to nearest even."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def f32_from_bf16(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def as_f32(src):
    """What PyTorch feeds a float16/bfloat16 destination: float32(real part)."""
    src = np.asarray(src)
    if src.dtype.kind == "c":
        src = src.real
    return src.astype(np.float32)


def reference(src, dst_dtype):
    dst_dtype = np.dtype(dst_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dst_dtype == np.float16 and src.dtype in (np.float64, np.complex128):
            src = as_f32(src)                       # double -> float -> half
        out = np.empty(src.shape, dst_dtype)
        np.copyto(out, src, casting="unsafe")
    return out


def dense(x):
    """C-contiguous copy keeping the shape (also for 0-d)."""
    return np.array(x, order="C")


def assert_same(got, ref):
    """Bitwise equality, except that any NaN matches any NaN."""
    assert got.shape == ref.shape and got.dtype == ref.dtype
    if got.dtype.kind in "fc":
        parts = [(got.real, ref.real), (got.imag, ref.imag)] if got.dtype.kind == "c" \
            else [(got, ref)]
        for g, r in parts:
            g, r = np.atleast_1d(np.array(g, order="C")), np.atleast_1d(np.array(r, order="C"))
            gn, rn = np.isnan(g), np.isnan(r)
            np.testing.assert_array_equal(gn, rn)
            ui = np.dtype(f"u{g.dtype.itemsize}")
            np.testing.assert_array_equal(
                g[~gn].view(ui), r[~rn].view(ui))
    else:
        np.testing.assert_array_equal(got, ref)


def make_values(rng, src_dt, dst_dt, shape, special=None):
    """Random ``src_dt`` data (negatives included) that casts to ``dst_dt``
    without undefined behaviour: float -> integer only in range, NaN/inf only
    when the destination is floating/complex (or explicitly requested)."""
    src_dt, dst_dt = np.dtype(src_dt), np.dtype(dst_dt)
    n = int(np.prod(shape, dtype=np.int64))
    if special is None:
        special = dst_dt.kind in "fc"
    if src_dt.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if src_dt.kind in "iu":
        ii = np.iinfo(src_dt)
        v = rng.integers(ii.min, ii.max, n, endpoint=True, dtype=src_dt)
        small = rng.random(n) < 0.3
        v[small] = rng.integers(max(ii.min, -5), 6, int(small.sum())).astype(src_dt)
        return v.reshape(shape)

    def component():
        if dst_dt.kind in "iu":
            ii = np.iinfo(dst_dt)
            lo, hi = max(float(ii.min), -2.0 ** 50), min(float(ii.max), 2.0 ** 50)
            v = rng.uniform(lo - 0.999, hi + 0.999, n)
            small = rng.random(n) < 0.4
            v[small] = rng.uniform(-3.0, 3.0, int(small.sum()))
        else:
            v = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)
        v[rng.random(n) < 0.15] = 0.0
        if special and n:
            k = max(1, n // 10)
            idx = rng.integers(0, n, k)
            v[idx] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], k)
        return v

    with np.errstate(all="ignore"):
        if src_dt.kind == "c":
            v = (component() + 1j * component()).astype(src_dt)
        else:
            v = component().astype(src_dt)
    if dst_dt.kind in "iu":
        ii = np.iinfo(dst_dt)
        with np.errstate(invalid="ignore"):
            t = np.trunc(v.real.astype(np.float64))
            bad = ~((t >= ii.min) & (t <= ii.max))
        v[bad] = 0
    return v.reshape(shape)


# ---------------------------------------------------------------------------
# layouts: arbitrary strided views with guard elements around them
# ---------------------------------------------------------------------------
def strided_view_like(arr, shape, layout):
    """Apply the same view construction as strided_view to an existing base."""
    nd = len(shape)
    perm = list(layout.get("perm", range(nd)))
    steps = list(layout.get("steps", [1] * nd))
    flips = list(layout.get("flips", [False] * nd))
    v = arr[tuple(slice(0, shape[perm[k]] * steps[k], steps[k]) for k in range(nd)) + (Ellipsis,)]
    v = v[tuple(slice(None, None, -1) if flips[k] else slice(None) for k in range(nd)) + (Ellipsis,)]
    return np.transpose(v, np.argsort(perm).astype(int))


def strided_view(shape, dtype, perm=None, steps=None, flips=None, pad=1):
    """(base, view): ``view`` has logical ``shape`` but lives inside ``base``
    with axes permuted by ``perm``, stepped by ``steps``, flipped where
    ``flips``.  ``pad`` extra elements per axis leave untouched gaps."""
    nd = len(shape)
    perm = list(range(nd)) if perm is None else list(perm)
    steps = [1] * nd if steps is None else list(steps)
    flips = [False] * nd if flips is None else list(flips)
    bshape = [shape[perm[k]] * steps[k] + pad for k in range(nd)]
    base = np.zeros(bshape, dtype)
    v = strided_view_like(base, shape, dict(perm=perm, steps=steps, flips=flips))
    assert v.shape == tuple(shape)
    return base, v


def _guard_mask(base, view_fn):
    mask = np.zeros(base.shape, bool)
    view_fn(mask)[...] = True
    return mask


def run_copy(dst_view, src, **kw):
    _copy._copy_cast_arrays(dst_view, src, **kw)


# ---------------------------------------------------------------------------
# all 11 x 11 NumPy-representable pairs
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_all_pairs_contiguous(pair):
    src_dt, dst_dt = pair
    rng = np.random.default_rng(_seed(0, _pair_id(pair)))
    src = make_values(rng, src_dt, dst_dt, (7, 113))
    dst = np.empty(src.shape, dst_dt)
    run_copy(dst, src)
    assert_same(dst, reference(src, dst_dt))


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_all_pairs_strided(pair):
    src_dt, dst_dt = pair
    rng = np.random.default_rng(_seed(1, _pair_id(pair)))
    shape = (5, 6, 37)
    data = make_values(rng, src_dt, dst_dt, shape)
    ref = reference(data, dst_dt)
    layouts = [
        dict(perm=(2, 0, 1)),                                   # transposed
        dict(steps=(2, 1, 3), flips=(False, True, False)),      # stepped, negative
        dict(perm=(1, 2, 0), steps=(1, 2, 1), flips=(True, False, True)),
    ]
    for sl, dl in itertools.product(layouts + [{}], layouts + [{}]):
        _, src = strided_view(shape, src_dt, **sl)
        src[...] = data
        base, dst = strided_view(shape, dst_dt, **dl)
        base[...] = 1  # guard value in the gaps
        outside = ~_guard_mask(base, lambda a: strided_view_like(a, shape, dl))
        run_copy(dst, src)
        assert_same(dst, ref)
        assert (base[outside] == 1).all()


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_all_pairs_broadcast_zero_size_scalar(pair):
    src_dt, dst_dt = pair
    rng = np.random.default_rng(_seed(2, _pair_id(pair)))
    # broadcast source (stride 0) along two axes
    small = make_values(rng, src_dt, dst_dt, (1, 9, 1))
    src = np.broadcast_to(small, (4, 9, 5))
    dst = np.empty(src.shape, dst_dt)
    run_copy(dst, src)
    assert_same(dst, reference(dense(src), dst_dt))
    # 0-d
    s0 = make_values(rng, src_dt, dst_dt, ())
    d0 = np.empty((), dst_dt)
    run_copy(d0, s0)
    assert_same(d0, reference(s0, dst_dt))
    # zero-size: nothing written
    base = np.ones((3, 4, 2), dst_dt)
    for dst in (base[:, 2:2], base[1:1, ::-1], base[:, :, 0][:0].T):
        run_copy(dst, np.empty(dst.shape, src_dt))
    assert (base == 1).all()


# ---------------------------------------------------------------------------
# PyTorch-specific semantics
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("src_dt", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_negative_float_to_uint8_wraps_through_int64(src_dt):
    src = np.array([-1.0, -1.7, -2.0, -128.5, -255.0, 0.5, 255.9], dtype=src_dt)
    dst = np.empty(src.shape, np.uint8)
    run_copy(dst, src)
    np.testing.assert_array_equal(dst, [255, 255, 254, 128, 1, 0, 255])


@pytest.mark.parametrize("dst_dt", [np.int8, np.int16, np.int32])
def test_negative_float_to_signed_truncates(dst_dt):
    src = np.array([-1.9, -0.5, 0.5, 1.9, -100.99], dtype=np.float64)
    dst = np.empty(src.shape, dst_dt)
    run_copy(dst, src)
    np.testing.assert_array_equal(dst, [-1, 0, 0, 1, -100])


@pytest.mark.parametrize("src_dt", [np.float16, np.float32, np.float64])
def test_to_bool_special_values(src_dt):
    src = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-30, -3.0], dtype=src_dt)
    dst = np.empty(src.shape, np.bool_)
    run_copy(dst, src)
    expect = [False, False, True, True, True, src_dt != np.float16, True]
    np.testing.assert_array_equal(dst, expect)
    assert set(dst.view(np.uint8).tolist()) <= {0, 1}


def test_complex_to_bool_uses_both_parts():
    src = np.array([0, 1j, -0.0 + 0j, 2, np.nan * 1j, 0j - 0.0j], dtype=np.complex128)
    dst = np.empty(src.shape, np.bool_)
    run_copy(dst, src)
    np.testing.assert_array_equal(dst, [False, True, False, True, True, False])


def test_nonfinite_float_to_int_does_not_crash():
    src = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9], dtype=np.float32)
    for dt in (np.uint8, np.int8, np.int16, np.int32, np.int64):
        dst = np.empty(src.shape, dt)
        run_copy(dst, src)            # value is unspecified, must not crash


def test_double_to_half_goes_through_float():
    # 1 + 2^-11 + 2^-40: rounds to float32 1 + 2^-11 (a half-way point for
    # float16), which then rounds to even 1.0; a direct conversion gives 1.00098.
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40)])
    for src in (x, x.astype(np.complex128)):
        dst = np.empty(2, np.float16)
        run_copy(dst, src)
        np.testing.assert_array_equal(dst, [1.0, -1.0])


def test_same_type_copy_is_bitwise():
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2 ** 16, 4096, dtype=np.uint16)
    bits[:4] = [0x7C01, 0xFC01, 0x7E00, 0x7D55]       # signalling/quiet NaNs
    src = bits.view(np.float16)
    for s in (src, src[::-1], src.reshape(64, 64).T):
        dst = np.empty(s.shape, np.float16)
        run_copy(dst, s)
        np.testing.assert_array_equal(dst.view(np.uint16), s.view(np.uint16))
    f = rng.integers(0, 2 ** 32, 1000, dtype=np.uint32)
    dst = np.empty(1000, np.float32)
    run_copy(dst, f.view(np.float32)[::-1])
    np.testing.assert_array_equal(dst.view(np.uint32), f[::-1])


def test_half_conversions_exhaustive():
    # every float16 bit pattern -> float32 / float64 / bfloat16 and back
    bits = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)
    h = bits.view(np.float16)
    f = np.empty(h.shape, np.float32)
    run_copy(f, h)
    assert_same(f, h.astype(np.float32))
    d = np.empty(h.shape, np.float64)
    run_copy(d, h)
    assert_same(d, h.astype(np.float64))
    back = np.empty(h.shape, np.float16)
    run_copy(back, f)
    assert_same(back, h)
    b = np.empty(h.shape, np.uint16)
    run_copy(b, h, dst_type=PT_BF16)
    ref = bf16_from_f32(h.astype(np.float32))
    ok = ~np.isnan(h)
    np.testing.assert_array_equal(b[ok], ref[ok])
    assert np.isnan(f32_from_bf16(b[~ok])).all()


def test_float_to_half_random_bits():
    rng = np.random.default_rng(11)
    u = rng.integers(0, 2 ** 32, 1_000_000, dtype=np.uint32)
    # plus dense coverage of the float16 range and rounding boundaries
    ties = np.arange(0x33000000, 0x47800000, 1 << 12, dtype=np.uint32)
    u = np.concatenate([u, ties, ties + 1, ties - 1, ties | 0x80000000,
                        np.array([0x477FF000, 0x477FEFFF, 0x38800000, 0x387FFFFF,
                                  0x33000000, 0x33000001, 0x7F800000, 0xFF800000,
                                  0x7F7FFFFF, 0, 0x80000000, 1], np.uint32)])
    f = u.view(np.float32)
    dst = np.empty(f.shape, np.float16)
    run_copy(dst, f)
    with np.errstate(over="ignore"):
        assert_same(dst, f.astype(np.float16))


# ---------------------------------------------------------------------------
# bfloat16
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("src_dt", NP_DTYPES, ids=lambda d: d.name)
def test_to_bfloat16(src_dt):
    rng = np.random.default_rng(21)
    data = make_values(rng, src_dt, np.float32, (3, 50))
    ref = bf16_from_f32(as_f32(data))
    _, src = strided_view(data.shape, src_dt, perm=(1, 0), flips=(True, False))
    src[...] = data
    for dst in (np.empty(data.shape, np.uint16), np.empty((50, 3), np.uint16).T):
        run_copy(dst, src, dst_type=PT_BF16)
        nan = np.isnan(f32_from_bf16(ref))
        np.testing.assert_array_equal(dst[~nan], ref[~nan])
        assert np.isnan(f32_from_bf16(dst[nan])).all()


def test_bfloat16_rounding_bits():
    rng = np.random.default_rng(22)
    u = rng.integers(0, 2 ** 32, 500_000, dtype=np.uint32)
    hi = rng.integers(0, 2 ** 16, 2000, dtype=np.uint32) << 16
    u = np.concatenate([u, hi | 0x8000, hi | 0x7FFF, hi | 0x8001, hi,
                        np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F800000, 0xFF800000], np.uint32)])
    f = u.view(np.float32)
    dst = np.empty(f.shape, np.uint16)
    run_copy(dst, f, dst_type=PT_BF16)
    ref = bf16_from_f32(f)
    nan = np.isnan(f)
    np.testing.assert_array_equal(dst[~nan], ref[~nan])
    assert np.isnan(f32_from_bf16(dst[nan])).all()
    # a few hand-checked cases
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 3.0e38, -0.0],
                 np.float32)
    d = np.empty(x.shape, np.uint16)
    run_copy(d, x, dst_type=PT_BF16)
    np.testing.assert_array_equal(d, [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7F62, 0x8000])


@pytest.mark.parametrize("dst_dt", NP_DTYPES, ids=lambda d: d.name)
def test_from_bfloat16(dst_dt):
    rng = np.random.default_rng(23)
    f = make_values(rng, np.float32, dst_dt, (40, 30))
    bits = bf16_from_f32(f)
    vals = f32_from_bf16(bits)
    if dst_dt.kind in "iu":          # rounding to bf16 may leave the range
        ii = np.iinfo(dst_dt)
        with np.errstate(invalid="ignore"):
            t = np.trunc(vals)
        bits[~((t >= ii.min) & (t <= ii.max))] = 0
        vals = f32_from_bf16(bits)
    ref = reference(vals, dst_dt)
    for src in (bits, bits.T.copy().T, bits[::-1, ::-1].copy()[::-1, ::-1]):
        dst = np.empty(bits.shape, dst_dt)
        run_copy(dst, src, src_type=PT_BF16)
        assert_same(dst, ref)


def test_bfloat16_to_bfloat16_bitwise():
    bits = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
    dst = np.empty_like(bits)
    run_copy(dst, bits.T, dst_type=PT_BF16, src_type=PT_BF16)
    np.testing.assert_array_equal(dst, bits.T)


# ---------------------------------------------------------------------------
# fill
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", NP_DTYPES, ids=lambda d: d.name)
def test_fill(dt):
    rng = np.random.default_rng(31)
    value = make_values(rng, dt, dt, (1,))[0]
    vbytes = np.array(value, dt).tobytes()
    for shape, layout in [((), {}), ((0, 3), {}), ((1000,), {}), ((7, 5, 3), dict(perm=(2, 0, 1))),
                          ((6, 9), dict(steps=(2, 3), flips=(True, False)))]:
        base, view = strided_view(shape, dt, **layout)
        base[...] = 0
        _copy._fill_array(view, vbytes)
        assert_same(view, np.full(shape, value, dt))
        mask = _guard_mask(base, lambda a: strided_view_like(a, shape, layout))
        assert not base[~mask].view(np.uint8).any()


def test_fill_bfloat16_and_errors():
    d = np.zeros((4, 5), np.uint16)
    _copy._fill_array(d[:, ::2], np.uint16(0x3FC0).tobytes(), dst_type=PT_BF16)
    np.testing.assert_array_equal(d[:, ::2], 0x3FC0)
    np.testing.assert_array_equal(d[:, 1::2], 0)
    with pytest.raises(ValueError):
        _copy._fill_array(d, b"\x00\x00", dst_type=99)
    with pytest.raises(ValueError):
        _copy._fill_array(np.zeros(3, np.float32), b"\x00\x00")


def test_unknown_type_number():
    a = np.zeros(4, np.uint8)
    with pytest.raises(ValueError):
        _copy._copy_cast_arrays(a, a, dst_type=len(_copy._TYPE_NUMBERS))   # one past the last type
    with pytest.raises(ValueError):
        _copy._copy_cast_arrays(a, a, src_type=-1)


# ---------------------------------------------------------------------------
# layout-specific paths: tiles, coalescing, many dims, parallel splits
# ---------------------------------------------------------------------------
@pytest.fixture
def threads():
    n0, g0 = _parallel._get_num_threads(), _parallel._get_parallel_grain()

    def set_(n, grain):
        _parallel._set_num_threads(n)
        _parallel._set_parallel_grain(grain)
    yield set_
    _parallel._set_num_threads(n0)
    _parallel._set_parallel_grain(g0)


@pytest.mark.parametrize("nthreads,grain", [(1, 32768), (2, 1), (3, 100)])
@pytest.mark.parametrize("shape", [(300, 211), (64, 64), (1, 5000), (5000, 1), (33, 3), (3, 1000)])
@pytest.mark.parametrize("dts", [(np.float32, np.float32), (np.int16, np.float64),
                                 (np.complex64, np.complex128), (np.float64, np.float16)],
                         ids=lambda p: f"{np.dtype(p[0]).name}->{np.dtype(p[1]).name}")
def test_transposes_and_threads(threads, nthreads, grain, shape, dts):
    threads(nthreads, grain)
    rng = np.random.default_rng(41)
    src_dt, dst_dt = map(np.dtype, dts)
    base = make_values(rng, src_dt, dst_dt, shape[::-1])
    for src in (base.T, base[::-1].T, np.asfortranarray(base).T):
        ref = reference(dense(src), dst_dt)
        dst = np.empty(src.shape, dst_dt)
        run_copy(dst, src)
        assert_same(dst, ref)
        # destination transposed too, and both negative
        dst2 = np.empty(src.shape[::-1], dst_dt).T
        run_copy(dst2, src)
        assert_same(dst2, ref)
        dst3 = np.empty(src.shape, dst_dt)[::-1, ::-1]
        run_copy(dst3, src[::-1, ::-1])
        assert_same(dst3, ref[::-1, ::-1])


@pytest.mark.parametrize("nthreads,grain", [(1, 32768), (2, 1)])
def test_3d_permutations(threads, nthreads, grain):
    threads(nthreads, grain)
    rng = np.random.default_rng(42)
    a = rng.standard_normal((17, 40, 35)).astype(np.float32)
    for perm in itertools.permutations(range(3)):
        src = a.transpose(perm)
        for dst_dt in (np.float32, np.float64, np.int64):
            dst = np.empty(src.shape, dst_dt)
            run_copy(dst, src)
            assert_same(dst, reference(dense(src), dst_dt))


@pytest.mark.parametrize("nthreads,grain", [(1, 32768), (2, 1)])
def test_large_contiguous_and_broadcast(threads, nthreads, grain):
    threads(nthreads, grain)
    rng = np.random.default_rng(43)
    a = rng.standard_normal(100_003).astype(np.float32)
    for dst_dt in (np.float32, np.float64, np.float16, np.int32):
        dst = np.empty(a.shape, dst_dt)
        run_copy(dst, a)
        assert_same(dst, reference(a, dst_dt))
    b = np.broadcast_to(a[:1000], (57, 1000))
    dst = np.empty(b.shape, np.float64)
    run_copy(dst, b)
    assert_same(dst, reference(dense(b), np.float64))
    d = np.empty((300, 301), np.int16)
    _copy._fill_array(d.T, np.int16(-7).tobytes())
    assert (d == -7).all()


def test_many_dims():
    rng = np.random.default_rng(44)
    shape = (1,) * 58 + (2, 3, 1, 2, 3, 2)
    a = rng.standard_normal(shape)
    src = a.transpose(list(range(63, -1, -1)))
    dst = np.empty(src.shape, np.float32)
    run_copy(dst, src)
    assert_same(dst, reference(dense(src), np.float32))
    # 16 non-trivial dims that cannot be coalesced
    shape = (2,) * 16
    a = rng.standard_normal(shape)
    src = a.transpose(list(range(15, -1, -1)))[..., ::-1]
    dst = np.empty(src.shape, np.complex64)[::-1]
    run_copy(dst, src)
    assert_same(dst, reference(dense(src), np.complex64))


# ---------------------------------------------------------------------------
# random shapes and strides
# ---------------------------------------------------------------------------
@st.composite
def layouts(draw, shape):
    nd = len(shape)
    perm = draw(st.permutations(range(nd)))
    steps = draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
    flips = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
    return dict(perm=perm, steps=steps, flips=flips)


@st.composite
def copy_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=5)))
    src_dt = draw(st.sampled_from(NP_DTYPES))
    dst_dt = draw(st.sampled_from(NP_DTYPES))
    src_layout = draw(layouts(shape))
    dst_layout = draw(layouts(shape))
    bcast = tuple(draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape))))
    nthreads = draw(st.sampled_from([1, 2]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return shape, src_dt, dst_dt, src_layout, dst_layout, bcast, nthreads, seed


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(copy_cases())
def test_random_layouts(threads, case):
    shape, src_dt, dst_dt, src_layout, dst_layout, bcast, nthreads, seed = case
    threads(nthreads, 1)
    rng = np.random.default_rng(seed)
    small_shape = tuple(1 if b else s for s, b in zip(shape, bcast))
    data = make_values(rng, src_dt, dst_dt, small_shape)
    _, small = strided_view(small_shape, src_dt, **src_layout)
    small[...] = data
    src = np.broadcast_to(small, shape)
    ref = reference(dense(src), dst_dt)
    base, dst = strided_view(shape, dst_dt, **dst_layout)
    base[...] = 1
    mask = _guard_mask(base, lambda a: strided_view_like(a, shape, dst_layout))
    guard = base[~mask].copy()
    run_copy(dst, src)
    assert_same(dst, ref)
    assert_same(base[~mask], guard)


# ---------------------------------------------------------------------------
# optional: PyTorch itself as the oracle (all 12 x 12 pairs incl. bfloat16)
# ---------------------------------------------------------------------------
def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch not installed")
    return torch


def test_against_torch_all_pairs():
    torch = _torch()
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
             "bfloat16", "float32", "float64", "complex64", "complex128"]
    rng = np.random.default_rng(51)
    for sname, dname in itertools.product(names, names):
        s_np = np.dtype("uint16") if sname == "bfloat16" else np.dtype(sname)
        d_np = np.dtype("uint16") if dname == "bfloat16" else np.dtype(dname)
        ref_dt = np.float32 if dname == "bfloat16" else d_np
        data = make_values(rng, np.float32 if sname == "bfloat16" else s_np, ref_dt, (300,))
        if sname == "bfloat16":
            data = bf16_from_f32(data)
            if d_np.kind in "iu":
                v = f32_from_bf16(data)
                ii = np.iinfo(d_np)
                with np.errstate(invalid="ignore"):
                    t = np.trunc(v)
                data[~((t >= ii.min) & (t <= ii.max))] = 0
            ts = torch.from_numpy(data.view(np.int16)).view(torch.bfloat16)
        else:
            ts = torch.from_numpy(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = ts.to(getattr(torch, dname))
        if dname == "bfloat16":
            expect = tr.view(torch.int16).numpy().view(np.uint16)
        else:
            expect = tr.numpy()
        dst = np.empty(data.shape, d_np)
        run_copy(dst, data, dst_type=TYPE_NUM[dname], src_type=TYPE_NUM[sname])
        if dname == "bfloat16":
            nan = np.isnan(f32_from_bf16(expect))
            np.testing.assert_array_equal(dst[~nan], expect[~nan], err_msg=f"{sname}->{dname}")
            assert np.isnan(f32_from_bf16(dst[nan])).all()
        else:
            assert_same(dst, expect)


def test_against_torch_negative_to_uint8():
    torch = _torch()
    x = np.array([-1.0, -2.5, -200.0, 0.0, 254.9], np.float32)
    for dt in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        src = x.astype(dt)
        dst = np.empty(x.shape, np.uint8)
        run_copy(dst, src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(dst, torch.from_numpy(src).to(torch.uint8).numpy())


@pytest.mark.skipif(__import__("platform").machine().lower() not in ("x86_64", "amd64"),
                    reason="out-of-range float->int results are x86-specific")
def test_against_torch_out_of_range_float_to_int():
    torch = _torch()
    x = np.array([3e9, -3e9, 300.0, -1.0, 70000.0, np.nan, np.inf, -np.inf, 1e20,
                  2.0 ** 31, -129.5, 255.5, 40000.0, -40000.0], np.float64)
    for sdt in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        with np.errstate(all="ignore"):
            src = x.astype(sdt)
        for name in ("uint8", "int8", "int16", "int32", "int64"):
            dst = np.empty(x.shape, name)
            run_copy(dst, src)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expect = torch.from_numpy(src).to(getattr(torch, name)).numpy()
            np.testing.assert_array_equal(dst, expect, err_msg=f"{np.dtype(sdt).name}->{name}")


# ---------------------------------------------------------------------------
# float16/bfloat16 <-> float32 over contiguous rows (the vectorised converters)
# ---------------------------------------------------------------------------

def _all_bits16():
    return np.arange(65536, dtype=np.uint16).view(np.int16)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_low_to_float32_every_bit_pattern(dt):
    """Every float16/bfloat16 bit pattern widens to the float32 the scalar
    rule gives (exact; NaNs quiet), in rows long enough for the vector path
    and with odd tails."""
    import ptcore
    bits = _all_bits16()
    got = ptcore.from_numpy(bits.copy()).view(getattr(ptcore, dt)).float().numpy().view(np.uint32)
    u = bits.view(np.uint16).astype(np.uint32)
    if dt == "bfloat16":
        want = u << 16                     # bits kept, a signalling NaN too (as torch)
    else:
        want = np.asarray(bits.view(np.float16).astype(np.float32)).view(np.uint32)
        nan = (u & 0x7fff) > 0x7c00        # F16C (and torch) quiet a signalling NaN
        want = np.where(nan, want | 0x400000, want)
    np.testing.assert_array_equal(got, want.astype(np.uint32))
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(bits.copy()).view(getattr(torch, dt)).float().numpy().view(np.uint32)
    np.testing.assert_array_equal(got, t)
    # a strided (scalar) copy of the same data agrees with the vectorised one
    s = ptcore.from_numpy(np.stack([bits, bits], 1).copy()).view(getattr(ptcore, dt))[:, 0].float()
    np.testing.assert_array_equal(s.numpy().view(np.uint32), got)


def _float32_probe():
    rng = np.random.default_rng(7)
    u = np.concatenate([
        rng.integers(0, 2**32, 300_001, dtype=np.uint64).astype(np.uint32),
        np.arange(0x33000000, 0x33800000, 101, dtype=np.uint32),       # float16 subnormals
        np.arange(0x477fe000, 0x47800100, 3, dtype=np.uint32),         # float16 overflow edge
        np.array([0x7f800000, 0xff800000, 0x7fc00001, 0x7f800001, 0xffffffff, 0, 0x80000000,
                  0x38800000, 0x387fffff, 0x3f808000, 0x3f818000], dtype=np.uint32)])
    return u.view(np.float32)


def test_float32_to_float16_rounds_to_nearest_even():
    """The F16C conversion gives NumPy's (IEEE round-to-nearest-even) result
    for every probed float32, NaNs quiet with a truncated payload."""
    import ptcore
    f = _float32_probe()
    got = ptcore.from_numpy(f.copy()).half().view(ptcore.int16).numpy().view(np.uint16)
    with np.errstate(over="ignore"):
        want = f.astype(np.float16).view(np.uint16)
    nan = np.isnan(f)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    u = f.view(np.uint32)
    want_nan = ((u >> 16) & 0x8000) | 0x7e00 | ((u >> 13) & 0x3ff)
    np.testing.assert_array_equal(got[nan], want_nan[nan].astype(np.uint16))


def test_float32_to_bfloat16_matches_torch_bits():
    """Round to nearest even; a NaN becomes 0xffff as in torch's vectorised
    conversion; the same bits from a strided (scalar) source, NaNs aside."""
    import ptcore
    f = _float32_probe()
    got = ptcore.from_numpy(f.copy()).bfloat16().view(ptcore.int16).numpy().view(np.uint16)
    u = f.view(np.uint32).astype(np.uint64)
    want = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    want[nan] = 0xffff
    np.testing.assert_array_equal(got, want)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(f.copy()).bfloat16().view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got, t)
