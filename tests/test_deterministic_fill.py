"""``use_deterministic_algorithms(True)`` fills uninitialised memory as torch:
empty / empty_like / empty_strided / new_empty / resize_ give NaN (floating,
complex) or the dtype's largest value (integers, True for bool), switched by
``utils.deterministic.fill_uninitialized_memory``."""
import importlib

import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32",
          "complex64"]


def _program(lib):
    T = importlib.import_module(lib)
    det = importlib.import_module(lib + ".utils.deterministic")
    out = []

    def rec(x):
        out.append(str(x).replace(lib, "T"))
    prev = T.are_deterministic_algorithms_enabled()
    T.use_deterministic_algorithms(True)
    try:
        for name in DTYPES:
            dt = getattr(T, name)
            rec(T.empty(2, dtype=dt))
            rec(T.empty_like(T.ones(2), dtype=dt))
            rec(T.empty_strided((2,), (2,), dtype=dt))
            rec(T.ones(1).new_empty(2, dtype=dt))
        rec(T.empty(2, requires_grad=True))
        t = T.zeros(2)
        t.resize_(5)
        rec(t)
        t = T.zeros(2, dtype=T.long)
        t.resize_(3)
        rec(t)
        t = T.zeros(6)
        t.resize_(2)
        t.resize_(4)          # within the old storage: nothing new to fill
        rec(t)
        det.fill_uninitialized_memory = False
        rec(det.fill_uninitialized_memory)
        t = T.zeros(2)
        t.resize_(3)
        rec(t[:2])
        try:
            det.fill_uninitialized_memory = 1
        except RuntimeError as e:
            rec(str(e))
    finally:
        det.fill_uninitialized_memory = True
        T.use_deterministic_algorithms(prev)
    return out


def test_fill_as_torch():
    assert _program("ptcore") == _program("torch")


def test_no_fill_without_deterministic_algorithms():
    assert not ptcore.are_deterministic_algorithms_enabled()
    t = ptcore.zeros(3)
    t.resize_(2)
    t.resize_(3)
    assert t.tolist() == [0.0, 0.0, 0.0]       # the old storage's values, not NaN
    import ptcore.utils.deterministic as det
    assert det.fill_uninitialized_memory is True
