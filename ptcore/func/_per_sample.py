"""Per-sample gradients of ``linear`` without copying the weight per sample.

Inside ``vmap(grad(f))`` the differentiated weight is a per-sample leaf
``P`` of shape ``(B, out, in)`` that is one weight expanded (stride 0 along
the batch).  ``linear`` with it computes the forward as one matrix product
with the shared weight and, in the backward, the per-sample weight
gradients as a batched outer product, which is what ``P``'s gradient is.
"""
import ptcore
from ptcore.autograd.function import Function

__all__ = ["shared_linear"]


class _SharedWeightLinear(Function):
    @staticmethod
    def forward(ctx, x, p):
        w0 = p[0]
        ctx.save_for_backward(x, w0)
        return ptcore.matmul(x, w0.t())

    @staticmethod
    def backward(ctx, gy):
        x, w0 = ctx.saved_tensors
        gx = ptcore.matmul(gy, w0) if ctx.needs_input_grad[0] else None
        gp = ptcore.bmm(gy.transpose(1, 2), x) if ctx.needs_input_grad[1] else None
        return gx, gp


def shared_linear(c, x, w):
    """``linear(x, w)`` for a shared per-sample leaf ``w`` batched at ``c``'s
    level, or None when ``w`` is not one (the general rules apply)."""
    if type(w).__name__ != "BatchedTensor" or w._bt_level != c.level or w._bt_shared is None \
            or w.dim() != 2:
        return None
    p = w._bt_phys
    if p.grad_fn is not None or not p.requires_grad or p.stride(0) != 0 or \
            type(p).__name__ == "BatchedTensor" or ptcore.is_grad_enabled() is False:
        return None
    xp = c.unwrap(x)
    if type(xp).__name__ == "BatchedTensor" or x.dim() == 0:
        return None
    lead = tuple(xp.shape[1:-1])
    x3 = xp.reshape(c.size, -1, xp.shape[-1])
    y = _SharedWeightLinear.apply(x3, p)
    return c.wrap(y.reshape((c.size,) + lead + (y.shape[-1],)))
