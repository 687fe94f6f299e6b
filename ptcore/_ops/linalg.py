"""Matrix products: ``matmul`` and its family, ``einsum``, ``tensordot``, ``kron``.

Float32/float64/complex64/complex128 products go to BLAS (SciPy's OpenBLAS,
through ``ptcore._ops.kernels._blas``), without copies whenever BLAS can read an
operand as it is laid out; float16/bfloat16 are computed in float32 (as
PyTorch's CPU does) and rounded once; integer products use an exact kernel
that wraps like PyTorch's.  The BLAS extension loads SciPy's linear algebra,
so it is imported on the first product, not at ``import ptcore``.

The top-level forms of the ``ptcore.linalg`` factorisations (``det``,
``inverse``, ``svd`` ...) live here too; they call ``ptcore.linalg``.
"""
import builtins as _b
import math as _math
import numbers as _numbers
import sys as _sys

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import _refuse_complex32, _cpp_name
from ptcore._scalar_args import int_arg, number_param as _number_param, bool_param as _bool_param
from ptcore._ops._out import copy_out, check_written, check_out_arg, resize_out
from ptcore._ops import matmul_out_dtype as _out_dtype
from ptcore._dispatch.table import entries as _entries
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._settings import grad_state as _grad_state, _state as _settings_state
from ptcore._dispatch.device import (check_same_device as _check_same_device,
                                     cpu_kernel as _cpu_kernel, loop_for as _loop_for,
                                     in_host_memory as _in_host_memory,
                                     no_kernel_error as _no_kernel_error)
from ptcore._dtype_utils import _result_type
from ptcore._dtype_utils import can_cast
from ptcore._dtype_utils import promote_types
from ptcore._ops.kernels import _parallel
from ptcore._ops.kernels._ewdrv import fast_outer as _fast_outer
from ptcore._warn import warn_once
from ptcore._ops import pointwise as _pw

__all__ = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger",
    "addmm", "addmv", "addr", "baddbmm", "addbmm",
    "einsum", "tensordot", "kron", "chain_matmul", "matrix_power",
    "det", "logdet", "slogdet", "inverse", "cholesky", "svd", "qr", "pinverse",
]

# ---------------------------------------------------------------------------
# lazy BLAS import and thread count
# ---------------------------------------------------------------------------
_BLAS = None
_BLAS_THREADS = [None]     # last value given to _set_blas_threads
_BLAS_SETTER = [None]      # callable(n) that sets the BLAS pool size


def _blas():
    """``ptcore._ops.kernels._blas``, imported (and its thread count set) on first use."""
    global _BLAS
    if _BLAS is None:
        # lazy: the kernels cimport SciPy's BLAS (scipy.linalg, ~0.5 s): loaded on first use
        from ptcore._ops.kernels import _blas as mod
        _BLAS = mod
        _apply_blas_threads()
    return _BLAS


def _set_sgemm_isa(isa):
    """Choose the kernels of ptcore's float32 GEMM (ptc_sgemm.h) in every
    module that uses it (matmul, convolutions, recurrent layers; also the
    direct few-channel convolution kernels, ptc_conv_direct.h): 0 = the
    BLAS's sgemm (and no direct kernels), 1 = AVX2+FMA, 2 = AVX-512F, -1 =
    the best the CPU has.
    Returns the choice in effect (a CPU lacking the ISA gets its best).  For
    tests and benchmarks; users can set PTCORE_SGEMM=blas|avx2|avx512."""
    # lazy: the kernels cimport SciPy's BLAS (scipy.linalg, ~0.5 s): loaded on first use
    from ptcore._ops.kernels import _conv, _rnn
    got = _blas()._set_sgemm_isa(int(isa))
    _conv._set_sgemm_isa(int(isa))
    _rnn._set_sgemm_isa(int(isa))
    return got


def _set_sgemm_direct(mode):
    """Whether ptcore's float32 GEMM reads unpacked operands in place, in
    every module that uses it: 0 = always pack, 1 = where it pays (the
    default), 2 = in place wherever the layout allows, 3 = only the first
    operand, 4 = only the second.  The results are the
    same bits in every mode; for tests and benchmarks.  Returns the mode."""
    # lazy: the kernels cimport SciPy's BLAS (scipy.linalg, ~0.5 s): loaded on first use
    from ptcore._ops.kernels import _conv, _rnn
    got = _blas()._set_sgemm_direct(int(mode))
    _conv._set_sgemm_direct(int(mode))
    _rnn._set_sgemm_direct(int(mode))
    return got


def _find_blas_setter():
    """A function setting the thread count of the BLAS that SciPy's
    ``cython_blas`` uses: SciPy's bundled OpenBLAS through ctypes, else
    threadpoolctl (optional) on the BLAS libraries it finds."""
    import ctypes
    import glob
    import os
    try:
        import scipy
        base = os.path.dirname(os.path.dirname(scipy.__file__))
        libs = sorted(glob.glob(os.path.join(base, "scipy.libs", "*openblas*.so*")))
        libs += sorted(glob.glob(os.path.join(os.path.dirname(scipy.__file__), ".dylibs",
                                              "*openblas*")))
    except Exception:           # pragma: no cover - no SciPy
        libs = []
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_set_num_threads", "openblas_set_num_threads",
                    "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                return fn
    try:
        import threadpoolctl
    except ImportError:
        return None

    def setter(n):
        threadpoolctl.threadpool_limits(limits=n, user_api="blas")
    return setter


def _apply_blas_threads():
    # BLAS runs single-threaded: ptcore's GEMM splits large products into
    # fixed column blocks over its own threads (ptcore._ops.kernels._blas._gemm), so
    # results do not depend on the thread count (a multi-threaded OpenBLAS
    # partitions by thread count and changes results bitwise)
    n = 1
    if _BLAS_SETTER[0] is None:
        _BLAS_SETTER[0] = _find_blas_setter() or (lambda n: None)
    try:
        _BLAS_SETTER[0](int(n))
    except Exception:           # pragma: no cover - a foreign BLAS refusing
        pass


def _set_blas_threads(n):
    """Threads BLAS/LAPACK may use (called by ``ptcore.set_num_threads``).

    Before the first product this only records ``n``; SciPy's BLAS is not
    loaded for it."""
    _BLAS_THREADS[0] = int(n)
    if _BLAS is not None:
        _apply_blas_threads()


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
_BLAS_NUMS = (_C.float32.num, _C.float64.num, _C.complex64.num, _C.complex128.num)
_LOW = (_C.float16, _C.bfloat16)
# mm/addmm of the float8 types: in float32, rounded once (PyTorch's CPU kernels)
_FLOAT8 = (_C.float8_e4m3fn, _C.float8_e5m2, _C.float8_e4m3fnuz, _C.float8_e5m2fnuz)


_cpp = _cpp_name


def _st(dt):
    return dt._legacy


def _check_tensor(x, name, pos, fn):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, "
                        f"not {type(x).__name__}")


def _check_cpu(fn, *ts):
    """None when ``ts`` are all in host memory (the CPU kernels' operands);
    torch's error for two devices, else the no-kernel error for theirs."""
    if all(_in_host_memory(t) for t in ts):
        return None
    raise _no_kernel_error(fn, _check_same_device(fn, *ts))


def _check_dev(fn, *ts):
    """The device of ``ts`` (torch's error on two devices); for the front-ends
    whose loops (``_product``, ``_dot_impl``) run on any device with a
    registered loop."""
    if all(_in_host_memory(t) for t in ts):
        return None
    return _check_same_device(fn, *ts)


def _not_impl(kname, dt):
    return NotImplementedError(f'"{kname}" not implemented for \'{_st(dt)}\'')


_FAST = {}


def _fast(name):
    """A fast entry of the BLAS module (``mm_fast``, ``addmm_fast``): one
    Cython call that takes the plain float32 case or returns None."""
    f = _FAST.get(name)
    if f is None:
        f = _FAST[name] = getattr(_blas(), name)
    return f


def _empty(shape, dt):
    return _C.empty(tuple(shape), dtype=dt)


def _usable(t):
    return t if _blas().usable(t) else t.contiguous()


def _vec_usable(t):
    return t if _blas().vector_usable(t) else t.contiguous()


def _finish(result, out, fn="matmul"):
    """Return ``result``, or write it into ``out`` (resized as PyTorch does)."""
    if out is None:
        return result
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(result.dtype)}, but got "
                           f"{_cpp(out.dtype)} instead")
    return copy_out(out, result)


def _refuse_grad_out(out, fname, *ts):
    """torch's error for an ``out=`` call of a differentiable op on inputs that require
    grad (the composites here run their parts without ``out``, so check it up front)."""
    if out is not None:
        _grad_out_check(fname, *ts)


def _grad_out_check(fname, *ts):
    """The check of :func:`_refuse_grad_out` (an out= was given)."""
    if (_grad_state.enabled or (_grad_state.inference and _grad_state.nominal)) and \
            any(isinstance(t, _TensorBase) and t.requires_grad for t in ts):
        raise RuntimeError(f"{fname}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")


def _finish_castable(result, out, fn):
    """:func:`_finish` for ops torch writes into ``out`` through a copy (composites:
    outer, kron, pinv ...): ``out`` may have any dtype ``result`` safely casts to."""
    if out is None:
        return result
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{fn}: Expected result to be safely castable from "
                           f"{result.dtype._legacy} dtype, but got result with dtype "
                           f"{out.dtype._legacy}")
    return copy_out(out, result)


def _scalar_ok(value, dt, name):
    """PyTorch's check: integral tensors take no floating alpha/beta."""
    if not (dt.is_floating_point or dt.is_complex):
        if isinstance(value, _b.float) or isinstance(value, _b.complex):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")
    elif not dt.is_complex and isinstance(value, _b.complex):
        raise RuntimeError(f"For non-complex input tensors, argument {name} must not be a "
                           "complex number.")
    return value


def _real_scalar_ok(value, dt, name):
    """addmm/addmv/baddbmm's check: integral tensors truncate a floating alpha/beta (as
    torch's CPU kernels); only a complex scalar for a real tensor is an error."""
    if not dt.is_complex and isinstance(value, _b.complex):
        raise RuntimeError(f"For non-complex input tensors, argument {name} must not be a "
                           "complex number.")
    return value


def _int_scalar(v):
    if isinstance(v, _TensorBase):
        v = v.item()
    if isinstance(v, _b.complex):
        v = v.real
    return _b.int(v)


