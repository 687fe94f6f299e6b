"""Compile and import a Cython extension at run time (``torch.utils.cpp_extension.load``
for Cython).

A ``.pyx`` file that ``cimport``\\ s ptcore's C-level API
(``ptcore._tensor``: the tensor's shape, strides, dtype code, data pointer
and output allocation; ``ptcore._ops.kernels._types``: dtype codes and half-float
conversions; ``ptcore._ops.kernels._parallel``: the thread count of parallel loops)
is translated with Cython, compiled with the C compiler Python was built
with, cached, and imported::

    mod = ptcore.utils.cython_extension.load("fused", ["fused.pyx"])

A second call with the same sources and options imports the cached build
(the cache key covers the sources, the options, ptcore's installed ``.pxd``
files and the versions of ptcore, Python and Cython).  Builds live under
``build_directory`` or ``$PTCORE_CACHE_DIR/extensions``.  Build errors are
raised as :class:`RuntimeError` carrying the compiler's output.
"""
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from ptcore import _config

__all__ = ["get_include", "include_paths", "load"]

_PKG = Path(__file__).resolve().parents[1]          # the ptcore package directory


def get_include():
    """The directory to put on Cython's include path to ``cimport ptcore``.

    ``cimport ptcore._tensor`` (and ``ptcore._ops.kernels._types``,
    ``ptcore._ops.kernels._parallel``) resolves from it; it is the directory that
    holds the installed ``ptcore`` package.  The C compiler also needs
    :func:`include_paths` (the headers the ``.pxd`` files include).

    Returns
    -------
    str

    Examples
    --------
    >>> import os
    >>> inc = ptcore.get_include()
    >>> os.path.exists(os.path.join(inc, "ptcore", "_tensor.pxd"))
    True
    """
    return str(_PKG.parent)


def include_paths():
    """Include directories for compiling the C that Cython writes from a
    module cimporting ptcore: :func:`get_include`, the directory of ptcore's
    C headers (``ptc_half.h``) and Python's headers.

    Returns
    -------
    list of str
    """
    return [get_include(), str(_PKG / "_ops" / "kernels" / "include"), sysconfig.get_paths()["include"]]


def _default_build_root():
    return Path(_config.CACHE_DIR) / "extensions"


def _compiler():
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    argv = shlex.split(cc)
    if shutil.which(argv[0]) is None:
        raise RuntimeError(f"cython_extension.load: no C compiler: {argv[0]!r} is not on PATH "
                           "(set CC to a C compiler)")
    return argv


def _cython():
    try:
        import Cython
    except ImportError:
        raise RuntimeError("cython_extension.load: Cython is not installed "
                           "(pip install 'Cython>=3.1')") from None
    return Cython.__version__


def _run(argv, what, name, verbose, cwd):
    if verbose:
        print(" ".join(shlex.quote(a) for a in argv), flush=True)
    try:
        r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    except OSError as e:
        raise RuntimeError(f"Error building extension '{name}': cannot run {argv[0]}: {e}") \
            from None
    if verbose and (r.stdout or r.stderr):
        print(r.stdout + r.stderr, flush=True)
    if r.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}' ({what} failed, exit status "
                           f"{r.returncode}):\n$ {' '.join(shlex.quote(a) for a in argv)}\n"
                           f"{r.stdout}{r.stderr}")


def _key(name, sources, options):
    h = hashlib.sha256()
    from ptcore import __version__
    h.update(repr((name, options, __version__, sys.version, sys.implementation.cache_tag,
                   _cython(), sysconfig.get_config_var("EXT_SUFFIX"))).encode())
    for src in sources:
        h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
        # a .pxd next to a .pyx is part of its module
        pxd = src.with_suffix(".pxd")
        if src.suffix == ".pyx" and pxd.exists():
            h.update(pxd.read_bytes())
    for pxd in sorted(_PKG.rglob("*.pxd")) + sorted(_PKG.rglob("ptc_*.h")):
        h.update(str(pxd.relative_to(_PKG)).encode() + pxd.read_bytes())
    return h.hexdigest()[:16]


