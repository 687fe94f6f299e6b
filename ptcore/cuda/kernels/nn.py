"""CUDA kernel sources of the nn families (convolution, pooling, losses,
embedding, activation gradients, layer norm, the Adam update).

Part of the kernel library of :mod:`ptcore.cuda.kernels.library` (its registry
pulls :func:`generate` in, and :data:`FAMILY_PRELUDE` adds the structs these
families share); same conventions: ``extern "C" __global__`` kernels named
``ptc_<family>_<op>_<tag>[_<variant>]``, element counts and strides as
``long long``, grid-stride loops (any 1-D grid and block) unless noted.

Families
--------
* **nnconv** ``ptc_nnconv_im2col_<tag>(n, T* col, const T* x, ptc_convgeo g)``:
  ``col`` (N, C*K, L) of ``x`` (N, C, D, H, W) (``K = kd*kh*kw``,
  ``L = OD*OH*OW``; zero outside the padded input), ``n = N*C*K*L``;
  ``ptc_nnconv_col2im_<tag>(n, T* x, const T* col, ptc_convgeo g)``: the
  adjoint (each input element sums the column entries that read it; no
  atomics), ``n = N*C*D*H*W``.  float32/float64.
* **nnpool** over ``(P, D*H*W)`` planes with per-dim window tables
  ``win = [starts(OD+OH+OW), ends(...), factors(...)]`` (int64):
  ``ptc_nnpool_maxfwd_<tag>(n, T* y, long long* ind, const T* x, const long long* win, ptc_poolgeo g)``
  (one output per thread, ``n = P*OD*OH*OW``; NaN wins, the first maximum
  otherwise, as the CPU kernel); ``ptc_nnpool_avgfwd_<tag>`` (same, ``g.div``
  a divisor override or 0); the backward kernels ``maxbwd``/``avgbwd`` run one
  plane per thread (``n = P``) in the CPU kernel's order, so overlapping
  windows accumulate deterministically;
  ``ptc_nnpool_maxgather_<tag>(n, T* gx, const T* gy, const long long* ind, const long long* win, ptc_poolgeo g)``
  is max pooling's backward by gathering (one thread per input element,
  ``n = P*D*H*W``, the same sums in the same order), ``win`` followed by the
  per-dim ranges of outputs whose window holds each input coordinate,
  ``lo(D+H+W), hi(D+H+W)``.  float32/float64.
* **nnloss** ``ptc_nnloss_nllfwd_<tag>(n, T* loss, T* wsum, const T* logp,
  const long long* target, const T* weight, long long C, long long S,
  long long ignore, int* err)``: ``logp`` (N, C, S), ``target`` (N, S),
  ``weight`` (C) or NULL; per (n, s) the weighted loss and its weight (0 for
  ``ignore``; out-of-range targets set ``*err``); ``ptc_nnloss_nllbwd_<tag>(n,
  T* gin, const T* g, long long gstride, ...)`` writes ``-w * g`` at the
  target class of a zeroed ``gin``.
* **nnembed** ``ptc_nnembed_fwd_<tag>(n, T* out, const T* w, const long long* idx, long long D)``;
  ``ptc_nnembed_bwd_<tag>(n, T* gw, const T* g, const long long* idx, const T* counts,
  long long D, long long padding_idx)`` (atomic adds; ``counts`` NULL unless
  scale_grad_by_freq); ``ptc_nnembed_count_<tag>(n, T* counts, const long long* idx)``.
* **nnact** ``ptc_nnact_<op>_<tag>_<c|s>``: elementwise ``grad_input(g, x)``
  of an activation, the binary ABI of ``_kernels`` (``p`` holds the
  activation's parameters).
* **nnnorm** ``ptc_nnnorm_lnfwd_<tag>(M, L, T* y, T* mean, T* rstd, const T* x,
  const T* w, const T* b, double eps)`` and ``ptc_nnnorm_lnbwd_<tag>(M, L, T* gx,
  const T* g, const T* x, const T* mean, const T* rstd, const T* w)``: one block
  per row (blockDim a multiple of 32); statistics in the accumulation type.
  ``ptc_nnnorm_lnwb_<tag>(L, M, Mc, k, T* gw, T* gb, A* pw, A* pb, const T* g,
  const T* x, const T* mean, const T* rstd)``: weight/bias gradients, a thread per
  column of each chunk of ``Mc`` rows (``k`` chunks: with ``k > 1`` the chunks' sums
  go to the ``(k, L)`` partials ``pw``/``pb`` in the accumulation type ``A``, which
  ``ptc_nnnorm_lnwb2_<tag>(L, k, T* gw, T* gb, const A* pw, const A* pb)`` sums);
  ``ptc_nnnorm_smbwd_<tag>(M, L, T* gx, const T* g, const T* y, long long log)``: the
  softmax (``y`` its output) or log_softmax gradient of rows of ``L``.
* **nnoptim** ``ptc_nnoptim_adam_<tag>(n, T* p, const T* g, T* m, T* v, T* vmax,
  ptc_params, ptc_adamargs a)``: one Adam/AdamW step in place (the CPU kernel's formula);
  ``ptc_nnoptim_sgd_<tag>(n, T* p, const T* g, T* b, ptc_params, ptc_sgdargs a)``: one SGD
  step with momentum, the operations of the unfused chain (``mul_``,
  ``add_(alpha=)``) in their order and rounding.
"""
from ptcore.cuda.kernels import source as K

