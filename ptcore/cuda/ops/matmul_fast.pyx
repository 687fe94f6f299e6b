# cython: language_level=3, boundscheck=False, wraparound=False
"""The dense fast paths of CUDA's ``mm``, ``matmul`` (2-D), ``addmm`` and
``F.linear``, in C.

A training step's matrix products (a Linear layer's forward, the two
products of its backward) are the calls it makes most after the
elementwise ones.  Their general path (the entry, the device layer, the
front-end's checks, :func:`ptcore.cuda.ops.launch.gemm_mm`) costs about 8 us
of host time per product and 12 us per ``F.linear`` before the driver's
GEMM; here the checks, the result's allocation, the bias broadcast (a
copy kernel launched from C) and the driver's ``gemm`` call are made from
Cython, with the same arguments as ``gemm_mm`` -- so the same cuBLAS call
and bitwise the same result.  Taken: 2-D operands of one floating dtype
(float32/float64/float16/bfloat16) on one CUDA device, each row-major
contiguous or the transpose of a contiguous matrix (``w.t()``, ``g.mT``),
no size 0, ``addmm``'s ``input`` of that dtype and device shaped ``(n,)``,
``(1, n)``, ``(m, n)`` or ``()`` and contiguous, Python int/float
``beta``/``alpha``.  Anything else returns None and takes the general
path, which raises the errors.  :func:`install` registers them as the
fast forms of the ops' CUDA kernels (autograd records with the ops'
formulas), :func:`ptcore._dispatch.device.register_fast_form`.
"""
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport uintptr_t

from ptcore._ops.kernels._types cimport PT_BFLOAT16, PT_FLOAT16, PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase
from ptcore.cuda.runtime.device_storage cimport _dense_matrix, _dense_shaped
from ptcore._ops.kernels._types cimport PT_MAX_DIMS
from ptcore.cuda.ops.dense_fast cimport _kernel, _launch_vals, _FAM_COPY, _FAM_COPY_STRIDED

from ptcore import _settings
from ptcore._dispatch.device import register_fast_form
from ptcore.autograd import _record
from ptcore.autograd._formulas import FORMULAS
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.ops.strided_args import strided_arg

__all__ = ["mm", "matmul", "addmm", "linear", "install", "uninstall"]

cdef dict _state = _runtime._state      # updated in place, never rebound
cdef dict _settings_state = _settings._state
cdef object _stream_of = _runtime.current_stream_handle
# dtype number -> cudaDataType (_launch._GEMM_TYPES)
cdef int _CUDA_R_32F = _launch._GEMM_TYPES["float32"]
cdef int _CUDA_R_64F = _launch._GEMM_TYPES["float64"]
cdef int _CUDA_R_16F = _launch._GEMM_TYPES["float16"]
cdef int _CUDA_R_16BF = _launch._GEMM_TYPES["bfloat16"]
cdef enum:
    _COMPUTE_32F = 68           # cublasComputeType_t, as _launch._gemm_types
    _COMPUTE_32F_FAST_TF32 = 77
    _COMPUTE_64F = 70


cdef int _types(_TensorBase t, int* typ, int* comp) noexcept:
    """``_launch._gemm_types`` for the floating dtypes: float32 computes in
    TF32 when ``matmul.allow_tf32`` (the float32 matmul precision is not
    "highest"), the half types in float32."""
    cdef int num = t._dtype.num
    if num == PT_FLOAT32:
        typ[0] = _CUDA_R_32F
        comp[0] = _COMPUTE_32F if _settings_state["matmul_precision"] == "highest" \
            else _COMPUTE_32F_FAST_TF32
    elif num == PT_FLOAT64:
        typ[0] = _CUDA_R_64F
        comp[0] = _COMPUTE_64F
    elif num == PT_FLOAT16:
        typ[0] = _CUDA_R_16F
        comp[0] = _COMPUTE_32F
    elif num == PT_BFLOAT16:
        typ[0] = _CUDA_R_16BF
        comp[0] = _COMPUTE_32F
    else:
        return -1
    return 0


cdef int _layout(_TensorBase t, bint transposed) noexcept:
    """0: the matrix ``t`` (2-D), or its transpose when ``transposed``, is
    row-major contiguous; 1: it is the transpose of a row-major contiguous
    matrix (and not contiguous itself: ``gemm_mm``'s order); -1: neither."""
    cdef int i = 1 if transposed else 0
    cdef Py_ssize_t r = t._shape[i], c = t._shape[1 - i]
    cdef Py_ssize_t s0 = t._strides[i], s1 = t._strides[1 - i]
    if (c == 1 or s1 == 1) and (r == 1 or s0 == c):
        return 0
    if (r == 1 or s0 == 1) and (c == 1 or s1 == r):
        return 1
    return -1


