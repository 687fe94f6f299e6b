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


def test_max_min_dim_refuse_outs_that_partly_overlap_the_input():
    # torch's TensorIterator refuses an out that is part of the input (round-6 probe)
    a = ptcore.arange(4.)
    i = ptcore.empty(2, dtype=ptcore.long)
    for f in (ptcore.max, ptcore.min):
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            f(a.view(2, 2), 1, out=(a[:2], i))
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]
    v = ptcore.empty(2)
    r = ptcore.max(a.view(2, 2), 1, out=(v, i))
    assert r.values.tolist() == [1.0, 3.0] and i.tolist() == [1, 1]


def test_as_strided_and_split_sizes_refuse_bools():
    # torch's parser takes no bool as an int of a size or stride list (round-6 probe)
    x = ptcore.ones(4)
    with pytest.raises(TypeError, match="'size' must be tuple of ints, but found element of type bool"):
        x.as_strided((True,), (1,))
    with pytest.raises(TypeError, match="'stride' must be tuple of ints, but found element of type bool"):
        x.as_strided((1,), (True,))
    with pytest.raises(TypeError, match="type bool at pos 0"):
        x.split_with_sizes([True, 3])


def test_jit_load_refuses_an_archive_version_torch_does_not_read():
    torch = pytest.importorskip("torch")
    import io
    import zipfile
    b = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), b)
    z = zipfile.ZipFile(io.BytesIO(b.getvalue()))
    for version, ok in ((b"99999\n", False), (b"0\n", False), (b"junk\n", False), (None, True)):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zo:
            for n in z.namelist():
                zo.writestr(n, version if version is not None and n.endswith("/version")
                            else z.read(n))
        if ok:
            assert ptcore.jit.load(io.BytesIO(out.getvalue()))(ptcore.ones(2)).shape == (2,)
        else:
            with pytest.raises(RuntimeError, match="ptcore.jit.load: .*version"):
                ptcore.jit.load(io.BytesIO(out.getvalue()))
