"""Training graphs: each segment of a captured program becomes ONE autograd
node (as torch's AOTAutograd makes it), whose forward runs the segment's ops
without recording -- fused -- and whose backward runs a captured graph of
the ops' backward formulas, fused too.

The backward graph is captured op by op, at compile time, from ptcore's own
formulas (:mod:`ptcore.autograd._formulas`, written with ptcore ops): for
each node of the segment, last first, the op is run again on detached copies
of its inputs from the capture run (so that autograd records it alone) and
``autograd.grad`` of it is taken with a placeholder for its output's gradient,
while a tracer on the dispatch point records the ops the formula calls.  A
tensor the formula reads is one of the node's inputs or outputs (a value the
forward saves for the backward), the placeholder, or the result of a recorded
op; the gradients of a value used by several nodes are summed by ``add``
nodes.  A formula that computes outside the operator table (a kernel called
directly), or converts a tensor to a Python value, cannot be recorded; it is
tried once more with ``create_graph=True`` (formulas then take their
differentiable form, written with ops); when that fails too the node stays
*opaque*: the forward runs it with autograd recording on detached inputs
and the backward calls ``autograd.grad`` on that small graph.

Nodes that consume random numbers (dropout) are opaque too: running them
again would draw other numbers than the forward's.
"""
import weakref

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch import batching as _batching
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch.table import lookup
from ptcore._dynamo.capture import UnsetMemory
from ptcore.autograd import _record
from ptcore.autograd import function as _function
from ptcore.autograd import graph as _graph
from ptcore.autograd.engine import grad as _autograd_grad
from ptcore.autograd.graph import AccumulateGrad, _validate, apply_computing_all
from ptcore.autograd.grad_mode import _state as _grad_state
from ptcore.autograd.grad_mode import enable_grad, is_grad_enabled
from ptcore.jit._ir import Graph, Node, Value, decode, encode_const, encode_sequence
from ptcore._inductor import _segment_fast, codegen, copies, direct_calls, epilogues, kernel_grads, \
    layout_chains, masked_softmax
from ptcore._inductor.program import Segment, signature
from ptcore._inductor.codegen import encode_outputs, node_inputs, node_outputs
from ptcore._inductor.forward_passes import fuse_forward, fused_steps

__all__ = ["compile_segments", "SegmentFunction", "vjp", "vjp_node"]


class VjpStep(Node):
    """A backward step of an opaque forward node: the gradients of its inputs
    (``outputs``) from those of its outputs (``args``) by ``autograd.grad``
    of the small graph its forward recorded (live object ``live``), or by a
    call of its one autograd node (``edges``: for each leaf, the node's edge
    to it; None: through the engine)."""
    __slots__ = ("live", "edges")

    def __init__(self, live, gouts, gins, edges=None):
        super().__init__(("prim", "compile_vjp"), gouts, {}, gins)
        self.live = live
        self.edges = edges


def vjp_node(live, gouts, edges):
    """:func:`vjp` of an opaque node that recorded ONE autograd node whose
    edges lead straight to its leaves: that node called directly (as the
    engine would, without the engine's setup), its gradients matched to the
    inputs' shapes and dtypes as the engine matches them."""
    g = gouts[0]
    if g is None:
        return (None,) * len(edges)
    if is_grad_enabled():           # (create_graph: through the engine, recorded)
        return vjp(live, gouts)
    node = live[1][0].grad_fn
    gs = _validate(node, apply_computing_all(node, (g,)))
    return tuple(None if i is None else gs[i] for i in edges)


def vjp(live, gouts):
    """``autograd.grad`` of an opaque node's recorded outputs (``live``: its
    leaves and outputs) for the output gradients ``gouts``."""
    leaves, outs = live
    pairs = [(o, g) for o, g in zip(outs, gouts)
             if g is not None and isinstance(o, _TensorBase) and o.requires_grad]
    if not pairs:
        return (None,) * len(leaves)
    return _autograd_grad([o for o, _ in pairs], list(leaves), [g for _, g in pairs],
                          allow_unused=True, retain_graph=True,
                          create_graph=is_grad_enabled())