cdef bint _operands(object a, object b, bint b_transposed) noexcept:
    """``a`` (m, k) and ``b`` (k, n) -- or (n, k) seen transposed when
    ``b_transposed`` -- 2-D, non-empty, of one floating dtype on one CUDA
    device, each with a layout cuBLAS reads without a copy."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return False
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    cdef int num = ta._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64 and num != PT_FLOAT16 and num != PT_BFLOAT16:
        return False
    if ta._ndim != 2 or tb._ndim != 2 or ta._dtype is not tb._dtype \
            or ta._storage.device._type_code != 1 or tb._storage.device._type_code != 1 \
            or ta._storage.device._idx != tb._storage.device._idx \
            or ta._numel == 0 or tb._numel == 0:
        return False
    if ta._shape[1] != (tb._shape[1] if b_transposed else tb._shape[0]):
        return False
    return _layout(ta, False) >= 0 and _layout(tb, b_transposed) >= 0


cdef int _gemm(_TensorBase a, _TensorBase b, bint bt, _TensorBase c, double alpha,
               double beta) except -1:
    """``c = alpha * a @ op(b) + beta * c`` (op: the transpose when ``bt``):
    ``gemm_mm``'s driver call (row-major C = A @ B as column-major
    C^T = B^T A^T; a transposed operand's memory is its column-major self)."""
    cdef Py_ssize_t m = a._shape[0], k = a._shape[1]
    cdef Py_ssize_t n = b._shape[0] if bt else b._shape[1]
    cdef int la = _layout(a, False)
    cdef int lb = _layout(b, bt)
    cdef int typ, comp
    if _types(a, &typ, &comp):
        raise TypeError(f"no cuBLAS type for {a._dtype}")
    cdef Py_ssize_t idx = c._storage.device._idx
    drv = _state["driver"]
    drv.gemm(idx, _stream_of(idx), lb, la, n, m, k, alpha,
             <uintptr_t>b._ptr(), typ, k if lb else n, <uintptr_t>a._ptr(), typ, m if la else k,
             beta, <uintptr_t>c._ptr(), typ, n, comp)
    return 0


cdef bint _number(object v, double* out) noexcept:
    if type(v) is float:
        out[0] = <double>v
        return True
    if type(v) is int and -(1 << 53) <= v <= (1 << 53):
        out[0] = <double>v
        return True
    return False


cdef bint _bias_ok(object bias, _TensorBase c) noexcept:
    """``bias`` broadcasts to ``c`` (m, n) from a contiguous (n,), (1, n),
    (m, n) or () tensor of its dtype and device."""
    if not isinstance(bias, _TensorBase):
        return False
    cdef _TensorBase t = <_TensorBase>bias
    if t._dtype is not c._dtype or t._storage.device._type_code != 1 \
            or t._storage.device._idx != c._storage.device._idx or not t._is_contig():
        return False
    if t._ndim == 0:
        return True
    if t._ndim == 1:
        return t._shape[0] == c._shape[1]
    return t._ndim == 2 and t._shape[1] == c._shape[1] and (t._shape[0] == 1 or
                                                           t._shape[0] == c._shape[0])


cdef int _broadcast_copy(_TensorBase c, _TensorBase bias) except -1:
    """``c[...] = bias`` broadcast: the cast kernel ``cast_copy`` launches."""
    cdef object st = strided_arg(c, (bias,))
    cdef tuple e = _kernel(_FAM_COPY if st is None else _FAM_COPY_STRIDED, None, c)
    cdef long long v[3]
    v[0] = c._numel
    v[1] = <long long><uintptr_t>c._ptr()
    v[2] = <long long><uintptr_t>bias._ptr()
    return _launch_vals(e, c._storage.device._idx, c._numel, False, v, 3,
                        NULL if st is None else <void*>PyBytes_AS_STRING(st))


cdef object _product(object bias, _TensorBase a, _TensorBase b, bint bt, double beta,
                     double alpha):
    """``beta * bias + alpha * a @ op(b)`` (bias None: the plain product)."""
    cdef Py_ssize_t m = a._shape[0]
    cdef Py_ssize_t n = b._shape[0] if bt else b._shape[1]
    if _state["driver"] is None or _kernel(_FAM_COPY, None, a) is None:
        return None             # no C launcher: the general path
    cdef _TensorBase c = _dense_matrix(a, a._dtype, m, n)
    if bias is not None:
        if not _bias_ok(bias, c):
            return None
        if beta != 0.0:
            _broadcast_copy(c, <_TensorBase>bias)
    else:
        beta = 0.0
    _gemm(a, b, bt, c, alpha, beta)
    return c


def mm(a, b):
    """``a @ b``, or None (the general path)."""
    if not _operands(a, b, False):
        return None
    return _product(None, <_TensorBase>a, <_TensorBase>b, False, 0.0, 1.0)


