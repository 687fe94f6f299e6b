"""Activation checkpointing (``torch.utils.checkpoint``).

A checkpointed region does not keep the activations its operations save
for backward: they are recomputed, by running the region again, when
backward needs them.  Two variants, as in PyTorch:

* ``use_reentrant=True``: :class:`CheckpointFunction`, an autograd Function
  (node ``CheckpointFunctionBackward``) that runs the region under
  ``no_grad`` keeping only its inputs; its backward re-runs the region with
  grad enabled and backpropagates through that new graph (a nested
  ``backward`` call).  It cannot serve :func:`ptcore.autograd.grad` nor
  ``backward(inputs=...)`` and takes no keyword arguments.
* ``use_reentrant=False``: the region runs normally (its graph is the
  ordinary one) under :class:`~ptcore.autograd.graph.saved_tensors_hooks`
  whose pack hook keeps a placeholder instead of each saved tensor; the
  first unpack during a backward pass re-runs the region (under hooks that
  collect the recomputed tensors, stopping as soon as all are there) and
  hands out the recomputed values.

The RNG state at the start of the region is restored for the recomputation
when ``preserve_rng_state`` (so dropout draws the same masks).

Selective checkpointing (:func:`create_selective_checkpoint_contexts` as the
``context_fn`` of a non-reentrant checkpoint) keeps the outputs of the ops a
policy chooses: a dispatch mode caches them in the forward, another hands
them out in the recomputation instead of running those ops again.
"""
import contextlib
import enum
import uuid
import warnings
import weakref
from collections import defaultdict

import ptcore
from ptcore._dispatch.op_overload import OpOverload, OpOverloadPacket
from ptcore._dispatch.python_dispatch import TorchDispatchMode, kernel_records_autograd
from ptcore._tensor import _TensorBase
from ptcore.autograd import graph as _graph
from ptcore.autograd.function import Function
from ptcore.autograd.graph import SavedTensor, saved_tensors_hooks
from ptcore.nn import Sequential
from ptcore.utils._pytree import tree_leaves, tree_map

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]

_DEFAULT_DETERMINISM_MODE = "default"

_checkpoint_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Context manager overriding the ``debug`` flag of every
    :func:`checkpoint` inside it (``None``: defer to the flag)."""
    global _checkpoint_debug_enabled
    try:
        prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


def detach_variable(inputs):
    """Detach every tensor of the tuple ``inputs``, keeping its ``requires_grad``.

    Parameters
    ----------
    inputs : tuple
        Tensors and other values (passed through).

    Returns
    -------
    tuple
    """
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, _TensorBase):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                       f"{type(inputs).__name__}")


def check_backward_validity(inputs):
    """Warn (as PyTorch) when no tensor of ``inputs`` requires grad."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _TensorBase)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpointing preserves besides the
    CPU's when no input tensor names one (default ``"cuda"``)."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        """Set the default device type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        """The default device type."""
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args):
    device_types = []

    def add(arg):
        if isinstance(arg, _TensorBase) and arg.device.type != "cpu":
            device_types.append(arg.device.type)

    for a in args:
        if isinstance(a, (list, tuple)):
            for b in a:
                add(b)
        elif isinstance(a, dict):
            for b in a.values():
                add(b)
        else:
            add(a)
    if len(set(device_types)) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of "
            "devices. Device state will only be saved for devices of a single device type, and "
            "the remaining devices will be ignored. Consequently, if any checkpointed functions "
            "involve randomness, this may result in incorrect gradients. (Note that if CUDA "
            "devices are among the devices detected, it will be prioritized; otherwise, the "
            f"first device encountered will be selected.)\nDevice types: {sorted(set(device_types))} "
            f"first device type: {device_types[0]}")
    if len(device_types) == 0:
        return DefaultDeviceType.get_device_type()
    if "cuda" in device_types:
        return "cuda"
    return device_types[0]


def _device_module(device_type):
    return getattr(ptcore, device_type, None)


def _get_device_module(device="cuda"):
    """``ptcore.<device>`` (torch's helper, which copied checkpoint code calls)."""
    if device == "meta":
        return ptcore.device("meta")
    return getattr(ptcore, device)


