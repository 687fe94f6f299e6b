"""``torch.utils._foreach_utils``: which devices have multi-tensor (foreach)
and fused kernels, and the grouping of parallel tensor lists by device and
dtype that the foreach and fused optimizer steps (and ``clip_grad_norm_``
copied from torch) run on."""
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = ["_get_foreach_kernels_supported_devices", "_get_fused_kernels_supported_devices",
           "_group_tensors_by_device_and_dtype", "_device_has_foreach_support",
           "_has_foreach_support"]

#: torch's name of the privateuse1 backend when none is renamed
_PRIVATEUSE1 = "privateuseone"


def _get_foreach_kernels_supported_devices():
    """The device types with multi-tensor kernels (torch's list)."""
    return ["cuda", "xpu", "mtia", _PRIVATEUSE1]


def _get_fused_kernels_supported_devices():
    """The device types with fused optimizer kernels (torch's list)."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", _PRIVATEUSE1]


def _foreach_supported_types():
    """torch's list here: plain tensors (the optimizers' own list adds Parameter)."""
    import ptcore
    return (ptcore.Tensor,)


def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """Split parallel tensor lists by the device and dtype of the first list's
    tensors: ``{(device, dtype): (lists, indices)}``, indices filled only with
    ``with_indices``; the split lists hold the same tensors (in-place updates
    reach the originals)."""
    first = tensorlistlist[0]
    if len(first) == 0:
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.")
    groups = {}
    for i, t in enumerate(first):
        if t is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed "
                               f"to be defined but the {i}-th Tensor is not.")
        key = (t.device, t.dtype)
        if key not in groups:
            groups[key] = ([[] for _ in tensorlistlist], [])
        lists, indices = groups[key]
        for out, tl in zip(lists, tensorlistlist):
            out.append(tl[i])
        if with_indices:
            indices.append(i)
    return groups


def _device_has_foreach_support(device):
    """Whether ``device`` runs the foreach ops (the CPU's are loops, as torch's)."""
    return _C._to_device(device).type in _get_foreach_kernels_supported_devices() + ["cpu"]


def _has_foreach_support(tensors, device):
    """Whether ``tensors`` (plain tensors or None) on ``device`` take the foreach ops."""
    types = _foreach_supported_types()
    return _device_has_foreach_support(device) and all(
        t is None or (isinstance(t, _TensorBase) and type(t) in types) for t in tensors)
