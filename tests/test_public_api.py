"""ptcore's public names against torch 2.13's (``torch.X`` -> ``ptcore.X``).

Walks torch's public modules (top level, ``torch.Tensor``, ``nn``, ``nn.functional``,
``optim``, ``optim.lr_scheduler``, ``utils.data``, ``autograd``, ``linalg`` and the submodule
paths a script imports from: ``nn.modules.activation``, ``optim.sgd``,
``utils.data.dataloader`` ...) and fails on every public class, function or constant that
ptcore lacks unless ``public_api_exceptions.txt`` lists it with a reason.  Entries of the
exceptions file that ptcore now has must be deleted (the list stays honest), except under a
``[pending merge: ...]`` reason: those name what another branch adds, and are deleted after
the merge.

``python tests/test_public_api.py`` prints the missing names and counts per area (``--all``
lists the excepted ones too, ``--stale`` the entries ptcore has now).
"""
import importlib
import pathlib
import pkgutil
import types
import typing

import pytest

torch = pytest.importorskip("torch")

EXCEPTIONS_FILE = pathlib.Path(__file__).with_name("public_api_exceptions.txt")

# Modules compared through dir() (as a user's ``torch.X`` sees them).
NAMESPACES = ["torch", "torch.nn", "torch.nn.functional", "torch.nn.utils", "torch.optim",
              "torch.optim.lr_scheduler", "torch.utils.data", "torch.autograd", "torch.linalg",
              "torch.jit", "torch.onnx"]

# Packages whose (non-private) submodules are compared through their __all__ (or the names
# they define): the import paths of ``from torch.nn.modules.loss import _Loss`` ...
SUBMODULE_PACKAGES = ["torch.nn.modules", "torch.optim", "torch.utils.data", "torch.nn.utils",
                      "torch.autograd"]
EXTRA_SUBMODULES = ["torch.nn.init", "torch.nn.parameter", "torch.nn.modules.loss"]

# Private names that code imports by path anyway (base classes of user subclasses).
PRIVATE_BY_PATH = {
    "torch.nn.modules.loss": ["_Loss", "_WeightedLoss"],
    "torch.nn.modules.batchnorm": ["_BatchNorm", "_NormBase"],
    "torch.nn.modules.conv": ["_ConvNd"],
    "torch.nn.modules.pooling": ["_MaxPoolNd", "_AvgPoolNd"],
    "torch.nn.modules.instancenorm": ["_InstanceNorm"],
    "torch.nn.modules.utils": ["_single", "_pair", "_triple", "_quadruple", "_ntuple"],
    "torch.optim.lr_scheduler": ["_LRScheduler"],
}


def _ptcore_name(qualname):
    return "ptcore" + qualname[len("torch"):]


