"""Elementwise special functions computed with ``scipy.special`` on NumPy
views of CPU tensors, with PyTorch's dtype rules and derivatives.

:func:`unary` and :func:`binary` turn a NumPy kernel into a ``ptcore``
function: integer and bool inputs are promoted to the default float dtype,
float16/bfloat16 are computed in float32 and rounded back where PyTorch
supports them on CPU (and raise PyTorch's ``NotImplementedError``
otherwise), ``out=`` is honoured, and the result is differentiable with the
given formula (written with ptcore ops, so it differentiates again), is
left out of the graph (PyTorch has no derivative and its results do not
require grad), or joins the graph with a backward that raises (PyTorch's
"derivative not implemented").
"""
import numbers as _numbers

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch import forward_ad as _fwl
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd.function import Function as _Function
from ptcore.autograd import _record
from ptcore._dispatch.device import cpu_kernel
from ptcore._ops._out import resize_out as _resize_out, broadcast_shapes, check_written
from ptcore._ops.pointwise import _unary, _big_int_check

NO_GRAD = "no_grad"            # PyTorch: results never require grad
NOT_IMPLEMENTED = "not_impl"   # PyTorch: backward raises

_HALF = (_C.float16, _C.bfloat16)
_NP_OF = {_C.float32: _np.float32, _C.float64: _np.float64}


def _tensor_type_error(fname, arg, pos, v):
    return TypeError(f"special_{fname}(): argument '{arg}' (position {pos}) must be Tensor, "
                     f"not {type(v).__name__}")


def _out_castable(res, out):
    """torch's check of an ``out=`` tensor against the result dtype (integral
    or bool outs refuse a float result, real outs a complex one)."""
    if out.dtype.is_complex:
        return True
    if res.is_complex:
        return False
    return out.dtype.is_floating_point or not res.is_floating_point


def _compute_dtype(fname, dt, half_ok, device="cpu", out=None):
    """(the dtype of the result, the dtype the kernel runs in); an ``out=``
    is checked against the result dtype first, as torch's TensorIterator
    does before the kernel's dtype support."""
    if isinstance(out, _TensorBase):
        res = dt if dt.is_floating_point or dt.is_complex else _C.get_default_dtype()
        if not _out_castable(res, out):
            raise RuntimeError(f"result type {res._legacy} can't be cast to the desired output "
                               f"type {out.dtype._legacy}")
    if dt.is_complex:
        raise NotImplementedError(f'"{fname}_{device}" not implemented for \'{dt._legacy}\'')
    if not dt.is_floating_point:
        dt = _C.get_default_dtype()
    if dt in _HALF:
        if not half_ok:
            raise NotImplementedError(f'"{fname}_{device}" not implemented for \'{dt._legacy}\'')
        return dt, _C.float32
    return dt, dt


def loop_name(fname):
    """The name of op ``fname``'s element loop (``ptcore._dispatch.device``):
    a device registers its loop under it with ``register_loop``."""
    return "special." + fname


def _loop(fname, device, cpu_loop):
    return cpu_kernel(loop_name(fname), device, cpu_loop)


def _np_of(t, dt):
    if t.dtype is not dt:
        t = t.detach().to(dt)
    return t.detach().numpy()


def _wrap(a, npdt, dt):
    import ptcore
    a = _np.asarray(a)
    if a.size == 0:
        # (NumPy gives an empty array zero strides: torch's result is contiguous)
        return ptcore.empty(a.shape, dtype=dt)
    if a.dtype != npdt:
        a = a.astype(npdt)
    elif not a.flags.writeable:
        a = a.copy()
    r = ptcore.from_numpy(a)
    return r.to(dt) if r.dtype is not dt else r


