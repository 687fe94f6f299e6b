"""Convolution primitives on the DCGAN, LeNet and ResNet/UNet-block shapes: ptcore vs PyTorch per pass.

    python benchmarks/conv_shapes.py [--threads N] [--repeat R] [--only NAME] [--dtype float64]

Every row is one layer of ``benchmarks/workloads_recurrent_gan.py`` (DCGAN
32x32 batch 64, LeNet-5 batch 64) or of a ResNet/UNet block (1x1 and 3x3
kernels, batch 8-16) and one pass: the forward, the input
gradient and the weight gradient.  PyTorch's passes are timed through
``torch.ops.aten.convolution`` / ``convolution_backward`` (one output mask at
a time), ptcore's through the primitive of ``ptcore.nn.functional._conv``
(``_prim``) that its autograd nodes call.  A transposed convolution's forward
is the input gradient of the mirrored convolution, so its three passes are
the same primitives in another order.  Both libraries run on the same number
of threads, timed alternately (medians of ``--repeat`` rounds).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

# (name, transposed, N, C_in, H, C_out, k, stride, pad): the layer as the model declares it
SHAPES = [
    ("lenet.conv1 1->6 5x5 p2 28", False, 64, 1, 28, 6, 5, 1, 2),
    ("lenet.conv2 6->16 5x5 14", False, 64, 6, 14, 16, 5, 1, 0),
    ("disc.conv1 3->64 4x4 s2 32", False, 64, 3, 32, 64, 4, 2, 1),
    ("disc.conv2 64->128 4x4 s2 16", False, 64, 64, 16, 128, 4, 2, 1),
    ("disc.conv3 128->256 4x4 s2 8", False, 64, 128, 8, 256, 4, 2, 1),
    ("disc.conv4 256->1 4x4 4", False, 64, 256, 4, 1, 4, 1, 0),
    ("gen.convT2 256->128 4x4 s2 4", True, 64, 256, 4, 128, 4, 2, 1),
    ("gen.convT3 128->64 4x4 s2 8", True, 64, 128, 8, 64, 4, 2, 1),
    ("gen.convT4 64->3 4x4 s2 16", True, 64, 64, 16, 3, 4, 2, 1),
    # pointwise and 3x3 layers of a ResNet/UNet block (batch 16)
    ("block.conv1x1 32->64 32", False, 16, 32, 32, 64, 1, 1, 0),
    ("block.conv1x1 64->32 s2 32", False, 16, 64, 32, 32, 1, 2, 0),
    ("block.conv3x3 32->64 p1 32", False, 16, 32, 32, 64, 3, 1, 1),
    ("block.conv3x3 128->256 p1 8", False, 8, 128, 8, 256, 3, 1, 1),
]


def _cases(ptcore, torch, row, dtype):
    """Three (pass name, ptcore fn, torch fn) triples for one layer."""
    from ptcore.nn.functional._conv import _prim
    name, tr, N, C, H, OC, k, s, p = row
    rng = np.random.default_rng(0)
    if not tr:
        OH = (H + 2 * p - k) // s + 1
        x = rng.standard_normal((N, C, H, H)).astype(dtype)
        w = (rng.standard_normal((OC, C, k, k)) * 0.1).astype(dtype)
        gy = rng.standard_normal((N, OC, OH, OH)).astype(dtype)
        cx, cw, cgy = x, w, gy          # the convolution's own operands
    else:
        OH = (H - 1) * s - 2 * p + k
        x = rng.standard_normal((N, C, H, H)).astype(dtype)
        w = (rng.standard_normal((C, OC, k, k)) * 0.1).astype(dtype)
        gy = rng.standard_normal((N, OC, OH, OH)).astype(dtype)
        # mirrored convolution: input gy-shaped (N, OC, OH), output x-shaped
        cx, cw, cgy = gy, w, x
    geo = (2, (1, s, s), (0, p, p), (1, 1, 1), 1, (1,) + cgy.shape[2:])
    P = {n: ptcore.from_numpy(a) for n, a in (("x", cx), ("w", cw), ("gy", cgy))}
    T = {n: torch.from_numpy(a) for n, a in (("x", x), ("w", w), ("gy", gy))}
    conv = torch.ops.aten.convolution
    cbw = torch.ops.aten.convolution_backward
    args = ([s, s], [p, p], [1, 1], tr, [0, 0], 1)

    def t_fwd():
        conv(T["x"], T["w"], None, *args)

    def t_bx():
        cbw(T["gy"], T["x"], T["w"], None, *args, [True, False, False])

    def t_bw():
        cbw(T["gy"], T["x"], T["w"], None, *args, [False, True, False])

    def p_fwd():
        _prim("fwd", P["x"], P["w"], None, geo, tuple(cgy.shape))

    def p_bx():
        _prim("bx", P["gy"], P["w"], None, geo, tuple(cx.shape))

    def p_bw():
        _prim("bw", P["x"], P["gy"], None, geo, tuple(cw.shape))

    if not tr:
        return [("forward", p_fwd, t_fwd), ("grad-input", p_bx, t_bx), ("grad-weight", p_bw, t_bw)]
    # transposed: forward = bx of the mirror, grad-input = fwd of the mirror
    return [("forward", p_bx, t_fwd), ("grad-input", p_fwd, t_bx), ("grad-weight", p_bw, t_bw)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default=None, help="rows whose name contains this")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--cpu-time", action="store_true",
                    help="time process CPU seconds instead of wall time (steadier on a loaded "
                         "machine; at 1 thread the two agree on a quiet one)")
    args = ap.parse_args()
    from _harness import paired_median_times, print_cpu
    import ptcore
    import torch
    ptcore.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print_cpu()
    if args.cpu_time:
        import time
        time.perf_counter = time.process_time     # the harness reads perf_counter
    print(f"threads: {args.threads}; dtype: {args.dtype}; medians of {args.repeat} alternating "
          f"rounds; {'CPU' if args.cpu_time else 'wall'} time")
    print("| layer | pass | ptcore ms | torch ms | ptcore/torch |")
    print("|---|---|---:|---:|---:|")
    tot_p = tot_t = 0.0
    for row in SHAPES:
        if args.only and args.only not in row[0]:
            continue
        for pname, fp, ft in _cases(ptcore, torch, row, np.dtype(args.dtype)):
            tp, tt = paired_median_times([fp, ft], repeat=args.repeat, min_time=0.02, warmup=2)
            tot_p += tp
            tot_t += tt
            print(f"| {row[0]} | {pname} | {tp * 1e3:.3f} | {tt * 1e3:.3f} | {tp / tt:.2f} |",
                  flush=True)
    print(f"| total | | {tot_p * 1e3:.3f} | {tot_t * 1e3:.3f} | {tot_p / tot_t:.2f} |")


if __name__ == "__main__":
    main()
