"""Quantized tensors against PyTorch: the quantized dtypes, quantize_per_tensor /
quantize_per_channel (fbgemm's rounding bit for bit), dequantize, the accessors, repr,
views, and the errors (bad dtypes, zero points, unsupported ops)."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    # torch 2.13 warns that its quantized tensors are deprecated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


QDTYPES = ["qint8", "quint8", "qint32"]


def _pt(t):
    return ptcore.tensor(t.numpy())


def _ties(scale, n=3000, seed=0):
    """float32 values at and next to the half-way points of ``scale`` (where the rounding
    order matters), plus ordinary values."""
    rs = np.random.RandomState(seed)
    k = rs.randint(-150, 150, size=n) + 0.5
    x = (k * scale).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf),
                           rs.randn(n).astype(np.float32) * 5])


@pytest.mark.parametrize("name", QDTYPES + ["quint4x2", "quint2x4"])
def test_dtype_properties(name):
    p, t = getattr(ptcore, name), getattr(torch, name)
    assert p.itemsize == t.itemsize
    assert p.is_floating_point == t.is_floating_point
    assert p.is_complex == t.is_complex
    assert repr(p) == "ptcore." + name
    assert p.to_real() is p
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType"):
        p.to_complex()
    assert ptcore._C._dtype_from_name(name) is p
    assert ptcore.promote_types(p, p) is p
    with pytest.raises(RuntimeError):
        torch.promote_types(t, torch.float32)
    with pytest.raises(RuntimeError):
        ptcore.promote_types(p, ptcore.float32)
    assert ptcore.can_cast(p, ptcore.float32) == torch.can_cast(t, torch.float32)
    assert ptcore.can_cast(ptcore.float32, p) == torch.can_cast(torch.float32, t)
    ii, it = ptcore.iinfo(p), torch.iinfo(t)
    assert (ii.bits, ii.min, ii.max) == (it.bits, it.min, it.max)
    with pytest.raises(TypeError):
        ptcore.finfo(p)


@pytest.mark.parametrize("make", [lambda d: ptcore.empty(3, dtype=d),
                                  lambda d: ptcore.zeros(2, 2, dtype=d),
                                  lambda d: ptcore.ones(3).to(d),
                                  lambda d: ptcore.tensor([1.0], dtype=d)])
def test_no_plain_tensor_of_quantized_dtype(make):
    with pytest.raises(RuntimeError):
        make(ptcore.qint8)


@pytest.mark.parametrize("name", QDTYPES)
@pytest.mark.parametrize("scale,zp", [(0.1, 3), (0.0173, -5), (1 / 3, 0), (0.7, 10),
                                      (0.21856145616885989, -12), (2.5e-3, 1)])
def test_quantize_per_tensor_matches_torch(name, scale, zp):
    if name == "quint8":
        zp += 128
    x = torch.from_numpy(_ties(scale))
    qt = torch.quantize_per_tensor(x, scale, zp, getattr(torch, name))
    qp = ptcore.quantize_per_tensor(_pt(x), scale, zp, getattr(ptcore, name))
    assert qp.is_quantized and qp.dtype is getattr(ptcore, name)
    assert qp.int_repr().dtype is getattr(ptcore, str(qt.int_repr().dtype).split(".")[1])
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
    np.testing.assert_array_equal(qp.dequantize().numpy(), qt.dequantize().numpy())
    np.testing.assert_array_equal(ptcore.dequantize(qp).numpy(), qt.dequantize().numpy())
    assert qp.q_scale() == qt.q_scale() and qp.q_zero_point() == qt.q_zero_point()
    assert qp.qscheme() is ptcore.per_tensor_affine


def test_quantize_per_tensor_strided_and_overloads():
    x = torch.randn(40, 30) * 3
    xs = x.t()[::2]
    qt = torch.quantize_per_tensor(xs, 0.05, 2, torch.qint8)
    qp = ptcore.quantize_per_tensor(_pt(x).t()[::2], 0.05, 2, ptcore.qint8)
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
    # tensor scale and zero point (read as float32, as torch)
    qt = torch.quantize_per_tensor(x, torch.tensor(0.1), torch.tensor(2), torch.quint8)
    qp = ptcore.quantize_per_tensor(_pt(x), ptcore.tensor(0.1), ptcore.tensor(2), ptcore.quint8)
    assert qp.q_scale() == qt.q_scale()
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
    # the list form
    ts = [torch.randn(5), torch.randn(3)]
    qts = torch.quantize_per_tensor(ts, torch.tensor([0.1, 0.2]), torch.tensor([0, 1]),
                                    torch.quint8)
    qps = ptcore.quantize_per_tensor([_pt(t) for t in ts], ptcore.tensor([0.1, 0.2]),
                                     ptcore.tensor([0, 1]), ptcore.quint8)
    assert len(qps) == len(qts)
    for a, b in zip(qps, qts):
        assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
        np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())


@pytest.mark.parametrize("name", QDTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_quantize_per_channel_matches_torch(name, axis):
    x = torch.from_numpy(_ties(0.1, n=600)[:2 * 3 * 600].reshape(2, 3, -1).copy())
    n = x.shape[axis]
    scales = torch.linspace(0.013, 0.31, n, dtype=torch.float64)
    zps = torch.arange(n) % 50 - 1 + (128 if name == "quint8" else 0)
    qt = torch.quantize_per_channel(x, scales, zps, axis, getattr(torch, name))
    qp = ptcore.quantize_per_channel(_pt(x), _pt(scales), _pt(zps), axis, getattr(ptcore, name))
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
    np.testing.assert_array_equal(qp.dequantize().numpy(), qt.dequantize().numpy())
    assert qp.qscheme() is ptcore.per_channel_affine
    assert qp.q_per_channel_axis() == axis
    np.testing.assert_array_equal(qp.q_per_channel_scales().numpy(),
                                  qt.q_per_channel_scales().numpy())
    assert qp.q_per_channel_scales().dtype is ptcore.float64
    np.testing.assert_array_equal(qp.q_per_channel_zero_points().numpy(),
                                  qt.q_per_channel_zero_points().numpy())
    assert qp.q_per_channel_zero_points().dtype is ptcore.int64


def test_accessor_of_the_other_scheme_raises():
    qp = ptcore.quantize_per_tensor(ptcore.randn(3), 0.1, 0, ptcore.qint8)
    qt = torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint8)
    with pytest.raises(RuntimeError):
        qt.q_per_channel_scales()
    with pytest.raises(RuntimeError):
        qp.q_per_channel_scales()
    qc = ptcore.quantize_per_channel(ptcore.randn(2, 2), ptcore.tensor([0.1, 0.2]),
                                     ptcore.tensor([0, 0]), 0, ptcore.qint8)
    with pytest.raises(RuntimeError):
        qc.q_scale()
    # a plain tensor has no quantizer
    with pytest.raises(NotImplementedError):
        ptcore.randn(2).q_scale()
    assert ptcore.randn(2).dequantize().dtype is ptcore.float32


def _repr(q):
    return repr(q).replace("ptcore.", "torch.")


@pytest.mark.parametrize("make", [
    lambda lib: lib.quantize_per_tensor(lib.tensor([-1.0, 0.05, 0.15, 0.25, 1e3, -3.7]), 0.1,
                                        3, lib.qint8),
    lambda lib: lib.quantize_per_tensor(lib.arange(12.0).reshape(3, 4) / 7, 0.01, 10,
                                        lib.quint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([-1.0, 0.05, 0.15]), 0.1, 3, lib.qint8)[1],
    lambda lib: lib.quantize_per_channel(lib.arange(6.0).reshape(2, 3) - 2,
                                         lib.tensor([0.1, 0.2]), lib.tensor([0, 1]), 0,
                                         lib.qint8),
])
def test_repr_matches_torch(make):
    assert _repr(make(ptcore)) == repr(make(torch))


def test_views_keep_the_quantizer():
    x = torch.randn(3, 4)
    qt = torch.quantize_per_tensor(x, 0.05, 1, torch.qint8)
    qp = ptcore.quantize_per_tensor(_pt(x), 0.05, 1, ptcore.qint8)
    for f in (lambda q: q[1], lambda q: q[:, 1:3], lambda q: q.view(4, 3),
              lambda q: q.reshape(-1), lambda q: q.t(), lambda q: q.transpose(0, 1),
              lambda q: q.permute(1, 0), lambda q: q.unsqueeze(0), lambda q: q.flatten(),
              lambda q: q.clone(), lambda q: q.detach(), lambda q: q.contiguous(),
              lambda q: q.t().contiguous()):
        a, b = f(qp), f(qt)
        assert a.is_quantized and a.dtype is ptcore.qint8
        assert tuple(a.shape) == tuple(b.shape)
        assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
        np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())
    assert qp.element_size() == 1 and qp.numel() == 12 and qp.dim() == 2
    assert qp.stride() == qt.stride() and qp.is_contiguous()
    assert qp.type() == "ptcore.quantized.QInt8Tensor"
    assert bool((qp == qp).all())


def test_unsupported_ops_raise_like_torch():
    qp = ptcore.quantize_per_tensor(ptcore.randn(6), 0.1, 0, ptcore.qint8)
    qt = torch.quantize_per_tensor(torch.randn(6), 0.1, 0, torch.qint8)
    for f in (lambda q: q.sum(), lambda q: q.abs(), lambda q: q.zero_()):
        with pytest.raises(NotImplementedError, match="QuantizedCPU"):
            f(qt)
        with pytest.raises(NotImplementedError, match="QuantizedCPU"):
            f(qp)
    for f in (lambda q, lib: q + 1, lambda q, lib: lib.add(lib.ones(6), q),
              lambda q, lib: lib.exp(q), lambda q, lib: q @ q, lambda q, lib: q.fill_(1),
              lambda q, lib: lib.nn.functional.linear(q, q)):
        with pytest.raises(NotImplementedError, match="QuantizedCPU"):
            f(qp, ptcore)
    with pytest.raises(NotImplementedError):
        qp.view(ptcore.int8)            # (torch crashes here)
    assert qp.untyped_storage().nbytes() == qt.untyped_storage().nbytes() == 6
    assert qp.data_ptr() == qp.untyped_storage().data_ptr() != 0
    with pytest.raises(TypeError):
        qp.numpy()
    with pytest.raises(RuntimeError, match="floating point"):
        qp.requires_grad_()
    with pytest.raises(RuntimeError):
        qt.requires_grad_()


@pytest.mark.parametrize("bad", [
    lambda lib: lib.quantize_per_tensor(lib.tensor([1, 2]), 0.1, 0, lib.qint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]).double(), 0.1, 0, lib.qint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]).half(), 0.1, 0, lib.qint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]), 0.1, 300, lib.qint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]), 0.1, -1, lib.quint8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]), 0.1, 0, lib.int8),
    lambda lib: lib.quantize_per_tensor(lib.tensor([1.0, 2.0]), 0.1, 0, lib.float32),
    lambda lib: lib.quantize_per_channel(lib.randn(2, 3), lib.tensor([0.1, 0.2]),
                                         lib.tensor([0, 1]), 1, lib.qint8),
    lambda lib: lib.quantize_per_channel(lib.randn(2, 3), lib.tensor([0.1]),
                                         lib.tensor([0, 1]), 0, lib.qint8),
    lambda lib: lib.quantize_per_channel(lib.randn(2, 3), lib.tensor([0.1, 0.2]),
                                         lib.tensor([0, 1]), 2, lib.qint8),
    lambda lib: lib.quantize_per_channel(lib.randn(2, 3), lib.tensor([0.1, 0.2]),
                                         lib.tensor([0, 200]), 0, lib.qint8),
    lambda lib: lib.quantize_per_channel(lib.randn(2, 3), lib.tensor([[0.1, 0.2]]),
                                         lib.tensor([[0, 0]]), 0, lib.qint8),
    lambda lib: lib.quantize_per_tensor_dynamic(lib.tensor([]), lib.quint8, False),
    lambda lib: lib.quantize_per_tensor_dynamic(lib.tensor([float("nan"), 1.0]), lib.quint8,
                                                False),
    lambda lib: lib.quantize_per_tensor_dynamic(lib.tensor([float("inf"), 1.0]), lib.quint8,
                                                False),
    lambda lib: lib._choose_qparams_per_tensor(lib.tensor([]), False),
])
def test_bad_input_raises_torchs_exception_type(bad):
    with pytest.raises(Exception) as et:
        bad(torch)
    with pytest.raises(type(et.value)):
        bad(ptcore)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,)])
def test_zero_dim_and_empty_tensors(shape):
    x = torch.full(shape, 1.5)
    qt = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    qp = ptcore.quantize_per_tensor(_pt(x), 0.1, 0, ptcore.qint8)
    assert tuple(qp.shape) == tuple(qt.shape)
    assert qp.int_repr().tolist() == qt.int_repr().tolist()
    assert _repr(qp) == repr(qt)


def test_nonpositive_scale_is_accepted_as_in_torch():
    # torch does not check the scale: a zero scale maps everything to the range's end
    x = torch.tensor([1.0, -2.0, 0.0])
    for s in (0.0, -1.0):
        qt = torch.quantize_per_tensor(x, s, 0, torch.qint8)
        qp = ptcore.quantize_per_tensor(_pt(x), s, 0, ptcore.qint8)
        np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
        np.testing.assert_array_equal(qp.dequantize().numpy(), qt.dequantize().numpy())


@pytest.mark.parametrize("name", ["quint8", "qint8"])
@pytest.mark.parametrize("reduce_range", [False, True])
@pytest.mark.parametrize("vals", [[1.0, -2.0, 0.3], [0.5, 2.0], [-3.0, -1.0], [0.0, 0.0],
                                  [1e-7, -3e-7], [1e4, -2.5]])
def test_dynamic_qparams_match_torch(name, reduce_range, vals):
    x = torch.tensor(vals)
    if name == "quint8":
        assert (ptcore._choose_qparams_per_tensor(_pt(x), reduce_range)
                == torch._choose_qparams_per_tensor(x, reduce_range))
    qt = torch.quantize_per_tensor_dynamic(x, getattr(torch, name), reduce_range)
    qp = ptcore.quantize_per_tensor_dynamic(_pt(x), getattr(ptcore, name), reduce_range)
    assert (qp.q_scale(), qp.q_zero_point()) == (qt.q_scale(), qt.q_zero_point())
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())


def test_pickle_and_deepcopy_round_trip():
    import copy
    import pickle
    qp = ptcore.quantize_per_channel(ptcore.randn(2, 3), ptcore.tensor([0.1, 0.2]),
                                     ptcore.tensor([0, 1]), 0, ptcore.qint8)
    for r in (pickle.loads(pickle.dumps(qp)), copy.deepcopy(qp)):
        assert r.qscheme() is ptcore.per_channel_affine
        np.testing.assert_array_equal(r.int_repr().numpy(), qp.int_repr().numpy())
        np.testing.assert_array_equal(r.q_per_channel_scales().numpy(),
                                      qp.q_per_channel_scales().numpy())
    assert pickle.loads(pickle.dumps(ptcore.qint8)) is ptcore.qint8
    assert pickle.loads(pickle.dumps(ptcore.per_tensor_affine)) is ptcore.per_tensor_affine


@pytest.mark.parametrize("name", QDTYPES)
def test_nonfinite_values_land_where_torchs_do(name):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0] * 5)
    zp = 3 if name != "quint8" else 130
    qt = torch.quantize_per_tensor(x, 0.1, zp, getattr(torch, name))
    qp = ptcore.quantize_per_tensor(_pt(x), 0.1, zp, getattr(ptcore, name))
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
    qt = torch.quantize_per_channel(x.view(1, -1), torch.tensor([0.1]), torch.tensor([zp]), 0,
                                    getattr(torch, name))
    qp = ptcore.quantize_per_channel(_pt(x).view(1, -1), ptcore.tensor([0.1]),
                                     ptcore.tensor([zp]), 0, getattr(ptcore, name))
    np.testing.assert_array_equal(qp.int_repr().numpy(), qt.int_repr().numpy())
