"""The autograd pieces of ops whose front-ends live below the autograd layer
(imports point down): the ``autograd.Function`` s of ``polygamma`` (n >= 1),
``igamma``/``igammac``, ``linalg.lu``, ``geqrf``, ``linalg.ldl_factor_ex``
and ``linalg.ldl_solve``, and the "derivative not implemented" wrapper of
``ptcore._ops._composite_common``.  :func:`install` (run by
:func:`ptcore.autograd._op_bodies.install` when ``ptcore`` is imported) puts
them where the op front-ends look for them."""
import ptcore
from ptcore._ops import _composite_common, pointwise_composite
from ptcore._ops.reduction_composite import sum_to_size
from ptcore.autograd import _record as R
from ptcore.linalg import _extra as _linalg_extra
from ptcore.autograd.function import Function
from ptcore._ops import random as _random

__all__ = ["PolygammaBackward", "IgammaBackward", "IgammacBackward", "LU", "Geqrf", "OrgqrNoReflectors",
           "LDLFactor", "LDLSolve", "install"]


class PolygammaBackward(Function):
    """``polygamma(n, x)`` for n >= 1 (SciPy computes it): d/dx is
    ``polygamma(n + 1, x)``."""
    _backward_name = "PolygammaBackward0"

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
    _backward_name = "IgammaBackward0"

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


class IgammacBackward(IgammaBackward):
    """``igammac(a, x)``: torch's node IgammacBackward0."""
    _backward_name = "IgammacBackward0"


class _IgammaFunctions:
    """``apply(a, x, upper)`` by igamma's or igammac's Function."""

    @staticmethod
    def apply(a, x, upper):
        return (IgammacBackward if upper else IgammaBackward).apply(a, x, upper)


class LU(Function):
    """``linalg.lu``: ``(P, L, U)``, P not differentiable; torch's backward."""
    _backward_name = "LinalgLuBackward0"

    @staticmethod
    def forward(ctx, A):
        P, L, U = _linalg_extra._lu_forward(A)
        ctx.save_for_backward(P, L, U)
        ctx.mark_non_differentiable(P)
        return P, L, U

    @staticmethod
    def backward(ctx, gP, gL, gU):
        P, L, U = ctx.saved_tensors
        if gL is None:
            gL = ptcore.zeros_like(L)
        if gU is None:
            gU = ptcore.zeros_like(U)
        return _linalg_extra._lu_backward(gL, gU, P, L, U)


class Geqrf(Function):
    """``geqrf``: not differentiable (as torch: backward raises)."""
    _backward_name = "GeqrfBackward0"

    @staticmethod
    def forward(ctx, A):
        return _linalg_extra._geqrf_impl(A)

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


class OrgqrNoReflectors(Function):
    """``linalg.householder_product`` with no reflector (``tau`` of size 0 in its
    last dimension) or an empty batch: a copy of ``identity`` (the first columns of
    the identity),
    which depends on neither ``A`` nor ``tau``: torch's node gives None gradients
    and a zero tangent."""
    _backward_name = "LinalgHouseholderProductBackward0"

    @staticmethod
    def forward(ctx, A, tau, identity):
        ctx.identity = identity
        return identity.clone()

    @staticmethod
    def backward(ctx, g):
        return None, None, None

    @staticmethod
    def jvp(ctx, dA, dtau, didentity):
        return ptcore.zeros_like(ctx.identity, memory_format=ptcore.contiguous_format)


class LDLFactor(Function):
    """``linalg.ldl_factor_ex``: not differentiable (as torch: its autograd
    fallback's NotImplemented node)."""
    _backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, A, hermitian):
        return _linalg_extra._ldl_factor_forward(A, hermitian)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


class LDLSolve(Function):
    """``linalg.ldl_solve``: not differentiable (as torch: its autograd
    fallback's NotImplemented node)."""
    _backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, LD, pivots, B, hermitian):
        return _linalg_extra._ldl_solve_forward(LD, pivots, B, hermitian)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _not_implemented_grad(name, fn):
    return R.differentiable(name, fn, R.not_implemented(name))


def _sample_node(name, out, inputs, error):
    """A sampling op's node (``ptcore._ops.random.SAMPLE_NODE``): zero
    gradients for its tensor parameters, or ``error`` at backward."""
    if not ptcore.is_grad_enabled() or not any(
            isinstance(t, ptcore.Tensor) and t.requires_grad for t in inputs):
        return
    tensors = tuple(t for t in inputs if isinstance(t, ptcore.Tensor))

    def backward(g):
        if error is not None:
            raise RuntimeError(error)
        return tuple(ptcore.zeros_like(t) for t in tensors)
    R.attach(name, out, tensors, backward)


def install():
    _random.SAMPLE_NODE[0] = _sample_node
    pointwise_composite.POLYGAMMA_FUNCTION[0] = PolygammaBackward
    pointwise_composite.IGAMMA_FUNCTION[0] = _IgammaFunctions
    for cls in (LDLFactor, LDLSolve):
        cls._backward_cls.name = lambda self: "torch::autograd::NotImplemented"
    _composite_common.NOT_IMPLEMENTED_GRAD[0] = _not_implemented_grad
    _linalg_extra.FUNCTIONS.update(lu=LU, geqrf=Geqrf, ldl_factor_ex=LDLFactor, ldl_solve=LDLSolve,
                                   orgqr_no_reflectors=OrgqrNoReflectors)
