"""The gradient of a p=0 norm (a count of nonzeros) is undefined in torch:
``autograd.grad`` gives None and ``.grad`` stays unset; compared with torch."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _grads(lib):
    x = lib.tensor([[1., 0., 2.], [0., 0., 3.]], requires_grad=True)
    out = [lib.autograd.grad(lib.norm(x, p=0, dim=-1).sum(), [x], allow_unused=True),
           lib.autograd.grad(lib.linalg.vector_norm(x, 0), [x], allow_unused=True),
           lib.autograd.grad(lib.nn.functional.pairwise_distance(x, x * 2, p=0).sum(), [x],
                             allow_unused=True)]
    x.norm(0, dim=1).sum().backward()
    out.append(x.grad)
    y = (x * 2).norm(0) + (x * 3).sum()
    y.backward()
    out.append(x.grad)
    with pytest.raises(RuntimeError):
        lib.autograd.grad(lib.norm(x, p=0), [x])
    return out


def test_p0_norm_gradient_is_undefined_as_torch():
    t, p = _grads(torch), _grads(ptcore)
    for a, b in zip(t[:3], p[:3]):
        assert a == (None,) and b == (None,)
    assert t[3] is None and p[3] is None
    assert p[4].tolist() == t[4].tolist() == [[3.0] * 3] * 2
