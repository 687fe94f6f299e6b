"""Launching ptcore's CUDA kernels (:mod:`ptcore.cuda.kernels.library`) on device
tensors, and the CUDA kernels of the operator table built on them.

Each launch goes through the driver interface only (``module_load`` of the
kernel's program, memoised per device, then ``launch`` on the current
stream of the tensors' device), so the same code runs on a GPU and on the
emulated device.  Arguments follow the kernel ABI of ``_kernels``: element
counts as ``long long``, device pointers, a ``ptc_params`` struct and, for
the strided variants, a ``ptc_strided<K>`` struct whose dims were collapsed
by :func:`~ptcore.cuda.kernels.library.collapse_dims`.

:func:`register` puts the front-ends below into the table
(``OpDef.kernels['cuda']``): the pointwise family (add, sub, mul, div, neg,
exp, log, sqrt, abs, relu, sigmoid, tanh, maximum, minimum and the in-place
``add_``/``sub_``/``mul_``/``div_``) and the matmul family (mm, addmm,
matmul, bmm) through the driver's cuBLAS GEMM.  The reductions run their
front-ends (declared ``device="frontend"``) over the loops of
:mod:`ptcore.cuda.ops.reduce`.
"""
import ctypes
import threading

from ptcore import _tensor as _C
from ptcore._settings import _state as _settings_state
from ptcore._settings import fp32_precision_of as _fp32_precision_of
from ptcore.cuda.kernels import library as K
from ptcore.cuda.ops.registration import Registrations
from ptcore.cuda.ops.strided_args import strided_arg as _strided_arg
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.runtime.device_storage import empty as _device_empty
from ptcore.cuda.runtime.device_storage import dense_pair as _dense_pair, \
    dense_pair_result as _dense_pair_result, dense_result as _dense_result, dense_self as _dense_self
from ptcore._dispatch.table import lookup
from ptcore._ops import matmul_out_dtype
from ptcore._ops.pointwise import neg_dtype_check, relu_dtype_check

__all__ = ["cast_copy", "fill", "unary", "binary", "gemm_mm", "register",
           "launch_function", "parts", "by_parts"]

# this module's op kernels, each registered where it is defined (see the end)
cuda = Registrations()
_T = ("Tensor",)

_BLOCK = 256
_lock = threading.Lock()
_functions = {}        # (driver, device, kernel name) -> (driver, function handle, grid cap)

_GEMM_TYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14, "complex64": 4, "complex128": 5}


def _name(dt):
    return str(dt).rsplit(".", 1)[-1]


_tags = {}             # dtype -> kernel tag


def _tag(dt, what):
    t = _tags.get(dt)
    if t is not None:
        return t
    t = K.TAGS.get(_name(dt))
    if t is not None:
        _tags[dt] = t
    else:
        raise NotImplementedError(f"{what}: no CUDA kernel yet for dtype {dt}")
    return t


def _function(idx, name):
    return _entry(idx, name)[1]


def _entry(idx, name):
    """``(driver, function handle, multiprocessor count)`` of kernel
    ``name`` on device ``idx``, memoised per driver."""
    drv = _runtime.lazy_init(name)
    key = (drv, idx, name)
    e = _functions.get(key)
    if e is None:
        try:
            K.kernel(name)
        except Exception:
            raise NotImplementedError(f"no CUDA kernel {name} in ptcore's kernel library") from None
        _store_functions(drv, idx, drv.module_load(idx, K.program_source([name]), [name]))
        e = _functions[key]
    return e


def _store_functions(drv, idx, handles):
    """Memoise ``{kernel name: function handle}`` loaded on device ``idx``
    (a name already there keeps its handle)."""
    grid_cap = drv.device_properties(idx)["multi_processor_count"] * 8
    with _lock:
        for n, f in handles.items():
            _functions.setdefault((drv, idx, n), (drv, f, grid_cap))


