"""Pointwise odds and ends that optimizers, EMA updates and data pipelines
call: ``lerp`` (scalar and tensor weight), the ``torch._foreach_*`` ops over
a list of 100 small parameter-like tensors, float32 ``%`` / ``remainder`` /
``fmod`` / ``//``, float32 ``**`` / ``hypot`` / ``xlogy`` / ``lgamma`` /
``logaddexp`` / ``sinh`` and float64 ``**``, antialiased downscaling and
``flip``.  ptcore, PyTorch and
NumPy on the same data in the same process, one thread by default.

    python benchmarks/pointwise_misc.py [--threads N] [--quick] [--only SUBSTRING]

Target: ratio ptcore/torch <= 1.0 (the foreach rows <= 1.5: torch runs them
as one fused C++ call, ptcore's are one Python call over the list).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import parse_bench_args  # noqa: E402

_args = parse_bench_args(__doc__)
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
import ptcore.nn.functional as PF  # noqa: E402
from _harness import paired_median_times, print_table, torch_with_threads  # noqa: E402


def _cases(T, F, rng):
    """(name, callable) for library ``T`` (ptcore or torch) on fresh copies of
    the same NumPy inputs; ``None`` for T gives the NumPy callables where a
    NumPy equivalent exists."""
    def t(a):
        return T.from_numpy(np.array(a)) if T is not None else np.array(a)

    out = []
    a = t(rng.standard_normal((1024, 1024), dtype=np.float32))
    b = t(rng.standard_normal((1024, 1024), dtype=np.float32))
    w = t(rng.random((1024, 1024), dtype=np.float32))
    if T is None:
        out += [("a.lerp_(b, 0.01) 1024^2", lambda: np.add(a, 0.01 * (b - a), out=a)),
                ("lerp(a, b, 0.01) 1024^2", lambda: a + 0.01 * (b - a)),
                ("lerp(a, b, w) 1024^2", lambda: a + w * (b - a)),
                ("a.lerp_(b, w) 1024^2", lambda: np.add(a, w * (b - a), out=a))]
    else:
        out += [("a.lerp_(b, 0.01) 1024^2", lambda: a.lerp_(b, 0.01)),
                ("lerp(a, b, 0.01) 1024^2", lambda: T.lerp(a, b, 0.01)),
                ("lerp(a, b, w) 1024^2", lambda: T.lerp(a, b, w)),
                ("a.lerp_(b, w) 1024^2", lambda: a.lerp_(b, w))]

    # foreach over 100 parameter-like tensors (64x3x3), as optimizers call them
    shapes = [(64, 3, 3)] * 100
    ps = [t(rng.standard_normal(s, dtype=np.float32)) for s in shapes]
    gs = [t(rng.standard_normal(s, dtype=np.float32)) for s in shapes]
    hs = [t(rng.random(s, dtype=np.float32) + 0.5) for s in shapes]
    if T is not None:
        fe = [("_foreach_add_(l, l, alpha)", lambda: T._foreach_add_(ps, gs, alpha=0.001)),
              ("_foreach_add_(l, l)", lambda: T._foreach_add_(ps, gs)),
              ("_foreach_add_(l, scalar)", lambda: T._foreach_add_(ps, 0.001)),
              ("_foreach_lerp_(l, l, 0.01)", lambda: T._foreach_lerp_(ps, gs, 0.01)),
              ("_foreach_mul_(l, scalar)", lambda: T._foreach_mul_(ps, 0.999)),
              ("_foreach_mul_(l, l)", lambda: T._foreach_mul_(ps, hs)),
              ("_foreach_div_(l, l)", lambda: T._foreach_div_(ps, hs)),
              ("_foreach_addcmul_(l, l, l, v)",
               lambda: T._foreach_addcmul_(ps, gs, gs, value=0.001)),
              ("_foreach_addcdiv_(l, l, l, v)",
               lambda: T._foreach_addcdiv_(ps, gs, hs, value=-0.001)),
              ("_foreach_sqrt(l)", lambda: T._foreach_sqrt(hs)),
              ("_foreach_norm(l)", lambda: T._foreach_norm(gs)),
              ("_foreach_copy_(l, l)", lambda: T._foreach_copy_(ps, gs)),
              ("_foreach_zero_(l)", lambda: T._foreach_zero_(ps))]
        out += [(n + " 100x(64,3,3)", f) for n, f in fe]

    x = t(rng.standard_normal((512, 512), dtype=np.float32) * 10)
    y = t(rng.standard_normal((512, 512), dtype=np.float32) + 3)
    if T is None:
        md = [("x % 3.7", lambda: x % 3.7), ("x % y", lambda: x % y),
              ("remainder(x, -2.5)", lambda: np.remainder(x, -2.5)),
              ("fmod(x, 2.5)", lambda: np.fmod(x, 2.5)), ("fmod(x, y)", lambda: np.fmod(x, y)),
              ("x // 2.5", lambda: x // 2.5), ("x // y", lambda: x // y)]
    else:
        md = [("x % 3.7", lambda: x % 3.7), ("x % y", lambda: x % y),
              ("remainder(x, -2.5)", lambda: T.remainder(x, -2.5)),
              ("fmod(x, 2.5)", lambda: T.fmod(x, 2.5)), ("fmod(x, y)", lambda: T.fmod(x, y)),
              ("x // 2.5", lambda: x // 2.5), ("x // y", lambda: x // y)]
    out += [(n + " float32 512^2", f) for n, f in md]

    # float32 pow / hypot / xlogy (double lanes, ptc_f32dbl_math.h), lgamma,
    # logaddexp, sinh and float64 pow on standard normal draws (1000, 1000)
    b = t(rng.standard_normal((1000, 1000), dtype=np.float32))
    ba = abs(b)
    bd = t(np.abs(rng.standard_normal((1000, 1000))))
    if T is None:
        with np.errstate(all="ignore"):
            fm = [("hypot(b, b)", lambda: np.hypot(b, b)), ("b.abs() ** 2.5", lambda: ba ** 2.5),
                  ("b.abs() ** b", lambda: ba ** b), ("logaddexp(b, b)", lambda: np.logaddexp(b, b)),
                  ("b.sinh()", lambda: np.sinh(b)), ("float64 b.abs() ** 2.5", lambda: bd ** 2.5)]
    else:
        fm = [("b.lgamma()", lambda: b.lgamma()), ("hypot(b, b)", lambda: T.hypot(b, b)),
              ("b.abs() ** 2.5", lambda: ba ** 2.5), ("b.abs() ** b", lambda: ba ** b),
              ("xlogy(|b|, |b|)", lambda: T.xlogy(ba, ba)), ("logaddexp(b, b)", lambda: T.logaddexp(b, b)),
              ("b.sinh()", lambda: b.sinh()), ("float64 b.abs() ** 2.5", lambda: bd ** 2.5)]
    out += [(n + " 1000^2", f) for n, f in fm]

    img = t(rng.standard_normal((8, 16, 64, 64), dtype=np.float32))
    if T is None:
        out.append(("flip(-1) (8,16,64,64)", lambda: np.ascontiguousarray(img[..., ::-1])))
        out.append(("flip((2, 3)) (8,16,64,64)",
                    lambda: np.ascontiguousarray(img[..., ::-1, ::-1])))
    else:
        for mode in ("bilinear", "bicubic"):
            out.append((f"interpolate {mode} antialias 64->23 (8,16,64,64)",
                        lambda mode=mode: F.interpolate(img, size=(23, 23), mode=mode,
                                                        antialias=True, align_corners=False)))
        out.append(("flip(-1) (8,16,64,64)", lambda: img.flip(-1)))
        out.append(("flip((2, 3)) (8,16,64,64)", lambda: img.flip((2, 3))))
    return out


def main():
    torch = torch_with_threads(_args.threads)
    repeat = 3 if _args.quick else 15
    pc = _cases(ptcore, PF, np.random.default_rng(0))
    tc = dict(_cases(torch, torch.nn.functional, np.random.default_rng(0))) if torch else {}
    nc = dict(_cases(None, None, np.random.default_rng(0)))
    # thread CPU time: single-threaded runs on a shared machine, where wall time
    # includes other processes' time slices
    clock = time.thread_time if _args.threads == 1 else None
    rows = []
    for name, fp in pc:
        if _args.only not in name:
            continue
        rows.append((name, *paired_median_times([fp, tc.get(name), nc.get(name)],
                                                repeat=repeat, clock=clock)))
    print_table(f"pointwise odds and ends ({_args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
