"""The sdist holds every file the meson build needs and no generated file.

Builds the sdist with ``python -m build --sdist --no-isolation`` (meson-python
configures the project, then ``meson dist`` packs the committed git tree), so
it needs the build requirements installed, a C compiler and a git checkout;
it is skipped otherwise.  Marked slow (about 15 s here, most of it the meson
configure step).
"""
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from meson_sources import (meson_build_files, pyproject, referenced_sources, repo_root,
                           source_version)

pytestmark = pytest.mark.slow

BUILD_SOURCE_SUFFIXES = (".pyx", ".pxd", ".pxi", ".h", ".tp")
GENERATED_SUFFIXES = (".so", ".o", ".pyd", ".dylib", ".pyc", ".whl")
GENERATED_DIRS = {"builddir", "build", "dist", "__pycache__", ".hypothesis", ".pytest_cache",
                  "build-install"}


def _git_files(root):
    r = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout: meson dist packs the git tree")
    return {p for p in r.stdout.decode().split("\0") if p}


@pytest.fixture(scope="module")
def sdist_members(tmp_path_factory):
    root = repo_root()
    for mod in ("build", "mesonpy"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"needs the {mod!r} package (pip install build meson-python)")
    if shutil.which("git") is None:
        pytest.skip("needs git")
    tracked = _git_files(root)
    out = tmp_path_factory.mktemp("sdist")
    r = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation",
                        "--outdir", str(out), str(root)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    archives = list(out.glob("*.tar.gz"))
    assert len(archives) == 1, archives
    with tarfile.open(archives[0]) as tf:
        names = [m.name for m in tf.getmembers() if m.isfile()]
        prefix = names[0].split("/")[0]
        pkg_info = tf.extractfile(f"{prefix}/PKG-INFO").read().decode()
    assert all(n.startswith(prefix + "/") for n in names)
    rel = {n[len(prefix) + 1:] for n in names}
    return {"archive": archives[0], "prefix": prefix, "files": rel, "pkg_info": pkg_info,
            "tracked": tracked}


def _missing_msg(missing):
    return (f"missing from the sdist: {sorted(missing)} (meson dist packs the committed "
            "git tree: is a file the build needs untracked or uncommitted?)")


def test_name_and_version(sdist_members):
    project = pyproject()["project"]
    version = source_version()
    assert sdist_members["prefix"] == f"{project['name']}-{version}"
    assert f"\nVersion: {version}\n" in sdist_members["pkg_info"]
    assert f"\nRequires-Python: {project['requires-python']}\n" in sdist_members["pkg_info"]


def test_holds_every_file_the_meson_build_reads(sdist_members):
    root = repo_root()
    files = sdist_members["files"]
    needed = set(referenced_sources(root))
    needed |= {mb.relative_to(root).as_posix() for mb in meson_build_files(root)}
    needed |= {"meson.options", "pyproject.toml", "README.md", "LICENSE"}
    assert len(needed) > 150        # the reader found the python_sources lists
    missing = needed - files
    assert not missing, _missing_msg(missing)


def test_holds_every_cython_and_c_source(sdist_members):
    """.pxd/.pxi/.h files are reached through cimport/include, not only meson lists."""
    root = repo_root()
    on_disk = {p.relative_to(root).as_posix() for p in (root / "ptcore").rglob("*")
               if p.is_file() and p.name.endswith(BUILD_SOURCE_SUFFIXES)}
    needed = on_disk & sdist_members["tracked"]
    assert any(n.endswith(".pyx.tp") for n in needed) and any(n.endswith(".pxd") for n in needed)
    untracked = on_disk - sdist_members["tracked"]
    assert not untracked, f"Cython/C sources not in git, so not in the sdist: {sorted(untracked)}"
    missing = needed - sdist_members["files"]
    assert not missing, _missing_msg(missing)


def test_holds_no_generated_file(sdist_members):
    bad = []
    files = sdist_members["files"]
    for f in files:
        p = PurePosixPath(f)
        if p.name.endswith(GENERATED_SUFFIXES) or GENERATED_DIRS & set(p.parts[:-1]):
            bad.append(f)
        elif p.parts[0].startswith(".mesonpy") or p.name.endswith(".egg-info"):
            bad.append(f)
        elif p.suffix == ".c" and p.parts[0] == "ptcore":
            bad.append(f)       # Cython output (ptcore has no hand-written .c)
        elif p.suffix == ".pyx" and p.with_suffix(".c").as_posix() in files:
            bad.append(p.with_suffix(".c").as_posix())
        elif p.name == "_ew.pyx" or (p.suffix == ".pyx" and (p.as_posix() + ".tp") in files):
            bad.append(f)       # tempita output
    assert not bad, f"generated files in the sdist: {sorted(set(bad))}"


def test_is_small(sdist_members):
    size = Path(sdist_members["archive"]).stat().st_size
    assert size < 20 * 2**20, f"sdist is {size / 2**20:.1f} MiB: a data or build file slipped in?"


def test_test_extra_can_build_the_sdist_without_isolation():
    """CI installs '.[test]' and runs this file: the extra must bring the build requirements."""
    cfg = pyproject()

    def names(reqs):
        return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in reqs}

    test_extra = names(cfg["project"]["optional-dependencies"]["test"])
    runtime = names(cfg["project"]["dependencies"])
    needed = names(cfg["build-system"]["requires"]) | {"build"}
    assert needed <= test_extra | runtime, needed - test_extra - runtime
