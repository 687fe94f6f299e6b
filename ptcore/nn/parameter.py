"""``ptcore.nn.Parameter`` and ``ptcore.nn.Buffer`` (as ``torch.nn.parameter``)."""
from collections import OrderedDict

import ptcore
from ptcore._ops.creation import _require_grad
from ptcore.tensor import Tensor, _AUTOGRAD_ATTRS
from ptcore._tensor import _TensorBase, root_name
from ptcore._dispatch.torch_function import _disabled_torch_function_impl

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer",
           "UninitializedBuffer", "UninitializedTensorMixin"]


def _new_subclass_instance(cls, data, requires_grad):
    # A ``cls`` instance sharing ``data``'s storage.  ``_TensorBase.__new__`` is the
    # C-level allocator, so no Python ``__new__`` runs (a subclass's own
    # ``__new__`` is usually what calls this, with arguments of its own).
    t = _TensorBase.__new__(cls)
    ptcore._C._set_data(t, data)
    if requires_grad:
        _require_grad(t)
    return t


class _ParameterMeta(type(Tensor)):
    """Metaclass of Parameter (torch's ``torch.nn.parameter._ParameterMeta``, which libraries
    import to build their own parameter types): ``isinstance(t, Parameter)`` is true for
    tensors flagged ``_is_param``, as torch.  Construction is each class's ``__new__``, so
    subclasses may define their own ``__new__`` calling ``super().__new__(cls, data,
    requires_grad)`` (bitsandbytes' ``Params4bit``)."""

    def __instancecheck__(self, instance):
        if self is Parameter and ptcore.is_tensor(instance) and \
                getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class _BufferMeta(type(Tensor)):
    """Metaclass of Buffer (torch's ``_BufferMeta``): ``isinstance(t, Buffer)`` is true for
    tensors flagged ``_is_buffer``."""

    def __instancecheck__(self, instance):
        if self is Buffer and isinstance(instance, _TensorBase) and \
                getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that is a module parameter (``torch.nn.Parameter``).

    Assigning a ``Parameter`` as a :class:`Module` attribute registers it in the
    module's parameters.  The parameter shares storage with ``data``.

    Parameters
    ----------
    data : Tensor, optional
        Parameter tensor (default: an empty float tensor).
    requires_grad : bool, optional
        Whether the parameter requires gradient (default ``True``; not affected
        by ``no_grad``).
    """

    __torch_function__ = _disabled_torch_function_impl     # ops on it return plain Tensors

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ptcore.empty(0)
        if not isinstance(data, _TensorBase) and ptcore.is_tensor(data):
            # a sparse tensor stays itself (a leaf on the same memory), flagged as a parameter
            t = data.detach().requires_grad_(requires_grad)
            t._is_param = True
            return t
        if not isinstance(data, _TensorBase):
            raise TypeError(
                f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        if type(data) is not Tensor and not isinstance(data, Parameter):
            # a custom tensor subclass stays itself, flagged as a parameter (torch's path)
            t = data.detach().requires_grad_(requires_grad)
            t._is_param = True
            return t
        return _new_subclass_instance(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(memory_format=ptcore.preserve_format), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        state = {k: v for k, v in self.__dict__.items() if k not in _AUTOGRAD_ATTRS}
        hooks = OrderedDict()
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, hooks))
        return (_rebuild_parameter_with_state, (self.data, self.requires_grad, hooks, state))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """Unpickle a Parameter (``torch._utils._rebuild_parameter``)."""
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """Unpickle a Parameter that carries Python attributes."""
    param = Parameter(data, requires_grad)
    if state:
        if not isinstance(state, dict):
            raise TypeError("corrupt Parameter pickle: state must be a dict")
        param.__dict__.update(state)
    return param


class UninitializedTensorMixin:
    """Behaviour shared by uninitialized (lazy) parameters and buffers."""

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor a shape (and optionally device/dtype) and turn it into ``cls_to_become``."""
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = ptcore.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become
        ptcore._C._tf_recount(self)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (used by lazy modules)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = ptcore.empty(0, device=device, dtype=dtype)
        return _new_subclass_instance(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that is a module buffer (``torch.nn.Buffer``).

    Assigning a ``Buffer`` as a :class:`Module` attribute registers it as a
    buffer.  ``Buffer(data)`` returns a plain tensor sharing ``data``'s storage,
    flagged as a buffer.

    Parameters
    ----------
    data : Tensor, optional
        Buffer tensor.
    persistent : bool, optional
        Whether the buffer is part of the module's ``state_dict`` (default ``True``).
    """

    __torch_function__ = _disabled_torch_function_impl     # ops on it return plain Tensors

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ptcore.empty(0)
        if not isinstance(data, _TensorBase):
            raise TypeError(f"Buffer(): data must be a Tensor, got {type(data).__name__}")
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (used by lazy modules)."""

    cls_to_become = Tensor
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = ptcore.empty(0, device=device, dtype=dtype)
        ret = _new_subclass_instance(cls, data, requires_grad)
        ret.persistent = persistent
        ret._is_buffer = True
        return ret


#: The tensor classes named as torch's ``torch.nn.parameter.X`` under ptcore.as_torch (their
#: ``__module__``; see ptcore.as_torch._present_as_torch), else ``ptcore.nn.parameter.X``.
CLASSES_NAMED_AS_TORCH = ("Parameter", "UninitializedParameter", "Buffer",
                          "UninitializedBuffer")
for _name in CLASSES_NAMED_AS_TORCH:
    globals()[_name].__module__ = f"{root_name()}.nn.parameter"
del _name
