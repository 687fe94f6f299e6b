"""Running a graph node by node: :class:`Interpreter` executes a
GraphModule's graph with overridable per-op methods; :class:`Transformer`
re-traces it into a new graph (as ``torch.fx.interpreter``)."""
import inspect

from ptcore.fx.graph import Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.node import map_aggregate, map_arg
from ptcore.fx.node import Argument, Node, Target  # noqa: F401  (torch's names)
from ptcore.fx.proxy import Proxy
from ptcore.fx._symbolic_trace import Tracer, _ProxyDispatchMode

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Execute a GraphModule's graph one node at a time.

    Override ``run_node`` or the per-op methods (``placeholder``,
    ``get_attr``, ``call_function``, ``call_method``, ``call_module``,
    ``output``) to change what each node does.

    Parameters
    ----------
    module : ptcore.nn.Module
        The module the graph's ``get_attr``/``call_module`` targets belong
        to (usually a GraphModule).
    garbage_collect_values : bool, optional
        Drop each value after its last use (default True).
    graph : Graph, optional
        The graph to run (default ``module.graph``).

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> class NegSigmoid(fx.Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ptcore.sigmoid:
    ...             return ptcore.neg(ptcore.sigmoid(*args, **kwargs))
    ...         return super().call_function(target, args, kwargs)
    >>> def fn(x):
    ...     return ptcore.sigmoid(x)
    >>> gm = fx.symbolic_trace(fn)
    >>> NegSigmoid(gm).run(ptcore.zeros(2))
    tensor([-0.5000, -0.5000])
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        if graph is not None:
            self.graph = graph
        else:
            self.graph = self.module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if self.garbage_collect_values:
            node_to_last_use = {}
            self.user_to_last_uses = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on ``args`` and return the output value.

        Parameters
        ----------
        *args
            One value per placeholder, in order.
        initial_env : dict, optional
            Values for nodes (those nodes are not run).
        enable_io_processing : bool, optional
            Accepted for compatibility (inputs and outputs are passed as is).

        Returns
        -------
        object
        """
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and not getattr(e, "_ptcore_fx_noted", False):
                    msg = f"While executing {node.format_node()}"
                    if hasattr(e, "add_note"):
                        e.add_note(msg)
                    try:
                        e._ptcore_fx_noted = True
                    except AttributeError:
                        pass
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """Run with the inputs in a list, which is cleared (so the caller's
        references do not keep the inputs alive)."""
        args_iter = list(args_list)
        args_list.clear()
        return self.run(*args_iter)

    def run_node(self, n):
        """Run one node: fetch its argument values and call the method
        named by ``n.op``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise TypeError("node arguments must be a tuple and a dict")
        return getattr(self, n.op)(n.target, args, kwargs)

    # ------------------------------------------------------------- node ops
    def placeholder(self, target, args, kwargs):
        """The next input value (``*args`` placeholders take the rest)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               f"one was not passed in!") from si

    def get_attr(self, target, args, kwargs):
        """The value of ``module.<target>``."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """``args[0].<target>(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        """Call submodule ``target``."""
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target, args, kwargs):
        """The graph's return value."""
        return args[0]

    # -------------------------------------------------------------- helpers
    def fetch_attr(self, target):
        """Follow the dotted path ``target`` from the module.

        Raises
        ------
        RuntimeError
            If a part of the path does not exist.
        """
        target_atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(target_atoms[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n):
        """The values of ``n``'s arguments, nodes replaced by their values."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n):
        """Replace the nodes in ``args`` with their computed values."""
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   f"Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class Transformer(Interpreter):
    """Build a new GraphModule by running the graph on proxies: override
    the per-op methods to return different values (proxies of new nodes)
    and :meth:`transform` returns the rewritten module.

    Parameters
    ----------
    module : GraphModule
        The module to transform.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> class ReluToSigmoid(fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ptcore.relu:
    ...             target = ptcore.sigmoid
    ...         return super().call_function(target, args, kwargs)
    >>> gm = fx.symbolic_trace(lambda x: ptcore.relu(x))
    >>> ReluToSigmoid(gm).transform()(ptcore.zeros(1))
    tensor([0.5000])
    """

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)

        class TransformerTracer(Tracer):
            def __init__(self, graph):
                super().__init__()
                self.graph = graph
                self.tensor_attrs = {}

            def is_leaf_module(self, _, __):
                return True

        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        """A placeholder of the new graph (same name and default)."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        """A ``get_attr`` node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        """A ``call_module`` node of the new graph."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        """A ``call_function`` node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """Run the transformation.

        Returns
        -------
        GraphModule
            A new module with the new graph (sharing the original's
            submodules and parameters).
        """
        with _ProxyDispatchMode():
            result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a):
                return a.node if isinstance(a, Proxy) else a
            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
