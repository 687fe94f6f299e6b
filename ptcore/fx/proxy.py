"""Symbolic values of FX tracing: :class:`Proxy` records every operation done
on it as a node of the tracer's graph; :class:`TracerBase` turns Python
values into node arguments (as ``torch.fx.proxy``)."""
import bisect
import copy
import dis
import enum
import inspect
import operator
import sys

import ptcore

from ptcore.overrides import is_tensor_method_or_property
from ptcore._dispatch.declarations import DECLARED

from ptcore.fx.graph import magic_methods, reflectable_magic_methods
from ptcore.fx.node import Node, map_aggregate
from ptcore.fx.node import Argument, Target, base_types, map_arg  # noqa: F401  (torch's names)

__all__ = ["TraceError", "TracerBase", "GraphAppendingTracer", "Proxy", "Attribute", "ParameterProxy"]


class TraceError(ValueError):
    """Raised when symbolic tracing meets Python that needs a concrete value
    (``if proxy:``, ``for v in proxy``)."""


_base_types = (str, int, float, bool, complex, type(None), type(Ellipsis))


class TracerBase:
    """What every tracer does: make nodes and proxies, turn arguments into
    node arguments.  :class:`~ptcore.fx.Tracer` is the tracer users extend.

    Attributes
    ----------
    graph : Graph
        The graph being built.
    record_stack_traces : bool
        Record the Python stack in each node's ``meta['stack_trace']``.
    """

    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Make a node in ``self.graph`` (override to annotate nodes)."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.module_stack:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        if self.record_stack_traces and kind not in ("placeholder", "output"):
            import traceback
            frames = [f for f in traceback.extract_stack()
                      if "ptcore/fx/" not in f.filename.replace("\\", "/")]
            node.stack_trace = "".join(traceback.format_list(frames))
        return node

    def proxy(self, node):
        """Wrap ``node`` in a :class:`Proxy` of this tracer."""
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Make a node from ``args``/``kwargs`` (proxies become nodes) and
        return a proxy for it."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise TypeError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Turn a Python value into a node argument: proxies become their
        nodes, containers are converted element by element, constants stay.

        Raises
        ------
        NotImplementedError
            For values a graph cannot hold.
        """
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys of a dict argument cannot be traced values: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, _base_types) or isinstance(a, enum.Enum):
            return a
        if isinstance(a, (ptcore.dtype, ptcore.device, ptcore.memory_format, ptcore.layout,
                          ptcore.Tensor)):
            return a
        if isinstance(a, Node):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        """Called for ``bool(proxy)``; symbolic values have no truth value.

        Raises
        ------
        TraceError
        """
        raise TraceError("symbolically traced variables cannot be used as inputs to "
                         "control flow")

    def iter(self, obj):
        """Called for ``iter(proxy)`` when the length is unknown.

        Raises
        ------
        TraceError
        """
        raise TraceError("Proxy object cannot be iterated. This can be attempted when "
                         "the Proxy is used in a loop or as a *args or **kwargs function "
                         "argument. See the ptcore.fx docs on symbolic tracing.")

    def keys(self, obj):
        """Called for ``**proxy``: a ``keys()`` method call node."""
        return Attribute(obj, "keys")()


class Proxy:
    """A value seen during symbolic tracing.  Every operation done on a
    proxy (operators, attribute reads, method calls, ptcore functions through
    ``__torch_function__``) adds a node to the tracer's graph and returns a
    new proxy.

    Parameters
    ----------
    node : Node
        The node this proxy stands for.
    tracer : TracerBase, optional
        The tracer recording operations (a fresh graph-only tracer when
        omitted).
    """

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # not found on the Proxy: a symbolic attribute of the value
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        new_dict = {}
        for k, v in self.__dict__.items():
            try:
                new_dict[k] = copy.deepcopy(v, memo)
            except Exception:
                new_dict[k] = copy.copy(v)
        new = Proxy(new_dict["node"], new_dict["tracer"])
        new.__dict__.update(new_dict)
        return new

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` unpacks a known number of items
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        if sys.version_info >= (3, 11):
            idx = bisect.bisect_left(insts, frame.f_lasti, key=lambda i: i.offset)
        else:                               # f_lasti counts instructions
            idx = frame.f_lasti // 2
        if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        """``keys()`` of the traced value (for ``**proxy``)."""
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call ptcore.fx.wrap('len') "
                           "at module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        if orig_method.__name__ in ("tanh", "sigmoid") and args and not kwargs and \
                getattr(ptcore.nn.functional, orig_method.__name__) is orig_method:
            # torch's F.tanh / F.sigmoid are ``input.tanh()``: a method call
            return tracer.create_proxy("call_method", orig_method.__name__, args, {})
        args, kwargs = _functional_arguments(orig_method, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


# torch.nn.functional's Python functions hand __torch_function__ their first
# parameters positionally (as many as the op's declaration says: its
# ``tf_args``) and every other parameter by keyword, defaults included
# (``F.relu(x)`` is recorded as ``relu(x, inplace=False)``); the graph's nodes
# and generated code carry the same arguments as torch's
# where torch passes fewer keywords than the function has parameters
_F_KEYWORDS = {
    "l1_loss": ("size_average", "reduce", "reduction"),
    "multi_head_attention_forward": (
        "training", "key_padding_mask", "need_weights", "attn_mask", "is_causal",
        "use_separate_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
        "static_k", "static_v", "average_attn_weights"),
}
_F_SIGNATURES = {}


def _functional_arguments(fn, args, kwargs):
    """``args, kwargs`` of a call of a ``ptcore.nn.functional`` function as
    torch's function hands them to ``__torch_function__``; others unchanged."""
    name = getattr(fn, "__name__", None)
    decl = DECLARED.get(("nn.functional", name))
    n_pos = decl.tf_args if decl is not None else None
    if n_pos is None or getattr(ptcore.nn.functional, name, None) is not fn:
        return args, kwargs
    sig = _F_SIGNATURES.get(name)
    if sig is None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = False
        if sig and any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                       for p in sig.parameters.values()):
            sig = False
        _F_SIGNATURES[name] = sig
    if not sig:
        return args, kwargs
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs             # the call itself raises, as it would untraced
    bound.apply_defaults()
    values = bound.arguments
    names = list(sig.parameters)
    keywords = _F_KEYWORDS.get(name) or [
        n for n in names[n_pos:]
        if not n.startswith("_") or n in ("_stacklevel", "_random_samples")]
    return (tuple(values[n] for n in names[:n_pos]),
            {n: values[n] for n in keywords if n in values})


