# cython: language_level=3, boundscheck=False, wraparound=False
"""The dense fast paths of CUDA's elementwise add/sub/mul/div (and the other binary
ops of ``TENSOR_ONLY_BINARY``, the unary ops of ``UNARY_OPS``), in C.

``a + b``, ``ptcore.mul(a, 2.0)``, ``p.add_(g, alpha=-lr)`` ... on dense
floating CUDA tensors of one dtype, shape and device (or a tensor and a
Python int/float) are what training loops issue most.  The kernels'
Python dense paths (:func:`ptcore.cuda.ops.launch._dense_binary`,
``_dense_scalar``, ``_dense_inplace``) do these with the same kernels and
arguments; here the checks, the result's allocation, the kernel handle
lookup and the launch happen in C, called from the core's operator fast
path (:func:`ptcore._ops.kernels._ewdrv.fast_binary` / ``fast_inplace``), where
:func:`install` registers them for the cuda device type.  Anything else
(broadcasting, another dtype, a view, ``out=``, a missing launcher) returns
None and takes the general path, which raises the errors.
"""
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uintptr_t
from libc.string cimport memcpy, memset

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase, dtype, ptc_bump_version
from ptcore._ops.kernels._types cimport PT_MAX_DIMS
from ptcore.cuda.runtime.device_storage cimport (_dense_float_cuda, _dense_like, _dense_like_as,
                                                 _dense_shaped, _same_strides_like)
from ptcore.cuda.driver.fast_launch cimport KernelLauncher

from functools import partial

from ptcore import _tensor as _C
from ptcore._dispatch.declarations import DECLARED
from ptcore._dispatch.device import register_driver_fast_paths, register_fast_form
from ptcore.autograd import _record
from ptcore.autograd._formulas import FORMULAS
from ptcore.autograd._record import (device_fast_clamp, device_fast_inplace_unary,
                                     device_fast_masked_fill, device_fast_reflected,
                                     device_fast_reflected_nograd,
                                     device_fast_rtruediv, device_fast_where)
from ptcore._ops.kernels import _ew as _ew_mod
from ptcore._ops.reduction import _aminmax_t
from ptcore.cuda.kernels import library as _kernels
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.ops import reduce as _launch_reduce
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.ops import tensors as _tensors
from ptcore.cuda.ops import index as _index
from ptcore.cuda.ops import special as _special
from ptcore.cuda.ops.strided_args import strided_arg

__all__ = ["install", "uninstall", "UNARY_OPS", "TENSOR_ONLY_BINARY", "unary_inplace", "clamp",
           "rsub_number", "masked_fill_number", "where_tensors", "convert_dense", "clone_dense",
           "activation", "softmax_lastdim", "layer_norm_rows", "reduce_all", "reduce",
           "reflected_number", "INT_BINARY", "pair_reduce", "binary_params", "unary_params",
           "ternary_params", "act_backward", "run_reduce", "special_unary",
           "fill_like"]

cdef dict _state = _runtime._state      # updated in place, never rebound
cdef object _stream_of = _runtime.current_stream_handle
cdef unsigned _BLOCK = _launch._BLOCK
# ewdrv binary op index -> the op's kernel name (add, sub, mul, div and the
# comparisons, whose result is bool; None for the others)
_CMP = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))
# the other binary ops whose front-end, on two floating tensors of one dtype
# and shape, is their plain ``binary`` kernel (no scalar kernel: a number
# operand takes the general path)
TENSOR_ONLY_BINARY = frozenset(("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign",
                                "remainder", "fmod", "div_floor", "xlogy"))
# the bitwise binary ops: their kernels take two integer tensors of one dtype
# (or, but for the shifts, two bool ones), as the front-ends run them on such
# operands; a number operand takes the general path
INT_BINARY = frozenset(("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"))
_SHIFTS = frozenset(("left_shift", "right_shift"))
cdef list _OPS = [n if n in ("add", "sub", "mul", "div", "pow") or n in _CMP
                  or n in TENSOR_ONLY_BINARY or n in INT_BINARY else None for n in _ew_mod.BINARY_OPS]
cdef dtype _BOOL = _C.bool_
# the integer dtypes with CUDA kernels (the kernel library's: not uint16/32/64)
cdef frozenset _INT_DTYPES = frozenset((_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64))
cdef Py_ssize_t _NOPS = len(_OPS)
# ewdrv unary op index -> the op's kernel name, for the unary ops whose
# front-end, on a real floating tensor and no out=, is the plain ``unary``
# kernel with no parameters and the input's dtype (_make_float_unary,
# _same_unary, neg, square in ptcore._ops.pointwise)
UNARY_OPS = frozenset(("neg", "abs", "sign", "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2",
                       "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
                       "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc",
                       "erfinv", "lgamma", "digamma", "deg2rad", "rad2deg", "i0", "frac", "floor",
                       "ceil", "trunc", "relu"))
