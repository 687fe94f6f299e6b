"""special.entr, special.spherical_bessel_j0 and special.ndtr on a CUDA device: one kernel
each (ptc_special_<op>_<f32|f64>; their compositions made 3-13 launches), the CPU's values at
the special points, torch's where it is installed, strided operands, the half types of
entr (the composition) and the gradients."""
import numpy as np
import pytest

import ptcore
from kernel_launches import launched

XS = np.array([-2.0, -1e-40, -0.0, 0.0, 1e-30, 1e-8, 0.3, 0.5, 1.0, 3.0, 100.0, 1e30,
               np.inf, -np.inf, np.nan])
OPS = ("entr", "spherical_bessel_j0", "ndtr")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
def test_values_equal_the_cpu(op, dt):
    f = getattr(ptcore.special, op)
    x = ptcore.tensor(XS, dtype=dt)
    got, want = f(x.cuda()).cpu(), f(x)
    assert got.dtype is dt
    tol = 1e-6 if dt is ptcore.float32 else 1e-15
    assert ptcore.allclose(got, want, rtol=tol, atol=0, equal_nan=True), (got, want)
    assert ptcore.equal(got.isinf(), want.isinf()) and ptcore.equal(got.isnan(), want.isnan())
    # strided: a transposed view
    m = ptcore.tensor(np.resize(XS, 30).reshape(5, 6), dtype=dt)
    assert ptcore.allclose(f(m.cuda().t()).cpu(), f(m.t()), rtol=tol, atol=0, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
def test_values_equal_torchs(op):
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        got = getattr(ptcore.special, op)(ptcore.tensor(XS).to(getattr(ptcore, dt)).cuda())
        want = getattr(torch.special, op)(torch.tensor(XS).to(getattr(torch, dt)))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(),
                                   rtol=1e-6 if dt == "float32" else 1e-14, atol=0)


@pytest.mark.parametrize("op", OPS)
def test_one_kernel(op):
    x = ptcore.randn(64, device="cuda")
    f = getattr(ptcore.special, op)
    f(x)
    assert launched(lambda: f(x))[1] == [f"ptc_special_{op}_f32_c"]


def test_entr_of_half_types_and_gradients():
    for dt in (ptcore.float16, ptcore.bfloat16):
        x = ptcore.tensor(XS).to(dt)
        got, want = ptcore.special.entr(x.cuda()).cpu(), ptcore.special.entr(x)
        assert got.dtype is dt
        assert ptcore.allclose(got.float(), want.float(), rtol=1e-2, atol=0, equal_nan=True)
    for op in ("entr",):            # (spherical_bessel_j0 has no derivative, as in torch)
        f = getattr(ptcore.special, op)
        res = []
        for dev in ("cpu", "cuda"):
            x = ptcore.tensor([0.3, 1.0, 2.5, 7.0], dtype=ptcore.float64, device=dev)
            x.requires_grad_()
            f(x).sum().backward()
            res.append(x.grad.cpu())
        assert ptcore.allclose(res[1], res[0], rtol=1e-12), (op, res)
