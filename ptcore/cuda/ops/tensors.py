"""Tensors on a CUDA device: storages in caching-allocator blocks, transfers
between host and device and between devices, pinned host memory.

The tensor core (``ptcore._tensor``) calls :data:`DEVICE_OPS` (installed with
``_C._set_device_ops`` when the runtime initialises) for everything on a
device tensor that touches its bytes: ``empty``, ``empty_strided``,
``copy_``, ``fill_``, ``clone`` and ``item``.  Views (``view``, slicing,
``transpose``, ``expand`` ...) are geometry only and never come here.

No code here dereferences a device pointer: bytes move only through the
driver's ``memcpy*``/``memset`` on the current stream of the device.  A copy
that converts dtypes, broadcasts or has a non-contiguous side is staged
through host memory (the byte span the view covers is copied down, updated
by the CPU kernels, and copied back, in stream order) until device copy
kernels replace it.
"""
from ptcore import _tensor as _C
from ptcore.autograd import _record, grad_mode
from ptcore.cuda import graphs as _graphs
from ptcore.cuda.kernels import library as _kernels
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.runtime.device_storage import cuda_device as _cuda_device
from ptcore.cuda.runtime.device_storage import empty
from ptcore.cuda.runtime.device_storage import index_of as _index_of
from ptcore.cuda.runtime.device_storage import new_storage as _new_storage
from ptcore.cuda.streams import Stream

__all__ = ["DEVICE_OPS", "empty", "empty_strided", "copy_", "to_device", "pin_memory",
           "is_pinned", "record_stream", "device_block", "arange_int64"]


# ---------------------------------------------------------------------------
# owner of pinned host memory (a device block's owner is
# _device_storage.DeviceMemory)

class _PinnedMemory:
    """Owner of page-locked host memory from the driver."""
    __slots__ = ("drv", "ptr", "__weakref__")

    def __init__(self, drv, ptr):
        self.drv = drv
        self.ptr = ptr

    def __del__(self):
        p = self.ptr
        if p:
            self.ptr = 0
            try:
                self.drv.host_free_pinned(p)
            except Exception:
                pass


def _contig_strides(shape):
    if len(shape) <= 1:
        return [1] * len(shape)
    st = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        st[i] = acc
        acc *= max(shape[i], 1)
    return st


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _extent(shape, strides):
    """Elements spanned by a view (0 for an empty one)."""
    if _numel(shape) == 0:
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(shape, strides) if s > 1)


def _check_shape(shape, fname):
    shape = [int(s) for s in shape]
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{fname}: Trying to create tensor with negative dimension {s}: {shape}")
    return shape


def empty_strided(shape, strides, dt, dev):
    """Uninitialised tensor with explicit strides on cuda device ``dev``."""
    shape = _check_shape(shape, "empty_strided")
    strides = [int(s) for s in strides]
    idx = _index_of(dev)
    st = _new_storage(idx, _extent(shape, strides) * dt.itemsize)
    return _C._tensor_from_storage(st, dt, shape, strides, 0)


def _dense_strides(t):
    """PyTorch's preserve_format strides (the core's rule)."""
    return _C._preserve_format_strides(t)


# ---------------------------------------------------------------------------
# byte movement

def _is_cuda(t):
    return t.device.type == "cuda"


def _span(t):
    """(first byte, byte count) of the storage span a view covers."""
    isz = t.dtype.itemsize
    n = _extent(list(t.shape), list(t.stride()))
    return t.storage_offset() * isz, n * isz


def _start(t):
    """The device address of ``t``'s first element, checked: a tensor whose
    storage shrank below its extent raises torch's setStorage RuntimeError
    (``Tensor.data_ptr``) before any byte is copied."""
    return t.data_ptr()


def _stream(idx):
    return _runtime.current_stream_handle(idx)


