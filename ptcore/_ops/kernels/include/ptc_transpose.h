/* Transposed copies of 4- and 8-byte elements by in-register block
 * transposes: d[i * ds0 + j * isz] = s[i * isz + j * ss1] for i < n0, j < n1
 * (the destination's rows run along the source's contiguous dim).
 *
 * The element loop of the strided copy reads one value from each of n1
 * source rows per destination row; here 8 source rows of 8 floats (4 rows of
 * 4 doubles) are loaded as 256-bit vectors, transposed by unpack / shuffle /
 * 128-bit-lane permutes (three stages; two for doubles) and stored as 8 (4)
 * destination rows.  Only bits move, so every copy gives the same result; on
 * x86-64 the vector copy runs where the CPU has AVX2 (ptc_vec_level(),
 * ATEN_CPU_CAPABILITY respected), the element loop elsewhere and for the
 * edges of a block. */
#ifndef PTC_TRANSPOSE_H
#define PTC_TRANSPOSE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, PTC_TGT, ptc_vec_level */

#define PTC_TR_ELEMS(T, i0, i1, j0, j1)                                          \
    for (ptrdiff_t i = (i0); i < (i1); i++) {                                   \
        T* dr_ = (T*)(d + i * ds0);                                             \
        const char* sr_ = s + i * (ptrdiff_t)sizeof(T);                         \
        for (ptrdiff_t j = (j0); j < (j1); j++)                                 \
            memcpy(&dr_[j], sr_ + j * ss1, sizeof(T)); }

static void ptc_transpose_elems4(char* d, const char* s, ptrdiff_t n0, ptrdiff_t n1,
                                 ptrdiff_t ds0, ptrdiff_t ss1)
{
    PTC_TR_ELEMS(uint32_t, 0, n0, 0, n1)
}