def _is_zero(v):
    if isinstance(v, _TensorBase):
        v = v.item()
    return v == 0


# ---------------------------------------------------------------------------
# the product kernel: c = beta * c + alpha * (a @ b) over equal batch dims
# ---------------------------------------------------------------------------
def _product(*args, **kwargs):
    """The product kernel as the composites call it: :func:`_product_raw`,
    recorded with its formula and seen by forward AD once autograd is
    installed (it registers that version in ``_PRODUCT``)."""
    return _PRODUCT[0](*args, **kwargs)


def _product_raw(a, b, c=None, alpha=1, beta=0, kname="addmm_impl_cpu_"):
    """``a`` (..., M, K) @ ``b`` (..., K, N) with equal batch sizes (``a``/``b``
    may be expanded views).  Returns ``c`` (updated in place when given and
    BLAS-writable) or a new contiguous tensor."""
    dt = a.dtype
    if dt is _C.bool_:
        raise _not_impl(kname, dt)
    if not _in_host_memory(a):
        return _cpu_kernel("product", a.device, None)(a, b, c, alpha, beta, kname)
    if c is None and dt not in _LOW and dt not in _FLOAT8 and type(alpha) is _b.int \
            and alpha == 1:
        return _blas().product(a, b)
    shape = tuple(a.shape)[:-1] + (tuple(b.shape)[-1],)
    if beta is not None and _is_zero(beta):
        beta = 0
    if dt is _C.bfloat16 and type(alpha) in (_b.int, _b.float) and alpha == 1:
        r = _bf16_product(a, b, c, beta)
        if r is not None:
            return r
    if dt in _LOW or dt in _FLOAT8:
        a32 = a._to_dtype(_C.float32)
        b32 = b._to_dtype(_C.float32)
        c32 = None
        if c is not None and not _is_zero(beta):
            c32 = c._to_dtype(_C.float32, copy=True)
        r32 = _product(a32, b32, c32, alpha, beta if c32 is not None else 0)
        if c is not None:
            c.copy_(r32)
            return c
        return r32._to_dtype(dt)
    if dt.is_floating_point or dt.is_complex:
        if not dt.is_complex:
            if isinstance(alpha, _b.complex):
                alpha = alpha.real
            if isinstance(beta, _b.complex):
                beta = beta.real
        alpha = alpha.item() if isinstance(alpha, _TensorBase) else alpha
        beta = beta.item() if isinstance(beta, _TensorBase) else beta
    else:
        alpha = _int_scalar(alpha)
        beta = _int_scalar(beta)
    blas = _blas()
    if dt.num in _BLAS_NUMS:
        if not blas.usable(a):
            a = a.contiguous()
        if not blas.usable(b):
            b = b.contiguous()
    target = c
    if c is None:
        target = _empty(shape, dt)
        beta = 0
    elif not _writable(c, a, b):
        target = c.contiguous() if beta != 0 else _empty(shape, dt)
        if target is c:
            target = c.clone()
    blas.mm_into(target, a, b, alpha, beta)
    if c is not None and target is not c:
        c.copy_(target)
        return c
    return target



def _bf16_product(a, b, c, beta):
    """``a @ b`` (+ ``beta * c``) of bfloat16 matrices (or batches of them) by
    the AVX512-BF16 kernel (``_blas.bf16_mm``: torch's oneDNN instruction,
    float32 sums rounded once); None where it does not run (no such CPU,
    complex beta), the float32 product then runs."""
    blas = _blas()
    if not blas.bgemm_available() or isinstance(beta, _b.complex):
        return None
    init = None
    if c is not None and not _is_zero(beta):
        init = _bf16_init(c, beta)
    shape = None
    nb = a.ndim - 2
    if nb > 0 and all(b.stride(d) == 0 for d in range(nb)):
        # one matrix for every batch (a Linear's weight over (B, T, d) inputs):
        # the batch folded into the rows, as torch's matmul does -- a copy of
        # ``a`` where its layout does not fold (attention's seq-first
        # transposes), then one product that packs the weight once (per
        # batch, its packing took longer than the products)
        shape = tuple(a.shape)[:-1] + (b.shape[-1],)
        a = a.reshape(-1, a.shape[-1])
        b = b[(0,) * nb]
        if init is not None:
            init = init.reshape(-1, init.shape[-1])
    elif a.ndim > 4:
        # batch dims folded into two (views where the layout allows; the kernel
        # takes two with any strides: attention's (B, H, T, d) products)
        shape = tuple(a.shape)[:-1] + (b.shape[-1],)
        a = a.reshape((-1,) + tuple(a.shape)[-3:])
        b = b.reshape((-1,) + tuple(b.shape)[-3:])
        if init is not None:
            init = init.reshape((-1,) + tuple(init.shape)[-3:])
    r = blas.bf16_mm(a, b, init)
    if r is None:
        return None
    if shape is not None:
        r = r.view(shape)
    if c is not None:
        c.copy_(r)
        return c
    return r


def _bf16_init(c, beta):
    """``beta * c`` in float32 as a view of ``c``'s shape, without copying what
    expanding ``c`` repeats (a bias row)."""
    beta = beta.item() if isinstance(beta, _TensorBase) else beta
    base = c
    for d in range(c.ndim):
        if c.stride(d) == 0 and c.shape[d] > 1:
            base = base.narrow(d, 0, 1)
    init = base._to_dtype(_C.float32, copy=True)
    if beta != 1:
        init = init * _b.float(beta)
    return init.expand(c.shape)


_PRODUCT = [_product_raw]

def _writable(c, a, b):
    """Whether BLAS may write ``c`` directly: a unit stride in one of its two
    last dims, no internal overlap in the matrices, and no memory shared
    with the operands."""
    if c.numel() == 0:
        return True
    s = c.stride()
    sh = c.shape
    m, n = sh[-2], sh[-1]
    rs, cs = s[-2], s[-1]
    if n <= 1:
        cs = 1
    if m <= 1:
        rs = n if cs == 1 else 1
    if not ((cs == 1 and rs >= _b.max(n, 1)) or (rs == 1 and cs >= _b.max(m, 1))):
        return False
    for i in range(c.dim() - 2):
        if s[i] == 0 and sh[i] > 1:
            return False
    for t in (a, b):
        if t.untyped_storage().data_ptr() == c.untyped_storage().data_ptr() and t.numel() > 0:
            return False
    return True


# ---------------------------------------------------------------------------
# matmul family
# ---------------------------------------------------------------------------
def _mm_check(a, b):
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp(a.dtype)} != {_cpp(b.dtype)}")
    sa = tuple(a.shape)
    sb = tuple(b.shape)
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                           f"{sb[0]}x{sb[1]})")


def mm(input, mat2, out_dtype=None, *, out=None):
    """Matrix product of two 2-D tensors (``torch.mm``); ``out_dtype``: see
    :mod:`ptcore._ops.matmul_out_dtype` (CUDA only, as torch's)."""
    if out_dtype is not None:
        return _out_dtype.mm_dtype(input, mat2, out_dtype, out)
    if out is None:
        r = _fast("mm_fast")(input, mat2)      # plain float32 CPU matrices
        if r is not None:
            return r
    _refuse_complex32("addmm_impl_cpu_", input, mat2)
    _check_tensor(input, "input", 1, "mm")
    _check_tensor(mat2, "mat2", 2, "mm")
    _check_cpu("mm", input, mat2)
    _mm_check(input, mat2)
    return _finish(_product(input, mat2), out, "mm")


def bmm(input, mat2, out_dtype=None, *, out=None):
    """Batched matrix product of two 3-D tensors (``torch.bmm``); ``out_dtype``:
    see :mod:`ptcore._ops.matmul_out_dtype` (CUDA only, as torch's)."""
    if out_dtype is not None:
        return _out_dtype.bmm_dtype(input, mat2, out_dtype, out)
    if out is None:
        r = _fast("bmm_fast")(input, mat2)     # BLAS-readable float/complex CPU batches
        if r is not None:
            return r
    _check_tensor(input, "input", 1, "bmm")
    _check_tensor(mat2, "mat2", 2, "bmm")
    _check_cpu("bmm", input, mat2)
    _bmm_check(input, mat2)
    if input.dtype is _C.bool_:
        raise _not_impl("bmm", input.dtype)
    return _finish(_product(input, mat2), out, "bmm")


def _bmm_check(a, b, n1="batch1", n2="batch2"):
    if a.dim() != 3:
        raise RuntimeError(f"{n1} must be a 3D tensor")
    if b.dim() != 3:
        raise RuntimeError(f"{n2} must be a 3D tensor")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_st(a.dtype)} but found {_st(b.dtype)}")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


def _mv_check(mat, vec, input_shape=None, input_dtype=None):
    if mat.dim() == 0 and input_shape is None:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got "
                           f"{1 if input_shape is None else len(input_shape)}, {mat.dim()}, "
                           f"{vec.dim()}")
    idt = vec.dtype if input_dtype is None else input_dtype
    if not (idt is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_st(idt)}, {_st(mat.dtype)}, and {_st(vec.dtype)}")
    ish = (mat.shape[0],) if input_shape is None else tuple(input_shape)
    if mat.shape[1] != vec.shape[0] or not (
            ish == (mat.shape[0],) or ish == (1,) or ish == ()):
        got = ish[0] if len(ish) else 1
        raise RuntimeError(f"size mismatch, got input ({got}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")


def _method(fn):
    """``fn`` as a Tensor method: ``self`` first (the function's ``input``)."""
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    m.__name__ = fn.__name__
    m.__qualname__ = "Tensor." + fn.__name__
    m.__doc__ = fn.__doc__
    return m


def _self_method(fn):
    """Mark ``Tensor.<name>`` as ``fn`` with ``self`` first (torch's method
    signature); returns ``fn``."""
    _method_form(fn.__name__, _method(fn))
    return fn


@_self_method
def mv(input, vec, *, out=None):
    """Matrix-vector product (``torch.mv``)."""
    if out is None:
        r = _fast("mv_fast")(input, vec)       # BLAS-readable CPU matrix and vector
        if r is not None:
            return r
        if _mv_fast_ok(input, vec):
            return _product(input, vec.unsqueeze(1)).squeeze(1)
    _check_tensor(input, "input", 1, "mv")
    _check_tensor(vec, "vec", 2, "mv")
    _check_dev("mv", input, vec)
    _mv_check(input, vec)
    if input.dtype is _C.bool_:
        raise _not_impl("addmv_impl_cpu", input.dtype)
    r = _product(input, vec.unsqueeze(1)).squeeze(1)
    return _finish(r, out, "mv")


