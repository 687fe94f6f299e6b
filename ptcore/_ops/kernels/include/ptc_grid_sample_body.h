/* Body of ptc_grid_sample.h, included once per floating type and
 * instruction set with
 *   GS_T      the element type (float, double)
 *   GS_SFX    the suffix of the function names (_f32, _f32fma, ...)
 *   GS_TGT    the target attribute of every function (empty: the baseline)
 *   GS_MA(a, b, c)   a * b + c: fused where torch's x86 build (compiled
 *             with contraction) fuses it, unfused in the baseline
 *   GS_BLK    positions per block: the vector width of torch's kernel (8
 *             floats or 4 doubles: its AVX2 build, which torch runs on
 *             AVX-512 CPUs too), so the input gradient accumulates in its
 *             order
 *   GS_FLOOR / GS_RINT / GS_TRUNC / GS_FABS   the type's libm functions
 *   GS_VEC and its vector macros (see ptc_grid_sample.h): the gathers
 * No include guard: this file is meant to be included several times; it
 * undefines its parameters at the end.
 *
 * The operations are those of ATen's vectorised 2-d CPU kernel
 * (GridSamplerKernel.cpp: ComputeLocation, ApplyGridSample), lane by lane
 * and in the same order, so values (NaN and infinite grids included) are
 * torch's: un-normalisation (g + 1) * (size - 1) / 2 or
 * (g + 1) * size / 2 - 0.5; clipping that maps NaN to 0; reflection by
 * trunc; floor and round-half-even; corners outside the input read as 0.
 * Where torch's border/reflection backward reads memory at the index of a
 * NaN coordinate (undefined behaviour in ATen), the corner counts as outside
 * here: no index is ever formed from a coordinate outside the input. */

#define GS_CAT2(a, b) a##b
#define GS_CAT(a, b) GS_CAT2(a, b)
#define GS_N(name) GS_CAT(name, GS_SFX)

typedef struct {
    GS_T max_val, sf, low, twice_span;
    int empty, ac, pad;
} GS_N(ptc_gs_loc);

GS_TGT static void GS_N(ptc_gs_loc_init)(GS_N(ptc_gs_loc)* L, ptrdiff_t size, int ac, int pad) {
    L->max_val = (GS_T)(size - 1);
    L->ac = ac;
    L->pad = pad;
    if (ac) {
        L->sf = (GS_T)(size - 1) / 2;
        L->low = 0;
        L->twice_span = (GS_T)(size - 1) * 2;
        L->empty = size <= 1;
    } else {
        L->sf = (GS_T)size / 2;
        L->low = (GS_T)-0.5;
        L->twice_span = (GS_T)size * 2;
        L->empty = size <= 0;
    }
}

GS_TGT static inline GS_T GS_N(ptc_gs_min_nan)(GS_T a, GS_T b) {      /* at::vec::minimum */
    return (a != a || b != b) ? (GS_T)NAN : (a < b ? a : b);
}

GS_TGT static inline GS_T GS_N(ptc_gs_unnorm)(const GS_N(ptc_gs_loc)* L, GS_T v) {
    return L->ac ? (v + 1) * L->sf : GS_MA(v + 1, L->sf, (GS_T)-0.5);
}

/* clamp_max(max_val, clamp_min(0, v)): a NaN becomes 0 */
GS_TGT static inline GS_T GS_N(ptc_gs_clip)(const GS_N(ptc_gs_loc)* L, GS_T v) {
    GS_T r = v > 0 ? v : 0;
    return r < L->max_val ? r : L->max_val;
}

/* |v - low| folded into [0, twice_span) by whole spans: (the extra, the flips) */
GS_TGT static inline GS_T GS_N(ptc_gs_fold)(const GS_N(ptc_gs_loc)* L, GS_T v) {
    GS_T a = GS_FABS(v - L->low);
    return GS_MA(-GS_TRUNC(a / L->twice_span), L->twice_span, a);
}

GS_TGT static inline GS_T GS_N(ptc_gs_reflect)(const GS_N(ptc_gs_loc)* L, GS_T v) {
    if (L->ac && L->empty)
        return 0;
    GS_T extra = GS_N(ptc_gs_fold)(L, v);
    return GS_N(ptc_gs_min_nan)(extra, L->twice_span - extra) + L->low;
}