__all__ = ["FAMILIES", "FAMILY_PRELUDE", "generate", "ACT_BACKWARD", "CONV_FIELDS", "POOL_FIELDS",
           "ADAM_FIELDS", "SGD_FIELDS", "SGD_FLAGS"]

FAMILIES = ("nnconv", "nnpool", "nnloss", "nnembed", "nnact", "nnnorm", "nnoptim")
_CONV_DTYPES = ("float32", "float64")

CONV_FIELDS = ("C", "D", "H", "W", "OD", "OH", "OW", "kd", "kh", "kw", "sd", "sh", "sw",
               "pd", "ph", "pw", "dd", "dh", "dw")
POOL_FIELDS = ("D", "H", "W", "OD", "OH", "OW", "stepd", "steph", "stepw", "div")
ADAM_FIELDS = ("one_m_beta1", "beta2", "one_m_beta2", "wd", "decay", "bc2s", "eps", "neg_step")
_ADAM_FLAGS = ("maximize", "l2", "decoupled")
SGD_FIELDS = ("neg_lr", "momentum", "one_m_damp", "wd")
SGD_FLAGS = ("decay", "nesterov", "maximize")

# im2col/col2im bodies over the index type ``I``: the kernels run them in
# 32-bit integers when the column buffer and the input both hold fewer than
# 2^30 elements (a uniform branch: 64-bit division is several times slower on
# a GPU; 2^30 leaves room for the grid stride), else in 64-bit.
_GEO_LOCALS = ("    const I D = (I)g0.D, H = (I)g0.H, W = (I)g0.W;\n"
               "    const I OD = (I)g0.OD, OH = (I)g0.OH, OW = (I)g0.OW;\n"
               "    const I kd = (I)g0.kd, kh = (I)g0.kh, kw = (I)g0.kw;\n"
               "    const I sd = (I)g0.sd, sh = (I)g0.sh, sw = (I)g0.sw;\n"
               "    const I pd = (I)g0.pd, ph = (I)g0.ph, pw = (I)g0.pw;\n"
               "    const I dd = (I)g0.dd, dh = (I)g0.dh, dw = (I)g0.dw;\n"
               "    const I KK = kd * kh * kw, L = OD * OH * OW;\n")
_GRID_LOOP = ("    for (I i = (I)(blockIdx.x * blockDim.x + threadIdx.x); i < n; "
              "i += (I)(blockDim.x * gridDim.x)) {\n")
CONV_BODIES = (
    "template <class S, class I> __device__ __forceinline__ void ptc_im2col_body(I n, S* col, "
    "const S* x, const ptc_convgeo& g0) {\n" + _GEO_LOCALS + _GRID_LOOP +
    "        const I l = i % L, r = i / L, kk = r % KK, nc = r / KK;\n"
    "        const I ow = l % OW, t = l / OW, oh = t % OH, od = t / OH;\n"
    "        const I kx = kk % kw, t2 = kk / kw, ky = t2 % kh, kz = t2 / kh;\n"
    "        const I id = od * sd - pd + kz * dd;\n"
    "        const I ih = oh * sh - ph + ky * dh;\n"
    "        const I iw = ow * sw - pw + kx * dw;\n"
    "        S v = (S)0;\n"
    "        if (id >= 0 && id < D && ih >= 0 && ih < H && iw >= 0 && iw < W)\n"
    "            v = x[((nc * D + id) * H + ih) * W + iw];\n"
    "        col[i] = v;\n"
    "    }\n}\n"
    "template <class S, class I> __device__ __forceinline__ void ptc_col2im_body(I n, S* x, "
    "const S* col, const ptc_convgeo& g0) {\n" + _GEO_LOCALS + _GRID_LOOP +
    "        const I w = i % W, t = i / W, h = t % H, t2 = t / H;\n"
    "        const I d = t2 % D, nc = t2 / D;\n"
    "        S acc = (S)0;\n"
    "        for (I kz = 0; kz < kd; ++kz) {\n"
    "            const I zd = d + pd - kz * dd;\n"
    "            if (zd < 0 || zd % sd != 0 || zd / sd >= OD) continue;\n"
    "            for (I ky = 0; ky < kh; ++ky) {\n"
    "                const I zh = h + ph - ky * dh;\n"
    "                if (zh < 0 || zh % sh != 0 || zh / sh >= OH) continue;\n"
    "                for (I kx = 0; kx < kw; ++kx) {\n"
    "                    const I zw = w + pw - kx * dw;\n"
    "                    if (zw < 0 || zw % sw != 0 || zw / sw >= OW) continue;\n"
    "                    const I kk = (kz * kh + ky) * kw + kx;\n"
    "                    const I l = ((zd / sd) * OH + zh / sh) * OW + zw / sw;\n"
    "                    acc += col[(nc * KK + kk) * L + l];\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "        x[i] = acc;\n"
    "    }\n}\n")

