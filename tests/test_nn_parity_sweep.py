"""Regression tests from the nn/optim/autograd differential sweep against PyTorch."""
import itertools
import warnings

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _pt(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _copy_state(tm, pm):
    psd = pm.state_dict()
    with ptcore.no_grad():
        for k, v in tm.state_dict().items():
            psd[k].copy_(_pt(v))


_POOL_CASES = [(2, 1, 0, False, True, None), (3, 2, 1, True, False, None),
               (3, 2, 1, False, True, None), (2, 2, 1, True, True, 3), (3, 1, 1, False, False, 3)]


@needs_torch
@pytest.mark.parametrize("nd,ks,st,pad,ceil,cip,div",
                         [(nd,) + c for nd in (1, 2, 3) for c in _POOL_CASES
                          if not (nd == 1 and c[-1] is not None)])
def test_avg_pool_int64_truncates_like_torch(nd, ks, st, pad, ceil, cip, div):
    torch.manual_seed(0)
    x = torch.randint(-50, 50, (2, 1) + (7,) * nd)
    extra = [div] if nd > 1 else []
    a = getattr(torch.nn.functional, f"avg_pool{nd}d")(x, ks, st, pad, ceil, cip, *extra)
    b = getattr(ptcore.nn.functional, f"avg_pool{nd}d")(_pt(x), ks, st, pad, ceil, cip, *extra)
    assert b.dtype == ptcore.int64
    np.testing.assert_array_equal(b.numpy(), a.numpy())


@needs_torch
@pytest.mark.parametrize("fn,dt", [("avg_pool2d", "int32"), ("avg_pool2d", "uint8"),
                                   ("adaptive_avg_pool2d", "int64")])
def test_pool_other_integer_dtypes_still_rejected(fn, dt):
    args = (2,)
    with pytest.raises(NotImplementedError):
        getattr(torch.nn.functional, fn)(torch.ones(1, 1, 4, 4, dtype=getattr(torch, dt)), *args)
    with pytest.raises(NotImplementedError):
        getattr(ptcore.nn.functional, fn)(ptcore.ones(1, 1, 4, 4, dtype=getattr(ptcore, dt)),
                                          *args)


@needs_torch
def test_multihead_attention_out_proj_repr():
    tm = torch.nn.TransformerEncoderLayer(8, 2, 16)
    pm = ptcore.nn.TransformerEncoderLayer(8, 2, 16)
    assert repr(pm) == repr(tm)
    assert type(pm.self_attn.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(pm.self_attn.out_proj, ptcore.nn.Linear)


def _enc(nn, bf, nf, **kw):
    return nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=bf,
                                                            norm_first=nf, **kw), 2)


@needs_torch
@pytest.mark.parametrize("bf,nf,kw", [(False, False, {}), (True, True, {}), (True, False, {}),
                                      (True, False, {"bias": False})])
def test_transformer_encoder_nested_tensor_warning_and_flag(bf, nf, kw):
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        tm = _enc(torch.nn, bf, nf, **kw)
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        pm = _enc(ptcore.nn, bf, nf, **kw)
    assert [str(w.message) for w in w2] == [str(w.message) for w in w1]
    assert pm.use_nested_tensor == tm.use_nested_tensor
    assert pm.enable_nested_tensor == tm.enable_nested_tensor


@needs_torch
@pytest.mark.parametrize("bf", [True, False])
@pytest.mark.parametrize("no_grad", [True, False])
@pytest.mark.parametrize("kpm", [[[False, False, True], [False, False, False]],
                                 [[False, True, False], [False, False, False]]])
def test_transformer_encoder_fast_path_zeroes_padding(bf, no_grad, kpm):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = _enc(torch.nn, bf, False).eval()
        pm = _enc(ptcore.nn, bf, False).eval()
    _copy_state(tm, pm)
    x = torch.randn(2, 3, 8) if bf else torch.randn(3, 2, 8)
    kpm = torch.tensor(kpm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if no_grad:
            with torch.no_grad():
                a = tm(x, src_key_padding_mask=kpm)
            with ptcore.no_grad():
                b = pm(_pt(x), src_key_padding_mask=_pt(kpm))
        else:
            a = tm(x, src_key_padding_mask=kpm)
            b = pm(_pt(x), src_key_padding_mask=_pt(kpm))
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)


_CE_KW = [{}, {"label_smoothing": 0.2}, {"weight": [1.0, 2.0, 3.0]},
          {"weight": [1.0, 2.0, 3.0], "label_smoothing": 0.2}]


@needs_torch
@pytest.mark.parametrize("fn,kw", [("cross_entropy", kw) for kw in _CE_KW]
                         + [("nll_loss", kw) for kw in _CE_KW if "label_smoothing" not in kw])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [[1, 1], [1, 2]])
def test_ignore_index_gradient_is_zero(fn, kw, reduction, target):
    x0 = np.array([[0.1, 0.5, -1.0], [2.0, 0.3, 0.1]], dtype=np.float32)
    res = []
    for lib in (torch, ptcore):
        x = lib.tensor(x0, requires_grad=True)
        k = dict(kw)
        if "weight" in k:
            k["weight"] = lib.tensor(k["weight"])
        out = getattr(lib.nn.functional, fn)(x, lib.tensor(target), ignore_index=1,
                                             reduction=reduction, **k)
        out.sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy()))
    (ta, tg), (pa, pg) = res
    np.testing.assert_allclose(pa, ta, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pg, tg, rtol=1e-5, atol=1e-6)
    assert not np.signbit(pa[np.asarray(target) == 1]).any() if reduction == "none" else True


@needs_torch
def test_soft_margin_loss_target_requires_grad_error():
    x, t = torch.rand(3), torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        torch.nn.functional.soft_margin_loss(x, t)
    px, pt = _pt(x), _pt(t).requires_grad_()
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        ptcore.nn.functional.soft_margin_loss(px, pt)
    with ptcore.no_grad():
        b = ptcore.nn.functional.soft_margin_loss(px, pt)
    with torch.no_grad():
        a = torch.nn.functional.soft_margin_loss(x, t)
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)
