"""Pyro and GPyTorch beyond the basics of science_cases.py, run by
tests/as_torch/test_probabilistic.py with the real torch and under
``python -m ptcore.as_torch``: Pyro's effect handlers (trace, condition, replay, block,
scale, mask, plates), discrete enumeration (TraceEnum_ELBO on a Gaussian mixture with an
AutoDelta guide: no sampling, so SVI steps are deterministic), Pyro-only distributions and
transforms; GPyTorch's variational GP (SVGP with learned inducing points and the variational
ELBO), a multitask GP (ICM kernel) and a few kernels' covariances, trained a few Adam steps.
Data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def _fit(opt, mll, model, x, y, steps):
    """``steps`` optimizer steps on the negative marginal likelihood ``mll``; the losses."""
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = -mll(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def handlers_case():
    """A hierarchical regression's log joint through poutine handlers and plates."""
    import pyro
    import pyro.distributions as dist
    from pyro import poutine
    x, y = _x(0, (10, 2)), _x(1, (10,))

    def model(x, y=None):
        w = pyro.sample("w", dist.Normal(torch.zeros(2), 1.0).to_event(1))
        s = pyro.sample("s", dist.LogNormal(0.0, 0.5))
        with pyro.plate("data", x.shape[0]):
            with poutine.scale(scale=2.0), poutine.mask(mask=x[:, 0] > -1.0):
                return pyro.sample("y", dist.StudentT(4.0, x @ w, s), obs=y)
    vals = {"w": torch.tensor([0.3, -0.2], requires_grad=True),
            "s": torch.tensor(0.8, requires_grad=True)}
    cond = poutine.condition(model, data=vals)
    tr = poutine.trace(cond).get_trace(x, y)
    tr.compute_log_prob()
    lp = tr.log_prob_sum()
    lp.backward()
    res = {"log_joint": lp, "grad_w": vals["w"].grad, "grad_s": vals["s"].grad,
           "site_lp": {n: tr.nodes[n]["log_prob"] for n in ("w", "s", "y")},
           "sites": [n for n in tr.nodes if tr.nodes[n]["type"] == "sample"]}
    replayed = poutine.trace(poutine.replay(cond, trace=tr)).get_trace(x, y)
    res["replay_lp"] = replayed.log_prob_sum()
    blocked = poutine.trace(poutine.block(cond, hide=["w"])).get_trace(x, y)
    res["blocked_sites"] = [n for n in blocked.nodes if blocked.nodes[n]["type"] == "sample"]
    return res


def enum_case():
    """A two-component Gaussian mixture with the assignments enumerated out: the MAP
    estimates by SVI (TraceEnum_ELBO, AutoDelta guide) and the posterior assignment
    probabilities (infer_discrete's marginals through TraceEnum_ELBO.compute_marginals)."""
    import pyro
    import pyro.distributions as dist
    from pyro import poutine
    from pyro.infer import SVI, TraceEnum_ELBO, config_enumerate
    from pyro.infer.autoguide import AutoDelta
    from pyro.optim import Adam
    data = torch.cat([_x(2, (8,), 0.5) - 2.0, _x(3, (7,), 0.5) + 1.5])
    pyro.clear_param_store()

    @config_enumerate
    def model(data):
        weights = pyro.sample("weights", dist.Dirichlet(torch.ones(2) * 2.0))
        locs = pyro.sample("locs", dist.Normal(torch.zeros(2), 5.0).to_event(1))
        scale = pyro.sample("scale", dist.LogNormal(0.0, 1.0))
        with pyro.plate("data", len(data)):
            z = pyro.sample("z", dist.Categorical(weights))
            pyro.sample("obs", dist.Normal(locs[z], scale), obs=data)

    def init(site):
        return {"weights": torch.tensor([0.5, 0.5]), "locs": torch.tensor([-1.0, 1.0]),
                "scale": torch.tensor(1.0)}[site["name"]]
    guide = AutoDelta(poutine.block(model, expose=["weights", "locs", "scale"]),
                      init_loc_fn=init)
    elbo = TraceEnum_ELBO(max_plate_nesting=1)
    svi = SVI(model, guide, Adam({"lr": 0.1}), elbo)
    losses = [svi.step(data) for _ in range(15)]
    est = guide(data)
    marg = elbo.compute_marginals(model, guide, data)
    return {"losses": losses, "locs": est["locs"], "scale": est["scale"],
            "weights": est["weights"], "z_probs": marg["z"].probs}


