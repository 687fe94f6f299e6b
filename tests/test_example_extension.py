"""examples/extension: a fused SiLU written in Cython against ptcore's C-level
API and registered with ptcore.library.custom_op.  The kernels are compiled
with ptcore.utils.cython_extension.load; values, first and second
derivatives are compared with PyTorch's SiLU."""
import importlib.util
import os
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "extension"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not EXAMPLE.is_dir(), reason="examples/ is not in this tree"),
]


@pytest.fixture(scope="module")
def fused(tmp_path_factory):
    pytest.importorskip("Cython")
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"needs a C compiler ({cc})")
    from ptcore.utils import cython_extension
    kernels = cython_extension.load(
        "ptcore_fused_kernels_test", [EXAMPLE / "ptcore_fused" / "_kernels.pyx"],
        build_directory=tmp_path_factory.mktemp("fused_build"))
    spec = importlib.util.spec_from_file_location("ptcore_fused_ops_test",
                                                  EXAMPLE / "ptcore_fused" / "ops.py")
    ops = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ops)
    return ops.register(kernels, namespace="ptcore_fused_test")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (257, 129)])
def test_values_and_gradients_match_torch(fused, dtype, shape):
    silu, _ = fused
    rng = np.random.default_rng(0)
    xn = (rng.standard_normal(shape) * 4).astype(dtype)
    gn = rng.standard_normal(shape).astype(dtype)
    x = ptcore.tensor(xn, requires_grad=True)
    y = silu(x)
    assert y.dtype == x.dtype and y.shape == x.shape
    y.backward(ptcore.tensor(gn))
    xt = torch.tensor(xn, requires_grad=True)
    yt = torch.nn.functional.silu(xt)
    yt.backward(torch.tensor(gn))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), **tol)


def test_non_contiguous_input_and_second_derivative(fused):
    silu, _ = fused
    base = ptcore.randn(6, 4, dtype=ptcore.float64)
    x = base.t()[1:].detach().requires_grad_()          # a strided view
    assert not x.is_contiguous()
    np.testing.assert_allclose(silu(x).detach().numpy(),
                               torch.nn.functional.silu(torch.tensor(x.detach().numpy())).numpy(),
                               rtol=1e-12)
    assert ptcore.autograd.gradcheck(silu, (x,))
    assert ptcore.autograd.gradgradcheck(silu, (x,))
    # the second derivative against torch's
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    gt, = torch.autograd.grad(torch.nn.functional.silu(xt).sum(), xt, create_graph=True)
    g2t, = torch.autograd.grad(gt.sum(), xt)
    g, = ptcore.autograd.grad(silu(x).sum(), x, create_graph=True)
    g2, = ptcore.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), g2t.numpy(), rtol=1e-10, atol=1e-12)


def test_the_op_is_in_the_table_and_traced_as_one_node(fused):
    silu, _ = fused
    assert ptcore.ops.ptcore_fused_test.silu.default is silu._opoverload
    x = ptcore.randn(4)
    tm = ptcore.jit.trace(lambda a: silu(a) * 2, (x,))
    assert "ptcore_fused_test::silu" in str(tm.graph)
    x2 = ptcore.randn(4)
    np.testing.assert_allclose(tm(x2).numpy(), (silu(x2) * 2).numpy())
    assert ptcore.library.opcheck(silu, (ptcore.randn(5, dtype=ptcore.float64),))


def test_bad_inputs_raise(fused):
    silu, silu_backward = fused
    with pytest.raises(TypeError, match="float32 or float64"):
        silu(ptcore.ones(3, dtype=ptcore.int64))
    with pytest.raises(ValueError, match="does not match"):
        silu_backward(ptcore.ones(3, dtype=ptcore.float64), ptcore.ones(4, dtype=ptcore.float64))
