"""Symbolic tracing: :class:`Tracer` runs a module's ``forward`` on
:class:`~ptcore.fx.Proxy` values and records a :class:`~ptcore.fx.Graph`;
:func:`symbolic_trace` wraps the result in a GraphModule; :func:`wrap` makes
a free function a leaf of tracing (as ``torch.fx._symbolic_trace``)."""
import builtins
import functools
import inspect
import math
import types
import warnings
from types import FunctionType  # noqa: F401  (torch's module has it: subclassed tracers use it)

import ptcore
from ptcore.nn import Module, Parameter, Sequential
from ptcore.overrides import TorchFunctionMode

from ptcore.fx._compatibility import compatibility  # noqa: F401  (as torch's module has it)
from ptcore.fx.graph import Graph
from ptcore.fx.graph_module import GraphModule, register_tracer
from ptcore.fx.node import has_side_effect, map_aggregate
from ptcore.fx.node import Argument, base_types  # noqa: F401  (torch's names)
from ptcore.fx.proxy import ParameterProxy, Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "is_fx_tracing",
           "ProxyableClassMeta"]

_HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

# Module's attribute lookup and call before tracing patches them (a tracer calls through
# these; tracers written against torch's module, PyTorch Geometric's, use them by name)
_orig_module_getattr = Module.__getattr__
_orig_module_call = Module.__call__


class ScriptObject:
    """TorchScript's custom-class object type (``torch._C.ScriptObject``), for the
    ``isinstance(v, (Tensor, ScriptObject))`` checks tracers make when collecting a
    module's attributes; ptcore has no TorchScript custom classes and makes none."""
_is_fx_tracing_flag = False


def is_fx_tracing():
    """True while :class:`Tracer` is tracing a function."""
    return _is_fx_tracing_flag


class PHBase:
    """Type of :data:`PH`, the placeholder marker for ``concrete_args``."""

    def __repr__(self):
        return "PH"


PH = PHBase()


@has_side_effect
def _assert(condition, message=""):
    """Raise AssertionError with ``message`` unless ``condition`` holds
    (the check ``concrete_args`` adds for specialized inputs)."""
    if isinstance(condition, Proxy):
        return condition.tracer.create_proxy("call_function", _assert, (condition, message), {})
    if not condition:
        raise AssertionError(message)


@has_side_effect
def _assert_is_none(value, msg):
    """Raise AssertionError with ``msg`` unless ``value`` is None."""
    if isinstance(value, Proxy):
        return value.tracer.create_proxy("call_function", _assert_is_none, (value, msg), {})
    if value is not None:
        raise AssertionError(msg)


# -------------------------------------------------------------------- patching
class _PatchedFn:
    def __init__(self, frame_dict, fn_name, orig_fn, new_fn):
        self.frame_dict = frame_dict
        self.fn_name = fn_name
        self.orig_fn = orig_fn
        self.new_fn = new_fn


class _Patcher:
    """Temporarily replaces functions in dicts (module globals, builtins) and
    methods on classes; everything is restored on exit."""

    def __init__(self):
        self.patches_made = []
        self.visited = set()

    def patch(self, frame_dict, name, new_fn, deduplicate=True):
        new_fn._ptcore_fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches_made.append((frame_dict, name, None, True))
        elif getattr(frame_dict[name], "_ptcore_fx_already_patched", False):
            return
        else:
            self.patches_made.append((frame_dict, name, frame_dict[name], False))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        new_fn._ptcore_fx_already_patched = deduplicate
        orig_fn = getattr(cls, name)
        if getattr(orig_fn, "_ptcore_fx_already_patched", False):
            return
        self.patches_made.append((cls, name, orig_fn, "method"))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        idx = id(thing)
        if idx in self.visited:
            return False
        self.visited.add(idx)
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches_made:
            target, name, orig, kind = self.patches_made.pop()
            if kind == "method":
                setattr(target, name, orig)
            elif kind is True:          # was a builtin: remove the shadowing entry
                target.pop(name, None)
            else:
                target[name] = orig
        self.visited.clear()


class _ProxyDispatchMode(TorchFunctionMode):
    """Active while tracing: a ptcore function or Tensor method called with a
    :class:`Proxy` argument is recorded through ``Proxy.__torch_function__``
    before its body runs.  (Outside a mode, ptcore finds non-Tensor
    ``__torch_function__`` arguments only when the function raises on them,
    and a body that only calls methods on its input records those methods
    on the proxy instead of the function itself.)"""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _find_proxy(args, kwargs) is not None:
            return Proxy.__torch_function__(func, types, args, kwargs)
        return func(*args, **kwargs)


# functions registered by wrap(): (globals dict id, name) -> globals dict
_wrapped_fns_to_patch = {}
_wrapped_methods_to_patch = []


