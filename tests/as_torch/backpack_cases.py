"""BackPACK, run by tests/as_torch/test_backpack.py with the real torch and under
``python -m ptcore.as_torch``: the quantities its extended backward pass computes beside the
gradient (individual gradients and their norms, variance, sum of squared gradients, exact
and Kronecker-factored curvature: DiagGGN, DiagHessian, KFLR, KFRA), for a conv net and an MLP
with cross-entropy and MSE losses; weights and data from NumPy.  Each case writes what it
computed to ``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def _quantities(model, loss_fn, x, y, extensions, names):
    from backpack import backpack, extend
    model, loss_fn = extend(model), extend(loss_fn)
    model.zero_grad()
    loss = loss_fn(model(x), y)
    with backpack(*extensions):
        loss.backward()
    out = {"loss": loss}
    for attr in names:
        out[attr] = {n: getattr(p, attr) for n, p in model.named_parameters()}
    out["grad"] = {n: p.grad for n, p in model.named_parameters()}
    return out


def first_order_case():
    """BatchGrad, BatchL2Grad, Variance and SumGradSquared of a conv net's parameters."""
    from backpack.extensions import BatchGrad, BatchL2Grad, SumGradSquared, Variance
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(12, 4), torch.nn.Sigmoid(),
                                torch.nn.Linear(4, 3))
    fill_normal(list(model.parameters()), 1, 0.4)
    x, y = _x(2, (5, 2, 4, 4)), torch.tensor([0, 2, 1, 1, 0])
    return _quantities(model, torch.nn.CrossEntropyLoss(), x, y,
                       [BatchGrad(), BatchL2Grad(), SumGradSquared(), Variance()],
                       ["grad_batch", "batch_l2", "sum_grad_squared", "variance"])


def second_order_case():
    """Exact curvature: DiagGGNExact, DiagHessian, KFLR and KFRA of an MLP (MSE and
    cross-entropy), and DiagGGNExact of a conv net."""
    from backpack.extensions import KFLR, KFRA, DiagGGNExact, DiagHessian
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3))
    fill_normal(list(mlp.parameters()), 3, 0.5)
    x = _x(4, (7, 4))
    res = {"mse": _quantities(mlp, torch.nn.MSELoss(), x, _x(5, (7, 3)),
                              [DiagGGNExact(), DiagHessian(), KFLR(), KFRA()],
                              ["diag_ggn_exact", "diag_h", "kflr", "kfra"])}
    mlp2 = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3))
    fill_normal(list(mlp2.parameters()), 6, 0.5)
    res["ce"] = _quantities(mlp2, torch.nn.CrossEntropyLoss(reduction="sum"), x,
                            torch.tensor([0, 1, 2, 0, 1, 2, 0]),
                            [DiagGGNExact(), DiagHessian(), KFLR()],
                            ["diag_ggn_exact", "diag_h", "kflr"])
    conv = torch.nn.Sequential(torch.nn.Conv1d(2, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(12, 2))
    fill_normal(list(conv.parameters()), 7, 0.5)
    res["conv"] = _quantities(conv, torch.nn.CrossEntropyLoss(), _x(8, (4, 2, 6)),
                              torch.tensor([0, 1, 1, 0]), [DiagGGNExact()], ["diag_ggn_exact"])
    return res


CASES = {"first_order": first_order_case, "second_order": second_order_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
