"""``torch.utils.cpp_extension``'s names, for code that imports them: ptcore has no C++ API
(no ATen, no libtorch to link), so a C++ or CUDA source cannot be built against it.

Libraries import this module to *try* a compiled fast path (PEFT's BOFT loads a CUDA kernel
and falls back to PyTorch ops when ``load`` raises) or read ``CUDA_HOME`` to decide whether
they can build one.  Here the module imports, the environment queries answer (``CUDA_HOME`` is
None: no toolkit is used to build against ptcore), and building a C++/CUDA extension raises
:class:`RuntimeError` saying so.  A Cython source (``.pyx``, with ``.c`` files) given to
:func:`load` is built by :func:`ptcore.utils.cython_extension.load`, ptcore's counterpart.
"""
import os
import subprocess
import sys
from pathlib import Path

from ptcore import _config
from ptcore.utils import cython_extension

__all__ = ["BuildExtension", "CppExtension", "CUDAExtension", "CUDA_HOME", "ROCM_HOME",
           "include_paths", "library_paths", "get_default_build_root", "is_ninja_available",
           "verify_ninja_availability", "load", "load_inline"]

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform.startswith("darwin")
IS_LINUX = sys.platform.startswith("linux")
IS_HIP_EXTENSION = False
# no toolkit is used to build against ptcore (torch finds these to compile its C++ API)
CUDA_HOME = None
CUDNN_HOME = None
ROCM_HOME = None
HIP_HOME = None
SYCL_HOME = None
ROCM_VERSION = None
LIB_EXT = ".pyd" if IS_WINDOWS else ".so"
EXEC_EXT = ".exe" if IS_WINDOWS else ""
CLIB_PREFIX = "" if IS_WINDOWS else "lib"
CLIB_EXT = ".dll" if IS_WINDOWS else ".so"
SHARED_FLAG = "/DLL" if IS_WINDOWS else "-shared"

_NO_CPP = ("ptcore has no C++ API (ATen/libtorch) to compile {what} against; write the "
           "kernel in Cython against ptcore's .pxd API and build it with "
           "ptcore.utils.cython_extension.load (or register it with ptcore.library.custom_op)")


def _refuse(what):
    raise RuntimeError(_NO_CPP.format(what=what))


def include_paths(device_type="cpu"):
    """The include directories for a Cython extension of ptcore
    (:func:`ptcore.utils.cython_extension.include_paths`); ``device_type`` is accepted as
    torch's is."""
    return cython_extension.include_paths()


def library_paths(device_type="cpu"):
    """No library to link: a Cython extension of ptcore reaches it through Python."""
    return []


def get_default_build_root():
    """Where :func:`load` builds (``$PTCORE_CACHE_DIR/extensions``)."""
    return os.path.realpath(Path(_config.CACHE_DIR) / "extensions")


def is_ninja_available():
    """Whether the ``ninja`` build tool runs (as torch's check: ``ninja --version``)."""
    try:
        subprocess.check_output(["ninja", "--version"], stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def verify_ninja_availability():
    """Raise :class:`RuntimeError` when ninja is not available."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions")


def get_cxx_compiler():
    """The C++ compiler torch would use (``$CXX``, else ``c++``)."""
    return os.environ.get("CXX", "cl" if IS_WINDOWS else "c++")


def _is_cython(sources):
    return all(Path(s).suffix in (".pyx", ".c") for s in sources) and \
        any(Path(s).suffix == ".pyx" for s in sources)


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
         extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False,
         with_cuda=None, with_sycl=None, is_python_module=True, is_standalone=False,
         keep_intermediates=True):
    """Build and import an extension module, as ``torch.utils.cpp_extension.load``.

    Raises
    ------
    FileNotFoundError
        A source file does not exist (checked first, as torch reads every source).
    RuntimeError
        The sources are C++ or CUDA: ptcore has no C++ API to build them against.  A Cython
        source (one ``.pyx`` with ``.c`` files) is built by
        :func:`ptcore.utils.cython_extension.load` instead.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    for s in sources:
        if not os.path.exists(s):
            raise FileNotFoundError(2, "No such file or directory", str(s))
    if _is_cython(sources):
        return cython_extension.load(
            name, sources, extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
            extra_include_paths=extra_include_paths, build_directory=build_directory,
            verbose=verbose)
    _refuse(f"the extension {name!r} ({', '.join(Path(s).name for s in sources)})")


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None,
                extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
                extra_ldflags=None, extra_include_paths=None, build_directory=None,
                verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True,
                use_pch=False, no_implicit_headers=False):
    """``torch.utils.cpp_extension.load_inline``: raises :class:`RuntimeError` (ptcore has
    no C++ API to compile inline C++/CUDA against)."""
    _refuse(f"the inline extension {name!r}")


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools extension of C++ sources: raises :class:`RuntimeError` (no C++ API)."""
    _refuse(f"the C++ extension {name!r}")


def CUDAExtension(name, sources, *args, **kwargs):
    """A setuptools extension of CUDA sources: raises :class:`RuntimeError` (no C++ API)."""
    _refuse(f"the CUDA extension {name!r}")


class BuildExtension:
    """setuptools' ``build_ext`` command for C++/CUDA extensions: constructing it (or
    :meth:`with_options`) raises :class:`RuntimeError` (no C++ API)."""

    @classmethod
    def with_options(cls, **options):
        _refuse("extensions with BuildExtension")

    def __init__(self, *args, **kwargs):
        _refuse("extensions with BuildExtension")
