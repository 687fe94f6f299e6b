/* ptcore's own float32 GEMM (issue 22): a packed, cache-blocked GEMM in the
   style of BLIS/GotoBLAS with register-tiled micro-kernels for AVX-512F and
   for AVX2+FMA, chosen at run time by the CPU's flags.

   Interface: BLAS's column-major sgemm, C(m, n) = alpha op(A)(m, k) op(B)(k, n)
   + beta C, op given by 'N'/'T' (also 'n'/'t'; 'C'/'c' is 'T' for real
   data); beta == 0 ignores C's values (NaN included), as BLAS does.

   Why not the BLAS: on AMD Zen 4 (AVX-512 on 256-bit pipes) SciPy's
   OpenBLAS (SkylakeX kernels) reaches ~78% of the FMA peak on the products
   of convolutions and transformer layers, while PyTorch's oneDNN kernels run
   at the peak; these kernels reach the same rate as oneDNN there, and
   AVX2-only CPUs get a 16 x 6 kernel of the same design.

   Summation order: every output element is one FMA chain over k within each
   KC block, blocks added to C in order (C = alpha acc + t, t = beta C for
   the first block and C afterwards, one fused multiply-add), independent of
   the element's position and of m and n; so a product split into column or
   row tiles (ptcore's threads, _gemm_tiles.pxi) gives the one-call result
   bit for bit.

   ptc_sgemm_isa() is 2 (AVX-512F), 1 (AVX2+FMA) or 0 (other CPUs and
   compilers: callers use the BLAS); ptc_sgemm() returns 0, or -1 when its
   packing buffers cannot be allocated (callers then use the BLAS).  Packing
   buffers are per thread, grown on demand and kept until the thread exits
   (at most ~5 MiB per thread). */
#ifndef PTC_SGEMM_H
#define PTC_SGEMM_H
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "ptc_scratch.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <pthread.h>
#include <unistd.h>

/* the calling thread's packing buffers, freed when the thread exits (a
   pthread key's destructor: threads that come and go leave nothing behind) */
typedef struct { float* buf[3]; size_t cap[3]; } ptc_sg_bufs;
static pthread_key_t ptc_sg_key;
static pthread_once_t ptc_sg_once = PTHREAD_ONCE_INIT;
static int ptc_sg_key_ok = 0;
static int ptc_sg_isa_cached = -1;
static int ptc_sg_forced = -1;    /* tests and benchmarks: force an ISA (or -1) */

static void ptc_sg_free_bufs(void* p) {
    ptc_sg_bufs* b = (ptc_sg_bufs*)p;
    if (b == NULL) return;
    free(b->buf[0]);
    free(b->buf[1]);
    free(b->buf[2]);
    free(b);
}

static void ptc_sg_make_key(void) {
    ptc_sg_key_ok = pthread_key_create(&ptc_sg_key, ptc_sg_free_bufs) == 0;
}

/* buffer ``which`` (0: A panels, 1: B panels, 2: the transposed result of
   ptc_sgemm_swapped) of this thread, at least
   ``need`` floats, 64-byte aligned; NULL when memory is short */
static float* ptc_sg_buffer(int which, size_t need) {
    ptc_sg_bufs* b;
    void* p = NULL;
    size_t bytes;
    pthread_once(&ptc_sg_once, ptc_sg_make_key);
    if (!ptc_sg_key_ok) return NULL;
    b = (ptc_sg_bufs*)pthread_getspecific(ptc_sg_key);
    if (b == NULL) {
        b = (ptc_sg_bufs*)ptc_scratch_calloc(1, sizeof(ptc_sg_bufs));
        if (b == NULL) return NULL;
        if (pthread_setspecific(ptc_sg_key, b) != 0) { free(b); return NULL; }
    }
    if (b->cap[which] >= need) return b->buf[which];
    bytes = (need * sizeof(float) + 63) & ~(size_t)63;
    if (ptc_scratch_memalign(&p, 64, bytes) != 0) return NULL;
    free(b->buf[which]);
    b->buf[which] = (float*)p;
    b->cap[which] = need;
    return b->buf[which];
}

static int ptc_sgemm_isa(void) {
    if (ptc_sg_forced >= 0) return ptc_sg_forced;
    if (ptc_sg_isa_cached < 0) {
        int isa = 0;
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = 1;
        if (isa && (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))) isa = 2;
        ptc_sg_isa_cached = isa;
    }
    return ptc_sg_isa_cached;
}

/* force an ISA for tests (0: none, 1: AVX2, 2: AVX-512; -1: the CPU's);
   returns the ISA in effect (never one the CPU lacks) */
static int ptc_sgemm_force_isa(int isa) {
    int cpu;
    ptc_sg_forced = -1;
    cpu = ptc_sgemm_isa();
    ptc_sg_forced = (isa < 0 || isa > cpu) ? -1 : isa;
    return ptc_sgemm_isa();
}

/* ---- packing (both ISAs): zero-padded micro-panels ---------------------- */
/* an 8 x 8 block: d[p * W + r] = s[r * ld + p] for r, p < 8 */
__attribute__((target("avx2"))) static inline void
ptc_sg_t8x8(const float* s, ptrdiff_t ld, float* d, ptrdiff_t W) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ld),
           r2 = _mm256_loadu_ps(s + 2 * ld), r3 = _mm256_loadu_ps(s + 3 * ld),
           r4 = _mm256_loadu_ps(s + 4 * ld), r5 = _mm256_loadu_ps(s + 5 * ld),
           r6 = _mm256_loadu_ps(s + 6 * ld), r7 = _mm256_loadu_ps(s + 7 * ld);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
           t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
           t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
           t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
           u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
           u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
           u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + W, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * W, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * W, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * W, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * W, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * W, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * W, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* the first n (4 or 6) rows of an 8 x 8 block, transposed: d[p * W + r] =
   s[r * ld + p] for r < n, p < 8 (AVX2's 6-column B panels and the last 4
   rows of AVX-512's 12-column ones, element by element before: 4% of the GPT
   workload's step on AMD Zen 1); only the n floats of each p are written */
__attribute__((target("avx2"))) static inline void
ptc_sg_tnx8(int n, const float* s, ptrdiff_t ld, float* d, ptrdiff_t W) {
    const __m256 z = _mm256_setzero_ps();
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ld),
           r2 = _mm256_loadu_ps(s + 2 * ld), r3 = _mm256_loadu_ps(s + 3 * ld),
           r4 = n > 4 ? _mm256_loadu_ps(s + 4 * ld) : z, r5 = n > 4 ? _mm256_loadu_ps(s + 5 * ld) : z;
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
           t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
           t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    /* rows 0-3 of column p: 128-bit halves of u0..u3; rows 4-5: of t4/t5 */
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
           u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u[4] = {u0, u1, u2, u3};
    int q;
    for (q = 0; q < 4; q++) {
        _mm_storeu_ps(d + q * W, _mm256_castps256_ps128(u[q]));
        _mm_storeu_ps(d + (q + 4) * W, _mm256_extractf128_ps(u[q], 1));
    }
    if (n > 4) {
        /* t4 = (c0r4 c0r5 c1r4 c1r5 | c4r4 c4r5 c5r4 c5r5), t5 likewise for
           columns 2, 3 | 6, 7: 64-bit pairs */
        const __m128 a = _mm256_castps256_ps128(t4), b = _mm256_extractf128_ps(t4, 1);
        const __m128 c = _mm256_castps256_ps128(t5), e = _mm256_extractf128_ps(t5, 1);
        _mm_storel_pi((__m64*)(d + 4), a);
        _mm_storeh_pi((__m64*)(d + W + 4), a);
        _mm_storel_pi((__m64*)(d + 2 * W + 4), c);
        _mm_storeh_pi((__m64*)(d + 3 * W + 4), c);
        _mm_storel_pi((__m64*)(d + 4 * W + 4), b);
        _mm_storeh_pi((__m64*)(d + 5 * W + 4), b);
        _mm_storel_pi((__m64*)(d + 6 * W + 4), e);
        _mm_storeh_pi((__m64*)(d + 7 * W + 4), e);
    }
}

/* d[p * W + r] = src[r * ld + p] for r < rows (zeros for rows <= r < W),
   p < kc: one panel from ``rows`` vectors that are contiguous along p; 8 x 8
   blocks by AVX shuffles, the rest element by element, in chunks of 32 p so
   that the chunk of the panel being written stays in L1 */
__attribute__((target("avx2"))) static void
ptc_sg_transpose_panel(int W, ptrdiff_t rows, ptrdiff_t kc, const float* src, ptrdiff_t ld,
                       float* d) {
    ptrdiff_t p0, p, r;
    ptrdiff_t r8 = rows / 8 * 8;
    for (p0 = 0; p0 < kc; p0 += 32) {
        ptrdiff_t p1 = kc - p0 < 32 ? kc : p0 + 32;
        ptrdiff_t p8 = p0 + (p1 - p0) / 8 * 8;
        for (r = 0; r < r8; r += 8) {
            for (p = p0; p < p8; p += 8) ptc_sg_t8x8(src + r * ld + p, ld, d + p * W + r, W);
            for (; p < p1; p++) {
                ptrdiff_t q;
                for (q = 0; q < 8; q++) d[p * W + r + q] = src[(r + q) * ld + p];
            }
        }
        r = r8;
        if (rows - r8 == 4 || rows - r8 == 6) {
            for (p = p0; p < p8; p += 8)
                ptc_sg_tnx8((int)(rows - r8), src + r8 * ld + p, ld, d + p * W + r8, W);
            for (r = r8; r < rows; r++) {
                const float* s = src + r * ld;
                for (p = p8; p < p1; p++) d[p * W + r] = s[p];
            }
        }
        for (; r < rows; r++) {
            const float* s = src + r * ld;
            for (p = p0; p < p1; p++) d[p * W + r] = s[p];
        }
        for (r = rows; r < W; r++)
            for (p = p0; p < p1; p++) d[p * W + r] = 0.0f;
    }
}