def _finish(fname, r, out):
    if out is None:
        return r
    if not isinstance(out, _TensorBase):
        raise TypeError(f"special_{fname}(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    if r.requires_grad and _gm._state.enabled:
        raise RuntimeError(f"special_{fname}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if not _out_castable(r.dtype, out):
        raise RuntimeError(f"result type {r.dtype._legacy} can't be cast to the desired output "
                           f"type {out.dtype._legacy}")
    _resize_out(out, r.shape)
    out.copy_(r)
    return out


class _Precomputed:
    """The result handed to :class:`_Recorded` as a non-tensor argument, so
    that the node's output (not an input of it) is what gets saved: saved
    as an output, it keeps the tangents forward AD gives the output
    (``jacfwd(jacrev(f))``)."""
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


class _Recorded(_Function):
    """An elementwise op whose forward is a precomputed result and whose
    backward is ``grad_fn(grad, result, *inputs)``, one entry per input:
    a tensor, ``None`` (no gradient) or :data:`NOT_IMPLEMENTED`; a string
    ``grad_fn`` names an op with no derivative at all (``fwd``, the op, gives
    its name).  The result is saved as the node's output, so that the
    formula's use of it is differentiable too (double backward, and forward
    AD over the backward)."""

    @staticmethod
    def forward(ctx, result, grad_fn, fwd, *inputs):
        ctx.grad_fn = grad_fn
        ctx.fwd = fwd
        out = result.t.detach()
        ctx.save_for_backward(out, *inputs)
        return out

    @staticmethod
    def backward(ctx, g):
        needs = ctx.needs_input_grad[3:]
        name = ctx.grad_fn if isinstance(ctx.grad_fn, str) else ctx.fwd.__name__
        if isinstance(ctx.grad_fn, str):
            raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
        result, *inputs = ctx.saved_tensors
        grads = ctx.grad_fn(g, result, *inputs)
        out = []
        for gi, x, need in zip(grads, inputs, needs):
            if isinstance(gi, str):
                if need:
                    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
                gi = None
            if gi is None or not need:
                out.append(None)
                continue
            if tuple(gi.shape) != tuple(x.shape):
                gi = _sum_to(gi, tuple(x.shape))
            out.append(gi)
        return (None, None, None) + tuple(out)


def _sum_to(g, shape):
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


def _node_name(fname):
    """PyTorch's generated node name: ``special_i0e`` -> ``SpecialI0EBackward0``
    (a letter after a digit or an underscore is capitalized)."""
    out, up = [], True
    for ch in "special_" + fname:
        if ch == "_":
            up = True
            continue
        out.append(ch.upper() if up else ch)
        up = ch.isdigit()
    return "".join(out)


_RECORDERS = {}


def _recorder(fname):
    """A :class:`_Recorded` subclass whose graph node carries PyTorch's name."""
    cls = _RECORDERS.get(fname)
    if cls is None:
        name = _node_name(fname)
        cls = type(name, (_Recorded,), {})
        cls._backward_cls.__name__ = cls._backward_cls.__qualname__ = name + "Backward0"
        _RECORDERS[fname] = cls
    return cls


def _dual(inputs):
    """Whether an input has a forward-AD tangent (at a visible level): the
    result then takes one, with or without grad mode, as in torch."""
    return _fwl.layer().enabled and _fwl.visible_level(inputs, None) >= 0


def _attach(r, grad, fname, fwd, inputs):
    """Record ``r`` (computed without recording) as the output of ``inputs``."""
    if grad == NO_GRAD:
        return r
    if not (_gm._state.enabled and any(isinstance(t, _TensorBase) and t.requires_grad
                                       for t in inputs)) and not _dual(inputs):
        return r
    fn = fname if grad == NOT_IMPLEMENTED else grad
    return _recorder(fname).apply(_Precomputed(r), fn, fwd, *inputs)


def _ew_float32(op, fname, x):
    """``op`` of the elementwise library (a float32 kernel of ptc_special.h)
    on ``x`` converted to float32, outside autograd."""
    x = x.detach()
    if x.dtype is not _C.float32:
        x = x.to(_C.float32)
    return _unary(op, x, None, _C.float32, _C.float32, fname)


def unary(fname, kernel, grad=NO_GRAD, half_ok=False, doc=None, ew=None, ew_inf_nan=False):
    """A ptcore function ``f(input, *, out=None)`` from the NumPy kernel
    ``kernel(array) -> array`` (run in the input's float precision); with
    ``ew`` (an op of the elementwise library with a float32 kernel),
    float32/float16/bfloat16 CPU inputs run that kernel instead, in float32
    arithmetic as PyTorch's float kernels.

    The element loop is the device's (:func:`loop_name`): the CPU's is the
    one above, another device registers ``loop(x, cdt)`` (``x`` detached,
    the result in the compute dtype ``cdt``); the dtype rules, ``out=`` and
    the derivative formula are this front-end's on every device."""
    def cpu_loop(x, cdt):
        if ew is not None and cdt is _C.float32:
            r = _ew_float32(ew, fname, x)
            if ew_inf_nan:
                r.masked_fill_(x.isinf(), float("nan"))
            return r
        npdt = _NP_OF[cdt]
        with _np.errstate(all="ignore"):
            a = kernel(_np_of(x, cdt))
        return _wrap(a, npdt, cdt)

    def f(input, *, out=None):
        if not isinstance(input, _TensorBase):
            raise _tensor_type_error(fname, "input", 1, input)
        check_written(out, input)         # (torch's TensorIterator: the memory first)
        dev = input.device
        dt, cdt = _compute_dtype(fname, input.dtype, half_ok, dev.type, out)
        r = _loop(fname, dev, cpu_loop)(input.detach(), cdt)
        if r.dtype is not dt:
            r = r.to(dt)
        x = input if input.dtype is dt else input.to(dt)
        r = _attach(r, grad, fname, f, (x,)) if input.dtype.is_floating_point else r
        return _finish(fname, r, out)
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = doc
    return f


def _as_tensor_pair(fname, a, b, allow_scalar_first):
    import ptcore
    ta, tb = isinstance(a, _TensorBase), isinstance(b, _TensorBase)
    if not ta and not tb:
        raise _tensor_type_error(fname, "input", 1, a)
    if not ta:
        if not allow_scalar_first or not isinstance(a, _numbers.Number):
            raise _tensor_type_error(fname, "input", 1, a)
    if not tb and not isinstance(b, _numbers.Number):
        raise _tensor_type_error(fname, "other", 2, b)
    _big_int_check(a, b)        # torch's parser: an int past (u)int64 is an OverflowError
    dt = ptcore.result_type(a, b)
    return dt


def binary(fname, kernel, grad=NO_GRAD, half_ok=False, doc=None, int_ok=True):
    """A ptcore function ``f(input, other, *, out=None)`` from the NumPy
    kernel ``kernel(a, b) -> array``; either argument may be a number
    (PyTorch's ``Scalar`` overloads), the two broadcast; the element loop
    is the device's, ``loop(x, y, cdt)``, as :func:`unary`'s."""
    def cpu_loop(x, y, cdt):
        npdt = _NP_OF[cdt]
        with _np.errstate(all="ignore"):
            a = kernel(_np_of(x, cdt), _np_of(y, cdt))
        return _wrap(a, npdt, cdt)

    def f(input, other, *, out=None):
        import ptcore
        dt0 = _as_tensor_pair(fname, input, other, True)
        check_written(out, input, other)  # (torch's TensorIterator: the memory first)
        if isinstance(input, _TensorBase) and isinstance(other, _TensorBase) \
                and input.shape != other.shape:
            broadcast_shapes(input.shape, other.shape)   # torch's TensorIterator error first
        if not int_ok and not (dt0.is_floating_point or dt0.is_complex):
            raise NotImplementedError(f'"{fname}_cpu" not implemented for \'{dt0._legacy}\'')
        # the device of the tensor operands (a 0-d CPU tensor may join a device one)
        devs = [v.device for v in (input, other) if isinstance(v, _TensorBase)]
        dev = next((d for d in devs if d.type != "cpu"), devs[0])
        dt, cdt = _compute_dtype(fname, dt0, half_ok, dev.type, out)
        xs = [v if isinstance(v, _TensorBase) and v.dtype is dt else
              (v.to(dt) if isinstance(v, _TensorBase) else ptcore.tensor(v, dtype=dt, device=dev))
              for v in (input, other)]
        r = _loop(fname, dev, cpu_loop)(xs[0].detach(), xs[1].detach(), cdt)
        if r.dtype is not dt:
            r = r.to(dt)
        r = _attach(r, grad, fname, f, tuple(xs))
        if r.grad_fn is not None and not (isinstance(input, _TensorBase)
                                          and isinstance(other, _TensorBase)):
            # torch's Scalar overloads record their own nodes: ...Backward1 for
            # a number input, ...Backward2 for a number other
            k = "2" if isinstance(input, _TensorBase) else "1"
            _record.name_grad_fn(r, r.grad_fn.name()[:-1] + k)
        return _finish(fname, r, out)
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = doc
    return f
