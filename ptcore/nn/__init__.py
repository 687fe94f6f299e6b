"""ptcore.nn: neural-network modules, functional ops and initialisers (``torch.nn``)."""
from ptcore.nn.parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from ptcore.nn.modules import *  # noqa: F401,F403
from ptcore.nn import functional, init, utils  # noqa: F401
from ptcore.nn import parallel  # noqa: F401
from ptcore.nn.parallel import DataParallel  # noqa: F401