NN_PRELUDE = (
    "struct ptc_convgeo { long long " + ", ".join(CONV_FIELDS) + "; };\n"
    "struct ptc_poolgeo { long long " + ", ".join(POOL_FIELDS) + "; };\n"
    "struct ptc_adamargs { double " + ", ".join(ADAM_FIELDS) + "; long long "
    + ", ".join(_ADAM_FLAGS) + "; };\n"
    "struct ptc_sgdargs { double " + ", ".join(SGD_FIELDS) + "; long long "
    + ", ".join(SGD_FLAGS) + "; };\n"
    + CONV_BODIES
)
FAMILY_PRELUDE = {"nnconv": NN_PRELUDE, "nnpool": NN_PRELUDE, "nnoptim": NN_PRELUDE,
                  "nnnorm": K.REDUCE_OPS}


def _S(dt):
    return K._storage(dt)


def _ld(dt, e):
    return K._load(dt, e)


def _st(dt, e):
    return K._store(dt, e)


def _acc(dt):
    return "double" if dt == "float64" else "float"


# ---------------------------------------------------------------------------
# convolution: im2col / col2im
# ---------------------------------------------------------------------------

_FITS32 = "{a} < (1LL << 30) && {b} < (1LL << 30)"


def _im2col(dt):
    tag = K.TAGS[dt]
    name = f"ptc_nnconv_im2col_{tag}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* col, const {S}* x, ptc_convgeo g) {{\n'
        f"    const long long per = g.C * g.kd * g.kh * g.kw * g.OD * g.OH * g.OW;\n"
        f"    const long long xn = per > 0 ? (n / per) * g.C * g.D * g.H * g.W : 0;\n"
        f"    if ({_FITS32.format(a='n', b='xn')}) ptc_im2col_body<{S}, int>((int)n, col, x, g);\n"
        f"    else ptc_im2col_body<{S}, long long>(n, col, x, g);\n}}\n")


def _col2im(dt):
    tag = K.TAGS[dt]
    name = f"ptc_nnconv_col2im_{tag}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* x, const {S}* col, ptc_convgeo g) {{\n'
        f"    const long long per = g.C * g.D * g.H * g.W;\n"
        f"    const long long cn = per > 0 ? (n / per) * g.C * g.kd * g.kh * g.kw * g.OD * g.OH * g.OW : 0;\n"
        f"    if ({_FITS32.format(a='n', b='cn')}) ptc_col2im_body<{S}, int>((int)n, x, col, g);\n"
        f"    else ptc_col2im_body<{S}, long long>(n, x, col, g);\n}}\n")


# ---------------------------------------------------------------------------
# pooling over window tables
# ---------------------------------------------------------------------------
_WIN = ("    const long long NW = g.OD + g.OH + g.OW;\n"
        "    const long long* s = win;\n"
        "    const long long* e = win + NW;\n"
        "    const long long* f = win + 2 * NW;\n"
        "    const long long pin = g.D * g.H * g.W, pout = g.OD * g.OH * g.OW;\n"
        "    (void)f; (void)pin;\n")
_POS = ("        const long long ow = o % g.OW, t = o / g.OW, oh = t % g.OH, od = t / g.OH;\n"
        "        const long long s0 = s[od], e0 = e[od], s1 = s[g.OD + oh], e1 = e[g.OD + oh];\n"
        "        const long long s2 = s[g.OD + g.OH + ow], e2 = e[g.OD + g.OH + ow];\n")


def _maxfwd(dt):
    name = f"ptc_nnpool_maxfwd_{K.TAGS[dt]}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* y, long long* ind, const {S}* x, '
        f"const long long* win, ptc_poolgeo g) {{\n{_WIN}"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long p = i / pout, o = i % pout;\n{_POS}"
        f"        const {S}* xp = x + p * pin;\n"
        f"        {S} m = -ptc_lim<{S}>::highest();\n"
        f"        long long best = (s0 * g.H + s1) * g.W + s2;\n"
        f"        for (long long a = s0; a < e0; a += g.stepd)\n"
        f"            for (long long b = s1; b < e1; b += g.steph) {{\n"
        f"                const long long idx = (a * g.H + b) * g.W;\n"
        f"                for (long long c = s2; c < e2; c += g.stepw) {{\n"
        f"                    const {S} v = xp[idx + c];\n"
        f"                    if (v > m || ptc_isnan(v)) {{ m = v; best = idx + c; }}\n"
        f"                }}\n"
        f"            }}\n"
        f"        y[i] = m;\n"
        f"        ind[i] = best;\n"
        f"    }}\n}}\n")