# bitwise_not: its kernel on an integer or bool tensor (the result of its dtype)
_INT_UNARY = frozenset(("bitwise_not",))
cdef list _UOPS = [n if n in UNARY_OPS or n in _INT_UNARY else None for n in _ew_mod.UNARY_OPS]
# the complex64/complex128 forms: the ops of UNARY_OPS whose front-end on a
# complex tensor is the complex kernel library's plain ``unary`` kernel
# (ptcore/cuda/kernels/complex.py), and the dtype it writes (0: the input's,
# 1: its real dtype); the binary ops of two complex tensors of one dtype
# (the comparisons write bool)
cdef dict _CPLX_UNARY = {n: 0 for n in ("neg", "square", "reciprocal", "exp", "log", "sqrt", "rsqrt", "sin",
                                        "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                                        "asinh", "acosh", "atanh", "sigmoid")}
_CPLX_UNARY["abs"] = 1
cdef frozenset _CPLX_BINARY = frozenset(("add", "sub", "mul", "div", "pow", "eq", "ne"))
cdef dtype _C64 = _C.complex64
cdef dtype _C128 = _C.complex128
cdef Py_ssize_t _NUOPS = len(_UOPS)
cdef dict _handles = {}                 # (family, op, dtype, device) -> (driver, function, grid cap)


cdef tuple _handle(int family, object op, dtype dt, Py_ssize_t idx, object drv):
    """The kernel's ``(driver, function handle, grid cap)`` on device ``idx``
    for the current driver (loaded on first use, as ``_launch._entry``)."""
    key = (family, op, dt, idx)
    e = _handles.get(key)
    if e is not None and (<tuple>e)[0] is drv:
        return <tuple>e
    if family == _FAM_BINARY:
        name = _launch._dense_name("binary", op, dt)
    elif family == _FAM_ALPHA:
        name = _launch._dense_name("binary", "add_alpha", dt)
    elif family == _FAM_BINARY_S:
        name = _kernels.kernel_name("binary", op, (_launch._tag(dt, op),), "s")
    elif family == _FAM_TERNARY or family == _FAM_TERNARY_S:
        name = _kernels.kernel_name("ternary", op, (_launch._tag(dt, op),),
                                    "c" if family == _FAM_TERNARY else "s")
    elif family == _FAM_UNARY:
        name = _launch._dense_name("unary", op, dt)
    elif family == _FAM_UNARY_S:
        name = _kernels.kernel_name("unary", op, (_launch._tag(dt, op),), "s")
    elif family == _FAM_SCALAR_S:
        name = _kernels.kernel_name("scalar", op, (_launch._tag(dt, op),), "s")
    elif family == _FAM_REDUCE or family == _FAM_COLUMN:
        tag = _launch._tag(dt, op)
        name = f"ptc_reduce_{op}_{tag}_{tag}_{'c' if family == _FAM_REDUCE else 'k'}"
    elif family == _FAM_NAMED:
        name = op
    elif family == _FAM_COPY or family == _FAM_COPY_STRIDED:
        tag = _launch._tag(dt, "copy_")
        name = f"ptc_cast_{tag}_{tag}_{'c' if family == _FAM_COPY else 's'}"
    else:
        name = _launch._dense_name("scalar", op, dt)
    e = _launch._entry(idx, name)
    _handles[key] = e
    return <tuple>e


cdef int _run(tuple e, Py_ssize_t idx, Py_ssize_t n, void** params, bint rows=False) except -1:
    """Launch handle ``e`` over ``n`` elements (``rows``: over ``n`` rows, a
    block of 128 threads each, as ``_launch._launch(rows=True)``) on device
    ``idx``'s current stream (the device made current by the caller's
    allocation or here)."""
    drv = e[0]
    cdef KernelLauncher launcher = <KernelLauncher>drv.launcher
    cdef Py_ssize_t cap = e[2]
    cdef unsigned block = 128 if rows else _BLOCK
    cdef Py_ssize_t grid = n if rows else (n + _BLOCK - 1) // _BLOCK
    if grid > cap:
        grid = cap
    if grid < 1:
        grid = 1
    cdef uintptr_t stream = <uintptr_t>_stream_of(idx)
    cdef int rc = launcher.launch_c(<uintptr_t>e[1], <unsigned>grid, block, stream, params)
    if rc:
        drv.launch_failed(rc, e[1])
    return 0


cdef int _run_unary(tuple e, Py_ssize_t idx, long long n, void* out_p, void* x_p,
                    ptc_params* p) except -1:
    """Launch the unary-family handle ``e`` over ``n`` elements: ``out =
    op(x)`` with parameters ``p`` (the same pointer twice: in place)."""
    cdef unsigned long long o = <uintptr_t>out_p, i = <uintptr_t>x_p
    cdef void* kp[4]
    kp[0] = &n
    kp[1] = &o
    kp[2] = &i
    kp[3] = p
    return _run(e, idx, n, kp)


cdef int _run_two(tuple e, Py_ssize_t idx, _TensorBase out, _TensorBase a, _TensorBase b,
                  ptc_params* p) except -1:
    """Launch the two-operand contiguous handle ``e`` over ``out``'s
    elements: ``out = op(a, b)`` with parameters ``p``."""
    cdef long long n64 = out._numel
    cdef unsigned long long ptrs[3]
    cdef void* kp[5]
    ptrs[0] = <uintptr_t>out._ptr()
    ptrs[1] = <uintptr_t>a._ptr()
    ptrs[2] = <uintptr_t>b._ptr()
    kp[0] = &n64
    kp[1] = &ptrs[0]
    kp[2] = &ptrs[1]
    kp[3] = &ptrs[2]
    kp[4] = p
    return _run(e, idx, n64, kp)


cdef bint _pair(_TensorBase a, _TensorBase b) noexcept:
    """``a`` dense floating on a cuda device and ``b`` contiguous of its
    dtype, shape and device.  (Tensor subclasses, nn.Parameter say, are
    fine: one that takes part in ``__torch_function__`` turns that layer
    on, and no call comes here while a layer is on.)"""
    return _dense_float_cuda(a) and _same_dense(a, b)


cdef bint _same_dense(_TensorBase a, _TensorBase b) noexcept:
    """``a`` contiguous on a cuda device and ``b`` contiguous of its dtype,
    shape and device."""
    cdef int i
    if b._dtype is not a._dtype or b._ndim != a._ndim or not a._is_contig() \
            or a._storage.device._type_code != 1 \
            or not b._is_contig() or b._storage.device._type_code != 1 \
            or b._storage.device._idx != a._storage.device._idx:
        return False
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i]:
            return False
    return True


cdef inline bint _cplx_cuda(_TensorBase t) noexcept:
    """``t`` a complex64/complex128 tensor on a cuda device (complex32
    computes through complex64 copies: the general path)."""
    return (t._dtype is _C64 or t._dtype is _C128) and t._storage.device._type_code == 1


cdef bint _int_kernel(str name, dtype dt) noexcept:
    """Whether bitwise op ``name`` has a kernel of ``dt`` (an integer dtype,
    or bool for all but the shifts)."""
    return dt in _INT_DTYPES or (dt is _BOOL and name not in _SHIFTS)


cdef bint _int_operands(str name, _TensorBase a, _TensorBase b) noexcept:
    """``a`` and ``b`` tensors of one dtype that bitwise op ``name`` has a
    kernel of, on one cuda device (any shapes and strides)."""
    return a._dtype is b._dtype and _int_kernel(name, a._dtype) and a._storage.device._type_code == 1 \
        and _on_device_of(b, a)


cdef inline object _launcher_driver():
    """The driver when it launches through a C launcher, else None."""
    drv = _state["driver"]
    if drv is None or not isinstance(drv.launcher, KernelLauncher):
        return None
    return drv


cdef _TensorBase _unary_into(tuple e, _TensorBase t, _TensorBase res, ptc_params* p):
    """Queue the one-operand kernel ``e`` from ``t`` into the new dense ``res``
    (nothing for an empty one); ``res``."""
    if res._numel:
        _run_unary(e, t._storage.device._idx, res._numel, res._ptr(), t._ptr(), p)
    return res


cdef tuple _kernel(int family, object name, _TensorBase a):
    """The handle of ``name``'s kernel of ``family`` for ``a``'s dtype and
    device, or None when the driver launches without a C launcher."""
    drv = _launcher_driver()
    if drv is None:
        return None
    return _handle(family, name, a._dtype, a._storage.device._idx, drv)


cdef bint _number(object v, double* out):
    """``out[0] = float(v)`` for a Python int or float (not a bool, not an
    int too large for a double); False otherwise."""
    tv = type(v)
    if tv is not float and tv is not int:
        return False
    try:
        out[0] = float(v)
    except OverflowError:
        return False
    return True


cdef bint _float_operands(_TensorBase a, _TensorBase b) noexcept:
    """``a`` and ``b`` floating tensors of one dtype on one cuda device (any
    shapes and strides)."""
    return a._dtype is b._dtype and a._dtype._category == 2 and a._storage.device._type_code == 1 \
        and b._storage.device._type_code == 1 and a._storage.device._idx == b._storage.device._idx


cdef int _broadcast(_TensorBase a, _TensorBase b, Py_ssize_t* shape) noexcept:
    """``a`` and ``b``'s broadcast shape into ``shape``: its dims, or -1
    when they do not broadcast (the general path raises the error) or
    exceed 8 dims."""
    return _broadcast_shapes(a._ndim, a._shape, b._ndim, b._shape, shape)


cdef bint _broadcasts_to(_TensorBase b, _TensorBase a) noexcept:
    """``b`` broadcasts to ``a``'s shape (not beyond it)."""
    cdef int i, ib
    if b._ndim > a._ndim:
        return False
    for i in range(b._ndim):
        ib = a._ndim - b._ndim + i
        if b._shape[i] != 1 and b._shape[i] != a._shape[ib]:
            return False
    return True


cdef int _overlaps(_TensorBase b, _TensorBase a) except -1:
    """1 when the bytes ``b`` can reach meet contiguous ``a``'s, else 0.  The data
    pointers are taken here: a tensor whose storage shrank below its extent
    raises (``_ptr``) before any kernel is queued."""
    cdef unsigned long long lo = <uintptr_t>b._ptr(), hi, alo = <uintptr_t>a._ptr()
    cdef unsigned long long ahi = alo + <unsigned long long>(a._numel * a._dtype.itemsize)
    cdef long long ext = 0
    cdef int i
    if b._numel == 0 or a._numel == 0:
        return False
    for i in range(b._ndim):
        if b._shape[i] > 1:
            if b._strides[i] < 0:
                return True             # (not made by ptcore's views; the general path)
            ext += (b._shape[i] - 1) * b._strides[i]
    hi = lo + <unsigned long long>((ext + 1) * b._dtype.itemsize)
    return lo < ahi and alo < hi


cdef int _launch_strided(tuple e, tuple ec, Py_ssize_t idx, _TensorBase out, _TensorBase a,
                         _TensorBase b, ptc_params* p) except -1:
    """``out = op(a, b)`` over out's shape, a and b broadcast to it: the
    contiguous kernel ``ec`` when every operand walks it densely, else the
    strided one ``e`` with its ``ptc_strided<3>`` argument."""
    return _launch_strided_n(e, ec, idx, out, (a, b), p)


cdef int _launch_strided_n(tuple e, tuple ec, Py_ssize_t idx, _TensorBase out, tuple ins,
                           ptc_params* p) except -1:
    """``out = op(*ins)`` (one to three tensors broadcast to out's shape),
    as :func:`_launch_strided`."""
    cdef long long n64 = out._numel
    cdef unsigned long long ptrs[4]
    cdef void* kp[7]
    cdef Py_ssize_t k, nin = len(ins)
    if n64 == 0:
        return 0
    if nin < 1 or nin > 3:
        raise ValueError("one to three inputs")
    st = strided_arg(out, ins)
    ptrs[0] = <uintptr_t>out._ptr()
    for k in range(nin):
        ptrs[k + 1] = <uintptr_t>(<_TensorBase>ins[k])._ptr()
    kp[0] = &n64
    for k in range(nin + 1):
        kp[k + 1] = &ptrs[k]
    kp[nin + 2] = p
    if st is None:
        return _run(ec, idx, n64, kp)
    cdef bytes sb = <bytes>st
    kp[nin + 3] = <void*><char*>sb
    return _run(e, idx, n64, kp)


cdef int _broadcast_shapes(int na, Py_ssize_t* sa, int nb, Py_ssize_t* sb, Py_ssize_t* out) noexcept:
    """The broadcast of shapes ``sa`` and ``sb`` into ``out`` (which may be
    ``sa``): its dims, or -1 when they do not broadcast or exceed 8 dims."""
    cdef int nd = na if na > nb else nb
    cdef int i, ia, ib
    cdef Py_ssize_t x, y
    cdef Py_ssize_t tmp[PT_MAX_DIMS]
    if nd > 8:
        return -1
    for i in range(nd):
        ia = i - (nd - na)
        ib = i - (nd - nb)
        x = sa[ia] if ia >= 0 else 1
        y = sb[ib] if ib >= 0 else 1
        if x != y and x != 1 and y != 1:
            return -1
        tmp[i] = y if x == 1 else x
    for i in range(nd):
        out[i] = tmp[i]
    return nd


cdef bint _on_device_of(_TensorBase t, _TensorBase like) noexcept:
    return t._storage.device._type_code == 1 and t._storage.device._idx == like._storage.device._idx


def masked_fill_number(x, mask, value, bint inplace):
    """``x.masked_fill(mask, value)`` (``masked_fill_`` when ``inplace``)
    for a dense floating CUDA ``x``, a bool ``mask`` on its device that
    broadcasts to x's shape (and lies apart from x), and a Python int/float
    ``value`` x's dtype holds: the masked_fill kernel (strided when the mask
    broadcasts) into a new tensor or x; else None."""
    if not isinstance(x, _TensorBase) or not isinstance(mask, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x, m = <_TensorBase>mask
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    if not _dense_float_cuda(t) or m._dtype is not _BOOL or not _on_device_of(m, t) \
            or not _broadcasts_to(m, t) or not _bound(value, t._dtype, &p.d0, 0.0):
        return None
    if inplace and _overlaps(m, t):
        return None
    cdef tuple e = _kernel(_FAM_BINARY_S, "masked_fill", t)
    if e is None:
        return None
    cdef tuple ec = _kernel(_FAM_BINARY, "masked_fill", t)
    cdef _TensorBase res = t if inplace else _dense_like(t)
    cdef Py_ssize_t idx = t._storage.device._idx
    e[0].set_current(idx)
    _launch_strided_n(e, ec, idx, res, (t, m), &p)
    if inplace:
        ptc_bump_version(t)
    return res


def where_tensors(cond, x, y):
    """``ptcore.where(cond, x, y)`` for floating (or complex64/complex128)
    CUDA tensors ``x``, ``y`` of one dtype and a bool ``cond``, all on one device, in any shapes that
    broadcast (up to 8 dims) and layouts: the where kernel into a new
    contiguous tensor; else None."""
    if not isinstance(cond, _TensorBase) or not isinstance(x, _TensorBase) \
            or not isinstance(y, _TensorBase):
        return None
    cdef _TensorBase c = <_TensorBase>cond, a = <_TensorBase>x, b = <_TensorBase>y
    if not (_float_operands(a, b) or (_cplx_cuda(a) and b._dtype is a._dtype and _on_device_of(b, a))) \
            or c._dtype is not _BOOL or not _on_device_of(c, a):
        return None
    cdef Py_ssize_t shape[PT_MAX_DIMS]
    cdef int nd = _broadcast_shapes(a._ndim, a._shape, b._ndim, b._shape, shape)
    if nd < 0:
        return None
    nd = _broadcast_shapes(nd, shape, c._ndim, c._shape, shape)
    if nd < 0:
        return None
    cdef tuple e = _kernel(_FAM_TERNARY_S, "where", a)
    if e is None:
        return None
    cdef tuple ec = _kernel(_FAM_TERNARY, "where", a)
    cdef _TensorBase res = _dense_shaped(a, a._dtype, nd, shape)
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    _launch_strided_n(e, ec, a._storage.device._idx, res, (c, a, b), &p)
    return res


cdef object _broadcast_binary(str name, _TensorBase a, _TensorBase b):
    """``op(a, b)`` of two floating (or complex) tensors of one dtype and device, of
    other shapes or layouts (``x + bias``, ``x * mask[:, None]``): the
    binary kernel's strided variant, or None (the general path)."""
    cdef Py_ssize_t shape[PT_MAX_DIMS]
    cdef int nd = _broadcast(a, b, shape)
    if nd < 0:
        return None
    cdef tuple e = _kernel(_FAM_BINARY_S, name, a)
    if e is None:
        return None
    cdef tuple ec = _kernel(_FAM_BINARY, name, a)
    cdef _TensorBase res = _dense_shaped(a, _BOOL if name in _CMP else a._dtype, nd, shape)
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    _launch_strided(e, ec, a._storage.device._idx, res, a, b, &p)
    return res


cdef object cuda_binary(int op, _TensorBase a, object b, bint any_grad):
    """``op(a, b)`` for two dense tensors of one floating dtype, shape and
    device, or a dense floating tensor and a Python int/float, or two complex
    tensors of one dtype (``_CPLX_BINARY``); else None.  The comparisons give
    a bool tensor (their kernels' output)."""
    if op < 0 or op >= _NOPS:
        return None
    name = _OPS[op]
    if name is None:
        return None
    cdef _TensorBase tb = None
    cdef ptc_params p
    cdef long long n64
    cdef unsigned long long out_p, a_p, b_p
    cdef void* kp[5]
    cdef int family
    cdef double d0 = 0.0
    if isinstance(b, _TensorBase):
        tb = <_TensorBase>b
        if not any_grad and (a._requires_grad or tb._requires_grad):
            return None
        if name in INT_BINARY:
            if not _int_operands(name, a, tb):
                return None
            if not _same_dense(a, tb):
                return _broadcast_binary(name, a, tb)
        elif not _pair(a, tb):
            if _float_operands(a, tb):
                return _broadcast_binary(name, a, tb)
            if name not in _CPLX_BINARY or not _cplx_cuda(a) or tb._dtype is not a._dtype \
                    or not _on_device_of(tb, a):
                return None
            if not _same_dense(a, tb):      # complex operands of other shapes or layouts
                return _broadcast_binary(name, a, tb)
        family = _FAM_BINARY
    elif name in INT_BINARY:
        return None
    elif _number(b, &d0):
        if (not any_grad and a._requires_grad) or name in TENSOR_ONLY_BINARY:
            return None
        if not _dense_float_cuda(a):
            return _strided_scalar(name, a, d0)
        family = _FAM_SCALAR
    else:
        return None
    cdef tuple e = _kernel(family, name, a)
    if e is None:
        return None
    cdef Py_ssize_t idx = a._storage.device._idx
    cdef _TensorBase res = _dense_like_as(a, _BOOL) if name in _CMP else _dense_like(a)
    n64 = res._numel
    if n64:
        memset(&p, 0, sizeof(p))
        p.d0 = d0
        out_p = <uintptr_t>res._ptr()
        a_p = <uintptr_t>a._ptr()
        kp[0] = &n64
        kp[1] = &out_p
        kp[2] = &a_p
        if family == _FAM_BINARY:
            b_p = <uintptr_t>tb._ptr()
            kp[3] = &b_p
            kp[4] = &p
        else:
            kp[3] = &p
        _run(e, idx, res._numel, kp)
    return res


cdef bint _row_major_or_expanded(_TensorBase t) noexcept:
    """``t``'s dims of size > 1 and a stride other than 0 have positive
    strides in strictly decreasing order (a slice or a step of a contiguous
    tensor, expanded along some dims -- a gradient ``g.expand(shape)``):
    a layout whose elementwise result is contiguous in torch's and the
    general path's result layout."""
    cdef Py_ssize_t last = 0
    cdef int i
    for i in range(t._ndim - 1, -1, -1):
        if t._shape[i] > 1 and t._strides[i] != 0:
            if t._strides[i] <= last:
                return False
            last = t._strides[i]
    return True


cdef object _strided_scalar(str name, _TensorBase a, double d0):
    """``name(a, number)`` for a floating CUDA ``a`` whose layout
    ``_row_major_or_expanded`` takes (``x.real > 0``, ``x[:, ::2] * 2``): the
    strided scalar kernel into a new contiguous result (bool for the
    comparisons: the general path's kernel and result); else None."""
    if a._dtype._category != 2 or a._storage.device._type_code != 1 \
            or not _row_major_or_expanded(a):
        return None
    cdef tuple ec = _kernel(_FAM_SCALAR, name, a)
    if ec is None:
        return None
    cdef tuple es = _kernel(_FAM_SCALAR_S, name, a)
    cdef _TensorBase res = _dense_like_as(a, _BOOL) if name in _CMP else _dense_like(a)
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    p.d0 = d0
    try:
        _launch_strided_n(es, ec, a._storage.device._idx, res, (a,), &p)
    except ValueError:                  # more dims than the strided kernels take
        return None
    return res


cdef object cuda_inplace(int op, _TensorBase a, object b, object alpha):
    """``a op= b`` (``a += alpha * b`` for add/sub with a number ``alpha``)
    for a dense floating ``a`` and a Python int/float or a dense tensor of
    its dtype, shape and device that is ``a`` or does not overlap it;
    returns ``a`` (its version bumped), else None.  Autograd's checks are
    the caller's: it comes here only when nothing records."""
    if op < 0 or op >= _NOPS:
        return None
    name = _OPS[op]
    if name is None or name in _CMP:
        return None
    cdef bint number_ok = True
    if name in INT_BINARY:
        # ``i &= j``: a tensor operand of a's integer (bool) dtype
        if not isinstance(b, _TensorBase) or not _int_operands(name, a, <_TensorBase>b) \
                or not a._is_contig():
            return None
        number_ok = False
    elif not _dense_float_cuda(a):
        return None
    elif name in TENSOR_ONLY_BINARY:
        number_ok = False               # (no scalar kernel: ``x %= 2`` takes the general path)
    cdef _TensorBase tb = None
    cdef ptc_params p
    cdef long long n64 = a._numel
    cdef unsigned long long a_p = <uintptr_t>a._ptr(), b_p
    cdef void* kp[5]
    cdef int family
    cdef double d0 = 0.0
    cdef Py_ssize_t span
    if alpha is not None:
        if name != "add" and name != "sub":
            return None
        if type(alpha) is int and <object>alpha == 1:
            alpha = None
    cdef bint bcast = False
    if isinstance(b, _TensorBase):
        tb = <_TensorBase>b
        if not _same_dense(a, tb):
            # another shape or layout (``x.mul_(mask[:, None])``, ``p.add_(row)``): one that
            # broadcasts to a's shape and lies apart from a takes the strided kernel
            if tb._dtype is not a._dtype or not _on_device_of(tb, a) or not _broadcasts_to(tb, a) \
                    or _overlaps(tb, a):
                return None
            bcast = True
        b_p = <uintptr_t>tb._ptr()
        span = n64 * a._dtype.itemsize
        if b_p != a_p and (b_p - a_p < <unsigned long long>span or a_p - b_p < <unsigned long long>span):
            return None                 # a partial overlap: the general path's checks
        if alpha is not None:           # add_alpha: a + d0 * b (sub: d0 = -alpha)
            if not _number(alpha, &d0):
                return None
            if name == "sub":
                d0 = -d0
            family = _FAM_ALPHA
        else:
            family = _FAM_BINARY
    elif number_ok and alpha is None and _number(b, &d0):
        family = _FAM_SCALAR
    else:
        return None
    cdef tuple e = _kernel(family, name, a)
    if e is None:
        return None
    cdef Py_ssize_t idx = a._storage.device._idx
    if bcast:
        memset(&p, 0, sizeof(p))
        p.d0 = d0
        e[0].set_current(idx)
        _launch_strided(_kernel(_FAM_BINARY_S, "add_alpha" if family == _FAM_ALPHA else name, a), e,
                        idx, a, a, tb, &p)
        ptc_bump_version(a)
        return a
    if n64:
        e[0].set_current(idx)
        memset(&p, 0, sizeof(p))
        p.d0 = d0
        kp[0] = &n64
        kp[1] = &a_p
        kp[2] = &a_p
        if family == _FAM_SCALAR:
            kp[3] = &p
        else:
            kp[3] = &b_p
            kp[4] = &p
        _run(e, idx, a._numel, kp)
    ptc_bump_version(a)
    return a


cdef bint _row_major_view(_TensorBase t) noexcept:
    """``t``'s dims of size > 1 have positive strides in strictly decreasing
    order (a slice or a step of a contiguous tensor, not a permutation or
    an expansion): the layout whose elementwise result is contiguous in
    torch's (and the general path's) result layout."""
    cdef Py_ssize_t last = 0
    cdef int i
    for i in range(t._ndim - 1, -1, -1):
        if t._shape[i] > 1:
            if t._strides[i] <= last:
                return False
            last = t._strides[i]
    return True


cdef bint _permuted_dense(_TensorBase t) noexcept:
    """``t`` (every dim longer than 1, positive strides) is a permutation of
    a contiguous layout: its elements fill ``numel`` consecutive places, so
    an elementwise op over them in memory order is the contiguous kernel
    over that span (into a result with t's strides, torch's layout for an
    elementwise op of a permuted operand)."""
    cdef Py_ssize_t expect = 1
    cdef unsigned long long done = 0
    cdef int i, k, nd = t._ndim
    if nd < 2 or nd > 63:
        return False
    for i in range(nd):
        if t._shape[i] < 2:
            return False
    for k in range(nd):
        for i in range(nd):
            if not (done >> i) & 1 and t._strides[i] == expect:
                break
        else:
            return False
        done |= 1ULL << i
        expect *= t._shape[i]
    return True


cdef object _cplx_unary(str name, _TensorBase x):
    """``name(x)`` of a contiguous complex CUDA ``x`` by the complex library's
    contiguous kernel, into a new dense result of x's dtype (or its real
    dtype: ``abs``); None where the general path decides."""
    kind = _CPLX_UNARY.get(name)
    if kind is None or not x._is_contig():
        return None
    cdef tuple e = _kernel(_FAM_UNARY, name, x)
    if e is None:
        return None
    cdef ptc_params p
    cdef _TensorBase res = _dense_like(x) if kind == 0 else _dense_like_as(x, x._dtype.to_real())
    memset(&p, 0, sizeof(p))
    return _unary_into(e, x, res, &p)


cdef object cuda_unary(int op, _TensorBase x):
    """``op(x)`` for a floating ``x`` and one of ``UNARY_OPS`` -- dense; a
    permutation of a dense layout (the contiguous kernel over its span, into
    a result of its strides, as torch's and the CPU's); or a view of
    positive strides in row-major order (the strided kernel into a
    contiguous result) -- or a dense integer or bool ``x`` and
    ``bitwise_not`` (the result has x's dtype); else None."""
    if op < 0 or op >= _NUOPS:
        return None
    name = _UOPS[op]
    if name is None:
        return None
    cdef bint dense = True, permuted = False
    if name in _INT_UNARY:
        if not (x._dtype in _INT_DTYPES or x._dtype is _BOOL) or x._storage.device._type_code != 1 \
                or not x._is_contig():
            return None
    elif not _dense_float_cuda(x):
        if _cplx_cuda(x):
            return _cplx_unary(name, x)
        if x._dtype._category != 2 or x._storage.device._type_code != 1:
            return None
        permuted = _permuted_dense(x)
        if not permuted and not _row_major_view(x):
            return None
        dense = permuted
    cdef tuple e = _kernel(_FAM_UNARY, name, x)
    if e is None:
        return None
    cdef tuple es = None if dense else _kernel(_FAM_UNARY_S, name, x)
    cdef ptc_params p
    cdef _TensorBase res = _same_strides_like(x) if permuted else _dense_like(x)
    if res._numel:
        memset(&p, 0, sizeof(p))
        if dense:
            _run_unary(e, x._storage.device._idx, res._numel, res._ptr(), x._ptr(), &p)
        else:
            try:
                _launch_strided_n(es, e, x._storage.device._idx, res, (x,), &p)
            except ValueError:          # more dims than the strided kernels take
                return None
    return res


cdef tuple _dense_unary_kernel(object x, str name):
    """The unary-family handle of kernel ``name`` for ``x`` when ``x`` is a
    dense floating CUDA tensor and the driver launches from C, else None."""
    if not isinstance(x, _TensorBase) or not _dense_float_cuda(<_TensorBase>x):
        return None
    return _kernel(_FAM_UNARY, name, <_TensorBase>x)


def unary_inplace(str name, x):
    """``x.<name>_()`` for a dense floating CUDA ``x`` and one of
    ``UNARY_OPS`` (the kernel reads and writes x; its version bumped):
    x, else None.  Autograd's checks are the caller's
    (``ptcore.autograd._record.device_fast_inplace_unary``)."""
    if name not in UNARY_OPS:
        return None
    cdef tuple e = _dense_unary_kernel(x, name)
    if e is None:
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef ptc_params p
    cdef Py_ssize_t idx = t._storage.device._idx
    if t._numel:
        e[0].set_current(idx)
        memset(&p, 0, sizeof(p))
        _run_unary(e, idx, t._numel, t._ptr(), t._ptr(), &p)
    ptc_bump_version(t)
    return t


# the binary kernels whose result has the operands' dtype ("same" in the
# kernel library's table): binary_params takes them
cdef frozenset _SAME_BINARY = frozenset(r[0] for r in _kernels.BINARY if r[2] == "same")


def binary_params(str op, a, b, dtype compute, double d0, double d1, double d2, object i0):
    """The CUDA ``ew_binary`` loop's call ``op(a, b)`` with kernel parameters
    ``d0, d1, d2, i0`` (``threshold_fill`` of ReLU's backward, ...) when
    ``a`` and ``b`` are dense floating tensors of dtype ``compute``, one
    shape and device and ``op``'s kernel gives that dtype: the contiguous
    kernel launched from C into a new tensor (the loop's ``_ew`` with no
    ``out=``: the same kernel and parameters); else None."""
    if op not in _SAME_BINARY or not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase) \
            or type(i0) is not int or not -(1 << 63) <= i0 < (1 << 63):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    if ta._dtype is not compute or not _pair(ta, tb):
        return None
    cdef tuple e = _kernel(_FAM_BINARY, op, ta)
    if e is None:
        return None
    cdef _TensorBase res = _dense_like(ta)
    cdef ptc_params p
    if res._numel:
        memset(&p, 0, sizeof(p))
        p.d0, p.d1, p.d2, p.i0 = d0, d1, d2, <long long>i0
        _run_two(e, ta._storage.device._idx, res, ta, tb, &p)
    return res


# (op, compute dtype) -> the dtype the ``ew_unary`` loop's kernel writes, or
# None where the C path declines (complex, no such kernel): _loop_out_dtype
cdef dict _UNARY_OUT = {}
cdef dict _TERNARY_OUT = {}


def _loop_out_dtype(str family, str op, dtype compute):
    """The dtype kernel ``op`` of ``family`` writes for ``compute`` operands
    (``_index._ew``'s ``loop_out``) when its contiguous kernel is in the
    library and ``compute`` is real, else None."""
    if compute._category > 2:
        return None
    try:
        tag = _launch._tag(compute, op)
    except NotImplementedError:
        return None
    if _kernels.kernel_name(family, op, (tag,), "c") not in _kernels.all_kernels():
        return None
    return _index._FIXED_OUT.get((family, op), compute)


cdef bint _written_ok(_TensorBase out, _TensorBase t) except -1:
    """``t`` may be read while the dense ``out`` is written in place: it is
    ``out`` itself or lies apart from it (the general path's rule, which
    raises for a partial overlap)."""
    return t is out or not _overlaps(t, out)


def unary_params(str op, x, out, dtype compute, result, double d0, double d1, double d2,
                 object i0):
    """The CUDA ``ew_unary`` loop's call ``op(x)`` with kernel parameters
    ``d0, d1, d2, i0`` (``round``'s decimals, ``elu``'s coefficients, the
    ``isnan`` family's bool result ...) when ``x`` is a contiguous real
    CUDA tensor of dtype ``compute`` whose kernel writes ``result`` (or
    ``result`` is None), and ``out`` is None or ``x`` itself (in place, the
    kernel writing compute's dtype): the contiguous kernel launched from C
    (the loop's ``_ew``: the same kernel and parameters); else None."""
    if not isinstance(x, _TensorBase) or type(i0) is not int or not -(1 << 63) <= i0 < (1 << 63):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if t._dtype is not compute or t._storage.device._type_code != 1 or not t._is_contig():
        return None
    key = (op, compute)
    lo = _UNARY_OUT.get(key, False)
    if lo is False:
        lo = _UNARY_OUT[key] = _loop_out_dtype("unary", op, compute)
    if lo is None or (result is not None and result is not lo):
        return None
    if out is not None and (out is not x or lo is not compute):
        return None
    cdef tuple e = _kernel(_FAM_UNARY, op, t)
    if e is None:
        return None
    cdef Py_ssize_t idx = t._storage.device._idx
    cdef _TensorBase res
    if out is None:
        res = _dense_like_as(t, <dtype>lo)          # (makes x's device current)
    else:
        res = t
        e[0].set_current(idx)
    cdef ptc_params p
    if res._numel:
        memset(&p, 0, sizeof(p))
        p.d0, p.d1, p.d2, p.i0 = d0, d1, d2, <long long>i0
        _run_unary(e, idx, res._numel, res._ptr(), t._ptr(), &p)
    if out is not None:
        ptc_bump_version(t)
    return res


def ternary_params(str op, a, b, c, out, dtype compute, result, double d0, double d1, object i0):
    """The CUDA ``ew_ternary`` loop's call ``op(a, b, c)`` (``addcmul``,
    ``addcdiv``, ``lerp`` with a tensor weight ...) with kernel parameters
    ``d0, d1, i0`` when ``a``, ``b``, ``c`` are contiguous real CUDA tensors
    of dtype ``compute``, one shape and device, the kernel writes
    ``compute`` and ``out`` is None or ``a`` (in place; ``b`` and ``c`` each
    ``a`` or apart from it): the contiguous kernel launched from C; else
    None.  (``where``, whose kernel takes its operands in another order,
    and the number operands of ``clamp`` take the general path.)"""
    if op == "where" or not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase) \
            or not isinstance(c, _TensorBase) or type(i0) is not int \
            or not -(1 << 63) <= i0 < (1 << 63):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b, tc = <_TensorBase>c
    if ta._dtype is not compute or ta._storage.device._type_code != 1 or not ta._is_contig() \
            or not _same_dense(ta, tb) or not _same_dense(ta, tc):
        return None
    key = (op, compute)
    lo = _TERNARY_OUT.get(key, False)
    if lo is False:
        lo = _TERNARY_OUT[key] = _loop_out_dtype("ternary", op, compute)
    if lo is not compute or (result is not None and result is not lo):
        return None
    if out is not None and (out is not a or not _written_ok(ta, tb) or not _written_ok(ta, tc)):
        return None
    cdef tuple e = _kernel(_FAM_TERNARY, op, ta)
    if e is None:
        return None
    cdef Py_ssize_t idx = ta._storage.device._idx
    cdef _TensorBase res
    if out is None:
        res = _dense_like(ta)                       # (makes a's device current)
    else:
        res = ta
        e[0].set_current(idx)
    cdef ptc_params p
    cdef long long n64 = res._numel
    cdef unsigned long long ptrs[4]
    cdef void* kp[6]
    if n64:
        memset(&p, 0, sizeof(p))
        p.d0, p.d1, p.i0 = d0, d1, <long long>i0
        ptrs[0] = <uintptr_t>res._ptr()
        ptrs[1] = <uintptr_t>ta._ptr()
        ptrs[2] = <uintptr_t>tb._ptr()
        ptrs[3] = <uintptr_t>tc._ptr()
        kp[0] = &n64
        kp[1] = &ptrs[0]
        kp[2] = &ptrs[1]
        kp[3] = &ptrs[2]
        kp[4] = &ptrs[3]
        kp[5] = &p
        _run(e, idx, n64, kp)
    if out is not None:
        ptc_bump_version(ta)
    return res


