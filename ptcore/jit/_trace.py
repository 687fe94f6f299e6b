"""``ptcore.jit.trace`` / ``trace_module``: run a function or module once on
example inputs with the tracing layer of the dispatch point on, recording
each op call into a :class:`~ptcore.jit._ir.Graph`."""
import contextlib
import contextvars
import inspect
import warnings

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch.tracing import TracerWarning
from ptcore.jit import _sizes
from ptcore.jit._inline import copy_nodes, remap
from ptcore.jit._ir import Graph, Node, JitError, encode_const
from ptcore.jit._script_module import ScriptFunction, TopLevelTracedModule
from ptcore._dispatch.table import lookup
from ptcore.nn import Module

__all__ = ["trace", "trace_module", "TracingCheckError"]


class TracingCheckError(Exception):
    """The traced graph does not reproduce the program's outputs (``check_trace``)."""


_CONVERSION_MSG = ("Converting a tensor to a Python {what} might cause the trace to be incorrect. "
                   "We can't record the data flow of Python values, so this value will be treated "
                   "as a constant in the future. This means that the trace might not generalize to "
                   "other inputs!")


class _Tracer:
    """Builds a graph from the op calls the tracing layer reports."""

    # ``jit.is_tracing()`` is True under this tracer only (as torch's: not
    # while ``compile`` captures, ``export`` traces or a backward is captured)
    jit_tracing = True

    def read_size(self, t, which, value):
        """The tracing layer's size hook: sizes become traced ints."""
        return _sizes.read_size(self, t, which, value)

    def __init__(self, transparent=()):
        self.graph = Graph()
        self.env = {}           # id(tensor) -> (tensor, value id): keeps the tensor alive
        self.warned = set()
        # (namespace, name) of composite ops recorded as the ops they call
        self.transparent = frozenset(transparent)
        self.transparent_depth = 0
        # TorchScript's scopes (push_scope/pop_scope, what a module's hooks name its calls
        # by): the stack, and (number of nodes recorded, scope name) at each change
        self.scopes = []
        self.scope_marks = []
        # autograd.Function calls: (first node, end node, class name, input and output value
        # ids) -- TorchScript's prim::PythonOp nodes
        self.python_ops = []

    def node_count(self):
        return len(self.graph.nodes)

    def python_op(self, cls, start, args, out):
        """``cls.apply`` recorded the nodes from ``start`` on (see tracing.python_op)."""
        def ids(xs):
            return [self.env[id(t)][1] for t in xs
                    if isinstance(t, _TensorBase) and self.knows(t)]
        outs = out if isinstance(out, (tuple, list)) else (out,)
        self.python_ops.append((start, len(self.graph.nodes), cls.__name__, ids(args),
                                ids(outs)))

    def push_scope(self, name):
        """Nodes recorded from now until the matching :meth:`pop_scope` are in scope
        ``name`` (nested in the current one), as TorchScript's ``TracingState.push_scope``."""
        self.scopes.append(str(name))
        self.scope_marks.append((len(self.graph.nodes), "/".join(self.scopes)))

    def pop_scope(self):
        self.scopes.pop()
        self.scope_marks.append((len(self.graph.nodes), "/".join(self.scopes)))

    def passed_through(self, opdef, out):
        """After a transparent op: its results must come from recorded ops
        (else its implementation computed them outside the op table)."""
        todo = [out]
        while todo:
            x = todo.pop()
            if isinstance(x, (tuple, list)):
                todo.extend(x)
            elif isinstance(x, _TensorBase) and not self.knows(x):
                    raise JitError(f"{opdef.namespace}::{opdef.name} cannot be recorded as the "
                               "ops it calls (its implementation computes outside the "
                               "operator table)")

    def add_input(self, t, kind="input", name=None):
        v = self.graph.new_value(kind, t, name)
        self.env[id(t)] = (t, v.id)
        return v.id

    def knows(self, t):
        hit = self.env.get(id(t))
        return hit is not None and hit[0] is t

    def record_size(self, t, dim):
        """A ``Tensor::size(t, dim)`` node (``Tensor::numel(t)`` for ``dim``
        None): the graph reads the size at run time."""
        v = self.graph.new_value("node")
        op, args = (("Tensor", "numel"), [self.encode(t, "numel")]) if dim is None else \
            (("Tensor", "size"), [self.encode(t, "size"), dim])
        self.graph.nodes.append(Node(op, args, {}, {"v": v.id}))
        return {"v": v.id}

    def record_prim(self, name, args):
        """A ``prim`` node for arithmetic on recorded sizes."""
        enc = [self.encode(a, name) for a in args]
        v = self.graph.new_value("node")
        self.graph.nodes.append(Node(("prim", name), enc, {}, {"v": v.id}))
        return {"v": v.id}

    def encode(self, x, opname):
        if isinstance(x, (_sizes.TracedInt, _sizes.TracedFloat)):
            ref = x.source(self)
            if ref is not None:
                return ref
            return int(x)
        if isinstance(x, _TensorBase):
            hit = self.env.get(id(x))
            if hit is not None and hit[0] is x:
                return {"v": hit[1]}
            if self.transparent_depth:
                # inside a composite recorded as its ops: a tensor no recorded
                # op made was computed outside the table (or is a cached
                # constant): the decomposition would bake it in
                raise JitError(f"ptcore.jit.trace: {opname} inside a composite recorded as "
                               "its ops reads a tensor computed outside the operator table")
            # a tensor the trace did not make: a constant of the graph
            if x.requires_grad:
                raise RuntimeError("Cannot insert a Tensor that requires grad as a constant. "
                                   "Consider making it a parameter or input, or detaching the "
                                   f"gradient (a tensor of shape {tuple(x.shape)} read by "
                                   f"{opname})")
            c = x.detach()
            v = self.graph.new_value("const", c)
            self.env[id(x)] = (x, v.id)
            return {"v": v.id}
        if type(x) is list:
            return {"list": [self.encode(a, opname) for a in x]}
        if isinstance(x, ptcore.Size) and any(isinstance(a, _sizes.TracedInt) for a in x):
            return {"list": [self.encode(a, opname) for a in x]}
        if isinstance(x, tuple) and not isinstance(x, ptcore.Size):
            return {"tuple": [self.encode(a, opname) for a in x]}
        if isinstance(x, slice) and any(isinstance(p, _sizes.TracedInt)
                                        for p in (x.start, x.stop, x.step)):
            # ``x[:, :x.size(1) - 1]``: the bounds follow the input
            return {"slice": [self.encode(p, opname) for p in (x.start, x.stop, x.step)]}
        try:
            return encode_const(x)
        except TypeError as e:
            raise JitError(f"ptcore.jit.trace: {opname}: {e}") from None

    def bind(self, out):
        if isinstance(out, _TensorBase):
            v = self.graph.new_value("node", out)
            self.env[id(out)] = (out, v.id)
            return {"v": v.id}
        if isinstance(out, (tuple, list)) and not isinstance(out, ptcore.Size):
            items = [self.bind(a) for a in out]
            return {"list": items} if type(out) is list else {"tuple": items}
        return None

    def record(self, opdef, args, kwargs, out):
        name = f"{opdef.namespace}::{opdef.name}"
        enc_args = [self.encode(a, name) for a in args]
        enc_kwargs = {k: self.encode(v, name) for k, v in kwargs.items()}
        self.graph.nodes.append(Node((opdef.namespace, opdef.name), enc_args, enc_kwargs,
                                     self.bind(out)))

    def record_graph(self, graph, inputs, params, run):
        """A call of a compiled graph with control flow (a scripted module or
        function called by the traced program): run by ``run()`` untraced,
        its nodes copied into the trace, so that its loops and branches
        follow the inputs (TorchScript records the call)."""
        with _tracing.paused():
            out = run()
        env = {vid: self.encode(a, "call") for vid, a in zip(graph.inputs, inputs)}
        for v in graph.values.values():
            if v.kind == "const":
                env[v.id] = self.encode(v.const, "call")
            elif v.kind == "param":
                env[v.id] = self.encode(params[v.name], "call")
        self.graph.nodes.extend(copy_nodes(graph.nodes, env, self._new))
        self._bind_result(remap(graph.outputs, env), out)
        return out

    def _new(self):
        return {"v": self.graph.new_value("node").id}

    def _bind_result(self, enc, out):
        if type(enc) is not dict:
            return
        if "v" in enc:
            if isinstance(out, _TensorBase):
                self.env[id(out)] = (out, enc["v"])
            return
        items = enc.get("list", enc.get("tuple"))
        if items is not None and isinstance(out, (tuple, list)):
            for e, o in zip(items, out):
                self._bind_result(e, o)

    def converted(self, name, what):
        if what not in self.warned:
            self.warned.add(what)
            warnings.warn(_CONVERSION_MSG.format(what=what), TracerWarning, stacklevel=4)

    def finish(self, out, strict=True):
        if isinstance(out, (_TensorBase, tuple, list, dict)):
            if strict and _has_dict(out):
                raise RuntimeError(_DICT_OUTPUT_MSG)
            self.graph.outputs = self._output(out)
        else:
            raise JitError(f"{_OUTPUT_MSG} (the traced function returned "
                           f"{type(out).__name__})")
        return self.graph

    def _output(self, out):
        if isinstance(out, _TensorBase):
            return self.encode(out, "return")
        if isinstance(out, (tuple, list)):
            items = [self._output(a) for a in out]
            return {"list": items} if type(out) is list else {"tuple": items}
        if isinstance(out, dict):
            return {"dict": [[k, self._output(v)] for k, v in out.items()]}
        if out is None and _NONE_OUTPUTS.get():
            return self.encode(out, "return")
        # (a number or None would be a constant of the trace: torch refuses it)
        raise RuntimeError(_OUTPUT_MSG)


