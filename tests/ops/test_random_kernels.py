"""Tests for ptcore._ops.kernels._random: Philox4x32-10 and the distribution kernels.

Outputs are filled into NumPy arrays through their ``.ctypes.data`` addresses.
The element -> (block, word) mapping documented in _random.pyx is checked
exactly against independent NumPy/Python re-implementations built on the raw
word stream (itself checked against a pure-Python Philox4x32-10, the Random123
known-answer vectors and, when installed, randomgen's Philox4x32).  Note that
``numpy.random.Philox`` is Philox4x64-10, a different generator, so its raw
stream cannot be compared; randomgen's ``Philox(number=4, width=32)`` is the
4x32 variant.

Statistical checks use fixed seeds, so they are deterministic; their bounds
are loose but fail on any real defect.
"""
import math

import numpy as np
import pytest

_random = pytest.importorskip("ptcore._ops.kernels._random")
_parallel = pytest.importorskip("ptcore._ops.kernels._parallel")

from scipy import stats  # noqa: E402

BOOL, UINT8, INT8, INT16, INT32, INT64, F16, BF16, F32, F64, C64, C128 = range(12)
NP = {BOOL: np.bool_, UINT8: np.uint8, INT8: np.int8, INT16: np.int16,
      INT32: np.int32, INT64: np.int64, F16: np.float16, BF16: np.uint16,
      F32: np.float32, F64: np.float64, C64: np.complex64, C128: np.complex128}
FLOAT_TYPES = (F16, BF16, F32, F64)
MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def ref_philox(ctr, key):
    """Pure-Python Philox4x32-10 (Salmon et al. 2011)."""
    M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, \
            ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
        k0 = (k0 + W0) & MASK32
        k1 = (k1 + W1) & MASK32
    return (c0, c1, c2, c3)


def words(seed, offset, nblocks):
    w = np.empty(4 * nblocks, np.uint32)
    _random.philox_stream(seed, offset, nblocks, w.ctypes.data)
    return w


def pairs64(w):
    """(even, odd) word pairs as uint64 D = even + 2^32 odd."""
    w = w.astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


