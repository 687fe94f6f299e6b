# cython: language_level=3, boundscheck=False, wraparound=False
"""The dense fast paths of CUDA's convolutions, in C.

A convolution's general path on CUDA (``F.conv2d``'s front-end checks, the
autograd Function, ``nn.functional._conv._prim``'s reshapes and
``ptcore/cuda/ops/nn.py``'s ``conv_forward``/``conv_backward_*`` launching
their kernels through the Python launcher) cost 160-200 us of host time per
call on an AVX2 EPYC with the kernels stubbed out -- more than the GPU's
time for a LeNet layer.  Here the same three primitives are made from
Cython with the same kernels, the same GEMM calls and the same arguments,
so bitwise the same results:

* :func:`prim` -- ``_prim``'s primitive (``"fwd"``: ``y = conv(x, w) +
  b``; ``"bx"``: the input gradient; ``"bw"``: the weight gradient) of
  contiguous float32/float64 operands on one CUDA device whose column
  buffer fits the budget in one chunk (the weight gradient: by per-sample
  products);
* :func:`conv` -- the whole ``F.conv1d/2d/3d`` call (arguments parsed and
  checked as ``_prepare_conv`` does) for a batched input, returning the
  result and the geometry the autograd node keeps.

Anything else -- another dtype or layout (channels-last), an unbatched
input, size 0, groups or arguments that do not divide, the column buffer
over budget (the general path chunks the batch), the kernels not loaded yet
(the general path loads their group) -- returns None: the general path
takes the call and raises the errors.
"""
from libc.stdint cimport uintptr_t
from libc.string cimport memset
from cpython.bytes cimport PyBytes_AS_STRING

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase, dtype
from ptcore.cuda.runtime.device_storage cimport _dense_shaped
from ptcore.cuda.ops.dense_fast cimport (_kernel, _run, _launch_vals, ptc_params, _FAM_NAMED,
                                         _FAM_COPY, _FAM_COPY_STRIDED)

from ptcore import _tensor as _C
from ptcore.cuda.kernels import library as _library
from ptcore.cuda.kernels import nn as _KN
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.ops.strided_args import strided_arg

__all__ = ["prim", "conv"]

cdef dict _state = _runtime._state      # updated in place, never rebound
cdef dict _functions = _launch._functions
cdef object _stream_of = _runtime.current_stream_handle
cdef object _gemm_types = _launch._conv_gemm_types

# the kernels' ptc_convgeo, in this order (nn.CONV_FIELDS)
if tuple(_KN.CONV_FIELDS) != ("C", "D", "H", "W", "OD", "OH", "OW", "kd", "kh", "kw", "sd", "sh",
                              "sw", "pd", "ph", "pw", "dd", "dh", "dw"):
    raise ImportError("conv_fast: ptc_convgeo's fields changed")

cdef dict _NAMES = {}                   # dtype -> (im2col, col2im, fill) kernel names
for _conv_dt in (_C.float32, _C.float64):
    _conv_tag = _launch._tag(_conv_dt, "conv")
    _NAMES[_conv_dt] = (f"ptc_nnconv_im2col_{_conv_tag}", f"ptc_nnconv_col2im_{_conv_tag}",
                        _library.kernel_name("fill", "", (_launch._tag(_conv_dt, "fill_"),), "c"))


cdef struct _Geo:
    Py_ssize_t N, C, OC, G, Cg, OCg, Lo, KK
    long long g[19]                     # ptc_convgeo


cdef bint _small_int(object v, Py_ssize_t* out) noexcept:
    if type(v) is not int:
        return False
    if v < -(1 << 62) or v > (1 << 62):
        return False
    out[0] = <Py_ssize_t>v
    return True


cdef bint _ints(object v, int nd, Py_ssize_t* out) noexcept:
    """An int or a list/tuple of ``nd`` ints (or of one, repeated): ``_tuple``."""
    cdef Py_ssize_t i, n
    if type(v) is int:
        if not _small_int(v, &out[0]):
            return False
        for i in range(1, nd):
            out[i] = out[0]
        return True
    if type(v) is not tuple and type(v) is not list:
        return False
    n = len(v)
    if n == 1 and nd != 1:
        if not _small_int(v[0], &out[0]):
            return False
        for i in range(1, nd):
            out[i] = out[0]
        return True
    if n != nd:
        return False
    for i in range(nd):
        if not _small_int(v[i], &out[i]):
            return False
    return True