/* copy W floats (W one of the tile sizes, so the copy is inlined as vector moves) */
static inline void ptc_sg_copyw(float* d, const float* s, int W) {
    switch (W) {
    case 32: __builtin_memcpy(d, s, 32 * sizeof(float)); break;
    case 16: __builtin_memcpy(d, s, 16 * sizeof(float)); break;
    case 12: __builtin_memcpy(d, s, 12 * sizeof(float)); break;
    case 6: __builtin_memcpy(d, s, 6 * sizeof(float)); break;
    default: memcpy(d, s, (size_t)W * sizeof(float));
    }
}

/* Panels packed from rows (op(B) = B^T) or columns (op(A) = A) take
   PTC_SG_PACK_G panels per sweep over the block's kc rows.  A sweep over all
   of them wrote one chunk into every panel per row: with kc = 384 the
   panels lie 18 KiB (B) or 48 KiB (A) apart, which maps every write stream
   to the same one or two L1 sets, so each chunk missed L1; packing a 384 x
   384 block of B took 44 us, 23 us four panels at a time (Intel AVX-512;
   the same bits, only the order of the copies changes). */
#define PTC_SG_PACK_G 4

/* W-wide panels from a block whose runs along the panels' width are
   contiguous: element (p, j) at s[j + p ld] for p in [0, kc), j in [0, nc)
   goes to dst[(j / W) W kc + p W + j % W], the last panel zero-padded (op(A)
   = A's columns into MR-row panels, op(B) = B^T's rows into NR-column ones) */
static void ptc_sg_pack_runs(int W, ptrdiff_t kc, ptrdiff_t nc, const float* s, ptrdiff_t ld,
                             float* dst) {
    ptrdiff_t full = nc / W * W, g0, j0, j, p;
    for (g0 = 0; g0 < full; g0 += PTC_SG_PACK_G * W) {
        ptrdiff_t g1 = g0 + PTC_SG_PACK_G * W < full ? g0 + PTC_SG_PACK_G * W : full;
        for (p = 0; p < kc; p++)
            for (j0 = g0; j0 < g1; j0 += W)
                ptc_sg_copyw(dst + j0 * kc + p * W, s + p * ld + j0, W);
    }
    if (full < nc)
        for (p = 0; p < kc; p++) {
            float* d = dst + full * kc + p * W;
            for (j = 0; j < nc - full; j++) d[j] = s[p * ld + full + j];
            for (; j < W; j++) d[j] = 0.0f;
        }
}

/* op(A)(i, p) for i in [0, mc), p in [0, kc) into panels of MR rows:
   dst[panel][p][0..MR) */
static void ptc_sg_pack_a(int MR, int trans, ptrdiff_t mc, ptrdiff_t kc,
                          const float* a, ptrdiff_t lda, float* dst) {
    ptrdiff_t i0;
    if (!trans) {                /* A(i, p) = a[i + p lda]: columns contiguous */
        ptc_sg_pack_runs(MR, kc, mc, a, lda, dst);
        return;
    }
    for (i0 = 0; i0 < mc; i0 += MR) {   /* A(i, p) = a[p + i lda]: rows contiguous */
        ptrdiff_t mr = mc - i0 < MR ? mc - i0 : MR;
        ptc_sg_transpose_panel(MR, mr, kc, a + i0 * lda, lda, dst + i0 * kc);
    }
}

/* op(B)(p, j) for p in [0, kc), j in [0, nc) into panels of NR columns:
   dst[panel][p][0..NR) */
static void ptc_sg_pack_b(int NR, int trans, ptrdiff_t kc, ptrdiff_t nc,
                          const float* b, ptrdiff_t ldb, float* dst) {
    ptrdiff_t j0;
    if (trans) {                 /* B(p, j) = b[j + p ldb]: rows contiguous */
        ptc_sg_pack_runs(NR, kc, nc, b, ldb, dst);
        return;
    }
    for (j0 = 0; j0 < nc; j0 += NR) {   /* B(p, j) = b[p + j ldb]: columns contiguous */
        ptrdiff_t nr = nc - j0 < NR ? nc - j0 : NR;
        ptc_sg_transpose_panel(NR, nr, kc, b + j0 * ldb, ldb, dst + j0 * kc);
    }
}

/* C(i, j) = alpha acc(i, j) + t for the mr x nr valid part of a tile held
   in acc[j * MR + i]; t = beta Ci (first=1, beta != 0), 0 (first, beta == 0)
   or C (later blocks): the vector path's arithmetic, element by element.
   Ci is the input of the first k block: C itself, or a separate matrix
   (addmm's bias, ldci = 0 where one vector serves every column) */
static inline void ptc_sg_edge(const float* acc, int MR, ptrdiff_t mr, ptrdiff_t nr,
                               float* C, ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci,
                               float alpha, float beta, int first) {
    ptrdiff_t i, j;
    for (j = 0; j < nr; j++)
        for (i = 0; i < mr; i++) {
            float* c = C + j * ldc + i;
            if (first && beta == 0.0f) *c = alpha * acc[j * MR + i];
            else *c = fmaf(alpha, acc[j * MR + i], first ? beta * Ci[j * ldci + i] : *c);
        }
}

/* the store of one tile column (two vectors) for both ISAs; mode 0: C =
   alpha r; 1: C = alpha r + beta Ci; 2: C = alpha r + C; 3: into tmp (an edge
   tile, finished by ptc_sg_edge) */
#define PTC_SG_STORE(NAME, TARGET, V, VL, LOAD, STORE, MUL, FMADD)                   \
__attribute__((target(TARGET))) static inline void                                  \
NAME(V r0, V r1, float* c, const float* ci, float* tmp, V va, V vb, int mode) {      \
    if (mode == 3) { STORE(tmp, r0); STORE(tmp + VL, r1); return; }                  \
    if (mode == 0) {                                                                 \
        STORE(c, MUL(va, r0)); STORE(c + VL, MUL(va, r1));                           \
    } else if (mode == 1) {                                                          \
        STORE(c, FMADD(va, r0, MUL(vb, LOAD(ci))));                                  \
        STORE(c + VL, FMADD(va, r1, MUL(vb, LOAD(ci + VL))));                        \
    } else {                                                                         \
        STORE(c, FMADD(va, r0, LOAD(c))); STORE(c + VL, FMADD(va, r1, LOAD(c + VL))); \
    }                                                                                \
}

/* ---- micro-kernels ---------------------------------------------------------
   A kernel reads its operands where they lie, packed or not:
   - A (mr rows of a panel): element (i, p) at Ap[p * as + i]; as = MR for a
     packed panel, lda for op(A) = A itself (columns contiguous: no copy).
   - B (nr columns of a tile): element (p, J) at Bp[p * bs + J] ("rows": a
     packed panel, bs = NR, or op(B) = B^T itself, bs = ldb), or at
     Bp[p + J * bs] ("cols": op(B) = B itself, bs = ldb; four column
     pointers and offsets 0, bs, 2 bs, so the addresses stay base + index *
     scale with no per-column register).
   Every output element is the same FMA chain over the block's p whatever
   the layout, so packed and unpacked operands give the same bits.  Partial
   panels and tiles (mr < MR, nr < NR) are always packed, zero-padded: a
   kernel reads MR rows and NR columns. */

/* ---- AVX-512F: 32 x 12 tiles (24 zmm accumulators) ----------------------- */
#define PTC_SG512_MR 32
#define PTC_SG512_NR 12
#define PTC_SG512_KC 384
#define PTC_SG512_MC 192
#define PTC_SG512_NC 3072

PTC_SG_STORE(ptc_sg512_store, "avx512f,avx512vl", __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps,
             _mm512_mul_ps, _mm512_fmadd_ps)

/* the B tile's column pointers: b0 + {0, o1, o2}, b3 + ..., b6 + ..., b9 + ...,
   each advanced by ``step`` per p */
#define PTC_SG_BPTRS(COLS, Bp, bs)                                                   \
    const ptrdiff_t o1 = (COLS) ? (bs) : 1, o2 = (COLS) ? 2 * (bs) : 2,             \
                    step = (COLS) ? 1 : (bs);                                        \
    const float *b0 = (Bp), *b3 = (Bp) + 3 * o1, *b6 = (Bp) + 6 * o1, *b9 = (Bp) + 9 * o1;

__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
ptc_sg512_tile(const int cols, ptrdiff_t kc, const float* Ap, ptrdiff_t as, const float* Bp,
               ptrdiff_t bs, float* C, ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci,
               float alpha, float beta, int first, ptrdiff_t mr, ptrdiff_t nr) {
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
           c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00,
           c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00, c81 = c00,
           c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
    ptrdiff_t p;
    float tmp[PTC_SG512_MR * PTC_SG512_NR];
    int full = (mr == PTC_SG512_MR && nr == PTC_SG512_NR);
    int mode = !full ? 3 : (!first ? 2 : (beta == 0.0f ? 0 : 1));
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    PTC_SG_BPTRS(cols, Bp, bs)
    if (full) {
        ptrdiff_t j;
        for (j = 0; j < PTC_SG512_NR; j++) {
            _mm_prefetch((const char*)(C + j * ldc), _MM_HINT_T0);
            _mm_prefetch((const char*)(C + j * ldc + 31), _MM_HINT_T0);
        }
    }
#define PTC_SG512_STEP(BV, X0, X1) { __m512 b_ = _mm512_set1_ps(BV);              \
        X0 = _mm512_fmadd_ps(a0, b_, X0); X1 = _mm512_fmadd_ps(a1, b_, X1); }