def pyro_dists_case():
    """Pyro-only distributions' log densities and moments, and transforms' values and
    log-determinants with fixed parameters."""
    import pyro.distributions as dist
    import pyro.distributions.transforms as T
    v = _x(4, (6,)).abs() + 0.1
    res = {
        "zip": dist.ZeroInflatedPoisson(torch.tensor(2.0), gate=torch.tensor(0.3))
        .log_prob(torch.tensor([0.0, 1.0, 3.0])),
        "zinb": dist.ZeroInflatedNegativeBinomial(torch.tensor(3.0), probs=torch.tensor(0.4),
                                                  gate=torch.tensor(0.2))
        .log_prob(torch.tensor([0.0, 2.0, 5.0])),
        "vonmises": dist.VonMises(torch.tensor(0.5), torch.tensor(2.0)).log_prob(v - 1.0),
        "asym_laplace": dist.AsymmetricLaplace(0.0, 1.0, 2.0).log_prob(v - 1.0),
        "skellam_like": dist.GammaPoisson(torch.tensor(2.0), torch.tensor(0.5))
        .log_prob(torch.tensor([0.0, 1.0, 4.0])),
        "beta_binom": dist.BetaBinomial(2.0, 3.0, total_count=5)
        .log_prob(torch.tensor([0.0, 2.0, 5.0])),
        "mvt": dist.MultivariateStudentT(torch.tensor(5.0), torch.zeros(3),
                                         torch.tensor([[1.0, 0, 0], [0.5, 1.0, 0],
                                                       [0.1, 0.2, 1.0]]))
        .log_prob(_x(5, (4, 3))),
        "lkj": dist.LKJCholesky(3, torch.tensor(2.0)).log_prob(
            torch.linalg.cholesky(torch.tensor([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2],
                                                [0.1, 0.2, 1.0]]))),
        "soft_laplace": dist.SoftLaplace(0.0, 1.0).log_prob(v),
    }
    x = _x(6, (5, 4))
    spline = T.Spline(4, count_bins=6)
    planar = T.Planar(4)
    for i, t in enumerate([spline, planar]):
        with torch.no_grad():
            for j, p in enumerate(t.parameters()):
                p.copy_(_x(10 * i + j, p.shape, 0.3))
    for name, t in {"spline": spline, "planar": planar,
                    "softplus": T.SoftplusTransform(), "corr": T.CorrLCholeskyTransform()}.items():
        xi = _x(7, (5, 3)) if name == "corr" else x
        y = t(xi)
        res[name] = {"y": y, "ldj": t.log_abs_det_jacobian(xi, y)}
    res["spline_inv"] = spline.inv(res["spline"]["y"])
    return res


