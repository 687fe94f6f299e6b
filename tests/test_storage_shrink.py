"""A tensor whose storage shrank (``untyped_storage().resize_`` to fewer bytes
than the tensor spans) never reads or writes past the storage (issue 61, 3).

Every access through a tensor checks that its storage still covers it
(``_TensorBase._ptr``: only a storage that ever shrank pays for the test) and
raises torch's setStorage RuntimeError; ``tolist``/``item`` of an unallocated
storage raise torch's own messages.  torch crashes on most of these (``t + 1``,
``fill_``, ``clone`` ...) and reads freed memory on others (``numpy()``,
``max`` of a storage shrunk to a few bytes): there ptcore raises.  Each probe
runs in a fresh interpreter, so a crash fails its case instead of pytest.
"""
import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest

import ptcore

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))

# expressions that read or write t (a float32 tensor of 10 elements whose storage
# shrank); `o` is an intact tensor of 10 elements
ACCESSES = [
    "t.tolist()", "t.fill_(1)", "t.zero_()", "t.numpy()", "memoryview(t)", "t.__dlpack__()",
    "t.data_ptr()", "t.clone()", "t.contiguous(memory_format=ptcore.channels_last) "
    "if False else t.view(2, 5).t().contiguous()", "t.sum()", "t.max()", "t.float().mean()",
    "t.copy_(o)", "o.copy_(t)", "repr(t)", "t.add_(1)", "t + 1", "t.abs()", "t.sin_()",
    "t.to(ptcore.float64)", "t.double()", "t.sort()", "t.topk(2)", "t.cumsum(0)",
    "t.unique()", "t.nonzero()", "t.bool().any()", "ptcore.cat([t, t])",
    "t.index_select(0, ptcore.tensor([1]))", "t[ptcore.tensor([1])]", "t[t > 0]",
    "t.masked_fill_(ptcore.ones(10, dtype=ptcore.bool), 1.)",
    "t.index_add_(0, ptcore.tensor([1]), ptcore.ones(1))", "t.view(2, 5) @ ptcore.ones(5, 2)",
    "ptcore.nn.functional.relu(t)", "t.softmax(0)", "t.uniform_()", "t.normal_()",
    "t.bernoulli_(0.5)", "ptcore.where(o > 0, t, o)", "t.unsqueeze(0).tolist()",
    "t.view(2, 5)[1].sum()", "t.__setitem__(slice(3, 9), 1.)",
    "t.mul_(2)", "ptcore.mul(o, 2, out=t)", "t.pin_memory() if False else t.cpu().sum()",
]

_PROBE = """
import io, json, sys
import ptcore
results = []
for nbytes in (0, 20):
    for i, expr in enumerate(EXPRS):
        t = ptcore.arange(10.)
        o = ptcore.arange(10.) + 1
        views = (t[5:], t.view(2, 5).t())          # views made before the shrink
        t.untyped_storage().resize_(nbytes)
        try:
            eval(expr)
            results.append((nbytes, i, None, None))
        except Exception as e:
            results.append((nbytes, i, type(e).__name__, str(e)))
        print(json.dumps(results[-1]), flush=True)
"""


def _run(code, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_every_access_through_a_shrunk_storage_raises_without_a_crash():
    p = _run(f"EXPRS = {ACCESSES!r}\n" + _PROBE)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("[")]
    if p.returncode != 0:
        nb, i = (lines[-1][0], lines[-1][1] + 1) if lines else (0, 0)
        pytest.fail(f"the interpreter died (rc {p.returncode}) after probe {i} "
                    f"(storage of {nb} bytes: {ACCESSES[i % len(ACCESSES)]!r}):\n{p.stderr[-2000:]}")
    assert len(lines) == 2 * len(ACCESSES)
    for nbytes, i, name, msg in lines:
        expr = ACCESSES[i]
        assert name == "RuntimeError", (nbytes, expr, name, msg)
        if nbytes == 0 and expr.endswith(".tolist()"):
            assert msg == "tolist() shouldn't be called on a tensor with unallocated storage"
        elif "setStorage" not in msg:
            # the same check reached through another message (a random fill, the
            # data allocated-yet check of an unallocated storage)
            assert "not allocated yet" in msg or "out of bounds" in msg, (nbytes, expr, msg)
        else:
            assert f"out of bounds for storage of size {nbytes}" in msg, (nbytes, expr, msg)


