"""``ptcore.export.save`` / ``load``: an exported program as a zip archive of
``program.json`` (the graph, its signature, the input and output structure,
the dynamic dimensions) and ``tensors.pt`` (the state, the constants and the
example inputs, written by ``ptcore.save``).

Loading executes nothing from the file: the JSON is read into a fixed set of
value kinds, op targets are looked up among aten's overloads and ptcore's ops
by name, the tensors are read with ``ptcore.load(weights_only=True)``, and
anything else raises :class:`SerializationError` (a ``RuntimeError``)."""
import io
import json
import keyword
import math
import operator
import os
import zipfile

from ptcore._tensor import _TensorBase
from ptcore._dispatch import op_overload as _ov
from ptcore.fx.graph import Graph
from ptcore.utils import _pytree
import ptcore.export.graph_signature as gs
from ptcore.export._trace import PtcoreOp, TensorMeta
from ptcore.export.dynamic_shapes import DimSpec
from ptcore.export.exported_program import ExportedProgram, from_trace

__all__ = ["save", "load", "SerializationError"]

_FORMAT = "ptcore.export"
_VERSION = 1
_PROGRAM = "ptcore_export/program.json"
_TENSORS = "ptcore_export/tensors.pt"
_MAX_JSON = 1 << 28

_OPERATORS = {f"operator.{n}": getattr(operator, n) for n in
              ("getitem", "setitem", "add", "sub", "mul", "floordiv", "mod", "neg")}
_SPEC_TYPES = {"tuple": tuple, "list": list, "dict": dict, "None": type(None)}


class SerializationError(RuntimeError):
    """The file is not a program ``ptcore.export.save`` wrote, or is damaged."""


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------

def _enc(x):
    import ptcore
    if hasattr(x, "op") and hasattr(x, "users"):
        return {"node": x.name}
    if x is None or isinstance(x, (bool, str)) or type(x) is int:
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return {"float": repr(float(x))}
    if isinstance(x, complex):
        return {"complex": [repr(x.real), repr(x.imag)]}
    if isinstance(x, list):
        return {"list": [_enc(a) for a in x]}
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return {"tuple": [_enc(a) for a in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {"dict": [[k, _enc(v)] for k, v in x.items()]}
    if isinstance(x, slice):
        return {"slice": [_enc(x.start), _enc(x.stop), _enc(x.step)]}
    if x is Ellipsis:
        return {"ellipsis": 0}
    if isinstance(x, ptcore.dtype):
        return {"dtype": str(x).split(".")[-1]}
    if isinstance(x, ptcore.device):
        return {"device": str(x)}
    if isinstance(x, ptcore.layout):
        return {"layout": str(x).split(".")[-1]}
    if isinstance(x, ptcore.memory_format):
        return {"memory_format": str(x).split(".")[-1]}
    raise ValueError(f"ptcore.export.save: cannot write the graph argument {x!r} "
                     f"({type(x).__name__})")


def _ident(s):
    return isinstance(s, str) and s.isidentifier() and not keyword.iskeyword(s) and s != "self"


def _fail(msg):
    raise SerializationError(f"ptcore.export.load: {msg}")


def _dec(x, nodes):
    import ptcore
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if not isinstance(x, dict) or len(x) != 1:
        _fail(f"malformed value {x!r:.80}")
    (kind, v), = x.items()
    if kind == "node":
        if not isinstance(v, str) or v not in nodes:
            _fail(f"a reference to an unknown node {v!r:.80}")
        return nodes[v]
    if kind == "float" and isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            _fail(f"malformed float {v!r:.80}")
    if kind == "complex" and isinstance(v, list) and len(v) == 2:
        return complex(_dec({"float": v[0]}, nodes), _dec({"float": v[1]}, nodes))
    if kind in ("list", "tuple") and isinstance(v, list):
        items = [_dec(a, nodes) for a in v]
        return items if kind == "list" else tuple(items)
    if kind == "dict" and isinstance(v, list):
        out = {}
        for item in v:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                _fail("malformed dict entry")
            out[item[0]] = _dec(item[1], nodes)
        return out
    if kind == "slice" and isinstance(v, list) and len(v) == 3:
        return slice(*(_dec(a, nodes) for a in v))
    if kind == "ellipsis":
        return Ellipsis
    if kind in ("dtype", "layout", "memory_format") and isinstance(v, str):
        obj = getattr(ptcore, v, None) if v.isidentifier() else None
        want = {"dtype": ptcore.dtype, "layout": ptcore.layout,
                "memory_format": ptcore.memory_format}[kind]
        if not isinstance(obj, want):
            _fail(f"unknown {kind} {v!r:.80}")
        return obj
    if kind == "device" and isinstance(v, str):
        try:
            return ptcore.device(v)
        except (RuntimeError, ValueError, TypeError):
            _fail(f"unknown device {v!r:.80}")
    _fail(f"unknown value kind {kind!r:.80}")


def _target_name(t):
    if isinstance(t, PtcoreOp):
        return "ptcore:" + str(t)
    for name, fn in _OPERATORS.items():
        if fn is t:
            return name
    if hasattr(t, "overloadpacket") and hasattr(t, "_schema"):
        return "ops:" + str(t)
    raise ValueError(f"ptcore.export.save: cannot write the graph target {t!r}")


def _target(name):
    import ptcore
    if not isinstance(name, str):
        _fail(f"malformed op target {name!r:.80}")
    if name in _OPERATORS:
        return _OPERATORS[name]
    if name.startswith("ptcore:"):
        try:
            return PtcoreOp.lookup(name[7:])
        except ValueError:
            _fail(f"unknown op {name!r:.80}")
    if name.startswith("ops:"):
        parts = name[4:].split(".")
        if len(parts) == 3 and all(p.isidentifier() for p in parts):
            ns, op, ov = parts
            packet = _ov.packet(ns, op)
            if packet is not None:
                target = getattr(packet, ov, None)
                if isinstance(target, _ov.OpOverload):
                    return target
            _ = ptcore
    _fail(f"unknown op {name!r:.80}")


# ---------------------------------------------------------------------------
# tree specs
# ---------------------------------------------------------------------------

def _enc_spec(spec):
    if spec.is_leaf():
        return {"leaf": 0}
    name = {v: k for k, v in _SPEC_TYPES.items()}.get(spec.type)
    if name is None:
        raise ValueError(f"ptcore.export.save: cannot write an input or output structure of "
                         f"type {spec.type.__name__}")
    ctx = spec.context
    if name == "dict":
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in ctx):
            raise ValueError("ptcore.export.save: dict keys of the inputs or outputs must be "
                             "str or int")
        ctx = list(ctx)
    else:
        ctx = None
    return {"type": name, "context": ctx,
            "children": [_enc_spec(c) for c in spec.children_specs]}


def _dec_spec(d, depth=0):
    if depth > 100:
        _fail("input or output structure nested too deeply")
    if not isinstance(d, dict):
        _fail("malformed tree spec")
    if "leaf" in d:
        return _pytree.LeafSpec()
    typ = _SPEC_TYPES.get(d.get("type"))
    children = d.get("children")
    if typ is None or not isinstance(children, list):
        _fail("malformed tree spec")
    ctx = d.get("context")
    if typ is dict:
        if not (isinstance(ctx, list) and len(ctx) == len(children) and
                all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in ctx)):
            _fail("malformed tree spec")
    else:
        ctx = None
    return _pytree.TreeSpec(typ, ctx, [_dec_spec(c, depth + 1) for c in children])


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