_OUTPUT_MSG = ("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output "
               "from traced functions")

_NONE_OUTPUTS = contextvars.ContextVar("ptcore_jit_none_outputs", default=False)


@contextlib.contextmanager
def none_outputs():
    """Context: a trace may return None among its outputs (the ONNX exporter,
    which drops them, as torch.onnx.export does: ``(attn_output, None)``)."""
    token = _NONE_OUTPUTS.set(True)
    try:
        yield
    finally:
        _NONE_OUTPUTS.reset(token)


_DICT_OUTPUT_MSG = (
    "Encountering a dict at the output of the tracer might cause the trace to be incorrect, "
    "this is only valid if the container structure does not change based on the module's "
    "inputs. Consider using a constant container instead (e.g. for `list`, use a `tuple` "
    "instead. for `dict`, use a `NamedTuple` instead). If you absolutely need this and know "
    "the side effects, pass strict=False to trace() to allow this behavior.")


def _has_dict(out):
    if isinstance(out, dict):
        return True
    if isinstance(out, (tuple, list)) and not isinstance(out, ptcore.Size):
        return any(_has_dict(a) for a in out)
    return False


def _as_tuple(example_inputs):
    if isinstance(example_inputs, _TensorBase):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise TypeError("ptcore.jit.trace: example_inputs must be a Tensor or a tuple of Tensors, "
                    f"not {type(example_inputs).__name__}")