def _download(t):
    """A CPU tensor with ``t``'s geometry over a host copy of the span ``t``
    covers (the copy is complete on return); also returns (host storage,
    first byte, byte count) for :func:`_upload`."""
    drv = _runtime.lazy_init("copying from the device")
    idx = t.device.index
    lo, n = _span(t)
    isz = t.dtype.itemsize
    host = _C.empty(max(n, 0), dtype=_C.uint8)
    hst = host.untyped_storage()
    if n:
        drv.set_current(idx)
        drv.memcpy_dtoh(hst.data_ptr(), _start(t), n, _stream(idx))
    view = _C._tensor_from_storage(hst, t.dtype, list(t.shape), list(t.stride()),
                                   t.storage_offset() - lo // isz)
    return view, hst, lo, n


def _upload(t, hst, lo, n):
    if not n:
        return
    drv = _runtime.lazy_init("copying to the device")
    idx = t.device.index
    drv.set_current(idx)
    drv.memcpy_htod(_start(t), hst.data_ptr(), n, _stream(idx))


def _bump_version(t):
    t._bump_version()


def copy_(dst, src, non_blocking=False):
    """``dst.copy_(src)`` where either side is on a CUDA device."""
    drv = _runtime.lazy_init(f"copy_ from {src.device} to {dst.device}")
    if dst.requires_grad and dst.grad_fn is None and _grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if dst.numel() and any(st == 0 and n > 1 for n, st in zip(dst.shape, dst.stride())):
        # (the CPU copy's check, _check_internal_overlap in the tensor core)
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")
    src_cuda, dst_cuda = _is_cuda(src), _is_cuda(dst)
    _C._warn_complex_to_real(src.dtype, dst.dtype, 3)
    same_layout = (dst.dtype is src.dtype and tuple(dst.shape) == tuple(src.shape)
                   and dst.is_contiguous() and src.is_contiguous())
    nbytes = dst.numel() * dst.dtype.itemsize
    if same_layout:
        if nbytes:
            dptr, sptr = dst.data_ptr(), src.data_ptr()
            if dst_cuda and src_cuda:
                didx, sidx = dst.device.index, src.device.index
                if didx != sidx:      # the source's queued work first
                    drv.set_current(sidx)
                    drv.stream_synchronize(_stream(sidx))
                drv.set_current(didx)
                drv.memcpy_dtod(dptr, sptr, nbytes, _stream(didx))
                if didx != sidx:
                    drv.stream_synchronize(_stream(didx))
            elif dst_cuda:
                idx = dst.device.index
                drv.set_current(idx)
                drv.memcpy_htod(dptr, sptr, nbytes, _stream(idx))
                if not non_blocking:
                    drv.stream_synchronize(_stream(idx))
            else:
                idx = src.device.index
                drv.set_current(idx)
                drv.memcpy_dtoh(dptr, sptr, nbytes, _stream(idx))
                if not non_blocking:
                    drv.stream_synchronize(_stream(idx))
        _bump_version(dst)
        return dst
    if dst_cuda and src_cuda and dst.device == src.device:
        try:
            _launch.cast_copy(dst, src if src.dim() <= dst.dim() else _drop_leading(src, dst))
            _bump_version(dst)
            return dst
        except NotImplementedError:
            pass            # dtypes without kernels (complex): through the host
    if src_cuda != dst_cuda and _device_side_copy(drv, dst, src, dst_cuda):
        _bump_version(dst)
        return dst
    # staged through the host (dtypes without kernels, peer copies with another layout)
    src_h = _download(src)[0] if src_cuda else src
    if not dst_cuda:
        dst.copy_(src_h)
        return dst
    if dst.is_contiguous():
        tmp = _C.empty(list(dst.shape), dtype=dst.dtype)
        tmp.copy_(src_h)
        if nbytes:
            idx = dst.device.index
            drv.set_current(idx)
            drv.memcpy_htod(dst.data_ptr(), tmp.data_ptr(), nbytes, _stream(idx))
            drv.stream_synchronize(_stream(idx))
    else:
        view, hst, lo, n = _download(dst)
        view.copy_(src_h)
        _upload(dst, hst, lo, n)
    _bump_version(dst)
    return dst


def _broadcastable(src_shape, dst_shape):
    if len(src_shape) > len(dst_shape):
        lead = src_shape[:len(src_shape) - len(dst_shape)]
        if any(d != 1 for d in lead):
            return False
        src_shape = src_shape[len(lead):]
    return all(a in (1, b) for a, b in zip(reversed(src_shape), reversed(dst_shape)))


def _device_side_copy(drv, dst, src, to_device):
    """A host<->device copy that converts dtype, broadcasts or has a strided
    side: the bytes cross in the host tensor's own dtype and dense layout,
    and the cast/broadcast/strided write runs as a cast kernel on the
    device.  False (nothing done to ``dst``) when a dtype has no kernel, the
    shapes do not broadcast (the host path then raises the CPU's error) or
    the strided side has more dims than the strided kernels take."""
    if (_launch.K.TAGS.get(_launch._name(src.dtype)) is None
            or _launch.K.TAGS.get(_launch._name(dst.dtype)) is None
            or not _broadcastable(tuple(src.shape), tuple(dst.shape))):
        return False
    if to_device:
        idx = dst.device.index
        host = src if src.is_contiguous() else src.contiguous()
        tmp = empty(list(host.shape), host.dtype, dst.device)
        n = host.numel() * host.dtype.itemsize
        if n:
            drv.set_current(idx)
            drv.memcpy_htod(tmp.data_ptr(), host.data_ptr(), n, _stream(idx))
            drv.stream_synchronize(_stream(idx))        # the host buffer may go once we return
        if dst.numel():
            try:
                _launch.cast_copy(dst, tmp if tmp.dim() <= dst.dim() else _drop_leading(tmp, dst))
            except NotImplementedError:
                return False        # more dims than the strided kernels take: the host path
        return True
    idx = src.device.index
    tmp = empty(list(dst.shape), dst.dtype, src.device)
    if dst.numel():
        try:
            _launch.cast_copy(tmp, src if src.dim() <= dst.dim() else _drop_leading(src, dst))
        except NotImplementedError:
            return False            # more dims than the strided kernels take: the host path
    host = dst if dst.is_contiguous() else _C.empty(list(dst.shape), dtype=dst.dtype)
    n = dst.numel() * dst.dtype.itemsize
    if n:
        drv.set_current(idx)
        drv.memcpy_dtoh(host.data_ptr(), tmp.data_ptr(), n, _stream(idx))
        drv.stream_synchronize(_stream(idx))
    if host is not dst:
        dst.copy_(host)
    return True


def _drop_leading(src, dst):
    """``src`` without leading size-1 dims beyond ``dst``'s rank (copy_
    broadcasting); a shape mismatch raises as the CPU copy does."""
    while src.dim() > dst.dim() and src.shape[0] == 1:
        src = src[0]
    if src.dim() > dst.dim():
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                           f"{list(src.shape)}")
    return src


