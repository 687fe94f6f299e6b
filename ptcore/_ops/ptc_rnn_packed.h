/* Packed-weight float32 kernels for the recurrent layers of ptcore._ops._rnn
   (see there).  The recurrent weight W_hh is packed once per forward or
   backward call into the layout below, then every time step runs its
   (batch x H) @ W_hh^T product (forward) or (batch x 4H) @ W_hh product
   (backward) through AVX2+FMA register tiles that read the packed panels
   only: no per-step re-packing (what a BLAS call per step does).

   Every output element is one FMA chain over k in increasing order,
   whatever the tile or the thread that computes it: results do not depend
   on how the hidden units are shared among threads.

   Only the AVX2+FMA builds exist (GCC/Clang on x86-64); ptc_rnn_packed_ok()
   says at run time whether the CPU has them, and elsewhere it is 0 (the
   caller keeps its BLAS path). */
#ifndef PTC_RNN_PACKED_H
#define PTC_RNN_PACKED_H
#include <stddef.h>
#include <string.h>
#include "ptc_math.h"

/* ---- packing (plain C: runs anywhere) ----------------------------------- */

/* Forward panels of an LSTM/GRU/RNN weight W (NG*H, H), row-major, gate g's
   rows at g*H: for each block q of 8 hidden units, for each k < H, NG groups
   of 8 floats (gate g, units 8q .. 8q+7; zero past H):
       P[((q*H + k)*NG + g)*8 + l] = W[(g*H + 8q + l)*H + k].
   Size: ceil(H/8) * H * NG * 8 floats. */
static void ptc_rnn_pack_fwd_f32(const float* W, ptrdiff_t NG, ptrdiff_t H, float* P)
{
    ptrdiff_t nq = (H + 7) / 8, q, k, g, l, j;
    for (q = 0; q < nq; q++)
        for (g = 0; g < NG; g++)
            for (l = 0; l < 8; l++) {
                j = 8 * q + l;
                float* dst = P + (q * H * NG + g) * 8 + l;
                if (j < H) {
                    const float* src = W + (g * H + j) * H;
                    for (k = 0; k < H; k++) dst[k * NG * 8] = src[k];
                } else {
                    for (k = 0; k < H; k++) dst[k * NG * 8] = 0.0f;
                }
            }
}

/* Backward panels of W (N, H) row-major (N = NG*H) for dh (B, H) = dG (B, N) @ W:
   for each block p of 16 columns j, for each n < N, 16 floats (zero past H):
       Q[(p*N + n)*16 + l] = W[n*H + 16p + l].
   Size: ceil(H/16) * N * 16 floats. */
