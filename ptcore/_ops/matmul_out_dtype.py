"""The ``out_dtype=`` forms of ``mm``, ``bmm``, ``addmm`` and ``baddbmm``
(torch's ``aten::mm.dtype`` / ``mm.dtype_out`` ... overloads).

float16/bfloat16 operands are multiplied with float32 accumulation into a
float32 result (cuBLAS GemmEx with a float32 C: no rounding to the operands'
dtype in between); ``out_dtype`` equal to the operands' dtype is accepted
too, any other combination is a ``RuntimeError``.  PyTorch implements these
overloads for CUDA only and raises ``NotImplementedError`` on the CPU; so
does ptcore: their product is the front-end loop ``product_out_dtype``
(:func:`ptcore._dispatch.device.cpu_kernel`), which only device runtimes
register.  torch has no derivative for them (backward raises).
"""
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import dtype_param, number_param
from ptcore._dispatch.device import check_same_device, cpu_kernel
from ptcore._ops._out import copy_out

__all__ = ["mm_dtype", "bmm_dtype", "addmm_dtype", "baddbmm_dtype"]

_PY_DTYPES = {bool: _C.bool_, int: _C.int64, float: _C.float64, complex: _C.complex128}


def _tensor_arg(x, name, pos, fn):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, "
                        f"not {type(x).__name__}")


def _loop(fn, out_dtype, pos, tensors, out):
    """(the device's ``product_out_dtype`` loop, ``out_dtype`` as a dtype),
    after torch's argument parsing; NotImplementedError on the CPU."""
    for i, (t, name) in enumerate(tensors):
        _tensor_arg(t, name, i + 1, fn)
    out_dtype = dtype_param(out_dtype, fn, "out_dtype", pos)
    out_dtype = _PY_DTYPES.get(out_dtype, out_dtype)
    if out is not None and not isinstance(out, _TensorBase):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    dev = check_same_device(fn, *(t for t, _ in tensors), out)
    loop = cpu_kernel("product_out_dtype", dev, None)
    if loop is None:
        raise NotImplementedError(
            f"{fn}(..., out_dtype={out_dtype}): no CPU kernel (PyTorch implements aten::{fn}.dtype "
            f"on CUDA only); the tensors are on {dev}")
    return loop, out_dtype


def _dtype_rule(in_dtype, out_dtype):
    if not (out_dtype is in_dtype
            or (out_dtype is _C.float32 and in_dtype in (_C.float16, _C.bfloat16))):
        raise RuntimeError("out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs, "
                           f"got input dtype {in_dtype} and out_dtype {out_dtype}")


def _out_dtype_check(out, out_dtype):
    if out is not None and out.dtype is not out_dtype:
        raise RuntimeError(f"out_dtype must be the same as the dtype of the provided out tensor "
                           f"(out_dtype {out_dtype}, out {out.dtype})")


def _mat_checks(a, b, n1, n2):
    for t, name in ((a, n1), (b, n2)):
        if t.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.dim()}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                           f"and {b.shape[0]}x{b.shape[1]})")


def _batch_checks(b1, b2, out_dtype):
    """torch's baddbmm_bmm_out_dtype_checks; the result's shape."""
    for t, name in ((b1, "batch1"), (b2, "batch2")):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    bs, m, k = b1.shape
    if b2.shape[0] != bs or b2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {k}] but got: [{b2.shape[0]}, {b2.shape[1]}].")
    if b1.dtype is not b2.dtype:
        raise RuntimeError(f"batch1 and batch2 must have the same dtype, got {b1.dtype} and "
                           f"{b2.dtype}")
    _dtype_rule(b1.dtype, out_dtype)
    return (bs, m, b2.shape[2])


def _self_dtype(inp, mat1, out_dtype, n1):
    if inp.dtype is not out_dtype and inp.dtype is not mat1.dtype:
        raise RuntimeError(f"self dtype must match either out_dtype or {n1} dtype, got self "
                           f"{inp.dtype}, {n1} {mat1.dtype} and out_dtype {out_dtype}")


