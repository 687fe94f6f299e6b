"""CUDA front-ends of the nn ops: softmax family, losses, normalisation,
convolution, pooling, embedding, activations and their gradients, and the
pointwise ops the optimizers update with.

The kernels are :mod:`ptcore.cuda.kernels.nn`'s (plus the row softmax and
the elementwise families of :mod:`ptcore.cuda.kernels.library`), launched with
:mod:`ptcore.cuda.ops.launch`'s helpers on the current stream of the tensors'
device; the nn kernels compile in groups (every nn kernel of a dtype in one
program).  Each kernel is registered where it is defined (``@cuda.kernel``,
``@cuda.loop``: :mod:`ptcore.cuda.ops.registration`);
:func:`register` installs them into the operator table
(``OpDef.kernels['cuda']``) and into the per-device kernel sets the nn code
already routes through (the front-ends' device loops: ``convolution and
pooling`` for convolution and pooling, ``layer_norm_kernels``,
``softmax_backward``; ``adam_step``, ``sgd_step`` are registered by
:mod:`ptcore.cuda.ops.register`):

* ops of the table: ``softmax``/``log_softmax`` (any dim); the generic ops
  the nn code runs (``clamp``, ``lerp``, ``addcmul`` ...) have CUDA kernels
  of their own elsewhere (their front-ends, :mod:`ptcore.cuda.ops.index`);
* nn.functional ops whose Python code is device-agnostic (convolutions,
  pooling, batch/layer/group norm, most losses, attention, distances ...)
  are declared ``device="frontend"``: their own function is the CUDA kernel
  (the ops inside have CUDA kernels), installed by
  :func:`ptcore._dispatch.device.register_frontends` before this module's;
* nn.functional ops with a CUDA implementation of their own here:
  ``nll_loss``/``cross_entropy`` (class indices, ``ignore_index``,
  ``weight``, ``label_smoothing``; class probabilities), ``embedding``
  (``padding_idx``, ``scale_grad_by_freq``) and the activations ``gelu``
  (exact, tanh), ``silu``, ``elu``/``selu``/``celu``, ``softplus``,
  ``leaky_relu``, ``hardtanh``/``relu6``, ``hardsigmoid``, ``hardswish``,
  ``mish``, ``logsigmoid`` (and the in-place forms), whose backward is one fused kernel (the
  differentiable formula when the backward is itself recorded).
"""
import functools
import math
import struct

from ptcore import _tensor as _C
from ptcore._dispatch.device import register_fast_form
from ptcore._ops._out import check_out_grad, copy_out_same_dtype
from ptcore._ops.pointwise import _result_type
from ptcore.autograd import Function, grad_mode
from ptcore.autograd import _formulas_nn as F
from ptcore.autograd import _record as R
from ptcore.autograd._formulas import _recorded
from ptcore.cuda import graphs as _graphs
from ptcore.cuda.kernels import nn as KN
from ptcore.cuda.ops import conv_pool_fast as _conv_pool_fast
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops import index as LI
from ptcore.cuda.runtime import state as _runtime
from ptcore.nn.functional import _activation as _activation_module
from ptcore.nn.functional import _conv as _conv_module
from ptcore.nn.functional import _pool as _pool_module
from ptcore.nn.functional import _loss
from ptcore.nn.functional._sparse import _check_embedding_args, _Embedding, _embedding_renorm_
from ptcore.cuda.ops.registration import Registrations
import ptcore.nn.functional  # noqa: F401  (declares the nn.functional ops)

# this module's nn.functional kernels, each registered where it is defined
cuda = Registrations()
_NNF = ("nn.functional",)
_T = ("Tensor",)

__all__ = ["register", "conv_kernels", "softmax", "nll_loss", "cross_entropy", "embedding"]


def _pt():
    import ptcore
    return ptcore


# Kernels are compiled in groups (one program per group, on first use of
# any member): every nn kernel of one dtype, every activation kernel
# (forward and backward, both variants) of one dtype, the layer norm kernels
# of one dtype.  One compiler run instead of dozens.
# The activations are those with a fused backward kernel (the kernel library's
# ACT_BACKWARD): their forward unary kernels join that group.
_ACT_FORWARD = tuple(KN.ACT_BACKWARD)
_groups = {}
_group_lock = L.threading.Lock()


def _build_groups():
    by = {}
    for n, (fam, _) in L.K.all_kernels().items():
        if not fam.startswith("nn"):
            continue
        if fam == "nnact":                  # ptc_nnact_<op>_<tag>_<c|s>
            key = ("act", n.split("_")[-2])
        else:                               # ptc_<fam>_<op>_<tag>
            key = ("norm" if fam == "nnnorm" else "nn", n.split("_")[-1])
        by.setdefault(key, []).append(n)
    for (kind, tag), names in by.items():
        if kind == "act":
            names += [L.K.kernel_name("unary", op, tag, v) for op in _ACT_FORWARD for v in "cs"]
    groups = {}
    for names in by.values():
        t = tuple(names)
        for n in t:
            groups[n] = t
    return groups


def _group_of(name):
    if not _groups:
        with _group_lock:
            if not _groups:
                _groups.update(_build_groups())
    return _groups.get(name, (name,))


def _prefetch(dev, name):
    """Load ``name``'s group of kernels on ``dev`` (compiled as one program)."""
    drv = _runtime.lazy_init(name)
    idx = dev.index
    if (drv, idx, name) in L._functions:
        return
    group = _group_of(name)
    fs = drv.module_load(idx, L.K.program_source(list(group)), list(group))
    L._store_functions(drv, idx, fs)


def _go(dev, name, n, args, rows=False):
    """Launch kernel ``name`` over ``n`` items (nothing for ``n == 0``)."""
    if n > 0:
        _prefetch(dev, name)
        L._launch(dev.index, name, n, [L._ll(n)] + args, rows=rows)


def _pack(fields, values):
    vals = [int(values[f]) for f in fields]
    return L._struct(struct.pack(f"<{len(vals)}q", *vals))


def _null():
    return 0                    # a NULL device pointer


def _err_flag(dev):
    e = L._empty((1,), _C.int32, dev)
    return L.fill(e, 0)


def _contig_of(t, what):
    if not t.is_contiguous():
        raise RuntimeError(f"{what}: expected a contiguous tensor, got strides {tuple(t.stride())}")
    return t


def _float_tag(dt, fname, allowed=("float32", "float64")):
    n = L._name(dt)
    if n not in allowed:
        raise NotImplementedError(f"{fname}: no CUDA kernel for dtype {dt} ({', '.join(allowed)} are "
                                  "supported)")
    return L.K.TAGS[n]


# ---------------------------------------------------------------------------
# GEMM on row-major operands (pointer offsets and batch strides in elements)

def _gemm_rm(dev, dt, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, batch=1, sa=0, sb=0, sc=0,
             fname="conv", beta=0.0):
    """``C[m, n] = op(A) @ op(B)`` per batch for row-major matrices at device
    addresses ``a``, ``b``, ``c`` (``op(A)`` is ``A^T`` when ``ta``)."""
    if m == 0 or n == 0:
        return
    typ, comp = L._conv_gemm_types(dt, fname)
    drv = _runtime.lazy_init(fname)
    idx = dev.index
    drv.set_current(idx)
    # row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
    drv.gemm(idx, _runtime.current_stream_handle(idx), int(tb), int(ta), n, m, k, 1.0,
             b, typ, ldb, a, typ, lda, float(beta), c, typ, ldc, comp,
             batch=batch, stride_a=sb, stride_b=sa, stride_c=sc)


# ---------------------------------------------------------------------------
# convolution and pooling: the ``conv_kernels`` set of nn.functional._conv/_pool

_GEO = {}                       # _conv_geo's arguments -> its packed struct


def _conv_geo(xshape, oshape, kernel, stride, padding, dilation):
    """The kernels' conv geometry struct (packed once per geometry)."""
    key = (tuple(xshape), tuple(oshape), tuple(kernel), tuple(stride), tuple(padding),
           tuple(dilation))
    g = _GEO.get(key)
    if g is None:
        if len(_GEO) >= 4096:
            _GEO.clear()
        g = _GEO[key] = _pack_geo(xshape, oshape, kernel, stride, padding, dilation)
    return g


