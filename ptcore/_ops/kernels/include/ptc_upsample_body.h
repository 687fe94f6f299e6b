/* Body of ptc_upsample.h, included once per floating type with
 *   US_T     the element type (float, double)
 *   US_SFX   the suffix of the function names (_f32, _f64)
 *   US_V8, US_VW8, US_VSFX, US_GATHER, US_SFMA   the 256-bit vector of the
 *            FMA passes, its lanes, its intrinsics' suffix (_ps, _pd), its
 *            gather and the scalar fma
 * No include guard: this file is meant to be included several times; it
 * undefines its parameters at the end.
 *
 * A resampled tensor is seen as (B, S_0 .. S_{k-1}, inner): B planes
 * (N * C for a contiguous input, N for a channels-last one), k <= 3 spatial
 * dims and `inner` contiguous elements resampled alike (1, or C for a
 * channels-last input).  The output of a plane is made by one pass per
 * spatial dim, the last dim first, each pass a weighted sum of `ntaps` input
 * lines along its dim: ATen's upsample_generic_Nd_kernel_impl evaluates
 * out = sum_d w_d * (sum_h w_h * (sum_w w_w * x)) with the W sum innermost,
 * and the passes compute the same sums in the same order, so the bits are
 * ATen's (no FMA: the module is built with -ffp-contract=off). */

#define US_CAT2(a, b) a##b
#define US_CAT(a, b) US_CAT2(a, b)
#define US_N(name) US_CAT(name, US_SFX)

typedef US_T US_N(ptc_us_vec) __attribute__((vector_size(16)));
#define US_V US_N(ptc_us_vec)
#define US_VW ((ptrdiff_t)(16 / sizeof(US_T)))

static inline US_V US_N(ptc_us_ld)(const US_T* p) { US_V v; memcpy(&v, p, 16); return v; }
static inline void US_N(ptc_us_st)(US_T* p, US_V v) { memcpy(p, &v, 16); }

