"""Op calls of a training graph bound to the kernel eager's call ends in.

``matmul`` of two CPU float32/float64 tensors with the same number (>= 3) of
dims and the same batch sizes (attention's ``q @ k.transpose(-2, -1)``,
``att @ v`` and their gradients) runs, after ``matmul``'s Python checks and
batch broadcasting, the product kernel ``ptcore._ops.kernels._blas.product``
on the same operands.  The graph's guards fix the operands' kinds, so a
:class:`BatchedProduct` step calls that kernel directly: the same bits, at a
tenth of the call's Python cost (13 us -> 1.7 us on the loaded machine).  At
run time the step checks what the kernel needs and calls ``matmul`` for
anything else (so errors are eager's), and whenever the product is
recorded (autograd on and an operand requiring grad: a backward under
``create_graph``), under forward AD or vmap.

:func:`unlayered`: what an op's public entry (``ptcore._dispatch.dispatcher.
make_entry``) calls when no dispatch layer is on -- the op's body, and when
grad mode is off too, the function a plain recording body calls (``raw``; for
a method form that only passes its arguments to its op's function, what that
function's entry calls).  A generated segment calls those directly while no
layer is on and grad mode is off (:func:`ptcore._inductor.codegen.generate`),
the entry otherwise: the same functions on the same arguments, without two
Python calls per op.
"""
import dis
import types

from ptcore._tensor import _TensorBase
from ptcore import float32, float64, strided
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._ops.kernels._blas import product as _product
from ptcore._ops.linalg import matmul as _matmul
from ptcore.autograd import _record
from ptcore.autograd.grad_mode import _state
from ptcore.jit._ir import Node

__all__ = ["BatchedProduct", "batched_product", "direct_products", "unlayered"]

_MATMUL = (("ptcore", "matmul"), ("Tensor", "matmul"), ("Tensor", "__matmul__"))
_DTYPES = ("float32", "float64")


class BatchedProduct(Node):
    """``out = batched_product(a, b)`` replacing a ``matmul`` node."""
    __slots__ = ()

    def __init__(self, args, outputs):
        super().__init__(("prim", "compile_batched_product"), args, {}, outputs)
        self._fn = batched_product


def batched_product(a, b):
    """``a @ b`` by the product kernel where ``matmul`` would reach it with
    these operands (see the module docstring), else ``matmul(a, b)``."""
    if type(a) is not type(b) or not isinstance(a, _TensorBase) or \
            (_state.enabled and (a._requires_grad or b._requires_grad)) or \
            _fw_levels() or _vmap_frames():
        return _matmul(a, b)
    nd = a.dim()
    if nd < 3 or b.dim() != nd or a.dtype is not b.dtype or \
            (a.dtype is not float32 and a.dtype is not float64) or not a.is_cpu or \
            not b.is_cpu or a.layout is not strided or b.layout is not strided:
        return _matmul(a, b)
    sa, sb = a.shape, b.shape
    if sa[:-2] != sb[:-2] or sa[-1] != sb[-2]:
        return _matmul(a, b)
    return _product(a, b)


def direct_products(nodes, values, skip=()):
    """``nodes`` with each ``matmul`` whose captured operands (``values``:
    the graph's values, with dtypes and shapes) are what
    :func:`batched_product` takes made a :class:`BatchedProduct` (but those
    whose ``id`` is in ``skip``)."""
    out = []
    for n in nodes:
        if id(n) not in skip and n.op in _MATMUL and not n.kwargs and len(n.args) == 2 and \
                all(type(a) is dict and "v" in a for a in n.args) and \
                type(n.outputs) is dict and "v" in n.outputs:
            va, vb = (values.get(a["v"]) for a in n.args)
            sa, sb = getattr(va, "shape", None), getattr(vb, "shape", None)
            if sa is not None and sb is not None and len(sa) >= 3 and len(sb) == len(sa) and \
                    tuple(sa[:-2]) == tuple(sb[:-2]) and va.dtype in _DTYPES and \
                    vb.dtype == va.dtype:
                out.append(BatchedProduct(list(n.args), n.outputs))
                continue
        out.append(n)
    return out


def _inner_code(fn, name):
    return next(c for c in fn.__code__.co_consts
                if isinstance(c, types.CodeType) and c.co_name == name)


def _probe(*args, **kwargs):
    return None


_ENTRY_CODE = _inner_code(_D.make_entry, "entry")
# (the recording body of an op without a fast form: ``raw(*args, **kwargs)`` with grad off)
_PLAIN_BODY_CODE = _record.differentiable("probe", _probe, None).__code__


def unlayered(fn, kwarg_names=()):
    """What a call of ``fn`` with keywords ``kwarg_names`` runs when no
    dispatch layer is on and grad mode is off, when ``fn`` is an op's entry
    (None for anything else, and for a call whose keywords the entry renames:
    NumPy's aliases)."""
    code = getattr(fn, "__code__", None)
    if code is not _ENTRY_CODE:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__))
    if not cells["alias_names"].cell_contents.isdisjoint(kwarg_names):
        return None
    body = cells["opdef"].cell_contents.body
    if getattr(body, "__code__", None) is _PLAIN_BODY_CODE:
        return _through(body.__wrapped__)
    return body


# (the instructions around a call that are no part of what it does)
_CALL_GLUE = frozenset({"RESUME", "PRECALL", "CACHE", "PUSH_NULL", "NOP"})


def _forwarded(fn):
    """``(g, keywords)`` when ``fn``'s body is ``return g(<its parameters in
    order, the keyword-only ones by name>)`` with ``g`` one of its globals
    (a method form calling its op's function: ``Tensor.mm`` -> ``mm``), and
    ``fn`` takes no positional defaults nor ``*args``/``**kwargs``; else
    None (also for any bytecode but that of such a call)."""
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__defaults__", None) or code.co_flags & 0x0C or \
            code.co_freevars:
        return None
    n_pos = code.co_argcount
    params = code.co_varnames[:n_pos + code.co_kwonlyargcount]
    ops = [i for i in dis.get_instructions(code) if i.opname not in _CALL_GLUE]
    if len(ops) < 3 or ops[0].opname != "LOAD_GLOBAL" or ops[-2].opname != "CALL" or \
            ops[-1].opname != "RETURN_VALUE":
        return None
    mid = ops[1:-2]
    keywords = ()
    if mid and mid[-1].opname == "KW_NAMES":
        keywords = code.co_consts[mid[-1].arg]
        mid = mid[:-1]
    if any(i.opname != "LOAD_FAST" for i in mid) or \
            tuple(i.argval for i in mid) != params or tuple(keywords) != params[n_pos:]:
        return None
    g = getattr(fn, "__globals__", {}).get(ops[0].argval)
    return None if g is None else (g, tuple(keywords))


def _through(fn):
    """``fn``, or when it only forwards its arguments to an op's entry
    (:func:`_forwarded`), what that entry calls with no layer and grad mode
    off -- when each keyword-only default of ``fn`` is the same object as
    that function's (the call then passes the same values)."""
    fw = _forwarded(fn)
    if fw is None:
        return fn
    inner = unlayered(fw[0], fw[1])
    if inner is None:
        return fn
    mine = getattr(fn, "__kwdefaults__", None) or {}
    theirs = getattr(inner, "__kwdefaults__", None) or {}
    if any(k not in theirs or theirs[k] is not v for k, v in mine.items()):
        return fn
    return inner
