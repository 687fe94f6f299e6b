"""``torch.nn.parallel.comm`` (also ``torch.cuda.comm``): copying tensors
between CUDA devices for data-parallel code -- ``broadcast`` and
``broadcast_coalesced`` to several devices, ``reduce_add`` and
``reduce_add_coalesced`` of per-device tensors onto one, ``scatter`` of
chunks and ``gather`` by concatenation.  Device-to-device copies through
``Tensor.to`` (ptcore has no NCCL: the sums are taken on the destination).
"""
import warnings

from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import device_index as _device_index, in_host_memory as _in_host_memory

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter",
           "gather"]


def _index(d, allow_cpu=False, optional=False):
    """A CUDA device index from an int, a device or a string, as torch's
    ``_get_device_index`` (None or a device without an index: the current
    device when ``optional``; -1 for the CPU when ``allow_cpu``)."""
    import ptcore
    i = _device_index(d, optional, allow_cpu)
    return ptcore.cuda.current_device() if i is None else i


def _on(index):
    import ptcore
    return ptcore.device("cpu") if index == -1 else ptcore.device("cuda", index)


def broadcast(tensor, devices=None, *, out=None):
    """Copies of ``tensor`` on ``devices`` (the tensor itself on its own
    device), or copied into the tensors of ``out``; exactly one of the two."""
    if (devices is None) == (out is None):
        raise RuntimeError(f"Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    if devices is not None:
        return tuple(tensor if tensor.device == _on(_index(d)) else tensor.to(_on(_index(d)))
                     for d in devices)
    for o in out:
        if tuple(o.shape) != tuple(tensor.shape):
            raise RuntimeError(f"output tensor of shape {list(o.shape)} does not match the input's "
                               f"{list(tensor.shape)}")
        o.copy_(tensor)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """``broadcast`` of each of ``tensors`` to ``devices``: a tuple of the
    copies per device."""
    per_tensor = [broadcast(t, devices) for t in tensors]
    return [tuple(copies[j] for copies in per_tensor) for j in range(len(devices))]


def reduce_add(inputs, destination=None):
    """The sum of same-shaped CUDA tensors, on ``destination`` (the current
    device by default), which must hold one of them."""
    destination = _index(destination, optional=True)
    size = inputs[0].size()
    root = None
    for i, inp in enumerate(inputs):
        if _in_host_memory(inp):
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} is on CPU")
        if inp.get_device() == destination:
            root = i
        if inp.size() != size:
            got = "x".join(str(x) for x in inp.size())
            expected = "x".join(str(x) for x in size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root is None:
        raise RuntimeError("reduce_add expects destination to be on the same GPU with one of the tensors")
    if len(inputs) == 1:
        return inputs[0]
    dest = inputs[root].device
    others = [t for i, t in enumerate(inputs) if i != root]
    result = inputs[root] + others[0].to(dest)
    for t in others[1:]:
        result.add_(t.to(dest))
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """``reduce_add`` of the i-th tensors of each device's list in ``inputs``:
    a tuple of the sums (tensors of their own, cut from any graph)."""
    return tuple(reduce_add(list(ts), destination).detach() for ts in zip(*inputs, strict=True))


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Chunks of ``tensor`` along ``dim`` on ``devices`` (equal chunks, or of
    ``chunk_sizes``), or copied into the tensors of ``out`` (their sizes
    along ``dim`` give the chunks)."""
    if out is None:
        if devices is None:
            raise RuntimeError("Exactly one of 'devices' and 'out' must be specified")
        devices = [_index(d) for d in devices]
        if chunk_sizes is None:
            chunks = tensor.chunk(len(devices), dim)
        else:
            if len(chunk_sizes) != len(devices) or sum(chunk_sizes) != tensor.size(dim):
                raise RuntimeError(f"Expected chunk sizes {list(chunk_sizes)} for {len(devices)} devices to "
                                   f"sum to the size of dim {dim} ({tensor.size(dim)})")
            chunks = tensor.split(list(chunk_sizes), dim)
        return tuple(c.contiguous().to(_on(d)) if c.device != _on(d) else c
                     for c, d in zip(chunks, devices))
    if devices is not None:
        raise RuntimeError(f"'devices' must not be specified when 'out' is specified, but got "
                           f"devices={devices}")
    if chunk_sizes is not None:
        raise RuntimeError(f"'chunk_sizes' must not be specified when 'out' is specified, but got "
                           f"chunk_sizes={chunk_sizes}")
    sizes = [o.size(dim) for o in out]
    if sum(sizes) != tensor.size(dim):
        raise RuntimeError(f"The sizes of the output tensors along dim {dim} ({sizes}) do not sum to "
                           f"the input's ({tensor.size(dim)})")
    for o, c in zip(out, tensor.split(sizes, dim)):
        o.copy_(c)
    return tuple(out)


def gather(tensors, dim=0, destination=None, *, out=None):
    """``tensors`` (on CUDA devices) concatenated along ``dim`` on
    ``destination`` (the current device by default; ``"cpu"``/-1 the CPU),
    or into ``out``."""
    import ptcore
    if not all(isinstance(t, _TensorBase) for t in tensors):
        raise TypeError("gather expects a sequence of tensors")
    if out is None:
        if destination == -1:
            warnings.warn('Using -1 to represent CPU tensor is deprecated. Please use a device object '
                          'or string instead, e.g., "cpu".', FutureWarning, stacklevel=2)
        dest = _on(_index(destination, allow_cpu=True, optional=True))
        return ptcore.cat([t.to(dest) for t in tensors], dim)
    if destination is not None:
        raise RuntimeError(f"'destination' must not be specified when 'out' is specified, but got "
                           f"destination={destination}")
    return out.copy_(ptcore.cat([t.to(out.device) for t in tensors], dim))