def _is_tensor_method(fn):
    """A Tensor method variant (recorded as ``call_method``); a function that
    is also ``ptcore.<name>`` is recorded as that function."""
    try:
        if getattr(ptcore, fn.__name__, None) is fn:
            return False
        return is_tensor_method_or_property(fn)
    except (TypeError, AttributeError):
        return False


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (``torch.fx.proxy.GraphAppendingTracer``):
    proxies made around nodes of a hand-built graph record into it (e3nn builds its
    generated modules this way)."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Attribute(Proxy):
    """A proxy for ``proxy.<attr>``: calling it records a ``call_method``
    node; using it otherwise records a ``getattr`` call."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        # the getattr node is only made when the attribute is used as a value
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A proxy for a module parameter that answers shape questions
    (``shape``, ``size()``, ``dim()``, ``numel()``) with the parameter's
    concrete values instead of recording nodes."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        if not isinstance(param, ptcore.nn.Parameter):
            raise TypeError("ParameterProxy needs a Parameter")
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _make_magic(method):
    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)
    impl.__name__ = f"__{method.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


def _make_reflected(orig_name):
    method_name = f"__r{orig_name.strip('_')}__"

    def impl(self, rhs):
        target = getattr(operator, orig_name)
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = method_name
    setattr(Proxy, method_name, impl)


for _m in magic_methods:
    _make_magic(_m)
for _m in reflectable_magic_methods:
    if _m != "getitem":
        _make_reflected(_m)
del _m
