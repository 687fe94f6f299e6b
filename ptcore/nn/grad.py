"""Gradients of the convolutions with respect to their input or weight (``torch.nn.grad``).

Each is the convolution's backward for one argument, computed through ptcore's autograd
(the convolution is run on a zero stand-in of the missing argument and differentiated), so
it shares the convolution's own backward kernels and conventions.
"""
import ptcore
import ptcore.nn.functional._conv as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    x = ptcore.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device,
                     requires_grad=True)
    with ptcore.enable_grad():
        out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"grad_output has shape {tuple(grad_output.shape)} but the "
                               f"convolution of input size {tuple(input_size)} with weight "
                               f"{tuple(weight.shape)} gives {tuple(out.shape)}")
        return ptcore.autograd.grad(out, x, grad_output)[0]


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    w = ptcore.zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device,
                     requires_grad=True)
    with ptcore.enable_grad():
        out = conv(input.detach(), w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"grad_output has shape {tuple(grad_output.shape)} but the "
                               f"convolution of input {tuple(input.shape)} with weight size "
                               f"{tuple(weight_size)} gives {tuple(out.shape)}")
        return ptcore.autograd.grad(out, w, grad_output)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv1d`` with respect to an input of size ``input_size``."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv1d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv2d`` with respect to an input of size ``input_size``."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv2d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv3d`` with respect to an input of size ``input_size``."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of ``conv3d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
