# cython: language_level=3
"""Multi-tensor elementwise loops under ``ptcore._foreach_*``: one call runs
an elementwise kernel of ``_ew`` over every tensor of the lists, where the
per-tensor ops cost a Python call and its checks each (optimizers, EMA
updates and gradient clipping call them on hundreds of small tensors).

Only the common case runs here: contiguous CPU float32/float64 tensors, the
operands of each tensor's op of its dtype and shape, Python numbers that keep
that dtype, nothing that autograd records.  Everything is checked before
anything is written; a call that does not qualify returns None and the
caller loops over the per-tensor ops.  Both give the same values: the same
loops on the same operands (numbers converted to the dtype as the
elementwise driver converts them).
"""
from cython.parallel cimport prange
from libc.string cimport memcpy, memset
from libc.float cimport FLT_MAX, DBL_MAX

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._ops.kernels._ew cimport (ew_extra, loop_t, unary_loop, binary_loop, ternary_loop,
                              unary_out, binary_out)
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, ptc_bump_version, _empty_contig
from ptcore import _tensor as _C

cdef object _CPU = _C._to_device("cpu")

cdef enum:
    _MAX_OPS = 4            # output + up to three inputs


cdef inline bint _number_ok(object v, int num):
    """A Python float or int that converts to dtype ``num`` exactly as the
    driver's scalar operands do (no overflow, no int rounding questions)."""
    cdef double d
    if type(v) is float:
        d = <double>v
        return -FLT_MAX <= d <= FLT_MAX if num == PT_FLOAT32 else -DBL_MAX <= d <= DBL_MAX
    return type(v) is int and -16777216 <= v <= 16777216


cdef inline bint _tensor_ok(object o, _TensorBase ref, bint grad_on):
    """``o`` a contiguous CPU tensor of ``ref``'s dtype and shape (``ref``
    None: a float32/float64 one), not one autograd would record."""
    if not isinstance(o, _TensorBase):
        return False
    cdef _TensorBase t = <_TensorBase>o
    cdef int i
    if t._storage.device._type_code != 0 or not t._is_contig() or (grad_on and t._requires_grad):
        return False
    if ref is None:
        return t._dtype.num == PT_FLOAT32 or t._dtype.num == PT_FLOAT64
    if t._dtype is not ref._dtype or t._ndim != ref._ndim:
        return False
    for i in range(t._ndim):
        if t._shape[i] != ref._shape[i]:
            return False
    return True


cdef inline bint _target_ok(_TensorBase t, bint grad_on, bint inference_check):
    """``t`` may be written in place here: outside inference mode not an
    inference tensor (the per-tensor op raises), with grad mode on not a
    view (the per-tensor op checks views made without grad)."""
    if inference_check and t._storage._inference:
        return False
    return not (grad_on and t._view_base is not None)


cdef inline object _item(object entry, Py_ssize_t i):
    """Operand ``i`` of an entry that is a sequence (one per tensor) or a number."""
    if type(entry) is list or type(entry) is tuple:
        return entry[i]
    return entry


cdef loop_t _loop_of(int kind, int op, int num) noexcept:
    """The loop of ``op`` for dtype ``num`` whose result keeps that dtype, or NULL."""
    if kind == 1:
        return unary_loop(op, num) if unary_out(op, num) == num else NULL
    if kind == 2:
        return binary_loop(op, num) if binary_out(op, num) == num else NULL
    return ternary_loop(op, num)


cdef void _run_part(loop_t f, int nop, char** ptrs, Py_ssize_t* strides, Py_ssize_t lo,
                    Py_ssize_t hi, ew_extra* e) noexcept nogil:
    cdef char* p[_MAX_OPS]
    cdef int k
    for k in range(nop):
        p[k] = ptrs[k] + lo * strides[k]
    f(p, strides, hi - lo, e)


