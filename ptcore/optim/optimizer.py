"""Base class of the optimizers (``torch.optim.Optimizer``)."""
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

from collections.abc import Callable
from typing import Any, TypeAlias, Union

import ptcore
from ptcore._dispatch import profiling as _profiling
from ptcore._dispatch.device import has_loop
from ptcore._ops.kernels._optim import one_pass_operands as _one_pass_operands
from ptcore.autograd.grad_mode import is_grad_enabled as _is_grad_enabled
from ptcore.nn.parameter import Parameter
from ptcore.tensor import Tensor, _is_sparse_tensor
from ptcore.utils._foreach_utils import (  # (torch's home of these)
    _PRIVATEUSE1, _get_foreach_kernels_supported_devices, _get_fused_kernels_supported_devices,
    _group_tensors_by_device_and_dtype)

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]


class _RequiredParameter:
    """Singleton marking a required optimizer option."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class RemovableHandle:
    """A handle that removes a hook from the dict it was registered in.

    Parameters
    ----------
    hooks_dict : dict
        The dict the hook lives in.
    """

    next_id = 0

    def __init__(self, hooks_dict):
        import weakref
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self):
        """Remove the hook."""
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a pre hook common to all optimizers.

    ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``.

    Returns
    -------
    RemovableHandle
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs)``.

    Returns
    -------
    RemovableHandle
    """
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _get_value(x):
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x):
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _recorded_or_value(x):
    """A scalar option as a Python number, or the tensor itself where a
    differentiable step records it (it requires grad and grad mode is on):
    torch's SGD, Adam and RAdam differentiate through a tensor ``lr``."""
    x = _to_scalar(x)
    if isinstance(x, Tensor) and not (x.requires_grad and ptcore.is_grad_enabled()):
        return x.item()
    return x


def _get_scalar_dtype(is_fused=None):
    if is_fused:
        return ptcore.float32
    return ptcore.float64 if ptcore.get_default_dtype() == ptcore.float64 else ptcore.float32


# torch.optim.optimizer's type aliases, which optimizers written against torch
# import for their annotations (``params: ParamsT``)
Args: TypeAlias = tuple[Any, ...]
Kwargs: TypeAlias = dict[str, Any]
StateDict: TypeAlias = dict[str, Any]
ParamsT: TypeAlias = Union[Iterable[Tensor], Iterable[dict[str, Any]],
                           Iterable[tuple[str, Tensor]]]
TensorListList: TypeAlias = list[list[Union[Tensor, None]]]
Indices: TypeAlias = list[int]
DeviceDict: TypeAlias = dict[Any, Tensor]
DeviceDtypeDict: TypeAlias = dict[Any, Tensor]
GlobalOptimizerPreHook: TypeAlias = Callable[["Optimizer", Args, Kwargs],
                                             Union[tuple[Args, Kwargs], None]]
GlobalOptimizerPostHook: TypeAlias = Callable[["Optimizer", Args, Kwargs], None]

# the option descriptions torch's optimizers splice into their docstrings
_params_doc = ("params (iterable): iterable of parameters or named_parameters to optimize\n"
               "            or iterable of dicts defining parameter groups. When using "
               "named_parameters,\n            all parameters in all groups should be named")
_foreach_doc = ("foreach (bool, optional): whether the foreach (multi-tensor) implementation "
                "is used (default: None)")
_fused_doc = ("fused (bool, optional): whether the fused implementation is used; float64, "
              "float32, float16 and bfloat16 are supported (default: None)")
_capturable_doc = ("capturable (bool, optional): whether this instance is safe to capture in "
                   "a graph; tensors are capturable only on accelerators (default: False)")
_differentiable_doc = ("differentiable (bool, optional): whether autograd should occur through "
                       "the optimizer step; otherwise step() runs under no_grad (default: False)")
_maximize_doc = ("maximize (bool, optional): maximize the objective with respect to the\n"
                 "            params, instead of minimizing (default: False)")



