"""``Timer``: ``timeit.Timer`` with warm-up, a fixed thread count, adaptive
block sizes and :class:`Measurement` results (``torch.utils.benchmark.Timer``).
Only Python statements are supported (no C++ timing, no Callgrind)."""
import enum
import statistics
import textwrap
import timeit

import ptcore.utils.benchmark.common as common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """``timeit.default_timer`` after synchronising the accelerator, if any."""
    import ptcore
    if ptcore.accelerator.is_available():
        ptcore.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Measure the run time of a Python statement.

    Parameters
    ----------
    stmt : str
        Code run in the timed loop.
    setup : str
        Code run once before timing (defines what ``stmt`` uses).
    timer : callable
        Clock (accelerator-synchronising ``timer`` by default).
    globals : dict, optional
        Globals for ``stmt`` and ``setup``; ``torch`` and ``ptcore`` are bound
        to ptcore unless given.
    label, sub_label, description, env : str, optional
        Shown in ``repr`` and used by ``Compare`` to lay out tables.
    num_threads : int
        Intra-op threads while timing (1 by default, as torch).
    language : "python"
        ``"c++"`` is not supported by ptcore.
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        import ptcore
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", ptcore)
            self._globals.setdefault("ptcore", ptcore)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ptcore's Timer measures Python statements only")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, time_hook, stop_hook, min_run_time, max_run_time=None,
                          callback=None):
        total_time = 0.0
        can_stop = False
        times = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                spent = time_hook()
                times.append(spent)
                total_time += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = statistics.median_low([self._timeit(0) for _ in range(5)])
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Time blocks of runs until ``min_run_time`` seconds are spent; the
        block size is grown until the clock's overhead is negligible."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda: self._timeit(number), lambda t: True,
                                       min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """As ``blocked_autorange``, but repeat until IQR/median < ``threshold``
        (at least 4 blocks and ``min_run_time``) or ``max_run_time`` is spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec
                                          ).meets_confidence(threshold=threshold)
            return False

        times = self._measurement_loop(number, lambda: self._timeit(number), stop_hook,
                                       min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("ptcore's Timer has no Callgrind support")
