"""``ptcore.utils.benchmark``: ``Timer``, ``Measurement`` and ``Compare``
(``torch.utils.benchmark``) for timing Python statements."""
from ptcore.utils.benchmark.common import (  # noqa: F401
    Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig,
    unit_to_english,
)
from ptcore.utils.benchmark.compare import Colorize, Compare  # noqa: F401
from ptcore.utils.benchmark.timer import Language, Timer, timer  # noqa: F401

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "timer",
           "ordered_unique", "select_unit", "set_torch_threads", "trim_sigfig",
           "unit_to_english"]
