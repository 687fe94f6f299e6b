"""A small GPT's inference, ptcore vs PyTorch: the forward pass of a prompt,
a generation loop (nanoGPT's ``generate``: the whole sequence again for each
new token, top-k sampling) and the per-call costs it is made of.  Small
models are where per-call overhead shows: at these sizes every product is a
few rows against a weight matrix.

    python benchmarks/decode.py [--threads N]

Both libraries run the same model (torch's parameters copied from ptcore's)
under ``no_grad`` at 1 thread by default; medians of alternating samples
(``paired_median_times``).  ``compile`` rows: ``lib.compile(model)`` of the
forward at a fixed prompt length.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import paired_median_times, print_cpu, try_import_torch  # noqa: E402

VOCAB, BLOCK, LAYERS, HEADS, EMBD = 256, 64, 2, 4, 64


def model_classes(lib):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(EMBD, 3 * EMBD, bias=False)
            self.c_proj = nn.Linear(EMBD, EMBD, bias=False)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(EMBD, dim=2)
            q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(EMBD, bias=False)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(EMBD, bias=False)
            self.fc = nn.Linear(EMBD, 4 * EMBD, bias=False)
            self.proj = nn.Linear(4 * EMBD, EMBD, bias=False)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.proj(F.gelu(self.fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, EMBD)
            self.wpe = nn.Embedding(BLOCK, EMBD)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(EMBD, bias=False)
            self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)

        def forward(self, idx):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x)[:, [-1], :])

    return GPT


def generate(lib, model, idx, n, top_k=10):
    F = lib.nn.functional
    for _ in range(n):
        cond = idx if idx.size(1) <= BLOCK else idx[:, -BLOCK:]
        logits = model(cond)[:, -1, :]
        v, _ = lib.topk(logits, min(top_k, logits.size(-1)))
        logits[logits < v[:, [-1]]] = -float("inf")
        probs = F.softmax(logits, dim=-1)
        idx = lib.cat((idx, lib.multinomial(probs, num_samples=1)), dim=1)
    return idx


def build(lib, src=None):
    lib.manual_seed(0)
    m = model_classes(lib)().eval()
    if src is not None:
        import numpy as np
        with lib.no_grad():
            for p, q in zip(m.parameters(), src.parameters()):
                p.copy_(lib.from_numpy(np.ascontiguousarray(q.detach().numpy())))
    return m


def calls(lib):
    """The per-call rows: a decoder's calls at prompt length 5."""
    F = lib.nn.functional
    x = lib.randn(1, 5, EMBD)
    w, w3 = lib.randn(EMBD, EMBD), lib.randn(3 * EMBD, EMBD)
    q = lib.randn(1, 5, HEADS, EMBD // HEADS).transpose(1, 2)
    kt = q.transpose(-2, -1)
    g = lib.randn(EMBD)
    logits = lib.randn(1, 5, VOCAB)
    return {
        "linear (1,5,64)->192 no bias": lambda: F.linear(x, w3),
        "linear (5,64)->64 bias": lambda: F.linear(x[0], w, g),
        "q @ k^T (1,4,5,16)": lambda: q @ kt,
        "sdpa causal (1,4,5,16)": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "layer_norm (1,5,64)": lambda: F.layer_norm(x, (EMBD,), g),
        "gelu (1,5,256)": lambda: F.gelu(logits),
        "arange(0, 5, dtype=long)": lambda: lib.arange(0, 5, dtype=lib.long),
        "logits[:, [-1], :]": lambda: logits[:, [-1], :],
        "topk 10 of 256": lambda: lib.topk(logits[0], 10),
        "multinomial 1 of 256": lambda: lib.multinomial(logits[0, :1].softmax(-1), 1),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tokens", type=int, default=40)
    args = p.parse_args(argv)
    import ptcore
    torch = try_import_torch()
    if torch is None:
        print("needs torch for the comparison")
        return 1
    print_cpu()
    ptcore.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    pm = build(ptcore)
    tm = build(torch, pm)
    pc, tc = ptcore.compile(pm), torch.compile(tm)
    rows = []
    with ptcore.no_grad(), torch.no_grad():
        prompt_p = ptcore.zeros((1, 8), dtype=ptcore.long)
        prompt_t = torch.zeros((1, 8), dtype=torch.long)
        yp, yt = pm(prompt_p), tm(prompt_t)
        diff = (yp - ptcore.from_numpy(yt.numpy())).abs().max().item()
        for _ in range(3):
            pc(prompt_p), tc(prompt_t)
        fns = [lambda: pm(prompt_p), lambda: tm(prompt_t), lambda: pc(prompt_p),
               lambda: tc(prompt_t)]
        t = paired_median_times(fns, repeat=15, min_time=0.05)
        rows.append(("forward, prompt of 8", t[0], t[1]))
        rows.append(("compiled forward, prompt of 8", t[2], t[3]))

        def gen(lib, m):
            start = lib.zeros((1, 1), dtype=lib.long)
            return lambda: generate(lib, m, start, args.tokens)
        t = paired_median_times([gen(ptcore, pm), gen(torch, tm)], repeat=9, min_time=0.05)
        rows.append((f"generate {args.tokens} tokens", t[0], t[1]))
        pcs, tcs = calls(ptcore), calls(torch)
        names = list(pcs)
        t = paired_median_times([f for n in names for f in (pcs[n], tcs[n])], repeat=15,
                                min_time=0.02)
        for i, n in enumerate(names):
            rows.append((n, t[2 * i], t[2 * i + 1]))
    print(f"threads {args.threads}; model {LAYERS} layers x {HEADS} heads x {EMBD}, vocab "
          f"{VOCAB}; logits max |ptcore - torch| {diff:.1e}")
    print("| call | ptcore | torch | ratio |")
    print("|---|---|---|---|")
    for n, a, b in rows:
        unit, f = ("ms", 1e3) if max(a, b) > 1e-3 else ("us", 1e6)
        print(f"| {n} | {a * f:.2f} {unit} | {b * f:.2f} {unit} | {a / b:.2f}x |")
    ratios = sorted(a / b for _, a, b in rows)
    print(f"median ratio {ratios[len(ratios) // 2]:.2f}x (ptcore / torch; lower is better)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
