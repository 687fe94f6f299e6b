"""The FX :class:`Graph`: a doubly linked list of :class:`~ptcore.fx.Node`
objects, node creation and surgery, and generation of the Python source of a
graph's ``forward`` (as ``torch.fx.graph``)."""
import builtins
import copy
import enum
import inspect
import keyword
import math
import re

import ptcore

from ptcore._dispatch.declarations import OPERATOR_FORMS
from ptcore.fx.node import Node, _format_target, _qualified_name, map_arg
from ptcore.fx.node import Argument, Target, _get_qualified_name, _legal_ops  # noqa: F401  (torch's names)

__all__ = ["Graph", "PythonCode", "CodeGen"]

_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)     # names may not shadow a builtin

# names every generated function can use, with the import that defines them
_custom_builtins = {}


def _register_custom_builtin(name, import_str, obj):
    _custom_builtins[name] = (import_str, obj)
    _illegal_names[name] = obj


_register_custom_builtin("inf", "from math import inf", math.inf)
_register_custom_builtin("nan", "from math import nan", math.nan)
_register_custom_builtin("NoneType", "NoneType = type(None)", type(None))
_register_custom_builtin("ptcore", "import ptcore", ptcore)
_register_custom_builtin("device", "from ptcore import device", ptcore.device)


def _operator_name(method):
    """The function of Python's ``operator`` module for operator method ``method``
    (``__add__`` -> ``add``, ``__and__`` -> ``and_``)."""
    name = method.strip("_")
    return name + "_" if keyword.iskeyword(name) else name


# torch.fx's tables of Python's operator functions (keyed by their names in
# ``operator``) and the code that calls each, from the operator methods'
# declarations (OPERATOR_FORMS); indexing is no operator method
reflectable_magic_methods = {
    _operator_name(m): f.syntax for m, f in OPERATOR_FORMS.items()
    if f.form == "plain" and f.syntax is not None and "__r" + m[2:] in OPERATOR_FORMS}
reflectable_magic_methods["getitem"] = "{}[{}]"

magic_methods = {_operator_name(m): f.syntax for m, f in OPERATOR_FORMS.items()
                 if f.form == "plain" and f.syntax is not None}
magic_methods["getitem"] = "{}[{}]"

inplace_methods = {
    _operator_name(m): f.syntax for m, f in OPERATOR_FORMS.items()
    if f.form == "inplace" and f.syntax is not None}
inplace_methods["setitem"] = "{}[{}] = {}"


def _snake_case(s):
    """``CamelCase`` -> ``camel_case`` (node names from class targets)."""
    out = []
    prev_lower = False
    for c in s:
        if c.isupper() and prev_lower:
            out.append("_")
        out.append(c.lower())
        prev_lower = c.islower()
    return "".join(out)


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


def _is_from_ptcore(obj):
    """True when ``obj`` is reachable as ``ptcore.<path>`` under the name
    :func:`_qualified_name` gives it (so generated code can spell it so)."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not (module == "ptcore" or module.startswith("ptcore.")):
        return False
    if obj is ptcore.device:
        return False
    path = _qualified_name(obj).split(".")
    cur = ptcore
    try:
        for p in path[1:]:
            cur = getattr(cur, p)
    except AttributeError:
        return False
    return cur is obj


class _Namespace:
    """Unique names for the nodes and globals of one graph: each object gets
    one name, no two objects share a name, no name shadows a keyword or a
    builtin (unless it names that builtin)."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise RuntimeError(f"object already has the name {self._obj_to_name[obj]!r}")

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name


class PythonCode:
    """The generated source of a graph's function and the globals it needs.

    Attributes
    ----------
    src : str
        Python source defining ``forward``.
    globals : dict
        Names the source refers to, mapped to their objects.
    """

    def __init__(self, src, globals):
        self.src = src
        self.globals = globals

    def __repr__(self):
        return f"PythonCode(src={self.src!r})"


