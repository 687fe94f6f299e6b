"""Every Python file of the package is installed by meson (the rule CI enforces late).

A .py file missing from its directory's ``python_sources`` works from the
source tree but is absent from the installed package, so CI (which installs
ptcore non-editable) fails with an ImportError far from the cause.  These
checks name the file and the meson.build to edit.
"""
import subprocess
from pathlib import PurePosixPath

from meson_sources import extension_modules, installed_sources, meson_build_files, repo_root

# build-time helpers that are deliberately not installed
NOT_INSTALLED_DIRS = {"ptcore/_build_utils"}


def _package_files(suffixes):
    root = repo_root()
    r = subprocess.run(["git", "-C", str(root), "ls-files", "ptcore"], capture_output=True,
                       text=True)
    if r.returncode == 0 and r.stdout.strip():
        files = r.stdout.split()
        # new files not yet added to git count too
        r2 = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "--exclude-standard",
                             "ptcore"], capture_output=True, text=True)
        files += r2.stdout.split()
    else:
        files = [p.relative_to(root).as_posix() for p in (root / "ptcore").rglob("*")]
    return sorted({f for f in files if f.endswith(suffixes)
                   and str(PurePosixPath(f).parent) not in NOT_INSTALLED_DIRS
                   and (root / f).is_file()})


def test_every_python_file_is_in_python_sources():
    installed = set(installed_sources().values())
    missing = [f for f in _package_files((".py",)) if f not in installed]
    assert not missing, (
        "not installed (add to python_sources of the meson.build in the same directory): "
        + ", ".join(missing))


def test_every_package_directory_has_a_meson_build_reached_by_subdir():
    root = repo_root()
    reached = {mb.parent.relative_to(root).as_posix() for mb in meson_build_files(root)}
    dirs = {str(PurePosixPath(f).parent) for f in _package_files((".py",))}
    missing = sorted(dirs - reached)
    assert not missing, (f"packages without a meson.build reached through subdir(): {missing} "
                         "(add one, and subdir('...') in the parent meson.build)")


def test_every_installed_file_exists():
    root = repo_root()
    ghosts = [f"{dst} <- {src}" for dst, src in installed_sources().items()
              if not (root / src).is_file()]
    assert not ghosts, f"meson installs files that do not exist: {ghosts}"


def test_every_cython_module_is_built():
    built = set(extension_modules())
    pyx = _package_files((".pyx", ".pyx.tp"))
    assert pyx
    for f in pyx:
        mod = f[:-len(".pyx.tp")] if f.endswith(".pyx.tp") else f[:-len(".pyx")]
        assert mod in built, f"{f} is not compiled by any py.extension_module"

