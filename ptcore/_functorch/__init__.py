"""``ptcore._functorch`` (``torch._functorch``): the module paths of torch's functorch
implementation that libraries import helpers from (``torch._functorch.vmap``); the
transforms themselves are :mod:`ptcore.func`."""
# (torch's package has these as attributes once torch is imported: PyPose reads
# ``torch._functorch.eager_transforms._wrap_tensor_for_grad`` without importing it)
from ptcore._functorch import eager_transforms, vmap  # noqa: F401
