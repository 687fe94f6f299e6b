"""``ptcore.ao.quantization.qconfig`` (``torch.ao.quantization.qconfig``): a ``QConfig``
names how a module's activation and weight are observed (observer constructors), and the
default configurations of dynamic quantization."""
from collections import namedtuple

import ptcore
from ptcore.ao.quantization.observer import (
    default_dynamic_quant_observer, default_per_channel_weight_observer,
    default_weight_observer)

__all__ = ["QConfig", "QConfigDynamic", "default_dynamic_qconfig",
           "per_channel_dynamic_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to observe a module's activation and weight: two observer constructors
    (classes or ``with_args`` partials), not instances."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, ptcore.nn.Module) or isinstance(weight, ptcore.nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigDynamic = QConfig

default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
