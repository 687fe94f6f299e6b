"""Gradient helper shared by the conv/pool/vision tests (gradients from
``ptcore.autograd.grad``, compared with torch's by the tests)."""
import numpy as np

import ptcore


def to_pt(a, requires_grad=False):
    t = ptcore.from_numpy(np.array(a, copy=True))
    if requires_grad:
        t.requires_grad_(True)
    return t


def grads(fn, inputs, gy):
    """Output of ``fn(*inputs)`` and the gradients of ``(out * gy).sum()``
    with respect to ``inputs`` (None where there is none), by ptcore's autograd."""
    for t in inputs:
        t.requires_grad_(True)
    out = fn(*inputs)
    res = ptcore.autograd.grad(out, inputs, gy, allow_unused=True)
    return out.detach(), list(res)
