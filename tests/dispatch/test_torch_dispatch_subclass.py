"""Tensor subclasses with ``__torch_dispatch__`` (torch's Python dispatch key) and
``Tensor._make_wrapper_subclass``, against torch: the wrapper-tensor pattern of
torch's docs and of libraries (PyG's EdgeIndex, torchao's quantized tensors), below
autograd, with modes, and the kernel layer switching itself off again."""
import gc

import numpy as np
import pytest

import ptcore
from ptcore._dispatch import python_dispatch
from ptcore.utils import _python_dispatch as pd

torch = pytest.importorskip("torch")
from torch.utils import _python_dispatch as td  # noqa: E402


def _wrapper_class(lib, log):
    tree_map = __import__(f"{lib.__name__}.utils._pytree", fromlist=["tree_map"]).tree_map

    class Wrapper(lib.Tensor):
        @staticmethod
        def __new__(cls, elem, requires_grad=None):
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
                dtype=elem.dtype, layout=elem.layout, device=elem.device,
                requires_grad=elem.requires_grad if requires_grad is None else requires_grad)
            r.elem = elem
            return r

        __torch_function__ = lib._C._disabled_torch_function_impl

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, cls) else e

            def wrap(e):
                return cls(e) if isinstance(e, lib.Tensor) and not isinstance(e, cls) else e
            log.append(str(func))
            return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))
    return Wrapper


X = np.arange(6.0, dtype=np.float32).reshape(2, 3)

_CALLS = {
    "mul_add": (lambda L, a: a * 2 + 1, ["aten.mul.Tensor", "aten.add.Tensor"]),
    "cat_sum": (lambda L, a: L.cat([a, a], 0).sum(0), ["aten.cat.default",
                                                       "aten.sum.dim_IntList"]),
    "t": (lambda L, a: a.t(), ["aten.t.default"]),
    "neg": (lambda L, a: -a, ["aten.neg.default"]),
    "exp": (lambda L, a: L.exp(a), ["aten.exp.default"]),
    "where": (lambda L, a: L.where(a > 2, a, L.zeros(2, 3)), ["aten.gt.Scalar",
                                                              "aten.where.self"]),
    "clone": (lambda L, a: a.clone(), ["aten.clone.default"]),
    "ones_like": (lambda L, a: L.ones_like(a), ["aten.ones_like.default"]),
}


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_wrapper_ops_reach_torch_dispatch_as_torch(name):
    call, funcs = _CALLS[name]
    out = {}
    for lib in (torch, ptcore):
        log = []
        W = _wrapper_class(lib, log)
        r = call(lib, W(lib.tensor(X)))
        assert type(r) is W
        out[lib.__name__] = (r.elem.numpy().copy(), tuple(r.shape), str(r.dtype).split(".")[-1],
                             r.device.type, log)
    p, t = out["ptcore"], out["torch"]
    np.testing.assert_allclose(p[0], t[0])
    assert p[1:4] == t[1:4]
    assert p[4] == t[4] == funcs


