# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Counter-based random kernels: one Philox4x32-10 stream for every distribution.

Generator
---------
Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as
1, 2, 3", SC'11; the Random123 / curand algorithm).  Constants
``M0 = 0xD2511F53``, ``M1 = 0xCD9E8D57``, ``W0 = 0x9E3779B9``,
``W1 = 0xBB67AE85``; one round maps counter ``(c0, c1, c2, c3)`` with key
``(k0, k1)`` to ``(hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1,
lo(M0*c0))`` (32x32 -> 64-bit products), and the key is bumped by
``(W0, W1)`` (mod 2^32) between rounds; 10 rounds.

Generator state is ``(seed, offset)`` (both uint64).  Block ``q`` (q = 0, 1,
...) of a call is ``X_q = (x0, x1, x2, x3) = philox4x32_10(ctr, key)`` with
``ctr = (lo32(offset + q), hi32(offset + q), 0, 0)`` (offset + q taken mod
2^64) and ``key = (lo32(seed), hi32(seed))``.  A call consuming ``B`` blocks
returns ``offset + B`` (mod 2^64), which the caller stores as the new offset,
so consecutive calls never reuse a counter.  Only randperm's second phase uses
a non-zero third counter word (below).

Notation: ``x`` is a word of the element's block, ``(a, b)`` a word pair read
as the 64-bit integer ``D = a + 2^32 * b`` (``a`` the even word).  All float
arithmetic below is IEEE double, round-to-nearest-even, one rounding per
written operation (``fl(...)``), never fused: products that feed an addition
pass an optimisation barrier (``ptc_nc``/``PTC_MUL``), so no FMA contraction
whatever the compiler flags.  ``sqrt`` is the IEEE (correctly rounded) square
root; ``log`` is ``ptc_log`` (fdlibm's e_log.c algorithm, < 1 ulp) and
``sincos2pi(u) = (sin 2 pi u, cos 2 pi u)`` is ``ptc_sincos2pi`` (exact
quadrant reduction of 4u, Taylor polynomials, ~1 ulp), both written out in
this file using only +, -, *, / and bit operations, so a port that evaluates
them in the same order (CUDA: __dadd_rn/__dmul_rn/__ddiv_rn/__dsqrt_rn)
reproduces every distribution bit for bit; the C library's log/sin/cos are not
used.  Results for the 32-bit-and-narrower float types are rounded from double
to float32, and float16/bfloat16 from that float32 (RNE each, ptc_half.h).

``S`` below is the number of real scalars: ``n``, or ``2n`` for complex (a
complex element ``i`` is the scalars ``2i`` (real) and ``2i+1`` (imag), i.e.
the output viewed as a real array).  "32-bit kinds" = float16, bfloat16,
float32, complex64; "64-bit kinds" = float64, complex128.

uniform(low, high)  [rng = fl(high - low)]
    32-bit kinds: scalar s -> block s//4, word s%4; ``u = (x >> 8) * 2^-24``.
        Blocks: ceil(S/4).
    64-bit kinds: scalar s -> block s//2, pair (x_{2(s%2)}, x_{2(s%2)+1});
        ``u = (D >> 11) * 2^-53``.  Blocks: ceil(S/2).
    value ``v = fl(low + fl(rng * u))``, rounded to the dtype; if the rounded
    value is ``>= high`` it is replaced by the largest value of the dtype
    below ``high`` (or by ``low`` rounded to the dtype when no dtype value lies
    in ``[low, high)``, e.g. low == high).  Hence always ``< high``.

normal(mean, std)  (Box-Muller)  [sd = std; complex: sd = fl(std * 0.7071067811865476)]
    32-bit kinds: scalar s -> block s//4, pair p = (s%4)//2 = words
        (x_{2p}, x_{2p+1}); ``u1 = 1 - x_{2p} * 2^-32`` in (0, 1],
        ``u2 = x_{2p+1} * 2^-32``.  Blocks: ceil(S/4).
    64-bit kinds: scalar s -> block s//2 (one pair per block);
        ``u1 = 1 - (D(x0, x1) >> 11) * 2^-53``, ``u2 = (D(x2, x3) >> 11) * 2^-53``.
        Blocks: ceil(S/2).
    ``r = sqrt(-2 * log(u1))``, ``(sn, cs) = sincos2pi(u2)``; even scalar
    (s%2 == 0): ``z = r * cs``, odd: ``z = r * sn``; value
    ``fl(mean + fl(sd * z))`` rounded to the dtype.  (A complex element is one
    Box-Muller pair: real = r*cs, imag = r*sn.)  Tails reach 6.66 sd (32-bit
    kinds) and 8.57 sd (64-bit kinds).

randint(low, high)  [r = high - low as uint64, 1 <= r <= 2^64 - 1]
    r <= 2^16:  element i -> block i//4, word i%4;  off = (x * r) >> 32.
        Blocks: ceil(n/4).
    r <= 2^32:  element i -> block i//2, pair (x_{2(i%2)}, x_{2(i%2)+1});
        off = (D * r) >> 64.  Blocks: ceil(n/2).
    otherwise:  element i -> block i; 128-bit X = D(x0,x1) + 2^64 D(x2,x3);
        off = (X * r) >> 128.  Blocks: n.
    value = low + off (exact int64), then C-cast to the dtype (bool: != 0;
    narrower ints wrap; floats: int64 -> double -> dtype).  Multiply-shift
    without rejection keeps elements independent; the relative bias of any
    value's probability is below 2^-16, 2^-32, 2^-64 in the three tiers.

bernoulli(p)
    element i -> block i//4, word i%4; value 1 iff ``x * 2^-32 < p_i``
    (exact), i.e. P(1) = ceil(p_i * 2^32) / 2^32 for p_i in [0, 1];
    p_i >= 1 -> always 1, p_i <= 0 or NaN -> always 0.  Blocks: ceil(n/4).
    p_i = p[i * p_stride] (stride in elements).

exponential(lambd)
    32-bit kinds (float16, bfloat16, float32): element i -> block i//4,
        word i%4; ``u = (x + 0.5) * 2^-32``.  Blocks: ceil(n/4).
    float64: element i -> block i//2, pair (x_{2(i%2)}, x_{2(i%2)+1});
        ``u = ((D >> 12) + 0.5) * 2^-52``.  Blocks: ceil(n/2).
    u is in (0, 1) exactly, so ``-log(u) > 0``; value ``fl(-log(u) / lambd)``
    rounded to the dtype.

randperm(n)  (Rao-Sandelius: random buckets, then Fisher-Yates per bucket)
    m = smallest m >= 0 with n <= 2^(14+m), capped at 20; nb = 2^m buckets.
    Phase A (only if m > 0): element i -> block i//4, word i%4; its bucket is
        ``x >> (32 - m)``.  A = ceil(n/4) blocks (A = 0 if m == 0).
    The indices are stably grouped by bucket: dst = bucket 0's indices in
    increasing order, then bucket 1's, ...  (m == 0: dst = 0..n-1.)
    Phase B: bucket j with L_j members at dst[S_j : S_j + L_j] is shuffled by
        Fisher-Yates: the d-th draw (d = 0, 1, ...) serves t = L_j - 1 - d
        (while t >= 1) and uses the block with counter
        ``(lo32(offset + A + d//2), hi32(offset + A + d//2), j, 0)``, pair
        (x_{2(d%2)}, x_{2(d%2)+1}); ``k = (D * (t + 1)) >> 64`` in [0, t];
        swap dst[S_j + t] and dst[S_j + k].
    Blocks consumed: A + max_j ceil((L_j - 1) / 2) (= A + max_j floor(L_j/2)).
    The result is a uniformly random permutation up to the multiply-shift
    draws' relative bias <= (t + 1) / 2^64.

multinomial(probs rows x cats, num_samples)
    with replacement: sample (row r, s) is element e = r*num_samples + s ->
        block e//2, pair (x_{2(e%2)}, x_{2(e%2)+1}); ``u = (D >> 11) * 2^-53``;
        ``cdf_k = fl(...fl(p_0 + p_1)... + p_k)`` (left-to-right sums),
        ``target = fl(u * cdf_{cats-1})``; the sample is the smallest k with
        ``cdf_k > target`` (binary search), or the last category with p > 0
        (cats - 1 if none) when rounding leaves none.  Rows need not be
        normalised.  Blocks: ceil(rows*num_samples/2).
    without replacement (exponential race = sequential sampling without
        replacement): category c of row r is element e = r*cats + c -> block
        e//2, pair as above; ``u = ((D >> 12) + 0.5) * 2^-52``,
        ``key = min(fl(-log(u) / p_c), DBL_MAX)`` for p_c > 0 and +inf for
        p_c == 0; the row's samples are the num_samples categories with the
        smallest (key, c), in increasing order of key (ties by index), so
        zero-probability categories are never drawn while positive ones
        remain.  Blocks: ceil(rows*cats/2).

Implementation
--------------
Blocks are generated 8 at a time with AVX2 (chosen at run time), else 4 at a
time with SSE2, else one by one; Box-Muller and -log(u) run 4 lanes wide
with AVX2 (same operations in the same order, barriers against fusing), else
scalar.  Words and values are identical on every path.  The
block range is split into fixed chunks run with
``prange(num_threads=get_num_threads())`` once the output has at least
``parallel_grain()`` elements; every value is a function of its element index
only, so results are identical for any thread count (randperm: phase A is a
stable counting sort by bucket, phase B runs buckets in parallel;
multinomial without replacement runs rows in parallel).  The kernels are
``noexcept nogil`` and never raise: an unsupported dtype or ``n <= 0`` writes
nothing and returns ``offset``; the ``*_addr`` wrappers validate arguments
and raise TypeError/ValueError first.
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, ptc_scratch_calloc, scratch_bind
from libc.math cimport sqrt, nextafter, nextafterf, isfinite, INFINITY
from cython.parallel cimport prange, threadid

from ptcore._ops.kernels._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128,
    ptc_half_to_float, ptc_float_to_half, ptc_bf16_to_float, ptc_float_to_bf16,
)
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit, _TensorBase
from ptcore._tensor cimport _empty_contig, dtype, device
from ptcore._tensor import get_default_dtype as _get_default_dtype, device as _device_type
scratch_bind()      # this module's scratch requests obey _fault's test switch


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <float.h>
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #define PTC_PHILOX_SSE2 1
    #else
    #define PTC_PHILOX_SSE2 0
    #endif

    #define PTC_PHILOX_M0 0xD2511F53u
    #define PTC_PHILOX_M1 0xCD9E8D57u
    #define PTC_PHILOX_W0 0x9E3779B9u
    #define PTC_PHILOX_W1 0xBB67AE85u

    /* One Philox4x32-10 block, scalar reference. */
    static inline void ptc_philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                         uint32_t k0, uint32_t k1, uint32_t *out)
    {
        int r;
        for (r = 0; r < 10; ++r) {
            uint64_t p0 = (uint64_t)PTC_PHILOX_M0 * c0;
            uint64_t p1 = (uint64_t)PTC_PHILOX_M1 * c2;
            uint32_t y0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
            uint32_t y2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
            c1 = (uint32_t)p1;
            c3 = (uint32_t)p0;
            c0 = y0;
            c2 = y2;
            k0 += PTC_PHILOX_W0;
            k1 += PTC_PHILOX_W1;
        }
        out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
    }

    /* Block for the 64-bit counter ``ctr`` (words 0, 1) and third word c2. */
    static inline void ptc_philox_ctr(uint64_t ctr, uint32_t c2, uint32_t k0, uint32_t k1,
                                      uint32_t *out)
    {
        ptc_philox4x32_10((uint32_t)ctr, (uint32_t)(ctr >> 32), c2, 0u, k0, k1, out);
    }

    #if PTC_PHILOX_SSE2
    /* lo/hi 32-bit halves of the four products a[l] * m (m broadcast). */
    static inline void ptc__mulhilo4(__m128i a, __m128i m, __m128i *hi, __m128i *lo)
    {
        const __m128i lomask = _mm_set1_epi64x(0xffffffffLL);
        __m128i ev = _mm_mul_epu32(a, m);                       /* lanes 0, 2 */
        __m128i od = _mm_mul_epu32(_mm_srli_epi64(a, 32), m);   /* lanes 1, 3 */
        *lo = _mm_or_si128(_mm_and_si128(ev, lomask), _mm_slli_epi64(od, 32));
        *hi = _mm_or_si128(_mm_srli_epi64(ev, 32), _mm_andnot_si128(lomask, od));
    }

    /* 4 blocks ctr0..ctr0+3 -> out[16] (block-major). */
    static inline void ptc__philox_x4(uint64_t ctr0, uint32_t c2, uint32_t k0, uint32_t k1,
                                      uint32_t *out)
    {
        const __m128i m0 = _mm_set1_epi32((int)PTC_PHILOX_M0);
        const __m128i m1 = _mm_set1_epi32((int)PTC_PHILOX_M1);
        uint32_t lo[4], hi[4];
        int l, r;
        for (l = 0; l < 4; ++l) {
            uint64_t cl = ctr0 + (uint64_t)l;
            lo[l] = (uint32_t)cl;
            hi[l] = (uint32_t)(cl >> 32);
        }
        __m128i x0 = _mm_loadu_si128((const __m128i *)lo);
        __m128i x1 = _mm_loadu_si128((const __m128i *)hi);
        __m128i x2 = _mm_set1_epi32((int)c2);
        __m128i x3 = _mm_setzero_si128();
        uint32_t ka = k0, kb = k1;
        for (r = 0; r < 10; ++r) {
            __m128i h0, l0, h1, l1;
            ptc__mulhilo4(x0, m0, &h0, &l0);
            ptc__mulhilo4(x2, m1, &h1, &l1);
            x0 = _mm_xor_si128(_mm_xor_si128(h1, x1), _mm_set1_epi32((int)ka));
            x1 = l1;
            x2 = _mm_xor_si128(_mm_xor_si128(h0, x3), _mm_set1_epi32((int)kb));
            x3 = l0;
            ka += PTC_PHILOX_W0;
            kb += PTC_PHILOX_W1;
        }
        /* 4x4 transpose: lanes are blocks, registers are words. */
        __m128i t0 = _mm_unpacklo_epi32(x0, x1); /* b0w0 b0w1 b1w0 b1w1 */
        __m128i t1 = _mm_unpacklo_epi32(x2, x3); /* b0w2 b0w3 b1w2 b1w3 */
        __m128i t2 = _mm_unpackhi_epi32(x0, x1); /* b2w0 b2w1 b3w0 b3w1 */
        __m128i t3 = _mm_unpackhi_epi32(x2, x3); /* b2w2 b2w3 b3w2 b3w3 */
        __m128i *o = (__m128i *)out;
        _mm_storeu_si128(o + 0, _mm_unpacklo_epi64(t0, t1));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi64(t0, t1));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi64(t2, t3));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi64(t2, t3));
    }
    #endif

    /* AVX2: 8 blocks per step, selected at run time (same integer results). */
    #if defined(__GNUC__) && defined(__x86_64__) && !defined(PTC_NO_AVX2)
    #include <immintrin.h>
    #define PTC_PHILOX_AVX2 1
    /* the vector level the loops use: 0 SSE2/scalar, 1 AVX2, 2 AVX-512F+DQ (16
       Philox blocks, 8 Box-Muller pairs a step); every level gives the same
       bits (the same integer and IEEE operations in the same order, no FMA
       contraction: tests/ops/test_random_kernels.py runs each one the CPU has) */
    static int ptc_use_avx2 = 0;
    static int ptc_use_avx512 = 0;
    static int ptc_simd_max(void)
    {
        __builtin_cpu_init();
        return (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) ? 2
               : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    static void ptc_philox_cpu_init(void)
    {
        int l = ptc_simd_max();
        ptc_use_avx2 = l >= 1;
        ptc_use_avx512 = l >= 2;
    }
    /* test hook: the level to use, capped at the CPU's (-1: the CPU's);
       returns the previous level */
    static int ptc_philox_set_level(int level)
    {
        int prev = ptc_use_avx512 ? 2 : ptc_use_avx2;
        int l = ptc_simd_max();
        if (level >= 0 && level < l) l = level;
        ptc_use_avx2 = l >= 1;
        ptc_use_avx512 = l >= 2;
        return prev;
    }

    /* One Philox round on lanes of blocks (x0..x3: the counter words, one block
       per 32-bit lane) in one width's integer operations: MULU the even lanes'
       32x32->64 products, BLEND(a, b) a's even and b's odd lanes; m0_, m1_ the
       multipliers broadcast, ka_, kb_ the round's key words */
    #define PTC_PHILOX_ROUND(VI, MULU, SRL, SLL, BLEND, XOR, SET1, x0, x1, x2, x3, m0_, m1_,  \
                             ka_, kb_)                                              \
        { VI e0 = MULU(x0, m0_), o0 = MULU(SRL(x0, 32), m0_);                       \
          VI e1 = MULU(x2, m1_), o1 = MULU(SRL(x2, 32), m1_);                       \
          VI l0 = BLEND(e0, SLL(o0, 32)), h0 = BLEND(SRL(e0, 32), o0);              \
          VI l1 = BLEND(e1, SLL(o1, 32)), h1 = BLEND(SRL(e1, 32), o1);              \
          x0 = XOR(XOR(h1, x1), SET1((int)(ka_)));                                  \
          x1 = l1;                                                                  \
          x2 = XOR(XOR(h0, x3), SET1((int)(kb_)));                                  \
          x3 = l0; }
    /* Ten Philox rounds on one set of lanes */
    #define PTC_PHILOX_ROUNDS(VI, MULU, SRL, SLL, BLEND, XOR, SET1, x0, x1, x2, x3, k0, k1)  \
        { const VI m0_ = SET1((int)PTC_PHILOX_M0), m1_ = SET1((int)PTC_PHILOX_M1);     \
          uint32_t ka_ = (k0), kb_ = (k1);                                          \
          for (int r_ = 0; r_ < 10; ++r_) {                                         \
              PTC_PHILOX_ROUND(VI, MULU, SRL, SLL, BLEND, XOR, SET1, x0, x1, x2, x3,    \
                               m0_, m1_, ka_, kb_)                                  \
              ka_ += PTC_PHILOX_W0;                                                 \
              kb_ += PTC_PHILOX_W1;                                                 \
          } }
    #define PTC_BLEND_ODD256(a, b) _mm256_blend_epi32((a), (b), 0xAA)
    #define PTC_BLEND_ODD512(a, b) _mm512_mask_blend_epi32(0xAAAA, (a), (b))

    /* the 8 counters cb + l (l = 0..7) as (low, high) words x0, x1 and the third and
       fourth words c2, 0, computed in registers (scalar stores then a vector load
       stall on store forwarding: a third of the loop's time); a wrapped low word
       (unsigned less than the base: signed after flipping the sign bits) carries 1
       into the high one */
    __attribute__((target("avx2")))
    static inline void ptc__philox_ctr8(uint64_t cb, uint32_t c2, __m256i *x0, __m256i *x1,
                                        __m256i *x2, __m256i *x3)
    {
        const __m256i base = _mm256_set1_epi32((int)(uint32_t)cb);
        const __m256i flip = _mm256_set1_epi32((int)0x80000000u);
        *x0 = _mm256_add_epi32(base, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        *x1 = _mm256_sub_epi32(_mm256_set1_epi32((int)(uint32_t)(cb >> 32)),
                               _mm256_cmpgt_epi32(_mm256_xor_si256(base, flip),
                                                  _mm256_xor_si256(*x0, flip)));
        *x2 = _mm256_set1_epi32((int)c2);
        *x3 = _mm256_setzero_si256();
    }

    /* 8 blocks (lanes are blocks, registers words) -> out[32], block-major */
    __attribute__((target("avx2")))
    static inline void ptc__philox_store8(__m256i x0, __m256i x1, __m256i x2, __m256i x3,
                                          uint32_t *out)
    {
        __m256i t0 = _mm256_unpacklo_epi32(x0, x1); /* b0w0 b0w1 b1w0 b1w1 | b4.. b5.. */
        __m256i t1 = _mm256_unpacklo_epi32(x2, x3);
        __m256i t2 = _mm256_unpackhi_epi32(x0, x1); /* b2.. b3.. | b6.. b7.. */
        __m256i t3 = _mm256_unpackhi_epi32(x2, x3);
        __m256i u0 = _mm256_unpacklo_epi64(t0, t1); /* b0 | b4 */
        __m256i u1 = _mm256_unpackhi_epi64(t0, t1); /* b1 | b5 */
        __m256i u2 = _mm256_unpacklo_epi64(t2, t3); /* b2 | b6 */
        __m256i u3 = _mm256_unpackhi_epi64(t2, t3); /* b3 | b7 */
        __m256i *o = (__m256i *)out;
        _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
        _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
        _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
    }

    #define PTC_PHILOX_ROUND256(x0, x1, x2, x3, m0_, m1_, ka_, kb_)                   \
        PTC_PHILOX_ROUND(__m256i, _mm256_mul_epu32, _mm256_srli_epi64, _mm256_slli_epi64,  \
                         PTC_BLEND_ODD256, _mm256_xor_si256, _mm256_set1_epi32,       \
                         x0, x1, x2, x3, m0_, m1_, ka_, kb_)

    __attribute__((target("avx2")))
    static Py_ssize_t ptc__philox_avx2(uint64_t ctr0, uint32_t c2, uint32_t k0, uint32_t k1,
                                       Py_ssize_t nb, uint32_t *out)
    {
        const __m256i m0 = _mm256_set1_epi32((int)PTC_PHILOX_M0);
        const __m256i m1 = _mm256_set1_epi32((int)PTC_PHILOX_M1);
        Py_ssize_t b = 0;
        /* 16 blocks a step as two sets of 8 whose rounds interleave: one set's
           rounds are a chain of multiply latencies, two keep the multiplier busy
           (4.2 -> 2.9 ns a block on an AVX2-only AMD EPYC) */
        for (; b + 16 <= nb; b += 16) {
            __m256i x0, x1, x2, x3, y0, y1, y2, y3;
            uint32_t ka = k0, kb = k1;
            ptc__philox_ctr8(ctr0 + (uint64_t)b, c2, &x0, &x1, &x2, &x3);
            ptc__philox_ctr8(ctr0 + (uint64_t)b + 8u, c2, &y0, &y1, &y2, &y3);
            for (int r = 0; r < 10; ++r) {
                PTC_PHILOX_ROUND256(x0, x1, x2, x3, m0, m1, ka, kb)
                PTC_PHILOX_ROUND256(y0, y1, y2, y3, m0, m1, ka, kb)
                ka += PTC_PHILOX_W0;
                kb += PTC_PHILOX_W1;
            }
            ptc__philox_store8(x0, x1, x2, x3, out + 4 * b);
            ptc__philox_store8(y0, y1, y2, y3, out + 4 * b + 32);
        }
        for (; b + 8 <= nb; b += 8) {
            __m256i x0, x1, x2, x3;
            uint32_t ka = k0, kb = k1;
            ptc__philox_ctr8(ctr0 + (uint64_t)b, c2, &x0, &x1, &x2, &x3);
            for (int r = 0; r < 10; ++r) {
                PTC_PHILOX_ROUND256(x0, x1, x2, x3, m0, m1, ka, kb)
                ka += PTC_PHILOX_W0;
                kb += PTC_PHILOX_W1;
            }
            ptc__philox_store8(x0, x1, x2, x3, out + 4 * b);
        }
        return b;
    }

    /* AVX-512: 16 blocks per step, the AVX2 loop's operations on 16 lanes */
    __attribute__((target("avx512f,avx512dq")))
    static Py_ssize_t ptc__philox_avx512(uint64_t ctr0, uint32_t c2, uint32_t k0, uint32_t k1,
                                         Py_ssize_t nb, uint32_t *out)
    {
        Py_ssize_t b = 0;
        for (; b + 16 <= nb; b += 16) {
            /* the 16 counters ctr0 + b + l as (low, high) words (as the AVX2
               loop's): the low word plus l, the high one plus 1 where that
               addition wrapped */
            const uint64_t cb = ctr0 + (uint64_t)b;
            const __m512i base = _mm512_set1_epi32((int)(uint32_t)cb);
            __m512i x0 = _mm512_add_epi32(base, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                  10, 11, 12, 13, 14, 15));
            __m512i x1 = _mm512_mask_add_epi32(_mm512_set1_epi32((int)(uint32_t)(cb >> 32)),
                                               _mm512_cmplt_epu32_mask(x0, base),
                                               _mm512_set1_epi32((int)(uint32_t)(cb >> 32)),
                                               _mm512_set1_epi32(1));
            __m512i x2 = _mm512_set1_epi32((int)c2);
            __m512i x3 = _mm512_setzero_si512();
            PTC_PHILOX_ROUNDS(__m512i, _mm512_mul_epu32, _mm512_srli_epi64, _mm512_slli_epi64,
                              PTC_BLEND_ODD512, _mm512_xor_si512, _mm512_set1_epi32, x0, x1, x2, x3, k0, k1)
            /* lanes are blocks, registers words: in each 128-bit lane j, u_i
               holds block 4j + i; then a 4x4 transpose of the 128-bit lanes */
            __m512i t0 = _mm512_unpacklo_epi32(x0, x1);
            __m512i t1 = _mm512_unpacklo_epi32(x2, x3);
            __m512i t2 = _mm512_unpackhi_epi32(x0, x1);
            __m512i t3 = _mm512_unpackhi_epi32(x2, x3);
            __m512i u0 = _mm512_unpacklo_epi64(t0, t1);
            __m512i u1 = _mm512_unpackhi_epi64(t0, t1);
            __m512i u2 = _mm512_unpacklo_epi64(t2, t3);
            __m512i u3 = _mm512_unpackhi_epi64(t2, t3);
            __m512i a = _mm512_shuffle_i64x2(u0, u1, 0x44);   /* u0.0 u0.1 u1.0 u1.1 */
            __m512i c = _mm512_shuffle_i64x2(u0, u1, 0xEE);   /* u0.2 u0.3 u1.2 u1.3 */
            __m512i d = _mm512_shuffle_i64x2(u2, u3, 0x44);   /* u2.0 u2.1 u3.0 u3.1 */
            __m512i e = _mm512_shuffle_i64x2(u2, u3, 0xEE);
            uint32_t *o = out + 4 * b;
            _mm512_storeu_si512((void *)(o + 0), _mm512_shuffle_i64x2(a, d, 0x88));
            _mm512_storeu_si512((void *)(o + 16), _mm512_shuffle_i64x2(a, d, 0xDD));
            _mm512_storeu_si512((void *)(o + 32), _mm512_shuffle_i64x2(c, e, 0x88));
            _mm512_storeu_si512((void *)(o + 48), _mm512_shuffle_i64x2(c, e, 0xDD));
        }
        return b;
    }
    #else
    #define PTC_PHILOX_AVX2 0
    static void ptc_philox_cpu_init(void) { }
    static int ptc_philox_set_level(int level) { (void)level; return 0; }
    #endif

    /* Blocks ctr0 .. ctr0+nb-1 (third counter word c2) -> out[4*nb], block-major. */
    static void ptc_philox_blocks(uint64_t ctr0, uint32_t c2, uint32_t k0, uint32_t k1,
                                  Py_ssize_t nb, uint32_t *out)
    {
        Py_ssize_t b = 0;
    #if PTC_PHILOX_AVX2
        if (ptc_use_avx512 && nb >= 16)
            b = ptc__philox_avx512(ctr0, c2, k0, k1, nb, out);
        if (ptc_use_avx2 && nb - b >= 8)
            b += ptc__philox_avx2(ctr0 + (uint64_t)b, c2, k0, k1, nb - b, out + 4 * b);
    #endif
    #if PTC_PHILOX_SSE2
        for (; b + 4 <= nb; b += 4)
            ptc__philox_x4(ctr0 + (uint64_t)b, c2, k0, k1, out + 4 * b);
    #endif
        for (; b < nb; ++b)
            ptc_philox_ctr(ctr0 + (uint64_t)b, c2, k0, k1, out + 4 * b);
    }

    /* High 64 bits of a * b. */
    static inline uint64_t ptc_mulhi64(uint64_t a, uint64_t b)
    {
    #if defined(__SIZEOF_INT128__)
        __extension__ typedef unsigned __int128 ptc_u128;
        return (uint64_t)(((ptc_u128)a * b) >> 64);
    #else
        uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
        return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    #endif
    }

    /* floor((xlo + 2^64 xhi) * r / 2^128) */
    static inline uint64_t ptc_mulhi128(uint64_t xlo, uint64_t xhi, uint64_t r)
    {
        uint64_t t = ptc_mulhi64(xlo, r);
        uint64_t plo = xhi * r;
        uint64_t phi = ptc_mulhi64(xhi, r);
        uint64_t s = plo + t;
        return phi + (uint64_t)(s < plo);
    }

    /* Optimisation barrier: keeps a product from being fused into a
       following addition (FMA contraction), so results do not depend on the
       compiler's -ffp-contract setting or on which loop copy runs. */
    static inline double ptc_nc(double x)
    {
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
        __asm__("" : "+x"(x));
    #elif defined(__GNUC__) && defined(__aarch64__)
        __asm__("" : "+w"(x));
    #elif defined(__GNUC__)
        __asm__("" : "+m"(x));
    #endif
        return x;
    }

    /* Product that is never fused with a following addition. */
    #define PTC_MUL(a, b) ptc_nc((a) * (b))

    /* fdlibm e_log.c constants (hex = the intended values) */
    #define PTC_LN2_HI 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
    #define PTC_LN2_LO 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
    #define PTC_LG1 6.666666666666735130e-01      /* 3FE55555 55555593 */
    #define PTC_LG2 3.999999999940941908e-01      /* 3FD99999 9997FA04 */
    #define PTC_LG3 2.857142874366239149e-01      /* 3FD24924 94229359 */
    #define PTC_LG4 2.222219843214978396e-01      /* 3FCC71C5 1D8E78AF */
    #define PTC_LG5 1.818357216161805012e-01      /* 3FC74664 96CB03DE */
    #define PTC_LG6 1.531383769920937332e-01      /* 3FC39A09 D078C69F */
    #define PTC_LG7 1.479819860511658591e-01      /* 3FC2F112 DF3E5244 */
    /* Taylor coefficients: nearest doubles to (-1)^k/(2k+1)! and (-1)^k/(2k)! */
    #define PTC_S1 -0.16666666666666666
    #define PTC_S2 0.008333333333333333
    #define PTC_S3 -0.0001984126984126984
    #define PTC_S4 2.7557319223985893e-06
    #define PTC_S5 -2.505210838544172e-08
    #define PTC_S6 1.6059043836821613e-10
    #define PTC_S7 -7.647163731819816e-13
    #define PTC_S8 2.8114572543455206e-15
    #define PTC_C1 -0.5
    #define PTC_C2 0.041666666666666664
    #define PTC_C3 -0.001388888888888889
    #define PTC_C4 2.48015873015873e-05
    #define PTC_C5 -2.755731922398589e-07
    #define PTC_C6 2.08767569878681e-09
    #define PTC_C7 -1.1470745597729725e-11
    #define PTC_C8 4.779477332387385e-14
    #define PTC_PIO2 1.5707963267948966

    /* Natural log of a positive, normal, finite double.  The algorithm and
       coefficients are fdlibm's e_log.c (Copyright (C) 1993 by Sun
       Microsystems, Inc.; "Permission to use, copy, modify, and distribute
       this software is freely granted, provided that this notice is
       preserved."), error < 1 ulp.  Only IEEE +,-,*,/ and bit operations, in
       a fixed order, so every IEEE-754 machine gets the same bits. */
    static inline double ptc_log(double x)
    {
        const double ln2_hi = PTC_LN2_HI, ln2_lo = PTC_LN2_LO;
        const double Lg1 = PTC_LG1, Lg2 = PTC_LG2, Lg3 = PTC_LG3, Lg4 = PTC_LG4,
                     Lg5 = PTC_LG5, Lg6 = PTC_LG6, Lg7 = PTC_LG7;
        uint64_t ix;
        uint32_t hx;
        int k;
        double f, hfsq, s, z, w, t1, t2, R, dk;
        memcpy(&ix, &x, 8);
        /* x = 2^k * m with m in [sqrt(2)/2, sqrt(2)) */
        hx = (uint32_t)(ix >> 32) + (0x3ff00000u - 0x3fe6a09eu);
        k = (int)(hx >> 20) - 0x3ff;
        hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
        ix = ((uint64_t)hx << 32) | (ix & 0xffffffffu);
        memcpy(&x, &ix, 8);
        f = x - 1.0;
        hfsq = PTC_MUL(0.5 * f, f);
        s = f / (2.0 + f);
        z = s * s;
        w = z * z;
        t1 = PTC_MUL(w, Lg2 + PTC_MUL(w, Lg4 + PTC_MUL(w, Lg6)));
        t2 = PTC_MUL(z, Lg1 + PTC_MUL(w, Lg3 + PTC_MUL(w, Lg5 + PTC_MUL(w, Lg7))));
        R = t2 + t1;
        dk = (double)k;
        return (((PTC_MUL(s, hfsq + R) + PTC_MUL(dk, ln2_lo)) - hfsq) + f) + PTC_MUL(dk, ln2_hi);
    }

    /* sin(2*pi*u), cos(2*pi*u) for u in [0, 1) that is a multiple of 2^-53.
       Exact quadrant reduction: v = 4u, q = (int)(v + 0.5), r = v - q in
       [-1/2, 1/2] (all exact), x = fl(r * (pi/2)) in [-pi/4, pi/4]; sin(x)
       and cos(x) are Taylor polynomials to x^17 / x^16 (coefficients: the
       doubles nearest (-1)^k/(2k+1)! and (-1)^k/(2k)!) in Horner form;
       quadrant q mod 4 maps (sin x, cos x) to (s, c), (c, -s), (-s, -c),
       (-c, s).  Error about 1 ulp. */
    static inline void ptc_sincos2pi(double u, double *sn, double *cs)
    {
        const double S1 = PTC_S1, S2 = PTC_S2, S3 = PTC_S3, S4 = PTC_S4,
                     S5 = PTC_S5, S6 = PTC_S6, S7 = PTC_S7, S8 = PTC_S8;
        const double C1 = PTC_C1, C2 = PTC_C2, C3 = PTC_C3, C4 = PTC_C4,
                     C5 = PTC_C5, C6 = PTC_C6, C7 = PTC_C7, C8 = PTC_C8;
        const double PIO2 = PTC_PIO2;
        double v = 4.0 * u, r, x, z, ps, pc, s, c;
        int q = (int)(v + 0.5);
        r = v - (double)q;
        x = r * PIO2;
        z = x * x;
        ps = S7 + PTC_MUL(z, S8);
        ps = S6 + PTC_MUL(z, ps);
        ps = S5 + PTC_MUL(z, ps);
        ps = S4 + PTC_MUL(z, ps);
        ps = S3 + PTC_MUL(z, ps);
        ps = S2 + PTC_MUL(z, ps);
        ps = S1 + PTC_MUL(z, ps);
        s = x + PTC_MUL(x * z, ps);
        pc = C7 + PTC_MUL(z, C8);
        pc = C6 + PTC_MUL(z, pc);
        pc = C5 + PTC_MUL(z, pc);
        pc = C4 + PTC_MUL(z, pc);
        pc = C3 + PTC_MUL(z, pc);
        pc = C2 + PTC_MUL(z, pc);
        pc = C1 + PTC_MUL(z, pc);
        c = 1.0 + PTC_MUL(z, pc);
        {
            /* quadrant q&3: (s, c), (c, -s), (-s, -c), (-c, s); branch-free
               (selection by mask, negation by sign-bit flip) */
            uint64_t bs, bc, rs, rc;
            uint64_t swap = (uint64_t)0 - (uint64_t)(q & 1);
            uint64_t neg_s = (uint64_t)((q >> 1) & 1) << 63;
            uint64_t neg_c = (uint64_t)(((q + 1) >> 1) & 1) << 63;
            memcpy(&bs, &s, 8);
            memcpy(&bc, &c, 8);
            rs = ((bs & ~swap) | (bc & swap)) ^ neg_s;
            rc = ((bc & ~swap) | (bs & swap)) ^ neg_c;
            memcpy(sn, &rs, 8);
            memcpy(cs, &rc, 8);
        }
    }

    /* Box-Muller on a batch: pair p -> z[2p] = r*cos, z[2p+1] = r*sin with
       r = sqrt(-2 log u1), (sin, cos) = sincos2pi(u2).  wide == 0: u1, u2
       from words (2p, 2p+1) as 1 - x*2^-32 and x*2^-32; wide != 0: from the
       64-bit pairs (4p, 4p+1), (4p+2, 4p+3) as 1 - (D>>11)*2^-53 and
       (D>>11)*2^-53.  The AVX2 path evaluates exactly the same operations. */
    static inline void ptc__bm_pair(const uint32_t *buf, int wide, Py_ssize_t p, double *z)
    {
        double u1, u2, r, sn, cs;
        if (wide) {
            uint64_t d0 = (uint64_t)buf[4 * p] | ((uint64_t)buf[4 * p + 1] << 32);
            uint64_t d1 = (uint64_t)buf[4 * p + 2] | ((uint64_t)buf[4 * p + 3] << 32);
            u1 = 1.0 - (double)(d0 >> 11) * 1.1102230246251565e-16;
            u2 = (double)(d1 >> 11) * 1.1102230246251565e-16;
        } else {
            u1 = 1.0 - (double)buf[2 * p] * 2.3283064365386963e-10;
            u2 = (double)buf[2 * p + 1] * 2.3283064365386963e-10;
        }
        r = sqrt(-2.0 * ptc_log(u1));
        ptc_sincos2pi(u2, &sn, &cs);
        z[2 * p] = r * cs;
        z[2 * p + 1] = r * sn;
    }

    #if PTC_PHILOX_AVX2
    #define PTC_TA __attribute__((target("avx2")))
    #define PTC_V(c) _mm256_set1_pd(c)
    /* keeps a vector product from being fused (no-op without FMA targets) */
    PTC_TA static inline __m256d ptc__vnc(__m256d x) { __asm__("" : "+x"(x)); return x; }
    #define PTC_VMUL(a, b) ptc__vnc(_mm256_mul_pd((a), (b)))

    /* The floating-point steps of ptc_log (from the reduced x and k as a
       double) and of ptc_sincos2pi's polynomials, in the vector operations
       of one width (VD the vector type, ADD/SUB/MUL/DIV its operations, VMUL
       a product never fused, V a broadcast): the AVX2 and AVX-512 copies
       below run the same operations in the same order as the scalar code. */
    #define PTC_LOG_STEPS(VD, ADD, SUB, MUL, DIV, VMUL, V, x, dk, out)               \
        { VD f = SUB(x, V(1.0));                                                  \
          VD hfsq = VMUL(MUL(V(0.5), f), f);                                      \
          VD s = DIV(f, ADD(V(2.0), f));                                          \
          VD z = MUL(s, s);                                                       \
          VD w = MUL(z, z);                                                       \
          VD t1 = VMUL(w, ADD(V(PTC_LG2), VMUL(w, ADD(V(PTC_LG4), VMUL(w, V(PTC_LG6)))))); \
          VD t2 = VMUL(z, ADD(V(PTC_LG1), VMUL(w, ADD(V(PTC_LG3), VMUL(w,           \
                      ADD(V(PTC_LG5), VMUL(w, V(PTC_LG7))))))));                     \
          VD R = ADD(t2, t1);                                                     \
          VD a = ADD(VMUL(s, ADD(hfsq, R)), VMUL(dk, V(PTC_LN2_LO)));             \
          a = ADD(SUB(a, hfsq), f);                                               \
          out = ADD(a, VMUL(dk, V(PTC_LN2_HI))); }
    #define PTC_SINCOS_STEPS(VD, ADD, MUL, VMUL, V, x, s, c)                         \
        { VD z = MUL(x, x);                                                       \
          VD ps = ADD(V(PTC_S7), VMUL(z, V(PTC_S8)));                             \
          ps = ADD(V(PTC_S6), VMUL(z, ps));                                       \
          ps = ADD(V(PTC_S5), VMUL(z, ps));                                       \
          ps = ADD(V(PTC_S4), VMUL(z, ps));                                       \
          ps = ADD(V(PTC_S3), VMUL(z, ps));                                       \
          ps = ADD(V(PTC_S2), VMUL(z, ps));                                       \
          ps = ADD(V(PTC_S1), VMUL(z, ps));                                       \
          s = ADD(x, VMUL(MUL(x, z), ps));                                        \
          VD pc = ADD(V(PTC_C7), VMUL(z, V(PTC_C8)));                             \
          pc = ADD(V(PTC_C6), VMUL(z, pc));                                       \
          pc = ADD(V(PTC_C5), VMUL(z, pc));                                       \
          pc = ADD(V(PTC_C4), VMUL(z, pc));                                       \
          pc = ADD(V(PTC_C3), VMUL(z, pc));                                       \
          pc = ADD(V(PTC_C2), VMUL(z, pc));                                       \
          pc = ADD(V(PTC_C1), VMUL(z, pc));                                       \
          c = ADD(V(1.0), VMUL(z, pc)); }

    /* -log(u) over W lanes a step (ptc__neglog1's operations): u from the 64-bit pairs
       (wide) or the words, in one width's operations; returns the lanes done */
    #define PTC_NEGLOG_LOOP(W, VD, VI, LOADW, LOADN, SRL, U53, ADD, MUL, V, XOR, LOG, STORE) \
        Py_ssize_t i = 0;                                                            \
        const VD sign = V(-0.0);                                                     \
        for (; i + (W) <= n; i += (W)) {                                             \
            VD u;                                                                    \
            if (wide)                                                                \
                u = MUL(ADD(U53(SRL(LOADW(buf + 2 * i), 12)), V(0.5)),               \
                        V(2.220446049250313e-16));                                   \
            else                                                                     \
                u = MUL(ADD(U53(LOADN(buf + i)), V(0.5)), V(2.3283064365386963e-10)); \
            STORE(out + i, XOR(LOG(u), sign));                                       \
        }                                                                            \
        return i;
    /* the loads: W 64-bit pairs, W words widened to 64 bits */
    #define PTC_LOADW4(p) _mm256_loadu_si256((const __m256i *)(p))
    #define PTC_LOADN4(p) _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(p)))
    #define PTC_LOADW8(p) _mm512_loadu_si512((const void *)(p))
    #define PTC_LOADN8(p) _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(p)))

    PTC_TA static inline __m256d ptc__log4(__m256d xv)
    {
        const __m256i ix = _mm256_castpd_si256(xv);
        const __m256i lo32 = _mm256_set1_epi64x(0xffffffffLL);
        __m256i hx = _mm256_add_epi64(_mm256_srli_epi64(ix, 32),
                                      _mm256_set1_epi64x(0x3ff00000LL - 0x3fe6a09eLL));
        __m256i k = _mm256_sub_epi64(_mm256_srli_epi64(hx, 20), _mm256_set1_epi64x(0x3ff));
        hx = _mm256_add_epi64(_mm256_and_si256(hx, _mm256_set1_epi64x(0x000fffffLL)),
                              _mm256_set1_epi64x(0x3fe6a09eLL));
        __m256d x = _mm256_castsi256_pd(_mm256_or_si256(_mm256_slli_epi64(hx, 32),
                                                        _mm256_and_si256(ix, lo32)));
        __m128i k32 = _mm256_castsi256_si128(
            _mm256_permutevar8x32_epi32(k, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
        __m256d dk = _mm256_cvtepi32_pd(k32), out;
        PTC_LOG_STEPS(__m256d, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_div_pd, PTC_VMUL,
                      PTC_V, x, dk, out)
        return out;
    }

    PTC_TA static inline void ptc__sincos2pi4(__m256d u, __m256d *sn, __m256d *cs)
    {
        __m256d v = _mm256_mul_pd(PTC_V(4.0), u);
        __m128i q32 = _mm256_cvttpd_epi32(_mm256_add_pd(v, PTC_V(0.5)));
        __m256d r = _mm256_sub_pd(v, _mm256_cvtepi32_pd(q32));
        __m256d x = _mm256_mul_pd(r, PTC_V(PTC_PIO2));
        __m256d s, c;
        PTC_SINCOS_STEPS(__m256d, _mm256_add_pd, _mm256_mul_pd, PTC_VMUL, PTC_V, x, s, c)
        __m256i q = _mm256_cvtepi32_epi64(q32);
        __m256i one = _mm256_set1_epi64x(1);
        __m256d swap = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, one), one));
        __m256d neg_s = _mm256_castsi256_pd(_mm256_slli_epi64(
            _mm256_and_si256(_mm256_srli_epi64(q, 1), one), 63));
        __m256d neg_c = _mm256_castsi256_pd(_mm256_slli_epi64(
            _mm256_and_si256(_mm256_srli_epi64(_mm256_add_epi64(q, one), 1), one), 63));
        *sn = _mm256_xor_pd(_mm256_blendv_pd(s, c, swap), neg_s);
        *cs = _mm256_xor_pd(_mm256_blendv_pd(c, s, swap), neg_c);
    }

    /* exact uint64 (< 2^53) -> double */
    PTC_TA static inline __m256d ptc__u53_to_pd(__m256i d)
    {
        const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);   /* 2^52 */
        __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(d, 32), magic)),
                                   PTC_V(4503599627370496.0));
        __m256d lo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(
                                       _mm256_and_si256(d, _mm256_set1_epi64x(0xffffffffLL)), magic)),
                                   PTC_V(4503599627370496.0));
        return _mm256_add_pd(_mm256_mul_pd(hi, PTC_V(4294967296.0)), lo);   /* exact */
    }

    PTC_TA static Py_ssize_t ptc__box_muller_avx2(const uint32_t *buf, int wide, Py_ssize_t npairs,
                                                  double *z)
    {
        Py_ssize_t p = 0;
        for (; p + 4 <= npairs; p += 4) {
            __m256d u1, u2, sn, cs, r;
            if (wide) {
                __m256i A = _mm256_loadu_si256((const __m256i *)(buf + 4 * p));
                __m256i B = _mm256_loadu_si256((const __m256i *)(buf + 4 * p + 8));
                __m256i d0 = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(A, B), 0xD8);
                __m256i d1 = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(A, B), 0xD8);
                u1 = _mm256_sub_pd(PTC_V(1.0), _mm256_mul_pd(
                         ptc__u53_to_pd(_mm256_srli_epi64(d0, 11)), PTC_V(1.1102230246251565e-16)));
                u2 = _mm256_mul_pd(ptc__u53_to_pd(_mm256_srli_epi64(d1, 11)),
                                   PTC_V(1.1102230246251565e-16));
            } else {
                __m256i W = _mm256_loadu_si256((const __m256i *)(buf + 2 * p));
                __m256i even = _mm256_and_si256(W, _mm256_set1_epi64x(0xffffffffLL));
                __m256i odd = _mm256_srli_epi64(W, 32);
                u1 = _mm256_sub_pd(PTC_V(1.0), _mm256_mul_pd(ptc__u53_to_pd(even),
                                                             PTC_V(2.3283064365386963e-10)));
                u2 = _mm256_mul_pd(ptc__u53_to_pd(odd), PTC_V(2.3283064365386963e-10));
            }
            r = _mm256_sqrt_pd(_mm256_mul_pd(PTC_V(-2.0), ptc__log4(u1)));
            ptc__sincos2pi4(u2, &sn, &cs);
            __m256d zc = _mm256_mul_pd(r, cs), zs = _mm256_mul_pd(r, sn);
            __m256d lo = _mm256_unpacklo_pd(zc, zs);   /* c0 s0 | c2 s2 */
            __m256d hi = _mm256_unpackhi_pd(zc, zs);   /* c1 s1 | c3 s3 */
            _mm256_storeu_pd(z + 2 * p, _mm256_permute2f128_pd(lo, hi, 0x20));
            _mm256_storeu_pd(z + 2 * p + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
        }
        return p;
    }

    /* AVX-512 (F, DQ): 8 lanes, the operations of ptc_log / ptc_sincos2pi / the
       pair mapping in the same order; every product that meets an addition
       goes through the barrier (this target has FMA, the AVX2 one has not) */
    #define PTC_T5 __attribute__((target("avx512f,avx512dq")))
    #define PTC_V8(c) _mm512_set1_pd(c)
    PTC_T5 static inline __m512d ptc__vnc8(__m512d x) { __asm__("" : "+v"(x)); return x; }
    #define PTC_VMUL8(a, b) ptc__vnc8(_mm512_mul_pd((a), (b)))
    #define ptc__xor8 _mm512_xor_pd

    PTC_T5 static inline __m512d ptc__log8(__m512d xv)
    {
        const __m512i ix = _mm512_castpd_si512(xv);
        const __m512i lo32 = _mm512_set1_epi64(0xffffffffLL);
        __m512i hx = _mm512_add_epi64(_mm512_srli_epi64(ix, 32),
                                      _mm512_set1_epi64(0x3ff00000LL - 0x3fe6a09eLL));
        __m512i k = _mm512_sub_epi64(_mm512_srli_epi64(hx, 20), _mm512_set1_epi64(0x3ff));
        hx = _mm512_add_epi64(_mm512_and_si512(hx, _mm512_set1_epi64(0x000fffffLL)),
                              _mm512_set1_epi64(0x3fe6a09eLL));
        __m512d x = _mm512_castsi512_pd(_mm512_or_si512(_mm512_slli_epi64(hx, 32),
                                                        _mm512_and_si512(ix, lo32)));
        __m512d dk = _mm512_cvtepi32_pd(_mm512_cvtepi64_epi32(k)), out;
        PTC_LOG_STEPS(__m512d, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_div_pd, PTC_VMUL8,
                      PTC_V8, x, dk, out)
        return out;
    }

    PTC_T5 static inline void ptc__sincos2pi8(__m512d u, __m512d *sn, __m512d *cs)
    {
        __m512d v = _mm512_mul_pd(PTC_V8(4.0), u);
        __m256i q32 = _mm512_cvttpd_epi32(_mm512_add_pd(v, PTC_V8(0.5)));
        __m512d r = _mm512_sub_pd(v, _mm512_cvtepi32_pd(q32));
        __m512d x = _mm512_mul_pd(r, PTC_V8(PTC_PIO2));
        __m512d s, c;
        PTC_SINCOS_STEPS(__m512d, _mm512_add_pd, _mm512_mul_pd, PTC_VMUL8, PTC_V8, x, s, c)
        __m512i q = _mm512_cvtepi32_epi64(q32);
        __m512i one = _mm512_set1_epi64(1);
        __mmask8 swap = _mm512_test_epi64_mask(q, one);
        __m512d neg_s = _mm512_castsi512_pd(_mm512_slli_epi64(
            _mm512_and_si512(_mm512_srli_epi64(q, 1), one), 63));
        __m512d neg_c = _mm512_castsi512_pd(_mm512_slli_epi64(
            _mm512_and_si512(_mm512_srli_epi64(_mm512_add_epi64(q, one), 1), one), 63));
        *sn = ptc__xor8(_mm512_mask_blend_pd(swap, s, c), neg_s);
        *cs = ptc__xor8(_mm512_mask_blend_pd(swap, c, s), neg_c);
    }

    /* exact uint64 (< 2^53) -> double (AVX-512DQ's conversion) */
    #define ptc__u53_to_pd8(d) _mm512_cvtepu64_pd(d)

    PTC_T5 static Py_ssize_t ptc__box_muller_avx512(const uint32_t *buf, int wide, Py_ssize_t npairs,
                                                    double *z)
    {
        Py_ssize_t p = 0;
        const __m512i ilo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
        const __m512i ihi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        for (; p + 8 <= npairs; p += 8) {
            __m512d u1, u2, sn, cs, r;
            if (wide) {
                /* pair q: 64-bit words 2q (u1) and 2q + 1 (u2) */
                __m512i A = _mm512_loadu_si512((const void *)(buf + 4 * p));
                __m512i B = _mm512_loadu_si512((const void *)(buf + 4 * p + 16));
                __m512i d0 = _mm512_permutex2var_epi64(A, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), B);
                __m512i d1 = _mm512_permutex2var_epi64(A, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), B);
                u1 = _mm512_sub_pd(PTC_V8(1.0), PTC_VMUL8(
                         ptc__u53_to_pd8(_mm512_srli_epi64(d0, 11)), PTC_V8(1.1102230246251565e-16)));
                u2 = _mm512_mul_pd(ptc__u53_to_pd8(_mm512_srli_epi64(d1, 11)),
                                   PTC_V8(1.1102230246251565e-16));
            } else {
                __m512i W = _mm512_loadu_si512((const void *)(buf + 2 * p));
                __m512i even = _mm512_and_si512(W, _mm512_set1_epi64(0xffffffffLL));
                __m512i odd = _mm512_srli_epi64(W, 32);
                u1 = _mm512_sub_pd(PTC_V8(1.0), PTC_VMUL8(ptc__u53_to_pd8(even),
                                                          PTC_V8(2.3283064365386963e-10)));
                u2 = _mm512_mul_pd(ptc__u53_to_pd8(odd), PTC_V8(2.3283064365386963e-10));
            }
            r = _mm512_sqrt_pd(_mm512_mul_pd(PTC_V8(-2.0), ptc__log8(u1)));
            ptc__sincos2pi8(u2, &sn, &cs);
            __m512d zc = _mm512_mul_pd(r, cs), zs = _mm512_mul_pd(r, sn);
            __m512d lo = _mm512_unpacklo_pd(zc, zs);   /* per 128-bit lane j: pair 2j */
            __m512d hi = _mm512_unpackhi_pd(zc, zs);   /* pair 2j + 1 */
            _mm512_storeu_pd(z + 2 * p, _mm512_permutex2var_pd(lo, ilo, hi));
            _mm512_storeu_pd(z + 2 * p + 8, _mm512_permutex2var_pd(lo, ihi, hi));
        }
        return p;
    }

    PTC_T5 static Py_ssize_t ptc__neglog_avx512(const uint32_t *buf, int wide, Py_ssize_t n,
                                                double *out)
    {
        PTC_NEGLOG_LOOP(8, __m512d, __m512i, PTC_LOADW8, PTC_LOADN8, _mm512_srli_epi64,
                        ptc__u53_to_pd8, _mm512_add_pd, _mm512_mul_pd, PTC_V8, ptc__xor8,
                        ptc__log8, _mm512_storeu_pd)
    }
    #endif

    /* -log(u) for n uniforms in (0, 1): wide == 0: u = (x + 0.5) * 2^-32 from
       word i; wide != 0: u = ((D >> 12) + 0.5) * 2^-52 from pair (2i, 2i+1). */
    static inline double ptc__neglog1(const uint32_t *buf, int wide, Py_ssize_t i)
    {
        double u;
        if (wide) {
            uint64_t d = (uint64_t)buf[2 * i] | ((uint64_t)buf[2 * i + 1] << 32);
            u = ((double)(d >> 12) + 0.5) * 2.220446049250313e-16;
        } else {
            u = ((double)buf[i] + 0.5) * 2.3283064365386963e-10;
        }
        return -ptc_log(u);
    }

    #if PTC_PHILOX_AVX2
    PTC_TA static Py_ssize_t ptc__neglog_avx2(const uint32_t *buf, int wide, Py_ssize_t n,
                                              double *out)
    {
        PTC_NEGLOG_LOOP(4, __m256d, __m256i, PTC_LOADW4, PTC_LOADN4, _mm256_srli_epi64,
                        ptc__u53_to_pd, _mm256_add_pd, _mm256_mul_pd, PTC_V, _mm256_xor_pd,
                        ptc__log4, _mm256_storeu_pd)
    }
    #endif

    /* o[j] = mean + sd * z[j] (never fused), rounded to float32 / kept in
       double: the normal draws' last step, vectorised (the scalar loop's
       barrier keeps compilers from vectorising it) */
    #if PTC_PHILOX_AVX2
    PTC_T5 static Py_ssize_t ptc__affine_avx512(const double *z, Py_ssize_t n, double mean,
                                                double sd, float *o32, double *o64)
    {
        Py_ssize_t j = 0;
        const __m512d m = PTC_V8(mean), s = PTC_V8(sd);
        for (; j + 8 <= n; j += 8) {
            __m512d v = _mm512_add_pd(m, PTC_VMUL8(s, _mm512_loadu_pd(z + j)));
            if (o32) _mm256_storeu_ps(o32 + j, _mm512_cvtpd_ps(v));
            else _mm512_storeu_pd(o64 + j, v);
        }
        return j;
    }
    PTC_TA static Py_ssize_t ptc__affine_avx2(const double *z, Py_ssize_t n, double mean,
                                              double sd, float *o32, double *o64)
    {
        Py_ssize_t j = 0;
        const __m256d m = PTC_V(mean), s = PTC_V(sd);
        for (; j + 4 <= n; j += 4) {
            __m256d v = _mm256_add_pd(m, PTC_VMUL(s, _mm256_loadu_pd(z + j)));
            if (o32) _mm_storeu_ps(o32 + j, _mm256_cvtpd_ps(v));
            else _mm256_storeu_pd(o64 + j, v);
        }
        return j;
    }
    #endif
    static void ptc_affine_store(const double *z, Py_ssize_t n, double mean, double sd,
                                 float *o32, double *o64)
    {
        Py_ssize_t j = 0;
    #if PTC_PHILOX_AVX2
        if (ptc_use_avx512) j = ptc__affine_avx512(z, n, mean, sd, o32, o64);
        else if (ptc_use_avx2) j = ptc__affine_avx2(z, n, mean, sd, o32, o64);
    #endif
        if (o32) for (; j < n; ++j) o32[j] = (float)(mean + ptc_nc(sd * z[j]));
        else for (; j < n; ++j) o64[j] = mean + ptc_nc(sd * z[j]);
    }

    static void ptc_neglog(const uint32_t *buf, int wide, Py_ssize_t n, double *out)
    {
        Py_ssize_t i = 0;
    #if PTC_PHILOX_AVX2
        if (ptc_use_avx512)
            i = ptc__neglog_avx512(buf, wide, n, out);
        if (ptc_use_avx2)
            i += ptc__neglog_avx2(buf + (wide ? 2 * i : i), wide, n - i, out + i);
    #endif
        for (; i < n; ++i)
            out[i] = ptc__neglog1(buf, wide, i);
    }

    static void ptc_box_muller(const uint32_t *buf, int wide, Py_ssize_t npairs, double *z)
    {
        Py_ssize_t p = 0;
    #if PTC_PHILOX_AVX2
        if (ptc_use_avx512)
            p = ptc__box_muller_avx512(buf, wide, npairs, z);
        if (ptc_use_avx2)
            p += ptc__box_muller_avx2(buf + (wide ? 4 * p : 2 * p), wide, npairs - p, z + 2 * p);
    #endif
        for (; p < npairs; ++p)
            ptc__bm_pair(buf, wide, p, z);
    }
    """
    void ptc_philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                           uint32_t k0, uint32_t k1, uint32_t* out) noexcept nogil
    void ptc_philox_ctr(uint64_t ctr, uint32_t c2, uint32_t k0, uint32_t k1,
                        uint32_t* out) noexcept nogil
    void ptc_philox_blocks(uint64_t ctr0, uint32_t c2, uint32_t k0, uint32_t k1,
                           Py_ssize_t nb, uint32_t* out) noexcept nogil
    void ptc_philox_cpu_init() noexcept nogil
    int ptc_philox_set_level(int level) noexcept nogil
    uint64_t ptc_mulhi64(uint64_t a, uint64_t b) noexcept nogil
    uint64_t ptc_mulhi128(uint64_t xlo, uint64_t xhi, uint64_t r) noexcept nogil
    double ptc_nc(double x) noexcept nogil
    double ptc_log(double x) noexcept nogil
    void ptc_sincos2pi(double u, double* sn, double* cs) noexcept nogil
    void ptc_box_muller(const uint32_t* buf, int wide, Py_ssize_t npairs, double* z) noexcept nogil
    void ptc_neglog(const uint32_t* buf, int wide, Py_ssize_t n, double* out) noexcept nogil
    void ptc_affine_store(const double* z, Py_ssize_t n, double mean, double sd, float* o32, double* o64) noexcept nogil
    double DBL_MAX


ptc_philox_cpu_init()

# --------------------------------------------------------------------------
# constants and shared plumbing
# --------------------------------------------------------------------------
cdef enum:
    _BATCH = 64          # blocks generated per inner batch (4*_BATCH words)
    _CHUNK = 2048        # blocks per parallel work item

cdef double _TWO_M24 = 5.9604644775390625e-08       # 2^-24
cdef double _TWO_M32 = 2.3283064365386963e-10       # 2^-32
cdef double _TWO_M52 = 2.220446049250313e-16        # 2^-52
cdef double _TWO_M53 = 1.1102230246251565e-16       # 2^-53
cdef double _SQRT1_2 = 0.7071067811865476

# value kinds the workers switch on
cdef enum:
    _K_F16 = 0
    _K_BF16 = 1
    _K_F32 = 2
    _K_F64 = 3

ctypedef struct _Params:
    char* dst
    int kind              # _K_* (float kernels) or a PT_* type (randint/bernoulli)
    Py_ssize_t total      # scalars to write
    uint64_t ctr0         # offset
    uint32_t k0
    uint32_t k1
    double a              # low / mean / lambd
    double b              # rng / sd
    double high
    double clamp_d        # replacement for values >= high (double result)
    float clamp_f
    uint16_t clamp_h      # ... as 16-bit pattern
    int tier              # randint: 0 (1 word), 1 (2 words), 2 (4 words)
    uint64_t r            # randint range
    int64_t low_i
    const double* p
    Py_ssize_t p_stride
    # multinomial with replacement
    const double* cdf
    const Py_ssize_t* last_nz
    Py_ssize_t cats
    Py_ssize_t num_samples
    int64_t* out_i

ctypedef void (*_worker_t)(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil


cdef void _run(_worker_t fn, const _Params* P, Py_ssize_t nblocks, Py_ssize_t nelem) noexcept nogil:
    """Run ``fn`` over blocks [0, nblocks), in parallel chunks when large."""
    cdef int nt = get_num_threads()
    cdef Py_ssize_t nch, c, b0, b1
    if nblocks <= 0:
        return
    if nt > 1 and nelem >= parallel_grain() and nblocks > _CHUNK:
        nch = (nblocks + _CHUNK - 1) // _CHUNK
        for c in prange(nch, num_threads=nt, schedule='static'):
            b0 = c * _CHUNK
            b1 = b0 + _CHUNK
            if b1 > nblocks:
                b1 = nblocks
            fn(P, b0, b1)
    else:
        fn(P, 0, nblocks)


cdef inline int _float_kind(int dst_type) noexcept nogil:
    if dst_type == PT_FLOAT16:
        return _K_F16
    if dst_type == PT_BFLOAT16:
        return _K_BF16
    if dst_type == PT_FLOAT32 or dst_type == PT_COMPLEX64:
        return _K_F32
    if dst_type == PT_FLOAT64 or dst_type == PT_COMPLEX128:
        return _K_F64
    return -1


cdef inline double _h2d(uint16_t bits, bint bf) noexcept nogil:
    if bf:
        return ptc_bf16_to_float(bits)
    return ptc_half_to_float(bits)


cdef inline uint16_t _d2h(double v, bint bf) noexcept nogil:
    if bf:
        return ptc_float_to_bf16(<float>v)
    return ptc_float_to_half(<float>v)


cdef inline uint16_t _key_bits(int key) noexcept nogil:
    # order-preserving key (-inf .. +inf) -> 16-bit pattern
    if key >= 0:
        return <uint16_t>key
    return <uint16_t>(0x8000 | (-key))


cdef int _below16(double high, bint bf) noexcept nogil:
    """Bits of the largest float16/bfloat16 value < high, or -1 if none."""
    cdef int top = 0x7f80 if bf else 0x7c00
    cdef int lo = -top, hi = top, mid
    if not (_h2d(_key_bits(lo), bf) < high):
        return -1
    # invariant: value(lo) < high, and hi is +inf or value(hi) >= high
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if _h2d(_key_bits(mid), bf) < high:
            lo = mid
        else:
            hi = mid
    if _h2d(_key_bits(hi), bf) < high:
        return _key_bits(hi)
    return _key_bits(lo)


# --------------------------------------------------------------------------
# Philox block
# --------------------------------------------------------------------------
cdef void philox4x32_10(const uint32_t* ctr, const uint32_t* key, uint32_t* out) noexcept nogil:
    ptc_philox4x32_10(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1], out)


# --------------------------------------------------------------------------
# uniform
# --------------------------------------------------------------------------
cdef void _w_uniform(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j
    cdef int kind = P.kind
    cdef bint bf = kind == _K_BF16
    cdef double low = P.a, rng = P.b, high = P.high, clamp_d = P.clamp_d
    cdef float clamp_f = P.clamp_f
    cdef uint16_t clamp_h = P.clamp_h, h
    cdef Py_ssize_t total = P.total
    cdef double u, v
    cdef float f
    cdef uint64_t d
    cdef float* o32
    cdef double* o64
    cdef uint16_t* o16
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        if kind == _K_F64:
            s0 = 2 * b
            cnt = 2 * nb
            if cnt > total - s0:
                cnt = total - s0
            o64 = (<double*>P.dst) + s0
            for j in range(cnt):
                d = (<uint64_t>buf[2 * j]) | ((<uint64_t>buf[2 * j + 1]) << 32)
                u = <double>(d >> 11) * _TWO_M53
                v = low + ptc_nc(rng * u)
                if v >= high:
                    v = clamp_d
                o64[j] = v
        else:
            s0 = 4 * b
            cnt = 4 * nb
            if cnt > total - s0:
                cnt = total - s0
            if kind == _K_F32 and low == 0.0 and rng == 1.0:
                # same values as the general formula (u is exact in float32
                # and < 1), written so the compiler can vectorise it
                o32 = (<float*>P.dst) + s0
                for j in range(cnt):
                    o32[j] = <float><int32_t>(buf[j] >> 8) * <float>_TWO_M24
            elif kind == _K_F32:
                o32 = (<float*>P.dst) + s0
                for j in range(cnt):
                    u = <double>(buf[j] >> 8) * _TWO_M24
                    f = <float>(low + ptc_nc(rng * u))
                    if f >= high:
                        f = clamp_f
                    o32[j] = f
            else:
                o16 = (<uint16_t*>P.dst) + s0
                for j in range(cnt):
                    u = <double>(buf[j] >> 8) * _TWO_M24
                    h = _d2h(low + ptc_nc(rng * u), bf)
                    if _h2d(h, bf) >= high:
                        h = clamp_h
                    o16[j] = h
        b += nb


cdef uint64_t fill_uniform(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                           uint64_t offset, double low, double high) noexcept nogil:
    cdef int kind = _float_kind(dst_type)
    cdef _Params P
    cdef Py_ssize_t total, nblocks
    cdef int hb
    cdef float f
    cdef double d
    if kind < 0 or n <= 0:
        return offset
    total = 2 * n if (dst_type == PT_COMPLEX64 or dst_type == PT_COMPLEX128) else n
    P.dst = dst
    P.kind = kind
    P.total = total
    P.ctr0 = offset
    P.k0 = <uint32_t>seed
    P.k1 = <uint32_t>(seed >> 32)
    P.a = low
    P.b = high - low
    P.high = high
    # largest dtype value below high (fallback: low rounded to the dtype)
    if kind == _K_F64:
        d = nextafter(high, -INFINITY)
        P.clamp_d = d if (d < high and d >= low) else low
    elif kind == _K_F32:
        f = <float>high
        if f >= high:
            f = nextafterf(f, -INFINITY)
        elif nextafterf(f, INFINITY) < high:
            f = nextafterf(f, INFINITY)
        P.clamp_f = f if (f < high and f >= low) else <float>low
    else:
        hb = _below16(high, kind == _K_BF16)
        if hb >= 0 and _h2d(<uint16_t>hb, kind == _K_BF16) >= low:
            P.clamp_h = <uint16_t>hb
        else:
            P.clamp_h = _d2h(low, kind == _K_BF16)
    nblocks = (total + 1) // 2 if kind == _K_F64 else (total + 3) // 4
    _run(_w_uniform, &P, nblocks, total)
    return offset + <uint64_t>nblocks


# --------------------------------------------------------------------------
# normal (Box-Muller)
# --------------------------------------------------------------------------
cdef inline void _store_real(char* dst, int kind, Py_ssize_t s, double v) noexcept nogil:
    if kind == _K_F32:
        (<float*>dst)[s] = <float>v
    elif kind == _K_F64:
        (<double*>dst)[s] = v
    elif kind == _K_F16:
        (<uint16_t*>dst)[s] = ptc_float_to_half(<float>v)
    else:
        (<uint16_t*>dst)[s] = ptc_float_to_bf16(<float>v)


cdef void _w_normal(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef double z[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j
    cdef int kind = P.kind
    cdef bint wide = kind == _K_F64
    cdef double mean = P.a, sd = P.b
    cdef Py_ssize_t total = P.total
    cdef char* dst = P.dst
    cdef float* o32
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        if wide:
            s0 = 2 * b
            cnt = 2 * nb
        else:
            s0 = 4 * b
            cnt = 4 * nb
        if cnt > total - s0:
            cnt = total - s0
        # one Box-Muller pair per 2 scalars: z[2p] = r*cos, z[2p+1] = r*sin
        ptc_box_muller(buf, wide, (cnt + 1) // 2, z)
        if kind == _K_F32:
            ptc_affine_store(z, cnt, mean, sd, (<float*>dst) + s0, NULL)
        elif kind == _K_F64:
            ptc_affine_store(z, cnt, mean, sd, NULL, (<double*>dst) + s0)
        else:
            for j in range(cnt):
                _store_real(dst, kind, s0 + j, mean + ptc_nc(sd * z[j]))
        b += nb


cdef uint64_t fill_normal(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                          uint64_t offset, double mean, double std) noexcept nogil:
    cdef int kind = _float_kind(dst_type)
    cdef _Params P
    cdef Py_ssize_t total, nblocks
    cdef bint cplx = dst_type == PT_COMPLEX64 or dst_type == PT_COMPLEX128
    if kind < 0 or n <= 0:
        return offset
    total = 2 * n if cplx else n
    P.dst = dst
    P.kind = kind
    P.total = total
    P.ctr0 = offset
    P.k0 = <uint32_t>seed
    P.k1 = <uint32_t>(seed >> 32)
    P.a = mean
    P.b = std * _SQRT1_2 if cplx else std
    nblocks = (total + 1) // 2 if kind == _K_F64 else (total + 3) // 4
    _run(_w_normal, &P, nblocks, total)
    return offset + <uint64_t>nblocks


# --------------------------------------------------------------------------
# exponential
# --------------------------------------------------------------------------
cdef void _w_exponential(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef double e[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j
    cdef int kind = P.kind
    cdef bint wide = kind == _K_F64
    cdef double lambd = P.a
    cdef Py_ssize_t total = P.total
    cdef char* dst = P.dst
    cdef float* o32
    cdef double* o64
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        if wide:
            s0 = 2 * b
            cnt = 2 * nb
        else:
            s0 = 4 * b
            cnt = 4 * nb
        if cnt > total - s0:
            cnt = total - s0
        ptc_neglog(buf, wide, cnt, e)          # e[j] = -log(u_j)
        if kind == _K_F64:
            o64 = (<double*>dst) + s0
            for j in range(cnt):
                o64[j] = e[j] / lambd
        elif kind == _K_F32:
            o32 = (<float*>dst) + s0
            for j in range(cnt):
                o32[j] = <float>(e[j] / lambd)
        else:
            for j in range(cnt):
                _store_real(dst, kind, s0 + j, e[j] / lambd)
        b += nb


cdef uint64_t fill_exponential(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                               uint64_t offset, double lambd) noexcept nogil:
    cdef int kind = _float_kind(dst_type)
    cdef _Params P
    cdef Py_ssize_t nblocks
    if kind < 0 or n <= 0 or dst_type == PT_COMPLEX64 or dst_type == PT_COMPLEX128:
        return offset
    P.dst = dst
    P.kind = kind
    P.total = n
    P.ctr0 = offset
    P.k0 = <uint32_t>seed
    P.k1 = <uint32_t>(seed >> 32)
    P.a = lambd
    nblocks = (n + 1) // 2 if kind == _K_F64 else (n + 3) // 4
    _run(_w_exponential, &P, nblocks, n)
    return offset + <uint64_t>nblocks


# --------------------------------------------------------------------------
# randint / bernoulli (integer-valued outputs)
# --------------------------------------------------------------------------
cdef inline void _store_int(char* dst, int t, Py_ssize_t i, int64_t v) noexcept nogil:
    if t == PT_INT64:
        (<int64_t*>dst)[i] = v
    elif t == PT_INT32:
        (<int32_t*>dst)[i] = <int32_t>v
    elif t == PT_INT16:
        (<int16_t*>dst)[i] = <int16_t>v
    elif t == PT_INT8:
        (<int8_t*>dst)[i] = <int8_t>v
    elif t == PT_UINT8:
        (<uint8_t*>dst)[i] = <uint8_t>v
    elif t == PT_BOOL:
        (<uint8_t*>dst)[i] = 1 if v != 0 else 0
    elif t == PT_FLOAT32:
        (<float*>dst)[i] = <float><double>v
    elif t == PT_FLOAT64:
        (<double*>dst)[i] = <double>v
    elif t == PT_FLOAT16:
        (<uint16_t*>dst)[i] = ptc_float_to_half(<float><double>v)
    elif t == PT_BFLOAT16:
        (<uint16_t*>dst)[i] = ptc_float_to_bf16(<float><double>v)


cdef void _w_randint(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j
    cdef int t = P.kind, tier = P.tier
    cdef uint64_t r = P.r, ulow = <uint64_t>P.low_i, off, dlo, dhi
    cdef Py_ssize_t total = P.total
    cdef char* dst = P.dst
    cdef int per = 4 if tier == 0 else (2 if tier == 1 else 1)
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        s0 = per * b
        cnt = per * nb
        if cnt > total - s0:
            cnt = total - s0
        for j in range(cnt):
            if tier == 0:
                off = ((<uint64_t>buf[j]) * r) >> 32
            elif tier == 1:
                dlo = (<uint64_t>buf[2 * j]) | ((<uint64_t>buf[2 * j + 1]) << 32)
                off = ptc_mulhi64(dlo, r)
            else:
                dlo = (<uint64_t>buf[4 * j]) | ((<uint64_t>buf[4 * j + 1]) << 32)
                dhi = (<uint64_t>buf[4 * j + 2]) | ((<uint64_t>buf[4 * j + 3]) << 32)
                off = ptc_mulhi128(dlo, dhi, r)
            _store_int(dst, t, s0 + j, <int64_t>(ulow + off))
        b += nb


cdef inline bint _is_real_type(int t) noexcept nogil:
    return 0 <= t <= PT_FLOAT64


cdef uint64_t fill_randint(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                           uint64_t offset, int64_t low, int64_t high) noexcept nogil:
    cdef _Params P
    cdef Py_ssize_t nblocks
    cdef uint64_t r
    if not _is_real_type(dst_type) or n <= 0 or not (low < high):
        return offset
    r = <uint64_t>high - <uint64_t>low
    P.dst = dst
    P.kind = dst_type
    P.total = n
    P.ctr0 = offset
    P.k0 = <uint32_t>seed
    P.k1 = <uint32_t>(seed >> 32)
    P.r = r
    P.low_i = low
    if r <= (<uint64_t>1 << 16):
        P.tier = 0
        nblocks = (n + 3) // 4
    elif r <= (<uint64_t>1 << 32):
        P.tier = 1
        nblocks = (n + 1) // 2
    else:
        P.tier = 2
        nblocks = n
    _run(_w_randint, &P, nblocks, n)
    return offset + <uint64_t>nblocks


cdef void _w_bernoulli(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j
    cdef int t = P.kind
    cdef Py_ssize_t total = P.total, ps = P.p_stride
    cdef const double* p = P.p
    cdef char* dst = P.dst
    cdef int64_t v
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        s0 = 4 * b
        cnt = 4 * nb
        if cnt > total - s0:
            cnt = total - s0
        if t == PT_BOOL or t == PT_UINT8 or t == PT_INT8:
            for j in range(cnt):
                (<uint8_t*>dst)[s0 + j] = 1 if <double>buf[j] * _TWO_M32 < p[(s0 + j) * ps] else 0
        elif t == PT_FLOAT32:
            for j in range(cnt):
                (<float*>dst)[s0 + j] = 1.0 if <double>buf[j] * _TWO_M32 < p[(s0 + j) * ps] else 0.0
        else:
            for j in range(cnt):
                v = 1 if <double>buf[j] * _TWO_M32 < p[(s0 + j) * ps] else 0
                _store_int(dst, t, s0 + j, v)
        b += nb


cdef uint64_t fill_bernoulli(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                             uint64_t offset, const double* p,
                             Py_ssize_t p_stride) noexcept nogil:
    cdef _Params P
    cdef Py_ssize_t nblocks
    if not _is_real_type(dst_type) or n <= 0:
        return offset
    P.dst = dst
    P.kind = dst_type
    P.total = n
    P.ctr0 = offset
    P.k0 = <uint32_t>seed
    P.k1 = <uint32_t>(seed >> 32)
    P.p = p
    P.p_stride = p_stride
    nblocks = (n + 3) // 4
    _run(_w_bernoulli, &P, nblocks, n)
    return offset + <uint64_t>nblocks


# --------------------------------------------------------------------------
# randperm
# --------------------------------------------------------------------------
cdef enum:
    _FY_BATCH = 128          # Fisher-Yates: Philox blocks generated at a time


cdef Py_ssize_t _fisher_yates(int64_t* a, Py_ssize_t L, uint64_t ctr0, uint32_t c2,
                              uint32_t k0, uint32_t k1) noexcept nogil:
    """Shuffle a[0:L] in place; returns the number of blocks used.  The blocks
    (counters ctr0, ctr0 + 1, ... with word 2 = c2) come _FY_BATCH at a time
    from the vector Philox loop: the same words as one block per two draws."""
    cdef uint32_t w[4 * _FY_BATCH]
    cdef Py_ssize_t t = L - 1, k, i, nb
    cdef uint64_t q = 0, d
    cdef int64_t tmp
    while t >= 1:
        # this batch: the blocks the remaining t draws need, at most _FY_BATCH
        nb = (t + 1) // 2
        if nb > _FY_BATCH:
            nb = _FY_BATCH
        ptc_philox_blocks(ctr0 + q, c2, k0, k1, nb, w)
        for i in range(2 * nb):
            if t < 1:
                break
            d = (<uint64_t>w[2 * i]) | ((<uint64_t>w[2 * i + 1]) << 32)
            k = <Py_ssize_t>ptc_mulhi64(d, <uint64_t>(t + 1))
            tmp = a[t]; a[t] = a[k]; a[k] = tmp
            t -= 1
        q += <uint64_t>nb
    return <Py_ssize_t>q


cdef void _rp_pass(int64_t* dst, Py_ssize_t n, Py_ssize_t A, Py_ssize_t c, Py_ssize_t bpc,
                   uint64_t offset, uint32_t k0, uint32_t k1, int sh,
                   Py_ssize_t* cnt, uint16_t* bks, bint scatter) noexcept nogil:
    """Phase A over chunk c (blocks [c*bpc, (c+1)*bpc)): histogram or scatter.  With
    ``bks`` (one entry per element), the histogram pass keeps each element's bucket
    there and the scatter pass reads it back instead of generating the words again."""
    cdef uint32_t buf[4 * _BATCH]
    cdef Py_ssize_t b, nb, e, e_end, blo = c * bpc, bhi = c * bpc + bpc
    cdef uint32_t bk
    if bhi > A:
        bhi = A
    if scatter and bks != NULL:
        e_end = 4 * bhi
        if e_end > n:
            e_end = n
        for e in range(4 * blo, e_end):
            bk = bks[e]
            dst[cnt[bk]] = e
            cnt[bk] += 1
        return
    b = blo
    while b < bhi:
        nb = bhi - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(offset + <uint64_t>b, 0, k0, k1, nb, buf)
        e_end = 4 * (b + nb)
        if e_end > n:
            e_end = n
        for e in range(4 * b, e_end):
            bk = buf[e - 4 * b] >> sh
            if scatter:
                dst[cnt[bk]] = e
            elif bks != NULL:
                bks[e] = <uint16_t>bk
            cnt[bk] += 1
        b += nb


cdef inline int _randperm_bits(Py_ssize_t n) noexcept nogil:
    cdef int m = 0
    while m < 20 and (<uint64_t>n) > ((<uint64_t>1) << (14 + m)):
        m += 1
    return m


cdef uint64_t randperm_checked(int64_t* dst, Py_ssize_t n, uint64_t seed,
                               uint64_t offset, int* err) noexcept nogil:
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef int m, nt, sh
    cdef Py_ssize_t i, j, c, nb, A, nch, bpc, L, Q, tot
    cdef Py_ssize_t* cnt
    cdef Py_ssize_t* start
    cdef uint16_t* bks = NULL
    cdef uint64_t ctrB
    if err != NULL:
        err[0] = 0
    if n <= 0:
        return offset
    m = _randperm_bits(n)
    if m == 0:
        for i in range(n):
            dst[i] = i
        Q = _fisher_yates(dst, n, offset, 0, k0, k1)
        return offset + <uint64_t>Q

    nb = (<Py_ssize_t>1) << m
    sh = 32 - m
    A = (n + 3) // 4
    nt = get_num_threads() if n >= parallel_grain() else 1
    nch = nt
    bpc = (A + nch - 1) // nch
    cnt = <Py_ssize_t*>ptc_scratch_calloc(<size_t>(nch * nb), sizeof(Py_ssize_t))
    start = <Py_ssize_t*>ptc_scratch_malloc(<size_t>(nb + 1) * sizeof(Py_ssize_t))
    if cnt == NULL or start == NULL:
        free(cnt)
        free(start)
        for i in range(n):
            dst[i] = -1
        if err != NULL:
            err[0] = 1
        return offset

    # the elements' buckets kept between the passes (16 bits: m <= 16, n <= 2^30), so the
    # words are generated once; without this scratch the scatter pass generates them again
    if m <= 16:
        bks = <uint16_t*>ptc_scratch_malloc(<size_t>n * sizeof(uint16_t))
    # Phase A, pass 1: per-chunk bucket histograms.
    for c in prange(nch, num_threads=nt, schedule='static'):
        _rp_pass(dst, n, A, c, bpc, offset, k0, k1, sh, cnt + c * nb, bks, False)
    # exclusive prefix over (bucket, chunk) -> stable write positions
    tot = 0
    for j in range(nb):
        start[j] = tot
        for c in range(nch):
            L = cnt[c * nb + j]
            cnt[c * nb + j] = tot
            tot += L
    start[nb] = tot
    # Phase A, pass 2: stable scatter of the indices.
    for c in prange(nch, num_threads=nt, schedule='static'):
        _rp_pass(dst, n, A, c, bpc, offset, k0, k1, sh, cnt + c * nb, bks, True)
    free(cnt)
    free(bks)
    # Phase B: Fisher-Yates inside every bucket, bucket j on counter word 2 = j.
    ctrB = offset + <uint64_t>A
    Q = 0
    for j in range(nb):
        L = start[j + 1] - start[j]
        if L // 2 > Q:
            Q = L // 2          # = ceil((L - 1) / 2) draws-pairs
    for j in prange(nb, num_threads=nt, schedule='dynamic', chunksize=16):
        _fisher_yates(dst + start[j], start[j + 1] - start[j], ctrB, <uint32_t>j, k0, k1)
    free(start)
    return offset + <uint64_t>A + <uint64_t>Q


cdef uint64_t randperm(int64_t* dst, Py_ssize_t n, uint64_t seed,
                       uint64_t offset) noexcept nogil:
    return randperm_checked(dst, n, seed, offset, NULL)


# --------------------------------------------------------------------------
# multinomial
# --------------------------------------------------------------------------
cdef void _w_multinomial_repl(const _Params* P, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef uint32_t buf[4 * _BATCH]
    cdef Py_ssize_t b, nb, s0, cnt, j, e, row, lo, hi, mid
    cdef Py_ssize_t total = P.total, ns = P.num_samples, cats = P.cats
    cdef const double* cdf
    cdef uint64_t d
    cdef double u, target
    b = b0
    while b < b1:
        nb = b1 - b
        if nb > _BATCH:
            nb = _BATCH
        ptc_philox_blocks(P.ctr0 + <uint64_t>b, 0, P.k0, P.k1, nb, buf)
        s0 = 2 * b
        cnt = 2 * nb
        if cnt > total - s0:
            cnt = total - s0
        for j in range(cnt):
            e = s0 + j
            row = e // ns
            cdf = P.cdf + row * cats
            d = (<uint64_t>buf[2 * j]) | ((<uint64_t>buf[2 * j + 1]) << 32)
            u = <double>(d >> 11) * _TWO_M53
            target = u * cdf[cats - 1]
            # smallest k with cdf[k] > target
            lo = 0
            hi = cats
            while lo < hi:
                mid = lo + (hi - lo) // 2
                if cdf[mid] > target:
                    hi = mid
                else:
                    lo = mid + 1
            if lo >= cats:
                lo = P.last_nz[row]
            P.out_i[e] = lo
        b += nb


cdef inline bint _heap_gt(double ka, int64_t ia, double kb, int64_t ib) noexcept nogil:
    return ka > kb or (ka == kb and ia > ib)


cdef void _sift_down(double* hk, int64_t* hi, Py_ssize_t size, Py_ssize_t pos) noexcept nogil:
    cdef double k = hk[pos]
    cdef int64_t ix = hi[pos]
    cdef Py_ssize_t ch
    while True:
        ch = 2 * pos + 1
        if ch >= size:
            break
        if ch + 1 < size and _heap_gt(hk[ch + 1], hi[ch + 1], hk[ch], hi[ch]):
            ch += 1
        if _heap_gt(hk[ch], hi[ch], k, ix):
            hk[pos] = hk[ch]
            hi[pos] = hi[ch]
            pos = ch
        else:
            break
    hk[pos] = k
    hi[pos] = ix


cdef void _multinomial_row_norepl(int64_t* out, const double* p, Py_ssize_t row,
                                  Py_ssize_t cats, Py_ssize_t k, uint64_t ctr0,
                                  uint32_t k0, uint32_t k1,
                                  double* hk, int64_t* hi) noexcept nogil:
    """Exponential race over one row; the k smallest keys, ascending."""
    cdef uint32_t w[4]
    cdef Py_ssize_t c, size = 0, pos, par, t
    cdef uint64_t e, blk, cur = <uint64_t>(-1)
    cdef uint64_t d
    cdef double u, key, pc
    cdef bint have = False
    if k <= 0:
        return
    for c in range(cats):
        e = <uint64_t>(row * cats + c)
        blk = e >> 1
        if not have or blk != cur:
            ptc_philox_ctr(ctr0 + blk, 0, k0, k1, w)
            cur = blk
            have = True
        pc = p[c]
        if pc > 0:
            if e & 1:
                d = (<uint64_t>w[2]) | ((<uint64_t>w[3]) << 32)
            else:
                d = (<uint64_t>w[0]) | ((<uint64_t>w[1]) << 32)
            u = (<double>(d >> 12) + 0.5) * _TWO_M52
            key = -ptc_log(u) / pc
            if not (key <= DBL_MAX):
                key = DBL_MAX
        else:
            key = INFINITY
        if size < k:
            # push + sift up
            pos = size
            size += 1
            while pos > 0:
                par = (pos - 1) // 2
                if _heap_gt(key, c, hk[par], hi[par]):
                    hk[pos] = hk[par]
                    hi[pos] = hi[par]
                    pos = par
                else:
                    break
            hk[pos] = key
            hi[pos] = c
        elif key < hk[0]:
            hk[0] = key
            hi[0] = c
            _sift_down(hk, hi, size, 0)
    # heap sort: pop the max into the last free slot
    t = size - 1
    while t >= 0:
        out[t] = hi[0]
        hk[0] = hk[t]
        hi[0] = hi[t]
        _sift_down(hk, hi, t, 0)
        t -= 1


cdef uint64_t multinomial_checked(int64_t* out, const double* probs, Py_ssize_t rows,
                                  Py_ssize_t cats, Py_ssize_t num_samples,
                                  bint replacement, uint64_t seed, uint64_t offset,
                                  int* err) noexcept nogil:
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef _Params P
    cdef Py_ssize_t total, nblocks, r, c, k, tid
    cdef int nt
    cdef double s
    cdef double* cdf
    cdef Py_ssize_t* last_nz
    cdef double* hk
    cdef int64_t* hidx
    if err != NULL:
        err[0] = 0
    if rows <= 0 or cats <= 0 or num_samples <= 0:
        return offset
    total = rows * num_samples
    if replacement:
        cdf = <double*>ptc_scratch_malloc(<size_t>(rows * cats) * sizeof(double))
        last_nz = <Py_ssize_t*>ptc_scratch_malloc(<size_t>rows * sizeof(Py_ssize_t))
        if cdf == NULL or last_nz == NULL:
            free(cdf)
            free(last_nz)
            for r in range(total):
                out[r] = -1
            if err != NULL:
                err[0] = 1
            return offset
        nt = get_num_threads() if rows * cats >= parallel_grain() else 1
        for r in prange(rows, num_threads=nt, schedule='static'):
            s = 0.0
            last_nz[r] = cats - 1
            for c in range(cats):
                s = s + probs[r * cats + c]
                cdf[r * cats + c] = s
            for c in range(cats - 1, -1, -1):
                if probs[r * cats + c] > 0:
                    last_nz[r] = c
                    break
        P.total = total
        P.ctr0 = offset
        P.k0 = k0
        P.k1 = k1
        P.cdf = cdf
        P.last_nz = last_nz
        P.cats = cats
        P.num_samples = num_samples
        P.out_i = out
        nblocks = (total + 1) // 2
        _run(_w_multinomial_repl, &P, nblocks, total)
        free(cdf)
        free(last_nz)
        return offset + <uint64_t>nblocks

    # without replacement
    k = num_samples if num_samples <= cats else cats
    nt = get_num_threads() if (rows > 1 and rows * cats >= parallel_grain()) else 1
    hk = <double*>ptc_scratch_malloc(<size_t>(nt * k) * sizeof(double))
    hidx = <int64_t*>ptc_scratch_malloc(<size_t>(nt * k) * sizeof(int64_t))
    if hk == NULL or hidx == NULL:
        free(hk)
        free(hidx)
        for r in range(total):
            out[r] = -1
        if err != NULL:
            err[0] = 1
        return offset
    if num_samples > k:
        # invalid request (caller should have refused): pad with -1
        for r in range(total):
            out[r] = -1
    if nt > 1:
        for r in prange(rows, num_threads=nt, schedule='dynamic'):
            tid = threadid()
            _multinomial_row_norepl(out + r * num_samples, probs + r * cats, r, cats, k,
                                    offset, k0, k1, hk + tid * k, hidx + tid * k)
    else:
        for r in range(rows):
            _multinomial_row_norepl(out + r * num_samples, probs + r * cats, r, cats, k,
                                    offset, k0, k1, hk, hidx)
    free(hk)
    free(hidx)
    nblocks = (rows * cats + 1) // 2
    return offset + <uint64_t>nblocks


cdef uint64_t multinomial(int64_t* out, const double* probs, Py_ssize_t rows,
                          Py_ssize_t cats, Py_ssize_t num_samples, bint replacement,
                          uint64_t seed, uint64_t offset) noexcept nogil:
    return multinomial_checked(out, probs, rows, cats, num_samples, replacement,
                               seed, offset, NULL)


# --------------------------------------------------------------------------
# Python wrappers (raw addresses; for tests and the Python layer)
# --------------------------------------------------------------------------
_DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                "bfloat16", "float32", "float64", "complex64", "complex128", "complex32")

_FLOATS_C = frozenset((PT_FLOAT16, PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64,
                       PT_COMPLEX64, PT_COMPLEX128))
_FLOATS = frozenset((PT_FLOAT16, PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64))
_REALS = frozenset(range(PT_FLOAT64 + 1))
# element counts above this could overflow byte/scalar index arithmetic
_MAX_ELEMS = (2**63 - 1) // 32


cdef _check(str kernel, Py_ssize_t addr, int dst_type, Py_ssize_t n, allowed):
    if dst_type not in allowed:
        name = _DTYPE_NAMES[dst_type] if 0 <= dst_type < len(_DTYPE_NAMES) else "unknown"
        raise TypeError(f"{kernel}: unsupported dtype number {dst_type} ({name})")
    if n < 0:
        raise ValueError(f"{kernel}: n must be >= 0, got {n}")
    if n > _MAX_ELEMS:
        raise ValueError(f"{kernel}: n too large ({n})")
    if n > 0 and addr == 0:
        raise ValueError(f"{kernel}: null destination address")


def philox_block(ctr, key):
    """Philox4x32-10 of counter ``ctr`` (4 uint32) and key ``key`` (2 uint32)."""
    cdef uint32_t c[4]
    cdef uint32_t kk[2]
    cdef uint32_t o[4]
    cdef int i
    ctr = tuple(ctr)
    key = tuple(key)
    if len(ctr) != 4 or len(key) != 2:
        raise ValueError("philox_block expects a 4-word counter and a 2-word key")
    for i in range(4):
        if not 0 <= ctr[i] <= 0xFFFFFFFF:
            raise ValueError("counter words must be in [0, 2**32)")
        c[i] = <uint32_t>ctr[i]
    for i in range(2):
        if not 0 <= key[i] <= 0xFFFFFFFF:
            raise ValueError("key words must be in [0, 2**32)")
        kk[i] = <uint32_t>key[i]
    philox4x32_10(c, kk, o)
    return (o[0], o[1], o[2], o[3])


def philox_stream(uint64_t seed, uint64_t offset, Py_ssize_t nblocks, Py_ssize_t addr):
    """Raw words: blocks offset .. offset+nblocks-1 of ``seed`` -> 4*nblocks uint32 at addr."""
    if nblocks < 0:
        raise ValueError("nblocks must be >= 0")
    if nblocks > 0 and addr == 0:
        raise ValueError("philox_stream: null destination address")
    ptc_kernel_enter()
    with nogil:
        try:
            ptc_philox_blocks(offset, 0, <uint32_t>seed, <uint32_t>(seed >> 32), nblocks,
                              <uint32_t*><uintptr_t>addr)
        finally:
            ptc_kernel_exit()
    return offset + <uint64_t>nblocks


def fill_contiguous(kernel, _TensorBase t not None, Py_ssize_t n, *args):
    """``kernel(addr, dtype, n, *args)`` (one of the ``fill_*_addr``) over the
    contiguous CPU tensor ``t`` of ``n`` elements, its address read at the
    call: another thread may have resized or restrided ``t`` since the caller
    looked (RuntimeError then, never a write past its memory)."""
    if t._numel != n or not t._is_contig():
        raise RuntimeError(f"random fill: the tensor changed while being filled (another thread "
                           f"resized or restrided it: {n} contiguous elements expected)")
    cdef char* p = t._ptr()
    return kernel(<Py_ssize_t><uintptr_t>p, t._dtype.num, n, *args)



cdef device _CPU = _device_type("cpu")


def draw_plain(bint normal, tuple args, dt, gen):
    """``randn(*args)`` (``normal``) or ``rand(*args)`` of a shape of plain
    non-negative ints (``args``, or one tuple of them) with ``dt`` float32,
    float64 or None (the default dtype), drawn from the CPU generator ``gen`` into a
    new contiguous CPU tensor: the fill kernel at once, the draws the
    general path makes; None for any other call (its checks and errors)."""
    if len(args) == 1 and type(args[0]) is tuple:
        args = <tuple>args[0]
    cdef Py_ssize_t shape[8]
    cdef int nd = len(args), i
    cdef Py_ssize_t n = 1
    if nd > 8:
        return None
    for i in range(nd):
        v = args[i]
        if type(v) is not int or v < 0 or v > _MAX_ELEMS:
            return None
        shape[i] = v
        if shape[i] and n > _MAX_ELEMS // shape[i]:
            return None
        n *= shape[i]
    if dt is None:
        dt = _get_default_dtype()
    if not isinstance(dt, dtype):
        return None
    cdef int num = (<dtype>dt).num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    return _draw_new(normal, <dtype>dt, nd, shape, n, gen)


def draw_like(bint normal, x, gen):
    """``randn_like(x)`` (``normal``) or ``rand_like(x)`` with no other
    argument for a float32/float64 CPU tensor ``x`` with row-major strides: a new
    contiguous tensor of its shape and dtype drawn from the CPU generator
    ``gen`` (the draws of the general path); None for anything else."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef int num = t._dtype.num, i
    cdef Py_ssize_t expect = 1
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or t._storage.device._type_code != 0:
        return None
    for i in range(t._ndim - 1, -1, -1):
        # row-major strides on every dim, size-1 dims included: the result of
        # the general path (torch's preserve_format keeps a dense tensor's strides)
        if t._strides[i] != expect:
            return None
        expect *= t._shape[i]
    return _draw_new(normal, t._dtype, t._ndim, t._shape, t._numel, gen)


