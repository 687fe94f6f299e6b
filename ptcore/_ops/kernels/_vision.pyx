# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU kernels of torchvision's compiled detection ops (``torch.ops.torchvision``):
non-maximum suppression, RoIAlign, RoIPool and their position-sensitive forms,
forward and backward, computing what torchvision's own CPU kernels compute,
in the same order of operations (so float32 results agree to the bit where
the compilers evaluate the same expressions).

Every function takes contiguous tensors of the shapes its docstring names
(the caller, ``ptcore._torchvision_ops``, makes them so) and checks what the
loops index with: a RoI's batch index must name a batch element of the input
(torchvision reads out of bounds otherwise), argmax and channel-mapping
values must name an element of the input, and the sampling grids must fit in
an int.  Bad values raise RuntimeError/IndexError before any loop runs.
"""
from libc.math cimport floor, ceil, round as c_round, isfinite
from libc.stdint cimport int64_t, int32_t, uint8_t
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, ptc_scratch_calloc, scratch_bind
from libc.float cimport FLT_MAX

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64, PT_INT32
from ptcore._tensor cimport _TensorBase
scratch_bind()      # this module's scratch requests obey _fault's test switch

__all__ = ["nms", "roi_align_forward", "roi_align_backward", "roi_pool_forward",
           "roi_pool_backward", "ps_roi_align_forward", "ps_roi_align_backward",
           "ps_roi_pool_forward", "ps_roi_pool_backward"]

ctypedef fused real:
    float
    double

# the largest sampling grid side accepted (torchvision casts a larger one to int: UB)
cdef double _MAX_GRID = 1 << 20


cdef int _need(_TensorBase t, int num, Py_ssize_t numel, str what) except -1:
    if t._dtype.num != num or not t._is_contig() or t._numel != numel:
        raise RuntimeError(f"torchvision kernel: {what} does not fit (internal error)")
    return 0


cdef int _batch_indices(_TensorBase rois, Py_ssize_t n_batch, int64_t* out, str op) except -1:
    """rois[k, 0] as batch indices (truncated toward zero, as torchvision's
    int cast), each checked to name one of the n_batch elements."""
    cdef Py_ssize_t k, K = rois._numel // 5
    cdef double v
    cdef const float* pf = NULL
    cdef const double* pd = NULL
    if rois._dtype.num == PT_FLOAT32:
        pf = <const float*>rois._ptr()
    else:
        pd = <const double*>rois._ptr()
    for k in range(K):
        v = pf[k * 5] if pf != NULL else pd[k * 5]
        if not (v > -1.0 and v < <double>n_batch):
            raise IndexError(f"{op}: rois[{k}, 0] = {v} is not a batch index of the input "
                             f"(batch size {n_batch})")
        out[k] = <int64_t>v
    return 0


cdef int _grid(double v, int sampling_ratio, int* out, str op) except -1:
    """``sampling_ratio`` when positive, else ceil(v) (the adaptive grid side)."""
    cdef double g
    if sampling_ratio > 0:
        out[0] = sampling_ratio
        return 0
    g = ceil(v)
    if g != g:
        raise RuntimeError(f"{op}: a RoI's adaptive sampling grid is not a number (the RoI "
                           "has NaN or infinite coordinates; pass sampling_ratio > 0 to "
                           "sample it anyway)")
    if g > _MAX_GRID:
        raise RuntimeError(f"{op}: a RoI's adaptive sampling grid ({v} per bin) is too large")
    out[0] = <int>g if g > 0 else 0
    return 0


# ---------------------------------------------------------------------------
# non-maximum suppression
# ---------------------------------------------------------------------------

cdef Py_ssize_t _nms(const real* d, const int64_t* order, Py_ssize_t n, double thr,
                     int64_t* keep, uint8_t* sup, real* areas) noexcept nogil:
    cdef Py_ssize_t a, b, i, j, nk = 0
    cdef real ix1, iy1, ix2, iy2, iarea, xx1, yy1, xx2, yy2, w, h, inter, ovr, zero = 0
    for i in range(n):
        areas[i] = (d[4 * i + 2] - d[4 * i]) * (d[4 * i + 3] - d[4 * i + 1])
    for a in range(n):
        i = order[a]
        if sup[i]:
            continue
        keep[nk] = i
        nk += 1
        ix1 = d[4 * i]
        iy1 = d[4 * i + 1]
        ix2 = d[4 * i + 2]
        iy2 = d[4 * i + 3]
        iarea = areas[i]
        for b in range(a + 1, n):
            j = order[b]
            if sup[j]:
                continue
            if ix1 < d[4 * j]:                  # std::max(a, b): b if a < b
                xx1 = d[4 * j]
            else:
                xx1 = ix1
            if iy1 < d[4 * j + 1]:
                yy1 = d[4 * j + 1]
            else:
                yy1 = iy1
            if d[4 * j + 2] < ix2:              # std::min(a, b): b if b < a
                xx2 = d[4 * j + 2]
            else:
                xx2 = ix2
            if d[4 * j + 3] < iy2:
                yy2 = d[4 * j + 3]
            else:
                yy2 = iy2
            w = xx2 - xx1
            if zero < w:
                pass
            else:
                w = zero
            h = yy2 - yy1
            if zero < h:
                pass
            else:
                h = zero
            inter = w * h
            ovr = inter / (iarea + areas[j] - inter)
            if ovr > thr:
                sup[j] = 1
    return nk


def nms(_TensorBase dets not None, _TensorBase order not None, double iou_threshold,
        _TensorBase keep not None):
    """Greedy NMS of ``dets`` (n, 4) boxes (x1, y1, x2, y2) visited in ``order``
    (int64, the scores' descending order): the kept indices are written to
    ``keep`` (int64, n); returns how many."""
    cdef Py_ssize_t n = order._numel, i
    cdef int num = dets._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise RuntimeError("nms: boxes must be float32 or float64")
    _need(dets, num, 4 * n, "boxes")
    _need(order, PT_INT64, n, "order")
    _need(keep, PT_INT64, n, "keep")
    cdef const int64_t* po = <const int64_t*>order._ptr()
    for i in range(n):
        if po[i] < 0 or po[i] >= n:
            raise RuntimeError("nms: order is not a permutation (internal error)")
    cdef char* pd = dets._ptr()
    cdef int64_t* pk = <int64_t*>keep._ptr()
    cdef Py_ssize_t nk
    cdef uint8_t* sup = <uint8_t*>ptc_scratch_calloc(n if n > 0 else 1, 1)
    cdef void* areas = ptc_scratch_malloc((n if n > 0 else 1) * dets._dtype.itemsize)
    try:
        if sup == NULL or areas == NULL:
            raise MemoryError("nms: no memory for the suppression flags")
        with nogil:
            if num == PT_FLOAT32:
                nk = _nms(<const float*>pd, po, n, iou_threshold, pk, sup, <float*>areas)
            else:
                nk = _nms(<const double*>pd, po, n, iou_threshold, pk, sup, <double*>areas)
    finally:
        free(sup)
        free(areas)
    return nk


# ---------------------------------------------------------------------------
# RoIAlign
# ---------------------------------------------------------------------------

cdef struct _Geom:
    Py_ssize_t N, C, H, W, PH, PW, K
    int sampling_ratio
    bint aligned


cdef inline void _bilinear_weights(real y, real x, Py_ssize_t H, Py_ssize_t W,
                                   real* w, Py_ssize_t* pos) noexcept nogil:
    """torchvision's bilinear_interpolate(_gradient) weights and the four
    pixel offsets at (y, x); pos[0] = -1 (weights 0) outside the map (NaN too)."""
    cdef Py_ssize_t y_low, x_low, y_high, x_high
    cdef real ly, lx, hy, hx
    if not (y >= -1.0 and y <= H and x >= -1.0 and x <= W):
        w[0] = 0
        w[1] = 0
        w[2] = 0
        w[3] = 0
        pos[0] = -1
        return
    if y <= 0:
        y = 0
    if x <= 0:
        x = 0
    y_low = <int>y
    x_low = <int>x
    if y_low >= H - 1:
        y_high = y_low = H - 1
        y = <real>y_low
    else:
        y_high = y_low + 1
    if x_low >= W - 1:
        x_high = x_low = W - 1
        x = <real>x_low
    else:
        x_high = x_low + 1
    ly = y - y_low
    lx = x - x_low
    hy = 1. - ly
    hx = 1. - lx
    w[0] = hy * hx
    w[1] = hy * lx
    w[2] = ly * hx
    w[3] = ly * lx
    pos[0] = y_low * W + x_low
    pos[1] = y_low * W + x_high
    pos[2] = y_high * W + x_low
    pos[3] = y_high * W + x_high


cdef inline void _roi_box(const real* r, real scale, real off, bint clamp1,
                          real* start_h, real* start_w, real* rh, real* rw) noexcept nogil:
    cdef real sw = r[1] * scale - off, sh = r[2] * scale - off
    cdef real ew = r[3] * scale - off, eh = r[4] * scale - off
    rw[0] = ew - sw
    rh[0] = eh - sh
    if clamp1:              # std::max(v, 1): 1 when v < 1 (NaN stays)
        if rw[0] < <real>1.:
            rw[0] = 1.
        if rh[0] < <real>1.:
            rh[0] = 1.
    start_h[0] = sh
    start_w[0] = sw


cdef int _grids(const real* rois, Py_ssize_t K, real scale, real off, bint clamp1,
                Py_ssize_t PH, Py_ssize_t PW, int sampling_ratio, int* gh, int* gw,
                str op) except -1:
    cdef Py_ssize_t k
    cdef real sh, sw, rh, rw
    for k in range(K):
        _roi_box(rois + 5 * k, scale, off, clamp1, &sh, &sw, &rh, &rw)
        _grid(<double>(rh / PH), sampling_ratio, &gh[k], op)
        _grid(<double>(rw / PW), sampling_ratio, &gw[k], op)
        if <double>gh[k] * gw[k] * PH * PW > 1e12:
            raise RuntimeError(f"{op}: the sampling grid of RoI {k} is too large")
    return 0


cdef inline real _sample_y(real start, Py_ssize_t p, real bin_size, int i, int g) noexcept nogil:
    # roi_start + p * bin_size + (i + .5f) * bin_size / g, evaluated left to right
    return start + p * bin_size + <real>(<float>i + <float>.5) * bin_size / <real>g


cdef void _precalc(const real* roi, const int* gh, const int* gw, _Geom* G, real scale,
                   real* wts, Py_ssize_t* pos) noexcept nogil:
    """The bilinear weights and pixel offsets of every sampling point of one RoI, in the
    order (ph, pw, iy, ix) (torchvision's pre_calc); pos[4 i] = -1 for a point outside
    the map."""
    cdef Py_ssize_t ph, pw, iy, ix, idx = 0
    cdef real off = 0.5 if G.aligned else 0.0
    cdef real sh, sw, rh, rw, bh, bw, y, x
    _roi_box(roi, scale, off, not G.aligned, &sh, &sw, &rh, &rw)
    bh = rh / <real>G.PH
    bw = rw / <real>G.PW
    for ph in range(G.PH):
        for pw in range(G.PW):
            for iy in range(gh[0]):
                y = _sample_y(sh, ph, bh, <int>iy, gh[0])
                for ix in range(gw[0]):
                    x = _sample_y(sw, pw, bw, <int>ix, gw[0])
                    _bilinear_weights(y, x, G.H, G.W, wts + 4 * idx, pos + 4 * idx)
                    idx += 1


cdef int _alloc_precalc(const int* gh, const int* gw, _Geom* G, real** wts,
                        Py_ssize_t** pos) except -1 nogil:
    """Buffers for the largest RoI's sampling points (the caller frees them)."""
    cdef Py_ssize_t n, m = 1
    for n in range(G.K):
        if <Py_ssize_t>gh[n] * gw[n] * G.PH * G.PW > m:
            m = <Py_ssize_t>gh[n] * gw[n] * G.PH * G.PW
    wts[0] = <real*>ptc_scratch_malloc(m * 4 * sizeof(real))
    pos[0] = <Py_ssize_t*>ptc_scratch_malloc(m * 4 * sizeof(Py_ssize_t))
    if wts[0] == NULL or pos[0] == NULL:
        free(wts[0])
        free(pos[0])
        with gil:
            raise MemoryError("roi_align: no memory for the sampling weights")
    return 0


cdef int _roi_align_fwd(const real* inp, const real* rois, const int64_t* bidx,
                        const int* gh, const int* gw, _Geom* G, real scale,
                        real* out) except -1 nogil:
    cdef Py_ssize_t n, c, ph, pw, i, idx, npts, HW = G.H * G.W
    cdef real count, val
    cdef const real* src
    cdef real* wts = NULL
    cdef Py_ssize_t* pos = NULL
    _alloc_precalc(gh, gw, G, &wts, &pos)
    for n in range(G.K):
        count = <real>(gh[n] * gw[n] if gh[n] * gw[n] > 1 else 1)
        npts = <Py_ssize_t>gh[n] * gw[n]
        _precalc(rois + 5 * n, gh + n, gw + n, G, scale, wts, pos)
        for i in range(npts * G.PH * G.PW):
            if pos[4 * i] < 0:          # (outside: weight 0 times pixel 0, as torchvision)
                pos[4 * i] = 0
                pos[4 * i + 1] = 0
                pos[4 * i + 2] = 0
                pos[4 * i + 3] = 0
        for c in range(G.C):
            src = inp + (bidx[n] * G.C + c) * HW
            idx = 0
            for ph in range(G.PH):
                for pw in range(G.PW):
                    val = 0.
                    for i in range(npts):
                        val += wts[4 * idx] * src[pos[4 * idx]] + \
                            wts[4 * idx + 1] * src[pos[4 * idx + 1]] + \
                            wts[4 * idx + 2] * src[pos[4 * idx + 2]] + \
                            wts[4 * idx + 3] * src[pos[4 * idx + 3]]
                        idx += 1
                    val /= count
                    out[((n * G.C + c) * G.PH + ph) * G.PW + pw] = val
    free(wts)
    free(pos)
    return 0


cdef int _roi_align_bwd(const real* grad, const real* rois, const int64_t* bidx,
                        const int* gh, const int* gw, _Geom* G, real scale,
                        real* gin) except -1 nogil:
    # (the sampling weights computed once per RoI, not once per channel; the same
    # additions in the same order as torchvision's loop over the output elements)
    cdef Py_ssize_t n, c, ph, pw, i, idx, npts, HW = G.H * G.W
    cdef real count, g
    cdef real* dst
    cdef real* wts = NULL
    cdef Py_ssize_t* pos = NULL
    _alloc_precalc(gh, gw, G, &wts, &pos)
    for n in range(G.K):
        count = <real>(gh[n] * gw[n])
        npts = <Py_ssize_t>gh[n] * gw[n]
        _precalc(rois + 5 * n, gh + n, gw + n, G, scale, wts, pos)
        for c in range(G.C):
            dst = gin + (bidx[n] * G.C + c) * HW
            idx = 0
            for ph in range(G.PH):
                for pw in range(G.PW):
                    g = grad[((n * G.C + c) * G.PH + ph) * G.PW + pw]
                    for i in range(npts):
                        if pos[4 * idx] >= 0:
                            dst[pos[4 * idx]] += g * wts[4 * idx] / count
                            dst[pos[4 * idx + 1]] += g * wts[4 * idx + 1] / count
                            dst[pos[4 * idx + 2]] += g * wts[4 * idx + 2] / count
                            dst[pos[4 * idx + 3]] += g * wts[4 * idx + 3] / count
                        idx += 1
    free(wts)
    free(pos)
    return 0


cdef int _setup(_TensorBase x, _TensorBase img, _TensorBase rois, Py_ssize_t PH,
                Py_ssize_t PW, _Geom* G, int64_t** bidx, str op) except -1:
    """The geometry of a call: ``x`` the operand whose dtype the loops run in, ``img``
    the (N, C, H, W) input or input gradient (checked 4-D before its sizes are read),
    ``rois`` (K, 5) of ``x``'s dtype; the RoIs' batch indices, checked, in ``bidx[0]``."""
    cdef Py_ssize_t N, C, H, W
    if img._ndim != 4:
        raise RuntimeError(f"{op}: the input must be 4-D (N, C, H, W), got {img._ndim}-D")
    N, C, H, W = img._shape[0], img._shape[1], img._shape[2], img._shape[3]
    cdef int num = x._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise RuntimeError(f"{op}: only float32 and float64 are supported, got {x._dtype}")
    if rois._dtype.num != num or not rois._is_contig() or rois._numel % 5:
        raise RuntimeError(f"{op}: rois must be a contiguous (K, 5) tensor of the input's dtype")
    if N < 0 or C < 0 or H < 0 or W < 0 or PH <= 0 or PW <= 0:
        raise RuntimeError(f"{op}: sizes must be positive (pooled {PH}x{PW}, input "
                           f"{N}x{C}x{H}x{W})")
    G.N, G.C, G.H, G.W, G.PH, G.PW, G.K = N, C, H, W, PH, PW, rois._numel // 5
    bidx[0] = <int64_t*>ptc_scratch_malloc((G.K if G.K > 0 else 1) * sizeof(int64_t))
    if bidx[0] == NULL:
        raise MemoryError(f"{op}: no memory")
    _batch_indices(rois, N, bidx[0], op)
    return 0


def roi_align_forward(_TensorBase x not None, _TensorBase rois not None, double spatial_scale,
                      Py_ssize_t PH, Py_ssize_t PW, int sampling_ratio, bint aligned,
                      _TensorBase out not None):
    """``out`` (K, C, PH, PW) = RoIAlign of ``x`` (N, C, H, W) over ``rois`` (K, 5)."""
    cdef char* _p_out
    cdef char* _p_rois
    cdef char* _p_x
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef int* gh = NULL
    cdef int* gw = NULL
    cdef int num = x._dtype.num
    try:
        _setup(x, x, rois, PH, PW, &G, &bidx, "roi_align")
        G.sampling_ratio = sampling_ratio
        G.aligned = aligned
        _need(x, num, G.N * G.C * G.H * G.W, "input")
        _need(out, num, G.K * G.C * PH * PW, "output")
        if G.K * G.C == 0 or G.H * G.W == 0:
            if G.K * G.C and G.H * G.W == 0:
                raise RuntimeError("roi_align: the input has no pixels")
            return
        _grid_table(rois, G.K, spatial_scale, 0.5 if aligned else 0.0, not aligned, PH, PW,
                    sampling_ratio, &gh, &gw, "roi_align")
        _p_out = out._ptr()
        _p_rois = rois._ptr()
        _p_x = x._ptr()
        if num == PT_FLOAT32:
            with nogil:
                _roi_align_fwd(<const float*>_p_x, <const float*>_p_rois, bidx, gh, gw,
                               &G, <float>spatial_scale, <float*>_p_out)
        else:
            with nogil:
                _roi_align_fwd(<const double*>_p_x, <const double*>_p_rois, bidx, gh,
                               gw, &G, spatial_scale, <double*>_p_out)
    finally:
        free(bidx)
        free(gh)
        free(gw)


def roi_align_backward(_TensorBase grad not None, _TensorBase rois not None,
                       double spatial_scale, Py_ssize_t PH, Py_ssize_t PW, int sampling_ratio,
                       bint aligned, _TensorBase gin not None):
    """Add RoIAlign's input gradient for ``grad`` (K, C, PH, PW) into ``gin``
    (N, C, H, W, zeros)."""
    cdef char* _p_gin
    cdef char* _p_grad
    cdef char* _p_rois
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef int* gh = NULL
    cdef int* gw = NULL
    cdef int num = grad._dtype.num
    try:
        _setup(grad, gin, rois, PH, PW, &G, &bidx, "roi_align backward")
        G.sampling_ratio = sampling_ratio
        G.aligned = aligned
        _need(gin, num, G.N * G.C * G.H * G.W, "grad_input")
        _need(grad, num, G.K * G.C * PH * PW, "grad")
        if G.K * G.C == 0 or G.H * G.W == 0:
            return
        _grid_table(rois, G.K, spatial_scale, 0.5 if aligned else 0.0, not aligned, PH, PW,
                    sampling_ratio, &gh, &gw, "roi_align")
        _p_gin = gin._ptr()
        _p_grad = grad._ptr()
        _p_rois = rois._ptr()
        if num == PT_FLOAT32:
            with nogil:
                _roi_align_bwd(<const float*>_p_grad, <const float*>_p_rois, bidx, gh,
                               gw, &G, <float>spatial_scale, <float*>_p_gin)
        else:
            with nogil:
                _roi_align_bwd(<const double*>_p_grad, <const double*>_p_rois, bidx,
                               gh, gw, &G, spatial_scale, <double*>_p_gin)
    finally:
        free(bidx)
        free(gh)
        free(gw)


# ---------------------------------------------------------------------------
# position-sensitive RoIAlign
# ---------------------------------------------------------------------------

cdef void _ps_roi_align_fwd(const real* inp, const real* rois, const int64_t* bidx,
                            const int* gh, const int* gw, _Geom* G, Py_ssize_t C_out,
                            real scale, real* out, int32_t* cmap) noexcept nogil:
    cdef Py_ssize_t n, co, ph, pw, iy, ix, idx, c_in, HW = G.H * G.W
    cdef real sh, sw, rh, rw, bh, bw, hs, ws, y, x, count, acc
    cdef real w[4]
    cdef Py_ssize_t pos[4]
    cdef const real* src
    for n in range(G.K):
        _roi_box(rois + 5 * n, scale, 0.5, False, &sh, &sw, &rh, &rw)
        bh = rh / <real>G.PH
        bw = rw / <real>G.PW
        count = <real>(gh[n] * gw[n])
        c_in = 0
        for co in range(C_out):
            for ph in range(G.PH):
                for pw in range(G.PW):
                    idx = ((n * C_out + co) * G.PH + ph) * G.PW + pw
                    hs = <real>ph * bh + sh
                    ws = <real>pw * bw + sw
                    src = inp + (bidx[n] * G.C + c_in) * HW
                    acc = 0
                    for iy in range(gh[n]):
                        y = hs + <real>(<float>iy + <float>.5) * bh / <real>gh[n]
                        for ix in range(gw[n]):
                            x = ws + <real>(<float>ix + <float>.5) * bw / <real>gw[n]
                            _bilinear_weights(y, x, G.H, G.W, w, pos)
                            if pos[0] >= 0:
                                acc += w[0] * src[pos[0]] + w[1] * src[pos[1]] + \
                                    w[2] * src[pos[2]] + w[3] * src[pos[3]]
                    acc /= count
                    out[idx] = acc
                    cmap[idx] = <int32_t>c_in
                    c_in += 1


cdef void _ps_roi_align_bwd(const real* grad, const int32_t* cmap, const real* rois,
                            const int64_t* bidx, const int* gh, const int* gw, _Geom* G,
                            Py_ssize_t C_out, real scale, real* gin) noexcept nogil:
    cdef Py_ssize_t n, co, ph, pw, iy, ix, idx, HW = G.H * G.W
    cdef real sh, sw, rh, rw, bh, bw, hs, ws, y, x, count, g
    cdef real w[4]
    cdef Py_ssize_t pos[4]
    cdef real* dst
    for n in range(G.K):
        _roi_box(rois + 5 * n, scale, 0.5, False, &sh, &sw, &rh, &rw)
        bh = rh / <real>G.PH
        bw = rw / <real>G.PW
        count = <real>(gh[n] * gw[n])
        for co in range(C_out):
            for ph in range(G.PH):
                for pw in range(G.PW):
                    idx = ((n * C_out + co) * G.PH + ph) * G.PW + pw
                    dst = gin + (bidx[n] * G.C + cmap[idx]) * HW
                    hs = <real>ph * bh + sh
                    ws = <real>pw * bw + sw
                    g = grad[idx]
                    for iy in range(gh[n]):
                        y = hs + <real>(<float>iy + <float>.5) * bh / <real>gh[n]
                        for ix in range(gw[n]):
                            x = ws + <real>(<float>ix + <float>.5) * bw / <real>gw[n]
                            _bilinear_weights(y, x, G.H, G.W, w, pos)
                            if pos[0] >= 0:
                                dst[pos[0]] += g * w[0] / count
                                dst[pos[1]] += g * w[1] / count
                                dst[pos[2]] += g * w[2] / count
                                dst[pos[3]] += g * w[3] / count


cdef int _check_map(_TensorBase m, Py_ssize_t numel, Py_ssize_t lo, Py_ssize_t hi,
                    str op, str what) except -1:
    """``m`` an int32 contiguous tensor of ``numel`` values, each in [lo, hi)."""
    cdef Py_ssize_t i
    cdef const int32_t* p
    if m._dtype.num != PT_INT32 or not m._is_contig() or m._numel != numel:
        raise RuntimeError(f"{op}: {what} must be an int32 tensor of the gradient's shape")
    p = <const int32_t*>m._ptr()
    for i in range(numel):
        if p[i] < lo or p[i] >= hi:
            raise IndexError(f"{op}: {what} value {p[i]} is out of range [{lo}, {hi})")
    return 0


def ps_roi_align_forward(_TensorBase x not None, _TensorBase rois not None, double spatial_scale,
                         Py_ssize_t PH, Py_ssize_t PW, int sampling_ratio,
                         _TensorBase out not None, _TensorBase cmap not None):
    """Position-sensitive RoIAlign: ``out``/``cmap`` (K, C / (PH PW), PH, PW)."""
    cdef char* _p_cmap
    cdef char* _p_out
    cdef char* _p_rois
    cdef char* _p_x
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef int* gh = NULL
    cdef int* gw = NULL
    cdef int num = x._dtype.num
    cdef Py_ssize_t C_out
    try:
        _setup(x, x, rois, PH, PW, &G, &bidx, "ps_roi_align")
        C_out = G.C // (PH * PW)
        _need(x, num, G.N * G.C * G.H * G.W, "input")
        _need(out, num, G.K * C_out * PH * PW, "output")
        _need(cmap, PT_INT32, G.K * C_out * PH * PW, "channel_mapping")
        if G.K * C_out == 0:
            return
        if G.H * G.W == 0:
            raise RuntimeError("ps_roi_align: the input has no pixels")
        _grid_table(rois, G.K, spatial_scale, 0.5, False, PH, PW,
                    sampling_ratio, &gh, &gw, "ps_roi_align")
        _p_cmap = cmap._ptr()
        _p_out = out._ptr()
        _p_rois = rois._ptr()
        _p_x = x._ptr()
        if num == PT_FLOAT32:
            with nogil:
                _ps_roi_align_fwd(<const float*>_p_x, <const float*>_p_rois, bidx, gh,
                                  gw, &G, C_out, <float>spatial_scale, <float*>_p_out,
                                  <int32_t*>_p_cmap)
        else:
            with nogil:
                _ps_roi_align_fwd(<const double*>_p_x, <const double*>_p_rois, bidx,
                                  gh, gw, &G, C_out, spatial_scale, <double*>_p_out,
                                  <int32_t*>_p_cmap)
    finally:
        free(bidx)
        free(gh)
        free(gw)


def ps_roi_align_backward(_TensorBase grad not None, _TensorBase rois not None,
                          _TensorBase cmap not None, double spatial_scale, Py_ssize_t PH,
                          Py_ssize_t PW, int sampling_ratio, _TensorBase gin not None):
    """Add position-sensitive RoIAlign's input gradient into ``gin`` (N, C, H, W)."""
    cdef char* _p_cmap
    cdef char* _p_gin
    cdef char* _p_grad
    cdef char* _p_rois
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef int* gh = NULL
    cdef int* gw = NULL
    cdef int num = grad._dtype.num
    cdef Py_ssize_t C_out
    try:
        _setup(grad, gin, rois, PH, PW, &G, &bidx, "ps_roi_align backward")
        C_out = G.C // (PH * PW)
        _need(gin, num, G.N * G.C * G.H * G.W, "grad_input")
        _need(grad, num, G.K * C_out * PH * PW, "grad")
        if G.K * C_out == 0 or G.H * G.W == 0:
            return
        _check_map(cmap, G.K * C_out * PH * PW, 0, G.C, "ps_roi_align backward",
                   "channel_mapping")
        _grid_table(rois, G.K, spatial_scale, 0.5, False, PH, PW,
                    sampling_ratio, &gh, &gw, "ps_roi_align")
        _p_cmap = cmap._ptr()
        _p_gin = gin._ptr()
        _p_grad = grad._ptr()
        _p_rois = rois._ptr()
        if num == PT_FLOAT32:
            with nogil:
                _ps_roi_align_bwd(<const float*>_p_grad, <const int32_t*>_p_cmap,
                                  <const float*>_p_rois, bidx, gh, gw, &G, C_out,
                                  <float>spatial_scale, <float*>_p_gin)
        else:
            with nogil:
                _ps_roi_align_bwd(<const double*>_p_grad, <const int32_t*>_p_cmap,
                                  <const double*>_p_rois, bidx, gh, gw, &G, C_out,
                                  spatial_scale, <double*>_p_gin)
    finally:
        free(bidx)
        free(gh)
        free(gw)


# ---------------------------------------------------------------------------
# RoIPool and its position-sensitive form
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _clip(Py_ssize_t v, Py_ssize_t hi) noexcept nogil:
    if v < 0:
        v = 0
    return v if v < hi else hi


cdef inline void _bin_sizes(const Py_ssize_t* box, int plus1, _Geom* G, real* bh,
                            real* bw) noexcept nogil:
    """A RoI's pooling bin height and width from its rounded box (x1, y1, x2, y2): RoIPool
    counts both ends (plus1), the position-sensitive form does not; at least 1 x 1."""
    cdef Py_ssize_t rw = box[2] - box[0] + plus1, rh = box[3] - box[1] + plus1
    if rw < 1:
        rw = 1
    if rh < 1:
        rh = 1
    bh[0] = <real>rh / <real>G.PH
    bw[0] = <real>rw / <real>G.PW


cdef inline void _bin(const Py_ssize_t* box, Py_ssize_t ph, Py_ssize_t pw, real bh, real bw,
                      Py_ssize_t hmax, Py_ssize_t wmax, Py_ssize_t* hs, Py_ssize_t* he,
                      Py_ssize_t* ws, Py_ssize_t* we) noexcept nogil:
    """Bin (ph, pw)'s rows [hs, he) and columns [ws, we), clipped to [0, hmax] / [0, wmax]."""
    hs[0] = _clip(<Py_ssize_t>floor(<real>ph * bh) + box[1], hmax)
    ws[0] = _clip(<Py_ssize_t>floor(<real>pw * bw) + box[0], wmax)
    he[0] = _clip(<Py_ssize_t>ceil(<real>(ph + 1) * bh) + box[1], hmax)
    we[0] = _clip(<Py_ssize_t>ceil(<real>(pw + 1) * bw) + box[0], wmax)


cdef int _int_box(const real* r, real scale, Py_ssize_t* box, str op) except -1:
    """round(coordinate * scale) for the 4 coordinates (as torchvision's int
    casts), each checked to fit in an int."""
    cdef int i
    cdef double v
    for i in range(4):
        v = c_round(<double>(r[1 + i] * scale))
        if not (v > -2147483648.0 and v < 2147483647.0):
            raise RuntimeError(f"{op}: a RoI coordinate times spatial_scale ({v}) does not fit "
                               "in an int")
        box[i] = <Py_ssize_t>v
    return 0


cdef int _grid_table(_TensorBase rois, Py_ssize_t K, double scale, double off, bint clamp1,
                     Py_ssize_t PH, Py_ssize_t PW, int sampling_ratio, int** gh, int** gw,
                     str op) except -1:
    """The sampling grid sides of the K RoIs (:func:`_grids`, in the rois' dtype) in
    new arrays ``gh[0]``/``gw[0]`` (the caller frees them)."""
    gh[0] = <int*>ptc_scratch_malloc((K if K > 0 else 1) * sizeof(int))
    gw[0] = <int*>ptc_scratch_malloc((K if K > 0 else 1) * sizeof(int))
    if gh[0] == NULL or gw[0] == NULL:
        raise MemoryError(f"{op}: no memory")
    if rois._dtype.num == PT_FLOAT32:
        _grids(<const float*>rois._ptr(), K, <float>scale, <float>off, clamp1, PH, PW,
               sampling_ratio, gh[0], gw[0], op)
    else:
        _grids(<const double*>rois._ptr(), K, scale, off, clamp1, PH, PW, sampling_ratio,
               gh[0], gw[0], op)
    return 0


cdef Py_ssize_t* _box_table(_TensorBase rois, Py_ssize_t K, double scale, str op) except NULL:
    """round(coordinate * scale) of the K RoIs (:func:`_int_box`, in the rois' dtype): a
    new array of 4 K values (the caller frees it)."""
    cdef Py_ssize_t k
    cdef Py_ssize_t* boxes = <Py_ssize_t*>ptc_scratch_malloc((K if K > 0 else 1) * 4 * sizeof(Py_ssize_t))
    if boxes == NULL:
        raise MemoryError(f"{op}: no memory")
    try:
        for k in range(K):
            if rois._dtype.num == PT_FLOAT32:
                _int_box(<const float*>rois._ptr() + 5 * k, <float>scale, boxes + 4 * k, op)
            else:
                _int_box(<const double*>rois._ptr() + 5 * k, scale, boxes + 4 * k, op)
    except BaseException:
        free(boxes)
        raise
    return boxes


cdef void _roi_pool_fwd(const real* inp, const Py_ssize_t* boxes, const int64_t* bidx,
                        _Geom* G, real* out, int32_t* arg) noexcept nogil:
    cdef Py_ssize_t n, c, ph, pw, h, w, hs, he, ws, we, rh, rw, maxidx, ii, idx, HW = G.H * G.W
    cdef real bh, bw, maxval
    cdef bint empty
    cdef const real* src
    for n in range(G.K):
        _bin_sizes(boxes + 4 * n, 1, G, &bh, &bw)
        for ph in range(G.PH):
            for pw in range(G.PW):
                _bin(boxes + 4 * n, ph, pw, bh, bw, G.H, G.W, &hs, &he, &ws, &we)
                empty = he <= hs or we <= ws
                for c in range(G.C):
                    maxval = 0 if empty else -FLT_MAX
                    maxidx = -1
                    src = inp + (bidx[n] * G.C + c) * HW
                    for h in range(hs, he):
                        for w in range(ws, we):
                            ii = h * G.W + w
                            if src[ii] > maxval:
                                maxval = src[ii]
                                maxidx = ii
                    idx = ((n * G.C + c) * G.PH + ph) * G.PW + pw
                    out[idx] = maxval
                    arg[idx] = <int32_t>maxidx


def roi_pool_forward(_TensorBase x not None, _TensorBase rois not None, double spatial_scale,
                     Py_ssize_t PH, Py_ssize_t PW, _TensorBase out not None,
                     _TensorBase argmax not None):
    """RoIPool (max): ``out`` and int32 ``argmax`` (K, C, PH, PW)."""
    cdef char* _p_argmax
    cdef char* _p_out
    cdef char* _p_x
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef Py_ssize_t* boxes = NULL
    cdef int num = x._dtype.num
    try:
        _setup(x, x, rois, PH, PW, &G, &bidx, "roi_pool")
        _need(x, num, G.N * G.C * G.H * G.W, "input")
        _need(out, num, G.K * G.C * PH * PW, "output")
        _need(argmax, PT_INT32, G.K * G.C * PH * PW, "argmax")
        if G.K * G.C == 0:
            return
        boxes = _box_table(rois, G.K, spatial_scale, "roi_pool")
        _p_argmax = argmax._ptr()
        _p_out = out._ptr()
        _p_x = x._ptr()
        with nogil:
            if num == PT_FLOAT32:
                _roi_pool_fwd(<const float*>_p_x, boxes, bidx, &G, <float*>_p_out,
                              <int32_t*>_p_argmax)
            else:
                _roi_pool_fwd(<const double*>_p_x, boxes, bidx, &G, <double*>_p_out,
                              <int32_t*>_p_argmax)
    finally:
        free(bidx)
        free(boxes)


cdef void _roi_pool_bwd(const real* grad, const int32_t* arg, const int64_t* bidx, _Geom* G,
                        real* gin) noexcept nogil:
    cdef Py_ssize_t n, c, i, a, P = G.PH * G.PW, HW = G.H * G.W
    for n in range(G.K):
        for c in range(G.C):
            for i in range(P):
                a = arg[(n * G.C + c) * P + i]
                if a != -1:
                    gin[(bidx[n] * G.C + c) * HW + a] += grad[(n * G.C + c) * P + i]


def roi_pool_backward(_TensorBase grad not None, _TensorBase rois not None,
                      _TensorBase argmax not None, Py_ssize_t PH, Py_ssize_t PW,
                      _TensorBase gin not None):
    """Add RoIPool's input gradient into ``gin`` (N, C, H, W)."""
    cdef char* _p_argmax
    cdef char* _p_gin
    cdef char* _p_grad
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef int num = grad._dtype.num
    try:
        _setup(grad, gin, rois, PH, PW, &G, &bidx, "roi_pool backward")
        _need(gin, num, G.N * G.C * G.H * G.W, "grad_input")
        _need(grad, num, G.K * G.C * PH * PW, "grad")
        if G.K * G.C == 0:
            return
        _check_map(argmax, G.K * G.C * PH * PW, -1, G.H * G.W, "roi_pool backward", "argmax")
        _p_argmax = argmax._ptr()
        _p_gin = gin._ptr()
        _p_grad = grad._ptr()
        with nogil:
            if num == PT_FLOAT32:
                _roi_pool_bwd(<const float*>_p_grad, <const int32_t*>_p_argmax, bidx,
                              &G, <float*>_p_gin)
            else:
                _roi_pool_bwd(<const double*>_p_grad, <const int32_t*>_p_argmax, bidx,
                              &G, <double*>_p_gin)
    finally:
        free(bidx)


cdef void _ps_roi_pool_fwd(const real* inp, const Py_ssize_t* boxes, const int64_t* bidx,
                           _Geom* G, Py_ssize_t C_out, real* out, int32_t* cmap) noexcept nogil:
    cdef Py_ssize_t n, co, ph, pw, h, w, hs, he, ws, we, rh, rw, c_in, idx, HW = G.H * G.W
    cdef real bh, bw, acc, area
    cdef const real* src
    for n in range(G.K):
        _bin_sizes(boxes + 4 * n, 0, G, &bh, &bw)
        c_in = 0
        for co in range(C_out):
            for ph in range(G.PH):
                for pw in range(G.PW):
                    _bin(boxes + 4 * n, ph, pw, bh, bw, G.H - 1, G.W - 1, &hs, &he, &ws, &we)
                    src = inp + (bidx[n] * G.C + c_in) * HW
                    acc = 0
                    for h in range(hs, he):
                        for w in range(ws, we):
                            acc += src[h * G.W + w]
                    idx = ((n * C_out + co) * G.PH + ph) * G.PW + pw
                    area = <real>((he - hs) * (we - ws))
                    out[idx] = 0 if (he <= hs or we <= ws) else acc / area
                    cmap[idx] = <int32_t>c_in
                    c_in += 1


cdef void _ps_roi_pool_bwd(const real* grad, const int32_t* cmap, const Py_ssize_t* boxes,
                           const int64_t* bidx, _Geom* G, Py_ssize_t C_out,
                           real* gin) noexcept nogil:
    cdef Py_ssize_t n, co, ph, pw, h, w, hs, he, ws, we, rh, rw, idx, HW = G.H * G.W
    cdef real bh, bw, area, diff
    cdef real* dst
    for n in range(G.K):
        _bin_sizes(boxes + 4 * n, 0, G, &bh, &bw)
        for ph in range(G.PH):
            for pw in range(G.PW):
                _bin(boxes + 4 * n, ph, pw, bh, bw, G.H, G.W, &hs, &he, &ws, &we)
                area = <real>((he - hs) * (we - ws))
                for co in range(C_out):
                    idx = ((n * C_out + co) * G.PH + ph) * G.PW + pw
                    dst = gin + (bidx[n] * G.C + cmap[idx]) * HW
                    diff = 0 if (he <= hs or we <= ws) else grad[idx] / area
                    for h in range(hs, he):
                        for w in range(ws, we):
                            dst[h * G.W + w] += diff


def ps_roi_pool_forward(_TensorBase x not None, _TensorBase rois not None, double spatial_scale,
                        Py_ssize_t PH, Py_ssize_t PW, _TensorBase out not None,
                        _TensorBase cmap not None):
    """Position-sensitive RoIPool (average): ``out``/``cmap`` (K, C / (PH PW), PH, PW)."""
    cdef char* _p_cmap
    cdef char* _p_out
    cdef char* _p_x
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef Py_ssize_t* boxes = NULL
    cdef Py_ssize_t C_out
    cdef int num = x._dtype.num
    try:
        _setup(x, x, rois, PH, PW, &G, &bidx, "ps_roi_pool")
        C_out = G.C // (PH * PW)
        _need(x, num, G.N * G.C * G.H * G.W, "input")
        _need(out, num, G.K * C_out * PH * PW, "output")
        _need(cmap, PT_INT32, G.K * C_out * PH * PW, "channel_mapping")
        if G.K * C_out == 0:
            return
        boxes = _box_table(rois, G.K, spatial_scale, "ps_roi_pool")
        _p_cmap = cmap._ptr()
        _p_out = out._ptr()
        _p_x = x._ptr()
        with nogil:
            if num == PT_FLOAT32:
                _ps_roi_pool_fwd(<const float*>_p_x, boxes, bidx, &G, C_out,
                                 <float*>_p_out, <int32_t*>_p_cmap)
            else:
                _ps_roi_pool_fwd(<const double*>_p_x, boxes, bidx, &G, C_out,
                                 <double*>_p_out, <int32_t*>_p_cmap)
    finally:
        free(bidx)
        free(boxes)


def ps_roi_pool_backward(_TensorBase grad not None, _TensorBase rois not None,
                         _TensorBase cmap not None, double spatial_scale, Py_ssize_t PH,
                         Py_ssize_t PW, _TensorBase gin not None):
    """Add position-sensitive RoIPool's input gradient into ``gin`` (N, C, H, W)."""
    cdef char* _p_cmap
    cdef char* _p_gin
    cdef char* _p_grad
    cdef _Geom G
    cdef int64_t* bidx = NULL
    cdef Py_ssize_t* boxes = NULL
    cdef Py_ssize_t C_out
    cdef int num = grad._dtype.num
    try:
        _setup(grad, gin, rois, PH, PW, &G, &bidx, "ps_roi_pool backward")
        C_out = G.C // (PH * PW)
        _need(gin, num, G.N * G.C * G.H * G.W, "grad_input")
        _need(grad, num, G.K * C_out * PH * PW, "grad")
        if G.K * C_out == 0:
            return
        _check_map(cmap, G.K * C_out * PH * PW, 0, G.C, "ps_roi_pool backward",
                   "channel_mapping")
        boxes = _box_table(rois, G.K, spatial_scale, "ps_roi_pool")
        _p_cmap = cmap._ptr()
        _p_gin = gin._ptr()
        _p_grad = grad._ptr()
        with nogil:
            if num == PT_FLOAT32:
                _ps_roi_pool_bwd(<const float*>_p_grad, <const int32_t*>_p_cmap, boxes,
                                 bidx, &G, C_out, <float*>_p_gin)
            else:
                _ps_roi_pool_bwd(<const double*>_p_grad, <const int32_t*>_p_cmap, boxes,
                                 bidx, &G, C_out, <double*>_p_gin)
    finally:
        free(bidx)
        free(boxes)
