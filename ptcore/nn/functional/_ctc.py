"""Connectionist Temporal Classification loss (``torch.nn.functional.ctc_loss``).

The alpha (forward) and beta (backward) recursions run in log space: on the
CPU in the kernels of ``ptcore._ops.kernels._ctc`` (ATen's loops), elsewhere through
the loop a device registers under ``"ctc_loss"`` (``ptcore.cuda`` writes it
as device kernels).  The gradient is PyTorch's: with respect to ``log_probs`` it is
``exp(log_probs) - posterior / ...`` as in ATen's ``ctc_loss_backward``, i.e. the
gradient of the loss with respect to the logits when ``log_probs`` comes from
``log_softmax`` (this is what ``torch`` returns too).
"""
import builtins

import numpy as np

import ptcore
from ptcore._ops.kernels import _ctc
from ptcore._dispatch.device import (cpu_kernel as _cpu_kernel, loop_for as _loop_for,
                                     refuse_cpu_half as _refuse_cpu_half)
from ptcore.autograd import Function, once_differentiable

__all__ = ["ctc_loss"]

class _CTCLossDevice(Function):
    """ctc_loss through the loop a device registered under ``"ctc_loss"``
    (``(losses, a function giving d loss_n / d log_probs)`` for padded
    targets); its backward is not itself differentiable, as torch's."""
    _backward_name = "CtcLossBackward0"         # grad_fn as torch names it

    @staticmethod
    def forward(ctx, log_probs, padded, in_lens, tgt_lens, blank, zero_infinity):
        loop = _cpu_kernel("ctc_loss", log_probs.device, None)
        out, grad_fn = loop(log_probs.detach(), padded, in_lens, tgt_lens, blank, zero_infinity)
        ctx._ctc = (grad_fn, log_probs.dtype)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        grad_fn, dtype = ctx._ctc
        grad = grad_fn().to(dtype)
        grad = grad * grad_out.to(dtype).reshape(1, -1, 1)
        return grad, None, None, None, None, None


class _CTCLossCPU(Function):
    """ctc_loss of CPU log_probs by the kernels of ``ptcore._ops.kernels._ctc``
    (float16/bfloat16 computed in float32); its backward is not itself
    differentiable, as torch's."""
    _backward_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, tg, in_lens, tgt_lens, blank, zero_infinity):
        lp = log_probs.detach()
        if lp.dtype not in (ptcore.float32, ptcore.float64):
            lp = lp.to(ptcore.float32)
        lp = lp.contiguous()
        T, N = lp.shape[0], lp.shape[1]
        S2 = 2 * (builtins.max(tgt_lens) if N else 0) + 1
        nll = ptcore.empty(N, dtype=lp.dtype)
        la = ptcore.empty((N, T, S2), dtype=lp.dtype)
        _ctc.ctc_forward(lp, tg, in_lens, tgt_lens, blank, nll, la)
        ctx._ctc = (lp, tg, in_lens, tgt_lens, blank, zero_infinity, nll, la, log_probs.dtype)
        return ptcore.where(ptcore.isinf(nll), 0.0, nll) if zero_infinity else nll

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        lp, tg, in_lens, tgt_lens, blank, zero_infinity, nll, la, dtype = ctx._ctc
        grad = ptcore.empty(tuple(lp.shape), dtype=lp.dtype)
        _ctc.ctc_backward(lp, tg, in_lens, tgt_lens, blank, nll, la,
                          grad_out.to(lp.dtype).contiguous(), zero_infinity, grad)
        return grad.to(dtype), None, None, None, None, None


