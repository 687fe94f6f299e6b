"""ptcore.save writes torch.save's format: torch 2.13 loads ptcore's files
with torch.load(weights_only=True) and gets equal values (every dtype,
views, parameters, optimizer states, nested containers), the files are
torch's byte for byte (but for the serialization id), torch's mmap and
storage-offset loading work on them, and hostile torch-format files give
ptcore.load's own clear errors without crashing, hanging or allocating what
the file does not hold."""
import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore import serialization

from checkpoint_files import (  # noqa: E402
    FOUR_FLOATS, g, i, load_in_subprocess, rebuild_v2, s, set_declared_size, storage_pid,
    torch_zip, tup,
)

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128"]


def random_bits(dt, n, seed=0):
    """``n`` random values of ptcore dtype ``dt`` (every bit pattern for the
    floating types, NaNs and infinities included) as a ptcore tensor."""
    rng = np.random.default_rng(seed)
    itemsize = getattr(ptcore, dt).itemsize
    if dt == "bool":
        return ptcore.from_numpy(rng.integers(0, 2, size=n).astype(np.bool_))
    raw = rng.integers(0, 256, size=n * itemsize, dtype=np.uint8)
    return ptcore.from_numpy(raw).view(getattr(ptcore, dt))


def _raw(c):
    """A tensor's values as bytes (ptcore or torch), for bit-exact comparison."""
    c = c.detach().contiguous()
    lib = torch if isinstance(c, torch.Tensor) else ptcore
    flat = c.reshape(-1)
    if flat.dtype == lib.bool:
        flat = flat.to(lib.uint8)
    return flat.view(lib.uint8).numpy().tobytes() if flat.numel() else b""


def ptcore_bytes(obj):
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    return buf.getvalue()


def torch_load(blob, **kw):
    kw.setdefault("weights_only", True)
    return torch.load(io.BytesIO(blob), **kw)


def assert_same(p, t):
    assert isinstance(t, torch.Tensor), type(t)
    assert str(t.dtype) == "torch." + p.dtype._name
    assert tuple(t.shape) == tuple(p.shape)
    assert tuple(t.stride()) == tuple(p.stride())
    assert t.storage_offset() == p.storage_offset()
    assert t.requires_grad == p.requires_grad
    assert isinstance(t, torch.nn.Parameter) == isinstance(p, ptcore.nn.Parameter)
    assert _raw(t) == _raw(p)


# ---------------------------------------------------------------------------
# torch reads what ptcore wrote
# ---------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("dt", DTYPES)
def test_torch_loads_every_dtype_with_equal_values(dt):
    base = random_bits(dt, 60, seed=DTYPES.index(dt))
    obj = {
        "flat": base,
        "matrix": base.view(6, 10),
        "transposed": base.view(6, 10).t(),                  # non-contiguous
        "strided": base.view(6, 10)[1:5:2, ::3],             # offset and steps
        "scalar": base[7],                                   # 0-d with an offset
        "empty": base[60:],                                  # empty, offset at the end
        "own": base[:5].clone(),
    }
    got = torch_load(ptcore_bytes(obj))
    for k, p in obj.items():
        assert_same(p, got[k])
    # views keep sharing one storage, in torch as in ptcore
    ptrs = {got[k].untyped_storage().data_ptr() for k in ("flat", "matrix", "transposed",
                                                            "strided", "scalar")}
    assert len(ptrs) == 1
    assert got["own"].untyped_storage().data_ptr() not in ptrs
    back = ptcore.load(io.BytesIO(ptcore_bytes(obj)))
    for k, p in obj.items():
        assert back[k].dtype == p.dtype and back[k].stride() == p.stride()
        assert _raw(back[k]) == _raw(p)