cdef bint _dense_operand(_TensorBase t, _TensorBase like) noexcept:
    """``t`` contiguous, of ``like``'s dtype and CUDA device."""
    return (t._dtype is like._dtype and t._storage.device._type_code == 1
            and t._storage.device._idx == like._storage.device._idx and t._is_contig())


cdef bint _suggests_channels_last(_TensorBase t) noexcept:
    """``_memory_format._suggest_memory_format(t)`` is channels_last(_3d)."""
    cdef int nd = t._ndim
    cdef int order4[4]
    cdef int order5[5]
    cdef int* order
    cdef int i, d
    cdef Py_ssize_t lo = 0
    if nd != 4 and nd != 5:
        return False
    if t._strides[1] == 0:
        return False
    order4[:] = [1, 3, 2, 0]
    order5[:] = [1, 4, 3, 2, 0]
    if nd == 4:
        order = &order4[0]
    else:
        order = &order5[0]
    for i in range(nd):
        d = order[i]
        if t._shape[d] == 0 or t._strides[d] < lo or (d == 0 and lo == t._strides[1]):
            return False
        lo = t._strides[d] * (t._shape[d] if t._shape[d] > 1 else 1)
    return True


cdef bint _mul(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* out) noexcept:
    """``out = a * b`` for non-negative operands, False on overflow past 2^62."""
    if a != 0 and b > (<Py_ssize_t>1 << 62) // a:
        return False
    out[0] = a * b
    return True


cdef bint _geometry(_Geo* G, Py_ssize_t* xs, Py_ssize_t* ws, Py_ssize_t* ys, int nd,
                    Py_ssize_t groups, Py_ssize_t* stride, Py_ssize_t* pad, Py_ssize_t* dil,
                    Py_ssize_t isz, Py_ssize_t budget, bint weight_grad) noexcept:
    """Fill ``G`` from the natural shapes (N, C, *spatial) of x, w and y
    (``nd`` spatial dims) and the 3-D stride/padding/dilation; False when
    the sizes do not agree, one is 0, or the columns exceed ``budget``."""
    cdef int i
    cdef Py_ssize_t col, part
    G.N, G.C, G.OC, G.G = xs[0], xs[1], ys[1], groups
    if groups <= 0 or G.N <= 0 or G.C <= 0 or G.OC <= 0 or ys[0] != G.N \
            or G.C % groups or G.OC % groups:
        return False
    G.Cg, G.OCg = G.C // groups, G.OC // groups
    if ws[0] != G.OC or ws[1] != G.Cg:
        return False
    G.g[0] = G.C
    for i in range(3):
        if i < 3 - nd:
            G.g[1 + i] = G.g[4 + i] = G.g[7 + i] = 1
        else:
            G.g[1 + i] = xs[2 + i - (3 - nd)]
            G.g[7 + i] = ws[2 + i - (3 - nd)]
            G.g[4 + i] = ys[2 + i - (3 - nd)]
        G.g[10 + i] = stride[i]
        G.g[13 + i] = pad[i]
        G.g[16 + i] = dil[i]
        if G.g[1 + i] <= 0 or G.g[4 + i] <= 0 or G.g[7 + i] <= 0 or stride[i] <= 0 \
                or pad[i] < 0 or dil[i] <= 0:
            return False
    # (the output sizes are the caller's: the kernels bound every input position they read)
    if not _mul(G.g[4], G.g[5], &G.Lo) or not _mul(G.Lo, G.g[6], &G.Lo) \
            or not _mul(G.g[7], G.g[8], &G.KK) or not _mul(G.KK, G.g[9], &G.KK):
        return False
    # the columns of the whole batch (bytes) within the budget: one chunk
    if not _mul(G.C, G.KK, &col) or not _mul(col, G.Lo, &col):
        return False
    if weight_grad:
        # per-sample products no larger than the columns (else the general path's other branch)
        if not _mul(G.OC, G.Cg, &part) or not _mul(part, G.KK, &part) or part > col:
            return False
        col += part
    if not _mul(col, isz, &col) or not _mul(col, G.N, &part) or part > budget:
        return False
    return True


