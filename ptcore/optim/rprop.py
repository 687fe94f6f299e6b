"""Resilient backpropagation (``torch.optim.Rprop``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _to_scalar,
    _use_grad_for_differentiable, _view_as_real,
)

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller and Braun, 1993).

    Each element keeps its own step size, multiplied by ``etaplus`` while the
    sign of its gradient is unchanged and by ``etaminus`` when it flips
    (clamped to ``step_sizes``); the parameter moves by ``step_size * sign(grad)``.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate: the initial step size (default: 1e-2).
    etas : tuple of float, optional
        ``(etaminus, etaplus)``, the multiplicative decrease and increase
        factors (default: (0.5, 1.2)).
    step_sizes : tuple of float, optional
        Minimal and maximal allowed step sizes (default: (1e-6, 50)).
    capturable, foreach, differentiable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False, "capturable": False
        })

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grad = p.grad
            if getattr(grad, "is_sparse", False):
                raise RuntimeError("Rprop does not support sparse gradients")
            grads.append(grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(p, group["capturable"])
                state["prev"] = ptcore.zeros_like(p)
                lr = _to_scalar(group["lr"])
                if isinstance(lr, Tensor):
                    lr = lr.item()
                if p.is_complex():
                    # real and imaginary parts are independent reals: both get lr
                    state["step_size"] = ptcore.full_like(grad, complex(lr, lr))
                else:
                    state["step_size"] = ptcore.full_like(grad, lr)
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes,
                                           state_steps)
            _check_capturable(self, group, params)
            rprop(params, grads, prevs, step_sizes, state_steps,
                  step_size_min=step_size_min, step_size_max=step_size_max,
                  etaminus=etaminus, etaplus=etaplus, foreach=group["foreach"],
                  maximize=group["maximize"], differentiable=group["differentiable"],
                  capturable=group["capturable"], has_complex=has_complex)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """Functional form of :class:`Rprop` (updates ``params``, ``prevs``,
    ``step_sizes`` and ``state_steps`` in place)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(
            "API has changed, `state_steps` argument must contain a list of singleton tensors")
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        prev = prevs[i]
        step_size = step_sizes[i]
        step = state_steps[i]
        step += 1
        if param.is_complex():
            grad = _view_as_real(grad)
            prev = _view_as_real(prev)
            param = _view_as_real(param)
            step_size = _view_as_real(step_size)
        sign = grad.mul(prev).sign()
        # the same three successive replacements as PyTorch's masked assignments
        sign = ptcore.where(sign.gt(0), etaplus, sign)
        sign = ptcore.where(sign.lt(0), etaminus, sign)
        sign = ptcore.where(sign.eq(0), 1, sign)
        if sign.dtype != step_size.dtype:
            sign = sign.to(step_size.dtype)
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        # where the gradient's sign flipped, the gradient counts as 0
        grad = ptcore.where(sign.eq(etaminus), 0, grad)
        if grad.dtype != prev.dtype:
            grad = grad.to(prev.dtype)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
