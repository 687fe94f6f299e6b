"""The fast paths of a small transformer's inference calls (a decoder's
generation loop): ``matmul`` of a batch of rows and a matrix and of equal
batches of matrices where nothing records, ``F.linear`` routed straight to
mm/addmm/matmul, ``arange`` of short int64 ranges, indexing with lists of
ints, and ``scaled_dot_product_attention`` without mask, dropout or scale.
Values against NumPy (float64 reference), the general path's results and
errors where the fast path declines, autograd where an input requires grad,
and torch's results, grad_fn names and errors where torch is installed."""
import numpy as np
import pytest

import ptcore

F = ptcore.nn.functional

try:
    import torch
except ImportError:         # (the comparisons with torch are skipped)
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

DTYPES = {"float32": np.float32, "float64": np.float64, "complex64": np.complex64,
          "complex128": np.complex128}


def _arr(rng, shape, dt):
    a = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def _close(got, want, dt):
    tol = 1e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-11
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# matmul: rows @ matrix, batches @ batches
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("ashape,bshape", [((2, 5, 8), (8, 6)), ((1, 1, 16), (16, 3)),
                                           ((2, 3, 4, 8), (8, 5)), ((3, 0, 4), (4, 2)),
                                           ((2, 4, 3), (3, 0))])
def test_rows_times_matrix(dt, ashape, bshape):
    rng = np.random.default_rng(len(ashape) * 10 + ashape[-1])
    a, b = _arr(rng, ashape, DTYPES[dt]), _arr(rng, bshape, DTYPES[dt])
    pa, pb = ptcore.from_numpy(a), ptcore.from_numpy(b)
    with ptcore.no_grad():
        got = pa @ pb
        got_t = pa @ ptcore.from_numpy(np.ascontiguousarray(b.T)).t()    # a weight.t()
    want = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) @ b
    assert tuple(got.shape) == want.shape and got.is_contiguous()
    _close(got.numpy(), want, a.dtype)
    _close(got_t.numpy(), want, a.dtype)
    if int(np.prod(ashape[:-1])) >= 2:      # (one row: a matrix-vector product)
        np.testing.assert_array_equal(got_t.numpy(), got.numpy())


@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("ashape,bshape", [((1, 4, 5, 16), (1, 4, 16, 5)), ((3, 4, 6), (3, 6, 2)),
                                           ((2, 3, 4, 0), (2, 3, 0, 5)),
                                           ((2, 3, 1, 6), (2, 3, 6, 1))])
def test_equal_batches(dt, ashape, bshape):
    rng = np.random.default_rng(ashape[-1] + bshape[-1])
    a, b = _arr(rng, ashape, DTYPES[dt]), _arr(rng, bshape, DTYPES[dt])
    with ptcore.no_grad():
        got = ptcore.from_numpy(a) @ ptcore.from_numpy(b)
        # attention's q @ k^T: the second operand a transposed view
        bt = ptcore.from_numpy(np.ascontiguousarray(np.swapaxes(b, -1, -2))).transpose(-2, -1)
        got_t = ptcore.from_numpy(a) @ bt
    want = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) @ b
    assert tuple(got.shape) == want.shape and got.is_contiguous()
    _close(got.numpy(), want, a.dtype)
    _close(got_t.numpy(), want, a.dtype)


def test_broadcast_and_strided_batches_take_the_general_path():
    rng = np.random.default_rng(1)
    a, b = _arr(rng, (2, 1, 4, 6), np.float32), _arr(rng, (2, 3, 6, 5), np.float32)
    with ptcore.no_grad():
        got = ptcore.from_numpy(a) @ ptcore.from_numpy(b)
        # a batch of rows that is not contiguous (a slice along the rows)
        big = _arr(rng, (2, 9, 6), np.float32)
        w = _arr(rng, (6, 4), np.float32)
        sliced = ptcore.from_numpy(big)[:, ::2] @ ptcore.from_numpy(w)
    _close(got.numpy(), a.astype(np.float64) @ b, np.float32)
    _close(sliced.numpy(), big[:, ::2].astype(np.float64) @ w, np.float32)


