"""CUDA element loops of the ``ptcore.special`` functions.

The front-ends (:mod:`ptcore.special._kernels`: argument checks, dtype rules,
``out=``, the one derivative formula of each op) are the CPU's; they run on
CUDA as the ops' device kernels, and each calls its element loop for the
tensors' device (``register_loop`` under ``ptcore.special._kernels.loop_name``).
The loops here take the detached operands and the compute dtype and return
the result in that dtype:

* ``ndtr`` and ``xlog1py`` are closed forms written with the elementwise ops'
  entries, as is ``entr`` of a half type (float32/float64 take its kernel);
* every other function runs its kernel of family ``special``
  (:mod:`ptcore.cuda.kernels.special`: Cephes in double, the CPU's float32
  kernels of ``ptc_special.h``, the orthogonal polynomials, ``zeta``);
  a dtype with no kernel raises ``NotImplementedError``;
* ``igamma``/``igammac`` (``ptcore.igamma``'s loop ``igamma``);
* ``polygamma`` (``ptcore.polygamma``'s loop ``polygamma``, ``n >= 1``):
  through zeta, as PyTorch's CUDA kernel.
"""
import math

from ptcore import _tensor as _C
from ptcore._dispatch.device import register_kernel, register_loop
from ptcore._ops.pointwise_composite import _torch_trigamma
from ptcore.cuda.kernels.special import has_kernel, KERNEL_OPS
from ptcore.cuda.ops import launch as L
from ptcore.special import _functions as F
from ptcore.special._kernels import loop_name
import ptcore.special  # noqa: F401  (declares the special ops: light, SciPy loads on first use)

__all__ = ["register"]


def _P():
    import ptcore
    return ptcore


def _ndtr(x):
    P = _P()
    return P.mul(P.erfc(P.mul(x, -math.sqrt(0.5))), 0.5)


def _entr(x):
    P = _P()
    pos = P.gt(x, 0)
    safe = P.where(pos, x, 1.0)
    r = P.where(pos, P.neg(P.mul(safe, P.log(safe))), 0.0)
    r = P.where(P.lt(x, 0), -math.inf, r)
    return P.where(P.isnan(x), x, r)


def _xlog1py(x, y):
    P = _P()
    x, y = P.broadcast_tensors(x, y)
    zero = P.logical_and(P.eq(x, 0), P.logical_not(P.isnan(y)))
    safe = P.where(zero, 0.0, y)
    return P.where(zero, 0.0, P.mul(x, P.log1p(safe)))


def _composite_loop(body):
    def loop(*args):
        *xs, cdt = args
        dev = L._device_of(*xs)         # (a 0-d CPU operand goes to the device)
        with _P().no_grad():
            return body(*(x.to(dev, cdt) for x in xs))
    return loop


# [dense_fast.special_unary] while the C fast paths are installed, else
# [None]: a one-operand loop's kernel on a contiguous operand of the compute
# dtype, from C
_unary_fast = [None]


def _kernel_loop(fname, kernel_op=None):
    """The loop of ``fname``: its ``special`` kernel for the compute dtype."""
    kop = kernel_op or fname

    def loop(*args):
        *xs, cdt = args
        fast = _unary_fast[0]
        if fast is not None and len(xs) == 1:
            r = fast(kop, xs[0], cdt)
            if r is not None:
                return r
        tag = L._tag(cdt, fname)
        if not has_kernel(kop, tag):
            raise NotImplementedError(f"special.{fname}: no CUDA kernel for {cdt} yet")
        dev = L._device_of(*xs)
        ops = [L._as_operand(x, cdt, dev) for x in xs]
        shape = ops[0].shape if len(ops) == 1 else L._broadcast_shape(ops[0], ops[1], f"special_{fname}")
        res = L._empty(shape, cdt, dev)
        L._elementwise("special", (kop, (tag,)), res, ops, L._params())
        return res
    loop.__name__ = fname
    return loop


def _kernel_or_composite(fname, body):
    """``fname``'s kernel for the compute dtypes it has, else the composite ``body``."""
    kernel, composite = _kernel_loop(fname), _composite_loop(body)

    def loop(*args):
        return (kernel if has_kernel(fname, L._tag(args[-1], fname)) else composite)(*args)
    loop.__name__ = fname
    return loop


_IGAMMA = (_kernel_loop("igamma"), _kernel_loop("igammac"))


def _igamma(a, x, upper, cdt):
    """The loop of ``ptcore.igamma``/``igammac`` (``ptcore._ops.pointwise_composite``)."""
    return _IGAMMA[bool(upper)](a, x, cdt)


def _polygamma(n, x):
    """The loop of ``ptcore.polygamma`` for ``n >= 1`` (the front-end runs
    digamma for ``n == 0``): ``(-1)^(n+1) n! zeta(n + 1, x)`` in float64 (as
    PyTorch's CUDA kernel, trigamma included), with the CPU's limits."""
    P = _P()
    dt = x.dtype if x.dtype.is_floating_point else _C.get_default_dtype()
    try:
        c = float(math.factorial(n)) * (1.0 if n % 2 else -1.0)
    except OverflowError:
        c = math.inf if n % 2 else -math.inf
    with P.no_grad():
        x64 = x.to(_C.float64)
        r = P.mul(P.special.zeta(float(n + 1), x64), c)
        if n == 1:
            # trigamma: 0 at +inf; at its poles (the negative integers) and
            # -inf PyTorch's reflection value (the CPU's too)
            r = P.where(P.isposinf(x64), 0.0, r)
            poles = P.logical_and(x64 < 0, P.floor(x64) == x64)
            if bool(poles.any()):
                cdt = _C.float64 if dt is _C.float64 else _C.float32
                r = P.where(poles, _torch_trigamma(P, x.to(cdt)).to(_C.float64), r)
        else:
            r = P.where(P.isposinf(x64), math.nan, r)      # zeta(n + 1, inf): nan in torch
    return r.to(dt)


_registered = [False]


def register():
    if _registered[0]:
        return
    loops = {"xlog1py": _composite_loop(_xlog1py)}
    for name in KERNEL_OPS:
        loops[name] = _kernel_loop(name)
    # (float16/bfloat16: the composites, whose steps round to the half type)
    loops["entr"] = _kernel_or_composite("entr", _entr)
    loops["ndtr"] = _kernel_or_composite("ndtr", _ndtr)
    for name, loop in loops.items():
        # the front-end is the CPU's: it runs this loop for CUDA tensors
        register_kernel(name, "cuda", getattr(F, name), namespaces=("special",))
        register_loop(loop_name(name), "cuda", loop)
    register_loop("polygamma", "cuda", _polygamma)
    register_loop("igamma", "cuda", _igamma)
    _registered[0] = True
