"""The packed-weight float32 recurrent kernels (ptcore/_ops/kernels/include/ptc_rnn_packed.h:
W_hh packed once per call, each step's product in AVX2+FMA register tiles,
the LSTM gate math fused) against PyTorch: values and every gradient of
LSTM and GRU layers for hidden sizes that are and are not multiples of the
vector width, batch 1, with and without biases, both directions; the packed
and the BLAS path agree; results are bit-identical at 1 and 2 threads."""
import numpy as np
import pytest

import ptcore
from ptcore.nn.functional import _rnn as R

torch = pytest.importorskip("torch")


def _K():
    return R._kernels()


@pytest.fixture(autouse=True)
def _restore():
    old_t, old_p = torch.get_num_threads(), ptcore.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old_t)
    ptcore.set_num_threads(old_p)
    _K()._set_packed(True)


def _cpu_has_avx2_fma():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln for ln in f if ln.startswith("flags")), "").split()
    except OSError:
        return None
    return "avx2" in flags and "fma" in flags


def test_packed_kernels_available_where_the_cpu_has_them():
    has = _cpu_has_avx2_fma()
    if has is None:
        pytest.skip("no /proc/cpuinfo")
    assert _K()._packed_available() == has
    if not has:
        assert _K()._packed_weight_grad_available() is False
    prev = _K()._set_packed(False)
    assert prev is True
    assert _K()._packed_available() is False
    assert _K()._packed_weight_grad_available() is False
    _K()._set_packed(True)


def _weights(kind, E, H, L, bidir, bias, rng):
    tm = getattr(torch.nn, kind)(E, H, L, bias=bias, bidirectional=bidir)
    return [rng.uniform(-0.4, 0.4, tuple(p.shape)).astype(np.float32) for p in tm.parameters()]


def _run(lib, kind, E, H, L, bidir, bias, params, x, h0, c0):
    m = getattr(lib.nn, kind)(E, H, L, bias=bias, bidirectional=bidir)
    with lib.no_grad():
        for p, v in zip(m.parameters(), params):
            p.copy_(lib.from_numpy(v.copy()))
    xx = lib.from_numpy(x.copy()).requires_grad_()
    hh = lib.from_numpy(h0.copy()).requires_grad_()
    if kind == "LSTM":
        cc = lib.from_numpy(c0.copy()).requires_grad_()
        out, (hn, cn) = m(xx, (hh, cc))
        loss = (out * out).sum() + (hn * 1.5).sum() + (cn * cn).sum()
        leaves = [xx, hh, cc]
        outs = [out, hn, cn]
    else:
        out, hn = m(xx, hh)
        loss = (out * out).sum() + (hn * 1.5).sum()
        leaves = [xx, hh]
        outs = [out, hn]
    loss.backward()
    res = [o.detach().numpy().copy() for o in outs]
    res += [t.grad.numpy().copy() for t in leaves]
    res += [p.grad.numpy().copy() for p in m.parameters()]
    return res


def _case(kind, E, H, L, T, B, bidir, bias, seed=0):
    rng = np.random.default_rng(seed)
    params = _weights(kind, E, H, L, bidir, bias, rng)
    D = 2 if bidir else 1
    x = rng.standard_normal((T, B, E)).astype(np.float32)
    h0 = (0.5 * rng.standard_normal((L * D, B, H))).astype(np.float32)
    c0 = (0.5 * rng.standard_normal((L * D, B, H))).astype(np.float32)
    return params, x, h0, c0


SIZES = [
    # E, H, L, T, B, bidirectional, bias
    (16, 13, 1, 6, 1, False, True),       # H not a multiple of 8, batch 1
    (10, 37, 2, 5, 3, True, True),        # ragged last block, both directions
    (8, 8, 1, 4, 7, False, False),        # one exact block, no biases
    (5, 24, 1, 9, 13, True, False),       # 16 + 8 columns, batch not a multiple of the row tile
    (12, 64, 2, 7, 4, False, True),
    (64, 128, 2, 12, 20, False, True),    # the workloads' size (threads share the steps)
]


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("E,H,L,T,B,bidir,bias", SIZES)
def test_packed_matches_torch(kind, E, H, L, T, B, bidir, bias):
    params, x, h0, c0 = _case(kind, E, H, L, T, B, bidir, bias)
    ptcore.set_num_threads(1)
    got = _run(ptcore, kind, E, H, L, bidir, bias, params, x, h0, c0)
    want = _run(torch, kind, E, H, L, bidir, bias, params, x, h0, c0)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.float32
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5 * scale)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("E,H,L,T,B,bidir,bias", [SIZES[1], SIZES[3], SIZES[5]])
def test_packed_and_blas_paths_agree(kind, E, H, L, T, B, bidir, bias):
    params, x, h0, c0 = _case(kind, E, H, L, T, B, bidir, bias, seed=3)
    ptcore.set_num_threads(1)
    packed = _run(ptcore, kind, E, H, L, bidir, bias, params, x, h0, c0)
    _K()._set_packed(False)
    blas = _run(ptcore, kind, E, H, L, bidir, bias, params, x, h0, c0)
    _K()._set_packed(True)
    for a, b in zip(packed, blas):
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5 * scale)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("E,H,T,B", [(32, 128, 8, 12), (16, 136, 5, 20), (8, 256, 4, 20),
                                     (8, 96, 4, 3)])
