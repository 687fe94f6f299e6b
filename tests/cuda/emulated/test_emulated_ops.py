"""Ops on CUDA tensors through the operator table's CUDA kernels
(ptcore/cuda/ops/launch.py) on the emulated device, compared with the CPU:
pointwise (broadcast, non-contiguous, dtypes), reductions, the matmul
family on the driver's GEMM, a small MLP's forward, backward and SGD steps;
ops without a CUDA kernel raise NotImplementedError."""
import inspect

import numpy as np
import pytest

import ptcore
from device_target import REAL
from ptcore.cuda.runtime import state as _runtime

FLOATS = [ptcore.float32, ptcore.float16, ptcore.bfloat16, ptcore.float64]


def _rand(shape, dtype=ptcore.float32, seed=0, lo=-3.0, hi=3.0):
    g = np.random.default_rng(seed)
    a = ptcore.tensor(g.uniform(lo, hi, shape))
    return a.to(dtype)


def _close(dev_result, cpu_result, exact=False):
    got = dev_result.cpu()
    assert got.dtype == cpu_result.dtype and got.shape == cpu_result.shape
    if exact or not cpu_result.dtype.is_floating_point:
        assert got.tolist() == cpu_result.tolist()
    else:
        tol = {ptcore.float16: 2e-3, ptcore.bfloat16: 1e-2}.get(cpu_result.dtype, 1e-6)
        assert ptcore.allclose(got.float(), cpu_result.float(), rtol=tol, atol=tol, equal_nan=True)


# every kernel is compiled once per (op, dtype) on the emulated device: the
# sweep covers each op in float32 and each dtype with a few ops
_BINARY_CASES = ([(op, ptcore.float32) for op in ("add", "sub", "mul", "maximum", "minimum", "gt", "le",
                                                   "eq")]
                 + [(op, dt) for op in ("add", "gt") for dt in FLOATS[1:] + [ptcore.int64, ptcore.int32]])


@pytest.mark.parametrize("op,dtype", _BINARY_CASES)
def test_binary_broadcast_noncontig(op, dtype):
    a = _rand((4, 6), dtype, 1)
    b = _rand((6,), dtype, 2)
    fn = getattr(ptcore, op)
    _close(fn(a.cuda(), b.cuda()), fn(a, b), exact=True)
    at = a.t()                                              # non-contiguous
    _close(fn(a.cuda().t(), b[:4].cuda()), fn(at, b[:4]), exact=True)
    if op in ("maximum", "minimum"):
        with pytest.raises(TypeError, match="must be Tensor"):
            fn(a.cuda(), 2)
    else:
        _close(fn(a.cuda(), 2), fn(a, 2), exact=True)      # Python scalar


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16])
def test_div_and_alpha(dtype):
    a, b = _rand((3, 5), dtype, 3), _rand((3, 5), dtype, 4, 0.5, 2.0)
    _close(ptcore.div(a.cuda(), b.cuda()), ptcore.div(a, b), exact=True)
    _close(ptcore.add(a.cuda(), b.cuda(), alpha=2), ptcore.add(a, b, alpha=2))
    _close(ptcore.sub(a.cuda(), b.cuda(), alpha=0.5), ptcore.sub(a, b, alpha=0.5))
    _close(a.cuda() / 4, a / 4, exact=True)
    _close(2 / b.cuda(), 2 / b, exact=True)
    _close(1 - a.cuda(), 1 - a, exact=True)
    _close(-a.cuda(), -a, exact=True)


def test_mixed_dtypes_promote():
    a = _rand((3, 4), ptcore.float32, 5)
    i = ptcore.arange(4)
    _close(a.cuda() + i.cuda(), a + i, exact=True)
    _close(i.cuda() / 2, i / 2, exact=True)
    _close(i.cuda() * 3, i * 3, exact=True)
    h = a.to(ptcore.float16)
    _close(h.cuda() * a.cuda(), h * a, exact=True)
    _close(a.cuda() + ptcore.tensor(1.5), a + ptcore.tensor(1.5), exact=True)   # 0-d CPU tensor
    with pytest.raises(RuntimeError, match="must match"):
        a.cuda() + ptcore.ones(5, device="cuda")