def _launch(idx, name, n, args, rows=False, block=128):
    drv = _runtime._state["driver"]
    e = _functions.get((drv, idx, name)) if drv is not None else None
    if e is None:
        e = _entry(idx, name)
        drv = e[0]
    if rows:                    # one block (of ``block`` threads) per row, blocks loop over rows
        grid = max(1, min(n, e[2]))
    else:
        grid = max(1, min((n + _BLOCK - 1) // _BLOCK, e[2]))
        block = _BLOCK
    drv.set_current(idx)
    launch_function(drv, e[1], grid, block, args, 0, _runtime.current_stream_handle(idx))


def launch_function(drv, function, grid, block, args, shared_mem, stream):
    """Launch kernel handle ``function`` on ``stream`` (its device current)
    through the driver's C launcher; ``args``: ints (``long long`` s, device
    pointers), bytes (structs by value) and ctypes values."""
    launcher = drv.launcher
    if launcher is None:
        drv.launch(function, grid, block, [_as_ctypes(a) for a in args], shared_mem, stream)
        return
    rc = launcher.launch(function, grid, block, stream, args, shared_mem)
    if rc:
        drv.launch_failed(rc, function)


def _as_ctypes(a):
    if type(a) is int:
        return ctypes.c_longlong(a)
    if type(a) is bytes:
        return ctypes.create_string_buffer(a, len(a))
    return a


def _ll(v):
    return int(v)


def _ptr(t):
    """``t``'s device address for a kernel argument.  A tensor elsewhere is
    refused: its host pointer read by a kernel is an illegal address on a GPU,
    which poisons the CUDA context for every later call (the emulated device
    reads host memory, so only this check shows such a caller there)."""
    if not t.is_cuda:
        raise RuntimeError(f"a CUDA kernel was given a tensor on {t.device} "
                           f"(shape {tuple(t.shape)}, {t.dtype}); expected a CUDA tensor")
    return t.data_ptr()


def _struct(b):
    return bytes(b)


_NO_PARAMS = _struct(K.pack_params())   # read-only: kernels take ptc_params by value


def _params(**kw):
    if not kw:
        return _NO_PARAMS
    return _struct(K.pack_params(**kw))


def _bcast_strides(t, shape):
    """``t``'s element strides seen broadcast to ``shape`` (0 where expanded)."""
    nd = len(shape)
    off = nd - t.dim()
    sizes, strides = list(t.shape), list(t.stride())
    out = [0] * nd
    for d in range(t.dim()):
        if sizes[d] != 1:
            out[off + d] = strides[d]
    return out


def _elementwise(family, op_tags, out, inputs, params):
    """Launch ``ptc_<family>_<op>_<tags>`` over ``out``'s shape (inputs
    broadcast to it); contiguous variant when every operand is dense."""
    n = out.numel()
    if n == 0:
        return out
    try:
        # None: one dense dim for every operand after collapsing (the
        # contiguous variant), else the ptc_strided struct's bytes
        st = _strided_arg(out, inputs)
    except ValueError:
        raise NotImplementedError(f"{family}: more than {K.MAX_DIMS} non-mergeable dims on CUDA")
    args = [n, out.data_ptr()]
    for x in inputs:
        args.append(x.data_ptr())
    args.append(params)
    if st is None:
        _launch(out.device.index, K.kernel_name(family, op_tags[0], op_tags[1], "c"), n, args)
    else:
        args.append(st)
        _launch(out.device.index, K.kernel_name(family, op_tags[0], op_tags[1], "s"), n, args)
    return out


# ---------------------------------------------------------------------------
# copies and fills

def cast_copy(dst, src):
    """``dst.copy_(src)`` on one device with a cast kernel (``src``
    broadcast to ``dst``); complex32 (no kernels of its own) part by part."""
    if dst.dtype is _C.complex32 or src.dtype is _C.complex32:
        return _cast_copy_parts(dst, src)
    tags = (_tag(src.dtype, "copy_"), _tag(dst.dtype, "copy_"))
    _elementwise("cast", ("", tags), dst, [src], _params())
    return dst


# complex tensors as their real and imaginary parts (real-dtype views)

def parts(t):
    """(real, imaginary) part views (real dtype) of complex tensor ``t``."""
    rdt = t.dtype.to_real()
    st = [2 * s for s in t.stride()]
    off = 2 * t.storage_offset()
    stor = t.untyped_storage()
    return (_C._tensor_from_storage(stor, rdt, list(t.shape), st, off),
            _C._tensor_from_storage(stor, rdt, list(t.shape), st, off + 1))


def _real_view(t):
    """``view_as_real(t)`` without the op layer (shape + [2])."""
    return _C._tensor_from_storage(t.untyped_storage(), t.dtype.to_real(), list(t.shape) + [2],
                                   [2 * s for s in t.stride()] + [1], 2 * t.storage_offset())


def by_parts(fn, input, *args):
    """A 1-D complex result of a data-movement loop ``fn`` (masked_select)
    run on the real and imaginary parts of ``input`` separately."""
    re, im = parts(input)
    r = fn(re, *args)
    i = fn(im, *args)
    out = _empty(list(r.shape), input.dtype, input.device)
    ore, oim = parts(out)
    if r.numel():
        cast_copy(ore, r)
        cast_copy(oim, i)
    return out


def _cast_copy_parts(dst, src):
    """:func:`cast_copy` with a complex32 side: the real and imaginary parts
    (float16 views) cast separately; a real side is the real part (zero
    imaginary part)."""
    if dst.dtype.is_complex:
        dre, dim_ = parts(dst)
        if src.dtype.is_complex:
            sre, sim = parts(src)
            cast_copy(dim_, sim)
        else:
            sre = src
            fill(dim_, 0)
        cast_copy(dre, sre)
    else:
        cast_copy(dst, parts(src)[0])
    return dst


def fill(t, value):
    """``t.fill_(value)`` with the fill kernel."""
    tag = _tag(t.dtype, "fill_")
    if t.dtype.is_complex:
        v = complex(value)
        p = _params(d0=v.real, d1=v.imag)
    elif isinstance(value, complex):
        raise NotImplementedError("fill_: a complex value into a real tensor has no CUDA kernel")
    else:
        p = _number_params(t.dtype, value)
    _elementwise("fill", ("", (tag,)), t, [], p)
    return t


def _number_params(dt, value):
    """The ptc_params carrying real number ``value`` for a kernel of real
    dtype ``dt`` (the fill kernel and the ``scalar`` family read it there)."""
    if dt.is_floating_point:
        return _params(d0=float(value))
    return _params(i0=int(value))


def _empty(shape, dt, dev):
    return _device_empty(list(shape), dt, dev)


def _device_of(*xs):
    for x in xs:
        if isinstance(x, _C._TensorBase) and x.device.type == "cuda":
            return x.device
    raise RuntimeError("expected a CUDA tensor argument")


def _as_operand(x, dt, dev):
    """``x`` (tensor or Python number) as a tensor of ``dt`` on ``dev``."""
    if isinstance(x, _C._TensorBase):
        if x.device != dev:
            # a 0-d CPU tensor (the only CPU tensor allowed) is a host value, as torch
            # passes it to its kernel: filled on the device in its own dtype (exact),
            # not copied, since a copy from pageable host memory waits for the stream
            try:
                y = _empty((), x.dtype, dev)
                fill(y, x.item())
            except NotImplementedError:
                # its dtype has no CUDA kernels (uint16/32/64, float8, complex32): the
                # value filled in ``dt`` straight away where that converts it as a cast does
                if dt.is_complex or not x.dtype.is_complex:
                    try:
                        y = _empty((), dt, dev)
                        fill(y, x.item())
                        return y
                    except NotImplementedError:
                        pass
                y = x.to(dev)
            x = y
        if x.dtype is not dt:
            y = _empty(x.shape, dt, dev)
            cast_copy(y, x)
            x = y
        return x
    t = _empty((), dt, dev)
    fill(t, x)
    return t


def _direct_out(out, shape, dt, dev, inputs):
    """Whether an elementwise op may write its result straight into
    ``out=``: a dense tensor of the result's dtype, shape and device.  An
    ``out`` whose elements overlap each other, or partially overlap an input,
    raises PyTorch's error first (one that is exactly an input is fine:
    each element reads only its own position).  Anything else goes through
    a temporary (:func:`_finish`)."""
    if not isinstance(out, _C._TensorBase) or out.device != dev:
        return False
    for x in inputs:
        _check_write_overlap(out, x)
    return (out.dtype is dt and list(out.shape) == list(shape) and out.is_contiguous()
            and out.numel() > 0)


def _finish(result, out, fname):
    if out is None:
        return result
    if not isinstance(out, _C._TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device != result.device:
        raise RuntimeError(f"{fname}(): out is on {out.device}, the result on {result.device}")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    out.copy_(result)
    return out


# ---------------------------------------------------------------------------
# pointwise

# the unary ops whose kernel is built for floating dtypes only (the kernel
# library's kinds column): an integer or bool input computes in the default
# float dtype, as torch's exp/log/sqrt/... promote it
_FLOAT_ONLY_UNARY = frozenset(row[0] for row in K.UNARY if row[1] == "f")


def unary(op, x, out=None):
    if out is None:
        res = _dense_result(x)          # a dense floating tensor: the kernel straight away
        if res is not None:
            name = _dense_name("unary", op, res.dtype)
            n = res.numel()
            if n:
                _launch(res.device.index, name, n, [n, res.data_ptr(), x.data_ptr(), _NO_PARAMS])
            return res
    dev = _device_of(x)
    dt = x.dtype
    if op in _FLOAT_ONLY_UNARY and not dt.is_floating_point:
        dt = _C.get_default_dtype()
        x = _as_operand(x, dt, dev)
    if out is not None and _direct_out(out, x.shape, dt, dev, [x]):
        _elementwise("unary", (op, (_tag(dt, op),)), out, [x], _params())
        out._bump_version()
        return out
    res = _empty(x.shape, dt, dev)
    _elementwise("unary", (op, (_tag(dt, op),)), res, [x], _params())
    return _finish(res, out, op)


def _result_dtype(op, a, b):
    if isinstance(a, _C._TensorBase) and isinstance(b, _C._TensorBase) and a.dtype is b.dtype:
        dt = a.dtype                # result_type of one dtype
    else:
        import ptcore
        dt = ptcore.result_type(a, b)
    if op == "div" and not dt.is_floating_point:
        dt = _C.get_default_dtype()
    return dt


def _broadcast_shape(a, b, fname):
    sa = list(a.shape) if isinstance(a, _C._TensorBase) else []
    sb = list(b.shape) if isinstance(b, _C._TensorBase) else []
    if sa == sb or not sb:
        return sa
    if not sa:
        return sb
    n = max(len(sa), len(sb))
    sa = [1] * (n - len(sa)) + sa
    sb = [1] * (n - len(sb)) + sb
    out = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"{fname}: The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return out


# the binary ops whose kernel's result is bool (the comparisons and logical ops):
# the kernel library's own column
_BOOL_OUT = frozenset(row[0] for row in K.BINARY if row[2] == "bool")


# op -> (dense, scalar): the fast paths of its binary kernel, given where the
# kernel is registered (_binary below)
_FAST_PATHS = {}
_NO_FAST = (False, None)


def _dense_binary(op, a, b):
    """``op(a, b)`` of two CUDA tensors of one floating dtype and shape, both
    dense: the kernel launched straight away (the general path below
    would find the same kernel and arguments); None when not that case."""
    res = _dense_pair_result(a, b)          # the checks and the result, in C
    if res is None:
        return None
    name = _dense_name("binary", op, res.dtype)
    n = res.numel()
    if n:
        _launch(res.device.index, name, n, [n, res.data_ptr(), a.data_ptr(), b.data_ptr(),
                                            _NO_PARAMS])
    return res


def _dense_scalar(op, a, b):
    """``op(a, b)`` of a dense floating CUDA tensor ``a`` and a Python int or
    float ``b`` (the result has ``a``'s dtype): the ``scalar`` kernel
    launched straight away; None when not that case."""
    res = _dense_result(a)
    if res is None:
        return None
    name = _dense_name("scalar", _FAST_PATHS[op][1][0], res.dtype)
    n = res.numel()
    if n:
        _launch(res.device.index, name, n, [n, res.data_ptr(), a.data_ptr(),
                                            _params(d0=float(b))])
    return res


def _dense_name(family, op, dt):
    """The contiguous kernel ``ptc_<family>_<op>_<dt>_c`` (the dense fast
    paths' name, made once per family, op and dtype)."""
    key = (family, op, dt)
    name = _DENSE_NAMES.get(key)
    if name is None:
        name = _DENSE_NAMES[key] = K.kernel_name(family, op, (_tag(dt, op),), "c")
    return name


_DENSE_NAMES = {}


def binary(op, a, b, out=None, alpha=None, fname=None):
    if out is None and alpha is None:
        dense, scalar = _FAST_PATHS.get(op, _NO_FAST)
        if dense:
            res = _dense_binary(op, a, b)
            if res is not None:
                return res
        tb = type(b)
        if (tb is float or tb is int) and scalar is not None and op not in _BOOL_OUT:
            res = _dense_scalar(op, a, b)
            if res is not None:
                return res
    fname = fname or op
    dev = _device_of(a, b)
    dt = _result_dtype(op, a, b)
    if op == "sub" and dt is _C.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    shape = _broadcast_shape(a, b, fname)
    rdt = _C.bool_ if op in _BOOL_OUT else dt
    if out is not None and _direct_out(out, shape, rdt, dev, (a, b)):
        _binary_into(op, out, a, b, alpha, fname, dt, dev)
        out._bump_version()
        return out
    res = _empty(shape, rdt, dev)
    _binary_into(op, res, a, b, alpha, fname, dt, dev)
    return _finish(res, out, fname)


def _span(t):
    """The byte range ``[lo, hi)`` a CUDA tensor's elements occupy."""
    lo = t.data_ptr()
    hi = lo + t.itemsize
    for s, st in zip(t.shape, t.stride()):
        if s == 0:
            return lo, lo
        if st < 0:
            lo += (s - 1) * st * t.itemsize
        else:
            hi += (s - 1) * st * t.itemsize
    return lo, hi


def _check_write_overlap(self, other):
    """PyTorch's memory-overlap errors of an in-place elementwise op."""
    if any(st == 0 and n > 1 for n, st in zip(self.shape, self.stride())):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")
    if isinstance(other, _C._TensorBase) and other.device == self.device and other.numel() \
            and self.numel() and not (other.data_ptr() == self.data_ptr()
                                      and other.shape == self.shape
                                      and other.stride() == self.stride()):
        lo, hi = _span(self)
        olo, ohi = _span(other)
        if olo < hi and lo < ohi:
            raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                               "written-to tensor refer to a single memory location. Please clone() "
                               "the tensor before performing the operation.")


def _writes_directly(op, self, other):
    """Whether in-place ``self.<op>_(other)`` may be computed straight into
    ``self``: same result dtype, ``other`` broadcasts to ``self``'s shape,
    and ``other`` is a number, a tensor whose memory is disjoint from
    ``self``'s, or ``self`` itself (elementwise, each element reads only its
    own position)."""
    if op in _BOOL_OUT or _result_dtype(op, self, other) is not self.dtype:
        return False
    if op == "sub" and self.dtype is _C.bool_:
        return False
    if not isinstance(other, _C._TensorBase):
        return True
    if other.device != self.device or other.dim() > self.dim():
        return False
    off = self.dim() - other.dim()
    for i, s in enumerate(other.shape):
        if s != 1 and s != self.shape[off + i]:
            return False
    return True                 # overlaps were refused by _check_write_overlap


_NUMBERS = (int, float, bool)


def _host_value(x, dev):
    """``x``, or its Python number when ``x`` is a 0-d tensor off ``dev`` (a CPU
    scalar): torch hands such a tensor's value to the kernel in the op's
    computation type (``scalar_value<opmath_t>``), not rounded to the result
    dtype first, and reading it waits for no stream."""
    if isinstance(x, _C._TensorBase) and x.device != dev and x.dim() == 0:
        return x.item()
    return x


def _scalar_into(op, res, a, b, alpha, fname, dt, dev):
    """``_binary_into`` when one operand is a Python number: launch the
    ``scalar`` kernel with the number in the params (no device operand);
    False when that case has no such kernel."""
    kops = _FAST_PATHS.get(op, _NO_FAST)[1]
    if kops is None or alpha not in (None, 1) or dt.is_complex:
        return False
    a, b = _host_value(a, dev), _host_value(b, dev)
    if type(b) in _NUMBERS and isinstance(a, _C._TensorBase):
        kop, x, v = kops[0], a, b
    elif type(a) in _NUMBERS and isinstance(b, _C._TensorBase):
        kop, x, v = kops[1], b, a
    else:
        return False
    if kop is None:
        return False
    x = _as_operand(x, dt, dev)
    _elementwise("scalar", (kop, (_tag(dt, fname),)), res, [x], _number_params(dt, v))
    return True


def _binary_into(op, res, a, b, alpha, fname, dt=None, dev=None):
    """Launch binary ``op`` of ``a`` and ``b`` (computed in ``res``'s dtype,
    or ``dt``) into ``res``."""
    dt = res.dtype if dt is None else dt
    dev = res.device if dev is None else dev
    if _scalar_into(op, res, a, b, alpha, fname, dt, dev):
        return
    x, y = _as_operand(a, dt, dev), _as_operand(b, dt, dev)
    kop, p = op, _params()
    if dt is _C.bool_ and op == "add" and alpha is not None:
        # bool a + alpha * b is a | (alpha & b) (no add_alpha kernel for bool)
        if not alpha:
            cast_copy(res, x)
            return
        alpha = None
    if op in ("add", "sub") and (alpha not in (None, 1) or op == "sub"):
        al = 1 if alpha is None else alpha
        if op == "sub":
            al = -al
        kop = "add_alpha"
        p = _params(d0=float(al)) if dt.is_floating_point else _params(i0=int(al))
    _elementwise("binary", (kop, (_tag(dt, fname),)), res, [x, y], p)


def _dense_inplace(op, self, other):
    """``self op= other`` written by the kernel straight away when ``self``
    is a dense floating CUDA tensor and ``other`` a Python int/float or a
    dense tensor of its dtype and shape that is ``self`` or does not overlap
    it; False when not that case."""
    if not _dense_self(self):
        return False
    n = self.numel()
    p = self.data_ptr()
    to = type(other)
    if to is float or to is int:
        kops = _FAST_PATHS.get(op, _NO_FAST)[1]
        if kops is None:
            return False
        name = _dense_name("scalar", kops[0], self.dtype)
        args = [n, p, p, _params(d0=float(other))]
    elif _dense_pair(self, other):
        q = other.data_ptr()
        if q != p and abs(q - p) < n * self.itemsize:
            return False            # a partial overlap: the general path's checks
        name = _dense_name("binary", op, self.dtype)
        args = [n, p, p, q, _NO_PARAMS]
    else:
        return False
    if n:
        _launch(self.device.index, name, n, args)
    self._bump_version()
    return True


def _inplace(op):
    def kernel(self, other, *, alpha=1, rounding_mode=None):
        import ptcore
        if rounding_mode is None and (alpha == 1 and type(alpha) is int or op not in ("add", "sub")) \
                and _FAST_PATHS.get(op, _NO_FAST)[0] and _dense_inplace(op, self, other):
            return self
        _check_write_overlap(self, other)
        if rounding_mode is not None:
            r = _frontend("div")(self, other, rounding_mode=rounding_mode)
        elif _writes_directly(op, self, other):
            # the result has self's dtype and shape and no operand partially
            # overlaps it: the kernel writes self (no temporary, no copy back)
            _binary_into(op, self, self, other, alpha if op in ("add", "sub") else None, op + "_")
            self._bump_version()
            return self
        else:
            r = binary(op, self, other, alpha=alpha if op in ("add", "sub") else None, fname=op + "_")
        if tuple(r.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                               f"shape {list(r.shape)}")
        if not ptcore.can_cast(r.dtype, self.dtype):
            raise RuntimeError(f"result type {_cname(r.dtype)} can't be cast to the desired output "
                               f"type {_cname(self.dtype)}")
        self.copy_(r)
        return self
    kernel.__name__ = op + "_"
    return kernel


# ---------------------------------------------------------------------------
# a dim argument (one dim or a list of them) as non-negative dims of an nd tensor

def _norm_dims(dim, nd, fname):
    if dim is None:
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(nd))
    out = []
    for d in dims:
        d = int(d)
        if not -max(nd, 1) <= d < max(nd, 1):
            raise IndexError(f"{fname}: Dimension out of range (expected to be in range of "
                             f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {d})")
        d = d % max(nd, 1)
        if d in out:
            raise RuntimeError(f"{fname}: dim {d} appears multiple times in the list of dims")
        out.append(d)
    return [d for d in out if d < nd]


def _cname(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
            "float16": "Half", "bfloat16": "BFloat16", "uint8": "Byte", "int8": "Char",
            "int16": "Short"}.get(_name(dt), _name(dt))


# ---------------------------------------------------------------------------
# matmul family on cuBLAS

_GEMM_TYPES_OF = {getattr(_C, n): t for n, t in _GEMM_TYPES.items()}   # dtype -> cudaDataType


def gemm_unsupported(dt, batched):
    """torch's error for a GEMM of a dtype cuBLAS has none for (integers,
    bool): its dispatch's NotImplementedError, named after its kernel."""
    kname = "bmm_cuda" if batched else "addmm_cuda"
    return NotImplementedError(f'"{kname}" not implemented for \'{_cname(dt)}\'')


def _gemm_types(dt, fname):
    """``(cudaDataType, cublasComputeType_t)`` of a GEMM of ``dt``: float32
    computes in TF32 when ``ptcore.backends.cuda.matmul.allow_tf32`` (the
    float32 matmul precision is not "highest"), the half types in float32."""
    t = _GEMM_TYPES_OF.get(dt)
    if t is None:
        raise NotImplementedError(f"{fname}: cuBLAS GEMM for {dt} is not supported on CUDA "
                                  "(float32, float64, float16, bfloat16, complex64 and complex128 are)")
    if t in (1, 5):              # R_64F, C_64F
        return t, 70
    if t == 0:
        return t, (68 if _settings_state["matmul_precision"] == "highest" else 77)
    return t, 68


def _conv_gemm_types(dt, fname):
    """``_gemm_types`` of a convolution's GEMMs: float32 computes in TF32
    while ``ptcore.backends.cudnn.conv.fp32_precision`` is ``"tf32"``
    (``backends.cudnn.allow_tf32``, True by default: torch's cuDNN
    convolutions' rule), not by the matmul precision."""
    t, comp = _gemm_types(dt, fname)
    if t == 0:
        comp = 77 if _fp32_precision_of("cuda", "conv") == "tf32" else 68
    return t, comp


def _contig(t):
    if t.is_contiguous():
        return t
    c = _empty(t.shape, t.dtype, t.device)
    return cast_copy(c, t)


def _gemm_operand(t):
    """(t, transposed): ``t`` itself when it is row-major contiguous or the
    transpose of a contiguous matrix (batch) -- cuBLAS reads the latter with
    op T, no copy (``x.mT``, ``x.mH`` operands) -- else a contiguous copy."""
    if t.is_contiguous():
        return t, False
    if t.dim() >= 2 and t.transpose(-1, -2).is_contiguous():
        return t, True
    return _contig(t), False


def gemm_mm(a, b, c, alpha=1.0, beta=0.0, fname="mm"):
    """``c = alpha * a @ b + beta * c`` for row-major 2-D (or batched 3-D)
    ``a`` (.., m, k), ``b`` (.., k, n) and contiguous ``c`` (.., m, n);
    transposed operands go to cuBLAS as op T.  ``c`` has ``a``'s dtype, or
    float32 for float16/bfloat16 operands (GemmEx's float32 C: the
    ``out_dtype=`` products)."""
    if a.dtype not in _GEMM_TYPES_OF:
        raise gemm_unsupported(a.dtype, a.dim() > 2)
    typ, comp = _gemm_types(a.dtype, fname)
    ctyp = typ if c.dtype is a.dtype else _GEMM_TYPES_OF[c.dtype]
    (a, ta), (b, tb) = _gemm_operand(a), _gemm_operand(b)
    batched = a.dim() == 3
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    batch = a.shape[0] if batched else 1
    if c.numel() == 0:
        return c
    if k == 0:
        if beta == 0:
            return fill(c, 0)
        beta_only = binary("mul", c, beta)
        return c.copy_(beta_only)
    drv = _runtime.lazy_init(fname)
    idx = c.device.index
    drv.set_current(idx)
    # row-major C = A @ B is column-major C^T = B^T A^T (a transposed operand's
    # memory is its column-major self: op T)
    scalar = complex if a.dtype.is_complex else float
    drv.gemm(idx, _runtime.current_stream_handle(idx), int(tb), int(ta), n, m, k, scalar(alpha),
             b.data_ptr(), typ, k if tb else n, a.data_ptr(), typ, m if ta else k, scalar(beta),
             c.data_ptr(), ctyp, n, comp,
             batch=batch, stride_a=k * n if batched else 0, stride_b=m * k if batched else 0,
             stride_c=m * n if batched else 0)
    return c


def _out_dtype():
    """The ``out_dtype=`` forms' front-ends (their checks; their product is
    the ``product_out_dtype`` loop of gemm_search_loops)."""
    return matmul_out_dtype


def _check_mm(a, b, fname):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"{fname}: self must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != "
                           f"{_cname(b.dtype)}")