def _pack_geo(xshape, oshape, kernel, stride, padding, dilation):
    v = dict(zip(("C", "D", "H", "W"), xshape[1:5]))
    v.update(zip(("OD", "OH", "OW"), oshape))
    v.update(zip(("kd", "kh", "kw"), kernel))
    v.update(zip(("sd", "sh", "sw"), stride))
    v.update(zip(("pd", "ph", "pw"), padding))
    v.update(zip(("dd", "dh", "dw"), dilation))
    return _pack(KN.CONV_FIELDS, v)


def _im2col(x, col, osz, kernel, stride, padding, dilation):
    tag = _float_tag(x.dtype, "im2col")
    g = _conv_geo(tuple(x.shape), tuple(osz), kernel, stride, padding, dilation)
    _go(x.device, f"ptc_nnconv_im2col_{tag}", col.numel(), [L._ptr(col), L._ptr(x), g])
    return col


def _col2im(col, x, osz, kernel, stride, padding, dilation):
    tag = _float_tag(x.dtype, "col2im")
    g = _conv_geo(tuple(x.shape), tuple(osz), kernel, stride, padding, dilation)
    _go(x.device, f"ptc_nnconv_col2im_{tag}", x.numel(), [L._ptr(x), L._ptr(col), g])
    return x


def _prod(v):
    p = 1
    for s in v:
        p *= int(s)
    return p


def _check_conv_operands(*ts):
    dt = ts[0].dtype
    for t in ts:
        if t is None:
            continue
        _contig_of(t, "conv kernel")
        if t.dtype is not dt:
            raise RuntimeError("conv kernel: dtypes differ")
        if t.device != ts[0].device:
            raise RuntimeError(f"conv kernel: tensors on {ts[0].device} and {t.device}")


# the column buffer of one convolution call holds at most this many bytes
# (samples are processed in chunks of the batch)
COL_BUDGET = 1 << 28


