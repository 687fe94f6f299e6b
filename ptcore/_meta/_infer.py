"""Shape and dtype inference of ops on meta tensors: their kernels on the
meta device, and the device's fallback for every other op.

Nothing here reads a meta tensor's data (it has none): an op's result is a
new meta tensor whose shape, dtype and strides are derived as follows.

* Elementwise ops (the ``pointwise`` family): the output shape is the
  broadcast of the arguments' shapes; the dtype (type promotion, integer to
  float, comparisons to bool) and the argument checks are the op's own,
  from its CPU front-end run on one-element CPU stand-ins of the same
  dtypes and ranks (each dimension 1): no duplicate dtype tables here.
* Reductions, matmul and the other ops whose output dimensions are copies
  of input dimensions (softmax, cumsum, embedding, sort ...): the CPU op
  runs on *probes*: stride-0 CPU stand-ins (one element of memory each) in
  which each distinct size of the arguments is replaced by a small distinct
  prime (0 and 1 kept).  Each output dimension is mapped back through that
  table.  Two probes with different primes must agree, or the op is not of
  this kind (its output sizes are computed: convolution, pooling, cat ...).
* Convolutions, norms, ``cat`` and ``stack``: their shape rules written
  out.
* Everything else: the generic fallback.  It runs the CPU op on stand-ins of
  the full shapes, each a stride-0 expansion of one element (so no input
  memory is allocated, but the CPU kernel does compute over the full sizes
  and allocates its outputs), and converts the outputs to meta tensors.
  This is acceptable only as a fallback: it costs what the CPU op costs;
  ops that a real program runs on large meta tensors should get a kernel
  above.

Ops whose output shapes depend on the data (``nonzero``, ``unique``,
``masked_select`` ...) raise ``NotImplementedError`` as torch's meta
kernels do, and so do ops that return Python values of the data
(``equal``).  In-place ops keep their meta ``self`` (nothing to write);
``out=`` tensors are resized to the result's shape.

Random ops run with the CPU generator's state saved and restored: drawing
"meta" numbers advances no generator, as in torch.
"""
import ptcore._tensor as _C
from ptcore._dtype_utils import promote_types
from ptcore._dispatch import device as _device_layer
from ptcore._dispatch.table import lookup
from ptcore._meta._tensors import dense_strides
from ptcore.tensor import _output_memory_format
import ptcore.random as _random
from ptcore._dispatch.table import OPS
from ptcore._meta._tensors import contiguous_strides, empty_strided

__all__ = ["register", "fallback"]

_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
           83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173)


def _data_dependent(opdef):
    """The op's declared ``data_dependent`` fact: ``"output"`` where its
    result depends on the input data (torch has no meta kernel either),
    ``"item"`` where torch raises for it by reading a value; else None."""
    return opdef.decl.data_dependent if opdef.decl is not None else None


class _Unmapped(Exception):
    """A probe result whose sizes do not map back to the arguments' sizes."""


def _no_data(name):
    return NotImplementedError(
        f"{name}: the result depends on the values of meta tensors, which have no data "
        f"(torch has no meta kernel for it either)")


# ---------------------------------------------------------------------------
# walking the arguments

def _map_args(x, fn):
    """``x`` with every meta tensor (also inside lists and tuples) replaced by ``fn(t)``."""
    if isinstance(x, _C._TensorBase):
        return fn(x) if x.is_meta else x
    if type(x) in (list, tuple):
        return type(x)(_map_args(y, fn) for y in x)
    return x


def _metas(x, found, all_tensors=False):
    """The meta tensors (every tensor with ``all_tensors``) in ``x``, also
    inside lists, tuples and dicts, appended to ``found``."""
    if isinstance(x, _C._TensorBase):
        if all_tensors or x.is_meta:
            found.append(x)
    elif type(x) in (list, tuple):
        for y in x:
            _metas(y, found, all_tensors)
    elif type(x) is dict:
        for y in x.values():
            _metas(y, found, all_tensors)
    return found


def _stand_in(t, shape):
    """A CPU tensor of ``t``'s dtype and ``shape`` over one element (stride
    0): 0 for integers and booleans (a valid index into any nonempty
    dimension), 1 for floating and complex dtypes (a valid probability,
    divisor, logarithm argument)."""
    one = (_C.ones if t.dtype.is_floating_point or t.dtype.is_complex else _C.zeros)(
        (1,) if shape else (), dtype=t.dtype)
    return one.expand(shape) if shape else one


def _run(opdef, args, kwargs, fn):
    a = _map_args(args, fn)
    k = {n: _map_args(v, fn) for n, v in kwargs.items()}
    if "random" in opdef.tags:
        state = _random.get_rng_state()
        try:
            return opdef.raw(*a, **k)
        finally:
            _random.set_rng_state(state)
    return opdef.raw(*a, **k)


