"""Autograd overhead: a chain of 100 adds/muls on (1,)-shaped tensors plus
backward, in microseconds per op, against PyTorch in the same run; also the
forward-only recording cost and the no-grad per-op cost.

    python benchmarks/autograd.py [--sparse-alive]  (a small sparse tensor lives meanwhile)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _harness import keep_sparse_alive, paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402

torch = try_import_torch()
N = 100


def chain_tensor(lib, x, w):
    y = x
    for i in range(N // 2):
        y = y * w
        y = y + x
    return y


def chain_scalar(lib, x):
    y = x
    for i in range(N // 2):
        y = y * 1.0001
        y = y + 0.5
    return y


def cases(lib):
    x = lib.ones(1, requires_grad=True)
    w = lib.full((1,), 0.999, requires_grad=True)
    xn = lib.ones(1)
    wn = lib.full((1,), 0.999)

    def tensor_bw():
        chain_tensor(lib, x, w).backward()

    def scalar_bw():
        chain_scalar(lib, x).backward()

    def fwd_record():
        chain_tensor(lib, x, w)

    def fwd_nograd():
        chain_tensor(lib, xn, wn)

    def mlp_like():
        # a matmul-heavy step on tiny shapes: autograd bookkeeping dominates
        pass
    return {"100 ops + backward, tensor operands": tensor_bw,
            "100 ops + backward, Python scalars": scalar_bw,
            "100 ops forward, recording": fwd_record,
            "100 ops forward, no grad": fwd_nograd}


def main():
    # --sparse-alive: a small sparse tensor of each library lives while the cases run
    kept = keep_sparse_alive(ptcore, torch) if "--sparse-alive" in sys.argv else []  # noqa: F841
    ptcore.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    pc = cases(ptcore)
    tc = cases(torch) if torch is not None else {}
    rows = []
    for name, fn in pc.items():
        # ptcore and torch alternate (paired): load drift biases neither
        p, t = paired_median_times([fn, tc.get(name)], repeat=15)
        rows.append((name + " (per op)", p / N, None if t is None else t / N, None))
    print_table("autograd: per-op cost (1 thread)", rows)


if __name__ == "__main__":
    main()
