"""Gradients of every ptcore.nn module family against PyTorch.

Each case builds the same module in torch and ptcore (torch's parameters and
buffers copied over), runs the same input, and compares the outputs, the
gradients of ``sum(out * r)`` (fixed random ``r``) with respect to every
floating input and every parameter, and the buffers after the forward
(running statistics in training mode).
"""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn

try:
    import torch
    import torch.nn as tnn
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

DTYPES = ["float64", "float32"]
TOL = {"float64": dict(rtol=1e-7, atol=1e-9), "float32": dict(rtol=1e-4, atol=1e-5)}


class Arr:
    """A test input: numpy array + whether it gets a gradient."""

    def __init__(self, a, grad=None):
        self.a = np.asarray(a)
        self.grad = (self.a.dtype.kind == "f") if grad is None else grad


def randn(*shape, seed=0, scale=1.0, shift=0.0):
    return Arr(np.random.default_rng(seed).standard_normal(shape) * scale + shift)


def uniform(*shape, seed=0, low=0.0, high=1.0, grad=True):
    return Arr(np.random.default_rng(seed).uniform(low, high, shape), grad)


def ints(*shape, high, seed=0, low=0):
    return Arr(np.random.default_rng(seed).integers(low, high, shape))


def const(a, grad=False):
    return Arr(np.asarray(a), grad)


def _tensors(arr, dtype):
    a = arr.a
    if a.dtype.kind == "f":
        a = a.astype(dtype)
    t = torch.from_numpy(a.copy())
    p = ptcore.from_numpy(a.copy())
    if arr.grad:
        t.requires_grad_(True)
        p.requires_grad_(True)
    return t, p


def _flat(o):
    if isinstance(o, (tuple, list)):
        out = []
        for x in o:
            out.extend(_flat(x))
        return out
    if o is None:
        return []
    if hasattr(o, "data") and hasattr(o, "batch_sizes"):  # PackedSequence
        return [o.data]
    return [o]


def _np(t):
    return t.detach().numpy()