cdef int _gemm(object drv, Py_ssize_t idx, int typ, int comp, int ta, int tb, Py_ssize_t m,
               Py_ssize_t n, Py_ssize_t k, uintptr_t a, Py_ssize_t lda, uintptr_t b,
               Py_ssize_t ldb, uintptr_t c, Py_ssize_t ldc, Py_ssize_t batch, Py_ssize_t sa,
               Py_ssize_t sb, Py_ssize_t sc, double beta) except -1:
    """``nn._gemm_rm``: ``C[m, n] = op(A) @ op(B)`` per batch, row-major
    (column-major ``C^T = op(B)^T op(A)^T``); the same driver call."""
    if m == 0 or n == 0:
        return 0
    drv.gemm(idx, _stream_of(idx), tb, ta, n, m, k, 1.0, b, typ, ldb, a, typ, lda, beta, c, typ,
             ldc, comp, batch=batch, stride_a=sb, stride_b=sa, stride_c=sc)
    return 0


cdef int _geo_launch(tuple e, Py_ssize_t idx, long long n, _TensorBase p0, _TensorBase p1,
                     _Geo* G) except -1:
    """Launch ``e(n, p0, p1, ptc_convgeo)`` (im2col: col, x; col2im: x, col)."""
    cdef unsigned long long a = <uintptr_t>p0._ptr(), b = <uintptr_t>p1._ptr()
    cdef void* kp[4]
    kp[0] = &n
    kp[1] = &a
    kp[2] = &b
    kp[3] = G.g
    return _run(e, idx, n, kp)


cdef tuple _loaded(_TensorBase t):
    """The im2col/col2im/fill names of t's dtype when the driver launches
    from C and the group of the conv kernels is loaded on t's device (the
    general path loads it), else None."""
    drv = _state["driver"]
    if drv is None or _kernel(_FAM_COPY, None, t) is None:
        return None
    cdef Py_ssize_t idx = t._storage.device._idx
    names = _NAMES.get(t._dtype)
    if names is None or (drv, idx, (<tuple>names)[0]) not in _functions \
            or (drv, idx, (<tuple>names)[1]) not in _functions:
        return None
    return <tuple>names


