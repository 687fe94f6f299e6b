"""Random draws: ptcore vs PyTorch per call, 1 thread, paired medians (ptcore
and torch alternate), thread CPU time; sorted by ratio so the worst come first.

    python benchmarks/random_draws.py

ptcore draws from Philox4x32-10 (16 blocks a step on AVX-512, 8 on AVX2) and
maps pairs of words to normals by Box-Muller in double precision (8 lanes on
AVX-512, 4 on AVX2), the same bits on every CPU; torch draws from mt19937.
The streams differ by design (DESIGN.md), so only the times compare.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402


def cases(L):
    L.manual_seed(0)
    x6 = L.empty(1_000_000)
    d6 = L.empty(1_000_000, dtype=L.float64)
    x4 = L.empty(10_000)
    p6 = L.full((1_000_000,), 0.3)
    F = L.nn.functional
    return {
        "randn(100, 100)": (lambda: L.randn(100, 100), 2000),
        "randn(1e6)": (lambda: L.randn(1_000_000), 60),
        "randn(1e6) float64": (lambda: L.randn(1_000_000, dtype=L.float64), 60),
        "rand(1e6)": (lambda: L.rand(1_000_000), 60),
        "x.normal_(2, 3) 1e4": (lambda: x4.normal_(2.0, 3.0), 2000),
        "x.normal_() 1e6": (lambda: x6.normal_(), 60),
        "x.uniform_(-1, 1) 1e6": (lambda: x6.uniform_(-1.0, 1.0), 60),
        "x.exponential_() 1e6": (lambda: x6.exponential_(), 60),
        "x64.exponential_() 1e6": (lambda: d6.exponential_(), 60),
        "bernoulli(p) 1e6": (lambda: L.bernoulli(p6), 60),
        "dropout(x, 0.1) 1e6": (lambda: F.dropout(x6, 0.1), 60),
        "randint(0, 10, (1e6,))": (lambda: L.randint(0, 10, (1_000_000,)), 60),
        "randperm(1e5)": (lambda: L.randperm(100_000), 100),
    }


def main():
    return compare_main(cases, "draw")


if __name__ == "__main__":
    sys.exit(main())
