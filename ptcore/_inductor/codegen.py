"""Python code for a captured segment: one straight-line function per
segment of a graph, calling the ops of the operator table, with the pointwise
chains fused (:func:`ptcore.jit._fusion.plan`: one pass of the CPU fused
evaluator ``ptcore._ops.kernels._fused`` or one generated CUDA kernel per chain),
each intermediate deleted after its last use (as eager code frees it), and
the Python values the capture saw ops return checked inline.

A segment function takes the values it reads (graph inputs and values of
earlier segments, in ``in_ids`` order) and returns the values later segments
or the result need (``out_ids`` order).  Constants (dtypes, devices, slices,
tensors kept by reference: parameters, buffers) are names of the function's
globals, so the code is a function of the graph only.
"""
import inspect
import math

import ptcore
from ptcore._ops.kernels import _fused
from ptcore._tensor import _TensorBase
from ptcore._dispatch import dispatcher as _D
from ptcore.autograd.grad_mode import _state as _grad_state
from ptcore.autograd.grad_mode import no_grad, enable_grad, is_grad_enabled
from ptcore.jit._fusion import plan as _fusion_plan
from ptcore.jit._ir import Graph, Node, decode, _collect
from ptcore._inductor import direct_calls
from ptcore._inductor.layouts import ATTENTION_OPS, attention_operand

__all__ = ["Diverged", "SegmentCode", "chain_runner", "encode_outputs", "generate", "node_inputs",
           "node_outputs", "uses_and_makers"]


class Diverged(Exception):
    """A call took another path than the captured one: a Python value an op
    returned differs from the captured value (the program re-runs eagerly)."""


def encode_outputs(out, bind_tensor):
    """An op's result encoded as graph outputs (``{"v": id}``, nested ``list`` /
    ``tuple``; None for a Python value), ``bind_tensor(t)`` naming each tensor."""
    if isinstance(out, _TensorBase):
        return {"v": bind_tensor(out)}
    if isinstance(out, (tuple, list)) and not isinstance(out, ptcore.Size):
        items = [encode_outputs(a, bind_tensor) for a in out]
        return {"list": items} if type(out) is list else {"tuple": items}
    return None


def node_inputs(n):
    out = []
    _collect(n.args, out)
    for a in n.kwargs.values():
        _collect(a, out)
    return out


def node_outputs(n):
    out = []
    _collect(n.outputs, out)
    return out


def uses_and_makers(nodes, live_ids):
    """``({value: reads}, {value: node making it})`` of ``nodes``, the
    ``live_ids`` read after them counted as reads."""
    uses, made_by = {}, {}
    for n in nodes:
        for v in node_inputs(n):
            uses[v] = uses.get(v, 0) + 1
        if type(n.outputs) is dict and "v" in n.outputs:
            made_by[n.outputs["v"]] = n
    for v in live_ids:
        uses[v] = uses.get(v, 0) + 1
    return uses, made_by


class _Names:
    """The globals of a generated function; ``reserved``: names they must not
    take (the function's own: a segment of a user function ``softmax`` is
    ``softmax_0``, which the op ``softmax`` named first would shadow)."""

    def __init__(self, reserved=()):
        self.ns = {}
        self.ids = {}
        self.reserved = frozenset(reserved)

    def add(self, obj, prefix):
        key = (prefix, id(obj))
        name = self.ids.get(key)
        if name is None:
            if prefix == "f":       # an op: named for it (readable code)
                base = "".join(c if c.isalnum() else "_" for c in
                               getattr(obj, "__name__", "f")).strip("_") or "f"
                name = f"{base}_{len(self.ns)}"
                while name in self.reserved or name in self.ns:
                    name += "_"
            else:
                name = f"{prefix}{len(self.ns)}"
            self.ids[key] = name
            self.ns[name] = obj
        return name


def _src(x, names, var):
    """Source text of encoded argument ``x``."""
    t = type(x)
    if t is dict:
        if "v" in x:
            return var(x["v"])
        if "list" in x:
            return "[" + ", ".join(_src(a, names, var) for a in x["list"]) + "]"
        if "tuple" in x:
            items = [_src(a, names, var) for a in x["tuple"]]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return names.add(decode(x, {}), "c")
    if x is None or t is bool or t is int or t is str:
        return repr(x)
    if t is float:
        return repr(x) if math.isfinite(x) else names.add(x, "c")
    return names.add(x, "c")


def _target(spec, var):
    """The assignment target for a node's encoded outputs."""
    if spec is None:
        return "_"
    if type(spec) is dict:
        if "v" in spec:
            return var(spec["v"])
        items = spec.get("list", spec.get("tuple"))
        if items is not None:
            inner = [_target(s, var) for s in items]
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    return "_"


