"""ptcore.utils.safetensors: the safetensors format, checked byte by byte,
round trips of every dtype, zero-copy loading, strict header validation,
and interchange with PyTorch tensors (and the ``safetensors`` package when
it is installed)."""
import json
import struct

import numpy as np
import pytest

import ptcore
from ptcore.utils import safetensors as st
from ptcore.utils.safetensors import SafetensorError

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

try:
    import safetensors.torch as hf_st
except ImportError:  # pragma: no cover
    hf_st = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
needs_hf = pytest.mark.skipif(hf_st is None or torch is None,
                              reason="the safetensors package (and torch) is not installed")

CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
         "int64": "I64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
         "float64": "F64", "complex64": "C64"}
NP_OF = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
         "int32": np.int32, "int64": np.int64, "float16": np.float16, "bfloat16": np.int16,
         "float32": np.float32, "float64": np.float64, "complex64": np.complex64}


def random_array(dt, shape, seed=0):
    rng = np.random.default_rng(seed)
    npdt = np.dtype(NP_OF[dt])
    n = int(np.prod(shape))
    if dt == "bool":
        return (rng.integers(0, 2, size=n) == 1).reshape(shape)
    raw = rng.integers(0, 256, size=n * npdt.itemsize, dtype=np.uint8).tobytes()
    return np.frombuffer(raw, dtype=npdt).reshape(shape).copy()


def pt_tensor(dt, shape, seed=0):
    t = ptcore.from_numpy(random_array(dt, shape, seed))
    return t.view(ptcore.bfloat16) if dt == "bfloat16" else t


def pt_bits(t):
    c = t.contiguous()
    if c.dtype == ptcore.bfloat16:
        c = c.view(ptcore.int16)
    return c.numpy().tobytes()


def make_file(entries, metadata=None, pad=True, order=None):
    """An independent writer: entries is [(name, code, shape, raw bytes)] in data order."""
    header, offset, data = {}, 0, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, code, shape, raw in entries:
        header[name] = {"dtype": code, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    if order is not None:
        header = {k: header[k] for k in order}
    blob = json.dumps(header).encode()
    if pad:
        blob += b" " * (-len(blob) % 8)
    return struct.pack("<Q", len(blob)) + blob + data


# ---------------------------------------------------------------------------
# the bytes on disk
# ---------------------------------------------------------------------------

def test_save_bytes_layout_by_hand():
    a = ptcore.arange(6, dtype=ptcore.float32).view(2, 3)
    b = ptcore.tensor([1, -2], dtype=ptcore.int16)
    c = ptcore.tensor(7, dtype=ptcore.int64)
    data = st.save({"b": b, "a": a, "c": c}, metadata={"format": "pt", "k": "\u00e9"})
    n, = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0
    raw = data[8:8 + n]
    assert raw.rstrip(b" ") == raw[:len(raw.rstrip(b" "))] and raw.startswith(b"{")
    header = json.loads(raw)
    assert list(header) == ["__metadata__", "c", "a", "b"]  # metadata, then largest dtype
    assert header["__metadata__"] == {"format": "pt", "k": "\u00e9"}
    assert header["c"] == {"dtype": "I64", "shape": [], "data_offsets": [0, 8]}
    assert header["a"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [8, 32]}
    assert header["b"] == {"dtype": "I16", "shape": [2], "data_offsets": [32, 36]}
    body = data[8 + n:]
    assert body == (np.int64(7).tobytes() + np.arange(6, dtype="<f4").tobytes() +
                    np.array([1, -2], dtype="<i2").tobytes())
    expected_json = (b'{"__metadata__":{"format":"pt","k":"\xc3\xa9"},'
                     b'"c":{"dtype":"I64","shape":[],"data_offsets":[0,8]},'
                     b'"a":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]},'
                     b'"b":{"dtype":"I16","shape":[2],"data_offsets":[32,36]}}')
    assert raw == expected_json + b" " * (-len(expected_json) % 8)


def test_save_file_equals_save(tmp_path):
    d = {"x": pt_tensor("bfloat16", (3, 5)), "y": pt_tensor("float64", (2,), 1),
         "e": ptcore.zeros(0, 4)}
    p = tmp_path / "a.safetensors"
    st.save_file(d, p, metadata={"a": "b"})
    assert p.read_bytes() == st.save(d, metadata={"a": "b"})
    st.save_file(d, str(p))
    assert p.read_bytes() == st.save(d)
    assert b"__metadata__" not in p.read_bytes()


def test_every_tensor_is_aligned_in_saved_files():
    d = {f"t{i}_{dt}": pt_tensor(dt, (i + 1,), i) for i, dt in enumerate(CODES)}
    data = st.save(d)
    n, = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    for name, info in header.items():
        size = ptcore.tensor([], dtype=getattr(ptcore, name.split("_", 1)[1])).element_size()
        assert (8 + n + info["data_offsets"][0]) % size == 0, name


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", list(CODES))
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 0), (2, 3, 4)], ids=str)
def test_roundtrip_every_dtype_bitwise(tmp_path, dt, shape):
    t = pt_tensor(dt, shape, seed=len(shape))
    d = {"t": t, "other": pt_tensor("uint8", (3,), 9)}
    p = tmp_path / "x.safetensors"
    st.save_file(d, p)
    for r in (st.load_file(p), st.load(p.read_bytes()), st.load(bytearray(p.read_bytes()))):
        assert set(r) == {"t", "other"}
        assert r["t"].dtype == t.dtype and r["t"].shape == t.shape
        assert r["t"].is_contiguous()
        assert pt_bits(r["t"]) == pt_bits(t)
        assert pt_bits(r["other"]) == pt_bits(d["other"])


