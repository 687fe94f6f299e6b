/* ptcore emulated CUDA device: the block scheduler (one library per process).

   ptc_rt_launch runs a kernel's grid: blocks one after another, the threads
   of a block as cooperative fibers.  A fiber runs one CUDA thread until it
   waits (a __syncthreads or a warp-synchronous call) or returns; a thread
   that returns without waiting leaves its fiber free for the next thread, so
   a kernel without barriers runs on a single stack.  Stacks are mmap-ed once
   (with a guard page), pooled and reused for the life of the process; their
   initial frames are built by hand and switched with a few instructions
   (x86-64, aarch64) or, elsewhere, with ucontext.

   Barrier semantics: a __syncthreads releases when every thread of the block
   that has not exited waits at it.  Threads waiting at different
   __syncthreads call sites, or waiting while others of the block have exited,
   or a warp call some of whose lanes never arrive, is a divergence that would
   hang or be undefined on the hardware: the launch fails with a message naming
   the block and the threads instead.
*/
#define PTC_HOST_RUNTIME 1
#include "ptc_cuda_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#include <ucontext.h>
#define PTC_UCONTEXT 1
#endif

struct ptc_fiber {
    void* sp;
    char* mem;
    size_t size;
    ptc_hthread* th;
    ptc_fiber* next_free;
#ifdef PTC_UCONTEXT
    ucontext_t uc;
#endif
};

static const size_t PTC_STACK = 256 * 1024;

static ptc_fiber* g_free = nullptr;
static ptc_fiber* g_curfib = nullptr;
static void* g_sched_sp = nullptr;
#ifdef PTC_UCONTEXT
static ucontext_t g_sched_uc;
#endif
static ptc_hthread g_threads[1024];
static int g_ready[1024];
static ptc_fiber* g_all[1025];
static int g_nall = 0;

/* ---- context switch: save callee-saved registers on the current stack,
   store the stack pointer in *save, load new_sp, restore, return ---- */
#if defined(__x86_64__)
extern "C" void ptc_ctx_switch(void** save, void* new_sp);
__asm__(
    ".text\n"
    ".globl ptc_ctx_switch\n"
    ".hidden ptc_ctx_switch\n"
    ".type ptc_ctx_switch,@function\n"
    "ptc_ctx_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size ptc_ctx_switch,.-ptc_ctx_switch\n");
#elif defined(__aarch64__)
extern "C" void ptc_ctx_switch(void** save, void* new_sp);
__asm__(
    ".text\n"
    ".globl ptc_ctx_switch\n"
    ".hidden ptc_ctx_switch\n"
    ".type ptc_ctx_switch,%function\n"
    "ptc_ctx_switch:\n"
    "    sub sp, sp, #176\n"
    "    stp x19, x20, [sp, #0]\n"
    "    stp x21, x22, [sp, #16]\n"
    "    stp x23, x24, [sp, #32]\n"
    "    stp x25, x26, [sp, #48]\n"
    "    stp x27, x28, [sp, #64]\n"
    "    stp x29, x30, [sp, #80]\n"
    "    stp d8, d9, [sp, #96]\n"
    "    stp d10, d11, [sp, #112]\n"
    "    stp d12, d13, [sp, #128]\n"
    "    stp d14, d15, [sp, #144]\n"
    "    mov x9, sp\n"
    "    str x9, [x0]\n"
    "    mov sp, x1\n"
    "    ldp x19, x20, [sp, #0]\n"
    "    ldp x21, x22, [sp, #16]\n"
    "    ldp x23, x24, [sp, #32]\n"
    "    ldp x25, x26, [sp, #48]\n"
    "    ldp x27, x28, [sp, #64]\n"
    "    ldp x29, x30, [sp, #80]\n"
    "    ldp d8, d9, [sp, #96]\n"
    "    ldp d10, d11, [sp, #112]\n"
    "    ldp d12, d13, [sp, #128]\n"
    "    ldp d14, d15, [sp, #144]\n"
    "    add sp, sp, #176\n"
    "    ret\n"
    ".size ptc_ctx_switch,.-ptc_ctx_switch\n");
#endif

static void ptc_fiber_main();

