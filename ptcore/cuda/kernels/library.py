"""CUDA kernel sources for ptcore's device op library (generated, header-free).

Every kernel is ``extern "C" __global__`` with a deterministic name that is
unique per (family, op, dtypes, variant).  A program is the prelude
(:data:`ptcore.cuda.kernels.prelude.PRELUDE`) followed by any set of kernel bodies
(:func:`program_source`), compiled to a cubin by
:func:`ptcore.cuda.driver.compiler.compile`.  Nothing here needs CUDA: it only builds
strings.

Dtypes and C types
------------------
=========  ====  ====================  ===============  ====================
dtype      tag   storage (C type)      compute type     notes
=========  ====  ====================  ===============  ====================
bool       b     unsigned char (0/1)   bool
uint8      u8    unsigned char         unsigned char
int8       i8    signed char           signed char
int16      i16   short                 short
int32      i32   int                   int
int64      i64   long long             long long
float16    f16   struct ptc_half       float            2 bytes, IEEE binary16
bfloat16   bf16  struct ptc_bfloat16   float            2 bytes
float32    f32   float                 float
float64    f64   double                double
=========  ====  ====================  ===============  ====================

float16/bfloat16 are loaded to float32, computed in float32 and rounded back
(round to nearest even), as PyTorch does.  complex64 (c64) / complex128 (c128):
see :mod:`ptcore.cuda.kernels.complex`.

Kernel parameter ABI (what ``cuLaunchKernel``'s ``kernelParams`` must point at)
-------------------------------------------------------------------------------
All integers below are ``long long`` (int64) unless noted; pointers are device
addresses (8 bytes); strides are in **elements**, never bytes.  Structs are
passed by value; their exact layouts (natural alignment, no hidden padding
beyond what is shown) are::

    struct ptc_params {             // 40 bytes, align 8
        double d0, d1, d2;          // offsets 0, 8, 16
        long long i0, i1;           // offsets 24, 32
    };
    template <int K> struct ptc_strided {   // 8 + 64 + 64*K bytes, align 8
        long long ndim;                     // 1 <= ndim <= MAX_DIMS (8)
        long long sizes[8];                 // dim 0 outermost, ndim-1 innermost
        long long strides[K][8];            // strides[k][d]: operand k, dim d
    };

In ``ptc_strided`` operand 0 is always the output, then the inputs in
parameter order; unused trailing dims are ignored (leave them 0).  Element
``i`` (``0 <= i < n``, C order over ``sizes``) of operand ``k`` is at
``ptr_k + sum_d coord_d(i) * strides[k][d]``; a stride of 0 broadcasts.

Families (``T`` = storage type of the kernel's dtype, ``B`` = unsigned char):

* **unary** ``ptc_unary_<op>_<tag>_<c|s>`` (also ``cast``):
  ``(n, OUT* out, const T* x, ptc_params p)`` -- contiguous variant ``c``;
  ``(n, OUT* out, const T* x, ptc_params p, ptc_strided<2> ix)`` -- strided
  variant ``s``.  ``OUT`` is ``T``, or ``B`` (bool) for predicates.
* **cast** ``ptc_cast_<src>_<dst>_<c|s>``: as unary with ``OUT`` = dst
  storage and ``x`` of src storage (src == dst is the plain copy).
* **binary** ``ptc_binary_<op>_<tag>_<c|s>``:
  ``(n, OUT* out, const T* x, const T* y, ptc_params p[, ptc_strided<3> ix])``.
  Comparisons and logical ops write ``B``.  ``masked_fill`` takes
  ``y`` as ``const B* mask``; ``add_alpha`` reads alpha from ``p.d0``
  (floats) or ``p.i0`` (integers).
* **scalar** ``ptc_scalar_<op>_<tag>_<c|s>`` (add, sub, rsub = y - x,
  mul, div, rdiv = y / x): as unary, with the second operand a number in ``p.d0``
  (floats) or ``p.i0`` (integers, bool) rounded to the dtype as a fill
  would round it.
* **ternary** ``ptc_ternary_<op>_<tag>_<c|s>``:
  ``(n, T* out, const A* a, const T* b, const T* c, ptc_params p[, ptc_strided<4> ix])``
  with ``A`` = ``B`` for ``where(cond, x, y)`` and ``T`` otherwise
  (``clamp(x, lo, hi)``, ``lerp(x, end, w)``, ``addcmul/addcdiv(x, t1, t2)``
  with value in ``p.d0``/``p.i0``).
* **reduce** ``ptc_reduce_<op>_<in>_<out>_<c|s>``: one output per row of
  ``L`` reduced elements, ``M`` rows.
  ``(M, L, OUT* out, const T* in, ptc_params p)`` -- ``c``: row ``r`` is
  ``in[r*L : (r+1)*L]``, result at ``out[r]``;
  ``(M, L, OUT* out, const T* in, ptc_params p, ptc_strided<2> ix, long long in_red_stride)``
  -- ``s``: ``ix`` (``n`` = ``M``) gives the offsets of output ``r`` and of
  reduced element 0 of its row (operands out, in); element ``j`` is at
  ``+ j*in_red_stride``.  Launch: ``blockDim.x`` a multiple of 32, at most
  1024; any grid (blocks loop over rows).  Parameters: ``var``/``std``
  correction in ``p.d0``; ``norm_p`` order in ``p.d0``.
  ``ptc_reduce_<sum|mean>_<in>_<out>_k``: ``(O, L, I, OUT* out, const T* in,
  ptc_params p)`` -- columns: ``out[o*I + i]`` = op over ``in[(o*L + j)*I + i]``
  (a contiguous tensor reduced over a run of middle dims); ``blockDim.x`` a
  multiple of 32, at most 1024, any grid.
* **scan / softmax** ``ptc_scan_<cumsum|cumprod>_<in>_<out>_<c|s>``,
  ``ptc_softmax_<softmax|log_softmax>_<tag>_<c|s>``: per row like reduce;
  ``s`` variant: ``(M, L, OUT* out, const T* in, ptc_params p, ptc_strided<2> ix,
  long long out_red_stride, long long in_red_stride)``.  Same launch rules.
  Long contiguous rows of few rows: ``ptc_scan_<op>_<in>_<out>_p(M, L, C, nch,
  ACC* part, const T* in)`` reduces each chunk of ``C`` elements (``nch`` a
  row), then ``..._k(M, L, C, nch, OUT* out, const T* in, const ACC* part)``
  scans each chunk from the combined partials before it; ACC is the
  accumulator (int64, float32 or float64); any grid.
* **index** (strided only) ``ptc_index_<gather|scatter|scatter_add>_<tag>_s``:
  ``(n, T* out, const T* src, const long long* index, long long dim_size,
  long long dim_stride, int* err, ptc_params p, ptc_strided<3> ix)``,
  operands out, src, index, ``n`` = elements of the iteration shape.
  gather: ``out[o0] = src[o1 + index[o2] * dim_stride]`` (src's stride along
  the gathered dim set to 0 in ``ix``); scatter / scatter_add:
  ``out[o0 + index[o2] * dim_stride] (=|+=) src[o1]`` (out's stride along the
  dim set to 0), scatter_add multiplies by alpha (``p.d0`` floats, ``p.i0``
  integers; bool ORs).  ``index_select`` / ``index_add`` / ``index_copy`` are
  these kernels with the index operand's strides 0 except along the dim.  An
  index in ``[-dim_size, 0)`` counts from the end (the front-ends check the
  range first, refusing negative values where torch does); one outside
  ``[-dim_size, dim_size)`` skips the element and sets ``*err = 1`` (``err``
  may be NULL).
* **fill** ``ptc_fill_<tag>_<c|s>``: ``(n, T* out, ptc_params p[, ptc_strided<1> ix])``,
  value ``p.d0`` (floats) or ``p.i0`` (integers, bool).
  ``ptc_arange_<tag>_c``: ``(n, T* out, ptc_params p)``: ``start + i*step``
  with (``p.d0``, ``p.d1``) computed in double for floats, (``p.i0``,
  ``p.i1``) in int64 for integers.  ``ptc_linspace_<tag>_c``: start ``p.d0``,
  end ``p.d1``, ``n`` points (PyTorch's two-sided formula).
* **random** ``ptc_random_uniform_<tag>_c``:
  ``(n, T* out, unsigned long long seed, unsigned long long offset,
  const unsigned long long* philox_graph, double low, double rng, double high,
  double clamp)``; ``ptc_random_normal_<tag>_c``: ``(n, T* out, unsigned long
  long seed, unsigned long long offset, const unsigned long long* philox_graph,
  double mean, double std)``.  Philox4x32-10, bit-identical to ptcore's CPU
  generator (see :func:`philox_uniform_args` and :func:`philox_blocks`); the
  caller advances its offset by ``philox_blocks(dtype, n)``.  Every random
  kernel takes ``philox_graph`` after ``offset``: NULL, or (in a CUDA graph
  capture) the device address of the generator's (seed, offset) that each
  replay refills, ``offset`` then being the draw's offset inside the graph.

Elementwise kernels are grid-stride loops: any 1-D grid and block work.
Integer division/remainder by zero yields 0 (the CPU kernels raise; a
launcher wanting that error checks the divisor first).  Out-of-range
float -> integer casts follow CUDA's saturating conversion (float -> uint8 /
int8 / int16 goes through int64, as c10's ``static_cast_with_inter_type``).

Host helpers: :func:`pack_params` and :func:`pack_strided` give the exact
bytes of the two structs (what ``kernelParams`` entries point at), and
:func:`collapse_dims` drops size-1 dims and merges dims that are contiguous
for every operand before a strided launch.
"""
import re

from ptcore.cuda.kernels import complex as _kernels_complex     # complex64/complex128: their own prelude per kernel
from ptcore.cuda.kernels import ctc as _kernels_ctc     # the ctc_loss alpha/beta recursions
from ptcore.cuda.kernels import index as _kernels_index     # sorting, compaction, sequential scans, integer samplers
from ptcore.cuda.kernels import nn as _kernels_nn     # the nn families (conv, pooling, losses, norms ...)
from ptcore.cuda.kernels import row_sort as _kernels_extra     # the bitonic/merge row sort
from ptcore.cuda.kernels import special as _kernels_special     # the special functions (orthogonal polynomials ...)
from ptcore.cuda.kernels.prelude import PRELUDE, MAX_DIMS
from ptcore.cuda.kernels.source import (  # noqa: F401  (K.DTYPES ... for the launchers)
    DTYPES, FLOATS, INTS, REDUCE_OPS, TAGS, _cast_expr, _compute, _dense_body, _ew_kernel, _expr,
    _fn, _kind, _kinds_ok, _load, _storage, _store, kernel_name,
)

