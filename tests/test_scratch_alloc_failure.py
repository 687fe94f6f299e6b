"""A kernel whose scratch allocation fails raises MemoryError naming the op
(or takes a fallback that gives the right result) -- never a crash, a hang
or an unwritten output.  The failures come from the kernels' test switch
(ptcore._ops.kernels._fault, include/ptc_scratch.h): armed, it makes the
next scratch requests fail as malloc does when memory is short."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._ops.kernels import _fault

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _disarm():
    """The switch is off after every test, failed or not."""
    _fault._fail_scratch_allocs(0)
    yield
    _fault._fail_scratch_allocs(0)


def _simd():
    """Whether the CPU has the AVX2/AVX-512 kernels that allocate packed
    panels, not switched off by PTCORE_SGEMM (elsewhere the BLAS runs and
    no such request is made)."""
    from ptcore._config import SGEMM_ISA
    from ptcore._cpu_features import detect_cpu_capability
    return detect_cpu_capability() != "DEFAULT" and SGEMM_ISA != 0


def _arr(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _np(t):
    if isinstance(t, (tuple, list)):
        return [_np(v) for v in t]
    if hasattr(t, "detach"):
        t = t.detach()
    return np.asarray(t.cpu().numpy() if hasattr(t, "cpu") else t)


def _close(got, exp, rtol=1e-4, atol=1e-5):
    got, exp = _np(got), _np(exp)
    if isinstance(got, list):
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            _close(g, e, rtol, atol)
        return
    assert got.shape == exp.shape
    np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)


def _pos_def(n, batch=3):
    a = _arr(batch, n, n, dtype=np.float64)
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


def _boxes(k, seed=1):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 40, (k, 2))
    wh = rng.uniform(2, 20, (k, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def _rois(k, n=2):
    b = _boxes(k)
    return np.concatenate([np.arange(k)[:, None] % n, b], 1).astype(np.float32)


def _ctc(m, lp, tg):
    il = [30, 28, 25, 30]
    tl = [10, 8, 7, 10]
    return m.nn.functional.ctc_loss(lp, tg, il, tl, reduction="none")


def _log_softmax(x, axis):
    x = x - x.max(axis, keepdims=True)
    return (x - np.log(np.exp(x).sum(axis, keepdims=True))).astype(np.float32)


def _layer_norm_grads(m, x):
    w = m.ones(40, requires_grad=True)
    b = m.zeros(40, requires_grad=True)
    y = m.nn.functional.layer_norm(x, (40,), w, b)
    return m.autograd.grad(y, [x, w, b], m.ones(30, 40))


def _lstm_grad(m, x):
    m.manual_seed(0)
    lstm = m.nn.LSTM(16, 32)
    x = x.clone().requires_grad_(True)
    out, _ = lstm(x)
    out.sum().backward()
    return out, x.grad


def _conv_grads(m, x, w):
    x = x.clone().requires_grad_(True)
    w = w.clone().requires_grad_(True)
    m.nn.functional.conv2d(x, w, padding=1, stride=2).square().sum().backward()
    return x.grad, w.grad


# (id, fn(module, *tensors), numpy inputs, op named by the message); each
# reaches a kernel that allocates scratch
RAISES = [
    # reductions: the outer (columns) and inner (rows) traversals' buffers
    ("sum_columns", lambda m, x: x.sum(0), [_arr(64, 300)], "sum"),
    ("sum_rows", lambda m, x: x.sum(1), [_arr(64, 300)], "sum"),
    ("var_columns", lambda m, x: x.var(0), [_arr(64, 300)], "var"),
    ("amax_f16_columns", lambda m, x: x.half().amax(0).float(), [_arr(64, 300)], "max"),
    ("logsumexp_rows", lambda m, x: x.logsumexp(1), [_arr(64, 300)], "logsumexp"),
    ("median_rows", lambda m, x: x.median(1), [_arr(64, 301)], "median"),
    ("nanmedian_rows", lambda m, x: x.nanmedian(1), [_arr(64, 301)], "median"),
    # sorting and selection
    ("sort", lambda m, x: m.sort(x, 1), [_arr(8, 300)], "sort"),
    ("sort_stable", lambda m, x: m.sort(x, dim=1, stable=True), [_arr(8, 300)], "sort"),
    ("argsort", lambda m, x: m.argsort(x, 0), [_arr(300, 8)], "sort"),
    ("topk", lambda m, x: m.topk(x, 5, 1), [_arr(8, 300)], "topk"),
    ("kthvalue", lambda m, x: m.kthvalue(x, 7, 1), [_arr(8, 300)], "kthvalue"),
    ("mode", lambda m, x: m.mode(x.round(), 1), [_arr(8, 300)], "mode"),
    ("unique", lambda m, x: m.unique(x.round(), return_inverse=True), [_arr(300)], "unique"),
    ("unique_dim", lambda m, x: m.unique(x.round(), dim=0), [_arr(300, 3)], "unique"),
    ("histc", lambda m, x: m.histc(x, 30), [_arr(3000)], "histc"),
    ("isin", lambda m, x, y: m.isin(x.round(), y.round()), [_arr(300), _arr(50)], "isin"),
    ("isin_large", lambda m, x, y: m.isin(x.round(), y.round()), [_arr(30000), _arr(3000)],
     "isin"),
    # LAPACK work arrays
    ("inv", lambda m, a: m.linalg.inv(a), [_pos_def(6)], "inv"),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [_pos_def(6), _arr(3, 6, 2, dtype=np.float64)],
     "solve"),
    ("cholesky", lambda m, a: m.linalg.cholesky(a), [_pos_def(6)], "cholesky"),
    ("qr", lambda m, a: m.linalg.qr(a)[1].abs(), [_arr(3, 7, 5, dtype=np.float64)], "qr"),
    ("svdvals", lambda m, a: m.linalg.svdvals(a), [_arr(3, 7, 5, dtype=np.float64)], "svd",
     {"after": 1}),                 # (after the finiteness check's reduction)
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [_pos_def(6)], "eigh"),
    ("det", lambda m, a: m.linalg.det(a), [_pos_def(6)], "lu"),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution,
     [_arr(3, 8, 5, dtype=np.float64), _arr(3, 8, 2, dtype=np.float64)], "lstsq"),
    ("eigvals", lambda m, a: m.sort(m.linalg.eigvals(a).real, -1)[0], [_pos_def(6)], "eig",
     {"after": 1}),
    # integer matmul
    ("int_matmul", lambda m, a, b: m.matmul(a.long(), b.long()),
     [_arr(4, 40, 30) * 10, _arr(4, 30, 20) * 10], "matmul"),
    # convolutions and pooling
    ("conv2d", lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
     [_arr(2, 3, 20, 20), _arr(5, 3, 3, 3)], "conv"),
    ("conv2d_grads", _conv_grads, [_arr(2, 3, 20, 20), _arr(5, 3, 3, 3)], "conv"),
    ("conv3d", lambda m, x, w: m.nn.functional.conv3d(x, w), [_arr(2, 2, 6, 7, 8),
                                                               _arr(3, 2, 2, 2, 2)], "conv"),
    ("conv_transpose2d", lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2),
     [_arr(2, 4, 9, 9), _arr(4, 3, 3, 3)], "conv"),
    ("conv1d_groups", lambda m, x, w: m.nn.functional.conv1d(x, w, groups=2),
     [_arr(3, 4, 50), _arr(6, 2, 5)], "conv"),
    ("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2), [_arr(2, 3, 20, 20)],
     "pool"),
    ("adaptive_avg_pool2d", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (5, 7)),
     [_arr(2, 3, 20, 20)], "pool"),
    # resampling
    ("interpolate_bilinear", lambda m, x: m.nn.functional.interpolate(
        x, scale_factor=1.7, mode="bilinear"), [_arr(2, 3, 20, 20)], "upsample"),
    ("interpolate_bicubic", lambda m, x: m.nn.functional.interpolate(
        x, size=(9, 31), mode="bicubic", align_corners=True), [_arr(2, 3, 20, 20)], "upsample"),
    # index ops (the index iterator)
    ("gather", lambda m, x, i: m.gather(x, 1, i.long().abs() % 7),
     [_arr(6, 7), _arr(6, 5) * 5], "index"),
    # (along dim 1: index_add along dim 0 of 2-d rows needs no iterator)
    ("index_add", lambda m, x, i: x.index_add(1, i.long().abs() % 7, m.ones(6, 5)),
     [_arr(6, 7), _arr(5) * 5], "index"),
    # losses and nn kernels
    ("ctc_loss", _ctc, [_log_softmax(_arr(30, 4, 12), 2), np.arange(40).reshape(4, 10) % 11 + 1],
     "ctc_loss"),
    ("layer_norm_backward", _layer_norm_grads, [_arr(30, 40)], "layer_norm"),
    ("cross_entropy", lambda m, x: m.nn.functional.cross_entropy(
        x, m.arange(30) % 10), [_arr(30, 10)], "cross_entropy"),
    ("bce_with_logits", lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(
        x, t.sigmoid()), [_arr(300), _arr(300, seed=2)], "binary_cross_entropy_with_logits"),
    ("bce", lambda m, x, t: m.nn.functional.binary_cross_entropy(x.sigmoid(), t.sigmoid()),
     [_arr(300), _arr(300, seed=2)], "binary_cross_entropy"),
]


def _inputs(m, arrays, grad=False):
    return [m.tensor(a, requires_grad=grad) if a.dtype.kind == "f" else m.tensor(a)
            for a in arrays]


@pytest.mark.parametrize("case", RAISES, ids=[c[0] for c in RAISES])
def test_failed_scratch_raises_memory_error(case):
    name, fn, arrays, op = case[:4]
    arm = case[4] if len(case) > 4 else {}
    if name == "layer_norm_backward":
        xs, ts = _inputs(ptcore, arrays, True), _inputs(torch, arrays, True)
    else:
        xs, ts = _inputs(ptcore, arrays), _inputs(torch, arrays)
    _fault._fail_scratch_allocs(-1, **arm)
    with pytest.raises(MemoryError, match=op):
        fn(ptcore, *xs)
    assert _fault._scratch_failures() > 0
    _fault._fail_scratch_allocs(0)
    _close(fn(ptcore, *xs), fn(torch, *ts))


def test_failed_cascade_level_raises():
    """The columns traversal adds a cascade level every 16 rows: its buffer
    failing ended in a loop retrying it (a hang while memory stayed short)."""
    x = _arr(300, 64)
    _fault._fail_scratch_allocs(1, after=1)      # lev[0] served, lev[1] not
    with pytest.raises(MemoryError, match="sum"):
        ptcore.tensor(x).sum(0)
    assert _fault._scratch_failures() == 1
    _fault._fail_scratch_allocs(0)
    _close(ptcore.tensor(x).sum(0), torch.tensor(x).sum(0))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "softmax", "log_softmax",
                                "logcumsumexp"])
def test_failed_scan_columns_buffer_raises(op):
    """Scans and softmax along a dim that is not the innermost sweep columns
    through a buffer (the plan itself is a smaller request).  cumsum/cumprod in
    float64: a small float32 one takes a serial kernel without a buffer."""
    x = _arr(64, 300) * 0.1
    if op in ("cumsum", "cumprod"):
        x = x.astype(np.float64)
    f = {"cumsum": lambda m, t: m.cumsum(t, 0), "cumprod": lambda m, t: m.cumprod(t, 0),
         "cummax": lambda m, t: m.cummax(t, 0), "softmax": lambda m, t: m.softmax(t, 0),
         "log_softmax": lambda m, t: m.log_softmax(t, 0),
         "logcumsumexp": lambda m, t: m.logcumsumexp(t, 0)}[op]
    _fault._fail_scratch_allocs(-1, min_bytes=4096)
    with pytest.raises(MemoryError, match=op):
        f(ptcore, ptcore.tensor(x))
    _fault._fail_scratch_allocs(0)
    _close(f(ptcore, ptcore.tensor(x)), f(torch, torch.tensor(x)))


@pytest.mark.parametrize("replacement", [True, False])
def test_failed_multinomial_raises(replacement):
    p = ptcore.tensor(np.abs(_arr(5, 40)) + 0.1)
    _fault._fail_scratch_allocs(-1)
    with pytest.raises(MemoryError, match="multinomial"):
        ptcore.multinomial(p, 7, replacement=replacement)
    _fault._fail_scratch_allocs(0)
    s = ptcore.multinomial(p, 7, replacement=replacement).numpy()
    assert s.shape == (5, 7) and s.min() >= 0 and s.max() < 40


def test_failed_randperm_raises():
    _fault._fail_scratch_allocs(-1)
    with pytest.raises(MemoryError, match="randperm"):
        ptcore.randperm(100_000)
    _fault._fail_scratch_allocs(0)
    assert np.array_equal(np.sort(ptcore.randperm(100_000).numpy()), np.arange(100_000))


@pytest.mark.parametrize("name, after", [("nms", 1), ("roi_align", 0), ("roi_pool", 0)])
def test_failed_vision_ops_raise(name, after):
    from ptcore import _torchvision_ops
    _torchvision_ops.register(ptcore.library)
    ops = ptcore.ops.torchvision
    b, s = ptcore.tensor(_boxes(40)), ptcore.tensor(_arr(40))
    x, r = ptcore.tensor(_arr(2, 3, 50, 50)), ptcore.tensor(_rois(6))
    call = {"nms": lambda: ops.nms(b, s, 0.5),
            "roi_align": lambda: ops.roi_align(x, r, 0.5, 4, 4, 2, False),
            "roi_pool": lambda: ops.roi_pool(x, r, 0.5, 4, 4)[0]}[name]
    _fault._fail_scratch_allocs(-1, after=after)     # (nms: after its scores' sort)
    with pytest.raises(MemoryError, match=name):
        call()
    _fault._fail_scratch_allocs(0)
    got = call()
    if name == "nms":
        keep = got.numpy()
        assert keep.ndim == 1 and 0 < keep.size <= 40
    else:
        assert got.shape == (6, 3, 4, 4) and np.isfinite(got.numpy()).all()


def test_failed_fused_kernel_raises():
    from ptcore import jit

    def chain(t):
        y = t * 1.5 + 0.5
        return ptcore.tanh(y) * y - 0.25

    x = ptcore.tensor(_arr(10_000))
    sf = jit.trace(chain, x)
    _fault._fail_scratch_allocs(-1)
    with pytest.raises(MemoryError, match="fused kernel"):
        sf(x)
    _fault._fail_scratch_allocs(0)
    _close(sf(x), chain(x))


# -- correct fallbacks: the result is right with the switch armed ----------------

def test_conv_fast_paths_fall_back():
    """The direct and wide convolutions take the column-matrix path when
    their packed weights cannot be allocated; that path's buffer failing
    too raises."""
    x, w = _arr(2, 16, 20, 20), _arr(16, 16, 3, 3)
    exp = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
    _fault._fail_scratch_allocs(1)
    try:
        got = ptcore.nn.functional.conv2d(ptcore.tensor(x), ptcore.tensor(w), padding=1)
    except MemoryError as e:     # no fast path on this CPU: the first request was the columns
        assert "conv" in str(e)
    else:
        _close(got, exp)
    assert _fault._scratch_failures() == 1


def test_lstm_packed_falls_back():
    """The LSTM's packed recurrent kernels (forward, backward, weight
    gradient) fall back to the BLAS when their panels cannot be allocated."""
    x = ptcore.tensor(_arr(12, 3, 16))
    exp = _lstm_grad(ptcore, x)
    _fault._fail_scratch_allocs(-1, min_bytes=16384)
    got = _lstm_grad(ptcore, x)
    failed = _fault._scratch_failures()
    _fault._fail_scratch_allocs(0)
    _close(got, exp)
    if _simd():
        assert failed > 0           # the packed kernels (or the own GEMM) were refused


def test_small_bmm_falls_back_to_blas():
    """Batched small products with a transposed B copy it for the small
    kernel; without memory for the copy they run on the BLAS."""
    a, b = _arr(4, 8, 16), _arr(4, 32, 16)
    _fault._fail_scratch_allocs(-1)
    got = ptcore.bmm(ptcore.tensor(a), ptcore.tensor(b).transpose(1, 2))
    failed = _fault._scratch_failures()
    _fault._fail_scratch_allocs(0)
    _close(got, a @ b.transpose(0, 2, 1))
    if _simd():
        assert failed > 0           # the copy of B was refused


def test_own_sgemm_falls_back_to_blas():
    """ptcore's float32 GEMM keeps its packing buffers per thread: a fresh
    process, whose buffers are not allocated yet, runs float32 products with
    every scratch request failing; they take the BLAS and are right."""
    code = textwrap.dedent("""
        import numpy as np, ptcore
        from ptcore._ops.kernels import _fault
        ptcore.set_num_threads(1)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((200, 300)).astype(np.float32)
        b = rng.standard_normal((300, 250)).astype(np.float32)
        _fault._fail_scratch_allocs(-1)
        c = (ptcore.tensor(a) @ ptcore.tensor(b)).numpy()
        ct = (ptcore.tensor(a).T.contiguous().T @ ptcore.tensor(b)).numpy()
        n = _fault._scratch_failures()
        _fault._fail_scratch_allocs(0)
        exp = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, exp, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(ct, exp, rtol=1e-4, atol=1e-3)
        print(n)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    if _simd():
        assert int(r.stdout.split()[-1]) > 0      # the own GEMM asked, and was refused


# -- the switch itself ---------------------------------------------------------------

def test_disarmed_switch_changes_nothing():
    x = _arr(64, 300)
    _fault._fail_scratch_allocs(0)
    t, tt = ptcore.tensor(x), torch.tensor(x)
    _close(t.sum(0), tt.sum(0))
    _close(t.cumsum(0), tt.cumsum(0))
    _close(ptcore.sort(t, 1)[0], torch.sort(tt, 1)[0])
    _close(t.median(1)[0], tt.median(1)[0])
    assert _fault._scratch_failures() == 0


def test_switch_counts_and_thresholds():
    x = ptcore.tensor(_arr(64, 300))
    _fault._fail_scratch_allocs(-1, min_bytes=1 << 40)      # nothing that large is asked
    _close(x.sum(0), torch.tensor(_np(x)).sum(0))
    assert _fault._scratch_failures() == 0
    _fault._fail_scratch_allocs(2)
    for _ in range(2):
        with pytest.raises(MemoryError):
            x.sum(0)
    x.sum(0)                                                # the third is served
    assert _fault._scratch_failures() == 2
    with pytest.raises(ValueError):
        _fault._fail_scratch_allocs(1, min_bytes=-1)
