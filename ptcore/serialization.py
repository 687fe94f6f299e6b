"""Checkpoints: ``ptcore.save`` and ``ptcore.load``.

``ptcore.save(obj, f)`` writes ``obj`` (state dicts, optimizer states,
training checkpoints, whole modules) in torch.save's format, so that
``torch.load`` reads it, and ``torch.load(weights_only=True)`` reads every
state dict, optimizer state and nested container of tensors, numbers and
strings that ptcore wrote.  ``ptcore.load(f)`` reads files written by
``torch.save`` and ``ptcore.save`` (without PyTorch installed), and the files
earlier versions of ptcore wrote in their own format.  Loading never runs
code from the file unless the caller asks for full unpickling with
``weights_only=False``.

The format
----------
A ZIP archive (every record stored, not compressed, and starting at a
multiple of 64 bytes, so it can be memory-mapped) with the records, under a
folder named as the file without its extension (``archive`` for file
objects):

``<archive>/data.pkl``
    A pickle (protocol 2) of ``obj`` in which ptcore's tensors, parameters,
    storages, dtypes, ``Size``, devices and layouts are written under
    torch's names (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``
    ...); tensors refer to storages by persistent ids ``("storage",
    <storage type>, key, location, numel)``.  See
    ``ptcore._torch_checkpoint_writer``.
``<archive>/data/<key>``
    The raw bytes of storage ``key`` (CUDA storages are copied to the host;
    ``location`` is ``"cuda:0"`` ...).  Views of one storage share one record
    and share their storage again after loading.
``<archive>/.format_version``, ``.storage_alignment``, ``byteorder``, ``version``, ``.data/serialization_id``
    ``1``, ``64``, ``little``, ``3`` and an identifier, as torch writes them.

The zip layout is torch's (miniz's) byte for byte; see
``ptcore._checkpoint_zip``.

Loading
-------
``weights_only=True`` (the default, as torch >= 2.6) unpickles with a
restricted unpickler that rebuilds tensors, storages, plain containers,
numbers, strings and the globals allowed with :func:`add_safe_globals`, and
refuses anything else by name (``pickle.UnpicklingError``), never executing
it (``ptcore._torch_checkpoint_reader``).  Every number a tensor record
carries is checked against the bytes the file holds before a tensor is
built, and every size the archive declares against the file before memory
is allocated: a truncated, corrupt or malicious file raises
:class:`CheckpointError` (a ``RuntimeError``) or ``pickle.UnpicklingError``
naming the file, never reads out of bounds.  ``weights_only=False`` runs
full unpickling, for trusted files only.  Files in ptcore's earlier format
(``ptcore/data.json`` and raw storages, no pickle) are read by
``ptcore._ptcore_checkpoint_v1``.  PyTorch's legacy (pre-1.6, non-zip)
format is read (and written, with ``_use_new_zipfile_serialization=False``)
by ``ptcore._torch_legacy_checkpoint``, with the same checks; TorchScript
archives are refused with a clear message.
"""
import builtins
import collections.abc as _abc
import contextlib
import enum
import os
import shutil
import sys
import tempfile
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_allowlist import (  # noqa: F401
    add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals,
)
from ptcore._checkpoint_tensors import CheckpointError, tls as _serialization_tls
from ptcore._checkpoint_zip import Archive as _Archive  # noqa: F401  (ptcore.jit reads with it)
from ptcore._checkpoint_zip import close_archive, open_archive
from ptcore._ptcore_checkpoint_v1 import load_ptcore_v1
from ptcore._torch_checkpoint_reader import get_unsafe_globals_in_checkpoint, load_torch
from ptcore._torch_legacy_checkpoint import load_legacy
# the restricted unpickler's parts, which ptcore.jit's TorchScript reader builds on
from ptcore._torch_checkpoint_reader import (  # noqa: F401
    RestrictedUnpickler as _RestrictedUnpickler, torch_persistent_load as _torch_persistent_load,
    untype_storages as _untype_storages, check_format_version as _check_format_version,
)
from ptcore._torch_checkpoint_writer import save_torch_format
from ptcore.storage import TypedStorage as _TypedStorage

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "get_unsafe_globals_in_checkpoint", "safe_globals", "skip_data",
           "default_restore_location", "location_tag", "normalize_storage_type", "register_package",
           "SourceChangeWarning", "mkdtemp", "LoadEndianness", "get_default_load_endianness",
           "set_default_load_endianness", "CheckpointError"]


# torch.serialization's constants and type aliases (libraries import them: Pyro's param store
# annotates with MAP_LOCATION); the numbers are those of torch's legacy format
DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
LONG_SIZE = 4
INT_SIZE = 4
SHORT_SIZE = 2
STORAGE_KEY_SEPARATOR = ","
MAP_SHARED, MAP_PRIVATE = 1, 2
STORAGE = _C.Storage | _TypedStorage
MAP_LOCATION = (_abc.Callable[[_C.Storage, builtins.str], _C.Storage] | _C.device | builtins.str
                | builtins.dict[builtins.str, builtins.str] | None)


