"""Chains of layout ops made one strided view (forward) or one strided copy
(backward).

nn.MultiheadAttention reaches ``scaled_dot_product_attention`` through a chain
of views and copies of its packed q, k, v projection: ``view``, ``unsqueeze``,
``transpose``, ``squeeze``, ``contiguous`` (a copy of the whole projection),
``[0]``, ``reshape`` and ``transpose`` (with ``batch_first`` the reshape of a
head split copies again).  Every element of the operand attention reads is an
element of the projection at an address that is an affine function of its
index: one ``as_strided`` view of the projection.  :func:`fold_view_chains`
makes each such chain one :class:`StridedView` step: no copy at all (the
attention's layout rule, :func:`ptcore._inductor.layouts.attention_operand`,
still copies where rows would share cache sets).

The backward runs the chain the other way: the gradients attention returns
are permuted, reshaped (a copy each) and written into the rows of the
projection's gradient buffer (:func:`ptcore._inductor.kernel_grads.select_grad`,
a copy again).  :func:`fold_grad_chains` makes the gradient's chain and its
write one step (:func:`select_grad_from`, :func:`select_grad_into_from`): the
gradient is copied once, through a strided view of the buffer's row.

Whether a chain is such a map depends only on the shapes and strides; it is
found at run time on a probe (the chain run on int64 tensors holding element
addresses, :func:`view_map` / :func:`slot_map`), once per layout (cached on the
step), and verified element by element.  Where it is not affine (or the call is
recorded by autograd, or anything is odd) the step runs the chain's own ops.
The values are the same bits: layout ops and copies move elements unchanged.
"""
import math

import numpy as np

from ptcore import int64 as _int64, strided as _strided
from ptcore._tensor import _TensorBase
from ptcore._ops.creation import arange as _arange
from ptcore.autograd._formulas import _recorded
from ptcore.jit._ir import Node
from ptcore._inductor.codegen import chain_runner, node_inputs, uses_and_makers, writes_input
from ptcore._inductor.kernel_grads import KernelGrad, grad_buffer, select_grad, select_grad_into
from ptcore._inductor.layouts import ATTENTION_OPS, attention_operand

__all__ = ["StridedView", "fold_grad_chains", "fold_view_chains", "select_grad_from",
           "select_grad_into_from", "slot_map", "strided_view", "view_map"]

# ops that only move elements (a function of their tensor argument and constants)
_LAYOUT_OPS = frozenset([
    ("Tensor", "view"), ("Tensor", "reshape"), ("ptcore", "reshape"),
    ("Tensor", "permute"), ("ptcore", "permute"), ("Tensor", "transpose"),
    ("ptcore", "transpose"), ("Tensor", "swapaxes"), ("ptcore", "swapaxes"),
    ("Tensor", "unsqueeze"), ("ptcore", "unsqueeze"), ("Tensor", "squeeze"),
    ("ptcore", "squeeze"), ("Tensor", "t"), ("ptcore", "t"), ("Tensor", "contiguous"),
    ("Tensor", "__getitem__"), ("Tensor", "flatten"), ("ptcore", "flatten"),
    ("Tensor", "unflatten"), ("Tensor", "narrow"), ("ptcore", "narrow"),
    ("Tensor", "select"), ("ptcore", "select"),
])
_COPYING = frozenset([("Tensor", "contiguous"), ("Tensor", "reshape"), ("ptcore", "reshape"),
                      ("Tensor", "flatten"), ("ptcore", "flatten")])
_PROBE_LIMIT = 1 << 24      # elements of a probe (int64): larger tensors run the chain
_CACHE_LIMIT = 8            # layouts remembered per step


class _Maps:
    """A step's layouts seen so far -> their map (None: not affine)."""
    __slots__ = ("maps",)

    def __init__(self):
        self.maps = {}

    def get(self, key, make):
        try:
            return self.maps[key]
        except KeyError:
            pass
        m = make()
        if len(self.maps) < _CACHE_LIMIT:
            self.maps[key] = m
        return m


def _affine(a):
    """``(shape, strides, offset)`` with ``a[idx] == offset + sum(idx * strides)``
    for every index of the int64 array ``a`` (strides >= 0), else None."""
    if a.size == 0:
        return None
    off = int(a.flat[0])
    nd = a.ndim
    strides = []
    expect = np.full(a.shape, off, dtype=np.int64)
    for k, s in enumerate(a.shape):
        if s == 1:
            strides.append(0)
            continue
        idx = [0] * nd
        idx[k] = 1
        d = int(a[tuple(idx)]) - off
        if d < 0:
            return None
        strides.append(d)
        shape = [1] * nd
        shape[k] = s
        expect += np.arange(s, dtype=np.int64).reshape(shape) * d
    if off < 0 or not np.array_equal(a, expect):
        return None
    return tuple(a.shape), tuple(strides), off


