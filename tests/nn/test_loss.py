"""Losses of ptcore.nn / ptcore.nn.functional against PyTorch: values for a
grid of options and dtypes, legacy reduction arguments, warnings and error
classes/messages; gradients when autograd is available."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

DTYPES = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


def P(t):
    """torch tensor -> ptcore tensor (copy)."""
    if t is None:
        return None
    return ptcore.from_numpy(t.detach().numpy().copy())


def rnd(shape, dtype, seed=0, low=None, high=None):
    g = torch.Generator().manual_seed(seed)
    if low is None:
        return torch.randn(tuple(shape), generator=g, dtype=getattr(torch, dtype))
    return torch.rand(tuple(shape), generator=g, dtype=getattr(torch, dtype)) * (high - low) + low


def check(p, t, dtype):
    assert isinstance(p, ptcore.Tensor)
    assert tuple(p.shape) == tuple(t.shape), (p.shape, t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(p.numpy(), t.detach().numpy(), **tol(dtype))


def _has_autograd():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


HAS_AUTOGRAD = _has_autograd()
needs_autograd = pytest.mark.skipif(not HAS_AUTOGRAD, reason="ptcore autograd not available")


def same_error(pfn, tfn):
    """Both raise; same exception class and message (modulo torch/ptcore naming)."""
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(Exception) as pe:
        pfn()
    assert type(pe.value) is type(te.value), (pe.value, te.value)
    tmsg = str(te.value).split("\n")[0].replace("torch.", "ptcore.")
    assert str(pe.value).split("\n")[0] == tmsg


def grad_check(pfn, tfn, inputs, dtype):
    """Compare gradients of sum(loss * r) w.r.t. ``inputs`` (torch tensors);
    inputs torch cannot differentiate (e.g. some targets) get no grad."""
    diff = [True] * len(inputs)
    while True:
        tin = [x.detach().clone().requires_grad_(d) for x, d in zip(inputs, diff)]
        try:
            tout = tfn(*tin)
            break
        except RuntimeError as e:
            if "is not differentiable" not in str(e) or not diff[-1]:
                raise
            diff[[i for i, d in enumerate(diff) if d][-1]] = False
    pin = [P(x).requires_grad_(d) for x, d in zip(inputs, diff)]
    pout = pfn(*pin)
    r = rnd(tuple(tout.shape), dtype, seed=99)
    (tout * r).sum().backward()
    (pout * P(r)).sum().backward()
    for a, b, d in zip(pin, tin, diff):
        if d and b.grad is None:          # used only in non-differentiable ways (a where mask)
            assert a.grad is None or not a.grad.numpy().any()
        elif d:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol(dtype))


# ---------------------------------------------------------------------------
# regression losses
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", [
    ("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 0.3}),
    ("soft_margin_loss", {}),
])
def test_regression_losses(name, kw, reduction, dtype):
    x, y = rnd((4, 5, 3), dtype, 1), rnd((4, 5, 3), dtype, 2)
    check(getattr(F, name)(P(x), P(y), reduction=reduction, **kw),
          getattr(TF, name)(x, y, reduction=reduction, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_regression(name, reduction, dtype):
    x, y, w = rnd((4, 5), dtype, 1), rnd((4, 5), dtype, 2), rnd((4, 5), dtype, 3, 0.1, 2.0)
    check(getattr(F, name)(P(x), P(y), reduction=reduction, weight=P(w)),
          getattr(TF, name)(x, y, reduction=reduction, weight=w), dtype)
    same_error(lambda: getattr(F, name)(P(x), P(y), weight=P(w[0])),
               lambda: getattr(TF, name)(x, y, weight=w[0]))


def test_mse_broadcast_warning_and_promotion():
    x, y = rnd((3, 5), "float32", 1), rnd((5,), "float32", 2)
    with pytest.warns(UserWarning, match="Using a target size"):
        p = F.mse_loss(P(x), P(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(p, TF.mse_loss(x, y), "float32")
    # mixed float32/float64 promotes like torch
    y64 = rnd((3, 5), "float64", 2)
    check(F.mse_loss(P(x), P(y64)), TF.mse_loss(x, y64), "float32")
    same_error(lambda: F.mse_loss(P(x.long()), P(x.long())), lambda: TF.mse_loss(x.long(), x.long()))


@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True),
                                                  (False, True), (True, False)])
def test_legacy_reduction_args(size_average, reduce):
    x, y = rnd((4, 3), "float64", 1), rnd((4, 3), "float64", 2)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        p = F.mse_loss(P(x), P(y), size_average=size_average, reduce=reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = TF.mse_loss(x, y, size_average=size_average, reduce=reduce)
        check(p, t, "float64")
        t = torch.nn.L1Loss(size_average=size_average, reduce=reduce)(x, y)
        check(ptcore.nn.L1Loss(size_average=size_average, reduce=reduce)(P(x), P(y)), t, "float64")
        tgt = torch.tensor([0, 2, 1, 2])
        check(F.nll_loss(P(x), P(tgt), size_average=size_average, reduce=reduce),
              TF.nll_loss(x, tgt, size_average=size_average, reduce=reduce), "float64")


def test_bad_reduction():
    x = rnd((3,), "float32")
    same_error(lambda: F.mse_loss(P(x), P(x), reduction="avg"),
               lambda: TF.mse_loss(x, x, reduction="avg"))
    same_error(lambda: F.smooth_l1_loss(P(x), P(x), beta=-1.0),
               lambda: TF.smooth_l1_loss(x, x, beta=-1.0))
    same_error(lambda: F.huber_loss(P(x), P(x), delta=0.0), lambda: TF.huber_loss(x, x, delta=0.0))


# ---------------------------------------------------------------------------
# NLL / cross entropy
# ---------------------------------------------------------------------------
SHAPES = [(5,), (6, 5), (4, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2)]


def _targets(shape, ignore_index, seed=0):
    C = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + tuple(shape[2:])
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, C, tshape, generator=g)
    if t.dim() > 0 and t.numel() > 2:
        flat = t.view(-1)
        flat[0] = ignore_index
        flat[-1] = ignore_index
    return t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
def test_cross_entropy_indices(dtype, shape, reduction, weighted, ignore_index, label_smoothing):
    x = rnd(shape, dtype, 1) * 3
    C = shape[0] if len(shape) == 1 else shape[1]
    w = rnd((C,), dtype, 2, 0.1, 2.0) if weighted else None
    t = _targets(shape, ignore_index)
    kw = dict(weight=w, reduction=reduction, ignore_index=ignore_index,
              label_smoothing=label_smoothing)
    pkw = dict(kw, weight=P(w))
    check(F.cross_entropy(P(x), P(t), **pkw), TF.cross_entropy(x, t, **kw), dtype)
    mod = ptcore.nn.CrossEntropyLoss(weight=P(w), reduction=reduction, ignore_index=ignore_index,
                                     label_smoothing=label_smoothing)
    check(mod(P(x), P(t)), TF.cross_entropy(x, t, **kw), dtype)
    if label_smoothing == 0.0:
        lp = torch.log_softmax(x, 0 if len(shape) == 1 else 1)
        check(F.nll_loss(P(lp), P(t), weight=P(w), reduction=reduction, ignore_index=ignore_index),
              TF.nll_loss(lp, t, weight=w, reduction=reduction, ignore_index=ignore_index), dtype)
        check(ptcore.nn.NLLLoss(weight=P(w), reduction=reduction, ignore_index=ignore_index)(
            P(lp), P(t)), TF.nll_loss(lp, t, weight=w, reduction=reduction,
                                      ignore_index=ignore_index), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_probs(dtype, shape, reduction, weighted, label_smoothing):
    x = rnd(shape, dtype, 1) * 2
    cd = 0 if len(shape) == 1 else 1
    C = shape[cd]
    t = torch.softmax(rnd(shape, dtype, 3), cd)
    w = rnd((C,), dtype, 2, 0.1, 2.0) if weighted else None
    kw = dict(weight=w, reduction=reduction, label_smoothing=label_smoothing)
    check(F.cross_entropy(P(x), P(t), **dict(kw, weight=P(w))), TF.cross_entropy(x, t, **kw),
          dtype)


def test_cross_entropy_all_ignored_and_empty():
    x = rnd((3, 4), "float32")
    t = torch.tensor([-100, -100, -100])
    for red in REDUCTIONS:
        for ls in (0.0, 0.1):
            check(F.cross_entropy(P(x), P(t), reduction=red, label_smoothing=ls),
                  TF.cross_entropy(x, t, reduction=red, label_smoothing=ls), "float32")
    e, et = torch.randn(0, 4), torch.zeros(0, dtype=torch.long)
    for red in REDUCTIONS:
        check(F.cross_entropy(P(e), P(et), reduction=red), TF.cross_entropy(e, et, reduction=red),
              "float32")
        check(F.cross_entropy(P(e), P(e), reduction=red), TF.cross_entropy(e, e, reduction=red),
              "float32")


def test_nll_uint8_target_and_1d_target():
    x = torch.log_softmax(rnd((4, 3), "float64"), 1)
    t = torch.tensor([0, 2, 1, 1], dtype=torch.uint8)
    check(F.nll_loss(P(x), P(t)), TF.nll_loss(x, t), "float64")
    x1 = x[0]
    for red in REDUCTIONS:
        check(F.nll_loss(P(x1), P(torch.tensor([2])), reduction=red),
              TF.nll_loss(x1, torch.tensor([2]), reduction=red), "float64")


def test_cross_entropy_errors():
    x = rnd((3, 5), "float32")
    cases = [
        (x, torch.tensor([1.0, 2, 3]), {}),                       # float class indices
        (x, torch.tensor([1, 2, 3], dtype=torch.int32), {}),      # int32 indices
        (x, torch.tensor([1, 2]), {}),                            # batch mismatch
        (x, torch.tensor([1, 2, 7]), {}),                         # out of bounds
        (x, torch.tensor([1, -1, 2]), {}),
        (x, torch.tensor([1, 2, 3]), {"weight": torch.ones(4)}),
        (x, torch.tensor([1, 2, 3]), {"weight": torch.ones(5, dtype=torch.float64)}),
        (x, torch.zeros(3, 5, dtype=torch.long), {}),            # long "probabilities"
        (x, torch.rand(3, 5), {"ignore_index": 1}),
        (x, torch.rand(3, 5), {"weight": torch.ones(4)}),
        (x, torch.tensor([1, 2, 3]), {"label_smoothing": 1.5}),
        (x, torch.rand(3, 5), {"label_smoothing": 1.5}),
        (x, torch.tensor([1, 2, 3]), {"reduction": "foo"}),
        (x.int(), torch.tensor([1, 2, 3]), {}),
        (torch.randn(3, 5, 2), torch.tensor([1, 2, 3]), {}),
        (torch.randn(3, 5, 2, 2), torch.zeros(3, 2, 3, dtype=torch.long), {}),
        (torch.randn(3, 5, 2, 2), torch.zeros(3, 2, dtype=torch.long), {}),
        (torch.randn(3, 5, 2), torch.zeros(3, 2, dtype=torch.long), {"weight": torch.ones(3)}),
        (torch.randn(5), torch.tensor([1, 2]), {}),
        (x, torch.tensor([[1, 2, 3]]), {}),
    ]
    for inp, tgt, kw in cases:
        pkw = {k: (P(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        same_error(lambda: F.cross_entropy(P(inp), P(tgt), **pkw),
                   lambda: TF.cross_entropy(inp, tgt, **kw))
    same_error(lambda: F.nll_loss(P(torch.tensor(1.0)), P(torch.tensor(1))),
               lambda: TF.nll_loss(torch.tensor(1.0), torch.tensor(1)))
    same_error(lambda: F.nll_loss(P(x), P(torch.tensor([0, 1, 2])), ignore_index=1,
                                  weight=P(torch.ones(6))),
               lambda: TF.nll_loss(x, torch.tensor([0, 1, 2]), ignore_index=1,
                                   weight=torch.ones(6)))


# ---------------------------------------------------------------------------
# binary cross entropy
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape", [None, (4, 3), (3,)])
def test_bce(dtype, reduction, weight_shape):
    x = rnd((4, 3), dtype, 1, 0.01, 0.99)
    y = rnd((4, 3), dtype, 2, 0.0, 1.0)
    w = None if weight_shape is None else rnd(weight_shape, dtype, 3, 0.1, 2.0)
    check(F.binary_cross_entropy(P(x), P(y), weight=P(w), reduction=reduction),
          TF.binary_cross_entropy(x, y, weight=w, reduction=reduction), dtype)
    check(ptcore.nn.BCELoss(weight=P(w), reduction=reduction)(P(x), P(y)),
          TF.binary_cross_entropy(x, y, weight=w, reduction=reduction), dtype)


def test_bce_log_clamp_and_errors():
    x, y = torch.tensor([0.0, 1.0, 0.0, 1.0]), torch.tensor([1.0, 0.0, 0.0, 1.0])
    check(F.binary_cross_entropy(P(x), P(y), reduction="none"),
          TF.binary_cross_entropy(x, y, reduction="none"), "float32")
    r = torch.rand(3)
    same_error(lambda: F.binary_cross_entropy(P(r), P(torch.rand(4))),
               lambda: TF.binary_cross_entropy(r, torch.rand(4)))
    same_error(lambda: F.binary_cross_entropy(P(r + 1), P(r)),
               lambda: TF.binary_cross_entropy(r + 1, r))
    same_error(lambda: F.binary_cross_entropy(P(r), P(r + 1)),
               lambda: TF.binary_cross_entropy(r, r + 1))
    same_error(lambda: F.binary_cross_entropy(P(r), P(r.double())),
               lambda: TF.binary_cross_entropy(r, r.double()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos_weighted", [False, True])
def test_bce_with_logits(dtype, reduction, weighted, pos_weighted):
    x = rnd((5, 3), dtype, 1) * 30          # large logits: stability
    y = rnd((5, 3), dtype, 2, 0.0, 1.0)
    w = rnd((3,), dtype, 3, 0.1, 2.0) if weighted else None
    pw = rnd((3,), dtype, 4, 0.5, 3.0) if pos_weighted else None
    t = TF.binary_cross_entropy_with_logits(x, y, weight=w, reduction=reduction, pos_weight=pw)
    check(F.binary_cross_entropy_with_logits(P(x), P(y), weight=P(w), reduction=reduction,
                                             pos_weight=P(pw)), t, dtype)
    m = ptcore.nn.BCEWithLogitsLoss(weight=P(w), reduction=reduction, pos_weight=P(pw))
    check(m(P(x), P(y)), t, dtype)
    assert np.isfinite(m(P(x), P(y)).numpy()).all()
    same_error(lambda: F.binary_cross_entropy_with_logits(P(x), P(y[0])),
               lambda: TF.binary_cross_entropy_with_logits(x, y[0]))


# ---------------------------------------------------------------------------
# distribution losses
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, reduction, log_target):
    x = torch.log_softmax(rnd((4, 5), dtype, 1), 1)
    t = torch.softmax(rnd((4, 5), dtype, 2), 1)
    t[0, 0] = 0.0
    if log_target:
        t = torch.log_softmax(rnd((4, 5), dtype, 2), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = TF.kl_div(x, t, reduction=reduction, log_target=log_target)
        check(F.kl_div(P(x), P(t), reduction=reduction, log_target=log_target), tr, dtype)
        check(ptcore.nn.KLDivLoss(reduction=reduction, log_target=log_target)(P(x), P(t)), tr,
              dtype)


def test_kl_div_mean_warns():
    x = rnd((2, 3), "float32")
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(P(x), P(x), reduction="mean")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll(dtype, reduction, log_input, full):
    x = rnd((4, 5), dtype, 1, 0.1, 2.0)
    t = torch.poisson(rnd((4, 5), dtype, 2, 0.5, 4.0), generator=torch.Generator().manual_seed(0))
    tr = TF.poisson_nll_loss(x, t, log_input=log_input, full=full, reduction=reduction)
    check(F.poisson_nll_loss(P(x), P(t), log_input=log_input, full=full, reduction=reduction),
          tr, dtype)
    check(ptcore.nn.PoissonNLLLoss(log_input=log_input, full=full, reduction=reduction)(P(x), P(t)),
          tr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(4, 5), (4,), (4, 1), "float"])
def test_gaussian_nll(dtype, reduction, full, var_shape):
    x, t = rnd((4, 5), dtype, 1), rnd((4, 5), dtype, 2)
    var = 0.7 if var_shape == "float" else rnd(var_shape, dtype, 3, 0.0, 2.0)
    if not isinstance(var, float):
        var.view(-1)[0] = 1e-9        # clamped to eps
    tr = TF.gaussian_nll_loss(x, t, var, full=full, reduction=reduction)
    pv = var if isinstance(var, float) else P(var)
    check(F.gaussian_nll_loss(P(x), P(t), pv, full=full, reduction=reduction), tr, dtype)
    check(ptcore.nn.GaussianNLLLoss(full=full, reduction=reduction)(P(x), P(t), pv), tr, dtype)


def test_gaussian_nll_errors():
    x = rnd((4, 5), "float32")
    same_error(lambda: F.gaussian_nll_loss(P(x), P(x), P(torch.ones(3, 2))),
               lambda: TF.gaussian_nll_loss(x, x, torch.ones(3, 2)))
    same_error(lambda: F.gaussian_nll_loss(P(x), P(x), -1.0),
               lambda: TF.gaussian_nll_loss(x, x, -1.0))
    same_error(lambda: F.gaussian_nll_loss(P(x), P(x), P(-torch.ones(4, 5))),
               lambda: TF.gaussian_nll_loss(x, x, -torch.ones(4, 5)))
    same_error(lambda: F.poisson_nll_loss(P(x), P(x), reduction="x"),
               lambda: TF.poisson_nll_loss(x, x, reduction="x"))


# ---------------------------------------------------------------------------
# margin / embedding losses
# ---------------------------------------------------------------------------
def _pm1(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, shape, generator=g).double() * 2 - 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking(dtype, reduction, margin):
    a, b = rnd((6,), dtype, 1), rnd((6,), dtype, 2)
    y = _pm1((6,), 3).to(getattr(torch, dtype))
    tr = TF.margin_ranking_loss(a, b, y, margin=margin, reduction=reduction)
    check(F.margin_ranking_loss(P(a), P(b), P(y), margin=margin, reduction=reduction), tr, dtype)
    check(ptcore.nn.MarginRankingLoss(margin=margin, reduction=reduction)(P(a), P(b), P(y)), tr,
          dtype)
    same_error(lambda: F.margin_ranking_loss(P(a), P(b), P(y[:, None])),
               lambda: TF.margin_ranking_loss(a, b, y[:, None]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding(dtype, reduction):
    x = rnd((4, 5), dtype, 1)
    y = _pm1((4, 5), 3).to(getattr(torch, dtype))
    tr = TF.hinge_embedding_loss(x, y, margin=0.7, reduction=reduction)
    check(F.hinge_embedding_loss(P(x), P(y), margin=0.7, reduction=reduction), tr, dtype)
    check(ptcore.nn.HingeEmbeddingLoss(margin=0.7, reduction=reduction)(P(x), P(y)), tr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_soft_margin_and_multilabel_soft_margin(dtype, reduction, weighted):
    x = rnd((4, 5), dtype, 1) * 3
    y = _pm1((4, 5), 3).to(getattr(torch, dtype))
    check(ptcore.nn.SoftMarginLoss(reduction=reduction)(P(x), P(y)),
          TF.soft_margin_loss(x, y, reduction=reduction), dtype)
    y01 = (y > 0).to(x.dtype)
    w = rnd((5,), dtype, 4, 0.1, 2.0) if weighted else None
    tr = TF.multilabel_soft_margin_loss(x, y01, weight=w, reduction=reduction)
    check(F.multilabel_soft_margin_loss(P(x), P(y01), weight=P(w), reduction=reduction), tr, dtype)
    check(ptcore.nn.MultiLabelSoftMarginLoss(weight=P(w), reduction=reduction)(P(x), P(y01)), tr,
          dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding(dtype, reduction, margin):
    a, b = rnd((5, 4), dtype, 1), rnd((5, 4), dtype, 2)
    y = _pm1((5,), 3).to(getattr(torch, dtype))
    tr = TF.cosine_embedding_loss(a, b, y, margin=margin, reduction=reduction)
    check(F.cosine_embedding_loss(P(a), P(b), P(y), margin=margin, reduction=reduction), tr, dtype)
    check(ptcore.nn.CosineEmbeddingLoss(margin=margin, reduction=reduction)(P(a), P(b), P(y)), tr,
          dtype)
    y0 = torch.tensor(-1.0, dtype=a.dtype)
    check(F.cosine_embedding_loss(P(a[0]), P(b[0]), P(y0), margin=margin, reduction=reduction),
          TF.cosine_embedding_loss(a[0], b[0], y0, margin=margin, reduction=reduction), dtype)
    same_error(lambda: F.cosine_embedding_loss(P(a), P(b), P(y[:, None])),
               lambda: TF.cosine_embedding_loss(a, b, y[:, None]))
    same_error(lambda: F.cosine_embedding_loss(P(a), P(b), P(y0)),
               lambda: TF.cosine_embedding_loss(a, b, y0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2, False), (2, True), (1, False), (3.0, True)])
def test_triplet_margin(dtype, reduction, p, swap):
    a, pos, neg = rnd((6, 4), dtype, 1), rnd((6, 4), dtype, 2), rnd((6, 4), dtype, 3)
    tr = TF.triplet_margin_loss(a, pos, neg, margin=1.5, p=p, swap=swap, reduction=reduction)
    check(F.triplet_margin_loss(P(a), P(pos), P(neg), margin=1.5, p=p, swap=swap,
                                reduction=reduction), tr, dtype)
    check(ptcore.nn.TripletMarginLoss(margin=1.5, p=p, swap=swap, reduction=reduction)(
        P(a), P(pos), P(neg)), tr, dtype)
    tr = TF.triplet_margin_with_distance_loss(a, pos, neg, swap=swap, reduction=reduction)
    check(F.triplet_margin_with_distance_loss(P(a), P(pos), P(neg), swap=swap,
                                              reduction=reduction), tr, dtype)
    check(ptcore.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), swap=swap,
        reduction=reduction)(P(a), P(pos), P(neg)),
        torch.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda u, v: 1.0 - TF.cosine_similarity(u, v), swap=swap,
            reduction=reduction)(a, pos, neg), dtype)


def test_triplet_errors():
    a = rnd((3, 4), "float32")
    same_error(lambda: F.triplet_margin_loss(P(a), P(a), P(a[0])),
               lambda: TF.triplet_margin_loss(a, a, a[0]))
    same_error(lambda: F.triplet_margin_loss(P(a), P(a), P(a), margin=0),
               lambda: TF.triplet_margin_loss(a, a, a, margin=0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin(dtype, reduction, p, weighted):
    x = rnd((6, 4), dtype, 1)
    t = torch.tensor([0, 1, 2, 3, 3, 1])
    w = rnd((4,), dtype, 2, 0.1, 2.0) if weighted else None
    tr = TF.multi_margin_loss(x, t, p=p, margin=0.8, weight=w, reduction=reduction)
    check(F.multi_margin_loss(P(x), P(t), p=p, margin=0.8, weight=P(w), reduction=reduction), tr,
          dtype)
    check(ptcore.nn.MultiMarginLoss(p=p, margin=0.8, weight=P(w), reduction=reduction)(P(x), P(t)),
          tr, dtype)
    check(F.multi_margin_loss(P(x[0]), P(t[0]), reduction=reduction),
          TF.multi_margin_loss(x[0], t[0], reduction=reduction), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin(dtype, reduction):
    x = rnd((3, 5), dtype, 1)
    t = torch.tensor([[3, 0, -1, 1, 4], [0, 1, 2, 3, 4], [-1, 1, 2, 0, 0]])
    tr = TF.multilabel_margin_loss(x, t, reduction=reduction)
    check(F.multilabel_margin_loss(P(x), P(t), reduction=reduction), tr, dtype)
    check(ptcore.nn.MultiLabelMarginLoss(reduction=reduction)(P(x), P(t)), tr, dtype)
    check(F.multilabel_margin_loss(P(x[0]), P(t[0]), reduction=reduction),
          TF.multilabel_margin_loss(x[0], t[0], reduction=reduction), dtype)


def test_margin_errors():
    x = rnd((3, 4), "float32")
    for t, kw in [(torch.tensor([0, 1, 5]), {}), (torch.tensor([0, 1]), {}),
                  (torch.tensor([0, 1, 2]), {"p": 3}),
                  (torch.tensor([0, 1, 2]), {"weight": torch.ones(3)}),
                  (torch.tensor([0.0, 1, 2]), {}), (torch.tensor([0, 1, 2]), {"weight": torch.ones(2, 2)})]:
        pkw = {k: (P(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        same_error(lambda: F.multi_margin_loss(P(x), P(t), **pkw),
                   lambda: TF.multi_margin_loss(x, t, **kw))
    same_error(lambda: F.multi_margin_loss(P(torch.randn(3, 4, 2)), P(torch.tensor([0, 1, 2]))),
               lambda: TF.multi_margin_loss(torch.randn(3, 4, 2), torch.tensor([0, 1, 2])))
    for t in [torch.tensor([0, 1, 2]), torch.tensor([[0, 1, 5, -1]] * 3),
              torch.tensor([[0, -2, 1, 1]] * 3), torch.tensor([[0, 1, 2, -1]] * 3).float()]:
        same_error(lambda: F.multilabel_margin_loss(P(x), P(t)),
                   lambda: TF.multilabel_margin_loss(x, t))


# ---------------------------------------------------------------------------
# modules: attributes, repr, buffers
# ---------------------------------------------------------------------------
def test_module_attributes():
    nn = ptcore.nn
    m = nn.CrossEntropyLoss(weight=ptcore.ones(3), ignore_index=2, label_smoothing=0.1)
    assert m.reduction == "mean" and m.ignore_index == 2 and m.label_smoothing == 0.1
    assert "weight" in dict(m.named_buffers())
    assert isinstance(m, nn.Module)
    assert nn.MSELoss(reduction="sum").reduction == "sum"
    assert nn.SmoothL1Loss(beta=0.5).beta == 0.5
    assert nn.HuberLoss(delta=2.0).delta == 2.0
    b = nn.BCEWithLogitsLoss(pos_weight=ptcore.ones(3))
    assert set(dict(b.named_buffers())) == {"pos_weight"}
    assert nn.KLDivLoss(reduction="batchmean", log_target=True).log_target
    assert nn.TripletMarginLoss(margin=2.0, p=1.0, eps=1e-3, swap=True).swap
    with pytest.raises(ValueError):
        nn.MSELoss(reduction="bogus")(ptcore.ones(2), ptcore.ones(2))


# ---------------------------------------------------------------------------
# gradients (need autograd)
# ---------------------------------------------------------------------------
GRAD_CASES = [
    ("mse_loss", lambda a, b: (a, b), {}),
    ("l1_loss", lambda a, b: (a, b), {}),
    ("smooth_l1_loss", lambda a, b: (a, b), {"beta": 0.5}),
    ("huber_loss", lambda a, b: (a, b), {"delta": 0.5}),
    ("soft_margin_loss", lambda a, b: (a, torch.sign(b)), {}),
    ("binary_cross_entropy_with_logits", lambda a, b: (a, torch.sigmoid(b)),
     {"pos_weight": torch.tensor([0.5, 1.0, 2.0])}),
    ("binary_cross_entropy", lambda a, b: (torch.sigmoid(a), torch.sigmoid(b)), {}),
    ("kl_div", lambda a, b: (torch.log_softmax(a, 1), torch.softmax(b, 1)),
     {"reduction": "batchmean"}),
    ("poisson_nll_loss", lambda a, b: (a, b.abs()), {}),
    ("hinge_embedding_loss", lambda a, b: (a, torch.sign(b)), {}),
    ("multilabel_soft_margin_loss", lambda a, b: (a, (b > 0).to(a.dtype)), {}),
]


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", range(len(GRAD_CASES)))
def test_grad_elementwise_losses(case, reduction, dtype):
    name, prep, kw = GRAD_CASES[case]
    if name == "kl_div" and reduction == "mean":
        reduction = "batchmean"
    a0, b0 = rnd((4, 3), dtype, 1), rnd((4, 3), dtype, 2)
    a, b = prep(a0, b0)
    kw = dict(kw, reduction=kw.get("reduction", reduction))
    if "pos_weight" in kw:
        kw["pos_weight"] = kw["pos_weight"].to(a.dtype)
    pkw = {k: (P(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grad_check(lambda x, y: getattr(F, name)(x, y, **pkw),
                   lambda x, y: getattr(TF, name)(x, y, **kw), [a, b], dtype)


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 2, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,label_smoothing", [(False, 0.0), (True, 0.0), (True, 0.2)])
def test_grad_cross_entropy(dtype, shape, reduction, weighted, label_smoothing):
    x = rnd(shape, dtype, 1)
    t = _targets(shape, -100)
    w = rnd((shape[1],), dtype, 2, 0.1, 2.0) if weighted else None
    kw = dict(weight=w, reduction=reduction, label_smoothing=label_smoothing)
    pkw = dict(kw, weight=P(w))
    tx = x.clone().requires_grad_(True)
    px = P(x).requires_grad_(True)
    tl = TF.cross_entropy(tx, t, **kw)
    pl = F.cross_entropy(px, P(t), **pkw)
    r = rnd(tuple(tl.shape), dtype, 5)
    (tl * r).sum().backward()
    (pl * P(r)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    # probability targets: gradient w.r.t. both input and target
    tp = torch.softmax(rnd(shape, dtype, 3), 1)
    grad_check(lambda u, v: F.cross_entropy(u, v, **pkw), lambda u, v: TF.cross_entropy(u, v, **kw),
               [x, tp], dtype)


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_pair_losses(dtype):
    a, b, c = rnd((5, 4), dtype, 1), rnd((5, 4), dtype, 2), rnd((5, 4), dtype, 3)
    y = _pm1((5,), 3).to(a.dtype)
    grad_check(lambda u, v: F.cosine_embedding_loss(u, v, P(y), margin=0.1),
               lambda u, v: TF.cosine_embedding_loss(u, v, y, margin=0.1), [a, b], dtype)
    grad_check(lambda u, v: F.margin_ranking_loss(u[:, 0], v[:, 0], P(y), margin=0.1),
               lambda u, v: TF.margin_ranking_loss(u[:, 0], v[:, 0], y, margin=0.1), [a, b], dtype)
    grad_check(lambda u, v, w: F.triplet_margin_loss(u, v, w, swap=True),
               lambda u, v, w: TF.triplet_margin_loss(u, v, w, swap=True), [a, b, c], dtype)
    t = torch.tensor([0, 1, 2, 3, 1])
    grad_check(lambda u: F.multi_margin_loss(u, P(t), p=2, weight=P(torch.arange(1.0, 5).to(a.dtype))),
               lambda u: TF.multi_margin_loss(u, t, p=2, weight=torch.arange(1.0, 5).to(a.dtype)),
               [a], dtype)
    mt = torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 1, 2, 0], [2, -1, 0, 0], [1, 1, -1, 0]])
    grad_check(lambda u: F.multilabel_margin_loss(u, P(mt)),
               lambda u: TF.multilabel_margin_loss(u, mt), [a], dtype)
    var = rnd((5, 4), dtype, 7, 0.1, 2.0)
    grad_check(lambda u, v, s: F.gaussian_nll_loss(u, v, s), lambda u, v, s: TF.gaussian_nll_loss(u, v, s),
               [a, b, var], dtype)


@pytest.mark.parametrize("name,args", [
    ("mse_loss", 2), ("l1_loss", 2), ("smooth_l1_loss", 2), ("huber_loss", 2), ("kl_div", 2),
    ("soft_margin_loss", 2), ("multilabel_soft_margin_loss", 2), ("poisson_nll_loss", 2),
    ("binary_cross_entropy_with_logits", 2), ("hinge_embedding_loss", 2),
    ("margin_ranking_loss", 3), ("triplet_margin_loss", 3), ("gaussian_nll_loss", 3),
    ("triplet_margin_with_distance_loss", 3),
])
def test_invalid_reduction_everywhere(name, args):
    x = torch.rand(3, 4) + 0.1
    targs = [x] * args
    same_error(lambda: getattr(F, name)(*[P(a) for a in targs], reduction="bogus"),
               lambda: getattr(TF, name)(*targs, reduction="bogus"))


@needs_autograd
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_grad_bce_at_saturation(reduction):
    x = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.3, 1e-30], dtype=torch.float64)
    t = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.6, 0.5], dtype=torch.float64)
    w = torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0, 1.0], dtype=torch.float64)
    grad_check(lambda u, v: F.binary_cross_entropy(u, v, weight=P(w), reduction=reduction),
               lambda u, v: TF.binary_cross_entropy(u, v, weight=w, reduction=reduction),
               [x, t], "float64")


@pytest.mark.parametrize("pos_weighted", [False, True])
@pytest.mark.parametrize("loss", ["bce_with_logits", "multilabel_soft_margin"])
def test_logit_losses_gradient_at_zero_logits(loss, pos_weighted):
    """The slope of log(sigmoid(x)) at x = 0 is 1/2 (it was 1: composed
    clamp_max(x, 0) passes the boundary's gradient), so a zero logit got a
    zero BCE gradient."""
    vals = [[0.0, 0.0], [1.0, 0.0], [0.0, -2.0]]
    tgt = [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]

    def run(L, fn):
        x = L.tensor(vals, dtype=L.float64, requires_grad=True)
        y = L.tensor(tgt, dtype=L.float64)
        if loss == "bce_with_logits":
            pw = L.tensor([2.0, 0.5], dtype=L.float64) if pos_weighted else None
            out = fn.binary_cross_entropy_with_logits(x, y, pos_weight=pw)
        else:
            out = fn.multilabel_soft_margin_loss(x, y)
        return L.autograd.grad(out, x, create_graph=True)[0]
    gp, gt = run(ptcore, F), run(torch, TF)
    np.testing.assert_allclose(gp.detach().numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("loss", ["binary_cross_entropy_with_logits", "mse_loss", "smooth_l1_loss",
                                  "huber_loss", "binary_cross_entropy"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_loss_of_input_and_target_derived_from_one_tensor(loss, create_graph):
    """Input and target both computed from one leaf (Bernoulli.entropy is
    bce_with_logits(logits, probs)): the loss node's backward raised 'backward
    through the graph a second time' and counted the target's path twice."""
    def run(L, fn):
        p = L.tensor([0.3, 0.8], dtype=L.float64, requires_grad=True)
        x = L.sigmoid(p * 2) if loss == "binary_cross_entropy" else p * 3 - 1
        g, = L.autograd.grad(getattr(fn, loss)(x, L.sigmoid(p)), p, create_graph=create_graph)
        out = [g.detach().numpy()]
        if create_graph:
            out.append(L.autograd.grad(g.sum(), p)[0].numpy())
        return out
    for a, b in zip(run(ptcore, F), run(torch, TF)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-14)


def test_bernoulli_and_geometric_entropy_gradients():
    def run(L):
        p = L.tensor([0.3, 0.8], dtype=L.float64, requires_grad=True)
        D = L.distributions
        out = D.Bernoulli(p).entropy().sum() + D.Geometric(p).entropy().sum()
        out = out + D.kl_divergence(D.Geometric(p), D.Geometric(p.detach() * 0.5)).sum()
        return L.autograd.grad(out, p)[0].numpy()
    np.testing.assert_allclose(run(ptcore), run(torch), rtol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("smooth_l1_loss", {"beta": 0.1}), ("huber_loss", {}),
                                     ("huber_loss", {"delta": 0.5}), ("huber_loss", {"delta": 2.5})])
def test_smooth_l1_huber_bits_as_torch(name, kw, reduction, dtype):
    # the one-op slopes (clamp) of the backward and Huber's m (z - 0.5 m) terms give torch's
    # kernels' bits, on the band's edges (|d| == beta exactly), for NaN (a NaN gradient, as
    # torch's kernel: sign(nan) is 0) and inf differences too
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((6, 9)) * 2).astype(dtype)
    b = rng.standard_normal((6, 9)).astype(dtype)
    edge = kw.get("beta", kw.get("delta", 1.0))
    a[0, 0], a[0, 1] = b[0, 0] + edge, b[0, 1] - edge
    a[0, 2], a[0, 3], a[0, 4] = np.nan, np.inf, -np.inf
    tx = torch.tensor(a, requires_grad=True)
    px = ptcore.tensor(a, requires_grad=True)
    tl = getattr(TF, name)(tx, torch.tensor(b), reduction=reduction, **kw)
    pl = getattr(F, name)(px, ptcore.tensor(b), reduction=reduction, **kw)
    tl.sum().backward()
    pl.sum().backward()
    assert pl.grad_fn.name() == tl.grad_fn.name()
    np.testing.assert_array_equal(px.grad.numpy(), tx.grad.numpy())
    if name == "huber_loss" or edge == 1.0:
        np.testing.assert_array_equal(pl.detach().numpy(), tl.detach().numpy())
    else:       # (smooth L1 off beta 1: the where of both branches, to rounding)
        np.testing.assert_allclose(pl.detach().numpy(), tl.detach().numpy(), **tol(dtype))


@pytest.mark.parametrize("name,kw", [("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 0.5})])
def test_smooth_l1_huber_double_backward_on_edge(name, kw):
    # under create_graph the slope keeps torch's second derivative: 0 on the band's edge
    a = np.array([0.5, -0.5, 0.2, 1.5, -0.1])
    b = np.zeros(5)
    tx = torch.tensor(a, requires_grad=True)
    px = ptcore.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(TF, name)(tx, torch.tensor(b), reduction="sum", **kw), tx,
                                create_graph=True)
    (pg,) = ptcore.autograd.grad(getattr(F, name)(px, ptcore.tensor(b), reduction="sum", **kw), px,
                                 create_graph=True)
    np.testing.assert_array_equal(pg.detach().numpy(), tg.detach().numpy())
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    (pgg,) = ptcore.autograd.grad(pg.sum(), px)
    np.testing.assert_array_equal(pgg.numpy(), tgg.numpy())
