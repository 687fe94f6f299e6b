"""complex64 / complex128 on CUDA: the launch side of
:mod:`ptcore.cuda.kernels.complex`.

Most complex work needs no code of its own here: the kernels keep the
names and ABI of the real ones, so the elementwise loops of the front-ends
(``_launch_index._ew``), copies/casts (``_launch.cast_copy``), fills, the
gather/scatter launches (complex elements as (re, im) pairs of the real
dtype) and cuBLAS GEMM (``CUDA_C_32F``/``CUDA_C_64F``) take complex dtypes
directly.  :func:`register` (called last by ``_launch.register``) adds what
does not fit there:

* the reductions sum/mean/prod, the scans cumsum/cumprod and trace on the
  complex reduce/scan kernels; var/std as ``var(re) + var(im)`` (PyTorch's
  real ``E|x - mean|^2``); vector norms on ``|x|``; all/any/count_nonzero
  on ``x != 0``;
* random fills: a complex tensor is its real view of ``2n`` scalars, the
  normal's std scaled by ``sqrt(1/2)`` (the CPU generator's convention, so
  CUDA and CPU draw the same values for the same seed);
* the ops whose CUDA kernel is a direct launcher of :mod:`.launch`/:mod:`.nn`
  written for real dtypes (``add``, ``exp``, ``abs`` ...: registered with
  ``real_only=True``, :func:`ptcore.cuda.ops.registration.real_only_ops`):
  with a complex operand they run the op's own front-end (which knows complex
  dtype rules and reaches the kernels through the loops above);
* ``complex``/``polar`` on CUDA tensors.
"""
from ptcore import _tensor as _C
from ptcore._dispatch.device import cpu_kernel, has_loop, register_kernel, register_loop
from ptcore._dispatch.table import lookup
from ptcore._dtype_utils import result_type
from ptcore._ops import pointwise as P
from ptcore.cuda.ops import index as LI
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops import reduce as LR
from ptcore.cuda.ops.launch import _real_view, parts
from ptcore.cuda.ops.registration import complex32_ops, real_only_ops

__all__ = ["register"]

_SQRT1_2 = 0.7071067811865476


def _has_complex(args):
    """Whether a tensor of ``args`` (lists/tuples searched too) is complex, or
    an argument is a Python complex (a few attribute reads per argument)."""
    for a in args:
        if isinstance(a, _C._TensorBase):
            if a.dtype.is_complex:
                return True
        elif isinstance(a, complex):
            return True
        elif type(a) in (list, tuple) and _has_complex(a):
            return True
    return False


# ---------------------------------------------------------------------------
# reductions and scans

def _tag(dt, fname):
    return L._tag(dt, fname)


def _crun(op, x, dims, out):
    """Complex ``op`` (sum, mean, prod) of ``x`` over ``dims`` into ``out``."""
    dims = sorted(d % max(x.dim(), 1) for d in dims) if x.dim() else []
    rows, M, Lr = LR._rows(x, dims)
    if M == 0 or out.numel() == 0:
        return
    if out.dtype is x.dtype and out.is_contiguous() and \
            out.untyped_storage().data_ptr() != rows.untyped_storage().data_ptr():
        res = out                   # the kernel writes the result in place
    else:
        res = L._empty([M], x.dtype, x.device)
    if Lr == 0:
        L.fill(res, {"sum": 0, "prod": 1}.get(op, complex("nan+nanj")))
    elif M <= LR._SPLIT_MAX_ROWS and Lr >= LR._SPLIT_MIN:
        # long rows, not many of them (mean() of a whole tensor): chunks of the
        # rows one block each, then the chunks' partials per row, as the real
        # reductions split theirs (one block per row took 2.8 ms for the mean
        # of 2048x1024 complex64 on an H200, torch 24 us)
        if op == "mean":            # the chunked sum, divided by the row length
            total = L._empty([M], x.dtype, x.device)
            LR._split_rows("sum", rows, total, M, Lr, L._params())
            length = L.fill(L._empty([1], x.dtype, x.device), Lr)
            tag = _tag(x.dtype, "div")
            L._elementwise("binary", ("div", (tag,)), res.reshape([M]), [total, length], L._params())
        else:
            LR._split_rows(op, rows, res, M, Lr, L._params())
    else:
        tag = _tag(x.dtype, op)
        L._launch(x.device.index, f"ptc_reduce_{op}_{tag}_{tag}_c", M,
                  [L._ll(M), L._ll(Lr), L._ptr(res), L._ptr(rows), L._params()], rows=True)
    if res is not out:
        L.cast_copy(out, res.reshape(list(out.shape)))


