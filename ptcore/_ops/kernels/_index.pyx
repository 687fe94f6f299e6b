# cython: language_level=3, cdivision=True
"""CPU kernels for indexing and shape ops.

Structure
---------
* ``indexed``: the one indexed-element loop behind advanced indexing,
  ``index_select``, ``gather``, ``take``, ``scatter*``, ``index_put_``,
  ``index_add_``, ``index_copy_``, ``index_fill_``.  An iteration space
  (``shape``) carries byte strides for a *dense* operand and for the
  *indexed* operand, plus a list of int64 index operands, each with its own
  strides over the iteration space, the size of the dimension it indexes and
  that dimension's stride.  At position ``p``::

      a = data + base(p) + sum_k wrap(idx_k[p]) * mul_k       (indexed element)
      b = dense + dense_off(p)                                (dense element)

  and the mode says what happens: GATHER ``*b = *a``, SCATTER ``*a = *b``,
  or a reduction ``*a = op(*a, *b)``.  Copies move ``itemsize`` raw bytes
  (the same code serves every dtype); reductions go through a table
  ``_RED[op][ScalarType]`` of element functions written once over a fused
  type (float16/bfloat16 computed in float32).  A dense operand with all-zero
  strides is a scalar (``index_fill_``, ``scatter_(value=)``).
* masked loops (``masked``): compress (``masked_select``), expand
  (``masked_scatter_``) and fill (``masked_fill_``), plus ``masked_count``.
* ``nonzero`` over a bool tensor.
* ``cat_into``: each input copied by ``copy_cast`` into its slice of the output;
  ``cat_fast``: cat/stack's common case, checked and allocated here.
* ``flip_into``: ``copy_cast`` with negated destination strides.
* ``tri_zero`` (``tril_``/``triu_``), ``repeat_index`` (``repeat_interleave``),
  ``trace_sum``, ``div_count`` (``scatter_reduce`` mean).

Index operands are int64 and already validated (``check_index``): kernels
trust their inputs.  GATHER splits its elements over threads once there are
``parallel_grain()`` of them; writes to the indexed operand run serially, so
duplicates resolve the same way (last one wins / accumulated in order) at any
thread count.
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from cython.parallel cimport prange

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig
from ptcore._ops.kernels._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_UINT16, PT_UINT32, PT_UINT64,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128,
    PT_NUM_TYPES, PT_MAX_DIMS,
    ptc_half_to_float, ptc_float_to_half, ptc_bf16_to_float, ptc_float_to_bf16,
)
from ptcore._ops.kernels._copy cimport copy_cast
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain, team_for
scratch_bind()      # this module's scratch requests obey _fault's test switch


# --------------------------------------------------------------------------
# storage types (one distinct C type per dtype, as in _copy.pyx)
# --------------------------------------------------------------------------
ctypedef struct pt_bool_s:
    uint8_t v

ctypedef struct pt_half_s:
    uint16_t bits

ctypedef struct pt_bf16_s:
    uint16_t bits

ctypedef struct pt_cf_s:
    float re
    float im

ctypedef struct pt_cd_s:
    double re
    double im

ctypedef fused scalar_t:
    pt_bool_s
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    pt_half_s
    pt_bf16_s
    float
    double
    pt_cf_s
    pt_cd_s


cdef enum:
    MODE_GATHER = 0
    MODE_SCATTER = 1
    MODE_REDUCE = 2

cdef enum:
    RED_ADD = 0
    RED_MUL = 1
    RED_MAX = 2
    RED_MIN = 3
    RED_NUM = 4

# masked modes
cdef enum:
    MASK_COMPRESS = 0
    MASK_EXPAND = 1
    MASK_FILL = 2


ctypedef void (*elem_fn)(char* a, const char* b) noexcept nogil


# --------------------------------------------------------------------------
# element reductions  *a = op(*a, *b)
# --------------------------------------------------------------------------
cdef inline float _f32(const scalar_t* p) noexcept nogil:
    if scalar_t is pt_half_s:
        return ptc_half_to_float(p.bits)
    elif scalar_t is pt_bf16_s:
        return ptc_bf16_to_float(p.bits)
    else:
        return 0


cdef inline void _st_f32(scalar_t* p, float v) noexcept nogil:
    if scalar_t is pt_half_s:
        p.bits = ptc_float_to_half(v)
    elif scalar_t is pt_bf16_s:
        p.bits = ptc_float_to_bf16(v)


cdef void _red_add(scalar_t* a, const scalar_t* b) noexcept nogil:
    if scalar_t is pt_bool_s:
        a.v = (a.v | b.v) != 0
    elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
        _st_f32(a, _f32(a) + _f32(b))
    elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
        a.re = a.re + b.re
        a.im = a.im + b.im
    elif scalar_t is float or scalar_t is double:
        a[0] = a[0] + b[0]
    else:                                   # integers wrap (unsigned arithmetic)
        a[0] = <scalar_t>(<uint64_t>a[0] + <uint64_t>b[0])


cdef void _red_mul(scalar_t* a, const scalar_t* b) noexcept nogil:
    cdef double re, im
    if scalar_t is pt_bool_s:
        a.v = (a.v != 0) and (b.v != 0)
    elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
        _st_f32(a, _f32(a) * _f32(b))
    elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
        re = <double>a.re * b.re - <double>a.im * b.im
        im = <double>a.re * b.im + <double>a.im * b.re
        a.re = re
        a.im = im
    elif scalar_t is float or scalar_t is double:
        a[0] = a[0] * b[0]
    else:
        a[0] = <scalar_t>(<uint64_t>a[0] * <uint64_t>b[0])


cdef void _red_max(scalar_t* a, const scalar_t* b) noexcept nogil:
    # PyTorch: NaN in either operand propagates (a = b iff isnan(b) or a < b)
    cdef float x, y
    if scalar_t is pt_bool_s:
        a.v = (a.v != 0) or (b.v != 0)
    elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
        x = _f32(a)
        y = _f32(b)
        if y != y or x < y:
            a[0] = b[0]
    elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
        pass                                # rejected by the caller
    elif scalar_t is float or scalar_t is double:
        if b[0] != b[0] or a[0] < b[0]:
            a[0] = b[0]
    else:
        if a[0] < b[0]:
            a[0] = b[0]


cdef void _red_min(scalar_t* a, const scalar_t* b) noexcept nogil:
    cdef float x, y
    if scalar_t is pt_bool_s:
        a.v = (a.v != 0) and (b.v != 0)
    elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
        x = _f32(a)
        y = _f32(b)
        if y != y or y < x:
            a[0] = b[0]
    elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
        pass
    elif scalar_t is float or scalar_t is double:
        if b[0] != b[0] or b[0] < a[0]:
            a[0] = b[0]
    else:
        if b[0] < a[0]:
            a[0] = b[0]


# a /= count where count > 0 (scatter_reduce 'mean'); integers floor-divide.
ctypedef void (*div_fn)(char* a, Py_ssize_t sa, const int64_t* c, Py_ssize_t sc,
                        Py_ssize_t n) noexcept nogil


cdef void _div_count(scalar_t* a, Py_ssize_t sa, const int64_t* c, Py_ssize_t sc,
                     Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t k, q, r
    cdef float fr
    cdef double dr
    cdef scalar_t* p
    for i in range(n):
        k = (<const int64_t*>((<const char*>c) + i * sc))[0]
        if k <= 0:
            continue
        p = <scalar_t*>((<char*>a) + i * sa)
        if scalar_t is pt_bool_s:
            pass                            # rejected by the caller
        elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
            _st_f32(p, _f32(p) / <float>k)
        elif scalar_t is pt_cf_s:             # c10::complex division: times 1/k
            fr = 1.0 / <float>k
            p.re = p.re * fr
            p.im = p.im * fr
        elif scalar_t is pt_cd_s:
            dr = 1.0 / <double>k
            p.re = p.re * dr
            p.im = p.im * dr
        elif scalar_t is float:
            p[0] = p[0] / <float>k
        elif scalar_t is double:
            p[0] = p[0] / <double>k
        else:
            q = (<int64_t>p[0]) / k
            r = (<int64_t>p[0]) - q * k
            if r != 0 and r < 0:
                q -= 1
            p[0] = <scalar_t>q


# trace: sum of n elements at byte stride s, accumulated as PyTorch's CPU
# acc_type (int64 for integers, double for float32/64, float for half/bf16,
# complex128 for complex); integers store int64, the rest their own type.
ctypedef void (*sum_fn)(const char* p, Py_ssize_t n, Py_ssize_t s, char* out) noexcept nogil


cdef void _strided_sum(const scalar_t* p, Py_ssize_t n, Py_ssize_t s, char* out) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t iacc = 0
    cdef double dacc = 0, dim_ = 0
    cdef float facc = 0
    cdef const scalar_t* q
    for i in range(n):
        q = <const scalar_t*>((<const char*>p) + i * s)
        if scalar_t is pt_bool_s:
            iacc += q.v
        elif scalar_t is pt_half_s or scalar_t is pt_bf16_s:
            facc += _f32(q)
        elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
            dacc += q.re
            dim_ += q.im
        elif scalar_t is float or scalar_t is double:
            dacc += q[0]
        else:
            iacc += <uint64_t><int64_t>q[0]
    if scalar_t is pt_half_s or scalar_t is pt_bf16_s:
        _st_f32(<scalar_t*>out, facc)
    elif scalar_t is pt_cf_s or scalar_t is pt_cd_s:
        (<scalar_t*>out).re = dacc
        (<scalar_t*>out).im = dim_
    elif scalar_t is float or scalar_t is double:
        (<scalar_t*>out)[0] = <scalar_t>dacc
    else:
        (<int64_t*>out)[0] = <int64_t>iacc


# --------------------------------------------------------------------------
# dispatch tables, filled once at import
# --------------------------------------------------------------------------
cdef elem_fn _RED[RED_NUM][PT_NUM_TYPES]
cdef div_fn _DIV[PT_NUM_TYPES]
cdef sum_fn _SUM[PT_NUM_TYPES]


cdef inline int _type_num(scalar_t* tag) noexcept nogil:
    if scalar_t is pt_bool_s:
        return PT_BOOL
    elif scalar_t is uint8_t:
        return PT_UINT8
    elif scalar_t is int8_t:
        return PT_INT8
    elif scalar_t is int16_t:
        return PT_INT16
    elif scalar_t is int32_t:
        return PT_INT32
    elif scalar_t is int64_t:
        return PT_INT64
    elif scalar_t is pt_half_s:
        return PT_FLOAT16
    elif scalar_t is pt_bf16_s:
        return PT_BFLOAT16
    elif scalar_t is float:
        return PT_FLOAT32
    elif scalar_t is double:
        return PT_FLOAT64
    elif scalar_t is pt_cf_s:
        return PT_COMPLEX64
    else:
        return PT_COMPLEX128


cdef void _register(scalar_t* tag) noexcept nogil:
    cdef int t = _type_num(tag)
    _RED[<int>RED_ADD][t] = <elem_fn>_red_add[scalar_t]
    _RED[<int>RED_MUL][t] = <elem_fn>_red_mul[scalar_t]
    _RED[<int>RED_MAX][t] = <elem_fn>_red_max[scalar_t]
    _RED[<int>RED_MIN][t] = <elem_fn>_red_min[scalar_t]
    _DIV[t] = <div_fn>_div_count[scalar_t]
    _SUM[t] = <sum_fn>_strided_sum[scalar_t]


_register(<pt_bool_s*>NULL)
_register(<uint8_t*>NULL)
_register(<int8_t*>NULL)
_register(<int16_t*>NULL)
_register(<int32_t*>NULL)
_register(<int64_t*>NULL)
_register(<pt_half_s*>NULL)
_register(<pt_bf16_s*>NULL)
_register(<float*>NULL)
_register(<double*>NULL)
_register(<pt_cf_s*>NULL)
_register(<pt_cd_s*>NULL)

REDUCTIONS = {"add": <int>RED_ADD, "sum": <int>RED_ADD, "multiply": <int>RED_MUL,
              "prod": <int>RED_MUL, "amax": <int>RED_MAX, "amin": <int>RED_MIN}


# --------------------------------------------------------------------------
# element copies of itemsize bytes (constant sizes compile to plain moves)
# --------------------------------------------------------------------------
cdef inline void _cp(char* d, const char* s, Py_ssize_t isz) noexcept nogil:
    if isz == 4:
        memcpy(d, s, 4)
    elif isz == 8:
        memcpy(d, s, 8)
    elif isz == 2:
        memcpy(d, s, 2)
    elif isz == 1:
        d[0] = s[0]
    else:
        memcpy(d, s, 16)


# --------------------------------------------------------------------------
# the indexed iteration
# --------------------------------------------------------------------------
ctypedef struct _iter_t:
    int nd                                  # >= 1
    int nidx
    Py_ssize_t isz
    Py_ssize_t numel
    char* dense
    char* data
    Py_ssize_t shape[PT_MAX_DIMS]
    Py_ssize_t dstr[PT_MAX_DIMS]            # dense operand, bytes
    Py_ssize_t sstr[PT_MAX_DIMS]            # indexed operand, bytes
    const char* iptr[PT_MAX_DIMS]
    Py_ssize_t istr[PT_MAX_DIMS][PT_MAX_DIMS]   # [k][dim], bytes
    Py_ssize_t isize[PT_MAX_DIMS]           # size of the dim index k selects in
    Py_ssize_t imul[PT_MAX_DIMS]            # that dim's stride, bytes


cdef bint _mergeable(const _iter_t* it, int o, int i) noexcept nogil:
    """Outer dim o and inner dim i can be one dim for every operand."""
    cdef int k
    cdef Py_ssize_t n = it.shape[i]
    if it.dstr[o] != it.dstr[i] * n or it.sstr[o] != it.sstr[i] * n:
        return False
    for k in range(it.nidx):
        if it.istr[k][o] != it.istr[k][i] * n:
            return False
    return True


cdef void _prepare(_iter_t* it) noexcept nogil:
    """Drop size-1 dims and coalesce contiguous neighbours (order kept)."""
    cdef int nd = it.nd, i, k, m = 0
    for i in range(nd):
        if it.shape[i] == 1:
            continue
        it.shape[m] = it.shape[i]
        it.dstr[m] = it.dstr[i]
        it.sstr[m] = it.sstr[i]
        for k in range(it.nidx):
            it.istr[k][m] = it.istr[k][i]
        m += 1
    nd = m
    if nd == 0:
        it.shape[0] = 1
        it.dstr[0] = 0
        it.sstr[0] = 0
        for k in range(it.nidx):
            it.istr[k][0] = 0
        nd = 1
    m = 0
    for i in range(1, nd):
        if _mergeable(it, m, i):
            it.shape[m] *= it.shape[i]
            it.dstr[m] = it.dstr[i]
            it.sstr[m] = it.sstr[i]
            for k in range(it.nidx):
                it.istr[k][m] = it.istr[k][i]
        else:
            m += 1
            it.shape[m] = it.shape[i]
            it.dstr[m] = it.dstr[i]
            it.sstr[m] = it.sstr[i]
            for k in range(it.nidx):
                it.istr[k][m] = it.istr[k][i]
    it.nd = m + 1


cdef inline Py_ssize_t _offset_at(const _iter_t* it, const char** ip, Py_ssize_t j,
                                  int last) noexcept nogil:
    cdef Py_ssize_t off = 0
    cdef int64_t v
    cdef int k
    for k in range(it.nidx):
        v = (<const int64_t*>(ip[k] + j * it.istr[k][last]))[0]
        if v < 0:
            v += it.isize[k]
        off += v * it.imul[k]
    return off


cdef inline void _fill_run(char* a, const char* v, Py_ssize_t n, Py_ssize_t isz) noexcept nogil:
    """The ``isz``-byte value ``v`` (4 or 8) into ``n`` contiguous elements."""
    cdef Py_ssize_t j
    cdef uint32_t v4
    cdef uint64_t v8
    if isz == 4:
        memcpy(&v4, v, 4)
        for j in range(n):
            (<uint32_t*>a)[j] = v4
    else:
        memcpy(&v8, v, 8)
        for j in range(n):
            (<uint64_t*>a)[j] = v8


ctypedef fused _addf_t:
    float
    double


cdef inline void _add_run(_addf_t* a, const _addf_t* b, Py_ssize_t n) noexcept nogil:
    """``a[j] += b[j]`` over a contiguous run (``fn``'s float add, vectorised)."""
    cdef Py_ssize_t j
    for j in range(n):
        a[j] = a[j] + b[j]


cdef int _red_code(elem_fn fn, int* t) noexcept nogil:
    """The reduction of ``fn`` (RED_ADD/MUL/MAX/MIN) with ``t`` its type (0
    float32, 1 float64, 2 int64: add only), or -1 for a function without an
    inlined loop here."""
    cdef int op
    for op in range(RED_NUM):
        if fn == _RED[op][<int>PT_FLOAT32]:
            t[0] = 0
            return op
        if fn == _RED[op][<int>PT_FLOAT64]:
            t[0] = 1
            return op
    if fn == _RED[<int>RED_ADD][<int>PT_INT64]:
        t[0] = 2
        return RED_ADD
    return -1


ctypedef fused _rf_t:
    float
    double
    int64_t


cdef inline void _red1(int op, _rf_t* a, _rf_t b) noexcept nogil:
    """``*a = op(*a, b)``: _red_add/_red_mul/_red_max/_red_min's operation
    (NaN propagating for max/min; integers wrap)."""
    if _rf_t is int64_t:
        a[0] = <int64_t>(<uint64_t>a[0] + <uint64_t>b)
    elif op == RED_MAX:
        if b != b or a[0] < b:
            a[0] = b
    elif op == RED_MIN:
        if b != b or b < a[0]:
            a[0] = b
    elif op == RED_MUL:
        a[0] = a[0] * b
    else:
        a[0] = a[0] + b


cdef void _red_run(int op, _rf_t* a, const _rf_t* b, Py_ssize_t n, bint one) noexcept nogil:
    """A contiguous run of ``a`` reduced with ``b``'s run, or with ``b[0]``
    (``one``: a number), in order."""
    cdef Py_ssize_t j
    cdef _rf_t v = b[0]
    if one:
        for j in range(n):
            _red1(op, &a[j], v)
    else:
        for j in range(n):
            _red1(op, &a[j], b[j])


cdef void _red_row1(int op, _rf_t* tag, char* dp, char* sp, const char* i0, Py_ssize_t is0,
                    Py_ssize_t sz0, Py_ssize_t mul0, Py_ssize_t ds, Py_ssize_t ss,
                    Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    """Row ``[c0, c1)`` of the one-index loop reducing into the indexed
    operand with the operation inlined (``_run``'s order)."""
    cdef Py_ssize_t j
    cdef int64_t v
    for j in range(c0, c1):
        v = (<const int64_t*>(i0 + j * is0))[0]
        if v < 0:
            v += sz0
        _red1(op, <_rf_t*>(sp + v * mul0 + j * ss), (<const _rf_t*>(dp + j * ds))[0])


cdef bint _row1_typed(int mode, elem_fn fn, Py_ssize_t isz, char* dp, char* sp,
                      const char* i0, Py_ssize_t is0, Py_ssize_t sz0, Py_ssize_t mul0,
                      Py_ssize_t ds, Py_ssize_t ss, Py_ssize_t c0,
                      Py_ssize_t c1) noexcept nogil:
    """Row ``[c0, c1)`` of ``_run``'s one-index loop with the element operation
    inlined (the generic loop calls ``_cp``/``fn`` per element): 4- and
    8-byte copies and float32/float64 sums (``fn`` the add of ``_RED``), the
    operations and their order as the generic loop's.  False, nothing done,
    for anything else.  (Not inlined: in ``_run`` its loops lost their
    registers to the stack.)"""
    cdef Py_ssize_t j
    cdef int64_t v
    cdef int op, t = 0
    if mode == MODE_GATHER or mode == MODE_SCATTER:
        if isz != 4 and isz != 8:
            return False
    elif fn != _RED[<int>RED_ADD][<int>PT_FLOAT32] and fn != _RED[<int>RED_ADD][<int>PT_FLOAT64]:
        op = _red_code(fn, &t)
        if op < 0:
            return False
        if t == 0:
            _red_row1(op, <float*>NULL, dp, sp, i0, is0, sz0, mul0, ds, ss, c0, c1)
        elif t == 1:
            _red_row1(op, <double*>NULL, dp, sp, i0, is0, sz0, mul0, ds, ss, c0, c1)
        else:
            _red_row1(op, <int64_t*>NULL, dp, sp, i0, is0, sz0, mul0, ds, ss, c0, c1)
        return True
    cdef const int64_t* ix
    cdef uint32_t* o4
    if mode == MODE_GATHER and isz == 4 and ds == 4 and ss == 0 and is0 == 8:
        # gather along a contiguous last dim: indices and outputs in runs
        ix = <const int64_t*>i0
        o4 = <uint32_t*>dp
        for j in range(c0, c1):
            v = ix[j]
            v += (v >> 63) & sz0
            o4[j] = (<const uint32_t*>(sp + v * mul0))[0]
    elif mode == MODE_GATHER and isz == 4:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<uint32_t*>(dp + j * ds))[0] = (<const uint32_t*>(sp + v * mul0 + j * ss))[0]
    elif mode == MODE_GATHER:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<uint64_t*>(dp + j * ds))[0] = (<const uint64_t*>(sp + v * mul0 + j * ss))[0]
    elif mode == MODE_SCATTER and isz == 4 and ds == 4 and ss == 0 and is0 == 8:
        ix = <const int64_t*>i0
        o4 = <uint32_t*>dp
        for j in range(c0, c1):
            v = ix[j]
            v += (v >> 63) & sz0
            (<uint32_t*>(sp + v * mul0))[0] = o4[j]
    elif mode == MODE_SCATTER and isz == 4:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<uint32_t*>(sp + v * mul0 + j * ss))[0] = (<const uint32_t*>(dp + j * ds))[0]
    elif mode == MODE_SCATTER:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<uint64_t*>(sp + v * mul0 + j * ss))[0] = (<const uint64_t*>(dp + j * ds))[0]
    elif fn == _RED[<int>RED_ADD][<int>PT_FLOAT32] and ds == 4 and ss == 0 and is0 == 8:
        ix = <const int64_t*>i0
        for j in range(c0, c1):
            v = ix[j]
            v += (v >> 63) & sz0
            (<float*>(sp + v * mul0))[0] += (<const float*>dp)[j]
    elif fn == _RED[<int>RED_ADD][<int>PT_FLOAT32]:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<float*>(sp + v * mul0 + j * ss))[0] += (<const float*>(dp + j * ds))[0]
    else:
        for j in range(c0, c1):
            v = (<const int64_t*>(i0 + j * is0))[0]
            if v < 0:
                v += sz0
            (<double*>(sp + v * mul0 + j * ss))[0] += (<const double*>(dp + j * ds))[0]
    return True


