/* Packed-weight float32 kernels for the recurrent layers of ptcore._ops.kernels._rnn
   (see there).  The recurrent weight W_hh is packed once per forward or
   backward call into the layout below, then every time step runs its
   (batch x H) @ W_hh^T product (forward) or (batch x 4H) @ W_hh product
   (backward) through register tiles that read the packed panels only: no
   per-step re-packing (what a BLAS call per step does).  AVX2+FMA tiles on
   8-unit (forward) / 16-column (backward) panels; on AVX-512F CPUs (and the
   gate-level knob at 2) 16-unit / 32-column panels and zmm tiles.

   Every output element is one FMA chain over k in increasing order,
   whatever the tile or the thread that computes it: results do not depend
   on how the hidden units are shared among threads.

   Only x86-64 builds exist (GCC/Clang; AVX2+FMA at least); ptc_rnn_packed_ok()
   says at run time whether the CPU has them, and elsewhere it is 0 (the
   caller keeps its BLAS path). */
#ifndef PTC_RNN_PACKED_H
#define PTC_RNN_PACKED_H
#include <stddef.h>
#include <string.h>
#include "ptc_math.h"
#include "ptc_rnn_gates.h"      /* ptc_rnn_gates_max: the vector level knob */
#if defined(__GNUC__) && defined(__x86_64__)
#include "ptc_sgemm.h"           /* ptc_sg_t8x8 */
#endif
static int ptc_rnn_packed_ok(void);

/* ---- packing (plain C: runs anywhere) ----------------------------------- */

/* Forward panels of an LSTM/GRU/RNN weight W (NG*H, H), row-major, gate g's
   rows at g*H, for L-lane register tiles (L = 8 or 16): for each block q of
   L hidden units, for each k < H, NG groups of L floats (gate g, units
   Lq .. Lq+L-1; zero past H):
       P[((q*H + k)*NG + g)*L + l] = W[(g*H + Lq + l)*H + k].
   Size: ceil(H/L) * H * NG * L floats.  8 rows x 8 k at a time through
   ptc_sgemm.h's AVX 8 x 8 transpose where the CPU has AVX2 (the element
   loop's strided stores cost ~200 us an LSTM(256) layer, 1.5% of its
   forward); the edges element by element. */
static void ptc_rnn_pack_fwd_lanes_f32(const float* W, ptrdiff_t NG, ptrdiff_t H, ptrdiff_t L,
                                       float* P)
{
    ptrdiff_t nq = (H + L - 1) / L, q, k, g, l, j, k8 = 0;
#if defined(__GNUC__) && defined(__x86_64__)
    if (ptc_rnn_packed_ok()) k8 = H / 8 * 8;
#endif
    for (q = 0; q < nq; q++)
        for (g = 0; g < NG; g++)
            for (l = 0; l < L; l += 8) {
                ptrdiff_t w = H - (L * q + l);          /* rows of this 8 inside W */
                float* dst = P + (q * H * NG + g) * L + l;
                const float* src = W + (g * H + L * q + l) * H;
                if (w >= 8) {
#if defined(__GNUC__) && defined(__x86_64__)
                    for (k = 0; k < k8; k += 8) ptc_sg_t8x8(src + k, H, dst + k * NG * L, NG * L);
#endif
                    for (k = k8; k < H; k++)
                        for (j = 0; j < 8; j++) dst[k * NG * L + j] = src[j * H + k];
                } else {
                    for (k = 0; k < H; k++)
                        for (j = 0; j < 8; j++)
                            dst[k * NG * L + j] = j < w ? src[j * H + k] : 0.0f;
                }
            }
}

/* Backward panels of W (N, H) row-major (N = NG*H) for dh (B, H) = dG (B, N) @ W,
   for L-column register tiles (L = 16 or 32): for each block p of L columns
   j, for each n < N, L floats (zero past H):
       Q[(p*N + n)*L + l] = W[n*H + Lp + l].
   Size: ceil(H/L) * N * L floats.  Each panel row is one contiguous copy
   (the first version tested every element against H: 2.4% of a 2-thread
   LSTM(256) forward+backward). */
