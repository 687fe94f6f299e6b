"""``torch._subclasses.fake_tensor``: tensors with sizes, strides, a dtype and a
device but no data, and the mode that makes every op on them derive only its
results' metadata.

A :class:`FakeTensor` is a wrapper subclass (``Tensor._make_wrapper_subclass``)
around a tensor on the ``meta`` device, which carries the geometry; it reports the
device of the tensor it stands for.  Inside a :class:`FakeTensorMode` every op
sees, below autograd, its arguments' meta tensors and runs ptcore's meta kernels
(:mod:`ptcore._meta`): the results are new fake tensors on the device the op would
have used (its tensors' common device; a factory's ``device=``).  Autograd records
above as for real tensors, so a backward gives fake gradients.  An op whose result
depends on the data (``item``, ``nonzero``, a Python ``bool`` of a tensor) raises
:class:`DataDependentOutputException` / :class:`DynamicOutputShapeException`.

>>> import ptcore
>>> from ptcore._subclasses.fake_tensor import FakeTensorMode
>>> with FakeTensorMode() as mode:
...     x = mode.from_tensor(ptcore.ones(8, 3))
...     y = ptcore.nn.functional.linear(x, ptcore.empty(5, 3))
>>> y
FakeTensor(..., size=(8, 5))
"""
import weakref

import ptcore
from ptcore._dispatch import op_overload as _ov
from ptcore._dispatch import table as _table
# (installs op_overload's resolver, which _public_op runs: without it a backward kernel run
# as an aten op fell to its CPU kernel on meta tensors, depending on whether the program
# had touched ptcore.ops first)
from ptcore import _ops_namespace  # noqa: F401
from ptcore._dispatch.python_dispatch import TorchDispatchMode, _AtenKernel, _IndexOp
from ptcore._dispatch.torch_function import _disabled_torch_function_impl
from ptcore._tensor import _TensorBase
from ptcore.tensor import Tensor

__all__ = ["DataDependentOutputException", "DynamicOutputShapeException", "FakeTensor",
           "FakeTensorMode", "UnsupportedFakeTensorException", "is_fake", "maybe_get_fake_mode"]


class UnsupportedFakeTensorException(RuntimeError):
    """An op fake tensors cannot run (ptcore has no meta kernel for it)."""


class DynamicOutputShapeException(RuntimeError):
    """An op whose output shape depends on the data (``nonzero``, ``unique`` ...)."""


class DataDependentOutputException(RuntimeError):
    """An op whose result is a value of the data (``item``, ``tolist``, ``bool``)."""


# ops whose output's shape depends on the values (torch's dynamic-output-shape tag)
_DYNAMIC_SHAPE = frozenset("""nonzero argwhere unique unique_consecutive unique_dim
    masked_select repeat_interleave bincount""".split())
# ops whose result is data itself
_DATA_RESULT = frozenset("""item tolist _local_scalar_dense __bool__ __int__ __float__
    __index__ equal allclose numpy""".split())


class FakeTensor(Tensor):
    """A tensor of a :class:`FakeTensorMode`: geometry, dtype and device, no data."""

    __torch_function__ = _disabled_torch_function_impl

    @staticmethod
    def __new__(cls, fake_mode, elem, device, constant=None):
        if not isinstance(elem, _TensorBase) or elem.device.type != "meta":
            raise TypeError(f"FakeTensor: elem must be a tensor on the meta device, got "
                            f"{getattr(elem, 'device', type(elem).__name__)}")
        r = Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                          storage_offset=elem.storage_offset(),
                                          dtype=elem.dtype, device=device,
                                          requires_grad=elem.requires_grad)
        r._fake_elem = elem
        r.fake_mode = fake_mode
        r.fake_device = r.device
        r.constant = constant
        return r

    def __repr__(self, *, tensor_contents=None):
        parts = [f"size={tuple(self.shape)}"]
        if self.device.type != "cpu":
            parts.insert(0, f"device='{self.device}'")
        if self.dtype is not ptcore.get_default_dtype():
            parts.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            parts.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            parts.append("requires_grad=True")
        return f"FakeTensor(..., {', '.join(parts)})"

    __str__ = __repr__

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # a fake tensor used outside its mode: the op runs in that mode
        mode = _mode_of(args, kwargs)
        if mode is None:
            return NotImplemented
        with mode:
            return func(*args, **(kwargs or {}))


def _tensors(args, kwargs):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, _TensorBase):
            yield a
        elif type(a) in (list, tuple):
            for b in a:
                if isinstance(b, _TensorBase):
                    yield b


def _mode_of(args, kwargs):
    for t in _tensors(args, kwargs):
        if isinstance(t, FakeTensor):
            return t.fake_mode
    return None


def _to_meta(t):
    """A meta tensor with ``t``'s geometry and dtype (no data is read)."""
    m = ptcore.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")
    return m


