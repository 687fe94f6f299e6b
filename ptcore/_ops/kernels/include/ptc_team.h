/* The team size of ptcore's parallel loops: the thread count the user asked
   for (ptcore.set_num_threads), lowered while the process does not get the
   CPUs for it.  Included by ptcore/_ops/kernels/_parallel.pyx only (its state is
   static: one copy per process); kernels read it through
   _parallel.get_num_threads().

   Why: an OpenMP team splits a loop evenly and then waits at a barrier for
   its slowest thread.  When another program keeps one of the cores busy, the
   team's thread on that core gets half of it, every parallel region waits
   for it, and libgomp's threads spin between regions (GOMP_SPINCOUNT, 300000
   pauses, milliseconds), so they compete with that program as CPU hogs: a
   2-thread GPT training step took 3x its 1-thread time with one of two cores
   busy, 10-60x under heavier load (issue 63), torch's the same.  Waiting
   passively instead (GOMP_SPINCOUNT=0) halves that loss but makes the idle
   2-thread step slower than 1 thread (futex wake-ups), so the wait policy is
   left as it is and the team is made to fit the CPUs instead.

   How: every PTC_TEAM_TICK_NS of activity (the clock is read when a kernel
   asks for the team size: a coarse monotonic clock, vDSO, no system call)
   the thread that asks reads the run-queue wait of every thread of the
   process (/proc/self/task/TID/schedstat, second field: nanoseconds spent
   runnable but not running; CONFIG_SCHED_INFO) and the machine's runnable
   count (/proc/loadavg, fourth field), about 35 us for a few threads.  The
   average number of this process's threads kept waiting for a CPU during
   the tick -- over the whole tick, or while the team's other threads were
   active if that is more (ptc_team_contention: a program whose parallel
   regions are a small part of its time) -- is the contention c (measured on 2 cores, training steps and
   elementwise ops at 2 threads: one core busy, median 0.7-0.9, 10th
   percentile 0.55-0.65 save one GPT run at 0.16; no busy core but other
   users' low-priority processes, median 0.15, 90th percentile 0.25, rare
   single ticks up to 0.9; a quiet machine: ~0):

   - c > PTC_TEAM_SHRINK_C on two ticks in a row: the team loses round(c)
     threads (at least one; never below one).
   - below the asked count, a probe raises the team again (by the CPUs the
     machine has idle, at least one) for half a tick and keeps the raise if c
     stays at most PTC_TEAM_PROBE_C; a contended half tick is followed by
     one more, and the raise is kept only if that one is clearly quiet
     (at most half the mark).  A probe runs when a CPU
     is idle (the machine's runnable count under its online CPUs: the other
     program has gone), PTC_TEAM_BACKOFF0_NS after the last change, doubling
     after each such probe that fails (the idle CPUs were someone else's: a
     cpuset); and without that hint after PTC_TEAM_FORCED0_NS of activity
     (ticks' intervals, at most two ticks each: a program that calls ptcore
     now and then pays for probes in proportion to its use of it, and so
     does a benchmark alternating settings) since the last change, the
     gap doubling after each failure up to PTC_TEAM_FORCED_MAX_NS (other
     users' low-priority processes hide idle CPUs from the hint).  A failed
     probe runs the raised team for a tick (two half ticks): under steady
     load ~1.25% of the time (one each 4 s of activity), of which only the
     raised team's slowdown is lost.

   The count the user set (ptcore.get_num_threads) never changes, and the
   kernels split their work by the problem's sizes, never by the team
   (tests/test_thread_determinism.py), so the team size changes timings only.
   Without /proc (not Linux) or schedstat, the team is the asked count. */
#ifndef PTC_TEAM_H
#define PTC_TEAM_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#define PTC_TEAM_PROC 1
#else
#define PTC_TEAM_PROC 0
#endif

