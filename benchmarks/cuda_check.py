"""ptcore on a CUDA device against PyTorch on the same device (issue 17's list).

Sections (each failure is reported as a row, never stops the run):

* ``ops``     -- every op with a CUDA kernel in the operator table, float32 /
  float16 / bfloat16, contiguous, broadcast and non-contiguous inputs: values
  against torch (tolerance per dtype) and the time ratio ptcore / torch;
* ``gemm``    -- sgemm (TF32 off) and bf16 GemmEx at 8192^3: TFLOP/s, target
  >= 0.95x torch;
* ``bandwidth`` -- ``a + b`` and ``sum`` over 2^28 float32: TB/s, target
  >= 0.9x torch;
* ``latency`` -- microseconds per tiny op (a 1-element add), target <= 1.0x;
* ``train``   -- MLP and LeNet train steps (forward, backward, SGD), target
  <= 1.2x torch's time; the caching allocator's reserved memory stays flat
  over 50 steps;
* ``lenet_profile`` -- the LeNet train step (``train``'s) in pieces, each timed
  with CUDA events in both libraries on the same shapes: each convolution's
  forward, input gradient and weight gradient, max pooling and ReLU forward
  and backward, and the whole step (``rest`` = step minus the pieces it
  holds), with ptcore's kernel launches per piece in the note: where the
  step's remaining gap to torch (cuDNN) lies;
* ``fft``     -- cuFFT: 1-D 2^20 complex and 2-D 2048^2 real transforms;
* ``cache``   -- a second process with the same kernel cache directory makes
  zero NVRTC compiles;
* ``complex`` -- complex64/complex128 elementwise ops, reductions, indexing
  against torch (values, us per call), cgemm/zgemm ``a.mH @ b`` at 4096^3
  (TFLOP/s, target >= 0.9x) and ``randn`` equal to the CPU generator's.
* ``graphs`` -- CUDA graphs: the MLP train step with the model through
  ``make_graphed_callables`` (losses against torch's graphed model, time
  target <= 1.2x), and one replay of a captured chain of 20 one-element ops
  against torch's replay (target <= 1.0x) and against ptcore's eager chain.

Usage::

    python benchmarks/cuda_check.py               # on a GPU: torch must have CUDA
    python benchmarks/cuda_check.py --smoke       # tiny sizes on the emulated device,
                                                  # torch on the CPU as the reference
    python benchmarks/cuda_check.py --json out.json --only ops,gemm

Ratios: for times ``ptcore / torch`` (lower is better); for throughputs
``ptcore / torch`` of TFLOP/s or TB/s (higher is better); the target column
says which.  ``--smoke`` only checks that everything runs and agrees: its
timings are the emulator's and mean nothing.  Exit status 0 unless a value
check failed (``FAIL``) or a section raised (``ERR``); ``MISS`` (a speed
target not met) is reported but does not fail the run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the headline figures first: a run cut short by a time limit still has them
SECTIONS = ("gemm", "bandwidth", "latency", "train", "fft", "graphs", "compile", "lenet_profile",
            "cache", "ops", "complex")

# per-dtype value tolerances (rtol, atol) against torch
TOL = {"float32": (2e-4, 1e-5), "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2)}
RED_TOL = {"float32": (1e-3, 1e-3), "float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}


class Ctx:
    """What a section needs: both libraries, the device strings, sizes."""

    def __init__(self, smoke):
        import ptcore
        import torch
        self.smoke = smoke
        self.flush = lambda: None       # main() sets it: write the rows so far
        self.ptcore = ptcore
        self.torch = torch
        self.pdev = "cuda"
        self.tdev = "cpu" if smoke else "cuda"
        self.rows = []
        self.rng = np.random.default_rng(0)
        # every comparison here is full float32: torch's cuDNN convolutions
        # (and ptcore's, which follow backends.cudnn.allow_tf32 as torch's do)
        # would otherwise run in TF32, each rounding its own way
        for lib in (ptcore, torch):
            lib.backends.cudnn.allow_tf32 = False
            lib.backends.cuda.matmul.allow_tf32 = False

    # --- rows -----------------------------------------------------------------
    def row(self, section, case, pt, th, unit, ratio=None, target=None, status="OK", note=""):
        if ratio is None and pt is not None and th:
            ratio = pt / th
        if status == "OK" and target is not None and ratio is not None and not self.smoke:
            op, bound = target[:2], float(target[2:])
            ok = ratio >= bound if op == ">=" else ratio <= bound
            status = "OK" if ok else "MISS"
        self.rows.append(dict(section=section, case=case, ptcore=pt, torch=th, unit=unit,
                              ratio=ratio, target=target or "", status=status, note=note))

    def error(self, section, case, exc):
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        status = "SKIP" if isinstance(exc, NotImplementedError) else "ERR"
        self.rows.append(dict(section=section, case=case, ptcore=None, torch=None, unit="",
                              ratio=None, target="", status=status, note=msg))
        if status == "ERR" and os.environ.get("PTCORE_CUDA_CHECK_TRACEBACK"):
            traceback.print_exc()

    # --- sync and timing ---------------------------------------------------------
    def psync(self):
        self.ptcore.cuda.synchronize()

    def tsync(self):
        if self.tdev == "cuda":
            self.torch.cuda.synchronize()

    def time(self, fn, sync, reps=None, repeats=None):
        """Median seconds per call of ``fn`` (host wall time, device synchronized)."""
        reps = reps or (1 if self.smoke else 10)
        repeats = repeats or (1 if self.smoke else 5)
        t0 = time.perf_counter()
        fn()
        sync()
        if time.perf_counter() - t0 > 0.25:      # a slow case: time a few calls only
            reps, repeats = 1, min(repeats, 3)
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            sync()
            ts.append((time.perf_counter() - t0) / reps)
        return statistics.median(ts)

    def time_pair(self, pf, tf, target_s=2e-3, repeats=None):
        """Median seconds per call of ptcore's ``pf`` and torch's ``tf``, timed
        in alternating batches (ptcore, torch, ptcore, ...) so that a GPU
        still ramping its clocks up after the host-side checks, or any drift,
        biases neither; each batch holds enough calls (3 to 200) to last about
        ``target_s``, so the synchronization ending it is a small part.
        (``time`` sized its batches from the first call, which for ptcore
        includes compiling the op's kernels: ops first met here were then
        timed one call per batch, synchronization included, while torch's
        were timed three per batch -- a bias of tens of microseconds against
        ptcore in the ops rows of the 2026-11-27 H200 run.)"""
        repeats = repeats or (1 if self.smoke else 7)
        pf()                    # warm-up: the first call compiles kernels (NVRTC) or loads
        self.psync()            # them from the cache, which must not size the batches
        tf()
        self.tsync()
        t0 = time.perf_counter()
        pf()
        self.psync()
        t1 = time.perf_counter()
        tf()
        self.tsync()
        t2 = time.perf_counter()
        one = max(t1 - t0, t2 - t1, 1e-6)
        reps = 1 if self.smoke else max(3, min(200, int(target_s / one)))
        if one > 0.25:
            reps, repeats = 1, min(repeats, 3)
        ps, ts = [], []
        for _ in range(repeats):
            for fn, sync, acc in ((pf, self.psync, ps), (tf, self.tsync, ts)):
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                sync()
                acc.append((time.perf_counter() - t0) / reps)
        return statistics.median(ps), statistics.median(ts)

    def kernel_counts(self, fn):
        """(kernel launches, host synchronizations) of one call of ptcore's
        ``fn``: the launcher's counter, and the driver's device-to-host
        copies and stream/device/event synchronizations (each waits for the
        GPU), counted by wrapping them for this call only."""
        from ptcore.cuda.runtime import state as _runtime
        drv = _runtime.lazy_init("cuda_check")
        launcher = getattr(drv, "launcher", None)
        names = ("memcpy_dtoh", "stream_synchronize", "device_synchronize", "event_synchronize")
        syncs = [0]
        saved = {}                  # name -> (the instance's own attribute or None)
        for name in names:
            orig = getattr(drv, name, None)
            if orig is None:
                continue
            saved[name] = vars(drv).get(name)

            def wrapped(*a, _orig=orig, **k):
                syncs[0] += 1
                return _orig(*a, **k)
            setattr(drv, name, wrapped)
        l0 = launcher.launches if launcher is not None else 0
        try:
            fn()
        finally:
            for name, own in saved.items():
                if own is None:
                    delattr(drv, name)
                else:
                    setattr(drv, name, own)
        launches = (launcher.launches - l0) if launcher is not None else None
        return launches, syncs[0]

    # --- tensors -----------------------------------------------------------------
    def pair(self, arr, dtype):
        """The same values as a ptcore tensor and a torch tensor on their devices."""
        pt = self.ptcore.from_numpy(np.ascontiguousarray(arr)).to(self.pdev)
        th = self.torch.from_numpy(np.ascontiguousarray(arr)).to(self.tdev)
        if dtype != "float32" and arr.dtype == np.float32:
            pt = pt.to(getattr(self.ptcore, dtype))
            th = th.to(getattr(self.torch, dtype))
        return pt, th

    def p2np(self, t):
        t = t.detach()
        if t.is_complex():
            return t.cpu().resolve_conj().numpy()
        if t.dtype in (self.ptcore.float16, self.ptcore.bfloat16):
            t = t.float()
        return t.cpu().numpy()

    def t2np(self, t):
        t = t.detach().resolve_conj()
        if t.is_complex():
            return t.cpu().numpy()
        if t.dtype in (self.torch.float16, self.torch.bfloat16):
            t = t.float()
        return t.cpu().numpy()


def _close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False, f"shape {a.shape} != torch {b.shape}"
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        bad = int((a != b).sum())
        return bad == 0, f"{bad} mismatches"
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    b64 = b.astype(np.complex128 if np.iscomplexobj(b) else np.float64)
    ok = np.allclose(a64, b64, rtol=tol[0], atol=tol[1], equal_nan=True)
    err = float(np.nanmax(np.abs(a64 - b64))) if a64.size else 0.0
    return ok, f"max err {err:.2e}"


# ---------------------------------------------------------------------------
# ops: every op with a CUDA kernel
# ---------------------------------------------------------------------------

UNARY = {"neg", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu", "__neg__", "__abs__"}
POSITIVE = {"log", "sqrt", "pow", "__pow__", "__rpow__"}
BINARY = {"add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt",
          "ge", "__pow__", "__rpow__", "__rsub__", "__rtruediv__"}
INPLACE = {"add_", "sub_", "mul_", "div_"}
REDUCE = {"sum", "mean", "amax", "amin", "max", "min"}
MATMUL = {"mm", "matmul", "bmm", "addmm"}


def _torch_fn(ctx, ns, name):
    T = ctx.torch
    if ns == "Tensor":
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    if ns == "ptcore":
        return getattr(T, name)
    mod = T
    for part in ns.split("."):
        mod = getattr(mod, part)
    return getattr(mod, name)


def _ptcore_fn(ctx, ns, name):
    P = ctx.ptcore
    if ns == "Tensor":
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    if ns == "ptcore":
        return getattr(P, name)
    mod = P
    for part in ns.split("."):
        mod = getattr(mod, part)
    return getattr(mod, name)


def _operands(ctx, dtype, n, flavor):
    """The shared (ptcore, torch) operand pairs A, B, BC (a row to broadcast)
    and At (a transposed copy of A, whose .t() is non-contiguous) of one
    dtype, size and flavor ('', 'positive', 'div': no divisor near 0); made
    once per run (drawing and uploading them per op made the ops section
    take longer than the device lease)."""
    cache = ctx.__dict__.setdefault("_operands", {})
    key = (dtype, n, flavor)
    if key not in cache:
        rng = np.random.default_rng(len(cache))
        rows, cols = n
        a = rng.standard_normal((rows, cols)).astype(np.float32)
        b = rng.standard_normal((rows, cols)).astype(np.float32)
        bc = rng.standard_normal((cols,)).astype(np.float32)
        if flavor == "positive":
            a, b, bc = np.abs(a) + 0.5, np.abs(b) * 0.5, np.abs(bc) * 0.5
        elif flavor == "div":
            b = np.where(np.abs(b) < 0.2, 0.5, b).astype(np.float32)
            bc = np.where(np.abs(bc) < 0.2, 0.5, bc).astype(np.float32)
        cache[key] = (ctx.pair(a, dtype), ctx.pair(b, dtype), ctx.pair(bc, dtype),
                      ctx.pair(np.ascontiguousarray(a.T), dtype))
    return cache[key]


# ---------------------------------------------------------------------------
# input specs of ops beyond the simple families above: name or "ns.name" ->
# (dtypes, or None for all; accumulates (the reduction tolerance); cases).
# A case is (label, (args...), {kwarg: value}); an argument that names an
# entry of the operand table (_spec_operands: name -> (ptcore, torch) pair)
# is that operand, anything else is passed as it is.
# ---------------------------------------------------------------------------

def _specs():
    F32 = ("float32",)
    sp = {}

    def put(names, dtypes, acc, cases):
        for nm in names.split():
            sp[nm] = (dtypes, acc, cases)
    bit2 = [("int32", ("I", "J"), {})]
    put("bitwise_and bitwise_or bitwise_xor __and__ __or__ __xor__ __rand__ __ror__ __rxor__ "
        "__iand__ __ior__ __ixor__ bitwise_and_ bitwise_or_ bitwise_xor_", F32, False, bit2)
    put("bitwise_not __invert__ bitwise_not_", F32, False, [("int32", ("I",), {})])
    put("bitwise_left_shift __lshift__ __ilshift__ bitwise_left_shift_ bitwise_right_shift "
        "__rshift__ __irshift__ bitwise_right_shift_", F32, False, [("int32", ("I", "SH"), {})])
    put("__rlshift__ __rrshift__", F32, False, [("int32", ("SH", "I"), {})])
    put("gcd lcm gcd_ lcm_", F32, False, [("int32", ("IP", "JP"), {})])
    put("__rfloordiv__ __rmod__", None, False, [("scalar", ("BD", 2.5), {})])
    put("cumsum cumsum_ logcumsumexp cummax cummin", F32, True, [("dim=1", ("A", 1), {})])
    put("cumprod cumprod_", F32, True, [("dim=1", ("NEAR1", 1), {})])
    put("softmax log_softmax", None, True, [("dim=-1", ("A", -1), {}), ("dim=0", ("A", 0), {})])
    put("logsumexp", None, True, [("dim=-1", ("A", -1), {})])
    put("where ptcore.where", None, False, [("mask", ("M", "A", "B"), {})])
    put("Tensor.where", None, False, [("mask", ("A", "M", "B"), {})])
    put("masked_fill masked_fill_", None, False, [("mask", ("A", "M", 0.5), {})])
    put("masked_select", None, False, [("mask", ("A", "M"), {})])
    put("masked_scatter masked_scatter_", None, False, [("mask", ("A", "M", "B"), {})])
    put("flip", None, False, [("dims=0,1", ("A", [0, 1]), {})])
    put("roll", None, False, [("shift 3 dim 1", ("A", 3, 1), {})])
    put("repeat", None, False, [("2x1", ("A", 2, 1), {})])
    put("tile", None, False, [("2x1", ("A", (2, 1)), {})])
    put("repeat_interleave", None, False, [("dim 0", ("A", 2), {"dim": 0})])
    put("gather", None, False, [("dim 1", ("A", 1, "IDX"), {})])
    put("take_along_dim", None, False, [("dim 1", ("A", "IDX", 1), {})])
    put("index_select", None, False, [("dim 0", ("A", 0, "ROWS"), {})])
    put("take", None, False, [("flat", ("A", "FLAT"), {})])
    put("scatter scatter_", None, False, [("dim 1", ("A", 1, "UIDX", "SRC"), {})])
    put("scatter_add scatter_add_", None, True, [("dim 1", ("A", 1, "IDX", "SRC"), {})])
    put("scatter_reduce scatter_reduce_", F32, True, [("sum", ("A", 1, "IDX", "SRC", "sum"), {})])
    put("index_add index_add_", None, True, [("dim 0", ("A", 0, "ROWS", "RSRC"), {})])
    put("index_copy index_copy_", None, False, [("dim 0", ("A", 0, "UROWS", "RSRC"), {})])
    put("index_fill index_fill_", None, False, [("dim 0", ("A", 0, "ROWS", 1.5), {})])
    put("topk", F32, False, [("k=5", ("A", 5), {})])
    put("kthvalue", F32, False, [("k=3", ("A", 3), {})])
    put("argsort", F32, False, [("dim -1", ("A",), {})])
    put("addcmul addcmul_", None, False, [("value 0.5", ("A", "B", "BC"), {"value": 0.5})])
    put("addcdiv addcdiv_", None, False, [("value 0.5", ("A", "B", "BD"), {"value": 0.5})])
    put("lerp lerp_", None, False, [("weight 0.3", ("A", "B", 0.3), {})])
    put("dot vdot", None, True, [("1-D", ("V1", "V2"), {})])
    put("mv", None, True, [("2-D @ 1-D", ("A", "VC"), {})])
    put("addmv addmv_", None, True, [("bias", ("VR", "A", "VC"), {})])
    put("outer ger", None, False, [("64 x 64", ("V64", "W64"), {})])
    put("addr addr_", None, True, [("64 x 64", ("S64", "V64", "W64"), {})])
    put("layer_norm rms_norm", None, True, [("last dim", ("A", ("@cols",)), {})])
    put("group_norm", None, True, [("4 groups", ("X3", 4), {})])
    put("nn.functional.batch_norm", None, True, [("training", ("A", None, None), {"training": True})])
    put("instance_norm", F32, True, [("(N,C,L)", ("X3",), {})])
    put("local_response_norm", F32, True, [("size 3", ("X4", 3), {})])
    put("avg_pool1d max_pool1d", None, True, [("k 2", ("X3", 2), {})])
    put("avg_pool2d max_pool2d", None, True, [("k 2", ("X4", 2), {})])
    put("avg_pool3d max_pool3d", None, True, [("k 2", ("X5", 2), {})])
    put("lp_pool1d", F32, True, [("p 2 k 2", ("X3", 2.0, 2), {})])
    put("lp_pool2d", F32, True, [("p 2 k 2", ("X4", 2.0, 2), {})])
    put("adaptive_avg_pool1d adaptive_max_pool1d", None, True, [("7", ("X3", 7), {})])
    put("adaptive_avg_pool2d adaptive_max_pool2d", None, True, [("7x7", ("X4", 7), {})])
    put("adaptive_avg_pool3d adaptive_max_pool3d", None, True, [("4", ("X5", 4), {})])
    put("conv1d", None, True, [("3-tap", ("X3", "W1"), {"padding": 1})])
    put("conv2d", None, True, [("3x3", ("X4", "W2"), {"padding": 1})])
    put("conv3d", None, True, [("3x3x3", ("X5", "W3"), {"padding": 1})])
    put("conv_transpose1d", None, True, [("3-tap", ("X3", "WT1"), {})])
    put("conv_transpose2d", None, True, [("3x3", ("X4", "WT2"), {})])
    put("conv_transpose3d", None, True, [("3x3x3", ("X5", "WT3"), {})])
    put("nn.functional.embedding", None, False, [("rows", ("TOK", "A"), {})])
    put("ptcore.embedding", None, False, [("rows", ("A", "TOK"), {})])
    put("nll_loss", F32, True, [("mean", ("LOGP", "TGT"), {})])
    put("binary_cross_entropy", F32, True, [("mean", ("PROB", "PROB2"), {})])
    put("margin_ranking_loss", F32, True, [("mean", ("V1", "V2", "SIGN"), {})])
    put("cosine_embedding_loss", F32, True, [("mean", ("A", "B", "SIGNR"), {})])
    put("triplet_margin_loss", F32, True, [("mean", ("A", "B", "AT"), {})])
    put("gaussian_nll_loss", F32, True, [("mean", ("A", "B", "VAR"), {})])
    put("prelu", None, False, [("per channel", ("X4", "PW"), {})])
    put("threshold threshold_", None, False, [("0.1 -> 20", ("A", 0.1, 20.0), {})])
    put("unfold", F32, False, [("3x3", ("X4S", 3), {})])
    return sp


SPECS = _specs()


def _spec_operands(ctx, dtype, n, A, B, BC):
    """The operand table of the input specs (pairs on the devices), made
    once per dtype and size; A, B, BC are the op's own copies."""
    cache = ctx.__dict__.setdefault("_spec_operands", {})
    key = (dtype, n)
    if key not in cache:
        rng = np.random.default_rng(7)
        rows, cols = n

        def pr(a):
            return ctx.pair(np.ascontiguousarray(a, dtype=np.float32), dtype)

        def ip(a):                  # integer/bool operands, as they are
            return (ctx.ptcore.from_numpy(np.ascontiguousarray(a)).to(ctx.pdev),
                    ctx.torch.from_numpy(np.ascontiguousarray(a)).to(ctx.tdev))
        a = rng.standard_normal((rows, cols)).astype(np.float32)
        nsub = min(100, rows)
        # image-like operands (N, C, ...) of about the size of A
        if ctx.smoke:
            s3, s4, s5, s4s = (2, 8, 16), (2, 4, 8, 8), (1, 4, 4, 8, 8), (1, 2, 8, 8)
        else:
            s3, s4, s5, s4s = (16, 128, 1024), (8, 16, 128, 128), (2, 8, 32, 64, 64), (2, 4, 32, 32)
        t = {
            "I": ip(rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)),
            "J": ip(rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)),
            "SH": ip(rng.integers(0, 6, (rows, cols)).astype(np.int32)),
            "IP": ip(rng.integers(1, 1000, (rows, cols)).astype(np.int32)),
            "JP": ip(rng.integers(1, 1000, (rows, cols)).astype(np.int32)),
            "NEAR1": pr(1.0 + 0.001 * a),
            "M": ip(rng.random((rows, cols)) < 0.5),
            "IDX": ip(rng.integers(0, cols, (rows, 5))),
            "UIDX": ip(np.stack([rng.permutation(cols)[:5] for _ in range(rows)])),
            "SRC": pr(rng.standard_normal((rows, 5))),
            "ROWS": ip(rng.integers(0, rows, nsub)),
            "UROWS": ip(rng.permutation(rows)[:nsub]),
            "RSRC": pr(rng.standard_normal((nsub, cols))),
            "FLAT": ip(rng.integers(0, rows * cols, 1000)),
            "V1": pr(rng.standard_normal(cols)), "V2": pr(rng.standard_normal(cols)),
            "VC": pr(rng.standard_normal(cols)), "VR": pr(rng.standard_normal(rows)),
            "V64": pr(rng.standard_normal(64)), "W64": pr(rng.standard_normal(64)),
            "S64": pr(rng.standard_normal((64, 64))),
            "BD": pr(np.where(np.abs(a) < 0.2, 0.5, a)),
            "X3": pr(rng.standard_normal(s3)), "X4": pr(rng.standard_normal(s4)),
            "X5": pr(rng.standard_normal(s5)), "X4S": pr(rng.standard_normal(s4s)),
            "W1": pr(rng.standard_normal((32, s3[1], 3)) * 0.05),
            "W2": pr(rng.standard_normal((32, s4[1], 3, 3)) * 0.1),
            "W3": pr(rng.standard_normal((8, s5[1], 3, 3, 3)) * 0.1),
            "WT1": pr(rng.standard_normal((s3[1], 16, 3)) * 0.05),
            "WT2": pr(rng.standard_normal((s4[1], 8, 3, 3)) * 0.1),
            "WT3": pr(rng.standard_normal((s5[1], 4, 3, 3, 3)) * 0.1),
            "PW": pr(rng.random(s4[1]) * 0.5),
            "TOK": ip(rng.integers(0, rows, 512)),
            "LOGP": pr(a - np.log(np.exp(a).sum(1, keepdims=True))),
            "TGT": ip(rng.integers(0, cols, rows)),
            "PROB": pr(1 / (1 + np.exp(-a))), "PROB2": pr(rng.random((rows, cols))),
            "SIGN": pr(np.sign(rng.standard_normal(cols)) + (rng.standard_normal(cols) == 0)),
            "SIGNR": pr(np.where(rng.random(rows) < 0.5, -1.0, 1.0)),
            "VAR": pr(rng.random((rows, cols)) + 0.1),
        }
        cache[key] = t
    t = dict(cache[key])
    t.update(A=A, B=B, BC=BC, AT=(A[0].flip(0), A[1].flip(0)))
    return t


