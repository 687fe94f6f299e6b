"""torchsde, run by tests/as_torch/test_torchsde.py with the real torch and under
``python -m ptcore.as_torch``: neural SDEs (drift and diffusion networks with NumPy weights)
solved by ``torchsde.sdeint`` with fixed-step Ito and Stratonovich solvers and
``sdeint_adjoint``, along a Brownian path given as NumPy samples on a time grid (torchsde's own
BrownianInterval draws from torch's generator, a stream ptcore does not reproduce): the
solution paths, and gradients of a loss on them with respect to the initial state and the
parameters, by backpropagation through the solver and by the adjoint SDE.  Each case writes what
it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")

B, D, T1, STEPS = 3, 2, 1.0, 40


class GridBrownian:
    """A Brownian motion given by NumPy samples ``W(t_k)`` on a uniform grid over [t0, t1],
    linearly interpolated between them; ``bm(ta, tb)`` is ``W(tb) - W(ta)``, ``bm(t)`` is
    ``W(t)`` (torchsde's BaseBrownian interface, without Levy areas)."""

    def __init__(self, t0, t1, shape, steps, seed):
        rng = np.random.default_rng(seed)
        h = (t1 - t0) / steps
        inc = rng.standard_normal((steps, *shape)) * np.sqrt(h)
        self._w = torch.from_numpy(np.concatenate([np.zeros((1, *shape)), np.cumsum(inc, 0)])
                                   .astype(np.float32))
        self._t0, self._h, self._steps, self._shape = t0, h, steps, tuple(shape)

    def _at(self, t):
        s = min(max((float(t) - self._t0) / self._h, 0.0), float(self._steps))
        k = min(int(np.floor(s + 1e-9)), self._steps - 1)
        frac = s - k
        return self._w[k] * (1 - frac) + self._w[k + 1] * frac

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        return self._at(ta) if tb is None else self._at(tb) - self._at(ta)

    def __repr__(self):
        return "GridBrownian()"

    dtype = property(lambda self: torch.float32)
    device = property(lambda self: torch.device("cpu"))
    shape = property(lambda self: torch.Size(self._shape))
    levy_area_approximation = property(lambda self: "none")

    def size(self):
        return self.shape



class NeuralSDE(torch.nn.Module):
    def __init__(self, noise_type, sde_type):
        super().__init__()
        self.noise_type, self.sde_type = noise_type, sde_type
        self.drift = torch.nn.Sequential(torch.nn.Linear(D + 1, 16), torch.nn.Tanh(),
                                         torch.nn.Linear(16, D))
        self.diff = torch.nn.Sequential(torch.nn.Linear(D, 16), torch.nn.Tanh(),
                                        torch.nn.Linear(16, D), torch.nn.Sigmoid())

    def f(self, t, y):
        return self.drift(torch.cat([y, t.expand(y.shape[0], 1)], dim=1))

    def g(self, t, y):
        return self.diff(y) * 0.5


def _y0():
    return torch.from_numpy(np.random.default_rng(5).standard_normal((B, D)).astype(np.float32))


def _solve(sdeint, sde, y0, bm, method, **kwargs):
    ts = torch.linspace(0, T1, 5)
    ys = sdeint(sde, y0, ts, bm=bm, method=method, dt=T1 / STEPS, **kwargs)
    loss = (ys[-1] ** 2).sum() + ys.mean()
    return ys, loss


def sdeint_case():
    """Ito (Euler-Maruyama, Milstein, SRK-free) and Stratonovich (Heun, midpoint, reversible
    Heun) solutions of a diagonal-noise neural SDE along the same path, with the gradients of a
    loss on them by backpropagation through the solver."""
    import torchsde
    bm = GridBrownian(0.0, T1, (B, D), STEPS, 0)
    res = {}
    for i, (sde_type, method) in enumerate([("ito", "euler"), ("ito", "milstein"),
                                            ("stratonovich", "heun"),
                                            ("stratonovich", "midpoint"),
                                            ("stratonovich", "reversible_heun")]):
        sde = NeuralSDE("diagonal", sde_type)
        fill_normal([p for _, p in sorted(sde.named_parameters())], 10, 0.5)
        y0 = _y0().requires_grad_(True)
        ys, loss = _solve(torchsde.sdeint, sde, y0, bm, method)
        loss.backward()
        res[method] = {"ys": ys.detach(), "y0_grad": y0.grad,
                       "grads": [p.grad for _, p in sorted(sde.named_parameters())]}
    return res


def adjoint_case():
    """``sdeint_adjoint`` (Ito Euler and Stratonovich reversible Heun with its adjoint): the
    solution and the gradients from the adjoint SDE along the same path."""
    import torchsde
    bm = GridBrownian(0.0, T1, (B, D), STEPS, 1)
    res = {}
    for sde_type, method, adjoint in [("ito", "euler", "euler"),
                                      ("stratonovich", "reversible_heun",
                                       "adjoint_reversible_heun")]:
        sde = NeuralSDE("diagonal", sde_type)
        fill_normal([p for _, p in sorted(sde.named_parameters())], 20, 0.5)
        y0 = _y0().requires_grad_(True)
        ys, loss = _solve(torchsde.sdeint_adjoint, sde, y0, bm, method,
                          adjoint_method=adjoint)
        loss.backward()
        res[method] = {"ys": ys.detach(), "y0_grad": y0.grad,
                       "grads": [p.grad for _, p in sorted(sde.named_parameters())]}
    return res


CASES = {"sdeint": sdeint_case, "adjoint": adjoint_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
