"""ptcore.utils.cython_extension.load and ptcore.get_include: a Cython module
that cimports ptcore's C-level API is compiled, cached and imported."""
import os
import shutil
import sysconfig
import textwrap

import numpy as np
import pytest

import ptcore
from ptcore.utils import cython_extension


def _have_toolchain():
    try:
        import Cython  # noqa: F401
    except ImportError:
        return "needs Cython"
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"needs a C compiler ({cc})"
    return None


needs_toolchain = pytest.mark.skipif(_have_toolchain() is not None,
                                     reason=_have_toolchain() or "")

_SRC = textwrap.dedent("""
    # cython: language_level=3
    from ptcore._tensor cimport _TensorBase, _empty_contig
    from ptcore._ops.kernels._types cimport PT_FLOAT64

    def axpy(double a, _TensorBase x, _TensorBase y):
        # a * x + y for contiguous float64 tensors of one shape
        if x._dtype.num != PT_FLOAT64 or y._dtype.num != PT_FLOAT64:
            raise TypeError("axpy: float64 tensors only")
        if not (x._is_contig() and y._is_contig()) or x._numel != y._numel:
            raise ValueError("axpy: contiguous tensors of one size")
        cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device,
                                             False)
        cdef double* px = <double*>x._ptr()
        cdef double* py = <double*>y._ptr()
        cdef double* po = <double*>out._ptr()
        cdef Py_ssize_t i
        for i in range(x._numel):
            po[i] = a * px[i] + py[i]
        return out

    def helper():
        return c_helper(20)

    cdef extern from "helper.h":
        int c_helper(int)
""")


def test_get_include_holds_the_installed_pxd_files():
    inc = ptcore.get_include()
    assert isinstance(inc, str) and os.path.isabs(inc)
    for pxd in ("ptcore/_tensor.pxd", "ptcore/_ops/kernels/_types.pxd", "ptcore/_ops/kernels/_parallel.pxd"):
        assert os.path.isfile(os.path.join(inc, pxd)), pxd
    assert ptcore.get_include is cython_extension.get_include
    paths = cython_extension.include_paths()
    assert paths[0] == inc
    assert any(os.path.isfile(os.path.join(p, "ptc_half.h")) for p in paths)


def test_argument_errors(tmp_path):
    pyx = tmp_path / "m.pyx"
    pyx.write_text("x = 1\n")
    with pytest.raises(ValueError, match="identifier"):
        cython_extension.load("not-a-name", [pyx], build_directory=tmp_path)
    with pytest.raises(FileNotFoundError):
        cython_extension.load("m", [tmp_path / "missing.pyx"], build_directory=tmp_path)
    other = tmp_path / "n.pyx"
    other.write_text("y = 2\n")
    with pytest.raises(ValueError, match="exactly one .pyx"):
        cython_extension.load("m", [pyx, other], build_directory=tmp_path)
    cpp = tmp_path / "k.cpp"
    cpp.write_text("")
    with pytest.raises(ValueError, match=r"\.cpp"):
        cython_extension.load("m", [pyx, cpp], build_directory=tmp_path)


def _write_sources(d):
    (d / "fastops.pyx").write_text(_SRC)
    (d / "helper.h").write_text("int c_helper(int);\n")
    (d / "helper.c").write_text("int c_helper(int v) { return 2 * v + 2; }\n")
    return [d / "fastops.pyx", d / "helper.c"]


@pytest.mark.slow
@needs_toolchain
def test_load_compiles_caches_and_imports(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    sources = _write_sources(src)
    build = tmp_path / "build"
    mod = cython_extension.load("ptc_axpy_ext", sources, build_directory=build,
                                extra_compile_args=["-O3"], verbose=True)
    out = capsys.readouterr().out
    assert "cython" in out and "-O3" in out        # verbose prints the commands
    x = ptcore.arange(6, dtype=ptcore.float64).reshape(2, 3)
    y = ptcore.ones(2, 3, dtype=ptcore.float64)
    r = mod.axpy(2.0, x, y)
    assert isinstance(r, ptcore.Tensor) and r.shape == (2, 3) and r.dtype == ptcore.float64
    np.testing.assert_array_equal(r.numpy(), 2.0 * x.numpy() + 1.0)
    assert mod.helper() == 42                       # the .c source is linked in
    with pytest.raises(TypeError, match="float64"):
        mod.axpy(1.0, x.float(), y.float())
    built = sorted(build.glob("ptc_axpy_ext.*"))
    assert len(built) == 1

    # the same sources and options: the cached build, no compiler run
    mtime = built[0].stat().st_mtime_ns
    cython_extension.load("ptc_axpy_ext", sources, build_directory=build,
                          extra_compile_args=["-O3"], verbose=True)
    assert "cached build" in capsys.readouterr().out
    assert built[0].stat().st_mtime_ns == mtime
    # other options: another build next to it
    cython_extension.load("ptc_axpy_ext", sources, build_directory=build,
                          extra_compile_args=["-O1"])
    assert len(list(build.glob("ptc_axpy_ext.*"))) == 2


@pytest.mark.slow
@needs_toolchain
def test_build_errors_carry_the_compiler_output(tmp_path):
    bad = tmp_path / "broken.pyx"
    bad.write_text("def f(:\n    pass\n")
    with pytest.raises(RuntimeError, match=r"Error building extension 'broken' \(Cython") as e:
        cython_extension.load("broken", [bad], build_directory=tmp_path / "b")
    assert "broken.pyx" in str(e.value)             # Cython's message names the file

    bad_c = tmp_path / "cbroken.pyx"
    # C that Cython passes through verbatim and the C compiler rejects
    bad_c.write_text('cdef extern from *:\n    """\n    static int nope(void) { return undeclared_thing; }\n'
                     '    """\n    int nope()\ndef f():\n    return nope()\n')
    with pytest.raises(RuntimeError, match="C compiler") as e:
        cython_extension.load("cbroken", [bad_c], build_directory=tmp_path / "c")
    assert "undeclared_thing" in str(e.value)
