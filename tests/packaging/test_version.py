"""ptcore's version has one source, ``ptcore/version.py``, and everything agrees with it.

meson.build's ``project(version: ...)`` runs ``tools/version.py``, which reads
``ptcore/version.py``; pyproject.toml declares the version dynamic, so
meson-python writes meson's version into the wheel's and sdist's metadata
(tests/packaging/test_sdist_contents.py checks the built sdist's).
``ptcore.version.torch_api`` names the PyTorch release whose API ptcore follows;
the test extra pins that torch as the oracle.
"""
import importlib.metadata
import re
import subprocess
import sys

from packaging.requirements import Requirement

import ptcore
from meson_sources import pyproject, repo_root, source_version


def test_pyproject_takes_the_version_from_meson():
    project = pyproject()["project"]
    assert "version" not in project, "the version lives in ptcore/version.py only"
    assert "version" in project["dynamic"]
    assert pyproject()["build-system"]["build-backend"] == "mesonpy"


def test_meson_reads_ptcore_version_py():
    root = repo_root()
    meson = (root / "meson.build").read_text()
    head = meson[:meson.index("\n)\n")]       # the project() call
    assert re.search(r"version:\s*run_command\(\['tools/version\.py'\],\s*check:\s*true\)"
                     r"\.stdout\(\)\.strip\(\)", head), head
    r = subprocess.run([sys.executable, str(root / "tools" / "version.py")],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == source_version()


def test_package_version_is_the_source_version():
    repo_root()
    assert ptcore.__version__ == ptcore.version.__version__ == source_version()
    assert isinstance(ptcore.__version__, ptcore.torch_version.TorchVersion)


def test_installed_metadata_agrees():
    try:
        meta = importlib.metadata.version("ptcore")
    except importlib.metadata.PackageNotFoundError:
        import pytest
        pytest.skip("ptcore is not installed as a distribution (run from a build tree)")
    assert meta == ptcore.__version__


def test_torch_api_is_the_oracle_pin():
    api = ptcore.version.torch_api
    assert isinstance(api, str) and re.fullmatch(r"\d+\.\d+\.\d+", api)
    assert api == "2.13.0"
    pins = [Requirement(r) for r in pyproject()["project"]["optional-dependencies"]["test"]]
    torch_pin = [r for r in pins if r.name == "torch"]
    assert [str(r.specifier) for r in torch_pin] == [f"=={api}"]
