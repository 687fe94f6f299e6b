/* Non-temporal ("streaming") stores for elementwise outputs larger than the
 * last-level cache.
 *
 * A plain store to a line that is not in the cache first reads the line
 * (read-for-ownership): an output that does not fit in the cache costs a
 * read and a write of memory per line, and while the stores wait for those
 * reads the loads of the loop queue behind them.  A non-temporal store
 * writes whole lines to memory without reading them.  Measured on AMD Zen 4
 * (32 MiB L3, one core), float32 over 4M elements (16 MiB out): (2048, 2048)
 * + (2048,) 1.78 ms with plain stores, 0.62 ms streaming; a + number 1.28 ->
 * 0.72 ms; a + b 1.83 -> 1.39 ms.  An output that stays in the cache is read
 * back from there by the next op; streaming it costs (2M elements, 8 MiB
 * out: a + number 0.25 -> 0.30 ms), so only outputs of at least half the L3
 * stream.
 *
 * ptc_stream_min_bytes(): that size (half the L3 that sysfs reports for
 * cpu0, clamped to 4-256 MiB; 16 MiB where sysfs does not say.  glibc's
 * sysconf(_SC_LEVEL3_CACHE_SIZE) read 320 MiB for a 32 MiB L3 under KVM).
 * ptc_stream_set_min_bytes(): the tests' switch.
 * ptc_stream_fence(): the sfence a thread runs after its streaming stores,
 * before another thread (or the caller, after the team joins) may read the
 * output: non-temporal stores are weakly ordered. */
#ifndef PTC_STREAM_H
#define PTC_STREAM_H
#include <stdio.h>
#include <stddef.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

static size_t ptc_stream_min_read(void) {
    size_t b = 0;
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (f != NULL) {
        unsigned long v = 0;
        char unit = 0;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            if (unit == 'K') b = (size_t)v << 10;
            else if (unit == 'M') b = (size_t)v << 20;
            else b = (size_t)v;
        }
        fclose(f);
    }
    b = b ? b / 2 : ((size_t)16 << 20);
    if (b < ((size_t)4 << 20)) b = (size_t)4 << 20;
    if (b > ((size_t)256 << 20)) b = (size_t)256 << 20;
    return b;
}

/* relaxed atomics: every reader stores the same value */
static size_t ptc_stream_cached = 0;
/* outputs streamed (the tests check that their sizes take the path) */
static long ptc_stream_count = 0;

static size_t ptc_stream_min_bytes(void) {
    size_t v = __atomic_load_n(&ptc_stream_cached, __ATOMIC_RELAXED);
    if (v == 0) {
        v = ptc_stream_min_read();
        __atomic_store_n(&ptc_stream_cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

static inline void ptc_stream_counted(void) {
    __atomic_fetch_add(&ptc_stream_count, 1, __ATOMIC_RELAXED);
}
static long ptc_stream_runs(void) { return __atomic_load_n(&ptc_stream_count, __ATOMIC_RELAXED); }

/* the threshold in force, which ``v`` replaces (0: the machine's again) */
static size_t ptc_stream_set_min_bytes(size_t v) {
    size_t old = ptc_stream_min_bytes();
    __atomic_store_n(&ptc_stream_cached, v, __ATOMIC_RELAXED);
    return old;
}

static inline void ptc_stream_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
#endif
}
#endif
