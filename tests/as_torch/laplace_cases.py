"""laplace-torch, run by tests/as_torch/test_laplace.py with the real torch and under
``python -m ptcore.as_torch``: Laplace approximations of small trained networks (diagonal,
Kronecker-factored and full generalised Gauss-Newton curvature from its BackPACK and
curvlinops backends, last-layer and all-weights), the marginal likelihood and its prior
precision optimised, GLM predictive means and variances; weights and data from NumPy.  Each
case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _data(seed, n, classes=None):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((n, 3)).astype(np.float32))
    if classes:
        y = torch.from_numpy(rng.integers(0, classes, n))
    else:
        y = torch.from_numpy((np.sin(x.numpy().sum(1, keepdims=True))
                              + 0.1 * rng.standard_normal((n, 1))).astype(np.float32))
    return x, y, torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                             batch_size=8)


def _model(seed, out):
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, out))
    fill_normal(list(model.parameters()), seed, 0.5)
    return model


def _summary(la, x):
    mean, var = la(x, pred_type="glm")
    return {"log_marglik": la.log_marginal_likelihood(), "mean": mean, "var": var,
            "prior_precision": la.prior_precision}


def regression_case():
    """Regression: all-weights diag (BackPACK GGN), Kronecker (curvlinops) and full
    (BackPACK) Laplace, last-layer Kronecker; prior precision by marginal likelihood."""
    from laplace import Laplace
    from laplace.curvature import BackPackGGN, CurvlinopsGGN
    x, y, loader = _data(1, 24)
    xt = _data(2, 5)[0]
    res = {}
    for name, kw in {"diag_backpack": dict(hessian_structure="diag", backend=BackPackGGN),
                     "kron_curvlinops": dict(hessian_structure="kron", backend=CurvlinopsGGN),
                     "full_backpack": dict(hessian_structure="full", backend=BackPackGGN),
                     "last_layer_kron": dict(subset_of_weights="last_layer",
                                             hessian_structure="kron")}.items():
        la = Laplace(_model(3, 1), "regression", **{"subset_of_weights": "all", **kw})
        la.fit(loader)
        res[name] = _summary(la, xt)
        la.optimize_prior_precision(method="marglik", n_steps=20, lr=0.1)
        res[name]["optimized"] = _summary(la, xt)
        res[name]["sigma_noise"] = la.sigma_noise
    return res


def classification_case():
    """Classification: diagonal and Kronecker GGN Laplace, probit predictive probabilities."""
    from laplace import Laplace
    x, y, loader = _data(4, 24, classes=3)
    xt = _data(5, 5, classes=3)[0]
    res = {}
    for structure in ("diag", "kron"):
        la = Laplace(_model(6, 3), "classification", subset_of_weights="all",
                     hessian_structure=structure)
        la.fit(loader)
        res[structure] = {"log_marglik": la.log_marginal_likelihood(),
                          "probit": la(xt, pred_type="glm", link_approx="probit"),
                          "bridge": la(xt, pred_type="glm", link_approx="bridge")}
    return res


CASES = {"regression": regression_case, "classification": classification_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
