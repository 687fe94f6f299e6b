"""``ptcore.profiler`` (``torch.profiler``): per-op CPU time and call counts
recorded at the dispatch point, ``record_function`` ranges, summary tables
and Chrome-trace export."""
from ptcore.profiler.profiler import (ProfilerAction, ProfilerActivity, _KinetoProfile, profile,
                                      record_function, schedule, supported_activities,
                                      tensorboard_trace_handler)

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
