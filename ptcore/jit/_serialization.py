"""``ptcore.jit.save`` / ``load``: one zip file holding the graphs (JSON:
op names from the operator table and encoded arguments — no code, no pickle)
and the tensors (raw little-endian bytes with dtype and shape).  Loading
needs neither the model's class nor pickle, runs nothing from the file, and
checks every record (ops must be in the table, sizes must match)."""
import collections
import io
import json
import os
import zipfile

import numpy as np

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.jit._ir import Graph, JitError, _dtype_by_name, decode, encode_const
from ptcore.jit._script_class import ScriptObject
from ptcore.jit._torchscript import is_torchscript_archive, load_torchscript
from ptcore.jit._errors import ScriptError
from ptcore.jit._script_module import (ScriptModule, ScriptFunction, python_calls,
                                       script_module_named)
from ptcore.nn import Parameter
from ptcore.serialization import _Archive

__all__ = ["save", "load"]

_FORMAT = "ptcore.jit/1"
_MAX_JSON = 1 << 30


def _tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    n = t.numel() * t.element_size()
    if n == 0:
        return b""
    return t.reshape(-1).view(ptcore.uint8).numpy().tobytes()


def _tensor_from(raw, dtype_name, shape, device):
    dt = _dtype_by_name(dtype_name)
    numel = 1
    for s in shape:
        if not isinstance(s, int) or s < 0:
            raise JitError(f"bad tensor shape {shape!r}")
        numel *= s
    itemsize = ptcore.empty(0, dtype=dt).element_size()
    if len(raw) != numel * itemsize:
        raise JitError(f"tensor data has {len(raw)} bytes; a {dtype_name} tensor of shape "
                       f"{list(shape)} needs {numel * itemsize}")
    if numel == 0:
        t = ptcore.empty(shape, dtype=dt)
    else:
        u8 = ptcore.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())
        t = u8.view(dt).reshape(shape)
    return t.to(device) if device is not None else t


def _module_tree(m, tensors=None, prefix=""):
    return {"name": getattr(m, "_original_name", type(m).__name__), "training": m.training,
            "params": [n for n, p in m._parameters.items() if p is not None],
            "buffers": [n for n, b in m._buffers.items() if b is not None],
            "nonpersistent": sorted(getattr(m, "_non_persistent_buffers_set", ())),
            "requires_grad": {n: bool(p.requires_grad) for n, p in m._parameters.items()
                              if p is not None},
            "attrs": {n: _enc_data(m.__dict__[n], tensors, prefix + n)
                      for n in m.__dict__.get("_script_attrs", ())},
            "finals": sorted(m.__dict__.get("_script_finals", ())),
            "children": {n: _module_tree(c, tensors, prefix + n + ".")
                         for n, c in m._modules.items() if c is not None}}


def _enc_data(v, tensors, key):
    """A scripted module's data attribute, or a script object of a graph, as
    JSON (tuples, dicts, dtypes, devices, script objects and tensors tagged; a
    tensor's data goes to ``tensors`` under ``"a:" + key``)."""
    if isinstance(v, _TensorBase):
        tensors["a:" + key] = v
        return {"tensor": key}
    if type(v) is tuple:
        return {"tuple": [_enc_data(x, tensors, f"{key}.{i}") for i, x in enumerate(v)]}
    if type(v) is list:
        return [_enc_data(x, tensors, f"{key}.{i}") for i, x in enumerate(v)]
    if type(v) is dict:
        return {"dict": [[k, _enc_data(x, tensors, f"{key}.{k}")] for k, x in v.items()]}
    if type(v) is ScriptObject:
        return {"object": [v._qualname, [[n, _enc_data(x, tensors, f"{key}.{n}")]
                                         for n, x in v._fields.items()]]}
    if isinstance(v, (ptcore.dtype, ptcore.device)):
        return encode_const(v)
    return v


_DICT_KEYS = (str, int, float, bool)


def _dec_data(v, tensors):
    if type(v) is list:
        return [_dec_data(x, tensors) for x in v]
    if type(v) is dict:
        if "tensor" in v:
            return _need(tensors, "a:" + str(v["tensor"]))
        if "tuple" in v and type(v["tuple"]) is list:
            return tuple(_dec_data(x, tensors) for x in v["tuple"])
        if "dict" in v and type(v["dict"]) is list:
            items = v["dict"]
            # (str keys, and TorchScript's int/float/bool keys: Dict[int, T])
            if not all(type(kx) is list and len(kx) == 2 and type(kx[0]) in _DICT_KEYS
                       for kx in items):
                raise JitError("ptcore.jit.load: corrupt module attribute record")
            return {k: _dec_data(x, tensors) for k, x in items}
        rec = v.get("object")
        if type(rec) is list and len(rec) == 2 and type(rec[0]) is str and \
                type(rec[1]) is list and all(type(f) is list and len(f) == 2 and
                                             type(f[0]) is str for f in rec[1]):
            # a script object: its class's name and fields (no code)
            return ScriptObject(rec[0], {n: _dec_data(x, tensors) for n, x in rec[1]})
        if len(v) == 1 and next(iter(v)) in ("dtype", "device"):
            return decode(v, {})
        raise JitError("ptcore.jit.load: corrupt module attribute record")
    if v is None or type(v) in (bool, int, float, str):
        return v
    raise JitError("ptcore.jit.load: corrupt module attribute record")