#define PTC_TEAM_TICK_NS 50000000LL          /* 50 ms between samples */
#define PTC_TEAM_STALE_NS 1000000000LL       /* a longer gap: a fresh baseline */
#define PTC_TEAM_BACKOFF0_NS 200000000LL     /* first wait before a hinted probe */
#define PTC_TEAM_BACKOFF_MAX_NS 6400000000LL
#define PTC_TEAM_FORCED0_NS 2000000000LL     /* first wait before a probe without it */
#define PTC_TEAM_FORCED_MAX_NS 4000000000LL   /* 8 s kept an idle machine's team at one
                                                thread for a whole benchmark block after
                                                a loaded one */
#define PTC_TEAM_SHRINK_C 0.45               /* threads waiting, on average */
#define PTC_TEAM_PROBE_C 0.45
#define PTC_TEAM_MAX_TIDS 512
#define PTC_TEAM_TRACE 256                   /* ticks kept for _team_trace */

typedef struct {
    int requested;          /* ptcore.set_num_threads */
    int team;               /* what the kernels use now: min(requested, cap) */
    int cap;                /* the threads the process gets, as measured
                               (INT_MAX: at least the asked count); kept when
                               the asked count changes */
    int enabled;            /* sampling (Linux, schedstat readable, asked > 1) */
    int probing;            /* the team was raised at the last tick: 1 on the
                               idle hint, 2 without it */
    int before_probe;       /* the team to go back to */
    int recut;              /* this probe repeats one cut by a count change */
    int probe_strike;       /* the probe's first half tick was contended */
    int strikes;            /* consecutive ticks over the shrink mark */
    int online;             /* CPUs online (the idle hint's reference) */
    int last_idle;          /* CPUs idle at the last tick (-1: unknown) */
    double last_c;          /* contention of the last tick */
    int64_t next_ns;        /* next tick */
    int64_t last_ns;        /* time of the last sample */
    int64_t tick_ns;        /* sampling period (longer if a sample costs more) */
    int64_t cost_ns;        /* what the last sample cost */
    int64_t backoff_ns;     /* from a change to the next hinted probe */
    int64_t forced_gap_ns;  /* from a change to the next probe without it, in
                               active time (ticks' intervals, not pauses) */
    int64_t active_ns;      /* active time so far */
    int64_t probe_ok_ns;    /* no hinted probe before this */
    int64_t forced_ns;      /* a probe without the hint from this active time on */
    /* counters, for ptcore._ops.kernels._parallel._team_stats */
    long long ticks, shrinks, probes, probes_kept;
    /* the last PTC_TEAM_TRACE ticks: time (ns), contention, idle CPUs, the
       team after the tick (ptcore._ops.kernels._parallel._team_trace) */
    long long ntrace;
    int64_t trace_ns[PTC_TEAM_TRACE];
    double trace_c[PTC_TEAM_TRACE];
    int trace_idle[PTC_TEAM_TRACE];
    int trace_team[PTC_TEAM_TRACE];
    /* the run-queue wait of every thread at the last sample */
    int ntids;
    long tids[PTC_TEAM_MAX_TIDS];
    long long waits[PTC_TEAM_MAX_TIDS];
    long long runs[PTC_TEAM_MAX_TIDS];
    int skipped;            /* the last tick saw new threads and was not judged */
    double last_c_all;      /* the last tick's two signals (ptc_team_contention) */
    double last_c_team;
} ptc_team_state;

static ptc_team_state ptc_team_g;
static int ptc_team_lock = 0;
static int ptc_team_governed = 1;   /* _set_team_governor: 0 = the asked count always */
static int ptc_team_ready = 0;
static int ptc_team_by_team = 1;    /* _set_team_signal: 0 = c_all only (A/B timings) */

static inline int64_t ptc_team_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t ptc_team_now(void) {
#ifdef CLOCK_MONOTONIC_COARSE
    return ptc_team_clock(CLOCK_MONOTONIC_COARSE);
#else
    return ptc_team_clock(CLOCK_MONOTONIC);
#endif
}

