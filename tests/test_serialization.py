"""ptcore.save / ptcore.load: round trips (every dtype, shared storages,
containers, parameters, map_location, mmap), validation of corrupt and
malicious files, and reading checkpoints written by torch.save with a
restricted unpickler.  What torch.load makes of ptcore's files is in
test_serialization_torch_format.py, ptcore's earlier own format in
test_serialization_ptcore_v1.py."""
import collections
import io
import math
import os
import pathlib
import pickle
import struct
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore import serialization

from checkpoint_files import (  # noqa: E402
    FOUR_FLOATS, g, i, rebuild_v2, s, storage_pid, torch_zip, tup,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
NP_OF = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
         "int32": np.int32, "int64": np.int64, "float16": np.float16, "bfloat16": np.int16,
         "float32": np.float32, "float64": np.float64, "complex64": np.complex64,
         "complex128": np.complex128}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def random_array(dt, shape, seed=0):
    """Random bit patterns (NaNs, infs, denormals included) as a NumPy array;
    bfloat16 as its int16 bits."""
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
    """The logical values of a ptcore tensor as bytes (bit-exact comparisons)."""
    c = t.detach().contiguous()
    if c.dtype == ptcore.bfloat16:
        c = c.view(ptcore.int16)
    return c.numpy().tobytes()


def torch_bits(t):
    c = t.detach().contiguous()
    if c.dtype == torch.bfloat16:
        c = c.view(torch.int16)
    return c.numpy().tobytes()


def assert_same_pt(a, b):
    assert isinstance(b, ptcore.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert pt_bits(a) == pt_bits(b)


def assert_matches_torch(p, t):
    assert isinstance(p, ptcore.Tensor), type(p)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    assert tuple(p.stride()) == tuple(t.stride())
    assert p.storage_offset() == t.storage_offset()
    assert p.requires_grad == t.requires_grad
    assert pt_bits(p) == torch_bits(t)


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    buf.seek(0)
    return ptcore.load(buf, **load_kw)


def saved_bytes(obj):
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    return buf.getvalue()


def rewrite_zip(blob, edit):
    """Re-pack a zip archive after ``edit(name, data) -> data or None (drop)``;
    the CRCs are recomputed, so only the loader's own validation can object."""
    src = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = edit(info.filename, src.read(info))
            if data is not None:
                dst.writestr(info.filename, data)
    return out.getvalue()


def load_bytes(blob, **kw):
    return ptcore.load(io.BytesIO(blob), **kw)


# ---------------------------------------------------------------------------
# ptcore format: round trips
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 2), (4, 5, 3)], ids=str)
def test_roundtrip_every_dtype_bitwise(dt, shape):
    t = pt_tensor(dt, shape, seed=len(shape))
    r = roundtrip(t)
    assert_same_pt(t, r)
    assert r.stride() == t.stride() and r.storage_offset() == 0


@pytest.mark.parametrize("dt", ["float32", "bfloat16", "complex128", "bool", "int16"])
def test_roundtrip_non_contiguous_keeps_layout(dt):
    base = pt_tensor(dt, (6, 8), seed=3)
    views = [base.t(), base[1::2, ::3], base[:, 5], base[4], base.view(8, 6)[2:, 1:4],
             base.unsqueeze(0).expand(3, 6, 8)]
    out = roundtrip(views)
    for v, r in zip(views, out):
        assert_same_pt(v, r)
        assert r.stride() == v.stride()
        assert r.storage_offset() == v.storage_offset()
    # one storage for all the views, as saved
    st = out[0].untyped_storage()
    assert all(r.untyped_storage() is st for r in out)
    assert st.nbytes() == base.untyped_storage().nbytes()


def test_views_keep_sharing_after_load():
    x = ptcore.arange(12.0)
    obj = {"x": x, "row": x.view(3, 4)[1], "tail": x[6:], "xt": x.view(3, 4).t(),
           "other": ptcore.ones(2)}
    r = roundtrip(obj)
    assert r["row"].untyped_storage() is r["x"].untyped_storage()
    assert r["tail"].untyped_storage() is r["x"].untyped_storage()
    assert r["other"].untyped_storage() is not r["x"].untyped_storage()
    r["x"][7] = -5.0
    assert r["row"][3].item() == -5.0 and r["tail"][1].item() == -5.0
    assert r["xt"][3, 1].item() == -5.0


def test_same_tensor_object_loads_as_one_object():
    w = ptcore.randn(3, 3)
    r = roundtrip({"a": w, "b": w, "l": [w]})
    assert r["a"] is r["b"] and r["l"][0] is r["a"]


def test_storage_objects_roundtrip():
    x = ptcore.arange(5, dtype=ptcore.int32)
    r = roundtrip({"s": x.untyped_storage(), "x": x})
    assert isinstance(r["s"], ptcore.UntypedStorage)
    assert r["s"] is r["x"].untyped_storage()
    assert r["s"].tolist() == x.untyped_storage().tolist()