def _group_runner(group):
    """``run(*operands) -> outputs`` of a fused group; its nodes one by one
    when the fused kernel cannot take the call."""
    prog = group.program
    code, nreg, out_code = prog.code, prog.nreg, prog.out_code
    dtypes = list(group.out_dtypes)
    shape, f64 = group.shape, group.dtype == "float64"
    nodes = group.nodes
    out_ids = group.out_ids
    operands = prog.operands

    def slow(ops):
        env = {a["v"]: o for a, o in zip(operands, ops) if type(a) is dict}
        for n in nodes:
            fn = n._fn or n.fn()
            args = [decode(a, env) for a in n.args]
            kwargs = {k: decode(a, env) for k, a in n.kwargs.items()} if n.kwargs else {}
            env[n.output_ids()[0]] = fn(*args, **kwargs)
        return [env[v] for v in out_ids]

    if group.device == "cpu":
        run_fused = _fused.run
        TB = _TensorBase

        def run(*ops):
            if is_grad_enabled():
                # (a backward under create_graph: the ops one by one, recorded)
                for o in ops:
                    if isinstance(o, TB) and o.requires_grad:
                        return slow(ops)
            return run_fused(list(ops), code, nreg, out_code, list(dtypes), shape, f64)
    else:
        def run(*ops):
            if is_grad_enabled() and any(isinstance(o, _TensorBase) and o.requires_grad
                                         for o in ops):
                return slow(ops)
            # lazy: the CUDA fuser is imported on the first run (the GPU driver loads then)
            from ptcore.jit import _fuse_cuda
            outs = _fuse_cuda.run(group, list(ops))
            return slow(ops) if outs is None else outs
    run.slow = slow
    return run


def chain_runner(chain, ids):
    """``run(*vals) -> out``: the nodes ``chain`` one by one, ``vals`` bound to
    the value ids ``ids`` (None for an absent operand); the last node's
    output.  What a fused step runs where its kernel does not take the call."""
    fns = [(n._fn or n.fn(), n) for n in chain]
    out_id = chain[-1].output_ids()[0]

    def run(*vals):
        env = {v: x for v, x in zip(ids, vals) if v is not None}
        for fn, n in fns:
            args = [decode(a, env) for a in n.args]
            kwargs = {k: decode(a, env) for k, a in n.kwargs.items()} if n.kwargs else {}
            env[n.output_ids()[0]] = fn(*args, **kwargs)
        return env[out_id]
    return run


class OpaqueCall(Node):
    """A forward node run with autograd recording on detached leaves of its
    inputs ``leaf_ids`` (its backward is ``autograd.grad`` of that small graph:
    :mod:`ptcore._inductor.aot`); the generated code keeps ``live<k>`` =
    (leaves, outputs) for the backward."""
    __slots__ = ("inner", "live", "leaf_ids")

    def __init__(self, inner, live, leaf_ids):
        super().__init__(("prim", "compile_opaque"), inner.args, inner.kwargs, inner.outputs)
        self.inner = inner
        self.live = live
        self.leaf_ids = leaf_ids


def writes_input(node):
    """Whether ``node``'s op writes into an argument (``relu_``, ``add_``, an
    ``inplace=True`` flag): run on leaves (an opaque node, a formula's
    capture), it must get copies of them, as autograd refuses an in-place
    write into a leaf that requires grad."""
    name = node.op[1]
    if name.endswith("_") and not name.startswith("__"):
        return True
    if node.kwargs.get("inplace") is True:
        return True
    if True not in node.args:
        return False
    try:
        bound = inspect.signature(node._fn or node.fn()).bind_partial(*node.args)
    except (TypeError, ValueError):
        return False
    return bound.arguments.get("inplace") is True


class SegmentCode:
    """A generated segment function and what it reads and returns."""

    def __init__(self, fn, source, in_ids, out_ids, n_fused, n_nodes):
        self.fn = fn
        self.source = source
        self.in_ids = in_ids
        self.out_ids = out_ids
        self.n_fused = n_fused          # fused groups (kernels) in the segment
        self.n_nodes = n_nodes          # op calls, fused ones included


