"""Install autograd into the operator namespace: wrap every public op that
has a formula (functions, Tensor methods, operators, in-place forms), and
give ops without one a node that raises on backward (PyTorch's "the
derivative for 'X' is not implemented")."""
import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore.autograd import _record as R
from ptcore.autograd._formulas import FORMULAS, BINARY_RECORDERS, getitem as _getitem_formula
from ptcore._dispatch.declarations import declaration_of

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


def _set_device_fast(name, e):
    """The device fast path of the entry ``e`` of the form ``name`` (see
    OpDef.device_fast), from its declaration's ``fast`` fact."""
    from ptcore._dispatch.table import op_of
    d = _decl(name)
    if d is None or d.fast is None:
        return
    kind, _, k = d.fast.partition(":")
    index = ptcore._ops.pointwise._B
    od = op_of(e)
    if _inplace_name(name):
        if kind == "binary":
            od.device_fast = R.device_fast_inplace(index[k])
        return
    f = _formula(name, d)
    if kind in ("binary", "device_binary") and f is not None:
        od.device_fast = R.device_fast_binary(index[k], f)
    elif kind == "unary" and f is not None:
        od.device_fast = R.device_fast_unary(ptcore._ops._ewdrv.UNARY[d.alias or name], f)
    elif kind == "compare":
        od.device_fast = R.device_fast_compare(index[k])


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
    from ptcore._dispatch import forward_ad as _fwl
    from ptcore._dispatch.table import OpDef
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


