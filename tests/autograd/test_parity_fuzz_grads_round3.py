"""Gradients (first and second order), grad_fn names and errors of ops
against torch (the oracle), round 3: differences found by differential
fuzzing."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from test_parity_fuzz_grads import _same  # noqa: E402  (round 1's comparison)

_NAN, _INF = float("nan"), float("inf")


# --- as_strided reaching outside its input's elements -----------------------

@pytest.mark.parametrize("f", [
    lambda M, a: a.clone()[2:].as_strided((3,), (1,), 0),
    lambda M, a: a[2:].as_strided((2, 2), (1, 2), 1),
    lambda M, a: a.exp()[2:].as_strided((3, 2), (1, 1), 0),        # overlapping
    lambda M, a: a.clone()[1:].view(5)[1:].as_strided((3,), (2,), 0),
    lambda M, a: a.clone()[2:].as_strided((3,), (1,), 0).as_strided((2,), (1,), 4),
    lambda M, a: M.as_strided(a.clone()[4:], (4,), (1,), 1),
    lambda M, a: a.clone().view(2, 3).t()[1:].as_strided((2, 2), (1, 3), 0),
])
def test_as_strided_below_the_inputs_offset_drops_the_storage_outside_it(f):
    # torch's as_strided_backward: g scattered over both extents, the input's
    # geometry read back (storage outside the input gets no gradient)
    _same(f, np.arange(6.) + 0.5, double=True)
    x = ptcore.arange(6., requires_grad=True)
    assert type(f(ptcore, x).grad_fn).__name__ == "AsStridedBackward0"


# --- sinc / logaddexp / logaddexp2: one node with torch's formula -----------

_X = [0., -0., 1e-310, 1e-160, 0.5, 1.5, -2., 3., _INF, -_INF, 1e308]
_Y = [0., 1., 0., 2e-160, 0.5, -1.5, -2., 1e-3, _INF, -_INF, -1e308]


def test_sinc_is_one_node_with_torchs_derivative_at_zero_and_underflow():
    _same(lambda M, x: M.sinc(x), _X, double=True)
    _same(lambda M, x: (x * 1).sinc_(), _X, double=True)
    for M in (torch, ptcore):
        x = M.tensor([0., 1.], requires_grad=True)
        assert type(M.sinc(x).grad_fn).__name__ == "SincBackward0"
        assert type(x.sinc().grad_fn).__name__ == "SincBackward0"
        assert type((x * 1).sinc_().grad_fn).__name__ == "SincBackward0"
        assert type(M.special.sinc(x).grad_fn).__name__ == "SincBackward0"


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_is_one_node_with_torchs_derivative(name):
    _same(lambda M, a, b: getattr(M, name)(a, b), _X, _Y, double=True)
    _same(lambda M, a, b: getattr(a, name)(b), np.arange(6.).reshape(2, 3) - 2,
          [[1.], [-1.]], double=True)
    for M in (torch, ptcore):
        a = M.tensor([0., 1.], requires_grad=True)
        y = getattr(M, name)(a, M.tensor([1., 1.]))
        assert type(y.grad_fn).__name__ == name.title() + "Backward0"
        assert y.grad_fn._saved_other.tolist() == [1., 1.]


def test_complex_sinc_and_logaddexp_gradients_conjugate_the_derivative():
    x = np.array([0.3 + 0.2j, 1 + 1j, 0j])
    y = np.array([0.1 - 0.5j, -1 + 2j, 2j])
    g = np.array([1 + 2j, 0.5 - 1j, 1j])
    res = []
    for M in (torch, ptcore):
        a = M.tensor(x, requires_grad=True)
        b = M.tensor(y, requires_grad=True)
        res.append([t.detach().numpy() for t in
                    M.autograd.grad(M.sinc(a), a, M.tensor(g)) +
                    M.autograd.grad(M.logaddexp(a, b), (a, b), M.tensor(g))])
    for p, t in zip(res[1], res[0]):
        np.testing.assert_allclose(p, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["sinc", "logaddexp", "logaddexp2"])
def test_forward_ad_of_sinc_and_logaddexp(name):
    x = np.array([0.3, -1.2, 0., 2.5, 1e-170])
    t = np.array([1., 2., 3., -1., 1.])
    res = []
    for M in (torch, ptcore):
        f = getattr(M, name)
        fn = f if name == "sinc" else (lambda a, _f=f: _f(a, a.flip(0) * 0.5))
        X, T = M.tensor(x), M.tensor(t)
        res.append([M.func.jvp(fn, (X,), (T,))[1].numpy(),
                    M.func.jacfwd(fn)(X).numpy(), M.func.hessian(lambda a: fn(a).sum())(X).numpy()])
    for p, t_ in zip(res[1], res[0]):
        np.testing.assert_allclose(p, t_, rtol=1e-10, atol=1e-12, equal_nan=True)


# --- node names and not-implemented derivatives ------------------------------

def _node_and_error(M, f):
    a = M.tensor([[1.5, 0.7, 2.], [0.6, 1.2, 0.9], [1.1, 0.8, 1.3]], dtype=M.float64,
                 requires_grad=True)
    y = f(M, a)
    y = y[0] if isinstance(y, tuple) else y
    try:
        y.sum().backward()
        err = None
    except Exception as e:     # the type only: torch's and ptcore's wording differ
        err = type(e)
    return type(y.grad_fn).__name__, y.grad_fn.name(), err


@pytest.mark.parametrize("f", [
    lambda M, a: M.cummin(a, 1),
    lambda M, a: a.cummin(0),
    lambda M, a: M.igamma(a, a),
    lambda M, a: M.igammac(a, a),
    lambda M, a: M.special.gammaincc(a, a),
    lambda M, a: M.polygamma(1, a),
    lambda M, a: M.geqrf(a),
    lambda M, a: M.linalg.lu(a)[1],
    lambda M, a: M.linalg.ldl_factor(a @ a.mT),
    lambda M, a: M.unique(a),
    lambda M, a: M.unique(a, dim=0),
    lambda M, a: a.unique(sorted=False, return_counts=True),
    lambda M, a: M.unique_consecutive(a),
    lambda M, a: a.unique_consecutive(dim=1),
    lambda M, a: M.heaviside(a, a),
    lambda M, a: M.floor_divide(a, a),
    lambda M, a: a // 2,
    lambda M, a: M.histogram(a, bins=3),
    lambda M, a: a.histogram(M.tensor([0., 1., 2.], dtype=M.float64))[1],
])
def test_node_names_and_not_implemented_errors_as_torchs(f):
    # ops torch has no derivative for get its autograd fallback's node
    # (NotImplemented, RuntimeError at backward); derivatives.yaml's
    # not_implemented() names the node after the ATen op (NotImplementedError)
    assert _node_and_error(ptcore, f) == _node_and_error(torch, f)


# --- pdist: torch's backward kernel -------------------------------------------

@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, _INF])
def test_pdist_gradient_is_torchs_kernel_ties_and_zero_distances(p):
    # rows 2 and 3 coincide (distance 0); p = inf: several coordinates tie for
    # the largest |diff| and each takes the whole gradient
    x = [[0., 1., 2.], [1., 2., 3.], [1., 0., 2.], [1., 0., 2.]]
    _same(lambda M, a: M.pdist(a, p), x)
    _same(lambda M, a: M.nn.functional.pdist(a[:, :2] * 2, p), x)
    for M in (torch, ptcore):
        a = M.tensor(x, dtype=M.float64, requires_grad=True)
        y = M.pdist(a, p)
        assert type(y.grad_fn).__name__ == "PdistBackward0" and y.grad_fn._saved_p == p
        g, = M.autograd.grad(y.sum(), a, create_graph=True)
        assert type(g.grad_fn).__name__ == "PdistBackwardBackward0"
        with pytest.raises(NotImplementedError, match="_pdist_backward"):
            g.sum().backward()


def test_pdist_of_one_row_is_empty_with_a_zero_gradient():
    _same(lambda M, a: M.pdist(a), [[1., 2.]])
    _same(lambda M, a: M.pdist(a, _INF), [[1., 2., 3.]])
    # (no zero-row input: torch's backward of pdist of a (0, 3) NumPy array,
    # strides (0, 0), crashes)


# --- loss weights that require grad -------------------------------------------

def _loss_cases(M):
    F = M.nn.functional
    rs = np.random.RandomState(0)
    X, P01 = rs.randn(4, 3), rs.rand(4, 3) * 0.8 + 0.1
    t = M.tensor([0, 2, 1, 2])
    w3, w43 = M.tensor(rs.rand(3) + 0.5), M.tensor(rs.rand(4, 3) + 0.5)
    x, p = M.tensor(X), M.tensor(P01)
    y = (x > 0).to(x.dtype)
    return [
        lambda x, w: F.nll_loss(x.log_softmax(1), t, weight=w * w3),
        lambda x, w: F.nll_loss(x.log_softmax(1), t, weight=w * w3, reduction="none"),
        lambda x, w: F.nll_loss(x.reshape(1, 3, 2, 2).log_softmax(1), t.reshape(1, 2, 2),
                                weight=w * w3),
        lambda x, w: F.nll_loss(x.reshape(2, 3, 2).log_softmax(1), t.reshape(2, 2),
                                weight=w * w3),
        lambda x, w: F.cross_entropy(x, t, weight=w * w3),
        lambda x, w: F.cross_entropy(x, t, weight=w * w3, label_smoothing=0.1),
        lambda x, w: F.cross_entropy(x, t, weight=(w * w3)[:2]),     # (before the size check)
        lambda x, w: M.nn.CrossEntropyLoss(weight=w * w3)(x, t),
        lambda x, w: F.multi_margin_loss(x, t, weight=w * w3),
        lambda x, w: F.binary_cross_entropy(x.sigmoid(), p, weight=w * w43),
        lambda x, w: F.binary_cross_entropy(x.sigmoid(), p * 3, weight=w * w43),  # (before range)
        lambda x, w: F.binary_cross_entropy_with_logits(x, y, weight=w * w43),
        lambda x, w: F.binary_cross_entropy_with_logits(x, y, pos_weight=w * w3),
        # soft-target cross entropy and multilabel_soft_margin_loss are composites:
        # their weight is differentiable
        lambda x, w: F.cross_entropy(x, p.softmax(1), weight=w * w3),
        lambda x, w: F.multilabel_soft_margin_loss(x, y, weight=w * w3),
    ], x


@pytest.mark.parametrize("k", range(15))
def test_loss_weight_that_requires_grad_is_refused_at_forward_as_torch(k):
    res = []
    for M in (torch, ptcore):
        fs, x = _loss_cases(M)
        for grad_mode, xr in ((True, True), (True, False), (False, True)):
            w = M.tensor(1.5, dtype=x.dtype, requires_grad=True)
            a = x.clone().requires_grad_(xr)
            try:
                with M.set_grad_enabled(grad_mode):
                    out = fs[k](a, w)
                    g = M.autograd.grad(out.sum(), (w,))[0].item() if out.requires_grad else None
                res.append(("ok", g))
            except RuntimeError as e:
                res.append((type(e), "not differentiable with respect to argument" in str(e)))
    n = len(res) // 2
    for p_, t_ in zip(res[n:], res[:n]):
        assert p_[0] == t_[0] and (p_[1] == t_[1] if p_[0] != "ok" or t_[1] is None
                                   else np.isclose(p_[1], t_[1])), (res[n:], res[:n])


# --- cholesky_solve / cholesky_inverse / matrix_exp: torch's formulas ---------

_RS = np.random.RandomState(5)
_L = np.tril(_RS.rand(3, 3) + 1)
_A = _RS.randn(3, 3)


@pytest.mark.parametrize("f, arrays", [
    (lambda M, b, l: M.cholesky_solve(b, l), (_RS.randn(3, 2), _L)),
    (lambda M, b, l: M.cholesky_solve(b, l.mT, upper=True), (_RS.randn(3, 2), _L)),
    (lambda M, b, l: b.cholesky_solve(l), (_RS.randn(2, 3, 2), _A + 3 * np.eye(3))),
    (lambda M, l: M.cholesky_inverse(l), (_L,)),
    (lambda M, l: M.cholesky_inverse(l, upper=True), (_A + 3 * np.eye(3),)),
    (lambda M, l: l.cholesky_inverse(), (np.stack([_L, 2 * _L.T]),)),
    (lambda M, a: M.matrix_exp(a), (_A,)),
    (lambda M, a: M.linalg.matrix_exp(a), (_RS.randn(2, 3, 3),)),
])
def test_cholesky_solve_inverse_and_matrix_exp_nodes_as_torchs(f, arrays):
    # the whole factor (not only the triangle the LAPACK call reads) gets
    # torch's gradient; one node each
    _same(f, *arrays, double=True)
    names = [type(f(M, *[M.tensor(a, requires_grad=True) for a in arrays]).grad_fn).__name__
             for M in (torch, ptcore)]
    assert names[0] == names[1]


# --- ldexp / frexp / mvlgamma / fill: one node with torch's formula ----------

_XS = [0.3, -1.2, 2.5, 4., 1e-3, 0.]
_YS = [1., 2., -1., 3., 0.5, -2.]


@pytest.mark.parametrize("f, arrays", [
    (lambda M, a, b: M.ldexp(a, b), (_XS, _YS)),
    (lambda M, a, b: (a * 1).ldexp_(b), (_XS, _YS)),
    # (non-negative integer exponents: torch's 2 ** other of an integer tensor is
    # an integer power, 0 for a negative one -- a torch bug not copied)
    (lambda M, a: a.ldexp(M.tensor([1, 2, 3, 1, 0, 4])), (_XS,)),
    (lambda M, a: M.frexp(a)[0], (_XS,)),
    (lambda M, a: a.frexp().mantissa * 3, (_XS,)),
    (lambda M, a: M.mvlgamma(a + 5, 3), (_XS,)),
    (lambda M, a: (a + 5).mvlgamma_(2), (_XS,)),
    (lambda M, a: M.special.multigammaln(a + 5, 1), (_XS,)),
    (lambda M, a: M.fill(a, 2.), (_XS,)),
    (lambda M, a, b: M.fill(a, b.sum()), (_XS, _YS)),
    (lambda M, a, b: M.fill(a.detach(), b[0]), (_XS, _YS)),
])
def test_ldexp_frexp_mvlgamma_fill_nodes_as_torchs(f, arrays):
    _same(f, *arrays, double=True)
    nodes = []
    for M in (torch, ptcore):
        y = f(M, *[M.tensor(a, dtype=M.float64, requires_grad=True) for a in arrays])
        nodes.append((type(y.grad_fn).__name__,
                      sorted(n for n in dir(y.grad_fn) if n.startswith("_saved"))))
    assert nodes[0] == nodes[1]


# --- Tensor.where: the method's argument order --------------------------------

def test_where_method_gradients_and_tangents_follow_self_condition_other():
    m = np.array([[True, False], [False, True]])
    _same(lambda M, a, b: a.where(M.tensor(m), b), [[1., 2.], [3., 4.]], [5., 6.], double=True)
    _same(lambda M, a: (a * a).where(M.tensor(m), 2.0), [[1., 2.], [3., 4.]], double=True)
    _same(lambda M, a, b: M.where(M.tensor(m), a, b), [[1., 2.], [3., 4.]], [5., 6.])
    res = []
    for M in (torch, ptcore):
        a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        y = a.where(M.tensor(m), 1.0)
        res.append((len(y.grad_fn.next_functions), y.grad_fn._saved_condition.tolist()))
        x, t = M.tensor([1., 2.]), M.tensor([3., 4.])
        c = M.tensor([True, False])
        res.append([M.func.jvp(f, (x,), (t,))[1].tolist() for f in (
            lambda u: u.where(c, x * 2), lambda u: x.where(c, u), lambda u: M.where(c, u, 0.))])
    assert res[:2] == res[2:]


# --- dist / block_diag / diagflat: torch's nodes ------------------------------

_DA, _DB = [[1., 2., 3.], [0., -1., 2.]], [[1., 0., 1.], [2., -1., 0.]]


@pytest.mark.parametrize("p", [0.5, 1, 1.5, 2, 3, _INF, -_INF])
def test_dist_is_one_node_with_norm_backward(p):
    # (no second derivative at p in {1, inf}: torch's raises there)
    double = p not in (1, _INF, -_INF)
    _same(lambda M, a, b: M.dist(a, b, p), _DA, _DB, double=double)
    _same(lambda M, a, b: a.dist(b[0], p), _DA, _DB, double=double)
    for M in (torch, ptcore):
        y = M.dist(M.tensor(_DA, requires_grad=True), M.tensor(_DB), p)
        assert type(y.grad_fn).__name__ == "DistBackward0" and y.grad_fn._saved_p == p


def test_block_diag_and_diagflat_nodes_as_torchs():
    _same(lambda M, a, b, c: M.block_diag(a, b, c), [[1., 2.], [3., 4.]], [5., 6., 7.], 3.,
          double=True)
    _same(lambda M, a, b: M.block_diag(a, b.int(), a[:0], a * 2), [[1., 2.], [3., 4.]],
          [5., 6., 7.])
    _same(lambda M, a, b: M.block_diag(a, b.to(M.complex128)).abs(), [[1., 2.], [3., 4.]],
          [5., 6., 7.])
    _same(lambda M, a: M.diagflat(a.t(), 1) * M.arange(25.).reshape(5, 5), [[1., 2.], [3., 4.]])
    _same(lambda M, a: (a * a).diagflat(-1), [1., 2., 3.], double=True)
    res = []
    for M in (torch, ptcore):
        a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        for y in (M.block_diag(a, a[0]), M.diagflat(a), a[0].diagflat(2)):
            res.append((type(y.grad_fn).__name__,
                        [type(n[0]).__name__ for n in y.grad_fn.next_functions]))
    assert res[:3] == res[3:]


# --- cdist: torch's _cdist_backward kernel -------------------------------------

_C1 = [[1., 2., 2., -1.], [0., 0., 3., 3.], [0.5, -0.5, 0., 1e-3]]
_C2 = [[1., 2., 2., -1.], [1., 0., 2., 3.]]


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, _INF])
def test_cdist_gradient_is_torchs_kernel_and_not_differentiable_again(p):
    mode = "donot_use_mm_for_euclid_dist"
    _same(lambda M, a, b: M.cdist(a, b, p, compute_mode=mode), _C1, _C2)
    _same(lambda M, a, b: M.cdist(a.expand(2, 3, 4), b.unsqueeze(0), p), _C1, _C2)
    _same(lambda M, a: M.cdist(a, a, p, compute_mode=mode), _C1)
    for M in (torch, ptcore):
        a = M.tensor(_C1, dtype=M.float64, requires_grad=True)
        y = M.cdist(a, M.tensor(_C2, dtype=M.float64), p)
        assert type(y.grad_fn).__name__ == "CdistBackward0" and y.grad_fn._saved_p == p
        g, = M.autograd.grad(y.sum(), a, create_graph=True)
        with pytest.raises(NotImplementedError, match="_cdist_backward"):
            g.sum().backward()


# --- unsafe_split / unsafe_chunk: pieces that are not views -------------------

@pytest.mark.parametrize("split", [
    lambda M, b: M.unsafe_split(b, 2),
    lambda M, b: b.unsafe_chunk(2, 1),
    lambda M, b: M.unsafe_split_with_sizes(b, [1, 3]),
])
def test_unsafe_split_pieces_are_not_views_of_the_input(split):
    # torch: one Unsafe*Backward0 node; writing into a piece in place leaves
    # the input's history (and its gradient) alone
    res = []
    for M in (torch, ptcore):
        a = M.arange(8., dtype=M.float64).reshape(4, 2).requires_grad_()
        b = a * 1
        p = split(M, b)
        r = [p[0]._base is None, type(p[0].grad_fn).__name__, p[-1].grad_fn is p[0].grad_fn]
        p[0].mul_(2)
        r += [type(p[0].grad_fn).__name__, type(b.grad_fn).__name__]
        r.append(M.autograd.grad(sum(x.sum() * (i + 1) for i, x in enumerate(p)), a)[0].tolist())
        res.append(r)
    assert res[0] == res[1]


def test_round_with_decimals_is_round_backward1():
    for M in (torch, ptcore):
        a = M.tensor([1.26, 2.5], requires_grad=True)
        names = [type(f().grad_fn).__name__ for f in (
            lambda: M.round(a), lambda: M.round(a, decimals=0), lambda: a.round(decimals=1),
            lambda: M.special.round(a), lambda: (a * 1).round_(decimals=1))]
        assert names == ["RoundBackward0"] + ["RoundBackward1"] * 4


def test_norm_second_derivative_through_the_gradient_at_a_zero_vector():
    # torch's p = 2 norm backward is grad * (self / norm).masked_fill_(norm == 0, 0):
    # differentiating the gradient w.r.t. grad's inputs gives 0 there, not nan
    x = np.random.RandomState(2).randn(4, 6)
    _same(lambda M, a, b: M.nn.functional.cosine_similarity(a, b * 0), x, x, double=True)
    _same(lambda M, a, b: M.linalg.vector_norm(a * b), x, x * 0, double=True)
    _same(lambda M, a: a.norm(dim=0) * a.sum(), np.zeros((3, 2)), double=True)


@pytest.mark.parametrize("f", [
    lambda M, x: M.nn.functional.multi_margin_loss(x, M.tensor([0, 2, 1, 5])),
    lambda M, x: M.nn.functional.multi_margin_loss(x, M.tensor([0, 2, 1, 5]), p=2,
                                                   reduction="none"),
    lambda M, x: M.nn.functional.multilabel_margin_loss(x, M.tensor([[0, 2, -1, 0, 0, 0]] * 4)),
])
def test_margin_loss_gradients_are_not_differentiable_again(f):
    # torch's *_margin_loss_backward kernels have no derivative: the gradient
    # gets its autograd fallback's NotImplemented node
    x = np.random.RandomState(0).randn(4, 6)
    _same(f, x)
    res = []
    for M in (torch, ptcore):
        a = M.tensor(x, requires_grad=True)
        g, = M.autograd.grad(f(M, a).sum(), a, create_graph=True)
        with pytest.raises(RuntimeError, match="margin_loss_backward"):
            g.sum().backward()
        res.append((type(g.grad_fn).__name__, g.grad_fn.name(),
                    [type(n[0]).__name__ for n in g.grad_fn.next_functions]))
    assert res[0] == res[1]


def test_hardsigmoid_gradient_is_not_differentiable_again():
    res = []
    for M in (torch, ptcore):
        # (float32: torch's float64 kernel scales by the float 1/6, 0.16666667163)
        x = M.tensor([-4., 0., 1., 3., -3., 2.9], requires_grad=True)
        g, = M.autograd.grad(M.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        r = [g.tolist(), type(g.grad_fn).__name__, len(g.grad_fn.next_functions)]
        with pytest.raises(RuntimeError, match="hardsigmoid_backward"):
            g.sum().backward()
        # (forward AD keeps working, as torch's)
        r.append(M.func.jvp(M.nn.functional.hardsigmoid, (x.detach(),),
                            (M.ones(6),))[1].tolist())
        res.append(r)
    assert res[0] == res[1]


@pytest.mark.parametrize("driver", [None, "gelsd", "gelss", "gels"])
def test_lstsq_residuals_are_differentiable(driver):
    # torch: the solution and the residuals have gradients (d|AX - B|^2 at the
    # least-squares X), rank and singular_values none
    rs = np.random.RandomState(0)
    a, b = rs.rand(5, 3), rs.rand(5, 2)
    _same(lambda M, x, y: (lambda r: r[0].sum() + r[1].sum() * 3)(
        M.linalg.lstsq(x, y, driver=driver)), a, b, double=True)
    _same(lambda M, x, y: M.linalg.lstsq(x.expand(2, 5, 3), y.expand(2, 5, 2),
                                         driver=driver)[1], a, b, double=True)
    for M in (torch, ptcore):
        r = M.linalg.lstsq(M.tensor(a, requires_grad=True), M.tensor(b), driver="gelsd")
        assert [t.requires_grad for t in r] == [True, True, False, False]


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_triangular_solve_is_torchs_node(upper, transpose, unitriangular):
    rs = np.random.RandomState(0)
    a, b = rs.randn(3, 3) + 3 * np.eye(3), rs.randn(3, 2)
    with pytest.warns(UserWarning):
        _same(lambda M, x, y: (lambda r: r[0].sum() + (r[1] * M.arange(9.).reshape(3, 3)).sum())(
            M.triangular_solve(x, y, upper, transpose, unitriangular)), b, a, double=True)
    with pytest.warns(UserWarning):
        names = [[type(t.grad_fn).__name__ for t in M.triangular_solve(
            M.tensor(b, requires_grad=True), M.tensor(a, requires_grad=True), upper)]
            for M in (torch, ptcore)]
    assert names[0] == names[1] == ["TriangularSolveBackward0"] * 2
