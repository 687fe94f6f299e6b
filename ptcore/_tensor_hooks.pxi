# ptcore._tensor, hooks filled in by higher layers (autograd, tracing, the device
# runtimes, dlpack) and the device routes of copy_/fill_/clone/item.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# hooks filled in by higher layers (autograd, cuda, dlpack)
# ---------------------------------------------------------------------------

cdef object _view_hook = None       # autograd: record a view of a tensor requiring grad
cdef object _split_hook = None      # autograd: record split's pieces as one node (False: declined)
cdef object _inplace_hook = None    # autograd: check an in-place write on a tensor requiring grad
cdef object _grad_wrap_hook = None  # autograd: attach grad_fn to clone/contiguous results
# the modules above _tensor that some Tensor/Storage methods end in; each
# registers its function when it loads (they import _tensor, so _tensor cannot
# import them): ptcore._dlpack's to_dlpack (Tensor.__dlpack__),
# ptcore._shared_memory's _share_storage (Storage.share_memory_) and
# ptcore._ops.creation's tensor (assigning a nested sequence, t[i] = [...])
cdef object _to_dlpack_fn = None
cdef object _share_storage_fn = None
cdef object _tensor_from_data_fn = None
# the tracing layer (_dispatch.tracing): while a trace that records sizes runs
# on some thread, shape/size()/numel() call this hook and return its result:
# hook(t, which, value), which: None (the shape) or a wrapped dimension (value:
# the whole shape), or "numel" (value: the number of elements), so a traced
# program's sizes follow its inputs; None (no such trace anywhere) costs one
# comparison
cdef object _size_hook = None


def _set_size_hook(hook):
    global _size_hook
    _size_hook = hook


def _set_autograd_hooks(view_hook, inplace_hook, grad_wrap_hook, split_hook=None):
    global _view_hook, _inplace_hook, _grad_wrap_hook, _split_hook
    _view_hook = view_hook
    _inplace_hook = inplace_hook
    _grad_wrap_hook = grad_wrap_hook
    _split_hook = split_hook if view_hook is not None else None


def _set_module_hooks(to_dlpack=None, share_storage=None, tensor_from_data=None):
    """Register the functions of the modules above _tensor that Tensor and
    Storage methods end in (each module passes its own when it loads)."""
    global _to_dlpack_fn, _share_storage_fn, _tensor_from_data_fn
    if to_dlpack is not None:
        _to_dlpack_fn = to_dlpack
    if share_storage is not None:
        _share_storage_fn = share_storage
    if tensor_from_data is not None:
        _tensor_from_data_fn = tensor_from_data


cdef object _module_hook(object fn, str what):
    if fn is None:
        raise RuntimeError(f"{what}: ptcore is only partly imported (import ptcore first)")
    return fn


def _set_device_ops(ops, device_type="cuda"):
    """Install (None: remove) the device runtime's tensor ops for ``device_type``."""
    _DEVICE_OPS[_DEVICE_TYPES[device_type]] = ops


cdef object _grad_wrap(_TensorBase src, object out, str name):
    if _grad_wrap_hook is not None and src._requires_grad:
        return _grad_wrap_hook(src, out, name)
    return out


cdef object _no_device(_TensorBase t, str what):
    _require_cpu(t._storage.device, what)
    raise RuntimeError(f"{what}: unsupported device {t._storage.device}")


cdef object _device_copy(_TensorBase dst, object src, bint non_blocking):
    # the runtime of the side that is off the CPU; with two such devices the
    # higher type code's (meta: a copy out of it has no data to move)
    cdef device dev = dst._storage.device
    cdef device sdev = (<_TensorBase>src)._storage.device
    if sdev._type_code > dev._type_code:
        dev = sdev
    ops = _ops_of(dev)
    if ops is None:
        return _no_device(dst if dev is dst._storage.device else <_TensorBase>src, "copy_")
    return ops.copy_(dst, src, non_blocking)


cdef object _device_fill(_TensorBase t, object value):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "fill_")
    return ops.fill_(t, value)


cdef object _device_clone(_TensorBase t, bint preserve):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "clone")
    return ops.clone(t, preserve)


cdef object _device_item(_TensorBase t):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "item")
    return ops.item(t)


cdef object _pin(object t):
    """``pin_memory=True`` of a factory: the tensor in page-locked memory."""
    if (<_TensorBase>t)._storage.device._type_code != 0:
        raise RuntimeError(f"pin_memory=True needs a CPU tensor, got one on {(<_TensorBase>t)._storage.device}")
    rg = (<_TensorBase>t)._requires_grad
    p = t.pin_memory()
    (<_TensorBase>p)._requires_grad = rg
    return p


cdef int _check_host_data(_TensorBase t, object extra, str what) except -1:
    """Raise NotImplementedError when an op with only a CPU kernel gets a
    device tensor (``t`` or a tensor in ``extra``): device memory is never
    read on the host."""
    cdef device dev = t._storage.device
    if dev._type_code == 0:
        if isinstance(extra, _TensorBase):
            dev = (<_TensorBase>extra)._storage.device
        elif isinstance(extra, (tuple, list)):
            for x in extra:
                if isinstance(x, _TensorBase) and (<_TensorBase>x)._storage.device._type_code != 0:
                    dev = (<_TensorBase>x)._storage.device
                    break
                if isinstance(x, (tuple, list)):
                    _check_host_data(t, x, what)
    if dev._type_code != 0:
        raise NotImplementedError(f"{what}: no {dev.type.upper()} kernel yet for this op "
                                  f"(an argument is on {dev}); move the tensors to the CPU with .cpu()")
    return 0


cdef object _dlpack_export(_TensorBase t, object stream, object max_version, object dl_device, object copy):
    return _module_hook(_to_dlpack_fn, "__dlpack__")(t, stream=stream, max_version=max_version,
                                                      dl_device=dl_device, copy=copy)