def test_non_contiguous_source_must_be_made_contiguous():
    t = ptcore.arange(12.0).view(3, 4)
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": t.t()})
    r = st.load(st.save({"t": t.t().contiguous(), "s": t[1]}))
    assert r["t"].tolist() == t.t().tolist() and r["s"].tolist() == t[1].tolist()


def test_load_file_is_zero_copy_and_private(tmp_path):
    a = pt_tensor("float32", (256,), 1)
    b = pt_tensor("int64", (64,), 2)
    p = tmp_path / "z.safetensors"
    st.save_file({"a": a, "b": b}, p)
    before = p.read_bytes()
    n, = struct.unpack("<Q", before[:8])
    header = json.loads(before[8:8 + n])
    r = st.load_file(p)
    # both tensors point into one mapping of the file, at the header's offsets
    delta = r["a"].data_ptr() - r["b"].data_ptr()
    assert delta == header["a"]["data_offsets"][0] - header["b"]["data_offsets"][0]
    assert r["a"].untyped_storage().nbytes() == 1024
    r["a"][0] = 42.0                # copy-on-write: the file is unchanged
    assert r["a"][0].item() == 42.0
    assert p.read_bytes() == before
    assert st.load_file(p)["a"][0].item() == a[0].item()


def test_misaligned_data_is_copied_and_correct():
    vals = np.array([1.5, -2.25, 3.0], dtype="<f8")
    data = make_file([("u", "U8", [3], b"\x01\x02\x03"), ("d", "F64", [3], vals.tobytes())],
                     pad=False)
    r = st.load(data)
    assert r["d"].tolist() == vals.tolist() and r["u"].tolist() == [1, 2, 3]
    assert r["d"].data_ptr() % 8 == 0


def test_independent_writer_any_order_and_unpadded(tmp_path):
    x = random_array("float32", (4, 2), 3)
    y = random_array("bfloat16", (3,), 4)
    z = random_array("bool", (5,), 5)
    data = make_file([("x", "F32", [4, 2], x.tobytes()), ("y", "BF16", [3], y.tobytes()),
                      ("z", "BOOL", [5], z.tobytes())], metadata={"m": "1"}, pad=False,
                     order=["z", "__metadata__", "y", "x"])
    p = tmp_path / "h.safetensors"
    p.write_bytes(data)
    r = st.load_file(p)
    assert r["x"].numpy().tobytes() == x.tobytes()
    assert r["y"].dtype == ptcore.bfloat16 and r["y"].view(ptcore.int16).numpy().tolist() == \
        y.tolist()
    assert r["z"].tolist() == z.tolist()
    with st.safe_open(p, framework="pt") as f:
        assert f.keys() == ["x", "y", "z"]
        assert f.offset_keys() == ["x", "y", "z"]
        assert f.metadata() == {"m": "1"}


