"""``ptcore.utils._python_dispatch`` (``torch.utils._python_dispatch``):
dispatch-level modes that see every op's kernel call below autograd, and the
helpers of tensor subclasses with ``__torch_dispatch__`` (wrapper tensors).
Their ``func`` is ``ptcore.ops.aten.<op>.<overload>``, callable outside the mode
too (:mod:`ptcore._ops_namespace` makes aten's ops callable)."""
import contextlib

from ptcore import _ops_namespace  # noqa: F401
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch.python_dispatch import (  # noqa: F401
    OpOverload, TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack,
    _pop_mode_temporarily, modes_on as _modes_on,
)
from ptcore.tensor import Tensor

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_pop_mode_temporarily",
           "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
           "transform_subclass", "return_and_correct_aliasing", "is_in_torch_dispatch_mode",
           "any_torch_dispatch_mode_on_stack", "_disable_current_modes"]


def is_in_torch_dispatch_mode(include_infra_modes=True):
    """Whether a ``TorchDispatchMode`` is active on this thread."""
    return _modes_on()


def any_torch_dispatch_mode_on_stack(*, include_pre_dispatch=False, include_infra_modes=True):
    """Whether a ``TorchDispatchMode`` is on this thread's stack."""
    return bool(_get_current_dispatch_mode_stack())


@contextlib.contextmanager
def _disable_current_modes():
    """Run the block with this thread's dispatch modes off (yields them)."""
    stack = _get_current_dispatch_mode_stack()
    with contextlib.ExitStack() as es:
        for _ in stack:
            es.enter_context(_pop_mode_temporarily())
        yield stack


def _has_flatten_protocol(cls):
    return callable(getattr(cls, "__tensor_flatten__", None)) and \
        callable(getattr(cls, "__tensor_unflatten__", None))


def is_traceable_wrapper_subclass(t):
    """Whether ``t`` is an instance of a Tensor subclass with ``__tensor_flatten__`` and
    ``__tensor_unflatten__`` (the wrapper-subclass protocol)."""
    return isinstance(t, Tensor) and type(t) is not Tensor and _has_flatten_protocol(type(t))


def is_traceable_wrapper_subclass_type(t):
    """Whether class ``t`` is such a Tensor subclass."""
    return isinstance(t, type) and issubclass(t, Tensor) and t is not Tensor and \
        _has_flatten_protocol(t)


def transform_subclass(t, callback, outer_size=None, outer_stride=None):
    """A new instance of wrapper subclass ``t``'s class from ``callback(name, inner)`` of
    each inner tensor ``__tensor_flatten__`` names (torch's)."""
    outer_size = t.size() if outer_size is None else outer_size
    outer_stride = t.stride() if outer_stride is None else outer_stride
    attrs, ctx = t.__tensor_flatten__()
    inner = {a: callback(a, getattr(t, a)) for a in attrs}
    sub = type(t).__tensor_unflatten__(inner, ctx, outer_size, outer_stride)
    if tuple(sub.shape) != tuple(outer_size):
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to "
                             f"have shape equal to {tuple(outer_size)}, but got: "
                             f"{tuple(sub.shape)}")
    if tuple(sub.stride()) != tuple(outer_stride):
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to "
                             f"have stride equal to {tuple(outer_stride)}, but got: "
                             f"{tuple(sub.stride())}")
    return sub


def return_and_correct_aliasing(func, args, kwargs, out):
    """What a wrapper subclass's ``__torch_dispatch__`` returns for ``func``: ``out``,
    except that an in-place or ``out=`` op returns the argument it wrote (as the op
    itself does), one per written return (torch's)."""
    schema = getattr(func, "_schema", None)
    if schema is None or not any(r.alias_info is not None and r.alias_info.is_write
                                 for r in schema.returns):
        return out
    values, _ = _op_schema.bind(schema, tuple(args), dict(kwargs or {}))
    written = {}
    for a in schema.arguments:
        if a.alias_info is not None and a.alias_info.is_write:
            for s in a.alias_info.before_set:
                written[s] = values[a.name]
    outs = []
    for k, r in enumerate(schema.returns):
        if r.alias_info is not None and r.alias_info.is_write and \
                next(iter(r.alias_info.before_set)) in written:
            outs.append(written[next(iter(r.alias_info.before_set))])
        else:
            outs.append(out[k] if isinstance(out, (tuple, list)) else out)
    return outs[0] if len(schema.returns) == 1 else tuple(outs)
