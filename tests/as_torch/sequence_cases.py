"""Continuous-time sequence models, run by tests/as_torch/test_sequence_models.py with the real
torch and under ``python -m ptcore.as_torch``: torchcde's interpolations (natural cubic,
Hermite cubic with backward differences, linear, with missing values) evaluated with their
derivatives and a neural CDE classifier integrated by cdeint (rk4 and adaptive dopri5, the
adjoint method) trained by Adam; ncps' liquid networks (LTC and CfC cells over AutoNCP and
fully connected wirings, the CfC's modes, mixed memory) on sequences, trained
by Adam.  Weights and data from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import copy
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def interpolation_case():
    """Coefficients and evaluations of torchcde's interpolations, with gradients to the
    data through a cubic spline."""
    import torchcde
    t = torch.linspace(0, 2, 7)
    x = torch.cat([t.expand(2, 7).unsqueeze(-1), _x(0, (2, 7, 2))], -1)
    xm = x.clone()
    xm[0, 2, 1] = float("nan")                      # a missing value
    ts = torch.tensor([0.1, 0.55, 1.3, 1.99])
    res = {}
    for name, fn, cls in [("cubic", torchcde.natural_cubic_coeffs, torchcde.CubicSpline),
                          ("hermite", torchcde.hermite_cubic_coefficients_with_backward_differences,
                           torchcde.CubicSpline),
                          ("linear", torchcde.linear_interpolation_coeffs,
                           torchcde.LinearInterpolation)]:
        coeffs = fn(x, t)
        spline = cls(coeffs, t)
        res[name] = {"coeffs": coeffs, "eval": torch.stack([spline.evaluate(s) for s in ts]),
                     "deriv": torch.stack([spline.derivative(s) for s in ts]),
                     "missing": fn(xm, t)}
    xg = x.clone().requires_grad_()
    spline = torchcde.CubicSpline(torchcde.natural_cubic_coeffs(xg, t), t)
    (spline.evaluate(ts[1]).square().sum() + spline.derivative(ts[2]).sum()).backward()
    res["grad"] = xg.grad
    return res


class _CDEFunc(torch.nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.channels, self.hidden = channels, hidden
        self.l1 = torch.nn.Linear(hidden, 16)
        self.l2 = torch.nn.Linear(16, hidden * channels)

    def forward(self, t, z):
        return self.l2(self.l1(z).relu()).tanh().view(*z.shape[:-1], self.hidden,
                                                      self.channels)


class _NeuralCDE(torch.nn.Module):
    def __init__(self, channels=3, hidden=4, out=1):
        super().__init__()
        self.func = _CDEFunc(channels, hidden)
        self.initial = torch.nn.Linear(channels, hidden)
        self.readout = torch.nn.Linear(hidden, out)

    def forward(self, coeffs, t, **kw):
        import torchcde
        X = torchcde.CubicSpline(coeffs, t)
        z0 = self.initial(X.evaluate(X.interval[0]))
        z = torchcde.cdeint(X=X, z0=z0, func=self.func, t=X.interval, **kw)
        return self.readout(z[:, 1]).squeeze(-1)


def cde_case():
    """A neural CDE classifier: logits and parameter gradients by rk4 (fixed steps), the
    adjoint method and dopri5 (adaptive, in float64), and three Adam steps with rk4."""
    import torchcde
    t = torch.linspace(0, 1, 8)
    x = torch.cat([t.expand(6, 8).unsqueeze(-1), _x(1, (6, 8, 2), 0.5)], -1)
    y = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    coeffs = torchcde.natural_cubic_coeffs(x, t)
    model = _NeuralCDE()
    fill_normal(model.parameters(), 2, scale=0.4)
    res = {}
    for name, kw in {"rk4": {"method": "rk4", "options": {"step_size": 0.1}},
                     "adjoint": {"method": "rk4", "options": {"step_size": 0.1},
                                 "adjoint": True,
                                 "adjoint_params": tuple(model.parameters()) + (coeffs,)}
                     }.items():
        model.zero_grad()
        out = model(coeffs, t, **kw)
        torch.nn.functional.binary_cross_entropy_with_logits(out, y).backward()
        res[name] = {"logits": out, "grads": [p.grad.clone() for p in model.parameters()]}
    # dopri5 (adaptive, steps at the spline's knots) in float64: in float32 its parameter
    # gradients are rounding noise (they run through the time grid from the initial step
    # size, and the error estimates cancel), torch's as much as ptcore's
    m64 = copy.deepcopy(model).double()
    t64 = t.double()
    c64 = torchcde.natural_cubic_coeffs(x.double(), t64)
    out = m64(c64, t64, method="dopri5", rtol=1e-3, atol=1e-5,
              options={"jump_t": torchcde.CubicSpline(c64, t64).grid_points})
    torch.nn.functional.binary_cross_entropy_with_logits(out, y.double()).backward()
    res["dopri5"] = {"logits": out, "grads": [p.grad for p in m64.parameters()]}
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            model(coeffs, t, method="rk4", options={"step_size": 0.1}), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["losses"] = losses
    return res


def _fill_ltc(module, seed):
    """LTC parameters from NumPy uniforms in the cell's own init ranges (the wiring's
    reversal potentials and sparsity masks, deterministic, stay)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            key = name.split(".")[-1]
            if "erev" in key or "mask" in key:
                continue
            lo, hi = {"gleak": (0.001, 1.0), "vleak": (-0.2, 0.2), "cm": (0.4, 0.6),
                      "w": (0.001, 1.0), "sigma": (3, 8), "mu": (0.3, 0.8),
                      "sensory_w": (0.001, 1.0), "sensory_sigma": (3, 8),
                      "sensory_mu": (0.3, 0.8)}.get(key, (-0.5, 0.5))
            p.copy_(torch.from_numpy(rng.uniform(lo, hi, p.shape).astype(np.float32)))


