"""kymatio's torch frontend, run by tests/as_torch/test_kymatio.py with the real torch and under
``python -m ptcore.as_torch``: 1-D and 2-D scattering transforms of NumPy signals (kymatio builds its Morlet and Gabor filter banks in NumPy and moves them into torch
buffers), the coefficients and the gradient of a loss on them with respect to the input, and a
scattering front end in a small classifier trained a few Adam steps.  The transforms are built
through kymatio's entry classes (``frontend="torch"``): ``kymatio.torch`` also imports the 3-D
solid harmonic scattering, whose filter bank imports ``scipy.special.sph_harm``, which SciPy 1.17
removed (kymatio 0.3.0 fails to import it with the real torch too).  Each case writes what it
computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _signal(seed, shape):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _coefficients_and_grad(scattering, x):
    x = x.clone().requires_grad_(True)
    s = scattering(x)
    (s ** 2).sum().backward()
    return {"coefficients": s.detach(), "input_grad": x.grad}


def scattering_case():
    """Scattering1D (J=4, Q=8, second order; first order only) and Scattering2D (J=2, L=4)
    of NumPy inputs: coefficients and input gradients."""
    from kymatio import Scattering1D, Scattering2D
    return {"s1d": _coefficients_and_grad(Scattering1D(J=4, shape=(256,), Q=8, frontend="torch"),
                                          _signal(0, (2, 256))),
            "s1d_first_order": _coefficients_and_grad(
                Scattering1D(J=3, shape=(128,), Q=4, max_order=1, frontend="torch"),
                _signal(1, (3, 128))),
            "s2d": _coefficients_and_grad(Scattering2D(J=2, shape=(32, 32), L=4,
                                                       frontend="torch"),
                                          _signal(2, (2, 32, 32)))}


def classifier_case():
    """A Scattering2D front end with a linear classifier on NumPy images: three Adam steps of
    cross-entropy, and the trained classifier's logits."""
    from kymatio import Scattering2D
    scattering = Scattering2D(J=2, shape=(16, 16), L=4, frontend="torch")
    x = _signal(4, (8, 1, 16, 16))
    y = torch.from_numpy(np.random.default_rng(5).integers(0, 3, 8))
    with torch.no_grad():
        feats = scattering(x)
    head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(feats[0].numel(), 3))
    fill_normal([p for _, p in sorted(head.named_parameters())], 6, 0.05)
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(scattering(x)), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        logits = head(scattering(x))
    return {"features_shape": list(feats.shape), "losses": losses, "logits": logits}


CASES = {"scattering": scattering_case, "classifier": classifier_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
