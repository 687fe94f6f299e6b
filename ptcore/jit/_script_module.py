"""Callables over traced graphs: :class:`ScriptFunction` (a traced
function) and :class:`ScriptModule` (a traced ``nn.Module``, sharing the
module's parameters and buffers), and the interpreter that runs a graph by
calling the ops of the operator table — so autograd, autocast and every other
layer of the dispatch point apply to a traced program as to the eager one."""
from ptcore.nn import Module
from ptcore.jit._ir import decode, JitError, Node

__all__ = ["ScriptFunction", "ScriptModule", "run_graph"]


def _bind(spec, out, env):
    if spec is None:
        return
    if type(spec) is dict:
        if "v" in spec:
            env[spec["v"]] = out
            return
        items = spec.get("list", spec.get("tuple"))
        if items is not None:
            for s, o in zip(items, out):
                _bind(s, o, env)


def run_graph(graph, inputs, params=None):
    """Execute ``graph`` on ``inputs`` (tensors, in order); ``params`` maps
    parameter/buffer names to tensors."""
    if len(inputs) != len(graph.inputs):
        raise TypeError(f"the traced graph takes {len(graph.inputs)} input(s) "
                        f"({len(inputs)} given)")
    env = {}
    for vid, x in zip(graph.inputs, inputs):
        env[vid] = x
    for v in graph.values.values():
        if v.kind == "const":
            env[v.id] = v.const
        elif v.kind == "param":
            try:
                env[v.id] = params[v.name]
            except (KeyError, TypeError):
                raise JitError(f"the graph needs parameter or buffer {v.name!r}, which the "
                               "module does not have") from None
    steps = graph.__dict__.get("_plan")
    if steps is None:
        from ptcore.jit._fusion import plan
        steps = graph._plan = plan(graph)
        graph._frees = _last_uses(graph, steps)
    _run_nodes(steps, env, graph._frees)
    return decode(graph.outputs, env)


def _last_uses(graph, steps):
    """For each step, the values computed by the steps that no later step
    (nor the graph's outputs) reads: the interpreter drops them from its
    environment there, so an intermediate is freed as soon as it is dead, as
    in eager code (holding every activation to the end cost the traced MLP
    forward ~8% against eager, in fresh memory at every call)."""
    from ptcore.jit._ir import _collect
    keep = []
    _collect(graph.outputs, keep)
    keep = set(keep)
    produced, last = set(), {}
    for i, n in enumerate(steps):
        nodes = n.nodes if type(n) is not Node else (n,)
        for m in nodes:
            for vid in m.input_ids():
                last[vid] = i
        for m in nodes:
            produced.update(m.output_ids())
    frees = [[] for _ in steps]
    for vid in produced:
        if vid not in keep and vid in last:
            frees[last[vid]].append(vid)
    return [tuple(f) for f in frees]


def _run_nodes(nodes, env, frees=None):
    for i, n in enumerate(nodes):
        if type(n) is not Node:
            n.run(env)          # a fused group
        elif n.blocks:
            _bind(n.outputs, _control(n, env), env)
        else:
            fn = n._fn or n.fn()
            args = [decode(a, env) for a in n.args]
            kwargs = {k: decode(a, env) for k, a in n.kwargs.items()} if n.kwargs else {}
            _bind(n.outputs, fn(*args, **kwargs), env)
        if frees is not None:
            for vid in frees[i]:
                env.pop(vid, None)


def _run_block(block, env, params):
    for vid, x in zip(block.params, params):
        env[vid] = x
    _run_nodes(block.nodes, env)
    return tuple(decode(r, env) for r in block.returns)


def _control(n, env):
    kind = n.op[1]
    args = [decode(a, env) for a in n.args]
    if kind == "If":
        return _run_block(n.blocks[0] if args[0] else n.blocks[1], env, ())
    if kind == "Loop":                  # args: trip count, carried...; body(i, carried...)
        trips, carried = args[0], tuple(args[1:])
        for i in range(int(trips)):
            carried = _run_block(n.blocks[0], env, (i,) + carried)
        return carried
    if kind == "While":                 # args: carried...; cond block, body block
        carried = tuple(args)
        while _run_block(n.blocks[0], env, carried)[0]:
            carried = _run_block(n.blocks[1], env, carried)
        return carried
    raise JitError(f"unknown control-flow node prim::{kind}")


class ScriptFunction:
    """A traced function (``torch.jit.ScriptFunction``)."""

    def __init__(self, graph, name="fn"):
        self.graph = graph
        self.name = name
        self.__name__ = name
        self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self.name}() takes its inputs positionally (compiled function)")
        defaults = getattr(self, "_defaults", None)
        n = len(self.graph.inputs)
        if defaults is not None and len(args) < n:
            import inspect
            fill = defaults[len(args):n]
            if any(d is inspect.Parameter.empty for d in fill):
                raise TypeError(f"{self.name}() missing required arguments")
            args = tuple(args) + tuple(fill)
        return run_graph(self.graph, args)

    @property
    def code(self):
        return self.graph.code(self.name, has_self=False)

    @property
    def inlined_graph(self):
        return self.graph

    def graph_for(self, *args, **kwargs):
        return self.graph

    def save(self, f, _extra_files=None):
        from ptcore.jit._serialization import save
        save(self, f, _extra_files)

    def __repr__(self):
        return f"<ptcore.jit.ScriptFunction {self.name}>"


class ScriptModule(Module):
    """A traced module (``torch.jit.ScriptModule``): submodules, parameters
    and buffers as the original module's (shared), methods run their graphs."""

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_graphs", {})
        object.__setattr__(self, "_original_name", "Module")

    @classmethod
    def _from_module(cls, mod, graphs):
        sm = cls._mirror(mod)
        object.__setattr__(sm, "_graphs", dict(graphs))
        return sm

    @classmethod
    def _mirror(cls, mod):
        sm = cls()
        object.__setattr__(sm, "_original_name", type(mod).__name__)
        for name, p in mod._parameters.items():
            sm._parameters[name] = p
        for name, b in mod._buffers.items():
            sm._buffers[name] = b
        sm._non_persistent_buffers_set = set(getattr(mod, "_non_persistent_buffers_set", ()))
        for name, child in mod._modules.items():
            sm._modules[name] = cls._mirror(child) if child is not None else None
        sm.training = mod.training
        return sm

    def _run(self, method, args):
        params = dict(self.named_parameters(remove_duplicate=False))
        params.update((n, b) for n, b in self.named_buffers(remove_duplicate=False))
        return run_graph(self._graphs[method], args, params)

    def forward(self, *args):
        if "forward" not in self._graphs:
            raise RuntimeError(f"{self._original_name} has no traced forward method")
        return self._run("forward", args)

    def __getattr__(self, name):
        graphs = self.__dict__.get("_graphs")
        if graphs and name in graphs and name != "forward":
            return lambda *args: self._run(name, args)
        return super().__getattr__(name)

    @property
    def graph(self):
        if "forward" not in self._graphs:
            raise RuntimeError(f"{self._original_name} has no traced forward method")
        return self._graphs["forward"]

    @property
    def inlined_graph(self):
        return self.graph

    @property
    def code(self):
        return self.graph.code("forward")

    @property
    def original_name(self):
        return self._original_name

    def save(self, f, _extra_files=None):
        from ptcore.jit._serialization import save
        save(self, f, _extra_files)

    def _get_name(self):
        return self._original_name

    def extra_repr(self):
        return "original_name=" + self._original_name


ScriptModule.__module__ = "ptcore.jit"
ScriptFunction.__module__ = "ptcore.jit"
RecursiveScriptModule = ScriptModule