def _mm(input, mat2, out_dtype=None, *, out=None):
    if out_dtype is not None:
        return _out_dtype().mm_dtype(input, mat2, out_dtype, out)
    _check_mm(input, mat2, "mm")
    c = _empty((input.shape[0], mat2.shape[1]), input.dtype, input.device)
    return _finish(gemm_mm(input, mat2, c), out, "mm")


def _addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1, out=None):
    if out_dtype is not None:
        return _out_dtype().addmm_dtype(input, mat1, mat2, out_dtype, beta, alpha, out)
    _check_mm(mat1, mat2, "addmm")
    m, n = mat1.shape[0], mat2.shape[1]
    c = _empty((m, n), mat1.dtype, mat1.device)
    if beta != 0:
        cast_copy(c, _as_operand(input, mat1.dtype, mat1.device))
    return _finish(gemm_mm(mat1, mat2, c, alpha, beta if beta != 0 else 0.0, "addmm"), out, "addmm")


def _bmm(input, mat2, out_dtype=None, *, out=None):
    if out_dtype is not None:
        return _out_dtype().bmm_dtype(input, mat2, out_dtype, out)
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 and batch2 must be 3D tensors")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    c = _empty((input.shape[0], input.shape[1], mat2.shape[2]), input.dtype, input.device)
    return _finish(gemm_mm(input, mat2, c, fname="bmm"), out, "bmm")


