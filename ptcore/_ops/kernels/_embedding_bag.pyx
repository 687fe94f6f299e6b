# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""EmbeddingBag's sum, mean and max bags in one pass over the looked-up rows,
and their weight gradients.

The bags are either fixed-size (a 2-D input: bag ``b`` is positions
``[b*step, (b+1)*step)``) or given by ``starts`` (non-decreasing int64 start
positions, the last bag ending at ``end``).  ``weight`` is a float32/float64
CPU matrix of any strides; ``idx`` a contiguous int64 vector.  The values are
the composite's of ``nn.functional.embedding_bag`` bit for bit: each bag's
rows (times ``per_sample_weights``) added to 0 in position order, the mean
divided by the kept count, the max the first largest value (a NaN wins).
Bags are independent, so the threads (over bags) never change a bit.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64
from ptcore._ops.kernels._parallel cimport team_for
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig, dtype_from_num

ctypedef fused real_t:
    float
    double

cdef extern from *:
    """
    /* a row read a few positions ahead, fetched into cache while the current
       ones are added (the looked-up rows are scattered over the table) */
    static inline void ptc_eb_prefetch(const char* p, Py_ssize_t nbytes) {
        Py_ssize_t k;
        for (k = 0; k < nbytes; k += 64) __builtin_prefetch(p + k, 0, 1);
    }
    """
    void ptc_eb_prefetch(const char* p, Py_ssize_t nbytes) noexcept nogil

cdef enum:
    PREFETCH_AHEAD = 6
    MODE_SUM = 0
    MODE_MEAN = 1
    MODE_MAX = 2


cdef struct _bags_t:
    const int64_t* idx
    const int64_t* starts       # NULL: fixed-size bags of ``step``
    Py_ssize_t step, nbags, end
    int64_t pad                 # -1: none
    int mode


cdef inline void _span(const _bags_t* g, Py_ssize_t b, Py_ssize_t* p0, Py_ssize_t* p1) noexcept nogil:
    """Positions ``[p0, p1)`` of bag ``b`` (clamped to ``[0, end]``)."""
    cdef Py_ssize_t a, z
    if g.starts == NULL:
        a = b * g.step
        z = a + g.step
    else:
        a = g.starts[b]
        z = g.starts[b + 1] if b + 1 < g.nbags else g.end
    if a < 0:
        a = 0
    if a > g.end:
        a = g.end
    if z > g.end:
        z = g.end
    if z < a:
        z = a
    p0[0] = a
    p1[0] = z


cdef inline void _add_row(real_t* d, const real_t* src, Py_ssize_t st, Py_ssize_t dim, real_t s,
                          bint scaled) noexcept nogil:
    """``d += src * s`` (each product rounded; ``scaled`` false: ``d += src``)."""
    cdef Py_ssize_t j
    cdef real_t v
    if scaled:
        for j in range(dim):
            v = src[j * st] * s
            d[j] = d[j] + v
    elif st == 1:
        for j in range(dim):
            d[j] = d[j] + src[j]
    else:
        for j in range(dim):
            d[j] = d[j] + src[j * st]


cdef void _bag(const _bags_t* g, Py_ssize_t b, real_t* o, int64_t* am, int64_t* count,
               const real_t* w, Py_ssize_t sw0, Py_ssize_t sw1, const real_t* psw,
               Py_ssize_t dim) noexcept nogil:
    cdef Py_ssize_t p, p0, p1, j
    cdef int64_t c = 0, r
    cdef const real_t* row
    cdef real_t v, s
    _span(g, b, &p0, &p1)
    for j in range(dim):
        o[j] = 0
    if am != NULL:
        for j in range(dim):
            am[j] = -1
    for p in range(p0, p1):
        r = g.idx[p]
        if sw1 == 1 and p + PREFETCH_AHEAD < p1:
            ptc_eb_prefetch(<const char*>(w + g.idx[p + PREFETCH_AHEAD] * sw0),
                            dim * <Py_ssize_t>sizeof(real_t))
        if r == g.pad:
            continue
        row = w + r * sw0
        if g.mode == MODE_MAX:
            for j in range(dim):
                v = row[j * sw1]
                if c == 0 or v > o[j] or (v != v and o[j] == o[j]):
                    o[j] = v
                    am[j] = r
        else:
            _add_row(o, row, sw1, dim, psw[p] if psw != NULL else 1, psw != NULL)
        c += 1
    if g.mode == MODE_MEAN and c > 1:
        s = <real_t>c
        for j in range(dim):
            o[j] = o[j] / s
    count[0] = c


