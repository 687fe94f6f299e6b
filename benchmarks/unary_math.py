"""float32 and float64 unary math functions: ptcore vs PyTorch and NumPy on the
same data, timed in alternation (target: ratio ptcore/PyTorch <= 1.0).

Each function on 65536 contiguous float32 values in its usual range (and a
strided view for a few), one thread; then the float64 table: float64 exp,
sigmoid, log, log1p, expm1, tanh, sinh and cosh run in double lanes
(ptc_dexp_vec.h / ptc_dlog_vec.h / ptc_dexpm1_vec.h: within 0.52 ulp), sin
and cos (ptc_dsin_vec.h, 0.8 ulp), atan (ptc_datan_vec.h, 0.85 ulp), erf and
erfc (ptc_derf_vec.h, 0.9 and 2 ulp; also on standard normal draws, where
most vectors mix erf's intervals); sqrt is one instruction.  ptcore's
float32 log/log2/log10, sin/cos/tan, exp/exp2/expm1, tanh, sigmoid, erf and
atan/asin/acos are float polynomials in float lanes with FMA within 1 ulp,
as torch's (SLEEF u10); its sinh/cosh/atanh/log1p loops compute in double
and round once (correctly rounded results).

Usage: python benchmarks/unary_math.py [--threads N] [--quick] [--only SUBSTRING]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import parse_bench_args  # noqa: E402

ARGS = parse_bench_args(__doc__)

import numpy as np  # noqa: E402

from _harness import paired_median_times, print_cpu, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402

# name -> (numpy function, low, high) of the inputs
FUNCS = {
    "exp": (np.exp, -5, 5), "exp2": (np.exp2, -10, 10), "expm1": (np.expm1, -2, 2),
    "log": (np.log, 0.01, 100), "log1p": (np.log1p, -0.5, 10), "log2": (np.log2, 0.01, 100),
    "log10": (np.log10, 0.01, 100), "sqrt": (np.sqrt, 0, 100),
    "sin": (np.sin, -10, 10), "cos": (np.cos, -10, 10), "tan": (np.tan, -1.5, 1.5),
    "asin": (np.arcsin, -1, 1), "acos": (np.arccos, -1, 1), "atan": (np.arctan, -10, 10),
    "sinh": (np.sinh, -5, 5), "cosh": (np.cosh, -5, 5), "tanh": (np.tanh, -5, 5),
    "atanh": (np.arctanh, -0.99, 0.99), "asinh": (np.arcsinh, -10, 10),
    "acosh": (np.arccosh, 1, 10), "sigmoid": (None, -5, 5), "erf": (None, -3, 3), "erfc": (None, -3, 3),
    "reciprocal": (np.reciprocal, 0.5, 2), "neg": (np.negative, -1, 1),
    "abs": (np.abs, -1, 1), "floor": (np.floor, -10, 10), "round": (np.round, -10, 10),
}
STRIDED = ["sin", "atanh", "log"]
F64 = ["exp", "sigmoid", "log", "log1p", "expm1", "tanh", "sinh", "cosh", "sin", "cos", "atan", "erf", "erfc",
       "sqrt"]
STRIDED64 = ["exp"]
# float64 functions also timed on standard normal draws
NORMAL64 = ["erf", "erfc"]


def main():
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(ARGS.threads)
    ptcore.set_num_threads(ARGS.threads)
    print_cpu()
    n = 4096 if ARGS.quick else 65536
    rng = np.random.default_rng(0)
    for dtype, funcs, strided_funcs, normal in ((np.float32, FUNCS, STRIDED, []),
                                                (np.float64, F64, STRIDED64, NORMAL64)):
        rows = _rows(torch, rng, n, dtype, funcs, strided_funcs, normal)
        print_table(f"{np.dtype(dtype).name} unary math, {n} elements, {ARGS.threads} thread(s)", rows)


def _rows(torch, rng, n, dtype, funcs, strided_funcs, normal):
    rows = []
    cases = ([(f, False, False) for f in funcs] + [(f, True, False) for f in strided_funcs]
             + [(f, False, True) for f in normal])
    for name, strided, gauss in cases:
        case = f"{name}{' (strided)' if strided else ''}{' (normal)' if gauss else ''}"
        if ARGS.only and ARGS.only not in case:
            continue
        npf, lo, hi = FUNCS[name]
        if gauss:
            x = rng.standard_normal(n).astype(dtype)
        else:
            x = (rng.random(2 * n if strided else n) * (hi - lo) + lo).astype(dtype)
        xn = x[::2] if strided else x
        xp = ptcore.from_numpy(x)[::2] if strided else ptcore.from_numpy(x)
        fp = getattr(ptcore, name)
        fns = [lambda: fp(xp)]
        if torch is not None:
            xt = torch.from_numpy(x)[::2] if strided else torch.from_numpy(x)
            ft = getattr(torch, name)
            fns.append(lambda: ft(xt))
        else:
            fns.append(None)
        fns.append((lambda: npf(xn)) if npf is not None else None)
        p, t, m = paired_median_times(fns)
        rows.append((case, p, t, m))
    return rows


if __name__ == "__main__":
    main()