def _method_kernel(name, kernel, ntensors):
    """``kernel`` as the Tensor method's: torch's Tensor.mm/bmm/addmm take no
    ``out_dtype`` (a TypeError as Python's for the extra argument)."""
    def method(*args, **kwargs):
        if len(args) > ntensors:
            raise TypeError(f"Tensor.{name}() takes {ntensors} positional arguments but "
                            f"{len(args)} were given")
        if "out_dtype" in kwargs:
            raise TypeError(f"Tensor.{name}() got an unexpected keyword argument 'out_dtype'")
        return kernel(*args, **kwargs)
    method.__qualname__ = f"Tensor.{name}"
    return method


def _matmul(input, other, *, out=None):
    a, b = input, other
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != "
                           f"{_cname(b.dtype)}")
    squeeze_a = a.dim() == 1
    squeeze_b = b.dim() == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(1)
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    batch = _broadcast_batch(list(a.shape[:-2]), list(b.shape[:-2]))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if not batch:
        res = gemm_mm(a, b, _empty((m, n), a.dtype, a.device), fname="matmul")
    else:
        nb = 1
        for s in batch:
            nb *= s
        a3 = _contig(a.expand(*batch, m, k)).reshape(nb, m, k)
        b3 = _contig(b.expand(*batch, k, n)).reshape(nb, k, n)
        c = _empty((nb, m, n), a.dtype, a.device)
        gemm_mm(a3, b3, c, fname="matmul")
        res = c.reshape(*batch, m, n)
    if squeeze_a:
        res = res.squeeze(-2)
    if squeeze_b:
        res = res.squeeze(-1)
    return _finish(res, out, "matmul")