def test_packed_thread_count_independent(kind, E, H, T, B):
    # sizes at which the threads share a call's batch rows (T * B * G * H >=
    # 2**22 and B >= 10; 3 threads: 3 row ranges of 20), ragged hidden sizes
    # (136), and a batch too small to share
    params, x, h0, c0 = _case(kind, E, H, 1, T, B, True, True, seed=5)
    ptcore.set_num_threads(1)
    one = _run(ptcore, kind, E, H, 1, True, True, params, x, h0, c0)
    ptcore.set_num_threads(2)
    two = _run(ptcore, kind, E, H, 1, True, True, params, x, h0, c0)
    ptcore.set_num_threads(3)
    three = _run(ptcore, kind, E, H, 1, True, True, params, x, h0, c0)
    for a, b, c in zip(one, two, three):
        assert np.array_equal(a, b)
        assert np.array_equal(a, c)


def test_packed_lstm_saturated_gates_and_truncated_bptt():
    # large pre-activations (sigmoid/tanh saturate) and a carried, detached state
    E, H, T, B = 6, 21, 8, 2
    rng = np.random.default_rng(7)
    params = [(4 * p).astype(np.float32) for p in _weights("LSTM", E, H, 1, False, True, rng)]
    x = (3 * rng.standard_normal((2, T, B, E))).astype(np.float32)
    res = []
    for lib in (ptcore, torch):
        m = lib.nn.LSTM(E, H, 1)
        with lib.no_grad():
            for p, v in zip(m.parameters(), params):
                p.copy_(lib.from_numpy(v.copy()))
        state = None
        losses = []
        for chunk in x:
            out, state = m(lib.from_numpy(chunk.copy()), state)
            loss = out.sum()
            loss.backward()
            state = tuple(s.detach() for s in state)
            losses.append(loss.item())
        res.append((losses, [p.grad.numpy().copy() for p in m.parameters()], out.detach().numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-4)
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-5, atol=1e-6)
    assert np.all(np.isfinite(res[0][2]))


@pytest.mark.parametrize("K,M,N", [(1, 1, 1), (20, 7, 5), (35, 512, 64), (700, 130, 37),
                                   (193, 6, 16), (400, 25, 33)])
def test_weight_grad_kernel_matches_numpy(K, M, N):
    # a^T b with K past the kernel's 192-row blocks, M not a multiple of the
    # 6-row tile, N not a multiple of the 16 columns
    rng = np.random.default_rng(K * 7 + M)
    a = rng.standard_normal((K, M)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = ptcore.full((M, N), 7.0)
    ok = _K().weight_grad(ptcore.from_numpy(a), ptcore.from_numpy(b), c)
    if not _K()._packed_weight_grad_available():
        assert ok is False
        np.testing.assert_array_equal(c.numpy(), np.full((M, N), 7.0, np.float32))
        return
    assert ok is True
    want = a.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-5, atol=1e-5 * np.sqrt(K))


def test_weight_grad_kernel_threads_and_bad_input():
    if not _K()._packed_weight_grad_available():
        pytest.skip("packed weight-gradient kernel not used on this CPU")
    rng = np.random.default_rng(11)
    a = ptcore.from_numpy(rng.standard_normal((700, 515)).astype(np.float32))
    b = ptcore.from_numpy(rng.standard_normal((700, 129)).astype(np.float32))
    res = []
    for nth in (1, 2, 3):
        ptcore.set_num_threads(nth)
        c = ptcore.empty((515, 129))
        assert _K().weight_grad(a, b, c)
        res.append(c.numpy().copy())
    assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2])
    with pytest.raises(ValueError, match="do not match"):
        _K().weight_grad(a, b, ptcore.empty((514, 129)))
    with pytest.raises(ValueError, match="2-D"):
        _K().weight_grad(a.reshape(-1), b, ptcore.empty((515, 129)))
    # not applicable (float64, non-contiguous): False, nothing written
    c = ptcore.zeros((515, 129), dtype=ptcore.float64)
    assert _K().weight_grad(a.double(), b.double(), c) is False
    assert float(c.abs().sum()) == 0.0
    c = ptcore.zeros((129, 515)).t()
    assert _K().weight_grad(a, b, c) is False


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_packed_row_granularity_keeps_bits(rows):
    # the threads' batch-row ranges (_set_row_tile) move rows between threads,
    # never the order of any element's sums
    params, x, h0, c0 = _case("LSTM", 16, 136, 1, 5, 20, False, True, seed=7)
    ptcore.set_num_threads(1)
    one = _run(ptcore, "LSTM", 16, 136, 1, False, True, params, x, h0, c0)
    prev = _K()._set_row_tile(rows)
    try:
        ptcore.set_num_threads(2)
        two = _run(ptcore, "LSTM", 16, 136, 1, False, True, params, x, h0, c0)
    finally:
        _K()._set_row_tile(prev)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