# ---------------------------------------------------------------------------
# the backward graph
# ---------------------------------------------------------------------------

def _view_key(t):
    try:
        return (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape),
                tuple(t.stride()), t.dtype, str(t.device))
    except Exception:       # (no storage: sparse, nested)
        return None


class _Builder:
    """The backward graph of one segment, being built."""

    def __init__(self, fwd_graph):
        self.fwd = fwd_graph
        self.graph = Graph()
        self.next = 0
        self.saved = {}         # forward value id -> backward value id (an input: saved)
        self.grad_in = {}       # forward output id -> backward value id (an input: its grad)
        self.grad = {}          # forward value id -> backward value id of its gradient
        self.nodes = []

    def value(self, t=None, like=None):
        vid = self.next
        self.next += 1
        if t is not None:
            v = Value.of_tensor(vid, "node", t)
        else:
            v = Value(vid, "node")
            if like is not None:
                v.dtype, v.shape, v.device = like.dtype, like.shape, like.device
        self.graph.values[vid] = v
        return vid

    def accumulate(self, fvid, bvid):
        old = self.grad.get(fvid)
        if old is None:
            self.grad[fvid] = bvid
            return
        out = self.value(like=self.graph.values[old])
        n = Node(("ptcore", "add"), [{"v": old}, {"v": bvid}], {}, {"v": out})
        self.nodes.append(n)
        self.grad[fvid] = out


class _Opaque(Exception):
    pass


class _BackwardTracer:
    """Records the ops a node's backward formula calls (the tracing layer's
    protocol); a tensor it cannot name makes the node opaque."""
    transparent = frozenset()
    transparent_depth = 0

    def __init__(self, b):
        self.b = b
        self.env = {}           # id(t) -> (t, ("f", forward id) | ("b", backward id))
        self.alias = {}         # view key -> ref
        self.nodes = []
        self.opaque = None
        self.pending = {}       # forward id -> backward id of saved values first read here
        self.unset = UnsetMemory()

    def saved(self, fvid):
        b = self.b.saved.get(fvid)
        if b is None:
            b = self.pending.get(fvid)
            if b is None:
                b = self.pending[fvid] = self.b.value(like=self.b.fwd.values[fvid])
        return b

    def know(self, t, ref):
        self.env[id(t)] = (t, ref)
        k = _view_key(t)
        if k is not None:
            self.alias.setdefault(k, ref)

    def ref_of(self, t):
        hit = self.env.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        k = _view_key(t)
        return self.alias.get(k) if k is not None else None

    def encode(self, x, opname):
        if isinstance(x, _TensorBase):
            ref = self.ref_of(x)
            if ref is None:
                self.opaque = self.opaque or (f"{opname} reads a tensor its formula computed "
                                              "outside the operator table")
                return {"v": -1}
            if ref[0] == "f":
                return {"v": self.saved(ref[1])}
            return {"v": ref[1]}
        seq = encode_sequence(x, lambda a: self.encode(a, opname))
        if seq is not None:
            return seq
        try:
            return encode_const(x)
        except TypeError:
            self.opaque = self.opaque or f"{opname} takes a {type(x).__name__}"
            return None

    def _bind_tensor(self, t):
        vid = self.b.value(t)
        self.know(t, ("b", vid))
        return vid

    def bind(self, out):
        return encode_outputs(out, self._bind_tensor)

    def record(self, opdef, args, kwargs, out):
        name = f"{opdef.namespace}::{opdef.name}"
        if self.unset.reads_unset(opdef, args, kwargs, out):
            self.opaque = self.opaque or f"{name} reads memory its formula filled outside the " \
                                         "operator table"
        self.unset.made(opdef, args, kwargs, out)
        enc_args = [self.encode(a, name) for a in args]
        enc_kwargs = {k: self.encode(v, name) for k, v in kwargs.items()}
        if "random" in opdef.tags:
            self.opaque = self.opaque or f"{name} draws random numbers"
        if opdef.decl is not None and opdef.decl.layout_bound:
            # (a formula reinterprets its gradient's memory when the gradient has a
            # given layout: the layout of the placeholder gradient would be baked in,
            # and the gradient that reaches the node at run time may have another)
            self.opaque = self.opaque or f"{name} depends on its gradient's memory layout"
        n = Node((opdef.namespace, opdef.name), enc_args, enc_kwargs, self.bind(out))
        if out is not None and n.outputs is None:
            self.opaque = self.opaque or f"{name} returns a Python value"
        self.nodes.append(n)

    def converted_value(self, opdef, args, kwargs, out):
        self.opaque = self.opaque or f"Tensor.{opdef.name} converts a tensor to a Python value"


