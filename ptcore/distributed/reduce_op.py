"""``ReduceOp``: the reductions the collectives support (``torch.distributed.ReduceOp``)."""
import enum


class _TorchEnum:
    """``repr``/``str`` of an ``IntEnum`` as torch's (pybind11) enums print:
    ``<Name.MEMBER: value>`` and ``Name.MEMBER``, also inside f-strings."""

    def __repr__(self):
        return f"<{self._torch_name()}.{self.name}: {self.value}>"

    def __str__(self):
        return f"{self._torch_name()}.{self.name}"

    __format__ = object.__format__

    @classmethod
    def _torch_name(cls):
        return cls.__name__


class ReduceOp(_TorchEnum, enum.IntEnum):
    """Element-wise reduction applied by ``all_reduce``, ``reduce`` and ``reduce_scatter``.

    ``AVG`` sums and divides by the group size (floating tensors; integer tensors
    divide with truncation, as NCCL's average does). The members, their order and
    values are torch's (``ReduceOp.RedOpType``), so a value compares equal to the
    integer torch gives it. ``PREMUL_SUM`` (NCCL only in torch) is listed but no
    collective accepts it.
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    @classmethod
    def _torch_name(cls):
        return "RedOpType"


ReduceOp.RedOpType = ReduceOp


_TABLES = {}


def _mpi_op(MPI, op, is_bool):
    """The MPI reduction for ``op`` (``AVG`` reduces with ``SUM``)."""
    tables = _TABLES.get(MPI)
    if tables is None:
        # torch reduces bool tensors logically: SUM/MAX/BOR are OR, PRODUCT/MIN/BAND are AND
        tables = _TABLES[MPI] = (
            {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN,
             "MAX": MPI.MAX, "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR},
            {"SUM": MPI.LOR, "MAX": MPI.LOR, "BOR": MPI.LOR, "PRODUCT": MPI.LAND,
             "MIN": MPI.LAND, "BAND": MPI.LAND, "BXOR": MPI.LXOR})
    if type(op) is not ReduceOp:
        raise TypeError(f"op must be a ptcore.distributed.ReduceOp, got {type(op).__name__}")
    if op is ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is supported only by NCCL in torch; "
                         "ptcore's MPI collectives do not take it")
    mop = tables[1 if is_bool else 0].get(op._name_)
    if mop is None:
        raise ValueError(f"ReduceOp.{op.name} is not supported for bool tensors")
    return mop
