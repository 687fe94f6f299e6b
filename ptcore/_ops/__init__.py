"""The operator library: the op declarations (``declarations``), the CPU
kernels (Cython) and the op front-ends, one module per family."""
# every op is declared before any op module makes its table entry
from ptcore._ops import declarations as _declarations  # noqa: F401
