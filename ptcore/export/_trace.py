"""Tracing for ``ptcore.export``: the module runs once on the example inputs
with the tracing layer of the dispatch point on (as ``ptcore.jit.trace``);
each op call the program makes is recorded as an FX ``call_function`` node
whose target is the aten overload a dispatch mode would see for it
(``ptcore.ops.aten.linear.default``).  Sizes read from tensors are the jit
tracer's traced ints (:mod:`ptcore.jit._sizes`): with dynamic dimensions they
become ``aten.sym_size.int`` nodes, so that the graph follows its inputs'
sizes; without, they are constants, as torch specialises static sizes."""
import importlib
import inspect
import operator

from ptcore._tensor import _TensorBase
from ptcore._dispatch import op_overload as _ov
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch import table as _table
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch.python_dispatch import func_for, _basic_index_steps
from ptcore._ops_namespace import ops
from ptcore.fx.graph import Graph
from ptcore.jit import _sizes
from ptcore.nn import Module
from ptcore.utils import _pytree
import ptcore.export.graph_signature as gs
from ptcore.export.dynamic_shapes import (GuardOnDataDependentSymNode, UserError,
                                          read_dynamic_shapes)

__all__ = ["trace_program", "TensorMeta", "is_impure", "PtcoreOp"]

_SENTINEL = 1 << 52     # sizes stand in as ints from here while an op's aten form is chosen


