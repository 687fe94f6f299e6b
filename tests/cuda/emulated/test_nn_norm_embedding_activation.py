"""layer/batch/group norm, embedding and the activations with their fused
backward kernels on the emulated CUDA device, against the CPU run."""
import pytest

import ptcore
import ptcore.nn.functional as F
from nn_device_compare import check, close, rand

FLOATS = [ptcore.float32, ptcore.float64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm(dtype):
    x = rand((4, 3, 6), dtype)
    check(F.layer_norm, x, (6,), rand((6,), dtype, 1), rand((6,), dtype, 2), grad=(0, 2, 3))
    check(F.layer_norm, x, (3, 6), grad=(0,), eps=1e-3)
    check(F.layer_norm, x.transpose(0, 1), (6,), rand((6,), dtype, 1), grad=(0, 2))


@pytest.mark.parametrize("M,n", [(2048, 256), (300, 70), (33, 600), (1000, 257), (31, 5)])
@pytest.mark.parametrize("parts", ["both", "weight", "bias"])
def test_layer_norm_weight_bias_gradients_in_row_chunks(M, n, parts):
    """The weight/bias gradients' column sums are split into chunks of rows (many blocks,
    then the chunks' partials summed): a GPT's (2048, 256) takes 64 chunks of 32 rows."""
    from ptcore.cuda.ops import nn as cnn
    Mc, k = cnn.lnwb_chunks(M, n)
    assert (Mc - 1) * k < M <= Mc * k
    if (M, n) == (2048, 256):
        assert (Mc, k) == (32, 64)
    if M <= cnn._LNWB_MIN_ROWS:
        assert k == 1
    w = rand((n,), ptcore.float64, 1) if parts != "bias" else None
    b = rand((n,), ptcore.float64, 2) if parts != "weight" else None
    grad = (0,) + ((2,) if w is not None else ()) + ((3,) if b is not None else ())
    check(F.layer_norm, rand((M, n), ptcore.float64), (n,), w, b, grad=grad)
    # float32: the chunked sums against the float64 sums of the same inputs (a sum of M
    # terms of magnitude ~1 is within a few ulp of M)
    x32 = rand((M, n))
    g32 = rand((M, n), seed=99)
    got, ref = [], []
    for dt, out in ((ptcore.float32, got), (ptcore.float64, ref)):
        xd = x32.to(dt).cuda().requires_grad_()
        wd = None if w is None else w.to(dt).cuda().requires_grad_()
        bd = None if b is None else b.to(dt).cuda().requires_grad_()
        F.layer_norm(xd, (n,), wd, bd).backward(g32.to(dt).cuda())
        out += [t.grad.cpu() for t in (wd, bd) if t is not None]
    for a, r in zip(got, ref):
        assert a.dtype is ptcore.float32
        assert ptcore.allclose(a.double(), r, rtol=1e-5, atol=2e-6 * M)


@pytest.mark.parametrize("dtype", [ptcore.float16, ptcore.bfloat16])
def test_layer_norm_weight_bias_gradients_of_half_types(dtype):
    """Half-precision partials are kept in float32 (the accumulation type) and rounded
    once at the end: the gradients equal the float32 sums rounded to the type."""
    M, n = 1024, 96
    x = rand((M, n)).to(dtype).cuda().requires_grad_()
    w = rand((n,), seed=1).to(dtype).cuda().requires_grad_()
    b = rand((n,), seed=2).to(dtype).cuda().requires_grad_()
    g = rand((M, n), seed=3).to(dtype).cuda()
    F.layer_norm(x, (n,), w, b).backward(g)
    x32, w32, b32 = (t.detach().float().requires_grad_() for t in (x, w, b))
    F.layer_norm(x32, (n,), w32, b32).backward(g.float())
    tol = {ptcore.float16: 2e-2, ptcore.bfloat16: 8e-2}[dtype]
    assert w.grad.dtype is dtype and b.grad.dtype is dtype
    assert ptcore.allclose(b.grad.float().cpu(), b32.grad.cpu(), rtol=tol, atol=tol)
    assert ptcore.allclose(w.grad.float().cpu(), w32.grad.cpu(), rtol=tol, atol=tol * 4)


def test_layer_norm_double_backward_uses_the_composite():
    x = rand((3, 5)).cuda().requires_grad_()
    w = rand((5,), seed=1).cuda().requires_grad_()
    y = F.layer_norm(x, (5,), w)
    g, = ptcore.autograd.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()
    xc = x.detach().cpu().requires_grad_()
    wc = w.detach().cpu().requires_grad_()
    yc = F.layer_norm(xc, (5,), wc)
    gc, = ptcore.autograd.grad((yc * yc).sum(), xc, create_graph=True)
    gc.sum().backward()
    close(g.detach().cpu(), gc.detach())
    close(x.grad.cpu(), xc.grad, ptcore.float32)
    close(w.grad.cpu(), wc.grad)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_training_updates_running_stats(dtype):
    rm, rv = rand((3,), dtype, 5), rand((3,), dtype, 6).abs()
    rmc, rvc = rm.cuda(), rv.cuda()
    x, w, b = rand((4, 3, 5), dtype), rand((3,), dtype, 1), rand((3,), dtype, 2)
    check(lambda t, ww, bb: F.batch_norm(t, rmc, rvc, ww, bb, training=True, momentum=0.2)
          if t.device.type == "cuda" else F.batch_norm(t, rm, rv, ww, bb, training=True, momentum=0.2),
          x, w, b, grad=(0, 1, 2))
    close(rmc.cpu(), rm)
    close(rvc.cpu(), rv)
    check(lambda t: F.batch_norm(t, rmc if t.device.type == "cuda" else rm,
                                 rvc if t.device.type == "cuda" else rv, training=False),
          rand((4, 3, 2, 2), dtype, 9))


def test_batch_norm_module_and_group_norm():
    ptcore.manual_seed(0)
    m = ptcore.nn.BatchNorm2d(3)
    mc = ptcore.nn.BatchNorm2d(3).to("cuda")
    x = rand((4, 3, 3, 3))
    close(mc(x.cuda()).cpu(), m(x))
    for k, v in m.state_dict().items():
        close(mc.state_dict()[k].cpu(), v)
    assert mc.num_batches_tracked.device.type == "cuda"
    m.eval()
    mc.eval()
    close(mc(x.cuda()).cpu(), m(x))
    check(F.group_norm, rand((4, 6, 3)), 3, rand((6,), seed=1), rand((6,), seed=2), grad=(0, 2, 3))
    check(F.instance_norm, rand((2, 3, 5)))
    check(F.rms_norm, rand((2, 3, 5)), (5,), rand((5,), seed=1), grad=(0, 2))


def test_embedding():
    idx = ptcore.tensor([[1, 2, 0], [4, 1, 1]])
    w = rand((5, 3))
    check(F.embedding, idx, w, grad=(1,))
    check(F.embedding, idx, w, grad=(1,), padding_idx=1)
    check(F.embedding, idx, w, grad=(1,), padding_idx=-4, scale_grad_by_freq=True)
    check(F.embedding, idx.int(), rand((5, 3), ptcore.float64), grad=(1,))
    check(lambda i, t: ptcore.embedding(t, i), idx, w, grad=(1,))
    ptcore.manual_seed(0)
    m = ptcore.nn.Embedding(5, 3, padding_idx=0).to("cuda")
    out = m(idx.cuda())
    out.sum().backward()
    assert m.weight.grad.cpu()[0].abs().sum().item() == 0
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(ptcore.tensor([5]).cuda(), w.cuda())
    with pytest.raises(RuntimeError, match="indices"):
        F.embedding(ptcore.tensor([1.0]).cuda(), w.cuda())


ACTS = [
    ("gelu", lambda x: F.gelu(x)),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    ("silu", lambda x: F.silu(x)),
    ("elu", lambda x: F.elu(x, 0.7)),
    ("selu", lambda x: F.selu(x)),
    ("celu", lambda x: F.celu(x, 1.5)),
    ("softplus", lambda x: F.softplus(x, 2.0, 3.0)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)),
    ("hardtanh", lambda x: F.hardtanh(x, -1.5, 0.5)),
    ("relu6", lambda x: F.relu6(x * 3)),
    ("hardsigmoid", lambda x: F.hardsigmoid(x)),
    ("hardswish", lambda x: F.hardswish(x)),
    ("mish", lambda x: F.mish(x)),
    ("logsigmoid", lambda x: F.logsigmoid(x)),
    ("glu", lambda x: F.glu(x.reshape(-1), 0)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", ACTS, ids=[a[0] for a in ACTS])
def test_activation_forward_backward(name, fn, dtype):
    x = rand((4, 5), dtype, scale=3.0)
    x[0, :3] = ptcore.tensor([0.0, -1.5, 0.5], dtype=dtype)      # at the kinks
    check(fn, x, grad=(0,))
    check(fn, x.t(), grad=(0,))                                   # non-contiguous


@pytest.mark.parametrize("name,fn", ACTS[:4], ids=[a[0] for a in ACTS[:4]])
def test_activation_low_precision_and_modules(name, fn):
    check(fn, rand((3, 4), ptcore.float16), grad=(0,))
    check(fn, rand((3, 4), ptcore.bfloat16), grad=(0,))


def test_activation_node_names_inplace_and_double_backward():
    x = rand((6,)).cuda().requires_grad_()
    assert type(F.gelu(x).grad_fn).__name__ == "GeluBackward0"
    assert type(F.leaky_relu(x).grad_fn).__name__ == "LeakyReluBackward0"
    y = x * 1
    F.leaky_relu(y, 0.1, inplace=True).sum().backward()
    xc = x.detach().cpu().requires_grad_()
    yc = xc * 1
    F.leaky_relu(yc, 0.1, inplace=True).sum().backward()
    close(x.grad.cpu(), xc.grad)
    x.grad = None
    g, = ptcore.autograd.grad(F.silu(x).sum(), x, create_graph=True)
    g.sum().backward()
    xc.grad = None
    gc, = ptcore.autograd.grad(F.silu(xc).sum(), xc, create_graph=True)
    gc.sum().backward()
    close(x.grad.cpu(), xc.grad)


def test_hardtanh_integer_inputs():
    xi = ptcore.tensor([-3, 0, 2, 5], dtype=ptcore.int32)
    close(F.hardtanh(xi.cuda(), -1, 3).cpu(), F.hardtanh(xi, -1, 3))
    xu = ptcore.tensor([0, 2, 5], dtype=ptcore.uint8)
    close(F.hardtanh(xu.cuda(), 1, 3).cpu(), F.hardtanh(xu, 1, 3))
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        F.hardtanh(xu.cuda())
    with pytest.raises(NotImplementedError, match="Long"):
        F.gelu(ptcore.ones(2, dtype=ptcore.int64, device="cuda"))


INPLACE = [
    ("relu_", lambda x: x.relu_()),
    ("ptcore.relu_", lambda x: ptcore.relu_(x)),
    ("F.relu", lambda x: F.relu(x, inplace=True)),
    ("elu_", lambda x: F.elu_(x, 0.5)),
    ("selu_", lambda x: F.selu_(x)),
    ("leaky_relu_", lambda x: F.leaky_relu_(x, 0.3)),
    ("hardtanh_", lambda x: F.hardtanh_(x, -0.5, 0.5)),
    ("silu", lambda x: F.silu(x, inplace=True)),
    ("hardswish", lambda x: F.hardswish(x, inplace=True)),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[a[0] for a in INPLACE])
def test_inplace_activations(name, fn):
    def f(x):
        y = x * 1
        r = fn(y)
        assert r is y
        return r
    check(f, rand((3, 4), scale=2.0))


def test_attention_and_transformer_layer():
    ptcore.manual_seed(0)
    layer = ptcore.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    x = rand((3, 2, 8))
    ref = layer(x)
    ref.sum().backward()
    gref = layer.self_attn.in_proj_weight.grad.clone()
    layer.zero_grad()
    layer.to("cuda")
    out = layer(x.cuda())
    out.sum().backward()
    close(out.detach().cpu(), ref.detach())
    close(layer.self_attn.in_proj_weight.grad.cpu(), gref)
    q = rand((2, 3, 4, 8))
    check(F.scaled_dot_product_attention, q, q * 0.5, rand((2, 3, 4, 8), seed=1), grad=(0, 1, 2))
    # is_causal: the hidden-position mask is made on the operands' device
    # (it was made on the CPU, and masked_fill of CUDA scores raised a mixed-
    # device RuntimeError); square and L < S
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
          q, q * 0.5, rand((2, 3, 4, 8), seed=1), grad=(0, 1, 2))
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
          q[:, :, :3], q * 0.5, rand((2, 3, 4, 8), seed=1), grad=(0, 1, 2))
    check(lambda a: F.kl_div(F.log_softmax(a, 1), F.softmax(a.detach() * 2, 1),
                             reduction="batchmean"), rand((4, 5)))
