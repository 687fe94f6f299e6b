/* ptcore emulated CUDA device: host compatibility header.

   Included (as text) in front of a ptcore CUDA kernel program so that the
   very same CUDA C++ sources compile for the host with the system C++
   compiler (see ptcore/cuda/emulated/kernels.py).  It provides what NVRTC
   provides without headers: the execution-space keywords, threadIdx /
   blockIdx / blockDim / gridDim, __shared__, __syncthreads, the warp
   intrinsics, atomics, the CUDA math library and the intrinsics.

   Execution model (ptc_rt_launch, compiled from this same file with
   PTC_HOST_RUNTIME defined into one runtime library per process): blocks run
   one after another; the threads of a block are cooperative fibers on pooled
   stacks, switched only at __syncthreads and at warp-synchronous calls.  So
   plain read-modify-write is an exact atomic, and a function-local static is
   per-block shared memory.  A program never links against the runtime: every
   blocking call goes through the function table the runtime puts in the
   block (ptc_hblock::api).
*/
#ifndef PTC_CUDA_HOST_H
#define PTC_CUDA_HOST_H
#define PTC_HOST_EMULATION 1

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <fenv.h>
#include <cmath>
#include <utility>

/* ---- execution-space keywords ---- */
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
#define __constant__ static
#define __managed__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__

/* ---- built-in vector types ---- */
struct uint3 { unsigned int x, y, z; };
typedef uint3 dim3;

/* ---- shared runtime structures ---- */
struct ptc_hthread;
struct ptc_hblock;
struct ptc_fiber;

struct ptc_rt_api {
    /* block barrier; pred/op for __syncthreads_count/and/or */
    void (*barrier)(ptc_hthread* t, const void* site, int pred);
    /* warp-synchronous call; returns this lane's result bits */
    unsigned long long (*warp)(ptc_hthread* t, int op, unsigned int mask, unsigned long long v, int arg, int width);
};

enum { PTC_W_IDX = 0, PTC_W_UP, PTC_W_DOWN, PTC_W_XOR, PTC_W_BALLOT, PTC_W_ANY, PTC_W_ALL, PTC_W_SYNC,
       PTC_W_MATCH_ANY, PTC_W_MATCH_ALL, PTC_W_ACTIVE };
enum { PTC_T_UNSTARTED = 0, PTC_T_READY, PTC_T_RUNNING, PTC_T_WAIT_BAR, PTC_T_WAIT_WARP, PTC_T_DONE };

struct ptc_warp_state {
    unsigned int need;       /* lanes that must arrive */
    unsigned int arrived;
    int op;
};

struct ptc_hthread {
    uint3 tid;
    int linear, lane, warp, state;
    ptc_hblock* blk;
    ptc_fiber* fib;
    unsigned long long xval, xres;   /* warp exchange */
    int xarg, xwidth;
};

struct ptc_hblock {
    uint3 bid, bdim, gdim;
    const ptc_rt_api* api;
    void* dyn_smem;                   /* the launch's dynamic shared memory (extern __shared__) */
    int nthreads;
    int bar_count, bar_and, bar_or;   /* results of the last released barrier */
    /* runtime-private */
    void (*tramp)(void**, ptc_hthread*);
    void** params;
    ptc_hthread* threads;
    int ndone, nbar, acc_count, acc_and, acc_or, bar_mixed;
    const void* bar_site;
    const void* bar_site2;
    int failed;
    char msg[512];
    ptc_warp_state warps[32];
    int* ready;
    int rhead, rtail;
};

#ifndef PTC_HOST_RUNTIME
/* the CUDA thread running now (set by the trampoline, restored after every
   blocking call: other threads of the block run in between) */
__attribute__((visibility("hidden"))) ptc_hthread* ptc_cur;

/* ``extern __shared__ T name[];`` is rewritten by the loader into
   ``T* const name = (T*)PTC_DYNAMIC_SMEM;`` */
#define PTC_DYNAMIC_SMEM (ptc_cur->blk->dyn_smem)
#define threadIdx (ptc_cur->tid)
#define blockIdx (ptc_cur->blk->bid)
#define blockDim (ptc_cur->blk->bdim)
#define gridDim (ptc_cur->blk->gdim)
#define warpSize 32

#define PTC_CLOBBER() __asm__ __volatile__("" ::: "memory")

