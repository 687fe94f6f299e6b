"""ptcore.load keeps reading the checkpoints earlier ptcore versions wrote in
their own format (version 1: ptcore/data.json + raw storages, no pickle):
a checked-in file written by that ptcore.save loads with its values, and
corrupt or malicious version-1 files raise ptcore's CheckpointError naming
the file and the problem (in a subprocess where they could crash)."""
import collections
import io
import json
import pathlib
import pickle
import random
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore import serialization

from checkpoint_files import V1_HEADER, load_in_subprocess, v1_archive  # noqa: E402

OLD_FILE = pathlib.Path(__file__).parent / "data" / "ptcore_format_v1.pt"


def expected_old_file_object():
    """The object tests/data/ptcore_format_v1.pt holds (as the ptcore.save of
    the version-1 format saved it)."""
    base = ptcore.arange(12, dtype=ptcore.float32).reshape(3, 4)
    sd = collections.OrderedDict()
    sd["weight"] = base
    sd["row"] = base[1]
    sd["colT"] = base.t()
    sd["bias"] = ptcore.nn.Parameter(ptcore.tensor([0.5, -1.5]))
    sd["scalar"] = ptcore.tensor(3.25, dtype=ptcore.float64)
    sd["empty"] = ptcore.zeros(0, 3)
    sd["flags"] = ptcore.tensor([True, False, True])
    sd["bf16"] = ptcore.tensor([1.5, -2.0], dtype=ptcore.bfloat16)
    sd["half"] = ptcore.tensor([0.25, 65504.0], dtype=ptcore.float16)
    sd["cplx"] = ptcore.tensor([1 + 2j, -3j], dtype=ptcore.complex64)
    sd["u16"] = ptcore.tensor([1, 65535], dtype=ptcore.uint16)
    sd["i64"] = ptcore.tensor([-2 ** 63, 2 ** 63 - 1], dtype=ptcore.int64)
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return {"state_dict": sd, "epoch": 7, "lr": 1e-3, "c": 1 + 2j,
            "tags": ("a", b"raw", None, True), "ids": {1, 2}, "dtype": ptcore.bfloat16,
            "device": ptcore.device("cpu"), "size": ptcore.Size([2, 3]),
            "nested": [[1, [2.5, "x"]], {"k": [base]}]}


