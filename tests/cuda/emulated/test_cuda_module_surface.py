"""torch.cuda's submodules and module attributes that scripts use on their
first lines: ptcore.cuda.memory / random / profiler, default_generators,
check_error and CudaError, get_allocator_backend, has_half / has_magma."""
import pytest

import ptcore
from ptcore import cuda


def test_submodules_hold_torchs_names():
    torch = pytest.importorskip("torch")
    for sub in ("memory", "random", "profiler"):
        mod = getattr(cuda, sub)
        tmod = getattr(torch.cuda, sub)
        assert set(mod.__all__) <= set(dir(tmod)), sub
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "empty_cache",
                 "memory_stats", "memory_summary", "mem_get_info", "reset_peak_memory_stats",
                 "set_per_process_memory_fraction", "caching_allocator_alloc"):
        assert getattr(cuda.memory, name) is getattr(cuda, name)
    for name in ("manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state",
                 "initial_seed", "seed"):
        assert getattr(cuda.random, name) is getattr(cuda, name)
    assert set(cuda.profiler.__all__) == set(torch.cuda.profiler.__all__)


def test_memory_module_reports_the_allocator():
    base = cuda.memory.memory_allocated()
    x = ptcore.empty(1 << 20, dtype=ptcore.uint8, device="cuda")
    assert cuda.memory.memory_allocated() == base + (1 << 20)
    del x
    assert cuda.memory.memory_allocated() == base
    assert cuda.memory.get_allocator_backend() == "native"


def test_default_generators_are_the_device_generators():
    gens = cuda.default_generators
    assert isinstance(gens, tuple) and len(gens) == cuda.device_count()
    cuda.manual_seed_all(1234)
    assert all(g.initial_seed() == 1234 for g in gens)
    gens[0].manual_seed(7)
    assert cuda.random.initial_seed() == 7 if cuda.current_device() == 0 else True
    a = ptcore.randn(5, device="cuda:0", generator=gens[0].manual_seed(3))
    b = ptcore.randn(5, device="cuda:0", generator=gens[0].manual_seed(3))
    assert ptcore.equal(a.cpu(), b.cpu())


def test_profiler_start_stop_and_context():
    cuda.profiler.start()
    cuda.profiler.stop()
    with cuda.profiler.profile():
        ptcore.ones(3, device="cuda").sum()


def test_check_error_and_cuda_error():
    cuda.check_error(0)
    with pytest.raises(cuda.CudaError, match=r"\(2\)") as info:
        cuda.check_error(2)
    assert isinstance(info.value, RuntimeError) and info.value.code == 2
    assert issubclass(cuda.CudaError, cuda.AcceleratorError)
    assert issubclass(cuda.CudaError, ptcore.AcceleratorError)
    assert cuda.has_half is True and cuda.has_magma is False
