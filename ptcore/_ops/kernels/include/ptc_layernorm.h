/* Layer norm of float32 rows on AVX-512F (and AVX2), four rows at a time.
 *
 * _nn_kernels.pyx's row loops take each row's statistics as double sums in
 * eight lanes (element j in lane j % 8, the lanes combined as
 * ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)), then the tail), one row
 * after the other: a chain of dependent double additions per row that the
 * CPU cannot overlap with the next row's, and the elementwise parts ran four
 * floats at a time.  Here the same sums (the same bits) run for four rows at
 * once as independent chains, and the elementwise parts sixteen floats at a
 * time, with the operations of the row loops in their order (no multiply-add
 * contraction: ISO C mode).  The callers use these where ptln_rows_isa()
 * says so and keep the row loops otherwise.  AMD Zen 3 (AVX2), one thread,
 * F.layer_norm forward (768, 128) 125 -> 50 us (torch 80), (768, 512)
 * 381 -> 156 us (torch 185); LayerNorm forward + backward at GPT size
 * 348 -> 195 us (torch 183). */
#ifndef PTC_LAYERNORM_H
#define PTC_LAYERNORM_H

#include <math.h>
#include <stddef.h>
#include <string.h>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#endif

#define PTLN_R 4

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
typedef double ptln_z8d __attribute__((vector_size(64)));
typedef float ptln_y8f __attribute__((vector_size(32)));
typedef float ptln_z16f __attribute__((vector_size(64)));

/* a testing knob: the widest instruction set the row groups may use (2
   AVX-512, 1 AVX2, 0 none: the row loops) */
static int ptln_rows_level = 2;

