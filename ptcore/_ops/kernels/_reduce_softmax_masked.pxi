# Included by _reduce.pyx (after _reduce_scan.pxi, whose softmax line it
# runs): the softmax of attention scores scaled and masked in the same pass,
# ``softmax(x.mul(scale).masked_fill(mask, fill), -1)``.  A compiled graph
# (ptcore._inductor.masked_softmax) calls it for that chain: one pass over
# the scores instead of three, the bits of the three ops (each row's scaled,
# filled values are built in a scratch row -- the product rounded in the
# dtype, as ``mul`` -- and handed to the same softmax kernels as
# ``ptcore.softmax``: float32 rows 16 a pass through ptcr_smrows_f32, as
# eager's; one row at a time they took 1.7x eager's three ops once eager's
# softmax ran its rows in passes).

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* y[j] = m[j] ? f : x[j] * s, without a branch (a causal mask's rows
       change where they switch: a branch per element mispredicted) and in a
       form the compiler vectorises */
    static inline void ptc_msm_build_f32(const float* x, const unsigned char* m, float* y,
                                         ptrdiff_t n, float s, float f) {
        uint32_t fb;
        memcpy(&fb, &f, 4);
        for (ptrdiff_t j = 0; j < n; j++) {
            float v = x[j] * s;
            uint32_t vb, r, k = (uint32_t)0 - (uint32_t)(m[j] != 0);
            memcpy(&vb, &v, 4);
            r = (fb & k) | (vb & ~k);
            memcpy(y + j, &r, 4);
        }
    }
    """
    void ptc_msm_build_f32(const float* x, const unsigned char* m, float* y, Py_ssize_t n,
                           float s, float f) nogil


cdef enum:
    MSM_BLOCK = 16      # float32 rows a softmax pass (ptcr_smrows_f32's) ...
    MSM_BLOCK_N = 4096  # ... for rows of up to this many elements (one row a pass above)


cdef void _msm_rows(const lplan* p, int num, const char* x, char* o, const unsigned char* m,
                    const Py_ssize_t* mst, const Py_ssize_t* xsh, int nb, Py_ssize_t mlast,
                    double scale, double fill, Py_ssize_t r0, Py_ssize_t r1,
                    char* row, Py_ssize_t bs) noexcept nogil:
    """Rows [r0, r1) of contiguous ``x`` (rows of p.n elements, batch shape
    ``xsh`` of ``nb`` dims) into ``o``; the mask row of a row at the sum of
    its batch coordinates times ``mst`` (0 for broadcast dims), its
    elements ``mlast`` apart (0: one flag for the row).  float32 rows are
    built ``bs`` at a time into ``row`` (``bs`` rows of scratch) and
    handed to eager softmax's rows-in-passes kernel (ptcr_smrows_f32: the
    bits of a row alone, so of ``ptcore.softmax``); float64 rows one by one
    to the softmax line."""
    cdef Py_ssize_t r, j, n = p.n, rem, q, moff = 0, blk = 0, rb = r0
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef int d
    cdef const unsigned char* mr
    cdef const float* xf
    cdef float* rf
    cdef const double* xd
    cdef double* rd
    cdef float s32 = <float>scale, f32 = <float>fill
    cdef double v64
    # the first row's batch coordinates; then counted up row by row
    rem = r0
    d = nb - 1
    while d >= 0:
        q = rem // xsh[d]
        coord[d] = rem - q * xsh[d]
        moff += coord[d] * mst[d]
        rem = q
        d -= 1
    for r in range(r0, r1):
        mr = m + moff
        if num == PT_FLOAT32:
            xf = <const float*>x + r * n
            rf = <float*>row + blk * n
            if mlast == 1:
                ptc_msm_build_f32(xf, mr, rf, n, s32, f32)
            elif mr[0]:
                for j in range(n):
                    rf[j] = f32
            else:
                for j in range(n):
                    rf[j] = xf[j] * s32
            blk += 1
            if blk == bs or r == r1 - 1:
                ptcr_smrows_f32(<const float*>row, n, <float*>o + rb * n, n, blk, n, 0)
                rb = r + 1
                blk = 0
        else:
            xd = <const double*>x + r * n
            rd = <double*>row
            for j in range(n):
                v64 = xd[j] * scale
                rd[j] = fill if mr[j * mlast] else v64
            _SM_LINE[num](NULL, p, row, o + r * n * 8, NULL)
        d = nb - 1
        while d >= 0:
            coord[d] += 1
            moff += mst[d]
            if coord[d] < xsh[d]:
                break
            moff -= coord[d] * mst[d]
            coord[d] = 0
            d -= 1


def masked_softmax_last(x, double scale, mask, double fill):
    """``softmax(x * scale masked_fill(mask, fill), -1)`` of a contiguous
    float32/float64 CPU ``x`` (at least one dim, not empty) with a bool CPU
    ``mask`` that broadcasts to it (its last dim of unit stride or size 1),
    into a new contiguous tensor; None for anything else (the caller runs the
    three ops)."""
    if not isinstance(x, _TensorBase) or not isinstance(mask, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef _TensorBase mk = <_TensorBase>mask
    cdef int num = t._dtype.num, nd = t._ndim, md = mk._ndim, i, k, nb
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or t._storage.device._type_code != 0 \
            or mk._storage.device._type_code != 0 or mk._dtype.num != PT_BOOL \
            or nd == 0 or md > nd or t._numel == 0 or not t._is_contig():
        return None
    cdef Py_ssize_t n = t._shape[nd - 1], mlast = 0, rows, isz = t._dtype.itemsize
    cdef Py_ssize_t mst[PT_MAX_DIMS]
    cdef Py_ssize_t xsh[PT_MAX_DIMS]
    # the mask's strides aligned to x's dims (0 where it broadcasts)
    for i in range(nd):
        k = i - (nd - md)
        if k < 0 or mk._shape[k] == 1:
            if i < nd - 1:
                mst[i] = 0
            continue
        if mk._shape[k] != t._shape[i]:
            return None
        if i < nd - 1:
            mst[i] = mk._strides[k]
        else:
            mlast = mk._strides[k]
            if mlast != 1:
                return None
    if mk._numel == 0:
        return None
    nb = nd - 1
    for i in range(nb):
        xsh[i] = t._shape[i]
    rows = t._numel // n
    cdef _TensorBase out = _empty_contig(t._dtype, nd, t._shape, t._storage.device, False)
    cdef lplan plan
    memset(&plan, 0, sizeof(lplan))
    plan.op = S_SOFTMAX
    plan.n = n
    plan.lx = isz
    plan.l0 = isz
    cdef const char* px = t._ptr()
    cdef char* po = out._ptr()
    cdef const unsigned char* pm = <const unsigned char*>mk._ptr()
    cdef int nth = get_num_threads(), tt
    if nth > 1 and t._numel < parallel_grain():
        nth = 1
    if nth > rows:
        nth = <int>rows
    cdef Py_ssize_t bs = MSM_BLOCK if num == PT_FLOAT32 and n <= MSM_BLOCK_N else 1
    cdef Py_ssize_t per = n * isz * bs
    cdef char* buf = <char*>ptc_scratch_malloc(nth * per)
    if buf == NULL:
        return None
    ptc_kernel_enter()
    with nogil:
        try:
            if nth == 1:
                _msm_rows(&plan, num, px, po, pm, mst, xsh, nb, mlast, scale, fill, 0, rows, buf, bs)
            else:
                for tt in prange(nth, num_threads=nth, schedule="static"):
                    _msm_rows(&plan, num, px, po, pm, mst, xsh, nb, mlast, scale, fill,
                              tt * rows // nth, (tt + 1) * rows // nth, buf + tt * per, bs)
        finally:
            ptc_kernel_exit()
            free(buf)
    return out
