"""Stochastic gradient descent (``torch.optim.SGD``)."""
from ptcore._dispatch.device import cpu_kernel as _loop
from ptcore._ops.kernels import _optim
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _device_dtype_check_for_fused, _check_fused_foreach, _one_pass_ok,
    _recorded_or_value, _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


def _sgd_step_cpu(*args):
    return _optim.sgd_step(*args)


def _fusable(param, grad, buf):
    """The one-pass momentum update applies (``sgd_step``: the same bits as
    the chain of ops below it)."""
    return _one_pass_ok("sgd_step", param, grad, buf)


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with (Nesterov) momentum.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-3).
    momentum : float, optional
        Momentum factor (default: 0).
    dampening : float, optional
        Dampening for momentum (default: 0).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    nesterov : bool, optional
        Enable Nesterov momentum (default: False).
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    foreach, differentiable, fused : optional
        Accepted for compatibility with PyTorch; the update is the same.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
            "fused": False
        }, tensor_keys=())

    def _init_group(self, group, params, grads, momentum_buffer_list):
        """Collect the group's parameters with gradients, their gradients and
        momentum buffers (None before the first step); True when a gradient
        is sparse (torch's SGD._init_group)."""
        has_sparse_grad = False
        state = self.state
        momentum = group["momentum"]
        for p in group["params"]:
            g = p.grad
            if g is not None:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                params.append(p)
                grads.append(g)
                has_sparse_grad = has_sparse_grad or g.is_sparse
                if momentum != 0:
                    momentum_buffer_list.append(state[p].get("momentum_buffer"))
        return has_sparse_grad

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        state = self.state
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            momentum = group["momentum"]
            self._init_group(group, params, grads, bufs)
            sgd(params, grads, bufs, weight_decay=group["weight_decay"],
                momentum=momentum, lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if momentum != 0:
                for p, buf in zip(params, bufs):
                    state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr,
        dampening, nesterov, maximize):
    """Functional form of :class:`SGD` (updates ``params`` and the buffers in place)."""
    lr = _recorded_or_value(lr)
    for i, param in enumerate(params):
        if momentum != 0 and momentum_buffer_list[i] is not None \
                and _fusable(param, d_p_list[i], momentum_buffer_list[i]):
            _loop("sgd_step", param.device, _sgd_step_cpu)(
                param, d_p_list[i], momentum_buffer_list[i], lr, momentum, dampening,
                weight_decay, nesterov, maximize)
            continue
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                # a recorded weight decay: torch's in-place product with a copy of param
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            if nesterov:
                grad = grad.add(buf, alpha=momentum)
            else:
                grad = buf
        if isinstance(lr, Tensor):      # recorded (differentiable=True)
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)
