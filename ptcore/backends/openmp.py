"""``ptcore.backends.openmp``."""
from ptcore._ops.kernels import _parallel


def is_available():
    """Whether ptcore's kernels were built with OpenMP."""
    return bool(_parallel._have_openmp())
