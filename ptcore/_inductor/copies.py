"""Passes over a captured training graph that remove copies.

``cat`` of reshaped tensors: the backward of ``x.split(...)`` (or ``chunk``)
followed by views is a ``cat`` of the pieces' gradients, each brought back
to the piece's shape by ``reshape`` -- a copy when the gradient is a
permuted view (multi-head attention's q, k, v gradients: ``(B, H, T, d)``
permuted to ``(B, T, H, d)`` and reshaped to ``(B, T, C)``).  Eager code
copies each piece into a new tensor and then copies the pieces into the
result; :func:`fold_reshape_cat` makes that one :class:`CatReshaped` step
writing each gradient straight into its slice of the result (one strided
copy per piece, no intermediate tensors).  The values are the same bits:
both are copies.

Products computed into their place: :func:`fold_products_into_place` makes
batched products that such a step (or a ``contiguous`` call, forward or
backward) only copies through ``permute``/``transpose`` views one
:class:`ProductsCat` step computing them into the result (``mm_into`` into
row-major places: the product kernel's bits).

A gradient buffer laid out for its reader: :func:`fold_select_layout`
allocates the buffer of ``x[0], x[1], ...``'s gradient (nn.MultiheadAttention's
packed projection) in the layout that the views after it read as contiguous,
so that its final reshape is a view.
"""
import itertools
import math

from ptcore import float32 as _float32, float64 as _float64, strided as _strided
from ptcore._tensor import _TensorBase, empty_strided as _empty_strided
from ptcore._dispatch.device import in_host_memory
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._ops.kernels._blas import mm_into as _mm_into, usable as _usable
from ptcore._ops.shape import cat as _cat
from ptcore.autograd._formulas import _recorded
from ptcore.autograd.grad_mode import _state as _grad_state
from ptcore.jit._ir import Node, decode
from ptcore._inductor.codegen import chain_runner, node_inputs, uses_and_makers, writes_input
from ptcore._inductor.direct_calls import BatchedProduct, batched_product
from ptcore._inductor.kernel_grads import KernelGrad, select_grad, select_grad_into, squeeze_grad

__all__ = ["CatReshaped", "ProductsCat", "cat_reshaped", "fold_products_into_place",
           "fold_reshape_cat", "fold_select_layout", "products_cat"]

_RESHAPE = (("Tensor", "reshape"), ("ptcore", "reshape"))
_CAT = (("ptcore", "cat"), ("ptcore", "concat"), ("ptcore", "concatenate"))


# (pieces of fewer elements take the plain ops, see cat_reshaped)
_SMALL = 16384


class CatReshaped(Node):
    """A backward step ``out = cat_reshaped(sources, shapes, dim)`` replacing
    ``cat([s.reshape(shape) ...], dim)``."""
    __slots__ = ()

    def __init__(self, args, outputs):
        super().__init__(("prim", "compile_cat_reshaped"), args, {}, outputs)
        self._fn = cat_reshaped


def cat_reshaped(sources, shapes, dim):
    """``cat([s if shape is None else s.reshape(shape) ...], dim)``, each
    piece copied once, straight into its slice of the result; the plain
    ops where the call is anything but same-dtype, same-device, strided
    pieces whose shapes agree (they raise eager's errors then), or the
    gradient is itself differentiated; also for small pieces, where the
    plain ops' few calls cost less than this function's Python (the copies
    cost little: 3 pieces of 1.5K floats 7 us plain against 11 us here, of
    16K the same, of 98K 208 us against 124 us)."""
    plain = not sources or not all(isinstance(s, _TensorBase) for s in sources) or \
        sources[0].numel() < _SMALL or _recorded(*sources)
    if not plain:
        first = sources[0]
        full = [tuple(s.shape) if sh is None else _resolved(sh, s.numel()) for s, sh in
                zip(sources, shapes)]
        nd = len(full[0]) if full[0] is not None else 0
        # (4-D and 5-D results may take a memory format from the pieces: the plain cat)
        plain = nd == 0 or nd >= 4 or not -nd <= dim < nd
        if not plain:
            d = dim % nd
            for s, f in zip(sources, full):
                if f is None or s.dtype is not first.dtype or s.device != first.device or \
                        len(f) != nd or f[:d] != full[0][:d] or f[d + 1:] != full[0][d + 1:] or \
                        s.layout is not first.layout or not s.is_cpu or s.is_complex():
                    plain = True
                    break
    if plain:
        return _cat([s if sh is None else s.reshape(sh) for s, sh in zip(sources, shapes)], dim)
    out, places = _places(first, full, d, [tuple(s.shape) for s in sources])
    for s, (dst, dv, f) in zip(sources, places):
        _copy_into(dst, dv, s, f)
    return out