static inline US_T US_N(ptc_us_cc1)(US_T x, US_T A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
static inline US_T US_N(ptc_us_cc2)(US_T x, US_T A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

/* The taps of one dim: idx[k * n_out + j] (input index) and, except for
   the nearest modes, wt[k * n_out + j] for tap k of output j, as ATen's
   compute_indices_weights (opmath = US_T for float and double): the
   scale from the given scale factor (scale > 0) or the sizes, the source
   index and its lambda guarded by guard_index_and_lambda (whose floorf
   rounds a double index to float first, as ATen's), the copy special case
   of linear mode for equal sizes, cubic convolution with A = -0.75, and
   every index clamped into [0, n_in).  `legacy`: ATen's nearest_idx, which
   copies kept sizes and halves the index of doubled ones whatever the scale
   factor (torch's 2-d nearest forward and every nearest backward; its 1-d
   and 3-d forwards apply the scale). */
static void US_N(ptc_us_taps)(int mode, ptrdiff_t n_in, ptrdiff_t n_out, double scale, int ac,
                              int legacy, ptrdiff_t* idx, US_T* wt) {
    ptrdiff_t j, k, i0;
    if (mode == PTC_US_NEAREST || mode == PTC_US_NEAREST_EXACT) {
        float fs = scale > 0. ? (float)(1.0 / scale) : (float)n_in / (float)n_out;
        for (j = 0; j < n_out; j++) {
            if (mode == PTC_US_NEAREST_EXACT)
                i0 = (ptrdiff_t)floorf((float)(((double)j + 0.5) * (double)fs));
            else if (legacy && n_out == n_in)
                i0 = j;
            else if (legacy && n_out == 2 * n_in)
                i0 = j >> 1;
            else
                i0 = (ptrdiff_t)floorf((float)j * fs);
            idx[j] = i0 < 0 ? 0 : (i0 < n_in - 1 ? i0 : n_in - 1);
        }
        return;
    }
    US_T s;
    if (ac)
        s = n_out > 1 ? (US_T)(n_in - 1) / (US_T)(n_out - 1) : (US_T)0;
    else
        s = scale > 0. ? (US_T)(1.0 / scale) : (US_T)n_in / (US_T)n_out;
    const US_T A = (US_T)-0.75;
    for (j = 0; j < n_out; j++) {
        US_T r = ac ? s * (US_T)j : s * ((US_T)j + (US_T)0.5) - (US_T)0.5, lam;
        if (mode == PTC_US_LINEAR) {
            if (n_out == n_in) {
                idx[j] = idx[n_out + j] = j;
                wt[j] = 1;
                wt[n_out + j] = 0;
                continue;
            }
            if (r < 0)
                r = 0;
        }
        i0 = (ptrdiff_t)floorf((float)r);
        if (i0 > n_in - 1)
            i0 = n_in - 1;
        lam = r - (US_T)i0;
        lam = lam > 0 ? lam : 0;
        lam = lam < 1 ? lam : 1;
        if (mode == PTC_US_LINEAR) {
            if (i0 < 0)         /* never: r >= 0 (kept in bounds whatever the input) */
                i0 = 0;
            idx[j] = i0;
            idx[n_out + j] = i0 + (i0 < n_in - 1 ? 1 : 0);
            wt[n_out + j] = lam;
            wt[j] = (US_T)1 - lam;
        } else {
            US_T x2 = (US_T)1 - lam;
            wt[j] = US_N(ptc_us_cc2)(lam + 1, A);
            wt[n_out + j] = US_N(ptc_us_cc1)(lam, A);
            wt[2 * n_out + j] = US_N(ptc_us_cc1)(x2, A);
            wt[3 * n_out + j] = US_N(ptc_us_cc2)(x2 + 1, A);
            for (k = 0; k < 4; k++) {
                ptrdiff_t i = i0 - 1 + k;
                idx[k * n_out + j] = i < 0 ? 0 : (i < n_in - 1 ? i : n_in - 1);
            }
        }
    }
}

/* dst[o, j, r] = sum_k wt[k, j] * src[o, idx[k, j], r] (k in order; one tap:
   a copy) for src (outer, n_in, rest), dst (outer, n_out, rest) */
static void US_N(ptc_us_pass)(const US_T* src, US_T* dst, ptrdiff_t outer, ptrdiff_t n_in,
                              ptrdiff_t n_out, ptrdiff_t rest, int nt, const ptrdiff_t* idx,
                              const US_T* wt) {
    ptrdiff_t o, j, r;
    for (o = 0; o < outer; o++) {
        const US_T* s = src + o * n_in * rest;
        US_T* d = dst + o * n_out * rest;
        if (rest == 1) {
            if (nt == 1) {
                for (j = 0; j < n_out; j++)
                    d[j] = s[idx[j]];
            } else if (nt == 2) {
                const ptrdiff_t* i1 = idx + n_out;
                const US_T* w1 = wt + n_out;
                for (j = 0; j < n_out; j++)
                    d[j] = s[idx[j]] * wt[j] + s[i1[j]] * w1[j];
            } else {
                for (j = 0; j < n_out; j++) {
                    US_T v = s[idx[j]] * wt[j];
                    v += s[idx[n_out + j]] * wt[n_out + j];
                    v += s[idx[2 * n_out + j]] * wt[2 * n_out + j];
                    v += s[idx[3 * n_out + j]] * wt[3 * n_out + j];
                    d[j] = v;
                }
            }
            continue;
        }
        for (j = 0; j < n_out; j++) {
            US_T* dj = d + j * rest;
            const US_T* a = s + idx[j] * rest;
            if (nt == 1) {
                memcpy(dj, a, (size_t)rest * sizeof(US_T));
            } else if (nt == 2) {
                const US_T* b = s + idx[n_out + j] * rest;
                US_T w0 = wt[j], w1 = wt[n_out + j];
                for (r = 0; r + US_VW <= rest; r += US_VW)
                    US_N(ptc_us_st)(dj + r, US_N(ptc_us_ld)(a + r) * w0 + US_N(ptc_us_ld)(b + r) * w1);
                for (; r < rest; r++)
                    dj[r] = a[r] * w0 + b[r] * w1;
            } else {
                const US_T* b = s + idx[n_out + j] * rest;
                const US_T* c = s + idx[2 * n_out + j] * rest;
                const US_T* e = s + idx[3 * n_out + j] * rest;
                US_T w0 = wt[j], w1 = wt[n_out + j], w2 = wt[2 * n_out + j], w3 = wt[3 * n_out + j];
                for (r = 0; r + US_VW <= rest; r += US_VW) {
                    US_V v = US_N(ptc_us_ld)(a + r) * w0;
                    v += US_N(ptc_us_ld)(b + r) * w1;
                    v += US_N(ptc_us_ld)(c + r) * w2;
                    v += US_N(ptc_us_ld)(e + r) * w3;
                    US_N(ptc_us_st)(dj + r, v);
                }
                for (; r < rest; r++) {
                    US_T v = a[r] * w0;
                    v += b[r] * w1;
                    v += c[r] * w2;
                    v += e[r] * w3;
                    dj[r] = v;
                }
            }
        }
    }
}

#if PTC_X86_DISPATCH
#define US_VCAT(a, b, c) a##b##c
#define US_VOPX(op, sfx) US_VCAT(_mm256_, op, sfx)
#define US_VOP(op) US_VOPX(op, US_VSFX)
#define US_SET1 US_VOP(set1)
#define US_LDU US_VOP(loadu)
#define US_STU US_VOP(storeu)
#define US_MUL US_VOP(mul)
#define US_FMADD US_VOP(fmadd)
/* ptc_us_pass with the fused multiply-adds of ATen's kernel, for CPUs with
   FMA (where torch runs its AVX2/AVX-512 builds, compiled with contraction):
   two taps t0 * w0 + t1 * w1 are fma(t0, w0, t1 * w1), four taps
   fma(t3, w3, fma(t2, w2, fma(t1, w1, t0 * w0))).  A pass along the last dim
   of a contiguous input (rest 1) gathers 8 floats or 4 doubles at a time
   through idx32, the table in int32 (NULL: scalar loads). */
__attribute__((target("avx2,fma"))) static void US_N(ptc_us_pass_fma)(
        const US_T* src, US_T* dst, ptrdiff_t outer, ptrdiff_t n_in, ptrdiff_t n_out,
        ptrdiff_t rest, int nt, const ptrdiff_t* idx, const int* idx32, const US_T* wt) {
    ptrdiff_t o, j, r;
    const ptrdiff_t* i1 = idx + n_out;
    const ptrdiff_t* i2 = idx + 2 * n_out;
    const ptrdiff_t* i3 = idx + 3 * n_out;
    const US_T* w1 = wt + n_out;
    const US_T* w2 = wt + 2 * n_out;
    const US_T* w3 = wt + 3 * n_out;
    if (nt == 1) {
        US_N(ptc_us_pass)(src, dst, outer, n_in, n_out, rest, nt, idx, wt);
        return;
    }
    for (o = 0; o < outer; o++) {
        const US_T* s = src + o * n_in * rest;
        US_T* d = dst + o * n_out * rest;
        if (rest == 1) {
            j = 0;
            if (idx32 && nt == 2) {
                for (; j + US_VW8 <= n_out; j += US_VW8) {
                    US_V8 a = US_GATHER(s, idx32 + j), b = US_GATHER(s, idx32 + n_out + j);
                    US_STU(d + j, US_FMADD(a, US_LDU(wt + j), US_MUL(b, US_LDU(w1 + j))));
                }
            } else if (idx32) {
                for (; j + US_VW8 <= n_out; j += US_VW8) {
                    US_V8 v = US_MUL(US_GATHER(s, idx32 + j), US_LDU(wt + j));
                    v = US_FMADD(US_GATHER(s, idx32 + n_out + j), US_LDU(w1 + j), v);
                    v = US_FMADD(US_GATHER(s, idx32 + 2 * n_out + j), US_LDU(w2 + j), v);
                    US_STU(d + j, US_FMADD(US_GATHER(s, idx32 + 3 * n_out + j), US_LDU(w3 + j), v));
                }
            }
            for (; j < n_out; j++) {
                if (nt == 2) {
                    d[j] = US_SFMA(s[idx[j]], wt[j], s[i1[j]] * w1[j]);
                } else {
                    US_T v = s[idx[j]] * wt[j];
                    v = US_SFMA(s[i1[j]], w1[j], v);
                    v = US_SFMA(s[i2[j]], w2[j], v);
                    d[j] = US_SFMA(s[i3[j]], w3[j], v);
                }
            }
            continue;
        }
        for (j = 0; j < n_out; j++) {
            US_T* dj = d + j * rest;
            const US_T* a = s + idx[j] * rest;
            const US_T* b = s + i1[j] * rest;
            if (nt == 2) {
                US_V8 va = US_SET1(wt[j]), vb = US_SET1(w1[j]);
                for (r = 0; r + US_VW8 <= rest; r += US_VW8)
                    US_STU(dj + r, US_FMADD(US_LDU(a + r), va, US_MUL(US_LDU(b + r), vb)));
                for (; r < rest; r++)
                    dj[r] = US_SFMA(a[r], wt[j], b[r] * w1[j]);
                continue;
            }
            const US_T* c = s + i2[j] * rest;
            const US_T* e = s + i3[j] * rest;
            US_V8 va = US_SET1(wt[j]), vb = US_SET1(w1[j]), vc = US_SET1(w2[j]), ve = US_SET1(w3[j]);
            for (r = 0; r + US_VW8 <= rest; r += US_VW8) {
                US_V8 v = US_MUL(US_LDU(a + r), va);
                v = US_FMADD(US_LDU(b + r), vb, v);
                v = US_FMADD(US_LDU(c + r), vc, v);
                US_STU(dj + r, US_FMADD(US_LDU(e + r), ve, v));
            }
            for (; r < rest; r++) {
                US_T v = a[r] * wt[j];
                v = US_SFMA(b[r], w1[j], v);
                v = US_SFMA(c[r], w2[j], v);
                dj[r] = US_SFMA(e[r], w3[j], v);
            }
        }
    }
}
#endif

/* The transpose of ptc_us_pass: dst[o, idx[k, j], r] += wt[k, j] * src[o, j, r]
   for src (outer, n_out, rest) and dst (outer, n_in, rest), zeroed here */
static void US_N(ptc_us_tpass)(const US_T* src, US_T* dst, ptrdiff_t outer, ptrdiff_t n_in,
                               ptrdiff_t n_out, ptrdiff_t rest, int nt, const ptrdiff_t* idx,
                               const US_T* wt) {
    ptrdiff_t o, j, k, r;
    memset(dst, 0, (size_t)(outer * n_in * rest) * sizeof(US_T));
    for (o = 0; o < outer; o++) {
        const US_T* s = src + o * n_out * rest;
        US_T* d = dst + o * n_in * rest;
        if (rest == 1) {
            if (nt == 1) {
                for (j = 0; j < n_out; j++)
                    d[idx[j]] += s[j];
            } else {
                for (j = 0; j < n_out; j++) {
                    US_T g = s[j];
                    for (k = 0; k < nt; k++)
                        d[idx[k * n_out + j]] += wt[k * n_out + j] * g;
                }
            }
            continue;
        }
        for (j = 0; j < n_out; j++) {
            const US_T* g = s + j * rest;
            for (k = 0; k < nt; k++) {
                US_T* a = d + idx[k * n_out + j] * rest;
                if (nt == 1) {
                    for (r = 0; r + US_VW <= rest; r += US_VW)
                        US_N(ptc_us_st)(a + r, US_N(ptc_us_ld)(a + r) + US_N(ptc_us_ld)(g + r));
                    for (; r < rest; r++)
                        a[r] += g[r];
                } else {
                    US_T w = wt[k * n_out + j];
                    for (r = 0; r + US_VW <= rest; r += US_VW)
                        US_N(ptc_us_st)(a + r, US_N(ptc_us_ld)(a + r) + US_N(ptc_us_ld)(g + r) * w);
                    for (; r < rest; r++)
                        a[r] += w * g[r];
                }
            }
        }
    }
}

/* One plane: forward (x of the input sizes -> y of the output sizes) or,
   with `transpose`, its adjoint (x of the output sizes -> y of the input
   sizes).  Passes that keep a nearest dim's size are the identity and are
   skipped; the others go through the two scratch buffers t0/t1 (each of
   ptc_us_scratch elements), the last straight into y. */
static void US_N(ptc_us_plane)(const ptc_us_geo* g, const US_T* x, US_T* y, US_T* t0, US_T* t1,
                               int transpose) {
    int k = g->k, a, step, last = -1, n = 0;
    const US_T* src = x;
    for (step = 0; step < k; step++) {
        a = transpose ? step : k - 1 - step;
        if (!g->skip[a])
            last = step;
    }
    if (last < 0) {
        memcpy(y, x, (size_t)(g->plane_in) * sizeof(US_T));
        return;
    }
    for (step = 0; step <= last; step++) {
        a = transpose ? step : k - 1 - step;
        if (g->skip[a])
            continue;
        ptrdiff_t outer = 1, rest = g->inner, i;
        for (i = 0; i < a; i++)
            outer *= g->isz[i];
        for (i = a + 1; i < k; i++)
            rest *= g->osz[i];
        US_T* dst = step == last ? y : (n++ % 2 == 0 ? t0 : t1);
        if (transpose)
            US_N(ptc_us_tpass)(src, dst, outer, g->isz[a], g->osz[a], rest, g->nt, g->idx[a],
                               (const US_T*)g->wt[a]);
#if PTC_X86_DISPATCH
        else if (ptc_us_fma())
            US_N(ptc_us_pass_fma)(src, dst, outer, g->isz[a], g->osz[a], rest, g->nt, g->idx[a],
                                  g->idx32[a], (const US_T*)g->wt[a]);
#endif
        else
            US_N(ptc_us_pass)(src, dst, outer, g->isz[a], g->osz[a], rest, g->nt, g->idx[a],
                              (const US_T*)g->wt[a]);
        src = dst;
    }
}

#undef US_V
#undef US_VW
#undef US_N
#undef US_CAT
#undef US_CAT2
#undef US_VCAT
#undef US_VOPX
#undef US_VOP
#undef US_SET1
#undef US_LDU
#undef US_STU
#undef US_MUL
#undef US_FMADD
#undef US_T
#undef US_SFX
#undef US_V8
#undef US_VW8
#undef US_VSFX
#undef US_GATHER
#undef US_SFMA