/* a barrier is identified by its source line (call sites are not: the
   optimiser may duplicate one call into several) */
static __attribute__((noinline)) int ptc_syncthreads_at(long line, int pred, int which) {
    ptc_hthread* me = ptc_cur;
    PTC_CLOBBER();
    me->blk->api->barrier(me, (const void*)line, pred);
    ptc_cur = me;
    PTC_CLOBBER();
    return which == 0 ? 0 : which == 1 ? me->blk->bar_count : which == 2 ? me->blk->bar_and : me->blk->bar_or;
}
#define __syncthreads() ((void)ptc_syncthreads_at(__LINE__, 0, 0))
#define __syncthreads_count(p) ptc_syncthreads_at(__LINE__, (p) != 0, 1)
#define __syncthreads_and(p) ptc_syncthreads_at(__LINE__, (p) != 0, 2)
#define __syncthreads_or(p) ptc_syncthreads_at(__LINE__, (p) != 0, 3)
static __attribute__((noinline)) unsigned long long ptc_warp_call(int op, unsigned int mask, unsigned long long v,
                                                                 int arg, int width) {
    ptc_hthread* me = ptc_cur;
    PTC_CLOBBER();
    unsigned long long r = me->blk->api->warp(me, op, mask, v, arg, width);
    ptc_cur = me;
    PTC_CLOBBER();
    return r;
}
template <class T> static inline unsigned long long ptc_to_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    unsigned long long u = 0;
    memcpy(&u, &v, sizeof(T));
    return u;
}
template <class T> static inline T ptc_from_bits(unsigned long long u) {
    T v;
    memcpy(&v, &u, sizeof(T));
    return v;
}
template <class T> static inline T __shfl_sync(unsigned int mask, T v, int src, int width = 32) {
    return ptc_from_bits<T>(ptc_warp_call(PTC_W_IDX, mask, ptc_to_bits(v), src, width));
}
template <class T> static inline T __shfl_up_sync(unsigned int mask, T v, unsigned int d, int width = 32) {
    return ptc_from_bits<T>(ptc_warp_call(PTC_W_UP, mask, ptc_to_bits(v), (int)d, width));
}
template <class T> static inline T __shfl_down_sync(unsigned int mask, T v, unsigned int d, int width = 32) {
    return ptc_from_bits<T>(ptc_warp_call(PTC_W_DOWN, mask, ptc_to_bits(v), (int)d, width));
}
template <class T> static inline T __shfl_xor_sync(unsigned int mask, T v, int m, int width = 32) {
    return ptc_from_bits<T>(ptc_warp_call(PTC_W_XOR, mask, ptc_to_bits(v), m, width));
}
static inline unsigned int __ballot_sync(unsigned int mask, int pred) {
    return (unsigned int)ptc_warp_call(PTC_W_BALLOT, mask, pred != 0, 0, 32);
}
static inline int __any_sync(unsigned int mask, int pred) {
    return (int)ptc_warp_call(PTC_W_ANY, mask, pred != 0, 0, 32);
}
static inline int __all_sync(unsigned int mask, int pred) {
    return (int)ptc_warp_call(PTC_W_ALL, mask, pred != 0, 0, 32);
}
static inline void __syncwarp(unsigned int mask = 0xffffffffu) { ptc_warp_call(PTC_W_SYNC, mask, 0, 0, 32); }
template <class T> static inline unsigned int __match_any_sync(unsigned int mask, T v) {
    return (unsigned int)ptc_warp_call(PTC_W_MATCH_ANY, mask, ptc_to_bits(v), 0, 32);
}
/* the lanes of the calling warp that have not exited */
static inline unsigned int __activemask() { return (unsigned int)ptc_warp_call(PTC_W_ACTIVE, 0u, 0, 0, 32); }
static inline void __threadfence() { PTC_CLOBBER(); }
static inline void __threadfence_block() { PTC_CLOBBER(); }
static inline void __threadfence_system() { PTC_CLOBBER(); }
template <class T> static inline T __ldg(const T* p) { return *p; }
#endif /* !PTC_HOST_RUNTIME */

/* ---- atomics: blocks run one at a time and fibers switch only at barriers
   and warp calls, so a plain read-modify-write is exact ---- */