def test_mismatches_raise_as_before():
    a, b = ptcore.randn(2, 5, 8), ptcore.randn(7, 6)
    with ptcore.no_grad():
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            a @ b
        with pytest.raises(RuntimeError):
            a @ ptcore.randn(8, 6, dtype=ptcore.float64)
        with pytest.raises(RuntimeError):
            ptcore.randn(2, 3, 4, 5) @ ptcore.randn(2, 3, 6, 5)


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference"])
def test_recording_where_an_operand_requires_grad(mode):
    """With grad mode on and a leaf requiring grad the general path records
    (grads checked); under no_grad / inference_mode the fast path gives a
    result without history, the same values."""
    rng = np.random.default_rng(2)
    x = ptcore.from_numpy(_arr(rng, (2, 5, 8), np.float64)).requires_grad_()
    w = ptcore.from_numpy(_arr(rng, (6, 8), np.float64)).requires_grad_()
    q = ptcore.from_numpy(_arr(rng, (2, 3, 4, 8), np.float64)).requires_grad_()
    ctx = {"grad": ptcore.enable_grad, "no_grad": ptcore.no_grad,
           "inference": ptcore.inference_mode}[mode]
    with ctx():
        y = x @ w.t()
        s = q @ q.transpose(-2, -1)
    want_y = x.detach().numpy() @ w.detach().numpy().T
    _close(y.detach().numpy(), want_y, np.float64)
    _close(s.detach().numpy(), q.detach().numpy() @ np.swapaxes(q.detach().numpy(), -1, -2),
           np.float64)
    if mode != "grad":
        assert y.grad_fn is None and not y.requires_grad and s.grad_fn is None
        return
    assert type(y.grad_fn).__name__ == "UnsafeViewBackward0"
    gx, gw = ptcore.autograd.grad(y.sum(), (x, w))
    np.testing.assert_allclose(gx.numpy(), np.broadcast_to(w.detach().numpy().sum(0), (2, 5, 8)))
    np.testing.assert_allclose(gw.numpy(), np.broadcast_to(
        x.detach().numpy().reshape(-1, 8).sum(0), (6, 8)))
    assert ptcore.autograd.gradcheck(lambda a: a @ a.transpose(-2, -1), (q,))


# ---------------------------------------------------------------------------
# F.linear
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 8), (1, 5, 8), (2, 3, 5, 8)])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("grad", [False, True])
def test_linear_routes(shape, bias, grad):
    rng = np.random.default_rng(3)
    x = _arr(rng, shape, np.float32)
    w = _arr(rng, (6, 8), np.float32)
    b = _arr(rng, (6,), np.float32)
    px = ptcore.from_numpy(x).requires_grad_(grad)
    pw = ptcore.from_numpy(w).requires_grad_(grad)
    pb = ptcore.from_numpy(b).requires_grad_(grad) if bias else None
    y = F.linear(px, pw, pb)
    want = x.astype(np.float64) @ w.T.astype(np.float64) + (b if bias else 0)
    _close(y.detach().numpy(), want, np.float32)
    if torch is not None:
        tx = torch.from_numpy(x).requires_grad_(grad)
        tw = torch.from_numpy(w).requires_grad_(grad)
        tb = torch.from_numpy(b).requires_grad_(grad) if bias else None
        ty = torch.nn.functional.linear(tx, tw, tb)
        assert (y.grad_fn is None) == (ty.grad_fn is None)
        if grad:
            assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
            g = _arr(rng, tuple(y.shape), np.float32)
            got = ptcore.autograd.grad(y, [t for t in (px, pw, pb) if t is not None],
                                       ptcore.from_numpy(g))
            exp = torch.autograd.grad(ty, [t for t in (tx, tw, tb) if t is not None],
                                      torch.from_numpy(g))
            for u, v in zip(got, exp):
                np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_errors_unchanged():
    x, w = ptcore.randn(2, 3, 8), ptcore.randn(6, 8)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(ptcore.randn(2, 3, 7), w)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(ptcore.randn(2, 3, 7), w, ptcore.randn(6))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(x.double(), w)
    with pytest.raises(RuntimeError):
        F.linear(x, w, ptcore.randn(6, dtype=ptcore.float64))
    with pytest.raises(TypeError):
        F.linear(x, w, 3)
    # a 1-D weight and a non-contiguous input with a bias: the general path
    np.testing.assert_allclose(F.linear(x, w[0]).numpy(), x.numpy() @ w[0].numpy(), rtol=1e-5,
                               atol=1e-5)
    xt = ptcore.randn(3, 2, 8).transpose(0, 1)
    np.testing.assert_allclose(F.linear(xt, w, ptcore.ones(6)).numpy(),
                               xt.numpy() @ w.numpy().T + 1, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# arange
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(5,), (0, 5), (3, -7, -3), (2 ** 61, 2 ** 62 - 1, 2 ** 60),
                                  (-(2 ** 61), 2 ** 61, 2 ** 60), (7, 8)])
