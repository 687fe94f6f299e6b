"""Connectionist Temporal Classification loss (``torch.nn.functional.ctc_loss``).

The alpha (forward) and beta (backward) recursions run in log space,
vectorised over the batch and the extended label positions (one Python step
per time step): with NumPy on the CPU, and through the loop a device
registers under ``"ctc_loss"`` elsewhere (``ptcore.cuda`` writes it with
device ops).  The gradient is PyTorch's: with respect to ``log_probs`` it is
``exp(log_probs) - posterior / ...`` as in ATen's ``ctc_loss_backward``, i.e. the
gradient of the loss with respect to the logits when ``log_probs`` comes from
``log_softmax`` (this is what ``torch`` returns too).
"""
import builtins
import math

import numpy as np

import ptcore
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel

__all__ = ["ctc_loss"]

_NEG_INF = -math.inf


def _lse(*xs):
    """Elementwise log(sum(exp(x))) over NumPy arrays of one shape, -inf safe."""
    m = xs[0]
    for x in xs[1:]:
        m = np.maximum(m, x)
    ms = np.where(np.isneginf(m), 0.0, m)
    s = np.zeros_like(ms)
    for x in xs:
        s = s + np.exp(x - ms)
    with np.errstate(divide="ignore"):
        return ms + np.log(s)


def _shift(a, k):
    """Shift the last axis right by ``k`` filling with -inf."""
    out = np.full_like(a, _NEG_INF)
    out[..., k:] = a[..., :a.shape[-1] - k]
    return out


def _shift_left(a, k):
    out = np.full_like(a, _NEG_INF)
    out[..., :a.shape[-1] - k] = a[..., k:]
    return out


class _CTCProblem:
    """Extended label sequences and the alpha/beta recursions of a batch."""

    def __init__(self, lp, targets, in_lens, tgt_lens, blank):
        self.lp = lp                          # (T, N, C) NumPy
        T, N, C = lp.shape
        self.in_lens = np.asarray(in_lens, dtype=np.int64)
        self.tgt_lens = np.asarray(tgt_lens, dtype=np.int64)
        S2 = 2 * (builtins.int(self.tgt_lens.max()) if N else 0) + 1
        ext = np.full((N, S2), blank, dtype=np.int64)
        for n, tgt in enumerate(targets):
            ext[n, 1:2 * len(tgt):2] = tgt
        self.ext = ext
        s_idx = np.arange(S2)
        self.valid = s_idx[None, :] < (2 * self.tgt_lens[:, None] + 1)
        prev2 = np.concatenate([np.full((N, 2), -1, dtype=np.int64), ext[:, :-2]], 1) \
            if S2 > 2 else np.full((N, S2), -1, dtype=np.int64)
        self.skip = (s_idx[None, :] % 2 == 1) & (s_idx[None, :] >= 2) & (ext != prev2)
        # emission log-probabilities of the extended labels: (T, N, S2)
        self.lp_ext = np.take_along_axis(lp, np.broadcast_to(ext[None], (T, N, S2)), axis=2)

    def alpha(self):
        T, N, _ = self.lp.shape
        S2 = self.ext.shape[1]
        la = np.full((T, N, S2), _NEG_INF, dtype=self.lp.dtype)
        if T == 0:
            return la
        la[0, :, 0] = self.lp_ext[0, :, 0]
        if S2 > 1:
            la[0, :, 1] = np.where(self.tgt_lens > 0, self.lp_ext[0, :, 1], _NEG_INF)
        la[0] = np.where(self.valid, la[0], _NEG_INF)
        for t in range(1, T):
            a = la[t - 1]
            a2 = np.where(self.skip, _shift(a, 2), _NEG_INF)
            la[t] = np.where(self.valid, self.lp_ext[t] + _lse(a, _shift(a, 1), a2), _NEG_INF)
        return la

    def nll(self, la):
        N = self.lp.shape[1]
        out = np.empty(N, dtype=self.lp.dtype)
        for n in range(N):
            tl, il = builtins.int(self.tgt_lens[n]), builtins.int(self.in_lens[n])
            if il == 0:
                out[n] = 0.0 if tl == 0 else math.inf
                continue
            last = la[il - 1, n]
            if tl == 0:
                out[n] = -last[0]
            else:
                out[n] = -_lse(np.array(last[2 * tl]), np.array(last[2 * tl - 1]))
        return out

    def beta(self):
        T, N, _ = self.lp.shape
        S2 = self.ext.shape[1]
        lb = np.full((T, N, S2), _NEG_INF, dtype=self.lp.dtype)
        s_idx = np.arange(S2)[None, :]
        end = 2 * self.tgt_lens[:, None]
        init_mask = (s_idx == end) | ((s_idx == end - 1) & (self.tgt_lens[:, None] > 0))
        skip_from = _shift_left(self.skip.astype(np.float64), 2) > 0   # may jump s -> s+2
        nxt = np.full((N, S2), _NEG_INF, dtype=self.lp.dtype)
        for t in range(T - 1, -1, -1):
            b2 = np.where(skip_from, _shift_left(nxt, 2), _NEG_INF)
            rec = self.lp_ext[t] + _lse(nxt, _shift_left(nxt, 1), b2)
            init = np.where(init_mask, self.lp_ext[t], _NEG_INF)
            is_last = (self.in_lens == t + 1)[:, None]
            inside = (self.in_lens > t + 1)[:, None]
            cur = np.where(is_last, init, np.where(inside, rec, _NEG_INF))
            cur = np.where(self.valid, cur, _NEG_INF)
            lb[t] = cur
            nxt = cur
        return lb

    def grad(self, la, nll, zero_infinity):
        """d nll_n / d log_probs (PyTorch's formula), shape (T, N, C)."""
        lp = self.lp
        T, N, C = lp.shape
        lb = self.beta()
        ab = la + lb                                   # (T, N, S2)
        m = ab.max(axis=2, keepdims=True) if ab.shape[2] else np.zeros((T, N, 1), lp.dtype)
        ms = np.where(np.isneginf(m), 0.0, m)
        e = np.exp(ab - ms)
        acc = np.zeros((T, N, C), dtype=lp.dtype)
        n_idx = np.arange(N)
        for s in range(ab.shape[2]):
            acc[:, n_idx, self.ext[:, s]] += e[:, :, s]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lcab = np.log(acc) + ms
            g = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
        t_idx = np.arange(T)[:, None]
        g = np.where((t_idx < self.in_lens[None, :])[:, :, None], g, 0.0)
        if zero_infinity:
            g = np.where(np.isinf(nll)[None, :, None], 0.0, g)
        return g.astype(lp.dtype, copy=False)


