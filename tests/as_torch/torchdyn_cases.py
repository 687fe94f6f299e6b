"""torchdyn and torchcde, run by tests/as_torch/test_torchdyn.py with the real torch and under
``python -m ptcore.as_torch``: neural ODEs (``torchdyn.core.NeuralODE``, vector fields with
NumPy weights) integrated by torchdyn's fixed-step and adaptive solvers, with gradients by
backpropagation through the solver and by its adjoint and interpolated-adjoint sensitivities;
torchdyn's functional ``odeint``; and torchcde's cubic-spline interpolation of NumPy paths with a
neural controlled differential equation (``cdeint``) and its gradients.  Each case writes what it
computed to ``<out>/<case>.json``.  The adaptive solvers' tolerances stay well above float32
rounding: at 1e-6 their error estimates (differences of two embedded solutions) are rounding
noise, which picks different steps in torch and ptcore (torchdyn's interpolated adjoint returns
the step points themselves).
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _field(seed, d=2, hidden=16):
    f = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.Tanh(),
                            torch.nn.Linear(hidden, d))
    fill_normal([p for _, p in sorted(f.named_parameters())], seed, 0.5)
    return f


def _x0(seed, shape=(4, 2)):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def neural_ode_case():
    """NeuralODE with rk4 and euler (fixed steps), dopri5 and tsit5 (adaptive) under autograd,
    adjoint and interpolated-adjoint sensitivities: the trajectory at five times and the
    gradients of a loss on it with respect to the initial state and the weights."""
    from torchdyn.core import NeuralODE
    t_span = torch.linspace(0, 1, 5)
    res = {}
    for i, (solver, sensitivity) in enumerate([("rk4", "autograd"), ("euler", "autograd"),
                                               ("dopri5", "autograd"), ("tsit5", "autograd"),
                                               ("rk4", "adjoint"), ("dopri5", "adjoint"),
                                               ("dopri5", "interpolated_adjoint")]):
        f = _field(10)
        model = NeuralODE(f, solver=solver, sensitivity=sensitivity, atol=1e-4, rtol=1e-4,
                          atol_adjoint=1e-4, rtol_adjoint=1e-4)
        x0 = _x0(0).requires_grad_(True)
        t_eval, traj = model(x0, t_span)
        loss = (traj[-1] ** 2).sum() + traj.mean()
        loss.backward()
        res[f"{solver}_{sensitivity}"] = {
            "t": t_eval.detach(), "traj": traj.detach(), "x0_grad": x0.grad,
            "grads": [p.grad for _, p in sorted(f.named_parameters())]}
    return res


def odeint_case():
    """torchdyn.numerics.odeint on a damped oscillator with a parameter: rk4 and dopri5
    solutions and their gradients with respect to the parameter."""
    from torchdyn.numerics import odeint
    k = torch.tensor(1.3, requires_grad=True)

    def f(t, x):
        return torch.stack([x[..., 1], -k * x[..., 0] - 0.2 * x[..., 1]], -1)
    res = {}
    for solver in ("rk4", "dopri5", "euler"):
        k.grad = None
        t_eval, sol = odeint(f, _x0(1, (3, 2)), torch.linspace(0, 2, 9), solver=solver,
                             atol=1e-5, rtol=1e-5)
        sol[-1].pow(2).sum().backward()
        res[solver] = {"sol": sol.detach(), "k_grad": k.grad.clone()}
    return res


def cde_case():
    """torchcde: Hermite and natural cubic-spline coefficients of NumPy paths, the spline's
    values and derivatives, and a neural CDE solved by cdeint (rk4) with its gradients."""
    import torchcde
    rng = np.random.default_rng(2)
    t = torch.linspace(0, 1, 8)
    x = torch.from_numpy(np.cumsum(rng.standard_normal((3, 8, 2)), axis=1).astype(np.float32))
    x = torch.cat([t.expand(3, 8).unsqueeze(-1), x], -1)
    hermite = torchcde.hermite_cubic_coefficients_with_backward_differences(x)
    natural = torchcde.natural_cubic_coeffs(x)
    spline = torchcde.CubicSpline(natural)
    ts = torch.linspace(0, 7, 11)
    res = {"hermite": hermite, "natural": natural,
           "evaluate": torch.stack([spline.evaluate(s) for s in ts]),
           "derivative": torch.stack([spline.derivative(s) for s in ts])}

    class Func(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4 * 3)

        def forward(self, t, z):
            return torch.tanh(self.lin(z)).view(z.shape[0], 4, 3)
    func = Func()
    fill_normal([p for _, p in sorted(func.named_parameters())], 30, 0.3)
    coeffs = natural.clone().requires_grad_(True)
    spline = torchcde.CubicSpline(coeffs)
    z0 = torch.zeros(3, 4)
    z = torchcde.cdeint(X=spline, func=func, z0=z0, t=spline.interval, method="rk4",
                        options={"step_size": 0.25})
    z[:, -1].pow(2).sum().backward()
    res["cde"] = {"z": z.detach(), "coeffs_grad": coeffs.grad,
                  "grads": [p.grad for _, p in sorted(func.named_parameters())]}
    return res


CASES = {"neural_ode": neural_ode_case, "odeint": odeint_case, "cde": cde_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
