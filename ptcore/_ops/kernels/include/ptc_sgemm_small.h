/* Register-tiled float32 GEMM kernels for the few-channel convolutions of
   ptcore._ops.kernels._conv and the batched small products of ptcore._ops.kernels._blas (see
   there): ptc_sgemm_small (C (+)= A B, A with a row and a k stride) and
   ptc_sgemm_small_nt (C (+)= A B^T, both along k).  Only x86-64 builds exist
   (GCC/Clang; AVX2+FMA, and AVX-512F tiles for ptc_sgemm_small);
   ptc_sgemm_small_ok() says at run time whether the CPU has them, and
   elsewhere it is 0 (BLAS is used). */
#ifndef PTC_SGEMM_SMALL_H
#define PTC_SGEMM_SMALL_H
#include <stddef.h>
#define PTC_SV8_LD(p) ({ ptc_sv8 v_; __builtin_memcpy(&v_, (p), 32); v_; })
#define PTC_SV8_ST(p, v) do { ptc_sv8 w_ = (v); __builtin_memcpy((p), &w_, 32); } while (0)
#if defined(__GNUC__) && defined(__x86_64__)
typedef float ptc_sv8 __attribute__((vector_size(32)));
/* ptc_sgemm_small: C[r, j] (+)= sum_k A[r*lda + k*sak] * B[k*ldb + j].
   Every element is one fused multiply-add chain over k in increasing order,
   started from 0 (or C's value when acc): the same bits from every tile
   shape, instruction set and thread split (the tail columns' scalar fmaf
   included).  The tiles use explicit FMA intrinsics: the extensions build
   with -std=c11, where GCC does not contract a * b + c (the first version's
   tiles were a multiply and an add, rounded twice, and twice the
   instructions per multiply-add).
   AVX-512F CPUs: R (<= 8) rows x 32 columns (16 zmm accumulators), then R x
   16 columns under a lane mask for the last N % 32 (masked loads never touch
   memory past the row).  AVX2+FMA CPUs: R (<= 6) rows x 16 columns (12 ymm
   accumulators), the last N % 16 columns by scalar fmaf. */
#include <immintrin.h>
#include "ptc_sgemm.h"             /* ptc_sg_t8x8 */
#define PTC_SG_TILE(R)                                                              \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_sg_tile##R(ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,           \
               const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {   \
    __m256 c0[R], c1[R];                                                            \
    for (int r = 0; r < R; r++) {                                                   \
        if (acc) { c0[r] = _mm256_loadu_ps(C + r * ldc);                            \
                   c1[r] = _mm256_loadu_ps(C + r * ldc + 8); }                      \
        else { c0[r] = _mm256_setzero_ps(); c1[r] = _mm256_setzero_ps(); } }        \
    for (ptrdiff_t k = 0; k < K; k++) {                                             \
        __m256 b0 = _mm256_loadu_ps(B + k * ldb), b1 = _mm256_loadu_ps(B + k * ldb + 8); \
        for (int r = 0; r < R; r++) {                                               \
            __m256 a = _mm256_broadcast_ss(A + r * lda + k * sak);                  \
            c0[r] = _mm256_fmadd_ps(a, b0, c0[r]);                                  \
            c1[r] = _mm256_fmadd_ps(a, b1, c1[r]); } }                              \
    for (int r = 0; r < R; r++) {                                                   \
        _mm256_storeu_ps(C + r * ldc, c0[r]); _mm256_storeu_ps(C + r * ldc + 8, c1[r]); } \
}
PTC_SG_TILE(6)
PTC_SG_TILE(5)
PTC_SG_TILE(4)
PTC_SG_TILE(3)
PTC_SG_TILE(2)
PTC_SG_TILE(1)