def _maxbwd(dt):
    name = f"ptc_nnpool_maxbwd_{K.TAGS[dt]}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* gx, const {S}* gy, const long long* ind, '
        f"long long pin, long long pout) {{\n"
        f"    PTC_FOR(p, n) {{\n"
        f"        {S}* gp = gx + p * pin;\n"
        f"        for (long long j = 0; j < pin; ++j) gp[j] = ({S})0;\n"
        f"        for (long long o = 0; o < pout; ++o) {{\n"
        f"            const long long k = ind[p * pout + o];\n"
        f"            if (k >= 0 && k < pin) gp[k] += gy[p * pout + o];\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _maxgather(dt):
    """The max-pool input gradient gathered: one thread per input element sums,
    over the outputs whose windows can hold it (the per-dim ranges ``lo``/``hi``
    after the window table), the ``gy`` whose argmax it is -- in increasing
    output order, the order of the per-plane scatter, so the sums round alike;
    coalesced, every thread busy, no zero pass."""
    name = f"ptc_nnpool_maxgather_{K.TAGS[dt]}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* gx, const {S}* gy, '
        f"const long long* ind, const long long* win, ptc_poolgeo g) {{\n{_WIN}"
        f"    const long long* lo = win + 3 * NW;\n"
        f"    const long long* hi = lo + g.D + g.H + g.W;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long p = i / pin, q = i % pin;\n"
        f"        const long long w = q % g.W, t = q / g.W, h = t % g.H, d = t / g.H;\n"
        f"        const long long* ip = ind + p * pout;\n"
        f"        const {S}* gp = gy + p * pout;\n"
        f"        {S} acc = ({S})0;\n"
        f"        for (long long od = lo[d]; od < hi[d]; ++od)\n"
        f"            for (long long oh = lo[g.D + h]; oh < hi[g.D + h]; ++oh)\n"
        f"                for (long long ow = lo[g.D + g.H + w]; ow < hi[g.D + g.H + w]; ++ow) {{\n"
        f"                    const long long o = (od * g.OH + oh) * g.OW + ow;\n"
        f"                    if (ip[o] == q) acc += gp[o];\n"
        f"                }}\n"
        f"        gx[i] = acc;\n"
        f"    }}\n}}\n")


def _avgfwd(dt):
    name = f"ptc_nnpool_avgfwd_{K.TAGS[dt]}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* y, const {S}* x, '
        f"const long long* win, ptc_poolgeo g) {{\n{_WIN}"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long p = i / pout, o = i % pout;\n{_POS}"
        f"        if (e0 <= s0 || e1 <= s1 || e2 <= s2) {{ y[i] = ({S})0; continue; }}\n"
        f"        const long long div = g.div ? g.div : f[od] * f[g.OD + oh] * f[g.OD + g.OH + ow];\n"
        f"        const {S}* xp = x + p * pin;\n"
        f"        {S} acc = ({S})0;\n"
        f"        for (long long a = s0; a < e0; ++a)\n"
        f"            for (long long b = s1; b < e1; ++b) {{\n"
        f"                const long long idx = (a * g.H + b) * g.W;\n"
        f"                for (long long c = s2; c < e2; ++c) acc = acc + xp[idx + c];\n"
        f"            }}\n"
        f"        y[i] = acc / ({S})div;\n"
        f"    }}\n}}\n")


def _avgbwd(dt):
    name = f"ptc_nnpool_avgbwd_{K.TAGS[dt]}"
    S = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* gx, const {S}* gy, '
        f"const long long* win, ptc_poolgeo g) {{\n{_WIN}"
        f"    PTC_FOR(p, n) {{\n"
        f"        {S}* gp = gx + p * pin;\n"
        f"        for (long long j = 0; j < pin; ++j) gp[j] = ({S})0;\n"
        f"        for (long long o = 0; o < pout; ++o) {{\n{_POS}"
        f"            if (e0 <= s0 || e1 <= s1 || e2 <= s2) continue;\n"
        f"            const long long div = g.div ? g.div : f[od] * f[g.OD + oh] * f[g.OD + g.OH + ow];\n"
        f"            const {S} v = gy[p * pout + o] / ({S})div;\n"
        f"            for (long long a = s0; a < e0; ++a)\n"
        f"                for (long long b = s1; b < e1; ++b) {{\n"
        f"                    const long long idx = (a * g.H + b) * g.W;\n"
        f"                    for (long long c = s2; c < e2; ++c) gp[idx + c] += v;\n"
        f"                }}\n"
        f"        }}\n"
        f"    }}\n}}\n")


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------

