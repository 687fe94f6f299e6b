"""ptcore.jit fusion on CUDA tensors (emulated device): a fused chain is ONE
generated kernel launch, its results equal eager CPU, the compiled program is
cached per expression, broadcast operands take the strided variant, and
chains with ops CUDA lacks stay unfused."""
import numpy as np
import pytest

import ptcore
from device_target import REAL
from ptcore import jit
from ptcore.cuda.emulated import kernels as _host_kernels
from ptcore.jit._fusion import FusedGroup, plan


def _np(t):
    return t.detach().cpu().numpy()


def chain(x):
    y = x * 1.5 + 0.5
    y = ptcore.tanh(y) * y
    y = ptcore.sigmoid(y) - 0.25
    return y * y


def rich(x, y):
    a = ptcore.maximum(ptcore.exp(-x * x), ptcore.sqrt(ptcore.abs(y))) / (y * y + 1.0)
    b = ptcore.relu(x - 0.1) ** 2 + 2 ** x - (1.0 - ptcore.log(ptcore.abs(x) + 1.0))
    c = ptcore.minimum(a, b) * (x > y) + ptcore.tanh(b) * (x <= 0.5)
    return c, c >= 0.25, -ptcore.sigmoid(a) + y ** -1


def _groups(sf):
    return [s for s in sf.graph._plan if isinstance(s, FusedGroup)]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_chain_is_one_launch_and_equals_cpu(dtype, launches):
    x = ptcore.randn(5, 1001, dtype=dtype) * 3
    xc = x.to("cuda")
    sf = jit.trace(chain, xc)
    sf(xc)
    assert len(_groups(sf)) == 1
    del launches[:]
    got = sf(xc)
    assert len(launches) == 1
    assert got.device.type == "cuda" and got.dtype is dtype and tuple(got.shape) == (5, 1001)
    tol = 1e-6 if dtype is ptcore.float32 else 1e-12
    np.testing.assert_allclose(_np(got), _np(chain(x)), rtol=tol, atol=tol)
    # eager on the device launches a kernel per op (and per scalar operand)
    del launches[:]
    chain(xc)
    assert len(launches) >= 7


def test_rich_expression_several_outputs_one_launch(launches):
    x, y = ptcore.randn(3, 4, 257), ptcore.randn(3, 4, 257)
    xc, yc = x.to("cuda"), y.to("cuda")
    sf = jit.trace(rich, (xc, yc))
    sf(xc, yc)
    (g,) = _groups(sf)
    assert len(g.out_ids) == 3 and len(g.nodes) == len(sf.graph.nodes)
    del launches[:]
    got = sf(xc, yc)
    assert len(launches) == 1
    for a, b in zip(got, rich(x, y)):
        assert a.dtype is b.dtype
        np.testing.assert_allclose(_np(a).astype(float), _np(b).astype(float), rtol=2e-6,
                                   atol=2e-6)


def test_broadcast_and_strided_operands_use_the_strided_variant(launches):
    def f(x, b, s):
        return ptcore.relu(x + b) * s - ptcore.sigmoid(x)
    x = ptcore.randn(16, 33)
    b = ptcore.randn(33)
    s = ptcore.randn(16, 1)
    xc, bc, sc = x.to("cuda"), b.to("cuda"), s.to("cuda")
    sf = jit.trace(f, (xc, bc, sc))
    sf(xc, bc, sc)
    del launches[:]
    got = sf(xc, bc, sc)
    assert len(launches) == 1
    assert launches[0].endswith("_s")
    np.testing.assert_allclose(_np(got), _np(f(x, b, s)), rtol=1e-6, atol=1e-6)
    xt = ptcore.randn(33, 16).t()                    # same shape, not contiguous
    got = sf(xt.to("cuda").t().contiguous().t(), bc, sc)
    np.testing.assert_allclose(_np(got), _np(f(xt, b, s)), rtol=1e-6, atol=1e-6)


def test_program_is_compiled_once_per_expression(launches):
    x = ptcore.randn(100).to("cuda")
    sf = jit.trace(chain, x)
    sf(x)
    before = _host_kernels.stats()["compiles"]
    for _ in range(3):
        sf(x)
    jit.trace(chain, x)(x)                           # same expression, new trace
    if not REAL:                                     # (the emulator counts its compiles)
        assert _host_kernels.stats()["compiles"] == before
    src = _groups(sf)[0]._cuda[0]
    assert src.count("__global__") == 2 and "PTC_FOR" in src


def test_non_pointwise_ops_split_chains(launches):
    def f(x):
        y = ptcore.exp(x) * 2.0 + 1.0
        s = y.sum()
        return ptcore.tanh(y - 0.5) * 3.0, s
    x = ptcore.randn(64)
    xc = x.to("cuda")
    sf = jit.trace(f, xc)
    assert [type(s).__name__ for s in plan(sf.graph)] == ["FusedGroup", "Node", "FusedGroup"]
    got = sf(xc)
    for a, b in zip(got, f(x)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def test_autograd_on_cuda_falls_back_to_the_ops(launches):
    x = ptcore.randn(50)
    xc = x.to("cuda").requires_grad_()
    sf = jit.trace(chain, xc.detach())
    out = sf(xc)
    assert out.grad_fn is not None
    np.testing.assert_allclose(_np(out), _np(chain(x)), rtol=1e-6, atol=1e-6)