cdef _TensorBase _draw_new(bint normal, dtype dt, int nd, const Py_ssize_t* shape,
                           Py_ssize_t n, gen):
    """A new contiguous CPU tensor of ``dt`` (float32/float64) and ``shape``
    (``n`` elements), filled from the CPU generator ``gen``."""
    cdef _TensorBase t = _empty_contig(dt, nd, shape, _CPU, False)
    if n == 0:
        return t
    # (the CPU generator's _take/_advance: no take hook exists for the CPU)
    cdef uint64_t s = gen._seed, off = gen._offset, r
    cdef char* p = t._ptr()
    cdef int num = dt.num
    ptc_kernel_enter()
    with nogil:
        try:
            if normal:
                r = fill_normal(p, num, n, s, off, 0.0, 1.0)
            else:
                r = fill_uniform(p, num, n, s, off, 0.0, 1.0)
        finally:
            ptc_kernel_exit()
    gen._offset = r
    return t

def fill_uniform_addr(Py_ssize_t addr, int dst_type, Py_ssize_t n, uint64_t seed,
                      uint64_t offset, double low, double high):
    """Uniform [low, high) into n contiguous elements at addr; returns the new offset."""
    cdef uint64_t r
    _check("fill_uniform", addr, dst_type, n, _FLOATS_C)
    if not (low <= high):
        raise ValueError(f"fill_uniform: expects low <= high, got low={low}, high={high}")
    if not isfinite(high - low):
        raise ValueError(f"fill_uniform: high - low must be finite, got low={low}, high={high}")
    ptc_kernel_enter()
    with nogil:
        try:
            r = fill_uniform(<char*><uintptr_t>addr, dst_type, n, seed, offset, low, high)
        finally:
            ptc_kernel_exit()
    return r


