"""Fusion of elementwise chains for the graph interpreter.

A run of consecutive pointwise nodes on one device whose results all have
one shape (the group's iteration shape) and one float dtype (comparisons may
give bool) becomes one :class:`FusedGroup`: its operands (graph values
broadcastable to the shape, or Python numbers) are read once and every
result used after the run (or returned by the graph) is written once; the
values used only inside the run never reach memory.  The group is lowered to
a straight-line register program (:class:`Program`): on CPU the fused kernel
``ptcore._ops.kernels._fused`` evaluates it block by block, cache-resident; on CUDA
:mod:`ptcore.jit._fuse_cuda` turns it into one generated kernel.

When autograd must record, or an operand's dtype, shape or device is not the
traced one, the group runs its nodes one by one instead -- the result is the
same either way.  Fusion is a property of how a graph runs, not of the
graph: saved graphs hold the plain nodes.
"""
import numpy as np

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._ops.kernels import _fused
from ptcore._dispatch.declarations import (OPERATOR_FORMS, PROTOCOL_METHODS, declaration_of,
                                           same_call_as)
from ptcore.jit._instructions import INSTRUCTIONS
from ptcore.jit._ir import decode, _collect

__all__ = ["plan", "FusedGroup", "Program", "OPCODES", "CUDA_OPS"]

# opcodes of the CPU evaluator
OPCODES = {name: ins.opcode for name, ins in INSTRUCTIONS.items()}
# the instructions a CUDA group may hold
CUDA_OPS = frozenset(name for name, ins in INSTRUCTIONS.items() if ins.cuda is not None)
MAX_REGISTERS = 128         # the CPU evaluator's limits (_fused.pyx MAXREG, MAXDIM)
MAX_DIMS = 16
_FLOATS = ("float32", "float64")
_NAMESPACES = ("ptcore", "Tensor", "nn.functional")


def _cuda_node(name):
    """Whether a node of op ``name`` may join a CUDA group: its op is an
    instruction a CUDA node may be (:attr:`Instruction.cuda_node`), or that
    instruction with its operands swapped (a reflected operator method, ``rsub``)."""
    name = same_call_as(name)
    form = OPERATOR_FORMS.get(name)
    if form is not None and form.form == "reflected":
        name = form.op
    elif name == "rsub":
        name = "sub"
    ins = INSTRUCTIONS.get(name)
    return ins is not None and ins.cuda_node

def _is_num(a):
    if not isinstance(a, (int, float)) or isinstance(a, bool):
        return False
    try:
        float(a)
    except OverflowError:
        return False
    return True


def _lower(node):
    """The node as a list of instructions ``(op, args)`` (each arg a graph
    value encoding, a number, or ``("t", k)``: the result of instruction k of
    this list; the last instruction gives the node's output), or None when
    the node is not a fusable pointwise op."""
    ns, name = node.op
    if ns not in _NAMESPACES:
        return None
    args, kw = list(node.args), dict(node.kwargs)
    if ns == "nn.functional":
        if kw.pop("inplace", False) is not False:
            return None
        if name in ("relu", "silu", "sigmoid", "tanh") and len(args) == 1 and not kw:
            return [(name, args)]
        if name == "gelu" and len(args) == 1:
            approx = kw.pop("approximate", "none")
            if kw or approx not in ("none", "tanh"):
                return None
            return [("gelu" if approx == "none" else "gelu_tanh", args)]
        return None
    name = same_call_as(name)
    if name in ("add", "sub") and "alpha" in kw and len(args) == 2:
        alpha = kw.pop("alpha")
        if not _is_num(alpha) or kw:
            return None
        return [("mul", [args[1], alpha]), (name, [args[0], ("t", 0)])]
    if name == "clamp" and 1 <= len(args) <= 3:
        lo = args[1] if len(args) > 1 else kw.pop("min", None)
        hi = args[2] if len(args) > 2 else kw.pop("max", None)
        if kw or (lo is None and hi is None):
            return None
        out, cur = [], args[0]
        for op, b in (("maximum", lo), ("minimum", hi)):
            if b is not None:
                out.append((op, [cur, b]))
                cur = ("t", len(out) - 1)
        return out
    if name in ("clamp_min", "clamp_max") and len(args) == 2 and not kw and args[1] is not None:
        return [("maximum" if name == "clamp_min" else "minimum", args)]
    if name == "where" and len(args) == 3 and not kw:
        return [("where", args)]
    if name == "masked_fill" and len(args) == 3 and not kw:
        # (a bool mask and a number: attention's causal fill, its backward's zeroing)
        value = args[2]
        if type(value) is dict and set(value) == {"float"}:     # (-inf, nan: encoded)
            value = float(value["float"])
        if _is_num(value):
            return [("where", [args[1], value, args[0]])]
        return None
    if kw:
        return None
    if name in ("rsub", "__rsub__") and len(args) == 2:
        return [("sub", [args[1], args[0]])]
    if name == "__rtruediv__" and len(args) == 2:
        return [("div", [args[1], args[0]])]
    if name == "__rpow__" and len(args) == 2:
        return [("pow", [args[1], args[0]])]
    if name == "pow" and len(args) == 2 and _is_num(args[1]):
        e = args[1]
        special = {2: [("square", [args[0]])], 0.5: [("sqrt", [args[0]])],
                   -0.5: [("rsqrt", [args[0]])], -1: [("reciprocal", [args[0]])],
                   3: [("square", [args[0]]), ("mul", [("t", 0), args[0]])],
                   1: [("mul", [args[0], 1.0])]}
        return special.get(e, [("pow", args)])
    ins = INSTRUCTIONS.get(name)
    if ins is not None and ins.operands == len(args):
        return [(name, args)]
    return None