def test_views_made_before_the_shrink_are_checked_and_regrowing_makes_them_valid():
    p = _run(textwrap.dedent("""
        import ptcore
        t = ptcore.arange(10.)
        tail, col = t[5:], t.view(2, 5)[:, 4]
        t.untyped_storage().resize_(24)
        for v, expr in ((tail, "tail.sum()"), (col, "col.tolist()"), (t, "t[5:]")):
            try:
                eval(expr)
                print("no error", expr)
            except RuntimeError as e:
                print("RuntimeError", str(e))
        print(t[:6].tolist() if False else t[:5].tolist())      # still inside: fine
        t.untyped_storage().resize_(40)                         # grows back: the views fit again
        tail.fill_(7.)
        print(tail.tolist(), col.tolist())
    """))
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[0] == ("RuntimeError setStorage: sizes [5], strides [1], storage offset 5, and "
                      "itemsize 4 requiring a storage size of 40 are out of bounds for storage "
                      "of size 24")
    assert out[1].startswith("RuntimeError setStorage: sizes [2], strides [5], storage offset 4")
    assert out[2].startswith("RuntimeError setStorage: sizes [5], strides [1], storage offset 5")
    assert out[3] == "[0.0, 1.0, 2.0, 3.0, 4.0]"
    assert out[4].startswith("[7.0, 7.0, 7.0, 7.0, 7.0]")


def test_errors_match_torch_where_torch_raises():
    """torch checks select/slice/as_strided views (setStorage) and tolist/item of an
    unallocated storage: the same types and messages."""
    torch = pytest.importorskip("torch")
    cases = ["t[7]", "t[2:9]", "t.as_strided((3,), (1,), 8)", "t.view(2, 5)[1]",
             "t.narrow(0, 6, 3)", "t.unbind(0)[8]", "t.view(2, 5)[:, 3]"]

    def outcome(lib, expr, nbytes, n=10):
        t = lib.arange(float(n))
        t.untyped_storage().resize_(nbytes)
        try:
            eval(expr, {"t": t})
            return None
        except Exception as e:      # noqa: BLE001 - compared with torch's
            return type(e).__name__, str(e)
    for expr in cases:
        assert outcome(ptcore, expr, 20) == outcome(torch, expr, 20), expr
    # a compound index is one view in ptcore (torch checks after each step: its
    # message names the intermediate view)
    assert outcome(ptcore, "t.view(1, 10)[0, 7]", 20)[0] == \
        outcome(torch, "t.view(1, 10)[0, 7]", 20)[0] == "RuntimeError"
    for expr in ("t.tolist()", "t.item()", "t[0]", "t[0].item()"):
        # (the first line of torch's message: the rest is about torch.compile and Caffe2)
        mine, theirs = outcome(ptcore, expr, 0, 1), outcome(torch, expr, 0, 1)
        assert (mine[0], mine[1]) == (theirs[0], theirs[1].split("\n")[0]), expr


def test_the_common_path_is_unchecked_and_unchanged():
    """A storage that never shrank: views, in-place writes and Tensor.resize_ (which
    only grows) work as before; shrinking a storage nothing views past is fine."""
    t = ptcore.arange(10.)
    t.resize_(3)
    assert t.tolist() == [0.0, 1.0, 2.0]
    t.untyped_storage().resize_(12)
    t.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0]
    t.resize_(6)                    # grows the storage again
    t[3:] = 9.
    assert t.tolist() == [1.0, 2.0, 3.0, 9.0, 9.0, 9.0]
    e = ptcore.empty(0)
    e.untyped_storage().resize_(0)
    assert e.sum().item() == 0.0 and e.tolist() == []



