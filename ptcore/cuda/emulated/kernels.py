"""Host execution of ptcore's CUDA kernels for the emulated device.

The emulated driver (:mod:`ptcore.cuda.emulated.driver`) compiles **the same
CUDA C++ kernel sources** the real device gets from NVRTC, but for the host:
the program is prefixed with the compatibility header
``ptcore/cuda/emulated/host/ptc_cuda_host.h`` (execution-space keywords,
``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, ``__shared__``,
``__syncthreads``, warp shuffles and votes, atomics, the math library and
intrinsics NVRTC provides, the float16/bfloat16 conversions with ``cvt.rn``'s
rounding) and compiled with the system C++ compiler into a shared library
loaded with ctypes.  Each kernel gets a trampoline generated into the program
(a variadic template that deduces the kernel's parameter types from its
function pointer and unpacks ``*(Ai*)params[i]``) and a signature function
giving the parameter sizes, so a launch with the wrong arguments is a clear
error rather than a crash.

Dynamic shared memory (``extern __shared__ T name[];``) is rewritten into a
pointer to the launch's ``shared_mem`` bytes (filled with 0xff: uninitialised
on the device too); static ``__shared__`` arrays are function-local statics,
shared by the threads of the one block running at a time.

Known differences from the hardware: host libm/SSE arithmetic is used (no FMA
contraction, NVRTC's ``-fmad=true`` contracts), so float results may differ in
the last bits; blocks run in order (x fastest), so a kernel that relies on
concurrently running blocks (inter-block spin waits) deadlocks.

Execution follows the hardware's model: a grid of blocks (3-D), each a set of
3-D threads.  Blocks run one after another; the threads of a block are
cooperative fibers (ptcore/cuda/emulated/host/ptc_cuda_host_rt.cpp, compiled once per
cache) that switch only at ``__syncthreads`` and at warp-synchronous calls,
where lanes exchange values.  Divergent barriers raise a RuntimeError naming
the kernel instead of hanging.

Compiled libraries are cached on disk under ``$PTCORE_CACHE_DIR/emulated``
(default ``~/.cache/ptcore/emulated``, see :func:`cache_dir`) keyed by sha256 of the header, the
source, the compiler's ``--version`` and the flags, written atomically (a
temporary file, then ``os.replace``), and memoised in memory.  The compiler is
``$CXX`` or ``c++`` (then ``g++``, ``clang++``).
"""
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading

from ptcore import _config

__all__ = ["load", "launcher", "kernel_info", "HostKernel", "compiler", "cache_dir", "FLAGS", "stats"]

#: flags of every compile (the cache key includes them)
FLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-ffp-contract=off", "-fno-strict-aliasing", "-w")

_HERE = os.path.dirname(os.path.abspath(__file__))
_HOST_DIR = os.path.join(_HERE, "host")
_HEADER = os.path.join(_HOST_DIR, "ptc_cuda_host.h")
_RUNTIME = os.path.join(_HOST_DIR, "ptc_cuda_host_rt.cpp")

_lock = threading.RLock()          # compiles and the in-memory caches
_launch_lock = threading.Lock()    # one grid at a time (shared memory is per kernel, not per launch)
_programs = {}                     # key -> ctypes.CDLL
_handles = {}                      # trampoline address -> HostKernel (programs are never unloaded)
_runtime = None
_compiler_info = None
_stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}
_stats_lock = threading.Lock()


def _count(what):
    with _stats_lock:
        _stats[what] += 1


def stats():
    """Counts of compiles and cache hits in this process (a copy)."""
    return dict(_stats)


def cache_dir():
    """``$PTCORE_CACHE_DIR/emulated`` (read at each call, as the NVRTC cache
    does, so a test can redirect it), else ptcore's cache directory
    (``_config.CACHE_DIR``, ``~/.cache/ptcore``) ``/emulated``."""
    root = os.environ.get("PTCORE_CACHE_DIR", "").strip()
    if not root:
        root = _config.CACHE_DIR
    return os.path.join(root, "emulated")


