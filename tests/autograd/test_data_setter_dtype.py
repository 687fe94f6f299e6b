"""Setting ``.data`` of a tensor that requires grad to an integer or bool tensor
raises torch's RuntimeError (it was accepted, leaving e.g. an int32 Parameter
that requires grad after Module.type(torch.int32)); without requires_grad any
dtype is accepted, as torch's."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dt", ["int32", "int64", "bool", "uint8"])
def test_integer_data_on_a_grad_tensor_raises(dt):
    for L in (torch, ptcore):
        p = L.nn.Parameter(L.ones(2))
        with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
            p.data = L.ones(2, dtype=getattr(L, dt))
        assert p.dtype == L.float32


def test_other_assignments_as_torch():
    for L in (torch, ptcore):
        q = L.ones(2)
        q.data = L.ones(2, dtype=L.int32)
        assert q.dtype == L.int32
        r = L.ones(2, requires_grad=True)
        r.data = L.ones(3, dtype=L.float64)
        assert r.dtype == L.float64 and tuple(r.shape) == (3,) and r.requires_grad
        c = L.ones(2, requires_grad=True)
        c.data = L.ones(2, dtype=L.complex64)
        assert c.dtype == L.complex64