def _get_autocast_kwargs(device_type="cuda"):
    """``(device_kwargs, cpu_kwargs)``: the autocast state to re-enter when
    recomputing (torch's helper; device_kwargs is None where the device has no
    autocast)."""
    def state(dt):
        return {"enabled": ptcore.is_autocast_enabled(dt), "dtype": ptcore.get_autocast_dtype(dt),
                "cache_enabled": ptcore.is_autocast_cache_enabled()}
    device_kwargs = state(device_type) if ptcore.amp.is_autocast_available(device_type) else None
    return device_kwargs, state("cpu")


def _device_rng_ready(device_type):
    """True when ``device_type`` has an initialised RNG whose state can be
    saved (ptcore's device modules may not have per-device generators)."""
    mod = _device_module(device_type)
    if mod is None or not (hasattr(mod, "get_rng_state") and hasattr(mod, "set_rng_state")):
        return False
    ready = getattr(mod, "is_initialized", None)
    return bool(ready()) if callable(ready) else bool(getattr(mod, "_initialized", False))


def get_device_states(*args):
    """The devices of the tensors in ``args`` (non-CPU) and their RNG states.

    Returns
    -------
    (list of int, list of Tensor)
    """
    fwd_device_ids = []
    for a in args:
        if isinstance(a, _TensorBase) and a.device.type not in ("cpu", "meta"):
            idx = a.get_device() if hasattr(a, "get_device") else a.device.index
            if idx not in fwd_device_ids:
                fwd_device_ids.append(idx)
    device_type = _infer_device_type(*args)
    states = []
    if fwd_device_ids and _device_rng_ready(device_type):
        mod = _device_module(device_type)
        for d in fwd_device_ids:
            states.append(mod.get_rng_state(d))
    else:
        fwd_device_ids = []
    return fwd_device_ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the RNG states returned by :func:`get_device_states`."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta" or not devices:
        return
    mod = _device_module(device_type)
    for d, s in zip(devices, states):
        mod.set_rng_state(s, d)


@contextlib.contextmanager
def _fork_rng(enabled, devices, device_type):
    """Restore the CPU (and ``devices``') RNG state on exit."""
    if not enabled:
        yield
        return
    cpu_state = ptcore.get_rng_state()
    dev_states = []
    if devices:
        mod = _device_module(device_type)
        dev_states = [mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        ptcore.set_rng_state(cpu_state)
        if devices:
            set_device_states(devices, dev_states, device_type=device_type)


def _stash_rng(args):
    """(cpu_state, had_device_in_fwd, devices, device_states, device_type)."""
    device_type = _infer_device_type(*args)
    cpu = ptcore.get_rng_state()
    had = _device_rng_ready(device_type)
    devices, states = get_device_states(*args) if had else ([], [])
    return cpu, had, devices, states, device_type


# ---------------------------------------------------------------------------
# the reentrant variant
# ---------------------------------------------------------------------------

_REENTRANT_GRAD_MSG = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible"
    " with .grad() or passing an `inputs` parameter to .backward()."
    " To resolve this error, you can either set use_reentrant=False,"
    " or call .backward() without passing the `inputs` argument.")


class CheckpointFunction(Function):
    """The autograd Function of reentrant checkpointing: forward runs
    ``run_function`` without recording and keeps only the inputs; backward
    recomputes it with grad enabled and backpropagates through the result."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device_type = _infer_device_type(*args)
        if preserve_rng_state:
            (ctx.fwd_cpu_state, ctx.had_device_in_fwd, ctx.fwd_devices,
             ctx.fwd_device_states, _) = _stash_rng(args)
        # non-tensor inputs stay in ctx; tensors are saved for backward
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, _TensorBase):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with ptcore.no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _graph._is_checkpoint_valid():
            raise RuntimeError(_REENTRANT_GRAD_MSG)
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        rng_devices = []
        if ctx.preserve_rng_state and ctx.had_device_in_fwd:
            rng_devices = ctx.fwd_devices
        with _fork_rng(ctx.preserve_rng_state, rng_devices, ctx.device_type):
            if ctx.preserve_rng_state:
                ptcore.set_rng_state(ctx.fwd_cpu_state)
                if ctx.had_device_in_fwd:
                    set_device_states(ctx.fwd_devices, ctx.fwd_device_states,
                                      device_type=ctx.device_type)
            detached_inputs = detach_variable(tuple(inputs))
            with ptcore.enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, _TensorBase):
            outputs = (outputs,)
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], _TensorBase) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True,"
                               " this checkpoint() is not necessary")
        ptcore.autograd.backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, _TensorBase) else None
                      for inp in detached_inputs)
        return (None, None) + grads


def noop_context_fn():
    """The default ``context_fn``: two null context managers."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be "
    "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
    "without use_reentrant will raise an exception. use_reentrant=False is "
    "recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")

