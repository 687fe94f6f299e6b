"""``ptcore.nn.functional``: functional forms of the layers (``torch.nn.functional``).

Each private module below has an ``__all__``; helpers append their own import line.
"""
from ptcore._dispatch.table import lookup as _lookup
from ptcore._dispatch.device import follow_fast_forms as _follow_fast_forms
from ptcore.nn.functional._activation import *  # noqa: F401,F403
from ptcore.nn.functional._linear import *  # noqa: F401,F403
from ptcore.nn.functional._dropout import *  # noqa: F401,F403
from ptcore.nn.functional._sparse import *  # noqa: F401,F403
from ptcore.nn.functional._conv import *  # noqa: F401,F403
from ptcore.nn.functional._pool import *  # noqa: F401,F403
from ptcore.nn.functional._vision import *  # noqa: F401,F403
from ptcore.nn.functional._rnn import *  # noqa: F401,F403
from ptcore.nn.functional._attention import *  # noqa: F401,F403
from ptcore.nn.functional._ctc import *  # noqa: F401,F403
from ptcore.nn.functional._embedding_bag import *  # noqa: F401,F403
from ptcore.nn.functional._loss import *  # noqa: F401,F403
from ptcore.nn.functional._norm import *  # noqa: F401,F403
from ptcore.nn.functional._distance import *  # noqa: F401,F403
from ptcore.nn.functional._grid_sample import *  # noqa: F401,F403
from ptcore.nn.functional._gumbel_softmax import *  # noqa: F401,F403
from ptcore.nn.functional._fractional_max_pool import *  # noqa: F401,F403
from ptcore.nn.functional._conv_tbc import *  # noqa: F401,F403
from ptcore.nn.functional._linear_cross_entropy import *  # noqa: F401,F403
from ptcore.nn.functional import _dispatch_backward  # noqa: F401,E402  (registers formulas)
import ptcore.nn.grad as grad  # noqa: F401,E402  (torch.nn.functional.grad is torch.nn.grad)


# every public function here is an entry of the dispatch point (so
# ``__torch_function__``, autocast, the profiler ... see ``F.linear`` etc.)
from ptcore._dispatch.generate import bind_functions as _bind_functions  # noqa: E402
_bind_functions(globals(), [n for n in list(globals()) if not n.startswith("_")], "nn.functional",
                namespace="nn.functional")
del _bind_functions


def _relu_fast_form(base):
    """``F.relu(x)`` / ``F.relu(x, inplace=False)``'s fast form on a device:
    ptcore.relu's fast form ``base`` there (in place goes down the layers)."""
    def fast(args, kwargs):
        if kwargs:
            if len(kwargs) != 1 or kwargs.get("inplace", True) is not False:
                return None
        elif len(args) == 2 and args[1] is False:
            args = args[:1]
        return base(args, None) if len(args) == 1 else None
    return fast


_follow_fast_forms(_lookup("relu", "nn.functional"), _lookup("relu", "ptcore"), _relu_fast_form)
# torch.nn.functional re-exports torch.overrides' helpers for functions that implement __torch_function__
from ptcore._dispatch.torch_function import (  # noqa: F401,E402
    handle_torch_function, has_torch_function, has_torch_function_unary, has_torch_function_variadic)
# private helpers of torch.nn.functional that research code imports from it (custom
# MultiheadAttention / TransformerEncoderLayer copies: F._canonical_mask,
# F._in_projection_packed ...; custom norms: F._verify_batch_size)
import ptcore.nn._reduction as _Reduction  # noqa: F401,E402
from ptcore.nn.modules.utils import (  # noqa: F401,E402
    _list_with_default, _pair, _single, _triple)
from ptcore.nn.functional._attention import (  # noqa: F401,E402
    _canonical_mask, _in_projection, _in_projection_packed, _mha_shape_check, _none_or_dtype)
from ptcore.nn.functional._norm import _verify_batch_size, _verify_spatial_size  # noqa: F401,E402
from ptcore.nn.functional._pool import _unpool_output_size  # noqa: F401,E402
from ptcore._ops.reduction import _get_softmax_dim  # noqa: F401,E402
