"""one_hot, cosine_similarity, pairwise_distance, pdist and the distance
modules of ptcore.nn against PyTorch."""
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


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


def P(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def rnd(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=getattr(torch, dtype))


def check(p, t, dtype):
    assert tuple(p.shape) == tuple(t.shape), (p.shape, t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), **tol(dtype))


def same_error(pfn, tfn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(Exception) as pe:
        pfn()
    assert type(pe.value) is type(te.value), (pe.value, te.value)
    assert str(pe.value).split("\n")[0] == str(te.value).split("\n")[0].replace("torch.", "ptcore.")


def _has_autograd():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


needs_autograd = pytest.mark.skipif(not _has_autograd(), reason="ptcore autograd not available")


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 0), ()])
@pytest.mark.parametrize("num_classes", [-1, 7])
def test_one_hot(shape, num_classes):
    g = torch.Generator().manual_seed(0)
    t = torch.randint(0, 5, shape, generator=g)
    if t.numel() == 0 and num_classes == -1:
        same_error(lambda: F.one_hot(P(t)), lambda: TF.one_hot(t))
        return
    r = TF.one_hot(t, num_classes)
    p = F.one_hot(P(t), num_classes)
    assert p.dtype == ptcore.int64 and tuple(p.shape) == tuple(r.shape)
    if t.numel():
        np.testing.assert_array_equal(p.numpy(), r.numpy())


def test_one_hot_errors():
    for t, n in [(torch.tensor([1, 2]).int(), -1), (torch.tensor([1, -2]), -1),
                 (torch.tensor([1, 2]), 2), (torch.tensor([1, 2]), 0), (torch.tensor([1, 2]), -2),
                 (torch.tensor([], dtype=torch.long), 0)]:
        same_error(lambda: F.one_hot(P(t), n), lambda: TF.one_hot(t, n))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2,dim", [((4, 5), (4, 5), 1), ((4, 5), (5,), -1), ((3, 4, 5), (3, 4, 5), 0),
                                       ((3, 1, 5), (1, 4, 5), 2), ((6,), (6,), 0)])
@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_cosine_similarity(dtype, s1, s2, dim, eps):
    a, b = rnd(s1, dtype, 1), rnd(s2, dtype, 2)
    a.view(-1)[:s1[-1]] = 0.0           # a zero vector: norm clamped to eps
    check(F.cosine_similarity(P(a), P(b), dim=dim, eps=eps),
          TF.cosine_similarity(a, b, dim=dim, eps=eps), dtype)
    check(ptcore.nn.CosineSimilarity(dim=dim, eps=eps)(P(a), P(b)),
          torch.nn.CosineSimilarity(dim=dim, eps=eps)(a, b), dtype)


def test_cosine_similarity_dtypes_and_errors():
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.0, 0.5, 2.0])
    check(F.cosine_similarity(P(i), P(f), dim=0), TF.cosine_similarity(i, f, dim=0), "float32")
    same_error(lambda: F.cosine_similarity(P(i), P(i), dim=0),
               lambda: TF.cosine_similarity(i, i, dim=0))
    same_error(lambda: F.cosine_similarity(P(torch.randn(3, 4)), P(torch.randn(5, 4))),
               lambda: TF.cosine_similarity(torch.randn(3, 4), torch.randn(5, 4)))
    big = torch.full((3,), 1e15)
    check(F.cosine_similarity(P(big), P(big), dim=0), TF.cosine_similarity(big, big, dim=0),
          "float32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2", [((4, 5), (4, 5)), ((4, 5), (5,)), ((5,), (5,)), ((2, 3, 4), (3, 4))])
@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.5, float("inf"), -1.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(dtype, s1, s2, p, keepdim):
    a, b = rnd(s1, dtype, 1), rnd(s2, dtype, 2)
    check(F.pairwise_distance(P(a), P(b), p=p, keepdim=keepdim),
          TF.pairwise_distance(a, b, p=p, keepdim=keepdim), dtype)
    check(ptcore.nn.PairwiseDistance(p=p, eps=1e-3, keepdim=keepdim)(P(a), P(b)),
          torch.nn.PairwiseDistance(p=p, eps=1e-3, keepdim=keepdim)(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf")])
def test_pdist(dtype, n, p):
    x = rnd((n, 4), dtype, 1)
    check(F.pdist(P(x), p), TF.pdist(x, p), dtype)


def test_pdist_errors():
    for x, p in [(torch.randn(3, 4), -1.0), (torch.randn(3, 4, 1), 2.0),
                 (torch.randn(3, 4).int(), 2.0)]:
        same_error(lambda: F.pdist(P(x), p), lambda: TF.pdist(x, p))


def test_module_attributes():
    m = ptcore.nn.PairwiseDistance(p=1.0, eps=0.1, keepdim=True)
    assert (m.norm, m.eps, m.keepdim) == (1.0, 0.1, True)
    c = ptcore.nn.CosineSimilarity(dim=0, eps=1e-3)
    assert (c.dim, c.eps) == (0, 1e-3)


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
def test_distance_gradients(dtype):
    a, b = rnd((4, 5), dtype, 1), rnd((4, 5), dtype, 2)
    a[0] = 0.0
    for pf, tf in [(lambda u, v: F.cosine_similarity(u, v), lambda u, v: TF.cosine_similarity(u, v)),
                   (lambda u, v: F.pairwise_distance(u, v), lambda u, v: TF.pairwise_distance(u, v)),
                   (lambda u, v: F.pairwise_distance(u, v, p=1.5),
                    lambda u, v: TF.pairwise_distance(u, v, p=1.5))]:
        ta, tb = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
        pa, pb = P(a).requires_grad_(True), P(b).requires_grad_(True)
        r = rnd((4,), dtype, 3)
        (tf(ta, tb) * r).sum().backward()
        (pf(pa, pb) * P(r)).sum().backward()
        np.testing.assert_allclose(pa.grad.numpy(), ta.grad.numpy(), **tol(dtype))
        np.testing.assert_allclose(pb.grad.numpy(), tb.grad.numpy(), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2", [((3, 4), (5, 4)), ((2, 3, 4), (5, 4)), ((2, 30, 4), (1, 5, 4)),
                                   ((0, 4), (3, 4))])
@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf")])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
def test_cdist(dtype, s1, s2, p, mode):
    a, b = rnd(s1, dtype, 1), rnd(s2, dtype, 2)
    t = torch.cdist(a, b, p=p, compute_mode=mode)
    r = ptcore.cdist(P(a), P(b), p=p, compute_mode=mode)
    assert tuple(r.shape) == tuple(t.shape)
    # the matrix-product form loses a few digits, as in torch
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-4 if dtype == "float32" else 1e-9,
                               atol=1e-4 if dtype == "float32" else 1e-9)


