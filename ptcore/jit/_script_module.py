"""Callables over traced graphs: :class:`ScriptFunction` (a traced
function) and :class:`ScriptModule` (a traced ``nn.Module``, sharing the
module's parameters and buffers), and the interpreter that runs a graph by
calling the ops of the operator table — so autograd, autocast and every other
layer of the dispatch point apply to a traced program as to the eager one."""
import copy

import ptcore
from ptcore import Size as _Size, dtype as _dtype
from ptcore._dispatch.tracing import _tls
from ptcore._tensor import _TensorBase
from ptcore.autograd.grad_mode import set_grad_enabled
from ptcore.nn import Module, ModuleList, Sequential
from ptcore.jit._fusion import plan
from ptcore.jit._ir import decode, Graph, JitError, Node, _collect
from ptcore.jit._script_class import is_script_instance, script_data
from ptcore.jit._plain import TENSOR_METHODS_REFUSED
from ptcore._dispatch.table import lookup
from ptcore._dispatch.declarations import OPERATOR_FORMS
from ptcore.jit import _executor

__all__ = ["ScriptFunction", "ScriptModule", "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule", "run_graph",
           "python_calls"]

# the script compiler's compile_module: ptcore.jit._script builds ScriptModules
# (so it imports this module) and registers it here at its import
# (register_compiler); a scripted module recompiles through it on a mode change
_compiler = []


def register_compiler(compile_module):
    """Make ``compile_module(module, flags=None)`` the compiler ScriptModules recompile with."""
    _compiler[:] = [compile_module]


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
        raise RuntimeError(f"the traced graph takes {len(graph.inputs)} input(s) "
                           f"({len(inputs)} given)")
    if _tls.tracer is not None and _has_control(graph) and \
            hasattr(_tls.tracer, "record_graph"):
        return _tls.tracer.record_graph(graph, inputs, params,
                                        lambda: run_graph(graph, inputs, params))
    env = {}
    for vid, x in zip(graph.inputs, inputs):
        env[vid] = x
    for v in graph.values.values():
        if v.kind == "const" or v.kind == "object":
            env[v.id] = v.const
        elif v.kind == "param":
            try:
                env[v.id] = params[v.name]
            except (KeyError, TypeError):
                raise JitError(f"the graph needs parameter or buffer {v.name!r}, which the "
                               "module does not have") from None
    if _executor.fusing() and _untyped(graph):
        # a scripted graph: its values carry no shapes, so its plan is made per
        # input signature from a profiling run (torch's profiling executor)
        hit = _specialised(graph, inputs)
        if hit is None:
            _executor.executed(graph)
            _run_nodes(graph.nodes, env)        # (every value kept: the profile)
            _specialise(graph, inputs, env)
            return decode(graph.outputs, env)
        steps, frees = hit
    elif _executor.fusing():
        steps = graph.__dict__.get("_plan")
        if steps is None:
            steps = graph._plan = plan(graph)
            graph._frees = _last_uses(graph, steps)
        frees = graph._frees
    else:
        # optimized_execution(False) / fuser("none"): node by node
        steps = graph.nodes
        frees = graph.__dict__.get("_plain_frees")
        if frees is None:
            frees = graph._plain_frees = _last_uses(graph, steps)
    _executor.executed(graph)
    _run_nodes(steps, env, frees)
    return decode(graph.outputs, env)


_MAX_SPECIALISATIONS = 8


def _untyped(graph):
    """Whether ``graph`` is a scripted one: no control flow (a plan covers
    straight-line graphs) and node outputs without shapes (cached)."""
    hit = graph.__dict__.get("_untyped")
    if hit is None:
        hit = not _has_control(graph) and any(
            graph.values[v].shape is None for n in graph.nodes for v in n.output_ids())
        graph._untyped = hit
    return hit


def _input_key(inputs):
    key = []
    for x in inputs:
        if isinstance(x, _TensorBase):
            key.append((x.dtype, tuple(x.shape), str(x.device)))
        elif type(x) in (int, float, bool, str, type(None)):
            key.append((type(x), x))
        else:
            key.append(id(x))
    return tuple(key)