cdef _TensorBase _run_prim(int kind, _TensorBase a, _TensorBase b, object bias, _Geo* G,
                           int nout, Py_ssize_t* oshape, tuple names):
    """The primitive ``kind`` (0 fwd, 1 bx, 2 bw) into a new tensor of shape
    ``oshape``: nn.conv_forward / conv_backward_input /
    conv_backward_weight for one chunk."""
    cdef Py_ssize_t idx = a._storage.device._idx
    cdef Py_ssize_t isz = a._dtype.itemsize
    cdef _TensorBase out = _dense_shaped(a, a._dtype, nout, oshape)    # (a's device current)
    cdef Py_ssize_t cshape[3]
    cshape[0], cshape[1], cshape[2] = G.N, G.C * G.KK, G.Lo
    cdef _TensorBase col = _dense_shaped(a, a._dtype, 3, cshape)
    cdef object drv = _state["driver"]
    cdef int typ, comp, gi
    typ, comp = _gemm_types(a._dtype, "conv")
    cdef Py_ssize_t CgKK = G.Cg * G.KK
    cdef Py_ssize_t CKL = G.C * G.KK * G.Lo
    cdef uintptr_t pa = <uintptr_t>a._ptr(), pb = <uintptr_t>b._ptr()
    cdef uintptr_t pc = <uintptr_t>col._ptr(), po = <uintptr_t>out._ptr()
    cdef tuple e
    cdef object st
    cdef _TensorBase bview, ones, part
    cdef long long v[3]
    cdef ptc_params p
    cdef void* kp[3]
    cdef long long nn
    cdef unsigned long long op
    if kind == 0:
        if bias is not None:
            # the bias first, broadcast over y; the GEMMs then add their products to it
            bview = (<_TensorBase>bias).reshape((1, G.OC) + (1,) * (nout - 2))
            st = strided_arg(out, (bview,))
            e = _kernel(_FAM_COPY if st is None else _FAM_COPY_STRIDED, None, out)
            v[0] = out._numel
            v[1] = <long long>po
            v[2] = <long long><uintptr_t>bview._ptr()
            _launch_vals(e, idx, out._numel, False, v, 3,
                         NULL if st is None else <void*>PyBytes_AS_STRING(st))
        _geo_launch(_kernel(_FAM_NAMED, names[0], a), idx, col._numel, col, a, G)
        for gi in range(G.G):
            _gemm(drv, idx, typ, comp, 0, 0, G.OCg, G.Lo, CgKK,
                  pb + gi * G.OCg * CgKK * isz, CgKK, pc + gi * CgKK * G.Lo * isz, G.Lo,
                  po + gi * G.OCg * G.Lo * isz, G.Lo, G.N, 0, CKL, G.OC * G.Lo,
                  0.0 if bias is None else 1.0)
    elif kind == 1:
        for gi in range(G.G):
            _gemm(drv, idx, typ, comp, 1, 0, CgKK, G.Lo, G.OCg,
                  pb + gi * G.OCg * CgKK * isz, CgKK, pa + gi * G.OCg * G.Lo * isz, G.Lo,
                  pc + gi * CgKK * G.Lo * isz, G.Lo, G.N, 0, G.OC * G.Lo, CKL, 0.0)
        _geo_launch(_kernel(_FAM_NAMED, names[1], a), idx, out._numel, out, col, G)
    else:
        # a = x, b = gy: the per-sample products gy_n,g @ col_n,g^T, summed by ones @ products
        _geo_launch(_kernel(_FAM_NAMED, names[0], a), idx, col._numel, col, a, G)
        ones = _dense_shaped(a, a._dtype, 1, &G.N)
        memset(&p, 0, sizeof(p))
        p.d0 = 1.0
        nn = G.N
        op = <uintptr_t>ones._ptr()
        kp[0] = &nn
        kp[1] = &op
        kp[2] = &p
        _run(_kernel(_FAM_NAMED, names[2], a), idx, nn, kp)
        cshape[0], cshape[1], cshape[2] = G.N, G.OC, CgKK
        part = _dense_shaped(a, a._dtype, 3, cshape)
        _gemm(drv, idx, typ, comp, 0, 1, G.OCg, CgKK, G.Lo, pb, G.Lo, pc, G.Lo,
              <uintptr_t>part._ptr(), CgKK, G.N * G.G, G.OCg * G.Lo, CgKK * G.Lo,
              G.OCg * CgKK, 0.0)
        _gemm(drv, idx, typ, comp, 0, 0, 1, G.OC * CgKK, G.N, op, G.N,
              <uintptr_t>part._ptr(), G.OC * CgKK, po, G.OC * CgKK, 1, 0, 0, 0, 0.0)
    return out


cdef bint _shape_of(object shape, int n, Py_ssize_t* out) noexcept:
    if type(shape) is not tuple or len(shape) != n:
        return False
    cdef int i
    for i in range(n):
        if not _small_int(shape[i], &out[i]):
            return False
    return True


