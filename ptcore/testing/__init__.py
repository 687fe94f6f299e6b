"""``ptcore.testing`` (``torch.testing``): :func:`assert_close` and its
deprecated form :func:`assert_allclose`, :func:`make_tensor`, and
:class:`FileCheck` for matching patterns in ``ptcore.jit`` graphs."""
from ptcore.testing._comparison import assert_allclose, assert_close
from ptcore.testing._creation import make_tensor
from ptcore.testing._filecheck import FileCheck

__all__ = ["FileCheck", "assert_close", "assert_allclose", "make_tensor"]
