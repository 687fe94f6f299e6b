"""Convolution/pooling benchmark: ptcore vs PyTorch, one thread by default.

    python benchmarks/nn_conv.py [--threads N] [--quick]

Cases (float32, batch 32, 32x32 images, 3x3 kernels, padding 1):
conv2d 3->64 and 64->64 forward and forward+backward, max_pool2d 2x2 on
(32, 64, 32, 32) forward and forward+backward, 1-d max/average/global-average
pooling of a (8, 16, 128) batch without grad and max_pool1d forward+backward, and a
LeNet-style CNN training step (batch 64, 1x28x28, plain SGD).
Forward+backward is ``y.backward(grad)`` through ptcore's autograd.  Targets (ratio ptcore/torch): conv <= 1.5, max_pool2d
fwd+bwd <= 1.0, LeNet step <= 1.2.
"""
import argparse
import os
import sys

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--threads", type=int, default=1)
_ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
_args = _ap.parse_args()
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_v] = str(_args.threads)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
import ptcore.nn as pnn  # noqa: E402
import ptcore.nn.functional as PF  # noqa: E402
from _harness import paired_median_times, print_table, torch_with_threads  # noqa: E402


def _fn_fwd_bwd(fn, gy):
    """Run ``fn`` and backpropagate ``gy`` with ptcore's autograd."""
    def run():
        y = fn()
        y.backward(gy)
    return run


def main():
    torch = torch_with_threads(_args.threads)
    repeat = 3 if _args.quick else 9
    rng = np.random.default_rng(0)
    rows = []

    def pair(name, fp, ft):
        # ptcore and torch timed in alternation: load drift biases neither
        rows.append((name, *paired_median_times([fp, ft], repeat=repeat), None))

    for cin in (3, 64):
        x = rng.standard_normal((32, cin, 32, 32)).astype(np.float32)
        w = (rng.standard_normal((64, cin, 3, 3)) * 0.1).astype(np.float32)
        b = rng.standard_normal(64).astype(np.float32)
        gy = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
        px, pw, pb, pgy = (ptcore.from_numpy(a) for a in (x, w, b, gy))
        pxg, pwg, pbg = (ptcore.from_numpy(a).requires_grad_() for a in (x, w, b))
        tt_f = tt_b = None
        if torch is not None:
            tx, tw, tb = (torch.from_numpy(a) for a in (x, w, b))
            txg, twg, tbg = (torch.from_numpy(a).requires_grad_() for a in (x, w, b))
            tgy = torch.from_numpy(gy)

            def tt_f():
                torch.nn.functional.conv2d(tx, tw, tb, padding=1)

            def tt_b():
                torch.nn.functional.conv2d(txg, twg, tbg, padding=1).backward(tgy)
        pair(f"conv2d {cin}->64 fwd", lambda: PF.conv2d(px, pw, pb, padding=1), tt_f)
        pair(f"conv2d {cin}->64 fwd+bwd",
             _fn_fwd_bwd(lambda: PF.conv2d(pxg, pwg, pbg, padding=1), pgy), tt_b)

    x = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    gy = rng.standard_normal((32, 64, 16, 16)).astype(np.float32)
    px, pgy = ptcore.from_numpy(x), ptcore.from_numpy(gy)
    pxg = ptcore.from_numpy(x).requires_grad_()
    tp_f = tp_b = None
    if torch is not None:
        tx = torch.from_numpy(x)
        txg = torch.from_numpy(x).requires_grad_()
        tgy = torch.from_numpy(gy)

        def tp_f():
            torch.nn.functional.max_pool2d(tx, 2)

        def tp_b():
            torch.nn.functional.max_pool2d(txg, 2).backward(tgy)
    pair("max_pool2d 2x2 fwd", lambda: PF.max_pool2d(px, 2), tp_f)
    pair("max_pool2d 2x2 fwd+bwd", _fn_fwd_bwd(lambda: PF.max_pool2d(pxg, 2), pgy), tp_b)

    # 1-d pooling of a (8, 16, 128) signal batch, no grad (inference) and fwd+bwd
    x1 = rng.standard_normal((8, 16, 128)).astype(np.float32)
    gy1 = rng.standard_normal((8, 16, 64)).astype(np.float32)
    p1, p1g, pgy1 = ptcore.from_numpy(x1), ptcore.from_numpy(x1).requires_grad_(), \
        ptcore.from_numpy(gy1)
    t1 = t1g = tgy1 = None
    if torch is not None:
        t1, t1g = torch.from_numpy(x1), torch.from_numpy(x1).requires_grad_()
        tgy1 = torch.from_numpy(gy1)
    TF = torch.nn.functional if torch is not None else None
    for name, pf, tf in (
            ("max_pool1d k2", lambda a: PF.max_pool1d(a, 2),
             lambda a: TF.max_pool1d(a, 2)),
            ("max_pool1d k3 s1 p1", lambda a: PF.max_pool1d(a, 3, 1, 1),
             lambda a: TF.max_pool1d(a, 3, 1, 1)),
            ("avg_pool1d k2", lambda a: PF.avg_pool1d(a, 2), lambda a: TF.avg_pool1d(a, 2)),
            ("adaptive_avg_pool1d 1", lambda a: PF.adaptive_avg_pool1d(a, 1),
             lambda a: TF.adaptive_avg_pool1d(a, 1))):
        pair(f"{name} (8,16,128) fwd", lambda pf=pf: pf(p1),
             (lambda tf=tf: tf(t1)) if torch is not None else None)
    pair("max_pool1d k2 (8,16,128) fwd+bwd",
         _fn_fwd_bwd(lambda: PF.max_pool1d(p1g, 2), pgy1),
         (lambda: TF.max_pool1d(t1g, 2).backward(tgy1)) if torch is not None else None)

    def lenet(nn):
        return nn.Sequential(
            nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))

    xb = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    pm = lenet(pnn)
    pxb = ptcore.from_numpy(xb)

    def pstep():
        for p in pm.parameters():
            p.grad = None
        loss = (pm(pxb) ** 2).mean()
        loss.backward()
        with ptcore.no_grad():
            for p in pm.parameters():
                p.sub_(p.grad * 0.01)
    tstep2 = None
    if torch is not None:
        tm = lenet(torch.nn)
        txb = torch.from_numpy(xb)

        def tstep2():
            for p in tm.parameters():
                p.grad = None
            loss = (tm(txb) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in tm.parameters():
                    p.sub_(p.grad * 0.01)
    pair("LeNet train step b64", pstep, tstep2)

    print_table(f"nn conv/pool, float32, {_args.threads} thread(s)", rows)


if __name__ == "__main__":
    main()
