"""The autograd bodies of the operator table's ops, from their declarations.

:func:`install` registers :func:`_make_body` with the table
(:func:`ptcore._dispatch.table.set_body_maker`): every op entry made before
or after gets, from its declaration's ``grad`` fact, the body that records
it -- with the formula of its name (:mod:`ptcore.autograd._formulas`), with
a node that raises on backward (torch's "the derivative for 'X' is not
implemented"), or, for in-place forms, recorded through the out-of-place op
-- and, from the ``fast`` fact, its fast form through the CPU driver's C
table (:func:`ptcore._dispatch.device.register_fast_form`).  No module
attribute is replaced: the entries read their body from the table.
:func:`install` also registers the tensor core's autograd hooks and returns
the Tensor methods autograd makes; :func:`operator_methods` gives the
operator methods' implementations (the fast binary operators record
directly).  The package root binds both (:mod:`ptcore._dispatch.generate`)."""
import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore.tensor import _AUTOGRAD_TO, _REFRESH_VIEW
from ptcore._ops import indexing as _indexing, linalg as _linalg_ops
from ptcore._ops.kernels import _ewdrv
from ptcore._ops import pointwise as E
from ptcore._dispatch import dispatcher as D
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch.declarations import OPERATOR_FORMS, declaration_of
from ptcore._dispatch.device import DRIVER, register_fast_form
from ptcore._dispatch.generate import entry
from ptcore._dispatch.table import OpDef, declare, set_body_maker
from ptcore.autograd import _composite_functions, _dispatch_backward, graph
from ptcore.autograd import _record as R
from ptcore.autograd._formulas import FORMULAS, BINARY_RECORDERS
from ptcore.autograd import _formulas_linalg, _formulas_nn  # noqa: F401  (their formulas join FORMULAS)
from ptcore.autograd._formulas_shape import getitem as _getitem_formula


def _decl(name):
    """The declaration of the op whose form (function, method, in-place) is
    ``name`` in the ptcore group."""
    return declaration_of("ptcore", name)


def _formula(name, d):
    """The backward formula of the form ``name`` of the op declared by ``d``
    (an alias records with its op's formula)."""
    f = FORMULAS.get(name)
    if f is None and d.alias is not None:
        f = FORMULAS.get(d.alias)
    return f


def _wrap_fn(name, fn):
    d = _decl(name)
    if d.grad == "none" or d.grad == "inside":
        return fn
    if d.grad == "not_implemented":
        return R.differentiable(name, fn, R.not_implemented(name))
    f = _formula(name, d)
    if f is None:
        raise RuntimeError(f"{name} is declared grad='formula' but autograd._formulas has none")
    kind, _, k = (d.fast or "").partition(":")
    if kind == "binary":
        return R.differentiable(name, fn, f, ptcore._ops.pointwise._B[k])
    return R.differentiable(name, fn, f)


def _driver_fast_form(name):
    """The fast form of the form ``name`` of an op through the CPU driver's
    per-device C table (recorded with the op's formula), from its
    declaration's ``fast`` fact; None where it has none."""
    d = _decl(name)
    if d is None or d.fast is None:
        return None
    kind, _, k = d.fast.partition(":")
    index = ptcore._ops.pointwise._B
    if _inplace_name(name):
        if kind in ("binary", "device_binary", "integer"):
            return R.device_fast_inplace(index[k])
        return None
    f = _formula(name, d)
    if kind in ("binary", "device_binary") and f is not None:
        return R.device_fast_binary(index[k], f)
    if kind == "unary" and (f is not None or d.grad == "none"):
        return R.device_fast_unary(_ewdrv.UNARY[d.alias or name], f)
    if kind in ("compare", "integer"):
        return R.device_fast_compare(index[k])
    return None


def _inplace_name(name):
    return name.endswith("_") and not name.startswith("_")


_FAMILY = {"pointwise": "pointwise", "reduction": "reduction", "linalg": "linalg",
           "shape": "shape", "sorting": "sorting"}


def _body(name, fn):
    """``fn`` under autograd recording (the body of op ``name``'s entry)."""
    if _inplace_name(name):
        base = name[:-1]
        outplace = getattr(ptcore, base, None) or getattr(ptcore.Tensor, base, None)
        if outplace is None or _decl(name).grad == "none":
            return _guard_inplace(name, fn)
        return R.inplace(name, fn, lambda *a, _b=base, **k: _call_outplace(_b, *a, **k),
                         needs_old_self=base not in ("add", "sub"))
    return _wrap_fn(name, fn)