cdef void _run(const _iter_t* it, int mode, elem_fn fn, Py_ssize_t start,
               Py_ssize_t stop) noexcept nogil:
    """Elements [start, stop) of the iteration, in C order."""
    cdef int nd = it.nd, last = it.nd - 1, d, k
    cdef Py_ssize_t isz = it.isz
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef const char* ip[PT_MAX_DIMS]
    cdef char* dp = it.dense
    cdef char* sp = it.data
    cdef Py_ssize_t rem = start, q, j, c0, c1, off
    cdef Py_ssize_t n_in = it.shape[last]
    cdef Py_ssize_t ds = it.dstr[last], ss = it.sstr[last]
    cdef bint hoist = True                  # index operands constant along the inner dim
    cdef char* a
    cdef char* b
    cdef const char* i0
    cdef int64_t v
    cdef Py_ssize_t is0 = it.istr[0][last] if it.nidx else 0
    cdef Py_ssize_t sz0 = it.isize[0] if it.nidx else 0
    cdef Py_ssize_t mul0 = it.imul[0] if it.nidx else 0
    cdef int rop, rt = 0
    for k in range(it.nidx):
        ip[k] = it.iptr[k]
        if it.istr[k][last] != 0:
            hoist = False
    # unravel start; dp/sp/ip point at the row start (inner coordinate 0)
    for d in range(last, -1, -1):
        q = rem % it.shape[d]
        rem = rem // it.shape[d]
        coord[d] = q
        if d != last:
            dp += q * it.dstr[d]
            sp += q * it.sstr[d]
            for k in range(it.nidx):
                ip[k] += q * it.istr[k][d]
    c0 = coord[last]
    while start < stop:
        c1 = n_in
        if c1 - c0 > stop - start:
            c1 = c0 + (stop - start)
        start += c1 - c0
        if hoist:
            off = _offset_at(it, ip, 0, last)
            a = sp + off + c0 * ss
            b = dp + c0 * ds
            if mode == MODE_GATHER:
                if ds == isz and ss == isz:
                    memcpy(b, a, <size_t>((c1 - c0) * isz))
                else:
                    for j in range(c1 - c0):
                        _cp(b + j * ds, a + j * ss, isz)
            elif mode == MODE_SCATTER:
                if ds == isz and ss == isz:
                    memcpy(a, b, <size_t>((c1 - c0) * isz))
                elif ds == 0 and ss == isz and (isz == 4 or isz == 8):
                    _fill_run(a, b, c1 - c0, isz)      # (a number: index_fill_, x[i] = v)
                else:
                    for j in range(c1 - c0):
                        _cp(a + j * ss, b + j * ds, isz)
            elif fn == _RED[<int>RED_ADD][<int>PT_FLOAT32] and ds == 4 and ss == 4:
                _add_run(<float*>a, <const float*>b, c1 - c0)
            elif fn == _RED[<int>RED_ADD][<int>PT_FLOAT64] and ds == 8 and ss == 8:
                _add_run(<double*>a, <const double*>b, c1 - c0)
            elif ss == isz and (ds == isz or ds == 0) and _red_code(fn, &rt) >= 0:
                # (max/min/prod of floats, int64 sums: scatter_reduce's rows, its counts)
                rop = _red_code(fn, &rt)
                if rt == 0:
                    _red_run(rop, <float*>a, <const float*>b, c1 - c0, ds == 0)
                elif rt == 1:
                    _red_run(rop, <double*>a, <const double*>b, c1 - c0, ds == 0)
                else:
                    _red_run(rop, <int64_t*>a, <const int64_t*>b, c1 - c0, ds == 0)
            else:
                for j in range(c1 - c0):
                    fn(a + j * ss, b + j * ds)
        elif it.nidx == 1 and _row1_typed(mode, fn, isz, dp, sp, ip[0], is0, sz0, mul0,
                                          ds, ss, c0, c1):
            pass                            # (a copy of 4/8 bytes or a float sum, inlined)
        elif it.nidx == 1:
            # one index operand varying along the inner dim (gather, take, ...)
            i0 = ip[0]
            for j in range(c0, c1):
                v = (<const int64_t*>(i0 + j * is0))[0]
                if v < 0:
                    v += sz0
                a = sp + v * mul0 + j * ss
                b = dp + j * ds
                if mode == MODE_GATHER:
                    _cp(b, a, isz)
                elif mode == MODE_SCATTER:
                    _cp(a, b, isz)
                else:
                    fn(a, b)
        else:
            for j in range(c0, c1):
                off = _offset_at(it, ip, j, last)
                a = sp + off + j * ss
                b = dp + j * ds
                if mode == MODE_GATHER:
                    _cp(b, a, isz)
                elif mode == MODE_SCATTER:
                    _cp(a, b, isz)
                else:
                    fn(a, b)
        # next row
        c0 = 0
        d = last - 1
        while d >= 0:
            coord[d] += 1
            dp += it.dstr[d]
            sp += it.sstr[d]
            for k in range(it.nidx):
                ip[k] += it.istr[k][d]
            if coord[d] < it.shape[d]:
                break
            dp -= it.dstr[d] * it.shape[d]
            sp -= it.sstr[d] * it.shape[d]
            for k in range(it.nidx):
                ip[k] -= it.istr[k][d] * it.shape[d]
            coord[d] = 0
            d -= 1