def test_file_is_torchs_byte_for_byte_but_the_serialization_id(tmp_path):
    def build(L):
        base = L.arange(12, dtype=L.float32).reshape(3, 4)
        sd = collections.OrderedDict()
        sd["w"], sd["row"], sd["t"] = base, base[1], base.t()
        sd["p"] = L.nn.Parameter(L.ones(2))
        sd["e"] = L.zeros(0)
        sd["z"] = L.tensor(3.5, dtype=L.float64)
        sd["u"] = L.tensor([1, 2], dtype=L.uint16)
        sd["bf"] = L.tensor([1.5], dtype=L.bfloat16)
        sd["c"] = L.tensor([1 + 2j])
        sd._metadata = collections.OrderedDict({"": {"version": 1}})
        return {"sd": sd, "epoch": 3, "dt": L.float16, "dev": L.device("cuda", 0),
                "size": L.Size([2]), "set": {1, 2}, "bytes": b"ab", "cx": 1 + 2j,
                "nested": [(1, [2.5, None]), "x"]}
    (tmp_path / "p").mkdir()
    (tmp_path / "t").mkdir()
    ptcore.save(build(ptcore), tmp_path / "p" / "model.pt")
    torch.save(build(torch), tmp_path / "t" / "model.pt")
    ours = (tmp_path / "p" / "model.pt").read_bytes()
    theirs = (tmp_path / "t" / "model.pt").read_bytes()
    assert len(ours) == len(theirs)
    # only the 40 digits of .data/serialization_id and their CRC (in the data
    # descriptor and the central directory) differ
    zo, zt = zipfile.ZipFile(io.BytesIO(ours)), zipfile.ZipFile(io.BytesIO(theirs))
    assert [(z.filename, z.header_offset, z.file_size, z.CRC) for z in zo.infolist()][:-1] == \
        [(z.filename, z.header_offset, z.file_size, z.CRC) for z in zt.infolist()][:-1]
    sid_o, sid_t = zo.read("model/.data/serialization_id"), zt.read("model/.data/serialization_id")
    assert len(sid_o) == 40 and sid_o.isdigit()
    masked_o = ours.replace(sid_o, b"#" * 40).replace(struct.pack("<I", zo.infolist()[-1].CRC),
                                                      b"####")
    masked_t = theirs.replace(sid_t, b"#" * 40).replace(struct.pack("<I", zt.infolist()[-1].CRC),
                                                        b"####")
    assert masked_o == masked_t


def test_state_dict_and_optimizer_state_load_into_torch():
    ptcore.manual_seed(0)
    net = ptcore.nn.Sequential(ptcore.nn.Conv2d(1, 2, 3), ptcore.nn.BatchNorm2d(2),
                               ptcore.nn.Flatten(), ptcore.nn.Linear(2 * 4 * 4, 3))
    opt = ptcore.optim.Adam(net.parameters(), lr=1e-2)
    x = ptcore.randn(4, 1, 6, 6)
    for _ in range(2):
        opt.zero_grad()
        net(x).square().mean().backward()
        opt.step()
    ckpt = {"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 2,
            "losses": [0.5, 0.25], "rng": ptcore.get_rng_state()}
    got = torch_load(ptcore_bytes(ckpt))
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(2 * 4 * 4, 3))
    tnet.load_state_dict(got["model"])
    assert got["model"]._metadata == net.state_dict()._metadata
    topt = torch.optim.Adam(tnet.parameters(), lr=1e-2)
    topt.load_state_dict(got["optim"])
    for k, v in net.state_dict().items():
        assert_same(v, got["model"][k])
    for pid, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            assert_same(v, got["optim"]["state"][pid][k])
    assert got["optim"]["param_groups"] == opt.state_dict()["param_groups"]
    assert got["epoch"] == 2 and got["losses"] == [0.5, 0.25]
    assert_same(ckpt["rng"], got["rng"])
    # one more step in each library from the same state gives the same weights (in
    # eval mode: in training mode BatchNorm leaves the conv bias a gradient of rounding noise)
    net.eval()
    tnet.eval()
    xt = torch.from_numpy(x.numpy())
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()
    topt.zero_grad()
    tnet(xt).square().mean().backward()
    topt.step()
    for (k, v), tv in zip(net.state_dict().items(), tnet.state_dict().values()):
        np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_nested_containers_and_plain_values():
    od = collections.OrderedDict(b=1, a=[2, 3])
    od._metadata = {"x": {"version": 2}}
    t = ptcore.arange(3.0)
    obj = {"od": od, "list": [t, (t, [t[1:]])], "tuple": (None, True, False, -7, 2 ** 80),
           "floats": [1.5, float("inf"), -0.0], "nan": float("nan"), "str": "é", "set": {1, 2},
           "bytes": b"\x00\xff", "empty bytes": b"", "bytearray": bytearray(b"ab"),
           "cx": 1 - 2j,
           "dtypes": [ptcore.float16, ptcore.bfloat16, ptcore.uint16, ptcore.bool],
           "devices": [ptcore.device("cpu"), ptcore.device("cuda:1")],
           "size": ptcore.Size([2, 3]), 3: "int key", (1, "t"): "tuple key",
           "counter": collections.Counter("aab")}
    got = torch_load(ptcore_bytes(obj))
    assert list(got["od"].items()) == [("b", 1), ("a", [2, 3])]
    assert type(got["od"]) is collections.OrderedDict and got["od"]._metadata == od._metadata
    assert got["list"][0] is got["list"][1][0]                  # one object, as saved
    assert got["list"][1][1][0].tolist() == [1.0, 2.0]
    assert got["tuple"] == obj["tuple"] and got["floats"] == obj["floats"]
    assert str(got["floats"][2]) == "-0.0" and got["nan"] != got["nan"]
    for k in ("str", "set", "bytes", "empty bytes", "bytearray", "cx", 3, (1, "t"), "counter"):
        assert got[k] == obj[k] and type(got[k]) is type(obj[k])
    assert got["dtypes"] == [torch.float16, torch.bfloat16, torch.uint16, torch.bool]
    assert got["devices"] == [torch.device("cpu"), torch.device("cuda:1")]
    assert type(got["size"]) is torch.Size and got["size"] == (2, 3)
    back = ptcore.load(io.BytesIO(ptcore_bytes(obj)))
    assert back["od"]._metadata == od._metadata and back["list"][0] is back["list"][1][0]
    assert back["dtypes"] == obj["dtypes"] and back["size"] == obj["size"]
    assert back["devices"] == obj["devices"] and back["counter"] == obj["counter"]
    assert back["empty bytes"] == b"" and back["bytes"] == obj["bytes"]


