"""Small-tensor calls of scientific loops (ODE/particle/MCMC steps), one at a
time: ptcore vs PyTorch per call on 100-element float32 vectors, 10x10
matrices and 3-vectors, where per-call overhead dominates; sorted by ratio so
the worst come first.

    python benchmarks/small_ops.py

1 thread; paired medians (ptcore and torch alternate), thread CPU time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402


def cases(L):
    L.manual_seed(0)
    v, w = L.randn(100), L.randn(100)
    a, b = L.rand(100), L.rand(100)
    m, m2 = L.randn(10, 10), L.randn(10, 10)
    p3, q3 = L.randn(3), L.randn(3)
    edges = L.linspace(-2, 2, 20)
    t3 = L.randn(4, 5, 6)
    t3b = L.randn(5, 6, 7)
    r1, c1 = L.randn(64, 1, 16), L.randn(64, 16, 1)
    n = 5000
    return {
        "polar": (lambda: L.polar(a, v), n),
        "linalg.cross 3-vectors": (lambda: L.linalg.cross(p3, q3), n),
        "linspace(0,1,100)": (lambda: L.linspace(0, 1, 100), n),
        "fft.rfft 100": (lambda: L.fft.rfft(v), n),
        "inner 1-D": (lambda: L.inner(v, w), n),
        "kron 3-vectors": (lambda: L.kron(p3, q3), n),
        "cumsum": (lambda: L.cumsum(v, 0), n),
        "linalg.norm": (lambda: L.linalg.norm(v), n),
        "cdist 10x10": (lambda: L.cdist(m, m2), n),
        "randn(100)": (lambda: L.randn(100), n),
        "trace 10x10": (lambda: L.trace(m), n),
        "dot": (lambda: L.dot(v, w), n),
        "atan2": (lambda: L.atan2(v, w), n),
        "linalg.vector_norm": (lambda: L.linalg.vector_norm(v), n),
        "linalg.det 10x10": (lambda: L.linalg.det(m), n),
        "lerp": (lambda: L.lerp(v, w, 0.5), n),
        "outer": (lambda: L.outer(v, w), n),
        "mv": (lambda: L.mv(m, v[:10]), n),
        "matmul(matrix, vector)": (lambda: L.matmul(m, v[:10]), n),
        "norm": (lambda: L.norm(v), n),
        "bucketize": (lambda: L.bucketize(v, edges), n),
        "searchsorted": (lambda: L.searchsorted(edges, v), n),
        "linalg.svd 10x10": (lambda: L.linalg.svd(m), 2000),
        "allclose": (lambda: L.allclose(v, w), n),
        "isclose": (lambda: L.isclose(v, w), n),
        "rand_like": (lambda: L.rand_like(v), n),
        "softmax": (lambda: L.softmax(v, 0), n),
        "tensordot dims=2": (lambda: L.tensordot(t3, t3b, dims=2), n),
        "tensordot dims=([1],[0])": (lambda: L.tensordot(t3, t3b, dims=([1], [0])), n),
        "bmm 64 x (1x16 @ 16x1)": (lambda: L.bmm(r1, c1), n),
    }


def main():
    return compare_main(cases, "call")


if __name__ == "__main__":
    sys.exit(main())
