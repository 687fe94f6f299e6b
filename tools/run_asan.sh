#!/usr/bin/env bash
# Run ptcore's tests under AddressSanitizer.
#
# Builds the Cython extensions with -fsanitize=address in a separate build
# directory (build-asan/, git-ignored), stages them next to a copy of the
# Python sources (build-asan/stage/ptcore), and runs pytest with the ASan
# runtime preloaded into the (uninstrumented) Python interpreter.  A heap
# overflow, use after free or double free in a kernel stops the run with
# ASan's report naming the C function and the test.
#
# Usage (from the repository root):
#     tools/run_asan.sh                      # the default selection below
#     tools/run_asan.sh tests/test_tensor.py -k view   # any pytest arguments
#     ASAN_BUILD_DIR=/tmp/b tools/run_asan.sh ...       # another build directory
# or `spin asan [PYTEST ARGS]` (.spin/cmds.py).
#
# Notes
# * Leak checking is off (CPython's own allocations are reported as leaks);
#   allocator_may_return_null=1 keeps the tests that ask for absurd sizes on
#   their MemoryError path instead of ASan aborting.
# * PTCORE_CPU_ALLOCATOR_CACHE_MB=0 turns off ptcore's block cache, so freed
#   large blocks are unmapped at once (a late access faults instead of reading
#   a recycled block); small blocks come from malloc, which ASan guards.
# * The first build takes several minutes; later runs rebuild incrementally.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ASAN_BUILD_DIR:-$ROOT/build-asan}
STAGE=$BUILD/stage
PY=${PYTHON:-python}

cd "$ROOT"
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" -Dbuildtype=debugoptimized -Db_sanitize=address -Db_lundef=false
fi
ninja -C "$BUILD"

# stage: the Python sources, then the instrumented extension modules
rm -rf "$STAGE"
mkdir -p "$STAGE"
(cd "$ROOT" && find ptcore -name '*.py' -o -name '*.pxd' -o -name '*.h' -o -name 'py.typed') |
    while read -r f; do mkdir -p "$STAGE/$(dirname "$f")"; cp "$f" "$STAGE/$f"; done
(cd "$BUILD" && find ptcore -name '*.so') |
    while read -r f; do mkdir -p "$STAGE/$(dirname "$f")"; cp "$BUILD/$f" "$STAGE/$f"; done

LIBASAN=$(${CC:-cc} -print-file-name=libasan.so)
if [ ! -e "$LIBASAN" ]; then
    echo "run_asan.sh: cannot find libasan.so (install the compiler's ASan runtime)" >&2
    exit 2
fi

if [ $# -eq 0 ]; then
    # hardening, fuzzing and a sample of the core tests
    set -- tests/test_hardening_regressions.py tests/test_fuzz.py tests/test_kernel_none_args.py \
        tests/test_uint_dtypes.py \
        tests/test_views.py tests/test_indexing.py tests/test_storage.py tests/test_dtypes.py \
        tests/ops/test_copy_kernels.py tests/ops/test_elementwise.py tests/ops/test_advanced_indexing.py \
        -q -p no:cacheprovider \
        --deselect tests/test_storage.py::test_large_block_is_reused_from_the_cache \
        --deselect tests/test_storage.py::test_empty_cache_releases_blocks \
        --deselect "tests/test_storage.py::test_large_zeros_are_lazy_and_read_as_zero[dirty_cache]"
    # (those three test ptcore's block cache, which this run turns off)
fi

# reports go to files (pytest captures stderr, and a process ASan stops loses it)
LOGDIR=$BUILD/asan-reports
rm -rf "$LOGDIR"; mkdir -p "$LOGDIR"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:detect_odr_violation=0:log_path=$LOGDIR/asan}
export PTCORE_CPU_ALLOCATOR_CACHE_MB=0
export PYTHONPATH=$STAGE${PYTHONPATH:+:$PYTHONPATH}
# PYTHONSAFEPATH: `python -m` must not put the repository root (the
# uninstrumented source tree) ahead of the staged package
export PYTHONSAFEPATH=1
# the ASan runtime first in every process (tests that start subprocesses pass
# the environment on, so those run under ASan too)
# libstdc++ right after it: its interceptor of __cxa_throw must find the real
# one at start-up, or the first C++ exception (PyTorch, the tests' oracle,
# raising an error) stops the process in ASan's CHECK
LIBSTDCXX=$(${CC:-cc} -print-file-name=libstdc++.so.6)
export LD_PRELOAD=$LIBASAN:$LIBSTDCXX${LD_PRELOAD:+:$LD_PRELOAD}
"$PY" -c "import ptcore, sys; sys.stdout.write('ptcore from ' + ptcore.__file__ + '\n')"
status=0
"$PY" -m pytest "$@" || status=$?
if compgen -G "$LOGDIR/asan*" > /dev/null; then
    echo "run_asan.sh: AddressSanitizer reports (in $LOGDIR):" >&2
    cat "$LOGDIR"/asan* >&2
    [ $status -eq 0 ] && status=1
else
    echo "run_asan.sh: no AddressSanitizer report"
fi
exit $status
