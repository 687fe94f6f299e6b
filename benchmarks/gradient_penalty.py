"""Gradient-penalty training steps (WGAN-GP, R1): ptcore vs PyTorch per step.

    python benchmarks/gradient_penalty.py

1 thread.  A critic's step with a penalty on the gradient of its output with
respect to its input: ``g = autograd.grad(D(x).sum(), x, create_graph=True)``,
then ``(D(x).mean() + 10 * ((|g| - 1) ** 2).mean()).backward()``.  The first
backward asks for the input's gradient only: torch's kernels (and ptcore's
conv and mm/addmm backward, through the pass's output mask) compute no weight
gradient on that way.  Critics: DCGAN's 32x32 conv critic (batch 32), an
MLP critic (784-512-256-1, batch 64), and both with LayerNorm after each hidden
layer, as WGAN-GP critics use it instead of BatchNorm (ptcore's layer norm and
mul/add backward skip the parameters' gradients the same way).  Paired
medians, thread CPU time.

    python benchmarks/gradient_penalty.py --mask-off

times ptcore with every backward computing every gradient (the output mask
read as None), for the mask's share of the ratio.
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


def _ln_conv_critic(nn):
    return nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(64, 128, 4, 2, 1), nn.LayerNorm([128, 8, 8]), nn.LeakyReLU(0.2),
                         nn.Conv2d(128, 256, 4, 2, 1), nn.LayerNorm([256, 4, 4]), nn.LeakyReLU(0.2),
                         nn.Flatten(), nn.Linear(256 * 16, 1))


def _ln_mlp_critic(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.LayerNorm(512), nn.LeakyReLU(0.2),
                         nn.Linear(512, 256), nn.LayerNorm(256), nn.LeakyReLU(0.2),
                         nn.Linear(256, 1))


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
    ln_conv, ln_mlp = _ln_conv_critic(L.nn), _ln_mlp_critic(L.nn)
    img, flat = L.randn(32, 3, 32, 32, generator=g), L.randn(64, 784, generator=g)
    return {
        "WGAN-GP conv critic 32x32 b32": (_penalty_step(L, conv, img), 1),
        "WGAN-GP MLP critic 784 b64": (_penalty_step(L, mlp, flat), 2),
        "WGAN-GP LayerNorm conv critic b32": (_penalty_step(L, ln_conv, img), 1),
        "WGAN-GP LayerNorm MLP critic b64": (_penalty_step(L, ln_mlp, flat), 2),
    }


def _mask_off():
    """Every backward formula of ptcore reads the pass's output mask as None."""
    import ptcore.autograd.graph as G
    mask = G.current_output_mask

    def off(*a):
        return None
    for m in list(sys.modules.values()):
        if getattr(m, "current_output_mask", None) is mask:
            m.current_output_mask = off
    G.task_output_mask = off            # (autograd.function.output_mask's source)


if __name__ == "__main__":
    if "--mask-off" in sys.argv:
        sys.argv.remove("--mask-off")
        import ptcore  # noqa: F401  (its formula modules, to patch)
        _mask_off()
    sys.exit(compare_main(cases, "gradient-penalty step"))