class TensorMeta:
    """The shape and dtype of a node's tensor value (``node.meta["tensor_meta"]``)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


def _safe_name(s):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in str(s))


def is_impure(node):
    """Whether a node must stay though its value is unused (it writes memory
    or its op is not one of aten's)."""
    t = node.target
    if node.op != "call_function":
        return node.op in ("placeholder", "output")
    if t is operator.setitem:
        return True
    name = getattr(getattr(t, "overloadpacket", None), "__name__", None)
    if name is None:
        return t not in _PURE_PYTHON
    schema = getattr(t, "_schema", None)
    return name.endswith("_") or schema is None or \
        any(getattr(a, "is_out", False) for a in schema.arguments) or \
        name in ("dropout", "bernoulli", "rand", "randn", "randint", "normal", "multinomial",
                 "rand_like", "randn_like", "randperm")


_PURE_PYTHON = frozenset((operator.getitem, operator.add, operator.sub, operator.mul,
                          operator.floordiv, operator.mod, operator.neg))


# the module of each op namespace's public callables
_NAMESPACES = {"ptcore": "ptcore", "Tensor": None, "nn.functional": "ptcore.nn.functional",
               "linalg": "ptcore.linalg", "fft": "ptcore.fft", "special": "ptcore.special"}


class PtcoreOp:
    """A graph target for a ptcore op that has no aten overload taking its
    arguments (``nn.functional.multi_head_attention_forward``): calls the
    op's public callable, through the dispatch point.  One object per op."""
    _made = {}

    def __new__(cls, namespace, name):
        key = (namespace, name)
        op = cls._made.get(key)
        if op is None:
            op = cls._made[key] = super().__new__(cls)
            op.namespace, op.name = namespace, name
            op.__name__ = _safe_name(f"{namespace}_{name}".replace("nn.functional", "F"))
            op._fn = None
        return op

    @classmethod
    def lookup(cls, qualified):
        """The op named ``"<namespace>.<name>"`` (as ``str(op)``); ValueError if
        ptcore has no such op."""
        ns, _, name = qualified.rpartition(".")
        if ns not in _NAMESPACES or not name:
            raise ValueError(f"unknown ptcore op {qualified!r}")
        op = cls(ns, name)
        op._callable()
        return op

    def _callable(self):
        fn = self._fn
        if fn is None:
            mod = _NAMESPACES.get(self.namespace)
            if mod is None:
                import ptcore
                owner = ptcore.Tensor
            else:
                owner = importlib.import_module(mod)
            fn = getattr(owner, self.name, None)
            if fn is None or _table.lookup(self.name, self.namespace) is None:
                raise ValueError(f"unknown ptcore op {self}")
            self._fn = fn
        return fn

    def __call__(self, *args, **kwargs):
        return self._callable()(*args, **kwargs)

    def __str__(self):
        return f"{self.namespace}.{self.name}"

    def __repr__(self):
        return f"<ptcore op {self}>"

    def __reduce__(self):
        return (PtcoreOp, (self.namespace, self.name))

    def __deepcopy__(self, memo):
        return self


def _params(opdef):
    """The parameters of an op's public function, or None."""
    try:
        return list(inspect.signature(opdef.raw).parameters.values())
    except (TypeError, ValueError):
        return None


def _is_default(p, v):
    return p.default is not p.empty and (p.default is v or type(p.default) is type(v)
                                         and p.default == v)


def _aten_call(opdef, func, args, kwargs):
    """``(func, args, kwargs)`` that runs ``opdef``'s call as an aten overload,
    or None (the overload does not take the call: the op is recorded as
    itself).  Arguments the schema lacks are left out when they have their
    default value (``relu(x, inplace=False)`` is ``aten.relu.default(x)``), and
    private ones (``softmax(x, 1, _stacklevel=5)``)."""
    adapt = _ADAPTERS.get((opdef.namespace, opdef.name))
    if adapt is not None:
        params = _params(opdef)
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except (TypeError, ValueError):
            return None
        bound.apply_defaults()
        call = adapt(bound.arguments)
        if call is None:
            return None
        func, args, kwargs = call
    schema = getattr(func, "_schema", None)
    if schema is None or getattr(func, "_line", None) is None:
        return None
    names = {a.name for a in schema.arguments}
    npos = len(schema._positional)
    if len(args) > npos or any(n not in names for n in kwargs):
        params = _params(opdef) or []
        extra = params[npos:len(args)]
        if len(extra) != max(len(args) - npos, 0) or \
                not all(_is_default(p, v) for p, v in zip(extra, args[npos:])):
            return None
        by_name = {p.name: p for p in params}
        for n, v in kwargs.items():
            if n not in names and not n.startswith("_") and \
                    not (n in by_name and _is_default(by_name[n], v)):
                return None
        args = args[:npos]
        kwargs = {n: v for n, v in kwargs.items() if n in names}
    try:
        _op_schema.bind(schema, args, kwargs)
    except _op_schema.SchemaMismatch:
        return None
    if func._impl is None and _ov.resolver[0](func) is None:
        return None
    return func, args, kwargs


def _without_defaults(opdef, args):
    """``args`` without 1, 2 ... of its trailing arguments that have their
    default value (``dropout(x, 0.1, True, False)``), longest first."""
    params = _params(opdef)
    if not params:
        return
    k = len(args)
    while k > 0 and k <= len(params) and _is_default(params[k - 1], args[k - 1]):
        k -= 1
        yield args[:k]


def _batch_norm(b):
    return (ops.aten.batch_norm.default, (b["input"], b["weight"], b["bias"], b["running_mean"],
                                         b["running_var"], b["training"], b["momentum"], b["eps"],
                                         True), {})


def _embedding(b):
    if b.get("max_norm") is not None:
        return None
    pad = b.get("padding_idx")
    if pad is None:
        pad = -1
    elif pad < 0:
        pad += _TensorBase.size(b["weight"], 0)
    return (ops.aten.embedding.default, (b["weight"], b["input"], pad,
                                        b.get("scale_grad_by_freq", False),
                                        b.get("sparse", False)), {})


# public functions whose arguments differ from their aten op's: the aten call
_ADAPTERS = {("nn.functional", "batch_norm"): _batch_norm,
             ("nn.functional", "embedding"): _embedding}


class _ExportTracer:
    """The tracer the tracing layer reports op calls to: builds an FX graph."""
    transparent = frozenset()
    transparent_depth = 0

    def __init__(self, graph, symbolic, attr_names):
        self.graph = graph
        self.env = {}                   # id(tensor) -> (tensor, node): keeps it alive
        self.static = set()             # ids of state tensors: their sizes are constants
        self.symbolic = symbolic
        self.attr_names = attr_names    # id(tensor) -> qualified name of a tensor attribute
        self.constants = []             # (placeholder node, target, tensor)
        self.first_input = None         # constants' placeholders go before this node
        self.names = {}

    # -- the tracing layer's protocol ---------------------------------------
    def read_size(self, t, which, value):
        return _sizes.read_size(self, t, which, value)

    def knows(self, t):
        hit = self.env.get(id(t))
        return hit is not None and hit[0] is t

    def converted(self, name, what):
        if name == "__bool__":
            raise GuardOnDataDependentSymNode(
                "Could not guard on data-dependent expression: ptcore.export traced a program "
                "whose control flow reads a tensor's value (bool(tensor)); the graph cannot "
                "record it. Rewrite the branch with ptcore.where or ptcore.cond.")
        raise UserError(f"ptcore.export: the program converts a tensor to a Python {what} "
                        f"({name}); the exported graph cannot record a data-dependent value. "
                        "Keep the computation in tensors.")

    def record_size(self, t, dim):
        size = _TensorBase.numel(t) if dim is None else _TensorBase.size(t, dim)
        if not self.symbolic or id(t) in self.static:
            return size
        src = self.env[id(t)][1]
        if dim is None:
            return self._call(ops.aten.sym_numel.default, (src,), {}, "sym_numel")
        return self._call(ops.aten.sym_size.int, (src, dim), {}, "sym_size_int")

    def record_prim(self, name, args):
        enc = [self.encode(a) for a in args]
        fn = getattr(operator, name)
        if not any(hasattr(a, "op") for a in enc):
            return fn(*enc)
        return self._call(fn, tuple(enc), {}, name)

    def record(self, opdef, args, kwargs, out):
        if opdef.namespace == "Tensor" and opdef.name == "__getitem__" and not kwargs:
            self.bind(out, self._index(*args))
            return
        if opdef.namespace == "Tensor" and opdef.name == "__setitem__":
            self._call(operator.setitem, tuple(self.encode(a) for a in args), {}, "setitem")
            return
        stand = {}
        sa, sk = _stand_in(args, stand), _stand_in(kwargs, stand)
        call = self._choose(opdef, sa, sk)
        if call is None:
            for trimmed in _without_defaults(opdef, sa):
                call = self._choose(opdef, trimmed, sk)
                if call is not None:
                    break
        if call is None:
            func, a, k = PtcoreOp(opdef.namespace, opdef.name), args, kwargs
            name = opdef.name
        else:
            func, a, k = call
            name = func.overloadpacket.__name__
        a, k = _restore(a, stand), _restore(k, stand)
        node = self._call(func, tuple(self.encode(v) for v in a),
                          {n: self.encode(v) for n, v in k.items()}, name)
        self.bind(out, node)

    @staticmethod
    def _choose(opdef, args, kwargs):
        try:
            func, a, k, _ = func_for(opdef, args, kwargs)
            return _aten_call(opdef, func, a, k)
        except Exception:       # (arguments aten's schemas cannot read: the op as itself)
            return None

    # -- building the graph ---------------------------------------------------
    def _call(self, target, args, kwargs, name):
        node = self.graph.create_node("call_function", target, args, kwargs,
                                      name=self._name(name))
        return node

    def _name(self, base):
        base = _safe_name(base).strip("_") or "node"
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def _index(self, t, index):
        """``t[index]``: basic indexing as aten's select / slice / unsqueeze /
        alias (as torch records it), anything else as ``operator.getitem``."""
        plain = not _has_traced(index)
        steps = _basic_index_steps(t, index) if plain else None
        if steps is None:
            return self._call(operator.getitem, (self.encode(t), self.encode(index)), {},
                              "getitem")
        node = self.encode(t)
        for op, step_args in steps:
            func, a, k, _ = func_for(op, (t,) + step_args, {})
            node = self._call(func, (node,) + tuple(self.encode(v) for v in a[1:]),
                              {n: self.encode(v) for n, v in k.items()},
                              func.overloadpacket.__name__)
        return node

    def encode(self, x):
        if isinstance(x, _sizes.TracedInt):
            ref = x.source(self)
            return int(x) if ref is None else ref
        if isinstance(x, _TensorBase):
            hit = self.env.get(id(x))
            if hit is not None and hit[0] is x:
                return hit[1]
            return self._lift(x)
        if isinstance(x, list):
            return [self.encode(a) for a in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(self.encode(a) for a in x)
        if isinstance(x, slice):
            return slice(self.encode(x.start), self.encode(x.stop), self.encode(x.step))
        if isinstance(x, dict):
            return {k: self.encode(v) for k, v in x.items()}
        return x

    def _lift(self, t):
        """A tensor the trace did not make: a constant input of the graph."""
        if t.requires_grad:
            raise UserError("ptcore.export: the program reads a tensor that requires grad and "
                            "is neither a parameter, a buffer nor an input (a tensor of shape "
                            f"{tuple(t.shape)}); make it a parameter or detach it")
        target = self.attr_names.get(id(t))
        if target is None:
            target = f"lifted_tensor_{sum(c[1].startswith('lifted_tensor_') for c in self.constants)}"
        with self.graph.inserting_before(self.first_input):
            node = self.graph.placeholder("c_" + _safe_name(target))
        node.meta["tensor_meta"] = TensorMeta(_TensorBase.size(t), t.dtype)
        self.constants.append((node, target, t))
        self.env[id(t)] = (t, node)
        self.static.add(id(t))
        return node

    def bind(self, out, node):
        if isinstance(out, _TensorBase):
            self.env[id(out)] = (out, node)
            node.meta["tensor_meta"] = TensorMeta(_TensorBase.size(out), out.dtype)
        elif isinstance(out, (tuple, list)) and type(out).__name__ != "Size":
            for i, o in enumerate(out):
                if isinstance(o, (_TensorBase, tuple, list)):
                    self.bind(o, self._call(operator.getitem, (node, i), {}, "getitem"))


def _has_traced(x):
    if isinstance(x, _sizes.TracedInt):
        return True
    if isinstance(x, (tuple, list)):
        return any(_has_traced(a) for a in x)
    if isinstance(x, slice):
        return any(_has_traced(a) for a in (x.start, x.stop, x.step))
    return False


def _stand_in(x, stand):
    """``x`` with each traced size replaced by a distinct large int (so that the
    choice of the aten overload sees plain ints) -- ``stand`` maps them back."""
    if isinstance(x, _sizes.TracedInt):
        v = _SENTINEL + len(stand)
        stand[v] = x
        return v
    if isinstance(x, dict):
        return {k: _stand_in(v, stand) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and _has_traced(x):
        items = [_stand_in(a, stand) for a in x]
        return items if isinstance(x, list) else tuple(items)
    return x


def _restore(x, stand):
    if not stand:
        return x
    if type(x) is int and x in stand:
        return stand[x]
    if isinstance(x, dict):
        return {k: _restore(v, stand) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_restore(a, stand) for a in x)
    if isinstance(x, slice):
        return slice(*(_restore(a, stand) for a in (x.start, x.stop, x.step)))
    return x


# ---------------------------------------------------------------------------
# the export
# ---------------------------------------------------------------------------

def named_inputs(mod, args, kwargs):
    """``[(name, value)]`` for the positional then keyword inputs, named by the
    parameters of ``mod.forward``."""
    try:
        sig = inspect.signature(mod.forward)
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"ptcore.export: the example inputs do not match "
                        f"{type(mod).__name__}.forward: {e}") from None
    except ValueError:
        sig = None
    out = []
    params = [] if sig is None else list(sig.parameters.values())
    i = 0
    for p in params:
        if i >= len(args):
            break
        if p.kind is p.VAR_POSITIONAL:
            out += [(f"{p.name}_{j}", a) for j, a in enumerate(args[i:])]
            i = len(args)
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            out.append((p.name, args[i]))
            i += 1
    out += [(f"args_{j}", a) for j, a in enumerate(args[i:], i)]
    out += list(kwargs.items())
    return out


def _state_names(mod):
    """(parameters, buffers with persistence, tensor attributes) of ``mod`` by qualified name."""
    params = list(mod.named_parameters())
    buffers = []
    attrs = {}
    for prefix, m in mod.named_modules():
        dot = prefix + "." if prefix else ""
        nonpersist = getattr(m, "_non_persistent_buffers_set", set())
        for n, b in m._buffers.items():
            if b is not None:
                buffers.append((dot + n, b, n not in nonpersist))
        for n, v in vars(m).items():
            if isinstance(v, _TensorBase) and not n.startswith("_"):
                attrs.setdefault(id(v), dot + n)
    seen = set()
    buffers = [b for b in buffers if not (id(b[1]) in seen or seen.add(id(b[1])))]
    return params, buffers, attrs


def trace_program(mod, args, kwargs, dynamic_shapes, call=None, dims=None, input_names=None):
    """Trace ``mod`` (``call(*args, **kwargs)`` if given, else ``mod``) on the
    example inputs.  Returns a dict of the pieces of an ExportedProgram.
    ``dims``: the dynamic dimensions already read, ``input_names`` the names of
    the positional inputs (a retrace)."""
    names = named_inputs(mod, args, kwargs) if input_names is None else \
        list(zip(input_names, args)) + list(kwargs.items())
    if dims is None:
        dims = read_dynamic_shapes(dynamic_shapes, names)
    params, buffers, attrs = _state_names(mod)
    graph = Graph()
    tracer = _ExportTracer(graph, any(dims), attrs)
    input_specs = []
    for name, p in params:
        node = graph.placeholder("p_" + _safe_name(name))
        tracer.env[id(p)] = (p, node)
        tracer.static.add(id(p))
        node.meta["tensor_meta"] = TensorMeta(_TensorBase.size(p), p.dtype)
        input_specs.append(gs.InputSpec(gs.InputKind.PARAMETER, gs.TensorArgument(node.name),
                                        name))
    for name, b, persistent in buffers:
        node = graph.placeholder("b_" + _safe_name(name))
        tracer.env[id(b)] = (b, node)
        tracer.static.add(id(b))
        node.meta["tensor_meta"] = TensorMeta(_TensorBase.size(b), b.dtype)
        input_specs.append(gs.InputSpec(gs.InputKind.BUFFER, gs.TensorArgument(node.name),
                                        name, persistent))
    # the user inputs: one placeholder per tensor leaf
    flat, in_spec = _pytree.tree_flatten((tuple(args), dict(kwargs)))
    paths = []
    for name, value in names:
        for kp, _ in _pytree.tree_flatten_with_path(value)[0]:
            paths.append(name + "".join("_" + _safe_name(getattr(k, "idx", getattr(
                k, "key", getattr(k, "name", k)))) for k in kp))
    user_specs, input_shapes, example_flat = [], [], []
    leaf_dims = iter(dims)
    taken = {n.name for n in graph.nodes}
    for path, value in zip(paths, flat):
        if isinstance(value, _TensorBase):
            pname = path if path not in taken else path + "_1"
            node = graph.placeholder(pname)
            node.name = pname       # (torch's names, though one be a builtin's: ``input``)
            taken.add(node.name)
            if tracer.first_input is None:
                tracer.first_input = node
            if id(value) in tracer.env:
                raise UserError(f"ptcore.export: the input {path} is also a parameter or another "
                                "input of the program; pass distinct tensors")
            tracer.env[id(value)] = (value, node)
            node.meta["tensor_meta"] = TensorMeta(_TensorBase.size(value), value.dtype)
            d = next(leaf_dims)
            input_shapes.append((node.name, value.dtype, [d.get(i, s) for i, s in
                                                          enumerate(_TensorBase.size(value))]))
            user_specs.append(gs.InputSpec(gs.InputKind.USER_INPUT,
                                           gs.TensorArgument(node.name)))
        else:
            if not (value is None or isinstance(value, (bool, int, float, str))):
                raise UserError(f"ptcore.export: the input {path} is a "
                                f"{type(value).__name__}; inputs must be tensors, Python "
                                "numbers, strings, None, or tuples/lists/dicts of them")
            input_shapes.append((path, None, value))
            user_specs.append(gs.InputSpec(gs.InputKind.USER_INPUT,
                                           gs.ConstantArgument(path, value)))
        example_flat.append(value)
    if tracer.first_input is None:
        # (no tensor input: constants go last among the placeholders)
        tracer.first_input = graph.placeholder("_ptcore_export_end")
    run = call if call is not None else mod
    # (the run must leave the module as it was: a buffer the program updates
    # in place, e.g. batch norm's running statistics, gets its value back)
    saved = [(b, b.clone()) for _, b, _ in buffers]
    try:
        with _tracing.tracing(tracer):
            out = run(*args, **kwargs)
    finally:
        with _no_grad():
            for b, value in saved:
                b.copy_(value)
    if tracer.first_input.name == "_ptcore_export_end":
        graph.erase_node(tracer.first_input)
    out_flat, out_spec = _pytree.tree_flatten(out)
    results = []
    output_specs = []
    for i, o in enumerate(out_flat):
        enc = tracer.encode(o)
        results.append(enc)
        if hasattr(enc, "op"):
            kind = gs.SymIntArgument if isinstance(o, int) else gs.TensorArgument
            output_specs.append(gs.OutputSpec(gs.OutputKind.USER_OUTPUT, kind(enc.name)))
        elif o is None or isinstance(o, (bool, int, float, str)):
            output_specs.append(gs.OutputSpec(gs.OutputKind.USER_OUTPUT,
                                              gs.ConstantArgument(f"output_{i}", o)))
        else:
            raise UserError(f"ptcore.export: the program returns a {type(o).__name__}; outputs "
                            "must be tensors, Python numbers, None, or tuples/lists/dicts of "
                            "them")
    graph.output(tuple(results))
    _eliminate_dead_code(graph)
    const_specs = [gs.InputSpec(gs.InputKind.CONSTANT_TENSOR, gs.TensorArgument(n.name), target)
                   for n, target, _ in tracer.constants]
    state = {n: p for n, p in params}
    constants = {}
    for name, b, persistent in buffers:
        (state if persistent else constants)[name] = b
    for _, target, t in tracer.constants:
        constants[target] = t
    specs = input_specs + const_specs + user_specs
    return dict(graph=graph,
                signature=gs.ExportGraphSignature(specs, output_specs),
                state_dict=state, constants=constants, in_spec=in_spec, out_spec=out_spec,
                input_shapes=input_shapes, dims=dims,
                example_inputs=(tuple(args), dict(kwargs)),
                forward_arg_names=[n for n, _ in names],
                submodules=[n for n, _ in mod.named_modules() if n])


def _eliminate_dead_code(graph):
    for node in reversed(list(graph.nodes)):
        if not node.users and not is_impure(node):
            graph.erase_node(node)


def _no_grad():
    import ptcore
    return ptcore.no_grad()


def check_module(mod):
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `ptcore.nn.Module`, got "
                         f"{type(mod)}.")
