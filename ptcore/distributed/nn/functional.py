"""``torch.distributed.nn.functional``: the collectives of :mod:`ptcore.distributed` as
autograd functions.  Each works on copies (the plain collectives write in place) and returns
new tensors, and its backward is the adjoint collective: ``all_reduce``'s gradient is the
``all_reduce`` of the incoming gradients, ``broadcast``'s a ``reduce`` to the source (zero on
the other ranks), ``all_gather``'s the sum over ranks of each rank's slice (an ``all_to_all``
then a sum), ``scatter``'s a ``gather`` and back.  A contrastive loss over the embeddings of
every rank (sentence-transformers' cached losses, CLIP-style training, vector-quantize's
entropy terms) differentiates through them as with torch."""
import warnings

from ptcore.autograd.function import Function
from ptcore.distributed import collectives as C
from ptcore.distributed.process_group import get_rank, get_world_size, group
from ptcore.distributed.reduce_op import ReduceOp


def _deprecated(name, suggestion):
    # torch deprecates five of these in favour of its functional collectives
    warnings.warn(f"ptcore.distributed.nn.functional.{name} is deprecated, use "
                  f"ptcore.distributed._functional_collectives.{suggestion} instead.",
                  FutureWarning, stacklevel=3)


def _rank(grp):
    return get_rank(group=grp)


def _size(grp):
    return get_world_size(group=grp)


def broadcast(tensor, src, group=group.WORLD):
    """A copy of rank ``src``'s ``tensor`` on every rank; the gradient flows back to ``src``
    (summed over ranks)."""
    _deprecated("broadcast", "broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """Every rank's ``tensor``, as a tuple on rank ``dst`` (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """Rank ``src``'s ``tensors[i]`` on rank ``i`` (all of one shape)."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's ``tensor`` on rank ``dst``."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """Rank ``i`` gets the reduction over ranks of their ``input_list[i]`` (in ``output``)."""
    _deprecated("reduce_scatter", "reduce_scatter_single")
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """A tuple of every rank's ``tensor``, on every rank."""
    _deprecated("all_gather", "all_gather_single")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """Rank ``j`` gets rank ``i``'s ``input_tensor_list[j]`` as its ``output_tensor_list[i]``."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=group.WORLD):
    """:func:`ptcore.distributed.all_to_all_single` with a gradient (the reverse exchange)."""
    _deprecated("all_to_all_single", "all_to_all_single")
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's ``tensor``, on every rank, as a new tensor; its
    gradient is the sum of every rank's incoming gradient (for ``SUM``)."""
    _deprecated("all_reduce", "all_reduce")
    return _AllReduce.apply(op, group, tensor)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, grp, tensor):
        ctx.src, ctx.group = src, grp
        out = tensor.clone()
        C.broadcast(out, src, group=grp)
        return out

    @staticmethod
    def backward(ctx, grad):
        g = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if _rank(ctx.group) != ctx.src:
            g = g * 0
        return None, None, g


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, grp, tensor):
        ctx.dst, ctx.group = dst, grp
        outs = [tensor.new_zeros(tensor.shape) for _ in range(_size(grp))]
        C.gather(tensor.contiguous(), outs if _rank(grp) == dst else None, dst, group=grp)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, _Scatter.apply(ctx.dst, ctx.group, *grads))


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, grp, *tensors):
        ctx.src, ctx.group = src, grp
        if any(t.shape != tensors[0].shape for t in tensors):
            raise ValueError("scatter: the tensors must all have one shape, got "
                             f"{[tuple(t.shape) for t in tensors]}")
        out = tensors[0].new_zeros(tensors[0].shape)
        C.scatter(out, [t.contiguous() for t in tensors] if _rank(grp) == src else None, src,
                  group=grp)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, grp, tensor):
        ctx.dst, ctx.group = dst, grp
        out = tensor.clone()
        C.reduce(out, dst, op=op, group=grp)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, grp, output, *inputs):
        ctx.group = grp
        output = output.contiguous()
        C.reduce_scatter(output, [t.contiguous() for t in inputs], op=op, group=grp)
        return output

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, grp, tensor):
        ctx.group = grp
        tensor = tensor.contiguous()
        outs = [tensor.new_empty(tensor.shape) for _ in range(_size(grp))]
        C.all_gather(outs, tensor, group=grp)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        # rank r's gradient is the sum over ranks of their gradient's slice r
        parts = _AllToAll.apply(ctx.group, [g.new_empty(g.shape) for g in grads], *grads)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return None, total


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, grp, outs, *tensors):
        ctx.group = grp
        ctx.shapes = [t.shape for t in tensors]
        C.all_to_all(list(outs), [t.contiguous() for t in tensors], group=grp)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        outs = [grads[0].new_empty(s) for s in ctx.shapes]
        return (None, None) + _AllToAll.apply(ctx.group, outs, *grads)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, grp, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.shape = grp, input.shape
        ctx.splits = (input_split_sizes, output_split_sizes)   # the reverse exchange's
        C.all_to_all_single(output, input, output_split_sizes=output_split_sizes,
                            input_split_sizes=input_split_sizes, group=grp)
        return output

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_empty(ctx.shape)
        back = _AllToAllSingle.apply(ctx.group, out, *ctx.splits, grad.contiguous())
        return None, None, None, None, back


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, grp, tensor):
        ctx.op, ctx.group = op, grp
        out = tensor.clone()
        C.all_reduce(out, op=op, group=grp)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"all_reduce: no gradient for the reduction {ctx.op} "
                               "(only SUM and AVG)")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)
