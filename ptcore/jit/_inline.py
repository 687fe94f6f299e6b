"""Calls of compiled callables from scripted code: a traced or scripted
submodule (``self.cell(x, h)`` where ``self.cell = jit.trace(...)``, the
TorchScript tutorial's ``MyRNNLoop``), a method of one, or a traced function.
As TorchScript does, the callee's graph is inlined into the graph being
compiled: its nodes are copied with fresh values, its inputs replaced by the
caller's arguments and its parameters by the caller's (the same tensors)."""
import copy
import inspect

from ptcore.jit._compile_values import Const, _Seq
from ptcore.jit._errors import ScriptError
from ptcore.jit._ir import Block, Node, decode

__all__ = ["call_compiled", "copy_nodes", "remap"]


def call_compiled(ctx, obj, method, args, kwargs, where):
    """The compiled result of ``obj.method(*args, **kwargs)`` (``obj`` a
    ScriptModule) or ``obj(*args, **kwargs)`` (a ScriptFunction, ``method``
    None), compiled into ``ctx``'s graph."""
    c = ctx.c
    d = obj.__dict__ if method is not None else {}
    src = d.get("_script_src")
    if src is not None:
        # a scripted module: its Python source, compiled in place (the source
        # module shares the ScriptModule's parameters)
        fn = getattr(type(src), method, None)
        if fn is None:
            raise ScriptError(f"{where}: {type(src).__name__} has no method {method!r}")
        return c.compile_function(fn, src, args, kwargs, where)
    ts = d.get("_ts_methods")
    if ts and method in ts:             # read from a TorchScript archive
        return c.compile_function(ts[method], obj, args, kwargs, where)
    if method is None:
        g = obj.graph
        owner = None
    else:
        g = obj._sync().get(method)
        owner = obj
        if g is None:
            raise ScriptError(f"{where}: {obj.original_name} has no compiled {method} method")
    if g.__dict__.get("buffer_writes"):
        raise ScriptError(f"{where}: calling a loaded method that assigns buffers from "
                          "scripted code is not supported")
    args = _bind(g, args, kwargs, where)
    return inline(c, g, owner, args)


def _bind(g, args, kwargs, where):
    sig = getattr(g, "signature", None)
    args = list(args)
    if kwargs or (sig is not None and len(args) < len(sig)):
        if sig is None:
            raise ScriptError(f"{where}: a traced method takes its inputs positionally")
        for name, default in sig[len(args):]:
            if name in kwargs:
                args.append(kwargs.pop(name))
            elif default is not inspect.Parameter.empty:
                args.append(Const(default))
            else:
                raise ScriptError(f"{where}: missing argument {name!r}")
        if kwargs:
            raise ScriptError(f"{where}: unexpected keyword argument {next(iter(kwargs))!r}")
    if len(args) != len(g.inputs):
        raise ScriptError(f"{where}: the compiled graph takes {len(g.inputs)} input(s) "
                          f"({len(args)} given)")
    return args


def inline(c, g, owner, args):
    """Copy graph ``g``'s nodes into compiler ``c``'s current block; return
    its result as a compiled value."""
    env = {vid: c.enc(a) for vid, a in zip(g.inputs, args)}
    params = None
    for v in g.values.values():
        if v.kind == "const":
            env[v.id] = c.tensor_ref(v.const)
        elif v.kind == "object":
            env[v.id] = c.object_ref(v.const)
        elif v.kind == "param":
            if params is None:
                params = dict(owner.named_parameters(remove_duplicate=False))
                params.update(owner.named_buffers(remove_duplicate=False))
            env[v.id] = c.tensor_ref(params[v.name])
    c.nodes.extend(copy_nodes(g.nodes, env, c.new))
    return _value(c, remap(g.outputs, env))


def _fresh(new, enc, env):
    """New values (``new()``) for the value ids that ``enc`` defines."""
    if type(enc) is dict:
        if "v" in enc:
            env[enc["v"]] = new()
            return
        for k in ("list", "tuple"):
            for a in enc.get(k, ()):
                _fresh(new, a, env)


def copy_nodes(nodes, env, new):
    """Copies of ``nodes`` reading ``env`` (value id -> encoded value) for
    their inputs; the values they define are made by ``new()`` (added to
    ``env``)."""
    out = []
    for n in nodes:
        args = [remap(a, env) for a in n.args]
        kwargs = {k: remap(a, env) for k, a in n.kwargs.items()}
        blocks = []
        for b in n.blocks:
            for p in b.params:
                env[p] = new()
            body = copy_nodes(b.nodes, env, new)
            blocks.append(Block([env[p]["v"] for p in b.params], body,
                                [remap(r, env) for r in b.returns]))
        _fresh(new, n.outputs, env)
        m = Node(n.op, args, kwargs, remap(n.outputs, env), blocks)
        m._fn = n._fn
        out.append(m)
    return out


def remap(x, env):
    """Encoded ``x`` with its value references replaced from ``env``."""
    if type(x) is dict:
        if "v" in x:
            return env[x["v"]]
        if "list" in x or "tuple" in x or "dict" in x or "slice" in x:
            y = copy.copy(x)
            for k in ("list", "tuple", "slice"):
                if k in x:
                    y[k] = [remap(a, env) for a in x[k]]
            if "dict" in x:
                y["dict"] = [[k, remap(a, env)] for k, a in x["dict"]]
            return y
        return x
    if type(x) in (list, tuple):
        return type(x)(remap(a, env) for a in x)
    return x


def _value(c, enc):
    """The compiled value of encoded ``enc``: a value reference, a tuple of
    compile-time length, a list or dict built when the graph runs, or a
    constant."""
    if type(enc) is dict:
        if "v" in enc:
            return enc
        if "tuple" in enc:
            items = [_value(c, a) for a in enc["tuple"]]
            if all(isinstance(a, Const) for a in items):
                return Const(tuple(a.value for a in items))
            return _Seq(items)
        if "list" in enc:
            items = [_value(c, a) for a in enc["list"]]
            if not all(isinstance(a, Const) for a in items):
                return c.emit(("prim", "list"), items)
        if "dict" in enc:
            items = [x for k, a in enc["dict"] for x in (Const(k), _value(c, a))]
            if not all(isinstance(a, Const) for a in items):
                return c.emit(("prim", "dict"), items)
    return Const(decode(enc, {}))