def _checked_targets(targets, tgt_lens, N, unbatched):
    """``targets`` as int64 after torch's checks of its shape against the
    target lengths: 1-D concatenated (batched input) or (N, S) padded."""
    tg = targets.detach()
    if tg.dtype != ptcore.int64:
        tg = tg.to(ptcore.int64)
    if tg.dim() == 1:
        total = builtins.sum(tgt_lens)
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets' (while checking "
                               "arguments for ctc_loss)")
    elif tg.dim() == 2:
        mx = builtins.max(tgt_lens) if tgt_lens else 0
        if tg.shape[0] != N:
            raise RuntimeError(f"ctc_loss(): padded targets must have batch size {N}, got "
                               f"shape {tuple(tg.shape)}")
        if tg.shape[1] < mx:
            raise RuntimeError(f"Expected tensor to have size at least {mx} at dimension 1, but "
                               f"got size {tg.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss)")
    else:
        raise RuntimeError(f"ctc_loss(): targets must be 1-D (concatenated) or 2-D (padded), "
                           f"got shape {tuple(targets.shape)}")
    return tg


def _padded_targets(targets, tgt_lens, N, C, unbatched):
    """``targets`` as an (N, max target length) int64 tensor on its device
    (entries past a target's length are 0), after torch's checks."""
    tg = _checked_targets(targets, tgt_lens, N, unbatched)
    mx = builtins.max(tgt_lens) if tgt_lens else 0
    dev = tg.device
    if tg.dim() == 1:
        starts = [0]
        for v in tgt_lens[:-1]:
            starts.append(starts[-1] + v)
        pos = ptcore.tensor(starts, dtype=ptcore.int64, device=dev).unsqueeze(1) + \
            ptcore.arange(mx, dtype=ptcore.int64, device=dev).unsqueeze(0)
    else:
        pos = ptcore.arange(N, dtype=ptcore.int64, device=dev).unsqueeze(1) * tg.shape[1] + \
            ptcore.arange(mx, dtype=ptcore.int64, device=dev).unsqueeze(0)
        tg = tg.reshape(-1)
    inside = ptcore.arange(mx, dtype=ptcore.int64, device=dev).unsqueeze(0) < \
        ptcore.tensor(tgt_lens, dtype=ptcore.int64, device=dev).reshape(N, 1)
    padded = ptcore.where(inside, tg[ptcore.where(inside, pos, 0)] if tg.numel() else
                          ptcore.zeros(N, mx, dtype=ptcore.int64, device=dev), 0)
    if bool(inside.any().item()):
        used = padded[inside]
        lo, hi = builtins.int(used.min().item()), builtins.int(used.max().item())
        if lo < 0 or hi >= C:
            raise RuntimeError(f"ctc_loss(): target labels must be in [0, {C}), got values in "
                               f"[{lo}, {hi}]")
    return padded


