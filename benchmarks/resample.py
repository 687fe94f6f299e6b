"""Resampling benchmark: ``F.interpolate`` (the U-Net decoder's upsampling),
``F.grid_sample`` (spatial transformers), ``F.ctc_loss`` at CRNN/OCR scale,
``torch.cdist`` on 3-d points and float64 ``erfinv``: ptcore vs PyTorch in the
same process, one thread by default.

    python benchmarks/resample.py [--threads N] [--quick] [--only SUBSTRING]

Forward+backward is ``y.backward(gy)`` (``loss.backward()`` for ctc_loss)
through each library's autograd, the forward included.  Target: ratio
ptcore/torch <= 1.0.
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


class _Lib:
    """One library's view of the same NumPy inputs."""

    def __init__(self, mod, F):
        self.mod, self.F = mod, F

    def t(self, a, grad=False):
        x = self.mod.from_numpy(np.ascontiguousarray(a))
        return x.requires_grad_() if grad else x


def _fwd_bwd(fn, gy):
    def run():
        fn().backward(gy)
    return run


def _cases(L, rng):
    """(name, forward callable, forward+backward callable or None) for library ``L``."""
    F = L.F
    out = []
    x4 = rng.standard_normal((4, 16, 64, 64)).astype(np.float32)
    g4 = rng.standard_normal((4, 16, 128, 128)).astype(np.float32)
    x, xg, gy = L.t(x4), L.t(x4, True), L.t(g4)

    def interp(name, xin, xgin, gyin, **kw):
        out.append((f"interpolate {name}", lambda: F.interpolate(xin, **kw),
                    _fwd_bwd(lambda: F.interpolate(xgin, **kw), gyin)))

    interp("bilinear x2 (4,16,64,64)", x, xg, gy, scale_factor=2, mode="bilinear",
           align_corners=False)
    interp("bilinear x2 align_corners", x, xg, gy, scale_factor=2, mode="bilinear",
           align_corners=True)
    interp("nearest x2 (4,16,64,64)", x, xg, gy, scale_factor=2, mode="nearest")
    interp("bicubic x2 (4,16,64,64)", x, xg, gy, scale_factor=2, mode="bicubic",
           align_corners=False)
    cl = x.contiguous(memory_format=L.mod.channels_last)
    clg = cl.detach().requires_grad_()
    interp("bilinear x2 channels_last", cl, clg, gy, scale_factor=2, mode="bilinear",
           align_corners=False)
    interp("bilinear 64->48 (down)", x, xg, L.t(g4[:, :, :48, :48]), size=(48, 48),
           mode="bilinear", align_corners=False)
    x3 = rng.standard_normal((4, 16, 4096)).astype(np.float32)
    interp("linear x2 (4,16,4096)", L.t(x3), L.t(x3, True),
           L.t(rng.standard_normal((4, 16, 8192)).astype(np.float32)), scale_factor=2,
           mode="linear", align_corners=False)
    x5 = rng.standard_normal((2, 8, 16, 32, 32)).astype(np.float32)
    interp("trilinear x2 (2,8,16,32,32)", L.t(x5), L.t(x5, True),
           L.t(rng.standard_normal((2, 8, 32, 64, 64)).astype(np.float32)), scale_factor=2,
           mode="trilinear", align_corners=False)

    # grid_sample: a perturbed identity grid, as a spatial transformer produces
    yy, xx = np.meshgrid(np.linspace(-1, 1, 64), np.linspace(-1, 1, 64), indexing="ij")
    base = np.stack([xx, yy], -1)[None].repeat(4, 0)
    grid = (base * 1.1 + 0.05 * rng.standard_normal(base.shape)).astype(np.float32)
    gg = rng.standard_normal((4, 16, 64, 64)).astype(np.float32)
    gr, grg, ggy = L.t(grid), L.t(grid, True), L.t(gg)
    for mode, pad in (("bilinear", "zeros"), ("nearest", "zeros"), ("bilinear", "border"),
                      ("bilinear", "reflection"), ("bicubic", "zeros")):
        def f(xin=x, g=gr, mode=mode, pad=pad):
            return F.grid_sample(xin, g, mode=mode, padding_mode=pad, align_corners=False)

        def fg(mode=mode, pad=pad):
            return F.grid_sample(xg, grg, mode=mode, padding_mode=pad, align_corners=False)
        out.append((f"grid_sample {mode}/{pad} (4,16,64,64)", f, _fwd_bwd(fg, ggy)))

    # ctc_loss at CRNN scale (T=30, B=8, C=20, S=10) and a larger one
    for T, B, C, S in ((30, 8, 20, 10), (100, 16, 40, 30)):
        lp = np.log(rng.dirichlet(np.ones(C), (T, B))).astype(np.float32)
        tg = rng.integers(1, C, (B, S)).astype(np.int64)
        il = np.full(B, T, dtype=np.int64)
        tl = rng.integers(S // 2, S + 1, B).astype(np.int64)
        lpt, lpg, tgt, ilt, tlt = L.t(lp), L.t(lp, True), L.t(tg), L.t(il), L.t(tl)
        out.append((f"ctc_loss T={T} B={B} C={C} S={S}",
                    lambda lpt=lpt, tgt=tgt, ilt=ilt, tlt=tlt: F.ctc_loss(lpt, tgt, ilt, tlt),
                    lambda lpg=lpg, tgt=tgt, ilt=ilt, tlt=tlt:
                    F.ctc_loss(lpg, tgt, ilt, tlt).backward()))

    for n, d in ((2000, 3), (500, 64)):
        a = rng.standard_normal((n, d)).astype(np.float32)
        b = rng.standard_normal((n, d)).astype(np.float32)
        at, bt = L.t(a), L.t(b)
        out.append((f"cdist float32 {n}x{d}", lambda at=at, bt=bt: L.mod.cdist(at, bt), None))
    for dt in (np.float64, np.float32):
        u = L.t((rng.random(100_000) * 1.98 - 0.99).astype(dt))
        out.append((f"erfinv {np.dtype(dt).name} 1e5", lambda u=u: L.mod.erfinv(u), None))
    return out


def _row(name, fp, ft, repeat):
    try:
        fp()
    except Exception as e:          # a failing ptcore case shows as such, the rest still run
        print(f"{name}: ptcore raised {type(e).__name__}: {e}", file=sys.stderr)
        fp = None
    # thread CPU time: single-threaded runs on a shared machine, where wall time
    # includes other processes' time slices
    clock = time.thread_time if _args.threads == 1 else None
    return (name, *paired_median_times([fp, ft], repeat=repeat, clock=clock), None)


def main():
    torch = torch_with_threads(_args.threads)
    repeat = 3 if _args.quick else 9
    pc = _cases(_Lib(ptcore, PF), np.random.default_rng(0))
    tc = None
    if torch is not None:
        import torch.nn.functional as TF
        tc = _cases(_Lib(torch, TF), np.random.default_rng(0))
    rows = []
    for i, (name, pf, pfb) in enumerate(pc):
        if _args.only not in name:
            continue
        tf = tc[i][1] if tc else None
        tfb = tc[i][2] if tc else None
        rows.append(_row(name, pf, tf, repeat))
        if pfb is not None:
            rows.append(_row(name + " fwd+bwd", pfb, tfb, repeat))
    print_table(f"resampling, ctc_loss, cdist, erfinv ({_args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
