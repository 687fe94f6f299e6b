"""softmax / log_softmax on CUDA over another dim than the last: the row
kernel's strided variant reads and writes the rows in place (one launch, where
moving the dim last and back made three) for tensors up to
``_SOFTMAX_STRIDED_MAX`` elements; larger ones keep the coalesced copies.
Values as the CPU's, any input strides, every float dtype."""
import pytest

import ptcore
from ptcore.cuda.ops import nn as N

from kernel_launches import launched

_TOL = {ptcore.float16: 2e-3, ptcore.bfloat16: 1e-2, ptcore.float32: 1e-6, ptcore.float64: 1e-14}


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", list(_TOL), ids=str)
@pytest.mark.parametrize("shape,dim", [((64, 128), 0), ((4, 5, 6), 1), ((4, 5, 6), 0), ((3, 1, 7), 0),
                                       ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -3)])
def test_one_launch_cpu_values(op, dtype, shape, dim):
    x = (ptcore.randn(*shape, generator=ptcore.Generator().manual_seed(1)) * 3).to(dtype)
    x.view(-1)[0] = 30.0
    xc = x.cuda()
    got, names = launched(lambda: getattr(xc, op)(dim))
    assert names == [f"ptc_softmax_{op}_{names[0].split('_')[-2]}_s"], names
    want = getattr(x, op)(dim)
    t = _TOL[dtype]
    assert ptcore.allclose(got.cpu().double(), want.double(), rtol=t, atol=t)
    # a transposed (strided) input reads in place too
    xt = xc.transpose(0, -1)
    got, names = launched(lambda: getattr(xt, op)(dim))
    assert len(names) == 1
    assert ptcore.allclose(got.cpu().double(), getattr(x.transpose(0, -1), op)(dim).double(), rtol=t, atol=t)


def test_large_tensors_move_the_dim_last(monkeypatch):
    monkeypatch.setattr(N, "_SOFTMAX_STRIDED_MAX", 100)
    x = ptcore.randn(30, 20, generator=ptcore.Generator().manual_seed(2))
    got, names = launched(lambda: x.cuda().softmax(0))
    assert [n for n in names if n.startswith("ptc_softmax")] == ["ptc_softmax_softmax_f32_c"], names
    assert ptcore.allclose(got.cpu(), x.softmax(0), rtol=1e-6, atol=1e-7)


def test_gradient_over_dim0():
    x = ptcore.randn(6, 9, dtype=ptcore.float64, generator=ptcore.Generator().manual_seed(3))
    grads = []
    for dev in ("cpu", "cuda"):
        t = x.detach().to(dev).requires_grad_()
        (t.log_softmax(0) * ptcore.arange(54.0, dtype=ptcore.float64, device=dev).view(6, 9)).sum().backward()
        grads.append(t.grad.cpu())
    assert ptcore.allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
