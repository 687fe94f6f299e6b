"""Adafactor (``torch.optim.Adafactor``): Adam-like steps with factored second moments."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import Optimizer, _get_scalar_dtype, _to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern, 2018) in torch's variant.

    The second moment of a matrix-shaped (or batched-matrix) gradient is kept as a row and a
    column running mean of its squares (memory ``O(n + m)`` instead of ``O(nm)``); vectors
    keep a full running mean.  The step size is relative to the parameter's RMS and the
    update is clipped to RMS ``d``.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Upper bound of the relative step size (default: 1e-2).
    beta2_decay : float, optional
        ``beta2_t = 1 - t ** beta2_decay`` (default: -0.8).
    eps : (float or None, float), optional
        ``eps1`` floors the second moment (``None``: the dtype's machine epsilon), ``eps2``
        floors the parameter RMS (default: (None, 1e-3)).
    d : float, optional
        Clipping threshold of the update's RMS (default: 1.0).
    weight_decay : float, optional
        Decoupled weight decay coefficient (default: 0.0).
    foreach : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({"foreach": None})

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = ptcore.tensor(0.0, dtype=_get_scalar_dtype())
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = ptcore.zeros_like(p.grad)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            state_steps.append(state["step"])

    def step(self, closure=None):
        """Perform one optimization step (``closure`` re-evaluates the loss)."""
        loss = self._closure_loss(closure)
        with ptcore.no_grad():
            for group in self.param_groups:
                params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
                self._init_group(group, params, grads, row_vars, col_vars, variances, steps)
                eps1, eps2 = group["eps"]
                adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"],
                          lr=group["lr"], beta2_decay=group["beta2_decay"],
                          weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                          maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None,
              grad_scale=None, found_inf=None, has_complex=False, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize):
    """Functional form of :class:`Adafactor`."""
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("Grad scaling should occur outside of optimizer.step()")
    # A tensor lr stays a tensor, so that the step size is computed in its dtype as torch does.
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = state_steps[i]
        row_var, col_var, variance = row_vars[i], col_vars[i], variances[i]
        e1 = ptcore.finfo(param.dtype).eps if eps1 is None else eps1
        step_t += 1
        step = step_t.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_mean = ptcore.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = ptcore.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
        else:
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=e1 * e1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        step_size = -alpha / denom
        param.add_(update, alpha=step_size.item() if isinstance(step_size, Tensor) else step_size)
