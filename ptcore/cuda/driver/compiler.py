"""NVRTC compilation of ptcore's CUDA kernels to cubin, with a two-level cache.

Nothing here imports CUDA at module import time: ``cuda.bindings.nvrtc`` is
imported inside the functions that need it, so ``import ptcore`` (and even
``import ptcore.cuda.driver.compiler``) works without cuda-bindings installed.

Compilation
-----------
:func:`compile` hands a CUDA C++ source to NVRTC and returns a **cubin** (an
ELF image) for one real architecture ``sm_XY``.  ptcore never asks NVRTC for
PTX: NVRTC 13.5 writes PTX ``.version 9.5``, which a CUDA 13.0 driver (the
580 series) cannot JIT, whereas a cubin loads under CUDA's minor-version
compatibility.  The options passed to NVRTC are, in this order::

    -arch=sm_XY  --std=c++17  <caller options>

(NVRTC's own defaults stay in force: ``-fmad=true``, ``-prec-div=true``,
``-prec-sqrt=true``, ``-ftz=false``, i.e. the numerics of nvcc's defaults,
which is what PyTorch's CUDA kernels are built with.  Kernels that must not
be contracted into FMAs -- the Philox transforms -- use ``__dmul_rn`` /
``__dadd_rn`` explicitly, so they do not depend on the options.)  NVRTC has
no include path, so ptcore's kernels are header-free (see
:mod:`ptcore.cuda.kernels.library`).  The architecture must be one of
``nvrtcGetSupportedArchs()`` (75..121 for NVRTC 13.5); a ``compute_XY``
(PTX) target is refused.

Cache
-----
Each compiled cubin is stored under the key ::

    sha256(source, options, arch, NVRTC version, ptcore.__version__)

(each component length-prefixed, so no two tuples share a key) in an
in-process dict and in a directory: ``$PTCORE_CACHE_DIR`` if set and
non-empty, else ``~/.cache/ptcore/kernels``.  A disk entry is
``<key>.cubin`` holding ::

    b"PTCUBIN1" | sha256(cubin) (32 bytes) | len(cubin) (8 bytes, little endian) | cubin

and is written atomically: a temporary file in the same directory, flushed
and ``fsync``-ed, then ``os.replace``-d onto the final name, so readers see
either nothing or a whole entry.  An entry whose magic, length, hash or ELF
header does not check out (truncated, corrupted, foreign) is ignored and
replaced by a fresh compile.  When the directory cannot be created or written
the cache silently degrades to memory only (``stats()["disk_write_errors"]``
counts the failures).  Loading an entry never executes anything: it is only
compared against its hash and handed back as bytes.

:func:`stats` counts NVRTC compiles and cache hits per process, so a test can
show that a second process with the same cache directory compiles nothing.
"""
import hashlib
import os
import re
import tempfile
import threading

__all__ = [
    "compile", "cache_key", "cache_dir", "stats", "reset_stats", "clear_memory_cache",
    "nvrtc_version", "supported_archs", "nvrtc_available", "DEFAULT_ARCH", "BASE_OPTIONS",
]

#: architecture used when none is given (H100)
DEFAULT_ARCH = "sm_90"
#: options every compile gets after ``-arch=sm_XY``
BASE_OPTIONS = ("--std=c++17",)

_MAGIC = b"PTCUBIN1"
_HEADER = len(_MAGIC) + 32 + 8

_lock = threading.Lock()
_memory = {}
_STAT_NAMES = ("compiles", "memory_hits", "disk_hits", "disk_writes", "disk_corrupt",
               "disk_write_errors")
_stats = dict.fromkeys(_STAT_NAMES, 0)
_version_cache = None
_archs_cache = None


# ---------------------------------------------------------------------------
# NVRTC access
# ---------------------------------------------------------------------------