/* the padding of an un-normalised coordinate (compute_coordinates) */
GS_TGT static inline GS_T GS_N(ptc_gs_pad)(const GS_N(ptc_gs_loc)* L, GS_T v) {
    if (L->pad == PTC_GS_BORDER)
        return GS_N(ptc_gs_clip)(L, v);
    if (L->pad == PTC_GS_REFLECTION)
        return GS_N(ptc_gs_clip)(L, GS_N(ptc_gs_reflect)(L, v));
    return v;
}

/* apply_get_grad: the padded coordinate and d coordinate / d grid value */
GS_TGT static inline GS_T GS_N(ptc_gs_apply_grad)(const GS_N(ptc_gs_loc)* L, GS_T g, GS_T* mult) {
    GS_T v = GS_N(ptc_gs_unnorm)(L, g), m = L->sf;
    if (L->pad == PTC_GS_ZEROS) {
        *mult = m;
        return v;
    }
    if (L->pad == PTC_GS_REFLECTION) {
        if (L->ac && L->empty) {
            v = 0;
            m = 0;
        } else {
            int neg = v - L->low < 0;
            GS_T extra = GS_N(ptc_gs_fold)(L, v), re = L->twice_span - extra;
            int flip = extra > re;
            v = (flip ? re : extra) + L->low;
            m = (flip ^ neg) ? -m : m;     /* blendv(1, -1, flip ^ neg) * scaling_factor */
        }
    }
    /* clip_coordinates_get_grad: maximum/minimum keep NaN, and the borders
       count as outside */
    int inb = 1;
    if (v == v) {
        GS_T lo = v > 0 ? v : 0;
        inb = v > 0;
        v = lo < L->max_val ? lo : L->max_val;
        inb = inb && v != L->max_val;
    }
    *mult = inb ? m : 0;
    return v;
}

/* an integer coordinate (a float holding an integer) as an index into
   [0, n), or -1 when outside (NaN included): converted only when in range */
GS_TGT static inline ptrdiff_t GS_N(ptc_gs_index)(GS_T v, ptrdiff_t n) {
    if (!(v > -1 && v < (GS_T)n))
        return -1;
    ptrdiff_t i = (ptrdiff_t)v;
    return (i >= 0 && i < n) ? i : -1;
}

/* cubic convolution coefficients (A = -0.75) of the 4 taps and their
   derivatives, for the fraction t */
GS_TGT static inline GS_T GS_N(ptc_gs_cc1)(GS_T x) {
    const GS_T A = (GS_T)-0.75;
    return GS_MA(GS_MA(A + 2, x, -(A + 3)) * x, x, 1);
}

GS_TGT static inline GS_T GS_N(ptc_gs_cc2)(GS_T x) {
    const GS_T A = (GS_T)-0.75;
    return GS_MA(GS_MA(GS_MA(A, x, -(5 * A)), x, 8 * A), x, -(4 * A));
}

GS_TGT static inline void GS_N(ptc_gs_cubic)(GS_T t, GS_T c[4]) {
    c[0] = GS_N(ptc_gs_cc2)(t + 1);
    c[1] = GS_N(ptc_gs_cc1)(t);
    c[2] = GS_N(ptc_gs_cc1)(1 - t);
    c[3] = GS_N(ptc_gs_cc2)(2 - t);
}

GS_TGT static inline void GS_N(ptc_gs_cubic_grad)(GS_T t, GS_T c[4]) {
    const GS_T A = (GS_T)-0.75;
    GS_T x = -1 - t;
    c[0] = GS_MA(GS_MA(-3 * A, x, -(10 * A)), x, -(8 * A));
    x = 0 - t;
    c[1] = GS_MA(-3 * (A + 2), x, -(2 * (A + 3))) * x;
    x = 1 - t;
    c[2] = GS_MA(3 * (A + 2), x, -(2 * (A + 3))) * x;
    x = 2 - t;
    c[3] = GS_MA(GS_MA(3 * A, x, -(10 * A)), x, 8 * A);
}