def _specialised(graph, inputs):
    """``(steps, frees)`` of the plan made for inputs like ``inputs``, or None."""
    plans = graph.__dict__.get("_plans")
    if plans is None:
        return None
    hit = plans.get(_input_key(inputs))
    if hit is None and len(plans) >= _MAX_SPECIALISATIONS:
        # (many signatures: no more profiling runs, node by node)
        frees = graph.__dict__.get("_plain_frees")
        if frees is None:
            frees = graph._plain_frees = _last_uses(graph, graph.nodes)
        return graph.nodes, frees
    return hit


def _specialise(graph, inputs, env):
    """Plan ``graph`` for inputs like ``inputs`` from ``env``, the values of a
    run on them: a copy of the graph whose values have the shapes, dtypes and
    devices they had (a fused group checks its operands when it runs, and runs
    its nodes one by one when they differ)."""
    typed = Graph()
    typed.inputs, typed.nodes, typed.outputs = graph.inputs, graph.nodes, graph.outputs
    for vid, v in graph.values.items():
        t = env.get(vid)
        if isinstance(t, _TensorBase) and v.shape is None:
            v = copy.copy(v)
            v.dtype = t.dtype._name
            v.shape, v.device = tuple(t.shape), str(t.device)
        typed.values[vid] = v
    typed.nodes = [_as_op(n, env) for n in graph.nodes]
    steps = plan(typed)
    graph.__dict__.setdefault("_plans", {})[_input_key(inputs)] = (steps, _last_uses(graph, steps))


# a scripted graph's generic operators (``prim::mul`` ...) on a tensor are the
# Tensor's operator methods (what jit.trace records for them), as OPERATOR_FORMS
# declares (``script_prim``): prim -> the plain method (a Tensor first), and the
# reflected one (a number first, a Tensor second), by the name the table knows it by
# (``__neg__`` is ``Tensor.neg``, ``__pow__`` ``Tensor.pow``)
_PRIM_TENSOR_METHODS = {f.method[2:-2]: f.name for f in OPERATOR_FORMS.values()
                        if f.script_prim and f.form == "plain"}
_PRIM_REFLECTED = {f.method[3:-2]: f.name for f in OPERATOR_FORMS.values()
                   if f.script_prim and f.form == "reflected"}


def _as_op(n, env):
    """Node ``n`` of a scripted graph as the op-table call it made in the
    profiling run (``env``), when it is a generic operator or a method called
    on a tensor; else ``n``."""
    if n.op[0] != "prim" or n.kwargs:
        return n
    name, args = n.op[1], n.args

    def tensor(a):
        return type(a) is dict and "v" in a and isinstance(env.get(a["v"]), _TensorBase)
    if name == "method" and len(args) >= 2 and type(args[0]) is str and tensor(args[1]):
        if lookup(args[0], "Tensor") is None or args[0] in TENSOR_METHODS_REFUSED:
            return n
        return Node(("Tensor", args[0]), list(args[1:]), {}, n.outputs)
    op = _PRIM_TENSOR_METHODS.get(name)
    if op is None or not args:
        return n
    if tensor(args[0]):
        return Node(("Tensor", op), list(args), {}, n.outputs)
    if len(args) == 2 and name in _PRIM_REFLECTED and tensor(args[1]):
        return Node(("Tensor", _PRIM_REFLECTED[name]), [args[1], args[0]], {}, n.outputs)
    return n


def _has_control(graph):
    """Whether ``graph`` holds control-flow nodes (cached on the graph)."""
    hit = graph.__dict__.get("_control")
    if hit is None:
        hit = graph._control = any(n.blocks for n in graph.nodes)
    return hit


_SCALAR_TYPES = {}


def _scalar_types():
    """dtype -> TorchScript's number for it (``c10::ScalarType``)."""
    if not _SCALAR_TYPES:
        for num, name in enumerate(("uint8", "int8", "int16", "int32", "int64", "float16",
                                    "float32", "float64", "complex32", "complex64",
                                    "complex128", "bool")):
            _SCALAR_TYPES[getattr(ptcore, name)] = num
        for num, name in ((15, "bfloat16"), (27, "uint16"), (28, "uint32"), (29, "uint64")):
            _SCALAR_TYPES[getattr(ptcore, name)] = num
    return _SCALAR_TYPES


def _dtype_args(graph, args):
    """``args`` with the ints passed for the graph's dtype parameters as
    dtypes (TorchScript's dtype is its ScalarType number)."""
    pos = graph.__dict__.get("dtype_inputs")
    if not pos:
        return args
    by_num = {v: k for k, v in _scalar_types().items()}
    args = list(args)
    for i in pos:
        a = args[i] if i < len(args) else None
        if type(a) is int:
            if a not in by_num:
                raise RuntimeError(f"{a} is not a dtype number")
            args[i] = by_num[a]
    return tuple(args)


