"""Every op, each tensor operand in turn with its storage shrunk below the
tensor's extent, raises RuntimeError: no crash, no silent read or write past the
storage (the sweep behind tests/test_storage_shrink.py's hand-picked cases).

tests/storage_shrink_probe.py builds each op's sample arguments from its schema
(ptcore's aten overloads, their ``out=`` and in-place forms and ``Tensor``
method forms, and the declared ops no aten op names), then shrinks one operand
(an ``out=`` tensor and an in-place ``self`` included) to one byte short of its
extent, to half of it and to 0 bytes, in reversed memory order, and aliased by
a read operand, and calls the op.  The probes run in subprocesses, in two
batches side by side; a probe that kills its interpreter (or hangs) fails as
itself (op, overload, operand, storage size) and the batch resumes after it.
A probe whose C code printed and dropped an exception (a ``noexcept`` Cython
helper that raised) fails too.
"""
from storage_shrink_probe import sweep


def test_every_op_refuses_a_shrunk_operand():
    sampled, probes, dead, bad = sweep("cpu")
    assert not dead, "probes that killed the interpreter:\n" + "\n".join(dead)
    assert not bad, f"{len(bad)} probes did not raise the storage error:\n" + "\n".join(bad[:60])
    # the sweep really ran: thousands of op forms, each operand four or five times
    assert sampled > 2000 and len(probes) > 12000, (sampled, len(probes))
    assert sum(p[6] == "raised" for p in probes) > 12000


def test_every_op_refuses_a_shrunk_operand_in_other_dtypes():
    """The same sweep with each case's data tensors first in another dtype (float64,
    float16, bfloat16, complex64/128, int64/32/16, uint8: one per case, by a hash of
    its key), so each kernel family's other dtype loops are probed too."""
    sampled, probes, dead, bad = sweep("cpu", mode="dtypes")
    assert not dead, "probes that killed the interpreter:\n" + "\n".join(dead)
    assert not bad, f"{len(bad)} probes did not raise the storage error:\n" + "\n".join(bad[:60])
    assert sampled > 2000 and sum(p[6] == "raised" for p in probes) > 12000, (sampled, len(probes))
