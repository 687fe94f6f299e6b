"""What running PyTorch-ecosystem libraries on ptcore (tests/as_torch: kornia, PyTorch
Geometric, Captum, diffusers) found missing or different, checked here directly against
torch: each library's need as a small call of its own."""
import importlib

import pytest

import ptcore

torch = pytest.importorskip("torch")


# --- kornia ---

def test_package_is_its_own_attribute():
    """``torch.torch is torch`` (kornia annotates with ``torch.torch.Tensor``)."""
    assert torch.torch is torch
    assert ptcore.torch is ptcore
    assert ptcore.torch.Tensor is ptcore.Tensor


def test_is_fake_and_fake_tensor_mode():
    """``torch._subclasses.fake_tensor.is_fake``: false for real and meta tensors and for
    other objects; ptcore has no fake mode (constructing it raises NotImplementedError)."""
    from torch._subclasses.fake_tensor import is_fake as t_is_fake

    from ptcore._subclasses.fake_tensor import FakeTensor, FakeTensorMode, is_fake
    for L, fn in ((torch, t_is_fake), (ptcore, is_fake)):
        assert fn(L.ones(2)) is False
        assert fn(L.empty(2, device="meta")) is False
        assert fn(3) is False
    assert issubclass(FakeTensor, ptcore.Tensor)
    with pytest.raises(NotImplementedError, match="fake tensors"):
        FakeTensorMode()
    assert importlib.import_module("ptcore._subclasses").FakeTensor is FakeTensor


def test_no_proxy_mode_outside_make_fx():
    from torch.fx.experimental.proxy_tensor import get_proxy_mode as t_get

    from ptcore.fx.experimental.proxy_tensor import get_proxy_mode, make_fx
    assert t_get() is None and get_proxy_mode() is None
    with pytest.raises(NotImplementedError, match="make_fx"):
        make_fx(lambda x: x)


def _transform_flags(L):
    f = L._C._are_functorch_transforms_active
    seen = [f()]
    L.func.grad(lambda x: (seen.append(f()), x.sum())[1])(L.ones(2))
    L.func.vmap(lambda x: (seen.append(f()), x)[1])(L.ones(2))
    L.func.jvp(lambda x: (seen.append(f()), x)[1], (L.ones(2),), (L.ones(2),))
    L.func.vjp(lambda x: (seen.append(f()), x)[1], L.ones(2))
    L.func.jacfwd(lambda x: (seen.append(f()), x)[1])(L.ones(2))
    L.func.vmap(L.func.grad(lambda x: (seen.append(f()), x.sum())[1]))(L.ones(2, 2))
    with L.autograd.forward_ad.dual_level():          # no transform: forward AD alone
        seen.append(f())
    L.func.functional_call(L.nn.Linear(2, 2), {}, (L.ones(2),))
    seen.append(f())
    return seen


def test_are_functorch_transforms_active():
    """True inside grad/vmap/jvp/vjp/jacfwd (and nested), false outside and under a plain
    forward-AD dual level, as torch's."""
    assert _transform_flags(ptcore) == _transform_flags(torch)


@pytest.mark.parametrize("args", [(True,), (1.5,), (float("nan"),), ([2],), (False,), (0.0,),
                                  (0j,), ([1, 1],), ([],)])
def test_assert_async(args):
    """``torch._assert_async``: RuntimeError unless the one element is nonzero; several or
    no elements raise as ``bool()`` does; a message replaces torch's."""
    for msg in ((), ("boom",)):
        results = []
        for L in (torch, ptcore):
            try:
                results.append(("ok", L._assert_async(L.tensor(args[0]), *msg)))
            except RuntimeError as e:
                results.append(("RuntimeError", str(e)))
        assert results[0] == results[1]
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        ptcore._assert_async(1)
