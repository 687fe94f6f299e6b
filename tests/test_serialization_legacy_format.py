"""torch.save's legacy (pre-1.6, non-zip) checkpoint format: ``ptcore.load``
reads it and ``ptcore.save(..., _use_new_zipfile_serialization=False)``
writes it.  Files made by hand from pickle opcodes (no torch needed), files
torch wrote and files torch reads, and corrupt or hostile files: every one
raises a clear error, allocates nothing it cannot hold and runs no code."""
import collections
import io
import pickle
import struct

import numpy as np
import pytest

import ptcore
from ptcore import serialization

from checkpoint_files import g, i, load_in_subprocess, rebuild_v2, s, tup

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

MAGIC = 0x1950a86a20f9469cfc6c


# ---------------------------------------------------------------------------
# hand-made legacy files
# ---------------------------------------------------------------------------

def legacy_pid(key="0", cls="FloatStorage", location="cpu", numel=4, view=None):
    v = b"N" if view is None else tup(s(view[0]), i(view[1]), i(view[2]))
    return tup(s("storage"), g("torch", cls), s(key), s(location), i(numel), v) + b"Q"


def header(magic=MAGIC, version=1001):
    return b"".join(pickle.dumps(x, 2) for x in (
        magic, version, {"protocol_version": 1001, "little_endian": True,
                         "type_sizes": {"short": 2, "int": 4, "long": 4}}))


def legacy_file(obj_pkl, keys, records, magic=MAGIC, version=1001):
    """header + object pickle + key list + ``records``: (numel, bytes) per key."""
    out = header(magic, version) + b"\x80\x02" + obj_pkl + b"." + pickle.dumps(keys, 2)
    for numel, data in records:
        out += struct.pack("<q", numel) + data
    return out


def four_floats_file(**pid_kw):
    pkl = b"}" + s("w") + rebuild_v2(legacy_pid(**pid_kw), 0, (4,), (1,)) + b"s"
    return legacy_file(pkl, ["0"], [(4, np.arange(4, dtype=np.float32).tobytes())])


def load_bytes(blob, **kw):
    return ptcore.load(io.BytesIO(blob), **kw)


# ---------------------------------------------------------------------------
# reading hand-made files (no torch)
# ---------------------------------------------------------------------------

