/* bfloat16 matrix products with the AVX512-BF16 dot-product instruction.
 *
 * PyTorch multiplies bfloat16 matrices on the CPU through oneDNN, whose
 * kernels use VDPBF16PS where the CPU has it (Intel Cooper Lake and Sapphire
 * Rapids, AMD Zen 4 and Zen 5): sixteen lanes each adding two bfloat16
 * products to a float32 sum, twice the multiply-adds of a float32 FMA.
 * ptcore widened both operands to float32 and ran its float32 GEMM: a (512,
 * 512) product took 2.4-2.6x torch's time on Zen 5.  This is a packed GEMM
 * in the BLIS style around a 12 x 32 micro-kernel of that instruction:
 *
 *   A is packed in panels of MR = 12 rows, each k-pair of a row one 32-bit
 *   word (its k-th value in the low half), B in panels of NR = 32 columns
 *   laid out the same way, zero-padded (rows, columns and an odd k); each
 *   step of the kernel broadcasts a row's pair and adds both products into
 *   the row's two accumulators.  The float32 sums of a KC block are added
 *   to a float32 buffer of the result; the last block's adds the earlier
 *   ones and the optional float32 term (addmm's bias) and rounds the tile to
 *   bfloat16 in the kernel (round to nearest even, NaN 0xffff, as the
 *   elementwise conversions).
 *
 * Summation (the instruction's): per lane acc += a_odd b_odd, then
 * acc += a_even b_even, each one rounding of an exact product (DAZ/FTZ:
 * bfloat16 subnormal inputs count as zero, subnormal sums flush, as in
 * oneDNN's kernels); each element's k-blocks in order, so the result does
 * not depend on the element's position, on m or n, or on the column range
 * a thread computes.
 *
 * ptc_bgemm_isa() is 1 where the CPU has AVX512-BF16 (and ATEN_CPU_CAPABILITY
 * leaves the AVX-512 copies on), else 0: the caller then computes in
 * float32.  ptc_bgemm() returns 0, or -1 when its buffers cannot be
 * allocated (nothing written). */
#ifndef PTC_BGEMM_H
#define PTC_BGEMM_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ptc_half_rows.h"     /* ptc_float_to_bf16_rows, ptc_vec_level */
#include "ptc_scratch.h"
#include "ptc_transpose.h"      /* ptc_transpose: a Linear weight's panels */

#define PTC_BG_MR 12
#define PTC_BG_NR 32
#define PTC_BG_KC 512          /* k per block (even) */
#define PTC_BG_MC 240          /* rows per packed A block (a multiple of MR) */
#define PTC_BG_NC 1024         /* columns per packed B block (a multiple of NR) */

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#define PTC_BG_TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

static int ptc_bgemm_forced = -1;
static int ptc_bgemm_direct_on = 1;    /* A's k-contiguous rows read in place */

/* tests and benchmarks: 0 packs every A panel, 1 reads k-contiguous rows in
 * place (the default; the same bits); returns the previous mode */
static int ptc_bgemm_set_direct(int on)
{
    int was = ptc_bgemm_direct_on;
    ptc_bgemm_direct_on = on != 0;
    return was;
}

static int ptc_bgemm_isa(void)
{
    static int isa = -1;
    if (ptc_bgemm_forced >= 0) return ptc_bgemm_forced;
    if (isa < 0) {
        __builtin_cpu_init();
        isa = ptc_vec_level() == 2 && __builtin_cpu_supports("avx512bw")
              && __builtin_cpu_supports("avx512bf16");
    }
    return isa;
}

/* tests: 0 off (float32 products), -1 the CPU's; returns the one in effect */
static int ptc_bgemm_force_isa(int isa)
{
    ptc_bgemm_forced = -1;
    if (isa == 0) ptc_bgemm_forced = 0;
    return ptc_bgemm_isa();
}