cdef void _run(loop_t f, int nop, char** ptrs, Py_ssize_t* strides, Py_ssize_t n,
               ew_extra* e, int nt) noexcept nogil:
    """The loop over n elements, in chunks over ``nt`` threads when large
    (elementwise: the chunks give the same values)."""
    cdef Py_ssize_t chunk, c, nchunks
    if nt <= 1 or n < parallel_grain():
        f(ptrs, strides, n, e)
        return
    chunk = (((n + nt - 1) // nt) + 63) & ~(<Py_ssize_t>63)
    nchunks = (n + chunk - 1) // chunk
    for c in prange(nchunks, num_threads=nt, schedule="static"):
        _run_part(f, nop, ptrs, strides, c * chunk, min(n, (c + 1) * chunk), e)


def run(int kind, int op, list operands, extra, bint inplace, bint grad_on,
        bint inference_check):
    """Loop ``op`` of ``_ew`` (``kind`` 1 unary, 2 binary, 3 ternary) over
    the tensors ``operands[0]``; ``operands[k]`` (k >= 1) is input k: a list
    or tuple of tensors or of numbers (one per tensor) or a number.
    ``extra``: the loop's parameter d0 (alpha, value): a number, a list of
    them (one per tensor) or None.  ``grad_on``: grad mode is on;
    ``inference_check``: outside inference mode.

    Returns a list of new tensors, ``True`` when done in place (the version
    counters bumped), or None when the call is not the common case (nothing
    written)."""
    cdef object first = operands[0]
    cdef Py_ssize_t n = len(first), i
    cdef int nin = len(operands), k, num, nt
    cdef _TensorBase t, o, x
    cdef loop_t f
    cdef object v
    if n == 0 or nin > _MAX_OPS - 1:
        return None
    # every check first: nothing is written unless the whole call runs here
    for i in range(n):
        v = first[i]
        if not _tensor_ok(v, None, grad_on):
            return None
        t = <_TensorBase>v
        if _loop_of(kind, op, t._dtype.num) == NULL:
            return None
        if inplace and not _target_ok(t, grad_on, inference_check):
            return None
        for k in range(1, nin):
            v = _item(operands[k], i)
            if isinstance(v, _TensorBase):
                if not _tensor_ok(v, t, grad_on):
                    return None
                x = <_TensorBase>v
                if inplace and x._storage is t._storage and x._offset != t._offset:
                    return None         # overlapping operands: the per-tensor op decides
            elif not _number_ok(v, t._dtype.num):
                return None
        if extra is not None and not _number_ok(_item(extra, i), PT_FLOAT64):
            return None
    cdef list outs = None if inplace else []
    cdef char* ptrs[_MAX_OPS]
    cdef Py_ssize_t strides[_MAX_OPS]
    cdef char sbuf[_MAX_OPS][8]
    cdef ew_extra e
    memset(&e, 0, sizeof(e))
    nt = get_num_threads()
    for i in range(n):
        t = <_TensorBase>first[i]
        num = t._dtype.num
        if inplace:
            o = t
        else:
            o = _empty_contig(t._dtype, t._ndim, t._shape, _CPU, False)
            outs.append(o)
        if t._numel == 0:
            if inplace:
                ptc_bump_version(t)
            continue
        ptrs[0] = o._ptr()
        ptrs[1] = t._ptr()
        strides[0] = strides[1] = t._dtype.itemsize
        for k in range(1, nin):
            v = _item(operands[k], i)
            if isinstance(v, _TensorBase):
                ptrs[k + 1] = (<_TensorBase>v)._ptr()
                strides[k + 1] = t._dtype.itemsize
            else:
                if num == PT_FLOAT32:
                    (<float*>sbuf[k])[0] = <float><double>v
                else:
                    (<double*>sbuf[k])[0] = <double>v
                ptrs[k + 1] = sbuf[k]
                strides[k + 1] = 0
        if extra is not None:
            e.d0 = <double>_item(extra, i)
        f = _loop_of(kind, op, num)
        ptc_kernel_enter()
        with nogil:
            try:
                _run(f, nin + 1, ptrs, strides, t._numel, &e, nt)
            finally:
                ptc_kernel_exit()
        if inplace:
            ptc_bump_version(t)
    return True if inplace else outs


def zero_(tensors, bint grad_on, bint inference_check):
    """Zero every tensor of ``tensors`` (contiguous CPU tensors of any dtype:
    zero bits are every dtype's zero); False when they do not qualify
    (nothing written)."""
    cdef _TensorBase t
    cdef char* d
    cdef Py_ssize_t nb
    for v in tensors:
        if not isinstance(v, _TensorBase) or not _same_meta(<_TensorBase>v, <_TensorBase>v, grad_on) \
                or not _target_ok(<_TensorBase>v, grad_on, inference_check):
            return False
    for v in tensors:
        t = <_TensorBase>v
        d = t._ptr()
        nb = t._numel * t._dtype.itemsize
        if nb:
            ptc_kernel_enter()
            with nogil:
                try:
                    memset(d, 0, nb)
                finally:
                    ptc_kernel_exit()
        ptc_bump_version(t)
    return True


def copy_(tensors, src, bint grad_on, bint inference_check):
    """``tensors[i].copy_(src[i])`` for contiguous CPU tensors, each pair of
    one dtype and shape and not partly overlapping (a byte copy); False when
    they do not qualify (nothing written)."""
    cdef _TensorBase t, s
    cdef char* d
    cdef char* sp
    cdef Py_ssize_t i, nb, n = len(tensors)
    if len(src) != n:
        return False
    for i in range(n):
        if not isinstance(tensors[i], _TensorBase) or not isinstance(src[i], _TensorBase):
            return False
        t = <_TensorBase>tensors[i]
        s = <_TensorBase>src[i]
        if not _same_meta(t, t, grad_on) or not _same_meta(s, t, grad_on) \
                or not _target_ok(t, grad_on, inference_check) \
                or (s._storage is t._storage and s._offset != t._offset):
            return False
    for i in range(n):
        t = <_TensorBase>tensors[i]
        s = <_TensorBase>src[i]
        d = t._ptr()
        sp = s._ptr()
        nb = t._numel * t._dtype.itemsize
        if nb and sp != d:
            ptc_kernel_enter()
            with nogil:
                try:
                    memcpy(d, sp, nb)
                finally:
                    ptc_kernel_exit()
        ptc_bump_version(t)
    return True


cdef bint _same_meta(_TensorBase s, _TensorBase t, bint grad_on):
    """``s`` a contiguous CPU tensor of ``t``'s dtype and shape (any dtype),
    not one autograd would record."""
    cdef int i
    if s._storage.device._type_code != 0 or not s._is_contig() or s._dtype is not t._dtype \
            or s._ndim != t._ndim or (grad_on and s._requires_grad):
        return False
    for i in range(s._ndim):
        if s._shape[i] != t._shape[i]:
            return False
    return True
