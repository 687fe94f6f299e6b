"""``ptcore.fft`` on CUDA tensors: the three FFT primitives on the driver's
cuFFT interface (:meth:`ptcore.cuda.driver.interface.Driver.fft`), and the fft ops'
CUDA kernels in the operator table.

The public transforms (``fft`` ... ``ihfftn``) keep their front-ends
(promotion, ``n``/``s``/``dim``/``norm``, padding/trimming, ``out=``, the
autograd graph): they are declared ``device="frontend"``, so the CUDA
registration installs each front-end as its own CUDA kernel, and
:func:`register` puts this module into
:data:`ptcore.fft._primitives.DEVICE_IMPLS`, so the primitives' forwards
run here and their backward formulas (written with the primitives) too.

Each transform moves the transformed dims last (one contiguous copy; a
C2C over adjacent dims of a contiguous tensor that end before its last
runs in place in the layout, through cuFFT's interleaved layout), runs
batched cuFFT plans of at most 3 dims on the current stream
(C2C/R2C/C2R in single, Z2Z/D2Z/Z2D in double precision; more than 3 dims
are done in groups; C2R only one-dimensional, after an inverse C2C of the
leading dims), scales by ``1/n`` or ``1/sqrt(n)`` for the norm
modes, and returns the result viewed back in the caller's dim order.
"""
import math

from ptcore import _tensor as _C
from ptcore.cuda.ops import tensors as _tensors
from ptcore.cuda.runtime import state as _runtime
from ptcore.fft import _primitives

__all__ = ["c2c", "r2c", "c2r", "register"]

#: the ptcore.fft functions whose front-ends are their own CUDA kernels
_MAX_RANK = 3
_KIND = {  # (precision, transform) -> cuFFT kind
    ("single", "c2c"): "C2C", ("single", "r2c"): "R2C", ("single", "c2r"): "C2R",
    ("double", "c2c"): "Z2Z", ("double", "r2c"): "D2Z", ("double", "c2r"): "Z2D",
}


def _precision(dt, fname):
    if dt in (_C.complex64, _C.float32):
        return "single"
    if dt in (_C.complex128, _C.float64):
        return "double"
    raise RuntimeError(f"ptcore.fft.{fname}: cuFFT computes in complex64/complex128 "
                       f"(float32/float64 input), got {dt}")


def _empty(shape, dt, dev):
    return _tensors.empty(list(shape), dt, dev)


def _to_last(x, dims, copy=True):
    """``x`` with ``dims`` moved last (in order) as a contiguous tensor, and
    the permutation used (None when they are last already): a fresh copy, or with ``copy=False`` ``x``'s own
    view when that is already contiguous (cuFFT's out-of-place C2C and R2C
    only read their input; C2R overwrites it)."""
    dims = list(dims)
    nd = x.dim()
    if dims == list(range(nd - len(dims), nd)):
        perm = None                         # already last, in order
        xp = x
    else:
        perm = [d for d in range(nd) if d not in dims] + dims
        xp = x.permute(perm)
    if not copy and xp.is_contiguous() and (xp.is_complex()
                                            or xp.data_ptr() % (2 * xp.element_size()) == 0):
        # (cuFFT wants a real input aligned as if it were complex, as PyTorch notes)
        return xp, perm
    y = _empty(xp.shape, xp.dtype, xp.device)
    y.copy_(xp)
    return y, perm


def _from_last(y, perm):
    """``y`` viewed back in the caller's dim order (``perm`` None: as it is)."""
    if perm is None:
        return y
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return y.permute(inv)


def _exec(kind, x, out, rank, direction=-1):
    """One batched cuFFT call over the last ``rank`` dims of contiguous
    ``x`` into contiguous ``out`` (logical sizes from the real side)."""
    real = out if kind in ("C2R", "Z2D") else x
    shape = tuple(real.shape[real.dim() - rank:])
    batch = math.prod(real.shape[:real.dim() - rank])
    if x.numel() == 0 or out.numel() == 0 or batch == 0:
        return out
    _queue(kind, x, out, shape, batch, direction)
    return out


def _queue(kind, x, out, shape, batch, direction):
    """Queue the cuFFT call of :func:`_exec` (non-empty operands) on the
    current stream of ``x``'s device."""
    idx = x.device.index
    drv = _runtime._state["driver"]       # (set: x lives on its device)
    if drv is None:
        drv = _runtime.lazy_init(f"cuFFT {kind}")
    drv.set_current(idx)
    drv.fft(idx, _runtime.current_stream_handle(idx), kind, shape, batch, x.data_ptr(),
            out.data_ptr(), direction)


def _scale(y, norm, n):
    """Apply PyTorch's norm enum (0 none, 1 1/sqrt(n), 2 1/n) in place."""
    if norm == 0 or y.numel() == 0:
        return y
    f = 1.0 / math.sqrt(n) if norm == 1 else 1.0 / n
    import ptcore
    (ptcore.view_as_real(y) if y.is_complex() else y).mul_(f)
    return y


def _c2c_dims(x, dims, forward, prec):
    """Unscaled C2C of complex ``x`` over ``dims``, in groups of at most 3
    dims: a group of adjacent dims of a contiguous ``x`` in place in the
    layout (:func:`_c2c_interleaved`), any other moved last in a
    contiguous copy."""
    kind = _KIND[(prec, "c2c")]
    direction = -1 if forward else 1
    dims = list(dims)
    for i in range(0, len(dims), _MAX_RANK):
        group = dims[i:i + _MAX_RANK]
        out = _c2c_interleaved(kind, x, group, direction)
        if out is None:
            y, perm = _to_last(x, group, copy=False)
            out = _empty(y.shape, y.dtype, y.device)
            _exec(kind, y, out, len(group), direction)
            out = _from_last(out, perm)
        x = out
    return x


