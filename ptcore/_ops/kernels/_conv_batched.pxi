# The batched convolution drivers of _conv.pyx (``include``d there after the
# im2col/col2im, _rows_one, _gather/_scatter and the small-GEMM kernels):
# the whole-input kernel as one GEMM per group (``_whole``), one unit of
# samples as one GEMM per group (``_chunk_unit``) and the thread split over
# units with the fixed-order weight-gradient partials (``_batched``).


cdef inline bint _is_whole(const Geo* g) noexcept nogil:
    """The kernel covers the whole unpadded input: one output position per
    sample, whose column is the sample itself (a DCGAN discriminator's last
    layer, and the mirror of a generator's first)."""
    return (g.OD == 1 and g.OH == 1 and g.OW == 1 and g.pd == 0 and g.ph == 0 and g.pw == 0
            and g.kd == g.D and g.kh == g.H and g.kw == g.W
            and (g.kd == 1 or g.dd == 1) and (g.kh == 1 or g.dh == 1) and (g.kw == 1 or g.dw == 1))


cdef int _whole(int mode, const flt* a, const flt* b, const flt* bias, flt* y, Py_ssize_t N,
                const Geo* g) noexcept nogil:
    """The three primitives of a whole-input kernel as one GEMM per group:
    x is (N, C*K) and y (N, OC).  FWD (x=a, w=b): y = x W^T (+ bias);
    BWD_X (gy=a, w=b): gx = gy W (+ bias per channel); BWD_W (x=a, gy=b):
    gw = gy^T x."""
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t CgKK = Cg * g.kd * g.kh * g.kw
    cdef Py_ssize_t CKK = g.C * g.kd * g.kh * g.kw
    cdef Py_ssize_t n, gi
    cdef flt beta = 0
    if mode == MODE_FWD and bias != NULL:
        for n in range(N):
            memcpy(y + n * g.OC, bias, g.OC * sizeof(flt))
        beta = 1
    for gi in range(g.G):
        if mode == MODE_FWD:
            if CgKK == 0:
                if bias == NULL:
                    for n in range(N):
                        memset(y + n * g.OC + gi * OCg, 0, OCg * sizeof(flt))
                continue
            _gemm(CH_T, CH_N, <blas_int>OCg, <blas_int>N, <blas_int>CgKK, <flt>1,
                  <flt*>b + gi * OCg * CgKK, <blas_int>CgKK, <flt*>a + gi * CgKK, <blas_int>CKK,
                  beta, y + gi * OCg, <blas_int>g.OC)
        elif mode == MODE_BWD_X:
            if OCg == 0:
                for n in range(N):
                    memset(y + n * CKK + gi * CgKK, 0, CgKK * sizeof(flt))
                continue
            _gemm(CH_N, CH_N, <blas_int>CgKK, <blas_int>N, <blas_int>OCg, <flt>1,
                  <flt*>b + gi * OCg * CgKK, <blas_int>CgKK, <flt*>a + gi * OCg, <blas_int>g.OC,
                  <flt>0, y + gi * CgKK, <blas_int>CKK)
        else:
            _gemm(CH_N, CH_T, <blas_int>CgKK, <blas_int>OCg, <blas_int>N, <flt>1,
                  <flt*>a + gi * CgKK, <blas_int>CKK, <flt*>b + gi * OCg, <blas_int>g.OC,
                  <flt>0, y + gi * OCg * CgKK, <blas_int>CgKK)
    if mode == MODE_BWD_X and bias != NULL:
        for n in range(N):
            _add_bias(y + n * CKK, bias, g.C, g.D * g.H * g.W)
    return 0


cdef enum:
    # column-block floats of one channel block of the input gradient: the
    # block is written by the GEMM and read back by col2im while in L2
    BWD_X_BLOCK = 65536


