"""Layer classes of ``ptcore.nn`` (re-exported by ``ptcore.nn``)."""
from ptcore.nn.modules.module import Module  # noqa: F401
from ptcore.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