/* c0 * v0 + c1 * v1 + c2 * v2 + c3 * v3 */
#define GS_DOT4(c, v0, v1, v2, v3) \
    GS_MA((c)[3], (v3), GS_MA((c)[2], (v2), GS_MA((c)[1], (v1), (c)[0] * (v0))))

/* the 4 tap indices (or -1) of a bicubic coordinate's floor f along a dim */
GS_TGT static inline void GS_N(ptc_gs_cubic_taps)(const GS_N(ptc_gs_loc)* L, GS_T f, ptrdiff_t n,
                                                  ptrdiff_t i[4]) {
    int k;
    for (k = 0; k < 4; k++)
        i[k] = GS_N(ptc_gs_index)(GS_N(ptc_gs_pad)(L, f + (GS_T)(k - 1)), n);
}

/* The parameters of a block of positions: for bilinear the 4 corners'
   offsets into a plane (or -1 when outside) and weights, for nearest one
   offset, for bicubic 4 x and 4 y indices and coefficients; with `grad`, also
   what the backward needs (distances, d coordinate / d grid, coefficient
   derivatives). */
typedef struct {
    ptrdiff_t off[4][GS_BLK];
#ifdef GS_VEC
    int off32[4][GS_BLK];                 /* off as int32, 0 where outside */
    GS_MASKT msk[4][GS_BLK];              /* all ones where inside */
#endif
    GS_T w[4][GS_BLK];
    GS_T dist[4][GS_BLK];                 /* n, s, w, e */
    GS_T mult[2][GS_BLK];
    ptrdiff_t ix[4][GS_BLK], iy[4][GS_BLK];
    GS_T cx[4][GS_BLK], cy[4][GS_BLK], dx[4][GS_BLK], dy[4][GS_BLK];
} GS_N(ptc_gs_block);

GS_TGT static void GS_N(ptc_gs_params)(const ptc_gs_geo* g, const GS_N(ptc_gs_loc)* LX,
                                       const GS_N(ptc_gs_loc)* LY, const GS_T* gr, ptrdiff_t m,
                                       int grad, GS_N(ptc_gs_block)* B) {
    const ptrdiff_t H = g->H, W = g->W;
    ptrdiff_t p;
    int k;
    for (p = 0; p < m; p++) {
        GS_T gx = gr[2 * p], gy = gr[2 * p + 1];
        if (g->interp == PTC_GS_BICUBIC) {
            GS_T x = GS_N(ptc_gs_unnorm)(LX, gx), y = GS_N(ptc_gs_unnorm)(LY, gy);
            GS_T fx = GS_FLOOR(x), fy = GS_FLOOR(y), c[4];
            ptrdiff_t i[4];
            GS_N(ptc_gs_cubic)(x - fx, c);
            for (k = 0; k < 4; k++) B->cx[k][p] = c[k];
            GS_N(ptc_gs_cubic)(y - fy, c);
            for (k = 0; k < 4; k++) B->cy[k][p] = c[k];
            if (grad) {
                GS_N(ptc_gs_cubic_grad)(x - fx, c);
                for (k = 0; k < 4; k++) B->dx[k][p] = c[k];
                GS_N(ptc_gs_cubic_grad)(y - fy, c);
                for (k = 0; k < 4; k++) B->dy[k][p] = c[k];
            }
            GS_N(ptc_gs_cubic_taps)(LX, fx, W, i);
            for (k = 0; k < 4; k++) B->ix[k][p] = i[k];
            GS_N(ptc_gs_cubic_taps)(LY, fy, H, i);
            for (k = 0; k < 4; k++) B->iy[k][p] = i[k];
            continue;
        }
        GS_T x, y;
        if (grad && g->interp == PTC_GS_BILINEAR) {
            x = GS_N(ptc_gs_apply_grad)(LX, gx, &B->mult[0][p]);
            y = GS_N(ptc_gs_apply_grad)(LY, gy, &B->mult[1][p]);
        } else {
            x = GS_N(ptc_gs_pad)(LX, GS_N(ptc_gs_unnorm)(LX, gx));
            y = GS_N(ptc_gs_pad)(LY, GS_N(ptc_gs_unnorm)(LY, gy));
        }
        if (g->interp == PTC_GS_NEAREST) {
            ptrdiff_t ix = GS_N(ptc_gs_index)(GS_RINT(x), W), iy = GS_N(ptc_gs_index)(GS_RINT(y), H);
            B->off[0][p] = (ix < 0 || iy < 0) ? -1 : iy * W + ix;
#ifdef GS_VEC
            B->off32[0][p] = B->off[0][p] < 0 ? 0 : (int)B->off[0][p];
            B->msk[0][p] = B->off[0][p] < 0 ? 0 : -1;
#endif
            continue;
        }
        GS_T xw = GS_FLOOR(x), yn = GS_FLOOR(y);
        GS_T w = x - xw, e = 1 - w, nn = y - yn, s = 1 - nn;
        ptrdiff_t i0 = GS_N(ptc_gs_index)(xw, W), i1 = GS_N(ptc_gs_index)(xw + 1, W);
        ptrdiff_t j0 = GS_N(ptc_gs_index)(yn, H), j1 = GS_N(ptc_gs_index)(yn + 1, H);
        B->w[0][p] = s * e;
        B->w[1][p] = s * w;
        B->w[2][p] = nn * e;
        B->w[3][p] = nn * w;
        B->off[0][p] = (i0 < 0 || j0 < 0) ? -1 : j0 * W + i0;
        B->off[1][p] = (i1 < 0 || j0 < 0) ? -1 : j0 * W + i1;
        B->off[2][p] = (i0 < 0 || j1 < 0) ? -1 : j1 * W + i0;
        B->off[3][p] = (i1 < 0 || j1 < 0) ? -1 : j1 * W + i1;
#ifdef GS_VEC
        for (k = 0; k < 4; k++) {
            B->off32[k][p] = B->off[k][p] < 0 ? 0 : (int)B->off[k][p];
            B->msk[k][p] = B->off[k][p] < 0 ? 0 : -1;
        }
#endif
        B->dist[0][p] = nn;
        B->dist[1][p] = s;
        B->dist[2][p] = w;
        B->dist[3][p] = e;
    }
}

