#!/usr/bin/env python3
"""Print ptcore's version, read from ``ptcore/version.py`` (its one source).

meson.build's ``project(version: ...)`` runs this script (as SciPy's runs
``tools/gitversion.py``); meson-python takes the wheel's and sdist's version from
meson (pyproject.toml declares ``dynamic = ["version"]``), so the package, its
metadata and the build agree.  The file is parsed, not imported: importing ptcore
needs the compiled extensions.
"""
import re
import sys
from pathlib import Path

VERSION_PY = Path(__file__).resolve().parents[1] / "ptcore" / "version.py"


def read_version(path=VERSION_PY):
    """The string assigned to ``__version__`` in ``path``."""
    m = re.search(r'^__version__\s*=\s*"([^"]+)"\s*$', Path(path).read_text(), re.MULTILINE)
    if m is None:
        raise SystemExit(f"no __version__ = \"...\" line in {path}")
    return m.group(1)


if __name__ == "__main__":
    sys.stdout.write(read_version() + "\n")