def bf16_to_f64(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def f32_to_bf16(f):
    u = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    u = u + 0x7FFF + ((u >> np.uint64(16)) & np.uint64(1))
    return (u >> np.uint64(16)).astype(np.uint16)


def to_f64(a, t):
    if t == BF16:
        return bf16_to_f64(a)
    return a.astype(np.float64)


def round_to(v, t):
    """float64 array -> dtype t as the kernels round (via float32 for <= 32 bit)."""
    if t == F64:
        return np.asarray(v, np.float64)
    f = np.asarray(v, np.float64).astype(np.float32)
    if t == F32:
        return f
    if t == F16:
        return f.astype(np.float16)
    return f32_to_bf16(f)


def fill(kernel, t, n, seed, offset, *args):
    a = np.zeros(n, NP[t])
    new = getattr(_random, kernel)(a.ctypes.data, t, n, seed, offset, *args)
    return a, new


def uniform(t, n, seed=0, offset=0, low=0.0, high=1.0):
    return fill("fill_uniform_addr", t, n, seed, offset, low, high)


def normal(t, n, seed=0, offset=0, mean=0.0, std=1.0):
    return fill("fill_normal_addr", t, n, seed, offset, mean, std)


def randint(t, n, low, high, seed=0, offset=0):
    return fill("fill_randint_addr", t, n, seed, offset, low, high)


def exponential(t, n, lambd=1.0, seed=0, offset=0):
    return fill("fill_exponential_addr", t, n, seed, offset, lambd)


def bernoulli(t, n, p, seed=0, offset=0, stride=None):
    p = np.ascontiguousarray(np.atleast_1d(np.asarray(p, np.float64)))
    if stride is None:
        stride = 0 if p.size == 1 else 1
    a = np.zeros(n, NP[t])
    new = _random.fill_bernoulli_addr(a.ctypes.data, t, n, seed, offset, p.ctypes.data, stride)
    return a, new


def randperm(n, seed=0, offset=0):
    a = np.full(n, -7, np.int64)
    new = _random.randperm_addr(a.ctypes.data, n, seed, offset)
    return a, new


def multinomial(probs, num_samples, replacement, seed=0, offset=0):
    probs = np.ascontiguousarray(np.atleast_2d(np.asarray(probs, np.float64)))
    rows, cats = probs.shape
    out = np.full((rows, num_samples), -7, np.int64)
    new = _random.multinomial_addr(out.ctypes.data, probs.ctypes.data, rows, cats,
                                   num_samples, replacement, seed, offset)
    return out, new


@pytest.fixture
def threads():
    """Restore the thread count and grain after a test changes them."""
    nt = _parallel._get_num_threads()
    grain = _parallel._get_parallel_grain()
    yield
    _parallel._set_num_threads(nt)
    _parallel._set_parallel_grain(grain)


# --------------------------------------------------------------------------
# Philox4x32-10 itself
# --------------------------------------------------------------------------
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK32,) * 4, (MASK32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_known_answer_vectors(ctr, key, expected):
    assert _random.philox_block(ctr, key) == expected
    assert ref_philox(ctr, key) == expected


def test_block_matches_python_reference():
    rng = np.random.default_rng(1234)
    for _ in range(200):
        ctr = tuple(int(x) for x in rng.integers(0, 2**32, 4))
        key = tuple(int(x) for x in rng.integers(0, 2**32, 2))
        assert _random.philox_block(ctr, key) == ref_philox(ctr, key)


@pytest.mark.parametrize("offset", [0, 5, 2**32 - 3, 0x123456789, 2**64 - 6])
@pytest.mark.parametrize("nblocks", [1, 3, 4, 7, 9, 64, 67])
def test_stream_layout(offset, nblocks):
    seed = 0xDEADBEEF_01234567
    w = words(seed, offset, nblocks)
    for q in range(nblocks):
        c = (offset + q) % 2**64
        ref = ref_philox((c & MASK32, c >> 32, 0, 0), (seed & MASK32, seed >> 32))
        assert tuple(int(x) for x in w[4 * q:4 * q + 4]) == ref


# the vector levels of the Philox, Box-Muller and -log loops this CPU has (0 SSE2/scalar,
# 1 AVX2, 2 AVX-512F): every one runs in the suite, and they must give the same bits
LEVELS = list(range(_random._simd_level_max() + 1))


def _at_levels(fn):
    """``fn()`` at each vector level of ``LEVELS``, the CPU's default restored."""
    prev = _random._set_simd_level(-1)
    out = []
    try:
        for level in LEVELS:
            _random._set_simd_level(level)
            out.append(fn())
    finally:
        _random._set_simd_level(prev)
    return out


def test_simd_paths_agree():
    # AVX-512 (16 blocks), AVX2 (8 blocks), SSE2 (4 blocks) and scalar tails give the same
    # words, at block counts that leave every kind of tail
    for nb in (203, 16, 31, 8, 3):
        got = _at_levels(lambda: words(0x0123456789ABCDEF, 2**32 - 20, nb))
        for other in got[1:]:
            np.testing.assert_array_equal(got[0], other)
    # the best level's words (the last of LEVELS) against the reference Philox
    a = _at_levels(lambda: words(0x0123456789ABCDEF, 2**32 - 20, 203))[-1]
    for q in (0, 19, 20, 21, 202):
        c = 2**32 - 20 + q
        ref = ref_philox((c & MASK32, c >> 32, 0, 0), (0x89ABCDEF, 0x01234567))
        assert tuple(int(x) for x in a[4 * q:4 * q + 4]) == ref


@pytest.mark.parametrize("n", [200_003, 15, 17, 33])
@pytest.mark.parametrize("t", [F32, F64, C64])
def test_simd_transforms_agree(t, n):
    # vectorised (AVX-512, AVX2) and scalar log / sincos / affine stores give identical bits
    res = _at_levels(lambda: (normal(t, n, 1, 0, 0.5, 3.0)[0].tobytes(),
                              exponential(F64 if t == C64 else t, n, 0.7, 1, 0)[0].tobytes()))
    assert len(res) == len(LEVELS)
    for other in res[1:]:
        assert other == res[0]


def test_simd_level_hook():
    best = _random._simd_level_max()
    prev = _random._set_simd_level(0)
    try:
        assert _random._set_simd_level(best + 5) == 0      # capped at the CPU's
        assert _random._set_simd_level(-1) == best
    finally:
        _random._set_simd_level(prev)
    assert _random._set_simd_level(prev) == prev


def test_stream_vs_recorded_randomgen_output():
    # randomgen.Philox(key=seed, counter=0, number=4, width=32).random_raw(8):
    # randomgen pre-increments the counter, so its first block is counter 1.
    seed = 0x123456789ABCDEF0
    expected = [0x389D999A, 0x609CF517, 0x0570BB00, 0x99B16EDC,
                0x85099817, 0x3153794F, 0xA4AEC973, 0x55C92771]
    assert [int(x) for x in words(seed, 1, 2)] == expected


def test_stream_vs_randomgen():
    randomgen = pytest.importorskip("randomgen")
    for seed, counter in [(0, 0), (42, 2**32 - 5), (2**64 - 1, 12345), (0xABCDEF, 2**40)]:
        bg = randomgen.Philox(key=seed, counter=counter, number=4, width=32)
        raw = bg.random_raw(4 * 1000).astype(np.uint32)
        np.testing.assert_array_equal(words(seed, counter + 1, 1000), raw)


def test_seed_uses_both_key_words():
    a = words(1, 0, 4)
    b = words(1 + 2**32, 0, 4)
    assert not np.array_equal(a, b)


# --------------------------------------------------------------------------
# exact mapping (documented element -> block/word formulas)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("t", [F32, F16, BF16, C64])
@pytest.mark.parametrize("low,high", [(0.0, 1.0), (-2.5, 7.25), (0.1, 0.3)])
def test_uniform_mapping_32bit_kinds(t, low, high):
    n, seed, off = 1003, 77, 1000
    a, new = uniform(t, n, seed, off, low, high)
    S = 2 * n if t == C64 else n
    nb = -(-S // 4)
    assert new == off + nb
    w = words(seed, off, nb)[:S]
    u = (w >> np.uint32(8)).astype(np.float64) * 2.0**-24
    v = low + (high - low) * u
    kt = F32 if t == C64 else t
    ref = round_to(v, kt)
    got = a.view(np.float32) if t == C64 else a
    # values that rounded to >= high are replaced by the largest value below high
    refv = to_f64(ref, kt)
    assert np.all(to_f64(got, kt)[refv < high] == refv[refv < high])
    assert np.all(to_f64(got, kt) < high)


@pytest.mark.parametrize("t", [F64, C128])
@pytest.mark.parametrize("low,high", [(0.0, 1.0), (-1e3, 1e-3)])
def test_uniform_mapping_64bit_kinds(t, low, high):
    n, seed, off = 501, 3, 17
    a, new = uniform(t, n, seed, off, low, high)
    S = 2 * n if t == C128 else n
    nb = -(-S // 2)
    assert new == off + nb
    d = pairs64(words(seed, off, nb))[:S]
    u = (d >> np.uint64(11)).astype(np.float64) * 2.0**-53
    ref = low + (high - low) * u
    got = a.view(np.float64)
    np.testing.assert_array_equal(got[ref < high], ref[ref < high])
    assert np.all(got < high)


def _ref_box_muller_pair(u1, u2):
    r = math.sqrt(-2.0 * _random._det_log(u1))
    s, c = _random._det_sincos2pi(u2)
    return r * c, r * s


@pytest.fixture(params=[2, 1, 0], ids=["avx512", "avx2", "scalar"])
def simd(request):
    if request.param not in LEVELS:
        pytest.skip(f"this CPU has no vector level {request.param}")
    prev = _random._set_simd_level(request.param)
    yield
    _random._set_simd_level(prev)


@pytest.mark.parametrize("t", [F32, F16, BF16, C64, F64, C128])
def test_normal_mapping_exact(t, simd):
    n, seed, off, mean, std = 401, 2024, 9, 0.5, 2.0
    a, new = normal(t, n, seed, off, mean, std)
    cplx = t in (C64, C128)
    S = 2 * n if cplx else n
    sd = std * 0.7071067811865476 if cplx else std
    wide = t in (F64, C128)
    nb = -(-S // 2) if wide else -(-S // 4)
    assert new == off + nb
    w = words(seed, off, nb)
    vals = []
    if wide:
        d = pairs64(w)
        for q in range(nb):
            u1 = 1.0 - float(d[2 * q] >> np.uint64(11)) * 2.0**-53
            u2 = float(d[2 * q + 1] >> np.uint64(11)) * 2.0**-53
            vals.extend(_ref_box_muller_pair(u1, u2))
    else:
        for p in range(2 * nb):
            u1 = 1.0 - float(w[2 * p]) * 2.0**-32
            u2 = float(w[2 * p + 1]) * 2.0**-32
            vals.extend(_ref_box_muller_pair(u1, u2))
    v = np.array([mean + sd * z for z in vals[:S]])
    kt = {C64: F32, C128: F64}.get(t, t)
    ref = round_to(v, kt)
    got = a.view(NP[kt]) if cplx else a
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("t", [F32, F16, BF16, F64])
def test_exponential_mapping_exact(t, simd):
    n, seed, off, lambd = 301, 5, 123, 2.5
    a, new = exponential(t, n, lambd, seed, off)
    wide = t == F64
    nb = -(-n // 2) if wide else -(-n // 4)
    assert new == off + nb
    w = words(seed, off, nb)
    if wide:
        d = pairs64(w)[:n]
        us = [(float(x >> np.uint64(12)) + 0.5) * 2.0**-52 for x in d]
    else:
        us = [(float(x) + 0.5) * 2.0**-32 for x in w[:n]]
    v = np.array([-_random._det_log(u) / lambd for u in us])
    np.testing.assert_array_equal(a, round_to(v, t))


@pytest.mark.parametrize("low,high,per", [(-10, 90, 4), (0, 2**16, 4), (5, 5 + 2**16 + 1, 2),
                                          (-2**31, 2**31, 2), (-2**63, 2**63 - 1, 1),
                                          (0, 2**32 + 1, 1)])
def test_randint_mapping_exact(low, high, per):
    n, seed, off = 257, 99, 4
    a, new = randint(INT64, n, low, high, seed, off)
    nb = -(-n // per)
    assert new == off + nb
    w = [int(x) for x in words(seed, off, nb)]
    r = high - low
    if per == 4:
        offs = [(x * r) >> 32 for x in w[:n]]
    elif per == 2:
        offs = [((w[2 * i] | (w[2 * i + 1] << 32)) * r) >> 64 for i in range(n)]
    else:
        offs = [((w[4 * i] | (w[4 * i + 1] << 32) | (w[4 * i + 2] << 64) | (w[4 * i + 3] << 96))
                 * r) >> 128 for i in range(n)]
    assert [int(x) for x in a] == [low + o for o in offs]


def test_bernoulli_mapping_exact():
    n, seed, off = 1001, 8, 2
    p = np.random.default_rng(0).uniform(-0.1, 1.1, 2 * n)
    for stride in (0, 1, 2):
        a, new = bernoulli(UINT8, n, p, seed, off, stride=stride)
        assert new == off + (n + 3) // 4
        w = words(seed, off, (n + 3) // 4)[:n].astype(np.float64) * 2.0**-32
        pi = p[np.arange(n) * stride]
        np.testing.assert_array_equal(a, (w < pi).astype(np.uint8))


# --------------------------------------------------------------------------
# determinism, offsets, stream continuity
# --------------------------------------------------------------------------
def test_determinism_and_offsets():
    for kern in (lambda off: uniform(F32, 1000, 7, off),
                 lambda off: normal(F64, 1000, 7, off),
                 lambda off: randint(INT32, 1000, -5, 5, 7, off),
                 lambda off: exponential(F16, 1000, 1.0, 7, off),
                 lambda off: bernoulli(BOOL, 1000, 0.5, 7, off),
                 lambda off: randperm(1000, 7, off)):
        a1, n1 = kern(10)
        a2, n2 = kern(10)
        a3, _ = kern(11)
        assert a1.tobytes() == a2.tobytes() and n1 == n2
        assert a1.tobytes() != a3.tobytes()
    assert not np.array_equal(uniform(F32, 100, 1)[0], uniform(F32, 100, 2)[0])


@pytest.mark.parametrize("t,n,consumed", [(F32, 10, 3), (F16, 8, 2), (BF16, 1, 1), (F64, 3, 2),
                                          (C64, 3, 2), (C128, 3, 3), (F32, 0, 0)])
def test_offsets_uniform_normal(t, n, consumed):
    assert uniform(t, n, 1, 100)[1] == 100 + consumed
    assert normal(t, n, 1, 100)[1] == 100 + consumed


def test_offsets_other_kernels():
    assert randint(INT8, 10, 0, 100, 0, 5)[1] == 5 + 3
    assert randint(INT64, 10, 0, 2**20, 0, 5)[1] == 5 + 5
    assert randint(INT64, 10, 0, 2**40, 0, 5)[1] == 5 + 10
    assert bernoulli(F32, 10, 0.5, 0, 5)[1] == 5 + 3
    assert exponential(F32, 10, 1.0, 0, 5)[1] == 5 + 3
    assert exponential(F64, 10, 1.0, 0, 5)[1] == 5 + 5
    assert multinomial([[0.5, 0.5]] * 3, 5, True, 0, 5)[1] == 5 + 8
    assert multinomial([[0.2, 0.3, 0.5]] * 3, 2, False, 0, 5)[1] == 5 + 5
    assert randperm(0, 0, 5)[1] == 5
    a, new = randperm(1, 0, 5)
    assert a.tolist() == [0] and new == 5
    assert randperm(10, 0, 5)[1] == 5 + 5


def test_stream_continuity():
    a, off = uniform(F32, 8, 3, 0)
    b, off2 = uniform(F32, 12, 3, off)
    c, off3 = uniform(F32, 20, 3, 0)
    np.testing.assert_array_equal(np.concatenate([a, b]), c)
    assert off2 == off3 == 5


def test_offset_wraps_modulo_2_64():
    a, new = uniform(F32, 8, 9, 2**64 - 1)
    assert new == 1
    w = np.concatenate([words(9, 2**64 - 1, 1), words(9, 0, 1)])
    np.testing.assert_array_equal(a, ((w >> np.uint32(8)).astype(np.float64) * 2.0**-24)
                                  .astype(np.float32))


# --------------------------------------------------------------------------
# independence from the thread count
# --------------------------------------------------------------------------
def _all_kernels_bytes():
    n = 3 * 8192 + 5
    probs = np.random.default_rng(5).uniform(0, 1, (64, 300))
    probs[:, ::7] = 0.0
    out = []
    for t in (F16, BF16, F32, F64, C64, C128):
        out.append(uniform(t, n, 11, 3, -1.0, 2.0))
        out.append(normal(t, n, 11, 3, 1.0, 2.0))
    for t in FLOAT_TYPES:
        out.append(exponential(t, n, 0.5, 11, 3))
    for t in range(F64 + 1):
        out.append(randint(t, n, -3, 100, 11, 3))
        out.append(bernoulli(t, n, 0.25, 11, 3))
    out.append(randint(INT64, n, -2**62, 2**62, 11, 3))
    out.append(randint(INT64, n, 0, 3 * 10**9, 11, 3))
    out.append(bernoulli(F32, n, np.linspace(0, 1, n), 11, 3))
    out.append(randperm(300_007, 11, 3))
    out.append(randperm(5000, 11, 3))
    out.append(multinomial(probs, 40, False, 11, 3))
    out.append(multinomial(probs, 300, True, 11, 3))
    out.append(multinomial(probs[:2], 30000, True, 11, 3))
    return [(a.tobytes(), new) for a, new in out]


def test_thread_count_independence(threads):
    if not _parallel._have_openmp():
        pytest.skip("built without OpenMP")
    _parallel._set_parallel_grain(64)
    _parallel._set_num_threads(1)
    one = _all_kernels_bytes()
    _parallel._set_num_threads(2)
    two = _all_kernels_bytes()
    _parallel._set_num_threads(3)
    three = _all_kernels_bytes()
    assert len(one) == len(two) == len(three)
    for i, (x, y, z) in enumerate(zip(one, two, three)):
        assert x == y == z, f"kernel #{i} depends on the thread count"


# --------------------------------------------------------------------------
# statistics (fixed seeds; loose but failing-capable bounds)
# --------------------------------------------------------------------------
N = 1_000_000


@pytest.mark.parametrize("t", [F32, F64])
def test_uniform_stats(t):
    a, _ = uniform(t, N, 123, 0)
    x = a.astype(np.float64)
    assert 0.0 <= x.min() and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 2e-3
    assert abs(x.var() - 1 / 12) < 1e-3
    assert stats.kstest(x, "uniform").pvalue > 1e-4
    a, _ = uniform(t, N, 124, 0, -3.0, 5.0)
    x = a.astype(np.float64)
    assert -3.0 <= x.min() and x.max() < 5.0
    assert stats.kstest(x, stats.uniform(loc=-3.0, scale=8.0).cdf).pvalue > 1e-4


@pytest.mark.parametrize("t,below_one", [(F16, 0.99951171875), (BF16, 0.99609375),
                                         (F32, 1 - 2.0**-24)])
def test_uniform_stays_below_high(t, below_one):
    a, _ = uniform(t, N, 5, 0)
    x = to_f64(a, t)
    assert x.min() >= 0.0
    assert x.max() < 1.0
    if t != F32:
        # rounding up to 1.0 happens ~N/2^12 (f16) / N/2^9 (bf16) times: clamped
        assert x.max() == below_one
        assert np.count_nonzero(x == below_one) > 50
    for low, high in [(0.0, 0.1), (-1.0, 0.3), (1.0, 1.0009765625), (-65504.0, 65504.0)]:
        a, _ = uniform(t, 200_000, 6, 0, low, high)
        x = to_f64(a, t)
        assert np.all(x < high), (t, low, high)
        assert np.all(x >= to_f64(round_to(np.array([low]), t), t)[0])


def test_uniform_degenerate_ranges():
    a, _ = uniform(F32, 100, 1, 0, 2.0, 2.0)
    assert np.all(a == 2.0)
    a, _ = uniform(F16, 100, 1, 0, 1.0, 1.0 + 2.0**-11)   # no half in [low, high) but 1.0
    assert np.all(a == 1.0)
    a, _ = uniform(F64, 100, 1, 0, -0.5, -0.5)
    assert np.all(a == -0.5)


def test_uniform_complex():
    a, _ = uniform(C64, N // 2, 7, 0, -1.0, 1.0)
    for part in (a.real, a.imag):
        assert part.min() >= -1.0 and part.max() < 1.0
        assert abs(part.mean()) < 5e-3
    assert abs(np.corrcoef(a.real, a.imag)[0, 1]) < 5e-3


@pytest.mark.parametrize("t", [F32, F64, F16, BF16])
def test_normal_stats(t):
    a, _ = normal(t, N, 321, 0)
    x = to_f64(a, t)
    assert abs(x.mean()) < 5e-3
    assert abs(x.var() - 1.0) < 1e-2
    assert abs(stats.skew(x)) < 1e-2
    assert abs(stats.kurtosis(x)) < 2e-2
    if t in (F32, F64):
        assert stats.kstest(x, "norm").pvalue > 1e-4
    a, _ = normal(t, N, 322, 0, 3.0, 0.5)
    x = to_f64(a, t)
    assert abs(x.mean() - 3.0) < 5e-3
    assert abs(x.std() - 0.5) < 5e-3


@pytest.mark.parametrize("t", [C64, C128])
def test_normal_complex(t):
    a, _ = normal(t, N // 2, 9, 0, 1.0, 2.0)
    for part in (a.real, a.imag):
        assert abs(part.mean() - 1.0) < 1e-2
        assert abs(part.var() - 2.0) < 3e-2          # std^2 / 2
    assert abs(np.corrcoef(a.real, a.imag)[0, 1]) < 5e-3
    assert stats.kstest((a.real - 1.0) / math.sqrt(2.0), "norm").pvalue > 1e-4


def test_normal_zero_std():
    a, _ = normal(F32, 1000, 1, 0, 4.0, 0.0)
    assert np.all(a == 4.0)


@pytest.mark.parametrize("t", [F32, F64, F16, BF16])
def test_exponential_stats(t):
    lambd = 2.0
    a, _ = exponential(t, N, lambd, 77, 0)
    x = to_f64(a, t)
    assert x.min() >= 0.0 and np.all(np.isfinite(x))
    if t in (F32, F64):
        assert x.min() > 0.0
    assert abs(x.mean() - 0.5) < 3e-3
    assert abs(x.var() - 0.25) < 5e-3
    if t in (F32, F64):
        assert stats.kstest(x, stats.expon(scale=1 / lambd).cdf).pvalue > 1e-4


@pytest.mark.parametrize("t,low,high", [(INT8, -128, 128), (UINT8, 0, 256), (BOOL, 0, 2),
                                        (INT16, -2**15, 2**15), (INT32, -7, 9),
                                        (INT64, -1000, -990), (F32, -5, 5), (F16, 0, 2048),
                                        (BF16, -100, 100), (F64, 10, 20)])
def test_randint_covers_range(t, low, high):
    a, _ = randint(t, 300_000, low, high, 31, 0)
    x = to_f64(a, t) if t in FLOAT_TYPES else a.astype(np.int64)
    assert x.min() == low and x.max() == high - 1
    assert np.all(x == np.floor(x))
    if high - low <= 256:
        counts = np.bincount((x - low).astype(np.int64), minlength=high - low)
        assert np.all(counts > 0)
        assert stats.chisquare(counts).pvalue > 1e-4


def test_randint_wide_ranges():
    # full int32 range (tier 1, r = 2^32) and 64-bit ranges
    a, _ = randint(INT32, N, -2**31, 2**31, 1, 0)
    assert abs(a.astype(np.float64).mean()) / 2**31 < 5e-3
    a, _ = randint(INT64, N, -2**63, 2**63 - 1, 2, 0)
    x = a.astype(np.float64) / 2.0**63
    assert x.min() >= -1 and x.max() < 1
    assert abs(x.mean()) < 5e-3
    assert stats.kstest(x, stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-4
    # tier 2 with a range that 32-bit multiply-shift would badly bias
    r = 3 * 10**9
    a, _ = randint(INT64, N, 0, r, 3, 0)
    assert a.min() >= 0 and a.max() < r
    counts = np.bincount((a // (r // 30)).astype(np.int64), minlength=30)
    assert stats.chisquare(counts).pvalue > 1e-4
    # a 32-bit (resp. 64-bit) multiply-shift would give v % 3 == 0 probability
    # 1/2 for r = 3 * 2^30 (resp. 3 * 2^62); the 64/128-bit fractions do not
    a, _ = randint(INT64, 300_000, 0, 3 * 2**30, 5, 0)
    assert stats.chisquare(np.bincount(a % 3, minlength=3)).pvalue > 1e-4
    a, _ = randint(INT64, 300_000, -2**63, 2**62, 6, 0)
    v = a.view(np.uint64) ^ np.uint64(2**63)          # a - low, exactly
    assert stats.chisquare(np.bincount((v % np.uint64(3)).astype(np.int64),
                                       minlength=3)).pvalue > 1e-4
    # extremes of the int64 domain
    a, _ = randint(INT64, 1000, 2**63 - 3, 2**63 - 1, 4, 0)
    assert set(a.tolist()) == {2**63 - 3, 2**63 - 2}
    a, _ = randint(INT64, 1000, -2**63, -2**63 + 1, 4, 0)
    assert np.all(a == -2**63)


@pytest.mark.parametrize("t", [BOOL, UINT8, INT8, INT16, INT32, INT64, F16, BF16, F32, F64])
def test_bernoulli_stats(t):
    a, _ = bernoulli(t, N, 0.3, 12, 0)
    x = to_f64(a, t)
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert abs(x.mean() - 0.3) < 3e-3
    assert np.all(bernoulli(t, 1000, 0.0)[0] == 0)
    assert np.all(to_f64(bernoulli(t, 1000, 1.0)[0], t) == 1)


def test_bernoulli_per_element_p():
    p = np.repeat([0.0, 0.1, 0.5, 0.9, 1.0], 200_000)
    a, _ = bernoulli(F32, p.size, p, 13, 0)
    means = a.reshape(5, -1).mean(axis=1)
    np.testing.assert_allclose(means, [0.0, 0.1, 0.5, 0.9, 1.0], atol=4e-3)
    assert means[0] == 0.0 and means[-1] == 1.0


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 100, 2**14, 2**14 + 1, 100_003, 1_000_000])
def test_randperm_is_permutation(n):
    a, _ = randperm(n, 17, 0)
    np.testing.assert_array_equal(np.sort(a), np.arange(n))
    if n >= 100:
        assert not np.array_equal(a, np.arange(n))


def _ref_randperm(n, seed, offset):
    """Python re-implementation of the documented randperm mapping."""
    m = 0
    while m < 20 and n > 2**(14 + m):
        m += 1
    key = (seed & MASK32, seed >> 32)
    if m:
        A = -(-n // 4)
        b = words(seed, offset, A)[:n] >> np.uint32(32 - m)
        order = np.argsort(b, kind="stable")
        sizes = np.bincount(b, minlength=2**m)
    else:
        A = 0
        order = np.arange(n)
        sizes = np.array([n])
    out = order.astype(np.int64)
    start = 0
    Q = 0
    for j, L in enumerate(sizes.tolist()):
        seg = out[start:start + L]
        t, d = L - 1, 0
        while t >= 1:
            c = offset + A + d // 2
            w = ref_philox((c & MASK32, c >> 32, j, 0), key)
            D = w[2 * (d % 2)] | (w[2 * (d % 2) + 1] << 32)
            k = (D * (t + 1)) >> 64
            seg[t], seg[k] = seg[k], seg[t]
            t -= 1
            d += 1
        Q = max(Q, L // 2)
        start += L
    return out, offset + A + Q


@pytest.mark.parametrize("n", [2, 7, 1000, 2**14 + 37, 2**16 + 3])
def test_randperm_mapping_exact(n, simd):
    # (Fisher-Yates draws its blocks in batches from the vector Philox loop: 1000 and
    # 2**14 + 37 elements span several batches, at every vector level)
    a, new = randperm(n, 0xFEED, 1234)
    ref, ref_new = _ref_randperm(n, 0xFEED, 1234)
    np.testing.assert_array_equal(a, ref)
    assert new == ref_new


def test_randperm_uniform_small():
    counts = {}
    off = 0
    for _ in range(24_000):
        a, off = randperm(4, 99, off)
        counts[tuple(a)] = counts.get(tuple(a), 0) + 1
    assert len(counts) == 24
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4


def test_randperm_uniform_bucketed():
    # n > 2^14: the bucketed (two-phase) path; positions of fixed elements
    n, trials, bins = 2**14 + 1, 1500, 10
    pos0 = np.zeros(bins, np.int64)
    posl = np.zeros(bins, np.int64)
    off = 0
    for _ in range(trials):
        a, off = randperm(n, 5, off)
        where = np.empty(n, np.int64)
        where[a] = np.arange(n)
        pos0[where[0] * bins // n] += 1
        posl[where[n - 1] * bins // n] += 1
    assert stats.chisquare(pos0).pvalue > 1e-4
    assert stats.chisquare(posl).pvalue > 1e-4


def test_multinomial_with_replacement():
    probs = np.array([[0.1, 0.0, 0.4, 0.2, 0.3],
                      [0.0, 0.0, 1.0, 0.0, 0.0],
                      [5.0, 1.0, 0.0, 2.0, 0.0]])   # unnormalised rows are fine
    out, new = multinomial(probs, 200_000, True, 42, 0)
    assert new == (3 * 200_000 + 1) // 2
    for r in range(3):
        counts = np.bincount(out[r], minlength=5)
        nz = probs[r] > 0
        assert np.all(counts[~nz] == 0)
        exp = probs[r][nz] / probs[r].sum() * 200_000
        if nz.sum() > 1:
            assert stats.chisquare(counts[nz], exp).pvalue > 1e-4
        else:
            assert counts[nz][0] == 200_000


def test_multinomial_with_replacement_mapping_exact():
    probs = np.array([[0.25, 0.0, 0.5, 0.25], [1.0, 2.0, 3.0, 0.0]])
    out, _ = multinomial(probs, 7, True, 3, 10)
    d = pairs64(words(3, 10, 7))
    for r in range(2):
        cdf = []
        s = 0.0
        for p in probs[r]:
            s += p
            cdf.append(s)
        for j in range(7):
            u = float(d[r * 7 + j] >> np.uint64(11)) * 2.0**-53
            target = u * cdf[-1]
            assert out[r, j] == next(k for k, c in enumerate(cdf) if c > target)


def test_multinomial_without_replacement():
    rng = np.random.default_rng(0)
    probs = rng.uniform(0, 1, (500, 50))
    probs[:, rng.choice(50, 10, replace=False)] = 0.0
    out, new = multinomial(probs, 40, False, 7, 0)
    assert new == (500 * 50 + 1) // 2
    for r in range(500):
        assert len(set(out[r].tolist())) == 40
        assert np.all(probs[r, out[r]] > 0)
        assert set(out[r].tolist()) == set(np.flatnonzero(probs[r]).tolist())
    # asking for fewer than the positive categories never yields a zero one
    out, _ = multinomial(probs, 15, False, 8, 0)
    assert np.all(probs[np.arange(500)[:, None], out] > 0)


def test_multinomial_without_replacement_frequencies():
    p = np.array([0.5, 0.2, 0.2, 0.1])
    rows = 40_000
    out, _ = multinomial(np.tile(p, (rows, 1)), 2, False, 9, 0)
    assert np.all(out[:, 0] != out[:, 1])
    first = np.bincount(out[:, 0], minlength=4)
    assert stats.chisquare(first, p * rows).pvalue > 1e-4
    # second draw of sequential sampling: P(j) = sum_i p_i p_j / (1 - p_i)
    second_p = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j)
                         for j in range(4)])
    second = np.bincount(out[:, 1], minlength=4)
    assert stats.chisquare(second, second_p * rows).pvalue > 1e-4


def test_multinomial_without_replacement_mapping_exact():
    probs = np.array([[0.3, 0.0, 0.2, 0.5, 0.1], [1.0, 1.0, 0.0, 1.0, 3.0]])
    out, _ = multinomial(probs, 3, False, 21, 6)
    d = pairs64(words(21, 6, 5))
    for r in range(2):
        keys = []
        for c in range(5):
            u = (float(d[r * 5 + c] >> np.uint64(12)) + 0.5) * 2.0**-52
            keys.append((-_random._det_log(u) / probs[r, c]) if probs[r, c] > 0 else math.inf)
        expected = sorted(range(5), key=lambda c: (keys[c], c))[:3]
        assert out[r].tolist() == expected


# --------------------------------------------------------------------------
# deterministic math helpers
# --------------------------------------------------------------------------
def test_det_log_accuracy():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.integers(1, 2**53, 20000) * 2.0**-53,
                        1.0 - rng.integers(0, 2**32, 20000) * 2.0**-32,
                        np.exp(-rng.uniform(0, 700, 5000)), [1.0, 0.5, 2.0**-53]])
    got = np.array([_random._det_log(v) for v in x])
    ref = np.log(x.astype(np.longdouble))
    err = np.abs((got.astype(np.longdouble) - ref) / np.spacing(np.abs(got)).astype(np.longdouble))
    assert float(err.max()) < 1.0
    assert _random._det_log(1.0) == 0.0


def test_det_sincos2pi_accuracy():
    rng = np.random.default_rng(4)
    u = np.concatenate([rng.integers(0, 2**53, 20000) * 2.0**-53, np.arange(64) / 64])
    got = np.array([_random._det_sincos2pi(v) for v in u])
    th = 8 * np.arctan(np.longdouble(1)) * u.astype(np.longdouble)
    assert float(np.abs(got[:, 0] - np.sin(th)).max()) < 3e-16
    assert float(np.abs(got[:, 1] - np.cos(th)).max()) < 3e-16
    assert _random._det_sincos2pi(0.0) == (0.0, 1.0)
    assert _random._det_sincos2pi(0.25) == (1.0, -0.0)


# --------------------------------------------------------------------------
# wrapper validation
# --------------------------------------------------------------------------
def test_rejects_unsupported_dtypes():
    buf = np.zeros(64, np.uint8)
    addr = buf.ctypes.data
    with pytest.raises(TypeError, match="5"):
        _random.fill_uniform_addr(addr, INT64, 4, 0, 0, 0.0, 1.0)
    with pytest.raises(TypeError, match="0"):
        _random.fill_normal_addr(addr, BOOL, 4, 0, 0, 0.0, 1.0)
    with pytest.raises(TypeError, match="10"):
        _random.fill_randint_addr(addr, C64, 4, 0, 0, 0, 5)
    with pytest.raises(TypeError, match="11"):
        _random.fill_bernoulli_addr(addr, C128, 4, 0, 0, np.zeros(1).ctypes.data, 0)
    with pytest.raises(TypeError, match="10"):
        _random.fill_exponential_addr(addr, C64, 4, 0, 0, 1.0)
    with pytest.raises(TypeError, match="99"):
        _random.fill_uniform_addr(addr, 99, 4, 0, 0, 0.0, 1.0)
    with pytest.raises(TypeError, match="-1"):
        _random.fill_randint_addr(addr, -1, 4, 0, 0, 0, 5)
    assert not buf.any()


def test_rejects_bad_arguments():
    a = np.zeros(8)
    addr = a.ctypes.data
    with pytest.raises(ValueError):
        _random.fill_uniform_addr(addr, F64, 4, 0, 0, 1.0, 0.0)
    with pytest.raises(ValueError):
        _random.fill_uniform_addr(addr, F64, 4, 0, 0, -1e308, 1e308)
    with pytest.raises(ValueError):
        _random.fill_normal_addr(addr, F64, 4, 0, 0, 0.0, -1.0)
    with pytest.raises(ValueError):
        _random.fill_randint_addr(addr, F64, 4, 0, 0, 3, 3)
    with pytest.raises(ValueError):
        _random.fill_exponential_addr(addr, F64, 4, 0, 0, 0.0)
    with pytest.raises(ValueError):
        _random.fill_uniform_addr(addr, F64, -1, 0, 0, 0.0, 1.0)
    with pytest.raises(ValueError):
        _random.fill_uniform_addr(0, F64, 4, 0, 0, 0.0, 1.0)
    with pytest.raises(ValueError):
        _random.randperm_addr(0, 4, 0, 0)
    with pytest.raises(ValueError):
        _random.fill_bernoulli_addr(addr, F64, 4, 0, 0, 0, 0)
    with pytest.raises(OverflowError):
        _random.fill_uniform_addr(addr, F64, 4, -1, 0, 0.0, 1.0)
    with pytest.raises(ValueError):
        multinomial([[0.5, 0.5]], 3, False)
    with pytest.raises(ValueError):
        _random.philox_block((0, 0, 0), (0, 0))
    with pytest.raises(ValueError):
        _random.philox_block((0, 0, 0, 2**32), (0, 0))
    assert not a.any()
    # n == 0 touches nothing and consumes nothing
    assert _random.fill_uniform_addr(0, F32, 0, 0, 9, 0.0, 1.0) == 9