# the Python values an argument of each checked kind cannot be (TorchScript converts
# the others: an int for a float, a 0-dim tensor for a number, ...); not op names:
# the keys are TorchScript type names
_NOT_OF_KIND = {
    "Tensor": (bool, int, float, complex, str, list, tuple, dict),
    "int": (float, complex, str, list, tuple, dict, type(None)),
    "float": (complex, str, list, tuple, dict, type(None)),
    "bool": (float, complex, str, list, tuple, dict, type(None)),
}


def _check_args(graph, args, where):
    """A scripted graph's arguments against its parameters' types, as
    TorchScript checks them (RuntimeError)."""
    kinds = graph.__dict__.get("arg_kinds")
    if not kinds:
        return
    for i, (kind, a) in enumerate(zip(kinds, args)):
        if kind is None:
            continue
        bad = not isinstance(a, str) if kind == "str" else \
            isinstance(a, _NOT_OF_KIND[kind]) and not isinstance(a, _TensorBase)
        if bad:
            name = graph.values[graph.inputs[i]].name
            raise RuntimeError(f"{where}() Expected a value of type '{kind}' for argument "
                               f"'{name}' but instead found type '{type(a).__name__}'.")


def _as_returned(out):
    """A compiled method's result as TorchScript returns it to Python: a
    dtype as its ``ScalarType`` number (TorchScript has no dtype type:
    ``x.dtype`` is an int), a size as a list of ints."""
    t = type(out)
    if t is tuple or t is list:
        return t(_as_returned(a) for a in out)
    if t is dict:
        return {k: _as_returned(v) for k, v in out.items()}
    if t is _Size:
        return list(out)
    if t is _dtype:
        return _scalar_types()[out]
    return out


def _last_uses(graph, steps):
    """For each step, the values computed by the steps that no later step
    (nor the graph's outputs) reads: the interpreter drops them from its
    environment there, so an intermediate is freed as soon as it is dead, as
    in eager code (holding every activation to the end cost the traced MLP
    forward ~8% against eager, in fresh memory at every call)."""
    keep = []
    _collect(graph.outputs, keep)
    keep = set(keep)
    produced, last = set(), {}
    for i, n in enumerate(steps):
        nodes = n.nodes if not isinstance(n, Node) else (n,)
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
        if not isinstance(n, Node):
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
        if n.kwargs.get("cond"):        # the body returns (go on?, carried...)
            for i in range(int(trips)):
                out = _run_block(n.blocks[0], env, (i,) + carried)
                carried = out[1:]
                if not out[0]:
                    break
            return carried
        for i in range(int(trips)):
            carried = _run_block(n.blocks[0], env, (i,) + carried)
        return carried
    if kind == "Grad":                  # args: grad mode; one block
        with set_grad_enabled(bool(args[0])):
            return _run_block(n.blocks[0], env, ())
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
        defaults = getattr(self, "_defaults", None)
        n = len(self.graph.inputs)
        if kwargs:
            names = getattr(self, "_names", None)
            if names is None:
                raise RuntimeError(f"{self.name}() takes its inputs positionally "
                                   "(traced function)")
            import inspect
            args = list(args)
            for i in range(len(args), n):
                if names[i] in kwargs:
                    args.append(kwargs.pop(names[i]))
                elif defaults is not None and defaults[i] is not inspect.Parameter.empty:
                    args.append(defaults[i])
                else:
                    raise RuntimeError(f"{self.name}() missing required argument '{names[i]}'")
            if kwargs:
                bad = next(iter(kwargs))
                raise RuntimeError(f"{self.name}() got an unexpected keyword argument '{bad}'"
                                   if bad not in names else
                                   f"{self.name}() got multiple values for argument '{bad}'")
            args = tuple(args)
        if defaults is not None and len(args) < n:
            import inspect
            fill = defaults[len(args):n]
            if any(d is inspect.Parameter.empty for d in fill):
                raise RuntimeError(f"{self.name}() missing required arguments")
            args = tuple(args) + tuple(fill)
        _check_args(self.graph, args, self.name)
        out = run_graph(self.graph, _dtype_args(self.graph, args))
        out = out if isinstance(out, _TensorBase) else _as_returned(out)
        nt = getattr(self, "_returns", None)
        return nt(*out) if nt is not None and isinstance(out, tuple) else out

    @property
    def code(self):
        return self.graph.code(self.name, has_self=False)

    @property
    def inlined_graph(self):
        return self.graph

    def graph_for(self, *args, **kwargs):
        return self.graph

    def save(self, f, _extra_files=None):
        ptcore.jit.save(self, f, _extra_files)

    def __repr__(self):
        return f"<ptcore.jit.ScriptFunction {self.name}>"


