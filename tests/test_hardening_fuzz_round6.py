"""Sixth hardening round: hostile and odd input found by running cases in torch and in
ptcore side by side (tools/hostile_probe.py, cases in tools/hostile_cases_round6.py)."""
import os

import pytest

import ptcore
from hostile_parity import child_prints

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


def _child_prints(code, expected):
    child_prints(code, expected, PKG_PARENT)


def test_copies_of_a_huge_expanded_view_raise():
    # ones(1).expand(2**62) holds 2**62 elements in 4 bytes; a dense copy of it needs
    # 2**64 bytes, which wrapped to 0 in the allocation of clone()/to() (then a copy of
    # 2**62 elements: SIGSEGV); it must raise RuntimeError as every other allocation does
    _child_prints("""
        import ptcore
        x = ptcore.ones(1).expand(2**62)
        for f in (lambda: x.clone(), lambda: x.to(ptcore.float64), lambda: x.contiguous(),
                  lambda: ptcore.empty_like(x), lambda: ptcore.zeros_like(x),
                  lambda: x.clone(memory_format=ptcore.contiguous_format)):
            try:
                f()
                print("no error")
            except RuntimeError:
                pass
        print("ok")
    """, "ok")


def test_pool1d_plain_paths_with_huge_arguments_raise():
    # the one-call 1-d pooling paths multiplied dilation by kernel size unchecked: a kernel
    # of 2**32 + 1 with dilation 2**32 wrapped to 0 and read far outside the row (SIGSEGV);
    # such calls go to the general path, which raises torch's RuntimeError
    _child_prints("""
        import ptcore
        import ptcore.nn.functional as F
        x = ptcore.randn(2, 3, 8)
        for args in [(2**32 + 1, 1, 0, 2**32), (2**31 + 1, 1, 0, 2**33), (3, 1, 0, 2**62),
                     (2**62, 1, 0, 3), (2**40, 1, 0, 2**40)]:
            try:
                F.max_pool1d(x, *args)
                print("no error", args)
            except RuntimeError:
                pass
            try:
                if args[0] > 2**31:             # (avg_pool1d has no dilation)
                    F.avg_pool1d(x, args[0], args[1], args[2])
                    print("no error", args)
            except RuntimeError:
                pass
        print("ok")
    """, "ok")


def test_nonzero_refuses_an_out_that_aliases_its_input():
    # torch's nonzero_out asserts no internal overlap of out and none with the input;
    # ptcore wrote the indices over the input it was reading (round-6 probe)
    a = ptcore.tensor([0, 1, 1])
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ptcore.nonzero(a, out=a)
    assert a.tolist() == [0, 1, 1]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ptcore.nonzero(a, out=ptcore.empty(1, dtype=ptcore.long).expand(3))
    out = ptcore.empty(0, dtype=ptcore.long)
    assert ptcore.nonzero(a, out=out).tolist() == [[1], [2]] and out.tolist() == [[1], [2]]