class FakeTensorMode(TorchDispatchMode):
    """Inside it, ops make :class:`FakeTensor` results from fake arguments (and factory
    functions fake tensors) without computing; ``from_tensor`` converts a real tensor."""

    def __init__(self, *, allow_fallback_kernels=True, allow_non_fake_inputs=False,
                 shape_env=None, static_shapes=None, export=False):
        super().__init__()
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = shape_env
        self.static_shapes = True if static_shapes is None else static_shapes
        self.export = export
        # id(real tensor) -> (a weak reference to it, its fake tensor); tensors compare
        # elementwise, so no dict keyed by the tensors themselves
        self._memo = {}

    # -- converting -----------------------------------------------------------
    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None,
                    trace=True):
        """The fake tensor standing for real tensor ``tensor`` (the same one each time)."""
        if isinstance(tensor, FakeTensor):
            if tensor.fake_mode is not self:
                raise AssertionError("FakeTensorMode.from_tensor: the tensor belongs to "
                                     "another FakeTensorMode")
            return tensor
        if not isinstance(tensor, _TensorBase):
            raise TypeError(f"from_tensor expects a tensor, got {type(tensor).__name__}")
        got = self._memo.get(id(tensor))
        if got is not None and got[0]() is tensor:
            return got[1]
        meta = _to_meta(tensor)
        if tensor.requires_grad:
            meta.requires_grad_(True)
        fake = FakeTensor(self, meta, tensor.device)
        key = id(tensor)
        memo = self._memo
        memo[key] = (weakref.ref(tensor, lambda _, k=key: memo.pop(k, None)), fake)
        return fake

    # -- running ops ----------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = func.overloadpacket.__name__
        if name in _DATA_RESULT:
            raise DataDependentOutputException(str(func))
        if name in _DYNAMIC_SHAPE:
            raise DynamicOutputShapeException(str(func))
        tensors = list(_tensors(args, kwargs))
        if not tensors and name == "tensor":
            # a constant made inside the mode (torch.tensor([...])): fake, keeping its values
            real = func(*args, **kwargs)
            fake = self.from_tensor(real)
            fake.constant = real
            return fake
        fakes = {}
        devices = []
        for t in tensors:
            if isinstance(t, FakeTensor):
                if t.fake_mode is not self:
                    raise AssertionError(f"{func}: a FakeTensor of another FakeTensorMode")
            elif self.allow_non_fake_inputs:
                t = self.from_tensor(t)
            else:
                raise AssertionError(
                    "Please convert all Tensors to FakeTensors first or instantiate "
                    f"FakeTensorMode with 'allow_non_fake_inputs'. Found in {func}")
            fakes[id(t._fake_elem)] = t
            devices.append(t.fake_device)
        device = _common_device(devices, func)
        if not tensors:
            device = ptcore.device(kwargs.get("device") or ptcore.get_default_device())
            if "device" in {a.name for a in func._schema.arguments}:
                kwargs["device"] = "meta"
            kwargs.pop("pin_memory", None)

        def unwrap(a):
            if isinstance(a, FakeTensor):
                return a._fake_elem
            if isinstance(a, _TensorBase):
                return self.from_tensor(a)._fake_elem
            if type(a) in (list, tuple):
                return type(a)(unwrap(b) for b in a)
            return a
        margs = [unwrap(a) for a in args]
        mkwargs = {k: unwrap(v) for k, v in kwargs.items()}
        impl = _public_op(func)
        if impl is None:
            raise UnsupportedFakeTensorException(f"{func}: ptcore has no implementation to "
                                                 "derive its result's metadata from")
        try:
            with ptcore.no_grad():      # (autograd records above, on the fake tensors)
                out = impl(*margs, **mkwargs)
        except NotImplementedError as e:
            msg = str(e)
            if "values of meta tensors" in msg or "depends on the values" in msg:
                raise DataDependentOutputException(f"{func}: {msg}") from None
            raise UnsupportedFakeTensorException(f"{func}: {msg}") from None

        def wrap(o):
            if isinstance(o, _TensorBase):
                if id(o) in fakes:          # an in-place op returns its argument
                    return fakes[id(o)]
                if o.device.type != "meta":
                    return self.from_tensor(o)
                return FakeTensor(self, o, device)
            if type(o) in (list, tuple):
                return type(o)(wrap(b) for b in o)
            return o
        return wrap(out)


def _public_op(func):
    """The public callable of the op a mode is handling as ``func`` (its call with meta
    tensors passes the device layer, whose meta fallback derives the results); for a
    step of basic indexing, its kernel (a view: it reads no data)."""
    for f, opdef, raw in reversed(_ov.bound_kernels()):
        if f is func:
            if isinstance(opdef, _IndexOp):
                return raw
            if isinstance(opdef, _AtenKernel):
                # a backward kernel run as an aten op: its metadata rule, else ptcore's
                # aten op of that name (public ops: the meta device derives it)
                if opdef.meta is not None:
                    return opdef.meta
                r = _ov.resolver[0]
                return (r(func) if r is not None else None) or raw
            try:
                return _table.entry(opdef.name, opdef.namespace)
            except KeyError:
                return None
    return func._impl


def _common_device(devices, func):
    """The device of an op's fake tensors: the one that is not a 0-d CPU tensor's."""
    found = None
    for d in devices:
        if found is None or found.type == "cpu" and d.type != "cpu":
            found = d
        elif d != found and d.type != "cpu":
            raise RuntimeError(f"Unhandled FakeTensor Device Propagation for {func}, found two "
                               f"different devices {found}, {d}")
    return found


def is_fake(x):
    """Whether ``x`` is a :class:`FakeTensor`.

    >>> import ptcore
    >>> from ptcore._subclasses.fake_tensor import is_fake
    >>> is_fake(ptcore.ones(2)), is_fake(ptcore.empty(2, device="meta"))
    (False, False)
    """
    return isinstance(x, FakeTensor)


def maybe_get_fake_mode(t):
    """The :class:`FakeTensorMode` ``t`` belongs to, or None for any other object."""
    return t.fake_mode if isinstance(t, FakeTensor) else None
