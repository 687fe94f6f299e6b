"""Gradients (and second derivatives) of every differentiable ptcore op
against PyTorch on the same float64 inputs."""
import math

import numpy as np
import pytest

import ptcore
from ag_helpers import arrays, compare

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

S = (3, 4)


def C(name, fn, shapes, domain="any", diff=None, second=True, rtol=1e-7, atol=1e-9):
    return pytest.param(fn, shapes, domain, diff, second, rtol, atol, id=name)


def _idx(m, v):
    return m.tensor(v, dtype=m.int64)


# ---------------------------------------------------------------------------
# elementwise unary
# ---------------------------------------------------------------------------

_UNARY = {
    "exp": "any", "exp2": "any", "expm1": "any", "log": "pos", "log2": "pos", "log10": "pos",
    "log1p": "pos", "sqrt": "pos", "rsqrt": "pos", "sin": "any", "cos": "any", "tan": "unit",
    "asin": "unit", "acos": "unit", "atan": "any", "sinh": "any", "cosh": "any", "tanh": "any",
    "asinh": "any", "acosh": "gt1", "atanh": "unit", "sigmoid": "any", "erf": "any",
    "erfc": "any", "erfinv": "unit", "lgamma": "pos", "digamma": "pos", "reciprocal": "pos",
    "frac": "any", "relu": "any", "abs": "any", "absolute": "any", "deg2rad": "any",
    "rad2deg": "any", "neg": "any", "negative": "any", "square": "any",
    "sign": "any", "floor": "any", "ceil": "any", "round": "any", "trunc": "any", "fix": "any",
    "sgn": "any", "nan_to_num": "any", "logit": "prob", "arcsin": "unit",
    "arccos": "unit", "arctan": "any", "arcsinh": "any", "arccosh": "gt1", "arctanh": "unit",
    "i0": "any", "conj": "any", "conj_physical": "any", "resolve_conj": "any",
    "resolve_neg": "any", "real": "any",
}

UNARY_CASES = []
for _n, _d in _UNARY.items():
    UNARY_CASES.append(C(_n, (lambda n: lambda m, x: getattr(m, n)(x))(_n), [S], _d))
    if _n == "real":
        continue
    # method form on a non-contiguous input
    UNARY_CASES.append(C(_n + "-method-noncontig",
                         (lambda n: lambda m, x: getattr(x.t(), n)())(_n), [(4, 3)], _d,
                         second=False))

# ---------------------------------------------------------------------------
# elementwise binary / ternary
# ---------------------------------------------------------------------------

