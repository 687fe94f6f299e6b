"""SparseAdam (``torch.optim.SparseAdam``): Adam for sparse gradients.

ptcore has no sparse tensors yet, so no parameter can receive a sparse gradient; the
optimizer is importable and validates its arguments as torch does, and ``step()`` raises
torch's error for the dense gradients ptcore produces (use :class:`ptcore.optim.Adam`).
"""
from ptcore.tensor import Tensor
from ptcore.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


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
        super().__init__(params, defaults)
        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if getattr(p, "is_sparse", False):
                    sparse_params.append([index, d_index])
                if p.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             f"dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             f"support complex parameters")

    def step(self, closure=None):
        """Raise for dense gradients, as torch (ptcore has no sparse gradients yet)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not getattr(p.grad, "is_sparse", False):
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                raise NotImplementedError("SparseAdam: ptcore has no sparse gradient tensors yet")
        return loss
