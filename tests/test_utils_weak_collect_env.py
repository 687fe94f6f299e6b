"""ptcore.utils.weak (identity-keyed weak references) and
ptcore.utils.collect_env (the environment report), against torch's."""
import copy
import gc
import subprocess
import sys

import pytest

import ptcore
from ptcore.utils import collect_env, weak

torch = pytest.importorskip("torch")
import torch.utils.weak as tweak  # noqa: E402
import torch.utils.collect_env as tenv  # noqa: E402


def _dict_story(lib, mod):
    """A sequence of observations of a WeakTensorKeyDictionary's life."""
    a, b, c = lib.ones(2), lib.ones(2), lib.zeros(3)
    d = mod.WeakTensorKeyDictionary()
    d[a] = "a"
    d[b] = "b"
    out = [len(d), d[a], d[b], a in d, c in d, d.get(c, "none"), 5 in d]
    d.setdefault(c, "c")
    out += [len(d), sorted(d.values())]
    del b
    gc.collect()
    out += [len(d), sorted(d.values())]
    # a removal while iterating is deferred
    it = d.items()
    next(it)
    del c
    gc.collect()
    out.append(len(d))
    list(it)
    out.append(len(d))
    out.append(d.pop(a))
    out.append(len(d))
    with pytest.raises(KeyError):
        d[a]
    d2 = mod.WeakIdKeyDictionary({a: 1})
    d3 = d2.copy()
    d4 = copy.deepcopy(d2)
    out += [d3[a], d4[a], d2 == d3, len(d2 | {a: 2}), (d2 | {a: 2})[a]]
    out.append(d2.popitem()[1])
    out.append(len(d2.keyrefs()))
    return out


def test_weak_tensor_key_dictionary_matches_torch():
    assert _dict_story(ptcore, weak) == _dict_story(torch, tweak)


def test_weak_id_ref_hash_and_equality_as_torch():
    for lib, mod in ((torch, tweak), (ptcore, weak)):
        t = lib.ones(1)
        r1, r2 = mod.WeakIdRef(t), mod.WeakIdRef(t)
        assert r1 == r2 and hash(r1) == hash(r2) == id(t) and r1() is t
        r3 = mod.WeakIdRef(lib.ones(1))
        gc.collect()
        assert r3() is None and r3 == r3 and r3 != r1
        assert hash(r3) != 0
        w = mod.TensorWeakRef(t)
        assert w() is t
        del t
        gc.collect()
        assert w() is None


def test_tensor_weak_ref_refuses_non_tensors():
    with pytest.raises((TypeError, AssertionError)):
        tweak.TensorWeakRef([1])
    with pytest.raises(TypeError):
        weak.TensorWeakRef([1])


def test_env_info_has_torchs_fields_and_report_lines():
    assert collect_env.SystemEnv._fields == tenv.SystemEnv._fields
    info = collect_env.get_env_info()
    assert info.torch_version == str(ptcore.__version__)
    assert info.python_platform == tenv.get_python_platform()
    assert info.libc_version == tenv.get_libc_version()
    assert info.is_cuda_available == ptcore.cuda.is_available()
    text = collect_env.pretty_str(info)
    assert text.startswith(f"ptcore version: {ptcore.__version__}")
    # every line label of torch's report appears in the same order
    labels = [line.split(":")[0] for line in tenv.env_info_fmt.splitlines()
              if ":" in line and not line.startswith(("PyTorch", "CUDA used", "ROCM used"))]
    ours = [line.split(":")[0] for line in text.splitlines() if ":" in line]
    pos = [ours.index(lab) for lab in labels]
    assert pos == sorted(pos)


def test_collect_env_runs_as_a_module():
    p = subprocess.run([sys.executable, "-m", "ptcore.utils.collect_env"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Collecting environment information...\nptcore version:")
    assert "Python version:" in p.stdout and "Is CUDA available:" in p.stdout