#: an interleaved C2C is one cuFFT call per block of the dims before the
#: group; with more blocks than this the group is moved last instead
_MAX_OUTER_CALLS = 8


def _c2c_interleaved(kind, x, group, direction):
    """The C2C over ``group`` -- adjacent dims of contiguous ``x``, followed
    by ``inner`` elements of later dims -- as cuFFT's interleaved layout
    (signal element ``j`` at ``j * inner``, the ``inner`` signals one
    element apart), one call per block of the earlier dims, into a new
    contiguous tensor of x's shape: no transposing copies.  None when the
    layout does not fit (the group ends last: the basic layout needs no
    copy either)."""
    lo, hi = min(group), max(group)
    nd = x.dim()
    if hi == nd - 1 or sorted(group) != list(range(lo, hi + 1)) or not x.is_contiguous():
        return None
    shape = list(x.shape)
    outer = math.prod(shape[:lo])
    inner = math.prod(shape[hi + 1:])
    if outer > _MAX_OUTER_CALLS or inner <= 1:
        return None
    out = _empty(shape, x.dtype, x.device)
    if x.numel() == 0:
        return out
    idx = x.device.index
    drv = _runtime._state["driver"]
    if drv is None:
        drv = _runtime.lazy_init(f"cuFFT {kind}")
    drv.set_current(idx)
    stream = _runtime.current_stream_handle(idx)
    n = tuple(shape[lo:hi + 1])
    block = math.prod(shape[lo:]) * x.element_size()
    xp, op = x.data_ptr(), out.data_ptr()
    for o in range(outer):
        drv.fft(idx, stream, kind, n, inner, xp + o * block, op + o * block, direction, inner)
    return out


def c2c(x, dims, norm, forward):
    dt = x.dtype
    prec = "single" if dt is _C.complex64 else _precision(dt, "fft")
    nd = x.dim()
    if len(dims) == 1 and dims[0] == nd - 1 and x.is_contiguous():
        # the usual call (one dim, the last, of a contiguous tensor): one
        # batched plan, no layout work -- the host time of a 1-D transform is
        # as long as cuFFT's own on a 2^20 signal, so it is kept short
        y = _empty(x.shape, dt, x.device)
        n = x.shape[nd - 1]
        if n and y.numel():
            _queue(_KIND[(prec, "c2c")], x, y, (n,), y.numel() // n, -1 if forward else 1)
    else:
        y = _c2c_dims(x, dims, forward, prec)
    if norm:
        if not y.is_contiguous():
            y = y.contiguous()
        _scale(y, norm, math.prod(x.shape[d] for d in dims))
    return y


def r2c(x, dims, norm, onesided):
    prec = _precision(x.dtype, "rfft")
    cdt = _C.complex64 if prec == "single" else _C.complex128
    if not onesided:
        # the full spectrum of a real signal: C2C of its complex copy
        return c2c(x.to(cdt), dims, norm, True)
    y, perm = _to_last(x, dims, copy=False)
    nd = len(dims)
    r = min(_MAX_RANK, nd)
    half = list(y.shape)
    half[-1] = half[-1] // 2 + 1
    out = _empty(half, cdt, y.device)
    _exec(_KIND[(prec, "r2c")], y, out, r)
    if nd > r:      # the leading transformed dims: forward C2C
        lead = list(range(out.dim() - nd, out.dim() - r))
        out = _c2c_dims(out, lead, True, prec).contiguous()
    n = math.prod(x.shape[d] for d in dims)
    return _from_last(_scale(out, norm, n), perm)


def c2r(x, dims, norm, last_dim_size):
    """Inverse real transform over ``dims``: the leading dims by an unscaled
    inverse C2C, then a one-dimensional C2R over the last -- the definition
    (NumPy's ``irfftn``, torch's CPU, and torch's CUDA path for dims that
    start at dim 0).  cuFFT's multi-dimensional C2R assumes a Hermitian
    input over all the dims and gives other values on any other input."""
    prec = _precision(x.dtype, "irfft")
    rdt = _C.float32 if prec == "single" else _C.float64
    nd = len(dims)
    # C2R overwrites its input: a fresh copy unless the C2C pass makes one
    y, perm = _to_last(x, dims, copy=nd == 1)
    want = last_dim_size // 2 + 1
    have = y.shape[-1]
    if have != want:                      # trim or zero-pad the half spectrum
        z = y.new_zeros(list(y.shape[:-1]) + [want])
        k = min(have, want)
        z.narrow(-1, 0, k).copy_(y.narrow(-1, 0, k))
        y = z
    if nd > 1:      # the leading transformed dims: inverse C2C, unscaled (into a new tensor)
        lead = list(range(y.dim() - nd, y.dim() - 1))
        y = _c2c_dims(y, lead, False, prec)
        if not y.is_contiguous():
            y = y.contiguous()
    shape = list(y.shape)
    shape[-1] = last_dim_size
    out = _empty(shape, rdt, y.device)
    _exec(_KIND[(prec, "c2r")], y, out, 1)
    n = math.prod(shape[len(shape) - nd:])
    return _from_last(_scale(out, norm, n), perm)


class _Impl:
    c2c = staticmethod(c2c)
    r2c = staticmethod(r2c)
    c2r = staticmethod(c2r)


_registered = [False]


def register():
    """Register this module as the CUDA FFT of :mod:`ptcore.fft._primitives`
    (once): the transforms are declared ``device="frontend"``, so their
    front-ends, installed as their CUDA kernels, reach it."""
    if _registered[0]:
        return
    _primitives.DEVICE_IMPLS["cuda"] = _Impl
    _registered[0] = True
