"""Results do not depend on ptcore.set_num_threads (issue 15): matmul, conv2d
(forward and backward), sum, mean, var, softmax and cumsum are bitwise
identical at 1, 2 and 4 threads, as PyTorch's are."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F


def _compute():
    ptcore.manual_seed(0)
    a = ptcore.randn(257, 513)
    b = ptcore.randn(513, 300)
    out = {"matmul": a @ b,
           "matmul_f64": a.double() @ b.double(),
           "bmm": ptcore.randn(3, 130, 200) @ ptcore.randn(3, 200, 260),
           "matvec": a @ ptcore.randn(513),
           # blocks wider than 128 columns, the last one ragged
           "matmul_wide": ptcore.randn(200, 300) @ ptcore.randn(300, 1100),
           # tiles of output rows (tall output) and of output columns with a
           # transposed operand
           "matmul_tall": ptcore.randn(800, 300) @ ptcore.randn(300, 400),
           "matmul_wide_t": ptcore.randn(64, 600) @ ptcore.randn(2000, 600).mT,
           "matmul_tall_t": ptcore.randn(600, 800).mT @ ptcore.randn(600, 256)}
    am = a.clone().requires_grad_()
    bm = b.clone().requires_grad_()
    (am @ bm).square().sum().backward()
    out["matmul_grad_a"], out["matmul_grad_b"] = am.grad, bm.grad
    x = ptcore.randn(4, 8, 40, 40, requires_grad=True)
    w = ptcore.randn(32, 8, 3, 3, requires_grad=True)
    bias = ptcore.randn(32, requires_grad=True)
    y = F.conv2d(x, w, bias, padding=1)
    out["conv2d"] = y
    y.backward(y.detach() * 0.01 + 0.5)
    out["conv2d_grad_x"], out["conv2d_grad_w"], out["conv2d_grad_b"] = x.grad, w.grad, bias.grad
    # the recurrent kernels' per-step and weight-gradient GEMMs are tiled too
    lstm = ptcore.nn.LSTM(64, 256, num_layers=2)
    seq = ptcore.randn(12, 20, 64, requires_grad=True)
    y, _ = lstm(seq)
    y.square().sum().backward()
    out["lstm"], out["lstm_grad_x"] = y, seq.grad
    out["lstm_grad_w"] = lstm.weight_hh_l0.grad
    big = ptcore.randn(1 << 20)
    m = ptcore.randn(64, 4099)
    out.update(sum=big.sum(), mean=big.mean(), var=big.var(), sum_dim=m.sum(1), sum_dim0=m.sum(0),
               mean_dim=m.mean(1), var_dim=m.var(0), softmax=m.softmax(1), softmax0=m.softmax(0),
               cumsum=big.cumsum(0), cumsum_dim=m.cumsum(1), sum_f64=big.double().sum())
    return {k: v.detach().numpy().copy() for k, v in out.items()}


@pytest.fixture
def restore_threads():
    n = ptcore.get_num_threads()
    yield
    ptcore.set_num_threads(n)


def test_results_independent_of_thread_count(restore_threads):
    results = {}
    for n in (1, 2, 4):
        ptcore.set_num_threads(n)
        results[n] = _compute()
    differ = [f"{k} at {n} threads" for n in (2, 4) for k in results[1]
              if not np.array_equal(results[1][k], results[n][k], equal_nan=True)]
    assert not differ, differ


def test_tiled_matmul_is_correct(restore_threads):
    torch = pytest.importorskip("torch")
    ptcore.manual_seed(1)
    for n in (1, 4):
        ptcore.set_num_threads(n)
        for shape_a, shape_b in (((300, 700), (700, 333)), ((129, 64), (64, 1000)),
                                 ((2, 257, 300), (300, 129)), ((64, 600), (600, 2000)),
                                 ((800, 300), (300, 400)), ((1000, 64), (64, 900))):
            a, b = ptcore.randn(shape_a, dtype=ptcore.float64), ptcore.randn(shape_b, dtype=ptcore.float64)
            np.testing.assert_allclose((a @ b).numpy(),
                                       (torch.from_numpy(a.numpy()) @ torch.from_numpy(b.numpy())).numpy(),
                                       rtol=1e-12, atol=1e-10)
            # a transposed operand takes the other block addressing
            np.testing.assert_allclose((b.mT @ a.mT).numpy(), (a @ b).mT.numpy(), rtol=1e-12, atol=1e-10)
            # transposed storage of each operand
            at, bt = a.mT.contiguous().mT, b.mT.contiguous().mT
            np.testing.assert_allclose((at @ bt).numpy(), (a @ b).numpy(), rtol=1e-12, atol=1e-10)


def test_gemm_split_probe_reports_a_width(restore_threads):
    # the probe runs on the first large product of each real type: a width of
    # 0 means fixed tiles, > 0 column tiles per thread (both thread-count
    # independent; the results test above checks the bits)
    from ptcore._ops.kernels import _blas
    ptcore.set_num_threads(2)
    for dt in (ptcore.float32, ptcore.float64):
        a = ptcore.randn(300, 400, dtype=dt)
        ref = a.numpy() @ a.numpy().T
        np.testing.assert_allclose((a @ a.mT).numpy(), ref, rtol=1e-5, atol=1e-3)
    widths = _blas._gemm_split_widths()
    assert all(isinstance(w, int) and w >= 0 for w in widths[:2]), widths