def _nll(dt):
    tag = K.TAGS[dt]
    S, A = _S(dt), _acc(dt)
    fwd = f"ptc_nnloss_nllfwd_{tag}"
    bwd = f"ptc_nnloss_nllbwd_{tag}"
    yield fwd, (
        f'extern "C" __global__ void {fwd}(long long n, {S}* loss, {S}* wsum, const {S}* logp, '
        f"const long long* target, const {S}* weight, long long C, long long S, long long ignore, "
        f"int* err) {{\n"
        f"    typedef {A} A;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long t = target[i];\n"
        f"        if (t == ignore || t < 0 || t >= C) {{\n"
        f"            if (t != ignore) atomicExch(err, 1);\n"
        f"            loss[i] = {_st(dt, '(A)0')};\n"
        f"            wsum[i] = {_st(dt, '(A)0')};\n"
        f"            continue;\n"
        f"        }}\n"
        f"        const A w = weight ? (A){_ld(dt, 'weight[t]')} : (A)1;\n"
        f"        const A v = (A){_ld(dt, 'logp[((i / S) * C + t) * S + i % S]')};\n"
        f"        loss[i] = {_st(dt, '-(v * w)')};\n"
        f"        wsum[i] = {_st(dt, 'w')};\n"
        f"    }}\n}}\n")
    yield bwd, (
        f'extern "C" __global__ void {bwd}(long long n, {S}* gin, const {S}* g, long long gstride, '
        f"const long long* target, const {S}* weight, long long C, long long S, long long ignore) {{\n"
        f"    typedef {A} A;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long t = target[i];\n"
        f"        if (t == ignore || t < 0 || t >= C) continue;\n"
        f"        const A w = weight ? (A){_ld(dt, 'weight[t]')} : (A)1;\n"
        f"        const A gv = (A){_ld(dt, 'g[i * gstride]')};\n"
        f"        gin[((i / S) * C + t) * S + i % S] = {_st(dt, '-(w * gv)')};\n"
        f"    }}\n}}\n")


# ---------------------------------------------------------------------------
# embedding
# ---------------------------------------------------------------------------

def _embed(dt):
    tag = K.TAGS[dt]
    S, A = _S(dt), _acc(dt)
    fwd, bwd, cnt = (f"ptc_nnembed_{k}_{tag}" for k in ("fwd", "bwd", "count"))
    yield fwd, (
        f'extern "C" __global__ void {fwd}(long long n, {S}* out, const {S}* w, const long long* idx, '
        f"long long D) {{\n"
        f"    PTC_FOR(i, n) out[i] = w[idx[i / D] * D + i % D];\n}}\n")
    yield bwd, (
        f'extern "C" __global__ void {bwd}(long long n, {S}* gw, const {S}* g, const long long* idx, '
        f"const {S}* counts, long long D, long long padding_idx) {{\n"
        f"    typedef {A} A;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long r = idx[i / D];\n"
        f"        if (r == padding_idx) continue;\n"
        f"        A v = (A){_ld(dt, 'g[i]')};\n"
        f"        if (counts) v = v * ((A)1 / (A){_ld(dt, 'counts[r]')});\n"
        f"        ptc_atomic_add(gw + r * D + i % D, v);\n"
        f"    }}\n}}\n")
    yield cnt, (
        f'extern "C" __global__ void {cnt}(long long n, {S}* counts, const long long* idx) {{\n'
        f"    PTC_FOR(i, n) ptc_atomic_add(counts + idx[i], "
        f"{'1.0' if dt == 'float64' else '1.0f'});\n}}\n")


