"""Pieces of the official PyTorch tutorials beyond the basics (char-RNN, seq2seq, DQN, spatial
transformer, neural style transfer, FGSM, LSTM tagger, Bi-LSTM CRF), run under ptcore and
compared with torch."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ptcore), fn(torch)


# ---------------------------------------------------------------------------
# Spatial transformer networks: an identity-initialised localisation net puts every grid
# point exactly on a pixel centre, where bilinear grid_sample's gradient jumps; linspace and
# affine_grid must be torch's values bit for bit there.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64",
                                   "complex128", "int32", "int64"])
@pytest.mark.parametrize("steps", [2, 7, 8, 13, 28, 40, 100, 1000, 4097])
@pytest.mark.parametrize("ends", [(-1, 1), (0, 3.7), (2.5, -7.1), (-3, 100)])
def test_linspace_bitwise_matches_torch(dtype, steps, ends):
    a, b = ends
    if dtype.startswith("complex"):
        b = complex(b, 0.5)
    p, t = _both(lambda L: L.linspace(a, b, steps, dtype=getattr(L, dtype)))
    assert str(p.dtype).split(".")[-1] == dtype
    wide = "complex128" if dtype.startswith("complex") else "float64"
    np.testing.assert_array_equal(p.to(getattr(ptcore, wide)).numpy(),
                                  t.to(getattr(torch, wide)).numpy())


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(3, 1, 28, 28), (3, 2, 7, 13), (3, 1, 2, 1), (3, 1, 4, 5, 6)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid_matches_torch(align_corners, size, dtype):
    rng = np.random.default_rng(0)
    nd = len(size) - 2
    th = rng.standard_normal((3, nd, nd + 1)).astype(dtype)
    th[0] = np.eye(nd, nd + 1)
    p, t = _both(lambda L: L.nn.functional.affine_grid(L.from_numpy(th.copy()), size,
                                                       align_corners=align_corners))
    # torch's base grid times theta^T is MKL's batched GEMM, whose use of FMA depends on
    # the CPU's code path: equal up to the last bit or two (bitwise on some machines only)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=tol, atol=tol)


def test_stn_identity_theta_gradient_matches_torch():
    # the tutorial's fc_loc[2] starts at weight 0, bias [1, 0, 0, 0, 1, 0]: the first step's
    # gradient with respect to theta must not depend on 1-ulp grid differences
    rng = np.random.default_rng(1)
    x = rng.random((2, 1, 28, 28), dtype=np.float32)

    def run(L):
        F = L.nn.functional
        theta = L.tensor([1, 0, 0, 0, 1, 0], dtype=L.float).repeat(2, 1).requires_grad_(True)
        grid = F.affine_grid(theta.view(-1, 2, 3), (2, 1, 28, 28), align_corners=False)
        out = F.grid_sample(L.from_numpy(x.copy()), grid, align_corners=False)
        (out * out.flip(-1)).sum().backward()
        return out.detach(), theta.grad

    (po, pg), (to, tg) = _both(run)
    np.testing.assert_allclose(po.numpy(), to.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)


def test_affine_grid_errors_show_size_as_passed():
    th = np.zeros((2, 3, 4), np.float32)
    for size in [(2, 1, 4, 4), [2, 1, 4, 4]]:
        msgs = []
        for L in (ptcore, torch):
            with pytest.raises(ValueError) as ei:
                L.nn.functional.affine_grid(L.from_numpy(th), size, align_corners=False)
            msgs.append(str(ei.value).replace("ptcore", "torch"))
        assert msgs[0] == msgs[1]


# ---------------------------------------------------------------------------
# Character-level RNN (older versions of the tutorial) and the optimizers of that era:
# torch's deprecated scalar-first overloads p.data.add_(-lr, grad), addcmul_(value, t1, t2)
# ---------------------------------------------------------------------------

_SCALAR_FIRST = [
    ("add", lambda L, a, b: a.add(-0.5, b)),
    ("add_", lambda L, a, b: a.clone().add_(-0.5, b)),
    ("fn add", lambda L, a, b: L.add(a, 2, b)),
    ("sub", lambda L, a, b: a.sub(3, b)),
    ("sub_", lambda L, a, b: a.clone().sub_(3, b)),
    ("fn sub", lambda L, a, b: L.sub(a, 3, b)),
    ("addcmul", lambda L, a, b: a.addcmul(0.25, b, a)),
    ("addcmul_", lambda L, a, b: a.clone().addcmul_(0.25, b, a)),
    ("fn addcmul", lambda L, a, b: L.addcmul(a, 0.25, b, a)),
    ("addcdiv", lambda L, a, b: a.addcdiv(-2, b, a.exp())),
    ("addcdiv_", lambda L, a, b: a.clone().addcdiv_(-2, b, a.exp())),
    ("fn addcdiv", lambda L, a, b: L.addcdiv(a, -2, b, a.exp())),
    ("scalar other", lambda L, a, b: a.add(2, 3)),
]


@pytest.mark.parametrize("name,fn", _SCALAR_FIRST, ids=[n for n, _ in _SCALAR_FIRST])
def test_deprecated_scalar_first_overloads_match_torch(name, fn):
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal((2, 3, 4)).astype(np.float32)
    res = []
    for L in (ptcore, torch):
        a = L.tensor(av, requires_grad=True)
        b = L.tensor(bv, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(L, a, b)
        r.sum().backward()
        res.append([x if x is None else x.numpy() for x in (r.detach(), a.grad, b.grad)])
    for p, t in zip(*res):
        assert (p is None) == (t is None)
        if p is not None:
            np.testing.assert_allclose(p, t, rtol=1e-6, atol=1e-6)


def test_deprecated_scalar_first_warns_once_and_refuses_mixed_forms():
    import subprocess
    import sys
    code = ("import warnings, ptcore\n"
            "a = ptcore.ones(2); b = ptcore.ones(2)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    a.sub_(2, b); a.add_(2, b); ptcore.addcmul(a, 2, b, b)\n"
            "print(len(w)); print(w[0].message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "1"
    assert out[1] == "This overload of sub_ is deprecated:"
    for L in (ptcore, torch):
        a, b = L.ones(2), L.ones(2)
        for bad in (lambda: a.add(2, b, alpha=3), lambda: a.add(b, 2),
                    lambda: a.addcmul(b, 2, b)):
            with pytest.raises(TypeError):
                bad()


def test_char_rnn_manual_sgd_old_form_matches_torch():
    # the tutorial's train(): p.data.add_(-learning_rate, p.grad.data)
    rng = np.random.default_rng(2)
    n_letters, n_hidden, n_cat = 8, 6, 3
    w = {k: rng.standard_normal(s).astype(np.float32) * 0.3 for k, s in
         (("i2h", (n_hidden, n_letters + n_hidden)), ("h2o", (n_cat, n_hidden)))}
    line = [1, 4, 2, 7]

    def run(L):
        nn = L.nn

        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.i2h = nn.Linear(n_letters + n_hidden, n_hidden)
                self.h2o = nn.Linear(n_hidden, n_cat)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, input, hidden):
                hidden = L.tanh(self.i2h(L.cat((input, hidden), 1)))
                return self.softmax(self.h2o(hidden)), hidden

        rnn = RNN()
        with L.no_grad():
            rnn.i2h.weight.copy_(L.from_numpy(w["i2h"]))
            rnn.h2o.weight.copy_(L.from_numpy(w["h2o"]))
            rnn.i2h.bias.zero_()
            rnn.h2o.bias.zero_()
        line_tensor = L.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            line_tensor[li][0][letter] = 1
        losses = []
        for _ in range(3):
            hidden = L.zeros(1, n_hidden)
            rnn.zero_grad()
            for i in range(line_tensor.size()[0]):
                output, hidden = rnn(line_tensor[i], hidden)
            loss = nn.NLLLoss()(output, L.tensor([1]))
            loss.backward()
            for p in rnn.parameters():
                p.data.add_(-0.1, p.grad.data)
            losses.append(loss.item())
        return losses, output.topk(1)[1].item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (pl, pi), (tl, ti) = _both(run)
    np.testing.assert_allclose(pl, tl, rtol=1e-5)
    assert pi == ti


def test_deprecated_scalar_first_forward_ad_matches_torch():
    def run(L):
        fwAD = L.autograd.forward_ad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with fwAD.dual_level():
                a = fwAD.make_dual(L.tensor([1.0, 2.0]), L.tensor([3.0, -1.0]))
                x = L.tensor([0.5, 0.25])
                return [fwAD.unpack_dual(r).tangent.numpy()
                        for r in (x.add(2, a), x.sub(2, a), L.add(x, -3, a))]
    for p, t in zip(*_both(run)):
        np.testing.assert_allclose(p, t)


@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_ties_return_torchs_indices(sorted_, largest):
    # categoryFromOutput / predict() on equal scores (a zero-initialised classifier, one-hot
    # or integer data): torch's CPU topk leaves libstdc++'s nth_element/partial_sort order
    rng = np.random.default_rng(3)
    cases = [np.zeros((1, 4), np.float32), np.array([[1, 3, 3, 2, 3]], np.float32),
             rng.integers(0, 3, (5, 40)).astype(np.float32),
             rng.integers(0, 4, (3, 700)).astype(np.int64)]
    for x in cases:
        n = x.shape[-1]
        for k in sorted({1, 2, 3, n // 2, n - 1, n} - {0}):
            p, t = _both(lambda L: L.from_numpy(x.copy()).topk(k, 1, largest, sorted_))
            np.testing.assert_array_equal(p.indices.numpy(), t.indices.numpy())
            np.testing.assert_array_equal(p.values.numpy(), t.values.numpy())


@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_ties_return_torchs_order(descending):
    # sort()/argsort() default to torch's unstable CPU sort (std::sort on (value, index))
    rng = np.random.default_rng(4)
    for n in (5, 17, 40, 300):
        x = rng.integers(0, 3, (2, n)).astype(np.float32)
        x[0, :3] = np.nan
        p, t = _both(lambda L: L.from_numpy(x.copy()).sort(descending=descending))
        np.testing.assert_array_equal(p.indices.numpy(), t.indices.numpy())
        p, t = _both(lambda L: L.from_numpy(x.copy()).argsort(dim=-1, descending=descending))
        np.testing.assert_array_equal(p.numpy(), t.numpy())
