"""BoTorch, run by tests/as_torch/test_botorch.py with the real torch and under
``python -m ptcore.as_torch`` (on GPyTorch and linear_operator), in float64: a
``SingleTaskGP`` with input normalisation and outcome standardisation fitted by
``fit_gpytorch_mll`` (SciPy's L-BFGS-B on the marginal likelihood), its posterior, analytic
acquisition functions and their gradients, ``optimize_acqf`` from given starting points, and
a model-list/batch GP.  Data come from NumPy and BoTorch's synthetic test functions; the
Monte-Carlo acquisition functions draw scrambled Sobol points from the generator, which
differs between the two runs, and are compared as estimates.  Each case writes what it
computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


def _data(seed=0, n=12):
    from botorch.test_functions import Branin
    rng = np.random.default_rng(seed)
    f = Branin(negate=True)
    lo, hi = f.bounds
    X = lo + (hi - lo) * torch.from_numpy(rng.random((n, 2)))
    return f, X, f(X).unsqueeze(-1)


def _fitted_gp(X, Y, bounds):
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood
    gp = SingleTaskGP(X, Y, input_transform=Normalize(2, bounds=bounds),
                      outcome_transform=Standardize(1))
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    fit_gpytorch_mll(mll)
    return gp, mll


def gp_case():
    torch.set_default_dtype(torch.float64)
    f, X, Y = _data()
    bounds = f.bounds
    gp, mll = _fitted_gp(X, Y, bounds)
    gp.train()
    loss = -mll(gp(*gp.train_inputs), gp.train_targets).item()
    gp.eval()
    Xt = bounds[0] + (bounds[1] - bounds[0]) * torch.from_numpy(
        np.random.default_rng(1).random((6, 2)))
    post = gp.posterior(Xt)
    return {"f_values": Y, "hyper": {n: p for n, p in gp.named_parameters()},
            "mll": loss, "mean": post.mean, "variance": post.variance,
            "joint_cov": gp.posterior(Xt[:3]).mvn.covariance_matrix}


def acquisition_case():
    from botorch.acquisition import (ExpectedImprovement, LogExpectedImprovement,
                                     PosteriorMean, ProbabilityOfImprovement,
                                     UpperConfidenceBound, qExpectedImprovement)
    from botorch.optim import optimize_acqf
    torch.set_default_dtype(torch.float64)
    f, X, Y = _data()
    bounds = f.bounds
    gp, _ = _fitted_gp(X, Y, bounds)
    best = Y.max()
    Xc = (bounds[0] + (bounds[1] - bounds[0]) * torch.from_numpy(
        np.random.default_rng(2).random((5, 1, 2)))).requires_grad_(True)
    res = {}
    for name, acq in (("ei", ExpectedImprovement(gp, best)),
                      ("log_ei", LogExpectedImprovement(gp, best)),
                      ("pi", ProbabilityOfImprovement(gp, best)),
                      ("ucb", UpperConfidenceBound(gp, beta=0.2)),
                      ("mean", PosteriorMean(gp))):
        v = acq(Xc)
        (g,) = torch.autograd.grad(v.sum(), Xc)
        res[name], res[name + "_grad"] = v, g
    start = bounds[0] + (bounds[1] - bounds[0]) * torch.from_numpy(
        np.random.default_rng(3).random((2, 1, 2)))
    cand, val = optimize_acqf(LogExpectedImprovement(gp, best), bounds, q=1, num_restarts=2,
                              batch_initial_conditions=start, options={"maxiter": 50})
    res.update(candidate=cand, candidate_value=val)
    # (a seeded sampler of 4096 points: BoTorch's default draws its seed from the unseeded
    # generator and takes 512, an estimate that moved 3% between runs)
    from botorch.sampling import SobolQMCNormalSampler
    sampler = SobolQMCNormalSampler(sample_shape=torch.Size([4096]), seed=0)
    res["qei_estimate"] = qExpectedImprovement(gp, best, sampler=sampler)(
        Xc.detach()[:2].reshape(1, 2, 2))
    return res


def model_list_case():
    """Two outcomes: a batched multi-output SingleTaskGP's posterior (hyperparameters fixed,
    no fitting), and a ModelListGP of two GPs."""
    from botorch.models import ModelListGP, SingleTaskGP
    torch.set_default_dtype(torch.float64)
    f, X, Y = _data(4, n=10)
    Y2 = torch.cat([Y / 100, torch.sin(X[:, :1])], -1)
    gp = SingleTaskGP(X, Y2)
    with torch.no_grad():
        gp.likelihood.noise = torch.tensor([0.05, 0.02])
        gp.covar_module.lengthscale = torch.tensor([[[2.0, 3.0]], [[1.5, 4.0]]])
    gp.eval()
    Xt = X[:4] + 0.3
    post = gp.posterior(Xt)
    models = [SingleTaskGP(X, Y2[:, i:i + 1]) for i in range(2)]
    for m, ls in zip(models, (2.5, 1.0)):
        with torch.no_grad():
            m.covar_module.lengthscale = torch.full((1, 2), ls)
            m.likelihood.noise = torch.tensor([0.03])
    mlist = ModelListGP(*models).eval()
    lpost = mlist.posterior(Xt)
    return {"batch_mean": post.mean, "batch_var": post.variance,
            "list_mean": lpost.mean, "list_var": lpost.variance}


CASES = {"gp": gp_case, "acquisition": acquisition_case, "model_list": model_list_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
