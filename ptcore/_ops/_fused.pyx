# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Fused elementwise kernel for ``ptcore.jit``: evaluates a straight-line
program of pointwise ops over contiguous float32/float64 operands block by
block, so a chain of N ops reads its inputs and writes its output once
instead of N times (the temporaries of a block stay in cache).  No compiler
is needed at run time: the program is data (an instruction array), like
numexpr's virtual machine.

Registers ``0 .. n_in-1`` are the inputs (a tensor operand, or a scalar
broadcast to the block), the others temporaries; an instruction is
``(opcode, dst, a, b)``; the value of register ``result`` is written out.
"""
cimport cython
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, free
from libc.math cimport (exp, log, logf, tanh, tanhf, sqrt, sqrtf, fabs, fabsf, sin, sinf,
                        cos, cosf, erf, erff, log1p, log1pf, expm1, expm1f)
from libc.stdint cimport int32_t

from ptcore._ops._types cimport PT_FLOAT32, PT_FLOAT64

cdef extern from "ptc_math.h" nogil:
    # vectorised (AVX2/AVX-512, chosen at run time) float32 maps, as the eager kernels use
    void ptc_exp_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_tanh_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_geluv_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_sigmoid_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_silu_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_relu_f32(float* o, const float* a, Py_ssize_t n)
from ptcore._ops._parallel cimport get_num_threads
from ptcore._tensor cimport _TensorBase

# opcodes (keep in sync with ptcore.jit._fusion.OPCODES)
cdef enum:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_DIV = 3
    OP_NEG = 4
    OP_EXP = 5
    OP_LOG = 6
    OP_TANH = 7
    OP_SIGMOID = 8
    OP_RELU = 9
    OP_SQRT = 10
    OP_RSQRT = 11
    OP_ABS = 12
    OP_SIN = 13
    OP_COS = 14
    OP_SQUARE = 15
    OP_RECIPROCAL = 16
    OP_ERF = 17
    OP_LOG1P = 18
    OP_EXPM1 = 19
    OP_MAX = 20
    OP_MIN = 21
    OP_GELU = 22
    OP_GELU_TANH = 23
    OP_SILU = 24
    OP_NUM = 25

    BLOCK = 2048
    MAXREG = 64

OPCODE_COUNT = OP_NUM


cdef inline void _run_f32(const int32_t* prog, int ninstr, float** reg, Py_ssize_t m) noexcept nogil:
    cdef int k
    cdef Py_ssize_t i
    cdef float* d
    cdef float* a
    cdef float* b
    cdef float x
    cdef int op
    for k in range(ninstr):
        d = reg[prog[4 * k + 1]]
        a = reg[prog[4 * k + 2]]
        b = reg[prog[4 * k + 3]]
        op = prog[4 * k]
        if op == OP_ADD:
            for i in range(m):
                d[i] = a[i] + b[i]
        elif op == OP_SUB:
            for i in range(m):
                d[i] = a[i] - b[i]
        elif op == OP_MUL:
            for i in range(m):
                d[i] = a[i] * b[i]
        elif op == OP_DIV:
            for i in range(m):
                d[i] = a[i] / b[i]
        elif op == OP_NEG:
            for i in range(m):
                d[i] = -a[i]
        elif op == OP_EXP:
            ptc_exp_f32(d, a, m)
        elif op == OP_LOG:
            for i in range(m):
                d[i] = logf(a[i])
        elif op == OP_TANH:
            ptc_tanh_f32(d, a, m)
        elif op == OP_SIGMOID:
            ptc_sigmoid_f32(d, a, m)
        elif op == OP_RELU:
            ptc_relu_f32(d, a, m)
        elif op == OP_SQRT:
            for i in range(m):
                d[i] = sqrtf(a[i])
        elif op == OP_RSQRT:
            for i in range(m):
                d[i] = 1.0 / sqrtf(a[i])
        elif op == OP_ABS:
            for i in range(m):
                d[i] = fabsf(a[i])
        elif op == OP_SIN:
            for i in range(m):
                d[i] = sinf(a[i])
        elif op == OP_COS:
            for i in range(m):
                d[i] = cosf(a[i])
        elif op == OP_SQUARE:
            for i in range(m):
                d[i] = a[i] * a[i]
        elif op == OP_RECIPROCAL:
            for i in range(m):
                d[i] = 1.0 / a[i]
        elif op == OP_ERF:
            for i in range(m):
                d[i] = erff(a[i])
        elif op == OP_LOG1P:
            for i in range(m):
                d[i] = log1pf(a[i])
        elif op == OP_EXPM1:
            for i in range(m):
                d[i] = expm1f(a[i])
        elif op == OP_MAX:
            for i in range(m):
                d[i] = a[i] if (a[i] >= b[i] or a[i] != a[i]) else b[i]
        elif op == OP_MIN:
            for i in range(m):
                d[i] = a[i] if (a[i] <= b[i] or a[i] != a[i]) else b[i]
        elif op == OP_GELU:
            ptc_geluv_f32(d, a, m)
        elif op == OP_GELU_TANH:
            for i in range(m):
                x = a[i]
                d[i] = 0.5 * x * (1.0 + tanhf(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        elif op == OP_SILU:
            ptc_silu_f32(d, a, m)


cdef inline void _run_f64(const int32_t* prog, int ninstr, double** reg, Py_ssize_t m) noexcept nogil:
    cdef int k
    cdef Py_ssize_t i
    cdef double* d
    cdef double* a
    cdef double* b
    cdef double x
    cdef int op
    for k in range(ninstr):
        d = reg[prog[4 * k + 1]]
        a = reg[prog[4 * k + 2]]
        b = reg[prog[4 * k + 3]]
        op = prog[4 * k]
        if op == OP_ADD:
            for i in range(m):
                d[i] = a[i] + b[i]
        elif op == OP_SUB:
            for i in range(m):
                d[i] = a[i] - b[i]
        elif op == OP_MUL:
            for i in range(m):
                d[i] = a[i] * b[i]
        elif op == OP_DIV:
            for i in range(m):
                d[i] = a[i] / b[i]
        elif op == OP_NEG:
            for i in range(m):
                d[i] = -a[i]
        elif op == OP_EXP:
            for i in range(m):
                d[i] = exp(a[i])
        elif op == OP_LOG:
            for i in range(m):
                d[i] = log(a[i])
        elif op == OP_TANH:
            for i in range(m):
                d[i] = tanh(a[i])
        elif op == OP_SIGMOID:
            for i in range(m):
                d[i] = 1.0 / (1.0 + exp(-a[i]))
        elif op == OP_RELU:
            for i in range(m):
                x = a[i]
                d[i] = x if x > 0 or x != x else 0
        elif op == OP_SQRT:
            for i in range(m):
                d[i] = sqrt(a[i])
        elif op == OP_RSQRT:
            for i in range(m):
                d[i] = 1.0 / sqrt(a[i])
        elif op == OP_ABS:
            for i in range(m):
                d[i] = fabs(a[i])
        elif op == OP_SIN:
            for i in range(m):
                d[i] = sin(a[i])
        elif op == OP_COS:
            for i in range(m):
                d[i] = cos(a[i])
        elif op == OP_SQUARE:
            for i in range(m):
                d[i] = a[i] * a[i]
        elif op == OP_RECIPROCAL:
            for i in range(m):
                d[i] = 1.0 / a[i]
        elif op == OP_ERF:
            for i in range(m):
                d[i] = erf(a[i])
        elif op == OP_LOG1P:
            for i in range(m):
                d[i] = log1p(a[i])
        elif op == OP_EXPM1:
            for i in range(m):
                d[i] = expm1(a[i])
        elif op == OP_MAX:
            for i in range(m):
                d[i] = a[i] if (a[i] >= b[i] or a[i] != a[i]) else b[i]
        elif op == OP_MIN:
            for i in range(m):
                d[i] = a[i] if (a[i] <= b[i] or a[i] != a[i]) else b[i]
        elif op == OP_GELU:
            for i in range(m):
                x = a[i]
                d[i] = 0.5 * x * (1.0 + erf(x * 0.7071067811865476))
        elif op == OP_GELU_TANH:
            for i in range(m):
                x = a[i]
                d[i] = 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        elif op == OP_SILU:
            for i in range(m):
                x = a[i]
                d[i] = x / (1.0 + exp(-x))


def run(list operands, const int32_t[::1] prog, int nreg, int result, _TensorBase out):
    """Evaluate ``prog`` over ``operands`` (contiguous tensors of ``out``'s
    dtype and element count, or Python floats) into contiguous ``out``."""
    cdef int nin = len(operands), ninstr = prog.shape[0] // 4, k, t, nthreads
    cdef Py_ssize_t n = out._numel, nblocks, blk, start, m, i
    cdef int dt = out._dtype.num
    cdef size_t isz = 4 if dt == PT_FLOAT32 else 8
    cdef char* in_ptr[MAXREG]
    cdef double in_val[MAXREG]
    cdef bint is_scalar[MAXREG]
    cdef char* outp = out._ptr()
    cdef char* scratch
    cdef char** regs
    cdef char** reg
    cdef _TensorBase x
    if dt != PT_FLOAT32 and dt != PT_FLOAT64:
        raise TypeError("fused kernel: float32 or float64 output expected")
    if nreg > MAXREG or nin > nreg or result < 0 or result >= nreg or prog.shape[0] % 4:
        raise ValueError("fused kernel: malformed program")
    for k in range(prog.shape[0]):
        if k % 4 == 0:
            if prog[k] < 0 or prog[k] >= OP_NUM:
                raise ValueError("fused kernel: unknown opcode")
        elif prog[k] < 0 or prog[k] >= nreg or (k % 4 == 1 and prog[k] < nin):
            raise ValueError("fused kernel: bad register")
    if not out._is_contig():
        raise ValueError("fused kernel: contiguous output expected")
    for k in range(nin):
        o = operands[k]
        if isinstance(o, _TensorBase):
            x = <_TensorBase>o
            if x._dtype.num != dt or x._numel != n or not x._is_contig():
                raise ValueError("fused kernel: operands must be contiguous, of the output's "
                                 "dtype and size")
            in_ptr[k] = x._ptr()
            is_scalar[k] = False
        else:
            in_val[k] = float(o)
            is_scalar[k] = True
            in_ptr[k] = NULL
    if n == 0:
        return out
    nblocks = (n + BLOCK - 1) // BLOCK
    nthreads = get_num_threads()
    if nthreads > nblocks:
        nthreads = <int>nblocks
    if nthreads < 1:
        nthreads = 1
    # per thread: one BLOCK buffer per register; scalar inputs filled once,
    # tensor inputs point into their data, the result register into ``out``
    scratch = <char*>malloc(nthreads * nreg * BLOCK * isz)
    regs = <char**>malloc(nthreads * nreg * sizeof(char*))
    if scratch == NULL or regs == NULL:
        free(scratch)
        free(regs)
        raise MemoryError("fused kernel: no memory for the block buffers")
    for t in range(nthreads):
        for k in range(nreg):
            regs[t * nreg + k] = scratch + (t * nreg + k) * BLOCK * isz
        for k in range(nin):
            if is_scalar[k]:
                for i in range(BLOCK):
                    if dt == PT_FLOAT32:
                        (<float*>regs[t * nreg + k])[i] = <float>in_val[k]
                    else:
                        (<double*>regs[t * nreg + k])[i] = in_val[k]
    with nogil:
        for blk in prange(nblocks, num_threads=nthreads, schedule="static"):
            t = threadid()
            reg = regs + t * nreg
            start = blk * BLOCK
            m = BLOCK if start + BLOCK <= n else n - start
            for k in range(nin):
                if not is_scalar[k]:
                    reg[k] = in_ptr[k] + start * isz
            if result >= nin:
                reg[result] = outp + start * isz
            if dt == PT_FLOAT32:
                _run_f32(&prog[0], ninstr, <float**>reg, m)
            else:
                _run_f64(&prog[0], ninstr, <double**>reg, m)
            if result < nin:
                for i in range(m * <Py_ssize_t>isz):
                    (outp + start * isz)[i] = reg[result][i]
    free(regs)
    free(scratch)
    return out
