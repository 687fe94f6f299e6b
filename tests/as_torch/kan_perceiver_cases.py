"""pykan and perceiver-pytorch, run by tests/as_torch/test_kan_perceiver.py with the real
torch and under ``python -m ptcore.as_torch``: Kolmogorov-Arnold networks (B-spline layers,
grid updates from samples by least squares, refinement, its LBFGS training loop with
regularisation, pruning and attribution scores), and Perceiver / Perceiver IO (Fourier
position encodings, latent cross- and self-attention, queries) trained a few steps; weights
and data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import adam_steps, fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def _fill(model, seed, scale=0.3, skip=()):
    fill_normal([t for k, t in sorted(model.state_dict().items())
                 if t.is_floating_point() and not any(s in k for s in skip)], seed, scale)


def kan_case():
    """KAN [2, 4, 1] on f(x, y) = exp(sin(pi x) + y^2), in float64: forward, grid update
    from samples, two LBFGS fit steps (its strong-Wolfe search runs 20 iterations a step to
    tolerances of 1e-32, which carries float32 rounding up to 1e-3 within a step: float64
    keeps both runs within 1e-8), grid refinement, attribution scores, pruning."""
    torch.set_default_dtype(torch.float64)
    try:
        return _kan()
    finally:
        torch.set_default_dtype(torch.float32)


def _kan():
    from kan import KAN
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.uniform(-1, 1, (64, 2)))
    y = torch.exp(torch.sin(torch.pi * x[:, :1]) + x[:, 1:] ** 2)
    xt = torch.from_numpy(rng.uniform(-1, 1, (16, 2)))
    yt = torch.exp(torch.sin(torch.pi * xt[:, :1]) + xt[:, 1:] ** 2)
    dataset = {"train_input": x, "train_label": y, "test_input": xt, "test_label": yt}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)          # (the library logs to a ./model checkpoint folder)
        os.makedirs("model")
        try:
            model = KAN(width=[2, 4, 1], grid=3, k=3, seed=0, auto_save=False)
            _fill(model, 2, 0.3, skip=("grid", "mask", "scale_sp"))
            res = {"out0": model(x[:8]).detach()}
            model.update_grid_from_samples(x)
            res["grid"] = model.act_fun[0].grid.detach()
            hist = model.fit(dataset, opt="LBFGS", steps=2, lamb=0.01, update_grid=False,
                             log=10)
            res["fit"] = {k: [float(v) for v in hist[k]] for k in ("train_loss", "test_loss",
                                                                   "reg")}
            model.refine(6)
            res["refined"] = model(xt).detach()
            model(x)
            model.attribute(plot=False)
            res["edge_scores"] = [s.detach() for s in model.edge_scores]
            res["feature_score"] = model.feature_score.detach()
            pruned = model.prune(node_th=0.05, edge_th=0.05)
            res["pruned_width"] = [list(w) for w in pruned.width]
            res["pruned_out"] = pruned(xt).detach()
        finally:
            os.chdir(cwd)
    return res


def perceiver_case():
    """Perceiver on an image with Fourier features (classification logits and three Adam
    steps) and Perceiver IO with output queries (token logits)."""
    from perceiver_pytorch import Perceiver, PerceiverIO
    model = Perceiver(input_channels=3, input_axis=2, num_freq_bands=4, max_freq=10.0,
                      depth=2, num_latents=8, latent_dim=16, cross_heads=1, latent_heads=2,
                      cross_dim_head=8, latent_dim_head=8, num_classes=5, attn_dropout=0.0,
                      ff_dropout=0.0, weight_tie_layers=False, self_per_cross_attn=2)
    _fill(model, 3)
    img, labels = _x(4, (2, 6, 6, 3)), torch.tensor([1, 3])
    losses = adam_steps(model, torch.nn.functional.cross_entropy, img, labels)
    io = PerceiverIO(dim=12, queries_dim=10, logits_dim=7, depth=2, num_latents=6,
                     latent_dim=16, cross_heads=1, latent_heads=2, cross_dim_head=8,
                     latent_dim_head=8)
    _fill(io, 5)
    seq, queries = _x(6, (2, 9, 12)), _x(7, (2, 4, 10))
    mask = torch.ones(2, 9, dtype=torch.bool)
    mask[1, 6:] = False
    out = io(seq, mask=mask, queries=queries)
    out.sum().backward()
    return {"losses": losses, "logits": model(img).detach(), "io": out.detach(),
            "io_grad": next(io.parameters()).grad}


CASES = {"kan": kan_case, "perceiver": perceiver_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