#ifdef PTC_UCONTEXT
static void ptc_fiber_uc_entry() { ptc_fiber_main(); }
#endif

/* (re)build the fiber's initial frame: the first switch to it enters ptc_fiber_main */
static void ptc_fiber_init(ptc_fiber* f) {
    char* top = f->mem + f->size;
    top = (char*)((uintptr_t)top & ~(uintptr_t)15);
#if defined(__x86_64__)
    void** sp = (void**)top;
    *--sp = nullptr;                       /* fake return address of ptc_fiber_main */
    *--sp = (void*)&ptc_fiber_main;        /* popped by ret */
    for (int i = 0; i < 6; ++i) *--sp = nullptr;   /* rbp rbx r12..r15 */
    f->sp = sp;
#elif defined(__aarch64__)
    char* sp = top - 176;
    memset(sp, 0, 176);
    ((void**)sp)[11] = (void*)&ptc_fiber_main;    /* x30 (lr) at offset 88 */
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->mem + sysconf(_SC_PAGESIZE);
    f->uc.uc_stack.ss_size = f->size - sysconf(_SC_PAGESIZE);
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, ptc_fiber_uc_entry, 0);
#endif
}

static ptc_fiber* ptc_fiber_get() {
    ptc_fiber* f = g_free;
    if (f) {
        g_free = f->next_free;
        return f;
    }
    f = (ptc_fiber*)calloc(1, sizeof(ptc_fiber));
    if (!f) return nullptr;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void* m = mmap(nullptr, PTC_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(f);
        return nullptr;
    }
    mprotect(m, page, PROT_NONE);          /* guard page below the stack */
    f->mem = (char*)m;
    f->size = PTC_STACK;
    ptc_fiber_init(f);
    if (g_nall < (int)(sizeof(g_all) / sizeof(g_all[0]))) g_all[g_nall++] = f;
    return f;
}

static void ptc_fiber_put(ptc_fiber* f) {
    f->th = nullptr;
    f->next_free = g_free;
    g_free = f;
}

static ptc_hblock* g_blk = nullptr;     /* the block running now */
static int g_next = 0;                  /* its next thread to start */
static const char* g_kname = "";

/* save the running context in `from` (nullptr: the scheduler) and continue `to` (nullptr: the scheduler) */
static inline void ptc_switch(ptc_fiber* from, ptc_fiber* to) {
    if (to) g_curfib = to;
#ifdef PTC_UCONTEXT
    swapcontext(from ? &from->uc : &g_sched_uc, to ? &to->uc : &g_sched_uc);
#else
    ptc_ctx_switch(from ? &from->sp : &g_sched_sp, to ? to->sp : g_sched_sp);
#endif
}

