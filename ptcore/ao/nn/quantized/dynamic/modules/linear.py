"""``torch.ao.nn.quantized.dynamic.Linear``: a Linear layer whose weight is quantized to
qint8 once (per tensor or per output channel) and whose input is quantized to quint8 at
each call, from its own range; the products are summed in integers (fbgemm's numerics,
:func:`ptcore._quantized._ops.linear_dynamic`)."""
import ptcore
from ptcore._quantized._ops import (linear_dynamic, pack_weight, quantize_per_channel,
                                   quantize_per_tensor)
from ptcore.nn.modules.linear import Linear as _FloatLinear, NonDynamicallyQuantizableLinear
from ptcore.nn.modules.module import Module

__all__ = ["Linear", "LinearPackedParams"]


class LinearPackedParams(Module):
    """Holds a quantized Linear's quantized weight and float bias (torch's packed
    parameters); its state dict entries are ``dtype`` and ``_packed_params``, the
    ``(weight, bias)`` pair, as torch's."""

    _version = 3

    def __init__(self, dtype=ptcore.qint8):
        super().__init__()
        if dtype is not ptcore.qint8:
            raise RuntimeError(f"Unsupported dtype on dynamic quantized linear: {dtype} "
                               f"(ptcore implements qint8)")
        self.dtype = dtype
        self.set_weight_bias(quantize_per_tensor(ptcore.zeros(1, 1), 1.0, 0, ptcore.qint8), None)

    def set_weight_bias(self, weight, bias):
        packed = pack_weight(weight)
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
            raise RuntimeError("bias should be a vector (1D Tensor) of the weight's out_features "
                               "size")
        self._packed_params = (weight, None if bias is None else bias.detach())
        self._packed = packed

    def _weight_bias(self):
        return self._packed_params

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if prefix + "dtype" in state_dict:
            self.dtype = state_dict.pop(prefix + "dtype")
        if prefix + "_packed_params" in state_dict:
            weight, bias = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        elif strict:
            missing_keys.append(prefix + "_packed_params")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())


class Linear(Module):
    """A dynamically quantized Linear layer (``torch.ao.nn.quantized.dynamic.Linear``):
    ``y = x @ W.T + b`` with ``W`` a qint8 quantized weight (``weight()``) and ``x``
    quantized to 7-bit quint8 at each call.  Made from a float ``nn.Linear`` by
    :meth:`from_float` (what :func:`ptcore.ao.quantization.quantize_dynamic` calls)."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=ptcore.qint8):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = ptcore.zeros(out_features, dtype=ptcore.float32) if bias_ else None
        qweight = quantize_per_tensor(ptcore.zeros(out_features, in_features), 1.0, 0,
                                      ptcore.qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale = 1.0
        self.zero_point = 0
        self.version = self._version

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def __repr__(self):
        # the packed parameters are not shown as a child (torch's _hide_packed_params_repr)
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self):
        w = self.weight()
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}, qscheme={w.qscheme()}")

    def weight(self):
        return self._packed_params._weight_bias()[0]

    def bias(self):
        return self._packed_params._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def forward(self, x):
        pp = self._packed_params
        w, b = pp._weight_bias()
        y = linear_dynamic(x, w, b, reduce_range=self.version is not None and self.version >= 4,
                           packed=pp._packed)
        return y.to(x.dtype)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = ptcore.tensor(self.scale)
        destination[prefix + "zero_point"] = ptcore.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale", self.scale))
        self.zero_point = int(state_dict.pop(prefix + "zero_point", self.zero_point))
        self.version = local_metadata.get("version", self.version)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamic quantized Linear of the float ``nn.Linear`` ``mod`` (its
        ``qconfig``'s weight observer picks the weight's quantization parameters)."""
        if type(mod) not in (_FloatLinear, NonDynamicallyQuantizableLinear):
            raise AssertionError(f"nn.quantized.dynamic.Linear.from_float only works for one "
                                 f"of['Linear', 'NonDynamicallyQuantizableLinear'], got "
                                 f"{type(mod)}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            observer = mod.qconfig.weight()
        else:
            # lazy: ptcore.ao.quantization imports this module (torch defers it too)
            from ptcore.ao.quantization.qconfig import default_dynamic_qconfig
            observer = default_dynamic_qconfig.weight()
        if observer.dtype is not ptcore.qint8:
            raise AssertionError(f"The only supported dtype for dynamic quantized linear in "
                                 f"ptcore is qint8, got: {observer.dtype}")
        observer(mod.weight)
        qweight = _quantize_weight(mod.weight.detach().float(), observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(qweight, None if mod.bias is None else mod.bias.detach())
        return qlinear


def _quantize_weight(w, observer):
    """``w`` quantized with ``observer``'s parameters (torch's ``_quantize_weight``)."""
    scale, zp = observer.calculate_qparams()
    if observer.qscheme in (ptcore.per_tensor_symmetric, ptcore.per_tensor_affine):
        return quantize_per_tensor(w, float(scale), int(zp), ptcore.qint8)
    if observer.qscheme in (ptcore.per_channel_symmetric, ptcore.per_channel_affine):
        return quantize_per_channel(w, scale.to(ptcore.float64), zp.to(ptcore.int64),
                                    observer.ch_axis, ptcore.qint8)
    raise ValueError(f"Unexpected qscheme {observer.qscheme}")