def generate(graph, nodes, in_ids, out_ids, *, checks=None, fuse=True, grad_modes=None,
             consts=None, name="segment", no_grad_all=False, opaque=None, live_in=(),
             in_after=(), vjp=None):
    """The function of ``nodes`` (a slice of ``graph``'s nodes).

    ``in_ids``: the values it takes; ``consts``: ``vid -> object`` of values
    bound as constants (tensors kept by reference); ``checks``: ``node ->
    value`` of the Python values nodes must return; ``grad_modes``: ``node ->
    bool`` (the grad mode each node ran under; None: the caller's);
    ``no_grad_all``: the whole segment runs without recording.

    Training segments (:mod:`ptcore._inductor.aot`): ``opaque``: ``id(node) ->
    (k, leaf ids)`` of the forward nodes run with recording (the function
    returns their ``live<k>`` objects after ``out_ids``); a backward takes the
    ``live_in`` objects and the ``in_after`` values after ``in_ids`` and runs
    its ``prim::compile_vjp`` steps with ``vjp``."""
    checks = checks or {}
    consts = consts or {}
    names = _Names(reserved=(name,))
    bound = {vid: names.add(obj, "k") for vid, obj in consts.items()}

    def var(vid):
        return bound.get(vid) or f"v{vid}"
    opaque = opaque or {}
    steps = [OpaqueCall(n, *opaque[id(n)]) if id(n) in opaque else n for n in nodes]
    lives = sorted(opaque.values())
    n_fused = 0
    if fuse:
        sub = Graph()
        sub.values = graph.values
        sub.nodes = steps
        sub.outputs = {"tuple": [{"v": v} for v in out_ids]}
        # (a node whose Python result is checked stays a node of its own)
        steps = [s for s in _fusion_plan(sub)]
        steps = [s if isinstance(s, Node) or not any(n in checks for n in s.nodes)
                 else s.nodes for s in steps]
        flat = []
        for s in steps:
            if isinstance(s, list):
                flat.extend(s)
            else:
                flat.append(s)
        steps = flat
    # last use of each value, to delete it there
    keep = set(out_ids)
    last = {}
    for i, s in enumerate(steps):
        ids = node_inputs(s) if isinstance(s, Node) else \
            [a["v"] for a in s.program.operands if type(a) is dict]
        for v in ids:
            last[v] = i
    params = [var(v) for v in in_ids] + list(live_in) + [var(v) for v in in_after]
    lines = [f"def {name}({', '.join(params)}):"]
    body = []
    kw_used = {}            # id(op callable) -> the keywords its calls pass
    recorded = set()        # id(op callable) of the opaque calls (run under enable_grad)
    cur_mode = None
    ind = ""
    for i, s in enumerate(steps):
        if isinstance(s, Node):
            mode = None if grad_modes is None else grad_modes.get(id(s))
            if grad_modes is not None and mode != cur_mode:
                ind = ""
                if mode is not None:
                    body.append(f"with {names.add(enable_grad if mode else no_grad, 'g')}():")
                    ind = "    "
                cur_mode = mode
            if isinstance(s, OpaqueCall):
                body += _opaque_lines(s, names, var, ind)
                recorded.add(id(s.inner._fn or s.inner.fn()))
            elif s.op == ("prim", "compile_vjp"):
                gouts = ", ".join("None" if a is None else var(a["v"]) for a in s.args)
                if s.edges is not None:
                    body.append(f"{ind}{_target(s.outputs, var)} = "
                                f"{names.add(vjp[1], 'f')}(live{s.live}, ({gouts},), "
                                f"{s.edges!r})")
                else:
                    body.append(f"{ind}{_target(s.outputs, var)} = {names.add(vjp[0], 'f')}"
                                f"(live{s.live}, ({gouts},))")
            else:
                fn = s._fn or s.fn()
                kw_used.setdefault(id(fn), set()).update(s.kwargs)
                args = [_src(a, names, var) for a in s.args] + \
                    [f"{k}={_src(a, names, var)}" for k, a in s.kwargs.items()]
                call = f"{names.add(fn, 'f')}({', '.join(args)})"
                if id(s) in checks:
                    body.append(f"{ind}_r = {call}")
                    body.append(f"{ind}if not {names.add(_same, 'h')}(_r, "
                                f"{names.add(checks[id(s)], 'c')}): "
                                f"raise {names.add(Diverged, 'e')}({s.op[0]!r} + '.' + "
                                f"{s.op[1]!r})")
                else:
                    body.append(f"{ind}{_target(s.outputs, var)} = {call}")
        else:
            n_fused += 1
            run = _group_runner(s)
            ops = [var(a["v"]) if type(a) is dict else repr(float(a)) if math.isfinite(float(a))
                   else names.add(float(a), "c") for a in s.program.operands]
            outs = ", ".join(var(v) for v in s.out_ids)
            body.append(f"{ind}{outs}, = {names.add(run, 'r')}({', '.join(ops)})")
        dead = [v for v, j in last.items() if j == i and v not in keep and v not in in_ids
                and v not in bound and v not in in_after]
        if dead:
            body.append(f"{ind}del {', '.join(var(v) for v in sorted(dead))}")
    if not body:
        body.append("pass")
    rets = [var(v) for v in out_ids] + [f"live{k}" for k, _ in lives]
    ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
    if no_grad_all:
        lines.append(f"    with {names.add(no_grad, 'g')}():")
        lines += ["        " + b for b in body]
        lines.append("        " + ret)
    else:
        lines += ["    " + b for b in body]
        lines.append("    " + ret)
    source = "\n".join(lines) + "\n"
    ns = dict(names.ns)
    exec(compile(source, f"<ptcore.compile {name}>", "exec"), ns)
    fn = ns[name]
    if not (grad_modes and any(grad_modes.values())):
        fn = _unlayered_form(fn, name, names, lines, params, kw_used, recorded)
    n_nodes = sum(1 if isinstance(s, Node) else len(s.nodes) for s in steps)
    return SegmentCode(fn, source, list(in_ids), list(out_ids), n_fused, n_nodes)