def test_parameters_and_requires_grad():
    w = ptcore.nn.Parameter(ptcore.randn(3, 2))
    frozen = ptcore.nn.Parameter(ptcore.randn(2), requires_grad=False)
    leaf = ptcore.ones(2, requires_grad=True)
    obj = {"w": w, "wT": w.t(), "frozen": frozen, "leaf": leaf, "i": ptcore.arange(3)}
    got = torch_load(ptcore_bytes(obj))
    assert type(got["w"]) is torch.nn.Parameter and got["w"].requires_grad
    assert type(got["frozen"]) is torch.nn.Parameter and not got["frozen"].requires_grad
    assert type(got["leaf"]) is torch.Tensor and got["leaf"].requires_grad
    assert got["wT"].untyped_storage().data_ptr() == got["w"].untyped_storage().data_ptr()
    for k in obj:
        assert _raw(got[k]) == _raw(obj[k])
    back = ptcore.load(io.BytesIO(ptcore_bytes(obj)))
    assert type(back["w"]) is ptcore.nn.Parameter and back["w"].requires_grad
    assert not back["frozen"].requires_grad and back["leaf"].requires_grad


def test_tensor_attributes_and_subclass_go_through_rebuild_from_type():
    t = ptcore.arange(4.0)
    t.note = "hello"
    got = torch_load(ptcore_bytes({"t": t}))
    assert got["t"].note == "hello" and got["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ptcore.load(io.BytesIO(ptcore_bytes({"t": t})))["t"].note == "hello"


def test_one_storage_seen_as_two_dtypes_is_saved_untyped():
    # torch.save refuses this ("view the same data as different types"); ptcore
    # writes every reference to such a storage untyped (_rebuild_tensor_v3),
    # which torch and ptcore both read back with each tensor's dtype
    x = ptcore.arange(8, dtype=ptcore.float32)
    obj = {"f": x, "i": x.view(ptcore.int32), "b": x[2:].view(ptcore.uint8),
           "s": x.untyped_storage()}
    blob = ptcore_bytes(obj)
    names = zipfile.ZipFile(io.BytesIO(blob)).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]
    assert b"FloatStorage" not in zipfile.ZipFile(io.BytesIO(blob)).read("archive/data.pkl")
    for L, r in ((torch, torch_load(blob)), (ptcore, ptcore.load(io.BytesIO(blob)))):
        assert r["f"].dtype == L.float32 and r["i"].dtype == L.int32 and r["b"].dtype == L.uint8
        for k in ("f", "i", "b"):
            assert _raw(r[k]) == _raw(obj[k])
            assert r[k].untyped_storage().data_ptr() == r["f"].untyped_storage().data_ptr()


