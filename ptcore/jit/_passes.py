"""Optimisation passes over traced graphs: dead-code elimination, common
subexpression elimination, constant folding, and folding of batch norm into
the preceding convolution or linear layer; ``freeze`` and
``optimize_for_inference`` run them on a module in eval mode."""
import copy
import json

import ptcore
from ptcore._dispatch.table import lookup
from ptcore.jit._ir import decode, _collect, _display_name
from ptcore.jit._script import metadata_query
from ptcore.jit._script_module import ScriptModule, RecursiveScriptModule

__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions", "fold_constants",
           "fold_batch_norm", "freeze", "optimize_for_inference", "run_frozen_optimizations",
           "export_opnames"]

_IMPURE = {"random", "inplace", "nondeterministic"}


def _pure(node):
    ns, name = node.op
    d = lookup(name, ns)
    if d is None or (d.tags & _IMPURE) or name.endswith("_"):
        return False
    if name in ("dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
                "dropout3d", "rrelu", "batch_norm", "instance_norm") or "rand" in name:
        return False
    return True


def _uses(graph):
    used = set()
    out = []
    _collect(graph.outputs, out)
    used.update(out)
    for n in graph.nodes:
        used.update(n.input_ids())
    return used


def eliminate_dead_code(graph):
    """Drop pure nodes whose outputs nothing uses (repeat to a fixed point)."""
    graph.__dict__.pop("_plan", None)
    graph.__dict__.pop("_plain_frees", None)
    changed = True
    while changed:
        changed = False
        used = _uses(graph)
        keep = []
        for n in graph.nodes:
            outs = n.output_ids()
            if _pure(n) and not any(o in used for o in outs):
                changed = True
                for o in outs:
                    graph.values.pop(o, None)
                continue
            keep.append(n)
        graph.nodes = keep
    used = _uses(graph)
    for vid in [v.id for v in graph.values.values() if v.kind == "const" and v.id not in used]:
        del graph.values[vid]
    return graph


def _rename(x, mapping):
    if type(x) is dict:
        if "v" in x:
            return {"v": mapping.get(x["v"], x["v"])}
        return {k: ([_rename(a, mapping) for a in v] if k in ("list", "tuple", "slice") else v)
                for k, v in x.items()}
    if type(x) is list:
        return [_rename(a, mapping) for a in x]
    return x


def _rename_node(n, mapping):
    """``n``'s arguments, and its blocks' nodes and results, renamed."""
    n.args = _rename(n.args, mapping)
    n.kwargs = {k: _rename(v, mapping) for k, v in n.kwargs.items()}
    for b in n.blocks:
        for m in b.nodes:
            _rename_node(m, mapping)
        b.returns = _rename(b.returns, mapping)


def eliminate_common_subexpressions(graph):
    """Replace a pure node that repeats an earlier one (same op, same
    arguments) by the earlier node's outputs."""
    graph.__dict__.pop("_plan", None)
    graph.__dict__.pop("_plain_frees", None)
    seen, mapping, keep = {}, {}, []
    for n in graph.nodes:
        _rename_node(n, mapping)
        if _pure(n):
            key = json.dumps([n.op, n.args, n.kwargs], sort_keys=True)
            prev = seen.get(key)
            if prev is not None:
                for a, b in zip(n.output_ids(), prev.output_ids()):
                    mapping[a] = b
                    graph.values.pop(a, None)
                continue
            seen[key] = n
        keep.append(n)
    graph.nodes = keep
    graph.outputs = _rename(graph.outputs, mapping)
    return graph


def fold_constants(graph):
    """Evaluate pure nodes whose inputs are all constants; their outputs
    become constants of the graph."""
    graph.__dict__.pop("_plan", None)
    graph.__dict__.pop("_plain_frees", None)
    keep = []
    for n in graph.nodes:
        ins = n.input_ids()
        if _pure(n) and all(graph.values[i].kind == "const" for i in ins) and \
                n.output_ids():
            env = {i: graph.values[i].const for i in ins}
            with ptcore.no_grad():
                out = n.fn()(*[decode(a, env) for a in n.args],
                             **{k: decode(a, env) for k, a in n.kwargs.items()})
            outs = n.output_ids()
            results = [out] if len(outs) == 1 and isinstance(out, ptcore.Tensor) else list(out)
            if len(results) == len(outs) and all(isinstance(r, ptcore.Tensor) for r in results):
                for vid, r in zip(outs, results):
                    v = graph.values[vid]
                    v.kind, v.const = "const", r.detach()
                continue
        keep.append(n)
    graph.nodes = keep
    return eliminate_dead_code(graph)