GS_TGT static inline GS_T GS_N(ptc_gs_at)(const GS_T* a, ptrdiff_t off) {
    return off >= 0 ? a[off] : 0;
}

#ifdef GS_VEC
#define GS_VCAT(a, b, c) a##b##c
#define GS_VOPX(op, sfx) GS_VCAT(_mm256_, op, sfx)
#define GS_VOP(op) GS_VOPX(op, GS_VSFX)
#define GS_VSET1 GS_VOP(set1)
#define GS_LDV GS_VOP(loadu)
#define GS_STV GS_VOP(storeu)
#define GS_VADD GS_VOP(add)
#define GS_VSUB GS_VOP(sub)
#define GS_VMUL GS_VOP(mul)
#define GS_VDIV GS_VOP(div)
#define GS_VFMA GS_VOP(fmadd)
#define GS_VMIN GS_VOP(min)
#define GS_VMAX GS_VOP(max)
#define GS_VAND GS_VOP(and)
#define GS_VOR GS_VOP(or)
#define GS_VABS(v) GS_VOP(andnot)(GS_VSET1(-0.0), (v))
#define GS_VROUND(v, mode) GS_VOP(round)((v), (mode) | _MM_FROUND_NO_EXC)
#define GS_VTRUNC(v) GS_VROUND((v), _MM_FROUND_TO_ZERO)
#define GS_VFLOOR(v) GS_VROUND((v), _MM_FROUND_TO_NEG_INF)
#define GS_VRINT(v) GS_VROUND((v), _MM_FROUND_TO_NEAREST_INT)
#define GS_VUNORD(a, b) GS_VOP(cmp)((a), (b), _CMP_UNORD_Q)
#define GS_VGT(a, b) GS_VOP(cmp)((a), (b), _CMP_GT_OQ)
#define GS_VLT(a, b) GS_VOP(cmp)((a), (b), _CMP_LT_OQ)
/* a lane mask (all ones / zeros) stored and loaded as integers */
GS_TGT static inline void GS_N(ptc_gs_mstore)(GS_MASKT* p, GS_VT m) {
    memcpy(p, &m, sizeof m);
}
#define GS_MSTORE(p, m) GS_N(ptc_gs_mstore)((p), (m))
GS_TGT static inline GS_VT GS_N(ptc_gs_mload)(const GS_MASKT* p) {
    GS_VT m;
    memcpy(&m, p, sizeof m);
    return m;
}

