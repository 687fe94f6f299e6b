"""conda/recipe.yaml (rattler-build) stays consistent with pyproject.toml and meson.build.

Version, Python range, host requirements (= build-system.requires), run
requirements (= project.dependencies), run_constraints (= the `cuda` extra),
OpenMP per platform and the test files.  When py-rattler-build is installed the
recipe is also rendered for three platforms and the rendered requirements are
checked (no package is built: that needs the conda-forge channels).
"""
import re

import pytest
from packaging.requirements import Requirement

from meson_sources import installed_sources, pyproject, repo_root, source_version

yaml = pytest.importorskip("yaml")

# PyPI name -> conda-forge name, where they differ
CONDA_NAME = {
    "nvidia-cuda-nvrtc": "cuda-nvrtc",
    "nvidia-cublas": "libcublas",
    "nvidia-cusolver": "libcusolver",
    "nvidia-cufft": "libcufft",
}
OPENMP = {"linux": "_openmp_mutex", "osx": "llvm-openmp"}


@pytest.fixture(scope="module")
def recipe():
    path = repo_root() / "conda" / "recipe.yaml"
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def cfg():
    return pyproject()


def _render(value, context):
    return re.sub(r"\$\{\{\s*(\w+)\s*\}\}", lambda m: str(context[m.group(1)]), value)


def _select(items, platform, context, cross=False):
    """Flatten rattler-build's ``if:/then:/else:`` list items for one platform."""
    out = []
    for item in items:
        if isinstance(item, dict):
            cond = item["if"].strip()
            if cond in ("linux", "osx", "win", "unix"):
                ok = platform == cond or (cond == "unix" and platform != "win")
            elif cond == "build_platform != target_platform":
                ok = cross
            else:
                raise AssertionError(f"selector {cond!r} not understood by this test")
            branch = item.get("then" if ok else "else", [])
            out.extend(_select(branch if isinstance(branch, list) else [branch],
                               platform, context, cross))
        else:
            out.append(_render(item, context) if "${{ name" not in item else item)
    return out


def _specs(reqs):
    """``{conda name: normalised version spec}`` of conda-style 'name spec' strings."""
    out = {}
    for r in reqs:
        if r.startswith("${{"):
            continue        # compiler()/stdlib() templates
        name, _, spec = r.partition(" ")
        out[name] = spec.replace(" ", "")
    return out


def _pypi_specs(reqs):
    out = {}
    for r in reqs:
        req = Requirement(r)
        name = req.name.lower()
        out[CONDA_NAME.get(name, name)] = ",".join(sorted(str(s) for s in req.specifier))
    return out


def _norm(spec):
    return ",".join(sorted(spec.split(",")))


def test_version_matches_ptcore_version_py(recipe, cfg):
    # pyproject.toml and meson.build take the version from ptcore/version.py
    # (tests/packaging/test_version.py); the recipe repeats it as a literal
    version = source_version()
    assert recipe["context"]["version"] == version
    assert _render(recipe["package"]["version"], recipe["context"]) == version
    assert _render(recipe["package"]["name"], recipe["context"]) == cfg["project"]["name"]


def test_python_range_matches_requires_python(recipe, cfg):
    m = re.fullmatch(r">=\s*(3\.\d+)", cfg["project"]["requires-python"])
    assert m, "this test understands requires-python of the form >=3.X"
    assert recipe["context"]["python_min"] == m.group(1)
    run = _specs(_select(recipe["requirements"]["run"], "linux", recipe["context"]))
    assert run["python"] == ">=" + m.group(1)


@pytest.mark.parametrize("platform", ["linux", "osx"])
def test_host_requirements_mirror_build_system(recipe, cfg, platform):
    host = _specs(_select(recipe["requirements"]["host"], platform, recipe["context"]))
    for name, spec in _pypi_specs(cfg["build-system"]["requires"]).items():
        assert name in host, f"build requirement {name} missing from the recipe's host"
        assert _norm(host[name]) == spec, (name, host[name], spec)
    assert "python" in host and "pip" in host
    assert OPENMP[platform] in host