static void ptc_rnn_pack_bwd_f32(const float* W, ptrdiff_t N, ptrdiff_t H, float* Q)
{
    ptrdiff_t np = (H + 15) / 16, p, n, l, j;
    for (p = 0; p < np; p++)
        for (n = 0; n < N; n++) {
            float* dst = Q + (p * N + n) * 16;
            for (l = 0; l < 16; l++) {
                j = 16 * p + l;
                dst[l] = j < H ? W[n * H + j] : 0.0f;
            }
        }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PTC_RNN_HAVE_AVX2 1

#define PTC_RV_FMA(a, b, c) ((ptc_v8sf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))

static inline __attribute__((always_inline)) ptc_v8sf ptc_rv_load(const float* p, int n)
{
    ptc_v8sf v = {0};
    if (n == 8) memcpy(&v, p, 32);
    else memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}

static inline __attribute__((always_inline)) void ptc_rv_store(float* p, ptc_v8sf v, int n)
{
    if (n == 8) memcpy(p, &v, 32);
    else memcpy(p, &v, (size_t)n * sizeof(float));
}

static inline __attribute__((always_inline)) ptc_v8sf ptc_rv_sigmoid(ptc_v8sf x)
{
    return 1.0f / (1.0f + ptc_expf8(-x));      /* the lanes of ptc_sigmoid_f32 */
}

/* R batch rows x 4 gates x 8 hidden units of one LSTM step: the gate
   pre-activations gi + b_hh + h_prev W_hh^T (one FMA chain over k each), then
   i, f, o = sigmoid, g = tanh, c = f c_prev + i g, h = o tanh(c); stores the
   activated gates (B, 4H), c and h (B, H) of those rows and units. */
#define PTC_LSTM_TILE(R)                                                            \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_lstm_tile##R(ptrdiff_t H, int n, const float* Pq, const float* hp,              \
                 const float* gi, const ptc_v8sf* bias, const float* cp,            \
                 float* gates, float* c, float* h) {                                \
    ptc_v8sf acc[R][4];                                                             \
    ptrdiff_t G = 4 * H, k;                                                         \
    for (int r = 0; r < R; r++)                                                     \
        for (int g = 0; g < 4; g++)                                                 \
            acc[r][g] = ptc_rv_load(gi + r * G + g * H, n) + bias[g];               \
    for (k = 0; k < H; k++) {                                                       \
        ptc_v8sf a[R];                                                              \
        for (int r = 0; r < R; r++) a[r] = (ptc_v8sf){0} + hp[r * H + k];           \
        for (int g = 0; g < 4; g++) {                                               \
            ptc_v8sf w;                                                             \
            memcpy(&w, Pq + k * 32 + g * 8, 32);                                    \
            for (int r = 0; r < R; r++) acc[r][g] = PTC_RV_FMA(a[r], w, acc[r][g]); \
        } }                                                                         \
    for (int r = 0; r < R; r++) {                                                   \
        ptc_v8sf ig = ptc_rv_sigmoid(acc[r][0]), fg = ptc_rv_sigmoid(acc[r][1]);    \
        ptc_v8sf gg = ptc_tanhf8(acc[r][2]), og = ptc_rv_sigmoid(acc[r][3]);        \
        ptc_v8sf cn = fg * ptc_rv_load(cp + r * H, n) + ig * gg;                    \
        ptc_v8sf hn = og * ptc_tanhf8(cn);                                          \
        ptc_rv_store(gates + r * G, ig, n);                                         \
        ptc_rv_store(gates + r * G + H, fg, n);                                     \
        ptc_rv_store(gates + r * G + 2 * H, gg, n);                                 \
        ptc_rv_store(gates + r * G + 3 * H, og, n);                                 \
        ptc_rv_store(c + r * H, cn, n);                                             \
        ptc_rv_store(h + r * H, hn, n); }                                           \
}
PTC_LSTM_TILE(3)
PTC_LSTM_TILE(2)
PTC_LSTM_TILE(1)

/* One LSTM time step for the hidden units of blocks [q0, q1) (8 units each)
   and every batch row: P from ptc_rnn_pack_fwd_f32 (NG 4); hp, cp (B, H) the
   previous state; gi (B, 4H) the input projection; bhh (4H) or NULL; writes
   gates (B, 4H), c and h (B, H). */
__attribute__((target("avx2,fma"))) static void ptc_lstm_step_f32(
    ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H, const float* P,
    const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{
    ptrdiff_t G = 4 * H, q, b;
    for (q = q0; q < q1; q++) {
        ptrdiff_t j0 = 8 * q;
        int n = H - j0 < 8 ? (int)(H - j0) : 8;
        const float* Pq = P + q * H * 32;
        ptc_v8sf bias[4];
        for (int g = 0; g < 4; g++)
            bias[g] = bhh ? ptc_rv_load(bhh + g * H + j0, n) : (ptc_v8sf){0};
        for (b = 0; b + 3 <= B; b += 3)
            ptc_lstm_tile3(H, n, Pq, hp + b * H, gi + b * G + j0, bias, cp + b * H + j0,
                           gates + b * G + j0, c + b * H + j0, h + b * H + j0);
        if (B - b == 2)
            ptc_lstm_tile2(H, n, Pq, hp + b * H, gi + b * G + j0, bias, cp + b * H + j0,
                           gates + b * G + j0, c + b * H + j0, h + b * H + j0);
        else if (B - b == 1)
            ptc_lstm_tile1(H, n, Pq, hp + b * H, gi + b * G + j0, bias, cp + b * H + j0,
                           gates + b * G + j0, c + b * H + j0, h + b * H + j0);
    }
}

/* R batch rows x 16 columns of dh (+)= dG @ W (one FMA chain over n each,
   started from dh's value when accum is set). */
#define PTC_RBWD_TILE(R)                                                            \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_rbwd_tile##R(ptrdiff_t K, ptrdiff_t N, ptrdiff_t H, int n, const float* Qp,     \
                 const float* dG, float* dh, int accum) {                           \
    ptc_v8sf acc0[R], acc1[R];                                                      \
    ptrdiff_t k;                                                                    \
    for (int r = 0; r < R; r++) {                                                   \
        if (!accum) { acc0[r] = (ptc_v8sf){0}; acc1[r] = (ptc_v8sf){0}; }           \
        else if (n == 16) { acc0[r] = ptc_rv_load(dh + r * H, 8);                   \
                            acc1[r] = ptc_rv_load(dh + r * H + 8, 8); }             \
        else if (n > 8) { acc0[r] = ptc_rv_load(dh + r * H, 8);                     \
                          acc1[r] = ptc_rv_load(dh + r * H + 8, n - 8); }           \
        else { acc0[r] = ptc_rv_load(dh + r * H, n); acc1[r] = (ptc_v8sf){0}; } }   \
    for (k = 0; k < K; k++) {                                                       \
        ptc_v8sf w0, w1;                                                            \
        memcpy(&w0, Qp + k * 16, 32);                                               \
        memcpy(&w1, Qp + k * 16 + 8, 32);                                           \
        for (int r = 0; r < R; r++) {                                               \
            ptc_v8sf a = (ptc_v8sf){0} + dG[r * N + k];                             \
            acc0[r] = PTC_RV_FMA(a, w0, acc0[r]);                                   \
            acc1[r] = PTC_RV_FMA(a, w1, acc1[r]); } }                               \
    for (int r = 0; r < R; r++) {                                                   \
        if (n == 16) { memcpy(dh + r * H, &acc0[r], 32); memcpy(dh + r * H + 8, &acc1[r], 32); } \
        else if (n > 8) { memcpy(dh + r * H, &acc0[r], 32);                         \
                          ptc_rv_store(dh + r * H + 8, acc1[r], n - 8); }           \
        else ptc_rv_store(dh + r * H, acc0[r], n); }                                \
}
PTC_RBWD_TILE(6)
PTC_RBWD_TILE(5)
PTC_RBWD_TILE(4)
PTC_RBWD_TILE(3)
PTC_RBWD_TILE(2)
PTC_RBWD_TILE(1)

