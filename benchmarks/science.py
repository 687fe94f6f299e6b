"""Scientific-module benchmarks, ptcore vs PyTorch (and NumPy/SciPy) in the
same process: ``ptcore.fft`` (1-D 2^20 complex, 2-D 2048x2048 real, with a
backward), a sweep over ``ptcore.special`` on 2^20 elements, and the
per-sample gradients of the MLP 784-512-512-10 for a batch of 128 with
``func.vmap(func.grad(...))`` against a Python loop over the samples and
against ``torch.func``.  The ratio column is ptcore / torch measured in this
run (lower is better).

Usage: python benchmarks/science.py [--threads N] [--only fft|special|vmap] [--cpu-time]
(default: 1 thread for all libraries; the NumPy column is numpy.fft for the
transforms and scipy.special for the special functions; --cpu-time times the
calling thread's CPU time instead of the wall clock, for 1-thread runs on a
loaded machine).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402

CLOCK = None        # time.thread_time with --cpu-time


def fft_rows(torch, repeat):
    rng = np.random.default_rng(0)
    n1 = 1 << 20
    c = (rng.standard_normal(n1) + 1j * rng.standard_normal(n1)).astype(np.complex64)
    r2 = rng.standard_normal((2048, 2048)).astype(np.float32)
    pc, pr = ptcore.from_numpy(c), ptcore.from_numpy(r2)
    tc = torch.from_numpy(c) if torch is not None else None
    tr = torch.from_numpy(r2) if torch is not None else None
    pR, tR = ptcore.fft.rfft2(pr), (torch.fft.rfft2(tr) if torch is not None else None)
    R = np.fft.rfft2(r2)

    def T(f):
        return f if torch is not None else None

    def grad_case(lib, x, fn):
        def run():
            xg = x.detach().requires_grad_()
            fn(xg).abs().sum().backward()
        return run

    cases = [
        ("fft 1-D 2^20 complex64", lambda: ptcore.fft.fft(pc), T(lambda: torch.fft.fft(tc)),
         lambda: np.fft.fft(c)),
        ("ifft 1-D 2^20 complex64", lambda: ptcore.fft.ifft(pc), T(lambda: torch.fft.ifft(tc)),
         lambda: np.fft.ifft(c)),
        ("rfft2 2048^2 float32", lambda: ptcore.fft.rfft2(pr), T(lambda: torch.fft.rfft2(tr)),
         lambda: np.fft.rfft2(r2)),
        ("fft2 2048^2 float32 (real in)", lambda: ptcore.fft.fft2(pr),
         T(lambda: torch.fft.fft2(tr)), lambda: np.fft.fft2(r2)),
        ("irfft2 2048^2 -> float32", lambda: ptcore.fft.irfft2(pR),
         T(lambda: torch.fft.irfft2(tR)), lambda: np.fft.irfft2(R)),
        ("fft 1-D 2^20 fwd+bwd", grad_case(ptcore, pc, ptcore.fft.fft),
         T(grad_case(torch, tc, torch.fft.fft) if torch is not None else None), None),
        ("rfft2 2048^2 fwd+bwd", grad_case(ptcore, pr, ptcore.fft.rfft2),
         T(grad_case(torch, tr, torch.fft.rfft2) if torch is not None else None), None),
    ]
    return [(name, *paired_median_times([fp, ft, fn], repeat=repeat, min_time=0.1, warmup=1,
                                        clock=CLOCK))
            for name, fp, ft, fn in cases]


def special_rows(torch, repeat, dtype):
    import scipy.special as sc
    rng = np.random.default_rng(1)
    n = 1 << 20
    x = (rng.standard_normal(n) * 4).astype(dtype)          # both signs
    pos = (rng.random(n) * 20 + 0.05).astype(dtype)          # (0, 20]
    unit = (rng.random(n) * 0.98 + 0.01).astype(dtype)       # (0, 1)
    sym = (rng.random(n) * 1.98 - 0.99).astype(dtype)        # (-1, 1)
    deg = np.full(n, 10, dtype=dtype)
    data = {"x": x, "pos": pos, "unit": unit, "sym": sym, "deg": deg}
    P = {k: ptcore.from_numpy(v) for k, v in data.items()}
    Tt = {k: torch.from_numpy(v) for k, v in data.items()} if torch is not None else None
    # (name, torch.special function, argument keys, scipy reference)
    sweep = [
        ("erf", ("x",), sc.erf), ("erfc", ("x",), sc.erfc), ("erfinv", ("sym",), sc.erfinv),
        ("erfcx", ("x",), sc.erfcx), ("expit", ("x",), sc.expit), ("logit", ("unit",), sc.logit),
        ("gammaln", ("pos",), sc.gammaln), ("digamma", ("pos",), sc.psi),
        ("i0", ("x",), sc.i0), ("i0e", ("x",), sc.i0e), ("i1", ("x",), sc.i1),
        ("i1e", ("x",), sc.i1e), ("ndtr", ("x",), sc.ndtr), ("ndtri", ("unit",), sc.ndtri),
        ("log_ndtr", ("x",), sc.log_ndtr), ("entr", ("pos",), sc.entr),
        ("sinc", ("x",), np.sinc), ("bessel_j0", ("x",), sc.j0), ("bessel_j1", ("x",), sc.j1),
        ("bessel_y0", ("pos",), sc.y0), ("bessel_y1", ("pos",), sc.y1),
        ("modified_bessel_i0", ("x",), sc.i0), ("modified_bessel_k0", ("pos",), sc.k0),
        ("modified_bessel_k1", ("pos",), sc.k1), ("scaled_modified_bessel_k0", ("pos",), sc.k0e),
        ("spherical_bessel_j0", ("x",), lambda v: sc.spherical_jn(0, v)),
        ("airy_ai", ("x",), lambda v: sc.airy(v)[0]),
        ("xlog1py", ("pos", "pos"), sc.xlog1py), ("xlogy", ("pos", "pos"), sc.xlogy),
        ("zeta", ("deg", "pos"), sc.zeta), ("gammainc", ("pos", "pos"), sc.gammainc),
        ("polygamma(1, .)", ("pos",), lambda v: sc.polygamma(1, v)),
        ("chebyshev_polynomial_t n=10", ("sym", "deg"), lambda v, k: sc.eval_chebyt(10, v)),
        ("hermite_polynomial_h n=10", ("sym", "deg"), lambda v, k: sc.eval_hermite(10, v)),
        ("legendre_polynomial_p n=10", ("sym", "deg"), lambda v, k: sc.eval_legendre(10, v)),
        ("laguerre_polynomial_l n=10", ("pos", "deg"), lambda v, k: sc.eval_laguerre(10, v)),
    ]
    rows = []
    for name, keys, ref in sweep:
        base = name.split(" ")[0]
        if base.startswith("polygamma"):
            def fp(k=keys):
                return ptcore.special.polygamma(1, P[k[0]])
            ft = (lambda k=keys: torch.special.polygamma(1, Tt[k[0]])) if torch is not None else None
        else:
            def fp(k=keys, b=base):
                return getattr(ptcore.special, b)(*(P[a] for a in k))
            ft = ((lambda k=keys, b=base: getattr(torch.special, b)(*(Tt[a] for a in k)))
                  if torch is not None else None)

        def fn(k=keys, r=ref):
            return r(*(data[a] for a in k))
        rows.append((name, *paired_median_times([fp, ft, fn], repeat=repeat, min_time=0.05,
                                                warmup=1, clock=CLOCK)))
    return rows


def persample_rows(torch, repeat, batch=128):
    """Per-sample gradients of the MLP 784-512-512-10 (cross-entropy), batch
    ``batch``: vmap(grad) in each library, and the loop over samples."""
    rng = np.random.default_rng(0)
    sizes = [(512, 784), (512, 512), (10, 512)]
    ws = [((rng.standard_normal(s) / np.sqrt(s[1])).astype(np.float32),
           np.zeros(s[0], np.float32)) for s in sizes]
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch)

    def setup(lib, F, func):
        params = {}
        for i, (w, b) in enumerate(ws):
            params[f"w{i}"] = lib.from_numpy(w.copy())
            params[f"b{i}"] = lib.from_numpy(b.copy())
        X, Y = lib.from_numpy(x), lib.from_numpy(y)

        def loss(p, xi, yi):
            h = F.relu(F.linear(xi, p["w0"], p["b0"]))
            h = F.relu(F.linear(h, p["w1"], p["b1"]))
            return F.cross_entropy(F.linear(h, p["w2"], p["b2"]).unsqueeze(0), yi.unsqueeze(0))
        per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))

        def vm():
            return per_sample(params, X, Y)

        g1 = func.grad(loss)

        def loop():
            return [g1(params, X[i], Y[i]) for i in range(batch)]
        return vm, loop

    import ptcore.func
    import ptcore.nn.functional as pF
    pv, pl = setup(ptcore, pF, ptcore.func)
    tv = tl = None
    if torch is not None:
        import torch.func
        tv, tl = setup(torch, torch.nn.functional, torch.func)
        # the same gradients
        a, b = pv(), tv()
        for k in a:
            d = float(np.abs(a[k].numpy() - b[k].numpy()).max())
            assert d < 1e-4, f"per-sample gradient {k} differs from torch.func by {d}"
    return [(f"per-sample grads MLP 784-512-512-10, b{batch}: vmap(grad)",
             *paired_median_times([pv, tv, None], repeat=repeat, min_time=0.2, warmup=1)),
            (f"per-sample grads MLP 784-512-512-10, b{batch}: Python loop",
             *paired_median_times([pl, tl, None], repeat=max(repeat // 2, 2), min_time=0.2,
                                  warmup=1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=["fft", "special", "vmap"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the thread's CPU time (1-thread runs on a loaded machine)")
    args = ap.parse_args()
    global CLOCK
    if args.cpu_time:
        import time
        if args.threads != 1:
            ap.error("--cpu-time measures one thread: use it with --threads 1")
        CLOCK = time.thread_time
    torch = try_import_torch()
    ptcore.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    if args.only in (None, "fft"):
        print_table(f"fft ({args.threads} thread(s); numpy column: numpy.fft)",
                    fft_rows(torch, args.repeat))
    if args.only in (None, "special"):
        print_table(f"special, 2^20 float32 ({args.threads} thread(s); numpy column: "
                    "scipy.special)", special_rows(torch, args.repeat, np.float32))
    if args.only in (None, "vmap"):
        print_table(f"per-sample gradients ({args.threads} thread(s); numpy column unused)",
                    persample_rows(torch, args.repeat))


if __name__ == "__main__":
    main()
