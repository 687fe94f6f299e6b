"""Adamax (``torch.optim.Adamax``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _check_eps_betas_wd, _to_scalar,
    _use_grad_for_differentiable, _view_as_real, _lerp_, _addcdiv_,
)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    r"""Adamax: the infinity-norm variant of Adam.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 2e-3).
    betas : tuple of float, optional
        Running average coefficients (default: (0.9, 0.999)).
    eps : float, optional
        Denominator term for numerical stability (default: 1e-8).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    foreach, differentiable, capturable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_eps_betas_wd(eps, betas, weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False, "capturable": False
        })

    def _init_group(self, group, params, grads, exp_avgs, exp_infs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(p, group["capturable"])
                state["exp_avg"] = ptcore.zeros_like(p)
                state["exp_inf"] = ptcore.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
            state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_infs, state_steps)
            _check_capturable(self, group, params)
            adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2,
           lr, weight_decay):
    """Functional form of :class:`Adamax`."""
    lr = _to_scalar(lr)
    if isinstance(lr, Tensor):
        lr = lr.item()
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        exp_avg = exp_avgs[i]
        exp_inf = exp_infs[i]
        step_t = state_steps[i]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if param.is_complex():
            param = _view_as_real(param)
            grad = _view_as_real(grad)
            exp_avg = _view_as_real(exp_avg)
            exp_inf = _view_as_real(exp_inf)
        _lerp_(exp_avg, grad, 1 - beta1)
        ptcore.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        bias_correction = 1 - beta1 ** step_t.item()
        clr = lr / bias_correction
        _addcdiv_(param, exp_avg, exp_inf, -clr)
