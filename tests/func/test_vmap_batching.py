"""func.vmap as the batching layer: results against torch.func.vmap and the
per-sample loop over many ops, the batched path being taken (one kernel call,
not B), in_dims/out_dims/chunk_size/nesting/randomness, and the errors."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore.func import vmap
from ptcore.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch")
import torch.func as tfunc  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

PERF = "performance drop"


def P(t):
    return ptcore.tensor(t.detach().numpy()) if isinstance(t, torch.Tensor) else t


def _leaves(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _close(a, b, tol=1e-5):
    a, b = _leaves(a), _leaves(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert tuple(x.shape) == tuple(y.shape), (x.shape, y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1], (x.dtype, y.dtype)
        np.testing.assert_allclose(x.numpy().astype("f8"), y.detach().numpy().astype("f8"),
                                   rtol=tol, atol=tol)


def L(mod_p, mod_t):
    """A case body written once: ``fn(lib, F, *args)`` for ptcore and for torch."""
    return mod_p, mod_t


g = torch.Generator().manual_seed(0)
X = torch.randn(4, 3, 5, generator=g)
Y = torch.randn(4, 5, generator=g)
S = torch.randn(4, generator=g)
IMG = torch.randn(4, 2, 3, 6, 6, generator=g)

# name, f(lib, Fn, *args), args, in_dims
CASES = [
    ("add", lambda lib, Fn, a, b: a + b, (X, Y), 0),
    ("mul_unbatched", lambda lib, Fn, a, b: a * b, (X, Y[0]), (0, None)),
    ("batched_0d_promotion", lambda lib, Fn, a, b: a * b, (X, S.double()), 0),
    ("sub_scalar", lambda lib, Fn, a: 2.5 - a, (X,), 0),
    ("where", lambda lib, Fn, a, b: lib.where(a > 0, a, b), (X, Y), 0),
    ("clamp_tensor", lambda lib, Fn, a, m: a.clamp(min=m), (X, S), 0),
    ("pow", lambda lib, Fn, a: a ** 2, (X,), 0),
    ("sum_all", lambda lib, Fn, a: a.sum(), (X,), 0),
    ("sum_dim_keep", lambda lib, Fn, a: a.sum(1, keepdim=True), (X,), 0),
    ("sum_dims", lambda lib, Fn, a: a.sum((0, -1)), (X,), 0),
    ("mean_neg", lambda lib, Fn, a: a.mean(-1), (X,), 0),
    ("std", lambda lib, Fn, a: a.std(0), (X,), 0),
    ("var_all", lambda lib, Fn, a: a.var(), (X,), 0),
    ("max_dim", lambda lib, Fn, a: a.max(1), (X,), 0),
    ("max_all", lambda lib, Fn, a: a.max(), (X,), 0),
    ("max_binary", lambda lib, Fn, a, b: lib.max(a, b), (Y, Y.flip(0)), 0),
    ("argmax", lambda lib, Fn, a: a.argmax(), (X,), 0),
    ("prod_all", lambda lib, Fn, a: a.prod(), (Y,), 0),
    ("amax", lambda lib, Fn, a: a.amax((0, 1), keepdim=True), (X,), 0),
    ("all", lambda lib, Fn, a: (a > -3).all(), (X,), 0),
    ("norm", lambda lib, Fn, a: a.norm(dim=1), (X,), 0),
    ("cumsum", lambda lib, Fn, a: a.cumsum(0), (X,), 0),
    ("cumsum_0d", lambda lib, Fn, a: a.cumsum(0), (S,), 0),
    ("logcumsumexp", lambda lib, Fn, a: a.logcumsumexp(-1), (X,), 0),
    ("softmax", lambda lib, Fn, a: lib.softmax(a, -1), (X,), 0),
    ("log_softmax_F", lambda lib, Fn, a: Fn.log_softmax(a, dim=0), (X,), 0),
    ("logsumexp", lambda lib, Fn, a: a.logsumexp(0), (X,), 0),
    ("sort", lambda lib, Fn, a: a.sort(-1), (X,), 0),
    ("topk", lambda lib, Fn, a: a.topk(2), (X,), 0),
    ("view", lambda lib, Fn, a: a.view(15), (X,), 0),
    ("reshape", lambda lib, Fn, a: a.reshape(5, -1), (X,), 0),
    ("permute", lambda lib, Fn, a: a.permute(1, 0), (X,), 0),
    ("t", lambda lib, Fn, a: a.t(), (X,), 0),
    ("transpose", lambda lib, Fn, a: a.transpose(0, 1), (X,), 0),
    ("unsqueeze_squeeze", lambda lib, Fn, a: a.unsqueeze(-1).unsqueeze(0).squeeze(), (X,), 0),
    ("expand", lambda lib, Fn, a: a.expand(2, 3, 5), (X,), 0),
    ("flatten", lambda lib, Fn, a: a.flatten(), (X,), 0),
    ("select", lambda lib, Fn, a: a.select(1, 2), (X,), 0),
    ("slicing", lambda lib, Fn, a: a[1:, ::2], (X,), 0),
    ("index_list", lambda lib, Fn, a: a[:, [0, 2, 2]], (X,), 0),
    ("index_batched", lambda lib, Fn, a, i: a[i], (Y, torch.tensor([0, 1, 2, 3])), 0),
    ("index_batched_into_unbatched", lambda lib, Fn, a, i: a[i], (Y[0], torch.tensor([0, 4, 2, 3])),
     (None, 0)),
    ("narrow", lambda lib, Fn, a: a.narrow(1, 1, 2), (X,), 0),
    ("split", lambda lib, Fn, a: a.split(2, 1), (X,), 0),
    ("chunk", lambda lib, Fn, a: a.chunk(2, 0), (X,), 0),
    ("unbind", lambda lib, Fn, a: a.unbind(1), (X,), 0),
    ("movedim", lambda lib, Fn, a: a.movedim(0, -1), (X,), 0),
    ("flip", lambda lib, Fn, a: a.flip(-1), (X,), 0),
    ("repeat", lambda lib, Fn, a: a.repeat(2, 1, 1), (X,), 0),
    ("diagonal", lambda lib, Fn, a: a.diagonal(), (X,), 0),
    ("tril", lambda lib, Fn, a: a.tril(), (X,), 0),
    ("cat", lambda lib, Fn, a, b: lib.cat([a, b.unsqueeze(0)], 0), (X, Y), 0),
    ("cat_unbatched", lambda lib, Fn, a, b: lib.cat([a, b], 1), (X, X[0]), (0, None)),
    ("stack", lambda lib, Fn, a, b: lib.stack([a[0], b], 1), (X, Y), 0),
    ("gather", lambda lib, Fn, a, i: a.gather(1, i), (X, torch.randint(0, 5, (4, 3, 2), generator=g)),
     0),
    ("index_select_batched_index", lambda lib, Fn, a, i: a.index_select(1, i),
     (X, torch.randint(0, 5, (4, 2), generator=g)), 0),
    ("atleast_3d", lambda lib, Fn, a, b: lib.atleast_3d(a, b[0]), (Y, Y), 0),
    ("hstack_vstack", lambda lib, Fn, a, b: (lib.hstack([a, b]), lib.vstack([a, b])), (Y, Y), 0),
    ("cosine_similarity", lambda lib, Fn, a, b: Fn.cosine_similarity(a, b, dim=0), (X, X[0]),
     (0, None)),
    ("pairwise_distance", lambda lib, Fn, a, b: Fn.pairwise_distance(a, b), (X, X.flip(0)), 0),
    ("pairwise_distance_1d", lambda lib, Fn, a, b: Fn.pairwise_distance(a, b), (Y, Y[0]),
     (0, None)),
    ("cross", lambda lib, Fn, a, b: lib.cross(a, b, dim=0), (X, X.flip(0)), 0),
    ("linalg_cross", lambda lib, Fn, a, b: lib.linalg.cross(a, b), (X[..., :3], X[0, :, :3]),
     (0, None)),
    ("dist", lambda lib, Fn, a, b: lib.dist(a, b, 3), (X, X.flip(0)), 0),
    ("diag", lambda lib, Fn, a, b: (lib.diag(a, 1), lib.diag(b)), (Y, X), 0),
    ("diag_embed", lambda lib, Fn, a: lib.diag_embed(a, 1, 0, 2), (X,), 0),
    ("rot90", lambda lib, Fn, a: lib.rot90(a, 1, (1, 0)), (X,), 0),
    ("index_select", lambda lib, Fn, a: a.index_select(1, lib.tensor([4, 0])), (X,), 0),
    ("zeros_like", lambda lib, Fn, a: lib.zeros_like(a) + a, (X,), 0),
    ("new_zeros", lambda lib, Fn, a: a.new_zeros(2) + a[0, :2], (X,), 0),
    ("to_dtype", lambda lib, Fn, a: a.to(lib.float64), (X,), 0),
    ("matmul_vec", lambda lib, Fn, a, b: a @ b, (X, Y), 0),
    ("matmul_unbatched_rhs", lambda lib, Fn, a, b: a @ b, (X, Y[0]), (0, None)),
    ("matmul_unbatched_lhs", lambda lib, Fn, a, b: a @ b, (X[0].t(), X), (None, 0)),
    ("matmul_1d_1d", lambda lib, Fn, a, b: a @ b, (Y, Y), 0),
    ("mm", lambda lib, Fn, a, b: lib.mm(a, b.unsqueeze(1)), (X, Y), 0),
    ("mv", lambda lib, Fn, a, b: lib.mv(a, b), (X, Y), 0),
    ("dot", lambda lib, Fn, a, b: lib.dot(a, b), (Y, Y), 0),
    ("bmm", lambda lib, Fn, a, b: lib.bmm(a, b), (torch.randn(4, 2, 3, 4), torch.randn(4, 2, 4, 5)), 0),
    ("outer", lambda lib, Fn, a, b: lib.outer(a, b), (Y, Y), 0),
    ("addmm", lambda lib, Fn, c, a, b: lib.addmm(c, a, b, beta=0.5), (torch.randn(4, 3, 2), X,
                                                                        torch.randn(5, 2)),
     (0, 0, None)),
    ("einsum", lambda lib, Fn, a, b: lib.einsum("ij,j->i", a, b), (X, Y), 0),
    ("einsum_implicit", lambda lib, Fn, a, b: lib.einsum("ij,jk", a, b), (X, torch.randn(5, 2)),
     (0, None)),
    ("det", lambda lib, Fn, a: lib.linalg.det(a), (torch.randn(4, 3, 3),), 0),
    ("inv", lambda lib, Fn, a: lib.linalg.inv(a), (torch.randn(4, 3, 3) + 3 * torch.eye(3),), 0),
    ("linear", lambda lib, Fn, a, w, b: Fn.linear(a, w, b), (X, torch.randn(2, 5), torch.randn(2)),
     (0, None, None)),
    ("linear_batched_weight", lambda lib, Fn, a, w, b: Fn.linear(a, w, b),
     (X, torch.randn(4, 2, 5), torch.randn(4, 2)), 0),
    ("relu", lambda lib, Fn, a: Fn.relu(a), (X,), 0),
    ("gelu", lambda lib, Fn, a: Fn.gelu(a), (X,), 0),
    ("tanh", lambda lib, Fn, a: lib.tanh(a), (X,), 0),
    ("layer_norm", lambda lib, Fn, a: Fn.layer_norm(a, (5,)), (X,), 0),
    ("conv2d_NCHW", lambda lib, Fn, a, w: Fn.conv2d(a, w, padding=1), (IMG, torch.randn(5, 3, 3, 3)),
     (0, None)),
    ("conv2d_CHW", lambda lib, Fn, a, w: Fn.conv2d(a, w), (IMG[:, 0], torch.randn(5, 3, 3, 3)),
     (0, None)),
    ("conv2d_batched_weight", lambda lib, Fn, a, w, b: Fn.conv2d(a, w, b, stride=2),
     (IMG, torch.randn(4, 5, 3, 3, 3), torch.randn(4, 5)), 0),
    ("conv1d_groups", lambda lib, Fn, a, w: Fn.conv1d(a, w, groups=2),
     (torch.randn(4, 2, 4, 7), torch.randn(4, 6, 2, 3)), 0),
    ("max_pool2d", lambda lib, Fn, a: Fn.max_pool2d(a, 2), (IMG,), 0),
    ("avg_pool2d_CHW", lambda lib, Fn, a: Fn.avg_pool2d(a, 2), (IMG[:, 0],), 0),
    ("cross_entropy", lambda lib, Fn, a, t: Fn.cross_entropy(a, t), (X, torch.randint(0, 5, (4, 3))),
     0),
    ("cross_entropy_1sample", lambda lib, Fn, a, t: Fn.cross_entropy(a, t),
     (Y, torch.randint(0, 5, (4,))), 0),
    ("cross_entropy_weight_ignore",
     lambda lib, Fn, a, t, w: Fn.cross_entropy(a, t, weight=w, ignore_index=1),
     (X, torch.randint(0, 5, (4, 3)), torch.rand(5)), (0, 0, None)),
    ("cross_entropy_probs", lambda lib, Fn, a, t: Fn.cross_entropy(a, t), (X, X.softmax(-1)), 0),
    ("nll_loss_sum", lambda lib, Fn, a, t: Fn.nll_loss(a, t, reduction="sum"),
     (X, torch.randint(0, 5, (4, 3))), 0),
    ("mse_loss", lambda lib, Fn, a, b: Fn.mse_loss(a, b), (X, X + 1), 0),
    ("mse_loss_sum_unbatched_target", lambda lib, Fn, a, b: Fn.mse_loss(a, b, reduction="sum"),
     (X, X[0]), (0, None)),
    ("bce_logits", lambda lib, Fn, a, b: Fn.binary_cross_entropy_with_logits(a, b),
     (X, X.sigmoid()), 0),
    ("T_property", lambda lib, Fn, a: a.T * 1, (X,), 0),
    ("mT_property", lambda lib, Fn, a: a.mT * 1, (X,), 0),
    ("batch_norm_eval", lambda lib, Fn, a, m, v: Fn.batch_norm(a.unsqueeze(0), m, v),
     (X, torch.randn(3), torch.rand(3) + 1), (0, None, None)),
    ("inplace_on_batched", lambda lib, Fn, a: a.clone().add_(1).mul_(2), (X,), 0),
    ("setitem", lambda lib, Fn, a, b: _setitem(a.clone(), b), (X, Y), 0),
    ("in_dim_1", lambda lib, Fn, a: a.sum(0), (X,), 1),
    ("in_dim_neg", lambda lib, Fn, a, b: a * b, (X, torch.randn(5, 4)), (0, -1)),
]


def _setitem(c, v):
    c[0] = v
    return c


@pytest.mark.parametrize("name,f,args,in_dims", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_torch_and_the_loop(name, f, args, in_dims):
    pargs = [P(a) for a in args]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*" + PERF)
        got = vmap(lambda *a: f(ptcore, F, *a), in_dims=in_dims)(*pargs)
    want = tfunc.vmap(lambda *a: f(torch, TF, *a), in_dims=in_dims)(*args)
    _close(got, want)
    # and the per-sample loop of ptcore itself
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    B = next(a.shape[d] for a, d in zip(pargs, dims) if d is not None)
    per = [f(ptcore, F, *[a if d is None else a.select(d, i) for a, d in zip(pargs, dims)])
           for i in range(B)]
    for j, leaf in enumerate(_leaves(got)):
        ref = ptcore.stack([_leaves(p)[j] for p in per])
        np.testing.assert_allclose(leaf.numpy().astype("f8"), ref.numpy().astype("f8"),
                                   rtol=1e-5, atol=1e-5)


class _Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(str(func).split(".")[1])
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("op,fn", [
    ("sin", lambda x: ptcore.sin(x)),
    ("linear", lambda x: F.linear(x, ptcore.ones(2, 3))),
    ("sum", lambda x: x.sum()),
    ("matmul", lambda x: x @ ptcore.ones(3, 4)),
])
def test_the_batched_path_calls_the_kernel_once(op, fn):
    x = ptcore.randn(16, 3)
    with _Count() as c:
        vmap(fn)(x)
    assert c.calls.count(op) == 1, c.calls


def test_conv_and_loss_run_once_for_the_batch():
    x = ptcore.randn(8, 2, 3, 6, 6)
    w = ptcore.randn(4, 3, 3, 3)
    t = ptcore.randint(0, 4, (8, 2))

    def f(xi, ti):
        return F.cross_entropy(F.conv2d(xi, w).mean((2, 3)), ti)
    with _Count() as c:
        vmap(f)(x, t)
    assert c.calls.count("conv2d") == 1, c.calls


def test_fallback_warns_once_and_is_correct():
    from ptcore.func import _batching_rules as R
    R._warned.discard("kron")
    x = ptcore.randn(5, 2, 2)
    y = ptcore.randn(3, 3)
    with pytest.warns(UserWarning, match=PERF + ".*kron"):
        r = vmap(ptcore.kron, in_dims=(0, None))(x, y)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*" + PERF)
        r2 = vmap(ptcore.kron, in_dims=(0, None))(x, y)
    want = ptcore.stack([ptcore.kron(x[i], y) for i in range(5)])
    assert bool((r == want).all()) and bool((r2 == want).all())
    _close(r, torch.func.vmap(torch.kron, in_dims=(0, None))(torch.tensor(x.numpy()),
                                                             torch.tensor(y.numpy())))


def test_layer_is_off_outside_vmap():
    from ptcore._dispatch import dispatcher, batching
    vmap(ptcore.sin)(ptcore.randn(3, 2))
    assert not batching._LAYER.enabled
    assert batching.frames() == []
    assert type(ptcore.ones(2).view(2)) is ptcore.Tensor
    assert dispatcher.on[0] == any(l.enabled for l in dispatcher._LAYERS)


# ---------------------------------------------------------------------------
# in_dims / out_dims / nesting / chunks
# ---------------------------------------------------------------------------

def test_nested_vmap():
    x, y = torch.randn(3, 4, 5), torch.randn(4, 5)

    def f(lib):
        return lambda a, b: vmap_of(lib)(lambda r, q: (r * q).sum() * r, in_dims=(0, None))(a, b)
    _close(vmap(f(ptcore), in_dims=(0, None))(P(x), P(y)),
           tfunc.vmap(f(torch), in_dims=(0, None))(x, y))
    # the inner vmap maps over an input the outer one does not
    g = lambda lib: lambda a, b: vmap_of(lib)(lambda q: a @ q)(b)  # noqa: E731
    _close(vmap(g(ptcore), in_dims=(0, None))(P(x[:, 0]), P(y)),
           tfunc.vmap(g(torch), in_dims=(0, None))(x[:, 0], y))


def vmap_of(lib):
    return vmap if lib is ptcore else tfunc.vmap


def test_in_dims_pytrees_and_out_dims():
    x, y = torch.randn(3, 4), torch.randn(4, 3)

    def f(d, t):
        return d["a"] * d["b"].sum(), (d["a"] + t, t)
    got = vmap(f, in_dims=({"a": 0, "b": 1}, None), out_dims=(1, (0, None)))(
        {"a": P(x), "b": P(y)}, P(x[0]))
    want = tfunc.vmap(f, in_dims=({"a": 0, "b": 1}, None), out_dims=(1, (0, None)))(
        {"a": x, "b": y}, x[0])
    _close(got[0], want[0])
    _close(got[1][0], want[1][0])
    _close(got[1][1], want[1][1])
    # an output that does not depend on the batch is expanded
    _close(vmap(lambda a: ptcore.ones(2))(P(x)), tfunc.vmap(lambda a: torch.ones(2))(x))
    assert tuple(vmap(lambda a: ptcore.ones(2), out_dims=1)(P(x)).shape) == (2, 3)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 100])
def test_chunk_size_gives_the_same_result(chunk):
    x = ptcore.randn(7, 3, 4)
    f = lambda a: (a.softmax(-1) @ a.t(), a.sum())  # noqa: E731
    full = vmap(f)(x)
    got = vmap(f, chunk_size=chunk)(x)
    for a, b in zip(got, full):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# randomness
# ---------------------------------------------------------------------------

def test_randomness_error_mode_raises():
    x = ptcore.ones(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: r + ptcore.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: F.dropout(r, 0.5))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: r.clone().uniform_())(x)
    # dropout that does not draw (eval, p=0) is allowed
    assert bool((vmap(lambda r: F.dropout(r, 0.5, training=False))(x) == x).all())
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r, randomness="sometimes")


@pytest.mark.parametrize("fn", [
    lambda r: r * 0 + ptcore.rand(50),
    lambda r: F.dropout(r, 0.5),
    lambda r: ptcore.bernoulli(r * 0.5),
    lambda r: r.clone().normal_(),
    lambda r: ptcore.rand_like(r),
])
def test_randomness_same_and_different(fn):
    x = ptcore.ones(6, 50)
    same = vmap(fn, randomness="same")(x)
    assert all(bool((same[i] == same[0]).all()) for i in range(6))
    diff = vmap(fn, randomness="different")(x)
    assert not all(bool((diff[i] == diff[0]).all()) for i in range(1, 6))
    # 'same' with chunks: every chunk draws the same numbers
    ch = vmap(fn, randomness="same", chunk_size=4)(x)
    assert all(bool((ch[i] == ch[0]).all()) for i in range(6))


def test_randomness_different_is_seeded():
    x = ptcore.ones(4, 10)
    ptcore.manual_seed(3)
    a = vmap(lambda r: r * ptcore.randn(10), randomness="different")(x)
    ptcore.manual_seed(3)
    b = vmap(lambda r: r * ptcore.randn(10), randomness="different")(x)
    assert bool((a == b).all())


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_errors():
    x = ptcore.randn(3, 4)
    with pytest.raises(ValueError, match="same size"):
        vmap(ptcore.add)(x, ptcore.randn(2, 4))
    with pytest.raises(ValueError, match="non-Tensor"):
        vmap(lambda a, n: a * n, in_dims=(0, 0))(x, 3)
    with pytest.raises(ValueError, match="in_dim"):
        vmap(ptcore.sin, in_dims=2)(x)
    with pytest.raises(ValueError, match="out_dim is None"):
        vmap(ptcore.sin, out_dims=None)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3)(x)
    with pytest.raises(RuntimeError, match=r"\.item\(\)"):
        vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a.sum() > 0 else -a)(x)
    with pytest.raises(RuntimeError, match="vmapped over but `self` not"):
        y = ptcore.zeros(4)
        vmap(lambda a: y.add_(a))(x)
    with pytest.raises(RuntimeError, match="vmapped over but `self` not"):
        y = ptcore.zeros(4)
        vmap(lambda a: y.__setitem__(0, a[0]))(x)
    with pytest.raises(ValueError, match="chunk_size"):
        vmap(ptcore.sin, chunk_size=0)
    with pytest.raises(ValueError, match="no inputs"):
        vmap(ptcore.sin)()
    escaped = []
    vmap(lambda a: escaped.append(a) or a)(x)
    with pytest.raises(RuntimeError, match="escaped"):
        vmap(lambda a: a + escaped[0])(x)
    # outside any vmap its data is the poison element, never one sample's values
    assert bool(ptcore.isnan(escaped[0] + 1).all())
    with pytest.raises(IndexError, match="Dimension out of range"):
        vmap(lambda a: a.sum(2))(x)
    with pytest.raises(RuntimeError, match="1D"):
        vmap(lambda a: a.sum() @ a)(x)
    # the layer is off again after errors
    from ptcore._dispatch import batching
    assert batching.frames() == [] and not batching._LAYER.enabled


def test_batched_tensor_metadata_is_logical():
    x = ptcore.randn(3, 4, 5)
    seen = {}

    def f(a):
        seen["shape"], seen["dim"], seen["numel"] = tuple(a.shape), a.dim(), a.numel()
        seen["dtype"] = a.dtype
        seen["repr"] = repr(a)
        return a
    vmap(f)(x)
    assert seen["shape"] == (4, 5) and seen["dim"] == 2 and seen["numel"] == 20
    assert seen["dtype"] is ptcore.float32
    assert "BatchedTensor(lvl=" in seen["repr"]


def test_sweep_over_the_op_table_matches_the_loop():
    """Every pointwise/reduction/sorting/shape/linalg function of the table
    that takes one or two float tensors: vmap equals the per-sample loop
    (dtype, shape, values); most of them take a batching rule."""
    from ptcore._dispatch.table import OPS
    from ptcore.func import _batching_rules as R
    gen = ptcore.Generator().manual_seed(0)
    x = ptcore.rand(4, 3, 5, generator=gen) + 0.5
    y = ptcore.rand(4, 3, 5, generator=gen) + 0.5
    checked, bad, batched = [], [], 0
    for (ns, name), d in sorted(OPS.items()):
        if ns != "ptcore" or d.family not in ("pointwise", "reduction", "sorting", "shape",
                                              "linalg") or "random" in d.tags or \
                name.endswith("_"):
            continue
        fn = getattr(ptcore, name, None)
        for args in ((x,), (x, y)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ref = [fn(*[a[i] for a in args]) for i in range(4)]
                    ref = ptcore.stack(ref)
                except Exception:
                    continue
            R._warned.discard(name)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                got = vmap(fn)(*args)
            batched += not any(PERF in str(m.message) for m in w)
            checked.append(name)
            if not (tuple(got.shape) == tuple(ref.shape) and got.dtype == ref.dtype and
                    np.allclose(got.numpy(), ref.numpy(), equal_nan=True, atol=1e-5)):
                bad.append(name)
            break
    assert not bad, bad
    assert len(checked) > 180 and batched > 150, (len(checked), batched)
