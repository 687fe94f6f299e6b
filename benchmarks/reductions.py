"""Reduction benchmarks: sums over all / dim 0 / dim 1, max with indices,
argmax, softmax and log_softmax on a 4096x4096 float32 tensor (plus a few
secondary cases, softmax over short rows among them), ptcore vs PyTorch vs
NumPy in the same process.

Usage: python benchmarks/reductions.py [--threads N] [--n 4096] [--all]
[--prod] [--dtype float32|float64] (default: 1 thread for all three, float32;
--all adds the secondary cases; --prod runs only the products, integer sums,
count_nonzero and cumprod on a 1000x1000 matrix, which --all includes).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402


def _np_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    e = np.exp(a - m)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _np_log_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    s = a - m
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _prod_int_cases(case, torch):
    """Products, integer sums, count_nonzero and cumprod of a 1000x1000 matrix
    (float32 normal values; int64 values in [0, 1000))."""
    rng = np.random.default_rng(2)
    b = rng.standard_normal((1000, 1000)).astype(np.float32)
    v = rng.integers(0, 1000, 10**6, dtype=np.int64)
    bd, vi, vm = b.astype(np.float64), v.astype(np.int32), v.reshape(1000, 1000)
    xb, xbd, xv, xvi, xvm = (ptcore.from_numpy(a) for a in (b, bd, v, vi, vm))
    if torch is not None:
        tb, tbd, tv, tvi, tvm = (torch.from_numpy(a) for a in (b, bd, v, vi, vm))
    else:
        tb = tbd = tv = tvi = tvm = None
    return [
        case("prod(dim=1) 1000x1000", lambda: xb.prod(1), lambda: tb.prod(1), lambda: b.prod(1)),
        case("prod() 1000x1000", lambda: xb.prod(), lambda: tb.prod(), lambda: b.prod()),
        case("prod(dim=0) 1000x1000", lambda: xb.prod(0), lambda: tb.prod(0), lambda: b.prod(0)),
        case("prod(dim=1) 1000x1000 float64", lambda: xbd.prod(1), lambda: tbd.prod(1),
             lambda: bd.prod(1)),
        case("sum() int64 1e6", lambda: xv.sum(), lambda: tv.sum(), lambda: v.sum()),
        case("sum() int32 1e6 -> int64", lambda: xvi.sum(), lambda: tvi.sum(),
             lambda: vi.sum(dtype=np.int64)),
        case("sum(dim=1) int64 1000x1000", lambda: xvm.sum(1), lambda: tvm.sum(1),
             lambda: vm.sum(1)),
        case("count_nonzero 1000x1000", lambda: ptcore.count_nonzero(xb),
             lambda: torch.count_nonzero(tb), lambda: np.count_nonzero(b)),
        case("cumprod(dim=1) 1000x1000", lambda: xb.cumprod(1), lambda: tb.cumprod(1),
             lambda: b.cumprod(1)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--all", action="store_true", help="also the secondary cases")
    ap.add_argument("--prod", action="store_true",
                    help="only prod, integer sums, count_nonzero, cumprod (1000x1000)")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = ap.parse_args()
    torch = try_import_torch()
    ptcore.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)

    n = args.n
    a = np.random.default_rng(0).standard_normal((n, n)).astype(args.dtype)
    x = ptcore.from_numpy(a)
    t = torch.from_numpy(a) if torch is not None else None

    def case(name, fp, ft, fn):
        return (name, fp, ft if torch is not None else None, fn)

    cases = [
        case("sum()", lambda: x.sum(), lambda: t.sum(), lambda: a.sum()),
        case("sum(dim=0)", lambda: x.sum(0), lambda: t.sum(0), lambda: a.sum(0)),
        case("sum(dim=1)", lambda: x.sum(1), lambda: t.sum(1), lambda: a.sum(1)),
        case("max(dim=1) (values, indices)", lambda: x.max(1), lambda: t.max(1),
             lambda: (a.max(1), a.argmax(1))),
        case("argmax(dim=1)", lambda: x.argmax(1), lambda: t.argmax(1), lambda: a.argmax(1)),
        case("softmax(dim=1)", lambda: x.softmax(1), lambda: t.softmax(1), lambda: _np_softmax(a, 1)),
        case("log_softmax(dim=1)", lambda: x.log_softmax(1), lambda: t.log_softmax(1),
             lambda: _np_log_softmax(a, 1)),
    ]
    if args.all:
        sa_ = np.sort(a, 1)
        xs = ptcore.from_numpy(sa_)
        ts = torch.from_numpy(sa_) if torch is not None else None
        cases += [
            case("mean()", lambda: x.mean(), lambda: t.mean(), lambda: a.mean()),
            case("amax(dim=0)", lambda: x.amax(0), lambda: t.amax(0), lambda: a.max(0)),
            case("argmax(dim=0)", lambda: x.argmax(0), lambda: t.argmax(0), lambda: a.argmax(0)),
            case("var(dim=1)", lambda: x.var(1), lambda: t.var(1), lambda: a.var(1, ddof=1)),
            case("norm()", lambda: x.norm(), lambda: t.norm(), lambda: np.linalg.norm(a)),
            case("logsumexp(dim=1)", lambda: x.logsumexp(1), lambda: t.logsumexp(1), None),
            case("softmax(dim=0)", lambda: x.softmax(0), lambda: t.softmax(0), lambda: _np_softmax(a, 0)),
            case("cumsum(dim=1)", lambda: x.cumsum(1), lambda: t.cumsum(1), lambda: a.cumsum(1)),
            case("cummax(dim=1)", lambda: x.cummax(1), lambda: t.cummax(1),
                 lambda: np.maximum.accumulate(a, 1)),
            case("cummax(dim=1), ascending rows", lambda: xs.cummax(1), lambda: ts.cummax(1),
                 lambda: np.maximum.accumulate(sa_, 1)),
            case("median(dim=1)", lambda: x.median(1), lambda: t.median(1), lambda: np.median(a, 1)),
        ]
        # short rows: a small GPT's attention scores (48 heads x 64 queries, 64
        # keys), a character model's logits (768 tokens, 65 classes) and rows
        # of 8 (the outer traversal) and of 1 (a reduction over a dim of size 1)
        for shape in ((3072, 64), (768, 65), (100000, 8), (100000, 1)):
            sa = np.random.default_rng(1).standard_normal(shape).astype(args.dtype)
            sx = ptcore.from_numpy(sa)
            st = torch.from_numpy(sa) if torch is not None else None
            tag = f"{shape[0]}x{shape[1]}"
            cases += [
                case(f"softmax(dim=1) {tag}", lambda sx=sx: sx.softmax(1),
                     lambda st=st: st.softmax(1), lambda sa=sa: _np_softmax(sa, 1)),
                case(f"log_softmax(dim=1) {tag}", lambda sx=sx: sx.log_softmax(1),
                     lambda st=st: st.log_softmax(1), lambda sa=sa: _np_log_softmax(sa, 1)),
                case(f"amax(dim=1) {tag}", lambda sx=sx: sx.amax(1),
                     lambda st=st: st.amax(1), lambda sa=sa: sa.max(1)),
                case(f"logsumexp(dim=1) {tag}", lambda sx=sx: sx.logsumexp(1),
                     lambda st=st: st.logsumexp(1), None),
            ]
    if args.prod:
        cases = []
    if args.prod or args.all:
        cases += _prod_int_cases(case, torch)
    rows = []
    for name, fp, ft, fn in cases:
        rows.append((name, *paired_median_times([fp, ft, fn], repeat=9)))
    what = "products, integer sums, count_nonzero, cumprod" if args.prod else \
        f"{n}x{n} {args.dtype}"
    print_table(f"reductions ({what}, {args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