#pragma GCC unroll 2
    for (p = 0; p < kc; p++) {
        __m512 a0 = _mm512_loadu_ps(Ap), a1 = _mm512_loadu_ps(Ap + 16);
        _mm_prefetch((const char*)(Ap + 8 * as), _MM_HINT_T0);
        PTC_SG512_STEP(b0[0], c00, c01) PTC_SG512_STEP(b0[o1], c10, c11)
        PTC_SG512_STEP(b0[o2], c20, c21) PTC_SG512_STEP(b3[0], c30, c31)
        PTC_SG512_STEP(b3[o1], c40, c41) PTC_SG512_STEP(b3[o2], c50, c51)
        PTC_SG512_STEP(b6[0], c60, c61) PTC_SG512_STEP(b6[o1], c70, c71)
        PTC_SG512_STEP(b6[o2], c80, c81) PTC_SG512_STEP(b9[0], c90, c91)
        PTC_SG512_STEP(b9[o1], ca0, ca1) PTC_SG512_STEP(b9[o2], cb0, cb1)
        Ap += as;
        b0 += step; b3 += step; b6 += step; b9 += step;
    }
#undef PTC_SG512_STEP
#define PTC_SG512_OUT(J, X0, X1) \
    ptc_sg512_store(X0, X1, C + (J) * ldc, Ci + (J) * ldci, tmp + (J) * PTC_SG512_MR, va, vb, mode);
    PTC_SG512_OUT(0, c00, c01) PTC_SG512_OUT(1, c10, c11) PTC_SG512_OUT(2, c20, c21)
    PTC_SG512_OUT(3, c30, c31) PTC_SG512_OUT(4, c40, c41) PTC_SG512_OUT(5, c50, c51)
    PTC_SG512_OUT(6, c60, c61) PTC_SG512_OUT(7, c70, c71) PTC_SG512_OUT(8, c80, c81)
    PTC_SG512_OUT(9, c90, c91) PTC_SG512_OUT(10, ca0, ca1) PTC_SG512_OUT(11, cb0, cb1)
#undef PTC_SG512_OUT
    if (!full) ptc_sg_edge(tmp, PTC_SG512_MR, mr, nr, C, ldc, Ci, ldci, alpha, beta, first);
}

/* the last rows of a product (m % 32 <= 16): a 16 x 12 tile from a 32-row
   panel (its first 16 rows), the same arithmetic as the 32-row kernel */
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
ptc_sg512_tile16(const int cols, ptrdiff_t kc, const float* Ap, ptrdiff_t as, const float* Bp,
                 ptrdiff_t bs, float* C, ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci,
                 float alpha, float beta, int first, ptrdiff_t mr, ptrdiff_t nr) {
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0,
           c6 = c0, c7 = c0, c8 = c0, c9 = c0, ca = c0, cb = c0;
    ptrdiff_t p;
    float tmp[16 * PTC_SG512_NR];
    PTC_SG_BPTRS(cols, Bp, bs)
#define PTC_SG512_S16(BV, X) X = _mm512_fmadd_ps(a0, _mm512_set1_ps(BV), X);
#pragma GCC unroll 4
    for (p = 0; p < kc; p++) {
        __m512 a0 = _mm512_loadu_ps(Ap);
        PTC_SG512_S16(b0[0], c0) PTC_SG512_S16(b0[o1], c1) PTC_SG512_S16(b0[o2], c2)
        PTC_SG512_S16(b3[0], c3) PTC_SG512_S16(b3[o1], c4) PTC_SG512_S16(b3[o2], c5)
        PTC_SG512_S16(b6[0], c6) PTC_SG512_S16(b6[o1], c7) PTC_SG512_S16(b6[o2], c8)
        PTC_SG512_S16(b9[0], c9) PTC_SG512_S16(b9[o1], ca) PTC_SG512_S16(b9[o2], cb)
        Ap += as;
        b0 += step; b3 += step; b6 += step; b9 += step;
    }
#undef PTC_SG512_S16
    _mm512_storeu_ps(tmp, c0); _mm512_storeu_ps(tmp + 16, c1);
    _mm512_storeu_ps(tmp + 32, c2); _mm512_storeu_ps(tmp + 48, c3);
    _mm512_storeu_ps(tmp + 64, c4); _mm512_storeu_ps(tmp + 80, c5);
    _mm512_storeu_ps(tmp + 96, c6); _mm512_storeu_ps(tmp + 112, c7);
    _mm512_storeu_ps(tmp + 128, c8); _mm512_storeu_ps(tmp + 144, c9);
    _mm512_storeu_ps(tmp + 160, ca); _mm512_storeu_ps(tmp + 176, cb);
    ptc_sg_edge(tmp, 16, mr, nr, C, ldc, Ci, ldci, alpha, beta, first);
}

/* the kernels the driver calls: full and half height, B rows or B columns */
#define PTC_SG_KERNEL(NAME, TARGET, TILE, COLS)                                       \
__attribute__((target(TARGET))) static void                                          \
NAME(ptrdiff_t kc, const float* Ap, ptrdiff_t as, const float* Bp, ptrdiff_t bs, float* C, \
     ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci, float alpha, float beta, int first,  \
     ptrdiff_t mr, ptrdiff_t nr) {                                                     \
    TILE(COLS, kc, Ap, as, Bp, bs, C, ldc, Ci, ldci, alpha, beta, first, mr, nr);     \
}
PTC_SG_KERNEL(ptc_sg512_kernel, "avx512f,avx512vl", ptc_sg512_tile, 0)
PTC_SG_KERNEL(ptc_sg512_kernel_bc, "avx512f,avx512vl", ptc_sg512_tile, 1)
PTC_SG_KERNEL(ptc_sg512_kernel16, "avx512f,avx512vl", ptc_sg512_tile16, 0)
PTC_SG_KERNEL(ptc_sg512_kernel16_bc, "avx512f,avx512vl", ptc_sg512_tile16, 1)

/* ---- AVX2+FMA: 16 x 6 tiles (12 ymm accumulators) ------------------------ */
#define PTC_SG256_MR 16
#define PTC_SG256_NR 6
#define PTC_SG256_KC 256
#define PTC_SG256_MC 144
#define PTC_SG256_NC 3072

PTC_SG_STORE(ptc_sg256_store, "avx2,fma", __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps,
             _mm256_mul_ps, _mm256_fmadd_ps)

/* B's 6 columns: b0 + {0, o1, o2}, b3 + {0, o1, o2} */
#define PTC_SG_BPTRS6(COLS, Bp, bs)                                                  \
    const ptrdiff_t o1 = (COLS) ? (bs) : 1, o2 = (COLS) ? 2 * (bs) : 2,             \
                    step = (COLS) ? 1 : (bs);                                        \
    const float *b0 = (Bp), *b3 = (Bp) + 3 * o1;

__attribute__((target("avx2,fma"), always_inline)) static inline void
ptc_sg256_tile(const int cols, ptrdiff_t kc, const float* Ap, ptrdiff_t as, const float* Bp,
               ptrdiff_t bs, float* C, ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci,
               float alpha, float beta, int first, ptrdiff_t mr, ptrdiff_t nr) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
           c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    ptrdiff_t p;
    float tmp[PTC_SG256_MR * PTC_SG256_NR];
    int full = (mr == PTC_SG256_MR && nr == PTC_SG256_NR);
    int mode = !full ? 3 : (!first ? 2 : (beta == 0.0f ? 0 : 1));
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    PTC_SG_BPTRS6(cols, Bp, bs)
    if (full) {
        ptrdiff_t j;
        for (j = 0; j < PTC_SG256_NR; j++) {
            _mm_prefetch((const char*)(C + j * ldc), _MM_HINT_T0);
            _mm_prefetch((const char*)(C + j * ldc + 15), _MM_HINT_T0);
        }
    }
#define PTC_SG256_STEP(BP, X0, X1) { __m256 b_ = _mm256_broadcast_ss(BP);            \
        X0 = _mm256_fmadd_ps(a0, b_, X0); X1 = _mm256_fmadd_ps(a1, b_, X1); }
#pragma GCC unroll 4
    for (p = 0; p < kc; p++) {
        __m256 a0 = _mm256_loadu_ps(Ap), a1 = _mm256_loadu_ps(Ap + 8);
        _mm_prefetch((const char*)(Ap + 8 * as), _MM_HINT_T0);
        PTC_SG256_STEP(b0, c00, c01) PTC_SG256_STEP(b0 + o1, c10, c11)
        PTC_SG256_STEP(b0 + o2, c20, c21) PTC_SG256_STEP(b3, c30, c31)
        PTC_SG256_STEP(b3 + o1, c40, c41) PTC_SG256_STEP(b3 + o2, c50, c51)
        Ap += as;
        b0 += step; b3 += step;
    }
#undef PTC_SG256_STEP
#define PTC_SG256_OUT(J, X0, X1) \
    ptc_sg256_store(X0, X1, C + (J) * ldc, Ci + (J) * ldci, tmp + (J) * PTC_SG256_MR, va, vb, mode);
    PTC_SG256_OUT(0, c00, c01) PTC_SG256_OUT(1, c10, c11) PTC_SG256_OUT(2, c20, c21)
    PTC_SG256_OUT(3, c30, c31) PTC_SG256_OUT(4, c40, c41) PTC_SG256_OUT(5, c50, c51)
#undef PTC_SG256_OUT
    if (!full) ptc_sg_edge(tmp, PTC_SG256_MR, mr, nr, C, ldc, Ci, ldci, alpha, beta, first);
}

