"""The tensor-making and mutating core methods of the class (the in-place
random fills, index_put_, detach_, geqrf, stft ...) are entries while a layer
is on: forward AD, vmap, ``__torch_function__`` and tracing see them."""
import pytest

import ptcore

torch = pytest.importorskip("torch")

FILLS = [("normal_", ()), ("uniform_", ()), ("bernoulli_", (0.5,)), ("exponential_", ()),
         ("random_", (0, 5)), ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.5,))]


@pytest.mark.parametrize("name,args", FILLS)
def test_forward_ad_random_fill_zeroes_the_tangent(name, args):
    for lib in (ptcore, torch):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(lib.ones(4), lib.full((4,), 3.0))
            y = x * 2
            assert fa.unpack_dual(y).tangent.tolist() == [6.0] * 4
            getattr(y, name)(*args)
            t = fa.unpack_dual(y).tangent
            assert t is not None and t.tolist() == [0.0] * 4, (lib.__name__, name)
            # a tensor holding no tangent keeps none
            z = lib.ones(4)
            getattr(z, name)(*args)
            assert fa.unpack_dual(z).tangent is None


def test_torch_function_sees_core_methods():
    seen = []

    class Logged(ptcore.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    t = ptcore.zeros(3, 4).as_subclass(Logged)
    t.normal_()
    t.uniform_()
    t.index_put_((ptcore.tensor([0]),), ptcore.tensor(1.0))
    for n in ("normal_", "uniform_", "index_put_"):
        assert n in seen, (n, seen)


def test_trace_records_in_place_random_fill():
    def f(x):
        y = x * 2
        y.uniform_()
        return y + x

    tr = ptcore.jit.trace(f, (ptcore.ones(3),), check_trace=False)
    assert "uniform_" in str(tr.graph)
    # the replayed graph draws: not x * 2 + x
    out = tr(ptcore.ones(3))
    assert bool(((out >= 1) & (out < 2)).all())


def test_vmap_in_place_fill_randomness_modes():
    from ptcore.func import vmap
    x = ptcore.ones(5, 40)
    same = vmap(lambda r: r.clone().normal_(), randomness="same")(x)
    assert all(bool((same[i] == same[0]).all()) for i in range(5))
    diff = vmap(lambda r: r.clone().normal_(), randomness="different")(x)
    assert not bool((diff[1] == diff[0]).all())
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r.clone().normal_())(x)


def test_torch_function_sees_the_view_and_conversion_methods_as_torch():
    # the methods that ptcore._dispatch.torch_function.CORE_METHODS once listed
    # one by one: entries while the layer is on, so an overriding subclass sees
    # each call under the same name as torch's
    calls = [("view", (12,)), ("reshape", (4, 3)), ("transpose", (0, 1)), ("t", ()),
             ("unsqueeze", (0,)), ("flatten", ()), ("narrow", (0, 0, 1)), ("select", (0, 1)),
             ("split", (1,)), ("chunk", (2,)), ("unbind", ()), ("contiguous", ()),
             ("clone", ()), ("detach", ()), ("to", "float64"), ("float", ()),
             ("double", ()), ("__getitem__", (0,)), ("diagonal", ()), ("movedim", (0, 1)),
             ("unfold", (0, 2, 1)), ("repeat", (2, 1)), ("tolist", ()), ("copy_", None),
             ("fill_", (1.0,)), ("zero_", ()), ("requires_grad_", ())]
    for lib in (ptcore, torch):
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(getattr(func, "__name__", str(func)))
                return super().__torch_function__(func, types, args, kwargs or {})

        for name, args in calls:
            t = lib.zeros(3, 4).as_subclass(Logged)
            seen.clear()
            if args is None:
                args = (lib.ones(3, 4),)
            elif isinstance(args, str):
                args = (getattr(lib, args),)
            getattr(t, name)(*args)
            assert seen[:1] == [name], (lib.__name__, name, seen)