/* which row-group kernels run here: 2, 1 or 0 (the row loops) */
static int ptln_rows_isa(void) {
    static int cpu = -1;
    if (cpu < 0) {
        __builtin_cpu_init();
        cpu = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2
              : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return cpu < ptln_rows_level ? cpu : ptln_rows_level;
}

/* the scalar tails (elements j0 <= j < n) both ISAs' row groups share */
static inline void ptln_bwd_sums_tail(const float* xr, const float* gr, const float* w, float m,
                                      float r, ptrdiff_t j0, ptrdiff_t n, double* a, double* c) {
    ptrdiff_t t;
    for (t = j0; t < n; t++) {
        float xh = (xr[t] - m) * r;
        float d = w ? gr[t] * w[t] : gr[t];
        *a += d;
        *c += (double)d * (double)xh;
    }
}

static inline void ptln_gx_tail(const float* xs, const float* gs, const float* w, float m,
                                float r, float a, float c, ptrdiff_t j0, ptrdiff_t n, float* o,
                                const float* acc) {
    ptrdiff_t j;
    for (j = j0; j < n; j++) {
        float d = w ? gs[j] * w[j] : gs[j];
        float v = r * (d - a - (xs[j] - m) * r * c);
        o[j] = acc ? acc[j] + v : v;
    }
}

static inline void ptln_fwd_tail(const float* xs, const float* w, const float* b, float m,
                                 float r, ptrdiff_t j0, ptrdiff_t n, float* ys) {
    ptrdiff_t j;
    for (j = j0; j < n; j++) {
        float v = (xs[j] - m) * r;
        if (w) v = v * w[j];
        if (b) v = v + b[j];
        ys[j] = v;
    }
}

/* gw += g xh, gb += g over the R rows of a group, row by row */
static inline void ptln_acc_tail(double* gw, double* gb, const float* const* gr,
                                 const float* const* xr, const float* m_, const float* r_,
                                 int R, ptrdiff_t j0, ptrdiff_t n) {
    ptrdiff_t j;
    int k;
    for (j = j0; j < n; j++)
        for (k = 0; k < R; k++) {
            if (gw) gw[j] += gr[k][j] * ((xr[k][j] - m_[k]) * r_[k]);
            if (gb) gb[j] += gr[k][j];
        }
}

/* eight floats to eight doubles in one vcvtps2pd (GCC 12 expands the
   generic conversion into two 128-bit halves, an extract and an insert) */
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline ptln_z8d
ptln_wide8(ptln_y8f v) {
    return (ptln_z8d)_mm512_cvtps_pd((__m256)v);
}

__attribute__((target("avx512f,avx512vl"))) static inline ptln_z8d ptln_cvt8(const float* p) {
    ptln_y8f v;
    memcpy(&v, p, sizeof v);
    return ptln_wide8(v);
}

__attribute__((target("avx512f,avx512vl"))) static inline double ptln_comb(ptln_z8d z) {
    return ((z[0] + z[4]) + (z[1] + z[5])) + ((z[2] + z[6]) + (z[3] + z[7]));
}

/* y = (x - mean) rstd w + b over ``rows`` rows of ``n`` (w, b may be NULL) */
__attribute__((target("avx512f,avx512vl"))) static void
ptln_fwd_rows_f32_avx512(const float* x, const float* w, const float* b, float* y, float* mean,
                         float* rstd, ptrdiff_t rows, ptrdiff_t n, double eps) {
    ptrdiff_t r0, j;
    int k;
    for (r0 = 0; r0 < rows; r0 += PTLN_R) {
        const int R = rows - r0 < PTLN_R ? (int)(rows - r0) : PTLN_R;
        const float* xr[PTLN_R];
        ptln_z8d A[PTLN_R];
        double mu[PTLN_R], a;
        float m_[PTLN_R], r_[PTLN_R];
        for (k = 0; k < PTLN_R; k++) {
            xr[k] = x + (r0 + (k < R ? k : 0)) * n;
            A[k] = (ptln_z8d){0, 0, 0, 0, 0, 0, 0, 0};
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R; k++) A[k] += ptln_cvt8(xr[k] + j);
        for (k = 0; k < PTLN_R; k++) {
            ptrdiff_t t;
            a = ptln_comb(A[k]);
            for (t = j; t < n; t++) a += xr[k][t];
            mu[k] = a / n;
            A[k] = (ptln_z8d){0, 0, 0, 0, 0, 0, 0, 0};
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R; k++) {
                ptln_z8d d = ptln_cvt8(xr[k] + j) - mu[k];
                A[k] += d * d;
            }
        for (k = 0; k < PTLN_R; k++) {
            ptrdiff_t t;
            a = ptln_comb(A[k]);
            for (t = j; t < n; t++) { double d = xr[k][t] - mu[k]; a += d * d; }
            m_[k] = (float)mu[k];
            r_[k] = (float)(1.0 / sqrt(a / n + eps));
        }
        for (k = 0; k < R; k++) {
            const float* xs = xr[k];
            float* ys = y + (r0 + k) * n;
            const float m = m_[k], r = r_[k];
            mean[r0 + k] = m;
            rstd[r0 + k] = r;
            for (j = 0; j + 16 <= n; j += 16) {
                ptln_z16f v, t;
                memcpy(&v, xs + j, sizeof v);
                v = (v - m) * r;
                if (w) { memcpy(&t, w + j, sizeof t); v = v * t; }
                if (b) { memcpy(&t, b + j, sizeof t); v = v + t; }
                memcpy(ys + j, &v, sizeof v);
            }
            ptln_fwd_tail(xs, w, b, m, r, j, n, ys);
        }
    }
}

/* gx of ``rows`` rows and the rows' contributions to gw/gb (double, added in
   row order as the row loops do) */
__attribute__((target("avx512f,avx512vl"))) static void
ptln_bwd_rows_f32_avx512(const float* g, const float* x, const float* w, const float* mean,
                         const float* rstd, float* gx, double* gw, double* gb, ptrdiff_t rows,
                         ptrdiff_t n, const float* acc) {
    ptrdiff_t r0, j;
    int k;
    for (r0 = 0; r0 < rows; r0 += PTLN_R) {
        const int R = rows - r0 < PTLN_R ? (int)(rows - r0) : PTLN_R;
        const float *xr[PTLN_R], *gr[PTLN_R];
        float m_[PTLN_R], r_[PTLN_R], a_[PTLN_R], c_[PTLN_R];
        ptln_z8d A[PTLN_R], C[PTLN_R];
        for (k = 0; k < PTLN_R; k++) {
            const ptrdiff_t r = r0 + (k < R ? k : 0);
            xr[k] = x + r * n;
            gr[k] = g + r * n;
            m_[k] = mean[r];
            r_[k] = rstd[r];
            A[k] = (ptln_z8d){0, 0, 0, 0, 0, 0, 0, 0};
            C[k] = A[k];
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R; k++) {
                ptln_y8f xv, dv, wv;
                memcpy(&xv, xr[k] + j, sizeof xv);
                memcpy(&dv, gr[k] + j, sizeof dv);
                xv = (xv - m_[k]) * r_[k];
                if (w) { memcpy(&wv, w + j, sizeof wv); dv = dv * wv; }
                ptln_z8d e = ptln_wide8(dv);
                A[k] += e;
                C[k] += e * ptln_wide8(xv);
            }
        for (k = 0; k < PTLN_R; k++) {
            double a = ptln_comb(A[k]), c = ptln_comb(C[k]);
            ptln_bwd_sums_tail(xr[k], gr[k], w, m_[k], r_[k], j, n, &a, &c);
            a_[k] = (float)(a / n);
            c_[k] = (float)(c / n);
        }
        for (k = 0; k < R; k++) {
            const float *xs = xr[k], *gs = gr[k];
            float* o = gx + (r0 + k) * n;
            const float* ac = acc ? acc + (r0 + k) * n : NULL;
            const float m = m_[k], r = r_[k], a = a_[k], c = c_[k];
            for (j = 0; j + 16 <= n; j += 16) {
                ptln_z16f xv, gv, wv, av;
                memcpy(&xv, xs + j, sizeof xv);
                memcpy(&gv, gs + j, sizeof gv);
                if (w) { memcpy(&wv, w + j, sizeof wv); gv = gv * wv; }
                gv = r * (gv - a - (xv - m) * r * c);
                if (ac) { memcpy(&av, ac + j, sizeof av); gv = av + gv; }
                memcpy(o + j, &gv, sizeof gv);
            }
            ptln_gx_tail(xs, gs, w, m, r, a, c, j, n, o, ac);
        }
        /* gw += g xh and gb += g, the group's rows added in row order to
           each element (the row loop's order and bits) with one load and
           store of the double sums per group rather than per row: the
           per-row read-modify-write of gw/gb was a third of this kernel */
        if (gw || gb) {
            for (j = 0; j + 8 <= n; j += 8) {
                ptln_z8d tw, tb;
                if (gw) memcpy(&tw, gw + j, sizeof tw);
                if (gb) memcpy(&tb, gb + j, sizeof tb);
                for (k = 0; k < R; k++) {
                    ptln_y8f gv8, xv8;
                    memcpy(&gv8, gr[k] + j, sizeof gv8);
                    if (gw) {
                        memcpy(&xv8, xr[k] + j, sizeof xv8);
                        xv8 = gv8 * ((xv8 - m_[k]) * r_[k]);
                        tw += ptln_wide8(xv8);
                    }
                    if (gb) tb += ptln_wide8(gv8);
                }
                if (gw) memcpy(gw + j, &tw, sizeof tw);
                if (gb) memcpy(gb + j, &tb, sizeof tb);
            }
            ptln_acc_tail(gw, gb, gr, xr, m_, r_, R, j, n);
        }
    }
}

/* ---- AVX2: the same operations on 4-double and 8-float vectors ----------
   A row's eight double lanes are two __m256d (lanes 0-3, 4-7), combined as
   ptln_comb combines them; products and sums stay separate instructions (no
   FMA), so these give the row loops' bits too.  The forward keeps four rows
   in flight (8 accumulators), the backward two (its two sums per row take
   4 registers each). */
__attribute__((target("avx2"))) static inline double ptln_comb2(__m256d lo, __m256d hi) {
    double z[8];
    _mm256_storeu_pd(z, lo);
    _mm256_storeu_pd(z + 4, hi);
    return ((z[0] + z[4]) + (z[1] + z[5])) + ((z[2] + z[6]) + (z[3] + z[7]));
}

/* y = (x - mean) rstd w + b over ``rows`` rows of ``n`` (w, b may be NULL) */
__attribute__((target("avx2"))) static void
ptln_fwd_rows_f32_avx2(const float* x, const float* w, const float* b, float* y, float* mean,
                       float* rstd, ptrdiff_t rows, ptrdiff_t n, double eps) {
    ptrdiff_t r0, j;
    int k;
    for (r0 = 0; r0 < rows; r0 += PTLN_R) {
        const int R = rows - r0 < PTLN_R ? (int)(rows - r0) : PTLN_R;
        const float* xr[PTLN_R];
        __m256d lo[PTLN_R], hi[PTLN_R];
        double mu[PTLN_R], a;
        float m_[PTLN_R], r_[PTLN_R];
        for (k = 0; k < PTLN_R; k++) {
            xr[k] = x + (r0 + (k < R ? k : 0)) * n;
            lo[k] = _mm256_setzero_pd();
            hi[k] = lo[k];
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R; k++) {
                lo[k] = _mm256_add_pd(lo[k], _mm256_cvtps_pd(_mm_loadu_ps(xr[k] + j)));
                hi[k] = _mm256_add_pd(hi[k], _mm256_cvtps_pd(_mm_loadu_ps(xr[k] + j + 4)));
            }
        for (k = 0; k < PTLN_R; k++) {
            ptrdiff_t t;
            a = ptln_comb2(lo[k], hi[k]);
            for (t = j; t < n; t++) a += xr[k][t];
            mu[k] = a / n;
            lo[k] = _mm256_setzero_pd();
            hi[k] = lo[k];
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R; k++) {
                __m256d m = _mm256_set1_pd(mu[k]);
                __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(xr[k] + j)), m);
                __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(xr[k] + j + 4)), m);
                lo[k] = _mm256_add_pd(lo[k], _mm256_mul_pd(d0, d0));
                hi[k] = _mm256_add_pd(hi[k], _mm256_mul_pd(d1, d1));
            }
        for (k = 0; k < PTLN_R; k++) {
            ptrdiff_t t;
            a = ptln_comb2(lo[k], hi[k]);
            for (t = j; t < n; t++) { double d = xr[k][t] - mu[k]; a += d * d; }
            m_[k] = (float)mu[k];
            r_[k] = (float)(1.0 / sqrt(a / n + eps));
        }
        for (k = 0; k < R; k++) {
            const float* xs = xr[k];
            float* ys = y + (r0 + k) * n;
            const float m = m_[k], r = r_[k];
            const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(r);
            mean[r0 + k] = m;
            rstd[r0 + k] = r;
            for (j = 0; j + 8 <= n; j += 8) {
                __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xs + j), vm), vr);
                if (w) v = _mm256_mul_ps(v, _mm256_loadu_ps(w + j));
                if (b) v = _mm256_add_ps(v, _mm256_loadu_ps(b + j));
                _mm256_storeu_ps(ys + j, v);
            }
            ptln_fwd_tail(xs, w, b, m, r, j, n, ys);
        }
    }
}