def _places(first, full, d, own_shapes):
    """``(out, [(slice, view or None, shape)])``: a new tensor like ``first``
    holding pieces of shapes ``full`` along dim ``d``, and each piece's slice,
    seen in the piece's own shape (``own_shapes``: reshape's row-major order;
    None where no view can) -- pieces without elements are given None."""
    shape = list(full[0])
    shape[d] = sum(f[d] for f in full)
    out = first.new_empty(shape)
    off, places = 0, []
    for f, own in zip(full, own_shapes):
        n = f[d]
        dst = out.narrow(d, off, n)
        off += n
        if n == 0:
            places.append((None, None, f))
            continue
        try:
            dv = dst.view(own)
        except RuntimeError:
            dv = None
        places.append((dst, dv, f))
    return out, places


def _copy_into(dst, dv, s, f):
    """``s`` copied into its slice ``dst`` (``dv``: the slice in ``s``'s shape)."""
    if dst is None:
        return
    if dv is not None:
        dv.copy_(s)
    else:
        dst.copy_(s.reshape(f))


def _resolved(shape, numel):
    """``shape`` with its -1 filled in for ``numel`` elements; None when no
    such shape exists (reshape raises: the plain ops run)."""
    known, free = 1, 0
    for v in shape:
        if v == -1:
            free += 1
        elif v < 0:
            return None
        else:
            known *= v
    if free > 1:
        return None
    if free:
        if known == 0 or numel % known:
            return None
        return tuple(numel // known if v == -1 else v for v in shape)
    return tuple(shape) if known == numel else None


def _shape_of(args):
    """The shape a ``reshape`` node's encoded arguments after the tensor give."""
    try:
        vals = [decode(a, {}) for a in args]
    except (KeyError, TypeError):
        return None
    if len(vals) == 1 and isinstance(vals[0], (tuple, list)):
        vals = list(vals[0])
    if not vals or not all(type(v) is int for v in vals):
        return None
    return tuple(vals)


def fold_reshape_cat(nodes, live_ids):
    """``nodes`` (a backward graph's, in order) with each ``cat`` of a list
    of which some items are ``reshape`` s read by nothing else made one
    :class:`CatReshaped` step (those reshape nodes removed); ``live_ids``:
    values read after the nodes (the graph's results)."""
    uses, made_by = uses_and_makers(nodes, live_ids)
    drop = set()
    out = {}
    for n in nodes:
        if n.op not in _CAT or n.kwargs or len(n.args) != 2 or type(n.args[1]) is not int:
            continue
        items = n.args[0]
        if type(items) is not dict or "list" not in items and "tuple" not in items:
            continue
        items = items.get("list", items.get("tuple"))
        srcs, shapes, folded = [], [], []
        for it in items:
            r = made_by.get(it["v"]) if type(it) is dict and "v" in it else None
            r = r if r is not None and r.op in _RESHAPE else None
            sh = None
            if r is not None and uses.get(it["v"]) == 1 and not r.kwargs and \
                    type(r.args[0]) is dict and "v" in r.args[0]:
                sh = _shape_of(r.args[1:])
            if sh is None:
                srcs.append(it)
                shapes.append(None)
            else:
                srcs.append(r.args[0])
                shapes.append(sh)
                folded.append(r)
        if not folded:
            continue
        out[id(n)] = CatReshaped([{"list": srcs}, shapes, n.args[1]], n.outputs)
        drop.update(id(r) for r in folded)
    if not out:
        return nodes
    return [out.get(id(n), n) for n in nodes if id(n) not in drop]


_T = (("Tensor", "t"), ("ptcore", "t"))
_SUM = (("Tensor", "sum"), ("ptcore", "sum"))


def fold_calls(nodes, out_ids, values):
    """``(nodes, out_ids)`` without calls the backward formulas make that
    compute nothing new: ``t(t(x))`` of an ``x`` read by nothing else is
    ``x`` (a linear layer's weight gradient: ``t`` of ``t`` of the product),
    and ``sum(g, dims, keepdim=True)`` reshaped to the shape without those
    dims is ``sum(g, dims)`` (its bias gradient).  ``values``: the graph's
    values (their shapes)."""
    uses, made_by = uses_and_makers(nodes, out_ids)
    rename, drop, repl = {}, set(), {}
    for n in nodes:
        if type(n.outputs) is not dict or "v" not in n.outputs or n.kwargs or not n.args or \
                type(n.args[0]) is not dict or "v" not in n.args[0]:
            continue
        src = n.args[0]["v"]
        p = made_by.get(src)
        if p is None or uses.get(src) != 1 or id(p) in drop:
            continue
        if n.op in _T and len(n.args) == 1 and p.op in _T and len(p.args) == 1 and \
                not p.kwargs and type(p.args[0]) is dict and "v" in p.args[0]:
            x = p.args[0]["v"]
            # (x made here, read once: an input of the backward -- a saved tensor, an
            # incoming gradient -- is never handed on as the result)
            if uses.get(x) == 1 and x not in out_ids and x in made_by:
                rename[n.outputs["v"]] = x
                drop.update((id(p), id(n)))
        elif n.op in _RESHAPE and p.op in _SUM and len(p.args) == 2 and \
                set(p.kwargs) == {"keepdim"} and p.kwargs["keepdim"] is True and \
                type(p.args[0]) is dict and "v" in p.args[0]:
            shape = _shape_of(n.args[1:])
            vin = values.get(p.args[0]["v"])
            try:
                dims = decode(p.args[1], {})
            except (KeyError, TypeError):
                continue
            dims = [dims] if type(dims) is int else dims
            ins = getattr(vin, "shape", None)
            if shape is None or ins is None or not isinstance(dims, (list, tuple)) or \
                    not dims or not all(type(d) is int and -len(ins) <= d < len(ins)
                                        for d in dims):
                continue
            red = {d % len(ins) for d in dims}
            if len(red) != len(dims) or \
                    tuple(s for i, s in enumerate(ins) if i not in red) != shape:
                continue
            # (one dim as an int: the same kernel, a third of the list form's Python cost)
            repl[id(n)] = Node(p.op, [p.args[0], dims[0] if len(dims) == 1 else p.args[1]], {},
                               n.outputs)
            drop.add(id(p))
    if not rename and not repl:
        return nodes, out_ids
    out = []
    for n in nodes:
        if id(n) in repl:
            out.append(repl[id(n)])
        elif id(n) not in drop:
            if rename:
                n.args = _renamed(n.args, rename)
                n.kwargs = {k: _renamed(a, rename) for k, a in n.kwargs.items()}
            out.append(n)
    return out, [rename.get(v, v) for v in out_ids]


def _renamed(x, rename):
    if type(x) is dict:
        if "v" in x:
            return {"v": rename.get(x["v"], x["v"])}
        out = {}
        for k, a in x.items():
            if k in ("list", "tuple", "slice"):
                a = _renamed(a, rename)
            elif k == "dict":
                a = [(kk, _renamed(aa, rename)) for kk, aa in a]
            out[k] = a
        return out
    if type(x) is list:
        return [_renamed(a, rename) for a in x]
    return x


# --------------------------------------------------------------------------
# products written straight into their place
# --------------------------------------------------------------------------

_PERMUTE = (("Tensor", "permute"), ("ptcore", "permute"))
_TRANSPOSE = (("Tensor", "transpose"), ("ptcore", "transpose"), ("Tensor", "swapaxes"),
              ("ptcore", "swapaxes"))
_CONTIGUOUS = (("Tensor", "contiguous"),)


class ProductsCat(Node):
    """A step ``out = products_cat(operands, plan, dim)`` replacing batched
    products whose results, permuted, a :class:`CatReshaped` step (or a
    ``contiguous`` call: one piece, no reshape) copies into a new tensor:
    each product is computed into its slice of that tensor."""
    __slots__ = ()

    def __init__(self, args, outputs):
        super().__init__(("prim", "compile_products_cat"), args, {}, outputs)
        self._fn = products_cat


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _pieces(operands, plan):
    """The plan's pieces with their operands: ``(a, b, perm, shape)`` for a
    product, ``(src, None, None, shape)`` for a tensor copied as it is."""
    out, i = [], 0
    for kind, perm, shape in plan:
        if kind == "p":
            out.append((operands[i], operands[i + 1], perm, shape))
            i += 2
        else:
            out.append((operands[i], None, None, shape))
            i += 1
    return out


def _direct(a, b, dtype):
    """Whether ``a @ b`` may be computed by ``mm_into`` where
    :func:`ptcore._inductor.direct_calls.batched_product` would call the
    product kernel on them (``dtype``: the first piece's)."""
    if type(a) is not type(b) or not isinstance(a, _TensorBase) or \
            (_grad_state.enabled and (a._requires_grad or b._requires_grad)):
        return False
    nd = a.dim()
    if nd < 3 or b.dim() != nd or a.dtype is not dtype or b.dtype is not dtype or \
            not in_host_memory(a) or not in_host_memory(b) or \
            a.layout is not _strided or b.layout is not _strided:
        return False
    sa, sb = a.shape, b.shape
    return sa[:-2] == sb[:-2] and sa[-1] == sb[-2]


def products_cat(operands, plan, dim):
    """``cat([reshape(p.permute(perm), shape) ...], dim)`` with ``p`` the
    product ``a @ b`` of each piece (``shape`` None: no reshape, and a single
    piece: ``p.permute(perm).contiguous()``), each product whose place in the
    result is row-major written there by ``mm_into`` -- the same bits as the
    product kernel's contiguous result copied there (the same kernel on the
    same operands, only the output's row stride differs); a product whose
    place is column-major (a gradient of ``k.transpose(-2, -1)``) is computed
    and copied.  The ops one by one (eager's values
    and errors) for anything else: operands the product kernel would not take
    directly, a recorded product (autograd on, an operand requiring grad),
    forward AD, vmap, pieces whose shapes or dtypes do not agree."""
    pieces = _pieces(operands, plan)
    first = pieces[0][0]
    dtype = getattr(first, "dtype", None)
    ok = (dtype is _float32 or dtype is _float64) and not _fw_levels() and not _vmap_frames()
    full = []
    if ok:
        for a, b, perm, shape in pieces:
            if b is not None:
                if not _direct(a, b, dtype):
                    ok = False
                    break
                src = tuple(a.shape[:-1]) + (b.shape[-1],)
                src = tuple(src[p] for p in perm)
            else:
                if not isinstance(a, _TensorBase) or a.dtype is not dtype or \
                        not in_host_memory(a) or a.layout is not _strided or \
                        (_grad_state.enabled and a._requires_grad):
                    ok = False
                    break
                src = tuple(a.shape)
            f = src if shape is None else _resolved(shape, math.prod(src))
            if f is None:
                ok = False
                break
            full.append((src, f))
    if ok:
        nd = len(full[0][1])
        ok = 0 < nd <= 3 and -nd <= dim < nd if len(pieces) > 1 else nd > 0
    if ok:
        d = dim % nd if len(pieces) > 1 else 0
        f0 = full[0][1]
        for _, f in full:
            if len(f) != nd or f[:d] != f0[:d] or f[d + 1:] != f0[d + 1:]:
                ok = False
                break
    if not ok:
        srcs = [a if b is None else batched_product(a, b).permute(perm)
                for a, b, perm, _ in pieces]
        if len(pieces) == 1 and plan[0][2] is None:
            return srcs[0].contiguous()
        return cat_reshaped(srcs, [sh for _, _, _, sh in pieces], dim)
    out, places = _places(first, [f for _, f in full], d, [src for src, _ in full])
    for (a, b, perm, _), (dst, dv, f) in zip(pieces, places):
        if b is None or dst is None:
            _copy_into(dst, dv, a, f)
            continue
        dp = None if dv is None else dv.permute(_inverse(perm))
        # (row-major destinations only: into a column-major one mm_into computes
        # b^T a^T, which for some sizes takes another kernel than the product's
        # and another summation: eager's bits are the copy's)
        if dp is not None and dp.stride(-1) == 1:
            _mm_into(dp, a if _usable(a) else a.contiguous(), b if _usable(b) else b.contiguous(),
                     1, 0)
        else:
            dst.copy_(batched_product(a, b).permute(perm).reshape(f))
    return out


def _perm_of(node, nd):
    """The permutation a ``permute``/``transpose`` node applies to a tensor of
    ``nd`` dims (dim i of the result is dim perm[i] of its input), or None."""
    try:
        args = [decode(x, {}) for x in node.args[1:]]
    except (KeyError, TypeError):
        return None
    if node.kwargs:
        return None
    if node.op in _PERMUTE:
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = list(args[0])
        if len(args) != nd or not all(type(x) is int and -nd <= x < nd for x in args):
            return None
        perm = tuple(x % nd for x in args)
        return perm if len(set(perm)) == nd else None
    if node.op in _TRANSPOSE:
        if len(args) != 2 or not all(type(x) is int and -nd <= x < nd for x in args):
            return None
        i, j = args[0] % nd, args[1] % nd
        perm = list(range(nd))
        perm[i], perm[j] = perm[j], perm[i]
        return tuple(perm)
    return None


def _product_chain(v, uses, made_by, values):
    """``(product node, perm)`` when value ``v`` is a batched product's result
    permuted by a chain of ``permute``/``transpose`` nodes, each value of the
    chain read once (by the next); else None."""
    perm = None
    chain = []
    while True:
        n = made_by.get(v)
        if n is None:
            return None
        if isinstance(n, BatchedProduct):
            if uses.get(v) != 1 or perm is None:
                return None
            return n, perm, chain
        if uses.get(v) != 1 or not n.args or type(n.args[0]) is not dict or "v" not in n.args[0]:
            return None
        inp = n.args[0]["v"]
        shape = getattr(values.get(inp), "shape", None)
        if shape is None:
            return None
        p = _perm_of(n, len(shape))
        if p is None:
            return None
        # v = inp.permute(p); v's dim i is (the product's) perm_inp[p[i]]
        perm = p if perm is None else tuple(p[i] for i in perm)
        chain.append(n)
        v = inp


def fold_products_into_place(nodes, live_ids, values, skip=()):
    """``nodes`` with each :class:`CatReshaped` step whose pieces are (some of
    them) batched products seen through ``permute``/``transpose`` views, and
    each ``contiguous`` of such a view, made one :class:`ProductsCat` step:
    the products are computed into the result instead of copied there
    (attention's q, k, v gradients into the projection's gradient; ``att @
    v`` into the (B, T, H, d) layout its ``transpose(1, 2).contiguous()``
    asks for).  The product nodes and their views are removed; a product
    moves to the step's place (after everything its operands need: they
    exist before the product did).  ``live_ids``: values read after the
    nodes; ``values``: the graph's values (their shapes); nodes whose ``id``
    is in ``skip`` stay as they are.  A product is not moved past a node
    that writes into an argument (it might write into an operand)."""
    uses, made_by = uses_and_makers(nodes, live_ids)
    pos = {id(n): i for i, n in enumerate(nodes)}
    writes = [i for i, n in enumerate(nodes) if writes_input(n)]
    repl, drop = {}, set()
    for n in nodes:
        if id(n) in skip:
            continue
        if isinstance(n, CatReshaped):
            items = n.args[0]["list"]
            shapes, dim = n.args[1], n.args[2]
        elif n.op in _CONTIGUOUS and len(n.args) == 1 and not n.kwargs and \
                type(n.args[0]) is dict and "v" in n.args[0]:
            items, shapes, dim = [n.args[0]], [None], 0
        else:
            continue
        operands, plan, folded = [], [], []
        for it, sh in zip(items, shapes):
            found = _product_chain(it["v"], uses, made_by, values) \
                if type(it) is dict and "v" in it else None
            if found is not None and (
                    any(id(x) in drop or id(x) in skip for x in [found[0]] + found[2]) or
                    any(pos[id(found[0])] < w < pos[id(n)] for w in writes)):
                found = None
            if found is None:
                if type(it) is not dict or "v" not in it:
                    break
                operands.append(it)
                plan.append(("s", None, sh))
            else:
                p, perm, chain = found
                operands += list(p.args)
                plan.append(("p", perm, sh))
                folded.append([p] + chain)
        else:
            if folded:
                repl[id(n)] = ProductsCat([{"list": operands}, plan, dim], n.outputs)
                for group in folded:
                    drop.update(id(x) for x in group)
    if not repl:
        return nodes
    return [repl.get(id(n), n) for n in nodes if id(n) not in drop]


# --------------------------------------------------------------------------
# the layout of a gradient buffer that views read as a contiguous tensor
# --------------------------------------------------------------------------

_VIEWS = _PERMUTE + _TRANSPOSE + _RESHAPE + (("Tensor", "view"), ("Tensor", "unsqueeze"),
                                              ("ptcore", "unsqueeze"), ("Tensor", "squeeze"),
                                              ("ptcore", "squeeze"))
_PROBE_LIMIT = 1 << 28      # elements of a probe buffer (its pages are never touched)


def _is_view_node(n):
    if isinstance(n, KernelGrad):
        return n._fn is squeeze_grad
    return n.op in _VIEWS and not n.kwargs


def fold_select_layout(nodes, live_ids, values):
    """``nodes`` with the buffer of each :func:`select_grad` step (the
    gradient of ``x[0], x[1], ...``: nn.MultiheadAttention's packed q, k, v
    projection, unflattened to (3, T, B, E)) laid out so that the views and
    reshapes after it (its transposes back to (T, B, 3, E), a reshape to
    (T, B, 3E)) read it as a contiguous tensor: that reshape is then a view,
    not a copy of the whole gradient.  The layout is found on a probe buffer
    (the chain run on it for each order of its dims: the first whose result
    shares its memory and is contiguous); nothing changes where none is.
    The values are the same (the rows are copied either way)."""
    uses, made_by = uses_and_makers(nodes, live_ids)
    users = {}
    for n in nodes:
        for v in set(node_inputs(n)):
            users.setdefault(v, []).append(n)
    for n in nodes:
        if not isinstance(n, KernelGrad) or n._fn is not select_grad or len(n.args) != 4:
            continue
        shape = n.args[1]
        if type(shape) is not tuple or not 1 < len(shape) <= 5 or \
                math.prod(shape) > _PROBE_LIMIT or math.prod(shape) == 0:
            continue
        v = n.output_ids()[0]
        # (the rows the later steps write into the same buffer)
        while uses.get(v) == 1 and len(users.get(v, ())) == 1:
            u = users[v][0]
            if not (isinstance(u, KernelGrad) and u._fn is select_grad_into and
                    type(u.args[0]) is dict and u.args[0].get("v") == v):
                break
            v = u.output_ids()[0]
        chain = []
        while uses.get(v) == 1 and len(users.get(v, ())) == 1:
            u = users[v][0]
            if not _is_view_node(u) or type(u.args[0]) is not dict or u.args[0].get("v") != v:
                break
            chain.append(u)
            v = u.output_ids()[0]
        if not chain:
            continue
        strides = _layout_for(chain, shape, getattr(values.get(n.output_ids()[0]), "dtype", None))
        if strides is not None:
            n.args = list(n.args) + [strides]
    return nodes


def _layout_for(chain, shape, dtype):
    """Strides for a buffer of ``shape`` that the view nodes ``chain`` turn
    into a contiguous tensor on the same memory (not the contiguous layout
    itself), or None."""
    run = chain_runner(chain, [chain[0].args[0]["v"]])
    nd = len(shape)
    for order in itertools.permutations(range(nd)):
        strides = [0] * nd
        acc = 1
        for d in reversed(order):
            strides[d] = acc
            acc *= shape[d]
        probe = _empty_strided(shape, strides, dtype=_float32 if dtype != "float64" else _float64)
        try:
            out = run(probe)
        except Exception:       # (a probe the chain refuses: no layout is chosen)
            return None
        if isinstance(out, _TensorBase) and out.data_ptr() == probe.data_ptr() and \
                out.is_contiguous() and out.numel() == probe.numel():
            if list(strides) == list(_contiguous_strides(shape)):
                return None         # (already the case: nothing to change)
            return tuple(strides)
    return None


def _contiguous_strides(shape):
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return tuple(reversed(out))