def test_nested_containers_and_scalars():
    od = collections.OrderedDict([("z", 1), ("a", 2), ("m", 3)])
    od._metadata = {"": {"version": 1}}
    obj = {
        "int": 3, "big": 2 ** 100, "neg": -7, "bool": True, "none": None, "str": "héllo \u2603",
        "float": 0.1, "negzero": -0.0, "nan": float("nan"), "inf": float("inf"),
        "ninf": float("-inf"), "complex": complex(1.5, float("nan")), "bytes": b"\x00\xff",
        "bytearray": bytearray(b"ab"), "tuple": (1, (2, [3, (4,)])), "list": [1, [2, [3]]],
        "set": {1, 2, 3}, "odict": od,
        "intkeys": {0: "a", 1: "b", -3: "c"}, "mixedkeys": {(1, "x"): 1, None: 2, 1.5: 3,
                                                           False: 4},
        "dtype": ptcore.bfloat16, "device": ptcore.device("cpu"),
        "cuda_device": ptcore.device("cuda", 1), "size": ptcore.Size([2, 3]),
        "empty": [{}, (), [], set()],
    }
    r = roundtrip(obj)
    assert list(r) == list(obj)
    for k in ("int", "big", "neg", "bool", "none", "str", "float", "bytes", "bytearray",
              "tuple", "list", "set", "intkeys", "mixedkeys", "dtype", "device",
              "cuda_device", "size", "empty"):
        assert r[k] == obj[k], k
        assert type(r[k]) is type(obj[k]), k
    assert type(r["tuple"][1][1][1]) is tuple and type(r["list"][1]) is list
    assert r["bool"] is True and type(r["int"]) is int
    assert math.copysign(1.0, r["negzero"]) == -1.0
    assert math.isnan(r["nan"]) and r["inf"] == math.inf and r["ninf"] == -math.inf
    assert r["complex"].real == 1.5 and math.isnan(r["complex"].imag)
    assert type(r["odict"]) is collections.OrderedDict and list(r["odict"]) == ["z", "a", "m"]
    assert r["odict"]._metadata == {"": {"version": 1}}
    assert list(r["mixedkeys"]) == list(obj["mixedkeys"])
    assert r["dtype"] is ptcore.bfloat16
    assert isinstance(r["size"], ptcore.Size)
    assert isinstance(r["device"], ptcore.device)


def test_floats_roundtrip_exactly():
    vals = [0.1, 1 / 3, 5e-324, 1.7976931348623157e308, -2.5e-10, 1e16, 123456789.123456789]
    r = roundtrip(vals)
    assert [struct.pack("<d", v) for v in r] == [struct.pack("<d", v) for v in vals]


def test_requires_grad_flags_and_parameters():
    a = ptcore.randn(2, 3)
    a.requires_grad = True
    b = ptcore.randn(2)
    obj = {"a": a, "b": b, "view": a.detach()[0]}
    try:
        from ptcore.nn.parameter import Parameter
    except ImportError:
        Parameter = None
    if Parameter is not None:
        obj["p"] = Parameter(ptcore.randn(4))
        obj["frozen"] = Parameter(ptcore.randn(4), requires_grad=False)
    r = roundtrip(obj)
    assert r["a"].requires_grad is True and r["b"].requires_grad is False
    assert r["view"].requires_grad is False
    assert_same_pt(a.detach(), r["a"].detach())
    if Parameter is not None:
        assert isinstance(r["p"], Parameter) and r["p"].requires_grad
        assert isinstance(r["frozen"], Parameter) and not r["frozen"].requires_grad


def test_training_checkpoint_shape():
    w = ptcore.randn(4, 3)
    ckpt = {
        "epoch": 7, "step": 12345, "best_loss": 0.123,
        "model": collections.OrderedDict([("fc.weight", w), ("fc.bias", ptcore.zeros(4)),
                                          ("bn.num_batches_tracked", ptcore.tensor(17))]),
        "optimizer": {"state": {0: {"step": ptcore.tensor(3.0), "exp_avg": ptcore.ones(4, 3)}},
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1]}]},
        "args": {"name": "run1", "tags": ["a", "b"]},
    }
    r = roundtrip(ckpt)
    assert r["epoch"] == 7 and r["best_loss"] == 0.123 and r["args"] == ckpt["args"]
    assert list(r["model"]) == list(ckpt["model"])
    assert_same_pt(w, r["model"]["fc.weight"])
    assert r["model"]["bn.num_batches_tracked"].dtype == ptcore.int64
    assert r["model"]["bn.num_batches_tracked"].item() == 17
    st = r["optimizer"]["state"][0]
    assert_same_pt(ckpt["optimizer"]["state"][0]["exp_avg"], st["exp_avg"])
    assert r["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)


def test_paths_and_file_objects(tmp_path):
    t = ptcore.arange(10, dtype=ptcore.int64)
    p = tmp_path / "a.pt"
    ptcore.save(t, p)                 # os.PathLike
    assert_same_pt(t, ptcore.load(p))
    ptcore.save(t, str(p))            # str
    assert_same_pt(t, ptcore.load(str(p)))
    with open(p, "wb") as fh:         # an open binary file
        ptcore.save({"t": t}, fh)
    with open(p, "rb") as fh:
        assert_same_pt(t, ptcore.load(fh)["t"])
    # extra torch.save arguments are accepted and ignored
    buf = io.BytesIO()
    ptcore.save(t, buf, pickle_module=pickle, pickle_protocol=4,
                _use_new_zipfile_serialization=True)
    buf.seek(0)
    assert_same_pt(t, ptcore.load(buf, pickle_module=pickle))
    buf.seek(0)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):     # (as torch)
        ptcore.load(buf, pickle_module=pickle, weights_only=True)