def _grad_enabled():
    return grad_mode.is_grad_enabled()


def fill_(t, value):
    """``t.fill_(value)`` on a CUDA tensor."""
    drv = _runtime.lazy_init("fill_")
    if isinstance(value, _C._TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        value = value.item()
    if t.numel() == 0:
        return t
    idx = t.device.index
    if t.is_contiguous():
        nbytes = t.numel() * t.dtype.itemsize
        drv.set_current(idx)
        if not isinstance(value, complex) and value == 0 and value is not None:
            drv.memset_d8(t.data_ptr(), 0, nbytes, _stream(idx))
        elif _fill_kernel(t, value):
            pass
        else:
            host = _C.full(list(t.shape), value, dtype=t.dtype)
            drv.memcpy_htod(t.data_ptr(), host.data_ptr(), nbytes, _stream(idx))
    elif not _fill_kernel(t, value):
        view, hst, lo, n = _download(t)
        view.fill_(value)
        _upload(t, hst, lo, n)
    _bump_version(t)
    return t


def _fill_kernel(t, value):
    """Fill with the device's fill kernel; False when none serves the dtype."""
    try:
        _launch.fill(t, value)
        return True
    except NotImplementedError:
        return False


#: the C path of a clone (``_dense_fast.clone_dense``, installed with the
#: dense fast paths): the copy without autograd, or None
_clone_fast = [None]


def clone(t, preserve):
    """A copy of CUDA tensor ``t`` with its own storage (contiguous unless
    ``preserve`` keeps a dense layout)."""
    fast = _clone_fast[0]
    if fast is not None:
        out = fast(t, preserve)
        if out is not None:
            return _grad_clone(t, out) if t.requires_grad else out
    dev = t.device
    if preserve:
        out = empty_strided(list(t.shape), _dense_strides(t), t.dtype, dev)
    else:
        out = empty(list(t.shape), t.dtype, dev)
    copy_(out, t.detach() if t.requires_grad else t)
    if t.requires_grad:
        out = _grad_clone(t, out)
    return out


def _grad_clone(src, out):
    return _record._on_grad_wrap(src, out, "clone")


#: the C path of a contiguous tensor's conversion (``_dense_fast.convert_dense``,
#: installed with the dense fast paths): the result, or None
_convert_fast = [None]


def convert(t, dt):
    """A copy of CUDA tensor ``t`` as dtype ``dt`` (dense layout kept)."""
    fast = _convert_fast[0]
    if fast is not None:
        out = fast(t, dt)
        if out is not None:
            return out
    out = empty_strided(list(t.shape), _dense_strides(t), dt, t.device)
    copy_(out, t.detach() if t.requires_grad else t)
    return out


def item(t):
    """The value of a one-element CUDA tensor (a host copy)."""
    view = _download(t)[0]
    return view.item()


class _DeviceOps:
    """What the tensor core calls for device tensors (see the module docstring)."""
    empty = staticmethod(empty)
    empty_strided = staticmethod(empty_strided)
    copy_ = staticmethod(copy_)
    fill_ = staticmethod(fill_)
    clone = staticmethod(clone)
    convert = staticmethod(convert)
    item = staticmethod(item)


DEVICE_OPS = _DeviceOps()


# ---------------------------------------------------------------------------
# arange on the device

def arange_int64(start, step, n, device):
    """``arange``'s int64 fast form (the loop ``arange_int64``; the front-end
    checked the plain ints and ``n`` >= 1): ``start + i*step`` written by the
    arange kernel on cuda ``device``, exact in int64.  No host values are
    uploaded, so nothing waits for the stream (a model's ``arange(T,
    device=x.device)`` positions made the host wait once per forward; torch's
    CUDA arange is a kernel too)."""
    idx = _runtime.device_index(device, "arange()")
    _runtime.check_index(idx, "arange()")
    out = empty([n], _C.int64, _cuda_device(idx))
    name = _kernels.kernel_name("arange", None, _launch._tag(_C.int64, "arange"), "c")
    _launch._launch(idx, name, n, [_launch._ll(n), _launch._ptr(out), _launch._params(i0=start, i1=step)])
    return out


# ---------------------------------------------------------------------------
# Tensor.to / .cuda / .cpu across devices

def to_device(t, device, dtype, non_blocking):
    """``t`` copied to ``device`` (another device than its own) as ``dtype``."""
    if device.type not in ("cpu", "cuda"):
        raise RuntimeError(f"cannot move a tensor from {t.device} to {device}")
    _runtime.lazy_init(f"moving a tensor from {t.device} to {device}")
    src = t.detach() if t.requires_grad else t
    strides = _dense_strides(src)
    if device.type == "cuda":
        out = empty_strided(list(src.shape), strides, dtype, _cuda_device(_index_of(device)))
        if _graphs._active[0] and not _is_cuda(src):
            # (a CUDA graph is capturing: a tensor made on the host inside the captured
            # code, ``arange(n, device="cuda")``, is uploaded from pinned memory the
            # graph keeps -- each replay copies it again -- without a host wait)
            drv = _runtime.get()
            old = drv.exchange_capture_mode("relaxed")      # (cuMemHostAlloc, as raw_alloc)
            try:
                host = pin_memory(_C.empty_strided(list(src.shape), strides, dtype=dtype))
            finally:
                drv.exchange_capture_mode(old)
            host.copy_(src)
            if _graphs.keep_alive_in_capture(out.device.index or 0, host):
                copy_(out, host, True)
                out._new_version_counter()
                return out
        copy_(out, src, non_blocking and is_pinned(src))
    else:
        if non_blocking:
            out = pin_memory(_C.empty_strided(list(src.shape), strides, dtype=dtype))
        else:
            out = _C.empty_strided(list(src.shape), strides, dtype=dtype)
        copy_(out, src, non_blocking)
    out._new_version_counter()          # a new tensor: version 0, as torch's .to()/.cuda()/.cpu()
    return out


# ---------------------------------------------------------------------------
# pinned host memory

def pin_memory(t):
    """A copy of CPU tensor ``t`` in page-locked memory (``t`` itself when it
    already is)."""
    if _is_cuda(t):
        raise RuntimeError(f"cannot pin '{t.type()}' only dense CPU tensors can be pinned")
    drv = _runtime.lazy_init("pin_memory()")
    if is_pinned(t):
        return t
    strides = _dense_strides(t)
    n = _extent(list(t.shape), strides) * t.dtype.itemsize
    if n:
        ptr = drv.host_alloc_pinned(n)
        st = _C._storage_from_pointer(ptr, n, _PinnedMemory(drv, ptr), "cpu")
    else:
        st = _C.empty(0, dtype=_C.uint8).untyped_storage()
    out = _C._tensor_from_storage(st, t.dtype, list(t.shape), strides, 0)
    out.copy_(t.detach() if t.requires_grad else t)
    return out


def is_pinned(t):
    """Whether CPU tensor ``t`` lives in pinned memory."""
    drv = _runtime.get()
    if drv is None or _is_cuda(t):
        return False
    st = t.untyped_storage()
    if st.nbytes() == 0:
        return False
    return bool(drv.is_pinned(st.data_ptr()))


# ---------------------------------------------------------------------------
# the allocator block behind a tensor

def device_block(t):
    """(allocator, Block) holding CUDA tensor ``t``'s storage."""
    if not _is_cuda(t):
        raise RuntimeError(f"expected a CUDA tensor, got one on {t.device}")
    a = _runtime.allocator(t.device.index)
    ptr = t.untyped_storage().data_ptr()
    return a, a.block_at(ptr)


def record_stream(t, stream):
    """``Tensor.record_stream(stream)``: the memory is not reused before the
    work queued on ``stream`` at free time has completed."""
    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be Stream, not {type(stream).__name__}")
    if t.untyped_storage().nbytes() == 0:
        return
    a, b = device_block(t)
    a.record_stream(b, stream.cuda_stream)


def dlpack_stream_sync(t, stream):
    """DLPack's producer side: make the consumer's ``stream`` (an int
    handle; None or 1 the legacy default stream, 2 the per-thread one, -1 no
    synchronisation) wait for the work queued on ``t``'s current stream."""
    if stream == -1:
        return
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
        raise TypeError(f"__dlpack__: stream must be an int or None, got {type(stream).__name__}")
    if stream == 0:
        raise ValueError("__dlpack__: stream 0 is ambiguous for CUDA (use 1 for the legacy default stream)")
    drv = _runtime.lazy_init("__dlpack__")
    idx = t.device.index
    producer = _stream(idx)
    consumer = 1 if stream is None else stream
    if consumer == producer or (producer == 0 and consumer == 1):
        return
    drv.set_current(idx)
    ev = drv.event_create(idx)
    try:
        drv.event_record(ev, producer)
        drv.stream_wait_event(consumer, ev)
    finally:
        drv.event_destroy(ev)


def cuda_array_interface(t):
    """``__cuda_array_interface__`` (version 3) of CUDA tensor ``t``."""
    if not _is_cuda(t):
        raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {t.type()} "
                             "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
    if t.requires_grad:
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                           "If gradients aren't required, use var.detach() to get Variable that doesn't require grad.")
    if t.dtype is _C.bfloat16:
        raise TypeError("__cuda_array_interface__ has no typestr for bfloat16 (use DLPack)")
    typestr = _np_dtype(t.dtype).str
    isz = t.dtype.itemsize
    strides = None if t.is_contiguous() else tuple(s * isz for s in t.stride())
    ptr = t.data_ptr() if t.numel() else 0
    stream = _runtime.current_stream_handle(t.device.index)
    return {"typestr": typestr, "shape": tuple(t.shape), "strides": strides,
            "data": (ptr, False), "version": 3, "stream": 1 if stream == 0 else stream}


def _np_dtype(dt):
    import numpy as np
    return np.dtype(dt._name)