#define PTLN_R2 2

/* gx of ``rows`` rows and the rows' contributions to gw/gb (double, added in
   row order as the row loops do) */
__attribute__((target("avx2"))) static void
ptln_bwd_rows_f32_avx2(const float* g, const float* x, const float* w, const float* mean,
                       const float* rstd, float* gx, double* gw, double* gb, ptrdiff_t rows,
                       ptrdiff_t n, const float* acc) {
    ptrdiff_t r0, j;
    int k;
    for (r0 = 0; r0 < rows; r0 += PTLN_R2) {
        const int R = rows - r0 < PTLN_R2 ? (int)(rows - r0) : PTLN_R2;
        const float *xr[PTLN_R2], *gr[PTLN_R2];
        float m_[PTLN_R2], r_[PTLN_R2], a_[PTLN_R2], c_[PTLN_R2];
        __m256d A0[PTLN_R2], A1[PTLN_R2], C0[PTLN_R2], C1[PTLN_R2];
        for (k = 0; k < PTLN_R2; k++) {
            const ptrdiff_t r = r0 + (k < R ? k : 0);
            xr[k] = x + r * n;
            gr[k] = g + r * n;
            m_[k] = mean[r];
            r_[k] = rstd[r];
            A0[k] = _mm256_setzero_pd();
            A1[k] = A0[k]; C0[k] = A0[k]; C1[k] = A0[k];
        }
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < PTLN_R2; k++) {
                __m256 xv = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr[k] + j),
                                                        _mm256_set1_ps(m_[k])),
                                          _mm256_set1_ps(r_[k]));
                __m256 dv = _mm256_loadu_ps(gr[k] + j);
                if (w) dv = _mm256_mul_ps(dv, _mm256_loadu_ps(w + j));
                __m256d e0 = _mm256_cvtps_pd(_mm256_castps256_ps128(dv));
                __m256d e1 = _mm256_cvtps_pd(_mm256_extractf128_ps(dv, 1));
                A0[k] = _mm256_add_pd(A0[k], e0);
                A1[k] = _mm256_add_pd(A1[k], e1);
                C0[k] = _mm256_add_pd(C0[k], _mm256_mul_pd(
                            e0, _mm256_cvtps_pd(_mm256_castps256_ps128(xv))));
                C1[k] = _mm256_add_pd(C1[k], _mm256_mul_pd(
                            e1, _mm256_cvtps_pd(_mm256_extractf128_ps(xv, 1))));
            }
        for (k = 0; k < PTLN_R2; k++) {
            double a = ptln_comb2(A0[k], A1[k]), c = ptln_comb2(C0[k], C1[k]);
            ptln_bwd_sums_tail(xr[k], gr[k], w, m_[k], r_[k], j, n, &a, &c);
            a_[k] = (float)(a / n);
            c_[k] = (float)(c / n);
        }
        for (k = 0; k < R; k++) {
            const float *xs = xr[k], *gs = gr[k];
            float* o = gx + (r0 + k) * n;
            const float* ac = acc ? acc + (r0 + k) * n : NULL;
            const float m = m_[k], r = r_[k], a = a_[k], c = c_[k];
            const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(r),
                         va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
            for (j = 0; j + 8 <= n; j += 8) {
                __m256 gv = _mm256_loadu_ps(gs + j);
                if (w) gv = _mm256_mul_ps(gv, _mm256_loadu_ps(w + j));
                __m256 xc = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xs + j), vm),
                                                        vr), vc);
                __m256 v = _mm256_mul_ps(vr, _mm256_sub_ps(_mm256_sub_ps(gv, va), xc));
                if (ac) v = _mm256_add_ps(_mm256_loadu_ps(ac + j), v);
                _mm256_storeu_ps(o + j, v);
            }
            ptln_gx_tail(xs, gs, w, m, r, a, c, j, n, o, ac);
        }
        /* gw += g xh and gb += g, the group's rows in row order */
        if (gw || gb) {
            for (j = 0; j + 8 <= n; j += 8) {
                __m256d w0 = _mm256_setzero_pd(), w1 = w0, b0 = w0, b1 = w0;
                if (gw) { w0 = _mm256_loadu_pd(gw + j); w1 = _mm256_loadu_pd(gw + j + 4); }
                if (gb) { b0 = _mm256_loadu_pd(gb + j); b1 = _mm256_loadu_pd(gb + j + 4); }
                for (k = 0; k < R; k++) {
                    __m256 gv8 = _mm256_loadu_ps(gr[k] + j);
                    if (gw) {
                        __m256 p = _mm256_mul_ps(gv8, _mm256_mul_ps(
                            _mm256_sub_ps(_mm256_loadu_ps(xr[k] + j), _mm256_set1_ps(m_[k])),
                            _mm256_set1_ps(r_[k])));
                        w0 = _mm256_add_pd(w0, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
                        w1 = _mm256_add_pd(w1, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
                    }
                    if (gb) {
                        b0 = _mm256_add_pd(b0, _mm256_cvtps_pd(_mm256_castps256_ps128(gv8)));
                        b1 = _mm256_add_pd(b1, _mm256_cvtps_pd(_mm256_extractf128_ps(gv8, 1)));
                    }
                }
                if (gw) { _mm256_storeu_pd(gw + j, w0); _mm256_storeu_pd(gw + j + 4, w1); }
                if (gb) { _mm256_storeu_pd(gb + j, b0); _mm256_storeu_pd(gb + j + 4, b1); }
            }
            ptln_acc_tail(gw, gb, gr, xr, m_, r_, R, j, n);
        }
    }
}