def test_file_object_not_at_start():
    buf = io.BytesIO()
    buf.write(b"junk")
    ptcore.save([ptcore.ones(3)], buf)
    buf.seek(4)
    assert_same_pt(ptcore.ones(3), ptcore.load(buf)[0])


def test_save_to_unseekable_stream():
    class Sink(io.RawIOBase):
        def __init__(self):
            self.data = bytearray()

        def writable(self):
            return True

        def write(self, b):
            self.data += bytes(b)
            return len(b)

    s = Sink()
    t = ptcore.randn(5, 2)
    ptcore.save({"t": t}, s)
    assert_same_pt(t, load_bytes(bytes(s.data))["t"])


def test_archive_layout_version_and_alignment(tmp_path):
    x = ptcore.randn(3, 5)
    obj = {"a": x, "b": ptcore.ones(7, dtype=ptcore.int8), "c": x[1]}
    blob = saved_bytes(obj)
    assert blob[:4] == b"PK\x03\x04" and blob[30:46] == b"archive/data.pkl"
    zf = zipfile.ZipFile(io.BytesIO(blob))
    assert zf.namelist() == ["archive/data.pkl", "archive/.format_version",
                             "archive/.storage_alignment", "archive/byteorder", "archive/data/0",
                             "archive/data/1", "archive/version",
                             "archive/.data/serialization_id"]
    assert [zf.read(f"archive/{n}") for n in (".format_version", ".storage_alignment",
                                              "byteorder", "version")] == \
        [b"1", b"64", b"little", b"3\n"]
    assert len(zf.read("archive/.data/serialization_id")) == 40
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        h = info.header_offset
        n, e = struct.unpack("<HH", blob[h + 26:h + 30])
        start = h + 30 + n + e
        assert start % 64 == 0                      # every record, as torch aligns them
        assert blob[start:start + info.file_size] == zf.read(info)
    assert zf.read("archive/data/0") == x.numpy().tobytes()
    assert zf.read("archive/data/1") == bytes([1] * 7)
    # a path names the folder after the file, as torch does
    ptcore.save(obj, tmp_path / "model.v2.pt")
    names = zipfile.ZipFile(tmp_path / "model.v2.pt").namelist()
    assert names[0] == "model.v2/data.pkl" and names[-1] == "model.v2/.data/serialization_id"


def _local_objects():
    class Local:
        pass

    def inner(x):
        return x
    return Local(), inner, Local


@needs_torch
def test_save_of_local_objects_raises_torchs_error():
    # torch.save pickles with the C pickler: a local class, instance or function is
    # its AttributeError ("Can't pickle local object ..."), not a PicklingError
    for i in range(3):
        errors = []
        for lib in (ptcore, torch):
            with pytest.raises(Exception) as info:
                lib.save({"x": _local_objects()[i]}, io.BytesIO())
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_save_pickles_what_the_data_format_cannot_hold():
    # as torch.save: objects beyond tensors and plain containers are pickled
    # (tests/test_serialization_objects.py covers loading them back)
    class Custom:
        pass
    with pytest.raises((AttributeError, pickle.PicklingError), match="Custom"):
        saved_bytes({"x": Custom()})        # a local class cannot be pickled
    for obj in ([np.zeros(3)], len):
        zf = zipfile.ZipFile(io.BytesIO(saved_bytes(obj)))
        assert "archive/data.pkl" in zf.namelist()
    loop = []
    loop.append(loop)
    zf = zipfile.ZipFile(io.BytesIO(saved_bytes(loop)))
    assert "archive/data.pkl" in zf.namelist()


# ---------------------------------------------------------------------------
# map_location and mmap
# ---------------------------------------------------------------------------

def cuda_blob():
    """A valid checkpoint whose storage claims to come from cuda:0."""
    pkl = b"\x80\x02}" + s("w") + rebuild_v2(storage_pid(location="cuda:0"), 0, (4,), (1,))
    return torch_zip(pkl + b"s.", FOUR_FLOATS)


