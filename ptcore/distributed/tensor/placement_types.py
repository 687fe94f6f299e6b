"""How a :class:`~ptcore.distributed.tensor.DTensor` lies on each dimension of its device mesh
(``torch.distributed.tensor.placement_types``): :class:`Shard`, :class:`Replicate`,
:class:`Partial`, and the base class :class:`Placement`.

Placements are small immutable values: equal when they place the same way, hashable, and
printed as torch prints them (``Shard(dim=0)``, ``Replicate()``, ``Partial(sum)``; ``str`` gives
the short forms ``S(0)``, ``R``, ``P(sum)``).
"""
__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """The base class of the placement types."""

    __slots__ = ()

    def is_shard(self, dim=None):
        """Whether this is a :class:`Shard` (of tensor dimension ``dim`` when given)."""
        return False

    def is_replicate(self):
        """Whether this is :class:`Replicate`."""
        return False

    def is_partial(self, reduce_op=None):
        """Whether this is :class:`Partial` (with ``reduce_op`` when given)."""
        return False


class Shard(Placement):
    """The tensor is split along its dimension ``dim`` over the mesh dimension, in
    ``torch.chunk``'s pieces (the last ranks may hold fewer rows, or none)."""

    __slots__ = ("dim",)

    def __init__(self, dim=0):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"Shard: dim must be an int, got {type(dim).__name__}")
        object.__setattr__(self, "dim", dim)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """The size and offset (within ``curr_local_size`` elements) of chunk ``rank`` of
        ``num_chunks``, as ``torch.chunk`` cuts them."""
        if curr_local_size % num_chunks == 0:
            size = curr_local_size // num_chunks
            return size, size * rank
        full = (curr_local_size + num_chunks - 1) // num_chunks
        start = full * rank
        end = min(curr_local_size, start + full)
        return max(0, end - start), min(curr_local_size, start)

    def _local_shard_size_and_offset(self, curr_local_size, num_chunks, rank):
        return Shard.local_shard_size_and_offset(curr_local_size, num_chunks, rank)

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self):
        return hash((type(self).__name__, self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"

    def __reduce__(self):
        return (Shard, (self.dim,))


class _StridedShard(Placement):
    """A shard of a dimension already split ``split_factor`` ways by an earlier mesh dimension
    (torch's FSDP2 + tensor-parallel layout; as in torch, not a :class:`Shard`).  ptcore names
    it; its layout is not implemented
    (:func:`~ptcore.distributed.tensor._utils.compute_local_shape_and_global_offset` refuses
    it)."""

    __slots__ = ("dim", "split_factor")

    def __init__(self, dim=0, *, split_factor):
        object.__setattr__(self, "dim", int(dim))
        object.__setattr__(self, "split_factor", int(split_factor))

    def __setattr__(self, name, value):
        raise AttributeError("_StridedShard is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim and \
            other.split_factor == self.split_factor

    def __hash__(self):
        return hash((type(self).__name__, self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"

    def __reduce__(self):
        return (_make_strided_shard, (self.dim, self.split_factor))


def _make_strided_shard(dim, split_factor):
    return _StridedShard(dim, split_factor=split_factor)


class Replicate(Placement):
    """Every rank along the mesh dimension holds the whole tensor."""

    __slots__ = ()

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"

    def __reduce__(self):
        return (Replicate, ())


class Partial(Placement):
    """Every rank along the mesh dimension holds a partial value; the tensor is their
    reduction with ``reduce_op`` (``"sum"``, ``"avg"``, ``"max"``, ``"min"``...)."""

    __slots__ = ("reduce_op",)

    ALL_REDUCE_OPS = ("sum", "avg", "product", "min", "max", "band", "bor", "bxor")
    LINEAR_REDUCE_OPS = ("sum", "avg")

    def __init__(self, reduce_op="sum"):
        if not isinstance(reduce_op, str):
            raise TypeError(f"Partial: reduce_op must be a str, got {type(reduce_op).__name__}")
        object.__setattr__(self, "reduce_op", reduce_op)

    def __setattr__(self, name, value):
        raise AttributeError("Partial is immutable")

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"

    def __reduce__(self):
        return (Partial, (self.reduce_op,))
