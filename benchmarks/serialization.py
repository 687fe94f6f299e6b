"""Checkpoint benchmarks: ptcore.save / ptcore.load of a ~100 MB state dict
(a 30-block transformer's weights, 122 tensors) against torch.save /
torch.load(weights_only=True) and NumPy's savez / load, same process.

Both libraries write torch's format, so the rows also time each library
reading the other's file.  A second table times 3000 tiny tensors, where the
pickle's cost per tensor dominates.  Files go to a temporary directory (``--dir``), so
saving includes the page cache's write cost, not the disk's.

Usage: python benchmarks/serialization.py [--threads N] [--quick] [--dir DIR]
"""
import argparse
import io
import os
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, torch_with_threads  # noqa: E402

import ptcore  # noqa: E402


def state_dict(lib, width=256, blocks=30):
    """~100 MB of float32 weights named as a transformer's state dict."""
    rng = np.random.default_rng(0)
    sd = OrderedDict()

    def put(name, *shape):
        sd[name] = lib.from_numpy(rng.standard_normal(shape, dtype=np.float32))
    put("embed.weight", 8192, width)
    for b in range(blocks):
        put(f"blocks.{b}.attn.qkv.weight", 3 * width, width)
        put(f"blocks.{b}.attn.proj.weight", width, width)
        put(f"blocks.{b}.mlp.fc.weight", 4 * width, width)
        put(f"blocks.{b}.mlp.proj.weight", width, 4 * width)
    put("head.bias", 8192)
    return sd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temp dir)")
    args = ap.parse_args()
    torch = torch_with_threads(args.threads)
    repeat = 3 if args.quick else 7
    sdp = state_dict(ptcore)
    nbytes = sum(t.numel() * 4 for t in sdp.values())
    sdt = state_dict(torch) if torch else None
    sdn = {k: v.numpy() for k, v in sdp.items()}
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        pp, pt, pn = (os.path.join(d, n) for n in ("ptcore.pt", "torch.pt", "numpy.npz"))
        ptcore.save(sdp, pp)
        if torch:
            torch.save(sdt, pt)
        np.savez(pn, **sdn)

        def np_load():
            with np.load(pn) as z:
                return {k: z[k] for k in z.files}
        tload = (lambda p: torch.load(p, weights_only=True)) if torch else None
        cases = [
            ("save to a file", lambda: ptcore.save(sdp, pp),
             (lambda: torch.save(sdt, pt)) if torch else None, lambda: np.savez(pn, **sdn)),
            ("save to BytesIO", lambda: ptcore.save(sdp, io.BytesIO()),
             (lambda: torch.save(sdt, io.BytesIO())) if torch else None,
             lambda: np.savez(io.BytesIO(), **sdn)),
            ("load its own file", lambda: ptcore.load(pp),
             (lambda: tload(pt)) if torch else None, np_load),
            ("load its own file, mmap=True", lambda: ptcore.load(pp, mmap=True),
             (lambda: torch.load(pt, weights_only=True, mmap=True)) if torch else None, None),
            ("load the other library's file", (lambda: ptcore.load(pt)) if torch else None,
             (lambda: tload(pp)) if torch else None, None),
        ]
        rows = []
        for name, fp, ft, fn in cases:
            rows.append((name, *paired_median_times([fp, ft, fn], repeat=repeat,
                                                    min_time=0.01, warmup=1)))
    print_table(f"checkpoint of {len(sdp)} float32 tensors, {nbytes / 1e6:.0f} MB "
                f"({args.threads} thread(s); median of {repeat})", rows)
    print("\nThroughput of ptcore: " + ", ".join(
        f"{name} {nbytes / 1e9 / p:.2f} GB/s" for name, p, _, _ in rows if p))

    # many small tensors (an optimizer state of a large model): the pickle's cost per tensor
    small_p = OrderedDict((f"p{i}", ptcore.ones(4)) for i in range(3000))
    small_t = OrderedDict((f"p{i}", torch.ones(4)) for i in range(3000)) if torch else None
    bp, bt = io.BytesIO(), io.BytesIO()
    ptcore.save(small_p, bp)
    if torch:
        torch.save(small_t, bt)
    rows = []
    for name, fp, ft in [
            ("save to BytesIO", lambda: ptcore.save(small_p, io.BytesIO()),
             (lambda: torch.save(small_t, io.BytesIO())) if torch else None),
            ("load from BytesIO", lambda: ptcore.load(io.BytesIO(bp.getvalue())),
             (lambda: torch.load(io.BytesIO(bt.getvalue()), weights_only=True)) if torch
             else None)]:
        rows.append((name, *paired_median_times([fp, ft, None], repeat=repeat, min_time=0.01,
                                                warmup=1)))
    print_table(f"checkpoint of 3000 tensors of 4 floats ({args.threads} thread(s); median of "
                f"{repeat})", rows)


if __name__ == "__main__":
    main()
