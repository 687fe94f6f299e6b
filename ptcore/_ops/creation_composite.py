"""Creation functions composed of other ops: ``block_diag``, ``cartesian_prod``,
``combinations``, ``vander``, ``scalar_tensor``, ``range``, the window functions
(``hann_window`` ...), ``empty_permuted`` and the legacy ``Tensor.new``."""
import builtins
import itertools
import math
import numbers
import operator
import warnings

import numpy as np

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import (strict_int_param as _strict_int, bool_param as _bool_param,
                                 dtype_param as _dtype_param, float_param as _float_param)
from ptcore._ops._composite_common import _is_int_dtype, _check_tensor, _write_out
from ptcore.tensor import _is_storage, _storage_view
from ptcore._ops.creation import _factory_args
from ptcore._ops.creation import _require_grad

__all__ = [
    "block_diag", "cartesian_prod", "combinations", "vander", "scalar_tensor", "range",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "empty_permuted",
]


def block_diag(*tensors):
    """Block-diagonal matrix from 0-, 1- and 2-D tensors (``torch.block_diag``).

    The result is allocated once (zeros) and each block copied into its place,
    as torch's: a result too large to hold fails before any copy."""
    if not tensors:
        return ptcore.empty(1, 0)
    mats = []
    dt = None
    for i, t in enumerate(tensors):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, but "
                            f"found element of type {type(t).__name__} at pos {i}")
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        m = t.reshape(1, 1) if t.dim() == 0 else (t.reshape(1, -1) if t.dim() == 1 else t)
        mats.append(m)
        dt = t.dtype if dt is None else ptcore.promote_types(dt, t.dtype)
    device = mats[0].device
    for i, m in enumerate(mats):
        if m.device != device:
            raise RuntimeError(
                "torch.block_diag: input tensors must all be on the same device. Input 0 is on "
                f"device {device} and input {i} is on device {m.device}.")
    rows = builtins.sum(m.shape[0] for m in mats)
    cols = builtins.sum(m.shape[1] for m in mats)
    res = ptcore.zeros(rows, cols, dtype=dt, device=device)
    r0 = c0 = 0
    for m in mats:
        h, w = m.shape
        if h and w:
            res[r0:r0 + h, c0:c0 + w] = m
        r0 += h
        c0 += w
    return res