def _trace_graph(fn, inputs, module=None, strict=True, children=None, transparent=(),
                 leaves=(), marks=None):
    """``children``: a dict filled with ``path -> graph`` of ``module``'s
    submodules, cut from the trace of their first call; ``transparent``:
    ``(namespace, name)`` of composite ops recorded as the ops they call;
    ``leaves``: module types whose calls are recorded as one node each
    (:func:`_leaf_hooks`); ``marks``: a dict given the tracer's scope changes
    (``"scopes"``: ``(node index, scope name)``, see ``_Tracer.push_scope``) and
    autograd.Function calls (``"python_ops"``, see ``_Tracer.python_op``)."""
    tracer = _Tracer(transparent)
    if not all(_traceable(t) for t in inputs):
        raise RuntimeError(f"Type 'Tuple[{', '.join(_type_name(t) for t in inputs)}]' cannot "
                           "be traced. Only Tensors and (possibly nested) Lists, Dicts, and "
                           "Tuples of Tensors can be traced")
    for t in inputs:
        if isinstance(t, _TensorBase):
            tracer.graph.inputs.append(tracer.add_input(t))
        else:
            # a tuple of tensors (an LSTM's ``(h0, c0)``), a dict of them:
            # one input, unpacked
            v = tracer.graph.new_value("input")
            tracer.graph.inputs.append(v.id)
            _unpack_input(tracer, {"v": v.id}, t)
    if module is not None:
        for name, p in module.named_parameters():
            tracer.add_input(p, "param", name)
        for name, b in module.named_buffers():
            if b is not None:
                tracer.add_input(b, "param", name)
    spans = {}
    handles = [] if children is None else _span_hooks(module, tracer, spans)
    resume = None
    if leaves and module is not None:
        more, resume = _leaf_hooks(module, tracer, tuple(leaves))
        handles += more
        if _leaf_type(module, leaves) is not None and fn == module.forward:
            fn = module         # (a leaf itself: called with its hooks)
    try:
        with _tracing.tracing(tracer):
            try:
                out = fn(*inputs)
            finally:
                if resume is not None:
                    resume()        # (a leaf's forward raised: recording was paused)
    finally:
        for h in handles:
            h.remove()
    graph = tracer.finish(out, strict)
    if marks is not None:
        marks.update(scopes=tracer.scope_marks, python_ops=tracer.python_ops)
    for path, m in module.named_modules() if spans else ():
        sub = _subgraph(tracer, path + ".", spans[m]) if m in spans else None
        if sub is not None:
            children[path] = sub
    return graph, out