def rsub_number(x, other):
    """``other - x`` (``rsub(x, other)``, ``other - x`` for a number) for a
    dense floating CUDA ``x`` and a Python int/float ``other``: the scalar
    ``rsub`` kernel (the number rounded to x's dtype, as the general path's
    filled 0-d tensor); else None."""
    cdef double d0
    if not isinstance(x, _TensorBase) or not _number(other, &d0):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if not _dense_float_cuda(t):
        return None
    cdef tuple e = _kernel(_FAM_SCALAR, "rsub", t)
    if e is None:
        return None
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    p.d0 = d0
    cdef _TensorBase res = _dense_like(t)
    return _unary_into(e, t, res, &p)


# the number-first ops with a reflected scalar kernel: ``number // x``, ``number % x``,
# ``number ** x`` (kernel op -> its ``scalar`` kernel)
_REFLECTED = {"div_floor": _kernels.REFLECTED_SCALAR["div_floor"],
              "remainder": _kernels.REFLECTED_SCALAR["remainder"],
              "pow": _kernels.REFLECTED_SCALAR["pow"]}


cdef bint _int_number(object v, dtype dt, long long* out):
    """``out[0] = v`` for a Python int (not a bool) that integer dtype ``dt``
    holds exactly; False otherwise (the general path: its rounding and errors)."""
    cdef int bits = dt.itemsize * 8
    if type(v) is not int:
        return False
    if dt.is_signed:
        if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            return False
    elif not 0 <= v < (1 << bits):
        return False
    out[0] = <long long>v
    return True


