"""``ptcore.ao.quantization.observer`` (``torch.ao.quantization.observer``): observers, the
modules that record statistics of the tensors passing through and turn them into
quantization parameters (``calculate_qparams``, torch's arithmetic): ``MinMaxObserver``,
``PerChannelMinMaxObserver``, ``PlaceholderObserver`` (dynamic quantization's activation)
and the default observer constructors."""
import functools
import warnings
from abc import ABC, abstractmethod

import ptcore
from ptcore.nn.modules.module import Module

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAverageMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "PlaceholderObserver", "default_weight_observer",
           "default_per_channel_weight_observer", "default_observer",
           "default_histogram_observer",
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


class HistogramObserver(UniformQuantizationObserverBase):
    """Records the running histogram (``bins`` bins) and min/max of its input;
    ``calculate_qparams`` searches the histogram for the range with the least L2
    quantization error and derives the parameters from it as ``MinMaxObserver``."""

    def __init__(self, bins=2048, dtype=None, qscheme=None, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=None,
                 is_dynamic=False, **kwargs):
        qscheme = ptcore.per_tensor_affine if qscheme is None else qscheme
        if qscheme not in (ptcore.per_tensor_affine, ptcore.per_tensor_symmetric):
            raise NotImplementedError("HistogramObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.bins = bins
        self.register_buffer("histogram", ptcore.zeros(self.bins))
        self.register_buffer("min_val", ptcore.tensor(float("inf")))
        self.register_buffer("max_val", ptcore.tensor(float("-inf")))
        self.dst_nbins = 2 ** ptcore.iinfo(self.dtype).bits
        self.upsample_rate = 16

    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        """density * (end**3 - begin**3) / 3: the L2 norm of values spread uniformly."""
        norm = (delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3
        return density * norm

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = ptcore.arange(self.bins)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        dst_bin_of_begin = ptcore.clamp(
            ptcore.div(src_bin_begin, dst_bin_width, rounding_mode="floor"), 0,
            self.dst_nbins - 1)
        dst_bin_of_begin_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        dst_bin_of_end = ptcore.clamp(
            ptcore.div(src_bin_end, dst_bin_width, rounding_mode="floor"), 0,
            self.dst_nbins - 1)
        density = self.histogram / bin_width
        norm = ptcore.zeros(self.bins)
        delta_begin = src_bin_begin - dst_bin_of_begin_center
        delta_end = dst_bin_width / 2
        norm += self._get_norm(delta_begin, ptcore.ones(self.bins) * delta_end, density)
        norm += (dst_bin_of_end - dst_bin_of_begin - 1) * self._get_norm(
            ptcore.tensor(-dst_bin_width / 2), ptcore.tensor(dst_bin_width / 2), density)
        dst_bin_of_end_center = dst_bin_of_end * dst_bin_width + dst_bin_width / 2
        delta_begin = -dst_bin_width / 2
        delta_end = src_bin_end - dst_bin_of_end_center
        norm += self._get_norm(ptcore.tensor(delta_begin), delta_end, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        if self.histogram.size()[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = ptcore.sum(self.histogram).item()
        csum = ptcore.cumsum(self.histogram, dim=0).tolist()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha = alpha + stepsize
            next_beta = beta - stepsize
            lo, hi = start_bin, end_bin
            while lo < end_bin and csum[lo] < next_alpha * total:
                lo += 1
            while hi > start_bin and csum[hi] > next_beta * total:
                hi -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (lo - start_bin) > (end_bin - hi):
                next_start_bin = lo
                alpha = next_alpha
            else:
                next_end_bin = hi
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        histogram = histogram.repeat_interleave(self.upsample_rate) / self.upsample_rate
        bin_size = (orig_max - orig_min) / (self.bins * self.upsample_rate)
        mid_points = ptcore.linspace(orig_min, orig_max,
                                     self.bins * self.upsample_rate + 1)[:-1] + 0.5 * bin_size
        boundaries = ptcore.linspace(update_min, update_max, self.bins + 1)
        buckets = ptcore.bucketize(mid_points, boundaries, right=True) - 1
        buckets = ptcore.clamp(buckets, 0, self.bins - 1)
        return ptcore.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min,
                            update_max):
        if update_min == orig_min and update_max == orig_max:
            return orig_hist + update_hist
        if orig_min == orig_max:
            bin_value = ptcore.sum(orig_hist)
            transformed = ptcore.histc(orig_min, bins=self.bins, min=float(update_min),
                                       max=float(update_max)) * bin_value
            return transformed + update_hist
        if update_min > orig_min:
            raise AssertionError("update_min must be <= orig_min")
        if update_max < orig_max:
            raise AssertionError("update_max must be >= orig_max")
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max,
                                                     update_min, update_max)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = ptcore.aminmax(x)
        if x_min == float("-inf") or x_max == float("inf"):
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = ptcore.aminmax(x)
        current_min, current_max = self.min_val, self.max_val
        if self.min_val == float("inf") or self.max_val == float("-inf"):
            self.min_val.copy_(x_min)
            self.max_val.copy_(x_max)
            self.histogram.copy_(ptcore.histc(x, self.bins, min=float(x_min),
                                              max=float(x_max)))
            return x_orig
        new_min = ptcore.minimum(current_min, x_min)
        new_max = ptcore.maximum(current_max, x_max)
        update = ptcore.histc(x, self.bins, min=float(new_min), max=float(new_max))
        if new_min == current_min and new_max == current_max:
            self.histogram.copy_(self.histogram + update)
        else:
            combined = self._combine_histograms(self.histogram, current_min, current_max,
                                                update, new_min, new_max)
            self.histogram.copy_(combined)
            self.min_val.copy_(new_min)
            self.max_val.copy_(new_max)
        return x_orig

    def calculate_qparams(self):
        if self.min_val == float("inf") and self.max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default scale and zero point ", stacklevel=2)
            return ptcore.tensor([1.0]), ptcore.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the "
                                 "number of bins supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


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
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=ptcore.quint8, quant_min=0, quant_max=255, is_dynamic=True)
