"""schedulefree and torch-optimizer, run by tests/as_torch/test_optimizer_libraries.py with the
real torch and under ``python -m ptcore.as_torch``: each optimizer trains a small MLP (weights
and data from NumPy) a few steps; the losses, the final parameters and, for the schedule-free
ones, the parameters after ``eval()`` (their averaged iterate).  Each case writes what it
computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((32, 4)).astype(np.float32))
    y = torch.from_numpy((np.sin(rng.standard_normal((32, 1)) * 2)).astype(np.float32))
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    fill_normal([p for _, p in sorted(model.state_dict().items())], seed + 1, 0.5)
    return model, x, y


def _train(make, steps=6, create_graph=False, closure=False, seed=0):
    model, x, y = _problem(seed)
    opt = make(model.parameters())
    if hasattr(opt, "train"):
        opt.train()
    losses = []

    def loss_fn():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward(create_graph=create_graph)
        return loss
    for _ in range(steps):
        if closure:
            loss = opt.step(loss_fn)
        else:
            loss = loss_fn()
            opt.step()
        losses.append(loss.item())
    out = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
    if hasattr(opt, "eval"):
        opt.eval()
        out["eval_params"] = [p.detach().clone() for p in model.parameters()]
    return out


def schedulefree_case():
    """AdamW, SGD and RAdam schedule-free (with warmup and weight decay), their closure forms
    and the wrapper around a base optimizer."""
    import schedulefree as sf
    makers = {
        "adamw": lambda p: sf.AdamWScheduleFree(p, lr=2e-2, warmup_steps=2, weight_decay=1e-2),
        "sgd": lambda p: sf.SGDScheduleFree(p, lr=5e-2, momentum=0.9, warmup_steps=1),
        "radam": lambda p: sf.RAdamScheduleFree(p, lr=2e-2, weight_decay=1e-3),
        "adamw_closure": lambda p: sf.AdamWScheduleFreeClosure(p, lr=2e-2, warmup_steps=2),
        "sgd_closure": lambda p: sf.SGDScheduleFreeClosure(p, lr=5e-2),
        "wrap": lambda p: sf.ScheduleFreeWrapper(torch.optim.SGD(p, lr=5e-2), momentum=0.9),
    }
    return {name: _train(make, closure=name.endswith("closure"))
            for name, make in makers.items()}


def torch_optimizer_case():
    """Every optimizer of torch-optimizer that trains from gradients (Adahessian from a
    create_graph backward), Lookahead around SGD, and Shampoo's matrix roots."""
    import torch_optimizer as to
    makers = {
        "a2gradexp": lambda p: to.A2GradExp(p, lips=5.0), "a2graduni": lambda p: to.A2GradUni(p),
        "accsgd": lambda p: to.AccSGD(p, lr=1e-2), "adabelief": lambda p: to.AdaBelief(p, lr=1e-2),
        "adabound": lambda p: to.AdaBound(p, lr=1e-2), "adamod": lambda p: to.AdaMod(p, lr=1e-2),
        "adafactor": lambda p: to.Adafactor(p, lr=1e-2), "adamp": lambda p: to.AdamP(p, lr=1e-2),
        "aggmo": lambda p: to.AggMo(p, lr=1e-2), "apollo": lambda p: to.Apollo(p, lr=1e-2),
        "diffgrad": lambda p: to.DiffGrad(p, lr=1e-2), "lamb": lambda p: to.Lamb(p, lr=1e-2),
        "madgrad": lambda p: to.MADGRAD(p, lr=1e-2), "novograd": lambda p: to.NovoGrad(p, lr=1e-2),
        "pid": lambda p: to.PID(p, lr=1e-2), "qhadam": lambda p: to.QHAdam(p, lr=1e-2),
        "qhm": lambda p: to.QHM(p, lr=1e-2), "radam": lambda p: to.RAdam(p, lr=1e-2),
        "ranger": lambda p: to.Ranger(p, lr=1e-2, k=3),
        "rangerqh": lambda p: to.RangerQH(p, lr=1e-2),
        "rangerva": lambda p: to.RangerVA(p, lr=1e-2), "sgdp": lambda p: to.SGDP(p, lr=1e-2),
        "sgdw": lambda p: to.SGDW(p, lr=1e-2, momentum=0.9),
        "swats": lambda p: to.SWATS(p, lr=1e-2),
        "shampoo": lambda p: to.Shampoo(p, lr=1e-3, epsilon=1e-2, update_freq=2),
        "yogi": lambda p: to.Yogi(p, lr=1e-2),
        "lookahead": lambda p: to.Lookahead(torch.optim.SGD(p, lr=5e-2), k=3, alpha=0.5),
    }
    res = {name: _train(make) for name, make in makers.items()}
    # Adahessian's Hutchinson probes come from torch.randint_like (torch's generator, a stream
    # ptcore does not reproduce): drawn from NumPy here, the same signs in both runs
    rng = np.random.default_rng(7)
    randint_like = torch.randint_like
    torch.randint_like = lambda p, high, **kw: torch.from_numpy(
        rng.integers(0, high, tuple(p.shape)).astype(np.float32))
    try:
        res["adahessian"] = _train(lambda p: to.Adahessian(p, lr=1e-1), create_graph=True)
    finally:
        torch.randint_like = randint_like
    return res


CASES = {"schedulefree": schedulefree_case, "torch_optimizer": torch_optimizer_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