def _same_tensor(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype
    assert a.shape == b.shape and a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset() and a.requires_grad == b.requires_grad
    ai, bi = (a.detach().contiguous(), b.detach().contiguous())
    if ai.dtype == ptcore.bool:
        ai, bi = ai.to(ptcore.uint8), bi.to(ptcore.uint8)
    assert ai.view(-1).view(ptcore.uint8).tolist() == bi.view(-1).view(ptcore.uint8).tolist()


@pytest.mark.parametrize("mmap", [False, True])
def test_checked_in_old_format_file_loads_with_its_values(mmap):
    assert OLD_FILE.stat().st_size < 10_000
    assert "ptcore/data.json" in zipfile.ZipFile(OLD_FILE).namelist()
    got = ptcore.load(OLD_FILE, mmap=mmap)
    exp = expected_old_file_object()
    sd, esd = got["state_dict"], exp["state_dict"]
    assert type(sd) is collections.OrderedDict and list(sd) == list(esd)
    assert sd._metadata == esd._metadata
    for k in esd:
        _same_tensor(sd[k], esd[k])
    # views of one storage share it again
    storage = sd["weight"].untyped_storage()
    assert sd["row"].untyped_storage() is storage and sd["colT"].untyped_storage() is storage
    assert got["nested"][1]["k"][0].untyped_storage() is storage
    assert got["nan"] != got["nan"]
    for k in ("epoch", "lr", "c", "tags", "ids", "dtype", "device", "size"):
        assert got[k] == exp[k] and type(got[k]) is type(exp[k]), k
    assert got["nested"][0] == exp["nested"][0]
    assert serialization.get_unsafe_globals_in_checkpoint(OLD_FILE) == []


def test_old_format_file_converts_to_torchs_format(tmp_path):
    torch = pytest.importorskip("torch")
    got = ptcore.load(OLD_FILE)
    ptcore.save(got, tmp_path / "new.pt")
    t = torch.load(tmp_path / "new.pt", weights_only=True)
    assert t["state_dict"]["weight"].tolist() == got["state_dict"]["weight"].tolist()
    assert t["state_dict"]._metadata == {"": {"version": 1}}
    assert t["state_dict"]["row"].untyped_storage().data_ptr() == \
        t["state_dict"]["weight"].untyped_storage().data_ptr()


@pytest.mark.parametrize("mutate, match", [
    (lambda h: h["tensors"][0].update(shape=[1000]), "out of bounds|need a storage"),
    (lambda h: h["tensors"][0].update(offset=15), "need a storage"),
    (lambda h: h["tensors"][0].update(offset=-1), "negative storage offset"),
    (lambda h: h["tensors"][0].update(stride=[-1]), "negative stride"),
    (lambda h: h["tensors"][0].update(stride=[1, 1]), "differ in length"),
    (lambda h: h["tensors"][0].update(shape=[-2]), "negative size"),
    (lambda h: h["tensors"][0].update(shape=[2.5]), "list of ints"),
    (lambda h: h["tensors"][0].update(shape=[True]), "list of ints"),
    (lambda h: h["tensors"][0].update(shape=[1 << 62], stride=[0]), "too large"),
    (lambda h: h["tensors"][0].update(shape=[0, 1 << 70], stride=[1, 1]), "too large"),
    (lambda h: h["tensors"][0].update(shape=[1], stride=[1 << 70]), "too large"),
    (lambda h: h["tensors"][0].update(shape=[1] * 65, stride=[1] * 65), "dimensions"),
    (lambda h: h["tensors"][0].update(offset=2 ** 80), "need a storage"),
    (lambda h: h["tensors"][0].update(dtype="float128"), "unknown dtype"),
    (lambda h: h["tensors"][0].update(dtype="complex128"), "need a storage"),
    (lambda h: h["tensors"][0].update(storage=5), "storage index"),
    (lambda h: h["tensors"][0].update(requires_grad="yes"), "booleans"),
    (lambda h: h["storages"][0].update(nbytes=400), "holds 64 bytes, expected 400"),
    (lambda h: h["storages"][0].update(nbytes=-1), "bad storage entry"),
    (lambda h: h["storages"][0].update(nbytes=2 ** 70), "implausible size"),
    (lambda h: h["storages"][0].update(nbytes=2 ** 70, location="meta"), "implausible size"),
    (lambda h: h["storages"][0].update(location="cuda:99999999999999999999"),
     "storage 0 saved at location 'cuda:99999999999999999999'"),
    (lambda h: h["storages"][0].update(location="tpu:0"), "restore data location"),
    (lambda h: h["storages"][0].update(key="../../etc/passwd"), "bad storage entry"),
    (lambda h: h["storages"].append({"key": "1", "nbytes": 0, "location": "cpu"}), "missing"),
    (lambda h: h.update(root={"$": "tensor", "id": 3}), "tensor index"),
    (lambda h: h.update(root={"$": "eval", "code": "1"}), "unknown value tag"),
    (lambda h: h.update(root={"x": 1}), "unknown value tag"),
    (lambda h: h.update(root={"$": "dict", "items": [[[1], 2]]}), "unhashable"),
    (lambda h: h.update(root={"$": "odict", "items": [], "attrs": {"__class__": 1}}),
     "refusing attribute"),
    (lambda h: h.update(root={"$": "odict", "items": [], "attrs": {"keys": 1}}),
     "refusing attribute"),
    (lambda h: h.update(root={"$": "bytes", "b64": "***"}), "base64"),
    (lambda h: h.update(root={"$": "dtype", "name": "__class__"}), "unknown dtype"),
    (lambda h: h.update(root={"$": "device", "name": "nowhere"}), "bad device"),
    (lambda h: h.update(root={"$": "device", "name": "cuda:99999999999999999999"}),
     "bad device"),
    (lambda h: h.update(root={"$": "size", "items": [2 ** 70]}), "bad Size"),
    (lambda h: h.update(root={"$": "float", "v": "1e400"}), "expected a float"),
    (lambda h: h.update(version=2), "version"),
    (lambda h: h.update(format="other"), "not a ptcore checkpoint header"),
    (lambda h: h.pop("root"), "lacks"),
    (lambda h: h.update(byteorder="big"), "byte order"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_malformed_headers_are_rejected(mutate, match):
    with pytest.raises(serialization.CheckpointError, match=match):
        ptcore.load(io.BytesIO(v1_archive(mutate)))


def test_the_base_archive_of_these_tests_is_valid():
    assert ptcore.load(io.BytesIO(v1_archive()))["t"].tolist() == list(range(16))


def test_bad_json_and_versions():
    for data in (b"{not json", b"\xff\xfe", b"[]", b"[" * 100000 + b"]" * 100000):
        with pytest.raises(RuntimeError, match="ptcore/data.json"):
            ptcore.load(io.BytesIO(v1_archive(data_json=data)))
    with pytest.raises(RuntimeError, match="format version 99"):
        ptcore.load(io.BytesIO(v1_archive(version=b"99\n")))
    with pytest.raises(RuntimeError, match="ptcore/version"):
        ptcore.load(io.BytesIO(v1_archive(version=None)))


def _header_with_nested_root(depth):
    """data.json whose root is a tuple inside ``depth`` nested lists."""
    text = json.dumps(dict(V1_HEADER, root=None))
    return text.replace('"root": null',
                        '"root": ' + "[" * depth + '{"$": "tuple", "items": []}' + "]" * depth)


def test_hostile_old_format_files_fail_cleanly_in_a_subprocess(tmp_path):
    deep_json = ("[" * 200000 + "]" * 200000).encode()
    files = {
        "nbytes 2**70": v1_archive(lambda h: h["storages"][0].update(nbytes=2 ** 70)),
        "meta nbytes 2**70": v1_archive(lambda h: h["storages"][0].update(nbytes=2 ** 70,
                                                                          location="meta")),
        "huge cuda index": v1_archive(lambda h: h["storages"][0].update(
            location="cuda:99999999999999999999")),
        "device value overflow": v1_archive(lambda h: h.update(
            root={"$": "device", "name": "cuda:99999999999999999999"})),
        "lists nested 200000 deep": v1_archive(data_json=deep_json),
        "root nested 200 deep": v1_archive(data_json=_header_with_nested_root(200)),
        "root nested 5000 deep": v1_archive(data_json=_header_with_nested_root(5000)),
    }
    res = load_in_subprocess(tmp_path, files)
    for name, (kind, mro, msg, seconds) in res.items():
        if name == "root nested 200 deep":
            assert kind == "ok"       # as deep as the version-1 ptcore.save could write
            continue
        assert "CheckpointError" in mro and "RuntimeError" in mro, (name, kind, msg)
        assert msg.startswith("ptcore.load: ") and "probe" in msg, (name, msg)   # names the file
        assert seconds < 60
    assert "implausible size" in res["nbytes 2**70"][2]
    assert "implausible size" in res["meta nbytes 2**70"][2]
    assert "cuda:99999999999999999999" in res["huge cuda index"][2]
    assert "bad device" in res["device value overflow"][2]
    assert "not valid JSON" in res["lists nested 200000 deep"][2]
    assert "RecursionError" in res["root nested 5000 deep"][2]


def test_fuzzed_old_headers_fail_cleanly():
    zf = zipfile.ZipFile(OLD_FILE)
    js = zf.read("ptcore/data.json")
    members = {n: zf.read(n) for n in zf.namelist()}
    rng = random.Random(1)
    for _ in range(300):
        bad = bytearray(js)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(len(bad))] = rng.choice(b'0123456789-[]{}",:.e$ntf')
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
            for n, d in members.items():
                out.writestr(n, bytes(bad) if n == "ptcore/data.json" else d)
        try:
            ptcore.load(io.BytesIO(buf.getvalue()))
        except RuntimeError:
            pass


def test_weights_only_false_and_map_location_read_old_files():
    a = ptcore.load(OLD_FILE, weights_only=False, map_location="cpu")
    assert a["state_dict"]["weight"].tolist() == np.arange(12.0).reshape(3, 4).tolist()
    with pytest.raises(pickle.UnpicklingError, match="Weights only"):
        # a pickled object in a torch-format file still needs weights_only=False
        buf = io.BytesIO()
        ptcore.save({"m": ptcore.nn.Linear(1, 1)}, buf)
        ptcore.load(io.BytesIO(buf.getvalue()))
