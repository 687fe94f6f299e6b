"""nn.functional activations, float32 and float64: ptcore vs PyTorch on the same
data, timed in alternation (target: ratio ptcore/PyTorch <= 1.0).

Each activation on 65536 contiguous values (standard normal times 3), one
thread: the forward alone, then forward and backward (a gradient of ones
into a leaf).  ELU, SELU, CELU, softplus, mish and float64 GELU (exact and
tanh) are their formulas over the vector loops of expm1/exp/log1p/tanh/erf,
256 values at a time (_ew.pyx.tp STAGED_EXPR); ELU's, softplus's, SiLU's and
GELU's backward one pass each (_nn_kernels.pyx).  NumPy has no such functions: its column is
empty.

A second table times ``f(x).sum().backward()`` on a float32 (256, 512) leaf
for activations and losses whose backward is its own kernel (hardswish,
leaky_relu, glu, sigmoid, silu, BCE with logits, KL divergence).

Usage: python benchmarks/activations.py [--threads N] [--quick] [--only SUBSTRING]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import parse_bench_args  # noqa: E402

ARGS = parse_bench_args(__doc__)

import numpy as np  # noqa: E402

from _harness import paired_median_times, print_cpu, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402

# name -> f(F, x) with F the library's nn.functional
ACTS = {
    "elu": lambda F, x: F.elu(x),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 1.3),
    "softplus": lambda F, x: F.softplus(x),
    "mish": lambda F, x: F.mish(x),
    "silu": lambda F, x: F.silu(x),
    "gelu": lambda F, x: F.gelu(x),
    "gelu (tanh)": lambda F, x: F.gelu(x, approximate="tanh"),
    "tanh": lambda F, x: F.tanh(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
}

# name -> f(F, lib, x): forward to a scalar-reducible tensor, on a (256, 512) leaf
TRAIN = {
    "hardswish": lambda F, lib, x: F.hardswish(x),
    "leaky_relu": lambda F, lib, x: F.leaky_relu(x),
    "glu (dim 1)": lambda F, lib, x: F.glu(x, 1),
    "sigmoid": lambda F, lib, x: lib.sigmoid(x),
    "silu": lambda F, lib, x: F.silu(x),
    "bce_with_logits": lambda F, lib, x: F.binary_cross_entropy_with_logits(
        x, (x.detach() > 0).float()),
    "kl_div (batchmean)": lambda F, lib, x: F.kl_div(
        F.log_softmax(x, 1), F.softmax(x.detach(), 1), reduction="batchmean"),
}


def main():
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(ARGS.threads)
    ptcore.set_num_threads(ARGS.threads)
    print_cpu()
    n = 4096 if ARGS.quick else 65536
    rng = np.random.default_rng(0)
    base = rng.standard_normal(n) * 3
    for dtype in (np.float32, np.float64):
        x = base.astype(dtype)
        fwd, both = [], []
        for name, f in ACTS.items():
            if ARGS.only and ARGS.only not in name:
                continue
            fwd.append(_row(name, f, torch, x, False))
            both.append(_row(name, f, torch, x, True))
        title = f"{np.dtype(dtype).name} activations, {n} values, {ARGS.threads} thread(s)"
        print_table(title + ": forward", fwd)
        print_table(title + ": forward and backward", both)
    rows = [_train_row(name, f, torch, rng) for name, f in TRAIN.items()
            if not ARGS.only or ARGS.only in name]
    print_table(f"float32 (256, 512): f(x).sum().backward(), {ARGS.threads} thread(s)", rows)


def _train_row(name, f, torch, rng):
    x = rng.standard_normal((256, 512)).astype(np.float32)
    import ptcore.nn.functional as PF
    xp = ptcore.from_numpy(x).requires_grad_()

    def run_p():
        f(PF, ptcore, xp).sum().backward()
        xp.grad = None
    run_t = None
    if torch is not None:
        xt = torch.from_numpy(x).requires_grad_()

        def run_t():
            f(torch.nn.functional, torch, xt).sum().backward()
            xt.grad = None
    p, t, _ = paired_median_times([run_p, run_t, None])
    return (name, p, t, None)


def _row(name, f, torch, x, backward):
    import ptcore.nn.functional as PF
    xp = ptcore.from_numpy(x)
    gp = ptcore.ones(x.shape[0], dtype=xp.dtype)
    if backward:
        xp.requires_grad_()

        def run_p():
            f(PF, xp).backward(gp)
            xp.grad = None
    else:
        def run_p():
            f(PF, xp)
    run_t = None
    if torch is not None:
        TF = torch.nn.functional
        xt = torch.from_numpy(x)
        gt = torch.ones(x.shape[0], dtype=xt.dtype)
        if backward:
            xt.requires_grad_()

            def run_t():
                f(TF, xt).backward(gt)
                xt.grad = None
        else:
            def run_t():
                f(TF, xt)
    p, t, _ = paired_median_times([run_p, run_t, None])
    return (name, p, t, None)


if __name__ == "__main__":
    main()
