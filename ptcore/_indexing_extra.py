"""``nonzero_static`` (``nonzero`` padded or truncated to a fixed row count) and
``as_strided_scatter`` (a copy of the input with ``src`` written through an
``as_strided`` window), as ``torch.nonzero_static`` / ``torch.as_strided_scatter``."""
import operator

import ptcore

__all__ = ["nonzero_static", "as_strided_scatter"]


def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the nonzero elements as ``nonzero`` gives them, as exactly ``size``
    rows: extra rows are dropped, missing rows are filled with ``fill_value``."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size!r}")
    idx = ptcore.nonzero(input)
    n, nd = idx.shape[0], idx.shape[1]
    if n >= size:
        return idx[:size].contiguous()
    pad = ptcore.full((size - n, nd), fill_value, dtype=idx.dtype, device=idx.device)
    return ptcore.cat((idx, pad), dim=0)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` whose ``as_strided(size, stride, storage_offset)`` window holds
    ``src`` (differentiable in both)."""
    size = tuple(operator.index(s) for s in size)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    out = input.clone()
    window = out.as_strided(size, stride, storage_offset)
    window.copy_(src)
    return out


_TENSOR_METHODS = {"nonzero_static": nonzero_static, "as_strided_scatter": as_strided_scatter}