__all__ = [
    "DTYPES", "TAGS", "UNARY", "BINARY", "TERNARY", "REDUCE", "program_source",
    "all_kernels", "kernel", "kernel_name", "philox_blocks", "philox_uniform_args", "MAX_DIMS",
    "pack_params", "pack_strided", "collapse_dims",
]

# ---------------------------------------------------------------------------
# op tables (PyTorch semantics; mirror ptcore/_ops/kernels/_ew.pyx.tp)
# ---------------------------------------------------------------------------
# (name, kinds, out, {kind: expr}, exclude); x is the input in compute type T,
# p the ptc_params; FN(f) is f / f<f> for double / float compute.
UNARY = [
    ("neg", "uif", "same", {"*": "(T)(-x)"}),
    ("abs", "uif", "same", {"u": "x", "i": "(T)(x < 0 ? -x : x)", "f": "FN(fabs)(x)"}),
    ("sign", "buif", "same", {"b": "x", "u": "(T)(x > 0)", "*": "(T)((x > 0) - (x < 0))"}),
    ("exp", "f", "same", {"*": "FN(exp)(x)"}),
    ("exp2", "f", "same", {"*": "FN(exp2)(x)"}),
    ("expm1", "f", "same", {"*": "FN(expm1)(x)"}),
    ("log", "f", "same", {"*": "FN(log)(x)"}),
    ("log2", "f", "same", {"*": "FN(log2)(x)"}),
    ("log10", "f", "same", {"*": "FN(log10)(x)"}),
    ("log1p", "f", "same", {"*": "FN(log1p)(x)"}),
    ("sqrt", "f", "same", {"*": "FN(sqrt)(x)"}),
    ("rsqrt", "f", "same", {"*": "FN(rsqrt)(x)"}),
    ("square", "uif", "same", {"*": "(T)(x * x)"}),
    ("reciprocal", "f", "same", {"*": "(T)1 / x"}),
    ("sin", "f", "same", {"*": "FN(sin)(x)"}),
    ("cos", "f", "same", {"*": "FN(cos)(x)"}),
    ("tan", "f", "same", {"*": "FN(tan)(x)"}),
    ("asin", "f", "same", {"*": "FN(asin)(x)"}),
    ("acos", "f", "same", {"*": "FN(acos)(x)"}),
    ("atan", "f", "same", {"*": "FN(atan)(x)"}),
    ("sinh", "f", "same", {"*": "FN(sinh)(x)"}),
    ("cosh", "f", "same", {"*": "FN(cosh)(x)"}),
    ("tanh", "f", "same", {"*": "FN(tanh)(x)"}),
    ("asinh", "f", "same", {"*": "FN(asinh)(x)"}),
    ("acosh", "f", "same", {"*": "FN(acosh)(x)"}),
    ("atanh", "f", "same", {"*": "FN(atanh)(x)"}),
    ("sigmoid", "f", "same", {"*": "(T)1 / ((T)1 + FN(exp)(-x))"}),
    ("logit", "f", "same", {"*": "ptc_logit(x, p)"}),          # p.i0: eps given, p.d0: eps
    ("erf", "f", "same", {"*": "FN(erf)(x)"}),
    ("erfc", "f", "same", {"*": "FN(erfc)(x)"}),
    ("erfinv", "f", "same", {"*": "FN(erfinv)(x)"}),
    ("lgamma", "f", "same", {"*": "FN(lgamma)(x)"}),
    ("digamma", "f", "same", {"*": "(T)ptc_digamma((double)x)"}),
    # i0(+-inf) is NaN in PyTorch (its Cephes evaluation), not the limit +inf of cyl_bessel_i0
    ("i0", "f", "same", {"*": "(isinf(x) ? x - x : FN(cyl_bessel_i0)(x))"}),
    ("floor", "buif", "same", {"f": "FN(floor)(x)", "*": "x"}),
    ("ceil", "buif", "same", {"f": "FN(ceil)(x)", "*": "x"}),
    ("trunc", "buif", "same", {"f": "FN(trunc)(x)", "*": "x"}),
    ("round", "buif", "same", {"f": "FN(rint)(x)", "*": "x"}),
    # round(decimals): p.i0 > 0 -> scale by p.d0 = 10**decimals, else divide by p.d0 = 10**-decimals
    ("round_dec", "f", "same", {"*": "(p.i0 > 0 ? FN(rint)(x * (T)p.d0) / (T)p.d0 : FN(rint)(x / (T)p.d0) * (T)p.d0)"}),
    ("frac", "f", "same", {"*": "x - FN(trunc)(x)"}),
    ("isnan", "buif", "bool", {"f": "ptc_isnan(x)", "*": "false"}),
    ("isinf", "buif", "bool", {"f": "isinf(x)", "*": "false"}),
    ("isfinite", "buif", "bool", {"f": "isfinite(x)", "*": "true"}),
    ("isposinf", "buif", "bool", {"f": "(isinf(x) && x > 0)", "*": "false"}),
    ("isneginf", "buif", "bool", {"f": "(isinf(x) && x < 0)", "*": "false"}),
    ("signbit", "buif", "bool", {"f": "(signbit(x) != 0)", "i": "(x < 0)", "*": "false"}),
    ("logical_not", "buif", "bool", {"*": "(x == (T)0)"}),
    ("bitwise_not", "bui", "same", {"b": "!x", "*": "(T)(~x)"}),
    # nan_to_num: p.d0 nan, p.d1 posinf, p.d2 neginf replacements
    ("nan_to_num", "f", "same", {"*": "(ptc_isnan(x) ? (T)p.d0 : (isinf(x) ? (x > 0 ? (T)p.d1 : (T)p.d2) : x))"}),
    ("relu", "uif", "same", {"*": "(x < (T)0 ? (T)0 : x)"}),
    ("silu", "f", "same", {"*": "x / ((T)1 + FN(exp)(-x))"}),
    ("gelu", "f", "same", {"*": "(T)0.5 * x * ((T)1 + FN(erf)(x * (T)0.70710678118654752440))"}),
    ("gelu_tanh", "f", "same",
     {"*": "(T)0.5 * x * ((T)1 + FN(tanh)((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x)))"}),
    # softplus: p.d0 beta, p.d1 threshold
    ("softplus", "f", "same", {"*": "(x * (T)p.d0 > (T)p.d1 ? x : FN(log1p)(FN(exp)(x * (T)p.d0)) / (T)p.d0)"}),
    ("mish", "f", "same", {"*": "x * FN(tanh)(FN(log1p)(FN(exp)(x)))"}),
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) (NaN stays NaN)
    ("logsigmoid", "f", "same", {"*": "(x < (T)0 ? x : (T)0) - FN(log1p)(FN(exp)(-FN(fabs)(x)))"}),
    # elu: p.d0 alpha, p.d1 input_scale, p.d2 scale
    ("elu", "f", "same", {"*": "(x > (T)0 ? x * (T)p.d2 : (T)p.d0 * (FN(exp)(x * (T)p.d1) - (T)1) * (T)p.d2)"}),
    ("leaky_relu", "f", "same", {"*": "(x > (T)0 ? x : x * (T)p.d0)"}),
    ("hardsigmoid", "f", "same", {"*": "(x <= (T)-3 ? (T)0 : (x >= (T)3 ? (T)1 : x / (T)6 + (T)0.5))"}),
    # torch's x * min(max(x + 3, 0), 6) / 6: -0 below -3, NaN at -inf
    ("hardswish", "f", "same", {"*": "x * (x + (T)3 <= (T)0 ? (T)0 : (x + (T)3 >= (T)6 ? (T)6 : x + (T)3)) / (T)6"}),
    # hardtanh: p.d0 min, p.d1 max
    ("hardtanh", "uif", "same", {"*": "(x < (T)p.d0 ? (T)p.d0 : (x > (T)p.d1 ? (T)p.d1 : x))"}),
    # the band ops of nn.functional, their composites' values (NaN stays NaN):
    # p.d0 the bound as the input's dtype holds it (what the composites'
    # comparisons with a number read), p.d1 softshrink's lambda the same way
    # (what its subtraction reads) / threshold's value
    ("hardshrink", "f", "same", {"*": "((x >= -(T)p.d0 && x <= (T)p.d0) ? (T)0 : x)"}),
    ("softshrink", "f", "same", {"*": "(x > (T)p.d0 ? x - (T)p.d1 : (x < -(T)p.d0 ? x + (T)p.d1 : "
                                      "(x != x ? x : (T)0)))"}),
    ("threshold", "f", "same", {"*": "(x <= (T)p.d0 ? (T)p.d1 : x)"}),
    # torch's sinc: 1 at 0, else sin(pi x) / (pi x) (the half types in float)
    ("sinc", "f", "same", {"*": "(x == (T)0 ? (T)1 : FN(sin)((T)3.14159265358979323846 * x) / "
                                "((T)3.14159265358979323846 * x))"}),
    # frexp's two results, one kernel each (x itself and exponent 0 for zeros, inf and NaN)
    ("frexp_mantissa", "f", "same", {"*": "((x == (T)0 || !isfinite(x)) ? x : "
                                          "[&]() { int e = 0; return FN(frexp)(x, &e); }())"}),
    ("frexp_exponent", "f", "int32", {"*": "((x == (T)0 || !isfinite(x)) ? 0 : "
                                           "[&]() { int e = 0; FN(frexp)(x, &e); return e; }())"}),
    ("deg2rad", "f", "same", {"*": "x * (T)0.017453292519943295"}),
    ("rad2deg", "f", "same", {"*": "x * (T)57.29577951308232"}),
    ("angle", "f", "same", {"*": "(ptc_isnan(x) ? x : (x < (T)0 ? (T)3.14159265358979323846 : (T)0))"}),
]