_USE_REENTRANT_WARNING_SEQ = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
    "parameter should be passed explicitly. "
    "In version 2.9 we will raise an exception if use_reentrant "
    "is not passed. use_reentrant=False is "
    "recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True,
               **kwargs):
    """Checkpoint a model or part of a model: run ``function(*args, **kwargs)``
    without keeping the activations it saves for backward, and recompute
    them in backward.

    Parameters
    ----------
    function : callable
        The region to run (a module or function).
    *args
        Its positional inputs (tensors and other values).
    use_reentrant : bool, optional
        Which variant (see the module docstring).  Not passing it warns, as
        PyTorch 2.13, and means ``True``.  ``False`` is recommended: it
        supports :func:`ptcore.autograd.grad`, keyword arguments and inputs
        that do not require grad.
    context_fn : callable, optional
        ``use_reentrant=False`` only: returns two context managers, under
        which the forward and the recomputation run.
    determinism_check : str, optional
        ``"default"`` compares shape, dtype and device of every recomputed
        tensor with the original's (:class:`CheckpointError` on mismatch);
        ``"none"`` skips that check.
    debug : bool, optional
        Accepted for compatibility; ptcore records no operator trace, so the
        errors carry no extra log.
    early_stop : bool, optional
        Stop the recomputation as soon as every needed tensor is recomputed.
    preserve_rng_state : bool, optional (keyword)
        Restore the RNG state of the forward for the recomputation (default
        ``True``).
    **kwargs
        Keyword arguments of ``function`` (``use_reentrant=False`` only).

    Returns
    -------
    The output of ``function``.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(
        function, preserve, context_fn, determinism_check, debug, early_stop, *args, **kwargs)
    next(gen)       # pre-forward
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(
                "torch.utils.checkpoint: the forward context provided by "
                "context_fn suppressed an exception raised during the "
                "checkpointed forward. This is not supported because "
                "checkpoint cannot return a value for a failed forward.") from stop
        raise
    try:
        next(gen)   # post-forward
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield "
                         "exactly twice, but it yielded more than twice.")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequential model: split ``functions`` into ``segments``
    chunks and checkpoint every chunk but the last.

    Parameters
    ----------
    functions : Sequential or list of callables
        The model, run in order.
    segments : int
        Number of chunks.
    input : Tensor
        The input of the first function.
    use_reentrant : bool, optional
        As for :func:`checkpoint` (not passing it warns and means ``True``).
    preserve_rng_state : bool, optional (keyword)
        As for :func:`checkpoint`.

    Returns
    -------
    The output of the last function.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING_SEQ, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---------------------------------------------------------------------------
# the non-reentrant variant (PyTorch's design: saved tensors hooks; see the
# notes on nestable checkpoint in torch/utils/checkpoint.py)
# ---------------------------------------------------------------------------

def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. "
                             "Please report this bug by filing an issue to PyTorch.")


_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Context manager setting whether non-reentrant checkpoints created
    inside it stop their recomputation early (overrides ``early_stop``)."""
    global _enable_checkpoint_early_stop
    try:
        prev = _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class _Handle:
    pass


class _Holder:
    def __init__(self):
        self.handles = {}


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


class CheckpointError(RuntimeError):
    """Raised when the recomputation of a checkpointed region does not
    reproduce the tensors saved by its forward."""


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        # per graph task: handle -> recomputed tensor (cleared with the holder)
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # saved as saved tensors: an enclosing checkpoint manages them (nesting)
        self.saved_args = [SavedTensor(arg) if isinstance(arg, _TensorBase) else arg
                           for arg in args]

    def get_inputs(self):
        return [arg.unpack() if isinstance(arg, SavedTensor) else arg
                for arg in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if not len(self.weak_holders) == self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")
        nb_meta_different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(gid in holder.handles)
            _internal_assert(holder.handles[gid] is not None)
            _internal_assert(holder.handles[gid] in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_x = self.recomputed[gid][holder.handles[gid]]
            if x_meta != self.metadata_fn(recomputed_x):
                nb_meta_different.append((idx, x_meta, self.metadata_fn(recomputed_x)))
        if len(nb_meta_different) > 0:
            mismatched_tensors = ""
            for idx, x_meta, recomputed_meta in nb_meta_different:
                mismatched_tensors += (f"tensor at position {idx}:\n"
                                       f"saved metadata: {x_meta}\n"
                                       f"recomputed metadata: {recomputed_meta}\n")
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched_tensors}.\n"
                f"{_debug_tip_msg}")


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    pass


