"""Adam (``torch.optim.Adam``)."""
import ptcore
from ptcore._dispatch.device import cpu_kernel as _loop
from ptcore._ops.kernels import _optim
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _device_dtype_check_for_fused, _one_pass_ok, _scalar_state, _check_capturable,
    _check_eps_betas_wd, _check_fused_foreach, _recorded_or_value, _to_scalar,
    _use_grad_for_differentiable, _view_as_real, _lerp_, _addcmul_, _addcdiv_,
)

__all__ = ["Adam", "adam"]


def _adam_step_cpu(*args):
    return _optim.adam_step(*args)


def _fusable(param, grad, exp_avg, exp_avg_sq, max_sq):
    """The single-pass kernel applies (see ``_one_pass_ok``)."""
    return _one_pass_ok("adam_step", param, grad, exp_avg, exp_avg_sq, max_sq)


class Adam(Optimizer):
    r"""Adam: a method for stochastic optimization (Kingma & Ba, 2014).

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups to optimize.
    lr : float or Tensor, optional
        Learning rate (default: 1e-3).
    betas : tuple of float, optional
        Coefficients of the running averages of the gradient and of its square
        (default: (0.9, 0.999)).
    eps : float, optional
        Term added to the denominator for numerical stability (default: 1e-8).
    weight_decay : float, optional
        Weight decay (L2 penalty) (default: 0).
    amsgrad : bool, optional
        Use the AMSGrad variant (default: False).
    foreach, capturable, differentiable, fused : optional
        Accepted for compatibility with PyTorch; the update is the same.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    decoupled_weight_decay : bool, optional
        Decoupled weight decay as in AdamW (default: False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_eps_betas_wd(eps, betas, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(
                        f"betas[{i}] as a Tensor is not supported for capturable=False "
                        "and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
            "differentiable": False, "decoupled_weight_decay": False, "fused": None
        })

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                    state_steps):
        amsgrad = group["amsgrad"]
        state_all = self.state
        for p in group["params"]:
            g = p.grad
            if g is not None:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)   # (torch's check at the step)
                params.append(p)
                grads.append(g)
                state = state_all[p]
                if len(state) == 0:
                    state["step"] = _scalar_state(p, group["capturable"] or group["fused"],
                                                  is_fused=group["fused"])
                    state["exp_avg"] = ptcore.zeros_like(p)
                    state["exp_avg_sq"] = ptcore.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = ptcore.zeros_like(p)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                if amsgrad:
                    max_exp_avg_sqs.append(state["max_exp_avg_sq"])
                state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps = (
                [], [], [], [], [], [])
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                             max_exp_avg_sqs, state_steps)
            _check_capturable(self, group, params)
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"],
                 decoupled_weight_decay=group["decoupled_weight_decay"],
                 differentiable=group["differentiable"])
        return loss


def _scalar(x):
    x = _to_scalar(x)
    return x.item() if isinstance(x, Tensor) else x


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
         foreach=None, capturable=False, differentiable=False, fused=None,
         grad_scale=None, found_inf=None, has_complex=False, decoupled_weight_decay=False,
         *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Functional form of :class:`Adam` (updates everything in place)."""
    lr = _recorded_or_value(lr)
    beta1 = _scalar(beta1)
    beta2 = _scalar(beta2)
    one_m_beta1 = 1 - beta1
    one_m_beta2 = 1 - beta2
    for i, param in enumerate(params):
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t += 1
        max_sq = max_exp_avg_sqs[i] if amsgrad else None
        if _fusable(param, grads[i], exp_avg, exp_avg_sq, max_sq):
            step = step_t.item()
            _loop("adam_step", param.device, _adam_step_cpu)(
                param, grads[i], exp_avg, exp_avg_sq, max_sq, lr, beta1, beta2, eps,
                weight_decay, 1 - beta1 ** step, 1 - beta2 ** step, maximize,
                decoupled_weight_decay)
            continue
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if param.is_complex():
            grad = _view_as_real(grad)
            exp_avg = _view_as_real(exp_avg)
            exp_avg_sq = _view_as_real(exp_avg_sq)
            param = _view_as_real(param)
            max_sq = _view_as_real(max_exp_avg_sqs[i]) if amsgrad else None
        else:
            max_sq = max_exp_avg_sqs[i] if amsgrad else None

        _lerp_(exp_avg, grad, one_m_beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, one_m_beta2)

        step = step_t.item()
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            ptcore.maximum(max_sq, exp_avg_sq, out=max_sq)
            root = max_sq.sqrt()
        else:
            root = exp_avg_sq.sqrt()
        if isinstance(step_size, Tensor):
            # a recorded lr (torch's differentiable form): the step size in the denominator
            step_size_neg = step_size.neg()
            denom = (root / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
            param.addcdiv_(exp_avg.clone(), denom)
            continue
        # sqrt's backward reads its result: a recorded step divides out of place
        denom = (root / bias_correction2_sqrt if differentiable
                 else root.div_(bias_correction2_sqrt)).add_(eps)
        # a recorded step reads a copy: the next step's lerp_ changes exp_avg in place
        _addcdiv_(param, exp_avg.clone() if differentiable else exp_avg, denom, -step_size)
