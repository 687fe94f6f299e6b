"""FX graph nodes: :class:`Node` and the helpers that walk the arguments of a
node (:func:`map_arg`, :func:`map_aggregate`), as in ``torch.fx.node``."""
import builtins
import collections.abc
import operator
import types
import typing

import ptcore

from ptcore.fx.immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_OPCODES = ("placeholder", "call_method", "call_module", "call_function",
            "get_attr", "output", "root")
_legal_ops = dict.fromkeys(_OPCODES)

# the type aliases of torch.fx.node that programs write in annotations
# (``target: torch.fx.node.Target``) and test against (``isinstance(a, base_types)``)
BaseArgumentTypes = typing.Union[str, int, float, bool, complex, ptcore.dtype, ptcore.Tensor,
                                 ptcore.device, ptcore.memory_format, ptcore.layout,
                                 ptcore.SymInt, ptcore.SymBool, ptcore.SymFloat]
base_types = BaseArgumentTypes.__args__
Target = typing.Union[typing.Callable[..., typing.Any], str]
Argument = typing.Optional[typing.Union[
    tuple["Argument", ...], collections.abc.Sequence["Argument"],
    collections.abc.Mapping[str, "Argument"], slice, range, "Node", BaseArgumentTypes]]

# functions whose call nodes dead-code elimination keeps (ptcore._assert: a
# traced ``torch._assert(cond, msg)`` is kept, as torch's)
_side_effectful_functions = {operator.setitem, ptcore._assert}

# random functions advance the generator: impure unless impure_random=False
_RANDOM_FUNCTIONS = {getattr(ptcore, n) for n in (
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
    "normal", "poisson", "bernoulli", "multinomial") if hasattr(ptcore, n)}


def has_side_effect(fn):
    """Mark ``fn`` so that :meth:`Graph.eliminate_dead_code` keeps its
    ``call_function`` nodes even when their results are unused.

    Parameters
    ----------
    fn : callable
        The function to mark.

    Returns
    -------
    callable
        ``fn`` itself, so this works as a decorator.
    """
    _side_effectful_functions.add(fn)
    return fn


def _find_module_of_method(fn):
    name = getattr(fn, "__module__", None)
    if name is not None:
        return name
    obj = getattr(fn, "__self__", None)
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return None


def _qualified_name(fn):
    """``module.name`` under which ``fn`` is reachable (``ptcore.relu``,
    ``operator.add``); bare name for builtins."""
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return fn.__name__
    name = getattr(fn, "__name__", None) or type(fn).__name__
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
            and fn.__objclass__ is ptcore.Tensor:
        return f"ptcore.Tensor.{name}"
    module = _find_module_of_method(fn) or ""
    if module == "_operator":
        module = "operator"
    if module.startswith("ptcore") and _resolve(module, name) is not fn:
        # __module__ is private or wrong: the shortest public path that
        # reaches the same object
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            mod = ".".join(parts[:i])
            try:
                obj = ptcore
                for p in parts[1:i]:
                    obj = getattr(obj, p)
                if getattr(obj, name, None) is fn:
                    return f"{mod}.{name}"
            except AttributeError:
                break
    return f"{module}.{name}" if module else name


_get_qualified_name = _qualified_name     # (torch.fx.node's name)


def _resolve(module, name):
    obj = ptcore
    try:
        for p in module.split(".")[1:]:
            obj = getattr(obj, p)
        return getattr(obj, name)
    except AttributeError:
        return None


