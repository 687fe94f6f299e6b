# ptcore._tensor, fast factories: empty, zeros, ones, full, empty_strided, *_like.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# fast factories (the per-call cost of zeros(1) matters)
# ---------------------------------------------------------------------------

cdef inline dtype _resolve_dtype(object dt, dtype default):
    if dt is None:
        return default
    if type(dt) is dtype:
        return <dtype>dt
    return _dtype_arg(dt)


cdef dtype _dtype_arg(object dt):
    if isinstance(dt, dtype):
        return <dtype>dt
    if isinstance(dt, str) and dt in _DTYPE_BY_NAME:
        return <dtype>_DTYPE_BY_NAME[dt]
    if dt is float:
        return float64
    if dt is int:
        return int64
    if dt is bool:
        return bool_
    if dt is complex:
        return complex128
    try:
        return <dtype>_dtype_from_numpy(dt)
    except TypeError:
        raise TypeError(f"expected a ptcore.dtype, got {dt!r}") from None


def _as_dtype(dt):
    """Validate a dtype argument (ptcore dtype, NumPy dtype, or Python type)."""
    return _dtype_arg(dt)


cdef int _check_requires_grad(_TensorBase t, bint rg) except -1:
    if rg:
        if t._dtype._category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return 0


cdef _TensorBase _factory(tuple size, object dtype_, object device_, bint rg, dtype default,
                          int mode, object value, str fname):
    # mode 0 empty, 1 zeros, 2 full(value)
    cdef list shape = _parse_shape_args(size, fname)
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    cdef dtype dt = _resolve_dtype(dtype_, default)
    cdef device dev = _as_device(device_)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    for i in range(nd):
        sh[i] = shape[i]
    cdef _TensorBase t
    if dev._type_code != 0:
        _checked_nbytes(nd, sh, dt.itemsize)
        _require_cpu(dev, fname)
        t = _ops_of(dev).empty(shape, dt, dev)
        if mode == 1:
            t.zero_()
        elif mode == 2:
            t.fill_(value)
        if mode:
            t._vc = _VersionCounter.__new__(_VersionCounter)    # a new tensor: version 0, as torch's
    else:
        t = _empty_contig(dt, nd, sh, dev, mode == 1)
        if mode == 2:
            _fill(t, value)
    _check_requires_grad(t, rg)
    return t


cdef int _check_dtype_kwarg(str fname, object dtype_) except -1:
    """torch's parser: ``dtype=`` is a torch dtype (or Python's bool/int/float/complex);
    a NumPy dtype or type is a TypeError."""
    if dtype_ is not None and not isinstance(dtype_, dtype) and dtype_ not in (bool, int, float,
                                                                              complex):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not "
                        f"{'type' if isinstance(dtype_, type) else _typename(dtype_)}")
    return 0


cdef int _check_factory_opts(str fname, object dtype_, object layout, object rg, object pin,
                             object out) except -1:
    """torch's parser checks of a factory's keywords: ``requires_grad`` and
    ``pin_memory`` are bools (or None), ``layout`` a layout, and an explicit
    ``dtype`` must be ``out``'s."""
    if rg is not None and rg is not True and rg is not False:
        raise TypeError(f"{fname}(): argument 'requires_grad' must be bool, not {_typename(rg)}")
    if pin is not None and pin is not True and pin is not False:
        raise TypeError(f"{fname}(): argument 'pin_memory' must be bool, not {_typename(pin)}")
    if layout is not None and type(layout) is not _layout_type:
        raise TypeError(f"{fname}(): argument 'layout' must be torch.layout, not {_typename(layout)}")
    _check_dtype_kwarg(fname, dtype_)
    if dtype_ is not None and isinstance(out, _TensorBase) \
            and _dtype_arg(dtype_) is not (<_TensorBase>out)._dtype:
        raise RuntimeError(f"dtype {_dtype_arg(dtype_)._legacy} does not match dtype of out "
                           f"parameter ({(<_TensorBase>out)._dtype._legacy})")
    return 0


def _check_factory_kwargs(fname, dtype=None, layout=None, requires_grad=False, pin_memory=False,
                          out=None):
    """Python entry of the factories' keyword checks (for factories written in Python)."""
    _check_factory_opts(fname, dtype, layout, requires_grad, pin_memory, out)


cdef object _finish_out(_TensorBase t, object out, str fname):
    if out is None:
        return t
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {_typename(out)}")
    # the factories (empty, zeros, ones, full) resize their out without torch's
    # deprecation warning of the resize (their kernels call resize_ directly)
    if tuple(out.shape) != tuple(t.shape):
        out.resize_(t.shape)
    out.copy_(t)
    return out


cdef tuple _size_args(tuple args, object size, str fname):
    """Shape arguments given positionally or as the ``size=`` keyword (as PyTorch)."""
    if size is None:
        if not args:
            # (torch: the shape is required; ``zeros(())`` or ``zeros(size=())`` is 0-d)
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        return args
    if args:
        raise TypeError(f"{fname}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not {_typename(size)}")
    return (size,)


# torch's fill of uninitialised memory under use_deterministic_algorithms(True)
# (torch.utils.deterministic.fill_uninitialized_memory): set by ptcore._settings
cdef bint _det_fill = False
cdef object _det_fill_fn = None


def _set_deterministic_fill(bint on, fill_fn=None):
    """Fill the memory of empty tensors with ``fill_fn(t)`` (NaN or the dtype's
    largest value) while ``on``."""
    global _det_fill, _det_fill_fn
    _det_fill = on and fill_fn is not None
    _det_fill_fn = fill_fn


