"""Forward + backward of everyday small-batch calls (losses, activations,
normalisations, indexing, views): ptcore vs PyTorch per call, sorted by
ratio so the worst come first.

    python benchmarks/grad_calls.py [--layers]

A second table (``--layers``: that table only) times layer-sized lookups,
reductions and joins: EmbeddingBag (forward only), Embedding's dense weight
gradient, mean, adaptive_avg_pool2d, cat, stack, index_select, the scans
logcumsumexp and cummax.
1 thread; a (32, 64) float32 batch that requires grad, where the autograd
recording and the backward's per-node cost show.  Each call builds its
graph and runs ``backward()`` on a scalar.  Paired medians (ptcore and torch
alternate), thread CPU time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_calls, compare_main  # noqa: E402



def cases(L):
    F = L.nn.functional
    g = L.Generator().manual_seed(0)
    x = L.randn(32, 64, generator=g).requires_grad_()
    t = L.randn(32, 64, generator=g)
    tb = (t > 0).to(x.dtype)
    lab = L.randint(0, 64, (32,), generator=g)
    w = L.randn(64, 64, generator=g).requires_grad_()
    b = L.randn(64, generator=g).requires_grad_()
    ln_w, ln_b = L.ones(64).requires_grad_(), L.zeros(64).requires_grad_()
    emb = L.randn(100, 32, generator=g).requires_grad_()
    ids = L.randint(0, 100, (8, 12), generator=g)
    idx = L.randint(0, 32, (16,), generator=g)
    return {
        "mse_loss": lambda: F.mse_loss(x, t),
        "smooth_l1_loss": lambda: F.smooth_l1_loss(x, t),
        "huber_loss": lambda: F.huber_loss(x, t),
        "l1_loss": lambda: F.l1_loss(x, t),
        "bce_with_logits": lambda: F.binary_cross_entropy_with_logits(x, tb),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(x.sigmoid(), tb),
        "cross_entropy": lambda: F.cross_entropy(x, lab),
        "log_softmax + nll_loss": lambda: F.nll_loss(F.log_softmax(x, 1), lab),
        "kl_div": lambda: F.kl_div(F.log_softmax(x, 1), F.softmax(t, 1), reduction="batchmean"),
        "relu": lambda: F.relu(x).sum(),
        "gelu": lambda: F.gelu(x).sum(),
        "silu": lambda: F.silu(x).sum(),
        "softmax": lambda: F.softmax(x, 1).pow(2).sum(),
        "layer_norm": lambda: F.layer_norm(x, (64,), ln_w, ln_b).pow(2).sum(),
        "linear": lambda: F.linear(x, w, b).sum(),
        "embedding": lambda: F.embedding(ids, emb).sum(),
        "x[idx]": lambda: x[idx].sum(),
        "gather": lambda: x.gather(1, lab.view(32, 1)).sum(),
        "max(dim)": lambda: x.max(1)[0].sum(),
        "unbind + stack": lambda: L.stack(x.unbind(0)).sum(),
        "chunk": lambda: sum(c.sum() for c in x.chunk(4, 1)),
        "normalize": lambda: F.normalize(x).sum(),
    }


def layer_cases(L):
    """Layer-sized calls, each a full step (forward, and ``.sum().backward()``
    where named "fb")."""
    F = L.nn.functional
    g = L.Generator().manual_seed(0)
    bag = L.nn.EmbeddingBag(10000, 64, mode="mean")
    emb = L.nn.Embedding(10000, 128)
    tok = L.randint(0, 10000, (32, 64), generator=g)
    x = L.randn(256, 512, generator=g).requires_grad_()
    img = L.randn(16, 32, 32, 32, generator=g).requires_grad_()
    idx = L.randint(0, 256, (128,), generator=g)

    def fb(f):
        return lambda: f().sum().backward()
    return {
        "EmbeddingBag(10000, 64, mean) (32, 64) forward": (lambda: bag(tok), 20),
        "Embedding(10000, 128) (32, 64) fb": (fb(lambda: emb(tok)), 5),
        "x.mean(1) (256, 512) fb": (fb(lambda: x.mean(1)), 10),
        "adaptive_avg_pool2d(., 1) (16, 32, 32, 32) fb": (fb(lambda: F.adaptive_avg_pool2d(img, 1)), 5),
        "cat([x, x], 1) (256, 512) fb": (fb(lambda: L.cat([x, x], 1)), 10),
        "stack([x, x]) (256, 512) fb": (fb(lambda: L.stack([x, x])), 10),
        "x.index_select(0, idx) (256, 512) fb": (fb(lambda: x.index_select(0, idx)), 10),
        "x.logcumsumexp(1) (256, 512) fb": (fb(lambda: x.logcumsumexp(1)), 5),
        "x.cummax(1).values (256, 512) fb": (fb(lambda: x.cummax(1).values), 5),
    }


def main():
    if "--layers" in sys.argv[1:]:
        return compare_main(layer_cases, "layer-sized calls")
    rc = compare_main(lambda L: {k: (f, 100) for k, f in cases(L).items()}, "forward + backward",
                      wrap=lambda fn: (lambda: fn().backward()))
    if rc == 0:
        import ptcore
        import torch
        compare_calls(layer_cases(ptcore), layer_cases(torch), "layer-sized calls")
    return rc


if __name__ == "__main__":
    sys.exit(main())
