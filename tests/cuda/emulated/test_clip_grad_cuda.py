"""``nn.utils.clip_grad_norm_`` on CUDA: the 2-norm of every gradient
written into the stacked tensor from C (``ptcore.cuda.ops.clip_fast``, the
``stacked_norm2`` loop) gives bitwise the general path's total norm and
clipped gradients (per-tensor ``vector_norm`` and ``stack``), close to the
CPU's; gradients the one-block row kernel does not take (long, strided,
empty) are reduced by the general path and copied into place; other orders,
dtypes and mixes take the general path."""
import math

import numpy as np
import pytest

import ptcore
from ptcore._dispatch import device as _device
from ptcore.cuda.ops import clip_fast


def _params(dtype, shapes, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for s in shapes:
        p = ptcore.from_numpy(np.asarray(rng.standard_normal(s))).to(dtype).cuda().requires_grad_()
        p.grad = ptcore.from_numpy(np.asarray(rng.standard_normal(s) * 3)).to(dtype).cuda()
        ps.append(p)
    return ps


SHAPES = [(64, 64), (64,), (3, 5, 7), (), (300, 250), (0, 4), (17,)]


def _general(monkeypatch_ctx):
    monkeypatch_ctx.setitem(_device._LOOPS, ("stacked_norm2", "cuda"), None)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_total_norm_and_clipped_gradients_equal_the_general_path(monkeypatch, dtype):
    ps = _params(dtype, SHAPES)
    ps[2].grad = ps[2].grad.transpose(0, 2).contiguous().transpose(0, 2)   # a strided gradient
    assert not ps[2].grad.is_contiguous()
    grads0 = [p.grad.clone() for p in ps]
    calls = []
    orig = clip_fast.stacked_norm2

    def spy(*a):
        r = orig(*a)
        calls.append(r is not None)
        return r
    monkeypatch.setitem(_device._LOOPS, ("stacked_norm2", "cuda"), spy)
    total = ptcore.nn.utils.clip_grad_norm_(ps, 1.0)
    assert calls == [True] and total.dtype is dtype and total.device.type == "cuda"
    got = [p.grad.clone() for p in ps]
    for p, g in zip(ps, grads0):
        p.grad = g.clone()
    with monkeypatch.context() as m:
        _general(m)
        want_total = ptcore.nn.utils.clip_grad_norm_(ps, 1.0)
    np.testing.assert_array_equal(total.cpu().numpy(), want_total.cpu().numpy())
    for a, b in zip(got, [p.grad for p in ps]):
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    cpu = [g.cpu() for g in grads0]
    expect = math.sqrt(sum(float((g.double() ** 2).sum()) for g in cpu))
    np.testing.assert_allclose(float(total), expect, rtol=1e-5 if dtype is ptcore.float32 else 1e-12)


def test_stacked_norms_from_c():
    ps = _params(ptcore.float32, SHAPES, seed=1)
    gs = [p.grad for p in ps]
    s = clip_fast.stacked_norm2(gs, lambda t: ptcore.linalg.vector_norm(t, 2.0))
    want = ptcore.stack([ptcore.linalg.vector_norm(g, 2.0) for g in gs])
    assert s.shape == (len(gs),) and s.is_contiguous()
    np.testing.assert_array_equal(s.cpu().numpy(), want.cpu().numpy())


def test_other_calls_take_the_general_path():
    a, b = _params(ptcore.float32, [(8,), (9,)])
    g = lambda t: ptcore.linalg.vector_norm(t, 2.0)     # noqa: E731
    S = clip_fast.stacked_norm2
    assert S([a.grad, b.grad.double()], g) is None
    assert S([a.grad, b.grad.cpu()], g) is None
    assert S([a.grad.half()], g) is None
    assert S([a.grad.cpu()], g) is None
    assert S([a.grad, "x"], g) is None
    assert S([], g) is None
    with pytest.raises(RuntimeError, match="0-d tensor"):
        S([ptcore.zeros(70000, device="cuda")], lambda t: t[:2])
    for nt in (1.0, math.inf, 3.0):
        got = ptcore.nn.utils.get_total_norm([a.grad, b.grad], nt)
        want = ptcore.nn.utils.get_total_norm([a.grad.cpu(), b.grad.cpu()], nt)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)
    mixed = ptcore.nn.utils.get_total_norm([a.grad, b.grad.double()])
    np.testing.assert_allclose(float(mixed), float(ptcore.nn.utils.get_total_norm(
        [a.grad.cpu().double(), b.grad.cpu().double()])), rtol=1e-6)


def test_nonfinite_norm_raises_or_scales():
    a, b = _params(ptcore.float32, [(8,), (9,)])
    b.grad[3] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        ptcore.nn.utils.clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)
    total = ptcore.nn.utils.clip_grad_norm_([a, b], 1.0)
    assert math.isnan(float(total))