def compiler():
    """``(path, version text)`` of the host C++ compiler (RuntimeError if none)."""
    global _compiler_info
    with _lock:
        if _compiler_info is None:
            cand = os.environ.get("CXX", "").strip()
            exe = None
            if cand:
                exe = shutil.which(cand.split()[0])
                if exe is None:
                    raise RuntimeError(f"the emulated CUDA device needs a C++ compiler: $CXX={cand!r} was not found")
            else:
                for c in ("c++", "g++", "clang++"):
                    exe = shutil.which(c)
                    if exe:
                        break
            if exe is None:
                raise RuntimeError("the emulated CUDA device needs a C++ compiler to run kernels on the host, "
                                   "but none was found (set $CXX or install g++)")
            try:
                p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
            except OSError as e:
                raise RuntimeError(f"the C++ compiler {exe} cannot be run: {e}") from None
            _compiler_info = (exe, (p.stdout or p.stderr).strip())
        return _compiler_info


def _read(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def _key(*parts):
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _build(source, tag):
    """Compile C++ ``source`` (complete, including the header text) to a shared
    library in the cache; returns its path."""
    exe, version = compiler()
    key = _key(source, version, " ".join(FLAGS))
    d = cache_dir()
    try:
        os.makedirs(d, exist_ok=True)
        writable = os.access(d, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        d = os.path.join(tempfile.gettempdir(), f"ptcore-emulated-{os.getuid()}")
        os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{tag}-{key[:32]}.so")
    if os.path.exists(path):
        _count("disk_hits")
        return path
    with tempfile.TemporaryDirectory(prefix="ptc-emu-") as work:
        src = os.path.join(work, "prog.cpp")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        out = os.path.join(work, "prog.so")
        cmd = [exe, *FLAGS, src, "-o", out]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"the emulated CUDA device could not run the C++ compiler {exe}: {e}") from None
        if p.returncode != 0:
            log = (p.stderr or p.stdout).strip()
            if len(log) > 6000:
                log = log[:3000] + "\n...\n" + log[-3000:]
            raise RuntimeError(f"compiling a CUDA program for the emulated device failed ({exe} exited with "
                               f"{p.returncode}):\n{log}")
        _count("compiles")
        fd, tmp = tempfile.mkstemp(prefix=f".{tag}-", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "wb") as f, open(out, "rb") as g:
                shutil.copyfileobj(g, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    return path


def _get_runtime():
    global _runtime
    with _lock:
        if _runtime is None:
            src = _read(_RUNTIME).replace('#include "ptc_cuda_host.h"', _read(_HEADER), 1)
            lib = ctypes.CDLL(_build(src, "ptc_rt"))
            fn = lib.ptc_rt_launch
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong,
                           ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
            _runtime = lib
        return _runtime


class HostKernel:
    """One kernel of a host-compiled program: its name, trampoline address and parameter sizes."""

    __slots__ = ("name", "tramp", "sizes", "_lib")

    def __init__(self, name, tramp, sizes, lib):
        self.name = name
        self.tramp = tramp
        self.sizes = sizes
        self._lib = lib

    def __repr__(self):
        return f"<emulated CUDA kernel {self.name} ({len(self.sizes)} parameters)>"


# ``extern __shared__ [__align__(n)] T name[];`` (dynamic shared memory)
_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?"
                            r"([A-Za-z_][\w\s]*?)\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_]\w*)\s*\[\s*\]\s*;")


def _program_text(source, names):
    source = _EXTERN_SHARED.sub(lambda m: f"{m.group(1)}* const {m.group(2)} = ({m.group(1)}*)PTC_DYNAMIC_SMEM;",
                                source)
    tramps = "".join(f"PTC_HOST_KERNEL({n})\n" for n in names)
    return f"{_read(_HEADER)}\n#line 1 \"cuda_program.cu\"\n{source}\n/* host trampolines */\n{tramps}"


def load(source, kernel_names):
    """Compile (cached) the CUDA C++ ``source`` for the host; returns
    ``{name: handle}`` for ``kernel_names``.  A handle is an int (the address
    of the kernel's trampoline), as the driver interface's handles are;
    :func:`kernel_info` gives its :class:`HostKernel`."""
    names = list(dict.fromkeys(kernel_names))
    for n in names:
        if not isinstance(n, str) or not n.isidentifier():
            raise ValueError(f"kernel names must be C identifiers, got {n!r}")
    if not names:
        raise ValueError("module_load needs at least one kernel name")
    text = _program_text(source, names)
    key = hashlib.sha256(text.encode()).hexdigest()
    with _lock:
        lib = _programs.get(key)
        if lib is not None:
            _count("memory_hits")
    if lib is None:
        _get_runtime()
        path = _build(text, "prog")     # outside the lock: programs may compile in parallel
        with _lock:
            lib = _programs.get(key)
            if lib is None:
                lib = _programs[key] = ctypes.CDLL(path)
    out = {}
    for n in names:
        tramp = ctypes.cast(getattr(lib, f"ptc_host_tramp__{n}"), ctypes.c_void_p).value
        sig = getattr(lib, f"ptc_host_sig__{n}")
        sig.restype = ctypes.POINTER(ctypes.c_longlong)
        sig.argtypes = [ctypes.POINTER(ctypes.c_int)]
        cnt = ctypes.c_int(0)
        p = sig(ctypes.byref(cnt))
        with _lock:
            _handles[tramp] = HostKernel(n, tramp, tuple(p[i] for i in range(cnt.value)), lib)
        out[n] = tramp
    return out


def kernel_info(handle):
    """The :class:`HostKernel` (name, parameter sizes) of a handle from :func:`load`."""
    k = _handles.get(handle) if isinstance(handle, int) else handle
    if not isinstance(k, HostKernel):
        raise TypeError(f"launch needs a kernel handle from module_load, got {handle!r}")
    return k


def _dims(v, what, name):
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3:
        raise ValueError(f"kernel {name}: {what} must have 1 to 3 dimensions, got {v}")
    v = v + (1,) * (3 - len(v))
    if any(x < 1 for x in v):
        raise ValueError(f"kernel {name}: {what} dimensions must be positive, got {v}")
    return v


def launcher(function, grid, block, args, shared_mem=0):
    """A callable that runs ``function`` (a handle from :func:`load`) over
    ``grid``/``block`` with ``args`` (ctypes instances laid out as the kernel's
    C parameters).  The configuration and the arguments are checked now;
    errors while running (a divergent barrier) raise RuntimeError naming the
    kernel."""
    function = kernel_info(function)
    name = function.name
    g = _dims(grid, "grid", name)
    b = _dims(block, "block", name)
    if b[0] * b[1] * b[2] > 1024 or b[0] > 1024 or b[1] > 1024 or b[2] > 64:
        raise ValueError(f"kernel {name}: block {b} exceeds the device limits (1024 threads, z <= 64)")
    if g[1] > 65535 or g[2] > 65535 or g[0] > 2**31 - 1:
        raise ValueError(f"kernel {name}: grid {g} exceeds the device limits")
    if shared_mem < 0 or shared_mem > 227 * 1024:
        raise ValueError(f"kernel {name}: {shared_mem} bytes of dynamic shared memory (at most {227 * 1024}, "
                         f"an H100's opt-in maximum)")
    args = tuple(args)
    if len(args) != len(function.sizes):
        raise TypeError(f"kernel {name} takes {len(function.sizes)} arguments, got {len(args)}")
    for i, (a, size) in enumerate(zip(args, function.sizes)):
        if not isinstance(a, ctypes._SimpleCData) and not isinstance(a, (ctypes.Structure, ctypes.Array)):
            raise TypeError(f"kernel {name}: argument {i} must be a ctypes instance, got {type(a).__name__}")
        if ctypes.sizeof(a) != size:
            raise TypeError(f"kernel {name}: argument {i} is {ctypes.sizeof(a)} bytes ({type(a).__name__}), "
                            f"the parameter is {size} bytes")
    params = (ctypes.c_void_p * max(1, len(args)))(*[ctypes.addressof(a) for a in args])
    grid3 = (ctypes.c_uint * 3)(*g)
    block3 = (ctypes.c_uint * 3)(*b)
    cname = name.encode()
    rt = _get_runtime()
    tramp = function.tramp
    smem = int(shared_mem)
    keep = (function, args)

    def run():
        err = ctypes.create_string_buffer(1024)
        with _launch_lock:
            rc = rt.ptc_rt_launch(tramp, params, grid3, block3, smem, cname, err, len(err))
        if rc:
            msg = err.value.decode(errors="replace")
            if name not in msg:
                msg = f"kernel {name}: {msg}"
            raise RuntimeError(msg)
        return keep is not None
    return run
