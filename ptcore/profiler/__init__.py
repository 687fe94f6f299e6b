"""``ptcore.profiler`` (``torch.profiler``): per-op CPU time and call counts
recorded at the dispatch point, ``record_function`` ranges, summary tables
and Chrome-trace export."""
from ptcore.profiler.profiler import (ProfilerAction, ProfilerActivity, kineto_available, profile,
                                      record_function, schedule, supported_activities,
                                      tensorboard_trace_handler)
from ptcore.profiler.profiler import _KinetoProfile  # noqa: F401  (torch.profiler._KinetoProfile)

__all__ = ["ProfilerAction", "ProfilerActivity", "kineto_available", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