# ---------------------------------------------------------------------------
# activation gradients: grad_input(g, x), parameters in p.  (Kept: the kernels'
# source; ptcore.cuda.ops.nn reads the activations' names from it.)
# ---------------------------------------------------------------------------
ACT_BACKWARD = {
    "gelu": "g * ((T)0.5 * ((T)1 + FN(erf)(x * (T)0.70710678118654752440)) "
            "+ x * FN(exp)((T)-0.5 * x * x) * (T)0.39894228040143267794)",
    "gelu_tanh": "ptc_gelu_tanh_bwd<T>(g, x)",
    "silu": "ptc_silu_bwd<T>(g, x)",
    # p.d0 negcoef (alpha), p.d1 input_scale, p.d2 poscoef (scale)
    "elu": "(x <= (T)0 ? g * ((T)p.d1 * (T)p.d0) * FN(exp)(x * (T)p.d1) : g * (T)p.d2)",
    # p.d0 beta, p.d1 threshold
    "softplus": "ptc_softplus_bwd<T>(g, x, (T)p.d0, (T)p.d1)",
    # p.d0 slope
    "leaky_relu": "(x > (T)0 ? g : g * (T)p.d0)",
    # p.d0 min, p.d1 max
    "hardtanh": "((x <= (T)p.d0 || x >= (T)p.d1) ? g * (T)0 : g)",
    "hardsigmoid": "((x > (T)-3 && x < (T)3) ? g / (T)6 : g * (T)0)",
    "hardswish": "(x <= (T)-3 ? g * (T)0 : (x < (T)3 ? g * (x / (T)3 + (T)0.5) : g))",
    "mish": "ptc_mish_bwd<T>(g, x)",
    # logsigmoid: g * sigmoid(-x)
    "logsigmoid": "g / ((T)1 + FN(exp)(x))",
}
ACT_HELPERS = r"""
template <class T> __device__ __forceinline__ T ptc_gelu_tanh_bwd(T g, T x) {
    const T kBeta = (T)0.79788456080286535588, kKappa = (T)0.044715;
    const T x_sq = x * x, x_cube = x_sq * x;
    const T inner = kBeta * (x + kKappa * x_cube);
    const T th = tanh(inner);
    const T left = (T)0.5 * x, right = (T)1 + th;
    const T left_d = (T)0.5 * right;
    const T right_d = left * ((T)1 - th * th) * (kBeta * ((T)1 + (T)3 * kKappa * x_sq));
    return g * (left_d + right_d);
}
template <class T> __device__ __forceinline__ T ptc_silu_bwd(T g, T x) {
    const T s = (T)1 / ((T)1 + exp(-x));
    return g * s * ((T)1 + x * ((T)1 - s));
}
template <class T> __device__ __forceinline__ T ptc_mish_bwd(T g, T x) {
    const T sp = x > (T)20 ? x : log1p(exp(x));
    const T t = tanh(sp);
    const T s = (T)1 / ((T)1 + exp(-x));
    return g * (t + x * s * ((T)1 - t * t));
}
template <class T> __device__ __forceinline__ T ptc_softplus_bwd(T g, T x, T beta, T threshold) {
    const T z = exp(x * beta);
    return (x * beta > threshold) ? g : g * z / (z + (T)1);
}
"""
FAMILY_PRELUDE["nnact"] = ACT_HELPERS


def _act():
    for op, expr in ACT_BACKWARD.items():
        for dt in K.FLOATS:
            e = K._fn(expr, dt)
            for v in ("c", "s"):
                kn = K.kernel_name("nnact", op, K.TAGS[dt], v)
                yield kn, K._ew_kernel(kn, dt, [dt, dt], ["g", "x"], dt, e, v)


# ---------------------------------------------------------------------------
# layer norm (rows of L elements)
# ---------------------------------------------------------------------------