/* the last rows (m % 16 <= 8): an 8 x 6 tile from a 16-row panel */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ptc_sg256_tile8(const int cols, ptrdiff_t kc, const float* Ap, ptrdiff_t as, const float* Bp,
                ptrdiff_t bs, float* C, ptrdiff_t ldc, const float* Ci, ptrdiff_t ldci,
                float alpha, float beta, int first, ptrdiff_t mr, ptrdiff_t nr) {
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
    ptrdiff_t p;
    float tmp[8 * PTC_SG256_NR];
    PTC_SG_BPTRS6(cols, Bp, bs)
#define PTC_SG256_S8(BP, X) X = _mm256_fmadd_ps(a0, _mm256_broadcast_ss(BP), X);
#pragma GCC unroll 4
    for (p = 0; p < kc; p++) {
        __m256 a0 = _mm256_loadu_ps(Ap);
        PTC_SG256_S8(b0, c0) PTC_SG256_S8(b0 + o1, c1) PTC_SG256_S8(b0 + o2, c2)
        PTC_SG256_S8(b3, c3) PTC_SG256_S8(b3 + o1, c4) PTC_SG256_S8(b3 + o2, c5)
        Ap += as;
        b0 += step; b3 += step;
    }
#undef PTC_SG256_S8
    _mm256_storeu_ps(tmp, c0); _mm256_storeu_ps(tmp + 8, c1); _mm256_storeu_ps(tmp + 16, c2);
    _mm256_storeu_ps(tmp + 24, c3); _mm256_storeu_ps(tmp + 32, c4); _mm256_storeu_ps(tmp + 40, c5);
    ptc_sg_edge(tmp, 8, mr, nr, C, ldc, Ci, ldci, alpha, beta, first);
}

PTC_SG_KERNEL(ptc_sg256_kernel, "avx2,fma", ptc_sg256_tile, 0)
PTC_SG_KERNEL(ptc_sg256_kernel_bc, "avx2,fma", ptc_sg256_tile, 1)
PTC_SG_KERNEL(ptc_sg256_kernel8, "avx2,fma", ptc_sg256_tile8, 0)
PTC_SG_KERNEL(ptc_sg256_kernel8_bc, "avx2,fma", ptc_sg256_tile8, 1)
#undef PTC_SG_KERNEL

/* ---- epilogues ------------------------------------------------------------
   An elementwise step applied to C where the product leaves it (ptcore.compile's
   GEMM epilogues): after the last k block, on each tile while it is in L1, so
   the separate pass over C it replaces (relu(addmm), the ReLU gradient's mask
   of the next product's result, a residual add) costs no memory traffic.  The
   same bits as the product followed by that op: kind 1 (ReLU, torch's relu
   including NaN and -0): C = C < 0 ? 0 : C; kind 2 (threshold_backward(C,
   aux, 0)): C = aux <= 0 ? 0 : C; kind 3 (add): C = C + aux.  aux(i, j) at
   aux[i + j ldaux] (C's column-major coordinates).  AVX2 (every CPU the
   own GEMM runs on has it). */
typedef struct { int kind; const float* aux; ptrdiff_t ldaux; } ptc_sg_epi;

__attribute__((target("avx2"))) static void
ptc_sg_epi_apply(const ptc_sg_epi* e, float* c, ptrdiff_t ldc, ptrdiff_t i0, ptrdiff_t j0,
                 ptrdiff_t mr, ptrdiff_t nr) {
    ptrdiff_t i, j, m8 = mr / 8 * 8;
    const float* aux = e->aux == NULL ? NULL : e->aux + i0 + j0 * e->ldaux;
    const __m256 zero = _mm256_setzero_ps();
    for (j = 0; j < nr; j++) {
        float* cc = c + j * ldc;
        const float* ax = aux == NULL ? NULL : aux + j * e->ldaux;
        if (e->kind == 1) {         /* blend: NaN < 0 is false, -0 < 0 is false */
            for (i = 0; i < m8; i += 8) {
                __m256 v = _mm256_loadu_ps(cc + i);
                _mm256_storeu_ps(cc + i, _mm256_blendv_ps(v, zero,
                                                          _mm256_cmp_ps(v, zero, _CMP_LT_OQ)));
            }
            for (; i < mr; i++) cc[i] = cc[i] < 0.0f ? 0.0f : cc[i];
        } else if (e->kind == 2) {  /* NaN <= 0 is false: C kept */
            for (i = 0; i < m8; i += 8) {
                __m256 m = _mm256_cmp_ps(_mm256_loadu_ps(ax + i), zero, _CMP_LE_OQ);
                _mm256_storeu_ps(cc + i, _mm256_blendv_ps(_mm256_loadu_ps(cc + i), zero, m));
            }
            for (; i < mr; i++) cc[i] = ax[i] <= 0.0f ? 0.0f : cc[i];
        } else if (e->kind == 3) {
            for (i = 0; i < m8; i += 8)
                _mm256_storeu_ps(cc + i, _mm256_add_ps(_mm256_loadu_ps(cc + i),
                                                       _mm256_loadu_ps(ax + i)));
            for (; i < mr; i++) cc[i] = cc[i] + ax[i];
        }
    }
}

/* ---- the blocked driver ------------------------------------------------- */
typedef void (*ptc_sg_kernel_t)(ptrdiff_t, const float*, ptrdiff_t, const float*, ptrdiff_t,
                                float*, ptrdiff_t, const float*, ptrdiff_t, float, float, int,
                                ptrdiff_t, ptrdiff_t);

/* how op(A) reaches the packed panels: ``pack(src, MR, i0, mc, p0, kc, dst)``
   writes rows [i0, i0 + mc) and columns [p0, p0 + kc) of op(A) as MR-row
   micro-panels (zero-padded) at dst[panel * MR * kc]: a dense matrix
   (ptc_sg_dense) or the column matrix of a convolution, gathered from the
   image on the fly (ptc_sg_im2col) */
typedef void (*ptc_sg_pack_fn)(const void*, int, ptrdiff_t, ptrdiff_t, ptrdiff_t, ptrdiff_t,
                               float*);

typedef struct { const float* a; ptrdiff_t lda; int trans; } ptc_sg_dense;

static void ptc_sg_pack_dense(const void* src, int MR, ptrdiff_t i0, ptrdiff_t mc,
                              ptrdiff_t p0, ptrdiff_t kc, float* dst) {
    const ptc_sg_dense* d = (const ptc_sg_dense*)src;
    ptc_sg_pack_a(MR, d->trans, mc, kc,
                  d->trans ? d->a + p0 + i0 * d->lda : d->a + i0 + p0 * d->lda, d->lda, dst);
}

/* Operands read in place (no packing): 0 never, 1 where it pays (the
   default), 2 wherever the layout allows, 3 only A, 4 only B (tests and
   benchmarks: the same bits in every mode) */
static int ptc_sg_direct = 1;

static int ptc_sgemm_set_direct(int mode) {
    if (mode >= 0 && mode <= 4) ptc_sg_direct = mode;
    return ptc_sg_direct;
}

/* Whether the kernels read op(B) in place.  Packing B costs a pass over
   kc x nc floats, a transpose where B's columns are contiguous (op(B) = B),
   for the mc / MR kernel calls that read each packed tile.  In place, those
   calls read the tile's NR columns straight from B: NR contiguous runs of kc
   floats, as many cache lines as the packed tile, which stay in L1 across
   the calls.  Where B's rows are the contiguous runs (op(B) = B^T) a tile
   row is NR floats of a longer row, so the tile spreads over twice the
   lines and falls out of L1: packed there.  Measured (Intel AVX-512, 1
   thread): transformer and recurrent products 5-30% faster, 1024^3 7%.
   Also packed where more than 4 of the tile's NR columns start at the same
   offset within 4 KiB (the L1's way size: those columns' lines compete for
   the same sets of a 32 KiB 8-way L1 and evict each other).  Columns ldb
   floats apart start at 4096 / gcd(4 ldb mod 4096, 4096) distinct offsets:
   one where ldb is a multiple of 1024, two at 512 modulo 1024.  Measured:
   Zen 4 (NR 12, six columns per offset at ldb 1024 or 4096) in place 0.90x
   the packed rate, ldb 1040-1536 within noise; Zen 3 (NR 6, three columns
   per offset at ldb 512: a transformer's 4C = 512 hidden layer) in place
   1.05-1.10x the packed rate ((768, 512) @ (512, 128) and its x W^T form),
   1.01-1.05x for the MLP's (128, 512) @ (512, 256)^T. */
static inline int ptc_sg_direct_b(int transb, ptrdiff_t ldb, int NR) {
    ptrdiff_t g = 4096, x = (ldb % 1024) * 4, t, offsets;
    if (ptc_sg_direct != 1) return ptc_sg_direct == 2 || ptc_sg_direct == 4;
    if (transb) return 0;
    while (x != 0) { t = g % x; g = x; x = t; }     /* gcd(4 ldb mod 4096, 4096) */
    offsets = 4096 / g;
    return (NR + offsets - 1) / offsets <= 4;
}

/* the L2 cache of one core in floats (sysconf where the C library says;
   else 512 KiB, the smallest L2 of the CPUs measured) */
static ptrdiff_t ptc_sg_l2_floats(void) {
    static ptrdiff_t cached = 0;       /* a benign race: every thread stores the same */
    if (cached == 0) {
        long bytes = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
        bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
        if (bytes < 131072 || bytes > 67108864) bytes = 524288;
        cached = (ptrdiff_t)(bytes / (long)sizeof(float));
    }
    return cached;
}