# ---------------------------------------------------------------------------
# converting CPU results to meta tensors

def _strides_like(r, shape):
    """Dense strides for ``shape`` in the dimension order of CPU result ``r``."""
    if r.is_contiguous() or r.dim() != len(shape):
        return contiguous_strides(shape)
    st = r.stride()
    order = sorted(range(len(shape)), key=lambda d: (st[d], -d))     # innermost first
    out = [0] * len(shape)
    acc = 1
    for d in order:
        out[d] = acc
        acc *= max(shape[d], 1)
    return out


def _to_meta(r, name, size_of=None):
    """CPU result ``r`` (tensor, None, or a tuple/list/named tuple of them) as
    meta tensors; ``size_of`` maps each probe size back (None: sizes as they are)."""
    if r is None:
        return None
    if isinstance(r, _C._TensorBase):
        if r.is_meta:
            return r
        shape = list(r.shape)
        if size_of is not None:
            try:
                shape = [s if s < 2 else size_of[s] for s in shape]
            except KeyError:
                raise _Unmapped() from None
        return empty_strided(shape, _strides_like(r, shape), r.dtype)
    if isinstance(r, (tuple, list)):
        items = [_to_meta(x, name, size_of) for x in r]
        if type(r) in (tuple, list):
            return type(r)(items)
        return type(r)(items) if not hasattr(r, "_fields") else type(r)(*items)
    raise _no_data(name)


# ---------------------------------------------------------------------------
# elementwise ops

def _broadcast(shapes, name):
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, n in enumerate(s, nd - len(s)):
            if n != 1:
                if out[i] != 1 and out[i] != n:
                    a = [x for x in shapes if len(x) > nd - 1 - i and x[i - nd + len(x)] not in (1, n)]
                    other = a[0][i - nd + len(a[0])] if a else out[i]
                    raise RuntimeError(
                        f"The size of tensor a ({other}) must match the size of tensor b ({n}) "
                        f"at non-singleton dimension {i}")
                out[i] = n
    return out


