"""``serialization.skip_data`` and the ``TORCH_FORCE_(NO_)WEIGHTS_ONLY_LOAD``
environment overrides of ``load``, as torch's (torch is the oracle where installed)."""
import io
import pickle
import warnings
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore import serialization


def _save(obj, **kw):
    buf = io.BytesIO()
    ptcore.save(obj, buf, **kw)
    buf.seek(0)
    return buf


def test_skip_data_save_writes_zeros_of_the_storages_size():
    t = ptcore.arange(6.0).reshape(2, 3)
    full = _save({"w": t, "b": ptcore.ones(3, dtype=ptcore.int64)})
    with serialization.skip_data():
        skipped = _save({"w": t, "b": ptcore.ones(3, dtype=ptcore.int64)})
    assert not serialization._serialization_tls.skip_data
    with zipfile.ZipFile(full) as a, zipfile.ZipFile(skipped) as b:
        data = [n for n in a.namelist() if "/storages/" in n]
        assert sorted(data) == sorted(n for n in b.namelist() if "/storages/" in n)
        for n in data:
            assert len(b.read(n)) == len(a.read(n)) > 0
            assert set(b.read(n)) == {0}
    skipped.seek(0)
    got = ptcore.load(skipped)
    assert got["w"].shape == (2, 3) and got["w"].dtype == ptcore.float32
    assert got["b"].dtype == ptcore.int64
    np.testing.assert_array_equal(got["w"].numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(got["b"].numpy(), np.zeros(3, np.int64))


def test_skip_data_load_builds_the_layout_without_the_bytes():
    base = ptcore.arange(12.0)
    buf = _save({"view": base[2:8].view(2, 3), "base": base})
    with serialization.skip_data():
        got = ptcore.load(buf)
    assert got["view"].shape == (2, 3) and got["view"].storage_offset() == 2
    assert got["view"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    assert float(got["base"].abs().sum()) == 0.0
    buf.seek(0)
    np.testing.assert_array_equal(ptcore.load(buf)["base"].numpy(), np.arange(12.0))


def test_skip_data_refuses_the_legacy_format_and_restores_on_error():
    with pytest.raises(RuntimeError, match="_use_new_zipfile_serialization=False"):
        with serialization.skip_data():
            ptcore.save(ptcore.ones(2), io.BytesIO(), _use_new_zipfile_serialization=False)
    assert serialization._serialization_tls.skip_data is False


def test_skip_data_applies_to_pickled_checkpoints():
    m = ptcore.nn.Linear(3, 2)
    with serialization.skip_data():
        buf = _save(m)
    got = ptcore.load(buf, weights_only=False)
    assert isinstance(got, ptcore.nn.Linear)
    assert float(got.weight.detach().abs().sum()) == 0.0 and got.weight.shape == (2, 3)


def test_skip_data_reads_torchs_files_and_torch_reads_ours(tmp_path):
    torch = pytest.importorskip("torch")
    p = tmp_path / "t.pt"
    torch.save({"a": torch.arange(5.0)}, p)
    with serialization.skip_data():
        got = ptcore.load(p)
    np.testing.assert_array_equal(got["a"].numpy(), np.zeros(5, np.float32))
    q = tmp_path / "m.pt"
    with serialization.skip_data():
        ptcore.save(ptcore.nn.Linear(2, 2), q)
    with torch.serialization.skip_data():
        torch.save(torch.nn.Linear(2, 2), tmp_path / "tm.pt")
    for path, lib in ((q, torch), (tmp_path / "tm.pt", torch)):
        m = lib.load(path, weights_only=False)
        assert float(m.weight.detach().abs().sum()) == 0.0


def test_force_no_weights_only_load_makes_an_unset_weights_only_false(monkeypatch):
    buf = _save(ptcore.nn.Linear(2, 2))
    with pytest.raises(pickle.UnpicklingError):
        ptcore.load(buf)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    buf.seek(0)
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        m = ptcore.load(buf)
    assert isinstance(m, ptcore.nn.Linear)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):      # an explicit weights_only=True wins
        ptcore.load(buf, weights_only=True)


def test_force_weights_only_load_wins_over_weights_only_false(monkeypatch):
    buf = _save(ptcore.nn.Linear(2, 2))
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(pickle.UnpicklingError):
        ptcore.load(buf, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    buf.seek(0)
    with pytest.raises(RuntimeError, match="Only one of"):
        ptcore.load(buf)


@pytest.mark.parametrize("env", [{}, {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
                                 {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"},
                                 {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "0"}])
@pytest.mark.parametrize("weights_only", [None, True, False])
def test_environment_overrides_as_torch(monkeypatch, tmp_path, env, weights_only):
    torch = pytest.importorskip("torch")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    p = tmp_path / "m.pt"
    torch.save(torch.nn.Linear(2, 2), p)

    def outcome(lib):
        kw = {} if weights_only is None else {"weights_only": weights_only}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = lib.load(p, **kw)
        except pickle.UnpicklingError:
            return "refused"
        return type(m).__name__
    assert outcome(ptcore) == outcome(torch)