class Program:
    """A fused group lowered to registers: ``operands`` (graph encodings of
    the inputs: registers ``0 .. len(operands)-1``), ``instrs`` as
    ``(op, dst, srcs)``, ``out_regs`` (registers of the group's outputs, in
    ``FusedGroup.out_ids`` order), ``nreg``, and ``code``: the instructions
    as the CPU evaluator's int32 array.  Booleans are 0/1 in the registers."""
    __slots__ = ("operands", "instrs", "out_regs", "nreg", "code", "out_code")

    def __init__(self, lowered, out_ids, graph):
        regs, self.operands = {}, []
        value_reg = {}                      # value id produced inside -> register

        def operand(a):
            key = ("v", a["v"]) if type(a) is dict else ("s", repr(float(a)))   # -0.0 != 0.0
            r = regs.get(key)
            if r is None:
                r = regs[key] = len(self.operands)
                self.operands.append(a)
            return r
        for vid, ins in lowered:            # inputs first: registers 0 .. nin-1
            for _, args in ins:
                for a in args:
                    if type(a) is dict and a["v"] not in value_reg:
                        operand(a)
                    elif type(a) is not dict and type(a) is not tuple:
                        operand(a)
            value_reg[vid] = None
        nin = len(self.operands)
        # temporaries: a register is freed after its last read; outputs keep theirs
        seq = []                            # (op, result key, source keys)
        for vid, ins in lowered:
            local = []
            for j, (op, args) in enumerate(ins):
                key = ("v", vid) if j == len(ins) - 1 else ("n", vid, j)
                srcs = []
                for a in args:
                    if type(a) is tuple:
                        srcs.append(local[a[1]])
                    elif type(a) is dict and a["v"] in value_reg:
                        srcs.append(("v", a["v"]))
                    else:
                        srcs.append(("r", operand(a)))
                local.append(key)
                seq.append((op, key, srcs))
        last = {}
        for i, (_, _, srcs) in enumerate(seq):
            for s in srcs:
                last[s] = i
        pinned = {("v", v) for v in out_ids}
        free, nreg, where = [], nin, {}
        self.instrs = []
        for i, (op, key, srcs) in enumerate(seq):
            src_regs = [s[1] if s[0] == "r" else where[s] for s in srcs]
            if free and key not in pinned:
                dst = free.pop()
            else:
                dst, nreg = nreg, nreg + 1
            where[key] = dst
            self.instrs.append((op, dst, src_regs))
            for s in set(srcs):             # registers read for the last time
                if s[0] != "r" and last.get(s) == i and s not in pinned:
                    free.append(where[s])
        self.nreg = nreg
        self.out_regs = [where[("v", v)] for v in out_ids]
        self.code = np.asarray(_encode(self.instrs, self.out_regs), dtype=np.int32)
        self.out_code = np.asarray(self.out_regs, dtype=np.int32)


PAIR0 = len(OPCODES)                # the evaluator's PF_PAIR0: pairs after the single ops