BINARY_CASES = [
    C("add", lambda m, a, b: m.add(a, b), [S, S]),
    C("add-bcast", lambda m, a, b: a + b, [(3, 1), (1, 4)]),
    C("add-bcast-rank", lambda m, a, b: m.add(a, b, alpha=2.5), [(2, 3, 4), (4,)]),
    C("add-scalar", lambda m, a: a + 2.0, [S]),
    C("radd-scalar", lambda m, a: 2.0 + a, [S]),
    C("add-0d", lambda m, a, b: a + b, [S, ()]),
    C("sub", lambda m, a, b: m.sub(a, b, alpha=-1.5), [S, (4,)]),
    C("subtract", lambda m, a, b: m.subtract(a, b), [S, S]),
    C("rsub-scalar", lambda m, a: 3.0 - a, [S]),
    C("rsub", lambda m, a, b: m.rsub(a, b, alpha=2), [S, S]),
    C("mul", lambda m, a, b: m.mul(a, b), [S, (4,)]),
    C("mul-same", lambda m, a: a * a, [S]),
    C("mul-scalar", lambda m, a: 2.5 * a, [S]),
    C("multiply", lambda m, a, b: m.multiply(a, b), [(3, 1), S]),
    C("div", lambda m, a, b: m.div(a, b), [S, S], ("any", "pos")),
    C("div-bcast", lambda m, a, b: a / b, [S, (3, 1)], ("any", "pos")),
    C("rdiv-scalar", lambda m, a: 2.0 / a, [S], "pos"),
    C("div-scalar", lambda m, a: a / 4.0, [S]),
    C("true_divide", lambda m, a, b: m.true_divide(a, b), [S, S], ("any", "pos")),
    C("divide", lambda m, a, b: m.divide(a, b), [S, S], ("any", "pos")),
    C("div-floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"), [S, S], ("any", "pos")),
    C("div-trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), [S, S], ("any", "pos")),
    C("pow-tensor", lambda m, a, b: m.pow(a, b), [S, S], ("pos", "any")),
    C("pow-scalar-exp", lambda m, a: a ** 3, [S]),
    C("pow-scalar-exp-frac", lambda m, a: a ** 2.5, [S], "pos"),
    C("pow-scalar-exp-0", lambda m, a: m.pow(a, 0), [S]),
    C("pow-scalar-base", lambda m, a: 2.0 ** a, [S]),
    C("pow-bcast", lambda m, a, b: m.pow(a, b), [S, (4,)], ("pos", "any")),
    C("float_power", lambda m, a, b: m.float_power(a, b), [S, S], ("pos", "any")),
    C("atan2", lambda m, a, b: m.atan2(a, b), [S, S]),
    C("arctan2", lambda m, a, b: m.arctan2(a, b), [S, (4,)]),
    C("hypot", lambda m, a, b: m.hypot(a, b), [S, S]),
    C("maximum", lambda m, a, b: m.maximum(a, b), [S, S]),
    C("minimum", lambda m, a, b: m.minimum(a, b), [S, (4,)]),
    C("maximum-ties", lambda m, a: m.maximum(a, a.detach().clone()), [S]),
    C("fmax", lambda m, a, b: m.fmax(a, b), [S, S]),
    C("fmin", lambda m, a, b: m.fmin(a, b), [S, S]),
    C("max-binary", lambda m, a, b: m.max(a, b), [S, S]),
    C("min-binary", lambda m, a, b: m.min(a, b), [S, S]),
    C("fmod", lambda m, a, b: m.fmod(a, b), [S, S], ("any", "pos")),
    C("fmod-scalar", lambda m, a: m.fmod(a, 0.7), [S]),
    C("remainder", lambda m, a, b: m.remainder(a, b), [S, S], ("any", "pos")),
    C("remainder-scalar", lambda m, a: a % 0.7, [S]),
    C("copysign", lambda m, a, b: m.copysign(a, b), [S, S]),
    C("copysign-scalar", lambda m, a: m.copysign(a, -1.0), [S]),
    C("xlogy", lambda m, a, b: m.xlogy(a, b), [S, S], ("any", "pos")),
    C("xlogy-scalar", lambda m, a: m.xlogy(a, 3.0), [S]),
    C("lerp-scalar", lambda m, a, b: m.lerp(a, b, 0.3), [S, S]),
    C("lerp-tensor", lambda m, a, b, w: m.lerp(a, b, w), [S, (4,), S]),
    C("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), [S, S, (4,)]),
    C("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=2), [S, S, S], ("any", "any", "pos")),
    C("where", lambda m, a, b: m.where(a > 0, a, b), [S, S]),
    C("where-bcast", lambda m, a, b: m.where(a > 0, a, b), [S, (4,)]),
    C("where-scalar", lambda m, a: m.where(a > 0, a, 0.0), [S]),
    C("clamp", lambda m, a: m.clamp(a, -0.5, 0.5), [S]),
    C("clamp-min", lambda m, a: m.clamp(a, min=-0.2), [S]),
    C("clamp-max", lambda m, a: a.clamp(max=0.2), [S]),
    C("clamp-tensor", lambda m, a, lo, hi: m.clamp(a, lo, hi), [S, (4,), S],
      ("any", "any", "any")),
    C("clamp-tensor-min", lambda m, a, lo: m.clamp(a, min=lo), [S, S]),
    C("clamp-tensor-max", lambda m, a, hi: m.clamp(a, max=hi), [S, S]),
    C("clamp_min", lambda m, a: m.clamp_min(a, 0.1), [S]),
    C("clamp_max", lambda m, a: m.clamp_max(a, 0.1), [S]),
    C("clamp_min-tensor", lambda m, a, b: m.clamp_min(a, b), [S, S]),
    C("clip", lambda m, a: m.clip(a, -0.3, 0.3), [S]),
    C("mul-complex", lambda m, a, b: m.mul(a, b), [S, S], "cpx"),
    C("div-complex", lambda m, a, b: a / b, [S, S], "cpx"),
    C("abs-complex", lambda m, a: m.abs(a), [S], "cpx"),
    C("exp-complex", lambda m, a: m.exp(a), [S], "cpx"),
    C("log-complex", lambda m, a: m.log(a), [S], "cpx"),
    C("sqrt-complex", lambda m, a: m.sqrt(a), [S], "cpx"),
    C("sin-complex", lambda m, a: m.sin(a), [S], "cpx"),
    C("tanh-complex", lambda m, a: m.tanh(a), [S], "cpx"),
    C("sigmoid-complex", lambda m, a: m.sigmoid(a), [S], "cpx"),
    C("reciprocal-complex", lambda m, a: m.reciprocal(a), [S], "cpx"),
    C("pow-complex", lambda m, a: a ** 2, [S], "cpx"),
    C("conj-complex", lambda m, a: m.conj(a) * a, [S], "cpx"),
    C("sgn-complex", lambda m, a: m.sgn(a), [S], "cpx"),
    C("real-complex", lambda m, a: m.real(a), [S], "cpx"),
    C("imag-complex", lambda m, a: m.imag(a), [S], "cpx"),
    C("angle-complex", lambda m, a: m.angle(a), [S], "cpx"),
    C("angle-real", lambda m, a: m.angle(a), [S]),
    C("complex", lambda m, a, b: m.complex(a, b), [S, S]),
    C("polar", lambda m, a, b: m.polar(a, b), [S, S], ("pos", "any")),
    C("view_as_real", lambda m, a: m.view_as_real(a), [S], "cpx"),
    C("view_as_complex", lambda m, a: m.view_as_complex(a), [(3, 2)]),
    C("matmul-complex", lambda m, a, b: a @ b, [(2, 3), (3, 2)], "cpx"),
    C("sum-complex", lambda m, a: a.sum(1), [S], "cpx"),
]

# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

REDUCTION_CASES = [
    C("sum", lambda m, a: m.sum(a), [S]),
    C("sum-dim", lambda m, a: a.sum(1), [S]),
    C("sum-dims-keepdim", lambda m, a: a.sum((0, 2), keepdim=True), [(2, 3, 4)]),
    C("sum-neg-dim", lambda m, a: m.sum(a, -1), [(2, 3, 4)]),
    C("sum-0d", lambda m, a: a.sum(), [()]),
    C("sum-dtype", lambda m, a: a.sum(dtype=m.float32), [S], rtol=1e-5),
    C("nansum", lambda m, a: m.nansum(a, 0), [S]),
    C("mean", lambda m, a: m.mean(a), [S]),
    C("mean-dim", lambda m, a: a.mean(-1, keepdim=True), [(2, 3, 4)]),
    C("mean-dims", lambda m, a: a.mean((0, 1)), [(2, 3, 4)]),
    C("nanmean", lambda m, a: m.nanmean(a, 1), [S]),
    C("prod", lambda m, a: m.prod(a), [S]),
    C("prod-dim", lambda m, a: a.prod(1), [S]),
    C("prod-dim-keepdim", lambda m, a: a.prod(0, keepdim=True), [S]),
    C("prod-one-zero", lambda m, a: (a * m.tensor([[1.0, 0, 1, 1]] * 3, dtype=m.float64)).prod(1),
      [S]),
    C("prod-one-zero-all", lambda m, a: (a * m.tensor([[1.0, 0, 1, 1]] + [[1.0] * 4] * 2,
                                                        dtype=m.float64)).prod(), [S]),
    C("prod-two-zeros", lambda m, a: (a * m.tensor([[0.0, 0, 1, 1]] * 3, dtype=m.float64)).prod(1),
      [S]),
    C("max-all", lambda m, a: m.max(a), [S], "distinct"),
    C("min-all", lambda m, a: a.min(), [S], "distinct"),
    C("max-ties", lambda m, a: m.max(a * 0 + 1), [S]),
    C("max-dim", lambda m, a: m.max(a, 1), [S], "distinct"),
    C("max-dim-keepdim", lambda m, a: a.max(0, keepdim=True), [S], "distinct"),
    C("min-dim", lambda m, a: m.min(a, -1), [(2, 3, 4)], "distinct"),
    C("amax", lambda m, a: m.amax(a, 1), [S], "distinct"),
    C("amax-ties", lambda m, a: m.amax(a.round(), 1), [S]),
    C("amin-dims", lambda m, a: m.amin(a, (0, 1)), [(2, 3, 4)], "distinct"),
    C("aminmax", lambda m, a: m.aminmax(a, dim=1), [S], "distinct"),
    C("aminmax-all", lambda m, a: m.aminmax(a), [S], "distinct"),
    C("var", lambda m, a: m.var(a), [S]),
    C("var-dim", lambda m, a: a.var(1), [S]),
    C("var-correction", lambda m, a: m.var(a, 0, correction=0, keepdim=True), [S]),
    C("var-unbiased-false", lambda m, a: m.var(a, 1, unbiased=False), [S]),
    C("std", lambda m, a: m.std(a), [S]),
    C("std-dim", lambda m, a: a.std((0, 2)), [(2, 3, 4)]),
    C("std-correction", lambda m, a: m.std(a, 1, correction=2), [S]),
    C("var_mean", lambda m, a: m.var_mean(a, 1), [S]),
    C("std_mean", lambda m, a: m.std_mean(a, 1), [S]),
    C("std_mean-all", lambda m, a: m.std_mean(a), [S]),
    C("vector_norm", lambda m, a: m.linalg.vector_norm(a), [S]),
    C("vector_norm-1", lambda m, a: m.linalg.vector_norm(a, 1, dim=1), [S]),
    C("vector_norm-inf", lambda m, a: m.linalg.vector_norm(a, math.inf, dim=1), [S], "distinct"),
    C("vector_norm-3", lambda m, a: m.linalg.vector_norm(a, 3, dim=0, keepdim=True), [S]),
    C("vector_norm-0.5", lambda m, a: m.linalg.vector_norm(a, 0.5), [S], "pos"),
    C("norm", lambda m, a: m.norm(a), [S]),
    C("norm-dim", lambda m, a: a.norm(dim=1), [S]),
    C("norm-p1", lambda m, a: a.norm(p=1, dim=0), [S]),
    C("norm-fro", lambda m, a: m.norm(a, "fro"), [S]),
    C("linalg.norm", lambda m, a: m.linalg.norm(a), [S]),
    C("linalg.norm-vec", lambda m, a: m.linalg.norm(a, 3), [(5,)]),
    C("matrix_norm-fro", lambda m, a: m.linalg.matrix_norm(a), [S]),
    C("matrix_norm-1", lambda m, a: m.linalg.matrix_norm(a, 1), [S], "distinct"),
    C("logsumexp", lambda m, a: m.logsumexp(a, 1), [S]),
    C("logsumexp-keepdim", lambda m, a: a.logsumexp((0, 1), keepdim=True), [(2, 3, 4)]),
    C("softmax", lambda m, a: m.softmax(a, 1), [S]),
    C("softmax-dim0", lambda m, a: a.softmax(0), [(2, 3, 4)]),
    C("log_softmax", lambda m, a: m.log_softmax(a, -1), [S]),
    C("log_softmax-dim0", lambda m, a: a.log_softmax(0), [(2, 3, 4)]),
    C("softmax-dtype", lambda m, a: m.softmax(a, 1, dtype=m.float32), [S], rtol=1e-5, atol=1e-6,
      second=False),
    C("cumsum", lambda m, a: m.cumsum(a, 1), [S]),
    C("cumsum-dim0", lambda m, a: a.cumsum(0), [(2, 3, 4)]),
    C("cumprod", lambda m, a: m.cumprod(a, 1), [S]),
    C("cumprod-zero", lambda m, a: (a * m.tensor([1.0, 0, 1, 1], dtype=m.float64)).cumprod(1),
      [S]),
    C("cummax", lambda m, a: m.cummax(a, 1), [S], "distinct"),
    C("cummin", lambda m, a: m.cummin(a, 0), [S], "distinct"),
    C("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), [S]),
    C("median-all", lambda m, a: m.median(a), [S], "distinct"),
    C("median-dim", lambda m, a: m.median(a, 1), [S], "distinct"),
    C("nanmedian-dim", lambda m, a: m.nanmedian(a, 0), [S], "distinct"),
    C("mode", lambda m, a: m.mode(a.round(), 1), [(3, 6)]),
    C("kthvalue", lambda m, a: m.kthvalue(a, 2, 1), [S], "distinct"),
    C("kthvalue-keepdim", lambda m, a: a.kthvalue(2, 0, keepdim=True), [S], "distinct"),
    C("sort", lambda m, a: m.sort(a, 1), [S], "distinct"),
    C("sort-desc", lambda m, a: a.sort(0, descending=True), [S], "distinct"),
    C("msort", lambda m, a: m.msort(a), [S], "distinct"),
    # the shape methods' varargs and sequence forms
    C("tile-int", lambda m, a: a.tile(2), [S]),
    C("tile-varargs", lambda m, a: a.tile(2, 1, 3), [S]),
    C("tile-kw", lambda m, a: m.tile(a, dims=(1, 2)), [S]),
    C("flip-varargs", lambda m, a: a.flip(0, 1), [S]),
    C("flip-int", lambda m, a: a.flip(1), [S]),
    C("flip-kw", lambda m, a: m.flip(a, dims=[0]), [S]),
    C("repeat-seq", lambda m, a: a.repeat((2, 1, 1)), [S]),
    C("topk", lambda m, a: m.topk(a, 2), [S], "distinct"),
    C("topk-smallest-dim0", lambda m, a: a.topk(2, 0, largest=False), [S], "distinct"),
    C("quantile", lambda m, a: m.quantile(a, 0.3), [S], "distinct"),
    C("quantile-dim-q1d", lambda m, a: m.quantile(a, m.tensor([0.2, 0.5, 1.0], dtype=m.float64),
                                                  dim=1), [S], "distinct"),
    C("quantile-keepdim", lambda m, a: a.quantile(0.7, dim=0, keepdim=True), [S], "distinct"),
    C("quantile-lower", lambda m, a: a.quantile(0.4, 1, interpolation="lower"), [S], "distinct"),
    C("quantile-midpoint", lambda m, a: a.quantile(0.4, 1, interpolation="midpoint"), [S],
      "distinct"),
    C("quantile-nearest", lambda m, a: m.quantile(a, 0.6, 0, True, interpolation="nearest"), [S],
      "distinct"),
    C("nanquantile", lambda m, a: m.nanquantile(m.where(a > 3, math.nan, a), 0.5, dim=1), [S],
      "distinct"),
    C("trace", lambda m, a: m.trace(a), [S]),
    C("trace-square", lambda m, a: a.trace(), [(3, 3)]),
]

# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------

LINALG_CASES = [
    C("matmul-2d", lambda m, a, b: m.matmul(a, b), [(2, 3), (3, 4)]),
    C("matmul-1d-2d", lambda m, a, b: a @ b, [(3,), (3, 4)]),
    C("matmul-2d-1d", lambda m, a, b: a @ b, [(2, 3), (3,)]),
    C("matmul-1d-1d", lambda m, a, b: a @ b, [(3,), (3,)]),
    C("matmul-batched", lambda m, a, b: a @ b, [(2, 2, 3), (2, 3, 4)]),
    C("matmul-bcast", lambda m, a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)]),
    C("matmul-3d-2d", lambda m, a, b: a @ b, [(2, 2, 3), (3, 4)]),
    C("matmul-1d-3d", lambda m, a, b: a @ b, [(3,), (2, 3, 4)]),
    C("matmul-3d-1d", lambda m, a, b: a @ b, [(2, 4, 3), (3,)]),
    C("matmul-noncontig", lambda m, a, b: a.t() @ b.mT, [(3, 2), (4, 3)]),
    C("matmul-one-side", lambda m, a, b: a @ b, [(2, 3), (3, 4)], diff=[1]),
    C("mm", lambda m, a, b: m.mm(a, b), [(2, 3), (3, 4)]),
    C("bmm", lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    C("mv", lambda m, a, b: m.mv(a, b), [(2, 3), (3,)]),
    C("dot", lambda m, a, b: m.dot(a, b), [(3,), (3,)]),
    C("vdot", lambda m, a, b: m.vdot(a, b), [(3,), (3,)]),
    C("vdot-complex", lambda m, a, b: m.vdot(a, b), [(3,), (3,)], "cpx"),
    C("inner", lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)]),
    C("outer", lambda m, a, b: m.outer(a, b), [(3,), (4,)]),
    C("ger", lambda m, a, b: m.ger(a, b), [(3,), (4,)]),
    C("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    C("addmm-default", lambda m, c, a, b: m.addmm(c, a, b), [(2, 4), (2, 3), (3, 4)]),
    C("addmv", lambda m, c, a, b: m.addmv(c, a, b, beta=2, alpha=0.5), [(2,), (2, 3), (3,)]),
    C("addr", lambda m, c, a, b: m.addr(c, a, b, beta=2, alpha=0.5), [(3, 4), (3,), (4,)]),
    C("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b, beta=0.5, alpha=2),
      [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    C("addbmm", lambda m, c, a, b: m.addbmm(c, a, b, beta=0.5, alpha=2),
      [(2, 4), (2, 2, 3), (2, 3, 4)]),
    C("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    C("einsum-batch", lambda m, a, b: m.einsum("bij,bkj->bik", a, b), [(2, 2, 3), (2, 4, 3)]),
    C("einsum-trace", lambda m, a: m.einsum("ii->", a), [(3, 3)]),
    C("einsum-outer", lambda m, a, b: m.einsum("i,j->ij", a, b), [(3,), (4,)]),
    C("tensordot", lambda m, a, b: m.tensordot(a, b, dims=([1, 2], [0, 1])),
      [(2, 3, 4), (3, 4, 2)]),
    C("tensordot-int", lambda m, a, b: m.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    C("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (3, 2)]),
    C("kron-rank", lambda m, a, b: m.kron(a, b), [(2,), (2, 3)]),
    C("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c), [(2, 3), (3, 4), (4, 2)]),
    C("multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    C("matrix_power", lambda m, a: m.matrix_power(a, 3), [(3, 3)]),
    C("matrix_power-neg", lambda m, a: m.linalg.matrix_power(a, -2), [(3, 3)], "spd"),
    C("det", lambda m, a: m.det(a), [(3, 3)]),
    C("det-batched", lambda m, a: m.linalg.det(a), [(2, 3, 3)]),
    C("logdet", lambda m, a: m.logdet(a), [(3, 3)], "spd"),
    C("slogdet", lambda m, a: m.slogdet(a), [(3, 3)]),
    C("linalg.slogdet", lambda m, a: m.linalg.slogdet(a), [(2, 3, 3)]),
    C("inverse", lambda m, a: m.inverse(a), [(3, 3)], "spd"),
    C("linalg.inv", lambda m, a: m.linalg.inv(a), [(2, 3, 3)], "spd"),
    C("linalg.lu_factor", lambda m, a: m.linalg.lu_factor(a)[0], [(2, 3, 3)], second=False),
    C("linalg.lu_factor_ex-wide", lambda m, a: m.linalg.lu_factor_ex(a)[0], [(3, 5)],
      second=False),
    C("linalg.lu_factor-tall", lambda m, a: m.linalg.lu_factor(a).LU, [(5, 3)], second=False),
    C("lu_solve-of-lu_factor", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
      [(3, 3), (3, 2)], ("spd", "any"), second=False),
    C("torch.lu", lambda m, a: m.lu(a)[0], [(3, 3)], second=False),
    C("torch.qr", lambda m, a: m.qr(a)[0] + m.qr(a)[1].sum(), [(4, 3)], second=False),
    C("linalg.qr-wide", lambda m, a: m.linalg.qr(a)[0].sum(-1) + m.linalg.qr(a)[1].sum(-1),
      [(2, 3, 5)], second=False),
    C("nextafter", lambda m, a, b: m.nextafter(a, b), [S, S]),
    C("put", lambda m, a, b: m.put(a, _idx(m, [0, 11, -2]), b), [S, (3,)]),
    C("put-accumulate", lambda m, a, b: a.put(_idx(m, [[1, 1], [4, 0]]), b, accumulate=True),
      [S, (2, 2)]),
    C("put_-of-view", lambda m, a, b: (a * 1).t().put_(_idx(m, [1, 4]), b), [S, (2,)]),
    C("linalg.inv_ex", lambda m, a: m.linalg.inv_ex(a)[0], [(3, 3)], "spd"),
    C("linalg.solve", lambda m, a, b: m.linalg.solve(a, b), [(3, 3), (3, 2)], ("spd", "any")),
    C("linalg.solve-vec", lambda m, a, b: m.linalg.solve(a, b), [(3, 3), (3,)], ("spd", "any")),
    C("linalg.solve-batched", lambda m, a, b: m.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)],
      ("spd", "any")),
    C("linalg.solve-bcast", lambda m, a, b: m.linalg.solve(a, b), [(2, 3, 3), (3, 2)],
      ("spd", "any")),
    C("linalg.solve-left-false", lambda m, a, b: m.linalg.solve(a, b, left=False),
      [(3, 3), (2, 3)]),
    C("linalg.solve-nonsym", lambda m, a, b: m.linalg.solve(a, b), [(3, 3), (3, 2)]),
    C("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b)[0], [(3, 3), (3, 2)]),
    C("cholesky_ex", lambda m, a: m.linalg.cholesky_ex(a)[0], [(3, 3)], "spd"),
    C("cholesky", lambda m, a: m.linalg.cholesky(a), [(3, 3)], "spd"),
    C("cholesky-upper", lambda m, a: m.cholesky(a, upper=True), [(3, 3)], "spd"),
    C("cholesky-batched", lambda m, a: m.linalg.cholesky(a), [(2, 3, 3)], "spd"),
    C("eigh", lambda m, a: m.linalg.eigh(a)[0], [(3, 3)], "sym"),
    C("eigh-vectors", lambda m, a: (lambda r: (r[0], r[1].abs()))(m.linalg.eigh(a)), [(3, 3)],
      "sym"),
    C("eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [(3, 3)], "sym"),
    C("pinverse", lambda m, a: m.pinverse(a), [(3, 2)], rtol=1e-6, second=False),
    C("linalg.pinv", lambda m, a: m.linalg.pinv(a), [(2, 3)], rtol=1e-6, second=False),
    C("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), [(2, 3), (2, 3)]),
    C("svdvals", lambda m, a: m.linalg.svdvals(a), [(3, 2)]),
    C("svd-compute_uv-false", lambda m, a: m.svd(a, compute_uv=False), [(4, 3)]),
    C("eigvals", lambda m, a: m.linalg.eigvals(a).abs().sum(), [(3, 3)]),
    C("eigvals-batched-complex", lambda m, a: m.linalg.eigvals(a).pow(2).sum(-1), [(2, 3, 3)],
      "cpx"),
    C("eig", lambda m, a: (lambda r: r[0].real.pow(3).sum() + r[1].abs().sum())(m.linalg.eig(a)),
      [(4, 4)]),
    C("matrix_norm-nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), [(3, 2)], second=False),
    C("matrix_norm-2", lambda m, a: m.linalg.matrix_norm(a, 2), [(3, 2)], second=False),
    C("matrix_norm-inf-keepdim", lambda m, a: m.linalg.matrix_norm(a, -math.inf, keepdim=True),
      [(2, 3, 4)], "distinct"),
    C("linalg.norm-dims", lambda m, a: m.linalg.norm(a, dim=(0, 2)), [(2, 3, 4)]),
    C("linalg.norm-ord-dim", lambda m, a: m.linalg.norm(a, 1, dim=1), [S]),
    C("linalg.cross-dim0", lambda m, a, b: m.linalg.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    C("lstsq-vec", lambda m, a, b: m.linalg.lstsq(a, b)[0], [(4, 3), (4,)], second=False),
    C("pinv-tall", lambda m, a: m.linalg.pinv(a), [(4, 2)], rtol=1e-6, second=False),
    C("qr-R", lambda m, a: m.linalg.qr(a)[1], [(3, 3)]),
    C("lstsq", lambda m, a, b: m.linalg.lstsq(a, b)[0], [(4, 3), (4, 2)], second=False),
]

# ---------------------------------------------------------------------------
# shape ops, indexing
# ---------------------------------------------------------------------------

SHAPE_CASES = [
    C("cat", lambda m, a, b: m.cat([a, b], 1), [(2, 3), (2, 2)]),
    C("cat-dim0", lambda m, a, b, c: m.cat((a, b, c)), [(2, 3), (1, 3), (3, 3)]),
    C("cat-one-grad", lambda m, a, b: m.cat([a, b], 0), [(2, 3), (2, 3)], diff=[0]),
    C("concat", lambda m, a, b: m.concat([a, b], -1), [(2, 3), (2, 2)]),
    C("stack", lambda m, a, b: m.stack([a, b], 1), [S, S]),
    C("hstack", lambda m, a, b: m.hstack([a, b]), [S, S]),
    C("vstack", lambda m, a, b: m.vstack([a, b]), [(4,), (4,)]),
    C("dstack", lambda m, a, b: m.dstack([a, b]), [S, S]),
    C("column_stack", lambda m, a, b: m.column_stack([a, b]), [(3,), (3, 2)]),
    C("flip", lambda m, a: m.flip(a, (0, 1)), [S]),
    C("fliplr", lambda m, a: m.fliplr(a), [S]),
    C("flipud", lambda m, a: m.flipud(a), [S]),
    C("roll", lambda m, a: m.roll(a, 1, 1), [S]),
    C("roll-flat", lambda m, a: m.roll(a, 2), [S]),
    C("roll-multi", lambda m, a: a.roll((1, -1), (0, 1)), [S]),
    C("rot90", lambda m, a: m.rot90(a, 1, (0, 1)), [S]),
    C("rot90-k3", lambda m, a: m.rot90(a, 3, [1, 0]), [S]),
    C("repeat", lambda m, a: a.repeat(2, 1, 3), [S]),
    C("tile", lambda m, a: m.tile(a, (2,)), [S]),
    C("repeat_interleave", lambda m, a: m.repeat_interleave(a, 2, 1), [S]),
    C("repeat_interleave-flat", lambda m, a: a.repeat_interleave(2), [S]),
    C("repeat_interleave-tensor", lambda m, a: m.repeat_interleave(a, _idx(m, [1, 0, 2]), 0), [S]),
    C("tril", lambda m, a: m.tril(a), [S]),
    C("triu", lambda m, a: m.triu(a, 1), [S]),
    C("diag-1d", lambda m, a: m.diag(a, 1), [(3,)]),
    C("diag-2d", lambda m, a: m.diag(a, -1), [S]),
    C("diag_embed", lambda m, a: m.diag_embed(a), [S]),
    C("diagflat", lambda m, a: m.diagflat(a), [(2, 2)]),
    C("diagonal_scatter", lambda m, a, b: m.diagonal_scatter(a, b), [(3, 3), (3,)]),
    C("select_scatter", lambda m, a, b: m.select_scatter(a, b, 0, 1), [S, (4,)]),
    C("slice_scatter", lambda m, a, b: m.slice_scatter(a, b, 1, 0, 4, 2), [S, (3, 2)]),
    C("index_select", lambda m, a: m.index_select(a, 1, _idx(m, [0, 2, 2])), [S]),
    C("gather", lambda m, a: m.gather(a, 1, _idx(m, [[0, 0], [1, 3], [2, 2]])), [S]),
    C("take_along_dim", lambda m, a: m.take_along_dim(a, _idx(m, [[0], [3], [2]]), 1), [S]),
    C("take_along_dim-flat", lambda m, a: m.take_along_dim(a, _idx(m, [0, 5, 5])), [S]),
    C("take", lambda m, a: m.take(a, _idx(m, [[0, -1], [3, 3]])), [S]),
    C("scatter-src", lambda m, a, s: m.scatter(a, 1, _idx(m, [[0, 1], [2, 3], [1, 0]]), s),
      [S, (3, 2)]),
    C("scatter-value", lambda m, a: a.scatter(0, _idx(m, [[0, 1, 2, 0]]), 1.5), [S]),
    C("scatter_add", lambda m, a, s: m.scatter_add(a, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]), s),
      [S, (3, 2)]),
    C("scatter_reduce-sum", lambda m, a, s: m.scatter_reduce(a, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]),
                                                              s, "sum"), [S, (3, 2)]),
    C("scatter_reduce-amax", lambda m, a, s: m.scatter_reduce(a, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]),
                                                               s, "amax"), [S, (3, 2)], "distinct"),
    C("scatter_reduce-mean", lambda m, a, s: m.scatter_reduce(a, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]),
                                                               s, "mean"), [S, (3, 2)]),
    C("scatter_reduce-amin-noself", lambda m, a, s: m.scatter_reduce(
        a, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]), s, "amin", include_self=False), [S, (3, 2)],
      "distinct"),
    C("scatter_reduce-mean-noself", lambda m, a, s: a.scatter_reduce(
        0, _idx(m, [[0, 1, 0, 2]]), s, "mean", include_self=False), [S, (1, 4)]),
    C("scatter_reduce-amax-ties", lambda m, a, s: m.scatter_reduce(
        a.round(), 1, _idx(m, [[0, 0], [2, 3], [1, 1]]), s.round(), "amax"), [S, (3, 2)]),
    C("index_add", lambda m, a, s: m.index_add(a, 0, _idx(m, [0, 2, 0]), s, alpha=2),
      [S, (3, 4)]),
    C("index_copy", lambda m, a, s: m.index_copy(a, 1, _idx(m, [3, 0]), s), [S, (3, 2)]),
    C("index_fill", lambda m, a: m.index_fill(a, 1, _idx(m, [1, 3]), -1.0), [S]),
    C("index_fill-tensor", lambda m, a, v: m.index_fill(a, 1, _idx(m, [1, 3]), v), [S, ()]),
    C("masked_fill", lambda m, a: m.masked_fill(a, a > 0, 0.5), [S]),
    C("masked_fill-tensor", lambda m, a, v: a.masked_fill(a > 0, v), [S, ()]),
    C("masked_fill-bcast", lambda m, a: a.masked_fill(m.tensor([True, False, True, False]), 2.0),
      [S]),
    C("masked_select", lambda m, a: m.masked_select(a, a > 0), [S]),
    C("masked_select-bcast", lambda m, a: m.masked_select(a, m.tensor([True, False, True, True])),
      [S]),
    C("masked_scatter", lambda m, a, s: m.masked_scatter(a, a > 0, s), [S, (3, 5)]),
    C("index_put", lambda m, a, v: m.index_put(a, (_idx(m, [0, 2]), _idx(m, [1, 3])), v),
      [S, (2,)]),
    C("index_put-accumulate", lambda m, a, v: a.index_put((_idx(m, [0, 0]),), v, accumulate=True),
      [S, (2, 4)]),
    C("narrow_copy", lambda m, a: m.narrow_copy(a, 1, 1, 2), [S]),
    C("constant_pad_nd", lambda m, a: m.constant_pad_nd(a, (1, 2, 0, 1)), [S]),
    C("constant_pad_nd-neg", lambda m, a: m.constant_pad_nd(a, (-1, 2)), [S]),
    C("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b), [(3, 1), (4,)]),
    C("meshgrid", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), [(3,), (2,)]),
    C("atleast_2d", lambda m, a: m.atleast_2d(a), [(3,)]),
    C("atleast_3d", lambda m, a: m.atleast_3d(a), [S]),
    C("ravel", lambda m, a: m.ravel(a.t()), [S]),
    C("flatten", lambda m, a: a.flatten(), [(2, 3, 4)]),
    C("unflatten", lambda m, a: a.unflatten(1, (2, 2)), [S]),
    C("clone", lambda m, a: a.clone() * 2, [S]),
    C("contiguous", lambda m, a: a.t().contiguous(), [S]),
    C("to-float32", lambda m, a: a.to(m.float32), [S], rtol=1e-6, atol=1e-6, second=False),
    C("to-same", lambda m, a: a.to(m.float64) * 1, [S]),
    C("float", lambda m, a: a.float().double(), [S], rtol=1e-6, atol=1e-6),
    C("to-complex", lambda m, a: a.to(m.complex128), [S]),
    C("type_as", lambda m, a, b: a.type_as(b), [S, S], diff=[0]),
]

VIEW_CASES = [
    C("transpose", lambda m, a: a.transpose(0, 1), [S]),
    C("t", lambda m, a: a.t(), [S]),
    C("T", lambda m, a: a.T, [S]),
    C("mT", lambda m, a: a.mT, [(2, 3, 4)]),
    C("permute", lambda m, a: a.permute(2, 0, 1), [(2, 3, 4)]),
    C("expand", lambda m, a: a.expand(2, 3, 4), [(3, 1)]),
    C("expand_as", lambda m, a, b: a.expand_as(b), [(4,), S], diff=[0]),
    C("slice", lambda m, a: a[1:, ::2], [S]),
    C("slice-neg-step-flip", lambda m, a: a[:, 1:3] * 2, [S]),
    C("narrow", lambda m, a: a.narrow(1, 1, 2), [S]),
    C("select", lambda m, a: a.select(1, 2), [S]),
    C("int-index", lambda m, a: a[1], [S]),
    C("unbind", lambda m, a: a.unbind(1), [S]),
    C("unbind-partial", lambda m, a: a.unbind(0)[1], [S]),
    C("split", lambda m, a: a.split(2, 1), [(3, 5)]),
    C("split-sizes", lambda m, a: m.split(a, [1, 3], 1), [S]),
    C("chunk", lambda m, a: a.chunk(2, 0), [(3, 4)]),
    C("tensor_split", lambda m, a: m.tensor_split(a, 3, 1), [S]),
    C("diagonal", lambda m, a: a.diagonal(), [S]),
    C("diagonal-offset", lambda m, a: m.diagonal(a, 1, 0, 2), [(3, 2, 4)]),
    C("as_strided", lambda m, a: a.as_strided((2, 2), (1, 2), 1), [(6,)]),
    C("as_strided-overlap", lambda m, a: m.as_strided(a, (3, 3), (1, 1)), [(6,)]),
    C("unfold", lambda m, a: a.unfold(1, 2, 1), [S]),
    C("view", lambda m, a: a.view(2, 6), [S]),
    C("view-neg", lambda m, a: a.view(-1), [S]),
    C("view_as", lambda m, a, b: a.view_as(b), [S, (4, 3)], diff=[0]),
    C("reshape", lambda m, a: a.reshape(4, 3), [S]),
    C("reshape-noncontig", lambda m, a: a.t().reshape(-1), [S]),
    C("squeeze", lambda m, a: a.squeeze(), [(3, 1, 4)]),
    C("squeeze-dim", lambda m, a: m.squeeze(a, 1), [(3, 1, 4)]),
    C("unsqueeze", lambda m, a: a.unsqueeze(1), [S]),
    C("movedim", lambda m, a: m.movedim(a, 0, 2), [(2, 3, 4)]),
    C("moveaxis", lambda m, a: m.moveaxis(a, (0, 1), (1, 2)), [(2, 3, 4)]),
    C("swapaxes", lambda m, a: a.swapaxes(0, 2), [(2, 3, 4)]),
    C("view-chain", lambda m, a: a.t()[1:].unsqueeze(0).expand(2, 3, 3).sum(0), [S]),
    C("view-of-nonleaf", lambda m, a: (a * 2).t()[::2], [S]),
    C("real-view-chain", lambda m, a: m.view_as_real(a)[..., 0] * 2, [S], "cpx"),
    # advanced indexing
    C("index-int-tensor", lambda m, a: a[_idx(m, [0, 2, 0])], [S]),
    C("index-int-tensor-dup", lambda m, a: a[:, _idx(m, [1, 1, 3])], [S]),
    C("index-2-tensors", lambda m, a: a[_idx(m, [0, 2]), _idx(m, [1, 1])], [S]),
    C("index-bool", lambda m, a: a[a > 0], [S]),
    C("index-bool-row", lambda m, a: a[m.tensor([True, False, True])], [S]),
    C("index-mixed", lambda m, a: a[1:, _idx(m, [[0], [2]])], [(3, 4, 2)]),
    C("index-list", lambda m, a: a[[0, 2]], [S]),
    C("index-ellipsis-none", lambda m, a: a[..., None, 1], [S]),
    C("index-neg", lambda m, a: a[-1, -2:], [S]),
]


def _setitem_slice(m, a, v):
    r = a * 1
    r[1:, 2] = v
    return r


def _setitem_adv(m, a, v):
    r = a.clone()
    r[_idx(m, [0, 2])] = v
    return r


def _setitem_bool(m, a):
    r = a.clone()
    r[r > 0] = 0.0
    return r


def _setitem_scalar_tensor(m, a, v):
    r = a.clone()
    r[0, 0] = v
    return r


def _inplace_chain(m, a, b):
    r = a * 1
    r.mul_(b)
    r.add_(b, alpha=2)
    r.div_(3.0)
    r.exp_()
    return r


def _inplace_view(m, a, b):
    r = a.clone()
    r[:, 1].mul_(b[0])
    r.t()[0].copy_(b[1:4])
    return r


def _inplace_ops_various(m, a):
    r = a.clone()
    r.sin_().pow_(2).clamp_(0.1, 0.8).neg_().mul_(2).sub_(1).sigmoid_()
    return r


SETITEM_CASES = [
    C("setitem-slice", _setitem_slice, [S, (2,)]),
    C("setitem-adv", _setitem_adv, [S, (4,)]),
    C("setitem-bool", _setitem_bool, [S]),
    C("setitem-scalar-tensor", _setitem_scalar_tensor, [S, ()]),
    C("inplace-chain", _inplace_chain, [S, (4,)], ("any", "pos")),
    C("inplace-view", _inplace_view, [S, (4,)]),
    C("inplace-various", _inplace_ops_various, [S]),
]

ALL_CASES = UNARY_CASES + BINARY_CASES + REDUCTION_CASES + LINALG_CASES + SHAPE_CASES + VIEW_CASES \
    + SETITEM_CASES


@needs_torch
@pytest.mark.parametrize("fn,shapes,domain,diff,second,rtol,atol", ALL_CASES)
def test_grad_vs_torch(fn, shapes, domain, diff, second, rtol, atol):
    compare(fn, arrays(shapes, domain), diff=diff, second=second, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# numerical checks: gradcheck / gradgradcheck (ptcore's own, finite differences)
# ---------------------------------------------------------------------------

_GC = {
    "exp": (lambda x: x.exp(), [(2, 3)], "any"),
    "mul-bcast": (lambda x, y: x * y, [(2, 3), (3,)], "any"),
    "div": (lambda x, y: x / y, [(2, 3), (2, 3)], ("any", "pos")),
    "pow": (lambda x, y: x ** y, [(2, 3), (2, 3)], ("pos", "any")),
    "tanh": (lambda x: ptcore.tanh(x), [(2, 3)], "any"),
    "sigmoid": (lambda x: ptcore.sigmoid(x), [(2, 3)], "any"),
    "log_softmax": (lambda x: ptcore.log_softmax(x, 1), [(2, 3)], "any"),
    "softmax": (lambda x: x.softmax(0), [(2, 3)], "any"),
    "logsumexp": (lambda x: x.logsumexp(1), [(2, 3)], "any"),
    "std": (lambda x: x.std(1), [(2, 3)], "any"),
    "var": (lambda x: x.var(), [(2, 3)], "any"),
    "norm": (lambda x: ptcore.linalg.vector_norm(x, 3, 1), [(2, 3)], "any"),
    "prod": (lambda x: x.prod(1), [(2, 3)], "any"),
    "cumprod": (lambda x: x.cumprod(1), [(2, 3)], "any"),
    "matmul": (lambda x, y: x @ y, [(2, 3), (3, 2)], "any"),
    "matmul-bcast": (lambda x, y: x @ y, [(2, 2, 3), (3,)], "any"),
    "einsum": (lambda x, y: ptcore.einsum("ij,kj->ik", x, y), [(2, 3), (2, 3)], "any"),
    "inv": (lambda x: ptcore.linalg.inv(x), [(3, 3)], "spd"),
    "det": (lambda x: ptcore.linalg.det(x), [(3, 3)], "any"),
    "slogdet": (lambda x: ptcore.linalg.slogdet(x)[1], [(3, 3)], "any"),
    "solve": (lambda x, y: ptcore.linalg.solve(x, y), [(3, 3), (3, 2)], "any"),
    "cholesky": (lambda x: ptcore.linalg.cholesky(x @ x.mT + 3 * ptcore.eye(3, dtype=x.dtype)),
                 [(3, 3)], "any"),
    "eigh": (lambda x: ptcore.linalg.eigh(x + x.mT)[0], [(3, 3)], "any"),
    "cat-index": (lambda x, y: ptcore.cat([x, y])[ptcore.tensor([0, 3, 3])], [(2, 3), (2, 3)], "any"),
    "gather": (lambda x: x.gather(1, ptcore.tensor([[0, 0], [2, 1]])), [(2, 3)], "any"),
    "max-dim": (lambda x: x.max(1)[0], [(2, 3)], "distinct"),
    "sort": (lambda x: x.sort(1)[0], [(2, 3)], "distinct"),
    "where": (lambda x, y: ptcore.where(x > 0, x * y, y), [(2, 3), (2, 3)], "any"),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), [(2, 3)], "any"),
    "atan2": (lambda x, y: ptcore.atan2(x, y), [(2, 3), (2, 3)], "any"),
    "view-expand": (lambda x: (x.t().unsqueeze(0).expand(2, 3, 2) * 2)[:, 1:], [(2, 3)], "any"),
    "as_strided": (lambda x: x.as_strided((2, 2), (1, 1)) ** 2, [(4,)], "any"),
    "setitem": (lambda x, y: _set(x, y), [(2, 3), (3,)], "any"),
    "pinv": (lambda x: ptcore.linalg.pinv(x), [(3, 2)], "any"),
    "lgamma": (lambda x: x.lgamma(), [(2, 3)], "pos"),
}