def test_map_location_variants():
    t = ptcore.arange(6.0).view(2, 3)
    blob = saved_bytes({"t": t})
    for ml in (None, "cpu", ptcore.device("cpu"), {"cpu": "cpu"}):
        assert_same_pt(t, load_bytes(blob, map_location=ml)["t"])
    seen = []

    def fn(storage, location):
        seen.append((storage.nbytes(), location))
        return storage
    assert_same_pt(t, load_bytes(blob, map_location=fn)["t"])
    assert seen == [(24, "cpu")]
    assert_same_pt(t, load_bytes(blob, map_location=lambda s, loc: None)["t"])
    with pytest.raises(RuntimeError, match="storage"):
        load_bytes(blob, map_location=lambda s, loc: "nope")
    with pytest.raises(TypeError, match="map_location"):
        load_bytes(blob, map_location=3.5)


@pytest.mark.skipif(ptcore.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_locations_without_cuda():
    blob = cuda_blob()
    with pytest.raises(RuntimeError, match="CUDA device but ptcore.cuda.is_available"):
        load_bytes(blob)
    with pytest.raises(RuntimeError, match="is_available"):
        load_bytes(saved_bytes(ptcore.ones(2)), map_location="cuda")
    for ml in ("cpu", {"cuda:0": "cpu"}, ptcore.device("cpu"), lambda s, loc: s):
        r = load_bytes(blob, map_location=ml)["w"]
        assert r.device == ptcore.device("cpu") and r.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="restore data location"):
        load_bytes(saved_bytes(ptcore.ones(2)), map_location="meta")


def test_mmap_load(tmp_path):
    p = tmp_path / "m.pt"
    x = pt_tensor("float64", (50, 20), seed=5)
    ptcore.save({"x": x, "v": x[3:7], "b": pt_tensor("bfloat16", (9,))}, p)
    before = p.read_bytes()
    r = ptcore.load(p, mmap=True)
    assert_same_pt(x, r["x"])
    assert r["v"].untyped_storage() is r["x"].untyped_storage()
    assert r["x"].data_ptr() % 64 == 0
    r["x"][0, 0] = 123.0            # private mapping: the file is not changed
    assert r["v"].untyped_storage() is r["x"].untyped_storage()
    del r
    assert p.read_bytes() == before
    with pytest.raises(ValueError, match="file name"):
        ptcore.load(io.BytesIO(before), mmap=True)


# ---------------------------------------------------------------------------
# corrupt and malicious ptcore files
# ---------------------------------------------------------------------------

def test_truncated_files_raise_runtime_error():
    blob = saved_bytes({"a": ptcore.randn(10, 10), "b": [1, 2, "x"]})
    for n in list(range(0, 200, 7)) + list(range(200, len(blob), 97)) + [len(blob) - 1]:
        with pytest.raises(RuntimeError, match="ptcore.load"):
            load_bytes(blob[:n])


def test_flipped_bytes_raise_runtime_error():
    blob = bytearray(saved_bytes({"a": ptcore.arange(64.0)}))
    zf = zipfile.ZipFile(io.BytesIO(bytes(blob)))
    for name in ("archive/data.pkl", "archive/data/0"):
        info = zf.getinfo(name)
        h = info.header_offset
        n, e = struct.unpack("<HH", blob[h + 26:h + 30])
        bad = bytearray(blob)
        bad[h + 30 + n + e + 3] ^= 0x10
        with pytest.raises(RuntimeError, match="corrupt"):
            load_bytes(bytes(bad))


def test_wrong_magic_and_empty_files(tmp_path):
    with pytest.raises(RuntimeError, match="not a ptcore or PyTorch checkpoint"):
        load_bytes(b"hello world, not a checkpoint")
    with pytest.raises(RuntimeError, match="empty"):
        load_bytes(b"")
    p = tmp_path / "empty.pt"
    p.write_bytes(b"")
    with pytest.raises(RuntimeError, match="empty"):
        ptcore.load(p)
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(RuntimeError, match="not a checkpoint"):
        load_bytes(other.getvalue())
    with pytest.raises(TypeError, match="file name"):
        ptcore.load(b"bytes are not a file")
    with pytest.raises(FileNotFoundError):
        ptcore.load(tmp_path / "missing.pt")


def test_deeply_nested_object_roundtrips_or_fails_cleanly():
    obj = []
    for _ in range(200):
        obj = [obj]
    r = roundtrip(obj)
    depth = 0
    while r:
        r = r[0]
        depth += 1
    assert depth == 200
    for _ in range(100000):
        obj = [obj]
    with pytest.raises(RecursionError, match="nested too deeply"):
        saved_bytes(obj)


# ---------------------------------------------------------------------------
# torch.save checkpoints
# ---------------------------------------------------------------------------