cdef object _batched(_TensorBase a, _TensorBase b):
    """``a @ b`` for operands of three or more dims with the same batch dims
    (no broadcasting), as the general path's ``_matmul``: each operand
    contiguous (a copy when not -- ``k.transpose(-2, -1)`` --, its ``_contig``),
    the result ``batch + (m, n)`` by one strided-batched GEMM with
    ``gemm_mm``'s arguments; None for anything else."""
    cdef int nd = a._ndim, i
    cdef Py_ssize_t nb = 1, m, k, n
    if b._ndim != nd:
        return None
    for i in range(nd - 2):
        if a._shape[i] != b._shape[i]:
            return None
        nb *= a._shape[i]
    m, k, n = a._shape[nd - 2], a._shape[nd - 1], b._shape[nd - 1]
    if b._shape[nd - 2] != k or nb == 0 or m == 0 or n == 0 or k == 0:
        return None
    if _state["driver"] is None or _kernel(_FAM_COPY, None, a) is None:
        return None
    if not a._is_contig():
        a = <_TensorBase>a.contiguous()
    if not b._is_contig():
        b = <_TensorBase>b.contiguous()
    cdef Py_ssize_t shape[PT_MAX_DIMS]
    for i in range(nd - 2):
        shape[i] = a._shape[i]
    shape[nd - 2] = m
    shape[nd - 1] = n
    cdef _TensorBase c = _dense_shaped(a, a._dtype, nd, shape)
    cdef int typ, comp
    if _types(a, &typ, &comp):
        return None
    cdef Py_ssize_t idx = c._storage.device._idx
    drv = _state["driver"]
    drv.gemm(idx, _stream_of(idx), 0, 0, n, m, k, 1.0,
             <uintptr_t>b._ptr(), typ, n, <uintptr_t>a._ptr(), typ, k,
             0.0, <uintptr_t>c._ptr(), typ, n, comp,
             batch=nb, stride_a=k * n, stride_b=m * k, stride_c=m * n)
    return c


def matmul(a, b):
    """``a @ b`` of two 2-D operands (:func:`mm`) or two of more dims with
    the same batch dims (one strided-batched GEMM), or None (the general
    path)."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    if ta._ndim == 2:
        return mm(a, b)
    cdef int num = ta._dtype.num
    if ta._ndim < 3 or ta._ndim > PT_MAX_DIMS or tb._dtype is not ta._dtype \
            or (num != PT_FLOAT32 and num != PT_FLOAT64 and num != PT_FLOAT16
                and num != PT_BFLOAT16) \
            or ta._storage.device._type_code != 1 or tb._storage.device._type_code != 1 \
            or ta._storage.device._idx != tb._storage.device._idx:
        return None
    return _batched(ta, tb)


def addmm(bias, a, b, beta=1, alpha=1):
    """``beta * bias + alpha * (a @ b)``, or None (the general path)."""
    cdef double be, al
    if not _number(beta, &be) or not _number(alpha, &al) or not _operands(a, b, False) \
            or not isinstance(bias, _TensorBase):
        return None
    return _product(bias, <_TensorBase>a, <_TensorBase>b, False, be, al)


def linear(x, w, bias=None):
    """``x @ w.T (+ bias)`` for a 2-D ``x``, or None (the general path)."""
    if not _operands(x, w, True):
        return None
    if bias is not None and (not isinstance(bias, _TensorBase) or (<_TensorBase>bias)._ndim > 1):
        return None
    return _product(bias, <_TensorBase>x, <_TensorBase>w, True, 1.0, 1.0)


def install():
    """Register the ops' fast forms on cuda (recorded by their autograd
    formulas) through :mod:`ptcore._dispatch.device`."""
    # (F.linear's entry is made when ptcore.nn.functional is imported, on the first use of nn)
    # lazy: ptcore.nn sits above the devices in the library's order
    import ptcore.nn.functional  # noqa: F401
    register_fast_form("mm", "cuda", _record.device_fast_mm(mm, FORMULAS["mm"]))
    # 2-D @ 2-D: MmBackward0 (the formula's), batched: its node for the batched product
    fmatmul = _record.device_fast_mm(matmul, FORMULAS["matmul"])
    register_fast_form("matmul", "cuda", fmatmul)
    register_fast_form("__matmul__", "cuda", fmatmul, ("Tensor",))
    register_fast_form("addmm", "cuda", _record.device_fast_addmm(addmm, FORMULAS["addmm"]))
    register_fast_form("linear", "cuda", _record.device_fast_linear(
        linear, FORMULAS["mm"], FORMULAS["addmm"]), ("nn.functional",))


def uninstall():
    """Remove what :func:`install` registered."""
    for op in ("mm", "matmul", "addmm"):
        register_fast_form(op, "cuda", None)
    register_fast_form("__matmul__", "cuda", None, ("Tensor",))
    register_fast_form("linear", "cuda", None, ("nn.functional",))