def _get_capturable_supported_devices(supports_xla=True):
    """The device types on which ``capturable=True`` is allowed (torch's list)."""
    return ["cuda", "xpu", "hpu", _PRIVATEUSE1] + (["xla"] if supports_xla else [])


_PARAMS_STEPS = "params and state_steps"
# what torch's capturable check names, and whether its device list has 'xla',
# for (the for-loop implementation, the foreach implementation)
_CAPTURABLE_MESSAGES = {
    "Adam": ((_PARAMS_STEPS, True), (_PARAMS_STEPS, False)),
    "Adamax": ((_PARAMS_STEPS, True), (_PARAMS_STEPS, False)),
    "Adadelta": ((_PARAMS_STEPS, False), (_PARAMS_STEPS, False)),
    "RMSprop": ((_PARAMS_STEPS, True), (_PARAMS_STEPS, True)),
    "Rprop": ((_PARAMS_STEPS, True), (_PARAMS_STEPS, True)),
    "RAdam": ((_PARAMS_STEPS, True), (_PARAMS_STEPS, False)),
    "NAdam": (("params, mu_products and state_steps", True),
              ("params, mu_products, and state_steps", False)),
    "ASGD": (("params, mus, etas, and state_steps", True),
             ("params, mus, etas, and state_steps", False)),
}


# the optimizers whose foreach implementation refuses ``differentiable=True``
# (torch's ``_multi_tensor_*`` AssertionError): True where it refuses even a
# group without gradients
_FOREACH_NOT_DIFFERENTIABLE = {
    "Adam": False, "Adamax": True, "Adadelta": True, "Adagrad": True, "ASGD": False,
    "NAdam": False, "RAdam": False, "RMSprop": False, "Rprop": False,
}


def _check_capturable(optimizer, group, params):
    """torch's AssertionErrors of a step: ``foreach=True`` with
    ``differentiable=True``, and ``capturable=True`` with parameters on a
    device that cannot be graph-captured (the CPU; the fused implementation
    skips that check)."""
    if group.get("foreach") and group.get("differentiable"):
        for cls in type(optimizer).__mro__:
            if cls.__module__.startswith("ptcore.optim.") \
                    and cls.__name__ in _FOREACH_NOT_DIFFERENTIABLE:
                if params or _FOREACH_NOT_DIFFERENTIABLE[cls.__name__]:
                    raise AssertionError("_foreach ops don't support autograd")
                break
    if not group.get("capturable") or group.get("fused") or not params:
        return
    for cls in type(optimizer).__mro__:
        if cls.__module__.startswith("ptcore.optim.") and cls.__name__ in _CAPTURABLE_MESSAGES:
            what, xla = _CAPTURABLE_MESSAGES[cls.__name__][bool(group.get("foreach"))]
            devices = _get_capturable_supported_devices(xla)
            if any(p.device.type not in devices for p in params):
                raise AssertionError(
                    f"If capturable=True, {what} must be on supported devices: {devices}.")
            return


def _foreach_supported_types():
    return (Tensor, Parameter)


def _default_to_fused_or_foreach(params, differentiable, use_fused=False):
    """``(fused, foreach)``: what an optimizer left at ``foreach=None`` uses, by
    torch's rule (fused only when asked for and every parameter is a plain
    floating tensor on a fused device; else foreach when all are on a foreach
    device; neither when ``differentiable``)."""
    if differentiable:
        return False, False
    types = _foreach_supported_types()
    fused_devices = _get_fused_kernels_supported_devices()
    foreach_devices = _get_foreach_kernels_supported_devices()
    fused = use_fused and all(
        p is None or (type(p) in types and p.device.type in fused_devices
                      and p.is_floating_point())
        for p in params)
    foreach = not fused and all(
        p is None or (type(p) in types and p.device.type in foreach_devices)
        for p in params)
    return fused, foreach


def _device_dtype_check_for_fused(p, cuda_unsupported=False):
    """Raise torch's error unless ``p`` is a floating tensor on a fused device."""
    devices = _get_fused_kernels_supported_devices()
    if cuda_unsupported:
        devices.remove("cuda")
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of "
            f"supported devices: {devices} but {p.dtype} and {p.device.type}")


