"""Thread-count helper shared by the kernel tests (resampling, ctc_loss):
results at several thread counts are compared bit for bit."""
import contextlib

import ptcore
from ptcore._ops.kernels import _parallel


@contextlib.contextmanager
def kernel_threads(n, grain=16):
    """ptcore's kernels at ``n`` threads, with a parallel grain small enough
    that test-sized inputs are split among them; restores both after."""
    threads, old_grain = ptcore.get_num_threads(), _parallel._get_parallel_grain()
    try:
        _parallel._set_parallel_grain(grain)
        ptcore.set_num_threads(n)
        yield
    finally:
        ptcore.set_num_threads(threads)
        _parallel._set_parallel_grain(old_grain)
