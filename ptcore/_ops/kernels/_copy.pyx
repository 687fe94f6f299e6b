# cython: language_level=3, cdivision=True
"""Strided copy-with-cast and fill kernels for every (src, dst) dtype pair.

Structure
---------
* Every dtype has a distinct C storage type (``pt_bool_s``, ``pt_half_s``,
  ``pt_bf16_s``, ``pt_cf_s``, ``pt_cd_s``, ``pt_ch_s`` are structs so that the
  fused-type machinery can tell them apart from ``uint8_t``/``uint16_t``).
* ``_cvt`` converts one element; it is written once over two fused types
  (``src_t`` x ``dst_t``) with compile-time branches on the type category.
* ``_kern`` is the one 2-D inner kernel (n0 rows of n1 elements); Cython
  instantiates it for all 20x20 pairs and ``_KERNELS[dst][src]`` holds them.
* ``copy_cast`` drops size-1 dims, flips negative destination strides, sorts
  dims so the destination's innermost stride is smallest, coalesces
  contiguous dims, switches to cache-blocked tiles when the source is
  transposed relative to the destination, and splits rows (or columns of a
  single long row) over OpenMP threads once numel >= parallel_grain(), at
  most one thread per started grain (team_for).

Conversion semantics (PyTorch ``tensor.to(dtype)`` on x86-64)
-------------------------------------------------------------
* -> bool: ``v != 0`` (complex: real != 0 or imag != 0; NaN -> True), 0/1 byte.
* bool -> anything: 0/1.
* integer -> integer: two's-complement wrap.
* float -> uint16: through int32; -> uint32: values >= 2**31 through
  x - 2**31, others through int32 (half types: through int64); -> uint64: C's
  unsigned conversion (x86-64's sequence).  In-range values are exact.
* float/half/bf16/complex -> integer: truncate toward zero.  -> uint8 goes
  through int64 (so -1.0 -> 255, as PyTorch's special case); -> int8/int16/
  int32 through int32 (PyTorch's plain static_cast: in-range values are the
  same as via int64, out-of-range/NaN give what x86 gives PyTorch, e.g.
  INT32_MIN, and the loop vectorises); -> int64 directly.  Out-of-range
  values never trap.
* complex -> real: real part.  real -> complex: imag = 0.
* float16/bfloat16 (and each half of complex32) are converted through
  float32 (RNE); float64 -> half/bf16
  casts to float32 first; int -> float32/half/bf16 is a single C cast to
  float32.
* the float8 types likewise go through float32 (``ptc_fp8.h``: RNE, e4m3fn
  saturates, e5m2 overflows to inf, the fnuz types to their NaN); from
  float8 to an integer type as from float16.
* same dtype: bit copy (NaN payloads kept).
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from cython.parallel cimport prange
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_RECORDS, PyBUF_RECORDS_RO

from ptcore._ops.kernels._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128,
    PT_COMPLEX32, PT_UINT16, PT_UINT32, PT_UINT64, PT_FLOAT8_E4M3FN, PT_FLOAT8_E5M2,
    PT_FLOAT8_E4M3FNUZ, PT_FLOAT8_E5M2FNUZ, PT_NUM_TYPES, PT_MAX_DIMS,
    ptc_half_to_float, ptc_float_to_half, ptc_bf16_to_float, ptc_float_to_bf16,
    ptc_float_to_e4m3fn, ptc_float_to_e5m2, ptc_float_to_e4m3fnuz, ptc_float_to_e5m2fnuz,
    ptc_e4m3fn_to_float, ptc_e5m2_to_float, ptc_e4m3fnuz_to_float, ptc_e5m2fnuz_to_float,
)
from ptcore._ops.kernels._parallel cimport team_for


# --------------------------------------------------------------------------
# storage types
# --------------------------------------------------------------------------
ctypedef struct pt_bool_s:
    uint8_t v

ctypedef struct pt_half_s:
    uint16_t bits

ctypedef struct pt_bf16_s:
    uint16_t bits

ctypedef struct pt_cf_s:
    float re
    float im

ctypedef struct pt_cd_s:
    double re
    double im

ctypedef struct pt_ch_s:
    uint16_t re          # float16 bits
    uint16_t im

ctypedef struct pt_e4m3_s:
    uint8_t bits

ctypedef struct pt_e5m2_s:
    uint8_t bits

ctypedef struct pt_e4m3z_s:
    uint8_t bits

ctypedef struct pt_e5m2z_s:
    uint8_t bits

# The same list twice so that source and destination vary independently.
ctypedef fused src_t:
    pt_bool_s
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    pt_half_s
    pt_bf16_s
    float
    double
    pt_cf_s
    pt_cd_s
    pt_ch_s
    uint16_t
    uint32_t
    uint64_t
    pt_e4m3_s
    pt_e5m2_s
    pt_e4m3z_s
    pt_e5m2z_s

ctypedef fused dst_t:
    pt_bool_s
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    pt_half_s
    pt_bf16_s
    float
    double
    pt_cf_s
    pt_cd_s
    pt_ch_s
    uint16_t
    uint32_t
    uint64_t
    pt_e4m3_s
    pt_e5m2_s
    pt_e4m3z_s
    pt_e5m2z_s


# --------------------------------------------------------------------------
# element loads (fused over the source type) and the one conversion
# --------------------------------------------------------------------------
cdef inline bint _ld_nonzero(const src_t* p) noexcept nogil:
    if src_t is pt_bool_s:
        return p.v != 0
    elif src_t is pt_half_s or src_t is pt_bf16_s:
        return (p.bits & 0x7fff) != 0          # +-0 -> False, NaN -> True
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return p.re != 0 or p.im != 0
    elif src_t is pt_ch_s:
        return (p.re & 0x7fff) != 0 or (p.im & 0x7fff) != 0
    elif src_t is pt_e4m3_s or src_t is pt_e5m2_s:
        return (p.bits & 0x7f) != 0            # +-0 -> False, NaN -> True
    elif src_t is pt_e4m3z_s or src_t is pt_e5m2z_s:
        return p.bits != 0                     # one zero; the NaN 0x80 -> True
    else:
        return p[0] != 0


cdef inline float _ld_f32(const src_t* p) noexcept nogil:
    if src_t is pt_bool_s:
        return <float>p.v
    elif src_t is pt_half_s:
        return ptc_half_to_float(p.bits)
    elif src_t is pt_bf16_s:
        return ptc_bf16_to_float(p.bits)
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return <float>p.re
    elif src_t is pt_ch_s:
        return ptc_half_to_float(p.re)
    elif src_t is pt_e4m3_s:
        return ptc_e4m3fn_to_float(p.bits)
    elif src_t is pt_e5m2_s:
        return ptc_e5m2_to_float(p.bits)
    elif src_t is pt_e4m3z_s:
        return ptc_e4m3fnuz_to_float(p.bits)
    elif src_t is pt_e5m2z_s:
        return ptc_e5m2fnuz_to_float(p.bits)
    else:
        return <float>p[0]


cdef inline double _ld_f64(const src_t* p) noexcept nogil:
    if src_t is pt_bool_s:
        return <double>p.v
    elif src_t is pt_half_s:
        return <double>ptc_half_to_float(p.bits)
    elif src_t is pt_bf16_s:
        return <double>ptc_bf16_to_float(p.bits)
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return <double>p.re
    elif src_t is pt_ch_s:
        return <double>ptc_half_to_float(p.re)
    elif src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s or src_t is pt_e5m2z_s:
        return <double>_ld_f32(p)
    else:
        return <double>p[0]


cdef inline float _ld_imag_f32(const src_t* p) noexcept nogil:
    if src_t is pt_cf_s or src_t is pt_cd_s:
        return <float>p.im
    elif src_t is pt_ch_s:
        return ptc_half_to_float(p.im)
    else:
        return 0


cdef inline double _ld_imag_f64(const src_t* p) noexcept nogil:
    if src_t is pt_cf_s or src_t is pt_cd_s:
        return <double>p.im
    elif src_t is pt_ch_s:
        return <double>ptc_half_to_float(p.im)
    else:
        return 0


cdef inline int64_t _ld_i64(const src_t* p) noexcept nogil:
    # floating sources truncate toward zero (C cast); integers widen.
    if src_t is pt_bool_s:
        return <int64_t>p.v
    elif src_t is pt_half_s or src_t is pt_bf16_s or src_t is pt_ch_s \
            or src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s \
            or src_t is pt_e5m2z_s:
        return <int64_t>_ld_f32(p)
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return <int64_t>p.re
    else:
        return <int64_t>p[0]


cdef inline int32_t _ld_i32(const src_t* p) noexcept nogil:
    # As _ld_i64 but through int32: PyTorch's static_cast<int8/16/32_t>(float)
    # (x86: cvtt*2si; out-of-range/NaN -> INT32_MIN), and it vectorises.
    if src_t is pt_bool_s:
        return <int32_t>p.v
    elif src_t is pt_half_s or src_t is pt_bf16_s or src_t is pt_ch_s \
            or src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s \
            or src_t is pt_e5m2z_s:
        return <int32_t>_ld_f32(p)
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return <int32_t>p.re
    else:
        return <int32_t>p[0]


cdef inline uint64_t _ld_u64(const src_t* p) noexcept nogil:
    # floating sources: C's unsigned conversion (x86-64: values >= 2**63 go
    # through x - 2**63; negative ones wrap through int64), as PyTorch
    if src_t is pt_bool_s:
        return <uint64_t>p.v
    elif src_t is pt_half_s or src_t is pt_bf16_s or src_t is pt_ch_s \
            or src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s \
            or src_t is pt_e5m2z_s:
        return _f2u64(<double>_ld_f32(p))
    elif src_t is float or src_t is double:
        return _f2u64(<double>p[0])
    elif src_t is pt_cf_s or src_t is pt_cd_s:
        return _f2u64(<double>p.re)
    else:
        return <uint64_t>p[0]


cdef inline uint64_t _f2u64(double x) noexcept nogil:
    if x >= 9223372036854775808.0:
        return (<uint64_t>_d2i64(x - 9223372036854775808.0)) ^ (<uint64_t>1 << 63)
    return <uint64_t>_d2i64(x)


cdef extern from "ptc_half_rows.h" nogil:
    # contiguous rows of float16/bfloat16 <-> float32, vectorised (same bits)
    void ptc_half_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_half_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_bf16_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_bf16_rows(const void* s, void* d, Py_ssize_t n)


cdef extern from *:
    """
    /* x86's truncating conversions (cvttsd2si): out-of-range and NaN give
       the "integer indefinite" value INT64_MIN / INT32_MIN, as PyTorch's
       kernels get on x86-64, without C's undefined behaviour */
    static inline int64_t ptc_d2i64(double x) {
        if (!(x > -9223372036854775809.0 && x < 9223372036854775808.0)) return INT64_MIN;
        return (int64_t)x;
    }
    static inline int32_t ptc_d2i32(double x) {
        if (!(x > -2147483649.0 && x < 2147483648.0)) return INT32_MIN;
        return (int32_t)x;
    }
    """
    int64_t _d2i64 "ptc_d2i64"(double x) noexcept nogil
    int32_t _d2i32 "ptc_d2i32"(double x) noexcept nogil


cdef inline uint32_t _ld_u32(const src_t* p) noexcept nogil:
    # float/double: PyTorch's vectorised conversion (values >= 2**31 through
    # x - 2**31, the rest through int32); half types go through int64
    cdef double x
    if src_t is pt_bool_s:
        return <uint32_t>p.v
    elif src_t is pt_half_s or src_t is pt_bf16_s or src_t is pt_ch_s \
            or src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s \
            or src_t is pt_e5m2z_s:
        return <uint32_t>_d2i64(<double>_ld_f32(p))
    elif src_t is float or src_t is double or src_t is pt_cf_s or src_t is pt_cd_s:
        if src_t is float or src_t is double:
            x = <double>p[0]
        else:
            x = <double>p.re
        if x >= 2147483648.0:
            return (<uint32_t>_d2i32(x - 2147483648.0)) ^ (<uint32_t>1 << 31)
        return <uint32_t>_d2i32(x)
    else:
        return <uint32_t>p[0]


cdef inline void _cvt(const src_t* s, dst_t* d) noexcept nogil:
    cdef float f
    if src_t is dst_t:
        d[0] = s[0]                                # bit copy
    elif dst_t is pt_bool_s:
        d.v = _ld_nonzero(s)
    elif dst_t is pt_half_s:
        d.bits = ptc_float_to_half(_ld_f32(s))
    elif dst_t is pt_bf16_s:
        if src_t is pt_e4m3_s or src_t is pt_e5m2_s or src_t is pt_e4m3z_s or src_t is pt_e5m2z_s:
            # PyTorch converts a float8 element with BFloat16's scalar constructor:
            # every NaN becomes its canonical 0x7fc0
            f = _ld_f32(s)
            d.bits = 0x7fc0 if f != f else ptc_float_to_bf16(f)
        else:
            d.bits = ptc_float_to_bf16(_ld_f32(s))
    elif dst_t is pt_e4m3_s:
        d.bits = ptc_float_to_e4m3fn(_ld_f32(s))
    elif dst_t is pt_e5m2_s:
        d.bits = ptc_float_to_e5m2(_ld_f32(s))
    elif dst_t is pt_e4m3z_s:
        d.bits = ptc_float_to_e4m3fnuz(_ld_f32(s))
    elif dst_t is pt_e5m2z_s:
        d.bits = ptc_float_to_e5m2fnuz(_ld_f32(s))
    elif dst_t is float:
        d[0] = _ld_f32(s)
    elif dst_t is double:
        d[0] = _ld_f64(s)
    elif dst_t is pt_cf_s:
        d.re = _ld_f32(s)
        d.im = _ld_imag_f32(s)
    elif dst_t is pt_cd_s:
        d.re = _ld_f64(s)
        d.im = _ld_imag_f64(s)
    elif dst_t is pt_ch_s:
        d.re = ptc_float_to_half(_ld_f32(s))
        d.im = ptc_float_to_half(_ld_imag_f32(s))
    elif dst_t is int64_t or dst_t is uint8_t:     # uint8 via int64: -1.0 -> 255
        d[0] = <dst_t>_ld_i64(s)
    elif dst_t is uint64_t:
        d[0] = _ld_u64(s)
    elif dst_t is uint32_t:
        d[0] = _ld_u32(s)
    else:                                          # int8/int16/int32 via int32
        d[0] = <dst_t>_ld_i32(s)


cdef extern from *:
    """
    #include <string.h>
    #include <stddef.h>
    /* d[j] = s[-j], j < n, of isz-byte elements (isz 1, 2, 4 or 8): a row
       copied backwards (flip along a contiguous dim) by 16-byte vectors whose
       lanes are reversed (one shuffle each), the rest element by element */
    typedef unsigned char ptc_rv8 __attribute__((vector_size(16)));
    typedef unsigned short ptc_rv16 __attribute__((vector_size(16)));
    typedef unsigned int ptc_rv32 __attribute__((vector_size(16)));
    typedef unsigned long long ptc_rv64 __attribute__((vector_size(16)));
    #define PTC_REV_LOOP(VT, ET, MASK)                                          \
        { ptrdiff_t j = 0; const ptrdiff_t L = 16 / (ptrdiff_t)sizeof(ET);     \
          for (; j + L <= n; j += L) { VT v;                                   \
              memcpy(&v, s - (j + L - 1) * (ptrdiff_t)sizeof(ET), 16);         \
              v = __builtin_shuffle(v, MASK); memcpy(d + j * (ptrdiff_t)sizeof(ET), &v, 16); } \
          for (; j < n; j++) memcpy(d + j * (ptrdiff_t)sizeof(ET), s - j * (ptrdiff_t)sizeof(ET), sizeof(ET)); }
    static void ptc_copy_reversed(char* d, const char* s, ptrdiff_t n, int isz) {
        if (isz == 4) PTC_REV_LOOP(ptc_rv32, unsigned int, ((ptc_rv32){3, 2, 1, 0}))
        else if (isz == 8) PTC_REV_LOOP(ptc_rv64, unsigned long long, ((ptc_rv64){1, 0}))
        else if (isz == 2) PTC_REV_LOOP(ptc_rv16, unsigned short, ((ptc_rv16){7, 6, 5, 4, 3, 2, 1, 0}))
        else PTC_REV_LOOP(ptc_rv8, unsigned char,
                          ((ptc_rv8){15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}))
    }
    """
    void ptc_copy_reversed(char* d, const char* s, Py_ssize_t n, int isz) nogil


cdef extern from "ptc_transpose.h" nogil:
    # d[i * ds0 + j * isz] = s[i * isz + j * ss1] (isz 4 or 8): transposed
    # tiles by in-register 8x8 (4x4) block transposes
    void ptc_transpose(char* d, const char* s, Py_ssize_t n0, Py_ssize_t n1,
                       Py_ssize_t ds0, Py_ssize_t ss1, int isz)
    int ptc_transpose_vectorised()


# --------------------------------------------------------------------------
# the 2-D kernel: n0 rows of n1 elements, byte strides
# --------------------------------------------------------------------------
ctypedef void (*kern_t)(char* d, const char* s, Py_ssize_t n0, Py_ssize_t n1,
                        Py_ssize_t ds0, Py_ssize_t ds1,
                        Py_ssize_t ss0, Py_ssize_t ss1) noexcept nogil


cdef void _kern(dst_t* d, const src_t* s, Py_ssize_t n0, Py_ssize_t n1,
                Py_ssize_t ds0, Py_ssize_t ds1,
                Py_ssize_t ss0, Py_ssize_t ss1) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef char* dr
    cdef const char* sr
    cdef dst_t* dp
    cdef const src_t* sp
    cdef dst_t tmp
    if ds1 == <Py_ssize_t>sizeof(dst_t) and ss1 == <Py_ssize_t>sizeof(src_t):
        for i in range(n0):
            dp = <dst_t*>((<char*>d) + i * ds0)
            sp = <const src_t*>((<const char*>s) + i * ss0)
            if src_t is dst_t:
                memcpy(dp, sp, <size_t>n1 * sizeof(dst_t))
            elif src_t is pt_half_s and dst_t is float:
                ptc_half_to_float_rows(sp, dp, n1)
            elif src_t is float and dst_t is pt_half_s:
                ptc_float_to_half_rows(sp, dp, n1)
            elif src_t is pt_bf16_s and dst_t is float:
                ptc_bf16_to_float_rows(sp, dp, n1)
            elif src_t is float and dst_t is pt_bf16_s:
                ptc_float_to_bf16_rows(sp, dp, n1)
            else:
                for j in range(n1):
                    _cvt(&sp[j], &dp[j])
    elif ss1 == 0:
        for i in range(n0):
            dr = (<char*>d) + i * ds0
            _cvt(<const src_t*>((<const char*>s) + i * ss0), &tmp)
            if ds1 == <Py_ssize_t>sizeof(dst_t):
                dp = <dst_t*>dr
                for j in range(n1):
                    dp[j] = tmp
            else:
                for j in range(n1):
                    (<dst_t*>(dr + j * ds1))[0] = tmp
    elif src_t is dst_t and ds1 == <Py_ssize_t>sizeof(dst_t) \
            and ss1 == -<Py_ssize_t>sizeof(src_t) and sizeof(src_t) <= 8:
        for i in range(n0):                 # rows read backwards (flip)
            ptc_copy_reversed((<char*>d) + i * ds0, (<const char*>s) + i * ss0, n1,
                              <int>sizeof(src_t))
    elif src_t is dst_t and (sizeof(src_t) == 4 or sizeof(src_t) == 8) \
            and ds1 == <Py_ssize_t>sizeof(dst_t) and ss0 == <Py_ssize_t>sizeof(src_t):
        # a transposed tile (the destination's rows along the source's
        # contiguous dim): the bits moved by in-register block transposes
        ptc_transpose(<char*>d, <const char*>s, n0, n1, ds0, ss1, <int>sizeof(src_t))
    elif ds1 == <Py_ssize_t>sizeof(dst_t):
        for i in range(n0):
            dp = <dst_t*>((<char*>d) + i * ds0)
            sr = (<const char*>s) + i * ss0
            for j in range(n1):
                _cvt(<const src_t*>(sr + j * ss1), &dp[j])
    else:
        for i in range(n0):
            dr = (<char*>d) + i * ds0
            sr = (<const char*>s) + i * ss0
            for j in range(n1):
                _cvt(<const src_t*>(sr + j * ss1), <dst_t*>(dr + j * ds1))


# --------------------------------------------------------------------------
# dispatch table _KERNELS[dst_type][src_type], filled once at import
# --------------------------------------------------------------------------
cdef kern_t _KERNELS[PT_NUM_TYPES][PT_NUM_TYPES]
cdef Py_ssize_t _ITEMSIZE[PT_NUM_TYPES]


cdef inline int _type_num(dst_t* tag) noexcept nogil:
    # compile-time map storage type -> ScalarType number
    if dst_t is pt_bool_s:
        return PT_BOOL
    elif dst_t is uint8_t:
        return PT_UINT8
    elif dst_t is int8_t:
        return PT_INT8
    elif dst_t is int16_t:
        return PT_INT16
    elif dst_t is int32_t:
        return PT_INT32
    elif dst_t is int64_t:
        return PT_INT64
    elif dst_t is pt_half_s:
        return PT_FLOAT16
    elif dst_t is pt_bf16_s:
        return PT_BFLOAT16
    elif dst_t is float:
        return PT_FLOAT32
    elif dst_t is double:
        return PT_FLOAT64
    elif dst_t is pt_cf_s:
        return PT_COMPLEX64
    elif dst_t is pt_cd_s:
        return PT_COMPLEX128
    elif dst_t is uint16_t:
        return PT_UINT16
    elif dst_t is uint32_t:
        return PT_UINT32
    elif dst_t is uint64_t:
        return PT_UINT64
    elif dst_t is pt_e4m3_s:
        return PT_FLOAT8_E4M3FN
    elif dst_t is pt_e5m2_s:
        return PT_FLOAT8_E5M2
    elif dst_t is pt_e4m3z_s:
        return PT_FLOAT8_E4M3FNUZ
    elif dst_t is pt_e5m2z_s:
        return PT_FLOAT8_E5M2FNUZ
    else:
        return PT_COMPLEX32


cdef void _register_dst(dst_t* tag) noexcept nogil:
    cdef int t = _type_num(tag)
    _ITEMSIZE[t] = sizeof(dst_t)
    _KERNELS[t][<int>PT_BOOL] = <kern_t>_kern[dst_t, pt_bool_s]
    _KERNELS[t][<int>PT_UINT8] = <kern_t>_kern[dst_t, uint8_t]
    _KERNELS[t][<int>PT_INT8] = <kern_t>_kern[dst_t, int8_t]
    _KERNELS[t][<int>PT_INT16] = <kern_t>_kern[dst_t, int16_t]
    _KERNELS[t][<int>PT_INT32] = <kern_t>_kern[dst_t, int32_t]
    _KERNELS[t][<int>PT_INT64] = <kern_t>_kern[dst_t, int64_t]
    _KERNELS[t][<int>PT_FLOAT16] = <kern_t>_kern[dst_t, pt_half_s]
    _KERNELS[t][<int>PT_BFLOAT16] = <kern_t>_kern[dst_t, pt_bf16_s]
    _KERNELS[t][<int>PT_FLOAT32] = <kern_t>_kern[dst_t, float]
    _KERNELS[t][<int>PT_FLOAT64] = <kern_t>_kern[dst_t, double]
    _KERNELS[t][<int>PT_COMPLEX64] = <kern_t>_kern[dst_t, pt_cf_s]
    _KERNELS[t][<int>PT_COMPLEX128] = <kern_t>_kern[dst_t, pt_cd_s]
    _KERNELS[t][<int>PT_COMPLEX32] = <kern_t>_kern[dst_t, pt_ch_s]
    _KERNELS[t][<int>PT_UINT16] = <kern_t>_kern[dst_t, uint16_t]
    _KERNELS[t][<int>PT_UINT32] = <kern_t>_kern[dst_t, uint32_t]
    _KERNELS[t][<int>PT_UINT64] = <kern_t>_kern[dst_t, uint64_t]
    _KERNELS[t][<int>PT_FLOAT8_E4M3FN] = <kern_t>_kern[dst_t, pt_e4m3_s]
    _KERNELS[t][<int>PT_FLOAT8_E5M2] = <kern_t>_kern[dst_t, pt_e5m2_s]
    _KERNELS[t][<int>PT_FLOAT8_E4M3FNUZ] = <kern_t>_kern[dst_t, pt_e4m3z_s]
    _KERNELS[t][<int>PT_FLOAT8_E5M2FNUZ] = <kern_t>_kern[dst_t, pt_e5m2z_s]


_register_dst(<pt_bool_s*>NULL)
_register_dst(<uint8_t*>NULL)
_register_dst(<int8_t*>NULL)
_register_dst(<int16_t*>NULL)
_register_dst(<int32_t*>NULL)
_register_dst(<int64_t*>NULL)
_register_dst(<pt_half_s*>NULL)
_register_dst(<pt_bf16_s*>NULL)
_register_dst(<float*>NULL)
_register_dst(<double*>NULL)
_register_dst(<pt_cf_s*>NULL)
_register_dst(<pt_cd_s*>NULL)
_register_dst(<pt_ch_s*>NULL)
_register_dst(<uint16_t*>NULL)
_register_dst(<uint32_t*>NULL)
_register_dst(<uint64_t*>NULL)
_register_dst(<pt_e4m3_s*>NULL)
_register_dst(<pt_e5m2_s*>NULL)
_register_dst(<pt_e4m3z_s*>NULL)
_register_dst(<pt_e5m2z_s*>NULL)


# --------------------------------------------------------------------------
# planning: reduce dims, choose tiling and the parallel split
# --------------------------------------------------------------------------
cdef enum:
    # Tiles for transposed copies: _TILE_ROWS destination rows (walking along
    # source cache lines) x _TILE_COLS destination columns (= distinct source
    # rows).  Only 8 source rows are live at a time, so even power-of-two
    # strides (all lines in one L1 set) stay within the cache's associativity;
    # measured best on 4096^2 uint8/int16/float32/complex128 transposes.
    _TILE_ROWS = 128
    _TILE_COLS = 8
    _COL_ALIGN = 256     # column split granularity (elements)
    _MIN_TILE_STRIDE = 64  # src inner stride (bytes) from which tiling pays
    # Tiles of the block transposes (ptc_transpose.h, 4- and 8-byte elements
    # of one type whose tile rows run along the source's contiguous dim): 16
    # destination rows x 32 columns, measured best among 8-128 x 8-64 on
    # 1000^2, 1024^2 and 2048^2 float32/float64 (2-4x faster than the 128 x 8
    # element tiles on 1000^2; power-of-two strides gain least)
    _VTILE_ROWS = 16
    _VTILE_COLS = 32

ctypedef struct _plan_t:
    kern_t fn
    char* dst
    const char* src
    int nd                       # >= 2; dims 0..nd-3 = planes, nd-2 rows, nd-1 cols
    bint tiled
    Py_ssize_t tile_rows, tile_cols
    Py_ssize_t rows              # prod(shp[0..nd-2])
    Py_ssize_t row_chunk         # rows per work item (row split)
    Py_ssize_t ncolsplit         # > 1: every row is split in ncolsplit items
    Py_ssize_t col_chunk
    Py_ssize_t shp[PT_MAX_DIMS]
    Py_ssize_t ds[PT_MAX_DIMS]
    Py_ssize_t ss[PT_MAX_DIMS]


cdef inline Py_ssize_t _abs(Py_ssize_t x) noexcept nogil:
    return -x if x < 0 else x


cdef void _segment(const _plan_t* p, char* d, const char* s, Py_ssize_t nrows,
                   Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    """Rows [0, nrows) x cols [c0, c1) of one plane, starting at d/s."""
    cdef int nd = p.nd
    cdef Py_ssize_t ds0 = p.ds[nd - 2], ds1 = p.ds[nd - 1]
    cdef Py_ssize_t ss0 = p.ss[nd - 2], ss1 = p.ss[nd - 1]
    cdef Py_ssize_t rb, cb, nr, nc
    if not p.tiled:
        p.fn(d + c0 * ds1, s + c0 * ss1, nrows, c1 - c0, ds0, ds1, ss0, ss1)
        return
    rb = 0
    while rb < nrows:
        nr = nrows - rb
        if nr > p.tile_rows:
            nr = p.tile_rows
        cb = c0
        while cb < c1:
            nc = c1 - cb
            if nc > p.tile_cols:
                nc = p.tile_cols
            p.fn(d + rb * ds0 + cb * ds1, s + rb * ss0 + cb * ss1,
                 nr, nc, ds0, ds1, ss0, ss1)
            cb += nc
        rb += nr


cdef void _run_rows(const _plan_t* p, Py_ssize_t r0, Py_ssize_t r1,
                    Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    """Global rows [r0, r1) (over dims 0..nd-2), columns [c0, c1)."""
    cdef int nd = p.nd
    cdef int k
    cdef Py_ssize_t R = p.shp[nd - 2]
    cdef Py_ssize_t plane = r0 // R
    cdef Py_ssize_t row = r0 - plane * R
    cdef Py_ssize_t cnt, q
    cdef Py_ssize_t idx[PT_MAX_DIMS]
    cdef Py_ssize_t doff = 0, soff = 0
    k = nd - 3
    while k >= 0:
        q = plane % p.shp[k]
        plane = plane // p.shp[k]
        idx[k] = q
        doff += q * p.ds[k]
        soff += q * p.ss[k]
        k -= 1
    while r0 < r1:
        cnt = R - row
        if cnt > r1 - r0:
            cnt = r1 - r0
        _segment(p, p.dst + doff + row * p.ds[nd - 2],
                 p.src + soff + row * p.ss[nd - 2], cnt, c0, c1)
        r0 += cnt
        row = 0
        k = nd - 3
        while k >= 0:
            idx[k] += 1
            doff += p.ds[k]
            soff += p.ss[k]
            if idx[k] < p.shp[k]:
                break
            doff -= p.ds[k] * p.shp[k]
            soff -= p.ss[k] * p.shp[k]
            idx[k] = 0
            k -= 1


cdef void _run_item(const _plan_t* p, Py_ssize_t item) noexcept nogil:
    cdef Py_ssize_t L = p.shp[p.nd - 1]
    cdef Py_ssize_t r, c0, c1, r1
    if p.ncolsplit > 1:
        r = item // p.ncolsplit
        c0 = (item - r * p.ncolsplit) * p.col_chunk
        c1 = c0 + p.col_chunk
        if c1 > L:
            c1 = L
        if c0 < c1:
            _run_rows(p, r, r + 1, c0, c1)
    else:
        r = item * p.row_chunk
        r1 = r + p.row_chunk
        if r1 > p.rows:
            r1 = p.rows
        if r < r1:
            _run_rows(p, r, r1, 0, L)


cdef int _execute(char* dst, int dst_type, const Py_ssize_t* dst_strides,
                  const char* src, int src_type, const Py_ssize_t* src_strides,
                  const Py_ssize_t* shape, int ndim) noexcept nogil:
    cdef _plan_t plan
    cdef _plan_t* p = &plan
    cdef int i, j, k, n = 0
    cdef Py_ssize_t numel = 1, dst_i, src_i, shp_i, t
    cdef Py_ssize_t nitems, nthreads, it, L, best
    if dst_type < 0 or dst_type >= PT_NUM_TYPES or src_type < 0 or src_type >= PT_NUM_TYPES:
        return -1
    if ndim < 0 or ndim > PT_MAX_DIMS:
        return -1
    for i in range(ndim):
        if shape[i] == 0:
            return 0
        numel *= shape[i]

    # 1. drop size-1 dims, make destination strides non-negative, insert
    #    sorted by destination stride (descending; stable).
    for i in range(ndim):
        shp_i = shape[i]
        if shp_i == 1:
            continue
        dst_i = dst_strides[i]
        src_i = src_strides[i]
        if dst_i < 0:
            dst += dst_i * (shp_i - 1)
            src += src_i * (shp_i - 1)
            dst_i = -dst_i
            src_i = -src_i
        j = n
        while j > 0 and p.ds[j - 1] < dst_i:
            p.shp[j] = p.shp[j - 1]
            p.ds[j] = p.ds[j - 1]
            p.ss[j] = p.ss[j - 1]
            j -= 1
        p.shp[j] = shp_i
        p.ds[j] = dst_i
        p.ss[j] = src_i
        n += 1

    # 2. coalesce dims that are contiguous for both operands.
    j = 0
    for i in range(n):
        if j > 0 and p.ds[j - 1] == p.ds[i] * p.shp[i] and p.ss[j - 1] == p.ss[i] * p.shp[i]:
            p.shp[j - 1] *= p.shp[i]
            p.ds[j - 1] = p.ds[i]
            p.ss[j - 1] = p.ss[i]
        else:
            p.shp[j] = p.shp[i]
            p.ds[j] = p.ds[i]
            p.ss[j] = p.ss[i]
            j += 1
    n = j

    # 3. pad to >= 2 dims (rows x cols).
    while n < 2:
        for i in range(n, 0, -1):
            p.shp[i] = p.shp[i - 1]
            p.ds[i] = p.ds[i - 1]
            p.ss[i] = p.ss[i - 1]
        p.shp[0] = 1
        p.ds[0] = 0
        p.ss[0] = 0
        n += 1
    p.nd = n
    p.dst = dst
    p.src = src
    p.fn = _KERNELS[dst_type][src_type]

    # 4. transposed source: the source's smallest stride is not on the
    #    destination's inner dim -> move that dim next to the inner one and
    #    copy in cache-blocked tiles.
    p.tiled = False
    if _abs(p.ss[n - 1]) >= _MIN_TILE_STRIDE:
        k = -1
        best = _abs(p.ss[n - 1])
        for i in range(n - 1):
            t = _abs(p.ss[i])
            if t != 0 and t < best and p.shp[i] >= 4:
                best = t
                k = i
        if k >= 0:
            shp_i = p.shp[k]
            dst_i = p.ds[k]
            src_i = p.ss[k]
            for i in range(k, n - 2):
                p.shp[i] = p.shp[i + 1]
                p.ds[i] = p.ds[i + 1]
                p.ss[i] = p.ss[i + 1]
            p.shp[n - 2] = shp_i
            p.ds[n - 2] = dst_i
            p.ss[n - 2] = src_i
            p.tiled = p.shp[n - 1] >= 4
    p.tile_rows = _TILE_ROWS
    p.tile_cols = _TILE_COLS
    t = _ITEMSIZE[dst_type]
    if p.tiled and dst_type == src_type and (t == 4 or t == 8) and p.ds[n - 1] == t \
            and p.ss[n - 2] == t and ptc_transpose_vectorised():
        p.tile_rows = _VTILE_ROWS
        p.tile_cols = _VTILE_COLS

    p.rows = 1
    for i in range(n - 1):
        p.rows *= p.shp[i]
    L = p.shp[n - 1]

    # 5. parallel split.
    nthreads = team_for(numel)
    if nthreads <= 1:
        _run_rows(p, 0, p.rows, 0, L)
        return 0
    if p.rows % nthreads == 0 or p.rows >= 8 * nthreads or L < 2 * _COL_ALIGN:
        # contiguous blocks of rows, one per thread
        p.ncolsplit = 1
        p.row_chunk = (p.rows + nthreads - 1) // nthreads
        nitems = (p.rows + p.row_chunk - 1) // p.row_chunk
    else:
        # few rows (e.g. one long row): every row is cut in nthreads pieces
        p.col_chunk = (L + nthreads - 1) // nthreads
        p.col_chunk = (p.col_chunk + _COL_ALIGN - 1) // _COL_ALIGN * _COL_ALIGN
        p.ncolsplit = (L + p.col_chunk - 1) // p.col_chunk
        p.row_chunk = 1
        nitems = p.rows * p.ncolsplit
    for it in prange(nitems, num_threads=nthreads, schedule='static'):
        _run_item(p, it)
    return 0


# --------------------------------------------------------------------------
# public C API
# --------------------------------------------------------------------------
cdef int copy_cast(char* dst, int dst_type, const Py_ssize_t* dst_strides,
                   const char* src, int src_type, const Py_ssize_t* src_strides,
                   const Py_ssize_t* shape, int ndim) noexcept nogil:
    return _execute(dst, dst_type, dst_strides, src, src_type, src_strides, shape, ndim)


cdef extern from *:
    """
    #include <string.h>
    #include <stddef.h>
    /* nbytes bytes at p from the 64-byte pattern pat repeated: constant-size
       copies, so vector stores (32-byte ones in the AVX2 copy) */
    typedef char ptc_fill_v32 __attribute__((vector_size(32)));
    #define PTC_FILL_PATTERN_BODY                                              \
        ptc_fill_v32 a, b;         /* (in registers: p cannot alias them) */   \
        ptrdiff_t k = 0;                                                       \
        memcpy(&a, pat, 32); memcpy(&b, pat + 32, 32);                         \
        for (; k + 64 <= nbytes; k += 64) {                                    \
            memcpy(p + k, &a, 32); memcpy(p + k + 32, &b, 32); }               \
        memcpy(p + k, pat, (size_t)(nbytes - k));
    static void ptc_fill_pattern_base(char* p, ptrdiff_t nbytes, const char* pat) {
        PTC_FILL_PATTERN_BODY }
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("avx2")))
    static void ptc_fill_pattern_avx2(char* p, ptrdiff_t nbytes, const char* pat) {
        PTC_FILL_PATTERN_BODY }
    static void ptc_fill_pattern(char* p, ptrdiff_t nbytes, const char* pat) {
        static int avx2 = -1;
        if (avx2 < 0) { __builtin_cpu_init(); avx2 = __builtin_cpu_supports("avx2") != 0; }
        if (avx2) ptc_fill_pattern_avx2(p, nbytes, pat); else ptc_fill_pattern_base(p, nbytes, pat);
    }
    #else
    #define ptc_fill_pattern ptc_fill_pattern_base
    #endif
    """
    void ptc_fill_pattern(char* p, Py_ssize_t nbytes, const char* pat) nogil


cdef void _fill_bytes(char* p, Py_ssize_t nbytes, const char* pat) noexcept nogil:
    """``nbytes`` bytes at ``p`` from the 64-byte pattern ``pat`` repeated
    (memset when its bytes are all equal: zero_())."""
    cdef Py_ssize_t k
    for k in range(1, 64):
        if pat[k] != pat[0]:
            break
    else:
        memset(p, pat[0], <size_t>nbytes)
        return
    ptc_fill_pattern(p, nbytes, pat)


cdef bint _fill_contiguous(char* dst, Py_ssize_t isz, const Py_ssize_t* strides,
                           const Py_ssize_t* shape, int ndim, const char* value) noexcept nogil:
    """The fill of a C-contiguous destination as repeated 64-byte stores of
    the value's pattern (the strided copy loop wrote it element by element,
    at about half the bandwidth); False when the destination is not
    contiguous."""
    cdef Py_ssize_t n = 1, want = isz, nbytes, part, lo, hi
    cdef int d, nthreads, t
    cdef char pat[64]
    for d in range(ndim - 1, -1, -1):
        if shape[d] != 1 and strides[d] != want:
            return False
        want *= shape[d]
        n *= shape[d]
    if isz <= 0 or 64 % isz != 0:
        return False
    lo = 0
    while lo < 64:
        memcpy(pat + lo, value, <size_t>isz)
        lo += isz
    nbytes = n * isz
    nthreads = team_for(n)
    if nthreads <= 1:
        _fill_bytes(dst, nbytes, pat)
        return True
    # (pieces of at least nbytes / nthreads, rounded up to start on pattern boundaries)
    part = ((nbytes + nthreads - 1) // nthreads + 63) // 64 * 64
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        lo = t * part
        hi = lo + part if lo + part < nbytes else nbytes
        if lo < hi:
            _fill_bytes(dst + lo, hi - lo, pat)
    return True


cdef int fill(char* dst, int dst_type, const Py_ssize_t* dst_strides,
              const Py_ssize_t* shape, int ndim, const char* value) noexcept nogil:
    cdef Py_ssize_t zeros[PT_MAX_DIMS]
    cdef pt_cd_s buf                      # aligned copy of the value
    cdef int i
    if ndim < 0 or ndim > PT_MAX_DIMS or dst_type < 0 or dst_type >= PT_NUM_TYPES:
        return -1
    if _fill_contiguous(dst, _ITEMSIZE[dst_type], dst_strides, shape, ndim, value):
        return 0
    for i in range(ndim):
        zeros[i] = 0
    memcpy(&buf, value, <size_t>_ITEMSIZE[dst_type])
    return _execute(dst, dst_type, dst_strides, <const char*>&buf, dst_type,
                    zeros, shape, ndim)


# --------------------------------------------------------------------------
# Python-visible test hooks
# --------------------------------------------------------------------------
# every type number by name (bfloat16 has no NumPy dtype: pass uint16 arrays
# with an explicit type number to the hooks)
_TYPE_NUMBERS = {
    "bool": <int>PT_BOOL, "uint8": <int>PT_UINT8, "int8": <int>PT_INT8,
    "int16": <int>PT_INT16, "int32": <int>PT_INT32, "int64": <int>PT_INT64,
    "float16": <int>PT_FLOAT16, "bfloat16": <int>PT_BFLOAT16,
    "float32": <int>PT_FLOAT32, "float64": <int>PT_FLOAT64,
    "complex64": <int>PT_COMPLEX64, "complex128": <int>PT_COMPLEX128,
    "complex32": <int>PT_COMPLEX32, "uint16": <int>PT_UINT16, "uint32": <int>PT_UINT32,
    "uint64": <int>PT_UINT64, "float8_e4m3fn": <int>PT_FLOAT8_E4M3FN,
    "float8_e5m2": <int>PT_FLOAT8_E5M2, "float8_e4m3fnuz": <int>PT_FLOAT8_E4M3FNUZ,
    "float8_e5m2fnuz": <int>PT_FLOAT8_E5M2FNUZ,
}
# buffer-protocol format code (native order) -> type number
_FORMAT_TYPES = {
    b"?": <int>PT_BOOL, b"B": <int>PT_UINT8, b"b": <int>PT_INT8,
    b"e": <int>PT_FLOAT16, b"f": <int>PT_FLOAT32, b"d": <int>PT_FLOAT64,
    b"Zf": <int>PT_COMPLEX64, b"Zd": <int>PT_COMPLEX128,
}
_SIGNED_BY_SIZE = {2: <int>PT_INT16, 4: <int>PT_INT32, 8: <int>PT_INT64}


cdef int _buffer_type(const Py_buffer* view, override) except -2:
    """Type number of a buffer: its format, or ``override`` when given (an
    out-of-range override is passed through for copy_cast to reject)."""
    cdef int t
    if override is not None:
        t = override
        if t < 0 or t >= PT_NUM_TYPES:
            return -1
    else:
        fmt = (<bytes>view.format).lstrip(b"@=")
        if fmt in _FORMAT_TYPES:
            t = _FORMAT_TYPES[fmt]
        elif fmt in (b"h", b"i", b"l", b"q") and view.itemsize in _SIGNED_BY_SIZE:
            t = _SIGNED_BY_SIZE[view.itemsize]
        else:
            raise TypeError(f"unsupported buffer format {fmt!r}")
    if view.itemsize != _ITEMSIZE[t]:
        raise TypeError(f"itemsize {view.itemsize} does not match type number {t}")
    return t


def _itemsize(int type_num):
    if type_num < 0 or type_num >= PT_NUM_TYPES:
        raise ValueError(type_num)
    return _ITEMSIZE[type_num]


def _copy_cast_arrays(dst, src, dst_type=None, src_type=None):
    """copy_cast(dst <- src) on two NumPy arrays (any buffer exporter); src
    must already have dst's shape (np.broadcast_to).

    ``dst_type``/``src_type`` override the type number derived from the
    dtype (e.g. a uint16 array holding bfloat16 bits)."""
    cdef Py_buffer dv, sv
    cdef Py_ssize_t zeros[PT_MAX_DIMS]
    cdef int dt, st, rc = 0, i
    PyObject_GetBuffer(dst, &dv, PyBUF_RECORDS)
    try:
        PyObject_GetBuffer(src, &sv, PyBUF_RECORDS_RO)
        try:
            if dv.ndim != sv.ndim or any(dv.shape[i] != sv.shape[i] for i in range(dv.ndim)):
                raise ValueError(f"shape mismatch {dst.shape} vs {src.shape}")
            dt = _buffer_type(&dv, dst_type)
            st = _buffer_type(&sv, src_type)
            for i in range(dv.ndim):
                zeros[i] = 0
            with nogil:
                rc = copy_cast(<char*>dv.buf, dt, dv.strides if dv.ndim else zeros,
                               <const char*>sv.buf, st, sv.strides if sv.ndim else zeros,
                               dv.shape if dv.ndim else zeros, dv.ndim)
        finally:
            PyBuffer_Release(&sv)
    finally:
        PyBuffer_Release(&dv)
    if rc != 0:
        raise ValueError(f"copy_cast failed (types {dt}, {st})")


def _fill_array(dst, value_bytes, dst_type=None):
    """fill(dst, value) with value_bytes = one element encoded in dst's type."""
    cdef Py_buffer dv
    cdef Py_ssize_t zeros[PT_MAX_DIMS]
    cdef int dt, rc = 0
    cdef bytes val = bytes(value_bytes)
    cdef const char* vp = val
    PyObject_GetBuffer(dst, &dv, PyBUF_RECORDS)
    try:
        dt = _buffer_type(&dv, dst_type)
        if dt >= 0 and len(val) != _ITEMSIZE[dt]:
            raise ValueError(f"value has {len(val)} bytes, expected {_ITEMSIZE[dt]}")
        with nogil:
            rc = fill(<char*>dv.buf, dt, dv.strides if dv.ndim else zeros,
                      dv.shape if dv.ndim else zeros, dv.ndim, vp)
    finally:
        PyBuffer_Release(&dv)
    if rc != 0:
        raise ValueError(f"fill failed (type {dt})")