/* Whether the kernels read op(A) = A (columns contiguous, lda apart) in
   place.  Its panels, MR floats per p, are re-read for every tile of B,
   from L2, so the m x kc floats of a k block must stay there: at most half
   the L2 and at most 512 KiB.  Larger A, packed: 1024^2 x 342 products ran
   30% slower in place (Intel, 2 MiB L2); on a 512 KiB L2 (AMD Zen 3, AVX2)
   m x kc = 512 x 256 in place ran 15-45% slower than packed, 128 x 768 and
   192 x 256 up to 5% faster.  And never when lda is a multiple of 512
   floats: the kc lines of a panel, 2 KiB (or 4 KiB) apart, fall into
   1/32 of the cache sets and evict each other: Zen 3, (768, 128) @
   (128, 1024) in place 2x, (768, 128) @ (128, 512) 1.17x the packed time,
   where lda 640 or 480 ran within 3%. */
static inline int ptc_sg_direct_a(ptrdiff_t m, ptrdiff_t kc, ptrdiff_t lda) {
    ptrdiff_t budget = ptc_sg_l2_floats() / 2;
    if (ptc_sg_direct != 1) return ptc_sg_direct == 2 || ptc_sg_direct == 3;
    if (budget > 131072) budget = 131072;
    return m * kc <= budget && lda % 512 != 0;
}

/* C(m, n) = alpha op(A) op(B) + beta Ci with op(A) given by a packer, or,
   when ``a_direct`` is not NULL, read in place (a_direct[i + p lda]).  Ci
   (element (i, j) at ci[i + j ldci]) is C itself when ``ci`` is NULL; else
   a separate input that C's old values never enter, read once, by the
   first k block, where C would have been: ldci = 0 adds one column vector
   to every column (a Linear's bias) with the bits of that vector copied
   into C and a product with beta C, and saves that copy's pass over C */
static int ptc_sgemm_run(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                         ptc_sg_pack_fn pack_a, const void* src_a, const float* a_direct,
                         ptrdiff_t lda, char tb, const float* b, ptrdiff_t ldb, float beta,
                         float* c, ptrdiff_t ldc, const float* ci, ptrdiff_t ldci,
                         const ptc_sg_epi* epi) {
    int isa = ptc_sgemm_isa();
    int MR, NR, db, da;
    ptrdiff_t KC, MC, NC, jc, pc, ic, jr, ir, nc_max, mfull, nfull;
    ptc_sg_kernel_t kern, kern_half, kern_bc, kern_half_bc;
    float *Ap, *Bp;
    int transb = !(tb == 'N' || tb == 'n');
    if (isa == 2) {
        MR = PTC_SG512_MR; NR = PTC_SG512_NR; KC = PTC_SG512_KC; MC = PTC_SG512_MC;
        NC = PTC_SG512_NC; kern = ptc_sg512_kernel; kern_half = ptc_sg512_kernel16;
        kern_bc = ptc_sg512_kernel_bc; kern_half_bc = ptc_sg512_kernel16_bc;
    } else if (isa == 1) {
        MR = PTC_SG256_MR; NR = PTC_SG256_NR; KC = PTC_SG256_KC; MC = PTC_SG256_MC;
        NC = PTC_SG256_NC; kern = ptc_sg256_kernel; kern_half = ptc_sg256_kernel8;
        kern_bc = ptc_sg256_kernel_bc; kern_half_bc = ptc_sg256_kernel8_bc;
    } else {
        return -1;
    }
    if (m <= 0 || n <= 0) return 0;
    if (ci == NULL) { ci = c; ldci = ldc; }
    if (k <= 0 || alpha == 0.0f) {      /* C = beta Ci (beta == 0: zeros) */
        ptrdiff_t i, j;
        for (j = 0; j < n; j++)
            for (i = 0; i < m; i++)
                c[j * ldc + i] = beta == 0.0f ? 0.0f : beta * ci[j * ldci + i];
        if (epi != NULL) ptc_sg_epi_apply(epi, c, ldc, 0, 0, m, n);
        return 0;
    }
    /* balance the k blocks (no thin last block): a function of k alone, so
       every path sums each element in the same blocks */
    if (k > KC) { ptrdiff_t nb = (k + KC - 1) / KC; KC = (k + nb - 1) / nb; }
    db = ptc_sg_direct_b(transb, ldb, NR);
    da = a_direct != NULL && ptc_sg_direct_a(m, k < KC ? k : KC, lda);
    nc_max = n < NC ? n : NC;
    nc_max = (nc_max + NR - 1) / NR * NR;
    mfull = m / MR * MR;             /* in-place panels: rows [0, mfull) */
    nfull = n / NR * NR;             /* in-place tiles: columns [0, nfull) */
    /* buffer 0: the packed A block, or (in place) its last partial panel;
       buffer 1: the packed B panel, or (in place) its last partial tile */
    Ap = ptc_sg_buffer(0, (size_t)(da ? MR * (k < KC ? k : KC)
                                      : (m < MC ? (m + MR - 1) / MR * MR : MC) * (k < KC ? k : KC)));
    Bp = ptc_sg_buffer(1, (size_t)((db ? NR : nc_max) * (k < KC ? k : KC)));
    if (Ap == NULL || Bp == NULL) return -1;
    if (da) MC = m;                  /* no A block to keep within the L2 budget */
    for (jc = 0; jc < n; jc += NC) {
        ptrdiff_t nc = n - jc < NC ? n - jc : NC;
        for (pc = 0; pc < k; pc += KC) {
            ptrdiff_t kc = k - pc < KC ? k - pc : KC;
            int first = pc == 0;
            if (!db)
                ptc_sg_pack_b(NR, transb, kc, nc,
                              transb ? b + jc + pc * ldb : b + pc + jc * ldb, ldb, Bp);
            else if (jc + nc > nfull)    /* the partial last tile, packed once */
                ptc_sg_pack_b(NR, transb, kc, n - nfull,
                              transb ? b + nfull + pc * ldb : b + pc + nfull * ldb, ldb, Bp);
            for (ic = 0; ic < m; ic += MC) {
                ptrdiff_t mc = m - ic < MC ? m - ic : MC;
                if (!da)
                    pack_a(src_a, MR, ic, mc, pc, kc, Ap);
                else if (ic + mc > mfull)
                    ptc_sg_pack_a(MR, 0, m - mfull, kc, a_direct + mfull + pc * lda, lda, Ap);
                for (jr = 0; jr < nc; jr += NR) {
                    ptrdiff_t nr = nc - jr < NR ? nc - jr : NR, j = jc + jr, bs;
                    const float* bt;
                    int bcols = 0;
                    if (!db) {
                        bt = Bp + jr * kc; bs = NR;
                    } else if (j >= nfull) {
                        bt = Bp; bs = NR;
                    } else if (transb) {         /* B(p, j) = b[j + p ldb] */
                        bt = b + j + pc * ldb; bs = ldb;
                    } else {                     /* B(p, j) = b[p + j ldb] */
                        bt = b + pc + j * ldb; bs = ldb; bcols = 1;
                    }
                    for (ir = 0; ir < mc; ir += MR) {
                        ptrdiff_t mr = mc - ir < MR ? mc - ir : MR, i = ic + ir, as;
                        const float* at;
                        if (!da) { at = Ap + ir * kc; as = MR; }
                        else if (i >= mfull) { at = Ap; as = MR; }
                        else { at = a_direct + i + pc * lda; as = lda; }
                        (mr * 2 <= MR ? (bcols ? kern_half_bc : kern_half)
                                      : (bcols ? kern_bc : kern))(
                            kc, at, as, bt, bs, c + i + j * ldc, ldc, ci + i + j * ldci, ldci,
                            alpha, beta, first, mr, nr);
                        if (epi != NULL && pc + kc >= k)
                            ptc_sg_epi_apply(epi, c + i + j * ldc, ldc, i, j, mr, nr);
                    }
                }
            }
        }
    }
    return 0;
}

/* C(m, n) = alpha op(A) op(B) + beta C with op(A) given by a packer */
static int ptc_sgemm_packer(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                            ptc_sg_pack_fn pack_a, const void* src_a, char tb,
                            const float* b, ptrdiff_t ldb, float beta, float* c, ptrdiff_t ldc) {
    return ptc_sgemm_run(m, n, k, alpha, pack_a, src_a, NULL, 0, tb, b, ldb, beta, c, ldc,
                         NULL, 0, NULL);
}

/* C = alpha op(A) op(B) + beta Ci (Ci = C where ci is NULL; see ptc_sgemm_run) */
/* Products with few columns (n <= PTC_SG_SWAP_N) and op(A) = A^T (A's rows
   contiguous: a Linear's weight W in x W^T over a small batch): packing
   op(A) transposes all m x k of it, once per call, for a product of only
   n columns (m x k x n multiply-adds) -- at n = 20 the transpose is a third
   of the time.  The transposed product C^T = op(B)^T op(A)^T reads that
   matrix in place instead (op(A)^T has contiguous columns) and packs only
   op(B)^T, n x k floats, into a thread buffer T (n x MCH at a time), then
   C(i, j) = T(j, i).  Every element is the same FMA chain (a(i, p) b(p, j)
   and b(p, j) a(i, p) are the same product), over the same k blocks (a
   function of k alone), and Ci enters the first block the same way (T
   starts as Ci^T, read with beta where C would have been): the bits of the
   direct product.  Zen 3, 1 thread, (n, k) @ (k, m)^T: n = 8..64 0.6-0.9x
   the time of packing op(A). */
#define PTC_SG_SWAP_N 64
#define PTC_SG_SWAP_MCH 2048

/* c[i + j ldc] = T[j + i n] for i < m, j < n (n <= 64): 8 x 8 blocks
   transposed in registers (every caller runs on an AVX2 CPU), the
   remaining rows and columns one by one */