@pytest.mark.parametrize("kw", [{}, {"dtype": ptcore.long}, {"dtype": ptcore.int64,
                                                               "device": "cpu"}])
def test_arange_int64(args, kw):
    t = ptcore.arange(*args, **kw)
    assert t.dtype is ptcore.int64 and t.device.type == "cpu" and t.is_contiguous()
    assert t.tolist() == list(range(*args))
    t.resize_(t.numel() + 3)            # a tensor of its own (not borrowed memory)
    if torch is not None:
        assert torch.arange(*args).tolist() == list(range(*args))


def test_arange_other_calls_unchanged():
    assert ptcore.arange(5, dtype=ptcore.float32).dtype is ptcore.float32
    assert ptcore.arange(0, 5, requires_grad=False).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="upper bound and lower bound"):
        ptcore.arange(5, 0, 1)
    with pytest.raises((RuntimeError, ValueError)):
        ptcore.arange(0, 5, 0)
    assert ptcore.arange(0, 70000).numel() == 70000
    assert ptcore.arange(0, 5, dtype=ptcore.long, device=ptcore.device("cpu")).tolist() == \
        [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------
# indexing with lists of ints
# ---------------------------------------------------------------------------

_LIST_INDICES = [(slice(None), [-1], slice(None)), (slice(None), [0, 2, -1]),
                 ([1, 0], slice(None), [3, 3]), (slice(None), [True, False, True, False, True]),
                 (slice(None), []), ([1], [2], [3]), (slice(None), [[0, 1], [2, 3]])]


@pytest.mark.parametrize("idx", _LIST_INDICES, ids=range(len(_LIST_INDICES)))
def test_list_index_values(idx):
    x = np.random.default_rng(4).standard_normal((2, 5, 7)).astype(np.float32)
    got = ptcore.from_numpy(x)[idx]
    np.testing.assert_array_equal(got.numpy(), x[idx])
    if torch is not None:
        assert tuple(torch.from_numpy(x)[idx].shape) == tuple(got.shape)


@pytest.mark.parametrize("idx,err", [((slice(None), [5]), IndexError),
                                     ((slice(None), [-6]), IndexError),
                                     ((slice(None), [2 ** 70]), (ValueError, OverflowError,
                                                                 RuntimeError, IndexError))])
def test_list_index_errors(idx, err):
    x = ptcore.randn(2, 5, 7)
    with pytest.raises(err):
        x[idx]
    if torch is not None:
        with pytest.raises(err):
            torch.randn(2, 5, 7)[idx]


def test_list_index_grad():
    x = ptcore.randn(1, 5, 3, requires_grad=True)
    y = x[:, [-1, 0, -1], :]
    assert type(y.grad_fn).__name__ == "IndexBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad[0, :, 0].numpy(), [1, 0, 0, 0, 2])


# ---------------------------------------------------------------------------
# scaled_dot_product_attention
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 4, 7, 16), (3, 5, 8), (4, 9), (1, 2, 1, 4)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sdpa_without_recording_equals_the_recorded_forward(shape, causal, dt):
    rng = np.random.default_rng(5)
    q, k, v = (_arr(rng, shape, dt) for _ in range(3))
    with ptcore.no_grad():
        fast = F.scaled_dot_product_attention(*map(ptcore.from_numpy, (q, k, v)),
                                              is_causal=causal)
    slow = F.scaled_dot_product_attention(ptcore.from_numpy(q).requires_grad_(),
                                          *map(ptcore.from_numpy, (k, v)), is_causal=causal)
    assert type(slow.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert fast.grad_fn is None and fast.stride() == slow.stride()
    np.testing.assert_array_equal(fast.numpy(), slow.detach().numpy())
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / np.sqrt(shape[-1])
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    _close(fast.numpy(), want, dt)
    if torch is not None:
        t = torch.nn.functional.scaled_dot_product_attention(
            *map(torch.from_numpy, (q, k, v)), is_causal=causal)
        _close(fast.numpy(), t.numpy(), dt)
        assert fast.stride() == t.stride()


def test_sdpa_head_views_keep_their_layout():
    """A query x.view(B, T, H, d).transpose(1, 2): the output laid out as it
    (torch's flash kernel's), so that .transpose(1, 2).view(B, T, H * d)
    needs no copy."""
    x = ptcore.randn(2, 5, 4, 8)
    q = x.transpose(1, 2)
    for causal in (True, False):
        with ptcore.no_grad():
            out = F.scaled_dot_product_attention(q, q, q, is_causal=causal)
        assert out.transpose(1, 2).is_contiguous()
        out.transpose(1, 2).view(2, 5, 32)
        rec = F.scaled_dot_product_attention(q.detach().requires_grad_(), q, q,
                                             is_causal=causal)
        assert rec.stride() == out.stride()
        np.testing.assert_array_equal(out.numpy(), rec.detach().numpy())
    # other layouts of q (a transpose of the sequence and embedding dims, one head):
    # the general path's layout rules
    for q2 in (ptcore.randn(2, 4, 8, 5).transpose(-2, -1), ptcore.randn(2, 5, 1, 8).transpose(1, 2)):
        with ptcore.no_grad():
            a = F.scaled_dot_product_attention(q2, q2, q2, is_causal=True)
        b = F.scaled_dot_product_attention(q2.detach().requires_grad_(), q2, q2, is_causal=True)
        assert a.stride() == b.stride()
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())


