"""ptcore.nn: neural-network modules, functional ops and initialisers (``torch.nn``)."""
from ptcore.nn.parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from ptcore.nn.modules import *  # noqa: F401,F403
from ptcore.nn import functional, init  # noqa: F401
from ptcore.nn import parallel  # noqa: F401
from ptcore.nn.parallel import DataParallel  # noqa: F401
from ptcore.nn import grad, common_types  # noqa: F401,E402
# torch.nn.attention is the SDPA-backend package, not the MultiheadAttention module file
# that the star import above binds under that name: import the package explicitly;
# likewise torch.nn.utils, not the nn.modules.utils the layers import helpers from
import importlib as _importlib  # noqa: E402
attention = _importlib.import_module("ptcore.nn.attention")
utils = _importlib.import_module("ptcore.nn.utils")
del _importlib


def factory_kwargs(kwargs):
    """The factory keywords (``device``, ``dtype``, ``memory_format``) of ``kwargs`` as one dict,
    merged with an explicit ``factory_kwargs`` entry; unexpected keys raise ``TypeError``
    (``torch.nn.factory_kwargs``)."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


def __getattr__(name):
    # ``ptcore.nn.quantized`` (torch.nn.quantized): the old path of ptcore.ao.nn.quantized
    if name == "quantized":
        # lazy: the quantized modules load with their first use, not with ptcore.nn
        import ptcore.nn.quantized as quantized
        return quantized
    raise AttributeError(f"module 'ptcore.nn' has no attribute {name!r}")