def fill_normal_addr(Py_ssize_t addr, int dst_type, Py_ssize_t n, uint64_t seed,
                     uint64_t offset, double mean, double std):
    """Normal(mean, std^2) into n contiguous elements at addr; returns the new offset."""
    cdef uint64_t r
    _check("fill_normal", addr, dst_type, n, _FLOATS_C)
    if not (std >= 0.0):
        raise ValueError(f"fill_normal: expects std >= 0.0, got {std}")
    ptc_kernel_enter()
    with nogil:
        try:
            r = fill_normal(<char*><uintptr_t>addr, dst_type, n, seed, offset, mean, std)
        finally:
            ptc_kernel_exit()
    return r


def fill_randint_addr(Py_ssize_t addr, int dst_type, Py_ssize_t n, uint64_t seed,
                      uint64_t offset, int64_t low, int64_t high):
    """Integers uniform in [low, high) into n contiguous elements; returns the new offset."""
    cdef uint64_t r
    _check("fill_randint", addr, dst_type, n, _REALS)
    if not (low < high):
        raise ValueError(f"fill_randint: expects low < high, got low={low}, high={high}")
    ptc_kernel_enter()
    with nogil:
        try:
            r = fill_randint(<char*><uintptr_t>addr, dst_type, n, seed, offset, low, high)
        finally:
            ptc_kernel_exit()
    return r