def _consumers(graph, vid):
    return [n for n in graph.nodes if vid in n.input_ids()]


def _shape_only(n, vid):
    """Whether node ``n`` reads value ``vid`` only for its metadata (a scripted
    BatchNorm's ``input.dim()`` check; the queries are the ops declared with the
    ``metadata`` tag): folding the batch norm into the producer of ``vid`` keeps
    its shape, dtype, device and layout."""
    if n.blocks:
        own = []
        _collect(n.args, own)
        for a in n.kwargs.values():
            _collect(a, own)
        if vid in own:
            return False
        for b in n.blocks:
            rets = []
            _collect(b.returns, rets)
            if vid in rets or not all(_shape_only(m, vid) for m in b.nodes
                                      if vid in m.input_ids()):
                return False
        return True
    if n.op == ("prim", "method"):
        return len(n.args) > 1 and metadata_query(n.args[0]) and \
            n.args[1] == {"v": vid} and vid not in n.input_ids()[1:]
    return n.op[0] == "Tensor" and metadata_query(n.op[1]) and \
        n.input_ids().count(vid) == 1 and n.args[:1] == [{"v": vid}]


def fold_batch_norm(graph):
    """``batch_norm(conv(x, W, b), mean, var, gamma, beta, training=False)``
    (and the same after ``linear``), with every weight a constant, becomes
    one convolution (linear) with folded weights."""
    graph.__dict__.pop("_plan", None)
    graph.__dict__.pop("_plain_frees", None)
    out_ids = []
    _collect(graph.outputs, out_ids)
    keep = list(graph.nodes)
    for bn in list(graph.nodes):
        if bn.op != ("nn.functional", "batch_norm"):
            continue
        args = list(bn.args) + [None] * 8
        kw = bn.kwargs

        def arg(i, name, default=None):
            if name in kw:
                return kw[name]
            return args[i] if i < len(bn.args) else default
        x, rm, rv = arg(0, "input"), arg(1, "running_mean"), arg(2, "running_var")
        w, b = arg(3, "weight"), arg(4, "bias")
        training, eps = arg(5, "training", False), arg(7, "eps", 1e-5)
        if training or not (type(x) is dict and "v" in x):
            continue
        prod = next((n for n in graph.nodes if x["v"] in n.output_ids()), None)
        if prod is None or prod.op not in (("nn.functional", "conv1d"),
                                           ("nn.functional", "conv2d"),
                                           ("nn.functional", "conv3d"),
                                           ("nn.functional", "linear")):
            continue
        if x["v"] in out_ids or not all(_shape_only(n, x["v"]) for n in
                                         _consumers(graph, x["v"]) if n is not bn):
            continue

        def const(e):
            if e is None:
                return None
            if type(e) is dict and "v" in e and graph.values[e["v"]].kind == "const":
                return graph.values[e["v"]].const
            return False
        cw = const(prod.args[1] if len(prod.args) > 1 else prod.kwargs.get("weight"))
        cb = const(prod.args[2] if len(prod.args) > 2 else prod.kwargs.get("bias"))
        vals = [const(e) for e in (rm, rv, w, b)]
        if cw is None or cw is False or cb is False or any(v is False for v in vals) or \
                vals[0] is None or vals[1] is None:
            continue
        mean, var, gamma, beta = vals
        with ptcore.no_grad():
            scale = (gamma if gamma is not None else ptcore.ones_like(var)) / \
                ptcore.sqrt(var + float(decode(eps, {})))
            shape = [-1] + [1] * (cw.dim() - 1)
            nw = cw * scale.reshape(shape)
            base = cb if cb is not None else ptcore.zeros_like(mean)
            nb = (base - mean) * scale + (beta if beta is not None else 0.0)
        wv = graph.new_value("const", nw.detach())
        bv = graph.new_value("const", nb.detach())
        new_args = list(prod.args)
        while len(new_args) < 3:
            new_args.append(None)
        new_args[1], new_args[2] = {"v": wv.id}, {"v": bv.id}
        prod.args = new_args
        prod.kwargs = {k: v for k, v in prod.kwargs.items() if k not in ("weight", "bias")}
        prod._fn = None
        # the batch norm's output is the producer's output now
        mapping = {bn.output_ids()[0]: x["v"]}
        keep.remove(bn)
        for n in keep:
            _rename_node(n, mapping)
        graph.outputs = _rename(graph.outputs, mapping)
        graph.nodes = keep
    return eliminate_dead_code(graph)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """``torch.jit.freeze``: a copy of traced module ``mod`` (in eval mode)
    whose parameters and buffers are inlined into its graphs as constants,
    then folded and simplified."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    keep = set(preserved_attrs or ())
    for g in mod._sync().values():
        if g.__dict__.get("buffer_writes"):
            # buffers the module assigns stay attributes (as torch keeps
            # mutated attributes)
            keep.update(k for k, _ in g.outputs["tuple"][1]["dict"])
    params = dict(mod.named_parameters(remove_duplicate=False))
    params.update(mod.named_buffers(remove_duplicate=False))
    graphs = {}
    for method, g in mod._sync().items():
        if method != "forward" and method not in keep:
            continue        # as torch: only forward and the preserved methods stay
        g = copy.deepcopy(g)
        for v in g.values.values():
            if v.kind == "param" and v.name not in keep:
                v.kind, v.const = "const", params[v.name].detach()
        eliminate_common_subexpressions(g)
        fold_constants(g)
        if optimize_numerics:
            fold_batch_norm(g)
        graphs[method] = g
    frozen = RecursiveScriptModule()
    object.__setattr__(frozen, "_original_name", mod._original_name)
    object.__setattr__(frozen, "_graphs", graphs)
    for name in keep:
        if name in params:
            _set_path(frozen, name, params[name])
    frozen.training = False
    return frozen


def _set_path(root, dotted, t):
    parts = dotted.split(".")
    m = root
    for p in parts[:-1]:
        if p not in m._modules:
            m._modules[p] = RecursiveScriptModule()
        m = m._modules[p]
    if isinstance(t, ptcore.nn.Parameter):
        m._parameters[parts[-1]] = t
    else:
        m._buffers[parts[-1]] = t


def optimize_for_inference(mod, other_methods=None):
    """``torch.jit.optimize_for_inference``: freeze (if needed) and fold."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        mod = mod.eval()
    frozen = mod if not any(v.kind == "param" for g in mod._sync().values()
                            for v in g.values.values()) else freeze(mod)
    for g in frozen._graphs.values():
        fold_batch_norm(g)
        eliminate_common_subexpressions(g)
        eliminate_dead_code(g)
    return frozen


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    """``torch.jit.run_frozen_optimizations``: the optimisations of a frozen
    graph, in place on ``mod``'s ``forward`` and ``preserved_methods``
    graphs (constant and batch-norm folding, common-subexpression and
    dead-code elimination)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("run_frozen_optimizations expects a ScriptModule as input")
    graphs = mod._sync()
    for method in ["forward"] + list(preserved_methods or ()):
        g = graphs.get(method)
        if g is None:
            raise AttributeError(f"the module has no compiled method {method!r}")
        fold_constants(g)
        if optimize_numerics:
            fold_batch_norm(g)
        eliminate_common_subexpressions(g)
        eliminate_dead_code(g)


def export_opnames(m):
    """The sorted operator names (``aten::linear``, ...) the graphs of script
    module ``m`` and its submodules call (``torch.jit.export_opnames``)."""
    if not isinstance(m, ScriptModule):
        raise TypeError(f"export_opnames expects a ScriptModule, got {type(m).__name__}")
    names = set()

    def walk(nodes):
        for n in nodes:
            for b in n.blocks or ():
                walk(b.nodes)
            name = _display_name(n)
            if not name.startswith("prim::"):
                names.add(name)

    for sub in m.modules():
        if isinstance(sub, ScriptModule) and sub.__dict__.get("_graphs") is not None:
            try:
                graphs = sub._sync()
            except Exception:       # a traced submodule: its ops are in its parent's graph
                continue
            for g in graphs.values():
                walk(g.nodes)
    return sorted(names)