cdef void _execute(const _iter_t* it, int mode, elem_fn fn) noexcept nogil:
    cdef Py_ssize_t nthreads = get_num_threads(), chunk, nchunks, c, s, e
    if it.numel == 0:
        return
    if mode != MODE_GATHER or nthreads <= 1 or it.numel < parallel_grain():
        _run(it, mode, fn, 0, it.numel)
        return
    chunk = (it.numel + nthreads - 1) // nthreads
    nchunks = (it.numel + chunk - 1) // chunk
    for c in prange(nchunks, num_threads=nthreads, schedule='static'):
        s = c * chunk
        e = s + chunk
        if e > it.numel:
            e = it.numel
        _run(it, mode, fn, s, e)


cdef int _run_iter(_iter_t* it, int mode, elem_fn fn) except -1:
    """Merge the iteration's dims, then run the loop (without the GIL)."""
    _prepare(it)
    ptc_kernel_enter()
    with nogil:
        try:
            _execute(it, mode, fn)
        finally:
            ptc_kernel_exit()
    return 0


cdef _iter_t* _new_iter(int nd, int nidx, Py_ssize_t isz, char* dense,
                       char* data) except NULL:
    """A scratch iterator (freed by the caller) with its operands and counts set."""
    cdef _iter_t* it = <_iter_t*>ptc_scratch_malloc(sizeof(_iter_t))
    if it == NULL:
        raise MemoryError("index kernel: out of memory for the index iterator")
    it.nd = nd
    it.nidx = nidx
    it.isz = isz
    it.dense = dense
    it.data = data
    return it


