"""``ptcore.ops.aten`` against ``torch.ops.aten``: the packets and overloads
(schemas, names, overload resolution), calling them (values as torch's,
through the dispatch point), and the identity of a ``TorchDispatchMode``'s
``func`` with ``ptcore.ops.aten.<op>.<overload>``."""
import copy
import pickle

import numpy as np
import pytest

import ptcore
from ptcore._dispatch import op_overload
from ptcore._dispatch.aten_schemas import overload_lines
from ptcore.utils import _python_dispatch as pd

torch = pytest.importorskip("torch")
from torch.utils import _python_dispatch as td  # noqa: E402

LIBS = [pytest.param(torch, td.TorchDispatchMode, id="torch"),
        pytest.param(ptcore, pd.TorchDispatchMode, id="ptcore")]

_rng = np.random.default_rng(0)
X = _rng.standard_normal((2, 3)).astype(np.float32)
Y = _rng.standard_normal((2, 3)).astype(np.float32)
W = _rng.standard_normal((4, 3)).astype(np.float32)
B = _rng.standard_normal(4).astype(np.float32)
Q = _rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
IMG = _rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
K = _rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
E = _rng.standard_normal((5, 3)).astype(np.float32)


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

def _schema_facts(o, write):
    s = o._schema
    return ([str(s), s.name, s.overload_name, s.is_mutable, o.name(), str(o), repr(o),
             o.__name__, o.is_view] +
            [(a.name, str(a.type), str(a.real_type), a.default_value, a.kwarg_only, a.is_out,
              a.has_default_value(), a.N, write(a)) for a in s.arguments] +
            [(r.name, str(r.type)) for r in s.returns])


def test_every_schema_matches_torch():
    """Each overload ptcore.ops.aten has: the schema torch prints, its arguments'
    names, types, defaults, keyword-only and out flags; overloads in torch's order."""
    bad = []
    for name in overload_lines():
        p, tp = getattr(ptcore.ops.aten, name), getattr(torch.ops.aten, name)
        if [n for n in tp.overloads() if n in p.overloads()] != p.overloads():
            bad.append((name, "order", p.overloads(), tp.overloads()))
        for ov in p.overloads():
            mine = _schema_facts(getattr(p, ov), lambda a: a.is_write)
            theirs = _schema_facts(getattr(tp, ov), lambda a: a.alias_info is not None and
                                   a.alias_info.is_write)
            if mine != theirs:
                bad.append((name, ov, [(m, t) for m, t in zip(mine, theirs) if m != t][:2]))
    assert not bad, bad[:10]


# ---------------------------------------------------------------------------
# calling aten's ops
# ---------------------------------------------------------------------------