# (name, kinds, out, {kind: expr}, exclude); x, y in compute type T
BINARY = [
    ("add", "buif", "same", {"b": "(x || y)", "*": "(T)(x + y)"}),
    ("add_alpha", "uif", "same", {"f": "x + (T)p.d0 * y", "*": "(T)(x + (T)p.i0 * y)"}),
    ("sub", "uif", "same", {"*": "(T)(x - y)"}),
    ("mul", "buif", "same", {"b": "(x && y)", "*": "(T)(x * y)"}),
    ("div", "f", "same", {"*": "x / y"}),
    # nn.functional.prelu: where(x > 0, x, x * w) (NaN: x * w, NaN), w broadcast
    ("prelu", "f", "same", {"*": "(x > (T)0 ? x : x * y)"}),
    ("div_floor", "uif", "same", {"f": "ptc_floordiv(x, y)", "*": "ptc_idiv_floor<T>(x, y)"}),
    ("div_trunc", "uif", "same", {"f": "FN(trunc)(x / y)", "*": "ptc_idiv_trunc<T>(x, y)"}),
    ("remainder", "uif", "same", {"f": "ptc_fremainder(x, y)", "*": "ptc_iremainder<T>(x, y)"}),
    ("fmod", "uif", "same", {"f": "FN(fmod)(x, y)", "*": "ptc_ifmod<T>(x, y)"}),
    ("pow", "uif", "same", {"f": "FN(pow)(x, y)", "*": "ptc_ipow<T>(x, y)"}),
    ("atan2", "f", "same", {"*": "FN(atan2)(x, y)"}),
    ("hypot", "f", "same", {"*": "FN(hypot)(x, y)"}),
    ("copysign", "f", "same", {"*": "FN(copysign)(x, y)"}),
    # the half types step their own bit patterns (x and y hold half values as float)
    ("nextafter", "f", "same", {"float16": "ptc_nextafter16(x, y, false)",
                                "bfloat16": "ptc_nextafter16(x, y, true)", "*": "FN(nextafter)(x, y)"}),
    ("maximum", "buif", "same", {"b": "(x || y)", "f": "((x > y || ptc_isnan(x)) ? x : y)", "*": "(x > y ? x : y)"}),
    ("minimum", "buif", "same", {"b": "(x && y)", "f": "((x < y || ptc_isnan(x)) ? x : y)", "*": "(x < y ? x : y)"}),
    ("fmax", "buif", "same", {"b": "(x || y)", "f": "(ptc_isnan(x) ? y : (ptc_isnan(y) ? x : (y > x ? y : x)))",
                              "*": "(x > y ? x : y)"}),
    ("fmin", "buif", "same", {"b": "(x && y)", "f": "(ptc_isnan(x) ? y : (ptc_isnan(y) ? x : (y < x ? y : x)))",
                              "*": "(x < y ? x : y)"}),
    ("bitwise_and", "bui", "same", {"b": "(x && y)", "*": "(T)(x & y)"}),
    ("bitwise_or", "bui", "same", {"b": "(x || y)", "*": "(T)(x | y)"}),
    ("bitwise_xor", "bui", "same", {"b": "(x != y)", "*": "(T)(x ^ y)"}),
    # as torch: both infinite and equal gives that infinity (no inf - inf)
    ("logaddexp", "f", "same", {"*": "((x == y && FN(fabs)(x) == ptc_lim<T>::highest()) ? x : "
                                     "(x > y ? x : y) + FN(log1p)(FN(exp)(-FN(fabs)(x - y))))"}),
    ("logaddexp2", "f", "same", {"*": "((x == y && FN(fabs)(x) == ptc_lim<T>::highest()) ? x : "
                                      "(x > y ? x : y) + FN(log1p)(FN(exp2)(-FN(fabs)(x - y))) "
                                      "* (T)1.4426950408889634)"}),
    ("gcd", "ui", "same", {"*": "ptc_igcd<T>(x, y)"}),
    ("lcm", "ui", "same", {"*": "ptc_ilcm<T>(x, y)"}),
    ("left_shift", "ui", "same", {"*": "ptc_lshift<T>(x, y)"}),
    ("right_shift", "ui", "same", {"*": "ptc_rshift<T>(x, y)"}),
    ("logical_and", "buif", "bool", {"*": "((x != (T)0) && (y != (T)0))"}),
    ("logical_or", "buif", "bool", {"*": "((x != (T)0) || (y != (T)0))"}),
    ("logical_xor", "buif", "bool", {"*": "((x != (T)0) != (y != (T)0))"}),
    ("eq", "buif", "bool", {"*": "(x == y)"}),
    ("ne", "buif", "bool", {"*": "(x != y)"}),
    ("lt", "buif", "bool", {"*": "(x < y)"}),
    ("le", "buif", "bool", {"*": "(x <= y)"}),
    ("gt", "buif", "bool", {"*": "(x > y)"}),
    ("ge", "buif", "bool", {"*": "(x >= y)"}),
    ("xlogy", "f", "same", {"*": "(ptc_isnan(y) ? y : (x == (T)0 ? (T)0 : x * FN(log)(y)))"}),
    ("sigmoid_backward", "f", "same", {"*": "x * ((T)1 - y) * y"}),
    # threshold_fill(x, y): p.d0 threshold, p.d1 value
    ("threshold_fill", "f", "same", {"*": "(x <= (T)p.d0 ? (T)p.d1 : y)"}),
    # masked_fill(x, mask): y is the bool mask; value p.d0 (floats) / p.i0 (ints, bool)
    ("masked_fill", "buif", "same", {"f": "(y ? (T)p.d0 : x)", "*": "(y ? (T)p.i0 : x)"}, (), "bool"),
]

# (name, kinds, {kind: expr}, first operand dtype or None); a, b, c compute values.
# (Kept, as UNARY and BINARY: the kernels' source, keyed by the kernel each row
# generates; the launchers read their dtypes and results from it.)
TERNARY = [
    ("where", "buif", {"*": "(a ? b : c)"}, "bool"),
    ("clamp", "buif", {"f": "(ptc_isnan(a) ? a : ptc_clamp<T>(a, b, c))", "*": "ptc_clamp<T>(a, b, c)"}, None),
    ("lerp", "f", {"*": "ptc_lerp<T>(a, b, c)"}, None),
    ("addcmul", "uif", {"f": "a + (T)p.d0 * b * c", "*": "(T)(a + (T)p.i0 * b * c)"}, None),
    ("addcdiv", "f", {"*": "a + (T)p.d0 * b / c"}, None),
]


def _binary_spec(row):
    name, kinds, out, spec = row[:4]
    exclude = row[4] if len(row) > 4 else ()
    ytype = row[5] if len(row) > 5 else None
    return name, kinds, out, spec, exclude, ytype


def _gen_unary():
    for name, kinds, out, spec in UNARY:
        for dt in DTYPES:
            if not _kinds_ok(kinds, dt):
                continue
            e = _expr(spec, dt)
            out_dt = dt if out == "same" else out
            for v in ("c", "s"):
                kn = kernel_name("unary", name, TAGS[dt], v)
                yield kn, "unary", _ew_kernel(kn, out_dt, [dt], ["x"], dt, e, v)


def _gen_cast():
    for src in DTYPES:
        for dst in DTYPES:
            for v in ("c", "s"):
                kn = kernel_name("cast", None, (TAGS[src], TAGS[dst]), v)
                yield kn, "cast", _ew_kernel(kn, dst, [src], ["x"], dst, _cast_expr(src, dst), v)


def _gen_binary():
    for row in BINARY:
        name, kinds, out, spec, exclude, ytype = _binary_spec(row)
        for dt in DTYPES:
            if not _kinds_ok(kinds, dt, exclude):
                continue
            e = _expr(spec, dt)
            out_dt = dt if out == "same" else out
            ins = [dt, ytype or dt]
            for v in ("c", "s"):
                kn = kernel_name("binary", name, TAGS[dt], v)
                yield kn, "binary", _ew_kernel(kn, out_dt, ins, ["x", "y"], dt, e, v)


# binary ops with a Python-number second operand ``y`` read from the
# ptc_params (p.d0 for floats, p.i0 otherwise) and rounded to the tensor's
# dtype as a fill would: (name, kinds, {kind: expr})
SCALAR = [row[:2] + (row[3],) for row in BINARY if row[0] in ("add", "sub", "mul", "div", "pow")]
SCALAR += [("rsub", "uif", {"*": "(T)(y - x)"}), ("rdiv", "f", {"*": "y / x"})]
# the number-first forms of floor division, remainder and pow (``2 // x``, ``2 % x``,
# ``2 ** x``): the op's own expression with its operands swapped, so the number
# needs no device tensor (torch passes it to its kernel as an argument too)
REFLECTED_SCALAR = {"div_floor": "rdiv_floor", "remainder": "rremainder", "pow": "rpow"}
SCALAR += [(REFLECTED_SCALAR[row[0]], row[1],
            {k: re.sub(r"\b[xy]\b", lambda m: "y" if m.group(0) == "x" else "x", e)
             for k, e in row[3].items()})
           for row in BINARY if row[0] in REFLECTED_SCALAR]
# comparisons with a Python number (a bool result): ``x > 0`` in one kernel
SCALAR_CMP = [row[:2] + (row[3],) for row in BINARY if row[0] in ("eq", "ne", "lt", "le", "gt", "ge")]


def _scalar_value(dt, name):
    """The scalar operand of a ``scalar`` kernel: the params value stored in
    dt and loaded back (exactly what a 0-d tensor filled with it holds),
    except in the float16/bfloat16 products and quotients, whose number
    stays in the float compute type unrounded, as PyTorch's mul/div kernels
    read the original scalar (``f16 * 2.7`` multiplies by 2.7f, while
    ``f16 + 2.7`` adds 2.7 rounded to half)."""
    if dt in ("float16", "bfloat16") and name in ("mul", "div", "rdiv"):
        return "    const T y = (T)(p.d0);\n"
    val = "p.d0" if _kind(dt) == "f" else ("(p.i0 != 0)" if dt == "bool" else "p.i0")
    return f"    const T y = {_load(dt, _store(dt, val))};\n"


