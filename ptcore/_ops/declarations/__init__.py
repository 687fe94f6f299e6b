"""The op declarations, one module per family (see
:mod:`ptcore._dispatch.declarations`).  Importing this package declares every
op; ``ptcore._ops`` imports it before any op module, so each op's table
entry finds its declaration when it is made."""
from ptcore._dispatch.declarations import resolve_aliases
from ptcore._ops.declarations import (  # noqa: F401
    calculus, core, creation, fft, functional, indexing, info, linalg, nn_functional, pointwise,
    random, reduction, shape, sorting, special,
)

resolve_aliases()