cdef inline _TensorBase _det_filled(_TensorBase t):
    if _det_fill and t._numel:
        _det_fill_fn(t)
    return t


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """Uninitialised tensor of the given shape (``empty(2, 3)``, ``empty((2, 3))`` or ``empty(size=...)``)."""
    size = _size_args(args, size, "empty")
    _check_factory_opts("empty", dtype, layout, requires_grad, pin_memory, out)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve (empty() has no input whose "
                           "layout it could preserve)")
    cdef _TensorBase t = _det_filled(
        _factory(size, dtype, device, requires_grad, _default_dtype, 0, None, "empty"))
    if memory_format is not None and memory_format is not contiguous_format:
        t = _to_memory_format(t, memory_format)
        t._requires_grad = requires_grad
    if pin_memory:
        t = _pin(t)
    return _finish_out(t, out, "empty")


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Tensor of zeros (large ones are zero-filled lazily by the OS)."""
    size = _size_args(args, size, "zeros")
    _check_factory_opts("zeros", dtype, layout, requires_grad, pin_memory, out)
    t = _factory(size, dtype, device, requires_grad, _default_dtype, 1, None, "zeros")
    return _finish_out(_pin(t) if pin_memory else t, out, "zeros")


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Tensor of ones."""
    size = _size_args(args, size, "ones")
    _check_factory_opts("ones", dtype, layout, requires_grad, pin_memory, out)
    t = _factory(size, dtype, device, requires_grad, _default_dtype, 2, 1, "ones")
    return _finish_out(_pin(t) if pin_memory else t, out, "ones")


cdef dtype _scalar_dtype(object v):
    """The dtype PyTorch gives a Python number used as a fill value (as a ``Scalar``)."""
    cdef dtype d
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int) or isinstance(v, _np.integer):
        return int64
    if isinstance(v, complex) or isinstance(v, _np.complexfloating):
        return _default_complex()
    if isinstance(v, _TensorBase):
        if (<_TensorBase>v)._ndim != 0:
            raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {_typename(v)}")
        d = (<_TensorBase>v)._dtype
        if d._category == 0:
            return bool_
        if d._category == 1:
            return int64
        if d._category == 3:
            return _default_complex()
    return _default_dtype


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Tensor filled with ``fill_value`` (dtype inferred from the value, as PyTorch)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_typename(size)}")
    _check_factory_opts("full", dtype, layout, requires_grad, pin_memory, out)
    t = _factory((size,), dtype, device, requires_grad, _scalar_dtype(fill_value), 2, fill_value, "full")
    return _finish_out(_pin(t) if pin_memory else t, out, "full")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """Uninitialised tensor with explicit strides (in elements)."""
    _check_dtype_kwarg("empty_strided", dtype)
    t = _empty_strided_impl(size, stride, dtype, device, requires_grad)
    return _pin(t) if pin_memory else t


cdef _empty_strided_impl(size, stride, dtype_, device_, bint requires_grad):
    cdef list sh = _int64_list(size, "empty_strided", "size")
    cdef list st = _int64_list(stride, "empty_strided", "stride")
    if len(sh) != len(st):
        raise RuntimeError(
            f"mismatch in length of strides and shape: {len(st)} strides for {len(sh)} dims")
    cdef dtype dt = _resolve_dtype(dtype_, _default_dtype)
    cdef device dev = _as_device(device_)
    cdef _TensorBase t
    if dev._type_code != 0:
        _require_cpu(dev, "empty_strided")
    for s in sh:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_fmt_list(sh)}")
    for s in st:
        if s < 0:
            raise RuntimeError(f"empty_strided: negative strides are not supported, got {_fmt_list(st)}")
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i
    if len(sh) > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {len(sh)}")
    for i in range(len(sh)):
        csh[i] = sh[i]
        cst[i] = st[i]
    cdef Py_ssize_t need = _storage_nbytes(len(sh), csh, cst, 0, dt.itemsize)
    _checked_numel(len(sh), csh)
    if dev._type_code != 0:
        t = _det_filled(_ops_of(dev).empty_strided(sh, st, dt, dev))
        _check_requires_grad(t, requires_grad)
        return t
    cdef Storage storage = _new_host_storage(need, False)
    t = _det_filled(_make_tensor(storage, dt, len(sh), csh, cst, 0))
    _check_requires_grad(t, requires_grad)
    return t


def _like(_TensorBase src not None, dtype_, device_, bint rg, int mode, value, memory_format):
    """empty_like/zeros_like/ones_like/full_like: PyTorch keeps a dense input's layout."""
    cdef dtype dt = _resolve_dtype(dtype_, src._dtype)
    cdef device dev = src._storage.device if device_ is None else _as_device(device_)
    cdef _TensorBase t
    cdef bint preserve = memory_format is None or memory_format is preserve_format
    if dev._type_code != 0 or src._storage.device._type_code != 0:
        if not (preserve and dev == src._storage.device):
            t = _factory((list(src.shape),), dt, dev, rg, dt, mode, value, "like")
            return _det_filled(t) if mode == 0 else t
        t = _empty_strided_like(src, dt, mode == 1)     # on src's device, its layout kept
        if mode == 2:
            t.fill_(value)
        elif mode == 0:
            _det_filled(t)
        _check_requires_grad(t, rg)
        return t
    if preserve:
        t = _empty_strided_like(src, dt, mode == 1)
    elif memory_format is contiguous_format:
        t = _empty_contig(dt, src._ndim, src._shape, dev, mode == 1)
    else:
        t = _to_memory_format(_empty_contig(dt, src._ndim, src._shape, dev, mode == 1), memory_format)
    if mode == 2:
        _fill(t, value)
    elif mode == 0:
        _det_filled(t)
    _check_requires_grad(t, rg)
    return t