def indexed(int mode, int op, _TensorBase dense, dense_strides, _TensorBase data,
            data_strides, shape, list indices, list index_strides, sizes, muls):
    """The indexed loop (see the module docstring).

    ``mode``: 0 gather (dense <- data[idx]), 1 scatter (data[idx] <- dense),
    2 reduce (data[idx] = op(data[idx], dense)) with ``op`` one of
    ``REDUCTIONS``' values.  ``shape`` is the iteration space; the stride
    arguments are in elements over it; ``indices`` are int64 tensors, all
    values already checked against ``sizes``; ``muls`` are the element
    strides in ``data`` of the dims they index.  ``dense`` and ``data`` have
    the same dtype."""
    cdef _iter_t* it
    cdef int nd = len(shape), nidx = len(indices), i, k
    cdef Py_ssize_t isz = data._dtype.itemsize, n = 1
    cdef elem_fn fn = NULL
    cdef _TensorBase ix
    if nd > PT_MAX_DIMS or nidx > PT_MAX_DIMS:
        raise IndexError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    if dense._dtype.num != data._dtype.num:
        raise TypeError("indexed: dense and data operands must have the same dtype")
    if mode == MODE_REDUCE:
        if op < 0 or op >= RED_NUM:
            raise ValueError(f"indexed: unknown reduction {op}")
        fn = _RED[op][data._dtype.num]
        if fn == NULL:
            raise NotImplementedError(f"indexed reduction not implemented for '{data._dtype._legacy}'")
    elif mode != MODE_GATHER and mode != MODE_SCATTER:
        raise ValueError(f"indexed: unknown mode {mode}")
    it = _new_iter(nd, nidx, isz, dense._ptr(), data._ptr())
    try:
        for i in range(nd):
            it.shape[i] = shape[i]
            n *= it.shape[i]
            it.dstr[i] = <Py_ssize_t>dense_strides[i] * isz
            it.sstr[i] = <Py_ssize_t>data_strides[i] * isz
        it.numel = n
        for k in range(nidx):
            ix = <_TensorBase?>indices[k]
            if ix._dtype.num != PT_INT64:
                raise TypeError("indexed: index operands must be int64")
            it.iptr[k] = ix._ptr()
            st = index_strides[k]
            for i in range(nd):
                it.istr[k][i] = <Py_ssize_t>st[i] * 8
            it.isize[k] = sizes[k]
            it.imul[k] = <Py_ssize_t>muls[k] * isz
        _run_iter(it, mode, fn)
    finally:
        free(it)


# --------------------------------------------------------------------------
# index validation
# --------------------------------------------------------------------------
cdef extern from "ptc_int_minmax.h" nogil:
    void ptc_minmax_i64(const int64_t* p, Py_ssize_t n, int64_t* lo, int64_t* hi)


cdef bint _walk_check(const char* p, int nd, const Py_ssize_t* shape, const Py_ssize_t* st,
                      int64_t lo, int64_t hi, int64_t* bad) noexcept nogil:
    """True (and *bad set) at the first int64 outside [lo, hi)."""
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef Py_ssize_t j, n_in, s_in
    cdef int d, last
    cdef int64_t v, vlo, vhi
    cdef bint scan
    if nd == 0:
        v = (<const int64_t*>p)[0]
        if v < lo or v >= hi:
            bad[0] = v
            return True
        return False
    for d in range(nd):
        if shape[d] == 0:
            return False
        coord[d] = 0
    last = nd - 1
    n_in = shape[last]
    s_in = st[last] * 8
    while True:
        if s_in == 8 and n_in > 0:
            # a contiguous run: its min and max first (vectorised), the scan
            # for the first bad value only when one lies outside
            ptc_minmax_i64(<const int64_t*>p, n_in, &vlo, &vhi)
            scan = vlo < lo or vhi >= hi
        else:
            scan = True
        if scan:
            for j in range(n_in):
                v = (<const int64_t*>(p + j * s_in))[0]
                if v < lo or v >= hi:
                    bad[0] = v
                    return True
        d = last - 1
        while d >= 0:
            coord[d] += 1
            p += st[d] * 8
            if coord[d] < shape[d]:
                break
            p -= st[d] * 8 * shape[d]
            coord[d] = 0
            d -= 1
        if d < 0:
            return False


def check_index(_TensorBase index, Py_ssize_t size, bint allow_negative):
    """The first value of the int64 tensor ``index`` outside [0, size)
    (or [-size, size) with ``allow_negative``), or None."""
    cdef int64_t bad = 0
    cdef bint found
    cdef int64_t lo = -size if allow_negative else 0
    if index._dtype.num != PT_INT64:
        raise TypeError("check_index: index must be int64")
    cdef const char* ip = index._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            found = _walk_check(ip, index._ndim, index._shape, index._strides, lo, size, &bad)
        finally:
            ptc_kernel_exit()
    return bad if found else None


# --------------------------------------------------------------------------
# masked loops
# --------------------------------------------------------------------------
ctypedef struct _mask_t:
    int nd
    Py_ssize_t shape[PT_MAX_DIMS]
    Py_ssize_t dstr[PT_MAX_DIMS]            # data, bytes
    Py_ssize_t mstr[PT_MAX_DIMS]            # mask (bool), bytes


ctypedef fused _bits_t:
    uint16_t
    uint32_t
    uint64_t


# masked_fill's row of 2- or 4-byte elements on AVX-512BW: 64 mask bytes tested
# at once, the value written by masked stores of W lanes (only the selected
# lanes are touched); the compiled select loop below ran ~0.35 ns per element
# (4-byte), bfloat16's attention mask fill 141 us against torch's 136 per
# (12, 4, 64, 64) before it had this copy.
cdef extern from *:
    """
    #include <stdint.h>
    #include <stddef.h>
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define PTCI_FILL_ROW(NAME, T, SET, STORE, W, MT)                                  \\
    __attribute__((target("avx512f,avx512vl,avx512bw,popcnt"))) static ptrdiff_t       \\
    NAME(T* d, const uint8_t* m, ptrdiff_t n, T v) {                                   \\
        const __m512i vv = SET(v);                                                     \\
        ptrdiff_t j = 0, c = 0;                                                        \\
        for (; j + 64 <= n; j += 64) {                                                 \\
            __m512i mb = _mm512_loadu_si512((const void*)(m + j));                     \\
            __mmask64 k = _mm512_test_epi8_mask(mb, mb);                               \\
            if (!k) continue;                                                          \\
            c += _mm_popcnt_u64(k);                                                    \\
            for (int s = 0; s < 64; s += W)                                            \\
                STORE(d + j + s, (MT)(k >> s), vv);                                    \\
        }                                                                              \\
        for (; j < n; j++) { if (m[j]) { d[j] = v; c++; } }                            \\
        return c;                                                                      \\
    }
    #define PTCI_SET32(v) _mm512_set1_epi32((int)(v))
    #define PTCI_SET16(v) _mm512_set1_epi16((short)(v))
    PTCI_FILL_ROW(ptci_fill_row32_avx512, uint32_t, PTCI_SET32, _mm512_mask_storeu_epi32, 16, __mmask16)
    PTCI_FILL_ROW(ptci_fill_row16_avx512, uint16_t, PTCI_SET16, _mm512_mask_storeu_epi16, 32, __mmask32)
    static int ptci_fill512(void) {
        static int ok = -1;
        if (ok < 0) { __builtin_cpu_init();
                      ok = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) && __builtin_cpu_supports("avx512bw"); }
        return ok;
    }
    #else
    static ptrdiff_t ptci_fill_row32_avx512(uint32_t* d, const uint8_t* m, ptrdiff_t n,
                                            uint32_t v) { (void)d; (void)m; (void)n; (void)v; return 0; }
    static ptrdiff_t ptci_fill_row16_avx512(uint16_t* d, const uint8_t* m, ptrdiff_t n,
                                            uint16_t v) { (void)d; (void)m; (void)n; (void)v; return 0; }
    static int ptci_fill512(void) { return 0; }
    #endif
    """
    Py_ssize_t ptci_fill_row32_avx512(uint32_t* d, const uint8_t* m, Py_ssize_t n,
                                      uint32_t v) nogil
    Py_ssize_t ptci_fill_row16_avx512(uint16_t* d, const uint8_t* m, Py_ssize_t n,
                                      uint16_t v) nogil
    int ptci_fill512() nogil


cdef inline Py_ssize_t _fill_row(_bits_t* d, const uint8_t* m, Py_ssize_t n,
                                 _bits_t v) noexcept nogil:
    """d[j] = v where m[j], branch-free; returns the number of set m[j]."""
    cdef Py_ssize_t j, c = 0
    if _bits_t is uint32_t:
        if ptci_fill512():
            return ptci_fill_row32_avx512(d, m, n, v)
    if _bits_t is uint16_t:
        if ptci_fill512():
            return ptci_fill_row16_avx512(d, m, n, v)
    for j in range(n):
        d[j] = v if m[j] else d[j]
        c += m[j] != 0
    return c


cdef inline Py_ssize_t _compress_row(_bits_t* dst, const _bits_t* src, const uint8_t* m,
                                     Py_ssize_t n, Py_ssize_t cnt, Py_ssize_t cap) noexcept nogil:
    """dst[cnt++] = src[j] where m[j], for a contiguous row and mask row, without a
    branch on the mask (a random mask mispredicts one branch per element): every
    element is stored at dst[cnt] and cnt advances only for set ones; past ``cap``
    (dense full, so no set element remains) the stores go to a scratch slot."""
    cdef _bits_t scratch
    cdef _bits_t* tgt
    cdef Py_ssize_t j
    for j in range(n):
        tgt = dst + cnt if cnt < cap else &scratch
        tgt[0] = src[j]
        cnt += m[j] != 0
    return cnt


