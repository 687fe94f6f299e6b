"""``ptcore.ao.quantization.quantize`` (``torch.ao.quantization.quantize``): eager-mode
dynamic quantization, :func:`quantize_dynamic`, which swaps a model's float modules for
their dynamic quantized counterparts (``nn.Linear`` → ``ao.nn.quantized.dynamic.Linear``)."""
import copy
import warnings

import ptcore
from ptcore.ao.nn.quantized.dynamic import Linear as DynamicLinear
from ptcore.nn.modules.linear import Linear
from ptcore.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNNCell
from ptcore.ao.quantization.qconfig import default_dynamic_qconfig

__all__ = ["quantize_dynamic", "propagate_qconfig_", "convert", "swap_module",
           "get_default_dynamic_quant_module_mappings"]

# the float modules torch's default qint8 dynamic quantization covers; ptcore converts
# the Linear ones (the recurrent ones stay in floating point, with a warning)
_RECURRENT = (LSTM, GRU, LSTMCell, RNNCell, GRUCell)


def get_default_dynamic_quant_module_mappings():
    """Float module type → dynamic quantized module type."""
    # (not NonDynamicallyQuantizableLinear: MultiheadAttention's out_proj stays float)
    return {Linear: DynamicLinear}


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Give every submodule the ``qconfig`` of its type or name in ``qconfig_dict`` (or
    its parent's), as torch's."""
    qconfig_dict = qconfig_dict or {}

    def walk(m, parent_qconfig, prefix):
        qc = qconfig_dict.get(type(m), parent_qconfig)
        qc = qconfig_dict.get(prefix, qc)
        qc = getattr(m, "qconfig", qc)
        m.qconfig = qc
        for name, child in m.named_children():
            walk(child, qc, prefix + "." + name if prefix else name)
    walk(module, None, "")


def swap_module(mod, mapping, custom_module_class_mapping=None, use_precomputed_fake_quant=False):
    """The quantized counterpart of ``mod`` when ``mapping`` has its type and it has a
    qconfig, else ``mod``."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        new = mapping[type(mod)].from_float(mod)
        new.training = mod.training
        return new
    return mod


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig


def convert(module, mapping=None, inplace=False, remove_qconfig=True, **kwargs):
    """Swap the submodules of ``module`` that have a qconfig for their quantized
    counterparts in ``mapping`` (dynamic quantization's by default)."""
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)

    def walk(m):
        for name, child in list(m.named_children()):
            if type(child) not in mapping:
                walk(child)
            new = swap_module(child, mapping)
            if new is not child:
                setattr(m, name, new)
            elif isinstance(child, _RECURRENT) and getattr(child, "qconfig", None) is not None:
                warnings.warn(f"quantize_dynamic: ptcore has no dynamic quantized "
                              f"{type(child).__name__}; it stays in floating point",
                              UserWarning, stacklevel=4)
    walk(module)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def quantize_dynamic(model, qconfig_spec=None, dtype=ptcore.qint8, mapping=None,
                     inplace=False):
    """A copy of ``model`` (``inplace``: the model itself) in eval mode whose modules of
    the types (or names) in ``qconfig_spec`` are dynamically quantized: their weights
    quantized to ``dtype`` now, their inputs at each call (torch's
    ``quantize_dynamic``; ptcore quantizes ``nn.Linear`` to qint8).

    ``qconfig_spec``: a set of module types or names (each gets the default dynamic
    qconfig) or a dict from them to ``QConfig`` s; None: the Linear and recurrent
    module types."""
    if dtype is not ptcore.qint8:
        if dtype in (ptcore.float16, ptcore.quint8, ptcore.quint4x2):
            raise NotImplementedError(f"quantize_dynamic: ptcore implements dtype=qint8 "
                                      f"only, got {dtype}")
        raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
    if qconfig_spec is None:
        qconfig_spec = dict.fromkeys((Linear,) + _RECURRENT, default_dynamic_qconfig)
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model
