# cython: language_level=3
"""Driver for the elementwise kernels: the n-d iterator (``ew_apply``),
operand preparation (dtype conversion, broadcasting, Python scalars),
output allocation/validation (``out=``, in-place), and the fast paths behind
``Tensor.__add__`` and friends.

Dtype *decisions* (type promotion, int -> float for transcendental ops,
PyTorch's error cases) are made by the caller (``ptcore._ops.pointwise``);
this module executes them.
"""
cimport cython
from cython.parallel cimport prange
from libc.string cimport memset, memcpy
from libc.stdint cimport int64_t, uint16_t, uint64_t, uintptr_t
from libc.math cimport isfinite, fabs
from libc.float cimport FLT_MAX
from cpython.ref cimport Py_INCREF, Py_REFCNT
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.pycapsule cimport PyCapsule_GetPointer

from ptcore._ops.kernels._types cimport (PT_BOOL, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
                                 PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64,
                                 PT_COMPLEX128, PT_COMPLEX32, PT_UINT16, PT_UINT32, PT_UINT64,
                                 PT_FLOAT8_E4M3FN, PT_FLOAT8_E5M2, PT_FLOAT8_E5M2FNUZ, PT_NUM_TYPES,
                                 PT_MAX_DIMS)
from ptcore._ops.kernels._parallel cimport parallel_grain, team_for
from ptcore._ops.kernels._ew cimport (ew_extra, loop_t, unary_loop, binary_loop, ternary_loop,
                              unary_out, binary_out)
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, ptc_bump_version, dtype, Storage, dtype_from_num, _empty_contig, \
    _empty_strided_like
from ptcore._tensor cimport device as _Device
from ptcore._ops.kernels._copy cimport copy_cast
from ptcore import _tensor as _C
from ptcore._ops.kernels import _ew as _ew_mod

import operator as _operator

cdef extern from "ptc_stream.h" nogil:
    size_t ptc_stream_min_bytes()
    size_t ptc_stream_set_min_bytes(size_t)
    void ptc_stream_counted()
    long ptc_stream_runs()
    void ptc_stream_fence()


def _stream_min_bytes(size_t v):
    """Set the output size from which the elementwise loops use non-temporal
    stores (ptc_stream.h; 0: the machine's default again); returns the one
    in force before.  For the tests."""
    return ptc_stream_set_min_bytes(v)


def _stream_count():
    """How many elementwise outputs were written with non-temporal stores."""
    return ptc_stream_runs()

cdef dtype _F32 = dtype_from_num(PT_FLOAT32)
cdef dtype _C64 = dtype_from_num(PT_COMPLEX64)
cdef object _CPU = _C._to_device("cpu")
cdef double _INF = float("inf")

UNARY = {name: i for i, name in enumerate(_ew_mod.UNARY_OPS)}
BINARY = {name: i for i, name in enumerate(_ew_mod.BINARY_OPS)}
TERNARY = {name: i for i, name in enumerate(_ew_mod.TERNARY_OPS)}
cdef int _WHERE = TERNARY["where"]
cdef int _CLAMP = TERNARY["clamp"]
cdef int _LERP = TERNARY["lerp"]

# Operands that PyTorch's float16/bfloat16 kernels take as a float32 scalar
# when they are a Python number or a 0-d tensor (``original_scalar_value``):
# the multiplier/divisor of mul/div (all rounding modes) and lerp's weight.  Elsewhere a scalar is
# first rounded to the tensor's dtype.
cdef frozenset _F32_SCALAR_OPERANDS = frozenset(
    [(2, BINARY[n], 1) for n in ("mul", "div", "div_floor", "div_trunc")]
    + [(3, TERNARY["lerp"], 2)])

# What PyTorch's CPU kernels implement for complex32 (ComplexHalf); they run
# here in complex64 and round back.  Everything else raises NotImplementedError.
cdef frozenset _C32_OPS = frozenset(
    [(1, UNARY[n]) for n in ("neg", "abs", "sgn", "isnan", "isinf", "isfinite", "conj")]
    + [(2, BINARY[n]) for n in ("add", "add_alpha", "sub", "mul", "eq", "ne")]
    + [(3, TERNARY[n]) for n in ("where", "addcmul")])

