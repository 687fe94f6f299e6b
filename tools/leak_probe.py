"""Repeat failing and exporting ops and report the growth of the process's resident memory
(hardening round 4): an op whose error path, or whose export, leaks memory grows by about its
tensor's size per repetition.  Usage::

    PYTHONPATH=$PWD python tools/leak_probe.py [CASE ...]

Each case runs 50 times to warm up, then 400 times; the growth over those 400 is printed.
"""
import gc
import io
import sys
import warnings
warnings.simplefilter("ignore")

import numpy as np
import ptcore as m
F = m.nn.functional



def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

big = m.ones(256, 1024)   # 1 MiB (float32)
blob = io.BytesIO(); m.save(m.arange(100000.), blob); good = blob.getvalue()
bad = good[: len(good) // 2]
exported = m.ones(256, 1024)
exported.__dlpack__()     # a capsule dropped unconsumed: later resizes must not pin blocks
CASES = {
 "index_oob": lambda: big[m.tensor([10**6])],
 "gather_oob": lambda: big.gather(0, m.full((1, 1024), 999)),
 "as_strided_oob": lambda: big.as_strided((10**7,), (1,)),
 "view_bad": lambda: big.view(3, -1),
 "matmul_bad": lambda: big @ big,
 "cat_bad": lambda: m.cat([big, m.ones(3)]),
 "conv_bad": lambda: F.conv2d(big.view(1, 1, 256, 1024), m.ones(1, 2, 3, 3)),
 "tensor_ragged": lambda: m.tensor([[1.] * 1000, [2.]]),
 "load_trunc": lambda: m.load(io.BytesIO(bad)),
 "dlpack_consumed": lambda: (lambda c: (m.from_dlpack(c), m.from_dlpack(c)))(big.__dlpack__()),
 "dlpack_unconsumed": lambda: big.__dlpack__() and None,
 "np_roundtrip": lambda: m.from_numpy(np.ones((256, 1024))).numpy() and 1/0,
 "sum_out_bad": lambda: m.sum(big, 0, out=m.empty(3, dtype=m.int8)),
 "add_bad_dtype_out": lambda: m.add(big, big, out=m.empty(256, 1024, dtype=m.int64)),
 "embedding_bag_bad": lambda: F.embedding_bag(m.tensor([0, 99]), big, m.tensor([0])),
 "interp_nan": lambda: F.interpolate(big.view(1, 1, 256, 1024), scale_factor=float("nan")),
 "clone_then_fail": lambda: (big.clone() + m.ones(3)),
 "sort_shrunk": lambda: (lambda t: (t.untyped_storage().resize_(4), t.sort()))(big.clone()),
 "index_put_bad": lambda: big.clone().index_put_((m.tensor([999]),), m.ones(1024), accumulate=True),
 "scatter_reduce_bad": lambda: big.clone().scatter_reduce(0, m.full((1, 1024), 999), big[:1], "sum"),
 "linspace_bad": lambda: m.linspace(1e308, -1e308, 100000),
 "resize_after_export": lambda: (exported.untyped_storage().resize_((1 << 20) + 4096),
                                 exported.untyped_storage().resize_(1 << 20)),
 "backward_twice": lambda: (lambda y: (y.backward(), y.backward()))((m.ones(1000, requires_grad=True) * 2).sum()),
}
only = sys.argv[1:] or list(CASES)
for name in only:
    fn = CASES[name]
    for _ in range(50):
        try: fn()
        except Exception: pass
    gc.collect()
    r0 = rss()
    for _ in range(400):
        try: fn()
        except Exception: pass
    gc.collect()
    grow = (rss() - r0) / 2**20
    print(f"{name:22s} {grow:8.2f} MiB", flush=True)