class _recomputation_hook(saved_tensors_hooks):
    """Hooks active while a frame is recomputed: each saved tensor is the
    recomputed value of the placeholder with the same position."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            target_frame = target_frame_ref()
            _internal_assert(target_frame is not None)
            recomp_idx = target_frame.recomp_counter[gid]
            target_frame.recomp_counter[gid] += 1
            if recomp_idx >= len(target_frame.weak_holders):
                _internal_assert(not target_frame.early_stop)
                if not target_frame.forward_completed:
                    # backward inside the checkpointed forward, without early stop
                    target_frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n"
                    f"{_debug_tip_msg}")
            holder = target_frame.weak_holders[recomp_idx]()
            # the holder is gone when its node was already run (and freed)
            if holder is not None:
                _internal_assert(holder.handles.get(gid, None) is None)
                holder.handles[gid] = _Handle()
                target_frame.recomputed[gid][holder.handles[gid]] = x
            if target_frame.early_stop and target_frame.recomp_counter[gid] == len(
                    target_frame.weak_holders):
                raise _StopRecomputationError
            return x

        def unpack_hook(x):
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):
    """Hooks of the checkpointed forward: every saved tensor becomes a
    :class:`_Holder`; the first unpack in a backward pass recomputes."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with ptcore.no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _graph._current_graph_task_id()
            if gid == -1:
                # unpacked outside a backward pass
                gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), ptcore.enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                    "make sure to do so only once. Otherwise please open an issue with details "
                    "on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_hook_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


# ---------------------------------------------------------------------------
# selective activation checkpointing (SAC): a policy chooses the ops whose
# outputs the forward keeps; the recomputation takes those from the cache
# ---------------------------------------------------------------------------

