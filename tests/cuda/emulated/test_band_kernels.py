"""nn.functional's band ops on CUDA (emulated device): ``threshold``,
``hardshrink`` and ``softshrink`` of a float tensor are one kernel each
(``ptc_unary_<op>``; their composites made 3, 5 and 9 launches), ``prelu``
one (``ptc_binary_prelu``, the weight broadcast; 4 before), giving the
CPU's values bit for bit -- every float16 and bfloat16 value against bounds
the dtype rounds up and down, NaN, infinities --, the same errors, gradients
and ``out=``."""
import math

import numpy as np
import pytest

import ptcore

from kernel_launches import launched

F = ptcore.nn.functional

_OPS = {
    "threshold": lambda t, b: F.threshold(t, b, -min(b, 100.0) / 3),
    "hardshrink": lambda t, b: F.hardshrink(t, b),
    "softshrink": lambda t, b: F.softshrink(t, b),
}
# bounds the half types round down (0.1, 0.5 - tiny) and up (0.3 in float16, 0.7),
# beyond their range, zero
_BOUNDS = [0.3, 0.7, 0.1, 0.5 - 1e-9, 1e-8, 3.3e4, 7e4, 0.0, 1e30]


def _every(dtype):
    bits = np.arange(0, 1 << 16, dtype=np.uint16)
    if dtype is ptcore.float16:
        v = bits.view(np.float16).astype(np.float32)
    else:
        v = (bits.astype(np.uint32) << 16).view(np.float32)
    return ptcore.from_numpy(v).to(dtype)


def _same(a, b):
    a, b = a.double().numpy(), b.cpu().double().numpy()
    assert np.array_equal(a, b, equal_nan=True)
    num = ~np.isnan(a)
    assert np.array_equal(np.signbit(a[num]), np.signbit(b[num]))       # (+0 and -0 too)


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("dtype", [ptcore.float16, ptcore.bfloat16], ids=str)
def test_every_half_value(op, dtype):
    x = _every(dtype)
    xc = x.cuda()
    for b in _BOUNDS:
        _same(_OPS[op](x, b), _OPS[op](xc, b))


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64], ids=str)
def test_float_values_and_one_launch(op, dtype):
    x = ptcore.randn(3000, dtype=dtype, generator=ptcore.Generator().manual_seed(2)) * 2
    x[::97] = math.nan
    x[1], x[2], x[3], x[4] = math.inf, -math.inf, -0.0, 0.0
    x[5], x[6] = 0.3, float(np.float32(0.3))
    xc = x.cuda()
    for b in (0.3, 0.7, 0.0, 1e39):
        got, names = launched(lambda: _OPS[op](xc, b))
        assert names == [f"ptc_unary_{op}_{'f32' if dtype is ptcore.float32 else 'f64'}_c"], names
        _same(_OPS[op](x, b), got)


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).standard_normal(4000).astype(np.float32) * 2
    a[::50] = np.nan
    for op, tf in (("threshold", lambda t: torch.nn.functional.threshold(t, 0.3, -2.0)),
                   ("hardshrink", lambda t: torch.nn.functional.hardshrink(t, 0.3)),
                   ("softshrink", lambda t: torch.nn.functional.softshrink(t, 0.3))):
        pf = {"threshold": lambda t: F.threshold(t, 0.3, -2.0)}.get(op, lambda t: _OPS[op](t, 0.3))
        got = pf(ptcore.from_numpy(a).cuda()).cpu().numpy()
        assert np.array_equal(got, tf(torch.from_numpy(a)).numpy(), equal_nan=True), op


def test_in_place_out_and_non_float():
    x = ptcore.randn(40, 7, generator=ptcore.Generator().manual_seed(4))
    y = x.cuda()
    _, names = launched(lambda: F.threshold_(y, 0.1, 20.0))
    assert names == ["ptc_unary_threshold_f32_c"], names
    _same(F.threshold(x, 0.1, 20.0), y)
    o = ptcore.empty(40, 7, device="cuda")
    F.hardshrink(x.cuda(), 0.4, out=o)
    _same(F.hardshrink(x, 0.4), o)
    F.softshrink(x.cuda(), 0.4, out=o)
    _same(F.softshrink(x, 0.4), o)
    # integer thresholds keep the composite (a float bound compared in float)
    xi = (x * 5).int()
    assert F.threshold(xi.cuda(), -0.5, 3).cpu().tolist() == F.threshold(xi, -0.5, 3).tolist()
    # a strided input
    _same(F.softshrink(x.t(), 0.2), F.softshrink(x.cuda().t(), 0.2))


def test_errors_as_the_cpu():
    for dev in ("cpu", "cuda"):
        with pytest.raises(RuntimeError, match="without overflow"):
            F.threshold(ptcore.ones(3, dtype=ptcore.float16, device=dev), 0.5, 1e30)
        with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
            F.softshrink(ptcore.ones(3, device=dev), -1.0)


@pytest.mark.parametrize("op", sorted(_OPS))
def test_gradients(op):
    x = ptcore.randn(50, dtype=ptcore.float64, generator=ptcore.Generator().manual_seed(5))
    x[0] = 0.3
    grads = []
    for dev in ("cpu", "cuda"):
        t = x.detach().to(dev).requires_grad_()
        (_OPS[op](t, 0.3) * ptcore.arange(50.0, dtype=ptcore.float64, device=dev)).sum().backward()
        grads.append(t.grad.cpu())
    _same(grads[0], grads[1])


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.float64, ptcore.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(64, 12), (8, 3, 5, 5), (10,), (4, 7)])
def test_prelu_one_kernel(dtype, shape):
    x = (ptcore.randn(*shape, generator=ptcore.Generator().manual_seed(6)) * 3).to(dtype)
    x.view(-1)[0] = math.nan
    x.view(-1)[1] = -0.0
    c = shape[1] if len(shape) > 1 else 1
    for w in (ptcore.rand(c, generator=ptcore.Generator().manual_seed(7)).to(dtype),
              ptcore.tensor([0.25]).to(dtype)):
        xc, wc = x.cuda(), w.cuda()
        got, names = launched(lambda: F.prelu(xc, wc))
        assert [n for n in names if "prelu" in n] == [n for n in names if n.startswith("ptc_binary_prelu")]
        assert len([n for n in names if n.startswith("ptc_binary_prelu")]) == 1, names
        _same(F.prelu(x, w), got)


def test_prelu_gradients():
    x = ptcore.randn(4, 7, dtype=ptcore.float64, generator=ptcore.Generator().manual_seed(8))
    w = ptcore.rand(7, dtype=ptcore.float64, generator=ptcore.Generator().manual_seed(9))
    grads = []
    for dev in ("cpu", "cuda"):
        t, ww = x.detach().to(dev).requires_grad_(), w.detach().to(dev).requires_grad_()
        (F.prelu(t, ww) * ptcore.arange(28.0, dtype=ptcore.float64, device=dev).view(4, 7)).sum().backward()
        grads.append((t.grad.cpu(), ww.grad.cpu()))
    _same(grads[0][0], grads[1][0])
    assert ptcore.allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-12)
