"""The one place where ops are routed by device.

Every op's kernel is registered per device type::

    @register("sum", "cpu")
    def _sum_cpu(out, input, dims, keepdim): ...

and public functions fetch it with ``kernel("sum", tensor.device)``.  The CUDA
backend registers its kernels under the same names with ``"cuda"``; autograd
formulas call public ops, so they work on every device.
"""
_KERNELS = {}


def register(op, device_type="cpu"):
    """Decorator registering ``fn`` as the ``device_type`` kernel of ``op``."""
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"register: unknown device type {device_type!r}")

    def deco(fn):
        _KERNELS[(op, device_type)] = fn
        return fn
    return deco


def kernel(op, device):
    """The kernel of ``op`` for ``device`` (a ptcore.device or a type string)."""
    dtype_ = device if isinstance(device, str) else device.type
    try:
        return _KERNELS[(op, dtype_)]
    except KeyError:
        if dtype_ != "cpu":
            from ptcore import cuda
            cuda._lazy_init(f"{op} on {device}")
        raise NotImplementedError(f"{op}: no kernel for device type '{dtype_}'") from None


def has_kernel(op, device_type):
    return (op, device_type) in _KERNELS


def check_same_device(op, *tensors):
    """Raise the PyTorch-style error when tensors live on different devices."""
    dev = None
    for t in tensors:
        if t is None:
            continue
        d = t.device
        if dev is None:
            dev = d
        elif d != dev:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{_dev_str(dev)} and {_dev_str(d)}! (when checking argument for {op})")
    return dev


def _dev_str(d):
    return f"{d.type}:{d.index if d.index is not None else 0}" if d.type == "cuda" else d.type
