/* ptcore host allocator: see the comment in _tensor.pyx. */
#ifndef PTC_ALLOC_H
#define PTC_ALLOC_H
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#define PTC_HUGE_PAGE ((size_t)2 << 20)
#define PTC_CACHE_SLOTS 128

static size_t ptc_large_threshold = (size_t)512 << 10;
static size_t ptc_cache_limit = (size_t)1 << 30;
static size_t ptc_cache_bytes = 0;
static int ptc_cache_n = 0;
static void *ptc_cache_ptr[PTC_CACHE_SLOTS];
static size_t ptc_cache_size[PTC_CACHE_SLOTS];
static uint64_t ptc_stat_hits = 0, ptc_stat_maps = 0, ptc_stat_unmaps = 0;
static size_t ptc_live_bytes = 0;
/* bytes of every live block, small ones included (the profiler's memory columns);
   updated atomically: the small-block path takes no lock */
static int64_t ptc_total_live = 0;
static pthread_mutex_t ptc_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t ptc_round_large(size_t n) {
    size_t g = n >= ((size_t)4 << 20) ? PTC_HUGE_PAGE : ((size_t)64 << 10);
    return (n + g - 1) / g * g;
}

static void *ptc_map(size_t n) {
    char *p;
    if (n >= PTC_HUGE_PAGE) {
        size_t total = n + PTC_HUGE_PAGE;
        p = (char *)mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == (char *)MAP_FAILED) return NULL;
        uintptr_t a = ((uintptr_t)p + PTC_HUGE_PAGE - 1) & ~(uintptr_t)(PTC_HUGE_PAGE - 1);
        size_t head = a - (uintptr_t)p, tail = total - head - n;
        if (head) munmap(p, head);
        if (tail) munmap((char *)a + n, tail);
        p = (char *)a;
#ifdef MADV_HUGEPAGE
        madvise(p, n, MADV_HUGEPAGE);
#endif
    } else {
        p = (char *)mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == (char *)MAP_FAILED) return NULL;
    }
    ptc_stat_maps++;
    return p;
}

/* 1 when the pages of the private anonymous block [p, p + r) now read as
   zeros (Linux's MADV_DONTNEED drops them; elsewhere the advice does not
   promise zeros: 0, and the caller clears the block) */
static int ptc_pages_to_zero(void *p, size_t r) {
#if defined(__linux__) && defined(MADV_DONTNEED)
    return madvise(p, r, MADV_DONTNEED) == 0;
#else
    (void)p; (void)r;
    return 0;
#endif
}

/* a cached block of exactly r bytes, taken out of the cache (NULL: none);
   the caller holds ptc_alloc_lock */
static void *ptc_cache_take(size_t r) {
    for (int i = ptc_cache_n - 1; i >= 0; i--) {
        if (ptc_cache_size[i] == r) {
            void *p = ptc_cache_ptr[i];
            ptc_cache_n--;
            ptc_cache_ptr[i] = ptc_cache_ptr[ptc_cache_n];
            ptc_cache_size[i] = ptc_cache_size[ptc_cache_n];
            ptc_cache_bytes -= r;
            ptc_stat_hits++;
            return p;
        }
    }
    return NULL;
}

/* Returns NULL on failure.  Large blocks: a cached block of the same
   rounded size is reused (no page faults).  A zero-filled request clears
   it with memset up to 8 MiB; above, the block gives its pages back
   (MADV_DONTNEED: they read as zeros, faulted in lazily as a fresh
   mapping's, and the kernel recycles the pages it just took).  (Zero
   requests above 8 MiB used to take a fresh mapping and leave the cache
   alone: it filled with their freed blocks, resident, while every request
   faulted in pages the kernel -- in a virtual machine, the hypervisor --
   had not handed out lately, at ~5 ms per 2 MiB page where recycled ones
   take ~0.1 ms: a 32 MiB zeros() took 80-100 ms, torch's 14 ms.) */