# What PyTorch's CPU kernels implement for the limited unsigned types
# (uint16/32/64): ops whose result bits do not depend on signedness, so they
# run on the signed type of the same width.  Everything else raises
# NotImplementedError.
cdef frozenset _UINT_OPS = frozenset(
    [(1, UNARY[n]) for n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "floor",
                             "ceil", "trunc", "round", "nan_to_num", "conj")]
    + [(2, BINARY[n]) for n in ("mul", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor")]
    + [(3, TERNARY["where"])])
# What PyTorch's CPU kernels implement for the float8 types: they run here in float32 and
# round back (``where`` selects their bytes).  Everything else raises NotImplementedError.
cdef frozenset _F8_OPS = frozenset(
    [(1, UNARY[n]) for n in ("abs", "isnan", "conj")]
    + [(2, BINARY[n]) for n in ("mul", "eq", "ne")]
    + [(3, TERNARY["where"])])
# isinf/isfinite: only for float8_e5m2, the one float8 type with infinities
cdef frozenset _F8_INF_OPS = frozenset([(1, UNARY["isinf"]), (1, UNARY["isfinite"])])
cdef int _SIGNBIT = UNARY["signbit"]
cdef int _ISNAN = UNARY["isnan"]
cdef int _NEG = UNARY["neg"]
cdef int _ABS = UNARY["abs"]

cdef enum:
    MAXOP = 4
    TILE = 64


# ---------------------------------------------------------------------------
# iterator
# ---------------------------------------------------------------------------

cdef struct ew_iter:
    int nop
    int ndim
    Py_ssize_t shape[PT_MAX_DIMS]
    Py_ssize_t strides[MAXOP][PT_MAX_DIMS]
    char* ptrs[MAXOP]
    int itemsize[MAXOP]


cdef void _it_prepare(ew_iter* it) noexcept nogil:
    """Drop size-1 dims, order dims by the output's strides, coalesce."""
    cdef int nop = it.nop, nd = it.ndim, i, j, k, m = 0
    cdef Py_ssize_t tmp
    # drop size-1 dims
    for i in range(nd):
        if it.shape[i] != 1:
            it.shape[m] = it.shape[i]
            for k in range(nop):
                it.strides[k][m] = it.strides[k][i]
            m += 1
    nd = m
    # insertion sort: descending |output stride| (stable), ties by input strides
    for i in range(1, nd):
        j = i
        while j > 0 and _stride_less(it, j - 1, j):
            tmp = it.shape[j]; it.shape[j] = it.shape[j - 1]; it.shape[j - 1] = tmp
            for k in range(nop):
                tmp = it.strides[k][j]; it.strides[k][j] = it.strides[k][j - 1]; it.strides[k][j - 1] = tmp
            j -= 1
    # coalesce dim i into i+1 when every operand is contiguous across them
    m = 0
    if nd > 0:
        for i in range(1, nd):
            if _can_merge(it, m, i):
                for k in range(nop):
                    it.strides[k][m] = it.strides[k][i]
                it.shape[m] *= it.shape[i]
            else:
                m += 1
                it.shape[m] = it.shape[i]
                for k in range(nop):
                    it.strides[k][m] = it.strides[k][i]
        nd = m + 1
    it.ndim = nd


cdef inline Py_ssize_t _abs(Py_ssize_t v) noexcept nogil:
    return -v if v < 0 else v


cdef inline bint _stride_less(ew_iter* it, int a, int b) noexcept nogil:
    """True when dim a should come after dim b (a is 'more inner')."""
    cdef int k
    for k in range(it.nop):
        if _abs(it.strides[k][a]) != _abs(it.strides[k][b]):
            if it.strides[k][a] == 0 or it.strides[k][b] == 0:
                continue
            return _abs(it.strides[k][a]) < _abs(it.strides[k][b])
    return False


cdef inline bint _can_merge(ew_iter* it, int outer, int inner) noexcept nogil:
    cdef int k
    for k in range(it.nop):
        if it.strides[k][outer] != it.strides[k][inner] * it.shape[inner]:
            return False
    return True


cdef bint _inputs_constant(ew_iter* it, const Py_ssize_t* s) noexcept nogil:
    """Every input has stride 0 along the inner dim and the output is
    contiguous there (an expanded gradient divided, added, scaled): the row
    is one value."""
    cdef int k
    if s[0] != it.itemsize[0]:
        return False
    for k in range(1, it.nop):
        if s[k] != 0:
            return False
    return True


cdef inline void _call(ew_iter* it, loop_t f, char** p, const Py_ssize_t* s, Py_ssize_t n,
                       const ew_extra* e, bint constant) noexcept nogil:
    """``f`` over ``n`` elements; a ``constant`` row computed once (the same
    loop, the same bits) and copied along, in doubling blocks."""
    cdef Py_ssize_t done, isz = it.itemsize[0], m
    cdef int k
    if constant and n >= 4:
        for k in range(1, it.nop):
            # (an input inside the row written: the elementwise order, as before)
            if p[k] + it.itemsize[k] > p[0] and p[k] < p[0] + n * isz:
                constant = False
    if not constant or n < 4:
        f(p, s, n, e)
        return
    f(p, s, 1, e)
    done = 1
    while done < n:
        m = done if 2 * done <= n else n - done
        memcpy(p[0] + done * isz, p[0], <size_t>(m * isz))
        done += m


cdef void _run_rows(ew_iter* it, loop_t f, const ew_extra* e, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Rows [start, stop) of the flattened outer dims (inner dim = ndim-1)."""
    cdef int nd = it.ndim, nop = it.nop, k, d
    cdef char* p[MAXOP]
    cdef Py_ssize_t s[MAXOP]
    cdef Py_ssize_t idx[PT_MAX_DIMS]
    cdef Py_ssize_t r, rem
    cdef Py_ssize_t inner = it.shape[nd - 1]
    for k in range(nop):
        s[k] = it.strides[k][nd - 1]
    # unravel start
    rem = start
    for d in range(nd - 2, -1, -1):
        idx[d] = rem % it.shape[d]
        rem //= it.shape[d]
    for k in range(nop):
        p[k] = it.ptrs[k]
        for d in range(nd - 1):
            p[k] += idx[d] * it.strides[k][d]
    cdef bint constant = _inputs_constant(it, s)
    for r in range(start, stop):
        _call(it, f, p, s, inner, e, constant)
        # odometer increment
        d = nd - 2
        while d >= 0:
            idx[d] += 1
            for k in range(nop):
                p[k] += it.strides[k][d]
            if idx[d] < it.shape[d]:
                break
            for k in range(nop):
                p[k] -= it.strides[k][d] * it.shape[d]
            idx[d] = 0
            d -= 1


cdef void _run_chunk1d(ew_iter* it, loop_t f, const ew_extra* e, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    cdef char* p[MAXOP]
    cdef Py_ssize_t s[MAXOP]
    cdef int k
    for k in range(it.nop):
        s[k] = it.strides[k][0]
        p[k] = it.ptrs[k] + start * s[k]
    if stop > start:
        _call(it, f, p, s, stop - start, e, _inputs_constant(it, s))


cdef bint _wants_tiles(ew_iter* it) noexcept nogil:
    """2-D+ iteration where some input walks memory across the outer dim
    (transposed relative to the output): blocked tiles keep it in cache."""
    cdef int nd = it.ndim, k
    if nd < 2 or it.shape[nd - 1] < 2 * TILE or it.shape[nd - 2] < 2 * TILE:
        return False
    for k in range(1, it.nop):
        if _abs(it.strides[k][nd - 1]) > 8 * it.itemsize[k] and \
                _abs(it.strides[k][nd - 2]) == it.itemsize[k]:
            return True
    return False


cdef void _run_tile_row(ew_iter* it, loop_t f, const ew_extra* e, Py_ssize_t outer,
                        Py_ssize_t tile_row) noexcept nogil:
    """All tiles of one band of TILE rows of the last two dims, for one
    index of the outer dims."""
    cdef int nd = it.ndim, nop = it.nop, k, d
    cdef char* base[MAXOP]
    cdef char* p[MAXOP]
    cdef Py_ssize_t s[MAXOP]
    cdef Py_ssize_t rem = outer, i, j0, i0, i1, ncols = it.shape[nd - 1], nrows = it.shape[nd - 2]
    cdef Py_ssize_t w
    for k in range(nop):
        base[k] = it.ptrs[k]
        s[k] = it.strides[k][nd - 1]
    for d in range(nd - 3, -1, -1):
        for k in range(nop):
            base[k] += (rem % it.shape[d]) * it.strides[k][d]
        rem //= it.shape[d]
    i0 = tile_row * TILE
    i1 = i0 + TILE if i0 + TILE < nrows else nrows
    j0 = 0
    while j0 < ncols:
        w = TILE if j0 + TILE <= ncols else ncols - j0
        for i in range(i0, i1):
            for k in range(nop):
                p[k] = base[k] + i * it.strides[k][nd - 2] + j0 * s[k]
            f(p, s, w, e)
        j0 += TILE


cdef bint _wants_stream(ew_iter* it, Py_ssize_t numel) noexcept nogil:
    """Non-temporal stores for the output (ptc_stream.h): at least
    ``ptc_stream_min_bytes`` of it, written in contiguous rows of at least
    1 KiB (whole cache lines, not a transposed tile's strips)."""
    cdef int nd = it.ndim
    if it.strides[0][nd - 1] != it.itemsize[0]:
        return False
    if nd > 1 and it.shape[nd - 1] * it.itemsize[0] < 1024:
        return False
    return <size_t>numel * <size_t>it.itemsize[0] >= ptc_stream_min_bytes()


cdef void ew_apply(ew_iter* it, loop_t f, const ew_extra* e) noexcept nogil:
    cdef Py_ssize_t numel = 1, rows, chunk, nchunks, c, nb, outer, t
    cdef int d, nt
    cdef Py_ssize_t zeros[MAXOP]
    cdef ew_extra e2
    _it_prepare(it)
    for d in range(it.ndim):
        numel *= it.shape[d]
    if numel == 0:
        return
    if it.ndim == 0:
        memset(zeros, 0, sizeof(zeros))
        f(it.ptrs, zeros, 1, e)
        return
    nt = team_for(numel)
    if _wants_tiles(it):
        outer = 1
        for d in range(it.ndim - 2):
            outer *= it.shape[d]
        nb = (it.shape[it.ndim - 2] + TILE - 1) // TILE
        if nt > 1:
            for t in prange(outer * nb, nogil=True, num_threads=nt, schedule="static"):
                _run_tile_row(it, f, e, t // nb, t % nb)
        else:
            for t in range(outer * nb):
                _run_tile_row(it, f, e, t // nb, t % nb)
        return
    # the loops run with a copy of ``e`` that says whether to stream the
    # output; each thread fences its streaming stores; the flag comes back
    e2 = e[0]
    e2.stream = _wants_stream(it, numel)
    if e2.stream:
        ptc_stream_counted()
    if it.ndim == 1:
        if nt > 1:
            chunk = (numel + nt - 1) // nt
            chunk = (chunk + 63) & ~(<Py_ssize_t>63)
            nchunks = (numel + chunk - 1) // chunk
            for c in prange(nchunks, nogil=True, num_threads=nt, schedule="static"):
                _run_chunk1d(it, f, &e2, c * chunk, min(numel, (c + 1) * chunk))
                if e2.stream:
                    ptc_stream_fence()
        else:
            _run_chunk1d(it, f, &e2, 0, numel)
    else:
        rows = numel // it.shape[it.ndim - 1]
        if nt > 1 and rows >= nt:
            chunk = (rows + nt - 1) // nt
            for c in prange(nt, nogil=True, num_threads=nt, schedule="static"):
                _run_rows(it, f, &e2, c * chunk, min(rows, (c + 1) * chunk))
                if e2.stream:
                    ptc_stream_fence()
        else:
            _run_rows(it, f, &e2, 0, rows)
    if e2.stream:
        ptc_stream_fence()
    if e2.flag:
        (<ew_extra*>e).flag = e2.flag


# ---------------------------------------------------------------------------
# operands
# ---------------------------------------------------------------------------

cdef object _Tensor = None


cdef int _encode(object v, dtype dt, char* out) except -1:
    """Python number -> one element of ``dt``, converting like a C cast
    (integers wrap), as PyTorch does for scalar operands."""
    cdef char buf[16]
    cdef int64_t iv
    cdef uint64_t uv
    cdef double dv
    cdef double cparts[2]
    cdef Py_ssize_t zero = 0
    cdef int src
    if isinstance(v, bool):
        iv = 1 if v else 0
        memcpy(buf, &iv, 8)
        src = PT_INT64
    elif isinstance(v, int):
        if -9223372036854775808 <= v <= 9223372036854775807:
            iv = v
            memcpy(buf, &iv, 8)
            src = PT_INT64
        else:
            # PyTorch reads a Python int beyond int64 as an unsigned 64-bit Scalar (its
            # argument parser's OverflowErrors outside that); floating and complex operands
            # take its value, a uint64 one exactly, the other integer types its C cast
            # (wrapped: int8 + 2**63 adds 0, uint8 < 2**64 - 1 compares with 255); bool none
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v > 18446744073709551615:
                raise OverflowError("int too big to convert")
            if dt.num == PT_BOOL:
                raise _C._overflow_exception(dt)
            uv = v
            memcpy(buf, &uv, 8)
            src = PT_UINT64
    elif isinstance(v, complex):
        cparts[0] = v.real          # not through a C complex: re + im*I would
        cparts[1] = v.imag          # turn complex(0, inf) into nan+inf*j
        memcpy(buf, cparts, 16)
        src = PT_COMPLEX128
    else:
        dv = float(v)
        memcpy(buf, &dv, 8)
        src = PT_FLOAT64
    if dt.num == PT_BOOL:
        (<unsigned char*>out)[0] = 0 if v == 0 else 1
        return 0
    copy_cast(out, dt.num, &zero, buf, src, &zero, &zero, 0)
    return 0


cdef _TensorBase _scalar_tensor(object v, dtype dt):
    """A 0-d tensor of dtype ``dt`` holding Python number ``v``."""
    cdef _TensorBase t = _empty_contig(dt, 0, NULL, _CPU, False)
    _encode(v, dt, t._ptr())
    return t


cdef _TensorBase _as_operand(object x, dtype compute):
    """Tensor (converted to ``compute``) or Python scalar (0-d of ``compute``)."""
    cdef _TensorBase t
    if isinstance(x, _TensorBase):
        t = <_TensorBase>x
        if t._dtype is not compute:
            t = t._to_dtype(compute)
        return t
    return _scalar_tensor(x, compute)


cdef int _broadcast_into(list shape, _TensorBase t) except -1:
    """Grow ``shape`` (a list, right-aligned) to broadcast with t.shape."""
    cdef int nd = t._ndim, n = len(shape), i, j
    cdef Py_ssize_t a, b
    if nd > n:
        shape[0:0] = [1] * (nd - n)
        n = nd
    for i in range(nd - 1, -1, -1):   # from the last dim, as torch reports the mismatch
        j = n - nd + i
        a = shape[j]
        b = t._shape[i]
        if a == b or b == 1:
            continue
        if a == 1:
            shape[j] = b
        else:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {i + (n - nd)}")
    return 0


cdef int _set_operand(ew_iter* it, int k, _TensorBase t, int nd) except -1:
    cdef int off = nd - t._ndim, i
    it.ptrs[k] = t._ptr()
    it.itemsize[k] = t._dtype.itemsize
    for i in range(nd):
        if i < off or t._shape[i - off] == 1:
            it.strides[k][i] = 0
        else:
            it.strides[k][i] = t._strides[i - off] * t._dtype.itemsize
    return 0


cdef bint _overlaps(_TensorBase a, _TensorBase b):
    if a._storage is not b._storage or a._numel == 0 or b._numel == 0:
        return False
    cdef Py_ssize_t alo = a._offset, ahi = a._offset, blo = b._offset, bhi = b._offset
    cdef int i
    for i in range(a._ndim):
        if a._shape[i] > 1:
            ahi += (a._shape[i] - 1) * a._strides[i]
    for i in range(b._ndim):
        if b._shape[i] > 1:
            bhi += (b._shape[i] - 1) * b._strides[i]
    alo *= a._dtype.itemsize
    blo *= b._dtype.itemsize
    ahi = (ahi + 1) * a._dtype.itemsize
    bhi = (bhi + 1) * b._dtype.itemsize
    return alo < bhi and blo < ahi


cdef bint _dense(_TensorBase t):
    """Non-overlapping and dense (some permutation of a contiguous layout)."""
    cdef Py_ssize_t expected = 1, best, st
    cdef int i, j, nd = t._ndim, pick
    cdef bint used[PT_MAX_DIMS]
    for i in range(nd):
        used[i] = t._shape[i] == 1
    for j in range(nd):
        pick = -1
        best = 0
        for i in range(nd):
            if not used[i]:
                st = t._strides[i] if t._strides[i] >= 0 else -t._strides[i]
                if pick < 0 or st < best:
                    pick = i
                    best = st
        if pick < 0:
            break
        if t._strides[pick] != expected:
            return False
        expected *= t._shape[pick]
        used[pick] = True
    return True


cdef bint _same_view(_TensorBase a, _TensorBase b):
    if a._storage is not b._storage or a._offset != b._offset or a._ndim != b._ndim \
            or a._dtype.itemsize != b._dtype.itemsize:
        return False
    cdef int i
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i] or (a._shape[i] > 1 and a._strides[i] != b._strides[i]):
            return False
    return True


cdef str _fmt(object shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


cdef _TensorBase _alloc_out(list shape, dtype dt, list operands):
    """Output of ``shape``: follows the layout of the first full-shape dense
    operand (PyTorch keeps e.g. a transposed input's layout), else contiguous."""
    cdef _TensorBase t
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    cdef bint same
    for op in operands:
        t = <_TensorBase>op
        if t._ndim != nd or t._numel <= 1:
            continue
        same = True
        for i in range(nd):
            if t._shape[i] != shape[i] or (t._strides[i] == 0 and t._shape[i] > 1):
                same = False
                break
        if not same:
            continue
        # as TensorIterator: the first operand with full-size strides decides
        if not t._is_contig():
            return _empty_strided_like(t, dt, False)
        break
    for i in range(nd):
        sh[i] = shape[i]
    return _empty_contig(dt, nd, sh, _CPU, False)


cdef _TensorBase _check_out(object out, list shape, dtype result, str opname):
    """Validate ``out=`` (or the self of an in-place op): shape and casting."""
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{opname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    cdef _TensorBase o = <_TensorBase>out
    cdef dtype od = o._dtype
    if not _can_cast(result, od):
        raise RuntimeError(f"result type {result._legacy} can't be cast to the desired output type {od._legacy}")
    return o


cdef bint _can_cast(dtype frm, dtype to):
    if frm._category == 3 and to._category != 3:
        return False
    if frm._category == 2 and to._category < 2:
        return False
    if frm._category > 0 and to._category == 0:
        return False
    return True


# ---------------------------------------------------------------------------
# the generic runner
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# float16/bfloat16 operands of one contiguous shape: the float32 loop runs on
# blocks converted on the fly (no whole float32 copies of the operands and
# the result; the conversions are the vectorised ones of ptc_half_rows.h)
# ---------------------------------------------------------------------------

cdef extern from "ptc_half_rows.h" nogil:
    void ptc_half_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_half_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_bf16_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_bf16_rows(const void* s, void* d, Py_ssize_t n)

cdef extern from "ptc_low_ew.h" nogil:
    int ptc_low_ew(int op, int bf, uint16_t* o, const void* x, int xs, const void* y, int ys,
                   float al, Py_ssize_t n)
    int ptc_low_ew_level()
    void ptc_low_sign(const uint16_t* s, uint16_t* d, Py_ssize_t n, int flip)

# the ops with a loop of ptc_low_ew.h (its PTC_LOW_* codes): conversions in
# registers, one pass; the others run the float32 loop on converted blocks
cdef dict _LOW_FUSED = {(2, BINARY["add"]): 0, (2, BINARY["sub"]): 1, (2, BINARY["mul"]): 2,
                        (2, BINARY["div"]): 3, (2, BINARY["add_alpha"]): 4,
                        (2, BINARY["maximum"]): 5, (2, BINARY["minimum"]): 6,
                        (1, UNARY["relu"]): 7, (1, UNARY["gelu"]): 8}

DEF _LOW_BLOCK = 1024


cdef void _low_blocks(int nin, char** src, const int* mode, char* dst, int dmode,
                      Py_ssize_t ditem, loop_t f, const ew_extra* e,
                      Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Elements [start, end) of the low-precision loop.  ``mode[k]``: 0 a
    float32 scalar operand (stride 0), 1 float16, 2 bfloat16; ``dmode``: 0
    the loop writes ``dst`` itself (item size ``ditem``), 1/2 float32 results
    rounded to float16/bfloat16."""
    cdef float buf[3][_LOW_BLOCK]
    cdef float obuf[_LOW_BLOCK]
    cdef char* p[4]
    cdef Py_ssize_t st[4]
    cdef Py_ssize_t i0 = start, m
    cdef int k
    while i0 < end:
        m = end - i0
        if m > _LOW_BLOCK:
            m = _LOW_BLOCK
        for k in range(nin):
            if mode[k] == 0:
                p[k + 1] = src[k]
                st[k + 1] = 0
            else:
                if mode[k] == 1:
                    ptc_half_to_float_rows(src[k] + 2 * i0, &buf[k][0], m)
                else:
                    ptc_bf16_to_float_rows(src[k] + 2 * i0, &buf[k][0], m)
                p[k + 1] = <char*>&buf[k][0]
                st[k + 1] = 4
        if dmode == 0:
            p[0] = dst + ditem * i0
            st[0] = ditem
        else:
            p[0] = <char*>&obuf[0]
            st[0] = 4
        f(p, st, m, e)
        if dmode == 1:
            ptc_float_to_half_rows(&obuf[0], dst + 2 * i0, m)
        elif dmode == 2:
            ptc_float_to_bf16_rows(&obuf[0], dst + 2 * i0, m)
        i0 += m


cdef void _low_fused(int lop, int bf, int nin, char** src, const int* mode, char* dst,
                     float al, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Elements [start, end) of a ptc_low_ew loop (``mode`` as _low_blocks')."""
    cdef const void* x = src[0] + (2 * start if mode[0] else 0)
    cdef const void* y = x
    cdef int ys = mode[0] != 0
    if nin > 1:
        y = src[1] + (2 * start if mode[1] else 0)
        ys = mode[1] != 0
    ptc_low_ew(lop, bf, <uint16_t*>(dst + 2 * start), x, mode[0] != 0, y, ys, al, end - start)


cdef object _low_sign_op(_TensorBase x, object out, bint flip):
    """``-x`` (``flip``) or ``x.abs()`` of a contiguous float16/bfloat16
    tensor into a new tensor or a contiguous ``out`` of its shape and dtype;
    None when ``out`` does not qualify."""
    cdef _TensorBase o
    cdef int i
    if out is None:
        o = _alloc_out([x._shape[i] for i in range(x._ndim)], x._dtype, [])
    else:
        if not isinstance(out, _TensorBase):
            return None
        o = <_TensorBase>out
        if o._dtype is not x._dtype or o._storage.device._type_code != 0 or not o._is_contig() \
                or o._ndim != x._ndim or any(o._shape[i] != x._shape[i] for i in range(o._ndim)) \
                or (_overlaps(x, o) and not _same_view(x, o)):
            return None
    cdef const uint16_t* sp = <const uint16_t*>x._ptr()
    cdef uint16_t* dp = <uint16_t*>o._ptr()
    cdef Py_ssize_t n = x._numel
    ptc_kernel_enter()
    with nogil:
        try:
            ptc_low_sign(sp, dp, n, flip)
        finally:
            ptc_kernel_exit()
    if out is not None:
        ptc_bump_version(o)
    return o


cdef object _run_low_dense(int kind, int op, list inputs, object out, dtype compute,
                           dtype result, ew_extra* ex):
    """``_run`` for float16/bfloat16 when every dimensioned operand is a
    contiguous CPU tensor of ``compute`` and one shape (the others scalars or
    0-d), the result new or a contiguous ``out`` of that shape; None when the
    call does not qualify (the general path then runs it)."""
    cdef list ts = []
    cdef _TensorBase t, o = None, dst, ref = None
    cdef int k, i, nin = len(inputs), nt
    cdef int mode[3]
    cdef char* src[3]
    cdef int low_mode = 1 if compute.num == PT_FLOAT16 else 2
    for k in range(nin):
        x = inputs[k]
        if isinstance(x, _TensorBase) and (<_TensorBase>x)._ndim > 0:
            t = <_TensorBase>x
            if t._dtype is not compute or t._storage.device._type_code != 0 or not t._is_contig():
                return None
            if ref is None:
                ref = t
            elif t._ndim != ref._ndim or any(t._shape[i] != ref._shape[i] for i in range(t._ndim)):
                return None
            mode[k] = low_mode
        else:
            if (kind, op, k) in _F32_SCALAR_OPERANDS:
                t = _as_operand(x, _F32)
            else:
                t = _as_operand(x, compute)
            if t._ndim != 0 or t._storage.device._type_code != 0:
                return None
            if t._dtype is not _F32:
                t = t._to_dtype(_F32)
            mode[k] = 0
        ts.append(t)
    if ref is None or ref._numel == 0:
        return None
    if kind == 1 and (op == _NEG or op == _ABS):
        # the sign bit only, as PyTorch's float16/bfloat16 neg and abs (NaN
        # payloads, signalling ones too, kept)
        return _low_sign_op(ref, out, op == _NEG)
    cdef loop_t f
    cdef int out_num
    if kind == 1:
        f, out_num = unary_loop(op, PT_FLOAT32), unary_out(op, PT_FLOAT32)
    elif kind == 2:
        f, out_num = binary_loop(op, PT_FLOAT32), binary_out(op, PT_FLOAT32)
    else:
        f, out_num = ternary_loop(op, PT_FLOAT32), PT_FLOAT32
    if f == NULL:
        return None
    cdef int dmode
    if out_num == PT_FLOAT32 and result is compute:
        dmode = low_mode
    elif out_num == result.num:
        dmode = 0
    else:
        return None
    cdef list shape = [ref._shape[i] for i in range(ref._ndim)]
    if out is not None:
        if not isinstance(out, _TensorBase):
            return None
        o = <_TensorBase>out
        if o._dtype is not result or o._storage.device._type_code != 0 or not o._is_contig() \
                or o._ndim != ref._ndim or any(o._shape[i] != ref._shape[i] for i in range(o._ndim)):
            return None
        for k in range(nin):
            t = <_TensorBase>ts[k]
            if mode[k] and _overlaps(t, o) and not _same_view(t, o):
                return None
        dst = o
    else:
        dst = _alloc_out(shape, result, [])
    for k in range(nin):
        src[k] = (<_TensorBase>ts[k])._ptr()
    cdef char* dp = dst._ptr()
    cdef Py_ssize_t n = ref._numel, ditem = dst._dtype.itemsize, chunk, nchunks, c
    ex.flag = 0
    nt = team_for(n)
    # one pass with the conversions in registers where ptc_low_ew has the op
    cdef int lop = -1
    if dmode == low_mode and ptc_low_ew_level():
        lop = _LOW_FUSED.get((kind, op), -1)
    cdef int bf = low_mode == 2
    cdef float al = <float>ex.d0 if lop == 4 else 0.0
    ptc_kernel_enter()
    with nogil:
        try:
            if nt > 1:
                chunk = (n + nt - 1) // nt
                chunk = (chunk + 63) & ~(<Py_ssize_t>63)
                nchunks = (n + chunk - 1) // chunk
                for c in prange(nchunks, num_threads=nt, schedule="static"):
                    if lop >= 0:
                        _low_fused(lop, bf, nin, src, mode, dp, al, c * chunk,
                                   min(n, (c + 1) * chunk))
                    else:
                        _low_blocks(nin, src, mode, dp, dmode, ditem, f, ex, c * chunk,
                                    min(n, (c + 1) * chunk))
            elif lop >= 0:
                _low_fused(lop, bf, nin, src, mode, dp, al, 0, n)
            else:
                _low_blocks(nin, src, mode, dp, dmode, ditem, f, ex, 0, n)
        finally:
            ptc_kernel_exit()
    if o is not None:
        ptc_bump_version(o)
    return dst


cdef object _run(int kind, int op, list inputs, object out, dtype compute, dtype result,
                 ew_extra* ex, str opname, bint inplace):
    """Run a loop over ``inputs`` (tensors or Python scalars) into a new
    tensor of dtype ``result`` or into ``out``.

    The loop runs in ``compute`` (float16/bfloat16 and the float8 types run in float32,
    complex32 in complex64; ``where`` on them selects their bits as int16/int8/int32) and writes the loop's own
    output dtype; the result is then converted or copied where needed.
    """
    cdef dtype loop_dt = compute
    cdef bint c32 = compute.num == PT_COMPLEX32
    cdef bint f8 = PT_FLOAT8_E4M3FN <= compute.num <= PT_FLOAT8_E5M2FNUZ
    cdef bint low = compute.num == PT_FLOAT16 or compute.num == PT_BFLOAT16 or c32 or f8
    cdef bint is_where = kind == 3 and op == _WHERE
    cdef dtype bits_dt = dtype_from_num(PT_INT32 if c32 else PT_INT8 if f8 else PT_INT16)
    if c32 and (kind, op) not in _C32_OPS:
        raise NotImplementedError(f"\"{opname}\" not implemented for 'ComplexHalf'")
    if f8 and (kind, op) not in _F8_OPS and not (
            compute.num == PT_FLOAT8_E5M2 and (kind, op) in _F8_INF_OPS):
        raise NotImplementedError(f"\"{opname}\" not implemented for '{compute._legacy}'")
    if compute.num == PT_UINT16 or compute.num == PT_UINT32 or compute.num == PT_UINT64:
        return _run_unsigned(kind, op, inputs, out, compute, result, ex, opname, inplace)
    cdef list ts = []
    cdef list shape = []
    cdef _TensorBase t, o = None, dst
    cdef loop_t f
    cdef int out_num, i, k, nd
    if low and not c32 and not f8 and not is_where:
        r = _run_low_dense(kind, op, inputs, out, compute, result, ex)
        if r is not None:
            return r
    if is_where:
        for x in inputs[:2]:
            t = _as_operand(x, compute)
            ts.append(t._view_dtype(bits_dt) if low else t)
        ts.append(_as_operand(inputs[2], dtype_from_num(PT_BOOL)))
        if low:
            loop_dt = bits_dt
    else:
        if low:
            # operands take the common dtype first (a float32 0-d operand or a
            # Python scalar rounds to float16/bfloat16/complex32), then
            # float32 (complex64) for the loop
            loop_dt = _C64 if c32 else _F32
            for k in range(len(inputs)):
                x = inputs[k]
                if not c32 and (kind, op, k) in _F32_SCALAR_OPERANDS and (
                        not isinstance(x, _TensorBase) or (<_TensorBase>x)._ndim == 0):
                    t = _as_operand(x, _F32)
                else:
                    t = _as_operand(x, compute)
                ts.append(t if t._dtype is loop_dt else t._to_dtype(loop_dt))
        else:
            for x in inputs:
                ts.append(_as_operand(x, loop_dt))
    for t in ts:
        _broadcast_into(shape, t)
    nd = len(shape)
    if kind == 1:
        f = unary_loop(op, loop_dt.num)
        out_num = unary_out(op, loop_dt.num)
    elif kind == 2:
        f = binary_loop(op, loop_dt.num)
        out_num = binary_out(op, loop_dt.num)
    else:
        f = ternary_loop(op, loop_dt.num)
        out_num = loop_dt.num
    if f == NULL:
        raise NotImplementedError(f"\"{opname}\" not implemented for '{compute._legacy}'")
    cdef dtype loop_out = dtype_from_num(out_num)
    if out is not None:
        o = _check_out(out, shape, result, opname)
        if [o._shape[i] for i in range(o._ndim)] != shape:
            # an out= that is one of the operands is read and written (torch's is_read_write
            # output): it cannot be resized either
            if inplace or any(x is out for x in inputs):
                raise RuntimeError(
                    f"output with shape {_fmt(o.shape)} doesn't match the broadcast shape {_fmt(shape)}")
            _resize(o, shape)
        for i in range(o._ndim):
            if o._strides[i] == 0 and o._shape[i] > 1 and o._numel > 0:
                raise RuntimeError(
                    "unsupported operation: more than one element of the written-to tensor refers to a "
                    "single memory location. Please clone() the tensor before performing the operation.")
        for k in range(len(ts)):
            t = <_TensorBase>ts[k]
            if _overlaps(t, o) and not _same_view(t, o):
                if _dense(t) and _dense(o):
                    # PyTorch's partial overlap of dense operands: refused
                    raise RuntimeError(
                        "unsupported operation: some elements of the input tensor and the written-to "
                        "tensor refer to a single memory location. Please clone() the tensor before "
                        "performing the operation.")
                ts[k] = t.clone()
        if o._dtype is loop_out and (not low or loop_out is result):
            dst = o
        elif is_where and low and o._dtype is compute:
            dst = o._view_dtype(bits_dt)
        else:
            dst = _alloc_out(shape, loop_out, ts)
    else:
        dst = _alloc_out(shape, loop_out, ts)
    cdef ew_iter it
    it.nop = 1 + len(ts)
    it.ndim = nd
    for i in range(nd):
        it.shape[i] = shape[i]
    _set_operand(&it, 0, dst, nd)
    for k in range(len(ts)):
        _set_operand(&it, k + 1, <_TensorBase>ts[k], nd)
    ex.flag = 0
    ptc_kernel_enter()
    with nogil:
        try:
            ew_apply(&it, f, ex)
        finally:
            ptc_kernel_exit()
    if ex.flag:
        raise RuntimeError("ZeroDivisionError")
    if is_where and low:
        dst = dst._view_dtype(compute)
    if o is not None:
        if dst._storage is o._storage and dst._offset == o._offset:
            ptc_bump_version(o)
        else:
            if low and not is_where and dst._dtype is not result:
                # PyTorch computes in the common dtype, then casts to out's
                dst = dst._to_dtype(result)
            o.copy_(dst)
        return o
    if dst._dtype is not result:
        return dst._to_dtype(result)
    return dst


cdef object _run_unsigned(int kind, int op, list inputs, object out, dtype compute, dtype result,
                          ew_extra* ex, str opname, bint inplace):
    """``_run`` for uint16/32/64: the ops in ``_UINT_OPS`` run on the signed
    type of the same width (same bits), the others raise as PyTorch."""
    if kind == 1 and op == _SIGNBIT:
        op = _ISNAN                 # unsigned: never negative (all False, as isnan of an integer)
    if (kind, op) not in _UINT_OPS:
        raise NotImplementedError(f"\"{opname}\" not implemented for '{compute._legacy}'")
    cdef dtype sgn = dtype_from_num(PT_INT16 if compute.num == PT_UINT16 else
                                    PT_INT32 if compute.num == PT_UINT32 else PT_INT64)
    cdef list ins = []
    cdef int k
    for k in range(len(inputs)):
        if kind == 3 and k == 2:
            ins.append(inputs[k])                   # where's condition
        else:
            ins.append(_as_operand(inputs[k], compute)._view_dtype(sgn))
    cdef dtype res = sgn if result is compute else result
    cdef object o = out
    if isinstance(out, _TensorBase) and (<_TensorBase>out)._dtype is compute:
        o = (<_TensorBase>out)._view_dtype(sgn)
    r = _run(kind, op, ins, o, sgn, res, ex, opname, inplace)
    if out is not None:
        return out
    if (<_TensorBase>r)._dtype is sgn:
        return (<_TensorBase>r)._view_dtype(compute)
    return r


cdef int _resize(_TensorBase o, list shape) except -1:
    import warnings
    cdef Py_ssize_t need = o._dtype.itemsize
    for v in shape:
        need *= <Py_ssize_t>v
    if o._storage._kind == 1 and need > o._storage._nbytes - o._offset * o._dtype.itemsize:
        # memory owned by someone else (a NumPy array, a buffer) cannot grow
        raise RuntimeError("Trying to resize storage that is not resizable")
    if o._numel != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {_fmt(o.shape)}, which "
            f"does not match the required output shape {_fmt(shape)}. This behavior is deprecated, and in "
            "a future PyTorch release outputs will not be resized unless they have zero elements. You "
            "can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).", UserWarning, stacklevel=4)
    o.resize_(shape)
    return 0


cdef void _fill_extra(ew_extra* ex, double d0, double d1, double d2, int64_t i0, int64_t i1) noexcept:
    ex.d0 = d0
    ex.d1 = d1
    ex.d2 = d2
    ex.i0 = i0
    ex.i1 = i1
    ex.flag = 0
    ex.stream = 0


def run_unary(int op, x, out, dtype compute not None, dtype result, str opname, bint inplace=False,
              double d0=0.0, double d1=0.0, double d2=0.0, int64_t i0=0):
    cdef ew_extra ex
    _fill_extra(&ex, d0, d1, d2, i0, 0)
    return _run(1, op, [x], out, compute, result, &ex, opname, inplace)


def run_binary(int op, a, b, out, dtype compute not None, dtype result, str opname, bint inplace=False,
               double d0=0.0, double d1=0.0, double d2=0.0, int64_t i0=0):
    cdef ew_extra ex
    if type(a) is int or type(b) is int:
        _check_big_int_operand(a, b, compute)
    _fill_extra(&ex, d0, d1, d2, i0, 0)
    return _run(2, op, [a, b], out, compute, result, &ex, opname, inplace)


cdef int _check_big_int_operand(a, b, dtype compute) except -1:
    """torch's OverflowError for a Python int outside [-2**63, 2**64), and its
    RuntimeError for one beyond int64 with a bool tensor:
    the number sets the result type (int64) and must fit it (with a tensor of
    an integer type it is wrapped to that type instead, see _encode)."""
    cdef object n = a if type(a) is int else b
    cdef object t = b if type(a) is int else a
    if -9223372036854775808 <= n <= 9223372036854775807:
        return 0
    if not (0 <= n <= 18446744073709551615):
        # (torch's argument parser, before any kernel or dtype check)
        raise OverflowError("Overflow when unpacking long")
    if isinstance(t, _TensorBase) and (<_TensorBase>t)._dtype.num == PT_BOOL:
        raise _C._overflow_exception(compute)
    return 0


def run_ternary(int op, a, b, c, out, dtype compute not None, dtype result, str opname, bint inplace=False,
                double d0=0.0, double d1=0.0, int64_t i0=0):
    cdef ew_extra ex
    _fill_extra(&ex, d0, d1, 0.0, i0, 0)
    return _run(3, op, [a, b, c], out, compute, result, &ex, opname, inplace)


# ---------------------------------------------------------------------------
# fast path for the Python operators: same-dtype CPU tensors (or a tensor and
# a Python scalar of a category that keeps the tensor's dtype), no autograd
# ---------------------------------------------------------------------------

cdef inline bint _plain(_TensorBase t, bint any_grad) noexcept:
    return t._storage.device._type_code == 0 and (any_grad or not t._requires_grad)


# The same fast paths for tensors on another device type: a device runtime
# (ptcore.cuda) registers C functions for its type code that do what its
# kernels' own dense paths do, or return None for the general path.
ctypedef object (*device_binary_fn)(int op, _TensorBase a, object b, bint any_grad)
ctypedef object (*device_inplace_fn)(int op, _TensorBase a, object b, object alpha)
ctypedef object (*device_unary_fn)(int op, _TensorBase x)

cdef enum:
    _N_DEVICE_TYPES = 4
cdef device_binary_fn _device_binary[_N_DEVICE_TYPES]
cdef device_inplace_fn _device_inplace[_N_DEVICE_TYPES]
cdef device_unary_fn _device_unary[_N_DEVICE_TYPES]
memset(_device_binary, 0, sizeof(_device_binary))
memset(_device_inplace, 0, sizeof(_device_inplace))
memset(_device_unary, 0, sizeof(_device_unary))


def set_device_fast_paths(str device_type, binary, inplace, unary):
    """Register the fast paths of device type ``device_type`` (one with a
    type code of its own: ``"cuda"``, ``"meta"``): PyCapsules (no name)
    holding a ``device_binary_fn``, a ``device_inplace_fn`` and a
    ``device_unary_fn``, or None to remove them.  Called by
    :func:`ptcore._dispatch.device.register_driver_fast_paths` only."""
    cdef int type_code = (<_Device>_C.device(device_type))._type_code
    if not 0 < type_code < _N_DEVICE_TYPES - 1:
        raise ValueError(f"set_device_fast_paths: {device_type!r} has no C fast-path table "
                         f"(the CPU's fast paths are the driver's own; the other device types "
                         f"share one type code)")
    _device_binary[type_code] = NULL if binary is None else \
        <device_binary_fn>PyCapsule_GetPointer(binary, NULL)
    _device_inplace[type_code] = NULL if inplace is None else \
        <device_inplace_fn>PyCapsule_GetPointer(inplace, NULL)
    _device_unary[type_code] = NULL if unary is None else \
        <device_unary_fn>PyCapsule_GetPointer(unary, NULL)


def device_fast_unary(int op, x):
    """``op(x)`` (``op`` a unary elementwise kernel index) by the fast path
    of ``x``'s device; None to take the general path (every CPU tensor:
    ``fast_unary`` serves those)."""
    if not isinstance(x, _TensorBase):
        return None
    cdef int code = (<_TensorBase>x)._storage.device._type_code
    if code <= 0 or code >= _N_DEVICE_TYPES or _device_unary[code] == NULL:
        return None
    return _device_unary[code](op, <_TensorBase>x)


def device_fast_inplace(int op, a, b, alpha=None):
    """``a op= b`` (``a += alpha * b`` for add/sub with ``alpha``) by the
    fast path of ``a``'s device, returning ``a``; None to take the general
    path (every CPU tensor: ``fast_inplace`` below serves those)."""
    if not isinstance(a, _TensorBase):
        return None
    cdef int code = (<_TensorBase>a)._storage.device._type_code
    if code <= 0 or code >= _N_DEVICE_TYPES or _device_inplace[code] == NULL:
        return None
    return _device_inplace[code](op, <_TensorBase>a, b, alpha)


def fast_binary(int op, a, b, bint any_grad=False):
    """Result of a binary op for the common cases, or None to take the general path.

    ``any_grad``: accept operands that require grad (autograd records the
    result itself)."""
    if not isinstance(a, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = None, out
    cdef dtype dt = ta._dtype
    cdef int cat = dt._category
    cdef loop_t f
    cdef bint same_shape = True
    cdef int i
    cdef int code = ta._storage.device._type_code
    if ta._tf_counted == 2 or isinstance(b, _TensorBase) and (<_TensorBase>b)._tf_counted == 2:
        return None     # a sparse operand: the general path routes it to its class
    if code != 0:
        if code < 0 or code >= _N_DEVICE_TYPES or _device_binary[code] == NULL:
            return None
        return _device_binary[code](op, ta, b, any_grad)
    if not _plain(ta, any_grad) or dt.num == PT_FLOAT16 or dt.num == PT_BFLOAT16 \
            or dt.num == PT_COMPLEX32:
        return None
    f = binary_loop(op, dt.num)
    if f == NULL:
        return None
    cdef int res_num = binary_out(op, dt.num)
    if isinstance(b, _TensorBase):
        tb = <_TensorBase>b
        if tb._dtype is not dt or not _plain(tb, any_grad):
            return None
        if tb._ndim != ta._ndim:
            same_shape = False
        else:
            for i in range(ta._ndim):
                if ta._shape[i] != tb._shape[i]:
                    same_shape = False
                    break
        # (an operand expanded from one element reads flat with step 0: the
        # general loop's values, and its contiguous result layout)
        if not same_shape or not _flat_ok(ta) or not _flat_ok(tb):
            return run_binary(op, a, b, None, dt, dtype_from_num(res_num), _ew_mod.BINARY_OPS[op])
    else:
        tb = None
        if not _flat_ok(ta) or not _scalar_keeps(b, cat):
            return None
    out = _empty_contig(dtype_from_num(res_num), ta._ndim, ta._shape, _CPU, False)
    _run_fast(f, out, ta, tb, b)
    return out


cdef inline bint _scalar_keeps(object b, int cat):
    """A Python float with a floating/complex tensor, or an int with a
    non-bool one: the tensor's dtype is the result's (the fast paths' case)."""
    if type(b) is float:
        return cat >= 2
    if type(b) is int:
        return cat >= 1
    return False


cdef inline bint _bcast_one(_TensorBase t) noexcept:
    """Every stride 0: one element read everywhere (``ones(()).expand(shape)``,
    the gradient a sum's backward passes on)."""
    cdef int i
    for i in range(t._ndim):
        if t._strides[i] != 0:
            return False
    return True


cdef inline bint _flat_ok(_TensorBase t) noexcept:
    """A flat loop reads ``t``: contiguous, or one element expanded."""
    return t._is_contig() or _bcast_one(t)


cdef inline Py_ssize_t _flat_step(_TensorBase t) noexcept:
    """``t``'s step in a flat loop (see ``_flat_ok``)."""
    return t._dtype.itemsize if t._is_contig() else 0


cdef int _run_fast(loop_t f, _TensorBase out, _TensorBase ta, _TensorBase tb, object b) except -1:
    """out = ta op (tb, or the Python number b): operands of ta's length
    that a flat loop reads (``_flat_ok``; the fast paths' shared loop call)."""
    cdef char sbuf[16]
    cdef char* ptrs[3]
    cdef Py_ssize_t strides[3]
    cdef dtype dt = ta._dtype
    ptrs[0] = out._ptr()
    ptrs[1] = ta._ptr()
    strides[0] = out._dtype.itemsize
    strides[1] = _flat_step(ta)
    if tb is None:
        _encode(b, dt, sbuf)
        ptrs[2] = sbuf
        strides[2] = 0
    else:
        ptrs[2] = tb._ptr()
        strides[2] = _flat_step(tb)
    return _run_contig(f, 3, ptrs, strides, ta._numel)


cdef int _run_contig(loop_t f, int nop, char** ptrs, Py_ssize_t* strides, Py_ssize_t n) except -1:
    """The loop ``f`` over ``n`` elements of ``nop`` flat operands, split
    over threads past the parallel grain."""
    cdef ew_extra ex
    ex.flag = 0
    ex.stream = 0
    if n:
        if n < parallel_grain():
            f(ptrs, strides, n, &ex)
        else:
            _run_flat(f, nop, ptrs, strides, n, &ex)
    if ex.flag:
        raise RuntimeError("ZeroDivisionError")
    return 0


def fast_unary(int op, x):
    """``op(x)`` for the unary front-ends' common case, or None to take the
    general path: ``x`` a contiguous CPU tensor, or one expanded from one
    element (not float16/bfloat16/complex32/uint16/uint32/uint64), whose
    dtype has a loop for ``op`` that writes that dtype."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x, out
    cdef int num = t._dtype.num
    cdef loop_t f
    cdef char* ptrs[2]
    cdef Py_ssize_t strides[2]
    if t._storage.device._type_code != 0 or num == PT_FLOAT16 or num == PT_BFLOAT16 \
            or num == PT_COMPLEX32 or num == PT_UINT16 or num == PT_UINT32 or num == PT_UINT64 \
            or not _flat_ok(t):
        return None
    f = unary_loop(op, num)
    if f == NULL or unary_out(op, num) != num:
        return None
    out = _empty_contig(t._dtype, t._ndim, t._shape, _CPU, False)
    ptrs[0] = out._ptr()
    ptrs[1] = t._ptr()
    strides[0] = t._dtype.itemsize
    strides[1] = _flat_step(t)
    _run_contig(f, 2, ptrs, strides, t._numel)
    return out


cdef int _COS = UNARY["cos"]
cdef int _SIN = UNARY["sin"]
cdef int _MUL = BINARY["mul"]


def fast_polar(a, b):
    """``polar(a, b)`` (``a * (cos(b) + i sin(b))``) for its common case, or
    None to take the general path: ``a`` and ``b`` contiguous CPU tensors of
    one shape and one dtype, float32 or float64 (the result is contiguous).
    The cos/sin/mul loops of the elementwise ops write the two parts of the
    complex result in place (strided), so the values are those of the
    general path."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b, out, tmp
    cdef int num = ta._dtype.num, k
    cdef Py_ssize_t isz
    cdef loop_t fu
    cdef loop_t fm = binary_loop(_MUL, num)
    cdef char* ptrs[3]
    cdef Py_ssize_t strides[3]
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tb._dtype.num != num \
            or ta._storage.device._type_code != 0 or tb._storage.device._type_code != 0 \
            or not ta._is_contig() or not tb._is_contig() or ta._ndim != tb._ndim or fm == NULL:
        return None
    for k in range(ta._ndim):
        if ta._shape[k] != tb._shape[k]:
            return None
    isz = ta._dtype.itemsize
    out = _empty_contig(dtype_from_num(PT_COMPLEX64 if num == PT_FLOAT32 else PT_COMPLEX128),
                        ta._ndim, ta._shape, _CPU, False)
    tmp = _empty_contig(ta._dtype, ta._ndim, ta._shape, _CPU, False)
    for k in range(2):
        fu = unary_loop(_COS if k == 0 else _SIN, num)
        if fu == NULL:
            return None
        ptrs[0] = tmp._ptr()
        ptrs[1] = tb._ptr()
        strides[0] = isz
        strides[1] = isz
        _run_contig(fu, 2, ptrs, strides, ta._numel)
        ptrs[0] = out._ptr() + k * isz
        ptrs[1] = ta._ptr()
        ptrs[2] = tmp._ptr()
        strides[0] = 2 * isz
        strides[2] = isz
        _run_contig(fm, 3, ptrs, strides, ta._numel)
    return out


def fast_outer(a, b, bint flat):
    """``outer(a, b)`` (``flat``: ``kron(a, b)``, its rows end to end) for two
    CPU vectors (any strides) of one dtype, float32 or float64, or None to
    take the general path: row ``i`` is the multiplication loop of ``a[i]``
    (stride 0) by ``b``, the loop and so the values of the general path's
    broadcast product ``a.unsqueeze(1) * b.unsqueeze(0)``."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    cdef int num = ta._dtype.num
    cdef loop_t fm = binary_loop(_MUL, num)
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tb._dtype.num != num or fm == NULL \
            or ta._ndim != 1 or tb._ndim != 1 \
            or ta._storage.device._type_code != 0 or tb._storage.device._type_code != 0:
        return None
    cdef Py_ssize_t shape[2]
    shape[0] = ta._shape[0]
    shape[1] = tb._shape[0]
    if shape[1] != 0 and shape[0] > PY_SSIZE_T_MAX // shape[1]:
        return None             # (the product overflows: the general path raises torch's error)
    cdef Py_ssize_t n = shape[0] * shape[1]
    cdef _TensorBase out = _empty_contig(ta._dtype, 1, &n, _CPU, False) if flat else \
        _empty_contig(ta._dtype, 2, shape, _CPU, False)
    cdef Py_ssize_t isz = ta._dtype.itemsize, i
    cdef char* ptrs[3]
    cdef Py_ssize_t strides[3]
    if n == 0:
        return out              # (no row loop: a's length may be huge, expanded)
    cdef char* po = out._ptr()
    cdef char* pa = ta._ptr()
    cdef char* pb = tb._ptr()
    strides[0] = isz
    strides[1] = 0
    strides[2] = tb._strides[0] * isz
    for i in range(shape[0]):
        ptrs[0] = po + i * shape[1] * isz
        ptrs[1] = pa + i * ta._strides[0] * isz
        ptrs[2] = pb
        _run_contig(fm, 3, ptrs, strides, shape[1])
    return out


ctypedef fused _flt:
    float
    double


cdef bint _isclose_loop(const _flt* a, const _flt* b, unsigned char* o, Py_ssize_t n,
                        _flt rtol, _flt atol, bint equal_nan, bint tol) noexcept nogil:
    """``o[i] = isclose(a[i], b[i])`` as torch's composite computes it in the
    operands' type (``o`` NULL: stop at the first False); whether all are."""
    cdef Py_ssize_t i
    cdef _flt x, y, actual, allowed
    cdef bint c
    for i in range(n):
        x = a[i]
        y = b[i]
        c = x == y
        if not c and equal_nan and x != x and y != y:
            c = True
        if not c and tol:
            allowed = atol + fabs(y * rtol)
            actual = fabs(x - y)
            c = isfinite(actual) and actual <= allowed
        if o != NULL:
            o[i] = c
        elif not c:
            return False
    return True


def fast_isclose(a, b, double rtol, double atol, bint equal_nan, bint all_of):
    """``isclose(a, b, rtol, atol, equal_nan)`` (a new bool tensor) or, with
    ``all_of``, ``allclose`` (a bool) for contiguous CPU tensors of one
    shape and one dtype, float32 or float64, and tolerances >= 0 (checked
    by the caller); None for the other cases."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b, out = None
    cdef int num = ta._dtype.num, k
    cdef bint tol = rtol != 0 or atol != 0, r
    cdef unsigned char* po = NULL
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tb._dtype.num != num \
            or ta._storage.device._type_code != 0 or tb._storage.device._type_code != 0 \
            or not ta._is_contig() or not tb._is_contig() or ta._ndim != tb._ndim:
        return None
    for k in range(ta._ndim):
        if ta._shape[k] != tb._shape[k]:
            return None
    if not all_of:
        out = _empty_contig(dtype_from_num(PT_BOOL), ta._ndim, ta._shape, _CPU, False)
        po = <unsigned char*>out._ptr()
    cdef char* pa = ta._ptr()
    cdef char* pb = tb._ptr()
    cdef Py_ssize_t n = ta._numel
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _isclose_loop(<const float*>pa, <const float*>pb, po, n, <float>rtol,
                                  <float>atol, equal_nan, tol)
            else:
                r = _isclose_loop(<const double*>pa, <const double*>pb, po, n, rtol, atol,
                                  equal_nan, tol)
        finally:
            ptc_kernel_exit()
    return r if all_of else out


cdef bint _number_fits(object v, dtype dt) except -1:
    """Whether the Python int/float ``v`` converts to ``dt`` without PyTorch's
    overflow error (its checked ``Scalar.to<T>()``: an integer type's range,
    an unsigned one's down to -max; a finite float beyond float32's range
    for float32/complex64); the fast paths leave the others to the front-ends."""
    cdef double d
    cdef int64_t iv, hi
    cdef int bits
    if type(v) is float:
        d = v
        return not ((dt.num == PT_FLOAT32 or dt.num == PT_COMPLEX64) and isfinite(d)
                    and fabs(d) > FLT_MAX)
    if not (-9223372036854775808 <= v <= 9223372036854775807):
        return False
    if dt._category != 1:
        return True
    iv = v
    bits = dt.itemsize * 8
    if bits == 64:
        return dt.is_signed
    if dt.is_signed:
        hi = (<int64_t>1 << (bits - 1)) - 1
        return -hi - 1 <= iv <= hi
    hi = (<int64_t>1 << bits) - 1
    return -hi <= iv <= hi


cdef inline bint _number_bound(object v, dtype dt) except -1:
    """A clamp bound the fast path takes: None, or a float or int that ``dt``
    holds without PyTorch's overflow error."""
    if v is None:
        return True
    return (type(v) is float or type(v) is int) and _number_fits(v, dt)


def fast_clamp(x, lo, hi):
    """``x.clamp(lo, hi)`` for the front-end's common case, or None to take
    the general path: ``x`` a contiguous float32/float64 CPU tensor, the
    bounds Python floats or int64-range ints (one may be None).  The result
    has ``x``'s dtype (PyTorch's for a floating tensor and number bounds)."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x, out
    cdef dtype dt = t._dtype
    cdef char lob[16]
    cdef char hib[16]
    cdef char* ptrs[4]
    cdef Py_ssize_t strides[4]
    if t._storage.device._type_code != 0 or (dt.num != PT_FLOAT32 and dt.num != PT_FLOAT64) \
            or (lo is None and hi is None) or not _number_bound(lo, dt) or not _number_bound(hi, dt) \
            or not t._is_contig():
        return None
    _encode(-_INF if lo is None else lo, dt, lob)
    _encode(_INF if hi is None else hi, dt, hib)
    out = _empty_contig(dt, t._ndim, t._shape, _CPU, False)
    ptrs[0] = out._ptr()
    ptrs[1] = t._ptr()
    ptrs[2] = lob
    ptrs[3] = hib
    strides[0] = strides[1] = dt.itemsize
    strides[2] = strides[3] = 0
    _run_contig(ternary_loop(_CLAMP, dt.num), 4, ptrs, strides, t._numel)
    return out


def fast_lerp(a, b, weight):
    """``lerp(a, b, weight)`` for the front-end's common case, or None to take the
    general path: ``a`` and ``b`` contiguous float32/float64 CPU tensors of one dtype
    and shape, ``weight`` a Python float (the front-end checked that the dtype holds
    it).  The weight is rounded to the dtype, as the general loop's scalar operand."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase) \
            or type(weight) is not float:
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b, out
    cdef dtype dt = ta._dtype
    cdef char wbuf[16]
    cdef char* ptrs[4]
    cdef Py_ssize_t strides[4]
    if ta._storage.device._type_code != 0 or tb._storage.device._type_code != 0 \
            or ta._tf_counted == 2 or tb._tf_counted == 2 \
            or (dt.num != PT_FLOAT32 and dt.num != PT_FLOAT64) or tb._dtype is not dt \
            or not _same_shape(ta, tb) or not ta._is_contig() or not tb._is_contig():
        return None
    _encode(weight, dt, wbuf)
    out = _empty_contig(dt, ta._ndim, ta._shape, _CPU, False)
    ptrs[0] = out._ptr()
    ptrs[1] = ta._ptr()
    ptrs[2] = tb._ptr()
    ptrs[3] = wbuf
    strides[0] = strides[1] = strides[2] = dt.itemsize
    strides[3] = 0
    _run_contig(ternary_loop(_LERP, dt.num), 4, ptrs, strides, ta._numel)
    return out


cdef inline bint _same_shape(_TensorBase a, _TensorBase b) noexcept:
    cdef int i
    if a._ndim != b._ndim:
        return False
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i]:
            return False
    return True


def fast_where(cond, a, b):
    """``where(cond, a, b)`` for the front-end's common case, or None to take
    the general path: ``cond`` a bool CPU tensor, ``a`` and ``b`` CPU tensors
    of one dtype (not float16/bfloat16/complex32/uint16/uint32/uint64), or one
    of them a Python int/float of a category that keeps the other's dtype
    (the result's, as PyTorch's promotion gives).  Contiguous operands of one
    shape run the flat loop here; others (broadcast, strided) the general
    loop, which raises the shape errors."""
    if not isinstance(cond, _TensorBase):
        return None
    cdef _TensorBase tc = <_TensorBase>cond, t, u = None, out
    cdef object num_operand = None
    cdef bint a_t = isinstance(a, _TensorBase), b_t = isinstance(b, _TensorBase)
    cdef char sbuf[16]
    cdef char* ptrs[4]
    cdef Py_ssize_t strides[4]
    cdef loop_t f
    cdef int k
    if tc._dtype.num != PT_BOOL or tc._storage.device._type_code != 0:
        return None
    if a_t:
        t = <_TensorBase>a
        if b_t:
            u = <_TensorBase>b
        else:
            num_operand = b
    elif b_t:
        t = <_TensorBase>b
        num_operand = a
    else:
        return None
    cdef dtype dt = t._dtype
    if dt.num == PT_FLOAT16 or dt.num == PT_BFLOAT16 or dt.num == PT_COMPLEX32 \
            or t._storage.device._type_code != 0:
        return None
    f = ternary_loop(_WHERE, dt.num)
    if f == NULL:
        return None
    cdef bint dense = tc._is_contig() and t._is_contig() and _same_shape(t, tc)
    if u is not None:
        if u._dtype is not dt or u._storage.device._type_code != 0:
            return None
        dense = dense and u._is_contig() and _same_shape(u, tc)
    elif not _scalar_keeps(num_operand, dt._category) or not _number_fits(num_operand, dt):
        return None
    if not dense:
        # broadcast or strided operands: the general loop, with the arguments and
        # dtypes the front-end would give it (its checks all pass here)
        return run_ternary(_WHERE, a, b, cond, None, dt, dt, "where")
    if u is None:
        _encode(num_operand, dt, sbuf)
    out = _empty_contig(dt, tc._ndim, tc._shape, _CPU, False)
    ptrs[0] = out._ptr()
    strides[0] = dt.itemsize
    for k in range(1, 3):
        if a_t if k == 1 else b_t:
            ptrs[k] = (<_TensorBase>(a if k == 1 else b))._ptr()
            strides[k] = dt.itemsize
        else:
            ptrs[k] = sbuf
            strides[k] = 0
    ptrs[3] = tc._ptr()
    strides[3] = 1
    _run_contig(f, 4, ptrs, strides, tc._numel)
    return out


def fast_inplace(int op, a, b):
    """``a op= b`` for the common cases, or None to take the general path:
    ``a`` a contiguous CPU tensor (not float16/bfloat16/complex32) whose dtype
    the op keeps, ``b`` a CPU tensor of the same dtype whose shape broadcasts
    to ``a``'s (contiguous, same shape and not overlapping ``a``: the flat
    loop), or a Python int/float of a category that keeps the dtype.  The
    caller has done the autograd checks."""
    if not isinstance(a, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = None
    cdef dtype dt = ta._dtype
    cdef int cat = dt._category
    cdef loop_t f
    cdef int i
    if ta._storage.device._type_code != 0 or dt.num == PT_FLOAT16 or dt.num == PT_BFLOAT16 \
            or dt.num == PT_COMPLEX32 or not ta._is_contig():
        return None
    f = binary_loop(op, dt.num)
    if f == NULL or binary_out(op, dt.num) != dt.num:
        return None
    cdef ew_extra ex
    cdef int off
    if isinstance(b, _TensorBase):
        tb = <_TensorBase>b
        if tb._dtype is not dt or tb._storage.device._type_code != 0 or tb._ndim > ta._ndim:
            return None
        off = ta._ndim - tb._ndim
        for i in range(tb._ndim):
            if ta._shape[off + i] != tb._shape[i] and tb._shape[i] != 1:
                return None
        if off or not tb._is_contig() or tb._storage is ta._storage and not _same_view(ta, tb):
            # ``b`` broadcast to ``a`` (a gradient summed from a scalar, a bias row)
            # or strided: the strided loop, as the general path's (which also
            # settles an overlap of ``b`` with ``a``)
            _fill_extra(&ex, 0.0, 0.0, 0.0, 0, 0)
            return _run(2, op, [a, b], a, dt, dt, &ex, _ew_mod.BINARY_OPS[op], True)
        for i in range(ta._ndim):
            if ta._shape[i] != tb._shape[i]:
                _fill_extra(&ex, 0.0, 0.0, 0.0, 0, 0)
                return _run(2, op, [a, b], a, dt, dt, &ex, _ew_mod.BINARY_OPS[op], True)
    elif not _scalar_keeps(b, cat):
        return None
    _run_fast(f, ta, ta, tb, b)
    ptc_bump_version(ta)
    return a


def grad_buffer_add(int op, a, b, bint add=True):
    """``a += b`` for the autograd engine's input buffer (``op`` is add's code).

    ``a`` may be written only when nothing but the engine sees it: a dense
    contiguous tensor, not requiring grad, that is the only user of its whole
    storage (host memory ptcore allocated, or device memory), with ``b``'s
    dtype, device and shape.  Returns ``a`` when added here, ``False`` when
    ``a`` may be written but this loop does not cover it (the caller adds in
    place through ``add_``), or ``None`` when ``a`` must not be written (the
    caller adds out of place).  ``add=False``: only the checks (``False`` when
    ``a`` may be written), for an add that dispatch layers must see.  The
    caller checks ``a``'s Python references."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    cdef Storage st = ta._storage
    cdef dtype dt = ta._dtype
    cdef int i
    cdef loop_t f
    # two references: the tensor's and the local ``st``
    if ta._requires_grad or tb._dtype is not dt or ta._ndim != tb._ndim or tb._tf_counted == 2 \
            or Py_REFCNT(st) > 2 or ta._offset != 0 or st._nbytes != ta._numel * dt.itemsize \
            or (st._kind != 0 and st._kind != 3) or not ta._is_contig() \
            or tb._storage.device is not st.device and tb._storage.device != st.device:
        return None
    for i in range(ta._ndim):
        if ta._shape[i] != tb._shape[i]:
            return None
    if not add or st.device._type_code != 0 or dt.num == PT_FLOAT16 or dt.num == PT_BFLOAT16 \
            or dt.num == PT_COMPLEX32 or not tb._is_contig():
        return False
    f = binary_loop(op, dt.num)
    if f == NULL or binary_out(op, dt.num) != dt.num:
        return False
    _run_fast(f, ta, ta, tb, None)
    ptc_bump_version(ta)
    return a


cdef void _run_flat(loop_t f, int nop, char** ptrs, Py_ssize_t* strides, Py_ssize_t n,
                    ew_extra* e) noexcept nogil:
    cdef ew_iter it
    it.nop = nop
    it.ndim = 1
    it.shape[0] = n
    cdef int k
    for k in range(nop):
        it.ptrs[k] = ptrs[k]
        it.strides[k][0] = strides[k]
        it.itemsize[k] = strides[k] if strides[k] else 1
    ew_apply(&it, f, e)