def test_sdpa_other_calls_take_the_general_path():
    q = ptcore.randn(2, 3, 4, 8)
    with ptcore.no_grad():
        base = F.scaled_dot_product_attention(q, q, q)
        np.testing.assert_allclose(
            F.scaled_dot_product_attention(q, q, q, scale=1 / np.sqrt(8)).numpy(), base.numpy(),
            rtol=1e-6, atol=1e-6)
        mask = ptcore.ones(4, 4, dtype=ptcore.bool)
        np.testing.assert_allclose(
            F.scaled_dot_product_attention(q, q, q, attn_mask=mask).numpy(), base.numpy(),
            rtol=1e-6, atol=1e-6)
        with pytest.raises(RuntimeError, match="same dtype"):
            F.scaled_dot_product_attention(q, q.double(), q)
        with pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(q, ptcore.randn(2, 3, 4, 7), q)
        with pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(q, q, ptcore.randn(2, 3, 5, 8))
        with pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=True,
                                           dropout_p=0.5)
        # integer operands: torch's error, not the fast path's
        with pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(*(ptcore.ones(2, 3, dtype=ptcore.int64),) * 3)


# ---------------------------------------------------------------------------
# layer_norm, multinomial
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 8), (1, 1, 8)])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_layer_norm_without_recording(shape, affine, dt):
    rng = np.random.default_rng(6)
    x = _arr(rng, shape, dt)
    w = _arr(rng, (8,), dt) if affine != "none" else None
    b = _arr(rng, (8,), dt) if affine == "both" else None
    pw = None if w is None else ptcore.from_numpy(w).requires_grad_()
    pb = None if b is None else ptcore.from_numpy(b).requires_grad_()
    with ptcore.no_grad():
        fast = F.layer_norm(ptcore.from_numpy(x), (8,), pw, pb)
    slow = F.layer_norm(ptcore.from_numpy(x).requires_grad_(), [8], pw, pb)
    assert fast.grad_fn is None and type(slow.grad_fn).__name__ == "NativeLayerNormBackward0"
    np.testing.assert_array_equal(fast.numpy(), slow.detach().numpy())
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    want = want * (1 if w is None else w) + (0 if b is None else b)
    _close(fast.numpy(), want, dt)


def test_layer_norm_errors_unchanged():
    x = ptcore.randn(2, 5, 64)
    with ptcore.no_grad():
        with pytest.raises(RuntimeError, match="expected input with shape"):
            F.layer_norm(x, (63,))
        with pytest.raises(RuntimeError, match="same shape as normalized_shape"):
            F.layer_norm(x, (64,), ptcore.randn(63))
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F.layer_norm(x, (64,), ptcore.randn(64, dtype=ptcore.float64))
        with pytest.raises(TypeError):
            F.layer_norm(x, 64)
        # two normalized dims, a weight of another layout, an int eps: the general path
        y = F.layer_norm(x, (5, 64))
        np.testing.assert_allclose(y.numpy().reshape(2, -1).mean(-1), 0, atol=1e-5)
        w = ptcore.randn(2, 64)[:, 0]
        np.testing.assert_allclose(F.layer_norm(x[..., :2], (2,), w, eps=1).numpy(),
                                   F.layer_norm(x[..., :2], (2,), w.contiguous(),
                                                eps=1.0).numpy())