/* A fresh governor asking for n threads at time now (nothing learnt yet). */
static void ptc_team_init(ptc_team_state* g, int n, int64_t now) {
    memset(g, 0, sizeof *g);
    g->requested = g->team = g->before_probe = n;
    g->cap = INT_MAX;
    g->online = 1;
    g->last_idle = -1;
    g->tick_ns = PTC_TEAM_TICK_NS;
    g->backoff_ns = PTC_TEAM_BACKOFF0_NS;
    g->forced_gap_ns = PTC_TEAM_FORCED0_NS;
    g->last_ns = now;
    g->next_ns = now + g->tick_ns;
}

static inline int64_t ptc_team_double(int64_t v, int64_t max) {
    return 2 * v < max ? 2 * v : max;
}

/* A probe that cannot be judged: back to the team before it.  After a long
   pause (stale) a forced one counts as failed (it was a guess) and one on
   the idle hint comes again after the usual wait.  When the asked count
   changed (ptcore.set_num_threads: a program switching settings, a
   benchmark alternating them) nothing was learnt: the probe comes again at
   the next tick that finds the team below the count, its gap unchanged --
   once: a probe cut again counts as failed (on an overloaded machine a
   2-thread call can outlast a benchmark's sample, and probes cut and
   repeated at every sample made a broadcast add 1.1-1.4x its 1-thread time)
   (counting it as failed doubled the gap each time a switch cut a probe, and
   a benchmark alternating settings every 0.15 s kept an idle machine's team
   at one thread for seconds: a memory-bound add 1.7x torch's 2-thread time). */
static void ptc_team_cancel_probe(ptc_team_state* g, int64_t now, int count_changed) {
    if (!g->probing)
        return;
    g->team = g->cap = g->before_probe;
    g->probe_strike = 0;
    if (count_changed && !g->recut) {
        g->probing = 0;
        g->recut = 1;
        g->probe_ok_ns = now;
        g->forced_ns = g->active_ns;
        return;
    }
    g->recut = 0;
    if (g->probing == 2)
        g->forced_gap_ns = ptc_team_double(g->forced_gap_ns, PTC_TEAM_FORCED_MAX_NS);
    g->probing = 0;
    g->probe_ok_ns = now + g->backoff_ns;
    g->forced_ns = g->active_ns + g->forced_gap_ns;
}

/* The rules above, for one tick: contention c over the dt ns that end at
   now, idle CPUs on the machine (-1: unknown). */
static void ptc_team_rules(ptc_team_state* g, int64_t now, int64_t dt, double c, int idle) {
    int drop, grow;
    g->last_idle = idle;
    g->next_ns = now + g->tick_ns;
    if (dt <= 0 || dt > PTC_TEAM_STALE_NS) {    /* not running for long: a baseline only */
        ptc_team_cancel_probe(g, now, 0);
        g->strikes = 0;
        return;
    }
    g->ticks++;
    g->active_ns += dt < 2 * g->tick_ns ? dt : 2 * g->tick_ns;   /* pauses do not count */
    g->last_c = c;
    if (g->probing) {
        g->recut = 0;
        if (c > PTC_TEAM_PROBE_C && !g->probe_strike) {
            /* one more half tick before going back: a single contended half
               tick is as likely a spike (another program waking up) as a
               busy core, and a failed probe doubles the wait for the next;
               the second must then be clearly quiet (an overloaded machine
               has quiet half ticks too, and a raised team kept there lost
               far more than one thread's speed) */
            g->probe_strike = 1;
            g->next_ns = now + g->tick_ns / 2;
            return;
        }
        if (c > (g->probe_strike ? PTC_TEAM_PROBE_C / 2 : PTC_TEAM_PROBE_C)) {
            /* the raised team waited: back */
            g->probe_strike = 0;
            g->team = g->cap = g->before_probe;
            if (g->probing == 1)                /* the idle CPUs were not ours */
                g->backoff_ns = ptc_team_double(g->backoff_ns, PTC_TEAM_BACKOFF_MAX_NS);
            else                                /* still loaded */
                g->forced_gap_ns = ptc_team_double(g->forced_gap_ns, PTC_TEAM_FORCED_MAX_NS);
            g->probe_ok_ns = now + g->backoff_ns;
            g->forced_ns = g->active_ns + g->forced_gap_ns;
        } else {
            g->probe_strike = 0;
            g->probes_kept++;
            if (g->team >= g->requested)
                g->cap = INT_MAX;
            g->backoff_ns = PTC_TEAM_BACKOFF0_NS;
            g->forced_gap_ns = PTC_TEAM_FORCED0_NS;
            g->probe_ok_ns = now;
            g->forced_ns = g->active_ns;
        }
        g->probing = 0;
        g->strikes = 0;
        return;
    }
    if (c > PTC_TEAM_SHRINK_C && g->team > 1) {
        if (++g->strikes >= 2) {
            drop = (int)(c + 0.5);
            if (drop < 1)
                drop = 1;
            g->team = g->cap = g->team - drop > 1 ? g->team - drop : 1;
            g->shrinks++;
            g->strikes = 0;
            g->probe_ok_ns = now + g->backoff_ns;
            g->forced_ns = g->active_ns + g->forced_gap_ns;
        }
        return;
    }
    g->strikes = 0;
    if (g->team < g->requested && now >= g->probe_ok_ns
            && (idle > 0 || g->active_ns >= g->forced_ns)) {
        grow = idle > 1 ? idle : 1;
        g->before_probe = g->team;
        g->team = g->cap = g->team + grow < g->requested ? g->team + grow : g->requested;
        g->probing = idle > 0 ? 1 : 2;
        g->probes++;
        g->next_ns = now + g->tick_ns / 2;      /* a probe is judged sooner */
    }
}

