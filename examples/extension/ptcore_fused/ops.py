"""Register the fused kernels as ptcore custom ops.

``register(kernels)`` makes two ops of ptcore's operator table,
``<namespace>::silu`` and ``<namespace>::silu_backward``, over the compiled
``kernels`` module: autograd uses the fused backward kernel, the second
derivative is written with ptcore ops (so ``gradgradcheck`` passes), and
``ptcore.jit.trace``, ``__torch_function__`` modes, autocast and the profiler
see each call as one op.
"""
import ptcore
from ptcore import Tensor
from ptcore.library import custom_op


def register(kernels, namespace="ptcore_fused"):
    """Define the ops over ``kernels`` (``silu_forward``, ``silu_backward``); return them."""

    @custom_op(f"{namespace}::silu", mutates_args=(), device_types="cpu")
    def silu(x: Tensor) -> Tensor:
        """``x * sigmoid(x)`` in one pass (as ``ptcore.nn.functional.silu``)."""
        return kernels.silu_forward(x.contiguous())

    @custom_op(f"{namespace}::silu_backward", mutates_args=(), device_types="cpu")
    def silu_backward(grad: Tensor, x: Tensor) -> Tensor:
        """``grad * silu'(x)`` in one pass."""
        return kernels.silu_backward(grad.to(x.dtype).contiguous(), x.contiguous())

    @silu.register_fake
    def _(x):
        return ptcore.empty_like(x)

    @silu_backward.register_fake
    def _(grad, x):
        return ptcore.empty_like(x)

    def setup_silu(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def silu_grad(ctx, grad):
        x, = ctx.saved_tensors
        return silu_backward(grad, x)

    silu.register_autograd(silu_grad, setup_context=setup_silu)

    def setup_silu_backward(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def silu_backward_grad(ctx, gg):
        # silu_backward(g, x) = g * s * (1 + x (1 - s)); its derivatives in ptcore ops
        g, x = ctx.saved_tensors
        s = ptcore.sigmoid(x)
        d1 = s * (1 + x * (1 - s))
        d2 = s * (1 - s) * (2 + x * (1 - 2 * s))
        return gg * d1, gg * g * d2

    silu_backward.register_autograd(silu_backward_grad, setup_context=setup_silu_backward)
    return silu, silu_backward
