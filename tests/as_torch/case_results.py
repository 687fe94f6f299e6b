"""What the ``*_cases.py`` programs of tests/as_torch write and how their tests compare it:
:func:`to_json` turns tensors and NumPy arrays (nested in lists, tuples and dicts) into
JSON-ready records (shape, dtype, type name, values); :func:`compare` checks a ptcore run's records against the
torch run's: integer and bool tensors equal, float tensors and numbers to ``rtol`` and to
``atol`` times the reference's largest magnitude (at least 1).  Imported by the case programs
(run with the script's folder on ``sys.path``) and by the tests (tests/as_torch on sys.path)."""
import numpy as np

_EXACT = ("uint8", "int8", "int16", "int32", "int64", "bool")


def to_json(t):
    """A JSON-ready record of ``t``: tensors as dicts of shape, dtype, type and values."""
    if hasattr(t, "detach") and hasattr(t, "dtype"):
        return {"shape": list(t.shape), "dtype": str(t.dtype).split(".")[-1],
                "type": type(t).__name__, "values": t.detach().double().reshape(-1).tolist()}
    if isinstance(t, np.ndarray):       # (what scikit-learn-facing libraries return)
        return {"shape": list(t.shape), "dtype": str(t.dtype), "type": "ndarray",
                "values": t.astype(np.float64).reshape(-1).tolist()}
    if isinstance(t, np.generic):
        return t.item()
    if isinstance(t, (list, tuple)):
        return [to_json(x) for x in t]
    if isinstance(t, dict):
        return {k: to_json(v) for k, v in t.items()}
    return t


def _close(x, y, what, rtol, atol):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    assert x.shape == y.shape, f"{what}: shape {y.shape} != {x.shape}"
    scale = max(1.0, float(np.nanmax(np.abs(x)))) if x.size and np.isfinite(x).any() else 1.0
    np.testing.assert_allclose(y, x, rtol=rtol, atol=atol * scale, err_msg=what)


def compare(ref, got, what, rtol=1e-5, atol=1e-6):
    """Assert that ``got`` (ptcore's record) matches ``ref`` (torch's)."""
    if isinstance(ref, dict) and "values" in ref:
        assert (got["shape"], got["dtype"], got["type"]) == \
            (ref["shape"], ref["dtype"], ref["type"]), what
        if ref["dtype"] in _EXACT:
            np.testing.assert_array_equal(np.asarray(got["values"]), np.asarray(ref["values"]),
                                          err_msg=what)
        else:
            _close(ref["values"], got["values"], what, rtol, atol)
    elif isinstance(ref, dict):
        assert sorted(got) == sorted(ref), what
        for k in ref:
            compare(ref[k], got[k], f"{what}.{k}", rtol, atol)
    elif isinstance(ref, list) and ref and isinstance(ref[0], (dict, list)):
        assert len(got) == len(ref), what
        for i, (a, b) in enumerate(zip(ref, got)):
            compare(a, b, f"{what}[{i}]", rtol, atol)
    elif isinstance(ref, (str, bool)) or ref is None or \
            (isinstance(ref, list) and any(isinstance(v, str) for v in ref)):
        assert got == ref, f"{what}: {got!r} != {ref!r}"
    else:
        _close(ref, got, what, rtol, atol)


def fill_normal(tensors, seed, scale=0.1):
    """Overwrite each floating-point tensor of ``tensors``, in order, with NumPy normals times
    ``scale`` (the case programs' weights: the same numbers in both runs).  For the case
    programs only (they have torch, the real one or ptcore)."""
    import torch
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for t in tensors:
            if t.is_floating_point():
                # (np.asarray: a 0-d draw is a NumPy scalar, which from_numpy refuses)
                t.copy_(torch.from_numpy(np.asarray(rng.standard_normal(t.shape) * scale,
                                                    dtype=np.float32)))


def normal_tensor(seed, shape, scale=1.0, dtype=np.float32):
    """A tensor of NumPy standard normals (generator seeded with ``seed``) times ``scale``,
    as ``dtype``: the case programs' inputs, the same numbers in both runs.  For the case
    programs only (they have torch, the real one or ptcore)."""
    import torch
    return torch.from_numpy((np.random.default_rng(seed).standard_normal(shape) * scale)
                            .astype(dtype))


def values_and_grads(fns, x0, *args):
    """``{name: {"value": fn(x, *args), "grad": its gradient at x}}`` for each ``fn`` of the
    dict ``fns``, with ``x`` a fresh leaf copy of ``x0`` each time (a scalar ``fn``'s value
    and gradient, or the gradient of a non-scalar one's sum).  For the case programs only."""
    res = {}
    for name, fn in fns.items():
        x = x0.clone().requires_grad_()
        val = fn(x, *args)
        val.sum().backward()
        res[name] = {"value": val, "grad": x.grad}
    return res


