"""Backward formulas of the linear-algebra ops (products, solves, factorisations,
SVD/QR/eigen decompositions, LU), written with ptcore ops as the others in
:mod:`ptcore.autograd._formulas`, into its ``FORMULAS`` table."""
import math
import ptcore as P
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch.declarations import DECLARED
from ptcore._tensor import _TensorBase
from ptcore.autograd._record_fast import record_addmm as _record_addmm
from ptcore.autograd._record import attach, save, save_out, _is_diff, _Plain, not_implemented
from ptcore.autograd.graph import SavedTensor, node_class, current_output_mask
from ptcore.autograd.graph import _sum_to
from ptcore.linalg._extra import _lu_backward
from ptcore.autograd._formulas import FORMULAS, _T, _c, _scalar_like, builtins_max, formula


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------

def _mT(t):
    return t.transpose(-2, -1)


def _H(t):
    return _c(t.transpose(-2, -1))


def _is_transposed(t):
    """A 2-D real tensor laid out as the transpose of a contiguous matrix
    (``W.t()``): its gradient is best computed in the same layout, as
    PyTorch's mm_mat*_backward does, so that no copy is needed later."""
    return isinstance(t, _TensorBase) and t._is_t2d()


def _mm_grad_a(g, b, a_transposed):
    # d/da (a @ b) = g @ b^H, in a's layout when a is a transposed matrix
    # (torch's mm_mat1_backward: b.t().conj(), recorded as TBackward0 under create_graph)
    if a_transposed:
        return b.mm(g.t()).t()
    return g.mm(_c(b.t()))


def _mm_grad_b(g, a, b_transposed):
    # d/db (a @ b) = a^H @ g, in b's layout when b is a transposed matrix
    if b_transposed:
        return g.t().mm(a).t()
    return _c(a.t()).mm(g)


# the out_dtype= overloads (aten::mm.dtype & co., the ops declaring out_dtype) have no
# derivative in torch: its autograd fallback's NotImplemented node, backward raises
# RuntimeError
_OUT_DTYPE_NOT_IMPLEMENTED = {n: not_implemented(n, fallback=True)
                              for (g, n), d in DECLARED.items() if d.out_dtype is not None}