def _gen_scalar():
    for name, kinds, spec in SCALAR:
        for dt in DTYPES:
            if not _kinds_ok(kinds, dt):
                continue
            for v in ("c", "s"):
                kn = kernel_name("scalar", name, TAGS[dt], v)
                e = _expr(spec, dt)
                if name == "rdiv" and dt in ("float16", "bfloat16"):
                    # PyTorch's number / tensor is reciprocal() * number: the
                    # reciprocal rounded to the dtype first
                    e = f"{_load(dt, _store(dt, '((T)1 / x)'))} * y"
                yield kn, "scalar", _ew_kernel(kn, dt, [dt], ["x"], dt, e, v,
                                               setup=_scalar_value(dt, name))
    for name, kinds, spec in SCALAR_CMP:
        for dt in DTYPES:
            if not _kinds_ok(kinds, dt):
                continue
            for v in ("c", "s"):
                kn = kernel_name("scalar", name, TAGS[dt], v)
                yield kn, "scalar", _ew_kernel(kn, "bool", [dt], ["x"], dt, _expr(spec, dt), v,
                                               setup=_scalar_value(dt, name))


def _gen_ternary():
    for name, kinds, spec, atype in TERNARY:
        for dt in DTYPES:
            if not _kinds_ok(kinds, dt):
                continue
            e = _expr(spec, dt)
            ins = [atype or dt, dt, dt]
            for v in ("c", "s"):
                kn = kernel_name("ternary", name, TAGS[dt], v)
                yield kn, "ternary", _ew_kernel(kn, dt, ins, ["a", "b", "c"], dt, e, v)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
# op -> (input dtypes, output dtype rule, accumulation rule)
#   output: "same", "int64_if_int" (ints/bool -> int64, floats same), "int64", "bool_or_u8"
#   acc:    "sum" (int64 for ints/bool, float for f16/bf16/f32, double for f64),
#           "ext" (int for bool/8/16-bit ints, int for int32, int64, float/double)
_ALL = tuple(DTYPES)
_NOBOOL = tuple(d for d in DTYPES if d != "bool")
REDUCE = [
    ("sum", _ALL, "int64_if_int", "sum"),
    ("nansum", FLOATS, "same", "sum"),
    ("prod", _ALL, "int64_if_int", "sum"),
    ("mean", FLOATS, "same", "sum"),
    ("amax", _ALL, "same", "ext"),
    ("amin", _ALL, "same", "ext"),
    ("argmax", _NOBOOL, "int64", "ext"),
    ("argmin", _NOBOOL, "int64", "ext"),
    ("all", _ALL, "bool_or_u8", "ext"),
    ("any", _ALL, "bool_or_u8", "ext"),
    ("count_nonzero", _ALL, "int64", "ext"),
    ("var", FLOATS, "same", "sum"),
    ("std", FLOATS, "same", "sum"),
    ("norm0", FLOATS, "same", "sum"),
    ("norm1", FLOATS, "same", "sum"),
    ("norm2", FLOATS, "same", "sum"),
    ("norminf", FLOATS, "same", "sum"),
    ("normneginf", FLOATS, "same", "sum"),
    ("normp", FLOATS, "same", "sum"),
    ("logsumexp", FLOATS, "same", "sum"),
]


def _acc_type(dt, rule):
    k = _kind(dt)
    if k == "f":
        return "double" if dt == "float64" else "float"
    if rule == "sum":
        return "long long"
    return "long long" if dt == "int64" else "int"


def _scan_acc_type(dt):
    """The accumulation type of cumsum/cumprod kernels reading ``dt``: the
    reductions' (float for the half types, the integers' long long), but
    double for float32 -- PyTorch's CPU scans accumulate float32 in double,
    and a scan is bound by memory, so the GPU's double adds cost nothing
    where three float64 copies in and out cost three passes."""
    return "double" if dt == "float32" else _acc_type(dt, "sum")


def _reduce_out(dt, rule):
    if rule == "same":
        return dt
    if rule == "int64":
        return "int64"
    if rule == "int64_if_int":
        return dt if _kind(dt) == "f" else "int64"
    if rule == "bool_or_u8":
        return "uint8" if dt == "uint8" else "bool"
    raise ValueError(rule)


def _reduce_kernel(name, op, in_dt, out_dt, acc, variant):
    """One block per output (grid-stride over the M outputs) reduces the L
    elements ``in[ibase + j * step]``.  Each thread keeps four independent
    partials.  When the row is contiguous (step 1) and its start is aligned
    to four elements, the threads read ``ptc_vec4`` groups, two per trip
    (one 16-byte load per float32 group, 32 bytes in flight per thread
    before any combine), the partial ``e`` taking element ``e`` of each
    group; the elements past the last whole group, and every unaligned or
    strided row, go through the scalar loop.  The order of the combines is
    fixed by L and the alignment alone, so the result is deterministic."""
    st = _storage(in_dt)
    params = ["long long M", "long long L", f"{_storage(out_dt)}* out", f"const {st}* in",
              "ptc_params p"]
    if variant == "s":
        params += ["ptc_strided<2> ix", "long long in_red_stride"]
        base = ("        long long o[2];\n        ptc_offsets<2>(ix, r, o);\n"
                "        const long long obase = o[0], ibase = o[1], step = in_red_stride;\n")
    else:
        base = "        const long long obase = r, ibase = r * L, step = 1;\n"
    x = f"(A){_load(in_dt, 'raw')}"
    if op == "normp":
        x = f"(A)pow(fabs({x}), (A)p.d0)"

    def group(b):
        return "".join(f"                s{u} = Op::combine(s{u}, Op::map(cv(g{b}.v[{u}]), 4 * (v{b}) + {u}));\n"
                       for u in range(4))
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_{op}<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[32];\n"
            f"    auto cv = [&](const {st} raw) -> A {{ return {x}; }};\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n{base}"
            f"        auto ld = [&](const long long j) -> A {{ return cv(in[ibase + j * step]); }};\n"
            f"        S s0 = Op::init(), s1 = Op::init(), s2 = Op::init(), s3 = Op::init();\n"
            f"        const long long bd = blockDim.x;\n"
            f"        long long j = threadIdx.x;\n"
            f"        if (step == 1 && PTC_ALIGNED4(in + ibase)) {{\n"
            f"            const ptc_vec4<{st}>* vin = (const ptc_vec4<{st}>*)(in + ibase);\n"
            f"            const long long nv = L / 4;\n"
            f"            long long v = threadIdx.x;\n"
            f"            for (; v + bd < nv; v += 2 * bd) {{\n"
            f"                const ptc_vec4<{st}> g0 = vin[v], g1 = vin[v + bd];\n"
            f"{group(0).replace('(v0)', '(v)')}{group(1).replace('(v1)', '(v + bd)')}"
            f"            }}\n"
            f"            for (; v < nv; v += bd) {{\n"
            f"                const ptc_vec4<{st}> g0 = vin[v];\n"
            f"{group(0).replace('(v0)', '(v)')}"
            f"            }}\n"
            f"            j = nv * 4 + threadIdx.x;\n"
            f"        }} else {{\n"
            # four independent partials per thread: four loads in flight (every
            # combine is commutative, argmax/argmin break ties by index)
            f"            for (; j + 3 * bd < L; j += 4 * bd) {{\n"
            f"                const A x0 = ld(j), x1 = ld(j + bd), x2 = ld(j + 2 * bd), x3 = ld(j + 3 * bd);\n"
            f"                s0 = Op::combine(s0, Op::map(x0, j));\n"
            f"                s1 = Op::combine(s1, Op::map(x1, j + bd));\n"
            f"                s2 = Op::combine(s2, Op::map(x2, j + 2 * bd));\n"
            f"                s3 = Op::combine(s3, Op::map(x3, j + 3 * bd));\n"
            f"            }}\n"
            f"        }}\n"
            f"        for (; j < L; j += bd) s0 = Op::combine(s0, Op::map(ld(j), j));\n"
            f"        S s = Op::combine(Op::combine(s0, s1), Op::combine(s2, s3));\n"
            f"        s = ptc_block_reduce<Op>(s, sm);\n"
            f"        if (threadIdx.x == 0) out[obase] = {_store(out_dt, 'Op::finish(s, L, p)')};\n"
            f"    }}\n}}\n")


# the reductions with a column kernel (``k`` variant)
REDUCE_COLUMNS = ("sum", "mean")
COLUMN_WIDTH = 32               # columns per block of the ``k`` kernels


def _column_kernel(name, op, in_dt, out_dt, acc):
    """``k``: the reduced elements of an output are a column of a
    contiguous (O, L, I) tensor -- ``out[o*I + i]`` = op over
    ``in[(o*L + j)*I + i]``, j < L -- with no copy that moves them last.
    A block takes 32 consecutive columns of one ``o`` (a warp reads 32
    consecutive floats of a row), its warps take every (blockDim.x/32)-th
    row, then the warps' partials combine in shared memory, in a fixed
    order (deterministic)."""
    params = ["long long O", "long long L", "long long I", f"{_storage(out_dt)}* out",
              f"const {_storage(in_dt)}* in", "ptc_params p"]
    x = f"(A){_load(in_dt, 'in[(o * L + j) * I + i]')}"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_{op}<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[1024];\n"
            f"    const long long tx = threadIdx.x % {COLUMN_WIDTH}, ty = threadIdx.x / {COLUMN_WIDTH};\n"
            f"    const long long ny = blockDim.x / {COLUMN_WIDTH};\n"
            f"    const long long nc = (I + {COLUMN_WIDTH - 1}) / {COLUMN_WIDTH};\n"
            f"    for (long long b = blockIdx.x; b < O * nc; b += gridDim.x) {{\n"
            f"        const long long o = b / nc, i = (b % nc) * {COLUMN_WIDTH} + tx;\n"
            f"        S s = Op::init();\n"
            f"        if (i < I)\n"
            f"            for (long long j = ty; j < L; j += ny) s = Op::combine(s, Op::map({x}, j));\n"
            f"        sm[threadIdx.x] = s;\n"
            f"        __syncthreads();\n"
            f"        if (ty == 0) {{\n"
            f"            for (long long k = 1; k < ny; k++) s = Op::combine(s, sm[k * {COLUMN_WIDTH} + tx]);\n"
            f"            if (i < I) out[o * I + i] = {_store(out_dt, 'Op::finish(s, L, p)')};\n"
            f"        }}\n"
            f"        __syncthreads();\n"
            f"    }}\n}}\n")