/* R rows x 32 columns (AVX-512F) */
#define PTC_SGZ_TILE32(R)                                                           \
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void               \
ptc_sgz_tile32_##R(ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,       \
                   const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) { \
    __m512 c0[R], c1[R];                                                            \
    for (int r = 0; r < R; r++) {                                                   \
        if (acc) { c0[r] = _mm512_loadu_ps(C + r * ldc);                            \
                   c1[r] = _mm512_loadu_ps(C + r * ldc + 16); }                     \
        else { c0[r] = _mm512_setzero_ps(); c1[r] = _mm512_setzero_ps(); } }        \
    for (ptrdiff_t k = 0; k < K; k++) {                                             \
        __m512 b0 = _mm512_loadu_ps(B + k * ldb), b1 = _mm512_loadu_ps(B + k * ldb + 16); \
        for (int r = 0; r < R; r++) {                                               \
            __m512 a = _mm512_set1_ps(A[r * lda + k * sak]);                        \
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);                                  \
            c1[r] = _mm512_fmadd_ps(a, b1, c1[r]); } }                              \
    for (int r = 0; r < R; r++) {                                                   \
        _mm512_storeu_ps(C + r * ldc, c0[r]); _mm512_storeu_ps(C + r * ldc + 16, c1[r]); } \
}
/* R rows x the first n (1..16) of 16 columns, under the lane mask m (AVX-512F) */
#define PTC_SGZ_TILE16(R)                                                           \
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void               \
ptc_sgz_tile16_##R(ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,       \
                   const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc, \
                   __mmask16 m) {                                                   \
    __m512 c0[R];                                                                   \
    for (int r = 0; r < R; r++)                                                     \
        c0[r] = acc ? _mm512_maskz_loadu_ps(m, C + r * ldc) : _mm512_setzero_ps();  \
    for (ptrdiff_t k = 0; k < K; k++) {                                             \
        __m512 b0 = _mm512_maskz_loadu_ps(m, B + k * ldb);                          \
        for (int r = 0; r < R; r++)                                                 \
            c0[r] = _mm512_fmadd_ps(_mm512_set1_ps(A[r * lda + k * sak]), b0, c0[r]); } \
    for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(C + r * ldc, m, c0[r]);      \
}
PTC_SGZ_TILE32(8) PTC_SGZ_TILE32(7) PTC_SGZ_TILE32(6) PTC_SGZ_TILE32(5)
PTC_SGZ_TILE32(4) PTC_SGZ_TILE32(3) PTC_SGZ_TILE32(2) PTC_SGZ_TILE32(1)
PTC_SGZ_TILE16(8) PTC_SGZ_TILE16(7) PTC_SGZ_TILE16(6) PTC_SGZ_TILE16(5)
PTC_SGZ_TILE16(4) PTC_SGZ_TILE16(3) PTC_SGZ_TILE16(2) PTC_SGZ_TILE16(1)