class _NodeList:
    """A view of a graph's nodes in order (``reversed`` walks backwards)."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)     # robust to erasing cur
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _NodeList(self.graph, "_prev" if self.direction == "_next" else "_next")

    def __repr__(self):
        return repr(list(self))


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class Graph:
    """The intermediate representation of ``ptcore.fx``: an ordered list of
    :class:`~ptcore.fx.Node` objects that a :class:`~ptcore.fx.GraphModule`
    turns into a ``forward`` method.

    Parameters
    ----------
    owning_module : ptcore.nn.Module, optional
        The module whose attributes ``get_attr``/``call_module`` nodes name.
    tracer_cls : type, optional
        The :class:`~ptcore.fx.Tracer` class that built the graph.
    tracer_extras : dict, optional
        Extra arguments of that tracer.

    Examples
    --------
    >>> import operator
    >>> import ptcore.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> y = g.call_function(operator.add, (x, 1))
    >>> _ = g.output(y)
    >>> print(g)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})
        return add
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._co_fields = {}
        self._codegen = CodeGen()

    @property
    def owning_module(self):
        """The module that owns this graph (a GraphModule sets itself)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The nodes in order; ``len()``, iteration and ``reversed()`` work,
        and erasing the current node during iteration is safe."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The nodes with this ``op`` (and ``target`` when given), in graph
        order.

        Parameters
        ----------
        op : str
            The node kind, e.g. ``"call_function"``.
        target : object, optional
            Keep only nodes with this target.
        sort : bool, optional
            Accepted for compatibility; the nodes are always in graph order.

        Returns
        -------
        list of Node
        """
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # --------------------------------------------------------------- creation
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Make a node and insert it at the current insert point.

        Parameters
        ----------
        op : str
            ``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
            ``call_module`` or ``output``.
        target : str or callable
            What the node reads or calls.
        args, kwargs : tuple, dict, optional
            Its arguments (may contain nodes of this graph).
        name : str, optional
            A name hint; made unique.
        type_expr : object, optional
            An annotation for the value (``Node.type``).

        Returns
        -------
        Node
        """
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise TypeError(f"create_node: args must be a tuple, got {type(args).__name__}")
        if not isinstance(kwargs, dict):
            raise TypeError(f"create_node: kwargs must be a dict, got {type(kwargs).__name__}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """Insert a ``placeholder`` node: an argument of the function named
        ``name`` (with ``default_value`` when given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Insert a ``get_attr`` node reading ``self.<qualified_name>``."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Insert a ``call_module`` node calling submodule ``module_name``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Insert a ``call_method`` node: ``args[0].<method_name>(*args[1:])``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """Insert a ``call_function`` node calling ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        """Insert the ``output`` node returning ``result``."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy ``node`` (of another graph) into this one, mapping the nodes
        in its arguments through ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy all nodes of ``g`` into this graph.

        Parameters
        ----------
        g : Graph
            The source graph.
        val_map : dict
            Filled with ``{node of g: node of self}``; nodes already in it
            are not copied (map placeholders this way to splice graphs).
        return_output_node : bool, optional
            Also return ``g``'s output node.

        Returns
        -------
        object
            The copied output value (nodes of this graph), or None when
            ``g`` has no output node.
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls)
        g._codegen = copy.deepcopy(self._codegen)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        if output_vals is not None:
            rv, old_out = output_vals
            new_out = g.output(rv, type_expr=old_out.type)
            new_out.meta = copy.copy(old_out.meta)
        return g

    # ---------------------------------------------------------------- surgery
    def erase_node(self, to_erase):
        """Remove a node that has no users.

        Raises
        ------
        RuntimeError
            If the node still has users.
        """
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from a different graph")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args = map_arg(to_erase.args, lambda n: None)
        to_erase.kwargs = map_arg(to_erase.kwargs, lambda n: None)

    def inserting_before(self, n=None):
        """Context manager: new nodes go just before ``n`` (the start of the
        graph when None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("inserting_before: node is in another graph")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: new nodes go just after ``n`` (the end of the
        graph when None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("inserting_after: node is in another graph")
        return _InsertPoint(self, n.append)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase the nodes whose values are unused and that have no side
        effects.

        Parameters
        ----------
        is_impure_node : callable, optional
            ``is_impure_node(node)`` True keeps a node.

        Returns
        -------
        bool
            Whether the graph changed.
        """
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph is well formed: nodes belong to it, names are
        unique, every argument is defined before use, targets exist in the
        owning module.

        Raises
        ------
        RuntimeError
            Describing the first problem found.
        """
        seen_names = set()
        seen_values = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this graph")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not "
                                       f"belong to this Graph")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used "
                                       f"before it has been defined!")
            seen_values.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    obj = self.owning_module
                    path = []
                    for atom in node.target.split("."):
                        if not hasattr(obj, atom):
                            raise RuntimeError(f"Node {node} target {node.target} references "
                                               f"nonexistent attribute {atom} of "
                                               f"{'.'.join(path) or 'the root module'}")
                        obj = getattr(obj, atom)
                        path.append(atom)
                    if node.op == "call_module" and not isinstance(obj, ptcore.nn.Module):
                        raise RuntimeError(f"Node {node} target {node.target} is not a Module")

    # ---------------------------------------------------------------- names
    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if not isinstance(op, str):         # (torch's assertion: a target is named)
                raise AssertionError(f"Expected target to be str, got {type(op)}")
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    # --------------------------------------------------------------- printing
    def __str__(self):
        node_strs = [node.format_node() for node in self.nodes]
        s = "graph():"
        for ns in node_strs:
            if ns:
                s += "\n    " + ns
        return s

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs);
        uses ``tabulate`` when it is installed."""
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate
        except ImportError:
            cells = [headers] + [[str(c) for c in r] for r in rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
            lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
            lines.insert(1, "  ".join("-" * w for w in widths))
            print("\n".join(lines))
            return
        print(tabulate(rows, headers=headers))

    # ------------------------------------------------------------ generation
    def python_code(self, root_module, *, verbose=False):
        """The Python source of this graph as a function ``forward(self, ...)``.

        Parameters
        ----------
        root_module : str
            The name the source uses for the owning module (``"self"``).
        verbose : bool, optional
            Annotate tensor values with their ``tensor_meta`` when present.

        Returns
        -------
        PythonCode
        """
        namespace = _Namespace()
        for node in self.nodes:
            namespace.create_name(node.name, node)       # keep the node names
        return self._codegen._gen_python_code(self.nodes, root_module, namespace,
                                              verbose=verbose)

    def set_codegen(self, codegen):
        """Use ``codegen`` (a :class:`CodeGen`) to generate this graph's code."""
        self._codegen = codegen