def _welford_chunks_kernel(name, in_dt, acc):
    """Pass 1 of var/std over long rows: ``mean[b]``, ``m2[b]`` (Welford)
    of chunk ``b = r * k + j`` = elements ``[j*c, min((j+1)*c, n))`` of row
    ``r`` of the contiguous (M, n) input (the tail chunk included), read in
    the input's own type (a half input is not copied to float32 first)."""
    st = _storage(in_dt)
    return (f'extern "C" __global__ void {name}(long long M, long long n, long long c, long long k, '
            f"{acc}* mean_out, {acc}* m2_out, const {st}* in) {{\n"
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_var<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[32];\n"
            f"    for (long long b = blockIdx.x; b < M * k; b += gridDim.x) {{\n"
            f"        const long long r = b / k, j0 = (b % k) * c;\n"
            f"        const long long len = (n - j0) < c ? (n - j0) : c;\n"
            f"        const {st}* x = in + r * n + j0;\n"
            f"        S s0 = Op::init(), s1 = Op::init();\n"
            f"        const long long bd = blockDim.x;\n"
            f"        long long j = threadIdx.x;\n"
            f"        for (; j + bd < len; j += 2 * bd) {{\n"
            f"            const A x0 = (A){_load(in_dt, 'x[j]')}, x1 = (A){_load(in_dt, 'x[j + bd]')};\n"
            f"            s0 = Op::combine(s0, Op::map(x0, j));\n"
            f"            s1 = Op::combine(s1, Op::map(x1, j + bd));\n"
            f"        }}\n"
            f"        for (; j < len; j += bd) s0 = Op::combine(s0, Op::map((A){_load(in_dt, 'x[j]')}, j));\n"
            f"        S s = ptc_block_reduce<Op>(Op::combine(s0, s1), sm);\n"
            f"        if (threadIdx.x == 0) {{ mean_out[b] = s.mean; m2_out[b] = s.m2; }}\n"
            f"    }}\n}}\n")


def _welford_finish_kernel(name, out_dt, acc):
    """Pass 2: ``out[r]`` = var (std when ``take_sqrt``) of row ``r`` from its
    ``k`` chunks' (count, mean, m2), Chan's combination, one block a row;
    the correction in ``p.d0``."""
    return (f'extern "C" __global__ void {name}(long long M, long long n, long long c, long long k, '
            f"{_storage(out_dt)}* out, const {acc}* mean, const {acc}* m2, ptc_params p, int take_sqrt) {{\n"
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_var<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[32];\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
            f"        S s = Op::init();\n"
            f"        for (long long j = threadIdx.x; j < k; j += blockDim.x) {{\n"
            f"            S t; t.n = (n - j * c) < c ? (n - j * c) : c;\n"
            f"            t.mean = mean[r * k + j]; t.m2 = m2[r * k + j];\n"
            f"            s = Op::combine(s, t);\n"
            f"        }}\n"
            f"        s = ptc_block_reduce<Op>(s, sm);\n"
            f"        if (threadIdx.x == 0) {{\n"
            f"            const A v = Op::finish(s, n, p);\n"
            f"            out[r] = {_store(out_dt, 'take_sqrt ? sqrt(v) : v')};\n"
            f"        }}\n"
            f"    }}\n}}\n")


# the reductions whose state is a pair (a value and its index; the smallest and
# largest values) with a one-launch kernel over long rows (``g`` variant):
# op -> (input dtypes, the second output's dtype rule or None)
REDUCE_PAIRS = {"argmax": (_NOBOOL, None), "argmin": (_NOBOOL, None), "aminmax": (_ALL, "same")}


def _pair_reduce_kernel(name, op, in_dt, out_dt, acc):
    """``g``: op over each row of the contiguous (M, L) input in one launch.
    Row ``r`` is cut in ``nblk`` chunks of ``c`` elements, one block each
    (grid-stride over the M * nblk blocks); each block's state goes to the
    workspace (``wv``/``wv2``/``wi``: its two fields) and the block that
    finishes a row last -- counted by ``atomicAdd`` on ``sem[r]``, which it
    sets back to 0 -- combines the row's ``nblk`` states in a fixed order
    and writes ``out[r]`` (and ``out2[r]``).  With ``nblk == 1`` the block
    writes its row directly (``sem`` unused).  The combine breaks ties by
    index and propagates NaN, so the result is the one-block kernel's."""
    st = _storage(in_dt)
    two = op == "aminmax"
    out2 = f"{_storage(out_dt)}* out2" if two else "long long* out2"
    if two:
        save = "wv[b] = s.lo; wv2[b] = s.hi;"
        load = "t.lo = ((volatile A*)wv)[r * nblk + k]; t.hi = ((volatile A*)wv2)[r * nblk + k];"
        write = f"out[r] = {_store(out_dt, 's.lo')}; out2[r] = {_store(out_dt, 's.hi')};"
    else:
        save = "wv[b] = s.v; wi[b] = s.i;"
        load = "t.v = ((volatile A*)wv)[r * nblk + k]; t.i = ((volatile long long*)wi)[r * nblk + k];"
        write = "out[r] = s.i;"
    x = f"(A){_load(in_dt, 'x[j]')}"
    x1 = f"(A){_load(in_dt, 'x[j + bd]')}"
    return (f'extern "C" __global__ void {name}(long long M, long long L, long long c, long long nblk, '
            f"{_storage(out_dt)}* out, {out2}, const {st}* in, {acc}* wv, {acc}* wv2, long long* wi, "
            f"unsigned int* sem, ptc_params p) {{\n"
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_{op}<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[32];\n"
            f"    __shared__ int last;\n"
            f"    const long long bd = blockDim.x;\n"
            f"    for (long long b = blockIdx.x; b < M * nblk; b += gridDim.x) {{\n"
            f"        const long long r = b / nblk, j0 = (b % nblk) * c;\n"
            f"        const long long len = (L - j0) < c ? (L - j0) : c;\n"
            f"        const {st}* x = in + r * L + j0;\n"
            f"        S s0 = Op::init(), s1 = Op::init();\n"
            f"        long long j = threadIdx.x;\n"
            f"        for (; j + bd < len; j += 2 * bd) {{\n"
            f"            const A x0 = {x}, x1 = {x1};\n"
            f"            s0 = Op::combine(s0, Op::map(x0, j0 + j));\n"
            f"            s1 = Op::combine(s1, Op::map(x1, j0 + j + bd));\n"
            f"        }}\n"
            f"        for (; j < len; j += bd) s0 = Op::combine(s0, Op::map({x}, j0 + j));\n"
            f"        S s = ptc_block_reduce<Op>(Op::combine(s0, s1), sm);\n"
            f"        if (nblk > 1) {{\n"
            f"            if (threadIdx.x == 0) {{\n"
            f"                {save}\n"
            f"                __threadfence();\n"
            f"                last = atomicAdd(sem + r, 1u) == (unsigned int)(nblk - 1);\n"
            f"            }}\n"
            f"            __syncthreads();\n"
            f"            if (!last) continue;\n"
            f"            __threadfence();\n"
            f"            s = Op::init();\n"
            f"            for (long long k = threadIdx.x; k < nblk; k += bd) {{\n"
            f"                S t; {load}\n"
            f"                s = Op::combine(s, t);\n"
            f"            }}\n"
            f"            s = ptc_block_reduce<Op>(s, sm);\n"
            f"            if (threadIdx.x == 0) sem[r] = 0u;\n"
            f"        }}\n"
            f"        if (threadIdx.x == 0) {{ {write} }}\n"
            f"        __syncthreads();\n"
            f"    }}\n}}\n")


def _gen_reduce():
    for op, (dts, rule2) in REDUCE_PAIRS.items():
        for dt in dts:
            out_dt = dt if rule2 == "same" else "int64"
            kn = kernel_name("reduce", op, (TAGS[dt], TAGS[out_dt]), "g")
            yield kn, "reduce", _pair_reduce_kernel(kn, op, dt, out_dt, _acc_type(dt, "ext"))
    for dt in FLOATS:
        acc = _acc_type(dt, "sum")
        kn = kernel_name("reduce", "welford", TAGS[dt], "s")
        yield kn, "reduce", _welford_chunks_kernel(kn, dt, acc)
        kn = kernel_name("reduce", "welfordfin", TAGS[dt], "c")
        yield kn, "reduce", _welford_finish_kernel(kn, dt, acc)
    for op, dts, out_rule, acc_rule in REDUCE:
        for dt in dts:
            out_dt = _reduce_out(dt, out_rule)
            acc = _acc_type(dt, acc_rule)
            for v in ("c", "s"):
                kn = kernel_name("reduce", op, (TAGS[dt], TAGS[out_dt]), v)
                yield kn, "reduce", _reduce_kernel(kn, op, dt, out_dt, acc, v)
            if op in REDUCE_COLUMNS:
                kn = kernel_name("reduce", op, (TAGS[dt], TAGS[out_dt]), "k")
                yield kn, "reduce", _column_kernel(kn, op, dt, out_dt, acc)


# ---------------------------------------------------------------------------
# scans and softmax (one block per row)
# ---------------------------------------------------------------------------

def _row_params(in_dt, out_dt, variant):
    params = ["long long M", "long long L", f"{_storage(out_dt)}* out", f"const {_storage(in_dt)}* in",
              "ptc_params p"]
    if variant == "s":
        params += ["ptc_strided<2> ix", "long long out_red_stride", "long long in_red_stride"]
        base = ("        long long o[2];\n        ptc_offsets<2>(ix, r, o);\n"
                "        const long long obase = o[0], ibase = o[1], ostep = out_red_stride, "
                "istep = in_red_stride;\n")
    else:
        base = "        const long long obase = r * L, ibase = r * L, ostep = 1, istep = 1;\n"
    return params, base