def _dot_check(a, b):
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_st(a.dtype)} and {_st(b.dtype)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    if a.dtype is _C.bool_:
        raise _not_impl("dot", a.dtype)


from ptcore._dispatch.dispatcher import on as _layers_on  # noqa: E402

# the dtypes of the vector products' fast path (BLAS dot)
_DOT_DTYPES = frozenset((_C.float32, _C.float64, _C.complex64, _C.complex128))


def _mv_fast_ok(a, b):
    """Whether ``a`` (a matrix) and ``b`` (a vector) are CPU tensors of one
    BLAS dtype whose sizes match: mv/matmul's checks all pass (the product
    records itself)."""
    return isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.ndim == 2 \
        and b.ndim == 1 and a.dtype is b.dtype and a.dtype in _DOT_DTYPES \
        and a.shape[1] == b.shape[0] and _in_host_memory(a) and _in_host_memory(b)


def _fold_fast_ok(a, b):
    """Whether ``a`` (contiguous, 3-D or more) times ``b`` (a matrix) are CPU
    tensors of one BLAS dtype whose sizes match, with ``a``'s batch folding
    into rows (matmul's checks all pass; the product records itself)."""
    return isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.ndim >= 3 \
        and b.ndim == 2 and a.dtype is b.dtype and a.dtype in _DOT_DTYPES \
        and a.shape[-1] == b.shape[0] and a.shape[-1] != 0 and a.is_contiguous() \
        and _in_host_memory(a) and _in_host_memory(b)


def _vectors_one_dtype(a, b):
    """Whether ``a`` and ``b`` are CPU vectors of one dtype (outer and kron
    of them are the broadcast product, whatever their lengths)."""
    return isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.ndim == 1 \
        and b.ndim == 1 and a.dtype is b.dtype and _in_host_memory(a) and _in_host_memory(b)


def _dot_fast_ok(a, b):
    """Whether ``a`` and ``b`` are CPU vectors of one length and one BLAS
    dtype: dot/vdot/inner's checks all pass and ``_dot_impl`` computes."""
    return isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.ndim == 1 \
        and b.ndim == 1 and a.dtype is b.dtype and a.dtype in _DOT_DTYPES \
        and a.shape[0] == b.shape[0] and _in_host_memory(a) and _in_host_memory(b)


def _dot_impl(a, b, conj):
    dt = a.dtype
    if not _in_host_memory(a):
        return _cpu_kernel("dot", a.device, None)(a, b, conj)
    if dt in _LOW:
        return _dot_impl(a._to_dtype(_C.float32), b._to_dtype(_C.float32), conj)._to_dtype(dt)
    out = _empty((), dt)
    blas = _blas()
    blas.dot_into(out, _vec_usable(a), _vec_usable(b), bool(conj and dt.is_complex))
    return out


@_self_method
def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors (``torch.dot``; no conjugation)."""
    if out is None:
        # two CPU vectors of one BLAS dtype and length: BLAS at once (C checks)
        r = _fast("dot_fast")(input, tensor, False)
        if r is not None:
            return r
    _refuse_complex32("dot", input, tensor)
    _check_tensor(input, "input", 1, "dot")
    _check_tensor(tensor, "tensor", 2, "dot")
    _check_dev("dot", input, tensor)
    _dot_check(input, tensor)
    return _finish(_dot_impl(input, tensor, False), out, "dot")


@_self_method
def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` of two 1-D tensors (``torch.vdot``)."""
    if out is None:
        r = _fast("dot_fast")(input, other, True)
        if r is not None:
            return r
    _refuse_complex32("vdot", input, other)
    _check_tensor(input, "input", 1, "vdot")
    _check_tensor(other, "other", 2, "vdot")
    _check_dev("vdot", input, other)
    _dot_check(input, other)
    return _finish(_dot_impl(input, other, True), out, "vdot")


def _broadcast_batch(sa, sb):
    """PyTorch's broadcast of two batch shapes (error names tensors a and b)."""
    n = _b.max(len(sa), len(sb))
    sa = (1,) * (n - len(sa)) + tuple(sa)
    sb = (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _batched_matmul(a, b):
    """``a`` (..., M, K) @ ``b`` (..., K, N), both at least 2-D, batch dims
    broadcast.  Shapes and dtypes already checked."""
    batch = _broadcast_batch(a.shape[:-2], b.shape[:-2])
    if _in_host_memory(a) and a.dtype.num in _BLAS_NUMS:
        blas = _blas()
        # make operands BLAS-readable before expanding (never materialise
        # a broadcast)
        if not blas.usable(a):
            a = a.contiguous()
        if not blas.usable(b):
            b = b.contiguous()
    # (operands whose batch dims are the broadcast ones already are read as they
    # are: no view made, none for autograd's view hook to see)
    if tuple(a.shape[:-2]) != batch:
        a = a.expand(*batch, a.shape[-2], a.shape[-1])
    if tuple(b.shape[:-2]) != batch:
        b = b.expand(*batch, b.shape[-2], b.shape[-1])
    return _product(a, b, kname="bmm")


@_self_method
def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's 1-D/2-D/batched rules (``torch.matmul``).

    1-D @ 1-D is a dot product (0-d result); a 1-D first operand gets a dim
    prepended and a 1-D second operand a dim appended, removed afterwards;
    batch dims broadcast.

    Examples
    --------
    >>> import ptcore
    >>> a = ptcore.ones(2, 3, 4)
    >>> ptcore.matmul(a, ptcore.ones(4)).shape
    ptcore.Size([2, 3])
    """
    if out is None:
        r = _fast("mm_fast")(input, other)     # plain float32 CPU matrices
        if r is not None:
            return r
        r = _fast("mv_fast")(input, other)     # BLAS-readable CPU matrix and vector
        if r is not None:
            return r
        # a contiguous CPU batch of rows times a matrix where nothing records (a
        # Linear's call on a sequence under no_grad): the folded product in one call
        r = _fast("fold_fast")(input, other, _grad_state.enabled)
        if r is not None:
            return r
        # batches of matrices of the same batch sizes (attention's q @ k^T), likewise
        r = _fast("batched_fast")(input, other, _grad_state.enabled)
        if r is not None:
            return r
        if _mv_fast_ok(input, other):
            # a CPU matrix and vector: mv's product without the checks below
            return _product(input, other.unsqueeze(1)).squeeze(1)
        if _fold_fast_ok(input, other):
            # a contiguous CPU batch of rows times a matrix (a Linear's call on a
            # sequence): the folded product of the general path below without
            # its checks, which all pass
            K = input.shape[-1]
            return _product(input.view(input.numel() // K, K), other).view(
                tuple(input.shape[:-1]) + (other.shape[1],))
    vectors = getattr(input, "ndim", 0) == 1 and getattr(other, "ndim", 0) == 1
    _refuse_complex32("dot" if vectors else "addmm_impl_cpu_", input, other)
    _check_tensor(input, "input", 1, "matmul")
    _check_tensor(other, "other", 2, "matmul")
    _check_cpu("matmul", input, other)
    a, b = input, other
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        _dot_check(a, b)
        r = _dot_impl(a, b, False)
    elif da == 2 and db == 1:
        _mv_check(a, b)
        if a.dtype is _C.bool_:
            raise _not_impl("addmv_impl_cpu", a.dtype)
        r = _product(a, b.unsqueeze(1)).squeeze(1)
    elif da == 1 and db == 2:
        a2 = a.unsqueeze(0)
        _mm_check(a2, b)
        r = _product(a2, b).squeeze(0)
    elif da == 2 and db == 2:
        _mm_check(a, b)
        r = _product(a, b)
    elif da >= 3 and db <= 2:
        # fold the batch into the rows: one large product
        K = a.shape[-1]
        rows = a.numel() // K if K else _math.prod(a.shape[:-1])
        folded_shape = (rows, K)
        if db == 1:
            if a.dtype is not b.dtype:
                raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                                   f"{_st(b.dtype)}, {_st(a.dtype)}, and {_st(b.dtype)}")
            if K != b.shape[0]:
                raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{K}), "
                                   f"vec ({b.shape[0]})")
            if a.dtype is _C.bool_:
                raise _not_impl("addmv_impl_cpu", a.dtype)
            b2 = b.unsqueeze(1)
        else:
            if a.dtype is not b.dtype:
                raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                                   f"{_cpp(a.dtype)} != {_cpp(b.dtype)}")
            if K != b.shape[0]:
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{K} and "
                                   f"{b.shape[0]}x{b.shape[1]})")
            b2 = b
        try:
            a2 = a.view(folded_shape)
        except RuntimeError:
            a2 = None
        if a2 is not None:
            r = _product(a2, b2).view(tuple(a.shape[:-1]) + tuple(b2.shape[-1:]))
        else:
            r = _batched_matmul(a, b2)
        if db == 1:
            r = r.squeeze(-1)
    else:
        # at least one operand >= 3-D, the other 1-D or 2-D or batched
        a2 = a.unsqueeze(0) if da == 1 else a
        b2 = b.unsqueeze(-1) if db == 1 else b
        if a2.dtype is not b2.dtype:
            raise RuntimeError(f"expected scalar type {_st(a2.dtype)} but found "
                               f"{_st(b2.dtype)}")
        batch = _broadcast_batch(a2.shape[:-2], b2.shape[:-2])
        if a2.shape[-1] != b2.shape[-2]:
            nb = _math.prod(batch)
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{nb}, {a2.shape[-1]}] but got: [{nb}, {b2.shape[-2]}].")
        if a2.dtype is _C.bool_:
            raise _not_impl("bmm", a2.dtype)
        r = _batched_matmul(a2, b2)
        if da == 1:
            r = r.squeeze(-2)
        if db == 1:
            r = r.squeeze(-1)
    return _finish(r, out, "matmul")


@_self_method
def inner(input, other, *, out=None):
    """Inner product over the last dims (``torch.inner``)."""
    if out is None and _dot_fast_ok(input, other) and not _layers_on[0] \
            and not input._requires_grad and not other._requires_grad:
        # two CPU vectors, nothing to record (inner is differentiated
        # through its parts), no layer on: their dot product (what tensordot
        # reduces to), without tensordot's dims parsing and reshapes
        return _dot_impl(input, other, False)
    _check_tensor(input, "input", 1, "inner")
    _check_tensor(other, "other", 2, "inner")
    _check_dev("inner", input, other)
    if input.dim() == 0 or other.dim() == 0:
        # a scalar times a tensor: an exact rank-1 product
        dt = _result_type(input, other)
        s, t = (input, other) if input.dim() == 0 else (other, input)
        r = _rank1(t._to_dtype(dt).reshape(-1), s._to_dtype(dt).reshape(1))
        r = r.reshape(tuple(t.shape))
        if isinstance(out, _TensorBase) and out.dtype is not dt:
            # torch's inner of a scalar is mul(out=): a TensorIterator op, it casts
            if not can_cast(dt, out.dtype):
                raise RuntimeError(f"result type {dt._legacy} can't be cast to the desired "
                                   f"output type {out.dtype._legacy}")
            return copy_out(out, r)
        return _finish(r, out, "inner")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_st(input.dtype)} but found "
                           f"{_st(other.dtype)}")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return _finish(tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1])), out,
                   "inner")


# ---------------------------------------------------------------------------
# add* forms
# ---------------------------------------------------------------------------
def _beta_alpha(beta, alpha, fn):
    """beta= and alpha= read as torch reads Number parameters (a 0-d tensor's value;
    any other tensor a TypeError)."""
    return _number_param(beta, fn, "beta"), _number_param(alpha, fn, "alpha")


def _expand_input(inp, shape):
    return inp.expand(*shape)


def _addmm_dtype_check(inp, m1, m2):
    """torch's addmm order: self against mat2, then mat1 against mat2."""
    _addmm_dtypes(inp.dtype, m1.dtype if m1.dim() == 2 and m2.dim() == 2 else m2.dtype,
                  m2.dtype)


def _addmm_dtypes(self_dtype, mat1_dtype, mat2_dtype):
    """addmm's dtype errors (also F.linear's with a bias: ``mat1 and mat2 ... Double and
    Float`` for a float64 input)."""
    if self_dtype is not mat2_dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_st(self_dtype)} "
                           f"and {_st(mat2_dtype)}")
    if mat1_dtype is not mat2_dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_st(mat1_dtype)} "
                           f"and {_st(mat2_dtype)}")


