"""``ReduceOp``: the reductions the collectives support (``torch.distributed.ReduceOp``)."""
import enum


class ReduceOp(enum.Enum):
    """Element-wise reduction applied by ``all_reduce``, ``reduce`` and ``reduce_scatter``.

    ``AVG`` sums and divides by the group size (floating tensors; integer tensors
    divide with truncation, as NCCL's average does).
    """

    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    AVG = 7

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"


def _mpi_op(MPI, op, is_bool):
    """The MPI reduction for ``op`` (``AVG`` reduces with ``SUM``)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a ptcore.distributed.ReduceOp, got {type(op).__name__}")
    if is_bool:
        # torch reduces bool tensors logically: SUM/MAX/BOR are OR, PRODUCT/MIN/BAND are AND
        table = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                 ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                 ReduceOp.BXOR: MPI.LXOR}
        if op not in table:
            raise ValueError(f"ReduceOp.{op.name} is not supported for bool tensors")
        return table[op]
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]