def _encode(instrs, out_regs):
    """The CPU evaluator's code: five int32 per instruction.  Two arithmetic
    instructions ``t = a OP1 b; d = t OP2 c`` (or ``d = t * t``) where ``t``
    is read by the second only become one pair instruction (one pass over
    the block, the same two roundings)."""
    n = len(instrs)
    prog, k = [], 0
    while k < n:
        op, dst, srcs = instrs[k]
        if k + 1 < n and INSTRUCTIONS[op].pair is not None and dst not in out_regs:
            op2, d2, s2 = instrs[k + 1]
            j2 = None
            if op2 == "mul" and s2 == [dst, dst]:
                j2, c = 4, srcs[0]
            elif INSTRUCTIONS[op2].pair is not None and len(s2) == 2 and s2[0] == dst and \
                    s2[1] != dst:
                j2, c = INSTRUCTIONS[op2].pair, s2[1]
            if j2 is not None and d2 not in (srcs[0], srcs[1], c) and \
                    not _read_later(instrs, k + 2, dst):
                prog += [PAIR0 + 5 * INSTRUCTIONS[op].pair + j2, d2, srcs[0], srcs[1], c]
                k += 2
                continue
        s = list(srcs) + [srcs[0]] * (3 - len(srcs))
        if op == "where":               # evaluator: d = c ? a : b, c the condition
            s = [srcs[1], srcs[2], srcs[0]]
        prog += [OPCODES[op], dst] + s
        k += 1
    return prog


def _read_later(instrs, start, reg):
    """Whether an instruction from ``start`` on reads register ``reg`` before
    one writes it."""
    for op, dst, srcs in instrs[start:]:
        if reg in srcs:
            return True
        if dst == reg:
            return False
    return False


class FusedGroup:
    """Nodes evaluated by one fused kernel call (CPU) or one generated kernel
    (CUDA)."""
    __slots__ = ("nodes", "program", "out_ids", "out_dtypes", "dtype", "shape", "device",
                 "in_meta", "_cuda")

    def __init__(self, nodes, lowered, out_ids, graph, dtype, shape, device):
        self.nodes = nodes
        self.out_ids = out_ids
        self.dtype = dtype                  # compute dtype name
        self.shape = tuple(shape)
        self.device = device                # "cpu" or "cuda"
        self.out_dtypes = [getattr(ptcore, graph.values[v].dtype) for v in out_ids]
        self.program = Program(lowered, out_ids, graph)
        self.in_meta = [(getattr(ptcore, graph.values[a["v"]].dtype),
                         ptcore.Size(graph.values[a["v"]].shape))
                        if type(a) is dict else None for a in self.program.operands]
        self._cuda = None

    def _fast_ok(self, ops):
        if ptcore.is_grad_enabled():
            for o in ops:
                if isinstance(o, _TensorBase) and o.requires_grad:
                    return False
        dev = self.device
        for o, meta in zip(ops, self.in_meta):
            if meta is not None and (not isinstance(o, _TensorBase) or o.dtype is not meta[0] or
                                     o.shape != meta[1] or o.device.type != dev):
                return False
        return True

    def run(self, env):
        ops = [decode(a, env) for a in self.program.operands]
        if self._fast_ok(ops):
            if self.device == "cpu":
                outs = _fused.run(ops, self.program.code, self.program.nreg, self.program.out_code,
                                  list(self.out_dtypes), self.shape, self.dtype == "float64")
            else:
                # lazy: the GPU fusion path loads ptcore.cuda's kernels
                from ptcore.jit import _fuse_cuda
                outs = _fuse_cuda.run(self, ops)
            if outs is not None:
                for vid, o in zip(self.out_ids, outs):
                    env[vid] = o
                return
        for n in self.nodes:        # the same ops, one by one (autograd, other inputs)
            fn = n._fn or n.fn()
            args = [decode(a, env) for a in n.args]
            kwargs = {k: decode(a, env) for k, a in n.kwargs.items()} if n.kwargs else {}
            env[n.output_ids()[0]] = fn(*args, **kwargs)


def _broadcasts(shape, to):
    if len(shape) > len(to):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(to)))


