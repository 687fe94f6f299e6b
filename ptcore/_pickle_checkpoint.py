"""Whole-object checkpoints (``ptcore.save(model)``) and the allowlist of
globals that ``ptcore.load(..., weights_only=True)`` accepts.

Objects that ptcore's data-only format cannot hold (modules, optimizers,
schedulers, dataclasses, NumPy arrays ...) are written as ``torch.save``
writes them: a zip archive with ``archive/data.pkl`` (a pickle, protocol 2),
``archive/byteorder``, ``archive/version`` and one member
``archive/data/<key>`` per storage.  Tensors, parameters, storages, dtypes,
``Size`` and ``device`` are pickled under PyTorch's global names
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32`` ...), so the restricted unpickler of ``ptcore.load``
reads them, and so does ``torch.load`` where every other global is one
PyTorch can import.

Loading such a file needs ``weights_only=False`` (full unpickling: it runs
whatever the file names, so only for trusted files) unless every global it
names has been allowed with :func:`add_safe_globals` / :class:`safe_globals`.
"""
import collections
import io
import pickle
import pickletools
import sys
import types
import warnings
import zipfile

import ptcore
from ptcore import _tensor as _C

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

ARCHIVE = "archive/"

# ---------------------------------------------------------------------------
# the user's allowlist
# ---------------------------------------------------------------------------

_SAFE_GLOBALS = []     # objects, or (object, "module.name") pairs, in the order given


def _entry_name(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError("safe globals entries must be objects or (object, 'module.name') "
                            f"pairs, got {entry!r}")
        return entry[0], entry[1]
    module = getattr(entry, "__module__", None)
    qualname = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if module is None or qualname is None:
        raise TypeError(f"cannot allowlist {entry!r}: it has no __module__ and __qualname__")
    return entry, f"{module}.{qualname}"


def add_safe_globals(safe_globals):
    """Allow the globals in ``safe_globals`` in ``ptcore.load(..., weights_only=True)``.

    Parameters
    ----------
    safe_globals : list
        Classes and functions (or ``(obj, "module.name")`` pairs when ``obj``
        is pickled under another name).  Allowed classes may be created
        (``__new__``) and given their pickled state (``__setstate__`` or their
        ``__dict__``); allowed functions may be called.
    """
    if not isinstance(safe_globals, list):
        raise TypeError(f"add_safe_globals expects a list, got {type(safe_globals).__name__}")
    for entry in safe_globals:
        _entry_name(entry)
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals():
    """The globals added by :func:`add_safe_globals` (a new list)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Forget every global added by :func:`add_safe_globals`."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: the globals are allowed while the block runs."""

    def __init__(self, safe_globals):
        if not isinstance(safe_globals, list):
            raise TypeError(f"safe_globals expects a list, got {type(safe_globals).__name__}")
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        for entry in self.safe_globals:
            for i in range(len(_SAFE_GLOBALS) - 1, -1, -1):
                if _SAFE_GLOBALS[i] is entry:
                    del _SAFE_GLOBALS[i]
                    break
        return False


def user_global(module, name):
    """The allowlisted object pickled as ``module.name``, or None."""
    full = f"{module}.{name}"
    for entry in reversed(_SAFE_GLOBALS):
        obj, entry_name = _entry_name(entry)
        if entry_name == full:
            return obj
    return None


def is_user_global(obj):
    return any((e[0] if isinstance(e, tuple) else e) is obj for e in _SAFE_GLOBALS)


def build_allowed(inst, state):
    """BUILD for an instance of an allowlisted class: ``__setstate__`` when the
    class has one, else its ``__dict__`` (and slots) get the state."""
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        setattr(inst, k, v)


def unsupported_global_message(module, name):
    full = f"{module}.{name}"
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint. \n\t(1) "
        "Re-running `ptcore.load` with `weights_only` set to `False` will likely succeed, but "
        "it can result in arbitrary code execution. Do it only if you got the file from a "
        "trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check "
        "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`ptcore.serialization.add_safe_globals([{full}])` or the "
        f"`ptcore.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function.\n\nCheck the documentation of ptcore.load to "
        "learn more about types accepted by default with weights_only.")


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

class _StorageRef:
    """A storage seen through a dtype (what a tensor's pickle refers to)."""

    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage = storage
        self.dtype = dtype


