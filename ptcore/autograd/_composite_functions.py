"""The autograd pieces of composite ops that the op layer cannot hold
(imports point down): the ``autograd.Function`` s of ``polygamma`` (n >= 1)
and ``igamma``/``igammac``, and the "derivative not implemented" wrapper
of ``ptcore._ops._composite_common``.  :func:`install` (run by
:func:`ptcore.autograd._install.install` when ``ptcore`` is imported) puts
them where the op front-ends look for them."""
import ptcore
from ptcore._ops import _composite_common, pointwise_composite
from ptcore._ops.reduction_composite import sum_to_size
from ptcore.autograd import _record as R
from ptcore.autograd.function import Function

__all__ = ["PolygammaBackward", "IgammaBackward", "install"]


class PolygammaBackward(Function):
    """``polygamma(n, x)`` for n >= 1 (SciPy computes it): d/dx is
    ``polygamma(n + 1, x)``."""

    @staticmethod
    def forward(ctx, x, n):
        ctx.n = n
        ctx.save_for_backward(x)
        return pointwise_composite._polygamma_raw(n, x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ptcore.polygamma(ctx.n + 1, x), None


class IgammaBackward(Function):
    """``igamma(a, x)`` / ``igammac(a, x)``: differentiable in ``x`` only
    (as torch: the derivative for ``a`` is not implemented)."""

    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        return pointwise_composite._igamma_raw(a, x, upper)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        name = "igammac" if ctx.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not "
                                      "implemented.")
        dx = None
        if ctx.needs_input_grad[1]:
            d = ptcore.exp((a - 1) * ptcore.log(x) - x - ptcore.lgamma(a))
            dx = g * (-d if ctx.upper else d)
            if tuple(dx.shape) != tuple(x.shape):
                dx = sum_to_size(dx, *x.shape)
            if dx.dtype is not x.dtype:
                dx = dx.to(x.dtype)
        return None, dx, None


def _not_implemented_grad(name, fn):
    return R.differentiable(name, fn, R.not_implemented(name))


def install():
    pointwise_composite.POLYGAMMA_FUNCTION[0] = PolygammaBackward
    pointwise_composite.IGAMMA_FUNCTION[0] = IgammaBackward
    _composite_common.NOT_IMPLEMENTED_GRAD[0] = _not_implemented_grad