def _node_info(node, graph):
    """``(lowered, device, dtype, shape)`` of a fusable node, or None."""
    if node.blocks:
        return None
    ins = _lower(node)
    if ins is None:
        return None
    outs = node.output_ids()
    if len(outs) != 1 or not (type(node.outputs) is dict and "v" in node.outputs):
        return None
    out = graph.values[outs[0]]
    if out.shape is None or out.device is None or len(out.shape) > MAX_DIMS:
        return None
    dev = out.device.split(":")[0]
    if dev not in ("cpu", "cuda"):
        return None
    if dev == "cuda" and (not _cuda_node(node.op[1]) or
                          any(op not in CUDA_OPS for op, _ in ins)):
        return None
    compare = INSTRUCTIONS[ins[-1][0]].compare
    if compare:
        if out.dtype != "bool":
            return None
        dtype = None
    else:
        if out.dtype not in _FLOATS:
            return None
        dtype = out.dtype
    for _, args in ins:
        for a in args:
            if type(a) is dict:
                if "v" not in a:
                    return None
                v = graph.values[a["v"]]
                if v.shape is None or not _broadcasts(tuple(v.shape), tuple(out.shape)) or \
                        (v.device or "cpu") != out.device:
                    return None
                if v.dtype == "bool":
                    continue
                if v.dtype not in _FLOATS or (dtype is not None and v.dtype != dtype):
                    return None
                dtype = v.dtype
            elif type(a) is tuple:
                continue
            elif not _is_num(a):
                return None
    if dtype is None:
        return None
    return ins, out.device, dtype, tuple(out.shape)


def _pure_view(namespace, name):
    """Whether the op ``namespace.name`` only makes a view of its input (it
    writes nothing), as its declaration says (``pure_view``, the out-of-place
    forms): a fusion run stays open across it when it reads none of the
    run's values."""
    if namespace not in _NAMESPACES:
        return False
    p = PROTOCOL_METHODS.get(name)
    if p is not None:
        return p.pure_view
    d = declaration_of(namespace, name)
    return d is not None and d.pure_view and d.name == name


def plan(graph):
    """The execution steps of ``graph``: its nodes, with runs of two or more
    fusable pointwise nodes of one (device, dtype, shape) replaced by
    :class:`FusedGroup` s.

    Runs of different shapes may interleave (LayerNorm's ``x - mean`` before
    ``rsqrt(var + eps)``): a node joins the open run of its key, and a run
    whose value another run's node reads is emitted first.  Any other node
    closes every open run before it (so in-place ops keep their order)."""
    uses = {}
    for i, n in enumerate(graph.nodes):
        for vid in n.input_ids():
            uses.setdefault(vid, []).append(i)
    outs = []
    _collect(graph.outputs, outs)
    for vid in outs:
        uses.setdefault(vid, []).append(len(graph.nodes))
    steps = []
    runs = {}                   # key -> [(index, node, lowered)], in creation order
    producer = {}               # value id -> key of the open run computing it

    def flush(key):
        run = runs.pop(key)
        for _, n, _ in run:
            producer.pop(n.output_ids()[0], None)
        if len(run) < 2:
            steps.extend(n for _, n, _ in run)
            return
        inside = {i for i, _, _ in run}
        out_ids = [n.output_ids()[0] for _, n, _ in run
                   if any(j not in inside for j in uses.get(n.output_ids()[0], ()))]
        if not out_ids:
            steps.extend(n for _, n, _ in run)
            return
        dev, dtype, shape = key
        g = FusedGroup([n for _, n, _ in run], [(n.output_ids()[0], ins) for _, n, ins in run],
                       out_ids, graph, dtype, shape, dev.split(":")[0])
        if g.program.nreg > MAX_REGISTERS:
            steps.extend(n for _, n, _ in run)
        else:
            steps.append(g)

    for i, n in enumerate(graph.nodes):
        info = _node_info(n, graph)
        if info is None:
            if _pure_view(n.op[0], n.op[1]) and not n.blocks and \
                    not any(v in producer for v in n.input_ids()):
                # (a view of values no open run computes -- attention's mask sliced from
                # a buffer between its scaling and its fill: the runs stay open)
                steps.append(n)
                continue
            for k in list(runs):
                flush(k)
            steps.append(n)
            continue
        key = (info[1], info[2], info[3])
        for vid in n.input_ids():
            k = producer.get(vid)
            if k is not None and k != key and k in runs:
                flush(k)
        runs.setdefault(key, []).append((i, n, info[0]))
        producer[n.output_ids()[0]] = key
    for k in list(runs):
        flush(k)
    return steps
