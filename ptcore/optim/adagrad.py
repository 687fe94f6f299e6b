"""Adagrad (``torch.optim.Adagrad``)."""
import ptcore
from ptcore.tensor import Tensor, _is_sparse_tensor
from ptcore.optim.optimizer import (
    Optimizer, _device_dtype_check_for_fused, _scalar_state, _check_capturable,
    _check_fused_foreach, _check_lr, _to_scalar, _use_grad_for_differentiable, _view_as_real,
    _addcmul_, _addcdiv_,
)

__all__ = ["Adagrad", "adagrad"]


def _new_sum(p, initial_accumulator_value):
    init_value = (complex(initial_accumulator_value, initial_accumulator_value)
                  if p.is_complex() else initial_accumulator_value)
    return ptcore.full_like(p, init_value)


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011).

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-2).
    lr_decay : float, optional
        Learning rate decay (default: 0).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    initial_accumulator_value : float, optional
        Initial value of the sum of squares of the gradients (default: 0).
    eps : float, optional
        Denominator term for numerical stability (default: 1e-10).
    foreach, differentiable, fused : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_state(p, group["fused"], is_fused=group["fused"])
                state["sum"] = _new_sum(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "foreach": None, "maximize": False, "differentiable": False, "fused": None
        })

    def share_memory(self):
        """Accepted for compatibility (CPU tensors of one process)."""

    def _init_group(self, group, params, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is not None:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state(p, group["fused"], is_fused=group["fused"])
                    state["sum"] = _new_sum(p, self.defaults["initial_accumulator_value"])
                state_sums.append(state["sum"])
                state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, state_sums, state_steps = [], [], [], []
            self._init_group(group, params, grads, state_sums, state_steps)
            _check_capturable(self, group, params)
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"],
                    differentiable=group["differentiable"])
        return loss


def _sparse_adagrad(param, grad, state_sum, clr, eps):
    flat, v, tail = grad._coo_rows()
    if flat.shape[0] == 0:
        return
    with ptcore.no_grad():
        ss = state_sum.view((-1,) + tail)
        ss.index_add_(0, flat, v * v)
        std = ss.index_select(0, flat).sqrt().add_(eps)
        param.view((-1,) + tail).index_add_(0, flat, v / std * (-clr))


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """Functional form of :class:`Adagrad`."""
    lr = _to_scalar(lr)
    if isinstance(lr, Tensor):
        lr = lr.item()
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = step_t.item()
        grad = grad if not maximize else -grad
        if _is_sparse_tensor(grad):        # a sparse gradient: only its rows change
            if weight_decay != 0:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            _sparse_adagrad(param, grad, state_sum, lr / (1 + (step - 1) * lr_decay), eps)
            continue
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        if param.is_complex():
            grad = _view_as_real(grad)
            state_sum = _view_as_real(state_sum)
            param = _view_as_real(param)
        _addcmul_(state_sum, grad, grad, 1)
        # sqrt's backward reads its result: a recorded step adds out of place
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        _addcdiv_(param, grad, std, -clr)