def test_sparse_and_meta_tensors():
    coo = ptcore.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, -2.0], (3, 2))
    meta = ptcore.empty(2, 3, device="meta")
    got = torch_load(ptcore_bytes({"coo": coo, "meta": meta}))
    assert got["coo"].layout == torch.sparse_coo
    assert got["coo"].to_dense().tolist() == coo.to_dense().tolist()
    assert got["meta"].device.type == "meta" and tuple(got["meta"].shape) == (2, 3)
    back = ptcore.load(io.BytesIO(ptcore_bytes({"coo": coo, "meta": meta})))
    assert back["coo"].to_dense().tolist() == coo.to_dense().tolist()
    assert back["meta"].device.type == "meta"


def test_whole_objects_are_pickled_and_need_full_unpickling():
    m = ptcore.nn.Linear(2, 3)
    blob = ptcore_bytes({"model": m})
    with pytest.raises(pickle.UnpicklingError, match="ptcore.nn.modules.linear.Linear"):
        torch_load(blob)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ptcore.load(io.BytesIO(blob))
    back = ptcore.load(io.BytesIO(blob), weights_only=False)["model"]
    assert type(back) is ptcore.nn.Linear and _raw(back.weight) == _raw(m.weight)


def test_torch_mmap_and_computed_storage_offsets(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.pt"
    obj = {f"t{k}": random_bits("float32", 37 * k + 1, seed=k) for k in range(6)}
    obj["empty"] = ptcore.zeros(0)
    obj["v"] = obj["t3"][5:]
    ptcore.save(obj, p)
    # torch.load can compute where each storage starts from the layout alone
    # (miniz's); TORCH_SERIALIZATION_DEBUG makes it check against the directory
    from torch.utils.serialization import config
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")
    with config.patch({"load.calculate_storage_offsets": True}):
        for mmap in (True, False):
            got = torch.load(p, mmap=mmap, weights_only=True)
            for k, v in obj.items():
                assert_same(v, got[k])
    mapped = ptcore.load(p, mmap=True)
    for k, v in obj.items():
        assert _raw(mapped[k]) == _raw(v)
        if v.numel():
            assert mapped[k].data_ptr() % 64 == 0 or k == "v"


def test_file_objects_unseekable_streams_and_byteorder_record(tmp_path):
    class Sink:
        def __init__(self):
            self.data = bytearray()

        def write(self, b):
            self.data += bytes(b)
            return len(b)

    sink = Sink()
    ptcore.save({"t": ptcore.arange(5.0)}, sink, _disable_byteorder_record=True)
    names = zipfile.ZipFile(io.BytesIO(bytes(sink.data))).namelist()
    assert "archive/byteorder" not in names
    assert torch_load(bytes(sink.data))["t"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with open(tmp_path / "f.bin", "wb") as fh:
        fh.write(b"prefix")
        ptcore.save([1, 2], fh)
    with open(tmp_path / "f.bin", "rb") as fh:
        fh.seek(6)
        assert torch.load(fh, weights_only=True) == [1, 2]
        fh.seek(6)
        assert ptcore.load(fh) == [1, 2]


def test_large_records_have_correct_checksums(tmp_path):
    big = random_bits("float64", 300_000, seed=3)          # 2.4 MB
    ptcore.save({"big": big, "small": big[:3]}, tmp_path / "big.pt")
    with zipfile.ZipFile(tmp_path / "big.pt") as zf:
        assert zf.testzip() is None                          # every CRC checks out
    assert_same(big, torch.load(tmp_path / "big.pt", weights_only=True)["big"])


class _HoleWriter:
    """A file whose writes of 1 MiB or more (here: only the zeros of one huge
    storage) become holes: a sparse file."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, b):
        n = memoryview(b).nbytes
        if n >= 1 << 20:
            self.fh.seek(n, 1)
        else:
            self.fh.write(b)
        return n


@pytest.mark.slow
def test_zip64_records_past_4_gib(tmp_path, monkeypatch):
    # a 4 GiB storage (never touched: zero pages) pushes the next records past the
    # 32-bit offsets: ZIP64 extra fields, 24-byte data descriptors, as miniz writes
    try:
        big = ptcore.zeros((1 << 32) + 100, dtype=ptcore.uint8)
    except (MemoryError, RuntimeError):
        pytest.skip("cannot reserve 4 GiB of address space")
    small = ptcore.arange(10.0)
    path = tmp_path / "big.pt"
    with open(path, "wb") as fh:
        ptcore.save({"big": big, "small": small, "after": small * 2}, _HoleWriter(fh))
        fh.truncate()
    del big
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("archive/data/2")
        assert info.header_offset > 1 << 32
        assert zf.read(info) == (small * 2).numpy().tobytes()
    from torch.utils.serialization import config
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")
    with config.patch({"load.calculate_storage_offsets": True}):
        got = torch.load(path, mmap=True, weights_only=True)
    assert got["after"].tolist() == (small * 2).tolist() and got["small"].tolist() == small.tolist()
    assert got["big"].shape == ((1 << 32) + 100,) and got["big"][-3:].tolist() == [0, 0, 0]
    back = ptcore.load(path, mmap=True)
    assert back["after"].tolist() == (small * 2).tolist()
    assert back["big"].shape == ((1 << 32) + 100,)


def test_protocol_and_legacy_format_arguments():
    blob = io.BytesIO()
    ptcore.save({"t": ptcore.ones(2)}, blob, pickle_protocol=4)
    assert zipfile.ZipFile(blob).read("archive/data.pkl")[:2] == b"\x80\x04"
    blob.seek(0)
    # (torch's weights_only unpickler reads protocol 2 only: no FRAME opcode, for
    # torch's own protocol-4 files as for these)
    assert torch.load(blob, weights_only=False)["t"].tolist() == [1.0, 1.0]
    blob.seek(0)
    assert ptcore.load(blob)["t"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="pickle_protocol"):
        ptcore.save(1, io.BytesIO(), pickle_protocol=1)


# ---------------------------------------------------------------------------
# hostile torch-format files
# ---------------------------------------------------------------------------

def _pickle_of(*tensors):
    return b"\x80\x02(" + b"".join(tensors) + b"l."


def _deflate_bomb():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        # (the storage as large as the directory claims: the sizes agree, the bomb is what
        # is refused)
        zf.writestr("archive/data.pkl", _pickle_of(rebuild_v2(storage_pid(numel=1 << 29), 0,
                                                              (4,), (1,))))
        zf.writestr("archive/data/0", bytes(1 << 26))       # 64 MiB of zeros in ~64 KiB
        zf.writestr("archive/version", "3\n")     # (without one it is refused before the bomb)
    # the directory claims 2 GiB for the 64 KiB of deflated zeros
    return set_declared_size(buf.getvalue(), "archive/data/0", 1 << 31, compressed=False)


def hostile_files():
    ok = rebuild_v2(storage_pid(), 0, (4,), (1,))
    return {
        "numel 2**62": torch_zip(_pickle_of(rebuild_v2(storage_pid(numel=1 << 62), 0, (4,),
                                                       (1,))), FOUR_FLOATS),
        "numel 2**70": torch_zip(_pickle_of(rebuild_v2(storage_pid(numel=1 << 70), 0, (4,),
                                                       (1,))), FOUR_FLOATS),
        "negative offset": torch_zip(_pickle_of(rebuild_v2(storage_pid(), -1, (4,), (1,))),
                                     FOUR_FLOATS),
        "stride reaches outside": torch_zip(_pickle_of(rebuild_v2(storage_pid(), 0, (2, 2),
                                                                  (3, 1))), FOUR_FLOATS),
        "offset 2**62": torch_zip(_pickle_of(rebuild_v2(storage_pid(), 1 << 62, (1,), (1,))),
                                  FOUR_FLOATS),
        "size 2**70": torch_zip(_pickle_of(rebuild_v2(storage_pid(), 0, (1 << 70,), (0,))),
                                FOUR_FLOATS),
        "two dtypes for one key": torch_zip(_pickle_of(ok, rebuild_v2(
            storage_pid(cls="DoubleStorage", numel=2), 0, (4,), (1,))), FOUR_FLOATS),
        "huge cuda index": torch_zip(_pickle_of(rebuild_v2(
            storage_pid(location="cuda:99999999999999999999"), 0, (4,), (1,))), FOUR_FLOATS),
        "device overflow": torch_zip(b"\x80\x02" + g("torch", "device") +
                                     tup(s("cuda"), i(1 << 70)) + b"R."),
        "Size overflow": torch_zip(b"\x80\x02" + g("torch", "Size") + tup(tup(i(1 << 70))) +
                                   b"R."),
        "meta 2**70": torch_zip(b"\x80\x02" + g("torch._utils",
                                                "_rebuild_meta_tensor_no_storage") +
                                tup(g("torch", "float32"), tup(i(1 << 70)), tup(i(1)), b"\x89")
                                + b"R."),
        "lists nested 200000 deep": torch_zip(b"\x80\x02" + b"]" * 200000 + b"a" * 199999 +
                                              b"."),
        "string longer than the file": torch_zip(b"\x80\x02X\xff\xff\xff\x7fabc."),
        "storage size field 3 GiB": set_declared_size(torch_zip(_pickle_of(rebuild_v2(
            storage_pid(numel=3 << 28), 0, (4,), (1,))), FOUR_FLOATS), "archive/data/0", 3 << 30),
        "data.pkl size field 2 GiB": set_declared_size(torch_zip(_pickle_of(ok), FOUR_FLOATS),
                                                       "archive/data.pkl", 1 << 31),
        "deflate bomb": _deflate_bomb(),
    }


def test_hostile_torch_format_files_fail_cleanly_in_a_subprocess(tmp_path):
    res = load_in_subprocess(tmp_path, hostile_files(), mem_bytes=3 << 30)
    expected = {      # what it must raise ("ok": loads), and words the message must hold
        "numel 2**62": ("RuntimeError", "holds 16 bytes, expected 18446744073709551616"),
        "numel 2**70": ("RuntimeError", "holds 16 bytes"),
        "negative offset": ("RuntimeError", "negative storage offset -1"),
        "stride reaches outside": ("RuntimeError", "need a storage of 20 bytes"),
        "offset 2**62": ("RuntimeError", "need a storage"),
        "size 2**70": ("RuntimeError", "too large"),
        "two dtypes for one key": ("ok", ""),          # the key's first dtype wins, as torch
        "huge cuda index": ("RuntimeError", "cuda:99999999999999999999"),
        "device overflow": ("UnpicklingError", "torch.device"),
        "Size overflow": ("UnpicklingError", "torch.Size"),
        "meta 2**70": ("RuntimeError", "too large"),
        "lists nested 200000 deep": ("ok", ""),        # as torch.load: any depth loads
        "string longer than the file": ("UnpicklingError", "corrupt archive/data.pkl"),
        "storage size field 3 GiB": ("RuntimeError", "declares 3221225472 bytes"),
        "data.pkl size field 2 GiB": ("RuntimeError", "implausibly large"),
        "deflate bomb": ("RuntimeError", "zip bomb"),
    }
    assert set(res) == set(expected)
    for name, (kind, words) in expected.items():
        got_kind, mro, msg, seconds = res[name]
        if kind == "ok":
            assert got_kind == "ok", (name, got_kind, msg)
        else:
            assert kind in mro.split(","), (name, got_kind, msg)
            assert words in msg and "probe" in msg, (name, msg)   # the problem and the file
        assert seconds < 60, (name, seconds)


def test_fuzzed_ptcore_written_files_fail_cleanly():
    import random
    blob = ptcore_bytes({"sd": ptcore.nn.Linear(3, 2).state_dict(), "x": ptcore.arange(10.)[2:],
                         "n": [1, 2.5, "a", (3, None)], "b": b"xy"})
    rng = random.Random(0)
    for _ in range(300):
        bad = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        if rng.random() < 0.2:
            bad = bad[:rng.randrange(len(bad))]
        try:
            ptcore.load(io.BytesIO(bytes(bad)))
        except (RuntimeError, pickle.UnpicklingError):
            pass


def test_checkpoint_error_is_public_and_a_runtime_error():
    assert issubclass(serialization.CheckpointError, RuntimeError)
    with pytest.raises(serialization.CheckpointError, match="truncated or corrupt"):
        ptcore.load(io.BytesIO(ptcore_bytes([1])[:-30]))
    assert os.path.basename(serialization.__file__) == "serialization.py"
