"""EMA libraries (ema-pytorch, torch-ema), run by tests/as_torch/test_ema.py with the real torch
and under ``python -m ptcore.as_torch``: a small model trained with SGD while the library keeps
its exponential moving average (warmup schedule, update intervals, buffers, copying back to
the model, state dicts), weights and data from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _model(seed):
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.BatchNorm1d(8),
                                torch.nn.Tanh(), torch.nn.Linear(8, 2))
    fill_normal([p for _, p in sorted(model.state_dict().items())
                 if p.is_floating_point()], seed, 0.4)
    with torch.no_grad():
        model[1].running_var.abs_().add_(0.5)
    return model


def _batches(n=12):
    rng = np.random.default_rng(0)
    return [(torch.from_numpy(rng.standard_normal((6, 5)).astype(np.float32)),
             torch.from_numpy(rng.standard_normal((6, 2)).astype(np.float32)))
            for _ in range(n)]


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def _state(module):
    return {k: v for k, v in module.state_dict().items()}


def ema_pytorch_case():
    """ema_pytorch.EMA (warmup decay, update_after_step, update_every), its forward in eval
    mode, copying to the model; KarrasEMA's sigma-rel schedule."""
    from ema_pytorch import EMA, KarrasEMA
    model = _model(1)
    ema = EMA(model, beta=0.99, update_after_step=2, update_every=2, power=3 / 4)
    karras = KarrasEMA(model, sigma_rel=0.1, update_every=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    losses, decays = [], []
    for x, y in _batches():
        losses.append(_step(model, opt, x, y))
        ema.update()
        karras.update()
        decays.append(float(ema.get_current_decay()))
    x = _batches(1)[0][0]
    with torch.no_grad():
        out = {"losses": losses, "decays": decays, "ema_out": ema(x),
               "ema_state": _state(ema.ema_model), "karras_state": _state(karras.ema_model),
               "karras_beta": float(karras.beta), "step": ema.step}
    ema.copy_params_from_ema_to_model()
    out["model_after_copy"] = _state(model)
    return out


def torch_ema_case():
    """torch_ema.ExponentialMovingAverage with num_updates warmup: update, store/copy_to/
    restore, the average_parameters context, state_dict and load_state_dict."""
    from torch_ema import ExponentialMovingAverage
    model = _model(2)
    ema = ExponentialMovingAverage(model.parameters(), decay=0.95, use_num_updates=True)
    # (SGD: the first layer's bias feeds a batch norm, so its gradient is zero but for
    # rounding, which Adam would turn into learning-rate steps of either sign)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for x, y in _batches(8):
        losses.append(_step(model, opt, x, y))
        ema.update()
    x = _batches(1)[0][0]
    model.eval()
    with torch.no_grad():
        live = model(x)
        with ema.average_parameters():
            averaged = model(x)
        back = model(x)
    sd = ema.state_dict()
    ema2 = ExponentialMovingAverage(model.parameters(), decay=0.5)
    ema2.load_state_dict(sd)
    ema2.copy_to(model.parameters())
    return {"losses": losses, "live": live, "averaged": averaged, "back": back,
            "shadow": sd["shadow_params"], "num_updates": sd["num_updates"],
            "decay": sd["decay"], "copied": [p.detach() for p in model.parameters()]}


CASES = {"ema_pytorch": ema_pytorch_case, "torch_ema": torch_ema_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
