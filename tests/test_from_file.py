"""ptcore.from_file against torch.from_file (copied and shared reads, dtypes, errors)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    return path


@pytest.mark.parametrize("size, dtype", [(4, "float32"), (0, "float32"), (3, "float64"),
                                         (20, "bfloat16"), (40, "uint8"), (5, "int64")])
def test_from_file_matches_torch(data_file, size, dtype):
    t = torch.from_file(str(data_file), False, size, dtype=getattr(torch, dtype))
    p = ptcore.from_file(str(data_file), False, size, dtype=getattr(ptcore, dtype))
    assert tuple(p.shape) == tuple(t.shape) and str(p.dtype)[7:] == str(t.dtype)[6:]
    np.testing.assert_array_equal(p.float().numpy(), t.float().numpy())


def test_from_file_shared_writes_back(data_file):
    p = ptcore.from_file(data_file, shared=True, size=10)
    p[0] = 42.0
    assert np.fromfile(data_file, dtype=np.float32)[0] == 42.0
    c = ptcore.from_file(data_file, size=10)   # a copy: writes stay in memory
    c[1] = -1.0
    assert np.fromfile(data_file, dtype=np.float32)[1] == 1.0
    assert ptcore.from_file(data_file, size=2).dtype is ptcore.get_default_dtype()


def test_from_file_errors(data_file, tmp_path):
    with pytest.raises(RuntimeError):
        torch.from_file(str(data_file), size=20)
    with pytest.raises(RuntimeError, match="smaller than the required mapping size <80>"):
        ptcore.from_file(data_file, size=20)
    with pytest.raises(RuntimeError):
        torch.from_file(str(tmp_path / "missing.bin"), size=2)
    with pytest.raises(RuntimeError, match="unable to open file"):
        ptcore.from_file(tmp_path / "missing.bin", size=2)


@pytest.mark.parametrize("lib", ["torch", "ptcore"])
def test_from_file_shared_creates_and_grows_as_torch(tmp_path, lib):
    # tensordict's MemoryMappedTensor (TorchRL's LazyMemmapStorage) maps a new empty file
    # with shared=True: torch creates a missing file (mode 0600) and grows a short one to
    # the mapping's size (writing one zero byte at its start), rather than refusing it
    m = torch if lib == "torch" else ptcore
    empty, short, missing = tmp_path / "empty.bin", tmp_path / "short.bin", tmp_path / "no.bin"
    empty.write_bytes(b"")
    short.write_bytes(b"abc")
    t = m.from_file(str(empty), shared=True, size=6, dtype=m.float32)
    t[2] = 5.0
    del t
    assert np.fromfile(empty, np.float32).tolist() == [0, 0, 5, 0, 0, 0]
    u = m.from_file(str(short), shared=True, size=5, dtype=m.uint8)
    assert u.tolist() == [0, 98, 99, 0, 0] and short.read_bytes() == b"\0bc\0\0"
    st = m.UntypedStorage.from_file(str(missing), True, 10)
    assert st.nbytes() == 10 and missing.stat().st_size == 10
    assert missing.stat().st_mode & 0o777 == 0o600
    # size 0 opens nothing: no error for a missing file, and nothing is created
    for shared in (False, True):
        assert m.from_file(str(tmp_path / "none.bin"), shared=shared, size=0).numel() == 0
        assert m.UntypedStorage.from_file(str(tmp_path / "none.bin"), shared, 0).nbytes() == 0
    assert not (tmp_path / "none.bin").exists()
    # a private mapping still refuses a short file
    with pytest.raises(RuntimeError, match="smaller than the required mapping size <40>"):
        m.from_file(str(short), shared=False, size=10)
