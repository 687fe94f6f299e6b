"""F.embedding_bag(scale_grad_by_freq=True) with a dense gradient divides each
looked-up row's gradient by its index's frequency in the input, as torch's
(the flag was honoured only with sparse=True).  Cases where torch's CPU
kernel agrees with that definition (its counts are off for some inputs,
e.g. an index seen once at the end of a multi-bag 1-D input)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("inp", [[[1], [1]], [[1, 1], [2, 2]], [[1, 1, 2], [1, 2, 2]], [[3, 0, 3, 3]]])
def test_dense_gradient_scaled_by_frequency(mode, inp):
    res = []
    for L in (torch, ptcore):
        w = L.arange(8.0, dtype=L.float64).view(4, 2).requires_grad_()
        L.nn.functional.embedding_bag(L.tensor(inp), w, mode=mode,
                                      scale_grad_by_freq=True).pow(2).sum().backward()
        res.append(w.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


def test_padding_rows_get_no_gradient():
    w = ptcore.ones(4, 2, requires_grad=True)
    ptcore.nn.functional.embedding_bag(ptcore.tensor([1, 1, 2, 0, 1]), w, ptcore.tensor([0, 2]),
                                       mode="sum", scale_grad_by_freq=True,
                                       padding_idx=2).sum().backward()
    assert w.grad.tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