/* dh (B, H) (+)= dG (B, N) @ W (N, H) for the columns of panels [p0, p1)
   (16 each), Q from ptc_rnn_pack_bwd_f32; accum: add to dh's values.  The
   sum over n runs in chunks of PTC_RBWD_KC (the panel's chunk stays in L1
   while every batch row passes): each chunk continues the previous chunk's
   FMA chains from dh, in the same order, so the chunking changes no bit. */
#define PTC_RBWD_KC 256
__attribute__((target("avx2,fma"))) static void ptc_rnn_bwd_step_f32(
    ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N, ptrdiff_t H, const float* Q,
    const float* dG, float* dh, int accum)
{
    ptrdiff_t p, b, k0, K;
    for (p = p0; p < p1; p++) {
        ptrdiff_t j0 = 16 * p;
        int n = H - j0 < 16 ? (int)(H - j0) : 16;
        for (k0 = 0; k0 < N; k0 += PTC_RBWD_KC) {
            const float* Qp = Q + (p * N + k0) * 16;
            const float* g = dG + k0;
            int acc = accum || k0 > 0;
            K = N - k0 < PTC_RBWD_KC ? N - k0 : PTC_RBWD_KC;
            for (b = 0; b + 6 <= B; b += 6)
                ptc_rbwd_tile6(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc);
            switch (B - b) {
            case 5: ptc_rbwd_tile5(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 4: ptc_rbwd_tile4(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 3: ptc_rbwd_tile3(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 2: ptc_rbwd_tile2(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 1: ptc_rbwd_tile1(K, N, H, n, Qp, g + b * N, dh + b * H + j0, acc); break;
            default: break; }
        }
    }
}

static int ptc_rnn_packed_ok(void)
{
    static int ok = -1;
    if (ok < 0) { __builtin_cpu_init();
                  ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
    return ok;
}
#else
#define PTC_RNN_HAVE_AVX2 0
static void ptc_lstm_step_f32(ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H,
    const float* P, const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{ (void)q0; (void)q1; (void)B; (void)H; (void)P; (void)hp; (void)gi; (void)bhh; (void)cp;
  (void)gates; (void)c; (void)h; }
static void ptc_rnn_bwd_step_f32(ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N,
    ptrdiff_t H, const float* Q, const float* dG, float* dh, int accum)
{ (void)p0; (void)p1; (void)B; (void)N; (void)H; (void)Q; (void)dG; (void)dh; (void)accum; }
static int ptc_rnn_packed_ok(void) { return 0; }
#endif
#endif
