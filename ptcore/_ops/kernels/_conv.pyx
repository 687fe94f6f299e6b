# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Convolution and pooling kernels on contiguous float32/float64 tensors.

Structure
---------
* Every kernel works on three spatial dims ``(D, H, W)``; 1-d and 2-d
  operations call it with leading spatial sizes of 1 (the Python layer in
  ``ptcore.nn.functional`` reshapes).  Tensors are C-contiguous
  ``(N, C, D, H, W)`` and of one floating dtype; the Python layer validated
  every shape, stride, padding and dilation, so the loops trust their inputs.
* Convolution is im2col + GEMM over chunks of samples: ``_im2col`` writes
  the ``(C*kd*kh*kw, OD*OH*OW)`` column block of each sample of the chunk
  side by side (zeros where the window reads padding), then one BLAS
  ``gemm`` per group multiplies the group's weight rows with its block of
  column rows; the chunk holds ``_gemm_cols // L`` samples (at least one) so
  small images still give wide GEMMs.  A one-sample chunk writes straight
  into the output; a 1x1x1 kernel with unit stride, no padding and equal
  sizes multiplies the input itself.  The three primitives are

  - ``conv_forward``        y = W (*) x (+ bias)
  - ``conv_backward_input`` gx = col2im(W^T gy) (+ bias): also the forward of
    the transposed convolution
  - ``conv_backward_weight`` gW = sum_n gy_n cols(x_n)^T: also the weight
    gradient of the transposed convolution (with ``x``/``gy`` swapped)

  ``_col2im`` accumulates the column matrix back into an input sample.
  Column rows of one input channel go to distinct output-channel planes, so
  im2col/col2im split the channels over OpenMP threads.
* Threads: a batch of more than one GEMM unit (``nb`` samples, or one
  sample in L2-sized row chunks) runs ``_batched``: the units are shared by
  the threads, each with its own buffers and single-threaded GEMMs; the
  weight gradient sums runs of units into ``BWD_W_PARTS`` partials added in
  a fixed order, so every result is bit-identical at any thread count.
* A kernel covering the whole unpadded input (one output position) is one
  GEMM over the batch (``_whole``); float32 convolutions with few output
  channels, and small weight gradients, use register-tiled AVX2/FMA kernels
  (``ptc_sgemm_small``/``_nt``) where OpenBLAS is slow on such shapes.
