"""ptcore.nested: construction, introspection and conversion, against torch.nested
(same NumPy data) where torch is installed, and NumPy otherwise."""
import pickle

import numpy as np
import pytest

import ptcore
import ptcore.nested as nested


def _data(seed=0, shapes=((2, 3), (4, 3), (1, 3))):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _pt_list(arrs, **kw):
    return [ptcore.tensor(a, **kw) for a in arrs]


def _close(a, b, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b), atol=atol, rtol=1e-5)


@pytest.mark.parametrize("layout", [None, "jagged"])
def test_nested_tensor_components_and_padding(layout):
    arrs = _data()
    lay = ptcore.jagged if layout else None
    nt = nested.nested_tensor(_pt_list(arrs), layout=lay)
    assert nt.is_nested and nt.dim() == 3 and nt.size(0) == 3 and nt.size(-1) == 3
    assert nt.dtype is ptcore.float32 and nt.device == ptcore.device("cpu")
    assert nt.layout is (ptcore.jagged if layout else ptcore.strided)
    assert nt.is_leaf and not nt.requires_grad and nt.is_contiguous()
    for c, a in zip(nt.unbind(), arrs):
        _close(c, a)
    assert [tuple(c.shape) for c in nt] == [a.shape for a in arrs]
    padded = nested.to_padded_tensor(nt, -1.0)
    ref = np.full((3, 4, 3), -1.0, np.float32)
    for i, a in enumerate(arrs):
        ref[i, :a.shape[0]] = a
    _close(padded, ref)
    _close(nt.to_padded_tensor(0.5, output_size=(3, 5, 4))[:, :4, :3],
           np.where(ref == -1.0, 0.5, ref))
    with pytest.raises(RuntimeError):
        nt.to_padded_tensor(0.0, output_size=(3, 2, 3))


def test_regular_tensors_are_not_nested():
    assert ptcore.ones(2).is_nested is False


def test_nested_tensor_copies_and_is_a_leaf():
    t = ptcore.ones(2, 3, requires_grad=True)
    nt = nested.nested_tensor([t, ptcore.zeros(1, 3)], requires_grad=True)
    assert nt.is_leaf and nt.requires_grad and nt.grad_fn is None
    with ptcore.no_grad():
        t.mul_(5)
    assert float(nt.unbind()[0].detach().sum()) == 6.0
    nt2 = nested.nested_tensor([[1, 2], [3, 4, 5]][0:1] + [[6, 7]])
    assert nt2.dtype is ptcore.int64


def test_mismatched_dims_raise():
    with pytest.raises(RuntimeError):
        nested.nested_tensor([ptcore.ones(2), ptcore.ones(2, 3)])
    with pytest.raises(RuntimeError):
        nested.nested_tensor([ptcore.ones(2, 3), ptcore.ones(4, 5)], layout=ptcore.jagged)
    with pytest.raises(RuntimeError):
        nested.nested_tensor([ptcore.ones(2)], layout=ptcore.sparse_coo)


def test_strided_ragged_size_raises_and_jagged_is_symbolic():
    arrs = _data()
    nt = nested.nested_tensor(_pt_list(arrs))
    with pytest.raises(RuntimeError):
        nt.size(1)
    with pytest.raises(RuntimeError):
        nt.shape
    nj = nested.nested_tensor(_pt_list(arrs), layout=ptcore.jagged)
    shape = nj.shape
    assert shape[0] == 3 and shape[2] == 3
    assert repr(shape[1]).startswith("j") and nj.size(1) == shape[1] and shape[1] != 4
    # same offsets -> the same ragged size; other offsets -> another one
    assert (nj * 2).shape[1] == shape[1]
    other = nested.nested_tensor(_pt_list(arrs), layout=ptcore.jagged)
    assert other.shape[1] != shape[1]
    with pytest.raises(RuntimeError):
        int(shape[1])


def test_jagged_layout_object():
    assert repr(ptcore.jagged) == "ptcore.jagged"
    assert ptcore.jagged is nested.jagged and ptcore.jagged != ptcore.strided
    assert pickle.loads(pickle.dumps(ptcore.jagged)) is ptcore.jagged


def test_jagged_parts():
    arrs = _data()
    nj = nested.nested_tensor(_pt_list(arrs), layout=ptcore.jagged)
    _close(nj.values(), np.concatenate(arrs))
    assert nj.offsets().tolist() == [0, 2, 6, 7] and nj.lengths() is None
    nt = nested.nested_tensor(_pt_list(arrs))
    _close(nt.values(), np.concatenate([a.reshape(-1) for a in arrs]))
    with pytest.raises(AttributeError):
        nt.offsets()