def _leaves(node, tensors, rg):
    """The node's arguments with its inputs that require grad as detached
    leaves: ``(args, kwargs, {forward id: leaf})``."""
    leaves = {}
    env = {}
    writes = codegen.writes_input(node)
    for vid in node_inputs(node):
        if vid in env:
            continue
        t = tensors[vid]
        if vid in rg and isinstance(t, _TensorBase) and t.requires_grad:
            leaf = t.detach().requires_grad_(True)
            leaves[vid] = leaf
            # (an op writing into its input gets a copy: not a leaf)
            env[vid] = leaf.clone() if writes else leaf
        else:
            env[vid] = t
    args = [decode(a, env) for a in node.args]
    kwargs = {k: decode(a, env) for k, a in node.kwargs.items()}
    return args, kwargs, leaves


def _flat_tensors(out):
    if isinstance(out, _TensorBase):
        return [out]
    if isinstance(out, (tuple, list)):
        r = []
        for a in out:
            r.extend(_flat_tensors(a))
        return r
    return []


_SHORT = 4


def _short_pointwise(nodes):
    """Whether recorded backward ``nodes`` are at most a few pointwise ops (and
    views): nothing a fused kernel of the plain formula does faster."""
    n = 0
    for nd in nodes:
        d = lookup(nd.op[1], nd.op[0])
        if d is None:
            return False
        if "view" in d.tags or nd.op[1] in ("detach", "alias"):
            continue
        if "pointwise" not in d.tags:
            return False
        n += 1
    return n <= _SHORT


def _differentiate(b, node, tensors, rg, create_graph, accept=None):
    """Record the backward of ``node`` into builder ``b``; returns None, or
    why it cannot be recorded (the builder is then unchanged); ``accept``:
    a test of the recorded nodes (False: not taken)."""
    outs_f = node_outputs(node)
    with_grad = [(i, v) for i, v in enumerate(outs_f) if v in b.grad and v in rg]
    if not with_grad:
        return None
    args, kwargs, leaves = _leaves(node, tensors, rg)
    if not leaves:
        return None
    fn = node._fn or node.fn()
    with enable_grad():
        out = fn(*args, **kwargs)
    outs = _flat_tensors(out)
    if len(outs) != len(outs_f):
        return "its outputs are not the captured ones"
    tr = _BackwardTracer(b)
    for vid in node_inputs(node):
        t = tensors[vid]
        if vid not in leaves and isinstance(t, _TensorBase):
            tr.know(t, ("f", vid))
    for vid, leaf in leaves.items():
        tr.know(leaf, ("f", vid))
    identity = {}
    for (i, v) in with_grad:
        o = outs[i]
        if any(o is leaf for leaf in leaves.values()):
            identity[i] = v
    for i, (o, v) in enumerate(zip(outs, outs_f)):
        if i not in identity:
            tr.know(o, ("f", v))
    pairs = []
    for i, v in with_grad:
        o = outs[i]
        if not o.requires_grad:
            continue
        g = ptcore.ones_like(o)
        tr.know(g, ("b", b.grad[v]))
        pairs.append((o, g))
    if not pairs:
        return None
    order = list(leaves)
    with _tracing.tracing(tr):
        grads = _autograd_grad([o for o, _ in pairs], [leaves[v] for v in order],
                               [g for _, g in pairs], allow_unused=True,
                               create_graph=create_graph)
    if tr.opaque:
        return tr.opaque
    if accept is not None and not accept(tr.nodes):
        return "its differentiable form is longer than the kernel of its formula"
    results = []
    for vid, g in zip(order, grads):
        if g is None:
            continue
        if tr.unset.holds(g):
            return "its gradient is filled outside the operator table"
        ref = tr.ref_of(g)
        if ref is None:
            return "its gradient is computed outside the operator table"
        if ref[0] == "f":
            ref = ("b", tr.saved(ref[1]))
        results.append((vid, ref[1]))
    b.saved.update(tr.pending)
    b.nodes.extend(tr.nodes)
    for vid, bvid in results:
        b.accumulate(vid, bvid)
    return None