def _span(shape, strides):
    return 1 + sum((s - 1) * st for s, st in zip(shape, strides))


def view_map(shape, strides, run):
    """The map of ``run`` (a chain of layout ops) applied to a tensor of
    ``shape`` and ``strides``: ``(shape, strides, offset)`` of the one view
    of its memory that gives the chain's result, or None."""
    if math.prod(shape) == 0 or any(st < 0 for st in strides):
        return None
    span = _span(shape, strides)
    if span > _PROBE_LIMIT:
        return None
    probe = _arange(span, dtype=_int64).as_strided(tuple(shape), tuple(strides), 0)
    try:
        r = run(probe)
    except Exception:       # (a probe the chain refuses: its own ops run)
        return None
    if not isinstance(r, _TensorBase) or r.dtype is not _int64:
        return None
    return _affine(r.numpy())


def slot_map(src_shape, buf_shape, buf_strides, i, run):
    """For ``buf[i].copy_(run(src))`` with ``src`` of ``src_shape`` (any layout):
    ``(shape, strides, offset)`` of the view of ``buf``'s memory (offset from
    ``buf``'s own) whose element at each index of ``src`` is the place that
    element goes, or None."""
    n = math.prod(src_shape)
    if n == 0 or n > _PROBE_LIMIT or not buf_shape or any(st < 0 for st in buf_strides):
        return None
    if not -buf_shape[0] <= i < buf_shape[0]:
        return None
    i %= buf_shape[0]
    try:
        r = run(_arange(n, dtype=_int64).view(tuple(src_shape)))
    except Exception:
        return None
    if not isinstance(r, _TensorBase) or r.dtype is not _int64 or \
            tuple(r.shape) != tuple(buf_shape[1:]):
        return None
    src_of = r.numpy().reshape(-1)
    # (layout ops are one-to-one: each element of src lands in one place)
    if src_of.size != n or not np.array_equal(np.sort(src_of), np.arange(n, dtype=np.int64)):
        return None
    place = np.full(tuple(buf_shape[1:]), i * buf_strides[0], dtype=np.int64)
    nd = len(buf_shape) - 1
    for k in range(nd):
        shape = [1] * nd
        shape[k] = buf_shape[k + 1]
        place += np.arange(buf_shape[k + 1], dtype=np.int64).reshape(shape) * buf_strides[k + 1]
    addr = np.empty(n, dtype=np.int64)
    addr[src_of] = place.reshape(-1)
    return _affine(addr.reshape(tuple(src_shape)))


def _plain(t):
    return isinstance(t, _TensorBase) and t.layout is _strided and not _recorded(t)


# --------------------------------------------------------------------------
# forward: a chain to attention's operand made one view
# --------------------------------------------------------------------------

class StridedView(Node):
    """A forward step ``out = strided_view(src, run, maps)`` replacing a chain
    of layout ops from ``src`` (``run``: the chain's own ops) read by
    attention."""
    __slots__ = ()

    def __init__(self, args, outputs):
        super().__init__(("prim", "compile_strided_view"), args, {}, outputs)
        self._fn = strided_view


def strided_view(src, run, maps):
    """``run(src)`` as one view of ``src`` (in attention's operand layout);
    ``run(src)`` itself where that is no view (or autograd records)."""
    if not _plain(src):
        return run(src)
    shape, strides = tuple(src.shape), src.stride()
    m = maps.get((shape, strides), lambda: view_map(shape, strides, run))
    if m is None:
        return run(src)
    size, st, off = m
    return attention_operand(src.as_strided(size, st, src.storage_offset() + off))


def _layout_node(n):
    """Whether ``n`` is a plain call of a layout op on one tensor and constants."""
    if type(n) is not Node or n.op not in _LAYOUT_OPS or n.kwargs or not n.args:
        return False
    a = n.args[0]
    return type(a) is dict and "v" in a and len(node_inputs(n)) == 1 and \
        len(n.output_ids()) == 1 and type(n.outputs) is dict and "v" in n.outputs


def _chain_to(v, made_by, ok):
    """The layout nodes (first to last) making value ``v`` from a value no
    layout node makes, each node passing ``ok``."""
    chain = []
    while True:
        m = made_by.get(v)
        if m is None or not _layout_node(m) or not ok(m, v):
            break
        chain.append(m)
        v = m.args[0]["v"]
    chain.reverse()
    return chain


