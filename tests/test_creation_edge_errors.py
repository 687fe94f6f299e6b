"""Errors torch raises that ptcore raised differently (found by the
hardening and tensorapi helpers): 1-d factories whose byte size overflows
int64 (arange/linspace/logspace: torch's RuntimeError before anything is
computed, not NumPy's ValueError), empty(memory_format=preserve_format)
(RuntimeError), a CPU tensor's __dlpack__ with a stream (torch's
AssertionError)."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda M: M.arange(2 ** 62),
    lambda M: M.arange(0, 2.0 ** 62, 1.0),
    lambda M: M.arange(2 ** 61, dtype=M.float64),
    lambda M: M.linspace(0, 1, 2 ** 62),
    lambda M: M.logspace(0, 1, 2 ** 62),
    lambda M: M.empty(2, 3, memory_format=M.preserve_format),
])
def test_runtime_errors(call):
    for M in (torch, ptcore):
        with pytest.raises(RuntimeError):
            call(M)


def test_sizes_that_fit_still_work():
    assert ptcore.arange(5).tolist() == torch.arange(5).tolist()
    assert ptcore.linspace(0, 1, 3).tolist() == torch.linspace(0, 1, 3).tolist()
    assert ptcore.empty(2, 3, 4, 5, memory_format=ptcore.channels_last).stride() == \
        torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()


def test_cpu_dlpack_stream():
    for M in (torch, ptcore):
        with pytest.raises(AssertionError):
            M.ones(3).__dlpack__(stream=5)
        assert type(M.ones(3).__dlpack__(stream=None)).__name__ == "PyCapsule"


def test_tensor_split_with_more_sections_than_a_vector_holds():
    for M in (torch, ptcore):
        with pytest.raises(RuntimeError):
            M.zeros(5).tensor_split(2 ** 62)
    assert len(ptcore.zeros(5).tensor_split(7)) == 7


@pytest.mark.parametrize("v", [complex(float("nan"), 0), complex(float("inf"), 0), 1e20 + 0j,
                               -1e19 + 0j, 3.7 + 2j, 3.7 + 0j, -2.5 + 0j, 9.2e18 + 0j])
def test_int_of_a_complex_tensor(v):
    def outcome(M):
        try:
            return int(M.tensor(v))
        except RuntimeError:
            return "RuntimeError"
    assert outcome(ptcore) == outcome(torch)