def _scan_kernel(name, op, in_dt, out_dt, acc, variant):
    params, base = _row_params(in_dt, out_dt, variant)
    red = "sum" if op == "cumsum" else "prod"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {acc} A;\n"
            f"    typedef ptc_r_{red}<A> Op;\n"
            f"    __shared__ A sm[32];\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n{base}"
            f"        A carry = Op::init();\n"
            f"        for (long long b0 = 0; b0 < L; b0 += blockDim.x) {{\n"
            f"            const long long j = b0 + threadIdx.x;\n"
            f"            A v = j < L ? (A){_load(in_dt, 'in[ibase + j * istep]')} : Op::init();\n"
            f"            A total;\n"
            f"            v = ptc_block_scan<Op>(v, sm, &total);\n"
            f"            if (j < L) out[obase + j * ostep] = {_store(out_dt, 'Op::combine(carry, v)')};\n"
            f"            carry = Op::combine(carry, total);\n"
            f"        }}\n"
            f"    }}\n}}\n")


def _chunked_scan_kernels(op, in_dt, out_dt, acc):
    """The two kernels of a scan along long contiguous rows, split in chunks
    of ``C`` elements so that many blocks share a row: ``_p`` reduces each
    (row, chunk) into ``part[row * nch + chunk]`` (type ``acc``); ``_k``
    combines the partials before its chunk into a carry, then scans the
    chunk block by block from it (the one-block-per-row kernel's loop)."""
    red = "sum" if op == "cumsum" else "prod"
    tin, tout = TAGS[in_dt], TAGS[out_dt]
    head = (f"    typedef {acc} A;\n"
            f"    typedef ptc_r_{red}<A> Op;\n"
            f"    __shared__ A sm[32];\n"
            f"    for (long long b = blockIdx.x; b < M * nch; b += gridDim.x) {{\n"
            f"        const long long r = b / nch, c = b - r * nch;\n"
            f"        const long long j0 = c * C, j1 = j0 + C < L ? j0 + C : L;\n")
    load = f"(A){_load(in_dt, 'in[r * L + j]')}"
    pn = kernel_name("scan", op, (tin, tout), "p")
    psrc = (f'extern "C" __global__ void {pn}(long long M, long long L, long long C, long long nch, '
            f"{acc}* part, const {_storage(in_dt)}* in) {{\n{head}"
            f"        A v = Op::init();\n"
            f"        for (long long j = j0 + threadIdx.x; j < j1; j += blockDim.x) v = Op::combine(v, {load});\n"
            f"        v = ptc_block_allreduce<Op>(v, sm);\n"
            f"        if (threadIdx.x == 0) part[b] = v;\n"
            f"    }}\n}}\n")
    kn = kernel_name("scan", op, (tin, tout), "k")
    ksrc = (f'extern "C" __global__ void {kn}(long long M, long long L, long long C, long long nch, '
            f"{_storage(out_dt)}* out, const {_storage(in_dt)}* in, const {acc}* part) {{\n{head}"
            f"        A carry = Op::init();\n"
            f"        for (long long k = threadIdx.x; k < c; k += blockDim.x) carry = Op::combine(carry, part[r * nch + k]);\n"
            f"        carry = ptc_block_allreduce<Op>(carry, sm);\n"
            f"        for (long long b0 = j0; b0 < j1; b0 += blockDim.x) {{\n"
            f"            const long long j = b0 + threadIdx.x;\n"
            f"            A v = j < j1 ? {load} : Op::init();\n"
            f"            A total;\n"
            f"            v = ptc_block_scan<Op>(v, sm, &total);\n"
            f"            if (j < j1) out[r * L + j] = {_store(out_dt, 'Op::combine(carry, v)')};\n"
            f"            carry = Op::combine(carry, total);\n"
            f"        }}\n"
            f"    }}\n}}\n")
    return (pn, psrc), (kn, ksrc)


def _softmax_kernel(name, op, dt, variant):
    params, base = _row_params(dt, dt, variant)
    acc = "double" if dt == "float64" else "float"
    xi = f"(A){_load(dt, 'in[ibase + j * istep]')}"
    if op == "softmax":
        write = "exp(x - mx) / s"
    else:
        write = "(x - mx) - ls"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {acc} A;\n"
            f"    __shared__ A sm[32];\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n{base}"
            f"        A mx = ptc_lim<A>::lowest();\n"
            f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{ A x = {xi}; mx = ptc_r_amax<A>::combine(mx, x); }}\n"
            f"        mx = ptc_block_allreduce<ptc_r_amax<A> >(mx, sm);\n"
            f"        A s = (A)0;\n"
            f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{ A x = {xi}; s += exp(x - mx); }}\n"
            f"        s = ptc_block_allreduce<ptc_r_sum<A> >(s, sm);\n"
            f"        const A ls = log(s);\n"
            f"        (void)ls;\n"
            f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
            f"            A x = {xi};\n"
            f"            out[obase + j * ostep] = {_store(dt, write)};\n"
            f"        }}\n"
            f"    }}\n}}\n")


def _gen_rows():
    for op in ("cumsum", "cumprod"):
        for dt in DTYPES:
            out_dt = _reduce_out(dt, "int64_if_int")
            acc = _scan_acc_type(dt)
            for v in ("c", "s"):
                kn = kernel_name("scan", op, (TAGS[dt], TAGS[out_dt]), v)
                yield kn, "scan", _scan_kernel(kn, op, dt, out_dt, acc, v)
            for kn, src in _chunked_scan_kernels(op, dt, out_dt, acc):
                yield kn, "scan", src
    for op in ("softmax", "log_softmax"):
        for dt in FLOATS:
            for v in ("c", "s"):
                kn = kernel_name("softmax", op, TAGS[dt], v)
                yield kn, "softmax", _softmax_kernel(kn, op, dt, v)


# ---------------------------------------------------------------------------
# indexing, fill, arange, linspace
# ---------------------------------------------------------------------------

def _index_kernel(name, op, dt):
    S = _storage(dt)
    params = ["long long n", f"{S}* out", f"const {S}* src", "const long long* index", "long long dim_size",
              "long long dim_stride", "int* err", "ptc_params p", "ptc_strided<3> ix"]
    head = (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {_compute(dt)} T;\n"
            f"    PTC_FOR(i, n) {{\n"
            f"        long long o[3];\n        ptc_offsets<3>(ix, i, o);\n"
            f"        long long idx = index[o[2]];\n"
            f"        if (idx < 0) idx += dim_size;\n"
            f"        if (idx < 0 || idx >= dim_size) {{ if (err) atomicExch(err, 1); continue; }}\n")
    if op == "gather":
        body = "        out[o[0]] = src[o[1] + idx * dim_stride];\n"
    elif op == "scatter":
        body = "        out[o[0] + idx * dim_stride] = src[o[1]];\n"
    else:  # scatter_add: out += alpha * src
        v = _load(dt, "src[o[1]]")
        if dt == "bool":
            body = f"        ptc_atomic_or_bool(out + o[0] + idx * dim_stride, {v} && p.i0 != 0);\n"
        elif _kind(dt) == "f":
            body = f"        ptc_atomic_add(out + o[0] + idx * dim_stride, (T)({v} * (T)p.d0));\n"
        else:
            body = f"        ptc_atomic_add(out + o[0] + idx * dim_stride, (T)({v} * (T)p.i0));\n"
    return head + body + "    }\n}\n"


def _fill_kernel(name, dt, variant):
    params = ["long long n", f"{_storage(dt)}* out", "ptc_params p"]
    if variant == "s":
        params.append("ptc_strided<1> ix")
        pos = "o[0]"
        offs = "        long long o[1];\n        ptc_offsets<1>(ix, i, o);\n"
    else:
        pos, offs = "i", ""
    val = "p.d0" if _kind(dt) == "f" else ("(p.i0 != 0)" if dt == "bool" else "p.i0")
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    const {_storage(dt)} v = {_store(dt, val)};\n"
            f"    PTC_FOR(i, n) {{\n{offs}        out[{pos}] = v;\n    }}\n}}\n")


def _arange_kernel(name, dt):
    if _kind(dt) == "f":
        val = "p.d0 + (double)i * p.d1"
    else:
        val = "p.i0 + i * p.i1"
    return (f'extern "C" __global__ void {name}(long long n, {_storage(dt)}* out, ptc_params p) {{\n'
            f"    PTC_FOR(i, n) {{\n        out[i] = {_store(dt, val)};\n    }}\n}}\n")


def _linspace_kernel(name, dt):
    # PyTorch (RangeFactories): start/end converted to the dtype first; step = (end - start) / (steps - 1)
    # in the dtype (double for integers); the first half from start, the second from end.  float16 /
    # bfloat16 arithmetic rounds to the dtype after every operation, as c10::Half / BFloat16 do.
    if dt in ("float16", "bfloat16"):
        def r(e):
            return _load(dt, _store(dt, e))
        body = (f"        const float start = {r('(float)p.d0')}, end = {r('(float)p.d1')};\n"
                f"        const float step = n > 1 ? {r(r('end - start') + ' / ' + r('(float)(n - 1)'))} : 0.0f;\n"
                f"        const long long half = n / 2;\n"
                f"        const float v = i < half ? {r('start + ' + r('step * ' + r('(float)i')))}\n"
                f"                                 : {r('end - ' + r('step * ' + r('(float)(n - 1 - i)')))};\n")
    elif _kind(dt) == "f":
        acc = "double" if dt == "float64" else "float"
        body = (f"        const {acc} start = ({acc})p.d0, end = ({acc})p.d1;\n"
                f"        const {acc} step = n > 1 ? (end - start) / ({acc})(n - 1) : ({acc})0;\n"
                f"        const long long half = n / 2;\n"
                f"        const {acc} v = i < half ? start + step * ({acc})i : end - step * ({acc})(n - 1 - i);\n")
    else:
        S = _storage(dt)
        body = (f"        const double start = (double)({S})(long long)p.d0, end = (double)({S})(long long)p.d1;\n"
                "        const double step = n > 1 ? (end - start) / (double)(n - 1) : 0.0;\n"
                "        const long long half = n / 2;\n"
                "        const double v = i < half ? start + step * (double)i : end - step * (double)(n - 1 - i);\n")
    return (f'extern "C" __global__ void {name}(long long n, {_storage(dt)}* out, ptc_params p) {{\n'
            f"    PTC_FOR(i, n) {{\n{body}        out[i] = {_store(dt, 'v')};\n    }}\n}}\n")


