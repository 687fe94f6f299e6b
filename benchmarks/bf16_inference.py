"""bfloat16 inference on the CPU: a 4-layer TransformerEncoder (d_model 256,
4 heads, feed-forward 1024, GELU, batch_first) over (8, 128, 256), forward
under no_grad in float32, under ``autocast("cpu", dtype=bfloat16)`` and with
the model and input cast to bfloat16; ptcore and torch built from the same
seed, medians of alternating rounds.  Where the CPU has AVX512-BF16 both
libraries multiply with that instruction (ptcore: ptc_bgemm.h; torch:
oneDNN), elsewhere ptcore's products run in float32.

    python benchmarks/bf16_inference.py [--threads N] [--quick] [--only SUBSTRING]

Target: ratio ptcore/torch <= 1.0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import parse_bench_args  # noqa: E402

_args = parse_bench_args(__doc__)
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
from _harness import paired_median_times, print_cpu, print_table, torch_with_threads  # noqa: E402


def _calls(L, x):
    """(mode, callable) of the library ``L`` on the float32 array ``x``."""
    def build():
        L.manual_seed(0)
        layer = L.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True,
                                             activation="gelu")
        return L.nn.TransformerEncoder(layer, 4).eval()
    m32, m16 = build(), build().to(L.bfloat16)
    x32 = L.from_numpy(x.copy())
    x16 = x32.to(L.bfloat16)

    def fp32():
        with L.no_grad():
            return m32(x32)

    def autocast():
        with L.no_grad(), L.autocast("cpu", dtype=L.bfloat16):
            return m32(x32)

    def bf16():
        with L.no_grad():
            return m16(x16)
    return [("encoder float32", fp32), ("encoder autocast bfloat16", autocast),
            ("encoder bfloat16 model", bf16)]


def main():
    torch = torch_with_threads(_args.threads)
    print_cpu()
    x = np.random.default_rng(0).standard_normal((8, 128, 256)).astype(np.float32)
    pc = _calls(ptcore, x)
    tc = dict(_calls(torch, x)) if torch is not None else {}
    rows = []
    for name, fp in pc:
        if _args.only not in name:
            continue
        p, t = paired_median_times([fp, tc.get(name)], repeat=3 if _args.quick else 9)
        rows.append((name, p, t, None))
    print_table(f"bfloat16 inference, TransformerEncoder 4 x 256 over (8, 128, 256) "
                f"({_args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