/* One tick's decision (ptc_team_rules), kept in the trace. */
static void ptc_team_decide(ptc_team_state* g, int64_t now, int64_t dt, double c, int idle) {
    int k = (int)(g->ntrace % PTC_TEAM_TRACE);
    ptc_team_rules(g, now, dt, c, idle);
    g->trace_ns[k] = now;
    g->trace_c[k] = dt > 0 && dt <= PTC_TEAM_STALE_NS ? c : -1.0;
    g->trace_idle[k] = idle;
    g->trace_team[k] = g->team;
    g->ntrace++;
}

/* The contention of one tick from the process's threads' run-queue waits
   dw[i] and times on a CPU dr[i] during it (ns), the tick dt ns long: the
   larger of
   - c_all, the threads waiting on average over the tick (sum of dw / dt), and
   - c_team, the threads waiting on average while the team ran: the thread
     active longest (dr + dw) is the one calling the kernels, which also runs
     the serial code between parallel regions; the other threads active at
     least a tenth of the tick are the team's workers (libgomp's threads run
     or spin only in and right after parallel regions).  Their waits over
     the longest of their active times, each worker's share, plus the same
     mean share for the calling thread, which competes as one of them there.
   c_all alone misses a team that loses at every barrier when the parallel
   regions are a small part of the time: with one core of two busy an LSTM
   language model's step (serial Python and small ops between its parallel
   time loops) averaged under the shrink mark while each of its parallel
   regions waited for the thread sharing the busy core (issue 63: 1.35x its
   1-thread step).  A quiet machine: both ~0. */
static double ptc_team_contention(const long long* dr, const long long* dw, int n,
                                  long long dt, double* c_all, double* c_team) {
    long long total = 0, others = 0, act, top = -1, longest = 0;
    int k, m = -1, workers = 0;
    double a, b = 0.0;
    for (k = 0; k < n; k++) {
        total += dw[k];
        act = dr[k] + dw[k];
        if (act > top) {
            top = act;
            m = k;
        }
    }
    for (k = 0; k < n; k++) {
        act = dr[k] + dw[k];
        if (k == m || dt <= 0 || 10 * act < dt)
            continue;
        others += dw[k];
        workers++;
        if (act > longest)
            longest = act;
    }
    a = dt > 0 ? (double)total / (double)dt : 0.0;
    if (workers > 0)
        b = (double)others / (double)longest * (double)(workers + 1) / (double)workers;
    if (c_all != NULL)
        *c_all = a;
    if (c_team != NULL)
        *c_team = b;
    return ptc_team_by_team && b > a ? b : a;
}

