"""``ptcore.quantization`` (``torch.quantization``): the older path of
:mod:`ptcore.ao.quantization`, the same objects under it (tutorials call
``torch.quantization.quantize_dynamic``)."""
from ptcore.ao.quantization import *  # noqa: F401,F403
from ptcore.ao.quantization import __all__  # noqa: F401
