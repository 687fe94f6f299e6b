"""Batched products computed straight into the tensor a copy would make of
them (ptcore._inductor.copies.fold_products_into_place / products_cat): the
q, k, v gradients of attention written into the qkv projection's gradient,
``(att @ v).transpose(1, 2).contiguous()`` written in the (B, T, H, d)
layout.  A compiled training step must give eager's bits (every output
element is the same FMA chain whatever the output's layout), the step must
fall back to eager's ops (and errors) for what it cannot take, and it must
not move a product past a write into its operand."""
import re
import types

import numpy as np
import pytest

import ptcore
from ptcore._inductor import copies
from ptcore._inductor.copies import ProductsCat, fold_products_into_place, products_cat
from ptcore._inductor.direct_calls import BatchedProduct
from ptcore._inductor.kernel_grads import KernelGrad, select_grad, select_grad_into, squeeze_grad
from ptcore.jit._ir import Node


def _sources(cm):
    seg = cm.dynamo_ctx.entries[0].program.segments[0]
    return seg.backward.fwd_code.source, seg.backward.bwd_code.source


def _calls(src, name):
    return len(re.findall(rf"= {name}_\d+\(", src))


def _gpt_block(lib, C, H, T):
    nn = lib.nn
    F = nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(C)
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)
            self.register_buffer("bias", lib.tril(lib.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            B, T_, _ = x.size()
            q, k, v = self.c_attn(self.ln(x)).split(C, dim=2)
            k = k.view(B, T_, H, C // H).transpose(1, 2)
            q = q.view(B, T_, H, C // H).transpose(1, 2)
            v = v.view(B, T_, H, C // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // H) ** 0.5)
            att = att.masked_fill(self.bias[:, :, :T_, :T_] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T_, C)
            return x + self.c_proj(y)
    return Block()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B,T,C,H", [(3, 16, 32, 4), (2, 64, 128, 4), (1, 5, 6, 3)])
def test_training_step_bits_equal_eager(dtype, B, T, C, H):
    ptcore.manual_seed(0)
    m = _gpt_block(ptcore, C, H, T).to(getattr(ptcore, dtype))
    me = _gpt_block(ptcore, C, H, T).to(getattr(ptcore, dtype))
    me.load_state_dict(m.state_dict())
    cm = ptcore.compile(m)
    rng = np.random.default_rng(1)
    for _ in range(3):                      # the capture run, then the compiled graph
        xa = rng.standard_normal((B, T, C)).astype(dtype)
        ga = rng.standard_normal((B, T, C)).astype(dtype)
        outs = []
        for f, mod in ((cm, m), (me, me)):
            mod.zero_grad()
            x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
            y = f(x)
            y.backward(ptcore.from_numpy(ga.copy()))
            outs.append((y.detach(), x.grad, [p.grad for p in mod.parameters()]))
        (yc, gc, pc), (ye, ge, pe) = outs
        assert ptcore.equal(yc, ye) and ptcore.equal(gc, ge)
        for a, b in zip(pc, pe):
            assert ptcore.equal(a, b)
    fwd, bwd = _sources(cm)
    # forward: att @ v written in the (B, T, H, d) layout (no contiguous copy)
    assert _calls(fwd, "products_cat") == 1 and _calls(fwd, "contiguous") == 0
    # backward: the q, k, v gradients' products into the projection's gradient
    assert _calls(bwd, "products_cat") == 1 and _calls(bwd, "cat_reshaped") == 0
    assert _calls(bwd, "batched_product") == 1
    # the scaled, masked softmax one step each way (ptcore._inductor.masked_softmax)
    assert _calls(fwd, "masked_softmax") == 1 and "masked_fill" not in fwd
    assert _calls(bwd, "masked_softmax_grad") == 1 and "masked_fill" not in bwd


def _eager(pieces, shapes, dim):
    srcs = [a if b is None else (a @ b).permute(perm) for a, b, perm in pieces]
    if len(srcs) == 1 and shapes[0] is None:
        return srcs[0].contiguous()
    return ptcore.cat([s if sh is None else s.reshape(sh) for s, sh in zip(srcs, shapes)], dim)


def _call(pieces, shapes, dim):
    operands, plan = [], []
    for (a, b, perm), sh in zip(pieces, shapes):
        if b is None:
            operands.append(a)
            plan.append(("s", None, sh))
        else:
            operands += [a, b]
            plan.append(("p", tuple(perm), sh))
    return products_cat(operands, plan, dim)


def _t(rng, *shape, dtype="float32"):
    return ptcore.from_numpy(rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_cat_every_output_layout(dtype):
    # (the column-major place, dk^T, is computed and copied: see products_cat)
    rng = np.random.default_rng(2)
    B, H, T, d = 3, 4, 7, 5
    # dq: (B, H, T, d) seen as (B, T, H, d); dk^T: (B, H, d, T) seen through two
    # permutes (a column-major destination); dv; a plain permuted piece; a piece
    # with an operand the product kernel copies first (non-unit strides)
    dq = (_t(rng, B, H, T, 6, dtype=dtype), _t(rng, B, H, 6, d, dtype=dtype), (0, 2, 1, 3))
    dk = (_t(rng, B, H, d, 6, dtype=dtype), _t(rng, B, H, 6, T, dtype=dtype), (0, 3, 1, 2))
    dv = (_t(rng, B, H, T, 6, dtype=dtype)[..., ::1], _t(rng, B, H, 12, d, dtype=dtype)[:, :, ::2],
          (0, 2, 1, 3))
    plain = (_t(rng, B, H, T, d, dtype=dtype).permute(0, 2, 1, 3), None, None)
    pieces = [dq, dk, dv, plain]
    shapes = [(B, T, H * d), (B, T, -1), (B, T, H * d), (B, T, H * d)]
    into = []
    real = copies._mm_into
    copies._mm_into = lambda c, *a: into.append(c.shape) or real(c, *a)
    try:
        for dim in (2, -1):
            got = _call(pieces, shapes, dim)
            want = _eager(pieces, shapes, dim)
            assert got.shape == want.shape and got.is_contiguous() and got.dtype == want.dtype
            assert ptcore.equal(got, want)
    finally:
        copies._mm_into = real
    # dq and dv written in place (twice: both dims), dk^T and the plain piece copied
    assert into == [(B, H, T, d)] * 4
    # along another dim, without reshapes (3-D pieces)
    p3 = [(_t(rng, 4, 3, 6, dtype=dtype), _t(rng, 4, 6, 2, dtype=dtype), (0, 2, 1)),
          (_t(rng, 4, 5, 6, dtype=dtype), _t(rng, 4, 6, 2, dtype=dtype), (0, 2, 1))]
    got = _call(p3, [None, None], 2)
    assert ptcore.equal(got, _eager(p3, [None, None], 2))
    # one piece, no reshape: the contiguous form
    one = [(_t(rng, 2, 3, 4, 5, dtype=dtype), _t(rng, 2, 3, 5, 6, dtype=dtype), (0, 2, 1, 3))]
    got = _call(one, [None], 0)
    want = (one[0][0] @ one[0][1]).transpose(1, 2).contiguous()
    assert got.is_contiguous() and got.shape == want.shape and ptcore.equal(got, want)


def test_products_cat_falls_back_to_eager_ops():
    rng = np.random.default_rng(3)
    a, b = _t(rng, 2, 3, 4, 5), _t(rng, 2, 3, 5, 6)
    a64 = a.double()
    # a piece of another dtype: cat's promotion, as eager
    pieces = [(a, b, (0, 2, 1, 3)), (a64 @ b.double(), None, None)]
    got = _call(pieces, [(2, 4, 18), (2, 4, 18)], 1)
    want = ptcore.cat([(a @ b).permute(0, 2, 1, 3).reshape(2, 4, 18),
                       (a64 @ b.double()).reshape(2, 4, 18)], 1)
    assert got.dtype == ptcore.float64 and ptcore.equal(got, want)
    # operands of mixed dtypes: matmul's error
    with pytest.raises(RuntimeError) as e:
        a @ b.double()
    with pytest.raises(type(e.value)):
        _call([(a, b.double(), (0, 2, 1, 3))], [None], 0)
    # mismatched inner sizes: matmul's error
    with pytest.raises(RuntimeError):
        _call([(a, _t(rng, 2, 3, 4, 6), (0, 2, 1, 3))], [None], 0)
    # pieces whose other dims disagree: cat's error
    with pytest.raises(RuntimeError):
        _call([(a, b, (0, 2, 1, 3)), (a, b, (0, 2, 1, 3))], [(2, 4, 18), (4, 2, 18)], 2)
    # a reshape that cannot be: reshape's error
    with pytest.raises(RuntimeError):
        _call([(a, b, (0, 2, 1, 3))] * 2, [(5, 5, 5)] * 2, 2)
    # recorded (autograd on, an operand requiring grad): the ops, with their history
    x = a.clone().requires_grad_(True)
    y = _call([(x, b, (0, 2, 1, 3)), (x, b, (0, 2, 1, 3))], [(2, 4, 18)] * 2, 2)
    assert y.grad_fn is not None
    y.sum().backward()
    xe = a.clone().requires_grad_(True)
    _eager([(xe, b, (0, 2, 1, 3))] * 2, [(2, 4, 18)] * 2, 2).sum().backward()
    assert ptcore.equal(x.grad, xe.grad)
    # under no_grad the same operands take the direct path (no history)
    with ptcore.no_grad():
        y = _call([(x, b, (0, 2, 1, 3))], [None], 0)
    assert y.grad_fn is None and ptcore.equal(y, (a @ b).transpose(1, 2).contiguous())


def _v(*shape):
    return types.SimpleNamespace(shape=shape, dtype="float32")


def _nodes(write_between):
    prod = BatchedProduct([{"v": 1}, {"v": 2}], {"v": 3})
    tr = Node(("Tensor", "transpose"), [{"v": 3}, 1, 2], {}, {"v": 4})
    mid = [Node(("Tensor", "add_"), [{"v": 1}, 1.0], {}, {"v": 5})] if write_between else []
    cont = Node(("Tensor", "contiguous"), [{"v": 4}], {}, {"v": 6})
    return [prod, tr] + mid + [cont]


def test_fold_keeps_products_before_writes_into_operands():
    values = {1: _v(2, 3, 4, 5), 2: _v(2, 3, 5, 6), 3: _v(2, 3, 4, 6), 4: _v(2, 4, 3, 6)}
    out = fold_products_into_place(_nodes(False), [6], values)
    assert len(out) == 1 and isinstance(out[0], ProductsCat)
    assert out[0].args[1] == [("p", (0, 2, 1, 3), None)]
    # an in-place write between the product and the copy: nothing moves
    nodes = _nodes(True)
    assert fold_products_into_place(nodes, [6], values) == nodes
    # the product's result read elsewhere, or a node skipped: nothing moves
    nodes = _nodes(False)
    assert fold_products_into_place(nodes, [6, 3], values) == nodes
    assert fold_products_into_place(nodes, [6], values, skip={id(nodes[1])}) == nodes


def test_fold_composes_permutations():
    values = {1: _v(2, 3, 4, 5), 2: _v(2, 3, 5, 6), 3: _v(2, 3, 4, 6), 4: _v(2, 3, 6, 4),
              5: _v(2, 6, 3, 4)}
    nodes = [BatchedProduct([{"v": 1}, {"v": 2}], {"v": 3}),
             Node(("Tensor", "permute"), [{"v": 3}, (0, 1, 3, 2)], {}, {"v": 4}),
             Node(("Tensor", "permute"), [{"v": 4}, 0, 2, 1, 3], {}, {"v": 5}),
             Node(("Tensor", "contiguous"), [{"v": 5}], {}, {"v": 6})]
    out = fold_products_into_place(nodes, [6], values)
    assert len(out) == 1
    perm = out[0].args[1][0][1]
    rng = np.random.default_rng(5)
    a, b = _t(rng, 2, 3, 4, 5), _t(rng, 2, 3, 5, 6)
    want = (a @ b).permute(0, 1, 3, 2).permute(0, 2, 1, 3)
    assert (a @ b).permute(perm).shape == want.shape
    assert ptcore.equal((a @ b).permute(perm), want)
    got = products_cat([a, b], out[0].args[1], 0)
    assert got.is_contiguous() and ptcore.equal(got, want.contiguous())


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_major_place_gives_the_product_kernels_bits(dtype, level):
    # what products_cat relies on: mm_into into a row-major place with another row
    # stride has the bits of the product kernel's contiguous result (on each level
    # of the small-GEMM kernels the CPU has)
    from ptcore._ops.kernels._blas import _set_small_level, mm_into, product
    if _set_small_level(level) != level:
        _set_small_level(0)
        pytest.skip(f"the CPU has no small-GEMM kernels of level {level}")
    try:
        _row_major_sweep(dtype, mm_into, product)
    finally:
        _set_small_level(0)


def _row_major_sweep(dtype, mm_into, product):
    rng = np.random.default_rng(6)
    for (B, H) in [(1, 1), (2, 3), (12, 4)]:
        for M, K, N in [(1, 3, 8), (5, 16, 2), (16, 32, 32), (33, 64, 64), (64, 100, 129),
                        (130, 16, 1), (2, 1, 64)]:
            a, b = _t(rng, B, H, M, K, dtype=dtype), _t(rng, B, H, K, N, dtype=dtype)
            out = ptcore.empty(B, M, H * N + 3, dtype=getattr(ptcore, dtype))
            place = out[:, :, :H * N].view(B, M, H, N).permute(0, 2, 1, 3)
            mm_into(place, a, b, 1, 0)
            assert ptcore.equal(place, product(a, b)), (B, H, M, K, N)


# --------------------------------------------------------------------------
# the layout of nn.MultiheadAttention's packed-projection gradient buffer
# --------------------------------------------------------------------------

def _encoder(batch_first, E=32):
    ptcore.manual_seed(0)
    layer = ptcore.nn.TransformerEncoderLayer(E, 4, dim_feedforward=64, dropout=0.0,
                                              batch_first=batch_first)
    return ptcore.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


@pytest.mark.parametrize("batch_first", [True, False])
def test_select_buffer_laid_out_for_its_reshape(batch_first):
    m, me = _encoder(batch_first), _encoder(batch_first)
    me.load_state_dict(m.state_dict())
    cm = ptcore.compile(m)
    rng = np.random.default_rng(7)
    for _ in range(3):
        xa = rng.standard_normal((4, 10, 32) if batch_first else (10, 4, 32)).astype("float32")
        res = []
        for f, mod in ((cm, m), (me, me)):
            mod.zero_grad()
            x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
            y = f(x)
            y.square().sum().backward()
            res.append([y, x.grad] + [p.grad for p in mod.parameters()])
        for a, b in zip(*res):
            assert ptcore.equal(a, b)
    fwd, bwd = _sources(cm)
    # (ptcore._inductor.layout_chains: q, k, v of both layers one view each of the
    # projection, no contiguous copy of it)
    assert _calls(fwd, "strided_view") == 6 and "contiguous" not in fwd
    # (the q, k, v gradients' chains folded into the writes: select_grad_from,
    # whose last argument is the buffer's strides)
    steps = re.findall(r"= select_grad_from_\d+\(([^)]*)\)", bwd)
    assert len(steps) == 2 and all(len(s.split(",")) == 7 for s in steps)   # (strides given)


def test_select_grad_with_strides_has_the_same_values():
    rng = np.random.default_rng(8)
    g = [_t(rng, 4, 5, 6) for _ in range(3)]
    for zero in (True, False):
        a = select_grad(g[2], (3, 4, 5, 6), 2, zero)
        b = select_grad(g[2], (3, 4, 5, 6), 2, zero, (6, 90, 18, 1))
        assert b.stride() == (6, 90, 18, 1)
        if zero:
            assert ptcore.equal(a, b)
        for i in (1, 0):
            a = select_grad_into(a, g[i], i, True)
            b = select_grad_into(b, g[i], i, True)
        assert ptcore.equal(a, b)
    # recorded (create_graph): eager's ops, whatever the strides
    gr = g[0].clone().requires_grad_(True)
    r = select_grad(gr, (3, 4, 5, 6), 1, True, (6, 90, 18, 1))
    assert r.grad_fn is not None and ptcore.equal(r[1], g[0]) and not r[0].any()


def test_layout_for_a_chain_of_views():
    buf = {"v": 1}
    chain = [KernelGrad(squeeze_grad, [buf, (3, 4, 5, 1, 6), 3], {"v": 2}),
             Node(("Tensor", "permute"), [{"v": 2}, (3, 1, 2, 0, 4)], {}, {"v": 3}),
             Node(("Tensor", "reshape"), [{"v": 3}, (4, 5, 3, 6)], {}, {"v": 4})]
    strides = copies._layout_for(chain, (3, 4, 5, 6), "float32")
    assert strides == (6, 90, 18, 1)
    probe = ptcore.empty_strided((3, 4, 5, 6), strides)
    out = probe.unsqueeze(3).permute(3, 1, 2, 0, 4).reshape(4, 5, 3, 6)
    assert out.is_contiguous() and out.data_ptr() == probe.data_ptr()
    # a chain the contiguous buffer already serves: nothing to change
    plain = [Node(("Tensor", "reshape"), [buf, (12, 30)], {}, {"v": 2})]
    assert copies._layout_for(plain, (3, 4, 5, 6), "float32") is None