def torch_saved(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def torch_tensor(dt, shape, seed=0):
    t = torch.from_numpy(random_array(dt, shape, seed))
    return t.view(torch.bfloat16) if dt == "bfloat16" else t


@needs_torch
@pytest.mark.parametrize("dt", DTYPES)
def test_torch_every_dtype(dt):
    ts = {"full": torch_tensor(dt, (5, 4), seed=1), "scalar": torch_tensor(dt, (), seed=2),
          "empty": torch_tensor(dt, (0, 3), seed=3)}
    ts["t"] = ts["full"].t()
    ts["slice"] = ts["full"][1::2, 1:]
    ts["row"] = ts["full"][3]
    r = load_bytes(torch_saved(ts))
    for k, t in ts.items():
        assert_matches_torch(r[k], t)
    assert r["t"].untyped_storage() is r["full"].untyped_storage()
    assert r["row"].untyped_storage() is r["full"].untyped_storage()


@needs_torch
@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_torch_state_dict_and_parameters(protocol):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3),
                                torch.nn.Linear(3, 2, bias=False))
    model(torch.randn(5, 4))  # updates running stats / num_batches_tracked
    sd = model.state_dict()
    obj = {"sd": sd, "params": list(model.parameters()), "frozen": torch.nn.Parameter(
        torch.randn(2), requires_grad=False)}
    r = load_bytes(torch_saved(obj, pickle_protocol=protocol))
    assert type(r["sd"]) is collections.OrderedDict and list(r["sd"]) == list(sd)
    assert r["sd"]._metadata == sd._metadata
    for k, v in sd.items():
        assert_matches_torch(r["sd"][k], v)
    for p, q in zip(r["params"], model.parameters()):
        assert_matches_torch(p, q)
        assert p.requires_grad
    assert not r["frozen"].requires_grad
    try:
        from ptcore.nn.parameter import Parameter
    except ImportError:
        Parameter = None
    if Parameter is not None:
        assert all(isinstance(p, Parameter) for p in r["params"])


@needs_torch
def test_torch_optimizer_state_and_training_checkpoint():
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "loss": 0.25, "nan": float("nan"), "name": "run-α", "steps": [1, 2, 3],
            "nested": {"t": (1, "a", None, True), 7: {"x": [torch.ones(2)]}},
            "model": model.state_dict(), "optim": opt.state_dict(), "dtype": torch.float16,
            "device": torch.device("cpu"), "size": torch.Size([3, 4]), "bytes": b"\x00\x01",
            "complex": 1 - 2j, "set": {1, 2}}
    r = load_bytes(torch_saved(ckpt))
    assert r["epoch"] == 3 and r["loss"] == 0.25 and math.isnan(r["nan"])
    assert r["name"] == "run-α" and r["steps"] == [1, 2, 3]
    assert r["nested"]["t"] == (1, "a", None, True)
    assert_matches_torch(r["nested"][7]["x"][0], torch.ones(2))
    st = ckpt["optim"]["state"]
    assert sorted(r["optim"]["state"]) == sorted(st)
    for i, s in st.items():
        for k, v in s.items():
            assert_matches_torch(r["optim"]["state"][i][k], v)
    assert r["optim"]["param_groups"] == ckpt["optim"]["param_groups"]
    assert r["dtype"] is ptcore.float16 and r["device"] == ptcore.device("cpu")
    assert r["size"] == ptcore.Size([3, 4]) and isinstance(r["size"], ptcore.Size)
    assert r["bytes"] == b"\x00\x01" and r["complex"] == 1 - 2j and r["set"] == {1, 2}


@needs_torch
def test_torch_shared_storage_views_and_storages():
    x = torch.arange(24, dtype=torch.float32)
    obj = {"x": x, "m": x.view(4, 6), "mt": x.view(4, 6).t(), "tail": x[10:], "same": x,
           "ustorage": torch.arange(5, dtype=torch.uint8).untyped_storage()}
    r = load_bytes(torch_saved(obj))
    st = r["x"].untyped_storage()
    for k in ("m", "mt", "tail"):
        assert r[k].untyped_storage() is st
        assert_matches_torch(r[k], obj[k])
    assert r["same"] is r["x"]
    assert isinstance(r["ustorage"], ptcore.UntypedStorage)
    assert r["ustorage"].tolist() == [0, 1, 2, 3, 4]
    r["x"][11] = 1000.0
    assert r["tail"][1].item() == 1000.0


@needs_torch
def test_torch_tensor_and_parameter_attributes():
    t = torch.arange(3.0)
    t.note = "kept"
    p = torch.nn.Parameter(torch.ones(2))
    p.tag = 7
    r = load_bytes(torch_saved({"t": t, "p": p}))
    assert_matches_torch(r["t"], t)
    assert_matches_torch(r["p"], p)
    assert r["t"].note == "kept" and r["p"].tag == 7