def _broadcast_batch(sa, sb):
    n = max(len(sa), len(sb))
    sa = [1] * (n - len(sa)) + sa
    sb = [1] * (n - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"matmul: the batch dims {sa} and {sb} cannot be broadcast")
        out.append(y if x == 1 else x)
    return out


# ---------------------------------------------------------------------------
# the table

def _unary_kernel(op):
    if op == "neg":
        def kernel(input, *, out=None):
            if isinstance(input, _C._TensorBase):
                neg_dtype_check(input.dtype)
            return unary(op, input, out)
    else:
        def kernel(input, *, out=None):
            return unary(op, input, out)
    kernel.__name__ = op
    return kernel


def _binary_kernel(op):
    if op in ("add", "sub"):
        def kernel(input, other, *, alpha=1, out=None):
            # alpha 1 (the default) is the plain op: None takes the dense path
            return binary(op, input, other, out,
                          None if alpha == 1 and type(alpha) is int else alpha)
    elif op == "div":
        def kernel(input, other, *, rounding_mode=None, out=None):
            if rounding_mode is not None:
                # the front-end's rounding division on its elementwise CUDA loops
                return _frontend("div")(input, other, rounding_mode=rounding_mode, out=out)
            return binary("div", input, other, out)
    elif op == "pow":
        def kernel(input, other, *, out=None):
            if isinstance(input, _C._TensorBase) and type(other) is int and other < 0 \
                    and not input.dtype.is_floating_point and not input.dtype.is_complex:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            return binary(op, input, other, out)
    elif op in _TENSOR_OTHER:
        def kernel(input, other, *, out=None):
            _tensor_input(op, input)
            if not isinstance(other, _C._TensorBase):
                raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not "
                                f"{type(other).__name__}")
            return binary(op, input, other, out)
    else:
        def kernel(input, other, *, out=None):
            if op in _BOOL_OUT:             # (the comparisons and logical ops; mul takes one)
                _tensor_input(op, input)
            return binary(op, input, other, out)
    kernel.__name__ = op
    return kernel


