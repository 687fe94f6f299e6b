"""``LinearCrossEntropyLoss``: a :class:`~ptcore.nn.Linear` projection to class logits
followed by the cross entropy (``torch.nn.LinearCrossEntropyLoss``, also importable from
``ptcore.nn.modules.loss``).  torch's chunked kernels live in its module of this name;
ptcore computes the loss in one piece, so its :class:`LinearCrossEntropyOptions` are
accepted and change nothing but memory use in torch."""
import math

from ptcore.nn import functional as F
from ptcore.nn.modules.linear import Linear
from ptcore.nn.modules.loss import _WeightedLoss

__all__ = []    # as torch's: the class is exported by nn.modules.loss


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``Linear(in_features, num_classes * prod(out_features))(input)``.

    Parameters
    ----------
    in_features : int
    num_classes : int
    out_features : tuple of int, default ()
        ``(d_1, ..., d_K)`` for a K-dimensional loss.
    bias : bool, default False
    device, dtype
        Of the linear weight.
    reduction : {'mean', 'sum', 'none'}
    weight : Tensor, optional
        Per-class weights ``(num_classes,)``.
    ignore_index : int, optional
        Ignored target value (``None``: -100).
    label_smoothing : float, default 0.0
    options : LinearCrossEntropyOptions, optional
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # the weight is stored 2-D (Linear's), reshaped in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = None if self.linear.bias is None else \
            self.linear.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