def fill_bernoulli_addr(Py_ssize_t addr, int dst_type, Py_ssize_t n, uint64_t seed,
                        uint64_t offset, Py_ssize_t p_addr, Py_ssize_t p_stride):
    """0/1 with probability p[i*p_stride] (float64 at p_addr); returns the new offset."""
    cdef uint64_t r
    _check("fill_bernoulli", addr, dst_type, n, _REALS)
    if n > 0 and p_addr == 0:
        raise ValueError("fill_bernoulli: null probability address")
    ptc_kernel_enter()
    with nogil:
        try:
            r = fill_bernoulli(<char*><uintptr_t>addr, dst_type, n, seed, offset,
                               <const double*><uintptr_t>p_addr, p_stride)
        finally:
            ptc_kernel_exit()
    return r


def fill_exponential_addr(Py_ssize_t addr, int dst_type, Py_ssize_t n, uint64_t seed,
                          uint64_t offset, double lambd):
    """Exponential(lambd) into n contiguous elements at addr; returns the new offset."""
    cdef uint64_t r
    _check("fill_exponential", addr, dst_type, n, _FLOATS)
    if not (lambd > 0.0):
        raise ValueError(f"fill_exponential: expects lambd > 0.0, got {lambd}")
    ptc_kernel_enter()
    with nogil:
        try:
            r = fill_exponential(<char*><uintptr_t>addr, dst_type, n, seed, offset, lambd)
        finally:
            ptc_kernel_exit()
    return r


