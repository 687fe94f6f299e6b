# ptcore._tensor, devices: the device type, its string grammar and cache, the
# default-device and device-runtime hooks.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------

# torch's device types: ptcore runs cpu, cuda and meta; a device object of any other
# (``device('mps')``, as scripts compare against) exists, code 3, holding no tensor
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep",
                       "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta",
                       "hpu", "mtia", "privateuseone")
cdef dict _DEVICE_TYPES = {t: 3 for t in _TORCH_DEVICE_TYPES}
_DEVICE_TYPES.update({"cpu": 0, "cuda": 1, "meta": 2})
# PyTorch's device string grammar: a type name, optionally ':' and an index without leading zeros
_DEVICE_RE = _re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?", _re.ASCII)


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class device:
    """Where a tensor's storage lives: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``."""

    def __init__(self, type, index=None):
        cdef str s
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object and an index cannot both be given")
            self.type = (<device>type).type
            self.index = (<device>type).index
        elif isinstance(type, int) and not isinstance(type, bool):
            if index is not None:
                raise TypeError("device(): an integer device and an index cannot both be given")
            if type < 0:
                raise RuntimeError(f"Device index must not be negative, got {type}")
            self.type = "cuda"
            self.index = int(type)
        elif isinstance(type, str):
            s = type
            m = _DEVICE_RE.fullmatch(s)
            if m is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            if m.group(2) is not None:
                if index is not None:
                    raise RuntimeError(f"device(): type (string) must not include an index because index was passed explicitly: {s}")
                index = int(m.group(2))
                s = m.group(1)
            if s not in _DEVICE_TYPES:
                raise RuntimeError(
                    f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type at start of "
                    f"device string: {type}")
            self.type = s
            if index is not None:
                if isinstance(index, bool) or not isinstance(index, int):
                    raise TypeError(f"device(): index must be an int, got {_typename(index)}")
                if index < 0:
                    raise RuntimeError(f"Device index must not be negative, got {index}")
                index = int(index)
            self.index = index
        else:
            raise TypeError(f"device() received an invalid combination of arguments: {_typename(type)}")
        self._type_code = _DEVICE_TYPES[self.type]
        self._idx = -1 if self.index is None else self.index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        if self.index is None:
            return self.type
        return f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, device):
            return self.type == (<device>other).type and self.index == (<device>other).index
        return NotImplemented

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        # ``with ptcore.device(d):`` makes d the factory functions' default
        # device inside the block (ptcore._dispatch.default_device)
        if _device_context_hooks[0] is not None:
            _device_context_hooks[0](self)
        return self

    def __exit__(self, *exc):
        if _device_context_hooks[1] is not None:
            _device_context_hooks[1](self)
        return False


# (enter, exit) callbacks of the default-device layer, set by that layer
cdef list _device_context_hooks = [None, None]


def _set_device_context_hooks(enter, exit):
    _device_context_hooks[0] = enter
    _device_context_hooks[1] = exit


cdef device _CPU = device("cpu")
cdef dict _device_cache = {}


cdef device _as_device(object d):
    """Parse a device argument (device, str, int); None means CPU."""
    if d is None:
        return _CPU
    if type(d) is device:
        return <device>d
    try:
        return <device>_device_cache[d]
    except (KeyError, TypeError):
        pass
    cdef device dev = device(d)
    if dev.type == "cuda" and dev.index is None:
        pass
    try:
        _device_cache[d] = dev
    except TypeError:
        pass
    return dev


def _to_device(d):
    return _as_device(d)


def _in_host_memory(_TensorBase t not None):
    """Whether tensor ``t`` lives in host (CPU) memory: one read of its
    storage's device type code (``ptcore._dispatch.device.in_host_memory``,
    where the rules that ask it are listed)."""
    return t._storage.device._type_code == 0


cdef object _cuda_hook = None
# per device type code (1 cuda, 2 meta): the device runtime's empty /
# empty_strided / copy_ / fill_ / clone / convert / item for tensors on it
# (ptcore.cuda installs its ops when it initialises, ptcore._meta at import)
cdef list _DEVICE_OPS = [None, None, None, None]    # (3: the types ptcore does not run)


cdef inline object _ops_of(device dev):
    return _DEVICE_OPS[dev._type_code]


def _set_cuda_hook(hook):
    """Registered by ptcore.cuda: called for any non-CPU placement."""
    global _cuda_hook
    _cuda_hook = hook


cdef int _require_cpu(device dev, str what) except -1:
    if dev._type_code == 0:
        return 0
    if _DEVICE_OPS[dev._type_code] is not None:
        return 0                        # the device runtime is up: the caller uses its ops
    if dev._type_code == 1:
        if _cuda_hook is not None:
            _cuda_hook(dev, what)       # initialises the CUDA runtime, or raises why it cannot
            if _DEVICE_OPS[1] is not None:
                return 0
        raise RuntimeError(f"{what}: CUDA tensors are not supported by this build of ptcore ({dev})")
    raise NotImplementedError(f"{what}: device type '{dev.type}' is not supported")


cdef str _typename(object o):
    return type(o).__name__