def adam_steps(model, loss_fn, x, y, steps=3, lr=1e-2):
    """``steps`` Adam steps of ``model`` on ``loss_fn(model(x), y)``; the losses, as floats.
    For the case programs only (they have torch, the real one or ptcore)."""
    import torch
    return optimizer_steps(torch.optim.Adam(model.parameters(), lr=lr), model, loss_fn, x, y,
                           steps)


def optimizer_steps(opt, model, loss_fn, x, y, steps=3):
    """``steps`` steps of the optimizer ``opt`` on ``loss_fn(model(x), y)``; the losses, as
    floats.  For the case programs only."""
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main(cases, argv):
    """The case programs' entry: ``PROG OUT CASE...`` runs each named case (a function of
    ``cases`` returning a dict) and writes ``OUT/CASE.json`` with, besides what the case
    computed, the root module's name (``torch_name``: "ptcore" under the launcher)."""
    import json
    import os
    import sys

    import torch
    torch.set_num_threads(1)
    out, names = argv[1], argv[2:]
    for name in names:
        res = cases[name]()
        res["torch_name"] = "ptcore" if "ptcore" in sys.modules else torch.__name__
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(to_json(res), f)


def run_cases(root, script, names):
    """The tests' side: run case program ``script`` with torch and under the launcher
    (:func:`torch_free_env.run_both`) for the cases ``names``; returns the two runs' records
    ``(ref, got)``, each a dict from case name to what the case wrote."""
    import json
    from pathlib import Path

    import torch_free_env
    dirs = torch_free_env.run_both(Path(root), Path(script), names)
    return tuple({c: json.loads((d / f"{c}.json").read_text()) for c in names} for d in dirs)


def skip_unless_found(*libraries):
    """Skip the calling test module unless every one of ``libraries`` (import names) is
    installed.  Found, not imported: a library imported in the test process would sit next to
    the real torch there, and some patch torch on import (torch_geometric replaces
    ``torch.index_select``), which changes what later tests compare against."""
    import importlib.util

    import pytest
    for name in libraries:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed", allow_module_level=True)


def cases_fixture(script, names):
    """A module-scoped pytest fixture ``runs``: :func:`run_cases` of ``script`` (a file next
    to this one) for ``names``, once per test module."""
    import pytest
    from pathlib import Path

    @pytest.fixture(scope="module")
    def runs(tmp_path_factory):
        return run_cases(tmp_path_factory.mktemp(Path(script).stem),
                         Path(__file__).resolve().parent / script, names)
    return runs


def compare_case(runs, case, rtol=1e-5, atol=1e-6, per_key=None):
    """Check one case of :func:`run_cases`' result: the torch run saw torch, the other ptcore,
    and ptcore's records match torch's (:func:`compare`); ``per_key`` maps a record's name to
    tolerances of its own (``{"rtol": ..., "atol": ...}``)."""
    ref, got = dict(runs[0][case]), dict(runs[1][case])
    assert ref.pop("torch_name") == "torch" and got.pop("torch_name") == "ptcore"
    assert sorted(got) == sorted(ref), case
    for key in ref:
        tol = {"rtol": rtol, "atol": atol, **(per_key or {}).get(key, {})}
        compare(ref[key], got[key], f"{case}.{key}", **tol)


def case_tests(script, names, rtol=1e-5, atol=1e-6, per_case=None):
    """The ``runs`` fixture of :func:`cases_fixture` and a test parametrized over ``names``
    that checks each case with :func:`compare_case` (``per_case`` maps a case to its
    ``per_key`` tolerances); a test module assigns them: ``runs, test_lib = case_tests(...)``."""
    import pytest

    @pytest.mark.parametrize("case", names)
    def test_case(runs, case):
        compare_case(runs, case, rtol=rtol, atol=atol, per_key=(per_case or {}).get(case))
    return cases_fixture(script, names), test_case



def library_case_tests(script, libraries, rtol=1e-5, atol=1e-6):
    """:func:`case_tests` for a case program with one case per library: ``libraries`` maps
    each case to the import name of its library; the cases whose library is not installed
    are left out, and the calling test module is skipped when none is."""
    import importlib.util

    import pytest
    names = [c for c, mod in libraries.items() if importlib.util.find_spec(mod) is not None]
    if not names:
        pytest.skip(f"none of {', '.join(libraries.values())} is installed",
                    allow_module_level=True)
    return case_tests(script, names, rtol=rtol, atol=atol)
