"""Gradient helper shared by the conv/pool/vision tests.

With ptcore's autograd engine, gradients come from ``ptcore.autograd.grad``.
Before it exists, the Functions of ``ptcore.nn.functional._conv`` run through
a recording shim and their explicit ``backward`` methods are chained here
(the recorded Functions form a chain whose first tensor argument is the
previous Function's output, up to views).
"""
import numpy as np

import ptcore
from ptcore.nn.functional import _conv as _C


def to_pt(a, requires_grad=False):
    t = ptcore.from_numpy(np.array(a, copy=True))
    if requires_grad:
        t.requires_grad_(True)
    return t


def grads(fn, inputs, gy):
    """Output of ``fn(*inputs)`` and the gradients of ``(out * gy).sum()``
    with respect to ``inputs`` (None where there is none)."""
    if _C._HAVE_AUTOGRAD:
        for t in inputs:
            t.requires_grad_(True)
        out = fn(*inputs)
        res = ptcore.autograd.grad(out, inputs, gy, allow_unused=True)
        return out.detach(), list(res)
    with _C._capture() as rec:
        out = fn(*inputs)
    assert rec, "no Function was applied"
    g = gy
    found = {}
    for cls, ctx, args, o in reversed(rec):
        g = g.reshape(o.shape) if not isinstance(o, tuple) else g.reshape(o[0].shape)
        gs = cls.backward(ctx, g)
        for a, ga in zip(args[1:], gs[1:]):
            if ga is not None and isinstance(a, ptcore.Tensor):
                found[id(a)] = ga
        g = gs[0]
    res = [g.reshape(inputs[0].shape) if g is not None else None]
    for t in inputs[1:]:
        res.append(found.get(id(t)))
    return out, res
