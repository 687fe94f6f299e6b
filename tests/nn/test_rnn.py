"""RNN / LSTM / GRU, their cells and nn.utils.rnn packing, against PyTorch."""
import itertools

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
from ptcore.nn.utils import rnn as prnn

try:
    import torch
    import torch.nn.utils.rnn as trnn
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

DTYPES = [("float32", 2e-5, 2e-6), ("float64", 1e-10, 1e-12)]


def _pt(t):
    return ptcore.from_numpy(t.detach().cpu().numpy().copy())


def _close(a, b, rtol, atol):
    a = a.detach().numpy() if isinstance(a, ptcore.Tensor) else np.asarray(a)
    b = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _autograd_works():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


needs_autograd = pytest.mark.skipif(not _autograd_works(), reason="autograd not available")


def _copy_module(tmod, pmod):
    sd = {k: _pt(v) for k, v in tmod.state_dict().items()}
    assert list(pmod.state_dict().keys()) == list(sd.keys())
    for k, v in pmod.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    pmod.load_state_dict(sd)


def _make(kind, dt, **kw):
    torch.manual_seed(0)
    tcls = {"RNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[kind]
    pcls = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}[kind]
    tm = tcls(dtype=getattr(torch, dt), **kw)
    pm = pcls(dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tm.eval()
    pm.eval()
    return tm, pm


CONFIGS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("LSTM", {"proj_size": 3}),
    ("GRU", {}),
]


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("kind,extra", CONFIGS)
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,bias",
                         list(itertools.product([1, 2], [False, True], [False, True],
                                                [True, False]))[::3] + [(2, True, True, True)])
def test_rnn_matches_torch(dt, rtol, atol, kind, extra, num_layers, bidirectional, batch_first,
                           bias):
    I, H, T, B = 4, 5, 6, 3
    tm, pm = _make(kind, dt, input_size=I, hidden_size=H, num_layers=num_layers,
                   bidirectional=bidirectional, batch_first=batch_first, bias=bias, **extra)
    g = torch.Generator().manual_seed(1)
    tdt = getattr(torch, dt)
    x = torch.randn(*((B, T, I) if batch_first else (T, B, I)), generator=g, dtype=tdt)
    D = 2 if bidirectional else 1
    hout = extra.get("proj_size", 0) or H
    h0 = torch.randn(num_layers * D, B, hout, generator=g, dtype=tdt)
    c0 = torch.randn(num_layers * D, B, H, generator=g, dtype=tdt)
    for with_state in (False, True):
        if kind == "LSTM":
            targs = ((h0, c0),) if with_state else ()
            pargs = ((_pt(h0), _pt(c0)),) if with_state else ()
        else:
            targs = (h0,) if with_state else ()
            pargs = (_pt(h0),) if with_state else ()
        to, th = tm(x, *targs)
        po, ph = pm(_pt(x), *pargs)
        _close(po, to, rtol, atol)
        if kind == "LSTM":
            _close(ph[0], th[0], rtol, atol)
            _close(ph[1], th[1], rtol, atol)
        else:
            _close(ph, th, rtol, atol)


