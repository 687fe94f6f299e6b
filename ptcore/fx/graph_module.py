"""`GraphModule`: a module whose ``forward`` is generated from a
:class:`~ptcore.fx.Graph` (as ``torch.fx.graph_module``)."""
import copy
import itertools
import linecache
import warnings
from pathlib import Path

import ptcore
from ptcore.nn import Module, Parameter
from ptcore.nn.modules.module import _addindent

from ptcore.fx.graph import Graph, _custom_builtins, _is_from_ptcore

__all__ = ["GraphModule"]

_src_counter = itertools.count()


def _exec_with_source(src, globals_, co_fields=None):
    key = f"<eval_with_key>.{next(_src_counter)}"
    # let tracebacks and inspect.getsource show the generated code
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src, globals_):
    g = dict(globals_)
    _exec_with_source(src, g)
    fn = g["forward"]
    del g["forward"]
    return fn


def _format_import_statement(name, obj):
    if name in _custom_builtins:
        return _custom_builtins[name][0]
    if _is_from_ptcore(obj):
        return "import ptcore"
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", getattr(obj, "__name__", None))
    if module is None or qual is None or "<" in qual:
        raise RuntimeError(f"cannot serialize the global {name}={obj!r}: it is not "
                           f"importable by module and name")
    if module == "_operator":
        module = "operator"
    top, _, rest = qual.partition(".")
    if rest:
        return f"from {module} import {top} as _{name}_owner\n{name} = _{name}_owner.{rest}"
    return f"from {module} import {qual} as {name}"


def _format_import_block(globals_):
    stmts = {_format_import_statement(n, o) for n, o in globals_.items()}
    return "\n".join(sorted(stmts))


def _reduce_graph_module(body, import_block):
    """Rebuild a pickled GraphModule from its attributes and its code."""
    fn_src = body.get("_code")
    forward = _forward_from_src(import_block + fn_src, {})
    return _deserialize_graph_module(forward, body)


class _CodeOnlyModule(Module):
    """A module made of a GraphModule's attributes (``__dict__``)."""

    def __init__(self, body):
        super().__init__()
        self.__dict__ = body


# the tracer that rebuilds an unpickled GraphModule's graph from its code:
# ptcore.fx._symbolic_trace.Tracer (which builds on GraphModule), registered by
# that module at its import (the package imports it)
_tracer = []


def register_tracer(tracer_class):
    """Make ``tracer_class`` the tracer that unpickling retraces code with."""
    _tracer[:] = [tracer_class]


def _deserialize_graph_module(forward, body):
    class CodeOnlyModule(_CodeOnlyModule):
        pass
    CodeOnlyModule.forward = forward

    class KeepModules(_tracer[0]):
        def is_leaf_module(self, m, qualname):
            return True

    com = CodeOnlyModule(body)
    tracer = KeepModules()
    graph = tracer.trace(com)
    name = body.get("_graphmodule_cls_name", "GraphModule")
    return GraphModule(com, graph, class_name=name)


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return      # a parent is already installed with everything below it
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, ptcore.Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, ptcore.Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _readable(gm, name):
    """``print_readable``'s text of ``gm`` as class ``name``, its GraphModule children's
    classes nested in it (split_module's stages), as torch writes it."""
    code = gm._graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
    text = _addindent(f"class {name}(ptcore.nn.Module):\n{code}", 4)
    subs = [""] + [_readable(c, n) for n, c in gm.named_children() if isinstance(c, GraphModule)]
    return text + _addindent("\n".join(subs), 4)


