"""The operator library: the op front-ends, one module per family (here),
the op declarations (``declarations``) and the CPU kernels (``kernels``:
Cython modules, their C headers in ``kernels/include``)."""
# every op is declared before any op module makes its table entry
from ptcore._ops import declarations as _declarations  # noqa: F401