@needs_torch
@pytest.mark.parametrize("kind,extra", CONFIGS)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_rnn_unbatched(kind, extra, bidirectional):
    tm, pm = _make(kind, "float64", input_size=3, hidden_size=4, num_layers=2,
                   bidirectional=bidirectional, **extra)
    x = torch.randn(5, 3, dtype=torch.float64)
    to, th = tm(x)
    po, ph = pm(_pt(x))
    _close(po, to, 1e-10, 1e-12)
    if kind == "LSTM":
        _close(ph[0], th[0], 1e-10, 1e-12)
        _close(ph[1], th[1], 1e-10, 1e-12)
        D = 2 if bidirectional else 1
        h0 = torch.randn(2 * D, extra.get("proj_size", 0) or 4, dtype=torch.float64)
        c0 = torch.randn(2 * D, 4, dtype=torch.float64)
        to, th = tm(x, (h0, c0))
        po, ph = pm(_pt(x), (_pt(h0), _pt(c0)))
        _close(ph[1], th[1], 1e-10, 1e-12)
    else:
        _close(ph, th, 1e-10, 1e-12)
        D = 2 if bidirectional else 1
        h0 = torch.randn(2 * D, 4, dtype=torch.float64)
        to, th = tm(x, h0)
        po, ph = pm(_pt(x), _pt(h0))
        _close(po, to, 1e-10, 1e-12)
        _close(ph, th, 1e-10, 1e-12)


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("kind,extra", CONFIGS)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_rnn_packed_sequence(dt, rtol, atol, kind, extra, bidirectional, enforce_sorted):
    I, H = 3, 4
    tm, pm = _make(kind, dt, input_size=I, hidden_size=H, num_layers=2,
                   bidirectional=bidirectional, **extra)
    tdt = getattr(torch, dt)
    g = torch.Generator().manual_seed(5)
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    seqs = [torch.randn(n, I, generator=g, dtype=tdt) for n in lengths]
    tp = trnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
    pp = prnn.pack_sequence([_pt(s) for s in seqs], enforce_sorted=enforce_sorted)
    D = 2 if bidirectional else 1
    h0 = torch.randn(2 * D, 4, extra.get("proj_size", 0) or H, generator=g, dtype=tdt)
    c0 = torch.randn(2 * D, 4, H, generator=g, dtype=tdt)
    for with_state in (False, True):
        if kind == "LSTM":
            targs = ((h0, c0),) if with_state else ()
            pargs = ((_pt(h0), _pt(c0)),) if with_state else ()
        else:
            targs = (h0,) if with_state else ()
            pargs = (_pt(h0),) if with_state else ()
        to, th = tm(tp, *targs)
        po, ph = pm(pp, *pargs)
        assert isinstance(po, prnn.PackedSequence)
        _close(po.data, to.data, rtol, atol)
        _close(po.batch_sizes, to.batch_sizes, 0, 0)
        tpad, tl = trnn.pad_packed_sequence(to, batch_first=True)
        ppad, pl = prnn.pad_packed_sequence(po, batch_first=True)
        _close(ppad, tpad, rtol, atol)
        _close(pl, tl, 0, 0)
        if kind == "LSTM":
            _close(ph[0], th[0], rtol, atol)
            _close(ph[1], th[1], rtol, atol)
        else:
            _close(ph, th, rtol, atol)