def _enc_dim(d):
    if isinstance(d, DimSpec):
        return {"dim": d.name, "lo": d.lo, "hi": None if d.hi == math.inf else d.hi,
                "size": d.size}
    return d


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """Write an :class:`~ptcore.export.ExportedProgram` to ``f`` (a path or a
    binary file object) as a zip archive; :func:`load` reads it back.

    Raises
    ------
    TypeError
        ``ep`` is not an ExportedProgram.
    ValueError
        The program holds something the format cannot write.
    """
    import ptcore
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    nodes = []
    for n in ep.graph.nodes:
        entry = {"name": n.name, "op": n.op}
        if n.op == "call_function":
            entry["target"] = _target_name(n.target)
        if n.op in ("call_function", "output"):
            entry["args"] = _enc(tuple(n.args))
            entry["kwargs"] = _enc(dict(n.kwargs))
        elif n.op != "placeholder":
            raise ValueError(f"ptcore.export.save: unexpected node {n.op}")
        tm = n.meta.get("tensor_meta")
        if tm is not None:
            entry["meta"] = {"shape": list(tm.shape), "dtype": str(tm.dtype).split(".")[-1]}
        nodes.append(entry)
    sig = ep.graph_signature

    def arg(a):
        if isinstance(a, gs.ConstantArgument):
            return {"constant": [a.name, _enc(a.value)]}
        return {"symint" if isinstance(a, gs.SymIntArgument) else "tensor": a.name}
    info = ep._info
    (args, kwargs) = ep.example_inputs
    ex_flat, _ = _pytree.tree_flatten((tuple(args), dict(kwargs)))
    program = {
        "format": _FORMAT, "version": _VERSION,
        "nodes": nodes,
        "input_specs": [{"kind": s.kind.name, "arg": arg(s.arg), "target": s.target,
                         "persistent": s.persistent} for s in sig.input_specs],
        "output_specs": [{"kind": s.kind.name, "arg": arg(s.arg), "target": s.target}
                         for s in sig.output_specs],
        "in_spec": _enc_spec(info.in_spec), "out_spec": _enc_spec(info.out_spec),
        "input_shapes": [[name, None if dt is None else str(dt).split(".")[-1],
                          _enc(shape) if dt is None else [_enc_dim(d) for d in shape]]
                         for name, dt, shape in info.input_shapes],
        "arg_names": list(info.arg_names), "kw_names": list(info.kw_names),
        "submodules": [e.fqn for e in ep.module_call_graph[1:]],
        "example": [None if isinstance(v, _TensorBase) else _enc(v) for v in ex_flat],
    }
    tensors = {"state": dict(ep.state_dict), "constants": dict(ep.constants),
               "example": [v for v in ex_flat if isinstance(v, _TensorBase)]}
    buf = io.BytesIO()
    ptcore.save(tensors, buf)
    text = json.dumps(program)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, text, buf.getvalue())
    else:
        _write(f, text, buf.getvalue())


