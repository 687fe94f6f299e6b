"""ptcore.cuda's public memory API on a machine without a usable CUDA device:
it answers as torch does before CUDA is initialised, and never imports the
CUDA bindings."""
import subprocess
import sys

import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

no_cuda = pytest.mark.skipif(ptcore.cuda.is_available(), reason="a CUDA device is usable")


@no_cuda
def test_memory_queries_before_init():
    assert ptcore.cuda.memory_allocated() == 0
    assert ptcore.cuda.max_memory_allocated() == 0
    assert ptcore.cuda.memory_reserved() == 0
    assert ptcore.cuda.max_memory_reserved() == 0
    assert dict(ptcore.cuda.memory_stats()) == {}
    ptcore.cuda.empty_cache()                       # a no-op, as in torch
    ptcore.cuda.reset_peak_memory_stats()
    if torch is not None and not torch.cuda.is_available():
        assert dict(torch.cuda.memory_stats()) == dict(ptcore.cuda.memory_stats())
        assert torch.cuda.memory_allocated() == ptcore.cuda.memory_allocated()


@no_cuda
def test_mutating_memory_calls_name_the_reason():
    with pytest.raises(RuntimeError, match="not available"):
        ptcore.cuda.set_per_process_memory_fraction(0.5)
    with pytest.raises(RuntimeError, match="not available"):
        ptcore.cuda.caching_allocator_alloc(1024)


def test_out_of_memory_error_is_runtime_error():
    assert issubclass(ptcore.cuda.OutOfMemoryError, RuntimeError)


def test_import_does_not_touch_cuda():
    code = ("import sys, ptcore, ptcore.cuda; ptcore.cuda.memory_stats(); "
            "print(any(m.startswith('cuda.') or m == 'cuda' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout.strip() == "False"


def test_cuda_unavailable_error_is_torchs_assertion_and_runtime_error(monkeypatch):
    """Without CUDA, a CUDA call raises what torch raises on a CPU-only build
    (AssertionError "Torch not compiled with CUDA enabled") and on a CUDA build
    without a driver (RuntimeError): one error of both types."""
    if ptcore.cuda.is_available():
        pytest.skip("CUDA is usable here")
    for call in (lambda: ptcore.zeros(2, device="cuda"), lambda: ptcore.ones(2).cuda(),
                 lambda: ptcore.nn.Linear(2, 2).cuda(), lambda: ptcore.cuda.current_device(),
                 lambda: ptcore.cuda.synchronize()):
        with pytest.raises(AssertionError, match="CUDA is not available") as info:
            call()
        assert isinstance(info.value, RuntimeError)