def _layer_norm(dt):
    tag = K.TAGS[dt]
    S, A = _S(dt), _acc(dt)
    fwd, bwd, wb = (f"ptc_nnnorm_{k}_{tag}" for k in ("lnfwd", "lnbwd", "lnwb"))
    x = f"(A){_ld(dt, 'xr[j]')}"
    yield fwd, (
        f'extern "C" __global__ void {fwd}(long long M, long long L, {S}* y, {S}* mean, {S}* rstd, '
        f"const {S}* x, const {S}* w, const {S}* b, double eps) {{\n"
        f"    typedef {A} A;\n"
        f"    __shared__ A sm[32];\n"
        f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
        f"        const {S}* xr = x + r * L;\n"
        f"        A s = (A)0;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) s += {x};\n"
        f"        s = ptc_block_allreduce<ptc_r_sum<A> >(s, sm);\n"
        f"        const A mu = s / (A)L;\n"
        f"        A q = (A)0;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{ A d = {x} - mu; q += d * d; }}\n"
        f"        q = ptc_block_allreduce<ptc_r_sum<A> >(q, sm);\n"
        f"        const A rs = (A)1 / sqrt(q / (A)L + (A)eps);\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            A v = ({x} - mu) * rs;\n"
        f"            if (w) v = v * (A){_ld(dt, 'w[j]')};\n"
        f"            if (b) v = v + (A){_ld(dt, 'b[j]')};\n"
        f"            y[r * L + j] = {_st(dt, 'v')};\n"
        f"        }}\n"
        f"        if (threadIdx.x == 0) {{ mean[r] = {_st(dt, 'mu')}; rstd[r] = {_st(dt, 'rs')}; }}\n"
        f"    }}\n}}\n")
    yield bwd, (
        f'extern "C" __global__ void {bwd}(long long M, long long L, {S}* gx, const {S}* g, '
        f"const {S}* x, const {S}* mean, const {S}* rstd, const {S}* w) {{\n"
        f"    typedef {A} A;\n"
        f"    __shared__ A sm[32];\n"
        f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
        f"        const {S}* xr = x + r * L;\n"
        f"        const {S}* gr = g + r * L;\n"
        f"        const A mu = (A){_ld(dt, 'mean[r]')}, rs = (A){_ld(dt, 'rstd[r]')};\n"
        f"        A s1 = (A)0, s2 = (A)0;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            A dy = (A){_ld(dt, 'gr[j]')};\n"
        f"            if (w) dy = dy * (A){_ld(dt, 'w[j]')};\n"
        f"            s1 += dy; s2 += dy * ({x} - mu) * rs;\n"
        f"        }}\n"
        f"        s1 = ptc_block_allreduce<ptc_r_sum<A> >(s1, sm);\n"
        f"        s2 = ptc_block_allreduce<ptc_r_sum<A> >(s2, sm);\n"
        f"        const A m1 = s1 / (A)L, m2 = s2 / (A)L;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            A dy = (A){_ld(dt, 'gr[j]')};\n"
        f"            if (w) dy = dy * (A){_ld(dt, 'w[j]')};\n"
        f"            const A xh = ({x} - mu) * rs;\n"
        f"            gx[r * L + j] = {_st(dt, 'rs * (dy - m1 - xh * m2)')};\n"
        f"        }}\n"
        f"    }}\n}}\n")
    sm = f"ptc_nnnorm_smbwd_{tag}"
    yield sm, (
        f'extern "C" __global__ void {sm}(long long M, long long L, {S}* gx, const {S}* g, '
        f"const {S}* y, long long logsm) {{\n"
        f"    typedef {A} A;\n"
        f"    __shared__ A sm[32];\n"
        f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
        f"        const {S}* gr = g + r * L;\n"
        f"        const {S}* yr = y + r * L;\n"
        f"        A s = (A)0;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            const A gv = (A){_ld(dt, 'gr[j]')};\n"
        f"            s += logsm ? gv : gv * (A){_ld(dt, 'yr[j]')};\n"
        f"        }}\n"
        f"        s = ptc_block_allreduce<ptc_r_sum<A> >(s, sm);\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            const A gv = (A){_ld(dt, 'gr[j]')}, yv = (A){_ld(dt, 'yr[j]')};\n"
        f"            gx[r * L + j] = {_st(dt, 'logsm ? gv - exp(yv) * s : yv * (gv - s)')};\n"
        f"        }}\n"
        f"    }}\n}}\n")
    # pass 1: block b covers blockDim.x columns (group b % ncg) of the rows of chunk
    # c = b / ncg (Mc rows each; the grid loops over the ncg * k blocks); a thread sums
    # its column's g * xhat and g over the chunk, written to gw / gb when k == 1, else to
    # row c of the (k, L) partials pw / pb in the accumulation type (pass 2: lnwb2)
    yield wb, (
        f'extern "C" __global__ void {wb}(long long L, long long M, long long Mc, long long k, '
        f"{S}* gw, {S}* gb, {A}* pw, {A}* pb, const {S}* g, const {S}* x, const {S}* mean, "
        f"const {S}* rstd) {{\n"
        f"    typedef {A} A;\n"
        f"    const long long ncg = (L + blockDim.x - 1) / blockDim.x;\n"
        f"    for (long long b = blockIdx.x; b < ncg * k; b += gridDim.x) {{\n"
        f"        const long long j = (b % ncg) * blockDim.x + threadIdx.x, c = b / ncg;\n"
        f"        if (j >= L) continue;\n"
        f"        const long long r1 = (c + 1) * Mc < M ? (c + 1) * Mc : M;\n"
        f"        A sw = (A)0, sb = (A)0;\n"
        f"        for (long long r = c * Mc; r < r1; ++r) {{\n"
        f"            const A gv = (A){_ld(dt, 'g[r * L + j]')};\n"
        f"            const A xh = ((A){_ld(dt, 'x[r * L + j]')} - (A){_ld(dt, 'mean[r]')}) * "
        f"(A){_ld(dt, 'rstd[r]')};\n"
        f"            sw += gv * xh; sb += gv;\n"
        f"        }}\n"
        f"        if (k == 1) {{\n"
        f"            if (gw) gw[j] = {_st(dt, 'sw')};\n"
        f"            if (gb) gb[j] = {_st(dt, 'sb')};\n"
        f"        }} else {{\n"
        f"            if (gw) pw[c * L + j] = sw;\n"
        f"            if (gb) pb[c * L + j] = sb;\n"
        f"        }}\n"
        f"    }}\n}}\n")
    wb2 = f"ptc_nnnorm_lnwb2_{tag}"
    yield wb2, (
        f'extern "C" __global__ void {wb2}(long long L, long long k, {S}* gw, {S}* gb, '
        f"const {A}* pw, const {A}* pb) {{\n"
        f"    typedef {A} A;\n"
        f"    PTC_FOR(j, L) {{\n"
        f"        A sw = (A)0, sb = (A)0;\n"
        f"        for (long long c = 0; c < k; ++c) {{\n"
        f"            if (gw) sw += pw[c * L + j];\n"
        f"            if (gb) sb += pb[c * L + j];\n"
        f"        }}\n"
        f"        if (gw) gw[j] = {_st(dt, 'sw')};\n"
        f"        if (gb) gb[j] = {_st(dt, 'sb')};\n"
        f"    }}\n}}\n")


