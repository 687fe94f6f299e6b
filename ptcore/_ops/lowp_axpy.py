"""``a + alpha * b`` on float16/bfloat16 CPU tensors, rounded where torch rounds.

torch's CPU ``add``/``sub`` with ``alpha`` (one TensorIterator loop) takes
alpha in the tensor's dtype and computes each whole SIMD vector as a float32
fused multiply-add, one rounding; its scalar loop computes
``a + round(alpha * b)``, two roundings.  cpu_kernel_vec's vector loop steps
over two ``Vectorized<Half/BFloat16>`` at a time, ``V = 2 * 16 = 32``
elements with the AVX2 build; the scalar loop runs on the last ``m % V``
elements of each inner run of ``m`` elements whose strides are unit (or one
input broadcast), and on every element of any other run.  torch 2.13
registers add's ufunc kernel with ``REGISTER_DISPATCH``, which leaves the
AVX-512 slot empty, so at capability AVX512 torch runs the AVX2 kernel (V =
32 too); at DEFAULT (no AVX2+FMA, or ``ATEN_CPU_CAPABILITY=default``) the
generic vector's fmadd is ``a * b + c`` in the 16-bit type, so every element
takes two roundings.  The capability is torch's, as
:func:`ptcore._cpu_features.get_cpu_capability` finds it (the environment
variable included).  Which runs there are follows the TensorIterator: its
dimension order (smallest strides innermost), its coalescing of dimensions,
and its thread chunks (``numel > 32768``: ``ceil(numel / threads)`` elements
each).

ptcore's kernel is the one-rounding form; :func:`add_alpha` runs it, then
writes the two-rounding values at the scalar loop's elements.
"""
import builtins
import math

import numpy as np

from ptcore import _tensor as _C
from ptcore._cpu_features import get_cpu_capability
from ptcore._tensor import _TensorBase
from ptcore._ops._out import broadcast_shapes
from ptcore._dispatch.table import entry as _op_entry
from ptcore._ops.kernels import _parallel

__all__ = []

_GRAIN = 32768          # at::internal::GRAIN_SIZE
# V per torch capability (the module's docstring); 0: every element takes the scalar loop
_STEP = {"AVX512": 32, "AVX2": 32}


def _step():
    return _STEP.get(get_cpu_capability(), 0)


def _threads():
    return _parallel._get_num_threads()


