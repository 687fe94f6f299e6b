"""Sparse tensors are ``Tensor`` instances, as torch's: isinstance / is_tensor / type checks,
a module holding a sparse buffer or parameter, ops mixing sparse and dense, dense-only ops
on a sparse tensor raising torch's exception type, pickling and deepcopy, and the
``__torch_function__`` layer (on while a sparse tensor lives) switching off again."""
import copy
import gc
import io
import pickle

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 2], [2, 0, 2, 1]]
VAL = [3.0, 4.0, 5.0, -1.0]


def _make(L, layout, requires_grad=False):
    s = L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, dtype=L.float64), (3, 3),
                            requires_grad=requires_grad)
    if layout == "csr":
        s = s.to_sparse_csr()
    elif layout == "csc":
        s = s.to_sparse_csc()
    return s


def _np(x):
    if x.layout != ptcore.strided and x.layout != torch.strided:
        x = x.to_dense()
    return x.detach().numpy()


LAYOUTS = ["coo", "csr", "csc"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_isinstance_and_type_checks_as_torch(layout):
    for L in (ptcore, torch):
        s = _make(L, layout)
        d = L.ones(2)
        assert isinstance(s, L.Tensor) and L.is_tensor(s)
        assert s.layout is getattr(L, "sparse_" + layout)
        assert (s.is_sparse, s.is_sparse_csr) == (layout == "coo", layout == "csr")
        assert not d.is_sparse and not d.is_sparse_csr and d.layout is L.strided
        assert (s.shape, s.dim(), s.ndim, s.dtype, s.device.type, s.numel()) == \
            ((3, 3), 2, 2, L.float64, "cpu", 9)
        assert s.requires_grad is False and s.is_leaf
        # (isinstance against the legacy dense types: a sparse tensor is none)
        assert not isinstance(s, L.DoubleTensor) and isinstance(d, L.FloatTensor)


def test_isinstance_costs_dense_tensors_nothing_new():
    # a plain dense tensor is no SparseTensor, and the sparse class is the Tensor subclass
    from ptcore.sparse import SparseTensor
    assert issubclass(SparseTensor, ptcore.Tensor)
    assert type(ptcore.ones(1)) is ptcore.Tensor
    assert not isinstance(ptcore.ones(1), SparseTensor)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ops_mixing_sparse_and_dense_as_torch(layout):
    res = []
    for L in (ptcore, torch):
        s = _make(L, layout)
        d = L.arange(9, dtype=L.float64).reshape(3, 3)
        out = [L.mm(s, d), s @ d, L.matmul(s, d), s.matmul(d), L.sparse.mm(s, d),
               L.addmm(d, s, d), (s * 2), s.to_dense() + d]
        if layout == "coo":
            out += [L.add(d, s), d + s, s + s, L.sparse.sum(s), L.sparse.sum(s, 1)]
        res.append([_np(o) for o in out])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_autograd_through_values_as_torch(layout):
    grads = []
    for L in (ptcore, torch):
        v = L.tensor(VAL, dtype=L.float64, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3))
        if layout == "csr":
            s = s.to_sparse_csr()
        d = L.arange(6, dtype=L.float64).reshape(3, 2).requires_grad_()
        (L.sparse.mm(s, d) ** 2).sum().backward()
        grads.append((v.grad.numpy(), d.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# dense-only ops on a sparse tensor: torch's exception type, never a value
DENSE_ONLY = {"view": lambda s: s.view(9), "exp": lambda s: s.exp(),
              "numpy": lambda s: s.numpy(), "data_ptr": lambda s: s.data_ptr(),
              "untyped_storage": lambda s: s.untyped_storage(), "nbytes": lambda s: s.nbytes,
              "reshape": lambda s: s.reshape(9), "mean": lambda s: s.mean(),
              "view_as": lambda s: s.view_as(s)}


@pytest.mark.parametrize("name", sorted(DENSE_ONLY))
def test_dense_only_ops_raise_as_torch(name):
    fn = DENSE_ONLY[name]
    types = []
    for L in (ptcore, torch):
        with pytest.raises(Exception) as e:
            fn(_make(L, "coo"))
        types.append(type(e.value))
    assert types[0] is types[1], types


@pytest.mark.parametrize("layout", LAYOUTS)
def test_module_holding_sparse_buffer_and_parameter_as_torch(layout):
    res = []
    for L in (ptcore, torch):
        m = L.nn.Module()
        m.register_buffer("adj", _make(L, layout))
        # (torch deep-copies no compressed tensor: "Cannot access storage of SparseCsrTensorImpl")
        m2 = copy.deepcopy(m) if layout == "coo" else m
        assert m2.adj.layout is m.adj.layout
        m.w = L.nn.Parameter(_make(L, "coo"))
        assert isinstance(m.w, L.nn.Parameter) and isinstance(m.w, L.Tensor)
        assert repr(m.w).startswith("Parameter containing:\ntensor(indices=")
        assert [n for n, _ in m.named_buffers()] == ["adj"]
        assert [n for n, _ in m.named_parameters()] == ["w"]
        m.double()
        sd = m.state_dict()
        assert sd["adj"].layout is getattr(L, "sparse_" + layout)
        buf = io.BytesIO()
        L.save(sd, buf)
        buf.seek(0)
        back = L.load(buf)
        res.append([_np(m2.adj), _np(back["adj"]), _np(back["w"]), str(back["adj"].dtype)[-7:]])
    for a, b in zip(*res):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pickle_and_deepcopy_keep_layout_and_values(layout):
    s = _make(ptcore, layout)
    for r in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        assert type(r) is type(s) and r.layout is s.layout and r.shape == s.shape
        np.testing.assert_array_equal(_np(r), _np(s))
    if layout == "coo":     # (a leaf: the compressed forms are made by a differentiable op)
        assert copy.deepcopy(_make(ptcore, layout, requires_grad=True)).requires_grad


def test_data_assignment_changes_the_core_metadata():
    # Module.to(dtype) replaces a sparse parameter's data: its dtype (read by the core as
    # well as by the class) follows, as torch's
    for L in (ptcore, torch):
        p = L.nn.Parameter(_make(L, "coo").float())
        p.data = _make(L, "coo")
        assert p.dtype is L.float64 and p.layout is L.sparse_coo and p.shape == (3, 3)


def test_sparse_tensors_leave_the_torch_function_layer_off():
    # a sparse tensor does not switch the protocol's layer on (every dense op would pay
    # for it): the dispatch entries test their arguments while one lives, and stop after
    from ptcore._dispatch import torch_function as tf
    from ptcore._dispatch import dispatcher as D
    gc.collect()
    before = tf._tf_live_count()
    s = _make(ptcore, "coo")
    assert tf._tf_live_count() == before
    assert ptcore._C._layout_live_count() >= 1 and D.arg_scan[0]
    del s
    gc.collect()
    if ptcore._C._layout_live_count():
        pytest.skip("another test keeps a sparse tensor alive")
    assert D.arg_scan[0] == D.off_cpu_on[0]


def test_sparse_ops_run_inside_disable_torch_function_as_torch():
    # torch computes sparse tensors below the protocol (a dispatch key): a subclass's
    # __torch_function__ running func under DisableTorchFunctionSubclass still gets them
    res = []
    for L in (ptcore, torch):
        s, d = _make(L, "coo"), L.arange(9, dtype=L.float64).reshape(3, 3)
        with L._C.DisableTorchFunctionSubclass():
            a = L.mm(s, d)
        with L._C.DisableTorchFunction():
            b = L.sparse.mm(s, d)
        res.append((a.numpy(), b.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_retains_grad_and_storage_as_torch():
    for L in (ptcore, torch):
        s = _make(L, "coo", requires_grad=True)
        assert s.retains_grad is False
        with pytest.raises(NotImplementedError):
            s.storage_type()
        with pytest.raises(RuntimeError):
            s.data_ptr()


def test_dense_kernel_reached_by_a_sparse_tensor_raises_runtime_error_as_torch():
    # a path that reads a tensor's strided memory directly (no op of the protocol): the
    # core's wrapper storage raises instead of reading memory, naming the sparse layout
    for L in (ptcore, torch):
        with pytest.raises(RuntimeError) as e:
            L.utils.dlpack.to_dlpack(_make(L, "coo"))
        if L is ptcore:
            assert "sparse tensor (layout ptcore.sparse_coo) has no strided data" in str(e.value)