/* the GS_BLK values a[off[k][p]] of a block (0 where off < 0): a masked gather */
GS_TGT static inline GS_VT GS_N(ptc_gs_gather)(const GS_T* a, const GS_N(ptc_gs_block)* B, int k) {
    GS_VI ix = GS_LDI(B->off32[k]);
    return GS_MGATHER(a, ix, GS_N(ptc_gs_mload)(B->msk[k]));
}
#endif

#ifdef GS_VEC
/* ptc_gs_params for a full block of bilinear or nearest positions, without
   gradients, on vectors: the same operations lane by lane (x86's MAXPS and
   MINPS return their second operand when one is NaN: max(v, 0) maps NaN to
   0 as the scalar clip; the reflection's minimum is made NaN-propagating
   as torch's), writing the offsets, masks and weights of the gathers. */
GS_TGT static inline GS_VT GS_N(ptc_gs_vpad)(const GS_N(ptc_gs_loc)* L, GS_VT v) {
    GS_VT t = GS_VADD(v, GS_VSET1(1));
    v = L->ac ? GS_VMUL(t, GS_VSET1(L->sf)) : GS_VFMA(t, GS_VSET1(L->sf), GS_VSET1(-0.5));
    if (L->pad == PTC_GS_ZEROS)
        return v;
    if (L->pad == PTC_GS_REFLECTION) {
        if (L->ac && L->empty) {
            v = GS_VSET1(0);
        } else {
            GS_VT ts = GS_VSET1(L->twice_span), low = GS_VSET1(L->low);
            GS_VT a = GS_VABS(GS_VSUB(v, low));
            GS_VT extra = GS_VFMA(GS_VSUB(GS_VSET1(0), GS_VTRUNC(GS_VDIV(a, ts))), ts, a);
            GS_VT r = GS_VSUB(ts, extra);
            v = GS_VADD(GS_VOR(GS_VMIN(extra, r), GS_VUNORD(extra, r)), low);
        }
    }
    return GS_VMIN(GS_VMAX(v, GS_VSET1(0)), GS_VSET1(L->max_val));
}

GS_TGT static void GS_N(ptc_gs_vparams)(const ptc_gs_geo* g, const GS_N(ptc_gs_loc)* LX,
                                        const GS_N(ptc_gs_loc)* LY, const GS_T* gr,
                                        GS_N(ptc_gs_block)* B) {
    GS_T gx[GS_BLK], gy[GS_BLK];
    int p;
    for (p = 0; p < GS_BLK; p++) {
        gx[p] = gr[2 * p];
        gy[p] = gr[2 * p + 1];
    }
    GS_VT x = GS_N(ptc_gs_vpad)(LX, GS_LDV(gx)), y = GS_N(ptc_gs_vpad)(LY, GS_LDV(gy));
    GS_VT Wv = GS_VSET1((GS_T)g->W), Hv = GS_VSET1((GS_T)g->H), m1 = GS_VSET1(-1);
    if (g->interp == PTC_GS_NEAREST) {
        x = GS_VRINT(x);
        y = GS_VRINT(y);
        GS_VT in = GS_VAND(GS_VAND(GS_VGT(x, m1), GS_VLT(x, Wv)), GS_VAND(GS_VGT(y, m1), GS_VLT(y, Hv)));
        GS_ISTORE(B->off32[0], GS_IMADD(GS_ICVT(y), (int)g->W, GS_ICVT(x)));
        GS_MSTORE(B->msk[0], in);
        return;
    }
    GS_VT xw = GS_VFLOOR(x), yn = GS_VFLOOR(y), one = GS_VSET1(1), m2 = GS_VSET1(-2);
    GS_VT w = GS_VSUB(x, xw), nn = GS_VSUB(y, yn);
    GS_VT e = GS_VSUB(one, w), s = GS_VSUB(one, nn);
    GS_STV(B->w[0], GS_VMUL(s, e));
    GS_STV(B->w[1], GS_VMUL(s, w));
    GS_STV(B->w[2], GS_VMUL(nn, e));
    GS_STV(B->w[3], GS_VMUL(nn, w));
    /* corner x + 1 inside: x > -2 and x < W - 1 (exact: sizes below 2^24) */
    GS_VT in_w = GS_VAND(GS_VGT(xw, m1), GS_VLT(xw, Wv));
    GS_VT in_e = GS_VAND(GS_VGT(xw, m2), GS_VLT(xw, GS_VSUB(Wv, one)));
    GS_VT in_n = GS_VAND(GS_VGT(yn, m1), GS_VLT(yn, Hv));
    GS_VT in_s = GS_VAND(GS_VGT(yn, m2), GS_VLT(yn, GS_VSUB(Hv, one)));
    GS_MSTORE(B->msk[0], GS_VAND(in_w, in_n));
    GS_MSTORE(B->msk[1], GS_VAND(in_e, in_n));
    GS_MSTORE(B->msk[2], GS_VAND(in_w, in_s));
    GS_MSTORE(B->msk[3], GS_VAND(in_e, in_s));
    /* the gathers never read a lane outside its mask: offsets of such lanes
       may be anything */
    GS_VI o = GS_IMADD(GS_ICVT(yn), (int)g->W, GS_ICVT(xw));
    GS_ISTORE(B->off32[0], o);
    GS_ISTORE(B->off32[1], GS_IADD(o, 1));
    GS_ISTORE(B->off32[2], GS_IADD(o, (int)g->W));
    GS_ISTORE(B->off32[3], GS_IADD(o, (int)g->W + 1));
}
#endif

