"""ReLU's gradient is torch's threshold_backward: the incoming gradient
where the output is positive and exactly 0 elsewhere, also for NaN and inf
gradients (``g * (y > 0)`` would give NaN there); double backward works."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.pointwise import _threshold_backward



@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_nan_and_inf_gradients_at_clamped_inputs(dtype):
    x = ptcore.tensor([-1.0, -2.0, 0.0, 3.0, float("nan"), -0.0], dtype=dtype, requires_grad=True)
    g = ptcore.tensor([float("inf"), float("nan"), float("-inf"), 2.0, 5.0, float("nan")], dtype=dtype)
    ptcore.relu(x).backward(g)
    got = x.grad.double().numpy()
    # relu(nan) is nan, and nan <= 0 is false: the gradient passes there, as in torch
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0, 2.0, 5.0, 0.0])


def test_against_torch():
    t = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xv = rng.standard_normal(50)
    xv[::7] = 0.0
    gv = rng.standard_normal(50)
    gv[::5] = np.inf
    gv[1::5] = np.nan
    px = ptcore.tensor(xv, requires_grad=True)
    tx = t.tensor(xv, requires_grad=True)
    ptcore.nn.functional.relu(px).backward(ptcore.tensor(gv))
    t.nn.functional.relu(tx).backward(t.tensor(gv))
    np.testing.assert_array_equal(px.grad.numpy(), tx.grad.numpy())


def test_double_backward():
    x = ptcore.tensor([-1.0, 2.0, 3.0], dtype=ptcore.float64, requires_grad=True)
    (g,) = ptcore.autograd.grad((ptcore.relu(x) ** 2).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [0.0, 4.0, 6.0])
    g.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_threshold_backward_broadcasts_and_mixes_dtypes():
    y = ptcore.tensor([[-1.0, 0.5, 2.0]])
    g = ptcore.tensor([[1.0], [float("nan")]])
    r = _threshold_backward(g, y, 0.4)
    np.testing.assert_array_equal(r.numpy(), [[0.0, 1.0, 1.0], [0.0, np.nan, np.nan]])
    r = _threshold_backward(ptcore.ones(3, dtype=ptcore.float64), y[0], 0)
    assert r.dtype == ptcore.float64
    np.testing.assert_array_equal(r.numpy(), [0.0, 1.0, 1.0])