def _elementwise_kernel(opdef):
    name = opdef.name

    def kernel(*args, **kwargs):
        tensors = _metas((args, kwargs), [], all_tensors=True)
        shape = _broadcast([tuple(t.shape) for t in tensors], name)
        r = _run(opdef, args, kwargs, lambda t: _stand_in(t, [1] * t.dim()))
        outs = r if isinstance(r, (tuple, list)) else (r,)
        for o in outs:
            if not isinstance(o, _C._TensorBase) or o.dim() != len(shape) or o.numel() != 1:
                return _generic(opdef, args, kwargs)
        # torch's TensorIterator keeps the layout of a dense full-size input
        like = next((t for t in tensors if t.is_meta and list(t.shape) == shape), None)
        strides = _dense_or_contiguous(like, shape)
        conv = (lambda o: empty_strided(shape, strides, o.dtype))
        if isinstance(r, _C._TensorBase):
            return conv(r)
        items = [conv(o) for o in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
    kernel.__name__ = name
    return kernel


def _dense_or_contiguous(like, shape):
    if like is None or like.is_contiguous():
        return contiguous_strides(shape)
    return dense_strides(like)


# ---------------------------------------------------------------------------
# probes: ops whose output dimensions are copies of input dimensions

def _probe(opdef, args, kwargs, second):
    """The op's result from a probe: the first takes the smallest primes in
    increasing order, the second the next ones in decreasing order, so that
    a size computed by a monotone function of sizes (a pooling's, an
    upsampling's) cannot map back to the same size in both."""
    sizes = []
    for t in _metas((args, kwargs), []):
        for n in t.shape:
            if n > 1 and n not in sizes:
                sizes.append(n)
    k = len(sizes)
    if 2 * k > len(_PRIMES):
        raise _Unmapped()
    primes = _PRIMES[k:2 * k][::-1] if second else _PRIMES[:k]
    probe = dict(zip(sizes, primes))
    back = {p: n for n, p in probe.items()}
    r = _run(opdef, args, kwargs,
             lambda t: _stand_in(t, [n if n < 2 else probe[n] for n in t.shape]))
    return _to_meta(r, opdef.name, back)


def _shapes(r):
    if isinstance(r, _C._TensorBase):
        return (tuple(r.shape), r.dtype)
    if isinstance(r, (tuple, list)):
        return tuple(_shapes(x) for x in r)
    return r


def _probe_kernel(opdef):
    def kernel(*args, **kwargs):
        return _probed(opdef, args, kwargs)
    kernel.__name__ = opdef.name
    return kernel


def _probed(opdef, args, kwargs):
    try:
        r1, r2 = _probe(opdef, args, kwargs, 0), _probe(opdef, args, kwargs, 1)
    except NotImplementedError:
        raise
    except Exception:
        # the probe's sizes broke a rule of the op (or a size did not map
        # back): the generic path raises the op's own error for the real sizes
        return _generic(opdef, args, kwargs)
    if _shapes(r1) != _shapes(r2):
        return _generic(opdef, args, kwargs)
    return r1


# ---------------------------------------------------------------------------
# the generic fallback

def _generic(opdef, args, kwargs):
    """The op run on full-size stride-0 CPU stand-ins (acceptable only as a
    fallback: see the module docstring); its outputs as meta tensors."""
    r = _run(opdef, args, kwargs, lambda t: _stand_in(t, list(t.shape)))
    return _to_meta(r, opdef.name)


def _is_inplace(opdef):
    return "inplace" in opdef.tags or (opdef.name.endswith("_") and not opdef.name.startswith("_"))


def _with_out(kernel):
    """``kernel`` taking ``out=``: computed without it, ``out`` resized to
    the result's shape (nothing to copy on meta)."""
    def run(*args, **kwargs):
        out = kwargs.pop("out", None)
        r = kernel(*args, **kwargs)
        if out is None:
            return r
        outs = out if isinstance(out, (tuple, list)) else (out,)
        rs = r if isinstance(r, (tuple, list)) else (r,)
        for o, x in zip(outs, rs):
            if not o.is_meta:
                raise RuntimeError(f"Expected out tensor to be on meta, but got {o.device}")
            if tuple(o.shape) != tuple(x.shape):
                o.resize_(tuple(x.shape))
        return out
    run.__name__ = kernel.__name__
    return run


def fallback(opdef):
    """The meta kernel of ``opdef`` when none is registered (see the module docstring)."""
    name = opdef.name
    data_dependent = _data_dependent(opdef)
    if data_dependent is not None:
        def kernel(*args, **kwargs):
            if data_dependent == "item":
                raise RuntimeError("Tensor.item() cannot be called on meta tensors")
            raise _no_data(f"{opdef.namespace}.{name}")
    elif _is_inplace(opdef):
        def kernel(*args, **kwargs):
            # nothing to write: self keeps its shape (the first tensor argument)
            for a in args:
                if isinstance(a, _C._TensorBase):
                    return a
            return _generic(opdef, args, kwargs)
    else:
        def kernel(*args, **kwargs):
            return _probed(opdef, args, kwargs)
    kernel.__name__ = name
    return _with_out(kernel)


# ---------------------------------------------------------------------------
# shape rules written out

def _where(opdef):
    elementwise = _elementwise_kernel(opdef)

    def kernel(*args, **kwargs):
        if len(args) + len(kwargs) == 1:
            raise _no_data(f"{opdef.namespace}.where with one argument (nonzero)")
        return elementwise(*args, **kwargs)
    return kernel


def _cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    # torch skips legacy 1-d empty tensors
    used = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = used[0]
    nd = ref.dim()
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    shape = list(ref.shape)
    shape[d] = 0
    dt = ref.dtype
    for i, t in enumerate(used):
        if t.dim() != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {t.dim()}")
        for j in range(nd):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[j]} but got size {t.shape[j]} for tensor number {tensors.index(t)} "
                    f"in the list.")
        shape[d] += t.shape[d]
        dt = promote_types(dt, t.dtype)
    r = empty_strided(shape, contiguous_strides(shape), dt)
    if out is not None:
        out.resize_(tuple(shape))
        return out
    return r


def _stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(ref.shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ref.shape)} at entry 0 and {list(t.shape)} at entry {i}")
    nd = ref.dim() + 1
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    return _cat([t.unsqueeze(d) for t in tensors], d, out=out)


def _pair(v, n):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return list(v) * n
        return list(v)
    return [v] * n


