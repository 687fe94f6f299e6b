"""ptcore.hub against torch.hub 2.13, offline: local hubconf directories, the
GitHub cache layout, and checkpoints from file:// URLs into the cache."""
import hashlib
import os
import zipfile

import pytest

import ptcore

torch = pytest.importorskip("torch")

HUBCONF = '''
dependencies = {deps!r}


def linear(n_in, n_out, lib="ptcore"):
    """A Linear layer."""
    import importlib
    L = importlib.import_module(lib)
    L.manual_seed(0)
    return L.nn.Linear(n_in, n_out)


def _private():
    return 1

not_callable = 3
'''


def _repo(path, deps=()):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "hubconf.py"), "w") as fh:
        fh.write(HUBCONF.format(deps=list(deps)))
    return str(path)


def test_load_local_matches_torch(tmp_path):
    d = _repo(tmp_path / "repo")
    p = ptcore.hub.load(d, "linear", 3, 2, source="local")
    t = torch.hub.load(d, "linear", 3, 2, source="local", lib="torch")
    assert isinstance(p, ptcore.nn.Linear) and isinstance(t, torch.nn.Linear)
    assert p.weight.shape == t.weight.shape == (2, 3)
    assert ptcore.hub.load(d, "linear", n_in=4, n_out=1, source="LOCAL").weight.shape == (1, 4)


def test_load_errors_match_torch(tmp_path):
    d = _repo(tmp_path / "repo")
    bad = _repo(tmp_path / "bad", deps=["no_such_pkg_xyz"])
    for L in (torch, ptcore):
        with pytest.raises(ValueError, match="Unknown source"):
            L.hub.load(d, "linear", source="svn")
        with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
            L.hub.load(d, "missing", source="local")
        with pytest.raises(RuntimeError, match="Cannot find callable not_callable"):
            L.hub.load(d, "not_callable", source="local")
        with pytest.raises(ValueError, match="model should be a string"):
            L.hub.load(d, 3, source="local")
        with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_xyz"):
            L.hub.load(bad, "linear", source="local")


@pytest.fixture
def hub_dirs(tmp_path):
    old_p, old_t = ptcore.hub.get_dir(), torch.hub.get_dir()
    ptcore.hub.set_dir(tmp_path / "p")
    torch.hub.set_dir(str(tmp_path / "t"))
    yield tmp_path
    ptcore.hub.set_dir(old_p)
    torch.hub.set_dir(old_t)


def test_get_dir_env(monkeypatch):
    monkeypatch.setattr(ptcore.hub, "_hub_dir", None)
    monkeypatch.setenv("PTCORE_HOME", "/x/home")
    assert ptcore.hub.get_dir() == "/x/home/hub"
    monkeypatch.delenv("PTCORE_HOME")
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert ptcore.hub.get_dir() == "/x/cache/ptcore/hub"


def test_github_repo_from_cache_as_torch(hub_dirs, capsys):
    """A repository already in the cache is used without any network access."""
    for L, sub in ((ptcore, "p"), (torch, "t")):
        _repo(hub_dirs / sub / "someone_models_v1")
        assert L.hub.list("someone/models:v1", trust_repo=True) == ["linear"]
        assert "Using cache found in" in capsys.readouterr().err
        assert L.hub.help("someone/models:v1", "linear", trust_repo=True) == "A Linear layer."
        m = L.hub.load("someone/models:v1", "linear", 2, 5, lib=L.__name__, trust_repo=True,
                       verbose=False)
        assert m.weight.shape == (5, 2)
        with open(hub_dirs / sub / "trusted_list") as fh:   # a cached repo counts as trusted
            assert fh.read().split() == []


def test_untrusted_repo_refused_as_torch(hub_dirs, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    for L, sub in ((ptcore, "p"), (torch, "t")):
        os.makedirs(hub_dirs / sub, exist_ok=True)
        with pytest.raises(Exception, match="Untrusted repository"):
            L.hub.load("someone/other:main", "linear", trust_repo=False)


def _sha(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_load_state_dict_from_file_url_and_cache(tmp_path, capsys):
    ptcore.manual_seed(1)
    m = ptcore.nn.Linear(3, 2)
    src = tmp_path / "src" / "lin.pt"
    src.parent.mkdir()
    ptcore.save(m.state_dict(), src)
    cache = tmp_path / "cache"
    sd = ptcore.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(cache), progress=False)
    assert "Downloading" in capsys.readouterr().out
    assert (cache / "lin.pt").exists()
    assert _sha(cache / "lin.pt") == _sha(src)
    for k, v in m.state_dict().items():
        assert sd[k].tolist() == v.tolist()
    src.unlink()                         # now only the cache has it
    sd2 = ptcore.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(cache))
    assert "Downloading" not in capsys.readouterr().out
    assert sd2["weight"].tolist() == m.weight.tolist()