class CodeGen:
    """Generates the Python source of a graph's function.  Subclass it and
    install it with :meth:`Graph.set_codegen` to change the signature
    (:meth:`gen_fn_def`), the return statement (:meth:`generate_output`)
    or the globals the code sees (:meth:`additional_globals`)."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        """The ``def`` line: ``def forward(self, <free_vars>)<annotation>:``."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args, *, repr_fn=repr):
        """The return statement for the output value (not indented)."""
        return f"return {repr_fn(output_args)}"

    def process_inputs(self, *args):
        """Turn the caller's inputs into the graph's placeholders' values."""
        return args

    def process_outputs(self, outputs):
        """Turn the graph's output value into what the caller receives."""
        return outputs

    def additional_globals(self):
        """Extra ``(name, object)`` pairs the generated code refers to."""
        return []

    def _gen_python_code(self, nodes, root_module, namespace, *, verbose=False):
        return _CodeGenRun(self, nodes, root_module, namespace, verbose).generate()


class _CodeGenRun:
    """One generation of source for a node list (its names and globals)."""

    def __init__(self, codegen, nodes, root_module, namespace, verbose):
        self.codegen = codegen
        self.nodes = list(nodes)
        self.root_module = root_module
        self.namespace = namespace
        self.verbose = verbose
        self.globals = {}
        self.wrapped_fns = {}
        for name, (_, obj) in _custom_builtins.items():
            self.add_global(name, obj)

    def add_global(self, name_hint, obj):
        if _is_from_ptcore(obj):
            return _qualified_name(obj)
        name = self.namespace.create_name(name_hint, obj)
        if name in self.globals and self.globals[name] is not obj:
            raise RuntimeError(f"global name {name} already refers to another object")
        self.globals[name] = obj
        return name

    def type_repr(self, o):
        if o == ():
            return "()"
        if isinstance(o, type):
            if o.__module__ == "builtins":
                return self.add_global(o.__qualname__, o)
            return self.add_global(_qualified_name(o), o)
        return self.add_global(repr(o).replace(".", "_"), o) if not isinstance(o, str) else repr(o)

    def get_repr(self, arg):
        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            name = self.add_global(_qualified_name(type(arg)), type(arg))
            return f"{name}{repr(tuple(arg))}"
        if isinstance(arg, enum.Enum):
            cls = self.add_global(arg.__class__.__name__, arg.__class__)
            return f"{cls}.{arg.name}"
        if isinstance(arg, ptcore.Tensor):
            return f"ptcore.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
        if isinstance(arg, tuple):
            if len(arg) == 1:
                return f"({self.get_repr(arg[0])},)"
            return "(" + ", ".join(self.get_repr(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(self.get_repr(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{self.get_repr(k)}: {self.get_repr(v)}"
                                   for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return (f"slice({self.get_repr(arg.start)}, {self.get_repr(arg.stop)}, "
                    f"{self.get_repr(arg.step)})")
        if isinstance(arg, ptcore.dtype):
            return repr(arg)
        if isinstance(arg, ptcore.device):
            return repr(arg)
        if isinstance(arg, type) or callable(arg) and hasattr(arg, "__name__") \
                and not isinstance(arg, (int, float)):
            return self.add_global(_qualified_name(arg), arg)
        return repr(arg)

    def format_args(self, args, kwargs):
        res = [self.get_repr(a) for a in args]
        res.extend(f"{k} = {self.get_repr(v)}" for k, v in kwargs.items())
        return ", ".join(res)

    def generate(self):
        nodes = self.nodes
        free_vars = []
        body = []
        ret_annotation = [""]

        user_to_last_uses = {}
        seen = set()
        for node in reversed(nodes):
            for inp in node._input_nodes:
                if inp not in seen:
                    seen.add(inp)
                    user_to_last_uses.setdefault(node, []).append(inp)

        no_trace_noted = False
        for node in nodes:
            ann = ""
            if node.type is not None:
                ann = f" : {self.type_repr(node.type)}"
            if self.verbose:
                tm = node.meta.get("tensor_meta")
                if tm is not None and hasattr(tm, "dtype"):
                    ann = f': "{str(tm.dtype).split(".")[-1]}{list(tm.shape)}"'
            if node.op == "placeholder":
                default = "" if not node.args else f" = {self.get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{ann}{default}")
                raw = node.target.replace("*", "")
                if raw != repr(node):
                    body.append(f"{repr(node)} = {raw}\n")
                continue
            if self.verbose and node.op != "output" and not node.stack_trace and \
                    not no_trace_noted:
                # torch's verbose code heads each run of nodes with their stack
                # trace's summary (after a blank line); symbolic tracing records none
                body.append("\n# No stacktrace found for following nodes\n")
                no_trace_noted = True
            elif node.stack_trace:
                no_trace_noted = False
            line = self.emit(node, ann, ret_annotation)
            body.append(line)
            if node.op == "output":
                body.append("\n")
                continue
            to_delete = list(user_to_last_uses.get(node, []))
            if len(node.users) == 0:
                to_delete.append(node)
            if to_delete:
                body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) + "\n")
            else:
                body.append("\n")

        if not body:
            body.append("pass\n")
        if self.codegen._body_transformer:
            body = self.codegen._body_transformer(body)
        for name, value in self.codegen.additional_globals():
            self.add_global(name, value)
        wrap_stmts = ""
        if self.wrapped_fns:
            # fx.wrap (of the tracer, which builds on this module) by the path the
            # generated code reaches it at, as torch's
            wrap_name = "ptcore.fx._symbolic_trace.wrap"
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in self.wrapped_fns)
        prologue = self.codegen.gen_fn_def(free_vars, ret_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        src = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
        return PythonCode(src, self.globals)

    def emit(self, node, ann, ret_annotation):
        name = repr(node)
        if node.op == "call_method":
            return (f"{name}{ann} = {_format_target(self.get_repr(node.args[0]), node.target)}"
                    f"({self.format_args(node.args[1:], node.kwargs)})")
        if node.op == "call_function":
            target = node.target
            tname = getattr(target, "__name__", "")
            if getattr(target, "__module__", "") == "_operator" and tname in magic_methods:
                return f"{name}{ann} = " + magic_methods[tname].format(
                    *(self.get_repr(a) for a in node.args))
            if getattr(target, "__module__", "") == "_operator" and tname in inplace_methods:
                return (inplace_methods[tname].format(*(self.get_repr(a) for a in node.args))
                        + f";  {name}{ann} = {self.get_repr(node.args[0])}")
            global_name = self.add_global(_qualified_name(target), target)
            if (global_name == "getattr" and len(node.args) == 2
                    and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                return f"{name}{ann} = {_format_target(self.get_repr(node.args[0]), node.args[1])}"
            if node.meta.get("is_wrapped", False):
                self.wrapped_fns.setdefault(global_name)
            return f"{name}{ann} = {global_name}({self.format_args(node.args, node.kwargs)})"
        if node.op == "call_module":
            return (f"{name}{ann} = {_format_target(self.root_module, node.target)}"
                    f"({self.format_args(node.args, node.kwargs)})")
        if node.op == "get_attr":
            return f"{name}{ann} = {_format_target(self.root_module, node.target)}"
        if node.op == "output":
            if node.type is not None:
                ret_annotation[0] = f" -> {self.type_repr(node.type)}"
            return self.codegen.generate_output(node.args[0], repr_fn=self.get_repr)
        raise NotImplementedError(f"node: {node.op} {node.target}")