__attribute__((target("avx2"))) static void
ptc_sg_untranspose(ptrdiff_t n, ptrdiff_t m, const float* T, float* c, ptrdiff_t ldc) {
    ptrdiff_t i0, j0, i, j, n8 = n / 8 * 8, m8 = m / 8 * 8;
    for (j0 = 0; j0 < n8; j0 += 8)      /* 8 columns of C at a time, written in order */
        for (i0 = 0; i0 < m8; i0 += 8) ptc_sg_t8x8(T + j0 + i0 * n, n, c + i0 + j0 * ldc, ldc);
    for (j = n8; j < n; j++)
        for (i = 0; i < m8; i++) c[i + j * ldc] = T[j + i * n];
    for (j = 0; j < n; j++)
        for (i = m8; i < m; i++) c[i + j * ldc] = T[j + i * n];
}

static int ptc_sgemm_swapped(char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                             const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb,
                             float beta, float* c, ptrdiff_t ldc, const float* ci,
                             ptrdiff_t ldci) {
    ptc_sg_dense src;                  /* A' = op(B)^T (n x k) */
    ptrdiff_t i0, i, j;
    float* T = ptc_sg_buffer(2, (size_t)(n * (m < PTC_SG_SWAP_MCH ? m : PTC_SG_SWAP_MCH)));
    if (T == NULL) return -1;
    if (ci == NULL) { ci = c; ldci = ldc; }
    src.a = b;
    src.lda = ldb;
    src.trans = (tb == 'N' || tb == 'n');   /* op(B)^T(j, p) = b[p + j ldb]: rows contiguous */
    for (i0 = 0; i0 < m; i0 += PTC_SG_SWAP_MCH) {
        ptrdiff_t mc = m - i0 < PTC_SG_SWAP_MCH ? m - i0 : PTC_SG_SWAP_MCH;
        int rc;
        if (beta != 0.0f)
            for (i = 0; i < mc; i++)
                for (j = 0; j < n; j++) T[j + i * n] = ci[i0 + i + j * ldci];
        /* T (n x mc) = alpha op(B)^T op(A)^T + beta T; op(A)^T(p, i) = a[p + i lda] */
        rc = ptc_sgemm_run(n, mc, k, alpha, ptc_sg_pack_dense, &src, src.trans ? NULL : b, ldb,
                           'N', a + i0 * lda, lda, beta, T, n, NULL, 0, NULL);
        if (rc != 0) return rc;
        ptc_sg_untranspose(n, mc, T, c + i0, ldc);
    }
    return 0;
}

/* ptc_sgemm_ci followed by epilogue ``epi`` (NULL: none; see ptc_sg_epi) */
static int ptc_sgemm_epi(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                         const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb,
                         float beta, float* c, ptrdiff_t ldc, const float* ci, ptrdiff_t ldci,
                         const ptc_sg_epi* epi) {
    ptc_sg_dense src;
    if (!(ta == 'N' || ta == 'n') && n <= PTC_SG_SWAP_N && m >= 2 * n && k > 0 &&
        alpha != 0.0f && ptc_sg_direct == 1 && ptc_sgemm_isa() != 0) {
        int rc = ptc_sgemm_swapped(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ci, ldci);
        if (rc == 0 && epi != NULL && m > 0 && n > 0) ptc_sg_epi_apply(epi, c, ldc, 0, 0, m, n);
        return rc;
    }
    src.a = a;
    src.lda = lda;
    src.trans = !(ta == 'N' || ta == 'n');
    return ptc_sgemm_run(m, n, k, alpha, ptc_sg_pack_dense, &src, src.trans ? NULL : a, lda,
                         tb, b, ldb, beta, c, ldc, ci, ldci, epi);
}

static int ptc_sgemm_ci(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                        const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb, float beta,
                        float* c, ptrdiff_t ldc, const float* ci, ptrdiff_t ldci) {
    return ptc_sgemm_epi(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ci, ldci, NULL);
}

static int ptc_sgemm(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                     const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb, float beta,
                     float* c, ptrdiff_t ldc) {
    return ptc_sgemm_ci(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL, 0);
}

/* ---- convolutions without a column matrix ------------------------------- */
/* The column matrix of a 2-d convolution over ``ns`` samples, as op(A) of
   the forward product y (ns*L, OC) = cols (ns*L, C*kh*kw) W^T: row i is
   output position (sample i / L, oh, ow), column p is (c, a, e) =
   (input channel, kernel row, kernel column); its element is
   x[sample, c, oh*sh - ph + a*dh, ow*sw - pw + e*dw], zero outside the image.
   ``x`` points at the first sample's first channel of the group; samples
   are ``sample_stride`` floats apart and channels H*W. */
typedef struct {
    const float* x;
    ptrdiff_t sample_stride, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
} ptc_sg_im2col;

#define PTC_SG_MAXMR 32

/* one column p of a panel of MR (32 or 16) positions by masked gathers: the
   lanes whose input pixel lies inside the image load x, the others get 0
   (and touch no memory) */
__attribute__((target("avx512f,avx512vl"))) static inline void
ptc_sg_gather32(const float* xs, const int* base, const int* ih0, const int* iw0, int dy,
                int dx, int H, int W, float* col) {
    int h;
    for (h = 0; h < 2; h++) {
        __m512i ih = _mm512_add_epi32(_mm512_loadu_si512(ih0 + 16 * h), _mm512_set1_epi32(dy));
        __m512i iw = _mm512_add_epi32(_mm512_loadu_si512(iw0 + 16 * h), _mm512_set1_epi32(dx));
        __mmask16 in = _mm512_cmplt_epu32_mask(ih, _mm512_set1_epi32(H))
                       & _mm512_cmplt_epu32_mask(iw, _mm512_set1_epi32(W));
        __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in,
                                            _mm512_loadu_si512(base + 16 * h), xs, 4);
        _mm512_storeu_ps(col + 16 * h, v);
    }
}

__attribute__((target("avx2"))) static inline void
ptc_sg_gather16(const float* xs, const int* base, const int* ih0, const int* iw0, int dy,
                int dx, int H, int W, float* col) {
    int h;
    __m256i lo = _mm256_set1_epi32(-1), hh = _mm256_set1_epi32(H), ww = _mm256_set1_epi32(W);
    for (h = 0; h < 2; h++) {
        __m256i ih = _mm256_add_epi32(_mm256_loadu_si256((const __m256i*)(ih0 + 8 * h)),
                                      _mm256_set1_epi32(dy));
        __m256i iw = _mm256_add_epi32(_mm256_loadu_si256((const __m256i*)(iw0 + 8 * h)),
                                      _mm256_set1_epi32(dx));
        __m256i in = _mm256_and_si256(
            _mm256_and_si256(_mm256_cmpgt_epi32(ih, lo), _mm256_cmpgt_epi32(hh, ih)),
            _mm256_and_si256(_mm256_cmpgt_epi32(iw, lo), _mm256_cmpgt_epi32(ww, iw)));
        __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xs,
                                            _mm256_loadu_si256((const __m256i*)(base + 8 * h)),
                                            _mm256_castsi256_ps(in), 4);
        _mm256_storeu_ps(col + 8 * h, v);
    }
}

/* a panel column of MR (32: AVX-512, 16: AVX2) lanes: lane r loads
   xs[base[r]] when (ih0[r] + dy, iw0[r] + dx) lies inside the H x W image */
static inline void ptc_sg_gather(int MR, const float* xs, const int* base, const int* ih0,
                                 const int* iw0, ptrdiff_t dy, ptrdiff_t dx, ptrdiff_t H,
                                 ptrdiff_t W, float* col) {
    if (MR == 32)
        ptc_sg_gather32(xs, base, ih0, iw0, (int)dy, (int)dx, (int)H, (int)W, col);
    else
        ptc_sg_gather16(xs, base, ih0, iw0, (int)dy, (int)dx, (int)H, (int)W, col);
}

/* A 32-position panel of a convolution with column stride 2 whose output rows
   are 4, 8, 16 or 32 wide, starting at an output row (DCGAN's 4x4 stride-2
   layers): each output row of the panel reads every other float of one input
   row, so a panel column is four masked vector loads of those input rows (2
   OW floats each, the odd floats and the pixels outside the image masked
   off: no memory touched there) and two even-lane permutes, in place of two
   16-lane gathers (slow on AMD Zen 4).  The same values as the gathers. */
static inline int ptc_sg_rows2_ok(const ptc_sg_im2col* g) {
    return g->sw == 2 && (g->OW == 4 || g->OW == 8 || g->OW == 16 || g->OW == 32)
           && g->W < (1 << 24) && g->H < (1 << 24);
}

/* the segments' (output rows') first input row and offset, and the
   (channel, kernel row, kernel column) of panel column p0 */
static inline void ptc_sg_rows2_start(const ptc_sg_im2col* g, ptrdiff_t first, int nseg,
                                      ptrdiff_t p0, ptrdiff_t* segbase, ptrdiff_t* segih,
                                      ptrdiff_t* c, ptrdiff_t* a, ptrdiff_t* e) {
    const ptrdiff_t L = g->OH * g->OW, KK = g->kh * g->kw, OW = g->OW;
    int s;
    for (s = 0; s < nseg; s++) {         /* each segment: one output row, from ow = 0 */
        ptrdiff_t i = first + s * OW, sample = i / L, oh = (i - sample * L) / OW;
        segih[s] = oh * g->sh - g->ph;
        segbase[s] = sample * g->sample_stride + segih[s] * g->W - g->pw;
    }
    *c = p0 / KK;
    *a = (p0 - *c * KK) / g->kw;
    *e = p0 - *c * KK - *a * g->kw;
}

