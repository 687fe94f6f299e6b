"""``vmap`` of a custom :class:`ptcore.autograd.Function` (torch.func's rules).

Under ``vmap`` a Function's ``apply`` receives batched tensors.  A Function
is vmappable as in PyTorch: with ``generate_vmap_rule = True`` its
``forward`` runs on the batched tensors (every op batched by the batching
layer), or its ``vmap`` staticmethod gives the batched forward.  Either
way, when an input requires grad the Function is recorded in the *physical*
(batched) graph: its node's edges go to the inputs' physical tensors, and its
backward runs the user's ``backward`` under fresh vmap levels of the same
sizes, on the physical gradients and saved tensors wrapped again, so that
``vmap(grad(f))`` and a backward after ``vmap`` both see per-sample
gradients.  ptcore's own Functions (old-style ``forward(ctx, ...)``) are
batched by the generated rule.
"""
import builtins
from collections import namedtuple

from ptcore._tensor import _TensorBase
from ptcore._dispatch import batching as _B
import ptcore.autograd.function as _F
import ptcore.autograd.grad_mode as _gm
from ptcore.func._pytree import _broadcast_dims, _flatten, _unflatten
from ptcore.func._batched import (is_batched, level_of, maybe_level, physical, wrap, to_physical,
                                  from_physical)

__all__ = ["VmapInfo", "apply_batched", "run_vmap_rule"]

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def _check(cls, uses_setup, kwargs):
    if cls.__module__.startswith("ptcore."):
        return          # ptcore's own Functions: the generated rule
    if not uses_setup:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. " + _DOCS)
    if any(isinstance(v, _TensorBase) for v in kwargs.values()):
        raise NotImplementedError(f"Run vmap on autograd.Function with kwarg-only Tensor args. "
                                  f"Please do not pass kwarg-only Tensors to autograd.Function. "
                                  f"Got: {kwargs}")
    custom = cls.vmap is not _F.Function.vmap
    if cls.generate_vmap_rule and custom:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both "
                           f"generate_vmap_rule=True and an overridden vmap staticmethod. Please "
                           f"set generate_vmap_rule=False or delete the overridden vmap "
                           f"staticmethod to avoid ambiguity. " + _DOCS)
    if not cls.generate_vmap_rule and not custom:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           f"support. Please override and implement the vmap staticmethod or set "
                           f"generate_vmap_rule=True. " + _DOCS)


def _run_rule(cls, args, kwargs):
    """The forward by the user's ``vmap`` staticmethod at the innermost level
    among the arguments (ops on lower levels are batched by the layer)."""
    top = builtins.max(level_of(a) for a in args if is_batched(a))
    return run_vmap_rule(cls.vmap, _B.frame_of(top), args, kwargs,
                         "The autograd.Function's vmap staticmethod")


def run_vmap_rule(fn, frame, args, kwargs, what):
    """``fn(info, in_dims, *unwrapped, **kwargs)`` (torch's vmap rule protocol,
    of an autograd.Function's ``vmap`` staticmethod and of a custom op's
    ``register_vmap``) at the vmap level of ``frame``: the arguments batched
    at that level are handed over physical (batch dimension 0, lists of
    tensors as lists of dims), the outputs are wrapped at their ``out_dims``;
    an output that is one of the unwrapped arguments is that argument."""
    top = frame.level
    originals = {}

    def unwrap(a):
        if isinstance(a, (list, tuple)) and any(isinstance(b, _TensorBase) for b in a):
            pairs = [unwrap(b) for b in a]
            return type(a)(p[0] for p in pairs), [p[1] for p in pairs]
        if maybe_level(a, top) is None:
            return a, None
        p = physical(a)
        originals[id(p)] = a
        return p, 0
    pairs = [unwrap(a) for a in args]
    un = [p[0] for p in pairs]
    in_dims = tuple(p[1] for p in pairs)
    res = fn(VmapInfo(frame.size, frame.randomness), in_dims, *un, **kwargs)
    msg = ("Expected the vmap staticmethod to have two returns, an output and out_dims with "
           "pytree structure compatible with the output. ")
    if not isinstance(res, tuple):
        raise RuntimeError(msg + f"Got a {type(res)} instead")
    if builtins.len(res) != 2:
        raise RuntimeError(msg + f"Got {builtins.len(res)} returns instead")
    out, out_dims = res
    leaves, spec = _flatten(out)
    try:
        dims = _broadcast_dims(builtins.list(out_dims) if isinstance(out_dims, tuple)
                                 else out_dims, out, "out_dims")
    except ValueError:
        raise RuntimeError(f"{what} returned an incompatible (output, out_dims) tuple. "
                           f"Expected out_dims={out_dims} to be compatible with the structure "
                           f"of `output`. " + _DOCS) from None
    wrapped = []
    for o, d in zip(leaves, dims):
        if not isinstance(o, _TensorBase):
            wrapped.append(o)
        elif id(o) in originals:
            wrapped.append(originals[id(o)])
        elif d is None:
            wrapped.append(o)
        else:
            wrapped.append(wrap(o if d == 0 else o.movedim(d, 0), top))
    return _unflatten(wrapped, spec)


class _BatchedCtx(_F.FunctionCtx):
    """The ctx of a Function recorded under vmap: it holds the physical saved
    tensors, handed to ``backward`` wrapped at its vmap levels."""

    def __init__(self):
        super().__init__()
        self._bw_sizes = ()
        self._bw_frames = None

    @property
    def saved_tensors(self):
        saved = _F.FunctionCtx.saved_tensors.fget(self)
        frames = self._bw_frames
        if not frames:
            return saved
        return tuple(None if t is None else from_physical(t, frames) for t in saved)

    saved_variables = saved_tensors