cdef inline Py_ssize_t _count_row(const uint8_t* m, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j, c = 0
    for j in range(n):
        c += m[j] != 0
    return c


cdef Py_ssize_t _mask_run(const _mask_t* m, int mode, char* data, const char* mask,
                          char* dense, Py_ssize_t isz, bint count_only,
                          Py_ssize_t cap) noexcept nogil:
    """Walk the broadcast space; returns the number of set mask elements seen."""
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef int nd = m.nd, last = m.nd - 1, d
    cdef Py_ssize_t j = 0, n_in, ds, ms, cnt = 0
    cdef bint fast
    cdef uint16_t v16 = 0
    cdef uint32_t v32 = 0
    cdef uint64_t v64 = 0
    for d in range(nd):
        if m.shape[d] == 0:
            return 0
        coord[d] = 0
    n_in = m.shape[last]
    ds = m.dstr[last]
    ms = m.mstr[last]
    fast = (mode == MASK_FILL and not count_only and ms == 1 and ds == isz
            and (isz == 2 or isz == 4 or isz == 8))
    if fast:
        if isz == 2:
            memcpy(&v16, dense, 2)
        elif isz == 4:
            memcpy(&v32, dense, 4)
        else:
            memcpy(&v64, dense, 8)
    cdef int row = 0
    if ms == 1 and count_only:
        row = 1
    elif ms == 1 and mode == MASK_COMPRESS and ds == isz and (isz == 2 or isz == 4 or isz == 8):
        row = 2
    while True:
        if fast:
            # a fill along a contiguous row and mask row (attention's causal
            # masked_fill): branch-free selects on the bit patterns
            if isz == 2:
                cnt += _fill_row(<uint16_t*>data, <const uint8_t*>mask, n_in, v16)
            elif isz == 4:
                cnt += _fill_row(<uint32_t*>data, <const uint8_t*>mask, n_in, v32)
            else:
                cnt += _fill_row(<uint64_t*>data, <const uint8_t*>mask, n_in, v64)
            j = n_in
        elif row == 1:
            cnt += _count_row(<const uint8_t*>mask, n_in)
            j = n_in
        elif row == 2:
            # x[mask] of contiguous rows: branch-free compaction
            if isz == 2:
                cnt = _compress_row(<uint16_t*>dense, <const uint16_t*>data,
                                    <const uint8_t*>mask, n_in, cnt, cap)
            elif isz == 4:
                cnt = _compress_row(<uint32_t*>dense, <const uint32_t*>data,
                                    <const uint8_t*>mask, n_in, cnt, cap)
            else:
                cnt = _compress_row(<uint64_t*>dense, <const uint64_t*>data,
                                    <const uint8_t*>mask, n_in, cnt, cap)
            j = n_in
        for j in range(j if fast or row else 0, n_in):
            if mask[j * ms] == 0:
                continue
            if not count_only and (mode == MASK_FILL or cnt < cap):
                if mode == MASK_COMPRESS:
                    _cp(dense + cnt * isz, data + j * ds, isz)
                elif mode == MASK_EXPAND:
                    _cp(data + j * ds, dense + cnt * isz, isz)
                else:
                    _cp(data + j * ds, dense, isz)
            cnt += 1
        d = last - 1
        while d >= 0:
            coord[d] += 1
            data += m.dstr[d]
            mask += m.mstr[d]
            if coord[d] < m.shape[d]:
                break
            data -= m.dstr[d] * m.shape[d]
            mask -= m.mstr[d] * m.shape[d]
            coord[d] = 0
            d -= 1
        if d < 0:
            return cnt


cdef int _mask_setup(_mask_t* m, shape, data_strides, mask_strides, Py_ssize_t isz) except -1:
    cdef int nd = len(shape), i
    if nd > PT_MAX_DIMS:
        raise IndexError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    m.nd = nd if nd > 0 else 1
    m.shape[0] = 1
    m.dstr[0] = 0
    m.mstr[0] = 0
    for i in range(nd):
        m.shape[i] = shape[i]
        m.dstr[i] = <Py_ssize_t>data_strides[i] * isz
        m.mstr[i] = mask_strides[i]
    return 0


def masked(int mode, _TensorBase data, data_strides, _TensorBase mask, mask_strides, shape,
           _TensorBase dense):
    """Masked loop over ``shape`` (strides in elements; mask is bool).

    mode 0 compress: dense[k++] = data[p] where mask[p] (dense contiguous);
    mode 1 expand: data[p] = dense[k++] where mask[p] (dense contiguous);
    mode 2 fill: data[p] = dense[0].  Compress/expand stop moving elements
    at dense's size.  Returns the number of set mask elements."""
    cdef _mask_t m
    cdef Py_ssize_t cnt
    if mask._dtype.num != PT_BOOL or dense._dtype.num != data._dtype.num:
        raise TypeError("masked: bad operand dtypes")
    if mode < MASK_COMPRESS or mode > MASK_FILL:
        raise ValueError(f"masked: unknown mode {mode}")
    cdef char* dp = data._ptr()
    cdef const char* mp = mask._ptr()
    cdef char* bp = dense._ptr()
    cdef Py_ssize_t isz = data._dtype.itemsize
    _mask_setup(&m, shape, data_strides, mask_strides, isz)
    ptc_kernel_enter()
    with nogil:
        try:
            cnt = _mask_run(&m, mode, dp, mp, bp, isz, False, dense._numel)
        finally:
            ptc_kernel_exit()
    return cnt


def masked_count(_TensorBase mask, mask_strides, shape):
    """Number of set elements of the bool tensor ``mask`` seen over ``shape``."""
    cdef _mask_t m
    cdef Py_ssize_t cnt
    if mask._dtype.num != PT_BOOL:
        raise TypeError("masked_count: mask must be bool")
    cdef const char* mp = mask._ptr()
    _mask_setup(&m, shape, [0] * len(shape), mask_strides, 1)
    ptc_kernel_enter()
    with nogil:
        try:
            cnt = _mask_run(&m, MASK_COMPRESS, NULL, mp, NULL, 1, True, 0)
        finally:
            ptc_kernel_exit()
    return cnt


def nonzero(_TensorBase mask not None, _TensorBase out not None):
    """Coordinates of the set elements of the bool tensor ``mask`` into the
    int64 tensor ``out`` of shape (count, mask.ndim) laid out column-major,
    strides (1, count): torch's layout of nonzero's result."""
    cdef int nd = mask._ndim, d, last
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef const char* p = mask._ptr()
    cdef int64_t* o = <int64_t*>out._ptr()
    cdef Py_ssize_t j, n_in, s_in, row = 0, nrows
    if mask._dtype.num != PT_BOOL or out._dtype.num != PT_INT64 or out._ndim != 2 \
            or out._shape[1] != nd:
        raise TypeError("nonzero: bad operands")
    nrows = out._shape[0]
    if nrows and (out._strides[0] != 1 or (nd > 1 and out._strides[1] != nrows)):
        raise TypeError("nonzero: out must be column-major")
    if nd == 0 or mask._numel == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            last = nd - 1
            for d in range(nd):
                coord[d] = 0
            n_in = mask._shape[last]
            s_in = mask._strides[last]
            while True:
                for j in range(n_in):
                    if p[j * s_in] != 0 and row < nrows:
                        coord[last] = j
                        for d in range(nd):
                            o[d * nrows + row] = coord[d]
                        row += 1
                d = last - 1
                while d >= 0:
                    coord[d] += 1
                    p += mask._strides[d]
                    if coord[d] < mask._shape[d]:
                        break
                    p -= mask._strides[d] * mask._shape[d]
                    coord[d] = 0
                    d -= 1
                if d < 0:
                    break
        finally:
            ptc_kernel_exit()


# --------------------------------------------------------------------------
# cat / stack / flip through copy_cast
# --------------------------------------------------------------------------
def cat_into(_TensorBase out, list tensors, int dim, bint stack):
    """Copy each tensor into its slice of ``out`` along ``dim`` (cat) or into
    ``out.select(dim, i)`` (stack).  Shapes were checked by the caller; for
    cat, tensors that are legacy empty 1-D (shape (0,)) are skipped."""
    _cat_copy(out, tensors, dim, stack)


def cat_fast(seq, dim, bint stack):
    """``cat(seq, dim)`` (``stack``: ``stack(seq, dim)``) for the common case:
    ``seq`` a non-empty list or tuple of CPU tensors of one dtype and rank
    (>= 1 for cat) whose shapes match (except along ``dim`` for cat), ``dim``
    an int in range.  Anything else gives None: the caller's checks then
    raise PyTorch's errors or handle the case (promotion, legacy empty
    tensors, other devices)."""
    cdef Py_ssize_t n = len(seq), i, total = 0
    cdef int nd, ond, d, k
    cdef _TensorBase t, t0
    cdef Py_ssize_t shp[PT_MAX_DIMS]
    if n == 0 or type(dim) is not int:
        return None
    obj = seq[0]
    if not isinstance(obj, _TensorBase):
        return None
    t0 = <_TensorBase>obj
    nd = t0._ndim
    ond = nd + 1 if stack else nd
    if ond == 0 or ond > PT_MAX_DIMS or not (-ond <= dim < ond):
        return None
    d = dim % ond
    for i in range(n):
        obj = seq[i]
        if not isinstance(obj, _TensorBase):
            return None
        t = <_TensorBase>obj
        if t._dtype is not t0._dtype or t._ndim != nd or t._storage.device._type_code != 0:
            return None
        for k in range(nd):
            if t._shape[k] != t0._shape[k] and (stack or k != d):
                return None
        if not stack:
            total += t._shape[d]
    k = 0
    for i in range(ond):
        if stack and i == d:
            shp[i] = n
        else:
            shp[i] = t0._shape[k]
            k += 1
    if not stack:
        shp[d] = total
    cdef _TensorBase out = _empty_contig(t0._dtype, ond, shp, t0._storage.device, False)
    if out._numel:
        _cat_copy(out, seq, d, stack)
    return out


cdef int _cat_copy(_TensorBase out, seq, int dim, bint stack) except -1:
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    cdef Py_ssize_t shp[PT_MAX_DIMS]
    cdef Py_ssize_t off = 0, osz = out._dtype.itemsize
    cdef int i, k, nd, rc = 0
    cdef char* dst
    cdef const char* src
    cdef _TensorBase t
    for obj in seq:
        t = <_TensorBase?>obj
        if t._numel == 0:                   # nothing to copy (incl. legacy empty 1-D)
            if stack:
                off += 1
            elif t._ndim == out._ndim:
                off += t._shape[dim]
            continue
        nd = t._ndim
        k = 0
        if t._ndim != out._ndim - (1 if stack else 0):
            raise ValueError("cat_into: rank mismatch")
        if off + (1 if stack else t._shape[dim]) > out._shape[dim]:
            raise ValueError("cat_into: inputs exceed the output")
        for i in range(out._ndim):
            if stack and i == dim:
                continue
            if i != dim and t._shape[k] != out._shape[i]:
                raise ValueError("cat_into: shape mismatch")
            shp[k] = t._shape[k]
            dstr[k] = out._strides[i] * osz
            sstr[k] = t._strides[k] * t._dtype.itemsize
            k += 1
        dst = out._ptr() + off * out._strides[dim] * osz
        src = t._ptr()
        ptc_kernel_enter()
        with nogil:
            try:
                rc = copy_cast(dst, out._dtype.num, dstr, src, t._dtype.num, sstr, shp, nd)
            finally:
                ptc_kernel_exit()
        if rc != 0:
            raise ValueError("cat_into: copy failed")
        off += 1 if stack else t._shape[dim]
    return 0


def flip_into(_TensorBase out not None, _TensorBase src, list flip):
    """out = src flipped along the dims d with flip[d] true (same shape)."""
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    cdef int nd = src._ndim, i, rc = 0
    cdef char* dst = out._ptr()
    cdef Py_ssize_t osz = out._dtype.itemsize
    if out._ndim != nd or tuple(out.shape) != tuple(src.shape) or len(flip) != nd:
        raise ValueError("flip_into: shape mismatch")
    if src._numel == 0:
        return
    for i in range(nd):
        dstr[i] = out._strides[i] * osz
        sstr[i] = src._strides[i] * src._dtype.itemsize
        if flip[i]:
            dst += (src._shape[i] - 1) * dstr[i]
            dstr[i] = -dstr[i]
    cdef const char* sp = src._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            rc = copy_cast(dst, out._dtype.num, dstr, sp, src._dtype.num, sstr, src._shape, nd)
        finally:
            ptc_kernel_exit()
    if rc != 0:
        raise ValueError("flip_into: copy failed")


# --------------------------------------------------------------------------
# small kernels
# --------------------------------------------------------------------------
def tri_zero(_TensorBase t, Py_ssize_t k, bint upper):
    """In place: zero what tril (upper=False: j > i + k) or triu (upper=True:
    j < i + k) removes, over the last two dims of ``t`` (ndim >= 2)."""
    cdef int nd = t._ndim, d
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef Py_ssize_t R, C, sr, sc, isz = t._dtype.itemsize, i, j, j0, j1
    cdef char* p = t._ptr()
    cdef char* row
    if nd < 2:
        raise ValueError("tri_zero: need >= 2 dims")
    if t._numel == 0:
        return
    R = t._shape[nd - 2]
    C = t._shape[nd - 1]
    sr = t._strides[nd - 2] * isz
    sc = t._strides[nd - 1] * isz
    ptc_kernel_enter()
    with nogil:
        try:
            for d in range(nd - 2):
                coord[d] = 0
            while True:
                for i in range(R):
                    if upper:
                        j0 = 0
                        j1 = i + k
                        if j1 > C:
                            j1 = C
                    else:
                        j0 = i + k + 1
                        if j0 < 0:
                            j0 = 0
                        j1 = C
                    if j1 <= j0:
                        continue
                    row = p + i * sr
                    if sc == isz:
                        memset(row + j0 * isz, 0, <size_t>((j1 - j0) * isz))
                    else:
                        for j in range(j0, j1):
                            memset(row + j * sc, 0, <size_t>isz)
                d = nd - 3
                while d >= 0:
                    coord[d] += 1
                    p += t._strides[d] * isz
                    if coord[d] < t._shape[d]:
                        break
                    p -= t._strides[d] * isz * t._shape[d]
                    coord[d] = 0
                    d -= 1
                if d < 0:
                    break
        finally:
            ptc_kernel_exit()


def repeat_index(_TensorBase repeats not None, _TensorBase out not None):
    """out = [0]*repeats[0] + [1]*repeats[1] + ... (int64, contiguous; the
    caller checked repeats >= 0 and out's length = their sum)."""
    cdef const int64_t* r = <const int64_t*>repeats._ptr()
    cdef int64_t* o = <int64_t*>out._ptr()
    cdef Py_ssize_t n = repeats._numel, i, j, pos = 0, total = out._numel
    cdef Py_ssize_t rs = repeats._strides[0] if repeats._ndim else 0
    if repeats._dtype.num != PT_INT64 or out._dtype.num != PT_INT64 or not out._is_contig():
        raise TypeError("repeat_index: int64 operands expected")
    ptc_kernel_enter()
    with nogil:
        try:
            for i in range(n):
                for j in range(r[i * rs]):
                    if pos < total:
                        o[pos] = i
                    pos += 1
        finally:
            ptc_kernel_exit()


def trace_sum(_TensorBase src, _TensorBase out):
    """out (0-d) = sum of the main diagonal of the 2-D ``src``."""
    if src._ndim != 2 or out._numel != 1 or src._dtype.num == PT_BOOL:
        raise ValueError("trace_sum: 2-D non-bool source and one-element output expected")
    if out._dtype.num != (PT_INT64 if src._dtype._category == 1 else src._dtype.num):
        raise TypeError("trace_sum: output dtype must be int64 (integers) or the source's")
    if _SUM[src._dtype.num] == NULL:
        raise NotImplementedError(f"\"trace\" not implemented for '{src._dtype._legacy}'")
    _trace_into(src, out)


cdef int _trace_into(_TensorBase src, _TensorBase out) except -1:
    """The diagonal sum of the checked 2-D ``src`` into ``out``."""
    cdef Py_ssize_t n = min(src._shape[0], src._shape[1])
    cdef Py_ssize_t s = (src._strides[0] + src._strides[1]) * src._dtype.itemsize
    cdef sum_fn fn = _SUM[src._dtype.num]
    cdef const char* sp = src._ptr()
    cdef char* op = out._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            fn(sp, n, s, op)
        finally:
            ptc_kernel_exit()
    return 0



ctypedef fused _tri_t:
    int64_t
    int32_t


cdef void _tri_fill(_tri_t* r, _tri_t* c, Py_ssize_t n, Py_ssize_t first, Py_ssize_t last,
                    Py_ssize_t offset, Py_ssize_t col, bint upper) noexcept nogil:
    """Rows [first, last) of the triangle written from element 0 on, never
    past ``n`` elements."""
    cdef Py_ssize_t i, j, s, e, k = 0
    for i in range(first, last):
        if upper:
            s = i + offset
            s = 0 if s < 0 else (col if s > col else s)
            e = col
        else:
            s = 0
            e = i + offset + 1
            e = 0 if e < 0 else (col if e > col else e)
        if e - s > n - k:
            e = s + (n - k)
        for j in range(e - s):
            r[k + j] = <_tri_t>i
            c[k + j] = <_tri_t>(s + j)
        k += e - s


def tri_indices_fill(_TensorBase out not None, Py_ssize_t first, Py_ssize_t last,
                     Py_ssize_t offset, Py_ssize_t col, bint upper):
    """Fill the contiguous (2, N) ``out`` with the coordinates of the upper
    (``upper``) or lower triangle of a matrix of ``col`` columns, rows
    ``[first, last)`` (the rows with elements), row by row: ``out[0]`` the
    rows, ``out[1]`` the columns (``tril_indices``/``triu_indices``; the
    caller sized ``out`` from the same bounds; int32 or int64, torch's index
    types)."""
    cdef int num = out._dtype.num
    cdef Py_ssize_t n
    if out._ndim != 2 or out._shape[0] != 2 or not out._is_contig() \
            or out._storage.device._type_code != 0 or (num != PT_INT64 and num != PT_INT32):
        raise ValueError("tri_indices_fill: out must be a contiguous (2, N) int32/int64 CPU tensor")
    n = out._shape[1]
    cdef char* p = out._ptr()
    cdef Py_ssize_t isz = out._dtype.itemsize
    with nogil:
        if num == PT_INT64:
            _tri_fill(<int64_t*>p, <int64_t*>(p + n * isz), n, first, last, offset, col, upper)
        else:
            _tri_fill(<int32_t*>p, <int32_t*>(p + n * isz), n, first, last, offset, col, upper)


def one_hot_into(_TensorBase out not None, _TensorBase idx not None):
    """``out[i, idx[i]] = 1`` for the contiguous int64 ``idx`` (n values) and
    the contiguous zero-filled int64 ``out`` of n rows (``F.one_hot``; the
    caller checked the values).  Each value is checked against the row
    length again here: False, stopping there, at the first one outside."""
    cdef Py_ssize_t n = idx._numel, c, i
    cdef int64_t v
    if idx._dtype.num != PT_INT64 or out._dtype.num != PT_INT64 or not idx._is_contig() \
            or not out._is_contig() or idx._storage.device._type_code != 0 \
            or out._storage.device._type_code != 0 or out._ndim < 1 or n == 0 \
            or out._numel % n != 0:
        raise ValueError("one_hot_into: contiguous int64 CPU operands expected")
    c = out._numel // n
    cdef const int64_t* ip = <const int64_t*>idx._ptr()
    cdef int64_t* op = <int64_t*>out._ptr()
    with nogil:
        for i in range(n):
            v = ip[i]
            if v < 0 or v >= c:
                break
            op[i * c + v] = 1
    return i == n - 1 and 0 <= ip[n - 1] < c


def trace_fast(src):
    """``trace(src)`` of a float32/float64 CPU matrix (any strides) into a new
    0-d tensor; None for anything else (the caller's full path)."""
    if not isinstance(src, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>src
    cdef int num = t._dtype.num
    if t._ndim != 2 or (num != PT_FLOAT32 and num != PT_FLOAT64) \
            or t._storage.device._type_code != 0:
        return None
    cdef _TensorBase out = _empty_contig(t._dtype, 0, NULL, t._storage.device, False)
    _trace_into(t, out)
    return out

def div_count(_TensorBase data not None, _TensorBase counts not None):
    """data /= counts where counts > 0 (same shape; counts int64)."""
    cdef int nd = data._ndim, d
    cdef Py_ssize_t coord[PT_MAX_DIMS]
    cdef char* p = data._ptr()
    cdef const char* c = counts._ptr()
    cdef Py_ssize_t isz = data._dtype.itemsize
    cdef div_fn fn = _DIV[data._dtype.num]
    if counts._dtype.num != PT_INT64 or tuple(counts.shape) != tuple(data.shape):
        raise TypeError("div_count: int64 counts of data's shape expected")
    if fn == NULL:
        raise NotImplementedError(f"div_count not implemented for '{data._dtype._legacy}'")
    if data._numel == 0:
        return
    if nd == 0:
        fn(p, 0, <const int64_t*>c, 0, 1)
        return
    ptc_kernel_enter()
    with nogil:
        try:
            for d in range(nd):
                coord[d] = 0
            while True:
                fn(p, data._strides[nd - 1] * isz, <const int64_t*>c, counts._strides[nd - 1] * 8,
                   data._shape[nd - 1])
                d = nd - 2
                while d >= 0:
                    coord[d] += 1
                    p += data._strides[d] * isz
                    c += counts._strides[d] * 8
                    if coord[d] < data._shape[d]:
                        break
                    p -= data._strides[d] * isz * data._shape[d]
                    c -= counts._strides[d] * 8 * data._shape[d]
                    coord[d] = 0
                    d -= 1
                if d < 0:
                    break
        finally:
            ptc_kernel_exit()


def mod_index(_TensorBase index not None, Py_ssize_t size):
    """In place on a contiguous int64 tensor: v = v mod size (Python's sign
    rule, result in [0, size)); size > 0."""
    cdef int64_t* p = <int64_t*>index._ptr()
    cdef Py_ssize_t n = index._numel, i
    cdef int64_t v, m = size
    if index._dtype.num != PT_INT64 or not index._is_contig() or size <= 0:
        raise ValueError("mod_index: contiguous int64 tensor and positive size expected")
    ptc_kernel_enter()
    with nogil:
        try:
            for i in range(n):
                v = p[i] % m
                if v < 0:
                    v += m
                p[i] = v
        finally:
            ptc_kernel_exit()


# ---------------------------------------------------------------------------
# index_add along dim 0 of contiguous float rows (embedding backward)
# ---------------------------------------------------------------------------

ctypedef fused _rowf_t:
    float
    double


cdef void _add_rows(_rowf_t* dst, const _rowf_t* src, const int64_t* idx, Py_ssize_t n,
                    Py_ssize_t row, Py_ssize_t s0=-1, Py_ssize_t s1=1) noexcept nogil:
    """``dst[idx[i]] += src[i]`` in ``i`` order; ``src``'s strides (elements)
    ``s0`` (-1: ``row``), ``s1``."""
    cdef Py_ssize_t i, j
    cdef _rowf_t* d
    cdef const _rowf_t* s
    if s0 < 0:
        s0 = row
    for i in range(n):
        d = dst + idx[i] * row
        s = src + i * s0
        if s1 == 1:
            for j in range(row):
                d[j] = d[j] + s[j]
        elif s1 == 0:
            for j in range(row):
                d[j] = d[j] + s[0]
        else:
            for j in range(row):
                d[j] = d[j] + s[j * s1]


def index_add_rows(_TensorBase dst, _TensorBase idx, _TensorBase src):
    """``dst[idx[i]] += src[i]`` along dim 0: contiguous float32/float64
    ``dst`` and ``src`` (same dtype and trailing sizes), contiguous int64
    ``idx`` (the caller raises for indices out of range; here they only make
    it decline).  The rows are added in ``i`` order, as the general indexed
    kernel adds them (the same bits).  False, nothing written, when it does
    not apply."""
    cdef int num = dst._dtype.num
    cdef Py_ssize_t n, row, k
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or src._dtype.num != num \
            or idx._dtype.num != PT_INT64 or dst._ndim < 1 or src._ndim != dst._ndim \
            or idx._ndim != 1 or not dst._is_contig() or not src._is_contig() \
            or not idx._is_contig() or dst._storage.device._type_code != 0 \
            or src._storage.device._type_code != 0:
        return False
    n = idx._shape[0]
    if src._shape[0] != n:
        return False
    row = 1
    for k in range(1, dst._ndim):
        if src._shape[k] != dst._shape[k]:
            return False
        row *= dst._shape[k]
    cdef char* pd = dst._ptr()
    cdef char* ps = src._ptr()
    cdef const int64_t* pi = <const int64_t*>idx._ptr()
    cdef Py_ssize_t rows = dst._shape[0]
    for k in range(n):
        if pi[k] < 0 or pi[k] >= rows:
            return False
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _add_rows(<float*>pd, <const float*>ps, pi, n, row)
            else:
                _add_rows(<double*>pd, <const double*>ps, pi, n, row)
        finally:
            ptc_kernel_exit()
    return True


cdef enum:
    _ISEL_FAST_MAX = 1 << 18        # result bytes index_select_fast copies on one thread


def index_select_fast(x, dim, index):
    """``index_select(x, dim, index)`` for the common case: ``x`` a
    contiguous CPU tensor with >= 1 dim (not of the limited unsigned types),
    ``dim`` an int in range, ``index`` a contiguous 1-D int64 CPU tensor
    whose entries all lie in ``[0, x.size(dim))``: rows of ``x`` copied by
    ``memcpy``, over the team's threads past 256 KiB of result (team_for).
    Anything else gives None: the front-end's checks then raise PyTorch's
    errors or handle the case."""
    if not isinstance(x, _TensorBase) or not isinstance(index, _TensorBase) or type(dim) is not int:
        return None
    cdef _TensorBase t = <_TensorBase>x, ix = <_TensorBase>index
    cdef int nd = t._ndim, d, i, num = t._dtype.num
    if nd == 0 or not (-nd <= dim < nd) or t._storage.device._type_code != 0 \
            or ix._storage.device._type_code != 0 or ix._dtype.num != PT_INT64 or ix._ndim != 1 \
            or not ix._is_contig() or not t._is_contig() \
            or num == PT_UINT16 or num == PT_UINT32 or num == PT_UINT64:
        return None
    d = dim % nd
    cdef Py_ssize_t n = ix._shape[0], size = t._shape[d], outer = 1, inner, j, o, v
    cdef const int64_t* pi = <const int64_t*>ix._ptr()
    for j in range(n):
        v = pi[j]
        if v < 0 or v >= size:
            return None
    inner = t._dtype.itemsize
    for i in range(nd):
        if i < d:
            outer *= t._shape[i]
        elif i > d:
            inner *= t._shape[i]
    # past the one-thread size, rows split over the team (the general
    # iterator's copies are the same bytes, at ~1.3x the time: its per-row
    # bookkeeping around each memcpy)
    cdef Py_ssize_t rows = outer * n, r
    cdef int nt = 1
    if rows * inner > _ISEL_FAST_MAX:
        nt = team_for(rows * (inner // t._dtype.itemsize))
    cdef Py_ssize_t shp[PT_MAX_DIMS]
    for i in range(nd):
        shp[i] = t._shape[i]
    shp[d] = n
    cdef _TensorBase out = _empty_contig(t._dtype, nd, shp, t._storage.device, False)
    cdef char* dst = out._ptr()
    cdef const char* src = t._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if nt > 1:
                for r in prange(rows, num_threads=nt, schedule='static'):
                    _isel_row(dst, src, pi, r, n, size, inner)
            elif inner == 4:            # single elements of 4 or 8 bytes: typed copies
                for o in range(outer):
                    for j in range(n):
                        (<uint32_t*>dst)[o * n + j] = (<const uint32_t*>src)[o * size + pi[j]]
            elif inner == 8:
                for o in range(outer):
                    for j in range(n):
                        (<uint64_t*>dst)[o * n + j] = (<const uint64_t*>src)[o * size + pi[j]]
            else:
                for o in range(outer):
                    for j in range(n):
                        memcpy(dst + (o * n + j) * inner, src + (o * size + pi[j]) * inner,
                               <size_t>inner)
        finally:
            ptc_kernel_exit()
    return out


cdef inline void _isel_row(char* dst, const char* src, const int64_t* pi, Py_ssize_t r,
                           Py_ssize_t n, Py_ssize_t size, Py_ssize_t inner) noexcept nogil:
    """Row ``r`` (= o * n + j) of index_select_fast's result."""
    cdef Py_ssize_t o = r // n
    memcpy(dst + r * inner, src + (o * size + pi[r - o * n]) * inner, <size_t>inner)


def index_tensors_fast(x, tuple items):
    """``x[items]`` for a host tensor ``x`` and a tuple of at most ``x.dim()``
    items each a full slice (``:``) or an int64 host index tensor of >= 1 dim,
    at least one of them a tensor: the general path's result (PyTorch's
    advanced indexing: the broadcast index shape where the indexed dims were
    when they are adjacent, first otherwise) computed here in one call.
    Anything else -- other items, indices that do not broadcast, an index out
    of range, an empty indexed dim -- gives None: the front-end's general
    path then raises PyTorch's errors or handles the case."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x, ix
    cdef int nd = t._ndim, n = len(items), d, i, k, nb = 0, off, p0 = -1, plast = -1, nidx = 0
    cdef int first, ond, num = t._dtype.num
    if n == 0 or n > nd or t._storage.device._type_code != 0 \
            or num == PT_UINT16 or num == PT_UINT32 or num == PT_UINT64:
        return None
    cdef list idx = []
    cdef int pos[PT_MAX_DIMS]
    cdef Py_ssize_t bsh[PT_MAX_DIMS]
    cdef Py_ssize_t s
    cdef bint adjacent = True
    for d in range(n):
        o = items[d]
        if type(o) is slice:
            if (<slice>o).start is not None or (<slice>o).stop is not None \
                    or (<slice>o).step is not None:
                return None
            continue
        if not isinstance(o, _TensorBase):
            return None
        ix = <_TensorBase>o
        if ix._dtype.num != PT_INT64 or ix._ndim < 1 or ix._storage.device._type_code != 0:
            return None
        if ix._ndim > nb:
            nb = ix._ndim
        if p0 >= 0 and d != plast + 1:
            adjacent = False
        if p0 < 0:
            p0 = d
        plast = d
        if nidx >= PT_MAX_DIMS:
            return None
        pos[nidx] = d
        idx.append(ix)
        nidx += 1
    if nidx == 0:
        return None
    ond = nd - nidx + nb
    if ond > PT_MAX_DIMS:
        return None
    # the broadcast shape of the indices (right-aligned)
    for i in range(nb):
        bsh[i] = 1
    for k in range(nidx):
        ix = <_TensorBase>idx[k]
        off = nb - ix._ndim
        for i in range(ix._ndim):
            s = ix._shape[i]
            if bsh[off + i] == 1:
                bsh[off + i] = s
            elif s != 1 and s != bsh[off + i]:
                return None
    cdef bint empty_b = False
    for i in range(nb):
        if bsh[i] == 0:
            empty_b = True
    for k in range(nidx):
        if t._shape[pos[k]] == 0 and not empty_b:
            return None
    # the result's shape and, over it, the strides (elements) of x and of each index
    cdef Py_ssize_t shp[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    first = p0 if adjacent else 0
    i = 0
    if adjacent:
        for d in range(p0):
            shp[i] = t._shape[d]; sstr[i] = t._strides[d]; i += 1
        for k in range(nb):
            shp[i] = bsh[k]; sstr[i] = 0; i += 1
        for d in range(plast + 1, nd):
            shp[i] = t._shape[d]; sstr[i] = t._strides[d]; i += 1
    else:
        for k in range(nb):
            shp[i] = bsh[k]; sstr[i] = 0; i += 1
        k = 0
        for d in range(nd):
            if k < nidx and pos[k] == d:
                k += 1
                continue
            shp[i] = t._shape[d]; sstr[i] = t._strides[d]; i += 1
    cdef _TensorBase out = _empty_contig(t._dtype, ond, shp, t._storage.device, False)
    cdef Py_ssize_t numel = 1
    for i in range(ond):
        numel *= shp[i]
    if numel == 0:
        return out
    cdef int64_t bad = 0
    for k in range(nidx):
        ix = <_TensorBase>idx[k]
        s = t._shape[pos[k]]
        if _walk_check(ix._ptr(), ix._ndim, ix._shape, ix._strides, -s, s, &bad):
            return None
    cdef Py_ssize_t isz = t._dtype.itemsize, acc
    cdef _iter_t* it = _new_iter(ond, nidx, isz, out._ptr(), t._ptr())
    try:
        it.numel = numel
        acc = isz
        for i in range(ond - 1, -1, -1):
            it.shape[i] = shp[i]
            it.dstr[i] = acc
            acc *= shp[i]
            it.sstr[i] = sstr[i] * isz
        for k in range(nidx):
            ix = <_TensorBase>idx[k]
            it.iptr[k] = ix._ptr()
            for i in range(ond):
                it.istr[k][i] = 0
            off = nb - ix._ndim
            for i in range(ix._ndim):
                if ix._shape[i] != 1 or bsh[off + i] == 1:
                    it.istr[k][first + off + i] = ix._strides[i] * 8
            it.isize[k] = t._shape[pos[k]]
            it.imul[k] = t._strides[pos[k]] * isz
        _run_iter(it, MODE_GATHER, NULL)
    finally:
        free(it)
    return out


# --------------------------------------------------------------------------
# gather / scatter along one dim: the common case checked here, then the
# indexed loop above with the arguments the front-ends' general path builds
# --------------------------------------------------------------------------
cdef int _along_dim_fits(_TensorBase data, int d, _TensorBase ix, _TensorBase dense) except -1:
    """1 when ``data`` (indexed along dim ``d``) and ``ix`` (and ``dense``
    unless NULL-ish None) take the fast path: host memory, one of the twelve
    standard dtypes, int64 index, one ndim >= 1 for all, a non-empty index no
    larger than ``data`` outside ``d`` (and no larger than ``dense``
    anywhere), every index value in ``[0, data.size(d))``; else 0."""
    cdef int nd = data._ndim, k, num = data._dtype.num
    cdef int64_t bad = 0
    if nd == 0 or ix._ndim != nd or ix._dtype.num != PT_INT64 or num > PT_COMPLEX128 \
            or data._storage.device._type_code != 0 or ix._storage.device._type_code != 0 \
            or ix._numel == 0:
        return 0
    for k in range(nd):
        if k != d and ix._shape[k] > data._shape[k]:
            return 0
    if dense is not None:
        if dense._ndim != nd or dense._dtype.num != num \
                or dense._storage.device._type_code != 0:
            return 0
        for k in range(nd):
            if ix._shape[k] > dense._shape[k]:
                return 0
    if _walk_check(ix._ptr(), nd, ix._shape, ix._strides, 0, data._shape[d], &bad):
        return 0
    return 1


cdef int _fill_along_dim(_iter_t* it, _TensorBase dense, _TensorBase data, int d,
                         _TensorBase ix, bint vector) except -1:
    """The iteration of ``_along_dim`` (ptcore/_ops/shape.py): over the
    index's shape (``vector``: over ``dense``'s, the 1-D index read along
    dim ``d``, as index_add's), ``dense`` at its own strides, ``data`` at
    its strides with dim ``d`` taken from the index.  The data pointers are
    taken here: a tensor whose storage shrank below its extent raises
    (``_ptr``) before any element is touched."""
    cdef _TensorBase sh = dense if vector else ix
    cdef int nd = sh._ndim, i
    cdef Py_ssize_t isz = data._dtype.itemsize
    it.nd = nd
    it.nidx = 1
    it.isz = isz
    it.dense = dense._ptr()
    it.data = data._ptr()
    it.numel = sh._numel
    for i in range(nd):
        it.shape[i] = sh._shape[i]
        it.dstr[i] = dense._strides[i] * isz
        it.sstr[i] = 0 if i == d else data._strides[i] * isz
        if vector:
            it.istr[0][i] = ix._strides[0] * 8 if i == d else 0
        else:
            it.istr[0][i] = ix._strides[i] * 8
    it.iptr[0] = ix._ptr()
    it.isize[0] = data._shape[d]
    it.imul[0] = data._strides[d] * isz
    return 0


cdef int _run_along_dim(_TensorBase dense, _TensorBase data, int d, _TensorBase ix, int mode,
                        elem_fn fn, bint vector=False) except -1:
    cdef _iter_t* it = <_iter_t*>ptc_scratch_malloc(sizeof(_iter_t))     # (64 x 64 index strides)
    if it == NULL:
        raise MemoryError("index kernel: out of memory for the index iterator")
    try:
        _fill_along_dim(it, dense, data, d, ix, vector)
        _run_iter(it, mode, fn)
    finally:
        free(it)
    return 0


def gather_fast(x, dim, index):
    """``gather(x, dim, index)`` for the common case (see ``_along_dim_fits``;
    ``dim`` an int in range): a new contiguous tensor of ``index``'s shape
    filled by the indexed loop, as the front-end's general path fills it.
    None for anything else: the front-end then checks, raises PyTorch's
    errors or handles the case."""
    if not isinstance(x, _TensorBase) or not isinstance(index, _TensorBase) or type(dim) is not int:
        return None
    cdef _TensorBase t = <_TensorBase>x, ix = <_TensorBase>index
    cdef int nd = t._ndim
    if nd == 0 or not (-nd <= dim < nd):
        return None
    cdef int d = dim % nd
    if not _along_dim_fits(t, d, ix, None):
        return None
    cdef _TensorBase out = _empty_contig(t._dtype, nd, ix._shape, t._storage.device, False)
    _run_along_dim(out, t, d, ix, MODE_GATHER, NULL)
    return out


def scatter_fast(target, dim, index, src, bint add):
    """In place: ``target`` at ``index`` along ``dim`` <- ``src`` (``add``:
    += ``src``, duplicates summed in index order) for the common case (see
    ``_along_dim_fits``; a contiguous ``target``, a ``src`` of its dtype in
    another storage, ``dim`` an int in range).  True when written; False,
    nothing written, for anything else (the front-end's general path).  The
    caller bumps ``target``'s version."""
    if not isinstance(target, _TensorBase) or not isinstance(index, _TensorBase) \
            or not isinstance(src, _TensorBase) or type(dim) is not int:
        return False
    cdef _TensorBase t = <_TensorBase>target, ix = <_TensorBase>index, s = <_TensorBase>src
    cdef int nd = t._ndim
    cdef elem_fn fn = NULL
    if nd == 0 or not (-nd <= dim < nd) or not t._is_contig() or s._storage is t._storage:
        return False
    if s._storage._data < t._storage._data + t._storage._nbytes \
            and t._storage._data < s._storage._data + s._storage._nbytes:
        return False        # (memory shared some other way: the general path's checks)
    cdef int d = dim % nd
    if not _along_dim_fits(t, d, ix, s):
        return False
    if add:
        fn = _RED[RED_ADD][t._dtype.num]
        if fn == NULL:
            return False
    _run_along_dim(s, t, d, ix, MODE_REDUCE if add else MODE_SCATTER, fn)
    return True


def index_add_fast(target, dim, index, src):
    """In place: ``target.select(dim, index[i]) += src.select(dim, i)`` (alpha
    1) for the common case: CPU operands, a contiguous ``target`` of a dtype
    with an add loop, a 1-D int64 ``index`` whose values all lie in
    ``[0, target.size(dim))``, ``src`` of ``target``'s dtype and ndim (>= 1)
    with ``index``'s length along ``dim`` and ``target``'s sizes elsewhere, in
    another storage; ``dim`` an int in range.  The indexed loop of the
    front-end's general path with its iteration (duplicates added in index
    order: the same bits).  True when written; False, nothing written, for
    anything else.  The caller bumps ``target``'s version."""
    if not isinstance(target, _TensorBase) or not isinstance(index, _TensorBase) \
            or not isinstance(src, _TensorBase) or type(dim) is not int:
        return False
    cdef _TensorBase t = <_TensorBase>target, ix = <_TensorBase>index, s = <_TensorBase>src
    cdef int nd = t._ndim, k, num = t._dtype.num
    cdef int64_t bad = 0
    if nd == 0 or not (-nd <= dim < nd) or not t._is_contig() or num > PT_COMPLEX128 \
            or s._ndim != nd or s._dtype.num != num or ix._ndim != 1 or ix._dtype.num != PT_INT64 \
            or t._storage.device._type_code != 0 or s._storage.device._type_code != 0 \
            or ix._storage.device._type_code != 0 or s._storage is t._storage or ix._numel == 0:
        return False
    if s._storage._data < t._storage._data + t._storage._nbytes \
            and t._storage._data < s._storage._data + s._storage._nbytes:
        return False
    cdef int d = dim % nd
    for k in range(nd):
        if s._shape[k] != (ix._shape[0] if k == d else t._shape[k]):
            return False
    cdef elem_fn fn = _RED[RED_ADD][num]
    if fn == NULL or _walk_check(ix._ptr(), 1, ix._shape, ix._strides, 0, t._shape[d], &bad):
        return False
    if d == 0 and nd == 2 and (num == PT_FLOAT32 or num == PT_FLOAT64) and ix._is_contig():
        # float rows (an embedding's or index_select's weight gradient, the
        # gradient often an expanded one): typed row adds, in index order as the
        # indexed loop adds them (the same bits)
        _add_rows_strided(t, ix, s)
        return True
    _run_along_dim(s, t, d, ix, MODE_REDUCE, fn, True)
    return True


cdef int _add_rows_strided(_TensorBase t, _TensorBase ix, _TensorBase s) except -1:
    cdef char* pd = t._ptr()
    cdef char* ps = s._ptr()
    cdef const int64_t* pi = <const int64_t*>ix._ptr()
    cdef Py_ssize_t n = ix._shape[0], row = t._shape[1], s0 = s._strides[0], s1 = s._strides[1]
    cdef int num = t._dtype.num
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _add_rows(<float*>pd, <const float*>ps, pi, n, row, s0, s1)
            else:
                _add_rows(<double*>pd, <const double*>ps, pi, n, row, s0, s1)
        finally:
            ptc_kernel_exit()
    return 0