def _conv_kernel(nd, transposed):
    def kernel(input, weight, bias=None, stride=1, padding=0, *rest, **kw):
        if transposed:
            names = ("output_padding", "groups", "dilation")
        else:
            names = ("dilation", "groups")
        opts = dict(zip(names, rest))
        opts.update(kw)
        dilation = _pair(opts.get("dilation", 1), nd)
        groups = opts.get("groups", 1)
        stride = _pair(stride, nd)
        batched = input.dim() == nd + 2
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, but "
                f"got input of size: {list(input.shape)}")
        if weight.dim() != nd + 2:
            raise RuntimeError(f"weight should have {nd + 2} dimensions, got {weight.dim()}")
        x = list(input.shape) if batched else [1] + list(input.shape)
        k = list(weight.shape[2:])
        if transposed:
            if x[1] != weight.shape[0]:
                raise RuntimeError(
                    f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                    f"{list(input.shape)} to have {weight.shape[0]} channels, but got {x[1]} "
                    f"channels instead")
            out_pad = _pair(opts.get("output_padding", 0), nd)
            pad = _pair(padding, nd)
            spatial = [(x[2 + i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (k[i] - 1)
                       + out_pad[i] + 1 for i in range(nd)]
            cout = weight.shape[1] * groups
        else:
            if x[1] != weight.shape[1] * groups:
                raise RuntimeError(
                    f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                    f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                    f"{x[1]} channels instead")
            if padding == "same":
                spatial = x[2:]
            else:
                pad = [0] * nd if padding == "valid" else _pair(padding, nd)
                spatial = [(x[2 + i] + 2 * pad[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
                           for i in range(nd)]
                if any(s <= 0 for s in spatial):
                    raise RuntimeError(
                        f"Calculated padded input size per channel: "
                        f"({' x '.join(str(x[2 + i] + 2 * pad[i]) for i in range(nd))}). Kernel "
                        f"size: ({' x '.join(str(dilation[i] * (k[i] - 1) + 1) for i in range(nd))})."
                        f" Kernel size can't be greater than actual input size")
            cout = weight.shape[0]
        shape = [x[0], cout] + spatial
        if not batched:
            shape = shape[1:]
        fmt = _output_memory_format(input, weight) if batched else _C.contiguous_format
        t = empty_strided(shape, contiguous_strides(shape), input.dtype)
        return t if fmt is _C.contiguous_format else t.contiguous(memory_format=fmt)
    return kernel


def _same_shape(input, *args, **kwargs):
    """Norms: the output has the input's shape and dtype."""
    return empty_strided(list(input.shape), contiguous_strides(list(input.shape)), input.dtype)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if list(input.shape[input.dim() - len(ns):]) != ns or len(ns) > input.dim():
        raise RuntimeError(
            f"Given normalized_shape={ns}, expected input with shape [*, {', '.join(map(str, ns))}], "
            f"but got input of size{list(input.shape)}")
    return _same_shape(input)


def _one_hot(tensor, num_classes=-1):
    if tensor.dtype is not _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes < 0:
        # the class count is the data's maximum
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    shape = list(tensor.shape) + [int(num_classes)]
    return empty_strided(shape, contiguous_strides(shape), _C.int64)


def _resize_as_(self, other, memory_format=None):
    return self.resize_(tuple(other.shape))


# ---------------------------------------------------------------------------

_registered = [False]


def register():
    """Put the meta kernels into the operator table and the fallback into
    the device layer (once: when the first meta tensor is made)."""
    if _registered[0]:
        return
    _registered[0] = True
    # lazy: nn.functional's ops are declared when it is imported, after ptcore._meta in ptcore's init
    from ptcore.nn import functional  # noqa: F401

    def reg(name, device_type, kernel, namespaces, optional=False):
        # never a core op (a Cython tensor method): they pass through the
        # layer, and a device kernel of one would make every core method an entry
        for ns in namespaces:
            d = lookup(name, ns)
            if d is not None and d.kind != "core":
                _device_layer.register_kernel(name, device_type, kernel, namespaces=(ns,))
            elif d is None and not optional:
                raise KeyError(f"register: no op {name!r} in {ns}")

    _device_layer.register_fallback("meta", fallback)
    for (ns, name), d in list(OPS.items()):
        if d.kind == "core" or _data_dependent(d) is not None or \
                _device_layer.passes_through(d):
            continue
        if d.family == "pointwise":
            if not _is_inplace(d):
                k = _where(d) if name == "where" else _elementwise_kernel(d)
                reg(name, "meta", _with_out(k), namespaces=(ns,))
        elif d.family in ("reduction", "linalg") and not _is_inplace(d):
            reg(name, "meta", _with_out(_probe_kernel(d)), namespaces=(ns,))
    reg("cat", "meta", _cat, namespaces=("ptcore",), optional=True)
    reg("concat", "meta", _cat, namespaces=("ptcore",), optional=True)
    reg("concatenate", "meta", _cat, namespaces=("ptcore",), optional=True)
    reg("stack", "meta", _stack, namespaces=("ptcore",), optional=True)
    for n in (1, 2, 3):
        for ns in ("ptcore", "nn.functional"):
            reg(f"conv{n}d", "meta", _conv_kernel(n, False), namespaces=(ns,), optional=True)
            reg(f"conv_transpose{n}d", "meta", _conv_kernel(n, True), namespaces=(ns,),
                optional=True)
    reg("one_hot", "meta", _one_hot, namespaces=("nn.functional",), optional=True)
    reg("resize_as_", "meta", _resize_as_, namespaces=("ptcore",), optional=True)
    for ns in ("ptcore", "nn.functional"):
        reg("layer_norm", "meta", _layer_norm, namespaces=(ns,), optional=True)
        for name in ("batch_norm", "group_norm", "instance_norm", "rms_norm"):
            reg(name, "meta", _same_shape, namespaces=(ns,), optional=True)
