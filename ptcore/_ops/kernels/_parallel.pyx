# cython: language_level=3
"""Process-wide thread count for ptcore's CPU kernels.

``_num_threads`` is the count the user asked for (``ptcore.set_num_threads``,
what ``ptcore.get_num_threads`` returns); the kernels' ``get_num_threads()``
is the team size of ptc_team.h: that count, lowered while the process does
not get the CPUs for it (another program keeping cores busy)."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc

from ptcore._ops.kernels._openmp cimport PTC_HAVE_OPENMP

cdef extern from "ptc_team.h":
    ctypedef struct ptc_team_state:
        int requested
        int team
        int cap
        int enabled
        int probing
        int last_idle
        double last_c
        double last_c_all
        double last_c_team
        long long cost_ns
        long long tick_ns
        long long next_ns
        long long ticks, shrinks, probes, probes_kept
        long long ntrace
        long long trace_ns[256]
        double trace_c[256]
        int trace_idle[256]
        int trace_team[256]
    ptc_team_state ptc_team_g
    int ptc_team_governed
    int ptc_team_by_team
    int ptc_team_size() noexcept nogil
    void ptc_team_set_requested(int n) noexcept nogil
    void ptc_team_init(ptc_team_state* g, int n, long long now) noexcept nogil
    void ptc_team_request(ptc_team_state* g, int n, long long now) noexcept nogil
    void ptc_team_decide(ptc_team_state* g, long long now, long long dt, double c,
                         int idle) noexcept nogil
    double ptc_team_contention(const long long* dr, const long long* dw, int n, long long dt,
                               double* c_all, double* c_team) noexcept nogil

cdef int _num_threads = 1
cdef Py_ssize_t _grain = 32768

from ptcore._config import ADAPTIVE_THREADS as _ADAPTIVE
ptc_team_governed = 1 if _ADAPTIVE else 0     # PTCORE_ADAPTIVE_THREADS, read by ptcore._config


cdef int get_num_threads() noexcept nogil:
    if _num_threads <= 1:
        return 1
    return ptc_team_size()


cdef Py_ssize_t parallel_grain() noexcept nogil:
    return _grain


def _set_num_threads(int n):
    global _num_threads
    if n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n}")
    # every prange passes num_threads explicitly; the OpenMP runtime's own
    # count is left alone, because it is shared with other libraries in the
    # process (torch's threads dropped to ptcore's count at import)
    _num_threads = n
    ptc_team_set_requested(n if PTC_HAVE_OPENMP else 1)


def _get_num_threads():
    return _num_threads


def _team_size():
    """The team size the parallel kernels use now (at most ``_get_num_threads()``)."""
    return get_num_threads()


def _set_team_governor(bint on):
    """Whether the team follows the CPUs the process gets (the default) or is
    always the asked count (tests, benchmarks); returns the previous setting."""
    global ptc_team_governed
    cdef bint old = ptc_team_governed
    ptc_team_governed = on
    ptc_team_set_requested(_num_threads if PTC_HAVE_OPENMP else 1)
    return old


def _set_team_signal(bint team):
    """Whether a tick's contention also counts the waits while the team ran
    (the default) or only those over the whole tick (A/B timings); returns
    the previous setting."""
    global ptc_team_by_team
    cdef bint old = ptc_team_by_team
    ptc_team_by_team = team
    return old


def _team_stats():
    """The governor's state (ptc_team.h): the asked count, the team, the
    measured cap (None: not limited), whether it samples, whether the team is
    a probe not judged yet, the last tick's
    contention (threads of the process waiting for a CPU, on average: the
    larger of ``contention_all``, over the tick, and ``contention_team``,
    while the team's other threads were active), CPUs
    idle on the machine (-1: unknown), what a sample cost and its counters."""
    g = ptc_team_g
    return {"requested": g.requested, "team": g.team,
            "cap": g.cap if g.cap < 2**31 - 1 else None, "governed": bool(g.enabled),
            "probing": bool(g.probing),
            "contention": g.last_c,
            "contention_all": g.last_c_all, "contention_team": g.last_c_team,
            "idle_cpus": g.last_idle, "sample_us": g.cost_ns / 1e3,
            "ticks": g.ticks, "shrinks": g.shrinks, "probes": g.probes,
            "probes_kept": g.probes_kept}


def _team_trace():
    """The governor's last ticks (at most 256), oldest first: ``(monotonic
    seconds, contention (-1: a tick after a long pause, not judged), idle CPUs,
    team after the tick)``; for benchmarks and diagnosis."""
    cdef ptc_team_state* g = &ptc_team_g
    cdef long long n = g.ntrace, k
    out = []
    for k in range(max(0, n - 256), n):
        out.append((g.trace_ns[k % 256] / 1e9, g.trace_c[k % 256], g.trace_idle[k % 256],
                    g.trace_team[k % 256]))
    return out


def _team_simulate(int requested, double seconds, machine):
    """The governor's decisions on a simulated machine, without measuring
    (tests): a fresh governor asking for ``requested`` threads ticks when it
    asks to for ``seconds``; ``machine(team, t)`` gives ``(contention, idle
    CPUs, pause)`` for the tick at ``t`` seconds, ``team`` having run since
    the last one, ``pause`` seconds (usually 0) of no kernel calls delaying
    the tick; a fourth item, when present and not None, is a thread count
    the program sets at ``t`` instead (``ptcore.set_num_threads``: the tick
    is not judged).  Returns ``[(t, team after the tick), ...]``."""
    cdef ptc_team_state* g = <ptc_team_state*>PyMem_Malloc(sizeof(ptc_team_state))
    cdef long long now = 0, last = 0, end = <long long>(seconds * 1e9)
    if g == NULL:
        raise MemoryError()
    out = []
    try:
        ptc_team_init(g, requested, 0)
        while g.next_ns <= end:
            got = machine(g.team, g.next_ns / 1e9)
            c, idle, pause = got[:3]
            now = g.next_ns + <long long>(pause * 1e9)
            if len(got) > 3 and got[3] is not None:
                ptc_team_request(g, got[3], now)
            else:
                ptc_team_decide(g, now, now - last, c, idle)
            last = now
            out.append((now / 1e9, g.team))
    finally:
        PyMem_Free(g)
    return out


def _team_contention(threads, long long dt):
    """The contention ptc_team.h judges a tick by (ptc_team_contention), for
    tests: ``threads`` lists ``(ns on a CPU, ns waiting for one)`` of each of
    the process's threads during a tick ``dt`` ns long.  Returns ``(c,
    over the tick, while the team's other threads were active)``."""
    cdef Py_ssize_t n = len(threads), k
    cdef long long* dr = <long long*>PyMem_Malloc((n + 1) * sizeof(long long))
    cdef long long* dw = <long long*>PyMem_Malloc((n + 1) * sizeof(long long))
    cdef double a = 0, b = 0, c
    if dr == NULL or dw == NULL:
        PyMem_Free(dr)
        PyMem_Free(dw)
        raise MemoryError()
    try:
        for k in range(n):
            dr[k], dw[k] = threads[k]
        c = ptc_team_contention(dr, dw, <int>n, dt, &a, &b)
    finally:
        PyMem_Free(dr)
        PyMem_Free(dw)
    return c, a, b


def _set_parallel_grain(Py_ssize_t n):
    global _grain
    if n < 1:
        raise ValueError(f"parallel grain must be positive, got {n}")
    _grain = n


def _get_parallel_grain():
    return _grain


def _have_openmp():
    return bool(PTC_HAVE_OPENMP)

