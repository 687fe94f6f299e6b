"""Host<->device copies that convert dtype, broadcast or have a strided
side run their conversion on the device (cast kernel), never staged
through a host copy of the device tensor's span; values equal the CPU
copy's."""
import pytest

import ptcore
from ptcore.cuda.ops import tensors as _tensors


@pytest.fixture
def no_host_staging(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("copy staged through the host")
    monkeypatch.setattr(_tensors, "_download", refuse)
    monkeypatch.setattr(_tensors, "_upload", refuse)


def _src(shape, dtype=ptcore.float32):
    return (ptcore.arange(float(ptcore.Size(shape).numel())).reshape(shape) * 1.37 - 5).to(dtype)


@pytest.mark.parametrize("src_dt,dst_dt", [(ptcore.float32, ptcore.float16), (ptcore.float64, ptcore.int32),
                                           (ptcore.int64, ptcore.bfloat16), (ptcore.float32, ptcore.bool)])
def test_converting_and_strided_copies(no_host_staging, src_dt, dst_dt):
    x = _src((4, 6), src_dt)
    # host -> device: converting, into a strided view, broadcasting a row
    d = ptcore.zeros(6, 4, dtype=dst_dt, device="cuda")
    d.t().copy_(x)
    assert ptcore.equal(d.cpu(), x.t().to(dst_dt))
    d2 = ptcore.zeros(4, 6, dtype=dst_dt, device="cuda")
    d2.copy_(x[1])
    assert ptcore.equal(d2.cpu(), x[1].expand(4, 6).to(dst_dt))
    d3 = ptcore.zeros(3, 4, dtype=dst_dt, device="cuda")
    d3.copy_(x.t()[::2])                                     # non-contiguous host source
    assert ptcore.equal(d3.cpu(), x.t()[::2].to(dst_dt))
    # device -> host: converting, from a strided view, into a strided host view
    xc = ptcore.empty(4, 6, dtype=src_dt, device="cuda")
    xc.copy_(x)
    h = ptcore.zeros(6, 4, dtype=dst_dt)
    h.copy_(xc.t())
    assert ptcore.equal(h, x.t().to(dst_dt))
    h2 = ptcore.zeros(4, 6, dtype=dst_dt).t()
    h2.copy_(xc.t())
    assert ptcore.equal(h2, x.t().to(dst_dt))
    assert ptcore.equal(xc.t().to("cpu", dst_dt), x.t().to(dst_dt))
    assert ptcore.equal(x.t().to("cuda", dst_dt).cpu(), x.t().to(dst_dt))


def test_bad_shapes_raise_as_on_cpu():
    d = ptcore.zeros(4, 6, device="cuda")
    with pytest.raises(RuntimeError):
        d.copy_(_src((5,)))
    with pytest.raises(RuntimeError):
        ptcore.zeros(5).copy_(d)