class GraphModule(Module):
    """A module built from a :class:`~ptcore.fx.Graph`: it owns the
    submodules, parameters and buffers the graph names, and its ``forward``
    is Python code generated from the graph (``.code``).

    Parameters
    ----------
    root : ptcore.nn.Module or dict
        Where ``get_attr`` and ``call_module`` targets are copied from: a
        module (attributes looked up by qualified name) or a dict from
        qualified name to value.
    graph : Graph
        The graph; ``recompile()`` after editing it.
    class_name : str, optional
        The class name shown by ``repr`` and ``print_readable``.

    Examples
    --------
    >>> import operator
    >>> import ptcore, ptcore.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> _ = g.output(g.call_function(operator.mul, (x, 2)))
    >>> gm = fx.GraphModule(ptcore.nn.Module(), g)
    >>> gm(ptcore.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so that ``forward`` (a class
        # attribute set by recompile) is per instance
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        self.__class__.__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if not isinstance(node.target, str):
                        raise TypeError(f"node target must be a str, got {node.target!r}")
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           f"that target was not provided in ``root``!")
                    targets_to_copy.append(node.target)
            # parents first, so a parent module is not replaced by an empty one
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target in targets_to_copy:
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")   # (torch's type)
        self.graph = graph
        self._graphmodule_cls_name = class_name
        self.meta = {}

    @property
    def graph(self):
        """The graph this module's code is generated from; assigning a new
        graph recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to ptcore")
        return self._code

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph`` (call after editing the
        graph).

        Returns
        -------
        PythonCode
        """
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated code as a class definition, printed and returned.

        Returns
        -------
        str
        """
        out = _readable(self, self._get_name())
        if print_output:
            print(out)
        return out

    def __str__(self):
        return "\n".join([super().__str__(), self._code, "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def _get_name(self):
        return self._graphmodule_cls_name if "_graphmodule_cls_name" in self.__dict__ \
            else type(self).__name__

    def to_folder(self, folder, module_name="FxModule"):
        """Write this module as an importable package: ``folder/module.py``
        defines class ``module_name`` (the generated ``forward`` and an
        ``__init__`` that rebuilds the submodules and loads
        ``folder/state_dict.pt``), ``folder/__init__.py`` re-exports it.

        Submodules whose ``repr`` rebuilds them (Linear, Conv, BatchNorm)
        are written as code; others are pickled next to the code (loading
        those runs pickle, so only load folders you trust).

        Parameters
        ----------
        folder : str or os.PathLike
            Created if missing.
        module_name : str, optional
            The class name in ``module.py``.
        """
        folder = Path(folder)
        folder.mkdir(exist_ok=True)
        ptcore.save(self.state_dict(), folder / "state_dict.pt")
        tab = " " * 4
        python_code = self._graph.python_code(root_module="self")
        imports = _format_import_block(python_code.globals)
        lines = ["import ptcore", imports, "", "from ptcore.nn import *", "",
                 f"class {module_name}(ptcore.nn.Module):",
                 f"{tab}def __init__(self):", f"{tab * 2}super().__init__()"]
        safe = (ptcore.nn.Linear, ptcore.nn.Conv1d, ptcore.nn.Conv2d, ptcore.nn.Conv3d,
                ptcore.nn.BatchNorm1d, ptcore.nn.BatchNorm2d, ptcore.nn.BatchNorm3d)
        blobs = []
        for name, module in self.named_children():
            if type(module) in safe:
                lines.append(f"{tab * 2}setattr(self, '{name}', {module!r})")
            else:
                path = folder / f"{name}.pt"
                ptcore.save(module, path)
                blobs.append(name)
                lines.append(f"{tab * 2}setattr(self, '{name}', "
                             f"ptcore.load(r'{path}', weights_only=False))")
        for name, buf in self._buffers.items():
            if buf is not None:
                lines.append(f"{tab * 2}self.register_buffer('{name}', "
                             f"ptcore.empty({list(buf.shape)}, dtype={buf.dtype}))")
        for name, param in self._parameters.items():
            if param is not None:
                lines.append(f"{tab * 2}setattr(self, '{name}', ptcore.nn.Parameter("
                             f"ptcore.empty({list(param.shape)}, dtype={param.dtype})))")
        lines.append(f"{tab * 2}self.load_state_dict(ptcore.load(r'{folder / 'state_dict.pt'}'))")
        code = "\n".join(tab + ln if ln.strip() else ln for ln in python_code.src.split("\n"))
        (folder / "module.py").write_text("\n".join(lines) + "\n" + code + "\n")
        (folder / "__init__.py").write_text("from .module import *\n")
        if blobs:
            warnings.warn(f"Was not able to save the following children modules as reprs - "
                          f"saved as pickled files instead: {blobs}")

    # ----------------------------------------------------------- submodules
    def add_submodule(self, target, m):
        """Install module ``m`` at qualified name ``target``, creating empty
        parent modules as needed.

        Returns
        -------
        bool
            False when a part of the path exists and is not a Module.
        """
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                setattr(mod, item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at ``target``.

        Returns
        -------
        bool
            False when there was no submodule there.
        """
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Remove every submodule that no ``call_module`` or ``get_attr``
        node uses (directly or as a parent of a used one)."""
        used = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                for i in range(1, len(fullpath) + 1):
                    used.append(".".join(fullpath[:i]))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    for name, _ in submod.named_modules():
                        if name:
                            used.append(node.target + "." + name)
        used = set(used)
        to_delete = [name for name, _ in self.named_modules()
                     if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    # -------------------------------------------------------- copy / pickle
    def __reduce__(self):
        body = self.__dict__.copy()
        python_code = self.recompile()
        import_block = _format_import_block(python_code.globals)
        del body["_graph"]
        # as torch's: a pickled GraphModule comes back named GraphModule (only
        # torch.package and deepcopy keep the traced module's class name)
        body.pop("_graphmodule_cls_name", None)
        return (_reduce_graph_module, (body, import_block))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        body = {k: v for k, v in self.__dict__.items() if k != "_graph"}
        fake = _CodeOnlyModule(copy.deepcopy(body, memo))
        res.__init__(fake, copy.deepcopy(self.graph), class_name=self._get_name())
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, class_name=self._get_name())
        res.meta = getattr(self, "meta", {})
        return res

