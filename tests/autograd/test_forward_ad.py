"""Forward-mode AD (ptcore.autograd.forward_ad): each op's tangent against
central finite differences and against torch.autograd.forward_ad on the same
float64 inputs."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

RNG = np.random.default_rng(0)


def _pos(shape):
    return RNG.uniform(0.5, 2.0, shape)


def _unit(shape):
    return RNG.uniform(-0.9, 0.9, shape)


def _any(shape):
    return RNG.standard_normal(shape)


def _big(shape):
    return RNG.uniform(1.2, 3.0, shape)


# (id, f(module, *inputs), input generators with shapes)
A, B, C = (3, 4), (4, 5), (2, 3, 4)
F = "nn.functional"


def _f(m):
    return m.nn.functional


OPS = [
    # unary pointwise
    ("exp", lambda m, x: m.exp(x), [(_any, A)]),
    ("exp2", lambda m, x: m.exp2(x), [(_any, A)]),
    ("expm1", lambda m, x: m.expm1(x), [(_any, A)]),
    ("log", lambda m, x: m.log(x), [(_pos, A)]),
    ("log2", lambda m, x: m.log2(x), [(_pos, A)]),
    ("log10", lambda m, x: m.log10(x), [(_pos, A)]),
    ("log1p", lambda m, x: m.log1p(x), [(_pos, A)]),
    ("sqrt", lambda m, x: m.sqrt(x), [(_pos, A)]),
    ("rsqrt", lambda m, x: m.rsqrt(x), [(_pos, A)]),
    ("reciprocal", lambda m, x: m.reciprocal(x), [(_pos, A)]),
    ("square", lambda m, x: m.square(x), [(_any, A)]),
    ("sin", lambda m, x: m.sin(x), [(_any, A)]),
    ("cos", lambda m, x: m.cos(x), [(_any, A)]),
    ("tan", lambda m, x: m.tan(x), [(_unit, A)]),
    ("sinh", lambda m, x: m.sinh(x), [(_any, A)]),
    ("cosh", lambda m, x: m.cosh(x), [(_any, A)]),
    ("tanh", lambda m, x: m.tanh(x), [(_any, A)]),
    ("asin", lambda m, x: m.asin(x), [(_unit, A)]),
    ("acos", lambda m, x: m.acos(x), [(_unit, A)]),
    ("atan", lambda m, x: m.atan(x), [(_any, A)]),
    ("asinh", lambda m, x: m.asinh(x), [(_any, A)]),
    ("acosh", lambda m, x: m.acosh(x), [(_big, A)]),
    ("atanh", lambda m, x: m.atanh(x), [(_unit, A)]),
    ("sigmoid", lambda m, x: m.sigmoid(x), [(_any, A)]),
    ("erf", lambda m, x: m.erf(x), [(_any, A)]),
    ("erfc", lambda m, x: m.erfc(x), [(_any, A)]),
    ("erfinv", lambda m, x: m.erfinv(x), [(_unit, A)]),
    ("lgamma", lambda m, x: m.lgamma(x), [(_pos, A)]),
    ("digamma", lambda m, x: m.digamma(x), [(_pos, A)]),
    ("abs", lambda m, x: m.abs(x), [(_any, A)]),
    ("neg", lambda m, x: -x, [(_any, A)]),
    ("floor", lambda m, x: m.floor(x), [(_any, A)]),
    ("sign", lambda m, x: m.sign(x), [(_any, A)]),
    ("frac", lambda m, x: m.frac(x), [(_any, A)]),
    ("clamp", lambda m, x: m.clamp(x, -0.5, 0.5), [(_any, A)]),
    ("logit", lambda m, x: m.logit(x), [(lambda s: RNG.uniform(0.1, 0.9, s), A)]),
    ("sinc", lambda m, x: m.sinc(x), [(_any, A)]),
    ("nan_to_num", lambda m, x: m.nan_to_num(x), [(_any, A)]),
    ("i0", lambda m, x: m.i0(x), [(_any, A)]),
    # activations
    ("relu", lambda m, x: m.relu(x), [(_any, A)]),
    ("F.relu", lambda m, x: _f(m).relu(x), [(_any, A)]),
    ("silu", lambda m, x: _f(m).silu(x), [(_any, A)]),
    ("gelu", lambda m, x: _f(m).gelu(x), [(_any, A)]),
    ("gelu_tanh", lambda m, x: _f(m).gelu(x, approximate="tanh"), [(_any, A)]),
    ("elu", lambda m, x: _f(m).elu(x), [(_any, A)]),
    ("selu", lambda m, x: _f(m).selu(x), [(_any, A)]),
    ("celu", lambda m, x: _f(m).celu(x, 0.7), [(_any, A)]),
    ("leaky_relu", lambda m, x: _f(m).leaky_relu(x, 0.1), [(_any, A)]),
    ("softplus", lambda m, x: _f(m).softplus(x, beta=2.0), [(_any, A)]),
    ("mish", lambda m, x: _f(m).mish(x), [(_any, A)]),
    ("hardtanh", lambda m, x: _f(m).hardtanh(x, -0.5, 0.5), [(_any, A)]),
    ("hardswish", lambda m, x: _f(m).hardswish(x), [(_any, A)]),
    ("hardsigmoid", lambda m, x: _f(m).hardsigmoid(x), [(_any, A)]),
    ("logsigmoid", lambda m, x: _f(m).logsigmoid(x), [(_any, A)]),
    ("softsign", lambda m, x: _f(m).softsign(x), [(_any, A)]),
    ("tanhshrink", lambda m, x: _f(m).tanhshrink(x), [(_any, A)]),
    ("F.sigmoid", lambda m, x: _f(m).sigmoid(x), [(_any, A)]),
    # binary pointwise (with broadcasting)
    ("add", lambda m, x, y: m.add(x, y, alpha=2.5), [(_any, A), (_any, (4,))]),
    ("sub", lambda m, x, y: x - y, [(_any, A), (_any, A)]),
    ("rsub", lambda m, x: 3.0 - x, [(_any, A)]),
    ("mul", lambda m, x, y: x * y, [(_any, A), (_any, (3, 1))]),
    ("div", lambda m, x, y: x / y, [(_any, A), (_pos, A)]),
    ("rdiv", lambda m, x: 2.0 / x, [(_pos, A)]),
    ("pow_scalar", lambda m, x: x ** 2.5, [(_pos, A)]),
    ("pow_tensor", lambda m, x, y: m.pow(x, y), [(_pos, A), (_any, A)]),
    ("rpow", lambda m, x: 2.0 ** x, [(_any, A)]),
    ("atan2", lambda m, x, y: m.atan2(x, y), [(_any, A), (_pos, A)]),
    ("hypot", lambda m, x, y: m.hypot(x, y), [(_pos, A), (_pos, A)]),
    ("maximum", lambda m, x, y: m.maximum(x, y), [(_any, A), (_any, A)]),
    ("minimum", lambda m, x, y: m.minimum(x, y), [(_any, A), (_any, A)]),
    ("fmod", lambda m, x: m.fmod(x, 0.7), [(_any, A)]),
    ("remainder", lambda m, x: m.remainder(x, 0.7), [(_any, A)]),
    ("xlogy", lambda m, x, y: m.xlogy(x, y), [(_any, A), (_pos, A)]),
    ("lerp", lambda m, x, y, w: m.lerp(x, y, w), [(_any, A), (_any, A), (_unit, A)]),
    ("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), [(_any, A)] * 3),
    ("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=0.5),
     [(_any, A), (_any, A), (_pos, A)]),
    ("where", lambda m, x, y: m.where(x > 0, x, y), [(_any, A), (_any, A)]),
    ("copysign", lambda m, x, y: m.copysign(x, y), [(_any, A), (_any, A)]),
    # reductions
    ("sum", lambda m, x: x.sum(), [(_any, C)]),
    ("sum_dim", lambda m, x: x.sum((0, 2), keepdim=True), [(_any, C)]),
    ("mean", lambda m, x: x.mean(1), [(_any, C)]),
    ("nansum", lambda m, x: m.nansum(x, 1), [(_any, C)]),
    ("prod", lambda m, x: x.prod(1), [(_pos, C)]),
    ("prod_all", lambda m, x: x.prod(), [(_pos, A)]),
    ("amax", lambda m, x: m.amax(x, 1), [(_any, C)]),
    ("amin", lambda m, x: m.amin(x, (0, 2)), [(_any, C)]),
    ("max_dim", lambda m, x: m.max(x, 1)[0], [(_any, C)]),
    ("min_dim", lambda m, x: m.min(x, 2, keepdim=True).values, [(_any, C)]),
    ("max_all", lambda m, x: m.max(x), [(_any, C)]),
    ("logsumexp", lambda m, x: m.logsumexp(x, 1), [(_any, C)]),
    ("norm", lambda m, x: m.norm(x), [(_any, C)]),
    ("norm_dim", lambda m, x: m.linalg.vector_norm(x, 2, dim=1), [(_any, C)]),
    ("norm_p3", lambda m, x: m.linalg.vector_norm(x, 3, dim=-1), [(_any, C)]),
    ("norm_1", lambda m, x: m.norm(x, p=1, dim=0), [(_any, C)]),
    ("norm_fro_dims", lambda m, x: m.norm(x, dim=(0, 2), keepdim=True), [(_any, C)]),
    ("norm_inf", lambda m, x: m.linalg.vector_norm(x, float("inf"), dim=1), [(_any, C)]),
    ("vector_norm_1", lambda m, x: m.linalg.vector_norm(x, 1, dim=(0, 1), keepdim=True),
     [(_any, C)]),
    ("norm_nuc", lambda m, x: m.norm(x, p="nuc"), [(_any, A)]),
    ("var", lambda m, x: m.var(x, 1), [(_any, C)]),
    ("var_c0", lambda m, x: x.var(dim=(0, 2), correction=0, keepdim=True), [(_any, C)]),
    ("std", lambda m, x: m.std(x), [(_any, C)]),
    ("std_dim", lambda m, x: x.std(-1), [(_any, C)]),
    ("var_mean", lambda m, x: m.var_mean(x, 1)[0] + m.var_mean(x, 1)[1], [(_any, C)]),
    ("std_mean", lambda m, x: m.std_mean(x, 0)[0] * 2 + m.std_mean(x, 0)[1], [(_any, C)]),
    ("cumsum", lambda m, x: m.cumsum(x, 1), [(_any, C)]),
    ("cumprod", lambda m, x: m.cumprod(x, 2), [(_any, C)]),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), [(_any, C)]),
    ("softmax", lambda m, x: m.softmax(x, 1), [(_any, C)]),
    ("log_softmax", lambda m, x: m.log_softmax(x, -1), [(_any, C)]),
    ("F.softmax", lambda m, x: _f(m).softmax(x, dim=0), [(_any, C)]),
    ("F.log_softmax", lambda m, x: _f(m).log_softmax(x, dim=2), [(_any, C)]),
    ("trace", lambda m, x: m.trace(x), [(_any, (4, 4))]),
    # views and shape ops
    ("view", lambda m, x: x.view(4, 3) * 2, [(_any, A)]),
    ("reshape", lambda m, x: x.reshape(-1), [(_any, C)]),
    ("transpose", lambda m, x: x.transpose(0, 2), [(_any, C)]),
    ("permute", lambda m, x: x.permute(2, 0, 1), [(_any, C)]),
    ("t", lambda m, x: x.t(), [(_any, A)]),
    ("mT", lambda m, x: x.mT, [(_any, C)]),
    ("expand", lambda m, x: x.expand(2, 3, 4), [(_any, (3, 1))]),
    ("unsqueeze", lambda m, x: x.unsqueeze(1), [(_any, A)]),
    ("squeeze", lambda m, x: x.squeeze(1), [(_any, (3, 1, 2))]),
    ("flatten", lambda m, x: x.flatten(1), [(_any, C)]),
    ("narrow", lambda m, x: x.narrow(1, 1, 2), [(_any, A)]),
    ("select", lambda m, x: x.select(0, 1), [(_any, A)]),
    ("getitem", lambda m, x: x[1:, ::2], [(_any, A)]),
    ("getitem_adv", lambda m, x: x[[0, 2, 2]], [(_any, A)]),
    ("split", lambda m, x: x.split(2, 1)[1], [(_any, A)]),
    ("chunk", lambda m, x: x.chunk(2, 0)[0], [(_any, (4, 3))]),
    ("unbind", lambda m, x: x.unbind(1)[2], [(_any, A)]),
    ("diagonal", lambda m, x: x.diagonal(0, 1, 2), [(_any, (2, 3, 3))]),
    ("movedim", lambda m, x: x.movedim(0, -1), [(_any, C)]),
    ("unfold", lambda m, x: x.unfold(1, 2, 1), [(_any, A)]),
    ("contiguous", lambda m, x: x.t().contiguous(), [(_any, A)]),
    ("clone", lambda m, x: x.clone(), [(_any, A)]),
    ("flip", lambda m, x: x.flip(0), [(_any, A)]),
    ("roll", lambda m, x: x.roll(1, 1), [(_any, A)]),
    ("rot90", lambda m, x: m.rot90(x), [(_any, A)]),
    ("repeat", lambda m, x: x.repeat(2, 1), [(_any, A)]),
    ("tile", lambda m, x: m.tile(x, (2,)), [(_any, A)]),
    ("tril", lambda m, x: x.tril(), [(_any, A)]),
    ("triu", lambda m, x: m.triu(x, 1), [(_any, A)]),
    ("diag", lambda m, x: m.diag(x), [(_any, (4,))]),
    ("diag_embed", lambda m, x: m.diag_embed(x), [(_any, A)]),
    ("cat", lambda m, x, y: m.cat([x, y], 0), [(_any, A), (_any, (2, 4))]),
    ("stack", lambda m, x, y: m.stack([x, y], 1), [(_any, A), (_any, A)]),
    ("hstack", lambda m, x, y: m.hstack([x, y]), [(_any, A), (_any, A)]),
    ("index_select", lambda m, x: x.index_select(1, m.tensor([0, 3])), [(_any, A)]),
    ("gather", lambda m, x: x.gather(1, m.tensor([[0, 1], [2, 3], [1, 1]])), [(_any, A)]),
    ("masked_fill", lambda m, x: x.masked_fill(x > 0, 2.0), [(_any, A)]),
    ("scatter", lambda m, x, y: x.scatter(1, m.tensor([[0, 1], [2, 3], [1, 0]]), y),
     [(_any, A), (_any, (3, 2))]),
    ("scatter_add", lambda m, x, y: x.scatter_add(1, m.tensor([[0, 1], [2, 3], [1, 1]]), y),
     [(_any, A), (_any, (3, 2))]),
    ("index_add", lambda m, x, y: x.index_add(0, m.tensor([0, 2]), y),
     [(_any, A), (_any, (2, 4))]),
    ("take_along_dim", lambda m, x: m.take_along_dim(x, m.tensor([[0], [1], [3]]), 1),
     [(_any, A)]),
    ("pad", lambda m, x: _f(m).pad(x, (1, 2)), [(_any, A)]),
    ("pad_reflect", lambda m, x: _f(m).pad(x, (1, 1), mode="reflect"), [(_any, (1, 3, 4))]),
    ("sort", lambda m, x: m.sort(x, 1)[0], [(_any, A)]),
    ("topk", lambda m, x: m.topk(x, 2, 1)[0], [(_any, A)]),
    ("to_float32", lambda m, x: x.to(m.float32).to(m.float64), [(_any, A)], {"fd": False}),
    ("einsum", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [(_any, A), (_any, B)]),
    ("tensordot", lambda m, x, y: m.tensordot(x, y, 1), [(_any, A), (_any, B)]),
    # matmul family
    ("mm", lambda m, x, y: m.mm(x, y), [(_any, A), (_any, B)]),
    ("matmul_b", lambda m, x, y: x @ y, [(_any, C), (_any, B)]),
    ("bmm", lambda m, x, y: m.bmm(x, y), [(_any, C), (_any, (2, 4, 2))]),
    ("mv", lambda m, x, y: m.mv(x, y), [(_any, A), (_any, (4,))]),
    ("dot", lambda m, x, y: m.dot(x, y), [(_any, (4,)), (_any, (4,))]),
    ("outer", lambda m, x, y: m.outer(x, y), [(_any, (3,)), (_any, (4,))]),
    ("addmm", lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2.0),
     [(_any, (5,)), (_any, A), (_any, B)]),
    ("baddbmm", lambda m, b, x, y: m.baddbmm(b, x, y), [(_any, (2, 3, 2)), (_any, C),
                                                         (_any, (2, 4, 2))]),
    ("kron", lambda m, x, y: m.kron(x, y), [(_any, (2, 2)), (_any, (2, 3))]),
    ("cross", lambda m, x, y: m.linalg.cross(x, y), [(_any, (2, 3)), (_any, (2, 3))]),
    ("linear", lambda m, x, w, b: _f(m).linear(x, w, b), [(_any, C), (_any, (5, 4)),
                                                          (_any, (5,))]),
    ("bilinear", lambda m, x, y, w: _f(m).bilinear(x, y, w), [(_any, (2, 3)), (_any, (2, 4)),
                                                              (_any, (5, 3, 4))]),
    # linalg
    ("inv", lambda m, x: m.linalg.inv(x), [(lambda s: _any(s) + 3 * np.eye(3), (3, 3))]),
    ("det", lambda m, x: m.linalg.det(x), [(_any, (3, 3))]),
    ("slogdet", lambda m, x: m.linalg.slogdet(x)[1], [(lambda s: _any(s) + 3 * np.eye(3),
                                                       (3, 3))]),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [(lambda s: _any(s) + 3 * np.eye(3),
                                                      (3, 3)), (_any, (3, 2))]),
    ("cholesky", lambda m, x: m.linalg.cholesky(x @ x.mT + m.eye(3, dtype=x.dtype)),
     [(_any, (3, 3))]),
    ("eigvalsh", lambda m, x: m.linalg.eigvalsh(x + x.mT), [(_any, (3, 3))]),
    ("svdvals", lambda m, x: m.linalg.svdvals(x), [(_any, (3, 4))]),
    ("matrix_norm", lambda m, x: m.linalg.matrix_norm(x), [(_any, (3, 4))]),
    # nn.functional
    ("conv1d", lambda m, x, w, b: _f(m).conv1d(x, w, b, padding=1),
     [(_any, (2, 3, 7)), (_any, (4, 3, 3)), (_any, (4,))]),
    ("conv2d", lambda m, x, w, b: _f(m).conv2d(x, w, b, stride=2, padding=1),
     [(_any, (2, 3, 6, 5)), (_any, (4, 3, 3, 3)), (_any, (4,))]),
    ("conv2d_groups", lambda m, x, w: _f(m).conv2d(x, w, groups=2),
     [(_any, (1, 4, 5, 5)), (_any, (2, 2, 3, 3))]),
    ("conv_transpose2d", lambda m, x, w, b: _f(m).conv_transpose2d(x, w, b, stride=2),
     [(_any, (2, 3, 4, 4)), (_any, (3, 2, 3, 3)), (_any, (2,))]),
    ("layer_norm", lambda m, x, w, b: _f(m).layer_norm(x, (4,), w, b),
     [(_any, C), (_any, (4,)), (_any, (4,))]),
    ("layer_norm_2d", lambda m, x: _f(m).layer_norm(x, (3, 4)), [(_any, C)]),
    ("group_norm", lambda m, x, w, b: _f(m).group_norm(x, 2, w, b),
     [(_any, (2, 4, 3)), (_any, (4,)), (_any, (4,))]),
    ("batch_norm", lambda m, x, w, b: _f(m).batch_norm(x, None, None, w, b, training=True),
     [(_any, (5, 3, 2)), (_any, (3,)), (_any, (3,))]),
    ("max_pool2d", lambda m, x: _f(m).max_pool2d(x, 2), [(_any, (1, 2, 4, 4))]),
    ("avg_pool2d", lambda m, x: _f(m).avg_pool2d(x, 2), [(_any, (1, 2, 4, 4))]),
    ("adaptive_avg_pool2d", lambda m, x: _f(m).adaptive_avg_pool2d(x, 1), [(_any, (1, 2, 4, 4))]),
    ("interpolate", lambda m, x: _f(m).interpolate(x, scale_factor=2, mode="bilinear"),
     [(_any, (1, 2, 3, 3))]),
    ("mse_loss", lambda m, x, y: _f(m).mse_loss(x, y), [(_any, A), (_any, A)]),
    ("cross_entropy", lambda m, x: _f(m).cross_entropy(x, m.tensor([0, 3, 1])), [(_any, A)]),
    ("bce", lambda m, x, y: _f(m).binary_cross_entropy(x, y),
     [(lambda s: RNG.uniform(0.1, 0.9, s), A), (lambda s: RNG.uniform(0.1, 0.9, s), A)]),
    ("bce_logits", lambda m, x, y: _f(m).binary_cross_entropy_with_logits(x, y),
     [(_any, A), (lambda s: RNG.uniform(0.1, 0.9, s), A)]),
    ("smooth_l1", lambda m, x, y: _f(m).smooth_l1_loss(x, y), [(_any, A), (_any, A)]),
    ("kl_div", lambda m, x, y: _f(m).kl_div(x, y, reduction="batchmean"),
     [(_any, A), (lambda s: RNG.uniform(0.1, 0.9, s), A)]),
    ("normalize", lambda m, x: _f(m).normalize(x, dim=1), [(_any, A)]),
    ("cosine_similarity", lambda m, x, y: _f(m).cosine_similarity(x, y), [(_any, A), (_any, A)]),
    ("embedding", lambda m, w: _f(m).embedding(m.tensor([[0, 2], [1, 1]]), w), [(_any, A)]),
    # torch has no forward AD for its fused attention kernel: compare with the math
    ("sdpa", lambda m, q, k, v: _f(m).scaled_dot_product_attention(q, k, v),
     [(_any, (1, 2, 3, 4)), (_any, (1, 2, 5, 4)), (_any, (1, 2, 5, 4))],
     {"torch": lambda m, q, k, v: m.softmax(q @ k.mT / 2.0, -1) @ v}),
    ("fft", lambda m, x: m.fft.rfft(x).abs(), [(_any, (8,))]),
    ("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y), [(_any, A), (_pos, A)]),
    ("special_ndtr", lambda m, x: m.special.ndtr(x), [(_any, A)]),
]
IDS = [o[0] for o in OPS]


def _inputs(spec):
    return [gen(shape) for gen, shape in spec]


def _first(out):
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _pt_jvp(f, xs, ts):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(ptcore.tensor(x), ptcore.tensor(t)) for x, t in zip(xs, ts)]
        out = _first(f(ptcore, *duals))
        p, t = fwAD.unpack_dual(out)
        return p.numpy().copy(), (None if t is None else t.numpy().copy())


def _torch_jvp(f, xs, ts):
    with tfw.dual_level():
        duals = [tfw.make_dual(torch.tensor(x), torch.tensor(t)) for x, t in zip(xs, ts)]
        out = _first(f(torch, *duals))
        p, t = tfw.unpack_dual(out)
        return p.detach().numpy().copy(), (None if t is None else t.detach().numpy().copy())


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_jvp_matches_torch_and_finite_differences(op):
    name, f, spec = op[:3]
    opts = op[3] if len(op) > 3 else {}
    xs = _inputs(spec)
    ts = [RNG.standard_normal(x.shape) for x in xs]
    p, t = _pt_jvp(f, xs, ts)
    tp, tt = _torch_jvp(opts.get("torch", f), xs, ts)
    np.testing.assert_allclose(p, tp, rtol=1e-10, atol=1e-12)
    assert t is not None, f"{name}: no tangent"
    assert t.shape == tp.shape
    np.testing.assert_allclose(t, tt, rtol=1e-7, atol=1e-9)
    if not opts.get("fd", True):
        return
    # central finite differences
    eps = 1e-6
    plus = _first(f(ptcore, *[ptcore.tensor(x + eps * d) for x, d in zip(xs, ts)])).numpy()
    minus = _first(f(ptcore, *[ptcore.tensor(x - eps * d) for x, d in zip(xs, ts)])).numpy()
    fd = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", OPS[:40], ids=IDS[:40])
def test_jvp_single_tangent_among_inputs(op):
    # only the first input is dual: the others are constants
    name, f, spec = op[:3]
    xs = _inputs(spec)
    t0 = RNG.standard_normal(xs[0].shape)
    with fwAD.dual_level():
        args = [fwAD.make_dual(ptcore.tensor(xs[0]), ptcore.tensor(t0))] + \
               [ptcore.tensor(x) for x in xs[1:]]
        t = fwAD.unpack_dual(_first(f(ptcore, *args))).tangent.numpy()
    with tfw.dual_level():
        args = [tfw.make_dual(torch.tensor(xs[0]), torch.tensor(t0))] + \
               [torch.tensor(x) for x in xs[1:]]
        tt = tfw.unpack_dual(_first(f(torch, *args))).tangent.numpy()
    np.testing.assert_allclose(t, tt, rtol=1e-7, atol=1e-9)


def _formula_names():
    from ptcore.autograd._formulas import FORMULAS
    return sorted(n for n in FORMULAS if not n.startswith("_") and "linalg" not in n)


def _call_unary(m, name, x):
    f = getattr(m, name, None)
    if f is None:
        f = getattr(m.special, name, None)
    out = f(x)
    # singular vectors are defined up to sign: compare the singular values
    return out[1] if name == "svd" else out


@pytest.mark.parametrize("name", _formula_names())
def test_every_one_argument_op_with_a_backward_formula_has_a_forward_one(name):
    """Sweep: each op of the backward-formula table that takes one tensor
    (called as ``ptcore.<name>(x)``) gets a tangent equal to torch's."""
    x = RNG.uniform(0.2, 0.8, (2, 3))
    t = RNG.standard_normal((2, 3))
    try:
        with tfw.dual_level():
            ref = _call_unary(torch, name, tfw.make_dual(torch.tensor(x), torch.tensor(t)))
            ref = _first(ref)
            if not isinstance(ref, torch.Tensor) or not ref.dtype.is_floating_point:
                pytest.skip("not a one-tensor differentiable op")
            tt = tfw.unpack_dual(ref).tangent
    except (TypeError, RuntimeError, NotImplementedError, AttributeError) as e:
        pytest.skip(f"torch: {type(e).__name__}")
    with fwAD.dual_level():
        out = _first(_call_unary(ptcore, name, fwAD.make_dual(ptcore.tensor(x),
                                                              ptcore.tensor(t))))
        pt = fwAD.unpack_dual(out).tangent
    if tt is None:
        assert pt is None or not np.any(pt.numpy())
        return
    assert pt is not None, name
    np.testing.assert_allclose(pt.numpy(), tt.numpy(), rtol=1e-7, atol=1e-9)