def test_tensor_state_cannot_shadow_methods():
    args = tup(storage_pid(), i(0), tup(i(4)), tup(i(1)), b"\x89",
               g("collections", "OrderedDict") + b")R")
    for name in ("numpy", "__class__", "__dict__"):
        pkl = (b"\x80\x02" + g("torch._tensor", "_rebuild_from_type_v2") +
               tup(g("torch._utils", "_rebuild_tensor_v2"), g("torch", "Tensor"), args,
                   b"}" + s(name) + i(1) + b"s") + b"R.")
        with pytest.raises(pickle.UnpicklingError, match=f"refusing to set attribute '{name}'"):
            load_bytes(torch_zip(pkl, FOUR_FLOATS))
    ok = (b"\x80\x02" + g("torch._tensor", "_rebuild_from_type_v2") +
          tup(g("torch._utils", "_rebuild_tensor_v2"), g("torch", "Tensor"), args,
              b"}" + s("label") + i(1) + b"s") + b"R.")
    r = load_bytes(torch_zip(ok, FOUR_FLOATS))
    assert r.label == 1 and r.tolist() == [0.0, 1.0, 2.0, 3.0]


@needs_torch
def test_torch_typed_storage_toplevel():
    import warnings
    x = torch.arange(4, dtype=torch.int16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        blob = torch_saved({"x": x, "s": x.storage()})
    r = load_bytes(blob)
    assert isinstance(r["s"], ptcore.UntypedStorage)
    assert r["s"] is r["x"].untyped_storage()


@needs_torch
def test_torch_file_by_path_and_mmap(tmp_path):
    p = tmp_path / "t.pt"
    ts = {k: torch_tensor(k, (33, 3), seed=i) for i, k in enumerate(DTYPES)}
    torch.save(ts, p)
    for mm in (False, True):
        r = ptcore.load(p, mmap=mm)
        for k, t in ts.items():
            assert_matches_torch(r[k], t)
    r = ptcore.load(str(p), map_location="cpu", mmap=True)
    r["float32"][0, 0] = 5.0
    assert torch.load(p)["float32"][0, 0].item() == ts["float32"][0, 0].item()


@needs_torch
def test_torch_map_location():
    t = torch.arange(6.0)
    blob = torch_saved({"t": t})
    seen = []
    r = load_bytes(blob, map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cpu"] and r["t"].tolist() == t.tolist()
    assert load_bytes(blob, map_location=torch.device("cpu"))["t"].tolist() == t.tolist()
    assert load_bytes(blob, map_location={"cuda:0": "cpu"})["t"].tolist() == t.tolist()


@needs_torch
def test_torch_big_endian_file_is_byteswapped():
    ts = {"f": torch_tensor("float32", (3, 2), 1), "c": torch_tensor("complex64", (4,), 2),
          "h": torch_tensor("bfloat16", (5,), 3), "l": torch_tensor("int64", (2,), 4),
          "b": torch_tensor("bool", (3,), 5)}
    blob = torch_saved(ts)
    zf = zipfile.ZipFile(io.BytesIO(blob))
    pkl = zf.read("archive/data.pkl")
    key_dtype = {}
    for k, t in ts.items():     # which data/<key> holds which tensor
        for name in zf.namelist():
            if name.startswith("archive/data/") and zf.read(name) == torch_bits(t):
                key_dtype[name] = t
    assert len(key_dtype) == len(ts)

    def edit(name, data):
        if name == "archive/byteorder":
            return b"big"
        if name in key_dtype:
            t = key_dtype[name]
            size = t.element_size() // (2 if t.is_complex() else 1)
            return np.frombuffer(data, dtype=f"u{size}").byteswap().tobytes() if size > 1 \
                else data
        return data
    r = load_bytes(rewrite_zip(blob, edit))
    for k, t in ts.items():
        assert_matches_torch(r[k], t)
    assert pkl  # the pickle itself is unchanged


@needs_torch
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_archive_is_refused(tmp_path):
    m = torch.jit.script(torch.nn.Linear(2, 2))
    p = tmp_path / "m.pt"
    torch.jit.save(m, str(p))
    with pytest.raises(RuntimeError, match="TorchScript"):
        ptcore.load(p)


@needs_torch
def test_torch_truncated_file():
    blob = torch_saved({"t": torch.randn(100)})
    for n in (10, len(blob) // 2, len(blob) - 30):
        with pytest.raises(RuntimeError):
            load_bytes(blob[:n])


# ---------------------------------------------------------------------------
# malicious pickles inside a torch-format zip (no torch needed)
# ---------------------------------------------------------------------------

def test_handmade_torch_zip_loads():
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(), 1, (3,), (1,)) + b"."
    r = load_bytes(torch_zip(pkl, FOUR_FLOATS, prefix="whatever"))
    assert r.tolist() == [1.0, 2.0, 3.0] and r.storage_offset() == 1


class _Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_reduce_to_os_system_is_refused_without_running(tmp_path, protocol):
    marker = tmp_path / "pwned"
    pkl = pickle.dumps({"weights": [1, 2], "evil": _Evil(os.system, f"touch {marker}")},
                       protocol=protocol)
    with pytest.raises(pickle.UnpicklingError, match=r"(posix|os|nt)\.system"):
        load_bytes(torch_zip(pkl))
    assert not marker.exists()


@pytest.mark.parametrize("fn", [eval, exec, getattr, __import__, open],
                         ids=lambda f: f.__name__)
def test_dangerous_builtins_are_refused(tmp_path, fn):
    marker = tmp_path / "pwned"
    pkl = pickle.dumps(_Evil(fn, f"open({str(marker)!r}, 'w')"), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=fn.__name__):
        load_bytes(torch_zip(pkl))
    assert not marker.exists()


def test_subprocess_and_unknown_torch_globals_are_refused(tmp_path):
    import subprocess
    marker = tmp_path / "pwned"
    pkl = pickle.dumps(_Evil(subprocess.call, ["touch", str(marker)]), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="subprocess.call"):
        load_bytes(torch_zip(pkl))
    assert not marker.exists()
    # (torch.serialization._get_layout and torch._utils._rebuild_sparse_tensor are
    # allowed, as by torch's weights_only: they rebuild sparse tensors, checked)
    for mod, name in [("torch", "load"), ("numpy", "frombuffer"),
                      ("torch", "QUInt4x2Storage"), ("torch", "compile")]:
        with pytest.raises(pickle.UnpicklingError, match=f"{mod}.{name}|{name}"):
            load_bytes(torch_zip(b"\x80\x02" + g(mod, name) + b"."))
    # every dtype torch has is allowed, as by torch's weights_only (the float8 ones too)
    assert load_bytes(torch_zip(b"\x80\x02" + g("torch", "float8_e5m2") + b".")) \
        is ptcore.float8_e5m2


MALICIOUS = [
    # INST and OBJ opcodes create objects from a class: refused outright
    (b"(S'x'\nios\nsystem\n.", "system|INST"),
    (b"(ccollections\nOrderedDict\no.", "OBJ"),
    # copyreg extension codes
    (b"\x80\x02\x82\x01.", "EXT"),
    # calling something that is not an allowlisted function
    (b"\x80\x02" + g("torch", "FloatStorage") + b")R.", "refusing to call"),
    (b"\x80\x02" + g("torch", "float32") + b")R.", "refusing to call"),
    (b"\x80\x02X\x01\x00\x00\x00a)R.", "refusing to call"),
    # NEWOBJ of a class that is not allowlisted
    (b"\x80\x02" + g("torch", "Tensor") + b")\x81.", "refusing to create"),
    # BUILD on anything but an OrderedDict, or with dunder attributes
    (b"\x80\x02]}b.", "refusing to BUILD"),
    (b"\x80\x02" + g("collections", "OrderedDict") + b")R}" + s("__class__") +
     g("collections", "OrderedDict") + b"sb.", "refusing to set attribute '__class__'"),
    (b"\x80\x02" + g("collections", "OrderedDict") + b")R}" + s("keys") + b"Nsb.",
     "refusing to set attribute 'keys'"),
    # persistent ids must be storages
    (b"\x80\x02" + tup(s("module"), s("os")) + b"Q.", "unexpected persistent id"),
    (b"\x80\x02" + tup(s("module"), g("torch", "FloatStorage"), s("0"), s("cpu"), i(4)) + b"Q.",
     "only storages"),
    (b"\x80\x02" + s("storage") + b"Q.", "unexpected persistent id"),
    (b"\x80\x02" + tup(s("storage"), g("torch", "float32"), s("0"), s("cpu"), i(4)) + b"Q.",
     "only storages"),
    (b"\x80\x02" + tup(s("storage"), g("torch", "FloatStorage"), i(0), s("cpu"), i(4)) + b"Q.",
     "malformed storage id"),
    # rebuild functions with bad arguments
    (b"\x80\x02" + g("torch._utils", "_rebuild_tensor_v2") +
     tup(tup(), i(0), tup(), tup(), b"\x89", b"N") + b"R.", "expected a storage"),
    (b"\x80\x02" + g("torch._codecs", "encode") + b".", "torch._codecs.encode"),
    (b"\x80\x02" + g("_codecs", "encode") + tup(s("x"), s("rot13")) + b"R.", "_codecs.encode"),
    (b"\x80\x02" + g("builtins", "bytearray") + tup(i(10 ** 12)) + b"R.", "bytearray"),
    (b"\x80\x02" + g("torch", "device") + tup(i(1), i(2), i(3)) + b"R.", "torch.device"),
    (b"\x80\x02" + g("torch", "Size") + tup(tup(s("a"))) + b"R.", "torch.Size"),
    (b"\x80\x02" + g("torch._tensor", "_rebuild_from_type_v2") +
     tup(g("collections", "OrderedDict"), g("torch", "Tensor"), tup(), b"N") + b"R.",
     "unexpected function"),
    # garbage
    (b"\x80\x02", "corrupt"),
    (b"\x80\x02h\x05.", "corrupt"),
    (b"\x80\x02\xff.", "corrupt"),
]


@pytest.mark.parametrize("pkl, match", MALICIOUS, ids=[f"case{k}" for k in range(len(MALICIOUS))])
def test_malicious_or_broken_pickles(pkl, match):
    with pytest.raises(pickle.UnpicklingError, match=match):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))