# ---------------------------------------------------------------------------
# Adam / AdamW step (ptcore/_ops/kernels/_optim.pyx's formula, in the parameter's type)
# ---------------------------------------------------------------------------

def _adam(dt):
    name = f"ptc_nnoptim_adam_{K.TAGS[dt]}"
    T = _S(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {T}* p, const {T}* g, {T}* m, {T}* v, '
        f"{T}* vmax, ptc_params, ptc_adamargs a) {{\n"
        f"    typedef {T} T;\n"
        f"    const T w1 = (T)a.one_m_beta1, b2 = (T)a.beta2, w2 = (T)a.one_m_beta2, wd = (T)a.wd;\n"
        f"    const T decay = (T)a.decay, bc2s = (T)a.bc2s, eps = (T)a.eps, neg_step = (T)a.neg_step;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        T gi = g[i];\n"
        f"        if (a.maximize) gi = -gi;\n"
        f"        if (a.decoupled) p[i] = p[i] * decay;\n"
        f"        else if (a.l2) gi = gi + wd * p[i];\n"
        f"        const T m0 = m[i], dd = gi - m0;\n"
        f"        const T mi = (fabs((double)w1) < 0.5) ? m0 + w1 * dd : gi - dd * ((T)1 - w1);\n"
        f"        m[i] = mi;\n"
        f"        T vi = v[i] * b2;\n"
        f"        vi = vi + w2 * gi * gi;\n"
        f"        v[i] = vi;\n"
        f"        if (vmax) {{\n"
        f"            if (vi > vmax[i] || ptc_isnan(vi)) vmax[i] = vi;\n"
        f"            vi = vmax[i];\n"
        f"        }}\n"
        f"        T d = sqrt(vi) / bc2s;\n"
        f"        d = d + eps;\n"
        f"        p[i] = p[i] + neg_step * (mi / d);\n"
        f"    }}\n}}\n")


def _sgd(dt):
    """SGD with momentum: the unfused ``buf.mul_(m).add_(g, alpha=1 - d)``,
    ``param.add_(buf, alpha=-lr)`` (Nesterov: ``g.add(buf, alpha=m)``) with
    each op's expression -- ``add_alpha``'s ``x + (T)alpha * y`` (contracted
    to one FMA where the compiler contracts, as that kernel is) and the
    scalar ``mul``'s product, rounded by ``__fmul_rn``/``__dmul_rn`` so that
    it is not contracted into the add that follows it (the unfused ops store
    it rounded)."""
    name = f"ptc_nnoptim_sgd_{K.TAGS[dt]}"
    T = _S(dt)
    mul = "__fmul_rn" if dt == "float32" else "__dmul_rn"
    return name, (
        f'extern "C" __global__ void {name}(long long n, {T}* p, const {T}* g, {T}* b, '
        f"ptc_params, ptc_sgdargs a) {{\n"
        f"    typedef {T} T;\n"
        f"    const T nlr = (T)a.neg_lr, m = (T)a.momentum, d = (T)a.one_m_damp, wd = (T)a.wd;\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        T gi = g[i];\n"
        f"        if (a.maximize) gi = -gi;\n"
        f"        if (a.decay) gi = gi + wd * p[i];\n"
        f"        T bi = {mul}(b[i], m);\n"
        f"        bi = bi + d * gi;\n"
        f"        b[i] = bi;\n"
        f"        if (a.nesterov) gi = gi + m * bi;\n"
        f"        else gi = bi;\n"
        f"        p[i] = p[i] + nlr * gi;\n"
        f"    }}\n}}\n")


def generate():
    """``(name, family, source)`` of every nn kernel."""
    for dt in _CONV_DTYPES:
        for fn in (_im2col, _col2im):
            n, s = fn(dt)
            yield n, "nnconv", s
        for fn in (_maxfwd, _maxbwd, _maxgather, _avgfwd, _avgbwd):
            n, s = fn(dt)
            yield n, "nnpool", s
        n, s = _adam(dt)
        yield n, "nnoptim", s
        n, s = _sgd(dt)
        yield n, "nnoptim", s
    for dt in K.FLOATS:
        for n, s in _nll(dt):
            yield n, "nnloss", s
        for n, s in _embed(dt):
            yield n, "nnembed", s
        for n, s in _layer_norm(dt):
            yield n, "nnnorm", s
    for n, s in _act():
        yield n, "nnact", s