/* Forward of samples [n0, n1): inp (N, C, H, W), grid (N, P, 2) and
   out (N, C, P), all contiguous. */
GS_TGT static void GS_N(ptc_gs2d_forward)(const ptc_gs_geo* g, const GS_T* inp, const GS_T* grid,
                                          GS_T* out, ptrdiff_t n0, ptrdiff_t n1) {
    const ptrdiff_t C = g->C, W = g->W, P = g->P, HW = g->H * W;
    GS_N(ptc_gs_loc) LX, LY;
    GS_N(ptc_gs_block) B;
    GS_N(ptc_gs_loc_init)(&LX, W, g->ac, g->pad);
    GS_N(ptc_gs_loc_init)(&LY, g->H, g->ac, g->pad);
    ptrdiff_t n, p0, p, c;
    for (n = n0; n < n1; n++)
        for (p0 = 0; p0 < P; p0 += GS_BLK) {
            ptrdiff_t m = P - p0 < GS_BLK ? P - p0 : GS_BLK;
#ifdef GS_VEC
            if (m == GS_BLK && g->vec && g->interp != PTC_GS_BICUBIC)
                GS_N(ptc_gs_vparams)(g, &LX, &LY, grid + (n * P + p0) * 2, &B);
            else
#endif
            GS_N(ptc_gs_params)(g, &LX, &LY, grid + (n * P + p0) * 2, m, 0, &B);
            for (c = 0; c < C; c++) {
                const GS_T* a = inp + (n * C + c) * HW;
                GS_T* o = out + (n * C + c) * P + p0;
#ifdef GS_VEC
                if (m == GS_BLK && g->vec && g->interp != PTC_GS_BICUBIC) {
                    GS_VT v = GS_N(ptc_gs_gather)(a, &B, 0);
                    if (g->interp == PTC_GS_BILINEAR) {
                        v = GS_VMUL(v, GS_LDV(B.w[0]));
                        v = GS_VFMA(GS_N(ptc_gs_gather)(a, &B, 1), GS_LDV(B.w[1]), v);
                        v = GS_VFMA(GS_N(ptc_gs_gather)(a, &B, 2), GS_LDV(B.w[2]), v);
                        v = GS_VFMA(GS_N(ptc_gs_gather)(a, &B, 3), GS_LDV(B.w[3]), v);
                    }
                    GS_STV(o, v);
                    continue;
                }
#endif
                if (g->interp == PTC_GS_NEAREST) {
                    for (p = 0; p < m; p++)
                        o[p] = GS_N(ptc_gs_at)(a, B.off[0][p]);
                } else if (g->interp == PTC_GS_BILINEAR) {
                    for (p = 0; p < m; p++) {
                        GS_T w4[4] = {B.w[0][p], B.w[1][p], B.w[2][p], B.w[3][p]};
                        o[p] = GS_DOT4(w4, GS_N(ptc_gs_at)(a, B.off[0][p]),
                                       GS_N(ptc_gs_at)(a, B.off[1][p]),
                                       GS_N(ptc_gs_at)(a, B.off[2][p]),
                                       GS_N(ptc_gs_at)(a, B.off[3][p]));
                    }
                } else {
                    for (p = 0; p < m; p++) {
                        GS_T row[4], v[4], cx[4] = {B.cx[0][p], B.cx[1][p], B.cx[2][p], B.cx[3][p]};
                        GS_T cy[4] = {B.cy[0][p], B.cy[1][p], B.cy[2][p], B.cy[3][p]};
                        int i, j;
                        for (j = 0; j < 4; j++) {
                            ptrdiff_t iy = B.iy[j][p];
                            for (i = 0; i < 4; i++)
                                v[i] = (B.ix[i][p] >= 0 && iy >= 0) ? a[iy * W + B.ix[i][p]] : 0;
                            row[j] = GS_DOT4(cx, v[0], v[1], v[2], v[3]);
                        }
                        o[p] = GS_DOT4(cy, row[0], row[1], row[2], row[3]);
                    }
                }
            }
        }
}