static void ptc_transpose_elems8(char* d, const char* s, ptrdiff_t n0, ptrdiff_t n1,
                                 ptrdiff_t ds0, ptrdiff_t ss1)
{
    PTC_TR_ELEMS(uint64_t, 0, n0, 0, n1)
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
typedef uint32_t ptc_tr_v8u __attribute__((vector_size(32)));
typedef uint64_t ptc_tr_v4q __attribute__((vector_size(32)));
/* unaligned 32-byte moves (named values, not arrays: a block's rows in an
   array went through the stack in 16-byte halves, a store-forwarding stall
   per row) */
typedef uint32_t ptc_tr_v8u_u __attribute__((vector_size(32), aligned(1)));
typedef uint64_t ptc_tr_v4q_u __attribute__((vector_size(32), aligned(1)));
#define PTC_TR_LD8(p) (*(const ptc_tr_v8u_u*)(const void*)(p))
#define PTC_TR_ST8(p, v) (*(ptc_tr_v8u_u*)(void*)(p) = (v))
#define PTC_TR_LD4(p) (*(const ptc_tr_v4q_u*)(const void*)(p))
#define PTC_TR_ST4(p, v) (*(ptc_tr_v4q_u*)(void*)(p) = (v))
#define PTC_TR_UNLO8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){0, 8, 1, 9, 4, 12, 5, 13})
#define PTC_TR_UNHI8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){2, 10, 3, 11, 6, 14, 7, 15})
#define PTC_TR_PLO8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){0, 1, 8, 9, 4, 5, 12, 13})
#define PTC_TR_PHI8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){2, 3, 10, 11, 6, 7, 14, 15})
#define PTC_TR_LLO8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){0, 1, 2, 3, 8, 9, 10, 11})
#define PTC_TR_LHI8(a, b) __builtin_shuffle(a, b, (ptc_tr_v8u){4, 5, 6, 7, 12, 13, 14, 15})

PTC_TGT("avx2") static void ptc_transpose4_avx2(char* d, const char* s, ptrdiff_t n0,
                                                ptrdiff_t n1, ptrdiff_t ds0, ptrdiff_t ss1)
{
    const ptrdiff_t nb = n0 & ~(ptrdiff_t)7, mb = n1 & ~(ptrdiff_t)7;
    for (ptrdiff_t i0 = 0; i0 < nb; i0 += 8) {
        for (ptrdiff_t j0 = 0; j0 < mb; j0 += 8) {
            const char* sc = s + j0 * ss1 + i0 * 4;
            char* dc = d + j0 * 4 + i0 * ds0;
            const ptc_tr_v8u r0 = PTC_TR_LD8(sc), r1 = PTC_TR_LD8(sc + ss1),
                r2 = PTC_TR_LD8(sc + 2 * ss1), r3 = PTC_TR_LD8(sc + 3 * ss1),
                r4 = PTC_TR_LD8(sc + 4 * ss1), r5 = PTC_TR_LD8(sc + 5 * ss1),
                r6 = PTC_TR_LD8(sc + 6 * ss1), r7 = PTC_TR_LD8(sc + 7 * ss1);
            const ptc_tr_v8u t0 = PTC_TR_UNLO8(r0, r1), t1 = PTC_TR_UNHI8(r0, r1),
                t2 = PTC_TR_UNLO8(r2, r3), t3 = PTC_TR_UNHI8(r2, r3),
                t4 = PTC_TR_UNLO8(r4, r5), t5 = PTC_TR_UNHI8(r4, r5),
                t6 = PTC_TR_UNLO8(r6, r7), t7 = PTC_TR_UNHI8(r6, r7);
            const ptc_tr_v8u u0 = PTC_TR_PLO8(t0, t2), u1 = PTC_TR_PHI8(t0, t2),
                u2 = PTC_TR_PLO8(t1, t3), u3 = PTC_TR_PHI8(t1, t3),
                u4 = PTC_TR_PLO8(t4, t6), u5 = PTC_TR_PHI8(t4, t6),
                u6 = PTC_TR_PLO8(t5, t7), u7 = PTC_TR_PHI8(t5, t7);
            PTC_TR_ST8(dc, PTC_TR_LLO8(u0, u4));
            PTC_TR_ST8(dc + ds0, PTC_TR_LLO8(u1, u5));
            PTC_TR_ST8(dc + 2 * ds0, PTC_TR_LLO8(u2, u6));
            PTC_TR_ST8(dc + 3 * ds0, PTC_TR_LLO8(u3, u7));
            PTC_TR_ST8(dc + 4 * ds0, PTC_TR_LHI8(u0, u4));
            PTC_TR_ST8(dc + 5 * ds0, PTC_TR_LHI8(u1, u5));
            PTC_TR_ST8(dc + 6 * ds0, PTC_TR_LHI8(u2, u6));
            PTC_TR_ST8(dc + 7 * ds0, PTC_TR_LHI8(u3, u7));
        }
    }
    PTC_TR_ELEMS(uint32_t, nb, n0, 0, mb)
    PTC_TR_ELEMS(uint32_t, 0, n0, mb, n1)
}

PTC_TGT("avx2") static void ptc_transpose8_avx2(char* d, const char* s, ptrdiff_t n0,
                                                ptrdiff_t n1, ptrdiff_t ds0, ptrdiff_t ss1)
{
    const ptrdiff_t nb = n0 & ~(ptrdiff_t)3, mb = n1 & ~(ptrdiff_t)3;
    /* the blocks of destination rows in the outer loop (in both kernels): a
       tile's columns fill a destination row's bytes together (with the blocks
       of columns outside, a power-of-two row stride evicts half-written
       lines) */
    for (ptrdiff_t i0 = 0; i0 < nb; i0 += 4) {
        for (ptrdiff_t j0 = 0; j0 < mb; j0 += 4) {
            const char* sc = s + j0 * ss1 + i0 * 8;
            char* dc = d + j0 * 8 + i0 * ds0;
            const ptc_tr_v4q r0 = PTC_TR_LD4(sc), r1 = PTC_TR_LD4(sc + ss1),
                r2 = PTC_TR_LD4(sc + 2 * ss1), r3 = PTC_TR_LD4(sc + 3 * ss1);
            const ptc_tr_v4q t0 = __builtin_shuffle(r0, r1, (ptc_tr_v4q){0, 4, 2, 6}),
                t1 = __builtin_shuffle(r0, r1, (ptc_tr_v4q){1, 5, 3, 7}),
                t2 = __builtin_shuffle(r2, r3, (ptc_tr_v4q){0, 4, 2, 6}),
                t3 = __builtin_shuffle(r2, r3, (ptc_tr_v4q){1, 5, 3, 7});
            PTC_TR_ST4(dc, __builtin_shuffle(t0, t2, (ptc_tr_v4q){0, 1, 4, 5}));
            PTC_TR_ST4(dc + ds0, __builtin_shuffle(t1, t3, (ptc_tr_v4q){0, 1, 4, 5}));
            PTC_TR_ST4(dc + 2 * ds0, __builtin_shuffle(t0, t2, (ptc_tr_v4q){2, 3, 6, 7}));
            PTC_TR_ST4(dc + 3 * ds0, __builtin_shuffle(t1, t3, (ptc_tr_v4q){2, 3, 6, 7}));
        }
    }
    PTC_TR_ELEMS(uint64_t, nb, n0, 0, mb)
    PTC_TR_ELEMS(uint64_t, 0, n0, mb, n1)
}
#endif

/* whether ptc_transpose runs the block transposes (the copy's planner then
   cuts its tiles for them) */
static int ptc_transpose_vectorised(void)
{
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
    return ptc_vec_level() >= 1;
#else
    return 0;
#endif
}

/* isz 4 or 8 */
static void ptc_transpose(char* d, const char* s, ptrdiff_t n0, ptrdiff_t n1,
                          ptrdiff_t ds0, ptrdiff_t ss1, int isz)
{
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
    if (ptc_vec_level() >= 1) {
        if (isz == 4) ptc_transpose4_avx2(d, s, n0, n1, ds0, ss1);
        else ptc_transpose8_avx2(d, s, n0, n1, ds0, ss1);
        return;
    }
#endif
    if (isz == 4) ptc_transpose_elems4(d, s, n0, n1, ds0, ss1);
    else ptc_transpose_elems8(d, s, n0, n1, ds0, ss1);
}
#endif
