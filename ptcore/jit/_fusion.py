"""Fusion of elementwise chains for the graph interpreter.

A run of consecutive pointwise nodes over float32/float64 tensors of one
shape (and Python scalars), whose intermediate results nothing else uses,
becomes one :class:`FusedGroup`: the fused kernel (``ptcore._ops._fused``)
evaluates the whole chain block by block, reading the inputs and writing
the result once.  When autograd must record, or an operand is not
contiguous or not of the traced dtype and size, the group runs its nodes one
by one instead — the result is the same either way.

Fusion is a property of how a graph runs, not of the graph: saved graphs
hold the plain nodes.
"""
import numpy as np

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._ops import _fused
from ptcore.jit._ir import decode, _collect

__all__ = ["plan", "FusedGroup", "OPCODES"]

OPCODES = {"add": 0, "sub": 1, "mul": 2, "div": 3, "neg": 4, "exp": 5, "log": 6, "tanh": 7,
           "sigmoid": 8, "relu": 9, "sqrt": 10, "rsqrt": 11, "abs": 12, "sin": 13, "cos": 14,
           "square": 15, "reciprocal": 16, "erf": 17, "log1p": 18, "expm1": 19, "maximum": 20,
           "minimum": 21, "gelu": 22, "gelu_tanh": 23, "silu": 24}
assert len(OPCODES) == _fused.OPCODE_COUNT
_BINARY = {"add", "sub", "mul", "div", "maximum", "minimum"}
_UNARY = set(OPCODES) - _BINARY - {"gelu_tanh"}
_NAMESPACES = {"ptcore", "Tensor", "nn.functional"}
_DTYPES = {"float32", "float64"}


def _opcode(node):
    """The opcode of ``node`` and its operand encodings, or None."""
    ns, name = node.op
    if ns not in _NAMESPACES:
        return None
    args, kw = node.args, dict(node.kwargs)
    if ns == "nn.functional":
        if name in ("relu", "silu") and kw.pop("inplace", False) is False and len(args) == 1:
            return (OPCODES[name], args) if not kw else None
        if name == "gelu" and len(args) == 1:
            approx = kw.pop("approximate", "none")
            if kw or approx not in ("none", "tanh"):
                return None
            return OPCODES["gelu" if approx == "none" else "gelu_tanh"], args
        if name in ("sigmoid", "tanh") and len(args) == 1 and not kw:
            return OPCODES[name], args
        return None
    if kw:
        return None
    if name in _BINARY and len(args) == 2:
        return OPCODES[name], args
    if name in _UNARY and len(args) == 1:
        return OPCODES[name], args
    return None


class FusedGroup:
    """Nodes evaluated by one fused kernel call."""
    __slots__ = ("nodes", "operands", "prog", "nreg", "result", "out_id", "dtype", "shape",
                 "numel")

    def __init__(self, nodes, graph):
        self.nodes = nodes
        last = graph.values[nodes[-1].output_ids()[0]]
        self.out_id = last.id
        self.dtype = getattr(ptcore, last.dtype)
        self.shape = tuple(last.shape)
        self.numel = int(np.prod(self.shape, dtype=np.int64))
        regs, self.operands, prog = {}, [], []
        temps = {}
        # operands first: every value or scalar read from outside the group
        inside = set()
        for n in nodes:
            _, args = _opcode(n)
            for a in args:
                key = ("v", a["v"]) if type(a) is dict else ("s", float(a))
                if key[0] == "v" and key[1] in inside:
                    continue
                if key not in regs:
                    regs[key] = len(regs)
                    self.operands.append(a)
            inside.add(n.output_ids()[0])
        nin = len(regs)
        for n in nodes:
            code, args = _opcode(n)
            srcs = []
            for a in args:
                if type(a) is dict and a["v"] in temps:
                    srcs.append(temps[a["v"]])
                else:
                    srcs.append(regs[("v", a["v"]) if type(a) is dict else ("s", float(a))])
            dst = nin + len(temps)
            temps[n.output_ids()[0]] = dst
            prog += [code, dst, srcs[0], srcs[1] if len(srcs) > 1 else srcs[0]]
        self.prog = np.asarray(prog, dtype=np.int32)
        self.nreg = nin + len(temps)
        self.result = temps[self.out_id]

    def run(self, env):
        ops = [decode(a, env) for a in self.operands]
        ok = True
        grad = ptcore.is_grad_enabled()
        for o in ops:
            if isinstance(o, _TensorBase):
                if o.dtype is not self.dtype or o.numel() != self.numel or \
                        not o.is_contiguous() or o.device.type != "cpu" or \
                        (grad and o.requires_grad):
                    ok = False
                    break
        if ok:
            out = ptcore.empty(self.shape, dtype=self.dtype)
            env[self.out_id] = _fused.run(ops, self.prog, self.nreg, self.result, out)
            return
        for n in self.nodes:        # the same ops, one by one (autograd, odd layouts)
            fn = n._fn or n.fn()
            env[n.output_ids()[0]] = fn(*[decode(a, env) for a in n.args])


def _fusable(node, graph):
    if _opcode(node) is None:
        return False
    outs = node.output_ids()
    if len(outs) != 1 or not (type(node.outputs) is dict and "v" in node.outputs):
        return False
    out = graph.values[outs[0]]
    if out.dtype not in _DTYPES or out.device != "cpu" or out.shape is None:
        return False
    for a in _opcode(node)[1]:
        if type(a) is dict:
            if "v" not in a:
                return False
            v = graph.values[a["v"]]
            if v.dtype != out.dtype or v.shape != out.shape:
                return False
        elif not isinstance(a, (int, float)) or isinstance(a, bool):
            return False
    return True


def plan(graph):
    """The execution steps of ``graph``: its nodes, with fusable runs of two
    or more pointwise nodes replaced by :class:`FusedGroup` s."""
    uses = {}
    for i, n in enumerate(graph.nodes):
        for vid in n.input_ids():
            uses.setdefault(vid, []).append(i)
    outs = []
    _collect(graph.outputs, outs)
    for vid in outs:
        uses.setdefault(vid, []).append(len(graph.nodes))
    steps, run = [], []

    def flush():
        # cut the run after every node whose result is used beyond the run
        end = graph.nodes.index(run[-1]) + 1 if run else 0
        group = []
        for n in run:
            group.append(n)
            if any(j >= end for j in uses.get(n.output_ids()[0], ())):
                _emit(group)
                group = []
        _emit(group)
        run.clear()

    def _emit(group):
        if len(group) >= 2:
            steps.append(FusedGroup(list(group), graph))
        else:
            steps.extend(group)
    for n in graph.nodes:
        if _fusable(n, graph):
            if run:
                prev = graph.values[run[-1].output_ids()[0]]
                cur = graph.values[n.output_ids()[0]]
                if (prev.dtype, prev.shape) != (cur.dtype, cur.shape):
                    flush()
            run.append(n)
        else:
            flush()
            steps.append(n)
    flush()
    return steps