#define PTC_ATOMIC2(name, T, expr) static inline T name(T* a, T v) { T o = *a; *a = (T)(expr); return o; }
#define PTC_ATOMIC_ALL(name, expr)                         \
    PTC_ATOMIC2(name, int, expr)                           \
    PTC_ATOMIC2(name, unsigned int, expr)                  \
    PTC_ATOMIC2(name, unsigned long long, expr)            \
    PTC_ATOMIC2(name, long long, expr)
PTC_ATOMIC_ALL(atomicAdd, o + v)
PTC_ATOMIC2(atomicAdd, float, o + v)
PTC_ATOMIC2(atomicAdd, double, o + v)
PTC_ATOMIC_ALL(atomicSub, o - v)
PTC_ATOMIC_ALL(atomicExch, v)
PTC_ATOMIC2(atomicExch, float, v)
PTC_ATOMIC_ALL(atomicMin, (v < o ? v : o))
PTC_ATOMIC_ALL(atomicMax, (v > o ? v : o))
PTC_ATOMIC_ALL(atomicAnd, o & v)
PTC_ATOMIC_ALL(atomicOr, o | v)
PTC_ATOMIC_ALL(atomicXor, o ^ v)
static inline unsigned int atomicInc(unsigned int* a, unsigned int v) { unsigned int o = *a; *a = (o >= v) ? 0u : o + 1u; return o; }
static inline unsigned int atomicDec(unsigned int* a, unsigned int v) { unsigned int o = *a; *a = (o == 0u || o > v) ? v : o - 1u; return o; }
#define PTC_ATOMIC_CAS(T) static inline T atomicCAS(T* a, T cmp, T v) { T o = *a; if (o == cmp) *a = v; return o; }
PTC_ATOMIC_CAS(int)
PTC_ATOMIC_CAS(unsigned int)
PTC_ATOMIC_CAS(unsigned long long)
PTC_ATOMIC_CAS(unsigned short)

/* ---- reinterpretation and integer intrinsics ---- */
static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
static inline unsigned int __float_as_uint(float x) { unsigned int r; memcpy(&r, &x, 4); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
static inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
static inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
static inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo));
}
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; ++i) { r = (r << 1) | (x & 1u); x >>= 1; }
    return r;
}
static inline unsigned long long __brevll(unsigned long long x) {
    unsigned long long r = 0;
    for (int i = 0; i < 64; ++i) { r = (r << 1) | (x & 1ull); x >>= 1; }
    return r;
}
#define PTC_MINMAX(T)                                             \
    static inline T min(T a, T b) { return a < b ? a : b; }    \
    static inline T max(T a, T b) { return a > b ? a : b; }