def _submodule_graphs(m):
    """``{"path/method": graph}`` of ``m``'s compiled submodules, so that a
    loaded module's submodules can be called (``loaded.encoder(x)``): a
    scripted one's graphs for its current mode, a traced one's once traced;
    a scripted submodule that does not compile by itself is left out."""
    out = {}
    for path, child in m.named_modules(remove_duplicate=False):
        if not path or not isinstance(child, ScriptModule):
            continue
        try:
            graphs = child.__dict__.get("_child_graphs") or child._sync()
        except ScriptError:
            continue
        for method, g in graphs.items():
            out[f"{path}/{method}"] = g
    return out


def save(m, f, _extra_files=None):
    """Save a traced module or function to ``f`` (a path or a binary file)."""
    modes = []
    if isinstance(m, ScriptModule):
        graphs, kind = dict(m._sync()), "module"
        if m.__dict__.get("_script_src") is not None:
            # a scripted module's graphs depend on the train/eval mode: keep
            # those of the current mode and of all-train and all-eval
            cur = m._mode_key()
            for i, flags in enumerate(dict.fromkeys([cur, (True,) * len(cur),
                                                      (False,) * len(cur)])):
                key = (m._script_state["epoch"],) + flags
                g = m._script_cache.get(key)
                if g is None:
                    g = m._script_cache[key] = m._compile_for(flags)
                modes.append([list(flags), i])
                for method, mg in g.items():
                    graphs[f"{method}@{i}"] = mg
        graphs.update(_submodule_graphs(m))
        tensors = dict(m.named_parameters(remove_duplicate=False))
        tensors.update(m.named_buffers(remove_duplicate=False))
        attr_tensors = {}
        tree = _module_tree(m, attr_tensors)
        # the script objects that are (or are inside) module attributes: a graph
        # refers to them by their place, so a loaded module's attribute is the
        # object its graphs read and set
        attr_objects = {}
        for path, sub in m.named_modules(remove_duplicate=False):
            for n in sub.__dict__.get("_script_attrs", ()):
                _object_places(sub.__dict__[n], [path, n], attr_objects)
        name = m._original_name
    elif isinstance(m, ScriptFunction):
        graphs, kind, tensors, tree, name = {"forward": m.graph}, "function", {}, None, m.name
        attr_tensors, attr_objects = {}, {}
    else:
        raise TypeError(f"ptcore.jit.save: expected a ScriptModule or ScriptFunction (from "
                        f"ptcore.jit.trace), got {type(m).__name__}")
    calls = python_calls(graphs)
    if calls:
        # as torch.jit.save: a file holds no Python, so no call of it
        raise JitError(f"ptcore.jit.save: Could not export Python function call "
                       f"'{calls[0]._fn.name}' (marked @ptcore.jit.ignore): remove calls to "
                       "Python functions from the scripted code before saving")
    meta = {"format": _FORMAT, "kind": kind, "name": name, "tree": tree, "tensors": {},
            "graphs": {}}
    if modes:
        meta["modes"] = modes
    blobs = {}
    for key, t in tensors.items():
        meta["tensors"]["p:" + key] = [t.dtype._name, list(t.shape)]
        blobs["p:" + key] = _tensor_bytes(t)
    for key, t in (attr_tensors if kind == "module" else {}).items():
        meta["tensors"][key] = [t.dtype._name, list(t.shape)]
        blobs[key] = _tensor_bytes(t)
    for method, g in graphs.items():
        meta["graphs"][method] = g.to_json()
        nt = getattr(m, "_returns", None) if kind == "function" else g.__dict__.get("nt_return")
        if nt is not None:
            # the NamedTuple a method returns: rebuilt by load (as torch's own)
            meta.setdefault("namedtuples", {})[method] = [nt.__name__, list(nt._fields)]
        for v in g.values.values():
            if v.kind == "const":
                key = f"c:{method}:{v.id}"
                meta["tensors"][key] = [v.const.dtype._name,
                                        list(v.const.shape)]
                blobs[key] = _tensor_bytes(v.const)
            elif v.kind == "object" and id(v.const) in attr_objects:
                meta.setdefault("objects", {})[f"{method}:{v.id}"] = {
                    "place": attr_objects[id(v.const)]}
            elif v.kind == "object":
                # a script object the graph reads: its fields as data
                held = {}
                meta.setdefault("objects", {})[f"{method}:{v.id}"] = _enc_data(
                    v.const, held, f"o:{method}:{v.id}")
                for key, t in held.items():
                    meta["tensors"][key] = [t.dtype._name, list(t.shape)]
                    blobs[key] = _tensor_bytes(t)
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "wb") if own else f
    try:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:
            z.writestr("model/meta.json", json.dumps(meta))
            for i, (key, raw) in enumerate(blobs.items()):
                z.writestr(f"model/tensors/{i}", raw)
                meta["tensors"][key].append(i)
            z.writestr("model/index.json", json.dumps({k: v[2] for k, v in
                                                       meta["tensors"].items()}))
            for k, v in (_extra_files or {}).items():
                z.writestr("extra/" + k, v if isinstance(v, bytes) else str(v).encode())
    finally:
        if own:
            fh.close()