def _abs(x):
    return LI._ew_unary("abs", x, None, x.dtype, x.dtype.to_real(), "abs")


def _complex_reduction(name, orig):
    def kernel(x, dims, acc, out0, out1, keepdim, **kw):
        if not x.dtype.is_complex:
            return orig(x, dims, acc, out0, out1, keepdim, **kw)
        if name in ("sum", "mean", "prod"):
            if acc is not None and acc.is_complex and acc is not x.dtype:      # sum(dtype=complex128)
                x = LI._contig_copy(x, acc)
            _crun(name, x, dims, out0)
        elif name == "var":
            if out0 is not None:
                import ptcore
                re, im = parts(x)
                vr = L._empty(list(out0.shape), out0.dtype, x.device)
                vi = L._empty(list(out0.shape), out0.dtype, x.device)
                kw2 = dict(kw, take_sqrt=False)
                orig(re, dims, None, vr, None, keepdim, **kw2)
                orig(im, dims, None, vi, None, keepdim, **kw2)
                v = ptcore.add(vr, vi)
                if kw.get("take_sqrt"):
                    v = ptcore.sqrt(v)
                L.cast_copy(out0, v)
            if out1 is not None:
                _crun("mean", x, dims, out1)
        elif name == "vector_norm":
            orig(_abs(x), dims, None, out0, out1, keepdim, **kw)
        elif name in ("all", "any", "count_nonzero"):
            orig(LI._contig_copy(x, _C.bool_), dims, acc if acc is not None and not acc.is_complex else None,
                 out0, out1, keepdim, **kw)
        else:
            raise NotImplementedError(f"{name}: complex tensors have no CUDA kernel")
    kernel.__name__ = name
    return kernel


def _complex_line(name, orig):
    def kernel(x, dim, out0, out1=None):
        if not x.dtype.is_complex:
            return orig(x, dim, out0, out1)
        if name not in ("cumsum", "cumprod"):
            raise NotImplementedError(f"{name}: complex tensors have no CUDA kernel")
        if x.dim() == 0:
            L.cast_copy(out0, x)
            return
        rows, M, Lr = LR._rows(x, [dim % x.dim()])
        if M * Lr == 0:
            return
        tag = _tag(x.dtype, name)
        res = L._empty([M, Lr], x.dtype, x.device)
        L._launch(x.device.index, f"ptc_scan_{name}_{tag}_{tag}_c", M,
                  [L._ll(M), L._ll(Lr), L._ptr(res), L._ptr(rows), L._params()], rows=True)
        LI._put_rows(out0, res, dim)
    kernel.__name__ = name
    return kernel


def _complex_trace(orig):
    def kernel(out, input):
        if not input.dtype.is_complex:
            return orig(out, input)
        _crun("sum", input.diagonal(), [0], out)
    return kernel


# ---------------------------------------------------------------------------
# random fills

def _complex_random(orig):
    def kernel(t, kind, generator, *args):
        if not t.dtype.is_complex:
            return orig(t, kind, generator, *args)
        if kind not in ("uniform", "normal"):
            raise NotImplementedError(f"{kind} samples of {t.dtype} have no CUDA kernel")
        target = t if t.is_contiguous() else L._empty(list(t.shape), t.dtype, t.device)
        if kind == "normal":
            args = (args[0], args[1] * _SQRT1_2) + tuple(args[2:])
        orig(_real_view(target), kind, generator, *args)
        if target is not t:
            L.cast_copy(t, target)
        return t
    return kernel


# ---------------------------------------------------------------------------
# complex() and polar()