def prim(str kind, a, b, bias, tuple geo, tuple out_shape, Py_ssize_t budget):
    """``nn.functional._conv._prim(kind, a, b, bias, geo, out_shape)`` for
    float32/float64 CUDA operands (made contiguous) within one chunk of
    ``budget`` bytes of columns (``bias`` only with ``"fwd"``); None for
    anything else."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    cdef int k = 0 if kind == "fwd" else (1 if kind == "bx" else (2 if kind == "bw" else -1))
    cdef int num = ta._dtype.num
    cdef int nd = ta._ndim
    if k < 0 or (num != PT_FLOAT32 and num != PT_FLOAT64) or ta._storage.device._type_code != 1 \
            or tb._dtype is not ta._dtype or tb._storage.device._type_code != 1 \
            or tb._storage.device._idx != ta._storage.device._idx or tb._ndim != nd \
            or nd < 3 or nd > 5 or len(geo) != 6 or geo[0] != nd - 2 \
            or ta._numel == 0 or tb._numel == 0:
        return None
    # (a strided operand -- a gradient expanded from a sum -- copied, as the general path's _c5)
    if not ta._is_contig():
        ta = <_TensorBase>ta.contiguous()
    if not tb._is_contig():
        tb = <_TensorBase>tb.contiguous()
    if bias is not None and (k != 0 or not isinstance(bias, _TensorBase)
                             or not _dense_operand(<_TensorBase>bias, ta)
                             or (<_TensorBase>bias)._ndim != 1):
        return None
    names = _loaded(ta)
    if names is None:
        return None
    cdef Py_ssize_t os[5]
    cdef Py_ssize_t st[3]
    cdef Py_ssize_t pd[3]
    cdef Py_ssize_t dl[3]
    cdef Py_ssize_t groups
    if not _shape_of(out_shape, nd, os) or not _ints(geo[1], 3, st) or not _ints(geo[2], 3, pd) \
            or not _ints(geo[3], 3, dl) or not _small_int(geo[4], &groups):
        return None
    cdef _Geo G
    cdef Py_ssize_t* xs
    cdef Py_ssize_t* ws
    cdef Py_ssize_t* ys
    if k == 0:
        xs, ws, ys = ta._shape, tb._shape, os
    elif k == 1:
        xs, ws, ys = os, tb._shape, ta._shape
    else:
        xs, ws, ys = ta._shape, os, tb._shape
    if not _geometry(&G, xs, ws, ys, nd - 2, groups, st, pd, dl, ta._dtype.itemsize, budget,
                     k == 2):
        return None
    if bias is not None and (<_TensorBase>bias)._shape[0] != G.OC:
        return None
    return _run_prim(k, ta, tb, bias, &G, nd, os, names)


cdef tuple _ARGS = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")


cdef list _bind(tuple args, dict kwargs, tuple names, list values):
    """``values`` (the defaults) with a call's positional and keyword
    arguments for parameters ``names`` in place; None for a call the
    general path must see (too many arguments, an unknown keyword, one
    given twice: its error)."""
    cdef Py_ssize_t n = len(args), m = len(names), i, j
    if n < 1 or n > m:
        return None
    for i in range(n):
        values[i] = args[i]
    if kwargs:
        for key, val in kwargs.items():
            j = -1
            for i in range(m):
                if key == names[i]:
                    j = i
                    break
            if j < n:
                return None
            values[j] = val
    return values


def conv(tuple args, dict kwargs, int nd, Py_ssize_t budget):
    """``F.conv{nd}d(input, weight, bias=None, stride=1, padding=0,
    dilation=1, groups=1)`` of a batched contiguous float32/float64 CUDA
    input and weight (neither channels-last): ``(y, input, weight, bias,
    geo)`` with ``geo`` as ``_prepare_conv`` makes it; None for anything
    else."""
    cdef Py_ssize_t i
    cdef list v = _bind(args, kwargs, _ARGS, [None, None, None, 1, 0, 1, 1])
    if v is None:
        return None
    x, w, bias = v[0], v[1], v[2]
    if not isinstance(x, _TensorBase) or not isinstance(w, _TensorBase):
        return None
    cdef _TensorBase tx = <_TensorBase>x, tw = <_TensorBase>w
    cdef int num = tx._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tx._storage.device._type_code != 1 \
            or tx._ndim != nd + 2 or tw._ndim != nd + 2 or not tx._is_contig() \
            or not _dense_operand(tw, tx) or _suggests_channels_last(tx) \
            or _suggests_channels_last(tw):
        return None
    if bias is not None and (not isinstance(bias, _TensorBase)
                             or not _dense_operand(<_TensorBase>bias, tx)
                             or (<_TensorBase>bias)._ndim != 1
                             or (<_TensorBase>bias)._shape[0] != tw._shape[0]):
        return None
    cdef Py_ssize_t st[3]
    cdef Py_ssize_t pd[3]
    cdef Py_ssize_t pr[3]
    cdef Py_ssize_t dl[3]
    cdef Py_ssize_t ys[5]
    cdef Py_ssize_t groups, padded, eff, o
    cdef int off = 3 - nd
    for i in range(3):
        st[i] = pd[i] = pr[i] = 0
        dl[i] = 1
    if not _ints(v[3], nd, &st[off]) or not _ints(v[5], nd, &dl[off]) \
            or not _small_int(v[6], &groups) or groups <= 0:
        return None
    for i in range(off):
        st[i] = 1
    pad = v[4]
    for i in range(off, 3):
        if st[i] <= 0 or dl[i] <= 0 or dl[i] > (1 << 30) or tw._shape[2 + i - off] <= 0:
            return None
    if type(pad) is str:
        if pad == "valid":
            pass
        elif pad == "same":
            for i in range(off, 3):
                if st[i] != 1:
                    return None
                eff = dl[i] * (tw._shape[2 + i - off] - 1)
                pd[i] = eff // 2
                pr[i] = eff - eff // 2
        else:
            return None
    else:
        if not _ints(pad, nd, &pd[off]):
            return None
        for i in range(off, 3):
            if pd[i] < 0 or pd[i] > (1 << 40):
                return None
            pr[i] = pd[i]
    if tx._shape[1] != tw._shape[1] * groups or tw._shape[0] % groups:
        return None
    ys[0], ys[1] = tx._shape[0], tw._shape[0]
    for i in range(off, 3):
        padded = tx._shape[2 + i - off] + pd[i] + pr[i]
        eff = dl[i] * (tw._shape[2 + i - off] - 1) + 1
        if padded < eff:
            return None
        o = (padded - eff) // st[i] + 1
        ys[2 + i - off] = o
        if o == 1:
            st[i] = 1           # ``_used_strides``: a stride over one output position is never applied
    names = _loaded(tx)
    if names is None:
        return None
    cdef _Geo G
    if not _geometry(&G, tx._shape, tw._shape, ys, nd, groups, st, pd, dl, tx._dtype.itemsize,
                     budget, False):
        return None
    y = _run_prim(0, tx, tw, bias, &G, nd + 2, ys, names)
    geo = (nd, (st[0], st[1], st[2]), (pd[0], pd[1], pd[2]), (dl[0], dl[1], dl[2]), groups,
           (G.g[4], G.g[5], G.g[6]))
    return y, x, w, bias, geo


# ---------------------------------------------------------------------------
# max pooling

cdef tuple _POOL_ARGS = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                         "return_indices")
cdef dict _MAXFWD = {}                  # dtype -> ptc_nnpool_maxfwd_<tag>
for _pool_dt in (_C.float32, _C.float64):
    _MAXFWD[_pool_dt] = f"ptc_nnpool_maxfwd_{_launch._tag(_pool_dt, 'max_pool')}"
cdef object _I64 = _C.int64


cdef bint _int32s(Py_ssize_t* v, int n) noexcept:
    """torch's pooling narrows its parameters to int: all within int32."""
    cdef int i
    for i in range(n):
        if v[i] < -2147483648 or v[i] > 2147483647:
            return False
    return True