def _calls(L):
    """name -> a call of an aten op through library ``L`` (torch or ptcore)."""
    a = L.ops.aten
    x, y, w, b, q, img, k, e = (L.tensor(v) for v in (X, Y, W, B, Q, IMG, K, E))
    z2, o2 = L.zeros(2), L.ones(2)
    logp = a._log_softmax(x, 1, False)
    return {
        "index_put_": lambda: a.index_put_(L.zeros(3), [L.tensor([1])], L.tensor(5.0)),
        "index_put_acc":
            lambda: a.index_put_.default(L.zeros(3), (L.tensor([1, 1]),), L.tensor(2.0), True),
        "index_put": lambda: a.index_put(L.zeros(2, 3), [None, L.tensor([0, 2])], L.tensor(1.0)),
        "add.Tensor": lambda: a.add.Tensor(x, y),
        "add.Tensor num": lambda: a.add.Tensor(x, 2),
        "add alpha": lambda: a.add(x, y, alpha=2),
        "add.Scalar": lambda: a.add.Scalar(x, 2.5),
        "add.out": lambda: a.add.out(x, y, out=L.empty(2, 3)),
        "add_": lambda: a.add_.Tensor(x.clone(), y),
        "sub": lambda: a.sub(x, y),
        "rsub": lambda: a.rsub(x, 1),
        "mul": lambda: a.mul.Tensor(x, y),
        "div": lambda: a.div(x, 2),
        "div_mode": lambda: a.div.Tensor_mode(x, y, rounding_mode='floor'),
        "mm": lambda: a.mm.default(x, w.t()),
        "addmm": lambda: a.addmm(b, x, w.t()),
        "addmm beta": lambda: a.addmm.default(b, x, w.t(), beta=0.5, alpha=2),
        "bmm": lambda: a.bmm(q[0], q[0].transpose(1, 2)),
        "t": lambda: a.t(x),
        "t.default": lambda: a.t.default(x),
        "cat": lambda: a.cat([x, y], 1),
        "cat.default": lambda: a.cat.default([x, y]),
        "stack": lambda: a.stack([x, y], 1),
        "view": lambda: a.view(x, [3, 2]),
        "view.default": lambda: a.view.default(x, [-1]),
        "view.dtype": lambda: a.view.dtype(x, L.int32),
        "reshape": lambda: a.reshape(x, [6]),
        "_unsafe_view": lambda: a._unsafe_view(x, [3, 2]),
        "_to_copy": lambda: a._to_copy(x, dtype=L.float64),
        "_to_copy.default": lambda: a._to_copy.default(x),
        "to.dtype": lambda: a.to.dtype(x, L.float16),
        "sdpa": lambda: a.scaled_dot_product_attention(q, q, q),
        "sdpa causal": lambda: a.scaled_dot_product_attention.default(q, q, q, is_causal=True),
        "sum.dim_IntList": lambda: a.sum.dim_IntList(x, [0]),
        "sum": lambda: a.sum(x),
        "sum.default": lambda: a.sum.default(x, dtype=L.float64),
        "sum keepdim": lambda: a.sum.dim_IntList(x, [1], True),
        "mean.dim": lambda: a.mean.dim(x, [1]),
        "mean": lambda: a.mean(x),
        "amax": lambda: a.amax(x, [1]),
        "max.dim": lambda: a.max.dim(x, 1),
        "max.default": lambda: a.max.default(x),
        "argmax": lambda: a.argmax(x, 1),
        "var.correction": lambda: a.var.correction(x, [1], correction=0),
        "var.dim": lambda: a.var.dim(x, [0], False),
        "_softmax": lambda: a._softmax(x, 1, False),
        "_softmax.default": lambda: a._softmax.default(x, 0, False),
        "_log_softmax": lambda: a._log_softmax(x, 1, False),
        "softmax.int": lambda: a.softmax.int(x, 1),
        "_softmax_backward_data":
            lambda: a._softmax_backward_data(y, a._softmax(x, 1, False), 1, L.float32),
        "_log_softmax_backward_data":
            lambda: a._log_softmax_backward_data(y, a._log_softmax(x, 1, False), 1, L.float32),
        "native_layer_norm": lambda: a.native_layer_norm(x, [3], L.ones(3), L.zeros(3), 1e-05),
        "layer_norm": lambda: a.layer_norm(x, [3]),
        "native_group_norm": lambda: a.native_group_norm(img, None, None, 1, 2, 25, 2, 1e-05),
        "group_norm": lambda: a.group_norm(img, 2),
        "native_batch_norm eval":
            lambda: a.native_batch_norm(img, None, None, z2, o2, False, 0.1, 1e-05)[0],
        "native_batch_norm train":
            lambda: a.native_batch_norm(img, o2, z2, z2.clone(), o2.clone(), True, 0.1, 1e-05),
        "_native_batch_norm_legit_no_training":
            lambda: a._native_batch_norm_legit_no_training(img, None, None, z2, o2, 0.1, 1e-05)[0],
        "batch_norm":
            lambda: a.batch_norm(img, None, None, z2, o2, False, 0.1, 1e-05, False),
        "convolution":
            lambda: a.convolution(img, k, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
        "convolution.default stride":
            lambda: a.convolution.default(img, k, L.ones(3), [2, 2], [0, 0], [1, 1], False, [0, 0],
                                          1),
        "convolution T":
            lambda: a.convolution(img, k.transpose(0, 1), None, [1, 1], [0, 0], [1, 1], True,
                                  [0, 0], 1),
        "conv2d": lambda: a.conv2d(img, k, None, [1, 1], [1, 1]),
        "expand": lambda: a.expand(b, [2, 4]),
        "expand.default": lambda: a.expand.default(b, [3, -1]),
        "clone": lambda: a.clone(x),
        "detach": lambda: a.detach(x),
        "alias": lambda: a.alias(x),
        "empty_like": lambda: a.empty_like(x).shape,
        "new_empty": lambda: a.new_empty(x, [4]).shape,
        "new_zeros": lambda: a.new_zeros(x, [2, 2]),
        "new_ones": lambda: a.new_ones.default(x, [2], dtype=L.int64),
        "new_full": lambda: a.new_full(x, [2], 3.0),
        "native_dropout eval": lambda: a.native_dropout(x, 0.5, False),
        "native_dropout p0": lambda: a.native_dropout(x, 0.0, True),
        "embedding": lambda: a.embedding(e, L.tensor([1, 2, 4])),
        "embedding.default": lambda: a.embedding.default(e, L.tensor([[0, 1]]), 0),
        "relu": lambda: a.relu(x),
        "relu_": lambda: a.relu_(x.clone()),
        "gelu": lambda: a.gelu(x),
        "gelu tanh": lambda: a.gelu.default(x, approximate='tanh'),
        "silu": lambda: a.silu(x),
        "sigmoid": lambda: a.sigmoid(x),
        "tanh": lambda: a.tanh(x),
        "threshold_backward": lambda: a.threshold_backward(y, x, 0.0),
        "gelu_backward": lambda: a.gelu_backward(y, x),
        "gelu_backward tanh": lambda: a.gelu_backward(y, x, approximate='tanh'),
        "silu_backward": lambda: a.silu_backward(y, x),
        "sigmoid_backward": lambda: a.sigmoid_backward(y, a.sigmoid(x)),
        "tanh_backward": lambda: a.tanh_backward(y, a.tanh(x)),
        "native_dropout_backward": lambda: a.native_dropout_backward(y, x > 0, 2.0),
        "slice.Tensor": lambda: a.slice.Tensor(x, 1, 0, 2),
        "slice big end": lambda: a.slice.Tensor(x, 1, 1, 9223372036854775807),
        "slice step": lambda: a.slice(x, -1, 0, 3, 2),
        "slice default": lambda: a.slice(x),
        "select.int": lambda: a.select.int(x, 1, -1),
        "index.Tensor": lambda: a.index.Tensor(x, [L.tensor([1, 0])]),
        "index None": lambda: a.index(x, [None, L.tensor([2, 0])]),
        "split.Tensor": lambda: a.split.Tensor(x, 2, 1),
        "split_with_sizes": lambda: a.split_with_sizes(x, [1, 2], 1),
        "split sizes": lambda: a.split(x, [1, 2], 1),
        "unbind": lambda: a.unbind(x, 1),
        "chunk": lambda: a.chunk(x, 3, 1),
        "permute": lambda: a.permute(q, [0, 2, 1, 3]),
        "transpose.int": lambda: a.transpose.int(x, 0, 1),
        "unsqueeze": lambda: a.unsqueeze(x, 0),
        "squeeze.dim": lambda: a.squeeze.dim(x[None], 0),
        "squeeze": lambda: a.squeeze(x[None]),
        "squeeze.dims": lambda: a.squeeze.dims(x[None, :, None], [0, 2]),
        "zeros": lambda: a.zeros([2, 3]),
        "zeros dtype": lambda: a.zeros.default([2], dtype=L.int32),
        "ones": lambda: a.ones([2], device='cpu', pin_memory=False),
        "full": lambda: a.full([2], 1.5),
        "empty.memory_format": lambda: a.empty.memory_format([2, 3]).shape,
        "arange": lambda: a.arange(5),
        "arange.start_step": lambda: a.arange.start_step(0, 5, 2),
        "arange.start": lambda: a.arange.start(1, 4, dtype=L.float32),
        "scalar_tensor": lambda: a.scalar_tensor(2),
        "full_like": lambda: a.full_like(x, 7),
        "zeros_like": lambda: a.zeros_like(x),
        "ones_like": lambda: a.ones_like(x, dtype=L.int64),
        "where.self": lambda: a.where.self(x > 0, x, y),
        "where.ScalarOther": lambda: a.where(x > 0, x, 0.0),
        "masked_fill.Scalar": lambda: a.masked_fill.Scalar(x, x > 0, 1.0),
        "masked_fill.Tensor": lambda: a.masked_fill(x, x > 0, L.tensor(2.0)),
        "gt.Scalar": lambda: a.gt.Scalar(x, 0),
        "gt": lambda: a.gt(x, y),
        "eq": lambda: a.eq(x, x),
        "ne.Scalar": lambda: a.ne(x, 1),
        "lt": lambda: a.lt.Tensor(x, y),
        "logical_not": lambda: a.logical_not(x > 0),
        "pow.Tensor_Scalar": lambda: a.pow.Tensor_Scalar(x, 2),
        "pow.Scalar": lambda: a.pow(2, x),
        "pow TT": lambda: a.pow(x.abs(), y),
        "exp": lambda: a.exp(x),
        "log": lambda: a.log(x.abs()),
        "sqrt": lambda: a.sqrt(x.abs()),
        "rsqrt": lambda: a.rsqrt.default(x.abs()),
        "neg": lambda: a.neg(x),
        "abs": lambda: a.abs(x),
        "sin": lambda: a.sin(x),
        "erf": lambda: a.erf(x),
        "clamp": lambda: a.clamp(x, -0.5, 0.5),
        "clamp.Tensor": lambda: a.clamp.Tensor(x, y, None),
        "clamp_min": lambda: a.clamp_min(x, 0),
        "minimum": lambda: a.minimum(x, y),
        "maximum": lambda: a.maximum(x, y),
        "copy_": lambda: a.copy_(L.zeros(2, 3), x),
        "copy": lambda: a.copy(L.zeros(2, 3), x),
        "fill_.Scalar": lambda: a.fill_.Scalar(x.clone(), 3),
        "zero_": lambda: a.zero_(x.clone()),
        "_local_scalar_dense": lambda: a._local_scalar_dense(x[0, 0]),
        "sym_size.int": lambda: a.sym_size.int(x, 1),
        "lift_fresh": lambda: a.lift_fresh(x),
        "lift_fresh_copy": lambda: a.lift_fresh_copy(x),
        "gather": lambda: a.gather(x, 1, L.tensor([[0], [2]])),
        "scatter.value": lambda: a.scatter.value(x, 1, L.tensor([[0], [2]]), 9.0),
        "scatter_add": lambda: a.scatter_add(x, 1, L.tensor([[0], [2]]), y),
        "index_select": lambda: a.index_select(x, 1, L.tensor([2, 0])),
        "index_add": lambda: a.index_add(x, 1, L.tensor([2, 0]), y[:, :2]),
        "cumsum": lambda: a.cumsum(x, 1),
        "topk": lambda: a.topk(x, 2),
        "sort": lambda: a.sort(x, 1, True),
        "tril": lambda: a.tril(x),
        "triu": lambda: a.triu.default(x, 1),
        "flip": lambda: a.flip(x, [0, 1]),
        "roll": lambda: a.roll(x, [1], [1]),
        "repeat": lambda: a.repeat(x, [2, 1]),
        "constant_pad_nd": lambda: a.constant_pad_nd(x, [1, 1], 2.0),
        "pad": lambda: a.pad(x, [1, 0]),
        "any": lambda: a.any(x > 0),
        "any.dim": lambda: a.any.dim(x > 0, 1),
        "all.dims": lambda: a.all.dims(x > -5, [0, 1]),
        "logsumexp": lambda: a.logsumexp(x, [1]),
        "norm.Scalar": lambda: a.norm(x),
        "linalg_vector_norm": lambda: a.linalg_vector_norm(x, 2, [1]),
        "mv": lambda: a.mv(w, x[0]),
        "dot": lambda: a.dot(x[0], y[0]),
        "baddbmm": lambda: a.baddbmm(L.ones(2, 3, 3), q[0], q[0].transpose(1, 2)),
        "max_pool2d_with_indices": lambda: a.max_pool2d_with_indices(img, [2, 2]),
        "max_pool2d": lambda: a.max_pool2d(img, [2, 2], [1, 1]),
        "avg_pool2d": lambda: a.avg_pool2d(img, [2, 2]),
        "avg_pool2d stride[]": lambda: a.avg_pool2d.default(img, [2, 2], []),
        "_adaptive_avg_pool2d": lambda: a._adaptive_avg_pool2d(img, [2, 2]),
        "adaptive_avg_pool2d": lambda: a.adaptive_avg_pool2d(img, [1, 1]),
        "adaptive_max_pool2d": lambda: a.adaptive_max_pool2d(img, [2, 2]),
        "upsample_nearest2d.vec": lambda: a.upsample_nearest2d.vec(img, [10, 10], None),
        "upsample_nearest2d": lambda: a.upsample_nearest2d(img, [7, 7]),
        "upsample_bilinear2d.vec": lambda: a.upsample_bilinear2d.vec(img, None, False, [2.0, 2.0]),
        "nll_loss_forward":
            lambda: a.nll_loss_forward(logp, L.tensor([0, 2]), None, 1, -100),
        "nll_loss_forward sum":
            lambda: a.nll_loss_forward(logp, L.tensor([0, 2]), L.tensor([1.0, 2.0, 3.0]), 2, 0),
        "nll_loss": lambda: a.nll_loss(logp, L.tensor([0, 2])),
        "cross_entropy_loss": lambda: a.cross_entropy_loss(x, L.tensor([0, 2]), None, 2, -100, 0.1),
        "mse_loss": lambda: a.mse_loss(x, y),
        "mse_loss none": lambda: a.mse_loss(x, y, 0),
        "l1_loss": lambda: a.l1_loss(x, y, 2),
        "smooth_l1_loss": lambda: a.smooth_l1_loss(x, y, 1, 0.5),
        "huber_loss": lambda: a.huber_loss(x, y),
        "binary_cross_entropy": lambda: a.binary_cross_entropy(a.sigmoid(x), (y > 0).float()),
        "binary_cross_entropy_with_logits":
            lambda: a.binary_cross_entropy_with_logits(x, (y > 0).float(), None, L.ones(3), 2),
        "kl_div": lambda: a.kl_div(x, y, 1, log_target=True),
        "linear": lambda: a.linear(x, w, b),
        "matmul": lambda: a.matmul(x, w.t()),
        "dropout eval": lambda: a.dropout(x, 0.5, False),
        "one_hot": lambda: a.one_hot(L.tensor([0, 2]), 4),
        "__and__": lambda: a.__and__(x > 0, y > 0),
        "bitwise_not": lambda: a.bitwise_not(L.tensor([1, 2])),
        "floor_divide": lambda: a.floor_divide(x, 0.5),
        "remainder": lambda: a.remainder(x, 0.5),
        "leaky_relu": lambda: a.leaky_relu(x, 0.2),
        "hardtanh": lambda: a.hardtanh(x),
        "elu": lambda: a.elu(x, 1.0, 2.0, 1.5),
        "softplus": lambda: a.softplus(x, 2, 10),
        "log_sigmoid": lambda: a.log_sigmoid(x),
        "elu_": lambda: a.elu_(x.clone(), 0.5),
        "elu default": lambda: a.elu(x),
        "_scaled_dot_product_flash_attention_for_cpu":
            lambda: a._scaled_dot_product_flash_attention_for_cpu(q, q, q),
        "_sdpa_flash causal":
            lambda: a._scaled_dot_product_flash_attention_for_cpu.default(q, q, q, 0.0, True),
        "as_strided": lambda: a.as_strided(x, [2, 2], [1, 2]),
        "diagonal": lambda: a.diagonal(x),
        "linalg_inv": lambda: a.linalg_inv(L.eye(3) * 2),
        "special_erfcx": lambda: a.special_erfcx(x),
        "fft_rfft": lambda: a.fft_rfft(x),
        "bernoulli p": lambda: a.bernoulli(L.zeros(3), 0.0),
        "nonzero": lambda: a.nonzero(x > 0),
        "masked_select": lambda: a.masked_select(x, x > 0),
        "clamp_max": lambda: a.clamp_max(x, 0),
        "exp_": lambda: a.exp_(x.clone()),
        "mul_": lambda: a.mul_.Tensor(x.clone(), 2),
        "div_": lambda: a.div_(x.clone(), 2),
        "sum.IntList_out": lambda: a.sum.IntList_out(x, [0], out=L.empty(3)),
        "unfold": lambda: a.unfold(x, 1, 2, 1),
        "narrow": lambda: a.narrow(x, 1, 1, 2),
        "flatten.using_ints": lambda: a.flatten.using_ints(q, 1, 2),
        "unflatten": lambda: a.unflatten(x, 1, [3, 1]),
        "expand_as": lambda: a.expand_as(b, L.ones(2, 4)),
        "std.correction": lambda: a.std.correction(x, [1], correction=1, keepdim=True),
        "var_mean": lambda: a.var_mean.correction(x, [1], correction=0),
        "prod": lambda: a.prod(x),
        "prod.dim_int": lambda: a.prod.dim_int(x, 1),
        "min.dim": lambda: a.min.dim(x, 0),
        "sign": lambda: a.sign(x),
        "round": lambda: a.round(x),
        "round.decimals": lambda: a.round.decimals(x, decimals=1),
        "fmod": lambda: a.fmod(x, 0.3),
        "atan2": lambda: a.atan2(x, y),
        "lerp": lambda: a.lerp(x, y, 0.3),
        "addcmul": lambda: a.addcmul(x, x, y, value=0.5),
        "isnan": lambda: a.isnan(x),
        "isinf": lambda: a.isinf(x),
        "native_layer_norm_no_affine":
            lambda: a.native_layer_norm.default(q, [3, 4], None, None, 1e-05),
        "einsum": lambda: a.einsum('ij,kj->ik', [x, w]),
        "rand_like shape": lambda: a.rand_like(x).shape,
        "randn shape": lambda: a.randn([3, 2]).shape,
        "empty_strided": lambda: a.empty_strided([2, 3], [3, 1]).stride(),
        "new_empty_strided": lambda: a.new_empty_strided(x, [2, 2], [1, 2]).stride(),
        "resize_": lambda: a.resize_(L.zeros(4), [2, 2]).shape,
        "sym_numel": lambda: a.sym_numel(x),
        "cumprod": lambda: a.cumprod(x, 0),
        "sub alpha": lambda: a.sub.Tensor(x, y, alpha=3),
        "rsub.Tensor": lambda: a.rsub.Tensor(x, y),
        "hardswish": lambda: a.hardswish(x),
        "mish": lambda: a.mish(x),
        "reciprocal": lambda: a.reciprocal(x),
        "logical_and": lambda: a.logical_and(x > 0, y > 0),
        "bitwise_and": lambda: a.bitwise_and(L.tensor([3]), L.tensor([5])),
        "var_none": lambda: a.var.correction(x),
        "mean dtype": lambda: a.mean.dim(x, [0], True, dtype=L.float64),
    }

_CALL_NAMES = sorted(_calls(ptcore))


def _facts(v):
    if isinstance(v, (torch.Tensor, ptcore.Tensor)):
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape), np.asarray(v.detach().numpy()))
    if isinstance(v, (tuple, list)):
        return [_facts(a) for a in v]
    if isinstance(v, (torch.Size, ptcore.Size)):
        return tuple(v)
    return v