cdef void _bwd_x_blocks(const flt* gp, const flt* w, const flt* bias, flt* y, Py_ssize_t n0,
                        Py_ssize_t m, const Geo* g, flt* col) noexcept nogil:
    """The input gradient of samples ``[n0, n0 + m)`` (one group, not
    pointwise; ``gp`` their gradient as (OC, m*L)) in blocks of input
    channels: each block's column rows (cb*K, m*L) come from one GEMM and go
    through col2im before the next block's, so they are read back from L2
    instead of the whole (C*K, m*L) matrix from memory.  Every element is the
    same FMA chain as in one GEMM (ptc_sgemm, BLAS: per element over k) and
    col2im works channel by channel: the bits of the unblocked path."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t R = g.OD * g.OH
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t CKK = g.C * KK
    cdef Py_ssize_t LD = m * L
    cdef Py_ssize_t cb = BWD_X_BLOCK // (KK * LD) if KK * LD > 0 else g.C
    cdef Py_ssize_t c0, nc, j
    cdef Geo gb = g[0]
    cdef ptc_ic_geo ig
    cdef int level = _vec_rows(g, &ig, True) if flt is float else 0
    cdef ptc_ic_move* mv = NULL
    cdef int nmv = -1
    if flt is float:
        if level:
            mv = _plane_moves(&ig, level, &nmv)      # one table for every block and sample
    if cb < 1:
        cb = 1
    if cb > g.C:
        cb = g.C
    c0 = 0
    while c0 < g.C:
        nc = cb if g.C - c0 > cb else g.C - c0
        gb.C = nc
        _gemm_one(CH_N, CH_T, <blas_int>LD, <blas_int>(nc * KK), <blas_int>g.OC, <flt>1,
                  <flt*>gp, <blas_int>LD, <flt*>w + c0 * KK, <blas_int>CKK, <flt>0,
                  col, <blas_int>LD)
        for j in range(m):
            _col2im_by(y + (n0 + j) * g.C * P + c0 * P, col + j * L, LD, &gb, 1, 0, R, True,
                       level, &ig, mv, nmv)
        c0 += nc
    free(mv)
    if bias != NULL:
        for j in range(m):
            _add_bias(y + (n0 + j) * g.C * P, bias, g.C, P)


cdef void _chunk_unit(int mode, const flt* a, const flt* b, const flt* bias, flt* y,
                      Py_ssize_t n0, Py_ssize_t m, const Geo* g, flt* col, flt* tmp,
                      flt* acc) noexcept nogil:
    """The three primitives for samples ``[n0, n0 + m)`` as one GEMM per group
    of ``m * L`` columns, on one thread (``col``: the (C*K, m*L) column
    block; ``tmp``: (OC, m*L) when m > 1).  Operands by mode as ``_rows_one``;
    BWD_W accumulates into ``acc``."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t P = g.D * g.H * g.W
    cdef Py_ssize_t R = g.OD * g.OH
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t CgKK = Cg * g.kd * g.kh * g.kw
    cdef Py_ssize_t LD = m * L
    cdef Py_ssize_t j, gi
    cdef bint pw = _is_pointwise(g)
    cdef const flt* cp
    cdef const flt* gp
    cdef flt* out
    cdef flt* dst
    cdef Py_ssize_t g0 = 0
    if flt is float:
        if (mode == MODE_BWD_W and not pw and _use_implicit(g, LD, OCg, CgKK)
                and not _use_small_nt(OCg, CgKK, LD)):
            if m == 1:
                gp = b + n0 * g.OC * L
            else:
                _gather(tmp, b + n0 * g.OC * L, m, g.OC, L)
                gp = tmp
            g0 = _bww_implicit(a + n0 * g.C * P, gp, acc, m, g)
            if g0 == g.G:
                return
        if mode == MODE_FWD and not pw and _use_implicit(g, LD, OCg, CgKK):
            out = y + n0 * g.OC * L if m == 1 else tmp
            if _fwd_implicit(a + n0 * g.C * P, b, out, m, g):
                if m > 1:
                    _scatter(y + n0 * g.OC * L, tmp, m, g.OC, L)
                if bias != NULL:
                    for j in range(m):
                        _add_bias(y + (n0 + j) * g.OC * L, bias, g.OC, L)
                return
    if mode == MODE_FWD or mode == MODE_BWD_W:
        if pw and m == 1:
            cp = a + n0 * g.C * P
        elif pw:
            _gather(col, a + n0 * g.C * P, m, g.C, L)
            cp = col
        else:
            for j in range(m):
                _im2col(a + (n0 + j) * g.C * P, col + j * L, LD, g, 1, 0, R)
            cp = col
    if mode == MODE_FWD:
        out = y + n0 * g.OC * L if m == 1 else tmp
        for gi in range(g.G):
            if CgKK == 0:
                memset(out + gi * OCg * LD, 0, OCg * LD * sizeof(flt))
                continue
            if flt is float:
                if _use_small(OCg, CgKK):
                    ptc_sgemm_small(OCg, LD, CgKK, b + gi * OCg * CgKK, CgKK, 1,
                                    cp + gi * CgKK * LD, LD, out + gi * OCg * LD, LD, 0)
                    continue
            _gemm_one(CH_N, CH_N, <blas_int>LD, <blas_int>OCg, <blas_int>CgKK, <flt>1,
                      <flt*>cp + gi * CgKK * LD, <blas_int>LD, <flt*>b + gi * OCg * CgKK,
                      <blas_int>CgKK, <flt>0, out + gi * OCg * LD, <blas_int>LD)
        if m > 1:
            _scatter(y + n0 * g.OC * L, tmp, m, g.OC, L)
        if bias != NULL:
            for j in range(m):
                _add_bias(y + (n0 + j) * g.OC * L, bias, g.OC, L)
    elif mode == MODE_BWD_X:
        if m == 1:
            gp = a + n0 * g.OC * L
        else:
            _gather(tmp, a + n0 * g.OC * L, m, g.OC, L)
            gp = tmp
        if not pw and g.G == 1 and OCg > 0:
            _bwd_x_blocks(gp, b, bias, y, n0, m, g, col)
            return
        dst = y + n0 * g.C * P if (pw and m == 1) else col
        for gi in range(g.G):
            if OCg == 0:
                memset(dst + gi * CgKK * LD, 0, CgKK * LD * sizeof(flt))
                continue
            _gemm_one(CH_N, CH_T, <blas_int>LD, <blas_int>CgKK, <blas_int>OCg, <flt>1,
                      <flt*>gp + gi * OCg * LD, <blas_int>LD,
                      <flt*>b + gi * OCg * CgKK, <blas_int>CgKK, <flt>0,
                      dst + gi * CgKK * LD, <blas_int>LD)
        if pw and m > 1:
            _scatter(y + n0 * g.C * P, col, m, g.C, L)
        elif not pw:
            for j in range(m):
                _col2im(y + (n0 + j) * g.C * P, col + j * L, LD, g, 1, 0, R, True)
        if bias != NULL:
            for j in range(m):
                _add_bias(y + (n0 + j) * g.C * P, bias, g.C, P)
    else:
        if g0 == 0:     # (else gy is in place already, for the groups left)
            if m == 1:
                gp = b + n0 * g.OC * L
            else:
                _gather(tmp, b + n0 * g.OC * L, m, g.OC, L)
                gp = tmp
        for gi in range(g0, g.G):
            if flt is float:
                if _use_small_nt(OCg, CgKK, LD):
                    ptc_sgemm_small_nt(OCg, CgKK, LD, gp + gi * OCg * LD, LD,
                                       cp + gi * CgKK * LD, LD, acc + gi * OCg * CgKK, CgKK, 1)
                    continue
            _gemm_one(CH_T, CH_N, <blas_int>CgKK, <blas_int>OCg, <blas_int>LD, <flt>1,
                      <flt*>cp + gi * CgKK * LD, <blas_int>LD,
                      <flt*>gp + gi * OCg * LD, <blas_int>LD, <flt>1,
                      acc + gi * OCg * CgKK, <blas_int>CgKK)