def _into_exact(out, result, fn):
    """The result written into the ``out`` of mm/bmm's ``.dtype_out`` (torch
    passes it to the GEMM as its C: never resized)."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"{fn}(..., out_dtype=): out has shape {list(out.shape)}, the product "
                           f"{list(result.shape)} (this overload does not resize out)")
    out.copy_(result)
    return out


def _scalars(beta, alpha, fn, dt):
    beta, alpha = number_param(beta, fn, "beta"), number_param(alpha, fn, "alpha")
    for v, name in ((alpha, "alpha"), (beta, "beta")):
        if not dt.is_complex and isinstance(v, complex):
            raise RuntimeError(f"For non-complex input tensors, argument {name} must not be a "
                               "complex number.")
    return beta, alpha


def _is_zero(v):
    return (v.item() if isinstance(v, _TensorBase) else v) == 0


def mm_dtype(input, mat2, out_dtype, out=None):
    """``mm(input, mat2, out_dtype)``: see the module docstring."""
    loop, out_dtype = _loop("mm", out_dtype, 3, ((input, "input"), (mat2, "mat2")), out)
    _mat_checks(input, mat2, "self", "mat2")
    _out_dtype_check(out, out_dtype)
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"input dtypes must be the same, got {input.dtype} and {mat2.dtype}")
    _dtype_rule(input.dtype, out_dtype)
    if out is not None and out.dim() != 2:
        raise RuntimeError(f"mm(..., out_dtype=): tensors must be 2-D, out is {out.dim()}-D")
    return _into_exact(out, loop(input, mat2, None, 1, 0, "mm", out_dtype), "mm")


def bmm_dtype(input, mat2, out_dtype, out=None):
    """``bmm(input, mat2, out_dtype)``: see the module docstring."""
    loop, out_dtype = _loop("bmm", out_dtype, 3, ((input, "input"), (mat2, "mat2")), out)
    _batch_checks(input, mat2, out_dtype)
    _out_dtype_check(out, out_dtype)
    return _into_exact(out, loop(input, mat2, None, 1, 0, "bmm", out_dtype), "bmm")


def addmm_dtype(input, mat1, mat2, out_dtype, beta=1, alpha=1, out=None):
    """``addmm(input, mat1, mat2, out_dtype, beta=, alpha=)``: ``beta * input +
    alpha * (mat1 @ mat2)`` accumulated in float32 for half operands; ``input``
    (of ``mat1``'s dtype or ``out_dtype``) broadcasts to the result."""
    loop, out_dtype = _loop("addmm", out_dtype, 4,
                            ((input, "input"), (mat1, "mat1"), (mat2, "mat2")), out)
    beta, alpha = _scalars(beta, alpha, "addmm", mat2.dtype)
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {mat1.dtype} and "
                           f"{mat2.dtype}")
    _mat_checks(mat1, mat2, "mat1", "mat2")
    _out_dtype_check(out, out_dtype)
    _dtype_rule(mat1.dtype, out_dtype)
    _self_dtype(input, mat1, out_dtype, "mat1")
    c = input.expand(mat1.shape[0], mat2.shape[1])
    r = loop(mat1, mat2, None if _is_zero(beta) else c, alpha, beta, "addmm", out_dtype)
    return r if out is None else copy_out(out, r)


def baddbmm_dtype(input, batch1, batch2, out_dtype, beta=1, alpha=1, out=None):
    """``baddbmm(input, batch1, batch2, out_dtype, beta=, alpha=)``: as
    :func:`addmm_dtype` per batch."""
    loop, out_dtype = _loop("baddbmm", out_dtype, 4,
                            ((input, "input"), (batch1, "batch1"), (batch2, "batch2")), out)
    beta, alpha = _scalars(beta, alpha, "baddbmm", batch1.dtype)
    shape = _batch_checks(batch1, batch2, out_dtype)
    _out_dtype_check(out, out_dtype)
    _self_dtype(input, batch1, out_dtype, "batch1")
    c = input.expand(*shape)
    r = loop(batch1, batch2, None if _is_zero(beta) else c, alpha, beta, "baddbmm", out_dtype)
    return r if out is None else copy_out(out, r)