class ScriptMethod:
    """A compiled method of a ScriptModule (``torch.ScriptMethod``): called
    as the method, with its ``graph`` and ``code``."""

    def __init__(self, owner, name):
        self.owner = owner
        self.name = self.__name__ = name

    def __call__(self, *args, **kwargs):
        if self.name == "forward":
            return self.owner._forward(*args, **kwargs)
        return self.owner._run(self.name, args, kwargs)

    @property
    def graph(self):
        graphs = self.owner._sync()
        if self.name not in graphs:
            raise RuntimeError(f"{self.owner._original_name} has no compiled {self.name} method")
        return graphs[self.name]

    @property
    def inlined_graph(self):
        return self.graph

    @property
    def code(self):
        return self.graph.code(self.name)

    def graph_for(self, *args, **kwargs):
        return self.graph

    def __eq__(self, other):
        return isinstance(other, ScriptMethod) and other.owner is self.owner and \
            other.name == self.name

    def __hash__(self):
        return hash((id(self.owner), self.name))

    def __repr__(self):
        return f"<ptcore.jit.ScriptMethod {self.owner._original_name}.{self.name}>"


def _python_method(sm, name):
    """The scripted source module's method ``name`` bound to ``sm`` when it is marked
    ``@ignore``/``@unused`` (torch binds such methods, ``forward`` too, to the
    ScriptModule and runs them in Python), else None."""
    src = sm.__dict__.get("_script_src")
    fn = getattr(type(src), name, None) if src is not None else None
    if getattr(fn, "_torchscript_modifier", None) in ("ignore", "unused"):
        return fn.__get__(sm)
    return None


class _CompiledForward:
    """``ScriptModule.forward``: on an instance, its :class:`ScriptMethod` (or the
    Python forward of a module whose forward is ``@ignore``/``@unused``)."""

    def __get__(self, obj, cls=None):
        if obj is None:
            return ScriptModule._forward
        return _python_method(obj, "forward") or ScriptMethod(obj, "forward")