def randperm_addr(Py_ssize_t addr, Py_ssize_t n, uint64_t seed, uint64_t offset):
    """Random permutation of 0..n-1 into n int64 at addr; returns the new offset."""
    cdef uint64_t r
    cdef int err = 0
    if n < 0:
        raise ValueError(f"randperm: n must be >= 0, got {n}")
    if n > _MAX_ELEMS:
        raise ValueError(f"randperm: n too large ({n})")
    if n > 0 and addr == 0:
        raise ValueError("randperm: null destination address")
    ptc_kernel_enter()
    with nogil:
        try:
            r = randperm_checked(<int64_t*><uintptr_t>addr, n, seed, offset, &err)
        finally:
            ptc_kernel_exit()
    if err:
        raise MemoryError("randperm: could not allocate scratch memory")
    return r


def multinomial_addr(Py_ssize_t out_addr, Py_ssize_t probs_addr, Py_ssize_t rows,
                     Py_ssize_t cats, Py_ssize_t num_samples, bint replacement,
                     uint64_t seed, uint64_t offset):
    """rows x num_samples int64 category indices at out_addr from rows x cats float64
    probabilities at probs_addr (validated by the caller); returns the new offset."""
    cdef uint64_t r
    cdef int err = 0
    if rows < 0 or cats < 0 or num_samples < 0:
        raise ValueError("multinomial: rows, cats and num_samples must be >= 0")
    if rows > 0 and num_samples > 0:
        if cats == 0:
            raise ValueError("multinomial: need at least one category")
        if not replacement and num_samples > cats:
            raise ValueError("multinomial: cannot sample num_samples > cats "
                             "without replacement")
        if out_addr == 0 or probs_addr == 0:
            raise ValueError("multinomial: null address")
        if (<object>rows) * num_samples > _MAX_ELEMS or (<object>rows) * cats > _MAX_ELEMS:
            raise ValueError("multinomial: size overflow")
    ptc_kernel_enter()
    with nogil:
        try:
            r = multinomial_checked(<int64_t*><uintptr_t>out_addr,
                                    <const double*><uintptr_t>probs_addr, rows, cats,
                                    num_samples, replacement, seed, offset, &err)
        finally:
            ptc_kernel_exit()
    if err:
        raise MemoryError("multinomial: could not allocate scratch memory")
    return r


