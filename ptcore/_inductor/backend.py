"""``ptcore.compile``'s backend: a captured program
(:class:`ptcore._dynamo.capture.Capture`) made into runnable segments.

How a capture runs depends on what autograd must see:

``"inference"``  no value of the capture required grad: each segment runs
                 without recording, its pointwise chains fused and the forward
                 passes of :mod:`ptcore._inductor.forward_passes` applied (GEMM
                 epilogues, products into place, the masked softmax);
``"aot"``        values require grad and every node ran in grad mode: each
                 segment is ONE autograd node (:mod:`ptcore._inductor.aot`)
                 whose forward runs the segment fused without recording and
                 whose backward runs the captured, fused graph of the ops'
                 backward formulas;
``"record"``     the rest (grad mode switched inside the program, a write
                 into a tensor autograd tracks ...): the segments run op by op
                 through autograd, as the program did (no fusion: a fused
                 chain would hide its ops from autograd).

``backend="eager"`` and ``"aot_eager"`` give the same modes without fusion;
a user's callable backend gets each segment as an ``fx.GraphModule``
(:mod:`ptcore._inductor.custom`), in eager's modes.
"""
from ptcore._inductor import aot, codegen, custom as _custom
from ptcore._inductor.forward_passes import fuse_forward, fused_steps
from ptcore._inductor.program import Program, Segment, signature
from ptcore._inductor.segments import cut, dead_code

__all__ = ["compile_capture", "spec_ids", "mode_of", "value_key"]


def spec_ids(spec, out):
    """The value ids an encoded result reads."""
    kind = spec[0]
    if kind == "v":
        out.append(spec[1])
    elif kind in ("seq", "nt"):
        for s in spec[2]:
            spec_ids(s, out)
    elif kind in ("dict", "tree", "dc", "obj"):
        for s in spec[3]:
            spec_ids(s, out)
    return out


def mode_of(cap, backend):
    """The mode a capture runs in (see the module docstring)."""
    if not cap.recorded:
        return "inference"
    if backend == "eager" or not all(cap.grad_modes) or cap.grad_writes:
        return "record"
    return "aot"


def compile_capture(cap, *, backend="inductor", name="graph", custom=None):
    """A :class:`Program` for ``cap``; ``backend``: ``"inductor"`` (fused),
    ``"eager"`` (op by op, autograd records) or ``"aot_eager"`` (as
    inductor, without fusion); ``custom``: a user's compiler backend
    ``custom(gm, example_inputs) -> callable`` that runs each segment (the
    modes of ``"eager"``)."""
    if custom is not None:
        backend = "eager"
    fuse = backend == "inductor"
    mode = mode_of(cap, backend)
    g = cap.graph
    final = spec_ids(cap.out_spec, [])
    breaks = cap.breaks
    nodes = g.nodes
    index = {id(n): i for i, n in enumerate(nodes)}
    keep = {id(n) for i, n in enumerate(nodes) if i in cap.effects or i in cap.checks}
    live = set(final) | {b.vid for b in breaks if b.vid is not None}
    # (dead code within each stretch between breaks: values a break converts stay)
    pruned, start = [], 0
    for b in list(breaks) + [None]:
        end = b.index if b is not None else len(nodes)
        later = set(live)
        for n in nodes[end:]:
            later.update(codegen.node_inputs(n))
        pruned.append(dead_code(nodes[start:end], later, keep))
        start = end
    kept = [n for part in pruned for n in part]
    # breaks re-indexed over the kept nodes
    pos = 0
    for part, b in zip(pruned, breaks):
        pos += len(part)
        b.index = pos
    segs = cut(kept, breaks, final)
    free = dict(cap.free_inputs)
    writes = set(cap.input_writes)
    speculative = True
    seen_write = False
    for s in segs:
        if any(index[id(n)] in writes for n in s.nodes):
            seen_write = True
        if seen_write and (s.brk is not None or any(index[id(n)] in cap.checks
                                                   for n in s.nodes)):
            speculative = False
    checks = {id(nodes[i]): v for i, v in cap.checks.items()}
    grad_modes = {id(n): cap.grad_modes[index[id(n)]] for n in kept}
    out = []
    if mode == "aot":
        out = aot.compile_segments(cap, segs, free, checks, fuse=fuse, name=name)
    else:
        for k, s in enumerate(segs):
            consts = {v: free[v] for v in s.in_ids if v in free}
            ins = [v for v in s.in_ids if v not in free]
            seg_nodes = s.nodes
            if fuse and mode == "inference":
                seg_nodes = fuse_forward(seg_nodes, g.values, set(s.out_ids), set(checks))
            code = codegen.generate(g, seg_nodes, ins, s.out_ids, checks=checks,
                                    fuse=fuse and mode == "inference", consts=consts,
                                    grad_modes=grad_modes if mode == "record" else None,
                                    no_grad_all=mode == "inference", name=f"{name}_{k}")
            fn = code.fn
            if custom is not None:
                alt = _custom.custom_segment_fn(
                    custom, s.nodes, ins, s.out_ids, consts, [cap.tensors.get(v) for v in ins],
                    name=f"{name}_{k}", grad_modes=[grad_modes[id(n)] for n in s.nodes],
                    checked=any(id(n) in checks for n in s.nodes))
                fn = alt if alt is not None else fn
            seg = Segment(fn, ins, s.out_ids, s.brk, code, signature(s.nodes, s.brk))
            seg.n_fused, seg.n_ops = code.n_fused + fused_steps(seg_nodes), code.n_nodes
            out.append(seg)
    for a, b in zip(out, out[1:]):
        a.children[_key(a.brk)] = b
    out[-1].out_spec = cap.out_spec
    return Program(mode, out, list(cap.arg_inputs), speculative,
                   {b.vid: free[b.vid] for b in breaks if b.vid in free})


def _key(brk):
    """The key of a break's value among a segment's children."""
    if brk is None or brk.vid is None:
        return None
    return value_key(brk.value)


def value_key(v):
    """A hashable key of a converted value (NaN equal to NaN, 1 not 1.0 nor True)."""
    if isinstance(v, list):
        return ("list", tuple(value_key(a) for a in v))
    if type(v) is float and v != v:
        return ("nan",)
    return (type(v).__name__, v)
