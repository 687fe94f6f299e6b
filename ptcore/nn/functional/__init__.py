"""``ptcore.nn.functional``: functional forms of the layers (``torch.nn.functional``).

Each private module below has an ``__all__``; helpers append their own import line.
"""
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
from ptcore.nn import grad  # noqa: F401,E402  (torch.nn.functional.grad is torch.nn.grad)


def _bind_entries():
    """Every public function here is an entry of the dispatch point (so
    ``__torch_function__``, autocast, the profiler ... see ``F.linear`` etc.)."""
    import sys
    from ptcore._dispatch.generate import bind_namespace
    mod = sys.modules[__name__]
    names = [n for n in dir(mod) if not n.startswith("_")]
    bind_namespace(mod, names, "nn.functional", namespace="nn.functional")


_bind_entries()
del _bind_entries


def _relu_device_fast():
    """``F.relu(x)`` / ``F.relu(x, inplace=False)`` on a device: ptcore.relu's
    device fast path (OpDef.device_fast; in place goes down the layers)."""
    from ptcore._dispatch.table import lookup
    base = lookup("relu", "ptcore").device_fast
    if base is None:
        return

    def fast(args, kwargs):
        if kwargs:
            if len(kwargs) != 1 or kwargs.get("inplace", True) is not False:
                return None
        elif len(args) == 2 and args[1] is False:
            args = args[:1]
        return base(args, None) if len(args) == 1 else None
    lookup("relu", "nn.functional").device_fast = fast


_relu_device_fast()
del _relu_device_fast
# torch.nn.functional re-exports torch.overrides' helpers for functions that implement __torch_function__
from ptcore._dispatch.torch_function import (  # noqa: F401,E402
    handle_torch_function, has_torch_function, has_torch_function_unary, has_torch_function_variadic)