def _dead_layout_nodes(nodes, live, skip):
    """``nodes`` without the layout nodes whose outputs nothing reads (those
    whose ``id`` is in ``skip`` stay)."""
    while True:
        uses, _ = uses_and_makers(nodes, live)
        keep = [n for n in nodes if id(n) in skip or
                not (_layout_node(n) and not uses.get(n.outputs["v"]))]
        if len(keep) == len(nodes):
            return nodes
        nodes = keep


def fold_view_chains(nodes, live, skip=()):
    """``nodes`` with each chain of layout ops ending at an operand of
    attention (and holding a copy) made one :class:`StridedView` step; the
    chain's nodes that nothing else reads are removed.  ``live``: values read
    after the nodes; nodes whose ``id`` is in ``skip`` are not folded into a
    step (attention itself may be one: an opaque call)."""
    if any(writes_input(n) for n in nodes):
        return nodes            # (a write into a value would show through a view)
    _, made_by = uses_and_makers(nodes, live)
    repl = {}
    for n in nodes:
        if n.op not in ATTENTION_OPS:
            continue
        for a in n.args[:3]:
            if type(a) is not dict or "v" not in a:
                continue
            v = a["v"]
            m = made_by.get(v)
            if m is None or id(m) in repl:
                continue
            chain = _chain_to(v, made_by, lambda x, _: id(x) not in skip)
            if not chain or not any(c.op in _COPYING for c in chain):
                continue
            src = chain[0].args[0]["v"]
            repl[id(m)] = StridedView([{"v": src}, chain_runner(chain, [src]), _Maps()],
                                      {"v": v})
    if not repl:
        return nodes
    return _dead_layout_nodes([repl.get(id(n), n) for n in nodes], live, skip)


# --------------------------------------------------------------------------
# backward: a gradient's chain and its write into the buffer made one copy
# --------------------------------------------------------------------------

def _write(buf, i, src, run, maps, fresh):
    key = (tuple(src.shape), tuple(buf.shape), buf.stride(), i)
    m = maps.get(key, lambda: slot_map(key[0], key[1], key[2], i, run))
    if m is None or src.dtype is not buf.dtype or src.device != buf.device:
        g = run(src)
        if fresh:
            buf[i].copy_(g)
        else:
            buf[i].add_(g)
        return
    size, st, off = m
    dst = buf.as_strided(size, st, buf.storage_offset() + off)
    if fresh:
        dst.copy_(src)
    else:
        dst.add_(src)


def select_grad_from(src, run, maps, x_shape, i, zero=True, strides=None):
    """:func:`select_grad` of ``run(src)``, the gradient copied from ``src``
    straight into its row of the buffer."""
    if not _plain(src):
        return select_grad(run(src), x_shape, i, zero, strides)
    out = grad_buffer(src, x_shape, zero, strides)
    _write(out, i, src, run, maps, True)
    return out


def select_grad_into_from(buf, src, run, maps, i, fresh):
    """:func:`select_grad_into` of ``run(src)``, copied (or added) from
    ``src`` straight into row ``i`` of ``buf``."""
    if not _plain(src) or not _plain(buf):
        return select_grad_into(buf, run(src), i, fresh)
    _write(buf, i, src, run, maps, fresh)
    return buf


def fold_grad_chains(nodes, live_ids):
    """``nodes`` (a backward graph's) with each :func:`select_grad` /
    :func:`select_grad_into` step whose gradient is made by a chain of layout
    ops (each value read once, one of them a reshape or a copy) made one
    :func:`select_grad_from` / :func:`select_grad_into_from` step reading the
    chain's first value (the chain's nodes removed).  ``live_ids``: values
    read after the nodes."""
    uses, made_by = uses_and_makers(nodes, live_ids)
    repl, drop = {}, set()
    for n in nodes:
        if not isinstance(n, KernelGrad) or n._fn not in (select_grad, select_grad_into):
            continue
        pos = 0 if n._fn is select_grad else 1
        if len(n.args) <= pos or type(n.args[pos]) is not dict or "v" not in n.args[pos]:
            continue
        chain = _chain_to(n.args[pos]["v"], made_by,
                          lambda m, v: uses.get(v) == 1 and v not in live_ids and
                          id(m) not in drop)
        if not chain or not any(c.op in _COPYING for c in chain):
            continue
        src = chain[0].args[0]["v"]
        run = chain_runner(chain, [src])
        if pos == 0:
            args = [{"v": src}, run, _Maps()] + list(n.args[1:])
            repl[id(n)] = KernelGrad(select_grad_from, args, n.outputs)
        else:
            args = [n.args[0], {"v": src}, run, _Maps()] + list(n.args[2:])
            repl[id(n)] = KernelGrad(select_grad_into_from, args, n.outputs)
        drop.update(id(c) for c in chain)
    if not repl:
        return nodes
    return [repl.get(id(n), n) for n in nodes if id(n) not in drop]
