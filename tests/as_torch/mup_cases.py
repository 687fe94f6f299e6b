"""mup (maximal update parametrisation), run by tests/as_torch/test_mup.py with the real torch
and under ``python -m ptcore.as_torch``: base shapes from a narrow model set on a wide one
(infinite-dimension annotations on the parameters, readout rescaling), muP initialisers'
fan adjustments, base-shape files saved and loaded, and MuAdam/MuSGD parameter groups with
width-scaled learning rates over a few training steps; weights and data from NumPy.  Each case
writes what it computed to ``<out>/<case>.json``."""
import os
import sys
import tempfile
import warnings

import torch

from case_results import fill_normal, main, normal_tensor, optimizer_steps

warnings.filterwarnings("ignore")


_x = normal_tensor


class MLP(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        from mup import MuReadout
        self.inp = torch.nn.Linear(6, width)
        self.hidden = torch.nn.Linear(width, width)
        self.out = MuReadout(width, 3, readout_zero_init=False)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(torch.relu(self.inp(x)))))


def _model(width, base, delta, seed):
    from mup import set_base_shapes
    model = MLP(width)
    fill_normal([p for _, p in sorted(model.state_dict().items())], seed, 0.3)
    set_base_shapes(model, base, delta=delta)
    return model


def mup_case():
    """A width-32 MLP against base width 8 (delta 16): infshapes, width multipliers, the
    readout's output, muP initialisers' statistics on fixed inputs, MuAdam and MuSGD steps."""
    import mup
    base, delta = MLP(8), MLP(16)
    x, y = _x(1, (10, 6)), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
    res = {}
    model = _model(32, base, delta, 2)
    res["infshapes"] = {n: str(p.infshape) for n, p in model.named_parameters()}
    res["width_mult"] = {n: float(p.infshape.width_mult()) for n, p in model.named_parameters()}
    res["readout_mult"] = float(model.out.width_mult())
    res["out"] = model(x).detach()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "base.bsh")
        mup.make_base_shapes(base, delta, savefile=path)
        loaded = _model(32, path, None, 2)
    res["loaded_out"] = loaded(x).detach()
    w = torch.empty(32, 32)
    w.infshape = model.hidden.weight.infshape
    with torch.no_grad():
        w.copy_(_x(3, (32, 32)))
    res["init_adjust"] = {
        "xavier_gain": float(mup.init._inf_fan_adjust_xavier(1.0, w)),
        "kaiming_gain": float(mup.init._inf_fan_adjust_kaiming(1.0, w, "fan_in"))}
    for name, make in (("adam", lambda p: mup.MuAdam(p, lr=1e-2)),
                       ("adamw", lambda p: mup.MuAdamW(p, lr=1e-2, weight_decay=0.1)),
                       ("sgd", lambda p: mup.MuSGD(p, lr=0.1, momentum=0.9))):
        model = _model(32, base, delta, 4)
        opt = make(model.parameters())
        losses = optimizer_steps(opt, model, torch.nn.functional.cross_entropy, x, y)
        res[name] = {"losses": losses, "lrs": sorted(g["lr"] for g in opt.param_groups),
                     "weights": [p.detach() for p in model.parameters()]}
    return res


CASES = {"mup": mup_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
