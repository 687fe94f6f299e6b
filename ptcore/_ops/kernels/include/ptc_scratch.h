/* The kernels' scratch memory: every temporary buffer a CPU kernel takes
   (sort keys, column matrices, GEMM packing panels, reduction states ...)
   comes from ptc_scratch_malloc / _calloc / _memalign and goes back with
   free().  A failed request is the kernel's to report: the nogil worker
   returns an error code or notes the failed size in a flag
   (ptc_scratch_note, safe from OpenMP threads), and the Python entry point
   raises MemoryError after the nogil block; nothing is left half-written
   unless a correct fallback (the BLAS, a serial path) takes over.

   Fault injection for tests: one process-wide switch, owned by the module
   ptcore._ops.kernels._fault (its _fail_scratch_allocs), makes the next N
   requests of at least B bytes fail (after the first K of them).  Each extension module compiles its
   own copy of this header, so each holds a pointer to the switch,
   ptc_scratch_sw, that the module points at _fault's at import
   (_fault.pxd's scratch_bind); until then it points at a switch of its own
   that is never armed.  Disarmed, a request costs one predictable branch
   on the switch's ``armed`` field before malloc. */
#ifndef PTC_SCRATCH_H
#define PTC_SCRATCH_H
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct {
    int armed;              /* 0: requests go straight to malloc (the only field read) */
    long long left;         /* requests still to fail; -1: every one */
    size_t min_bytes;       /* only requests of at least this many bytes fail */
    long long skip;         /* ... after this many of them were served */
    long long failed;       /* requests failed by the switch since it was armed */
} ptc_scratch_fault;

static ptc_scratch_fault ptc_scratch_unbound;
static ptc_scratch_fault* ptc_scratch_sw = &ptc_scratch_unbound;

static inline void ptc_scratch_bind(ptc_scratch_fault* sw) {
    ptc_scratch_sw = sw;
}

/* the armed switch's verdict on a request of ``bytes`` (counts it down) */
static inline int ptc_scratch_inject(ptc_scratch_fault* sw, size_t bytes) {
    long long left;
    if (bytes < sw->min_bytes) return 0;
    if (__atomic_load_n(&sw->skip, __ATOMIC_RELAXED) > 0
        && __atomic_sub_fetch(&sw->skip, 1, __ATOMIC_RELAXED) >= 0)
        return 0;
    left = __atomic_load_n(&sw->left, __ATOMIC_RELAXED);
    for (;;) {
        if (left == 0) return 0;
        if (left < 0) break;
        if (__atomic_compare_exchange_n(&sw->left, &left, left - 1, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            break;
    }
    __atomic_fetch_add(&sw->failed, 1, __ATOMIC_RELAXED);
    return 1;
}

static inline int ptc_scratch_fails(size_t bytes) {
    ptc_scratch_fault* sw = ptc_scratch_sw;
    return __builtin_expect(__atomic_load_n(&sw->armed, __ATOMIC_RELAXED) != 0, 0)
           && ptc_scratch_inject(sw, bytes);
}

static inline void* ptc_scratch_malloc(size_t bytes) {
    return ptc_scratch_fails(bytes) ? NULL : malloc(bytes);
}

static inline void* ptc_scratch_calloc(size_t n, size_t size) {
    return ptc_scratch_fails(n * size) ? NULL : calloc(n, size);
}

static inline int ptc_scratch_memalign(void** p, size_t align, size_t bytes) {
    return ptc_scratch_fails(bytes) ? ENOMEM : posix_memalign(p, align, bytes);
}

/* note a failed request of ``bytes`` in ``*flag`` (0: none failed); any
   thread may call it, the entry point reads the flag after the region */
static inline void ptc_scratch_note(size_t* flag, size_t bytes) {
    __atomic_store_n(flag, bytes ? bytes : (size_t)1, __ATOMIC_RELAXED);
}
#endif
