"""``associative_scan``'s default ``combine_mode="pointwise"``, which torch runs on
CUDA tensors only: on the device, equal to torch's scan on the CPU."""
import numpy as np
import pytest

import ptcore
from ptcore._higher_order_ops import associative_scan, scan

torch = pytest.importorskip("torch")
from torch._higher_order_ops.associative_scan import associative_scan as t_associative_scan  # noqa: E402


@pytest.mark.parametrize("n", [1, 6, 9])
def test_pointwise_mode_on_the_device(n):
    a = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
    got = associative_scan(lambda x, y: x + y, ptcore.from_numpy(a).cuda(), 0)
    want = t_associative_scan(lambda x, y: x + y, torch.from_numpy(a), 0, combine_mode="generic")
    assert got.is_cuda
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="CUDA"):
        associative_scan(lambda x, y: x + y, ptcore.from_numpy(a), 0)


def test_scan_on_the_device():
    xs = ptcore.arange(6.0).view(3, 2).cuda()

    def step(c, x):
        c = c + x
        return c, c.clone()
    carry, ys = scan(step, ptcore.zeros(2).cuda(), xs)
    assert carry.is_cuda and ys.is_cuda
    assert ys.cpu().tolist() == [[0.0, 1.0], [2.0, 4.0], [6.0, 9.0]]