/* the row groups on the widest instruction set allowed (ptln_rows_isa() > 0) */
static void ptln_fwd_rows_f32(const float* x, const float* w, const float* b, float* y,
                              float* mean, float* rstd, ptrdiff_t rows, ptrdiff_t n,
                              double eps) {
    if (ptln_rows_isa() == 2) ptln_fwd_rows_f32_avx512(x, w, b, y, mean, rstd, rows, n, eps);
    else ptln_fwd_rows_f32_avx2(x, w, b, y, mean, rstd, rows, n, eps);
}

/* gx = acc + (the gradient) where ``acc`` is not NULL (rows x n floats laid out
   as gx: a residual branch's gradient added as each element leaves, the bits
   of the separate addition) */
static void ptln_bwd_rows_f32(const float* g, const float* x, const float* w,
                              const float* mean, const float* rstd, float* gx, double* gw,
                              double* gb, ptrdiff_t rows, ptrdiff_t n, const float* acc) {
    if (ptln_rows_isa() == 2)
        ptln_bwd_rows_f32_avx512(g, x, w, mean, rstd, gx, gw, gb, rows, n, acc);
    else ptln_bwd_rows_f32_avx2(g, x, w, mean, rstd, gx, gw, gb, rows, n, acc);
}
#else
static int ptln_rows_level = 0;
static int ptln_rows_isa(void) { return 0; }
static void ptln_fwd_rows_f32(const float* x, const float* w, const float* b, float* y,
                              float* mean, float* rstd, ptrdiff_t rows, ptrdiff_t n,
                              double eps) {
    (void)x; (void)w; (void)b; (void)y; (void)mean; (void)rstd; (void)rows; (void)n; (void)eps;
}
static void ptln_bwd_rows_f32(const float* g, const float* x, const float* w,
                              const float* mean, const float* rstd, float* gx, double* gw,
                              double* gb, ptrdiff_t rows, ptrdiff_t n, const float* acc) {
    (void)g; (void)x; (void)w; (void)mean; (void)rstd; (void)gx; (void)gw; (void)gb;
    (void)rows; (void)n; (void)acc;
}
#endif

#endif
