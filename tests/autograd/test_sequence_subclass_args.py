"""Tensors passed inside a tuple or list subclass (a return-types named tuple such as
``aminmax``'s, a user list subclass) are inputs like those in a plain list: reverse- and
forward-mode gradients and ``__torch_function__`` see them (``stack(aminmax(x))`` once lost its
gradient silently)."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd.forward_ad as fwAD


class _List(list):
    pass


def _grads(lib, build):
    x = lib.tensor([[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]], dtype=lib.float64, requires_grad=True)
    y = build(lib, x)
    w = lib.arange(1, y.numel() + 1, dtype=lib.float64).reshape(y.shape)
    (y * w).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


CASES = [
    ("stack_aminmax", lambda L, x: L.stack(L.aminmax(x))),
    ("stack_aminmax_dim", lambda L, x: L.stack(L.aminmax(x, dim=1))),
    ("cat_sort_values", lambda L, x: L.cat(L.sort(x, 1)[:1])),
    ("cat_list_subclass", lambda L, x: L.cat(_List([x, x * 2]))),
    ("stack_list_subclass", lambda L, x: L.stack(_List([x, x.exp()]), 1)),
]


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_reverse_mode_through_sequence_subclasses(name, build):
    y, g = _grads(ptcore, build)
    assert g.any()
    torch = pytest.importorskip("torch")
    ty, tg = _grads(torch, build)
    np.testing.assert_allclose(y, ty)
    np.testing.assert_allclose(g, tg)


def test_forward_mode_through_a_named_tuple():
    x = ptcore.tensor([[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ptcore.ones_like(x) * 2)
        s = ptcore.stack(ptcore.aminmax(d, dim=1))
        t = fwAD.unpack_dual(s).tangent
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 2.0))


def test_torch_function_sees_subclass_tensors_in_a_list_subclass():
    seen = []

    class T(ptcore.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    t = ptcore.ones(2).as_subclass(T)
    r = ptcore.cat(_List([t, t]))
    assert type(r) is T and "cat" in seen