def test_hand_made_file_loads():
    got = load_bytes(four_floats_file())
    assert list(got) == ["w"] and got["w"].dtype == ptcore.float32
    assert got["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_storage_views_share_the_root_storage():
    # an old PyTorch's storage view: storage "v" is elements 1..2 of storage "0"
    pkl = (b"}" + s("a") + rebuild_v2(legacy_pid(), 0, (4,), (1,)) + b"s"
           + s("b") + rebuild_v2(legacy_pid(view=("v", 1, 2)), 0, (2,), (1,)) + b"s")
    got = load_bytes(legacy_file(pkl, ["0"], [(4, np.arange(4, dtype=np.float32).tobytes())]))
    assert got["b"].tolist() == [1.0, 2.0]
    got["b"][0] = 10.0
    assert got["a"].tolist() == [0.0, 10.0, 2.0, 3.0]
    bad = (b"}" + s("b") + rebuild_v2(legacy_pid(view=("v", 3, 2)), 0, (2,), (1,)) + b"s")
    with pytest.raises(RuntimeError, match="runs past its storage"):
        load_bytes(legacy_file(bad, ["0"], [(4, np.arange(4, dtype=np.float32).tobytes())]))


def test_ptcore_round_trip_without_torch(tmp_path):
    x = ptcore.arange(12.0).view(3, 4)
    p = ptcore.nn.Parameter(ptcore.randn(2, 3))
    obj = {"x": x, "t": x.t(), "row": x[1], "i": ptcore.arange(5, dtype=ptcore.int16),
           "bf": ptcore.ones(3, dtype=ptcore.bfloat16), "c": ptcore.ones(2, dtype=ptcore.complex128),
           "b": ptcore.tensor([True, False]), "e": ptcore.empty(0, 2), "p": p,
           "meta": [1, "two", (3.5, None)], "od": collections.OrderedDict(a=ptcore.ones(1))}
    path = tmp_path / "old.pt"
    ptcore.save(obj, path, _use_new_zipfile_serialization=False)
    assert path.read_bytes()[:2] == b"\x80\x02"      # a pickle, not a zip archive
    got = ptcore.load(path)
    for k in ("x", "t", "row", "i", "bf", "c", "b", "e"):
        assert got[k].dtype == obj[k].dtype and got[k].shape == obj[k].shape, k
        assert got[k].stride() == obj[k].stride(), k
        assert got[k].storage_offset() == obj[k].storage_offset(), k
        assert ptcore.equal(got[k], obj[k]), k
    # views of one storage share it again
    assert got["t"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    assert type(got["p"]) is ptcore.nn.Parameter and ptcore.equal(got["p"], p)
    assert got["meta"] == [1, "two", (3.5, None)]
    assert type(got["od"]) is collections.OrderedDict and got["od"]["a"].tolist() == [1.0]


def test_full_unpickling_of_a_module_and_weights_only_refusal(tmp_path):
    m = ptcore.nn.Sequential(ptcore.nn.Linear(3, 2), ptcore.nn.ReLU())
    path = tmp_path / "m.pt"
    ptcore.save(m, path, _use_new_zipfile_serialization=False)
    with pytest.raises(pickle.UnpicklingError):
        ptcore.load(path)
    back = ptcore.load(path, weights_only=False)
    x = ptcore.randn(4, 3)
    assert ptcore.equal(back(x), m(x))


def test_map_location_moves_storages_after_their_bytes_arrive():
    blob = four_floats_file()
    seen = []

    def fn(storage, location):
        seen.append((storage.nbytes(), location))
        return None
    assert load_bytes(blob, map_location=fn)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert seen == [(16, "cpu")]
    # a callable returning another storage of the right size gets the bytes copied in
    got = load_bytes(blob, map_location=lambda st, loc: ptcore.zeros(4).untyped_storage())
    assert got["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="map_location returned a storage of 8 bytes"):
        load_bytes(blob, map_location=lambda st, loc: ptcore.zeros(2).untyped_storage())
    cuda = four_floats_file(location="cuda:0")
    for ml in ("cpu", {"cuda:0": "cpu"}, ptcore.device("cpu")):
        assert load_bytes(cuda, map_location=ml)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    if not ptcore.cuda.is_available():
        with pytest.raises(RuntimeError, match="is_available"):
            load_bytes(cuda)


def test_mmap_refused_and_skip_data(tmp_path):
    path = tmp_path / "w.pt"
    path.write_bytes(four_floats_file())
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ptcore.load(path, mmap=True)
    with serialization.skip_data():
        assert ptcore.load(path)["w"].tolist() == [0.0] * 4
    assert ptcore.load(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


@needs_torch
def test_get_unsafe_globals_in_checkpoint_wants_a_zip_archive():
    blob = four_floats_file()
    with pytest.raises(ValueError) as want:
        torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob))
    with pytest.raises(ValueError, match="legacy format") as got:
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob))
    assert str(want.value).split(" (")[0] in str(got.value)


