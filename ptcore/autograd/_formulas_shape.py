"""Backward formulas of the shape and indexing ops (views, gather/scatter,
indexing, padding, distances), written with ptcore ops as the others in
:mod:`ptcore.autograd._formulas`, into its ``FORMULAS`` table."""
import math
import ptcore as P
from ptcore._tensor import _TensorBase
from ptcore._dispatch.tracing import active_tracer as _active_tracer
from ptcore.autograd._record import attach, save, save_out, _is_diff, _Plain, not_implemented
from ptcore.autograd._record import _state as _rec_state
from ptcore.autograd.graph import node_class
from ptcore._ops import indexing as I
from ptcore.autograd._formulas import _T, _attach_kept, _bname, formula


# ---------------------------------------------------------------------------
# shape / indexing ops
# ---------------------------------------------------------------------------

@formula("cat", "concat", "concatenate")
def _cat(out, tensors, dim=0, axis=None, **k):
    if axis is not None:
        dim = axis
    ts = list(tensors)
    ref = next((t for t in ts if not (t.dim() == 1 and t.shape[0] == 0)), ts[0])
    d = dim % ref.dim()
    sizes = [t.shape[d] if t.dim() == ref.dim() else 0 for t in ts]

    def bw(g):
        res = []
        off = 0
        for t_size, t in zip(sizes, shapes):
            if t is None:
                res.append(None)
                continue
            res.append(g.narrow(d, off, t_size) if len(t) == g.dim()
                       else P.zeros(t, dtype=g.dtype, device=g.device))
            off += t_size
        return tuple(res)
    shapes = [tuple(t.shape) for t in ts]
    attach("CatBackward0", out, ts, bw)


@formula("stack")
def _stack(out, tensors, dim=0, **k):
    ts = list(tensors)
    d = dim % (ts[0].dim() + 1)
    attach("StackBackward0", out, ts, lambda g: tuple(g.unbind(d)))


@formula("flip")
def _flip(out, x, *dims, **k):
    dims = _int_list(dims if dims else k.get("dims"))
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(dims),))


@formula("fliplr")
def _fliplr(out, x, **k):
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(1),))


@formula("flipud")
def _flipud(out, x, **k):
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(0),))


@formula("roll")
def _roll(out, x, shifts, dims=None, **k):
    if isinstance(shifts, int):
        neg = -shifts
    else:
        neg = tuple(-s for s in shifts)
    shape = tuple(x.shape)
    if dims is None:
        attach("RollBackward0", out, (x,), lambda g: (g.flatten().roll(neg).reshape(shape),))
    else:
        attach("RollBackward0", out, (x,), lambda g: (g.roll(neg, dims),))


@formula("rot90")
def _rot90(out, x, k_=1, dims=(0, 1), **k):
    attach("Rot90Backward0", out, (x,), lambda g: (g.rot90(-k_, dims),))


def _int_list(args):
    """A method's ints given as varargs or as one sequence (``x.flip(0, 1)``,
    ``x.flip((0, 1))``, ``x.tile(2)``) as a tuple."""
    if isinstance(args, (tuple, list)) and len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
    return (args,) if isinstance(args, int) else tuple(args)


@formula("repeat")
def _repeat(out, x, *sizes, **k):
    sizes = _int_list(sizes if sizes else k.get("repeats"))
    shape = tuple(x.shape)

    def bw(g):
        nd = len(sizes)
        xs = (1,) * (nd - len(shape)) + shape
        inter = []
        for r, n in zip(sizes, xs):
            inter += [r, n]
        gg = g.reshape(inter)
        gg = gg.sum(tuple(range(0, 2 * nd, 2)))
        return (gg.reshape(shape),)
    attach("RepeatBackward0", out, (x,), bw)


@formula("tile")
def _tile(out, x, *dims, **k):
    dims = _int_list(dims if dims else k.get("dims"))
    nd = max(len(dims), x.dim())
    sizes = (1,) * (nd - len(dims)) + dims
    _repeat(out, x, sizes)


