"""Global settings and small utilities with PyTorch's names: deterministic
algorithms, default device, float32 matmul precision, inter-op threads,
flush-denormal, warn-always, anomaly mode, ``typename``, ``frombuffer``,
``get_device``, ``set_default_tensor_type``.

ptcore's CPU kernels are deterministic and ptcore has no reduced-precision
(TF32/bfloat16) matmul paths, so the deterministic and matmul-precision
settings are stored and reported but change no results.
"""
import builtins
import importlib.util
import os
import sys
import warnings

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase, _as_dtype
from ptcore._warn import warn_once

__all__ = [
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_default_device", "get_default_device",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_num_interop_threads",
    "get_num_interop_threads", "set_flush_denormal", "set_warn_always", "is_warn_always_enabled",
    "is_anomaly_enabled", "set_anomaly_enabled", "is_anomaly_check_nan_enabled", "typename",
    "frombuffer", "get_device", "set_default_tensor_type", "compiled_with_cxx11_abi",
]

_state = {
    "deterministic": False,
    "deterministic_warn_only": False,
    "fill_uninitialized_memory": True,
    "matmul_precision": "highest",
    # ptcore.backends' fp32_precision settings, (backend, op) -> "none"/"ieee"/"tf32"/"bf16"
    # (see ptcore.backends._fp32_precision)
    "fp32_precision": {("generic", "all"): "none", ("cuda", "all"): "none",
                       ("cuda", "matmul"): "none", ("cuda", "conv"): "tf32",
                       ("cuda", "rnn"): "tf32", ("mkldnn", "all"): "none",
                       ("mkldnn", "matmul"): "none", ("mkldnn", "conv"): "none",
                       ("mkldnn", "rnn"): "none"},
    "interop_threads": None,
    "interop_set": False,
    "warn_always": False,
    "anomaly_check_nan": True,
    # ptcore.backends.opt_einsum: [enabled, strategy]; einsum of three or more operands
    # contracts in the order opt_einsum plans while enabled (as torch: by default when the
    # package is installed)
    "opt_einsum": [False, None],
}
if importlib.util.find_spec("opt_einsum") is not None:
    _state["opt_einsum"][:] = [True, "auto"]


def _is_bool(v):
    return isinstance(v, builtins.bool)


# ---------------------------------------------------------------------------
# deterministic algorithms
# ---------------------------------------------------------------------------