def test_unseekable_stream_and_offset_in_file():
    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def readable(self):
            return True

        def seekable(self):
            return False

        def readinto(self, buf):
            return self._b.readinto(buf)
    assert ptcore.load(Stream(four_floats_file()))["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    class ReadOnly:          # no readinto (pickle needs read and readline)
        def __init__(self, data):
            self._b = io.BytesIO(data)
            self.read, self.readline = self._b.read, self._b.readline
            self.seek, self.tell = self._b.seek, self._b.tell
    assert ptcore.load(ReadOnly(four_floats_file()))["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    f = io.BytesIO(b"junk" + four_floats_file())
    f.seek(4)
    assert ptcore.load(f)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------
# corrupt and hostile files
# ---------------------------------------------------------------------------

def test_header_checks():
    with pytest.raises(RuntimeError, match="invalid magic number"):
        load_bytes(legacy_file(b"N", [], [], magic=12345))
    with pytest.raises(RuntimeError, match="invalid protocol version"):
        load_bytes(legacy_file(b"N", [], [], version=7))
    # a pickle that is not a checkpoint at all
    with pytest.raises(RuntimeError, match="invalid magic number"):
        load_bytes(pickle.dumps({"a": 1}, 2))


def test_storage_records_must_match_the_object():
    pkl = b"}" + s("w") + rebuild_v2(legacy_pid(), 0, (4,), (1,)) + b"s"
    data = np.arange(4, dtype=np.float32).tobytes()
    cases = {
        "names '9', which the object does not use": legacy_file(pkl, ["9"], [(4, data)]),
        "names '0' twice": legacy_file(pkl, ["0", "0"], [(4, data), (4, data)]),
        "holds 3 elements, but the object declares 4": legacy_file(pkl, ["0"], [(3, data)]),
        "no data for storage": legacy_file(pkl, [], []),
        "not a list of strings": legacy_file(pkl, [0], [(4, data)]),
        "ended after 8 of 16 bytes": legacy_file(pkl, ["0"], [(4, data[:8])]),
    }
    for msg, blob in cases.items():
        with pytest.raises(RuntimeError, match=msg):
            load_bytes(blob)


def test_tensor_must_fit_its_storage():
    pkl = b"}" + s("w") + rebuild_v2(legacy_pid(), 0, (5,), (1,)) + b"s"
    with pytest.raises(RuntimeError, match="need a storage of 20 bytes"):
        load_bytes(legacy_file(pkl, ["0"], [(4, bytes(16))]))


def test_huge_declared_storage_is_refused_before_allocation():
    pkl = b"}" + s("w") + rebuild_v2(legacy_pid(numel=1 << 60), 0, (4,), (1,)) + b"s"
    with pytest.raises(RuntimeError, match="more than the .* bytes left in the file"):
        load_bytes(legacy_file(pkl, ["0"], [(4, bytes(16))]))
    # two storages that each fit the file but together do not
    pkl = (b"}" + s("a") + rebuild_v2(legacy_pid("0", numel=400), 0, (4,), (1,)) + b"s"
           + s("b") + rebuild_v2(legacy_pid("1", numel=400), 0, (4,), (1,)) + b"s")
    with pytest.raises(RuntimeError, match="storage '1' declares 1600 bytes, more than"):
        load_bytes(legacy_file(pkl, ["0", "1"], [(400, bytes(1600))]))


def test_malformed_persistent_ids():
    for pid in (tup(s("storage"), g("torch", "FloatStorage"), s("0"), s("cpu"), i(4)) + b"Q",
                tup(s("module"), g("collections", "OrderedDict"), s("x"), s("y")) + b"Q",
                tup(s("storage"), g("torch", "FloatStorage"), s("0"), s("cpu"), i(-1),
                    b"N") + b"Q",
                legacy_pid(view=("v", -1, 2))):
        pkl = b"}" + s("w") + rebuild_v2(pid, 0, (4,), (1,)) + b"s"
        with pytest.raises(pickle.UnpicklingError):
            load_bytes(legacy_file(pkl, ["0"], [(4, bytes(16))]))


class _Boom:
    calls = []

    def __reduce__(self):
        return (_Boom.calls.append, ("ran",))


@pytest.mark.parametrize("where", ["magic", "object", "keys"])
def test_weights_only_never_runs_code_from_the_file(where):
    evil = pickle.dumps(_Boom(), 2)
    blob = four_floats_file()
    hdr = header()
    if where == "magic":
        blob = evil + blob[len(pickle.dumps(MAGIC, 2)):]
    elif where == "object":
        blob = hdr + evil + pickle.dumps([], 2)
    else:
        blob = legacy_file(b"N", [], []).replace(pickle.dumps([], 2), evil)
    _Boom.calls.clear()
    with pytest.raises(pickle.UnpicklingError, match="list.append|refus|Weights only"):
        load_bytes(blob)
    assert _Boom.calls == []


def test_every_truncation_raises_cleanly(tmp_path):
    x = ptcore.arange(6.0)
    buf = io.BytesIO()
    ptcore.save({"x": x, "y": x[2:], "n": 3}, buf, _use_new_zipfile_serialization=False)
    blob = buf.getvalue()
    for cut in range(len(blob)):
        with pytest.raises((RuntimeError, pickle.UnpicklingError, EOFError)):
            load_bytes(blob[:cut])
    # flipped bytes: an error or a value, never a crash (in a subprocess, memory capped)
    rng = np.random.default_rng(0)
    files = {}
    for k in range(40):
        b = bytearray(blob)
        for pos in rng.integers(0, len(b), size=3):
            b[pos] ^= int(rng.integers(1, 256))
        files[f"flip{k}"] = bytes(b)
    results = load_in_subprocess(tmp_path, files, mem_bytes=2 << 30)
    assert set(results) == set(files)


# ---------------------------------------------------------------------------
# against torch
# ---------------------------------------------------------------------------

def _state():
    torch.manual_seed(0)
    x = torch.arange(10.0)
    return {"w": torch.randn(3, 4), "wt": torch.randn(3, 4).t(), "i": torch.arange(5),
            "h": torch.randn(2).half(), "bf": torch.randn(3).bfloat16(),
            "c": torch.randn(2, dtype=torch.complex64), "b": torch.tensor([True, False]),
            "e": torch.empty(0, 3), "p": torch.nn.Parameter(torch.randn(2)),
            "view": x[2:7], "base": x, "i8": torch.tensor([-3, 4], dtype=torch.int8),
            "meta": [1, "s", (2.5, None)], "od": collections.OrderedDict(a=torch.ones(1))}


def _bits(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy().tobytes()


@needs_torch
def test_reads_torchs_legacy_files():
    sd = _state()
    b = io.BytesIO()
    torch.save(sd, b, _use_new_zipfile_serialization=False)
    got = load_bytes(b.getvalue())
    for k, v in sd.items():
        if isinstance(v, torch.Tensor):
            assert str(got[k].dtype)[7:] == str(v.dtype)[6:], k
            assert tuple(got[k].shape) == tuple(v.shape) and got[k].stride() == v.stride(), k
            assert got[k].storage_offset() == v.storage_offset(), k
            assert _bits(got[k]) == _bits(v), k
    assert type(got["p"]) is ptcore.nn.Parameter
    assert got["view"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    assert got["meta"] == sd["meta"] and type(got["od"]) is collections.OrderedDict


@needs_torch
def test_torch_reads_ptcores_legacy_files():
    got = load_bytes(_save_torch_legacy(_state()))
    b = io.BytesIO()
    ptcore.save(got, b, _use_new_zipfile_serialization=False)
    b.seek(0)
    back = torch.load(b, weights_only=True)
    for k, v in _state().items():
        if isinstance(v, torch.Tensor):
            assert back[k].dtype == v.dtype and back[k].stride() == v.stride(), k
            assert back[k].storage_offset() == v.storage_offset(), k
            assert _bits(back[k]) == _bits(v), k
        else:
            assert back[k] == v
    assert type(back["p"]) is torch.nn.Parameter
    assert back["view"].untyped_storage().data_ptr() == back["base"].untyped_storage().data_ptr()


def _save_torch_legacy(obj):
    b = io.BytesIO()
    torch.save(obj, b, _use_new_zipfile_serialization=False)
    return b.getvalue()


@needs_torch
def test_model_zoo_style_checkpoint_gives_torchs_outputs():
    # an old model-zoo file: a CNN's state dict saved in the legacy format
    torch.manual_seed(1)

    def net(nn):
        return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    tm = net(torch.nn)
    tm(torch.randn(4, 3, 9, 9))          # running stats move
    tm.eval()
    pm = net(ptcore.nn)
    pm.load_state_dict(load_bytes(_save_torch_legacy(tm.state_dict())))
    pm.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype(np.float32)
    with torch.no_grad():
        want = tm(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(pm(ptcore.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)
