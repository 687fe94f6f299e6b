"""Chains of layout ops folded by the compiler (ptcore._inductor.layout_chains):
attention's operands as one view of the packed projection, and the q, k, v
gradients written into the projection's gradient buffer by one strided copy.
The folded steps must give the chain's values exactly (and fall back to the
chain where no single view or copy does it)."""
import numpy as np
import pytest

import ptcore
from ptcore._inductor.kernel_grads import select_grad, select_grad_into
from ptcore._inductor.layout_chains import (
    _Maps, select_grad_from, select_grad_into_from, slot_map, strided_view, view_map)


def _t(rng, *shape):
    return ptcore.from_numpy(rng.standard_normal(shape).astype("float32"))


def _mha_chain(x):
    """nn.MultiheadAttention's way from the packed projection (T, B, 3E) to q."""
    T, B, E3 = x.shape
    E, H = E3 // 3, 4
    y = x.view(T, B, 3, E).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    q = y[0].reshape(T, B * H, E // H).transpose(0, 1)
    return q.reshape(B, H, T, E // H)


@pytest.mark.parametrize("case", ["batch_first", "seq_first", "contiguous", "sliced"])
def test_view_map_gives_the_chain(case):
    rng = np.random.default_rng(0)
    T, B, E = 6, 5, 8
    if case == "batch_first":        # (the Linear's output of a (B, T, E) input, transposed)
        x = _t(rng, B, T, 3 * E).transpose(0, 1)
    elif case == "seq_first":
        x = _t(rng, T, B, 3 * E)
    elif case == "contiguous":
        x = _t(rng, T, B, 3 * E).contiguous()
    else:
        x = _t(rng, T, B, 3 * E + 5)[:, :, 2:3 * E + 2]
    want = _mha_chain(x)
    m = view_map(tuple(x.shape), x.stride(), _mha_chain)
    assert m is not None
    size, st, off = m
    got = x.as_strided(size, st, x.storage_offset() + off)
    assert tuple(got.shape) == tuple(want.shape) and ptcore.equal(got, want)
    # the step: the same values, a view of x (no copy) where rows do not alias
    maps = _Maps()
    v = strided_view(x, _mha_chain, maps)
    assert ptcore.equal(v, want)
    assert len(maps.maps) == 1
    assert ptcore.equal(strided_view(x, _mha_chain, maps), want)      # (cached)


def test_view_map_refuses_what_no_view_gives():
    def chain(x):               # a transpose flattened: no single stride per dim
        return x.t().reshape(-1)
    rng = np.random.default_rng(1)
    x = _t(rng, 4, 6)
    assert view_map((4, 6), x.stride(), chain) is None
    maps = _Maps()
    assert ptcore.equal(strided_view(x, chain, maps), chain(x))
    assert maps.maps == {((4, 6), (6, 1)): None}
    # an empty tensor, a chain that fails on the probe: the chain's own ops
    assert view_map((0, 3), (3, 1), chain) is None
    assert view_map((4, 6), (6, 1), lambda x: x.view(5, 5)) is None


def test_strided_view_under_autograd_runs_the_chain():
    rng = np.random.default_rng(2)
    x = _t(rng, 6, 5, 24).requires_grad_(True)
    v = strided_view(x, _mha_chain, _Maps())
    assert v.grad_fn is not None
    v.sum().backward()
    want = ptcore.zeros_like(x)
    want[:, :, :8] = 1                  # (q: the first third of the projection)
    assert ptcore.equal(x.grad, want)


def _grad_chain(g):
    """The backward's way from a head gradient (B, H, T, d) to a (T, B, E) row."""
    B, H, T, d = g.shape
    return g.reshape(B * H, T, d).permute(1, 0, 2).reshape(T, B, H * d)


@pytest.mark.parametrize("strides", [None, "packed"])
@pytest.mark.parametrize("zero", [True, False])
def test_select_grad_from_equals_the_chain_and_the_write(strides, zero):
    rng = np.random.default_rng(3)
    B, H, T, d = 3, 4, 5, 2
    shape = (3, T, B, H * d)
    st = None if strides is None else (H * d, B * 3 * H * d, 3 * H * d, 1)
    gs = [_t(rng, B, H, T, d) for _ in range(3)]
    gs[1] = gs[1].transpose(2, 3).contiguous().transpose(2, 3)    # (another layout)
    want = select_grad(_grad_chain(gs[2]), shape, 2, zero, st)
    got = select_grad_from(gs[2], _grad_chain, _Maps(), shape, 2, zero, st)
    assert got.stride() == want.stride()
    if zero:
        assert ptcore.equal(got, want)
    else:
        assert ptcore.equal(got[2], want[2])
    for i in (1, 0):
        want = select_grad_into(want, _grad_chain(gs[i]), i, True)
        got = select_grad_into_from(got, gs[i], _grad_chain, _Maps(), i, True)
    assert ptcore.equal(got, want)
    # added into a written row
    want = select_grad_into(want, _grad_chain(gs[0]), 1, False)
    got = select_grad_into_from(got, gs[0], _grad_chain, _Maps(), 1, False)
    assert ptcore.equal(got, want)


def test_slot_map_refuses_and_the_write_falls_back():
    rng = np.random.default_rng(4)
    # a buffer row that the source's elements do not reach by one view
    buf_shape, buf_st = (2, 4, 6), (24, 1, 4)        # (rows column-major)

    def chain(g):
        return g.reshape(4, 6)
    assert slot_map((24,), buf_shape, buf_st, 0, chain) is None
    g = _t(rng, 24)
    buf = ptcore.zeros(2, 6, 4).transpose(1, 2)
    assert buf.stride() == buf_st
    out = select_grad_into_from(buf.clone(), g, chain, _Maps(), 0, True)
    want = select_grad_into(buf.clone(), chain(g), 0, True)
    assert ptcore.equal(out, want)
    # an index out of range: eager's error
    with pytest.raises(IndexError):
        select_grad_into_from(buf.clone(), g, chain, _Maps(), 5, True)


def test_select_grad_from_recorded_is_eager():
    rng = np.random.default_rng(5)
    g = _t(rng, 2, 2, 3, 2).requires_grad_(True)
    out = select_grad_from(g, _grad_chain, _Maps(), (3, 3, 2, 4), 1, True)
    assert out.grad_fn is not None
    out.sum().backward()
    assert ptcore.equal(g.grad, ptcore.ones_like(g))


def test_a_write_into_a_value_keeps_the_chain():
    class M(ptcore.nn.Module):
        def forward(self, x):
            y = x * 2
            q = y.view(2, 3, 4, 8).transpose(1, 2).contiguous()
            y.add_(1)               # (a view of y would see this write)
            return ptcore.nn.functional.scaled_dot_product_attention(q, q, q) + y.sum()

    rng = np.random.default_rng(9)
    x = _t(rng, 2, 3, 32)
    want = M()(x)
    cm = ptcore.compile(M())
    assert ptcore.allclose(cm(x), want, rtol=1e-6, atol=1e-6)
    assert ptcore.allclose(cm(x), want, rtol=1e-6, atol=1e-6)