def test_from_jagged_offsets_lengths_and_grad():
    values = ptcore.arange(20.0).reshape(10, 2).requires_grad_()
    nt = nested.nested_tensor_from_jagged(values, ptcore.tensor([0, 3, 4, 10]))
    assert [c.shape[0] for c in nt.unbind()] == [3, 1, 6]
    assert nt.values() is values and nt.is_contiguous()
    nt2 = nested.nested_tensor_from_jagged(values, ptcore.tensor([0, 3, 4]),
                                           lengths=ptcore.tensor([2, 5]))
    assert [c.shape[0] for c in nt2.unbind()] == [2, 5] and not nt2.is_contiguous()
    nt2.to_padded_tensor(0.0).sum().backward()
    g = values.grad.numpy()[:, 0]
    assert g.tolist() == [1, 1, 0, 1, 1, 1, 1, 1, 0, 0]
    nt3 = nested.nested_tensor_from_jagged(ptcore.ones(10, 2), lengths=ptcore.tensor([4, 6]))
    assert nt3.offsets().tolist() == [0, 4, 10]
    with pytest.raises(RuntimeError):
        nested.nested_tensor_from_jagged(ptcore.ones(10, 2), ptcore.tensor([0, 4, 11]))


def test_as_nested_tensor_keeps_autograd_to_components():
    a = ptcore.tensor(_data()[0], requires_grad=True)
    b = ptcore.tensor(_data()[1], requires_grad=True)
    for layout in (None, ptcore.jagged):
        a.grad = b.grad = None
        nt = nested.as_nested_tensor([a, b], layout=layout)
        assert not nt.is_leaf and nt.grad_fn is not None
        (nt * 3).to_padded_tensor(0.0).sum().backward()
        _close(a.grad, np.full((2, 3), 3.0))
        _close(b.grad, np.full((4, 3), 3.0))
    assert nested.as_nested_tensor(nt) is nt
    assert nested.as_nested_tensor(nt, dtype=ptcore.float64).dtype is ptcore.float64


def test_as_nested_tensor_of_a_tensor():
    t = ptcore.arange(24.0).reshape(2, 3, 4)
    nj = nested.as_nested_tensor(t, layout=ptcore.jagged)
    assert nj.offsets().tolist() == [0, 3, 6]
    _close(nj.to_padded_tensor(0.0), t.numpy())
    ns = nested.as_nested_tensor(t)
    assert ns.layout is ptcore.strided and ns.size(1) == 3


def test_narrow_jagged_view():
    t = ptcore.arange(30.0).reshape(3, 5, 2)
    nt = nested.narrow(t, 1, ptcore.tensor([0, 1, 2]), ptcore.tensor([2, 4, 1]),
                       layout=ptcore.jagged)
    comps = nt.unbind()
    _close(comps[0], t.numpy()[0, 0:2])
    _close(comps[1], t.numpy()[1, 1:5])
    _close(comps[2], t.numpy()[2, 2:3])
    assert not nt.is_contiguous() and nt.lengths().tolist() == [2, 4, 1]
    assert nt.offsets().tolist() == [0, 6, 12, 13]          # (as torch's)
    assert nested.narrow(t, 1, 1, 3, layout=ptcore.jagged).offsets().tolist() == [1, 6, 11, 14]
    assert nested.narrow(t, 0, 1, 2).unbind()[1].tolist() == t[2].tolist()
    ns = nested.narrow(t, 1, 1, 3, layout=ptcore.strided)
    _close(ns.to_padded_tensor(0.0), t.numpy()[:, 1:4])
    with pytest.raises(RuntimeError):
        nested.narrow(t, 1, ptcore.tensor([0, 1, 4]), 2, layout=ptcore.jagged)


def test_masked_select():
    t = ptcore.arange(12.0).reshape(3, 4)
    mask = t.remainder(3) == 0
    nt = nested.masked_select(t, mask)
    assert [c.tolist() for c in nt.unbind()] == [[0.0, 3.0], [6.0], [9.0]]
    # leading dims flattened into the batch; the mask broadcasts (as torch)
    t3 = ptcore.arange(24.0).reshape(2, 3, 4)
    nt3 = nested.masked_select(t3, ptcore.tensor([True, False, True, True]))
    assert nt3.size(0) == 6 and nt3.offsets().tolist() == [0, 3, 6, 9, 12, 15, 18]
    assert nt3.unbind()[5].tolist() == [20.0, 22.0, 23.0]


def test_conversions_and_autograd_attributes():
    nt = nested.nested_tensor(_pt_list(_data()), layout=ptcore.jagged)
    assert nt.to(ptcore.float64).dtype is ptcore.float64
    assert nt.double().dtype is ptcore.float64
    c = nt.clone()
    assert c.values() is not nt.values()
    nt.requires_grad_()
    assert nt.requires_grad and nt.is_leaf and nt.grad is None
    d = nt.detach()
    assert not d.requires_grad and d.values().data_ptr() == nt.values().data_ptr()
    (nt * nt).to_padded_tensor(0.0).sum().backward()
    g = nt.grad
    assert g.is_nested and g.layout is ptcore.jagged
    for gc, c in zip(g.unbind(), nt.unbind()):
        _close(gc, 2 * c.detach().numpy())


