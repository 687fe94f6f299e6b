# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Fused elementwise kernel for ``ptcore.jit``: evaluates a straight-line
program of pointwise ops block by block (``BLOCK`` elements, so the
temporaries of a block stay in the L1/L2 cache), reading every input and
writing every output once instead of once per op.  No compiler is needed at
run time: the program is data (an instruction array) evaluated by
``ptc_fused.h``, one vectorised loop per instruction, like numexpr's virtual
machine.

Registers ``0 .. n_in-1`` are the inputs: a Python number (a scalar
register), or a tensor of the compute dtype or bool, broadcastable to
``shape`` and of any strides (a dense operand of the full size is read in
place, others are gathered into the block's buffer).  The others are
temporaries; an instruction is ``(opcode, dst, a, b, c)``.  Output ``j`` is
the value of register ``out_regs[j]``, written to the contiguous tensor
``outs[j]`` (compute dtype, or bool: nonzero -> True); an entry of ``outs``
that is a dtype (``ptcore.float32`` ...) asks for a new tensor of the
iteration shape.
"""
cimport cython
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from libc.string cimport memcpy
from libc.stdint cimport int32_t

from ptcore._ops.kernels._types cimport PT_BOOL, PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig, device, dtype
from ptcore._tensor import device as _device_type
scratch_bind()      # this module's scratch requests obey _fault's test switch

cdef device _CPU = _device_type("cpu")

cdef extern from "ptc_fused.h" nogil:
    int PF_NUM
    void ptc_fused_eval_f32(const int32_t* prog, int ninstr, float** reg, const float* sval,
                            const unsigned char* is_s, Py_ssize_t m)
    void ptc_fused_eval_f64(const int32_t* prog, int ninstr, double** reg, const double* sval,
                            const unsigned char* is_s, Py_ssize_t m)
    int ptc_fused_level()
    int ptc_fused_set_level(int level)

cdef enum:
    BLOCK = 256       # 7 float32 temporaries of a block stay in a 32 KiB L1 cache
    MAXREG = 128
    MAXDIM = 16
    # how a register gets its block
    R_TEMP = 0        # written by the program (scratch, or the output's memory)
    R_SCALAR = 1      # a constant: filled once
    R_DENSE = 2       # points into a dense input of the full size
    R_GATHER = 3      # gathered from a strided / broadcast / bool input

OPCODE_COUNT = PF_NUM


def isa_level():
    """Which copy of the float32 kernels runs: 2 AVX-512, 1 AVX2+FMA, 0 the
    baseline.  They give the same bits (the same operations in the same order,
    fused multiply-adds in all of them)."""
    return ptc_fused_level()


def _set_isa_level(int level):
    """Run the copy for ``level`` (at most what the CPU has; -1: the CPU's
    best again) and return the level now used.  For tests that compare the
    copies."""
    if level < -1 or level > 2:
        raise ValueError(f"isa level must be -1, 0, 1 or 2, got {level}")
    return ptc_fused_set_level(level)


cdef inline void _bools_f32(float* dst, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        dst[i] = <float>(p[i] != 0)


cdef void _gather(char* dst, const char* base, int nd, const Py_ssize_t* shape,
                  const Py_ssize_t* st, Py_ssize_t start, Py_ssize_t m, bint src_bool,
                  bint f64) noexcept nogil:
    """Elements ``start .. start+m`` (C order over ``shape``) of the operand
    at ``base`` with element strides ``st`` into ``dst`` as the compute type."""
    cdef Py_ssize_t coord[MAXDIM]
    cdef Py_ssize_t off = 0, r = start, q, run, i, j = 0, s
    cdef int d
    cdef const char* p
    for d in range(nd - 1, -1, -1):
        q = r // shape[d]
        coord[d] = r - q * shape[d]
        off += coord[d] * st[d]
        r = q
    while j < m:
        run = shape[nd - 1] - coord[nd - 1]
        if run > m - j:
            run = m - j
        s = st[nd - 1]
        if src_bool:
            p = base + off
            if f64:
                for i in range(run):
                    (<double*>dst)[j + i] = 1.0 if p[i * s] != 0 else 0.0
            elif s == 1:
                # (a unit stride: a loop the compiler vectorises -- an attention
                # mask's rows, 4x faster than the strided loop)
                _bools_f32(<float*>dst + j, <const unsigned char*>p, run)
            else:
                for i in range(run):
                    (<float*>dst)[j + i] = 1.0 if p[i * s] != 0 else 0.0
        elif f64:
            p = base + off * 8
            if s == 1:
                memcpy(<double*>dst + j, p, run * 8)
            else:
                for i in range(run):
                    (<double*>dst)[j + i] = (<const double*>p)[i * s]
        else:
            p = base + off * 4
            if s == 1:
                memcpy(<float*>dst + j, p, run * 4)
            else:
                for i in range(run):
                    (<float*>dst)[j + i] = (<const float*>p)[i * s]
        j += run
        # advance the coordinates by run elements (run ends the innermost row
        # unless the block ended)
        off += run * s
        coord[nd - 1] += run
        d = nd - 1
        while d > 0 and coord[d] == shape[d]:
            off -= coord[d] * st[d]
            coord[d] = 0
            d -= 1
            coord[d] += 1
            off += st[d]


cdef struct _State:
    const int32_t* prog
    int ninstr, nin, nreg, nout, nd
    bint f64
    size_t isz
    Py_ssize_t n, blen
    const Py_ssize_t* shp
    const Py_ssize_t* bst
    const int* kind
    const bint* src_bool
    char** in_ptr
    const double* sval64
    const float* sval32
    const unsigned char* is_s
    char** out_ptr
    const bint* out_bool
    const int* oreg
    char* scratch


cdef void _block(const _State* S, char** reg, int t, Py_ssize_t blk) noexcept nogil:
    """Evaluate block ``blk`` with thread ``t``'s registers ``reg``."""
    cdef Py_ssize_t start = blk * BLOCK, i
    cdef Py_ssize_t m = BLOCK if start + BLOCK <= S.n else S.n - start
    cdef int k
    cdef size_t isz = S.isz
    for k in range(S.nin):
        if S.kind[k] == R_DENSE:
            reg[k] = S.in_ptr[k] + start * isz
        elif S.kind[k] == R_GATHER:
            _gather(reg[k], S.in_ptr[k], S.nd, S.shp, S.bst + k * MAXDIM, start, m,
                    S.src_bool[k], S.f64)
    for k in range(S.nout):
        if S.out_bool[k]:
            reg[S.oreg[k]] = S.scratch + (t * S.nreg + S.oreg[k]) * S.blen * isz
        else:
            reg[S.oreg[k]] = S.out_ptr[k] + start * isz
    if S.f64:
        ptc_fused_eval_f64(S.prog, S.ninstr, <double**>reg, S.sval64, S.is_s, m)
    else:
        ptc_fused_eval_f32(S.prog, S.ninstr, <float**>reg, S.sval32, S.is_s, m)
    for k in range(S.nout):
        if S.out_bool[k]:
            for i in range(m):
                if S.f64:
                    (<unsigned char*>S.out_ptr[k])[start + i] = (<double*>reg[S.oreg[k]])[i] != 0
                else:
                    (<unsigned char*>S.out_ptr[k])[start + i] = (<float*>reg[S.oreg[k]])[i] != 0


def run(list operands, const int32_t[::1] prog, int nreg, const int32_t[::1] out_regs,
        list outs, tuple shape, bint f64):
    """Evaluate ``prog`` over ``operands`` into the tensors ``outs`` (see the
    module docstring); ``shape`` is the iteration shape, ``f64`` selects the
    compute dtype (float64, else float32)."""
    cdef int nin = len(operands), ninstr, k, t, nthreads, d, nd = len(shape), nout, nd0
    cdef Py_ssize_t n = 1, nblocks, blk, start, m, i, j
    cdef int cdt = PT_FLOAT64 if f64 else PT_FLOAT32
    cdef size_t isz = 8 if f64 else 4
    cdef Py_ssize_t shp[MAXDIM]
    cdef Py_ssize_t* bst
    cdef int kind[MAXREG]
    cdef bint src_bool[MAXREG]
    cdef char* in_ptr[MAXREG]
    cdef double sval64[MAXREG]
    cdef float sval32[MAXREG]
    cdef unsigned char is_s[MAXREG]
    cdef char* out_ptr[MAXREG]
    cdef bint out_bool[MAXREG]
    cdef int oreg[MAXREG]
    cdef char* scratch = NULL
    cdef char** regs = NULL
    cdef char** reg
    cdef _TensorBase x
    cdef double v
    cdef int off
    cdef _State S
    if prog.shape[0] % 5:
        raise ValueError("fused kernel: malformed program (instructions are 5 int32)")
    ninstr = prog.shape[0] // 5
    nout = len(outs)
    if nreg > MAXREG or nin > nreg or nout != out_regs.shape[0] or nout < 1:
        raise ValueError("fused kernel: malformed program (registers or outputs)")
    if nd > MAXDIM:
        raise ValueError(f"fused kernel: at most {MAXDIM} dims, got {nd}")
    for d in range(nd):
        shp[d] = shape[d]
        if shp[d] < 0:
            raise ValueError(f"fused kernel: bad shape {shape}")
        n *= shp[d]
    nd0 = nd
    if nd == 0:
        nd = 1
        shp[0] = 1
    for k in range(ninstr):
        if prog[5 * k] < 0 or prog[5 * k] >= PF_NUM:
            raise ValueError("fused kernel: unknown opcode")
        for j in range(1, 5):
            if prog[5 * k + j] < 0 or prog[5 * k + j] >= nreg:
                raise ValueError("fused kernel: bad register")
        if prog[5 * k + 1] < nin:
            raise ValueError("fused kernel: an instruction writes an input register")
        for j in range(2, 5):
            if prog[5 * k + j] == prog[5 * k + 1]:
                raise ValueError("fused kernel: an instruction's destination is also its source")
    for k in range(nout):
        if out_regs[k] < nin or out_regs[k] >= nreg:
            raise ValueError("fused kernel: an output must be a register written by the program")
        for j in range(k):
            if out_regs[j] == out_regs[k]:
                raise ValueError("fused kernel: two outputs share a register")
        o = outs[k]
        if isinstance(o, dtype) and ((<dtype>o).num == cdt or (<dtype>o).num == PT_BOOL):
            o = outs[k] = _empty_contig(<dtype>o, nd0, shp, _CPU, False)
        if not isinstance(o, _TensorBase):
            raise TypeError("fused kernel: outputs must be tensors, or the compute dtype or bool")
        x = <_TensorBase>o
        if (x._dtype.num != cdt and x._dtype.num != PT_BOOL) or x._numel != n or \
                not x._is_contig():
            raise ValueError("fused kernel: outputs must be contiguous, of the compute dtype or "
                             "bool, with the iteration shape's size")
        oreg[k] = out_regs[k]
        out_ptr[k] = x._ptr()
        out_bool[k] = x._dtype.num == PT_BOOL
    # tensor operands: broadcast strides over shp (element strides, 0 where expanded)
    bst = <Py_ssize_t*>ptc_scratch_malloc(max(nin, 1) * MAXDIM * sizeof(Py_ssize_t))
    if bst == NULL:
        raise MemoryError("fused kernel: out of memory for the operand strides")
    try:
        for k in range(nreg):
            kind[k] = R_TEMP
            is_s[k] = 0
            sval32[k] = 0
            sval64[k] = 0
            src_bool[k] = False
            in_ptr[k] = NULL
        for k in range(nin):
            o = operands[k]
            if isinstance(o, _TensorBase):
                x = <_TensorBase>o
                if x._dtype.num != cdt and x._dtype.num != PT_BOOL:
                    raise TypeError(f"fused kernel: operand {k} has dtype {x._dtype}, expected "
                                    f"{'float64' if f64 else 'float32'} or bool")
                if x._ndim > nd:
                    raise ValueError(f"fused kernel: operand {k} of shape {tuple(x.shape)} does "
                                     f"not broadcast to {shape}")
                off = nd - x._ndim
                for d in range(nd):
                    bst[k * MAXDIM + d] = 0
                for d in range(x._ndim):
                    if x._shape[d] == shp[off + d]:
                        bst[k * MAXDIM + off + d] = x._strides[d] if shp[off + d] != 1 else 0
                    elif x._shape[d] != 1:
                        raise ValueError(f"fused kernel: operand {k} of shape {tuple(x.shape)} "
                                         f"does not broadcast to {shape}")
                in_ptr[k] = x._ptr()
                src_bool[k] = x._dtype.num == PT_BOOL
                if x._numel == 1:             # a single value: a scalar register
                    if src_bool[k]:
                        v = 1.0 if (<unsigned char*>in_ptr[k])[0] != 0 else 0.0
                    elif f64:
                        v = (<double*>in_ptr[k])[0]
                    else:
                        v = (<float*>in_ptr[k])[0]
                    kind[k] = R_SCALAR
                elif x._numel == n and not src_bool[k] and x._is_contig():
                    kind[k] = R_DENSE
                    continue
                else:
                    kind[k] = R_GATHER
                    continue
            elif isinstance(o, (int, float)) and not isinstance(o, bool):
                v = float(o)
                kind[k] = R_SCALAR
            else:
                raise TypeError(f"fused kernel: operand {k} must be a tensor or a real number, "
                                f"not {type(o).__name__}")
            is_s[k] = 1
            sval64[k] = v
            sval32[k] = <float>v
        if n == 0:
            return outs
        nblocks = (n + BLOCK - 1) // BLOCK
        nthreads = get_num_threads()
        if nthreads > nblocks:
            nthreads = <int>nblocks
        if nthreads < 1:
            nthreads = 1
        S.blen = BLOCK if n > BLOCK else n
        # per thread: one block buffer per register; scalar registers are
        # filled once (ops other than the binary ones read them as buffers)
        scratch = <char*>ptc_scratch_malloc(nthreads * nreg * S.blen * isz)
        regs = <char**>ptc_scratch_malloc(nthreads * nreg * sizeof(char*))
        if scratch == NULL or regs == NULL:
            raise MemoryError("fused kernel: no memory for the block buffers")
        for t in range(nthreads):
            for k in range(nreg):
                regs[t * nreg + k] = scratch + (t * nreg + k) * S.blen * isz
                if kind[k] == R_SCALAR:
                    for i in range(S.blen):
                        if f64:
                            (<double*>regs[t * nreg + k])[i] = sval64[k]
                        else:
                            (<float*>regs[t * nreg + k])[i] = sval32[k]
        S.prog = &prog[0] if ninstr else NULL
        S.ninstr = ninstr
        S.nin = nin
        S.nreg = nreg
        S.nout = nout
        S.nd = nd
        S.f64 = f64
        S.isz = isz
        S.n = n
        S.shp = shp
        S.bst = bst
        S.kind = kind
        S.src_bool = src_bool
        S.in_ptr = in_ptr
        S.sval64 = sval64
        S.sval32 = sval32
        S.is_s = is_s
        S.out_ptr = out_ptr
        S.out_bool = out_bool
        S.oreg = oreg
        S.scratch = scratch
        ptc_kernel_enter()
        with nogil:
            try:
                if nthreads == 1:
                    for blk in range(nblocks):
                        _block(&S, regs, 0, blk)
                else:
                    for blk in prange(nblocks, num_threads=nthreads, schedule="static"):
                        t = threadid()
                        _block(&S, regs + t * nreg, t, blk)
            finally:
                ptc_kernel_exit()
    finally:
        free(bst)
        free(regs)
        free(scratch)
    return outs