__attribute__((target("avx512f,avx512vl,bmi2"))) static void
ptc_sg_pack_rows2(const ptc_sg_im2col* g, ptrdiff_t first, ptrdiff_t p0, ptrdiff_t kc,
                  float* d) {
    const ptrdiff_t HW = g->H * g->W, OW = g->OW;
    const int nseg = (int)(32 / OW), seglen = (int)(2 * OW);
    const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                           4, 2, 0);
    ptrdiff_t segbase[8], segih[8], p, c, a, e;
    const ptrdiff_t iw0 = -g->pw;
    int s;
    ptc_sg_rows2_start(g, first, nseg, p0, segbase, segih, &c, &a, &e);
    for (p = 0; p < kc; p++) {
        const ptrdiff_t dy = a * g->dh, dx = e * g->dw;
        const float* xs = g->x + c * HW + dy * g->W + dx;
        float* col = d + p * 32;
        /* output columns k with 0 <= iw0 + dx + 2k < W, as bits; then the
           float lanes 2k of every segment whose input row is inside */
        ptrdiff_t lo = -(iw0 + dx), hi = g->W - (iw0 + dx), klo, khi;
        klo = lo <= 0 ? 0 : (lo + 1) / 2;
        khi = hi <= 0 ? 0 : (hi + 1) / 2;
        if (khi > OW) khi = OW;
        unsigned long long kbits = khi > klo
            ? (((khi - klo) >= 64 ? ~0ull : ((1ull << (khi - klo)) - 1)) << klo) : 0;
        unsigned long long E = _pdep_u64(kbits, 0x5555555555555555ull);
        unsigned long long M = 0;
        for (s = 0; s < nseg; s++)
            if ((unsigned long long)(segih[s] + dy) < (unsigned long long)g->H)
                M |= E << (s * seglen);
        __m512 z[4];
        int q;
        for (q = 0; q < 4; q++) {
            const __mmask16 m = (__mmask16)(M >> (16 * q));
            if (seglen >= 16) {
                const int sg = (16 * q) / seglen, j0 = (16 * q) % seglen;
                z[q] = _mm512_maskz_loadu_ps(m, xs + segbase[sg] + j0);
            } else {                     /* two 8-float segments in one vector */
                z[q] = _mm512_maskz_loadu_ps((__mmask16)(m & 0xFF), xs + segbase[2 * q]);
                z[q] = _mm512_mask_loadu_ps(z[q], (__mmask16)(m & 0xFF00),
                                            xs + segbase[2 * q + 1] - 8);
            }
        }
        _mm512_storeu_ps(col, _mm512_permutex2var_ps(z[0], evens, z[1]));
        _mm512_storeu_ps(col + 16, _mm512_permutex2var_ps(z[2], evens, z[3]));
        if (++e == g->kw) { e = 0; if (++a == g->kh) { a = 0; c++; } }
    }
}

/* The same for AVX2's 16-position panels (output rows 4, 8 or 16 wide):
   four 8-float loads and two shuffles per panel column in place of two
   8-lane gathers (microcoded, ~20% of DCGAN's 64 -> 128 forward on AMD Zen
   1).  Where the 8 floats reach past the image's left or right edge, the 8
   inside the row next to them are loaded and permuted into place, the lanes
   outside zeroed (vmaskmovps loads took 40% of this function on Zen 1);
   masked loads remain only for rows narrower than 8. */
__attribute__((target("avx2"))) static void
ptc_sg_pack_rows2_avx2(const ptc_sg_im2col* g, ptrdiff_t first, ptrdiff_t p0, ptrdiff_t kc,
                       float* d) {
    const ptrdiff_t HW = g->H * g->W, OW = g->OW;
    const int nseg = (int)(16 / OW), seglen = (int)(2 * OW);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    ptrdiff_t segbase[4], segih[4], p, c, a, e;
    const ptrdiff_t iw0 = -g->pw;
    int q;
    ptc_sg_rows2_start(g, first, nseg, p0, segbase, segih, &c, &a, &e);
    for (p = 0; p < kc; p++) {
        const ptrdiff_t dy = a * g->dh, dx = e * g->dw;
        const float* xs = g->x + c * HW + dy * g->W + dx;
        float* col = d + p * 16;
        /* the floats [lo, hi) of a segment lie inside its input row */
        ptrdiff_t lo = -(iw0 + dx), hi = g->W - (iw0 + dx);
        __m256 z[4];
        for (q = 0; q < 4; q++) {
            const int sg = (8 * q) / seglen, j0 = (8 * q) % seglen;
            if ((unsigned long long)(segih[sg] + dy) >= (unsigned long long)g->H) {
                z[q] = _mm256_setzero_ps();
            } else if (lo <= j0 && j0 + 8 <= hi) {
                z[q] = _mm256_loadu_ps(xs + segbase[sg] + j0);
            } else if (hi - lo >= 8 && (lo <= j0 || j0 + 8 <= hi)) {
                /* one edge: load the 8 floats inside the row that end (or
                   start) there, move them to their lanes, zero the rest */
                const ptrdiff_t at = lo > j0 ? lo : hi - 8;
                const __m256i idx = _mm256_add_epi32(lane, _mm256_set1_epi32((int)(j0 - at)));
                const __m256i in = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(_mm256_setzero_si256(), idx),
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(8), idx));
                z[q] = _mm256_and_ps(_mm256_permutevar8x32_ps(
                                         _mm256_loadu_ps(xs + segbase[sg] + at), idx),
                                     _mm256_castsi256_ps(in));
            } else {
                const __m256i m = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(lo - j0)), lane),
                    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(hi - j0)), lane));
                z[q] = _mm256_maskload_ps(xs + segbase[sg] + j0, m);
            }
        }
        /* even floats of z[0] then z[1]: shuffle within 128-bit halves, then
           put the 64-bit pairs in order */
        _mm256_storeu_ps(col, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(
            _mm256_shuffle_ps(z[0], z[1], _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(col + 8, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(
            _mm256_shuffle_ps(z[2], z[3], _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0))));
        if (++e == g->kw) { e = 0; if (++a == g->kh) { a = 0; c++; } }
    }
}

static int ptc_sg_rows2_on = 1;       /* a testing knob: 0 keeps the gathers */

static int ptc_sg_bmi2(void) {
    static int ok = -1;
    if (ok < 0) { __builtin_cpu_init(); ok = __builtin_cpu_supports("bmi2") != 0; }
    return ok;
}

static void ptc_sg_pack_im2col(const void* src, int MR, ptrdiff_t i0, ptrdiff_t mc,
                               ptrdiff_t p0, ptrdiff_t kc, float* dst) {
    const ptc_sg_im2col* g = (const ptc_sg_im2col*)src;
    ptrdiff_t L = g->OH * g->OW, HW = g->H * g->W, KK = g->kh * g->kw;
    ptrdiff_t r0, r, p;
    int base[PTC_SG_MAXMR], ih0[PTC_SG_MAXMR], iw0[PTC_SG_MAXMR];
    const int rows2 = MR == 32 && ptc_sg_rows2_on && ptc_sg_rows2_ok(g) && ptc_sg_bmi2();
    const int rows2_16 = MR == 16 && ptc_sg_rows2_on && ptc_sg_rows2_ok(g) && g->OW <= 16;
    for (r0 = 0; r0 < mc; r0 += MR) {
        ptrdiff_t mr = mc - r0 < MR ? mc - r0 : MR;
        float* d = dst + r0 * kc;
        ptrdiff_t c, a, e;
        if (rows2 && mr == 32 && (i0 + r0) % g->OW == 0) {
            ptc_sg_pack_rows2(g, i0 + r0, p0, kc, d);
            continue;
        }
        if (rows2_16 && mr == 16 && (i0 + r0) % g->OW == 0) {
            ptc_sg_pack_rows2_avx2(g, i0 + r0, p0, kc, d);
            continue;
        }
        for (r = 0; r < MR; r++) {
            if (r < mr) {
                ptrdiff_t i = i0 + r0 + r, sample = i / L, l = i - sample * L;
                ptrdiff_t oh = l / g->OW, ow = l - oh * g->OW;
                ih0[r] = (int)(oh * g->sh - g->ph);
                iw0[r] = (int)(ow * g->sw - g->pw);
                base[r] = (int)(sample * g->sample_stride + ih0[r] * g->W + iw0[r]);
            } else {                /* padding rows: never inside the image */
                ih0[r] = -(int)(1 + g->kh * g->dh);
                iw0[r] = 0;
                base[r] = 0;
            }
        }
        c = p0 / KK;
        a = (p0 - c * KK) / g->kw;
        e = p0 - c * KK - a * g->kw;
        for (p = 0; p < kc; p++) {
            ptrdiff_t dy = a * g->dh, dx = e * g->dw;
            const float* xs = g->x + c * HW + dy * g->W + dx;
            float* col = d + p * MR;
            ptc_sg_gather(MR, xs, base, ih0, iw0, dy, dx, g->H, g->W, col);
            if (++e == g->kw) { e = 0; if (++a == g->kh) { a = 0; c++; } }
        }
    }
}

/* The transposed panel when the kernel is 4 columns wide without dilation
   (DCGAN's 4x4 layers): a panel's rows, in groups of 4 from a kernel row's
   start, are one (channel, kernel row) each, so for every position the
   group is 4 neighbouring floats of one input row: one 128-bit load in
   place of 4 gather lanes (gathers were 4% of DCGAN's training step on AMD
   Zen 1).  At the image's left and right edges the 4 floats inside the row
   next to them are loaded and permuted into place, the lanes outside
   zeroed; rows outside the image are zeros.  Needs W >= 4. */
static inline int ptc_sg_t4_ok(const ptc_sg_im2col* g) {
    return g->kw == 4 && g->dw == 1 && g->W >= 4;
}

