"""``ptcore.autocast`` against ``torch.autocast`` on the CPU: the dtype and
value of ops of every category (lower precision, float32, promote, not
listed) for bfloat16 and float16, the state functions, nesting, the
decorator form, the weight cache, the deprecated per-device aliases,
``custom_fwd``/``custom_bwd``, autograd through autocast regions and the
errors and warnings for unsupported arguments."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = [("bfloat16", 3e-2), ("float16", 4e-3)]


def _np(t):
    t = t.detach()
    if t.dtype.is_floating_point and t.dtype.itemsize == 2:
        t = t.float()
    return t.numpy()


def _inputs(lib, seed=0):
    rs = np.random.RandomState(seed)
    arrs = {
        "x": rs.randn(4, 8), "w": rs.randn(6, 8), "b": rs.randn(6),
        "sq": rs.randn(4, 4), "bat": rs.randn(3, 4, 5), "bat2": rs.randn(3, 5, 2),
        "bias3": rs.randn(3, 4, 2), "img": rs.randn(2, 3, 8, 8), "k2": rs.randn(4, 3, 3, 3),
        "seq": rs.randn(2, 3, 10), "k1": rs.randn(5, 3, 3), "vol": rs.randn(1, 2, 4, 4, 4),
        "k3": rs.randn(3, 2, 2, 2, 2), "q": rs.randn(2, 3, 5, 8), "v": rs.randn(4),
        "spd": np.eye(4) * 3 + 0.1 * np.ones((4, 4)), "pos": rs.rand(4, 8) * 0.9 + 0.05,
        "bw": rs.randn(3, 8, 8),
    }
    out = {k: lib.tensor(v.astype(np.float32)) for k, v in arrs.items()}
    out["tgt"] = lib.tensor([0, 3, 5, 7])
    out["idx"] = lib.tensor([0, 2])
    return out


# (name, fn(T, F, t, low) -> tensor).  ``low`` is the autocast dtype of the
# library, t the inputs (float32 unless cast in the case).
LOWER = [
    ("linear", lambda T, F, t, low: F.linear(t["x"], t["w"], t["b"])),
    ("matmul", lambda T, F, t, low: T.matmul(t["x"], t["w"].t())),
    ("matmul_op", lambda T, F, t, low: t["x"] @ t["w"].t()),
    ("matmul_1d", lambda T, F, t, low: T.matmul(t["x"], t["x"][0])),
    ("mm", lambda T, F, t, low: T.mm(t["x"], t["w"].t())),
    ("Tensor.mm", lambda T, F, t, low: t["x"].mm(t["w"].t())),
    ("bmm", lambda T, F, t, low: T.bmm(t["bat"], t["bat2"])),
    ("addmm", lambda T, F, t, low: T.addmm(t["b"], t["x"], t["w"].t())),
    ("baddbmm", lambda T, F, t, low: T.baddbmm(t["bias3"], t["bat"], t["bat2"])),
    ("addbmm", lambda T, F, t, low: T.addbmm(t["bias3"][0], t["bat"], t["bat2"])),
    ("conv1d", lambda T, F, t, low: F.conv1d(t["seq"], t["k1"], padding=1)),
    ("conv2d", lambda T, F, t, low: F.conv2d(t["img"], t["k2"], stride=2)),
    ("conv3d", lambda T, F, t, low: F.conv3d(t["vol"], t["k3"])),
    ("conv_transpose1d", lambda T, F, t, low: F.conv_transpose1d(t["seq"],
                                                                 t["k1"].transpose(0, 1))),
    ("conv_transpose2d", lambda T, F, t, low: F.conv_transpose2d(t["img"],
                                                                 t["k2"].transpose(0, 1))),
    ("prelu", lambda T, F, t, low: F.prelu(t["x"], T.tensor([0.25]))),
    ("sdpa", lambda T, F, t, low: F.scaled_dot_product_attention(t["q"], t["q"], t["q"])),
    ("multi_dot", lambda T, F, t, low: T.linalg.multi_dot([t["x"], t["w"].t(), t["w"]])),
    ("chain_matmul", lambda T, F, t, low: T.chain_matmul(t["x"], t["w"].t())),
    ("vecdot", lambda T, F, t, low: T.linalg.vecdot(t["x"], t["x"])),
    ("einsum_contract", lambda T, F, t, low: T.einsum("ij,kj->ik", t["x"], t["w"])),
    ("einsum_batch", lambda T, F, t, low: T.einsum("bij,bjk->bik", t["bat"], t["bat2"])),
    ("einsum_implicit", lambda T, F, t, low: T.einsum("ij,jk", t["x"], t["x"].t())),
    ("tensordot", lambda T, F, t, low: T.tensordot(t["x"], t["w"], dims=([1], [1]))),
    ("inner_2d", lambda T, F, t, low: T.inner(t["x"], t["w"])),
    ("matrix_power", lambda T, F, t, low: T.matrix_power(t["sq"], 3)),
    ("nn.Linear", lambda T, F, t, low: _mod(T, lambda L: L.nn.Linear(8, 3))(t["x"])),
    ("nn.Conv2d", lambda T, F, t, low: _mod(T, lambda L: L.nn.Conv2d(3, 2, 3))(t["img"])),
    ("nn.RNN", lambda T, F, t, low: _mod(T, lambda L: L.nn.RNN(10, 4))(t["seq"])[0]),
    ("bf16_input", lambda T, F, t, low: T.mm(t["x"].to(low), t["w"].t())),
]

FP32 = [
    ("mse_loss", lambda T, F, t, low: F.mse_loss(t["x"].to(low), t["x"].to(low) * 0.5)),
    ("l1_loss", lambda T, F, t, low: F.l1_loss(t["x"].to(low), t["w"][:4].to(low))),
    ("smooth_l1_loss", lambda T, F, t, low: F.smooth_l1_loss(t["x"].to(low), t["w"][:4].to(low))),
    ("huber_loss", lambda T, F, t, low: F.huber_loss(t["x"].to(low), t["w"][:4].to(low))),
    ("cross_entropy", lambda T, F, t, low: F.cross_entropy(t["x"].to(low), t["tgt"])),
    ("nll_loss", lambda T, F, t, low: F.nll_loss(F.log_softmax(t["x"], 1).to(low), t["tgt"])),
    ("bce", lambda T, F, t, low: F.binary_cross_entropy(t["pos"].to(low), t["pos"].to(low))),
    ("bce_logits", lambda T, F, t, low: F.binary_cross_entropy_with_logits(t["x"].to(low),
                                                                          t["pos"].to(low))),
    ("kl_div", lambda T, F, t, low: F.kl_div(t["x"].to(low), t["pos"].to(low),
                                             reduction="batchmean")),
    ("soft_margin_loss", lambda T, F, t, low: F.soft_margin_loss(t["x"].to(low), t["pos"].to(low))),
    ("cosine_embedding_loss", lambda T, F, t, low: F.cosine_embedding_loss(
        t["x"].to(low), t["w"][:4].to(low), T.tensor([1.0, -1.0, 1.0, -1.0]))),
    ("margin_ranking_loss", lambda T, F, t, low: F.margin_ranking_loss(
        t["x"][0].to(low), t["x"][1].to(low), T.ones(8))),
    ("triplet_margin_loss", lambda T, F, t, low: F.triplet_margin_loss(
        t["x"].to(low), t["w"][:4].to(low), t["pos"].to(low))),
    ("multi_margin_loss", lambda T, F, t, low: F.multi_margin_loss(t["x"].to(low), t["tgt"])),
    ("poisson_nll_loss", lambda T, F, t, low: F.poisson_nll_loss(t["x"].to(low), t["pos"].to(low))),
    ("hinge_embedding_loss", lambda T, F, t, low: F.hinge_embedding_loss(t["x"].to(low),
                                                                        T.ones(4, 8))),
    ("prod", lambda T, F, t, low: T.prod(t["pos"][0].to(low))),
    ("cdist", lambda T, F, t, low: T.cdist(t["x"].to(low), t["w"].to(low))),
    ("trace", lambda T, F, t, low: T.trace(t["sq"].to(low))),
    ("inverse", lambda T, F, t, low: T.inverse(t["spd"].to(low))),
    ("linalg.inv", lambda T, F, t, low: T.linalg.inv(t["spd"].to(low))),
    ("linalg.solve", lambda T, F, t, low: T.linalg.solve(t["spd"].to(low), t["v"].to(low))),
    ("linalg.cholesky", lambda T, F, t, low: T.linalg.cholesky(t["spd"].to(low))),
    ("cholesky", lambda T, F, t, low: T.cholesky(t["spd"].to(low))),
    ("linalg.svdvals", lambda T, F, t, low: T.linalg.svdvals(t["x"].to(low))),
    ("linalg.eigvalsh", lambda T, F, t, low: T.linalg.eigvalsh(t["spd"].to(low))),
    ("linalg.matrix_rank", lambda T, F, t, low: T.linalg.matrix_rank(t["spd"].to(low))),
    ("linalg.cond", lambda T, F, t, low: T.linalg.cond(t["spd"].to(low))),
    ("quantile", lambda T, F, t, low: T.quantile(t["x"].to(low), 0.3)),
    ("avg_pool3d", lambda T, F, t, low: F.avg_pool3d(t["vol"].to(low), 2)),
    ("max_pool3d", lambda T, F, t, low: F.max_pool3d(t["vol"].to(low), 2)),
    ("adaptive_avg_pool3d", lambda T, F, t, low: F.adaptive_avg_pool3d(t["vol"].to(low), 2)),
    ("reflect_pad1d", lambda T, F, t, low: F.pad(t["seq"].to(low), (2, 1), mode="reflect")),
    ("reflect_pad2d", lambda T, F, t, low: F.pad(t["img"].to(low), (1, 1, 2, 0), mode="reflect")),
    ("replicate_pad3d", lambda T, F, t, low: F.pad(t["vol"].to(low), (1,) * 6, mode="replicate")),
    ("polar", lambda T, F, t, low: T.polar(t["pos"].to(low), t["x"].to(low))),
]

# not listed: the result keeps the inputs' dtypes (type promotion only)
UNLISTED = [
    ("softmax", lambda T, F, t, low: T.softmax(t["x"].to(low), 1)),
    ("softmax_fp32", lambda T, F, t, low: F.softmax(t["x"], 1)),
    ("log_softmax", lambda T, F, t, low: F.log_softmax(t["x"].to(low), 1)),
    ("relu", lambda T, F, t, low: F.relu(t["x"].to(low))),
    ("gelu", lambda T, F, t, low: F.gelu(t["x"].to(low))),
    ("exp", lambda T, F, t, low: t["x"].to(low).exp()),
    ("sum", lambda T, F, t, low: t["x"].to(low).sum(1)),
    ("mean", lambda T, F, t, low: t["x"].to(low).mean()),
    ("add_mixed", lambda T, F, t, low: t["x"].to(low) + t["x"]),
    ("where_mixed", lambda T, F, t, low: T.where(t["x"] > 0, t["x"].to(low), t["w"][:4])),
    ("layer_norm", lambda T, F, t, low: F.layer_norm(t["x"].to(low), (8,))),
    ("layer_norm_fp32_params", lambda T, F, t, low: F.layer_norm(
        t["x"].to(low), (8,), T.ones(8) * 2, T.ones(8))),
    ("group_norm_fp32_params", lambda T, F, t, low: F.group_norm(t["img"].to(low), 3, T.ones(3),
                                                                 T.zeros(3))),
    ("batch_norm_fp32_stats", lambda T, F, t, low: F.batch_norm(
        t["img"].to(low), T.zeros(3), T.ones(3), T.ones(3), T.zeros(3))),
    ("rms_norm_fp32_weight", lambda T, F, t, low: F.rms_norm(t["x"].to(low), (8,), T.ones(8))),
    ("avg_pool2d", lambda T, F, t, low: F.avg_pool2d(t["img"].to(low), 2)),
    ("max_pool2d", lambda T, F, t, low: F.max_pool2d(t["img"].to(low), 2)),
    ("constant_pad", lambda T, F, t, low: F.pad(t["seq"].to(low), (1, 1))),
    ("interpolate", lambda T, F, t, low: F.interpolate(t["img"].to(low), scale_factor=2)),
    ("embedding", lambda T, F, t, low: F.embedding(t["tgt"], t["w"].t())),
    ("mv_cpu", lambda T, F, t, low: T.mv(t["x"], t["x"][0])),
    ("addmv_cpu", lambda T, F, t, low: T.addmv(t["v"], t["x"], t["x"][0])),
    ("addr_cpu", lambda T, F, t, low: T.addr(t["sq"], t["v"], t["v"])),
    ("dot", lambda T, F, t, low: T.dot(t["v"], t["v"])),
    ("einsum_outer", lambda T, F, t, low: T.einsum("i,j->ij", t["v"], t["v"])),
    ("einsum_elementwise", lambda T, F, t, low: T.einsum("ij,ij->ij", t["x"], t["x"])),
    ("einsum_one_operand", lambda T, F, t, low: T.einsum("ij->j", t["x"])),
    ("tensordot_full", lambda T, F, t, low: T.tensordot(t["x"], t["x"], dims=2)),
    ("inner_1d", lambda T, F, t, low: T.inner(t["v"], t["v"])),
    ("matrix_power_1", lambda T, F, t, low: T.matrix_power(t["sq"], 1)),
    ("bilinear", lambda T, F, t, low: F.bilinear(t["x"], t["x"], t["bw"])),
    ("outer", lambda T, F, t, low: T.outer(t["v"], t["v"])),
    ("cumsum", lambda T, F, t, low: t["x"].to(low).cumsum(1)),
    ("float64_mm", lambda T, F, t, low: T.mm(t["x"].double(), t["w"].double().t())),
    ("int_mm", lambda T, F, t, low: T.mm(t["tgt"].view(2, 2), t["tgt"].view(2, 2))),
    ("nn.GRU", lambda T, F, t, low: _mod(T, lambda L: L.nn.GRU(10, 4))(t["seq"])[0]),
]

PROMOTE = [
    ("cat_mixed", lambda T, F, t, low: T.cat([t["x"].to(low), t["x"]])),
    ("cat_low", lambda T, F, t, low: T.cat([t["x"].to(low), t["w"].to(low)])),
    ("cat_f64", lambda T, F, t, low: T.cat([t["x"].to(low), t["x"].double()])),
    ("cat_int_float", lambda T, F, t, low: T.cat([t["tgt"].view(1, 4), t["v"].view(1, 4)])),
    ("stack_mixed", lambda T, F, t, low: T.stack([t["x"], t["x"].to(low)], 1)),
    ("stack_low", lambda T, F, t, low: T.stack([t["x"].to(low), t["x"].to(low)])),
    ("index_copy_low_self", lambda T, F, t, low: t["x"].to(low).index_copy(0, t["idx"],
                                                                          t["w"][:2])),
    ("index_copy_fp32_self", lambda T, F, t, low: t["x"].index_copy(0, t["idx"],
                                                                   t["w"][:2].to(low))),
]


def _mod(T, make):
    """The module ``make(lib)`` in library ``T``, ptcore's with torch's weights."""
    torch.manual_seed(0)
    tm = make(torch)
    if T is torch:
        return tm
    pm = make(ptcore)
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return pm


def _run(case, dtype_name, **kw):
    out = []
    for T, FF in ((torch, TF), (ptcore, F)):
        t = _inputs(T)
        low = getattr(T, dtype_name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autocast("cpu", dtype=low, **kw):
                out.append(case(T, FF, t, low))
    return out


def _check(r_t, r_p, tol):
    assert str(r_p.dtype).split(".")[-1] == str(r_t.dtype).split(".")[-1]
    assert tuple(r_p.shape) == tuple(r_t.shape)
    wide = np.complex128 if r_t.dtype.is_complex else np.float64
    a, b = _np(r_p).astype(wide), _np(r_t).astype(wide)
    if r_t.dtype in (torch.float64, torch.int64):
        tol = 1e-6
    elif r_t.dtype.is_complex:
        tol = max(tol, 1e-5)
    elif r_t.dtype == torch.float32:
        tol = max(tol, 1e-5)
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize("dtype_name,tol", DTYPES, ids=[d for d, _ in DTYPES])
@pytest.mark.parametrize("name,case", LOWER, ids=_ids(LOWER))
def test_lower_precision_ops(name, case, dtype_name, tol):
    r_t, r_p = _run(case, dtype_name)
    assert r_t.dtype == getattr(torch, dtype_name)      # the list is what we think it is
    _check(r_t, r_p, tol)


@pytest.mark.parametrize("dtype_name,tol", DTYPES, ids=[d for d, _ in DTYPES])
@pytest.mark.parametrize("name,case", FP32, ids=_ids(FP32))
def test_float32_ops(name, case, dtype_name, tol):
    r_t, r_p = _run(case, dtype_name)
    assert r_t.dtype in (torch.float32, torch.complex64, torch.int64)
    # the inputs were rounded to the low dtype before the op: same rounding in both
    _check(r_t, r_p, 1e-4)


@pytest.mark.parametrize("dtype_name,tol", DTYPES, ids=[d for d, _ in DTYPES])
@pytest.mark.parametrize("name,case", UNLISTED, ids=_ids(UNLISTED))
def test_unlisted_ops_keep_input_dtypes(name, case, dtype_name, tol):
    r_t, r_p = _run(case, dtype_name)
    _check(r_t, r_p, tol)
    # the same call outside autocast gives the same dtype
    t = _inputs(torch)
    assert case(torch, TF, t, getattr(torch, dtype_name)).dtype == r_t.dtype


@pytest.mark.parametrize("dtype_name,tol", DTYPES, ids=[d for d, _ in DTYPES])
@pytest.mark.parametrize("name,case", PROMOTE, ids=_ids(PROMOTE))
def test_promote_ops(name, case, dtype_name, tol):
    r_t, r_p = _run(case, dtype_name)
    _check(r_t, r_p, tol)


# ---------------------------------------------------------------------------
# kernels inside the ops autocast cast for (dispatcher.parts_intercepted)
# ---------------------------------------------------------------------------

def test_norm_kernels_run_inside_autocast_ops():
    # autocast computes a norm of a bfloat16 input with float32 parameters in
    # float32 and is off inside it: the fused float32 kernels run there (they
    # fell back to a composite of ~10 ops while the autocast layer was on), so
    # the result has the bits of the same call outside autocast
    from ptcore._dispatch import dispatcher
    ptcore.manual_seed(0)
    x = ptcore.randn(8, 6, 5, 5).bfloat16()
    for make, inp in ((lambda: ptcore.nn.BatchNorm2d(6), x),
                      (lambda: ptcore.nn.LayerNorm(5), x),
                      (lambda: ptcore.nn.GroupNorm(3, 6), x)):
        ptcore.manual_seed(1)
        a, b = make(), make()
        with ptcore.no_grad():
            for p, q in zip(a.parameters(), b.parameters()):
                p.uniform_(0.5, 1.5)
                q.copy_(p)
        xa = inp.clone().requires_grad_()
        xb = inp.float().requires_grad_()
        with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
            assert dispatcher.parts_intercepted()
            ya = a(xa)
        yb = b(xb)
        assert ya.dtype == ptcore.bfloat16
        assert ptcore.equal(ya, yb.bfloat16())
        for s, t in zip(a.buffers(), b.buffers()):
            assert ptcore.equal(s, t)
    assert not dispatcher.parts_intercepted()


def test_a_mode_still_sees_the_parts_under_autocast():
    from ptcore._dispatch import dispatcher
    from ptcore.overrides import TorchFunctionMode

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16), Mode():
        assert dispatcher.parts_intercepted()