cdef bint _entry_fits(tuple e, _TensorBase x, int nd, int off, tuple osz) except -1:
    """The cached entry (``nn._windows``'s table and struct, validated where
    they are made) is for x's device and spatial size and output size
    ``osz``: the struct's sizes, the table's dtype, device and length."""
    cdef const long long* g
    cdef Py_ssize_t i, sin[3], sout[3], pout = 1
    if len(e) != 6 or len(osz) != nd or not isinstance(e[1], _TensorBase) \
            or type(e[2]) is not bytes or len(<bytes>e[2]) != 80:
        return False
    for i in range(3):
        sin[i] = 1 if i < 3 - nd else x._shape[off + i - (3 - nd)]
        sout[i] = 1 if i < 3 - nd else <Py_ssize_t>osz[i - (3 - nd)]
        if sout[i] < 1:
            return False
        pout *= sout[i]
    g = <const long long*>PyBytes_AS_STRING(<bytes>e[2])
    for i in range(3):
        if g[i] != sin[i] or g[3 + i] != sout[i]:
            return False
    cdef _TensorBase win = <_TensorBase>e[1]
    # starts, ends, factors (outputs each), then the gather ranges lo, hi (inputs each)
    return (win._dtype is _I64 and win._storage.device._type_code == 1
            and win._storage.device._idx == x._storage.device._idx and win._is_contig()
            and win._numel >= 3 * (sout[0] + sout[1] + sout[2]) + 2 * (sin[0] + sin[1] + sin[2])
            and e[3] == pout)