def _span_hooks(module, tracer, spans):
    """Hooks on ``module``'s submodules recording the nodes of their calls."""
    starts = {}

    def pre(m, args):
        if m not in spans and m not in starts:
            try:
                ins = [_known(tracer, a) for a in args]
            except KeyError:
                ins = None
            starts[m] = (len(tracer.graph.nodes), ins, list(args))

    def post(m, args, out):
        if m not in spans and m in starts:
            start, ins, keep = starts.pop(m)
            try:
                enc = _known(tracer, out)
            except KeyError:
                enc = None
            # (the values as they are now: a later call may rebind a tensor)
            spans[m] = (start, len(tracer.graph.nodes), ins, keep, enc)
    handles = []
    for _, m in module.named_modules():
        if m is not module:
            handles += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
    return handles


LEAF_NAMESPACE = "nn.modules"


def _leaf_type(m, leaves):
    """The type of ``leaves`` ``m`` is an instance of, unless its class
    overrides that type's forward (its own code is then traced)."""
    for t in leaves:
        if isinstance(m, t) and type(m).forward is t.forward:
            return t
    return None


def _leaf_hooks(module, tracer, leaves):
    """Hooks on ``module``'s submodules of the types ``leaves`` recording each
    call as ONE node ``("nn.modules", <type name>)`` instead of its ops (an
    exporter's operator, e.g. ONNX's LSTM; the graph cannot run it): the
    pre-hook pauses recording, the forward hook resumes it and records the
    node.  Its args: the forward's arguments (defaults applied), then the list
    of the module's parameters and buffers; its kwargs: their names
    (``weight_names``), ``training`` and the module's configuration as
    constants (``__constants__``, ``nonlinearity``).  Returns the handles and
    ``resume()``, which ends the pauses a raising forward left."""
    calls = []

    def pre(m, args, kwargs):
        kind = _leaf_type(m, leaves)
        if kind is None or _tracing.active_tracer() is not tracer or _tracing._tls.depth:
            return None
        op = (LEAF_NAMESPACE, kind.__name__)
        name = f"{op[0]}::{op[1]}"
        bound = inspect.signature(m.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        weights = [(n, t) for n, t in (*m.named_parameters(), *m.named_buffers())
                   if t is not None]
        enc = [tracer.encode(a, name) for a in bound.args]
        enc.append({"list": [tracer.encode(t, name) for _, t in weights]})
        config = {k: tracer.encode(v, name) for k, v in bound.kwargs.items()}
        for k in (*getattr(type(m), "__constants__", ()), "nonlinearity"):
            v = getattr(m, k, None)
            if k not in config and isinstance(v, (bool, int, float, str)):
                config[k] = encode_const(v)
        config["training"] = bool(m.training)
        config["weight_names"] = {"list": [n for n, _ in weights]}
        paused = _tracing.paused()
        paused.__enter__()
        calls.append((m, paused, Node(op, enc, config, None)))
        return None

    def post(m, args, kwargs, out):
        if calls and calls[-1][0] is m:
            _, paused, node = calls.pop()
            paused.__exit__(None, None, None)
            node.outputs = tracer.bind(out)
            tracer.graph.nodes.append(node)
        return None

    def resume():
        while calls:
            calls.pop()[1].__exit__(None, None, None)

    handles = []
    for _, m in module.named_modules():
        if _leaf_type(m, leaves) is not None:
            handles += [m.register_forward_pre_hook(pre, with_kwargs=True),
                        m.register_forward_hook(post, with_kwargs=True)]
    return handles, resume


def _has_leaves(graph):
    return any(n.op[0] == LEAF_NAMESPACE for n in graph.nodes)


def _subgraph(tracer, prefix, span):
    """The graph of a submodule's call (``span`` from :func:`_span_hooks`)
    cut from ``tracer``'s trace, or None when the call reads values of the
    caller other than its arguments (it is then not callable once loaded)."""
    start, end, ins, args, out = span
    if ins is None or out is None or not all("v" in i for i in ins):
        return None
    g, sub, env = tracer.graph, Graph(), {}
    for a, i in zip(args, ins):
        v = sub.new_value("input", a)
        sub.inputs.append(v.id)
        env[i["v"]] = {"v": v.id}
    nodes = g.nodes[start:end]
    made = _defined(nodes)
    for n in nodes:
        for vid in n.input_ids():
            if vid in env or vid in made:
                continue
            val = g.values[vid]
            if val.kind == "param" and val.name.startswith(prefix):
                nv = sub.new_value("param", name=val.name[len(prefix):])
                nv.dtype, nv.shape, nv.device = val.dtype, val.shape, val.device
            elif val.kind == "const":
                nv = sub.new_value("const", val.const)
            else:
                return None
            env[vid] = {"v": nv.id}
    sub.nodes = copy_nodes(nodes, env, lambda: {"v": sub.new_value("node").id})
    try:
        sub.outputs = remap(out, env)
    except KeyError:
        return None
    return sub


def _defined(nodes):
    """The value ids that ``nodes`` (their blocks included) define."""
    out = set()
    for n in nodes:
        out.update(n.output_ids())
        for b in n.blocks:
            out.update(b.params)
            out |= _defined(b.nodes)
    return out


def _known(tracer, out):
    """The encoding of ``out`` by the values ``tracer`` knows (KeyError: it
    holds another)."""
    if isinstance(out, _TensorBase):
        if not tracer.knows(out):
            raise KeyError(id(out))
        return {"v": tracer.env[id(out)][1]}
    if isinstance(out, (tuple, list)) and not isinstance(out, ptcore.Size):
        items = [_known(tracer, a) for a in out]
        return {"list": items} if type(out) is list else {"tuple": items}
    raise KeyError(type(out).__name__)


def _traceable(t):
    """A tensor or a (nested) tuple, list or dict (string keys) of them."""
    if isinstance(t, _TensorBase):
        return True
    if isinstance(t, (tuple, list)) and not isinstance(t, ptcore.Size):
        return all(_traceable(a) for a in t)
    if type(t) is dict:
        return all(type(k) is str and _traceable(a) for k, a in t.items())
    return False


def _type_name(t):
    if isinstance(t, _TensorBase):
        return "Tensor"
    if isinstance(t, (tuple, list)) and not isinstance(t, ptcore.Size):
        inner = ", ".join(_type_name(a) for a in t)
        return f"Tuple[{inner}]" if isinstance(t, tuple) else f"List[{inner}]"
    if type(t) is dict:
        return "Dict[str, Tensor]"
    return type(t).__name__


def _unpack_input(tracer, ref, seq):
    for i, t in (seq.items() if type(seq) is dict else enumerate(seq)):
        v = tracer.graph.new_value("node", t if isinstance(t, _TensorBase) else None)
        tracer.graph.nodes.append(Node(("prim", "getitem"), [ref, i], {}, {"v": v.id}))
        if isinstance(t, _TensorBase):
            tracer.env[id(t)] = (t, v.id)
        else:
            _unpack_input(tracer, {"v": v.id}, t)


def _nondeterministic(graph):
    """The names of the graph's random ops (``rand``, dropout in training):
    ``check_trace`` cannot compare what they compute, as in torch."""
    out = []
    for n in graph.nodes:
        ns, name = n.op
        d = lookup(name, ns)
        if d is None or not ({"random", "nondeterministic"} & d.tags):
            continue
        if "dropout" in name:
            training = n.kwargs.get("training", n.args[2] if len(n.args) > 2 else True)
            p = n.kwargs.get("p", n.args[1] if len(n.args) > 1 else 0.5)
            if training is False or p == 0:
                continue
        out.append(f"{ns}::{name}")
    return out


def _check_deterministic(graph, where):
    bad = _nondeterministic(graph)
    if bad:
        warnings.warn(f"Trace had nondeterministic nodes. Did you forget call .eval() on your "
                      f"model? Nodes: {', '.join(sorted(set(bad)))}\nThis may cause errors in "
                      f"trace checking ({where}). To disable trace checking, pass "
                      "check_trace=False to torch.jit.trace()", TracerWarning, stacklevel=3)
        return False
    return True


def _compare(expected, got, where, rtol, atol, warn=False):
    """Raise TracingCheckError where the graph's output ``got`` differs from the
    program's ``expected``; with ``warn``, a value difference (same graph, a
    Python-side difference such as ``jit.is_tracing()``) is torch's TracerWarning
    instead."""
    if isinstance(expected, _TensorBase):
        if not isinstance(got, _TensorBase) or tuple(expected.shape) != tuple(got.shape) or \
                expected.dtype is not got.dtype:
            raise TracingCheckError(f"{where}: the graph's output differs in shape or dtype")
        if expected.device.type != "cpu" or got.device.type != "cpu":     # compare on the host
            expected, got = expected.detach().cpu(), got.detach().cpu()
        if not ptcore.allclose(expected.detach(), got.detach(), rtol=rtol, atol=atol,
                               equal_nan=True):
            diff = float((expected.detach() - got.detach()).abs().max())
            if warn:
                warnings.warn(f"Output nr 1. of the traced function does not match the "
                              f"corresponding output of the Python function ({where}: largest "
                              f"difference {diff})", TracerWarning, stacklevel=4)
                return
            raise TracingCheckError(
                f"{where}: the graph's output differs from the traced program's "
                f"(largest difference {diff}); "
                "the program may depend on Python values or call code the trace cannot see")
    elif isinstance(expected, (tuple, list)):
        for a, b in zip(expected, got):
            _compare(a, b, where, rtol, atol, warn)
    elif isinstance(expected, dict):
        if not isinstance(got, dict) or list(expected) != list(got):
            raise TracingCheckError(f"{where}: the graph's output dict has other keys")
        for k in expected:
            _compare(expected[k], got[k], where, rtol, atol, warn)


def _check_retrace(graph, func, inputs, where, **trace_kw):
    """torch's check of ``check_inputs``: the program traced again at ``inputs``
    records the same graph (shapes aside), else TracingCheckError (its Python
    control flow or Python values depend on the input)."""
    again, _ = _trace_graph(func, inputs, **trace_kw)
    if [n.to_json() for n in again.nodes] != [n.to_json() for n in graph.nodes] or \
            again.outputs != graph.outputs:
        raise TracingCheckError(f"{where}: Graphs differed across invocations! The traced "
                                "program takes other paths, or reads other Python values, for "
                                "the check inputs")


def _kwarg_inputs(func, example_inputs, kwargs):
    """``example_kwarg_inputs`` as positional inputs, in the order of the
    traced function's parameters (the traced graph takes them so)."""
    import inspect
    if example_inputs is not None:
        raise ValueError("ptcore.jit.trace: pass example_inputs or example_kwarg_inputs, "
                         "not both")
    if not isinstance(kwargs, dict):
        raise TypeError("ptcore.jit.trace: example_kwarg_inputs must be a dict, not "
                        f"{type(kwargs).__name__}")
    fn = func.forward if hasattr(func, "forward") else func
    params = list(inspect.signature(fn).parameters)
    unknown = [k for k in kwargs if k not in params]
    if unknown:
        raise TypeError(f"ptcore.jit.trace: example_kwarg_inputs names {unknown[0]!r}, which "
                        f"is not a parameter of {getattr(fn, '__qualname__', fn)}")
    names = params[:max(params.index(k) for k in kwargs) + 1] if kwargs else []
    missing = [n for n in names if n not in kwargs]
    if missing:
        raise TypeError(f"ptcore.jit.trace: example_kwarg_inputs lacks {missing[0]!r} (the "
                        "traced function takes its inputs in order)")
    return tuple(kwargs[n] for n in names)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True,
          _transparent=(), _leaves=()):
    """Trace ``func`` (a function or an ``nn.Module``) on ``example_inputs``
    into a :class:`ScriptFunction` / :class:`ScriptModule` (``torch.jit.trace``).
    ``_leaves`` (an exporter's): submodule types whose calls are recorded as
    one node each, which the graph cannot run (the trace is then not checked)."""
    if example_kwarg_inputs is not None:
        example_inputs = _kwarg_inputs(func, example_inputs, example_kwarg_inputs)
    if isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs}, check_trace=check_trace,
                            check_inputs=([{"forward": c} for c in check_inputs]
                                          if check_inputs else None),
                            check_tolerance=check_tolerance, strict=strict,
                            _transparent=_transparent, _leaves=_leaves)
    if not callable(func):
        raise TypeError(f"ptcore.jit.trace: expected a function or Module, got {type(func)}")
    inputs = _as_tuple(example_inputs)
    graph, out = _trace_graph(func, inputs, strict=strict, transparent=_transparent)
    sf = ScriptFunction(graph, getattr(func, "__name__", "fn"))
    if check_trace and _check_deterministic(graph, sf.name):
        where = f"ptcore.jit.trace of {sf.name}"
        for chk in [inputs] + [_as_tuple(c) for c in (check_inputs or ())]:
            if chk is not inputs:
                _check_retrace(graph, func, chk, where, strict=strict, transparent=_transparent)
            ref = func(*chk) if chk is not inputs else out
            _compare(ref, sf(*chk), where, check_tolerance, check_tolerance,
                     warn=chk is not inputs)
    return sf


