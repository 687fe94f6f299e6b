"""nn module corners against torch, found by tools/moduleinfo_sweep.py (torch's
module_db run against ptcore.nn)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pt(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


@pytest.mark.parametrize("nd,xshape,rows", [
    (3, (4, 5, 5, 5), 2),      # no batch dim: torch takes the first sample row
    (3, (1, 4, 5, 5, 5), 2),
    (3, (2, 4, 5, 5, 5), 3),
    (2, (4, 5, 5), 2),
    (2, (2, 4, 5, 5), 3),
])
def test_fractional_max_pool_takes_extra_random_sample_rows(nd, xshape, rows):
    # torch only needs _random_samples.size(0) >= N and uses the first N rows
    # (module_db's FractionalMaxPool3d no_batch_dim samples pass (2, C, 3))
    torch.manual_seed(0)
    x = torch.rand(*xshape, dtype=torch.float64, requires_grad=True)
    c = xshape[-nd - 1]
    rs = torch.rand(rows, c, nd, dtype=torch.float64)
    cls = f"FractionalMaxPool{nd}d"
    want = getattr(torch.nn, cls)(2, output_size=2, _random_samples=rs)(x)
    px = _pt(x).requires_grad_(True)
    got = getattr(ptcore.nn, cls)(2, output_size=2, _random_samples=_pt(rs))(px)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    g = torch.rand(*want.shape, dtype=torch.float64)
    want.backward(g)
    got.backward(_pt(g))
    np.testing.assert_array_equal(px.grad.numpy(), x.grad.numpy())


@pytest.mark.parametrize("rshape", [(1, 4, 3), (2, 3, 3), (2, 4, 2), (2, 4, 3, 1), (2, 4)])
def test_fractional_max_pool3d_bad_random_samples(rshape):
    for lib in (torch, ptcore):
        x = lib.rand(2, 4, 5, 5, 5, dtype=lib.float64)
        r = lib.rand(*rshape, dtype=lib.float64)
        with pytest.raises(RuntimeError):
            lib.nn.functional.fractional_max_pool3d(x, 2, output_size=2, _random_samples=r)


@pytest.mark.parametrize("xdt,sdt", [("float64", "float32"), ("float32", "float64"),
                                     ("float32", "float16"), ("float64", "bfloat16")])
@pytest.mark.parametrize("training", [True, False])
def test_instance_norm_running_stats_of_another_dtype(xdt, sdt, training):
    # torch's instance norm takes running statistics of any floating dtype (a
    # float32 InstanceNorm1d(track_running_stats=True) fed float64 input works);
    # only weight and bias must match the input. ptcore raised 'mixed dtype'
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5))
    res = []
    for lib in (torch, ptcore):
        m = lib.nn.InstanceNorm1d(3, momentum=0.5, track_running_stats=True)
        m.to(getattr(lib, sdt))
        with lib.no_grad():
            m.running_mean.fill_(0.25)
            m.running_var.fill_(2.0)
        m.train(training)
        y = m(lib.from_numpy(x).to(getattr(lib, xdt)))
        res.append((str(y.dtype).split(".")[-1], y.double().numpy(),
                    str(m.running_mean.dtype).split(".")[-1],
                    m.running_mean.double().numpy(), m.running_var.double().numpy()))
    (td, ty, tsd, tm, tv), (pd, py, psd, pm, pv) = res
    assert (pd, psd) == (td, tsd) == (xdt, sdt)
    np.testing.assert_allclose(py, ty, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pm, tm, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pv, tv, rtol=1e-6, atol=1e-6)


def test_instance_norm_weight_of_another_dtype_still_raises():
    for lib in (torch, ptcore):
        with pytest.raises(RuntimeError):
            lib.nn.functional.instance_norm(lib.ones(2, 3, 5, dtype=lib.float64),
                                            lib.zeros(3), lib.ones(3), weight=lib.ones(3))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("call", [
    lambda lib, d: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4, dtype=d), 2),
    lambda lib, d: lib.nn.LPPool3d(2, 2)(lib.ones(1, 2, 4, 4, 4, dtype=d)),
    lambda lib, d: lib.nn.LocalResponseNorm(2)(lib.ones(1, 4, 4, 4, dtype=d)),
    lambda lib, d: lib.nn.MultiMarginLoss()(lib.ones(2, 3, dtype=d), lib.tensor([0, 1])),
    lambda lib, d: lib.nn.MultiLabelMarginLoss()(lib.ones(2, 3, dtype=d),
                                                 lib.tensor([[0, 1, -1], [1, -1, 0]])),
    lambda lib, d: lib.nn.CTCLoss()(lib.ones(5, 1, 3, dtype=d).log_softmax(2),
                                    lib.tensor([[1, 2]]), [5], [2]),
])
def test_cpu_kernels_without_half_precision(call, dt):
    # torch's CPU avg_pool3d (so LPPool3d, a 4-d+ LocalResponseNorm), multi-margin,
    # multilabel-margin and CTC kernels have no float16/bfloat16 version: torch raises
    # NotImplementedError (module_db's modules fed bfloat16 inputs); ptcore computed
    with pytest.raises(NotImplementedError) as want:
        call(torch, getattr(torch, dt))
    with pytest.raises(NotImplementedError) as got:
        call(ptcore, getattr(ptcore, dt))
    assert str(got.value) == str(want.value)


def test_half_precision_kernels_that_torch_has_still_compute():
    for dt in ("float16", "bfloat16"):
        x = np.linspace(-1, 1, 64).reshape(1, 4, 4, 4)
        want = torch.nn.functional.local_response_norm(torch.tensor(x[0]).to(getattr(torch, dt)), 2)
        got = ptcore.nn.functional.local_response_norm(ptcore.tensor(x[0]).to(getattr(ptcore, dt)), 2)
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=2e-2)