def _assert_same(p, t):
    if isinstance(t, list):
        assert isinstance(p, list) and len(p) == len(t)
        for a, b in zip(p, t):
            _assert_same(a, b)
    elif isinstance(t, tuple) and t and t[0] == "T":
        assert isinstance(p, tuple) and p[:3] == t[:3]
        np.testing.assert_allclose(p[3], t[3], rtol=1e-4, atol=1e-5)
    else:
        assert p == t


@pytest.mark.parametrize("name", _CALL_NAMES)
def test_aten_call_matches_torch(name):
    t = _facts(_calls(torch)[name]())
    p = _facts(_calls(ptcore)[name]())
    _assert_same(p, t)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_takes_its_random_samples(nd):
    """aten's fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples)
    pools at the given samples and returns (output, indices); the samples were passed
    as nn.functional's ``output_ratio`` and ignored (fresh random ones drawn)."""
    x = torch.arange(2. * 3 * 5 ** nd).reshape((2, 3) + (5,) * nd).sin()
    rs = torch.tensor([[[0.1, 0.9, 0.5][:nd], [0.7, 0.2, 0.4][:nd], [0.3, 0.3, 0.8][:nd]],
                       [[0.6, 0.0, 0.2][:nd], [0.95, 0.5, 0.1][:nd], [0.4, 0.8, 0.6][:nd]]])
    args = ([2] * nd, [3] * nd)
    want = getattr(torch.ops.aten, f"fractional_max_pool{nd}d").default(x, *args, rs)
    got = getattr(ptcore.ops.aten, f"fractional_max_pool{nd}d").default(
        ptcore.tensor(x.tolist()), *args, ptcore.tensor(rs.tolist()))
    assert len(got) == 2
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    assert got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.ops.aten.block_diag.default([a, b[:1]]),
    lambda m, a, b: m.ops.aten.cartesian_prod.default([a[0], b[1]]),
    lambda m, a, b: m.ops.aten.tensordot.default(a, b, [1], [0]),
    lambda m, a, b: m.ops.aten.tensordot.default(a, b[:2], [0, 1], [0, 1]),
    lambda m, a, b: m.ops.aten.tensordot.out(a, b, [1], [0], out=m.empty(0)),
])
def test_list_arguments_bind_as_torch(call):
    """aten's block_diag/cartesian_prod take a Tensor[] (ptcore's functions take the
    tensors as arguments: the list was passed as one tensor) and tensordot two dims
    lists (ptcore's takes one pair: ``dims_other`` was passed as ``out``)."""
    x = torch.arange(6.).reshape(2, 3).cos()
    y = torch.arange(9.).reshape(3, 3).sin()
    want = call(torch, x, y)
    got = call(ptcore, ptcore.tensor(x.tolist()), ptcore.tensor(y.tolist()))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# the handles
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("op,ov", [("add", "Tensor"), ("mm", "default"), ("sum", "dim_IntList"),
                                   ("index_put_", "default"), ("_to_copy", "default"),
                                   ("native_layer_norm", "default"), ("view", "dtype"),
                                   ("empty", "memory_format"), ("add", "out")])
