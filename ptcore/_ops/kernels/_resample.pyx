# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU kernels of the resampling ops: ``F.interpolate``'s separable passes
(nearest, nearest-exact, linear, cubic; ptc_upsample.h) with their adjoint,
and ``F.grid_sample``'s 2-d sampler forward and backward
(ptc_grid_sample.h).

Each function takes contiguous float32/float64 CPU tensors that the caller
(``ptcore.nn.functional``) shaped and allocated; it checks what it reads
and writes and raises ``ValueError`` otherwise.  Work is split among
threads by whole planes (interpolate) or samples (grid_sample), each
computed by one thread in a fixed order, so the bits do not depend on the
thread count.
"""
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from libc.string cimport memset

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase
scratch_bind()      # this module's scratch requests obey _fault's test switch

cdef extern from "ptc_upsample.h" nogil:
    ctypedef struct ptc_us_geo:
        int k, nt
        Py_ssize_t isz[3]
        Py_ssize_t osz[3]
        Py_ssize_t inner, plane_in, plane_out
        int skip[3]
        Py_ssize_t* idx[3]
        int* idx32[3]
        void* wt[3]
    int ptc_us_ntaps(int mode)
    Py_ssize_t ptc_us_scratch(const ptc_us_geo* g)
    void ptc_us_taps_f32(int mode, Py_ssize_t n_in, Py_ssize_t n_out, double scale, int ac,
                         int legacy, Py_ssize_t* idx, float* wt)
    void ptc_us_taps_f64(int mode, Py_ssize_t n_in, Py_ssize_t n_out, double scale, int ac,
                         int legacy, Py_ssize_t* idx, double* wt)
    void ptc_us_plane_f32(const ptc_us_geo* g, const float* x, float* y, float* t0, float* t1,
                          int transpose)
    void ptc_us_plane_f64(const ptc_us_geo* g, const double* x, double* y, double* t0,
                          double* t1, int transpose)
    int ptc_us_fma()
    int ptc_us_fma_on

cdef extern from "ptc_grid_sample.h" nogil:
    int ptc_gs_fma()
    int ptc_gs_fma_on
    ctypedef struct ptc_gs_geo:
        Py_ssize_t N, C, H, W, P
        int interp, pad, ac, vec
    void ptc_gs2d_forward_f32(const ptc_gs_geo* g, const float* inp, const float* grid,
                              float* out, Py_ssize_t n0, Py_ssize_t n1)
    void ptc_gs2d_forward_f64(const ptc_gs_geo* g, const double* inp, const double* grid,
                              double* out, Py_ssize_t n0, Py_ssize_t n1)
    void ptc_gs2d_backward_f32(const ptc_gs_geo* g, const float* inp, const float* grid,
                               const float* gout, float* ginp, float* ggrid, Py_ssize_t n0,
                               Py_ssize_t n1)
    void ptc_gs2d_backward_f64(const ptc_gs_geo* g, const double* inp, const double* grid,
                               const double* gout, double* ginp, double* ggrid, Py_ssize_t n0,
                               Py_ssize_t n1)

def _set_fma(bint on):
    """Testing knob: the kernels with torch's fused multiply-adds where the
    CPU has FMA (True, torch's bits there) or the unfused baseline ones.
    Returns whether the fused kernels were in use before."""
    global ptc_us_fma_on, ptc_gs_fma_on
    old = ptc_us_fma() != 0
    ptc_us_fma_on = ptc_gs_fma_on = 1 if on else 0
    return old


# interpolate modes (ptc_upsample.h)
NEAREST, NEAREST_EXACT, LINEAR, CUBIC = 0, 1, 2, 3


cdef inline int _threads(Py_ssize_t parts, Py_ssize_t work) noexcept nogil:
    cdef int nt = get_num_threads()
    if nt <= 1 or parts < 2 or work < 4 * parallel_grain():
        return 1
    return nt if nt < parts else <int>parts


cdef int _check(str op, _TensorBase t, int num, int ndim) except -1:
    if t._dtype.num != num or t._ndim != ndim or not t._is_contig() \
            or t._storage.device._type_code != 0:
        raise ValueError(f"{op}: expected a contiguous CPU {ndim}-d tensor of the input's "
                         f"dtype, got {t._dtype} with shape {tuple(t.shape)}")
    return 0


def upsample(_TensorBase x not None, _TensorBase y not None, int mode, bint align_corners, scales,
             bint transpose=False):
    """Resample the planes of ``x`` (B, *in_sizes, inner) into ``y``
    (B, *out_sizes, inner) for ``mode`` (NEAREST, NEAREST_EXACT, LINEAR,
    CUBIC) with the per-dim scale factors ``scales`` (-1: from the sizes);
    with ``transpose``, the adjoint: ``x`` (B, *out_sizes, inner) is a
    gradient of the output and ``y`` (B, *in_sizes, inner) receives the
    gradient of the input."""
    cdef int num = x._dtype.num, k = len(scales), d, nthr, tid
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise ValueError(f"upsample: float32 or float64 expected, got {x._dtype}")
    if k < 1 or k > 3 or mode < NEAREST or mode > CUBIC:
        raise ValueError(f"upsample: 1 to 3 spatial dims and a mode in 0..3 expected, got "
                         f"{k} and {mode}")
    _check("upsample", x, num, k + 2)
    _check("upsample", y, num, k + 2)
    cdef _TensorBase src = y if transpose else x
    cdef _TensorBase dst = x if transpose else y
    if src._shape[0] != dst._shape[0] or src._shape[k + 1] != dst._shape[k + 1]:
        raise ValueError(f"upsample: planes {tuple(x.shape)} and {tuple(y.shape)} differ")
    cdef ptc_us_geo g
    cdef Py_ssize_t B = x._shape[0], isize = x._dtype.itemsize, n_tab = 0, sc, b
    cdef double sd[3]
    g.k = k
    g.nt = ptc_us_ntaps(mode)
    g.inner = x._shape[k + 1]
    g.plane_in = g.plane_out = g.inner
    for d in range(k):
        g.isz[d] = src._shape[d + 1]
        g.osz[d] = dst._shape[d + 1]
        if g.isz[d] <= 0 or g.osz[d] <= 0:
            raise ValueError(f"upsample: empty spatial size in {tuple(x.shape)} -> "
                             f"{tuple(y.shape)}")
        g.plane_in *= g.isz[d]
        g.plane_out *= g.osz[d]
        g.skip[d] = 0
        sd[d] = float(scales[d])
        n_tab += g.osz[d]
        g.idx[d] = NULL
        g.idx32[d] = NULL
        g.wt[d] = NULL
    if B == 0 or g.inner == 0:
        return y
    # the tables of every dim in one block: indices, their int32 copies (the
    # last dim's gathers), then weights
    cdef char* tab = <char*>ptc_scratch_malloc(n_tab * g.nt * (sizeof(Py_ssize_t) + sizeof(int) + isize))
    if tab == NULL:
        raise MemoryError("upsample: no memory for the tap tables")
    cdef int* i32 = <int*>(tab + n_tab * g.nt * sizeof(Py_ssize_t))
    cdef char* wpos = <char*>(i32 + n_tab * g.nt)
    cdef Py_ssize_t* ipos = <Py_ssize_t*>tab
    # torch's nearest forward honours the scale factors in 1-d and 3-d only, its
    # backward nowhere; its bicubic backward copies when no size changes
    cdef bint legacy = mode == NEAREST and (transpose or k == 2), same = True
    for d in range(k):
        g.idx[d] = ipos
        g.wt[d] = wpos
        same = same and g.isz[d] == g.osz[d]
        if num == PT_FLOAT32:
            ptc_us_taps_f32(mode, g.isz[d], g.osz[d], sd[d], align_corners, legacy, ipos,
                            <float*>wpos)
        else:
            ptc_us_taps_f64(mode, g.isz[d], g.osz[d], sd[d], align_corners, legacy, ipos,
                            <double*>wpos)
        if d == k - 1 and g.inner == 1 and g.isz[d] < 2147483647:
            g.idx32[d] = i32
            for b in range(g.osz[d] * g.nt):
                i32[b] = <int>ipos[b]
        i32 += g.osz[d] * g.nt
        if g.nt == 1 and g.isz[d] == g.osz[d]:
            # a nearest pass whose every index is its own: the identity
            g.skip[d] = 1
            for b in range(g.osz[d]):
                if ipos[b] != b:
                    g.skip[d] = 0
                    break
        ipos += g.osz[d] * g.nt
        wpos += g.osz[d] * g.nt * isize
    if transpose and mode == CUBIC and same:
        for d in range(k):
            g.skip[d] = 1
    sc = ptc_us_scratch(&g)
    nthr = _threads(B, B * (g.plane_in + g.plane_out))
    cdef char* scratch = <char*>ptc_scratch_malloc(2 * nthr * sc * isize)
    if scratch == NULL:
        free(tab)
        raise MemoryError(f"upsample: no memory for {2 * nthr * sc} scratch elements")
    cdef char* xp = x._ptr()
    cdef char* yp = y._ptr()
    cdef Py_ssize_t xs = x._numel // B * isize, ys = y._numel // B * isize
    ptc_kernel_enter()
    with nogil:
        try:
            if nthr == 1:
                for b in range(B):
                    _plane(&g, num, xp + b * xs, yp + b * ys, scratch, scratch + sc * isize,
                           transpose)
            else:
                for b in prange(B, num_threads=nthr, schedule="static"):
                    tid = threadid()
                    _plane(&g, num, xp + b * xs, yp + b * ys, scratch + 2 * tid * sc * isize,
                           scratch + (2 * tid + 1) * sc * isize, transpose)
        finally:
            ptc_kernel_exit()
    free(scratch)
    free(tab)
    return y


cdef inline void _plane(const ptc_us_geo* g, int num, char* x, char* y, char* t0, char* t1,
                        bint transpose) noexcept nogil:
    if num == PT_FLOAT32:
        ptc_us_plane_f32(g, <const float*>x, <float*>y, <float*>t0, <float*>t1, transpose)
    else:
        ptc_us_plane_f64(g, <const double*>x, <double*>y, <double*>t0, <double*>t1, transpose)


cdef int _gs_geo(ptc_gs_geo* g, _TensorBase inp, _TensorBase grid, int interp, int pad,
                 bint align_corners) except -1:
    cdef int num = inp._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise ValueError(f"grid_sample: float32 or float64 expected, got {inp._dtype}")
    _check("grid_sample", inp, num, 4)
    _check("grid_sample", grid, num, 4)
    if grid._shape[0] != inp._shape[0] or grid._shape[3] != 2 or interp < 0 or interp > 2 \
            or pad < 0 or pad > 2:
        raise ValueError(f"grid_sample: input {tuple(inp.shape)} and grid {tuple(grid.shape)} "
                         f"(modes {interp}, {pad}) do not fit")
    g.N, g.C, g.H, g.W = inp._shape[0], inp._shape[1], inp._shape[2], inp._shape[3]
    g.P = grid._shape[1] * grid._shape[2]
    if g.H <= 0 or g.W <= 0:
        raise ValueError(f"grid_sample: empty input plane {tuple(inp.shape)}")
    g.interp, g.pad, g.ac = interp, pad, align_corners
    # the vector gathers: int32 plane offsets, sizes exact in float32
    g.vec = g.H * g.W < 2147483647 and g.H < 16777216 and g.W < 16777216
    return 0


cdef int _gs_out(str what, _TensorBase t, _TensorBase like, Py_ssize_t n, Py_ssize_t a,
                 Py_ssize_t b, Py_ssize_t c) except -1:
    _check("grid_sample", t, like._dtype.num, 4 if c >= 0 else 3)
    if t._shape[0] != n or t._shape[1] != a or t._shape[2] != b or (c >= 0 and t._shape[3] != c):
        raise ValueError(f"grid_sample: {what} has shape {tuple(t.shape)}")
    return 0


def grid_sample_2d(_TensorBase inp not None, _TensorBase grid not None,
                   _TensorBase out not None, int interp, int pad, bint align_corners):
    """``out`` (N, C, P) = grid_sample of ``inp`` (N, C, H, W) at ``grid``
    (N, Ho, Wo, 2), P = Ho * Wo, with torch's mode codes."""
    cdef ptc_gs_geo g
    _gs_geo(&g, inp, grid, interp, pad, align_corners)
    _gs_out("the output", out, inp, g.N, g.C, g.P, -1)
    cdef int num = inp._dtype.num
    cdef int nthr = _threads(g.N, g.N * g.C * g.P * 4)
    cdef Py_ssize_t n
    cdef char* ip = inp._ptr()
    cdef char* gp = grid._ptr()
    cdef char* op = out._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for n in prange(g.N, num_threads=nthr, schedule="static"):
                _gs_fwd(&g, num, ip, gp, op, n, n + 1)
        finally:
            ptc_kernel_exit()
    return out


cdef inline void _gs_fwd(const ptc_gs_geo* g, int num, char* ip, char* gp, char* op,
                         Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    if num == PT_FLOAT32:
        ptc_gs2d_forward_f32(g, <const float*>ip, <const float*>gp, <float*>op, n0, n1)
    else:
        ptc_gs2d_forward_f64(g, <const double*>ip, <const double*>gp, <double*>op, n0, n1)


def grid_sample_2d_backward(_TensorBase inp not None, _TensorBase grid not None,
                            _TensorBase gout not None, _TensorBase ginp, _TensorBase ggrid,
                            int interp, int pad, bint align_corners):
    """The gradients of :func:`grid_sample_2d` for ``gout`` (N, C, P):
    ``ginp`` (like ``inp``, overwritten) and ``ggrid`` (like ``grid``);
    either may be None (not computed)."""
    cdef ptc_gs_geo g
    _gs_geo(&g, inp, grid, interp, pad, align_corners)
    _gs_out("the output gradient", gout, inp, g.N, g.C, g.P, -1)
    if ginp is not None:
        _gs_out("the input gradient", ginp, inp, g.N, g.C, g.H, g.W)
    if ggrid is not None:
        _gs_out("the grid gradient", ggrid, inp, g.N, grid._shape[1], grid._shape[2], 2)
    cdef int num = inp._dtype.num
    cdef int nthr = _threads(g.N, g.N * g.C * g.P * 8)
    cdef Py_ssize_t n
    cdef char* ip = inp._ptr()
    cdef char* gp = grid._ptr()
    cdef char* gop = gout._ptr()
    cdef char* gip = ginp._ptr() if ginp is not None else NULL
    cdef char* ggp = ggrid._ptr() if ggrid is not None else NULL
    if gip != NULL:
        memset(gip, 0, ginp._numel * ginp._dtype.itemsize)
    ptc_kernel_enter()
    with nogil:
        try:
            for n in prange(g.N, num_threads=nthr, schedule="static"):
                _gs_bwd(&g, num, ip, gp, gop, gip, ggp, n, n + 1)
        finally:
            ptc_kernel_exit()


cdef inline void _gs_bwd(const ptc_gs_geo* g, int num, char* ip, char* gp, char* gop, char* gip,
                         char* ggp, Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    if num == PT_FLOAT32:
        ptc_gs2d_backward_f32(g, <const float*>ip, <const float*>gp, <const float*>gop,
                              <float*>gip, <float*>ggp, n0, n1)
    else:
        ptc_gs2d_backward_f64(g, <const double*>ip, <const double*>gp, <const double*>gop,
                              <double*>gip, <double*>ggp, n0, n1)