def _spec_key(ns, name):
    q = f"{ns}.{name}"
    return q if q in SPECS else name if name in SPECS else None


def _spec_cases(ctx, key, name, dtype, n, A, B, BC, sel):
    dtypes, acc, cases = SPECS[key]
    if dtypes is not None and dtype not in dtypes:
        return [], acc
    T = _spec_operands(ctx, dtype, n, A, B, BC)
    cols = n[1]

    def arg(v, L):
        if isinstance(v, str) and v in T:
            pair = T[v]
            if pair is None:
                raise ValueError(f"operand {v} does not fit the size {n}")
            return pair[sel[L]].clone() if name.endswith("_") else pair[sel[L]]
        if isinstance(v, tuple) and v and v[0] == "@cols":
            return (cols,)
        return v
    out = []
    for label, args, kwargs in cases:
        out.append((label, lambda L, args=args, kwargs=kwargs:
                    (tuple(arg(a, L) for a in args), {k: arg(v, L) for k, v in kwargs.items()})))
    return out, acc


def _cases(ctx, ns, name, dtype, n):
    """[(label, make_args(lib) -> (args, kwargs))] for one op; make_args
    returns the arguments for ptcore ('p') or torch ('t')."""
    rng = ctx.rng
    rows, cols = n
    flavor = "positive" if name in POSITIVE else "div" if name in ("div", "__rtruediv__", "div_") else ""
    # each op gets its own device copies (in-place ops, __iadd__ & co. must
    # not change the shared operands)
    A, B, BC, At = ((x[0].clone(), x[1].clone()) for x in _operands(ctx, dtype, n, flavor))
    sel = {"p": 0, "t": 1}
    out = []
    if name in UNARY:
        out.append(("contig", lambda L: ((A[sel[L]],), {})))
        out.append(("strided", lambda L: ((At[sel[L]].t(),), {})))
    elif name in BINARY:
        if name in ("__rpow__", "__rsub__", "__rtruediv__"):
            out.append(("scalar", lambda L: ((A[sel[L]], 2.0), {})))
        else:
            out.append(("contig", lambda L: ((A[sel[L]], B[sel[L]]), {})))
            out.append(("broadcast", lambda L: ((A[sel[L]], BC[sel[L]]), {})))
            out.append(("strided", lambda L: ((At[sel[L]].t(), B[sel[L]]), {})))
    elif name in INPLACE:
        out.append(("contig", lambda L: ((A[sel[L]].clone(), B[sel[L]]), {})))
    elif name in REDUCE:
        out.append(("all", lambda L: ((A[sel[L]],), {})))
        if name in ("sum", "mean", "amax", "amin"):
            out.append(("dim=-1", lambda L: ((A[sel[L]],), {"dim": -1})))
            out.append(("dim=0", lambda L: ((A[sel[L]],), {"dim": 0})))
    elif name in MATMUL:
        k = min(cols, 512)
        m1 = ctx.pair(rng.standard_normal((rows, k)).astype(np.float32), dtype)
        m2 = ctx.pair(rng.standard_normal((k, cols)).astype(np.float32), dtype)
        if name == "bmm":
            b1 = ctx.pair(rng.standard_normal((4, rows // 4 or 1, k)).astype(np.float32), dtype)
            b2 = ctx.pair(rng.standard_normal((4, k, 64)).astype(np.float32), dtype)
            out.append(("batched", lambda L: ((b1[sel[L]], b2[sel[L]]), {})))
        elif name == "addmm":
            out.append(("bias", lambda L: ((BC[sel[L]], m1[sel[L]], m2[sel[L]]), {})))
        else:
            out.append(("2d", lambda L: ((m1[sel[L]], m2[sel[L]]), {})))
            out.append(("transposed", lambda L: ((m1[sel[L]], m2[sel[L]].t().contiguous().t()), {})))
    elif ns == "fft":
        if dtype != "float32":
            return []
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        X = ctx.pair(x, "float32")
        if name.startswith(("irfft", "hfft")):
            # irfft2/irfftn read a Hermitian half-spectrum over all their dims
            # (rfft2/rfftn of a real array): on another input cuFFT's
            # multi-dimensional C2R and the ifft-then-irfft definition (NumPy's,
            # torch's CPU, ptcore's) differ by design
            fwd = {"irfft2": "rfft2", "irfftn": "rfftn"}.get(name, "rfft")
            kw = {} if fwd != "rfft" else {"dim": -1}
            Xc = (getattr(ctx.ptcore.fft, fwd)(X[0], **kw), getattr(ctx.torch.fft, fwd)(X[1], **kw))
            out.append(("half", lambda L: ((Xc[sel[L]],), {})))
        elif name.startswith(("rfft", "ihfft")):
            out.append(("real", lambda L: ((X[sel[L]],), {})))
        else:
            Xc = (X[0].to(ctx.ptcore.complex64), X[1].to(ctx.torch.complex64))
            out.append(("complex", lambda L: ((Xc[sel[L]],), {})))
    elif _spec_key(ns, name):
        out, _ = _spec_cases(ctx, _spec_key(ns, name), name, dtype, n, A, B, BC, sel)
    else:
        # an op registered by someone else: try it as unary, then binary
        out.append(("generic-unary", lambda L: ((A[sel[L]],), {})))
        out.append(("generic-binary", lambda L: ((A[sel[L]], B[sel[L]]), {})))
    return out


def _registered_cuda_ops(ctx):
    ctx.ptcore.zeros(1, device="cuda")          # initialises CUDA: kernels are registered
    from ptcore._dispatch.table import OPS
    seen = []
    for (ns, name), opdef in sorted(OPS.items()):
        if "cuda" in opdef.kernels:
            seen.append((ns, name))
    return seen


def section_ops(ctx):
    n = (64, 48) if ctx.smoke else (2048, 1024)
    dtypes = ("float32", "bfloat16") if ctx.smoke else ("float32", "float16", "bfloat16")
    ops = _registered_cuda_ops(ctx)
    ctx.row("ops", f"{len(ops)} ops with a CUDA kernel", None, None, "", status="OK",
            note=", ".join(f"{ns}.{n}" if ns != "ptcore" else n for ns, n in ops)[:300])
    last_flush = time.perf_counter()
    for ns, name in ops:
        if time.perf_counter() - last_flush > 15:
            ctx.flush()         # a run cut short by its time limit keeps the rows so far
            last_flush = time.perf_counter()
        try:
            _torch_fn(ctx, ns, name)
        except AttributeError:
            ctx.row("ops", f"{ns}.{name}", None, None, "", status="SKIP",
                    note="torch has no such function (a ptcore-only alias)")
            continue
        for dtype in dtypes:
            try:
                cases = _cases(ctx, ns, name, dtype, n)
            except Exception as e:
                ctx.error("ops", f"{ns}.{name} {dtype}", e)
                continue
            generic = cases and cases[0][0].startswith("generic")
            for label, make in cases:
                case = f"{ns}.{name} {dtype} {label}"
                try:
                    pf, tf = _ptcore_fn(ctx, ns, name), _torch_fn(ctx, ns, name)
                    pa, pk = make("p")
                    ta, tk = make("t")
                    pr, tr = pf(*pa, **pk), tf(*ta, **tk)
                    if isinstance(pr, tuple):
                        pr, tr = pr[0], tr[0]
                    key = _spec_key(ns, name)
                    acc = name in REDUCE or name in MATMUL or (key is not None and SPECS[key][1])
                    tol = RED_TOL[dtype] if acc else TOL[dtype]
                    want = ctx.t2np(tr)
                    if ns == "fft":     # sums of many terms: tolerance scaled by the magnitude
                        tol = (1e-4, 1e-5 * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0))
                    ok, note = _close(ctx.p2np(pr), want, tol)
                    if not ok:
                        # a guessed signature (random ops, other defaults) proves nothing
                        ctx.row("ops", case, None, None, "", status="SKIP" if generic else "FAIL",
                                note=("values differ under a guessed signature: give the op an "
                                      "input spec; " if generic else "") + note)
                        if generic:
                            break
                        continue
                    pt, tt = ctx.time_pair(lambda: pf(*pa, **pk), lambda: tf(*ta, **tk))
                    nk, ns_ = ctx.kernel_counts(lambda: pf(*pa, **pk))
                    note = f"{note}; {nk} kernels, {ns_} syncs" if nk is not None else note
                    ctx.row("ops", case, pt * 1e6, tt * 1e6, "us", target="<=1.5", note=note)
                except Exception as e:
                    if generic:
                        continue        # the other generic signature may fit
                    ctx.error("ops", case, e)
                    continue
                if generic:
                    break               # one guessed signature that works is enough
            if generic and not any(r["case"].startswith(f"{ns}.{name} {dtype}") for r in ctx.rows):
                ctx.row("ops", f"{ns}.{name} {dtype}", None, None, "", status="SKIP",
                        note="no input spec in cuda_check.py for this op")


# ---------------------------------------------------------------------------
# gemm, bandwidth, latency
# ---------------------------------------------------------------------------

def section_gemm(ctx):
    P, T = ctx.ptcore, ctx.torch
    n = 64 if ctx.smoke else 8192
    flops = 2.0 * n ** 3
    for dtype, label in (("float32", "sgemm (TF32 off)"), ("bfloat16", "bf16 GemmEx")):
        try:
            a = ctx.rng.standard_normal((n, n)).astype(np.float32)
            b = ctx.rng.standard_normal((n, n)).astype(np.float32)
            pa, ta = ctx.pair(a, dtype)
            pb, tb = ctx.pair(b, dtype)
            if ctx.tdev == "cuda":
                T.backends.cuda.matmul.allow_tf32 = False
            P.backends.cuda.matmul.allow_tf32 = False
            pr, tr = P.matmul(pa, pb), T.matmul(ta, tb)
            rel = float(np.max(np.abs(ctx.p2np(pr) - ctx.t2np(tr)))) / float(np.max(np.abs(ctx.t2np(tr))))
            if rel > (1e-4 if dtype == "float32" else 2e-2):
                ctx.row("gemm", f"{label} {n}^3", None, None, "", status="FAIL",
                        note=f"relative max err {rel:.2e}")
                continue
            pt, tt = ctx.time_pair(lambda: P.matmul(pa, pb), lambda: T.matmul(ta, tb), target_s=0.02)
            ctx.row("gemm", f"{label} {n}^3", flops / pt / 1e12, flops / tt / 1e12, "TFLOP/s",
                    target=">=0.95", note=f"rel err {rel:.1e}")
        except Exception as e:
            ctx.error("gemm", f"{label} {n}^3", e)


def section_bandwidth(ctx):
    P, T = ctx.ptcore, ctx.torch
    n = 1 << (12 if ctx.smoke else 28)
    try:
        pa, ta = ctx.pair(ctx.rng.random(n, dtype=np.float32) - 0.5, "float32")
        pb, tb = ctx.pair(ctx.rng.random(n, dtype=np.float32) - 0.5, "float32")
    except Exception as e:
        ctx.error("bandwidth", "inputs", e)
        return
    for case, pf, tf, nbytes, tol in (
            (f"add 2^{n.bit_length() - 1} f32", lambda: P.add(pa, pb), lambda: T.add(ta, tb),
             3 * 4 * n, TOL["float32"]),
            (f"sum 2^{n.bit_length() - 1} f32", lambda: P.sum(pa), lambda: T.sum(ta), 4 * n,
             (1e-3, 1e-1))):
        try:
            ok, note = _close(ctx.p2np(pf()), ctx.t2np(tf()), tol)
            if not ok:
                ctx.row("bandwidth", case, None, None, "", status="FAIL", note=note)
                continue
            pt, tt = ctx.time_pair(pf, tf, target_s=0.01)
            ctx.row("bandwidth", case, nbytes / pt / 1e12, nbytes / tt / 1e12, "TB/s",
                    target=">=0.90", note=note)
        except Exception as e:
            ctx.error("bandwidth", case, e)


def section_latency(ctx):
    P, T = ctx.ptcore, ctx.torch
    try:
        pa, ta = ctx.pair(np.ones(1, np.float32), "float32")
        reps = 20 if ctx.smoke else 2000
        for case, pf, tf in (("add 1 element", lambda: P.add(pa, pa), lambda: T.add(ta, ta)),
                             ("mul_ in place", lambda: pa.mul_(1.0), lambda: ta.mul_(1.0)),
                             ("sum 1 element", lambda: P.sum(pa), lambda: T.sum(ta))):
            pt = ctx.time(pf, ctx.psync, reps=reps)
            tt = ctx.time(tf, ctx.tsync, reps=reps)
            ctx.row("latency", case, pt * 1e6, tt * 1e6, "us/op", target="<=1.00")
    except Exception as e:
        ctx.error("latency", "tiny ops", e)


# ---------------------------------------------------------------------------
# training steps and reserved memory
# ---------------------------------------------------------------------------

def _mlp(lib, d_in, hidden):
    nn = lib.nn
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


def _lenet(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def _gpt(lib, vocab, block, n_layer, n_head, n_embd):
    """A small GPT (token and position embeddings, pre-norm blocks of causal
    scaled-dot-product attention and a GELU MLP, the LM head) in ``lib``."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.qkv, self.proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.fc, self.out = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln, self.head = nn.LayerNorm(n_embd), nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx):
            T = idx.shape[1]
            pos = lib.arange(T, device=idx.device)
            return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))
    return GPT()


def _copy_weights(pm, tm):
    """torch model's initial weights into the ptcore model (same architecture)."""
    import ptcore
    tp = list(tm.parameters())
    pp = list(pm.parameters())
    with ptcore.no_grad():
        for p, t in zip(pp, tp):
            p.copy_(ptcore.from_numpy(t.detach().cpu().numpy()))


def _mse(lib, out, y):
    return ((out - y) ** 2).mean()


def _lm_loss(lib, logits, y):
    return lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def _sgd_step(lib, m, x, y, loss_fn=_mse):
    """A train step of ``m`` in ``lib``: forward, the loss (squared error by
    default), backward, SGD with momentum; it returns its loss."""
    opt = lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)

    def run():
        opt.zero_grad()
        loss = loss_fn(lib, m(x), y)
        loss.backward()
        opt.step()
        return loss
    return run


def _sgd_steps(ctx, pm, tm, px, py, tx, ty, loss_fn=_mse):
    """(ptcore step, torch step) of :func:`_sgd_step`."""
    return (_sgd_step(ctx.ptcore, pm, px, py, loss_fn),
            _sgd_step(ctx.torch, tm, tx, ty, loss_fn))


def _train(ctx, name, make_p, make_t, x, y, steps, loss_fn=_mse, dtypes=("float32", "float32")):
    """Time a train step (forward, the loss, backward, SGD) in both
    libraries from the same weights; compare the losses; watch the reserved memory."""
    P, T = ctx.ptcore, ctx.torch
    T.manual_seed(0)
    tm = make_t().to(ctx.tdev)
    pm = make_p()
    _copy_weights(pm, tm)
    pm = pm.to(ctx.pdev)
    px, tx = ctx.pair(x, dtypes[0])
    py, ty = ctx.pair(y, dtypes[1])
    pstep, tstep = _sgd_steps(ctx, pm, tm, px, py, tx, ty, loss_fn)
    pl = [float(pstep().item()) for _ in range(3)]
    tl = [float(tstep().item()) for _ in range(3)]
    ok = np.allclose(pl, tl, rtol=2e-3, atol=1e-5)
    if not ok:
        ctx.row("train", f"{name} losses", None, None, "", status="FAIL",
                note=f"ptcore {pl} torch {tl}")
        return
    pt = ctx.time(pstep, ctx.psync, reps=5 if not ctx.smoke else 1)
    tt = ctx.time(tstep, ctx.tsync, reps=5 if not ctx.smoke else 1)
    ctx.row("train", f"{name} step", pt * 1e3, tt * 1e3, "ms/step", target="<=1.00",
            note=f"3-step losses agree ({pl[-1]:.4g})")
    # reserved memory across `steps` more steps
    ctx.psync()
    r0 = P.cuda.memory_reserved()
    for _ in range(steps):
        pstep()
    ctx.psync()
    r1 = P.cuda.memory_reserved()
    ctx.row("train", f"{name} reserved over {steps} steps", r1 / 2**20, r0 / 2**20, "MiB",
            ratio=r1 / r0 if r0 else None, target="<=1.00",
            status="OK" if r1 <= r0 else ("OK" if ctx.smoke else "MISS"),
            note=f"start {r0} B, end {r1} B")


def section_train(ctx):
    batch = 8 if ctx.smoke else 256
    steps = 5 if ctx.smoke else 50
    d_in, hidden = (32, 16) if ctx.smoke else (784, 1024)
    x = ctx.rng.standard_normal((batch, d_in)).astype(np.float32)
    y = ctx.rng.standard_normal((batch, 10)).astype(np.float32)
    try:
        _train(ctx, "MLP", lambda: _mlp(ctx.ptcore, d_in, hidden),
               lambda: _mlp(ctx.torch, d_in, hidden), x, y, steps)
    except Exception as e:
        ctx.error("train", "MLP", e)
    xi = ctx.rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    try:
        _train(ctx, "LeNet", lambda: _lenet(ctx.ptcore), lambda: _lenet(ctx.torch), xi, y, steps)
    except Exception as e:
        ctx.error("train", "LeNet", e)
    # issue 63's small GPT: 4 layers, 4 heads, width 256, 128 tokens (smoke: 1 layer, width 16)
    vocab, block, n_layer, n_head, n_embd, gb = ((64, 8, 1, 2, 16, 2) if ctx.smoke
                                                 else (512, 128, 4, 4, 256, 16))
    tok = ctx.rng.integers(0, vocab, (gb, block + 1))
    try:
        _train(ctx, "small GPT", lambda: _gpt(ctx.ptcore, vocab, block, n_layer, n_head, n_embd),
               lambda: _gpt(ctx.torch, vocab, block, n_layer, n_head, n_embd),
               tok[:, :-1], tok[:, 1:], steps, loss_fn=_lm_loss, dtypes=("int64", "int64"))
    except Exception as e:
        ctx.error("train", "small GPT", e)


# ---------------------------------------------------------------------------
# the LeNet step in pieces
# ---------------------------------------------------------------------------

def _event_ms(ctx, lib, fn, reps, repeats):
    """Median milliseconds per call of ``fn`` between two CUDA events around
    ``reps`` calls (the host's clock for torch on the CPU in --smoke)."""
    if lib is ctx.torch and ctx.tdev != "cuda":
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            ts.append((time.perf_counter() - t0) * 1e3 / reps)
        return statistics.median(ts)
    ts = []
    for _ in range(repeats):
        a, b = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / reps)
    return statistics.median(ts)


def _lenet_pieces(lib, dev, arrays):
    """{piece: fn} of one library: the LeNet step's convolutions, pools and
    ReLUs at the step's shapes, each gradient alone (autograd.grad with only
    the one input requiring grad, so no other gradient is computed; the graph
    kept)."""
    F = lib.nn.functional
    t = {k: lib.from_numpy(v).to(dev) for k, v in arrays.items()}
    grad = lib.autograd.grad

    def leaf(name):
        return t[name].detach().clone().requires_grad_()
    w1, b1, x2, w2, b2, p1, p2, p1r = (leaf(k) for k in ("w1", "b1", "x2", "w2", "b2", "p1", "p2",
                                                         "p1"))
    y1w = F.conv2d(t["x1"], w1, t["b1"], padding=2)
    y2x = F.conv2d(x2, t["w2"], t["b2"])
    y2w = F.conv2d(t["x2"], w2, t["b2"])
    y1b = F.conv2d(t["x1"], t["w1"], b1, padding=2)
    y2b = F.conv2d(t["x2"], t["w2"], b2)
    q1, q2 = F.max_pool2d(p1, 2), F.max_pool2d(p2, 2)
    r1 = F.relu(p1r)
    # each piece occurs once in the step (relu1: the ReLU after conv1)
    return {
        "conv1 forward": lambda: F.conv2d(t["x1"], t["w1"], t["b1"], padding=2),
        "conv1 weight grad": lambda: grad(y1w, w1, t["g1"], retain_graph=True)[0],
        "conv2 forward": lambda: F.conv2d(t["x2"], t["w2"], t["b2"]),
        "conv2 input grad": lambda: grad(y2x, x2, t["g2"], retain_graph=True)[0],
        "conv2 weight grad": lambda: grad(y2w, w2, t["g2"], retain_graph=True)[0],
        "conv bias grads": lambda: grad([y1b, y2b], [b1, b2], [t["g1"], t["g2"]],
                                        retain_graph=True)[0],
        "pool1 forward": lambda: F.max_pool2d(t["p1"], 2),
        "pool1 backward": lambda: grad(q1, p1, t["gq1"], retain_graph=True)[0],
        "pool2 forward": lambda: F.max_pool2d(t["p2"], 2),
        "pool2 backward": lambda: grad(q2, p2, t["gq2"], retain_graph=True)[0],
        "relu1 forward": lambda: F.relu(t["p1"]),
        "relu1 backward": lambda: grad(r1, p1r, t["g1"], retain_graph=True)[0],
    }


def section_lenet_profile(ctx):
    P, T = ctx.ptcore, ctx.torch
    batch = 4 if ctx.smoke else 256
    reps, repeats = (1, 1) if ctx.smoke else (20, 7)
    rng = ctx.rng

    def a(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    arrays = dict(x1=a(batch, 1, 28, 28), w1=a(6, 1, 5, 5) * 0.2, b1=a(6), g1=a(batch, 6, 28, 28),
                  x2=a(batch, 6, 14, 14), w2=a(16, 6, 5, 5) * 0.1, b2=a(16), g2=a(batch, 16, 10, 10),
                  p1=a(batch, 6, 28, 28), gq1=a(batch, 6, 14, 14), p2=a(batch, 16, 10, 10),
                  gq2=a(batch, 16, 5, 5))
    pp = _lenet_pieces(P, ctx.pdev, arrays)
    tp = _lenet_pieces(T, ctx.tdev, arrays)
    total_p = total_t = 0.0
    for name in pp:
        try:
            pv, tv = ctx.p2np(pp[name]()), ctx.t2np(tp[name]())
            ok, why = _close(pv, tv, (1e-3, 1e-3))
            if not ok:
                ctx.row("lenet_profile", name, None, None, "", status="FAIL", note=why)
                continue
            launches, syncs = ctx.kernel_counts(pp[name])
            ctx.psync()
            ctx.tsync()
            pm = _event_ms(ctx, P, pp[name], reps, 1)       # warm-up (kernels compiled)
            tm = _event_ms(ctx, T, tp[name], reps, 1)
            pm = _event_ms(ctx, P, pp[name], reps, repeats)
            tm = _event_ms(ctx, T, tp[name], reps, repeats)
            total_p += pm
            total_t += tm
            ctx.row("lenet_profile", name, pm, tm, "ms",
                    note=f"ptcore: {launches} launches, {syncs} syncs")
        except Exception as e:
            ctx.error("lenet_profile", name, e)
    # the whole step (the train section's model, loss and SGD), then the rest
    try:
        T.manual_seed(0)
        tm_ = _lenet(T).to(ctx.tdev)
        pm_ = _lenet(P)
        _copy_weights(pm_, tm_)
        pm_ = pm_.to(ctx.pdev)
        px, tx = ctx.pair(arrays["x1"], "float32")
        y = rng.standard_normal((batch, 10)).astype(np.float32)
        py, ty = ctx.pair(y, "float32")
        pstep, tstep = _sgd_steps(ctx, pm_, tm_, px, py, tx, ty)
        launches, syncs = ctx.kernel_counts(pstep)
        for _ in range(2):
            pstep()
            tstep()
        sp = _event_ms(ctx, P, pstep, max(1, reps // 4), repeats)
        st = _event_ms(ctx, T, tstep, max(1, reps // 4), repeats)
        ctx.row("lenet_profile", "whole step", sp, st, "ms", target="<=1.00",
                note=f"batch {batch}; ptcore: {launches} launches, {syncs} syncs")
        ctx.row("lenet_profile", "rest (relu2-4, linears, loss, SGD, gaps)", sp - total_p,
                st - total_t, "ms", note="whole step minus the pieces above (each once per step)")
    except Exception as e:
        ctx.error("lenet_profile", "whole step", e)


# ---------------------------------------------------------------------------
# CUDA graphs
# ---------------------------------------------------------------------------

def _graphed_train(ctx, d_in, hidden, batch):
    """The MLP train step with the model graphed in both libraries (torch's
    eager model on the CPU under --smoke, which has no CUDA graphs)."""
    P, T = ctx.ptcore, ctx.torch
    x = ctx.rng.standard_normal((batch, d_in)).astype(np.float32)
    y = ctx.rng.standard_normal((batch, 10)).astype(np.float32)
    T.manual_seed(0)
    tm = _mlp(T, d_in, hidden).to(ctx.tdev)
    pm = _mlp(P, d_in, hidden)
    _copy_weights(pm, tm)
    pm = pm.to(ctx.pdev)
    px, tx = ctx.pair(x, "float32")
    py, ty = ctx.pair(y, "float32")
    pm = P.cuda.make_graphed_callables(pm, (px,))
    if ctx.tdev == "cuda":
        tm = T.cuda.make_graphed_callables(tm, (tx,))
    pstep, tstep = _sgd_steps(ctx, pm, tm, px, py, tx, ty)
    pl = [float(pstep().item()) for _ in range(3)]
    tl = [float(tstep().item()) for _ in range(3)]
    if not np.allclose(pl, tl, rtol=2e-3, atol=1e-5):
        ctx.row("graphs", "graphed MLP losses", None, None, "", status="FAIL",
                note=f"ptcore {pl} torch {tl}")
        return
    pt = ctx.time(pstep, ctx.psync, reps=5 if not ctx.smoke else 1)
    tt = ctx.time(tstep, ctx.tsync, reps=5 if not ctx.smoke else 1)
    ctx.row("graphs", "graphed MLP step", pt * 1e3, tt * 1e3, "ms/step", target="<=1.00",
            note=f"3-step losses agree ({pl[-1]:.4g})")


def _replay_chain(ctx, lib, dev, n_ops=20):
    """(eager seconds, replay seconds) of a chain of ``n_ops`` one-element ops."""
    x = lib.ones(1, device=dev)

    def chain():
        y = x
        for _ in range(n_ops):
            y = y * 1.0001 + 0.5
        return y
    s = lib.cuda.Stream()
    s.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(s):
        chain()
    lib.cuda.current_stream().wait_stream(s)
    lib.cuda.synchronize()
    g = lib.cuda.CUDAGraph()
    with lib.cuda.graph(g):
        out = chain()
    sync = lib.cuda.synchronize
    eager = ctx.time(chain, sync)
    replay = ctx.time(g.replay, sync)
    g.replay()
    expect = chain()
    sync()
    return eager, replay, float(out.cpu()[0]), float(expect.cpu()[0])


def section_graphs(ctx):
    batch = 8 if ctx.smoke else 256
    d_in, hidden = (32, 16) if ctx.smoke else (784, 1024)
    try:
        _graphed_train(ctx, d_in, hidden, batch)
    except Exception as e:
        ctx.error("graphs", "graphed MLP", e)
    try:
        pe, pr, pv, pw = _replay_chain(ctx, ctx.ptcore, "cuda")
        if abs(pv - pw) > 1e-4 * abs(pw):
            ctx.row("graphs", "replay of 20 tiny ops", None, None, "", status="FAIL",
                    note=f"replay {pv} vs eager {pw}")
            return
        if ctx.tdev == "cuda":
            te, tr, _, _ = _replay_chain(ctx, ctx.torch, "cuda")
            ctx.row("graphs", "replay of 20 tiny ops", pr * 1e6, tr * 1e6, "us", target="<=1.00",
                    note=f"ptcore eager chain {pe * 1e6:.1f} us, torch's {te * 1e6:.1f} us")
        else:
            ctx.row("graphs", "replay of 20 tiny ops", pr * 1e6, None, "us",
                    note=f"ptcore eager chain {pe * 1e6:.1f} us (no torch CUDA graphs here)")
    except Exception as e:
        ctx.error("graphs", "replay of 20 tiny ops", e)


# ---------------------------------------------------------------------------
# compile: the small GPT step with mode="reduce-overhead" (CUDA graphs)
# ---------------------------------------------------------------------------

def _lm_step(lib, m, x, y):
    """A train step of ``m`` (SGD with momentum): forward, the LM loss, backward."""
    return _sgd_step(lib, m, x, y, _lm_loss)


def section_compile(ctx):
    """Issue 63's small GPT train step: ptcore eager against
    ``ptcore.compile(mode="reduce-overhead")`` (target <= 0.70x), and that
    against ``torch.compile(mode="reduce-overhead")`` on a GPU (<= 1.00x)."""
    import copy
    from ptcore._inductor import cudagraphs
    P, T = ctx.ptcore, ctx.torch
    vocab, block, n_layer, n_head, n_embd, gb = ((64, 8, 1, 2, 16, 2) if ctx.smoke
                                                 else (512, 128, 4, 4, 256, 16))
    tok = ctx.rng.integers(0, vocab, (gb, block + 1))
    T.manual_seed(0)
    tm = _gpt(T, vocab, block, n_layer, n_head, n_embd)
    pm = _gpt(P, vocab, block, n_layer, n_head, n_embd)
    _copy_weights(pm, tm)
    pm = pm.to(ctx.pdev)
    pc = copy.deepcopy(pm)
    px, tx = ctx.pair(tok[:, :-1], "int64")
    py, ty = ctx.pair(tok[:, 1:], "int64")
    P.compiler.reset()
    eager = _lm_step(P, pm, px, py)
    comp = _lm_step(P, P.compile(pc, mode="reduce-overhead"), px, py)
    c0 = dict(cudagraphs.counters)
    el = [float(eager().item()) for _ in range(3)]
    cl = [float(comp().item()) for _ in range(3)]      # capture, warm-up, graphs captured
    if not np.allclose(el, cl, rtol=1e-4, atol=1e-6):
        ctx.row("compile", "small GPT losses", None, None, "", status="FAIL",
                note=f"eager {el} compiled {cl}")
        return
    c1 = dict(cudagraphs.counters)
    pe = ctx.time(eager, ctx.psync, reps=5 if not ctx.smoke else 1)
    pr = ctx.time(comp, ctx.psync, reps=5 if not ctx.smoke else 1)
    c2 = dict(cudagraphs.counters)
    caps, skips = c1["captures"] - c0["captures"], c2["skips"] - c0["skips"]
    ctx.row("compile", "small GPT graphs captured", caps, 2, "graphs",
            status="OK" if caps == 2 and skips == 0 and c2["captures"] == c1["captures"]
            else "FAIL",
            note=f"forward and backward; replays in the timed steps "
                 f"{c2['replays'] - c1['replays']}, skips {skips}")
    ctx.row("compile", "small GPT step reduce-overhead / ptcore eager", pr * 1e3, pe * 1e3,
            "ms/step", target="<=0.70",
            note=f"torch column: ptcore eager; 3-step losses agree ({cl[-1]:.4g})")
    if ctx.tdev != "cuda":
        ctx.row("compile", "small GPT step vs torch.compile", pr * 1e3, None, "ms/step",
                note="torch.compile(mode='reduce-overhead') is timed on a GPU only")
        return
    try:
        tm = tm.to(ctx.tdev)
        te_step = _lm_step(T, tm, tx, ty)
        te = ctx.time(te_step, ctx.tsync, reps=5)
        tcm = copy.deepcopy(tm)
        tc_step = _lm_step(T, T.compile(tcm, mode="reduce-overhead"), tx, ty)
        t0 = time.perf_counter()
        for _ in range(3):
            tc_step()
        ctx.tsync()
        tcomp_s = time.perf_counter() - t0
        tc = ctx.time(tc_step, ctx.tsync, reps=5)
    except Exception as e:      # (torch's compiler missing or failing on this machine)
        ctx.row("compile", "small GPT step vs torch.compile", pr * 1e3, None, "ms/step",
                status="SKIP", note=f"torch.compile failed: {type(e).__name__}: "
                                    f"{str(e).splitlines()[0][:120] if str(e) else ''}")
        return
    ctx.row("compile", "small GPT step vs torch.compile", pr * 1e3, tc * 1e3, "ms/step",
            target="<=1.00", note=f"both mode='reduce-overhead'; torch eager {te * 1e3:.2f} ms, "
                                  f"torch's first 3 compiled steps {tcomp_s:.1f} s")


# ---------------------------------------------------------------------------
# fft
# ---------------------------------------------------------------------------

def _host_pair(ctx, pf, tf, calls=16, repeats=5):
    """Median host seconds per call of ptcore's ``pf`` and torch's ``tf``:
    ``calls`` calls queued back to back and timed before the synchronization
    (a queue this short never fills, so the GPU's time is not in it).  When a
    library's host time exceeds the transform's GPU time, its measured time
    per call is its host time."""
    ps, ts = [], []
    for _ in range(repeats):
        for fn, sync, acc in ((pf, ctx.psync, ps), (tf, ctx.tsync, ts)):
            sync()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            acc.append((time.perf_counter() - t0) / calls)
            sync()
    return statistics.median(ps), statistics.median(ts)


def section_fft(ctx):
    P, T = ctx.ptcore, ctx.torch
    n1 = 1 << (10 if ctx.smoke else 20)
    n2 = 32 if ctx.smoke else 2048
    cases = []
    try:
        z = (ctx.rng.standard_normal(n1) + 1j * ctx.rng.standard_normal(n1)).astype(np.complex64)
        pz, tz = ctx.pair(z, "complex64")
        cases.append((f"fft 1-D 2^{n1.bit_length() - 1} c64", lambda: P.fft.fft(pz),
                      lambda: T.fft.fft(tz), 5 * n1 * np.log2(n1)))
        r = ctx.rng.standard_normal((n2, n2)).astype(np.float32)
        pr, tr = ctx.pair(r, "float32")
        cases.append((f"rfft2 {n2}^2 f32", lambda: P.fft.rfft2(pr), lambda: T.fft.rfft2(tr),
                      2.5 * n2 * n2 * np.log2(n2 * n2)))
        cases.append((f"irfft2 {n2}^2 f32", lambda: P.fft.irfft2(P.fft.rfft2(pr)),
                      lambda: T.fft.irfft2(T.fft.rfft2(tr)), 5 * n2 * n2 * np.log2(n2 * n2)))
    except Exception as e:
        ctx.error("fft", "inputs", e)
    for case, pf, tf, flop in cases:
        try:
            ok, note = _close(ctx.p2np(pf()), ctx.t2np(tf()), (1e-3, 1e-2 * np.sqrt(n1)))
            if not ok:
                ctx.row("fft", case, None, None, "", status="FAIL", note=note)
                continue
            pt, tt = ctx.time_pair(pf, tf, target_s=0.005)
            ph, th = _host_pair(ctx, pf, tf)
            ctx.row("fft", case, pt * 1e6, tt * 1e6, "us", target="<=1.00",
                    note=f"{note}; torch {flop / tt / 1e9:.0f} GFLOP/s; host time per call "
                         f"(queueing only) ptcore {ph * 1e6:.1f} us, torch {th * 1e6:.1f} us")
        except Exception as e:
            ctx.error("fft", case, e)


# ---------------------------------------------------------------------------
# complex64 / complex128
# ---------------------------------------------------------------------------

_COMPLEX_UNARY = ("neg", "conj_physical", "abs", "angle", "sgn", "reciprocal", "exp", "log", "sqrt", "rsqrt",
                  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                  "atanh", "sigmoid", "isfinite")


def section_complex(ctx):
    """Complex ops on the device against torch's (values, then us per call),
    complex GEMM throughput, and randn equal to the CPU generator's."""
    P, T = ctx.ptcore, ctx.torch
    rows, cols = (64, 48) if ctx.smoke else (2048, 1024)
    for dtype in ("complex64", "complex128"):
        npdt = np.complex64 if dtype == "complex64" else np.complex128
        tol = (1e-4, 1e-5) if dtype == "complex64" else (1e-10, 1e-12)
        rtol = (1e-3, 1e-3) if dtype == "complex64" else (1e-9, 1e-9)

        def arr(*shape):
            return (ctx.rng.standard_normal(shape) + 1j * ctx.rng.standard_normal(shape)).astype(npdt)
        try:
            (pa, ta), (pb, tb), (pc, tc) = ctx.pair(arr(rows, cols), dtype), ctx.pair(arr(rows, cols), dtype), \
                ctx.pair(arr(cols), dtype)
        except Exception as e:
            ctx.error("complex", f"inputs {dtype}", e)
            continue
        cases = [(name, (lambda n: lambda lib, x, y, v: getattr(lib, n)(x))(name), tol) for name in _COMPLEX_UNARY]
        cases += [
            ("add (broadcast)", lambda lib, x, y, v: lib.add(x, v, alpha=2 - 1j), tol),
            ("mul", lambda lib, x, y, v: lib.mul(x, y), tol),
            ("div", lambda lib, x, y, v: lib.div(x, y), tol),
            ("pow", lambda lib, x, y, v: lib.pow(x, y), (tol[0] * 10, tol[1] * 10)),
            ("mul (non-contiguous)", lambda lib, x, y, v: lib.mul(x.t(), y.t()), tol),
            ("sum(dim=1)", lambda lib, x, y, v: x.sum(1), rtol),
            ("mean", lambda lib, x, y, v: x.mean(), rtol),
            ("prod(dim=0)", lambda lib, x, y, v: (x[:8] * 0.5).prod(0), rtol),
            ("cumsum(dim=1)", lambda lib, x, y, v: x.cumsum(1), rtol),
            ("var(dim=1)", lambda lib, x, y, v: x.var(1), rtol),
            ("vector_norm(dim=1)", lambda lib, x, y, v: lib.linalg.vector_norm(x, 2, 1), rtol),
            ("index_select", lambda lib, x, y, v: x[lib.arange(0, x.shape[0], 3, device=x.device)], tol),
            ("where", lambda lib, x, y, v: lib.where(x.real > 0, x, y), tol),
        ]
        for case, f, tl in cases:
            label = f"{case} {dtype} {rows}x{cols}"
            try:
                ok, note = _close(ctx.p2np(f(P, pa, pb, pc)), ctx.t2np(f(T, ta, tb, tc)), tl)
                if not ok:
                    ctx.row("complex", label, None, None, "", status="FAIL", note=note)
                    continue
                pt = ctx.time(lambda: f(P, pa, pb, pc), ctx.psync, reps=3 if not ctx.smoke else 1)
                tt = ctx.time(lambda: f(T, ta, tb, tc), ctx.tsync, reps=3 if not ctx.smoke else 1)
                ctx.row("complex", label, pt * 1e6, tt * 1e6, "us", target="<=1.20", note=note)
            except Exception as e:
                ctx.error("complex", label, e)
        # GEMM (cuBLAS CUDA_C_32F / CUDA_C_64F): 8 real flops per complex multiply-add
        n = 64 if ctx.smoke else 4096
        label = f"{'cgemm' if dtype == 'complex64' else 'zgemm'} {n}^3 (a.mH @ b)"
        try:
            (ga, gta), (gb, gtb) = ctx.pair(arr(n, n), dtype), ctx.pair(arr(n, n), dtype)
            ok, note = _close(ctx.p2np(ga.mH @ gb), ctx.t2np(gta.mH @ gtb), (1e-3, 1e-3 * np.sqrt(n)))
            if not ok:
                ctx.row("complex", label, None, None, "", status="FAIL", note=note)
            else:
                pt = ctx.time(lambda: ga.mH @ gb, ctx.psync)
                tt = ctx.time(lambda: gta.mH @ gtb, ctx.tsync)
                flops = 8.0 * n ** 3
                ctx.row("complex", label, flops / pt / 1e12, flops / tt / 1e12, "TFLOP/s", target=">=0.90",
                        note=note)
        except Exception as e:
            ctx.error("complex", label, e)
        # randn: the CPU generator's values for the same seed (real, imag each N(0, 1/2))
        try:
            P.manual_seed(7)
            d = P.randn(rows, cols, dtype=getattr(P, dtype), device="cuda")
            P.manual_seed(7)
            h = P.randn(rows, cols, dtype=getattr(P, dtype))
            same = bool(np.array_equal(ctx.p2np(d), ctx.p2np(h)))
            ctx.row("complex", f"randn {dtype} == CPU stream", None, None, "", status="OK" if same else "FAIL",
                    note="bit-identical" if same else "differs from the CPU generator")
        except Exception as e:
            ctx.error("complex", f"randn {dtype}", e)


# ---------------------------------------------------------------------------
# compile cache in a second process
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, time
t0 = time.perf_counter()
import ptcore
from ptcore.cuda.driver import compiler as _compiler
from ptcore.cuda.emulated import kernels as _host_kernels
x = ptcore.ones(64, 48, device="cuda")
for dt in (ptcore.float32, ptcore.bfloat16):
    y = x.to(dt)
    (y + y).sum(); (y * y).exp(); y.sum(dim=-1)
ptcore.cuda.synchronize()
print(json.dumps({"nvrtc": _compiler.stats(), "host": _host_kernels.stats(),
                  "first_ops_s": time.perf_counter() - t0}))
"""


def section_cache(ctx):
    try:
        # make sure this process compiled what the child runs
        exec(compile(_CHILD.replace("print(", "(lambda *a: None)("), "<warm>", "exec"), {})
        env = dict(os.environ)
        import ptcore        # the child imports the ptcore this process runs
        parent = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
        env["PYTHONPATH"] = os.pathsep.join([parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                             env=env, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "child failed")
        st = json.loads(out.stdout.strip().splitlines()[-1])
        key = "host" if ctx.smoke else "nvrtc"
        n = st[key]["compiles"]
        ctx.row("cache", f"second process: {key} compiles", n, 0, "compiles", ratio=None,
                target="", status="OK" if n == 0 else "FAIL",
                note=f"first ops in {st['first_ops_s']:.2f} s; {key} stats {st[key]}")
    except Exception as e:
        ctx.error("cache", "second process", e)


# ---------------------------------------------------------------------------
# table
# ---------------------------------------------------------------------------

def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def render(rows, header):
    cols = ("section", "case", "ptcore", "torch", "unit", "ratio", "target", "status", "note")
    table = [[r["section"], r["case"], _fmt(r["ptcore"]), _fmt(r["torch"]), r["unit"],
              "-" if r["ratio"] is None else f"{r['ratio']:.2f}x", r["target"], r["status"],
              r["note"]] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) if table else len(c)
              for i, c in enumerate(cols)]
    widths[-1] = len(cols[-1])
    lines = [header, "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for t in table:
        lines.append("| " + " | ".join(v.ljust(w) for v, w in zip(t, widths)) + " |")
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines.append("status counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


def _write(args, header, rows):
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(render(rows, header) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes on the emulated device (PTCORE_CUDA_EMULATE=1), torch on the CPU")
    ap.add_argument("--only", default="", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--json", default="", help="also write the rows as JSON here")
    ap.add_argument("--markdown", default="", help="also write the table here")
    args = ap.parse_args(argv)
    if args.smoke and not os.environ.get("PTCORE_CUDA_EMULATE"):
        os.environ["PTCORE_CUDA_EMULATE"] = "1"
    sections = [s for s in args.only.split(",") if s] or list(SECTIONS)
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        ap.error(f"unknown sections {bad}; choose from {SECTIONS}")
    ctx = Ctx(args.smoke)
    P, T = ctx.ptcore, ctx.torch
    if not P.cuda.is_available():
        print(f"ptcore.cuda is not available: {P.cuda._unavailable_reason()}")
        return 2
    if not args.smoke and not T.cuda.is_available():
        print("torch has no CUDA device here: run with --smoke, or on a GPU machine")
        return 2
    dev = P.cuda.get_device_name()
    tdev = T.cuda.get_device_name() if ctx.tdev == "cuda" else "cpu"
    header = (f"ptcore vs torch {T.__version__} -- ptcore device: {dev}; torch device: {tdev}"
              + (" (SMOKE: emulated device, timings meaningless)" if args.smoke else ""))
    print(header, flush=True)
    ctx.flush = lambda: _write(args, header, ctx.rows)
    for s in sections:
        t0 = time.perf_counter()
        try:
            globals()["section_" + s](ctx)
        except Exception as e:
            ctx.error(s, "section", e)
        print(f"[{s}: {time.perf_counter() - t0:.1f} s]", flush=True)
        _write(args, header, ctx.rows)        # after every section: a cut-short run keeps its rows
    print(render(ctx.rows, header))
    return 1 if any(r["status"] in ("FAIL", "ERR") for r in ctx.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
