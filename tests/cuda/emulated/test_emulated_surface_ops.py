"""The composite surface ops on the emulated CUDA device agree with the CPU: histogramdd,
segment_reduce, norm_except_dim, the root cells and recurrences, embedding_bag, lobpcg,
F.grouped_mm and F.linear_cross_entropy."""
import numpy as np
import pytest

import ptcore

F = ptcore.nn.functional


def _both(fn, *tensors):
    cpu = fn(*tensors)
    dev = fn(*[t.to("cuda") for t in tensors])
    return cpu, dev


def _check(cpu, dev, **kw):
    if isinstance(cpu, (tuple, list)):
        for a, b in zip(cpu, dev):
            _check(a, b, **kw)
        return
    assert dev.device.type == "cuda"
    np.testing.assert_allclose(dev.cpu().detach().numpy(), cpu.detach().numpy(), **kw)


@pytest.fixture
def g():
    ptcore.manual_seed(0)


def test_histogramdd_and_segment_reduce(g):
    x, w = ptcore.randn(40, 2), ptcore.rand(40)
    _check(*_both(lambda a, b: tuple(ptcore.histogramdd(a, bins=[3, 4], weight=b,
                                                        density=True)), x, w), rtol=1e-5)
    d, lengths = ptcore.randn(6, 3), ptcore.tensor([2, 0, 3, 1])
    for reduce in ("sum", "mean", "max", "min", "prod"):
        _check(*_both(lambda a, b: ptcore.segment_reduce(a, reduce, lengths=b, initial=0.5),
                      d, lengths), rtol=1e-5)


def test_norm_cells_recurrences_embedding_bag(g):
    v = ptcore.randn(3, 4, 5)
    _check(*_both(lambda a: ptcore.norm_except_dim(a, 2, 1), v), rtol=1e-5)
    x, h, c = ptcore.randn(3, 4), ptcore.randn(3, 5), ptcore.randn(3, 5)
    w_ih, w_hh = ptcore.randn(20, 4), ptcore.randn(20, 5)
    _check(*_both(lambda *t: ptcore.lstm_cell(t[0], (t[1], t[2]), t[3], t[4]),
                  x, h, c, w_ih, w_hh), rtol=1e-4, atol=1e-5)
    seq = ptcore.randn(5, 3, 4)
    params = [ptcore.randn(15, 4), ptcore.randn(15, 5), ptcore.randn(15), ptcore.randn(15)]
    _check(*_both(lambda s, hh, *p: ptcore.gru(s, hh, list(p), True, 1, 0.0, False, False,
                                                False), seq, h.unsqueeze(0), *params),
           rtol=1e-4, atol=1e-5)
    weight = ptcore.randn(10, 3)
    idx, offs = ptcore.tensor([1, 2, 4, 5, 4, 3, 2, 9]), ptcore.tensor([0, 4, 6])
    for mode in (0, 1, 2):
        _check(*_both(lambda a, b, c: ptcore.embedding_bag(a, b, c, False, mode),
                      weight, idx, offs), rtol=1e-6)


def test_lobpcg_grouped_mm_linear_cross_entropy(g):
    A = ptcore.diag(ptcore.arange(1.0, 31.0, dtype=ptcore.float64))
    X0 = ptcore.randn(30, 2, dtype=ptcore.float64)
    cpu, dev = _both(lambda a, x0: ptcore.lobpcg(a, X=x0)[0], A, X0)
    _check(cpu, dev, rtol=1e-8)
    a, b = ptcore.randn(8, 4), ptcore.randn(3, 4, 5)
    offs = ptcore.tensor([2, 5, 8], dtype=ptcore.int32)
    _check(*_both(lambda p, q, o: F.grouped_mm(p, q, offs=o), a, b, offs), rtol=1e-5, atol=1e-5)
    x, W, t = ptcore.randn(6, 4), ptcore.randn(5, 4), ptcore.tensor([0, 1, 4, 2, 3, 0])
    _check(*_both(lambda p, q, r: F.linear_cross_entropy(p, q, r, label_smoothing=0.1),
                  x, W, t), rtol=1e-5)
