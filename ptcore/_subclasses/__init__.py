"""``ptcore._subclasses`` (``torch._subclasses``): the tensor subclasses torch's compiler
stack builds on.  ptcore has no fake tensors (its compiler infers shapes on the ``meta``
device, see :mod:`ptcore._meta`); :mod:`.fake_tensor` gives the names libraries import
from there, with :func:`~.fake_tensor.is_fake` false for every object and
:class:`~.fake_tensor.FakeTensorMode` raising :class:`NotImplementedError` when used."""
from ptcore._subclasses.fake_tensor import (DynamicOutputShapeException, FakeTensor,
                                             FakeTensorMode, UnsupportedFakeTensorException)

__all__ = ["DynamicOutputShapeException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException"]