def liquid_case():
    """ncps LTC (AutoNCP wiring, ODE unfolds) and CfC (default, pure and no-gate modes,
    mixed memory, an AutoNCP-wired CfC) over a batch of sequences; the
    outputs, final states and three Adam steps each."""
    from ncps.torch import CfC, LTC
    from ncps.wirings import AutoNCP, FullyConnected
    x = _x(3, (3, 6, 4), 0.5)
    target = _x(5, (3, 6, 2), 0.5)
    wiring = AutoNCP(10, 2, seed=7)
    res = {"adjacency": torch.from_numpy(wiring.adjacency_matrix.astype(np.float32)),
           "sensory": torch.from_numpy(np.asarray(wiring.sensory_adjacency_matrix,
                                                  dtype=np.float32))}
    models = {"ltc_ncp": LTC(4, wiring, batch_first=True, ode_unfolds=4),
              "ltc_fc": LTC(4, FullyConnected(5, 2), batch_first=True),
              "cfc": CfC(4, 8, proj_size=2, batch_first=True),
              "cfc_pure": CfC(4, 8, proj_size=2, mode="pure", batch_first=True),
              "cfc_nogate": CfC(4, 8, proj_size=2, mode="no_gate", batch_first=True,
                                mixed_memory=True),
              "cfc_ncp": CfC(4, AutoNCP(8, 2, seed=3), batch_first=True)}
    for i, (name, m) in enumerate(models.items()):
        if name.startswith("ltc"):
            _fill_ltc(m, 10 + i)
        else:
            fill_normal(m.parameters(), 10 + i, scale=0.3)
        # (unit time steps: ncps' cells broadcast per-sample timespans against their units)
        out, h = m(x)
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x)[0], target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res[name] = {"out": out, "h": h, "losses": losses}
    return res


if __name__ == "__main__":
    main({"interpolation": interpolation_case, "cde": cde_case, "liquid": liquid_case},
         sys.argv)
