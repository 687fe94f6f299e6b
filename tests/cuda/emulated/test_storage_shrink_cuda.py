"""A CUDA tensor whose device storage shrank raises torch's setStorage
RuntimeError on every read and write (the checked data pointer every launch
takes), never an out-of-bounds device access (issue 61, 3).  The probes run in
a fresh interpreter on this module's device (emulated unless
PTCORE_TEST_REAL_CUDA=1), so a crash fails the test, not the run."""
import json
import os
import subprocess
import sys

import ptcore
from storage_shrink_probe import compile_sweep, sweep

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))

EXPRS = ["t.tolist()", "t.fill_(1)", "t + 1", "t.clone()", "t.sum()", "t.cpu()", "t.copy_(o)",
         "o.copy_(t)", "t[2:9]", "t.sort()", "t.add_(1)", "repr(t)", "t.__dlpack__()",
         "t.uniform_()", "t.view(2, 5) @ o.view(5, 2)", "t.cumsum(0)", "t.to(ptcore.float64)",
         "t.index_select(0, ptcore.tensor([1], device='cuda'))", "t.max()",
         "t.view(2, 5).t().contiguous()", "ptcore.cat([t, t])", "t[t > 0]"]

_PROBE = """
import json, ptcore
for nbytes in (0, 20):
    for expr in EXPRS:
        t = ptcore.arange(10., device="cuda")
        o = ptcore.ones(10, device="cuda")
        t.untyped_storage().resize_(nbytes)
        try:
            eval(expr)
            ptcore.cuda.synchronize()
            print(json.dumps([nbytes, expr, None, None]), flush=True)
        except Exception as e:
            print(json.dumps([nbytes, expr, type(e).__name__, str(e)]), flush=True)
"""


def test_shrunk_device_storage_raises_on_every_access():
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", f"EXPRS = {EXPRS!r}\n" + _PROBE],
                       capture_output=True, text=True, timeout=600, env=env)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("[")]
    assert p.returncode == 0, (lines[-1:] if lines else None, p.stderr[-2000:])
    assert len(lines) == 2 * len(EXPRS)
    for nbytes, expr, name, msg in lines:
        assert name == "RuntimeError", (nbytes, expr, name, msg)
        if nbytes == 0 and expr == "t.tolist()":
            assert msg == "tolist() shouldn't be called on a tensor with unallocated storage"
        else:
            assert msg.startswith("setStorage: sizes [") and \
                msg.endswith(f"out of bounds for storage of size {nbytes}"), (expr, msg)


def test_every_op_refuses_a_shrunk_device_operand():
    """tests/test_storage_shrink_sweep.py's sweep with every operand on this module's
    device: each op, each tensor operand shrunk in turn (short, half, 0 bytes,
    reversed layout, aliased), raises the storage-extent RuntimeError.  It found
    ``item()`` of a one-element device tensor (``bool``/``float``/``int`` of it, and
    every op that reads a 0-d tensor argument on the host: ``fill_``,
    ``masked_fill``, ``linspace``, ``bernoulli``'s p ...) copying its bytes from the
    device past a storage shorter than one element."""
    sampled, probes, dead, bad = sweep("cuda")
    assert not dead, "probes that killed the interpreter:\n" + "\n".join(dead)
    assert not bad, f"{len(bad)} probes did not raise the storage error:\n" + "\n".join(bad[:60])
    assert sampled > 1500 and sum(p[6] == "raised" for p in probes) > 9000, (sampled, len(probes))


def test_item_of_a_device_tensor_shorter_than_one_element_raises():
    """The host copy of a device tensor's bytes (``item``, and every host read of a
    0-d device tensor) took the storage's pointer unchecked: a storage of 2 or 3
    bytes under a float32 element was read past its end (a garbage value)."""
    for nbytes in (2, 3):
        for expr in ("t.item()", "bool(t)", "float(t)", "t.tolist()",
                     "ptcore.zeros(2, device='cuda').fill_(t)"):
            t = ptcore.tensor(1.5, device="cuda")
            t.untyped_storage().resize_(nbytes)
            try:
                got = eval(expr)
            except RuntimeError as e:
                assert str(e).endswith(f"out of bounds for storage of size {nbytes}"), (expr, e)
            else:
                raise AssertionError(f"{expr} with {nbytes} bytes gave {got!r}")


def test_compiled_code_refuses_a_shrunk_device_input():
    """ptcore.compile's paths on this module's device (the fused chains are one
    generated kernel each here): a captured function given an input whose storage
    shrank raises the storage-extent RuntimeError."""
    results, dead = compile_sweep("cuda")
    assert dead is None, dead
    assert len(results) > 200
    bad = [r for r in results if not r.endswith(" raised")]
    assert not bad, "\n".join(bad)
