"""RAdam (``torch.optim.RAdam``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _check_eps_betas_wd,
    _recorded_or_value, _use_grad_for_differentiable, _view_as_real, _lerp_, _addcmul_,
)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019).

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-3).
    betas : tuple of float, optional
        Running average coefficients (default: (0.9, 0.999)).
    eps : float, optional
        Denominator term for numerical stability (default: 1e-8).
    weight_decay : float, optional
        Weight decay (default: 0).
    decoupled_weight_decay : bool, optional
        Decoupled weight decay as in AdamW (default: False).
    foreach, capturable, differentiable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_eps_betas_wd(eps, betas, weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False,
            "decoupled_weight_decay": False, "capturable": False
        })

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, state_steps):
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state(p, group["capturable"])
                    state["exp_avg"] = ptcore.zeros_like(p)
                    state["exp_avg_sq"] = ptcore.zeros_like(p)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, state_steps)
            _check_capturable(self, group, params)
            radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  differentiable=group["differentiable"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """Functional form of :class:`RAdam`."""
    lr = _recorded_or_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        if param.is_complex():
            param = _view_as_real(param)
            grad = _view_as_real(grad)
            exp_avg = _view_as_real(exp_avg)
            exp_avg_sq = _view_as_real(exp_avg_sq)
        step_t += 1
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            # sqrt's backward reads its result: a recorded step adds out of place
            root = exp_avg_sq.sqrt()
            root = root.add(eps) if differentiable else root.add_(eps)
            adaptive_lr = (bias_correction2 ** 0.5) / root
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
