"""Averaged stochastic gradient descent (``torch.optim.ASGD``)."""
import builtins

import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _get_scalar_dtype, _get_value,
    _to_scalar,
    _use_grad_for_differentiable, _view_as_real,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent (Polyak and Juditsky, 1992).

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-2).
    lambd : float, optional
        Decay term (default: 1e-4).
    alpha : float, optional
        Power for the eta update (default: 0.75).
    t0 : float, optional
        Point at which to start averaging (default: 1e6).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    foreach, differentiable, capturable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
            "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False, "capturable": False
        }, tensor_keys=('step', 'eta', 'mu'))

    def _init_group(self, group, params_with_grad, grads, mus, axs, etas, state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if getattr(p.grad, "is_sparse", False):
                raise RuntimeError("ASGD does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(p, True)
                lr = _to_scalar(group["lr"])
                if isinstance(lr, Tensor):
                    state["eta"] = lr.detach().to(p.device, _get_scalar_dtype()).clone()
                else:
                    state["eta"] = _scalar_state(p, True, lr)
                state["mu"] = _scalar_state(p, True, 1.0)
                state["ax"] = ptcore.zeros_like(p)
            mus.append(state["mu"])
            axs.append(state["ax"])
            etas.append(state["eta"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, mus, axs, etas, state_steps = [], [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, mus, axs, etas,
                                           state_steps)
            _check_capturable(self, group, params_with_grad)
            asgd(params_with_grad, grads, axs, mus, etas, state_steps,
                 lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
                 alpha=group["alpha"], weight_decay=group["weight_decay"],
                 foreach=group["foreach"], maximize=group["maximize"],
                 differentiable=group["differentiable"], capturable=group["capturable"],
                 has_complex=has_complex)
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """Functional form of :class:`ASGD` (updates ``params``, ``axs``, ``mus``,
    ``etas`` and ``state_steps`` in place)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        mu = mus[i]
        ax = axs[i]
        eta = etas[i]
        step_t = state_steps[i]
        if param.is_complex():
            grad = _view_as_real(grad)
            param = _view_as_real(param)
            ax = _view_as_real(ax)
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)  # decay term
        param.add_(grad, alpha=-eta_value)  # parameter update
        # averaging
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = _get_value(step_t)
        # torch's foreach implementation computes eta from the step tensor (in
        # its dtype, float32), the for-loop one from the step's value
        new_eta = lr / ((1 + lambd * lr * (step_t if foreach else step)) ** alpha)
        if isinstance(new_eta, Tensor):
            eta.copy_(new_eta)
        else:
            # torch.as_tensor(float) has the default dtype
            eta.copy_(ptcore.tensor(new_eta))
        eta_mu = 1 / builtins.max(1, step - t0)
        mu.copy_(ptcore.tensor(eta_mu))