class _BatchedBackward:
    """What the node of a Function recorded under vmap calls: ``cls.backward``
    under fresh vmap levels of the recorded sizes, on the physical gradients."""
    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def backward(self, ctx, *grads):
        frames = [_B.push(size, randomness) for size, randomness in ctx._bw_sizes]
        prev = ctx._bw_frames
        ctx._bw_frames = frames
        try:
            gs = [None if g is None else from_physical(g, frames) for g in grads]
            res = self.cls.backward(ctx, *gs)
            single = not isinstance(res, tuple)
            res = (res,) if single else res
            res = tuple(to_physical(r, frames) if isinstance(r, _TensorBase) else r for r in res)
            return res[0] if single else res
        finally:
            ctx._bw_frames = prev
            for f in reversed(frames):
                _B.pop(f)


# ptcore's Functions whose forward runs kernels on the memory of its tensors,
# which a batched tensor does not have: when the generated rule (the forward
# on the batched tensors) fails, they run per sample
_KERNEL_FUNCTION_MODULES = ("ptcore.nn.functional.", "ptcore.fft.", "ptcore.special.",
                            "ptcore.autograd._composite_functions", "ptcore.sparse.")


def apply_batched(cls, args, kwargs, uses_setup):
    """``cls.apply(*args, **kwargs)`` while a vmap runs; NotImplemented when
    no positional argument is batched."""
    if not any(is_batched(a) for a in args):
        return NotImplemented
    _check(cls, uses_setup, kwargs)
    state = _gm._state
    record = state.enabled and any(isinstance(a, _TensorBase) and a.requires_grad for a in args)
    ctx = _BatchedCtx()
    ctx.needs_input_grad = tuple(bool(record and isinstance(a, _TensorBase) and a.requires_grad)
                                 for a in args)
    custom = cls.vmap is not _F.Function.vmap
    kernels = not custom and cls.__module__.startswith(_KERNEL_FUNCTION_MODULES)
    if kernels and any(is_batched(a) and a.numel() == 1 for a in args):
        # a batched one-element tensor passes a kernel's contiguity check and
        # the kernel would read its poisoned memory: per sample
        return _apply_per_sample(cls, args, kwargs)
    prev = state.enabled
    state.enabled = False
    try:
        if custom:
            out = _run_rule(cls, args, kwargs)
        elif uses_setup:
            out = cls.forward(*args, **kwargs)
        else:
            out = cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, out)
    except (RuntimeError, ValueError):
        if not kernels:
            raise
        failed = True
    else:
        failed = False
    finally:
        state.enabled = prev
    if failed:
        # one of ptcore's Functions whose forward runs a kernel on the memory
        # of its tensors (which a batched tensor does not have): per sample
        return _apply_per_sample(cls, args, kwargs)
    if not record:
        return out
    if ctx._dirty:
        raise RuntimeError(f"vmap: {cls.__name__} marks an input dirty (ctx.mark_dirty); an "
                           f"autograd.Function that modifies its inputs in place cannot be "
                           f"recorded under vmap")
    frames = builtins.list(_B.frames())
    # the node lives in the physical graph: its inputs, outputs and saved
    # tensors are the physical tensors (batch dims in front, every level)
    p_args = [to_physical(a, frames) if isinstance(a, _TensorBase) else None for a in args]
    is_tuple = isinstance(out, tuple)
    outs = out if is_tuple else (out,)
    p_outs = tuple(to_physical(o, frames) if isinstance(o, _TensorBase) else o for o in outs)
    of_out = {id(o): p for o, p in zip(outs, p_outs) if isinstance(o, _TensorBase)}

    def phys(t):
        if t is None:
            return None
        p = of_out.get(id(t))
        return to_physical(t, frames) if p is None else p

    ctx.to_save = tuple(phys(t) for t in ctx.to_save)
    ctx._non_diff = tuple(phys(t) for t in ctx._non_diff)
    ctx._bw_sizes = tuple((f.size, f.randomness) for f in frames)
    res = _F.connect(cls, ctx, p_args, p_outs if is_tuple else p_outs[0], _BatchedBackward(cls))
    res = res if is_tuple else (res,)
    res = tuple(from_physical(r, frames) if isinstance(r, _TensorBase) else r for r in res)
    return res if is_tuple else res[0]


def _apply_per_sample(cls, args, kwargs):
    """``cls.apply`` on each sample of the physical tensors (every vmap
    level), the results stacked (the slow fallback of torch's vmap): the
    samples are plain tensors, so the Function's kernels and its graph are
    the ordinary ones."""
    import math
    import ptcore
    frames = builtins.list(_B.frames())
    sizes = tuple(f.size for f in frames)
    n = math.prod(sizes)
    flat = [to_physical(a, frames).reshape((n,) + tuple(a.shape)) if is_batched(a) else a
            for a in args]
    per = []
    is_tuple = False
    for i in range(n):
        r = cls.apply(*[f[i] if is_batched(a) else f for a, f in zip(args, flat)], **kwargs)
        is_tuple = isinstance(r, tuple)
        per.append(r if is_tuple else (r,))

    def join(k):
        first = per[0][k]
        if not isinstance(first, _TensorBase):
            return first
        st = ptcore.stack([p[k] for p in per])
        return from_physical(st.reshape(sizes + tuple(first.shape)), frames)
    out = tuple(join(k) for k in range(builtins.len(per[0])))
    return out if is_tuple else out[0]


_B.function_driver[0] = apply_batched
