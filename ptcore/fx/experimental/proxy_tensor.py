"""``torch.fx.experimental.proxy_tensor``: :func:`make_fx`, tracing a function into a
:class:`~ptcore.fx.GraphModule` of aten ops by running it under a dispatch mode.

:class:`ProxyTorchDispatchMode` is a ``TorchDispatchMode`` that sees every op's kernel
call (below autograd, so the ops of a backward that ``f`` runs, ``autograd.grad``,
are seen too), runs it, and records it as a ``call_function`` node whose target is
the ``OpOverload`` (``ptcore.ops.aten.add.Tensor``) and whose tensor arguments are the
nodes that made them.  With ``tracing_mode="fake"`` the function runs on fake tensors
(:class:`~ptcore._subclasses.fake_tensor.FakeTensorMode`), so no data is computed.

ptcore's dispatch modes see the op the program called (``aten.linear``,
``aten.matmul``, ``aten.reshape``), as torch's ``make_fx(pre_dispatch=True)`` shows
them; without ``pre_dispatch`` those of
:data:`~ptcore.fx.experimental._composite_implicit.COMPOSITE_IMPLICIT` are traced as the
ops torch decomposes them into (``aten.t`` + ``aten.addmm``, ``aten.mm``,
``aten.view``).  A ``decomposition_table`` entry for an op traces the ops it runs.
``tracing_mode="symbolic"`` (symbolic shapes) is not available.
"""
import inspect

import ptcore
from ptcore._subclasses.fake_tensor import FakeTensorMode
from ptcore._tensor import _TensorBase
from ptcore.fx.experimental._composite_implicit import COMPOSITE_IMPLICIT
from ptcore.fx.graph import Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.nn import Module, Parameter
from ptcore.utils import _pytree as pytree
from ptcore.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

__all__ = ["make_fx", "get_proxy_mode", "ProxyTorchDispatchMode"]


class ProxyTorchDispatchMode(TorchDispatchMode):
    """Records each op it sees into ``graph`` (see the module docstring)."""

    def __init__(self, graph, root, decomposition_table=None, pre_dispatch=False):
        super().__init__()
        # the ops torch decomposes before its Python dispatch key (CompositeImplicitAutograd)
        # are traced as those decompositions, unless tracing before dispatch as torch's
        # pre_dispatch does
        self.composites = not pre_dispatch
        self.graph = graph
        self.root = root
        self.decomposition_table = decomposition_table or {}
        self._node_of = {}      # id(tensor) -> node
        self._alive = []        # the tensors of _node_of (their ids stay theirs)
        self._constants = {"_param_constant": 0, "_tensor_constant": 0}

    def track(self, t, node):
        self._node_of[id(t)] = node
        self._alive.append(t)

    def _arg(self, a):
        if isinstance(a, _TensorBase):
            node = self._node_of.get(id(a))
            if node is None:
                # a tensor from outside the traced function (a closure's, a module's)
                kind = "_param_constant" if isinstance(a, Parameter) else "_tensor_constant"
                name = f"{kind}{self._constants[kind]}"
                self._constants[kind] += 1
                setattr(self.root, name, a)
                node = self.graph.get_attr(name)
                self.track(a, node)
            return node
        if type(a) in (list, tuple):
            return type(a)(self._arg(e) for e in a)
        if isinstance(a, ptcore.Size):
            return list(a)
        return a

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomp = self.decomposition_table.get(func)
        if decomp is not None:
            with self:
                r = decomp(*args, **kwargs)
            if r is not NotImplemented:
                return r
        if self.composites:
            decomp = COMPOSITE_IMPLICIT.get(func)
            if decomp is not None:
                r = decomp(self.emit, *args, **kwargs)
                if r is not NotImplemented:
                    return r
        return self.emit(func, args, kwargs, lambda: func(*args, **kwargs))

    def _ptc_decomposes_above_autograd(self, func):
        """Whether this mode runs ``func`` as a decomposition whose ops record their
        own autograd (ptcore's autograd then records nothing around the handler)."""
        return self.composites and func in COMPOSITE_IMPLICIT and \
            func not in self.decomposition_table

    def emit(self, target, args, kwargs, compute):
        """``compute()`` (the modes below this one see its ops), recorded as a node
        calling ``target`` on ``args`` and ``kwargs``."""
        out = compute()
        node = self.graph.create_node("call_function", target, self._arg(tuple(args)),
                                      {k: self._arg(v) for k, v in kwargs.items()},
                                      name=target.overloadpacket.__name__)
        if isinstance(out, _TensorBase):
            self.track(out, node)
        elif isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if isinstance(o, _TensorBase):
                    self.track(o, self.graph.create_node("call_function", _getitem, (node, i),
                                                         name="getitem"))
        return out