def _opaque_step(b, node, k, tensors, rg):
    """A :class:`VjpStep` for opaque node ``node`` (live object number ``k``),
    or None when no gradient reaches it; also returns the forward ids of the
    node's inputs that get leaves."""
    outs_f = node_outputs(node)
    if not any(v in b.grad for v in outs_f):
        return None, []
    ins = []
    for vid in node_inputs(node):
        t = tensors[vid]
        if vid in rg and vid not in ins and isinstance(t, _TensorBase) and t.requires_grad:
            ins.append(vid)
    if not ins:
        return None, []
    gouts = [{"v": b.grad[v]} if v in b.grad else None for v in outs_f]
    gins = []
    for vid in ins:
        gins.append({"v": b.value(like=b.fwd.values[vid])})
    step = VjpStep(k, gouts, {"tuple": gins}, _direct_edges(node, ins, tensors))
    b.nodes.append(step)
    for vid, g in zip(ins, gins):
        b.accumulate(vid, g["v"])
    return step, ins


def _direct_edges(node, ins, tensors):
    """For an opaque node with one output whose recorded graph is ONE autograd
    node with edges straight to the leaves: for each leaf (``ins`` order), the
    index of its edge (None: no edge); else None (the engine runs it)."""
    if len(node_outputs(node)) != 1:
        return None
    rg = set(ins)
    args, kwargs, leaves = _leaves(node, tensors, rg)
    fn = node._fn or node.fn()
    with enable_grad():
        out = fn(*args, **kwargs)
    if not isinstance(out, _TensorBase) or out.grad_fn is None:
        return None
    meta = out.grad_fn._out_meta
    if meta is not None and len(meta) != 1:
        return None             # (a node of several outputs takes a gradient for each)
    where = {}
    for i, e in enumerate(out.grad_fn.next_functions):
        nxt = e[0]
        if nxt is None:
            continue
        if not isinstance(nxt, AccumulateGrad):
            return None
        hit = [v for v, leaf in leaves.items() if nxt.variable is leaf]
        if len(hit) != 1 or hit[0] in where:
            return None
        where[hit[0]] = i
    return tuple(where.get(v) for v in ins)


# ---------------------------------------------------------------------------
# the autograd node of a segment
# ---------------------------------------------------------------------------

