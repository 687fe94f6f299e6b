"""``ptcore.profiler.profile``: record the time of every op call (through
the dispatch point's profiler layer) and of ``record_function`` ranges."""
import enum
import functools
import os
import socket
import time

from ptcore import _tensor as _C
from ptcore._dispatch import op_overload as _ov
from ptcore._dispatch import profiling as _P
from ptcore.profiler._events import EventList, FunctionEvent

__all__ = ["ProfilerActivity", "ProfilerAction", "profile", "record_function", "schedule",
           "tensorboard_trace_handler", "supported_activities", "_KinetoProfile"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can record: the CPU (ops run on the host)."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """True: :class:`profile` is torch's Kineto-era profiler interface (activities,
    ``schedule``, ``on_trace_ready``, Chrome traces), which libraries choose by this
    test (Lightning's PyTorchProfiler)."""
    return True


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A step -> :class:`ProfilerAction` function (PyTorch's cycle: skip
    ``skip_first`` steps, then ``wait``, ``warmup``, ``active`` steps,
    ``repeat`` times; 0 repeats forever).  ``skip_first_wait`` starts the
    first cycle without its wait steps."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step should be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else \
            ProfilerAction.RECORD_AND_SAVE

    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` handler writing each trace as
    ``<dir>/<worker>.<ms>.pt.trace.json`` (gzipped when asked)."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        path = os.path.join(dir_name, file_name)
        if use_gzip:
            import gzip
            import tempfile
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
                tmp_path = tmp.name
            prof.export_chrome_trace(tmp_path)
            with open(tmp_path, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
            os.unlink(tmp_path)
        else:
            prof.export_chrome_trace(path)
    return handler_fn


class record_function:
    """Label a range of code in the profile (context manager or decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ev = None

    def __enter__(self):
        self._ev = _record_function_enter_new(self.name, self.args)._ev
        return self

    def __exit__(self, *exc):
        _P.pop_range(self._ev)
        self._ev = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


class _RecordFunction:
    """What ``ops.profiler._record_function_enter_new`` returns (torch's
    ``torch.classes.profiler._RecordFunction`` script object): the open range,
    closed by ``ops.profiler._record_function_exit``."""
    __slots__ = ("_ev",)
    _script_class = "__torch__.torch.classes.profiler._RecordFunction"     # (its schema type)

    def __init__(self, ev):
        self._ev = ev

    def __repr__(self):
        return f"<{_C.root_name()}.ScriptObject object at {hex(id(self))}>"

    def __str__(self):
        return "ScriptObject <__torch__.torch.classes.profiler._RecordFunction>"


def _check_range_args(op, name, args):
    for arg, val in (("name", name), ("args", args)):
        if not isinstance(val, str) and (arg == "name" or val is not None):
            # (torch's schema check)
            raise RuntimeError(f"profiler::{op}() Expected a value of type 'str' for argument "
                               f"'{arg}' but instead found type '{type(val).__name__}'.")


def _record_function_enter_new(name, args=None):
    """``torch.ops.profiler._record_function_enter_new``: open a range named ``name``."""
    _check_range_args("_record_function_enter_new", name, args)
    return _RecordFunction(_P.push_range(name, is_user=True))


def _record_function_enter(name, args=None):
    """``torch.ops.profiler._record_function_enter`` (torch's older form): the range's
    handle is a tensor."""
    _check_range_args("_record_function_enter", name, args)
    handle = _C.zeros(0, dtype=_C.uint8)
    handle._record_function = _P.push_range(name, is_user=True)
    return handle


def _record_function_exit(handle):
    """``torch.ops.profiler._record_function_exit``: close the range of ``handle``
    (what one of the enter ops returned)."""
    if isinstance(handle, _RecordFunction):
        ev, handle._ev = handle._ev, None
    elif isinstance(handle, _C._TensorBase):
        ev = handle.__dict__.pop("_record_function", None)
    else:
        raise RuntimeError(f"profiler::_record_function_exit() Expected a value of type "
                           f"'Tensor' for argument 'handle' but instead found type "
                           f"'{type(handle).__name__}'.")
    _P.pop_range(ev)


for _name, _impls in (
        ("_record_function_enter", {
            "_record_function_enter(str name, str? args=None) -> Tensor": _record_function_enter}),
        ("_record_function_enter_new", {
            "_record_function_enter_new(str name, str? args=None) -> "
            "__torch__.torch.classes.profiler._RecordFunction": _record_function_enter_new}),
        ("_record_function_exit", {
            "_record_function_exit(Tensor handle) -> ()": _record_function_exit,
            "_record_function_exit._RecordFunction(__torch__.torch.classes.profiler."
            "_RecordFunction record) -> ()": _record_function_exit})):
    _ov.register_builtin("profiler", _name, _impls)


class _KinetoProfile:
    """Start/stop recording and turn the events into an :class:`EventList`."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else supported_activities()
        if not any(isinstance(a, ProfilerActivity) for a in acts):
            raise AssertionError("No valid profiler activities found")     # (as torch)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must be ProfilerActivity values, got {a!r}")
        self.activities = acts
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self._events = EventList()
        self._t0 = None
        self._recording = False
        self._prepared = False          # (torch's self.profiler: made when a trace starts)

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        self._prepared = True

    def start_trace(self):
        self._prepared = True
        if ProfilerActivity.CPU not in self.activities:
            return
        _P.start_recording(self.record_shapes, self.profile_memory)
        self._recording = True
        self._t0 = time.perf_counter_ns()

    def stop_trace(self):
        if not self._recording:
            return
        raw = _P.stop_recording()
        self._recording = False
        evs = [FunctionEvent(e, self._t0) for e in raw]
        by_id = {id(r): f for r, f in zip(raw, evs)}
        for r, f in zip(raw, evs):
            if r.parent is not None and id(r.parent) in by_id:
                p = by_id[id(r.parent)]
                f.cpu_parent = p
                p.cpu_children.append(f)
        if self.acc_events:
            self._events.extend(evs)
        else:
            self._events = EventList(evs)

    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        if not self._prepared:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        return self._events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        with open(path, "w") as f:
            for e in self._events:
                f.write(f"{e.name} {int(getattr(e, metric, 0))}\n")


class profile(_KinetoProfile):
    """Profile the ops run inside the context (``torch.profiler.profile``).

    With a ``schedule``, ``step()`` moves through its wait/warmup/active
    cycle; ``on_trace_ready(prof)`` is called at the end of each active
    span (and at exit).

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.profiler import profile, record_function
    >>> with profile() as prof:
    ...     with record_function("model"):
    ...         y = ptcore.ones(3).add(1)
    >>> sorted({e.key for e in prof.key_averages()})
    ['aten::add', 'aten::ones', 'model']
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        if use_cuda is not None:
            import warnings
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            activities = acts
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_ev = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    # PyTorch's transitions between two steps' actions (None: the profile ends)
    def _actions(self, prev, cur):
        A = ProfilerAction
        ready = self._trace_ready
        if prev is A.NONE:
            return [] if cur in (None, A.NONE, A.WARMUP) else [self.start_trace]
        if prev is A.WARMUP:
            if cur is None or cur is A.NONE:
                if cur is A.NONE:
                    import warnings
                    warnings.warn("Incorrect schedule: WARMUP followed by NONE")
                return [self.start_trace, self.stop_trace]
            return [] if cur is A.WARMUP else [self.start_trace]
        if prev is A.RECORD:
            if cur is None:
                return [self.stop_trace, ready]
            if cur in (A.NONE, A.WARMUP):
                import warnings
                warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}")
                return [self.stop_trace]
            return []
        # RECORD_AND_SAVE: the cycle ends
        if cur is None or cur in (A.NONE, A.WARMUP):
            return [self.stop_trace, ready]
        return [self.stop_trace, ready, self.start_trace]

    def _transit(self, prev, cur):
        for fn in self._actions(prev, cur):
            fn()

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self._step_ev = _P.push_range(f"ProfilerStep#{self.step_num}", is_user=True)

    def stop(self):
        if self._step_ev is not None:
            _P.pop_range(self._step_ev)
            self._step_ev = None
        self._transit(self.current_action, None)

    def step(self):
        """Mark the end of a training step (advances the schedule)."""
        if self._step_ev is not None:
            _P.pop_range(self._step_ev)
            self._step_ev = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        if self.record_steps:
            self._step_ev = _P.push_range(f"ProfilerStep#{self.step_num}", is_user=True)
