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
