"""Hand-made checkpoint files for the serialization tests: pickle opcodes for
torch-format archives (no torch needed), archives in ptcore's earlier own
format (version 1), and a runner that loads hostile files in a subprocess
with time and memory limits (a crash fails the test, not the test run)."""
import copy
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np

import ptcore

# the directory holding the ptcore the tests import: subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


# ---------------------------------------------------------------------------
# pickle opcodes (protocol 2) and torch.save-style zips
# ---------------------------------------------------------------------------

def g(module, name):
    """GLOBAL module.name"""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def s(text):
    """BINUNICODE text"""
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def i(n):
    """LONG1 n (any size)"""
    return b"\x8a" + bytes([16]) + n.to_bytes(16, "little", signed=True)


def tup(*parts):
    return b"(" + b"".join(parts) + b"t"


def storage_pid(key="0", cls="FloatStorage", location="cpu", numel=4):
    return tup(s("storage"), g("torch", cls), s(key), s(location), i(numel)) + b"Q"


def rebuild_v2(pid, offset, size, stride, requires_grad=False):
    return (g("torch._utils", "_rebuild_tensor_v2") +
            tup(pid, i(offset), tup(*map(i, size)), tup(*map(i, stride)),
                b"\x88" if requires_grad else b"\x89",
                g("collections", "OrderedDict") + b")R") + b"R")


def torch_zip(pkl, data=None, prefix="archive", compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        zf.writestr(f"{prefix}/data.pkl", pkl)
        zf.writestr(f"{prefix}/byteorder", "little")
        for k, v in (data or {}).items():
            zf.writestr(f"{prefix}/data/{k}", v)
        zf.writestr(f"{prefix}/version", "3\n")
    return buf.getvalue()


FOUR_FLOATS = {"0": np.arange(4, dtype=np.float32).tobytes()}


def set_declared_size(blob, member, size, compressed=True):
    """``blob`` with the central directory claiming ``size`` bytes for ``member``
    (its uncompressed size, and with ``compressed`` its compressed size too)."""
    b = bytearray(blob)
    pos = b.find(b"PK\x01\x02")
    while pos >= 0:
        n, = struct.unpack("<H", b[pos + 28:pos + 30])
        if b[pos + 46:pos + 46 + n].decode() == member:
            b[pos + 24:pos + 28] = struct.pack("<I", size)
            if compressed:
                b[pos + 20:pos + 24] = struct.pack("<I", size)
        pos = b.find(b"PK\x01\x02", pos + 4)
    return bytes(b)


# ---------------------------------------------------------------------------
# ptcore's earlier own format (version 1: ptcore/data.json + raw storages)
# ---------------------------------------------------------------------------

V1_HEADER = {
    "format": "ptcore", "version": 1, "byteorder": "little",
    "storages": [{"key": "0", "nbytes": 64, "location": "cpu"}],
    "tensors": [{"storage": 0, "dtype": "float32", "shape": [16], "stride": [1], "offset": 0,
                 "requires_grad": False, "parameter": False}],
    "root": {"$": "dict", "items": [["t", {"$": "tensor", "id": 0}]]},
}


def v1_archive(mutate=None, storages=(np.arange(16, dtype=np.float32).tobytes(),),
               data_json=None, version=b"1\n"):
    """A version-1 ptcore checkpoint of ``{"t": arange(16.)}``, its header
    changed by ``mutate(header)`` (or replaced by the bytes ``data_json``)."""
    header = copy.deepcopy(V1_HEADER)
    if mutate is not None:
        mutate(header)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        if version is not None:
            zf.writestr("ptcore/version", version)
        zf.writestr("ptcore/data.json",
                    json.dumps(header) if data_json is None else data_json)
        for k, data in enumerate(storages):
            zf.writestr(f"ptcore/storages/{k}", data)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# loading hostile files in a subprocess
# ---------------------------------------------------------------------------

_PROBE = textwrap.dedent("""
    import io, json, pickle, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
    import ptcore
    out = {{}}
    for name, path in json.load(open(sys.argv[1])).items():
        t0 = time.perf_counter()
        try:
            r = ptcore.load(path, map_location=None)
            res = ["ok", type(r).__name__, ""]
        except BaseException as e:
            res = [type(e).__module__ + "." + type(e).__qualname__,
                   ",".join(c.__name__ for c in type(e).__mro__), str(e)[:400]]
        res.append(time.perf_counter() - t0)
        out[name] = res
    json.dump(out, open(sys.argv[2], "w"))
""")


def load_in_subprocess(tmp_path, files, mem_bytes=3 << 30, timeout=300):
    """Load each of ``files`` (name -> bytes) with ``ptcore.load`` in one fresh
    interpreter whose address space is capped at ``mem_bytes``; returns name ->
    (``"ok"`` or the exception's module.qualname, its MRO names joined by
    commas, its message, seconds).  A crash of the interpreter fails the caller's
    assertion on the return code instead of the test run."""
    paths = {}
    for k, (name, blob) in enumerate(files.items()):
        p = tmp_path / f"probe{k}.pt"
        p.write_bytes(blob)
        paths[name] = str(p)
    spec, result = tmp_path / "probe_in.json", tmp_path / "probe_out.json"
    spec.write_text(json.dumps(paths))
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _PROBE.format(mem=mem_bytes), str(spec),
                        str(result)], env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"the loading subprocess died ({r.returncode}): {r.stderr[-2000:]}"
    return {k: tuple(v) for k, v in json.loads(result.read_text()).items()}