#if PTC_TEAM_PROC
/* Read a small /proc file into buf (NUL-terminated); its length, or -1. */
static int ptc_team_read(const char* path, char* buf, int cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    if (fd < 0)
        return -1;
    n = read(fd, buf, (size_t)(cap - 1));
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return (int)n;
}

/* Each thread's run-queue wait and time on a CPU since the last sample, in
   ns, into dw/dr (a thread first seen counts from its first sample: 0, and
   is counted in *fresh); their count, or -1 when no schedstat file can be
   read. */
static int ptc_team_deltas(ptc_team_state* g, long long* dr, long long* dw, int* fresh) {
    char path[64], buf[128];
    long tids[PTC_TEAM_MAX_TIDS];
    long long waits[PTC_TEAM_MAX_TIDS], runs[PTC_TEAM_MAX_TIDS];
    int n = 0, k, j;
    struct dirent* e;
    DIR* d = opendir("/proc/self/task");
    *fresh = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL && n < PTC_TEAM_MAX_TIDS) {
        char* end;
        long tid;
        long long w, r;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        tid = strtol(e->d_name, &end, 10);
        snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
        if (ptc_team_read(path, buf, sizeof buf) < 0)
            continue;                           /* exited meanwhile */
        r = strtoll(buf, &end, 10);             /* time on a CPU */
        w = strtoll(end, &end, 10);             /* time waiting for one */
        tids[n] = tid;
        waits[n] = w;
        runs[n] = r;
        dr[n] = dw[n] = 0;
        /* the threads come in the same order: look at the same index first */
        for (k = 0; k < g->ntids; k++) {
            j = (n + k) % g->ntids;
            if (g->tids[j] == tid) {
                if (w > g->waits[j])
                    dw[n] = w - g->waits[j];
                if (r > g->runs[j])
                    dr[n] = r - g->runs[j];
                break;
            }
        }
        if (k == g->ntids)
            (*fresh)++;
        n++;
    }
    closedir(d);
    if (n == 0)
        return -1;
    memcpy(g->tids, tids, (size_t)n * sizeof(long));
    memcpy(g->waits, waits, (size_t)n * sizeof(long long));
    memcpy(g->runs, runs, (size_t)n * sizeof(long long));
    g->ntids = n;
    return n;
}

/* CPUs idle now: online CPUs minus the machine's runnable threads (the
   caller's included); -1 when unknown. */
static int ptc_team_idle_cpus(const ptc_team_state* g) {
    char buf[128];
    char* p;
    long running;
    if (ptc_team_read("/proc/loadavg", buf, sizeof buf) < 0)
        return -1;
    p = strchr(buf, '/');                       /* "0.1 0.2 0.3 RUNNING/TOTAL LAST" */
    if (p == NULL)
        return -1;
    while (p > buf && p[-1] != ' ')
        p--;
    running = strtol(p, NULL, 10);
    if (running < 1)
        return -1;
    return g->online > running ? (int)(g->online - running) : 0;
}

/* A forked child has one thread and may have been forked while another
   thread held the lock. */
static void ptc_team_atfork_child(void) {
    ptc_team_g.ntids = 0;
    ptc_team_g.probing = 0;
    ptc_team_g.team = ptc_team_g.cap < ptc_team_g.requested ? ptc_team_g.cap
                                                           : ptc_team_g.requested;
    ptc_team_g.last_ns = ptc_team_now();
    ptc_team_g.next_ns = ptc_team_g.last_ns + ptc_team_g.tick_ns;
    __atomic_store_n(&ptc_team_lock, 0, __ATOMIC_RELEASE);
}
#endif

