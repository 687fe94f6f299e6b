"""Tensors on the meta device: storages with a byte count and no memory.

The tensor core (``ptcore._tensor``) calls :data:`DEVICE_OPS` (installed with
``_C._set_device_ops(..., "meta")``) for everything on a meta tensor that
would touch its bytes: ``empty`` and ``empty_strided`` make a storage of
the right size with no memory (``_C._meta_storage``), ``copy_`` and
``fill_`` into a meta tensor do nothing, ``clone`` and ``convert`` make a new
meta tensor, and reading values (``item``, a copy out to another device)
raises torch's errors.  Views are geometry only and never come here.
"""
import types as _types
import weakref as _weakref

from ptcore import _tensor as _C
from ptcore._dispatch import device as _device_layer

__all__ = ["DEVICE_OPS", "empty", "empty_strided", "to_device", "dense_strides", "META"]

META = _C.device("meta")
# the device layer is on while a meta storage is alive (CPU-only programs
# never pay for it): the live meta storages are counted
_live = [0]
_first_tensor_hooks = []    # run once, when the first meta tensor is made (kernel registration)


def _storage_born(st):
    if _live[0] == 0:
        while _first_tensor_hooks:
            _first_tensor_hooks.pop()()
        _device_layer.enable(True, "meta")
    _live[0] += 1
    _weakref.finalize(st, _storage_died)


def _storage_died():
    _live[0] -= 1
    if _live[0] == 0:
        _device_layer.enable(False, "meta")


def contiguous_strides(shape):
    st = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        st[i] = acc
        acc *= max(shape[i], 1)
    return st


def dense_strides(t):
    """PyTorch's preserve_format strides (the core's rule: ``t``'s own when
    dense and non-overlapping, else dense in its dimension order)."""
    return _C._preserve_format_strides(t)


def _nbytes(shape, strides, itemsize):
    if any(s == 0 for s in shape):
        return 0
    return (1 + sum((n - 1) * s for n, s in zip(shape, strides))) * itemsize


def empty_strided(shape, strides, dt, dev=META):
    """A meta tensor of ``shape``/``strides``/``dt``: a storage of the bytes
    those need, with no memory."""
    st = _C._meta_storage(_nbytes(shape, strides, dt.itemsize), dev)
    _storage_born(st)
    return _C._tensor_from_storage(st, dt, shape, strides, 0)


def empty(shape, dt, dev=META):
    return empty_strided(list(shape), contiguous_strides(shape), dt, dev)


_NO_DATA = "Cannot copy out of meta tensor; no data!"


def _check_copy_shapes(dst, src):
    ds, ss = tuple(dst.shape), tuple(src.shape)
    if len(ss) > len(ds) or any(s != 1 and s != d for s, d in zip(ss[::-1], ds[::-1])):
        raise RuntimeError(f"The size of tensor a ({ds[-1] if ds else 0}) must match the size of "
                           f"tensor b ({ss[-1] if ss else 0}) at non-singleton dimension "
                           f"{len(ds) - 1 if ds else 0}")


def copy_(dst, src, non_blocking=False):
    """``dst.copy_(src)``: nothing to copy into a meta tensor (the shapes
    must broadcast); a copy out of a meta tensor raises torch's error."""
    if not dst.is_meta:
        raise NotImplementedError(_NO_DATA)
    _check_copy_shapes(dst, src)
    return dst


def fill_(t, value):
    return t


def clone(t, preserve):
    out = empty_strided(list(t.shape), dense_strides(t) if preserve else
                        contiguous_strides(list(t.shape)), t.dtype, t.device)
    if t.requires_grad:
        # lazy: ptcore's init imports the meta device before the autograd layer
        from ptcore.autograd import _record
        out = _record._on_grad_wrap(t, out, "clone")
    return out


def convert(t, dt):
    return empty_strided(list(t.shape), dense_strides(t), dt, t.device)


def item(t):
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


# what the tensor core calls for meta tensors (see the module docstring)
DEVICE_OPS = _types.SimpleNamespace(empty=empty, empty_strided=empty_strided, copy_=copy_,
                                    fill_=fill_, clone=clone, convert=convert, item=item)


def to_device(t, device, dtype, non_blocking):
    """``t`` on ``device`` when one side is the meta device: a meta tensor of
    ``t``'s geometry (no data is read), or torch's error for a copy out of
    meta."""
    if device.type != "meta":
        raise NotImplementedError(_NO_DATA)
    return empty_strided(list(t.shape), dense_strides(t), dtype, device)


# ---------------------------------------------------------------------------
# the random loops of the CPU front-ends (rand, randn, uniform_, normal_,
# bernoulli ...): nothing to draw on meta, and no generator advances

def _random_fill(t, kind, generator, *args):
    return t


def _random_bernoulli(t, p, generator):
    return t


def _random_normal_tensor(mean, std, shape, dt, generator):
    return empty(list(shape), dt)


def _randperm(n, dev, generator):
    return empty([n], _C.int64, dev)


def _index_bounds(index, size, allow_negative):
    # no values to check (torch's meta indexing checks none either)
    return None


def _writes_output(*args):
    # a loop writing into outputs its front-end allocated (advanced indexing):
    # nothing to write on meta
    return None


LOOPS = {"index": _writes_output, "index_put_": _writes_output,
         "random_fill": _random_fill, "random_bernoulli": _random_bernoulli,
         "random_normal_tensor": _random_normal_tensor, "randperm": _randperm,
         "index_bounds": _index_bounds}