def _ctc_nll_numpy(lp, targets, in_lens, tgt_lens, blank):
    prob = _CTCProblem(lp, targets, in_lens, tgt_lens, blank)
    la = prob.alpha()
    return prob, la, prob.nll(la)


def _np_log_probs(log_probs):
    dt = ptcore.float64 if log_probs.dtype == ptcore.float64 else ptcore.float32
    return log_probs.detach().to(dt).contiguous().numpy()


_CTCFunction = None


def _get_function():
    """The autograd Function (built lazily: ``ptcore.autograd.Function`` may be absent)."""
    global _CTCFunction
    if _CTCFunction is not None:
        return _CTCFunction
    Function = getattr(ptcore.autograd, "Function", None)
    if Function is None:
        return None
    # backward uses the forward's (constant) alpha/beta: not differentiable again
    once_differentiable = getattr(ptcore.autograd, "once_differentiable", lambda f: f)

    class CTCLossFunction(Function):
        _backward_name = "CtcLossBackward0"         # grad_fn as torch names it

        @staticmethod
        def forward(ctx, log_probs, padded, in_lens, tgt_lens, blank, zero_infinity):
            loop = _cpu_kernel("ctc_loss", log_probs.device, _ctc_cpu)
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

    _CTCFunction = CTCLossFunction
    return _CTCFunction


def _ctc_cpu(log_probs, padded, in_lens, tgt_lens, blank, zero_infinity):
    """The CPU loop: (losses ``(N,)`` with infinities zeroed when
    ``zero_infinity``, and a function giving d loss_n / d log_probs)."""
    lp = _np_log_probs(log_probs)
    tg = padded.numpy()
    targets_list = [tg[n, :v] for n, v in enumerate(tgt_lens)]
    prob, la, nll = _ctc_nll_numpy(lp, targets_list, in_lens, tgt_lens, blank)
    out = nll.copy()
    if zero_infinity:
        out[np.isinf(out)] = 0.0

    def grad_fn():
        return ptcore.from_numpy(np.ascontiguousarray(prob.grad(la, nll, zero_infinity)))
    return ptcore.from_numpy(out), grad_fn


def _padded_targets(targets, tgt_lens, N, C, unbatched):
    """``targets`` as an (N, max target length) int64 tensor on its device
    (entries past a target's length are 0), after torch's checks."""
    tg = targets.detach().to(ptcore.int64)
    mx = builtins.max(tgt_lens) if tgt_lens else 0
    dev = tg.device
    if tg.dim() == 1 and not unbatched:
        total = builtins.sum(tgt_lens)
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets' (while checking "
                               "arguments for ctc_loss)")
        starts = [0]
        for v in tgt_lens[:-1]:
            starts.append(starts[-1] + v)
        pos = ptcore.tensor(starts, dtype=ptcore.int64, device=dev).unsqueeze(1) + \
            ptcore.arange(mx, dtype=ptcore.int64, device=dev).unsqueeze(0)
    elif tg.dim() == 2:
        if tg.shape[0] != N:
            raise RuntimeError(f"ctc_loss(): padded targets must have batch size {N}, got "
                               f"shape {tuple(tg.shape)}")
        if tg.shape[1] < mx:
            raise RuntimeError(f"Expected tensor to have size at least {mx} at dimension 1, but "
                               f"got size {tg.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss)")
        pos = ptcore.arange(N, dtype=ptcore.int64, device=dev).unsqueeze(1) * tg.shape[1] + \
            ptcore.arange(mx, dtype=ptcore.int64, device=dev).unsqueeze(0)
        tg = tg.reshape(-1)
    else:
        raise RuntimeError(f"ctc_loss(): targets must be 1-D (concatenated) or 2-D (padded), "
                           f"got shape {tuple(targets.shape)}")
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
    if not log_probs.is_floating_point():
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for {log_probs.dtype}')
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
        if isinstance(input_lengths, ptcore.Tensor):
            input_lengths = input_lengths.reshape(1)
        if isinstance(target_lengths, ptcore.Tensor):
            target_lengths = target_lengths.reshape(1)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss(): log_probs must be 2-D (T, C) or 3-D (T, N, C), got "
                           f"shape {tuple(log_probs.shape)}")
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
    padded = _padded_targets(targets, tgt_lens, N, C, unbatched)

    fn = _get_function()
    if fn is not None:
        nll = fn.apply(log_probs, padded, in_lens, tgt_lens, blank, zero_infinity)
    else:
        loop = _cpu_kernel("ctc_loss", log_probs.device, _ctc_cpu)
        nll, _ = loop(log_probs.detach(), padded, in_lens, tgt_lens, blank, zero_infinity)
    nll = nll.to(log_probs.dtype)
    if reduction == "mean":
        tl = ptcore.tensor(tgt_lens, dtype=log_probs.dtype, device=log_probs.device).clamp_min(1)
        return (nll / tl).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