class SelectiveCheckpointContext:
    """What a selective checkpointing policy is told besides the op: the
    policy runs in the forward only, so ``is_recompute`` is always ``False``
    (kept for compatibility, as in PyTorch 2.13); ``op_output`` is the op's
    output.

    Parameters
    ----------
    is_recompute : bool
    op_output : optional
    """

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether selective checkpointing keeps an op's output.

    ``MUST_SAVE``/``PREFER_SAVE``: the forward keeps the output and the
    recomputation does not run the op again.  ``MUST_RECOMPUTE``/
    ``PREFER_RECOMPUTE``: the op runs again in the recomputation.
    ``MUST_CPU_OFFLOAD``/``PREFER_CPU_OFFLOAD`` are recomputed in eager mode
    (as PyTorch's, whose offloading is a compiler feature).  ``MUST_*`` and
    ``PREFER_*`` act alike in eager mode; ``PREFER_*`` lets a compiler decide
    otherwise.
    """
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# ops that the forward and the recomputation may run a different number of
# times (autograd's own detaches of saved tensors)
SAC_IGNORED_OPS = {ptcore.ops.aten.detach.default}

_SAVE_POLICIES = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()
_CONSUMED = object()

_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are "
    "nondeterministic or depend on global state that changed between "
    "forward and backward.")


class _VersionWrapper:
    """A cached output and its version counter at caching time."""

    def __init__(self, val):
        self.val = val
        self.version = val._version if isinstance(val, _TensorBase) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError(
                    "Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _detach_helper(x):
    # detached: no reference cycle through the graph, and the recomputation's
    # autograd records the cached tensor as a new output
    return x.detach() if isinstance(x, _TensorBase) else x


def _tree_map(fn, out):
    return tree_map(fn, out)


def _needs_grad(args, kwargs):
    return ptcore.is_grad_enabled() and any(
        isinstance(a, _TensorBase) and a.requires_grad for a in tree_leaves((args, kwargs)))


class _CachingTorchDispatchMode(TorchDispatchMode):
    """The forward's mode: runs each op, asks the policy, keeps the outputs
    of those to save (per op, by call index)."""

    def __init__(self, policy_fn, storage):
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter = defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE_POLICIES:
            self.storage[func][idx] = _tree_map(lambda x: _VersionWrapper(_detach_helper(x)),
                                                out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """The recomputation's mode: an op whose output was kept returns it
    (once) instead of running; the others run."""

    def __init__(self, policy_fn, storage, allow_cache_entry_mutation=False):
        # policy_fn is accepted and ignored, as PyTorch's
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter = defaultdict(int)

    def __enter__(self):
        # a second backward (retain_graph) finds the entries consumed
        self.func_counter.clear()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in "
                               f"storage. {_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward "
                               f"but not found in storage. {_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once "
                "on any region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        out = _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)
        if kernel_records_autograd(func) and _needs_grad(args, kwargs):
            # ptcore records this op's autograd inside its kernel (a view, a
            # composite such as nn.functional.linear): the cached output would
            # be left out of the graph, so the op runs again
            return func(*args, **kwargs)
        return out


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The two contexts of selective activation checkpointing, for the
    ``context_fn`` of :func:`checkpoint` (``use_reentrant=False``).

    Parameters
    ----------
    policy_fn_or_list : callable or list of OpOverload
        ``policy(ctx, op, *args, **kwargs)`` returning a
        :class:`CheckpointPolicy` (or a bool: ``True`` is ``MUST_SAVE``) for
        each op call of the forward, ``ctx`` a
        :class:`SelectiveCheckpointContext`; or a list of ops
        (``ptcore.ops.aten.mm.default``), saved, every other op recomputed.
        The ops are those a :class:`~ptcore.utils._python_dispatch.TorchDispatchMode`
        sees: ptcore's public ops (``nn.functional.linear`` is
        ``aten.linear.default``).
    allow_cache_entry_mutation : bool, optional
        Whether a cached output may be modified in place before the
        recomputation uses it (by default that raises ``RuntimeError``).

    Returns
    -------
    (TorchDispatchMode, TorchDispatchMode)
        The forward's context and the recomputation's.

    Raises
    ------
    ValueError
        A list holding something other than an ``OpOverload``.
    TypeError
        Neither a callable nor a list.

    Examples
    --------
    >>> import functools
    >>> import ptcore
    >>> from ptcore.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
    >>> x = ptcore.randn(4, 4, requires_grad=True)
    >>> ctx = functools.partial(create_selective_checkpoint_contexts, [ptcore.ops.aten.mm.default])
    >>> y = checkpoint(lambda a: ptcore.mm(a, a).sin(), x, use_reentrant=False, context_fn=ctx)
    >>> y.sum().backward()
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload."
                         "For example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         ) if isinstance(op, OpOverloadPacket) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {extra}")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True,
                                            context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE,
                                            debug=False, early_stop=True, *args, **kwargs):
    """Pre-forward (first ``next``) and post-forward (second ``next``)
    logic of non-reentrant checkpointing around ``fn(*args, **kwargs)``."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check in _allowed_determinism_checks_to_fns:
        metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    else:
        raise ValueError(
            "determinism_check should be one of "
            f"{list(_allowed_determinism_checks_to_fns.keys())}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if preserve_rng_state:
        fwd_cpu_state, had_device_in_fwd, fwd_devices, fwd_device_states, device_type = \
            _stash_rng(args)
    else:
        device_type = _infer_device_type(*args)
        had_device_in_fwd = False

    def recompute_fn(*inputs):
        rng_devices = []
        if preserve_rng_state and had_device_in_fwd:
            rng_devices = fwd_devices
        with _fork_rng(preserve_rng_state, rng_devices, device_type):
            if preserve_rng_state:
                ptcore.set_rng_state(fwd_cpu_state)
                if had_device_in_fwd:
                    set_device_states(fwd_devices, fwd_device_states, device_type=device_type)
            with recompute_context:
                fn(*inputs, **kwargs)

    new_frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None
        else early_stop,
        unpack_error_cb, metadata_fn)

    if not ptcore.is_grad_enabled():
        yield
        return

    new_frame.save_inputs(*args)
    forward_context_suppressed_exc = False
    with _checkpoint_hook(new_frame), forward_context:
        try:
            yield
        except BaseException:
            forward_context_suppressed_exc = True
            raise
    if forward_context_suppressed_exc:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by "
            "context_fn suppressed an exception raised during the "
            "checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward.")
    new_frame.forward_completed = True
    if preserve_rng_state and not had_device_in_fwd and _device_rng_ready(device_type):
        raise RuntimeError(
            "PyTorch's device state was initialized in the forward pass "
            "of a Checkpoint, which is not allowed. Please open an issue "
            "if you need this feature.")
    return
