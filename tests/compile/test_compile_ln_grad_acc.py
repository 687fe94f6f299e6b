"""A layer norm's input gradient added to the residual branch's gradient
(``ptcore._inductor.kernel_grads.fuse_ln_grad_acc``): in a pre-norm block
``x + f(ln(x))`` the backward adds the two gradients of ``x``; the compiled
backward has layer norm's kernel add the residual's gradient as each element
of its own leaves (``layer_norm_backward(..., acc=)``).  The sum must have
the bits of the separate addition at every instruction-set level and thread
count, the kernel must refuse what it cannot read, and the step must fall
back to the separate ops where the kernel declines or the backward is
recorded."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _nn_kernels
from ptcore._inductor.kernel_grads import KernelGrad, fuse_ln_grad_acc, ln_grad, ln_grad_acc
from ptcore.jit._ir import Node
from ptcore.nn.functional._norm import _cpu_ln_kernels


def _stats(x, w, b, n):
    return _cpu_ln_kernels().layer_norm_forward(x, n, w, b, 1e-5)


def _case(shape, dtype, seed=0, weight=True):
    g = ptcore.Generator().manual_seed(seed)
    n = shape[-1]
    x = ptcore.randn(*shape, dtype=dtype, generator=g) * 3 + 1
    gy = ptcore.randn(*shape, dtype=dtype, generator=g)
    acc = ptcore.randn(*shape, dtype=dtype, generator=g)
    w = ptcore.randn(n, dtype=dtype, generator=g) if weight else None
    b = ptcore.randn(n, dtype=dtype, generator=g) if weight else None
    _, mean, rstd = _stats(x, w, b, n)
    return x, gy, acc, w, mean, rstd


@pytest.mark.parametrize("level", [2, 1, 0])
@pytest.mark.parametrize("shape", [(12, 64, 128), (7, 37), (5, 16), (3, 8), (1, 1)])
@pytest.mark.parametrize("weight", [True, False])
def test_kernel_adds_acc_with_the_bits_of_the_separate_addition(level, shape, weight):
    K = _cpu_ln_kernels()
    old = _nn_kernels._set_ln_rows(level)
    try:
        x, gy, acc, w, mean, rstd = _case(shape, ptcore.float32, weight=weight)
        gx, gw, gb = K.layer_norm_backward(gy, x, mean, rstd, w, weight, weight)
        fx, fw, fb = K.layer_norm_backward(gy, x, mean, rstd, w, weight, weight, True, acc)
    finally:
        _nn_kernels._set_ln_rows(old)
    assert ptcore.equal(fx, acc + gx)
    if weight:
        assert ptcore.equal(fw, gw) and ptcore.equal(fb, gb)


def test_kernel_adds_acc_float64_and_on_two_threads():
    K = _cpu_ln_kernels()
    x, gy, acc, w, mean, rstd = _case((9, 33), ptcore.float64)
    gx = K.layer_norm_backward(gy, x, mean, rstd, w, True, True)[0]
    fx = K.layer_norm_backward(gy, x, mean, rstd, w, True, True, True, acc)[0]
    assert ptcore.equal(fx, acc + gx)
    # large enough for the row groups to be split over the threads
    x, gy, acc, w, mean, rstd = _case((4096, 96), ptcore.float32, seed=3)
    old = ptcore.get_num_threads()
    ptcore.set_num_threads(2)
    try:
        fx2 = K.layer_norm_backward(gy, x, mean, rstd, w, True, True, True, acc)[0]
    finally:
        ptcore.set_num_threads(old)
    fx1 = K.layer_norm_backward(gy, x, mean, rstd, w, True, True, True, acc)[0]
    gx = K.layer_norm_backward(gy, x, mean, rstd, w, True, True)[0]
    assert ptcore.equal(fx2, fx1) and ptcore.equal(fx1, acc + gx)


def test_kernel_refuses_an_acc_it_cannot_read():
    K = _cpu_ln_kernels()
    x, gy, acc, w, mean, rstd = _case((6, 16), ptcore.float32)
    for bad in (acc.t().contiguous().t(),          # not contiguous like x
                acc[:5],                           # another shape
                acc.double(),                      # another dtype
                acc.reshape(96),                   # another rank
                np.zeros((6, 16), np.float32)):    # not a tensor
        assert K.layer_norm_backward(gy, x, mean, rstd, w, True, True, True, bad) is None
    # acc asks for the input gradient
    assert K.layer_norm_backward(gy, x, mean, rstd, w, True, True, False, acc) is None


def test_step_falls_back_to_the_separate_ops():
    x, gy, acc, w, mean, rstd = _case((6, 16), ptcore.float32)
    b = ptcore.zeros(16)
    ref = ln_grad(gy, x, mean, rstd, w, b, (16,), 1e-5, True, True)
    # an acc the kernel refuses: ln_grad, then the addition, in the add's order
    odd = acc.t().contiguous().t()
    for first in (True, False):
        gx, gw, gb = ln_grad_acc(odd, first, gy, x, mean, rstd, w, b, (16,), 1e-5, True, True)
        assert ptcore.equal(gx, odd + ref[0] if first else ref[0] + odd)
        assert ptcore.equal(gw, ref[1]) and ptcore.equal(gb, ref[2])
    # a recorded backward (create_graph): differentiable ops, gradients flow to acc
    acc_r = acc.clone().requires_grad_(True)
    gy_r = gy.clone().requires_grad_(True)
    with ptcore.enable_grad():
        gx, _, _ = ln_grad_acc(acc_r, True, gy_r, x, mean, rstd, w, b, (16,), 1e-5, True, True)
    assert gx.requires_grad
    np.testing.assert_allclose(gx.detach().numpy(), (acc + ref[0]).numpy(), rtol=1e-5, atol=1e-6)
    gx.sum().backward()
    assert ptcore.equal(acc_r.grad, ptcore.ones_like(acc))


class _PreNorm(ptcore.nn.Module):
    def __init__(self, C, blocks):
        super().__init__()
        nn = ptcore.nn
        self.lns = nn.ModuleList([nn.LayerNorm(C) for _ in range(blocks)])
        self.fcs = nn.ModuleList([nn.Linear(C, C) for _ in range(blocks)])
        self.head = nn.LayerNorm(C)

    def forward(self, x):
        for ln, fc in zip(self.lns, self.fcs):
            x = x + ptcore.nn.functional.relu(fc(ln(x)))
        return self.head(x)


def _sources(cm):
    seg = cm.dynamo_ctx.entries[0].program.segments[0]
    return seg.backward.bwd_code.source


@pytest.mark.parametrize("C", [64, 20])
def test_compiled_pre_norm_stack_has_eager_bits(C):
    ptcore.manual_seed(0)
    m_e = _PreNorm(C, 3)
    ptcore.manual_seed(0)
    m_c = _PreNorm(C, 3)
    cm = ptcore.compile(m_c)
    rng = np.random.default_rng(0)
    for _ in range(2):
        xa = rng.standard_normal((4, 6, C)).astype(np.float32)
        xe = ptcore.from_numpy(xa).requires_grad_(True)
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        le = m_e(xe).square().mean()
        lc = cm(xc).square().mean()
        le.backward()
        lc.backward()
        assert ptcore.equal(lc, le)
        assert ptcore.equal(xc.grad, xe.grad)
        for (name, pe), pc in zip(m_e.named_parameters(), m_c.parameters()):
            assert ptcore.equal(pc.grad, pe.grad), name
        m_e.zero_grad()
        m_c.zero_grad()
    src = _sources(cm)
    # three blocks: each block's norm adds the residual's gradient (the head's
    # gradient is the first, it adds nothing)
    assert len(re.findall(r"= ln_grad_acc_\d+\(", src)) == 3, src


def _node(fn, args, out):
    return KernelGrad(fn, args, out)


def test_pass_leaves_a_gradient_read_twice_or_live():
    ln = _node(ln_grad, [{"v": 1}, {"v": 2}], {"tuple": [{"v": 10}, {"v": 11}, None]})
    add = Node(("Tensor", "add"), [{"v": 5}, {"v": 10}], {}, {"v": 20})
    other = Node(("ptcore", "neg"), [{"v": 10}], {}, {"v": 21})
    out = fuse_ln_grad_acc([ln, add], [20])
    assert len(out) == 1 and out[0]._fn is ln_grad_acc
    assert out[0].outputs == {"tuple": [{"v": 20}, {"v": 11}, None]}
    assert out[0].args[:2] == [{"v": 5}, True]
    # read by another node, or an output of the backward: unchanged
    assert fuse_ln_grad_acc([ln, add, other], [20, 21]) == [ln, add, other]
    assert fuse_ln_grad_acc([ln, add], [20, 10]) == [ln, add]
    # an add with alpha, or of the gradient with itself: unchanged
    add_a = Node(("Tensor", "add"), [{"v": 5}, {"v": 10}], {"alpha": 2}, {"v": 20})
    assert fuse_ln_grad_acc([ln, add_a], [20]) == [ln, add_a]
    # the residual made after the norm: the step goes where the add was,
    # unless something in between reads the norm's weight gradient
    mk = Node(("ptcore", "neg"), [{"v": 3}], {}, {"v": 5})
    out = fuse_ln_grad_acc([ln, mk, add], [20])
    assert [type(n) for n in out] == [Node, KernelGrad] and out[1].args[1] is True
    rd = Node(("ptcore", "neg"), [{"v": 11}], {}, {"v": 22})
    assert fuse_ln_grad_acc([ln, rd, mk, add], [20, 22]) == [ln, rd, mk, add]
    # the gradient second: acc first
    add2 = Node(("Tensor", "add"), [{"v": 10}, {"v": 5}], {}, {"v": 20})
    out = fuse_ln_grad_acc([ln, add2], [20])
    assert out[0].args[:2] == [{"v": 5}, False]