def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors, as rows (``torch.cartesian_prod``)."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = ptcore.meshgrid(*tensors, indexing="ij")
    return ptcore.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor (``torch.combinations``).

    The sizes are known up front: as torch, an ``n ** r`` that overflows int64
    raises RuntimeError at once; otherwise the ``comb(n, r)`` (with replacement
    ``comb(n + r - 1, r)``) rows of the index table are allocated (a result too
    large to hold fails there, a RuntimeError) before they are filled."""
    _check_tensor(input, "combinations", "input", 1)
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    r = _strict_int(r, "combinations", "r", 2)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ptcore.empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    if n > 1 and (r >= 64 or n ** r > 9223372036854775807):
        # torch builds an n ** r grid first and refuses it at once
        raise RuntimeError(
            f"combinations: a grid of {n} ** {r} elements: numel: integer multiplication "
            "overflow")
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if count == 0:
        # (an empty index: the result stays in input's graph, as torch's)
        return input[ptcore.zeros((0, r), dtype=_C.int64, device=input.device)]
    idx = ptcore.empty((count, r), dtype=_C.int64)
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    combos = gen(builtins.range(n), r)
    table = idx.numpy()
    for i in builtins.range(0, count, _COMBINATION_CHUNK):
        k = builtins.min(_COMBINATION_CHUNK, count - i)
        table[i:i + k] = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, k)),
                                     dtype=np.int64, count=k * r).reshape(k, r)
    return input[idx]


_COMBINATION_CHUNK = 1 << 16


def vander(x, N=None, increasing=False):
    """Vandermonde matrix with columns ``x**(N-1)``, ..., ``x**0`` (``torch.vander``)."""
    _check_tensor(x, "vander", "x", 1)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else _strict_int(N, "vander", "N")
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = ptcore.promote_types(x.dtype, _C.int64)
    m = x.shape[0]
    if n == 0:
        res = ptcore.empty(m, 0, dtype=dt, device=x.device)
    else:
        cols = [ptcore.ones(m, 1, dtype=dt, device=x.device)]
        if n > 1:
            xs = x.to(dt) if x.dtype is not dt else x
            cols.append(ptcore.cumprod(xs.unsqueeze(1).expand(m, n - 1), 1))
        res = ptcore.cat(cols, 1) if len(cols) > 1 else cols[0]
    return res if increasing else ptcore.flip(res, [1])


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    """0-dim tensor holding ``s``, default float dtype (``torch.scalar_tensor``)."""
    if isinstance(s, _TensorBase):
        if s.dim() != 0 or s.requires_grad:
            raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                            f"Tensor (of shape {list(s.shape)})")
        s = s.item()
    dt = _C.get_default_dtype() if dtype is None else _dtype_param(dtype, "scalar_tensor")
    return ptcore.full((), s, dtype=dt, device=device, requires_grad=requires_grad)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated inclusive ``[start, end]`` range (``torch.range``); use :func:`arange`."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    _factory_args("range", dtype, requires_grad, out=out)
    vals = [v.item() if isinstance(v, _TensorBase) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = _C.get_default_dtype() if dtype is None else _dtype_param(dtype, "range")
    if dt in (_C.float16, _C.bfloat16):
        # torch's accumulate type for these is float: the size ((end - start) / step + 1,
        # truncated) and every value start + i * step are float32 arithmetic, each
        # operation rounded (no fused multiply-add here)
        f32 = np.float32
        xs, xe, xst = f32(start), f32(end), f32(step)
        size = builtins.int(f32(f32(xe - xs) / xst) + f32(1))
        r = ptcore.from_numpy(np.arange(size, dtype=f32) * xst + xs).to(dt)
    else:
        size = builtins.int(math.floor((end - start) / step)) + 1
        if _is_int_dtype(dt) and dt is not _C.bool_ and \
                not (builtins.float(step).is_integer()):
            raise RuntimeError("step must be an integer for integral dtypes in torch.range")
        r = ptcore.arange(size, dtype=_C.float64) * step + start
        r = r.to(dt)
    if requires_grad:
        _require_grad(r)
    return _write_out(r, out)


_UNSET = object()


def _window_args(name, N, positional, dtype, layout, pin_memory, requires_grad):
    """Check a window function's arguments as torch's parser does (its overloads take
    ``window_length``, then optionally ``periodic``, then the shape parameters, each
    only after the one before): returns ``(N, [values of positional])`` with the
    defaults of those not given.  ``positional`` lists ``(name, value, default)``."""
    N = _strict_int(N, name, "window_length", 1)
    values, missing = [], None
    for i, (arg, v, default) in enumerate(positional):
        if v is _UNSET:
            missing = missing or arg
            values.append(default)
            continue
        if missing is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: '{arg}' "
                            f"needs '{missing}' (torch's overloads take them in order)")
        if i == 0:
            values.append(v if v is True or v is False else _bool_param(v, name, arg, 2))
        else:
            values.append(_float_param(v, name, arg, i + 2))
    _dtype_param(dtype, name)
    if requires_grad is not None and requires_grad is not True and requires_grad is not False:
        _bool_param(requires_grad, name, "requires_grad")
    if pin_memory is not None and pin_memory is not True and pin_memory is not False:
        _bool_param(pin_memory, name, "pin_memory")
    if layout is not None:
        if type(layout) is not _C.layout:
            raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not "
                            f"{type(layout).__name__}")
        if layout is not _C.strided:
            raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    return N, values


def _window(name, N, periodic, dtype, device, requires_grad, make):
    dt = _C.get_default_dtype() if dtype is None else _C._as_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if N < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={N}")
    if N == 0:
        w = ptcore.empty(0, dtype=dt, device=device)
    elif N == 1:
        w = ptcore.ones(1, dtype=dt, device=device)
    elif dt.is_complex:
        # torch's check lets complex through, to its arange (which has no complex kernel)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt._legacy}'")
    else:
        L = N + 1 if periodic else N
        w = make(ptcore.arange(L, dtype=dt, device=device), L)
        if periodic:
            w = w.narrow(0, 0, L - 1).contiguous()
    if requires_grad:
        _require_grad(w)
    return w


def _s(v, n):
    """The number ``v`` as torch's C++ window code passes it to an op on ``n``: a scalar
    of ``n``'s dtype, so float16/bfloat16 windows round each constant to that dtype."""
    if n.dtype in (_C.float16, _C.bfloat16):
        return ptcore.full((), v, dtype=n.dtype, device=n.device)
    return v


def _hamming(n, L, alpha, beta):
    return ptcore.cos(n * _s(math.pi * 2. / (L - 1), n)) * _s(-beta, n) + _s(alpha, n)


