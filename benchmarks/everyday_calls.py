"""Everyday calls of real scripts, one at a time: ptcore vs PyTorch per call
(data loading, optimizer steps, module calls, indexing, small reductions,
conversions), sorted by ratio so the worst come first.

    python benchmarks/everyday_calls.py

1 thread; small sizes, where per-call overhead shows.  Paired medians
(ptcore and torch alternate), thread CPU time.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402



def cases(L):
    nn = L.nn
    X = L.randn(512, 20); Y = L.randint(0, 3, (512,))
    ds = L.utils.data.TensorDataset(X, Y)
    dl = L.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
    m = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    opt = L.optim.Adam(m.parameters(), 1e-3)
    big = nn.Sequential(*[nn.Linear(32, 32) for _ in range(30)])
    bopt = L.optim.SGD(big.parameters(), 0.1, momentum=0.9)
    for p in big.parameters(): p.grad = L.zeros_like(p)
    x = L.randn(100, 100); idx = L.randint(0, 100, (50,)); mask = x > 0
    # a Hugging Face mask builder's index: (batch, 1, 1, 1) and (1, 1, 1, kv) positions
    pad = L.ones(2, 64, dtype=L.bool)
    b_idx = L.arange(2)[:, None, None, None]; kv_idx = L.arange(64)[None, None, None, :]
    scores = L.randn(2, 4, 64, 64); amask = (L.rand(2, 1, 1, 64) > 0.2)
    small = [L.randn(3) for _ in range(100)]
    t = L.randn(10)
    def epoch():
        for xb, yb in dl:
            loss = nn.functional.cross_entropy(m(xb), yb)
            opt.zero_grad(); loss.backward(); opt.step()
    return {
        "dataloader epoch train (8 batches)": (epoch, 20),
        "dataloader iterate only": (lambda: [b for b in dl], 50),
        "sgd momentum step 60 params": (bopt.step, 200),
        "zero_grad 60 params": (bopt.zero_grad, 500),
        "state_dict 60 params": (big.state_dict, 500),
        "module call 30 linears": (lambda: big(L.randn(4, 32)), 200),
        "x[idx]": (lambda: x[idx], 5000),
        "x[mask]": (lambda: x[mask], 2000),
        "x[:, 3]": (lambda: x[:, 3], 20000),
        "x[idx, idx]": (lambda: x[idx, idx], 5000),
        "x[:, idx]": (lambda: x[:, idx], 5000),
        "pad_mask[b, kv]": (lambda: pad[b_idx, kv_idx], 5000),
        "scores.masked_fill(mask, -inf)": (lambda: scores.masked_fill(amask, float("-inf")), 2000),
        "x.masked_fill_(mask, 0.0)": (lambda: x.masked_fill_(mask, 0.0), 5000),
        "cat 100 small": (lambda: L.cat(small), 2000),
        "stack 100 small": (lambda: L.stack(small), 2000),
        "item": (lambda: t[0].item(), 20000),
        "tolist 10": (lambda: t.tolist(), 20000),
        "to float64": (lambda: x.double(), 5000),
        "argmax dim1": (lambda: x.argmax(1), 5000),
        "sum": (lambda: x.sum(), 20000),
        "mean dim0": (lambda: x.mean(0), 5000),
        "softmax": (lambda: x.softmax(-1), 5000),
        "topk": (lambda: x.topk(5, dim=1), 2000),
        "sort": (lambda: x.sort(dim=1), 1000),
        "unique": (lambda: L.unique(idx), 5000),
        "randn(100,100)": (lambda: L.randn(100, 100), 5000),
        "zeros(100,100)": (lambda: L.zeros(100, 100), 20000),
        "tensor(list)": (lambda: L.tensor([[1.0, 2.0, 3.0]] * 10), 5000),
        "from_numpy": (lambda: L.from_numpy(np.ones((10, 10))), 20000),
        ".numpy()": (lambda: x.numpy(), 50000),
        "repr": (lambda: repr(t), 500),
        "clone": (lambda: x.clone(), 10000),
        "matmul 100": (lambda: x @ x, 2000),
        "where": (lambda: L.where(mask, x, 0.0), 5000),
        "clamp": (lambda: x.clamp(-1, 1), 10000),
        "eq + all": (lambda: (x == x).all(), 10000),
        "view/reshape": (lambda: x.view(50, 200).reshape(100, 100), 20000),
        "permute contiguous": (lambda: x.t().contiguous(), 5000),
        "no_grad ctx": (lambda: L.no_grad().__enter__(), 20000),
    }
def main():
    return compare_main(cases, "call")


if __name__ == "__main__":
    sys.exit(main())
