"""Muon (``torch.optim.Muon``): momentum SGD whose update of each 2-D parameter is
orthogonalized by a quintic Newton-Schulz iteration (Keller Jordan's Muon, torch 2.13's
variant and defaults)."""
import math

import ptcore
from ptcore.optim.optimizer import Optimizer, _to_scalar

__all__ = ["Muon", "muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix ``U S' V^T`` (``S'`` near 1) from ``grad = U S V^T``,
    computed in bfloat16 as torch does."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    if grad.size(0) > grad.size(1):
        x = x.T
    x.div_(x.norm().clamp(min=eps))  # spectral norm at most 1
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = ptcore.addmm(gram, gram, gram, beta=b, alpha=c)
        x = ptcore.addmm(x, gram_update, x, beta=a)
    if grad.size(0) > grad.size(1):
        x = x.T
    return x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    a, b = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, a / b))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(a, b))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon for the 2-D parameters of hidden layers (embeddings, heads, biases and norms are
    meant for another optimizer such as AdamW).

    Parameters
    ----------
    params : iterable
        2-D parameters or parameter groups.
    lr : float (default 1e-3), weight_decay : float (default 0.1, decoupled),
    momentum : float (default 0.95), nesterov : bool (default True)
    ns_coefficients : (a, b, c), ns_steps : int (default 5), eps : float (default 1e-7)
        The Newton-Schulz iteration.
    adjust_lr_fn : None / "original" (``sqrt(max(1, A/B))``) or "match_rms_adamw"
        (``0.2 * sqrt(max(A, B))``): the per-parameter learning-rate scale.
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, ptcore.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        """One optimization step; ``closure`` re-evaluates the loss (returned)."""
        loss = None
        if closure is not None:
            with ptcore.enable_grad():
                loss = closure()
        with ptcore.no_grad():
            for group in self.param_groups:
                params, grads, bufs = [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    params.append(p)
                    grads.append(p.grad)
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = ptcore.zeros_like(p.grad)
                    bufs.append(state["momentum_buffer"])
                muon(params, grads, bufs, lr=group["lr"], weight_decay=group["weight_decay"],
                     momentum=group["momentum"], nesterov=group["nesterov"],
                     ns_coefficients=group["ns_coefficients"], eps=group["eps"],
                     ns_steps=group["ns_steps"], adjust_lr_fn=group["adjust_lr_fn"])
        return loss


def muon(params, grads, muon_momentum_bufs, *, foreach=None, lr, weight_decay, momentum,
         nesterov, ns_coefficients, ns_steps, eps, adjust_lr_fn, has_complex=False):
    """Functional Muon step (see :class:`Muon`)."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    lr = _to_scalar(lr)
    for param, grad, buf in zip(params, grads, muon_momentum_bufs):
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, param.shape)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-adjusted_lr)