def install():
    """Give every op of the autograd-aware families its body (recording with
    its formula) and bind the entries made from the table."""
    from ptcore._dispatch.generate import entry
    from ptcore.autograd import _composite_functions, graph
    _composite_functions.install()
    graph._Tensor[0] = ptcore.Tensor
    graph._ADD_OP = ptcore._ops.pointwise._B_ADD
    mods = (ptcore._ops.pointwise, ptcore._ops.reduction, ptcore._ops.linalg, ptcore._ops.shape,
            ptcore._ops.sorting)
    bodies = {}

    def wrap(name, fn, kind, family):
        key = id(fn)
        b = bodies.get(key)
        if b is None:
            b = bodies[key] = (name, _body(name, fn))
        bname, body = b
        e = entry(name, fn, body, kind, family, factory=lambda k, _n=bname: _body(_n, k))
        _set_device_fast(name, e)
        return e

    # functions
    for m in mods:
        fam = _FAMILY[m.__name__.rsplit(".", 1)[-1]]
        for name in m.__all__:
            if name.startswith("__"):
                continue
            fn = getattr(m, name)
            if not callable(fn) or isinstance(fn, type):
                continue
            # composites record through their parts: their body is the function itself
            w = entry(name, fn, None, "function", fam) if _decl(name).grad == "inside" else \
                wrap(name, fn, "function", fam)
            setattr(ptcore, name, w)
            setattr(m, name, w)
    # methods
    for m in mods:
        fam = _FAMILY[m.__name__.rsplit(".", 1)[-1]]
        for name, fn in list(m._TENSOR_METHODS.items()):
            if isinstance(fn, property) or name == "__hash__":
                continue
            if name.startswith("__"):
                continue
            if not callable(fn):
                continue
            setattr(ptcore.Tensor, name, entry(name, fn, None, "method", fam)
                    if _decl(name).grad == "inside" else wrap(name, fn, "method", fam))
    _install_operators(wrap)
    # composites recorded as one node with torch's formula (their forward
    # stays the composite's, or a device's kernel): grad_fn SincBackward0 ...
    from ptcore._ops import pointwise_composite as _pc, linalg_composite as _lc
    from ptcore._ops import reduction_composite as _rc, creation_composite as _cc
    from ptcore._ops import shape_composite as _sc
    for name in ("unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"):
        # torch's pieces are not views of the input: aliases of the split's
        for mod in (_sc, _sc._TENSOR_METHODS):
            setter = mod.__setitem__ if isinstance(mod, dict) else \
                (lambda k, v, _m=mod: setattr(_m, k, v))
            setter(name, _unviewed(mod[name] if isinstance(mod, dict) else getattr(mod, name)))
    for mod, fam in ((_pc, "pointwise"), (_lc, "linalg"), (_rc, "reduction"), (_cc, "creation"),
                     (_sc, "shape")):
        # (the in-place function forms that call the method's entry are left alone)
        for name in mod.__all__:
            fn = getattr(mod, name, None)
            d = _decl(name)
            if d is not None and d.grad == "formula" and fn is not None and \
                    not getattr(fn, "_calls_method_entry", False):
                w = wrap(name, fn, "function", fam)
                setattr(ptcore, name, w)
                setattr(mod, name, w)
        for name, fn in list(mod._TENSOR_METHODS.items()):
            d = _decl(name)
            if d is not None and d.grad == "formula" and callable(fn):
                setattr(ptcore.Tensor, name, wrap(name, fn, "method", fam))
    # the private GEMM the linalg composites (einsum, tensordot, kron,
    # multi_dot, matrix_power, sums over dims) are built on
    from ptcore._ops import linalg as _linalg_ops
    _linalg_ops._product = _seen_by_forward_ad(
        "_product", R.differentiable("_product", _linalg_ops._product, FORMULAS["_product"]),
        "linalg")
    # linalg namespace
    la = ptcore.linalg
    raw_la = {}

    def setla(name, fname, fn, formula):
        raw_la[name] = fn
        body = R.differentiable(fname, fn, formula)
        setattr(la, name, entry(fname, fn, body, "function", "linalg",
                                factory=lambda k, _f=formula, _n=fname: R.differentiable(_n, k, _f),
                                public_name=name, namespace="linalg"))
    for name, fname in (("inv", "linalg_inv"), ("det", "linalg_det"), ("slogdet", "linalg_slogdet"),
                        ("matrix_exp", "matrix_exp"),
                        ("solve", "linalg_solve"), ("cholesky", "linalg_cholesky"),
                        ("eigh", "linalg_eigh"), ("eigvalsh", "linalg_eigvalsh"),
                        ("vector_norm", "vector_norm"), ("svd", "linalg_svd"),
                        ("svdvals", "linalg_svdvals"), ("qr", "linalg_qr")):
        fn = getattr(la, name, None)
        if fn is not None:
            f = FORMULAS.get(fname) or R.not_implemented("linalg_" + name)
            setla(name, fname, fn, f)
    for name in ("inv_ex", "solve_ex", "cholesky_ex", "eig", "eigvals",
                 "lstsq", "pinv", "matrix_rank", "lu_factor", "lu_factor_ex", "norm",
                 "matrix_norm", "cross", "multi_dot", "matrix_power", "matmul"):
        fn = getattr(la, name, None)
        if fn is None:
            continue
        if name in ("matmul",):
            setattr(la, name, ptcore.matmul)
        elif name in ("multi_dot", "matrix_power", "norm"):
            continue      # composites of differentiable ops
        elif name in ("matrix_rank",):
            continue
        elif name == "matrix_norm":
            la.matrix_norm = _matrix_norm_ad(fn)
        elif name in ("solve_ex", "cholesky_ex"):
            base = FORMULAS["linalg_" + name[:-3]]
            setla(name, "linalg_" + name, fn, lambda out, *a, _f=base, **k: _f(out[0], *a, **k))
        else:
            f = FORMULAS.get("linalg_" + name) or R.not_implemented("linalg_" + name)
            setla(name, "linalg_" + name, fn, f)
    # linalg.norm / matrix_norm dispatch through these module globals
    from ptcore.linalg import _norms
    _norms.vector_norm = la.vector_norm
    _norms.matrix_norm = la.matrix_norm

    from ptcore.autograd.graph import node_class
    node_class("CopySlices").name = lambda self: "torch::autograd::CopySlices"   # as torch
    # core hooks: views, clone/contiguous, dtype conversion, indexing, in-place core methods
    _C._set_autograd_hooks(R._on_view, None, R._on_grad_wrap, R._on_split)
    import sys
    sys.modules["ptcore.tensor"]._AUTOGRAD_TO[0] = R._on_to
    sys.modules["ptcore.tensor"]._REFRESH_VIEW[0] = R.refresh_view
    from ptcore._ops import indexing as _indexing
    g_raw, s_raw = _indexing.getitem, _indexing.setitem
    advanced_getitem = R.differentiable("index", g_raw, _getitem_formula)
    as_ints = _indexing.scalar_tensors_as_ints

    def getitem(self, idx):
        plain = as_ints(idx)
        if plain is not None:
            return self[plain]      # a view where nothing else is advanced, as torch's
        return advanced_getitem(self, idx)
    _C._set_indexing_hooks(getitem, s_raw)
    T = ptcore.Tensor
    from ptcore.autograd import _tensor_methods
    _tensor_methods.install(T)
    T.copy_ = entry("copy_", _TensorBase.copy_, R._copy_inplace, "method", "pointwise")
    T.fill_ = entry("fill_", _TensorBase.fill_, R._fill_inplace, "method", "pointwise")
    T.zero_ = entry("zero_", _TensorBase.zero_, R._zero_inplace, "method", "pointwise")
    T.__setitem__ = entry("__setitem__", _TensorBase.__setitem__, R._setitem, "method",
                          "indexing")
    idx_put = entry("index_put", _indexing.index_put,
                    R.differentiable("index_put", _indexing.index_put, FORMULAS["index_put"]),
                    "function", "indexing")
    ptcore.index_put = idx_put
    T.index_put = idx_put
    T.index_put_ = R.inplace("index_put_", _indexing.index_put_, idx_put)
    ptcore.index_put_ = T.index_put_


