"""``ptcore.from_file`` (``torch.from_file``): a 1-D tensor of ``size`` elements read from a
file's first bytes, or, with ``shared=True``, mapped onto the file so that writes to the
tensor reach the file."""
import os

import numpy as np

import ptcore
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel
from ptcore._ops.creation import _require_grad

__all__ = ["from_file"]


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """The first ``size`` elements of ``dtype`` (default dtype when None) stored in
    ``filename``; ``shared=True`` maps the file (changes are written back), else the bytes
    are copied."""
    dtype = ptcore.get_default_dtype() if dtype is None else dtype
    # a CPU kernel only, as torch's (another device: torch's NotImplementedError)
    read = _cpu_kernel("from_file", None if device is None else ptcore.device(device), _read)
    return read(filename, shared, size, dtype, requires_grad)


def _read(filename, shared, size, dtype, requires_grad):
    """The CPU kernel of ``from_file``."""
    size = int(size)
    if size < 0:
        raise RuntimeError(f"from_file: size must be non-negative, got {size}")
    if size == 0:                       # (torch does not open the file then)
        return ptcore.empty(0, dtype=dtype, requires_grad=requires_grad)
    filename = os.fspath(filename)
    nbytes = size * dtype.itemsize
    if shared:
        # the storage's mapping: opens read-write, creating or growing the file as torch
        st = ptcore.UntypedStorage.from_file(filename, True, nbytes)
        out = ptcore.empty(0, dtype=dtype).set_(st)
        if requires_grad:
            _require_grad(out)
        return out
    try:
        file_size = os.path.getsize(filename)
    except OSError as err:
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: "
                           f"{err.strerror} ({err.errno})") from None
    if file_size < nbytes:
        raise RuntimeError(f"file <{filename}> size <{file_size}> is smaller than the required "
                           f"mapping size <{nbytes}>")
    raw = np.fromfile(filename, dtype=np.uint8, count=nbytes)
    out = ptcore.from_numpy(raw).view(dtype)
    if requires_grad:
        _require_grad(out)
    return out
