"""Sparse @ dense products and a GCN training step (a graph convolution over a
torch.sparse adjacency, as PyG's and Kipf's GCN code run it): ptcore vs PyTorch
per call, sorted by ratio.

    python benchmarks/sparse.py

1 thread; paired medians (ptcore and torch alternate).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402


def _adjacency(L, n, density, seed=1):
    rng = np.random.default_rng(seed)
    nnz = max(1, int(n * n * density))
    idx = np.vstack((rng.integers(0, n, nnz), rng.integers(0, n, nnz))).astype(np.int64)
    vals = rng.random(nnz).astype(np.float32)
    return L.sparse_coo_tensor(L.from_numpy(idx), L.from_numpy(vals), (n, n)).coalesce()


def cases(L):
    nn = L.nn
    out = {}
    for n, dens, f in ((60, 0.08, 8), (2000, 0.005, 64), (20000, 0.0005, 64)):
        adj = _adjacency(L, n, dens)
        x = L.from_numpy(np.random.default_rng(2).random((n, f)).astype(np.float32))
        reps = 2000 if n < 1000 else 50
        out[f"spmm COO {n}x{n} nnz={adj._nnz()} @ {n}x{f}"] = (lambda a=adj, x=x: L.sparse.mm(a, x),
                                                              reps)
        csr = adj.to_sparse_csr()
        out[f"spmm CSR {n}x{n} @ {n}x{f}"] = (lambda a=csr, x=x: L.sparse.mm(a, x), reps)
    # a two-layer GCN step (forward, backward, Adam) on a 2000-node graph
    adj = _adjacency(L, 2000, 0.005)
    feats = L.from_numpy(np.random.default_rng(3).random((2000, 32)).astype(np.float32))
    labels = L.from_numpy(np.random.default_rng(4).integers(0, 4, 2000).astype(np.int64))
    L.manual_seed(0)
    w1, w2 = nn.Linear(32, 16), nn.Linear(16, 4)
    opt = L.optim.Adam(list(w1.parameters()) + list(w2.parameters()), lr=0.01)

    def gcn_step():
        h = L.relu(L.sparse.mm(adj, w1(feats)))
        loss = nn.functional.cross_entropy(L.sparse.mm(adj, w2(h)), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    out["GCN train step, 2000 nodes, 20000 edges"] = (gcn_step, 50)
    return out


def main():
    return compare_main(cases, "call")


if __name__ == "__main__":
    sys.exit(main())
