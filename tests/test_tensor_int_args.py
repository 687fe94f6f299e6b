"""Integer arguments of the core Tensor methods read as torch's argument parser
reads them: an ``int64`` (a dim, a count) refuses bools, bool tensors,
one-element tensors of more dims and NumPy arrays with TypeError; a ``SymInt``
(an index, a start, a length, a size) takes one-element tensors and arrays,
refuses a bool with TypeError and a bool tensor with RuntimeError.  Compared
with torch case by case."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _values(lib):
    return {"int": 1, "bool": True, "t0": lib.tensor(1), "t1d": lib.tensor([1]),
            "np0d": np.array(1), "npint": np.int64(1), "tbool": lib.tensor(True)}


CALLS = {
    "unsqueeze": lambda x, v: x.unsqueeze(v),
    "select_dim": lambda x, v: x.select(v, 0),
    "select_index": lambda x, v: x.select(0, v),
    "transpose": lambda x, v: x.transpose(v, 0),
    "chunk_dim": lambda x, v: x.chunk(2, v),
    "chunk_n": lambda x, v: x.chunk(v, 1),
    "narrow_dim": lambda x, v: x.narrow(v, 0, 1),
    "narrow_start": lambda x, v: x.narrow(1, v, 1),
    "narrow_length": lambda x, v: x.narrow(1, 0, v),
    "flatten": lambda x, v: x.flatten(v),
    "movedim": lambda x, v: x.movedim(v, 0),
    "diagonal_offset": lambda x, v: x.diagonal(v),
    "diagonal_dim": lambda x, v: x.diagonal(0, v, 0),
    "size": lambda x, v: x.size(v),
    "stride": lambda x, v: x.stride(v),
    "squeeze": lambda x, v: x.squeeze(v),
    "split_dim": lambda x, v: x.split(1, v),
    "split_size": lambda x, v: x.split(v, 1),
    "unflatten": lambda x, v: x.unflatten(v, (3, 1)),
    "swapdims": lambda x, v: x.swapdims(v, 0),
    "unfold_dim": lambda x, v: x.unfold(v, 1, 1),
    "unfold_size": lambda x, v: x.unfold(1, v, 1),
    "unfold_step": lambda x, v: x.unfold(1, 1, v),
    "view": lambda x, v: x.view(v, -1),
    "reshape": lambda x, v: x.reshape(v, -1),
    "expand": lambda x, v: x[:1].expand(v, -1),
    "new_zeros": lambda x, v: x.new_zeros(v, 2),
    "as_strided_offset": lambda x, v: x.as_strided((1,), (1,), v),
    "permute": lambda x, v: x.permute(v, 0),
}


def _outcome(lib, fn, v):
    x = lib.ones(2, 3)
    try:
        r = fn(x, v)
    except Exception as e:          # noqa: BLE001 - the exception type is compared
        return type(e).__name__
    if isinstance(r, (tuple, list)):
        return ("seq", len(r), tuple(tuple(t.shape) for t in r))
    return ("value", tuple(r.shape) if hasattr(r, "shape") else r)


@pytest.mark.parametrize("kind", ["int", "bool", "t0", "t1d", "np0d", "npint", "tbool"])
@pytest.mark.parametrize("name", list(CALLS))
def test_int_argument_matches_torch(name, kind):
    fn = CALLS[name]
    assert _outcome(ptcore, fn, _values(ptcore)[kind]) == _outcome(torch, fn, _values(torch)[kind])


def test_copy_keyword_is_other_as_torch():
    for lib in (torch, ptcore):
        with pytest.raises(TypeError):
            lib.zeros(2).copy_(src=lib.ones(2))
        x = lib.zeros(2)
        x.copy_(other=lib.ones(2))
        assert x.tolist() == [1.0, 1.0]
    a = ptcore.ones(2, requires_grad=True)
    y = ptcore.zeros(2)
    y.copy_(other=a * 3)
    y.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]