def test_multinomial_checks_and_draws():
    p = ptcore.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    for _ in range(20):
        d = ptcore.multinomial(p, 1)
        assert d[0, 0].item() == 1 and d[1, 0].item() in (0, 2)
    d = ptcore.multinomial(p, 3)            # more samples than positive categories
    assert sorted(d[0].tolist()) == [0, 1, 2] and d[0, 0].item() == 1
    for bad in ([0.1, float("nan")], [0.2, float("inf")], [0.1, -0.1]):
        with pytest.raises(RuntimeError, match="probability tensor contains"):
            ptcore.multinomial(ptcore.tensor(bad), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        ptcore.multinomial(ptcore.zeros(3), 1)


@pytest.mark.parametrize("wlayout", ["c", "t"])
def test_one_row_products(wlayout):
    """A decoder step with a KV cache: one token's row through a Linear / a
    Hugging Face Conv1D (addmm of the bias, the row, the weight): the fast
    entries give the general path's bits (alpha/beta given as floats take
    that path), values against float64."""
    rng = np.random.default_rng(7)
    x = ptcore.from_numpy(rng.standard_normal((1, 128)).astype(np.float32))
    if wlayout == "c":
        w = ptcore.from_numpy(rng.standard_normal((128, 384)).astype(np.float32))
    else:
        w = ptcore.from_numpy(rng.standard_normal((384, 128)).astype(np.float32)).t()
    b = ptcore.from_numpy(rng.standard_normal(384).astype(np.float32))
    fast = ptcore.addmm(b, x, w)
    general = ptcore.addmm(b, x, w, beta=1.0, alpha=1.0)
    np.testing.assert_array_equal(fast.numpy(), general.numpy())
    want = x.numpy().astype(np.float64) @ w.numpy() + b.numpy()
    _close(fast.numpy(), want, np.float32)
    np.testing.assert_array_equal(ptcore.mm(x, w).numpy(), (x @ w).numpy())
    _close(ptcore.mm(x, w).numpy(), x.numpy().astype(np.float64) @ w.numpy(), np.float32)
    lin = F.linear(x.view(1, 1, 128), w.t().contiguous(), b)
    _close(lin.numpy().reshape(1, 384), want, np.float32)
    # a strided row (a column of a matrix) is not the fast entry's: the same values
    xs = ptcore.from_numpy(rng.standard_normal((128, 3)).astype(np.float32)).t()[1:2]
    _close(ptcore.addmm(b, xs, w).numpy(), xs.numpy().astype(np.float64) @ w.numpy() + b.numpy(),
           np.float32)


@pytest.mark.parametrize("grad", [False, True])
def test_empty_sizes(grad):
    """Empty embeddings and empty inputs: torch's results (before this, an
    empty embedding divided by sqrt(0) and a linear of an empty 3-D input with
    a bias viewed it as (-1, 0))."""
    rng = np.random.default_rng(9)
    v = rng.standard_normal((1, 2, 4, 2)).astype(np.float32)
    for causal in (False, True):
        q = ptcore.zeros(1, 2, 3, 0, requires_grad=grad)
        out = F.scaled_dot_product_attention(q, ptcore.zeros(1, 2, 4, 0), ptcore.from_numpy(v),
                                             is_causal=causal)
        # every score is an empty sum: uniform weights over the keys (causal: the visible ones)
        w = np.tril(np.ones((3, 4))) if causal else np.ones((3, 4))
        want = (w / w.sum(-1, keepdims=True)) @ v
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6, atol=1e-6)
    y = F.linear(ptcore.zeros(2, 3, 0, requires_grad=grad), ptcore.zeros(5, 0), ptcore.ones(5))
    assert tuple(y.shape) == (2, 3, 5) and y.detach().numpy().tolist() == np.ones((2, 3, 5)).tolist()
    y = F.linear(ptcore.zeros(0, 3, 4, requires_grad=grad), ptcore.zeros(5, 4), ptcore.ones(5))
    assert tuple(y.shape) == (0, 3, 5)
    if torch is not None:
        t = torch.nn.functional.scaled_dot_product_attention(
            torch.zeros(1, 2, 3, 0), torch.zeros(1, 2, 4, 0), torch.from_numpy(v))
        np.testing.assert_allclose(t.numpy(), np.ones((3, 4)) / 4 @ v, rtol=1e-6, atol=1e-6)