def test_rnn_parameter_names_shapes_init():
    m = nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=2)
    names = [n for n, _ in m.named_parameters()]
    expected = []
    for layer in range(2):
        for sfx in ("", "_reverse"):
            expected += [f"{p}_l{layer}{sfx}" for p in
                         ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
    assert names == expected
    assert tuple(m.weight_ih_l0.shape) == (32, 3)
    assert tuple(m.weight_hh_l0.shape) == (32, 2)
    assert tuple(m.weight_ih_l1_reverse.shape) == (32, 4)
    assert tuple(m.weight_hr_l1.shape) == (2, 8)
    bound = 1 / np.sqrt(8)
    for _, p in m.named_parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound and a.std() > 0
    g = nn.GRU(3, 5, bias=False)
    assert [n for n, _ in g.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(g.weight_ih_l0.shape) == (15, 3)
    assert len(g.all_weights) == 1 and len(g.all_weights[0]) == 2
    r = nn.RNN(3, 5, 2, "relu")
    assert r.nonlinearity == "relu" and r.num_layers == 2


@needs_torch
def test_rnn_repr_matches_torch():
    for kw in [dict(), dict(num_layers=2, bidirectional=True, batch_first=True, dropout=0.5),
               dict(bias=False, proj_size=2)]:
        assert repr(nn.LSTM(3, 4, **kw)) == repr(torch.nn.LSTM(3, 4, **kw)).replace("torch", "")
    assert repr(nn.GRUCell(3, 4, bias=False)) == repr(torch.nn.GRUCell(3, 4, bias=False))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == \
        repr(torch.nn.RNNCell(3, 4, nonlinearity="relu"))


def test_rnn_errors():
    with pytest.raises(ValueError, match="proj_size argument is only supported"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.GRU(3, 4.0)
    with pytest.warns(UserWarning, match="dropout option adds dropout"):
        nn.GRU(3, 4, dropout=0.2)
    m = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        m(ptcore.randn(5, 2, 6))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        m(ptcore.randn(5))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size"):
        m(ptcore.randn(5, 2, 3), (ptcore.zeros(1, 3, 4), ptcore.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="Expected hidden\\[1\\] size"):
        m(ptcore.randn(5, 2, 3), (ptcore.zeros(1, 2, 4), ptcore.zeros(1, 2, 5)))
    with pytest.raises(ValueError, match=r"RNN input dtype \(ptcore.float64\) does not match "
                                         r"weight dtype \(ptcore.float32\)"):
        m(ptcore.randn(5, 2, 3, dtype=ptcore.float64))
    g = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        g(ptcore.randn(5, 2, 3), ptcore.zeros(2, 2, 4))
    with pytest.raises(RuntimeError, match="hx should also be 3-D"):
        g(ptcore.randn(5, 2, 3), ptcore.zeros(2, 4))


def test_rnn_dropout_between_layers_in_training():
    ptcore.manual_seed(0)
    m = nn.GRU(3, 16, num_layers=2, dropout=0.5)
    x = ptcore.randn(4, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    c, _ = m(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


# ---------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("cls,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                    ("LSTMCell", {}), ("GRUCell", {}),
                                    ("GRUCell", {"bias": False}), ("LSTMCell", {"bias": False})])
def test_cells_match_torch(dt, rtol, atol, cls, kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 5, dtype=getattr(torch, dt), **kw)
    pm = getattr(nn, cls)(4, 5, dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tdt = getattr(torch, dt)
    x = torch.randn(3, 4, dtype=tdt)
    h = torch.randn(3, 5, dtype=tdt)
    c = torch.randn(3, 5, dtype=tdt)
    for xi, hi, ci in [(x, h, c), (x[0], h[0], c[0])]:
        if cls == "LSTMCell":
            th, tc = tm(xi, (hi, ci))
            ph, pc = pm(_pt(xi), (_pt(hi), _pt(ci)))
            _close(ph, th, rtol, atol)
            _close(pc, tc, rtol, atol)
            th, tc = tm(xi)
            ph, pc = pm(_pt(xi))
            _close(pc, tc, rtol, atol)
        else:
            _close(pm(_pt(xi), _pt(hi)), tm(xi, hi), rtol, atol)
            _close(pm(_pt(xi)), tm(xi), rtol, atol)


def test_cell_errors():
    m = nn.GRUCell(4, 5)
    with pytest.raises(ValueError, match="Expected input to be 1D or 2D"):
        m(ptcore.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size"):
        m(ptcore.randn(2, 3))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size"):
        m(ptcore.randn(2, 4), ptcore.randn(2, 3))
    with pytest.raises(RuntimeError, match="doesn't match hidden0 batch size"):
        m(ptcore.randn(2, 4), ptcore.randn(3, 5))


# ---------------------------------------------------------------------------
# nn.utils.rnn
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    seqs = [torch.randn(n, 2, 3) for n in (3, 5, 1)]
    exp = trnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-2.0,
                            padding_side=padding_side)
    got = prnn.pad_sequence([_pt(s) for s in seqs], batch_first=batch_first,
                            padding_value=-2.0, padding_side=padding_side)
    _close(got, exp, 0, 0)
    ints = [torch.arange(n) for n in (2, 4)]
    _close(prnn.pad_sequence([_pt(s) for s in ints]), trnn.pad_sequence(ints), 0, 0)


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_pad_roundtrip(batch_first, enforce_sorted):
    lengths = [5, 3, 3, 2] if enforce_sorted else [3, 5, 2, 3]
    x = torch.randn(*((4, 5, 2) if batch_first else (5, 4, 2)))
    for lens in (lengths, torch.tensor(lengths)):
        tp = trnn.pack_padded_sequence(x, lens, batch_first=batch_first,
                                       enforce_sorted=enforce_sorted)
        plen = lens if isinstance(lens, list) else _pt(lens)
        pp = prnn.pack_padded_sequence(_pt(x), plen, batch_first=batch_first,
                                       enforce_sorted=enforce_sorted)
        _close(pp.data, tp.data, 0, 0)
        _close(pp.batch_sizes, tp.batch_sizes, 0, 0)
        assert pp.batch_sizes.dtype == ptcore.int64
        if enforce_sorted:
            assert pp.sorted_indices is None and pp.unsorted_indices is None
        else:
            _close(pp.sorted_indices, tp.sorted_indices, 0, 0)
            _close(pp.unsorted_indices, tp.unsorted_indices, 0, 0)
        for total in (None, 7):
            tpad, tl = trnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=9.0,
                                                total_length=total)
            ppad, pl = prnn.pad_packed_sequence(pp, batch_first=batch_first, padding_value=9.0,
                                                total_length=total)
            _close(ppad, tpad, 0, 0)
            _close(pl, tl, 0, 0)
            assert pl.dtype == ptcore.int64
    unp = prnn.unpack_sequence(pp)
    ref = trnn.unpack_sequence(tp)
    assert len(unp) == len(ref)
    for a, b in zip(unp, ref):
        _close(a, b, 0, 0)
    padded = prnn.pad_sequence(unp)
    for a, b in zip(prnn.unpad_sequence(padded, ptcore.tensor(lengths)), ref):
        _close(a, b, 0, 0)


def test_pack_errors():
    x = ptcore.randn(3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        prnn.pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        prnn.pack_padded_sequence(x, [3, 0])
    with pytest.raises(RuntimeError, match="equal to batch_size"):
        prnn.pack_padded_sequence(x, [3])
    with pytest.raises(RuntimeError, match="empty list"):
        prnn.pad_sequence([])
    with pytest.raises(RuntimeError, match="padding_side"):
        prnn.pad_sequence([ptcore.ones(2)], padding_side="up")
    p = prnn.pack_sequence([ptcore.ones(3), ptcore.ones(2)])
    with pytest.raises(ValueError, match="total_length"):
        prnn.pad_packed_sequence(p, total_length=2)


def test_packed_sequence_methods():
    p = prnn.pack_sequence([ptcore.ones(3, 2), ptcore.ones(1, 2)])
    d = p.double()
    assert d.data.dtype == ptcore.float64 and d.batch_sizes.dtype == ptcore.int64
    assert p.to(ptcore.float32) is p
    assert not p.is_cuda
    assert isinstance(p, tuple) and len(p) == 4
    q = prnn.PackedSequence(p.data, p.batch_sizes, ptcore.tensor([1, 0]))
    np.testing.assert_array_equal(q.unsorted_indices.numpy(), [1, 0])
    np.testing.assert_array_equal(
        prnn.invert_permutation(ptcore.tensor([2, 0, 1])).numpy(), [1, 2, 0])


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------

@needs_torch
@needs_autograd
@pytest.mark.parametrize("kind,extra", CONFIGS)
@pytest.mark.parametrize("packed", [False, True])
def test_rnn_gradients_match_torch(kind, extra, packed):
    I, H = 3, 4
    tm, pm = _make(kind, "float64", input_size=I, hidden_size=H, num_layers=2,
                   bidirectional=True, **extra)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(5, 3, I, generator=g, dtype=torch.float64, requires_grad=True)
    px = _pt(x).requires_grad_()
    hout = extra.get("proj_size", 0) or H
    h0 = torch.randn(4, 3, hout, generator=g, dtype=torch.float64, requires_grad=True)
    ph0 = _pt(h0).requires_grad_()
    if kind == "LSTM":
        c0 = torch.randn(4, 3, H, generator=g, dtype=torch.float64, requires_grad=True)
        pc0 = _pt(c0).requires_grad_()
        targ, parg = (h0, c0), (ph0, pc0)
    else:
        targ, parg = h0, ph0
    if packed:
        lengths = [5, 2, 4]
        tin = trnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        pin = prnn.pack_padded_sequence(px, lengths, enforce_sorted=False)
    else:
        tin, pin = x, px
    to, th = tm(tin, targ)
    po, ph = pm(pin, parg)
    if packed:
        to, po = to.data, po.data
    wt = torch.randn(to.shape, generator=g, dtype=torch.float64)
    tloss = (to * wt).sum() + (th[0] if kind == "LSTM" else th).sum() * 0.5
    ploss = (po * _pt(wt)).sum() + (ph[0] if kind == "LSTM" else ph).sum() * 0.5
    if kind == "LSTM":
        tloss = tloss + th[1].pow(2).sum()
        ploss = ploss + ph[1].pow(2).sum()
    tloss.backward()
    ploss.backward()
    _close(px.grad, x.grad, 1e-9, 1e-10)
    _close(ph0.grad, h0.grad, 1e-9, 1e-10)
    if kind == "LSTM":
        _close(pc0.grad, c0.grad, 1e-9, 1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        _close(p.grad, tparams[name].grad, 1e-9, 1e-10)


@needs_torch
@needs_autograd
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradients(cls):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 5, dtype=torch.float64)
    pm = getattr(nn, cls)(4, 5, dtype=ptcore.float64)
    _copy_module(tm, pm)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    px = _pt(x).requires_grad_()
    to = tm(x)
    po = pm(px)
    if cls == "LSTMCell":
        (to[0].sum() + to[1].pow(2).sum()).backward()
        (po[0].sum() + po[1].pow(2).sum()).backward()
    else:
        to.pow(2).sum().backward()
        po.pow(2).sum().backward()
    _close(px.grad, x.grad, 1e-9, 1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        _close(p.grad, tparams[name].grad, 1e-9, 1e-10)