static void ptc_fail(ptc_hblock* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* the fiber to run next: a released thread, else the next thread to start (on a pooled fiber);
   nullptr when neither exists or the block failed */
static ptc_fiber* ptc_pick() {
    ptc_hblock* b = g_blk;
    if (b->failed) return nullptr;
    if (b->rhead != b->rtail) {
        int i = b->ready[b->rhead % 1024];
        b->rhead++;
        ptc_hthread* t = &b->threads[i];
        t->state = PTC_T_RUNNING;
        return t->fib;
    }
    if (g_next < b->nthreads) {
        ptc_hthread* t = &b->threads[g_next];
        ptc_fiber* f = ptc_fiber_get();
        if (!f) {
            ptc_fail(b, "kernel %s: out of memory for the stack of thread %d", g_kname, t->linear);
            return nullptr;
        }
        g_next++;
        f->th = t;
        t->fib = f;
        return f;
    }
    return nullptr;
}

/* the running thread waits (barrier, warp call): hand the CPU straight to the
   next runnable thread, or back to the scheduler when there is none */
static void ptc_wait() {
    ptc_fiber* cur = g_curfib;
    ptc_switch(cur, ptc_pick());
}

static void ptc_fiber_main() {
    for (;;) {
        ptc_fiber* f = g_curfib;
        ptc_hthread* t = f->th;
        ptc_hblock* b = t->blk;
        t->state = PTC_T_RUNNING;
        b->tramp(b->params, t);
        t->state = PTC_T_DONE;
        b->ndone++;
        ptc_fiber_put(f);
        /* usually the next thread starts on this same fiber, with no switch at all */
        ptc_fiber* nf = ptc_pick();
        if (nf != f) ptc_switch(f, nf);
    }
}

static inline void ptc_push_ready(ptc_hblock* b, int i) {
    b->ready[b->rtail % 1024] = i;
    b->rtail++;
    b->threads[i].state = PTC_T_READY;
}

#include <stdarg.h>
static void ptc_fail(ptc_hblock* b, const char* fmt, ...) {
    if (b->failed) return;
    b->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
    va_end(ap);
}

/* ---- the blocking calls (run on a fiber) ---- */
static void ptc_rt_barrier(ptc_hthread* t, const void* site, int pred) {
    ptc_hblock* b = t->blk;
    if (b->nbar == 0) {
        b->bar_site = site;
        b->acc_count = 0;
        b->acc_and = 1;
        b->acc_or = 0;
    } else if (site != b->bar_site && !b->bar_mixed) {
        b->bar_mixed = 1;
        b->bar_site2 = site;
    }
    b->nbar++;
    b->acc_count += pred != 0;
    b->acc_and &= pred != 0;
    b->acc_or |= pred != 0;
    t->state = PTC_T_WAIT_BAR;
    ptc_wait();
}

static const char* ptc_warp_op_name(int op) {
    switch (op) {
        case PTC_W_IDX: return "__shfl_sync";
        case PTC_W_UP: return "__shfl_up_sync";
        case PTC_W_DOWN: return "__shfl_down_sync";
        case PTC_W_XOR: return "__shfl_xor_sync";
        case PTC_W_BALLOT: return "__ballot_sync";
        case PTC_W_ANY: return "__any_sync";
        case PTC_W_ALL: return "__all_sync";
        case PTC_W_SYNC: return "__syncwarp";
        case PTC_W_MATCH_ANY: return "__match_any_sync";
        default: return "__activemask";
    }
}

static void ptc_warp_complete(ptc_hblock* b, ptc_hthread* lanes, ptc_warp_state* w, int nlanes) {
    unsigned int need = w->need;
    unsigned int ballot = 0;
    for (int l = 0; l < nlanes; ++l)
        if ((need >> l) & 1u && lanes[l].xval) ballot |= 1u << l;
    for (int l = 0; l < nlanes; ++l) {
        if (!((need >> l) & 1u)) continue;
        ptc_hthread* t = &lanes[l];
        int width = t->xwidth, seg = l & ~(width - 1), src = l;
        unsigned long long r = 0;
        switch (w->op) {
            case PTC_W_IDX: src = seg + (t->xarg & (width - 1)); break;
            case PTC_W_UP: src = l - t->xarg; if (src < seg) src = l; break;
            case PTC_W_DOWN: src = l + t->xarg; if (src >= seg + width) src = l; break;
            case PTC_W_XOR: src = l ^ t->xarg; if (src >= seg + width || src < 0) src = l; break;
            default: break;
        }
        switch (w->op) {
            case PTC_W_IDX: case PTC_W_UP: case PTC_W_DOWN: case PTC_W_XOR:
                r = (src < nlanes) ? lanes[src].xval : t->xval;
                break;
            case PTC_W_BALLOT: r = ballot; break;
            case PTC_W_ANY: r = ballot != 0; break;
            case PTC_W_ALL: r = ballot == need; break;
            case PTC_W_MATCH_ANY: {
                unsigned int m = 0;
                for (int k = 0; k < nlanes; ++k)
                    if ((need >> k) & 1u && lanes[k].xval == t->xval) m |= 1u << k;
                r = m;
                break;
            }
            default: r = 0; break;
        }
        t->xres = r;
    }
    (void)b;
}

static unsigned long long ptc_rt_warp(ptc_hthread* t, int op, unsigned int mask, unsigned long long v, int arg,
                                      int width) {
    ptc_hblock* b = t->blk;
    int base = t->warp * 32;
    int nlanes = b->nthreads - base < 32 ? b->nthreads - base : 32;
    unsigned int exist = nlanes == 32 ? 0xffffffffu : ((1u << nlanes) - 1u);
    ptc_hthread* lanes = &b->threads[base];
    if (op == PTC_W_ACTIVE) {
        unsigned int m = 0;
        for (int l = 0; l < nlanes; ++l)
            if (lanes[l].state != PTC_T_DONE) m |= 1u << l;
        return m;
    }
    if (width <= 0 || width > 32 || (width & (width - 1))) {
        ptc_fail(b, "%s with width %d (must be a power of two <= 32) in thread (%u,%u,%u)", ptc_warp_op_name(op),
                 width, t->tid.x, t->tid.y, t->tid.z);
        t->state = PTC_T_WAIT_WARP;
        for (;;) ptc_wait();
    }
    unsigned int need = (mask & exist) | (1u << t->lane);
    ptc_warp_state* w = &b->warps[t->warp];
    if (w->arrived == 0) {
        w->need = need;
        w->op = op;
    } else if (w->need != need || w->op != op) {
        ptc_fail(b, "warp %d: lane %d called %s with mask 0x%08x while lanes 0x%08x wait in %s with mask 0x%08x "
                 "(divergent warp-synchronous calls)", t->warp, t->lane, ptc_warp_op_name(op), mask, w->arrived,
                 ptc_warp_op_name(w->op), w->need);
        t->state = PTC_T_WAIT_WARP;
        for (;;) ptc_wait();
    }
    t->xval = v;
    t->xarg = arg;
    t->xwidth = width;
    w->arrived |= 1u << t->lane;
    if (w->arrived == w->need) {
        ptc_warp_complete(b, lanes, w, nlanes);
        unsigned int others = w->need & ~(1u << t->lane);
        w->arrived = 0;
        for (int l = 0; l < nlanes; ++l)
            if ((others >> l) & 1u) ptc_push_ready(b, base + l);
        return t->xres;
    }
    t->state = PTC_T_WAIT_WARP;
    ptc_wait();
    return t->xres;
}

static const ptc_rt_api g_api = {ptc_rt_barrier, ptc_rt_warp};

static void ptc_describe_stuck(ptc_hblock* b, const char* kname) {
    int n = b->nthreads, nbar = 0, nwarp = 0, ndone = 0;
    int first_warp = -1;
    for (int i = 0; i < n; ++i) {
        int s = b->threads[i].state;
        if (s == PTC_T_WAIT_BAR) nbar++;
        else if (s == PTC_T_WAIT_WARP) { nwarp++; if (first_warp < 0) first_warp = b->threads[i].warp; }
        else if (s == PTC_T_DONE) ndone++;
    }
    if (nwarp) {
        ptc_warp_state* w = &b->warps[first_warp];
        ptc_fail(b, "kernel %s deadlocks in block (%u,%u,%u): warp %d waits in %s for lanes 0x%08x, which "
                 "exited or wait elsewhere (%d threads at __syncthreads, %d exited)", kname, b->bid.x, b->bid.y,
                 b->bid.z, first_warp, ptc_warp_op_name(w->op), w->need & ~w->arrived, nbar, ndone);
    } else {
        ptc_fail(b, "kernel %s deadlocks in block (%u,%u,%u): %d threads wait at __syncthreads while %d of the "
                 "block's %d threads have exited (a divergent __syncthreads)", kname, b->bid.x, b->bid.y,
                 b->bid.z, nbar, ndone, n);
    }
}

/* run one block; 0 on success */
static int ptc_run_block(ptc_hblock* b, const char* kname) {
    int n = b->nthreads;
    g_blk = b;
    g_next = 0;
    g_kname = kname;
    b->ndone = 0;
    b->nbar = 0;
    b->bar_mixed = 0;
    b->rhead = b->rtail = 0;
    for (int w = 0; w < 32; ++w) b->warps[w].arrived = 0;
    for (int i = 0; i < n; ++i) b->threads[i].state = PTC_T_UNSTARTED;
    while (b->ndone < n && !b->failed) {
        ptc_fiber* f = ptc_pick();
        if (f) {
            ptc_switch(nullptr, f);
        } else if (b->failed) {
            break;
        } else if (b->nbar > 0 && b->nbar == n - b->ndone) {
            if (b->ndone > 0) {
                ptc_fail(b, "kernel %s: divergent __syncthreads in block (%u,%u,%u): %d threads wait at a barrier "
                         "that %d threads of the block exited without reaching", kname, b->bid.x, b->bid.y,
                         b->bid.z, b->nbar, b->ndone);
                break;
            }
            if (b->bar_mixed) {
                ptc_fail(b, "kernel %s: divergent __syncthreads in block (%u,%u,%u): threads wait at two different "
                         "__syncthreads calls (lines %ld and %ld of the program)", kname, b->bid.x, b->bid.y,
                         b->bid.z, (long)b->bar_site, (long)b->bar_site2);
                break;
            }
            b->bar_count = b->acc_count;
            b->bar_and = b->acc_and;
            b->bar_or = b->acc_or;
            b->nbar = 0;
            for (int i = 0; i < n; ++i) ptc_push_ready(b, i);
        } else {
            ptc_describe_stuck(b, kname);
            break;
        }
    }
    if (b->failed) {
        /* abandon the suspended threads: their fibers start afresh */
        for (int i = 0; i < n; ++i) {
            ptc_hthread* t = &b->threads[i];
            if (t->fib && t->state != PTC_T_DONE && t->state != PTC_T_UNSTARTED) {
                ptc_fiber_init(t->fib);
                ptc_fiber_put(t->fib);
            }
            t->fib = nullptr;
        }
        return 1;
    }
    for (int i = 0; i < n; ++i) b->threads[i].fib = nullptr;
    return 0;
}

/* dynamic shared memory: one buffer, as blocks run one at a time */
static double g_dyn_smem[(228 * 1024) / sizeof(double)];

extern "C" int ptc_rt_launch(void (*tramp)(void**, ptc_hthread*), void** params, const unsigned int* grid,
                             const unsigned int* block, unsigned long long smem, const char* kname, char* err,
                             int errlen) {
    static ptc_hblock b;
    if (smem > sizeof(g_dyn_smem)) {
        snprintf(err, errlen, "kernel %s: %llu bytes of dynamic shared memory (at most %zu)", kname, smem,
                 sizeof(g_dyn_smem));
        return 1;
    }
    unsigned long long nthreads = (unsigned long long)block[0] * block[1] * block[2];
    if (nthreads == 0 || nthreads > 1024 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        snprintf(err, errlen, "kernel %s: invalid launch configuration grid (%u,%u,%u) block (%u,%u,%u)", kname,
                 grid[0], grid[1], grid[2], block[0], block[1], block[2]);
        return 1;
    }
    memset(&b, 0, sizeof(b));
    b.api = &g_api;
    b.dyn_smem = g_dyn_smem;
    memset(g_dyn_smem, 0xff, smem);    /* uninitialised on the device: never zeros to rely on */
    b.tramp = tramp;
    b.params = params;
    b.threads = g_threads;
    b.ready = g_ready;
    b.nthreads = (int)nthreads;
    b.bdim.x = block[0];
    b.bdim.y = block[1];
    b.bdim.z = block[2];
    b.gdim.x = grid[0];
    b.gdim.y = grid[1];
    b.gdim.z = grid[2];
    int n = (int)nthreads;
    for (int i = 0; i < n; ++i) {
        ptc_hthread* t = &g_threads[i];
        memset(t, 0, sizeof(*t));
        t->linear = i;
        t->tid.x = (unsigned int)(i % block[0]);
        t->tid.y = (unsigned int)((i / block[0]) % block[1]);
        t->tid.z = (unsigned int)(i / (block[0] * block[1]));
        t->lane = i & 31;
        t->warp = i >> 5;
        t->blk = &b;
    }
    for (unsigned int z = 0; z < grid[2]; ++z)
        for (unsigned int y = 0; y < grid[1]; ++y)
            for (unsigned int x = 0; x < grid[0]; ++x) {
                b.bid.x = x;
                b.bid.y = y;
                b.bid.z = z;
                if (ptc_run_block(&b, kname)) {
                    snprintf(err, errlen, "%s", b.msg);
                    return 1;
                }
            }
    return 0;
}

extern "C" int ptc_rt_fibers() { return g_nall; }