def _seen_by_forward_ad(name, fn, family):
    """``fn``, a private primitive recorded with its own formula but not an
    op of the table (the dispatch point does not see it), passed through the
    forward-AD layer: the composites built on it then carry tangents through
    it, also in their reverse graph (``jacfwd(jacrev(f))``)."""
    layer = _fwl.layer()
    opdef = OpDef(name, fn, family)

    def nxt(args, kwargs):
        return fn(*args, **kwargs)

    def op(*args, **kwargs):
        if layer.enabled:
            return layer.handle(op, opdef, args, kwargs, nxt)
        return fn(*args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


def _make_body(d):
    """Give the OpDef ``d`` its autograd body from its declaration (the table's
    body maker, :func:`ptcore._dispatch.table.set_body_maker`): an op declared
    ``grad="formula"`` records with its formula, ``"not_implemented"`` with a
    node that raises on backward, ``"none"`` refuses in-place writes to leaves
    that require grad; ``"inside"`` ops keep their function as their body.
    Bodies given explicitly (operators, the in-place core methods below) and
    the in-place function forms that call the method's entry stay as they are."""
    if d.body is not d.raw or d.kind not in ("function", "method") or d.name.startswith("__"):
        return
    decl = d.decl
    if decl is None or decl.grad == "inside" or getattr(d.raw, "_calls_entry", False):
        return
    if d.namespace == "linalg":
        if decl.grad in ("formula", "not_implemented"):
            name = d.name
            f = FORMULAS.get(name) if decl.grad == "formula" else None
            f = f or R.not_implemented(name)
            d.body = R.differentiable(name, d.raw, f)
            d._body_factory = lambda k, _f=f, _n=name: R.differentiable(_n, k, _f)
        return
    if d.namespace not in ("ptcore", "Tensor"):
        return
    name = d.name
    d.body = _body(name, d.raw)
    d._body_factory = lambda k, _n=name: _body(_n, k)
    fast = _driver_fast_form(name)
    if fast is not None:
        register_fast_form(d, DRIVER, fast)


def install():
    """Install autograd into the operator table: every op's recording body
    (from its declaration, see :func:`_make_body`), the private GEMM seen by
    forward AD, and the tensor core's hooks.  Returns the Tensor methods and
    root functions autograd makes (the in-place core methods that record, the
    operator methods' implementations): the package root binds them."""
    _composite_functions.install()
    _dispatch_backward.install()
    graph._Tensor[0] = ptcore.Tensor
    graph._ADD_OP = ptcore._ops.pointwise._B_ADD
    set_body_maker(_make_body)
    # the private GEMM the linalg composites (einsum, tensordot, kron,
    # multi_dot, matrix_power, sums over dims) are built on
    _linalg_ops._PRODUCT[0] = _seen_by_forward_ad(
        "_product", R.differentiable("_product", _linalg_ops._product_raw, FORMULAS["_product"]),
        "linalg")

    # core hooks: views, clone/contiguous, dtype conversion, indexing, in-place core methods
    _C._set_autograd_hooks(R._on_view, None, R._on_grad_wrap, R._on_split)
    _AUTOGRAD_TO[0] = R._on_to
    _REFRESH_VIEW[0] = R.refresh_view
    g_raw, s_raw = _indexing.getitem, _indexing.setitem
    advanced_getitem = R.differentiable("index", g_raw, _getitem_formula)
    as_ints = _indexing.scalar_tensors_as_ints

    scan, route = D.arg_scan, D._route_args

    def getitem(self, idx):
        if scan[0] and route((idx,), None) == 2:
            # a sparse index: the core entry, which routes the call to its class
            return D.core_entry("__getitem__")(self, idx)
        plain = as_ints(idx)
        if plain is not None:
            return self[plain]      # a view where nothing else is advanced, as torch's
        return advanced_getitem(self, idx)
    _C._set_indexing_hooks(getitem, s_raw)
    idx_put = entry("index_put", _indexing.index_put,
                    R.differentiable("index_put", _indexing.index_put, FORMULAS["index_put"]),
                    "function", "indexing")
    ip = R.inplace("index_put_", _indexing.index_put_, idx_put)
    methods = {
        "copy_": entry("copy_", _TensorBase.copy_, R._copy_inplace, "method", "pointwise"),
        "fill_": entry("fill_", _TensorBase.fill_, R._fill_inplace, "method", "pointwise"),
        "zero_": entry("zero_", _TensorBase.zero_, R._zero_inplace, "method", "pointwise"),
        "__setitem__": entry("__setitem__", _TensorBase.__setitem__, R._setitem, "method",
                             "indexing"),
        "index_put": idx_put,
        "index_put_": entry("index_put_", ip, ip, "method", "shape"),
    }
    functions = {"index_put": idx_put, "index_put_": entry("index_put_", ip, ip, "function", "shape")}
    return methods, functions


def _call_outplace(base, *args, **kwargs):
    fn = getattr(ptcore, base, None)
    if fn is None:
        fn = getattr(ptcore.Tensor, base)
    return fn(*args, **kwargs)


def _guard_inplace(name, fn):
    """In-place ops without an out-of-place formula (bitwise, comparisons):
    still refuse leaves that require grad."""
    def op(self, *args, **kwargs):
        if isinstance(self, _TensorBase):
            R._check_inference_write(self)
            if R._state.enabled and (self._requires_grad
                                     or R._nograd_views[0] and R._is_nograd_view(self)):
                R.check_inplace(self)
        return fn(self, *args, **kwargs)
    op.__name__ = name
    op.__wrapped__ = fn
    return op


def _fast_op(form, generic):
    """Operator method ``Tensor.<form.method>`` (a row of OPERATOR_FORMS): the
    Cython fast path, also for operands that require grad (when recording, the
    op's formula attaches the node directly), else the general function.  An
    entry of the dispatch point: with a layer on, the call goes down the layer
    stack."""
    opname, dunder, reported_as = form.op, form.method, form.reported_as
    opi = ptcore._ops.pointwise._B[opname]
    fast = _ewdrv.fast_binary
    st = R._state
    formula = BINARY_RECORDERS.get(opname) or FORMULAS[opname]
    TB = _TensorBase
    flag = D.on
    slow = D.run_layers

    def layered(self, other):
        # as torch, the layers see the method it is reported as (``Tensor.add``
        # for ``a + b``), else the operator method itself
        if reported_as is not None:
            return getattr(ptcore.Tensor, reported_as)(self, other)
        return slow(method, d, (self, other), {})

    def make(check_layers):
        # the method (the entry: layers first when on) and the op's body (what
        # the layers call), one code: the hot path makes one Python call
        def f(self, other):
            if check_layers and flag[0]:
                return layered(self, other)
            if not st.enabled:
                r = fast(opi, self, other, True)
                return generic(self, other) if r is None else r
            if self._requires_grad or (isinstance(other, TB) and other._requires_grad):
                r = fast(opi, self, other, True)
                if r is not None:
                    formula(r, self, other)
                    return r
                return generic(self, other)
            r = fast(opi, self, other, False)
            return generic(self, other) if r is None else r
        return f
    body, method = make(False), make(True)
    d = declare(dunder, body, "pointwise", "method", namespace="Tensor")
    d.raw = d.body = body
    method.__name__ = dunder
    method.__qualname__ = "Tensor." + dunder
    D._register_entry(method, d)
    return method


def operator_methods(T):
    """The implementations of ``Tensor``'s operator methods that autograd
    gives (the package root binds them, :func:`ptcore._dispatch.generate.
    bind_operators`): the fast binary ones record directly with their
    formula; the others are written with the ops' entries.  ``T``'s in-place
    methods (``add_`` ...) must be bound already."""
    ops = {m: _fast_op(f, E._op(getattr(ptcore, f.op)))
           for m, f in OPERATOR_FORMS.items() if f.autograd_fast}
    ops.update({
        "__div__": E._op(ptcore.div),
        "__floordiv__": E._op(ptcore.floor_divide),
        "__mod__": E._op(ptcore.remainder),
        "__pow__": E._op(ptcore.pow),
        "__neg__": ptcore.neg,
        "__abs__": ptcore.abs,
    })

    # torch's Tensor.__rsub__/__rdiv__/__rpow__/__rmod__ compute with a tensor
    # ``other`` too (``t.__rsub__(u)`` is ``u - t``): only other types defer
    def _rsub(self, other):
        if not (E._is_number(other) or isinstance(other, _TensorBase)):
            return NotImplemented
        return ptcore.rsub(self, other)

    def _rtruediv(self, other):
        if isinstance(other, _TensorBase):
            return ptcore.reciprocal(self) * other
        if not E._is_number(other):
            if type(other).__name__ == "ndarray" and type(other).__module__ == "numpy":
                # as torch's ``reciprocal() * other``: NumPy computes the
                # product and hands it back as a tensor (``__array_wrap__``)
                return ptcore.reciprocal(self) * other
            return NotImplemented
        return ptcore.mul(ptcore.reciprocal(self), other) if self._requires_grad and R._state.enabled \
            else E._rtruediv(self, other)

    def _rpow(self, other):
        if isinstance(other, _TensorBase):
            return ptcore.pow(other, self)
        if not E._is_number(other):
            return NotImplemented
        if self._requires_grad and R._state.enabled:
            return ptcore.pow(other, self)
        return E._rpow(self, other)

    def _rmod(self, other):
        if isinstance(other, _TensorBase):
            return ptcore.remainder(other, self)
        if not E._is_number(other):
            return NotImplemented
        return E._rmod(self, other)

    ops.update(__rsub__=_rsub, __rtruediv__=_rtruediv, __rdiv__=_rtruediv, __rpow__=_rpow,
               __rmod__=_rmod)
    for m, f in OPERATOR_FORMS.items():
        if f.form == "inplace" and f.aten == f.op + "_":       # ``a += b`` is ``a.add_(b)``
            ops[m] = E._inplace(getattr(T, f.aten))
    mm = ptcore.matmul

    def _matmul_op(self, other):
        if not isinstance(other, _TensorBase):
            return NotImplemented
        return mm(self, other)

    def _rmatmul_op(self, other):
        if not isinstance(other, _TensorBase):
            return NotImplemented
        return mm(other, self)
    ops.update(__matmul__=_matmul_op, __rmatmul__=_rmatmul_op)
    return ops