@pytest.mark.parametrize("offset, size, stride", [
    (0, (5,), (1,)), (4, (1,), (1,)), (0, (2, 2), (3, 1)), (-1, (1,), (1,)),
    (0, (2,), (-1,)), (2 ** 70, (1,), (1,)), (0, (1 << 62,), (0,)), (0, (0, 2 ** 70), (1, 1)),
])
def test_out_of_bounds_tensor_records_are_refused(offset, size, stride):
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(), offset, size, stride) + b"."
    with pytest.raises(RuntimeError, match="corrupt"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))


def test_storage_member_checks():
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(numel=8), 0, (8,), (1,)) + b"."
    with pytest.raises(RuntimeError, match="holds 16 bytes, expected 32"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))
    # a member longer than its storage: refused as torch refuses it ('record size ... does not
    # match expected size')
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(numel=2), 0, (2,), (1,)) + b"."
    with pytest.raises(RuntimeError, match="holds 16 bytes, expected 8"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(key="7"), 0, (4,), (1,)) + b"."
    with pytest.raises(RuntimeError, match="archive/data/7"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(key="../../x"), 0, (4,), (1,)) + b"."
    with pytest.raises(RuntimeError, match="missing"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))


@pytest.mark.skipif(ptcore.cuda.is_available(), reason="needs a machine without CUDA")
def test_torch_cuda_location_without_cuda():
    pkl = b"\x80\x02" + rebuild_v2(storage_pid(location="cuda:0"), 0, (4,), (1,)) + b"."
    blob = torch_zip(pkl, FOUR_FLOATS)
    with pytest.raises(RuntimeError, match="CUDA device but ptcore.cuda.is_available"):
        load_bytes(blob)
    assert load_bytes(blob, map_location="cpu").tolist() == [0.0, 1.0, 2.0, 3.0]
    assert load_bytes(blob, map_location={"cuda:0": "cpu"}).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_requires_grad_on_integer_tensor_is_an_error():
    pkl = (b"\x80\x02" + rebuild_v2(storage_pid(cls="IntStorage"), 0, (4,), (1,),
                                    requires_grad=True) + b".")
    with pytest.raises(RuntimeError, match="floating point"):
        load_bytes(torch_zip(pkl, FOUR_FLOATS))


