"""Window functions (``torch.signal.windows``), SciPy-compatible."""
from ptcore.signal.windows.windows import (  # noqa: F401
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming,
    hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
