"""Elementwise benchmarks (issue targets: ratio ptcore/PyTorch <= 1.0 at
n >= 1e6, transposed-operand add <= 0.5, per-call overhead <= 1.0).

add/mul/exp/relu on float32 at n = 1e3, 1e6, 1.6e7, allocating and with
``out=``; float16/bfloat16 ops and conversions at 512^2; add with a transposed operand (4096^2); broadcast add
(4096^2 + (4096,)); the per-call cost of a 1-element add.  ptcore, PyTorch and
NumPy on the same data in the same process.

Usage: python benchmarks/elementwise.py [--threads N | --default-threads] [--quick]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402


def main():
    relu_out = _has_out(ptcore.relu)
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--default-threads", action="store_true",
                    help="leave every library at its default thread count")
    ap.add_argument("--quick", action="store_true", help="skip the 1.6e7 and 4096^2 cases")
    args = ap.parse_args()
    torch = try_import_torch()
    if not args.default_threads:
        ptcore.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
        label = f"{args.threads} thread(s)"
    else:
        label = (f"defaults: ptcore {ptcore.get_num_threads()}, torch "
                 f"{torch.get_num_threads() if torch else '-'} threads")
    rng = np.random.default_rng(0)
    rows = []
    sizes = [1_000, 1_000_000] + ([] if args.quick else [16_000_000])
    for n in sizes:
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        pa, pb = ptcore.from_numpy(a), ptcore.from_numpy(b)
        po = ptcore.empty(n)
        ta = tb = to = None
        if torch is not None:
            ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
            to = torch.empty(n)
        no = np.empty_like(a)
        rep = 7 if n >= 10_000_000 else 15
        cases = [
            ("add", lambda: pa + pb, lambda: ta + tb, lambda: a + b),
            ("add out=", lambda: ptcore.add(pa, pb, out=po), lambda: torch.add(ta, tb, out=to),
             lambda: np.add(a, b, out=no)),
            ("mul", lambda: pa * pb, lambda: ta * tb, lambda: a * b),
            ("mul out=", lambda: ptcore.mul(pa, pb, out=po), lambda: torch.mul(ta, tb, out=to),
             lambda: np.multiply(a, b, out=no)),
            ("exp", lambda: ptcore.exp(pa), lambda: torch.exp(ta), lambda: np.exp(a)),
            ("exp out=", lambda: ptcore.exp(pa, out=po), lambda: torch.exp(ta, out=to),
             lambda: np.exp(a, out=no)),
            ("relu", lambda: ptcore.relu(pa), lambda: torch.relu(ta), lambda: np.maximum(a, 0)),
            ("relu out=", (lambda: ptcore.relu(pa, out=po)) if relu_out else
             (lambda: ptcore.clamp(pa, min=0, out=po)),
             lambda: torch.clamp(ta, min=0, out=to), lambda: np.maximum(a, 0, out=no)),
            ("clamp(-1, 1)", lambda: pa.clamp(-1, 1), lambda: ta.clamp(-1, 1),
             lambda: np.clip(a, -1, 1)),
            ("maximum", lambda: ptcore.maximum(pa, pb), lambda: torch.maximum(ta, tb),
             lambda: np.maximum(a, b)),
        ]
        for name, fp, ft, fn in cases:
            rows.append((f"{name} n={n:.0e}",
                         *paired_median_times([fp, ft if torch else None, fn], repeat=rep)))
    print_table(f"elementwise float32 ({label})", rows)

    rows = []
    if not args.quick:
        m = rng.standard_normal((4096, 4096), dtype=np.float32)
        k = rng.standard_normal((4096, 4096), dtype=np.float32)
        v = rng.standard_normal(4096, dtype=np.float32)
        pm, pk, pv = ptcore.from_numpy(m), ptcore.from_numpy(k), ptcore.from_numpy(v)
        tm = tk = tv = None
        if torch is not None:
            tm, tk, tv = torch.from_numpy(m.copy()), torch.from_numpy(k.copy()), torch.from_numpy(v.copy())
        rows.append(("add transposed operand 4096^2", *paired_median_times(
            [lambda: pm + pk.T, (lambda: tm + tk.T) if torch else None, lambda: m + k.T],
            repeat=7)))
        rows.append(("broadcast add 4096^2 + (4096,)", *paired_median_times(
            [lambda: pm + pv, (lambda: tm + tv) if torch else None, lambda: m + v], repeat=7)))
        print_table(f"layouts ({label})", rows)

    rows = []
    n = 512 * 512
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    for dname, ndt in (("float16", np.float16), ("bfloat16", None)):
        pd = getattr(ptcore, dname)
        pa, pb, pf = ptcore.from_numpy(a).to(pd), ptcore.from_numpy(b).to(pd), ptcore.from_numpy(a)
        ta = tb = tf = None
        if torch is not None:
            td = getattr(torch, dname)
            ta, tb, tf = torch.from_numpy(a).to(td), torch.from_numpy(b).to(td), torch.from_numpy(a)
        na, nb = (a.astype(ndt), b.astype(ndt)) if ndt else (None, None)
        cases = [
            ("add", lambda: pa + pb, lambda: ta + tb, (lambda: na + nb) if ndt else None),
            ("mul scalar", lambda: pa * 0.5, lambda: ta * 0.5, (lambda: na * 0.5) if ndt else None),
            ("neg", lambda: -pa, lambda: -ta, (lambda: -na) if ndt else None),
            ("relu", lambda: ptcore.relu(pa), lambda: torch.relu(ta),
             (lambda: np.maximum(na, 0)) if ndt else None),
            ("exp", lambda: pa.exp(), lambda: ta.exp(), (lambda: np.exp(na)) if ndt else None),
            ("gelu", lambda: ptcore.nn.functional.gelu(pa), lambda: torch.nn.functional.gelu(ta),
             None),
            ("add_ in place", lambda: pa.add_(pb), lambda: ta.add_(tb), None),
            ("add alpha=0.5", lambda: ptcore.add(pa, pb, alpha=0.5),
             lambda: torch.add(ta, tb, alpha=0.5), (lambda: na + nb * ndt(0.5)) if ndt else None),
            ("to float32", lambda: pa.float(), lambda: ta.float(),
             (lambda: na.astype(np.float32)) if ndt else None),
            ("from float32", lambda: pf.to(pd), lambda: tf.to(td),
             (lambda: a.astype(ndt)) if ndt else None),
        ]
        for name, fp, ft, fn in cases:
            rows.append((f"{dname} {name} n=512^2",
                         *paired_median_times([fp, ft if torch else None, fn], repeat=15)))
    print_table(f"float16/bfloat16 elementwise ({label})", rows)

    rows = []
    x1 = ptcore.ones(1)
    t1 = torch.ones(1) if torch else None
    n1 = np.ones(1, np.float32)
    rows.append(("1-element add (per call)", *paired_median_times(
        [lambda: x1 + x1, (lambda: t1 + t1) if torch else None, lambda: n1 + n1])))
    rows.append(("1-element add scalar (per call)", *paired_median_times(
        [lambda: x1 + 1.0, (lambda: t1 + 1.0) if torch else None, lambda: n1 + 1.0])))
    print_table(f"per-call overhead ({label})", rows)


def _has_out(fn):  # evaluated once per run (inspect.signature is slow)
    import inspect
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


if __name__ == "__main__":
    main()
