"""``ptcore.__config__`` (``torch.__config__``): what this build of ptcore was
built with and how it runs in parallel, as text for environment reports."""
import os
import platform
import sysconfig

from ptcore import _build_info, _cpu_features

__all__ = ["show", "parallel_info"]


def show():
    """A description of this ptcore build: compiler, BLAS/LAPACK, CPU capability,
    and the optional backends (CUDA, MPI) it finds."""
    import numpy
    import scipy

    import ptcore
    lines = ["ptcore built with:",
             f"  - C compiler: {sysconfig.get_config_var('CC') or 'unknown'}",
             f"  - Python {platform.python_version()}, NumPy {numpy.__version__}, "
             f"SciPy {scipy.__version__}",
             "  - BLAS/LAPACK: SciPy's (scipy.linalg.cython_blas / cython_lapack), and "
             "ptcore's own float32 GEMM kernels",
             f"  - OpenMP: {'yes' if _build_info.has_openmp else 'no'}",
             f"  - CPU capability usage: {_cpu_features.get_cpu_capability()}",
             f"  - CUDA: {'cuda-bindings found' if ptcore.backends.cuda.is_built() else 'not built'}",
             f"  - Build settings: TORCH_API_VERSION={ptcore.__version__}, USE_MKL=OFF, "
             f"USE_MKLDNN=OFF, USE_CUDNN=OFF, USE_OPENMP={'ON' if _build_info.has_openmp else 'OFF'}",
             ""]
    return "\n".join(lines)


def parallel_info():
    """The intra- and inter-op thread counts and the environment variables that set them."""
    import ptcore
    lines = ["ATen/Parallel:",
             f"\tat::get_num_threads() : {ptcore.get_num_threads()}",
             f"\tat::get_num_interop_threads() : {ptcore.get_num_interop_threads()}",
             f"OpenMP: {'yes' if _build_info.has_openmp else 'no'}",
             f"std::thread::hardware_concurrency() : {os.cpu_count()}",
             "Environment variables:"]
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PTCORE_NUM_THREADS",
                "PTCORE_ADAPTIVE_THREADS"):
        lines.append(f"\t{var} : {os.environ.get(var, '[not set]')}")
    lines.append(f"ATen parallel backend: {'OpenMP' if _build_info.has_openmp else 'native'}")
    lines.append("")
    return "\n".join(lines)


def _cxx_flags():
    """The C compiler flags of the Python build ptcore's extensions were compiled for."""
    return sysconfig.get_config_var("CFLAGS") or ""
