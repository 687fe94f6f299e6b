"""Dynamic quantization against PyTorch (fbgemm): quantize_dynamic swaps nn.Linear for
ao.nn.quantized.dynamic.Linear whose weights and outputs equal torch's; the observers'
calculate_qparams; the module's state dict, repr and errors."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.ao.quantization as pq
import ptcore.nn.quantized.dynamic

torch = pytest.importorskip("torch")
tq = torch.ao.quantization


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _pair(K, N, bias=True, seed=0, shift=0.0):
    torch.manual_seed(seed)
    mt = torch.nn.Sequential(torch.nn.Linear(K, N, bias=bias), torch.nn.ReLU(),
                             torch.nn.Linear(N, 5))
    with torch.no_grad():
        mt[0].weight += shift
    mp = ptcore.nn.Sequential(ptcore.nn.Linear(K, N, bias=bias), ptcore.nn.ReLU(),
                              ptcore.nn.Linear(N, 5))
    mp.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return mt, mp


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("K,N,shape,bias", [(4, 3, (5, 4), True), (64, 32, (17, 64), True),
                                            (300, 100, (2, 4, 300), True),
                                            (16, 8, (1, 16), False), (7, 9, (3, 0, 7), True)])
def test_quantize_dynamic_matches_torch(per_channel, K, N, shape, bias):
    mt, mp = _pair(K, N, bias)
    if per_channel:
        qt = tq.quantize_dynamic(mt, {torch.nn.Linear: tq.per_channel_dynamic_qconfig})
        qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear: pq.per_channel_dynamic_qconfig})
    else:
        qt = tq.quantize_dynamic(mt, {torch.nn.Linear}, dtype=torch.qint8)
        qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear}, dtype=ptcore.qint8)
    assert type(qp[0]) is ptcore.ao.nn.quantized.dynamic.Linear
    assert ptcore.nn.quantized.dynamic.Linear is ptcore.ao.nn.quantized.dynamic.Linear
    assert type(mp[0]) is ptcore.nn.Linear                 # not in place
    assert not hasattr(qp[0], "qconfig") and not qp.training
    for i in (0, 2):
        wt, wp = qt[i].weight(), qp[i].weight()
        assert wp.qscheme() is getattr(ptcore, str(wt.qscheme()).split(".")[1])
        np.testing.assert_array_equal(wp.int_repr().numpy(), wt.int_repr().numpy())
        np.testing.assert_array_equal(wp.dequantize().numpy(), wt.dequantize().numpy())
    torch.manual_seed(1)
    for _ in range(3):
        x = torch.randn(*shape) * 2 + 0.3
        yt = qt(x).detach()
        yp = qp(ptcore.tensor(x.numpy()))
        assert yp.dtype is ptcore.float32 and tuple(yp.shape) == tuple(yt.shape)
        np.testing.assert_array_equal(yp.numpy(), yt.numpy())


@pytest.mark.parametrize("K,affine", [(2500, False), (40, True), (1500, True)])
def test_long_inner_dimension_and_affine_weights(K, affine):
    # K past 2**24 / (127 * 127): the integer sums are split; affine weights: w_zp != 0
    mt, mp = _pair(K, 6, shift=0.01 if affine else 0.0)
    if affine:
        qt = tq.quantize_dynamic(mt, {torch.nn.Linear: tq.QConfig(
            activation=tq.default_dynamic_quant_observer,
            weight=tq.MinMaxObserver.with_args(dtype=torch.qint8))})
        qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear: pq.QConfig(
            activation=pq.default_dynamic_quant_observer,
            weight=pq.MinMaxObserver.with_args(dtype=ptcore.qint8))})
        assert qp[0].weight().q_zero_point() == qt[0].weight().q_zero_point() != 0
    else:
        qt = tq.quantize_dynamic(mt, {torch.nn.Linear})
        qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear})
    x = torch.randn(9, K) * 3
    np.testing.assert_array_equal(qp(ptcore.tensor(x.numpy())).numpy(), qt(x).detach().numpy())


def test_module_repr_state_dict_and_round_trip():
    mt, mp = _pair(6, 4)
    qt = tq.quantize_dynamic(mt, {torch.nn.Linear})
    qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear})
    assert repr(qp).replace("ptcore.", "torch.") == repr(qt)
    sdt, sdp = qt.state_dict(), qp.state_dict()
    assert list(sdp) == list(sdt)
    assert sdp["0._packed_params.dtype"] is ptcore.qint8
    w, b = sdp["0._packed_params._packed_params"]
    assert w.is_quantized and b.dtype is ptcore.float32
    assert sdp["0.scale"].dtype is ptcore.float32 and sdp["0.zero_point"].dtype is ptcore.int64
    # load into a freshly quantized model of other weights: same outputs afterwards
    _, other = _pair(6, 4, seed=5)
    qo = pq.quantize_dynamic(other, {ptcore.nn.Linear})
    qo.load_state_dict(sdp)
    x = ptcore.randn(3, 6)
    np.testing.assert_array_equal(qo(x).numpy(), qp(x).numpy())
    # inplace
    q_in = pq.quantize_dynamic(mp, {ptcore.nn.Linear}, inplace=True)
    assert q_in is mp and type(mp[0]) is ptcore.ao.nn.quantized.dynamic.Linear


def test_default_spec_and_names():
    mt, mp = _pair(4, 3)
    qp = pq.quantize_dynamic(mp)                     # default: the Linear types
    assert type(qp[0]) is ptcore.ao.nn.quantized.dynamic.Linear
    qp = pq.quantize_dynamic(mp, {"0": pq.default_dynamic_qconfig})   # by name
    assert type(qp[0]) is ptcore.ao.nn.quantized.dynamic.Linear
    assert type(qp[2]) is ptcore.nn.Linear


def test_module_errors():
    lin = ptcore.ao.nn.quantized.dynamic.Linear(4, 3)
    with pytest.raises(RuntimeError):
        lin(ptcore.randn(4))                  # 1-d input (torch: dimension >= 2)
    with pytest.raises(RuntimeError):
        lin(ptcore.randn(2, 5))
    with pytest.raises(RuntimeError):
        lin(ptcore.randn(2, 4, dtype=ptcore.float64))
    with pytest.raises(AssertionError):
        m = ptcore.nn.Conv1d(1, 1, 1)
        m.qconfig = pq.default_dynamic_qconfig
        ptcore.ao.nn.quantized.dynamic.Linear.from_float(m)
    with pytest.raises(NotImplementedError):
        pq.quantize_dynamic(_pair(4, 3)[1], dtype=ptcore.float16)


@pytest.mark.parametrize("cls", ["MinMaxObserver", "PerChannelMinMaxObserver",
                                 "MovingAverageMinMaxObserver",
                                 "MovingAveragePerChannelMinMaxObserver"])
@pytest.mark.parametrize("kw", [{}, {"dtype": "qint8"}, {"dtype": "qint8", "sym": True},
                                {"reduce_range": True}, {"quant_min": 0, "quant_max": 15},
                                {"dtype": "quint8", "sym": True}])
def test_observers_match_torch(cls, kw):
    def make(lib, mod):
        args = {}
        if "dtype" in kw:
            args["dtype"] = getattr(lib, kw["dtype"])
        if kw.get("sym"):
            args["qscheme"] = (lib.per_channel_symmetric if "PerChannel" in cls
                               else lib.per_tensor_symmetric)
        for k in ("reduce_range", "quant_min", "quant_max"):
            if k in kw:
                args[k] = kw[k]
        return getattr(mod, cls)(**args)
    ot, op = make(torch, tq), make(ptcore, pq)
    assert (op.quant_min, op.quant_max) == (ot.quant_min, ot.quant_max)
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(4, 6) * 3 + 0.5
        ot(x)
        op(ptcore.tensor(x.numpy()))
    (st, zt), (sp, zp) = ot.calculate_qparams(), op.calculate_qparams()
    np.testing.assert_array_equal(sp.numpy(), st.numpy())
    np.testing.assert_array_equal(zp.numpy(), zt.numpy())
    assert str(zp.dtype).split(".")[1] == str(zt.dtype).split(".")[1]
    assert repr(op).replace("ptcore.", "torch.") == repr(ot)


def test_unobserved_observer_returns_defaults():
    st, zt = tq.MinMaxObserver().calculate_qparams()
    sp, zp = pq.MinMaxObserver().calculate_qparams()
    np.testing.assert_array_equal(sp.numpy(), st.numpy())
    np.testing.assert_array_equal(zp.numpy(), zt.numpy())


def test_qconfigs():
    for name in ("default_dynamic_qconfig", "per_channel_dynamic_qconfig"):
        ct, cp = getattr(tq, name), getattr(pq, name)
        wt, wp = ct.weight(), cp.weight()
        assert type(wp).__name__ == type(wt).__name__
        assert str(wp.dtype).split(".")[1] == str(wt.dtype).split(".")[1]
        assert str(wp.qscheme).split(".")[1] == str(wt.qscheme).split(".")[1]
        at, ap = ct.activation(), cp.activation()
        assert ap.is_dynamic == at.is_dynamic and ap.dtype is ptcore.quint8
    with pytest.raises(ValueError):
        pq.QConfig(activation=pq.MinMaxObserver(), weight=pq.MinMaxObserver)


def test_checkpoints_interoperate_with_torch():
    import io
    mt, mp = _pair(6, 4)
    qt = tq.quantize_dynamic(mt, {torch.nn.Linear: tq.per_channel_dynamic_qconfig})
    qp = pq.quantize_dynamic(_pair(6, 4, seed=3)[1],
                             {ptcore.nn.Linear: pq.per_channel_dynamic_qconfig})
    x = torch.randn(3, 6)
    # torch's file into ptcore: same outputs
    buf = io.BytesIO()
    torch.save(qt.state_dict(), buf)
    buf.seek(0)
    qp.load_state_dict(ptcore.load(buf))
    np.testing.assert_array_equal(qp(ptcore.tensor(x.numpy())).numpy(), qt(x).numpy())
    # ptcore's file into torch
    buf = io.BytesIO()
    ptcore.save(qp.state_dict(), buf)
    buf.seek(0)
    q2 = tq.quantize_dynamic(_pair(6, 4, seed=7)[0], {torch.nn.Linear})
    q2.load_state_dict(torch.load(buf))
    np.testing.assert_array_equal(q2(x).numpy(), qt(x).numpy())
    # plain quantized tensors, both schemes, both ways
    qs = {"t": ptcore.quantize_per_tensor(ptcore.randn(5), 0.1, 3, ptcore.qint8),
          "c": ptcore.quantize_per_channel(ptcore.randn(2, 3), ptcore.tensor([0.1, 0.2]),
                                           ptcore.tensor([120, 130]), 0, ptcore.quint8)}
    buf = io.BytesIO()
    ptcore.save(qs, buf)
    for load in (torch.load, ptcore.load):
        buf.seek(0)
        back = load(buf)
        for k, q in qs.items():
            assert str(back[k].qscheme()).split(".")[1] == str(q.qscheme()).split(".")[1]
            np.testing.assert_array_equal(back[k].int_repr().numpy(), q.int_repr().numpy())
            np.testing.assert_array_equal(back[k].dequantize().numpy(), q.dequantize().numpy())


def test_assert_close_compares_real_values():
    q = ptcore.quantize_per_tensor(ptcore.randn(5), 0.1, 0, ptcore.qint8)
    ptcore.testing.assert_close(q, q.clone())
    with pytest.raises(AssertionError):
        ptcore.testing.assert_close(q, ptcore.quantize_per_tensor(q.dequantize() + 1, 0.1, 0,
                                                                 ptcore.qint8))
    with pytest.raises(AssertionError, match="is_quantized"):
        ptcore.testing.assert_close(q, q.dequantize())


def test_bad_quantizer_in_a_checkpoint_is_refused():
    import pickle
    from ptcore._torch_checkpoint_reader import _rebuild_qtensor, _TypedStorage
    st = _TypedStorage(ptcore.zeros(6, dtype=ptcore.int8).untyped_storage(), ptcore.int8)
    ok = _rebuild_qtensor(st, 0, (2, 3), (3, 1), (ptcore.per_tensor_affine, 0.5, 1), False, {})
    assert ok.is_quantized and ok.q_scale() == 0.5
    for params in [(ptcore.per_tensor_affine, "x", 1), (ptcore.per_tensor_affine, 0.5),
                   (ptcore.per_channel_affine, ptcore.ones(2), ptcore.zeros(2), 5),
                   (ptcore.per_channel_affine, ptcore.ones(3), ptcore.zeros(2), 0),
                   ("per_tensor_affine", 0.5, 1), ()]:
        with pytest.raises(pickle.UnpicklingError):
            _rebuild_qtensor(st, 0, (2, 3), (3, 1), params, False, {})
    bad = _TypedStorage(ptcore.zeros(6).untyped_storage(), ptcore.float32)
    with pytest.raises(pickle.UnpicklingError):
        _rebuild_qtensor(bad, 0, (6,), (1,), (ptcore.per_tensor_affine, 0.5, 1), False, {})


@pytest.mark.parametrize("kw", [{}, {"bins": 256}, {"reduce_range": True},
                                {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
                                {"quant_min": 0, "quant_max": 127}])
def test_histogram_observer_matches_torch(kw):
    kt = {k: getattr(torch, v) if isinstance(v, str) else v for k, v in kw.items()}
    kp = {k: getattr(ptcore, v) if isinstance(v, str) else v for k, v in kw.items()}
    ot, op = tq.HistogramObserver(**kt), pq.HistogramObserver(**kp)
    torch.manual_seed(0)
    # growing ranges (the histogram is re-binned), a repeated range, an infinite value
    for x in [torch.randn(200, 30), torch.randn(200, 30) * 3 + 0.5, torch.randn(50) * 0.1,
              torch.tensor([float("inf"), 1.0, -2.0]), torch.full((10,), 0.7)]:
        ot(x)
        op(ptcore.tensor(x.numpy()))
        np.testing.assert_array_equal(op.histogram.numpy(), ot.histogram.numpy())
        assert float(op.min_val) == float(ot.min_val)
        assert float(op.max_val) == float(ot.max_val)
    (st, zt), (sp, zp) = ot.calculate_qparams(), op.calculate_qparams()
    np.testing.assert_array_equal(sp.numpy(), st.numpy())
    np.testing.assert_array_equal(zp.numpy(), zt.numpy())
    with pytest.raises(NotImplementedError):
        pq.HistogramObserver(qscheme=ptcore.per_channel_affine)


def test_histogram_observer_after_a_constant_batch():
    ot, op = tq.HistogramObserver(), pq.HistogramObserver()
    for x in [torch.full((5,), 0.3), torch.randn(100)]:
        ot(x)
        op(ptcore.tensor(x.numpy()))
    np.testing.assert_array_equal(op.histogram.numpy(), ot.histogram.numpy())
    (st, zt), (sp, zp) = ot.calculate_qparams(), op.calculate_qparams()
    np.testing.assert_array_equal(sp.numpy(), st.numpy())
    np.testing.assert_array_equal(zp.numpy(), zt.numpy())


def _attention_model(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = lib.nn.MultiheadAttention(8, 2, batch_first=True)
            self.fc = lib.nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(self.attn(x, x, x)[0])
    return M()


def test_attention_out_proj_stays_float_as_in_torch():
    torch.manual_seed(0)
    mt, mp = _attention_model(torch), _attention_model(ptcore)
    mp.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    qt = tq.quantize_dynamic(mt, {torch.nn.Linear})
    qp = pq.quantize_dynamic(mp, {ptcore.nn.Linear})
    assert type(qp.attn.out_proj).__name__ == type(qt.attn.out_proj).__name__ \
        == "NonDynamicallyQuantizableLinear"
    assert type(qp.fc) is ptcore.ao.nn.quantized.dynamic.Linear
    x = torch.randn(2, 5, 8)
    np.testing.assert_allclose(qp(ptcore.tensor(x.numpy())).detach().numpy(),
                               qt(x).detach().numpy(), rtol=1e-5, atol=1e-5)
