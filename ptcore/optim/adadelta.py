"""Adadelta (``torch.optim.Adadelta``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _to_scalar,
    _use_grad_for_differentiable, _view_as_real, _addcmul_,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012).

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Coefficient that scales delta before it is applied (default: 1.0).
    rho : float, optional
        Coefficient of the running average of squared gradients (default: 0.9).
    eps : float, optional
        Term added to the denominator for numerical stability (default: 1e-6).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    foreach, capturable, differentiable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False, "capturable": False
        })

    def _init_group(self, group, params, grads, square_avgs, acc_deltas, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(p, group["capturable"])
                state["square_avg"] = ptcore.zeros_like(p)
                state["acc_delta"] = ptcore.zeros_like(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            self._init_group(group, params, grads, square_avgs, acc_deltas, state_steps)
            _check_capturable(self, group, params)
            adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     maximize=group["maximize"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """Functional form of :class:`Adadelta`."""
    lr = _to_scalar(lr)
    if isinstance(lr, Tensor):
        lr = lr.item()
    for param, grad, square_avg, acc_delta, step in zip(
            params, grads, square_avgs, acc_deltas, state_steps):
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        is_complex_param = param.is_complex()
        if is_complex_param:
            square_avg = _view_as_real(square_avg)
            acc_delta = _view_as_real(acc_delta)
            grad = _view_as_real(grad)
        _addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        if is_complex_param:
            param = _view_as_real(param)
        param.add_(delta, alpha=-lr)