def test_unbatched_conv_bias_tangent():
    x, w, b = _any((3, 7)), _any((4, 3, 3)), _any((4,))
    ts = [RNG.standard_normal(a.shape) for a in (x, w, b)]
    f = lambda m, x, w, b: _f(m).conv1d(x, w, b)  # noqa: E731
    np.testing.assert_allclose(_pt_jvp(f, [x, w, b], ts)[1], _torch_jvp(f, [x, w, b], ts)[1],
                               rtol=1e-10)


def test_T_property_carries_the_tangent():
    """``x.T`` of a 2-D dual tensor (the property, not ``.t()``): a view of
    the tangent, so jvp/jacfwd through it are right."""
    fw = ptcore.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(ptcore.ones(3, 2), ptcore.arange(6.0).reshape(3, 2))
        t = fw.unpack_dual(d.T).tangent
        assert t is not None and t.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    _, jv = ptcore.func.jvp(lambda a: (a.T @ a).sum(), (ptcore.ones(2, 3),), (ptcore.ones(2, 3),))
    assert float(jv) == 36.0
    assert float(ptcore.func.jacfwd(lambda a: a.T.sum(0))(ptcore.ones(2, 3)).sum()) == 6.0
    x = ptcore.ones(2, 3, requires_grad=True)
    assert x.T.grad_fn.name() == "PermuteBackward0"
