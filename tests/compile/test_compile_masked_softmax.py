"""Attention's scaled, masked softmax as one step of a compiled training graph
(ptcore._inductor.masked_softmax): the kernels against the three ops they
replace (bit for bit, every mask broadcast, NaN/inf, threads), what they
decline, the steps' fallbacks (eager's values, errors and history) and the
pattern's limits."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._inductor import masked_softmax as ms
from ptcore._inductor.kernel_grads import KernelGrad, softmax_grad
from ptcore.jit._ir import Node
from ptcore._ops.kernels._nn_kernels import softmax_backward
from ptcore._ops.kernels._reduce import masked_softmax_last

SCALE = 0.17677669529663687


def softmax_backward_masked(g, y, mask, scale):
    return softmax_backward(g, y, -1, False, scale, mask)


def _t(rng, *shape, dtype="float32"):
    return ptcore.from_numpy(rng.standard_normal(shape).astype(dtype))


def _same_bits(a, b):
    an, bn = a.numpy(), b.numpy()
    return an.shape == bn.shape and an.dtype == bn.dtype and \
        np.array_equal(an.view(np.uint8), bn.view(np.uint8))


def _masks(rng, shape):
    L, T = shape[-2:]
    causal = ptcore.tril(ptcore.ones(L, T)) == 0
    yield causal.view((1,) * (len(shape) - 2) + (L, T))                 # nanoGPT's buffer
    yield ptcore.from_numpy(rng.random(shape) < 0.3)                       # full shape
    yield ptcore.from_numpy(rng.random((shape[0],) + (1,) * (len(shape) - 2) + (T,)) < 0.3)
    yield ptcore.from_numpy(rng.random(shape[-1:]) < 0.5)                   # one row for all
    yield ptcore.from_numpy(rng.random(shape[:-1] + (1,)) < 0.2)            # whole rows
    yield ptcore.tensor(False)                                              # 0-dim
    yield ptcore.from_numpy(rng.random((L, T + 3)) < 0.3)[:, :T]            # a slice (strided rows)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(2, 3, 9, 9), (4, 16, 16), (3, 64, 64), (2, 2, 5, 33), (5, 17, 7),
                                   (1, 3, 4100)])
@pytest.mark.parametrize("fill", [float("-inf"), -1e9, 0.0])
def test_kernels_give_the_three_ops_bits(dtype, shape, fill):
    rng = np.random.default_rng(0)
    x = _t(rng, *shape, dtype=dtype)
    g = _t(rng, *shape, dtype=dtype)
    for m in _masks(rng, shape):
        want = ptcore.softmax(x.mul(SCALE).masked_fill(m, fill), -1)
        got = masked_softmax_last(x, SCALE, m, fill)
        assert got is not None and got.is_contiguous() and _same_bits(got, want), m.shape
        wb = softmax_grad(g, want).masked_fill(m, 0).mul(SCALE)
        gb = softmax_backward_masked(g, want, m, SCALE)
        assert gb is not None and _same_bits(gb, wb), m.shape


def test_nan_inf_and_fully_masked_rows():
    x = ptcore.tensor([[1.0, float("nan"), 2.0, 3.0], [float("inf"), 0.0, 1.0, 2.0],
                       [1.0, 2.0, 3.0, 4.0], [-float("inf")] * 4])
    m = ptcore.tensor([[False, False, True, False], [False, True, False, False],
                       [True, True, True, True], [False] * 4])
    want = ptcore.softmax(x.mul(0.5).masked_fill(m, float("-inf")), -1)
    got = masked_softmax_last(x, 0.5, m, float("-inf"))
    assert _same_bits(got, want)            # NaN rows included, in the same places
    assert ptcore.isnan(got[2]).all()       # a fully masked row: NaN, as eager
    g = ptcore.ones(4, 4)
    assert _same_bits(softmax_backward_masked(g, want, m, 0.5),
                      softmax_grad(g, want).masked_fill(m, 0).mul(0.5))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_count_does_not_change_bits(threads):
    rng = np.random.default_rng(1)
    x, g = _t(rng, 8, 4, 64, 64), _t(rng, 8, 4, 64, 64)
    m = ptcore.tril(ptcore.ones(64, 64)).view(1, 1, 64, 64) == 0
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        y1 = masked_softmax_last(x, SCALE, m, float("-inf"))
        b1 = softmax_backward_masked(g, y1, m, SCALE)
        ptcore.set_num_threads(threads)
        y2 = masked_softmax_last(x, SCALE, m, float("-inf"))
        b2 = softmax_backward_masked(g, y2, m, SCALE)
    finally:
        ptcore.set_num_threads(old)
    assert _same_bits(y1, y2) and _same_bits(b1, b2)


def test_kernels_decline_what_they_do_not_take():
    rng = np.random.default_rng(2)
    x = _t(rng, 2, 5, 6)
    m = ptcore.from_numpy(rng.random((5, 6)) < 0.5)
    assert masked_softmax_last(x.transpose(1, 2), SCALE, m.t(), 0.0) is None   # not contiguous
    assert masked_softmax_last(x, SCALE, m.to(ptcore.uint8), 0.0) is None      # not bool
    assert masked_softmax_last(x, SCALE, m[:, :3], 0.0) is None                # no broadcast
    assert masked_softmax_last(x, SCALE, m.t().contiguous().t(), 0.0) is None  # strided last dim
    assert masked_softmax_last(x.to(ptcore.int64), SCALE, m, 0.0) is None      # not float
    assert masked_softmax_last(x, SCALE, ptcore.ones(2, 2, 5, 6, dtype=ptcore.bool), 0.0) is None
    assert masked_softmax_last(ptcore.empty(0, 6), SCALE, m[:1], 0.0) is None  # empty
    y = ptcore.softmax(x, -1)
    assert softmax_backward_masked(x, y, m.to(ptcore.uint8), SCALE) is None
    assert softmax_backward_masked(x, y.transpose(1, 2), m, SCALE) is None
    assert softmax_backward_masked(x, y, m[:, :3], SCALE) is None


def _runner(which):
    """The step's fallback: the chain's ops in order, as a compiled graph binds them."""
    if which == "fwd":
        return lambda x, _s, m, _f: ptcore.softmax(x.mul(SCALE).masked_fill(m, float("-inf")),
                                                   -1)
    return lambda g, y, m, _s: softmax_grad(g, y).masked_fill(m, 0).mul(SCALE)


def test_steps_fall_back_to_the_ops():
    rng = np.random.default_rng(3)
    x = _t(rng, 3, 4, 4)
    m = ptcore.tril(ptcore.ones(4, 4)) == 0
    # a uint8 mask: masked_fill's error
    with pytest.raises(RuntimeError) as e:
        x.masked_fill(m.to(ptcore.uint8), 0.0)
    with pytest.raises(type(e.value)):
        ms.masked_softmax(x, SCALE, m.to(ptcore.uint8), float("-inf"), _runner("fwd"))
    # recorded: the ops with their history, eager's gradient
    xr = x.clone().requires_grad_(True)
    y = ms.masked_softmax(xr, SCALE, m, float("-inf"), _runner("fwd"))
    assert y.grad_fn is not None
    y.pow(2).sum().backward()
    xe = x.clone().requires_grad_(True)
    ptcore.softmax(xe.mul(SCALE).masked_fill(m, float("-inf")), -1).pow(2).sum().backward()
    assert _same_bits(xr.grad, xe.grad)
    # under no_grad the same call takes the kernel (no history)
    with ptcore.no_grad():
        y = ms.masked_softmax(xr, SCALE, m, float("-inf"), _runner("fwd"))
    assert y.grad_fn is None
    # backward: a recorded gradient (create_graph) runs the ops
    g = _t(rng, 3, 4, 4).requires_grad_(True)
    yv = ptcore.softmax(x, -1)
    r = ms.masked_softmax_grad(g, yv, m, SCALE, _runner("bwd"))
    assert r.grad_fn is not None
    # (softmax's gradient recorded is its differentiable composite: another summation)
    np.testing.assert_allclose(r.detach().numpy(),
                               softmax_backward_masked(g.detach(), yv, m, SCALE).numpy(),
                               rtol=1e-5, atol=1e-7)


def _attention(lib, C, H, T, dim=-1, scale_tensor=False, keep_scaled=False):
    nn = lib.nn
    F = nn.functional

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.register_buffer("bias", lib.tril(lib.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            B, T_, _ = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T_, H, C // H).transpose(1, 2) for t in (q, k, v))
            s = lib.tensor(0.5) if scale_tensor else 0.5
            att = (q @ k.transpose(-2, -1)) * s
            att = att.masked_fill(self.bias[:, :, :T_, :T_] == 0, float("-inf"))
            att = F.softmax(att, dim=dim)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T_, C)
            return y + att.sum() if keep_scaled else y
    return Attn()


def _step_sources(cm):
    seg = cm.dynamo_ctx.entries[0].program.segments[0]
    return seg.backward.fwd_code.source, seg.backward.bwd_code.source


def _calls(src, name):
    return len(re.findall(rf"= {name}_\d+\(", src))


# (a compiled training step through both fused steps against eager, bit for bit:
# tests/compile/test_compile_products_into_place.py::test_training_step_bits_equal_eager)


@pytest.mark.parametrize("kw", [dict(dim=2), dict(scale_tensor=True), dict(keep_scaled=True)])
def test_pattern_limits(kw):
    # softmax over another dim, a tensor scale, the softmax's result read twice: still
    # correct; only the last dim with a number scale is fused
    C, H, T, B = 8, 2, 6, 2
    ptcore.manual_seed(1)
    m = _attention(ptcore, C, H, T, **kw)
    me = _attention(ptcore, C, H, T, **kw)
    me.load_state_dict(m.state_dict())
    cm = ptcore.compile(m)
    xa = np.random.default_rng(5).standard_normal((B, T, C)).astype("float32")
    for _ in range(2):
        grads = []
        for f, mod in ((cm, m), (me, me)):
            mod.zero_grad()
            x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
            f(x).square().sum().backward()
            grads.append(x.grad)
        np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-5, atol=1e-6)
    fwd, _ = _step_sources(cm)
    fused = _calls(fwd, "masked_softmax")
    assert fused == (1 if kw == dict(keep_scaled=True) else 0)


def test_a_negative_zero_fill_is_not_fused():
    # (the backward kernel writes +0 where the mask is set: a -0 fill keeps the ops)
    for fill, fused in ((0, True), (0.0, True), (-0.0, False)):
        nodes = [KernelGrad(softmax_grad, [{"v": 1}, {"v": 2}], {"v": 4}),
                 Node(("Tensor", "masked_fill"), [{"v": 4}, {"v": 3}, fill], {}, {"v": 5}),
                 Node(("Tensor", "mul"), [{"v": 5}, SCALE], {}, {"v": 6})]
        out = ms.fuse_masked_softmax(nodes, [6], {})
        assert (len(out) == 1 and isinstance(out[0], ms.MaskedSoftmaxGrad)) == fused
