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


# -- print(out) of models: grad_fn of linear layers, of writes into tensors ------------------

def _linear_nodes(lib):
    F = lib.nn.functional
    w = lib.ones(4, 3, requires_grad=True)
    b = lib.ones(4, requires_grad=True)
    xs = {"2d": lib.ones(2, 3), "3d": lib.ones(2, 5, 3),
          "3d_transposed": lib.ones(5, 2, 3).transpose(0, 1), "4d": lib.ones(2, 2, 5, 3),
          "1d": lib.ones(3)}
    out = {}
    for name, x in xs.items():
        out[name] = type(F.linear(x, w, b).grad_fn).__name__
        out[name + "_no_bias"] = type(F.linear(x, w).grad_fn).__name__
    return out


def test_linear_grad_fn_names_match_torch():
    # a GPT's bias-free lm_head on (B, T, C) prints grad_fn=<UnsafeViewBackward0>
    assert _linear_nodes(ptcore) == _linear_nodes(torch)


def test_matmul_folded_weight_gradient_matches_torch():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((3, 4, 5))
    w_np = rng.standard_normal((6, 5))
    res = []
    for lib in (torch, ptcore):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        y = lib.nn.functional.linear(x.transpose(0, 1), w)
        (y * lib.arange(6.)).sum().backward()
        res.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    x = ptcore.randn(2, 3, 4, dtype=ptcore.float64, requires_grad=True)
    w = ptcore.randn(4, 5, dtype=ptcore.float64, requires_grad=True)
    assert ptcore.autograd.gradgradcheck(lambda a, b: a @ b, (x, w))


_SETITEM_CASES = {
    "row": lambda lib, y, s: y.__setitem__((0, 1), s),
    "broadcast": lambda lib, y, s: y.__setitem__((slice(None), 1), s),
    "leading_ones": lambda lib, y, s: y.__setitem__((0, 1), s.view(1, 1, 4)),
    "zero_dim_value": lambda lib, y, s: y.__setitem__((0, slice(0, 2)), s[1]),
    "whole_slice": lambda lib, y, s: y.__setitem__(slice(None), s),
    "ellipsis": lambda lib, y, s: y.__setitem__(Ellipsis, s * 2),
    "step_number": lambda lib, y, s: y.__setitem__((slice(None), slice(None, None, 2)), 7.0),
    "whole_number": lambda lib, y, s: y.__setitem__(slice(None), 7.0),
    "none_number": lambda lib, y, s: y.__setitem__((None, 0), 7.0),
    "element": lambda lib, y, s: y.__setitem__((1, 1, 1), 3),
    "tensor_int_index": lambda lib, y, s: y.__setitem__(lib.tensor(1), s),
    "into_a_view": lambda lib, y, s: y[1].__setitem__((slice(None), 0), s[:3]),
    "advanced": lambda lib, y, s: y.__setitem__((slice(None), [0, 2]), s),
    "no_grad_value": lambda lib, y, s: y.__setitem__(0, lib.ones(3, 4)),
}


@pytest.mark.parametrize("case", sorted(_SETITEM_CASES))
def test_setitem_grad_fn_values_and_gradients_match_torch(case):
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w_np = rng.standard_normal((2, 3, 4)).astype(np.float32)
    res = []
    for lib in (torch, ptcore):
        a = lib.tensor(a_np, requires_grad=True)
        s = lib.arange(10., 14.).requires_grad_()
        y = a * 2
        _SETITEM_CASES[case](lib, y, s)
        name = type(y.grad_fn).__name__
        (y * lib.tensor(w_np)).sum().backward()
        res.append((name, y.detach().numpy(), a.grad.numpy(),
                    None if s.grad is None else s.grad.numpy()))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[0][1:], res[1][1:]):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(b, a, rtol=1e-6)


def test_seq2seq_outputs_buffer_filled_step_by_step_matches_torch():
    res = []
    for lib in (torch, ptcore):
        src = lib.arange(4.).requires_grad_()
        out = lib.zeros(3, 2, 4)
        for t in range(3):
            out[t] = src.expand(2, 4) * (t + 1)
        name = type(out.grad_fn).__name__
        out.sum().backward()
        res.append((name, out.detach().numpy(), src.grad.numpy()))
    assert res[1][0] == res[0][0] == "CopySlices"
    np.testing.assert_allclose(res[1][1], res[0][1])
    np.testing.assert_allclose(res[1][2], res[0][2])


def _inplace_nodes(lib):
    a = lib.ones(3, 4, requires_grad=True)
    out = {}
    for name, fn in {"zero_": lambda y: y.zero_(), "fill_number": lambda y: y.fill_(2.),
                     "fill_tensor": lambda y: y.fill_(lib.tensor(2.)),
                     "fill_grad_tensor": lambda y: y.fill_(lib.tensor(2., requires_grad=True)),
                     "copy_": lambda y: y.copy_(lib.ones(4)),
                     "copy_grad": lambda y: y.copy_(lib.ones(4, requires_grad=True))}.items():
        y = a * 1
        fn(y)
        out[name] = (type(y.grad_fn).__name__,
                     [type(n[0]).__name__ for n in y.grad_fn.next_functions])
        out[name + "_grad"] = lib.autograd.grad(y.sum(), a)[0].tolist()
    return out


def test_fill_zero_copy_nodes_match_torch():
    # a zero gradient still reaches what was overwritten (grad() does not call it unused)
    assert _inplace_nodes(ptcore) == _inplace_nodes(torch)


def test_view_regenerated_after_inplace_is_as_strided_as_torch():
    for lib in (torch, ptcore):
        a = lib.ones(2, 6, requires_grad=True)
        b = a * 2
        v, t = b.view(3, 4), b.t()
        b.mul_(2)                 # the views' history is regenerated from the base
        assert type(v.grad_fn).__name__ == type(t.grad_fn).__name__ == "AsStridedBackward0"
        b = a * 2
        v = b.view(3, 4)
        v.mul_(3)
        assert type(v.grad_fn).__name__ == "AsStridedBackward0"
        assert type(b.grad_fn).__name__ == "CopySlices"


def test_index_with_a_0d_integer_tensor_is_a_view_as_torch():
    res = []
    for lib in (torch, ptcore):
        a = lib.ones(3, 4, requires_grad=True)
        y = a * 1
        row = y[lib.tensor(1)]
        row.mul_(2)               # writes through to y, and its history
        assert row._base is y
        y.sum().backward()
        res.append(a.grad.numpy())
    np.testing.assert_allclose(res[1], res[0])