def test_repr():
    nt = nested.nested_tensor([ptcore.ones(1, 2), ptcore.zeros(2, 2)])
    r = repr(nt)
    assert r.startswith("nested_tensor([\n  tensor(") and r.endswith("\n])")
    nj = nested.nested_tensor([ptcore.ones(1, 2), ptcore.zeros(2, 2)], layout=ptcore.jagged)
    assert repr(nj).startswith("NestedTensor(size=(2, j")
    assert "offsets=tensor([0, 1, 3])" in repr(nj)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_repr_like_torch():
    torch = pytest.importorskip("torch")
    a, b = [[1.0, 2.0], [3.0, 4.5]], [[0.0, 1.0]]
    for lay, tlay in ((ptcore.strided, torch.strided), (ptcore.jagged, torch.jagged)):
        for rg in (False, True):
            p = nested.nested_tensor([ptcore.tensor(a), ptcore.tensor(b)], layout=lay,
                                     requires_grad=rg)
            t = torch.nested.nested_tensor([torch.tensor(a), torch.tensor(b)], layout=tlay,
                                           requires_grad=rg)
            if lay is ptcore.jagged:     # (the nested int's number is a process counter)
                assert repr(p).split("offsets")[1] == repr(t).split("offsets")[1]
            else:
                assert repr(p) == repr(t)
                assert repr(p * 2) == repr(t * 2)


def test_unsupported_op_raises_not_implemented():
    nj = nested.nested_tensor([ptcore.ones(1, 2), ptcore.zeros(2, 2)], layout=ptcore.jagged)
    with pytest.raises(NotImplementedError):
        ptcore.fft.fft(nj)
    with pytest.raises(NotImplementedError):
        nj.kthvalue(1)
    with pytest.raises(RuntimeError):
        nj.item()


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_against_torch_construction():
    torch = pytest.importorskip("torch")
    arrs = _data(3)
    for lay, tlay in ((ptcore.strided, torch.strided), (ptcore.jagged, torch.jagged)):
        p = nested.nested_tensor(_pt_list(arrs), layout=lay)
        t = torch.nested.nested_tensor([torch.from_numpy(a) for a in arrs], layout=tlay)
        assert p.dim() == t.dim() and p.size(0) == t.size(0) and p.size(2) == t.size(2)
        np.testing.assert_allclose(p.to_padded_tensor(1.5).numpy(),
                                   t.to_padded_tensor(1.5).numpy())
        assert p.is_contiguous() == t.is_contiguous()
        if lay is ptcore.jagged:
            assert p.offsets().tolist() == t.offsets().tolist()



def test_is_tensor():
    nt = nested.nested_tensor([ptcore.ones(2, 3), ptcore.ones(1, 3)])
    assert ptcore.is_tensor(nt)


def test_empty_and_scalar_components():
    nt = nested.nested_tensor([])
    assert nt.dim() == 1 and nt.size(0) == 0 and nt.unbind() == ()
    ns = nested.nested_tensor([ptcore.tensor(1.0), ptcore.tensor(2.0)])
    assert ns.dim() == 1 and [float(c) for c in ns.unbind()] == [1.0, 2.0]
    with pytest.raises(RuntimeError):
        nested.nested_tensor([ptcore.tensor(1.0)], layout=ptcore.jagged)


def test_from_jagged_other_dim():
    values = ptcore.arange(30.0).reshape(3, 10)       # components (3, n_i): ragged dim 2
    nt = nested.nested_tensor_from_jagged(values, ptcore.tensor([0, 4, 10]), jagged_dim=2)
    assert nt.dim() == 3 and nt.size(1) == 3
    comps = nt.unbind()
    assert [tuple(c.shape) for c in comps] == [(3, 4), (3, 6)]
    np.testing.assert_array_equal(comps[1].numpy(), values.numpy()[:, 4:])
    t = nt.transpose(1, 2)
    assert [tuple(c.shape) for c in t.unbind()] == [(4, 3), (6, 3)]


def test_inplace_with_a_regular_operand_per_component():
    nt = nested.nested_tensor([ptcore.ones(2, 3), ptcore.ones(1, 3)])
    nt.mul_(ptcore.tensor([1.0, 2.0, 3.0]))
    assert [c.tolist() for c in nt.unbind()] == [[[1.0, 2.0, 3.0]] * 2, [[1.0, 2.0, 3.0]]]