/* Backward of samples [n0, n1): gout (N, C, P); ginp (N, C, H, W), zeroed
   by the caller, or NULL; ggrid (N, P, 2) or NULL.  Per block and channel
   the input gradient gets its 4 (bilinear) or 16 (bicubic) corner terms
   corner by corner over the block's positions, as torch's vector loop. */
GS_TGT static void GS_N(ptc_gs2d_backward)(const ptc_gs_geo* g, const GS_T* inp, const GS_T* grid,
                                           const GS_T* gout, GS_T* ginp, GS_T* ggrid,
                                           ptrdiff_t n0, ptrdiff_t n1) {
    const ptrdiff_t C = g->C, W = g->W, P = g->P, HW = g->H * W;
    GS_N(ptc_gs_loc) LX, LY;
    GS_N(ptc_gs_block) B;
    GS_T sx[GS_BLK], sy[GS_BLK];
    GS_N(ptc_gs_loc_init)(&LX, W, g->ac, g->pad);
    GS_N(ptc_gs_loc_init)(&LY, g->H, g->ac, g->pad);
    ptrdiff_t n, p0, p, c;
    int k, i, j;
    for (n = n0; n < n1; n++)
        for (p0 = 0; p0 < P; p0 += GS_BLK) {
            ptrdiff_t m = P - p0 < GS_BLK ? P - p0 : GS_BLK;
            GS_N(ptc_gs_params)(g, &LX, &LY, grid + (n * P + p0) * 2, m, 1, &B);
            for (p = 0; p < m; p++)
                sx[p] = sy[p] = 0;
            for (c = 0; c < C; c++) {
                const GS_T* a = inp + (n * C + c) * HW;
                const GS_T* d = gout + (n * C + c) * P + p0;
                GS_T* b = ginp ? ginp + (n * C + c) * HW : NULL;
                if (g->interp == PTC_GS_NEAREST) {
                    if (b)
                        for (p = 0; p < m; p++)
                            if (B.off[0][p] >= 0)
                                b[B.off[0][p]] += d[p];
                } else if (g->interp == PTC_GS_BILINEAR) {
                    if (b)
                        for (k = 0; k < 4; k++)
                            for (p = 0; p < m; p++)
                                if (B.off[k][p] >= 0)
                                    b[B.off[k][p]] += B.w[k][p] * d[p];
#ifdef GS_VEC
                    if (ggrid && m == GS_BLK && g->vec) {
                        GS_VT vnw = GS_N(ptc_gs_gather)(a, &B, 0), vne = GS_N(ptc_gs_gather)(a, &B, 1);
                        GS_VT vsw = GS_N(ptc_gs_gather)(a, &B, 2), vse = GS_N(ptc_gs_gather)(a, &B, 3);
                        GS_VT dv = GS_LDV(d);
                        GS_VT tx = GS_VFMA(GS_VSUB(vse, vsw), GS_LDV(B.dist[0]),
                                           GS_VMUL(GS_VSUB(vne, vnw), GS_LDV(B.dist[1])));
                        GS_VT ty = GS_VFMA(GS_VSUB(vse, vne), GS_LDV(B.dist[2]),
                                           GS_VMUL(GS_VSUB(vsw, vnw), GS_LDV(B.dist[3])));
                        GS_STV(sx, GS_VFMA(tx, dv, GS_LDV(sx)));
                        GS_STV(sy, GS_VFMA(ty, dv, GS_LDV(sy)));
                        continue;
                    }
#endif
                    if (ggrid)
                        for (p = 0; p < m; p++) {
                            GS_T vnw = GS_N(ptc_gs_at)(a, B.off[0][p]), vne = GS_N(ptc_gs_at)(a, B.off[1][p]);
                            GS_T vsw = GS_N(ptc_gs_at)(a, B.off[2][p]), vse = GS_N(ptc_gs_at)(a, B.off[3][p]);
                            GS_T nn = B.dist[0][p], s = B.dist[1][p], w = B.dist[2][p], e = B.dist[3][p];
                            sx[p] = GS_MA(GS_MA(vse - vsw, nn, (vne - vnw) * s), d[p], sx[p]);
                            sy[p] = GS_MA(GS_MA(vse - vne, w, (vsw - vnw) * e), d[p], sy[p]);
                        }
                } else {
                    for (i = 0; i < 4; i++)
                        for (j = 0; j < 4; j++)
                            for (p = 0; p < m; p++) {
                                ptrdiff_t ix = B.ix[i][p], iy = B.iy[j][p];
                                int ok = ix >= 0 && iy >= 0;
                                if (b && ok)
                                    b[iy * W + ix] += d[p] * B.cx[i][p] * B.cy[j][p];
                                GS_T v = ok ? a[iy * W + ix] : 0;
                                sx[p] = GS_MA(-(v * d[p] * B.dx[i][p]), B.cy[j][p], sx[p]);
                                sy[p] = GS_MA(-(v * d[p] * B.dy[j][p]), B.cx[i][p], sy[p]);
                            }
                }
            }
            if (ggrid) {
                GS_T* gg = ggrid + (n * P + p0) * 2;
                for (p = 0; p < m; p++) {
                    if (g->interp == PTC_GS_NEAREST) {
                        gg[2 * p] = gg[2 * p + 1] = 0;
                    } else if (g->interp == PTC_GS_BILINEAR) {
                        gg[2 * p] = sx[p] * B.mult[0][p];
                        gg[2 * p + 1] = sy[p] * B.mult[1][p];
                    } else {
                        gg[2 * p] = sx[p] * LX.sf;
                        gg[2 * p + 1] = sy[p] * LY.sf;
                    }
                }
            }
        }
}