_INDEX_PROBE = """
import ptcore
out = []
for which in ("index", "self", "src"):
    for name in ("index_add_", "gather", "scatter_add_", "scatter", "take_along_dim"):
        ix = ptcore.tensor([0, 1])
        t, s = ptcore.zeros(3, 2), ptcore.ones(2, 2)
        {"index": ix, "self": t, "src": s}[which].untyped_storage().resize_(0)
        ix2 = ix.view(2, 1).expand(2, 2)
        call = {"index_add_": lambda: t.index_add_(0, ix, s),
                "gather": lambda: ptcore.gather(t, 0, ix2),
                "scatter_add_": lambda: t.scatter_add_(0, ix2, s),
                "scatter": lambda: t.scatter(0, ix2, s),
                "take_along_dim": lambda: ptcore.take_along_dim(t, ix2, 0)}[name]
        try:
            call()
            out.append(f"{which} {name} no error")
        except RuntimeError as e:
            out.append(f"{which} {name} " + ("extent" if "setStorage" in str(e) else str(e)))
        print(out[-1], flush=True)
"""


def test_a_shrunk_operand_raises_in_the_one_call_index_kernels():
    """gather/scatter/scatter_add/index_add's one-call kernels take their operands' data
    pointers in a helper: one whose storage shrank below its extent raised there, inside a
    ``noexcept`` function, and the kernel went on with no memory (index_add_ crashed the
    interpreter).  Every operand (index, self, src) of each raises RuntimeError now."""
    p = _run(_INDEX_PROBE)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    got = p.stdout.strip().splitlines()
    want = [f"{w} {n} extent" for w in ("index", "self", "src")
            for n in ("index_add_", "gather", "scatter_add_", "scatter", "take_along_dim")
            if not (w == "src" and n in ("gather", "take_along_dim"))]
    assert [g for g in got if not g.startswith("src gather") and
            not g.startswith("src take_along_dim")] == want, got


def test_an_overlapping_copy_between_views_of_a_shrunk_storage_raises_and_prints_nothing():
    """copy_'s overlap check takes both operands' byte ranges from their data
    pointers: in a ``noexcept`` helper (``_byte_extent``), where the storage-extent
    error was printed ("Exception ignored in ... _byte_extent") and dropped, and the
    overlap was judged from a NULL pointer.  It propagates now: RuntimeError, no
    unraisable exception (views made before the shrink, so they exist at all)."""
    seen = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        t = ptcore.arange(10.)
        tail, tail2, mid = t[5:], t[5:], t[4:9]
        t.untyped_storage().resize_(20)
        for dst, src in ((tail, tail2), (tail, mid), (t, t)):
            with pytest.raises(RuntimeError, match="setStorage"):
                dst.copy_(src)
    finally:
        sys.unraisablehook = hook
    assert [str(u.exc_value) for u in seen] == []


def test_deepcopy_of_a_shrunk_tensor_grows_the_copys_storage_as_torch():
    """copy.deepcopy copied the storage's bytes (20) and made the copy's view over
    them (40 bytes of sizes [10]) unchecked -- the new storage never shrank, so no
    access checked it and ``copy.sum()`` read 20 bytes past its end.  As torch (whose
    deepcopy sets the copy's storage, which grows it): the copy's storage holds the
    extent, the original stays as it is, views made before the shrink still share
    the copy's storage."""
    torch = pytest.importorskip("torch")

    def facts(lib):
        t = lib.arange(10.)
        v = t[6:]
        t.untyped_storage().resize_(20)
        c, cv = copy.deepcopy([t, v])
        same = cv.untyped_storage().data_ptr() == c.untyped_storage().data_ptr()
        return (c.untyped_storage().nbytes(), c[:5].tolist(), same, tuple(cv.shape),
                cv.storage_offset(), t.untyped_storage().nbytes())
    assert facts(ptcore) == facts(torch) == (40, [0.0, 1.0, 2.0, 3.0, 4.0], True, (4,), 6, 20)
    t = ptcore.arange(10.)
    t.untyped_storage().resize_(20)
    c = copy.deepcopy(t)
    c[5:] = 1.0                     # within the grown storage
    assert c.sum().item() == 15.0