def _torch_names():
    """id(ptcore object) -> (module, name) under which PyTorch pickles it."""
    from ptcore import serialization as S
    names = {}
    for (module, name), obj in S._globals().items():
        if isinstance(obj, S._StorageType):
            if name != "UntypedStorage" or module == "torch":
                names.setdefault(("storage", obj.dtype._name if name != "UntypedStorage"
                                  else None), (module, name, obj))
            continue
        if isinstance(obj, ptcore.dtype):
            if name == obj._name:
                names[id(obj)] = (module, name)
            continue
        if module in ("torch", "torch._utils", "torch._tensor") and obj not in (
                S._TORCH_TENSOR, S._TORCH_PARAMETER):
            names[id(obj)] = (module, name)
    names[id(ptcore.Size)] = ("torch", "Size")
    names[id(ptcore.device)] = ("torch", "device")
    names[id(ptcore.Tensor)] = ("torch", "Tensor")
    return names


_NAMES = None


class _Pickler(pickle._Pickler):
    """Pickles ptcore's tensor types under PyTorch's names, storages as
    persistent ids (their bytes go to the archive's ``data/`` members)."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        global _NAMES
        if _NAMES is None:
            _NAMES = _torch_names()
        self.storages = []            # kept alive: ids stay unique while saving
        self.storage_keys = {}
        from ptcore.nn.parameter import Parameter
        self.Parameter = Parameter

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            st, dt = obj.storage, obj.dtype
        elif isinstance(obj, _C.Storage):
            st, dt = obj, None
        else:
            return None
        key = self.storage_keys.get(id(st))
        if key is None:
            key = str(len(self.storages))
            self.storages.append(st)
            self.storage_keys[id(st)] = key
        stype = _NAMES[("storage", None if dt is None else dt._name)][2]
        numel = st.nbytes() // (1 if dt is None else dt.itemsize)
        return ("storage", stype, key, str(st.device), numel)

    def _write_global(self, module, name):
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")

    def save(self, obj, save_persistent_id=True):
        from ptcore import serialization as S
        if isinstance(obj, S._StorageType):
            return self._write_global(*obj.qualname.rsplit(".", 1))
        name = _NAMES.get(id(obj))
        if name is not None and not isinstance(obj, (str, int, float)):
            return self._write_global(*name)
        if isinstance(obj, _C._TensorBase):
            x = self.memo.get(id(obj))
            if x is not None:
                self.write(self.get(x[0]))
                return
            func, args = self._reduce_tensor(obj)
            self.save_reduce(func, args, obj=obj)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        try:
            super().save_global(obj, name)
        except pickle.PicklingError:
            # torch.save pickles with the C pickler: a local class or function is its
            # AttributeError ("Can't pickle local object ..."), not the pure-Python
            # pickler's PicklingError; let the C pickler raise its own error
            pickle.dumps(obj, protocol=self.proto)
            raise

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = save_global

    def _reduce_tensor(self, t):
        from ptcore import serialization as S
        from ptcore.tensor import _AUTOGRAD_ATTRS
        if getattr(t, "_backward_hooks", None):
            warnings.warn("backward hooks on a tensor are not serialized", UserWarning,
                          stacklevel=4)
        state = {k: v for k, v in getattr(t, "__dict__", {}).items() if k not in _AUTOGRAD_ATTRS}
        if isinstance(t, self.Parameter):
            data = t.detach()
            if state:
                return S._rebuild_parameter_with_state, (data, t.requires_grad,
                                                         collections.OrderedDict(), state)
            return S._rebuild_parameter, (data, t.requires_grad, collections.OrderedDict())
        args = (_StorageRef(t.untyped_storage(), t.dtype), t.storage_offset(), tuple(t.shape),
                t.stride(), t.requires_grad, collections.OrderedDict())
        if type(t) is ptcore.Tensor and not state:
            return S._rebuild_tensor_v2, args
        return S._rebuild_from_type_v2, (S._rebuild_tensor_v2, type(t), args, state)


def save_pickled(obj, f, pickle_protocol=2):
    """Write ``obj`` as a pickle checkpoint (``torch.save``'s zip layout)."""
    from ptcore import serialization as S
    buf = io.BytesIO()
    pk = _Pickler(buf, pickle_protocol)
    pk.dump(obj)
    if S._is_path(f):
        with open(f, "wb") as fh:
            _write(fh, buf.getvalue(), pk)
    else:
        if not hasattr(f, "write"):
            raise TypeError("ptcore.save: expected a file name (str or os.PathLike) or a binary "
                            f"file-like object with write(), got {type(f).__name__}")
        _write(f, buf.getvalue(), pk)


def _write(fh, data, pk):
    from ptcore import serialization as S
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        S._write_member(zf, ARCHIVE + "data.pkl", data, False)
        S._write_member(zf, ARCHIVE + "byteorder", sys.byteorder.encode("ascii"), False)
        for key, st in zip(pk.storage_keys.values(), pk.storages):
            S._write_member(zf, f"{ARCHIVE}data/{key}", S._storage_payload(st), True)
        S._write_member(zf, ARCHIVE + "version", b"3\n", False)


# ---------------------------------------------------------------------------
# load, weights_only=False
# ---------------------------------------------------------------------------

def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    Parameter = ptcore.nn.Parameter
    if isinstance(new_type, type) and issubclass(new_type, Parameter):
        if type(ret) is not new_type:
            ret = Parameter(ret, ret.requires_grad)
    elif isinstance(new_type, type) and type(ret) is not new_type:
        ret = ptcore.Tensor._make_subclass(new_type, ret, ret.requires_grad)
    if state:
        if isinstance(state, tuple):
            state, slots = state
            for k, v in (slots or {}).items():
                setattr(ret, k, v)
        for k, v in (state or {}).items():
            setattr(ret, k, v)
    return ret


class FullUnpickler(pickle.Unpickler):
    """Full unpickling (``weights_only=False``): PyTorch's tensor globals
    resolve to ptcore's, ``torch.X`` to ``ptcore.X``, anything else is
    imported.  Runs the code the file names: for trusted files only."""

    def __init__(self, file, persistent_load, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self._persistent = persistent_load

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        from ptcore import serialization as S
        obj = S._globals().get((module, name))
        if obj is S._TORCH_TENSOR:
            return ptcore.Tensor
        if obj is S._TORCH_PARAMETER:
            return ptcore.nn.Parameter
        if obj is S._rebuild_from_type_v2:
            return _rebuild_from_type_v2
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("ptcore" + module[5:], name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(
                    f"ptcore.load: the checkpoint needs {module}.{name}, which ptcore does not "
                    f"provide as ptcore{module[5:]}.{name}") from None
        return super().find_class(module, name)


# ---------------------------------------------------------------------------
# get_unsafe_globals_in_checkpoint
# ---------------------------------------------------------------------------

def globals_in_pickle(data):
    """Every ``(module, name)`` the pickle ``data`` refers to (GLOBAL/STACK_GLOBAL)."""
    found, strings, memo = [], [], {}
    for op, arg, _pos in pickletools.genops(data):
        if op.name in ("GLOBAL", "INST"):
            found.append(tuple(arg.split(" ", 1)))
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            strings.append(arg)
        elif op.name == "MEMOIZE":
            memo[len(memo)] = strings[-1] if strings else None
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = strings[-1] if strings else None
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            if isinstance(memo.get(arg), str):
                strings.append(memo[arg])
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append((strings[-2], strings[-1]))
    return found


# torch.load(weights_only=True) refuses frozenset and slice unless allowlisted
_ALWAYS_SAFE = {("builtins", "set"), ("builtins", "complex"), ("builtins", "bytearray"),
                ("collections", "OrderedDict")}


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint uses that ``weights_only=True`` would refuse.

    Parameters
    ----------
    f : str, os.PathLike or binary file-like object

    Returns
    -------
    list of str
        ``"module.name"`` for each global neither allowed by default nor added
        with :func:`add_safe_globals` (empty for ptcore's data-only format).
    """
    from ptcore import serialization as S
    arch, kind = S._open_archive(f, False)
    try:
        if kind == "ptcore":
            return []
        data = arch.read_small(kind[1] + "data.pkl")
    finally:
        fp = arch.zf.fp
        arch.zf.close()
        if S._is_path(f) and fp is not None:
            fp.close()
    import _compat_pickle
    allowed = S._globals()
    out = []
    for module, name in globals_in_pickle(data):
        if (module, name) in _compat_pickle.NAME_MAPPING:       # protocol 2's Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if ((module, name) in allowed or (module, name) in _ALWAYS_SAFE
                or user_global(module, name) is not None or full in out):
            continue
        out.append(full)
    return out
