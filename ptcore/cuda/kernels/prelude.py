"""Header-free CUDA C++ prelude shared by every ptcore kernel program.

NVRTC has no include path, so nothing here includes a header: fixed-width
integers are spelled as builtin C types, float16 and bfloat16 are 2-byte
structs converted with inline PTX (``cvt.f32.f16``, ``cvt.rn.f16.f32``,
``cvt.rn.bf16.f32``; bfloat16 -> float32 is a 16-bit shift; under
``PTC_HOST_EMULATION`` -- the emulated device's host build -- the same
rounding is done in C by ``ptc_host_*`` of ptcore/cuda/emulated/host/ptc_cuda_host.h), and the few
helpers PyTorch's kernels rely on (integer division rules, NaN-propagating
clamp, lerp, digamma, warp/block reductions, atomics for every dtype) are
written out.  The CUDA math library (``expf``, ``lgamma``, ``erfinvf``,
``cyl_bessel_i0f`` ...) and the intrinsics (``__shfl_down_sync``,
``__umulhi``, ``__dmul_rn`` ...) are NVRTC builtins and need no header.
"""

#: the maximum number of dimensions of a strided operand set (after the
#: launcher has dropped size-1 dims and merged contiguous ones)
MAX_DIMS = 8

PRELUDE = r"""
/* ---- ptcore CUDA prelude (header-free) ---- */
#define PTC_MAX_DIMS %(MAX_DIMS)d
typedef signed char ptc_i8;
typedef unsigned char ptc_u8;
typedef short ptc_i16;
typedef int ptc_i32;
typedef long long ptc_i64;
typedef unsigned long long ptc_u64;

/* float16 / bfloat16 storage: 2-byte structs, computed in float32 */
struct alignas(2) ptc_half { unsigned short bits; };
struct alignas(2) ptc_bfloat16 { unsigned short bits; };

__device__ __forceinline__ float ptc_h2f(ptc_half h) {
#ifdef PTC_HOST_EMULATION
    return ptc_host_h2f(h.bits);
#else
    float f; asm("cvt.f32.f16 %%0, %%1;" : "=f"(f) : "h"(h.bits)); return f;
#endif
}
__device__ __forceinline__ ptc_half ptc_f2h(float f) {
#ifdef PTC_HOST_EMULATION
    ptc_half h; h.bits = ptc_host_f2h(f); return h;
#else
    ptc_half h; asm("cvt.rn.f16.f32 %%0, %%1;" : "=h"(h.bits) : "f"(f)); return h;
#endif
}
__device__ __forceinline__ float ptc_bf2f(ptc_bfloat16 b) {
    return __uint_as_float(((unsigned int)b.bits) << 16);
}
__device__ __forceinline__ ptc_bfloat16 ptc_f2bf(float f) {
    ptc_bfloat16 b;
#if defined(PTC_HOST_EMULATION)
    b.bits = ptc_host_f2bf(f);
#elif __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %%0, %%1;" : "=h"(b.bits) : "f"(f));
#else
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { b.bits = (unsigned short)((u >> 16) | 0x40u); return b; }
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (unsigned short)(u >> 16);
#endif
    return b;
}

/* float -> integer as cvt.rzi does: truncate, saturate to the range, NaN -> 0
   (a plain C++ cast is undefined there, and the host's differs) */
template <class I, class F> __device__ __forceinline__ I ptc_f2i(F x) {
#ifdef PTC_HOST_EMULATION
    return ptc_host_f2i<I>((double)x);
#else
    return (I)x;
#endif
}

/* scalar parameters of elementwise / reduction kernels (40 bytes) */
struct ptc_params { double d0, d1, d2; long long i0, i1; };

/* strided operand set: K operands (output first), sizes and element strides,
   dim 0 outermost; ndim in [1, PTC_MAX_DIMS] */
template <int K> struct ptc_strided {
    long long ndim;
    long long sizes[PTC_MAX_DIMS];
    long long strides[K][PTC_MAX_DIMS];
};

template <int K>
__device__ __forceinline__ void ptc_offsets(const ptc_strided<K>& ix, long long i, long long* o) {
#pragma unroll
    for (int k = 0; k < K; ++k) o[k] = 0;
    for (int d = (int)ix.ndim - 1; d >= 0; --d) {
        long long c;
        if (d == 0) { c = i; } else { long long sz = ix.sizes[d]; long long q = i / sz; c = i - q * sz; i = q; }
#pragma unroll
        for (int k = 0; k < K; ++k) o[k] += c * ix.strides[k][d];
    }
}

/* four consecutive elements as one aligned load/store (16 bytes for float) */
template <class T> struct alignas(4 * sizeof(T)) ptc_vec4 { T v[4]; };
#define PTC_ALIGNED4(ptr) ((((unsigned long long)(ptr)) %% (4 * sizeof(*(ptr)))) == 0)

#define PTC_FOR(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

/* ---- numeric limits ---- */
template <class T> struct ptc_lim;
template <> struct ptc_lim<bool> { __device__ static bool lowest() { return false; } __device__ static bool highest() { return true; } };
template <> struct ptc_lim<int> { __device__ static int lowest() { return -2147483647 - 1; } __device__ static int highest() { return 2147483647; } };
template <> struct ptc_lim<long long> { __device__ static long long lowest() { return -9223372036854775807LL - 1; } __device__ static long long highest() { return 9223372036854775807LL; } };
template <> struct ptc_lim<float> { __device__ static float lowest() { return -__int_as_float(0x7f800000); } __device__ static float highest() { return __int_as_float(0x7f800000); } };
template <> struct ptc_lim<double> { __device__ static double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); } __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000LL); } };
#define PTC_INFF __int_as_float(0x7f800000)
#define PTC_INF __longlong_as_double(0x7ff0000000000000LL)

__device__ __forceinline__ bool ptc_isnan(float x) { return x != x; }
__device__ __forceinline__ bool ptc_isnan(double x) { return x != x; }
template <class T> __device__ __forceinline__ bool ptc_isnan(T) { return false; }
/* nextafter of two float16 (bf = false) / bfloat16 (bf = true) values held as
   float: a step of the half type's sign-magnitude bit pattern */
__device__ __forceinline__ float ptc_nextafter16(float x, float y, bool bf) {
    if (ptc_isnan(x) || ptc_isnan(y)) return x + y;
    if (x == y) return y;
    const unsigned short u = bf ? ptc_f2bf(x).bits : ptc_f2h(x).bits;
    const unsigned short b = x == 0.0f ? (unsigned short)(signbit(y) ? 0x8001 : 0x0001)
                                       : (unsigned short)((y > x) == (x > 0.0f) ? u + 1 : u - 1);
    if (bf) { ptc_bfloat16 h; h.bits = b; return ptc_bf2f(h); }
    ptc_half h; h.bits = b; return ptc_h2f(h);
}

/* ---- integer division / shifts with PyTorch's rules (never UB) ---- */
template <class T> __device__ __forceinline__ bool ptc_signed() { return (T)-1 < (T)0; }
template <class T> __device__ __forceinline__ T ptc_idiv_trunc(T x, T y) {
    if (y == 0) return (T)0;
    if (ptc_signed<T>() && y == (T)-1) return (T)(0ULL - (unsigned long long)x);
    return (T)(x / y);
}
template <class T> __device__ __forceinline__ T ptc_idiv_floor(T x, T y) {
    if (y == 0) return (T)0;
    if (ptc_signed<T>() && y == (T)-1) return (T)(0ULL - (unsigned long long)x);
    T q = (T)(x / y);
    if (ptc_signed<T>() && (x %% y != 0) && ((x < 0) != (y < 0))) q = (T)(q - 1);
    return q;
}
template <class T> __device__ __forceinline__ T ptc_iremainder(T x, T y) {
    if (y == 0) return (T)0;
    if (ptc_signed<T>() && y == (T)-1) return (T)0;
    T r = (T)(x %% y);
    if (ptc_signed<T>() && r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);
    return r;
}
template <class T> __device__ __forceinline__ T ptc_iabs_wrap(T a) {
    /* two's-complement abs: the minimum stays the minimum (no signed overflow) */
    return (ptc_signed<T>() && a < (T)0) ? (T)(0ULL - (unsigned long long)a) : a;
}
template <class T> __device__ __forceinline__ T ptc_igcd(T a, T b) {
    /* c10's calc_gcd: Euclid's algorithm on the absolute values (C's truncating
       remainder; a minimum operand gives torch's signed results) */
    a = ptc_iabs_wrap<T>(a);
    b = ptc_iabs_wrap<T>(b);
    while (a != (T)0) { const T c = a; a = (T)(b %% a); b = c; }
    return b;
}
template <class T> __device__ __forceinline__ T ptc_ilcm(T a, T b) {
    /* torch's lcm: |a / gcd * b|, 0 when the gcd is; uint8/int8/int16 in int
       arithmetic (the abs is taken before the result narrows, as torch's),
       32/64-bit types wrapping (the minimum over -1 is the minimum) */
    const T g = ptc_igcd<T>(a, b);
    if (g == (T)0) return (T)0;
    if (sizeof(T) < 4) {
        const int r = ((int)a / (int)g) * (int)b;
        return (T)(r < 0 ? -r : r);
    }
    const unsigned long long q = (ptc_signed<T>() && g == (T)-1)
        ? 0ULL - (unsigned long long)a : (unsigned long long)(a / g);
    return ptc_iabs_wrap<T>((T)(q * (unsigned long long)b));
}
template <class T> __device__ __forceinline__ T ptc_ifmod(T x, T y) {
    if (y == 0) return (T)0;
    if (ptc_signed<T>() && y == (T)-1) return (T)0;
    return (T)(x %% y);
}
template <class T> __device__ __forceinline__ T ptc_ipow(T x, T y) {
    T result = 1, base = x;
    if (ptc_signed<T>() && y < 0) {
        if (x == 1) return (T)1;
        if (x == (T)-1) return (T)((y & 1) ? -1 : 1);
        return (T)0;
    }
    while (y) {
        if (y & 1) result = (T)(result * base);
        y = (T)(y >> 1);
        base = (T)(base * base);
    }
    return result;
}
template <class T> __device__ __forceinline__ T ptc_lshift(T x, T y) {
    if (y < 0 || (long long)y >= (long long)(8 * sizeof(T))) return (T)0;
    return (T)((unsigned long long)x << y);
}
template <class T> __device__ __forceinline__ T ptc_rshift(T x, T y) {
    if (y < 0 || (long long)y >= (long long)(8 * sizeof(T))) return (T)((ptc_signed<T>() && x < 0) ? -1 : 0);
    return (T)(x >> y);
}

/* ---- float helpers (float and double overloads) ---- */
__device__ __forceinline__ float ptc_floordiv(float a, float b) {
    if (b == 0.0f) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
    float fl;
    if (div != 0.0f) { fl = floorf(div); if (div - fl > 0.5f) fl += 1.0f; }
    else { fl = copysignf(0.0f, a / b); }
    return fl;
}
__device__ __forceinline__ double ptc_floordiv(double a, double b) {
    if (b == 0.0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
    double fl;
    if (div != 0.0) { fl = floor(div); if (div - fl > 0.5) fl += 1.0; }
    else { fl = copysign(0.0, a / b); }
    return fl;
}
__device__ __forceinline__ float ptc_fremainder(float x, float y) {
    float r = fmodf(x, y);
    if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;
    return r;
}
__device__ __forceinline__ double ptc_fremainder(double x, double y) {
    double r = fmod(x, y);
    if (r != 0.0 && ((r < 0.0) != (y < 0.0))) r += y;
    return r;
}
template <class T> __device__ __forceinline__ T ptc_clamp(T x, T lo, T hi) {
    /* min(max(x, lo), hi): hi wins when lo > hi; a NaN bound propagates */
    T r = (x < lo || ptc_isnan(lo)) ? lo : x;
    return (r > hi || ptc_isnan(hi)) ? hi : r;
}
template <class T> __device__ __forceinline__ T ptc_lerp(T x, T y, T w) {
    T d = y - x;
    return (fabs((double)w) < 0.5) ? x + w * d : y - d * ((T)1 - w);
}
__device__ __forceinline__ float ptc_logit(float x, const ptc_params& p) {
    float z = x;
    if (p.i0) {
        if (z < (float)p.d0) z = (float)p.d0;
        else if (z > (float)(1.0 - p.d0)) z = (float)(1.0 - p.d0);
    }
    return logf(z / (1.0f - z));
}
__device__ __forceinline__ double ptc_logit(double x, const ptc_params& p) {
    double z = x;
    if (p.i0) {
        if (z < p.d0) z = p.d0;
        else if (z > 1.0 - p.d0) z = 1.0 - p.d0;
    }
    return log(z / (1.0 - z));
}
/* digamma: reflection for x < 0, recurrence up to x >= 6, asymptotic series
   (ptcore's CPU algorithm, ptc_math.h); poles give NaN, +-0 give -+inf */
__device__ double ptc_digamma(double x) {
    if (x == 0.0) return signbit(x) ? PTC_INF : -PTC_INF;
    if (x != x) return x;
    double refl = 0.0;
    bool neg = x < 0.0;
    if (neg) {
        if (x == floor(x)) return __longlong_as_double(0x7ff8000000000000LL);
        refl = 3.14159265358979323846 / tan(3.14159265358979323846 * (x - trunc(x)));
        x = 1.0 - x;
    }
    double result = 0.0;
    while (x < 6.0) { result -= 1.0 / x; x += 1.0; }
    double f = 1.0 / (x * x);
    double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132
               + f * (691.0 / 32760 + f * (-1.0 / 12 + f * 3617.0 / 8160)))))));
    double r = result + log(x) - 0.5 / x + t;
    return neg ? r - refl : r;
}

/* ---- warp / block reductions over a POD state ---- */
template <class S> __device__ __forceinline__ S ptc_shfl_down(S v, int off) {
    static_assert(sizeof(S) %% 4 == 0, "state size must be a multiple of 4 bytes");
    union U { S s; int w[sizeof(S) / 4]; } u;
    u.s = v;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) u.w[k] = __shfl_down_sync(0xffffffffu, u.w[k], off);
    return u.s;
}
template <class S> __device__ __forceinline__ S ptc_shfl_up(S v, int off) {
    static_assert(sizeof(S) %% 4 == 0, "state size must be a multiple of 4 bytes");
    union U { S s; int w[sizeof(S) / 4]; } u;
    u.s = v;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) u.w[k] = __shfl_up_sync(0xffffffffu, u.w[k], off);
    return u.s;
}
template <class Op, class S> __device__ __forceinline__ S ptc_warp_reduce(S s) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s = Op::combine(s, ptc_shfl_down(s, off));
    return s;
}
/* block reduction (blockDim.x a multiple of 32, <= 1024); result valid in thread 0 */
template <class Op, class S> __device__ __forceinline__ S ptc_block_reduce(S s, S* sm) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    s = ptc_warp_reduce<Op>(s);
    if (lane == 0) sm[w] = s;
    __syncthreads();
    if (w == 0) {
        s = lane < nw ? sm[lane] : Op::init();
        s = ptc_warp_reduce<Op>(s);
    }
    __syncthreads();
    return s;
}
/* block reduction whose result every thread gets */
template <class Op, class S> __device__ __forceinline__ S ptc_block_allreduce(S s, S* sm) {
    s = ptc_block_reduce<Op>(s, sm);
    if (threadIdx.x == 0) sm[0] = s;
    __syncthreads();
    s = sm[0];
    __syncthreads();
    return s;
}
/* block inclusive scan of one value per thread; *total gets the block total */
template <class Op, class S> __device__ __forceinline__ S ptc_block_scan(S v, S* sm, S* total) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        S t = ptc_shfl_up(v, off);
        if (lane >= off) v = Op::combine(t, v);
    }
    if (lane == 31) sm[w] = v;
    __syncthreads();
    if (w == 0) {
        S t = lane < nw ? sm[lane] : Op::init();
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            S u = ptc_shfl_up(t, off);
            if (lane >= off) t = Op::combine(u, t);
        }
        if (lane < nw) sm[lane] = t;
    }
    __syncthreads();
    if (w > 0) v = Op::combine(sm[w - 1], v);
    *total = sm[nw - 1];
    __syncthreads();
    return v;
}

/* ---- atomic read-modify-write for every storage type ---- */
template <class F> __device__ __forceinline__ void ptc_atomic_rmw_narrow(void* addr, int nbytes, F f) {
    /* 1- and 2-byte values through a CAS on the aligned 32-bit word that holds them */
    unsigned long long a = (unsigned long long)addr;
    unsigned int* base = (unsigned int*)(a & ~3ULL);
    unsigned int shift = (unsigned int)(a & 3ULL) * 8u;
    unsigned int mask = (nbytes == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int old = *base, assumed;
    do {
        assumed = old;
        unsigned int cur = (assumed & mask) >> shift;
        unsigned int nv = (f(cur) << shift) & mask;
        old = atomicCAS(base, assumed, (assumed & ~mask) | nv);
    } while (assumed != old);
}
struct ptc_add_u8 { int v; __device__ unsigned int operator()(unsigned int c) const { return (unsigned int)(ptc_u8)((int)(ptc_u8)c + v); } };
struct ptc_add_i8 { int v; __device__ unsigned int operator()(unsigned int c) const { return (unsigned int)(ptc_u8)(ptc_i8)((int)(ptc_i8)(ptc_u8)c + v); } };
struct ptc_or_b { int v; __device__ unsigned int operator()(unsigned int c) const { return (c != 0u || v != 0) ? 1u : 0u; } };
struct ptc_add_i16 { int v; __device__ unsigned int operator()(unsigned int c) const { return (unsigned int)(unsigned short)(short)((int)(short)(unsigned short)c + v); } };
struct ptc_add_f16 { float v; __device__ unsigned int operator()(unsigned int c) const { ptc_half h; h.bits = (unsigned short)c; return ptc_f2h(ptc_h2f(h) + v).bits; } };
struct ptc_add_bf16 { float v; __device__ unsigned int operator()(unsigned int c) const { ptc_bfloat16 h; h.bits = (unsigned short)c; return ptc_f2bf(ptc_bf2f(h) + v).bits; } };
__device__ __forceinline__ void ptc_atomic_or_bool(unsigned char* a, bool v) { ptc_atomic_rmw_narrow(a, 1, ptc_or_b{(int)v}); }
__device__ __forceinline__ void ptc_atomic_add(unsigned char* a, unsigned char v) { ptc_atomic_rmw_narrow(a, 1, ptc_add_u8{(int)v}); }
__device__ __forceinline__ void ptc_atomic_add(signed char* a, signed char v) { ptc_atomic_rmw_narrow(a, 1, ptc_add_i8{(int)v}); }
__device__ __forceinline__ void ptc_atomic_add(short* a, short v) { ptc_atomic_rmw_narrow(a, 2, ptc_add_i16{(int)v}); }
__device__ __forceinline__ void ptc_atomic_add(int* a, int v) { atomicAdd(a, v); }
__device__ __forceinline__ void ptc_atomic_add(long long* a, long long v) {
    atomicAdd((unsigned long long*)a, (unsigned long long)v);
}
__device__ __forceinline__ void ptc_atomic_add(float* a, float v) { atomicAdd(a, v); }
__device__ __forceinline__ void ptc_atomic_add(double* a, double v) { atomicAdd(a, v); }
__device__ __forceinline__ void ptc_atomic_add(ptc_half* a, float v) { ptc_atomic_rmw_narrow(a, 2, ptc_add_f16{v}); }
__device__ __forceinline__ void ptc_atomic_add(ptc_bfloat16* a, float v) { ptc_atomic_rmw_narrow(a, 2, ptc_add_bf16{v}); }
/* ---- end of prelude ---- */
""" % {"MAX_DIMS": MAX_DIMS}