cdef enum:
    BWD_W_PARTS = 4             # weight-gradient partial sums (fixed: the summation order)
    BATCHED_MIN_WORK = 1048576  # multiply-adds below which _batched stays on one thread


cdef int _batched(int mode, const flt* a, const flt* b, const flt* bias, flt* y, Py_ssize_t N,
                  const Geo* g, int nth, Py_ssize_t nb) noexcept nogil:
    """The three primitives over units of ``nb`` samples (one GEMM per group
    and unit; one sample in L2-sized row chunks when ``nb == 1``), the units
    shared by ``nth`` threads, each with its own buffers and single-threaded
    BLAS calls.  Forward and input gradient write disjoint samples; the
    weight gradient sums the units in ``min(units, BWD_W_PARTS)`` contiguous
    runs, each into its own partial sum (run 0 into ``y``), then adds the
    partials in run order: every result is independent of ``nth``."""
    cdef Py_ssize_t L = g.OD * g.OH * g.OW
    cdef Py_ssize_t R = g.OD * g.OH
    cdef Py_ssize_t KK = g.kd * g.kh * g.kw
    cdef Py_ssize_t Cg = g.C // g.G, OCg = g.OC // g.G
    cdef Py_ssize_t CgKK = Cg * KK
    cdef Py_ssize_t U = (N + nb - 1) // nb
    cdef bint rowwise = _row_chunked(nb, _is_pointwise(g), CgKK, OCg)
    cdef Py_ssize_t rc = _rows_chunk(g) if rowwise else R
    cdef Py_ssize_t colsz = g.C * KK * (rc * g.OW if rowwise else nb * L) + 1
    cdef Py_ssize_t tmpsz = g.OC * nb * L if nb > 1 else 0
    cdef Py_ssize_t per = colsz + tmpsz
    cdef Py_ssize_t wsz = g.OC * CgKK
    cdef Py_ssize_t NG = U, j, u, u0, u1, n0, m, i
    cdef int nthr, t
    cdef flt* buf
    cdef flt* parts = NULL
    cdef flt* col
    cdef flt* acc
    if mode == MODE_BWD_W and NG > BWD_W_PARTS:
        NG = BWD_W_PARTS
    nthr = nth if nth < NG else <int>NG
    if N * g.OC * L * CgKK < BATCHED_MIN_WORK:
        nthr = 1        # a few microseconds: not worth waking threads
    if nthr < 1:
        nthr = 1
    buf = <flt*>ptc_scratch_malloc(nthr * per * sizeof(flt))
    if buf == NULL:
        return -1
    if mode == MODE_BWD_W and NG > 1:
        parts = <flt*>ptc_scratch_malloc((NG - 1) * wsz * sizeof(flt))
        if parts == NULL:
            free(buf)
            return -1
    for j in prange(NG, num_threads=nthr, schedule='static'):
        t = threadid()
        col = buf + t * per
        acc = NULL
        if mode == MODE_BWD_W:
            acc = y if j == 0 else parts + (j - 1) * wsz
            memset(acc, 0, wsz * sizeof(flt))
            u0 = j * U // NG
            u1 = (j + 1) * U // NG
        else:
            u0 = j
            u1 = j + 1
        for u in range(u0, u1):
            n0 = u * nb
            m = nb if N - n0 > nb else N - n0
            if rowwise:
                _rows_one(mode, a, b, bias, y, n0, g, 1, col, rc, acc)
            else:
                _chunk_unit(mode, a, b, bias, y, n0, m, g, col, col + colsz, acc)
    if parts != NULL:
        for j in range(NG - 1):
            acc = parts + j * wsz
            for i in range(wsz):
                y[i] += acc[i]
        free(parts)
    free(buf)
    return 0
