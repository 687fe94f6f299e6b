"""AdamW (``torch.optim.AdamW``)."""
from ptcore.optim.adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter).

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
        Decoupled weight decay coefficient (default: 1e-2).
    amsgrad : bool, optional
        Use the AMSGrad variant (default: False).
    maximize : bool, optional
        Maximize the objective instead of minimizing it (default: False).
    foreach, capturable, differentiable, fused : optional
        Accepted for compatibility with PyTorch.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
          foreach=None, capturable=False, differentiable=False, fused=None,
          grad_scale=None, found_inf=None, has_complex=False, *, amsgrad, beta1, beta2,
          lr, weight_decay, eps, maximize):
    """Functional form of :class:`AdamW`."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
         amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
         eps=eps, maximize=maximize, decoupled_weight_decay=True)
