"""Shared test configuration.

``known_failures.txt`` lists tests that assert PyTorch's behaviour where
ptcore does not match it yet (one ``node id | reason`` per line).  They run
as non-strict xfail so that the suite stays green while every known
discrepancy stays visible; a fix is done when its line is deleted.
"""
import os
from pathlib import Path

import pytest

# Subprocesses that tests start (python -c ..., python -m ptcore.distributed.run,
# fresh-process reloads) must import the installed ptcore, not the source tree in
# the working directory, which has no compiled extensions in a clean checkout:
# with PYTHONSAFEPATH, Python >= 3.11 does not put the working directory or the
# script's directory on sys.path.
os.environ.setdefault("PYTHONSAFEPATH", "1")
# Tests that compare results at several thread counts must run the counts they set,
# also on a loaded machine, where ptcore's parallel kernels would otherwise run fewer
# threads (ptcore/_ops/kernels/include/ptc_team.h); tests/test_adaptive_threads.py switches it back on.
os.environ.setdefault("PTCORE_ADAPTIVE_THREADS", "0")

_KNOWN = Path(__file__).with_name("known_failures.txt")


def _load_known():
    known = {}
    if _KNOWN.exists():
        for line in _KNOWN.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            nodeid, _, reason = line.partition(" | ")
            known[nodeid.strip()] = reason.strip() or "known discrepancy with PyTorch"
    return known


def pytest_collection_finish(session):
    """Freeze what importing and collecting made (about 1.2 million objects:
    torch, ptcore, the test modules and their parameters) into the collector's
    permanent generation: the tests' own gc.collect() calls (leak checks, the
    dead-subclass collection below) then traverse only what the tests made --
    a full collection had grown to 5-8 s each on the loaded CI machine."""
    import gc
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(config, items):
    known = _load_known()
    if not known:
        return
    for item in items:
        reason = known.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False))


@pytest.fixture(autouse=True)
def _no_dead_tensor_subclasses():
    """A Tensor subclass defined inside a test that overrides
    ``__torch_function__`` keeps the dispatch layer on until the cyclic
    garbage collector frees the class, whenever that happens to run; tests
    that check the dispatch point is back on its fast path must not depend on
    that timing.  Collect first when a layer is on (rare, so cheap)."""
    from ptcore._dispatch import dispatcher
    if dispatcher.on[0]:
        # only when the overriding classes changed since the last collection
        # (a class a test module keeps alive for the session would otherwise
        # cost a full collection before every later test)
        from ptcore._dispatch import torch_function
        live = frozenset(id(c) for c in torch_function._overriding)
        if live != _COLLECTED_WITH[0]:
            import gc
            gc.collect()
            _COLLECTED_WITH[0] = frozenset(id(c) for c in torch_function._overriding)
        # the layer goes off by itself only after 512 calls without an instance: a test
        # that checks what runs with no layer on (compile's CUDA-graph capture) must not
        # depend on how many calls the tests before it made since their last instance died
        if torch_function._subclass_seen[0] and torch_function._instances_may_live() and \
                torch_function._tf_live_count() != _LIVE_AFTER_COLLECT[0]:
            # instances a test left in reference cycles (not the ones a module keeps
            # for all its tests: those survived the last collection, same count)
            import gc
            gc.collect()
            _LIVE_AFTER_COLLECT[0] = torch_function._tf_live_count()
        if torch_function._subclass_seen[0] and not torch_function._instances_may_live():
            torch_function._subclass_gone()
    # likewise the kernel layer a __torch_dispatch__ subclass's instances switched on
    # (off by itself only after 512 calls without one)
    from ptcore._dispatch import python_dispatch
    if python_dispatch._td_on[0]:
        import gc
        gc.collect()
        python_dispatch.switch_off_if_unused()
    yield


_COLLECTED_WITH = [None]     # ids of the overriding classes alive after the last collection
_LIVE_AFTER_COLLECT = [-1]   # overriding instances alive after the last such collection


@pytest.fixture(autouse=True)
def _torch_default_validation():
    """Tests compare against torch's distributions with torch's default argument
    validation on.  torch turns it off for the whole process when its compiler
    first runs (torch._dynamo's eval_frame calls
    ``Distribution.set_default_validate_args(False)``), so a ``torch.compile`` in
    an earlier test would change what torch's distributions raise in a later one:
    each test runs with torch's default as torch ships it, restored after.  Only
    when torch's distributions are already imported (otherwise nothing changed)."""
    import sys
    TD = sys.modules.get("torch.distributions")
    if TD is None:
        yield
        return
    old = TD.Distribution._validate_args
    TD.Distribution.set_default_validate_args(True)
    try:
        yield
    finally:
        TD.Distribution.set_default_validate_args(old)


# Tests that use the ``sgemm_kernel`` fixture (a module opts in with
# ``pytestmark = pytest.mark.usefixtures("sgemm_kernel")``) run once per kernel choice of
# ptcore's float32 GEMM (PTCORE_SGEMM), set in-process: the BLAS, AVX2+FMA and AVX-512F,
# so that a path another CPU would take is tested on every machine that can run it.  A
# choice the CPU cannot run is skipped.
_SGEMM_KERNELS = {"blas": 0, "avx2": 1, "avx512": 2}


def pytest_generate_tests(metafunc):
    if "sgemm_kernel" in metafunc.fixturenames:
        metafunc.parametrize("sgemm_kernel", list(_SGEMM_KERNELS), indirect=True)


@pytest.fixture
def sgemm_kernel(request):
    from ptcore import _config
    from ptcore._ops import linalg
    isa = _SGEMM_KERNELS[request.param]
    try:
        if linalg._set_sgemm_isa(isa) != isa:
            pytest.skip(f"this CPU cannot run the {request.param} float32 GEMM kernels")
        yield request.param
    finally:
        linalg._set_sgemm_isa(_config.SGEMM_ISA)      # PTCORE_SGEMM's choice, or the best