def _gen_misc():
    for dt in DTYPES:
        for op in ("gather", "scatter", "scatter_add"):
            kn = kernel_name("index", op, TAGS[dt], "s")
            yield kn, "index", _index_kernel(kn, op, dt)
    for dt in DTYPES:
        for v in ("c", "s"):
            kn = kernel_name("fill", None, TAGS[dt], v)
            yield kn, "fill", _fill_kernel(kn, dt, v)
    for dt in _NOBOOL:
        kn = kernel_name("arange", None, TAGS[dt], "c")
        yield kn, "fill", _arange_kernel(kn, dt)
        kn = kernel_name("linspace", None, TAGS[dt], "c")
        yield kn, "fill", _linspace_kernel(kn, dt)


# ---------------------------------------------------------------------------
# Philox4x32-10 random kernels (bit-identical port of ptcore/_ops/kernels/_random.pyx)
# ---------------------------------------------------------------------------
# The helpers below are written so the same text also compiles as host C++
# (with the __dmul_rn & co. shims in tests), which is how they are checked
# against the CPU generator without a GPU.
PHILOX = r"""
#define PTC_PHILOX_M0 0xD2511F53u
#define PTC_PHILOX_M1 0xCD9E8D57u
#define PTC_PHILOX_W0 0x9E3779B9u
#define PTC_PHILOX_W1 0xBB67AE85u
/* a random kernel captured into a CUDA graph reads its generator's state at
   launch: philox_graph (non-NULL only then) holds (seed, offset of the replay),
   the by-value offset is the draw's position inside the graph */
#define PTC_PHILOX_GRAPH(seed, offset, st) do { if (st) { (seed) = (st)[0]; (offset) += (st)[1]; } } while (0)
/* block for the 128-bit counter (ctr: words 0, 1; sub: words 2, 3), key (k0, k1) */
__device__ __forceinline__ void ptc_philox_block128(unsigned long long ctr, unsigned long long sub,
                                                    unsigned int k0, unsigned int k1, unsigned int* out) {
    unsigned int c0 = (unsigned int)ctr, c1 = (unsigned int)(ctr >> 32);
    unsigned int c2 = (unsigned int)sub, c3 = (unsigned int)(sub >> 32);
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        unsigned int hi0 = __umulhi(PTC_PHILOX_M0, c0), lo0 = PTC_PHILOX_M0 * c0;
        unsigned int hi1 = __umulhi(PTC_PHILOX_M1, c2), lo1 = PTC_PHILOX_M1 * c2;
        unsigned int y0 = hi1 ^ c1 ^ k0, y2 = hi0 ^ c3 ^ k1;
        c1 = lo1; c3 = lo0; c0 = y0; c2 = y2;
        k0 += PTC_PHILOX_W0; k1 += PTC_PHILOX_W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}
/* block for the 64-bit counter ctr (words 2, 3 zero): the stream of the bulk samplers */
__device__ __forceinline__ void ptc_philox_block(unsigned long long ctr, unsigned int k0, unsigned int k1,
                                                 unsigned int* out) {
    ptc_philox_block128(ctr, 0ULL, k0, k1, out);
}
/* fdlibm e_log.c for a positive normal finite double, evaluated in the CPU
   generator's exact order with no contraction (ptc_log in _random.pyx) */
__device__ __forceinline__ double ptc_det_log(double x) {
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01;
    unsigned long long ix = (unsigned long long)__double_as_longlong(x);
    unsigned int hx = (unsigned int)(ix >> 32) + (0x3ff00000u - 0x3fe6a09eu);
    int k = (int)(hx >> 20) - 0x3ff;
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    ix = ((unsigned long long)hx << 32) | (ix & 0xffffffffULL);
    x = __longlong_as_double((long long)ix);
    double f = __dadd_rn(x, -1.0);
    double hfsq = __dmul_rn(__dmul_rn(0.5, f), f);
    double s = __ddiv_rn(f, __dadd_rn(2.0, f));
    double z = __dmul_rn(s, s);
    double w = __dmul_rn(z, z);
    double t1 = __dmul_rn(w, __dadd_rn(Lg2, __dmul_rn(w, __dadd_rn(Lg4, __dmul_rn(w, Lg6)))));
    double t2 = __dmul_rn(z, __dadd_rn(Lg1, __dmul_rn(w, __dadd_rn(Lg3, __dmul_rn(w, __dadd_rn(Lg5, __dmul_rn(w, Lg7)))))));
    double R = __dadd_rn(t2, t1);
    double dk = (double)k;
    double a = __dadd_rn(__dmul_rn(s, __dadd_rn(hfsq, R)), __dmul_rn(dk, ln2_lo));
    a = __dadd_rn(__dadd_rn(a, -hfsq), f);
    return __dadd_rn(a, __dmul_rn(dk, ln2_hi));
}
/* (sin 2 pi u, cos 2 pi u), ptc_sincos2pi in _random.pyx */
__device__ __forceinline__ void ptc_det_sincos2pi(double u, double* sn, double* cs) {
    const double S1 = -0.16666666666666666, S2 = 0.008333333333333333, S3 = -0.0001984126984126984,
                 S4 = 2.7557319223985893e-06, S5 = -2.505210838544172e-08, S6 = 1.6059043836821613e-10,
                 S7 = -7.647163731819816e-13, S8 = 2.8114572543455206e-15;
    const double C1 = -0.5, C2 = 0.041666666666666664, C3 = -0.001388888888888889,
                 C4 = 2.48015873015873e-05, C5 = -2.755731922398589e-07, C6 = 2.08767569878681e-09,
                 C7 = -1.1470745597729725e-11, C8 = 4.779477332387385e-14;
    const double PIO2 = 1.5707963267948966;
    double v = __dmul_rn(4.0, u);
    int q = (int)__dadd_rn(v, 0.5);
    double r = __dadd_rn(v, -(double)q);
    double x = __dmul_rn(r, PIO2);
    double z = __dmul_rn(x, x);
    double ps = __dadd_rn(S7, __dmul_rn(z, S8));
    ps = __dadd_rn(S6, __dmul_rn(z, ps));
    ps = __dadd_rn(S5, __dmul_rn(z, ps));
    ps = __dadd_rn(S4, __dmul_rn(z, ps));
    ps = __dadd_rn(S3, __dmul_rn(z, ps));
    ps = __dadd_rn(S2, __dmul_rn(z, ps));
    ps = __dadd_rn(S1, __dmul_rn(z, ps));
    double s = __dadd_rn(x, __dmul_rn(__dmul_rn(x, z), ps));
    double pc = __dadd_rn(C7, __dmul_rn(z, C8));
    pc = __dadd_rn(C6, __dmul_rn(z, pc));
    pc = __dadd_rn(C5, __dmul_rn(z, pc));
    pc = __dadd_rn(C4, __dmul_rn(z, pc));
    pc = __dadd_rn(C3, __dmul_rn(z, pc));
    pc = __dadd_rn(C2, __dmul_rn(z, pc));
    pc = __dadd_rn(C1, __dmul_rn(z, pc));
    double c = __dadd_rn(1.0, __dmul_rn(z, pc));
    double a = (q & 1) ? c : s, b = (q & 1) ? s : c;
    *sn = ((q >> 1) & 1) ? -a : a;
    *cs = (((q + 1) >> 1) & 1) ? -b : b;
}
/* Box-Muller pair: (r cos, r sin) with r = sqrt(-2 log u1), (sin, cos) = sincos2pi(u2) */
__device__ __forceinline__ void ptc_box_muller(double u1, double u2, double* z0, double* z1) {
    double r = __dsqrt_rn(__dmul_rn(-2.0, ptc_det_log(u1)));
    double sn, cs;
    ptc_det_sincos2pi(u2, &sn, &cs);
    *z0 = __dmul_rn(r, cs);
    *z1 = __dmul_rn(r, sn);
}
/* uniform u of scalar j (0..3 for 32-bit kinds, 0..1 for float64) of a block */
__device__ __forceinline__ double ptc_uniform32(const unsigned int* w, int j) {
    return __dmul_rn((double)(w[j] >> 8), 5.9604644775390625e-08);
}
__device__ __forceinline__ double ptc_uniform64(const unsigned int* w, int j) {
    unsigned long long d = (unsigned long long)w[2 * j] | ((unsigned long long)w[2 * j + 1] << 32);
    return __dmul_rn((double)(d >> 11), 1.1102230246251565e-16);
}
/* the block's normal variates before scaling: 4 (32-bit kinds) or 2 (float64) */
__device__ __forceinline__ void ptc_normals32(const unsigned int* w, double* z) {
    for (int p = 0; p < 2; ++p) {
        double u1 = __dadd_rn(1.0, -__dmul_rn((double)w[2 * p], 2.3283064365386963e-10));
        double u2 = __dmul_rn((double)w[2 * p + 1], 2.3283064365386963e-10);
        ptc_box_muller(u1, u2, &z[2 * p], &z[2 * p + 1]);
    }
}
__device__ __forceinline__ void ptc_normals64(const unsigned int* w, double* z) {
    unsigned long long d0 = (unsigned long long)w[0] | ((unsigned long long)w[1] << 32);
    unsigned long long d1 = (unsigned long long)w[2] | ((unsigned long long)w[3] << 32);
    double u1 = __dadd_rn(1.0, -__dmul_rn((double)(d0 >> 11), 1.1102230246251565e-16));
    double u2 = __dmul_rn((double)(d1 >> 11), 1.1102230246251565e-16);
    ptc_box_muller(u1, u2, &z[0], &z[1]);
}
"""


