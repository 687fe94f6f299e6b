"""Keyword forms torch accepts on core tensor methods and function forms
(found by the signature-parity helper, fixed in the Cython core and the
autograd wrappers): tensor_split's sections=/indices=/
tensor_indices_or_sections=, swapaxes(axis0=, axis1=), swapaxes_,
expand(implicit=), torch.split(tensor=, split_size_or_sections=),
linalg.matrix_norm(input=) with grad, in-place function forms with input=."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = fn(torch, torch.tensor(x))
    b = fn(ptcore, ptcore.tensor(x))
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u.detach().numpy(), v.detach().numpy())
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda M, x: M.tensor_split(x, sections=4, dim=1),
    lambda M, x: M.tensor_split(x, indices=[1, 5], dim=1),
    lambda M, x: M.tensor_split(x, indices=(2,)),
    lambda M, x: M.tensor_split(x, tensor_indices_or_sections=M.tensor([1, 3]), dim=1),
    lambda M, x: x.tensor_split(sections=3, dim=0),
    lambda M, x: M.swapaxes(x, axis0=0, axis1=1),
    lambda M, x: x.swapaxes(axis0=1, axis1=0),
    lambda M, x: x.clone().swapaxes_(axis0=0, axis1=1),
    lambda M, x: x[:1].expand(3, 6, implicit=False),
    lambda M, x: M.split(tensor=x, split_size_or_sections=[1, 3]),
    lambda M, x: M.split(x, 2, dim=1),
    lambda M, x: M.linalg.matrix_norm(input=x.clone().requires_grad_(), ord=1),
    lambda M, x: M.cos_(input=x.clone()),
    lambda M, x: M.exp_(input=x.clone() / 10),
])
def test_keyword_forms_match_torch(call):
    _both(call)


@pytest.mark.parametrize("call", [
    lambda M, x: M.tensor_split(x, sections=[1, 2]),
    lambda M, x: M.tensor_split(x, dim=1),
    lambda M, x: M.tensor_split(x, 2, sections=2),
    lambda M, x: M.cos_(),
])
def test_bad_keyword_forms_raise_type_error(call):
    for M in (torch, ptcore):
        with pytest.raises(TypeError):
            call(M, M.ones(4, 6))


def test_matrix_norm_input_keyword_has_grad():
    x = ptcore.randn(3, 3, dtype=ptcore.float64, requires_grad=True)
    ptcore.linalg.matrix_norm(input=x).backward()
    np.testing.assert_allclose(x.grad.numpy(), (x / ptcore.linalg.matrix_norm(x)).detach().numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full"])
def test_factories_resize_out_silently(name):
    import warnings
    for M in (torch, ptcore):
        out = M.empty(5)
        args = ((3,), 2.0) if name == "full" else (3,)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = getattr(M, name)(*args, out=out)
        assert r is out and tuple(out.shape) == (3,)
