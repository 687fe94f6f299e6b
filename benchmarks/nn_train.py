"""Training-step benchmark: MLP 784-512-512-10 (batch 128) with Adam and
cross-entropy, ptcore vs PyTorch in the same run, one thread.

    python benchmarks/nn_train.py [--threads N]

Target (ratio ptcore/torch): MLP step <= 1.0.  The LeNet step and the
conv/pool cases are in benchmarks/nn_conv.py.
"""
import argparse
import os
import sys

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--threads", type=int, default=1)
_args = _ap.parse_known_args()[0]     # also imported by dispatch.py (its own options)
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_v] = str(_args.threads)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

torch = try_import_torch()


def make(lib, seed=0):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.05))
    x = lib.from_numpy(rng.standard_normal((128, 784)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, 128).astype(np.int64))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model


def main():
    ptcore.set_num_threads(_args.threads)
    if torch is not None:
        torch.set_num_threads(_args.threads)
    pstep, pm = make(ptcore)
    rows = []
    tstep = make(torch)[0] if torch is not None else None
    # same trajectory check (first steps, float32 tolerance)
    if torch is not None:
        p2, _ = make(ptcore, 1)
        t2, _ = make(torch, 1)
        lp = [float(p2()) for _ in range(3)]
        lt = [float(t2()) for _ in range(3)]
        print("first losses ptcore", [f"{v:.5f}" for v in lp], "torch", [f"{v:.5f}" for v in lt])
    tp, tt = paired_median_times([pstep, tstep], repeat=15)
    rows.append(("MLP 784-512-512-10 b128 Adam step", tp, tt, None))
    print_table(f"nn training step ({_args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