def _addmm_impl(inp, m1, m2, beta, alpha, fn):
    _addmm_dtype_check(inp, m1, m2)
    _real_scalar_ok(alpha, m2.dtype, "alpha")
    _real_scalar_ok(beta, m2.dtype, "beta")
    _mm_check(m1, m2)
    shape = (m1.shape[0], m2.shape[1])
    if inp.dim() > 2:
        raise RuntimeError(f"expand({inp.type()}{{{list(inp.shape)}}}, size={list(shape)}): the "
                           f"number of sizes provided (2) must be greater or equal to the number "
                           f"of dimensions in the tensor ({inp.dim()})")
    c = None
    if not _is_zero(beta):
        _expand_input(inp, shape)       # shape check
        r = _addmm_rows(inp, m1, m2, shape, beta, alpha)
        if r is not None:
            return r
        if m1.dtype is _C.bfloat16 and inp.dtype is _C.bfloat16 and type(alpha) in (_b.int, _b.float) \
                and alpha == 1 and type(beta) in (_b.int, _b.float) and _blas().bgemm_available():
            # the bias read in place by the bfloat16 kernel, added before its one rounding
            r = _blas().bf16_mm(m1, m2, _bf16_init(_expand_input(inp, shape), beta))
            if r is not None:
                return r
        c = _expand_input(inp, shape).clone(memory_format=_C.contiguous_format)
    else:
        _expand_input(inp, shape)       # shape check only
    return _product(m1, m2, c, alpha, beta)


def _addmm_rows(inp, m1, m2, shape, beta, alpha):
    """addmm with a float32 row vector ``inp`` (a Linear's bias: (N,) or
    (1, N)) read in place by the product (_blas.addmm_rows_into) rather
    than expanded into the output first; None where that path does not
    apply."""
    if m1.dtype is not _C.float32 or inp.dtype is not _C.float32 or m2.dtype is not _C.float32:
        return None
    if type(alpha) not in (_b.int, _b.float) or type(beta) not in (_b.int, _b.float):
        return None
    if inp.dim() == 2:
        if inp.shape[0] != 1:
            return None
        inp = inp[0]
    if inp.dim() != 1 or inp.shape[0] != shape[1]:
        return None
    out = _empty(shape, _C.float32)
    if _blas().addmm_rows_into(out, m1, m2, inp, alpha, beta):
        return out
    return None


def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.addmm``).  With
    ``beta == 0`` the values of ``input`` (NaN included) are ignored.
    ``out_dtype``: see :mod:`ptcore._ops.matmul_out_dtype` (CUDA only)."""
    if out_dtype is not None:
        return _out_dtype.addmm_dtype(input, mat1, mat2, out_dtype, beta, alpha, out)
    if type(beta) is not _b.int or type(alpha) is not _b.int:
        # (a plain int passes unchanged: a Linear's call skips the two calls)
        beta, alpha = _beta_alpha(beta, alpha, "addmm")
    if out is None and type(beta) is _b.int and beta == 1 and type(alpha) is _b.int and alpha == 1:
        r = _fast("addmm_fast")(input, mat1, mat2)     # a Linear's float32 forward
        if r is not None:
            return r
    for x, n, p in ((input, "input", 1), (mat1, "mat1", 2), (mat2, "mat2", 3)):
        _check_tensor(x, n, p, "addmm")
    _check_cpu("addmm", input, mat1, mat2)
    r = _addmm_impl(input, mat1, mat2, beta, alpha, "addmm")
    _check_out_over(out, input, r.numel())
    return _finish(r, out, "addmm")


def _check_out_over(out, input, numel, *others):
    """torch's overlap checks of an add-product's ``out=`` (addmm, addmv, addr,
    baddbmm, addbmm): ``input``, expanded to the result's ``numel`` elements,
    is copied (or, for addr, read) into ``out``, so out may be its own memory,
    not part of it; an input that expanding repeats has zero strides, which
    torch never counts as overlapping.  ``others``: addr's vectors, read by
    the same elementwise kernel."""
    check_written(out, *((input,) if input.numel() == numel else ()), *others)


def _inplace_shape_check(self, shape):
    if tuple(self.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output "
                           f"tensor size {list(shape)} should match")


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In-place :func:`addmm`."""
    beta, alpha = _beta_alpha(beta, alpha, "addmm_")
    _check_tensor(mat1, "mat1", 1, "addmm_")
    _check_tensor(mat2, "mat2", 2, "addmm_")
    _addmm_dtype_check(self, mat1, mat2)
    _mm_check(mat1, mat2)
    _inplace_shape_check(self, (mat1.shape[0], mat2.shape[1]))
    _product(mat1, mat2, self, alpha, beta)
    return self


@_self_method
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)`` (``torch.addmv``)."""
    beta, alpha = _beta_alpha(beta, alpha, "addmv")
    for x, n, p in ((input, "input", 1), (mat, "mat", 2), (vec, "vec", 3)):
        _check_tensor(x, n, p, "addmv")
    _check_dev("addmv", input, mat, vec)
    _mv_check(mat, vec, input.shape, input.dtype)
    dt = mat.dtype
    if dt is _C.bool_:
        raise _not_impl("addmv_impl_cpu", dt)
    _real_scalar_ok(alpha, dt, "alpha")
    _real_scalar_ok(beta, dt, "beta")
    c = None
    if not _is_zero(beta):
        c = input.expand(mat.shape[0]).clone(memory_format=_C.contiguous_format).unsqueeze(1)
    r = _product(mat, vec.unsqueeze(1), c, alpha, beta).squeeze(1)
    _check_out_over(out, input, r.numel())
    return _finish(r, out, "addmv")


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In-place :func:`addmv`."""
    beta, alpha = _beta_alpha(beta, alpha, "addmv_")
    _mv_check(mat, vec, self.shape, self.dtype)
    _inplace_shape_check(self, (mat.shape[0],))
    if mat.dtype is _C.bool_:
        raise _not_impl("addmv_impl_cpu", mat.dtype)
    _product(mat, vec.unsqueeze(1), self.unsqueeze(1), alpha, beta)
    return self


def _outer_check(a, b, fn="outer"):
    if a.dim() != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument self, but got {a.dim()}-D")
    if b.dim() != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument vec2, but got {b.dim()}-D")


def _rank1(a, b, c=None, alpha=1, beta=0):
    """``beta * c + alpha * outer(a, b)`` in ``a``'s dtype (bool via uint8)."""
    dt = a.dtype
    if c is None and alpha == 1:
        # torch's outer, kron and inner with a 0-d operand are an elementwise mul: exact, and
        # the product keeps its sign of zero (a k = 1 matrix product adds +0: -0 * 5 gave +0)
        return a.reshape(-1, 1) * b.reshape(1, -1)
    if dt is _C.bool_:
        u = _C.uint8
        cu = c._to_dtype(u, copy=True) if c is not None else None
        r = _rank1(a._to_dtype(u), b._to_dtype(u), cu, _b.int(_b.bool(alpha)),
                   _b.int(_b.bool(beta)))
        return r._to_dtype(dt)
    if dt is _C.complex32:
        # PyTorch computes ComplexHalf outer products elementwise; here in complex64
        w = _C.complex64
        return _rank1(a._to_dtype(w), b._to_dtype(w), c._to_dtype(w) if c is not None else None,
                      alpha, beta)._to_dtype(dt)
    return _product(a.unsqueeze(1), b.unsqueeze(0), c, alpha, beta)


