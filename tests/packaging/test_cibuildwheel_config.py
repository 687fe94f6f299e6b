"""[tool.cibuildwheel] in pyproject.toml is coherent with the project it builds.

No wheel is built here (that is CI's job); these tests catch the configuration
drifting away from requires-python, the classifiers, the meson options and
the smoke-test script it runs.
"""
import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from meson_sources import call_bodies, meson_build_files, pyproject, repo_root, strip_comments

# newest CPython minor the wheels are built for
NEWEST_MINOR = 14


@pytest.fixture(scope="module")
def cfg():
    return pyproject()


@pytest.fixture(scope="module")
def cibw(cfg):
    return cfg["tool"]["cibuildwheel"]


def _selectors(cibw):
    out = []
    for sel in cibw["build"]:
        m = re.fullmatch(r"cp3(\d+)(t?)-\*", sel)
        assert m, f"build selector {sel!r} is not of the form cp3XY-* / cp3XYt-*"
        out.append((int(m.group(1)), m.group(2) == "t"))
    return out


def test_python_range_matches_requires_python(cfg, cibw):
    spec = SpecifierSet(cfg["project"]["requires-python"])
    minors = sorted({minor for minor, _ in _selectors(cibw)})
    for minor in minors:
        assert Version(f"3.{minor}") in spec, f"wheels for 3.{minor} but requires-python is {spec}"
    # the oldest supported Python gets a wheel, and no minor is skipped up to the newest
    oldest = min(m for m in range(6, 30) if Version(f"3.{m}") in spec)
    assert minors == list(range(oldest, NEWEST_MINOR + 1)), minors


def test_classifiers_list_the_built_pythons(cfg, cibw):
    listed = {int(m) for c in cfg["project"]["classifiers"]
              for m in re.findall(r"^Programming Language :: Python :: 3\.(\d+)$", c)}
    assert listed == {minor for minor, _ in _selectors(cibw)}


def test_free_threaded_builds_only_with_freethreading_compatible_extensions(cfg, cibw):
    sel = _selectors(cibw)
    ft = sorted(minor for minor, t in sel if t)
    assert ft, "no free-threaded wheels configured"
    # cibuildwheel 4 builds free-threaded wheels from 3.14 (3.13t was experimental)
    assert min(ft) >= 14
    assert all((minor, False) in sel for minor in ft)
    meson = strip_comments((repo_root() / "meson.build").read_text())
    assert "freethreading_compatible=True" in meson, (
        "free-threaded wheels need every Cython module compiled with freethreading_compatible")
    # Cython supports the free-threaded build from 3.1
    cython_req = next(r for r in cfg["build-system"]["requires"] if r.lower().startswith("cython"))
    assert Version("3.0.12") not in SpecifierSet(cython_req[len("cython"):])
    assert any("Free Threading" in c for c in cfg["project"]["classifiers"])


def test_linux_targets(cibw):
    linux = cibw["linux"]
    assert sorted(linux["archs"]) == ["aarch64", "x86_64"]
    for arch in ("x86_64", "aarch64"):
        assert linux[f"manylinux-{arch}-image"] == "manylinux_2_28"
    assert "*-musllinux_*" in cibw["skip"]
    repair = " ".join(linux["repair-wheel-command"])
    # auditwheel repair is what copies libgomp into the wheel
    assert "auditwheel repair" in repair and "{wheel}" in repair and "{dest_dir}" in repair
    assert "manylinux_2_28" in repair


def test_openmp_setup_arg_names_a_real_meson_option(cibw):
    args = cibw["config-settings"]["setup-args"]
    args = [args] if isinstance(args, str) else args
    options = (repo_root() / "meson.options").read_text()
    for a in args:
        m = re.fullmatch(r"-D(\w+)=(\w+)", a)
        assert m, a
        name, value = m.groups()
        decl = re.search(r"option\(\s*'" + name + r"'\s*,\s*type\s*:\s*'(\w+)'", options)
        assert decl, f"setup-arg {a} names no option in meson.options"
        if decl.group(1) == "feature":
            assert value in ("enabled", "disabled", "auto")
    assert "-Dopenmp=enabled" in args, "wheels must fail to build rather than ship without OpenMP"


def _test_script(cibw):
    cmd = cibw["test-command"]
    m = re.fullmatch(r"python \{project\}/(\S+\.py)", cmd)
    assert m, f"unexpected test-command {cmd!r}"
    return repo_root() / m.group(1)


def test_test_command_script_exists_and_needs_only_run_dependencies(cfg, cibw):
    script = _test_script(cibw)
    assert script.is_file(), f"test-command runs {script}, which does not exist"
    allowed = {"ptcore", "numpy", "scipy"}
    for req in list(cfg["project"]["dependencies"]) + list(cibw.get("test-requires", [])):
        allowed.add(re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower().replace("-", "_"))
    tree = ast.parse(script.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        else:
            continue
        for n in names:
            top = n.split(".")[0]
            if top in sys.stdlib_module_names:
                continue
            assert top in allowed, (
                f"{script.name} imports {top}, which a fresh wheel environment does not have")


def test_smoke_test_script_passes_here():
    """The script cibuildwheel runs works against this checkout's ptcore."""
    script = _test_script(pyproject()["tool"]["cibuildwheel"])
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=240, cwd=script.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ptcore smoke test passed" in r.stdout


def test_cibuildwheel_selects_exactly_the_intended_wheels(cfg):
    """cibuildwheel itself (no build: --print-build-identifiers) parses the config
    and selects CPython 3.10-3.14 plus 3.14t, manylinux only, on both architectures."""
    if shutil.which("cibuildwheel") is None:
        pytest.skip("needs cibuildwheel (test extra)")
    r = subprocess.run(["cibuildwheel", "--print-build-identifiers", "--platform", "linux",
                        str(repo_root())], capture_output=True, text=True, timeout=120,
                       cwd=repo_root())
    assert r.returncode == 0, r.stdout + r.stderr
    got = set(r.stdout.split())
    minors = sorted({minor for minor, _ in _selectors(cfg["tool"]["cibuildwheel"])})
    want = {f"cp3{m}-manylinux_{arch}" for m in minors for arch in ("x86_64", "aarch64")}
    want |= {f"cp3{NEWEST_MINOR}t-manylinux_{arch}" for arch in ("x86_64", "aarch64")}
    assert got == want, (sorted(got - want), sorted(want - got))


def test_config_validates_against_cibuildwheels_schema(cibw):
    cibuildwheel = pytest.importorskip("cibuildwheel")
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = Path(cibuildwheel.__file__).parent / "resources" / "cibuildwheel.schema.json"
    schema = json.loads(schema_path.read_text())
    jsonschema.validate(cibw, schema)


def test_every_cython_extension_gets_the_freethreading_directive():
    """A single module without Py_mod_gil = not-used re-enables the GIL in the 3.14t wheels."""
    checked = 0
    for mb in meson_build_files():
        text = strip_comments(mb.read_text())
        for body in call_bodies(text, "py.extension_module"):
            if "cyutility" in body.split(",", 1)[0]:
                continue    # Cython's shared utility module declares itself GIL-free
            assert re.search(r"\bcython_args\s*:\s*cython_args\b", body), (
                f"{mb}: extension module without the project's cython_args: {body[:80]!r}")
            checked += 1
    assert checked >= 4     # _tensor/_dlpack loop, _ew, the kernel loop, _optim
