/* The LSTM backward's per-step gate gradients on float32 rows, vectorised.
 *
 * _rnn.pyx's _lstm_bwd_gates computes, per batch row and hidden unit j, the
 * pre-activation gradients of the four gates from dh (+ the output gradient)
 * and dc; as a Cython loop over possibly aliasing pointers it ran 4 floats
 * at a time (a sixth of an LSTM language model's backward).  Here the same
 * formulas run on 16 (AVX-512F) or 8 (AVX2) floats, all in float32 as
 * PyTorch computes them (the Cython loop took its (1 - x) factors in double,
 * a side effect of Cython's 1.0 literals: results then differ in the last
 * bit); no multiply-add contraction (ISO C mode), so every ISA and the scalar
 * tail give the same bits. */
#ifndef PTC_RNN_GATES_H
#define PTC_RNN_GATES_H

#include <stddef.h>
#include <string.h>

#define PTC_LSTM_BWD_GATES_BODY(VF, W)                                            \
    ptrdiff_t j = 0;                                                             \
    for (; j + (W) <= H; j += (W)) {                                             \
        VF ig, fg, gg, og, tc, dhv, dov, dcv, cpv, t;                            \
        memcpy(&ig, row + j, sizeof ig);                                          \
        memcpy(&fg, row + H + j, sizeof fg);                                      \
        memcpy(&gg, row + 2 * H + j, sizeof gg);                                  \
        memcpy(&og, row + 3 * H + j, sizeof og);                                  \
        memcpy(&tc, tanh_c + j, sizeof tc);                                       \
        memcpy(&dhv, dh + j, sizeof dhv);                                         \
        memcpy(&dov, dout + j, sizeof dov);                                       \
        memcpy(&dcv, dc + j, sizeof dcv);                                         \
        memcpy(&cpv, cp + j, sizeof cpv);                                         \
        dhv = dhv + dov;                                                          \
        dcv = dcv + dhv * og * (1.0f - tc * tc);                                  \
        t = dcv * gg * ig * (1.0f - ig);      memcpy(drow + j, &t, sizeof t);      \
        t = dcv * cpv * fg * (1.0f - fg);     memcpy(drow + H + j, &t, sizeof t);  \
        t = dcv * ig * (1.0f - gg * gg);      memcpy(drow + 2 * H + j, &t, sizeof t); \
        t = dhv * tc * og * (1.0f - og);      memcpy(drow + 3 * H + j, &t, sizeof t); \
        t = dcv * fg;                         memcpy(dc + j, &t, sizeof t);        \
    }                                                                            \
    for (; j < H; j++) {                                                         \
        float ig = row[j], fg = row[H + j], gg = row[2 * H + j], og = row[3 * H + j]; \
        float tc = tanh_c[j], dhj = dh[j] + dout[j];                             \
        float dcj = dc[j] + dhj * og * (1 - tc * tc);                            \
        drow[j] = dcj * gg * ig * (1 - ig);                                      \
        drow[H + j] = dcj * cp[j] * fg * (1 - fg);                               \
        drow[2 * H + j] = dcj * ig * (1 - gg * gg);                              \
        drow[3 * H + j] = dhj * tc * og * (1 - og);                              \
        dc[j] = dcj * fg;                                                        \
    }

/* one batch row: row/drow the 4H gates and their gradients, tanh_c = tanh(c[t]),
   dh/dout/dc/cp the row's H values (dc updated to the gradient of c[t-1]) */
#define PTC_LSTM_BWD_GATES_ARGS                                                  \
    const float* row, float* drow, const float* tanh_c, const float* dh,          \
    const float* dout, float* dc, const float* cp, ptrdiff_t H

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
typedef float ptc_rg_v16 __attribute__((vector_size(64)));
typedef float ptc_rg_v8 __attribute__((vector_size(32)));

__attribute__((target("avx512f,avx512vl"))) static void
ptc_lstm_bwd_gates_f32_avx512(PTC_LSTM_BWD_GATES_ARGS) { PTC_LSTM_BWD_GATES_BODY(ptc_rg_v16, 16) }

__attribute__((target("avx2"))) static void
ptc_lstm_bwd_gates_f32_avx2(PTC_LSTM_BWD_GATES_ARGS) { PTC_LSTM_BWD_GATES_BODY(ptc_rg_v8, 8) }

static void ptc_lstm_bwd_gates_f32_base(PTC_LSTM_BWD_GATES_ARGS) { PTC_LSTM_BWD_GATES_BODY(ptc_rg_v8, 8) }

static int ptc_rnn_gates_max = 2;    /* a testing knob: the highest level used */

static void ptc_lstm_bwd_gates_f32(PTC_LSTM_BWD_GATES_ARGS) {
    static int cpu = -1;
    int level;
    if (cpu < 0) {
        __builtin_cpu_init();
        cpu = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    level = cpu < ptc_rnn_gates_max ? cpu : ptc_rnn_gates_max;
    if (level == 2) ptc_lstm_bwd_gates_f32_avx512(row, drow, tanh_c, dh, dout, dc, cp, H);
    else if (level == 1) ptc_lstm_bwd_gates_f32_avx2(row, drow, tanh_c, dh, dout, dc, cp, H);
    else ptc_lstm_bwd_gates_f32_base(row, drow, tanh_c, dh, dout, dc, cp, H);
}
#else
static int ptc_rnn_gates_max = 0;
static void ptc_lstm_bwd_gates_f32(PTC_LSTM_BWD_GATES_ARGS) {
    ptrdiff_t j = 0;
    for (; j < H; j++) {
        float ig = row[j], fg = row[H + j], gg = row[2 * H + j], og = row[3 * H + j];
        float tc = tanh_c[j], dhj = dh[j] + dout[j];
        float dcj = dc[j] + dhj * og * (1 - tc * tc);
        drow[j] = dcj * gg * ig * (1 - ig);
        drow[H + j] = dcj * cp[j] * fg * (1 - fg);
        drow[2 * H + j] = dcj * ig * (1 - gg * gg);
        drow[3 * H + j] = dhj * tc * og * (1 - og);
        dc[j] = dcj * fg;
    }
}
#endif

#endif
