"""The operator library: the op front-ends, one module per family (here),
the op declarations (``declarations``) and the CPU kernels (``kernels``:
Cython modules, their C headers in ``kernels/include``).

Under the launcher this package is also ``torch._ops``, whose op-handle classes libraries
import from it (``from torch._ops import OpOverload, HigherOrderOperator``): they are named
here."""
# every op is declared before any op module makes its table entry
from ptcore._ops import declarations as _declarations  # noqa: F401
from ptcore._dispatch.op_overload import OpOverload, OpOverloadPacket  # noqa: F401
from ptcore._ops.higher_order_operator import HigherOrderOperator  # noqa: F401