def _writable_unrecorded(x):
    """Whether an in-place op may write ``x`` on a device's fast path:
    nothing would record it and none of the in-place wrapper's checks
    (inference tensors, leaves and views that require grad) applies --
    those of ``_record.device_fast_inplace``."""
    st = R._state
    if not isinstance(x, _TensorBase) or R._gm._ever[0] and not st.inference and x.is_inference():
        return False
    return not (st.enabled and (x._requires_grad or R._nograd_views[0] and R._is_nograd_view(x)))


def device_fast_inplace_unary(fn):
    """An in-place unary op's ``device_fast`` (``x.relu_()``) for a device
    runtime: ``fn(x)`` (the device's C dense path: x, or None to decline)
    when :func:`_writable_unrecorded`, else None: the in-place wrapper's
    checks, recording and errors."""
    def device_fast(args, kwargs):
        if kwargs or len(args) != 1 or not _writable_unrecorded(args[0]):
            return None
        return fn(args[0])
    return device_fast


def device_fast_reflected(fn, formula):
    """The ``device_fast`` of a reflected op with a number (``other - x``,
    ``rsub(x, other)``): ``fn(x, other)`` (the device's path: the result,
    or None to take the layers), recorded with ``formula`` when x requires
    grad."""
    st = R._state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        x = args[0]
        out = fn(x, args[1])
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, args[1])
        return out
    return device_fast


def device_fast_rtruediv():
    """``Tensor.__rtruediv__``'s ``device_fast`` (``number / x``): torch's
    ``x.reciprocal() * number`` by the device's dense paths of the two ops,
    each recorded with its formula when x requires grad; None to take the
    layers."""
    from ptcore._ops import _ewdrv
    st = R._state
    recip, mul = FORMULAS["reciprocal"], FORMULAS["mul"]
    ui, mi = _ewdrv.UNARY["reciprocal"], ptcore._ops.pointwise._B["mul"]
    unary, binary = _ewdrv.device_fast_unary, _ewdrv.fast_binary

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        x, other = args
        if type(other) is not float and type(other) is not int:
            return None
        r = unary(ui, x)
        if r is None:
            return None
        out = binary(mi, r, other, True)
        if out is None:
            return None
        if st.enabled and x._requires_grad:
            recip(r, x)
            mul(out, r, other)
        return out
    return device_fast


def device_fast_masked_fill(fn, formula, inplace):
    """``masked_fill``/``masked_fill_``'s ``device_fast``: ``fn(x, mask,
    value)`` for positional calls (the device's path: the result, or None
    to take the layers); out of place recorded with ``formula`` when x
    requires grad, in place only when :func:`_writable_unrecorded`."""
    st = R._state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 3:
            return None
        x = args[0]
        if inplace:
            return fn(*args) if _writable_unrecorded(x) else None
        out = fn(*args)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, *args)
        return out
    return device_fast


def device_fast_where(fn, formula, method):
    """``where(cond, x, y)``'s ``device_fast`` (``x.where(cond, y)`` when
    ``method``): ``fn(cond, x, y)`` (the device's path: the result, or None
    to take the layers), recorded with ``formula`` when x or y requires grad."""
    st = R._state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 3:
            return None
        cond, x, y = (args[1], args[0], args[2]) if method else args
        out = fn(cond, x, y)
        if out is not None and st.enabled and (x._requires_grad or y._requires_grad):
            formula(out, cond, x, y)
        return out
    return device_fast


def device_fast_clamp(fn, formula):
    """``clamp``/``clip``'s ``device_fast``: ``fn(x, min, max)`` for the
    calls ``(x[, min[, max]])`` with ``min``/``max`` also by keyword (the
    device's path: the result, or None to take the layers), recorded with
    ``formula`` when x requires grad."""
    st = R._state

    def device_fast(args, kwargs):
        call = R.optional_args(args, kwargs, ("min", "max"), (None, None))
        if call is None:
            return None
        x, lo, hi = call
        out = fn(x, lo, hi)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, lo, hi)
        return out
    return device_fast


def _unviewed(fn):
    """``fn`` (a split) returning aliases of its pieces that are not views
    (torch's unsafe_split: ``piece._base`` is None)."""
    def raw(*args, **kwargs):
        return tuple(o.detach() for o in fn(*args, **kwargs))
    raw.__name__ = raw.__qualname__ = fn.__name__
    raw.__doc__ = fn.__doc__
    # (still the composite's: the device layer lets a composite through to the
    # ops it is written with, which run on the tensors' device)
    raw.__module__ = fn.__module__
    return raw


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


