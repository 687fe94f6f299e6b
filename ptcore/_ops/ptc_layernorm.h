/* Layer norm of float32 rows on AVX-512F, four rows at a time.
 *
 * _nn_kernels.pyx's row loops take each row's statistics as double sums in
 * eight lanes (element j in lane j % 8, the lanes combined as
 * ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)), then the tail), one row
 * after the other: a chain of dependent double additions per row that the
 * CPU cannot overlap with the next row's, and the elementwise parts ran four
 * floats at a time.  Here the same sums (the same bits) run for four rows at
 * once as independent chains, and the elementwise parts sixteen floats at a
 * time, with the operations of the row loops in their order (no multiply-add
 * contraction: ISO C mode).  The callers use these where ptln_rows512() says
 * so and keep the row loops otherwise. */
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

static int ptln512_on = 1;        /* a testing knob: 0 keeps the row loops */

static int ptln_rows512(void) {
    static int ok = -1;
    if (ok < 0) { __builtin_cpu_init(); ok = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) != 0; }
    return ok && ptln512_on;
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
            for (; j < n; j++) {
                float v = (xs[j] - m) * r;
                if (w) v = v * w[j];
                if (b) v = v + b[j];
                ys[j] = v;
            }
        }
    }
}

/* gx of ``rows`` rows and the rows' contributions to gw/gb (double, added in
   row order as the row loops do) */
__attribute__((target("avx512f,avx512vl"))) static void
ptln_bwd_rows_f32_avx512(const float* g, const float* x, const float* w, const float* mean,
                         const float* rstd, float* gx, double* gw, double* gb, ptrdiff_t rows,
                         ptrdiff_t n) {
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
            ptrdiff_t t;
            for (t = j; t < n; t++) {
                float xh = (xr[k][t] - m_[k]) * r_[k];
                float d = w ? gr[k][t] * w[t] : gr[k][t];
                a += d;
                c += (double)d * (double)xh;
            }
            a_[k] = (float)(a / n);
            c_[k] = (float)(c / n);
        }
        for (k = 0; k < R; k++) {
            const float *xs = xr[k], *gs = gr[k];
            float* o = gx + (r0 + k) * n;
            const float m = m_[k], r = r_[k], a = a_[k], c = c_[k];
            for (j = 0; j + 16 <= n; j += 16) {
                ptln_z16f xv, gv, wv;
                memcpy(&xv, xs + j, sizeof xv);
                memcpy(&gv, gs + j, sizeof gv);
                if (w) { memcpy(&wv, w + j, sizeof wv); gv = gv * wv; }
                gv = r * (gv - a - (xv - m) * r * c);
                memcpy(o + j, &gv, sizeof gv);
            }
            for (; j < n; j++) {
                float d = w ? gs[j] * w[j] : gs[j];
                o[j] = r * (d - a - (xs[j] - m) * r * c);
            }
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
            for (; j < n; j++)
                for (k = 0; k < R; k++) {
                    if (gw) gw[j] += gr[k][j] * ((xr[k][j] - m_[k]) * r_[k]);
                    if (gb) gb[j] += gr[k][j];
                }
        }
    }
}
#else
static int ptln512_on = 0;
static int ptln_rows512(void) { return 0; }
static void ptln_fwd_rows_f32_avx512(const float* x, const float* w, const float* b, float* y,
                                     float* mean, float* rstd, ptrdiff_t rows, ptrdiff_t n,
                                     double eps) {
    (void)x; (void)w; (void)b; (void)y; (void)mean; (void)rstd; (void)rows; (void)n; (void)eps;
}
static void ptln_bwd_rows_f32_avx512(const float* g, const float* x, const float* w,
                                     const float* mean, const float* rstd, float* gx,
                                     double* gw, double* gb, ptrdiff_t rows, ptrdiff_t n) {
    (void)g; (void)x; (void)w; (void)mean; (void)rstd; (void)gx; (void)gw; (void)gb;
    (void)rows; (void)n;
}
#endif

#endif
