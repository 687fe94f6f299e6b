"""Custom compiler backends: ``ptcore.compile(fn, backend=callable)`` (or a
name given to :func:`ptcore._dynamo.register_backend`) hands each graph of
the captured program to ``backend(gm, example_inputs)``, as torch's dynamo
does, and runs the callable it returns in the graph's place.

``gm`` is a :class:`ptcore.fx.GraphModule` of one segment of the capture (the
ops between two graph breaks): a placeholder per value the segment reads,
a ``get_attr`` per tensor it reads by reference (parameters, buffers,
tensors of globals and closures: attributes of ``gm``), a ``call_function``
per op (``operator.add`` for ``a + b``, ``ptcore.sin``, ``F.linear`` ...) or
``call_method`` for a Tensor method, and one ``output`` returning the tuple of
the values the rest of the program reads.  ``example_inputs`` are the tensors
(and Python values) the placeholders had in the capture run.  The returned
callable is called with the placeholders' values and must return those
outputs (a tuple or list); autograd records the ops it runs, as in eager
mode.

A segment the graph cannot express -- one whose ops ran under different
grad modes, or whose Python results are checked against the capture's
(the values a graph break converts are) -- runs ptcore's own code for it
without calling the backend.
"""
import operator

from ptcore import fx
from ptcore._tensor import _TensorBase
from ptcore.jit._ir import decode
from ptcore.nn.modules.module import Module

__all__ = ["graph_module", "custom_segment_fn"]

# Tensor dunder methods and the ``operator`` functions dynamo's graphs name for them
_OPERATORS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__matmul__": operator.matmul,
    "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift,
    "__neg__": operator.neg, "__pos__": operator.pos, "__invert__": operator.invert,
    "__abs__": operator.abs, "__getitem__": operator.getitem,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
    "__ge__": operator.ge, "__eq__": operator.eq, "__ne__": operator.ne,
}


class _Unrepresentable(Exception):
    pass


def _bind(g, node, spec, env):
    """Bind the values of a node's encoded outputs ``spec`` to fx nodes:
    ``node`` itself, or ``getitem`` nodes into it for a sequence."""
    if spec is None:
        return
    if type(spec) is dict:
        if "v" in spec:
            env[spec["v"]] = node
            return
        items = spec.get("list", spec.get("tuple"))
        if items is not None:
            for i, s in enumerate(items):
                if s is not None and not (type(s) is dict and not s):
                    _bind(g, g.call_function(operator.getitem, (node, i)), s, env)
            return
    raise _Unrepresentable(f"an output encoded as {spec!r}")


def graph_module(nodes, in_ids, out_ids, consts, name="GraphModule"):
    """``(gm, placeholders)``: the fx graph module of the segment ``nodes``
    (see the module docstring); ``consts``: ``vid -> tensor`` read by
    reference.  :class:`_Unrepresentable` for a node it cannot express."""
    root = Module()
    g = fx.Graph()
    env = {}
    for k, vid in enumerate(in_ids):
        env[vid] = g.placeholder(f"arg{k}")
    for k, (vid, obj) in enumerate(consts.items()):
        attr = f"_tensor_constant{k}"
        setattr(root, attr, obj)
        env[vid] = g.get_attr(attr)
    for n in nodes:
        ns, opname = n.op[0], n.op[1]
        if ns == "prim" or n.blocks:
            raise _Unrepresentable(f"the node {ns}::{opname}")
        try:
            args = tuple(decode(a, env) for a in n.args)
            kwargs = {k: decode(v, env) for k, v in n.kwargs.items()}
        except KeyError as err:
            raise _Unrepresentable(f"a value read before it is made ({err})") from None
        if ns == "Tensor" and opname in _OPERATORS:
            out = g.call_function(_OPERATORS[opname], args, kwargs)
        elif ns == "Tensor" and not opname.startswith("__"):
            out = g.call_method(opname, args, kwargs)
        else:
            out = g.call_function(n.fn(), args, kwargs)
        _bind(g, out, n.outputs, env)
    g.output(tuple(env[v] for v in out_ids))
    return fx.GraphModule(root, g, class_name=name)


def custom_segment_fn(backend, nodes, in_ids, out_ids, consts, examples, *, name,
                      grad_modes=None, checked=False):
    """The function running a segment through the user's ``backend``
    (``fn(*values of in_ids) -> tuple of out_ids values``), or None where the
    segment's graph cannot be expressed (see the module docstring)."""
    if checked or (grad_modes and len(set(grad_modes)) > 1):
        return None
    try:
        gm = graph_module(nodes, in_ids, out_ids, consts)
    except _Unrepresentable:
        return None
    compiled = backend(gm, list(examples))
    if not callable(compiled):
        raise TypeError(f"the compiler backend returned {type(compiled).__name__}, "
                        f"not a callable")
    n_out = len(out_ids)

    def run(*values):
        r = compiled(*values)
        if isinstance(r, _TensorBase) or not isinstance(r, (list, tuple)):
            r = (r,)
        if len(r) != n_out:
            raise RuntimeError(f"the compiled graph returned {len(r)} values, "
                               f"its graph module {n_out}")
        return tuple(r)
    run.__name__ = name
    return run