def _fast_op(opname, generic, dunder):
    """Operator method ``Tensor.<dunder>``: the Cython fast path, also for
    operands that require grad (when recording, the op's formula attaches
    the node directly), else the general function.  An entry of the
    dispatch point: with a layer on, the call goes down the layer stack."""
    from ptcore._ops import _ewdrv
    from ptcore._dispatch import dispatcher as D
    from ptcore._dispatch.table import declare
    opi = ptcore._ops.pointwise._B[opname]
    fast = _ewdrv.fast_binary
    st = R._state
    formula = BINARY_RECORDERS.get(opname) or FORMULAS[opname]
    TB = _TensorBase
    flag = D.on
    slow = D.run_layers

    def layered(self, other):
        # as torch, the layers see the method (``Tensor.add`` for ``a + b``)
        m = getattr(ptcore.Tensor, opname)
        return m(self, other) if not dunder.startswith("__r") or opname in ("add", "mul") \
            else slow(method, d, (self, other), {})

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


def _install_operators(wrap):
    from ptcore._ops import pointwise as E
    T = ptcore.Tensor
    fast = _fast_op
    add, sub, mul, div = ptcore.add, ptcore.sub, ptcore.mul, ptcore.div
    T.__add__ = fast("add", E._op(add), "__add__")
    T.__radd__ = fast("add", E._op(add), "__radd__")
    T.__sub__ = fast("sub", E._op(sub), "__sub__")
    T.__mul__ = fast("mul", E._op(mul), "__mul__")
    T.__rmul__ = fast("mul", E._op(mul), "__rmul__")
    T.__truediv__ = fast("div", E._op(div), "__truediv__")
    T.__div__ = E._op(div)
    T.__floordiv__ = E._op(ptcore.floor_divide)
    T.__mod__ = E._op(ptcore.remainder)
    T.__pow__ = E._op(ptcore.pow)
    T.__neg__ = ptcore.neg
    T.__abs__ = ptcore.abs

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

    T.__rsub__ = _rsub
    T.__rtruediv__ = T.__rdiv__ = _rtruediv
    T.__rpow__ = _rpow
    T.__rmod__ = _rmod
    for op, base in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                     ("__itruediv__", "div_"), ("__ipow__", "pow_"), ("__imod__", "remainder_"),
                     ("__ifloordiv__", "floor_divide_")):
        T.__dict__  # noqa: B018
        setattr(T, op, E._inplace(getattr(T, base)))
    mm = ptcore.matmul

    def _matmul_op(self, other):
        if not isinstance(other, _TensorBase):
            return NotImplemented
        return mm(self, other)

    def _rmatmul_op(self, other):
        if not isinstance(other, _TensorBase):
            return NotImplemented
        return mm(other, self)
    T.__matmul__ = _matmul_op
    T.__rmatmul__ = _rmatmul_op


def _matrix_norm_ad(raw):
    """``linalg.matrix_norm`` (computed with NumPy) recorded by composing
    differentiable ops when an input requires grad."""
    import functools
    from ptcore.autograd import grad_mode

    @functools.wraps(raw)
    def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
        if not (R._state.enabled and isinstance(input, _TensorBase) and input._requires_grad):
            return raw(input, ord, dim, keepdim, dtype=dtype, out=out)
        if out is not None:
            # torch's matrix_norm (a composite) takes an out with an input that requires
            # grad: the result is copied into it (CopyBackwards)
            from ptcore._ops.linalg import _finish
            return _finish(matrix_norm(input, ord, dim, keepdim, dtype=dtype), out,
                           "linalg_matrix_norm")
        with grad_mode.no_grad():
            ref = raw(input, ord, dim, keepdim, dtype=dtype)      # validates the arguments
        src = input.to(dtype) if dtype is not None else input
        d0, d1 = (d % input.dim() for d in dim)
        if ord == "fro":
            return ptcore.linalg.vector_norm(src, 2, (d0, d1), keepdim)
        if ord == "nuc" or float(ord) in (2.0, -2.0):
            s = ptcore.linalg.svdvals(src.movedim((d0, d1), (-2, -1)))
            r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if float(ord) > 0 else s.amin(-1))
            if keepdim:
                for d in sorted((d0, d1)):
                    r = r.unsqueeze(d)
            return r
        o = float(ord)
        sum_dim, red_dim = (d0, d1) if abs(o) == 1.0 else (d1, d0)
        sums = src.abs().sum(sum_dim, keepdim=True)
        r = sums.amax(red_dim, keepdim=True) if o > 0 else sums.amin(red_dim, keepdim=True)
        if not keepdim:
            r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
        return r.to(ref.dtype) if r.dtype is not ref.dtype else r
    return matrix_norm
