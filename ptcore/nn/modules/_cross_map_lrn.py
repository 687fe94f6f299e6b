"""``CrossMapLRN2d``: Lua torch's cross-channel local response normalization, with its own
forward and backward (``torch.nn.CrossMapLRN2d``; ported from PyTorch 2.13's
torch/nn/modules/_functions.py, BSD-3-Clause, (c) the PyTorch contributors).  Its window
bookkeeping differs from :class:`LocalResponseNorm` at the channel edges, as in torch."""
import ptcore
from ptcore.autograd.function import Function
from ptcore.nn.modules.module import Module

__all__ = ["CrossMapLRN2d"]


class _CrossMapLRN2dFunction(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.size(1)
        scale = ptcore.empty_like(input)
        input_square = input * input
        pre_pad = int((size - 1) / 2 + 1)
        pre_pad_crop = min(pre_pad, channels)
        scale_first = scale.select(1, 0)
        scale_first.zero_()
        for c in range(pre_pad_crop):
            scale_first.add_(input_square.select(1, c))
        for c in range(1, channels):
            scale_current = scale.select(1, c)
            scale_current.copy_(scale.select(1, c - 1))
            if c < channels - pre_pad + 1:
                scale_current.add_(input_square.select(1, c + pre_pad - 1))
            if c > pre_pad:
                scale_current.sub_(input_square.select(1, c - pre_pad))
        scale.mul_(alpha / size).add_(k)
        output = scale.pow(-beta) * input
        ctx.scale = scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        batch_size, channels, height, width = input.shape
        size = ctx.size
        padded_ratio = ptcore.zeros(channels + size - 1, height, width, dtype=input.dtype)
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output
        center = padded_ratio.narrow(0, inverse_pre_pad, channels)
        for n in range(batch_size):
            center.copy_(grad_output[n] * output[n] / ctx.scale[n])
            accum_ratio = padded_ratio.narrow(0, 0, size - 1).sum(0)
            for c in range(channels):
                accum_ratio.add_(padded_ratio[c + size - 1])
                grad_input[n][c].addcmul_(input[n][c], accum_ratio, value=-cache_ratio_value)
                accum_ratio.sub_(padded_ratio[c])
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """Cross-channel LRN of a 4-D input: ``x / (k + alpha/size * sum of x^2 over the channel
    window) ** beta`` with Lua torch's window bookkeeping."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
