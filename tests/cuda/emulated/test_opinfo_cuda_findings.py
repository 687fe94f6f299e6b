"""Ops that failed on the emulated CUDA device when torch's OpInfo samples were run
there (a by-hand sweep, tools/opinfo_sweep.py with its inputs moved to cuda):
each compared with torch on the CPU."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def test_unsafe_split_and_chunk_run_on_cuda():
    a = np.arange(125.0).reshape(5, 5, 5)
    for name, args in [("unsafe_chunk", (2,)), ("unsafe_split", (2,)),
                       ("unsafe_split_with_sizes", ([2, 3],))]:
        x = ptcore.tensor(a).cuda().requires_grad_()
        pieces = getattr(ptcore, name)(x, *args)
        want = getattr(torch, name)(torch.tensor(a), *args)
        assert len(pieces) == len(want)
        for p, w in zip(pieces, want):
            assert p.device.type == "cuda" and p._base is None
            np.testing.assert_array_equal(p.detach().cpu().numpy(), w.numpy())
        sum((k + 1) * p.sum() for k, p in enumerate(pieces)).backward()
        assert x.grad.device.type == "cuda"
        assert x.grad.sum().item() == sum((k + 1) * w.numel() for k, w in enumerate(want))


def test_int64_average_pooling_divisors_on_the_device():
    a = np.arange(2 * 3 * 3 * 4 * 4).reshape(2, 3, 3, 4, 4) % 7
    for f, x, args in [("avg_pool1d", a[:, :, 0, 0], ((3,),)),
                       ("avg_pool2d", a[:, :, 0], ((4, 4), (2, 2), (2,), True, True, None)),
                       ("avg_pool3d", a, ((2, 2, 2),))]:
        got = getattr(ptcore.nn.functional, f)(ptcore.tensor(x).cuda(), *args)
        want = getattr(torch.nn.functional, f)(torch.tensor(x), *args)
        assert got.dtype == ptcore.int64
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("shape", [(5, 0), (2, 0, 3), (0, 3, 2)])
def test_geqrf_of_empty_matrices_on_cuda(shape):
    a, tau = ptcore.geqrf(ptcore.zeros(shape).cuda())
    ta, ttau = torch.geqrf(torch.zeros(shape))
    assert tuple(a.shape) == tuple(ta.shape) and tuple(tau.shape) == tuple(ttau.shape)
    q = ptcore.linalg.householder_product(ptcore.zeros(0, 0).cuda(), ptcore.zeros(0).cuda())
    assert tuple(q.shape) == (0, 0)