def _find_proxy(*objects_to_search):
    proxy = None

    def find(x):
        nonlocal proxy
        if isinstance(x, Proxy):
            proxy = x
    map_aggregate(objects_to_search, find)
    return proxy


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            rv = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            rv.node.meta["is_wrapped"] = True
            return rv
        return orig_fn(*args, **kwargs)
    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))


def _autowrap_check(patcher, frame_dict, function_ids):
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


def wrap(fn_or_name):
    """Make a module-level function a leaf of symbolic tracing: calls with
    traced arguments are recorded as one ``call_function`` node instead of
    being traced through.

    Call at module scope, with the function or its name.

    Parameters
    ----------
    fn_or_name : callable or str
        The function (or the name of a global of the calling module).

    Returns
    -------
    callable or str
        ``fn_or_name``, so this also works as a decorator.

    Raises
    ------
    NotImplementedError
        When not called at the top level of a module.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> def my_len(x):
    ...     return len(x)
    >>> _ = fx.wrap("my_len")     # doctest: +SKIP
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


class ProxyableClassMeta(type):
    """Metaclass for classes whose construction is recorded while tracing:
    ``Cls(proxy, ...)`` becomes a ``call_function`` node with the class as
    target instead of running ``__init__`` on proxies.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> class Pair(metaclass=fx.ProxyableClassMeta):
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    ...     def total(self):
    ...         return self.a + self.b
    >>> gm = fx.symbolic_trace(lambda x: Pair(x, x).total())
    >>> [n.op for n in gm.graph.nodes]
    ['placeholder', 'call_function', 'call_method', 'output']
    """

    def __call__(cls, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None and is_fx_tracing():
            return proxy.tracer.create_proxy("call_function", cls, args, kwargs)
        return super().__call__(*args, **kwargs)


# ----------------------------------------------------------------------- tracer
class Tracer(TracerBase):
    """Traces a module or function into a :class:`~ptcore.fx.Graph` by
    running it on :class:`~ptcore.fx.Proxy` values.

    Override :meth:`is_leaf_module` to choose which submodules become
    ``call_module`` nodes, :meth:`create_arg` to support more argument types.

    Parameters
    ----------
    autowrap_modules : tuple of modules, optional
        Their public functions are recorded as leaves when called on traced
        values (default ``(math,)``).
    autowrap_functions : tuple of callables, optional
        Global functions recorded as leaves.
    param_shapes_constant : bool, optional
        Answer ``shape``/``size()`` of parameters with concrete values.
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {
            id(value) for name, value in
            ((n, v) for m in autowrap_modules for n, v in m.__dict__.items())
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = None
        self.module_stack = {}
        self.num_calls = {}
        self.tensor_attrs = {}

    # --------------------------------------------------------------- values
    def create_arg(self, a):
        """Like :meth:`TracerBase.create_arg`, plus: parameters, tensors and
        modules that are attributes of the root become ``get_attr`` nodes;
        other tensor constants are stored on the root as
        ``_tensor_constant<N>``."""
        if isinstance(a, Parameter):
            for n_, p_ in self.root.named_parameters():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            for n_, p_ in self.root.named_modules():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(e) for e in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, ptcore.Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            qualname = self.tensor_attrs.get(a)
            if qualname is None:
                i = 0
                while True:
                    qualname = f"_tensor_constant{i}"
                    if not hasattr(self.root, qualname):
                        break
                    i += 1
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m, module_qualified_name):
        """True for modules recorded as one ``call_module`` node: ptcore's
        built-in ``ptcore.nn`` modules except ``Sequential``."""
        return (m.__module__.startswith("ptcore.nn")
                and not isinstance(m, Sequential))

    def path_of_module(self, mod):
        """The qualified name of ``mod`` inside the root module.

        Raises
        ------
        NameError
            If ``mod`` is not a submodule of the root.
        """
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """Record a ``call_module`` node for a leaf module, else trace
        through ``forward``."""
        module_qualified_name = self.path_of_module(m)
        num_calls = self.num_calls.get(module_qualified_name, 0)
        key = f"{module_qualified_name}@{num_calls}" if num_calls > 0 else module_qualified_name
        self.num_calls[module_qualified_name] = num_calls + 1
        self.module_stack[key] = (module_qualified_name, type(m))
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """Called for attribute reads of modules during tracing; parameters
        become ``get_attr`` proxies (one per parameter)."""
        def maybe_proxy(val, collection):
            for n, p in collection:
                if val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant and isinstance(val, Parameter):
                            factory = (lambda node, n=n, p=p: ParameterProxy(self, node, n, p))
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, Parameter):
            got = maybe_proxy(attr_val, self.root.named_parameters())
            if got is not None:
                return got
        if self.proxy_buffer_attributes and isinstance(attr_val, ptcore.Tensor):
            got = maybe_proxy(attr_val, self.root.named_buffers())
            if got is not None:
                return got
        return attr_val

    # ---------------------------------------------------------------- roots
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Make the placeholder nodes for ``root_fn``'s parameters.

        Returns
        -------
        (callable, list)
            The function to call and its arguments (proxies or concrete
            values).
        """
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        if (isinstance(concrete_args, tuple) and len(concrete_args) > 0
                and (co.co_flags & _HAS_VARSTUFF) and total_args == 1):
            for i, c in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{i}", (), {})
                args.append(out if isinstance(c, PHBase) else c)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(n, concrete_args, sig, fn_for_analysis)
                    for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & _HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args,
                                                    sig, fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args,
                                                    sig, fn_for_analysis))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn_for_analysis):
        if concrete_args is not None and name in concrete_args:
            x = concrete_args[name]
            if isinstance(x, (list, tuple, dict)):
                raise NotImplementedError(
                    f"concrete_args[{name!r}] is a {type(x).__name__}: concrete arguments "
                    f"nested in containers (pytree inputs) are not supported by ptcore.fx; "
                    f"pass a leaf value or PH")
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if isinstance(x, PHBase):
                return out
            if type(x) is bool or type(x) in (str, int, float, complex):
                self.create_proxy("call_function", ptcore._assert,
                                  (out == x, f"{name} has been specialized to have value "
                                             f"{x} but got another value"), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none,
                                  (out, f"{name} has been specialized to have value None "
                                        f"but got another value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input "
                              f"{name} to specialized function. It is up to the user to make "
                              f"sure that your inputs match the inputs you specialized the "
                              f"function with.")
            return x
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn_for_analysis.__annotations__.get(name, None))

    def trace(self, root, concrete_args=None):
        """Trace ``root`` (a module's ``forward`` or a function) into a graph.

        Parameters
        ----------
        root : ptcore.nn.Module or callable
            What to trace.
        concrete_args : dict or tuple, optional
            Arguments fixed to concrete values (or :data:`PH` to keep a
            placeholder); control flow on them is resolved while tracing.

        Returns
        -------
        Graph
        """
        global _is_fx_tracing_flag
        old_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise RuntimeError(f"traced_func_name={self.traced_func_name} doesn't "
                                       f"exist in {type(root).__name__}")
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            self.tensor_attrs = {}
            self.num_calls = {}

            def collect_tensor_attrs(m, prefix):
                for k, v in m.__dict__.items():
                    if isinstance(v, ptcore.Tensor):
                        self.tensor_attrs[v] = ".".join(prefix + [k])
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix + [k])
            collect_tensor_attrs(self.root, [])

            if not isinstance(fn, types.FunctionType):
                raise TypeError(f"symbolic tracing needs a Python function, got {type(fn)}")
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)

            parameter_proxy_cache = {}

            @functools.wraps(_orig_module_getattr)
            def module_getattr_wrapper(mod, attr):
                attr_val = _orig_module_getattr(mod, attr)
                return self.getattr(attr, attr_val, parameter_proxy_cache)

            @functools.wraps(_orig_module_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return _orig_module_call(mod, *args, **kwargs)
                _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                                self._autowrap_function_ids)
                return self.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher, _ProxyDispatchMode():
                patcher.patch_method(Module, "__getattr__", module_getattr_wrapper,
                                     deduplicate=False)
                patcher.patch_method(Module, "__call__", module_call_wrapper,
                                     deduplicate=False)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                ann = getattr(inspect.unwrap(fn), "__annotations__", {})
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                                 type_expr=ann.get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph


def _patch_function(fn, nargs):
    """A copy of ``fn`` whose ``*args``/``**kwargs`` are plain positional
    parameters, so that it can be called with the placeholder proxies."""
    co = fn.__code__
    co_flags = co.co_flags & ~_HAS_VARSTUFF
    co_args = co.replace(co_flags=co_flags, co_argcount=nargs, co_kwonlyargcount=0)
    new = types.FunctionType(co_args, fn.__globals__, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    return new


def symbolic_trace(root, concrete_args=None):
    """Trace a module or function into a :class:`~ptcore.fx.GraphModule`.

    Parameters
    ----------
    root : ptcore.nn.Module or callable
        What to trace.
    concrete_args : dict, optional
        Inputs to fix to concrete values (see :meth:`Tracer.trace`).

    Returns
    -------
    GraphModule
        A module whose ``forward`` is the generated code of the traced graph.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> class M(ptcore.nn.Module):
    ...     def forward(self, x):
    ...         return ptcore.relu(x) + 1
    >>> gm = fx.symbolic_trace(M())
    >>> print(gm.code.strip())
    def forward(self, x):
        relu = ptcore.relu(x);  x = None
        add = relu + 1;  relu = None
        return add
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


register_tracer(Tracer)
