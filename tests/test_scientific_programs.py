"""Pieces of the programs scientists write (a GNN over an edge list, sparse
adjacency matrices, ...) run with ``import ptcore as torch``, compared with
torch 2.13: the calls where ptcore behaved differently."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


# -- GNN message passing: scatter_reduce(reduce="prod") backward ---------------------------

@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("zeros", [False, True])
def test_scatter_reduce_prod_backward_matches_torch(include_self, zeros):
    x_np = np.array([[1.5, 2., 0.], [3., -1., 2.]])
    s_np = (np.array([[2., 0., 3., 0.5], [1., 2., 0., 0.]]) if zeros
            else np.array([[2., 1.5, 3., 0.5], [1., 2., -2., 4.]]))
    res = []
    for lib in (torch, ptcore):
        x = lib.tensor(x_np, requires_grad=True)
        s = lib.tensor(s_np, requires_grad=True)
        i = lib.tensor([[0, 0, 1, 1], [2, 1, 2, 2]])
        y = x.scatter_reduce(1, i, s, "prod", include_self=include_self)
        gx, gs = lib.autograd.grad((y * lib.arange(1., 4.)).sum(), (x, s))
        res.append([t.detach().numpy() for t in (y, gx, gs)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_scatter_reduce_prod_gradgradcheck():
    x = ptcore.tensor([[1.5, 2., 0.7], [3., -1., 2.]], dtype=ptcore.float64, requires_grad=True)
    s = ptcore.tensor([[2., 1.5, 3., 0.5], [1., 2., -2., 4.]], dtype=ptcore.float64,
                      requires_grad=True)
    i = ptcore.tensor([[0, 0, 1, 1], [2, 1, 2, 2]])
    for inc in (True, False):
        def f(a, b):
            return a.scatter_reduce(1, i, b, "prod", include_self=inc)
        assert ptcore.autograd.gradcheck(f, (x, s))
        assert ptcore.autograd.gradgradcheck(f, (x, s))


# -- print(adj) of a sparse adjacency matrix ------------------------------------------------

def _sparse_cases(lib):
    i = lib.tensor([[0, 1, 1], [1, 0, 1]])
    v = lib.tensor([1., 2., 3.], dtype=lib.float64)
    a = lib.sparse_coo_tensor(i, v, (2, 2), requires_grad=True)
    g = lib.from_numpy(np.arange(40000, dtype=np.float32).reshape(200, 200) / 7)
    return {
        "coo_f64_requires_grad": a,
        "csr": a.detach().to_sparse_csr(),
        "csc": a.detach().to_dense().to_sparse_csc(),
        "int_values": lib.sparse_coo_tensor(i, lib.tensor([1, 2, 3]), (2, 2)),
        "empty": lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0), (2, 2)),
        "uncoalesced": lib.sparse_coo_tensor(lib.tensor([[0, 0], [1, 1]]), lib.tensor([1., 2.]),
                                             (2, 2)),
        "summarized": g.to_sparse(),
        "summarized_csr": g.to_sparse_csr(),
        "3d": lib.from_numpy(np.eye(3, dtype=np.float32).reshape(3, 3, 1)).to_sparse(),
        "hybrid": lib.from_numpy(np.eye(3, dtype=np.float32)).to_sparse(1),
    }


def test_sparse_repr_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_cases = _sparse_cases(torch)
    p_cases = _sparse_cases(ptcore)
    for name, t in t_cases.items():
        assert repr(p_cases[name]).replace("ptcore", "torch") == repr(t), name
    assert str(p_cases["csr"]) == repr(p_cases["csr"])


# -- seq2seq: packing, padding and gradient clipping ----------------------------------------

def _packing(lib):
    R = lib.nn.utils.rnn
    rng = np.random.default_rng(0)
    ts = [lib.from_numpy(rng.standard_normal((n, 4)).astype(np.float32)).requires_grad_()
          for n in (3, 5, 2)]
    ps = R.pack_sequence(ts, enforce_sorted=False)
    padded, lens = R.pad_packed_sequence(ps, total_length=6)
    padded_bf, _ = R.pad_packed_sequence(R.pack_sequence(sorted(ts, key=len, reverse=True)),
                                         batch_first=True)
    ps_sorted = R.pack_sequence(sorted(ts, key=len, reverse=True))
    padded_sorted, _ = R.pad_packed_sequence(ps_sorted)
    pad_t = R.pad_sequence(ts)
    pad_b = R.pad_sequence(ts, batch_first=True, padding_value=-1.0, padding_side="left")
    w = lib.arange(1., 5.)
    ((padded * w).sum() + (padded_bf ** 2).sum() + (pad_t * w).sum() + pad_b.sum()
     + (ps.data ** 3).sum() + padded_sorted.sum()).backward()
    names = [type(t.grad_fn).__name__ for t in (ps.data, padded_sorted, padded_bf, padded,
                                                pad_t, pad_b)]
    return names, [padded, lens, padded_bf, pad_t, pad_b, ps.data] + [t.grad for t in ts]


def test_packing_and_padding_match_torch_values_grads_and_grad_fn():
    t_names, t_vals = _packing(torch)
    p_names, p_vals = _packing(ptcore)
    # print(packed) shows PackedSequence(data=tensor(..., grad_fn=<PackPaddedSequenceBackward0>)
    assert p_names == t_names
    for a, b in zip(t_vals, p_vals):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6)


def test_pack_padded_sequence_double_backward():
    R = ptcore.nn.utils.rnn
    x = ptcore.randn(4, 3, 2, dtype=ptcore.float64, requires_grad=True)
    assert ptcore.autograd.gradgradcheck(
        lambda a: R.pack_padded_sequence(a, [4, 2, 1]).data ** 2, (x,))


def test_get_total_norm_of_a_missing_gradient_raises_as_torch():
    for lib in (torch, ptcore):
        with pytest.raises(RuntimeError, match="but the 1-th Tensor is not"):
            lib.nn.utils.get_total_norm([lib.ones(2), None, lib.ones(1)])
