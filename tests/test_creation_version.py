"""New tensors start at version 0, as torch's (tensor(), as_tensor of a list, eye)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

MAKERS = [lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor(3), lambda L: L.as_tensor([1, 2]),
          lambda L: L.tensor([[1, 2], [3, 4]]), lambda L: L.eye(3), lambda L: L.tensor(np.ones((2, 3)).T),
          lambda L: L.zeros(2), lambda L: L.arange(3), lambda L: L.full((2,), 3.0)]


@pytest.mark.parametrize("k", range(len(MAKERS)))
def test_new_tensor_version(k):
    got = {}
    for L in (torch, ptcore):
        t = MAKERS[k](L)
        v0 = t._version
        t.add_(1)
        got[L] = (v0, t._version)
    assert got[ptcore] == got[torch]