class ScriptModule(Module):
    """A traced module (``torch.jit.ScriptModule``): submodules, parameters
    and buffers as the original module's (shared), methods run their graphs."""

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_graphs", {})
        object.__setattr__(self, "_original_name", "Module")

    @classmethod
    def _from_module(cls, mod, graphs, attributes=False):
        """``attributes``: also mirror the module's plain data attributes
        (ints, floats, strings, lists, ...) as ``torch.jit.script`` does
        (a traced module has none but its tensors and submodules)."""
        sm = cls._mirror(mod, attributes)
        object.__setattr__(sm, "_graphs", dict(graphs))
        return sm

    @classmethod
    def _mirror(cls, mod, attributes=False):
        # scripted containers index, iterate and size as torch's do (traced
        # ones do not)
        sm = ScriptContainer() if attributes and type(mod).__name__ in _CONTAINERS else cls()
        if isinstance(mod, ScriptModule) and mod.__dict__.get("_script_src") is None:
            object.__setattr__(sm, "_graphs", dict(mod._sync()))
        object.__setattr__(sm, "_original_name", type(mod).__name__)
        if attributes:
            sm._set_script_attrs(_data_attributes(mod), _final_names(mod))
        for name, p in mod._parameters.items():
            sm._parameters[name] = p
        for name, b in mod._buffers.items():
            sm._buffers[name] = b
        sm._non_persistent_buffers_set = set(getattr(mod, "_non_persistent_buffers_set", ()))
        for name, child in mod._modules.items():
            sm._modules[name] = (getattr(cls, "_child_class", cls)._mirror(child, attributes)
                                 if child is not None else None)
        sm.training = mod.training
        return sm

    def _set_script_attrs(self, attrs, finals=()):
        d = self.__dict__
        d.update(attrs)
        object.__setattr__(self, "_script_attrs", frozenset(attrs))
        object.__setattr__(self, "_script_finals", frozenset(finals))

    def _attach_source(self, mod, state):
        """A scripted module keeps its source module (sharing its parameters):
        its graphs are compiled for the current ``training`` flags of the
        module tree and attribute values, and recompiled when they change (as
        TorchScript reads ``self.training`` and attributes at run time)."""
        d = self.__dict__
        d["_script_src"] = mod
        d["_script_state"] = state
        d["_script_cache"] = {}
        for name, child in self._modules.items():
            src = mod._modules.get(name)
            if isinstance(src, ScriptModule):
                # a compiled submodule: a scripted one compiles from its
                # source, a traced one keeps its graphs (mirrored)
                src = src.__dict__.get("_script_src")
            if isinstance(child, ScriptModule) and src is not None:
                child._attach_source(src, state)

    def _mode_key(self):
        return tuple(m.training for _, m in self.named_modules(remove_duplicate=False))

    def _sync(self):
        """Make ``_graphs`` the graphs for the module tree's current mode."""
        d = self.__dict__
        src = d.get("_script_src")
        modes = d.get("_script_modes")
        if src is None and not modes:
            if not d["_graphs"] and type(self) not in (ScriptModule, RecursiveScriptModule, ScriptContainer,
                                                      TracedModule, TopLevelTracedModule):
                # a subclass with ``@script_method`` s (torch's legacy API):
                # compiled on first need (it runs its Python methods itself)
                d["_graphs"] = _compiler[0](self)
                _bind_python_calls(d["_graphs"], self)
            return d["_graphs"]
        key = self._mode_key()
        if src is None:                 # loaded from a file: the modes it holds
            graphs = modes.get(key)
            if graphs is None:
                raise JitError("this loaded ScriptModule holds graphs for its saved "
                               "train/eval modes only; set the same mode on every submodule "
                               "(.train() or .eval()) to run it")
        else:
            key = (d["_script_state"]["epoch"],) + key
            cache = d["_script_cache"]
            graphs = cache.get(key)
            if graphs is None:
                graphs = cache[key] = self._compile_for(key[1:])
                _bind_python_calls(graphs, self)
        d["_graphs"] = graphs
        return graphs

    def _compile_for(self, flags):
        src = self.__dict__["_script_src"]
        srcs = [m for _, m in src.named_modules(remove_duplicate=False)]
        if len(srcs) != len(flags):
            raise JitError("the source module of this ScriptModule changed its submodules "
                           "after scripting")
        mirrors = [m for _, m in self.named_modules(remove_duplicate=False)]
        saved = [(m.training, {k: m.__dict__[k] for k in mm.__dict__.get("_script_attrs", ())
                               if k in m.__dict__}) for m, mm in zip(srcs, mirrors)]
        try:
            # compile with the scripted module's mode and attribute values,
            # leaving the source module as it was
            for m, mm, f in zip(srcs, mirrors, flags):
                m.training = f
                for k in mm.__dict__.get("_script_attrs", ()):
                    m.__dict__[k] = mm.__dict__[k]
            old = self.__dict__["_graphs"]
            return _compiler[0](src, list(old) if old else None)
        finally:
            for m, (f, attrs) in zip(srcs, saved):
                m.training = f
                m.__dict__.update(attrs)

    def __setattr__(self, name, value):
        if name in self.__dict__.get("_script_attrs", ()):
            if name in self.__dict__.get("_script_finals", ()):
                raise RuntimeError(f"Can't set constant '{name}' which has value:"
                                   f"{self.__dict__[name]}")
            src = self.__dict__.get("_script_src")
            if src is None:
                raise JitError(f"ptcore.jit compiled the module attribute {name!r} into the "
                               "graphs of this loaded module; it cannot be assigned")
            self.__dict__[name] = value
            self.__dict__["_script_state"]["epoch"] += 1
            return
        super().__setattr__(name, value)

    def _run(self, method, args, kwargs=None):
        graphs = self._sync()
        if method not in graphs:
            raise RuntimeError(f"{self._original_name} has no compiled {method} method")
        g = graphs[method]
        sig = getattr(g, "signature", None)
        if sig is not None and (kwargs or len(args) < len(sig)):
            args = _bind_signature(f"{self._original_name}.{method}", sig, args, kwargs or {})
        elif kwargs:
            raise RuntimeError(f"{self._original_name}.{method}() takes its inputs "
                               "positionally (traced method)")
        _check_args(g, args, method)
        params = dict(self.named_parameters(remove_duplicate=False))
        params.update((n, b) for n, b in self.named_buffers(remove_duplicate=False))
        out = run_graph(g, _dtype_args(g, args), params)
        if g.__dict__.get("buffer_writes"):
            out, writes = out
            for name, t in writes.items():      # ``self.state = ...`` in the method
                path, _, leaf = name.rpartition(".")
                (self.get_submodule(path) if path else self)._buffers[leaf] = t
        if isinstance(out, _TensorBase):
            return out
        out = _as_returned(out)
        nt = g.__dict__.get("nt_return")
        return nt(*out) if nt is not None and isinstance(out, tuple) else out

    def _forward(self, *args, **kwargs):
        if "forward" not in self._sync():
            if self.__dict__.get("_traced_child"):
                raise RuntimeError("Trace submodules cannot be called.")
            raise RuntimeError(f"{self._original_name} has no traced forward method")
        return self._run("forward", args, kwargs)

    forward = _CompiledForward()

    def __getattr__(self, name):
        graphs = self.__dict__.get("_graphs")
        if graphs and name in graphs and name != "forward":
            return ScriptMethod(self, name)
        fn = _python_method(self, name)     # as torch: bound to the ScriptModule
        return fn if fn is not None else super().__getattr__(name)

    @property
    def graph(self):
        graphs = self._sync()
        if "forward" not in graphs:
            if _python_method(self, "forward") is not None:     # (a Python forward, as torch)
                raise RuntimeError("Method 'forward' is not defined.")
            raise RuntimeError(f"{self._original_name} has no traced forward method")
        return graphs["forward"]

    @property
    def inlined_graph(self):
        return self.graph

    @property
    def code(self):
        if _python_method(self, "forward") is not None and "forward" not in self._sync():
            # a Python (@ignore/@unused) forward has no code: no such attribute, as torch's
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'code'")
        return self.graph.code("forward")

    @property
    def original_name(self):
        return self._original_name

    def save(self, f, _extra_files=None):
        ptcore.jit.save(self, f, _extra_files)

    def _get_name(self):
        return self._original_name

    def extra_repr(self):
        return "original_name=" + self._original_name