def hamming_window(window_length, periodic=_UNSET, alpha=_UNSET, beta=_UNSET, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (``torch.hamming_window``;
    ``periodic`` defaults to True, ``alpha`` to 0.54, ``beta`` to 0.46)."""
    window_length, (periodic, alpha, beta) = _window_args(
        "hamming_window", window_length,
        (("periodic", periodic, True), ("alpha", alpha, 0.54), ("beta", beta, 0.46)),
        dtype, layout, pin_memory, requires_grad)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, L: _hamming(n, L, alpha, beta))


def hann_window(window_length, periodic=_UNSET, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """Hann window (``torch.hann_window``)."""
    window_length, (periodic,) = _window_args("hann_window", window_length,
                                              (("periodic", periodic, True),),
                                              dtype, layout, pin_memory, requires_grad)
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, L: _hamming(n, L, 0.5, 0.5))


def _blackman(n, L):
    w = n * _s(math.pi / (L - 1), n)
    return (ptcore.cos(w * _s(4, n)) * _s(0.08, n) - ptcore.cos(w * _s(2, n)) * _s(0.5, n)
            + _s(0.42, n))


def blackman_window(window_length, periodic=_UNSET, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Blackman window (``torch.blackman_window``)."""
    window_length, (periodic,) = _window_args("blackman_window", window_length,
                                              (("periodic", periodic, True),),
                                              dtype, layout, pin_memory, requires_grad)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def _bartlett(n, L):
    w = n * _s(2. / (L - 1), n)
    h = ((L - 1) >> 1) + 1
    return ptcore.cat([w.narrow(0, 0, h), w.narrow(0, h, L - h) * _s(-1, n) + _s(2, n)])


def bartlett_window(window_length, periodic=_UNSET, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Bartlett (triangular) window (``torch.bartlett_window``)."""
    window_length, (periodic,) = _window_args("bartlett_window", window_length,
                                              (("periodic", periodic, True),),
                                              dtype, layout, pin_memory, requires_grad)
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length, periodic=_UNSET, beta=_UNSET, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """Kaiser window with shape parameter ``beta`` (``torch.kaiser_window``; ``periodic``
    defaults to True and ``beta`` to 12.0, which torch takes only after ``periodic``)."""
    window_length, (periodic, beta) = _window_args(
        "kaiser_window", window_length, (("periodic", periodic, True), ("beta", beta, 12.0)),
        dtype, layout, pin_memory, requires_grad)
    def make(n, L):
        # torch's kernel computes each element in the op-math type (float for
        # float16/bfloat16) and rounds once to the window's dtype
        nd = n.to(_C.float32) if n.dtype in (_C.float16, _C.bfloat16) else n
        alpha = (L - 1) / 2.0
        t = ptcore.abs(1 - ((nd - alpha) / alpha) ** 2)
        b = ptcore.full((), beta, dtype=nd.dtype)
        return (ptcore.i0(ptcore.sqrt(t) * beta) / ptcore.i0(b)).to(n.dtype)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, make)


def new(self, *args, device=None, **kwargs):
    """Legacy constructor with ``self``'s dtype (``Tensor.new``)."""
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(k + '=' + type(v).__name__ for k, v in kwargs.items())}, )")
    dt = self.dtype
    dev = self.device if device is None else device
    if not args:
        return ptcore.empty(0, dtype=dt, device=dev)
    if len(args) == 1 and isinstance(args[0], _TensorBase):
        o = args[0]
        if o.dtype is not dt:
            raise TypeError(f"expected dtype {dt} (got {o.dtype})")
        return o.detach()
    if len(args) == 1 and isinstance(args[0], _C.Size):
        return ptcore.empty(tuple(args[0]), dtype=dt, device=dev)
    if len(args) == 1 and _is_storage(args[0]):
        return _storage_view(args[0], dt)
    if builtins.all(isinstance(a, numbers.Integral) and not isinstance(a, builtins.bool)
                    for a in args):
        return ptcore.empty(*(args or (0,)), dtype=dt, device=dev)   # FloatTensor(): shape (0,)
    if len(args) == 1 and not isinstance(args[0], (numbers.Number, str)):
        return ptcore.tensor(args[0], dtype=dt, device=dev)
    raise TypeError("new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Uninitialised tensor of logical shape ``size`` whose memory is laid
    out in the dimension order ``physical_layout`` (outermost first),
    as ``torch.empty_permuted``."""
    _dtype_param(dtype, "empty_permuted")
    size = [operator.index(s) for s in size]
    order = [operator.index(d) for d in physical_layout]
    nd = len(size)
    if len(order) != nd:
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. "
            f"len(size) = {nd} is not equal to len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if d < 0 or d >= nd:
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {nd - 1}, but got {d} at index "
                f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    t = ptcore.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [0] * nd
    for i, d in enumerate(order):
        inverse[d] = i
    t = t.permute(inverse)
    return t.requires_grad_() if requires_grad else t


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "creation")
del _bind_module
