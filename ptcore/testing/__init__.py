"""``ptcore.testing`` (``torch.testing``): :func:`assert_close`, its
deprecated form :func:`assert_allclose`, and :func:`make_tensor`."""
from ptcore.testing._comparison import assert_allclose, assert_close
from ptcore.testing._creation import make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