def _traced_signature(fn, n):
    """The names of the ``n`` traced inputs of method ``fn``, as a scripted method's
    signature (none optional: the graph takes them all), so that the traced module is
    called with them positionally or by name, as torch's; None when they have no names
    (``*args``)."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(params) < n or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                              for p in params[:n]):
        return None
    return [[p.name, inspect.Parameter.empty] for p in params[:n]]


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True, _transparent=(), _leaves=()):
    """Trace the methods of ``mod`` named in ``inputs`` (name -> example
    inputs) into a :class:`ScriptModule` (``torch.jit.trace_module``)."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    graphs, outs, children = {}, {}, {}
    for method, example in inputs.items():
        fn = getattr(mod, method)
        ex = _as_tuple(example)
        graphs[method], outs[method] = _trace_graph(
            fn, ex, mod, strict,
            children if method == "forward" and not _leaves else None, _transparent, _leaves)
        graphs[method].signature = _traced_signature(fn, len(ex))
    sm = TopLevelTracedModule._from_module(mod, graphs)
    # as torch's, traced submodules are not callable, but their graphs
    # (their part of forward's trace) are saved: once loaded, they are
    for path, child in sm.named_modules():
        if child is not sm:
            child.__dict__["_traced_child"] = True
            if path in children:
                child.__dict__["_child_graphs"] = {"forward": children[path]}
    if check_trace and not any(_has_leaves(g) for g in graphs.values()) and \
            all(_check_deterministic(g, f"{type(mod).__name__}.{m}") for m, g in graphs.items()):
        for method, example in inputs.items():
            _compare(outs[method], getattr(sm, method)(*_as_tuple(example)),
                     f"ptcore.jit.trace of {type(mod).__name__}.{method}", check_tolerance,
                     check_tolerance)
        for chk in check_inputs or ():
            for method, example in chk.items():
                where = f"ptcore.jit.trace of {type(mod).__name__}.{method}"
                _check_retrace(graphs[method], getattr(mod, method), _as_tuple(example), where,
                               module=mod, strict=strict, transparent=_transparent,
                               leaves=_leaves)
                _compare(getattr(mod, method)(*_as_tuple(example)),
                         getattr(sm, method)(*_as_tuple(example)), where,
                         check_tolerance, check_tolerance, warn=True)
    return sm