class SegmentFunction(_function.Function):
    """A compiled training segment as one autograd node (``_backward_name``:
    the node's name in ``grad_fn``)."""
    _backward_name = "CompiledFunctionBackward"

    @staticmethod
    def forward(ctx, seg, *inputs):
        r = seg.forward(*inputs)
        n = seg.n_out
        outs = r[:n]
        ctx.seg = seg
        ctx.inputs = inputs         # (by reference: a differentiable backward recomputes)
        tensors = [t for t in r[n:n + seg.n_saved]]
        ctx.save_for_backward(*tensors)
        ctx.live = r[n + seg.n_saved:]
        nd = [o for o, d in zip(outs, seg.out_diff) if not d and isinstance(o, _TensorBase)]
        if nd:
            ctx.mark_non_differentiable(*nd)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        seg = ctx.seg
        saved = ctx.saved_tensors
        gs = [grads[i] for i in seg.grad_pos]
        if is_grad_enabled():
            # create_graph: the gradients must be differentiable again, through
            # the values the forward saved too, which it computed unrecorded
            res = _differentiable_backward(ctx, seg, gs, saved)
        else:
            res = seg.backward(*saved, *ctx.live, *gs)
        out = [None] * (seg.n_in + 1)
        for pos, g in zip(seg.diff_pos, res):
            out[pos + 1] = g
        return tuple(out)


class _SegmentNode(_function.BackwardCFunction):
    """The node of a :class:`SegmentFunction`: its backward called without
    the checks a user's Function's result needs (``_segment_fast.node_apply``)."""
    __slots__ = ()
    _apply = _segment_fast.node_apply


class _SegmentCtx(_function.FunctionCtx):
    """The ctx of a segment's node: FunctionCtx's initial values as class
    attributes (set on the instance when they change)."""
    to_save = ()
    _saved = None
    needs_input_grad = ()
    materialize_grads = True
    _dirty = ()
    _non_diff = ()
    _node = None
    _tensor_inputs = ()

    def __init__(self):
        pass


SegmentFunction._backward_cls = type(SegmentFunction._backward_name, (_SegmentNode,),
                                     {"__slots__": ()})
_segment_fast.bind(grad_state=_grad_state, fwl=_function._FWL,
                   batching_active=_batching._active, tracing_tls=_tracing._tls,
                   anomaly=_record._anomaly, segment_function=SegmentFunction,
                   connect=_function.connect, ctx_class=_SegmentCtx, cfn=_function._cfn,
                   gradient_edge=_graph.gradient_edge, saved_tensor=_graph.SavedTensor,
                   saved_output=_graph.SavedOutput, weakref_ref=weakref.ref,
                   current=_graph._current, freed_msg=_graph._FREED_MSG,
                   is_grad_enabled=is_grad_enabled)
apply_segment = _segment_fast.apply_segment


_DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


class _DoubleBackwardRefused(_function.Function):
    """The gradients of a segment that cannot be recomputed (random numbers,
    writes): usable, but a backward through them raises torch's error."""

    @staticmethod
    def forward(ctx, *ts):
        return tuple(None if t is None else t.clone() for t in ts)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_DOUBLE_BACKWARD)


def _differentiable_backward(ctx, seg, gs, saved):
    """The input gradients of a segment for a backward under ``create_graph``.
    The generated backward reads values the forward saved without recording
    them, so a second derivative through those would be lost; instead the
    segment's ops run again eagerly, recorded, on its inputs, and the engine
    differentiates them with ``create_graph`` -- exact to every order.  A
    segment with effects (random numbers, writes) cannot run twice: its
    gradients come from the generated backward and refuse a further backward
    with torch's error (torch refuses every double backward through
    ``torch.compile``)."""
    if seg.recompute is None:
        res = seg.backward(*saved, *ctx.live, *gs)
        tensors = [r for r in res if isinstance(r, _TensorBase)]
        if not tensors:
            return res
        refused = iter(_DoubleBackwardRefused.apply(*tensors))
        return tuple(next(refused) if isinstance(r, _TensorBase) else r for r in res)
    inputs = ctx.inputs
    with enable_grad():
        outs = seg.recompute()(*inputs)
    pairs = [(outs[i], g) for i, g in zip(seg.grad_pos, gs)
             if g is not None and isinstance(outs[i], _TensorBase) and outs[i].requires_grad]
    targets = [inputs[p] for p in seg.diff_pos]
    if not pairs:
        return (None,) * len(targets)
    return _autograd_grad([o for o, _ in pairs], targets, [g for _, g in pairs],
                          allow_unused=True, create_graph=True)