_GGC = ["exp", "mul-bcast", "div", "pow", "tanh", "sigmoid", "log_softmax", "softmax", "logsumexp",
        "std", "var", "norm", "prod", "matmul", "matmul-bcast", "einsum", "inv", "det", "slogdet",
        "solve", "cholesky", "eigh", "cat-index", "gather", "max-dim", "sort", "where", "atan2",
        "view-expand", "as_strided", "setitem", "lgamma"]


def _set(x, y):
    r = x * 1
    r[1] = y * 2
    return r


def _gc_inputs(name):
    fn, shapes, domain = _GC[name]
    return fn, [ptcore.tensor(a, requires_grad=True) for a in arrays(shapes, domain, seed=3)]


@pytest.mark.parametrize("name", sorted(_GC))
def test_gradcheck(name):
    fn, xs = _gc_inputs(name)
    assert ptcore.autograd.gradcheck(fn, xs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name", _GGC)
def test_gradgradcheck(name):
    fn, xs = _gc_inputs(name)
    assert ptcore.autograd.gradgradcheck(fn, xs, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_gradcheck_detects_wrong_formula():
    from ptcore.autograd import Function

    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x            # should be 2 * g * x

    x = ptcore.tensor([1.0, 2.0], dtype=ptcore.float64, requires_grad=True)
    assert ptcore.autograd.gradcheck(Bad.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        ptcore.autograd.gradcheck(Bad.apply, (x,))


# ---------------------------------------------------------------------------
# no graph without requires_grad; integer outputs never require grad
# ---------------------------------------------------------------------------

_NOGRAD_OPS = [
    lambda x: x.exp(), lambda x: x + x, lambda x: x.sum(1), lambda x: x @ x.t(),
    lambda x: x.t(), lambda x: x[0], lambda x: x[ptcore.tensor([0, 1])], lambda x: x.max(1)[0],
    lambda x: x.sort(1)[0], lambda x: ptcore.cat([x, x]), lambda x: ptcore.einsum("ij->j", x),
    lambda x: x.to(ptcore.float32), lambda x: x.clone(), lambda x: ptcore.linalg.norm(x),
    lambda x: ptcore.hstack([x, x]), lambda x: x.softmax(1), lambda x: x.cumsum(0),
]


@pytest.mark.parametrize("k", range(len(_NOGRAD_OPS)))
def test_no_graph_without_requires_grad(k):
    x = ptcore.randn(3, 3, dtype=ptcore.float64)
    out = _NOGRAD_OPS[k](x)
    assert out.grad_fn is None and not out.requires_grad


_INT_OUT = {
    "argmax": lambda x: x.argmax(1), "argsort": lambda x: x.argsort(), "gt": lambda x: x > 0,
    "isnan": lambda x: x.isnan(), "max-indices": lambda x: x.max(1)[1],
    "sort-indices": lambda x: x.sort(1)[1], "topk-indices": lambda x: x.topk(2)[1],
    "to-int": lambda x: x.to(ptcore.int64), "long": lambda x: x.long(),
    "nonzero": lambda x: x.nonzero(), "eq": lambda x: x == x, "bool": lambda x: x.bool(),
    "round-int": lambda x: x.to(ptcore.int32) + 1, "cummax-indices": lambda x: x.cummax(0)[1],
    "kthvalue-indices": lambda x: x.kthvalue(1, 0)[1],
    "searchsorted": lambda x: ptcore.searchsorted(x[0].sort()[0], x[1]),
    "count_nonzero": lambda x: x.count_nonzero(), "floor_divide-int":
        lambda x: ptcore.floor_divide(x.long(), 2),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(_INT_OUT))
def test_integer_outputs_never_require_grad(name):
    x = ptcore.randn(3, 3, dtype=ptcore.float64, requires_grad=True)
    out = _INT_OUT[name](x)
    assert not (out.dtype.is_floating_point or out.dtype.is_complex)
    assert not out.requires_grad and out.grad_fn is None


@needs_torch
@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_nondifferentiable_float_outputs_as_torch(name):
    # torch: the result requires grad, backward raises "not implemented"
    x = ptcore.tensor([[1.0, 1.0, 2.0]], dtype=ptcore.float64, requires_grad=True)
    out = getattr(ptcore, name)(x)
    tout = getattr(torch, name)(torch.tensor([[1.0, 1.0, 2.0]], requires_grad=True))
    assert out.requires_grad == tout.requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        out.sum().backward()


@needs_torch
def test_floor_divide_backward_raises_as_torch():
    x = ptcore.tensor([3.0, 4.5], requires_grad=True)
    y = ptcore.floor_divide(x, 2.0)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="floor_divide"):
        y.sum().backward()


def test_out_argument_with_requires_grad_raises():
    x = ptcore.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        ptcore.exp(x, out=ptcore.empty(3))
    assert ptcore.exp(x, out=None).requires_grad


# -- gradcheck itself: forward-mode check, device tensors ------------------------------

class _WrongBackward(ptcore.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3

    @staticmethod
    def jvp(ctx, t):
        return t * 2


def test_gradcheck_checks_backward_and_forward_mode_separately():
    from ptcore.autograd import gradcheck
    from ptcore.autograd.gradcheck import GradcheckError
    x = ptcore.randn(3, dtype=ptcore.float64, requires_grad=True)
    fn = _WrongBackward.apply
    assert gradcheck(fn, (x,), raise_exception=False) is False
    assert gradcheck(fn, (x,), check_backward_ad=False, check_forward_ad=True) is True
    with pytest.raises(GradcheckError, match="analytical"):
        gradcheck(fn, (x,))
    y = ptcore.randn(4, dtype=ptcore.float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a.sin()[:, None] * b.exp()).sum(0), (x, y), check_forward_ad=True)


@needs_torch
def test_atan2_gradient_at_the_origin_and_underflow_is_zero_as_torch():
    vals = ([0.0, 0.0, 1.0, 1e-200, -2.0], [0.0, 1.0, 0.0, 1e-200, 3.0])
    a, b = (ptcore.tensor(v, dtype=ptcore.float64, requires_grad=True) for v in vals)
    at, bt = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in vals)
    gp = ptcore.autograd.grad(ptcore.atan2(a, b).sum(), [a, b])
    gt = torch.autograd.grad(torch.atan2(at, bt).sum(), [at, bt])
    for u, v in zip(gp, gt):
        np.testing.assert_array_equal(u.numpy(), v.numpy())
        np.testing.assert_array_equal(np.signbit(u.numpy()), np.signbit(v.numpy()))


@needs_torch
def test_det_gradient_of_singular_matrices_is_zero_as_torch():
    """torch's det backward (conj(det) * grad * A^-H) gives 0 where det == 0
    instead of raising for the missing inverse."""
    vals = [[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
            [[2.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 3.0]],
            [[0.0] * 3] * 3]
    a = ptcore.tensor(vals, dtype=ptcore.float64, requires_grad=True)
    at = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    gp = ptcore.autograd.grad(ptcore.linalg.det(a).sum(), a)[0]
    gt = torch.autograd.grad(torch.linalg.det(at).sum(), at)[0]
    np.testing.assert_allclose(gp.numpy(), gt.numpy(), rtol=1e-12, atol=1e-15)
    gp = ptcore.autograd.grad(ptcore.det(a[0]), a)[0]
    np.testing.assert_array_equal(gp.numpy(), 0.0)