* Pooling kernels take, for every spatial dim, the window ``start``/``end``
  (already clipped to the input) of each output position and a step
  (dilation); the Python layer computes them for max/avg/adaptive pooling.
  ``max_pool_forward`` returns values and flat per-plane int64 indices
  (PyTorch's ``return_indices``), with PyTorch's NaN rule
  (``val > max || isnan(val)``); the backward scatters by index.  Average
  pooling divides by a per-output divisor that is a product of per-dim
  factors (or a fixed ``divisor_override``); an empty window gives 0.
"""
from libc.stdint cimport int64_t
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from libc.string cimport memcpy, memset
from libc.math cimport isnan, INFINITY
from cython.parallel cimport prange, threadid

from scipy.linalg.cython_blas cimport sgemm, dgemm

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
scratch_bind()      # this module's scratch requests obey _fault's test switch

ctypedef int blas_int

# Small float32 GEMMs (LeNet's and DCGAN's few-channel layers): OpenBLAS runs
# C(OC x L) = W(OC x C*K) cols(C*K x L) with OC = 6..64 at 10-18 GFLOP/s on an
# AVX2 machine, this register-tiled kernel (4 rows x 16 columns, k streamed,
# one FMA chain per element: the same bits at any thread count) at ~28.  Only
# its AVX2+FMA build is used (chosen at run time); other CPUs keep BLAS.
cdef extern from "ptc_sgemm_small.h":
    void ptc_sgemm_small(Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, const float* A, Py_ssize_t lda,
                         Py_ssize_t sak, const float* B, Py_ssize_t ldb, float* C, Py_ssize_t ldc,
                         int acc) nogil
    void ptc_sgemm_small_nt(Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, const float* A,
                            Py_ssize_t lda, const float* B, Py_ssize_t ldb, float* C,
                            Py_ssize_t ldc, int acc) nogil
    int ptc_sgemm_small_ok() nogil

# Tuning knobs (tests and benchmarks compare the paths): each kernel family
# can be switched off; all are on by default.
cdef enum:
    KNOB_SMALL = 0      # ptc_sgemm_small for few-channel products
    KNOB_SHIFT = 1      # shifted GEMMs for stride-1 convolutions (no im2col)
    KNOB_IMPLICIT = 2   # forward/weight-gradient operands gathered from the image
    KNOB_DIRECT = 3     # direct kernels (few and many output channels)
    KNOB_COUNT = 4

cdef bint _knobs[4]
_knobs[:] = [True, True, True, True]


cdef bint _set_knob(int which, bint on):
    cdef bint old = _knobs[which]
    _knobs[which] = on
    return old


def _set_small_gemm(bint on):
    """Use the small-GEMM kernel where it applies (float32, AVX2 CPUs).
    Returns the previous value."""
    return _set_knob(KNOB_SMALL, on)


def _set_shift(bint on):
    """Use the shifted-GEMM kernels (no im2col) where they apply.  Returns the
    previous value."""
    return _set_knob(KNOB_SHIFT, on)


def _set_implicit(bint on):
    """Gather the forward product's and the weight gradient's operand from
    the image instead of building the column matrix.  Returns the previous
    value."""
    return _set_knob(KNOB_IMPLICIT, on)


def _set_direct(bint on):
    """Use the direct kernels (few and many output channels).  Returns the
    previous value."""
    return _set_knob(KNOB_DIRECT, on)


cdef inline bint _use_small(Py_ssize_t M, Py_ssize_t K) noexcept nogil:
    """Forward C (M x L) = W (M x K) cols: few output channels (where BLAS is
    slow; measured: no gain at M = 48..64, a loss for K < 16) and W small
    enough to stay in L1/L2 while every 16-column panel re-reads it."""
    return _knobs[KNOB_SMALL] and M <= 32 and K >= 16 and M * K <= 16384 and ptc_sgemm_small_ok()


cdef enum:
    CH_N = 78       # 'N'
    CH_T = 84       # 'T'

ctypedef fused flt:
    float
    double


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* max pooling's step: (m, best) = (v, i) when v > m or v is NaN (the last
       NaN of a window wins, as torch), by integer selects: the comparison is a
       coin flip on real data, so a branch would be mispredicted half the time */
    static inline void ptc_maxsel_f(float v, Py_ssize_t i, float *m, Py_ssize_t *best)
    {
        uint32_t vb, mb, t = (uint32_t)0 - (uint32_t)((v > *m) | (v != v));
        memcpy(&vb, &v, 4); memcpy(&mb, m, 4);
        mb = (mb & ~t) | (vb & t);
        memcpy(m, &mb, 4);
        *best = (Py_ssize_t)(((uint64_t)*best & ~(uint64_t)(int64_t)(int32_t)t) |
                             ((uint64_t)i & (uint64_t)(int64_t)(int32_t)t));
    }
    static inline void ptc_maxsel_d(double v, Py_ssize_t i, double *m, Py_ssize_t *best)
    {
        uint64_t vb, mb, t = (uint64_t)0 - (uint64_t)((v > *m) | (v != v));
        memcpy(&vb, &v, 8); memcpy(&mb, m, 8);
        mb = (mb & ~t) | (vb & t);
        memcpy(m, &mb, 8);
        *best = (Py_ssize_t)(((uint64_t)*best & ~t) | ((uint64_t)i & t));
    }
    """
    void ptc_maxsel_f(float v, Py_ssize_t i, float* m, Py_ssize_t* best) noexcept nogil
    void ptc_maxsel_d(double v, Py_ssize_t i, double* m, Py_ssize_t* best) noexcept nogil


cdef inline void _maxsel(flt v, Py_ssize_t i, flt* m, Py_ssize_t* best) noexcept nogil:
    if flt is float:
        ptc_maxsel_f(v, i, m, best)
    else:
        ptc_maxsel_d(v, i, m, best)


cdef struct Geo:
    Py_ssize_t C, D, H, W            # conv input (per sample)
    Py_ssize_t OC, OD, OH, OW        # conv output (per sample)
    Py_ssize_t kd, kh, kw
    Py_ssize_t sd, sh, sw
    Py_ssize_t pd, ph, pw
    Py_ssize_t dd, dh, dw
    Py_ssize_t G


# the GEMMs of the convolutions, tiled as _blas's
include "_gemm_real.pxi"


cdef inline bint _use_small_nt(Py_ssize_t M, Py_ssize_t N, Py_ssize_t K) noexcept nogil:
    """Weight gradient gW (M x N) += gy (M x K) cols^T by ptc_sgemm_small_nt:
    a small gW (both operands' row blocks stay in L2 while the tiles sweep
    them) whose product the own GEMM does not take (below OWN_SGEMM_MIN, or
    no AVX2).  Where it does, it reads gy in place and runs 1.3-1.8x faster
    than these 8-lane dot products (Intel AVX-512 at both ISA levels:
    DCGAN's 3 -> 64 weight gradient 2.27 -> 1.30 ms, LeNet's 6 -> 16 1.00 ->
    0.79 ms)."""
    return (_knobs[KNOB_SMALL] and M * N <= 16384 and ptc_sgemm_small_ok()
            and (M * N * K < OWN_SGEMM_MIN or ptc_sgemm_isa() == 0))


# The forward product of a 2-d float32 convolution straight from the image:
# ptc_sgemm's A panels are gathered from x as they are packed (no column
# matrix written and read back; DCGAN's 4x4 kernels with 4-16-wide output
# rows spent a quarter of their forward building it).  Same kernels and
# summation order as ptc_sgemm on the column matrix: the same bits.
cdef extern from "ptc_sgemm.h":
    ctypedef struct ptc_sg_im2col:
        const float* x
        Py_ssize_t sample_stride, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw
    int ptc_sg_rows2_on
    int ptc_sgemm_conv_fwd(const ptc_sg_im2col* g, Py_ssize_t ns, Py_ssize_t C, Py_ssize_t OC,
                           const float* w, float* y, Py_ssize_t ldy) nogil
    int ptc_sgemm_conv_bww(const ptc_sg_im2col* g, Py_ssize_t ns, Py_ssize_t C, Py_ssize_t OC,
                           const float* gy, Py_ssize_t ldg, float beta, float* gw,
                           Py_ssize_t ldw) nogil

# Few output channels (LeNet, a DCGAN discriminator's input layer): the
# direct kernels of ptc_conv_direct.h, output channels as vector lanes and
# input pixels broadcast, no column matrix.
cdef extern from "ptc_conv_direct.h":
    ctypedef struct ptc_cd_geo:
        Py_ssize_t C, Hp, Wp, OC, OH, OW, kh, kw, sh, sw, dh, dw, OCp
    ctypedef void (*ptc_cd_row_fn)(const float*, const float*, const float*, float*, Py_ssize_t,
                                   const ptc_cd_geo*) noexcept nogil
    void ptc_cd_pack_w(const float* W, const ptc_cd_geo* g, float* Wp) nogil
    void ptc_cd_pad(const float* x, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W, Py_ssize_t ph,
                    Py_ssize_t pw, const ptc_cd_geo* g, float* xp) nogil
    ptc_cd_row_fn ptc_conv_direct_kernel(ptc_cd_geo* g) nogil
    int ptc_conv_direct_lanes() nogil

cdef enum:
    DIRECT_MAX_W = 8192         # packed weight floats (C*kh*kw x padded OC): 32 KiB, L1
    DIRECT_PAR_WORK = 1048576   # multiply-adds from which threads share the samples

cdef bint _use_direct(const Geo* g) noexcept nogil:
    """2-d, one group, half a vector to 4 vectors of output channels, and a
    packed weight that stays in L1."""
    cdef int VL
    if not _knobs[KNOB_DIRECT] or g.G != 1 or g.D != 1 or g.kd != 1 or g.OD != 1 or g.pd != 0:
        return False
    VL = ptc_conv_direct_lanes()
    # fewer than half the lanes busy (LeNet's 6 channels on AVX-512): the
    # column-matrix path measured as fast or faster; a 1x1 kernel is a plain
    # product (as _use_wide: (16, 32, 32, 32) -> 64 channels 1.15 -> 0.41 ms
    # on the GEMM path, torch 0.69)
    if VL == 0 or g.OC > 4 * VL or 2 * g.OC < VL or g.OH * g.OW == 0 or g.kh * g.kw == 1:
        return False
    return g.C * g.kh * g.kw * ((g.OC + VL - 1) // VL + (1 if (g.OC + VL - 1) // VL == 3 else 0)) * VL <= DIRECT_MAX_W


cdef void _plane_extent(const Geo* g, Py_ssize_t* Hp, Py_ssize_t* Wp) noexcept nogil:
    """Rows and columns of a padded input plane: every pixel the windows
    reach, at least the padded input, more when the output was sized for
    uneven padding ("same" with an even kernel reaches one row/column past
    H + 2 ph); zeros there."""
    Hp[0] = g.H + 2 * g.ph
    Wp[0] = g.W + 2 * g.pw
    if Hp[0] < (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1:
        Hp[0] = (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1
    if Wp[0] < (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1:
        Wp[0] = (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1


cdef int _direct_fwd(const float* x, const float* w, const float* bias, float* y, Py_ssize_t N,
                     const Geo* g, int nth) noexcept nogil:
    """y (N, OC, OH, OW) = conv(x, w) + bias by the direct kernels, samples
    shared by the threads (each with its own padded copy): -1 when memory is
    short (nothing written)."""
    cdef ptc_cd_geo cd
    cdef ptc_cd_row_fn row
    cdef Py_ssize_t P = g.H * g.W, L = g.OH * g.OW, n, oh, plane
    cdef float* wp
    cdef float* xp
    cdef float* mine
    cdef int t, nthr
    cd.C = g.C
    _plane_extent(g, &cd.Hp, &cd.Wp)
    cd.OC = g.OC
    cd.OH = g.OH
    cd.OW = g.OW
    cd.kh = g.kh
    cd.kw = g.kw
    cd.sh = g.sh
    cd.sw = g.sw
    cd.dh = g.dh
    cd.dw = g.dw
    row = ptc_conv_direct_kernel(&cd)
    if row == NULL:
        return -1
    plane = g.C * cd.Hp * cd.Wp
    nthr = nth
    if N * g.OC * L * g.C * g.kh * g.kw < DIRECT_PAR_WORK or nthr < 1:
        nthr = 1
    if nthr > N:
        nthr = <int>N
    wp = <float*>ptc_scratch_malloc((g.C * g.kh * g.kw * cd.OCp + nthr * plane + 1) * sizeof(float))
    if wp == NULL:
        return -1
    xp = wp + g.C * g.kh * g.kw * cd.OCp
    ptc_cd_pack_w(w, &cd, wp)
    for n in prange(N, num_threads=nthr, schedule='static'):
        t = threadid()
        mine = xp + t * plane
        ptc_cd_pad(x + n * g.C * P, g.C, g.H, g.W, g.ph, g.pw, &cd, mine)
        for oh in range(g.OH):
            row(mine, wp, bias, y + n * g.OC * L, oh, &cd)
    free(wp)
    return 0


# Many output channels (DCGAN's discriminator 64->128, 128->256): the tile
# kernels of ptc_conv_direct.h, channels in blocks of up to 3 (AVX-512) or 2
# (AVX2) vectors, no column matrix.
cdef extern from "ptc_conv_direct.h":
    ctypedef struct ptc_cdw_geo:
        Py_ssize_t C, Hp, Wq, sw, OC, OH, OW, kh, kw, sh, dh
        const Py_ssize_t* koff
        Py_ssize_t ys_c, ys_h, ys_w
    ctypedef void (*ptc_cdw_tile_fn)(const float*, const float*, const float*, float*,
                                     Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                     const ptc_cdw_geo*) noexcept nogil
    void ptc_cdw_pad(const float* x, Py_ssize_t H, Py_ssize_t W, Py_ssize_t ph, Py_ssize_t pw,
                     const ptc_cdw_geo* g, float* xp, int borders) nogil
    void ptc_cdw_pack_w(const float* W, Py_ssize_t OC, Py_ssize_t K, Py_ssize_t o0,
                        Py_ssize_t nb, float* Wp) nogil
    void ptc_cdw_pack_w_phase(const float* W, Py_ssize_t OC, Py_ssize_t C, Py_ssize_t kh,
                              Py_ssize_t kw, Py_ssize_t r, Py_ssize_t q, Py_ssize_t sh,
                              Py_ssize_t sw, Py_ssize_t Jh, Py_ssize_t Jw, Py_ssize_t c0,
                              Py_ssize_t nb, float* Wp) nogil
    int ptc_cdw_max_nv() nogil
    int ptc_cdw_max_tw(int tr) nogil
    ptc_cdw_tile_fn ptc_cdw_kernel(int nv, int tr, int tw) nogil

cdef enum:
    WIDE_MAX_BLOCK = 196608     # floats of one packed channel block (768 KiB): in L2
    WIDE_MIN_WORK = 262144      # multiply-adds per sample from which the tiles pay


cdef bint _use_wide(const Geo* g) noexcept nogil:
    """2-d, one group, more channels than the few-channel kernels take, and
    one block of packed weights (C*kh*kw x up to 3 vectors) that stays in L2."""
    cdef int nv = ptc_cdw_max_nv()
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    if (not _knobs[KNOB_DIRECT] or nv == 0 or g.G != 1 or g.D != 1 or g.kd != 1
            or g.OD != 1 or g.pd != 0 or g.OH * g.OW == 0):
        return False
    # a 1x1 kernel is a plain product (no column matrix to save): the GEMM
    # paths measured faster (8x128x28x28, 128 channels: 2.0 vs 2.7 ms)
    if g.OC < 2 * VL or g.kh * g.kw == 1 or g.C * g.kh * g.kw * nv * VL > WIDE_MAX_BLOCK:
        return False
    return g.OC * g.OH * g.OW * g.C * g.kh * g.kw >= WIDE_MIN_WORK


cdef inline Py_ssize_t _blk_start(Py_ssize_t b, Py_ssize_t nvec, Py_ssize_t nblk) noexcept nogil:
    """First channel vector of block b when nvec vectors are spread evenly
    over nblk blocks (the first nvec % nblk blocks one vector more: 256
    channels in 6 blocks of 3, 3, 3, 3, 2, 2 vectors)."""
    return b * (nvec // nblk) + (b if b < nvec % nblk else nvec % nblk)


cdef void _cdw_geo(ptc_cdw_geo* cd, Py_ssize_t C, Py_ssize_t Hp, Py_ssize_t Wq, Py_ssize_t sw,
                   Py_ssize_t OC, Py_ssize_t OH, Py_ssize_t OW, Py_ssize_t kh, Py_ssize_t kw,
                   Py_ssize_t sh, Py_ssize_t dh, Py_ssize_t ys_c, Py_ssize_t ys_h,
                   Py_ssize_t ys_w) noexcept nogil:
    """The tile kernels' geometry (``koff`` set by the caller): input planes
    C x Hp rows of sw phases x Wq, output OC x OH x OW at strides ys_*."""
    cd.C = C
    cd.Hp = Hp
    cd.Wq = Wq
    cd.sw = sw
    cd.OC = OC
    cd.OH = OH
    cd.OW = OW
    cd.kh = kh
    cd.kw = kw
    cd.sh = sh
    cd.dh = dh
    cd.ys_c = ys_c
    cd.ys_h = ys_h
    cd.ys_w = ys_w


cdef void _wide_sample(const float* xp, const float* wp, const float* bias, float* y,
                       const ptc_cdw_geo* cd, Py_ssize_t K, int nvmax, Py_ssize_t VL,
                       int tr, int tw, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """Output rows [r0, r1) of one sample, every channel block, from its
    padded plane ``xp``."""
    cdef Py_ssize_t o0, oh0, ow0, noc, b, nblk
    cdef Py_ssize_t nvec = (cd.OC + VL - 1) // VL
    cdef int nv, rows, cols
    cdef ptc_cdw_tile_fn fn
    # the vectors of channels spread evenly over the blocks (256 channels:
    # 3, 3, 3, 3, 2, 2 vectors, not five blocks of 3 and one of 1)
    nblk = (nvec + nvmax - 1) // nvmax
    for b in range(nblk):
        o0 = _blk_start(b, nvec, nblk) * VL
        nv = <int>(_blk_start(b + 1, nvec, nblk) - _blk_start(b, nvec, nblk))
        noc = nv * VL if cd.OC - o0 > nv * VL else cd.OC - o0
        oh0 = r0
        while oh0 < r1:
            rows = tr if r1 - oh0 >= tr else 1
            ow0 = 0
            while ow0 < cd.OW:
                cols = tw if cd.OW - ow0 >= tw else <int>(cd.OW - ow0)
                fn = ptc_cdw_kernel(nv, rows, cols)
                fn(xp, wp + o0 * K, bias + o0 if bias != NULL else NULL, y + o0 * cd.ys_c,
                   noc, oh0, ow0, cd)
                ow0 += cols
            oh0 += rows


cdef int _wide_fwd(const float* x, const float* w, const float* bias, float* y, Py_ssize_t N,
                   const Geo* g, int nth) noexcept nogil:
    """y (N, OC, OH, OW) = conv(x, w) + bias by the many-channel tile kernels:
    samples shared by the threads (each with its own padded plane), or, for
    fewer samples than threads, the output rows of each sample.  -1 when
    memory is short (nothing written)."""
    cdef ptc_cdw_geo cd
    cdef int nvmax = ptc_cdw_max_nv(), tr, tw, t, nthr
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    cdef Py_ssize_t K = g.C * g.kh * g.kw, P = g.H * g.W, L = g.OH * g.OW
    cdef Py_ssize_t Hp, Wp, plane, nblk, nvec, o0, nb, b, a, e, n, r, per
    cdef Py_ssize_t* koff
    cdef float* wp
    cdef float* xp
    _plane_extent(g, &Hp, &Wp)
    _cdw_geo(&cd, g.C, Hp, (Wp + g.sw - 1) // g.sw, g.sw, g.OC, g.OH, g.OW, g.kh, g.kw, g.sh,
             g.dh, L, g.OW, 1)
    plane = g.C * Hp * g.sw * cd.Wq
    # tiles: two output rows at once where a row is narrow
    if g.OW <= ptc_cdw_max_tw(2) and g.OH >= 2:
        tr = 2
        tw = <int>g.OW
    else:
        tr = 1
        tw = ptc_cdw_max_tw(1) if g.OW > ptc_cdw_max_tw(1) else <int>g.OW
    nthr = nth if nth > 1 and N * L * g.OC * K >= DIRECT_PAR_WORK else 1
    nblk = (g.OC + nvmax * VL - 1) // (nvmax * VL)
    # one padded plane per thread when the threads share the samples (the
    # branch below), one in all when they share a sample's rows
    wp = <float*>ptc_scratch_malloc((nblk * nvmax * VL * K + (nthr if N >= nthr else 1) * plane + 1)
                        * sizeof(float))
    koff = <Py_ssize_t*>ptc_scratch_malloc((g.kh * g.kw + 1) * sizeof(Py_ssize_t))
    if wp == NULL or koff == NULL:
        free(wp)
        free(koff)
        return -1
    for a in range(g.kh):
        for e in range(g.kw):
            koff[a * g.kw + e] = (a * g.dh * g.sw * cd.Wq + ((e * g.dw) % g.sw) * cd.Wq
                                  + (e * g.dw) // g.sw)
    cd.koff = koff
    xp = wp + nblk * nvmax * VL * K
    # block b at wp + o0 * K, (K, its channels rounded up to vectors), the
    # blocks _wide_sample walks
    nvec = (g.OC + VL - 1) // VL
    nblk = (nvec + nvmax - 1) // nvmax
    for b in prange(nblk, num_threads=nthr if nthr < nblk else <int>nblk, schedule='static'):
        o0 = _blk_start(b, nvec, nblk) * VL
        ptc_cdw_pack_w(w, g.OC, K, o0, _blk_start(b + 1, nvec, nblk) * VL - o0, wp + o0 * K)
    # the planes' zeros once; each sample writes only its pixels
    memset(xp, 0, (nthr if N >= nthr else 1) * plane * sizeof(float))
    if nthr > 1 and N >= nthr:
        for n in prange(N, num_threads=nthr, schedule='static'):
            t = threadid()
            ptc_cdw_pad(x + n * g.C * P, g.H, g.W, g.ph, g.pw, &cd, xp + t * plane, 0)
            _wide_sample(xp + t * plane, wp, bias, y + n * g.OC * L, &cd, K, nvmax, VL, tr,
                         tw, 0, g.OH)
    else:
        # row bands of whole tiles per thread
        per = (g.OH + nthr - 1) // nthr
        per = (per + tr - 1) // tr * tr
        for n in range(N):
            ptc_cdw_pad(x + n * g.C * P, g.H, g.W, g.ph, g.pw, &cd, xp, 0)
            for r in prange(0, g.OH, per, num_threads=nthr, schedule='static'):
                _wide_sample(xp, wp, bias, y + n * g.OC * L, &cd, K, nvmax, VL, tr, tw, r,
                             r + per if r + per < g.OH else g.OH)
    free(koff)
    free(wp)
    return 0


# The weight gradient on the same planes: ptc_conv_direct_bww.h.
cdef extern from "ptc_conv_direct_bww.h":
    void ptc_cdw_store_gw(const float* acc, Py_ssize_t lda, Py_ssize_t k0, Py_ssize_t k1,
                          Py_ssize_t OC, float* gw, Py_ssize_t K) nogil
    ctypedef void (*ptc_cdw_bww_fn)(const float*, Py_ssize_t, const float*, Py_ssize_t,
                                    Py_ssize_t, Py_ssize_t, const Py_ssize_t*, Py_ssize_t,
                                    const Py_ssize_t*, float*, Py_ssize_t, int) noexcept nogil
    void ptc_cdw_transpose_gy(const float* gy, Py_ssize_t OC, Py_ssize_t L, Py_ssize_t ldg,
                              float* gT) nogil
    ptc_cdw_bww_fn ptc_cdw_bww_kernel(int nv, int tw) nogil

cdef enum:
    # a chunk of samples: every tile (a channel block's gradients, a few
    # taps) runs over the whole chunk with its accumulators in registers, so
    # the accumulator buffer (taps x channels: 2 MiB for 128->256 4x4) is
    # read and written once per chunk.  The chunk's transposed gradients
    # (read whole by each tile) and its planes (read a channel at a time)
    # stay in L2.  Measured: the whole batch (64) in one chunk loses 10% on
    # 64->128 4x4
    BWW_CHUNK_GT = 262144
    BWW_CHUNK_PLANES = 786432
    BWW_MIN_TAPS = 32           # C*kh*kw from which the tiles pay


cdef bint _use_wide_bww(const Geo* g) noexcept nogil:
    """2-d, one group, at least two vectors of output channels, a kernel of
    more than one tap, and enough work."""
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    if (not _knobs[KNOB_DIRECT] or ptc_cdw_max_nv() == 0 or g.G != 1 or g.D != 1
            or g.kd != 1 or g.OD != 1 or g.pd != 0 or g.OH * g.OW == 0 or g.kh * g.kw == 1):
        return False
    # under 32 taps per window the gradient's transposition (OC*L per
    # sample) is a large part of the work (measured faster from 36: 3->64
    # 4x4 2.05 -> 1.78 ms, 4->64 3x3 3.8 -> 3.3)
    if g.OC < 2 * VL or g.C * g.kh * g.kw < BWW_MIN_TAPS:
        return False
    return g.OC * g.OH * g.OW * g.C * g.kh * g.kw >= WIDE_MIN_WORK


cdef int _wide_bww(const float* x, const float* gy, float* gw, Py_ssize_t N, const Geo* g,
                   int nth) noexcept nogil:
    """gw (OC, C, kh, kw) = sum_n gy_n cols(x_n)^T by the tiles of
    ptc_conv_direct_bww.h.  -1 when memory is short (nothing written).

    The threads split the taps (c, a, e): each runs every channel block over
    its own run of tap groups, on its own padded planes (only the input
    channels its taps read) and its own transposed gradients, and writes its
    own rows of the accumulators and its own columns of gw.  Nothing one
    thread writes is read by another, so no cache line moves between cores
    (a shared plane buffer, padded by one core and read by both, made the
    2-thread weight gradient of 64->128 4x4 only 1.25x faster than 1 thread:
    10.3 -> 8.2 ms, a fifth of it padding).  Every gW element is still one
    FMA chain over the samples and positions in order: the same bits at any
    thread count."""
    cdef ptc_cdw_geo cd
    cdef int nvmax = ptc_cdw_max_nv(), TWm = ptc_cdw_max_tw(1), nthr, tw
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    cdef Py_ssize_t K = g.C * g.kh * g.kw, L = g.OH * g.OW, P = g.H * g.W, KK = g.kh * g.kw
    cdef Py_ssize_t nvec = (g.OC + VL - 1) // VL, OCp, nblk, ntg, S, n0, m, j, b, tg
    cdef Py_ssize_t Hp, Wp, R, CP, c, a, e, oh, ow, t0, t1, k0, k1, nchmax, xs, per, t
    cdef Py_ssize_t* koff
    cdef Py_ssize_t* pos
    cdef Py_ssize_t* bo0
    cdef Py_ssize_t* tglo
    cdef Py_ssize_t* clo
    cdef int* bnv
    cdef ptc_cdw_geo* cdt
    cdef float* acc
    cdef float* buf
    cdef float* xp
    cdef float* gT
    cdef ptc_cdw_bww_fn fn
    OCp = nvec * VL
    _plane_extent(g, &Hp, &Wp)
    _cdw_geo(&cd, g.C, Hp, (Wp + g.sw - 1) // g.sw, g.sw, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0)
    R = g.sw * cd.Wq
    CP = Hp * R                          # one padded channel plane
    # a chunk of samples: see BWW_CHUNK_* (the bits do not depend on it: the
    # accumulators carry each chain from chunk to chunk)
    S = BWW_CHUNK_GT // (L * OCp * <Py_ssize_t>sizeof(float))
    if S > BWW_CHUNK_PLANES // (g.C * CP * <Py_ssize_t>sizeof(float)):
        S = BWW_CHUNK_PLANES // (g.C * CP * <Py_ssize_t>sizeof(float))
    S = 1 if S < 1 else S
    S = N if S > N else S
    nblk = (nvec + nvmax - 1) // nvmax
    ntg = (K + TWm - 1) // TWm
    nthr = nth if nth > 1 and N * L * g.OC * K >= DIRECT_PAR_WORK else 1
    nthr = <int>ntg if nthr > ntg else nthr
    koff = <Py_ssize_t*>ptc_scratch_malloc((K + L + 2 * nblk + 2 * (nthr + 1) + 1) * sizeof(Py_ssize_t))
    cdt = <ptc_cdw_geo*>ptc_scratch_malloc(nthr * sizeof(ptc_cdw_geo))
    if koff == NULL or cdt == NULL:
        free(koff)
        free(cdt)
        return -1
    pos = koff + K
    bo0 = pos + L
    bnv = <int*>(bo0 + nblk)    # nblk ints in nblk Py_ssize_t slots
    tglo = bo0 + 2 * nblk
    clo = tglo + nthr + 1
    # thread t: tap groups tglo[t] .. tglo[t+1]-1, input channels clo[t] ..
    nchmax = 0
    for t in range(nthr + 1):
        tglo[t] = t * ntg // nthr
    for t in range(nthr):
        t0 = tglo[t] * TWm
        t1 = tglo[t + 1] * TWm
        t1 = K if t1 > K else t1
        clo[t] = t0 // KK
        cdt[t] = cd
        cdt[t].C = (t1 - 1) // KK + 1 - clo[t]
        nchmax = cdt[t].C if cdt[t].C > nchmax else nchmax
    xs = nchmax * CP
    per = S * (xs + L * OCp)
    acc = <float*>ptc_scratch_malloc((K * OCp + nthr * per + 1) * sizeof(float))
    if acc == NULL:
        free(koff)
        free(cdt)
        return -1
    buf = acc + K * OCp
    # tap offsets in the planes of the thread that runs them (its first
    # channel at offset 0)
    for t in range(nthr):
        for k0 in range(tglo[t] * TWm, tglo[t + 1] * TWm if tglo[t + 1] * TWm < K else K):
            c = k0 // KK
            a = (k0 % KK) // g.kw
            e = k0 % g.kw
            koff[k0] = (((c - clo[t]) * Hp + a * g.dh) * R + ((e * g.dw) % g.sw) * cd.Wq
                        + (e * g.dw) // g.sw)
    for oh in range(g.OH):
        for ow in range(g.OW):
            pos[oh * g.OW + ow] = oh * g.sh * R + ow
    # channel blocks: the vectors spread evenly (as the forward's)
    for b in range(nblk):
        bo0[b] = _blk_start(b, nvec, nblk) * VL
        bnv[b] = <int>(_blk_start(b + 1, nvec, nblk) - _blk_start(b, nvec, nblk))
    for t in prange(nthr, num_threads=nthr, schedule='static', chunksize=1):
        xp = buf + t * per
        gT = xp + S * xs
        memset(xp, 0, S * xs * sizeof(float))   # the planes' zeros, kept by every chunk
        n0 = 0
        while n0 < N:
            m = S if N - n0 > S else N - n0
            for j in range(m):
                ptc_cdw_pad(x + ((n0 + j) * g.C + clo[t]) * P, g.H, g.W, g.ph, g.pw, &cdt[t],
                            xp + j * xs, 0)
                ptc_cdw_transpose_gy(gy + (n0 + j) * g.OC * L, g.OC, L, OCp, gT + j * L * OCp)
            for b in range(nblk):
                for tg in range(tglo[t], tglo[t + 1]):
                    t0 = tg * TWm
                    tw = <int>(K - t0 if K - t0 < TWm else TWm)
                    fn = ptc_cdw_bww_kernel(bnv[b], tw)
                    fn(xp, xs, gT + bo0[b], L * OCp, OCp, m, pos, L, koff + t0,
                       acc + t0 * OCp + bo0[b], OCp, n0 == 0)
            n0 = n0 + m
        # gw[:, taps] from the (taps, OCp) accumulators
        k1 = tglo[t + 1] * TWm
        ptc_cdw_store_gw(acc, OCp, tglo[t] * TWm, K if k1 > K else k1, g.OC, gw, K)
    free(koff)
    free(cdt)
    free(acc)
    return 0


cdef enum:
    WIDE_MAX_PHASES = 16        # sh * sw of the phase-split input gradient


cdef inline Py_ssize_t _fdiv(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """floor(a / b) for b > 0 (C division truncates toward zero)."""
    return a // b if a >= 0 else -((-a + b - 1) // b)


cdef bint _use_wide_bwd_x(const Geo* g, Py_ssize_t N, int nth) noexcept nogil:
    """The phase-split input gradient (ptc_cdw_pack_w_phase): 2-d, one group,
    no dilation, at most 16 phases, enough input channels for the tiles, each
    phase's packed block in L2, and at least a sample per thread."""
    cdef int nv = ptc_cdw_max_nv()
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    if (not _knobs[KNOB_DIRECT] or nv == 0 or g.G != 1 or g.D != 1 or g.kd != 1
            or g.OD != 1 or g.pd != 0 or g.dh != 1 or g.dw != 1 or g.H * g.W == 0
            or g.OH * g.OW == 0 or g.sh * g.sw > WIDE_MAX_PHASES or g.kh * g.kw == 1):
        return False
    if g.C < 2 * VL or N < nth:
        return False
    if (g.OC * ((g.kh + g.sh - 1) // g.sh) * ((g.kw + g.sw - 1) // g.sw) * nv * VL
            > WIDE_MAX_BLOCK):
        return False
    return g.OC * g.OH * g.OW * g.C * g.kh * g.kw >= WIDE_MIN_WORK


cdef int _wide_bwd_x(const float* gy, const float* w, const float* bias, float* gx,
                     Py_ssize_t N, const Geo* g, int nth) noexcept nogil:
    """gx (N, C, H, W) = the input gradient of the convolution (+ bias), one
    stride-1 tile convolution of gy per phase (see ptc_cdw_pack_w_phase);
    samples shared by the threads.  -1 when memory is short (nothing
    written)."""
    cdef ptc_cdw_geo pad_geo
    cdef ptc_cdw_geo cds[WIDE_MAX_PHASES]
    cdef Py_ssize_t xoff[WIDE_MAX_PHASES]
    cdef Py_ssize_t yoff[WIDE_MAX_PHASES]
    cdef Py_ssize_t wof[WIDE_MAX_PHASES]
    cdef Py_ssize_t rs[WIDE_MAX_PHASES]
    cdef Py_ssize_t qs[WIDE_MAX_PHASES]
    cdef int trs[WIDE_MAX_PHASES]
    cdef int tws[WIDE_MAX_PHASES]
    cdef int nvmax = ptc_cdw_max_nv(), t, nthr, nph = 0, f
    cdef Py_ssize_t VL = ptc_conv_direct_lanes()
    cdef Py_ssize_t L = g.OH * g.OW, P = g.H * g.W
    cdef Py_ssize_t r, q, Jh, Jw, i0, i1, l0, l1, Hi, Wi, PT = 0, PL = 0, Hp, Wp, plane
    cdef Py_ssize_t wtot = 0, nvec, nblk, b, c0, nb, n, a, e, c, u, v, K, i
    cdef Py_ssize_t* koff
    cdef float* wp
    cdef float* xp
    cdef float* yn
    cdef float* mine
    cdef float val
    # the phases that hold input pixels: taps, pixel ranges i0..i1 (rows
    # h = i*sh + r - ph), l0..l1 (columns); the gy plane is padded by PT rows
    # and PL columns so that every phase's first tap row i0 - (Jh - 1) is in it
    for r in range(g.sh):
        for q in range(g.sw):
            i0 = -_fdiv(r - g.ph, g.sh)
            i1 = _fdiv(g.H - 1 + g.ph - r, g.sh)
            l0 = -_fdiv(q - g.pw, g.sw)
            l1 = _fdiv(g.W - 1 + g.pw - q, g.sw)
            if i1 < i0 or l1 < l0:
                continue
            Jh = (g.kh - r + g.sh - 1) // g.sh if r < g.kh else 0
            Jw = (g.kw - q + g.sw - 1) // g.sw if q < g.kw else 0
            if Jh > 0 and Jw > 0:
                PT = PT if PT >= Jh - 1 - i0 else Jh - 1 - i0
                PL = PL if PL >= Jw - 1 - l0 else Jw - 1 - l0
            rs[nph] = r
            qs[nph] = q
            nph += 1
    Hp = g.OH + PT
    Wp = g.OW + PL
    nvec = (g.C + VL - 1) // VL
    nblk = (nvec + nvmax - 1) // nvmax
    # the taps of phase f at koff + f * kh * kw (filled once Wp is known)
    koff = <Py_ssize_t*>ptc_scratch_malloc((nph * g.kh * g.kw + 1) * sizeof(Py_ssize_t))
    if koff == NULL:
        return -1
    for f in range(nph):
        r = rs[f]
        q = qs[f]
        i0 = -_fdiv(r - g.ph, g.sh)
        i1 = _fdiv(g.H - 1 + g.ph - r, g.sh)
        l0 = -_fdiv(q - g.pw, g.sw)
        l1 = _fdiv(g.W - 1 + g.pw - q, g.sw)
        Jh = (g.kh - r + g.sh - 1) // g.sh if r < g.kh else 0
        Jw = (g.kw - q + g.sw - 1) // g.sw if q < g.kw else 0
        Hi = i1 - i0 + 1
        Wi = l1 - l0 + 1
        # last plane row / column a tap reads: i1 + PT, l1 + PL
        Hp = Hp if Hp > i1 + PT else i1 + PT + 1
        Wp = Wp if Wp > l1 + PL else l1 + PL + 1
        _cdw_geo(&cds[f], g.OC, 0, 0, 1, g.C, Hi, Wi, Jh, Jw, 1, 1, P, g.sh * g.W, g.sw)
        cds[f].koff = koff + f * g.kh * g.kw
        xoff[f] = i0 - (Jh - 1) + PT        # first plane row, first column below
        yoff[f] = l0 - (Jw - 1) + PL
        wof[f] = wtot
        wtot += g.OC * Jh * Jw * nvec * VL
        if Wi <= ptc_cdw_max_tw(2) and Hi >= 2:
            trs[f] = 2
            tws[f] = <int>Wi
        else:
            trs[f] = 1
            tws[f] = ptc_cdw_max_tw(1) if Wi > ptc_cdw_max_tw(1) else <int>Wi
    for f in range(nph):
        cds[f].Hp = Hp
        cds[f].Wq = Wp
        for a in range(cds[f].kh):
            for e in range(cds[f].kw):
                koff[f * g.kh * g.kw + a * cds[f].kw + e] = a * Wp + e
        xoff[f] = xoff[f] * Wp + yoff[f]
        yoff[f] = (-_fdiv(rs[f] - g.ph, g.sh) * g.sh + rs[f] - g.ph) * g.W + (
            -_fdiv(qs[f] - g.pw, g.sw) * g.sw + qs[f] - g.pw)
    _cdw_geo(&pad_geo, g.OC, Hp, Wp, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0)
    plane = g.OC * Hp * Wp
    nthr = nth if nth > 1 and N * L * g.OC * g.C * g.kh * g.kw >= DIRECT_PAR_WORK else 1
    if nthr > N:
        nthr = <int>N
    wp = <float*>ptc_scratch_malloc((wtot + nthr * plane + 1) * sizeof(float))
    if wp == NULL:
        free(koff)
        return -1
    xp = wp + wtot
    memset(xp, 0, nthr * plane * sizeof(float))  # the planes' zeros, kept by every sample
    for i in prange(nph * nblk, num_threads=nthr, schedule='static'):
        f = <int>(i // nblk)
        b = i % nblk
        K = g.OC * cds[f].kh * cds[f].kw
        c0 = _blk_start(b, nvec, nblk) * VL
        if K > 0:
            ptc_cdw_pack_w_phase(w, g.OC, g.C, g.kh, g.kw, rs[f], qs[f], g.sh, g.sw, cds[f].kh,
                                 cds[f].kw, c0, _blk_start(b + 1, nvec, nblk) * VL - c0,
                                 wp + wof[f] + c0 * K)
    for n in prange(N, num_threads=nthr, schedule='static'):
        t = threadid()
        mine = xp + t * plane
        yn = gx + n * g.C * P
        ptc_cdw_pad(gy + n * g.OC * L, g.OH, g.OW, PT, PL, &pad_geo, mine, 0)
        for f in range(nph):
            K = g.OC * cds[f].kh * cds[f].kw
            if K > 0:
                _wide_sample(mine + xoff[f], wp + wof[f], bias, yn + yoff[f], &cds[f], K, nvmax,
                             VL, trs[f], tws[f], 0, cds[f].OH)
            else:
                # no tap reaches these pixels: the bias (or zero)
                for c in range(g.C):
                    val = bias[c] if bias != NULL else 0
                    for u in range(cds[f].OH):
                        for v in range(cds[f].OW):
                            yn[yoff[f] + c * P + u * cds[f].ys_h + v * cds[f].ys_w] = val
    free(wp)
    free(koff)
    return 0


cdef enum:
    # output channels per group from which the gathers pay: each gathered
    # element feeds OCg / 12 register tiles (measured on Zen 4: a loss at 64
    # channels with 3 input channels, a gain from 128)
    IMPLICIT_MIN_OC = 96


cdef inline bint _use_implicit(const Geo* g, Py_ssize_t LD, Py_ssize_t OCg,
                               Py_ssize_t CgKK) noexcept nogil:
    """2-d geometry (one input and output plane in depth), enough output
    channels, and a product that ptc_sgemm runs (size and CPU).  The weight
    gradient also leaves small gW to ptc_sgemm_small_nt (as the column-matrix
    path does), so both paths give the same bits."""
    return (_knobs[KNOB_IMPLICIT] and g.D == 1 and g.kd == 1 and g.OD == 1 and g.pd == 0
            and OCg >= IMPLICIT_MIN_OC and LD * OCg * CgKK >= OWN_SGEMM_MIN
            and ptc_sgemm_isa() > 0)


cdef void _im2col_geo(ptc_sg_im2col* im, const Geo* g) noexcept nogil:
    im.sample_stride = g.C * g.H * g.W
    im.H = g.H
    im.W = g.W
    im.OH = g.OH
    im.OW = g.OW
    im.kh = g.kh
    im.kw = g.kw
    im.sh = g.sh
    im.sw = g.sw
    im.ph = g.ph
    im.pw = g.pw
    im.dh = g.dh
    im.dw = g.dw


cdef Py_ssize_t _bww_implicit(const float* x, const float* gy, float* acc, Py_ssize_t m,
                              const Geo* g) noexcept nogil:
    """acc (OC, C/G*kh*kw) += gy cols(x)^T for the ``m`` samples at ``x``
    (gy as (OC, m*L)), group by group, without the column matrix; returns
    the number of groups done (fewer than G when ptc_sgemm declined a group,
    before writing it: no memory, offsets too large)."""
    cdef ptc_sg_im2col im
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t P = g.H * g.W, LD = m * g.OH * g.OW, CgKK = Cg * g.kh * g.kw, gi
    _im2col_geo(&im, g)
    for gi in range(g.G):
        im.x = x + gi * Cg * P
        if ptc_sgemm_conv_bww(&im, m, Cg, OCg, gy + gi * OCg * LD, LD, 1.0,
                              acc + gi * OCg * CgKK, CgKK) != 0:
            return gi
    return g.G


cdef bint _fwd_implicit(const float* x, const float* w, float* out, Py_ssize_t m,
                        const Geo* g) noexcept nogil:
    """out (OC, m*L) = W cols(x) for the ``m`` samples at ``x``, group by
    group, without the column matrix; False when ptc_sgemm declined (no
    memory): the caller then builds the column matrix."""
    cdef ptc_sg_im2col im
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t L = g.OH * g.OW, P = g.H * g.W, LD = m * L, gi
    _im2col_geo(&im, g)
    for gi in range(g.G):
        im.x = x + gi * Cg * P
        if ptc_sgemm_conv_fwd(&im, m, Cg, OCg, w + gi * OCg * Cg * g.kh * g.kw,
                              out + gi * OCg * LD, LD) != 0:
            return False
    return True


cdef inline Py_ssize_t _cdiv_up(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    # ceil(a / b) for b > 0 and any a
    if a >= 0:
        return (a + b - 1) // b
    return -((-a) // b)


cdef inline void _ow_range(Py_ssize_t off, Py_ssize_t sw, Py_ssize_t W, Py_ssize_t OW,
                           Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """Output columns ow in [lo, hi) read input column ow*sw + off inside [0, W)."""
    cdef Py_ssize_t a = 0, b
    if off < 0:
        a = _cdiv_up(-off, sw)
    b = _cdiv_up(W - off, sw)
    if b > OW:
        b = OW
    if a > OW:
        a = OW
    if b < a:
        b = a
    lo[0] = a
    hi[0] = b


cdef void _im2col_channel(const flt* xc, flt* col, Py_ssize_t ld, const Geo* g,
                          Py_ssize_t c, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """Rows of input channel ``c`` (already offset into ``xc``) of the column
    matrix, for the output rows ``r0 <= od*OH + oh < r1`` only (column 0 is
    output row ``r0``); column-matrix rows are ``ld`` elements apart.  The
    geometry is read into locals once (the stores below may not alias it for
    the compiler, and the loops are short: 8 output columns in DCGAN)."""
    cdef Py_ssize_t OH = g.OH, OW = g.OW, D = g.D, H = g.H, W = g.W
    cdef Py_ssize_t kd = g.kd, kh = g.kh, kw = g.kw, sd = g.sd, sh = g.sh, sw = g.sw
    cdef Py_ssize_t pd = g.pd, ph = g.ph, pw = g.pw, dd = g.dd, dh = g.dh, dw = g.dw
    cdef Py_ssize_t a, b, e, r, od, oh, ow, idd, ih, off, lo, hi, od0, oh0
    cdef flt* row
    cdef flt* dst
    cdef const flt* src
    od0 = r0 // OH
    oh0 = r0 - od0 * OH
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                row = col + (((c * kd + a) * kh + b) * kw + e) * ld
                off = e * dw - pw
                _ow_range(off, sw, W, OW, &lo, &hi)
                od = od0
                oh = oh0
                dst = row
                for r in range(r0, r1):
                    idd = od * sd - pd + a * dd
                    ih = oh * sh - ph + b * dh
                    oh += 1
                    if oh == OH:
                        oh = 0
                        od += 1
                    if idd < 0 or idd >= D or ih < 0 or ih >= H:
                        for ow in range(OW):
                            dst[ow] = 0
                        dst += OW
                        continue
                    src = xc + (idd * H + ih) * W + off
                    for ow in range(lo):
                        dst[ow] = 0
                    if sw == 1:
                        for ow in range(lo, hi):
                            dst[ow] = src[ow]
                    elif sw == 2:
                        for ow in range(lo, hi):
                            dst[ow] = src[2 * ow]
                    else:
                        for ow in range(lo, hi):
                            dst[ow] = src[ow * sw]
                    for ow in range(hi, OW):
                        dst[ow] = 0
                    dst += OW


cdef void _col2im_channel(flt* xc, const flt* col, Py_ssize_t ld, const Geo* g,
                          Py_ssize_t c, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """Accumulate the rows (``ld`` apart) of input channel ``c`` for output
    rows ``[r0, r1)`` into its plane ``xc`` (geometry in locals, as above)."""
    cdef Py_ssize_t OH = g.OH, OW = g.OW, D = g.D, H = g.H, W = g.W
    cdef Py_ssize_t kd = g.kd, kh = g.kh, kw = g.kw, sd = g.sd, sh = g.sh, sw = g.sw
    cdef Py_ssize_t pd = g.pd, ph = g.ph, pw = g.pw, dd = g.dd, dh = g.dh, dw = g.dw
    cdef Py_ssize_t a, b, e, r, od, oh, ow, idd, ih, off, lo, hi, od0, oh0
    cdef const flt* row
    cdef const flt* s
    cdef flt* dst
    od0 = r0 // OH
    oh0 = r0 - od0 * OH
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                row = col + (((c * kd + a) * kh + b) * kw + e) * ld
                off = e * dw - pw
                _ow_range(off, sw, W, OW, &lo, &hi)
                if hi <= lo:
                    continue
                od = od0
                oh = oh0
                s = row
                for r in range(r0, r1):
                    idd = od * sd - pd + a * dd
                    ih = oh * sh - ph + b * dh
                    oh += 1
                    if oh == OH:
                        oh = 0
                        od += 1
                    if idd < 0 or idd >= D or ih < 0 or ih >= H:
                        s += OW
                        continue
                    dst = xc + (idd * H + ih) * W + off
                    if sw == 1:
                        for ow in range(lo, hi):
                            dst[ow] += s[ow]
                    elif sw == 2:
                        for ow in range(lo, hi):
                            dst[2 * ow] += s[ow]
                    else:
                        for ow in range(lo, hi):
                            dst[ow * sw] += s[ow]
                    s += OW


# The rows of 2-d float32 convolutions with unit column stride: the
# vectorised copies of ptc_im2col.h (masked AVX-512 moves, AVX2 8-float moves)
# instead of the element loops above (same values, same summation order).
cdef extern from "ptc_im2col.h":
    ctypedef struct ptc_ic_geo:
        Py_ssize_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw
    int ptc_im2col_max
    int ptc_im2col_level() nogil
    int ptc_im2col_level_for(int level, Py_ssize_t sw, int col2im) nogil
    void ptc_im2col_ch_f32(int level, const float* xc, float* col, Py_ssize_t ld,
                           const ptc_ic_geo* g, Py_ssize_t c, Py_ssize_t r0, Py_ssize_t r1) nogil
    void ptc_col2im_ch_f32(int level, float* xc, const float* col, Py_ssize_t ld,
                           const ptc_ic_geo* g, Py_ssize_t c, Py_ssize_t r0, Py_ssize_t r1) nogil
    ctypedef struct ptc_ic_move:
        pass
    int PTC_IC_PLANE
    int PTC_IC_PLANE_NPOS
    int ptc_ic_plane_moves(const ptc_ic_geo* g, int VL, ptc_ic_move* mv, int cap) nogil
    int ptc_col2im_plane_vl(int level) nogil
    void ptc_col2im_plane_f32(int level, float* xc, const float* col, Py_ssize_t ld,
                              Py_ssize_t c, Py_ssize_t kk, Py_ssize_t plane,
                              const ptc_ic_move* mv, int nmv) nogil


cdef int _vec_rows(const Geo* g, ptc_ic_geo* ig, bint col2im) noexcept nogil:
    """The level of ptc_im2col.h's row copies for ``g`` (2-d; column stride 1,
    or 2 for col2im on AVX-512), else 0 (the element loops); fills ``ig``."""
    if g.D != 1 or g.kd != 1 or g.OD != 1 or g.pd != 0:
        return 0
    ig.H = g.H
    ig.W = g.W
    ig.OH = g.OH
    ig.OW = g.OW
    ig.kh = g.kh
    ig.kw = g.kw
    ig.sh = g.sh
    ig.sw = g.sw
    ig.ph = g.ph
    ig.pw = g.pw
    ig.dh = g.dh
    ig.dw = g.dw
    return ptc_im2col_level_for(ptc_im2col_level(), g.sw, col2im)


def _set_rows2(bint on):
    """Testing knob: the image panels by vector loads and permutes (True;
    ptc_sgemm.h's ptc_sg_pack_rows2/_avx2 for the forward product of
    column-stride-2 convolutions, ptc_sg_pack_t_rows4 for the weight gradient
    of 4-wide kernels, where they apply) or by gathers; returns the previous
    setting."""
    global ptc_sg_rows2_on
    old = ptc_sg_rows2_on != 0
    ptc_sg_rows2_on = 1 if on else 0
    return old


def _set_vec_rows(int level):
    """Testing knob: the highest level of the vectorised column-matrix rows
    of 2-d float32 convolutions (2: AVX-512F, 1: AVX2, 0: the element loops;
    the CPU's own level caps it); returns the previous setting."""
    global ptc_im2col_max
    if level < 0 or level > 2:
        raise ValueError("level must be 0, 1 or 2")
    old = ptc_im2col_max
    ptc_im2col_max = level
    return old


cdef void _im2col(const flt* x, flt* col, Py_ssize_t ld, const Geo* g, int nth,
                  Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """Column rows of output rows ``[r0, r1)`` of one sample ``x`` (C, D, H, W)."""
    cdef Py_ssize_t c
    cdef Py_ssize_t plane = g.D * g.H * g.W
    cdef Py_ssize_t per = g.kd * g.kh * g.kw * (r1 - r0) * g.OW
    cdef ptc_ic_geo ig
    cdef int level = _vec_rows(g, &ig, False) if flt is float else 0
    if nth > 1 and g.C > 1 and g.C * per >= parallel_grain():
        for c in prange(g.C, num_threads=nth, schedule='static'):
            if flt is float:
                if level:
                    ptc_im2col_ch_f32(level, x + c * plane, col, ld, &ig, c, r0, r1)
                    continue
            _im2col_channel(x + c * plane, col, ld, g, c, r0, r1)
    else:
        for c in range(g.C):
            if flt is float:
                if level:
                    ptc_im2col_ch_f32(level, x + c * plane, col, ld, &ig, c, r0, r1)
                    continue
            _im2col_channel(x + c * plane, col, ld, g, c, r0, r1)


cdef int _plane_on = 1


def _set_plane_col2im(bint on):
    """Testing knob: col2im of whole small images by vector moves
    (ptc_im2col.h's ptc_col2im_plane_f32, where the image fits) or by the
    row copies; returns the previous setting."""
    global _plane_on
    old = _plane_on != 0
    _plane_on = 1 if on else 0
    return old


cdef ptc_ic_move* _plane_moves(const ptc_ic_geo* ig, int level, int* nmv) noexcept nogil:
    """The moves of ptc_im2col.h's whole-image col2im for ``ig`` (malloc'd;
    the caller frees them), with their count in ``nmv``; NULL and ``nmv`` -1
    where it does not apply (image or position rows too large, too many
    moves, memory short, or switched off)."""
    cdef Py_ssize_t npos = ig.OH * ig.OW, kk = ig.kh * ig.kw
    cdef int vl = ptc_col2im_plane_vl(level)
    cdef Py_ssize_t cap = kk * npos
    cdef Py_ssize_t alt = kk * ((npos + vl - 1) // vl) * ((ig.H * ig.W + vl - 1) // vl)
    cdef ptc_ic_move* mv
    nmv[0] = -1
    if (not _plane_on or ig.H * ig.W > PTC_IC_PLANE or npos > PTC_IC_PLANE_NPOS
            or npos <= 0 or kk <= 0):
        return NULL
    if alt < cap:
        cap = alt
    if cap > 2048:              # moves of ~84 bytes: stay well below malloc's mmap size
        return NULL
    mv = <ptc_ic_move*>ptc_scratch_malloc(cap * sizeof(ptc_ic_move))
    if mv == NULL:
        return NULL
    nmv[0] = ptc_ic_plane_moves(ig, vl, mv, <int>cap)
    if nmv[0] < 0:
        free(mv)
        return NULL
    return mv


cdef void _col2im(flt* x, const flt* col, Py_ssize_t ld, const Geo* g, int nth,
                  Py_ssize_t r0, Py_ssize_t r1, bint zero) noexcept nogil:
    """Accumulate the column rows of output rows ``[r0, r1)`` into the sample
    ``x`` (C, D, H, W), zeroing it first when ``zero``."""
    cdef ptc_ic_geo ig
    cdef int level = _vec_rows(g, &ig, True) if flt is float else 0
    cdef ptc_ic_move* mv = NULL
    cdef int nmv = -1
    if flt is float:
        if level and r0 == 0 and r1 == g.OH:
            mv = _plane_moves(&ig, level, &nmv)
    _col2im_by(x, col, ld, g, nth, r0, r1, zero, level, &ig, mv, nmv)
    free(mv)


cdef void _col2im_by(flt* x, const flt* col, Py_ssize_t ld, const Geo* g, int nth,
                     Py_ssize_t r0, Py_ssize_t r1, bint zero, int level, const ptc_ic_geo* igp,
                     const ptc_ic_move* mv, int nmv) noexcept nogil:
    """``_col2im`` with its row level, geometry and whole-image moves
    (``nmv`` -1: none) made by the caller, who may use them for many calls."""
    cdef Py_ssize_t c
    cdef Py_ssize_t plane = g.D * g.H * g.W
    cdef Py_ssize_t per = g.kd * g.kh * g.kw * (r1 - r0) * g.OW
    cdef ptc_ic_geo ig = igp[0]
    if nth > 1 and g.C > 1 and g.C * per >= parallel_grain():
        for c in prange(g.C, num_threads=nth, schedule='static'):
            if zero:
                memset(x + c * plane, 0, plane * sizeof(flt))
            if flt is float:
                if nmv >= 0:
                    ptc_col2im_plane_f32(level, x + c * plane, col, ld, c, g.kh * g.kw, plane, mv, nmv)
                    continue
                if level:
                    ptc_col2im_ch_f32(level, x + c * plane, col, ld, &ig, c, r0, r1)
                    continue
            _col2im_channel(x + c * plane, col, ld, g, c, r0, r1)
    else:
        for c in range(g.C):
            if zero:
                memset(x + c * plane, 0, plane * sizeof(flt))
            if flt is float:
                if nmv >= 0:
                    ptc_col2im_plane_f32(level, x + c * plane, col, ld, c, g.kh * g.kw, plane, mv, nmv)
                    continue
                if level:
                    ptc_col2im_ch_f32(level, x + c * plane, col, ld, &ig, c, r0, r1)
                    continue
            _col2im_channel(x + c * plane, col, ld, g, c, r0, r1)


cdef inline bint _is_pointwise(const Geo* g) noexcept nogil:
    return (g.kd == 1 and g.kh == 1 and g.kw == 1 and g.sd == 1 and g.sh == 1 and g.sw == 1
            and g.pd == 0 and g.ph == 0 and g.pw == 0
            and g.OD == g.D and g.OH == g.H and g.OW == g.W)


cdef void _add_bias(flt* y, const flt* bias, Py_ssize_t C, Py_ssize_t L) noexcept nogil:
    cdef Py_ssize_t c, i
    cdef flt v
    for c in range(C):
        v = bias[c]
        for i in range(L):
            y[c * L + i] += v


# Target GEMM width (columns = output positions of the samples batched into
# one GEMM) per primitive: samples per GEMM = width / L.  Measured on an AMD
# EPYC (AVX2) with SciPy's OpenBLAS 0.3.30: sgemm at m=256..320, n=128,
# k=1024 (DCGAN's 64->128 forward at 4 samples) runs at 40 % of the rate of
# the neighbouring sizes, so the forward batches 512 columns; the backward
# passes measured best at 256 (1024 pushes the column block out of L2).
cdef Py_ssize_t[3] _gemm_cols = [512, 256, 256]


def _set_gemm_cols(Py_ssize_t n, int mode=-1):
    """Tuning knob: samples are batched into one GEMM until it has ``n``
    columns, for one primitive (``mode`` 0 forward, 1 input gradient, 2 weight
    gradient) or all three (``mode=-1``).  Returns the previous value (of the
    forward for ``mode=-1``)."""
    if n < 1 or n > 1 << 30:
        raise ValueError("gemm columns must be in [1, 2**30]")
    if mode < -1 or mode > 2:
        raise ValueError("mode must be -1, 0, 1 or 2")
    old = _gemm_cols[0 if mode < 0 else mode]
    if mode < 0:
        _gemm_cols[0] = n
        _gemm_cols[1] = n
        _gemm_cols[2] = n
    else:
        _gemm_cols[mode] = n
    return old


cdef inline Py_ssize_t _chunk(int mode, Py_ssize_t N, Py_ssize_t L) noexcept nogil:
    cdef Py_ssize_t nb = _gemm_cols[mode] // L
    if nb < 1:
        nb = 1
    if nb > N:
        nb = N
    return nb


cdef Py_ssize_t _col_budget = 1 << 18   # column-buffer elements per row chunk


def _set_col_budget(Py_ssize_t n):
    """Tuning knob: a one-sample GEMM is split into output-row chunks whose
    column block holds at most ``n`` elements (so it stays in L2)."""
    global _col_budget
    if n < 1 or n > 1 << 40:
        raise ValueError("column budget must be in [1, 2**40]")
    old = _col_budget
    _col_budget = n
    return old


cdef inline Py_ssize_t _rows_chunk(const Geo* g) noexcept nogil:
    """Output rows (of OD*OH) per chunk of a one-sample GEMM, balanced."""
    cdef Py_ssize_t R = g.OD * g.OH
    cdef Py_ssize_t per_row = g.C * g.kd * g.kh * g.kw * g.OW
    cdef Py_ssize_t rc, nch
    if per_row <= 0:
        return R if R > 0 else 1
    rc = _col_budget // per_row
    if rc < 1:
        rc = 1
    if rc >= R:
        return R if R > 0 else 1
    nch = (R + rc - 1) // rc
    return (R + nch - 1) // nch


cdef inline bint _row_chunked(Py_ssize_t nb, bint pw, Py_ssize_t CgKK, Py_ssize_t OCg) noexcept nogil:
    return nb == 1 and not pw and CgKK > 0 and OCg > 0


cdef void _fill_bias_rows(flt* out, const flt* bias, Py_ssize_t rows, Py_ssize_t n,
                          Py_ssize_t ld) noexcept nogil:
    """out[r, :n] = bias[r] for ``rows`` rows ``ld`` apart."""
    cdef Py_ssize_t r, i
    cdef flt v
    for r in range(rows):
        v = bias[r]
        for i in range(n):
            out[r * ld + i] = v


cdef enum:
    MODE_FWD = 0    # y = W cols(x) (+ bias)
    MODE_BWD_X = 1  # gx = col2im(W^T gy) (+ bias)
    MODE_BWD_W = 2  # gw = sum gy cols(x)^T


cdef void _rows_one(int mode, const flt* x, const flt* w, const flt* bias, flt* y,
                    Py_ssize_t n, const Geo* g, int nth, flt* col, Py_ssize_t rc,
                    flt* acc) noexcept nogil:
    """The three primitives for sample ``n``, in chunks of ``rc`` output rows
    whose column block fits in L2 (``_col_budget``; ``col`` holds one chunk).
    Operands by mode: FWD (x, w, bias) -> y; BWD_X (gy=x, w, bias) -> gx=y;
    BWD_W (x, gy=w) -> accumulated into ``acc`` (beta = 1).  The forward
    pre-fills the bias so the GEMM accumulates onto it."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t R = g.OD * g.OH
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t CgKK = Cg * g.kd * g.kh * g.kw
    cdef Py_ssize_t r0, r1, Lc, gi
    cdef flt* out
    cdef const flt* gys
    cdef flt beta = 1 if bias != NULL else 0
    if mode == MODE_BWD_X:
        memset(y + n * g.C * P, 0, g.C * P * sizeof(flt))
    r0 = 0
    while r0 < R:
        r1 = r0 + rc if R - r0 > rc else R
        Lc = (r1 - r0) * g.OW
        if mode != MODE_BWD_X:
            _im2col(x + n * g.C * P, col, Lc, g, nth, r0, r1)
        for gi in range(g.G):
            if mode == MODE_FWD:
                out = y + n * g.OC * L + gi * OCg * L + r0 * g.OW
                if bias != NULL:
                    _fill_bias_rows(out, bias + gi * OCg, OCg, Lc, L)
                if flt is float:
                    if _use_small(OCg, CgKK):
                        ptc_sgemm_small(OCg, Lc, CgKK, w + gi * OCg * CgKK, CgKK, 1,
                                        col + gi * CgKK * Lc, Lc, out, L, bias != NULL)
                        continue
                _gemm(CH_N, CH_N, <blas_int>Lc, <blas_int>OCg, <blas_int>CgKK, <flt>1,
                      col + gi * CgKK * Lc, <blas_int>Lc, <flt*>w + gi * OCg * CgKK,
                      <blas_int>CgKK, beta, out, <blas_int>L)
            elif mode == MODE_BWD_X:
                _gemm(CH_N, CH_T, <blas_int>Lc, <blas_int>CgKK, <blas_int>OCg, <flt>1,
                      <flt*>x + n * g.OC * L + gi * OCg * L + r0 * g.OW, <blas_int>L,
                      <flt*>w + gi * OCg * CgKK, <blas_int>CgKK, <flt>0,
                      col + gi * CgKK * Lc, <blas_int>Lc)
            else:
                gys = w + n * g.OC * L + gi * OCg * L + r0 * g.OW
                if flt is float:
                    if _use_small_nt(OCg, CgKK, Lc):
                        ptc_sgemm_small_nt(OCg, CgKK, Lc, gys, L, col + gi * CgKK * Lc, Lc,
                                           acc + gi * OCg * CgKK, CgKK, 1)
                        continue
                _gemm(CH_T, CH_N, <blas_int>CgKK, <blas_int>OCg, <blas_int>Lc, <flt>1,
                      col + gi * CgKK * Lc, <blas_int>Lc, <flt*>gys, <blas_int>L, <flt>1,
                      acc + gi * OCg * CgKK, <blas_int>CgKK)
        if mode == MODE_BWD_X:
            _col2im(y + n * g.C * P, col, Lc, g, nth, r0, r1, False)
        r0 = r1
    if mode == MODE_BWD_X and bias != NULL:
        _add_bias(y + n * g.C * P, bias, g.C, P)


cdef int _rows(int mode, const flt* x, const flt* w, const flt* bias, flt* y, Py_ssize_t N,
               const Geo* g, int nth) noexcept nogil:
    """``_rows_one`` for every sample in turn (BWD_W: y zeroed by the caller)."""
    cdef Py_ssize_t rc = _rows_chunk(g)
    cdef Py_ssize_t n
    cdef flt* col = <flt*>ptc_scratch_malloc((g.C * g.kd * g.kh * g.kw * rc * g.OW + 1) * sizeof(flt))
    if col == NULL:
        return -1
    for n in range(N):
        _rows_one(mode, x, w, bias, y, n, g, nth, col, rc, y)
    free(col)
    return 0


cdef inline bint _use_shift(const Geo* g, Py_ssize_t Cg, Py_ssize_t OCg) noexcept nogil:
    """Stride-1 convolutions with enough input channels per group run as a
    sum of one GEMM per kernel offset over a zero-padded copy of the sample
    (no column matrix); the padded-width output grid wastes at most ~30%."""
    cdef Py_ssize_t Hp, Wp, L, Ng
    if not _knobs[KNOB_SHIFT] or g.sd != 1 or g.sh != 1 or g.sw != 1 or Cg < 32 or OCg < 1:
        return False
    if g.kd * g.kh * g.kw == 1:
        return False
    L = g.OD * g.OH * g.OW
    if L == 0:
        return False
    Hp = g.OH + (g.kh - 1) * g.dh
    Wp = g.OW + (g.kw - 1) * g.dw
    Ng = ((g.OD - 1) * Hp + (g.OH - 1)) * Wp + g.OW
    return Ng * 10 <= L * 13


cdef int _shift(int mode, const flt* x, const flt* w, const flt* bias, flt* y, Py_ssize_t N,
                const Geo* g, int nth) noexcept nogil:
    """The three primitives for stride-1 convolutions without a column matrix
    (operands by mode as in ``_rows``).

    Each sample is held in a zero-padded (C, Dp, Hp, Wp) buffer ``xp``; output
    position (od, oh, ow) is grid index j = (od*Hp + oh)*Wp + ow of an
    (OC, Ng) grid, and kernel offset (a, b, e) reads padded index
    j + (a*dd*Hp + b*dh)*Wp + e*dw, so per group and offset k one GEMM does
      FWD:   grid += W_k xp[:, shift:shift+Ng]
      BWD_X: xp[:, shift:shift+Ng] += W_k^T grid(gy)
      BWD_W: G_k += xp[:, shift:shift+Ng] grid(gy)^T
    with W_k / G_k held as ``wk[(k*G + gi)]`` = (OCg, Cg) row-major.  Grid
    columns with ow >= OW are padding: dropped on output, zero in grid(gy)."""
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t CgKK = Cg * KK
    cdef Py_ssize_t Dp = g.OD + (g.kd - 1) * g.dd
    cdef Py_ssize_t Hp = g.OH + (g.kh - 1) * g.dh
    cdef Py_ssize_t Wp = g.OW + (g.kw - 1) * g.dw
    cdef Py_ssize_t Pp = Dp * Hp * Wp
    cdef Py_ssize_t Ng = ((g.OD - 1) * Hp + (g.OH - 1)) * Wp + g.OW
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t n, c, k, a, b, e, gi, o, idd, ih, od, oh, i, lo, hi, sh
    cdef flt* src
    cdef flt* dst
    cdef flt v
    cdef flt* xp = <flt*>ptc_scratch_malloc((g.C * Pp + g.OC * Ng + g.OC * CgKK + 1) * sizeof(flt))
    cdef flt* grid
    cdef flt* wk
    if xp == NULL:
        return -1
    grid = xp + g.C * Pp
    wk = grid + g.OC * Ng
    if mode == MODE_BWD_W:
        memset(wk, 0, g.OC * CgKK * sizeof(flt))
    else:
        for gi in range(g.G):
            for o in range(OCg):
                for c in range(Cg):
                    for k in range(KK):
                        wk[(k * g.G + gi) * OCg * Cg + o * Cg + c] = w[(gi * OCg + o) * CgKK + c * KK + k]
    memset(xp, 0, g.C * Pp * sizeof(flt))
    # input columns [lo, hi) land inside the padded width (at + pw)
    lo = 0 if g.pw >= 0 else -g.pw
    hi = g.W if g.W + g.pw <= Wp else Wp - g.pw
    for n in range(N):
        if mode != MODE_FWD:
            # grid(gy): gy at its grid positions, zeros in the padding columns
            src = <flt*>(x if mode == MODE_BWD_X else w) + n * g.OC * L
            for o in range(g.OC):
                memset(grid + o * Ng, 0, Ng * sizeof(flt))
                for od in range(g.OD):
                    for oh in range(g.OH):
                        memcpy(grid + o * Ng + (od * Hp + oh) * Wp,
                               src + o * L + (od * g.OH + oh) * g.OW, g.OW * sizeof(flt))
        if mode == MODE_BWD_X:
            memset(xp, 0, g.C * Pp * sizeof(flt))
        elif hi > lo:
            for c in range(g.C):
                for idd in range(g.D):
                    od = idd + g.pd
                    if od >= Dp:
                        continue
                    for ih in range(g.H):
                        oh = ih + g.ph
                        if oh >= Hp:
                            continue
                        memcpy(xp + (c * Dp + od) * Hp * Wp + oh * Wp + lo + g.pw,
                               x + n * g.C * P + (c * g.D + idd) * g.H * g.W + ih * g.W + lo,
                               (hi - lo) * sizeof(flt))
        for gi in range(g.G):
            k = 0
            for a in range(g.kd):
                for b in range(g.kh):
                    for e in range(g.kw):
                        sh = (a * g.dd * Hp + b * g.dh) * Wp + e * g.dw
                        if mode == MODE_FWD:
                            _gemm(CH_N, CH_N, <blas_int>Ng, <blas_int>OCg, <blas_int>Cg, <flt>1,
                                  xp + gi * Cg * Pp + sh, <blas_int>Pp,
                                  wk + (k * g.G + gi) * OCg * Cg, <blas_int>Cg,
                                  <flt>(0 if k == 0 else 1), grid + gi * OCg * Ng, <blas_int>Ng)
                        elif mode == MODE_BWD_X:
                            _gemm(CH_N, CH_T, <blas_int>Ng, <blas_int>Cg, <blas_int>OCg, <flt>1,
                                  grid + gi * OCg * Ng, <blas_int>Ng,
                                  wk + (k * g.G + gi) * OCg * Cg, <blas_int>Cg, <flt>1,
                                  xp + gi * Cg * Pp + sh, <blas_int>Pp)
                        else:
                            _gemm(CH_T, CH_N, <blas_int>Cg, <blas_int>OCg, <blas_int>Ng, <flt>1,
                                  xp + gi * Cg * Pp + sh, <blas_int>Pp,
                                  grid + gi * OCg * Ng, <blas_int>Ng, <flt>1,
                                  wk + (k * g.G + gi) * OCg * Cg, <blas_int>Cg)
                        k += 1
        if mode == MODE_FWD:
            for o in range(g.OC):
                v = bias[o] if bias != NULL else 0
                for od in range(g.OD):
                    for oh in range(g.OH):
                        src = grid + o * Ng + (od * Hp + oh) * Wp
                        dst = y + (n * g.OC + o) * L + (od * g.OH + oh) * g.OW
                        for i in range(g.OW):
                            dst[i] = src[i] + v
        elif mode == MODE_BWD_X:
            for c in range(g.C):
                v = bias[c] if bias != NULL else 0
                for idd in range(g.D):
                    od = idd + g.pd
                    for ih in range(g.H):
                        oh = ih + g.ph
                        dst = y + n * g.C * P + (c * g.D + idd) * g.H * g.W + ih * g.W
                        if od >= Dp or oh >= Hp or hi <= lo:
                            for i in range(g.W):    # never read by the conv: zero gradient
                                dst[i] = v
                            continue
                        src = xp + (c * Dp + od) * Hp * Wp + oh * Wp + g.pw
                        for i in range(lo):
                            dst[i] = v
                        for i in range(lo, hi):
                            dst[i] = src[i] + v
                        for i in range(hi, g.W):
                            dst[i] = v
    if mode == MODE_BWD_W:
        for gi in range(g.G):
            for o in range(OCg):
                for c in range(Cg):
                    for k in range(KK):
                        y[(gi * OCg + o) * CgKK + c * KK + k] = wk[(k * g.G + gi) * OCg * Cg + o * Cg + c]
    free(xp)
    return 0


cdef void _gather(flt* dst, const flt* src, Py_ssize_t m, Py_ssize_t R, Py_ssize_t L) noexcept nogil:
    """dst (R, m*L) <- src (m, R, L)."""
    cdef Py_ssize_t j, r
    for j in range(m):
        for r in range(R):
            memcpy(dst + r * m * L + j * L, src + (j * R + r) * L, L * sizeof(flt))


cdef void _scatter(flt* dst, const flt* src, Py_ssize_t m, Py_ssize_t R, Py_ssize_t L) noexcept nogil:
    """dst (m, R, L) <- src (R, m*L)."""
    cdef Py_ssize_t j, r
    for j in range(m):
        for r in range(R):
            memcpy(dst + (j * R + r) * L, src + r * m * L + j * L, L * sizeof(flt))


include "_conv_batched.pxi"


cdef int _forward(const flt* x, const flt* w, const flt* bias, flt* y, Py_ssize_t N,
                  const Geo* g, int nth) noexcept nogil:
    """y (N, OC, L) = W cols(x) (+ bias); ``nb`` samples share one GEMM of
    ``nb * L`` columns (the column matrix of the chunk is (C*K, nb*L))."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t CgKK = Cg * KK
    cdef Py_ssize_t nb = _chunk(MODE_FWD, N, L)
    cdef Py_ssize_t n0, m, j, gi, LD
    cdef bint pw = _is_pointwise(g)
    cdef flt* col
    cdef flt* tmp
    cdef const flt* cp
    cdef flt* out
    if _is_whole(g):
        return _whole(MODE_FWD, x, w, bias, y, N, g)
    if flt is float:
        if _use_direct(g) and _direct_fwd(x, w, bias, y, N, g, nth) == 0:
            return 0
        if _use_wide(g) and _wide_fwd(x, w, bias, y, N, g, nth) == 0:
            return 0
    if _use_shift(g, Cg, OCg):
        return _shift(MODE_FWD, x, w, bias, y, N, g, nth)
    if nb < N:
        return _batched(MODE_FWD, x, w, bias, y, N, g, nth, nb)
    if _row_chunked(nb, pw, CgKK, OCg):
        return _rows(MODE_FWD, x, w, bias, y, N, g, nth)
    col = <flt*>ptc_scratch_malloc((g.C * KK * nb * L + (g.OC * nb * L if nb > 1 else 0) + 1) * sizeof(flt))
    if col == NULL:
        return -1
    tmp = col + g.C * KK * nb * L
    n0 = 0
    while n0 < N:
        m = nb if N - n0 > nb else N - n0
        LD = m * L
        if pw and m == 1:
            cp = x + n0 * g.C * P
        elif pw:
            _gather(col, x + n0 * g.C * P, m, g.C, L)
            cp = col
        else:
            for j in range(m):
                _im2col(x + (n0 + j) * g.C * P, col + j * L, LD, g, nth, 0, g.OD * g.OH)
            cp = col
        out = y + n0 * g.OC * L if m == 1 else tmp
        for gi in range(g.G):
            if CgKK == 0:
                memset(out + gi * OCg * LD, 0, OCg * LD * sizeof(flt))
                continue
            _gemm(CH_N, CH_N, <blas_int>LD, <blas_int>OCg, <blas_int>CgKK, <flt>1,
                  <flt*>cp + gi * CgKK * LD, <blas_int>LD, <flt*>w + gi * OCg * CgKK,
                  <blas_int>CgKK, <flt>0, out + gi * OCg * LD, <blas_int>LD)
        if m > 1:
            _scatter(y + n0 * g.OC * L, tmp, m, g.OC, L)
        if bias != NULL:
            for j in range(m):
                _add_bias(y + (n0 + j) * g.OC * L, bias, g.OC, L)
        n0 += m
    free(col)
    return 0


cdef int _backward_input(const flt* gy, const flt* w, const flt* bias, flt* gx, Py_ssize_t N,
                         const Geo* g, int nth) noexcept nogil:
    """gx (N, C, D, H, W) = col2im(W^T gy); ``bias`` (C,) is added when given."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t CgKK = Cg * KK
    cdef Py_ssize_t plane = g.D * g.H * g.W
    cdef Py_ssize_t nb = _chunk(MODE_BWD_X, N, L)
    cdef Py_ssize_t n0, m, j, gi, LD
    cdef bint pw = _is_pointwise(g)
    cdef flt* col
    cdef flt* gbuf
    cdef flt* cp
    cdef const flt* gp
    if _is_whole(g):
        return _whole(MODE_BWD_X, gy, w, bias, gx, N, g)
    if flt is float:
        if _use_wide_bwd_x(g, N, nth) and _wide_bwd_x(gy, w, bias, gx, N, g, nth) == 0:
            return 0
    if _use_shift(g, Cg, OCg):
        return _shift(MODE_BWD_X, gy, w, bias, gx, N, g, nth)
    if nb < N:
        return _batched(MODE_BWD_X, gy, w, bias, gx, N, g, nth, nb)
    if _row_chunked(nb, pw, CgKK, OCg):
        return _rows(MODE_BWD_X, gy, w, bias, gx, N, g, nth)
    col = <flt*>ptc_scratch_malloc((g.C * KK * nb * L + (g.OC * nb * L if nb > 1 else 0) + 1) * sizeof(flt))
    if col == NULL:
        return -1
    gbuf = col + g.C * KK * nb * L
    n0 = 0
    while n0 < N:
        m = nb if N - n0 > nb else N - n0
        LD = m * L
        if m == 1:
            gp = gy + n0 * g.OC * L
        else:
            _gather(gbuf, gy + n0 * g.OC * L, m, g.OC, L)
            gp = gbuf
        cp = gx + n0 * g.C * plane if (pw and m == 1) else col
        for gi in range(g.G):
            if OCg == 0:
                memset(cp + gi * CgKK * LD, 0, CgKK * LD * sizeof(flt))
                continue
            _gemm(CH_N, CH_T, <blas_int>LD, <blas_int>CgKK, <blas_int>OCg, <flt>1,
                  <flt*>gp + gi * OCg * LD, <blas_int>LD,
                  <flt*>w + gi * OCg * CgKK, <blas_int>CgKK, <flt>0,
                  cp + gi * CgKK * LD, <blas_int>LD)
        if pw and m > 1:
            _scatter(gx + n0 * g.C * plane, col, m, g.C, L)
        elif not pw:
            for j in range(m):
                _col2im(gx + (n0 + j) * g.C * plane, col + j * L, LD, g, nth, 0, g.OD * g.OH, True)
        if bias != NULL:
            for j in range(m):
                _add_bias(gx + (n0 + j) * g.C * plane, bias, g.C, plane)
        n0 += m
    free(col)
    return 0


cdef int _backward_weight(const flt* x, const flt* gy, flt* gw, Py_ssize_t N,
                          const Geo* g, int nth) noexcept nogil:
    """gw (OC, C/G, kd, kh, kw) = sum_n gy_n cols(x_n)^T (overwritten)."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t CgKK = Cg * KK
    cdef Py_ssize_t nb = _chunk(MODE_BWD_W, N, L)
    cdef Py_ssize_t n0, m, j, gi, LD
    cdef bint pw = _is_pointwise(g)
    cdef flt* col
    cdef flt* gbuf
    cdef const flt* cp
    cdef const flt* gp
    memset(gw, 0, g.OC * CgKK * sizeof(flt))
    if L == 0 or CgKK == 0 or OCg == 0:
        return 0
    if _is_whole(g):
        return _whole(MODE_BWD_W, x, gy, NULL, gw, N, g)
    if flt is float:
        # (an empty batch keeps the zeros above: the tiles' first chunk is what
        # initialises their accumulators)
        if N > 0 and _use_wide_bww(g) and _wide_bww(x, gy, gw, N, g, nth) == 0:
            return 0
    if _use_shift(g, Cg, OCg):
        return _shift(MODE_BWD_W, x, gy, NULL, gw, N, g, nth)
    if nb < N:
        return _batched(MODE_BWD_W, x, gy, NULL, gw, N, g, nth, nb)
    if _row_chunked(nb, pw, CgKK, OCg):
        return _rows(MODE_BWD_W, x, gy, NULL, gw, N, g, nth)
    col = <flt*>ptc_scratch_malloc((g.C * KK * nb * L + (g.OC * nb * L if nb > 1 else 0) + 1)
                       * sizeof(flt))
    if col == NULL:
        return -1
    gbuf = col + g.C * KK * nb * L
    n0 = 0
    while n0 < N:
        m = nb if N - n0 > nb else N - n0
        LD = m * L
        if m == 1:
            gp = gy + n0 * g.OC * L
        else:
            _gather(gbuf, gy + n0 * g.OC * L, m, g.OC, L)
            gp = gbuf
        if pw and m == 1:
            cp = x + n0 * g.C * P
        elif pw:
            _gather(col, x + n0 * g.C * P, m, g.C, L)
            cp = col
        else:
            for j in range(m):
                _im2col(x + (n0 + j) * g.C * P, col + j * L, LD, g, nth, 0, g.OD * g.OH)
            cp = col
        for gi in range(g.G):
            _gemm(CH_T, CH_N, <blas_int>CgKK, <blas_int>OCg, <blas_int>LD, <flt>1,
                  <flt*>cp + gi * CgKK * LD, <blas_int>LD,
                  <flt*>gp + gi * OCg * LD, <blas_int>LD, <flt>1,
                  gw + gi * OCg * CgKK, <blas_int>CgKK)
        n0 += m
    free(col)
    return 0


# --------------------------------------------------------------------------
# Python entry points (arguments validated by ptcore.nn.functional._conv)
# --------------------------------------------------------------------------
cdef int _geo(Geo* g, _TensorBase x, _TensorBase y, tuple kernel, tuple stride, tuple padding,
              tuple dilation, Py_ssize_t groups) except -1:
    if x._ndim != 5 or y._ndim != 5:
        raise RuntimeError("conv kernel: expected 5-d (N, C, D, H, W) operands")
    if not x._is_contig() or not y._is_contig():
        raise RuntimeError("conv kernel: operands must be contiguous")
    if x._shape[0] != y._shape[0]:
        raise RuntimeError("conv kernel: batch sizes differ")
    g.C = x._shape[1]; g.D = x._shape[2]; g.H = x._shape[3]; g.W = x._shape[4]
    g.OC = y._shape[1]; g.OD = y._shape[2]; g.OH = y._shape[3]; g.OW = y._shape[4]
    g.kd, g.kh, g.kw = kernel
    g.sd, g.sh, g.sw = stride
    g.pd, g.ph, g.pw = padding
    g.dd, g.dh, g.dw = dilation
    g.G = groups
    if g.G < 1 or g.C % g.G or g.OC % g.G:
        raise RuntimeError("conv kernel: bad groups")
    if g.sd < 1 or g.sh < 1 or g.sw < 1 or g.dd < 1 or g.dh < 1 or g.dw < 1:
        raise RuntimeError("conv kernel: stride and dilation must be positive")
    if g.pd < 0 or g.ph < 0 or g.pw < 0 or g.kd < 1 or g.kh < 1 or g.kw < 1:
        raise RuntimeError("conv kernel: bad padding or kernel size")
    # Any positive output size is memory-safe: every input read/write is
    # bounds-checked against (D, H, W), so the caller may choose asymmetric
    # ('same') padding or a transposed conv's output_padding through it.
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    if g.OD < 1 or g.OH < 1 or g.OW < 1:
        raise RuntimeError("conv kernel: empty output")
    if L > 2147483647 or g.C * g.kd * g.kh * g.kw > 2147483647 or g.OC > 2147483647:
        raise RuntimeError("conv kernel: sizes exceed the BLAS integer range")
    return 0


cdef int _check_w(_TensorBase w, const Geo* g, int num) except -1:
    if w._ndim != 5 or not w._is_contig() or w._dtype.num != num:
        raise RuntimeError("conv kernel: weight must be a contiguous 5-d tensor of the input dtype")
    if (w._shape[0] != g.OC or w._shape[1] != g.C // g.G or w._shape[2] != g.kd
            or w._shape[3] != g.kh or w._shape[4] != g.kw):
        raise RuntimeError("conv kernel: weight shape does not match")
    return 0


cdef int _check_bias(_TensorBase b, Py_ssize_t n, int num) except -1:
    if b is None:
        return 0
    if b._ndim != 1 or b._shape[0] != n or not b._is_contig() or b._dtype.num != num:
        raise RuntimeError("conv kernel: bias must be a contiguous 1-d tensor of the input dtype")
    return 0


cdef int _dtype_num(_TensorBase t) except -1:
    cdef int num = t._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise RuntimeError("conv kernel: float32/float64 only")
    return num


def conv_forward(_TensorBase x, _TensorBase w, _TensorBase bias, _TensorBase y,
                 tuple kernel, tuple stride, tuple padding, tuple dilation, Py_ssize_t groups):
    """y (N, OC, OD, OH, OW) = conv(x (N, C, D, H, W), w) + bias."""
    cdef Geo g
    _geo(&g, x, y, kernel, stride, padding, dilation, groups)
    cdef int num = _dtype_num(x)
    if y._dtype.num != num:
        raise RuntimeError("conv kernel: dtypes differ")
    _check_w(w, &g, num)
    _check_bias(bias, g.OC, num)
    cdef Py_ssize_t N = x._shape[0]
    cdef int nth = get_num_threads()
    cdef int rc
    cdef char* pb = NULL if bias is None else bias._ptr()
    cdef char* px = x._ptr()
    cdef char* pw = w._ptr()
    cdef char* py = y._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                rc = _forward(<float*>px, <float*>pw, <float*>pb, <float*>py, N, &g, nth)
            else:
                rc = _forward(<double*>px, <double*>pw, <double*>pb, <double*>py, N, &g, nth)
        finally:
            ptc_kernel_exit()
    if rc:
        raise MemoryError("conv: cannot allocate the column buffer")
    return y


def conv_backward_input(_TensorBase gy, _TensorBase w, _TensorBase bias, _TensorBase gx,
                        tuple kernel, tuple stride, tuple padding, tuple dilation,
                        Py_ssize_t groups):
    """gx (N, C, D, H, W) = conv input gradient of gy (N, OC, OD, OH, OW) (+ bias (C,))."""
    cdef Geo g
    _geo(&g, gx, gy, kernel, stride, padding, dilation, groups)
    cdef int num = _dtype_num(gx)
    if gy._dtype.num != num:
        raise RuntimeError("conv kernel: dtypes differ")
    _check_w(w, &g, num)
    _check_bias(bias, g.C, num)
    cdef Py_ssize_t N = gx._shape[0]
    cdef int nth = get_num_threads()
    cdef int rc
    cdef char* pb = NULL if bias is None else bias._ptr()
    cdef char* pgy = gy._ptr()
    cdef char* pw = w._ptr()
    cdef char* pgx = gx._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                rc = _backward_input(<float*>pgy, <float*>pw, <float*>pb, <float*>pgx, N, &g, nth)
            else:
                rc = _backward_input(<double*>pgy, <double*>pw, <double*>pb, <double*>pgx, N, &g, nth)
        finally:
            ptc_kernel_exit()
    if rc:
        raise MemoryError("conv: cannot allocate the column buffer")
    return gx


def conv_backward_weight(_TensorBase x, _TensorBase gy, _TensorBase gw,
                         tuple kernel, tuple stride, tuple padding, tuple dilation,
                         Py_ssize_t groups):
    """gw (OC, C/G, kd, kh, kw) = weight gradient of the conv x -> gy."""
    cdef Geo g
    _geo(&g, x, gy, kernel, stride, padding, dilation, groups)
    cdef int num = _dtype_num(x)
    if gy._dtype.num != num:
        raise RuntimeError("conv kernel: dtypes differ")
    _check_w(gw, &g, num)
    cdef Py_ssize_t N = x._shape[0]
    cdef int nth = get_num_threads()
    cdef int rc
    cdef char* px = x._ptr()
    cdef char* pgy = gy._ptr()
    cdef char* pgw = gw._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                rc = _backward_weight(<float*>px, <float*>pgy, <float*>pgw, N, &g, nth)
            else:
                rc = _backward_weight(<double*>px, <double*>pgy, <double*>pgw, N, &g, nth)
        finally:
            ptc_kernel_exit()
    if rc:
        raise MemoryError("conv: cannot allocate the column buffer")
    return gw


def unfold_into(_TensorBase x, _TensorBase col, tuple out_size, tuple kernel, tuple stride,
                tuple padding, tuple dilation):
    """col (N, C*K, L) contiguous = unfold of x (N, C, D, H, W) contiguous."""
    cdef Geo g
    cdef int num = _dtype_num(x)
    if col._dtype.num != num or not col._is_contig() or not x._is_contig() or x._ndim != 5:
        raise RuntimeError("unfold kernel: bad operands")
    g.C = x._shape[1]; g.D = x._shape[2]; g.H = x._shape[3]; g.W = x._shape[4]
    g.OC = 1
    g.OD, g.OH, g.OW = out_size
    g.kd, g.kh, g.kw = kernel
    g.sd, g.sh, g.sw = stride
    g.pd, g.ph, g.pw = padding
    g.dd, g.dh, g.dw = dilation
    g.G = 1
    _check_unfold(&g, x._shape[0], col)
    cdef Py_ssize_t N = x._shape[0], n
    cdef Py_ssize_t plane = g.C * g.D * g.H * g.W
    cdef Py_ssize_t csz = g.C * g.kd * g.kh * g.kw * g.OD * g.OH * g.OW
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef int nth = get_num_threads()
    cdef char* px = x._ptr()
    cdef char* pc = col._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for n in range(N):
                if num == PT_FLOAT32:
                    _im2col((<float*>px) + n * plane, (<float*>pc) + n * csz, L, &g, nth, 0, g.OD * g.OH)
                else:
                    _im2col((<double*>px) + n * plane, (<double*>pc) + n * csz, L, &g, nth, 0, g.OD * g.OH)
        finally:
            ptc_kernel_exit()
    return col


def fold_into(_TensorBase col, _TensorBase x, tuple out_size, tuple kernel, tuple stride,
              tuple padding, tuple dilation):
    """x (N, C, D, H, W) contiguous = fold (col2im, summing overlaps) of col (N, C*K, L)."""
    cdef Geo g
    cdef int num = _dtype_num(x)
    if col._dtype.num != num or not col._is_contig() or not x._is_contig() or x._ndim != 5:
        raise RuntimeError("fold kernel: bad operands")
    g.C = x._shape[1]; g.D = x._shape[2]; g.H = x._shape[3]; g.W = x._shape[4]
    g.OC = 1
    g.OD, g.OH, g.OW = out_size
    g.kd, g.kh, g.kw = kernel
    g.sd, g.sh, g.sw = stride
    g.pd, g.ph, g.pw = padding
    g.dd, g.dh, g.dw = dilation
    g.G = 1
    _check_unfold(&g, x._shape[0], col)
    cdef Py_ssize_t N = x._shape[0], n
    cdef Py_ssize_t plane = g.C * g.D * g.H * g.W
    cdef Py_ssize_t csz = g.C * g.kd * g.kh * g.kw * g.OD * g.OH * g.OW
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef int nth = get_num_threads()
    cdef char* px = x._ptr()
    cdef char* pc = col._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for n in range(N):
                if num == PT_FLOAT32:
                    _col2im((<float*>px) + n * plane, (<float*>pc) + n * csz, L, &g, nth, 0, g.OD * g.OH, True)
                else:
                    _col2im((<double*>px) + n * plane, (<double*>pc) + n * csz, L, &g, nth, 0, g.OD * g.OH, True)
        finally:
            ptc_kernel_exit()
    return x


cdef int _check_unfold(Geo* g, Py_ssize_t N, _TensorBase col) except -1:
    if (g.sd < 1 or g.sh < 1 or g.sw < 1 or g.dd < 1 or g.dh < 1 or g.dw < 1 or g.pd < 0
            or g.ph < 0 or g.pw < 0 or g.kd < 1 or g.kh < 1 or g.kw < 1):
        raise RuntimeError("unfold kernel: bad geometry")
    if g.OD < 1 or g.OH < 1 or g.OW < 1:
        raise RuntimeError("unfold kernel: output size does not match the geometry")
    if (col._ndim != 3 or col._shape[0] != N or col._shape[1] != g.C * g.kd * g.kh * g.kw
            or col._shape[2] != g.OD * g.OH * g.OW):
        raise RuntimeError("unfold kernel: column shape does not match")
    return 0


# --------------------------------------------------------------------------
# pooling
# --------------------------------------------------------------------------
cdef struct Win:
    Py_ssize_t D, H, W, OD, OH, OW
    Py_ssize_t stepd, steph, stepw
    Py_ssize_t* s      # starts: OD + OH + OW entries
    Py_ssize_t* e      # ends
    Py_ssize_t* f      # avg divisor factors


cdef struct WinRows:
    # a Win's tables split per dim, for the plane loops to keep in locals (a store to the
    # output could alias the Win itself: read through it, every field is reloaded per
    # element)
    const Py_ssize_t* sd
    const Py_ssize_t* ed
    const Py_ssize_t* fd
    const Py_ssize_t* sh
    const Py_ssize_t* eh
    const Py_ssize_t* fh
    const Py_ssize_t* sw
    const Py_ssize_t* ew
    const Py_ssize_t* fw


cdef inline WinRows _win_rows(const Win* w) noexcept nogil:
    cdef WinRows r
    r.sd = w.s
    r.ed = w.e
    r.fd = w.f
    r.sh = w.s + w.OD
    r.eh = w.e + w.OD
    r.fh = (w.f + w.OD) if w.f != NULL else NULL
    r.sw = w.s + w.OD + w.OH
    r.ew = w.e + w.OD + w.OH
    r.fw = (w.f + w.OD + w.OH) if w.f != NULL else NULL
    return r


cdef int _win(Win* w, _TensorBase x, _TensorBase y, list starts, list ends, tuple steps,
              list factors) except -1:
    """Copy and validate the per-dim window lists (every window inside the input)."""
    if x._ndim != 2 or y._ndim != 2 or not x._is_contig() or not y._is_contig():
        raise RuntimeError("pool kernel: expected contiguous (planes, D*H*W) operands")
    w.s = NULL; w.e = NULL; w.f = NULL
    cdef list sizes_in = [len(starts[0]), len(starts[1]), len(starts[2])]
    cdef Py_ssize_t n = sizes_in[0] + sizes_in[1] + sizes_in[2]
    cdef Py_ssize_t i, k
    cdef int j
    w.OD, w.OH, w.OW = sizes_in
    w.stepd, w.steph, w.stepw = steps
    if w.stepd < 1 or w.steph < 1 or w.stepw < 1:
        raise RuntimeError("pool kernel: bad step")
    if y._shape[0] != x._shape[0] or y._shape[1] != w.OD * w.OH * w.OW:
        raise RuntimeError("pool kernel: output size does not match")
    w.s = <Py_ssize_t*>ptc_scratch_malloc((3 * n + 3) * sizeof(Py_ssize_t))
    if w.s == NULL:
        raise MemoryError("pool: out of memory for the window bounds")
    w.e = w.s + n + 1
    w.f = w.e + n + 1
    k = 0
    for j in range(3):
        if len(ends[j]) != sizes_in[j] or (factors is not None and len(factors[j]) != sizes_in[j]):
            free(w.s)
            raise RuntimeError("pool kernel: window lists differ in length")
        for i in range(sizes_in[j]):
            w.s[k] = starts[j][i]
            w.e[k] = ends[j][i]
            w.f[k] = 1 if factors is None else factors[j][i]
            k += 1
    return 0


cdef int _win_bounds(Win* w, Py_ssize_t D, Py_ssize_t H, Py_ssize_t W) except -1:
    cdef Py_ssize_t i, k = 0
    cdef int j
    cdef Py_ssize_t sizes[3]
    cdef Py_ssize_t outs[3]
    sizes[0] = D; sizes[1] = H; sizes[2] = W
    outs[0] = w.OD; outs[1] = w.OH; outs[2] = w.OW
    w.D = D; w.H = H; w.W = W
    for j in range(3):
        for i in range(outs[j]):
            if w.s[k] < 0 or w.e[k] > sizes[j] or w.e[k] < 0:
                raise RuntimeError("pool kernel: window outside the input")
            k += 1
    return 0


cdef void _max_fwd_plane(const flt* x, flt* y, int64_t* ind, const Win* w) noexcept nogil:
    # the window table and sizes in locals (the stores to y and ind could alias *w, so
    # the compiler would reload every field per element); windows one row high and one
    # plane deep (1-d pooling, 1xk kernels) take the single loop over their row
    cdef Py_ssize_t od, oh, ow, a, b, c, idx, best, ce, row
    cdef WinRows t = _win_rows(w)
    cdef const Py_ssize_t* sd = t.sd
    cdef const Py_ssize_t* ed = t.ed
    cdef const Py_ssize_t* sh = t.sh
    cdef const Py_ssize_t* sw = t.sw
    cdef const Py_ssize_t* eh = t.eh
    cdef const Py_ssize_t* ew = t.ew
    cdef Py_ssize_t OD = w.OD, OH = w.OH, OW = w.OW, H = w.H, W = w.W
    cdef Py_ssize_t stepd = w.stepd, steph = w.steph, stepw = w.stepw
    cdef flt m
    cdef Py_ssize_t o = 0
    for od in range(OD):
        for oh in range(OH):
            if ed[od] - sd[od] == 1 and eh[oh] - sh[oh] == 1:
                row = (sd[od] * H + sh[oh]) * W
                for ow in range(OW):
                    # the row's window: the first element, then the rest (a NaN wins
                    # and the last NaN is kept, as torch)
                    c = sw[ow]
                    ce = ew[ow]
                    if c >= ce:
                        # a window wholly in the padding (dilation can step over the
                        # row): -inf at its first position, as torch
                        y[o] = -INFINITY
                        ind[o] = row + c
                        o += 1
                        continue
                    m = x[row + c]
                    best = row + c
                    c += stepw
                    while c < ce:
                        _maxsel(x[row + c], row + c, &m, &best)
                        c += stepw
                    y[o] = m
                    ind[o] = best
                    o += 1
                continue
            for ow in range(OW):
                m = -INFINITY
                best = (sd[od] * H + sh[oh]) * W + sw[ow]
                a = sd[od]
                while a < ed[od]:
                    b = sh[oh]
                    while b < eh[oh]:
                        c = sw[ow]
                        ce = ew[ow]
                        idx = (a * H + b) * W
                        while c < ce:
                            _maxsel(x[idx + c], idx + c, &m, &best)
                            c += stepw
                        b += steph
                    a += stepd
                y[o] = m
                ind[o] = best
                o += 1


cdef void _max_fwd_2x2(const flt* x, flt* y, int64_t* ind, const Win* w) noexcept nogil:
    """2x2 windows, stride 2, no padding/dilation, one plane (D == 1)."""
    cdef Py_ssize_t oh, ow, i0, best
    cdef flt v, m
    cdef const flt* r0
    cdef const flt* r1
    cdef Py_ssize_t W = w.W
    for oh in range(w.OH):
        r0 = x + 2 * oh * W
        r1 = r0 + W
        for ow in range(w.OW):
            i0 = 2 * ow
            m = r0[i0]
            best = i0
            if isnan(m):
                # NaN: PyTorch keeps the last NaN of the window
                v = r0[i0 + 1]
                if isnan(v):
                    best = i0 + 1
                if isnan(r1[i0]):
                    best = W + i0
                if isnan(r1[i0 + 1]):
                    best = W + i0 + 1
                y[oh * w.OW + ow] = x[2 * oh * W + best]
                ind[oh * w.OW + ow] = 2 * oh * W + best
                continue
            v = r0[i0 + 1]
            if v > m or isnan(v):
                m = v; best = i0 + 1
            v = r1[i0]
            if v > m or isnan(v):
                m = v; best = W + i0
            v = r1[i0 + 1]
            if v > m or isnan(v):
                m = v; best = W + i0 + 1
            y[oh * w.OW + ow] = m
            ind[oh * w.OW + ow] = 2 * oh * W + best


cdef bint _is_2x2(const Win* w) noexcept nogil:
    cdef Py_ssize_t i
    if w.OD != 1 or w.D != 1 or w.s[0] != 0 or w.e[0] != 1 or w.steph != 1 or w.stepw != 1:
        return False
    if 2 * w.OH > w.H or 2 * w.OW > w.W:
        return False
    for i in range(w.OH):
        if w.s[1 + i] != 2 * i or w.e[1 + i] != 2 * i + 2:
            return False
    for i in range(w.OW):
        if w.s[1 + w.OH + i] != 2 * i or w.e[1 + w.OH + i] != 2 * i + 2:
            return False
    return True


cdef void _max_fwd(const flt* x, flt* y, int64_t* ind, Py_ssize_t P, const Win* w,
                   int nth) noexcept nogil:
    cdef Py_ssize_t p
    cdef Py_ssize_t pin = w.D * w.H * w.W, pout = w.OD * w.OH * w.OW
    cdef bint fast = _is_2x2(w)
    if nth > 1 and P > 1 and P * pin >= parallel_grain():
        for p in prange(P, num_threads=nth, schedule='static'):
            if fast:
                _max_fwd_2x2(x + p * pin, y + p * pout, ind + p * pout, w)
            else:
                _max_fwd_plane(x + p * pin, y + p * pout, ind + p * pout, w)
    else:
        for p in range(P):
            if fast:
                _max_fwd_2x2(x + p * pin, y + p * pout, ind + p * pout, w)
            else:
                _max_fwd_plane(x + p * pin, y + p * pout, ind + p * pout, w)


def max_pool_forward(_TensorBase x, _TensorBase y, _TensorBase ind, tuple in_size,
                     list starts, list ends, tuple steps):
    """y, ind (P, OD*OH*OW) = max over the windows of x (P, D*H*W)."""
    cdef Win w
    cdef int num = _dtype_num(x)
    if y._dtype.num != num or ind._dtype.num != PT_INT64 or not ind._is_contig() \
            or ind._ndim != 2 or ind._shape[0] != y._shape[0] or ind._shape[1] != y._shape[1]:
        raise RuntimeError("max_pool kernel: bad output operands")
    _win(&w, x, y, starts, ends, steps, None)
    cdef Py_ssize_t D, H, W
    D, H, W = in_size
    try:
        if D * H * W != x._shape[1]:
            raise RuntimeError("max_pool kernel: input size does not match")
        _win_bounds(&w, D, H, W)
    except BaseException:
        free(w.s)
        raise
    cdef Py_ssize_t P = x._shape[0]
    cdef int nth = get_num_threads()
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    cdef int64_t* pi = <int64_t*>ind._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _max_fwd(<float*>px, <float*>py, pi, P, &w, nth)
            else:
                _max_fwd(<double*>px, <double*>py, pi, P, &w, nth)
        finally:
            ptc_kernel_exit()
    free(w.s)
    return y


cdef void _max_bwd(const flt* gy, const int64_t* ind, flt* gx, Py_ssize_t P, Py_ssize_t pin,
                   Py_ssize_t pout, int nth) noexcept nogil:
    cdef Py_ssize_t p, o
    cdef flt* g
    cdef const flt* s
    cdef const int64_t* q
    if nth > 1 and P > 1 and P * pin >= parallel_grain():
        for p in prange(P, num_threads=nth, schedule='static'):
            memset(gx + p * pin, 0, pin * sizeof(flt))
            _max_bwd_plane(gy + p * pout, ind + p * pout, gx + p * pin, pin, pout)
    else:
        memset(gx, 0, P * pin * sizeof(flt))
        for p in range(P):
            _max_bwd_plane(gy + p * pout, ind + p * pout, gx + p * pin, pin, pout)


cdef inline void _max_bwd_plane(const flt* gy, const int64_t* ind, flt* gx, Py_ssize_t pin,
                                Py_ssize_t pout) noexcept nogil:
    cdef Py_ssize_t o
    cdef int64_t i
    for o in range(pout):
        i = ind[o]
        if i >= 0 and i < pin:
            gx[i] += gy[o]


cdef void _max1d_vals_row(const flt* x, flt* y, Py_ssize_t L, Py_ssize_t OL, Py_ssize_t k,
                          Py_ssize_t s, Py_ssize_t p, Py_ssize_t d) noexcept nogil:
    """One row of values-only 1-d max pooling: window ``o`` covers ``o*s - p + j*d``
    (j < k) clipped to ``[0, L)``; NaN wins.  The windows wholly inside the row run
    element j of every window at a time, a loop over the outputs the compiler vectorises
    (contiguous loads when s == 1); the clipped ones at the ends one by one."""
    cdef Py_ssize_t o, j, lo, hi, span = (k - 1) * d
    cdef flt m, v
    # outputs whose window lies inside the row: o*s - p >= 0 and o*s - p + span < L
    lo = (p + s - 1) // s
    hi = (L - 1 - span + p) // s + 1 if L - 1 - span + p >= 0 else 0
    if hi > OL:
        hi = OL
    if lo > hi:
        lo = hi
    for o in range(lo, hi):
        y[o] = x[o * s - p]
    for j in range(1, k):
        for o in range(lo, hi):
            v = x[o * s - p + j * d]
            m = y[o]
            y[o] = v if ((v > m) | (v != v)) else m
    for o in range(0, lo):
        y[o] = _max1d_clipped(x, L, o * s - p, span, d)
    for o in range(hi, OL):
        y[o] = _max1d_clipped(x, L, o * s - p, span, d)


cdef inline flt _max1d_clipped(const flt* x, Py_ssize_t L, Py_ssize_t a, Py_ssize_t span,
                               Py_ssize_t d) noexcept nogil:
    """The max (NaN wins) of x[a], x[a + d], ... up to a + span, clipped to [0, L);
    -inf when none of them is in the row."""
    cdef Py_ssize_t b = a + span + 1
    cdef flt m, v
    if b > L:
        b = L
    while a < 0:
        a += d
    if a >= b:
        return -INFINITY            # a window wholly in the padding, as torch
    m = x[a]
    a += d
    while a < b:
        v = x[a]
        m = v if ((v > m) | (v != v)) else m
        a += d
    return m


def max_pool1d_values(_TensorBase x, _TensorBase y, Py_ssize_t k, Py_ssize_t s, Py_ssize_t p,
                      Py_ssize_t d):
    """y (P, OL) = the max over the 1-d windows of x (P, L), contiguous, float32/float64,
    no indices (a pooling that records nothing); windows as ``_max_windows``'s (kernel
    ``k``, stride ``s``, padding ``p``, dilation ``d``); a window with no element of the
    row (wholly in the padding, or past the row) is -inf."""
    cdef int num = _dtype_num(x)
    if y._dtype.num != num or not x._is_contig() or not y._is_contig() or x._ndim != 2 \
            or y._ndim != 2 or x._shape[0] != y._shape[0] or k < 1 or s < 1 or d < 1 \
            or p < 0 or 2 * p > d * (k - 1) + 1:
        raise RuntimeError("max_pool1d_values kernel: bad operands")
    _max1d_vals_rows(x, y, x._shape[0], x._shape[1], y._shape[1], k, s, p, d)
    return y


cdef int _max1d_vals_rows(_TensorBase x, _TensorBase y, Py_ssize_t P, Py_ssize_t L,
                          Py_ssize_t OL, Py_ssize_t k, Py_ssize_t s, Py_ssize_t p,
                          Py_ssize_t d) except -1:
    """The rows of y (P, OL) from the rows of x (P, L), both contiguous, of one float
    dtype (checked by the callers)."""
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    cdef bint f32 = x._dtype.num == PT_FLOAT32
    cdef Py_ssize_t r
    if P == 0 or OL == 0:
        return 0
    ptc_kernel_enter()
    with nogil:
        try:
            if f32:
                for r in range(P):
                    _max1d_vals_row((<float*>px) + r * L, (<float*>py) + r * OL, L, OL, k, s, p, d)
            else:
                for r in range(P):
                    _max1d_vals_row((<double*>px) + r * L, (<double*>py) + r * OL, L, OL, k, s, p, d)
        finally:
            ptc_kernel_exit()
    return 0


# pooling parameters the plain paths take: ints of at most 2^40 in magnitude (the
# window arithmetic cannot overflow; anything else takes the front-end's general path)
cdef Py_ssize_t _PARAM_LIMIT = (<Py_ssize_t>1) << 40


cdef inline bint _plain_int(object v, Py_ssize_t* out):
    if type(v) is not int or not -_PARAM_LIMIT <= v <= _PARAM_LIMIT:
        return False
    out[0] = v
    return True


def max_pool1d_plain(_TensorBase x not None, kernel_size, stride, padding, dilation,
                     bint ceil_mode):
    """``max_pool1d``'s values (no indices) of ``x``, ``(C, L)`` or ``(N, C, L)``,
    contiguous float32/float64 in host memory, with int arguments (``stride`` None:
    ``kernel_size``), in a new contiguous tensor; the caller knows nothing records the
    call.  None where the call is not that case, or where an argument or the size is
    one torch refuses: the front-end's general path then runs (and raises its errors).
    The windows and values are ``max_pool1d_values``'s."""
    cdef Py_ssize_t k, s, p, d, L, OL, P
    if not _plain_pool1d_input(x):
        return None
    if not (_plain_int(kernel_size, &k) and _plain_int(padding, &p)
            and _plain_int(dilation, &d)):
        return None
    if stride is None:
        s = k
    elif not _plain_int(stride, &s):
        return None
    # each argument at most 2**31 (the general path takes the rest): d * (k - 1) and every
    # window position then fit in int64 (k 2**32 + 1 with d 2**32 wrapped d * (k - 1) to 0
    # and read far outside the row)
    if k < 1 or s < 1 or d < 1 or p < 0 or k > 2147483647 or s > 2147483647 \
            or d > 2147483647 or p > 2147483647 or 2 * p > d * (k - 1) + 1:
        return None
    L = x._shape[x._ndim - 1]
    OL = _pool1d_out(L, k, s, p, d, ceil_mode)
    if OL < 1:
        return None
    cdef _TensorBase y = _pool1d_out_tensor(x, OL, &P)
    _max1d_vals_rows(x, y, P, L, OL, k, s, p, d)
    return y


cdef void _avg1d_row(const flt* x, flt* y, Py_ssize_t L, Py_ssize_t OL, Py_ssize_t k,
                     Py_ssize_t s, Py_ssize_t p, bint count_include_pad) noexcept nogil:
    """One row of 1-d average pooling: ``_avg_plane``'s sums and divisors over the
    windows of ``_avg_windows`` (window ``o`` starts at ``o*s - p``, ``k`` long,
    clipped to the padded row for its divisor with the padding, to the row for its
    sum), so the same bits."""
    cdef Py_ssize_t o, a, b, c, pool, div
    cdef flt acc
    for o in range(OL):
        a = o * s - p
        b = a + k
        if b > L + p:
            b = L + p
        pool = b - a
        if a < 0:
            a = 0
        if b > L:
            b = L
        if b <= a:
            y[o] = 0
            continue
        div = pool if count_include_pad else b - a
        acc = 0
        for c in range(a, b):
            acc = acc + x[c]
        y[o] = acc / <flt>div


cdef Py_ssize_t _pool1d_out(Py_ssize_t L, Py_ssize_t k, Py_ssize_t s, Py_ssize_t p,
                            Py_ssize_t d, bint ceil_mode) noexcept:
    """torch's pooling_output_shape (floor division: the numerator may be negative)."""
    cdef Py_ssize_t num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    cdef Py_ssize_t o = (num // s if num >= 0 else -((-num + s - 1) // s)) + 1
    if ceil_mode and (o - 1) * s >= L + p:
        o -= 1
    return o


cdef _TensorBase _pool1d_out_tensor(_TensorBase x, Py_ssize_t OL, Py_ssize_t* P):
    """A new contiguous tensor shaped as ``x`` with its last dim ``OL``; P = the
    product of the other dims."""
    cdef Py_ssize_t shape[3]
    cdef int i, nd = x._ndim
    P[0] = 1
    for i in range(nd - 1):
        shape[i] = x._shape[i]
        P[0] *= x._shape[i]
    shape[nd - 1] = OL
    return _empty_contig(x._dtype, nd, shape, x._storage.device, False)


cdef inline bint _plain_pool1d_input(_TensorBase x) noexcept:
    """A (C, L) or (N, C, L) contiguous float32/float64 tensor in host memory whose
    non-batch dims hold elements (a 0-size batch is allowed): the plain paths' input."""
    return x._storage.device._type_code == 0 and (x._dtype.num == PT_FLOAT32 or
                                                  x._dtype.num == PT_FLOAT64) \
        and (x._ndim == 2 or x._ndim == 3) and x._is_contig() \
        and x._shape[x._ndim - 1] != 0 and x._shape[x._ndim - 2] != 0


def avg_pool1d_plain(_TensorBase x not None, kernel_size, stride, padding, bint ceil_mode,
                     bint count_include_pad):
    """``avg_pool1d`` of ``x`` as ``max_pool1d_plain`` (the same inputs and int
    arguments, no divisor override), or None for the front-end's general path: the
    general kernel's values."""
    cdef Py_ssize_t k, s, p, L, OL, P, r
    if not _plain_pool1d_input(x):
        return None
    if not (_plain_int(kernel_size, &k) and _plain_int(padding, &p)):
        return None
    if stride is None:
        s = k
    elif not _plain_int(stride, &s):
        return None
    # (torch narrows the arguments to int first: larger ones take the general path's error)
    if k < 1 or s < 1 or p < 0 or 2 * p > k or k > 2147483647 or s > 2147483647:
        return None
    L = x._shape[x._ndim - 1]
    OL = _pool1d_out(L, k, s, p, 1, ceil_mode)
    if OL < 1:
        return None
    cdef _TensorBase y = _pool1d_out_tensor(x, OL, &P)
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    cdef bint f32 = x._dtype.num == PT_FLOAT32
    if P == 0:
        return y
    ptc_kernel_enter()
    with nogil:
        try:
            if f32:
                for r in range(P):
                    _avg1d_row((<float*>px) + r * L, (<float*>py) + r * OL, L, OL, k, s, p,
                               count_include_pad)
            else:
                for r in range(P):
                    _avg1d_row((<double*>px) + r * L, (<double*>py) + r * OL, L, OL, k, s, p,
                               count_include_pad)
        finally:
            ptc_kernel_exit()
    return y


def max_pool_backward(_TensorBase gy, _TensorBase ind, _TensorBase gx, window=None):
    """gx (P, D*H*W) = scatter-add of gy (P, L) at ind (P, L); indices out of
    the plane are ignored (the Python layer validated user-given indices).
    ``window``, the forward's geometry, is for kernels that gather (CUDA's);
    the scatter here does not need it."""
    cdef int num = _dtype_num(gx)
    if (gy._dtype.num != num or ind._dtype.num != PT_INT64 or gy._ndim != 2 or ind._ndim != 2
            or gx._ndim != 2 or not gy._is_contig() or not ind._is_contig()
            or not gx._is_contig() or ind._shape[0] != gy._shape[0]
            or ind._shape[1] != gy._shape[1] or gx._shape[0] != gy._shape[0]):
        raise RuntimeError("max_pool backward kernel: bad operands")
    cdef Py_ssize_t P = gx._shape[0], pin = gx._shape[1], pout = gy._shape[1]
    cdef int nth = get_num_threads()
    cdef char* pgy = gy._ptr()
    cdef char* pgx = gx._ptr()
    cdef int64_t* pi = <int64_t*>ind._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _max_bwd(<float*>pgy, pi, <float*>pgx, P, pin, pout, nth)
            else:
                _max_bwd(<double*>pgy, pi, <double*>pgx, P, pin, pout, nth)
        finally:
            ptc_kernel_exit()
    return gx


cdef void _avg_plane(const flt* x, flt* y, const Win* w, Py_ssize_t div_override,
                     bint backward) noexcept nogil:
    """forward: y = mean over windows of x; backward: x += y / divisor spread
    over the windows (x is then the input gradient).  The window table and sizes
    are read into locals first (the stores could alias *w: the compiler would
    reload every field per element)."""
    cdef Py_ssize_t od, oh, ow, a, b, c, idx, o = 0, div
    cdef WinRows t = _win_rows(w)
    cdef Py_ssize_t OD = w.OD, OH = w.OH, OW = w.OW, H = w.H, W = w.W
    cdef flt acc, v
    cdef flt* gx = <flt*>x
    for od in range(OD):
        for oh in range(OH):
            for ow in range(OW):
                if t.ed[od] <= t.sd[od] or t.eh[oh] <= t.sh[oh] or t.ew[ow] <= t.sw[ow]:
                    if not backward:
                        y[o] = 0
                    o += 1
                    continue
                div = div_override if div_override else t.fd[od] * t.fh[oh] * t.fw[ow]
                if backward:
                    v = y[o] / <flt>div
                    for a in range(t.sd[od], t.ed[od]):
                        for b in range(t.sh[oh], t.eh[oh]):
                            idx = (a * H + b) * W
                            for c in range(t.sw[ow], t.ew[ow]):
                                gx[idx + c] += v
                else:
                    acc = 0
                    for a in range(t.sd[od], t.ed[od]):
                        for b in range(t.sh[oh], t.eh[oh]):
                            idx = (a * H + b) * W
                            for c in range(t.sw[ow], t.ew[ow]):
                                acc = acc + x[idx + c]
                    y[o] = acc / <flt>div
                o += 1


cdef void _avg(const flt* x, flt* y, Py_ssize_t P, const Win* w, Py_ssize_t div_override,
               bint backward, int nth) noexcept nogil:
    cdef Py_ssize_t p
    cdef Py_ssize_t pin = w.D * w.H * w.W, pout = w.OD * w.OH * w.OW
    if backward:
        memset(<flt*>x, 0, P * pin * sizeof(flt))
    if nth > 1 and P > 1 and P * pin >= parallel_grain():
        for p in prange(P, num_threads=nth, schedule='static'):
            _avg_plane(<flt*>x + p * pin, y + p * pout, w, div_override, backward)
    else:
        for p in range(P):
            _avg_plane(<flt*>x + p * pin, y + p * pout, w, div_override, backward)


def avg_pool(_TensorBase x, _TensorBase y, tuple in_size, list starts, list ends, list factors,
             Py_ssize_t divisor_override, bint backward):
    """forward: y (P, L) = window means of x (P, D*H*W); backward: x = gradient
    of the input from y = grad_output.  Window ``i`` of dim ``j`` covers
    ``[starts[j][i], ends[j][i])``; its divisor is the product of
    ``factors[j][i]`` over the dims, or ``divisor_override`` when non-zero."""
    cdef Win w
    cdef int num = _dtype_num(x)
    if y._dtype.num != num:
        raise RuntimeError("avg_pool kernel: dtypes differ")
    _win(&w, x, y, starts, ends, (1, 1, 1), factors)
    cdef Py_ssize_t D, H, W, i
    D, H, W = in_size
    try:
        if D * H * W != x._shape[1]:
            raise RuntimeError("avg_pool kernel: input size does not match")
        _win_bounds(&w, D, H, W)
        for i in range(w.OD + w.OH + w.OW):
            if w.f[i] < 1 and divisor_override == 0 and w.e[i] > w.s[i]:
                raise RuntimeError("avg_pool kernel: bad divisor")
    except BaseException:
        free(w.s)
        raise
    cdef Py_ssize_t P = x._shape[0]
    cdef int nth = get_num_threads()
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _avg(<float*>px, <float*>py, P, &w, divisor_override, backward, nth)
            else:
                _avg(<double*>px, <double*>py, P, &w, divisor_override, backward, nth)
        finally:
            ptc_kernel_exit()
    free(w.s)
    return y
