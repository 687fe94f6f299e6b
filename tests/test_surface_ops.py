"""histogramdd, segment_reduce, norm_except_dim, the root recurrent cells and the root
(ATen-form) embedding_bag, compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pt(a):
    return ptcore.tensor(a.detach().numpy())


def _close(got, exp, **kw):
    assert tuple(got.shape) == tuple(exp.shape)
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), exp.detach().numpy(), equal_nan=True, **kw)


def _same_error(fn_pt, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)):
        fn_pt()


# -- histogramdd --------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(bins=[3, 3]), dict(bins=4), dict(bins=(2, 5), density=True),
    dict(bins=[2, 3], range=[0.0, 1.0, -1.0, 1.0]), dict(bins=3, weight=True),
    dict(bins=3, weight=True, density=True),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histogramdd_counted_bins(kwargs, dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 2, generator=g, dtype=dtype)
    kw = dict(kwargs)
    if kw.pop("weight", False):
        kw["weight"] = torch.rand(50, generator=g, dtype=dtype)
    exp = torch.histogramdd(x, **kw)
    kwp = {k: (_pt(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    got = ptcore.histogramdd(_pt(x), **kwp)
    _close(got.hist, exp.hist, rtol=1e-5, atol=1e-6)
    assert len(got.bin_edges) == len(exp.bin_edges)
    for a, b in zip(got.bin_edges, exp.bin_edges):
        _close(a, b, rtol=1e-6)


def test_histogramdd_edges_3d_input_and_constant_data():
    x = torch.randn(4, 5, 3, generator=torch.Generator().manual_seed(1))
    edges = [torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([-3.0, 3.0]),
             torch.tensor([-0.5, 0.0, 0.5, 1.0])]
    exp = torch.histogramdd(x, bins=edges)
    got = ptcore.histogramdd(_pt(x), bins=[_pt(e) for e in edges])
    _close(got.hist, exp.hist)
    exp = torch.histogramdd(torch.ones(3, 2), bins=2)
    got = ptcore.histogramdd(ptcore.ones(3, 2), bins=2)
    _close(got.hist, exp.hist)
    _close(got.bin_edges[0], exp.bin_edges[0])


def test_histogramdd_errors():
    x, tx = ptcore.ones(3, 2), torch.ones(3, 2)
    _same_error(lambda: ptcore.histogramdd(ptcore.ones(3), bins=2),
                lambda: torch.histogramdd(torch.ones(3), bins=2))
    _same_error(lambda: ptcore.histogramdd(x.long(), bins=2),
                lambda: torch.histogramdd(tx.long(), bins=2))
    _same_error(lambda: ptcore.histogramdd(x, bins=[2, 2, 2]),
                lambda: torch.histogramdd(tx, bins=[2, 2, 2]))
    _same_error(lambda: ptcore.histogramdd(x, bins=2, range=[0.0, 1.0]),
                lambda: torch.histogramdd(tx, bins=2, range=[0.0, 1.0]))
    _same_error(lambda: ptcore.histogramdd(x, bins=2, weight=ptcore.ones(4)),
                lambda: torch.histogramdd(tx, bins=2, weight=torch.ones(4)))


# -- segment_reduce ----------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 7.0])
def test_segment_reduce_lengths_and_offsets(reduce, initial):
    d = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    lengths = torch.tensor([2, 0, 3, 1])
    exp = torch.segment_reduce(d, reduce, lengths=lengths, initial=initial)
    got = ptcore.segment_reduce(_pt(d), reduce, lengths=_pt(lengths), initial=initial)
    _close(got, exp, rtol=1e-6)
    offsets = torch.tensor([0, 2, 2, 5, 6])
    exp = torch.segment_reduce(d, reduce, offsets=offsets, initial=initial)
    got = ptcore.segment_reduce(_pt(d), reduce, offsets=_pt(offsets), initial=initial)
    _close(got, exp, rtol=1e-6)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_segment_reduce_trailing_and_batched_dims(reduce):
    g = torch.Generator().manual_seed(2)
    d = torch.randn(5, 3, dtype=torch.float64, generator=g)
    lengths = torch.tensor([1, 4])
    _close(ptcore.segment_reduce(_pt(d), reduce, lengths=_pt(lengths)),
           torch.segment_reduce(d, reduce, lengths=lengths), rtol=1e-12)
    d = torch.randn(2, 4, 3, generator=g)
    lengths = torch.tensor([[1, 3], [4, 0]])
    _close(ptcore.segment_reduce(_pt(d), reduce, lengths=_pt(lengths), axis=1),
           torch.segment_reduce(d, reduce, lengths=lengths, axis=1), rtol=1e-6)


def test_segment_reduce_gradient():
    d = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    lengths = torch.tensor([2, 3])
    torch.segment_reduce(d, "mean", lengths=lengths).sum().backward()
    pd = ptcore.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    ptcore.segment_reduce(pd, "mean", lengths=_pt(lengths)).sum().backward()
    _close(pd.grad, d.grad, rtol=1e-6)


def test_segment_reduce_errors():
    d, td = ptcore.ones(6), torch.ones(6)
    L, tL = ptcore.tensor([2, 0, 3, 1]), torch.tensor([2, 0, 3, 1])
    _same_error(lambda: ptcore.segment_reduce(d, "foo", lengths=L),
                lambda: torch.segment_reduce(td, "foo", lengths=tL))
    _same_error(lambda: ptcore.segment_reduce(d, "sum"), lambda: torch.segment_reduce(td, "sum"))
    _same_error(lambda: ptcore.segment_reduce(d, "sum", lengths=ptcore.tensor([1, 2])),
                lambda: torch.segment_reduce(td, "sum", lengths=torch.tensor([1, 2])))
    _same_error(lambda: ptcore.segment_reduce(d.int(), "sum", lengths=L),
                lambda: torch.segment_reduce(td.int(), "sum", lengths=tL))


# -- norm_except_dim --------------------------------------------------------------------------

@pytest.mark.parametrize("pow_, dim", [(2, 0), (2, 1), (2, -1), (3, 2), (1, 0)])
def test_norm_except_dim(pow_, dim):
    v = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(3))
    _close(ptcore.norm_except_dim(_pt(v), pow_, dim), torch.norm_except_dim(v, pow_, dim),
           rtol=1e-5)


# -- cells --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, gates", [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1),
                                         ("gru_cell", 3), ("lstm_cell", 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_functional_cells(name, gates, bias):
    g = torch.Generator().manual_seed(4)
    x, h, c = (torch.randn(3, 4, generator=g), torch.randn(3, 5, generator=g),
               torch.randn(3, 5, generator=g))
    w_ih = torch.randn(gates * 5, 4, generator=g, requires_grad=True)
    w_hh = torch.randn(gates * 5, 5, generator=g)
    b = [torch.randn(gates * 5, generator=g), torch.randn(gates * 5, generator=g)] if bias \
        else [None, None]
    hx = (h, c) if name == "lstm_cell" else h
    exp = getattr(torch, name)(x, hx, w_ih, w_hh, *b)
    pw_ih = _pt(w_ih.detach()).requires_grad_()
    phx = (_pt(h), _pt(c)) if name == "lstm_cell" else _pt(h)
    got = getattr(ptcore, name)(_pt(x), phx, pw_ih, _pt(w_hh),
                                *[None if t is None else _pt(t) for t in b])
    if name == "lstm_cell":
        assert isinstance(got, tuple) and len(got) == 2
        for a, e in zip(got, exp):
            _close(a, e, rtol=1e-5, atol=1e-6)
        exp, got = exp[0], got[0]
    else:
        _close(got, exp, rtol=1e-5, atol=1e-6)
    exp.sum().backward()
    got.sum().backward()
    _close(pw_ih.grad, w_ih.grad, rtol=1e-4, atol=1e-5)


def test_functional_cell_errors():
    x, h = torch.randn(3, 4), torch.randn(3, 5)
    w1, w2 = torch.randn(5, 4), torch.randn(5, 5)
    px, ph, pw1, pw2 = _pt(x), _pt(h), _pt(w1), _pt(w2)
    _same_error(lambda: ptcore.rnn_tanh_cell(px, ph, _pt(torch.randn(5, 3)), pw2),
                lambda: torch.rnn_tanh_cell(x, h, torch.randn(5, 3), w2))
    _same_error(lambda: ptcore.rnn_tanh_cell(px, ph[:2], pw1, pw2),
                lambda: torch.rnn_tanh_cell(x, h[:2], w1, w2))
    _same_error(lambda: ptcore.lstm_cell(px, ph, pw1, pw2), lambda: torch.lstm_cell(x, h, w1, w2))
    _same_error(lambda: ptcore.lstm_cell(px, (ph,), pw1, pw2),
                lambda: torch.lstm_cell(x, (h,), w1, w2))


# -- embedding_bag (ATen form) ------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_root_embedding_bag(mode, padding_idx):
    w = torch.randn(10, 3, generator=torch.Generator().manual_seed(5))
    i, o = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4, 6])
    exp = torch.embedding_bag(w, i, o, False, mode, False, None, False, padding_idx)
    got = ptcore.embedding_bag(_pt(w), _pt(i), _pt(o), False, mode, False, None, False,
                               padding_idx)
    assert len(got) == 4
    for a, e in zip(got, exp):
        _close(a, e, rtol=1e-6)


def test_root_embedding_bag_needs_offsets():
    w, i = torch.randn(10, 3), torch.tensor([[1, 2, 3], [4, 5, 6]])
    _same_error(lambda: ptcore.embedding_bag(_pt(w), _pt(i), None, False, 0, False, None, False),
                lambda: torch.embedding_bag(w, i, None, False, 0, False, None, False))


# -- whole-sequence recurrences -----------------------------------------------------------------

@pytest.mark.parametrize("name, cls", [("lstm", "LSTM"), ("gru", "GRU"), ("rnn_tanh", "RNN"),
                                       ("rnn_relu", "RNN")])
@pytest.mark.parametrize("bidirectional, batch_first, bias", [(False, False, True),
                                                              (True, True, True),
                                                              (False, True, False)])
def test_root_recurrences_padded(name, cls, bidirectional, batch_first, bias):
    torch.manual_seed(0)
    kw = dict(nonlinearity="relu") if name == "rnn_relu" else {}
    m = getattr(torch.nn, cls)(4, 6, num_layers=2, bidirectional=bidirectional, bias=bias,
                               batch_first=batch_first, **kw)
    params = list(m._flat_weights)
    D = 2 if bidirectional else 1
    x = torch.randn(3, 5, 4) if batch_first else torch.randn(5, 3, 4)
    h = torch.randn(2 * D, 3, 6)
    hx = (h, torch.randn(2 * D, 3, 6)) if name == "lstm" else h
    exp = getattr(torch, name)(x, hx, params, bias, 2, 0.0, False, bidirectional, batch_first)
    phx = tuple(_pt(t) for t in hx) if name == "lstm" else _pt(hx)
    got = getattr(ptcore, name)(_pt(x), phx, [_pt(p) for p in params], bias, 2, 0.0, False,
                                bidirectional, batch_first)
    assert len(got) == len(exp)
    for a, e in zip(got, exp):
        _close(a, e, rtol=1e-5, atol=1e-5)


def test_root_lstm_packed_and_projection():
    torch.manual_seed(1)
    m = torch.nn.LSTM(4, 6, proj_size=3)
    params = list(m._flat_weights)
    data, bs = torch.randn(6, 4), torch.tensor([3, 2, 1])
    h, c = torch.randn(1, 3, 3), torch.randn(1, 3, 6)
    exp = torch.lstm(data, bs, (h, c), params, True, 1, 0.0, False, False)
    got = ptcore.lstm(_pt(data), _pt(bs), (_pt(h), _pt(c)), [_pt(p) for p in params], True, 1,
                      0.0, False, False)
    for a, e in zip(got, exp):
        _close(a, e, rtol=1e-5, atol=1e-5)


# -- slice_inverse ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["rows", "strided", "cols", "none"])
def test_slice_inverse_views_the_base(case):
    base_t = torch.arange(12.0)
    base = ptcore.arange(12.0)
    if case == "rows":
        a, ta = base.reshape(6, 2), base_t.reshape(6, 2)
        args = (0, 1, 4)
        b, tb = a[1:4], ta[1:4]
    elif case == "strided":
        a, ta, args = base, base_t, (0, 2, 10, 2)
        b, tb = a[2:10:2], ta[2:10:2]
    else:
        a, ta = base.reshape(3, 4), base_t.reshape(3, 4)
        args = (1, 1, 3) if case == "cols" else (1, None, None)
        b, tb = a[:, 1:3], ta[:, 1:3]
    got, exp = ptcore.slice_inverse(b, a, *args), torch.slice_inverse(tb, ta, *args)
    assert tuple(got.shape) == tuple(exp.shape) and got.stride() == exp.stride()
    assert got.storage_offset() == exp.storage_offset()
    np.testing.assert_array_equal(got.numpy(), exp.numpy())
    assert got.data_ptr() == a.data_ptr()


def test_slice_inverse_outside_the_storage():
    _same_error(lambda: ptcore.slice_inverse(ptcore.ones(2), ptcore.zeros(6), 0, 0, 6, 3),
                lambda: torch.slice_inverse(torch.ones(2), torch.zeros(6), 0, 0, 6, 3))
