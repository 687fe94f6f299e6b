"""``ptcore.backends.cpu``."""
from ptcore._cpu_features import get_cpu_capability

__all__ = ["get_cpu_capability"]
