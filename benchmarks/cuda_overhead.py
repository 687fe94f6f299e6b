"""Where the host time of a small CUDA op goes (a diagnostic for the
latency rows of ``cuda_check.py``): the raw kernel launch through
cuda.bindings' Python wrapper and through ctypes, one ptcore op's host
time against torch's, and cProfile's top entries of ptcore ops, a cuFFT
transform (host time against the GPU time CUDA events measure) and an MLP
training step.

Usage (a machine with a GPU)::

    python benchmarks/cuda_overhead.py [--reps 3000] [--top 18]

``--emulated`` measures the host path alone on any machine: the emulated
device with kernel launches, cuBLAS, cuFFT and device copies stubbed out
(no torch rows), so a change to the Python between an op call and the
driver can be measured without a GPU -- small ops, the matrix products and
reductions of a Linear layer, ``cuda_check.py``'s MLP and LeNet train
steps, and a small GPT's train step.
"""
import argparse
import cProfile
import ctypes
import io
import pstats
import statistics
import sys
import time


def per_call(fn, reps, sync=None, repeats=5):
    fn()
    if sync:
        sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        if sync:
            sync()
        ts.append((time.perf_counter() - t0) / reps)
    return statistics.median(ts) * 1e6


def profile(label, fn, reps, top):
    fn()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(reps):
        fn()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(top)
    print(f"--- cProfile: {label} x {reps} ---")
    print("\n".join(line for line in s.getvalue().splitlines()[4:] if line.strip()))


def emulated(args):
    import os
    os.environ["PTCORE_CUDA_EMULATE"] = "1"
    import ptcore
    from ptcore.cuda.runtime import state as _runtime
    drv = _runtime.lazy_init("cuda_overhead --emulated")
    x = ptcore.ones(1, device="cuda")
    z = ptcore.ones(1 << 12, dtype=ptcore.complex64, device="cuda")
    for name in ("launch", "fft", "memcpy_dtod", "gemm", "memset_d8"):
        setattr(drv, name, lambda *a, **k: None)
    from ptcore.cuda.driver.fast_launch import null_launcher
    drv.launcher = null_launcher()          # the C launch path, minus the kernel
    reps = args.reps
    nn, F = ptcore.nn, ptcore.nn.functional
    a = ptcore.ones(256, 784, device="cuda")
    g = ptcore.ones(256, 1024, device="cuda")
    w = nn.Parameter(ptcore.ones(1024, 784, device="cuda"))
    b = nn.Parameter(ptcore.ones(1024, device="cuda"))
    # LeNet's second convolution and pooling at batch 256
    cx = ptcore.ones(256, 6, 14, 14, device="cuda")
    cw = nn.Parameter(ptcore.ones(16, 6, 5, 5, device="cuda"))
    cb = nn.Parameter(ptcore.ones(16, device="cuda"))
    px = ptcore.ones(256, 16, 10, 10, device="cuda", requires_grad=True)
    cg = ptcore.ones(256, 16, 10, 10, device="cuda")

    def conv_fwd_bwd():
        F.conv2d(cx, cw, cb).backward(cg)

    def pool_fwd_bwd():
        F.max_pool2d(px, 2).backward(cg[:, :, :5, :5].contiguous())
    print("| host path, emulated device, launches stubbed | us per call |\n|---|---|")
    for label, fn in (("add 1 element", lambda: ptcore.add(x, x)),
                      ("mul_ 1 element", lambda: x.mul_(1.0)),
                      ("sum 1 element", lambda: ptcore.sum(x)),
                      ("empty(1)", lambda: ptcore.empty(1, device="cuda")),
                      ("fft 4096 c64", lambda: ptcore.fft.fft(z)),
                      ("mm 256x1024 @ 1024x784", lambda: ptcore.mm(g, w)),
                      ("F.linear 256x784 -> 1024, parameters", lambda: F.linear(a, w, b)),
                      ("sum(dim=0) 256x1024", lambda: g.sum(0)),
                      ("x ** 2, 256x1024", lambda: g ** 2),
                      ("F.conv2d 256x6x14x14, 16x6x5x5, no grad",
                       lambda: F.conv2d(cx, cw.detach(), cb.detach())),
                      ("F.conv2d of parameters (recorded)", lambda: F.conv2d(cx, cw, cb)),
                      ("F.conv2d forward + backward", conv_fwd_bwd),
                      ("F.max_pool2d 256x16x10x10 (recorded)", lambda: F.max_pool2d(px, 2)),
                      ("F.max_pool2d forward + backward", pool_fwd_bwd),
                      ("F.relu forward + backward", lambda: F.relu(px).backward(cg)),
                      ("ones_like(loss)", lambda: ptcore.ones_like(x))):
        print(f"| {label} | {per_call(fn, reps):.1f} |")
    # cuda_check.py's train steps (squared error, SGD with momentum)
    for label, model, xb in (
            ("MLP step 784-1024-1024-10 b256", lambda: nn.Sequential(
                nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)),
             ptcore.ones(256, 784, device="cuda")),
            ("LeNet step b256", lambda: nn.Sequential(
                nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                nn.ReLU(), nn.Linear(84, 10)), ptcore.ones(256, 1, 28, 28, device="cuda"))):
        m = model().to("cuda")
        opt = ptcore.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        yb = ptcore.ones(256, 10, device="cuda")

        def step(m=m, opt=opt, xb=xb, yb=yb):
            opt.zero_grad()
            loss = ((m(xb) - yb) ** 2).mean()
            loss.backward()
            opt.step()
        step()
        print(f"| {label} | {per_call(step, max(1, reps // 20)):.1f} |")
    print(f"| GPT step (2 blocks, d 64, batch 8 x 32 tokens, AdamW, clipping) | "
          f"{per_call(_gpt_step(ptcore), max(1, reps // 100)):.1f} |")
    sys.stdout.flush()
    profile("ptcore.add(1 element), emulated", lambda: ptcore.add(x, x), reps, args.top)
    return 0


