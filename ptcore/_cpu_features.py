"""The CPU's widest vector extension as torch names it (read from /proc/cpuinfo): a
core helper for the kernels that follow torch's vector widths; ``ptcore.backends.cpu``
publishes it as ``get_cpu_capability``."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The widest x86 vector extension the CPU has ("AVX512", "AVX2", "DEFAULT"),
    read from /proc/cpuinfo; "DEFAULT" where unknown (as torch off x86)."""
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
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "DEFAULT"
