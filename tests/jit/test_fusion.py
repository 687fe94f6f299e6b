"""Fusion of elementwise chains in traced graphs: the fused kernel gives the
eager results (float32 and float64, special values), falls back to the
separate ops when autograd records or operands are not contiguous, and
leaves saved graphs unfused."""
import io

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore import jit
from ptcore.jit._fusion import plan, FusedGroup


def _np(t):
    return t.detach().numpy()


def chain(x):
    y = x * 1.5 + 0.5
    y = ptcore.tanh(y) * y
    y = ptcore.sigmoid(y) - 0.25
    return y * y


def acts(x):
    a = F.gelu(x) + F.gelu(x, approximate="tanh")
    b = F.silu(x) * F.relu(x) - ptcore.exp(-x.abs())
    return ptcore.maximum(a, b) / (ptcore.sqrt(x * x + 1.0)) + ptcore.log1p(x.abs())


SPECIAL = np.array([0.0, -0.0, 1e-30, -1e-30, 0.3, -0.7, 5.0, -12.0, 40.0, -100.0, np.inf,
                    -np.inf, np.nan], np.float64)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("fn", [chain, acts])
def test_fused_equals_eager(fn, dtype):
    rng = np.random.default_rng(0)
    xn = np.concatenate([rng.standard_normal(10_007) * 4, SPECIAL])
    x = ptcore.tensor(xn, dtype=dtype)
    sf = jit.trace(fn, x)
    steps = plan(sf.graph)
    assert any(isinstance(s, FusedGroup) for s in steps)
    assert len(steps) < len(sf.graph.nodes)
    x2 = ptcore.tensor(np.concatenate([rng.standard_normal(10_007) * 4, SPECIAL]), dtype=dtype)
    got, exp = _np(sf(x2)), _np(fn(x2))
    tol = 2e-6 if dtype is ptcore.float32 else 1e-12
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, equal_nan=True)


def test_fused_tanh_accuracy_and_special_values():
    sf = jit.trace(lambda a: ptcore.tanh(a) * 1.0, ptcore.ones(4))
    xn = np.concatenate([np.linspace(-20, 20, 40001), np.logspace(-30, 1, 300),
                         -np.logspace(-30, 1, 300)]).astype(np.float32)
    got = _np(sf(ptcore.tensor(xn)))
    exp = np.tanh(xn.astype(np.float64))
    assert np.max(np.abs(got - exp) / np.maximum(np.abs(exp), 1e-38)) < 4e-7
    s = _np(sf(ptcore.tensor([np.inf, -np.inf, np.nan, -0.0], dtype=ptcore.float32)))
    assert s[0] == 1 and s[1] == -1 and np.isnan(s[2]) and s[3] == 0 and np.signbit(s[3])


def test_fallback_under_autograd_gives_eager_gradients():
    x = ptcore.randn(257, dtype=ptcore.float64)
    sf = jit.trace(chain, x)
    a = x.clone().requires_grad_()
    b = x.clone().requires_grad_()
    sf(a).sum().backward()
    chain(b).sum().backward()
    np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-12)


def test_fallback_for_non_contiguous_and_other_shapes():
    x = ptcore.randn(8, 6)
    sf = jit.trace(chain, x)
    xt = ptcore.randn(6, 8).t()                      # same shape, not contiguous
    np.testing.assert_allclose(_np(sf(xt)), _np(chain(xt)), rtol=1e-6, atol=1e-7)


def test_intermediate_used_outside_is_kept():
    def f(x):
        y = ptcore.exp(x) * 2.0
        z = y + 1.0
        return z * z, y                              # y escapes
    x = ptcore.randn(100)
    sf = jit.trace(f, x)
    for got, exp in zip(sf(x), f(x)):
        np.testing.assert_allclose(_np(got), _np(exp), rtol=1e-6)


def test_saved_graph_is_not_fused_and_runs_fused_after_load():
    x = ptcore.randn(64)
    sf = jit.trace(chain, x)
    buf = io.BytesIO()
    jit.save(sf, buf)
    buf.seek(0)
    lf = jit.load(buf)
    assert all(n.op[0] in ("ptcore", "Tensor") for n in lf.graph.nodes)
    np.testing.assert_allclose(_np(lf(x)), _np(chain(x)), rtol=1e-6, atol=1e-7)


def test_kernel_rejects_malformed_programs():
    from ptcore._ops import _fused
    out = ptcore.empty(4)
    x = ptcore.ones(4)
    with pytest.raises(ValueError):
        _fused.run([x], np.array([99, 1, 0, 0], np.int32), 2, 1, out)      # opcode
    with pytest.raises(ValueError):
        _fused.run([x], np.array([2, 0, 0, 0], np.int32), 2, 1, out)       # writes an input
    with pytest.raises(ValueError):
        _fused.run([x], np.array([2, 1, 0, 7], np.int32), 2, 1, out)       # register range
    with pytest.raises(ValueError):
        _fused.run([ptcore.ones(3)], np.array([4, 1, 0, 0], np.int32), 2, 1, out)  # size
    with pytest.raises(TypeError):
        _fused.run([x.long()], np.array([4, 1, 0, 0], np.int32), 2, 1, out.long())
