"""``ptcore.autocast`` / ``ptcore.amp.autocast``: mixed precision regions.

The casting itself is a layer of the dispatch point
(:mod:`ptcore._dispatch.autocast`); this module is the context manager and
decorator PyTorch programs use, and the global autocast functions.
"""
import functools
import warnings

from ptcore._dispatch import autocast as _state
from ptcore._tensor import _TensorBase

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "ipu", "maia")


def is_autocast_available(device_type):
    """True if autocast supports ``device_type`` on this build (cpu and cuda
    here); an unknown device type string is an error, as in torch."""
    return _check_device_type(device_type) in ("cpu", "cuda")


def _supported(device_type, dtype):
    import ptcore
    if device_type == "cpu":
        return dtype in (ptcore.bfloat16, ptcore.float16)
    if device_type == "cuda":
        return dtype in (ptcore.float16, ptcore.bfloat16)
    return True


class autocast:
    """Run the ops inside the region in mixed precision (``torch.autocast``).

    Parameters
    ----------
    device_type : str
        ``"cpu"`` or ``"cuda"``.
    dtype : ptcore.dtype, optional
        Lower precision dtype: float16 or bfloat16 (default: bfloat16 on
        CPU, float16 on CUDA).
    enabled : bool
        Turn autocast off inside the region when False.
    cache_enabled : bool, optional
        Cache the casts of weights (leaf tensors that require grad) inside
        the region (default True).

    Examples
    --------
    >>> import ptcore
    >>> a, b = ptcore.ones(2, 3), ptcore.ones(3, 2)
    >>> with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
    ...     (a @ b).dtype
    ptcore.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            _check_device_type(device_type)
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else _state.get_dtype(device_type)
        self._cache_enabled = _state.state.cache_enabled if cache_enabled is None else \
            bool(cache_enabled)
        enabled = bool(enabled)
        if enabled and device_type == "cuda":
            import ptcore
            if not ptcore.cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                enabled = False
        if enabled and device_type not in ("cpu", "cuda"):
            warnings.warn(f"User provided device_type of '{device_type}', but it is not "
                          "available on ptcore. Disabling")
            enabled = False
        if enabled and not _supported(device_type, self.fast_dtype):
            if device_type == "cpu":
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.")
            else:
                warnings.warn(
                    "In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CUDA Autocast only supports dtypes of torch.float16 and torch.bfloat16 "
                    "currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        st = _state.state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled.get(self.device, False)
        self.prev_fastdtype = _state.get_dtype(self.device)
        _state.set_dtype(self.device, self.fast_dtype)
        _state.set_enabled(self.device, self._enabled)
        st.cache_enabled = self._cache_enabled
        st.nesting += 1
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        st = _state.state
        st.nesting -= 1
        if st.nesting == 0:
            _state.clear_cache()
        _state.set_enabled(self.device, self.prev)
        _state.set_dtype(self.device, self.prev_fastdtype)
        st.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self.__class__(self.device, self.fast_dtype, self._enabled,
                                self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    if isinstance(value, _TensorBase):
        ok = value.is_floating_point() and value.device.type == device_type and \
            value.dtype.itemsize != 8
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``Function.forward`` under autocast (as torch):
    with ``cast_inputs``, floating inputs are cast and the forward runs with
    autocast off; without, the forward runs in the autocast state it was
    called in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _state.get_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.is_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _state.is_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``Function.backward``: runs it in the autocast
    state its forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


# -- the global autocast state functions (torch.is_autocast_enabled ...) -------

# the device type strings torch.device accepts (the state functions reject others)
_KNOWN_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                       "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu",
                       "mtia", "privateuseone")


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a str, got {type(device_type).__name__}")
    if device_type not in _KNOWN_DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_KNOWN_DEVICE_TYPES)} device type at "
                           f"start of device string: {device_type}")
    return device_type


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (default: ``"cuda"``, as torch)."""
    return _state.is_enabled("cuda" if device_type is None else _check_device_type(device_type))


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:          # the old one-argument form: the CUDA flag
        device_type, enabled = "cuda", device_type
    _state.set_enabled(_check_device_type(device_type), enabled)


def get_autocast_dtype(device_type):
    return _state.get_dtype(_check_device_type(device_type))


def set_autocast_dtype(device_type, dtype):
    _state.set_dtype(_check_device_type(device_type), dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _state.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _state.set_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _state.get_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _state.set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _state.get_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _state.set_dtype("cuda", dtype)


def is_autocast_cache_enabled():
    return _state.state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _state.clear_cache()


def autocast_increment_nesting():
    _state.state.nesting += 1
    return _state.state.nesting


def autocast_decrement_nesting():
    _state.state.nesting -= 1
    return _state.state.nesting


GLOBAL_FUNCTIONS = (
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting",
)


def _deprecated_alias(device_type, module):
    """``ptcore.<module>.amp.autocast(...)``: the deprecated per-device spelling."""
    class _Alias(autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warnings.warn(
                f"`torch.{module}.amp.autocast(args...)` is deprecated. Please use "
                f"`torch.amp.autocast('{device_type}', args...)` instead.", FutureWarning,
                stacklevel=2)
            import ptcore
            if dtype is None:
                dtype = ptcore.bfloat16 if device_type == "cpu" else ptcore.float16
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

        def __call__(self, func):
            @functools.wraps(func)
            def decorate_autocast(*args, **kwargs):
                with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                    return func(*args, **kwargs)
            return decorate_autocast
    _Alias.__name__ = _Alias.__qualname__ = "autocast"
    _Alias.__module__ = f"ptcore.{module}.amp.autocast_mode"
    return _Alias
