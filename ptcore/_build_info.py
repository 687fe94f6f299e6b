"""What this ptcore build has (torch's root ``has_openmp``, ``has_mkl``, ``has_lapack``,
``has_spectral``, ``is_vulkan_available()``), ``init_num_threads()`` and
``is_distributed()``."""
from ptcore._ops.kernels import _parallel
from ptcore.tensor import Tensor

__all__ = ["has_lapack", "has_mkl", "has_openmp", "has_spectral", "init_num_threads",
           "is_distributed", "is_vulkan_available"]

has_openmp = bool(_parallel._have_openmp())
has_mkl = False            # ptcore's BLAS/LAPACK come from SciPy's OpenBLAS, not MKL
has_lapack = True          # linear algebra through SciPy's LAPACK
has_spectral = True        # ptcore.fft


def init_num_threads():
    """Initialize the calling thread's intra-op thread settings: ptcore's thread pool
    needs no per-thread initialization, so this does nothing (as torch's on most builds)."""


def is_vulkan_available():
    """False: ptcore has no Vulkan backend."""
    return False


def is_distributed(input):
    """False for every tensor (torch's legacy query; no tensor is distributed)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False