def python_calls(graphs):
    """The ``prim::python_call`` nodes (``@jit.ignore`` functions) of ``graphs``."""
    todo = [n for g in graphs.values() for n in g.nodes]
    out = []
    while todo:
        n = todo.pop()
        if n.op == ("prim", "python_call"):
            out.append(n)
        for b in n.blocks:
            todo.extend(b.nodes)
    return out


def _bind_python_calls(graphs, root):
    """Call the ``@jit.ignore`` methods of ``graphs`` on the scripted module
    tree ``root`` (as torch calls them on its RecursiveScriptModule)."""
    for n in python_calls(graphs):
        if n._fn.path is not None:
            n._fn.owner = root.get_submodule(n._fn.path) if n._fn.path else root


def _bind_signature(where, sig, args, kwargs):
    """``args``/``kwargs`` bound to a scripted method's parameters
    ``[[name, default], ...]``: the positional inputs of its graph."""
    import inspect
    if len(args) > len(sig):
        raise RuntimeError(f"{where}() takes {len(sig)} argument(s) ({len(args)} given)")
    out = list(args)
    kwargs = dict(kwargs)
    for name, default in sig[len(args):]:
        if name in kwargs:
            out.append(kwargs.pop(name))
        elif default is not inspect.Parameter.empty:
            out.append(default)
        else:
            raise RuntimeError(f"{where}() missing required argument '{name}'")
    if kwargs:
        bad = next(iter(kwargs))
        raise RuntimeError(f"{where}() got an unexpected keyword argument '{bad}'"
                           if bad not in [p[0] for p in sig] else
                           f"{where}() got multiple values for argument '{bad}'")
    return tuple(out)


_MODULE_INTERNALS = None


