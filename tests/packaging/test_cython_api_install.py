"""ptcore's C-level API (.pxd + headers) is installed, and another project can cimport it.

The installed tree is read from the meson.build files (py.install_sources).
The slow test lays out exactly those files in a temporary prefix, compiles a
small third-party Cython module against it (``cimport ptcore._tensor``,
``ptcore._ops.kernels._types``, ``ptcore._ops.kernels._parallel``) and checks what it reads
from tensors at C level against ptcore's Python API.
"""
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path, PurePosixPath

import numpy as np
import pytest

from meson_sources import extension_modules, installed_sources, referenced_sources, repo_root

# what a kernel author needs: tensor metadata/data pointer/output allocation,
# dtype codes, the parallel-for thread contract
C_API = ["ptcore/_tensor.pxd", "ptcore/_ops/kernels/_types.pxd", "ptcore/_ops/kernels/_parallel.pxd"]

# the folder of the C headers the installed .pxd files include
_HEADER_DIR = "ptcore/_ops/kernels/include"
_CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport|cimport\s+([\w.]+))", re.M)
_EXTERN = re.compile(r"""cdef\s+extern\s+from\s+["']([^"'*]+)["']""")


@pytest.fixture(scope="module")
def installed():
    return installed_sources()


def test_c_api_pxd_files_are_installed(installed):
    for path in C_API:
        assert path in installed, f"{path} is not in any py.install_sources"
        assert installed[path] == path
    # cimport of a package needs its __init__ installed next to the .pxd files
    for pkg in {str(PurePosixPath(p).parent) for p in C_API}:
        assert f"{pkg}/__init__.py" in installed


def test_installed_pxd_files_are_the_ones_the_build_compiles(installed):
    used = referenced_sources()
    for path in installed:
        if path.endswith((".pxd", ".h")):
            assert installed[path] in used, f"{path} installed but not part of the build"


def _deps(path):
    """Installed paths a .pxd needs: ptcore modules it cimports and headers it includes."""
    text = (repo_root() / path).read_text()
    here = PurePosixPath(path).parent
    out = []
    for a, b in _CIMPORT.findall(text):
        mod = a or b
        if mod.startswith("ptcore."):
            out.append(mod.replace(".", "/") + ".pxd")
    for header in _EXTERN.findall(text):
        # next to the .pxd, else in the headers' folder (ptcore.utils.cython_extension.include_paths)
        dirs = [here, PurePosixPath(_HEADER_DIR)]
        found = [d / header for d in dirs if (repo_root() / d / header).exists()]
        out.append(str(found[0] if found else here / header))
    return out


def test_installed_c_api_is_closed(installed):
    """Every cimport and extern header of an installed .pxd is installed too."""
    todo = [p for p in installed if p.endswith(".pxd")]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for dep in _deps(p):
            assert dep in installed, f"{p} needs {dep}, which is not installed"
            if dep.endswith(".pxd"):
                todo.append(dep)
    assert "ptcore/_ops/kernels/include/ptc_half.h" in installed     # _types.pxd's extern header


_EXT_PYX = textwrap.dedent("""
    # cython: language_level=3
    from ptcore._tensor cimport _TensorBase, _empty_contig, dtype, dtype_from_num
    from ptcore._ops.kernels._types cimport (PT_FLOAT32, PT_FLOAT64, PT_INT64, PT_NUM_TYPES,
                                     ptc_float_to_half, ptc_half_to_float)
    from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain

    def meta(_TensorBase t):
        return (t._ndim, [t._shape[i] for i in range(t._ndim)],
                [t._strides[i] for i in range(t._ndim)], t._offset, t._dtype.num,
                t._is_contig())

    def scaled_copy(_TensorBase t, double a):
        # a custom kernel: out = a * t for a contiguous float64 tensor
        if t._dtype.num != PT_FLOAT64 or not t._is_contig():
            raise TypeError("need a contiguous float64 tensor")
        cdef _TensorBase out = _empty_contig(t._dtype, t._ndim, t._shape, t._storage.device, False)
        cdef double* src = <double*>t._ptr()
        cdef double* dst = <double*>out._ptr()
        cdef Py_ssize_t i
        for i in range(t._numel):
            dst[i] = a * src[i]
        return out

    def codes():
        return PT_FLOAT32, PT_FLOAT64, PT_INT64, PT_NUM_TYPES, dtype_from_num(PT_INT64)

    def half_roundtrip(float x):
        return ptc_half_to_float(ptc_float_to_half(x))

    def threads():
        return get_num_threads(), parallel_grain()
""")