def _stack_if_compiling(x):
    """``x`` (ptcore does not trace optimizer steps into graphs)."""
    return x


def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    """torch's decorator keeping a functional optimizer out of dynamo: the identity."""
    def wrapper(func):
        return func
    return wrapper


def _scalar_state(p, on_device, value=0.0, is_fused=None):
    """A 0-d per-parameter state scalar (``step``, NAdam's ``mu_product``,
    ASGD's ``mu``): on ``p``'s device when ``on_device`` (as torch, for
    capturable or fused groups), else a CPU tensor."""
    if on_device:
        return ptcore.full((), value, dtype=_get_scalar_dtype(is_fused), device=p.device)
    return ptcore.tensor(value, dtype=_get_scalar_dtype())


def _typename(obj):
    """torch.typename: ``ptcore.FloatTensor`` for a tensor (torch's messages print it)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    if module in (None, "builtins"):
        return name
    return f"{module}.{name}"


def _use_grad_for_differentiable(func):
    """Run ``step`` with grad mode set to the optimizer's ``differentiable`` option."""
    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = ptcore.is_grad_enabled()
        try:
            ptcore.set_grad_enabled(self.defaults["differentiable"])
            return func(self, *args, **kwargs)
        finally:
            ptcore.set_grad_enabled(prev)
    return _use_grad


def _one_pass_ok(op, param, *others):
    """Whether the one-pass update loop ``op`` (``adam_step``, ``sgd_step``)
    applies to ``param`` and its per-parameter tensors (None entries
    skipped): real float32/float64 dense tensors of one dtype, shape and
    device, all contiguous, a device that has the loop, and the update is
    not being recorded (``differentiable=True`` keeps the op chain)."""
    dt = param.dtype
    if dt is not ptcore.float32 and dt is not ptcore.float64:
        return False
    if _is_grad_enabled() or not has_loop(op, param.device.type):
        return False
    return _one_pass_operands(param, others)