class TrainingSegment:
    """What :class:`SegmentFunction` runs: the generated forward (outputs,
    then saved tensors, then live objects of opaque nodes) and backward
    (saved tensors, live objects and output gradients -> input gradients)."""

    def __init__(self):
        self.forward = None
        self.backward = None
        self.n_in = 0
        self.n_out = 0
        self.n_saved = 0
        self.out_diff = []      # per output: differentiable
        self.grad_pos = []      # outputs whose gradient the backward takes
        self.nondiff_pos = ()   # outputs that are not differentiable
        self.diff_pos = []      # inputs whose gradient the backward returns
        self.free = []          # tensors kept by reference, appended to the inputs
        self.fwd_code = None
        self.bwd_code = None
        self.opaque = []        # (op, reason) of the opaque nodes
        self.recompute = None   # () -> the segment's eager function (no effects), else None

    def __call__(self, *inputs):
        return apply_segment(self, inputs + tuple(self.free) if self.free else inputs)


def _private_inputs(node, tensors, rg):
    """``tensors`` with the inputs of ``node`` (one that writes: a batch norm
    updating its running statistics) that do not require grad replaced by
    copies, for running the node again while compiling its backward: the
    call it stands for has already made its writes."""
    out = dict(tensors)
    for vid in node_inputs(node):
        t = tensors.get(vid)
        if isinstance(t, _TensorBase) and not (vid in rg and t.requires_grad):
            out[vid] = t.clone()
    return out


class _rng_kept:
    """The default generator's state restored on exit (a random node run again
    while compiling draws numbers the program's next call must draw)."""

    def __enter__(self):
        self.state = ptcore.get_rng_state()

    def __exit__(self, *exc):
        ptcore.set_rng_state(self.state)


def _is_random(node):
    d = lookup(node.op[1], node.op[0])
    return d is not None and "random" in d.tags


def _eager_maker(graph, nodes, in_ids, out_ids, name):
    """``() -> fn``: the segment's ops one by one (recorded when grad mode is
    on), generated on the first differentiable backward that needs it."""
    made = []

    def make():
        if not made:
            made.append(codegen.generate(graph, nodes, in_ids, out_ids, fuse=False,
                                         name=name).fn)
        return made[0]
    return make