def _unlayered_form(layered, name, names, lines, params, kw_used, recorded):
    """``layered`` (the generated function, calling the ops' entries) again,
    calling what each entry calls when no dispatch layer is on and grad mode
    is off (:func:`ptcore._inductor.direct_calls.unlayered`); it runs
    ``layered`` when a layer is on or grad mode is on.  ``layered`` itself
    when no op call has such a form (a segment recording some nodes under
    ``enable_grad`` is not given one; the opaque calls, ``recorded``, which
    run under ``enable_grad``, keep their entries)."""
    swaps = {}
    for (prefix, key), nm in names.ids.items():
        if prefix == "f" and key not in recorded:
            alt = direct_calls.unlayered(names.ns[nm], kw_used.get(key, ()))
            if alt is not None:
                swaps[nm] = alt
    if not swaps:
        return layered
    ns = dict(names.ns)
    ns.update(swaps)
    ns.update(_layered=layered, _layers_on=_D.on, _device_on=_D.arg_scan, _grad=_grad_state)
    pre = ["    if _layers_on[0] or _device_on[0] or _grad.enabled:",
           f"        return _layered({', '.join(params)})"]
    source = "\n".join(lines[:1] + pre + lines[1:]) + "\n"
    exec(compile(source, f"<ptcore.compile {name}>", "exec"), ns)
    return ns[name]


def _opaque_lines(s, names, var, ind):
    """Code of an :class:`OpaqueCall`: the node under recording, on leaves."""
    leaf = {v: f"_l[{i}]" for i, v in enumerate(s.leaf_ids)}

    def lvar(v):
        return leaf.get(v) or var(v)
    g = names.add(enable_grad, "g")
    out = [f"{ind}with {g}():"]
    if s.inner.op in ATTENTION_OPS:     # (operands in a layout attention reads fast)
        lay = names.add(attention_operand, "f")
        items = ", ".join(f"{lay}({var(v)}).detach().requires_grad_(True)"
                          for v in s.leaf_ids)
    else:
        items = ", ".join(f"{var(v)}.detach().requires_grad_(True)" for v in s.leaf_ids)
    out.append(f"{ind}    _l = ({items},)")
    if writes_input(s.inner):
        # (the op writes into its input: it gets copies of the leaves)
        out.append(f"{ind}    _w = tuple(x.clone() for x in _l)")
        leaf.update({v: f"_w[{i}]" for i, v in enumerate(s.leaf_ids)})
    fn = s.inner._fn or s.inner.fn()
    args = [_src(a, names, lvar) for a in s.args] + \
        [f"{k}={_src(a, names, lvar)}" for k, a in s.kwargs.items()]
    out.append(f"{ind}    {_target(s.outputs, var)} = {names.add(fn, 'f')}({', '.join(args)})")
    outs = [var(v) for v in node_outputs(s)]
    out.append(f"{ind}live{s.live} = (_l, ({', '.join(outs)}{',' if len(outs) == 1 else ''}))")
    # (the values the graph goes on with are aliases: the outputs of the
    # segment's autograd node get that node as grad_fn, the recorded ones keep theirs)
    for o in outs:
        out.append(f"{ind}{o} = {o}.detach()")
    return out


def _same(a, b):
    """Whether an op's Python result equals the captured one (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if type(a) is float and a != a:
        return b != b
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b