def _chunks(n):
    """The element ranges of at::parallel_for's threads over ``n`` elements."""
    nt = _threads()
    if n < _GRAIN or nt <= 1:
        return [(0, n)]
    nt = builtins.min(nt, -(-n // _GRAIN))
    size = -(-n // nt)
    return [(s, builtins.min(n, s + size)) for s in range(0, n, size)]


def _bcast_strides(x, shape):
    """Element strides of operand ``x`` over the iteration ``shape`` (0 where it
    broadcasts; a number is a 0-d operand)."""
    nd = len(shape)
    if not isinstance(x, _TensorBase):
        return [0] * nd
    xs, st = tuple(x.shape), tuple(x.stride())
    off = nd - len(xs)
    return [0 if d < off or (xs[d - off] == 1 and shape[d] != 1) else st[d - off]
            for d in range(nd)]


def _order(shape, strides):
    """TensorIterator's dimension order (reorder_dimensions): innermost first."""
    nd = len(shape)
    if nd == 1:
        return [0]
    perm = list(range(nd - 1, -1, -1))

    def should_swap(d0, d1):
        for st in strides:
            if st is None:
                continue
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, nd):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def _coalesce(shape, strides):
    """TensorIterator's coalesce_dimensions over dims listed innermost first."""
    shape = list(shape)
    strides = [list(s) for s in strides]
    prev = 0
    for d in range(1, len(shape)):
        s0, s1 = shape[prev], shape[d]
        if s0 == 1 or s1 == 1 or all(s0 * st[prev] == st[d] for st in strides):
            if shape[prev] == 1:
                for st in strides:
                    st[prev] = st[d]
            shape[prev] *= shape[d]
        else:
            prev += 1
            if prev != d:
                for st in strides:
                    st[prev] = st[d]
                shape[prev] = shape[d]
    return shape[:prev + 1], [st[:prev + 1] for st in strides]


def _scalar_runs(n0, n, vectorized, step):
    """Ranges of linear iteration positions the scalar loop computes, for inner
    runs of ``n0`` elements over ``n`` positions split into thread chunks."""
    out = []
    for begin, end in _chunks(n):
        i = begin
        while i < end:
            m = builtins.min(n0 - i % n0, end - i)
            tail = m % step if vectorized and step else m
            if tail:
                out.append((i + m - tail, i + m))
            i += m
    return out


def _iteration(shape, out_strides, a, b):
    """torch's iteration over ``shape``: (dimension order innermost first, number
    of dimensions left after coalescing, the scalar loop's ranges of linear
    positions).  ``out_strides`` is None for a new output."""
    n = math.prod(shape)
    if len(shape) == 0:
        return [], 0, [(0, n)]
    ins = [_bcast_strides(a, shape), _bcast_strides(b, shape)]
    perm = _order(shape, [out_strides] + ins)
    pshape = [shape[d] for d in perm]
    if out_strides is None:      # allocated dense in the iteration order
        o, acc = [], 1
        for s in pshape:
            o.append(acc)
            acc *= s
    else:
        o = [out_strides[d] for d in perm]
    cshape, cst = _coalesce(pshape, [o] + [[st[d] for d in perm] for st in ins])
    inner = [st[0] for st in cst]
    vectorized = inner[0] == 1 and (inner[1:] == [1, 1] or sorted(inner[1:]) == [0, 1])
    return perm, len(cshape), _scalar_runs(cshape[0], n, vectorized, _step())


def _mask(shape, perm, runs):
    """Boolean array (``shape``) of the elements at the linear positions ``runs``
    of an iteration in dimension order ``perm`` (innermost first)."""
    flat = np.zeros(math.prod(shape), dtype=bool)
    for s, e in runs:
        flat[s:e] = True
    m = flat.reshape([shape[d] for d in reversed(perm)])
    return np.transpose(m, np.argsort(perm[::-1]))


def add_alpha(run_kernel, ew, a, b, alpha, out, dt):
    """``run_kernel()`` (ptcore's one-rounding loop writing ``out`` or a new
    tensor), then torch's two-rounding ``a + round(alpha * b)`` at the elements
    its scalar loop computes.  ``ew(op, x, y, out)`` runs elementwise ``op`` in
    ``dt`` (into ``out`` when given); ``a``/``b`` are tensors or numbers, on the
    CPU, ``alpha`` a number of ``dt``."""
    shapes = [tuple(x.shape) for x in (a, b) if isinstance(x, _TensorBase)]
    shape = shapes[0] if len(shapes) == 1 or shapes[0] == shapes[1] else \
        tuple(broadcast_shapes(*shapes))
    if out is not None and tuple(out.shape) != shape:
        return run_kernel()          # resized (or refused) by the kernel
    if (type(a) is type(b) and isinstance(a, _TensorBase) and len(shape) > 0
            and a.dtype is dt and b.dtype is dt and tuple(a.shape) == tuple(b.shape) == shape
            and a.is_contiguous() and b.is_contiguous()
            and (out is None or out.is_contiguous())):
        # the common case, two dense operands of one shape: torch's iteration is
        # one run of every element in order (what _iteration finds, without its
        # Python walk over the dimensions, which costs far more than the add)
        n = math.prod(shape)
        perm, ndim, runs = list(range(len(shape) - 1, -1, -1)), 1, _scalar_runs(n, n, True, _step())
    else:
        perm, ndim, runs = _iteration(shape, None if out is None else list(out.stride()), a, b)
    if not runs:
        return run_kernel()
    # the operands in dt, as the TensorIterator converts them (numbers: 0-d)
    a, b = (_C.full((), x, dtype=dt) if not isinstance(x, _TensorBase) else
            x if x.dtype is dt else x.to(dt) for x in (a, b))
    if builtins.sum(e - s for s, e in runs) == math.prod(shape):
        # every element takes the scalar loop (small or strided operands)
        return ew("add", a, ew("mul", b, alpha, None), out)
    if ndim == 1 and perm == list(range(len(shape) - 1, -1, -1)) \
            and (out is None or out.is_contiguous()):
        # one run in the elements' order (contiguous or broadcast numbers)
        a, b = (x.reshape(-1) if x.numel() > 1 else x.reshape(()) for x in (a, b))
        fix = [ew("add", a[s:e] if a.ndim else a, ew("mul", b[s:e] if b.ndim else b, alpha, None),
                  None) for s, e in runs]                  # before out is written
        r = run_kernel()
        if r.is_contiguous():
            flat = r.view(-1)
            for (s, e), v in zip(runs, fix):
                flat[s:e] = v
            return r
        r[_C.from_numpy(_mask(shape, perm, runs))] = _op_entry("cat")(fix)
        return r
    sel = _C.from_numpy(_mask(shape, perm, runs))
    a, b = (x.expand(shape)[sel] for x in (a, b))
    fix = ew("add", a, ew("mul", b, alpha, None), None)     # before out is written
    r = run_kernel()
    r[sel] = fix
    return r
