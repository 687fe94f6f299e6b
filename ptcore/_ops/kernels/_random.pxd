# Counter-based random kernels (Philox4x32-10); see _random.pyx for the exact
# element -> (counter, word) mapping every kernel uses.
#
# Generator state is (seed, offset), both uint64.  Block q of a call is
#     philox4x32_10(ctr = (lo32(offset + q), hi32(offset + q), 0, 0),
#                   key = (lo32(seed), hi32(seed)))
# and every kernel returns the new offset = offset + blocks consumed (mod 2^64),
# which the caller stores.  Outputs are CONTIGUOUS (n elements at ``dst``);
# ``dst_type`` is a ptcore._ops.kernels._types.ScalarType number.  Element values
# never depend on the thread count.
#
# The kernels never raise: an unsupported ``dst_type`` (or n <= 0) writes
# nothing and returns ``offset`` unchanged, so callers validate first (the
# ``*_addr`` Python wrappers do).
from libc.stdint cimport uint32_t, uint64_t, int64_t

# The bare block function: out = Philox4x32-10(ctr[0..3], key[0..1]).
cdef void philox4x32_10(const uint32_t* ctr, const uint32_t* key, uint32_t* out) noexcept nogil

# float16/bfloat16/float32/float64/complex64/complex128; values in [low, high)
# (complex: real and imag each).  Requires low <= high, high - low finite.
cdef uint64_t fill_uniform(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                           uint64_t offset, double low, double high) noexcept nogil

# Same dtypes; N(mean, std^2).  Complex: real and imag each N(mean, std^2/2).
cdef uint64_t fill_normal(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                          uint64_t offset, double mean, double std) noexcept nogil

# Integers uniform in [low, high) (requires low < high) into bool, every
# integer type and the real float types; the value is C-cast to the dtype.
cdef uint64_t fill_randint(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                           uint64_t offset, int64_t low, int64_t high) noexcept nogil

# 0/1 into any non-complex dtype; element i is 1 with probability p[i*p_stride]
# (p_stride in elements; 0 = one scalar probability).
cdef uint64_t fill_bernoulli(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                             uint64_t offset, const double* p,
                             Py_ssize_t p_stride) noexcept nogil

# float16/bfloat16/float32/float64: Exp(lambd) (density lambd*exp(-lambd*x)).
cdef uint64_t fill_exponential(char* dst, int dst_type, Py_ssize_t n, uint64_t seed,
                               uint64_t offset, double lambd) noexcept nogil

# Uniformly random permutation of 0..n-1.  Needs O(n / 2^13) scratch memory;
# if that cannot be allocated every dst entry is set to -1 and ``offset`` is
# returned (``*err`` = 1 in the checked variant, else 0; err may be NULL).
cdef uint64_t randperm(int64_t* dst, Py_ssize_t n, uint64_t seed,
                       uint64_t offset) noexcept nogil
cdef uint64_t randperm_checked(int64_t* dst, Py_ssize_t n, uint64_t seed,
                               uint64_t offset, int* err) noexcept nogil

# out: rows x num_samples int64 (C order); probs: rows x cats float64 (C order),
# non-negative with a positive finite sum per row (caller validates; without
# replacement also num_samples <= cats).  Allocation failure: out filled with
# -1, ``offset`` returned, ``*err`` = 1 (checked variant).
cdef uint64_t multinomial(int64_t* out, const double* probs, Py_ssize_t rows,
                          Py_ssize_t cats, Py_ssize_t num_samples, bint replacement,
                          uint64_t seed, uint64_t offset) noexcept nogil
cdef uint64_t multinomial_checked(int64_t* out, const double* probs, Py_ssize_t rows,
                                  Py_ssize_t cats, Py_ssize_t num_samples,
                                  bint replacement, uint64_t seed, uint64_t offset,
                                  int* err) noexcept nogil