def test_cdist_errors():
    a = torch.randn(3, 4)
    for x, y, kw in [(torch.randn(4), a, {}), (a, torch.randn(5, 3), {}), (a, a, {"p": -1.0}),
                     (a.int(), a.int(), {}), (a, a.double(), {}), (a, a, {"compute_mode": "x"}),
                     (torch.randn(2, 3, 4), torch.randn(3, 5, 4), {})]:
        same_error(lambda: ptcore.cdist(P(x), P(y), **kw), lambda: torch.cdist(x, y, **kw))


@pytest.mark.parametrize("case", ["mm-self-large", "mm-explicit", "p0.5", "pinf-ties", "p1",
                                  "p2-small", "p3"])
def test_cdist_gradient_at_coincident_points_and_ties(case):
    """torch's cdist backward: 0 from a zero distance (the matrix-product
    form used for > 25 rows or on request gave nan), 0 from a zero component
    for p < 1, and the whole gradient to each tied component for p = inf."""
    base = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 0.0]]
    other = [[0.0, 1.0], [1.0, 0.0]]
    p, mode, n = {"mm-self-large": (2.0, "use_mm_for_euclid_dist_if_necessary", 8),
                  "mm-explicit": (2.0, "use_mm_for_euclid_dist", 1),
                  "p0.5": (0.5, "donot_use_mm_for_euclid_dist", 1),
                  "pinf-ties": (float("inf"), "donot_use_mm_for_euclid_dist", 1),
                  "p1": (1.0, "donot_use_mm_for_euclid_dist", 1),
                  "p2-small": (2.0, "use_mm_for_euclid_dist_if_necessary", 1),
                  "p3": (3.0, "donot_use_mm_for_euclid_dist", 1)}[case]

    def run(L, fn):
        x = L.tensor(base * n, dtype=L.float64, requires_grad=True)
        y = x if case == "mm-self-large" else L.tensor(other, dtype=L.float64, requires_grad=True)
        d = fn(x, y, p=p, compute_mode=mode)
        w = L.arange(1.0, d.numel() + 1, dtype=L.float64).reshape(d.shape)
        grads = L.autograd.grad((d * w).sum(), [x] if y is x else [x, y])
        return [d.detach().numpy()] + [g.numpy() for g in grads]
    for a, b in zip(run(ptcore, ptcore.cdist), run(torch, torch.cdist)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cdist_matrix_product_form_as_torch(dtype):
    """The p = 2 matrix-product form is torch's _euclidean_dist: one product of
    [-2 a, |a|^2, 1] and [b, 1, |b|^2], clamped at 0 and square-rooted in place
    (was ten passes over the (P, R) result: 2000 x 3 points 44 -> 1.7 ms, torch
    4.3), with _euclidean_dist_backward's gradients, differentiable again;
    batch dims broadcast."""
    a, b = rnd((2, 40, 3), dtype, 1), rnd((1, 30, 3), dtype, 2)
    res = []
    for L, fn, x, y in ((ptcore, ptcore.cdist, P(a), P(b)), (torch, torch.cdist, a, b)):
        x, y = x.clone().requires_grad_(), y.clone().requires_grad_()
        d = fn(x, y)
        gx, gy = L.autograd.grad((d ** 2).sum() + d.sum(), (x, y), create_graph=True)
        (gx.sum() + (gy * gy).sum()).backward()
        res.append((d.detach().numpy(), gx.detach().numpy(), gy.detach().numpy(),
                    x.grad.numpy(), y.grad.numpy()))
    # (float32: the |a|^2 - 2ab + |b|^2 form cancels, so the last bits of the two GEMMs' -
    # MKL's path depends on the CPU - show at 1e-4 in the second derivatives)
    t = dict(rtol=1e-3, atol=1e-3) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)
    for u, v in zip(*res):
        assert u.shape == v.shape
        np.testing.assert_allclose(u, v, **t)