def _compile(tree, workdir):
    pyx = workdir / "ptc_third_party.pyx"
    pyx.write_text(_EXT_PYX)
    c_file = workdir / "ptc_third_party.c"
    r = subprocess.run([sys.executable, "-m", "cython", "-3", "-I", str(tree), str(pyx),
                        "-o", str(c_file)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cc = sysconfig.get_config_var("CC") or "cc"
    so = workdir / ("ptc_third_party" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = cc.split() + ["-shared", "-fPIC", "-O1", "-w",
                        "-I", sysconfig.get_paths()["include"],
                        "-I", str(tree / "ptcore" / "_ops" / "kernels" / "include"),
                        str(c_file), "-o", str(so)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, " ".join(cmd) + "\n" + r.stdout + r.stderr
    return so


@pytest.mark.slow
def test_third_party_module_cimports_the_installed_tree(installed, tmp_path):
    pytest.importorskip("Cython")
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"needs a C compiler ({cc})")
    import ptcore

    # the install layout: only what meson installs (no .pyx, no build tree)
    tree = tmp_path / "prefix"
    for dst, src in installed.items():
        (tree / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo_root() / src, tree / dst)
    work = tmp_path / "ext"
    work.mkdir()
    so = _compile(tree, work)

    spec = importlib.util.spec_from_file_location("ptc_third_party", so)
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)

    x = ptcore.arange(24, dtype=ptcore.float64).reshape(2, 3, 4)
    v = x.transpose(0, 2)[1:, :, 1]
    ndim, shape, strides, offset, num, contig = ext.meta(v)
    assert (ndim, shape, strides, offset) == (v.dim(), list(v.shape), list(v.stride()),
                                             v.storage_offset())
    assert num == ptcore.float64.num and contig == v.is_contiguous() is False
    assert ext.meta(x)[5] is True

    y = ext.scaled_copy(x, 2.5)
    assert isinstance(y, ptcore.Tensor)
    assert y.dtype == ptcore.float64 and tuple(y.shape) == (2, 3, 4)
    np.testing.assert_array_equal(y.numpy(), 2.5 * x.numpy())
    with pytest.raises(TypeError):
        ext.scaled_copy(x.float(), 1.0)

    f32, f64, i64, ntypes, dt = ext.codes()
    assert (f32, f64, i64) == (ptcore.float32.num, ptcore.float64.num, ptcore.int64.num)
    assert dt is ptcore.int64 and ntypes > f64
    assert ext.half_roundtrip(0.1) == float(np.float32(np.float16(0.1)))
    nthreads, grain = ext.threads()
    assert nthreads == ptcore.get_num_threads() and grain > 0


@pytest.mark.slow
def test_meson_reader_agrees_with_meson_introspect(installed, tmp_path):
    """The meson.build reader these tests rely on lists what meson itself would install."""
    meson = shutil.which("meson")
    if meson is None:
        pytest.skip("needs meson")
    build = tmp_path / "build"
    r = subprocess.run([meson, "setup", str(build), str(repo_root())], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip("meson setup failed here (compiler/dependencies): " + r.stdout[-2000:])
    r = subprocess.run([meson, "introspect", str(build), "--installed"], capture_output=True,
                       text=True, timeout=120, check=True)
    mapping = json.loads(r.stdout)
    site = re.compile(r".*/(?:site|dist)-packages/")
    got = {site.sub("", dst): src for src, dst in mapping.items()}
    sources = {dst: str(Path(src).resolve().relative_to(repo_root().resolve()).as_posix())
               for dst, src in got.items() if not dst.endswith(sysconfig.get_config_var("EXT_SUFFIX"))}
    assert sources == installed
    ext = {dst[:-len(sysconfig.get_config_var("EXT_SUFFIX"))] for dst in got
           if dst.endswith(sysconfig.get_config_var("EXT_SUFFIX"))}
    assert ext == set(extension_modules())