def test_load_state_dict_from_url_reads_torch_checkpoints(tmp_path):
    t = torch.nn.Conv2d(2, 3, 3)
    src = tmp_path / "conv.pth"
    torch.save(t.state_dict(), src)
    sd = ptcore.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(tmp_path / "c"),
                                             progress=False, file_name="renamed.pth",
                                             weights_only=True)
    assert (tmp_path / "c" / "renamed.pth").exists()
    p = ptcore.nn.Conv2d(2, 3, 3)
    p.load_state_dict(sd)
    assert p.weight.tolist() == t.weight.tolist()


def test_check_hash(tmp_path):
    src = tmp_path / "w.pt"
    ptcore.save({"a": ptcore.arange(3)}, src)
    h = _sha(src)
    good = tmp_path / f"w-{h[:10]}.pt"
    bad = tmp_path / "w-deadbeef.pt"
    for p in (good, bad):
        p.write_bytes(src.read_bytes())
    for L in (torch, ptcore):
        cache = tmp_path / ("c_" + L.__name__)
        with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
            L.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(cache), check_hash=True,
                                           progress=False)
        assert not (cache / bad.name).exists()
        assert not [f for f in os.listdir(cache) if f.endswith(".partial")]
    sd = ptcore.hub.load_state_dict_from_url(good.as_uri(), model_dir=str(tmp_path / "c2"),
                                             check_hash=True, progress=False)
    assert sd["a"].tolist() == [0, 1, 2]


def test_legacy_zip_checkpoint(tmp_path):
    inner = tmp_path / "inner.pt"
    ptcore.save({"w": ptcore.ones(2)}, inner)
    z = tmp_path / "old.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(inner, "inner.pt")
    with pytest.warns(FutureWarning, match="old format"):
        sd = ptcore.hub.load_state_dict_from_url(z.as_uri(), model_dir=str(tmp_path / "c"),
                                                 progress=False)
    assert sd["w"].tolist() == [1.0, 1.0]


def test_download_url_to_file(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(bytes(range(256)) * 1000)
    dst = tmp_path / "out" / "copy.bin"
    dst.parent.mkdir()
    ptcore.hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=_sha(src)[:8],
                                    progress=False)
    assert dst.read_bytes() == src.read_bytes()
    with pytest.raises(Exception):
        ptcore.hub.download_url_to_file((tmp_path / "nope").as_uri(), str(dst), progress=False)


def test_hub_dir_default_under_ptcore_home():
    assert ptcore.hub.get_dir().endswith("hub")


def test_tqdm_is_exported(capsys):
    """``from torch.hub import tqdm`` (vision_transformer's example): the
    real tqdm when it is installed, else a stand-in that counts, iterates and
    works as a context manager."""
    from ptcore.hub import _Faketqdm, tqdm
    try:
        import tqdm as real
        assert tqdm is real.tqdm
    except ImportError:
        assert tqdm is _Faketqdm
    assert list(_Faketqdm(range(4), desc="x")) == [0, 1, 2, 3]
    assert len(_Faketqdm(range(7))) == 7
    with _Faketqdm(total=8) as bar:
        bar.update(2)
        bar.set_description("y")
        bar.set_postfix(loss=1.0)
        assert bar.n == 2
    err = capsys.readouterr().err
    assert "100.0%" in err and "25.0%" in err
    quiet = _Faketqdm(total=3, disable=True)
    quiet.update(3)
    quiet.close()
    assert capsys.readouterr().err == ""


def test_model_zoo_load_url_is_the_hub_download(tmp_path):
    import ptcore.utils.model_zoo as model_zoo
    assert model_zoo.load_url is ptcore.hub.load_state_dict_from_url
    src = tmp_path / "w.pt"
    ptcore.save({"w": ptcore.arange(3.0)}, src)
    sd = model_zoo.load_url(src.as_uri(), model_dir=str(tmp_path / "c"), progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