__attribute__((target("avx2"))) static void
ptc_sg_pack_t_rows4(const ptc_sg_im2col* g, int MR, ptrdiff_t first, ptrdiff_t mr,
                    ptrdiff_t p0, ptrdiff_t kc, float* d) {
    const ptrdiff_t L = g->OH * g->OW, HW = g->H * g->W, KK = g->kh * 4, W = g->W;
    const int ng = (int)(mr / 4);
    const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
    ptrdiff_t off[PTC_SG_MAXMR / 4], dyt[PTC_SG_MAXMR / 4], p, sample, oh, ow, l;
    int q;
    for (q = 0; q < ng; q++) {
        const ptrdiff_t i = first + 4 * q, c = i / KK, a = (i - c * KK) / 4;
        dyt[q] = a * g->dh;
        off[q] = c * HW + dyt[q] * W;
    }
    sample = p0 / L;
    l = p0 - sample * L;
    oh = l / g->OW;
    ow = l - oh * g->OW;
    for (p = 0; p < kc; p++) {
        const ptrdiff_t ih0 = oh * g->sh - g->ph, iw0 = ow * g->sw - g->pw;
        const float* xs = g->x + sample * g->sample_stride + ih0 * W;
        float* col = d + p * MR;
        const int full = iw0 >= 0 && iw0 + 4 <= W;
        const ptrdiff_t at = full ? iw0 : iw0 < 0 ? 0 : W - 4;
        /* lane j holds input column iw0 + j: inside the row, or zero */
        const __m128i cj = _mm_add_epi32(lane, _mm_set1_epi32((int)(iw0 < -8 ? -8 : iw0 > W ? W : iw0)));
        const __m128i in = _mm_andnot_si128(_mm_cmpgt_epi32(_mm_setzero_si128(), cj),
                                            _mm_cmpgt_epi32(_mm_set1_epi32((int)W), cj));
        const __m128i idx = _mm_sub_epi32(cj, _mm_set1_epi32((int)at));
        for (q = 0; q < ng; q++) {
            __m128 v;
            if ((size_t)(ih0 + dyt[q]) >= (size_t)g->H) v = _mm_setzero_ps();
            else if (full) v = _mm_loadu_ps(xs + off[q] + at);
            else v = _mm_and_ps(_mm_permutevar_ps(_mm_loadu_ps(xs + off[q] + at), idx),
                                _mm_castsi128_ps(in));
            _mm_storeu_ps(col + 4 * q, v);
        }
        for (; q < MR / 4; q++) _mm_storeu_ps(col + 4 * q, _mm_setzero_ps());
        if (++ow == g->OW) { ow = 0; if (++oh == g->OH) { oh = 0; sample++; } }
    }
}

/* The transposed column matrix, as op(A) of the weight gradient
   gW (C*kh*kw, OC) (+)= cols^T gy: row i is (c, a, e), column p the output
   position (sample p / L, oh, ow); the same gathers with the roles of the
   two tables swapped (per panel: the kernel offsets; per column: the
   position). */
static void ptc_sg_pack_im2col_t(const void* src, int MR, ptrdiff_t i0, ptrdiff_t mc,
                                 ptrdiff_t p0, ptrdiff_t kc, float* dst) {
    const ptc_sg_im2col* g = (const ptc_sg_im2col*)src;
    ptrdiff_t L = g->OH * g->OW, HW = g->H * g->W, KK = g->kh * g->kw;
    ptrdiff_t r0, r, p;
    int off[PTC_SG_MAXMR], dyt[PTC_SG_MAXMR], dxt[PTC_SG_MAXMR];
    const int t4 = ptc_sg_rows2_on && ptc_sg_t4_ok(g);
    for (r0 = 0; r0 < mc; r0 += MR) {
        ptrdiff_t mr = mc - r0 < MR ? mc - r0 : MR;
        float* d = dst + r0 * kc;
        ptrdiff_t sample, oh, ow, l;
        if (t4 && (i0 + r0) % 4 == 0 && mr % 4 == 0) {
            ptc_sg_pack_t_rows4(g, MR, i0 + r0, mr, p0, kc, d);
            continue;
        }
        for (r = 0; r < MR; r++) {
            if (r < mr) {
                ptrdiff_t i = i0 + r0 + r, c = i / KK, a = (i - c * KK) / g->kw;
                ptrdiff_t e = i - c * KK - a * g->kw;
                dyt[r] = (int)(a * g->dh);
                dxt[r] = (int)(e * g->dw);
                off[r] = (int)(c * HW + dyt[r] * g->W + dxt[r]);
            } else {                /* padding rows: never inside the image */
                dyt[r] = -(int)(g->OH * g->sh + g->kh * g->dh + 1);
                dxt[r] = 0;
                off[r] = 0;
            }
        }
        sample = p0 / L;
        l = p0 - sample * L;
        oh = l / g->OW;
        ow = l - oh * g->OW;
        for (p = 0; p < kc; p++) {
            ptrdiff_t ih0 = oh * g->sh - g->ph, iw0 = ow * g->sw - g->pw;
            const float* xs = g->x + sample * g->sample_stride + ih0 * g->W + iw0;
            float* col = d + p * MR;
            ptc_sg_gather(MR, xs, off, dyt, dxt, ih0, iw0, g->H, g->W, col);
            if (++ow == g->OW) { ow = 0; if (++oh == g->OH) { oh = 0; sample++; } }
        }
    }
}

/* gather offsets are int32: every pixel offset of the samples, and the
   padding and dilation reach around them, must fit */
static int ptc_sg_im2col_fits(const ptc_sg_im2col* g, ptrdiff_t ns) {
    return !(ns * g->sample_stride + (g->kh * g->dh + g->ph + 1) * (g->W + 1) + g->kw * g->dw
                 + g->pw >= 2147483647 || g->H >= 2147483647 / 2 || g->W >= 2147483647 / 2
             || g->OH * g->sh + g->kh * g->dh >= 2147483647 / 2);
}

/* gw (column-major C*kh*kw x OC, ldw) = cols(x)^T gy + beta gw with gy
   column-major (ns*L x OC, ldg): a 2-d convolution's weight gradient
   without the column matrix; 0, or -1 (ISA, memory or offsets: the caller
   builds the column matrix) */
static int ptc_sgemm_conv_bww(const ptc_sg_im2col* g, ptrdiff_t ns, ptrdiff_t C, ptrdiff_t OC,
                              const float* gy, ptrdiff_t ldg, float beta, float* gw,
                              ptrdiff_t ldw) {
    if (!ptc_sg_im2col_fits(g, ns)) return -1;
    return ptc_sgemm_packer(C * g->kh * g->kw, OC, ns * g->OH * g->OW, 1.0f, ptc_sg_pack_im2col_t,
                            g, 'N', gy, ldg, beta, gw, ldw);
}

/* y (column-major, ns*L rows, OC columns, ldy) = cols(x) W^T, W (OC, C*kh*kw)
   row-major: a 2-d convolution's forward product without the column
   matrix; 0, or -1 (ISA or memory: the caller builds the column matrix) */
static int ptc_sgemm_conv_fwd(const ptc_sg_im2col* g, ptrdiff_t ns, ptrdiff_t C, ptrdiff_t OC,
                              const float* w, float* y, ptrdiff_t ldy) {
    ptrdiff_t K = C * g->kh * g->kw;
    if (!ptc_sg_im2col_fits(g, ns)) return -1;
    return ptc_sgemm_packer(ns * g->OH * g->OW, OC, K, 1.0f, ptc_sg_pack_im2col, g, 'N',
                            w, K, 0.0f, y, ldy);
}

#else   /* not GCC/Clang on x86-64: the BLAS */
static int ptc_sgemm_isa(void) { return 0; }
static int ptc_sgemm_force_isa(int isa) { (void)isa; return 0; }
static int ptc_sgemm_set_direct(int mode) { (void)mode; return 0; }
typedef struct {
    const float* x;
    ptrdiff_t sample_stride, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
} ptc_sg_im2col;
static int ptc_sgemm_conv_fwd(const ptc_sg_im2col* g, ptrdiff_t ns, ptrdiff_t C, ptrdiff_t OC,
                              const float* w, float* y, ptrdiff_t ldy) {
    (void)g; (void)ns; (void)C; (void)OC; (void)w; (void)y; (void)ldy;
    return -1;
}
static int ptc_sgemm_conv_bww(const ptc_sg_im2col* g, ptrdiff_t ns, ptrdiff_t C, ptrdiff_t OC,
                              const float* gy, ptrdiff_t ldg, float beta, float* gw,
                              ptrdiff_t ldw) {
    (void)g; (void)ns; (void)C; (void)OC; (void)gy; (void)ldg; (void)beta; (void)gw; (void)ldw;
    return -1;
}
static int ptc_sgemm(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                     const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb, float beta,
                     float* c, ptrdiff_t ldc) {
    (void)ta; (void)tb; (void)m; (void)n; (void)k; (void)alpha; (void)a; (void)lda;
    (void)b; (void)ldb; (void)beta; (void)c; (void)ldc;
    return -1;
}
static int ptc_sgemm_ci(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                        const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb, float beta,
                        float* c, ptrdiff_t ldc, const float* ci, ptrdiff_t ldci) {
    (void)ci; (void)ldci;
    return ptc_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
typedef struct { int kind; const float* aux; ptrdiff_t ldaux; } ptc_sg_epi;
static int ptc_sgemm_epi(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, float alpha,
                         const float* a, ptrdiff_t lda, const float* b, ptrdiff_t ldb,
                         float beta, float* c, ptrdiff_t ldc, const float* ci, ptrdiff_t ldci,
                         const ptc_sg_epi* epi) {
    (void)epi;
    return ptc_sgemm_ci(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ci, ldci);
}
#endif
#endif
