"""sbi (simulation-based inference), run by tests/as_torch/test_sbi.py with the real torch and
under ``python -m ptcore.as_torch``: NPE and NLE trained a few epochs by sbi's own training
loop on a toy linear-Gaussian simulator whose parameters and noise come from NumPy, with
density estimators (nflows' MAF and NSF, sbi's MDN, zuko's MAF) whose weights are NumPy
normals; then the trained estimators' log-densities, the posterior's unnormalized log_prob and
the NLE potential on fixed points.  sbi splits the simulations into training and validation
sets with ``torch.randperm`` and shuffles with a ``SubsetRandomSampler`` (torch's generator,
which ptcore does not reproduce bit for bit): the cases pass a sequential sampler instead
(``dataloader_kwargs``), so both runs train on the same full batches in the same order.
Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")

N, D = 120, 2


def _fill(module, seed, scale=0.1):
    """The module's parameters, in name order, from NumPy normals, and nflows' random
    permutations (drawn with ``torch.randperm``) reversed."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(module.named_parameters()):
            p.copy_(torch.from_numpy(np.asarray(rng.standard_normal(p.shape) * scale,
                                                dtype=np.float32)))
        for m in module.modules():
            if hasattr(m, "_permutation"):
                m._permutation.copy_(torch.arange(len(m._permutation)).flip(0))


def _simulations(seed):
    """theta uniform on [-2, 2]^2 and x = theta + 0.3 theta_0^2 + 0.2 noise, from NumPy."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-2, 2, (N, D))
    x = theta + 0.3 * theta[:, :1] ** 2 + 0.2 * rng.standard_normal((N, D))
    return (torch.from_numpy(theta.astype(np.float32)), torch.from_numpy(x.astype(np.float32)))


def _builder(factory, model, seed, data, **kwargs):
    """sbi's estimator builder for ``model``, its weights then overwritten from NumPy.  sbi
    passes the simulations of its random training split (z-scoring statistics): the builder
    takes all of ``data`` (theta, x) instead."""
    build = factory(model, hidden_features=16, num_transforms=2, **kwargs)

    def make(batch_theta, batch_x):
        net = build(*data)
        _fill(net, seed)
        return net
    return make


def _train(inference, theta, x, epochs=3):
    inference.append_simulations(theta, x)
    est = inference.train(training_batch_size=40, max_num_epochs=epochs, learning_rate=2e-3,
                          dataloader_kwargs={"sampler": list(range(N))},
                          show_train_summary=False)
    summary = inference._summary
    return est, {"train_loss": summary["training_loss"],
                 "val_loss": summary["validation_loss"]}


def _points():
    rng = np.random.default_rng(7)
    theta = torch.from_numpy(rng.uniform(-1.5, 1.5, (6, D)).astype(np.float32))
    x_o = torch.tensor([[0.5, -0.3]])
    return theta, x_o


def npe_case():
    """NPE with nflows' MAF and NSF, sbi's MDN and zuko's MAF: training and validation losses
    per epoch, the estimator's log_prob of fixed parameters given an observation, and the
    posterior's log_prob without the leakage correction (which samples)."""
    from sbi.inference import NPE
    from sbi.neural_nets import posterior_nn
    from sbi.utils import BoxUniform
    theta, x = _simulations(0)
    prior = BoxUniform(-2 * torch.ones(D), 2 * torch.ones(D))
    pts, x_o = _points()
    res = {}
    for i, model in enumerate(["maf", "nsf", "mdn", "zuko_maf"]):
        kwargs = {"num_components": 3} if model == "mdn" else {}
        build = _builder(posterior_nn, model, 10 + i, (theta, x), **kwargs)
        inference = NPE(prior=prior, density_estimator=build, show_progress_bars=False)
        est, out = _train(inference, theta, x)
        with torch.no_grad():
            out["log_prob"] = est.log_prob(pts.unsqueeze(1), x_o.expand(6, D))
            posterior = inference.build_posterior(est)
            out["posterior_log_prob"] = posterior.log_prob(pts, x=x_o, norm_posterior=False)
        res[model] = out
    return res


def nle_case():
    """NLE with nflows' MAF and NSF: losses per epoch, the likelihood estimator's log_prob of
    fixed observations and the potential (log-likelihood plus log-prior) of fixed parameters
    with its gradient."""
    from sbi.inference import NLE
    from sbi.inference.potentials import likelihood_estimator_based_potential
    from sbi.neural_nets import likelihood_nn
    from sbi.utils import BoxUniform
    theta, x = _simulations(1)
    prior = BoxUniform(-2 * torch.ones(D), 2 * torch.ones(D))
    pts, x_o = _points()
    res = {}
    for i, model in enumerate(["maf", "nsf"]):
        build = _builder(likelihood_nn, model, 20 + i, (theta, x))
        inference = NLE(prior=prior, density_estimator=build, show_progress_bars=False)
        est, out = _train(inference, theta, x)
        with torch.no_grad():
            out["log_prob"] = est.log_prob(x[:6].unsqueeze(1), pts)
        potential, _ = likelihood_estimator_based_potential(est, prior, x_o)
        p = pts.clone().requires_grad_(True)
        pot = potential(p, track_gradients=True)
        pot.sum().backward()
        out["potential"], out["potential_grad"] = pot.detach(), p.grad
        res[model] = out
    return res


CASES = {"npe": npe_case, "nle": nle_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