def _import(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ImportError(f"cython_extension.load: cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules[name] = mod
    return mod


class _Lock:
    """An exclusive lock on a file (two processes building the same extension)."""

    def __init__(self, path):
        self.path = path
        self.fd = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:         # no fcntl (Windows): builds are still atomic
            pass
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        return False


def load(name, sources, *, extra_compile_args=None, extra_link_args=None,
         extra_include_paths=None, build_directory=None, verbose=False,
         extra_cflags=None, extra_ldflags=None):
    """Build (or take from the cache) and import a Cython extension module.

    Parameters
    ----------
    name : str
        The module's name (a Python identifier); the ``.pyx`` source is
        compiled as this module whatever its file is called.
    sources : str, path or list of them
        Exactly one ``.pyx`` file and any number of ``.c`` files linked with it.
    extra_compile_args, extra_cflags : list of str, optional
        Extra flags for the C compiler (``extra_cflags`` is torch's name;
        both are used).  ``["-fopenmp"]`` enables Cython's ``prange``.
    extra_link_args, extra_ldflags : list of str, optional
        Extra flags for the link (``-lm``, ``-fopenmp`` ...).
    extra_include_paths : list of str, optional
        More directories for Cython's ``cimport`` search and the C compiler.
    build_directory : str or path, optional
        Where the build goes (default ``$PTCORE_CACHE_DIR/extensions/<name>``,
        ``~/.cache/ptcore/extensions/<name>`` when unset).
    verbose : bool
        Print the commands and the compilers' output.

    Returns
    -------
    module
        The imported extension module.

    Raises
    ------
    RuntimeError
        Cython or the C compiler failed (the message holds their output), or
        no C compiler / Cython is available.
    ValueError
        ``sources`` does not hold exactly one ``.pyx`` file, or holds a file
        of another kind.
    FileNotFoundError
        A source file does not exist.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "twice.pyx")
    >>> with open(src, "w") as f:
    ...     _ = f.write('''
    ... from ptcore._tensor cimport _TensorBase
    ... def numel(_TensorBase t):
    ...     return t._numel
    ... ''')
    >>> mod = ptcore.utils.cython_extension.load("twice", [src], build_directory=d)
    >>> mod.numel(ptcore.zeros(2, 3))
    6
    """
    if sys.platform == "win32":
        raise RuntimeError("cython_extension.load: building with MSVC is not supported; "
                           "build the extension as a meson-python package instead")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"cython_extension.load: name must be a Python identifier, got {name!r}")
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    srcs = [Path(s).resolve() for s in sources]
    for s in srcs:
        if not s.is_file():
            raise FileNotFoundError(f"cython_extension.load: no source file {s}")
        if s.suffix not in (".pyx", ".c"):
            raise ValueError(f"cython_extension.load: {s.name}: sources are one .pyx file and "
                             f".c files, not {s.suffix or 'a file without suffix'}")
    pyx = [s for s in srcs if s.suffix == ".pyx"]
    if len(pyx) != 1:
        raise ValueError(f"cython_extension.load: expected exactly one .pyx source, got "
                         f"{len(pyx)} ({', '.join(s.name for s in pyx) or 'none'})")
    cflags = list(extra_compile_args or []) + list(extra_cflags or [])
    ldflags = list(extra_link_args or []) + list(extra_ldflags or [])
    incs = [str(Path(p).resolve()) for p in (extra_include_paths or [])]
    cc = _compiler()
    options = (cflags, ldflags, incs, cc)
    key = _key(name, srcs, options)
    root = Path(build_directory) if build_directory is not None else \
        _default_build_root() / name
    root.mkdir(parents=True, exist_ok=True)
    ext = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = root / f"{name}.{key}{ext}"
    with _Lock(root / f".{name}.lock"):
        if not target.exists():
            _build(name, pyx[0], [s for s in srcs if s.suffix == ".c"], target, cflags,
                   ldflags, incs, cc, verbose)
        elif verbose:
            print(f"cython_extension.load: using the cached build {target}", flush=True)
    return _import(name, target)


def _build(name, pyx, c_sources, target, cflags, ldflags, incs, cc, verbose):
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=target.parent) as tmp:
        tmp = Path(tmp)
        c_file = tmp / f"{name}.c"
        cy = [sys.executable, "-m", "cython", "-3", "--module-name", name,
              "-I", get_include(), "-I", str(pyx.parent)]
        for d in incs:
            cy += ["-I", d]
        _run(cy + [str(pyx), "-o", str(c_file)], "Cython", name, verbose, tmp)
        out = tmp / target.name
        # a loadable module: -shared on Linux, a bundle resolving Python's
        # symbols at load time on macOS
        link = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" \
            else ["-shared"]
        argv = list(cc) + link + ["-fPIC", "-O2", "-fno-strict-aliasing",
                                  "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION"]
        for d in include_paths() + [str(pyx.parent)] + incs:
            argv += ["-I", d]
        try:
            import numpy
            argv += ["-I", numpy.get_include()]
        except ImportError:
            pass
        argv += cflags + [str(c_file)] + [str(c) for c in c_sources] + ["-o", str(out)] + ldflags
        _run(argv, "the C compiler", name, verbose, tmp)
        os.replace(out, target)            # atomic: another process sees all or nothing
