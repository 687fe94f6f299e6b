"""set_default_device / get_default_device against torch (CPU only: the CUDA
behaviour is in tests/cuda/emulated/test_emulated_default_device.py)."""
import threading

import pytest

import ptcore
from ptcore._dispatch import default_device as _dd
from ptcore._dispatch.declarations import DECLARED


@pytest.fixture(autouse=True)
def _reset():
    yield
    ptcore.set_default_device(None)


def test_cpu_default_device_round_trip_and_layer_state():
    assert ptcore.get_default_device() == ptcore.device("cpu")
    assert not _dd._LAYER.enabled
    ptcore.set_default_device("cpu")
    assert _dd._LAYER.enabled
    t = ptcore.zeros(2)
    assert t.device.type == "cpu" and t.sum().item() == 0
    ptcore.set_default_device(None)
    assert not _dd._LAYER.enabled


def test_per_thread_and_block_state_is_independent():
    ptcore.set_default_device("cpu")
    seen = []
    th = threading.Thread(target=lambda: seen.append(_dd._current()))
    th.start()
    th.join(60)
    assert seen == [None]
    with ptcore.device("cpu"):
        assert _dd._current() == ptcore.device("cpu")
    assert _dd._current() == ptcore.device("cpu")


def test_device_constructor_list_matches_torch():
    # torch's list as torch ships it, read in a fresh process: the list is cached
    # at its first use, and a library another test ran on torch may have swapped a
    # constructor for its own wrapper by then (transformers' ``_safe_linspace``)
    pytest.importorskip("torch")
    import subprocess
    import sys
    out = subprocess.run(
        [sys.executable, "-c", "from torch.utils._device import _device_constructors\n"
         "print('\\n'.join(f.__name__ for f in _device_constructors()))"],
        capture_output=True, text=True, timeout=300, check=True).stdout
    names = set(out.split())
    names = {n[len("fft_"):] if n.startswith("fft_") else n for n in names}
    declared = {name for (_, name), d in DECLARED.items() if d.default_device}
    # (the sparse constructors are no entries of the dispatch point: they keep their
    # own devices)
    missing = names - declared - {"empty_quantized", "nested_tensor", "sparse_coo_tensor",
                                  "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
                                  "sparse_bsc_tensor", "sparse_compressed_tensor"}
    assert not missing, missing


def test_bad_default_device_raises():
    with pytest.raises(RuntimeError):
        ptcore.set_default_device("foo")
    assert ptcore.get_default_device() == ptcore.device("cpu")


def test_set_default_device_inside_a_device_block_as_torch():
    # (the expected list is torch 2.13's; torch itself is not run here: after this
    # sequence its mode stack keeps a stale device context that would leak into
    # later tests)
    def run(m):
        out = []
        try:
            with m.device("meta"):
                m.set_default_device("cpu")     # overrides the open block, outlives it
                out.append(m.zeros(1).device.type)
                with m.device("meta"):          # a block opened later overrides it
                    out.append(m.zeros(1).device.type)
                out.append(m.zeros(1).device.type)
            out += [m.zeros(1).device.type, m.get_default_device().type]
        finally:
            m.set_default_device(None)
        return out
    assert run(ptcore) == ["cpu", "meta", "cpu", "cpu", "cpu"]
