"""RMSprop (``torch.optim.RMSprop``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _to_scalar,
    _use_grad_for_differentiable, _view_as_real, _lerp_, _addcmul_, _addcdiv_,
    _FUSED_MAX_NUMEL,
)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), optionally centered and with momentum.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-2).
    alpha : float, optional
        Smoothing constant (default: 0.99).
    eps : float, optional
        Denominator term for numerical stability (default: 1e-8).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    momentum : float, optional
        Momentum factor (default: 0).
    centered : bool, optional
        Normalize the gradient by an estimate of its variance (default: False).
    capturable, foreach, differentiable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
            "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "momentum": 0, "centered": False, "foreach": None, "maximize": False,
            "differentiable": False, "capturable": False
        })

    def _init_group(self, group, params, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(p, group["capturable"])
                state["square_avg"] = ptcore.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = ptcore.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = ptcore.zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps = (
                [], [], [], [], [], [])
            self._init_group(group, params, grads, square_avgs, momentum_buffer_list,
                             grad_avgs, state_steps)
            _check_capturable(self, group, params)
            rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                    state_steps, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], maximize=group["maximize"],
                    differentiable=group["differentiable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """Functional form of :class:`RMSprop`."""
    lr = _to_scalar(lr)
    if isinstance(lr, Tensor):
        lr = lr.item()
    for i, param in enumerate(params):
        step = state_steps[i]
        grad = grads[i]
        grad = grad if not maximize else -grad
        square_avg = square_avgs[i]
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        is_complex_param = param.is_complex()
        if is_complex_param:
            param = _view_as_real(param)
            grad = _view_as_real(grad)
            square_avg = _view_as_real(square_avg)
        _addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            if is_complex_param:
                grad_avg = _view_as_real(grad_avg)
            _lerp_(grad_avg, grad, 1 - alpha)
            if square_avg.numel() < _FUSED_MAX_NUMEL:
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sub(grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        # sqrt's backward reads its result: a recorded step adds out of place
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            if is_complex_param:
                buf = _view_as_real(buf)
            _addcdiv_(buf.mul_(momentum), grad, avg, 1)
            param.add_(buf, alpha=-lr)
        else:
            _addcdiv_(param, grad, avg, -lr)