@formula("repeat_interleave")
def _repeat_interleave(out, x, repeats=None, dim=None, **k):
    if not _T(x) or not _is_diff(out):
        return
    shape = tuple(x.shape)
    if isinstance(repeats, int) or (_T(repeats) and repeats.numel() == 1):
        r = int(repeats)
        d = None if dim is None else dim % x.dim()

        def bw(g):
            if d is None:
                return (g.reshape(-1, r).sum(1).reshape(shape),)
            n = shape[d]
            gs = list(g.shape)
            return (g.reshape(gs[:d] + [n, r] + gs[d + 1:]).sum(d + 1),)
    else:
        rep = repeats
        d = 0 if dim is None else dim % x.dim()

        def bw(g):
            idx = P.arange(rep.shape[0], device=g.device).repeat_interleave(rep)
            src = g if dim is not None else g
            z = P.zeros((shape[d],) + tuple(g.shape[d + 1:]) if dim is None else
                        shape, dtype=g.dtype, device=g.device)
            if dim is None:
                return (P.zeros(rep.shape[0], dtype=g.dtype, device=g.device).index_add(0, idx, g).reshape(shape),)
            return (z.index_add(d, idx, src),)
    attach("RepeatInterleaveBackward0", out, (x,), bw)


@formula("tril")
def _tril(out, x, diagonal=0, **k):
    attach("TrilBackward0", out, (x,), lambda g: (g.tril(diagonal),))


@formula("triu")
def _triu(out, x, diagonal=0, **k):
    attach("TriuBackward0", out, (x,), lambda g: (g.triu(diagonal),))


@formula("diag")
def _diag(out, x, diagonal=0, **k):
    shape = tuple(x.shape)
    # (torch's nodes: diag is diag_embed of a vector, diagonal_copy of a matrix)
    if len(shape) == 1:
        attach("DiagEmbedBackward0", out, (x,), lambda g: (g.diagonal(diagonal),))
    else:
        attach("DiagonalBackward0_copy", out, (x,), lambda g: (
            P.diagonal_scatter(P.zeros(shape, dtype=g.dtype, device=g.device), g, diagonal),))


@formula("diag_embed")
def _diag_embed(out, x, offset=0, dim1=-2, dim2=-1, **k):
    attach("DiagEmbedBackward0", out, (x,), lambda g: (g.diagonal(offset, dim1, dim2),))


def _unsafe_split_formula(node):
    """unsafe_split/unsafe_chunk/unsafe_split_with_sizes: pieces that are not
    views (an in-place write into one leaves the input's history alone), one
    node over all of them whose backward concatenates their gradients."""
    @formula(node)
    def f(out, x, n, dim=0, **k):
        if not out or not _is_diff(out[0]):
            return
        d = dim % x.dim()
        shapes = [tuple(o.shape) for o in out]

        def bw(*grads):
            return (P.cat([P.zeros(s, dtype=x.dtype, device=x.device) if g is None else g
                           for g, s in zip(grads, shapes)], d),)
        attach(_bname(node.replace("chunk", "split")), list(out), (x,), bw, multi=True,
               accepts_none=True)


for _n in ("unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"):
    _unsafe_split_formula(_n)


@formula("block_diag")
def _block_diag(out, *tensors, **k):
    # torch's block_diag_backward: each input's block of the gradient
    if not _is_diff(out):
        return
    shapes = [tuple(t.shape) if _T(t) else () for t in tensors]
    real = [_T(t) and not t.is_complex() for t in tensors]

    def bw(g):
        res, r, c = [], 0, 0
        for shape, re in zip(shapes, real):
            rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape
            piece = g[r:r + rows, c:c + cols].reshape(shape)
            res.append(piece.real if re and piece.is_complex() else piece)
            r, c = r + rows, c + cols
        return tuple(res)
    attach("BlockDiagBackward0", out, tensors, bw)


node_class("DiagEmbedBackward0", saved=("dim1", "dim2", "offset"),
           scalars=("dim1", "dim2", "offset"))


@formula("diagflat")
def _diagflat(out, x, offset=0, **k):
    # torch's diagflat is diag_embed(x.contiguous().view(-1), offset): a
    # DiagEmbedBackward0 over a ViewBackward0
    if not _is_diff(out):
        return
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().view(-1)
    node = attach("DiagEmbedBackward0", out, (flat,), lambda g: (g.diagonal(offset),))
    if node is not None:
        node._sv = (_Plain(-2), _Plain(-1), _Plain(offset))


@formula("diagonal_scatter")
def _diagonal_scatter(out, x, src, offset=0, dim1=0, dim2=1, **k):
    def bw(g):
        return (P.diagonal_scatter(g, P.zeros_like(g.diagonal(offset, dim1, dim2)), offset, dim1, dim2),
                g.diagonal(offset, dim1, dim2))
    attach("DiagonalScatterBackward0", out, (x, src), bw)


@formula("select_scatter")
def _select_scatter(out, x, src, dim, index, **k):
    def bw(g):
        return (P.select_scatter(g, P.zeros_like(g.select(dim, index)), dim, index), g.select(dim, index))
    attach("SelectScatterBackward0", out, (x, src), bw)


