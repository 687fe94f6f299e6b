"""The graph executor's switches (``torch.jit.optimized_execution``,
``fuser``, ``set_fusion_strategy``, ``strict_fusion``).

ptcore's executor has one optimisation that depends on them: the fusion of
pointwise chains into single-pass kernels (``ptcore.jit._fusion``).  It
runs while execution is optimised and a fuser is selected; inside
``optimized_execution(False)`` or ``fuser("none")`` graphs run node by
node.  The fusion strategy is recorded and returned as torch's is (ptcore
fuses for the shapes a graph runs with, without specialising on them)."""
import contextlib
import threading
import warnings

from ptcore.jit._annotations import is_scripting

__all__ = ["optimized_execution", "fuser", "set_fusion_strategy", "strict_fusion", "fusing",
           "last_executed_optimized_graph", "executed"]

_state = threading.local()
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")
_STRATEGY = [[("STATIC", 2), ("DYNAMIC", 10)]]


def _get(name, default):
    return getattr(_state, name, default)


def fusing():
    """Whether graphs run with their pointwise chains fused now."""
    return _get("optimize", True) and _get("fuser", "fuser1") != "none"


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """Run graphs optimised (``True``, the default) or node by node
    (``torch.jit.optimized_execution``)."""
    prev = _get("optimize", True)
    _state.optimize = bool(should_optimize)
    try:
        yield
    finally:
        _state.optimize = prev


@contextlib.contextmanager
def fuser(name):
    """Select the fuser (``torch.jit.fuser``): ``"fuser0"`` to ``"fuser3"``
    keep ptcore's pointwise fusion, ``"none"`` turns it off."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")
    prev = _get("fuser", "fuser1")
    _state.fuser = name
    try:
        yield
    finally:
        _state.fuser = prev


def set_fusion_strategy(strategy):
    """Record the fusion strategy, a list of ``("STATIC" | "DYNAMIC", depth)``
    pairs, and return the previous one (``torch.jit.set_fusion_strategy``)."""
    pairs = []
    for item in strategy:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError("set_fusion_strategy expects a list of (\"STATIC\" | \"DYNAMIC\", "
                            f"depth) pairs, got {item!r}")
        kind, depth = item
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        if isinstance(depth, bool) or not isinstance(depth, int):
            raise TypeError(f"set_fusion_strategy: the depth of {kind} must be an int, "
                            f"got {type(depth).__name__}")
        pairs.append((kind, depth))
    prev = _STRATEGY[0]
    _STRATEGY[0] = pairs
    return prev


class strict_fusion:
    """``torch.jit.strict_fusion``: in TorchScript, asserts that the block
    fuses.  Outside scripted code it does nothing but warn, as torch's."""

    def __init__(self):
        if not is_scripting():
            warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def executed(graph):
    """Record ``graph`` as the last one this thread ran."""
    _state.last = graph


def last_executed_optimized_graph():
    """The graph this thread ran last (``torch.jit.last_executed_optimized_graph``)."""
    g = _get("last", None)
    if g is None:
        raise RuntimeError("no graph has been executed in this thread")
    return g
