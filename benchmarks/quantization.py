"""Dynamic int8 quantization: a quantize_dynamic'd MLP's forward (the inference a
CPU user runs), the quantize/dequantize round trip, and a plain op while a quantized
tensor lives (the argument scan the quantized layout costs ordinary calls): ptcore vs
PyTorch per call, sorted by ratio.

    python benchmarks/quantization.py

1 thread; paired medians (ptcore and torch alternate).
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare_main  # noqa: E402

warnings.simplefilter("ignore")        # torch 2.13: its quantized tensors are deprecated


def cases(L):
    nn = L.nn
    out = {}
    rng = np.random.default_rng(0)
    for batch, width in ((1, 256), (32, 512), (256, 1024)):
        L.manual_seed(0)
        model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
        q = L.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=L.qint8)
        x = L.from_numpy(rng.standard_normal((batch, width)).astype(np.float32))
        reps = 200 if batch * width < 20000 else 20
        out[f"quantized MLP forward {batch}x{width}"] = (lambda q=q, x=x: q(x), reps)
    x = L.from_numpy(rng.standard_normal((256, 1024)).astype(np.float32))
    out["quantize_per_tensor + dequantize 256x1024"] = (
        lambda x=x: L.quantize_per_tensor(x, 0.05, 3, L.qint8).dequantize(), 50)
    keep = L.quantize_per_tensor(x, 0.05, 3, L.qint8)
    a = L.ones(8)
    out["a + a (8 elements) while a quantized tensor lives"] = (lambda a=a, k=keep: a + a, 5000)
    return out


def main():
    return compare_main(cases, "call")


if __name__ == "__main__":
    sys.exit(main())