# --------------------------------------------------------------------------
# test hooks for the deterministic math helpers
# --------------------------------------------------------------------------
def _det_log(double x):
    """ptc_log(x) (x positive, normal, finite) -- test hook."""
    if not (x >= 2.2250738585072014e-308 and x <= 1.7976931348623157e308):
        raise ValueError("_det_log: x must be a positive normal finite double")
    return ptc_log(x)


def _det_sincos2pi(double u):
    """(sin(2 pi u), cos(2 pi u)) for u in [0, 1) -- test hook."""
    cdef double s, c
    if not (0.0 <= u < 1.0):
        raise ValueError("_det_sincos2pi: u must be in [0, 1)")
    ptc_sincos2pi(u, &s, &c)
    return (s, c)


def _set_avx2(bint on):
    """Test hook: the vector paths on (the CPU's best) or off (SSE2/scalar);
    returns whether they were on."""
    return bool(ptc_philox_set_level(-1 if on else 0))


def _set_simd_level(int level):
    """Test hook: the vector level the Philox, Box-Muller and -log loops use
    (0 SSE2/scalar, 1 AVX2, 2 AVX-512F with DQ; capped at what the CPU has, -1 the
    CPU's best); returns the previous level.  Every level gives the same bits."""
    return ptc_philox_set_level(level)


def _simd_level_max():
    """The best vector level of this CPU for the loops of ``_set_simd_level``."""
    cdef int prev = ptc_philox_set_level(-1)
    cdef int best = ptc_philox_set_level(prev)
    return best