def test_wrapper_metadata_is_what_was_asked():
    class W(ptcore.Tensor):
        __torch_function__ = ptcore._C._disabled_torch_function_impl

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    for lib, cls in ((ptcore, W),):
        w = lib.Tensor._make_wrapper_subclass(cls, (2, 3, 4), strides=(1, 2, 6),
                                              storage_offset=5, dtype=lib.float64,
                                              device="cpu", requires_grad=True)
        assert type(w) is cls and tuple(w.shape) == (2, 3, 4)
        assert w.stride() == (1, 2, 6) and w.storage_offset() == 5
        assert w.dtype is lib.float64 and w.device.type == "cpu" and w.requires_grad
        assert w.is_leaf and w.grad_fn is None
    # contiguous strides by default; torch ignores memory_format there
    for lib in (torch, ptcore):
        class C(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        d = lib.Tensor._make_wrapper_subclass(C, (2, 3, 4, 5))
        cl = lib.Tensor._make_wrapper_subclass(C, (2, 3, 4, 5),
                                               memory_format=lib.channels_last)
        assert d.stride() == cl.stride() == (60, 20, 5, 1)
        assert d.dtype is lib.get_default_dtype()


def test_a_wrapper_holds_no_data_and_unhandled_ops_raise_as_torch():
    for lib in (torch, ptcore):
        class Empty(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        e = lib.Tensor._make_wrapper_subclass(Empty, (3,))
        with pytest.raises(TypeError):
            e + 1
        with pytest.raises(TypeError):
            lib.exp(e)
    # a kernel that does reach the wrapper (the Cython core, bypassing the layers) reads
    # no memory: RuntimeError naming what it is
    e = ptcore.Tensor._make_wrapper_subclass(Empty, (3,))
    with pytest.raises(RuntimeError, match="_make_wrapper_subclass"):
        ptcore._C._TensorBase.numpy(e)
    assert e.data_ptr() == 0        # (torch's too: no data)
    with pytest.raises(RuntimeError, match="negative size"):
        ptcore.Tensor._make_wrapper_subclass(Empty, (2, -1))
    with pytest.raises(RuntimeError, match="overflow"):
        ptcore.Tensor._make_wrapper_subclass(Empty, (2 ** 62, 4))
    with pytest.raises(RuntimeError, match="strides"):
        ptcore.Tensor._make_wrapper_subclass(Empty, (3,), strides=(1, 2))
    with pytest.raises(RuntimeError, match="offset"):
        ptcore.Tensor._make_wrapper_subclass(Empty, (3,), storage_offset=-1)
    with pytest.raises(TypeError, match="dtype"):
        ptcore.Tensor._make_wrapper_subclass(Empty, (3,), dtype="float32")
    for lib, cls in ((torch, None), (ptcore, Empty)):
        if cls is None:
            class cls(torch.Tensor):
                __torch_function__ = torch._C._disabled_torch_function_impl

                @classmethod
                def __torch_dispatch__(c, func, types, args=(), kwargs=None):
                    return NotImplemented
        with pytest.raises(TypeError):
            lib.Tensor._make_wrapper_subclass(cls, (2.5, 3))
    with pytest.raises(TypeError, match="not a subclass of Tensor"):
        ptcore.Tensor._make_wrapper_subclass(int, (3,))
    with pytest.raises(NotImplementedError):
        ptcore.Tensor._make_wrapper_subclass(Empty, (2,), layout=ptcore.sparse_coo)


def test_autograd_runs_above_the_wrapper_as_torch():
    grads = {}
    for lib in (torch, ptcore):
        log = []
        W = _wrapper_class(lib, log)
        # a plain leaf times a wrapper: the gradient is a wrapper
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = W(lib.tensor([4.0, 5.0, 6.0]))
        y = (w * x).sum()
        assert type(y) is W and y.requires_grad and y.grad_fn is not None
        y.backward()
        # a wrapper leaf
        v = W(lib.tensor([1.0, -2.0, 3.0]), requires_grad=True)
        z = (v * v).sum()
        z.backward()
        grads[lib.__name__] = (type(w.grad).__name__, w.grad.elem.numpy().copy(),
                               type(v.grad).__name__, v.grad.elem.numpy().copy())
    p, t = grads["ptcore"], grads["torch"]
    assert p[0] == t[0] == "Wrapper" and p[2] == t[2] == "Wrapper"
    np.testing.assert_allclose(p[1], t[1])
    np.testing.assert_allclose(p[3], t[3])
    np.testing.assert_allclose(p[3], [2.0, -4.0, 6.0])


def test_a_subclass_of_real_data_dispatches_too():
    # _make_subclass / as_subclass instances (data of their own) with __torch_dispatch__
    for lib in (torch, ptcore):
        seen = []

        class Traced(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append(str(func))
                plain = [a.plain if isinstance(a, cls) else a for a in args]
                return func(*plain, **(kwargs or {}))
        base = lib.tensor([1.0, 2.0])
        t = lib.Tensor._make_subclass(Traced, base)
        t.plain = base
        r = t * 3
        assert seen == ["aten.mul.Tensor"], (lib.__name__, seen)
        assert r.tolist() == [3.0, 6.0]


def test_a_mode_sees_the_call_before_the_subclass_as_torch():
    for lib, Mode in ((torch, td.TorchDispatchMode), (ptcore, pd.TorchDispatchMode)):
        order = []
        W = _wrapper_class(lib, order)

        class M(Mode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                order.append(f"mode {func}")
                return func(*args, **(kwargs or {}))
        a = W(lib.tensor([1.0, 2.0]))
        with M():
            r = a + 1
        assert type(r) is W
        assert order[:2] == ["mode aten.add.Tensor", "aten.add.Tensor"], (lib.__name__, order)


def test_the_kernel_layer_goes_off_when_no_instance_lives():
    W = _wrapper_class(ptcore, [])
    a = W(ptcore.ones(2))
    _ = a + 1
    assert python_dispatch._td_on[0]
    del a, _
    gc.collect()
    x = ptcore.ones(2)
    for _ in range(python_dispatch._TD_QUIET_CALLS + 2):
        x = x + 0
    assert not python_dispatch._td_on[0]


def test_objects_implementing_the_protocol_work_while_the_kernel_layer_is_on():
    class Scalarish:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "handled"
    W = _wrapper_class(ptcore, [])
    keep = W(ptcore.ones(2))        # the kernel layer is on while it lives
    assert python_dispatch._td_on[0]
    assert ptcore.mean(Scalarish()) == "handled"
    del keep


def test_basic_indexing_reaches_the_subclass_as_select_and_slice_as_torch():
    logs = {}
    for lib in (torch, ptcore):
        log = []
        W = _wrapper_class(lib, log)
        a = W(lib.tensor(X))
        r = a[:, 1:]
        s = a[1]
        assert type(r) is W and type(s) is W
        assert r.elem.tolist() == [[1.0, 2.0], [4.0, 5.0]] and s.elem.tolist() == [3.0, 4.0, 5.0]
        logs[lib.__name__] = log
    assert logs["ptcore"] == logs["torch"], logs


class _Picklable(ptcore.Tensor):
    """A module-level wrapper class (pickle finds classes by name)."""

    @staticmethod
    def __new__(cls, elem):
        r = ptcore.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                 dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    __torch_function__ = ptcore._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        args = [a.elem if isinstance(a, cls) else a for a in args]
        return cls(func(*args, **(kwargs or {})))


def test_a_wrapper_pickles_and_deepcopies_by_its_attributes():
    import copy
    import pickle
    a = _Picklable(ptcore.arange(6.0).reshape(2, 3).t())
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert type(b) is _Picklable and b.shape == a.shape and b.stride() == a.stride()
        assert b.dtype is a.dtype and b.elem.tolist() == a.elem.tolist()
        assert b.elem is not a.elem
        assert (b + 1).elem.tolist() == (a.elem + 1).tolist()


def _flatten_class(lib):
    pdm = __import__(f"{lib.__name__}.utils._python_dispatch",
                     fromlist=["return_and_correct_aliasing"])

    class F(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                  dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        __torch_function__ = lib._C._disabled_torch_function_impl

        def __tensor_flatten__(self):
            return ["elem"], None

        @staticmethod
        def __tensor_unflatten__(inner, ctx, size, stride):
            return F(inner["elem"])

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            uargs = [a.elem if isinstance(a, cls) else a for a in args]
            ukw = {k: v.elem if isinstance(v, cls) else v for k, v in kwargs.items()}
            out = func(*uargs, **ukw)
            return pdm.return_and_correct_aliasing(
                func, args, kwargs, cls(out) if isinstance(out, lib.Tensor) else out)
    return F, pdm


def test_wrapper_subclass_helpers_as_torch():
    for lib in (torch, ptcore):
        F, pdm = _flatten_class(lib)
        a = F(lib.ones(3))
        assert pdm.is_traceable_wrapper_subclass(a) and pdm.is_traceable_wrapper_subclass_type(F)
        assert not pdm.is_traceable_wrapper_subclass(lib.ones(1))
        assert not pdm.is_traceable_wrapper_subclass_type(lib.Tensor)
        # in-place and out= ops return the argument they wrote
        b = a.add_(1)
        assert b is a and a.elem.tolist() == [2.0, 2.0, 2.0]
        o = F(lib.zeros(3))
        r = lib.add(a, 1, out=o)
        assert r is o and o.elem.tolist() == [3.0, 3.0, 3.0]
        # a functional op returns what the handler made
        c = a * 2
        assert type(c) is F and c is not a and c.elem.tolist() == [4.0, 4.0, 4.0]
        t = pdm.transform_subclass(a, lambda name, x: x * 10)
        assert type(t) is F and t.elem.tolist() == [20.0, 20.0, 20.0]
        assert not pdm.is_in_torch_dispatch_mode()


def test_tensor_has_the_disabled_dispatch_as_torch():
    for lib in (torch, ptcore):
        W = _wrapper_class(lib, [])
        assert lib.Tensor.__torch_dispatch__ is lib._C._disabled_torch_dispatch_impl
        assert lib.nn.Parameter.__torch_dispatch__ is lib.Tensor.__torch_dispatch__
        assert W.__torch_dispatch__ is not lib.Tensor.__torch_dispatch__
        # a plain subclass inheriting it runs the kernels
        class Plain(lib.Tensor):
            pass
        p = lib.ones(2).as_subclass(Plain)
        assert (p + 1).tolist() == [2.0, 2.0]