# ---------------------------------------------------------------------------
# safe_open
# ---------------------------------------------------------------------------

def test_safe_open_api(tmp_path):
    w = pt_tensor("float32", (4, 6), 7)
    p = tmp_path / "m.safetensors"
    st.save_file({"w": w, "b": ptcore.zeros(4)}, p, metadata={"format": "pt"})
    with st.safe_open(p, framework="pt", device="cpu") as f:
        assert f.keys() == ["b", "w"]
        assert f.metadata() == {"format": "pt"}
        assert pt_bits(f.get_tensor("w")) == pt_bits(w)
        sl = f.get_slice("w")
        assert sl.get_shape() == [4, 6] and sl.get_dtype() == "F32"
        assert pt_bits(sl[1:3, ::2]) == pt_bits(w[1:3, ::2])
        assert pt_bits(sl[2]) == pt_bits(w[2])
        with pytest.raises(SafetensorError, match="does not contain tensor nope"):
            f.get_tensor("nope")
        with pytest.raises(SafetensorError, match="does not contain tensor nope"):
            f.get_slice("nope")
    with st.safe_open(str(p), framework="numpy") as f:
        arr = f.get_tensor("w")
        assert isinstance(arr, np.ndarray) and arr.tobytes() == w.numpy().tobytes()
    with pytest.raises(ValueError, match="framework"):
        st.safe_open(p, framework="tf")
    with pytest.raises(FileNotFoundError):
        st.safe_open(tmp_path / "missing.safetensors")


@pytest.mark.skipif(ptcore.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_device_without_cuda(tmp_path):
    p = tmp_path / "c.safetensors"
    st.save_file({"w": ptcore.ones(2)}, p)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.load_file(p, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.load_file(p, device=0)


def test_unsupported_but_valid_dtypes(tmp_path):
    data = make_file([("u16", "U16", [2], b"\x01\x00\x02\x00"), ("f8", "F8_E4M3", [3], b"abc"),
                      ("ok", "I8", [1], b"\x05")])
    p = tmp_path / "u.safetensors"
    p.write_bytes(data)
    with st.safe_open(p, "pt") as f:
        assert f.keys() == ["f8", "ok", "u16"]
        assert f.get_tensor("ok").tolist() == [5]
        with pytest.raises(TypeError, match="U16"):
            f.get_tensor("u16")
        with pytest.raises(TypeError, match="F8_E4M3"):
            f.get_tensor("f8")


# ---------------------------------------------------------------------------
# errors when saving
# ---------------------------------------------------------------------------

def test_save_errors():
    x = ptcore.arange(10.0)
    with pytest.raises(ValueError, match="Expected a dict"):
        st.save([x])
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        st.save({"a": [1, 2]})
    with pytest.raises(TypeError, match="names must be str"):
        st.save({1: x})
    with pytest.raises(ValueError, match="__metadata__"):
        st.save({"__metadata__": x})
    with pytest.raises(TypeError, match="complex128"):
        st.save({"c": ptcore.zeros(2, dtype=ptcore.complex128)})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"x": x}, metadata={"a": 1})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"x": x}, metadata=[("a", "b")])
    with pytest.raises(RuntimeError, match="share memory.*'a'.*'b'|share memory.*'b'.*'a'"):
        st.save({"a": x, "b": x})
    with pytest.raises(RuntimeError, match="share memory"):
        st.save({"a": x[:6], "b": x[4:]})
    # disjoint views of one storage do not overlap: allowed, and saved as copies
    r = st.load(st.save({"a": x[:5], "b": x[5:]}))
    assert r["a"].tolist() == [0, 1, 2, 3, 4] and r["b"].tolist() == [5, 6, 7, 8, 9]
    assert st.load(st.save({})) == {}