static void ptc_rnn_pack_bwd_lanes_f32(const float* W, ptrdiff_t N, ptrdiff_t H, ptrdiff_t L,
                                       float* Q)
{
    ptrdiff_t np = (H + L - 1) / L, p, n, w;
    for (p = 0; p < np; p++) {
        w = H - L * p < L ? H - L * p : L;      /* columns of this panel inside W */
        for (n = 0; n < N; n++) {
            float* dst = Q + (p * N + n) * L;
            memcpy(dst, W + n * H + L * p, (size_t)w * sizeof(float));
            if (w < L) memset(dst + w, 0, (size_t)(L - w) * sizeof(float));
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PTC_RNN_HAVE_AVX2 1

#define PTC_RV_FMA(a, b, c) ((ptc_v8sf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define PTC_RV_BCAST(p) ((ptc_v8sf)_mm256_broadcast_ss(p))

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

#define PTC_LSTM_ROW_INIT(r)                                                        \
    ptc_v8sf c##r##0 = {0}, c##r##1 = {0}, c##r##2 = {0}, c##r##3 = {0};             \
    if (Rn > r && k0 == 0) {                                                        \
        c##r##0 = ptc_rv_load(gi + r * G, n) + bias[0];                             \
        c##r##1 = ptc_rv_load(gi + r * G + H, n) + bias[1];                         \
        c##r##2 = ptc_rv_load(gi + r * G + 2 * H, n) + bias[2];                     \
        c##r##3 = ptc_rv_load(gi + r * G + 3 * H, n) + bias[3];                     \
    } else if (Rn > r) {        /* a later k chunk: the partial sums kept in gates */ \
        c##r##0 = ptc_rv_load(gates + r * G, n);                                    \
        c##r##1 = ptc_rv_load(gates + r * G + H, n);                                \
        c##r##2 = ptc_rv_load(gates + r * G + 2 * H, n);                            \
        c##r##3 = ptc_rv_load(gates + r * G + 3 * H, n); }
#define PTC_LSTM_ROW_FMA(r)                                                         \
    if (Rn > r) {                                                                   \
        ptc_v8sf a = PTC_RV_BCAST(hp + r * H + k);                                  \
        c##r##0 = PTC_RV_FMA(a, w0, c##r##0);                                       \
        c##r##1 = PTC_RV_FMA(a, w1, c##r##1);                                       \
        c##r##2 = PTC_RV_FMA(a, w2, c##r##2);                                       \
        c##r##3 = PTC_RV_FMA(a, w3, c##r##3); }
#define PTC_LSTM_ROW_OUT(r)                                                         \
    if (Rn > r) {               /* the sums (partial, or the pre-activations) */    \
        ptc_rv_store(gates + r * G, c##r##0, n);                                    \
        ptc_rv_store(gates + r * G + H, c##r##1, n);                                \
        ptc_rv_store(gates + r * G + 2 * H, c##r##2, n);                            \
        ptc_rv_store(gates + r * G + 3 * H, c##r##3, n); }

/* The gate math of one LSTM step after its products, for batch rows [0, B)
   and hidden units [j0, j1): ``gates`` (B, 4H) holds the pre-activations;
   writes back i, f, o = sigmoid, g = tanh, and c = f c_prev + i g,
   h = o tanh(c).  A pass of its own over rows of units, not the epilogue of
   each register tile: there the five transcendentals of a tile's rows came
   one long dependency chain after another and ran at about half their
   throughput (H = 64: 8.5 of an LSTM step's 15.5 us).  16 lanes on AVX-512F,
   8 on AVX2 and for the last H % 16 units: the same per-lane formulas as the
   scalar ptc_sigmoid_f32/ptc_tanh_f32 lanes, so the same bits at every width. */
#define PTC_LSTM_GATES8(j)                                                          \
    { int n = j1 - (j) < 8 ? (int)(j1 - (j)) : 8;                                   \
      ptc_v8sf ig = ptc_rv_sigmoid(ptc_rv_load(g + (j), n));                        \
      ptc_v8sf fg = ptc_rv_sigmoid(ptc_rv_load(g + H + (j), n));                    \
      ptc_v8sf gg = ptc_tanhf8(ptc_rv_load(g + 2 * H + (j), n));                    \
      ptc_v8sf og = ptc_rv_sigmoid(ptc_rv_load(g + 3 * H + (j), n));                \
      ptc_v8sf cn = fg * ptc_rv_load(cp + b * H + (j), n) + ig * gg;                \
      ptc_v8sf hn = og * ptc_tanhf8(cn);                                            \
      ptc_rv_store(g + (j), ig, n); ptc_rv_store(g + H + (j), fg, n);               \
      ptc_rv_store(g + 2 * H + (j), gg, n); ptc_rv_store(g + 3 * H + (j), og, n);   \
      ptc_rv_store(c + b * H + (j), cn, n); ptc_rv_store(h + b * H + (j), hn, n); }

__attribute__((target("avx2,fma"))) static void ptc_lstm_fwd_gates_avx2(
    ptrdiff_t B, ptrdiff_t H, ptrdiff_t j0, ptrdiff_t j1, float* gates, const float* cp,
    float* c, float* h)
{
    ptrdiff_t b, j;
    for (b = 0; b < B; b++) {
        float* g = gates + b * 4 * H;
        for (j = j0; j < j1; j += 8) PTC_LSTM_GATES8(j)
    }
}

__attribute__((target("avx512f,avx512vl"))) static void ptc_lstm_fwd_gates_avx512(
    ptrdiff_t B, ptrdiff_t H, ptrdiff_t j0, ptrdiff_t j1, float* gates, const float* cp,
    float* c, float* h)
{
    ptrdiff_t b, j;
    for (b = 0; b < B; b++) {
        float* g = gates + b * 4 * H;
        for (j = j0; j + 16 <= j1; j += 16) {
            ptc_v16sf pi, pf, pg, po, cv;
            memcpy(&pi, g + j, 64); memcpy(&pf, g + H + j, 64);
            memcpy(&pg, g + 2 * H + j, 64); memcpy(&po, g + 3 * H + j, 64);
            memcpy(&cv, cp + b * H + j, 64);
            ptc_v16sf ig = 1.0f / (1.0f + ptc_expf16(-pi));
            ptc_v16sf fg = 1.0f / (1.0f + ptc_expf16(-pf));
            ptc_v16sf gg = ptc_tanhf16(pg);
            ptc_v16sf og = 1.0f / (1.0f + ptc_expf16(-po));
            ptc_v16sf cn = fg * cv + ig * gg;
            ptc_v16sf hn = og * ptc_tanhf16(cn);
            memcpy(g + j, &ig, 64); memcpy(g + H + j, &fg, 64);
            memcpy(g + 2 * H + j, &gg, 64); memcpy(g + 3 * H + j, &og, 64);
            memcpy(c + b * H + j, &cn, 64); memcpy(h + b * H + j, &hn, 64);
        }
        for (; j < j1; j += 8) PTC_LSTM_GATES8(j)
    }
}

static void ptc_lstm_fwd_gates(ptrdiff_t B, ptrdiff_t H, ptrdiff_t j0, ptrdiff_t j1,
                               float* gates, const float* cp, float* c, float* h)
{
    static int cpu = -1;
    if (cpu < 0) { __builtin_cpu_init(); cpu = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : 1; }
    if (cpu == 2 && ptc_rnn_gates_max >= 2) ptc_lstm_fwd_gates_avx512(B, H, j0, j1, gates, cp, c, h);
    else ptc_lstm_fwd_gates_avx2(B, H, j0, j1, gates, cp, c, h);
}

/* R (<= 3) batch rows x 4 gates x 8 hidden units of one LSTM step: the gate
   pre-activations gi + b_hh + h_prev W_hh^T over k in [k0, k1) (one FMA
   chain over k each, in registers, continued from ``gates`` after the first
   chunk), stored into ``gates`` (B, 4H); ptc_lstm_fwd_gates then applies the
   gate math. */
#define PTC_LSTM_TILE(R)                                                            \
__attribute__((target("avx2,fma"), always_inline)) static inline void              \
ptc_lstm_tile##R(ptrdiff_t H, int n, const float* Pq, const float* hp,              \
                 const float* gi, const ptc_v8sf* bias, float* gates,               \
                 ptrdiff_t k0, ptrdiff_t k1) {                                      \
    const int Rn = R;                                                               \
    ptrdiff_t G = 4 * H, k;                                                         \
    PTC_LSTM_ROW_INIT(0)                                                            \
    PTC_LSTM_ROW_INIT(1)                                                            \
    PTC_LSTM_ROW_INIT(2)                                                            \
    for (k = k0; k < k1; k++) {                                                     \
        ptc_v8sf w0, w1, w2, w3;                                                    \
        memcpy(&w0, Pq + k * 32, 32);                                               \
        memcpy(&w1, Pq + k * 32 + 8, 32);                                           \
        memcpy(&w2, Pq + k * 32 + 16, 32);                                          \
        memcpy(&w3, Pq + k * 32 + 24, 32);                                          \
        PTC_LSTM_ROW_FMA(0)                                                         \
        PTC_LSTM_ROW_FMA(1)                                                         \
        PTC_LSTM_ROW_FMA(2)                                                         \
    }                                                                               \
    PTC_LSTM_ROW_OUT(0)                                                             \
    PTC_LSTM_ROW_OUT(1)                                                             \
    PTC_LSTM_ROW_OUT(2)                                                             \
}
PTC_LSTM_TILE(3)
PTC_LSTM_TILE(2)
PTC_LSTM_TILE(1)

/* One LSTM time step for the hidden units of blocks [q0, q1) (8 units each)
   and every batch row: P from ptc_rnn_pack_fwd_lanes_f32 (NG 4, L 8); hp, cp (B, H) the
   previous state; gi (B, 4H) the input projection; bhh (4H) or NULL; writes
   gates (B, 4H), c and h (B, H).  The sum over k runs in chunks of
   PTC_LSTM_KC for every batch row before the next chunk (a block's weight
   chunk, 16 KiB, stays in L1 while the row tiles pass; whole, at H = 256 it
   did not, and every row tile re-read it from L2): each chunk continues the
   FMA chains from the partial sums it left in ``gates``, so the chunking
   changes no bit. */
#define PTC_LSTM_KC 128
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
        ptrdiff_t k0, k1;
        for (k0 = 0; k0 < H; k0 = k1) {
            k1 = H - k0 > PTC_LSTM_KC ? k0 + PTC_LSTM_KC : H;
            for (b = 0; b + 3 <= B; b += 3)
                ptc_lstm_tile3(H, n, Pq, hp + b * H, gi + b * G + j0, bias, gates + b * G + j0,
                               k0, k1);
            if (B - b == 2)
                ptc_lstm_tile2(H, n, Pq, hp + b * H, gi + b * G + j0, bias, gates + b * G + j0,
                               k0, k1);
            else if (B - b == 1)
                ptc_lstm_tile1(H, n, Pq, hp + b * H, gi + b * G + j0, bias, gates + b * G + j0,
                               k0, k1);
        }
    }
    if (q1 > q0)
        ptc_lstm_fwd_gates(B, H, 8 * q0, 8 * q1 < H ? 8 * q1 : H, gates, cp, c, h);
}

/* The AVX-512F forward step: R (<= 6) batch rows x 4 gates x 16 hidden
   units per register tile (24 zmm accumulators; per k, 4 weight loads and R
   broadcasts feed 4R 16-lane FMAs, where the 8-lane tile's 12 FMAs needed 7
   loads and spilled a weight), on 16-lane panels
   (ptc_rnn_pack_fwd_lanes_f32 with L = 16).  The same chains as the 8-lane
   kernel (gi + b_hh, then h_prev[k] W[., k] for k in order, continued through
   ``gates`` between chunks): the same bits. */
#define PTC_LSTMZ_TILE(R)                                                           \
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void               \
ptc_lstmz_tile##R(ptrdiff_t H, __mmask16 m, const float* Pq, const float* hp,        \
                  const float* gi, const __m512* bias, float* gates, ptrdiff_t k0,   \
                  ptrdiff_t k1) {                                                   \
    ptrdiff_t G = 4 * H, k;                                                         \
    __m512 a0[R], a1[R], a2[R], a3[R];                                              \
    for (int r = 0; r < R; r++) {                                                   \
        const float* src = k0 == 0 ? gi + r * G : gates + r * G;                    \
        a0[r] = _mm512_maskz_loadu_ps(m, src);                                      \
        a1[r] = _mm512_maskz_loadu_ps(m, src + H);                                  \
        a2[r] = _mm512_maskz_loadu_ps(m, src + 2 * H);                              \
        a3[r] = _mm512_maskz_loadu_ps(m, src + 3 * H);                              \
        if (k0 == 0) {                                                              \
            a0[r] = _mm512_add_ps(a0[r], bias[0]); a1[r] = _mm512_add_ps(a1[r], bias[1]); \
            a2[r] = _mm512_add_ps(a2[r], bias[2]); a3[r] = _mm512_add_ps(a3[r], bias[3]); } } \
    for (k = k0; k < k1; k++) {                                                     \
        __m512 w0 = _mm512_loadu_ps(Pq + k * 64), w1 = _mm512_loadu_ps(Pq + k * 64 + 16); \
        __m512 w2 = _mm512_loadu_ps(Pq + k * 64 + 32), w3 = _mm512_loadu_ps(Pq + k * 64 + 48); \
        for (int r = 0; r < R; r++) {                                               \
            __m512 x = _mm512_set1_ps(hp[r * H + k]);                               \
            a0[r] = _mm512_fmadd_ps(x, w0, a0[r]); a1[r] = _mm512_fmadd_ps(x, w1, a1[r]); \
            a2[r] = _mm512_fmadd_ps(x, w2, a2[r]); a3[r] = _mm512_fmadd_ps(x, w3, a3[r]); } } \
    for (int r = 0; r < R; r++) {                                                   \
        _mm512_mask_storeu_ps(gates + r * G, m, a0[r]);                             \
        _mm512_mask_storeu_ps(gates + r * G + H, m, a1[r]);                         \
        _mm512_mask_storeu_ps(gates + r * G + 2 * H, m, a2[r]);                     \
        _mm512_mask_storeu_ps(gates + r * G + 3 * H, m, a3[r]); }                   \
}
PTC_LSTMZ_TILE(6) PTC_LSTMZ_TILE(5) PTC_LSTMZ_TILE(4)
PTC_LSTMZ_TILE(3) PTC_LSTMZ_TILE(2) PTC_LSTMZ_TILE(1)

#define PTC_LSTMZ_KC 64     /* a block's weight chunk: 64 k x 64 floats = 16 KiB */
__attribute__((target("avx512f,avx512vl"))) static void ptc_lstm_step_f32_avx512(
    ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H, const float* P,
    const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{
    ptrdiff_t G = 4 * H, q, b, k0, k1;
    for (q = q0; q < q1; q++) {
        ptrdiff_t j0 = 16 * q;
        int n = H - j0 < 16 ? (int)(H - j0) : 16;
        __mmask16 m = (__mmask16)((1u << n) - 1u);
        const float* Pq = P + q * H * 64;
        __m512 bias[4];
        for (int g = 0; g < 4; g++)
            bias[g] = bhh ? _mm512_maskz_loadu_ps(m, bhh + g * H + j0) : _mm512_setzero_ps();
        for (k0 = 0; k0 < H; k0 = k1) {
            k1 = H - k0 > PTC_LSTMZ_KC ? k0 + PTC_LSTMZ_KC : H;
            for (b = 0; b + 6 <= B; b += 6)
                ptc_lstmz_tile6(H, m, Pq, hp + b * H, gi + b * G + j0, bias, gates + b * G + j0,
                                k0, k1);
            switch (B - b) {
            case 5: ptc_lstmz_tile5(H, m, Pq, hp + b * H, gi + b * G + j0, bias,
                                    gates + b * G + j0, k0, k1); break;
            case 4: ptc_lstmz_tile4(H, m, Pq, hp + b * H, gi + b * G + j0, bias,
                                    gates + b * G + j0, k0, k1); break;
            case 3: ptc_lstmz_tile3(H, m, Pq, hp + b * H, gi + b * G + j0, bias,
                                    gates + b * G + j0, k0, k1); break;
            case 2: ptc_lstmz_tile2(H, m, Pq, hp + b * H, gi + b * G + j0, bias,
                                    gates + b * G + j0, k0, k1); break;
            case 1: ptc_lstmz_tile1(H, m, Pq, hp + b * H, gi + b * G + j0, bias,
                                    gates + b * G + j0, k0, k1); break;
            default: break; }
        }
    }
    if (q1 > q0)
        ptc_lstm_fwd_gates(B, H, 16 * q0, 16 * q1 < H ? 16 * q1 : H, gates, cp, c, h);
}

/* the forward's lane width on this CPU: 16 (AVX-512F, the gate-level knob at
   2) or 8; the panels (ptc_rnn_pack_fwd_lanes_f32) and ptc_lstm_step_lanes
   take the same value */
static int ptc_lstm_fwd_lanes(void)
{
    static int cpu = -1;
    if (cpu < 0) { __builtin_cpu_init(); cpu = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : 1; }
    return cpu == 2 && ptc_rnn_gates_max >= 2 ? 16 : 8;
}

/* one LSTM step on L-lane panels, blocks [q0, q1) of L units */
static void ptc_lstm_step_lanes(
    int L, ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H, const float* P,
    const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{
    if (L == 16) ptc_lstm_step_f32_avx512(q0, q1, B, H, P, hp, gi, bhh, cp, gates, c, h);
    else ptc_lstm_step_f32(q0, q1, B, H, P, hp, gi, bhh, cp, gates, c, h);
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
            ptc_v8sf a = PTC_RV_BCAST(dG + r * N + k);                              \
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
   (16 each), Q from ptc_rnn_pack_bwd_lanes_f32 (L 16); accum: add to dh's values.  The
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

/* The AVX-512F backward step: R (<= 8) batch rows x 32 columns of
   dh (+)= dG @ W per register tile (16 zmm accumulators; per n, 2 weight
   loads and R broadcasts feed 2R 16-lane FMAs) on 32-column panels
   (ptc_rnn_pack_bwd_lanes_f32 with L = 32), the last columns under lane
   masks.  The same chains as the 16-column kernel: the same bits. */
#define PTC_RBWDZ_TILE(R)                                                           \
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void               \
ptc_rbwdz_tile##R(ptrdiff_t K, ptrdiff_t N, ptrdiff_t H, __mmask16 m0, __mmask16 m1, \
                  const float* Qp, const float* dG, float* dh, int accum) {         \
    __m512 x[R], y[R];                                                              \
    ptrdiff_t k;                                                                    \
    for (int r = 0; r < R; r++) {                                                   \
        x[r] = accum ? _mm512_maskz_loadu_ps(m0, dh + r * H) : _mm512_setzero_ps(); \
        y[r] = accum ? _mm512_maskz_loadu_ps(m1, dh + r * H + 16) : _mm512_setzero_ps(); } \
    for (k = 0; k < K; k++) {                                                       \
        __m512 w0 = _mm512_loadu_ps(Qp + k * 32), w1 = _mm512_loadu_ps(Qp + k * 32 + 16); \
        for (int r = 0; r < R; r++) {                                               \
            __m512 a = _mm512_set1_ps(dG[r * N + k]);                               \
            x[r] = _mm512_fmadd_ps(a, w0, x[r]); y[r] = _mm512_fmadd_ps(a, w1, y[r]); } } \
    for (int r = 0; r < R; r++) {                                                   \
        _mm512_mask_storeu_ps(dh + r * H, m0, x[r]);                                \
        _mm512_mask_storeu_ps(dh + r * H + 16, m1, y[r]); }                         \
}
PTC_RBWDZ_TILE(8) PTC_RBWDZ_TILE(7) PTC_RBWDZ_TILE(6) PTC_RBWDZ_TILE(5)
PTC_RBWDZ_TILE(4) PTC_RBWDZ_TILE(3) PTC_RBWDZ_TILE(2) PTC_RBWDZ_TILE(1)

#define PTC_RBWDZ_KC 128    /* a panel's chunk: 128 n x 32 floats = 16 KiB */
__attribute__((target("avx512f,avx512vl"))) static void ptc_rnn_bwd_step_f32_avx512(
    ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N, ptrdiff_t H, const float* Q,
    const float* dG, float* dh, int accum)
{
    ptrdiff_t p, b, k0, K;
    for (p = p0; p < p1; p++) {
        ptrdiff_t j0 = 32 * p;
        int n = H - j0 < 32 ? (int)(H - j0) : 32;
        __mmask16 m0 = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
        __mmask16 m1 = (__mmask16)(n >= 32 ? 0xFFFFu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
        for (k0 = 0; k0 < N; k0 += PTC_RBWDZ_KC) {
            const float* Qp = Q + (p * N + k0) * 32;
            const float* g = dG + k0;
            int acc = accum || k0 > 0;
            K = N - k0 < PTC_RBWDZ_KC ? N - k0 : PTC_RBWDZ_KC;
            for (b = 0; b + 8 <= B; b += 8)
                ptc_rbwdz_tile8(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc);
            switch (B - b) {
            case 7: ptc_rbwdz_tile7(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 6: ptc_rbwdz_tile6(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 5: ptc_rbwdz_tile5(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 4: ptc_rbwdz_tile4(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 3: ptc_rbwdz_tile3(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 2: ptc_rbwdz_tile2(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            case 1: ptc_rbwdz_tile1(K, N, H, m0, m1, Qp, g + b * N, dh + b * H + j0, acc); break;
            default: break; }
        }
    }
}

/* the backward's panel width on this CPU: 32 (AVX-512F, the gate-level knob
   at 2) or 16; ptc_rnn_pack_bwd_lanes_f32 and ptc_rnn_bwd_step_lanes take it */
static int ptc_rnn_bwd_lanes(void)
{
    return ptc_lstm_fwd_lanes() == 16 ? 32 : 16;
}

static void ptc_rnn_bwd_step_lanes(int L, ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N,
                                   ptrdiff_t H, const float* Q, const float* dG, float* dh,
                                   int accum)
{
    if (L == 32) ptc_rnn_bwd_step_f32_avx512(p0, p1, B, N, H, Q, dG, dh, accum);
    else ptc_rnn_bwd_step_f32(p0, p1, B, N, H, Q, dG, dh, accum);
}

/* 6 rows x 16 columns of C (+)= A^T B over kc packed rows: Ap [kc][6],
   Bp [kc][16]; only the first R rows and n columns are read or written
   (the rows unrolled by hand: GCC keeps indexed accumulator arrays on the
   stack when the row count is not a constant). */
#define PTC_TN_INIT(r)                                                              \
    ptc_v8sf x##r = {0}, y##r = {0};                                                \
    if (acc && R > r) {                                                             \
        if (n == 16) { memcpy(&x##r, C + r * ldc, 32); memcpy(&y##r, C + r * ldc + 8, 32); } \
        else if (n > 8) { memcpy(&x##r, C + r * ldc, 32);                           \
                          y##r = ptc_rv_load(C + r * ldc + 8, n - 8); }             \
        else x##r = ptc_rv_load(C + r * ldc, n); }
#define PTC_TN_FMA(r)                                                               \
    { ptc_v8sf a = PTC_RV_BCAST(Ap + k * 6 + r);                                    \
      x##r = PTC_RV_FMA(a, w0, x##r); y##r = PTC_RV_FMA(a, w1, y##r); }
#define PTC_TN_STORE(r)                                                             \
    if (R > r) {                                                                    \
        if (n == 16) { memcpy(C + r * ldc, &x##r, 32); memcpy(C + r * ldc + 8, &y##r, 32); } \
        else if (n > 8) { memcpy(C + r * ldc, &x##r, 32);                           \
                          ptc_rv_store(C + r * ldc + 8, y##r, n - 8); }             \
        else ptc_rv_store(C + r * ldc, x##r, n); }
__attribute__((target("avx2,fma"))) static inline void ptc_tn_tile(
    ptrdiff_t kc, const float* Ap, const float* Bp, float* C, ptrdiff_t ldc, int R, int n,
    int acc)
{
    ptrdiff_t k;
    PTC_TN_INIT(0) PTC_TN_INIT(1) PTC_TN_INIT(2) PTC_TN_INIT(3) PTC_TN_INIT(4) PTC_TN_INIT(5)
    for (k = 0; k < kc; k++) {
        ptc_v8sf w0, w1;
        memcpy(&w0, Bp + k * 16, 32);
        memcpy(&w1, Bp + k * 16 + 8, 32);
        PTC_TN_FMA(0) PTC_TN_FMA(1) PTC_TN_FMA(2) PTC_TN_FMA(3) PTC_TN_FMA(4) PTC_TN_FMA(5)
    }
    PTC_TN_STORE(0) PTC_TN_STORE(1) PTC_TN_STORE(2) PTC_TN_STORE(3) PTC_TN_STORE(4)
    PTC_TN_STORE(5)
}

/* Rows [m0, m1) of C (M, N) (+)= A^T B with A (K, M) and B (K, N) row-major
   (leading dimensions lda, ldb, ldc): a weight gradient, the sum over K
   (time steps x batch rows) in PTC_TN_KC-row blocks that are packed first
   (Ap: PTC_TN_KC * 6 floats, Bp: PTC_TN_KC * 16 * ceil(N / 16) floats of
   scratch).  Each element is one FMA chain over k in increasing order,
   continued through C between blocks (accum: from C's values), so neither the
   blocks nor the row range a thread takes change a bit. */
#define PTC_TN_KC 192
__attribute__((target("avx2,fma"))) static void ptc_sgemm_tn_rows(
    ptrdiff_t m0, ptrdiff_t m1, ptrdiff_t N, ptrdiff_t K, const float* A, ptrdiff_t lda,
    const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc, int accum, float* Ap, float* Bp)
{
    ptrdiff_t npan = (N + 15) / 16, k0, kc, kk, p, i0, j;
    for (k0 = 0; k0 < K; k0 += PTC_TN_KC) {
        kc = K - k0 < PTC_TN_KC ? K - k0 : PTC_TN_KC;
        for (p = 0; p < npan; p++) {
            float* dst = Bp + p * kc * 16;
            int n = N - 16 * p < 16 ? (int)(N - 16 * p) : 16;
            for (kk = 0; kk < kc; kk++) {
                const float* src = B + (k0 + kk) * ldb + 16 * p;
                for (j = 0; j < n; j++) dst[kk * 16 + j] = src[j];
                for (; j < 16; j++) dst[kk * 16 + j] = 0.0f;
            }
        }
        for (i0 = m0; i0 < m1; i0 += 6) {
            int R = m1 - i0 < 6 ? (int)(m1 - i0) : 6, r;
            for (kk = 0; kk < kc; kk++) {
                const float* src = A + (k0 + kk) * lda + i0;
                for (r = 0; r < R; r++) Ap[kk * 6 + r] = src[r];
                for (; r < 6; r++) Ap[kk * 6 + r] = 0.0f;
            }
            for (p = 0; p < npan; p++) {
                int n = N - 16 * p < 16 ? (int)(N - 16 * p) : 16;
                ptc_tn_tile(kc, Ap, Bp + p * kc * 16, C + i0 * ldc + 16 * p, ldc, R, n,
                            accum || k0 > 0);
            }
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
/* The weight-gradient kernel (one large product, no per-step re-packing to
   save) is only used where it was measured to beat the BLAS: AVX2 CPUs
   without AVX-512 (there OpenBLAS's 16-wide kernels are likely faster than
   these 8-wide tiles; not measured). */
static int ptc_rnn_tn_ok(void)
{
    static int ok = -1;
    if (ok < 0) { __builtin_cpu_init();
                  ok = ptc_rnn_packed_ok() && !(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")); }
    return ok;
}
#else
#define PTC_RNN_HAVE_AVX2 0
static void ptc_lstm_step_f32(ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H,
    const float* P, const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{ (void)q0; (void)q1; (void)B; (void)H; (void)P; (void)hp; (void)gi; (void)bhh; (void)cp;
  (void)gates; (void)c; (void)h; }
static int ptc_lstm_fwd_lanes(void) { return 8; }
static void ptc_lstm_step_lanes(int L, ptrdiff_t q0, ptrdiff_t q1, ptrdiff_t B, ptrdiff_t H,
    const float* P, const float* hp, const float* gi, const float* bhh, const float* cp,
    float* gates, float* c, float* h)
{ (void)L; ptc_lstm_step_f32(q0, q1, B, H, P, hp, gi, bhh, cp, gates, c, h); }
static void ptc_rnn_bwd_step_f32(ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N,
    ptrdiff_t H, const float* Q, const float* dG, float* dh, int accum)
{ (void)p0; (void)p1; (void)B; (void)N; (void)H; (void)Q; (void)dG; (void)dh; (void)accum; }
static int ptc_rnn_bwd_lanes(void) { return 16; }
static void ptc_rnn_bwd_step_lanes(int L, ptrdiff_t p0, ptrdiff_t p1, ptrdiff_t B, ptrdiff_t N,
    ptrdiff_t H, const float* Q, const float* dG, float* dh, int accum)
{ (void)L; ptc_rnn_bwd_step_f32(p0, p1, B, N, H, Q, dG, dh, accum); }
#define PTC_TN_KC 192
static void ptc_sgemm_tn_rows(ptrdiff_t m0, ptrdiff_t m1, ptrdiff_t N, ptrdiff_t K,
    const float* A, ptrdiff_t lda, const float* B, ptrdiff_t ldb, float* C, ptrdiff_t ldc,
    int accum, float* Ap, float* Bp)
{ (void)m0; (void)m1; (void)N; (void)K; (void)A; (void)lda; (void)B; (void)ldb; (void)C;
  (void)ldc; (void)accum; (void)Ap; (void)Bp; }
static int ptc_rnn_packed_ok(void) { return 0; }
static int ptc_rnn_tn_ok(void) { return 0; }
#endif
#endif