PTC_MINMAX(int)
PTC_MINMAX(unsigned int)
PTC_MINMAX(long long)
PTC_MINMAX(unsigned long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

/* ---- IEEE rounding intrinsics (host SSE arithmetic is IEEE; the program is
   compiled with -ffp-contract=off, so nothing is fused behind our back) ---- */
template <class F> static inline auto ptc_with_rounding(int mode, F f) -> decltype(f()) {
    int old = fegetround();
    fesetround(mode);
    volatile decltype(f()) r = f();
    fesetround(old);
    return r;
}
#define PTC_RND_OPS(sfx, mode)                                                                                 \
    static inline float __fadd_##sfx(float a, float b) { return ptc_with_rounding(mode, [&] { volatile float x = a; return x + b; }); } \
    static inline float __fsub_##sfx(float a, float b) { return ptc_with_rounding(mode, [&] { volatile float x = a; return x - b; }); } \
    static inline float __fmul_##sfx(float a, float b) { return ptc_with_rounding(mode, [&] { volatile float x = a; return x * b; }); } \
    static inline float __fdiv_##sfx(float a, float b) { return ptc_with_rounding(mode, [&] { volatile float x = a; return x / b; }); } \
    static inline float __fsqrt_##sfx(float a) { return ptc_with_rounding(mode, [&] { volatile float x = a; return sqrtf(x); }); } \
    static inline float __frcp_##sfx(float a) { return ptc_with_rounding(mode, [&] { volatile float x = a; return 1.0f / x; }); } \
    static inline float __fmaf_##sfx(float a, float b, float c) { return ptc_with_rounding(mode, [&] { volatile float x = a; return fmaf(x, b, c); }); } \
    static inline double __dadd_##sfx(double a, double b) { return ptc_with_rounding(mode, [&] { volatile double x = a; return x + b; }); } \
    static inline double __dsub_##sfx(double a, double b) { return ptc_with_rounding(mode, [&] { volatile double x = a; return x - b; }); } \
    static inline double __dmul_##sfx(double a, double b) { return ptc_with_rounding(mode, [&] { volatile double x = a; return x * b; }); } \
    static inline double __ddiv_##sfx(double a, double b) { return ptc_with_rounding(mode, [&] { volatile double x = a; return x / b; }); } \
    static inline double __dsqrt_##sfx(double a) { return ptc_with_rounding(mode, [&] { volatile double x = a; return sqrt(x); }); } \
    static inline double __drcp_##sfx(double a) { return ptc_with_rounding(mode, [&] { volatile double x = a; return 1.0 / x; }); } \
    static inline double __fma_##sfx(double a, double b, double c) { return ptc_with_rounding(mode, [&] { volatile double x = a; return fma(x, b, c); }); } \
    static inline float __double2float_##sfx(double a) { return ptc_with_rounding(mode, [&] { volatile double x = a; return (float)x; }); }
PTC_RND_OPS(rz, FE_TOWARDZERO)
PTC_RND_OPS(ru, FE_UPWARD)
PTC_RND_OPS(rd, FE_DOWNWARD)
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __drcp_rn(double a) { return 1.0 / a; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __double2float_rn(double a) { return (float)a; }
static inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
static inline float saturate(float x) { return __saturatef(x); }

/* float -> integer conversions saturate and map NaN to 0, as cvt.*i does */
template <class I> static inline I ptc_sat_cvt(double r) {
    if (r != r) return (I)0;
    const double lo = (double)(I)(((I)-1 < (I)0) ? ((I)1 << (8 * sizeof(I) - 1)) : (I)0);
    const double hi_excl = ((I)-1 < (I)0) ? -lo : 2.0 * (double)((I)1 << (8 * sizeof(I) - 1));
    if (r <= lo) return (I)(((I)-1 < (I)0) ? ((I)1 << (8 * sizeof(I) - 1)) : (I)0);
    if (r >= hi_excl) return (I)~(((I)-1 < (I)0) ? ((I)1 << (8 * sizeof(I) - 1)) : (I)0);
    return (I)r;
}
template <class I> static inline I ptc_host_f2i(double x) { return ptc_sat_cvt<I>(trunc(x)); }
#define PTC_CVT_F(sfx, rnd)                                                                                     \
    static inline int __float2int_##sfx(float x) { return ptc_sat_cvt<int>(rnd((double)x)); }                \
    static inline unsigned int __float2uint_##sfx(float x) { return ptc_sat_cvt<unsigned int>(rnd((double)x)); } \
    static inline long long __float2ll_##sfx(float x) { return ptc_sat_cvt<long long>(rnd((double)x)); }      \
    static inline unsigned long long __float2ull_##sfx(float x) { return ptc_sat_cvt<unsigned long long>(rnd((double)x)); } \
    static inline int __double2int_##sfx(double x) { return ptc_sat_cvt<int>(rnd(x)); }                      \
    static inline unsigned int __double2uint_##sfx(double x) { return ptc_sat_cvt<unsigned int>(rnd(x)); }    \
    static inline long long __double2ll_##sfx(double x) { return ptc_sat_cvt<long long>(rnd(x)); }            \
    static inline unsigned long long __double2ull_##sfx(double x) { return ptc_sat_cvt<unsigned long long>(rnd(x)); }
static inline double ptc_rint_d(double x) { return nearbyint(x); }
static inline double ptc_trunc_d(double x) { return trunc(x); }
static inline double ptc_ceil_d(double x) { return ceil(x); }
static inline double ptc_floor_d(double x) { return floor(x); }
PTC_CVT_F(rn, ptc_rint_d)
PTC_CVT_F(rz, ptc_trunc_d)
PTC_CVT_F(ru, ptc_ceil_d)
PTC_CVT_F(rd, ptc_floor_d)
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned int x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline float __ull2float_rn(unsigned long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }
static inline float __ll2float_rz(long long x) { return ptc_with_rounding(FE_TOWARDZERO, [&] { volatile long long v = x; return (float)v; }); }
static inline double __ll2double_rz(long long x) { return ptc_with_rounding(FE_TOWARDZERO, [&] { volatile long long v = x; return (double)v; }); }

/* ---- float16 / bfloat16 conversions with cvt.rn's exact rounding: round to
   nearest even, subnormals kept, overflow to infinity, NaN -> canonical NaN ---- */
static inline float ptc_host_h2f(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
    if (e == 0) {
        if (m == 0) {
            u = sign;
        } else {                         /* subnormal: normalise */
            int k = -1;
            do { k++; m <<= 1; } while ((m & 0x400u) == 0);
            m &= 0x3ffu;
            u = sign | ((unsigned int)(127 - 15 - k) << 23) | (m << 13);
        }
    } else if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    } else {
        u = sign | ((e + 112u) << 23) | (m << 13);
    }
    return __uint_as_float(u);
}
static inline unsigned short ptc_host_f2h(float f) {
    unsigned int u = __float_as_uint(f), a = u & 0x7fffffffu;
    unsigned short sign = (unsigned short)((u >> 16) & 0x8000u);
    if (a > 0x7f800000u) return 0x7fffu;                      /* NaN */
    if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  /* rounds to +-inf */
    if (a < 0x38800000u) {                                     /* half subnormal or zero */
        unsigned int e = a >> 23;
        if (e < 102) return sign;
        unsigned int m = (a & 0x7fffffu) | 0x800000u, sh = 126 - e, hm = m >> sh, rem = m & ((1u << sh) - 1u),
                     hw = 1u << (sh - 1);
        if (rem > hw || (rem == hw && (hm & 1u))) hm++;
        return (unsigned short)(sign | hm);
    }
    unsigned int r = a + 0xfffu + ((a >> 13) & 1u);
    r -= (112u << 23);
    return (unsigned short)(sign | (r >> 13));
}
static inline unsigned short ptc_host_f2bf(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;    /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

/* ---- the CUDA math library functions libm lacks ---- */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return (float)(1.0 / cbrt((double)x)); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float fdividef(float a, float b) { return a / b; }
static inline float __fdividef(float a, float b) { return a / b; }
/* glibc declares these __ names itself: macros, so no redeclaration */
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(a, b) powf(a, b)
#define __sincosf(x, s, c) (*(s) = sinf(x), *(c) = cosf(x))
static inline double sinpi(double x) {
    if (!std::isfinite(x)) return x - x;
    double r = fmod(x, 2.0);
    if (r == floor(r) && fmod(r, 1.0) == 0.0) return copysign(0.0, x);
    return sin(M_PI * r);
}
static inline double cospi(double x) {
    if (!std::isfinite(x)) return x - x;
    double r = fmod(fabs(x), 2.0);
    if (r == 0.5 || r == 1.5) return 0.0;
    return cos(M_PI * r);
}
static inline float sinpif(float x) { return (float)sinpi((double)x); }
static inline float cospif(float x) { return (float)cospi((double)x); }
static inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
static inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }

/* inverse error functions: an initial guess (Giles' single-precision
   approximation) refined by Newton's method on erf (|y| <= 0.5) or on erfc
   (the tails, where 1 - |y| is exact) */
static inline double ptc_erfinv_guess(double y) {
    double w = -log((1.0 - y) * (1.0 + y)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w; p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w; p = 2.83297682 + p * w;
    }
    return p * y;
}
/* x >= 0 with erfc(x) == z, for z in (0, 1] */
static inline double ptc_erfcinv_tail(double z) {
    double x = ptc_erfinv_guess(1.0 - z);
    if (!(x > 0.0)) x = 0.0;
    if (std::isinf(x)) x = 27.0;
    for (int it = 0; it < 100; ++it) {
        double f = erfc(x) - z;
        double d = -1.1283791670955126 * exp(-x * x);
        if (d == 0.0) break;
        double dx = f / d;
        if (x - dx < 0.0) dx = x / 2.0;
        x -= dx;
        if (fabs(dx) <= 1e-17 * fabs(x)) break;
    }
    return x;
}
static inline double erfinv(double y) {
    if (y != y || y < -1.0 || y > 1.0) return NAN;
    if (y == 1.0) return INFINITY;
    if (y == -1.0) return -INFINITY;
    if (y == 0.0) return y;
    double a = fabs(y);
    if (a <= 0.5) {
        double x = ptc_erfinv_guess(a);
        for (int it = 0; it < 4; ++it) x -= (erf(x) - a) / (1.1283791670955126 * exp(-x * x));
        return copysign(x, y);
    }
    return copysign(ptc_erfcinv_tail(1.0 - a), y);
}
static inline double erfcinv(double z) {
    if (z != z || z < 0.0 || z > 2.0) return NAN;
    if (z == 0.0) return INFINITY;
    if (z == 2.0) return -INFINITY;
    if (z <= 1.0) return ptc_erfcinv_tail(z);
    return -erfinv(z - 1.0);  /* erfc(x) = z > 1 <=> erf(-x) = z - 1 */
}
static inline float erfinvf(float y) { return (float)erfinv((double)y); }
static inline float erfcinvf(float z) { return (float)erfcinv((double)z); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
static inline float normcdff(float x) { return (float)normcdf((double)x); }
static inline double normcdfinv(double p) { return -1.4142135623730950488 * erfcinv(2.0 * p); }
static inline float normcdfinvf(float p) { return (float)normcdfinv((double)p); }
static inline double erfcx(double x) {
    if (x < 25.0) return exp(x * x) * erfc(x);
    double x2 = 1.0 / (x * x);   /* asymptotic series */
    return (1.0 - 0.5 * x2 * (1.0 - 1.5 * x2 * (1.0 - 2.5 * x2))) / (x * 1.7724538509055160273);
}
static inline float erfcxf(float x) { return (float)erfcx((double)x); }
/* modified Bessel functions of the first kind: C++17 special math where the
   standard library has it (libstdc++), else the power series */
static inline double ptc_bessel_i(int nu, double x) {
#if defined(__cpp_lib_math_special_functions) || defined(__STDCPP_MATH_SPEC_FUNCS__)
    try {
        return std::cyl_bessel_i((double)nu, x);
    } catch (...) {
        /* libstdc++ refuses large x: the asymptotic series (inf past e^709) */
        const double mu = 4.0 * nu * nu, z = 8.0 * x;
        const double s = 1.0 - (mu - 1.0) / z + (mu - 1.0) * (mu - 9.0) / (2.0 * z * z)
                         - (mu - 1.0) * (mu - 9.0) * (mu - 25.0) / (6.0 * z * z * z);
        return exp(x) / sqrt(2.0 * 3.14159265358979323846 * x) * s;
    }
#else
    double h = 0.5 * x, term = nu ? h : 1.0, sum = term;
    for (int k = 1; k < 100000 && term > 1e-17 * sum && !std::isinf(sum); ++k) {
        term *= h * h / ((double)k * (double)(k + nu));
        sum += term;
    }
    return sum;
#endif
}
static inline double cyl_bessel_i0(double x) {
    if (x != x) return x;
    if (std::isinf(x)) return INFINITY;
    return ptc_bessel_i(0, fabs(x));
}
static inline double cyl_bessel_i1(double x) {
    if (x != x) return x;
    if (std::isinf(x)) return x;
    return copysign(ptc_bessel_i(1, fabs(x)), x);
}
static inline float cyl_bessel_i0f(float x) { return (float)cyl_bessel_i0((double)x); }
static inline float cyl_bessel_i1f(float x) { return (float)cyl_bessel_i1((double)x); }

#ifndef PTC_HOST_RUNTIME
/* ---- the per-kernel trampoline: params[i] points at argument i ---- */
template <class... A, size_t... I>
static inline void ptc_host_invoke_(void (*f)(A...), void** p, std::index_sequence<I...>) {
    f(*(typename std::remove_reference<A>::type*)p[I]...);
}
template <class... A> static inline void ptc_host_invoke(void (*f)(A...), void** p, ptc_hthread* t) {
    ptc_cur = t;
    ptc_host_invoke_(f, p, std::index_sequence_for<A...>{});
}
template <class... A> struct ptc_host_sig_ {
    static constexpr long long sizes[sizeof...(A) + 1] = {(long long)sizeof(A)..., 0};
};
template <class... A> static inline const long long* ptc_host_sig(void (*)(A...), int* n) {
    *n = (int)sizeof...(A);
    return ptc_host_sig_<A...>::sizes;
}
#define PTC_HOST_KERNEL(name)                                                                  \
    extern "C" void ptc_host_tramp__##name(void** p, ptc_hthread* t) { ptc_host_invoke(&name, p, t); } \
    extern "C" const long long* ptc_host_sig__##name(int* n) { return ptc_host_sig(&name, n); }
#endif /* !PTC_HOST_RUNTIME */

#endif /* PTC_CUDA_HOST_H */