def _check_fused_foreach(self, fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_eps_betas_wd(eps, betas, weight_decay):
    """The Adam family's argument checks, with PyTorch's messages."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _step_tensor(value=0.0):
    return ptcore.tensor(float(value), dtype=_get_scalar_dtype())


_STEP_DOC = """Perform a single optimization step.

        Parameters
        ----------
        closure : callable, optional
            A closure that reevaluates the model and returns the loss.
        """


# torch's refusals of sparse gradients (SGD, Adagrad and SparseAdam take them)
_SPARSE_REFUSED = {
    "Adam": "Adam does not support sparse gradients, please consider SparseAdam instead",
    "AdamW": "Adam does not support sparse gradients, please consider SparseAdam instead",
    "RMSprop": "RMSprop does not support sparse gradients",
    "Adadelta": "Adadelta does not support sparse gradients",
    "Adamax": "adamax does not support sparse gradients",
    "NAdam": "NAdam does not support sparse gradients",
    "RAdam": "RAdam does not support sparse gradients",
    "Rprop": "Rprop does not support sparse gradients",
    "ASGD": "ASGD does not support sparse gradients",
    "Adafactor": "Adafactor does not support sparse gradients",
    "LBFGS": "LBFGS does not support sparse gradients",
    "Muon": "Muon does not support sparse gradients",
}
_dense_only_cache = {}


def _dense_only(cls):
    """The error a ptcore optimizer class raises for sparse gradients, or None."""
    try:
        return _dense_only_cache[cls]
    except KeyError:
        pass
    msg = None
    for c in cls.__mro__:
        if c.__module__.startswith("ptcore.optim.") and c.__name__ in _SPARSE_REFUSED:
            msg = _SPARSE_REFUSED[c.__name__]
            break
    _dense_only_cache[cls] = msg
    return msg


def _hooked_step(func):
    """Wrap a subclass's ``step`` so that the step pre/post hooks run around it,
    inside a profiler range ``Optimizer.step#<class>.step`` as in torch."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not _profiling.recording():
            return _run_step(func, args, kwargs)
        ev = _profiling.push_range(f"Optimizer.step#{type(args[0]).__name__}.step")
        try:
            return _run_step(func, args, kwargs)
        finally:
            _profiling.pop_range(ev)
    wrapper.hooked = True
    return wrapper


def _run_step(func, args, kwargs):
    """``func(*args, **kwargs)`` (an optimizer's step) with the step hooks."""
    self = args[0]
    pre = self._optimizer_step_pre_hooks
    if pre or _global_optimizer_pre_hooks:
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), pre.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{func} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}.")
    msg = _dense_only(type(self))
    if msg is not None:
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None and _is_sparse_tensor(g):
                    raise RuntimeError(msg)
    out = func(*args, **kwargs)
    post = self._optimizer_step_post_hooks
    if post or _global_optimizer_post_hooks:
        for post_hook in chain(post.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
    return out


class Optimizer:
    r"""Base class for all optimizers.

    Parameters
    ----------
    params : iterable
        An iterable of tensors, of ``(name, tensor)`` pairs or of dicts (parameter
        groups). Specifies what tensors should be optimized.
    defaults : dict
        Default values of the optimization options (used when a parameter group
        does not specify them).
    """

    OptimizerPreHook: TypeAlias = Callable[[Any, Args, Kwargs], Union[tuple[Args, Kwargs], None]]
    OptimizerPostHook: TypeAlias = Callable[[Any, Args, Kwargs], None]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and step.__doc__ is None:
            step.__doc__ = _STEP_DOC

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._warned_capturable_if_run_uncaptured = True
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be "
                "an iterable of Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]

        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    # torch's step-wrapping machinery: a class's step is wrapped (hooks, profiler range) when
    # its first instance runs Optimizer.__init__, as in torch; wrappers that never call it
    # (accelerate's AcceleratedOptimizer) keep their own step unwrapped
    profile_hook_step = staticmethod(_hooked_step)

    def _patch_step_function(self):
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _hooked_step(type(self).step)

    def _optimizer_step_code(self):
        """Runs after every step (a profiler anchor in torch); nothing here."""

    def _cuda_graph_capture_health_check(self):
        """torch's check for capturable optimizers under graph capture; ptcore
        captures no graphs."""

    _accelerator_graph_capture_health_check = _cuda_graph_capture_health_check

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
        return _group_tensors_by_device_and_dtype(tensorlistlist, with_indices)

    def _upgrade_state(self, flags, tensor_keys=("step",)):
        """``__setstate__`` of an optimizer pickled by an older version: group
        options missing from it get their defaults (``flags``, in order), and
        per-parameter ``tensor_keys`` stored as Python numbers become 0-d
        tensors of the step dtype."""
        for group in self.param_groups:
            for k, v in flags.items():
                group.setdefault(k, v)
        if tensor_keys:
            for s in self.state.values():
                for key in tensor_keys:
                    if key in s and not isinstance(s[key], Tensor):
                        s[key] = _step_tensor(s[key])

    @staticmethod
    def _closure_loss(closure):
        """The loss of ``step(closure)``: the closure re-evaluated with grad enabled."""
        if closure is None:
            return None
        with ptcore.enable_grad():
            return closure()

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- hooks ---------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """Register a hook ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``
        called before :meth:`step`.

        Returns
        -------
        RemovableHandle
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Register a hook ``hook(optimizer, args, kwargs)`` called after :meth:`step`.

        Returns
        -------
        RemovableHandle
        """
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)`` called before :meth:`state_dict`."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict) -> state_dict or None`` called after
        :meth:`state_dict`."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict) -> state_dict or None`` called before
        :meth:`load_state_dict`."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)`` called after :meth:`load_state_dict`."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict ----------------------------------------------------------
    def state_dict(self):
        """Return the state of the optimizer as a dict.

        It has two entries: ``state`` (per-parameter state keyed by integer
        parameter ids) and ``param_groups`` (the groups' options, with the
        parameters replaced by their ids).  The state tensors are not copied.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({
                id(p): i for i, p in enumerate(group["params"], start_index)
                if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        fused = False
        capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=ptcore.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load the optimizer state.

        Parameters
        ----------
        state_dict : dict
            Optimizer state, as returned by :meth:`state_dict`.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])

        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError(
                "loaded state dict contains a parameter group "
                "that doesn't match the size of optimizer's group")

        id_map = dict(zip(
            chain.from_iterable(g["params"] for g in saved_groups),
            chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, (str, bytes)):
                return value
            if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
                # a tensor of another library (e.g. torch): take its data
                return _cast(param, ptcore.from_dlpack(value), param_id, param_groups, key)
            if isinstance(value, Iterable):
                return type(value)(
                    _cast(param, v, param_id=param_id, param_groups=param_groups)
                    for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and steps -------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors.

        Parameters
        ----------
        set_to_none : bool, optional
            Set the grads to None instead of filling them with zeros
            (default: True).
        """
        ev = (_profiling.push_range(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad")
              if _profiling.recording() else None)
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if getattr(g, "grad_fn", None) is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()
        _profiling.pop_range(ev)

    def step(self, closure=None):
        """Perform a single optimization step (to be overridden by subclasses).

        Parameters
        ----------
        closure : callable, optional
            A closure that reevaluates the model and returns the loss.
        """
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a parameter group to the optimizer's ``param_groups``.

        Parameters
        ----------
        param_group : dict
            Specifies the tensors to optimize (``"params"``) with group-specific
            optimization options.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. "
                "Please use a list instead.")
        else:
            if not isinstance(params, Iterable):
                raise TypeError(
                    "optimizer parameters should be an iterable of Tensors, but got "
                    + _typename(params))
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)

        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError(
                    "all optimizer params should be with/without names. "
                    "Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, "
                    "but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or getattr(param, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = (
                    "with names" if "param_names" in param_group else "without names")
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current_group_txt} to the optimizer")

        if not param_set.isdisjoint({id(p) for p in param_group["params"]}):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)