def compile_segments(cap, segs, free, checks, *, fuse=True, name="graph"):
    """The :class:`~ptcore._inductor.backend.Segment` s of a training capture
    (see the module docstring)."""
    tensors = cap.tensors
    rg = cap.requires_grad
    g = cap.graph
    effects = {id(g.nodes[i]) for i in cap.effects}
    out = []
    for k, s in enumerate(segs):
        ins = [v for v in s.in_ids if v not in free]
        frees = [v for v in s.in_ids if v in free]
        all_in = ins + frees
        ts = TrainingSegment()
        if not any(id(n) in effects for n in s.nodes):
            ts.recompute = _eager_maker(g, list(s.nodes), all_in, list(s.out_ids),
                                        f"{name}_eager{k}")
        s.nodes = kernel_grads.direct_forward(g, s.nodes, tensors)
        ts.free = [free[v] for v in frees]
        ts.n_in = len(all_in)
        b = _Builder(g)
        for v in s.out_ids:
            if v in rg:
                b.grad_in[v] = b.grad[v] = b.value(like=g.values[v])
        # the backward, last node first
        opaque = {}              # id(node) -> (live index, leaf ids)
        for node in reversed(s.nodes):
            if not any(v in b.grad for v in node_outputs(node)):
                continue
            # (the steps below run the node again: on copies of what it writes)
            nt = _private_inputs(node, tensors, rg) if id(node) in effects else tensors
            if kernel_grads.direct_backward(b, node, nt, rg):
                continue
            why = "it draws random numbers" if _is_random(node) else None
            if why is None:
                why = _differentiate(b, node, nt, rg, create_graph=False)
            if why is not None and not _is_random(node):
                # (a formula's differentiable form, when it is a short pointwise
                # chain: the kernel of the plain form is faster than a longer one)
                why2 = _differentiate(b, node, nt, rg, create_graph=True,
                                      accept=_short_pointwise)
                why = None if why2 is None else why
            if why is not None:
                with _rng_kept():
                    step, leaf_ids = _opaque_step(b, node, len(opaque), nt, rg)
                if step is not None:
                    opaque[id(node)] = (len(opaque), leaf_ids)
                    ts.opaque.append((f"{node.op[0]}.{node.op[1]}", why))
        diff_in = [(i, v) for i, v in enumerate(all_in) if v in b.grad]
        ts.diff_pos = [i for i, _ in diff_in]
        saved_f = list(b.saved)                 # forward ids the backward reads
        ts.n_out = len(s.out_ids)
        ts.n_saved = len(saved_f)
        ts.out_diff = [v in rg for v in s.out_ids]
        ts.nondiff_pos = tuple(i for i, d in enumerate(ts.out_diff) if not d)
        ts.grad_pos = [i for i, v in enumerate(s.out_ids) if v in b.grad_in]
        # forward: outputs, saved values, live objects of opaque nodes
        fwd_nodes = s.nodes
        if fuse:
            fwd_nodes = fuse_forward(fwd_nodes, g.values, set(s.out_ids) | set(saved_f),
                                     set(opaque) | set(checks))
        ts.fwd_code = codegen.generate(
            g, fwd_nodes, all_in, list(s.out_ids) + saved_f, checks=checks, fuse=fuse,
            name=f"{name}_fwd{k}", opaque=opaque)
        ts.forward = ts.fwd_code.fn
        # backward: saved values, live objects, output gradients -> input gradients
        bg = b.graph
        b_ins = [b.saved[v] for v in saved_f]
        live_names = [f"live{j}" for j in range(len(opaque))]
        g_ins = [b.grad_in[s.out_ids[i]] for i in ts.grad_pos]
        b_outs = [b.grad[v] for _, v in diff_in]
        if fuse:
            b.nodes, b_outs = copies.fold_calls(b.nodes, b_outs, bg.values)
            b.nodes = copies.fold_reshape_cat(b.nodes, b_outs)
            b.nodes = direct_calls.direct_products(b.nodes, bg.values)
            b.nodes = copies.fold_products_into_place(b.nodes, b_outs, bg.values)
            b.nodes = copies.fold_select_layout(b.nodes, b_outs, bg.values)
            b.nodes = layout_chains.fold_grad_chains(b.nodes, b_outs)
            b.nodes = masked_softmax.fuse_masked_softmax(b.nodes, b_outs, bg.values)
            b.nodes = kernel_grads.fuse_ln_grad_acc(b.nodes, b_outs)
            if epilogues.enabled[0]:
                b.nodes = epilogues.fuse_epilogues(b.nodes, bg.values, set(b_outs))
        ts.bwd_code = codegen.generate(bg, b.nodes, b_ins, b_outs, fuse=fuse,
                                       name=f"{name}_bwd{k}", live_in=live_names,
                                       in_after=g_ins, vjp=(vjp, vjp_node))
        ts.backward = ts.bwd_code.fn
        seg = Segment(ts, ins, s.out_ids, s.brk, ts.fwd_code, signature(s.nodes, s.brk))
        # (fused groups, GEMM epilogues, masked softmax steps: the kernels that run more
        # than one op)
        seg.n_fused = ts.fwd_code.n_fused + ts.bwd_code.n_fused + \
            fused_steps(list(fwd_nodes) + list(b.nodes))
        seg.n_ops = ts.fwd_code.n_nodes
        seg.backward = ts
        out.append(seg)
    return out
