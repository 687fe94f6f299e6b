"""Everyday calls that trailed PyTorch by 2-120x at one thread until issue
63's sweep of stop 94: index loops (gather, scatter_, scatter_add_,
index_add_ rows, ``x[idx] = v``, index_fill_, scatter_reduce amax,
index_reduce mean, bincount, one_hot), flip, tril/triu_indices, float32
atan2, complex64 add/mul/abs, nansum/nanmean, trunc division, nan_to_num,
floating and long ``arange``, group_norm forward and forward+backward;
transposed copies (``.T.contiguous()``), float16/bfloat16 sums, and large
zero-filled tensors, e.g. ``diag_embed`` (stop 95); ``rms_norm`` forward and
forward+backward (one-pass row kernels, 2026-12-05).
ptcore, PyTorch and NumPy (where it has the call) on the same data in the
same process, medians of alternating rounds.

    python benchmarks/op_gaps.py [--threads N] [--quick] [--only SUBSTRING]

Target: ratio ptcore/torch <= 1.0.
"""
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import parse_bench_args  # noqa: E402

_args = parse_bench_args(__doc__)
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
from _harness import paired_median_times, print_table, torch_with_threads  # noqa: E402


def _cases(T, rng):
    """(name, callable) for ptcore or torch (``T``), or NumPy (``T`` None)
    where NumPy has the call, on the same data."""
    def t(a):
        return T.from_numpy(np.array(a)) if T is not None else np.array(a)

    big = rng.standard_normal((1000, 1000)).astype(np.float32)
    idx2 = rng.integers(0, 1000, (1000, 1000))
    rows = rng.integers(0, 65, 768)
    src = rng.standard_normal((768, 128)).astype(np.float32)
    v = rng.integers(0, 1000, 1_000_000)
    nanb = np.where(big > 2, np.nan, big).astype(np.float32)
    cz = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype(np.complex64)
    cw = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype(np.complex64)
    img = rng.standard_normal((16, 64, 32, 32)).astype(np.float32)
    b, i2, r, s, vv, nb, c1, c2 = (t(a) for a in (big, idx2, rows, src, v, nanb, cz, cw))
    i1 = t(rng.integers(0, 1000, 1000))
    m32 = t(rng.standard_normal((1024, 1024)).astype(np.float32))
    m64 = t(rng.standard_normal((1024, 1024)))
    tall = t(rng.standard_normal((4096, 512)).astype(np.float32))
    act = rng.standard_normal((512, 1024)).astype(np.float32)
    if T is None:
        h16 = act.astype(np.float16)
    else:
        h16, b16 = T.from_numpy(act).half(), T.from_numpy(act).bfloat16()
    d32 = t(act[:32])
    table = t(rng.standard_normal((1000, 128)).astype(np.float32))
    rows2k = t(rng.integers(0, 1000, 2048))
    out = []
    if T is None:
        out += [("gather 1000^2 dim 1", lambda: np.take_along_axis(b, i2, 1)),
                ("flip 1000^2 dim 1", lambda: np.ascontiguousarray(b[:, ::-1])),
                ("bincount 1e6", lambda: np.bincount(vv)),
                ("atan2 1000^2", lambda: np.arctan2(b, b)),
                ("complex64 add 512^2", lambda: c1 + c2),
                ("complex64 mul 512^2", lambda: c1 * c2),
                ("complex64 abs 512^2", lambda: np.abs(c1)),
                ("nansum 1000^2", lambda: np.nansum(nb)),
                ("trunc div 1000^2", lambda: np.trunc(b / np.float32(0.3))),
                ("nan_to_num 1000^2", lambda: np.nan_to_num(nb)),
                ("arange(0, 1, 1e-6)", lambda: np.arange(0, 1, 1e-6)),
                ("tril_indices(500, 500)", lambda: np.tril_indices(500)),
                (".T contiguous 1000^2 float32", lambda: np.ascontiguousarray(b.T)),
                (".T contiguous 1024^2 float32", lambda: np.ascontiguousarray(m32.T)),
                (".T contiguous 1024^2 float64", lambda: np.ascontiguousarray(m64.T)),
                (".T contiguous 4096x512 float32", lambda: np.ascontiguousarray(tall.T)),
                ("float16 sum (512, 1024)", lambda: h16.sum()),
                ("float16 sum dim 1", lambda: h16.sum(1)),
                ("index_select 2048 rows of (1000, 128)", lambda: np.take(table, rows2k, 0))]
        return out
    F = T.nn.functional
    w = t(np.zeros((65, 128), np.float32))
    x = T.from_numpy(img.copy()).requires_grad_()
    gw = T.from_numpy(rng.standard_normal(64).astype(np.float32)).requires_grad_()
    gb = T.from_numpy(rng.standard_normal(64).astype(np.float32)).requires_grad_()
    gy = t(rng.standard_normal(img.shape).astype(np.float32))
    x0 = t(img)

    def gn_fb():
        y = F.group_norm(x, 8, gw, gb)
        y.backward(gy)

    def gn_f():
        with T.no_grad():
            return F.group_norm(x0, 8, gw, gb)

    # RMS norm over the rows of a (4096, 1024) activation (a decoder's hidden states)
    hx = T.from_numpy(rng.standard_normal((4096, 1024)).astype(np.float32)).requires_grad_()
    hw = T.from_numpy(rng.standard_normal(1024).astype(np.float32)).requires_grad_()
    hg = t(rng.standard_normal((4096, 1024)).astype(np.float32))
    hx0 = t(hx.detach().numpy())

    def rms_f():
        with T.no_grad():
            return F.rms_norm(hx0, (1024,), hw)

    def rms_fb():
        F.rms_norm(hx, (1024,), hw).backward(hg)
    out += [("index_add_ (65,128) from 768 rows", lambda: w.index_add_(0, r, s)),
            ("gather 1000^2 dim 1", lambda: b.gather(1, i2)),
            ("scatter_ 1000^2 dim 1", lambda: T.zeros(1000, 1000).scatter_(1, i2, b)),
            ("scatter_add_ 1000^2 dim 1", lambda: T.zeros(1000, 1000).scatter_add_(1, i2, b)),
            ("scatter_reduce amax 1000^2", lambda: T.zeros(1000, 1000).scatter_reduce(
                1, i2, b, "amax")),
            ("index_reduce_ mean (100,1000)", lambda: T.zeros(100, 1000).index_reduce_(
                0, i1 % 100, b, "mean")),
            ("x[idx] = 1.0 1000 rows", lambda: b.__setitem__(i1, 1.0)),
            ("index_fill_ 1000 rows", lambda: b.index_fill_(0, i1, 2.0)),
            ("bincount 1e6", lambda: T.bincount(vv)),
            ("one_hot 768 x 65", lambda: F.one_hot(r, 65)),
            ("flip 1000^2 dim 1", lambda: b.flip(1)),
            ("tril_indices(500, 500)", lambda: T.tril_indices(500, 500)),
            ("atan2 1000^2", lambda: T.atan2(b, b)),
            ("complex64 add 512^2", lambda: c1 + c2),
            ("complex64 mul 512^2", lambda: c1 * c2),
            ("complex64 abs 512^2", lambda: c1.abs()),
            ("nansum 1000^2", lambda: nb.nansum()),
            ("nanmean dim 1 1000^2", lambda: nb.nanmean(1)),
            ("trunc div 1000^2", lambda: T.div(b, 0.3, rounding_mode="trunc")),
            ("nan_to_num 1000^2", lambda: nb.nan_to_num()),
            ("arange(0, 1, 1e-6)", lambda: T.arange(0, 1, 1e-6)),
            ("arange(1000000)", lambda: T.arange(1000000)),
            ("group_norm (16,64,32,32) G=8", gn_f),
            ("group_norm fwd+bwd", gn_fb),
            ("rms_norm (4096, 1024)", rms_f),
            ("rms_norm fwd+bwd", rms_fb),
            (".T contiguous 1000^2 float32", lambda: b.T.contiguous()),
            (".T contiguous 1024^2 float32", lambda: m32.T.contiguous()),
            (".T contiguous 1024^2 float64", lambda: m64.T.contiguous()),
            (".T contiguous 4096x512 float32", lambda: tall.T.contiguous()),
            ("float16 sum (512, 1024)", lambda: h16.sum()),
            ("float16 sum dim 1", lambda: h16.sum(1)),
            ("bfloat16 sum (512, 1024)", lambda: b16.sum()),
            ("bfloat16 sum dim 1", lambda: b16.sum(1)),
            ("bfloat16 mean (512, 1024)", lambda: b16.mean()),
            ("diag_embed (32, 512)", lambda: T.diag_embed(d32)),
            ("zeros(32, 512, 512).fill_(1)", lambda: T.zeros(32, 512, 512).fill_(1.0)),
            ("index_select 2048 rows of (1000, 128)", lambda: table.index_select(0, rows2k))]
    return out


def main():
    torch = torch_with_threads(_args.threads)
    warnings.simplefilter("ignore")          # (index_reduce's beta warning)
    repeat = 3 if _args.quick else 11
    pc = _cases(ptcore, np.random.default_rng(0))
    tc = dict(_cases(torch, np.random.default_rng(0))) if torch else {}
    nc = dict(_cases(None, np.random.default_rng(0)))
    clock = time.thread_time if _args.threads == 1 else None
    rows = []
    for name, fp in pc:
        if _args.only not in name:
            continue
        rows.append((name, *paired_median_times([fp, tc.get(name), nc.get(name)],
                                                repeat=repeat, clock=clock)))
    print_table(f"everyday calls that trailed torch ({_args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
