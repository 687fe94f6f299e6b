"""``ptcore.backends.opt_einsum``: the contraction order of ``einsum`` over three or
more operands.

As torch's: when the ``opt_einsum`` package is installed, ``enabled`` is True and
``strategy`` ``"auto"``, and ``einsum`` contracts its operands in the order
``opt_einsum.contract_path`` plans (``"auto"``, ``"greedy"`` or ``"optimal"``);
otherwise, or with ``enabled = False``, left to right.  The order changes the
cost of a contraction chain by orders of magnitude, and (for integer and bool
operands) which sums promote, so ptcore follows torch's setting.
"""
import contextlib
import importlib.util
import sys
import types

from ptcore import _settings

__all__ = ["is_available", "get_opt_einsum", "flags", "set_flags", "enabled", "strategy"]

_STATE = _settings._state["opt_einsum"]


def is_available():
    """True when the ``opt_einsum`` package is installed."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The ``opt_einsum`` module, or None."""
    if not is_available():
        return None
    import opt_einsum      # noqa: PLC0415 - an optional package, imported on first use
    return opt_einsum


def _set_enabled(value):
    if not is_available() and value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. ptcore.einsum will fall back "
            "to contracting from left to right. To enable this optimal path calculation, "
            "please install opt-einsum.")
    _STATE[0] = value


def _set_strategy(value):
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. ptcore.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`.")
    if not _STATE[0]:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. ptcore.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but "
                         f"is {value}")
    _STATE[1] = value


def set_flags(_enabled=None, _strategy=None):
    """Set ``enabled``/``strategy`` (None: unchanged); returns the old pair."""
    old = (_STATE[0], _STATE[1] if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return old


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """``enabled``/``strategy`` for the block, restored after."""
    old = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*old)


class _OptEinsumModule(types.ModuleType):
    @property
    def enabled(self):
        """Whether einsum over three or more operands follows opt_einsum's path."""
        return _STATE[0]

    @enabled.setter
    def enabled(self, value):
        _set_enabled(value)

    @property
    def strategy(self):
        """opt_einsum's path strategy: ``"auto"``, ``"greedy"`` or ``"optimal"``."""
        return _STATE[1]

    @strategy.setter
    def strategy(self, value):
        _set_strategy(value)


sys.modules[__name__].__class__ = _OptEinsumModule
