/* Register-tiled float32 GEMM kernels for the few-channel convolutions of
   ptcore._ops._conv (see there): ptc_sgemm_small (C (+)= A B, A with a row
   and a k stride) and ptc_sgemm_small_nt (C (+)= A B^T, both along k).  Only
   the AVX2+FMA builds exist (GCC/Clang on x86-64); ptc_sgemm_small_ok() says
   at run time whether the CPU has them, and elsewhere it is 0 (BLAS is used). */
#ifndef PTC_SGEMM_SMALL_H
#define PTC_SGEMM_SMALL_H
#include <stddef.h>
#define PTC_SV8_LD(p) ({ ptc_sv8 v_; __builtin_memcpy(&v_, (p), 32); v_; })
#define PTC_SV8_ST(p, v) do { ptc_sv8 w_ = (v); __builtin_memcpy((p), &w_, 32); } while (0)
#if defined(__GNUC__) && defined(__x86_64__)
typedef float ptc_sv8 __attribute__((vector_size(32)));
/* C[r, j] (+)= sum_k A[r*lda + k*sak] * B[k*ldb + j] for R rows, 16 columns */
#define PTC_SG_TILE(R)                                                              \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_sg_tile##R(ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,           \
               const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {   \
    ptc_sv8 c0[R], c1[R];                                                           \
    for (int r = 0; r < R; r++) {                                                   \
        if (acc) { c0[r] = PTC_SV8_LD(C + r * ldc); c1[r] = PTC_SV8_LD(C + r * ldc + 8); } \
        else { c0[r] = (ptc_sv8){0}; c1[r] = (ptc_sv8){0}; } }                      \
    for (ptrdiff_t k = 0; k < K; k++) {                                             \
        ptc_sv8 b0 = PTC_SV8_LD(B + k * ldb), b1 = PTC_SV8_LD(B + k * ldb + 8);     \
        for (int r = 0; r < R; r++) {                                               \
            float a = A[r * lda + k * sak];                                         \
            c0[r] += a * b0; c1[r] += a * b1; } }                                   \
    for (int r = 0; r < R; r++) {                                                   \
        PTC_SV8_ST(C + r * ldc, c0[r]); PTC_SV8_ST(C + r * ldc + 8, c1[r]); }       \
}
PTC_SG_TILE(4)
PTC_SG_TILE(3)
PTC_SG_TILE(2)
PTC_SG_TILE(1)
__attribute__((target("avx2,fma"))) static void ptc_sgemm_small(
    ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda, ptrdiff_t sak,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int acc) {
    ptrdiff_t j, i, r, k;
    for (j = 0; j + 16 <= N; j += 16) {
        for (i = 0; i + 4 <= M; i += 4)
            ptc_sg_tile4(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc);
        switch (M - i) {
        case 3: ptc_sg_tile3(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 2: ptc_sg_tile2(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        case 1: ptc_sg_tile1(K, A + i * lda, lda, sak, B + j, ldb, C + i * ldc + j, ldc, acc); break;
        default: break; }
    }
    for (; j < N; j++)          /* last columns: the same order over k */
        for (r = 0; r < M; r++) {
            float s = acc ? C[r * ldc + j] : 0.0f;
            for (k = 0; k < K; k++) s = __builtin_fmaf(A[r * lda + k * sak], B[k * ldb + j], s);
            C[r * ldc + j] = s; }
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
static int ptc_sgemm_small_ok(void) {
    static int ok = -1;
    if (ok < 0) { __builtin_cpu_init();
                  ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
    return ok;
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
#endif
#endif
