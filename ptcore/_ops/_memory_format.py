"""Memory formats of dense tensors as torch decides them: the format a
tensor's strides suggest (its ``suggest_memory_format``), the format an op
of several inputs gives its output (convolution, pooling, batch norm,
resampling, ``cat``), and a result laid out in a given format."""
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = ["_suggest_memory_format", "_output_memory_format", "_in_memory_format"]


def _suggest_memory_format(t):
    """torch's suggest_memory_format: channels_last(_3d) when the strides look
    like it (its is_channels_last_strides_2d/3d, NCHW for ambiguous cases)."""
    nd = t.dim()
    if nd not in (4, 5):
        return _C.contiguous_format
    sizes, strides = t.shape, t.stride()
    if strides[1] == 0:
        return _C.contiguous_format
    lo = 0
    for d in ((1, 3, 2, 0) if nd == 4 else (1, 4, 3, 2, 0)):
        if sizes[d] == 0 or strides[d] < lo or (d == 0 and lo == strides[1]):
            return _C.contiguous_format
        lo = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return _C.channels_last if nd == 4 else _C.channels_last_3d


def _output_memory_format(*tensors):
    """The memory format torch gives the output of a convolution, pooling,
    batch norm or resampling of ``tensors``: channels_last(_3d) when one of
    them (the input, or a convolution's weight) suggests it."""
    for t in tensors:
        if isinstance(t, _TensorBase):
            fmt = _suggest_memory_format(t)
            if fmt is not _C.contiguous_format:
                return fmt
    return _C.contiguous_format


def _in_memory_format(out, fmt):
    """``out`` with the dense strides of ``fmt`` (itself when it has them or
    ``fmt`` does not fit its rank)."""
    nd = out.dim()
    if fmt is _C.contiguous_format or nd != (4 if fmt is _C.channels_last else 5):
        return out
    if not out.is_contiguous(memory_format=fmt):
        return out.contiguous(memory_format=fmt)
    # dense in fmt already: the strides of size-1 dims made torch's (a view)
    strides, step = [0] * nd, 1
    for d in (1,) + tuple(range(nd - 1, 1, -1)) + (0,):
        strides[d] = step
        step *= out.shape[d]
    strides = tuple(strides)
    return out if out.stride() == strides else out.as_strided(tuple(out.shape), strides)