def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (``torch.use_deterministic_algorithms``).

    ptcore's CPU kernels are deterministic already; the flag is recorded
    (and reported by :func:`are_deterministic_algorithms_enabled`), and the
    ops torch refuses on every device in this mode (``put_`` without
    accumulation, ``max_unpool1d/2d/3d``) raise its RuntimeError (a warning
    with ``warn_only=True``).  The kernels' results are also independent of :func:`ptcore.set_num_threads`:
    reductions (``sum``, ``mean``, ``var``, ``softmax``, ``cumsum`` ...) combine
    fixed blocks in a fixed order, and matrix products and convolutions (and
    their backward) split work into fixed output tiles shared by the threads,
    with the BLAS library itself kept single-threaded, so each output element
    is summed in the same order at 1 or N threads (bitwise identical, as in
    PyTorch).  Results can still differ from PyTorch's in the last bits.

    Parameters
    ----------
    mode : bool
    warn_only : bool, optional
        Warn instead of raising on non-deterministic operations.
    """
    if not _is_bool(mode):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not _is_bool(warn_only):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["deterministic"] = mode
    _state["deterministic_warn_only"] = warn_only
    _sync_deterministic_fill()


def alert_not_deterministic(caller):
    """torch's ``alertNotDeterministic``: with deterministic algorithms on,
    an op whose result torch leaves unspecified (``put_`` with repeated
    indices and no accumulation, ``max_unpool`` with overlapping windows)
    raises RuntimeError, or warns under ``warn_only=True``.  ptcore's own
    kernels give one fixed result there, but a program that torch refuses
    is refused alike, so it ports both ways."""
    if not _state["deterministic"]:
        return
    msg = (f"{caller} does not have a deterministic implementation, but you set "
           f"'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for "
           f"this operation, or you can use the 'warn_only=True' option, if that's acceptable for "
           f"your application.")
    if _state["deterministic_warn_only"]:
        warnings.warn(msg, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(msg)


def _fill_uninitialized(t):
    """torch's deterministic fill of new memory: NaN for floating and complex
    dtypes, the largest value for integers (True for bool)."""
    import ptcore
    dt = t.dtype
    if dt.is_floating_point or dt.is_complex:
        value = float("nan")
    elif dt is ptcore.bool:
        value = True
    else:
        value = ptcore.iinfo(dt).max
    with ptcore.no_grad():
        t.fill_(value)


def _sync_deterministic_fill():
    _C._set_deterministic_fill(
        _state["deterministic"] and _state["fill_uninitialized_memory"], _fill_uninitialized)


def _get_deterministic_fill_uninitialized_memory():
    """Whether empty tensors are filled (NaN / the largest integer) while
    deterministic algorithms are on (``torch.utils.deterministic``)."""
    return _state["fill_uninitialized_memory"]


def _set_deterministic_fill_uninitialized_memory(mode):
    if not _is_bool(mode):
        raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
    _state["fill_uninitialized_memory"] = mode
    _sync_deterministic_fill()


def are_deterministic_algorithms_enabled():
    """True if :func:`use_deterministic_algorithms` turned deterministic mode on."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """True if deterministic mode is on with ``warn_only=True``."""
    return _state["deterministic_warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """``"default"``/0: off; ``"warn"``/1: deterministic, warn only; ``"error"``/2: deterministic."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode():
    """0 (off), 1 (warn) or 2 (error): see :func:`set_deterministic_debug_mode`."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["deterministic_warn_only"] else 2


# ---------------------------------------------------------------------------
# default device
# ---------------------------------------------------------------------------

# the default-device layer (ptcore._dispatch.default_device) registers the
# per-thread state the factory functions read: set(device) and current()
_default_device_state = {"set": None, "current": None}


def set_default_device(device):
    """Make ``device`` the device of the factory functions (``zeros``,
    ``tensor``, ``arange``, ``rand`` ...) when a call names none, for the
    calling thread, as ``torch.set_default_device``; ``None`` resets it to the
    CPU.  ``with ptcore.device(d):`` does the same inside a block.  A CUDA
    device is refused at once (``RuntimeError``) when CUDA is unavailable,
    where torch records it and fails at the first factory call.
    """
    import ptcore
    if device is not None:
        if isinstance(device, builtins.int) and not _is_bool(device):
            if not ptcore.cuda.is_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            device = ptcore.device("cuda", device)
        device = ptcore.device(device)
        if device.type == "cuda":           # as torch without a usable GPU: refuse up front
            ptcore.cuda._lazy_init(f"set_default_device({str(device)!r})")
    _default_device_state["set"](device)


def get_default_device():
    """The device factory functions use when a call names none: the innermost
    ``with ptcore.device(...)`` block's, else :func:`set_default_device`'s,
    else ``device('cpu')``."""
    import ptcore
    dev = _default_device_state["current"]()
    if dev is None:
        return ptcore.device("cpu")
    if dev.type == "cuda" and dev.index is None and ptcore.cuda.is_available():
        return ptcore.device("cuda", ptcore.cuda.current_device())
    return dev


# ---------------------------------------------------------------------------
# float32 matmul precision
# ---------------------------------------------------------------------------

def set_float32_matmul_precision(precision):
    """Record ``"highest"``, ``"high"`` or ``"medium"``.

    ptcore always computes float32 matmuls in float32 (``"highest"``), which
    PyTorch also does where no faster reduced-precision path exists.
    """
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision
    # the newer per-backend switches follow (``backends.cuda.matmul.fp32_precision`` ...)
    fp32 = _state["fp32_precision"]
    fp32[("cuda", "matmul")] = "ieee" if precision == "highest" else "tf32"
    fp32[("mkldnn", "matmul")] = {"highest": "ieee", "high": "tf32", "medium": "bf16"}[precision]


def fp32_precision_of(backend, op):
    """The effective ``fp32_precision`` of ``op`` on ``backend``: a ``"none"``
    entry defers to the backend's ``all`` and that to ``generic``'s (see
    ``ptcore.backends._fp32_precision``; the CUDA convolutions read
    ``("cuda", "conv")`` here)."""
    table = _state["fp32_precision"]
    v = table[(backend, op)]
    if v == "none" and op != "all":
        v = table[(backend, "all")]
    if v == "none" and backend != "generic":
        v = table[("generic", "all")]
    return v


def get_float32_matmul_precision():
    """The value set by :func:`set_float32_matmul_precision` (``"highest"`` by default)."""
    return _state["matmul_precision"]


# ---------------------------------------------------------------------------
# inter-op threads
# ---------------------------------------------------------------------------

def _default_interop():
    try:
        return builtins.max(builtins.len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def set_num_interop_threads(n):
    """Set the inter-op thread count (once, as PyTorch allows).

    ptcore runs operators one after another (no inter-op pool); the value is
    recorded and returned by :func:`get_num_interop_threads`.
    """
    if _is_bool(n) or not isinstance(n, builtins.int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _state["interop_threads"] = n
    _state["interop_set"] = True


def get_num_interop_threads():
    """The inter-op thread count (the CPU count unless set)."""
    n = _state["interop_threads"]
    return _default_interop() if n is None else n


# ---------------------------------------------------------------------------
# flush denormal
# ---------------------------------------------------------------------------

_FTZ_DAZ = 0x8040  # MXCSR flush-to-zero (bit 15) | denormals-are-zero (bit 6)


def _libm_fenv():
    import ctypes
    import ctypes.util
    import platform
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        get, set_ = lib.fegetenv, lib.fesetenv
    except (OSError, AttributeError):
        return None
    get.argtypes = set_.argtypes = [ctypes.c_void_p]
    get.restype = set_.restype = ctypes.c_int
    return get, set_


def set_flush_denormal(mode):
    """Flush denormal floats to zero (x86 SSE FTZ/DAZ) in the calling thread.

    Returns True if the mode was set, False where it is unsupported (non-x86
    or non-Linux), as PyTorch does on CPUs without SSE3.  Like PyTorch, it
    affects the calling thread (where ptcore's kernels run single-threaded).
    """
    if not _is_bool(mode):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    fns = _libm_fenv()
    if fns is None:
        return False
    import ctypes
    import struct
    get, set_ = fns
    env = ctypes.create_string_buffer(64)   # glibc x86_64 fenv_t: 32 bytes, mxcsr at offset 28
    if get(env) != 0:
        return False
    (mxcsr,) = struct.unpack_from("<I", env.raw, 28)
    mxcsr = (mxcsr | _FTZ_DAZ) if mode else (mxcsr & ~_FTZ_DAZ)
    struct.pack_into("<I", env, 28, mxcsr)
    return set_(env) == 0


# ---------------------------------------------------------------------------
# warn always, anomaly mode
# ---------------------------------------------------------------------------

def set_warn_always(b):
    """Make warnings that PyTorch gives once per process be given every time (recorded)."""
    if not _is_bool(b):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state["warn_always"] = b


def is_warn_always_enabled():
    """The flag set by :func:`set_warn_always`."""
    return _state["warn_always"]


# autograd's grad mode on this thread: defined in the core (ptcore._tensor),
# whose float() and numpy() read it, and switched by ptcore.autograd.grad_mode
_GradState = _C._GradState
grad_state = _C.grad_state


# autograd's anomaly-detection flag: set here (and by
# ptcore.autograd.detect_anomaly), read by the recording code
_anomaly = [False]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn autograd anomaly detection on or off (see ``ptcore.autograd.detect_anomaly``)."""
    if not _is_bool(enabled):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    if not _is_bool(check_nan):
        raise TypeError(f"set_anomaly_enabled(): argument 'check_nan' (position 2) must be bool, "
                        f"not {type(check_nan).__name__}")
    _anomaly[0] = enabled
    _state["anomaly_check_nan"] = check_nan


def is_anomaly_enabled():
    """True while autograd anomaly detection is on."""
    return builtins.bool(_anomaly[0])


def is_anomaly_check_nan_enabled():
    """The ``check_nan`` flag of the last :func:`set_anomaly_enabled` call (True by default)."""
    return _state["anomaly_check_nan"]


# ---------------------------------------------------------------------------
# typename, get_device, compiled_with_cxx11_abi
# ---------------------------------------------------------------------------

def typename(obj, /):
    """Fully qualified type name: ``'ptcore.FloatTensor'`` for tensors, else module.qualname."""
    if isinstance(obj, _TensorBase):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def get_device(input):
    """The CUDA device index of ``input``, or -1 for a CPU tensor."""
    if not isinstance(input, _TensorBase):
        raise TypeError(f"get_device(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.get_device()


def compiled_with_cxx11_abi():
    """True: ptcore's extensions are built with the system's (C++11) standard library ABI."""
    return True


# ---------------------------------------------------------------------------
# set_default_tensor_type
# ---------------------------------------------------------------------------

_LEGACY_FLOAT = {"HalfTensor": "float16", "BFloat16Tensor": "bfloat16", "FloatTensor": "float32",
                 "DoubleTensor": "float64"}
_LEGACY_OTHER = {"ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
                 "BoolTensor", "ComplexFloatTensor", "ComplexDoubleTensor"}


_TENSOR_TYPE_DEVICE = [False]       # set_default_tensor_type set the default device


def set_default_tensor_type(t, /):
    """Deprecated: set the default floating dtype (and, for a CUDA type such as
    ``torch.cuda.FloatTensor``, the default device) from a legacy tensor type.

    Accepts ``"torch.FloatTensor"``/``"torch.cuda.DoubleTensor"``-style
    strings or the type objects (``ptcore.FloatTensor``,
    ``ptcore.cuda.FloatTensor``).  A CUDA type without a usable CUDA device
    raises TypeError as torch's; a CPU type after a CUDA one puts the default
    device back on the CPU.
    """
    import ptcore
    warn_once("set_default_tensor_type",     # once per process, as torch's TORCH_WARN_ONCE
              "ptcore.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "ptcore.set_default_dtype() and ptcore.set_default_device() as alternatives.")
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "ptcore", "", "torch.cuda", "ptcore.cuda"):
            raise TypeError(f"invalid type: '{t}'")
        if name not in _LEGACY_FLOAT and name not in _LEGACY_OTHER:
            raise AttributeError(f"module '{module or 'ptcore'}' has no attribute '{name}'")
        cuda = module.endswith("cuda")
    else:
        name = getattr(t, "__name__", None)
        if name is None or (name not in _LEGACY_FLOAT and name not in _LEGACY_OTHER):
            raise TypeError("invalid type object: only floating-point types are supported as the "
                            "default type")
        cuda = str(getattr(t, "__module__", "")).endswith(".cuda")
    if name not in _LEGACY_FLOAT:
        raise TypeError("only floating-point types are supported as the default type")
    if cuda and not ptcore.cuda.is_available():
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA "
                        "enabled.")
    ptcore.set_default_dtype(getattr(ptcore, _LEGACY_FLOAT[name]))
    if cuda:
        ptcore.set_default_device("cuda")
        _TENSOR_TYPE_DEVICE[0] = True
    elif _TENSOR_TYPE_DEVICE[0]:
        ptcore.set_default_device(None)
        _TENSOR_TYPE_DEVICE[0] = False


# ---------------------------------------------------------------------------
# frombuffer
# ---------------------------------------------------------------------------

def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor viewing the memory of a Python buffer (no copy).

    Parameters
    ----------
    buffer : object with the buffer protocol
        Must be C-contiguous; the tensor shares (and keeps alive) its memory.
    dtype : ptcore.dtype
    count : int, optional
        Number of elements (-1: all after ``offset``).
    offset : int, optional
        Bytes to skip at the start.
    requires_grad : bool, optional
    """
    import numpy as np
    import ptcore
    for name, v in (("count", count), ("offset", offset)):
        if _is_bool(v) or not isinstance(v, builtins.int):
            raise TypeError(f"frombuffer(): argument '{name}' must be int, not {type(v).__name__}")
    dtype = _as_dtype(dtype)
    try:
        mv = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not mv.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    length = mv.nbytes
    elsize = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % elsize != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
                             f"must be a multiple of element size ({elsize})")
        count = (length - offset) // elsize
    elif offset + count * elsize > length:
        raise ValueError(f"requested buffer length ({count} * {elsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    raw = np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv,
                        dtype=np.uint8, count=count * elsize, offset=offset)
    if mv.readonly:
        warnings.warn("The given buffer is not writable, and ptcore does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor.", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # from_numpy's own non-writable warning
        t = ptcore.from_numpy(raw)
    if dtype is not ptcore.uint8:
        t = t.view(dtype)
    if requires_grad:
        # (the constructors' message, as ptcore._ops.creation._require_grad:
        # this core module may not import the ops layer)
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t
