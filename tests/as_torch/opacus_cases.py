"""Opacus (differentially private training), run by tests/as_torch/test_opacus.py with the
real torch and under ``python -m ptcore.as_torch``: per-sample gradients from its module
hooks (linear, conv, norms, embedding, DP-LSTM, DP multi-head attention) and from its
torch.func path (vmap of grad over a module it has no hook for), the privacy engine's
clipped DP-SGD steps with flat and per-layer clipping (noise multiplier 0: no random noise)
and ghost clipping; weights and data from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")

B = 6


_x = normal_tensor


def _fill(model, seed, scale=0.3):
    fill_normal([t for _, t in sorted(model.state_dict().items())], seed, scale)


class Scaled(torch.nn.Module):
    """A layer Opacus has no hook for: its per-sample gradients come from torch.func."""

    def __init__(self, n):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        return torch.tanh(x * self.scale)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.gn = torch.nn.GroupNorm(2, 4)
        self.conv1d = torch.nn.Conv1d(4, 3, 3)
        self.ln = torch.nn.LayerNorm(3 * 14)
        self.scaled = Scaled(3 * 14)
        self.fc = torch.nn.Linear(3 * 14, 3)

    def forward(self, x):
        h = torch.relu(self.gn(self.conv(x)))
        h = self.conv1d(h.flatten(2))
        return self.fc(self.scaled(self.ln(h.flatten(1))))


class SeqNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from opacus.layers import DPLSTM, DPMultiheadAttention
        self.emb = torch.nn.Embedding(10, 8)
        self.lstm = DPLSTM(8, 8, batch_first=True)
        self.attn = DPMultiheadAttention(8, 2, batch_first=True)
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        h, _ = self.attn(h, h, h)
        return self.fc(h.mean(1))


def _per_sample(model, x, y):
    from opacus import GradSampleModule
    gsm = GradSampleModule(model)
    loss = torch.nn.functional.cross_entropy(gsm(x), y)
    loss.backward()
    return {"loss": loss, "grad_samples": {n: p.grad_sample for n, p in model.named_parameters()},
            "grads": {n: p.grad for n, p in model.named_parameters()}}


def grad_sample_case():
    """Per-sample gradients of a conv net (hooks and the torch.func path) and of a sequence
    model (embedding, DP-LSTM, DP multi-head attention); their mean is the batch gradient."""
    torch.manual_seed(0)
    conv = ConvNet()
    _fill(conv, 1)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    res = {"conv": _per_sample(conv, _x(2, (B, 2, 4, 4)), y)}
    seq = SeqNet()
    _fill(seq, 3)
    tokens = torch.from_numpy(np.random.default_rng(4).integers(0, 10, (B, 5)))
    res["seq"] = _per_sample(seq, tokens, y)
    return res


def _private_training(mode, clipping="flat", steps=3):
    from opacus import PrivacyEngine
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    _fill(model, 5)
    rng = np.random.default_rng(6)
    data = torch.utils.data.TensorDataset(
        torch.from_numpy(rng.standard_normal((24, 5)).astype(np.float32)),
        torch.from_numpy(rng.integers(0, 3, 24)))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
    engine = PrivacyEngine(accountant="rdp")
    crit = torch.nn.CrossEntropyLoss()
    max_norm = [0.5, 0.3, 0.4, 0.2] if clipping == "per_layer" else 0.5
    out = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                              noise_multiplier=0.0, max_grad_norm=max_norm,
                              poisson_sampling=False, clipping=clipping,
                              grad_sample_mode=mode,
                              **({"criterion": crit} if mode == "ghost" else {}))
    if mode == "ghost":
        pmodel, popt, crit, ploader = out
    else:
        pmodel, popt, ploader = out
    losses = []
    for x, y in ploader:
        popt.zero_grad()
        loss = crit(pmodel(x), y)
        loss.backward()
        popt.step()
        losses.append(loss.item())
    return {"losses": losses, "weights": [p.detach() for p in model.parameters()],
            "steps": len(engine.accountant)}


def private_case():
    """PrivacyEngine.make_private: DP-SGD steps with per-sample clipping (hooks, flat and
    per-layer norms; torch.func; ghost clipping), no noise: the clipped mean gradients."""
    return {"hooks": _private_training("hooks"),
            "per_layer": _private_training("hooks", "per_layer"),
            "functorch": _private_training("functorch"),
            "ghost": _private_training("ghost")}


CASES = {"grad_sample": grad_sample_case, "private": private_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