static inline uint32_t ptc_bg_pair(uint16_t lo, uint16_t hi)
{
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

/* A rows [i0, i0 + mc) x k [k0, k0 + kc) into panels of MR rows: panel p,
 * pair q, row r at dst[(p * kp + q) * MR + r], kp = (kc + 1) / 2 */
PTC_BG_TGT static void ptc_bg_pack_a(const uint16_t* a, ptrdiff_t sa0, ptrdiff_t sa1, ptrdiff_t m,
                                     ptrdiff_t i0, ptrdiff_t mc, ptrdiff_t k0, ptrdiff_t kc,
                                     uint32_t* dst)
{
    const ptrdiff_t kp = (kc + 1) / 2;
    for (ptrdiff_t p = 0; p * PTC_BG_MR < mc; p++) {
        uint32_t* d = dst + p * kp * PTC_BG_MR;
        if (sa0 == 1 && sa1 != 1) {
            /* rows contiguous (a transposed operand: the gradient's g^T of a
             * weight's gradient): a pair of k rows of MR elements, widened and
             * interleaved in registers, rather than a column walk per row */
            ptrdiff_t rv = mc - p * PTC_BG_MR;
            if (rv > m - i0 - p * PTC_BG_MR) rv = m - i0 - p * PTC_BG_MR;
            if (rv > PTC_BG_MR) rv = PTC_BG_MR;
            const __mmask16 rm = (__mmask16)((1u << (rv > 0 ? rv : 0)) - 1);
            const uint16_t* col = a + (i0 + p * PTC_BG_MR) + k0 * sa1;
            for (ptrdiff_t q = 0; q < kp; q++) {
                const __m256i x = _mm256_maskz_loadu_epi16(rm, col + 2 * q * sa1);
                const __m256i y = 2 * q + 1 < kc ? _mm256_maskz_loadu_epi16(rm, col + (2 * q + 1) * sa1)
                                                 : _mm256_setzero_si256();
                const __m512i w = _mm512_or_si512(_mm512_cvtepu16_epi32(x),
                                                  _mm512_slli_epi32(_mm512_cvtepu16_epi32(y), 16));
                _mm512_mask_storeu_epi32((void*)(d + q * PTC_BG_MR), (__mmask16)0x0fff, w);
            }
            continue;
        }
        for (int r = 0; r < PTC_BG_MR; r++) {
            const ptrdiff_t i = i0 + p * PTC_BG_MR + r;
            if (i >= m || p * PTC_BG_MR + r >= mc) {
                for (ptrdiff_t q = 0; q < kp; q++) d[q * PTC_BG_MR + r] = 0;
                continue;
            }
            const uint16_t* row = a + i * sa0 + k0 * sa1;
            ptrdiff_t q = 0;
            if (sa1 == 1) {
                for (; 2 * q + 1 < kc; q++) {
                    uint32_t w;
                    memcpy(&w, row + 2 * q, 4);
                    d[q * PTC_BG_MR + r] = w;
                }
            } else {
                for (; 2 * q + 1 < kc; q++)
                    d[q * PTC_BG_MR + r] = ptc_bg_pair(row[2 * q * sa1], row[(2 * q + 1) * sa1]);
            }
            if (q < kp) d[q * PTC_BG_MR + r] = ptc_bg_pair(row[2 * q * sa1], 0);
        }
    }
}

/* B k [k0, k0 + kc) x columns [j0, j0 + nc) into panels of NR columns: panel
 * p, pair q, column c at dst[(p * kp + q) * NR + c] */
PTC_BG_TGT static void ptc_bg_pack_b(const uint16_t* b, ptrdiff_t sb0, ptrdiff_t sb1, ptrdiff_t n,
                                     ptrdiff_t k0, ptrdiff_t kc, ptrdiff_t j0, ptrdiff_t nc,
                                     uint32_t* dst)
{
    const ptrdiff_t kp = (kc + 1) / 2;
    /* word 2t of the low half is row k's column t, word 2t + 1 row k + 1's */
    static const uint16_t lo_idx[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                        8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    static const uint16_t hi_idx[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54,
                                        23, 55, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61,
                                        30, 62, 31, 63};
    const __m512i vlo = _mm512_loadu_si512((const void*)lo_idx);
    const __m512i vhi = _mm512_loadu_si512((const void*)hi_idx);
    /* k contiguous (a Linear's weight, B = W^T): a column's pair is one 32-bit
     * word, sixteen columns' words one gather (offsets in bfloat16 units); a
     * full panel's complete pairs are a transpose of 32-bit words (column c's
     * pairs contiguous in W's row c), done by ptc_transpose's 8 x 8 blocks
     * where it has them: gathers are microcoded on AMD's Zen (packing took
     * longer than the products in a bfloat16 transformer's forward) */
    const int gather = sb0 == 1 && sb1 > 0 && sb1 <= (ptrdiff_t)(0x7fffffff / 2 / PTC_BG_NR);
    const int transposed = gather && ptc_transpose_vectorised();
    const __m512i goff = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(gather ? (int)sb1 : 0));
    const __m512i goff16 = _mm512_add_epi32(goff, _mm512_set1_epi32(gather ? (int)(16 * sb1) : 0));
    for (ptrdiff_t p = 0; p * PTC_BG_NR < nc; p++) {
        uint32_t* d = dst + p * kp * PTC_BG_NR;
        const ptrdiff_t jb = j0 + p * PTC_BG_NR;
        ptrdiff_t width = n - jb;
        if (width > PTC_BG_NR) width = PTC_BG_NR;
        if (width > nc - p * PTC_BG_NR) width = nc - p * PTC_BG_NR;
        ptrdiff_t q0 = 0;
        if (transposed && width == PTC_BG_NR) {
            /* dst word (q, c) = W's row jb + c, word q from k0 */
            q0 = kc / 2;
            ptc_transpose((char*)d, (const char*)(b + k0 + jb * sb1), q0, PTC_BG_NR,
                          PTC_BG_NR * 4, sb1 * 2, 4);
        }
        for (ptrdiff_t q = q0; q < kp; q++) {
            const uint16_t* r0 = b + (k0 + 2 * q) * sb0 + jb * sb1;
            const int two = 2 * q + 1 < kc;
            uint32_t* dq = d + q * PTC_BG_NR;
            if (gather && width == PTC_BG_NR && two) {
                _mm512_storeu_si512((void*)dq, _mm512_i32gather_epi32(goff, (const void*)r0, 2));
                _mm512_storeu_si512((void*)(dq + 16),
                                    _mm512_i32gather_epi32(goff16, (const void*)r0, 2));
                continue;
            }
            if (sb1 == 1 && width == PTC_BG_NR && two) {
                const __m512i x = _mm512_loadu_si512((const void*)r0);
                const __m512i y = _mm512_loadu_si512((const void*)(r0 + sb0));
                _mm512_storeu_si512((void*)dq, _mm512_permutex2var_epi16(x, vlo, y));
                _mm512_storeu_si512((void*)(dq + 16), _mm512_permutex2var_epi16(x, vhi, y));
                continue;
            }
            ptrdiff_t c = 0;
            for (; c < width; c++)
                dq[c] = ptc_bg_pair(r0[c * sb1], two ? r0[sb0 + c * sb1] : 0);
            for (; c < PTC_BG_NR; c++) dq[c] = 0;
        }
    }
}

/* the 12 x 32 tile: c[r * ldc + j] (+)= the kp pairs' sums */
#define PTC_BG_ROW(r)                                                           \
    { int w_; memcpy(&w_, ap + (r) * rs, 4);                                   \
      const __m512bh a_ = (__m512bh)_mm512_set1_epi32(w_);                     \
      c##r##0 = _mm512_dpbf16_ps(c##r##0, a_, b0);                            \
      c##r##1 = _mm512_dpbf16_ps(c##r##1, a_, b1); }
/* the last k block's output of a row's 32 sums (two vectors): + the earlier
 * blocks' (cbuf, unless first) + init, rounded to bfloat16 into o (cols of
 * them: a masked edge) */
typedef struct {
    uint16_t* o;            /* the tile's first output element; NULL: not the last block */
    ptrdiff_t so0;
    const float* init;      /* the tile's first init element, or NULL */
    ptrdiff_t si0, si1;
    int rows, cols;         /* of the tile inside the result */
} ptc_bg_out_t;

PTC_BG_TGT static inline __m512 ptc_bg_init16(const float* p, ptrdiff_t si1, int cols)
{
    if (cols <= 0) return _mm512_setzero_ps();
    const __mmask16 m = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
    if (si1 == 1) return _mm512_maskz_loadu_ps(m, p);
    if (si1 == 0) return _mm512_maskz_mov_ps(m, _mm512_set1_ps(p[0]));
    float t[16] = {0};
    for (int j = 0; j < cols && j < 16; j++) t[j] = p[j * si1];
    return _mm512_loadu_ps(t);
}

/* ptc_half_rows.h's bfloat16 rounding, the first cols of sixteen stored */
PTC_BG_TGT static inline void ptc_bg_round16(uint16_t* d, __m512 v, int cols)
{
    if (cols <= 0) return;
    const __m256i h = ptc_b16_round(v);
    if (cols >= 16) _mm256_storeu_si256((__m256i*)d, h);
    else _mm256_mask_storeu_epi16((void*)d, (__mmask16)((1u << cols) - 1), h);
}

PTC_BG_TGT static inline void ptc_bg_row_out(int r, __m512 v0, __m512 v1, float* c, ptrdiff_t ldc,
                                             int first, const ptc_bg_out_t* out)
{
    if (!first) {
        v0 = _mm512_add_ps(_mm512_loadu_ps(c + r * ldc), v0);
        v1 = _mm512_add_ps(_mm512_loadu_ps(c + r * ldc + 16), v1);
    }
    if (out->o == NULL) {
        _mm512_storeu_ps(c + r * ldc, v0);
        _mm512_storeu_ps(c + r * ldc + 16, v1);
        return;
    }
    if (r >= out->rows) return;
    if (out->init != NULL) {
        const float* ip = out->init + r * out->si0;
        v0 = _mm512_add_ps(v0, ptc_bg_init16(ip, out->si1, out->cols));
        v1 = _mm512_add_ps(v1, ptc_bg_init16(ip + 16 * out->si1, out->si1, out->cols - 16));
    }
    uint16_t* d = out->o + r * out->so0;
    ptc_bg_round16(d, v0, out->cols);
    ptc_bg_round16(d + 16, v1, out->cols - 16);
}
#define PTC_BG_OUT(r) ptc_bg_row_out(r, c##r##0, c##r##1, c, ldc, first, out);

/* row r's k pair q at ap + r * rs + q * qs (bytes): a packed panel (rs 4,
 * qs 4 MR) or the rows of a k-contiguous A read in place (rs its row
 * stride, qs 4) */
PTC_BG_TGT static void ptc_bg_kernel(ptrdiff_t kp, const char* ap, ptrdiff_t rs, ptrdiff_t qs,
                                     const uint32_t* bp,
                                     float* c, ptrdiff_t ldc, int first, const ptc_bg_out_t* out)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
           c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00,
           c61 = c00, c70 = c00, c71 = c00, c80 = c00, c81 = c00, c90 = c00, c91 = c00;
    __m512 c100 = c00, c101 = c00, c110 = c00, c111 = c00;
    for (ptrdiff_t q = 0; q < kp; q++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void*)bp);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void*)(bp + 16));
        PTC_BG_ROW(0) PTC_BG_ROW(1) PTC_BG_ROW(2) PTC_BG_ROW(3) PTC_BG_ROW(4) PTC_BG_ROW(5)
        PTC_BG_ROW(6) PTC_BG_ROW(7) PTC_BG_ROW(8) PTC_BG_ROW(9) PTC_BG_ROW(10) PTC_BG_ROW(11)
        ap += qs;
        bp += PTC_BG_NR;
    }
    PTC_BG_OUT(0) PTC_BG_OUT(1) PTC_BG_OUT(2) PTC_BG_OUT(3) PTC_BG_OUT(4) PTC_BG_OUT(5)
    PTC_BG_OUT(6) PTC_BG_OUT(7) PTC_BG_OUT(8) PTC_BG_OUT(9) PTC_BG_OUT(10) PTC_BG_OUT(11)
}
#undef PTC_BG_ROW
#undef PTC_BG_OUT

