"""Gradient-penalty training steps (WGAN-GP, R1): ptcore vs PyTorch per step.

    python benchmarks/gradient_penalty.py

1 thread.  A critic's step with a penalty on the gradient of its output with
respect to its input: ``g = autograd.grad(D(x).sum(), x, create_graph=True)``,
then ``(D(x).mean() + 10 * ((|g| - 1) ** 2).mean()).backward()``.  The first
backward asks for the input's gradient only: torch's kernels (and ptcore's
conv and mm/addmm backward, through the pass's output mask) compute no weight
gradient on that way.  Critics: DCGAN's 32x32 conv critic (batch 32) and an
MLP critic (784-512-256-1, batch 64).  Paired medians, thread CPU time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402


def _conv_critic(nn):
    return nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Flatten(), nn.Linear(256 * 16, 1))


def _mlp_critic(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.LeakyReLU(0.2), nn.Linear(512, 256),
                         nn.LeakyReLU(0.2), nn.Linear(256, 1))


def _penalty_step(L, D, x):
    def step():
        xi = x.clone().requires_grad_(True)
        out = D(xi)
        g, = L.autograd.grad(out.sum(), xi, create_graph=True)
        loss = out.mean() + 10 * ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()
        D.zero_grad()
        loss.backward()
    return step


def cases(L):
    L.manual_seed(0)
    g = L.Generator().manual_seed(0)
    conv, mlp = _conv_critic(L.nn), _mlp_critic(L.nn)
    return {
        "WGAN-GP conv critic 32x32 b32": (_penalty_step(L, conv, L.randn(32, 3, 32, 32, generator=g)), 1),
        "WGAN-GP MLP critic 784 b64": (_penalty_step(L, mlp, L.randn(64, 784, generator=g)), 2),
    }


if __name__ == "__main__":
    sys.exit(compare_main(cases, "gradient-penalty step"))
