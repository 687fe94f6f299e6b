"""Elementwise losses over a 1e5-element batch: ptcore vs PyTorch per call,
forward alone and forward + backward, sorted by ratio so the worst come first.

    python benchmarks/nn_losses.py

1 thread; float32 and float64 (100000,) input and target, 'mean' unless the
row says otherwise.  Where grad_calls.py's (32, 64) batch shows per-call
overhead, this size shows the kernels' throughput.  Paired medians (ptcore
and torch alternate), thread CPU time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402

N = 100_000


def cases(L):
    F = L.nn.functional
    g = L.Generator().manual_seed(0)
    out = {}
    for dt, tag in ((L.float32, "f32"), (L.float64, "f64")):
        x = L.randn(N, generator=g, dtype=dt)
        t = L.randn(N, generator=g, dtype=dt)
        xg = x.clone().requires_grad_()
        p = L.rand(N, generator=g, dtype=dt) * 0.98 + 0.01
        tb = (t > 0).to(dt)
        fwd = {
            "mse_loss": lambda x=x, t=t: F.mse_loss(x, t),
            "l1_loss": lambda x=x, t=t: F.l1_loss(x, t),
            "smooth_l1_loss": lambda x=x, t=t: F.smooth_l1_loss(x, t),
            "smooth_l1_loss beta=0.5": lambda x=x, t=t: F.smooth_l1_loss(x, t, beta=0.5),
            "smooth_l1_loss 'none'": lambda x=x, t=t: F.smooth_l1_loss(x, t, reduction="none"),
            "huber_loss": lambda x=x, t=t: F.huber_loss(x, t),
            "huber_loss delta=2 'sum'": lambda x=x, t=t: F.huber_loss(x, t, delta=2.0,
                                                                      reduction="sum"),
            "bce": lambda p=p, tb=tb: F.binary_cross_entropy(p, tb),
            "bce_with_logits": lambda x=x, tb=tb: F.binary_cross_entropy_with_logits(x, tb),
        }
        for k, f in fwd.items():
            out[f"{k} {tag}"] = (f, 50)
        bwd = {
            "mse_loss": lambda: F.mse_loss(xg, t),
            "smooth_l1_loss": lambda: F.smooth_l1_loss(xg, t),
            "smooth_l1_loss beta=0.5": lambda: F.smooth_l1_loss(xg, t, beta=0.5),
            "huber_loss": lambda: F.huber_loss(xg, t),
            "huber_loss 'none'": lambda: F.huber_loss(xg, t, reduction="none").sum(),
        }
        for k, f in bwd.items():
            out[f"{k} {tag} +backward"] = ((lambda f=f: f().backward()), 30)
    return out


def main():
    return compare_main(cases, f"({N},) losses")


if __name__ == "__main__":
    sys.exit(main())
