"""``ptcore.ao.quantization.observer`` (``torch.ao.quantization.observer``): observers, the
modules that record statistics of the tensors passing through and turn them into
quantization parameters (``calculate_qparams``, torch's arithmetic): ``MinMaxObserver``,
``PerChannelMinMaxObserver``, ``PlaceholderObserver`` (dynamic quantization's activation)
and the default observer constructors."""
import functools
from abc import ABC, abstractmethod

import ptcore
from ptcore.nn.modules.module import Module

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAverageMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "PlaceholderObserver", "default_weight_observer",
           "default_per_channel_weight_observer", "default_observer",
           "default_dynamic_quant_observer"]


def _with_args(cls_or_self, **kwargs):
    """A constructor of ``cls_or_self`` with ``kwargs`` bound (torch's ``with_args``)."""
    return functools.partial(cls_or_self, **kwargs)


class _QuantizerBase(ABC, Module):
    """What observers and fake quantizers share: an abstract ``forward`` (which observes what
    passes through) and ``calculate_qparams``, and the ``with_args`` constructor maker."""

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    with_args = classmethod(_with_args)


class ObserverBase(_QuantizerBase):
    """Base observer module: ``forward`` records statistics of what passes through and
    ``calculate_qparams`` turns them into quantization parameters (both abstract)."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic


def _qmin_qmax(dtype, reduce_range, quant_min, quant_max):
    """The integer range of an observer (torch's ``_calculate_qmin_qmax``)."""
    if quant_min is not None and quant_max is not None:
        if not quant_min <= 0 <= quant_max:
            raise AssertionError("Used-specified quantization range must include 0.")
        if quant_min >= quant_max:
            raise AssertionError("qmin must be strictly less than qmax for user-specified "
                                 "quantization range.")
        if reduce_range:                 # (torch halves a user-specified range too)
            return quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype is ptcore.qint8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype is ptcore.quint8:
        return (0, 127) if reduce_range else (0, 255)
    if dtype is ptcore.qint32:
        return -2 ** 31, 2 ** 31 - 1
    if dtype is ptcore.int8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype is ptcore.uint8:
        return (0, 127) if reduce_range else (0, 255)
    raise ValueError(f"Unsupported dtype for the observer: {dtype}")


class UniformQuantizationObserverBase(ObserverBase):
    """What the min/max observers share: the dtype, scheme and integer range, and the
    quantization parameters of an observed range (``_calculate_qparams``)."""

    eps: "ptcore.Tensor"

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=None, is_dynamic=False, **kwargs):
        dtype = ptcore.quint8 if dtype is None else dtype
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = ptcore.per_tensor_affine if qscheme is None else qscheme
        if reduce_range:
            import warnings
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers. reduce_range will be deprecated in a future release of "
                          "PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        eps = ptcore.finfo(ptcore.float32).eps if eps is None else eps
        self.register_buffer("eps", ptcore.tensor([eps]))
        allowed = (ptcore.per_tensor_affine, ptcore.per_tensor_symmetric,
                   ptcore.per_channel_affine, ptcore.per_channel_symmetric,
                   ptcore.per_channel_affine_float_qparams)
        if self.qscheme not in allowed:
            raise AssertionError(f"Default Observer only works for per_tensor_affine, "
                                 f"per_tensor_symmetric, per_channel_affine, "
                                 f"per_channel_symmetric and per_channel_float_qparams quantization "
                                 f"scheme")
        if dtype not in (ptcore.qint8, ptcore.quint8, ptcore.qint32, ptcore.int8,
                         ptcore.uint8):
            raise AssertionError("Default Observer only works for qint8, quint8 and quint4x2 "
                                 "data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _qmin_qmax(dtype, reduce_range, quant_min, quant_max)

    def _calculate_qparams(self, min_val, max_val):
        """``(scale, zero_point)`` for the observed ``min_val``/``max_val`` (torch's
        arithmetic, in float32 tensors)."""
        if min_val.numel() == 0 or max_val.numel() == 0 or bool(
                ((min_val == float("inf")) & (max_val == float("-inf"))).any()):
            import warnings
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=2)
            return ptcore.tensor([1.0]), ptcore.tensor([0])
        if not bool((min_val <= max_val).all()):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = ptcore.minimum(min_val, ptcore.zeros_like(min_val))
        max_pos = ptcore.maximum(max_val, ptcore.zeros_like(max_val))
        zero_point = ptcore.zeros(min_neg.size(), dtype=ptcore.int64)
        if self.qscheme in (ptcore.per_tensor_symmetric, ptcore.per_channel_symmetric):
            max_pos = ptcore.maximum(-min_neg, max_pos)
            scale = max_pos / (float(qmax - qmin) / 2)
            scale = ptcore.maximum(scale, self.eps)
            if self.dtype in (ptcore.quint8, ptcore.uint8):
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = ptcore.full(zero_point.size(), mid, dtype=ptcore.int64)
        elif self.qscheme is ptcore.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = ptcore.where(scale > self.eps, scale, ptcore.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_pos - min_neg) / float(qmax - qmin)
            scale = ptcore.maximum(scale, self.eps)
            zero_point = qmin - ptcore.round(min_neg / scale).to(ptcore.int32)
            zero_point = ptcore.clamp(zero_point, qmin, qmax)
        if scale.dim() == 0:
            scale = ptcore.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            zero_point = ptcore.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the base observer.")


