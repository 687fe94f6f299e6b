"""Profiler results: :class:`FunctionEvent`, their averages per name
(:class:`FunctionEventAvg`), and :class:`EventList` with ``table()`` and
``export_chrome_trace()`` in PyTorch's formats."""
import json
import os

__all__ = ["Interval", "FunctionEvent", "FunctionEventAvg", "EventList"]


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes):
    """torch's memory column format (``1.00 MB``, ``-512 B``)."""
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def _format_pct(part, total):
    return f"{(part / total * 100.0 if total else 0.0):.2f}%"


class Interval:
    """A time range in microseconds (``FunctionEvent.time_range``)."""
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class FunctionEvent:
    """One recorded range (times in microseconds, as torch)."""

    def __init__(self, ev, t0_ns):
        self.id = ev.id
        # the steps of a scheduled profile are one row, as in torch
        self.trace_name = ev.name
        self.name = "ProfilerStep*" if ev.name.startswith("ProfilerStep#") else ev.name
        self.key = self.name
        self.thread = ev.thread
        self.start_us = (ev.start_ns - t0_ns) / 1e3
        self.end_us = (ev.end_ns - t0_ns) / 1e3
        self.cpu_time_total = (ev.end_ns - ev.start_ns) / 1e3
        self.self_cpu_time_total = max(0.0, (ev.end_ns - ev.start_ns - ev.children_ns) / 1e3)
        self.input_shapes = ev.input_shapes if ev.input_shapes is not None else []
        self.is_user_annotation = ev.is_user
        self.depth = ev.depth
        self.count = 1
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        # host memory the range allocated net of what it freed (profile_memory=True),
        # and the part its child ranges did not
        self.cpu_memory_usage = ev.mem
        self.self_cpu_memory_usage = ev.mem - ev.children_mem
        self.flops = 0              # (with_flops: ptcore counts no flops, always 0)
        self.cpu_children = []
        self.cpu_parent = None

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def time_range(self):
        return Interval(self.start_us, self.end_us)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them) added up."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.input_shapes = input_shapes
        self.is_user_annotation = False
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0

    def add(self, ev):
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.flops += ev.flops
        self.is_user_annotation = ev.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


_SORT_KEYS = {"cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
              "device_time_total", "self_device_time_total", "cuda_time_total",
              "self_cuda_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "flops"}


class EventList(list):
    """A list of events with PyTorch's summary table and trace export."""

    def __init__(self, *args, group_by_input_shape=False, **kwargs):
        super().__init__(*args)
        self._group_by_input_shape = group_by_input_shape

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            g = groups.get(key)
            if g is None:
                g = groups[key] = FunctionEventAvg(e.key, e.input_shapes if
                                                   group_by_input_shape else None)
            g.add(e)
        return EventList(groups.values(), group_by_input_shape=group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's summary table: name, self CPU %, self CPU, CPU total %,
        CPU total, CPU time avg, number of calls (and input shapes when
        grouped by them)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "depth", 0) == 0]
        if sort_by is not None:
            key = sort_by.replace("cuda", "device")
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows.sort(key=lambda e: getattr(e, key, 0), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = sum(e.self_cpu_time_total for e in self)
        name_w = max([len("Name")] + [len(str(e.key)) for e in rows]) + 4
        name_w = min(name_w, max_name_column_width)
        mem = any(e.cpu_memory_usage or e.self_cpu_memory_usage for e in self)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"] + \
            (["CPU Mem", "Self CPU Mem"] if mem else []) + ["# of Calls"]
        shapes = self._group_by_input_shape
        if shapes:
            cols.append("Input Shapes")
            max_shapes_column_width = min(
                max([len("Input Shapes")] + [len(str(e.input_shapes)) for e in rows]) + 4,
                max_shapes_column_width)
        w = 12
        sep = "-" * name_w + "  " + "  ".join("-" * (w if c != "Input Shapes" else
                                                      max_shapes_column_width) for c in cols) + "  "
        lines = []
        if header:
            lines.append("=" * len(sep))
            lines.append(header)
        lines.append(sep)
        lines.append(f"{'Name':>{name_w}}  " + "  ".join(
            f"{c:>{w}}" if c != "Input Shapes" else f"{c:>{max_shapes_column_width}}"
            for c in cols) + "  ")
        lines.append(sep)
        for e in rows:
            name = str(e.key)
            if len(name) > name_w:
                name = name[:name_w - 3] + "..."
            vals = [_format_pct(e.self_cpu_time_total, total_self),
                    _format_time(e.self_cpu_time_total),
                    _format_pct(e.cpu_time_total, total_self),
                    _format_time(e.cpu_time_total), _format_time(e.cpu_time)] + \
                ([_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
                 if mem else []) + [str(e.count)]
            line = f"{name:>{name_w}}  " + "  ".join(f"{v:>{w}}" for v in vals) + "  "
            if shapes:
                shp = str(e.input_shapes)[:max_shapes_column_width]
                line += f"{shp:>{max_shapes_column_width}}  "
            lines.append(line)
        lines.append(sep)
        lines.append(f"Self CPU time total: {_format_time(total_self)}")
        lines.append("")
        return "\n".join(lines)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        pid = os.getpid()
        trace = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                continue
            args = {}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else
                          "cpu_op", "name": e.trace_name, "pid": pid, "tid": e.thread,
                          "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms",
                       "schemaVersion": 1}, f)
        return path

    def total_average(self):
        t = FunctionEventAvg("Total")
        for e in self:
            t.count += e.count
            t.cpu_time_total += e.cpu_time_total
            t.self_cpu_time_total += e.self_cpu_time_total
        return t