def test_module_exports():
    assert ptcore.save is serialization.save and ptcore.load is serialization.load
    assert pathlib.Path(serialization.__file__).name == "serialization.py"


@needs_torch
def test_fuzzed_torch_pickles_fail_cleanly():
    import random
    m = torch.nn.Linear(3, 2)
    blob = torch_saved({"sd": m.state_dict(), "x": torch.arange(10.0)[2:], "p": m.weight,
                        "n": [1, 2.5, "a", (3, None)], "b": b"xy"})
    pkl = zipfile.ZipFile(io.BytesIO(blob)).read("archive/data.pkl")
    rng = random.Random(0)
    for _ in range(300):
        bad = bytearray(pkl)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        if rng.random() < 0.2:
            bad = bad[:rng.randrange(len(bad))]
        z = rewrite_zip(blob, lambda n, d: bytes(bad) if n == "archive/data.pkl" else d)
        try:
            load_bytes(z)
        except (RuntimeError, pickle.UnpicklingError):
            pass


@pytest.mark.parametrize("value", [slice(1, 5, 2), frozenset({"a", 3})],
                         ids=["slice", "frozenset"])
def test_weights_only_refuses_slice_and_frozenset_unless_allowlisted(value):
    # torch.load(weights_only=True) refuses both by default; allowlisting the
    # class makes them load
    buf = io.BytesIO()
    ptcore.save({"v": value}, buf)
    with pytest.raises(pickle.UnpicklingError, match=type(value).__name__):
        ptcore.load(io.BytesIO(buf.getvalue()))
    with ptcore.serialization.safe_globals([type(value)]):
        assert ptcore.load(io.BytesIO(buf.getvalue())) == {"v": value}
    assert ptcore.load(io.BytesIO(buf.getvalue()), weights_only=False) == {"v": value}
    torch = pytest.importorskip("torch")
    tbuf = io.BytesIO()
    torch.save({"v": value}, tbuf)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(tbuf.getvalue()))
    with pytest.raises(pickle.UnpicklingError, match=type(value).__name__):
        ptcore.load(io.BytesIO(tbuf.getvalue()))
    with ptcore.serialization.safe_globals([type(value)]):
        assert ptcore.load(io.BytesIO(tbuf.getvalue())) == {"v": value}