class _RangeObserver(UniformQuantizationObserverBase):
    """An observer of running ``min_val``/``max_val`` buffers (per tensor or per channel)."""

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MinMaxObserver(_RangeObserver):
    """Observes the running minimum and maximum of what passes through and derives
    per-tensor quantization parameters from them (``torch.ao.quantization.MinMaxObserver``)."""

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=None, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", ptcore.tensor(float("inf")))
        self.register_buffer("max_val", ptcore.tensor(float("-inf")))
        if self.qscheme is ptcore.per_tensor_symmetric and self.reduce_range and \
                self.dtype is ptcore.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        mn, mx = self._merge(*ptcore.aminmax(x))
        self.min_val.copy_(mn)
        self.max_val.copy_(mx)
        return x_orig

    def _merge(self, mn, mx):
        """The running range after a batch with range ``mn``/``mx``."""
        return ptcore.minimum(mn, self.min_val), ptcore.maximum(mx, self.max_val)

    def reset_min_max_vals(self):
        self.min_val.copy_(ptcore.tensor(float("inf")))
        self.max_val.copy_(ptcore.tensor(float("-inf")))


class PerChannelMinMaxObserver(_RangeObserver):
    """Observes the running minimum and maximum of each slice along ``ch_axis``
    (``torch.ao.quantization.PerChannelMinMaxObserver``)."""

    def __init__(self, ch_axis=0, dtype=None, qscheme=None, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=None,
                 is_dynamic=False, **kwargs):
        qscheme = ptcore.per_channel_affine if qscheme is None else qscheme
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", ptcore.tensor([]))
        self.register_buffer("max_val", ptcore.tensor([]))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        y = ptcore.flatten(ptcore.movedim(x, self.ch_axis, 0), start_dim=1)
        mn, mx = ptcore.aminmax(y, dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            self.min_val, self.max_val = mn, mx
        else:
            self.min_val, self.max_val = self._merge(mn, mx)
        return x_orig

    def _merge(self, mn, mx):
        """The running ranges after a batch with ranges ``mn``/``mx``."""
        return ptcore.minimum(self.min_val, mn), ptcore.maximum(self.max_val, mx)

    def reset_min_max_vals(self):
        self.min_val = ptcore.tensor([])
        self.max_val = ptcore.tensor([])


class MovingAverageMinMaxObserver(MinMaxObserver):
    """A MinMaxObserver whose range follows a moving average of each batch's minimum and
    maximum (``averaging_constant``), the observer of quantization-aware training."""

    def __init__(self, averaging_constant=0.01, dtype=None, qscheme=None,
                 reduce_range=False, quant_min=None, quant_max=None, eps=None,
                 is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic "
                                      "quantization")
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def _merge(self, mn, mx):
        if float(self.min_val) == float("inf") and float(self.max_val) == float("-inf"):
            return mn, mx
        c = self.averaging_constant
        return self.min_val + c * (mn - self.min_val), self.max_val + c * (mx - self.max_val)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel running minimum and maximum as moving averages (``averaging_constant``)."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=None, qscheme=None,
                 reduce_range=False, quant_min=None, quant_max=None, eps=None,
                 is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support "
                                      "dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min, quant_max=quant_max,
                         eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def _merge(self, mn, mx):
        c = self.averaging_constant
        return self.min_val + c * (mn - self.min_val), self.max_val + c * (mx - self.max_val)


class PlaceholderObserver(ObserverBase):
    """Records nothing: stands for the dtype (and dynamic flag) an activation is
    quantized to when the parameters are chosen at run time (dynamic quantization)."""

    def __init__(self, dtype=None, custom_op_name="", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=ptcore.float32 if dtype is None else dtype,
                         is_dynamic=is_dynamic)
        self.qscheme = ptcore.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max = quant_min, quant_max
        self.eps = eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


default_weight_observer = MinMaxObserver.with_args(dtype=ptcore.qint8,
                                                   qscheme=ptcore.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=ptcore.qint8, qscheme=ptcore.per_channel_symmetric)
default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=ptcore.quint8, quant_min=0, quant_max=255, is_dynamic=True)
