# Shared C-level type contract for ptcore's kernels.
#
# ``ScalarType`` numbers are the single source of truth for dtypes at the C
# level: ``ptcore.dtype.num`` carries the same number, every kernel dispatch
# table is indexed by it.  float16/bfloat16 are stored as raw 16-bit patterns
# (``ptc_half``/``ptc_bf16``) and converted through ``ptc_half.h``; complex32
# is a pair of float16 patterns (real, imag); the float8 types are raw bytes converted
# through ``ptc_fp8.h``.
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t

cdef extern from "ptc_half.h" nogil:
    ctypedef uint16_t ptc_half
    ctypedef uint16_t ptc_bf16
    float ptc_half_to_float(uint16_t h)
    uint16_t ptc_float_to_half(float f)
    float ptc_bf16_to_float(uint16_t b)
    uint16_t ptc_float_to_bf16(float f)

cdef extern from "ptc_fp8.h" nogil:
    # the 8-bit floating formats, stored as raw bytes (PyTorch's conversions)
    uint8_t ptc_float_to_e4m3fn(float f)
    uint8_t ptc_float_to_e5m2(float f)
    uint8_t ptc_float_to_e4m3fnuz(float f)
    uint8_t ptc_float_to_e5m2fnuz(float f)
    float ptc_e4m3fn_to_float(uint8_t c)
    float ptc_e5m2_to_float(uint8_t c)
    float ptc_e4m3fnuz_to_float(uint8_t c)
    float ptc_e5m2fnuz_to_float(uint8_t c)

cdef enum ScalarType:
    PT_BOOL = 0
    PT_UINT8 = 1
    PT_INT8 = 2
    PT_INT16 = 3
    PT_INT32 = 4
    PT_INT64 = 5
    PT_FLOAT16 = 6
    PT_BFLOAT16 = 7
    PT_FLOAT32 = 8
    PT_FLOAT64 = 9
    PT_COMPLEX64 = 10
    PT_COMPLEX128 = 11
    PT_COMPLEX32 = 12      # ComplexHalf: two float16 (after the others so
                           # that range checks FLOAT32..COMPLEX128 keep meaning BLAS types)
    # PyTorch's limited unsigned types (creation, copy/cast, comparison,
    # bitwise ops; most kernels raise NotImplementedError for them)
    PT_UINT16 = 13
    PT_UINT32 = 14
    PT_UINT64 = 15
    # PyTorch's 8-bit floating types: creation, copy/cast, view, indexing, cat, eq, abs,
    # isnan; no arithmetic (most kernels raise NotImplementedError for them)
    PT_FLOAT8_E4M3FN = 16
    PT_FLOAT8_E5M2 = 17
    PT_FLOAT8_E4M3FNUZ = 18
    PT_FLOAT8_E5M2FNUZ = 19
    PT_NUM_TYPES = 20

# Largest number of dimensions a tensor may have (as NumPy).
cdef enum:
    PT_MAX_DIMS = 64
