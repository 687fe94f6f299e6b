"""``torch._dynamo.testing``: the backends and helpers tests of compiled code
use -- :class:`CompileCounter` (graphs and ops a compiled function made),
:class:`CompileCounterWithBackend`, :class:`EagerAndRecordGraphs` (the
``fx.GraphModule`` of every graph) -- and the small comparison helpers.

The counting backends are custom compiler backends
(:mod:`ptcore._inductor.custom`): ``ptcore.compile(fn, backend=cnt)`` hands
them each captured graph."""
import random
import re

import ptcore
from ptcore._dynamo.backends import lookup_backend
from ptcore._dynamo.utils import same  # noqa: F401 (torch's testing module re-exports it)

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs",
           "normalize_gm", "strip_comment", "remove_trailing_space", "empty_line_normalizer",
           "rand_strided", "reset_rng_state", "requires_bwd_pass", "reduce_to_scalar_loss",
           "remove_optimized_module_prefix", "collect_results", "same"]


def _count_calls(gm):
    return sum(1 for n in gm.graph.nodes if "call" in n.op)


class CompileCounter:
    """A backend counting the graphs it was given (``frame_count``) and their
    op calls (``op_count``); it runs each graph as captured."""

    def __init__(self):
        self.frame_count = 0
        self.clear()

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += _count_calls(gm)
        return gm.forward

    def clear(self):
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend:
    """:class:`CompileCounter` that keeps the graphs (``graphs``) and hands
    each to the backend named ``backend``."""

    def __init__(self, backend):
        self.frame_count = 0
        self.backend = backend
        self.graphs = []
        self.clear()

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += _count_calls(gm)
        self.graphs.append(gm)
        b = lookup_backend(self.backend)
        if callable(b):
            return b(gm, example_inputs)
        # (a built-in backend: the graph module runs its ops as captured)
        return gm.forward

    def clear(self):
        self.frame_count = 0
        self.op_count = 0
        self.graphs = []


class EagerAndRecordGraphs:
    """``backend="eager"`` that keeps every graph module in ``graphs``."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def strip_comment(code):
    return re.sub(r"(?m)^ *#.*\n?", "", code)


def remove_trailing_space(code):
    return "\n".join([line.rstrip() for line in code.split("\n")])


def _squash_blank_lines(code):
    lines = code.split("\n")
    out = []
    blank = False
    for line in lines:
        if line.strip() == "":
            if not blank:
                out.append(line)
            blank = True
        else:
            out.append(line)
            blank = False
    return "\n".join(out)


def normalize_gm(gm_str):
    """A graph module's code without comments, trailing spaces and repeated blank lines."""
    return _squash_blank_lines(remove_trailing_space(strip_comment(gm_str)))


def empty_line_normalizer(code):
    return re.sub(r"[\r\n]+", "\n", code)


def rand_strided(size, stride, dtype=ptcore.float32, device="cpu", extra_size=0):
    """A tensor of ``size`` and ``stride`` over a random buffer just large enough."""
    needed = extra_size
    if all(s > 0 for s in size):
        needed += sum((s - 1) * st for s, st in zip(size, stride)) + 1
    if dtype.is_floating_point:
        buf = ptcore.randn(needed, dtype=dtype, device=device)
    else:
        buf = ptcore.zeros(size=[needed], dtype=dtype, device=device)
    return ptcore.as_strided(buf, size, stride)


def reset_rng_state(use_xla=False):
    ptcore.manual_seed(1337)
    random.seed(1337)
    try:
        import numpy as np
    except ImportError:         # pragma: no cover (NumPy is a dependency)
        return
    np.random.seed(1337)


def remove_optimized_module_prefix(name):
    return name.replace("_orig_mod.", "")


def requires_bwd_pass(out):
    if isinstance(out, ptcore.Tensor):
        return out.requires_grad
    if isinstance(out, (list, tuple)):
        return any(requires_bwd_pass(x) for x in out)
    if out is None or isinstance(out, int):
        return False
    raise NotImplementedError("Don't know how to reduce", type(out))


def reduce_to_scalar_loss(out):
    """The mean of a model's output (summed over lists, tuples and dicts)."""
    if isinstance(out, ptcore.Tensor):
        return out.sum() / out.numel()
    if isinstance(out, (list, tuple)):
        return sum(reduce_to_scalar_loss(x) for x in out) / len(out)
    if isinstance(out, dict):
        return sum(reduce_to_scalar_loss(v) for v in out.values()) / len(out)
    logits = getattr(out, "logits", None)
    if logits is not None:
        return reduce_to_scalar_loss(logits)
    raise NotImplementedError("Don't know how to reduce", type(out))


def collect_results(model, prediction, loss, example_inputs):
    """[prediction, loss, grads, params, buffers, input grads] as torch's."""
    results = [prediction, loss]
    grads, params = {}, {}
    for name, p in model.named_parameters():
        name = remove_optimized_module_prefix(name)
        grads[name + ".grad"] = p.grad if p.grad is not None else ptcore.zeros_like(p)
        params[name] = p
    results += [grads, params]
    results.append({remove_optimized_module_prefix(n): b for n, b in model.named_buffers()})
    for x in example_inputs:
        if isinstance(x, (tuple, list)):
            results.extend(i.grad for i in x if isinstance(i, ptcore.Tensor))
        elif isinstance(x, ptcore.Tensor):
            results.append(x.grad)
    return results