_UNARY_CASES = ([(op, ptcore.float32) for op in ("neg", "exp", "log", "sqrt", "abs", "relu", "sigmoid",
                                                  "tanh")]
                + [(op, dt) for op in ("exp", "relu") for dt in FLOATS[1:]])


@pytest.mark.parametrize("op,dtype", _UNARY_CASES)
def test_unary(op, dtype):
    lo = 0.1 if op in ("log", "sqrt") else -3.0
    a = _rand((5, 7), dtype, 6, lo)
    fn = getattr(ptcore, op)
    _close(fn(a.cuda()), fn(a))
    _close(fn(a.cuda()[:, 1::2]), fn(a[:, 1::2]))


def test_inplace_and_out():
    a = _rand((4, 4), ptcore.float32, 7)
    b = _rand((4,), ptcore.float32, 8)
    x = a.cuda()
    x.add_(b.cuda())
    x.mul_(2)
    x.sub_(1, alpha=3)
    x.div_(b.cuda())
    _close(x, a.add(b).mul(2).sub(1, alpha=3).div(b), exact=True)
    out = ptcore.empty(4, 4, device="cuda")
    r = ptcore.mul(a.cuda(), a.cuda(), out=out)
    assert r is out
    _close(out, a * a, exact=True)
    iv = ptcore.arange(4, device="cuda")
    with pytest.raises(RuntimeError, match="can't be cast"):
        iv.add_(0.5)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.int64])