@formula("slice_scatter")
def _slice_scatter(out, x, src, dim=0, start=None, end=None, step=1, **k):
    def sl(t):
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end, step)
        return t[tuple(idx)]

    def bw(g):
        return (P.slice_scatter(g, P.zeros_like(sl(g)), dim, start, end, step), sl(g))
    attach("SliceScatterBackward0", out, (x, src), bw)


def _grad_recording():
    """Whether the backward being run is itself recorded (``create_graph``) or
    traced (compile's capture of the backward): then the out-of-place ops."""
    return _rec_state.enabled or _active_tracer() is not None


@formula("index_select")
def _index_select(out, x, dim, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device)
        if _grad_recording():
            return (z.index_add(dim, si.unpack(), g),)
        return (z.index_add_(dim, si.unpack(), g),)     # (not recorded: no copy of the zeros)
    attach("IndexSelectBackward0", out, (x,), bw)


@formula("gather")
def _gather(out, x, dim, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        return (P.zeros(shape, dtype=g.dtype, device=g.device).scatter_add(dim, si.unpack(), g),)
    attach("GatherBackward0", out, (x,), bw)


@formula("take_along_dim")
def _take_along_dim(out, x, indices, dim=None, **k):
    shape = tuple(x.shape)
    si = save(indices)

    def bw(g):
        i = si.unpack()
        if dim is None:
            i = i.reshape(-1)
            z = P.zeros((x_numel,), dtype=g.dtype, device=g.device)
            return (z.scatter_add(0, i, g.reshape(-1)).reshape(shape),)
        d = dim % len(shape)
        # the forward broadcast input and indices against each other (but
        # along dim) and wrapped the indices modulo the size: scatter into the broadcast
        # input's shape, then sum over the broadcast dims (torch: gather of expand)
        ib = i.expand(*[g.shape[j] if j != d else i.shape[j] for j in range(len(shape))])
        if shape[d]:
            ib = ib.remainder(shape[d])      # the forward's wrap: torch's _maybe_wrap_indices
        bshape = [g.shape[j] if j != d else shape[d] for j in range(len(shape))]
        z = P.zeros(bshape, dtype=g.dtype, device=g.device).scatter_add(d, ib, g)
        return (z.sum_to_size(shape) if tuple(bshape) != shape else z,)
    x_numel = x.numel()
    # torch's take_along_dim is a composite: its result comes from gather
    attach("GatherBackward0", out, (x,), bw)


@formula("take")
def _take(out, x, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device).reshape(-1)
        i = si.unpack().reshape(-1)
        i = P.where(i < 0, i + z.shape[0], i)
        return (z.index_add(0, i, g.reshape(-1)).reshape(shape),)
    attach("TakeBackward0", out, (x,), bw)


@formula("scatter")
def _scatter(out, x, dim, index, src=None, *, value=None, reduce=None, **k):
    si = save(index)
    if reduce is not None:
        return _not_impl_attach(out, "scatter (with reduce)", (x, src))

    def bw(g):
        i = si.unpack()
        gx = g.scatter(dim, i, 0)
        return (gx, g.gather(dim, i)) if _T(src) else (gx,)
    # torch: scatter.src is ScatterBackward0, scatter.value (a number) ScatterBackward1,
    # whose one edge is self's
    if _T(src):
        attach("ScatterBackward0", out, (x, src), bw)
    else:
        attach("ScatterBackward1", out, (x,), bw)


@formula("scatter_add")
def _scatter_add(out, x, dim, index, src, **k):
    si = save(index)
    attach("ScatterAddBackward0", out, (x, src), lambda g: (g, g.gather(dim, si.unpack())))


@formula("index_add")
def _index_add(out, x, dim, index, source, *, alpha=1, **k):
    si = save(index)

    def bw(g):
        gs = g.index_select(dim, si.unpack())
        if alpha != 1:
            gs = gs * alpha
        if _T(source) and source.dim() == 0:
            gs = gs.reshape(())
        return g, gs
    attach("IndexAddBackward0", out, (x, source), bw)


@formula("index_copy")
def _index_copy(out, x, dim, index, source, **k):
    si = save(index)

    def bw(g):
        i = si.unpack()
        return g.index_fill(dim, i, 0), g.index_select(dim, i)
    attach("IndexCopyBackward0", out, (x, source), bw)


@formula("index_fill")
def _index_fill(out, x, dim, index, value, **k):
    si = save(index)

    def bw(g):
        i = si.unpack()
        # each filled slice counts once however often the index repeats it
        gv = g.index_select(dim, i.unique()).sum() if _T(value) else None
        return g.index_fill(dim, i, 0), gv
    attach("IndexFillBackward0", out, (x, value), bw)


@formula("masked_fill")
def _masked_fill(out, x, mask, value, **k):
    sm = save(mask)

    def bw(g):
        m = sm.unpack()
        gv = P.where(m, g, 0).sum() if _T(value) else None
        return g.masked_fill(m, 0), None, gv
    # (torch's overloads: a tensor value is MaskedFillBackward1)
    _attach_kept("MaskedFillBackward1" if _T(value) else "MaskedFillBackward0", out,
                 (x, mask, value), (0, 2) if _T(value) else (0,), bw)


@formula("masked_select")
def _masked_select(out, x, mask, **k):
    sm = save(mask)
    shape = tuple(x.shape)

    def bw(g):
        m = sm.unpack()
        bshape = P.broadcast_shapes(shape, tuple(m.shape))
        z = P.zeros(bshape, dtype=g.dtype, device=g.device)
        return (z.masked_scatter(m.expand(bshape), g), None)
    attach("MaskedSelectBackward0", out, (x, mask), bw)


@formula("masked_scatter")
def _masked_scatter(out, x, mask, source, **k):
    sm = save(mask)
    sshape = tuple(source.shape)

    def bw(g):
        m = sm.unpack().expand(g.shape)
        sel = g.masked_select(m)
        n = 1
        for s in sshape:
            n *= s
        gs = P.cat([sel, P.zeros(n - sel.numel(), dtype=g.dtype, device=g.device)]).reshape(sshape)
        return g.masked_fill(m, 0), None, gs
    attach("MaskedScatterBackward0", out, (x, mask, source), bw)


@formula("put")
def _put(out, x, index, source, accumulate=False, **k):
    shape, sshape = tuple(x.shape), tuple(source.shape)
    si = save(index)

    def bw(g):
        flat = g.reshape(-1)
        i = si.unpack().reshape(-1)
        i = P.where(i < 0, i + flat.shape[0], i)
        gx = g if accumulate else P.index_put(flat, (i,), P.zeros((), dtype=g.dtype,
                                                                  device=g.device)).reshape(shape)
        return gx, flat[i].reshape(sshape)
    attach("PutBackward0", out, (x, source), bw)


@formula("index_put")
def _index_put(out, x, indices, values, accumulate=False, **k):
    idx = list(indices)

    def bw(g):
        gx = g if accumulate else P.index_put(g, idx, P.zeros((), dtype=g.dtype, device=g.device))
        gv = g[tuple(idx)]
        return gx, gv
    attach("IndexPutBackward0", out, (x, values), bw)


node_class("PdistBackward0", saved=("self", "p", "result"), scalars=("p",))
_PDIST_BACKWARD_NOT_IMPLEMENTED = not_implemented("_pdist_backward")


def _pdist_grad(g, x, r, p, i, j):
    """torch's _pdist_backward kernel: the gradient of the rows ``x`` from
    that of their distances ``r`` (pairs ``i[k] < j[k]``)."""
    gd = _pair_dist_grad(x[i] - x[j], r.unsqueeze(1), g.unsqueeze(1), p)
    return P.zeros_like(x).index_add(0, i, gd).index_add(0, j, -gd)


def _pair_dist_grad(diff, d, gk, p):
    """The gradient of ``diff`` (pairs' coordinate differences) from ``gk``,
    that of their ``p``-distances ``d`` (both with a trailing dim of 1), as
    torch's pdist/cdist backward kernels: for p = inf each coordinate where
    |diff| reaches the distance takes the whole gradient; p < 1 gives 0 where
    a difference is 0, any p 0 at a zero distance."""
    if p == 0:
        gd = P.zeros_like(diff)
    elif p == 1:
        gd = diff.sign() * gk
    elif p == math.inf:
        gd = diff.sign() * (diff.abs() == d) * gk
    elif p == 2:
        gd = P.where(d == 0, 0., gk * diff / d)
    elif p < 2:
        zero = (d == 0) | (diff == 0) if p < 1 else (d == 0).expand_as(diff)
        gd = P.where(zero, 0., diff.sign() * diff.abs() ** (p - 1) * gk / d ** (p - 1))
    else:
        gd = P.where(d == 0, 0., diff * diff.abs() ** (p - 2) * gk / d ** (p - 1))
    return gd


def pdist_node(out, x, p, i, j):
    """Record ``out = pdist(x, p)`` (the pairs ``i``, ``j``) as torch's
    PdistBackward0, whose gradient is not differentiable again (torch:
    "the derivative for '_pdist_backward' is not implemented")."""
    sx, so = save(x), save_out(out)

    def bw(g):
        x_, r = sx.unpack(), so.unpack()
        with P.no_grad():
            gx = _pdist_grad(g, x_, r, p, i, j)
        if P.is_grad_enabled():
            _PDIST_BACKWARD_NOT_IMPLEMENTED(gx, g, x_, r)
        return (gx,)
    node = attach("PdistBackward0", out, (x,), bw)
    if node is not None:
        node._sv = (sx, _Plain(float(p)), so)
    return out


node_class("CdistBackward0", saved=("p", "result", "x1", "x2"), scalars=("p",))
_CDIST_BACKWARD_NOT_IMPLEMENTED = not_implemented("_cdist_backward")


def cdist_node(out, x1, x2, a, b, p):
    """Record ``out = cdist(x1, x2, p)`` (``a``, ``b``: x1 and x2 broadcast
    to the batch) as torch's CdistBackward0 with its _cdist_backward kernel
    (the gradient in the broadcast shape; not differentiable again)."""
    sa, sb, so = save(a), save(b), save_out(out)

    def bw(g):
        a_, b_, r = sa.unpack(), sb.unpack(), so.unpack()
        with P.no_grad():
            gd = _pair_dist_grad(a_.unsqueeze(-2) - b_.unsqueeze(-3), r.unsqueeze(-1),
                                 g.unsqueeze(-1), p)
            ga, gb = gd.sum(-2), -gd.sum(-3)
        if P.is_grad_enabled():
            for t in (ga, gb):
                _CDIST_BACKWARD_NOT_IMPLEMENTED(t, g, a_, b_, r)
        return ga, gb
    node = attach("CdistBackward0", out, (x1, x2), bw)
    if node is not None:
        node._sv = (_Plain(float(p)), so, sa, sb)
    return out


def _not_impl_attach(out, name, ins):
    def bw(*g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    attach(_bname(name.split(" ")[0]), out, ins, bw)


def getitem(out, x, idx):
    shape = tuple(x.shape)
    if not _is_diff(out):
        return

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device)
        return (_index_backward(z, idx, g),)
    attach("IndexBackward0", out, (x,), bw)


def _index_backward(z, idx, g):
    """z[idx] += g with duplicate indices accumulated (differentiable)."""
    if g._requires_grad or hasattr(g, "_bt_phys") or _active_tracer() is not None:
        # create_graph (or a gradient batched by vmap, or a tracer recording the
        # formula: compile's captured backward would not see the kernels below
        # write into z, and would keep its zeros): express through the
        # differentiable index_add on a flat index map
        n = z.numel()
        pos = P.arange(n, device=z.device).reshape(z.shape)[idx]
        return P.zeros(n, dtype=g.dtype, device=g.device).index_add(0, pos.reshape(-1), g.reshape(-1)).reshape(z.shape)
    if isinstance(idx, _TensorBase) and I.accumulate_rows(z, idx, g):
        return z        # one int64 index tensor (x[idx]): no index planning
    result, recorded = I._apply_slicing(z, I._items_of(idx))
    if not recorded:
        result.add_(g)
        return z
    I._index_put_impl(result, recorded, g, True)
    return z


@formula("narrow_copy")
def _narrow_copy(out, x, dim, start, length, **k):
    shape = tuple(x.shape)

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device)
        return (P.slice_scatter(z, g, dim, start, start + length),)
    attach("NarrowCopyBackward0", out, (x,), bw)


@formula("constant_pad_nd")
def _constant_pad_nd(out, x, pad, value=0, **k):
    # (the third positional argument is the fill value, not a mode)
    return _pad(out, x, pad, **k)


@formula("pad")
def _pad(out, x, pad, mode="constant", value=None, **k):
    if mode != "constant":
        return _not_impl_attach(out, f"pad (mode={mode})", (x,))
    shape = tuple(x.shape)
    pad = list(pad)

    def bw(g):
        idx = [slice(None)] * len(shape)
        for i in range(len(pad) // 2):
            d = len(shape) - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            n = g.shape[d]
            idx[d] = slice(max(lo, 0), n - max(hi, 0))
        gg = g[tuple(idx)]
        # negative padding cropped the input: put the gradient back in place
        if any(p < 0 for p in pad):
            z = P.zeros(shape, dtype=g.dtype, device=g.device)
            idx2 = [slice(None)] * len(shape)
            for i in range(len(pad) // 2):
                d = len(shape) - 1 - i
                lo, hi = pad[2 * i], pad[2 * i + 1]
                idx2[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
            z[tuple(idx2)] = gg
            return (z,)
        return (gg,)
    attach("ConstantPadNdBackward0", out, (x,), bw)