#define PTC_SGZ_ROWS(W, i, R, ...)                                                  \
    switch (R) {                                                                    \
    case 8: ptc_sgz_tile##W##_8(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 7: ptc_sgz_tile##W##_7(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 6: ptc_sgz_tile##W##_6(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 5: ptc_sgz_tile##W##_5(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 4: ptc_sgz_tile##W##_4(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 3: ptc_sgz_tile##W##_3(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    case 2: ptc_sgz_tile##W##_2(K, A + (i) * lda, lda, sak, __VA_ARGS__); break;    \
    default: ptc_sgz_tile##W##_1(K, A + (i) * lda, lda, sak, __VA_ARGS__); break; }

__attribute__((target("avx512f,avx512vl"))) static void ptc_sgemm_small_avx512(
    ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    ptrdiff_t j, i;
    for (j = 0; j + 32 <= N; j += 32)
        for (i = 0; i < M; i += 8) {
            int R = M - i < 8 ? (int)(M - i) : 8;
            PTC_SGZ_ROWS(32, i, R, B + j, ldb, C + i * ldc + j, ldc, acc)
        }
    for (; j < N; j += 16) {
        int n = N - j < 16 ? (int)(N - j) : 16;
        __mmask16 m = (__mmask16)((1u << n) - 1u);
        for (i = 0; i < M; i += 8) {
            int R = M - i < 8 ? (int)(M - i) : 8;
            PTC_SGZ_ROWS(16, i, R, B + j, ldb, C + i * ldc + j, ldc, acc, m)
        }
    }
}

__attribute__((target("avx2,fma"))) static void ptc_sgemm_small_avx2(
    ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    ptrdiff_t j, i, r, k;
    for (j = 0; j + 16 <= N; j += 16) {
        for (i = 0; i + 6 <= M; i += 6)
            ptc_sg_tile6(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc);
        switch (M - i) {
        case 5: ptc_sg_tile5(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 4: ptc_sg_tile4(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 3: ptc_sg_tile3(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 2: ptc_sg_tile2(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 1: ptc_sg_tile1(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        default: break; }
    }
    for (; j < N; j++)          /* last columns: the same chain over k */
        for (r = 0; r < M; r++) {
            float s = acc ? C[r * ldc + j] : 0.0f;
            for (k = 0; k < K; k++) s = __builtin_fmaf(A[r * lda + k * sak], B[k * ldb + j], s);
            C[r * ldc + j] = s; }
}

/* which ptc_sgemm_small runs: 2 AVX-512F, 1 AVX2+FMA (set by
   ptc_sgemm_small_ok, lowered by ptc_sgemm_small_set_level for tests) */
static int ptc_sgemm_small_level = -1;

static int ptc_sgemm_small_ok(void) {
    if (ptc_sgemm_small_level < 0) {
        __builtin_cpu_init();
        ptc_sgemm_small_level = !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            ? 0 : (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : 1;
    }
    return ptc_sgemm_small_level > 0;
}

/* at most `level` (0: the CPU's best); returns the level in force */
static int ptc_sgemm_small_set_level(int level) {
    ptc_sgemm_small_level = -1;
    ptc_sgemm_small_ok();
    if (level > 0 && level < ptc_sgemm_small_level) ptc_sgemm_small_level = level;
    return ptc_sgemm_small_level;
}

static void ptc_sgemm_small(
    ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    if (ptc_sgemm_small_level == 2)
        ptc_sgemm_small_avx512(M, N, K, A, lda, sak, B, ldb, C, ldc, acc);
    else
        ptc_sgemm_small_avx2(M, N, K, A, lda, sak, B, ldb, C, ldc, acc);
}

/* X (N x K, row stride ldx, unit k stride) transposed into D (K x N, row
   stride ldd >= N): 8 x 8 blocks by ptc_sgemm.h's AVX shuffles, the edges
   element by element.  (A caller whose rows of D would lie a multiple of
   512 bytes apart pads ldd: an 8-column block writes a cache line into every
   row of D, and at such strides those lines share a few L1 sets and evict
   each other before the next block fills them: 5 x 64 x 256 took 7.8 us with
   ldd = N = 256, 2.1 us padded, Zen 5.) */
__attribute__((target("avx2,fma"))) static void ptc_sgemm_small_tcopy(
    ptrdiff_t N, ptrdiff_t K, const float* X, ptrdiff_t ldx, float* D, ptrdiff_t ldd) {
    ptrdiff_t j, k, N8 = N / 8 * 8, K8 = K / 8 * 8;
    for (j = 0; j < N8; j += 8) {
        for (k = 0; k < K8; k += 8) ptc_sg_t8x8(X + j * ldx + k, ldx, D + k * ldd + j, ldd);
        for (; k < K; k++)
            for (ptrdiff_t q = 0; q < 8; q++) D[k * ldd + j + q] = X[(j + q) * ldx + k];
    }
    for (; j < N; j++)
        for (k = 0; k < K; k++) D[k * ldd + j] = X[j * ldx + k];
}
/* C[r, c] (+)= sum_k A[r*lda + k] * B[c*ldb + k] (a weight gradient:
   rows of gy against rows of the column matrix), R x S tiles, 8 lanes of k
   per FMA chain, lanes summed in a fixed order, then the k % 8 tail */
#define PTC_NT_TILE(R, S)                                                           \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_nt_tile##R##S(ptrdiff_t K, const float* A, ptrdiff_t lda, const float* B,       \
                  ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {                \
    ptc_sv8 t[R][S];                                                                \
    ptrdiff_t k, K8 = K & ~(ptrdiff_t)7;                                            \
    for (int r = 0; r < R; r++) for (int c = 0; c < S; c++) t[r][c] = (ptc_sv8){0}; \
    for (k = 0; k < K8; k += 8) {                                                   \
        ptc_sv8 b[S];                                                               \
        for (int c = 0; c < S; c++) b[c] = PTC_SV8_LD(B + c * ldb + k);             \
        for (int r = 0; r < R; r++) {                                               \
            ptc_sv8 a = PTC_SV8_LD(A + r * lda + k);                                \
            for (int c = 0; c < S; c++) t[r][c] += a * b[c]; } }                    \
    for (int r = 0; r < R; r++) for (int c = 0; c < S; c++) {                       \
        ptc_sv8 v = t[r][c];                                                        \
        float s = ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7])); \
        for (ptrdiff_t q = K8; q < K; q++)                                          \
            s = __builtin_fmaf(A[r * lda + q], B[c * ldb + q], s);                  \
        C[r * ldc + c] = acc ? C[r * ldc + c] + s : s; }                            \
}
PTC_NT_TILE(4, 2)
PTC_NT_TILE(4, 1)
PTC_NT_TILE(3, 2)
PTC_NT_TILE(3, 1)
PTC_NT_TILE(2, 2)
PTC_NT_TILE(2, 1)
PTC_NT_TILE(1, 2)
PTC_NT_TILE(1, 1)
#define PTC_NT_ROWS(R, i)                                                           \
    for (j = 0; j + 2 <= N; j += 2)                                                 \
        ptc_nt_tile##R##2(K, A + (i) * lda, lda, B + j * ldb, ldb, C + (i) * ldc + j, ldc, acc); \
    if (j < N)                                                                      \
        ptc_nt_tile##R##1(K, A + (i) * lda, lda, B + j * ldb, ldb, C + (i) * ldc + j, ldc, acc);
__attribute__((target("avx2,fma"))) static void ptc_sgemm_small_nt(
    ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    ptrdiff_t i, j;
    for (i = 0; i + 4 <= M; i += 4) { PTC_NT_ROWS(4, i) }
    switch (M - i) {
    case 3: { PTC_NT_ROWS(3, i) } break;
    case 2: { PTC_NT_ROWS(2, i) } break;
    case 1: { PTC_NT_ROWS(1, i) } break;
    default: break; }
}
#else
static void ptc_sgemm_small(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A,
    ptrdiff_t lda, ptrdiff_t sak, const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc,
    int acc) { (void)M; (void)N; (void)K; (void)A; (void)lda; (void)sak; (void)B; (void)ldb;
               (void)C; (void)ldc; (void)acc; }
static void ptc_sgemm_small_nt(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A,
    ptrdiff_t lda, const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    (void)M; (void)N; (void)K; (void)A; (void)lda; (void)B; (void)ldb; (void)C; (void)ldc;
    (void)acc; }
static int ptc_sgemm_small_ok(void) { return 0; }
static int ptc_sgemm_small_set_level(int level) { (void)level; return 0; }
static void ptc_sgemm_small_tcopy(ptrdiff_t N, ptrdiff_t K, const float* X, ptrdiff_t ldx,
    float* D, ptrdiff_t ldd) { (void)N; (void)K; (void)X; (void)ldx; (void)D; (void)ldd; }
#endif
#endif