def test_reductions(dtype):
    a = _rand((3, 4, 5), dtype, 9)
    x = a.cuda()
    _close(x.sum(), a.sum())
    _close(x.sum(1), a.sum(1))
    _close(x.sum((0, 2), keepdim=True), a.sum((0, 2), keepdim=True))
    _close(x.transpose(0, 2).sum(0), a.transpose(0, 2).sum(0))
    _close(x.amax(2), a.amax(2), exact=True)
    _close(x.amin((0, 1)), a.amin((0, 1)), exact=True)
    _close(x.max(), a.max(), exact=True)
    _close(x.min(), a.min(), exact=True)
    if dtype.is_floating_point:
        _close(x.mean(), a.mean())
        _close(x.mean(-1), a.mean(-1))
    else:
        with pytest.raises(RuntimeError, match="mean"):
            x.mean()
        _close(x.sum(dtype=ptcore.float32), a.sum(dtype=ptcore.float32))
    _close(ptcore.zeros(0, 3, device="cuda").sum(0), ptcore.zeros(0, 3).sum(0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_family(dtype):
    a, b = _rand((5, 7), dtype, 10), _rand((7, 3), dtype, 11)
    _close(ptcore.mm(a.cuda(), b.cuda()), ptcore.mm(a, b))
    _close(a.cuda().t().t() @ b.cuda().t().contiguous().t(), a @ b)
    c = _rand((3,), dtype, 12)
    _close(ptcore.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5, alpha=2), ptcore.addmm(c, a, b, beta=0.5, alpha=2))
    x, y = _rand((2, 5, 7), dtype, 13), _rand((2, 7, 3), dtype, 14)
    _close(ptcore.bmm(x.cuda(), y.cuda()), ptcore.bmm(x, y))
    _close(ptcore.matmul(x.cuda(), b.cuda()), ptcore.matmul(x, b))       # broadcast batch
    _close(ptcore.matmul(a[0].cuda(), b.cuda()), ptcore.matmul(a[0], b))  # 1-D @ 2-D
    _close(ptcore.matmul(a.cuda(), b[:, 0].cuda()), ptcore.matmul(a, b[:, 0]))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ptcore.mm(a.cuda(), a.cuda())


@pytest.fixture
def gemm_compute_types(monkeypatch):
    """The compute types of the driver's GEMM calls while the test runs."""
    drv = _runtime.lazy_init("test")
    seen = []
    gemm, bind = drv.gemm, inspect.signature(drv.gemm).bind

    def record(*args, **kwargs):
        seen.append(bind(*args, **kwargs).arguments["compute_type"])
        return gemm(*args, **kwargs)
    monkeypatch.setattr(drv, "gemm", record)
    return seen


def test_tf32_switch_is_honoured(gemm_compute_types):
    """The GEMM's compute type follows allow_tf32 (COMPUTE_32F / _FAST_TF32);
    without TF32 the product is float32's: within the rounding-error bound of
    a 16-term float32 dot product in any summation order, FMA or not,
    ``(k + 1) u (|A| |B|)`` (u = 2^-24), which TF32's 10-bit mantissas
    (~1e-3 relative per product) exceed; with TF32 within that bound plus
    the inputs' rounding to TF32.  (The emulator computes both in float32.)"""
    a, b = _rand((16, 16), ptcore.float32, 15), _rand((16, 16), ptcore.float32, 16)
    exact = (a.double() @ b.double()).numpy()
    scale = (a.double().abs() @ b.double().abs()).numpy()
    f32_bound = 17 * 2.0 ** -24 * scale
    tf32_bound = f32_bound + 2 * 2.0 ** -10 * scale
    seen = gemm_compute_types
    old = ptcore.backends.cuda.matmul.allow_tf32
    try:
        for tf32, compute_type, bound in ((False, 68, f32_bound), (True, 77, tf32_bound)):
            ptcore.backends.cuda.matmul.allow_tf32 = tf32
            del seen[:]
            got = a.cuda() @ b.cuda()
            assert seen == [compute_type]
            assert np.all(np.abs(got.cpu().numpy() - exact) <= bound), tf32
            if not REAL:
                # (the host's product: within both bounds of the float32 result; the
                # emulator's GEMM and the CPU's small-product kernel sum in other orders)
                assert np.all(np.abs(got.cpu().numpy() - (a @ b).numpy()) <= 2 * f32_bound)
    finally:
        ptcore.backends.cuda.matmul.allow_tf32 = old


def test_conv_tf32_follows_cudnn_switch(gemm_compute_types):
    """A float32 convolution's GEMMs (forward, input and weight gradients)
    compute in TF32 while ``backends.cudnn.allow_tf32`` (torch's default
    True: its cuDNN convolutions' rule), in float32 once it is False,
    whatever the matmul precision; float64 always in float64."""
    seen = gemm_compute_types
    cudnn = ptcore.backends.cudnn
    old = cudnn.allow_tf32, ptcore.backends.cuda.matmul.allow_tf32
    try:
        ptcore.backends.cuda.matmul.allow_tf32 = False
        for dtype, tf32, want in ((ptcore.float32, True, 77), (ptcore.float32, False, 68),
                                  (ptcore.float64, True, 70)):
            cudnn.allow_tf32 = tf32
            x = _rand((2, 3, 6, 6), dtype, 21).cuda().requires_grad_()
            w = _rand((4, 3, 3, 3), dtype, 22).cuda().requires_grad_()
            del seen[:]
            y = ptcore.nn.functional.conv2d(x, w)
            y.sum().backward()
            assert seen and set(seen) == {want}, (dtype, tf32, seen)
            assert len(seen) >= 3          # forward, input gradient, weight gradient
        cudnn.allow_tf32 = True
        with cudnn.flags(enabled=True, allow_tf32=False):
            del seen[:]
            ptcore.nn.functional.conv1d(_rand((1, 2, 5), ptcore.float32, 23).cuda(),
                                        _rand((3, 2, 2), ptcore.float32, 24).cuda())
            assert set(seen) == {68}
    finally:
        cudnn.allow_tf32, ptcore.backends.cuda.matmul.allow_tf32 = old


def _mlp_run(dev, steps=3):
    ptcore.manual_seed(0)
    m = ptcore.nn.Sequential(ptcore.nn.Linear(8, 16), ptcore.nn.ReLU(), ptcore.nn.Linear(16, 4),
                             ptcore.nn.Tanh()).to(dev)
    opt = ptcore.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = ptcore.randn(6, 8).to(dev)
    t = ptcore.randn(6, 4).to(dev)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((m(x) - t) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().cpu() for k, v in m.state_dict().items()}


def test_mlp_forward_backward_and_training():
    cpu_losses, cpu_state = _mlp_run("cpu")
    dev_losses, dev_state = _mlp_run("cuda")
    assert np.allclose(cpu_losses, dev_losses, rtol=1e-5)
    for k in cpu_state:
        assert ptcore.allclose(cpu_state[k], dev_state[k], rtol=1e-5, atol=1e-6), k


def test_ops_without_kernels_raise_not_implemented(monkeypatch):
    # (every op has a CUDA kernel now: one is taken away for the test)
    from ptcore._dispatch.table import lookup
    monkeypatch.delitem(lookup("ldl_factor", "linalg").kernels, "cuda")
    x = _rand((3, 3)).cuda()
    with pytest.raises(NotImplementedError, match=r"linalg.*ldl_factor.*no CUDA kernel.*cuda:0"):
        ptcore.linalg.ldl_factor(x)


def test_allclose_and_equal_on_cuda_tensors():
    a = ptcore.tensor([1.0, 2.0, float("nan")], device="cuda")
    b = a.clone()
    b[1] = 2.0 + 2.0 ** -22          # one float32 ulp: close, not equal
    assert ptcore.allclose(a[:2], b[:2]) and a[:2].allclose(b[:2])
    assert not ptcore.allclose(a, b)
    assert ptcore.allclose(a, b, equal_nan=True)
    assert ptcore.equal(a[:1], b[:1]) and not ptcore.equal(a[:2], b[:2])
    assert not ptcore.equal(a, a[:2]) and ptcore.equal(a[:0], b[:0])
    i = ptcore.arange(6, device="cuda").view(2, 3)
    assert ptcore.equal(i.t(), i.t().contiguous())


# -- in-place binary ops write self directly; PyTorch's overlap errors ---------------

@pytest.mark.parametrize("op,other", [("add_", "t"), ("sub_", "t"), ("mul_", "t"), ("div_", "t"),
                                       ("add_", "row"), ("mul_", "self"), ("add_", "strided")])
def test_inplace_binary_writes_self_in_one_launch(op, other, launches):
    a_cpu = _rand((4, 6), seed=1)
    b_cpu = {"t": _rand((4, 6), seed=2), "row": _rand((6,), seed=3),
             "strided": _rand((6, 4), seed=4).t(), "self": None}[other]
    a = a_cpu.to("cuda")
    b = a if other == "self" else (b_cpu.t().to("cuda").t() if other == "strided" else b_cpu.to("cuda"))
    ptr, v = a.data_ptr(), a._version
    del launches[:]
    r = getattr(a, op)(b, alpha=2) if op in ("add_", "sub_") else getattr(a, op)(b)
    assert r is a and a.data_ptr() == ptr and a._version == v + 1
    assert len(launches) == 1
    ref = getattr(a_cpu, op)(a_cpu if other == "self" else b_cpu, **({"alpha": 2} if op in ("add_", "sub_") else {}))
    _close(a, ref)


def test_inplace_binary_promoting_operand_keeps_cpu_semantics():
    a = ptcore.ones(3, dtype=ptcore.int64, device="cuda")
    with pytest.raises(RuntimeError, match="can't be cast"):
        a.add_(1.5)
    a.mul_(ptcore.tensor(3))                       # 0-d CPU tensor operand
    assert a.cpu().tolist() == [3, 3, 3]
    h = ptcore.ones(3, dtype=ptcore.float16, device="cuda")
    h.add_(ptcore.ones(3, device="cuda"))          # float32 operand, float16 self
    assert h.dtype == ptcore.float16 and h.cpu().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_inplace_binary_overlap_errors_as_cpu(device):
    x = ptcore.arange(10.0, device=device)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to"):
        x[1:].add_(x[:-1])
    e = ptcore.zeros(1, device=device).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1)
    y = ptcore.arange(6.0, device=device)
    y.mul_(y)                                      # full overlap: allowed
    assert y.cpu().tolist() == [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]


def test_inplace_binary_after_save_fails_backward():
    w = ptcore.randn(3, requires_grad=True, device="cuda")
    h = w * 2
    s = h.sin()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.backward(ptcore.ones(3, device="cuda"))


def test_gradcheck_and_gradgradcheck_on_device_tensors():
    from ptcore.autograd import gradcheck, gradgradcheck
    g = np.random.default_rng(5)
    x = ptcore.tensor(g.standard_normal((3, 4)), device="cuda").requires_grad_()
    y = ptcore.tensor(g.standard_normal(4), device="cuda").requires_grad_()

    def f(a, b):
        return (a.sin() * b).sum(1)
    assert gradcheck(f, (x, y), check_forward_ad=True)
    assert gradgradcheck(f, (x, y))