/* o (m x [j0, j1)) = bf16(A (m x k) B (k x n) [+ init]); element (i, k) of A
 * at a[i * sa0 + k * sa1], (k, j) of B at b[k * sb0 + j * sb1], (i, j) of
 * init (float32, NULL: none) at init[i * si0 + j * si1], of o at
 * o[i * so0 + j] (element strides; a thread computes its column range) */
static int ptc_bgemm(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k,
                     const uint16_t* a, ptrdiff_t sa0, ptrdiff_t sa1,
                     const uint16_t* b, ptrdiff_t sb0, ptrdiff_t sb1,
                     const float* init, ptrdiff_t si0, ptrdiff_t si1,
                     uint16_t* o, ptrdiff_t so0, ptrdiff_t j0, ptrdiff_t j1)
{
    const ptrdiff_t nw = j1 - j0;
    if (m <= 0 || nw <= 0) return 0;
    const ptrdiff_t mpad = (m + PTC_BG_MR - 1) / PTC_BG_MR * PTC_BG_MR;
    const ptrdiff_t npad = (nw + PTC_BG_NR - 1) / PTC_BG_NR * PTC_BG_NR;
    const ptrdiff_t kcmax = k < PTC_BG_KC ? k : PTC_BG_KC;
    const ptrdiff_t kpmax = (kcmax + 1) / 2;
    const ptrdiff_t ncmax = npad < PTC_BG_NC ? npad : PTC_BG_NC;
    const ptrdiff_t mcmax = mpad < PTC_BG_MC ? mpad : PTC_BG_MC;
    float* cbuf = NULL;
    uint32_t* apack = NULL;
    uint32_t* bpack = NULL;
    float* row = NULL;
    void* p = NULL;
    int err = -1;
    /* the last k block rounds its sums into o in the kernel; the float32
     * buffer holds the earlier blocks' sums (k = 0: o is init rounded) */
    const int fused = k > 0;
    if (!fused || k > PTC_BG_KC) {
        if (ptc_scratch_memalign(&p, 64, (size_t)mpad * npad * sizeof(float)) != 0) goto done;
        cbuf = (float*)p;
    }
    if (ptc_scratch_memalign(&p, 64, (size_t)(kpmax ? kpmax : 1) * mcmax * 4) != 0) goto done;
    apack = (uint32_t*)p;
    if (ptc_scratch_memalign(&p, 64, (size_t)(kpmax ? kpmax : 1) * ncmax * 4) != 0) goto done;
    bpack = (uint32_t*)p;
    if (!fused) {
        if (ptc_scratch_memalign(&p, 64, (size_t)nw * sizeof(float)) != 0) goto done;
        row = (float*)p;
    }
    if (k == 0) memset(cbuf, 0, (size_t)mpad * npad * sizeof(float));
    for (ptrdiff_t jc = 0; jc < nw; jc += PTC_BG_NC) {
        const ptrdiff_t nc = nw - jc < PTC_BG_NC ? nw - jc : PTC_BG_NC;
        for (ptrdiff_t pc = 0; pc < k; pc += PTC_BG_KC) {
            const ptrdiff_t kc = k - pc < PTC_BG_KC ? k - pc : PTC_BG_KC;
            const ptrdiff_t kp = (kc + 1) / 2;
            ptc_bg_pack_b(b, sb0, sb1, j0 + nw, pc, kc, j0 + jc, nc, bpack);
            /* A's rows read in place where k is contiguous (and the block's k
             * even: no pair past it); only a last partial panel is packed */
            const int direct = ptc_bgemm_direct_on && sa1 == 1 && kc % 2 == 0
                               && sa0 <= PTRDIFF_MAX / 2 / PTC_BG_MR;
            for (ptrdiff_t ic = 0; ic < m; ic += PTC_BG_MC) {
                const ptrdiff_t mc = m - ic < PTC_BG_MC ? m - ic : PTC_BG_MC;
                const ptrdiff_t mfull = direct ? mc / PTC_BG_MR * PTC_BG_MR : 0;
                if (mfull < mc)
                    ptc_bg_pack_a(a, sa0, sa1, m, ic + mfull, mc - mfull, pc, kc, apack + mfull * kp);
                for (ptrdiff_t jr = 0; jr < nc; jr += PTC_BG_NR)
                    for (ptrdiff_t ir = 0; ir < mc; ir += PTC_BG_MR) {
                        ptc_bg_out_t out = {NULL, so0, NULL, si0, si1, 0, 0};
                        const ptrdiff_t i = ic + ir, j = jc + jr;
                        if (fused && pc + PTC_BG_KC >= k) {
                            out.o = o + i * so0 + j0 + j;
                            out.rows = (int)(m - i < PTC_BG_MR ? m - i : PTC_BG_MR);
                            out.cols = (int)(nw - j < PTC_BG_NR ? nw - j : PTC_BG_NR);
                            if (init != NULL) out.init = init + i * si0 + (j0 + j) * si1;
                        }
                        if (ir < mfull)
                            ptc_bg_kernel(kp, (const char*)(a + i * sa0 + pc), 2 * sa0, 4,
                                          bpack + jr * kp,
                                          cbuf != NULL ? cbuf + i * npad + j : NULL, npad, pc == 0,
                                          &out);
                        else
                        ptc_bg_kernel(kp, (const char*)(apack + ir * kp), 4, 4 * PTC_BG_MR,
                                      bpack + jr * kp,
                                      cbuf != NULL ? cbuf + i * npad + j : NULL, npad, pc == 0,
                                      &out);
                    }
            }
        }
    }
    for (ptrdiff_t i = 0; i < m && !fused; i++) {
        const float* cr = cbuf + i * npad;
        const float* src = cr;
        if (init != NULL) {
            const float* ir = init + i * si0 + j0 * si1;
            if (si1 == 1)
                for (ptrdiff_t j = 0; j < nw; j++) row[j] = cr[j] + ir[j];
            else
                for (ptrdiff_t j = 0; j < nw; j++) row[j] = cr[j] + ir[j * si1];
            src = row;
        }
        ptc_float_to_bf16_rows(src, o + i * so0 + j0, nw);
    }
    err = 0;
done:
    free(cbuf);
    free(apack);
    free(bpack);
    free(row);
    return err;
}
#else
static int ptc_bgemm_set_direct(int on) { (void)on; return 1; }
static int ptc_bgemm_isa(void) { return 0; }
static int ptc_bgemm_force_isa(int isa) { (void)isa; return 0; }
static int ptc_bgemm(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k,
                     const uint16_t* a, ptrdiff_t sa0, ptrdiff_t sa1,
                     const uint16_t* b, ptrdiff_t sb0, ptrdiff_t sb1,
                     const float* init, ptrdiff_t si0, ptrdiff_t si1,
                     uint16_t* o, ptrdiff_t so0, ptrdiff_t j0, ptrdiff_t j1)
{
    (void)m; (void)n; (void)k; (void)a; (void)sa0; (void)sa1; (void)b; (void)sb0; (void)sb1;
    (void)init; (void)si0; (void)si1; (void)o; (void)so0; (void)j0; (void)j1;
    return -2;
}
#endif
#endif