def randomize(tm, seed=0):
    """Give the torch module non-trivial parameters/buffers."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in tm.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5
                    + (1.0 if name.endswith("weight") and p.dim() == 1 else 0.0))
        for name, b in tm.named_buffers():
            if name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g, dtype=b.dtype) + 0.5)
            elif name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=g, dtype=b.dtype))


def copy_state(tm, pm):
    sd = {k: ptcore.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    pm.load_state_dict(sd)


def compare(make, inputs, dtype, train=True, kwargs=None, randomize_params=True,
            check_buffers=True, seed=0):
    """Build ``make(nn)`` for torch and ptcore, compare forward/backward."""
    tdt, pdt = getattr(torch, dtype), getattr(ptcore, dtype)
    torch.manual_seed(seed)
    tm = make(tnn)
    if isinstance(tm, tnn.Module):
        tm = tm.to(tdt)
    pm = make(pnn)
    if isinstance(pm, pnn.Module):
        pm = pm.to(pdt)
        if randomize_params:
            randomize(tm, seed)
        copy_state(tm, pm)
        tm.train(train)
        pm.train(train)
    pairs = [_tensors(a, dtype) for a in inputs]
    tk, pk = {}, {}
    for k, v in (kwargs or {}).items():
        if isinstance(v, Arr):
            tk[k], pk[k] = _tensors(v, dtype)
        else:
            tk[k] = pk[k] = v
    tout = _flat(tm(*[t for t, _ in pairs], **tk))
    pout = _flat(pm(*[p for _, p in pairs], **pk))
    assert len(tout) == len(pout)
    tol = TOL[dtype]
    tl, pl = 0, 0
    rng = np.random.default_rng(1234)
    for k, (t, p) in enumerate(zip(tout, pout)):
        assert tuple(p.shape) == tuple(t.shape), (k, p.shape, t.shape)
        assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (k, p.dtype, t.dtype)
        if t.dtype.is_floating_point:
            np.testing.assert_allclose(_np(p), _np(t), err_msg=f"output {k}", **tol)
        else:
            np.testing.assert_array_equal(_np(p), _np(t), err_msg=f"output {k}")
        if t.requires_grad:
            assert p.requires_grad, f"output {k} does not require grad"
            r = rng.standard_normal(tuple(t.shape)).astype(dtype)
            tl = tl + (t * torch.from_numpy(r)).sum()
            pl = pl + (p * ptcore.from_numpy(r)).sum()
    tl.backward()
    pl.backward()
    for k, ((t, p), a) in enumerate(zip(pairs, inputs)):
        if a.grad:
            assert (p.grad is None) == (t.grad is None), f"input {k}"
            if t.grad is not None:
                np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(),
                                           err_msg=f"grad of input {k}", **tol)
    for k in tk:
        t, p = tk[k], pk[k]
        if isinstance(t, torch.Tensor) and t.requires_grad:
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), err_msg=f"grad of {k}", **tol)
    if isinstance(tm, tnn.Module):
        tparams = dict(tm.named_parameters())
        pparams = dict(pm.named_parameters())
        assert set(tparams) == set(pparams)
        for name, tp in tparams.items():
            pp = pparams[name]
            assert (pp.grad is None) == (tp.grad is None), name
            if tp.grad is not None:
                np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(),
                                           err_msg=f"grad of {name}", **tol)
        if check_buffers:
            tbuf = dict(tm.named_buffers())
            for name, pb in pm.named_buffers():
                np.testing.assert_allclose(pb.numpy(), tbuf[name].numpy(),
                                           err_msg=f"buffer {name}", **tol)
    return tm, pm


# ---------------------------------------------------------------------------
# linear, activations, dropout (eval), embedding, shape modules
# ---------------------------------------------------------------------------
LAYER_CASES = {
    "linear": (lambda nn: nn.Linear(5, 3), [randn(4, 5)]),
    "linear_nobias_3d": (lambda nn: nn.Linear(5, 3, bias=False), [randn(2, 4, 5)]),
    "linear_1d": (lambda nn: nn.Linear(5, 3), [randn(5)]),
    "bilinear": (lambda nn: nn.Bilinear(4, 3, 2), [randn(5, 4), randn(5, 3, seed=1)]),
    "bilinear_nobias": (lambda nn: nn.Bilinear(4, 3, 2, bias=False),
                        [randn(2, 5, 4), randn(2, 5, 3, seed=1)]),
    "identity": (lambda nn: nn.Identity(), [randn(3, 4)]),
    "flatten": (lambda nn: nn.Flatten(1, 2), [randn(2, 3, 4, 2)]),
    "unflatten": (lambda nn: nn.Unflatten(1, (2, 3)), [randn(4, 6)]),
}

ACT_CASES = {
    "ReLU": lambda nn: nn.ReLU(),
    "ReLU6": lambda nn: nn.ReLU6(),
    "LeakyReLU": lambda nn: nn.LeakyReLU(0.1),
    "ELU": lambda nn: nn.ELU(0.7),
    "SELU": lambda nn: nn.SELU(),
    "CELU": lambda nn: nn.CELU(1.3),
    "GELU": lambda nn: nn.GELU(),
    "GELU_tanh": lambda nn: nn.GELU(approximate="tanh"),
    "SiLU": lambda nn: nn.SiLU(),
    "Mish": lambda nn: nn.Mish(),
    "Sigmoid": lambda nn: nn.Sigmoid(),
    "Tanh": lambda nn: nn.Tanh(),
    "Hardtanh": lambda nn: nn.Hardtanh(-0.5, 0.7),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(),
    "Hardswish": lambda nn: nn.Hardswish(),
    "Softplus": lambda nn: nn.Softplus(beta=2.0, threshold=1.0),
    "Softshrink": lambda nn: nn.Softshrink(0.3),
    "Hardshrink": lambda nn: nn.Hardshrink(0.3),
    "Tanhshrink": lambda nn: nn.Tanhshrink(),
    "Softsign": lambda nn: nn.Softsign(),
    "LogSigmoid": lambda nn: nn.LogSigmoid(),
    "Threshold": lambda nn: nn.Threshold(0.1, 2.0),
    "PReLU": lambda nn: nn.PReLU(),
    "PReLU_channels": lambda nn: nn.PReLU(6),
    "RReLU_eval": lambda nn: nn.RReLU(0.1, 0.3),
    "GLU": lambda nn: nn.GLU(),
    "GLU_dim0": lambda nn: nn.GLU(0),
    "Softmax": lambda nn: nn.Softmax(dim=1),
    "LogSoftmax": lambda nn: nn.LogSoftmax(dim=0),
    "Softmin": lambda nn: nn.Softmin(dim=1),
    "Dropout_eval": lambda nn: nn.Dropout(0.3),
    "Dropout1d_eval": lambda nn: nn.Dropout1d(0.3),
    "Dropout2d_eval": lambda nn: nn.Dropout2d(0.3),
    "AlphaDropout_eval": lambda nn: nn.AlphaDropout(0.3),
    "FeatureAlphaDropout_eval": lambda nn: nn.FeatureAlphaDropout(0.3),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_layer_grads(case, dtype):
    make, inputs = LAYER_CASES[case]
    compare(make, inputs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(ACT_CASES))
def test_activation_grads(case, dtype):
    # (4, 6, 4): wide enough range for the piecewise activations
    compare(ACT_CASES[case], [randn(4, 6, 4, scale=2.0)], dtype, train=False,
            randomize_params=case.startswith("PReLU"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax2d_grads(dtype):
    compare(lambda nn: nn.Softmax2d(), [randn(2, 3, 4, 5)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1, "scale_grad_by_freq": True},
                                {"max_norm": 1.0}])
def test_embedding_grads(kw, dtype):
    idx = const(np.array([[0, 2, 4, 2], [9, 2, 1, 0], [3, 3, 3, 9]]))
    tm, pm = compare(lambda nn: nn.Embedding(10, 4, **kw), [idx], dtype, randomize_params=False)
    if "padding_idx" in kw:
        assert not pm.weight.grad[kw["padding_idx"]].abs().sum().item()


# ---------------------------------------------------------------------------
# normalization (train mode: gradients and running statistics)
# ---------------------------------------------------------------------------
NORM_CASES = {
    "LayerNorm": (lambda nn: nn.LayerNorm(6), (3, 4, 6)),
    "LayerNorm_2d_noaffine": (lambda nn: nn.LayerNorm((4, 6), elementwise_affine=False), (3, 4, 6)),
    "LayerNorm_nobias": (lambda nn: nn.LayerNorm(6, bias=False), (3, 6)),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    "GroupNorm_4d_noaffine": (lambda nn: nn.GroupNorm(4, 4, affine=False), (2, 4, 3, 2)),
    "BatchNorm1d_2d": (lambda nn: nn.BatchNorm1d(4), (6, 4)),
    "BatchNorm1d_3d": (lambda nn: nn.BatchNorm1d(4, momentum=0.3), (3, 4, 5)),
    "BatchNorm1d_cumavg": (lambda nn: nn.BatchNorm1d(4, momentum=None), (5, 4)),
    "BatchNorm1d_noaffine_nostats": (
        lambda nn: nn.BatchNorm1d(4, affine=False, track_running_stats=False), (5, 4)),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(3), (4, 3, 2, 5)),
    "BatchNorm3d": (lambda nn: nn.BatchNorm3d(2), (2, 2, 3, 2, 2)),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(4), (3, 4, 5)),
    "InstanceNorm1d_affine_stats": (
        lambda nn: nn.InstanceNorm1d(4, affine=True, track_running_stats=True), (3, 4, 5)),
    "InstanceNorm2d_affine": (lambda nn: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 3)),
    "InstanceNorm3d_stats": (lambda nn: nn.InstanceNorm3d(2, track_running_stats=True),
                             (2, 2, 3, 2, 3)),
    "RMSNorm": (lambda nn: nn.RMSNorm(6), (3, 6)),
    "RMSNorm_2d_eps": (lambda nn: nn.RMSNorm((4, 6), eps=1e-3), (2, 4, 6)),
    "RMSNorm_noaffine": (lambda nn: nn.RMSNorm(6, elementwise_affine=False), (3, 6)),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(3, alpha=0.1, k=2.0), (2, 5, 4)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("case", list(NORM_CASES))
def test_norm_grads(case, train, dtype):
    make, shape = NORM_CASES[case]
    compare(make, [randn(*shape, scale=1.5, shift=0.3)], dtype, train=train)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batchnorm_running_stats_over_steps(dtype):
    """Several train steps, then eval: the running statistics (incl.
    num_batches_tracked) and the eval outputs agree."""
    tm, pm = compare(lambda nn: nn.BatchNorm2d(3), [randn(4, 3, 2, 2)], dtype)
    for s in range(1, 4):
        x = randn(4, 3, 2, 2, seed=s, scale=s, shift=s)
        t, p = _tensors(x, dtype)
        tm(t)
        pm(p)
    tm.eval()
    pm.eval()
    for name, b in tm.named_buffers():
        np.testing.assert_allclose(dict(pm.named_buffers())[name].numpy(), b.numpy(), **TOL[dtype])
    t, p = _tensors(randn(2, 3, 2, 2, seed=9), dtype)
    np.testing.assert_allclose(_np(pm(p)), _np(tm(t)), **TOL[dtype])


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------
def _logp(*shape, seed=0, dim=1):
    a = np.random.default_rng(seed).standard_normal(shape)
    a = a - np.log(np.exp(a).sum(dim, keepdims=True))
    return Arr(a)


def _prob(*shape, seed=0, dim=1, grad=True):
    a = np.exp(np.random.default_rng(seed).standard_normal(shape))
    return Arr(a / a.sum(dim, keepdims=True), grad)


def _pm1(*shape, seed=0):
    return const(np.where(np.random.default_rng(seed).standard_normal(shape) > 0, 1.0, -1.0))


W4 = np.array([0.5, 1.0, 2.0, 0.25])

LOSS_CASES = {
    "CE": (lambda nn: nn.CrossEntropyLoss(), [randn(5, 4), ints(5, high=4)]),
    "CE_ignore": (lambda nn: nn.CrossEntropyLoss(ignore_index=1),
                  [randn(6, 4), const(np.array([1, 0, 1, 3, 2, 1]))]),
    "CE_weight_sum": (lambda nn: nn.CrossEntropyLoss(weight=nn_t(nn, W4), reduction="sum"),
                      [randn(5, 4), ints(5, high=4)]),
    "CE_weight_ignore_smooth_4d": (
        lambda nn: nn.CrossEntropyLoss(weight=nn_t(nn, W4), ignore_index=0, label_smoothing=0.1),
        [randn(3, 4, 2, 2), ints(3, 2, 2, high=4)]),
    "CE_smooth_none": (lambda nn: nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none"),
                       [randn(5, 4), ints(5, high=4, seed=2)]),
    "CE_prob": (lambda nn: nn.CrossEntropyLoss(), [randn(5, 4), _prob(5, 4, seed=1)]),
    "CE_prob_weight_smooth": (
        lambda nn: nn.CrossEntropyLoss(weight=nn_t(nn, W4), label_smoothing=0.3),
        [randn(3, 4, 2), _prob(3, 4, 2, seed=1)]),
    "CE_prob_none": (lambda nn: nn.CrossEntropyLoss(reduction="none"),
                     [randn(5, 4), _prob(5, 4, seed=1)]),
    "CE_1d": (lambda nn: nn.CrossEntropyLoss(), [randn(4), const(np.array(2))]),
    "NLL": (lambda nn: nn.NLLLoss(), [_logp(5, 4), ints(5, high=4)]),
    "NLL_weight_ignore": (lambda nn: nn.NLLLoss(weight=nn_t(nn, W4), ignore_index=2),
                          [_logp(6, 4), const(np.array([2, 0, 1, 3, 2, 1]))]),
    "NLL_4d_none": (lambda nn: nn.NLLLoss(reduction="none"), [_logp(2, 4, 3, 2), ints(2, 3, 2, high=4)]),
    "BCE": (lambda nn: nn.BCELoss(), [uniform(4, 3, low=0.05, high=0.95),
                                     uniform(4, 3, seed=1)]),
    "BCE_weight_sum": (lambda nn: nn.BCELoss(weight=nn_t(nn, np.array([0.5, 1.0, 2.0])),
                                             reduction="sum"),
                       [uniform(4, 3, low=0.05, high=0.95), uniform(4, 3, seed=1, grad=False)]),
    "BCEWithLogits": (lambda nn: nn.BCEWithLogitsLoss(), [randn(4, 3), uniform(4, 3, seed=1)]),
    "BCEWithLogits_posw_weight": (
        lambda nn: nn.BCEWithLogitsLoss(weight=nn_t(nn, np.array([0.5, 1.0, 2.0])),
                                        pos_weight=nn_t(nn, np.array([3.0, 1.0, 0.2]))),
        [randn(4, 3, scale=3), uniform(4, 3, seed=1)]),
    "BCEWithLogits_posw_none": (
        lambda nn: nn.BCEWithLogitsLoss(pos_weight=nn_t(nn, np.array([3.0, 1.0, 0.2])),
                                        reduction="none"),
        [randn(2, 4, 3, scale=3), uniform(2, 4, 3, seed=1)]),
    "KLDiv_batchmean": (lambda nn: nn.KLDivLoss(reduction="batchmean"),
                        [_logp(4, 5), _prob(4, 5, seed=1)]),
    "KLDiv_logtarget_sum": (lambda nn: nn.KLDivLoss(reduction="sum", log_target=True),
                            [_logp(4, 5), _logp(4, 5, seed=1)]),
    "KLDiv_none": (lambda nn: nn.KLDivLoss(reduction="none"), [_logp(4, 5), _prob(4, 5, seed=1)]),
    "MSE": (lambda nn: nn.MSELoss(), [randn(4, 3), randn(4, 3, seed=1)]),
    "L1_sum": (lambda nn: nn.L1Loss(reduction="sum"), [randn(4, 3), randn(4, 3, seed=1)]),
    "Huber": (lambda nn: nn.HuberLoss(delta=0.5), [randn(4, 3), randn(4, 3, seed=1)]),
    "Huber_none": (lambda nn: nn.HuberLoss(delta=1.5, reduction="none"),
                   [randn(4, 3, scale=2), randn(4, 3, seed=1)]),
    "SmoothL1": (lambda nn: nn.SmoothL1Loss(beta=0.3), [randn(4, 3), randn(4, 3, seed=1)]),
    "SmoothL1_beta0": (lambda nn: nn.SmoothL1Loss(beta=0.0, reduction="sum"),
                       [randn(4, 3), randn(4, 3, seed=1)]),
    "PoissonNLL": (lambda nn: nn.PoissonNLLLoss(), [randn(4, 3), uniform(4, 3, high=3)]),
    "PoissonNLL_full": (lambda nn: nn.PoissonNLLLoss(log_input=False, full=True),
                        [uniform(4, 3, low=0.1, high=2), uniform(4, 3, seed=1, high=3)]),
    "GaussianNLL": (lambda nn: nn.GaussianNLLLoss(full=True, reduction="sum"),
                    [randn(4, 3), randn(4, 3, seed=1), uniform(4, 3, seed=2, low=0.2, high=2)]),
    "GaussianNLL_var1": (lambda nn: nn.GaussianNLLLoss(),
                         [randn(4, 3), randn(4, 3, seed=1), uniform(4, 1, seed=2, low=0.2, high=2)]),
    "MarginRanking": (lambda nn: nn.MarginRankingLoss(0.2),
                      [randn(6), randn(6, seed=1), _pm1(6, seed=2)]),
    "HingeEmbedding": (lambda nn: nn.HingeEmbeddingLoss(0.5), [randn(4, 3), _pm1(4, 3, seed=2)]),
    "SoftMargin": (lambda nn: nn.SoftMarginLoss(), [randn(4, 3), _pm1(4, 3, seed=2)]),
    "MultiLabelSoftMargin": (
        lambda nn: nn.MultiLabelSoftMarginLoss(weight=nn_t(nn, W4)),
        [randn(3, 4), const(np.array([[1.0, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]))]),
    "MultiMargin": (lambda nn: nn.MultiMarginLoss(), [randn(5, 4), ints(5, high=4)]),
    "MultiMargin_p2_weight": (lambda nn: nn.MultiMarginLoss(p=2, margin=0.5, weight=nn_t(nn, W4),
                                                            reduction="none"),
                              [randn(5, 4), ints(5, high=4)]),
    "MultiLabelMargin": (
        lambda nn: nn.MultiLabelMarginLoss(),
        [randn(3, 4), const(np.array([[3, 0, -1, 1], [0, 1, 2, 3], [2, -1, 0, 0]]))]),
    "CosineEmbedding": (lambda nn: nn.CosineEmbeddingLoss(0.1),
                        [randn(5, 4), randn(5, 4, seed=1), _pm1(5, seed=2)]),
    "TripletMargin": (lambda nn: nn.TripletMarginLoss(margin=0.5, p=1.0),
                      [randn(5, 4), randn(5, 4, seed=1), randn(5, 4, seed=2)]),
    "TripletMargin_swap": (lambda nn: nn.TripletMarginLoss(swap=True, reduction="sum"),
                           [randn(5, 4), randn(5, 4, seed=1), randn(5, 4, seed=2)]),
    "TripletMarginWithDistance": (
        lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.3, swap=True),
        [randn(5, 4), randn(5, 4, seed=1), randn(5, 4, seed=2)]),
}


def nn_t(nn, a):
    """A constant tensor of the framework of ``nn`` (float64; the module's
    ``.to(dtype)`` converts buffers)."""
    if nn is tnn:
        return torch.from_numpy(np.array(a, dtype=np.float64))
    return ptcore.from_numpy(np.array(a, dtype=np.float64))


def _weight_dtype(make, dtype):
    """Loss weights given at construction stay attributes in some losses
    (not buffers), so build them in the test dtype."""
    def mk(nn):
        global nn_t
        old = nn_t

        def cast(nn_, a):
            return old(nn_, a).to(getattr(torch if nn_ is tnn else ptcore, dtype))
        nn_t = cast
        try:
            return make(nn)
        finally:
            nn_t = old
    return mk


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_loss_grads(case, dtype):
    make, inputs = LOSS_CASES[case]
    compare(_weight_dtype(make, dtype), inputs, dtype, randomize_params=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction,zero_inf", [("mean", False), ("sum", True), ("none", False)])
def test_ctc_loss_grads(reduction, zero_inf, dtype):
    T, N, C = 8, 3, 5
    lp = _logp(T, N, C, dim=2)
    targets = const(np.array([[1, 2, 2], [3, 4, 1], [1, 1, 1]]))
    il = const(np.array([8, 6, 2]))   # the last one is infeasible: inf loss
    tl = const(np.array([3, 2, 3]))
    if not zero_inf:
        il = const(np.array([8, 6, 7]))
    compare(lambda nn: nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=zero_inf),
            [lp, targets, il, tl], dtype, randomize_params=False)


# ---------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------
CONV_CASES = {
    "Conv1d": (lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), (2, 4, 9)),
    "Conv1d_same": (lambda nn: nn.Conv1d(3, 2, 4, padding="same", bias=False), (2, 3, 7)),
    "Conv2d": (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                    groups=2), (2, 4, 7, 6)),
    "Conv2d_reflect_same": (lambda nn: nn.Conv2d(3, 4, 3, padding="same", padding_mode="reflect"),
                            (2, 3, 5, 6)),
    "Conv2d_circular": (lambda nn: nn.Conv2d(2, 4, 3, padding=1, padding_mode="circular",
                                             bias=False), (2, 2, 5, 4)),
    "Conv2d_replicate_unbatched": (lambda nn: nn.Conv2d(2, 3, 2, padding=(1, 2),
                                                        padding_mode="replicate"), (2, 4, 5)),
    "Conv2d_depthwise": (lambda nn: nn.Conv2d(3, 6, 3, groups=3), (2, 3, 5, 5)),
    "Conv3d": (lambda nn: nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1, groups=2),
               (2, 2, 4, 5, 3)),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1,
                                                      groups=2), (2, 4, 5)),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0),
                                                      dilation=(1, 2), groups=2), (2, 4, 4, 3)),
    "ConvTranspose2d_outpad_nobias": (
        lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1, bias=False),
        (1, 3, 3, 4)),
    "ConvTranspose3d": (lambda nn: nn.ConvTranspose3d(2, 3, 2, stride=2), (2, 2, 2, 3, 2)),
    "Unfold": (lambda nn: nn.Unfold((2, 3), dilation=1, padding=1, stride=(2, 1)), (2, 3, 5, 4)),
    "Fold": (lambda nn: nn.Fold((4, 5), (2, 2), stride=(2, 1)), (2, 8, 8)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv_grads(case, dtype):
    make, shape = CONV_CASES[case]
    compare(make, [randn(*shape)], dtype)


# ---------------------------------------------------------------------------
# pooling, upsampling, pixel shuffle, padding
# ---------------------------------------------------------------------------
POOL_CASES = {
    "MaxPool1d": (lambda nn: nn.MaxPool1d(3, 2, 1), (2, 3, 9)),
    "MaxPool1d_indices": (lambda nn: nn.MaxPool1d(2, return_indices=True), (2, 3, 8)),
    "MaxPool2d_ceil": (lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 6, 7)),
    "MaxPool2d_dilation": (lambda nn: nn.MaxPool2d(2, stride=1, dilation=2), (2, 2, 5, 6)),
    "MaxPool2d_indices": (lambda nn: nn.MaxPool2d(2, return_indices=True), (2, 3, 6, 4)),
    "MaxPool3d_indices": (lambda nn: nn.MaxPool3d(2, stride=(1, 2, 2), return_indices=True),
                          (1, 2, 3, 4, 4)),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 8)),
    "AvgPool2d_ceil_divisor": (lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=5),
                               (2, 3, 6, 7)),
    "AvgPool2d_unbatched": (lambda nn: nn.AvgPool2d(2), (3, 6, 4)),
    "AvgPool3d": (lambda nn: nn.AvgPool3d(2, padding=1), (1, 2, 3, 4, 4)),
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(3), (2, 3, 8)),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    "AdaptiveAvgPool3d": (lambda nn: nn.AdaptiveAvgPool3d(2), (1, 2, 3, 5, 4)),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(4), (2, 3, 9)),
    "AdaptiveMaxPool2d_indices": (lambda nn: nn.AdaptiveMaxPool2d((3, 2), return_indices=True),
                                  (2, 3, 7, 5)),
    "AdaptiveMaxPool3d": (lambda nn: nn.AdaptiveMaxPool3d((2, 1, 2)), (1, 2, 3, 4, 4)),
    "LPPool1d": (lambda nn: nn.LPPool1d(2, 3, stride=2), (2, 3, 9)),
    "LPPool2d": (lambda nn: nn.LPPool2d(3, 2), (2, 3, 6, 4)),
    "Upsample_nearest": (lambda nn: nn.Upsample(scale_factor=2, mode="nearest"), (2, 3, 3, 4)),
    "Upsample_nearest_exact_1d": (lambda nn: nn.Upsample(size=7, mode="nearest-exact"), (2, 3, 4)),
    "Upsample_linear": (lambda nn: nn.Upsample(scale_factor=1.5, mode="linear"), (2, 3, 4)),
    "Upsample_bilinear_ac": (lambda nn: nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True),
                             (2, 3, 3, 4)),
    "Upsample_bilinear": (lambda nn: nn.Upsample(scale_factor=(1.5, 2.5), mode="bilinear"),
                          (1, 2, 4, 3)),
    "Upsample_bicubic": (lambda nn: nn.Upsample(scale_factor=2, mode="bicubic"), (1, 2, 3, 4)),
    "Upsample_trilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"), (1, 2, 2, 3, 2)),
    "UpsamplingNearest2d": (lambda nn: nn.UpsamplingNearest2d(size=(5, 6)), (1, 2, 3, 4)),
    "UpsamplingBilinear2d": (lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 4)),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), (2, 8, 3, 2)),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), (2, 2, 4, 6)),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d((1, 2, 2, 0)), (2, 3, 4, 4)),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d((2, 3)), (2, 3, 4)),
    "ReplicationPad3d": (lambda nn: nn.ReplicationPad3d(1), (1, 2, 2, 3, 2)),
    "CircularPad2d": (lambda nn: nn.CircularPad2d((1, 1, 2, 0)), (2, 3, 4, 4)),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), (2, 3, 2, 2)),
    "ConstantPad3d": (lambda nn: nn.ConstantPad3d(1, 0.5), (1, 2, 2, 2, 2)),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), (2, 4, 3, 2)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(POOL_CASES))
def test_pool_vision_grads(case, dtype):
    make, shape = POOL_CASES[case]
    compare(make, [randn(*shape)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kw", [dict(size=(3, 2)), dict(size=(12, 10)), dict(scale_factor=(0.3, 1.7)),
                                dict(size=(4, 11), align_corners=True)])
def test_interpolate_antialias_grads(mode, kw, dtype):
    import ptcore.nn.functional as F
    import torch.nn.functional as TF

    class Mod:
        def __init__(self, nn):
            self.f = TF if nn is tnn else F

        def __call__(self, x):
            return self.f.interpolate(x, mode=mode, antialias=True, **kw)
    compare(Mod, [randn(2, 3, 9, 7)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_unpool_grads(dtype):
    class Mod:
        def __init__(self, nn):
            self.pool = nn.MaxPool2d(2, return_indices=True)
            self.unpool = nn.MaxUnpool2d(2)

        def __call__(self, x):
            y, i = self.pool(x)
            return self.unpool(y * 2, i)
    compare(Mod, [randn(2, 3, 4, 6)], dtype)


# ---------------------------------------------------------------------------
# recurrent, attention, transformer, embedding bag
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind,kw", [
    ("RNN", dict(num_layers=2, nonlinearity="relu", batch_first=True)),
    ("RNN", dict(bias=False, bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, batch_first=True)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
])
@pytest.mark.parametrize("with_h0", [False, True])
def test_rnn_grads(kind, kw, with_h0, dtype):
    I, H = 3, 4
    x = randn(2, 5, I) if kw.get("batch_first") else randn(5, 2, I)
    inputs = [x]
    if with_h0:
        L = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        h = randn(L, 2, kw.get("proj_size", 0) or H, seed=3)
        inputs.append((h, randn(L, 2, H, seed=4)) if kind == "LSTM" else h)
    if kind == "LSTM" and with_h0:
        # (h0, c0) is a tuple: pass it as two inputs through a wrapper
        h, c = inputs.pop()
        inputs += [h, c]

        def make(nn):
            m = getattr(nn, kind)(I, H, **kw)
            orig = m.forward
            m.forward = lambda x, h, c: orig(x, (h, c))
            return m
    else:
        def make(nn):
            return getattr(nn, kind)(I, H, **kw)
    compare(make, inputs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_rnn_packed_grads(kind, dtype):
    import ptcore.nn.utils.rnn as prnn
    import torch.nn.utils.rnn as trnn

    def make(nn):
        m = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True)
        rnn = trnn if nn is tnn else prnn
        orig = m.forward

        def fwd(x):
            packed = rnn.pack_padded_sequence(x, [5, 2, 4], enforce_sorted=False)
            out, h = orig(packed)
            padded, lengths = rnn.pad_packed_sequence(out, total_length=6)
            return padded, h
        m.forward = fwd
        return m
    compare(make, [randn(6, 3, 3)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_rnn_cell_grads(cls, dtype):
    compare(lambda nn: getattr(nn, cls)(3, 4), [randn(2, 3)], dtype)


def _mask(shape, seed, p=0.3):
    m = np.random.default_rng(seed).uniform(size=shape) < p
    return m


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["self_kpm", "float_mask_batch_first", "bias_kv_zero_attn",
                                     "kvdim_bool_mask_3d", "no_avg_weights"])
def test_mha_grads(variant, dtype):
    E, H, L, S, N = 8, 2, 4, 5, 3
    ckw, fkw = {}, {}
    bf = variant == "float_mask_batch_first"
    q = randn(N, L, E) if bf else randn(L, N, E)
    k = randn(N, S, E, seed=1) if bf else randn(S, N, E, seed=1)
    v = randn(N, S, E, seed=2) if bf else randn(S, N, E, seed=2)
    if variant == "self_kpm":
        k = v = q
        kpm = _mask((N, L), 5)
        kpm[:, 0] = False
        fkw["key_padding_mask"] = const(kpm)
    elif bf:
        ckw["batch_first"] = True
        fkw["attn_mask"] = randn(L, S, seed=6)
    elif variant == "bias_kv_zero_attn":
        ckw.update(add_bias_kv=True, add_zero_attn=True)
        kpm = _mask((N, S), 5)
        kpm[:, 0] = False
        fkw["key_padding_mask"] = const(kpm)
        fkw["attn_mask"] = const(_mask((L, S), 6) & ~np.eye(L, S, dtype=bool))
    elif variant == "kvdim_bool_mask_3d":
        ckw.update(kdim=6, vdim=5, bias=False)
        k, v = randn(S, N, 6, seed=1), randn(S, N, 5, seed=2)
        m = _mask((N * H, L, S), 7)
        m[:, :, 0] = False
        fkw["attn_mask"] = const(m)
    else:
        fkw["average_attn_weights"] = False
    if isinstance(fkw.get("attn_mask"), Arr) and fkw["attn_mask"].a.dtype.kind == "f":
        fkw["attn_mask"].grad = False
    if k is q:
        def make(nn):
            m = nn.MultiheadAttention(E, H, **ckw)
            orig = m.forward
            m.forward = lambda x, **kw: orig(x, x, x, **kw)
            return m
        inputs = [q]
    else:
        def make(nn):
            return nn.MultiheadAttention(E, H, **ckw)
        inputs = [q, k, v]
    compare(make, inputs, dtype, kwargs=fkw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first,activation,batch_first", [
    (False, "relu", False), (True, "gelu", True)])
def test_transformer_encoder_layer_grads(norm_first, activation, batch_first, dtype):
    S, N, E = 5, 2, 8
    x = randn(N, S, E) if batch_first else randn(S, N, E)
    kpm = _mask((N, S), 3)
    kpm[:, 0] = False
    compare(lambda nn: nn.TransformerEncoderLayer(E, 2, dim_feedforward=12, dropout=0.0,
                                                  activation=activation, norm_first=norm_first,
                                                  batch_first=batch_first),
            [x], dtype, kwargs=dict(src_mask=const(_mask((S, S), 4) & ~np.eye(S, dtype=bool)),
                                    src_key_padding_mask=const(kpm)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_decoder_layer_grads(norm_first, dtype):
    T, S, N, E = 4, 5, 2, 8
    causal = np.triu(np.full((T, T), -np.inf), 1)
    mkpm = _mask((N, S), 3)
    mkpm[:, 0] = False
    compare(lambda nn: nn.TransformerDecoderLayer(E, 2, dim_feedforward=12, dropout=0.0,
                                                  norm_first=norm_first),
            [randn(T, N, E), randn(S, N, E, seed=1)], dtype,
            kwargs=dict(tgt_mask=const(causal), memory_key_padding_mask=const(mkpm)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transformer_encoder_stack_grads(dtype):
    def make(nn):
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0)
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    compare(make, [randn(5, 2, 8)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,kw,psw", [
    ("mean", {}, False), ("sum", {"padding_idx": 1}, True), ("max", {}, False),
    ("sum", {"include_last_offset": True}, False), ("mean", {"padding_idx": 0}, False)])
def test_embedding_bag_grads(mode, kw, psw, dtype):
    idx = const(np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 1]))
    offsets = const(np.array([0, 2, 2, 6] + ([10] if kw.get("include_last_offset") else [])))
    inputs = [idx, offsets]
    if psw:
        inputs.append(uniform(10, seed=3))
    compare(lambda nn: nn.EmbeddingBag(10, 3, mode=mode, **kw), inputs, dtype)