def _format_target(base, target):
    """``self.a.b`` for ``target='a.b'``; ``getattr(self.a, "0")`` where a
    part is not an identifier."""
    out = base
    for elem in target.split("."):
        if elem.isidentifier():
            out = f"{out}.{elem}"
        else:
            out = f'getattr({out}, "{elem}")'
    return out


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a``, rebuilding tuples, lists, dicts and
    slices around the results.

    Parameters
    ----------
    a : object
        A node argument: nested tuples, lists, dicts, slices and leaves.
    fn : callable
        Applied to every leaf.

    Returns
    -------
    object
        ``a`` with each leaf replaced by ``fn(leaf)`` (lists and dicts come
        back as :mod:`~ptcore.fx.immutable_collections` types).
    """
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        # namedtuples are rebuilt as the same type
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to every :class:`Node` inside the argument structure ``a``.

    Parameters
    ----------
    a : object
        A node argument (nodes nested in tuples, lists, dicts, slices).
    fn : callable
        Called with each ``Node``; its result replaces the node.

    Returns
    -------
    object
        ``a`` with the nodes replaced.

    Examples
    --------
    >>> import ptcore.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> fx.node.map_arg((x, [x, 1]), lambda n: n.name)
    ('x', ['x', 1])
    """
    if not callable(fn):
        raise TypeError("map_arg: the second argument must be callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg, max_list_len=float("inf")):
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{maybe_len}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{maybe_len})"
    if isinstance(arg, dict):
        items = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a :class:`~ptcore.fx.Graph`.

    ``op`` is one of ``placeholder``, ``get_attr``, ``call_function``,
    ``call_method``, ``call_module`` and ``output``; ``target`` is what it
    calls or reads; ``args``/``kwargs`` may hold other nodes, whose
    ``users`` then include this node.  Nodes are made by the ``Graph``
    methods, not directly.
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPCODES:
            raise AssertionError(f"op {op!r} is not in _legal_ops: {_OPCODES}")   # (torch's type)
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} "
                             f"has type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} "
                             f"has type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self.__update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------------ list
    @property
    def next(self):
        """The next node in the graph's order."""
        return self._next

    @property
    def prev(self):
        """The previous node in the graph's order."""
        return self._prev

    def prepend(self, x):
        """Move or insert node ``x`` just before this node."""
        if x is self:
            raise ValueError("Node.prepend: cannot prepend a node to itself")
        if self.graph is not x.graph:
            raise ValueError("Node.prepend: the nodes belong to different graphs")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move or insert node ``x`` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ------------------------------------------------------------ arguments
    @property
    def args(self):
        """The positional arguments (nodes or constants); assigning updates
        the ``users`` of the nodes involved."""
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments; assigning updates ``users``."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The distinct nodes this node reads, in order of appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """Set positional argument ``idx`` to ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Insert ``arg`` at position ``idx`` of the positional arguments."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Set keyword argument ``key`` to ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}

        def collect(n):
            if n.graph is not self.graph and self.graph is not None and n.graph is not None:
                raise ValueError(f"Node {self.name} cannot use node {n.name} of another graph")
            self._input_nodes.setdefault(n)
            return n
        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def stack_trace(self):
        """The Python stack at creation when recorded (``meta['stack_trace']``)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ------------------------------------------------------------- rewiring
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True,
                              *, propagate_meta=False):
        """Make every user of this node read ``replace_with`` instead.

        Parameters
        ----------
        replace_with : Node
            The node to use from now on.
        delete_user_cb : callable, optional
            Called with each user; users for which it returns False keep
            this node.
        propagate_meta : bool, optional
            Copy this node's ``meta`` into ``replace_with`` (which must have
            an empty ``meta``).

        Returns
        -------
        list of Node
            The users that were changed.
        """
        if propagate_meta:
            if replace_with.meta:
                raise ValueError("replace_all_uses_with(propagate_meta=True): the "
                                 "replacement node already has meta")
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for use in to_process:
            use._replace_input(self, replace_with)
        return to_process

    def replace_input_with(self, old_input, new_input):
        """Replace every occurrence of ``old_input`` in this node's arguments
        with ``new_input``."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old, new):
        def maybe(n):
            return new if n is old else n
        self.__update_args_kwargs(map_arg(self._args, maybe), map_arg(self._kwargs, maybe))

    def is_impure(self, impure_random=True):
        """True for nodes dead-code elimination must keep: placeholders,
        outputs, calls of functions marked with :func:`has_side_effect` (and
        random functions when ``impure_random``), modules with a true
        ``_is_impure`` attribute.  As in torch, ``call_method`` nodes are
        pure, in-place methods included."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            try:
                return (self.target in _side_effectful_functions
                        or (impure_random and self.target in _RANDOM_FUNCTIONS))
            except TypeError:       # an unhashable callable
                return False
        if self.op == "call_module":
            root = getattr(self.graph, "owning_module", None)
            if root is None:
                return False
            try:
                mod = root.get_submodule(self.target)
            except AttributeError:
                return False
            return bool(getattr(mod, "_is_impure", False))
        return False

    # ------------------------------------------------------------- printing
    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """One line describing this node, as in ``print(graph)``
        (``%relu : [num_users=1] = call_function[target=ptcore.relu](args = (%x,), kwargs = {})``)."""
        if self.op == "placeholder":
            if not isinstance(self.target, str):
                raise TypeError("placeholder target must be a str")
            arg_str = self.target
            arg_str += f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_typename = f"{_type_repr(self.type)} " if self.type else ""
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = " \
                   f"{self.op}[target={self.target}]{default_val}"
        if self.op == "get_attr":
            maybe_typename = f"{_type_repr(self.type)} " if self.type is not None else ""
            return f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = " \
                   f"{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        maybe_typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        return f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = " \
               f"{self.op}[target={self._pretty_print_target(self.target)}](" \
               f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        if getattr(target, "__module__", None) in ("builtins", "_operator", "operator"):
            return f"{'operator' if target.__module__ != 'builtins' else 'builtins'}." \
                   f"{target.__name__}"
        return _qualified_name(target)

    def __repr__(self):
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name


def _type_repr(t):
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        return f"{t.__module__}.{t.__qualname__}" if not t.__module__.startswith("ptcore") \
            else _qualified_name(t)
    return repr(t)
