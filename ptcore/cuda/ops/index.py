"""CUDA kernels of the device-generic op front-ends: pointwise (``ew_*``),
indexing, masking, concatenation, sorting and selection.

The CPU front-ends of these ops (``ptcore._ops.pointwise``, ``shape``,
``indexing``, ``sorting``) do every argument check, dtype rule and output
allocation themselves and reach their element loops through
the front-ends' device loops (``cpu_kernel(name, tensor.device, cpu_loop)``).  This module
registers the ``"cuda"`` implementations of those loops, written with the
kernels of :mod:`ptcore.cuda.kernels.library` (elementwise, gather/scatter) and
:mod:`ptcore.cuda.kernels.index` (sort, compaction, nonzero, median), and
the ops declared ``device="frontend"`` run their own front-ends on CUDA
tensors (``OpDef.kernels['cuda'] = OpDef.raw``,
:func:`ptcore._dispatch.device.register_frontends`): the semantics are the
CPU op's.  So do the pointwise ops left with no CUDA kernel of their own
(:func:`register` gives them their front-ends: they run the ``ew_*`` loops).

Index values are validated by the front-ends before a kernel runs (a sync
for device indices); ``nonzero``/``masked_select`` read their result size
back (a sync, as on PyTorch).
"""
import ctypes

from ptcore import _tensor as _C
from ptcore._dispatch.device import use_frontend
from ptcore._dispatch.table import lookup, OPS
from ptcore._ops.indexing import _broadcast_strides, _plan
from ptcore._ops._out import assert_no_internal_overlap, assert_no_partial_overlap
from ptcore.cuda.kernels import library as K
from ptcore.cuda.kernels import row_sort as KX
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops import tensors as _tensors
from ptcore.cuda.ops.registration import Registrations
from ptcore.cuda.runtime import state as _runtime

__all__ = ["register"]

# this module's loops, each registered where its function is defined
cuda = Registrations()

_I64 = None


def _int64():
    return _C.int64


def _contig_copy(x, dt=None, shape=None):
    """A fresh contiguous device tensor holding ``x`` (cast to ``dt``,
    broadcast to ``shape``)."""
    out = L._empty(list(shape if shape is not None else x.shape), dt or x.dtype, x.device)
    if out.numel():
        L.cast_copy(out, x)
    return out


def _dense(x, dt=None):
    if x.is_contiguous() and (dt is None or x.dtype is dt):
        return x
    return _contig_copy(x, dt)


# ---------------------------------------------------------------------------
# pointwise: the ew_unary / ew_binary / ew_ternary loops of _ops.pointwise

def _fixed_out_ops():
    """(family, op) -> the result dtype of the kernels whose result is not
    the compute dtype (the comparisons' bool, frexp's int32 exponent)."""
    ops = {("unary", r[0]): r[2] for r in K.UNARY if r[2] != "same"}
    ops.update({("binary", r[0]): r[2] for r in K.BINARY if r[2] != "same"})
    return {k: _C.bool_ if v == "bool" else getattr(_C, v) for k, v in ops.items()}


_FIXED_OUT = _fixed_out_ops()
_REAL_OUT = frozenset({"abs", "angle"})        # complex in, real out


def _bshape(tensors, fname):
    shape = []
    for t in tensors:
        s = list(t.shape)
        n = max(len(shape), len(s))
        a = [1] * (n - len(shape)) + shape
        b = [1] * (n - len(s)) + s
        res = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"{fname}: The size of tensor a ({x}) must match the size of tensor b "
                                   f"({y}) at non-singleton dimension {i}")
            res.append(y if x == 1 else x)
        shape = res
    return shape


_NUMBER = (float, int)
_CLAMP_BY_PARAMS = (_C.float32, _C.float64)


def _check_written(out, inputs):
    """torch's checks of the tensor an elementwise loop writes (in place or
    ``out=``), as the CPU driver makes them: no element of it written twice,
    no input overlapping it in part (the same memory exactly is fine)."""
    assert_no_internal_overlap(out)
    for t in inputs:
        if isinstance(t, _C._TensorBase) and t is not out:
            assert_no_partial_overlap(out, t)