def max_pool(tuple args, dict kwargs, int nd, dict windows):
    """``F.max_pool{nd}d(input, kernel_size, stride=None, padding=0,
    dilation=1, ceil_mode=False, return_indices=False)`` (``nd`` 2 or 3) of
    a contiguous float32/float64 CUDA input (not channels-last), with the
    window tables of the geometry in ``windows``: ``(1, y, indices, input,
    entry, return_indices)``; ``(0, key, input, k, s, p, d, ceil_mode)``
    when ``windows`` has no entry for the geometry (``key``; the caller
    makes the entry ``(driver, table, geo struct, outputs per plane, output
    size, window)`` and calls again); None for anything else (the general
    path)."""
    cdef Py_ssize_t i
    if nd != 2 and nd != 3:
        return None
    cdef list v = _bind(args, kwargs, _POOL_ARGS, [None, None, None, 0, 1, False, False])
    if v is None:
        return None
    x = v[0]
    if v[1] is None or not isinstance(x, _TensorBase) or (v[5] is not True and v[5] is not False) \
            or (v[6] is not True and v[6] is not False):
        return None
    cdef _TensorBase tx = <_TensorBase>x
    cdef int num = tx._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tx._storage.device._type_code != 1 \
            or (tx._ndim != nd + 1 and tx._ndim != nd + 2) or tx._numel == 0 \
            or not tx._is_contig() or (tx._ndim == nd + 2 and _suggests_channels_last(tx)):
        return None
    cdef Py_ssize_t k[3]
    cdef Py_ssize_t s[3]
    cdef Py_ssize_t p[3]
    cdef Py_ssize_t d[3]
    stride = v[2]
    if not _ints(v[1], nd, k) or not _ints(v[3], nd, p) or not _ints(v[4], nd, d):
        return None
    if stride is None or ((type(stride) is tuple or type(stride) is list) and len(stride) == 0):
        for i in range(nd):
            s[i] = k[i]
    elif not _ints(stride, nd, s):
        return None
    if not _int32s(k, nd) or not _int32s(s, nd) or not _int32s(p, nd) or not _int32s(d, nd):
        return None
    drv = _state["driver"]
    if drv is None:
        return None
    cdef Py_ssize_t idx = tx._storage.device._idx
    name = _MAXFWD[tx._dtype]
    if (drv, idx, name) not in _functions or _kernel(_FAM_COPY, None, tx) is None:
        return None                     # the general path loads the kernels' group
    cdef int off = tx._ndim - nd
    cdef list kl = [idx, nd, v[5] is True]
    for i in range(nd):
        kl.append(tx._shape[off + i])
    for i in range(nd):
        kl.append(k[i])
        kl.append(s[i])
        kl.append(p[i])
        kl.append(d[i])
    key = tuple(kl)
    entry = windows.get(key)
    if entry is None or (<tuple>entry)[0] is not drv:
        return (0, key, x, tuple([k[i] for i in range(nd)]), tuple([s[i] for i in range(nd)]),
                tuple([p[i] for i in range(nd)]), tuple([d[i] for i in range(nd)]), v[5])
    cdef tuple e = <tuple>entry
    cdef tuple osz = <tuple>e[4]
    cdef Py_ssize_t shape[5]
    for i in range(off):
        shape[i] = tx._shape[i]
    for i in range(nd):
        shape[off + i] = osz[i]
    cdef _TensorBase y = _dense_shaped(tx, tx._dtype, tx._ndim, shape)     # (x's device current)
    cdef _TensorBase ind = _dense_shaped(tx, _I64, tx._ndim, shape)
    cdef _TensorBase win = <_TensorBase>e[1]
    cdef bytes geo = <bytes>e[2]
    cdef long long cnt = y._numel
    cdef unsigned long long py = <uintptr_t>y._ptr(), pi = <uintptr_t>ind._ptr()
    cdef unsigned long long px = <uintptr_t>tx._ptr(), pw = <uintptr_t>win._ptr()
    cdef void* kp[6]
    if not _entry_fits(e, tx, nd, off, osz):
        return None
    kp[0] = &cnt
    kp[1] = &py
    kp[2] = &pi
    kp[3] = &px
    kp[4] = &pw
    kp[5] = <void*>PyBytes_AS_STRING(geo)
    _run(_kernel(_FAM_NAMED, name, tx), idx, cnt, kp)
    return (1, y, ind, x, e, v[6])


