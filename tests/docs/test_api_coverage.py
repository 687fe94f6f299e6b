"""Every public module of ptcore has an API page, or a stated reason why not.

Public modules are found on disk, not listed by hand: every package
(a folder with ``__init__.py``) and every top-level ``ptcore/<name>.py`` whose dotted
name has no component starting with ``_``.  A package counts as covered by its own
page or by pages of its submodules (``ptcore.utils`` by ``ptcore.utils.data`` & co.).
The pages are the ones ``doc/_ext/ptcore_apigen.py`` writes when Sphinx starts.
"""
import importlib
import sys
from pathlib import Path

import pytest

import ptcore

DOC = Path(__file__).resolve().parents[2] / "doc"
PKG = Path(ptcore.__file__).resolve().parent
pytestmark = pytest.mark.skipif(not (DOC / "_ext" / "ptcore_apigen.py").is_file(),
                                reason="doc/ is not in this tree")

# public modules with no page of their own, and where their names are documented
NO_PAGE = {
    "ptcore.nn.modules": "the classes of ptcore.nn (torch.nn.modules), on the ptcore.nn page",
    "ptcore.tensor": "the Tensor class, on the ptcore.Tensor page",
    "ptcore.storage": "TypedStorage/UntypedStorage, exported and documented on the ptcore page",
    "ptcore.functional": "torch.functional's names, documented on the ptcore page",
    "ptcore.quasirandom": "SobolEngine, documented on the ptcore page",
    "ptcore.version": "build information: __version__, torch_api, cuda (data, no functions)",
    "ptcore.torch_version": "TorchVersion, the type of ptcore.__version__",
    "ptcore.types": "type aliases for annotations (torch.types), no functions",
    "ptcore.ao.nn.quantized.dynamic.modules": "the classes of ptcore.ao.nn.quantized.dynamic, "
                                              "on its page",
    "ptcore.nn.quantized": "torch.nn.quantized's old path of ptcore.ao.nn.quantized",
    "ptcore.quantization": "torch.quantization's old path of ptcore.ao.quantization, on its page",
    "ptcore.nn.quantized.dynamic": "the old path of ptcore.ao.nn.quantized.dynamic, on its page",
}
# the CUDA device's implementation, by role (doc/dev/cuda.rst, "Layout of the package"):
# no public API of their own (torch.cuda has no such modules; users reach them through
# ptcore.cuda's public modules)
for _role in ("allocator", "driver", "emulated", "kernels", "ops", "runtime"):
    NO_PAGE[f"ptcore.cuda.{_role}"] = "the CUDA device's implementation (doc/dev/cuda.rst)"
del _role


def public_modules():
    found = set()
    for init in PKG.rglob("__init__.py"):
        parts = ("ptcore",) + init.parent.relative_to(PKG).parts
        if not any(p.startswith("_") for p in parts[1:]):
            found.add(".".join(parts))
    for py in PKG.glob("*.py"):
        if not py.name.startswith("_"):
            found.add(f"ptcore.{py.stem}")
    return sorted(found)


@pytest.fixture(scope="module")
def pages():
    sys.path.insert(0, str(DOC / "_ext"))
    try:
        apigen = importlib.import_module("ptcore_apigen")
    finally:
        sys.path.pop(0)
    return {m for m, _ in apigen.MODULES}


def test_the_walk_finds_the_public_modules():
    mods = public_modules()
    for name in ("ptcore", "ptcore.nn", "ptcore.utils.data", "ptcore.distributed.fsdp",
                 "ptcore.hub", "ptcore.version"):
        assert name in mods
    assert not any("._" in m for m in mods)


def test_every_public_module_has_a_page_or_a_reason(pages):
    missing = [m for m in public_modules()
               if m not in pages and m not in NO_PAGE
               and not any(p.startswith(m + ".") for p in pages)]
    assert not missing, f"public modules without an API page (add them to MODULES in " \
                        f"doc/_ext/ptcore_apigen.py, or a reason to NO_PAGE): {missing}"


def test_no_page_reasons_are_current(pages):
    mods = set(public_modules())
    stale = [m for m in NO_PAGE if m not in mods or m in pages]
    assert not stale, f"NO_PAGE names modules that are gone or have a page: {stale}"


def test_every_page_is_a_module_that_imports(pages):
    for name in pages:
        if name == "ptcore.Tensor":
            continue
        importlib.import_module(name)
