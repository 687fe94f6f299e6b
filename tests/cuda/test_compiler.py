"""ptcore.cuda.driver.compiler (NVRTC -> cubin, memory + disk cache) and the kernel
library ptcore.cuda.kernels.library.

No GPU is needed: NVRTC compiles without a driver.  NVRTC-dependent tests skip
when cuda-bindings or libnvrtc is missing; the Philox port is checked against
ptcore's CPU generator by compiling the kernel text as host C++ (skipped
without a C++ compiler).
"""
import collections
import ctypes
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ptcore
from ptcore.cuda.driver import compiler as C
from ptcore.cuda.kernels import library as K


def _nvrtc_reason():
    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except ImportError as e:
        return f"cuda-bindings is not installed: {e}"
    ok, why = C.nvrtc_available()
    return None if ok else f"libnvrtc is unusable: {why}"


_NVRTC_WHY = _nvrtc_reason()
needs_nvrtc = pytest.mark.skipif(_NVRTC_WHY is not None, reason=_NVRTC_WHY or "")

TINY = 'extern "C" __global__ void ptc_tiny(float* x) { x[threadIdx.x] += 1.0f; }\n'


def _child_env(**extra):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra)
    return env


def _run_child(code, tmp_path, **extra):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=str(tmp_path), env=_child_env(**extra))
    if proc.returncode != 0 and 'rebuilding the "ptcore" editable package failed' in proc.stderr:
        pytest.skip("the child process could not rebuild the editable ptcore install")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh, empty cache directory and zeroed counters."""
    d = tmp_path / "kcache"
    monkeypatch.setenv("PTCORE_CACHE_DIR", str(d))
    C.clear_memory_cache()
    C.reset_stats()
    yield d
    C.clear_memory_cache()


# ---------------------------------------------------------------------------
# import hygiene
# ---------------------------------------------------------------------------

def test_import_ptcore_does_not_import_cuda(tmp_path):
    code = ("import sys, json, ptcore, ptcore.cuda, ptcore.cuda.driver.compiler, ptcore.cuda.kernels.library\n"
            "n = len(ptcore.cuda.kernels.library.all_kernels())\n"
            "mods = sorted(m for m in sys.modules if m == 'cuda' or m.startswith('cuda.'))\n"
            "print(json.dumps({'mods': mods, 'n': n}))\n")
    out = _run_child(code, tmp_path)
    assert out["mods"] == []
    assert out["n"] > 1000


def test_missing_cuda_bindings_gives_runtime_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    pkg = sys.modules.get("cuda.bindings")
    if pkg is not None and hasattr(pkg, "nvrtc"):
        monkeypatch.delattr(pkg, "nvrtc")
    monkeypatch.setattr(C, "_version_cache", None)
    monkeypatch.setattr(C, "_archs_cache", None)
    with pytest.raises(RuntimeError, match="NVRTC is not available.*cuda-bindings"):
        C.compile(TINY, cache=False)
    with pytest.raises(RuntimeError, match="cuda-bindings"):
        C.nvrtc_version()
    assert C.nvrtc_available()[0] is False


# ---------------------------------------------------------------------------
# kernel library (pure Python)
# ---------------------------------------------------------------------------

def test_kernel_names_unique_deterministic_and_extern_c():
    reg = K.all_kernels()
    assert len(reg) == len(set(reg))
    for name, (fam, src) in reg.items():
        assert src.startswith(f'extern "C" __global__ void {name}('), name
        assert "#include" not in src
        assert name.startswith("ptc_" + fam) or fam == "fill"
    assert "#include" not in K.PRELUDE and "#include" not in K.REDUCE_OPS and "#include" not in K.PHILOX
    assert K.kernel_name("binary", "add", "f32", "c") == "ptc_binary_add_f32_c"
    assert K.kernel_name("cast", None, ("f16", "i64"), "s") == "ptc_cast_f16_i64_s"
    assert K.kernel("ptc_binary_add_f32_c") == reg["ptc_binary_add_f32_c"]
    with pytest.raises(KeyError, match="ptc_nope"):
        K.kernel("ptc_nope")


def test_kernel_coverage():
    reg = K.all_kernels()
    fams = collections.Counter(f for f, _ in reg.values())
    from ptcore.cuda.kernels import nn as _kernels_nn
    assert set(fams) - set(_kernels_nn.FAMILIES) == {"unary", "cast", "binary", "scalar", "ternary",
                                                     "reduce", "scan", "softmax", "index", "fill",
                                                     "random", "sortx", "special"}
    # every op in the tables exists for every supported dtype in both variants
    for name, kinds, _, _ in K.UNARY:
        for dt, (tag, _, _, kind) in K.DTYPES.items():
            for v in "cs":
                assert (f"ptc_unary_{name}_{tag}_{v}" in reg) == (kind in kinds)
    for row in K.BINARY:
        name, kinds = row[:2]
        excl = row[4] if len(row) > 4 else ()
        for dt, (tag, _, _, kind) in K.DTYPES.items():
            for v in "cs":
                assert (f"ptc_binary_{name}_{tag}_{v}" in reg) == (kind in kinds and dt not in excl)
    for name, kinds, _ in K.SCALAR:
        for dt, (tag, _, _, kind) in K.DTYPES.items():
            for v in "cs":
                assert (f"ptc_scalar_{name}_{tag}_{v}" in reg) == (kind in kinds)
    assert {r[0] for r in K.SCALAR} == {"add", "sub", "rsub", "mul", "div", "rdiv", "pow", "rpow",
                                        "rdiv_floor", "rremainder"}
    for name, kinds, _ in K.SCALAR_CMP:
        for dt, (tag, _, _, kind) in K.DTYPES.items():
            for v in "cs":
                assert (f"ptc_scalar_{name}_{tag}_{v}" in reg) == (kind in kinds)
    assert {r[0] for r in K.SCALAR_CMP} == {"eq", "ne", "lt", "le", "gt", "ge"}
    tags = [K.TAGS[d] for d in K.DTYPES]
    for a in tags:
        for b in tags:
            assert f"ptc_cast_{a}_{b}_c" in reg and f"ptc_cast_{a}_{b}_s" in reg
    # reduction output dtypes follow PyTorch
    assert "ptc_reduce_sum_i32_i64_c" in reg and "ptc_reduce_sum_b_i64_s" in reg
    assert "ptc_reduce_sum_f16_f16_c" in reg and "ptc_reduce_argmax_bf16_i64_s" in reg
    assert "ptc_reduce_all_u8_u8_c" in reg and "ptc_reduce_all_f32_b_c" in reg
    assert "ptc_scan_cumsum_i16_i64_s" in reg
    for dt in ("f16", "bf16", "f32", "f64"):
        assert f"ptc_random_uniform_{dt}_c" in reg and f"ptc_random_normal_{dt}_c" in reg


def test_strided_abi_struct_in_source():
    # the documented ABI: ptc_params then ptc_strided<K> last, operands out first
    src = K.kernel("ptc_ternary_where_f32_s")[1]
    assert ("(long long n, float* out, const unsigned char* in0, const float* in1, const float* in2, "
            "ptc_params p, ptc_strided<4> ix)") in src
    src = K.kernel("ptc_reduce_var_f16_f16_s")[1]
    assert ("(long long M, long long L, ptc_half* out, const ptc_half* in, ptc_params p, "
            "ptc_strided<2> ix, long long in_red_stride)") in src
    assert "struct ptc_params { double d0, d1, d2; long long i0, i1; };" in K.PRELUDE
    assert f"#define PTC_MAX_DIMS {K.MAX_DIMS}" in K.PRELUDE


def test_program_source_pulls_family_preludes_once():
    src = K.program_source(["ptc_reduce_sum_f32_f32_c", "ptc_scan_cumsum_f32_f32_c", "ptc_unary_exp_f32_c"])
    assert src.count("struct ptc_r_sum") == 1
    assert "ptc_philox_block" not in src
    src = K.program_source(["ptc_random_normal_f32_c"])
    assert src.count("void ptc_philox_block(") == 1 and "ptc_r_sum" not in src


def test_philox_host_helpers():
    assert K.philox_blocks("float32", 5) == 2 and K.philox_blocks("float16", 4) == 1
    assert K.philox_blocks("float64", 5) == 3 and K.philox_blocks("float64", 0) == 0
    assert K.philox_uniform_args("float64", 0, 1) == (0.0, 1.0, 1.0, np.nextafter(1.0, 0.0))
    assert K.philox_uniform_args("float32", 0, 1)[3] == float(np.nextafter(np.float32(1), np.float32(0)))
    assert K.philox_uniform_args("float16", 0, 1)[3] == 1 - 2.0 ** -11
    assert K.philox_uniform_args("bfloat16", 0, 1)[3] == 1 - 2.0 ** -8
    assert K.philox_uniform_args("float32", 2.0, 2.0)[3] == 2.0   # nothing below high in [low, high)
    with pytest.raises(TypeError, match="int32"):
        K.philox_blocks("int32", 3)


# ---------------------------------------------------------------------------
# Philox port == CPU generator (the kernel text compiled as host C++)
# ---------------------------------------------------------------------------
_HOST_SHIMS = r'''
#include <string.h>
#include <math.h>
#define __device__
#define __forceinline__ inline
struct ptc_half { unsigned short bits; };
struct ptc_bfloat16 { unsigned short bits; };
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
static inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
static inline double __ddiv_rn(double a, double b) { volatile double r = a / b; return r; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
static inline float ptc_u2f(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned ptc_f2u(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
/* RNE conversions (what cvt.rn.f16.f32 / cvt.rn.bf16.f32 do for finite values) */
static inline float ptc_h2f(ptc_half h) {
    unsigned sign = (unsigned)(h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu, u;
    if (e == 0) {
        if (m == 0) u = sign;
        else { int k = -1; do { k++; m <<= 1; } while ((m & 0x400u) == 0); m &= 0x3ffu;
               u = sign | ((unsigned)(127 - 15 - k) << 23) | (m << 13); }
    } else if (e == 0x1f) u = sign | 0x7f800000u | (m << 13);
    else u = sign | ((e + 112) << 23) | (m << 13);
    return ptc_u2f(u);
}
static inline ptc_half ptc_f2h(float f) {
    unsigned u = ptc_f2u(f), a = u & 0x7fffffffu; unsigned short sign = (unsigned short)((u >> 16) & 0x8000u);
    ptc_half h;
    if (a >= 0x477ff000u) { h.bits = sign | 0x7c00u; return h; }
    if (a < 0x38800000u) {
        unsigned e = a >> 23; if (e < 102) { h.bits = sign; return h; }
        unsigned m = (a & 0x7fffffu) | 0x800000u, sh = 126 - e, hm = m >> sh, rem = m & ((1u << sh) - 1u),
                 hw = 1u << (sh - 1);
        if (rem > hw || (rem == hw && (hm & 1u))) hm++;
        h.bits = sign | hm; return h;
    }
    unsigned r = a + 0xfffu + ((a >> 13) & 1u); r -= (112u << 23); h.bits = sign | (r >> 13); return h;
}
static inline float ptc_bf2f(ptc_bfloat16 b) { return ptc_u2f((unsigned)b.bits << 16); }
static inline ptc_bfloat16 ptc_f2bf(float f) {
    unsigned u = ptc_f2u(f); ptc_bfloat16 b; u += 0x7fffu + ((u >> 16) & 1u); b.bits = (unsigned short)(u >> 16);
    return b;
}
#define PTC_FOR(i, n) for (long long i = 0; i < (n); ++i)
'''


@pytest.fixture(scope="module")
def philox_host_lib(tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler to build the host copy of the Philox kernels")
    names = [n for n, (f, _) in K.all_kernels().items() if f == "random"]
    extra = dict.fromkeys(K._KERNEL_PRELUDE[n] for n in names if n in K._KERNEL_PRELUDE)   # the samplers'
    src = _HOST_SHIMS + K.PHILOX + "".join(extra) + "".join(K.kernel(n)[1] for n in names)
    src = src.replace('extern "C" __global__', 'extern "C"')
    d = tmp_path_factory.mktemp("philox_host")
    c, so = d / "philox.cpp", d / "philox.so"
    c.write_text(src)
    proc = subprocess.run([cxx, "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-w", str(c), "-o", str(so)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"host C++ compiler failed: {proc.stderr[-500:]}")
    return ctypes.CDLL(str(so))


_PT = {"float16": 6, "bfloat16": 7, "float32": 8, "float64": 9}
_NP = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64}
_STREAMS = [(0, 0, 1), (42, 7, 1001), (2**63 + 12345, 2**64 - 3, 37), (123456789, 5, 4096)]


@pytest.mark.parametrize("dtype", list(_PT))
def test_philox_kernels_match_cpu_generator(philox_host_lib, dtype):
    from ptcore._ops.kernels import _random as R
    tag = K.TAGS[dtype]
    uni = getattr(philox_host_lib, f"ptc_random_uniform_{tag}_c")
    nor = getattr(philox_host_lib, f"ptc_random_normal_{tag}_c")
    uni.restype = nor.restype = None
    for seed, offset, n in _STREAMS:
        for low, high in [(0.0, 1.0), (-3.0, 2.5), (1.0, 1.0), (0.99, 1.0)]:
            ref, got = np.zeros(n, _NP[dtype]), np.ones(n, _NP[dtype])
            new_off = R.fill_uniform_addr(ref.ctypes.data, _PT[dtype], n, seed, offset, low, high)
            assert new_off == (offset + K.philox_blocks(dtype, n)) % 2**64
            lo, rng, hi, clamp = K.philox_uniform_args(dtype, low, high)
            uni(ctypes.c_longlong(n), ctypes.c_void_p(got.ctypes.data), ctypes.c_ulonglong(seed),
                ctypes.c_ulonglong(offset), ctypes.c_void_p(None), ctypes.c_double(lo), ctypes.c_double(rng), ctypes.c_double(hi),
                ctypes.c_double(clamp))
            assert ref.tobytes() == got.tobytes(), (dtype, seed, offset, n, low, high)
        for mean, std in [(0.0, 1.0), (2.0, 0.5)]:
            ref, got = np.zeros(n, _NP[dtype]), np.ones(n, _NP[dtype])
            new_off = R.fill_normal_addr(ref.ctypes.data, _PT[dtype], n, seed, offset, mean, std)
            assert new_off == (offset + K.philox_blocks(dtype, n)) % 2**64
            nor(ctypes.c_longlong(n), ctypes.c_void_p(got.ctypes.data), ctypes.c_ulonglong(seed),
                ctypes.c_ulonglong(offset), ctypes.c_void_p(None), ctypes.c_double(mean), ctypes.c_double(std))
            assert ref.tobytes() == got.tobytes(), (dtype, seed, offset, n, mean, std)


# ---------------------------------------------------------------------------
# NVRTC compilation of the whole library
# ---------------------------------------------------------------------------

def _batches(names, size):
    for i in range(0, len(names), size):
        yield names[i:i + size]


def _compile_all(jobs):
    """Compile each ``(names, options)`` of ``jobs`` (uncached) in as many
    threads as the machine has cores (up to 4: NVRTC releases the GIL, so the
    library's few minutes of compiling share the cores); every result is a cubin."""
    from concurrent.futures import ThreadPoolExecutor

    def one(job):
        names, options = job
        return C.compile(K.program_source(names), names, arch="sm_90", options=options,
                         cache=False)

    with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        cubins = list(pool.map(one, jobs))
    assert len(cubins) == len(jobs)
    for c in cubins:
        assert c[:4] == b"\x7fELF"


@needs_nvrtc
def test_every_kernel_compiles_to_sm90_cubin():
    """All kernels (all ops x dtypes x variants), NVRTC's fast-compile mode."""
    reg = K.all_kernels()
    by_fam = collections.defaultdict(list)
    for n, (fam, _) in reg.items():
        by_fam[fam].append(n)
    jobs = [(chunk, ("--Ofast-compile=max",)) for names in by_fam.values()
            for chunk in _batches(names, 500)]
    assert sum(len(names) for names, _ in jobs) == len(reg)
    _compile_all(jobs)


def _sample_per_op():
    """One dtype (float32 where it exists) of every (family, op), both variants."""
    reg = K.all_kernels()
    seen = {}
    for n, (fam, _) in reg.items():
        parts = n.split("_")
        variant = parts[-1]
        # the op key: the name without dtype tags and variant
        key = (fam, "_".join(p for p in parts[:-1] if p not in K.TAGS.values()), variant)
        cur = seen.get(key)
        if cur is None or ("_f32" in n and "_f32" not in cur) or ("_f16" in n and "_f32" not in cur
                                                                   and "_f16" not in cur):
            seen[key] = n
    return sorted(seen.values())


@needs_nvrtc
def test_kernel_sample_compiles_with_production_options():
    """Every (family, op) in both variants with the default (optimising) options."""
    names = _sample_per_op()
    assert len(names) > 250
    _compile_all([(chunk, ()) for chunk in _batches(names, 100)])
    # f16/bf16 conversions take the software path on sm_75 (no cvt.rn.bf16.f32 there)
    chunk = ["ptc_cast_f32_bf16_c", "ptc_binary_add_bf16_s", "ptc_reduce_sum_bf16_bf16_c"]
    assert C.compile(K.program_source(chunk), chunk, arch="sm_75", cache=False)[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# compiler behaviour
# ---------------------------------------------------------------------------

@needs_nvrtc
def test_compile_returns_elf_cubin_with_kernel(cache):
    cubin = C.compile(TINY, ["ptc_tiny"])
    assert cubin[:4] == b"\x7fELF"
    assert b"ptc_tiny" in cubin
    assert C.stats()["compiles"] == 1
    with pytest.raises(RuntimeError, match="ptc_other"):
        C.compile(TINY, ["ptc_other"])
    assert C.compile(TINY, arch=90) == cubin and C.compile(TINY, arch=(9, 0)) == cubin


@needs_nvrtc
def test_unsupported_arch_is_a_clear_error():
    with pytest.raises(ValueError, match=r"sm_50.*supported architectures are .*sm_90"):
        C.compile(TINY, arch="sm_50", cache=False)
    with pytest.raises(ValueError, match="never PTX"):
        C.compile(TINY, arch="compute_90", cache=False)
    with pytest.raises(ValueError, match="not a CUDA architecture"):
        C.compile(TINY, arch="hopper", cache=False)
    with pytest.raises(ValueError, match="arch="):
        C.compile(TINY, options=["-arch=sm_80"], cache=False)
    assert 90 in C.supported_archs() and C.nvrtc_version() >= (13, 0)


@needs_nvrtc
def test_compile_error_contains_log(cache):
    bad = 'extern "C" __global__ void k(float* x) { x[0] = undefined_symbol_xyz; }\n'
    with pytest.raises(RuntimeError, match=r"(?s)NVRTC failed to compile.*sm_90.*undefined_symbol_xyz"):
        C.compile(bad)
    assert C.stats()["compiles"] == 0
    assert not list(cache.glob("*.cubin")) if cache.exists() else True


@needs_nvrtc
def test_cache_key_depends_on_every_component():
    base = dict(source=TINY, options=(), arch="sm_90", nvrtc_ver=(13, 5), ptcore_version="1.0")
    k0 = C.cache_key(**base)
    assert k0 == C.cache_key(**base) and len(k0) == 64
    variants = [dict(source=TINY + " "), dict(options=("-lineinfo",)), dict(arch="sm_80"),
                dict(nvrtc_ver=(13, 6)), dict(ptcore_version="1.1")]
    keys = {k0}
    for v in variants:
        keys.add(C.cache_key(**{**base, **v}))
    assert len(keys) == 1 + len(variants)
    assert C.cache_key(TINY) == C.cache_key(TINY, (), "sm_90", C.nvrtc_version(), ptcore.__version__)


@needs_nvrtc
def test_memory_and_disk_cache(cache):
    a = C.compile(TINY)
    s = C.stats()
    assert (s["compiles"], s["memory_hits"], s["disk_hits"], s["disk_writes"]) == (1, 0, 0, 1)
    assert C.compile(TINY) == a
    assert C.stats()["memory_hits"] == 1 and C.stats()["compiles"] == 1
    C.clear_memory_cache()
    assert C.compile(TINY) == a
    s = C.stats()
    assert (s["compiles"], s["disk_hits"]) == (1, 1)
    # atomic write: exactly the entry, no temporary files left behind
    files = sorted(p.name for p in cache.iterdir())
    assert files == [C.cache_key(TINY) + ".cubin"]
    data = (cache / files[0]).read_bytes()
    assert data.startswith(b"PTCUBIN1") and data.endswith(a)
    # a different arch is a different entry
    C.compile(TINY, arch="sm_80")
    assert len(list(cache.glob("*.cubin"))) == 2 and C.stats()["compiles"] == 2


@needs_nvrtc
@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_disk_entry_is_recompiled(cache, damage):
    good = C.compile(TINY)
    path = cache / (C.cache_key(TINY) + ".cubin")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "flip":
        b = bytearray(data)
        b[-100] ^= 0xFF
        path.write_bytes(bytes(b))
    elif damage == "garbage":
        path.write_bytes(b"\x7fELF" + os.urandom(64))
    else:
        path.write_bytes(b"")
    C.clear_memory_cache()
    C.reset_stats()
    assert C.compile(TINY) == good
    s = C.stats()
    assert s["compiles"] == 1 and s["disk_hits"] == 0 and s["disk_corrupt"] == 1
    assert path.read_bytes() == data            # rewritten intact
    assert [p.name for p in cache.iterdir()] == [path.name]


@needs_nvrtc
def test_unwritable_cache_dir_degrades_to_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("PTCORE_CACHE_DIR", str(blocker / "kernels"))
    C.clear_memory_cache()
    C.reset_stats()
    a = C.compile(TINY)
    assert a[:4] == b"\x7fELF"
    assert C.compile(TINY) == a
    s = C.stats()
    assert s["compiles"] == 1 and s["memory_hits"] == 1 and s["disk_write_errors"] == 1
    assert s["disk_writes"] == 0
    C.clear_memory_cache()


@needs_nvrtc
def test_second_process_compiles_nothing(cache, tmp_path):
    names = ["ptc_binary_add_f32_c", "ptc_reduce_sum_f16_f16_s"]
    src = K.program_source(names)
    C.compile(src, names)
    assert C.stats()["compiles"] == 1
    code = ("import json\n"
            "from ptcore.cuda.driver import compiler as C\nfrom ptcore.cuda.kernels import library as K\n"
            f"names = {names!r}\n"
            "b = C.compile(K.program_source(names), names)\n"
            "s = C.stats(); s['elf'] = b[:4] == b'\\x7fELF'\n"
            "print(json.dumps(s))\n")
    out = _run_child(code, tmp_path, PTCORE_CACHE_DIR=str(cache))
    assert out["compiles"] == 0 and out["disk_hits"] == 1 and out["elf"]


def test_cache_dir_default_and_env(monkeypatch):
    monkeypatch.delenv("PTCORE_CACHE_DIR", raising=False)
    assert C.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "ptcore", "kernels")
    monkeypatch.setenv("PTCORE_CACHE_DIR", "/some/where")
    assert C.cache_dir() == "/some/where"


# ---------------------------------------------------------------------------
# host side of the ABI
# ---------------------------------------------------------------------------

def _offsets(sizes, strides, i):
    """Python copy of the prelude's ptc_offsets (dim 0 outermost)."""
    o = [0] * len(strides)
    for d in range(len(sizes) - 1, -1, -1):
        if d == 0:
            c = i
        else:
            i, c = divmod(i, sizes[d])
        for k, st in enumerate(strides):
            o[k] += c * st[d]
    return o


def test_pack_params_and_strided_layout():
    import struct
    b = K.pack_params(1.5, -2.0, 3.25, -7, 2**40)
    assert len(b) == 40 and struct.unpack("<3d2q", b) == (1.5, -2.0, 3.25, -7, 2**40)
    b = K.pack_strided([2, 3], [[3, 1], [1, 2], [0, 5]])
    assert len(b) == 8 + 8 * K.MAX_DIMS * 4
    vals = struct.unpack(f"<{len(b) // 8}q", b)
    M = K.MAX_DIMS
    assert vals[0] == 2 and vals[1:3] == (2, 3) and vals[1 + M:1 + M + 2] == (3, 1)
    assert vals[1 + 2 * M:1 + 2 * M + 2] == (1, 2) and vals[1 + 3 * M:1 + 3 * M + 2] == (0, 5)
    with pytest.raises(ValueError, match="1 to 8 dims"):
        K.pack_strided([2] * 9, [[1] * 9])
    with pytest.raises(ValueError, match="operand 1 has 1 strides for 2 dims"):
        K.pack_strided([2, 2], [[2, 1], [1]])


@pytest.mark.parametrize("seed", range(6))
def test_collapse_dims_preserves_every_offset(seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 7))
    sizes = [int(s) for s in rng.integers(1, 4, ndim)]
    # out C-contiguous, in0 a permuted / sliced layout, in1 broadcast along random dims
    out = [int(np.prod(sizes[d + 1:])) for d in range(ndim)]
    perm = rng.permutation(ndim)
    base = [int(np.prod([sizes[p] for p in perm[j + 1:]])) for j in range(ndim)]
    in0 = [0] * ndim
    for j, p in enumerate(perm):
        in0[p] = base[j] * (2 if seed % 2 else 1)
    in1 = [0 if rng.random() < 0.5 else out[d] for d in range(ndim)]
    strides = [out, in0, in1]
    cs, cst = K.collapse_dims(sizes, strides)
    assert 1 <= len(cs) <= ndim and int(np.prod(cs)) == int(np.prod(sizes))
    n = int(np.prod(sizes))
    for i in range(n):
        assert _offsets(cs, cst, i) == _offsets(sizes, strides, i)
    if seed == 0:
        assert K.collapse_dims([4, 5, 6], [[30, 6, 1]]) == ([120], [[1]])
        assert K.collapse_dims([1, 1], [[1, 1], [0, 0]]) == ([1], [[0], [0]])
        assert K.collapse_dims([3, 0], [[1, 1]]) == ([0], [[0]])
        with pytest.raises(ValueError, match="9 dims remain"):
            K.collapse_dims([2] * 9, [[3 ** (8 - d) for d in range(9)]])