cdef dict _MAXGATHER = {}               # dtype -> ptc_nnpool_maxgather_<tag>
for _pool_dt in (_C.float32, _C.float64):
    _MAXGATHER[_pool_dt] = f"ptc_nnpool_maxgather_{_launch._tag(_pool_dt, 'max_pool')}"


def max_pool_backward(gy, ind, tuple xshape, int nd, tuple entry):
    """Max pooling's input gradient ``gx`` (shape ``xshape``) for the
    gradient ``gy`` of its values and their ``ind``, by the gathering
    kernel over the window table of ``entry`` (:func:`max_pool`'s, for the
    forward's geometry: no window wholly in the padding), as
    ``nn.max_pool_backward``; None when the operands are not contiguous
    float32/float64 (``ind`` int64) CUDA tensors of the entry's sizes."""
    if not isinstance(gy, _TensorBase) or not isinstance(ind, _TensorBase):
        return None
    cdef _TensorBase tg = <_TensorBase>gy, ti = <_TensorBase>ind
    cdef int num = tg._dtype.num
    cdef int i, off = tg._ndim - nd
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tg._storage.device._type_code != 1 \
            or not tg._is_contig() or tg._numel == 0 or (nd != 2 and nd != 3) or off < 1 \
            or ti._dtype is not _I64 or ti._ndim != tg._ndim \
            or ti._storage.device._type_code != 1 \
            or ti._storage.device._idx != tg._storage.device._idx or not ti._is_contig() \
            or len(xshape) != tg._ndim:
        return None
    cdef Py_ssize_t shape[5]
    for i in range(tg._ndim):
        if ti._shape[i] != tg._shape[i] or not _small_int(xshape[i], &shape[i]) or shape[i] < 1 \
                or (i < off and shape[i] != tg._shape[i]):
            return None
    drv = _state["driver"]
    if drv is None or len(entry) != 6 or entry[0] is not drv:
        return None
    cdef Py_ssize_t idx = tg._storage.device._idx
    name = _MAXGATHER[tg._dtype]
    if (drv, idx, name) not in _functions or _kernel(_FAM_COPY, None, tg) is None:
        return None
    cdef _TensorBase xlike = _dense_shaped(tg, tg._dtype, tg._ndim, shape)    # gx (device current)
    if not _entry_fits(entry, xlike, nd, off, tuple([tg._shape[off + i] for i in range(nd)])):
        return None
    cdef long long cnt = xlike._numel
    cdef unsigned long long px = <uintptr_t>xlike._ptr(), pg = <uintptr_t>tg._ptr()
    cdef unsigned long long pi = <uintptr_t>ti._ptr()
    cdef unsigned long long pw = <uintptr_t>(<_TensorBase>entry[1])._ptr()
    cdef void* kp[6]
    kp[0] = &cnt
    kp[1] = &px
    kp[2] = &pg
    kp[3] = &pi
    kp[4] = &pw
    kp[5] = <void*>PyBytes_AS_STRING(<bytes>entry[2])
    _run(_kernel(_FAM_NAMED, name, tg), idx, cnt, kp)
    return xlike
