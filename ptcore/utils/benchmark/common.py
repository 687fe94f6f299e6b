"""``TaskSpec`` and ``Measurement``: what a :class:`Timer` measured, with the
statistics (median, mean, IQR, significant figures) and ``repr`` of
``torch.utils.benchmark``."""
import collections
import contextlib
import dataclasses
import math
import textwrap

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9     # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _quantile(sorted_values, q):
    """Linear-interpolation quantile of sorted values (torch.quantile's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """A label for the measurement: ``label`` (and ``sub_label``), else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times measured for one statement: ``raw_times[i]`` is the time of a
    block of ``number_per_run`` runs; ``times``, ``median``, ``mean`` and
    ``iqr`` are per run, in seconds."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Significant figures the interquartile spread supports (1 to 4)."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        lower = n_total // 4
        upper = math.ceil(3 * n_total / 4)
        pts = self._sorted_times[lower:upper]
        mean = sum(pts) / len(pts)
        std = math.sqrt(sum((p - mean) ** 2 for p in pts) / len(pts))
        ci = max(1.645 * std / math.sqrt(len(pts)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / ci))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            s = self._sorted_times
            self._median = _quantile(s, 0.5)
            self._mean = math.fsum(s) / len(s)
            self._p25 = _quantile(s, 0.25)
            self._p75 = _quantile(s, 0.75)

            def add_warning(msg):
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the "
                                   f"median measurement.\n           {msg}",)

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        skip_line, newline = "MEASUREMENT_REPR_SKIP_LINE", "\n"
        n = len(self._sorted_times)
        time_unit, time_scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip_line
        repr_str = f"""
{object.__repr__(self)}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / time_scale:.2f} {time_unit}
  {iqr_filter}IQR:    {self.iqr / time_scale:.2f} {time_unit} ({self._p25 / time_scale:.2f} to {self._p75 / time_scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} {self.num_threads} thread{'s' if self.num_threads > 1 else ''}
{newline.join(self._warnings)}""".strip()   # noqa: E501
        return "\n".join(line for line in repr_str.splitlines() if skip_line not in line)

    @staticmethod
    def merge(measurements):
        """Merge replicates of the same task into one Measurement each (times
        per run, ``number_per_run=1``, metadata dropped)."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        out = []
        for spec, group in grouped.items():
            times = []
            for m in group:
                times.extend(m.times)
            out.append(Measurement(number_per_run=1, raw_times=times, task_spec=spec,
                                   metadata=None))
        return out


def select_unit(t):
    """(unit, scale) that puts ``t`` seconds in the range [1, 1000)."""
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return time_unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with ``n`` intra-op threads."""
    import ptcore
    prior = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(n)
        yield
    finally:
        ptcore.set_num_threads(prior)