@_self_method
def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors (``torch.outer``; dtypes promote)."""
    if out is None:
        # two float32/float64 CPU vectors of one dtype: the product's loop at once
        r = _fast_outer(input, vec2, False)
        if r is not None:
            return r
        if _vectors_one_dtype(input, vec2):
            # two CPU vectors of one dtype: the broadcast product at once
            return input.unsqueeze(1) * vec2.unsqueeze(0)
    _check_tensor(input, "input", 1, "outer")
    _check_tensor(vec2, "vec2", 2, "outer")
    _check_dev("outer", input, vec2)
    _outer_check(input, vec2)
    check_written(out, input, vec2)     # (torch's mul into out of the reshaped vectors)
    dt = _result_type(input, vec2)
    r = _rank1(input._to_dtype(dt), vec2._to_dtype(dt))
    return _finish_castable(r, out, "outer")


ger = outer


def _addr_check(input, vec1, vec2, beta, alpha):
    """addr's argument checks; the result dtype."""
    for x, n, p in ((input, "input", 1), (vec1, "vec1", 2), (vec2, "vec2", 3)):
        _check_tensor(x, n, p, "addr")
    _check_dev("addr", input, vec1, vec2)
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    dt = _result_type(input, vec1, vec2)
    if dt is _C.bool_:
        for v, n in ((alpha, "alpha"), (beta, "beta")):
            if not isinstance(v, (_b.bool, _b.int)):
                raise RuntimeError(f"For integral input tensors, argument {n} must not be a "
                                   "floating point number.")
    _scalar_ok(alpha, dt, "alpha")
    _scalar_ok(beta, dt, "beta")
    return dt


@_self_method
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``; dtypes promote)."""
    beta, alpha = _beta_alpha(beta, alpha, "addr")
    dt = _addr_check(input, vec1, vec2, beta, alpha)
    shape = (vec1.shape[0], vec2.shape[0])
    _check_out_over(out, input, shape[0] * shape[1], vec1, vec2)
    # torch's CPU addr of complex numbers is a rank-1 update (BLAS ger); every other
    # case, and every dtype on CUDA, the elementwise kernel: NaN/inf in the vectors
    # propagate with alpha == 0, integers and bool are supported
    rank1 = _loop_for("complex addr as a rank-1 update", input.device, _addr_rank1) \
        if dt.is_complex else None
    if rank1 is None:
        x = input.expand(*shape)
        o = out if isinstance(out, _TensorBase) and out.dtype is dt \
            and tuple(out.shape) == shape else None
        return _finish_castable(_addr_elementwise(x, vec1, vec2, beta, alpha, dt, o), out,
                                "addr")
    return _finish_castable(rank1(input, vec1, vec2, beta, alpha, dt, shape), out, "addr")


def _addr_rank1(input, vec1, vec2, beta, alpha, dt, shape):
    """torch's CPU addr of complex ``dt``: ``beta * input`` updated by BLAS's rank-1 product."""
    c = None
    if not _is_zero(beta):
        c = input._to_dtype(dt).expand(*shape).clone(memory_format=_C.contiguous_format)
    else:
        input.expand(*shape)
    return _rank1(vec1._to_dtype(dt), vec2._to_dtype(dt), c, alpha, beta)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place :func:`addr`."""
    beta, alpha = _beta_alpha(beta, alpha, "addr_")
    dt = _addr_check(self, vec1, vec2, beta, alpha)
    shape = (vec1.shape[0], vec2.shape[0])
    if not dt.is_complex and self.dtype is dt:
        # torch iterates with self as the output (on the CPU its strides decide the SIMD blocks)
        _inplace_shape_check(self, shape)
        r = _addr_elementwise(self, vec1, vec2, beta, alpha, dt, self)
    else:
        r = addr(self, vec1, vec2, beta=beta, alpha=alpha)
        _inplace_shape_check(self, r.shape)
    self.copy_(r)
    return self


# torch's CPU addr is an elementwise TensorIterator kernel, not a product: per element
# beta * self + alpha * vec1[i] * vec2[j] in the result dtype (self ignored, NaN included,
# when beta converts to 0). Its compiler contracts the float32/float64 expression into a
# fused multiply-add differently in the SIMD body, fma(alpha * vec1[i], vec2[j], beta * self),
# and in the scalar loop (each row's tail past the last whole pair of vectors, and rows whose
# layout does not vectorize), fma(beta, self, alpha * vec1[i] * vec2[j]); float16/bfloat16
# round each operation, integers wrap, bool is (beta && self) || (alpha && vec1 && vec2).

_GRAIN_SIZE = 32768     # at::internal::GRAIN_SIZE: TensorIterator's parallel threshold


def _addr_vector_mask(n, m, itemsize, ops, out_strides):
    """Boolean (n, m) NumPy array: the elements torch's CPU loop computes in its SIMD body.

    ``ops``: the (row, column) element strides of self, vec1 and vec2 as the iterator sees
    them; ``out_strides``: the output's, or None for a new one (laid out in the iterator's
    order). Follows TensorIterator: dimension order (reorder_dimensions: the first operand
    with two non-zero, different strides puts the smaller innermost), coalescing, the
    contiguous-or-one-scalar test for vectorizing, and the per-thread ranges of parallel_for.
    """
    import numpy as np
    # two 256-bit vectors per SIMD step: torch 2.13 runs its AVX2 build of this kernel on
    # AVX512 machines too (measured: a 16-float row is all SIMD body)
    block = 64 // itemsize
    inner_col = True
    for st in ([out_strides] if out_strides is not None else []) + list(ops):
        sr, sc = st
        if sr == 0 or sc == 0:
            continue
        if sc != sr:
            inner_col = sc < sr
            break
        if m > n:
            inner_col = False
            break
    strides = [out_strides] if out_strides is not None else []
    strides += list(ops)
    numel = n * m
    if inner_col:
        inner, outer = m, n
        pick = [(sc, sr) for sr, sc in strides]
    else:
        inner, outer = n, m
        pick = [(sr, sc) for sr, sc in strides]
    one_d = inner == 1 or outer == 1 or all(inner * si == so for si, so in pick)
    if one_d:
        inner_stride = [si if inner != 1 else so for si, so in pick]
        inner = numel
    else:
        inner_stride = [si for si, so in pick]
    ins = inner_stride[1:] if out_strides is not None else inner_stride
    out_ok = out_strides is None or inner_stride[0] == 1
    n_scalar = sum(1 for v in ins if v == 0)
    vectorized = out_ok and all(v in (0, 1) for v in ins) and n_scalar <= 1
    if not vectorized:
        return np.zeros((n, m), dtype=bool)
    threads = _parallel._get_num_threads()
    if numel < _GRAIN_SIZE or threads == 1:
        chunk = numel
    else:
        nt = min(threads, -(-numel // _GRAIN_SIZE))
        chunk = -(-numel // nt)
    lin = np.arange(numel, dtype=np.int64)
    row0 = lin - lin % inner
    chunk0 = lin - lin % chunk
    start = np.maximum(row0, chunk0)
    length = np.minimum(np.minimum(row0 + inner, chunk0 + chunk), numel) - start
    mask = (lin - start) < length - length % block
    return mask.reshape(n, m) if inner_col else mask.reshape(m, n).T


def _addr_elementwise(x, vec1, vec2, beta, alpha, dt, out):
    """torch's CPU addr kernel in ``dt`` for ``x`` (self broadcast to (n, m))."""
    n, m = vec1.shape[0], vec2.shape[0]
    beta = beta.item() if isinstance(beta, _TensorBase) else beta
    alpha = alpha.item() if isinstance(alpha, _TensorBase) else alpha
    a1 = vec1._to_dtype(dt).reshape(n, 1)
    b2 = vec2._to_dtype(dt).reshape(1, m)
    if dt is _C.bool_:
        r = (a1 & b2) if _b.bool(alpha) else _C.zeros((n, m), dtype=dt, device=x.device)
        if _b.bool(beta):
            r = r | x._to_dtype(dt)
        return r.expand(n, m).contiguous()
    alpha_t = _C._checked_scalar(alpha, dt)
    beta_t = _C._checked_scalar(beta, dt)
    if n == 0 or m == 0:
        # no element: the other vector (maybe expanded to a huge length) is never copied
        return _C.empty((n, m), dtype=dt, device=x.device)
    prod = (alpha_t * a1) * b2                                  # alpha * vec1[i] * vec2[j]
    if beta_t.item() == 0:
        return prod.contiguous()
    s = x._to_dtype(dt)
    # on the CPU, float32/float64 contract into fused multiply-adds as torch's compiled loop
    # does (below); elsewhere, and in other dtypes, each operation rounds (or wraps)
    vector_mask = _loop_for("addr's SIMD-body elements (torch's CPU loop)", x.device,
                            _addr_vector_mask)
    if (dt is not _C.float32 and dt is not _C.float64) or n == 0 or m == 0 \
            or vector_mask is None:
        return (beta_t * s + prod).contiguous()
    # which elements the SIMD body computes: operands as the iterator sees them (inputs
    # of another dtype arrive as contiguous copies)
    s_st = x.stride() if x.dtype is dt else (m, 1)
    v1_st = (vec1.stride(0) if vec1.dtype is dt else 1, 0)
    v2_st = (0, vec2.stride(0) if vec2.dtype is dt else 1)
    mask = vector_mask(n, m, dt.itemsize, (s_st, v1_st, v2_st),
                       out.stride() if out is not None else None)
    tail = None
    if not mask.all():
        tail = _pw.addcmul(prod, beta_t, s)                     # fma(beta, self, prod)
    if not mask.any():
        return tail.contiguous()
    body = _pw.addcmul(beta_t * s, alpha_t * a1, b2)            # fma(alpha * v1, v2, beta * self)
    if tail is None:
        return body.contiguous()
    return _pw.where(_C.from_numpy(mask), body, tail)


def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)`` (``torch.baddbmm``);
    ``out_dtype``: see :mod:`ptcore._ops.matmul_out_dtype` (CUDA only)."""
    if out_dtype is not None:
        return _out_dtype.baddbmm_dtype(input, batch1, batch2, out_dtype, beta, alpha, out)
    beta, alpha = _beta_alpha(beta, alpha, "baddbmm")
    for x, n, p in ((input, "input", 1), (batch1, "batch1", 2), (batch2, "batch2", 3)):
        _check_tensor(x, n, p, "baddbmm")
    _check_dev("baddbmm", input, batch1, batch2)
    _bmm_check(batch1, batch2)
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input.dtype)}, "
                           f"batch1: {_cpp(batch1.dtype)}, batch2: {_cpp(batch2.dtype)}")
    if batch1.dtype is _C.bool_:
        raise _not_impl("bmm", batch1.dtype)
    _real_scalar_ok(alpha, batch1.dtype, "alpha")
    _real_scalar_ok(beta, batch1.dtype, "beta")
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    c = None
    if not _is_zero(beta):
        c = input.expand(*shape).clone(memory_format=_C.contiguous_format)
    else:
        input.expand(*shape)
    _check_out_over(out, input, shape[0] * shape[1] * shape[2])
    return _finish(_product(batch1, batch2, c, alpha, beta, kname="bmm"), out, "baddbmm")


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place :func:`baddbmm`."""
    beta, alpha = _beta_alpha(beta, alpha, "baddbmm_")
    _bmm_check(batch1, batch2)
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(self.dtype)}, "
                           f"batch1: {_cpp(batch1.dtype)}, batch2: {_cpp(batch2.dtype)}")
    if batch1.dtype is _C.bool_:
        raise _not_impl("bmm", batch1.dtype)
    _inplace_shape_check(self, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    _product(batch1, batch2, self, alpha, beta, kname="bmm")
    return self


@_self_method
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (``torch.addbmm``),
    computed as one (M, B*K) @ (B*K, N) product."""
    beta, alpha = _beta_alpha(beta, alpha, "addbmm")
    for x, n, p in ((input, "input", 1), (batch1, "batch1", 2), (batch2, "batch2", 3)):
        _check_tensor(x, n, p, "addbmm")
    _check_dev("addbmm", input, batch1, batch2)
    if batch1.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    if not (input.dtype is batch1.dtype is batch2.dtype):
        raise RuntimeError(f"expected scalar type {_st(input.dtype)} but found "
                           f"{_st(batch2.dtype if batch1.dtype is input.dtype else batch1.dtype)}")
    if batch1.dtype is _C.bool_:
        raise _not_impl("addmm_impl_cpu_", batch1.dtype)
    B, M, K = batch1.shape
    N = batch2.shape[2]
    a = batch1.permute(1, 0, 2).reshape(M, B * K)
    b = batch2.reshape(B * K, N)
    c = None
    if not _is_zero(beta):
        c = input.expand(M, N).clone(memory_format=_C.contiguous_format)
    else:
        input.expand(M, N)
    _check_out_over(out, input, M * N)
    return _finish(_product(a, b, c, alpha, beta), out, "addbmm")


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place :func:`addbmm`."""
    beta, alpha = _beta_alpha(beta, alpha, "addbmm_")
    r = addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    _inplace_shape_check(self, r.shape)
    self.copy_(r)
    return self


# ---------------------------------------------------------------------------
# sums through products (no dependency on the reduction kernels)
# ---------------------------------------------------------------------------
def _sum_last(t, k):
    """Sum ``t`` over its last ``k`` dims, keeping ``t``'s dtype (exact
    wrapping for integers; float16/bfloat16 accumulate in float32)."""
    if k == 0:
        return t
    lead = tuple(t.shape[:t.dim() - k])
    r = _math.prod(t.shape[t.dim() - k:])
    n = _math.prod(lead)
    work = t._to_dtype(_C.int64) if t.dtype is _C.bool_ else t
    if not (work.dtype.is_floating_point or work.dtype.is_complex):
        # integers: the sum reduction in the same dtype (the same values and wrapping
        # as a product with ones; CUDA has no integer GEMM, as torch's)
        return work.sum(dim=tuple(range(t.dim() - k, t.dim())), dtype=work.dtype)
    ones = _C.ones(r, 1, dtype=work.dtype, device=t.device)
    return _product(work.reshape(n, r), ones).reshape(lead)


def _sum_dims(t, dims):
    """Sum over ``dims`` (removed)."""
    dims = sorted(set(d % t.dim() for d in dims)) if t.dim() else []
    if not dims:
        return t
    keep = [d for d in range(t.dim()) if d not in dims]
    return _sum_last(t.permute(*keep, *dims), len(dims))


# ---------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------
def _einsum_parse_sublist(args):
    ops, subs = [], []
    args = list(args)
    out_sub = None
    while len(args) >= 2:
        ops.append(args.pop(0))
        subs.append(args.pop(0))
    if args:
        out_sub = args.pop(0)

    def conv(sub):
        s = ""
        for x in sub:
            if x is Ellipsis:
                s += "..."
            else:
                x = _b.int(x)
                if not 0 <= x < 52:
                    raise ValueError(f"einsum(): subscript in subscript list is not within the "
                                     f"valid range [0, 52)")       # (torch: ValueError)
                s += chr(ord("A") + x) if x < 26 else chr(ord("a") + x - 26)
        return s
    eq = ",".join(conv(s) for s in subs)
    if out_sub is not None:
        eq += "->" + conv(out_sub)
    return eq, ops


def _einsum_terms(term, ndim, idx):
    """Labels of one operand's term: a list of letters and ('...', k) markers."""
    labels = []
    i = 0
    ell = False
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != "..." or ell:
                raise RuntimeError("einsum(): found '.' for operand %d that is not part of any "
                                   "ellipsis" % idx if term[i:i + 3] != "..." else
                                   "einsum(): found '.' for operand %d for which an ellipsis "
                                   "was already found" % idx)
            ell = True
            labels.append(None)
            i += 3
            continue
        if not ch.isalpha() or not ch.isascii():
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
        labels.append(ch)
        i += 1
    nl = len(labels) - (1 if ell else 0)
    if ell:
        if nl > ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) is "
                               f"more than the number of dimensions ({ndim}) for operand {idx}")
    elif nl != ndim:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) does not "
                           f"match the number of dimensions ({ndim}) for operand {idx} and no "
                           f"ellipsis was given")
    return labels, ndim - nl if ell else 0


