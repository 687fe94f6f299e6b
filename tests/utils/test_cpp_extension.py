"""ptcore.utils.cpp_extension (``torch.utils.cpp_extension`` under the launcher): the module
imports with torch's names, so libraries that try a compiled fast path (PEFT's BOFT) or read
``CUDA_HOME`` fall back as they do where no extension can be built; C++/CUDA sources raise
RuntimeError (ptcore has no C++ API), a Cython source is built by cython_extension.load."""
import os

import pytest

from ptcore.utils import cpp_extension

torch = pytest.importorskip("torch")
import torch.utils.cpp_extension as torch_cpp_extension  # noqa: E402

from test_cython_extension import needs_toolchain  # noqa: E402  (tests/utils)

NAMES = ["load", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension",
         "include_paths", "library_paths", "get_default_build_root", "is_ninja_available",
         "verify_ninja_availability", "get_cxx_compiler", "CUDA_HOME", "ROCM_HOME",
         "CUDNN_HOME", "HIP_HOME", "IS_HIP_EXTENSION", "IS_WINDOWS", "IS_MACOS", "IS_LINUX",
         "LIB_EXT", "CLIB_EXT", "CLIB_PREFIX", "EXEC_EXT", "SHARED_FLAG"]


def test_torchs_names_are_there():
    for name in NAMES:
        assert hasattr(torch_cpp_extension, name), name
        assert hasattr(cpp_extension, name), name
    for name in ("IS_WINDOWS", "IS_MACOS", "IS_LINUX", "IS_HIP_EXTENSION", "LIB_EXT",
                 "CLIB_EXT", "CLIB_PREFIX", "EXEC_EXT", "SHARED_FLAG"):
        assert getattr(cpp_extension, name) == getattr(torch_cpp_extension, name), name
    assert cpp_extension.is_ninja_available() == torch_cpp_extension.is_ninja_available()
    assert cpp_extension.CUDA_HOME is None and cpp_extension.ROCM_HOME is None
    assert cpp_extension.library_paths() == []
    assert os.path.isabs(cpp_extension.get_default_build_root())
    assert all(os.path.isdir(p) for p in cpp_extension.include_paths())


def test_missing_source_is_file_not_found_as_torch(tmp_path):
    for mod in (cpp_extension, torch_cpp_extension):
        with pytest.raises(FileNotFoundError):
            mod.load("nothing_here", [str(tmp_path / "k.cu")], build_directory=str(tmp_path))


def test_cpp_and_cuda_sources_raise_runtime_error(tmp_path):
    cpp, cu = tmp_path / "k.cpp", tmp_path / "k_kernel.cu"
    cpp.write_text("int f() { return 1; }\n")
    cu.write_text("__global__ void k() {}\n")
    with pytest.raises(RuntimeError, match="no C\\+\\+ API.*cython_extension"):
        cpp_extension.load("fbd_cuda", [str(cpp), str(cu)], verbose=True)
    with pytest.raises(RuntimeError, match="no C\\+\\+ API"):
        cpp_extension.load_inline("inl", cpp_sources=["int f() { return 1; }"])
    with pytest.raises(RuntimeError, match="no C\\+\\+ API"):
        cpp_extension.CppExtension("ext", ["k.cpp"])
    with pytest.raises(RuntimeError, match="no C\\+\\+ API"):
        cpp_extension.CUDAExtension("ext", ["k.cu"])
    with pytest.raises(RuntimeError, match="no C\\+\\+ API"):
        cpp_extension.BuildExtension.with_options(use_ninja=False)


@pytest.mark.slow
@needs_toolchain
def test_a_cython_source_is_built_by_cython_extension(tmp_path):
    pyx = tmp_path / "three.pyx"
    pyx.write_text("def f():\n    return 3\n")
    mod = cpp_extension.load("ptc_three_ext", [str(pyx)], build_directory=str(tmp_path / "b"))
    assert mod.f() == 3
