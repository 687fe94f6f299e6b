"""The Python array API standard (2025.12) over ptcore tensors.

``x.__array_namespace__()`` returns this module. Its functions take and return
ordinary ``ptcore.Tensor`` objects (no wrapper class) and follow the
standard where PyTorch's semantics differ (argument names, ``axis=()``,
0-D promotion, Python scalars on either side, ``unique_*`` ...), while
``ptcore.X`` keeps torch's behaviour.
"""
from math import e, inf, nan, pi  # noqa: F401

from ptcore.array_api._dtypes import (  # noqa: F401
    bool, int8, int16, int32, int64, uint8, float32, float64, complex64, complex128,
    astype, can_cast, finfo, iinfo, isdtype, result_type)
from ptcore.array_api._creation import *  # noqa: F401,F403
from ptcore.array_api._elementwise import *  # noqa: F401,F403
from ptcore.array_api._elementwise import abs, pow, round  # noqa: F401  (shadow builtins on purpose)
from ptcore.array_api._manipulation import *  # noqa: F401,F403
from ptcore.array_api._statistical import *  # noqa: F401,F403
from ptcore.array_api._statistical import all, any, max, min, sum  # noqa: F401
from ptcore.array_api._searching import *  # noqa: F401,F403
from ptcore.array_api._linear_algebra import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401
from ptcore.array_api._info import __array_namespace_info__  # noqa: F401
from ptcore.array_api import fft, linalg  # noqa: F401

__array_api_version__ = "2025.12"
newaxis = None