def einsum(*args):
    """Einstein summation (``torch.einsum``): ``einsum('ij,jk->ik', a, b)``.

    Supports ``...`` (broadcast batch dims), implicit output (alphabetical
    labels that appear once, after the ellipsis dims), repeated labels in one
    operand (diagonals) and the sublist form ``einsum(a, [0, 1], b, [1, 2])``.
    Contractions run left to right as batched matrix products.
    """
    if len(args) < 2:       # (torch's Python wrapper: ValueError)
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        eq = args[0]
        ops = list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _einsum_parse_sublist(args)
    for i, t in enumerate(ops):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"einsum(): expected Tensor operands, got {type(t).__name__} at "
                            f"position {i}")
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) > len(ops):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(ops):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    if not ops:
        raise RuntimeError("einsum(): must provide at least one operand")
    _check_dev("einsum", *ops)      # (dtypes: checked where a pair is contracted)

    shapes = tuple([t.shape for t in ops])
    opt = _settings_state["opt_einsum"]
    key = (eq, shapes, opt[1]) if len(ops) > 2 and opt[0] else (eq, shapes)
    plan = _EINSUM_PLANS.get(key)
    if plan is None:
        path = None
        if len(ops) > 2 and opt[0]:
            path = _einsum_path(eq, shapes, opt[1])
        plan = _einsum_plan(terms, rhs, lhs, [tuple(sh) for sh in shapes], path)
        if len(_EINSUM_PLANS) >= 1024:
            _EINSUM_PLANS.clear()
        _EINSUM_PLANS[key] = plan
    return _einsum_run(plan, ops)


# Plans of einsum calls by (equation, operand shapes[, opt_einsum strategy]): the labels'
# analysis, the contraction order and every shape of the contraction depend on nothing
# else (dtypes are checked as the plan runs, strides are read then), so a call in a loop
# skips them.
_EINSUM_PLANS = {}


def _einsum_path(eq, shapes, strategy):
    """opt_einsum's contraction path for ``eq`` over operands of ``shapes``, flattened
    (``[i0, j0, i1, j1, ...]``), as torch.einsum asks it for three or more operands."""
    import opt_einsum   # lazy: an optional package (ptcore.backends.opt_einsum enables it)
    tupled = opt_einsum.contract_path(eq, *[tuple(sh) for sh in shapes], shapes=True,
                                      optimize=strategy)[0]
    return [i for pair in tupled for i in pair]