def _is_foreign(value):
    """Objects a torch module merely imports: stdlib modules and typing constructs."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith("torch")
    module = getattr(value, "__module__", None)
    if module in ("typing", "typing_extensions", "collections.abc", "abc", "enum", "functools",
                  "builtins"):
        return not isinstance(value, type) or module == "typing"
    return isinstance(value, (typing.TypeVar,)) or type(value).__module__ == "typing"


def _dir_names(module):
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        try:
            value = getattr(module, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails is not public API
            continue
        if not _is_foreign(value):
            names.append(name)
    return names


def _defined_names(module):
    if hasattr(module, "__all__"):
        names = list(module.__all__)
    else:
        names = [n for n in dir(module) if not n.startswith("_")
                 and getattr(getattr(module, n), "__module__", None) == module.__name__]
    return names + PRIVATE_BY_PATH.get(module.__name__, [])


def _submodules():
    out = []
    for pkg_name in SUBMODULE_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.iter_modules(pkg.__path__):
            if not info.name.startswith("_"):
                out.append(f"{pkg_name}.{info.name}")
    for name in EXTRA_SUBMODULES:
        if name not in out:
            out.append(name)
    return sorted(set(out) - set(NAMESPACES))


def _import_ptcore(name):
    try:
        return importlib.import_module(_ptcore_name(name))
    except ImportError:
        return None


def torch_listing():
    """``{namespace: public names}`` of torch's namespaces and ``torch.Tensor`` as a fresh
    ``import torch`` has them (torch adds lazily imported submodules, e.g. ``torch.onnx``, to
    its namespace once some code imports them, so this runs in a subprocess)."""
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, __file__, "--torch-listing"], capture_output=True,
                         text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _torch_listing_here():
    listing = {ns: _dir_names(importlib.import_module(ns)) for ns in NAMESPACES}
    listing["torch.Tensor"] = [n for n in dir(torch.Tensor) if not n.startswith("_")]
    return listing


def missing_names():
    """``{area: [qualified torch names ptcore lacks]}``."""
    import ptcore
    areas = {}
    listing = torch_listing()
    for ns in NAMESPACES:
        pmod = _import_ptcore(ns)
        areas[ns] = sorted(f"{ns}.{n}" for n in listing[ns]
                           if pmod is None or not hasattr(pmod, n))
    areas["torch.Tensor"] = sorted(
        f"torch.Tensor.{n}" for n in listing["torch.Tensor"] if not hasattr(ptcore.Tensor, n))
    subs = []
    for sub in _submodules():
        try:
            tmod = importlib.import_module(sub)
        except Exception:  # noqa: BLE001 - torch's own optional submodules
            continue
        pmod = _import_ptcore(sub)
        if pmod is None:
            subs.append(sub)  # the whole module path is missing
            continue
        subs.extend(f"{sub}.{n}" for n in _defined_names(tmod) if not hasattr(pmod, n))
    areas["submodules"] = sorted(subs)
    return areas


def load_exceptions(path=EXCEPTIONS_FILE):
    """``{qualified name: reason}`` from the exceptions file (``[reason]`` headers)."""
    out = {}
    reason = None
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            reason = line[1:-1].strip()
            continue
        if reason is None:
            raise ValueError(f"{path.name}:{lineno}: name {line!r} before any [reason] header")
        if line in out:
            raise ValueError(f"{path.name}:{lineno}: {line!r} listed twice")
        out[line] = reason
    return out


@pytest.fixture(scope="module")
def areas():
    return missing_names()


def test_exceptions_file_well_formed():
    exc = load_exceptions()
    assert exc, "the exceptions file is empty"
    assert all(reason for reason in exc.values())
    assert all(name.startswith("torch.") for name in exc)


@pytest.mark.parametrize("area", NAMESPACES + ["torch.Tensor", "submodules"])
def test_no_unlisted_missing_names(areas, area):
    exc = load_exceptions()
    unlisted = [n for n in areas[area] if n not in exc]
    assert not unlisted, (
        f"{len(unlisted)} public names of {area} are missing in ptcore and not listed in "
        f"{EXCEPTIONS_FILE.name}: {unlisted}")


PENDING = "pending merge"


def stale_exceptions(areas, exc, include_pending=False):
    missing = {n for names in areas.values() for n in names}
    return sorted(n for n, reason in exc.items() if n not in missing
                  and (include_pending or not reason.startswith(PENDING)))


def test_no_stale_exceptions(areas):
    stale = stale_exceptions(areas, load_exceptions())
    assert not stale, (f"ptcore now has these names; delete them from {EXCEPTIONS_FILE.name}: "
                       f"{stale}")


def test_submodule_paths_are_the_same_objects():
    # ``from ptcore.nn.modules.loss import _Loss`` must give the class ``ptcore.nn`` uses.
    import ptcore.nn.modules.activation as act
    import ptcore.nn.modules.loss as loss
    import ptcore.nn.modules.module as module
    import ptcore.optim.lr_scheduler as sched
    import ptcore.optim.optimizer as optimizer
    import ptcore.utils.data.dataloader as dataloader
    import ptcore.utils.data.dataset as dataset
    import ptcore
    import ptcore.nn
    import ptcore.optim
    import ptcore.utils.data
    assert act.MultiheadAttention is ptcore.nn.MultiheadAttention
    assert issubclass(ptcore.nn.MSELoss, loss._Loss)
    assert module.Module is ptcore.nn.Module
    assert optimizer.Optimizer is ptcore.optim.Optimizer
    assert issubclass(ptcore.optim.lr_scheduler.StepLR, sched.LRScheduler)
    assert dataloader.DataLoader is ptcore.utils.data.DataLoader
    assert dataset.Dataset is ptcore.utils.data.Dataset


if __name__ == "__main__":
    import sys
    if "--torch-listing" in sys.argv:
        import json
        print(json.dumps(_torch_listing_here()))
        sys.exit(0)
    exc = load_exceptions() if EXCEPTIONS_FILE.exists() else {}
    show_all = "--all" in sys.argv
    found = missing_names()
    if "--stale" in sys.argv:
        print("\n".join(stale_exceptions(found, exc, include_pending=True)))
        sys.exit(0)
    for area, names in found.items():
        unlisted = [n for n in names if n not in exc]
        print(f"{area}: {len(names)} missing, {len(unlisted)} not in the exceptions file")
        for n in (names if show_all else unlisted):
            print("   ", n)