def _nvrtc():
    """The ``cuda.bindings.nvrtc`` module, or a clear RuntimeError."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise RuntimeError(
            "NVRTC is not available: ptcore compiles its CUDA kernels with cuda-bindings' NVRTC "
            "bindings, which are not installed (pip install 'ptcore[cuda]', i.e. "
            f"cuda-bindings>=13 and nvidia-cuda-nvrtc>=13): {e}") from e
    return nvrtc


def _err_name(res):
    return getattr(res, "name", None) or str(res)


def _call(fn_name, *args):
    """Call ``nvrtc.<fn_name>(*args)``; return the payload, raise RuntimeError on failure."""
    nvrtc = _nvrtc()
    try:
        out = getattr(nvrtc, fn_name)(*args)
    except RuntimeError:
        raise
    except Exception as e:  # libnvrtc missing / unloadable: DynamicLibNotFoundError etc.
        raise RuntimeError(f"NVRTC is not usable ({fn_name} failed): {type(e).__name__}: {e}") from e
    res = out[0]
    if int(res) != 0:
        raise RuntimeError(f"NVRTC {fn_name} failed: {_err_name(res)}")
    if len(out) == 1:
        return None
    return out[1] if len(out) == 2 else out[1:]


def nvrtc_version():
    """NVRTC's ``(major, minor)`` version.

    Raises
    ------
    RuntimeError
        When cuda-bindings or libnvrtc is missing.
    """
    global _version_cache
    if _version_cache is None:
        major, minor = _call("nvrtcVersion")
        _version_cache = (int(major), int(minor))
    return _version_cache


def supported_archs():
    """The real architectures NVRTC can compile for, e.g. ``(75, 80, ..., 121)``."""
    global _archs_cache
    if _archs_cache is None:
        _archs_cache = tuple(int(a) for a in _call("nvrtcGetSupportedArchs"))
    return _archs_cache


def nvrtc_available():
    """``(True, None)`` when NVRTC can compile here, else ``(False, reason)``.  Never raises."""
    try:
        nvrtc_version()
        supported_archs()
    except Exception as e:
        return False, str(e)
    return True, None


_ARCH_RE = re.compile(r"^(?:sm_)?(\d+)([af]?)$")


def _normalize_arch(arch):
    """``"sm_90"``, ``"90"``, ``90`` or ``(9, 0)`` -> ``"sm_90"`` (checked against NVRTC)."""
    if isinstance(arch, tuple) and len(arch) == 2:
        arch = f"sm_{int(arch[0])}{int(arch[1])}"
    elif isinstance(arch, int) and not isinstance(arch, bool):
        arch = f"sm_{arch}"
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a string like 'sm_90', an int or a (major, minor) tuple, "
                        f"got {type(arch).__name__}")
    if arch.startswith("compute_"):
        raise ValueError(f"arch {arch!r}: ptcore compiles cubins for a real architecture (sm_XY), "
                         "never PTX (NVRTC 13.5's PTX does not load on a CUDA 13.0 driver)")
    m = _ARCH_RE.match(arch)
    if m is None:
        raise ValueError(f"arch {arch!r} is not a CUDA architecture like 'sm_90'")
    num = int(m.group(1))
    archs = supported_archs()
    if num not in archs:
        listed = ", ".join(f"sm_{a}" for a in archs)
        raise ValueError(f"NVRTC {'.'.join(map(str, nvrtc_version()))} cannot compile for "
                         f"sm_{num}{m.group(2)}: supported architectures are {listed}")
    return f"sm_{num}{m.group(2)}"


def _normalize_options(options):
    opts = []
    for o in options or ():
        if isinstance(o, bytes):
            o = o.decode()
        if not isinstance(o, str):
            raise TypeError(f"NVRTC options must be str or bytes, got {type(o).__name__}")
        low = o.lower()
        if low.startswith(("-arch", "--gpu-architecture")):
            raise ValueError(f"pass the architecture with arch=..., not as option {o!r}")
        if low in ("-ptx", "--ptx"):
            raise ValueError("ptcore compiles cubins only; PTX output is not supported")
        opts.append(o)
    return tuple(opts)


def _full_options(arch, options):
    return (f"-arch={arch}",) + BASE_OPTIONS + options


def _compile_nvrtc(source, arch, options, name):
    """One NVRTC compile; returns the cubin bytes."""
    nvrtc = _nvrtc()
    src = source.encode() if isinstance(source, str) else bytes(source)
    opts = [o.encode() for o in _full_options(arch, options)]
    prog = _call("nvrtcCreateProgram", src, name.encode(), 0, [], [])
    try:
        try:
            res, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        except Exception as e:
            raise RuntimeError(f"NVRTC is not usable: {type(e).__name__}: {e}") from e
        if int(res) != 0:
            log = _program_log(prog)
            raise RuntimeError(f"NVRTC failed to compile {name} for {arch} ({_err_name(res)}); "
                               f"options {' '.join(_full_options(arch, options))}:\n{log}")
        size = _call("nvrtcGetCUBINSize", prog)
        buf = bytearray(size)
        _call("nvrtcGetCUBIN", prog, buf)
        with _lock:
            _stats["compiles"] += 1
        return bytes(buf)
    finally:
        try:
            nvrtc.nvrtcDestroyProgram(prog)
        except Exception:
            pass


def _program_log(prog):
    try:
        size = _call("nvrtcGetProgramLogSize", prog)
        log = bytearray(size)
        _call("nvrtcGetProgramLog", prog, log)
        return bytes(log).rstrip(b"\x00").decode(errors="replace")
    except Exception as e:  # the log is best effort
        return f"<no log: {e}>"


# ---------------------------------------------------------------------------
# cache
# ---------------------------------------------------------------------------

def cache_dir():
    """The on-disk cache directory: ``$PTCORE_CACHE_DIR`` or ``~/.cache/ptcore/kernels``."""
    d = os.environ.get("PTCORE_CACHE_DIR")
    if d:
        return os.path.abspath(os.path.expanduser(d))
    return os.path.join(os.path.expanduser("~"), ".cache", "ptcore", "kernels")


def _ptcore_version():
    import ptcore
    return ptcore.__version__


def cache_key(source, options=(), arch=DEFAULT_ARCH, nvrtc_ver=None, ptcore_version=None):
    """sha256 hex key of (source, options, arch, NVRTC version, ptcore version).

    ``options`` are the caller's options (the base options are part of what
    the NVRTC version and ptcore version pin down).  ``nvrtc_ver`` and
    ``ptcore_version`` default to the running ones.
    """
    if nvrtc_ver is None:
        nvrtc_ver = nvrtc_version()
    if ptcore_version is None:
        ptcore_version = _ptcore_version()
    src = source.encode() if isinstance(source, str) else bytes(source)
    parts = [src, "\x00".join(_full_options(str(arch), _normalize_options(options))).encode(),
             str(arch).encode(), ".".join(map(str, nvrtc_ver)).encode(), str(ptcore_version).encode()]
    h = hashlib.sha256(b"ptcore-kernel-cache-v1")
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


def _entry_path(key, d=None):
    return os.path.join(d or cache_dir(), key + ".cubin")


def _pack(cubin):
    return _MAGIC + hashlib.sha256(cubin).digest() + len(cubin).to_bytes(8, "little") + cubin


def _unpack(data):
    """The cubin inside a cache entry, or None when the entry is not intact."""
    if len(data) < _HEADER or not data.startswith(_MAGIC):
        return None
    digest = data[len(_MAGIC):len(_MAGIC) + 32]
    n = int.from_bytes(data[len(_MAGIC) + 32:_HEADER], "little")
    cubin = data[_HEADER:]
    if len(cubin) != n or hashlib.sha256(cubin).digest() != digest or not cubin.startswith(b"\x7fELF"):
        return None
    return cubin


def _disk_read(key):
    path = _entry_path(key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    cubin = _unpack(data)
    if cubin is None:
        with _lock:
            _stats["disk_corrupt"] += 1
    return cubin


def _disk_write(key, cubin):
    d = cache_dir()
    tmp = None
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_pack(cubin))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, _entry_path(key, d))
        tmp = None
        with _lock:
            _stats["disk_writes"] += 1
    except OSError:
        with _lock:
            _stats["disk_write_errors"] += 1
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _cubin_has_symbols(cubin, names):
    return [n for n in names if (b"\x00" + n.encode() + b"\x00") not in cubin]


def compile(source, kernel_names=None, arch=DEFAULT_ARCH, options=(), *, cache=True,
            name="ptcore_kernels.cu"):
    """Compile CUDA C++ ``source`` to a cubin for ``arch`` with NVRTC (cached).

    Parameters
    ----------
    source : str
        Header-free CUDA C++ (kernels declared ``extern "C" __global__``).
    kernel_names : sequence of str, optional
        Kernels that must be in the cubin; a missing one raises RuntimeError.
    arch : str, int or tuple, default "sm_90"
        Real architecture (``"sm_90"``, ``90`` or ``(9, 0)``).
    options : sequence of str
        Extra NVRTC options, appended after ``-arch=sm_XY --std=c++17``.
    cache : bool, default True
        Look up and store the result in the memory and disk caches.
    name : str
        Program name shown in NVRTC's messages.

    Returns
    -------
    bytes
        The cubin (an ELF image).

    Raises
    ------
    RuntimeError
        NVRTC unavailable, or compile errors (the message holds NVRTC's log).
    ValueError
        ``arch`` not supported by this NVRTC, or a PTX target.
    """
    if not isinstance(source, (str, bytes)):
        raise TypeError(f"source must be str or bytes, got {type(source).__name__}")
    arch = _normalize_arch(arch)
    options = _normalize_options(options)
    if not cache:
        cubin = _compile_nvrtc(source, arch, options, name)
    else:
        key = cache_key(source, options, arch)
        with _lock:
            cubin = _memory.get(key)
            if cubin is not None:
                _stats["memory_hits"] += 1
        if cubin is None:
            cubin = _disk_read(key)
            if cubin is not None:
                with _lock:
                    _stats["disk_hits"] += 1
            else:
                cubin = _compile_nvrtc(source, arch, options, name)
                _disk_write(key, cubin)
            with _lock:
                _memory[key] = cubin
    if kernel_names:
        missing = _cubin_has_symbols(cubin, kernel_names)
        if missing:
            raise RuntimeError(f"kernels {missing} are not in the cubin compiled for {arch}")
    return cubin


def stats():
    """Counters for this process: compiles, memory_hits, disk_hits, disk_writes,
    disk_corrupt, disk_write_errors."""
    with _lock:
        return dict(_stats)


def reset_stats():
    """Zero the counters of :func:`stats`."""
    with _lock:
        for k in _STAT_NAMES:
            _stats[k] = 0


def clear_memory_cache():
    """Forget the in-process cubins (the disk cache is untouched)."""
    with _lock:
        _memory.clear()
