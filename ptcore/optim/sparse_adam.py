"""SparseAdam (``torch.optim.SparseAdam``): lazy Adam for sparse gradients
(``nn.Embedding(sparse=True)``): only the rows a gradient stores have their
moments and values updated, with torch's arithmetic."""
import math

import ptcore
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


def _sparse_indices(params):
    """``[group, position]`` of each sparse tensor among ``params`` (tensors,
    ``(name, tensor)`` pairs or group dicts), as torch's SparseAdam lists them."""
    groups = params if params and isinstance(params[0], dict) else [{"params": params}]
    found = []
    for index, group in enumerate(groups):
        if not isinstance(group, dict) or "params" not in group:
            continue                # the base class's error
        ps = group["params"]
        ps = group["params"] = [ps] if isinstance(ps, Tensor) else list(ps)   # read once
        for d_index, p in enumerate(ps):
            p = p[1] if isinstance(p, tuple) and len(p) == 2 else p
            if getattr(p, "is_sparse", False):
                found.append([index, d_index])
    return found


class SparseAdam(Optimizer):
    """Lazy Adam for sparse gradients (torch's ``SparseAdam``; see the module docstring).

    Parameters
    ----------
    params : iterable
        Dense, real parameters or parameter groups.
    lr : float or Tensor, optional
        Learning rate (default: 1e-3).
    betas : (float, float), optional
        Running average coefficients (default: (0.9, 0.999)).
    eps : float, optional
        Denominator term (default: 1e-8).
    maximize : bool, optional
        Maximize the objective (default: False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        if not isinstance(params, Tensor):
            # torch's ValueError for sparse parameters, before the base class
            # refuses them as not Tensors (ptcore's sparse tensors are not)
            params = list(params)
            sparse_params = _sparse_indices(params)
            if sparse_params:
                raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam "
                                 f"requires dense parameter tensors")
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_complex():
                    complex_params.append([index, d_index])
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             f"support complex parameters")

    def step(self, closure=None):
        """One update of every parameter with a (sparse) gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if not getattr(grad, "is_sparse", False):
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = ptcore.zeros_like(p, memory_format=ptcore.preserve_format)
                    state["exp_avg_sq"] = ptcore.zeros_like(p,
                                                            memory_format=ptcore.preserve_format)
                state["step"] += 1
                params.append(p)
                grads.append(grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                state_steps.append(state["step"])
            sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, eps=group["eps"],
                        beta1=beta1, beta2=beta2, lr=lr.item() if isinstance(lr, Tensor) else lr,
                        maximize=group["maximize"])
        return loss


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr,
                maximize):
    """Functional form of :class:`SparseAdam` (``torch.optim._functional.sparse_adam``):
    one lazy Adam update of each parameter from its sparse gradient, the
    moments updated in the gradient's rows only.  ``state_steps`` holds the
    (already incremented) step counts as ints."""
    for p, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs,
                                                  state_steps):
        if maximize:
            grad = -grad
        flat, v, tail = grad._coo_rows()
        if flat.shape[0] == 0:
            continue
        with ptcore.no_grad():
            v = v.detach()
            ea = exp_avg.view((-1,) + tail)
            es = exp_avg_sq.view((-1,) + tail)
            old_ea = ea.index_select(0, flat)
            upd_ea = (v - old_ea) * (1 - beta1)
            ea.index_add_(0, flat, upd_ea)
            old_es = es.index_select(0, flat)
            upd_es = (v * v - old_es) * (1 - beta2)
            es.index_add_(0, flat, upd_es)
            numer = upd_ea + old_ea
            denom = (upd_es + old_es).sqrt_().add_(eps)
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p.view((-1,) + tail).index_add_(0, flat, numer / denom * (-step_size))
