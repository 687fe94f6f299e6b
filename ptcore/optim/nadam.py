"""NAdam (``torch.optim.NAdam``)."""
import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import (
    Optimizer, _scalar_state, _check_capturable, _check_lr, _check_eps_betas_wd, _to_scalar,
    _use_grad_for_differentiable, _view_as_real, _lerp_, _addcmul_, _addcdiv_,
)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""NAdam: Adam with Nesterov momentum (Dozat, 2016).

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
        Weight decay (default: 0).
    momentum_decay : float, optional
        Momentum decay (default: 4e-3).
    decoupled_weight_decay : bool, optional
        Decoupled weight decay as in AdamW (default: False).
    foreach, capturable, differentiable : optional
        Accepted for compatibility with PyTorch.
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_eps_betas_wd(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._upgrade_state({
            "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
            "decoupled_weight_decay": False
        }, tensor_keys=('step', 'mu_product'))

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, mu_products,
                    state_steps):
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state(p, group["capturable"])
                    state["mu_product"] = _scalar_state(p, group["capturable"], 1.0)
                    state["exp_avg"] = ptcore.zeros_like(p)
                    state["exp_avg_sq"] = ptcore.zeros_like(p)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                mu_products.append(state["mu_product"])
                state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps = (
                [], [], [], [], [], [])
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, mu_products,
                             state_steps)
            _check_capturable(self, group, params)
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                  beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  differentiable=group["differentiable"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False,
          differentiable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, momentum_decay, eps):
    """Functional form of :class:`NAdam`."""
    lr = _to_scalar(lr)
    if isinstance(lr, Tensor):
        lr = lr.item()
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step_t = state_steps[i]
        if param.is_complex():
            param = _view_as_real(param)
            grad = _view_as_real(grad)
            exp_avg = _view_as_real(exp_avg)
            exp_avg_sq = _view_as_real(exp_avg_sq)
        step_t += 1
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_value = mu_product.item()
        mu_product_next = mu_product_value * mu_next
        # sqrt's backward reads its result: a recorded step adds out of place
        denom = denom.add(eps) if differentiable else denom.add_(eps)
        _addcdiv_(param, grad, denom, (-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        # a recorded step reads a copy: the next step's lerp_ changes exp_avg in place
        _addcdiv_(param, exp_avg.clone() if differentiable else exp_avg, denom,
                  (-lr * mu_next) / (1.0 - mu_product_next))