@pytest.mark.parametrize("platform", ["linux", "osx"])
def test_run_requirements_mirror_dependencies(recipe, cfg, platform):
    run = _specs(_select(recipe["requirements"]["run"], platform, recipe["context"]))
    deps = _pypi_specs(cfg["project"]["dependencies"])
    for name, spec in deps.items():
        assert name in run, f"dependency {name} missing from the recipe's run"
        assert _norm(run[name]) == spec, (name, run[name], spec)
    extra = set(run) - set(deps) - {"python", OPENMP[platform]}
    assert not extra, f"run requirements that pyproject does not have: {extra}"


def test_cuda_extra_is_run_constrained(recipe, cfg):
    constrained = _specs(recipe["requirements"]["run_constraints"])
    cuda = _pypi_specs(cfg["project"]["optional-dependencies"]["cuda"])
    assert {k: _norm(v) for k, v in constrained.items()} == cuda


def test_cross_builds_get_build_python_and_cython(recipe):
    ctx = {"target_platform": "linux-aarch64"}
    native = _specs(_select(recipe["requirements"]["build"], "linux", ctx, cross=False))
    cross = _specs(_select(recipe["requirements"]["build"], "linux", ctx, cross=True))
    assert "cython" not in native and "python" not in native
    assert {"cython", "numpy", "python", "cross-python_linux-aarch64"} <= set(cross)
    assert {"meson", "ninja"} <= set(native)


def test_build_script_requires_openmp_like_the_wheels(recipe, cfg):
    script = " ".join(recipe["build"]["script"])
    assert "--no-build-isolation" in script and "--no-deps" in script
    setup_args = cfg["tool"]["cibuildwheel"]["config-settings"]["setup-args"]
    assert f"-Csetup-args={setup_args}" in script


def test_source_and_license(recipe, cfg):
    src = (repo_root() / "conda" / recipe["source"]["path"]).resolve()
    assert src == repo_root().resolve()
    assert recipe["about"]["license"] == cfg["project"]["license"]
    assert (src / recipe["about"]["license_file"]).is_file()


def test_recipe_tests_exist(recipe):
    py_tests = [t["python"] for t in recipe["tests"] if "python" in t]
    installed = installed_sources()
    for mod in py_tests[0]["imports"]:
        path = mod.replace(".", "/")
        assert f"{path}/__init__.py" in installed or f"{path}.py" in installed, (
            f"recipe test imports {mod}, which meson does not install")
    scripts = [t for t in recipe["tests"] if "script" in t]
    assert scripts, "the recipe must run a training step, not only imports"
    for t in scripts:
        for f in t["files"]["source"]:
            assert (repo_root() / f).is_file(), f
            assert any(f in line for line in t["script"]), f"{f} copied but not run"


@pytest.mark.parametrize("target", ["linux-64", "linux-aarch64", "osx-arm64"])
def test_renders_with_rattler_build(cfg, target):
    rb = pytest.importorskip("rattler_build")
    variants = rb.VariantConfig({
        "c_compiler": ["clang" if target.startswith("osx") else "gcc"],
        "c_compiler_version": ["19" if target.startswith("osx") else "14"],
        "c_stdlib": ["macosx_deployment_target" if target.startswith("osx") else "sysroot"],
        "c_stdlib_version": ["11.0" if target.startswith("osx") else "2.28"],
        "python": ["3.12.* *_cpython"],
    })
    recipe = rb.Stage0Recipe.from_file(str(repo_root() / "conda" / "recipe.yaml"))
    rendered = recipe.render(variants, rb.RenderConfig(
        platform=rb.PlatformConfig(target_platform=target)))
    assert len(rendered) == 1
    d = rendered[0].recipe.to_dict()
    assert d["package"] == {"name": cfg["project"]["name"], "version": source_version()}
    reqs = d["requirements"]
    omp = OPENMP["osx" if target.startswith("osx") else "linux"]
    assert omp in reqs["host"] and omp in reqs["run"]
    assert any(r.startswith(("gcc_", "clang_")) for r in reqs["build"])
    assert "numpy >=1.25" in reqs["run"] and "scipy >=1.11" in reqs["run"]
