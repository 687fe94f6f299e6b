"""The API reference covers every public module, and every name it lists resolves.

The pages are written by ``doc/_ext/ptcore_apigen.py`` when Sphinx starts;
these checks need neither Sphinx nor a build.
"""
import importlib
import re
import sys
from pathlib import Path

import pytest

import ptcore

DOC = Path(__file__).resolve().parents[2] / "doc"
pytestmark = pytest.mark.skipif(not (DOC / "_ext" / "ptcore_apigen.py").is_file(),
                                reason="doc/ is not in this tree")

# the public modules the reference must have a page for
REQUIRED = [
    "ptcore", "ptcore.Tensor", "ptcore.nn", "ptcore.nn.functional", "ptcore.nn.init",
    "ptcore.optim", "ptcore.optim.lr_scheduler", "ptcore.autograd", "ptcore.func",
    "ptcore.linalg", "ptcore.fft", "ptcore.special", "ptcore.distributions", "ptcore.sparse",
    "ptcore.utils.data", "ptcore.multiprocessing", "ptcore.cuda", "ptcore.amp", "ptcore.jit",
    "ptcore.onnx", "ptcore.distributed", "ptcore.profiler", "ptcore.serialization",
    "ptcore.array_api", "ptcore.backends", "ptcore.testing", "ptcore.library",
    "ptcore.utils.cython_extension",
]
# public submodules reached through ptcore.<name> that have no page of their own, and why
NO_PAGE = {
    "utils": "a package of packages: utils.data, utils.checkpoint ... have pages",
    "quasirandom": "SobolEngine is documented as ptcore.quasirandom.SobolEngine on the ptcore page",
    "signal": "its one public namespace, signal.windows, has a page",
    "windows": "an alias of ptcore.signal.windows",
    "functional": "torch.functional's names, documented on the ptcore page",
    "version": "the version string (ptcore.__version__)",
    "torch_version": "TorchVersion, the type of ptcore.__version__ (documented there)",
    "types": "type aliases for annotations (torch.types), no functions",
    "_dynamo": "torch._dynamo's entry points scripts call; documented with ptcore.compiler",
    "_inductor": "torch._inductor's settings (they change nothing: no graph compiler)",
    "quantization": "the old path of ptcore.ao.quantization (documented there)",
    "_functorch": "what 'import functorch' finds under the launcher: ptcore.func's transforms "
                  "(documented there) and functorch's old make_functional helpers",
}


@pytest.fixture(scope="module")
def apigen():
    sys.path.insert(0, str(DOC / "_ext"))
    try:
        return importlib.import_module("ptcore_apigen")
    finally:
        sys.path.pop(0)


def test_every_required_module_has_a_page(apigen):
    pages = {m for m, _ in apigen.MODULES}
    missing = [m for m in REQUIRED if m not in pages]
    assert not missing, f"modules without an API page (add them to MODULES): {missing}"


def test_every_public_subpackage_has_a_page_or_a_reason(apigen):
    pages = {m for m, _ in apigen.MODULES}
    lazy = sorted(ptcore._LAZY_MODULES)
    undocumented = [n for n in lazy if f"ptcore.{n}" not in pages and n not in NO_PAGE]
    assert not undocumented, f"public submodules without a page: {undocumented}"
    stale = [n for n in NO_PAGE if n not in lazy]
    assert not stale, f"NO_PAGE lists names that are no longer submodules: {stale}"


def test_every_listed_name_resolves(apigen):
    bad = []
    for modname, title in apigen.available_modules():
        text = apigen.module_page(modname, title)
        assert text.startswith(".. This page is written by")
        current = re.search(r"^\.\. currentmodule:: (\S+)", text, re.M).group(1)
        base = apigen._obj(current) if current != "ptcore.Tensor" else ptcore.Tensor
        for name in re.findall(r"^\.\. auto(?:class|function):: (\S+)", text, re.M):
            if "." in name:       # ptcore.Tensor's page names its class
                continue
            if not callable(getattr(base, name, None)):
                bad.append(f"{current}.{name}")
    assert not bad, f"names on the pages that do not resolve to callables: {bad}"


def test_pages_list_classes_and_functions(apigen):
    classes, functions, _ = apigen.public_names("ptcore.nn")
    assert "Linear" in classes and "Module" in classes
    classes, functions, _ = apigen.public_names("ptcore")
    assert "add" in functions and "Tensor" not in classes      # Tensor has its own page
    classes, functions, _ = apigen.public_names("ptcore.library")
    assert "custom_op" in functions and "CustomOpDef" in classes


def test_a_class_exported_twice_is_indexed_once(apigen):
    owners = apigen._class_owners()
    # no_grad is ptcore.no_grad and ptcore.autograd.no_grad: indexed on the autograd page
    assert owners["ptcore.autograd.grad_mode.no_grad"] == "ptcore.autograd"
    page = apigen.module_page("ptcore", "ptcore", owners)
    block = page[page.index(".. autoclass:: no_grad"):].split("\n\n")[0]
    assert ":no-index:" in block


def test_write_pages_removes_stale_pages(apigen, tmp_path):
    (tmp_path / "ptcore.gone.rst").write_text("old")
    written = apigen.write_pages(tmp_path)
    assert not (tmp_path / "ptcore.gone.rst").exists()
    assert {p.name for p in written} == {f"{m}.rst" for m, _ in apigen.available_modules()}


def test_user_guide_toctree_lists_every_page():
    guide = DOC / "user_guide"
    index = (guide / "index.rst").read_text()
    listed = set(re.findall(r"^   (\w+)$", index, re.M))
    pages = {p.stem for p in guide.glob("*.rst")} - {"index"}
    assert pages == listed, (pages - listed, listed - pages)
