"""``ptcore.autograd.profiler`` (``torch.autograd.profiler``): the legacy
profiler interface over the same dispatch-point recording as
:mod:`ptcore.profiler`."""
import contextlib

from ptcore.profiler.profiler import (_KinetoProfile, kineto_available, record_function,
                                      ProfilerActivity)
from ptcore.profiler._events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "kineto_available", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


class profile(_KinetoProfile):
    """``torch.autograd.profiler.profile``: record while inside the context;
    ``function_events``, ``key_averages()``, ``table()``, ``export_chrome_trace()``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        super().__init__(activities={ProfilerActivity.CPU} if use_cpu else set(),
                         record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.enabled = enabled

    def __enter__(self):
        if not self.enabled:
            return None          # as torch: ``with profile(enabled=False) as p`` binds None
        self.start_trace()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop_trace()
        return False

    @property
    def function_events(self):
        return self._events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self._events.table(sort_by=sort_by, row_limit=row_limit, header=header,
                                  max_name_column_width=max_name_column_width,
                                  top_level_events_only=top_level_events_only)

    def total_average(self):
        return self._events.total_average()

    @property
    def self_cpu_time_total(self):
        return self._events.self_cpu_time_total


@contextlib.contextmanager
def emit_nvtx(enabled=True, record_shapes=False):
    """NVTX ranges for nvprof/Nsight: no CUDA profiler here, so nothing is emitted."""
    yield


@contextlib.contextmanager
def emit_itt(enabled=True, record_shapes=False):
    yield
