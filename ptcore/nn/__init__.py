"""ptcore.nn: neural-network modules, functional ops and initialisers (``torch.nn``)."""
from ptcore.nn.parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from ptcore.nn.modules import *  # noqa: F401,F403
from ptcore.nn import functional, init, utils  # noqa: F401


def __getattr__(name):
    if name == "parallel":
        import importlib
        mod = importlib.import_module("ptcore.nn.parallel")
        globals()[name] = mod
        return mod
    if name in ("DataParallel",):
        from ptcore.nn.parallel import DataParallel
        return DataParallel
    raise AttributeError(f"module 'ptcore.nn' has no attribute '{name}'")