def svgp_case():
    """SVGP (learned inducing points, whitened variational strategy) on noisy sine data:
    six Adam steps on the negative variational ELBO, then predictive means/variances."""
    import gpytorch
    from gpytorch.models import ApproximateGP
    from gpytorch.variational import CholeskyVariationalDistribution, VariationalStrategy
    x = torch.linspace(0, 1, 40).unsqueeze(-1)
    y = torch.sin(6 * x.squeeze()) + _x(8, (40,), 0.1)

    class GP(ApproximateGP):
        def __init__(self, inducing):
            # (mean_init_std=0: the variational mean starts at the prior's, no noise from
            # torch's generator)
            vd = CholeskyVariationalDistribution(inducing.size(0), mean_init_std=0.0)
            super().__init__(VariationalStrategy(self, inducing, vd,
                                                 learn_inducing_locations=True))
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                             self.covar_module(x))
    model = GP(torch.linspace(0, 1, 8).unsqueeze(-1))
    lik = gpytorch.likelihoods.GaussianLikelihood()
    mll = gpytorch.mlls.VariationalELBO(lik, model, num_data=40)
    opt = torch.optim.Adam(list(model.parameters()) + list(lik.parameters()), lr=0.05)
    model.train()
    lik.train()
    losses = _fit(opt, mll, model, x, y, 6)
    model.eval()
    lik.eval()
    xt = torch.linspace(0, 1, 7).unsqueeze(-1)
    with torch.no_grad():
        pred = lik(model(xt))
    return {"losses": losses, "mean": pred.mean, "var": pred.variance,
            "inducing": model.variational_strategy.inducing_points.detach(),
            "noise": lik.noise.detach()}


def multitask_case():
    """An exact multitask GP (ICM: MultitaskKernel over an RBF, rank 1) on two correlated
    outputs, five Adam steps on the exact marginal likelihood; predictions and kernel
    covariances (Matern, Periodic, RQ, Polynomial, additive/product structure)."""
    import gpytorch
    x = torch.linspace(0, 1, 20).unsqueeze(-1)
    f = torch.sin(5 * x.squeeze())
    y = torch.stack([f + _x(9, (20,), 0.05), 0.5 * f + _x(10, (20,), 0.05)], -1)

    class MT(gpytorch.models.ExactGP):
        def __init__(self, x, y, lik):
            super().__init__(x, y, lik)
            self.mean_module = gpytorch.means.MultitaskMean(gpytorch.means.ConstantMean(),
                                                            num_tasks=2)
            self.covar_module = gpytorch.kernels.MultitaskKernel(
                gpytorch.kernels.RBFKernel(), num_tasks=2, rank=1)

        def forward(self, x):
            return gpytorch.distributions.MultitaskMultivariateNormal(
                self.mean_module(x), self.covar_module(x))
    lik = gpytorch.likelihoods.MultitaskGaussianLikelihood(num_tasks=2)
    model = MT(x, y, lik)
    with torch.no_grad():         # the ICM factors are initialized from torch's generator
        model.covar_module.task_covar_module.covar_factor.copy_(torch.tensor([[0.8], [0.4]]))
        model.covar_module.task_covar_module.raw_var.copy_(torch.tensor([0.5, -0.3]))
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    model.train()
    losses = _fit(opt, mll, model, x, y, 5)
    model.eval()
    xt = torch.linspace(0, 1, 5).unsqueeze(-1)
    with torch.no_grad(), gpytorch.settings.fast_pred_var(False):
        pred = lik(model(xt))
    k = gpytorch.kernels
    a, b = _x(11, (5, 2)), _x(12, (4, 2))
    kern = {"matern12": k.MaternKernel(nu=0.5), "matern52": k.MaternKernel(nu=2.5),
            "periodic": k.PeriodicKernel(), "rq": k.RQKernel(),
            "poly": k.PolynomialKernel(power=2),
            "sum_prod": k.ScaleKernel(k.RBFKernel(active_dims=[0]) * k.LinearKernel(
                active_dims=[1])) + k.CosineKernel()}
    with torch.no_grad():
        cov = {n: kk(a, b).to_dense() for n, kk in kern.items()}
        cov["diag"] = kern["matern52"](a, diag=True)
    return {"losses": losses, "mean": pred.mean, "var": pred.variance, "cov": cov,
            "task_covar": model.covar_module.task_covar_module.covar_matrix.to_dense().detach()}


if __name__ == "__main__":
    main({"handlers": handlers_case, "enum": enum_case, "pyro_dists": pyro_dists_case,
          "svgp": svgp_case, "multitask": multitask_case}, sys.argv)