def _read(z, name):
    try:
        info = z.getinfo(name)
    except KeyError:
        raise JitError(f"not a ptcore.jit file: {name} is missing") from None
    if info.file_size > _MAX_JSON and name.endswith(".json"):
        raise JitError(f"{name} is implausibly large ({info.file_size} bytes)")
    return z.read(name)


def load(f, map_location=None, _extra_files=None):
    """Load what :func:`save` wrote (``torch.jit.load``)."""
    try:
        return _load(f, map_location, _extra_files)
    except RecursionError:
        # JSON records, graphs or module trees nested thousands deep
        raise JitError("ptcore.jit.load: the file nests its records too deeply to be read "
                       "(RecursionError)") from None


def _load(f, map_location=None, _extra_files=None):
    device = None
    if map_location is not None:
        device = ptcore.device(map_location) if not isinstance(map_location, ptcore.device) \
            else map_location
    own = isinstance(f, (str, os.PathLike))
    if own and not os.path.exists(f):       # (torch's errors: ValueError)
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    if own and os.path.isdir(f):
        raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
    data = open(f, "rb").read() if own else f.read()
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        if data[:2] == b"PK":
            raise JitError("ptcore.jit.load: the file is truncated or corrupt") from None
        raise JitError("ptcore.jit.load: not a zip archive (expected a file written by "
                       "ptcore.jit.save)") from None
    with z:
        names = z.namelist()
        if "model/meta.json" not in names and is_torchscript_archive(names):
            # written by torch.jit.save: parsed and compiled, never executed
            name = os.fspath(f) if own else getattr(f, "name", "<file>")
            return load_torchscript(_Archive(z, str(name)), map_location, _extra_files)
        try:
            meta = json.loads(_read(z, "model/meta.json"))
            index = json.loads(_read(z, "model/index.json"))
        except (ValueError, UnicodeDecodeError) as e:
            raise JitError(f"ptcore.jit.load: corrupt metadata: {e}") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise JitError("ptcore.jit.load: unknown format "
                           f"{meta.get('format') if isinstance(meta, dict) else meta!r}")
        tensors = {}
        try:
            for key, (dtype, shape) in ((k, v[:2]) for k, v in meta["tensors"].items()):
                raw = _read(z, f"model/tensors/{int(index[key])}")
                tensors[key] = _tensor_from(raw, dtype, shape, device)
        except (KeyError, TypeError, ValueError) as e:
            raise JitError(f"ptcore.jit.load: corrupt tensor records: {e}") from None
        if _extra_files is not None:
            for k in list(_extra_files):
                name = "extra/" + k
                _extra_files[k] = z.read(name) if name in names else b""
    graphs = {}
    objects = meta.get("objects", {})
    if not isinstance(objects, dict):
        raise JitError("ptcore.jit.load: corrupt script object records")
    placed = []         # (graph, value id, place of a module attribute's script object)
    for method, gj in meta["graphs"].items():
        consts = {int(k.split(":")[2]): t for k, t in tensors.items()
                  if k.startswith(f"c:{method}:")}
        for k, rec in objects.items():
            m, _, vid = str(k).rpartition(":")
            if m == method:
                try:
                    if type(rec) is dict and set(rec) == {"place"}:
                        consts[int(vid)] = None
                        placed.append((method, int(vid), rec["place"]))
                    else:
                        consts[int(vid)] = _dec_data(rec, tensors)
                except ValueError:
                    raise JitError(f"ptcore.jit.load: bad script object key {k!r}") from None
        graphs[method] = Graph.from_json(gj, consts)
    returns = {k: _namedtuple(v) for k, v in meta.get("namedtuples", {}).items()}
    for method, nt in returns.items():
        graphs[method].__dict__["nt_return"] = nt
    if meta["kind"] == "function":
        sf = ScriptFunction(graphs["forward"], meta.get("name", "fn"))
        sf._returns = returns.get("forward")
        return sf
    sm = _build(meta["tree"], tensors, "")
    for method, vid, place in placed:
        graphs[method].values[vid].const = _object_at(sm, place)
    object.__setattr__(sm, "_graphs", {k: g for k, g in graphs.items()
                                       if "@" not in k and "/" not in k})
    for k, g in graphs.items():
        if "/" in k and "@" not in k:
            path, method = k.rsplit("/", 1)
            try:
                child = sm.get_submodule(path)
            except AttributeError:
                raise JitError(f"ptcore.jit.load: a graph names submodule {path!r}, which "
                               "the module does not have") from None
            child.__dict__["_graphs"][method] = g
    if meta.get("modes"):
        try:
            sm.__dict__["_script_modes"] = {
                tuple(bool(f) for f in flags): {k.split("@")[0]: g for k, g in graphs.items()
                                                if k.endswith(f"@{int(i)}")}
                for flags, i in meta["modes"]}
        except (TypeError, ValueError) as e:
            raise JitError(f"ptcore.jit.load: corrupt mode records: {e}") from None
    return sm