def _complex(real, imag, *, out=None):
    if not isinstance(real, _C._TensorBase) or not isinstance(imag, _C._TensorBase):
        raise TypeError("complex(): arguments 'real' and 'imag' must be Tensors")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype._legacy} but got scalar type "
                           f"{imag.dtype._legacy} for second argument")
    if real.dtype not in (_C.float32, _C.float64, _C.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype._legacy} and {imag.dtype._legacy}")
    cdt = real.dtype.to_complex()
    if isinstance(out, _C._TensorBase) and out.dtype is not cdt:
        # torch's complex_out checks out's dtype (no cast into another complex dtype)
        raise RuntimeError(f"Expected object of scalar type {cdt._legacy} but got scalar type "
                           f"{out.dtype._legacy} for argument 'out'")
    dev = L._device_of(real, imag)
    shape = list(P._D_broadcast(real.shape, imag.shape))
    res = L._empty(shape, real.dtype.to_complex(), dev)
    re, im = parts(res)
    if res.numel():
        L.cast_copy(re, L._as_operand(real, real.dtype, dev))
        L.cast_copy(im, L._as_operand(imag, imag.dtype, dev))
    return L._finish(res, out, "complex") if out is not None else res


def _polar(abs, angle, *, out=None):
    import ptcore
    P._polar_check(abs, angle, "polar_cuda")
    return _complex(ptcore.mul(abs, ptcore.cos(angle)), ptcore.mul(abs, ptcore.sin(angle)), out=out)


# ---------------------------------------------------------------------------
# registration


_registered = [False]




def _is_c32(a):
    return isinstance(a, _C._TensorBase) and a.dtype is _C.complex32


def _via_complex64(fn, name, args, kwargs):
    """``fn`` (the op's front-end) on complex64 copies of the complex32 tensors
    of ``args``, its complex64/float32 result rounded to complex32/float16
    where torch's result dtype is that."""
    if len(args) == 1 and "other" not in kwargs:        # neg, abs
        want = _C.float16 if name == "abs" else _C.complex32
    else:
        want = result_type(args[0], args[1])
    r = fn(*[a.to(_C.complex64) if _is_c32(a) else a for a in args], **kwargs)
    if (r.dtype, want) in ((_C.complex64, _C.complex32), (_C.float32, _C.float16)):
        r = r.to(want)
    return r


def _delegate(d, orig):
    raw = d.raw
    # (the complex32 ops torch's CPU has too: computed in complex64 and rounded
    # once to the result's dtype, as torch's complex<Half> arithmetic computes
    # each operation in complex<float>)
    c32 = d.name in complex32_ops()

    def kernel(*args, **kwargs):
        if _has_complex(args) or (kwargs and _has_complex(kwargs.values())):
            if c32 and kwargs.get("out") is None and any(_is_c32(a) for a in args[:2]):
                return _via_complex64(raw, d.name, args, kwargs)
            return raw(*args, **kwargs)
        return orig(*args, **kwargs)
    kernel.__name__ = getattr(orig, "__name__", d.name)
    return kernel


def register():
    """Hook the complex paths in (once; after the real CUDA kernels)."""
    if _registered[0]:
        return
    for name in LR.reductions.names("loop"):       # the reductions and scans of reduce.py
        if has_loop(name, "cuda"):
            register_loop(name, "cuda", _complex_reduction(name, cpu_kernel(name, "cuda", None)))
    for name in LR.scans.names("loop"):
        if has_loop(name, "cuda"):
            register_loop(name, "cuda", _complex_line(name, cpu_kernel(name, "cuda", None)))
    if has_loop("trace", "cuda"):
        register_loop("trace", "cuda", _complex_trace(cpu_kernel("trace", "cuda", None)))
    if has_loop("random_fill", "cuda"):
        register_loop("random_fill", "cuda", _complex_random(cpu_kernel("random_fill", "cuda", None)))
    # the ops whose CUDA kernel was registered real_only (a direct launcher for
    # real dtypes, ptcore.cuda.ops.registration): complex operands go to the
    # op's front-end instead
    for name in real_only_ops():
        for ns in ("ptcore", "Tensor", "linalg"):
            d = lookup(name, ns)
            if d is None:
                continue
            k = d.kernels.get("cuda")
            if k is None or k is d.raw or k is d.body or d.raw is None:
                continue
            register_kernel(name, "cuda", _delegate(d, k), namespaces=(ns,))
    register_kernel("complex", "cuda", _complex, namespaces=("ptcore",), optional=True)
    register_kernel("polar", "cuda", _polar, namespaces=("ptcore",), optional=True)
    _registered[0] = True