_TENSOR_OTHER = frozenset({"maximum", "minimum"})


def _tensor_input(op, input):
    """torch's comparison, logical and maximum/minimum ops take no number as
    ``input`` (add/sub/mul/div/pow do): TypeError, as the CPU front-ends."""
    if not isinstance(input, _C._TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _relu(input, *args, **kwargs):
    if isinstance(input, _C._TensorBase):
        relu_dtype_check(input.dtype)
    return unary("relu", input)


def _scalar_like(self, other):
    """``other`` as the first operand of a binary op with ``self``: a
    tensor or a Python number as is (the ``scalar`` kernels take it), else
    ``self``-shaped."""
    import ptcore
    if isinstance(other, _C._TensorBase) or type(other) in _NUMBERS:
        return other
    return ptcore.full_like(self, other, dtype=ptcore.result_type(self, other))


def _rsub(self, other):
    """``other - self``: the CPU front-end's bool refusal, then ``sub``."""
    if type(other) is bool or self.dtype is _C.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return _op("sub")(_scalar_like(self, other), self)


def _frontend(name):
    """The CPU front-end of op ``name`` (it runs its loops on the tensors' device)."""
    return lookup(name).raw


def _op(name):
    import ptcore
    return getattr(ptcore, name)


# ---------------------------------------------------------------------------
# registration: the direct launchers above (real dtypes: ptcore.cuda.ops.complex
# sends complex operands of the real_only kernels to the op's front-end)

# (neg and abs: torch's CPU has their complex32 forms too)
cuda.kernel("neg", real_only=True, complex32=True)(_unary_kernel("neg"))
for _op_name in ("exp", "log", "sqrt", "sigmoid", "tanh"):
    cuda.kernel(_op_name, real_only=True)(_unary_kernel(_op_name))
cuda.kernel("abs", real_only=True, complex32=True)(_unary_kernel("abs"))
cuda.kernel("relu", real_only=True)(_relu)
del _op_name


def _binary(op, dense=False, scalar=None, inplace=False, complex32=False):
    """Register ``op``'s binary kernel (and ``Tensor.<op>_``'s where
    ``inplace``) with the fast paths it takes: ``dense``, two dense tensors
    of one dtype and shape (or a dense ``self`` written in place) launch the
    kernel straight away; ``scalar``, a Python number operand runs the
    ``scalar`` kernel (kernels.library.SCALAR): its kernel op with the number
    second, and with the number first or None (the general path then makes
    the number a tensor); ``complex32``: torch's CPU has its complex32 form
    too (:mod:`ptcore.cuda.ops.complex` computes it in complex64)."""
    _FAST_PATHS[op] = (dense, scalar)
    cuda.kernel(op, real_only=True, complex32=complex32)(_binary_kernel(op))
    if inplace:
        cuda.kernel(op + "_", namespaces=_T, real_only=True)(_inplace(op))


_binary("add", dense=True, scalar=("add", "add"), inplace=True, complex32=True)
_binary("sub", dense=True, scalar=("sub", "rsub"), inplace=True, complex32=True)
_binary("mul", dense=True, scalar=("mul", "mul"), inplace=True, complex32=True)
_binary("div", dense=True, scalar=("div", "rdiv"), inplace=True)
_binary("maximum", dense=True)
_binary("minimum", dense=True)
_binary("pow", scalar=("pow", "rpow"))
_binary("eq", scalar=("eq", "eq"), complex32=True)
_binary("ne", scalar=("ne", "ne"), complex32=True)
_binary("lt", scalar=("lt", None))
_binary("le", scalar=("le", None))
_binary("gt", scalar=("gt", None))
_binary("ge", scalar=("ge", None))
for _op_name in sorted(_BOOL_OUT - _FAST_PATHS.keys()):    # the logical ops
    _binary(_op_name)
del _op_name


# the Tensor operator methods that are ops of their own: written with the
# public ops (their autograd lives in those ops' bodies)
@cuda.kernel("__pow__", namespaces=_T, optional=True, real_only=True)
def _pow_operator(self, other):
    return _op("pow")(self, other)


@cuda.kernel("__rpow__", namespaces=_T, optional=True, real_only=True)
def _rpow_operator(self, other):
    return _op("pow")(_scalar_like(self, other), self)


@cuda.kernel("__rsub__", namespaces=_T, optional=True, real_only=True)
def _rsub_operator(self, other):
    return _rsub(self, other)


@cuda.kernel("__rtruediv__", namespaces=_T, optional=True, real_only=True)
def _rtruediv_operator(self, other):
    # torch's number / tensor is ``self.reciprocal() * other`` (two roundings)
    return _op("mul")(_op("reciprocal")(self), other)


cuda.kernel("mm")(_mm)
cuda.kernel("addmm")(_addmm)
cuda.kernel("bmm")(_bmm)
for _method, _mm_kernel, _ntensors in (("mm", _mm, 2), ("bmm", _bmm, 2), ("addmm", _addmm, 3)):
    cuda.kernel(_method, namespaces=_T)(_method_kernel(_method, _mm_kernel, _ntensors))
del _method, _mm_kernel, _ntensors
cuda.kernel("matmul")(_matmul)

register = cuda.install       # run by ptcore.cuda.ops.register at CUDA's start
