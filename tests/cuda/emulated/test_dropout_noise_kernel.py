"""nn.functional.dropout on a CUDA device: the scaled mask in one kernel
(ptc_random_dropnoise_<tag>_c), the bits and the generator draws of the composition it
replaces (``bernoulli_(1 - p)`` then ``div_(1 - p)``), for every float dtype; the feature
dropouts, the in-place form, gradients, and the general path where a dispatch layer must
see the parts or the dtype is not floating."""
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._dispatch import device as D
from kernel_launches import launched

FLOATS = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


def _composite_noise(shape, dtype, p):
    noise = ptcore.empty(shape, dtype=dtype, device="cuda")
    noise.bernoulli_(1 - p)
    return noise.div_(1 - p)


def _bits(t):
    return t.cpu().view({2: ptcore.int16, 4: ptcore.int32, 8: ptcore.int64}[t.dtype.itemsize])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.37])
def test_dropout_equals_the_composition_bit_for_bit(dtype, p):
    x = ptcore.randn(7, 33, dtype=ptcore.float64).to(dtype).cuda()
    ptcore.manual_seed(1234)
    got = F.dropout(x, p)
    after = ptcore.rand(5, device="cuda")          # the generator's next draws
    ptcore.manual_seed(1234)
    want = x * _composite_noise(tuple(x.shape), dtype, p)
    want_after = ptcore.rand(5, device="cuda")
    assert got.dtype is dtype
    assert ptcore.equal(_bits(got), _bits(want))
    assert ptcore.equal(after, want_after)
    kept = (got != 0).float().mean().item()
    assert abs(kept - (1 - p)) < 0.15


def test_one_kernel_for_the_mask():
    x = ptcore.randn(64, 64, device="cuda")
    F.dropout(x, 0.2)
    out, names = launched(lambda: F.dropout(x, 0.2))
    assert names.count("ptc_random_dropnoise_f32_c") == 1
    assert not any("bernoulli" in n or "fill" in n for n in names), names
    assert len(names) == 2, names                 # the mask, the product


def test_feature_and_inplace_forms_and_gradient():
    x = ptcore.randn(4, 6, 5, 5, device="cuda")
    ptcore.manual_seed(7)
    y = F.dropout2d(x, 0.5)
    ptcore.manual_seed(7)
    want = x * _composite_noise((4, 6, 1, 1), ptcore.float32, 0.5)
    assert ptcore.equal(y, want)
    z = x.clone()
    ptcore.manual_seed(9)
    r = F.dropout(z, 0.3, inplace=True)
    ptcore.manual_seed(9)
    assert r is z and ptcore.equal(z, x * _composite_noise(tuple(x.shape), ptcore.float32, 0.3))
    w = ptcore.randn(10, 10, device="cuda", requires_grad=True)
    ptcore.manual_seed(3)
    o = F.dropout(w, 0.4)
    o.sum().backward()
    ptcore.manual_seed(3)
    assert ptcore.equal(w.grad, _composite_noise((10, 10), ptcore.float32, 0.4))


def test_general_path_where_the_loop_declines(monkeypatch):
    # an integer tensor: the loop declines and the composition raises as before
    with pytest.raises(RuntimeError):
        F.dropout(ptcore.ones(4, dtype=ptcore.int64, device="cuda"), 0.5)
    # a dispatch layer that sees the parts: the composition's ops run
    monkeypatch.setattr("ptcore.nn.functional._dropout._parts_intercepted", lambda: True)
    x = ptcore.randn(32, device="cuda")
    _, names = launched(lambda: F.dropout(x, 0.5))
    assert not any("dropnoise" in n for n in names) and any("bernoulli" in n for n in names)
    assert D.loop_for("dropout_noise", "cuda", None) is not None
