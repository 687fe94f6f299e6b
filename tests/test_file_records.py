"""``ptcore.PyTorchFileReader`` / ``PyTorchFileWriter`` (``torch.PyTorchFileReader`` ...):
the records of archives in torch.save's layout, read and written record by record, checked
against torch's reader and writer both ways."""
import io
import zipfile

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.fixture
def torch_checkpoint():
    b = io.BytesIO()
    torch.save({"a": torch.arange(3.0), "b": torch.ones(2, dtype=torch.int64)}, b)
    return b.getvalue()


def test_reader_sees_torchs_records(torch_checkpoint):
    mine = ptcore.PyTorchFileReader(io.BytesIO(torch_checkpoint))
    ref = torch.PyTorchFileReader(io.BytesIO(torch_checkpoint))
    assert mine.get_all_records() == ref.get_all_records()
    for name in ref.get_all_records():
        assert mine.get_record(name) == ref.get_record(name)
        assert mine.get_record_size(name) == ref.get_record_size(name)
        assert mine.has_record(name)
    assert not mine.has_record("nope")
    assert mine.serialization_id() == ref.serialization_id()


def test_storage_from_record(torch_checkpoint):
    r = ptcore.PyTorchFileReader(io.BytesIO(torch_checkpoint))
    t = r.get_storage_from_record("data/0", 3, ptcore.float32)
    assert t.shape == (0,) and t.dtype == ptcore.float32
    st = t.untyped_storage()
    assert st.nbytes() == 12
    view = ptcore.tensor([], dtype=ptcore.float32).set_(st, 0, (3,), (1,))
    assert view.tolist() == [0.0, 1.0, 2.0]
    u = r.get_storage_from_record("data/0", 12, ptcore.UntypedStorage)
    assert u.dtype == ptcore.uint8 and u.untyped_storage().nbytes() == 12
    with pytest.raises(RuntimeError, match="12 bytes"):
        r.get_storage_from_record("data/0", 4, ptcore.float32)


def test_reader_errors(tmp_path):
    with pytest.raises(RuntimeError, match="failed locating file nope"):
        ptcore.PyTorchFileReader(io.BytesIO(_torch_bytes())).get_record("nope")
    with pytest.raises(RuntimeError, match="zip archive"):
        ptcore.PyTorchFileReader(io.BytesIO(b"not a zip at all"))
    mixed = tmp_path / "mixed.zip"
    with zipfile.ZipFile(mixed, "w") as z:
        z.writestr("a/x", b"1")
        z.writestr("b/y", b"2")
    with pytest.raises(RuntimeError, match="one top-level folder"):
        ptcore.PyTorchFileReader(str(mixed))
    with pytest.raises(TypeError):
        ptcore.PyTorchFileReader(3)


def _torch_bytes():
    b = io.BytesIO()
    torch.save([1], b)
    return b.getvalue()


def test_writer_records_read_by_torch(tmp_path):
    path = tmp_path / "pw.zip"
    w = ptcore.PyTorchFileWriter(str(path))
    w.write_record("foo", b"hello", 5)
    w.write_record("bar", ptcore.arange(4, dtype=ptcore.int32), 16)
    assert w.archive_name() == "pw" and w.get_all_written_records() == {"foo", "bar"}
    with pytest.raises(RuntimeError, match="already written"):
        w.write_record("foo", b"x", 1)
    w.write_end_of_file()
    ref = torch.PyTorchFileReader(str(path))
    assert ref.get_record("foo") == b"hello"
    assert np.frombuffer(ref.get_record("bar"), np.int32).tolist() == [0, 1, 2, 3]
    assert set(ref.get_all_records()) >= {"foo", "bar", "version", "byteorder"}


def test_a_checkpoint_rewritten_record_by_record_loads_in_both(tmp_path, torch_checkpoint):
    path = tmp_path / "ck.pt"
    w = ptcore.PyTorchFileWriter(str(path))
    r = ptcore.PyTorchFileReader(io.BytesIO(torch_checkpoint))
    for name in r.get_all_records():
        if name not in ("version", "byteorder", ".data/serialization_id"):
            data = r.get_record(name)
            w.write_record(name, data, len(data))
    w.write_end_of_file()
    t = torch.load(path)
    p = ptcore.load(path)
    assert t["a"].tolist() == p["a"].tolist() == [0.0, 1.0, 2.0]
    assert t["b"].tolist() == p["b"].tolist() == [1, 1]