_REAL_OF = None


def _view_as_real(t, *state_and_grads):
    """A real view of a complex tensor (real and imaginary parts interleaved).

    Called with lists, as torch.optim.optimizer's ``_view_as_real(params,
    *state_and_grads)``: replaces each complex parameter, and the entries at
    its index in the other lists, by ``view_as_real`` in place.
    """
    if isinstance(t, list):
        for i, p in enumerate(t):
            if p.is_complex():
                t[i] = ptcore.view_as_real(p)
                for other in state_and_grads:
                    other[i] = ptcore.view_as_real(other[i])
        return None
    global _REAL_OF
    if _REAL_OF is None:
        _REAL_OF = {ptcore.complex64: ptcore.float32, ptcore.complex128: ptcore.float64}
    if t.dim() == 0:
        t = t.reshape(1)
    return t.view(_REAL_OF[t.dtype])


# ptcore's fused three-operand kernels (lerp_, addcmul_, addcdiv_) are much
# slower per element than its binary kernels; above this size the updates are
# composed of binary ops (same formulas as PyTorch's kernels), below it the
# single fused call has less Python overhead.
_FUSED_MAX_NUMEL = 2048


def _lerp_(a, b, w):
    """``a.lerp_(b, w)`` for a Python float ``w``."""
    if a.numel() < _FUSED_MAX_NUMEL:
        return a.lerp_(b, w)
    if -0.5 < w < 0.5:
        return a.add_(b - a, alpha=w)
    d = b - a
    return ptcore.sub(b, d, alpha=1 - w, out=a)


def _addcmul_(a, t1, t2, value):
    """``a.addcmul_(t1, t2, value=value)``."""
    if a.numel() < _FUSED_MAX_NUMEL:
        return a.addcmul_(t1, t2, value=value)
    return a.add_(t1 * t2, alpha=value)


def _addcdiv_(a, t1, t2, value):
    """``a.addcdiv_(t1, t2, value=value)``."""
    if a.numel() < _FUSED_MAX_NUMEL:
        return a.addcdiv_(t1, t2, value=value)
    return a.add_(t1 / t2, alpha=value)
