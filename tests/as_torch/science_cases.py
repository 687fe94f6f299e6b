"""Scientific libraries built on PyTorch, run by tests/as_torch/test_science_libraries.py
with the real torch and under ``python -m ptcore.as_torch``: torchdiffeq (ODE solvers and the
adjoint method), GPyTorch (exact GP regression) and Pyro (models, guides, SVI, NUTS).  Each
case writes what it computed to ``<out>/<case>.json``.  Inputs come from NumPy; where a case
samples (SVI, NUTS), the two libraries' generators differ and the test compares estimates,
not numbers.
"""
import json
import math
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def ode_case():
    from torchdiffeq import odeint, odeint_adjoint

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            with torch.no_grad():
                self.lin.weight.copy_(torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]))
                self.lin.bias.zero_()

        def forward(self, t, y):
            return self.lin(y ** 3)

    torch.set_default_dtype(torch.float64)
    try:
        f = Field()
        y0 = torch.tensor([[2.0, 0.0]])
        t = torch.linspace(0, 2, 11)
        res = {}
        for method in ["dopri5", "bosh3", "adaptive_heun"]:
            res[method] = odeint(f, y0, t, method=method, rtol=1e-7, atol=1e-9).tolist()
        for method in ["rk4", "euler", "midpoint"]:
            res[method] = odeint(f, y0, t, method=method, options={"step_size": 0.01}).tolist()
        y0g = y0.clone().requires_grad_(True)
        ys = odeint_adjoint(f, y0g, t, rtol=1e-7, atol=1e-9)
        ys[-1].sum().backward()
        res["adjoint_y0_grad"] = y0g.grad.tolist()
        res["adjoint_w_grad"] = f.lin.weight.grad.tolist()
        return res
    finally:
        torch.set_default_dtype(torch.float32)


def gp_case():
    import gpytorch

    torch.set_default_dtype(torch.float64)
    try:
        x = torch.linspace(0, 1, 40)
        noise = torch.tensor(np.random.default_rng(0).standard_normal(40))
        y = torch.sin(x * 2 * math.pi) + noise * 0.1

        class GP(gpytorch.models.ExactGP):
            def __init__(self, x, y, lik):
                super().__init__(x, y, lik)
                self.mean = gpytorch.means.ConstantMean()
                self.cov = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

            def forward(self, x):
                return gpytorch.distributions.MultivariateNormal(self.mean(x), self.cov(x))

        lik = gpytorch.likelihoods.GaussianLikelihood()
        model = GP(x, y, lik)
        model.train()
        lik.train()
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
        losses = []
        for _ in range(30):
            opt.zero_grad()
            loss = -mll(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        lik.eval()
        with torch.no_grad(), gpytorch.settings.fast_pred_var():
            pred = lik(model(torch.linspace(0, 1, 7)))
            lo, hi = pred.confidence_region()
        return {"losses": losses,
                "params": {n: p.tolist() for n, p in model.named_parameters()},
                "mean": pred.mean.tolist(), "lo": lo.tolist(), "hi": hi.tolist()}
    finally:
        torch.set_default_dtype(torch.float32)


def pyro_case(out):
    import pyro
    import pyro.distributions as dist
    from pyro import poutine
    from pyro.infer import MCMC, NUTS, SVI, Trace_ELBO
    from pyro.infer.autoguide import AutoNormal
    from pyro.optim import Adam

    torch.set_default_dtype(torch.float64)
    try:
        rng = np.random.default_rng(0)
        X = torch.tensor(rng.standard_normal((100, 2)))
        Y = X @ torch.tensor([1.5, -2.0]) + 0.5 + 0.3 * torch.tensor(rng.standard_normal(100))

        def model(X, Y=None):
            w = pyro.sample("w", dist.Normal(torch.zeros(2), 1.0).to_event(1))
            b = pyro.sample("b", dist.Normal(0.0, 1.0))
            s = pyro.sample("s", dist.HalfNormal(1.0))
            with pyro.plate("data", X.shape[0]):
                pyro.sample("obs", dist.Normal(X @ w + b, s), obs=Y)

        res = {}
        # the log joint at fixed latents, and its gradient: no sampling involved
        latents = {"w": torch.tensor([1.2, -1.7], requires_grad=True),
                   "b": torch.tensor(0.3, requires_grad=True),
                   "s": torch.tensor(0.5, requires_grad=True)}
        tr = poutine.trace(poutine.condition(model, data=latents)).get_trace(X, Y)
        logp = tr.log_prob_sum()
        logp.backward()
        res["log_joint"] = logp.item()
        res["log_joint_grad"] = {k: v.grad.tolist() for k, v in latents.items()}

        pyro.set_rng_seed(0)
        pyro.clear_param_store()
        guide = AutoNormal(model)
        svi = SVI(model, guide, Adam({"lr": 0.05}), Trace_ELBO())
        for _ in range(400):
            loss = svi.step(X, Y)
        res["svi_loss"] = loss
        res["svi_median"] = {k: v.reshape(-1).tolist() for k, v in guide.median().items()}
        path = os.path.join(out, "params.pt")
        pyro.get_param_store().save(path)
        before = {k: v.detach().clone() for k, v in pyro.get_param_store().items()}
        pyro.clear_param_store()
        pyro.get_param_store().load(path)
        res["param_store_round_trip"] = all(
            torch.equal(before[k], v.detach()) for k, v in pyro.get_param_store().items()) \
            and sorted(before) == sorted(pyro.get_param_store().keys())

        pyro.set_rng_seed(1)
        mcmc = MCMC(NUTS(model), num_samples=100, warmup_steps=100, disable_progbar=True)
        mcmc.run(X, Y)
        res["nuts_mean"] = {k: v.mean(0).reshape(-1).tolist()
                            for k, v in mcmc.get_samples().items()}
        return res
    finally:
        torch.set_default_dtype(torch.float32)


def main(out, cases):
    for case in cases:
        res = {"ode": ode_case, "gp": gp_case}.get(case, lambda: pyro_case(out))()
        res["torch_name"] = torch.__name__ if "ptcore" not in sys.modules else "ptcore"
        with open(os.path.join(out, f"{case}.json"), "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