def _gpt_step(ptcore):
    """A small GPT's training step on the emulated device with launches
    stubbed: masked_fill'd causal attention, LayerNorm, GELU, dropout,
    cross-entropy, clipping, AdamW (a transformer's mix of host paths).
    Kernels do not run, so the device reads that check indices see no
    kernel's answer: the index checks are skipped and reads give zeros."""
    import ctypes
    import math
    from ptcore.cuda.ops import index as _launch_index
    from ptcore.cuda.runtime import state as _runtime
    nn, F = ptcore.nn, ptcore.nn.functional
    drv = _runtime.lazy_init("cuda_overhead --emulated")
    drv.memcpy_dtoh = lambda dst, src, nbytes, stream: ctypes.memset(dst, 0, nbytes)
    _launch_index._index_bounds = lambda *a, **k: None

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h, self.ln1, self.ln2 = h, nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2, self.drop = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.Dropout(0.1)

        def forward(self, x, mask):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2)
                       for t in self.qkv(self.ln1(x)).split(C, dim=2))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = self.drop(F.softmax(att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf")), dim=-1))
            x = x + self.drop(self.proj((att @ v).transpose(1, 2).contiguous().view(B, T, C)))
            return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))

    class GPT(nn.Module):
        def __init__(self, V=256, d=64, h=4, L=2, T=32):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, d), nn.Parameter(ptcore.zeros(1, T, d))
            self.blocks = nn.ModuleList([Block(d, h) for _ in range(L)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, V, bias=False)
            self.register_buffer("mask", ptcore.tril(ptcore.ones(T, T)).view(1, 1, T, T))

        def forward(self, idx, tgt):
            x = self.tok(idx) + self.pos[:, :idx.size(1)]
            for b in self.blocks:
                x = b(x, self.mask)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))

    m = GPT().to("cuda")
    opt = ptcore.optim.AdamW(m.parameters(), lr=1e-3)
    idx = ptcore.zeros(8, 32, dtype=ptcore.int64, device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        m(idx, idx).backward()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
    step()
    return step


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3000)
    ap.add_argument("--top", type=int, default=18)
    ap.add_argument("--emulated", action="store_true",
                    help="host time only, on the emulated device with launches stubbed out")
    args = ap.parse_args(argv)
    if args.emulated:
        return emulated(args)
    import ptcore
    import torch
    from ptcore.cuda.ops import launch as _launch
    from ptcore.cuda.runtime import state as _runtime
    if not ptcore.cuda.is_available() or _runtime.lazy_init("x").is_emulated:
        print("needs a real CUDA device")
        return 2
    drv = _runtime.lazy_init("x")
    psync, tsync = ptcore.cuda.synchronize, torch.cuda.synchronize
    reps = args.reps
    rows = []

    # raw launches of a one-element fill kernel, arguments prebuilt
    x = ptcore.zeros(1, device="cuda")
    name = "ptc_fill_f32_c"
    e = _launch._entry(0, name)
    cargs = [_launch._ll(1), _launch._ptr(x), _launch._params(d0=1.0)]
    fargs = [_launch._as_ctypes(a) for a in cargs]
    if drv.launcher is not None:
        rows.append(("C launcher (the path ptcore's launches take)", per_call(
            lambda: drv.launcher.launch(e[1], 1, 32, 0, cargs), reps, psync)))
    rows.append(("drv.launch (the driver's Python launch)", per_call(
        lambda: drv.launch(e[1], (1, 1, 1), (32, 1, 1), fargs, 0, 0), reps, psync)))
    params = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in fargs])
    f = drv._functions[e[1]]
    d = drv._d
    rows.append(("cuda.bindings cuLaunchKernel", per_call(
        lambda: d.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, ctypes.addressof(params), 0), reps, psync)))
    c = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    u, vp = ctypes.c_uint, ctypes.c_void_p
    c.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
    c.restype = ctypes.c_int
    rows.append(("ctypes cuLaunchKernel", per_call(
        lambda: c(e[1], 1, 1, 1, 32, 1, 1, 0, None, params, None), reps, psync)))
    rows.append(("current_stream_handle", per_call(lambda: _runtime.current_stream_handle(0), reps)))

    pa = ptcore.ones(1, device="cuda")
    ta = torch.ones(1, device="cuda")
    for label, pf, tf in (("add 1 element", lambda: ptcore.add(pa, pa), lambda: torch.add(ta, ta)),
                          ("mul_ 1 element", lambda: pa.mul_(1.0), lambda: ta.mul_(1.0)),
                          ("sum 1 element", lambda: ptcore.sum(pa), lambda: torch.sum(ta)),
                          ("empty(1)", lambda: ptcore.empty(1, device="cuda"),
                           lambda: torch.empty(1, device="cuda"))):
        rows.append((f"ptcore {label}", per_call(pf, reps, psync)))
        rows.append((f"torch  {label}", per_call(tf, reps, tsync)))
    pc = ptcore.ones(1)
    rows.append(("ptcore CPU add 1 element", per_call(lambda: ptcore.add(pc, pc), reps)))

    # cuFFT: host time per call against the device time CUDA events see
    z = ptcore.randn(1 << 20, dtype=ptcore.complex64, device="cuda")
    tz = torch.randn(1 << 20, dtype=torch.complex64, device="cuda")
    rows.append(("ptcore fft 2^20 c64 (host, synced)", per_call(lambda: ptcore.fft.fft(z), 50, psync)))
    rows.append(("torch  fft 2^20 c64 (host, synced)", per_call(lambda: torch.fft.fft(tz), 50, tsync)))
    e0, e1 = ptcore.cuda.Event(enable_timing=True), ptcore.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(50):
        ptcore.fft.fft(z)
    e1.record()
    e1.synchronize()
    rows.append(("ptcore fft 2^20 c64 (events, per call)", e0.elapsed_time(e1) * 1e3 / 50))
    out = ptcore.empty_like(z)
    rows.append(("drv.fft C2C 2^20 into a preallocated out", per_call(
        lambda: drv.fft(0, 0, "C2C", (1 << 20,), 1, z.data_ptr(), out.data_ptr(), -1), 50, psync)))

    # the dense elementwise kernels' grid cap (blocks per multiprocessor)
    n = 1 << 28
    ba = ptcore.ones(n, device="cuda")
    bo = ptcore.empty(n, device="cuda")
    ptcore.add(ba, ba, out=bo)
    key = next(k for k in _launch._functions if k[2] == "ptc_binary_add_f32_c")
    saved = _launch._functions[key]
    sms = drv.device_properties(0)["multi_processor_count"]
    for per_sm in (4, 8, 16, 32, 1 << 20):
        _launch._functions[key] = (saved[0], saved[1], sms * per_sm)
        us = per_call(lambda: ptcore.add(ba, ba, out=bo), 20, psync)
        rows.append((f"add 2^28 f32, grid cap {per_sm} blocks/SM: TB/s", 3 * 4 * n / us / 1e6))
    _launch._functions[key] = saved
    tb = torch.ones(n, device="cuda")
    tbo = torch.empty(n, device="cuda")
    rows.append(("torch add 2^28 f32: TB/s", 3 * 4 * n / per_call(
        lambda: torch.add(tb, tb, out=tbo), 20, tsync) / 1e6))
    del ba, bo, tb, tbo

    print("| what | us per call (or as named) |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v:.1f} |")
    sys.stdout.flush()

    profile("ptcore.add(1 element)", lambda: ptcore.add(pa, pa), reps, args.top)
    profile("ptcore.sum(1 element)", lambda: ptcore.sum(pa), reps, args.top)
    profile("ptcore.fft.fft 2^20", lambda: ptcore.fft.fft(z), 50, args.top)

    nn = ptcore.nn
    ptcore.manual_seed(0)
    m = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10)).to("cuda")
    opt = ptcore.optim.SGD(m.parameters(), lr=0.01)
    xb = ptcore.randn(128, 256, device="cuda")
    yb = ptcore.randn(128, 10, device="cuda")

    def step():
        opt.zero_grad()
        loss = ((m(xb) - yb) ** 2).mean()
        loss.backward()
        opt.step()
    print(f"MLP step: {per_call(step, 200, psync):.1f} us")
    profile("MLP train step", step, 200, args.top + 12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