def _chunks(N, per_sample_bytes):
    step = max(1, min(N, COL_BUDGET // max(per_sample_bytes, 1)))
    for n0 in range(0, N, step):
        yield n0, min(step, N - n0)


def _conv_dims(x, y, kernel, groups):
    N, C = int(x.shape[0]), int(x.shape[1])
    OC = int(y.shape[1])
    osz = tuple(y.shape[2:])
    G = int(groups)
    return N, C, OC, osz, _prod(kernel), _prod(osz), G, C // G, OC // G


def _sample(t, n0):
    """``t[n0:]`` as a contiguous 5-D (or 3-D) view starting at sample ``n0``."""
    return t.narrow(0, n0, t.shape[0] - n0)


def conv_forward(x, w, bias, y, kernel, stride, padding, dilation, groups):
    """y (N, OC, OD, OH, OW) = conv(x (N, C, D, H, W), w) + bias: im2col of a
    chunk of samples, then one strided-batched GEMM per group (adding to the
    bias broadcast into y first, as cuDNN's epilogue adds it)."""
    _check_conv_operands(x, w, bias, y)
    N, C, OC, osz, KK, Lo, G, Cg, OCg = _conv_dims(x, y, kernel, groups)
    isz = x.dtype.itemsize
    if bias is not None:
        # the bias first, broadcast over y; the GEMMs then add their products to it
        L.cast_copy(y, bias.reshape((1, OC, 1, 1, 1)))
    for n0, nb in _chunks(N, C * KK * Lo * isz):
        xs = _sample(x, n0).narrow(0, 0, nb)
        ys = _sample(y, n0).narrow(0, 0, nb)
        col = _im2col(xs, L._empty((nb, C * KK, Lo), x.dtype, x.device), osz, kernel, stride,
                      padding, dilation)
        for g in range(G):
            _gemm_rm(x.device, x.dtype, 0, 0, OCg, Lo, Cg * KK,
                     w.data_ptr() + g * OCg * Cg * KK * isz, Cg * KK,
                     col.data_ptr() + g * Cg * KK * Lo * isz, Lo,
                     ys.data_ptr() + g * OCg * Lo * isz, Lo,
                     batch=nb, sa=0, sb=C * KK * Lo, sc=OC * Lo, fname="conv",
                     beta=0.0 if bias is None else 1.0)
    return y


def conv_backward_input(gy, w, bias, gx, kernel, stride, padding, dilation, groups):
    """gx (N, C, D, H, W) = input gradient of the conv for gy (+ bias (C,)):
    one GEMM per group into columns, then col2im, a chunk of samples at a time."""
    _check_conv_operands(gy, w, bias, gx)
    N, C, OC, osz, KK, Lo, G, Cg, OCg = _conv_dims(gx, gy, kernel, groups)
    isz = gx.dtype.itemsize
    for n0, nb in _chunks(N, C * KK * Lo * isz):
        gys = _sample(gy, n0).narrow(0, 0, nb)
        gxs = _sample(gx, n0).narrow(0, 0, nb)
        col = L._empty((nb, C * KK, Lo), gx.dtype, gx.device)
        for g in range(G):
            _gemm_rm(gx.device, gx.dtype, 1, 0, Cg * KK, Lo, OCg,
                     w.data_ptr() + g * OCg * Cg * KK * isz, Cg * KK,
                     gys.data_ptr() + g * OCg * Lo * isz, Lo,
                     col.data_ptr() + g * Cg * KK * Lo * isz, Lo,
                     batch=nb, sa=0, sb=OC * Lo, sc=C * KK * Lo, fname="conv")
        _col2im(col, gxs, osz, kernel, stride, padding, dilation)
    if bias is not None:
        gx.add_(bias.reshape((1, C, 1, 1, 1)))
    return gx


def conv_backward_weight(x, gy, gw, kernel, stride, padding, dilation, groups):
    """gw (OC, C/G, kd, kh, kw) = weight gradient of the conv x -> gy, a chunk
    of samples at a time: the columns of the chunk (im2col), then, when the
    per-sample products are no larger than the columns (``OC*C/G*K <= C*K*L``,
    the usual case), ONE strided-batched GEMM over (sample, group) writing
    each sample's product ``gy_n,g (OC/G, L) @ col_n,g^T (L, C/G*K)`` (gy and
    the columns read in place) and one GEMM ``ones (1, nb) @ products`` summing
    them into gw (accumulating over chunks through beta); otherwise (few
    positions, many channels) the columns and gy with the batch moved next to
    the positions (two copies) and one GEMM per group with ``K = nb*L``."""
    _check_conv_operands(x, gy, gw)
    N, C, OC, osz, KK, Lo, G, Cg, OCg = _conv_dims(x, gy, kernel, groups)
    isz = x.dtype.itemsize
    per_sample = OC * Cg * KK <= C * KK * Lo
    ones = None
    first = True
    for n0, nb in _chunks(N, (C * KK * Lo + OC * Cg * KK) * isz if per_sample
                          else 2 * C * KK * Lo * isz):
        xs = _sample(x, n0).narrow(0, 0, nb)
        gys = _sample(gy, n0).narrow(0, 0, nb)
        col = _im2col(xs, L._empty((nb, C * KK, Lo), x.dtype, x.device), osz, kernel, stride,
                      padding, dilation)
        beta = 0.0 if first else 1.0
        first = False
        if per_sample:
            if ones is None:
                ones = L.fill(L._empty((nb,), x.dtype, x.device), 1.0)
            part = L._empty((nb, OC, Cg * KK), x.dtype, x.device)
            _gemm_rm(x.device, x.dtype, 0, 1, OCg, Cg * KK, Lo,
                     gys.data_ptr(), Lo, col.data_ptr(), Lo, part.data_ptr(), Cg * KK,
                     batch=nb * G, sa=OCg * Lo, sb=Cg * KK * Lo, sc=OCg * Cg * KK, fname="conv")
            _gemm_rm(x.device, x.dtype, 0, 0, 1, OC * Cg * KK, nb,
                     ones.data_ptr(), nb, part.data_ptr(), OC * Cg * KK,
                     gw.data_ptr(), OC * Cg * KK, fname="conv", beta=beta)
            continue
        colp = L._contig(col.permute(1, 0, 2))                      # (C*KK, nb*L)
        gyp = L._contig(gys.reshape((nb, OC, Lo)).permute(1, 0, 2))  # (OC, nb*L)
        NL = nb * Lo
        for g in range(G):
            _gemm_rm(x.device, x.dtype, 0, 1, OCg, Cg * KK, NL,
                     gyp.data_ptr() + g * OCg * NL * isz, NL,
                     colp.data_ptr() + g * Cg * KK * NL * isz, NL,
                     gw.data_ptr() + g * OCg * Cg * KK * isz, Cg * KK, fname="conv", beta=beta)
    return gw


def unfold_into(x, col, out_size, kernel, stride, padding, dilation):
    """col (N, C*K, L) = unfold of x (N, C, D, H, W), both contiguous."""
    _check_conv_operands(x, col)
    return _im2col(x, col, tuple(out_size), kernel, stride, padding, dilation)


def fold_into(col, x, out_size, kernel, stride, padding, dilation):
    """x (N, C, D, H, W) = fold (col2im, summing overlaps) of col (N, C*K, L)."""
    _check_conv_operands(col, x)
    return _col2im(col, x, tuple(out_size), kernel, stride, padding, dilation)


# (driver, device, geometry) -> what _windows returns: a layer's window
# table is uploaded once, not on every call (a host-to-device copy each);
# a few KiB each, at most _WINDOWS_MAX of them, let go at a runtime reset
_WINDOWS = {}
_WINDOWS_MAX = 256
_runtime.on_reset(_WINDOWS.clear)


def _windows(dev, in_size, starts, ends, factors, steps, div):
    key = (id(_runtime._state["driver"]), dev, tuple(in_size), tuple(map(tuple, starts)),
           tuple(map(tuple, ends)), tuple(map(tuple, factors)), tuple(steps), div)
    hit = _WINDOWS.get(key)
    if hit is not None and hit[0] is _runtime._state["driver"]:
        return hit[1]
    r = _make_windows(dev, in_size, starts, ends, factors, steps, div)
    if len(_WINDOWS) >= _WINDOWS_MAX:
        _WINDOWS.clear()
    _WINDOWS[key] = (_runtime._state["driver"], r)
    return r


def _cover(n, starts, ends):
    """Per input coordinate ``h < n`` of one dim, the range ``[lo, hi)`` of
    outputs whose window ``[start, end)`` can hold it (the hull of those that
    do; empty when none does)."""
    lo, hi = [0] * n, [0] * n
    for o, (a, b) in enumerate(zip(starts, ends)):
        for h in range(max(a, 0), min(b, n)):
            if hi[h] == 0:
                lo[h] = o
            hi[h] = o + 1
    return lo, hi


def _make_windows(dev, in_size, starts, ends, factors, steps, div):
    D, H, W = (int(s) for s in in_size)
    od, oh, ow = (len(s) for s in starts)
    for j, n in enumerate((D, H, W)):
        for a, b in zip(starts[j], ends[j]):
            if a < 0 or b > n:
                raise RuntimeError("pooling kernel: window outside the input")
    flat = [int(v) for lst in (starts, ends, factors) for s in lst for v in s]
    # then the gather tables of max pooling's backward: lo (D+H+W), hi (D+H+W)
    cover = [_cover(n, starts[j], ends[j]) for j, n in enumerate((D, H, W))]
    flat += [v for c in cover for v in c[0]] + [v for c in cover for v in c[1]]
    win = _pt().tensor(flat, dtype=_C.int64).to(dev)
    geo = _pack(KN.POOL_FIELDS, {"D": D, "H": H, "W": W, "OD": od, "OH": oh, "OW": ow,
                                 "stepd": steps[0], "steph": steps[1], "stepw": steps[2],
                                 "div": div})
    return win, geo, od * oh * ow, D * H * W


def max_pool_forward(x, y, ind, in_size, starts, ends, steps):
    """y, ind (P, OD*OH*OW) = max over the windows of x (P, D*H*W)."""
    _check_conv_operands(x, y)
    _contig_of(ind, "max_pool kernel")
    tag = _float_tag(x.dtype, "max_pool")
    # a window wholly in the padding (dilation steps it over the row) reads nothing:
    # -inf at its first position, as torch and the CPU kernel
    zeros = [[0] * len(s) for s in starts]
    win, geo, pout, pin = _windows(x.device, in_size, starts, ends, zeros, steps, 0)
    if pin != x.shape[1] or tuple(y.shape) != tuple(ind.shape) or y.shape[1] != pout:
        raise RuntimeError("max_pool kernel: sizes do not match")
    _go(x.device, f"ptc_nnpool_maxfwd_{tag}", y.numel(),
        [L._ptr(y), L._ptr(ind), L._ptr(x), L._ptr(win), geo])
    return y


def _has_empty_window(starts, ends):
    return any(b <= a for lst_s, lst_e in zip(starts, ends) for a, b in zip(lst_s, lst_e))


def max_pool_backward(gy, ind, gx, window=None):
    """gx (P, D*H*W) = scatter-add of gy (P, L) at ind (P, L).  With the
    forward's ``window`` (in_size, starts, ends, steps) one thread per input
    element gathers its sum (``maxgather``); without it, or when a window lies
    wholly in the padding (its index, the window's first position, may fall on
    an element no window holds: the next row's first), one thread per plane
    scatters (``maxbwd``, few threads: the fallback)."""
    _check_conv_operands(gy, gx)
    _contig_of(ind, "max_pool backward kernel")
    tag = _float_tag(gx.dtype, "max_pool backward")
    if tuple(ind.shape) != tuple(gy.shape) or gx.shape[0] != gy.shape[0]:
        raise RuntimeError("max_pool backward kernel: bad operands")
    if window is not None and not _has_empty_window(window[1], window[2]):
        in_size, starts, ends, steps = window
        zeros = [[0] * len(s) for s in starts]
        win, geo, pout, pin = _windows(gx.device, in_size, starts, ends, zeros, steps, 0)
        if pin != gx.shape[1] or pout != gy.shape[1]:
            raise RuntimeError("max_pool backward kernel: sizes do not match")
        _go(gx.device, f"ptc_nnpool_maxgather_{tag}", gx.numel(),
            [L._ptr(gx), L._ptr(gy), L._ptr(ind), L._ptr(win), geo])
        return gx
    _go(gx.device, f"ptc_nnpool_maxbwd_{tag}", int(gx.shape[0]),
        [L._ptr(gx), L._ptr(gy), L._ptr(ind), L._ll(gx.shape[1]), L._ll(gy.shape[1])])
    return gx


def avg_pool(x, y, in_size, starts, ends, factors, divisor_override, backward):
    """forward: y (P, L) = window means of x (P, D*H*W); backward: x = the
    input gradient from y = grad_output."""
    _check_conv_operands(x, y)
    tag = _float_tag(x.dtype, "avg_pool")
    win, geo, pout, pin = _windows(x.device, in_size, starts, ends, factors, (1, 1, 1),
                                   divisor_override)
    if pin != x.shape[1] or y.shape[1] != pout:
        raise RuntimeError("avg_pool kernel: sizes do not match")
    if backward:
        _go(x.device, f"ptc_nnpool_avgbwd_{tag}", int(x.shape[0]),
            [L._ptr(x), L._ptr(y), L._ptr(win), geo])
    else:
        _go(x.device, f"ptc_nnpool_avgfwd_{tag}", y.numel(),
            [L._ptr(y), L._ptr(x), L._ptr(win), geo])
    return y


def conv_prim(kind, a, b, bias, geo, out_shape):
    """``nn.functional._conv._prim``'s whole primitive from C
    (``conv_pool_fast.prim``, the kernels and GEMMs above with their
    arguments), or None: the caller's general path."""
    return _conv_pool_fast.prim(kind, a, b, bias, geo, out_shape, COL_BUDGET)


def _conv_form(nd):
    """``F.conv{nd}d``'s fast form: the call in C (``conv_pool_fast.conv``),
    recorded as the general path records it when an input requires grad;
    None for what that declines."""
    run = _conv_pool_fast.conv
    record = _conv_module.record_forward
    st = R._state

    def conv_form(args, kwargs):
        r = run(args, kwargs, nd, COL_BUDGET)
        if r is None:
            return None
        y, x, w, bias, geo = r
        if st.enabled and (x._requires_grad or w._requires_grad
                           or (bias is not None and bias._requires_grad)):
            return record(y, x, w, bias, geo)
        return y
    return conv_form


# max pooling's fast forms: (device, nd, ceil_mode, spatial size, kernel size,
# stride, padding, dilation) -> conv_pool_fast.max_pool's entry (the window
# table _windows keeps); at most _WINDOWS_MAX, let go at a runtime reset
_MAX_POOL_FAST = {}
# id(an entry's window) -> the entry, for the backward of the nodes the fast
# forms record (their ctx holds that window); entries whose windows all hold
# an input position (the gathering backward kernel's)
_MAX_POOL_BY_WINDOW = {}
_runtime.on_reset(_MAX_POOL_FAST.clear)
_runtime.on_reset(_MAX_POOL_BY_WINDOW.clear)


def _max_pool_entry(key, x, k, s, p, d, ceil_mode, nd):
    """Make ``_MAX_POOL_FAST[key]``: the windows as the general path makes
    them (its checks and errors), their table on x's device."""
    fname = f"max_pool{nd}d"
    starts, ends, steps, out_sp = _pool_module.max_window_geometry(x, k, s, p, d, ceil_mode, nd,
                                                                   fname)
    in_size = (1,) * (3 - nd) + tuple(x.shape[x.dim() - nd:])
    zeros = [[0] * len(v) for v in starts]
    win, geo, pout, _ = _windows(x.device, in_size, starts, ends, zeros, steps, 0)
    if len(_MAX_POOL_FAST) >= _WINDOWS_MAX:
        _MAX_POOL_FAST.clear()
        _MAX_POOL_BY_WINDOW.clear()
    window = (in_size, starts, ends, steps)
    entry = _MAX_POOL_FAST[key] = (_runtime._state["driver"], win, geo, pout, tuple(out_sp),
                                   window)
    if not _has_empty_window(starts, ends):
        _MAX_POOL_BY_WINDOW[id(window)] = entry


def max_pool_backward_prim(gy, ind, xshape, nd, window):
    """Max pooling's input gradient from C (``conv_pool_fast.max_pool_backward``)
    for a node the fast form recorded (its ``window``), or None: the
    caller's general path."""
    entry = _MAX_POOL_BY_WINDOW.get(id(window))
    if entry is None or entry[5] is not window:
        return None
    return _conv_pool_fast.max_pool_backward(gy, ind, xshape, nd, entry)


def _max_pool_form(nd):
    """``F.max_pool{nd}d``'s fast form: the call in C
    (``conv_pool_fast.max_pool``), recorded as the general path records it
    when the input requires grad; None for what that declines."""
    run = _conv_pool_fast.max_pool
    record = _pool_module.record_max_pool
    st = R._state

    def max_pool_form(args, kwargs):
        r = run(args, kwargs, nd, _MAX_POOL_FAST)
        if r is None:
            return None
        if r[0] == 0:                           # a new geometry
            _max_pool_entry(*r[1:], nd)
            r = run(args, kwargs, nd, _MAX_POOL_FAST)
            if r is None or r[0] == 0:
                return None
        _, y, ind, x, entry, return_indices = r
        if st.enabled and x._requires_grad:
            y, ind = record(y, ind, x, nd, entry[5])
        return (y, ind) if return_indices else y
    return max_pool_form


class _ConvKernelSet:
    """The ``conv_kernels`` interface of ``ptcore._ops.kernels._conv`` on CUDA
    tensors, and its optional members ``conv_prim`` and
    ``max_pool_backward_prim`` (a whole primitive from C, or None)."""
    conv_prim = staticmethod(conv_prim)
    max_pool_backward_prim = staticmethod(max_pool_backward_prim)
    conv_forward = staticmethod(conv_forward)
    conv_backward_input = staticmethod(conv_backward_input)
    conv_backward_weight = staticmethod(conv_backward_weight)
    unfold_into = staticmethod(unfold_into)
    fold_into = staticmethod(fold_into)
    max_pool_forward = staticmethod(max_pool_forward)
    max_pool_backward = staticmethod(max_pool_backward)
    avg_pool = staticmethod(avg_pool)


@cuda.loop("convolution and pooling")
def conv_kernels():
    return _ConvKernelSet


# ---------------------------------------------------------------------------
# softmax / log_softmax along any dim (the row kernels of _kernels)

#: the most elements a softmax over another dim than the last reads in place
#: (strided rows: uncoalesced, but one launch); larger tensors move the dim last
_SOFTMAX_STRIDED_MAX = 1 << 20


def softmax(op, input, dim, dtype=None):
    x = input
    if not isinstance(x, _C._TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if dim is None:
        raise TypeError(f"{op}() missing required argument 'dim'")
    nd = x.dim()
    d = L._norm_dims(dim, nd, op)
    d = d[0] if d else 0
    if dtype is not None:
        dt = _C._as_dtype(dtype)
        if dt is not x.dtype:
            x = x.to(dt)
    dt = x.dtype
    if not dt.is_floating_point:
        last = nd == 0 or d == nd - 1
        kname = "softmax_lastdim_kernel_impl" if last else "softmax_kernel_impl"
        if op == "log_softmax":
            kname = "log_" + kname
        raise NotImplementedError(f'"{kname}" not implemented for \'{dt._legacy}\'')
    tag = L._tag(dt, op)
    res = L._empty(tuple(x.shape), dt, x.device)
    if x.numel() == 0:
        return res
    if 0 < nd - 1 <= L.K.MAX_DIMS and d != nd - 1 and x.numel() <= _SOFTMAX_STRIDED_MAX:
        # another dim than the last of a small tensor: the row kernel's strided
        # variant reads and writes the rows in place -- one launch where moving
        # them last and back took three (a large tensor keeps those coalesced copies)
        kept = [i for i in range(nd) if i != d]
        sizes = [int(x.shape[i]) for i in kept]
        M = math.prod(sizes)
        ix = L._struct(L.K.pack_strided(sizes, [[res.stride(i) for i in kept],
                                                [x.stride(i) for i in kept]]))
        L._launch(x.device.index, f"ptc_softmax_{op}_{tag}_s", M,
                  [L._ll(M), L._ll(int(x.shape[d])), L._ptr(res), L._ptr(x), L._params(), ix,
                   L._ll(res.stride(d)), L._ll(x.stride(d))], rows=True)
        return res
    if nd == 0:
        xm, rm = x.reshape((1, 1)), res.reshape((1, 1))
    else:
        perm = [i for i in range(nd) if i != d] + [d]
        xm = L._contig(x.permute(*perm))
        # along the last dim the rows are res's own (dense, fresh): written in place
        rm = res if d == nd - 1 else L._empty(tuple(xm.shape), dt, x.device)
    Ln = int(xm.shape[-1])
    M = xm.numel() // Ln
    L._launch(x.device.index, f"ptc_softmax_{op}_{tag}_c", M,
              [L._ll(M), L._ll(Ln), L._ptr(rm), L._ptr(xm), L._params()], rows=True)
    if nd == 0 or rm is res:
        return res
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    res.copy_(rm.permute(*inv))
    return res


def _softmax_kernel(op):
    def kernel(input, dim, dtype=None):
        return softmax(op, input, dim, dtype)
    kernel.__name__ = op
    return kernel


cuda.kernel("softmax")(_softmax_kernel("softmax"))
cuda.kernel("log_softmax")(_softmax_kernel("log_softmax"))


# ---------------------------------------------------------------------------
# pointwise ops the nn code and the optimizers use

def _bshape(xs, fname):
    shapes = [list(x.shape) for x in xs if isinstance(x, _C._TensorBase)]
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        s = [1] * (n - len(s)) + s
        for i, v in enumerate(s):
            if v != 1:
                if out[i] != 1 and out[i] != v:
                    raise RuntimeError(f"{fname}: The size of tensor a ({out[i]}) must match the "
                                       f"size of tensor b ({v}) at non-singleton dimension {i}")
                out[i] = v
    return out


def _ternary(op, a, b, c, dt, params, fname=None):
    fname = fname or op
    dev = L._device_of(a, b, c)
    shape = _bshape((a, b, c), fname)
    x, y, z = (L._as_operand(v, dt, dev) for v in (a, b, c))
    res = L._empty(shape, dt, dev)
    L._elementwise("ternary", (op, (L._tag(dt, fname),)), res, [x, y, z], params)
    return res


def _result_type3(*args):
    """Type promotion over several operands (tensors and numbers)."""
    return _result_type(*args)


def _clamp_dtype(x, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = _result_type3(*(v for v in (x, lo, hi) if v is not None))
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _C.bool_:
        raise NotImplementedError("\"clamp_scalar_cuda\" not implemented for 'Bool'")
    return dt


def _bound(v, dt, top):
    if v is not None:
        return v
    if dt.is_floating_point:
        return math.inf if top else -math.inf
    info = _pt().iinfo(dt)
    return info.max if top else info.min


# clamp and clamp_ on CUDA tensors, launched directly (nll_loss's class-weight
# sum and hardtanh's integer path call them; the ops' own CUDA kernels are
# their front-ends, ptcore.cuda.ops.index's)
def clamp(input, min=None, max=None, *, out=None):
    dt = _clamp_dtype(input, min, max)
    res = _ternary("clamp", input, _bound(min, dt, False), _bound(max, dt, True), dt, L._params(),
                   fname="clamp")
    return L._finish(res, out, "clamp")


def clamp_(self, min=None, max=None):
    dt = _clamp_dtype(self, min, max)
    if not _pt().can_cast(dt, self.dtype):
        raise RuntimeError(f"result type {L._cname(dt)} can't be cast to the desired output type "
                           f"{L._cname(self.dtype)}")
    res = _ternary("clamp", self, _bound(min, dt, False), _bound(max, dt, True), dt, L._params(),
                   fname="clamp_")
    _check_inplace_shape(self, res)
    self.copy_(res)
    return self


def _check_inplace_shape(self, res):
    if tuple(res.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(res.shape)}")


# ---------------------------------------------------------------------------
# nll_loss / cross_entropy

def _loss_mod():
    return _loss


def _pt_function():
    return Function


_NLL = []


def _nll_fn():
    if _NLL:
        return _NLL[0]
    Function = _pt_function()

    class NllLossCuda(Function):
        """Per-target weighted losses of (N, C, S) log-probabilities; the
        reduction over them is applied by the caller with ordinary ops."""

        @staticmethod
        def forward(ctx, logp, target, weight, ignore):
            N, C, S = (int(s) for s in logp.shape)
            tag = L._tag(logp.dtype, "nll_loss")
            loss = L._empty((N, S), logp.dtype, logp.device)
            wsum = L._empty((N, S), logp.dtype, logp.device)
            err = _err_flag(logp.device)
            _go(logp.device, f"ptc_nnloss_nllfwd_{tag}", N * S,
                [L._ptr(loss), L._ptr(wsum), L._ptr(logp), L._ptr(target),
                 L._ptr(weight) if weight is not None else _null(), L._ll(C), L._ll(S),
                 L._ll(ignore), L._ptr(err)])
            # (a CUDA graph being captured cannot read the flag: the kernel skips an
            # out-of-range target, whose loss is then 0, as torch's device assert cannot
            # be reported from a replay either)
            if not _capturing() and int(err.item()):
                t = target.cpu().reshape(-1)
                bad = [v for v in t.tolist() if v != ignore and not 0 <= v < C]
                raise IndexError(f"Target {bad[0] if bad else '?'} is out of bounds.")
            ctx.save_for_backward(target, weight)
            ctx.meta = (N, C, S, ignore)
            ctx.mark_non_differentiable(wsum)
            return loss, wsum

        @staticmethod
        def backward(ctx, g, gw=None):
            target, weight = ctx.saved_tensors
            N, C, S, ignore = ctx.meta
            dt = g.dtype
            gin = L.fill(L._empty((N, C, S), dt, g.device), 0)
            gc = L._contig(g)
            _go(g.device, f"ptc_nnloss_nllbwd_{L._tag(dt, 'nll_loss')}", N * S,
                [L._ptr(gin), L._ptr(gc), L._ll(1), L._ptr(target),
                 L._ptr(weight) if weight is not None else _null(), L._ll(C), L._ll(S),
                 L._ll(ignore)])
            return gin, None, None, None

    NllLossCuda._backward_cls.__name__ = "NllLossBackward0"
    _NLL.append(NllLossCuda)
    return NllLossCuda


def _nll(input, target, weight, enum, ignore_index):
    """``nll_loss`` of log-probabilities ``input`` (C), (N, C) or (N, C, d...)."""
    C = _loss_mod()._nll_checks(input, target, weight)
    one_d = input.dim() == 1
    x = input.unsqueeze(0) if one_d else input
    t = target.reshape((1,)) if one_d else target
    N = int(x.shape[0])
    S = x.numel() // max(N * C, 1) if x.numel() else _prod(x.shape[2:])
    x3 = L._contig(x).reshape((N, C, S))
    t2 = L._as_operand(t, _C.int64, x.device) if t.dtype is not _C.int64 else t
    t2 = L._contig(t2).reshape((N, S))
    w = None if weight is None else L._contig(weight)
    loss, wsum = _nll_fn().apply(x3, t2, w, int(ignore_index))
    if enum == 0:
        out = loss.reshape(tuple(t.shape))
        return out.reshape(()) if one_d else out
    if enum == 2:
        return loss.sum()
    return loss.sum() / wsum.sum()


@cuda.kernel('nll_loss', namespaces=_NNF)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """``nll_loss`` on CUDA (the nn.functional signature)."""
    lm = _loss_mod()
    lm._check_tensor(input, "nll_loss", "input")
    lm._check_tensor(target, "nll_loss", "target")
    reduction = lm._legacy_or(size_average, reduce, reduction)
    return _nll(input, target, weight, lm._Reduction.get_enum(reduction), ignore_index)


@cuda.kernel('cross_entropy', namespaces=_NNF)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    P = _pt()
    lm = _loss_mod()
    lm._check_tensor(input, "cross_entropy", "input")
    lm._check_tensor(target, "cross_entropy", "target")
    reduction = lm._legacy_or(size_average, reduce, reduction)
    enum = lm._Reduction.get_enum(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if not input.is_floating_point():
        raise lm._not_implemented("log_softmax_lastdim_kernel_impl", input.dtype)
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class probabilities, "
                               f"got {lm._tname(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return lm._ce_prob_target(input, target, weight, enum, label_smoothing, class_dim)
    logp = P.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _ce_smoothing(logp, target, weight, enum, ignore_index, label_smoothing, class_dim)
    return _nll(logp, target, weight, enum, ignore_index)


def _ce_smoothing(logp, target, weight, enum, ignore_index, eps, class_dim):
    nll = _nll(logp, target, weight, enum, ignore_index)
    C = logp.shape[class_dim]
    if weight is not None:
        wv = _loss_mod()._class_weight_view(weight, logp.dim())
        smooth = -(logp * wv).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    keep = (target != ignore_index).to(logp.dtype)
    smooth = smooth * keep
    if enum == 1:
        if weight is not None:
            # sum of the weights of the kept targets (ignored ones clamped
            # into range, then multiplied by 0)
            t = L._as_operand(target, _C.int64, logp.device)
            t = clamp(t, 0, C - 1)
            ret = smooth.sum() / _class_weight_sum(weight, t, keep)
        else:
            ret = smooth.sum() / keep.sum()
    elif enum == 2:
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - eps) * nll + ret * (eps / C)


def _class_weight_sum(weight, target, keep):
    """sum over kept targets of weight[target] (an embedding lookup of the weights)."""
    w2 = weight.reshape((weight.shape[0], 1))
    picked = _embedding_fwd(w2, target.reshape(-1)).reshape(tuple(target.shape))
    return (picked * keep).sum()


# ---------------------------------------------------------------------------
# embedding

def _embedding_fwd(weight, flat):
    if L._name(weight.dtype) not in L.K.FLOATS:
        return weight.index_select(0, flat)       # integer/bool tables: a plain row gather
    wc = L._contig(weight)
    D = int(wc.shape[1])
    out = L._empty((int(flat.shape[0]), D), wc.dtype, wc.device)
    _go(wc.device, f"ptc_nnembed_fwd_{L._tag(wc.dtype, 'embedding')}", out.numel(),
        [L._ptr(out), L._ptr(wc), L._ptr(L._contig(flat)), L._ll(D)])
    return out


_EMB = []


def _capturing():
    """Whether the current stream is capturing a CUDA graph (host reads refused)."""
    return bool(_graphs._active[0]) and _graphs.is_current_stream_capturing()


def _embedding_fn():
    if _EMB:
        return _EMB[0]
    Function = _pt_function()

    class EmbeddingCuda(Function):
        @staticmethod
        def forward(ctx, weight, flat, padding_idx, freq):
            ctx.save_for_backward(flat)
            ctx.meta = (tuple(weight.shape), padding_idx, freq)
            return _embedding_fwd(weight, flat)

        @staticmethod
        def backward(ctx, g):
            (flat,) = ctx.saved_tensors
            shape, padding_idx, freq = ctx.meta
            dt = g.dtype
            tag = L._tag(dt, "embedding_backward")
            gw = L.fill(L._empty(shape, dt, g.device), 0)
            counts = None
            if freq:
                counts = L.fill(L._empty((shape[0],), dt, g.device), 0)
                _go(g.device, f"ptc_nnembed_count_{tag}", int(flat.shape[0]),
                    [L._ptr(counts), L._ptr(flat)])
            gc = L._contig(g)
            _go(g.device, f"ptc_nnembed_bwd_{tag}", gc.numel(),
                [L._ptr(gw), L._ptr(gc), L._ptr(flat),
                 L._ptr(counts) if counts is not None else _null(), L._ll(shape[1]),
                 L._ll(padding_idx)])
            return gw, None, None, None

    EmbeddingCuda._backward_cls.__name__ = "EmbeddingBackward0"
    _EMB.append(EmbeddingCuda)
    return EmbeddingCuda


@cuda.kernel('embedding', namespaces=_NNF)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    padding_idx = _check_embedding_args(input, weight, padding_idx)
    if max_norm is not None:
        # the referenced rows renormalised in place (written with device ops)
        _embedding_renorm_(weight, input.contiguous(), max_norm, norm_type)
    flat = input.reshape(-1)
    if flat.dtype is not _C.int64:
        flat = L._as_operand(flat, _C.int64, flat.device)
    if flat.numel():
        if _capturing():
            # (a CUDA graph being captured cannot read the check's result on the host: an
            # out-of-range index reads the nearest row instead, never outside the weight)
            flat = flat.clamp(0, weight.shape[0] - 1)
        elif LI._index_bounds(flat, weight.shape[0], False) is not None:   # one kernel, one sync
            raise IndexError("index out of range in self")
    if sparse:
        # the weight's gradient a sparse COO tensor of the looked-up rows on
        # this device: the device-generic lookup node of nn.functional
        out_shape = (*input.shape, weight.shape[1])
        if weight.requires_grad and grad_mode.is_grad_enabled():
            return _Embedding.apply(weight, L._contig(flat), out_shape, int(padding_idx),
                                    bool(scale_grad_by_freq), True)
        return weight.index_select(0, flat).view(out_shape)
    out = _embedding_fn().apply(weight, L._contig(flat), int(padding_idx), bool(scale_grad_by_freq))
    return out.view(*input.shape, weight.shape[1])


# ---------------------------------------------------------------------------
# activations: forward kernel + one fused backward kernel

def _act_doubles(name, params, forward=False):
    """``(d0, d1, d2)``: the kernel parameters of activation ``name`` (its
    forward kernel's when ``forward``, else its gradient kernel's)."""
    if name == "elu":
        # the forward kernel scales its negative branch by d2 as well
        d0 = params[0] / params[2] if forward else params[0]
        return (float(d0), float(params[1]), float(params[2]))
    if name in ("softplus", "hardtanh"):
        return (float(params[0]), float(params[1]), 0.0)
    if name == "leaky_relu":
        return (float(params[0]), 0.0, 0.0)
    return (0.0, 0.0, 0.0)


def _act_forward(kop, x, params):
    res = L._empty(tuple(x.shape), x.dtype, x.device)
    if res.numel():
        _prefetch(x.device, L.K.kernel_name("nnact", kop, L._tag(x.dtype, kop), "c"))
    L._elementwise("unary", (kop, (L._tag(x.dtype, kop),)), res, [x], params)
    return res


def _act_backward(kop, g, x, params):
    """``kop``'s gradient kernel over ``g`` and ``x``; ``params`` its
    ``(d0, d1, d2)``."""
    res = _dense_fast.act_backward(kop, g, x, *params)
    if res is not None:
        return res
    dt = x.dtype
    g = L._as_operand(g, dt, x.device)
    res = L._empty(tuple(x.shape), dt, x.device)
    if res.numel():
        _prefetch(x.device, L.K.kernel_name("nnact", kop, L._tag(dt, kop), "c"))
    L._elementwise("nnact", (kop, (L._tag(dt, kop),)), res, [g, x], L._params(d0=params[0], d1=params[1],
                                                                                d2=params[2]))
    return res


def _activation(formula, node, kop, input, params, bparams=None):
    """``kop``'s forward kernel on ``input``; when ``input`` needs grad, node
    ``node`` whose backward is ``nnact_<kop>`` (the formula ``formula`` of
    autograd, in differentiable ops, when the backward is recorded)."""
    P = _pt()
    fp = _act_doubles(kop, params, forward=True)
    out = _dense_fast.activation(kop, input, *fp)
    if out is None:
        with P.no_grad():
            out = _act_forward(kop, input, L._params(d0=fp[0], d1=fp[1], d2=fp[2]))
    if not (input.requires_grad and P.is_grad_enabled()):
        return out
    return _attach_activation(formula, node, kop, input, out, params, bparams)


def _attach_activation(formula, node, kop, input, out, params, bparams=None):
    """Record ``out = kop(input)`` as :func:`_activation` does."""
    bp = _act_doubles(kop, bparams if bparams is not None else params)
    _prefetch(input.device, L.K.kernel_name("nnact", kop, L._tag(input.dtype, kop), "c"))
    sx = R.save(input)
    fparams = params if bparams is None else bparams

    def bw(g):
        x = sx.unpack()
        if _recorded(g, x):
            return (_formula_grad(formula, g, x, fparams),)
        return (_act_backward(kop, g, x, bp),)
    R.attach(node, out, (input,), bw)
    return out


def _gelu_fast(args, kwargs):
    """``F.gelu(x, *, approximate)``'s fast form: a dense floating CUDA ``x``,
    the forward kernel launched from C (``dense_fast.activation``); None
    for any other call (the kernel below then checks and raises)."""
    if len(args) != 1:
        return None
    approximate = "none"
    for k in kwargs:
        if k != "approximate":
            return None
        approximate = kwargs[k]
    if approximate == "none":
        kop = "gelu"
    elif approximate == "tanh":
        kop = "gelu_tanh"
    else:
        return None
    x = args[0]
    out = _dense_fast.activation(kop, x)
    if out is not None and x.requires_grad and grad_mode.is_grad_enabled():
        _attach_activation("gelu", "GeluBackward0", kop, x, out, (approximate,), (approximate,))
    return out


def _silu_fast(args, kwargs):
    """``F.silu(x[, inplace])``'s fast form (``inplace=False``), as :func:`_gelu_fast`."""
    n = len(args)
    if n == 2:
        if kwargs or args[1] is not False:
            return None
    elif n != 1 or (kwargs and (len(kwargs) != 1 or kwargs.get("inplace", True) is not False)):
        return None
    x = args[0]
    out = _dense_fast.activation("silu", x)
    if out is not None and x.requires_grad and grad_mode.is_grad_enabled():
        _attach_activation("silu", "SiluBackward0", "silu", x, out, ())
    return out


def install_fast_forms():
    """Register (``register_fast_form``) the activations' fast forms above
    for the cuda device type."""
    register_fast_form("gelu", "cuda", _gelu_fast, _NNF)
    register_fast_form("silu", "cuda", _silu_fast, _NNF)
    for nd in (1, 2, 3):
        register_fast_form(f"conv{nd}d", "cuda", _conv_form(nd), _NNF)
    for nd in (2, 3):
        register_fast_form(f"max_pool{nd}d", "cuda", _max_pool_form(nd), _NNF)


def _formula_grad(name, g, x, params):
    fn = {"gelu": F._gelu_grad, "silu": F._silu_grad, "softplus": F._softplus_grad,
          "elu": F._elu_grad, "mish": F._mish_grad, "hardswish": F._hardswish_grad,
          "logsigmoid": F._logsigmoid_grad}.get(name)
    if fn is not None:
        return fn(g, x, None, *params)
    if name == "leaky_relu":
        return F._leaky_relu_grad(g, x, None, *params)
    if name == "hardsigmoid":
        P = _pt()
        return P.where((x > -3.0) & (x < 3.0), g / 6.0, g * 0.0)
    lo, hi = params
    P = _pt()
    return P.where((x <= lo) | (x >= hi), g * 0.0, g)


def _act_mod():
    return _activation_module


def _float_only(input, name):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{input.dtype._legacy}\'')


@cuda.kernel('gelu', namespaces=_NNF)
def gelu(input, *, approximate="none"):
    A = _act_mod()
    A._check(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    kop = "gelu" if approximate == "none" else "gelu_tanh"
    return _activation("gelu", "GeluBackward0", kop, input, (approximate,), bparams=(approximate,))


@cuda.kernel('silu', namespaces=_NNF)
def silu(input, inplace=False):
    A = _act_mod()
    A._check(input, "silu")
    if input.dtype.is_complex:
        return A._complex_silu(input, inplace)
    _float_only(input, "silu")
    if inplace:
        return A._inplace(input, lambda x: silu(x))
    return _activation("silu", "SiluBackward0", "silu", input, ())


def _elu_impl(input, negcoef, input_scale, poscoef, name, inplace):
    A = _act_mod()
    A._check(input, name)
    _float_only(input, name)
    if inplace:
        return A._inplace(input, lambda x: _elu_impl(x, negcoef, input_scale, poscoef, name, False),
                          "elu" if negcoef < 0 else None)
    node = "CeluBackward0" if name == "celu" else "EluBackward0"
    return _activation("elu", node, "elu", input, (negcoef, input_scale, poscoef))


@cuda.kernel('elu', namespaces=_NNF)
def elu(input, alpha=1.0, inplace=False):
    return _elu_impl(input, float(alpha), 1.0, 1.0, "elu", inplace)


@cuda.kernel('selu', namespaces=_NNF)
def selu(input, inplace=False):
    A = _act_mod()
    return _elu_impl(input, A._SELU_ALPHA * A._SELU_SCALE, 1.0, A._SELU_SCALE, "selu", inplace)


@cuda.kernel('celu', namespaces=_NNF)
def celu(input, alpha=1.0, inplace=False):
    alpha = float(alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu_impl(input, alpha, 1.0 / alpha, 1.0, "celu", inplace)


@cuda.kernel('softplus', namespaces=_NNF)
def softplus(input, beta=1.0, threshold=20.0):
    A = _act_mod()
    A._check(input, "softplus")
    _float_only(input, "softplus")
    return _activation("softplus", "SoftplusBackward0", "softplus", input,
                       (float(beta), float(threshold)))


@cuda.kernel('leaky_relu', namespaces=_NNF)
def leaky_relu(input, negative_slope=0.01, inplace=False, _formula="leaky_relu"):
    A = _act_mod()
    A._check(input, "leaky_relu")
    _float_only(input, "leaky_relu")
    slope = float(negative_slope)
    if inplace:
        return A._inplace(input, lambda x: leaky_relu(x, slope, False, _formula),
                          "leaky_relu" if slope < 0 else None)
    return _activation("leaky_relu", "LeakyReluBackward0", "leaky_relu", input, (slope,))


@cuda.kernel('hardtanh', namespaces=_NNF)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    A = _act_mod()
    A._check(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    dt = input.dtype
    if dt is _C.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not dt.is_floating_point:
        if not dt.is_signed and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        min_val, max_val = int(min_val), int(max_val)
        if inplace:
            return clamp_(input, min_val, max_val)
        return clamp(input, min_val, max_val)
    if inplace:
        return A._inplace(input, lambda x: hardtanh(x, min_val, max_val))
    return _activation("hardtanh", "HardtanhBackward0", "hardtanh", input,
                       (float(min_val), float(max_val)))


@cuda.kernel('relu6', namespaces=_NNF)
def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _simple_activation(name, kname, node):
    def fn(input, inplace=False):
        A = _act_mod()
        A._check(input, name)
        _float_only(input, kname)
        if inplace:
            return A._inplace(input, lambda x: fn(x))
        return _activation(name, node, name, input, ())
    fn.__name__ = name
    return fn


hardsigmoid = cuda.kernel("hardsigmoid", namespaces=_NNF)(
    _simple_activation("hardsigmoid", "hardsigmoid", "HardsigmoidBackward0"))
hardswish = cuda.kernel("hardswish", namespaces=_NNF)(
    _simple_activation("hardswish", "hardswish", "HardswishBackward0"))
mish = cuda.kernel("mish", namespaces=_NNF)(_simple_activation("mish", "mish", "MishBackward0"))


def _held(v, dt):
    """Number ``v`` as a tensor of float dtype ``dt`` holds it (what an op
    comparing the tensor with ``v`` reads), as a Python float."""
    v = float(v)
    # (the sign in the cache's key: -0.0 == 0.0 would share an entry)
    return v if dt is _C.float64 else _held_cached(v, math.copysign(1.0, v), dt)


@functools.lru_cache(maxsize=256)
def _held_cached(v, sign, dt):
    return float(_pt().tensor(v, dtype=dt).item())


def _band_forward(kop, x, d0, d1):
    res = L._empty(tuple(x.shape), x.dtype, x.device)
    L._elementwise("unary", (kop, (L._tag(x.dtype, kop),)), res, [x], L._params(d0=d0, d1=d1))
    return res


# nn.functional's band ops: one kernel for the values of the front-ends'
# composites (3-9 launches each); the front-ends keep their checks, out=
# and autograd nodes
@cuda.loop("prelu")
def _prelu(x, w):
    """``where(x > 0, x, x * w)`` (``w`` shaped to broadcast, of x's dtype) in one kernel."""
    res = L._empty(tuple(x.shape), x.dtype, x.device)
    L._elementwise("binary", ("prelu", (L._tag(x.dtype, "prelu"),)), res, [x, w], L._params())
    return res


@cuda.loop("hardshrink")
def _hardshrink(input, lambd):
    return _band_forward("hardshrink", input, _held(lambd, input.dtype), 0.0)


@cuda.loop("softshrink")
def _softshrink(input, lambd):
    held = _held(lambd, input.dtype)
    return _band_forward("softshrink", input, held, held)


@cuda.loop("threshold")
def _threshold(input, threshold, value):
    # the value as the dtype holds it; one it cannot hold is refused, as the
    # composite's full_like(input, value) refuses it
    v = float(value)
    if math.isfinite(v) and abs(v) > _pt().finfo(input.dtype).max:
        name = {_C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16", _C.float32: "float"}.get(
            input.dtype, "double")
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return _band_forward("threshold", input, _held(threshold, input.dtype), _held(v, input.dtype))


@cuda.kernel("logsigmoid", namespaces=_NNF)
def logsigmoid(input, *, out=None):
    """One kernel each way (the CPU's composite makes six launches); ``out=`` as
    nn.functional's."""
    A = _act_mod()
    A._check(input, "logsigmoid")
    check_out_grad("log_sigmoid_forward", out, input)
    _float_only(input, "log_sigmoid_forward")
    r = _activation("logsigmoid", "LogSigmoidBackward0", "logsigmoid", input, ())
    return r if out is None else copy_out_same_dtype(out, r)


# the in-place forms nn.functional declares as ops of their own
@cuda.kernel("elu_", namespaces=_NNF)
def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


@cuda.kernel("celu_", namespaces=_NNF)
def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


@cuda.kernel("selu_", namespaces=_NNF)
def selu_(input):
    return selu(input, True)


@cuda.kernel("leaky_relu_", namespaces=_NNF)
def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


# ---------------------------------------------------------------------------
# layer norm (one pass per row) and the fused Adam step

# the forward row kernel of layer norm per dtype
_LN_NAMES = {dt: f"ptc_nnnorm_lnfwd_{L._tag(dt, 'layer_norm')}"
             for dt in (_C.float32, _C.float64, _C.float16, _C.bfloat16)}


class _LayerNormKernels:
    """``layer_norm_forward``/``layer_norm_backward`` of ``_ops.kernels._nn_kernels``
    on CUDA tensors (same contract: None when they do not apply)."""

    @staticmethod
    def layer_norm_forward(x, n, weight, bias, eps):
        dt = x.dtype
        if dt in _LN_NAMES:
            # the checks, allocations and launch below, from C
            name = _LN_NAMES[dt]
            _prefetch(x.device, name)
            r = _dense_fast.layer_norm_rows(x, n, weight, bias, eps, name)
            if r is not None:
                return r
        if x.dtype not in (_C.float32, _C.float64, _C.float16, _C.bfloat16) or not x.is_contiguous() \
                or n <= 0 or x.numel() == 0 or x.numel() % n:
            return None
        for p in (weight, bias):
            # (a weight on another device is declined: its pointer would be
            # read by the kernel -- on a GPU an illegal address)
            if p is not None and (p.dtype is not x.dtype or p.numel() != n or not p.is_contiguous()
                                  or p.device != x.device):
                return None
        M = x.numel() // n
        y = L._empty(tuple(x.shape), x.dtype, x.device)
        mean = L._empty((M,), x.dtype, x.device)
        rstd = L._empty((M,), x.dtype, x.device)
        name = f"ptc_nnnorm_lnfwd_{L._tag(x.dtype, 'layer_norm')}"
        _prefetch(x.device, name)
        L._launch(x.device.index, name, M,
                  [L._ll(M), L._ll(n), L._ptr(y), L._ptr(mean), L._ptr(rstd), L._ptr(x),
                   L._ptr(weight) if weight is not None else _null(),
                   L._ptr(bias) if bias is not None else _null(), L.ctypes.c_double(float(eps))],
                  rows=True)
        return y, mean, rstd

    @staticmethod
    def layer_norm_backward(g, x, mean, rstd, weight, need_w, need_b, need_x=True):
        if tuple(g.shape) != tuple(x.shape) or g.dtype is not x.dtype or not g.is_contiguous() \
                or mean.numel() == 0:
            return None
        M = mean.numel()
        n = x.numel() // M
        tag = L._tag(x.dtype, "layer_norm_backward")
        gx = None
        if need_x:
            gx = L._empty(tuple(x.shape), x.dtype, x.device)
            _prefetch(x.device, f"ptc_nnnorm_lnbwd_{tag}")
            L._launch(x.device.index, f"ptc_nnnorm_lnbwd_{tag}", M,
                      [L._ll(M), L._ll(n), L._ptr(gx), L._ptr(g), L._ptr(x), L._ptr(mean),
                       L._ptr(rstd), L._ptr(weight) if weight is not None else _null()],
                      rows=True)
        gw = L._empty((n,), x.dtype, x.device) if need_w else None
        gb = L._empty((n,), x.dtype, x.device) if need_b else None
        if gw is not None or gb is not None:
            _layer_norm_wb(x, g, mean, rstd, gw, gb, M, n, tag)
        return gx, gw, gb


# The weight/bias gradients sum M rows per column.  A thread per column alone made
# n / 256 blocks (one for a width of 256) that loop over every row: latency bound on a
# GPU (one SM reading the whole gradient; nine such launches in a small GPT's step).
# The rows are split in chunks so that about _LNWB_BLOCKS blocks run, each chunk at
# least _LNWB_MIN_ROWS rows; the chunks' partial sums (accumulation type) are then
# summed per column in chunk order (deterministic).
_LNWB_BLOCKS = 528
_LNWB_MIN_ROWS = 32


def lnwb_chunks(M, n):
    """``(rows per chunk, chunks)`` of the weight/bias gradient over (M, n)."""
    ncg = -(-n // L._BLOCK)
    k = max(1, min(-(-_LNWB_BLOCKS // ncg), -(-M // _LNWB_MIN_ROWS)))
    Mc = -(-M // k)
    return Mc, -(-M // Mc)


def _layer_norm_wb(x, g, mean, rstd, gw, gb, M, n, tag):
    if n <= 0 or M <= 0:
        return                  # (empty gradients; the forward declines such shapes)
    Mc, k = lnwb_chunks(M, n)
    pw = pb = None
    if k > 1:
        acc = _C.float64 if x.dtype is _C.float64 else _C.float32
        pw = L._empty((k * n,), acc, x.device) if gw is not None else None
        pb = L._empty((k * n,), acc, x.device) if gb is not None else None
    ptrs = [L._ptr(t) if t is not None else _null() for t in (gw, gb, pw, pb)]
    name = f"ptc_nnnorm_lnwb_{tag}"
    _prefetch(x.device, name)
    L._launch(x.device.index, name, -(-n // L._BLOCK) * k,
              [L._ll(n), L._ll(M), L._ll(Mc), L._ll(k)] + ptrs
              + [L._ptr(g), L._ptr(x), L._ptr(mean), L._ptr(rstd)], rows=True, block=L._BLOCK)
    if k > 1:
        _go(x.device, f"ptc_nnnorm_lnwb2_{tag}", n, [L._ll(k)] + ptrs)


@cuda.loop("softmax_backward")
def softmax_backward(g, y, dim, log):
    """One-pass softmax/log_softmax gradient over the last dim of contiguous
    ``g``/``y`` (``_ops.kernels._nn_kernels.softmax_backward``'s contract: None when
    it does not apply)."""
    if tuple(g.shape) != tuple(y.shape) or g.dtype is not y.dtype or y.dim() == 0 \
            or dim not in (-1, y.dim() - 1) or not g.is_contiguous() or not y.is_contiguous() \
            or not y.dtype.is_floating_point or y.numel() == 0 or g.device != y.device:
        return None
    Ln = int(y.shape[-1])
    M = y.numel() // Ln
    name = f"ptc_nnnorm_smbwd_{L._tag(y.dtype, 'softmax_backward')}"
    gx = L._empty(tuple(y.shape), y.dtype, y.device)
    _prefetch(y.device, name)
    L._launch(y.device.index, name, M, [L._ll(M), L._ll(Ln), L._ptr(gx), L._ptr(g), L._ptr(y),
                                        L._ll(int(bool(log)))], rows=True)
    return gx


@cuda.loop("layer_norm_kernels")
def layer_norm_kernels():
    return _LayerNormKernels


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, eps,
              weight_decay, bias_correction1, bias_correction2, maximize, decoupled):
    """One Adam/AdamW update of ``param`` in place (``ptcore._ops.kernels._optim.adam_step``'s
    contract and formula).  The registered loop is
    :func:`ptcore.cuda.ops.optim_fast.adam_step` (the same launch from C), which
    comes here for anything it does not take (and the errors)."""
    tag = _float_tag(param.dtype, "adam_step")
    for t, what in ((grad, "grad"), (exp_avg, "exp_avg"), (exp_avg_sq, "exp_avg_sq"),
                    (max_exp_avg_sq, "max_exp_avg_sq")):
        if t is None and what == "max_exp_avg_sq":
            continue
        if not isinstance(t, _C._TensorBase):
            raise TypeError(f"adam_step: {what} must be a tensor, got {type(t).__name__}")
        if t.dtype is not param.dtype or t.numel() != param.numel() or not t.is_contiguous() \
                or t.device != param.device:
            raise RuntimeError(f"adam_step: {what} must be a contiguous {param.dtype} tensor of "
                               f"{param.numel()} elements on {param.device}")
    _contig_of(param, "adam_step")
    args = struct.pack("<8d3q", 1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay,
                       bias_correction2 ** 0.5, eps, -(lr / bias_correction1), int(bool(maximize)),
                       int(weight_decay != 0 and not decoupled), int(weight_decay != 0 and decoupled))
    _go(param.device, f"ptc_nnoptim_adam_{tag}", param.numel(),
        [L._ptr(param), L._ptr(grad), L._ptr(exp_avg), L._ptr(exp_avg_sq),
         L._ptr(max_exp_avg_sq) if max_exp_avg_sq is not None else _null(), L._params(),
         L._struct(args)])
    for t in (param, exp_avg, exp_avg_sq, max_exp_avg_sq):
        if t is not None:
            t._bump_version()


def sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """One SGD-with-momentum update of ``param`` and ``buf`` in place
    (``ptcore._ops.kernels._optim.sgd_step``'s contract; the unfused chain's
    operations, see ``_kernels_nn._sgd``).  The registered loop is
    :func:`ptcore.cuda.ops.optim_fast.sgd_step`, which launches the same kernel
    from C and comes here for anything it does not take (and the errors)."""
    tag = _float_tag(param.dtype, "sgd_step")
    for t, what in ((grad, "grad"), (buf, "momentum_buffer")):
        if not isinstance(t, _C._TensorBase):
            raise TypeError(f"sgd_step: {what} must be a tensor, got {type(t).__name__}")
        if t.dtype is not param.dtype or t.numel() != param.numel() or not t.is_contiguous() \
                or t.device != param.device:
            raise RuntimeError(f"sgd_step: {what} must be a contiguous {param.dtype} tensor of "
                               f"{param.numel()} elements on {param.device}")
    _contig_of(param, "sgd_step")
    args = struct.pack("<4d3q", -lr, momentum, 1 - dampening, weight_decay,
                       int(weight_decay != 0), int(bool(nesterov)), int(bool(maximize)))
    _go(param.device, f"ptc_nnoptim_sgd_{tag}", param.numel(),
        [L._ptr(param), L._ptr(grad), L._ptr(buf), L._params(), L._struct(args)])
    param._bump_version()
    buf._bump_version()


# ---------------------------------------------------------------------------
# the table

register = cuda.install       # run by ptcore.cuda.ops.register at CUDA's start
