"""The classes and printed form of scripted, traced, frozen and loaded
modules, compared with torch.jit."""
import io

import pytest

import ptcore

torch = pytest.importorskip("torch")


def _kinds(lib):
    mm = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
    s = lib.jit.script(mm)
    t = lib.jit.trace(mm, lib.ones(1, 2))
    out = {"script": s, "trace": t, "freeze": lib.jit.freeze(lib.jit.script(mm).eval()),
           "optimize": lib.jit.optimize_for_inference(lib.jit.script(mm).eval())}
    for name in ("script", "trace"):
        b = io.BytesIO()
        lib.jit.save(out[name], b)
        b.seek(0)
        out["load_" + name] = lib.jit.load(b)
    return out


def test_module_classes_match_torch():
    tk, pk = _kinds(torch), _kinds(ptcore)
    for name in tk:
        t, p = tk[name], pk[name]
        assert type(p).__name__ == type(t).__name__, name
        assert (isinstance(p, ptcore.jit.RecursiveScriptModule)
                == isinstance(t, torch.jit.RecursiveScriptModule)), name
        assert isinstance(p, ptcore.jit.ScriptModule), name
        assert (isinstance(p, ptcore.jit.TracedModule)
                == isinstance(t, torch.jit.TracedModule)), name


@pytest.mark.parametrize("name", ["script", "trace", "load_script", "load_trace"])
def test_printed_form_matches_torch(name):
    t, p = _kinds(torch)[name], _kinds(ptcore)[name]
    assert repr(p) == repr(t)


def test_recursive_script_module_is_a_script_module_subclass():
    assert issubclass(ptcore.jit.RecursiveScriptModule, ptcore.jit.ScriptModule)
    assert ptcore.jit.RecursiveScriptModule is not ptcore.jit.ScriptModule
