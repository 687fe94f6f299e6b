"""NumPy arrays placed against inaccessible pages, for tests that kernels
never read outside their operands (a read past either end faults)."""
import ctypes
import mmap

import numpy as np

PAGE = mmap.PAGESIZE


class Guarded:
    """NumPy arrays placed against PROT_NONE pages (kept alive by this object)."""

    def __init__(self):
        self.maps = []
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

    def place(self, arr, at_end):
        npages = (arr.nbytes + PAGE - 1) // PAGE + 2
        m = mmap.mmap(-1, npages * PAGE)
        self.maps.append(m)
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        assert self.libc.mprotect(base, PAGE, 0) == 0
        assert self.libc.mprotect(base + (npages - 1) * PAGE, PAGE, 0) == 0
        off = (npages - 1) * PAGE - arr.nbytes if at_end else PAGE
        out = np.frombuffer(m, dtype=np.uint8, count=arr.nbytes, offset=off)
        out = out.view(arr.dtype).reshape(arr.shape)
        out[...] = arr
        return out