def test_handles_print_as_torch(op, ov):
    def facts(lib):
        p = getattr(lib.ops.aten, op)
        o = getattr(p, ov)
        return (type(p).__name__, type(o).__name__, str(p), repr(p), p.__name__,
                p._qualified_op_name, str(o), repr(o), o.name(), o.__name__, o._overloadname,
                o.namespace, str(o._schema), o.overloadpacket is p, o.op is not None,
                getattr(p, ov) is o, getattr(lib.ops.aten, op) is p)
    assert facts(ptcore) == facts(torch)


@pytest.mark.parametrize("lib", [torch, ptcore], ids=["torch", "ptcore"])
def test_unknown_names_raise_attributeerror(lib):
    with pytest.raises(AttributeError, match="not_an_aten_op"):
        lib.ops.aten.not_an_aten_op
    with pytest.raises(AttributeError, match="no overload name 'nope'"):
        lib.ops.aten.add.nope
    assert not hasattr(lib.ops.aten, "not_an_aten_op")
    assert copy.deepcopy(lib.ops.aten.add.Tensor) is lib.ops.aten.add.Tensor


def test_handles_pickle_to_themselves():
    # an FX graph or a recorded trace that holds ops can be pickled
    a = ptcore.ops.aten
    assert pickle.loads(pickle.dumps(a.add.Tensor)) is a.add.Tensor
    assert pickle.loads(pickle.dumps(a.add)) is a.add


