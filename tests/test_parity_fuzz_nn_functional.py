"""Differences between ptcore.nn.functional and torch found by a differential
fuzzer over held-out argument combinations; each case compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")
TF = torch.nn.functional
PF = ptcore.nn.functional


def _pt(t):
    p = ptcore.from_numpy(t.detach().numpy().copy())
    return p.requires_grad_() if t.requires_grad else p


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:      # noqa: BLE001 - the type is what is compared
        return type(e)


def _same_outcome(tfn, pfn, targs, kwargs):
    """Both raise the same exception type, or both return the same values."""
    a = _outcome(tfn, *targs, **kwargs)
    b = _outcome(pfn, *[_pt(t) if isinstance(t, torch.Tensor) else t for t in targs],
                 **{k: _pt(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})
    if isinstance(a, type):
        assert isinstance(b, type) and issubclass(b, a), (a, b)
        return None, None
    assert not isinstance(b, type), b
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    return a, b


# --- pooling ---------------------------------------------------------------

@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 1, 4, 4), dict(kernel_size=2, padding=(1, 0, 0), ceil_mode=True)),
    ((2, 2, 2, 5, 2), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True)),
    ((0, 1, 1, 4, 7), dict(kernel_size=(2, 3, 3), padding=1, divisor_override=2)),
    ((2, 5, 5, 3), dict(kernel_size=(1, 2, 3))),
    ((1, 1, 3, 3, 3), dict(kernel_size=3, padding=1)),
])
def test_avg_pool3d_input_smaller_than_kernel_raises(shape, kw):
    # torch's avg_pool3d (not 1-d/2-d) wants the unpadded input to hold a window
    x = torch.randn(shape, dtype=torch.float64)
    _same_outcome(TF.avg_pool3d, PF.avg_pool3d, (x,), kw)
    _same_outcome(torch.nn.AvgPool3d(**kw), ptcore.nn.AvgPool3d(**kw), (x,), {})


def test_lp_pool3d_input_smaller_than_kernel_raises():
    x = torch.rand(1, 2, 2, 7, 1, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        TF.lp_pool3d(x, 1, 2, 2, True)
    with pytest.raises(RuntimeError):
        PF.lp_pool3d(_pt(x), 1, 2, 2, True)


@pytest.mark.parametrize("nd,shape,out,k", [
    (3, (2, 3, 4, 4, 5), 2, 3), (3, (1, 1, 9, 4, 9), (3, 2, 3), 3),
    (3, (1, 1, 9, 9, 4), (3, 3, 2), 3), (3, (1, 1, 9, 9, 4), (3, 3, 2), (3, 3, 2)),
    (2, (1, 1, 4, 4), 2, 3), (2, (1, 1, 4, 4), 3, 2),
])
def test_fractional_max_pool_pool_too_large(nd, shape, out, k):
    # the 3-d check is out + pool - 1 < in, the 2-d one out + pool - 1 <= in
    x = torch.randn(shape, dtype=torch.float64)
    rs = torch.rand(shape[0], shape[1], nd, dtype=torch.float64)
    fn = f"fractional_max_pool{nd}d"
    _same_outcome(getattr(TF, fn), getattr(PF, fn), (x, k), dict(output_size=out,
                                                                 _random_samples=rs))


# --- pixel shuffle -----------------------------------------------------------

@pytest.mark.parametrize("fn,shape,r", [
    ("pixel_unshuffle", (2, 1, 6, 3), 3), ("pixel_unshuffle", (1, 4, 2), 2),
    ("pixel_unshuffle", (2, 1, 1, 4, 2), 2), ("pixel_shuffle", (2, 4, 6, 4), 1),
    ("pixel_unshuffle", (2, 4, 6, 4), 1), ("pixel_shuffle", (1, 4, 1, 1), 2),
])
def test_pixel_shuffle_output_is_new_contiguous_tensor(fn, shape, r):
    x = torch.randn(shape, dtype=torch.float64)
    px = _pt(x)
    a = getattr(TF, fn)(x, r)
    b = getattr(PF, fn)(px, r)
    assert b.stride() == a.stride()
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    b.add_(1)       # torch's result never aliases its input
    np.testing.assert_array_equal(px.numpy(), x.numpy())


# --- ctc_loss ----------------------------------------------------------------

def _ctc_case(T=5, N=2, C=4, S=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, generator=g, dtype=torch.float64).log_softmax(-1)
    tg = torch.randint(1, C, (N, S), generator=g)
    return lp, tg


@pytest.mark.parametrize("il,tl", [("tensor", "tuple"), ("tuple", "tensor"), ("list", "tensor"),
                                   ("int", "int")])
def test_ctc_loss_mixed_length_kinds_raise_type_error(il, tl):
    lp, tg = _ctc_case()

    def make(kind, vals, lib):
        return {"tensor": lambda: lib.tensor(vals), "tuple": lambda: tuple(vals),
                "list": lambda: list(vals), "int": lambda: vals[0]}[kind]()
    with pytest.raises(TypeError):
        TF.ctc_loss(lp, tg, make(il, [5, 4], torch), make(tl, [3, 2], torch))
    with pytest.raises(TypeError):
        PF.ctc_loss(_pt(lp), _pt(tg), make(il, [5, 4], ptcore), make(tl, [3, 2], ptcore))


@pytest.mark.parametrize("targets,tl", [
    ([1, 2, 3], 0), ([1, 2, 3], 1), ([1, 2], 2), ([1, 2, 3], 3), ([1], 2),
    ([[1, 2, 3]], 1), ([[1, 2]], 2), ([[1, 2], [1, 2]], 2), ([[1]], 2),
])
@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_ctc_loss_unbatched_targets_forms(targets, tl, reduction):
    # unbatched log_probs: a 1-D target is the concatenated form (exactly
    # target_length labels), a (1, S) one is padded
    lp = torch.randn(4, 5, dtype=torch.float64).log_softmax(-1).requires_grad_()
    tg = torch.tensor(targets)
    a, b = _same_outcome(TF.ctc_loss, PF.ctc_loss, (lp, tg, torch.tensor(4), torch.tensor(tl)),
                         dict(reduction=reduction))
    if a is not None:
        a.sum().backward()
        pl = _pt(lp)
        PF.ctc_loss(pl, _pt(tg), ptcore.tensor(4), ptcore.tensor(tl),
                    reduction=reduction).sum().backward()
        np.testing.assert_allclose(pl.grad.numpy(), lp.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape,pad", [((2, 1, 5), (-2, 1, -2, 1)), ((2, 3), (-2, 1)),
                                       ((1, 2, 4), (-1, 2)), ((1, 1, 3), (-1, 3))])
def test_circular_pad_negative_and_empty_like_torch(shape, pad):
    n = int(np.prod(shape))
    t = torch.arange(float(n)).reshape(shape)
    p = ptcore.arange(float(n)).reshape(shape)
    try:
        want = torch.nn.functional.pad(t, pad, mode="circular")
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ptcore.nn.functional.pad(p, pad, mode="circular")
        return
    got = ptcore.nn.functional.pad(p, pad, mode="circular")
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