# ---------------------------------------------------------------------------
# corrupt files
# ---------------------------------------------------------------------------

GOOD = make_file([("a", "F32", [2], b"\x00" * 8), ("b", "I16", [2, 2], b"\x01" * 8)],
                 metadata={"k": "v"})


def header_bytes(obj, raw=None):
    blob = raw if raw is not None else json.dumps(obj).encode()
    return struct.pack("<Q", len(blob)) + blob


@pytest.mark.parametrize("data, match", [
    (b"", "HeaderTooSmall"),
    (b"\x01\x00", "HeaderTooSmall"),
    (struct.pack("<Q", 100_000_001) + b"{}", "HeaderTooLarge"),
    (struct.pack("<Q", 2 ** 64 - 1), "HeaderTooLarge"),
    (struct.pack("<Q", 50) + b"{}", "InvalidHeaderLength"),
    (header_bytes(None, b"[1, 2]"), "InvalidHeaderStart"),
    (header_bytes(None, b" {}"), "InvalidHeaderStart"),
    (header_bytes(None, b"{\xff}"), "UTF-8"),
    (header_bytes(None, b"{'a': 1}"), "InvalidHeaderDeserialization"),
    (header_bytes(None, b'{"a": 1} x'), "InvalidHeaderDeserialization"),
    (header_bytes(None, b'{"a": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}, '
                        b'"a": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}')
     + b"\x00" * 4, "duplicate key"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "__metadata__": {"k": 1}}) + b"\x00" * 4, "__metadata__"),
    (header_bytes({"a": 5}), "not an object"),
    (header_bytes({"a": {"dtype": "F128", "shape": [], "data_offsets": [0, 16]}}),
     "unknown dtype"),
    (header_bytes({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}),
     "invalid shape"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}}),
     "invalid shape"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}),
     "invalid data_offsets"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}),
     "invalid data_offsets"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}) + b"\0" * 8,
     "InvalidOffset"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}}) + b"\0" * 6,
     "InvalidOffset"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}) + b"\0" * 8,
     "InvalidOffset"),
    (header_bytes({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}) + b"\0" * 8,
     "TensorInvalidInfo"),
    (header_bytes({"a": {"dtype": "F32", "shape": [2 ** 61, 2 ** 61], "data_offsets": [0, 8]}})
     + b"\0" * 8, "TensorInvalidInfo"),
    (header_bytes({"a": {"dtype": "F32", "shape": [0, 2 ** 70], "data_offsets": [0, 0]}}),
     "invalid shape"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1] * 65, "data_offsets": [0, 4]}})
     + b"\0" * 4, "dimensions"),
    (header_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}) + b"\0" * 4,
     "MetadataIncompleteBuffer"),
    (header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}) + b"\0" * 9,
     "MetadataIncompleteBuffer"),
    (GOOD[:-1], "MetadataIncompleteBuffer"),
    (GOOD[:20], "InvalidHeaderLength"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_corrupt_buffers_raise(tmp_path, data, match):
    with pytest.raises(SafetensorError, match=match):
        st.load(data)
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    with pytest.raises(SafetensorError, match=match):
        st.load_file(p)


def test_every_truncation_of_a_good_file_is_rejected():
    assert st.load(GOOD)["b"].tolist() == [[257, 257], [257, 257]]
    for n in range(len(GOOD)):
        with pytest.raises(SafetensorError):
            st.load(GOOD[:n])


def test_load_type_errors():
    with pytest.raises(TypeError, match="bytes"):
        st.load("not bytes")


# ---------------------------------------------------------------------------
# PyTorch interchange
# ---------------------------------------------------------------------------

def torch_to_pt(t):
    if t.dtype == torch.bfloat16:
        return ptcore.from_numpy(t.view(torch.int16).numpy().copy()).view(ptcore.bfloat16)
    return ptcore.from_numpy(t.numpy().copy())


def read_with_numpy_into_torch(path):
    """A reader independent of ptcore: parse the header, slice a NumPy memmap."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    n = int(np.frombuffer(raw[:8].tobytes(), "<u8")[0])
    header = json.loads(raw[8:8 + n].tobytes())
    header.pop("__metadata__", None)
    out = {}
    np_of = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "BF16": "<i2", "I64": "<i8", "I32": "<i4",
             "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?", "C64": "<c8"}
    for name, info in header.items():
        b, e = info["data_offsets"]
        arr = np.frombuffer(raw[8 + n + b:8 + n + e].tobytes(), dtype=np_of[info["dtype"]])
        t = torch.from_numpy(arr.copy()).reshape(info["shape"])
        out[name] = t.view(torch.bfloat16) if info["dtype"] == "BF16" else t
    return out


@needs_torch
def test_torch_tensors_through_ptcore_writer(tmp_path):
    torch.manual_seed(0)
    src = {
        "f32": torch.randn(3, 4), "f64": torch.randn(5, dtype=torch.float64),
        "f16": torch.randn(2, 2).half(), "bf16": torch.randn(7).bfloat16(),
        "i64": torch.randint(-2 ** 62, 2 ** 62, (4,)),
        "i32": torch.randint(-9, 9, (2, 3), dtype=torch.int32),
        "i16": torch.tensor([-32768, 32767], dtype=torch.int16),
        "i8": torch.tensor([-128, 5], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8), "b": torch.tensor([True, False]),
        "c64": torch.randn(3, dtype=torch.complex64), "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3), "special": torch.tensor([float("nan"), float("inf"), -0.0]),
    }
    p = tmp_path / "t.safetensors"
    st.save_file({k: torch_to_pt(v) for k, v in src.items()}, p, metadata={"from": "torch"})
    back = read_with_numpy_into_torch(p)
    assert set(back) == set(src)
    for k, v in src.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
        a, b = back[k], v
        if a.dtype == torch.bfloat16:
            a, b = a.view(torch.int16), b.view(torch.int16)
        assert a.numpy().tobytes() == b.numpy().tobytes(), k
    loaded = st.load_file(p)
    for k, v in src.items():
        assert pt_bits(loaded[k]) == pt_bits(torch_to_pt(v)), k


@needs_hf
def test_cross_check_with_safetensors_package(tmp_path):
    torch.manual_seed(0)
    src = {"w": torch.randn(3, 4), "h": torch.randn(5).bfloat16(), "i": torch.arange(6),
           "b": torch.tensor([True, False])}
    p = tmp_path / "hf.safetensors"
    hf_st.save_file(src, str(p), metadata={"a": "b"})
    with st.safe_open(p, "pt") as f:
        assert f.metadata() == {"a": "b"}
        for k, v in src.items():
            assert pt_bits(f.get_tensor(k)) == pt_bits(torch_to_pt(v))
    q = tmp_path / "pt.safetensors"
    st.save_file({k: torch_to_pt(v) for k, v in src.items()}, q, metadata={"a": "b"})
    back = hf_st.load_file(str(q))
    for k, v in src.items():
        assert torch.equal(back[k], v)
    assert q.read_bytes() == p.read_bytes()


def test_fuzzed_headers_fail_cleanly():
    import random
    blob = st.save({"a": ptcore.arange(10.0), "b": ptcore.ones(3, dtype=ptcore.bfloat16),
                    "c": ptcore.tensor([True])}, metadata={"x": "y"})
    rng = random.Random(1)
    for _ in range(500):
        bad = bytearray(blob)
        for _ in range(rng.randint(1, 3)):
            k = min(rng.randrange(0, 208), len(bad) - 1)
            bad[k] = rng.choice(b'0123456789-[]{}",:.eFIBU ') if k >= 8 else rng.randrange(256)
        if rng.random() < 0.1:
            bad = bad[:rng.randrange(len(bad))]
        try:
            r = st.load(bytes(bad))
        except (SafetensorError, TypeError):
            continue
        for v in r.values():     # whatever loads is fully readable
            v.clone()