def reflected_number(str op, x, other):
    """``other <op> x`` for a Python number ``other`` and a dense CUDA
    ``x`` whose dtype is the result's (a floating x and an int or float
    number, an integer x and an int it holds), op ``"div_floor"``,
    ``"remainder"`` or ``"pow"``: the reflected ``scalar`` kernel, the number
    its argument (rounded to x's dtype as the general path's filled 0-d
    tensor); else None."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    if t._storage.device._type_code != 1 or not t._is_contig():
        return None
    if t._dtype._category == 2:
        if not _bound(other, t._dtype, &p.d0, 0.0):
            return None
    elif t._dtype not in _INT_DTYPES or not _int_number(other, t._dtype, &p.i0):
        return None
    cdef tuple e = _kernel(_FAM_SCALAR, _REFLECTED[op], t)
    if e is None:
        return None
    cdef _TensorBase res = _dense_like(t)
    return _unary_into(e, t, res, &p)


def _positive(args, kwargs):
    """``positive(x)`` / ``+x``'s fast form on cuda: x itself (torch's
    positive returns its input), but for a bool x (the general path's error)."""
    if kwargs or len(args) != 1 or not isinstance(args[0], _TensorBase) \
            or (<_TensorBase>args[0])._dtype is _BOOL:
        return None
    return args[0]


cdef dict _CAST_NAMES = {}              # (src dtype, dst dtype) -> the contiguous cast kernel


cdef dict _FILL_NAMES = {}              # floating dtype -> the contiguous fill kernel


def fill_like(x, double value):
    """``ones_like(x)``/``zeros_like(x)`` (``value`` 1 or 0) of a contiguous
    floating CUDA ``x`` with no other argument: a new contiguous tensor of
    x's dtype, shape and device filled by the fill kernel from C (the
    general path's ``fill_``: the same kernel and parameter); else None."""
    if not isinstance(x, _TensorBase) or not _dense_float_cuda(<_TensorBase>x):
        return None
    cdef _TensorBase t = <_TensorBase>x
    name = _FILL_NAMES.get(t._dtype)
    if name is None:
        name = _FILL_NAMES[t._dtype] = _kernels.kernel_name(
            "fill", "", (_launch._tag(t._dtype, "fill_"),), "c")
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef _TensorBase res = _same_strides_like(t)     # (preserve_format: x's strides)
    cdef ptc_params p
    cdef long long n64 = res._numel
    cdef unsigned long long out_p
    cdef void* kp[3]
    if n64:
        memset(&p, 0, sizeof(p))
        p.d0 = value
        out_p = <uintptr_t>res._ptr()
        kp[0] = &n64
        kp[1] = &out_p
        kp[2] = &p
        _run(e, t._storage.device._idx, n64, kp)
    return res


def _ones_like(args, kwargs):
    return fill_like(args[0], 1.0) if len(args) == 1 and not kwargs else None


def _zeros_like(args, kwargs):
    return fill_like(args[0], 0.0) if len(args) == 1 and not kwargs else None


def convert_dense(x, dtype dt):
    """``x.to(dt)`` for a contiguous CUDA ``x`` of another real or bool
    dtype: the cast kernel into a new contiguous tensor (launched from C);
    else None (``_tensors.convert``'s general path)."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if t._storage.device._type_code != 1 or not t._is_contig() or t._dtype is dt:
        return None
    key = (t._dtype, dt)
    name = _CAST_NAMES.get(key)
    if name is None:
        if t._dtype.is_complex or dt.is_complex:
            return None
        try:
            name = f"ptc_cast_{_launch._tag(t._dtype, 'to')}_{_launch._tag(dt, 'to')}_c"
        except NotImplementedError:
            return None
        if name not in _kernels.all_kernels():
            return None
        _CAST_NAMES[key] = name
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef _TensorBase res = _dense_like_as(t, dt)
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    return _unary_into(e, t, res, &p)


def activation(str kop, x, double d0=0.0, double d1=0.0, double d2=0.0):
    """The forward kernel ``ptc_unary_<kop>`` of an activation (``gelu``,
    ``gelu_tanh``, ``silu`` ...) over a dense floating CUDA ``x``, its
    parameters in ``d0``-``d2`` (the general path's ``_act_forward``, launched
    from C): a new contiguous result, or None (another operand; no C
    launcher).  Autograd is the caller's."""
    cdef tuple e = _dense_unary_kernel(x, kop)
    if e is None:
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    p.d0 = d0
    p.d1 = d1
    p.d2 = d2
    return _unary_into(e, t, _dense_like(t), &p)




cdef dict _SPECIAL_NAMES = {}           # (op, dtype) -> ptc_special_<op>_<dt>_c, or None


def special_unary(str op, x, dtype compute):
    """The ``special`` kernel ``op`` (``ndtri``, ``i1``, the Bessel functions
    ...) over a contiguous real CUDA ``x`` of dtype ``compute``: a new
    tensor of that dtype, the kernel launched from C with the general
    path's arguments (``ptcore.cuda.ops.special``'s loop); else None."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if t._dtype is not compute or compute._category > 2 or t._storage.device._type_code != 1 \
            or not t._is_contig():
        return None
    key = (op, compute)
    name = _SPECIAL_NAMES.get(key, False)
    if name is False:
        try:
            name = _kernels.kernel_name("special", op, (_launch._tag(compute, op),), "c")
        except NotImplementedError:
            name = None
        if name is not None and name not in _kernels.all_kernels():
            name = None
        _SPECIAL_NAMES[key] = name
    if name is None:
        return None
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    return _unary_into(e, t, _dense_like(t), &p)

cdef dict _ACT_GRAD_NAMES = {}          # (kop, dtype) -> the ptc_nnact_<kop>_<dt>_c kernel's name


def act_backward(str kop, g, x, double d0=0.0, double d1=0.0, double d2=0.0):
    """The gradient kernel ``ptc_nnact_<kop>`` of an activation (``gelu``,
    ``elu`` ...) over a dense floating CUDA ``x`` and a gradient ``g`` of
    its dtype, shape and device, its parameters in ``d0``-``d2`` (the general
    path's ``_act_backward``, launched from C): a new contiguous result, or
    None (another operand; no C launcher)."""
    if not isinstance(x, _TensorBase) or not isinstance(g, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x, tg = <_TensorBase>g
    if not _pair(t, tg):
        return None
    key = (kop, t._dtype)
    name = _ACT_GRAD_NAMES.get(key)
    if name is None:
        name = _kernels.kernel_name("nnact", kop, (_launch._tag(t._dtype, kop),), "c")
        if name not in _kernels.all_kernels():
            return None
        _ACT_GRAD_NAMES[key] = name
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef _TensorBase res = _dense_like(t)           # (makes x's device current)
    cdef ptc_params p
    if res._numel:
        memset(&p, 0, sizeof(p))
        p.d0, p.d1, p.d2 = d0, d1, d2
        _run_two(e, t._storage.device._idx, res, tg, t, &p)
    return res

cdef dict _SOFTMAX_NAMES = {}            # (op, dtype) -> the row kernel's name


def softmax_lastdim(str op, x, dim):
    """``op(x, dim)`` (``softmax`` or ``log_softmax``) along the last dim of a
    dense floating CUDA ``x`` with at least one dim and one element: the row
    kernel ``ptc_softmax_<op>_<dt>_c`` launched from C into a new contiguous
    result, the general path's kernel and arguments (the same bits); else
    None (other dims take the general path's permuted copy).  Autograd is
    the caller's."""
    if not isinstance(x, _TensorBase) or type(dim) is not int:
        return None
    cdef _TensorBase t = <_TensorBase>x
    if not _dense_float_cuda(t) or t._ndim == 0 or t._numel == 0 \
            or (dim != -1 and dim != t._ndim - 1):
        return None
    key = (op, t._dtype)
    name = _SOFTMAX_NAMES.get(key)
    if name is None:
        if op != "softmax" and op != "log_softmax":
            return None
        name = _SOFTMAX_NAMES[key] = f"ptc_softmax_{op}_{_launch._tag(t._dtype, op)}_c"
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef long long Ln = t._shape[t._ndim - 1]
    cdef _TensorBase res = _dense_like(t)
    _rows_launch(e, t._storage.device._idx, t._numel // Ln, Ln, res, t)
    return res


cdef bint _row_param(object p, _TensorBase x, Py_ssize_t n) noexcept:
    """``p`` is None, or a contiguous tensor of ``n`` elements, of x's dtype
    and on x's cuda device."""
    if p is None:
        return True
    if not isinstance(p, _TensorBase):
        return False
    cdef _TensorBase q = <_TensorBase>p
    return q._dtype is x._dtype and q._numel == n and q._is_contig() \
        and q._storage.device._type_code == 1 and q._storage.device._idx == x._storage.device._idx


def layer_norm_rows(x, Py_ssize_t n, weight, bias, double eps, str name):
    """ptcore/cuda/ops/nn.py's ``layer_norm_forward`` from C: ``(y, mean,
    rstd)`` of a contiguous floating CUDA ``x`` normalised over rows of
    ``n`` elements, ``weight``/``bias`` (None, or ``n`` contiguous values of
    x's dtype on x's device) applied, by that loop's row kernel ``name``
    (loaded by the caller) with its arguments; None for anything else (the
    loop then decides)."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if not _dense_float_cuda(t) or n <= 0 or t._numel == 0 or t._numel % n \
            or not _row_param(weight, t, n) or not _row_param(bias, t, n):
        return None
    cdef tuple e = _kernel(_FAM_NAMED, name, t)
    if e is None:
        return None
    cdef Py_ssize_t M = t._numel // n
    cdef _TensorBase y = _dense_like(t)
    cdef _TensorBase mean = _dense_shaped(t, t._dtype, 1, &M)
    cdef _TensorBase rstd = _dense_shaped(t, t._dtype, 1, &M)
    cdef long long v[8]
    cdef void* kp[9]
    cdef int i
    v[0] = M
    v[1] = n
    v[2] = <long long><uintptr_t>y._ptr()
    v[3] = <long long><uintptr_t>mean._ptr()
    v[4] = <long long><uintptr_t>rstd._ptr()
    v[5] = <long long><uintptr_t>t._ptr()
    v[6] = 0 if weight is None else <long long><uintptr_t>(<_TensorBase>weight)._ptr()
    v[7] = 0 if bias is None else <long long><uintptr_t>(<_TensorBase>bias)._ptr()
    for i in range(8):
        kp[i] = &v[i]
    kp[8] = &eps
    _run(e, t._storage.device._idx, M, kp, True)
    return y, mean, rstd


def clone_dense(x, bint preserve):
    """``x.clone()`` (``preserve``: preserve_format) or ``x.contiguous()`` of a
    CUDA ``x``, without autograd (the caller's): a new contiguous tensor.
    When ``x`` has the result's strides its bytes are copied by the driver's
    device-to-device copy (as the general path's ``copy_``); else, for
    ``contiguous()``, by the copy kernel of x's dtype over x's strides (the
    general path's ``cast_copy``, launched from C).  None for what the
    general path does: preserve_format of another layout (it may keep a
    dense permutation's strides), a dtype without copy kernels, a driver
    without a C launcher."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if t._storage.device._type_code != 1:
        return None
    cdef Py_ssize_t acc = 1
    cdef int i
    cdef bint canonical = True
    for i in range(t._ndim - 1, -1, -1):
        if t._strides[i] != acc:
            canonical = False
            break
        if t._shape[i] > 1:
            acc *= t._shape[i]
    if not canonical and preserve:
        return None
    drv = _state["driver"]
    if drv is None or (not canonical and _launcher_driver() is None):
        return None
    cdef _TensorBase res = _dense_like(t)          # (makes x's device current)
    cdef Py_ssize_t idx = t._storage.device._idx
    cdef long long v[3]
    if canonical:
        if res._numel:
            drv.memcpy_dtod(<uintptr_t>res._ptr(), <uintptr_t>t._ptr(),
                            res._numel * t._dtype.itemsize, _stream_of(idx))
        return res
    cdef object st
    cdef tuple e
    try:
        st = strided_arg(res, (t,))
    except ValueError:                  # more dims than the strided kernels take
        return None
    try:
        e = _kernel(_FAM_COPY if st is None else _FAM_COPY_STRIDED, None, t)
    except NotImplementedError:         # no copy kernels for the dtype (complex32)
        return None
    if e is None:
        return None
    if res._numel:
        v[0] = res._numel
        v[1] = <long long><uintptr_t>res._ptr()
        v[2] = <long long><uintptr_t>t._ptr()
        _launch_vals(e, idx, res._numel, False, v, 3,
                     NULL if st is None else <void*>PyBytes_AS_STRING(st))
    return res


cdef double _FLT_MAX = 3.4028234663852886e38
cdef double _INF = float("inf")


cdef bint _bound(object v, dtype dt, double* out, double dflt):
    """``out[0]`` = clamp bound ``v`` (None: ``dflt``) when it is a Python
    float or int that ``dt`` holds without PyTorch's overflow error."""
    if v is None:
        out[0] = dflt
        return True
    if not _number(v, out):
        return False
    return dt.num == PT_FLOAT64 or out[0] != out[0] or out[0] == _INF or out[0] == -_INF \
        or -_FLT_MAX <= out[0] <= _FLT_MAX


def clamp(x, lo, hi):
    """``x.clamp(lo, hi)`` for a dense float32/float64 CUDA ``x`` and number
    bounds (one may be None) with ``lo <= hi``: the hardtanh kernel, the
    bounds as its parameters (the general path's clamp kernel reads them
    from two filled 0-d tensors; the values are the same); else None (NaN
    bounds, ``lo > hi``, and the errors take the general path)."""
    if not isinstance(x, _TensorBase) or (lo is None and hi is None):
        return None
    cdef _TensorBase t = <_TensorBase>x
    if not _dense_float_cuda(t) or (t._dtype.num != PT_FLOAT32 and t._dtype.num != PT_FLOAT64):
        return None
    cdef ptc_params p
    memset(&p, 0, sizeof(p))
    if not _bound(lo, t._dtype, &p.d0, -_INF) or not _bound(hi, t._dtype, &p.d1, _INF) \
            or not p.d0 <= p.d1:
        return None
    cdef tuple e = _kernel(_FAM_UNARY, "hardtanh", t)
    if e is None:
        return None
    cdef _TensorBase res = _dense_like(t)
    return _unary_into(e, t, res, &p)


cdef Py_ssize_t _ROW_MAX = 1 << 16     # _launch_reduce: shorter rows are one block
# _launch_reduce.columns' choice of the column kernel
cdef Py_ssize_t _COL_MAX_L = _launch_reduce._COLUMN_MAX_L
cdef Py_ssize_t _COL_MIN_BLOCKS = _launch_reduce._COLUMN_MIN_BLOCKS
cdef Py_ssize_t _COL_W = _kernels.COLUMN_WIDTH


def reduce_all(str op, x):
    """``op(x)`` over all elements (op ``"sum"`` or ``"mean"``): see :func:`reduce`."""
    return reduce(op, x, None, False)


cdef int _launch_vals(tuple e, Py_ssize_t idx, Py_ssize_t n, bint rows, long long* vals, int nv,
                      void* extra) except -1:
    """Launch handle ``e`` (see :func:`_run`) with ``nv`` eight-byte
    arguments ``vals`` (sizes, device pointers), a zeroed ``ptc_params``
    and, when not NULL, the struct at ``extra``."""
    cdef ptc_params p
    cdef void* kp[12]
    cdef int i
    if nv > 10:
        raise ValueError("too many kernel arguments")
    memset(&p, 0, sizeof(p))
    for i in range(nv):
        kp[i] = &vals[i]
    kp[nv] = &p
    if extra != NULL:
        kp[nv + 1] = extra
    return _run(e, idx, n, kp, rows)


cdef int _rows_launch(tuple e, Py_ssize_t idx, long long M, long long L, _TensorBase out,
                      _TensorBase x) except -1:
    """The row kernel ``e``: ``out[r]`` = op over row r of x's (M, L)."""
    cdef long long v[4]
    v[0] = M
    v[1] = L
    v[2] = <long long><uintptr_t>out._ptr()
    v[3] = <long long><uintptr_t>x._ptr()
    return _launch_vals(e, idx, M, True, v, 4, NULL)


cdef int _columns_launch(tuple e, Py_ssize_t idx, long long O, long long L, long long I,
                         _TensorBase out, _TensorBase x) except -1:
    """The column kernel ``e``: ``out[o*I + i]`` = op over column (o, i) of x's (O, L, I)."""
    cdef long long v[5]
    v[0] = O
    v[1] = L
    v[2] = I
    v[3] = <long long><uintptr_t>out._ptr()
    v[4] = <long long><uintptr_t>x._ptr()
    return _launch_vals(e, idx, O * ((I + _COL_W - 1) // _COL_W), True, v, 5, NULL)


cdef Py_ssize_t _COL_SPLIT_BLOCKS = _launch_reduce._COLUMN_SPLIT_BLOCKS
cdef Py_ssize_t _COL_SPLIT_MIN_ROWS = _launch_reduce._COLUMN_SPLIT_MIN_ROWS


cdef bint _columns_ok(Py_ssize_t O, Py_ssize_t L, Py_ssize_t I) noexcept:
    """``_launch_reduce.columns``' choice of the column kernel for (O, L, I),
    in one pass: few column blocks over long columns may be split in
    chunks (``_launch_reduce.column_chunks``), which the general path does."""
    cdef Py_ssize_t nb = O * ((I + _COL_W - 1) // _COL_W)
    if nb < _COL_SPLIT_BLOCKS and L >= 2 * _COL_SPLIT_MIN_ROWS:
        return False
    return I > 1 and not (L >= _COL_MAX_L and nb < _COL_MIN_BLOCKS)


cdef Py_ssize_t _prod(_TensorBase t, Py_ssize_t a, Py_ssize_t b) noexcept:
    cdef Py_ssize_t i, n = 1
    for i in range(a, b):
        n *= t._shape[i]
    return n


def reduce(str op, x, dim, bint keepdim):
    """``op(x, dim, keepdim)`` (op ``"sum"``, ``"mean"``) for a contiguous
    float32/float64 CUDA ``x`` when ``_launch_reduce`` would launch its
    kernels straight on x: the reduced dims (``dim`` an int, a tuple/list
    of ints, or None for all) one run whose rows are shorter than one
    block's (65,536) when it ends last (the row kernel), or whose columns
    take the column kernel (kept dims after it); or two runs, the second
    ending last -- a conv bias gradient's (0, 2, 3) -- reduced as rows
    into a partial result, then as columns.  The same kernels and
    arguments as that path, so bitwise the same result; None otherwise
    (the general path raises the errors).  ``"amax"``/``"amin"`` of any
    floating ``x`` over a given trailing run of dims take the row kernel the
    same way, as do ``"sum"``/``"mean"`` of a contiguous complex64/complex128
    ``x`` over a trailing run (or all dims) of rows shorter than 65,536."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    # amax/amin: exact, so the half types too (read as they are), over given
    # trailing dims only (the row kernel; they have no column kernel)
    cdef bint exact = op == "amax" or op == "amin"
    # complex64/complex128 sum/mean: the complex library's row kernel over one
    # trailing run of dims (ptcore.cuda.ops.complex's _crun; no column kernel)
    cdef bint cplx = False
    if exact:
        if dim is None or not _dense_float_cuda(t) or t._numel == 0:
            return None
    elif _cplx_cuda(t):
        if not t._is_contig() or t._numel == 0:
            return None
        cplx = True
    # sum/mean: float32/float64 only (the half types accumulate in float32 through a copy)
    elif not _dense_float_cuda(t) or t._numel == 0 \
            or (t._dtype.num != PT_FLOAT32 and t._dtype.num != PT_FLOAT64):
        return None
    cdef int nd = t._ndim
    if nd > 63:
        return None
    cdef unsigned long long mask = 0, bit, run
    cdef Py_ssize_t d, lo = 0, hi = nd - 1, lo2 = nd, i
    if dim is None:
        if keepdim:
            return None
        mask = (1ULL << nd) - 1
    else:
        if nd == 0:
            return None
        if type(dim) is int:
            dims = (dim,)
        elif type(dim) is tuple or type(dim) is list:
            dims = dim
            if len(dims) == 0:
                return None
        else:
            return None
        for v in dims:
            if type(v) is not int or v < -nd or v >= nd:
                return None
            d = <Py_ssize_t>v
            if d < 0:
                d += nd
            bit = 1ULL << d
            if mask & bit:
                return None
            mask |= bit
        lo = 0
        while not (mask >> lo) & 1:
            lo += 1
        hi = lo
        while hi + 1 < nd and (mask >> (hi + 1)) & 1:
            hi += 1
        run = (1ULL << (hi + 1)) - (1ULL << lo)
        if mask != run:
            # two runs, the second ending last: rows, then columns
            lo2 = hi + 1
            while not (mask >> lo2) & 1:
                lo2 += 1
            if mask != run | (((1ULL << nd) - 1) - ((1ULL << lo2) - 1)):
                return None
    cdef Py_ssize_t O = _prod(t, 0, lo), Lr = _prod(t, lo, hi + 1), I = _prod(t, hi + 1, lo2)
    cdef Py_ssize_t Lb = _prod(t, lo2, nd)          # the second run's rows (1: none)
    cdef tuple e, e2 = None
    if (exact or cplx) and (lo2 < nd or I != 1):
        return None
    if lo2 < nd:
        if Lb >= _ROW_MAX or not _columns_ok(O, Lr, I):
            return None
        e2 = _kernel(_FAM_REDUCE, op, t)
        e = _kernel(_FAM_COLUMN, op, t)
    elif I == 1:
        if Lr >= _ROW_MAX:
            return None
        e = _kernel(_FAM_REDUCE, op, t)
    elif _columns_ok(O, Lr, I):
        e = _kernel(_FAM_COLUMN, op, t)
    else:
        return None
    if e is None:
        return None
    cdef list shape = []
    for i in range(nd):
        if not (mask >> i) & 1:
            shape.append(t._shape[i])
        elif keepdim:
            shape.append(1)
    cdef Py_ssize_t idx = t._storage.device._idx
    cdef _TensorBase res = <_TensorBase>_tensors.empty(shape, t._dtype, t._storage.device)
    cdef _TensorBase part
    if e2 is not None:
        part = <_TensorBase>_tensors.empty([O * Lr * I], t._dtype, t._storage.device)
        _rows_launch(e2, idx, O * Lr * I, Lb, part, t)
        _columns_launch(e, idx, O, Lr, I, res, part)
    elif I == 1:
        _rows_launch(e, idx, O, Lr, res, t)
    else:
        _columns_launch(e, idx, O, Lr, I, res, t)
    return res



cdef frozenset _SPLIT_OPS = frozenset(_launch_reduce._SPLIT)
cdef Py_ssize_t _SPLIT_MAX_ROWS = _launch_reduce._SPLIT_MAX_ROWS
cdef Py_ssize_t _SPLIT_MIN_L = _launch_reduce._SPLIT_MIN
cdef dict _ROW_NAMES = {}               # (op, dtype) -> (the row kernel's name, its result dtype)


def _row_kernel_name(str op, dtype dt):
    """``(ptc_reduce_<op>_<dt>_<out>_c, out dtype)`` as the general path's
    ``_run`` names them, or None where the library has no such kernel."""
    try:
        od = _kernels._reduce_out(_launch._name(dt), _launch_reduce._OUT_RULE[op])
        rdt = _C.bool_ if od == "bool" else getattr(_C, od)
        name = f"ptc_reduce_{op}_{_launch._tag(dt, op)}_{_launch._tag(rdt, op)}_c"
    except (KeyError, NotImplementedError, ValueError):
        return None
    if name not in _kernels.all_kernels():
        return None
    return name, rdt


def run_reduce(str op, x, dims, out, params):
    """The reduce loops' ``_run(op, x, dims, out, params)`` when it launches
    the row kernel on ``x`` itself: ``x`` contiguous on a cuda device, the
    sorted ``dims`` none or one run ending last (so the (M, L) rows are x's
    memory), rows not split (``_SPLIT``), ``out`` a contiguous tensor of
    the kernel's result dtype on x's device, apart from x's storage, which
    the kernel writes; ``params`` the 40 bytes of its ``ptc_params``.  True
    when done (nothing to do for an empty result), else None: the general
    path, which raises the errors, fills empty rows and casts."""
    if not isinstance(x, _TensorBase) or not isinstance(out, _TensorBase) \
            or type(params) is not bytes or len(<bytes>params) != sizeof(ptc_params) \
            or (type(dims) is not list and type(dims) is not tuple):
        return None
    cdef _TensorBase t = <_TensorBase>x, o = <_TensorBase>out
    if t._storage.device._type_code != 1 or not t._is_contig() or not o._is_contig() \
            or o._storage.device._type_code != 1 or o._storage.device._idx != t._storage.device._idx:
        return None
    cdef int nd = t._ndim
    cdef unsigned long long mask = 0, bit
    cdef Py_ssize_t d, lo, M = 1, L = 1, i
    if nd > 63:
        return None
    if nd:
        for v in dims:
            if type(v) is not int or v < -nd or v >= nd:
                return None
            d = (<Py_ssize_t>v) % nd
            bit = 1ULL << d
            if mask & bit:
                return None
            mask |= bit
    lo = nd
    while lo > 0 and (mask >> (lo - 1)) & 1:
        lo -= 1
    if mask != ((1ULL << nd) - 1) - ((1ULL << lo) - 1):
        return None                     # not one run ending last: moved last by a copy
    for i in range(lo):
        M *= t._shape[i]
    for i in range(lo, nd):
        L *= t._shape[i]
    if M == 0 or o._numel == 0:
        return True
    if L == 0 or (op in _SPLIT_OPS and M <= _SPLIT_MAX_ROWS and L >= _SPLIT_MIN_L):
        return None
    key = (op, t._dtype)
    named = _ROW_NAMES.get(key, False)
    if named is False:
        named = _ROW_NAMES[key] = _row_kernel_name(op, t._dtype)
    if named is None or o._dtype is not (<tuple>named)[1] or o._storage is t._storage:
        return None
    cdef tuple e = _kernel(_FAM_NAMED, (<tuple>named)[0], t)
    if e is None:
        return None
    cdef Py_ssize_t idx = t._storage.device._idx
    e[0].set_current(idx)
    cdef ptc_params p
    memcpy(&p, PyBytes_AS_STRING(params), sizeof(ptc_params))
    cdef long long vals[4]
    cdef void* kp[5]
    vals[0] = M
    vals[1] = L
    vals[2] = <long long><uintptr_t>o._ptr()
    vals[3] = <long long><uintptr_t>t._ptr()
    for i in range(4):
        kp[i] = &vals[i]
    kp[4] = &p
    _run(e, idx, M, kp, True)
    return True

_REDUCE_OPS = ("sum", "mean", "amax", "amin")
_PAIR_OPS = ("argmax", "argmin", "aminmax")

# argmax/argmin/aminmax: the dtypes of their kernels (the kernel library's pair
# reductions), the pair kernel's long-row split (_launch_reduce._pair_launch's)
cdef dtype _I64 = _C.int64
cdef frozenset _PAIR_REAL = frozenset((_C.float16, _C.bfloat16, _C.float32, _C.float64)) | _INT_DTYPES
cdef dict _PAIR_DTYPES = {"argmax": _PAIR_REAL, "argmin": _PAIR_REAL,
                          "aminmax": _PAIR_REAL | frozenset((_BOOL,))}
cdef Py_ssize_t _PAIR_SPLIT_MIN = _launch_reduce._SPLIT_MIN
cdef Py_ssize_t _PAIR_SPLIT_MAX_ROWS = _launch_reduce._SPLIT_MAX_ROWS
cdef dict _ACC = {}                     # dtype -> the pair kernel's workspace dtype
cdef dict _PAIR_NAMES = {}              # (op, dtype, variant) -> kernel name


cdef object _pair_name(str op, dtype dt, str variant):
    key = (op, dt, variant)
    name = _PAIR_NAMES.get(key)
    if name is None:
        tin = _launch._tag(dt, op)
        tout = tin if op == "aminmax" else _launch._tag(_I64, op)
        name = _PAIR_NAMES[key] = f"ptc_reduce_{op}_{tin}_{tout}_{variant}"
        _ACC[dt] = _launch_reduce._ACC_DTYPES[_kernels._acc_type(_launch._name(dt), "ext")]
    return name


def pair_reduce(str op, x, dim, bint keepdim):
    """``x.argmax(dim, keepdim)`` / ``argmin`` / ``aminmax(dim=, keepdim=)``
    for a contiguous non-empty CUDA ``x`` of a dtype with kernels, over all
    elements (dim None, no keepdim) or its last dim: long rows, not many of
    them, the pair kernel (one launch: ``_launch_reduce._pair_launch``),
    else the row kernel (argmax/argmin) or the pair kernel with one block a
    row (aminmax).  The same kernels and arguments as the general path;
    None otherwise (the general path raises the errors)."""
    if not isinstance(x, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef dtype dt = t._dtype
    if t._storage.device._type_code != 1 or not t._is_contig() or t._numel == 0 \
            or dt not in <frozenset>_PAIR_DTYPES[op]:
        return None
    cdef int nd = t._ndim, i
    cdef long long M, Lr, c, nblk
    cdef list shape = []
    if dim is None:
        if keepdim:
            return None
        M, Lr = 1, t._numel
    else:
        if type(dim) is not int or nd == 0 or not (dim == -1 or dim == nd - 1):
            return None
        Lr = t._shape[nd - 1]
        M = t._numel // Lr
        for i in range(nd - 1):
            shape.append(t._shape[i])
        if keepdim:
            shape.append(1)
    cdef bint split = M <= _PAIR_SPLIT_MAX_ROWS and Lr >= _PAIR_SPLIT_MIN
    cdef bint two = op == "aminmax"
    cdef tuple e = _kernel(_FAM_NAMED, _pair_name(op, dt, "g" if split or two else "c"), t)
    if e is None:
        return None
    dev = t._storage.device
    cdef Py_ssize_t idx = t._storage.device._idx
    cdef _TensorBase out = <_TensorBase>_tensors.empty(shape, dt if two else _I64, dev)
    if not split and not two:
        _rows_launch(e, idx, M, Lr, out, t)
        return out
    cdef _TensorBase out2 = <_TensorBase>_tensors.empty(shape, dt, dev) if two else None
    c = _launch_reduce._chunk(Lr) if split else Lr
    nblk = (Lr + c - 1) // c
    cdef long long v[11]
    cdef _TensorBase wv, w2
    memset(v, 0, sizeof(v))
    v[0] = M
    v[1] = Lr
    v[2] = c
    v[3] = nblk
    v[4] = <long long><uintptr_t>out._ptr()
    v[5] = <long long><uintptr_t>out2._ptr() if two else 0
    v[6] = <long long><uintptr_t>t._ptr()
    if nblk > 1:
        wv = <_TensorBase>_tensors.empty([M * nblk], _ACC[dt], dev)
        w2 = <_TensorBase>_tensors.empty([M * nblk], _ACC[dt] if two else _I64, dev)
        v[7] = <long long><uintptr_t>wv._ptr()
        v[8 if two else 9] = <long long><uintptr_t>w2._ptr()
        v[10] = <long long>_launch_reduce._semaphores(dev)
    cdef ptc_params p
    cdef void* kp[12]
    memset(&p, 0, sizeof(p))
    for i in range(11):
        kp[i] = &v[i]
    kp[11] = &p
    _run(e, idx, M * nblk, kp, True)
    return _aminmax_t(out, out2) if two else out


def _pair_fast(str op):
    """``op``'s fast form on cuda: :func:`pair_reduce` for ``argmax(x[, dim[,
    keepdim]])`` (by keyword too) and ``aminmax(x, *, dim=None,
    keepdim=False)``, while nothing records (an argmax result is never
    differentiable; an aminmax of a tensor that requires grad takes the layers)."""
    st = _record._state

    def device_fast(args, kwargs):
        if op == "aminmax" and len(args) != 1:
            return None
        call = _record.optional_args(args, kwargs, ("dim", "keepdim"), (None, False))
        if call is None:
            return None
        x, dim, keepdim = call
        if keepdim is not True and keepdim is not False or not isinstance(x, _TensorBase):
            return None
        if op == "aminmax" and st.enabled and (<_TensorBase>x)._requires_grad:
            return None
        return pair_reduce(op, x, dim, keepdim)
    return device_fast


# the fast forms :func:`install` registers, but for those of the unary
# ops' in-place forms (op -> the namespaces it is declared in)
_BOTH = ("ptcore", "Tensor")
_NNF = ("nn.functional",)
_FORMS = {"masked_fill": _BOTH, "masked_fill_": ("Tensor",), "where": _BOTH,
          "__rtruediv__": ("Tensor",), "rsub": _BOTH, "__rsub__": ("Tensor",),
          "__rfloordiv__": ("Tensor",), "__rmod__": ("Tensor",), "__rpow__": ("Tensor",),
          "positive": _BOTH, "__pos__": ("Tensor",), "clamp": _BOTH, "clip": _BOTH,
          "softmax": _BOTH + _NNF, "log_softmax": _BOTH + _NNF,
          **{op: _BOTH for op in _REDUCE_OPS + _PAIR_OPS}}


def _inplace_aliases():
    """(alias, op) for the declared aliases of ``UNARY_OPS`` with an in-place
    form (``arcsin`` of ``asin``, ``negative`` of ``neg`` ...)."""
    return sorted((d.name, d.alias) for (group, _), d in DECLARED.items()
                  if group == "ptcore" and d.alias in UNARY_OPS and "inplace" in d.variants)


def install():
    """Register the fast paths for the cuda device type: the elementwise ones
    in the CPU driver's C table (the core's operator fast path and the ops'
    driver fast forms), the others as their kernels' fast forms (recorded by
    their autograd formulas), through :mod:`ptcore._dispatch.device`."""
    register_driver_fast_paths("cuda", PyCapsule_New(<void*>cuda_binary, NULL, NULL),
                               PyCapsule_New(<void*>cuda_inplace, NULL, NULL),
                               PyCapsule_New(<void*>cuda_unary, NULL, NULL))
    _tensors._convert_fast[0] = convert_dense
    _tensors._clone_fast[0] = clone_dense
    _index._binary_params_fast[0] = binary_params
    _index._unary_params_fast[0] = unary_params
    _index._ternary_params_fast[0] = ternary_params
    _launch_reduce._run_fast[0] = run_reduce
    _special._unary_fast[0] = special_unary
    register_fast_form("ones_like", "cuda", _ones_like, ("ptcore",))
    register_fast_form("zeros_like", "cuda", _zeros_like, ("ptcore",))
    for op in UNARY_OPS:                    # x.relu_(), ptcore.exp_(x) ...
        register_fast_form(op + "_", "cuda", device_fast_inplace_unary(partial(unary_inplace, op)),
                           optional=True)
    for alias, op in _inplace_aliases():    # x.arcsin_(), ptcore.negative_(x) ...
        register_fast_form(alias + "_", "cuda", device_fast_inplace_unary(partial(unary_inplace, op)))
    for op, inplace in (("masked_fill", False), ("masked_fill_", True)):
        register_fast_form(op, "cuda", device_fast_masked_fill(
            partial(masked_fill_number, inplace=inplace), FORMULAS["masked_fill"], inplace),
                           _FORMS[op])
    register_fast_form("where", "cuda", device_fast_where(where_tensors, FORMULAS["where"], False),
                       ("ptcore",))
    register_fast_form("where", "cuda", device_fast_where(where_tensors, FORMULAS["where"], True),
                       ("Tensor",))
    register_fast_form("__rtruediv__", "cuda",
                       device_fast_rtruediv(FORMULAS["reciprocal"], FORMULAS["mul"]), ("Tensor",))
    fast = device_fast_reflected(rsub_number, FORMULAS["rsub"])
    for op in ("__rsub__", "rsub"):
        register_fast_form(op, "cuda", fast, _FORMS[op])
    for op, kop in (("__rfloordiv__", "div_floor"), ("__rmod__", "remainder"), ("__rpow__", "pow")):
        register_fast_form(op, "cuda", device_fast_reflected_nograd(partial(reflected_number, kop)),
                           ("Tensor",))
    for op in ("positive", "__pos__"):
        register_fast_form(op, "cuda", _positive, _FORMS[op])
    fast = device_fast_clamp(clamp, FORMULAS["clamp"])
    for op in ("clamp", "clip"):
        register_fast_form(op, "cuda", fast)
    for op in ("softmax", "log_softmax"):
        fn = partial(softmax_lastdim, op)
        register_fast_form(op, "cuda", _record.device_fast_softmax(fn, FORMULAS[op]), _BOTH)
        # F.softmax(x, dim, _stacklevel=3, dtype=None): its own op (a third positional
        # argument is _stacklevel, which the parser declines unless None)
        register_fast_form(op, "cuda", _record.device_fast_softmax(fn, FORMULAS[op], True), _NNF)
    for op in _REDUCE_OPS:
        register_fast_form(op, "cuda", _record.device_fast_reduce(
            lambda x, dim, keepdim, _op=op: reduce(_op, x, dim, keepdim), FORMULAS[op]))
    for op in _PAIR_OPS:
        register_fast_form(op, "cuda", _pair_fast(op))


def uninstall():
    """Remove what :func:`install` registered."""
    register_driver_fast_paths("cuda", None, None, None)
    _tensors._convert_fast[0] = None
    _tensors._clone_fast[0] = None
    _index._binary_params_fast[0] = None
    _index._unary_params_fast[0] = None
    _index._ternary_params_fast[0] = None
    _launch_reduce._run_fast[0] = None
    _special._unary_fast[0] = None
    register_fast_form("ones_like", "cuda", None, ("ptcore",))
    register_fast_form("zeros_like", "cuda", None, ("ptcore",))
    for op in UNARY_OPS:
        register_fast_form(op + "_", "cuda", None, optional=True)
    for alias, _ in _inplace_aliases():
        register_fast_form(alias + "_", "cuda", None)
    for op, namespaces in _FORMS.items():
        register_fast_form(op, "cuda", None, namespaces)