def _einsum_plan(terms, rhs, lhs, shapes, path=None):
    """The plan of an einsum over operands of ``shapes``, torch's algorithm: every
    operand is aligned (diagonals of repeated labels, missing labels as size-1 dims,
    dims permuted) to the output labels followed by the contracted ones; pairs are
    contracted left to right (or in ``path``'s order), a contracted dim summed as soon
    as no other remaining operand has it, by ``sumproduct_pair``; the contracted dims
    are then of size 1 and viewed away (one operand: summed).  Returns ``(aligns,
    steps, final)`` for :func:`_einsum_run`."""
    parsed = [_einsum_terms(term, len(shape), i) for i, (term, shape) in
              enumerate(zip(terms, shapes))]
    ell_num_dim = _b.max([k for labels, k in parsed if None in labels] + [0])
    counts = {}
    for labels, _ in parsed:
        for lab in labels:
            if lab is not None:
                counts[lab] = counts.get(lab, 0) + 1

    index = {}              # label -> its dim in the aligned operands
    if rhs is None:         # implicit output: the ellipsis, then labels seen once
        perm_index, ell_index, ell_in_output = ell_num_dim, 0, True
        for lab in sorted(counts):
            if counts[lab] == 1:
                index[lab] = perm_index
                perm_index += 1
    else:
        perm_index, ell_index, ell_in_output = 0, 0, False
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == ".":
                if rhs[i:i + 3] != "..." or ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis" if rhs[i:i + 3] != "..." else
                                       "einsum(): found '.' for output for which an ellipsis "
                                       "was already found")
                ell_index, ell_in_output = perm_index, True
                perm_index += ell_num_dim
                i += 3
                continue
            if not ch.isalpha() or not ch.isascii():
                raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i}"
                                   f" in the equation string, subscripts must be in [a-zA-Z]")
            if ch in index:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in "
                                   f"the output")
            if ch not in counts:
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the "
                                   f"equation for any input operand")
            index[ch] = perm_index
            perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:       # ellipsis dims not in the output are contracted
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in sorted(counts):  # then the contracted labels, in subscript order
        if lab not in index:
            index[lab] = perm_index
            perm_index += 1

    # align every operand: sizes checked, diagonals of repeated labels, size-1 dims for
    # missing labels, dims permuted to the aligned order
    label_size, ell_sizes = {}, [1] * ell_num_dim
    dim_counts = [0] * perm_index
    aligns, aligned_shapes = [], []
    for i, ((labels, n_ell), shape) in enumerate(zip(parsed, shapes)):
        pos = [-1] * perm_index         # aligned dim -> the operand's dim after diagonals
        groups, sizes = [], []          # per dim after diagonals: source dims, size
        d = 0
        for lab in labels:
            if lab is None:
                for j in range(ell_num_dim - n_ell, ell_num_dim):
                    sz = shape[d]
                    if sz != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != sz:
                            raise RuntimeError(
                                f"einsum(): dimension {d} covered by ellipsis in operand {i}has "
                                f"size {sz} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = sz
                        dim_counts[ell_index + j] += 1
                    pos[ell_index + j] = len(groups)
                    groups.append([d])
                    sizes.append(sz)
                    d += 1
            elif pos[index[lab]] == -1:
                sz = shape[d]
                if sz != 1:
                    prev = label_size.get(lab, 1)
                    if prev != 1 and prev != sz:
                        raise RuntimeError(f"einsum(): subscript {lab} has size {sz} for operand "
                                           f"{i} which does not broadcast with previously seen "
                                           f"size {prev}")
                    label_size[lab] = sz
                    dim_counts[index[lab]] += 1
                pos[index[lab]] = len(groups)
                groups.append([d])
                sizes.append(sz)
                d += 1
            else:                       # a repeated label: its diagonal
                g = pos[index[lab]]
                if shape[d] != sizes[g]:
                    raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {i} "
                                       f"but the sizes don't match, {shape[d]} != {sizes[g]}")
                groups[g].append(d)
                d += 1
        diag = (sizes, groups) if len(groups) != len(shape) else None
        order = [p for p in pos if p != -1]
        aligned = [sizes[p] if p != -1 else 1 for p in pos]
        perm = order if order != list(range(len(order))) else None
        aligns.append((diag, perm, aligned if len(aligned) != len(order) else None))
        aligned_shapes.append(aligned)

    # contract: pairs left to right (the result first again) or in the path's order
    ops = list(range(len(shapes)))          # (indices of the operands' values)
    cur = [list(sh) for sh in aligned_shapes]
    steps = []
    path_it = iter(path or ())
    nxt_slot = len(shapes)
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(path_it), next(path_it)
            if j < i:
                i, j = j, i
            if i == j or i < 0 or j >= len(ops):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) "
                                   + ("cannot contract an operand with itself" if i == j else
                                      "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        sa, sb = cur[a], cur[b]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            if sa[dim] != 1 and sb[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa[dim] != 1:
                    a_sum.append(dim)
                    dim_counts[dim] = 0
                elif sb[dim] != 1:
                    b_sum.append(dim)
                    dim_counts[dim] = 0
        sa = [1 if d in a_sum else s for d, s in enumerate(sa)]
        sb = [1 if d in b_sum else s for d, s in enumerate(sb)]
        how, out_shape = _einsum_sumproduct_plan(sa, sb, sum_dims)
        slot = nxt_slot
        nxt_slot += 1
        cur.append(out_shape)
        steps.append((a, b, a_sum or None, b_sum or None, how, slot))
        if path is not None:
            ops.append(slot)
        else:
            ops.insert(0, slot)
    final_shape = cur[ops[0]]
    if perm_index - out_num_dim > 0:
        if len(shapes) > 1:
            final = ("view", final_shape[:out_num_dim])
        else:
            final = ("sum", list(range(out_num_dim, perm_index)))
    else:
        final = None
    return aligns, steps, ops[0], final


def _einsum_sumproduct_plan(sa, sb, sum_dims):
    """torch's ``sumproduct_pair(left, right, sum_dims, keepdim=True)`` over aligned
    operands of shapes ``sa``/``sb``: an elementwise product when nothing is summed,
    else a batched matrix product.  Returns ``(how, result shape)``."""
    if not sum_dims:
        return ("mul",), [x if y == 1 else y for x, y in zip(sa, sb)]
    lro, lo, ro, lsum, rsum = [], [], [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for d, (x, y) in enumerate(zip(sa, sb)):
        sl, sr = x != 1, y != 1
        if d in sum_dims:
            if sl and sr:
                if x != y:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= x
            elif sl:
                lsum.append(d)
            elif sr:
                rsum.append(d)
        elif sl and sr:
            if x != y:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(d)
            lro_size *= x
        elif sl:
            lo.append(d)
            lo_size *= x
        else:
            ro.append(d)
            ro_size *= y
    out_size = ([sa[d] for d in lro] + [sa[d] for d in lo] + [1] * len(sum_dims)
                + [sb[d] for d in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm = [0] * len(sa)
    for k, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = k
    shape = [0] * len(sa)
    for d, k in enumerate(operm):
        shape[d] = out_size[k]
    how = ("mm", lsum or None, rsum or None, lperm, rperm, (lro_size, lo_size, sum_size),
           (lro_size, sum_size, ro_size), out_size, operm)
    return how, shape


def _einsum_run(plan, ops):
    """Run an einsum plan (:func:`_einsum_plan`) on the operands ``ops``."""
    aligns, steps, last, final = plan
    vals = []
    for t, (diag, perm, aligned) in zip(ops, aligns):
        if diag is not None:
            st = t.stride()
            t = t.as_strided(diag[0], [_b.sum([st[d] for d in g]) for g in diag[1]],
                             t.storage_offset())
        if perm is not None:
            t = t.permute(*perm)
        if aligned is not None:
            t = t.reshape(aligned)
        vals.append(t)
    for a, b, a_sum, b_sum, how, slot in steps:
        x, y = vals[a], vals[b]
        if a_sum is not None:
            x = x.sum(a_sum, keepdim=True)
        if b_sum is not None:
            y = y.sum(b_sum, keepdim=True)
        if how[0] == "mul":
            vals.append(x * y)
            continue
        _, lsum, rsum, lperm, rperm, lshape, rshape, out_size, operm = how
        if lsum is not None:
            x = x.sum(lsum, keepdim=True)
        if rsum is not None:
            y = y.sum(rsum, keepdim=True)
        if x.dtype is _C.bool_:            # (torch's bmm checks in this order)
            raise _not_impl("bmm", x.dtype)
        if x.dtype is not y.dtype:
            raise RuntimeError(f"expected scalar type {_st(x.dtype)} but found {_st(y.dtype)}")
        r = _product(x.permute(*lperm).reshape(lshape), y.permute(*rperm).reshape(rshape),
                     kname="bmm")
        vals.append(r.view(out_size).permute(*operm))
    res = vals[last]
    if final is not None:
        res = res.view(final[1]) if final[0] == "view" else res.sum(final[1])
    return res


# ---------------------------------------------------------------------------
# tensordot, kron, chains, powers
# ---------------------------------------------------------------------------
# tensordot's plans: (a's shape, b's shape, dims) -> the permutations and
# matrix shapes of the product (the analysis below, done once per key)
_TD_PLANS = {}
_TD_PLANS_MAX = 256


def _td_key(a, b, dims):
    """The plan key of a tensordot call of two CPU tensors of one dtype (not
    bool) with ``dims`` an int or a pair of int lists/tuples; None for the
    other calls (their checks run every time)."""
    if not (isinstance(a, _TensorBase) and isinstance(b, _TensorBase)) or a.dtype is not b.dtype \
            or a.dtype is _C.bool_ or not _in_host_memory(a) or not _in_host_memory(b):
        return None
    if type(dims) is not int:
        if type(dims) not in (list, tuple) or len(dims) != 2:
            return None
        da, db = dims
        if type(da) not in (list, tuple) or type(db) not in (list, tuple):
            return None
        da, db = tuple(da), tuple(db)
        for d in da + db:
            if type(d) is not int:
                return None
        dims = (da, db)
    return (a.shape, b.shape, dims)


def _td_run(a, b, plan):
    """The product of a tensordot ``plan`` (permutations, matrix shapes and
    result shape) on ``a`` and ``b``."""
    perm_a, shape_a, perm_b, shape_b, out_shape = plan
    r = _product(a.permute(*perm_a).reshape(shape_a), b.permute(*perm_b).reshape(shape_b))
    return r.reshape(*out_shape) if out_shape else r.reshape(())


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` dims of ``a`` with ``b`` (``torch.tensordot``):
    an int (last ``dims`` of ``a`` with first ``dims`` of ``b``) or a pair of
    dim lists."""
    key = _td_key(a, b, dims)
    if key is not None:
        plan = _TD_PLANS.get(key)
        if plan is not None:
            # the checks and the analysis below passed for these shapes and dims
            return _finish(_td_run(a, b, plan), out, "tensordot")
    _check_tensor(a, "a", 1, "tensordot")
    _check_tensor(b, "b", 2, "tensordot")
    _check_dev("tensordot", a, b)
    if isinstance(dims, _TensorBase):
        dims = dims.tolist()
    if isinstance(dims, _numbers.Integral) and not isinstance(dims, _b.bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        if not isinstance(dims, (list, tuple)) or len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists or an int")
        da, db = dims
        da = [da] if isinstance(da, _numbers.Integral) else list(da)
        db = [db] if isinstance(db, _numbers.Integral) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [_wrap(d, a.dim()) for d in da]
    db = [_wrap(d, b.dim()) for d in db]
    for x, y in zip(da, db):
        sx, sy = a.shape[x], b.shape[y]
        if sx != sy and sx != 1 and sy != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sx} in "
                               f"dim {x} and second has size {sy} in dim {y}")
    # size-1 vs size-n contracted pairs: sum the other operand over that dim
    pairs = list(zip(da, db))
    sum_a = [x for x, y in pairs if a.shape[x] != b.shape[y] and b.shape[y] == 1]
    sum_b = [y for x, y in pairs if a.shape[x] != b.shape[y] and a.shape[x] == 1]
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    ca = [x for x, y in pairs if x not in sum_a and y not in sum_b]
    cb = [y for x, y in pairs if x not in sum_a and y not in sum_b]
    if sum_a or sum_b:
        # reduce the broadcast pairs first, then recurse on the rest
        a2 = _sum_keep(a, sum_a)
        b2 = _sum_keep(b, sum_b)
        return _finish(tensordot(a2, b2, ([x for x, _ in pairs], [y for _, y in pairs])),
                       out, "tensordot")
    K = _math.prod([a.shape[d] for d in ca])
    M = _math.prod([a.shape[d] for d in free_a])
    N = _math.prod([b.shape[d] for d in free_b])
    if a.dtype is _C.bool_:
        raise _not_impl("addmm_impl_cpu_", a.dtype)
    plan = ((*free_a, *ca), (M, K), (*cb, *free_b), (K, N), tuple(out_shape))
    if key is not None:
        if len(_TD_PLANS) >= _TD_PLANS_MAX:
            _TD_PLANS.clear()
        _TD_PLANS[key] = plan
    return _finish(_td_run(a, b, plan), out, "tensordot")


def _sum_keep(t, dims):
    if not dims:
        return t
    s = _sum_dims(t, dims)
    for d in sorted(dims):
        s = s.unsqueeze(d)
    return s


def _wrap(d, n):
    if not -n <= d < n if n else d not in (0, -1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n if n else 0


@_self_method
def kron(input, other, *, out=None):
    """Kronecker product (``torch.kron``; dtypes promote)."""
    if out is None:
        r = _fast_outer(input, other, True)
        if r is not None:
            return r
        if _vectors_one_dtype(input, other):
            # two CPU vectors of one dtype: their outer product, flattened (the
            # general path's reshapes and permute are identities here)
            return (input.unsqueeze(1) * other.unsqueeze(0)).view(-1)
    _check_tensor(input, "input", 1, "kron")
    _check_tensor(other, "other", 2, "kron")
    _check_dev("kron", input, other)
    # torch reshapes both operands before multiplying: a 0-d operand promotes as a dimensioned one
    dt = promote_types(input.dtype, other.dtype)
    a = input._to_dtype(dt)
    b = other._to_dtype(dt)
    n = _b.max(a.dim(), b.dim())
    ash = (1,) * (n - a.dim()) + tuple(a.shape)
    bsh = (1,) * (n - b.dim()) + tuple(b.shape)
    prod = _rank1(a.reshape(-1), b.reshape(-1))          # (numel_a, numel_b)
    perm = []
    for i in range(n):
        perm += [i, n + i]
    r = prod.reshape(*ash, *bsh).permute(*perm).reshape(*[x * y for x, y in zip(ash, bsh)])
    if isinstance(out, _TensorBase):
        # torch resizes out, then multiplies the reshaped operands into it: its overlap checks
        resize_out(out, r.shape)
        check_written(out, input, other)
    return _finish_castable(r.contiguous(), out, "kron")


def _chain_order(shapes):
    """Optimal parenthesisation (classic O(n^3) dynamic programme)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best
    return split


def _chain(mats):
    if len(mats) == 1:
        return mats[0]
    if len(mats) == 2:
        return _product(mats[0], mats[1])
    split = _chain_order([tuple(m.shape) for m in mats])

    def go(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return _product(go(i, k), go(k + 1, j))
    return go(0, len(mats) - 1)


def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices in the cheapest order
    (``torch.linalg.multi_dot``); the first/last may be 1-D."""
    check_out_arg(out, "linalg_multi_dot")
    if not isinstance(tensors, (tuple, list)):      # (torch's parser: a sequence of Tensors)
        raise TypeError(f"linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of "
                        f"Tensors, not {type(tensors).__name__}")
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        _check_tensor(t, "tensors", 1, "multi_dot")
    _check_dev("multi_dot", *tensors)
    _refuse_grad_out(out, "mm", *tensors)
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    dt = first.dtype
    for i, t in enumerate(tensors):
        if t.dtype is not dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_cpp(dt)} and tensor {i} {_cpp(t.dtype)}")
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               f"cannot be multiplied")
    if dt is _C.bool_:
        raise _not_impl("addmm_impl_cpu_", dt)
    r = _chain(mats)
    if first.dim() == 1 and last.dim() == 1:
        r = r.reshape(())
    elif first.dim() == 1:
        r = r.squeeze(0)
    elif last.dim() == 1:
        r = r.squeeze(1)
    return _finish(r, out, "multi_dot")


_CHAIN_WARNED = [False]


def chain_matmul(*matrices, out=None):
    """Deprecated form of :func:`ptcore.linalg.multi_dot` for 2-D tensors."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not _CHAIN_WARNED[0]:
        import warnings
        _CHAIN_WARNED[0] = True
        warnings.warn("ptcore.chain_matmul is deprecated and will be removed in a future "
                      "release. Use ptcore.linalg.multi_dot instead, which accepts a list of "
                      "two or more tensors rather than multiple parameters.", UserWarning,
                      stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        _check_tensor(t, "matrices", 1, "chain_matmul")
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    _refuse_grad_out(out, "mm", *matrices)
    if len(matrices) == 1:
        return _finish(matrices[0].clone(), out, "chain_matmul")
    return multi_dot(matrices, out=out)


@_self_method
def matrix_power(input, n, *, out=None):
    """``input`` raised to the integer power ``n`` (``torch.linalg.matrix_power``);
    ``n < 0`` inverts first, ``n == 0`` gives identities."""
    _check_tensor(input, "input", 1, "matrix_power")
    _refuse_grad_out(out, "matmul", input)
    A = input
    n = int_arg(n)      # (torch's parser: before the shape checks)
    if isinstance(n, _b.bool) or not isinstance(n, _numbers.Integral):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    n = _b.int(n)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    sz = A.shape[-1]
    if n == 0:
        eye = _C.zeros(sz, sz, dtype=A.dtype, device=A.device)
        if sz:
            eye.diagonal().fill_(1)
        # torch's clone().copy_(eye): the result stays in A's graph (zero gradient)
        res = A.clone(memory_format=_C.contiguous_format)
        res.copy_(eye.expand(*A.shape))
        return _finish_castable(res, out, "matrix_power")     # (torch: out.copy_(identity))
    if n == 1:      # torch: out.copy_(A), any dtype A casts to
        return _finish_castable(A.clone(memory_format=_C.contiguous_format), out, "matrix_power")
    if n < 0:
        A = linalg.inv(A)
        n = -n
    if n == 1:
        return _finish(A.clone(memory_format=_C.contiguous_format), out, "matrix_power")
    if A.dtype is _C.bool_:
        raise _not_impl("bmm" if A.dim() > 2 else "addmm_impl_cpu_", A.dtype)
    pow2 = n >= 4 and n & (n - 1) == 0
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else _mpow_mul(result, base)
        n >>= 1
        if n:
            base = _mpow_mul(base, base)
    if result is A:
        result = A.clone(memory_format=_C.contiguous_format)
    if pow2:    # torch's binary decomposition ends in out.copy_(z): a castable out
        return _finish_castable(result, out, "matrix_power")
    return _finish(result, out, "matrix_power")


def _mpow_mul(x, y):
    if x.dim() == 2:
        return _product(x, y)
    return _batched_matmul(x, y)


# ---------------------------------------------------------------------------
# top-level forms of the factorisations (implemented in ptcore.linalg)
# ---------------------------------------------------------------------------
linalg = _entries("linalg")         # the public ptcore.linalg ops, through the operator table


def _factor():
    """ptcore.linalg._factor (torch.svd/qr/slogdet/logdet's implementations),
    which builds on this module: loaded with ptcore.linalg by import ptcore."""
    return _sys.modules["ptcore.linalg._factor"]

@_self_method
def det(input):
    """Determinant (``torch.det``)."""
    return linalg.det(input)


@_self_method
def slogdet(input, *, out=None):
    """(sign, log|det|) (``torch.slogdet``)."""
    return _factor()._torch_slogdet(input, out)


@_self_method
def logdet(input):
    """log of the determinant; NaN for a negative determinant (``torch.logdet``)."""
    return _factor()._logdet(input)


@_self_method
def inverse(input, *, out=None):
    """Matrix inverse (``torch.inverse``)."""
    return linalg.inv(input, out=out)


def cholesky(input, upper=False, *, out=None):
    """Cholesky factor (``torch.cholesky``, deprecated form)."""
    warn_once("torch.cholesky",
              "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
              "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
              "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
              "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
              "equivalent results for all valid (symmetric positive definite) inputs.")
    _bool_param(upper, "cholesky", "upper", 2)
    if isinstance(input, _TensorBase) and not (input.dtype.is_floating_point
                                               or input.dtype.is_complex):
        raise _not_impl("cholesky_cpu", input.dtype)    # torch's kernel dispatch, first
    return _finish_castable(linalg.cholesky(input, upper=upper), out, "cholesky")


def svd(input, some=True, compute_uv=True, *, out=None):
    """``(U, S, V)`` with ``input = U diag(S) V^H`` (``torch.svd``: returns V,
    not V^H; ``some=True`` gives the reduced factors)."""
    return _factor()._torch_svd(input, some, compute_uv, out)


def qr(input, some=True, *, out=None):
    """``(Q, R)`` (``torch.qr``; ``some=False`` gives the complete Q)."""
    warn_once("torch.qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed "
              "in a future PyTorch release.\nThe boolean parameter 'some' has been replaced with "
              "a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
              "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return _factor()._torch_qr(input, some, out)


def pinverse(input, rcond=1e-15):
    """Pseudo-inverse (``torch.pinverse``)."""
    return linalg.pinv(input, rtol=rcond)


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------
@_method_form("__imatmul__")        # PyTorch has no in-place @=: a @= b rebinds a
def _m___matmul__(self, other):
    if not isinstance(other, _TensorBase):
        return NotImplemented
    return matmul(self, other)


# (torch's Tensor.mm/bmm/addmm/baddbmm take no out_dtype: ptcore.mm & co. only)
@_method_form("mm")
def _m_mm(self, mat2, *, out=None):
    return mm(self, mat2, out=out)


@_method_form("bmm")
def _m_bmm(self, mat2, *, out=None):
    return bmm(self, mat2, out=out)


@_method_form("addmm")
def _m_addmm(self, mat1, mat2, *, beta=1, alpha=1, out=None):
    return addmm(self, mat1, mat2, beta=beta, alpha=alpha, out=out)


@_method_form("baddbmm")
def _m_baddbmm(self, batch1, batch2, *, beta=1, alpha=1, out=None):
    return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha, out=out)


for _f in (_m_mm, _m_bmm, _m_addmm, _m_baddbmm):
    _f.__name__ = _f.__name__[3:]
    _f.__qualname__ = "Tensor." + _f.__name__
    _f.__doc__ = f"Tensor form of :func:`ptcore.{_f.__name__}` (without its ``out_dtype``)."


@_method_form("svd")
def _m_svd(self, some=True, compute_uv=True):
    return svd(self, some, compute_uv)


@_method_form("qr")
def _m_qr(self, some=True):
    return qr(self, some)


@_method_form("cholesky")
def _m_cholesky(self, upper=False):
    return cholesky(self, upper)


@_method_form("pinverse")
def _m_pinverse(self, rcond=1e-15):
    return pinverse(self, rcond)


_method_form("ger", _method(outer))      # (the alias of outer)




# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "linalg")
del _bind_module
