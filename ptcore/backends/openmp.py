"""``ptcore.backends.openmp``."""


def is_available():
    """Whether ptcore's kernels were built with OpenMP."""
    from ptcore._ops import _parallel
    return bool(_parallel._have_openmp())
