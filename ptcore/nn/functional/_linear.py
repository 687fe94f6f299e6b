"""``linear`` and ``bilinear`` of ``ptcore.nn.functional``."""
import math

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._ops._out import check_out_grad, copy_out_exact
from ptcore._dispatch.dispatcher import arg_scan as _arg_scan, on as _layers_on
from ptcore._ops.linalg import _addmm_dtypes, _fast
from ptcore.autograd._formulas_linalg import _addmm as _addmm_formula
from ptcore.autograd.grad_mode import _state as _grad_state

__all__ = ["linear", "bilinear"]

# PyTorch's C++ scalar type names, used in its dtype-mismatch messages
from ptcore._dtype_utils import _cpp_name as _cname  # noqa: E402


def _check_bias(bias, fname, pos):
    if bias is not None and not isinstance(bias, _TensorBase):
        raise TypeError(f"{fname}(): argument 'bias' (position {pos}) must be Tensor, not "
                        f"{type(bias).__name__}")


def linear(input, weight, bias=None, *, out=None):
    """``input @ weight.T + bias``.

    Parameters
    ----------
    input : Tensor
        ``(*, in_features)``.
    weight : Tensor
        ``(out_features, in_features)`` (or ``(in_features,)``).
    bias : Tensor, optional
        ``(out_features,)`` (broadcastable to the output).
    out : Tensor, optional
        Of exactly the result's dtype (torch's ``torch._C._nn.linear``).
    """
    if out is None:
        if isinstance(input, _TensorBase) and isinstance(weight, _TensorBase) and \
                weight.ndim == 2 and input.dtype is weight.dtype:
            # a Linear layer's call (one dtype): torch's ops without the checks below
            nd = input.ndim
            if bias is None:
                if nd == 2:
                    return ptcore.mm(input, weight.t())
                if nd >= 3:
                    return ptcore.matmul(input, weight.t())
            elif isinstance(bias, _TensorBase) and bias.dtype is weight.dtype and \
                    bias.ndim <= 1:
                if nd == 2:
                    if _grad_state.enabled and not _layers_on[0] and not _arg_scan[0]:
                        r = _recorded_addmm(input, weight, bias)
                        if r is not None:
                            return r
                    return ptcore.addmm(bias, input, weight.t())
                if nd >= 3 and input.is_contiguous() and input.shape[-1] == weight.shape[1]:
                    # (the rows counted: view(-1, 0) of an empty input is ambiguous)
                    return ptcore.addmm(bias, input.view(math.prod(input.shape[:-1]),
                                                         weight.shape[1]),
                                        weight.t()).view(*input.shape[:-1], weight.shape[0])
        return _linear(input, weight, bias)
    check_out_grad("linear", out, input, weight, bias)
    return copy_out_exact(out, _linear(input, weight, bias))


def _recorded_addmm(input, weight, bias):
    """``addmm(bias, input, weight.t())`` in grad mode with no dispatch layer
    on (a Linear's training call): what the op's entry runs then -- the
    ``t()`` view (recorded by the core's view hook), the addmm kernel's fast
    form with recording off, addmm's formula -- without the entry's and the
    recording wrapper's Python; None where the fast form does not take the
    call (the entry decides)."""
    wt = weight.t()
    _grad_state.enabled = False
    try:
        out = _fast("addmm_fast")(bias, input, wt)
    finally:
        _grad_state.enabled = True
    if out is not None and (input._requires_grad or wt._requires_grad or bias._requires_grad):
        _addmm_formula(out, bias, input, wt)
    return out


def _linear(input, weight, bias):
    if not isinstance(input, _TensorBase):
        raise TypeError(f"linear(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not isinstance(weight, _TensorBase):
        raise TypeError(f"linear(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    _check_bias(bias, "linear", 3)
    if isinstance(bias, _TensorBase) and weight.dim() == 2 and (
            bias.dtype is not weight.dtype or input.dtype is not weight.dtype):
        # torch runs a linear with a bias as addmm: its messages (the bias checked first)
        _addmm_dtypes(bias.dtype, input.dtype, weight.dtype)
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_cname(input.dtype)} != "
            f"{_cname(weight.dtype)}")
    if bias is not None and bias.dtype is not weight.dtype:
        raise RuntimeError(
            f"expected m1, m2 and bias to have the same dtype, but got: {_cname(input.dtype)}, "
            f"{_cname(weight.dtype)}, {_cname(bias.dtype)}")
    nd = input.dim()
    if nd == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {nd}D "
                           f"and {weight.dim()}D")
    if weight.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.dim()}D")
    if weight.dim() == 2 and nd >= 2:
        wt = weight.t()
        if nd == 2:
            if bias is not None and bias.dim() <= 1:
                return ptcore.addmm(bias, input, wt)
            out = input.mm(wt)
            return out if bias is None else out + bias
        batch = input.shape[:-1]
        k = input.shape[-1]
        if k != weight.shape[1]:
            rows = 1
            for s in batch:
                rows *= s
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                f"{weight.shape[1]}x{weight.shape[0]})")
        if bias is not None and bias.dim() <= 1 and input.is_contiguous():
            # torch's path (and grad_fn, ViewBackward0): the rows through addmm
            return ptcore.addmm(bias, input.view(math.prod(batch), k), wt).view(
                *batch, weight.shape[0])
        # torch's other path: matmul (UnsafeViewBackward0), then the bias added
        # (AddBackward0)
        out = ptcore.matmul(input, wt)
        return out if bias is None else out + bias
    if nd == 1 and weight.dim() == 2 and bias is not None and bias.dim() == 1 \
            and input.shape[0] == weight.shape[1]:
        return ptcore.addmm(bias, input.view(1, -1), weight.t()).view(weight.shape[0])
    out = ptcore.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y = x1^T A x2 + b`` with ``weight`` ``A`` of shape ``(out, in1, in2)``."""
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"bilinear(): argument '{name}' must be Tensor, not {type(t).__name__}")
    _check_bias(bias, "bilinear", 4)
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match: got {input1.shape[i]} and "
                f"{input2.shape[i]}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.dim()}")
    out_f, in1, in2 = weight.shape
    if input1.dim() == 0 or input1.shape[-1] != in1:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got "
            f"{input1.shape[-1] if input1.dim() else 0} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got "
            f"{bias.shape[-1] if bias.dim() else 0} but expected {out_f}")
    batch = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2); contract with x2 over in2
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = x1.mm(w).view(-1, out_f, in2)
    y = ptcore.bmm(t, x2.unsqueeze(2)).squeeze(2).view(*batch, out_f)
    # (the bias added last, as torch: its output's grad_fn is AddBackward0)
    return y + bias if bias is not None else y