def _getitem(seq, i):
    return seq[i]


_getitem.__module__ = "operator"
_getitem.__name__ = _getitem.__qualname__ = "getitem"


def get_proxy_mode():
    """The innermost active :class:`ProxyTorchDispatchMode` (a ``make_fx`` trace), or
    ``None``.

    >>> from ptcore.fx.experimental.proxy_tensor import get_proxy_mode
    >>> get_proxy_mode() is None
    True
    """
    for m in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(m, ProxyTorchDispatchMode):
            return m
    return None


def _placeholder_names(f, args, n):
    """torch's names of the placeholders: ``<parameter>_1`` when each argument is one
    value and ``f`` names its parameters, else ``arg<i>_1``."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if n == len(args) and len(named) >= n:
        return [f"{name}_1" for name in named[:n]]
    return [f"arg{i}_1" for i in range(n)]


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False,
            *, pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True, **kwargs):
    """Trace ``f`` into a :class:`~ptcore.fx.GraphModule` of aten ops.

    ``make_fx(f)(*args)`` runs ``f(*args)`` under a proxy dispatch mode and returns a
    GraphModule whose graph has a placeholder per tensor (or value) among ``args``
    (flattened), a ``call_function`` node per op (``ptcore.ops.aten.*`` targets), and
    an output with ``f``'s result's structure.

    Parameters
    ----------
    f : callable
    decomposition_table : dict, optional
        ``{OpOverload: fn}``: an op in it is traced as the ops ``fn`` runs.
    tracing_mode : {"real", "fake"}
        ``"fake"``: ``f`` runs on fake tensors (shapes, dtypes and devices only).
    pre_dispatch : bool
        Trace the ops as called (``aten.linear``, ``aten.reshape``), not decomposed.

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.fx.experimental.proxy_tensor import make_fx
    >>> gm = make_fx(lambda x: x.sin() + 1)(ptcore.zeros(2))
    >>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    ['aten.sin.default', 'aten.add.Tensor']
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    if tracing_mode == "symbolic":
        raise NotImplementedError("make_fx: ptcore has no symbolic shapes; use "
                                  "tracing_mode='real' or 'fake'")

    def wrapped(*args):
        flat, spec = pytree.tree_flatten(args)
        graph = Graph()
        root = Module()
        mode = ProxyTorchDispatchMode(graph, root, decomposition_table, pre_dispatch)
        fake = FakeTensorMode(allow_non_fake_inputs=True) if tracing_mode == "fake" else None
        inputs = []
        names = _placeholder_names(f, args, len(flat))
        for a, name in zip(flat, names):
            if isinstance(a, _TensorBase) and fake is not None:
                a = fake.from_tensor(a)
            node = graph.placeholder(name)
            if isinstance(a, _TensorBase):
                mode.track(a, node)
            inputs.append(a)
        call_args = pytree.tree_unflatten(inputs, spec)
        if fake is not None:
            with fake, mode:
                out = f(*call_args)
        else:
            with mode:
                out = f(*call_args)
        graph.output(pytree.tree_map(
            lambda o: mode._arg(o) if isinstance(o, _TensorBase) else o, out))
        return GraphModule(root, graph)
    return wrapped
