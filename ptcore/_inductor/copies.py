"""Passes over a captured backward graph that remove copies.

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
"""
from ptcore._tensor import _TensorBase
from ptcore._ops.shape import cat as _cat
from ptcore.autograd._formulas import _recorded
from ptcore.jit._ir import Node, decode
from ptcore._inductor.codegen import node_inputs

__all__ = ["CatReshaped", "cat_reshaped", "fold_reshape_cat"]

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
    shape = list(full[0])
    shape[d] = sum(f[d] for f in full)
    out = first.new_empty(shape)
    off = 0
    for s, f in zip(sources, full):
        n = f[d]
        dst = out.narrow(d, off, n)
        off += n
        if n == 0:
            continue
        try:
            # (the slice seen in the source's own shape: reshape's row-major order)
            dv = dst.view(s.shape)
        except RuntimeError:
            dv = None
        if dv is not None:
            dv.copy_(s)
        else:
            dst.copy_(s.reshape(f))
    return out


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


def _uses_and_makers(nodes, live_ids):
    """``({value: reads}, {value: node making it})`` of ``nodes``, the
    ``live_ids`` read after them counted as reads."""
    uses, made_by = {}, {}
    for n in nodes:
        for v in node_inputs(n):
            uses[v] = uses.get(v, 0) + 1
        if type(n.outputs) is dict and "v" in n.outputs:
            made_by[n.outputs["v"]] = n
    for v in live_ids:
        uses[v] = uses.get(v, 0) + 1
    return uses, made_by


def fold_reshape_cat(nodes, live_ids):
    """``nodes`` (a backward graph's, in order) with each ``cat`` of a list
    of which some items are ``reshape`` s read by nothing else made one
    :class:`CatReshaped` step (those reshape nodes removed); ``live_ids``:
    values read after the nodes (the graph's results)."""
    uses, made_by = _uses_and_makers(nodes, live_ids)
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
    uses, made_by = _uses_and_makers(nodes, out_ids)
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