static void *ptc_host_alloc(size_t n, int zero) {
    void *p = NULL;
    if (n == 0) return NULL;
    if (n < ptc_large_threshold) {
        size_t r = (n + 63) & ~(size_t)63;
        if (posix_memalign(&p, 64, r) != 0) return NULL;
        if (zero) memset(p, 0, r);
        __atomic_fetch_add(&ptc_total_live, (int64_t)r, __ATOMIC_RELAXED);
        return p;
    }
    size_t r = ptc_round_large(n);
    pthread_mutex_lock(&ptc_alloc_lock);
    p = ptc_cache_take(r);
    pthread_mutex_unlock(&ptc_alloc_lock);
    if (p != NULL) {
        if (zero && (r <= ((size_t)8 << 20) || !ptc_pages_to_zero(p, r)))
            memset(p, 0, n);
    } else {
        p = ptc_map(r);
        if (p == NULL) {
            /* release the cache and retry once */
            pthread_mutex_lock(&ptc_alloc_lock);
            while (ptc_cache_n > 0) {
                ptc_cache_n--;
                munmap(ptc_cache_ptr[ptc_cache_n], ptc_cache_size[ptc_cache_n]);
                ptc_stat_unmaps++;
            }
            ptc_cache_bytes = 0;
            pthread_mutex_unlock(&ptc_alloc_lock);
            p = ptc_map(r);
            if (p == NULL) return NULL;
        }
    }
    pthread_mutex_lock(&ptc_alloc_lock);
    ptc_live_bytes += r;
    pthread_mutex_unlock(&ptc_alloc_lock);
    __atomic_fetch_add(&ptc_total_live, (int64_t)r, __ATOMIC_RELAXED);
    return p;
}

static void ptc_host_free(void *p, size_t n) {
    if (p == NULL) return;
    if (n < ptc_large_threshold) {
        __atomic_fetch_sub(&ptc_total_live, (int64_t)((n + 63) & ~(size_t)63), __ATOMIC_RELAXED);
        free(p);
        return;
    }
    size_t r = ptc_round_large(n);
    __atomic_fetch_sub(&ptc_total_live, (int64_t)r, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ptc_alloc_lock);
    ptc_live_bytes -= r;
    if (r <= ptc_cache_limit) {
        /* evict oldest blocks until this one fits */
        while (ptc_cache_n > 0 && (ptc_cache_bytes + r > ptc_cache_limit || ptc_cache_n == PTC_CACHE_SLOTS)) {
            munmap(ptc_cache_ptr[0], ptc_cache_size[0]);
            ptc_stat_unmaps++;
            ptc_cache_bytes -= ptc_cache_size[0];
            memmove(ptc_cache_ptr, ptc_cache_ptr + 1, (ptc_cache_n - 1) * sizeof(void *));
            memmove(ptc_cache_size, ptc_cache_size + 1, (ptc_cache_n - 1) * sizeof(size_t));
            ptc_cache_n--;
        }
        ptc_cache_ptr[ptc_cache_n] = p;
        ptc_cache_size[ptc_cache_n] = r;
        ptc_cache_n++;
        ptc_cache_bytes += r;
        p = NULL;
    }
    pthread_mutex_unlock(&ptc_alloc_lock);
    if (p != NULL) { munmap(p, r); ptc_stat_unmaps++; }
}

/* glibc's malloc serves the blocks under ptc_large_threshold.  By default
   it maps blocks from 128 KiB (a threshold it raises as mapped blocks are
   freed) and returns the top of its heap to the system once 2x that is
   free: a training step that frees its activations (hundreds of 100-500 KiB
   tensors) and allocates them again in the next step page-faults them
   every time (measured: ~3000 faults, ~8 ms of system time per step of a
   small GPT, where PyTorch had ~800).  Start malloc in the state its
   dynamic thresholds reach at most (blocks up to 32 MiB from the heap, 64
   MiB of free heap kept), unless the user tuned malloc already (MALLOC_*_
   environment variables or GLIBC_TUNABLES). */
static void ptc_host_tune(void) {
#if defined(__GLIBC__)
    if (getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") ||
            getenv("MALLOC_TOP_PAD_") || getenv("GLIBC_TUNABLES"))
        return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

static void ptc_host_empty_cache(void) {
    pthread_mutex_lock(&ptc_alloc_lock);
    while (ptc_cache_n > 0) {
        ptc_cache_n--;
        munmap(ptc_cache_ptr[ptc_cache_n], ptc_cache_size[ptc_cache_n]);
        ptc_stat_unmaps++;
    }
    ptc_cache_bytes = 0;
    pthread_mutex_unlock(&ptc_alloc_lock);
}
#endif
