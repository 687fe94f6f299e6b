"""neuraloperator (``neuralop``), run by tests/as_torch/test_neuralop.py with the real torch and
under ``python -m ptcore.as_torch``: Fourier neural operators on a small 2-D problem (a smoothed
random field to its Laplacian-like response, from NumPy): forward passes, gradients of
neuralop's relative Lp and H1 losses, and a few Adam steps, for a dense FNO, a Tucker-factorized
TFNO (tensorly with its torch backend) and a 1-D FNO; weights (complex spectral weights too) are
NumPy normals.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import adam_steps, main

warnings.filterwarnings("ignore")


def _fill(module, seed, scale=0.1):
    """The module's parameters, in name order, from NumPy normals (complex ones through their
    real view)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(module.named_parameters()):
            view = torch.view_as_real(p) if p.is_complex() else p
            view.copy_(torch.from_numpy(np.asarray(rng.standard_normal(view.shape) * scale,
                                                   dtype=np.float32)))


def _problem(seed, n=4, s=16):
    """Inputs: low-pass random fields on an s x s grid; targets: a fixed nonlinear response."""
    rng = np.random.default_rng(seed)
    k = np.fft.fftfreq(s) * s
    filt = np.exp(-(k[:, None] ** 2 + k[None, :] ** 2) / 8.0)
    a = np.real(np.fft.ifft2(np.fft.fft2(rng.standard_normal((n, s, s))) * filt)) * 4
    u = np.real(np.fft.ifft2(np.fft.fft2(a) * filt)) + 0.1 * a ** 2
    return (torch.from_numpy(a[:, None].astype(np.float32)),
            torch.from_numpy(u[:, None].astype(np.float32)))


def fno_case():
    """A dense 2-D FNO and a Tucker TFNO: outputs, the gradients of the first spectral weight
    and the lifting layer under the relative L2 loss, and three Adam steps on the H1 loss."""
    from neuralop.losses import H1Loss, LpLoss
    from neuralop.models import FNO, TFNO
    x, y = _problem(0)
    l2, h1 = LpLoss(d=2, p=2), H1Loss(d=2)
    res = {}
    models = {"fno": FNO(n_modes=(6, 6), hidden_channels=8, in_channels=1, out_channels=1,
                         n_layers=2),
              "tfno": TFNO(n_modes=(6, 6), hidden_channels=8, in_channels=1, out_channels=1,
                           n_layers=2, factorization="tucker", rank=0.5)}
    for i, (name, model) in enumerate(models.items()):
        _fill(model, 10 + i)
        out = model(x)
        loss = l2(out, y)
        loss.backward()
        grads = {n: torch.view_as_real(p.grad) if p.is_complex() else p.grad.clone()
                 for n, p in sorted(model.named_parameters())
                 if n.startswith(("lifting.fcs.0", "fno_blocks.convs.0"))}
        model.zero_grad()
        res[name] = {"out": out.detach(), "l2": loss.detach(),
                     "h1": h1(out.detach(), y), "grads": grads,
                     "losses": adam_steps(model, h1, x, y)}
    return res


def fno1d_case():
    """A 1-D FNO on the rows of the 2-D problem: output, a few Adam steps on the L2 loss and the
    trained weights of the projection."""
    from neuralop.losses import LpLoss
    from neuralop.models import FNO
    x, y = _problem(1)
    x, y = x[:, :, 0], y[:, :, 0]
    model = FNO(n_modes=(5,), hidden_channels=8, in_channels=1, out_channels=1, n_layers=2)
    _fill(model, 30)
    with torch.no_grad():
        out = model(x)
    losses = adam_steps(model, LpLoss(d=1, p=2), x, y, steps=4)
    return {"out": out, "losses": losses,
            "projection": [p.detach() for _, p in sorted(model.projection.named_parameters())]}


CASES = {"fno": fno_case, "fno1d": fno1d_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