@formula("mm")
def _mm(out, a, b, out_dtype=None, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["mm"](out, a, b)
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None
    ta, tb = _is_transposed(a), _is_transposed(b)

    def bw(g):
        m = current_output_mask()       # (the gradients this pass uses, as torch's mm_backward)
        ga = _mm_grad_a(g, sb.unpack(), ta) if sb is not None and (m is None or m[0]) else None
        gb = _mm_grad_b(g, sa.unpack(), tb) if sa is not None and (m is None or m[1]) else None
        return ga, gb
    node = attach("MmBackward0", out, (a, b), bw)
    if node is not None:
        # grad_fn._saved_self / _saved_mat2 (None when not needed) and their geometry
        node._sv = (sa, sb, tuple(a.shape), tuple(a.stride()), tuple(b.shape),
                    tuple(b.stride()))


node_class("MmBackward0", saved=("self", "mat2", "self_sym_sizes", "self_sym_strides",
                                 "mat2_sym_sizes", "mat2_sym_strides"),
           scalars=("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"))


@formula("bmm")
def _bmm(out, a, b, out_dtype=None, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["bmm"](out, a, b)
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None

    def bw(g):
        m = current_output_mask()       # (the gradients this pass uses, as torch's)
        ga = g.bmm(_H(sb.unpack())) if sb is not None and (m is None or m[0]) else None
        gb = _H(sa.unpack()).bmm(g) if sa is not None and (m is None or m[1]) else None
        return ga, gb
    attach("BmmBackward0", out, (a, b), bw)


@formula("matmul", "__matmul__")
def _matmul(out, a, b, **k):
    if not (_T(a) and _T(b)):
        return
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None
    ashape, bshape = tuple(a.shape), tuple(b.shape)

    def bw(g):
        a1, b1 = len(ashape) == 1, len(bshape) == 1
        m = current_output_mask()       # (the gradients this pass uses, as torch's)
        ua = sb if m is None or m[0] else None
        ub = sa if m is None or m[1] else None
        if a1 and b1:
            ga = g * _c(ua.unpack()) if ua is not None else None
            gb = g * _c(ub.unpack()) if ub is not None else None
            return ga, gb
        if a1:
            g = g.unsqueeze(-2)
        if b1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if ua is not None:
            bb = ua.unpack()
            bb = bb.unsqueeze(-1) if b1 else bb
            ga = P.matmul(g, _H(bb))
            ga = _sum_to_batch(ga, (1,) + ashape if a1 else ashape)
            if a1:
                ga = ga.reshape(ashape)
        if ub is not None and len(ashape) >= 3 and len(bshape) == 2:
            # (..., n, k) @ (k, m), a linear layer's: the batch folds into the
            # rows, one product (not a batched one summed over the batch)
            rows = math.prod(ashape[:-1])   # (not -1: ambiguous when a dim is 0)
            gb = _H(ub.unpack().reshape(rows, ashape[-1])).mm(g.reshape(rows, bshape[-1]))
        elif ub is not None:
            aa = ub.unpack()
            aa = aa.unsqueeze(-2) if a1 else aa
            gb = P.matmul(_H(aa), g)
            gb = _sum_to_batch(gb, bshape + (1,) if b1 else bshape)
            if b1:
                gb = gb.reshape(bshape)
        return ga, gb
    node = attach(_matmul_node(len(ashape), len(bshape), a), out, (a, b), bw)
    if node is not None and len(ashape) == 2 == len(bshape):
        node._sv = (sa, sb, ashape, tuple(a.stride()), bshape, tuple(b.stride()))


_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
                 (2, 2): "MmBackward0"}


def _matmul_node(da, db, a):
    """The grad_fn torch's matmul shows: that of the last op of its
    decomposition (dot, mv, mm, squeeze_, the transposed fold's clone, or
    the batched result's _unsafe_view)."""
    if (da, db) in _MATMUL_NODES:
        return _MATMUL_NODES[da, db]
    if da <= 2 and db >= 3 and _T(a) and a._requires_grad:
        return "CloneBackward0"
    return "UnsafeViewBackward0"


def _sum_to_batch(g, shape):
    return _sum_to(g, tuple(shape))


@formula("mv")
def _mv(out, a, v, **k):
    sa, sv = save(a), save(v)

    def bw(g):
        return g.unsqueeze(1) * _c(sv.unpack()).unsqueeze(0), _H(sa.unpack()).mv(g)
    attach("MvBackward0", out, (a, v), bw)


@formula("dot", "inner_1d")
def _dot(out, a, b, **k):
    sa, sb = save(a), save(b)
    attach("DotBackward0", out, (a, b), lambda g: (g * _c(sb.unpack()), g * _c(sa.unpack())))


@formula("vdot")
def _vdot(out, a, b, **k):
    sa, sb = save(a), save(b)
    attach("VdotBackward0", out, (a, b), lambda g: (_c(g) * sb.unpack(), g * sa.unpack()))


@formula("outer", "ger")
def _outer(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        return g.mv(_c(sb.unpack())), g.t().mv(_c(sa.unpack()))
    attach("MulBackward0", out, (a, b), bw)     # torch: a.unsqueeze(1) * b


_ADDMM_NODE = node_class("AddmmBackward0")


@formula("addmm")
def _addmm(out, inp, m1, m2, out_dtype=None, *, beta=1, alpha=1, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["addmm"](out, inp, m1, m2)
    # (complex alpha/beta: the gradient takes their conjugates, as torch's; a
    # Linear's default 1s are ints)
    if type(beta) is not int:
        beta = _c(beta)
    if type(alpha) is not int:
        alpha = _c(alpha)
    _record_addmm(_ADDMM_NODE, out, inp, m1, m2, beta, alpha, SavedTensor, _addmm_backward)


def _addmm_backward(s1, s2, t1, t2, ishape, beta, alpha, g):
    """addmm's gradients: ``s1``/``s2`` the saved mat1/mat2 (None where not
    needed), ``t1``/``t2`` whether they were transposed matrices, ``ishape``
    the input's shape (None: no gradient)."""
    m = current_output_mask()       # (the gradients this pass uses, as torch's)
    # (the bias's: its broadcast reduction skipped too when not used)
    gi = None if m is not None and not m[0] else g if beta == 1 else g * beta
    if gi is not None and ishape is not None and tuple(gi.shape) != ishape:
        gi = _sum_to(gi, ishape)    # (what the engine would do, without its checks)
    g1 = _mm_grad_a(g, s2.unpack(), t1) if s2 is not None and (m is None or m[1]) else None
    g2 = _mm_grad_b(g, s1.unpack(), t2) if s1 is not None and (m is None or m[2]) else None
    if alpha != 1:
        g1 = g1 * alpha if g1 is not None else None
        g2 = g2 * alpha if g2 is not None else None
    return gi, g1, g2


@formula("addmv")
def _addmv(out, inp, m, v, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    sm, sv = save(m), save(v)

    def bw(g):
        return (g * beta, g.unsqueeze(1) * _c(sv.unpack()).unsqueeze(0) * alpha,
                _H(sm.unpack()).mv(g) * alpha)
    attach("AddmvBackward0", out, (inp, m, v), bw)


@formula("addr")
def _addr(out, inp, v1, v2, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(v1), save(v2)

    def bw(g):
        return (g * beta, g.mv(_c(s2.unpack())) * alpha, g.t().mv(_c(s1.unpack())) * alpha)
    attach("AddrBackward0", out, (inp, v1, v2), bw)


@formula("baddbmm")
def _baddbmm(out, inp, b1, b2, out_dtype=None, *, beta=1, alpha=1, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["baddbmm"](out, inp, b1, b2)
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(b1), save(b2)

    def bw(g):
        m = current_output_mask()       # (the gradients this pass uses, as torch's)
        return ((g * beta) if m is None or m[0] else None,
                (g.bmm(_H(s2.unpack())) * alpha) if m is None or m[1] else None,
                (_H(s1.unpack()).bmm(g) * alpha) if m is None or m[2] else None)
    attach("BaddbmmBackward0", out, (inp, b1, b2), bw)


@formula("addbmm")
def _addbmm(out, inp, b1, b2, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(b1), save(b2)

    def bw(g):
        n = s1.unpack().shape[0]
        ge = g.unsqueeze(0).expand(n, *g.shape)
        return (g * beta, ge.bmm(_H(s2.unpack())) * alpha, _H(s1.unpack()).bmm(ge) * alpha)
    attach("AddbmmBackward0", out, (inp, b1, b2), bw)


@formula("inverse", "linalg_inv")
def _inverse(out, a, **k):
    so = save_out(out)

    def bw(g):
        y = so.unpack()
        return (-P.matmul(P.matmul(_H(y), g), _H(y)),)
    attach("LinalgInvExBackward0", out, (a,), bw)


@formula("cholesky_solve")
def _cholesky_solve(out, b, L, upper=False, **k):
    # torch's cholesky_solve_backward: the whole of input2 gets a gradient
    # (not only the triangle the solve reads)
    node_class("CholeskySolveBackward0", saved=("input2", "self", "result"), scalars=("upper",))
    sL, sb, so = save(L), save(b), save_out(out)

    def bw(g):
        L, x = sL.unpack(), so.unpack()
        gb = P.cholesky_solve(g, L, upper)
        common = P.matmul(gb, _H(x))
        common = common + _H(common)
        gL = -P.matmul(L, common) if upper else -P.matmul(common, L)
        return gb, gL
    node = attach("CholeskySolveBackward0", out, (b, L), bw)
    if node is not None:
        node._sv = (sL, sb, so, _Plain(upper))


@formula("cholesky_inverse")
def _cholesky_inverse(out, L, upper=False, **k):
    # torch's cholesky_inverse_backward (the whole input gets a gradient)
    node_class("CholeskyInverseBackward0", saved=("self", "upper", "result"), scalars=("upper",))
    sL, so = save(L), save_out(out)

    def bw(g):
        L, inv = sL.unpack(), so.unpack()
        common = P.matmul(inv, P.matmul(g + _H(g), inv))
        return (-P.matmul(L, common) if upper else -P.matmul(common, L),)
    node = attach("CholeskyInverseBackward0", out, (L,), bw)
    if node is not None:
        node._sv = (sL, _Plain(upper), so)


@formula("triangular_solve")
def _triangular_solve(out, b, A, upper=True, transpose=False, unitriangular=False, **k):
    # torch's triangular_solve_backward: the solution's gradient solves with
    # A^H (A's conjugate when transposed), A's is the product with the
    # solution on A's triangle; the cloned coefficient's gradient adds to A's
    X, M = out[0], out[1]
    if not _is_diff(X):
        return
    sA, sX = save(A), save_out(X, 0)

    def bw(gX, gM=None):
        A, x = sA.unpack(), sX.unpack()
        gb = gA = None
        if gX is not None:
            T = _c(A) if transpose else _H(A)
            gb = P.linalg.solve_triangular(T, gX, upper=upper if transpose else not upper,
                                           unitriangular=unitriangular)
            gA = -P.matmul(_c(x), gb.mT) if transpose else -P.matmul(gb, _H(x))
            gA = gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))
        if gM is not None:
            gA = gM if gA is None else gA + gM
        return gb, gA
    attach("TriangularSolveBackward0", [X, M], (b, A), bw, multi=True, accepts_none=True)


@formula("matrix_exp")
def _matrix_exp(out, a, **k):
    # torch's linalg_matrix_exp_differential(A, grad, adjoint): the top right
    # block of exp([[A^H, G], [0, A^H]])
    node_class("LinalgMatrixExpBackward0", saved=("self",))
    sa = save(a)

    def bw(g):
        a = sa.unpack()
        n = a.shape[-1]
        ah = _H(a)
        m = P.cat([P.cat([ah, g], -1), P.cat([P.zeros_like(ah), ah], -1)], -2)
        return (P.matrix_exp(m)[..., :n, n:],)
    node = attach("LinalgMatrixExpBackward0", out, (a,), bw)
    if node is not None:
        node._sv = (sa,)


@formula("det", "linalg_det")
def _det(out, a, **k):
    sa, so = save(a), save_out(out)

    def bw(g):
        a, d = sa.unpack(), so.unpack()
        # torch: conj(det) * grad * A^-H, which is 0 for a singular matrix
        # (det == 0; its inverse does not exist, so no error either)
        if P.is_grad_enabled() and not _vmap_frames() and a.numel():
            # a recorded backward (create_graph): torch's formula for higher
            # derivatives, whose first derivative at |det| < 100 eps is the
            # cofactor matrix (through the SVD), not 0
            mask = d.abs() < 100 * P.finfo(a.dtype).eps
            if bool(mask.any()):
                return (_det_grad_recorded(a, g, d, mask),)
        dg = (g * _c(d)).unsqueeze(-1).unsqueeze(-1)
        # torch reuses the forward's LU, which for a contiguous real A is that of A^T (an
        # exactly singular A can have a rounding-sized pivot there): invert the same matrix
        tr = a.is_contiguous() and not a.dtype.is_complex
        inv = P.linalg.inv_ex(a.mT if tr else a).inverse
        singular = (d == 0).unsqueeze(-1).unsqueeze(-1)
        return (P.where(singular, P.zeros_like(inv), dg * (inv if tr else _H(inv))),)
    attach("LinalgDetBackward0", out, (a,), bw)


def _det_grad_recorded(a, g, d, mask):
    """torch's linalg_det_backward with grad mode on: conj(det) g A^-H where
    |det| >= 100 eps, and U diag(conj(det U det Vh) g prod_{j != i} s_j) Vh
    (A = U diag(s) Vh) for the (near-)singular matrices of ``mask``."""
    n = a.shape[-1]
    shape = a.shape
    a, g, d, mask = a.reshape(-1, n, n), g.reshape(-1), d.reshape(-1), mask.reshape(-1)
    res = P.zeros_like(a)
    keep = ~mask
    if bool(keep.any()):
        ak = a[keep]
        eye = P.eye(n, dtype=a.dtype, device=a.device)
        rk = P.linalg.solve(_H(ak), (g[keep] * _c(d[keep])).unsqueeze(-1).unsqueeze(-1) * eye)
        res = res.index_put((keep,), rk)
    U, S, Vh = P.linalg.svd(a[mask])
    alpha = _c(P.linalg.det(U) * P.linalg.det(Vh))
    ones = P.ones_like(S[..., :1])
    before = P.cat((ones, S[..., :-1]), -1).cumprod(-1)
    after = P.cat((ones, S[..., 1:].flip(-1)), -1).cumprod(-1).flip(-1)
    D = (g[mask] * alpha).unsqueeze(-1) * _c(before * after)
    res = res.index_put((mask,), (U * D.unsqueeze(-2)) @ Vh)
    return res.reshape(shape)


@formula("logdet")
def _logdet(out, a, **k):
    sa = save(a)

    def bw(g):
        A = sa.unpack()
        r = g.unsqueeze(-1).unsqueeze(-1) * _H(P.linalg.inv(A))
        if not A.dtype.is_complex:
            # torch's logdet is where(sign == -1, nan, logabsdet): no gradient reaches a matrix
            # with a negative determinant
            neg = (P.linalg.slogdet(A).sign < 0).unsqueeze(-1).unsqueeze(-1)
            r = P.where(neg, P.zeros_like(r), r)
        return (r,)
    attach("LogdetBackward0", out, (a,), bw)


@formula("slogdet", "linalg_slogdet")
def _slogdet(out, a, **k):
    sign, logabs = out[0], out[1]
    sa = save(a)
    ss = save_out(sign, 0) if a.dtype.is_complex else None

    def bw(gs, gl):
        A = sa.unpack()
        g = gl
        if A.dtype.is_complex and gs is not None:
            # torch: (g_abs - i Im(conj(g_sign) * sign)) A^-H (the sign moves with A's phase)
            gi = (_c(gs) * ss.unpack()).imag * 1j
            g = -gi if g is None else g - gi
        if g is None:
            return (None,)
        # A^-H through the LU as torch (lu_solve, adjoint): a singular A gives infs/nans,
        # not an error
        LU, piv = P.linalg.lu_factor_ex(A)[:2]
        n = A.shape[-1]
        eye = P.eye(n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, n)
        return (g.unsqueeze(-1).unsqueeze(-1) * P.linalg.lu_solve(LU, piv, eye, adjoint=True),)
    attach("LinalgSlogdetBackward0", [sign, logabs], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_solve")
def _solve(out, A, B, *, left=True, **k):
    sA, so = save(A), save_out(out)
    vec = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))

    def bw(g):
        A, X = sA.unpack(), so.unpack()
        if not left:
            # X A = B: gB = g A^-H, i.e. A gB^H = g^H
            gB = _H(P.linalg.solve(A, _H(g)))
            gA = -_H(X) @ gB
            return gA, gB
        gB = P.linalg.solve(_H(A), g)
        if vec:
            gA = -gB.unsqueeze(-1) * _c(X).unsqueeze(-2)
        else:
            gA = -gB @ _H(X)
        return gA, gB
    attach("LinalgSolveExBackward0", out, (A, B), bw)


def _phi(a):
    return a.tril(-1) + a.diagonal(0, -2, -1).diag_embed() * 0.5


@formula("cholesky", "linalg_cholesky")
def _cholesky(out, a, upper=False, **k):
    so = save_out(out)

    def bw(g):
        L = so.unpack()
        if upper:
            L, g = _H(L), _H(g)
        # torch: L^-H pi*(tril(L^H g)) L^-1, pi*(X) = (X + X^H - diag(X)) / 2: Hermitian
        # for real input; for complex the diagonal keeps X's imaginary part
        X = (_H(L) @ g).tril()
        M = 0.5 * (X + _H(X.tril(-1)))
        Linv = P.linalg.inv(L)
        return (_H(Linv) @ M @ Linv,)
    attach("LinalgCholeskyExBackward0", out, (a,), bw)


@formula("linalg_eigh")
def _eigh(out, a, UPLO="L", **k):
    w, V = out[0], out[1]
    sw, sV = save_out(w, 0), save_out(V, 1)

    def bw(gw, gV):
        w, V = sw.unpack(), sV.unpack()
        r = None
        if gV is not None:
            # torch: the skew-Hermitian part of V^H gV over the eigenvalue gaps (the
            # diagonal's gap taken as 1): a repeated eigenvalue gives nan/inf, as torch
            E = w.unsqueeze(-2) - w.unsqueeze(-1)
            n = E.shape[-1]
            E = P.where(P.eye(n, dtype=P.bool, device=E.device), 1, E)
            VhgV = _H(V) @ gV
            if VhgV.dtype.is_complex:
                im = VhgV.diagonal(0, -2, -1).imag
                if not P.allclose(im, P.zeros_like(im), rtol=1e-2, atol=1e-2):
                    raise RuntimeError(
                        "linalg_eigh_backward: The eigenvectors in the complex case are "
                        "specified up to multiplication by e^{i phi}. The specified loss "
                        "function depends on this quantity, so it is ill-defined.")
            r = 0.5 * (VhgV - _H(VhgV)) / E.to(VhgV.dtype)
        if gw is not None:
            d = gw.to(V.dtype).diag_embed()
            r = d if r is None else r + d
        gA = V @ r @ _H(V)
        return (0.5 * (gA + _H(gA)),)
    attach("LinalgEighBackward0", [w, V], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_eigvalsh")
def _eigvalsh(out, a, UPLO="L", **k):
    sa = save(a)

    def bw(g):
        w, V = P.linalg.eigh(sa.unpack(), UPLO=UPLO)
        gA = V @ g.to(V.dtype).diag_embed() @ _H(V)
        return (gA,)
    attach("LinalgEighBackward0", out, (a,), bw)          # (torch's: eigvalsh is eigh)


def _eig_backward(gL, gV, L, V, real_input):
    """torch's linalg_eig_backward (general, non-Hermitian A = V diag(L) V^-1):
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(L_j - L_i)) V^H,
    real part for a real A."""
    VH = _H(V)
    if gV is None:
        gA = P.linalg.solve(VH, gL.unsqueeze(-1) * VH)
    else:
        VhgV = VH @ gV
        diag = VhgV.diagonal(0, -2, -1)
        if not P.allclose(diag.imag, P.zeros_like(diag.imag), rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                "so it is ill-defined.")
        VhgV = VhgV - VH @ (V * diag.real.unsqueeze(-2))
        Lc = L.conj()
        E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
        E.diagonal(0, -2, -1).fill_(1.0)
        inner = VhgV / E
        if gL is not None:
            inner.diagonal(0, -2, -1).copy_(gL)
        gA = P.linalg.solve(VH, inner @ VH)
    return gA.real if real_input else gA


@formula("linalg_eig")
def _eig(out, a, **k):
    L, V = out[0], out[1]
    sL, sV = save_out(L, 0), save_out(V, 1)
    real_input = not a.dtype.is_complex

    def bw(gL, gV):
        return (_eig_backward(gL, gV, sL.unpack(), sV.unpack(), real_input),)
    attach("LinalgEigBackward0", [L, V], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_eigvals")
def _eigvals(out, a, **k):
    sa = save(a)
    real_input = not a.dtype.is_complex

    def bw(gL):
        L, V = P.linalg.eig(sa.unpack())
        return (_eig_backward(gL, None, L, V, real_input),)
    attach("LinalgEigBackward0", out, (a,), bw)     # torch's node (eigvals is linalg_eig)


@formula("trace")
def _trace(out, a, **k):
    shape = tuple(a.shape)

    def bw(g):
        n = min(shape)
        e = P.zeros(shape, dtype=g.dtype, device=g.device)
        e.diagonal().fill_(1) if not g._requires_grad else None
        if g._requires_grad:
            e = P.eye(shape[0], shape[1], dtype=g.dtype, device=g.device)
        return (e * g,)
    attach("TraceBackward0", out, (a,), bw)


@formula("kron")
def _kron(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        nd = max(a.dim(), b.dim())
        ash = (1,) * (nd - a.dim()) + tuple(a.shape)
        bsh = (1,) * (nd - b.dim()) + tuple(b.shape)
        gv = g.reshape(*[x for pair in zip(ash, bsh) for x in pair])
        ev = [2 * i for i in range(nd)]
        od = [2 * i + 1 for i in range(nd)]
        b_ = b.reshape(bsh)
        a_ = a.reshape(ash)
        ga = (gv * _c(b_).reshape(*[x for pair in zip((1,) * nd, bsh) for x in pair])).sum(od).reshape(a.shape)
        gb = (gv * _c(a_).reshape(*[x for pair in zip(ash, (1,) * nd) for x in pair])).sum(ev).reshape(b.shape)
        return ga, gb
    attach("KronBackward0", out, (a, b), bw)


# ---------------------------------------------------------------------------
# decompositions: SVD and QR
# ---------------------------------------------------------------------------

def _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """PyTorch's linalg.svd backward (U, S, Vh; the reduced part is used)."""
    if gU is None and gVh is None:
        if gS is None:
            return None
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        Uk, Vhk = U[..., :, :k], Vh[..., :k, :]
        return P.matmul(Uk * gS.unsqueeze(-2).to(U.dtype), Vhk)
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = gU[..., :, :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
    if gU is None:
        gU = P.zeros_like(U)
    if gVh is None:
        gVh = P.zeros_like(Vh)
    is_complex = U.dtype.is_complex
    V = _H(Vh)
    gV = _H(gVh)
    UhgU = _H(U) @ gU
    VhgV = _H(V) @ gV
    UhgU = UhgU - _H(UhgU)
    VhgV = VhgV - _H(VhgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + P.eye(k, dtype=E.dtype, device=E.device)
    Sc = S.to(U.dtype)
    ret = (UhgU * Sc.unsqueeze(-2) + Sc.unsqueeze(-1) * VhgV) / E.to(U.dtype)
    if gS is not None:
        ret = ret + gS.to(U.dtype).diag_embed()
    if is_complex:
        ret = ret + (UhgU.diagonal(0, -2, -1) / (2 * Sc)).diag_embed()
    if m > k:
        ret = U @ ret
        gUSinv = gU / Sc.unsqueeze(-2)
        ret = ret + gUSinv - U @ (_H(U) @ gUSinv)
        ret = ret @ Vh
    elif n > k:
        ret = ret @ Vh
        SinvgVh = gVh / Sc.unsqueeze(-1)
        ret = ret + SinvgVh - (SinvgVh @ V) @ Vh
        ret = U @ ret
    else:
        ret = U @ (ret @ Vh)
    return ret


@formula("linalg_svd")
def _linalg_svd(out, A, full_matrices=True, **k):
    U, S, Vh = out[0], out[1], out[2]
    sU, sS, sV = save_out(U, 0), save_out(S, 1), save_out(Vh, 2)

    def bw(gU, gS, gVh):
        return (_svd_backward(gU, gS, gVh, sU.unpack(), sS.unpack(), sV.unpack(), full_matrices),)
    attach("LinalgSvdBackward0", [U, S, Vh], (A,), bw, multi=True, accepts_none=True)


@formula("svd")
def _svd_old(out, A, some=True, compute_uv=True, **k):
    U, S, V = out[0], out[1], out[2]
    if not compute_uv:
        # as torch: S is differentiable (svdvals' backward), U and V are zeros
        return _svdvals(S, A)
    sU, sS, sV = save_out(U, 0), save_out(S, 1), save_out(V, 2)

    def bw(gU, gS, gV):
        gVh = _H(gV) if gV is not None else None
        return (_svd_backward(gU, gS, gVh, sU.unpack(), sS.unpack(), _H(sV.unpack()), not some),)
    attach("SvdBackward0", [U, S, V], (A,), bw, multi=True, accepts_none=True)


@formula("linalg_svdvals")
def _svdvals(out, A, **k):
    sA = save(A)

    def bw(gS):
        U, S, Vh = P.linalg.svd(sA.unpack(), full_matrices=False)
        return (_svd_backward(None, gS, None, U, S, Vh, False),)
    attach("LinalgSvdBackward0", out, (A,), bw)      # torch's node name (svdvals is _linalg_svd)


def _qr_backward_tall(gQ, gR, Q, R):
    """torch's linalg_qr_backward for ``m >= n`` (reduced): ``R`` square."""
    M = R @ _H(gR) - _H(gQ) @ Q
    low = M.tril(-1)
    d = M.diagonal(0, -2, -1)
    if M.dtype.is_complex:
        d = d.real.to(M.dtype)
    copyltu = low + _H(low) + d.diag_embed()
    X = gQ + Q @ copyltu
    # gA = X R^{-H}  <=>  R gA^H = X^H
    return _H(P.linalg.solve(R, _H(X)))


@formula("linalg_qr")
def _linalg_qr(out, A, mode="reduced", **k):
    Q, R = out[0], out[1]
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r" or (mode == "complete" and m > n):
        # torch's RuntimeErrors, raised when the backward reaches the node
        msg = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
               "through linalg.qr." if mode == "r" else
               "The QR decomposition is not differentiable when mode='complete' and "
               "nrows > ncols.")

        def bw_err(gQ, gR):
            raise RuntimeError(msg)
        return attach("LinalgQrBackward0", [Q, R], (A,), bw_err, multi=True, accepts_none=True)
    sQ, sR = save_out(Q, 0), save_out(R, 1)

    def bw(gQ, gR):
        Q, R = sQ.unpack(), sR.unpack()
        if gQ is None:
            gQ = P.zeros_like(Q)
        if gR is None:
            gR = P.zeros_like(R)
        if m >= n:
            return (_qr_backward_tall(gQ, gR, Q, R),)
        # wide (torch's case m < n): A = [X | Y], R = [U | V], Y = Q V; X's QR is (Q, U)
        U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
        gV = gR.narrow(-1, m, n - m)
        gX = _qr_backward_tall(gQ + (Q @ V) @ _H(gV), gR.narrow(-1, 0, m), Q, U)
        return (P.cat([gX, Q @ gV], -1),)
    attach("LinalgQrBackward0", [Q, R], (A,), bw, multi=True, accepts_none=True)


@formula("_product")
def _product_formula(out, a, b, c=None, alpha=1, beta=0, kname=None, **k):
    """The private GEMM of ``ptcore._ops.linalg`` (``beta * c + alpha * a @ b``
    with equal batch dims), which composites such as einsum, tensordot,
    kron, multi_dot and matrix_power are built on."""
    sa = save(a) if _T(b) and b._requires_grad else None
    sb = save(b) if _T(a) and a._requires_grad else None
    cg = _T(c) and c._requires_grad

    def bw(g):
        ga = P.matmul(g, _H(sb.unpack())) if sb is not None else None
        gb = P.matmul(_H(sa.unpack()), g) if sa is not None else None
        if alpha != 1:
            ga = ga * _scalar_like(alpha) if ga is not None else None
            gb = gb * _scalar_like(alpha) if gb is not None else None
        gc = (g * _scalar_like(beta) if beta != 1 else g) if cg else None
        return ga, gb, gc
    attach("MmBackward0" if a.dim() == 2 else "BmmBackward0", out, (a, b, c), bw)



@formula("linalg_inv_ex")
def _inv_ex(out, a, **k):
    inv, info = out[0], out[1]
    so = save_out(inv, 0)

    def bw(g, gi=None):
        y = so.unpack()
        return (-P.matmul(P.matmul(_H(y), g), _H(y)),)
    attach("LinalgInvExBackward0", [inv, info], (a,), bw, multi=True)


@formula("linalg_cross")
def _cross(out, a, b, *, dim=-1, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        ga = P.linalg.cross(b.conj() if b.dtype.is_complex else b, g, dim=dim) \
            if _T(a) and a._requires_grad else None
        gb = P.linalg.cross(g, a.conj() if a.dtype.is_complex else a, dim=dim) \
            if _T(b) and b._requires_grad else None
        return ga, gb
    attach("LinalgCrossBackward0", out, (a, b), bw)


def _pinv_backward(g, pinvA, A):
    """PyTorch's pinv_backward (``torch/csrc/autograd/FunctionsManual.cpp``)."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = _H(pinvA)
    gpinvAh = _H(g)
    if m <= n:
        K = P.matmul(gpinvAh, pinvA)
        KpinvAh = P.matmul(K, pinvAh)
        return (-_H(P.matmul(pinvA, K)) + KpinvAh - P.matmul(P.matmul(A, pinvA), KpinvAh)
                + P.matmul(P.matmul(pinvAh, pinvA), gpinvAh - P.matmul(K, A)))
    K = P.matmul(pinvA, gpinvAh)
    pinvAhK = P.matmul(pinvAh, K)
    return (-_H(P.matmul(K, pinvA)) + P.matmul(P.matmul(gpinvAh - P.matmul(A, K), pinvA), pinvAh)
            + pinvAhK - P.matmul(P.matmul(pinvAhK, pinvA), A))


@formula("linalg_pinv")
def _pinv(out, a, *args, **k):
    sa, so = save(a), save_out(out)

    def bw(g):
        return (_pinv_backward(g, so.unpack(), sa.unpack()),)
    attach("LinalgPinvBackward0", out, (a,), bw)


@formula("linalg_lstsq")
def _lstsq(out, A, B, *args, **k):
    X = out[0]
    sA, sB = save(A), save(B)
    vec = B.dim() == A.dim() - 1

    sX = save_out(X, 0)

    def bw(gX, gR=None):
        if gX is None and gR is None:
            return None, None
        A, B = sA.unpack(), sB.unpack()
        B2 = B.unsqueeze(-1) if vec else B
        gA = gB = None
        if gX is not None:
            pinvA = P.linalg.pinv(A)
            g2 = gX.unsqueeze(-1) if vec else gX
            gA = _pinv_backward(P.matmul(g2, _H(B2)), pinvA, A) if A._requires_grad else None
            gB = P.matmul(_H(pinvA), g2) if B._requires_grad else None
        if gR is not None and gR.numel():
            # residuals |A X - B|^2 per column: at the least-squares X the
            # derivative through X vanishes, d = 2 (A X - B) (dA X - dB)
            X2 = sX.unpack()
            X2 = X2.unsqueeze(-1) if vec else X2
            r = (P.matmul(A, X2) - B2) * (2 * gR.unsqueeze(-2))
            if A._requires_grad:
                ra = P.matmul(r, _H(X2))
                gA = ra if gA is None else gA + ra
            if B._requires_grad:
                gB = -r if gB is None else gB - r
        if gB is not None and vec:
            gB = gB.squeeze(-1)
        return gA, gB
    # (torch: the solution and the residuals are differentiable; rank and
    # singular_values are not)
    attach("LinalgLstsqBackward0", [out[0], out[1]], (A, B), bw, multi=True, accepts_none=True)


@formula("scatter_reduce")
def _scatter_reduce(out, x, dim, index, src, reduce, *, include_self=True, **k):
    """PyTorch's scatter_reduce_backward (sum, mean, prod, amax, amin)."""
    si, sx, ss = save(index), save(x), save(src)
    so = save_out(out)

    def bw(g):
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            # the forward takes 'max' / 'min' too; torch's backward refuses them
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {reduce}.")
        i, x, src = si.unpack(), sx.unpack(), ss.unpack()
        if reduce == "sum":
            gx, gs = g, g.gather(dim, i)
        elif reduce == "mean":
            N = (P.ones_like(g) if include_self else P.zeros_like(g)).scatter_add(
                dim, i, P.ones_like(src))
            N = P.where(N == 0, 1, N)
            gx = g / N
            gs = gx.gather(dim, i)
        elif reduce == "prod":
            # products that leave out one factor, computed without dividing by a zero
            y = so.unpack()
            mx = x.masked_fill(x == 0, 1)
            gx = g * mx.scatter_reduce(dim, i, src, "prod", include_self=include_self) / mx
            s0 = src == 0
            nz = P.zeros_like(x).scatter_add(dim, i, s0.to(x.dtype)).gather(dim, i)
            single = s0 & (nz == 1)
            ms_out = x.scatter_reduce(dim, i, src.masked_fill(single, 1), "prod",
                                      include_self=include_self)
            gs = P.where(single, (g * ms_out).gather(dim, i),
                         (g * y).gather(dim, i) / src.masked_fill(s0, 1))
        else:
            y = so.unpack()
            val = y.gather(dim, i)
            x_is = (x == y).to(g.dtype)
            s_is = (src == val).to(g.dtype)
            if not include_self:
                x_is = x_is.scatter(dim, i, 0)
            n = x_is.scatter_add(dim, i, s_is)
            gd = g / n
            gx = x_is * gd
            gs = s_is * gd.gather(dim, i)
        if not include_self:
            gx = gx.scatter(dim, i, 0)
        return gx, gs
    attach("ScatterReduceBackward0", out, (x, src), bw)



@formula("quantile", "nanquantile")
def _quantile(out, x, q, dim=None, keepdim=False, *, interpolation="linear", **k):
    """The result interpolates two order statistics per row: the gradient
    goes to their original positions (weights 1 - w and w)."""
    if not _is_diff(out):
        return
    sx = save(x)
    qt = q.detach() if _T(q) else P.tensor(q, dtype=P.float64, device=x.device)
    # torch's linear interpolation lerps with weights q * (n - 1) - floor(...):
    # q gets the gradient g * (above - below) * (n - 1) (none in other modes)
    qin = q if _T(q) and interpolation == "linear" else None

    def rows(t, d):
        return t.reshape(-1) if d is None else (t.movedim(d, -1) if t.dim() else t.reshape(1))

    def bw(g):
        # (the live x and q enter the weights and q's gradient, so that a
        # recorded backward has torch's second derivatives; the ranks do not)
        xl = sx.unpack()
        x = xl.detach()
        d = None if dim is None else dim % builtins_max(x.dim(), 1)
        xm = rows(x, d)
        nanq = bw.nan
        vals, si = xm.sort(-1)
        nan = xm.isnan()
        n = (~nan).sum(-1, keepdim=True) if nanq else P.full_like(nan.sum(-1, keepdim=True), xm.shape[-1])
        qv = qt.to(P.float64).reshape(-1)
        ql = qin.to(P.float64).reshape(-1) if qin is not None else qv
        pos = ql * (n - 1).clamp(min=0).to(P.float64)            # (..., Q)
        if not nanq:     # (torch: a row with a NaN takes its last order statistic)
            pos = P.where(nan.any(-1, keepdim=True), (n - 1).to(P.float64), pos)
        pos_l, pos = pos, pos.detach()
        if interpolation == "lower":
            lo = hi = pos.floor()
            w = P.zeros_like(pos)
        elif interpolation == "higher":
            lo = hi = pos.ceil()
            w = P.zeros_like(pos)
        elif interpolation == "nearest":
            lo = hi = pos.round()
            w = P.zeros_like(pos)
        else:
            lo, hi = pos.floor(), pos.ceil()
            w = (pos_l - lo) if interpolation == "linear" else P.full_like(pos, 0.5)
        lo_i = si.gather(-1, lo.long())
        hi_i = si.gather(-1, hi.long())
        # g -> (..., Q)
        gq = g
        if qt.dim() != 0:
            gq = gq.movedim(0, -1)
        else:
            gq = gq.unsqueeze(-1)
        if keepdim:
            if d is None:
                gq = gq.reshape(-1)
            elif x.dim():
                gq = gq.squeeze(d)
        gq = gq.reshape(tuple(xm.shape[:-1]) + (qv.shape[0],))
        w = w.to(g.dtype)
        z = P.zeros(tuple(xm.shape), dtype=g.dtype, device=g.device)
        gx = z.scatter_add(-1, lo_i, gq * (1 - w)).scatter_add(-1, hi_i, gq * w)
        gqq = None
        if qin is not None and qin.requires_grad:
            # rows ranked at the end (a NaN for quantile, no value for nanquantile)
            # have a constant rank
            dead = (n == 0) if nanq else nan.any(-1, keepdim=True)
            xml = rows(xl, d)
            step = (xml.gather(-1, hi_i) - xml.gather(-1, lo_i)).to(g.dtype)
            dq = P.where(dead, 0, gq * step * (n - 1).to(g.dtype))
            gqq = dq.reshape(-1, qv.shape[0]).sum(0).reshape(qt.shape).to(qt.dtype)
        gx = gx.reshape(x.shape) if d is None or not x.dim() else gx.movedim(-1, d)
        return gx, gqq
    bw.nan = False
    attach("QuantileBackward0", out, (x, qin), bw)
    return bw


def _nanquantile(out, x, q, dim=None, keepdim=False, *, interpolation="linear", **k):
    bw = _quantile(out, x, q, dim, keepdim, interpolation=interpolation)
    if bw is not None:
        bw.nan = True


FORMULAS["nanquantile"] = _nanquantile


# ---------------------------------------------------------------------------
# LU factorisation, torch.qr, nextafter
# ---------------------------------------------------------------------------
def _lu_factor_formula(out, A, *a, **k):
    """torch's lu_factor_ex_backward: the packed ``LU``'s gradient split into
    L's strictly lower and U's upper parts, then ``linalg.lu``'s backward."""
    LU, piv = out[0], out[1]
    if not _is_diff(LU):
        return
    sLU = save_out(LU, 0)
    pv = piv.detach()

    def bw(gLU, *rest):
        lu = sLU.unpack()
        m, n = lu.shape[-2], lu.shape[-1]
        kk = min(m, n)
        Pm, L, U = P.lu_unpack(lu, pv)
        gL = P.tril(gLU, -1).narrow(-1, 0, kk)
        gU = P.triu(gLU).narrow(-2, 0, kk)
        return (_lu_backward(gL, gU, Pm, L, U),)
    attach("LinalgLuFactorExBackward0", list(out), (A,), bw, multi=True, accepts_none=True)


formula("linalg_lu_factor")(_lu_factor_formula)
formula("linalg_lu_factor_ex")(_lu_factor_formula)


@formula("qr")
def _torch_qr_formula(out, A, some=True, **k):
    _linalg_qr(out, A, "reduced" if some else "complete")


@formula("nextafter")
def _nextafter(out, a, b, **k):
    # torch: the gradient passes to ``input`` except where input == other (the
    # result is ``other`` there: zero), ``other`` gets zeros
    if not _T(b):
        attach("NextafterBackward0", out, (a,), lambda g: (g,))
        return
    eq = (a == b).detach()
    attach("NextafterBackward0", out, (a, b),
           lambda g: (P.where(eq, 0, g), P.zeros_like(b)))



# the _ex forms of the linalg factorisations: the formula of the factorisation,
# on the first output (the info tensor is not differentiable)
def _ex_formula(base):
    def f(out, *args, **kwargs):
        return FORMULAS[base](out[0], *args, **kwargs)
    return f


FORMULAS["linalg_solve_ex"] = _ex_formula("linalg_solve")
FORMULAS["linalg_cholesky_ex"] = _ex_formula("linalg_cholesky")