_NAMEDTUPLES = {}


def _namedtuple(record):
    """The NamedTuple class of a saved ``[name, fields]`` record (one class per record,
    as the loaded methods of torch return instances of a class it makes from the file)."""
    try:
        name, fields = str(record[0]), tuple(str(f) for f in record[1])
        key = (name, fields)
        if key not in _NAMEDTUPLES:
            _NAMEDTUPLES[key] = collections.namedtuple(name, fields, module="ptcore.jit")
        return _NAMEDTUPLES[key]
    except (TypeError, ValueError, IndexError) as e:
        raise JitError(f"ptcore.jit.load: corrupt NamedTuple record: {e}") from None


def _build(tree, tensors, prefix):
    if not isinstance(tree, dict):
        raise JitError("ptcore.jit.load: corrupt module tree")
    sm = script_module_named(str(tree.get("name", "Module")))
    sm.training = bool(tree.get("training", False))
    rg = tree.get("requires_grad", {})
    for n in tree.get("params", ()):
        t = _need(tensors, "p:" + prefix + n)
        sm._parameters[n] = Parameter(t, requires_grad=bool(rg.get(n, True)))
    for n in tree.get("buffers", ()):
        sm._buffers[n] = _need(tensors, "p:" + prefix + n)
    sm._non_persistent_buffers_set = set(tree.get("nonpersistent", ()))
    attrs = tree.get("attrs")
    if attrs:
        if not isinstance(attrs, dict):
            raise JitError("ptcore.jit.load: corrupt module attribute record")
        sm._set_script_attrs({str(k): _dec_data(v, tensors) for k, v in attrs.items()},
                             [str(n) for n in tree.get("finals", ())])
    for n, child in tree.get("children", {}).items():
        sm._modules[n] = _build(child, tensors, prefix + n + ".")
    return sm


def _object_places(v, place, out, depth=0):
    """Record in ``out`` (id -> place) where each script object in attribute
    value ``v`` is: ``[module path, attribute, key or index or {"field": f}, ...]``."""
    if depth > 64:
        return
    if type(v) is ScriptObject:
        out.setdefault(id(v), place)
        for n, x in v._fields.items():
            _object_places(x, place + [{"field": n}], out, depth + 1)
    elif type(v) in (list, tuple):
        for i, x in enumerate(v):
            _object_places(x, place + [i], out, depth + 1)
    elif type(v) is dict:
        for k, x in v.items():
            if type(k) in _DICT_KEYS:
                _object_places(x, place + [k], out, depth + 1)


def _object_at(sm, place):
    """The script object at ``place`` (see _object_places) in loaded module ``sm``."""
    try:
        path, attr, *steps = place
        mod = sm.get_submodule(path) if path else sm
        if attr not in mod.__dict__.get("_script_attrs", ()):
            raise KeyError(attr)
        v = mod.__dict__[attr]
        for st in steps:
            v = v._fields[st["field"]] if type(st) is dict else v[st]
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        raise JitError(f"ptcore.jit.load: a graph names a script object at {place!r}, "
                       "which the module's attributes do not hold") from None
    if type(v) is not ScriptObject:
        raise JitError(f"ptcore.jit.load: {place!r} is not a script object")
    return v


def _need(tensors, key):
    t = tensors.get(key)
    if t is None or not isinstance(t, _TensorBase):
        raise JitError(f"ptcore.jit.load: the file has no tensor for {key[2:]!r}")
    return t