#undef GS_DOT4
#undef GS_N
#undef GS_CAT
#undef GS_CAT2
#undef GS_T
#undef GS_BLK
#undef GS_SFX
#undef GS_TGT
#undef GS_MA
#undef GS_FLOOR
#undef GS_RINT
#undef GS_TRUNC
#undef GS_FABS
#ifdef GS_VEC
#undef GS_VEC
#undef GS_VT
#undef GS_VSFX
#undef GS_VI
#undef GS_MASKT
#undef GS_LDI
#undef GS_ISTORE
#undef GS_IMADD
#undef GS_IADD
#undef GS_ICVT
#undef GS_MGATHER
#undef GS_VCAT
#undef GS_VOPX
#undef GS_VOP
#undef GS_VSET1
#undef GS_LDV
#undef GS_STV
#undef GS_VADD
#undef GS_VSUB
#undef GS_VMUL
#undef GS_VDIV
#undef GS_VFMA
#undef GS_VMIN
#undef GS_VMAX
#undef GS_VAND
#undef GS_VOR
#undef GS_VABS
#undef GS_VROUND
#undef GS_VTRUNC
#undef GS_VFLOOR
#undef GS_VRINT
#undef GS_VUNORD
#undef GS_VGT
#undef GS_VLT
#undef GS_MSTORE
#endif