def _random_kernels(dt):
    tag, S = TAGS[dt], _storage(dt)
    wide = dt == "float64"
    per = 2 if wide else 4
    if wide:
        store_u = ("            double v = __dadd_rn(low, __dmul_rn(rng, ptc_uniform64(w, j)));\n"
                   "            if (v >= high) v = clamp;\n"
                   "            out[s] = v;\n")
    elif dt == "float32":
        store_u = ("            float v = (float)__dadd_rn(low, __dmul_rn(rng, ptc_uniform32(w, j)));\n"
                   "            if ((double)v >= high) v = (float)clamp;\n"
                   "            out[s] = v;\n")
    else:
        st = "ptc_f2h" if dt == "float16" else "ptc_f2bf"
        ld = "ptc_h2f" if dt == "float16" else "ptc_bf2f"
        store_u = (f"            {S} v = {st}((float)__dadd_rn(low, __dmul_rn(rng, ptc_uniform32(w, j))));\n"
                   f"            if ((double){ld}(v) >= high) v = {st}((float)clamp);\n"
                   f"            out[s] = v;\n")
    uname = kernel_name("random", "uniform", tag, "c")
    uni = (f'extern "C" __global__ void {uname}(long long n, {S}* out, unsigned long long seed, '
           f"unsigned long long offset, const unsigned long long* philox_graph, "
           f"double low, double rng, double high, double clamp) {{\n"
           f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
           f"    const long long nblocks = (n + {per - 1}) / {per};\n"
           f"    PTC_FOR(q, nblocks) {{\n"
           f"        unsigned int w[4];\n"
           f"        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, "
           f"(unsigned int)(seed >> 32), w);\n"
           f"        for (int j = 0; j < {per}; ++j) {{\n"
           f"            const long long s = q * {per} + j;\n"
           f"            if (s >= n) break;\n{store_u}"
           f"        }}\n    }}\n}}\n")
    nname = kernel_name("random", "normal", tag, "c")
    norm = (f'extern "C" __global__ void {nname}(long long n, {S}* out, unsigned long long seed, '
            f"unsigned long long offset, const unsigned long long* philox_graph, "
            f"double mean, double std) {{\n"
            f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
            f"    const long long nblocks = (n + {per - 1}) / {per};\n"
            f"    PTC_FOR(q, nblocks) {{\n"
            f"        unsigned int w[4];\n"
            f"        double z[4];\n"
            f"        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, "
            f"(unsigned int)(seed >> 32), w);\n"
            f"        {'ptc_normals64' if wide else 'ptc_normals32'}(w, z);\n"
            f"        for (int j = 0; j < {per}; ++j) {{\n"
            f"            const long long s = q * {per} + j;\n"
            f"            if (s >= n) break;\n"
            f"            out[s] = {_store(dt, '__dadd_rn(mean, __dmul_rn(std, z[j]))')};\n"
            f"        }}\n    }}\n}}\n")
    return [(uname, uni), (nname, norm)]


def _gen_random():
    for dt in FLOATS:
        for kn, src in _random_kernels(dt):
            yield kn, "random", src


def philox_blocks(dtype, n):
    """Philox blocks a uniform/normal call of ``n`` scalars consumes (the offset increment)."""
    if dtype not in FLOATS:
        raise TypeError(f"random kernels support {FLOATS}, got {dtype}")
    return (n + 1) // 2 if dtype == "float64" else (n + 3) // 4


def _bits_to_f(dtype, bits):
    import numpy as np
    if dtype == "float16":
        return float(np.array([bits], np.uint16).view(np.float16)[0])
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def _f_to_bits(dtype, v):
    """RNE float64 -> float32 -> float16/bfloat16 bits, as ptc_half.h."""
    import numpy as np
    f = np.float32(v)
    if dtype == "float16":
        return int(np.array([f], np.float32).astype(np.float16).view(np.uint16)[0])
    u = int(np.array([f], np.float32).view(np.uint32)[0])
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 0x40
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16


def philox_uniform_args(dtype, low, high):
    """``(low, rng, high, clamp)`` for ``ptc_random_uniform_*``, as the CPU generator.

    ``clamp`` is the largest ``dtype`` value below ``high`` (or ``low`` rounded
    to the dtype when none lies in ``[low, high)``); a generated value that
    rounds to ``>= high`` is replaced by it.
    """
    import math
    import numpy as np
    low, high = float(low), float(high)
    if dtype == "float64":
        d = math.nextafter(high, -math.inf)
        clamp = d if (d < high and d >= low) else low
    elif dtype == "float32":
        f = np.float32(high)
        if float(f) >= high:
            f = np.nextafter(f, np.float32(-np.inf))
        elif float(np.nextafter(f, np.float32(np.inf))) < high:
            f = np.nextafter(f, np.float32(np.inf))
        clamp = float(f) if (float(f) < high and float(f) >= low) else float(np.float32(low))
    elif dtype in ("float16", "bfloat16"):
        top = 0x7F80 if dtype == "bfloat16" else 0x7C00

        def key_bits(k):
            return k if k >= 0 else (0x8000 | (-k))

        def val(k):
            return _bits_to_f(dtype, key_bits(k))
        lo_k, hi_k = -top, top
        best = None
        if val(lo_k) < high:
            while hi_k - lo_k > 1:
                mid = (lo_k + hi_k) >> 1
                if val(mid) < high:
                    lo_k = mid
                else:
                    hi_k = mid
            best = hi_k if val(hi_k) < high else lo_k
        if best is not None and val(best) >= low:
            clamp = val(best)
        else:
            clamp = _bits_to_f(dtype, _f_to_bits(dtype, low))
    else:
        raise TypeError(f"random kernels support {FLOATS}, got {dtype}")
    return low, high - low, high, clamp


# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------
def _gen_index_sort():
    _KERNEL_PRELUDE.update(_kernels_index.KERNEL_PRELUDE)
    return _kernels_index.generate()


def _gen_nn():
    _FAMILY_PRELUDE.update(_kernels_nn.FAMILY_PRELUDE)
    for name, fam, src in _kernels_nn.generate():
        yield name, fam, src


def _gen_complex():
    for name, fam, src in _kernels_complex.generate():
        _KERNEL_PRELUDE[name] = _kernels_complex.PRELUDE
        yield name, fam, src


def _gen_extra():
    return _kernels_extra.generate()


def _gen_ctc():
    _KERNEL_PRELUDE.update(_kernels_ctc.KERNEL_PRELUDE)
    return _kernels_ctc.generate()


def _gen_special():
    _FAMILY_PRELUDE.update(_kernels_special.FAMILY_PRELUDE)
    return _kernels_special.generate()


_GENERATORS = (_gen_unary, _gen_cast, _gen_binary, _gen_scalar, _gen_ternary, _gen_reduce, _gen_rows, _gen_misc,
               _gen_random, _gen_index_sort, _gen_nn, _gen_extra, _gen_complex, _gen_special, _gen_ctc)
_FAMILY_PRELUDE = {"reduce": REDUCE_OPS, "scan": REDUCE_OPS, "softmax": REDUCE_OPS, "random": PHILOX}
_KERNEL_PRELUDE = {}        # kernel name -> extra prelude of that kernel alone (complex dtypes)
_registry = None


def all_kernels():
    """``{name: (family, source)}`` for every kernel, in a fixed order."""
    global _registry
    if _registry is None:
        reg = {}
        for gen in _GENERATORS:
            for name, fam, src in gen():
                if name in reg:
                    raise RuntimeError(f"duplicate kernel name {name}")
                reg[name] = (fam, src)
        _registry = reg
    return _registry


def kernel(name):
    """``(family, source)`` of one kernel (KeyError naming it when unknown)."""
    try:
        return all_kernels()[name]
    except KeyError:
        raise KeyError(f"no CUDA kernel named {name!r}") from None


def program_source(names):
    """Prelude + the family preludes needed + the bodies of ``names`` (one program)."""
    fams = []
    bodies = []
    for n in names:
        fam, src = kernel(n)
        for extra in (_FAMILY_PRELUDE.get(fam), _KERNEL_PRELUDE.get(n)):
            if extra is not None and extra not in fams:
                fams.append(extra)
        bodies.append(src)
    return PRELUDE + "".join(fams) + "\n".join(bodies)


# ---------------------------------------------------------------------------
# host side of the ABI: argument packing and dimension collapsing
# ---------------------------------------------------------------------------

def pack_params(d0=0.0, d1=0.0, d2=0.0, i0=0, i1=0):
    """The 40 bytes of a ``ptc_params`` struct (little endian, as on every CUDA host)."""
    import struct
    return struct.pack("<3d2q", float(d0), float(d1), float(d2), int(i0), int(i1))


def pack_strided(sizes, strides):
    """The bytes of a ``ptc_strided<K>`` struct, ``K = len(strides)``.

    ``sizes`` has ``1 <= ndim <= MAX_DIMS`` entries; ``strides[k]`` gives
    operand k's element strides (operand 0 is the output).
    """
    import struct
    sizes = [int(s) for s in sizes]
    ndim = len(sizes)
    if not 1 <= ndim <= MAX_DIMS:
        raise ValueError(f"ptc_strided supports 1 to {MAX_DIMS} dims, got {ndim} (sizes {sizes})")
    if any(s < 0 for s in sizes):
        raise ValueError(f"negative size in {sizes}")
    vals = [ndim] + sizes + [0] * (MAX_DIMS - ndim)
    for k, st in enumerate(strides):
        st = [int(x) for x in st]
        if len(st) != ndim:
            raise ValueError(f"operand {k} has {len(st)} strides for {ndim} dims")
        vals += st + [0] * (MAX_DIMS - ndim)
    return struct.pack(f"<{len(vals)}q", *vals)


def collapse_dims(sizes, strides):
    """Drop size-1 dims and merge dims that are contiguous for every operand.

    Returns ``(sizes, strides)`` describing the same element -> offset map
    (C order over ``sizes``) with as few dims as possible (at least one).
    Raises ValueError when more than ``MAX_DIMS`` dims remain; the caller
    then makes a contiguous copy first.
    """
    sizes = [int(s) for s in sizes]
    strides = [[int(x) for x in st] for st in strides]
    for k, st in enumerate(strides):
        if len(st) != len(sizes):
            raise ValueError(f"operand {k} has {len(st)} strides for {len(sizes)} dims")
    if any(s == 0 for s in sizes):
        return [0], [[0] for _ in strides]
    keep = [d for d, s in enumerate(sizes) if s != 1]
    out_sizes = []
    out_strides = [[] for _ in strides]
    for d in keep:
        if out_sizes and all(out_strides[k][-1] == strides[k][d] * sizes[d] for k in range(len(strides))):
            out_sizes[-1] *= sizes[d]
            for k in range(len(strides)):
                out_strides[k][-1] = strides[k][d]
        else:
            out_sizes.append(sizes[d])
            for k in range(len(strides)):
                out_strides[k].append(strides[k][d])
    if not out_sizes:
        return [1], [[0] for _ in strides]
    if len(out_sizes) > MAX_DIMS:
        raise ValueError(f"{len(out_sizes)} dims remain after collapsing sizes {sizes}; the strided "
                         f"kernels take at most {MAX_DIMS}")
    return out_sizes, out_strides
