"""Differences from torch.optim found by differential fuzzing, one regression
test each: the same inputs in both libraries, the results compared."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _np(t):
    return None if t is None else t.detach().numpy()


def _outcome(fn, lib):
    """``fn(lib)``, or the type name of what it raised."""
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001 -- the exception type is the result
        return type(e).__name__


# ---------------------------------------------------------------------------
# differentiable=True: the gradient of a loss after three steps with respect
# to the initial parameter and to the gradients fed in (torch's
# test_optim differentiable checks); ptcore's Adam, AdamW, NAdam, Adagrad and
# RMSprop modified a tensor saved for backward in place and raised (the
# configurations where torch's own step can be differentiated; torch's
# differentiable step takes the bias corrections from float32 step tensors:
# 1 - 0.999 ** step in float32 is off by 3e-5 relative, hence rtol)

DIFFERENTIABLE = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, maximize=True, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, lr_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, weight_decay=0.1, t0=1)),
]


def _differentiable_run(lib, name, opts, steps=3, lr_grad=False):
    w = lib.tensor([1.0, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
    p = w * 1.0
    g = lib.tensor([0.5, -0.3, 0.2], dtype=lib.float64, requires_grad=True)
    if lr_grad:
        opts = dict(opts, lr=lib.tensor(opts["lr"], dtype=lib.float64, requires_grad=True))
    opt = getattr(lib.optim, name)([p], differentiable=True, **opts)
    for k in range(steps):
        p.grad = g * (1.0 + k) + p * 0.1
        opt.step()
    (p * lib.tensor([1.0, 3.0, 2.0], dtype=lib.float64)).sum().backward()
    return _np(p), _np(w.grad), _np(g.grad), (_np(opts["lr"].grad) if lr_grad else None)


@pytest.mark.parametrize("name,opts", DIFFERENTIABLE,
                         ids=[f"{n}-{'-'.join(o)}" for n, o in DIFFERENTIABLE])
def test_differentiable_step_gradients_match_torch(name, opts):
    want = _differentiable_run(torch, name, opts)
    got = _differentiable_run(ptcore, name, opts)
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_allclose(a, b, rtol=5e-5, atol=1e-10)


LR_GRAD = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
]


@pytest.mark.parametrize("name,opts", LR_GRAD, ids=[f"{n}-{'-'.join(o)}" for n, o in LR_GRAD])
def test_differentiable_step_reaches_a_tensor_lr_like_torch(name, opts):
    # torch's SGD, Adam and RAdam record a tensor lr that requires grad; ptcore
    # took lr.item() and lr.grad stayed None. 8 steps: RAdam's rectified
    # update starts at step 6
    want = _differentiable_run(torch, name, opts, steps=8, lr_grad=True)
    got = _differentiable_run(ptcore, name, opts, steps=8, lr_grad=True)
    assert got[3] is not None and got[3].shape == ()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=5e-5, atol=1e-10)


FOREACH_DIFFERENTIABLE = ["Adam", "AdamW", "Adamax", "Adadelta", "Adagrad", "ASGD", "NAdam",
                          "RAdam", "RMSprop", "Rprop"]


@pytest.mark.parametrize("name", FOREACH_DIFFERENTIABLE)
def test_foreach_with_differentiable_raises_like_torch(name):
    # torch's multi-tensor implementations refuse differentiable=True at
    # step(); Adamax, Adadelta and Adagrad even for a group without gradients
    def run(lib):
        p = lib.zeros(2, requires_grad=True)
        opt = getattr(lib.optim, name)([p], foreach=True, differentiable=True)
        first = _outcome(lambda _: opt.step(), lib)
        p.grad = lib.ones(2)
        return first, _outcome(lambda _: opt.step(), lib)

    want = run(torch)
    assert "AssertionError" in want
    assert run(ptcore) == want


def test_muon_refuses_sparse_gradients_like_torch():
    # ptcore's Muon reached a lerp_ on the sparse gradient: NotImplementedError
    def run(lib):
        emb = lib.nn.Embedding(5, 4, sparse=True)
        opt = lib.optim.Muon(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError, match="Muon does not support sparse gradients"):
            opt.step()

    run(torch)
    run(ptcore)


@pytest.mark.parametrize("where", ["alone", "in_a_group", "after_a_dense_one", "generator"])
def test_sparse_adam_refuses_sparse_params_like_torch(where):
    # ptcore's base class refused the sparse tensor first, with a TypeError
    def make(lib):
        dense, sparse = lib.zeros(1, requires_grad=True), lib.zeros(2, 2).to_sparse()
        params = {"alone": [sparse], "in_a_group": [{"params": [dense, sparse]}],
                  "after_a_dense_one": [dense, sparse],
                  "generator": (p for p in [dense, sparse])}[where]
        with pytest.raises(ValueError) as info:
            lib.optim.SparseAdam(params)
        return str(info.value)

    assert make(ptcore) == make(torch)


def test_sparse_adam_reads_a_generator_of_groups_once():
    emb = ptcore.nn.Embedding(4, 2, sparse=True)
    opt = ptcore.optim.SparseAdam(p for p in emb.parameters())
    (weight,) = opt.param_groups[0]["params"]
    assert weight is emb.weight


# ---------------------------------------------------------------------------
# nn.utils.clip_grad_norm_ with gradients of several dtypes: torch scales a
# float16/bfloat16 gradient by the float64 coefficient at float precision;
# ptcore rounded the coefficient to float16 first (5e-4 relative off)

@pytest.mark.parametrize("low", ["float16", "bfloat16"])
@pytest.mark.parametrize("high", ["float32", "float64"])
def test_clip_grad_norm_scales_low_precision_grads_like_torch(low, high):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s) * 3 for s in [(3, 4), (5,), (2, 2, 2)]]

    def run(lib):
        params = []
        for g, dt in zip(grads, [low, high, low]):
            p = lib.zeros(g.shape, dtype=getattr(lib, dt), requires_grad=True)
            p.grad = lib.tensor(g).to(getattr(lib, dt))
            params.append(p)
        norm = lib.nn.utils.clip_grad_norm_(params, 1.0)
        return norm.item(), [p.grad.double().numpy() for p in params]

    (want_norm, want), (got_norm, got) = run(torch), run(ptcore)
    assert got_norm == pytest.approx(want_norm, rel=1e-12)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_sparse_adam_group_without_params_raises_like_torch():
    for lib in (torch, ptcore):
        with pytest.raises(KeyError):
            lib.optim.SparseAdam([{"lr": 0.1}])


# ---------------------------------------------------------------------------
# nn.init: torch's private fill helpers, which initialisation code written
# against torch calls (ptcore had _no_grad_uniform_/normal_/trunc_normal_ only)

@pytest.mark.parametrize("helper,args", [("_no_grad_fill_", (2.5,)), ("_no_grad_zero_", ())])
def test_init_no_grad_fill_helpers_match_torch(helper, args):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2, 3))
        out = getattr(lib.nn.init, helper)(p, *args)
        return out is p, out.grad_fn is None, p.requires_grad, p.detach().numpy()

    want, got = run(torch), run(ptcore)
    assert got[:3] == want[:3]
    np.testing.assert_array_equal(got[3], want[3])


def test_asgd_foreach_eta_follows_torchs_foreach_implementation():
    # torch's foreach ASGD computes eta from the float32 step tensor, its
    # for-loop implementation from the step's value: the two differ in the
    # last float32 bit (eta 0.009999983943998814 vs ...4875321388 at step 2);
    # ptcore's foreach=True used the for-loop formula
    def run(lib, foreach):
        p = lib.tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)
        opt = lib.optim.ASGD([p], lr=0.01, lambd=1e-4, alpha=0.75, foreach=foreach)
        etas = []
        for k in range(6):
            p.grad = lib.tensor(np.random.default_rng(k).standard_normal(5))
            opt.step()
            etas.append(opt.state[p]["eta"].item())
        return etas, p.detach().numpy()

    for foreach in (False, True):
        want, got = run(torch, foreach), run(ptcore, foreach)
        assert got[0] == want[0]
        np.testing.assert_allclose(got[1], want[1], rtol=1e-14, atol=1e-15)


def test_clip_grad_module_has_torchs_annotation_alias():
    from ptcore.nn.utils import clip_grad
    from torch.nn.utils import clip_grad as torch_clip_grad
    alias, torch_alias = clip_grad._tensor_or_tensors, torch_clip_grad._tensor_or_tensors
    assert [getattr(a, "__name__", None) for a in alias.__args__] == \
        [getattr(a, "__name__", None) for a in torch_alias.__args__]
    assert alias.__args__[0] is ptcore.Tensor
