"""[tool.spin] commands resolve, and ptcore's own spin commands do the right thing."""
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from meson_sources import pyproject, repo_root

spin = pytest.importorskip("spin")
click = pytest.importorskip("click")


@pytest.fixture(scope="module")
def spin_cfg():
    return pyproject()["tool"]["spin"]


@pytest.fixture(scope="module")
def local_cmds():
    path = repo_root() / ".spin" / "cmds.py"
    spec = importlib.util.spec_from_file_location("ptcore_spin_cmds", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _entries(spin_cfg):
    return [e for group in spin_cfg["commands"].values() for e in group]


def test_package_is_the_project(spin_cfg):
    assert spin_cfg["package"] == pyproject()["project"]["name"]


def test_every_command_resolves_to_a_click_command(spin_cfg, local_cmds):
    names = set()
    for entry in _entries(spin_cfg):
        if ":" in entry:
            path, func = entry.split(":")
            assert (repo_root() / path).is_file(), entry
            cmd = getattr(local_cmds, func)
        else:
            mod, _, func = entry.rpartition(".")
            cmd = getattr(importlib.import_module(mod), func)
        assert isinstance(cmd, click.Command), entry
        names.add(cmd.name)
    assert {"build", "test", "docs", "bench"} <= names


def test_spin_build_dirs_are_ignored_by_git():
    """spin builds into build/ and installs into build-install/: never committed or packed."""
    ignore = (repo_root() / ".gitignore").read_text().splitlines()
    assert any(re.fullmatch(r"/?build/?", line) for line in ignore)
    assert any(re.fullmatch(r"/?build-install/?", line) for line in ignore)


def test_bench_lists_the_runnable_scripts(local_cmds):
    names = local_cmds.benchmark_names()
    on_disk = {p.stem for p in (repo_root() / "benchmarks").glob("*.py")}
    assert set(names) == {n for n in on_disk if not n.startswith("_")}
    assert "_harness" not in names and "matmul" in names


def test_bench_passes_only_supported_options(local_cmds):
    bench_dir = repo_root() / "benchmarks"
    quick_ok = {n for n in local_cmds.benchmark_names()
                if "--quick" in (bench_dir / f"{n}.py").read_text()}
    assert "matmul" in quick_ok and "core" not in quick_ok
    for n in local_cmds.benchmark_names():
        argv = local_cmds.bench_command(n, quick=True, python="py")
        assert argv[:2] == ["py", str(bench_dir / f"{n}.py")]
        assert ("--quick" in argv) == (n in quick_ok)
    assert local_cmds.bench_command("core", threads=2)[-2:] == ["--threads", "2"]
    with pytest.raises(click.BadParameter, match="no benchmark"):
        local_cmds.bench_command("nonexistent")
    no_threads = [n for n in local_cmds.benchmark_names()
                  if "--threads" not in (bench_dir / f"{n}.py").read_text()]
    for n in no_threads:
        with pytest.raises(click.BadParameter, match="--threads"):
            local_cmds.bench_command(n, threads=2)


def test_docs_command_builds_the_doc_folder_with_warnings_as_errors(local_cmds):
    argv = local_cmds.docs_command()
    assert argv[:3] == [sys.executable, "-m", "sphinx"] and "-W" in argv
    src, out = Path(argv[-2]), Path(argv[-1])
    assert (src / "conf.py").is_file()
    assert out == repo_root() / "doc" / "_build" / "html"
    ignore = (repo_root() / ".gitignore").read_text().splitlines()
    assert "doc/_build/" in ignore
    assert "-W" not in local_cmds.docs_command(warnings_as_errors=False)


def test_spin_lists_the_commands():
    """`spin --help` run from the checkout loads pyproject and .spin/cmds.py."""
    r = subprocess.run([sys.executable, "-m", "spin", "--help"], cwd=repo_root(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for cmd in ("build", "test", "docs", "bench", "sdist"):
        assert re.search(rf"^\s+{cmd}\s", r.stdout, re.M), (cmd, r.stdout)
