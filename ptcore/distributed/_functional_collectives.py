"""Functional collectives (``torch.distributed._functional_collectives``): each returns a new
tensor instead of writing into its argument.

``group`` is a :class:`ProcessGroup`, a one-dimensional :class:`DeviceMesh`, or a
``(mesh, mesh_dim)`` pair.  ptcore's collectives complete before they return, so
:func:`wait_tensor` returns its argument.  The ``*_autograd`` variants are differentiable
(the backward of an all-to-all is the all-to-all with the split sizes swapped, of an
all-gather a reduce-scatter, and the other way round).
"""
import ptcore
from ptcore.autograd.function import Function
from ptcore.distributed import collectives
from ptcore.distributed.device_mesh import DeviceMesh
from ptcore.distributed.process_group import ProcessGroup, get_world_size
from ptcore.distributed.reduce_op import ReduceOp

__all__ = ["all_gather_tensor", "all_gather_tensor_autograd", "all_reduce",
           "all_to_all_single", "all_to_all_single_autograd", "broadcast",
           "reduce_scatter_tensor", "reduce_scatter_tensor_autograd", "wait_tensor"]


def _resolve_group(group, fn):
    if group is None or isinstance(group, ProcessGroup):
        return group
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(f"{fn}: a DeviceMesh group must be one-dimensional, got "
                             f"{group.ndim} dimensions; pass (mesh, mesh_dim)")
        return group.get_group()
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    raise NotImplementedError(
        f"{fn}: group {group!r} is not supported by ptcore (rank lists and group names would "
        "need a group made on the fly); pass a ProcessGroup or a DeviceMesh")


def _reduce_op(name, fn):
    try:
        return ReduceOp[str(name).upper()]
    except KeyError:
        raise ValueError(f"{fn}: unknown reduce op {name!r}") from None


def wait_tensor(tensor):
    """Wait for the collective that produced ``tensor``: ptcore's are complete already."""
    return tensor


def all_reduce(self, reduceOp, group, tag=""):
    """The reduction of ``self`` over the ranks of ``group`` (a new tensor)."""
    out = self.detach().clone()
    collectives.all_reduce(out, op=_reduce_op(reduceOp, "all_reduce"),
                           group=_resolve_group(group, "all_reduce"))
    return out


def broadcast(self, src, group, tag=""):
    """Rank ``src``'s ``self`` on every rank of ``group`` (a new tensor)."""
    out = self.detach().clone()
    collectives.broadcast(out, src=src, group=_resolve_group(group, "broadcast"))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    """Every rank's ``self`` concatenated along ``gather_dim`` in rank order."""
    pg = _resolve_group(group, "all_gather_tensor")
    n = get_world_size(pg)
    src = self.detach().contiguous()
    out = ptcore.empty((n * src.shape[0],) + tuple(src.shape[1:]) if src.dim() else (n,),
                       dtype=src.dtype, device=src.device)
    collectives.all_gather_into_tensor(out, src, group=pg)
    if gather_dim != 0 and src.dim():
        out = ptcore.cat(ptcore.chunk(out, n, dim=0), dim=gather_dim)
    return out


def reduce_scatter_tensor(self, reduceOp, scatter_dim, group, tag=""):
    """The reduction of ``self`` over the ranks, split along ``scatter_dim``: rank ``i`` gets
    piece ``i``."""
    pg = _resolve_group(group, "reduce_scatter_tensor")
    n = get_world_size(pg)
    if self.shape[scatter_dim] % n:
        raise ValueError(f"reduce_scatter_tensor: dimension {scatter_dim} of size "
                         f"{self.shape[scatter_dim]} does not split into {n} equal pieces")
    src = self.detach()
    if scatter_dim != 0:
        # piece i along scatter_dim becomes block i of dim 0: what rank i receives is its piece
        src = ptcore.cat(ptcore.chunk(src, n, dim=scatter_dim), dim=0)
    src = src.contiguous()
    out = ptcore.empty((src.shape[0] // n,) + tuple(src.shape[1:]), dtype=src.dtype,
                       device=src.device)
    collectives.reduce_scatter_tensor(out, src, op=_reduce_op(reduceOp, "reduce_scatter_tensor"),
                                      group=pg)
    return out


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """Rows of ``self`` (dim 0) split by ``input_split_sizes`` and sent to the ranks in order;
    the rows received, by ``output_split_sizes``, concatenated in rank order."""
    pg = _resolve_group(group, "all_to_all_single")
    src = self.detach().contiguous()
    rows = sum(output_split_sizes) if output_split_sizes is not None else src.shape[0]
    out = ptcore.empty((rows,) + tuple(src.shape[1:]), dtype=src.dtype, device=src.device)
    collectives.all_to_all_single(out, src, output_split_sizes, input_split_sizes, group=pg)
    return out


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, group):
        ctx.splits = (output_split_sizes, input_split_sizes)
        ctx.group = group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, grad):
        output_split_sizes, input_split_sizes = ctx.splits
        return (all_to_all_single(grad.contiguous(), input_split_sizes, output_split_sizes,
                                  ctx.group), None, None, None)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, x, gather_dim, group):
        ctx.args = (gather_dim, group)
        return all_gather_tensor(x, gather_dim, group)

    @staticmethod
    def backward(ctx, grad):
        gather_dim, group = ctx.args
        return reduce_scatter_tensor(grad.contiguous(), "sum", gather_dim, group), None, None


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, x, reduce_op, scatter_dim, group):
        if str(reduce_op).lower() != "sum":
            raise NotImplementedError(f"reduce_scatter_tensor_autograd: only 'sum' has a "
                                      f"gradient, got {reduce_op!r}")
        ctx.args = (scatter_dim, group)
        return reduce_scatter_tensor(x, reduce_op, scatter_dim, group)

    @staticmethod
    def backward(ctx, grad):
        scatter_dim, group = ctx.args
        return all_gather_tensor(grad.contiguous(), scatter_dim, group), None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    """:func:`all_to_all_single`, differentiable."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes,
                                 _resolve_group(group, "all_to_all_single_autograd"))


def all_gather_tensor_autograd(self, gather_dim, group, tag=""):
    """:func:`all_gather_tensor`, differentiable."""
    return _AllGather.apply(self, gather_dim, _resolve_group(group, "all_gather_tensor_autograd"))


def reduce_scatter_tensor_autograd(self, reduceOp, scatter_dim, group, tag=""):
    """:func:`reduce_scatter_tensor` with ``"sum"``, differentiable."""
    return _ReduceScatter.apply(self, reduceOp, scatter_dim,
                                _resolve_group(group, "reduce_scatter_tensor_autograd"))
