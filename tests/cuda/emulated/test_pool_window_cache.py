"""The pooling kernels' window tables are uploaded once per geometry
(ptcore/cuda/ops/nn._windows) and let go at a runtime reset."""
import numpy as np

import ptcore
from ptcore.cuda.ops import nn as _launch_nn
from ptcore.cuda.runtime import state as _runtime


def test_tables_are_reused_per_geometry_and_values_stay():
    F = ptcore.nn.functional
    x = ptcore.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 9, 11)).astype(np.float32))
    dx = x.cuda()
    _launch_nn._WINDOWS.clear()
    for _ in range(3):
        np.testing.assert_array_equal(F.max_pool2d(dx, 2).cpu().numpy(), F.max_pool2d(x, 2).numpy())
    assert len(_launch_nn._WINDOWS) == 1
    np.testing.assert_allclose(F.avg_pool2d(dx, 3, 2, 1).cpu().numpy(), F.avg_pool2d(x, 3, 2, 1).numpy(),
                               rtol=1e-6)
    np.testing.assert_array_equal(F.max_pool2d(dx, 3, 2).cpu().numpy(), F.max_pool2d(x, 3, 2).numpy())
    assert len(_launch_nn._WINDOWS) == 3
    win = next(iter(_launch_nn._WINDOWS.values()))[1][0]
    assert win.is_cuda


def test_reset_lets_the_tables_go():
    ptcore.nn.functional.max_pool2d(ptcore.ones(1, 1, 4, 4).cuda(), 2)
    assert _launch_nn._WINDOWS
    assert _launch_nn._WINDOWS.clear in _runtime._RESET_HOOKS
    for fn in _runtime._RESET_HOOKS:
        if fn == _launch_nn._WINDOWS.clear:
            fn()
    assert not _launch_nn._WINDOWS