def _as_lengths(name, lengths, batch):
    if isinstance(lengths, ptcore.Tensor):
        if lengths.dim() > 1:
            raise RuntimeError(f"ctc_loss(): {name} must be 0-D or 1-D, got shape "
                               f"{tuple(lengths.shape)}")
        if lengths.is_complex():
            raise RuntimeError(f"ctc_loss(): {name} must be real, got {lengths.dtype}")
        vals = [builtins.int(v) for v in lengths.reshape(-1).tolist()]
    elif isinstance(lengths, (list, tuple)):
        vals = []
        for v in lengths:
            if isinstance(v, ptcore.Tensor):
                v = v.item()
            if isinstance(v, builtins.bool) or not isinstance(v, (builtins.int, np.integer)):
                raise TypeError(f"ctc_loss(): {name} must be a tuple of ints or a Tensor, got "
                                f"an element of type {type(v).__name__}")
            vals.append(builtins.int(v))
    else:
        raise TypeError(f"ctc_loss(): {name} must be a tuple of ints or a Tensor, got "
                        f"{type(lengths).__name__}")
    if len(vals) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return vals


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    r"""The Connectionist Temporal Classification loss.

    Parameters
    ----------
    log_probs : Tensor
        ``(T, N, C)`` or unbatched ``(T, C)`` log-probabilities (``log_softmax``).
    targets : Tensor
        ``(N, S)`` padded or 1-D concatenated target labels (``S`` or
        ``sum(target_lengths)``); unbatched: ``(S,)``.
    input_lengths, target_lengths : Tensor or tuple of int
        ``(N,)`` lengths of the inputs and of the targets.
    blank : int
        The blank label.
    reduction : {'mean', 'sum', 'none'}
        ``'mean'`` divides each loss by its target length and averages over
        the batch.
    zero_infinity : bool
        Replace infinite losses (impossible alignments) and their gradients
        by zero.

    Returns
    -------
    Tensor
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not isinstance(log_probs, ptcore.Tensor) or not isinstance(targets, ptcore.Tensor):
        raise TypeError("ctc_loss(): log_probs and targets must be Tensors")
    if isinstance(input_lengths, ptcore.Tensor) != isinstance(target_lengths, ptcore.Tensor):
        # torch's two overloads: both lengths tensors, or both sequences of ints
        raise TypeError(
            f"ctc_loss(): input_lengths and target_lengths must both be Tensors or both be "
            f"tuples of ints, got {type(input_lengths).__name__} and "
            f"{type(target_lengths).__name__}")
    if not log_probs.is_floating_point():
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for {log_probs.dtype}')
    _refuse_cpu_half("ctc_loss_cpu", log_probs)
    unbatched = log_probs.dim() == 2
    if unbatched:
        # (targets stay as given: torch reads a 1-D one as the concatenated form,
        # exactly target_length long, and a (1, S) one as padded)
        log_probs = log_probs.unsqueeze(1)
        if isinstance(input_lengths, ptcore.Tensor):
            input_lengths = input_lengths.reshape(1)
        if isinstance(target_lengths, ptcore.Tensor):
            target_lengths = target_lengths.reshape(1)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss(): log_probs must be 2-D (T, C) or 3-D (T, N, C), got "
                           f"shape {tuple(log_probs.shape)}")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")     # as torch
    T, N, C = log_probs.shape
    if not (0 <= blank < C):
        raise RuntimeError("blank must be in label range")
    in_lens = _as_lengths("input_lengths", input_lengths, N)
    tgt_lens = _as_lengths("target_lengths", target_lengths, N)
    for v in in_lens:
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {v} (while checking arguments for ctc_loss)")
        if v < 0:
            raise RuntimeError(f"ctc_loss(): input_lengths must be non-negative, got {v}")
    for v in tgt_lens:
        if v < 0:
            raise RuntimeError(f"ctc_loss(): target_lengths must be non-negative, got {v}")
    if targets.is_complex():
        raise RuntimeError(f"ctc_loss(): targets must be real, got {targets.dtype}")
    # the CPU's alpha/beta loops (ptcore._ops.kernels._ctc) take the concatenated
    # targets; a device without its own runs the padded form written with tensor ops
    if _loop_for("ctc_loss of concatenated targets", log_probs.device, _CTCLossCPU) is not None:
        tg = _checked_targets(targets, tgt_lens, N, unbatched).contiguous()
        nll = _CTCLossCPU.apply(log_probs, tg, in_lens, tgt_lens, blank, zero_infinity)
        return _reduce(nll.to(log_probs.dtype), tgt_lens, reduction, unbatched)
    padded = _padded_targets(targets, tgt_lens, N, C, unbatched)
    nll = _CTCLossDevice.apply(log_probs, padded, in_lens, tgt_lens, blank, zero_infinity)
    return _reduce(nll.to(log_probs.dtype), tgt_lens, reduction, unbatched)


def _host_lengths(tgt_lens, dtype):
    """The target lengths clamped to >= 1, as a CPU tensor of ``dtype`` made by NumPy."""
    return ptcore.from_numpy(np.maximum(np.asarray(tgt_lens, dtype=dtype._np), 1))


def _reduce(nll, tgt_lens, reduction, unbatched):
    if reduction == "mean":
        host = _loop_for("ctc_loss target lengths", nll.device, _host_lengths)
        if host is not None and nll.dtype._np is not None:
            # (the clamped lengths straight from NumPy: a third of a CRNN-sized call)
            tl = host(tgt_lens, nll.dtype)
        else:
            tl = ptcore.tensor(tgt_lens, dtype=nll.dtype, device=nll.device).clamp_min(1)
        return (nll / tl).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
