"""``ptcore.utils.deterministic`` (``torch.utils.deterministic``):
``fill_uninitialized_memory``, whether ``empty``/``empty_like``/``resize_``
fill new memory (NaN for floating and complex dtypes, the largest value for
integers) while :func:`ptcore.use_deterministic_algorithms` is on (default
True)."""
import sys
import types

from ptcore import _settings


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether to fill uninitialized memory with a known value when
        :func:`ptcore.use_deterministic_algorithms` is set to ``True``."""
        return _settings._get_deterministic_fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        _settings._set_deterministic_fill_uninitialized_memory(mode)


sys.modules[__name__].__class__ = _Deterministic