cdef void _forward(const _bags_t* g, real_t* o, int64_t* am, int64_t* counts, const real_t* w,
                   Py_ssize_t sw0, Py_ssize_t sw1, const real_t* psw, Py_ssize_t dim,
                   int nt) noexcept nogil:
    cdef Py_ssize_t b
    if nt > 1:
        for b in prange(g.nbags, nogil=True, num_threads=nt, schedule="static"):
            _bag(g, b, o + b * dim, (am + b * dim) if am != NULL else NULL, counts + b, w, sw0,
                 sw1, psw, dim)
    else:
        for b in range(g.nbags):
            _bag(g, b, o + b * dim, (am + b * dim) if am != NULL else NULL, counts + b, w, sw0,
                 sw1, psw, dim)


cdef void _backward(const _bags_t* g, real_t* gw, const real_t* go, Py_ssize_t sg0,
                    Py_ssize_t sg1, const int64_t* counts, const int64_t* am,
                    const real_t* psw, Py_ssize_t dim) noexcept nogil:
    """``gw += `` each bag's gradient sent to its rows, bags and positions in
    order (the composite's index_add order)."""
    cdef Py_ssize_t b, p, p0, p1, j
    cdef int64_t r
    cdef const real_t* gb
    cdef real_t* d
    cdef real_t c, v
    for b in range(g.nbags):
        gb = go + b * sg0
        if g.mode == MODE_MAX:
            for j in range(dim):
                if am[b * dim + j] >= 0:
                    d = gw + am[b * dim + j] * dim + j
                    d[0] = d[0] + gb[j * sg1]
            continue
        _span(g, b, &p0, &p1)
        c = <real_t>(counts[b] if counts[b] > 1 else 1)
        for p in range(p0, p1):
            r = g.idx[p]
            if r == g.pad:
                continue
            d = gw + r * dim
            if g.mode == MODE_MEAN:
                for j in range(dim):
                    v = gb[j * sg1] / c
                    d[j] = d[j] + v
            else:
                _add_row(d, gb, sg1, dim, psw[p] if psw != NULL else 1, psw != NULL)


cdef int _setup(_bags_t* g, _TensorBase idx, starts, Py_ssize_t step, Py_ssize_t nbags,
                Py_ssize_t end, int mode, int64_t pad) except -1:
    cdef _TensorBase st
    if idx._dtype.num != PT_INT64 or idx._ndim != 1 or not idx._is_contig() \
            or idx._storage.device._type_code != 0:
        raise ValueError("embedding_bag kernel: contiguous int64 CPU indices expected")
    if end < 0 or end > idx._shape[0] or nbags < 0 or not (0 <= mode <= 2):
        raise ValueError("embedding_bag kernel: bad bag geometry")
    g.idx = <const int64_t*>idx._ptr()
    g.starts = NULL
    g.step, g.nbags, g.end, g.pad, g.mode = step, nbags, end, pad, mode
    if starts is None:
        if step < 0 or step * nbags > end:
            raise ValueError("embedding_bag kernel: bad bag geometry")
    else:
        st = <_TensorBase?>starts
        if st._dtype.num != PT_INT64 or st._ndim != 1 or not st._is_contig() \
                or st._shape[0] != nbags:
            raise ValueError("embedding_bag kernel: contiguous int64 starts of every bag expected")
        g.starts = <const int64_t*>st._ptr()
    return 0


cdef int _check_psw(_TensorBase psw, _TensorBase w, Py_ssize_t n) except -1:
    if psw._dtype.num != w._dtype.num or psw._ndim != 1 or not psw._is_contig() \
            or psw._shape[0] != n or psw._storage.device._type_code != 0:
        raise ValueError("embedding_bag kernel: contiguous per_sample_weights of weight's dtype "
                         "expected")
    return 0


