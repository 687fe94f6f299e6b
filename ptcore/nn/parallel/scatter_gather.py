"""``scatter``/``scatter_kwargs``/``gather`` (``torch.nn.parallel.scatter_gather``):
split a batch across CUDA devices and bring the per-device results back,
differentiably (the pieces are ``chunk`` views copied to their devices with
``Tensor.to``, the results copied to the output device and concatenated)."""
import warnings

from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import is_accelerator as _is_accelerator

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _device(d):
    import ptcore
    if isinstance(d, int) and not isinstance(d, bool):
        return ptcore.device("cuda", d)
    d = ptcore.device(d)
    if d.index is None and _is_accelerator(d):
        return ptcore.device("cuda", ptcore.cuda.current_device())
    return d


def scatter(inputs, target_gpus, dim=0):
    """Slice tensors into ``len(target_gpus)`` chunks along ``dim`` (fewer when
    the dim is shorter), one per device; tuples, lists, namedtuples and dicts
    are scattered element-wise, other objects are referenced by every chunk."""
    devices = [_device(d) for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, _TensorBase):
            pieces = obj.chunk(len(devices), dim)
            return [p.to(d) for p, d in zip(pieces, devices)]
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None      # (the closure refers to itself: break the cycle)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` of the positional and the keyword arguments, padded to the
    same number of chunks (empty tuples / dicts)."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate the per-device ``outputs`` on ``target_device`` along
    ``dim`` (0-d tensors are stacked into a vector, with torch's warning);
    tuples, namedtuples and dicts are gathered element-wise; ``None`` stays."""
    import ptcore
    target = ptcore.device("cpu") if target_device == -1 else _device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, _TensorBase):
            if all(t.dim() == 0 for t in outs) and dim == 0:
                warnings.warn("Was asked to gather along dimension 0, but all input tensors "
                              "were scalars; will instead unsqueeze and return a vector.")
                return ptcore.stack([t.to(target) for t in outs])
            return ptcore.cat([t.to(target) for t in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None
