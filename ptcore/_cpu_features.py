"""The vector extension torch's CPU kernels run with, as torch names it: a core
helper for the kernels that follow torch's vector widths; ``ptcore.backends.cpu``
publishes it as ``get_cpu_capability``."""

import os
import warnings

__all__ = ["get_cpu_capability", "detect_cpu_capability"]

_ENV = {"default": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}
_CHOSEN = []            # the capability in effect, found once per process (as torch)


def get_cpu_capability():
    """The capability torch's kernels run with in this process ("AVX512", "AVX2",
    "DEFAULT"): ``ATEN_CPU_CAPABILITY`` where set to one of torch's lowercase
    names (as torch, not checked against the CPU; another value is ignored with
    torch's warning), else :func:`detect_cpu_capability`."""
    if not _CHOSEN:
        env = os.environ.get("ATEN_CPU_CAPABILITY")
        if env is not None and env not in _ENV:
            warnings.warn(f"ignoring invalid value for ATEN_CPU_CAPABILITY: {env}",
                          UserWarning, stacklevel=2)
        _CHOSEN.append(_ENV.get(env) or detect_cpu_capability())
    return _CHOSEN[0]


def detect_cpu_capability():
    """The widest x86 vector extension the CPU has as torch's cpuinfo check counts
    it ("AVX512": AVX-512 F/BW/VL/DQ and FMA; "AVX2": AVX2 and FMA; else
    "DEFAULT"), read from /proc/cpuinfo; "DEFAULT" where unknown (as torch off
    x86)."""
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "DEFAULT"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
            else:
                return "DEFAULT"
    except OSError:
        return "DEFAULT"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"