def _ew(family, op, inputs, out, compute, result, fname, inplace, d0=0.0, d1=0.0, d2=0.0, i0=0):
    if op == "clamp" and family == "ternary" and compute in _CLAMP_BY_PARAMS and \
            type(inputs[1]) in _NUMBER and type(inputs[2]) in _NUMBER and inputs[1] <= inputs[2]:
        # number bounds (lo <= hi, neither NaN) of a float32/float64 clamp: the
        # hardtanh kernel takes them as parameters, where the clamp kernel
        # reads two filled 0-d tensors (three launches for one)
        return _ew("unary", "hardtanh", inputs[:1], out, compute, result, fname, inplace,
                   float(inputs[1]), float(inputs[2]))
    if op == "lerp" and family == "ternary" and type(inputs[2]) in _NUMBER and \
            (compute is _C.float16 or compute is _C.bfloat16):
        # torch's lerp_scalar_kernel keeps a number weight in opmath (float32) precision:
        # the lerp runs in float32 and rounds once (the weight was rounded to compute's dtype)
        res = _ew(family, op, inputs, None, _C.float32, compute, fname, inplace, d0, d1, d2, i0)
        return res if out is None else _into_out(out, res, list(res.shape), result, fname,
                                                 inplace)
    if out is not None:
        _check_written(out, inputs)
    dev = L._device_of(*(list(inputs) + ([out] if out is not None else [])))
    tag = L._tag(compute, fname)
    if compute.is_complex and K.kernel_name(family, op, tag, "c") not in K.all_kernels():
        raise NotImplementedError(f"\"{fname}\" not implemented for '{compute._legacy}' on CUDA")
    params = None
    if family == "ternary" and op == "where":
        # the CUDA kernel takes (condition, x, y)
        ops = [L._as_operand(inputs[2], _C.bool_, dev), L._as_operand(inputs[0], compute, dev),
               L._as_operand(inputs[1], compute, dev)]
    elif family == "binary" and type(inputs[0]) in _NUMBER and op in K.REFLECTED_SCALAR \
            and isinstance(inputs[1], _C._TensorBase) and not compute.is_complex \
            and compute is not _C.bool_:
        # a number first (``2 // x``, ``2 % x``): the reflected scalar kernel, the number
        # its argument (rounded to compute as a filled 0-d tensor was), not a device tensor
        ops = [L._as_operand(inputs[1], compute, dev)]
        params = L._number_params(compute, inputs[0])
        family, op = "scalar", K.REFLECTED_SCALAR[op]
    else:
        ops = [L._as_operand(x, compute, dev) for x in inputs]
    if params is None:
        params = L._params(d0=d0, d1=d1, d2=d2, i0=i0)
    shape = _bshape(ops, fname)
    loop_out = _FIXED_OUT.get((family, op), compute)
    if compute.is_complex and op in _REAL_OUT:
        loop_out = compute.to_real()
    if out is not None and _direct_out(out, shape, loop_out, result, dev, ops):
        # in place (x.abs_()) or into a fitting out=: the kernel writes out itself
        L._elementwise(family, (op, (tag,)), out, ops, params)
        out._bump_version()
        return out
    res = L._empty(shape, loop_out, dev)
    L._elementwise(family, (op, (tag,)), res, ops, params)
    if out is None:
        return res if result is loop_out or result is None else L._contig(res).to(result)
    return _into_out(out, res, shape, result, fname, inplace)


