"""Seventh hardening round: the fast paths of stop 80 (float32 add/sub/mul, float-lane
transcendentals, 1-d pooling, lerp, randperm, smooth L1/Huber, dim-list reductions) under
odd input, run side by side with torch (tools/hostile_probe.py, cases in
tools/hostile_cases_round7.py); the differences found, each against torch's behaviour."""
import math

import pytest

import ptcore
import ptcore.nn.functional as F


@pytest.mark.parametrize("call", [
    lambda L: L.add(L.ones(9), L.ones(9), alpha=None),
    lambda L: L.sub(L.ones(9), 2.0, alpha=None),
    lambda L: L.ones(9).add_(1, alpha=None),
    lambda L: L.rsub(L.ones(9), 1, alpha=None),
    lambda L: L.sub(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool), alpha=None),
])
def test_alpha_none_is_refused(call):
    # torch's parser takes no None for alpha; ptcore read it as 1
    with pytest.raises(TypeError, match="argument 'alpha' must be Number, not NoneType"):
        call(ptcore)


def test_randperm_half_is_exact_up_to_2049():
    r = ptcore.randperm(2049, dtype=ptcore.float16)
    assert sorted(r.float().tolist()) == [float(i) for i in range(2049)]
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type"):
        ptcore.randperm(2050, dtype=ptcore.float16)


@pytest.mark.parametrize("loss,kw", [(F.smooth_l1_loss, "beta"), (F.huber_loss, "delta")])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_and_huber_refuse_a_nan_width(loss, kw, reduction):
    # torch checks beta >= 0 and delta > 0, which NaN fails; ptcore returned NaN losses
    x, y = ptcore.linspace(-3, 3, 13), ptcore.linspace(2, -2, 13)
    with pytest.raises(RuntimeError, match="does not support"):
        loss(x, y, reduction=reduction, **{kw: math.nan})
    # an infinite width is valid: every term inside the band (0.5 d**2 / beta -> 0 for
    # smooth L1, 0.5 d**2 for Huber)
    want = 0.0 if kw == "beta" else float(((x - y) ** 2).sum()) / 2
    assert loss(x, y, reduction="sum", **{kw: math.inf}).item() == pytest.approx(want)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_integer_max_pooling_as_torch(dtype):
    dt = getattr(ptcore, dtype)
    x = ptcore.arange(16).view(1, 1, 16).to(dt)
    # torch's 1-d max pooling without indices runs a kernel for floating types only ...
    with pytest.raises(NotImplementedError, match="max_pool1d_impl"):
        F.max_pool1d(x, 2)
    with pytest.raises(NotImplementedError, match="max_pool1d_impl"):
        ptcore.nn.MaxPool1d(2)(x[0])
    # ... with indices (max_pool2d's kernel) integers pool
    v, i = F.max_pool1d(x, 2, return_indices=True)
    assert v.dtype is dt and v.tolist() == [[list(range(1, 16, 2))]]
    assert i.tolist() == [[list(range(1, 16, 2))]]
    assert F.max_pool2d(x.view(1, 1, 4, 4), 2).tolist() == [[[[5, 7], [13, 15]]]]
    # adaptive max pooling: floating types only
    for f, shape, name in ((F.adaptive_max_pool1d, (1, 1, 16), "adaptive_max_pool2d"),
                           (F.adaptive_max_pool2d, (1, 1, 4, 4), "adaptive_max_pool2d"),
                           (F.adaptive_max_pool3d, (1, 1, 1, 4, 4), "adaptive_max_pool3d_cpu")):
        for ri in (False, True):
            with pytest.raises(NotImplementedError, match=name):
                f(x.view(shape), 2, return_indices=ri)
    # argument errors come first, as torch's
    with pytest.raises(RuntimeError, match="kernel_size must be greater than zero"):
        F.max_pool1d(x, 0)


def test_the_same_errors_as_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda L: L.add(L.ones(9), L.ones(9), alpha=None),
        lambda L: L.randperm(2050, dtype=L.float16),
        lambda L: L.nn.functional.smooth_l1_loss(L.ones(3), L.zeros(3), beta=math.nan),
        lambda L: L.nn.functional.huber_loss(L.ones(3), L.zeros(3), delta=math.nan),
        lambda L: L.nn.functional.max_pool1d(L.arange(8).view(1, 1, 8), 2),
        lambda L: L.nn.functional.adaptive_max_pool2d(L.arange(16).view(1, 1, 4, 4), 2),
        lambda L: L.nn.functional.adaptive_max_pool3d(L.arange(16).view(1, 1, 1, 4, 4), 2),
    ]
    for c in cases:
        types = []
        for L in (torch, ptcore):
            try:
                c(L)
                types.append(None)
            except Exception as e:      # noqa: BLE001
                types.append(type(e))
        assert types[0] is not None and types[0] is types[1], (c, types)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("width", [0.7, 1.0, 3.3, 8.698115367693557])
def test_low_precision_smooth_l1_and_huber_bits_as_torch(dtype, width):
    # torch's CPU kernels compute smooth L1 in float32 for bfloat16 and op by op for
    # float16 (its beta rounded to float16), Huber the other way round; ptcore's float16
    # smooth L1 and Huber terms differed by an ulp or two (opinfo sweep)
    torch = pytest.importorskip("torch")
    import numpy as np
    zs = np.linspace(-20, 20, 4001)
    for red in ("none", "mean", "sum"):
        for f, kw in (("smooth_l1_loss", "beta"), ("huber_loss", "delta")):
            got, want = (getattr(L.nn.functional, f)(
                L.tensor(zs).to(getattr(L, dtype)), L.zeros(len(zs), dtype=getattr(L, dtype)),
                reduction=red, **{kw: width}).float().numpy() for L in (ptcore, torch))
            np.testing.assert_array_equal(got, want, err_msg=f"{f} {red}")
