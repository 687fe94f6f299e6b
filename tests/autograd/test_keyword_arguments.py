"""Differentiable ops called with their tensor/positional parameters given by
keyword (``topk(x, k=3)``, ``add(x, other=y)``, ``sum(input=x)``,
``cat(tensors=[...])``) record the same graph as positional calls: gradients
equal torch's."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

CASES = {
    "exp(input=)": lambda L, x: L.exp(input=x),
    "sum(input=, dim=)": lambda L, x: L.sum(input=x, dim=0),
    "sort(input=)": lambda L, x: L.sort(input=x, dim=0)[0],
    "mm(input=, mat2=)": lambda L, x: L.mm(input=x, mat2=x.T),
    "softmax(input=)": lambda L, x: L.softmax(input=x, dim=1),
    "max(input=, dim=)": lambda L, x: L.max(input=x, dim=1)[0],
    "clamp(input=, min=)": lambda L, x: L.clamp(input=x, min=0),
    "pow(x, exponent=)": lambda L, x: L.pow(x, exponent=2),
    "Tensor.pow(exponent=)": lambda L, x: x.pow(exponent=3),
    "where(condition=, input=, other=)": lambda L, x: L.where(condition=x > 0, input=x, other=x * 2),
    "mean(input=)": lambda L, x: L.mean(input=x),
    "std(input=, dim=)": lambda L, x: L.std(input=x, dim=0),
    "add(x, other=, alpha=)": lambda L, x: L.add(x, other=x, alpha=2),
    "Tensor.topk(k=, dim=)": lambda L, x: x.topk(k=2, dim=0)[0],
    "topk(x, k=)": lambda L, x: L.topk(x, k=2)[0],
    "topk(input=, k=)": lambda L, x: L.topk(input=x, k=2)[0],
    "kthvalue(x, k=, dim=)": lambda L, x: L.kthvalue(x, k=2, dim=1)[0],
    "matmul(x, other=)": lambda L, x: L.matmul(x, other=x.T),
    "cat(tensors=)": lambda L, x: L.cat(tensors=[x, x * 2]),
    "stack(tensors=, dim=)": lambda L, x: L.stack(tensors=[x, x.exp()], dim=1),
    "Tensor.sub(other=)": lambda L, x: x.sub(other=x * 3),
    "mul(input=, other=)": lambda L, x: L.mul(input=x, other=x),
    "div(x, other=)": lambda L, x: L.div(x, other=x + 5),
    "gather(x, dim=, index=)": lambda L, x: L.gather(x, dim=0, index=L.zeros(2, 3, dtype=L.long)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_keyword_call_gradients_equal_torch(name):
    v = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    grads = []
    for lib in (ptcore, torch):
        x = lib.tensor(v, requires_grad=True)
        (CASES[name](lib, x) * lib.arange(1.0, 1.0 + CASES[name](lib, x).numel()).view(
            CASES[name](lib, x).shape)).sum().backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