def _into_out(out, res, shape, result, fname, inplace):
    """Copy the elementwise result ``res`` into ``out=`` (resized; dtype checked)."""
    if not isinstance(out, _C._TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if list(out.shape) != shape:
        if inplace:
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{shape}")
        out.resize_(shape)
    if result is not None and not _can_cast(result, out.dtype):
        raise RuntimeError(f"result type {result._legacy} can't be cast to the desired output type "
                           f"{out.dtype._legacy}")
    _C._TensorBase.copy_(out, res)
    return out


def _span(t):
    """The bytes ``[lo, hi)`` tensor ``t`` can reach."""
    lo = hi = t.data_ptr()
    for n, st in zip(t.shape, t.stride()):
        if n > 1:
            if st < 0:
                lo += (n - 1) * st * t.element_size()
            else:
                hi += (n - 1) * st * t.element_size()
    return lo, hi + t.element_size()


def _direct_out(out, shape, loop_out, result, dev, ops):
    """Whether the elementwise kernel may write ``out`` directly: a
    contiguous tensor of the loop's dtype and the broadcast shape on
    ``dev`` (so no cast or resize), where every operand is ``out`` itself
    (the same elements, read before written at each index) or lies apart
    from it.  Anything else goes through a fresh result and a copy."""
    if not isinstance(out, _C._TensorBase) or out.dtype is not loop_out or \
            (result is not None and result is not loop_out) or out.device != dev or \
            not out.is_contiguous() or list(out.shape) != shape or out.numel() == 0:
        return False
    lo = hi = None
    for x in ops:
        if x is out or x.numel() == 0:
            continue
        if lo is None:
            lo, hi = _span(out)
        if x.data_ptr() == out.data_ptr() and x.dtype is out.dtype and \
                list(x.shape) == shape and x.stride() == out.stride():
            continue
        xlo, xhi = _span(x)
        if xlo < hi and lo < xhi:
            return False
    return True


def _can_cast(frm, to):
    import ptcore
    return ptcore.can_cast(frm, to)


# [dense_fast.unary_params / binary_params / ternary_params] while the C fast
# paths are installed (their install), else [None]: the loops' calls on
# contiguous operands of the compute dtype, from C
_unary_params_fast = [None]
_binary_params_fast = [None]
_ternary_params_fast = [None]


@cuda.loop('ew_unary')
def _ew_unary(op, x, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, d2=0.0, i0=0):
    fast = _unary_params_fast[0]
    if fast is not None:
        r = fast(op, x, out, compute, result, d0, d1, d2, i0)
        if r is not None:
            return r
    return _ew("unary", op, [x], out, compute, result, fname, inplace, d0, d1, d2, i0)


@cuda.loop('ew_binary')
def _ew_binary(op, a, b, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, d2=0.0, i0=0):
    fast = _binary_params_fast[0]
    if fast is not None and out is None and (result is compute or result is None):
        # two dense operands of one floating dtype and shape: from C
        r = fast(op, a, b, compute, d0, d1, d2, i0)
        if r is not None:
            return r
    return _ew("binary", op, [a, b], out, compute, result, fname, inplace, d0, d1, d2, i0)


@cuda.loop('ew_ternary')
def _ew_ternary(op, a, b, c, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, i0=0):
    fast = _ternary_params_fast[0]
    if fast is not None:
        r = fast(op, a, b, c, out, compute, result, d0, d1, i0)
        if r is not None:
            return r
    return _ew("ternary", op, [a, b, c], out, compute, result, fname, inplace, d0, d1, 0.0, i0)


# ---------------------------------------------------------------------------
# gather / scatter (the index kernels: out, src, index operands)

_BIG = 1 << 62


def _index_launch(op, dt, shape, out, out_strides, src, src_strides, index, index_strides,
                  dim_size, dim_stride, alpha=1):
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    if dt.is_complex:
        # complex elements as (re, im) pairs of the real dtype: a trailing dim of 2
        # (the index operand broadcast along it); scatter_add then adds part by part
        if isinstance(alpha, complex) and alpha.imag != 0:
            raise NotImplementedError(f"{op}: a complex alpha has no CUDA kernel for complex tensors")
        dt, shape = dt.to_real(), list(shape) + [2]
        out_strides = [2 * s for s in out_strides] + [1]
        src_strides = [2 * s for s in src_strides] + [1]
        index_strides = list(index_strides) + [0]
        dim_stride = 2 * dim_stride
        alpha = complex(alpha).real
        n *= 2
    tag = L._tag(dt, op)
    sizes, st = K.collapse_dims(list(shape) or [1], [list(out_strides), list(src_strides), list(index_strides)]
                                if shape else [[0], [0], [0]])
    # no error flag (NULL): the front-ends checked the range, and the kernel
    # counts negative values from the end as take/put/scatter allow them
    if dt.is_floating_point:
        p = L._params(d0=float(alpha))
    else:
        p = L._params(i0=int(alpha))
    L._launch(out.device.index, f"ptc_index_{op}_{tag}_s", n,
              [L._ll(n), L._ptr(out), L._ptr(src), L._ptr(index), L._ll(dim_size), L._ll(dim_stride),
               0, p, L._struct(K.pack_strided(sizes, st))])


def _long_index(index):
    return index if index.dtype is _C.int64 else _contig_copy(index, _C.int64)


def _dim_vector_strides(index, ndim, dim):
    st = [0] * ndim
    st[dim] = index.stride(0) if index.dim() else 0
    return st


@cuda.loop('index_select')
def _index_select(out, input, dim, index):
    index = _long_index(index)
    src_st = list(input.stride())
    src_st[dim] = 0
    _index_launch("gather", out.dtype, list(out.shape), out, out.stride(), input, src_st, index,
                  _dim_vector_strides(index, out.dim(), dim), input.shape[dim], input.stride(dim))


@cuda.loop('gather')
def _gather(out, input, dim, index):
    index = _long_index(index)
    src_st = list(input.stride())
    src_st[dim] = 0
    _index_launch("gather", out.dtype, list(index.shape), out, out.stride(), input, src_st, index,
                  list(index.stride()), input.shape[dim], input.stride(dim))


_SCATTER_ADD = ("add", "sum")


# scatter's/scatter_reduce's ``reduce=`` argument values -> their read-modify-write
# kernel (kept: a map of argument strings to kernels, not a list of ops)
_RMW_REDUCE = {"prod": "scatter_prod", "multiply": "scatter_prod", "amax": "scatter_amax",
               "amin": "scatter_amin"}
_RMW_DTYPES = ("float32", "float64", "int32", "int64")


def _scatter_op(reduce, fname, dt=None):
    if reduce is None:
        return "scatter"
    if reduce in _SCATTER_ADD:
        return "scatter_add"
    if reduce in _RMW_REDUCE and dt is not None and L._name(dt) in _RMW_DTYPES:
        return _RMW_REDUCE[reduce]
    raise NotImplementedError(f"{fname}(reduce={reduce!r}) has no CUDA kernel for {dt} "
                              "(sum/add for every dtype, prod/amax/amin for every real one)")


def _widened(self, reduce):
    """The dtype a prod/amax/amin scatter of ``self`` runs in when its own dtype has no
    kernel (bool and the small integers in int32, exact as torch's: products wrap; the
    half types in float32: amax/amin exact, prod rounded once, as torch's CPU
    scatter_reduce accumulates it -- its CUDA rounds every product, in no fixed order),
    else None."""
    if reduce not in _RMW_REDUCE or L._name(self.dtype) in _RMW_DTYPES:
        return None
    if self.dtype in (_C.bool_, _C.uint8, _C.int8, _C.int16):
        return _C.int32
    if self.dtype in (_C.float16, _C.bfloat16):
        return _C.float32
    return None


def _run_widened(fn, self, dim, index, src, reduce, wide):
    w = L.cast_copy(L._empty(tuple(self.shape), wide, self.device), self)
    fn(w, dim, index, L._as_operand(src, wide, self.device), reduce)
    self.copy_(w)


@cuda.loop('scatter')
def _scatter(self, dim, index, src, reduce):
    wide = _widened(self, reduce)
    if wide is not None:
        return _run_widened(_scatter, self, dim, index, src, reduce, wide)
    index = _long_index(index)
    src = L._as_operand(src, self.dtype, self.device)
    sstr = [0] * index.dim() if src.dim() == 0 else list(src.stride())
    out_st = list(self.stride())
    out_st[dim] = 0
    _index_launch(_scatter_op(reduce, "scatter", self.dtype), self.dtype, list(index.shape), self, out_st, src, sstr,
                  index, list(index.stride()), self.shape[dim], self.stride(dim))


@cuda.loop('index_put_dim')
def _index_put_dim(self, dim, index, source, reduce):
    wide = _widened(self, reduce)
    if wide is not None:
        return _run_widened(_index_put_dim, self, dim, index, source, reduce, wide)
    index = _long_index(index)
    source = L._as_operand(source, self.dtype, self.device)
    shape = list(self.shape)
    shape[dim] = index.numel()
    dstr = [0] * len(shape) if source.dim() == 0 else list(source.stride())
    out_st = list(self.stride())
    out_st[dim] = 0
    _index_launch(_scatter_op(reduce, "index_reduce_", self.dtype), self.dtype, shape, self, out_st, source, dstr, index,
                  _dim_vector_strides(index, len(shape), dim), self.shape[dim], self.stride(dim))


@cuda.loop('scatter_mean_finish')
def _scatter_mean_finish(self, counts):
    """self /= counts where counts > 0 (floor division for integers)."""
    import ptcore
    c = _contig_copy(counts, self.dtype)
    pos = _contig_copy(counts, _C.bool_)
    one = L._as_operand(1, self.dtype, self.device)
    safe = L._empty(list(self.shape), self.dtype, self.device)
    L._elementwise("ternary", ("where", (L._tag(self.dtype, "scatter_reduce"),)), safe, [pos, c, one],
                   L._params())
    op = "div" if self.dtype.is_floating_point else "div_floor"
    L._elementwise("binary", (op, (L._tag(self.dtype, "scatter_reduce"),)), self, [self, safe], L._params())


@cuda.loop('scale')
def _scale(t, alpha):
    a = L._as_operand(alpha, t.dtype, t.device)
    L._elementwise("binary", ("mul", (L._tag(t.dtype, "scale"),)), t, [t, a], L._params())


@cuda.loop('mod_index')
def _mod_index(index, size):
    s = L._as_operand(int(size), index.dtype, index.device)
    L._elementwise("binary", ("remainder", (L._tag(index.dtype, "mod_index"),)), index, [index, s],
                   L._params())


@cuda.loop('index_bounds')
def _index_bounds(index, size, allow_negative):
    """The first out-of-range value of int64 ``index`` (in its logical order)
    or None: one kernel finds the first bad position, one read of it (a
    sync), a second read for the value on the error path only."""
    n = index.numel()
    if n == 0:
        return None
    dev = index.device
    flat = index if index.dtype is _C.int64 and index.is_contiguous() else _contig_copy(index, _C.int64)
    first = L._empty([1], _C.int64, dev)
    L.fill(first, n)
    L._launch(dev.index, "ptc_index_bounds_c", n,
              [L._ll(n), L._ptr(flat), L._ll(-size if allow_negative else 0), L._ll(size), L._ptr(first)])
    pos = int(first.item())
    if pos >= n:
        return None
    return int(flat.reshape(-1)[pos].item())


# ---------------------------------------------------------------------------
# masks: masked_fill_, masked_select, nonzero

@cuda.loop('masked_fill_')
def _masked_fill(self, mask, value):
    if isinstance(value, _C._TensorBase):
        value = value.item()
    dt = self.dtype
    if dt.is_complex:
        value = complex(value)
        p = L._params(d0=value.real, d1=value.imag)
    else:
        p = L._params(d0=float(value)) if dt.is_floating_point else L._params(i0=int(value))
    m = L._as_operand(mask, _C.bool_, self.device)
    L._elementwise("binary", ("masked_fill", (L._tag(dt, "masked_fill_"),)), self, [self, m], p)


# Scans along long contiguous rows run in chunks of at least _SCAN_CHUNK
# elements, many blocks a row (the one-block-per-row kernel scanned 2^21
# elements of a mask in 8 ms on the H200: nonzero, masked_select, x[mask]),
# when the rows are long and too few to fill the device on their own.
_SCAN_CHUNK = 2048
_SCAN_MAX_CHUNKS = 1024         # a row's chunks: each ``_k`` block reads the partials before it
_SCAN_FEW_ROWS = 256
_ACC_DTYPE = {"long long": "int64", "float": "float32", "double": "float64"}


def _scan_chunks(M, n):
    """``(C, nch)``: the chunk length and the chunks per row when rows of
    ``n`` are long and too few to fill the device one block each; None
    for one block per row."""
    if M >= _SCAN_FEW_ROWS or n < 4 * _SCAN_CHUNK:
        return None
    C = max(_SCAN_CHUNK, -(-n // _SCAN_MAX_CHUNKS))
    C = -(-C // 128) * 128
    return C, -(-n // C)


def scan_rows(op, rows, res, M, n):
    """``res`` (contiguous (M, n), the scan's output dtype) = inclusive
    ``op`` ("cumsum" or "cumprod") along the rows of contiguous ``rows``."""
    if M * n == 0:
        return
    dev = rows.device
    name = f"ptc_scan_{op}_{L._tag(rows.dtype, op)}_{L._tag(res.dtype, op)}"
    split = _scan_chunks(M, n)
    if split is None:
        L._launch(dev.index, name + "_c", M,
                  [L._ll(M), L._ll(n), L._ptr(res), L._ptr(rows), L._params()], rows=True)
        return
    C, nch = split
    acc = getattr(_C, _ACC_DTYPE[K._scan_acc_type(L._name(rows.dtype))])
    part = L._empty([M * nch], acc, dev)
    args = [L._ll(M), L._ll(n), L._ll(C), L._ll(nch)]
    L._launch(dev.index, name + "_p", M * nch, args + [L._ptr(part), L._ptr(rows)], rows=True)
    L._launch(dev.index, name + "_k", M * nch, args + [L._ptr(res), L._ptr(rows), L._ptr(part)],
              rows=True)


#: rows up to this long are scanned by one thread each (cummax, cummin, logcumsumexp)
_SCAN_THREAD_ROW = 32


def line_scan(op, rows, res, idx, M, n):
    """``res`` (contiguous (M, n), ``rows``' dtype) = inclusive ``op``
    ("cummax", "cummin" with the positions into ``idx``, contiguous (M, n)
    int64; "logcumsumexp", ``idx`` None) along the rows of contiguous
    ``rows``: one thread a row for short rows, one block a row, or chunks
    of a long row over many blocks (:func:`_scan_chunks`)."""
    if M * n == 0:
        return
    dev = rows.device
    name = f"ptc_scan_{op}_{L._tag(rows.dtype, op)}"
    ip = 0 if idx is None else L._ptr(idx)
    head = [L._ll(M), L._ll(n), L._ptr(res), ip, L._ptr(rows)]
    if n <= _SCAN_THREAD_ROW:
        L._launch(dev.index, name + "_t", M, head)
        return
    split = _scan_chunks(M, n)
    if split is None:
        L._launch(dev.index, name + "_c", M, head, rows=True)
        return
    C, nch = split
    # the partial states: (value, int64 position) pairs of 16 bytes, or the
    # accumulation type of log-add-exp
    if idx is None:
        part = L._empty([M * nch], _C.float64 if rows.dtype is _C.float64 else _C.float32, dev)
    else:
        part = L._empty([M * nch, 2], _C.int64, dev)
    args = [L._ll(M), L._ll(n), L._ll(C), L._ll(nch)]
    L._launch(dev.index, name + "_p", M * nch, args + [L._ptr(part), L._ptr(rows)], rows=True)
    L._launch(dev.index, name + "_k", M * nch, args + [L._ptr(res), ip, L._ptr(rows), L._ptr(part)],
              rows=True)


def _prefix(mask_c):
    """Inclusive prefix sum (int64) of a contiguous flat bool tensor and its total (a sync)."""
    n = mask_c.numel()
    pos = L._empty([n], _C.int64, mask_c.device)
    scan_rows("cumsum", mask_c, pos, 1, n)
    return pos, int(pos[n - 1].item())


@cuda.loop('masked_select')
def _masked_select(input, mask, shape):
    dev = input.device
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return L._empty([0], input.dtype, dev)
    if input.dtype.is_complex:          # the real and imaginary parts one after the other
        return L.by_parts(_masked_select, input, mask, shape)
    src = _contig_copy(input, shape=shape)
    m = _contig_copy(mask, _C.bool_, shape=shape)
    pos, total = _prefix(m)
    out = L._empty([total], input.dtype, dev)
    if total:
        L._launch(dev.index, f"ptc_index_compact_{L._tag(input.dtype, 'masked_select')}_c", n,
                  [L._ll(n), L._ptr(out), L._ptr(src), L._ptr(m), L._ptr(pos)])
    return out


@cuda.loop('masked_scatter_')
def _masked_scatter(self, mask, source):
    """self[mask] = source's leading elements; False when source is too short."""
    dev = self.device
    n = self.numel()
    if n == 0:
        return True
    if self.dtype.is_complex:           # part by part (the mask and positions are the same)
        re, im = L.parts(self)
        sre, sim = L.parts(_dense(source, self.dtype))
        return _masked_scatter(re, mask, sre) and _masked_scatter(im, mask, sim)
    m = _contig_copy(mask, _C.bool_, shape=list(self.shape))
    pos, total = _prefix(m)
    if total > source.numel():
        return False
    if total:
        tmp = _contig_copy(self)
        src = _dense(source.reshape(-1) if source.is_contiguous() else _contig_copy(source).reshape(-1), self.dtype)
        L._launch(dev.index, f"ptc_index_expand_{L._tag(self.dtype, 'masked_scatter_')}_c", n,
                  [L._ll(n), L._ptr(tmp), L._ptr(src), L._ptr(m), L._ptr(pos)])
        L.cast_copy(self, tmp)
    return True


@cuda.loop('tri_')
def _tri(t, diagonal, upper):
    """Zero ``t``'s elements below (upper) / above (lower) the ``diagonal``-th
    diagonal of its last two dims, in place: one kernel over ``t``'s strided
    elements (through a contiguous copy when its dims do not collapse to the
    strided kernels' limit)."""
    total = t.numel()
    if total == 0:
        return
    try:
        sizes, strides = K.collapse_dims(t.shape, [t.stride()])
        dst = t
    except ValueError:
        dst = t.contiguous()            # (the copy takes any number of dims)
        sizes, strides = [total], [[1]]
    L._launch(t.device.index, f"ptc_index_tri_zero_b{t.element_size()}_s", total,
              [L._ll(total), L._ptr(dst), L._ll(t.shape[-2]), L._ll(t.shape[-1]), L._ll(diagonal),
               L._ll(bool(upper)), K.pack_strided(sizes, strides)])
    if dst is not t:
        _tensors.copy_(t, dst)          # through the host: no strided kernel takes t's dims


@cuda.loop('nonzero')
def _nonzero(input):
    dev = input.device
    nd = input.dim()
    n = input.numel()
    if n == 0:
        return L._empty([0, nd], _C.int64, dev)
    m = _contig_copy(input, _C.bool_)
    pos, total = _prefix(m)
    out = L._empty([total, nd], _C.int64, dev)
    if total and nd:
        if nd > K.MAX_DIMS:
            raise NotImplementedError(f"nonzero: more than {K.MAX_DIMS} dims on CUDA")
        shape = L._struct(K.pack_strided(list(input.shape), [[0] * nd]))
        L._launch(dev.index, "ptc_index_nonzero_c", n, [L._ll(n), L._ptr(out), L._ptr(m), L._ptr(pos), shape])
    return out


# ---------------------------------------------------------------------------
# advanced indexing: linear offsets of the index tensors, then gather/scatter

def _offsets(indices, bshape, shape, positions, adjacent, src):
    """The index operand of the gather/scatter kernel for advanced indexing:
    ``(data strides, index, dim_size, dim_stride)``.  One index tensor is
    the operand itself (a view over ``shape``; the kernel counts its
    negative values from the end of its dim); several are summed into flat
    element offsets (int64, contiguous) first."""
    import ptcore
    indices = [None if t is None else _long_index(t) for t in indices]
    data_strides, idx, idx_strides, sizes, muls = _plan(src, indices, bshape, shape, positions, adjacent)
    views = [t.as_strided(list(shape), st, t.storage_offset()) for t, st in zip(idx, idx_strides)]
    if len(views) == 1:
        return data_strides, views[0], sizes[0], muls[0]
    off = None
    for v, size, mul in zip(views, sizes, muls):
        w = ptcore.where(ptcore.lt(v, 0), ptcore.add(v, size), v)
        term = ptcore.mul(w, mul)
        off = term if off is None else ptcore.add(off, term)
    return data_strides, _dense(off), _BIG, 1


@cuda.loop('index')
def _index(out, src, indices, bshape, positions, adjacent):
    shape = list(out.shape)
    data_strides, off, size, stride = _offsets(indices, bshape, shape, positions, adjacent, src)
    _index_launch("gather", out.dtype, shape, out, out.stride(), src, data_strides, off, off.stride(),
                  size, stride)


@cuda.loop('index_put_')
def _index_put(self, indices, values, accumulate, bshape, shape, positions, adjacent):
    shape = list(shape)
    data_strides, off, size, stride = _offsets(indices, bshape, shape, positions, adjacent, self)
    values = L._as_operand(values, self.dtype, self.device)
    vstr = _broadcast_strides(values, shape)
    _index_launch("scatter_add" if accumulate else "scatter", self.dtype, shape, self, data_strides, values,
                  vstr, off, off.stride(), size, stride)


# ---------------------------------------------------------------------------
# cat / stack / flip

@cuda.loop('cat')
def _cat(out, tensors, dim):
    off = 0
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0 and out.dim() != 1:
            continue                    # PyTorch's legacy empty tensors
        k = t.shape[dim]
        if k:
            L.cast_copy(out.narrow(dim, off, k), t)
        off += k


@cuda.loop('stack')
def _stack(out, tensors, dim):
    for i, t in enumerate(tensors):
        if t.numel():
            L.cast_copy(out.select(dim, i), t)


@cuda.loop('flip')
def _flip(out, input, flags):
    """``out`` = ``input`` reversed along the dims ``flags`` marks: one cast
    kernel reading ``input`` through negated strides from its last element
    along those dims (one contiguous pass per dim when the dims do not
    collapse to the strided kernels' limit)."""
    n = out.numel()
    if n == 0:
        return
    shape = list(input.shape)
    ist = list(input.stride())
    off = 0
    for d, f in enumerate(flags):
        if f and shape[d] > 1:
            off += (shape[d] - 1) * ist[d]
            ist[d] = -ist[d]
    try:
        sizes, strides = K.collapse_dims(shape, [list(out.stride()), ist])
    except ValueError:
        # contiguous operands flipped along one dim collapse to at most 3 dims
        cur = input.contiguous()        # (the copy takes any number of dims)
        for d, f in enumerate(flags):
            if f and shape[d] > 1:
                nxt = L._empty(shape, cur.dtype, cur.device)
                _flip(nxt, cur, [i == d for i in range(len(shape))])
                cur = nxt
        _tensors.copy_(out, cur)
        return
    tags = (L._tag(input.dtype, "copy_"), L._tag(out.dtype, "copy_"))
    L._launch(out.device.index, K.kernel_name("cast", "", tags, "s"), n,
              [L._ll(n), L._ptr(out), input.data_ptr() + off * input.element_size(), L._params(),
               K.pack_strided(sizes, strides)])


# ---------------------------------------------------------------------------
# sorting and selection

def _rows(x, dim):
    """x with ``dim`` moved last, as a contiguous (M, L) copy."""
    moved = x.movedim(dim, -1) if x.dim() else x.reshape(1)
    c = _contig_copy(moved)
    L_ = c.shape[-1] if c.dim() else 1
    return c.reshape(-1, L_) if c.numel() else c


# the row sort: bitonic networks in shared memory, then merge passes

_SORT_BLOCK = 256


def sort_rows(rows, descending):
    """(values, int64 positions) of every row of the contiguous (M, L)
    ``rows`` sorted stably (NaN last ascending, first descending): chunks of
    up to ``BITONIC_MAX`` elements by one block each, then ``log2`` merge
    passes of doubling runs for longer rows."""
    M, n = rows.shape
    dev = rows.device
    vals = L._empty([M, n], rows.dtype, dev)
    idx = L._empty([M, n], _C.int64, dev)
    if M == 0 or n == 0:
        return vals, idx
    tag = L._tag(rows.dtype, "sort")
    chunk = min(n, KX.BITONIC_MAX)
    P = 32
    while P < chunk:
        P *= 2
    chunk = min(P, n)
    nch = -(-n // chunk)
    smem = P * (rows.element_size() + 4)
    desc = ctypes.c_int(int(bool(descending)))
    drv = _runtime.lazy_init("sort")
    f = L._function(dev.index, f"ptc_sortx_bitonic_{tag}_c")
    sms = drv.device_properties(dev.index)["multi_processor_count"]
    drv.set_current(dev.index)
    L.launch_function(drv, f, max(1, min(M * nch, sms * 8)), _SORT_BLOCK,
                      [L._ll(M), L._ll(n), L._ll(chunk), L._ll(P), L._ptr(vals), L._ptr(idx),
                       L._ptr(rows), desc], smem, _runtime.current_stream_handle(dev.index))
    w = chunk
    if w < n:
        kv, ki = L._empty([M, n], rows.dtype, dev), L._empty([M, n], _C.int64, dev)
        while w < n:
            L._launch(dev.index, f"ptc_sortx_merge_{tag}_c", M * n,
                      [L._ll(M * n), L._ll(n), L._ll(w), L._ptr(vals), L._ptr(idx), L._ptr(kv),
                       L._ptr(ki), desc])
            vals, kv, idx, ki = kv, vals, ki, idx
            w *= 2
    return vals, idx


def _put_rows(dst, rows, dim):
    """Write (M, L') ``rows`` back into ``dst`` whose ``dim`` is the row axis."""
    if dst is None or dst.numel() == 0:
        return
    moved = dst.movedim(dim, -1)
    L.cast_copy(moved, rows.reshape(list(moved.shape)))


@cuda.loop('sort')
def _sort(x, dim, descending, stable, values, indices):
    if x.dtype in (_C.uint16, _C.uint32, _C.uint64):
        raise NotImplementedError(f"sort: no CUDA kernel for {x.dtype}")
    vals, idx = sort_rows(_rows(x, dim), descending)
    _put_rows(values, vals, dim)
    _put_rows(indices, idx, dim)


@cuda.loop('topk')
def _topk(x, k, dim, largest, sorted_, values, indices):
    vals, idx = sort_rows(_rows(x, dim), largest)
    _put_rows(values, vals[:, :k], dim)
    _put_rows(indices, idx[:, :k], dim)


@cuda.loop('kthvalue')
def _kthvalue(x, k, dim, values, indices):
    vals, idx = sort_rows(_rows(x, dim), False)
    _put_rows(values, vals[:, k - 1:k], dim)
    _put_rows(indices, idx[:, k - 1:k], dim)


@cuda.loop('mode')
def _mode(rows, vals, idx):
    M, Ln = rows.shape
    if M == 0:
        return
    sv, si = sort_rows(_dense(rows), False)
    L._launch(rows.device.index, f"ptc_index_mode_{L._tag(rows.dtype, 'mode')}_c", M,
              [L._ll(M), L._ll(Ln), L._ptr(vals), L._ptr(idx), L._ptr(sv), L._ptr(si)])


@cuda.loop('unique')
def _unique(x1, consecutive, return_inverse, return_counts):
    """Groups of equal values of a 1-D tensor (sorted unless ``consecutive``)
    -> (values, inverse or None, counts or None): a stable sort, the group
    starts as a mask, its prefix sum as group ids (one sync for the count)."""
    import ptcore
    dev = x1.device
    n = x1.shape[0]
    if n == 0:
        e = L._empty([0], _C.int64, dev)
        return L._empty([0], x1.dtype, dev), (e if return_inverse else None), (e if return_counts else None)
    if consecutive:
        sv, si = _contig_copy(x1), None
    else:
        sv, si = sort_rows(_contig_copy(x1).reshape(1, n), False)
        sv, si = sv.reshape(n), si.reshape(n)
    start = L._empty([n], _C.bool_, dev)
    L.fill(start[:1], True)
    if n > 1:
        L._elementwise("binary", ("ne", (L._tag(sv.dtype, "unique"),)), start[1:], [sv[1:], sv[:-1]], L._params())
    gid, groups = _prefix(start)
    vals = _masked_select(sv, start, [n])
    inv = cnt = None
    if return_inverse:
        g0 = ptcore.sub(gid, 1)
        if si is None:
            inv = g0
        else:
            inv = L._empty([n], _C.int64, dev)
            _index_launch("scatter", _C.int64, [n], inv, [0], g0, [1], si, [1], n, 1)
    if return_counts:
        starts = _nonzero(start).reshape(groups)
        ends = L._empty([groups], _C.int64, dev)
        if groups > 1:
            L.cast_copy(ends[:-1], starts[1:])
        L.fill(ends[groups - 1:], n)
        cnt = ptcore.sub(ends, starts)
    return vals, inv, cnt


def _median_kernel(ignore_nan):
    def kernel(rows, vals, idx):
        M, Ln = rows.shape
        if M == 0:
            return
        sv, si = sort_rows(_dense(rows), False)
        L._launch(rows.device.index, f"ptc_index_median_{L._tag(rows.dtype, 'median')}_c", M,
                  [L._ll(M), L._ll(Ln), L._ptr(vals), L._ptr(idx), L._ptr(sv), L._ptr(si),
                   ctypes.c_int(int(ignore_nan))])
    return kernel


cuda.loop("median")(_median_kernel(False))
cuda.loop("nanmedian")(_median_kernel(True))


# ---------------------------------------------------------------------------
# registration

_NAMESPACES = ("ptcore", "Tensor", "nn.functional", "linalg", "special")


def _use_frontends(names):
    """Let the device layer run these ops' own front-ends on CUDA tensors (in
    every namespace where an op of the name is)."""
    for name in names:
        for ns in _NAMESPACES:
            d = lookup(name, ns)
            if d is not None:
                use_frontend(d, "cuda")


def _pointwise_without_kernel():
    """The pointwise ops with no CUDA kernel of their own (the Tensor
    operator methods of pointwise ops among them: their declarations give
    them the ``pointwise`` family): their front-ends run the ``ew_*`` loops
    above."""
    names = set()
    for (ns, name), d in OPS.items():
        if "cuda" in d.kernels or d.kind == "core" or "factory" in d.tags or \
                d.decl is not None and d.decl.device == "through":
            continue
        mod = getattr(d.raw, "__module__", "") or ""
        if d.family == "pointwise" or mod == "ptcore._ops.pointwise":
            names.add(name)
    return sorted(names)


_registered = [False]


def register():
    if _registered[0]:
        return
    cuda.install()
    _use_frontends(_pointwise_without_kernel())
    _registered[0] = True