def _write(fh, text, tensors):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("ptcore_export/version", str(_VERSION))
        z.writestr(_PROGRAM, text)
        z.writestr(_TENSORS, tensors)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------

def load(f, *, extra_files=None, expected_opset_version=None):
    """Read a program written by :func:`save` (a path or a binary file object).

    Nothing in the file is executed.

    Returns
    -------
    ExportedProgram

    Raises
    ------
    SerializationError
        (a RuntimeError) The file is not such a program, or is damaged.
    """
    try:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                data = fh.read()
        else:
            data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"ptcore.export.load: the file object gave {type(data).__name__}, "
                            "not bytes")
        return _load(bytes(data))
    except (SerializationError, TypeError, OSError):
        raise
    except Exception as e:      # a damaged archive in a way not checked above
        raise SerializationError(f"ptcore.export.load: the file is damaged or not a program "
                                 f"written by ptcore.export.save ({type(e).__name__}: {e})") \
            from e


def _load(data):
    import ptcore
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = set(z.namelist())
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        _fail(f"not a zip archive written by ptcore.export.save ({e})")
    if _PROGRAM not in names or _TENSORS not in names:
        _fail("the archive has no ptcore_export/program.json and tensors.pt; it was not "
              "written by ptcore.export.save")
    if z.getinfo(_PROGRAM).file_size > _MAX_JSON:
        _fail("program.json is too large")
    try:
        program = json.loads(z.read(_PROGRAM).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        _fail(f"program.json is not valid JSON ({e})")
    if not isinstance(program, dict) or program.get("format") != _FORMAT:
        _fail("program.json is not a ptcore.export program")
    if program.get("version") != _VERSION:
        _fail(f"unsupported format version {program.get('version')!r:.40}")
    try:
        tensors = ptcore.load(io.BytesIO(z.read(_TENSORS)), weights_only=True)
    except Exception as e:
        _fail(f"tensors.pt cannot be read ({type(e).__name__}: {e})")
    if not (isinstance(tensors, dict) and
            all(isinstance(tensors.get(k), dict) for k in ("state", "constants")) and
            isinstance(tensors.get("example"), list) and
            all(isinstance(t, _TensorBase) for k in ("state", "constants")
                for t in tensors[k].values()) and
            all(isinstance(t, _TensorBase) for t in tensors["example"])):
        _fail("tensors.pt does not hold the state, constants and example inputs")
    return from_trace(_parts(program, tensors))


def _get(d, key, typ):
    v = d.get(key) if isinstance(d, dict) else None
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        _fail(f"malformed or missing {key!r}")
    return v


def _dtype(name):
    import ptcore
    obj = getattr(ptcore, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(obj, ptcore.dtype):
        _fail(f"unknown dtype {name!r:.40}")
    return obj


def _parts(program, tensors):
    graph = Graph()
    nodes = {}
    seen_output = False
    for entry in _get(program, "nodes", list):
        name = _get(entry, "name", str)
        op = _get(entry, "op", str)
        if not _ident(name) or name in nodes or seen_output:
            _fail(f"malformed node {name!r:.40}")
        if op == "placeholder":
            node = graph.placeholder(name)
        elif op == "call_function":
            target = _target(entry.get("target"))
            args = _dec(entry.get("args"), nodes)
            kwargs = _dec(entry.get("kwargs"), nodes)
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                _fail(f"malformed arguments of node {name}")
            node = graph.create_node("call_function", target, args, kwargs, name=name)
        elif op == "output":
            args = _dec(entry.get("args"), nodes)
            if not (isinstance(args, tuple) and len(args) == 1):
                _fail("malformed output node")
            node = graph.output(args[0])
            seen_output = True
        else:
            _fail(f"unknown node kind {op!r:.40}")
        if node.name != name:
            _fail(f"duplicate node name {name!r:.40}")
        meta = entry.get("meta")
        if meta is not None:
            shape = _get(meta, "shape", list)
            if not all(type(s) is int for s in shape):
                _fail(f"malformed shape of node {name}")
            node.meta["tensor_meta"] = TensorMeta(shape, _dtype(meta.get("dtype")))
        nodes[name] = node
    if not seen_output:
        _fail("the graph has no output")

    def arg(a, tensor_names):
        if isinstance(a, dict) and len(a) == 1:
            (k, v), = a.items()
            if k in ("tensor", "symint") and isinstance(v, str) and v in tensor_names:
                return (gs.TensorArgument if k == "tensor" else gs.SymIntArgument)(v)
            if k == "constant" and isinstance(v, list) and len(v) == 2 and isinstance(v[0], str):
                return gs.ConstantArgument(v[0], _dec(v[1], {}))
        _fail("malformed signature argument")

    state, constants = tensors["state"], tensors["constants"]
    input_specs = []
    placeholders = {n for n, node in nodes.items() if node.op == "placeholder"}
    for s in _get(program, "input_specs", list):
        kind = gs.InputKind.__members__.get(_get(s, "kind", str))
        if kind is None:
            _fail("unknown input kind")
        target = s.get("target")
        persistent = s.get("persistent")
        if kind is gs.InputKind.USER_INPUT:
            target = None
        else:
            if not isinstance(target, str):
                _fail("malformed input target")
            store = state if kind is gs.InputKind.PARAMETER or \
                kind is gs.InputKind.BUFFER and persistent else constants
            if target not in store or not all(_ident(p) for p in target.split(".")):
                _fail(f"the tensor {target!r:.60} is missing from tensors.pt")
        if kind is gs.InputKind.BUFFER and not isinstance(persistent, bool):
            _fail("malformed buffer persistence")
        input_specs.append(gs.InputSpec(kind, arg(s.get("arg"), placeholders), target,
                                        persistent if kind is gs.InputKind.BUFFER else None))
    output_specs = []
    for s in _get(program, "output_specs", list):
        kind = gs.OutputKind.__members__.get(_get(s, "kind", str))
        if kind is None:
            _fail("unknown output kind")
        output_specs.append(gs.OutputSpec(kind, arg(s.get("arg"), set(nodes)), None))
    in_spec = _dec_spec(program.get("in_spec"))
    out_spec = _dec_spec(program.get("out_spec"))
    dims, shapes = [], []
    for item in _get(program, "input_shapes", list):
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)):
            _fail("malformed input shapes")
        name, dt, shape = item
        if dt is None:
            shapes.append((name, None, _dec(shape, {})))
            continue
        if not isinstance(shape, list):
            _fail("malformed input shapes")
        leaf, row = {}, []
        for i, d in enumerate(shape):
            if type(d) is int:
                row.append(d)
            elif isinstance(d, dict) and isinstance(d.get("dim"), str) and \
                    type(d.get("lo")) is int and type(d.get("size")) is int and \
                    (d.get("hi") is None or type(d.get("hi")) is int):
                spec = DimSpec(d["dim"], d["lo"], math.inf if d["hi"] is None else d["hi"],
                               None, d["size"])
                leaf[i] = spec
                row.append(spec)
            else:
                _fail("malformed input shapes")
        dims.append(leaf)
        shapes.append((name, _dtype(dt), row))
    example = list(tensors["example"])
    ex_flat = []
    for v in _get(program, "example", list):
        if v is None and example:
            ex_flat.append(example.pop(0))
        else:
            ex_flat.append(_dec(v, {}))
    try:
        ex_args, ex_kwargs = _pytree.tree_unflatten(ex_flat, in_spec)
    except Exception:
        _fail("the example inputs do not match the input structure")
    if len(_pytree.tree_flatten((ex_args, ex_kwargs))[0]) != len(shapes):
        _fail("the input shapes do not match the input structure")
    arg_names = _get(program, "arg_names", list)
    kw_names = _get(program, "kw_names", list)
    if not all(_ident(n) for n in arg_names + kw_names):
        _fail("malformed argument names")
    submodules = _get(program, "submodules", list)
    if not all(isinstance(n, str) for n in submodules):
        _fail("malformed module names")
    try:
        graph.lint()
    except Exception as e:
        _fail(f"the graph is malformed ({e})")
    return dict(graph=graph, signature=gs.ExportGraphSignature(input_specs, output_specs),
                state_dict=dict(state), constants=dict(constants), in_spec=in_spec,
                out_spec=out_spec, input_shapes=shapes, dims=dims,
                example_inputs=(tuple(ex_args), dict(ex_kwargs)),
                forward_arg_names=arg_names + kw_names, submodules=submodules)