def forward(_TensorBase weight, _TensorBase idx, starts, Py_ssize_t step, Py_ssize_t nbags,
            Py_ssize_t end, int mode, per_sample_weights, int64_t pad):
    """``(out, counts, argmax)`` of the bags: out ``(nbags, dim)`` in weight's
    dtype, counts int64 ``(nbags,)`` of the indices kept (not ``pad``), argmax
    int64 ``(nbags, dim)`` the row each maximum came from (-1 for an empty
    bag; None unless ``mode`` is 2).  Every index is checked against the
    number of rows first (RuntimeError naming the first bad one); None when
    ``weight`` is not a float32/float64 CPU matrix (the caller's composite
    handles it)."""
    cdef int num = weight._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or weight._ndim != 2 \
            or weight._storage.device._type_code != 0:
        return None
    cdef _bags_t g
    _setup(&g, idx, starts, step, nbags, end, mode, pad)
    cdef Py_ssize_t n = idx._shape[0], rows = weight._shape[0], dim = weight._shape[1], p
    cdef const int64_t* pi = g.idx
    for p in range(n):
        if pi[p] < 0 or pi[p] >= rows:
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings "
                               f"({rows}) but found idx to be {pi[p]}")
    cdef _TensorBase psw = None
    if per_sample_weights is not None:
        psw = <_TensorBase?>per_sample_weights
        _check_psw(psw, weight, n)
    cdef Py_ssize_t shp[2]
    shp[0] = nbags
    shp[1] = dim
    cdef _TensorBase out = _empty_contig(weight._dtype, 2, shp, weight._storage.device, False)
    cdef _TensorBase counts = _empty_contig(dtype_from_num(PT_INT64), 1, shp,
                                            weight._storage.device, False)
    cdef _TensorBase am = None
    cdef int64_t* pam = NULL
    if mode == MODE_MAX:
        am = _empty_contig(dtype_from_num(PT_INT64), 2, shp, weight._storage.device, False)
        pam = <int64_t*>am._ptr()
    cdef Py_ssize_t sw0 = weight._strides[0]          # (strides in elements)
    cdef Py_ssize_t sw1 = weight._strides[1]
    cdef char* pw = weight._ptr()
    cdef char* po = out._ptr()
    cdef int64_t* pc = <int64_t*>counts._ptr()
    cdef char* pp = psw._ptr() if psw is not None else NULL
    cdef int nt = team_for(end * dim if nbags > 1 else 0)
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _forward(&g, <float*>po, pam, pc, <const float*>pw, sw0, sw1,
                         <const float*>pp, dim, nt)
            else:
                _forward(&g, <double*>po, pam, pc, <const double*>pw, sw0, sw1,
                         <const double*>pp, dim, nt)
        finally:
            ptc_kernel_exit()
    return out, counts, am


def backward_into(_TensorBase gw, _TensorBase grad, _TensorBase idx, starts, Py_ssize_t step,
                  Py_ssize_t nbags, Py_ssize_t end, int mode, per_sample_weights, int64_t pad,
                  _TensorBase counts, argmax):
    """``gw += `` the weight gradient of :func:`forward`'s bags (``gw`` a
    contiguous matrix of weight's shape and dtype, ``grad`` ``(nbags, dim)``
    of any strides; ``counts``/``argmax`` from :func:`forward` with the same
    arguments, whose index check they rely on)."""
    cdef int num = gw._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or gw._ndim != 2 or not gw._is_contig() \
            or grad._dtype.num != num or grad._ndim != 2 or grad._shape[0] != nbags \
            or grad._shape[1] != gw._shape[1] or gw._storage.device._type_code != 0 \
            or grad._storage.device._type_code != 0:
        raise ValueError("embedding_bag kernel: gradient of weight's dtype and shape expected")
    cdef _bags_t g
    _setup(&g, idx, starts, step, nbags, end, mode, pad)
    if counts._dtype.num != PT_INT64 or not counts._is_contig() or counts._shape[0] != nbags:
        raise ValueError("embedding_bag kernel: counts of forward expected")
    cdef _TensorBase am = None
    cdef const int64_t* pam = NULL
    if mode == MODE_MAX:
        am = <_TensorBase?>argmax
        if am._dtype.num != PT_INT64 or not am._is_contig() or am._numel != nbags * gw._shape[1]:
            raise ValueError("embedding_bag kernel: argmax of forward expected")
        pam = <const int64_t*>am._ptr()
    cdef Py_ssize_t p, rows = gw._shape[0], dim = gw._shape[1]
    for p in range(idx._shape[0]):
        if g.idx[p] < 0 or g.idx[p] >= rows:
            raise ValueError("embedding_bag kernel: index out of range")
    cdef _TensorBase psw = None
    if per_sample_weights is not None:
        psw = <_TensorBase?>per_sample_weights
        _check_psw(psw, gw, idx._shape[0])
    cdef Py_ssize_t sg0 = grad._strides[0]
    cdef Py_ssize_t sg1 = grad._strides[1]
    cdef char* pg = gw._ptr()
    cdef char* po = grad._ptr()
    cdef const int64_t* pc = <const int64_t*>counts._ptr()
    cdef char* pp = psw._ptr() if psw is not None else NULL
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _backward(&g, <float*>pg, <const float*>po, sg0, sg1, pc, pam,
                          <const float*>pp, dim)
            else:
                _backward(&g, <double*>pg, <const double*>po, sg0, sg1, pc, pam,
                          <const double*>pp, dim)
        finally:
            ptc_kernel_exit()
    return gw