class skip_data:
    """Context manager: ``save``/``load`` skip the storages' bytes (torch's
    ``torch.serialization.skip_data``).

    Saving writes every storage's member with its full size but zero bytes in
    place of the data (to be filled in a separate pass); loading builds every
    tensor as the checkpoint describes it with zero-filled storages, without
    reading their bytes.

    Parameters
    ----------
    materialize_fake_tensors : bool, optional
        Accepted as torch's (ptcore has no fake tensors); no effect on loading.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> with ptcore.serialization.skip_data():
    ...     ptcore.save(ptcore.ones(2, 3), buf)
    >>> _ = buf.seek(0)
    >>> ptcore.load(buf)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """

    def __init__(self, materialize_fake_tensors: bool = False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = (_serialization_tls.skip_data, _serialization_tls.materialize_fake_tensors)
        _serialization_tls.skip_data = True
        _serialization_tls.materialize_fake_tensors = self.materialize_fake_tensors

    def __exit__(self, type, value, tb):
        _serialization_tls.skip_data, _serialization_tls.materialize_fake_tensors = self._old



def _as_location(loc):
    """A location string from a str / ptcore.device / torch.device."""
    if isinstance(loc, str):
        return loc
    if isinstance(loc, ptcore.device):
        return str(loc)
    if hasattr(loc, "type") and hasattr(loc, "index"):   # e.g. torch.device
        return str(loc)
    raise TypeError(f"map_location: expected a str, a device, a dict or a callable, got "
                    f"{type(loc).__name__}")


def _restore_location(storage, location):
    """Move a CPU storage to the device named by ``location`` (as torch's
    ``default_restore_location``)."""
    try:
        dev = ptcore.device(location)
    except (RuntimeError, ValueError, TypeError, OverflowError) as e:
        raise RuntimeError(f"don't know how to restore data location {location!r}: {e}") from None
    if dev.type == "cpu":
        return storage
    if dev.type == "cuda":
        if not ptcore.cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but ptcore.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use ptcore.load with "
                "map_location=ptcore.device('cpu') to map your storages to the CPU.")
        n = storage.nbytes()
        flat = _C._tensor_from_storage(storage, ptcore.uint8, [n], [1], 0)
        return flat.to(dev).untyped_storage()
    raise RuntimeError(f"don't know how to restore data location of storage tagged with "
                       f"{location!r}: ptcore can map storages to 'cpu' and 'cuda' only")


# -- torch.serialization's public helpers (fairseq-style loaders call
# default_restore_location in their map_location; device extensions register packages)

_packages = []   # (priority, tagger, deserializer), sorted by priority


def register_package(priority, tagger, deserializer):
    """Register a device's ``tagger(storage) -> str | None`` (its location tag)
    and ``deserializer(storage, location) -> storage | None`` (the storage on
    that location), tried in increasing ``priority`` before ptcore's own."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda t: t[0])


def location_tag(storage):
    """The location a storage is saved with: ``"cpu"``, ``"cuda:0"`` ..."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    dev = storage.device
    if dev.type == "cpu":
        return "cpu"
    return f"{dev.type}:{0 if dev.index is None else dev.index}"


def default_restore_location(storage, location):
    """``storage`` on the device ``location`` names (``"cpu"``, ``"cuda:1"``): what
    ``load`` does without a ``map_location``; RuntimeError for an unknown location."""
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    return _restore_location(storage, location)


def normalize_storage_type(storage_type):
    """The ptcore class of the storage type named as ``storage_type``."""
    return getattr(ptcore, storage_type.__name__)


class SourceChangeWarning(Warning):
    """torch's warning for a pickled module whose source changed (ptcore
    checkpoints hold no code: it is never raised, only caught)."""


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory, removed on exit."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness = [None]


def get_default_load_endianness():
    """The byte order assumed for a checkpoint that does not record one (None: native)."""
    return _load_endianness[0]


def set_default_load_endianness(endianness):
    """Set the byte order assumed for a checkpoint that does not record one.
    Every checkpoint ptcore reads records it (little endian), so this only
    keeps the setting that ``get_default_load_endianness`` returns."""
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness[0] = endianness


def _make_restore(map_location):
    if map_location is None:
        return default_restore_location if _packages else _restore_location
    if isinstance(map_location, dict):
        table = {_as_location(k) if not isinstance(k, str) else k: _as_location(v)
                 for k, v in map_location.items()}

        def restore(storage, location):
            return _restore_location(storage, table.get(location, location))
        return restore
    if callable(map_location) and not isinstance(map_location, ptcore.device):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                result = _restore_location(storage, location)
            if not isinstance(result, _C.Storage):
                raise RuntimeError(f"map_location callable returned {type(result).__name__}, "
                                   "expected a ptcore storage or None")
            return result
        return restore
    target = _as_location(map_location)
    return lambda storage, location: _restore_location(storage, target)



# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save an object to a file in torch.save's format.

    Parameters
    ----------
    obj : object
        What to save: typically a state dict, an optimizer state or a
        training checkpoint (nested dicts, lists and tuples of tensors,
        numbers and strings); any picklable object (a whole module ...).
    f : str, os.PathLike or binary file-like object
        Where to write.
    pickle_module : ignored
        Accepted for compatibility with ``torch.save``.
    pickle_protocol : int
        The pickle protocol of ``data.pkl`` (2, as torch; torch's
        ``weights_only`` unpickler expects 2).
    _use_new_zipfile_serialization : bool
        ``False`` writes torch's legacy (pre-1.6, non-zip) format, as torch
        does (every PyTorch reads it; it cannot be memory-mapped).
    _disable_byteorder_record : bool
        Leave out the ``byteorder`` record, as torch.

    Notes
    -----
    ``torch.load`` reads the file; ``torch.load(weights_only=True)`` accepts
    state dicts, optimizer states and nested containers of tensors, numbers,
    strings, dtypes, devices and sizes.  Tensors that share a storage are
    saved once and share it again after loading.  The format is described in
    :mod:`ptcore.serialization`.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> ptcore.save({"w": ptcore.arange(3.0)}, buf)
    >>> _ = buf.seek(0)
    >>> ptcore.load(buf)
    {'w': tensor([0., 1., 2.])}
    """
    if sys.byteorder != "little":   # pragma: no cover - no big-endian CI
        raise NotImplementedError("ptcore.save: big-endian hosts are not supported")
    if not _use_new_zipfile_serialization and _serialization_tls.skip_data:
        raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
    if type(pickle_protocol) is not builtins.int or not 2 <= pickle_protocol <= 5:
        raise ValueError(f"ptcore.save: pickle_protocol must be an int from 2 to 5, got "
                         f"{pickle_protocol!r}")
    save_torch_format(obj, f, location_tag, pickle_protocol, _disable_byteorder_record,
                      legacy=not _use_new_zipfile_serialization)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------

def _env_flag(name):
    return os.getenv(name, "0").lower() in ("1", "y", "yes", "true")


def _weights_only_from_environment(weights_only):
    """``load``'s ``weights_only`` after torch's environment overrides: the
    caller asks for full unpickling by setting ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``
    (which only changes an unset ``weights_only``)."""
    force, force_no = (_env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD"),
                       _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"))
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the "
                      "`weights_only` argument was not explicitly passed to `ptcore.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else weights_only


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Load an object saved with ``ptcore.save`` or ``torch.save``.

    Parameters
    ----------
    f : str, os.PathLike or binary file-like object
        The checkpoint.
    map_location : None, str, device, dict or callable, optional
        Where to put the storages, as in ``torch.load``: ``None`` keeps the
        saved location, ``'cpu'`` (or a device) moves everything there, a dict
        maps saved locations to new ones (``{'cuda:0': 'cpu'}``), and a
        callable ``fn(storage, location)`` returns the storage to use (or
        ``None`` for the default).
    pickle_module : optional
        Accepted for compatibility with ``torch.load`` (and ignored); as torch,
        it may not be combined with ``weights_only=True``.
    weights_only : bool, optional
        ``True`` (the default, ``None``): only tensors, storages,
        plain containers and the globals allowed with
        :func:`add_safe_globals`; anything else is refused by name, never
        executed.  ``False``: full unpickling, as ``torch.load`` -- needed for
        whole modules, optimizers and other objects ``ptcore.save`` pickled;
        it runs whatever the file names, so use it only for trusted files.
        As torch, the environment variable ``TORCH_FORCE_WEIGHTS_ONLY_LOAD=1``
        forces ``True``, and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` makes an
        unset ``weights_only`` ``False`` (with a warning).
    mmap : bool, optional
        Memory-map the file (a file name is then required) instead of reading
        the storages into memory; the mapping is private (copy-on-write), so
        writes to loaded tensors never change the file.
    **kwargs
        ``encoding`` is used for Python 2 strings in PyTorch pickles; others
        are ignored.

    Returns
    -------
    object
        The saved object.

    Raises
    ------
    RuntimeError
        The file is truncated, corrupt or not a checkpoint, or a storage
        cannot be put on the requested device.
    pickle.UnpicklingError
        A PyTorch checkpoint refers to something other than tensors, storages
        and plain containers (refused by name, never executed).
    """
    if weights_only is not None:
        weights_only = builtins.bool(weights_only)     # (torch tests its truth value)
    if pickle_module is not None and _weights_only_from_environment(
            False if weights_only is None else weights_only):
        # (torch's check; its unset weights_only with a pickle_module is False, ptcore's
        # stays the restricted unpickler: nothing in the file runs unless asked)
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    weights_only = _weights_only_from_environment(weights_only)
    restore = _make_restore(map_location)
    arch, kind = open_archive(f, builtins.bool(mmap))
    try:
        if kind == "legacy":
            return load_legacy(arch, restore, kwargs.get("encoding", "utf-8"),
                               full=weights_only is False)
        if kind == "ptcore":
            return load_ptcore_v1(arch, restore)
        return load_torch(arch, kind[1], restore, kwargs.get("encoding", "utf-8"),
                          full=weights_only is False)
    finally:
        close_archive(arch, f)
