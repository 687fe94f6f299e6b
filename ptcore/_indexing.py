"""Advanced indexing (integer tensors, lists, boolean masks, mixed with basic
indices) for reading and writing, following NumPy/PyTorch semantics.

Basic indexing (ints, slices, None, Ellipsis) is done in ``_tensor`` as views;
advanced indexing always produces a copy.
"""
import numpy as np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase


def _raw(t):
    """A NumPy view of ``t``'s memory; bfloat16 is viewed as int16 bits."""
    if t.dtype is _C.bfloat16:
        return t.view(_C.int16).numpy(), True
    return t.detach().numpy() if t.requires_grad else t.numpy(), False


def _convert_index(idx, ndim):
    items = idx if isinstance(idx, tuple) else (idx,)
    out = []
    for it in items:
        if isinstance(it, _TensorBase):
            if it.device.type != "cpu":
                it = it.cpu()
            if it.dtype is _C.bool_ or it.dtype is _C.uint8:
                out.append(_raw(it)[0].astype(bool, copy=False))
            elif it.dtype.is_floating_point or it.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            else:
                out.append(_raw(it)[0].astype(np.int64, copy=False))
        elif isinstance(it, list):
            a = np.array(it) if it else np.array([], dtype=np.int64)
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
        elif isinstance(it, np.ndarray):
            out.append(it)
        elif it is None or it is Ellipsis or isinstance(it, (slice, int, np.integer)):
            if isinstance(it, slice) and it.step is not None and it.step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(it)
        elif hasattr(it, "__index__"):
            out.append(it.__index__())
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(it).__name__})")
    return tuple(out)


def _fix_error(e):
    msg = str(e).replace("axis", "dimension").replace("array", "tensor")
    return IndexError(msg)


def getitem(self, idx):
    arr, is_bf16 = _raw(self)
    try:
        res = arr[_convert_index(idx, self.dim())]
    except IndexError as e:
        raise _fix_error(e) from None
    res = np.array(res, copy=True)
    t = _C.from_numpy(res)
    if is_bf16:
        t = t.view(_C.bfloat16)
    if self.device.type != "cpu":
        t = t.to(self.device)
    return t


def setitem(self, idx, value):
    if self.device.type != "cpu":
        raise NotImplementedError("advanced index assignment on device tensors is not supported yet")
    arr, is_bf16 = _raw(self)
    if isinstance(value, _TensorBase):
        v = value.to(dtype=self.dtype, device="cpu")
        vals = _raw(v)[0]
    elif is_bf16:
        vals = _raw(_C.full((), value, dtype=_C.bfloat16) if np.ndim(value) == 0
                    else _tensor_of(value))[0]
    else:
        vals = value
        if not np.isscalar(vals):
            vals = _raw(_tensor_of(value).to(self.dtype))[0]
        else:
            probe = _C.empty(1, dtype=self.dtype)
            probe.fill_(value)              # PyTorch's range checks for scalars
            vals = _raw(probe)[0][0]
    try:
        arr[_convert_index(idx, self.dim())] = vals
    except IndexError as e:
        raise _fix_error(e) from None
    except ValueError as e:
        raise RuntimeError(f"shape mismatch in index assignment: {e}") from None
    self._bump_version()


def _tensor_of(value):
    from ptcore._creation import tensor
    return tensor(value)


_C._set_indexing_hooks(getitem, setitem)