@pytest.mark.parametrize("lib", [torch, ptcore], ids=["torch", "ptcore"])
def test_bad_arguments_raise_runtimeerror(lib):
    a = lib.ops.aten
    with pytest.raises(RuntimeError, match="failed to match any schema"):
        a.add("x")
    with pytest.raises(RuntimeError, match="missing value for argument 'other'"):
        a.add.Tensor(lib.ones(1))
    with pytest.raises(RuntimeError, match="Expected a value of type 'number'"):
        a.add.Scalar(lib.ones(1), lib.ones(1))


# ---------------------------------------------------------------------------
# dispatch modes: ``func`` is the aten overload
# ---------------------------------------------------------------------------

def _record(base, fn):
    seen = []

    class Record(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            seen.append((func, args, kwargs, out))
            return out
    with Record():
        fn()
    return seen


@pytest.mark.parametrize("T,Base", LIBS)
def test_mode_func_is_the_aten_overload(T, Base):
    a = T.ops.aten
    x = T.ones(2, 2)
    seen = [f for f, *_ in _record(Base, lambda: (T.mm(x, x), x + x, x * 2, x.sum(), x.sum(0)))]
    assert seen == [a.mm.default, a.add.Tensor, a.mul.Tensor, a.sum.default,
                    a.sum.dim_IntList]
    mm, add = seen[0], seen[1]
    assert mm is a.mm.default and add is a.add.Tensor
    assert add in {a.add.Tensor, a.mul.Tensor} and mm not in {a.add.Tensor}
    assert add.overloadpacket is a.add and add.overloadpacket == a.add
    assert add.overloadpacket in {a.add: 1}
    assert seen[3].overloadpacket is seen[4].overloadpacket is a.sum


def _programs(T):
    F = T.nn.functional
    x = T.tensor(X)
    y = T.tensor(Y)
    b = T.tensor(B)
    return {
        "add": lambda: x + y, "add number": lambda: x + 2, "radd": lambda: 2 + x,
        "add alpha": lambda: T.add(x, y, alpha=2), "add_": lambda: x.clone().add_(y),
        "mul": lambda: x * y, "sub": lambda: x - 1, "div": lambda: x / 2,
        "sum": lambda: x.sum(), "sum dim": lambda: x.sum(0), "sum dims": lambda: x.sum((0, 1)),
        "mean": lambda: x.mean(), "mean dim": lambda: x.mean(1, keepdim=True),
        "max": lambda: x.max(), "max dim": lambda: x.max(1), "var": lambda: x.var(0),
        "mm": lambda: T.mm(x, x.t()), "addmm": lambda: T.addmm(x[:, :2], x, x.t()),
        "relu": lambda: F.relu(x), "gelu": lambda: F.gelu(x), "silu": lambda: F.silu(x),
        "view": lambda: x.view(3, 2), "view list": lambda: x.view([6]), "t": lambda: x.t(),
        "transpose": lambda: x.transpose(0, 1), "permute": lambda: x.permute(1, 0),
        "cat": lambda: T.cat([x, y], 1), "stack": lambda: T.stack([x, y]),
        "clone": lambda: x.clone(), "detach": lambda: x.detach(),
        "expand": lambda: b.expand(2, 4), "unsqueeze": lambda: x.unsqueeze(0),
        "zeros": lambda: T.zeros(2), "ones_like": lambda: T.ones_like(x),
        "empty": lambda: T.empty(2).shape, "full": lambda: T.full((2,), 1.0),
        "arange": lambda: T.arange(3), "gt": lambda: x > 0, "eq": lambda: x == y,
        "where": lambda: T.where(x > 0, x, y), "pow": lambda: x ** 2, "exp": lambda: x.exp(),
        "masked_fill": lambda: x.masked_fill(x > 0, 0.0), "split": lambda: x.split(1),
        "copy_": lambda: x.clone().copy_(y), "zero_": lambda: x.clone().zero_(),
        "fill_": lambda: x.clone().fill_(1), "argmax": lambda: x.argmax(-1),
        "topk": lambda: x.topk(2), "clamp": lambda: x.clamp(0, 1), "select": lambda: x.select(0, 1),
        "new_zeros": lambda: x.new_zeros(2), "triu": lambda: x.triu(), "neg": lambda: -x,
        "var unbiased": lambda: (x.var(unbiased=False), x.std(1, False, True), x.var(False),
                                 T.var_mean(x, 0), x.var(), x.var(keepdim=True)),
        "index": lambda: (x[0], x[:, 0], x[-5:, 1], x[0:2], x[1:, None, ::2], x[...], x[:, :],
                          x[None, ..., -1], x[:]),
        "factory device": lambda: (T.zeros(2, device="cpu"), T.zeros_like(x, device="cpu"),
                                   T.empty_like(x), x.new_ones(2), T.rand(2), T.eye(2)),
        "squeeze": lambda: x[None].squeeze(0) if T is torch else x.unsqueeze(0).squeeze(0),
    }


@pytest.mark.parametrize("name", sorted(_programs(torch)))
def test_mode_sees_torchs_overloads(name):
    """The ops a mode sees for a program whose ptcore ops are torch's kernels."""
    def arg(T, a):
        if isinstance(a, (list, tuple)):
            return [arg(T, b) for b in a]
        return "T" if isinstance(a, T.Tensor) else str(a).replace("torch", "ptcore")

    def run(T, Base):
        # (torch's mode also sees a detach of a factory's result: not an op of the program)
        rec = [r for r in _record(Base, _programs(T)[name])
               if name == "detach" or str(r[0]) != "aten.detach.default"]
        return [(str(f), arg(T, args), {k: arg(T, v) for k, v in kw.items()})
                for f, args, kw, _ in rec]
    assert run(ptcore, pd.TorchDispatchMode) == run(torch, td.TorchDispatchMode)


def test_mode_sees_ptcore_level_ops_by_their_aten_names():
    """ptcore's kernels are its public ops: a mode sees linear, softmax, layer_norm
    ... as the aten ops of those names (torch shows their decompositions)."""
    F = ptcore.nn.functional
    a = ptcore.ops.aten
    x = ptcore.ones(2, 3)
    w = ptcore.ones(4, 3)
    seen = [f for f, *_ in _record(pd.TorchDispatchMode, lambda: (
        F.linear(x, w), F.softmax(x, dim=-1), F.layer_norm(x, (3,)), x.reshape(6),
        F.dropout(x, 0.5, training=False), x.double(), x[0]))]
    assert seen[:5] == [a.linear.default, a.softmax.int, a.layer_norm.default,
                        a.reshape.default, a.dropout.default]
    # torch has no aten op of double: a packet of its own, not in the namespace;
    # x[0] is torch's select (indexing is select / slice / unsqueeze / alias)
    assert [str(f) for f in seen[5:]] == ["aten.double.default", "aten.select.int"]
    assert seen[5] not in {getattr(a, n, None) for n in ("double", "_to_copy")}


def test_replaying_recorded_calls_gives_the_same_results():
    """A mode that records (func, args, kwargs) can replay them later (outside it)."""
    F = ptcore.nn.functional
    x = ptcore.tensor(X)
    w = ptcore.tensor(W)
    rec = _record(pd.TorchDispatchMode, lambda: (
        F.softmax(F.linear(x, w), dim=-1), x.view(3, 2), x.sum(1), x + 2, F.relu(x, inplace=False),
        F.dropout(x, 0.5, training=False), x[0], x.double()))
    assert len(rec) >= 8
    for func, args, kwargs, out in rec:
        again = func(*args, **kwargs)
        np.testing.assert_allclose(again.numpy(), out.numpy(), rtol=1e-6, err_msg=str(func))


@pytest.mark.parametrize("T,Base", LIBS)
def test_calling_an_aten_op_passes_the_dispatch_point(T, Base):
    a = T.ops.aten
    x = T.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    rec = _record(Base, lambda: a.mm.default(x, x))
    assert [f for f, *_ in rec] == [a.mm.default]
    y = a._softmax(a.mul.Tensor(x, 3.0), 1, False)
    z = a.sum.dim_IntList(a.relu(y * y), [0, 1])
    z.backward()
    assert x.grad is not None and y.grad_fn is not None


def test_aten_autograd_matches_torch():
    def go(T):
        a = T.ops.aten
        x = T.tensor(X, requires_grad=True)
        w = T.tensor(W, requires_grad=True)
        out, mean, rstd = a.native_layer_norm(a.addmm(T.zeros(4), x, a.t(w)), [4], None, None,
                                              1e-5)
        loss = a.sum(a._log_softmax(out, 1, False) * a.view(T.arange(8.0), [2, 4]))
        loss.backward()
        return loss.item(), x.grad.numpy(), w.grad.numpy()
    lp, gxp, gwp = go(ptcore)
    lt, gxt, gwt = go(torch)
    np.testing.assert_allclose(lp, lt, rtol=1e-5)
    np.testing.assert_allclose(gxp, gxt, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gwp, gwt, rtol=1e-4, atol=1e-5)


_PACKET_CALLS = {
    "sum": lambda a, t: a.sum(t), "sum list": lambda a, t: a.sum(t, [0]),
    "sum int": lambda a, t: a.sum(t, 0), "sum dtype": lambda a, t: a.sum(t, dtype=t.dtype),
    "pow ts": lambda a, t: a.pow(t, 2), "pow st": lambda a, t: a.pow(2, t),
    "gt scalar": lambda a, t: a.gt(t, 0), "gt tensor": lambda a, t: a.gt(t, t),
    "view": lambda a, t: a.view(t, [3, 2]), "max": lambda a, t: a.max(t),
    "max dim": lambda a, t: a.max(t, 1), "mean": lambda a, t: a.mean(t, [1]),
    "squeeze": lambda a, t: a.squeeze(t), "squeeze dim": lambda a, t: a.squeeze(t, 0),
    "squeeze dims": lambda a, t: a.squeeze(t, [0]), "split": lambda a, t: a.split(t, 1),
    "select": lambda a, t: a.select(t, 0, 1), "transpose": lambda a, t: a.transpose(t, 0, 1),
    "clamp": lambda a, t: a.clamp(t, 0, 1), "cat": lambda a, t: a.cat([t, t], 1),
    "eq": lambda a, t: a.eq(t, 1), "expand": lambda a, t: a.expand(t, [2, 2, 3]),
    "arange": lambda a, t: a.arange(0, 5, 2), "bernoulli": lambda a, t: a.bernoulli(t * 0, 0.0),
}


@pytest.mark.parametrize("name", sorted(_PACKET_CALLS))
def test_packet_call_picks_the_overload_torch_picks(name):
    def run(T, Base):
        t = T.tensor(X)
        return [str(f) for f, *_ in _record(Base, lambda: _PACKET_CALLS[name](T.ops.aten, t))]
    assert run(ptcore, pd.TorchDispatchMode) == run(torch, td.TorchDispatchMode)


def test_kernel_of_a_mode_func_without_ptcore_library_loaded():
    # the dispatch layer's registry alone: the overload knows the kernel it ran
    f = op_overload.packet("aten", "neg").default
    x = ptcore.ones(2)
    rec = _record(pd.TorchDispatchMode, lambda: ptcore.neg(x))
    assert rec[0][0] is f
