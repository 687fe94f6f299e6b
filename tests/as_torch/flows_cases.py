"""zuko and normflows (normalizing flows), run by tests/as_torch/test_flows.py with the real torch
and under ``python -m ptcore.as_torch``: flows fitted a few Adam steps by maximum likelihood on
a NumPy data set, their log-densities, and samples pushed from NumPy base noise through the
flows' transforms (the libraries' own ``sample`` draws from torch's generator, which ptcore does
not reproduce bit for bit).  Weights from NumPy.  Each case writes what it computed to
``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


def _fill(module, seed, scale=0.2):
    """The module's parameters (not its buffers: base densities, masks) from NumPy normals."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(module.named_parameters()):
            p.copy_(torch.from_numpy(np.asarray(rng.standard_normal(p.shape) * scale,
                                                dtype=np.float32)))


def _data(seed, n=64, d=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)) * np.array([1.0, 0.3][:d] + [0.5] * (d - 2)) + 0.5
    x[:, 1] += 0.5 * x[:, 0] ** 2
    return torch.from_numpy(x.astype(np.float32))


def _noise(seed, shape):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _fit(params, nll, steps=5, lr=1e-2):
    opt = torch.optim.Adam(params, lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nll()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def zuko_case():
    """MAF, NSF (rational-quadratic splines), RealNVP and NAF (neural autoregressive) flows, and
    a conditional MAF: fitted 5 steps; log_prob of data and the transform of base noise (what
    ``sample`` computes) with its log-determinant; a CNF's log_prob (an ODE solved by zuko's own
    adaptive integrator, with the Hutchinson-free exact trace) and two training steps through
    its adjoint; zuko's odeint and its gradients."""
    import zuko
    x = _data(0)
    ctx = torch.from_numpy(np.linspace(-1, 1, 64, dtype=np.float32)[:, None])
    flows = {"maf": zuko.flows.MAF(2, transforms=2, hidden_features=[16, 16]),
             "nsf": zuko.flows.NSF(2, bins=4, transforms=2, hidden_features=[16]),
             "realnvp": zuko.flows.RealNVP(2, transforms=2, hidden_features=[16]),
             "naf": zuko.flows.NAF(2, transforms=1, signal=4, hidden_features=[8]),
             "cond_maf": zuko.flows.MAF(2, context=1, transforms=2, hidden_features=[16])}
    res = {}
    for i, (name, flow) in enumerate(flows.items()):
        _fill(flow, 10 + i)
        c = ctx if name == "cond_maf" else None
        losses = _fit(flow.parameters(), lambda: -flow(c).log_prob(x).mean())
        with torch.no_grad():
            dist = flow(c[:5] if c is not None else None)
            z = _noise(20 + i, (5, 2))
            y, ladj = dist.transform.inv.call_and_ladj(z)
            res[name] = {"losses": losses, "log_prob": dist.log_prob(x[:5]), "sample": y,
                         "ladj": ladj}
    x01 = torch.sigmoid(x[:5])
    more = {"gmm": (zuko.flows.GMM(2, components=3), x[:5]),
            "gf": (zuko.flows.GF(2, components=2), x[:5]),
            "sospf": (zuko.flows.SOSPF(2, transforms=1, hidden_features=[8]), x[:5]),
            "unaf": (zuko.flows.UNAF(2, transforms=1, signal=4, hidden_features=[8]), x[:5]),
            "bpf": (zuko.flows.BPF(2, transforms=1, hidden_features=[8]), x01),
            "ncsf": (zuko.flows.NCSF(2, transforms=1, hidden_features=[8]), x01 * 2 - 1)}
    for i, (name, (flow, data)) in enumerate(more.items()):
        _fill(flow, 60 + i, 0.1)
        with torch.no_grad():
            res[name] = {"log_prob": flow().log_prob(data)}
    cnf = zuko.flows.CNF(2, hidden_features=[16], exact=True)
    _fill(cnf, 30)
    with torch.no_grad():
        log_prob = cnf().log_prob(x[:4])
    losses = _fit(cnf.parameters(), lambda: -cnf().log_prob(x[:16]).mean(), steps=2)
    res["cnf"] = {"log_prob": log_prob, "losses": losses}
    # zuko's adaptive ODE solver with its checkpointed adjoint (gradients w.r.t. the initial
    # state and a parameter)
    y0 = torch.tensor([1.0, 2.0], requires_grad=True)
    a = torch.tensor(0.7, requires_grad=True)
    y1 = zuko.utils.odeint(lambda t, y: -a * y * (1 + t), y0, 0.0, 1.0, phi=(a,), atol=1e-7,
                           rtol=1e-7)
    y1.sum().backward()
    res["odeint"] = {"y1": y1.detach(), "y0_grad": y0.grad, "a_grad": a.grad}
    return res


def normflows_case():
    """normflows: a RealNVP-style stack (masked affine couplings with ActNorm), a neural spline
    flow (autoregressive rational-quadratic), LU-decomposed linear flows with permutations, and
    planar/radial flows: fitted by forward KL, log_prob, and the forward pass of NumPy base
    noise."""
    import normflows as nf
    x = _data(1)
    models = {}
    base = nf.distributions.DiagGaussian(2, trainable=False)
    flows = []
    for i in range(3):
        mask = torch.tensor([1.0, 0.0] if i % 2 else [0.0, 1.0])
        flows += [nf.flows.MaskedAffineFlow(mask, nf.nets.MLP([2, 16, 2], init_zeros=False),
                                            nf.nets.MLP([2, 16, 2], init_zeros=False)),
                  nf.flows.ActNorm(2)]
    models["realnvp"] = nf.NormalizingFlow(base, flows)
    base = nf.distributions.DiagGaussian(2, trainable=False)
    flows = [nf.flows.AutoregressiveRationalQuadraticSpline(2, 1, 16, num_bins=4)
             for _ in range(2)]
    models["spline"] = nf.NormalizingFlow(base, flows)
    base = nf.distributions.DiagGaussian(2, trainable=False)
    flows = [nf.flows.LULinearPermute(2), nf.flows.ActNorm(2), nf.flows.LULinearPermute(2)]
    models["lu"] = nf.NormalizingFlow(base, flows)
    base = nf.distributions.DiagGaussian(2, trainable=False)
    flows = [nf.flows.Planar((2,), act="tanh"), nf.flows.Radial((2,)),
             nf.flows.Planar((2,), act="leaky_relu")]
    models["planar_radial"] = nf.NormalizingFlow(base, flows)
    res = {}
    for i, (name, model) in enumerate(models.items()):
        _fill(model, 40 + i)
        with torch.no_grad():       # (random permutations: from torch.randperm, reversed here)
            for m in model.modules():
                if hasattr(m, "_permutation"):
                    m._permutation.copy_(torch.arange(len(m._permutation)).flip(0))
        out = {}
        if name != "planar_radial":       # (planar/radial flows have no inverse: no log_prob)
            out["losses"] = _fit(model.parameters(), lambda: model.forward_kld(x))
            with torch.no_grad():
                out["log_prob"] = model.log_prob(x[:5])
        with torch.no_grad():
            z = _noise(50 + i, (5, 2))
            log_q = model.q0.log_prob(z)
            for flow in model.flows:
                z, ld = flow(z)
                log_q = log_q - ld
            out["sample"], out["sample_log_q"] = z, log_q
        res[name] = out
    return res


CASES = {"zuko": zuko_case, "normflows": normflows_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