def _is_data(v, depth=0):
    if v is None or type(v) in (bool, int, float, str) or isinstance(v, _TensorBase):
        return True
    if depth > 8:
        return False
    if type(v) in (list, tuple):
        return all(_is_data(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(type(k) in (str, int) and _is_data(x, depth + 1) for k, x in v.items())
    if is_script_instance(v):
        # an instance of a user class: a script object (its fields data)
        try:
            script_data(v)
        except TypeError:
            return False
        return True
    return False


def _data_attributes(mod):
    """The plain data attributes of ``mod`` that ``torch.jit.script`` keeps as
    attributes of the scripted module."""
    global _MODULE_INTERNALS
    if _MODULE_INTERNALS is None:
        _MODULE_INTERNALS = frozenset(Module().__dict__)
    if isinstance(mod, ScriptModule):       # (not its graphs and caches)
        return {k: _copy_data(mod.__dict__[k]) for k in mod.__dict__.get("_script_attrs", ())}
    out = {k: _copy_data(v) for k, v in vars(mod).items()
           if k not in _MODULE_INTERNALS and _is_data(v)}
    # constants declared on the class (``k: Final[int] = 3``, __constants__)
    # are attributes of the scripted module too, as torch's
    for k in sorted(_final_names(mod)):
        if k not in out and k not in _MODULE_INTERNALS and \
                _is_data(getattr(type(mod), k, _MISSING)):
            out[k] = _copy_data(getattr(type(mod), k))
    return out


_MISSING = object()


def _copy_data(v, memo=None):
    """A copy of data attribute ``v``; a user-class instance in it becomes a
    ScriptObject (as torch.jit.script copies class-typed attributes)."""
    memo = {} if memo is None else memo
    if type(v) in (list, tuple):
        return type(v)(_copy_data(x, memo) for x in v)
    if type(v) is dict:
        return {k: _copy_data(x, memo) for k, x in v.items()}
    if is_script_instance(v):
        return script_data(v, memo)
    return v


def _final_names(mod):
    import typing
    out = set(getattr(type(mod), "__constants__", ()))
    for klass in type(mod).__mro__:
        for k, a in getattr(klass, "__annotations__", {}).items():
            if a is typing.Final or typing.get_origin(a) is typing.Final or \
                    (isinstance(a, str) and "Final" in a):
                out.add(k)
    return out


_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


class RecursiveScriptModule(ScriptModule):
    """What :func:`ptcore.jit.script` and :func:`ptcore.jit.load` return for a
    module (and its submodules), as torch's ``torch.jit.RecursiveScriptModule``
    (printed under that name, with ``original_name=``)."""

    def _get_name(self):
        return "RecursiveScriptModule"


class ScriptContainer(RecursiveScriptModule):
    """A scripted ``Sequential``/``ModuleList``/``ModuleDict``: indexed,
    iterated, sized and searched as the original (torch's
    RecursiveScriptModule forwards these to the container)."""

    def __getitem__(self, idx):
        if isinstance(idx, str):
            return self._modules[idx]
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return (Sequential if self._original_name == "Sequential" else ModuleList)(
                *([mods[idx]] if self._original_name != "Sequential" else mods[idx]))
        return mods[idx]

    def __len__(self):
        return len(self._modules)

    def __bool__(self):
        return True

    def __iter__(self):
        if self._original_name == "ModuleDict":
            return iter(self._modules)
        return iter(self._modules.values())

    def __contains__(self, key):
        if self._original_name != "ModuleDict":
            raise NotImplementedError(f"'in' of a scripted {self._original_name}")
        return key in self._modules


class TracedModule(ScriptModule):
    """A module recorded by :func:`ptcore.jit.trace` (the submodules of a
    traced module), as torch's ``torch.jit.TracedModule``."""


class TopLevelTracedModule(TracedModule):
    """What :func:`ptcore.jit.trace` returns for an ``nn.Module``."""
    _child_class = TracedModule


def script_module_named(name):
    """An empty ScriptModule for a module named ``name`` (read from a file)."""
    sm = ScriptContainer() if name in _CONTAINERS else RecursiveScriptModule()
    object.__setattr__(sm, "_original_name", name)
    return sm


ScriptModule.__module__ = "ptcore.jit"
RecursiveScriptModule.__module__ = "ptcore.jit"
ScriptContainer.__module__ = "ptcore.jit"
# a scripted container is a RecursiveScriptModule to the user, as in torch
ScriptContainer.__name__ = ScriptContainer.__qualname__ = "RecursiveScriptModule"
ScriptFunction.__module__ = "ptcore.jit"
TracedModule.__module__ = "ptcore.jit"
TopLevelTracedModule.__module__ = "ptcore.jit"