/* One sample and decision; the caller holds ptc_team_lock. */
static void ptc_team_tick(ptc_team_state* g, int64_t now) {
#if PTC_TEAM_PROC
    int64_t t0 = ptc_team_clock(CLOCK_MONOTONIC);
    int64_t dt = now - g->last_ns;
    static long long dr[PTC_TEAM_MAX_TIDS], dw[PTC_TEAM_MAX_TIDS];   /* under the lock */
    int fresh;
    int n = ptc_team_deltas(g, dr, dw, &fresh);
    int idle;
    double c;
    if (n < 0) {                                /* no schedstat: stop governing */
        g->enabled = 0;
        g->team = g->requested;
        return;
    }
    idle = ptc_team_idle_cpus(g);
    g->last_ns = now;
    /* a sample costing more than 1% of the period (hundreds of threads)
       lengthens the period */
    g->cost_ns = ptc_team_clock(CLOCK_MONOTONIC) - t0;
    g->tick_ns = 100 * g->cost_ns > PTC_TEAM_TICK_NS ? 100 * g->cost_ns : PTC_TEAM_TICK_NS;
    if (fresh > 0 && g->ntids > fresh && !g->skipped) {
        /* threads were created during the tick (an OpenMP pool's first
           use of more threads: the new thread starts on its creator's CPU,
           ~0.5 threads waiting for a tick or two on a quiet machine): a new
           baseline, judged from the next tick on (one tick at most, so a
           program creating threads all the time is still judged) */
        g->skipped = 1;
        g->next_ns = now + (g->probing ? g->tick_ns / 2 : g->tick_ns);
        return;
    }
    g->skipped = 0;
    c = ptc_team_contention(dr, dw, n, dt, &g->last_c_all, &g->last_c_team);
    ptc_team_decide(g, now, dt, c, idle);
#else
    (void)g;
    (void)now;
#endif
}

/* The team size for a parallel loop now. */
static inline int ptc_team_size(void) {
    ptc_team_state* g = &ptc_team_g;
    int64_t now;
    if (!g->enabled)
        return g->requested;
    now = ptc_team_now();
    if (now >= g->next_ns && !__atomic_exchange_n(&ptc_team_lock, 1, __ATOMIC_ACQUIRE)) {
        if (g->enabled && now >= g->next_ns)
            ptc_team_tick(g, now);
        __atomic_store_n(&ptc_team_lock, 0, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&g->team, __ATOMIC_RELAXED);
}

/* A new asked count n at time now: a probe in progress is cut (not judged),
   the team is n within the measured cap, the next tick a fresh start. */
static void ptc_team_request(ptc_team_state* g, int n, int64_t now) {
    ptc_team_cancel_probe(g, now, 1);
    g->requested = n;
    g->team = n < g->cap ? n : g->cap;
    g->strikes = 0;
    g->last_ns = now;
    g->next_ns = now + g->tick_ns;
}

/* ptcore.set_num_threads: a new asked count and a fresh baseline; the team
   is the asked count within what the process was measured to get (so a
   benchmark alternating 1 thread and the default keeps what was learnt). */
static void ptc_team_set_requested(int n) {
    ptc_team_state* g = &ptc_team_g;
    int64_t now = ptc_team_now();
    while (__atomic_exchange_n(&ptc_team_lock, 1, __ATOMIC_ACQUIRE)) {
    }
    if (!ptc_team_ready) {
        ptc_team_init(g, n, now);
#if PTC_TEAM_PROC
        {
            long on = sysconf(_SC_NPROCESSORS_ONLN);
            g->online = on > 0 ? (int)on : 1;
        }
        pthread_atfork(NULL, NULL, ptc_team_atfork_child);
#endif
        ptc_team_ready = 1;
    }
    if (!ptc_team_governed)
        g->cap = INT_MAX;
    ptc_team_request(g, n, now);
    g->enabled = PTC_TEAM_PROC && ptc_team_governed && n > 1;
#if PTC_TEAM_PROC
    if (g->enabled) {
        static long long dr[PTC_TEAM_MAX_TIDS], dw[PTC_TEAM_MAX_TIDS];   /* under the lock */
        int fresh;
        if (ptc_team_deltas(g, dr, dw, &fresh) < 0)
            g->enabled = 0;
    }
#endif
    if (!g->enabled)
        g->team = n;
    __atomic_store_n(&ptc_team_lock, 0, __ATOMIC_RELEASE);
}

#endif
